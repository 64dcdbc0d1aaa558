"""Score-based diffusion MRI reconstruction on real-valued (magnitude) knee data.

Chung & Ye, "Score-based diffusion models for accelerated MRI", MedIA 2022.
Runs the predictor-corrector sampler with a projection onto the measured
k-space after every step (``get_pc_fouriercs_RI``).
"""
from pathlib import Path
import argparse
import importlib
import time

import matplotlib.pyplot as plt
import numpy as np
import torch

import controllable_generation
from losses import get_optimizer
from models import ncsnpp  # noqa: F401  (registers the model)
from models import utils as mutils
from models.ema import ExponentialMovingAverage
from sampling import LangevinCorrector, ReverseDiffusionPredictor
from sde_lib import VESDE
from utils import (clear, fft2, get_data_inverse_scaler, get_data_scaler, get_mask, ifft2,
                   restore_checkpoint)


def main():
    ###############################################
    # 1. Configurations
    ###############################################

    # args
    args = create_argparser().parse_args()
    N = args.N
    m = args.m
    fname = args.data
    filename = f"./samples/real/{args.task}/{fname}.npy"

    print("initializing...")
    configs = importlib.import_module("configs.ve.fastmri_knee_320_ncsnpp_continuous")
    config = configs.get_config()
    img_size = config.data.image_size
    batch_size = 1

    # Read data
    img = torch.from_numpy(np.load(filename))
    img = img.view(1, 1, 320, 320)
    img = img.to(config.device)

    mask = get_mask(img, img_size, batch_size,
                    type=args.mask_type,
                    acc_factor=args.acc_factor,
                    center_fraction=args.center_fraction)

    ckpt_filename = f"./weights/checkpoint_95.pth"
    sde = VESDE(sigma_min=config.model.sigma_min, sigma_max=config.model.sigma_max, N=N)

    config.training.batch_size = batch_size
    predictor = ReverseDiffusionPredictor
    corrector = LangevinCorrector
    probability_flow = False
    snr = 0.16

    # sigmas = mutils.get_sigmas(config)
    scaler = get_data_scaler(config)
    inverse_scaler = get_data_inverse_scaler(config)

    # create model and load checkpoint
    score_model = mutils.create_model(config)
    ema = ExponentialMovingAverage(score_model.parameters(),
                                   decay=config.model.ema_rate)
    optimizer = get_optimizer(config, score_model.parameters())
    state = dict(step=0, optimizer=optimizer, model=score_model, ema=ema)
    state = restore_checkpoint(ckpt_filename, state, config.device, skip_sigma=True)
    ema.copy_to(score_model.parameters())

    # Specify save directory for saving generated samples
    save_root = Path(f"./results/real/{args.task}/{fname}/{args.mask_type}/acc{args.acc_factor}")
    save_root.mkdir(parents=True, exist_ok=True)

    irl_types = ["input", "recon", "recon_progress", "label"]
    for t in irl_types:
        save_root_f = save_root / t
        save_root_f.mkdir(parents=True, exist_ok=True)

    ###############################################
    # 2. Inference
    ###############################################

    pc_fouriercs = controllable_generation.get_pc_fouriercs_RI(sde,
                                                               predictor, corrector,
                                                               inverse_scaler,
                                                               snr=snr,
                                                               n_steps=m,
                                                               probability_flow=probability_flow,
                                                               continuous=config.training.continuous,
                                                               denoise=True,
                                                               save_progress=True,
                                                               save_root=save_root / "recon_progress")
    # fft
    kspace = fft2(img)

    # undersampling
    under_kspace = kspace * mask
    under_img = torch.real(ifft2(under_kspace))

    print("Beginning inference")
    tic = time.time()
    x = pc_fouriercs(score_model, scaler(under_img), mask, Fy=under_kspace)
    toc = time.time() - tic
    print(f"Time took for recon: {toc} secs.")

    ###############################################
    # 3. Saving recon
    ###############################################
    input = under_img.squeeze().cpu().detach().numpy()
    label = img.squeeze().cpu().detach().numpy()
    mask_sv = mask.squeeze().cpu().detach().numpy()

    np.save(str(save_root / "input" / fname) + ".npy", input)
    np.save(str(save_root / "input" / (fname + "_mask")) + ".npy", mask_sv)
    np.save(str(save_root / "label" / fname) + ".npy", label)
    plt.imsave(str(save_root / "input" / fname) + ".png", np.abs(input), cmap="gray")
    plt.imsave(str(save_root / "label" / fname) + ".png", np.abs(label), cmap="gray")

    recon = x.squeeze().cpu().detach().numpy()
    np.save(str(save_root / "recon" / fname) + ".npy", recon)
    plt.imsave(str(save_root / "recon" / fname) + ".png", np.abs(recon), cmap="gray")
    plt.imsave(str(save_root / "recon" / (fname + "_mask")) + ".png", clear(mask), cmap="gray")


def create_argparser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", type=str, default="retrospective", choices=["retrospective", "prospective"])
    parser.add_argument("--data", type=str, default="001", help="which data to use for reconstruction")
    parser.add_argument("--mask_type", type=str, help="which mask to use for retrospective undersampling."
                                                      "(NOTE) only used for retrospective model!", default="gaussian1d",
                        choices=["gaussian1d", "uniform1d", "gaussian2d"])
    parser.add_argument("--acc_factor", type=int, help="Acceleration factor for Fourier undersampling."
                                                       "(NOTE) only used for retrospective model!", default=4)
    parser.add_argument("--center_fraction", type=float, help="Fraction of ACS region to keep."
                                                              "(NOTE) only used for retrospective model!",
                        default=0.08)
    parser.add_argument("--save_dir", default="./results")
    parser.add_argument("--N", type=int, help="Number of iterations for score-POCS sampling", default=2000)
    parser.add_argument("--m", type=int, help="Number of corrector step per single predictor step."
                                              "It is advised not to change this default value.", default=1)
    return parser


if __name__ == "__main__":
    main()
