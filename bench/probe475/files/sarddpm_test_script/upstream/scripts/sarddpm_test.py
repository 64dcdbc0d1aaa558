"""
Despeckle SAR images with a trained SAR-DDPM model.

Large images are split into overlapping 256x256 crops; every crop is denoised
by the reverse diffusion chain (optionally several times with different
random shifts, "cycle spinning") and the crops are blended back.
"""

import argparse
import os

os.environ["CUDA_VISIBLE_DEVICES"] = "0"

import cv2
import numpy as np
import torch as th
import torch.nn.functional as F

from guided_diffusion import dist_util, logger
from guided_diffusion.image_datasets import load_data_sar_test
from guided_diffusion.script_util import (
    sr_model_and_diffusion_defaults,
    sr_create_model_and_diffusion,
    args_to_dict,
    add_dict_to_argparser,
)

val_dir = "./data/SAR_despeckling/test/"
base_path = "./results/sarddpm/"
resume_checkpoint = "./weights/sar_ddpm.pt"


def psnr(img1, img2, max_val=255.0):
    mse = np.mean((img1.astype(np.float64) - img2.astype(np.float64)) ** 2)
    if mse == 0:
        return float("inf")
    return 20 * np.log10(max_val / np.sqrt(mse))


def to_uint8(sample):
    sample = ((sample + 1) * 127.5).clamp(0, 255).to(th.uint8)
    sample = sample.permute(0, 2, 3, 1).contiguous()
    return sample.cpu().numpy()


def main():
    args = create_argparser().parse_args()

    dist_util.setup_dist()
    logger.configure(dir=base_path)
    os.makedirs(base_path + "pred", exist_ok=True)

    logger.log("creating model...")
    model, diffusion = sr_create_model_and_diffusion(
        **args_to_dict(args, sr_model_and_diffusion_defaults().keys())
    )
    model.load_state_dict(
        dist_util.load_state_dict(resume_checkpoint, map_location="cpu")
    )
    model.to(dist_util.dev())
    if args.use_fp16:
        model.convert_to_fp16()
    model.eval()

    val_data = load_data_sar_test(val_dir, image_size=args.large_size)

    start_evt = th.cuda.Event(enable_timing=True)
    end_evt = th.cuda.Event(enable_timing=True)

    psnr_list = []
    timings = []
    for batch_id, (clean_batch, model_kwargs, name) in enumerate(val_data):
        model_kwargs = {k: v.to(dist_util.dev()) for k, v in model_kwargs.items()}
        speckled = model_kwargs["SR"]
        _, _, H, W = speckled.shape

        # pad to a multiple of the crop stride
        crop = args.large_size
        stride = crop // 2
        pad_h = (stride - H % stride) % stride
        pad_w = (stride - W % stride) % stride
        speckled = F.pad(speckled, (0, pad_w, 0, pad_h), mode="reflect")
        Hp, Wp = speckled.shape[-2:]

        acc = th.zeros(1, 3, Hp, Wp, device=speckled.device)
        cnt = th.zeros(1, 1, Hp, Wp, device=speckled.device)

        start_evt.record()
        for y in range(0, Hp - crop + 1, stride):
            for x in range(0, Wp - crop + 1, stride):
                kw = {"SR": speckled[:, :, y:y + crop, x:x + crop]}
                sample = diffusion.p_sample_loop(
                    model,
                    (1, 3, crop, crop),
                    clip_denoised=True,
                    model_kwargs=kw,
                    progress=False,
                )
                acc[:, :, y:y + crop, x:x + crop] += sample
                cnt[:, :, y:y + crop, x:x + crop] += 1
        end_evt.record()
        th.cuda.synchronize()
        timings.append(start_evt.elapsed_time(end_evt) / 1000.0)

        out = (acc / cnt)[:, :, :H, :W]
        pred = to_uint8(out)[0]
        pred = cv2.cvtColor(pred, cv2.COLOR_RGB2GRAY)
        cv2.imwrite(os.path.join(base_path, "pred", f"{name[0]}.png"), pred)

        clean = to_uint8(clean_batch)[0]
        clean = cv2.cvtColor(clean, cv2.COLOR_RGB2GRAY)
        psnr_list.append(psnr(pred, clean))
        logger.log(f"{batch_id}: {name[0]} psnr={psnr_list[-1]:.2f} dB, {timings[-1]:.1f} s on GPU")

    logger.log(f"mean PSNR {np.mean(psnr_list):.3f} dB over {len(psnr_list)} images")
    logger.log(f"mean time per image {np.mean(timings):.1f} s")


def create_argparser():
    defaults = dict(
        clip_denoised=True,
        num_samples=1,
        batch_size=1,
        use_ddim=False,
        base_samples="",
        model_path="",
    )
    defaults.update(sr_model_and_diffusion_defaults())
    parser = argparse.ArgumentParser()
    add_dict_to_argparser(parser, defaults)
    return parser


if __name__ == "__main__":
    main()
