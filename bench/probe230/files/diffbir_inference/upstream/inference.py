import os
from argparse import ArgumentParser, Namespace

import torch

from accelerate.utils import set_seed
from utils.inference import (
    V1InferenceLoop,
    BSRInferenceLoop,
    BFRInferenceLoop,
    BIDInferenceLoop,
    UnAlignedBFRInferenceLoop,
    CustomInferenceLoop,
)


def check_device(device: str) -> str:
    if device == "cuda":
        if not torch.cuda.is_available():
            print(
                "CUDA not available because the current PyTorch install was not "
                "built with CUDA enabled."
            )
            device = "cpu"
    else:
        if device == "mps":
            if not torch.backends.mps.is_available():
                if not torch.backends.mps.is_built():
                    print(
                        "MPS not available because the current PyTorch install was not "
                        "built with MPS enabled."
                    )
                    device = "cpu"
                else:
                    print(
                        "MPS not available because the current MacOS version is not 12.3+ "
                        "and/or you do not have an MPS-enabled device on this machine."
                    )
                    device = "cpu"
    print(f"using device {device}")
    return device


DEFAULT_POS_PROMPT = (
    "Cinematic, High Contrast, highly detailed, taken using a Canon EOS R camera, "
    "hyper detailed photo - realistic maximum detail, 32k, Color Grading, ultra HD, extreme meticulous detailing, "
    "skin pore detailing, hyper sharpness, perfect without deformations."
)

DEFAULT_NEG_PROMPT = (
    "painting, oil painting, illustration, drawing, art, sketch, oil painting, cartoon, "
    "CG Style, 3D render, unreal engine, blurring, dirty, messy, worst quality, low quality, frames, watermark, "
    "signature, jpeg artifacts, deformed, lowres, over-smooth."
)


def parse_args() -> Namespace:
    parser = ArgumentParser()
    # model parameters
    parser.add_argument(
        "--task",
        type=str,
        default="sr",
        choices=["sr", "face", "denoise", "unaligned_face"],
        help="Task you want to do. Ignore this option if you are using self-trained model.",
    )
    parser.add_argument(
        "--upscale", type=float, default=4, help="Upscale factor of output."
    )
    parser.add_argument(
        "--version",
        type=str,
        default="v2.1",
        choices=["v1", "v2", "v2.1", "custom"],
        help="DiffBIR model version.",
    )
    parser.add_argument(
        "--train_cfg",
        type=str,
        default="",
        help="Path to training config. Only works when version is custom.",
    )
    parser.add_argument(
        "--ckpt",
        type=str,
        default="",
        help="Path to saved checkpoint. Only works when version is custom.",
    )
    # sampling parameters
    parser.add_argument(
        "--sampler",
        type=str,
        default="edm_dpm++_3m_sde",
        choices=[
            "dpm++_m2",
            "spaced",
            "ddim",
            "edm_euler",
            "edm_euler_a",
            "edm_heun",
            "edm_dpm_2",
            "edm_dpm_2_a",
            "edm_lms",
            "edm_dpm++_2s_a",
            "edm_dpm++_sde",
            "edm_dpm++_2m",
            "edm_dpm++_2m_sde",
            "edm_dpm++_3m_sde",
        ],
        help="Sampler type. Different samplers may produce very different samples.",
    )
    parser.add_argument("--steps", type=int, default=10, help="Sampling steps. More steps, more details.")
    parser.add_argument("--start_point_type", type=str, choices=["noise", "cond"], default="noise")
    parser.add_argument("--cleaner_tiled", action="store_true", help="Enable tiled inference for stage-1 model.")
    parser.add_argument("--cleaner_tile_size", type=int, default=512)
    parser.add_argument("--cleaner_tile_stride", type=int, default=256)
    parser.add_argument("--vae_encoder_tiled", action="store_true", help="Enable tiled inference for AE encoder.")
    parser.add_argument("--vae_encoder_tile_size", type=int, default=256)
    parser.add_argument("--vae_decoder_tiled", action="store_true", help="Enable tiled inference for AE decoder.")
    parser.add_argument("--vae_decoder_tile_size", type=int, default=256)
    parser.add_argument("--cldm_tiled", action="store_true", help="Enable tiled sampling.")
    parser.add_argument("--cldm_tile_size", type=int, default=512)
    parser.add_argument("--cldm_tile_stride", type=int, default=256)
    parser.add_argument("--captioner", type=str, choices=["none", "llava", "ram"], default="none")
    parser.add_argument("--pos_prompt", type=str, default=DEFAULT_POS_PROMPT)
    parser.add_argument("--neg_prompt", type=str, default=DEFAULT_NEG_PROMPT)
    parser.add_argument("--cfg_scale", type=float, default=6.0, help="Classifier-free guidance scale.")
    parser.add_argument("--rescale_cfg", action="store_true")
    parser.add_argument("--noise_aug", type=int, default=0, help="Noise level of the conditions.")
    parser.add_argument("--s_churn", type=float, default=0)
    parser.add_argument("--s_tmin", type=float, default=0)
    parser.add_argument("--s_tmax", type=float, default=300)
    parser.add_argument("--s_noise", type=float, default=1)
    parser.add_argument("--eta", type=float, default=1)
    parser.add_argument("--order", type=int, default=1)
    parser.add_argument("--strength", type=float, default=1)
    parser.add_argument("--batch_size", type=int, default=1)
    # guidance parameters
    parser.add_argument("--guidance", action="store_true")
    parser.add_argument("--g_loss", type=str, default="w_mse", choices=["mse", "w_mse"])
    parser.add_argument("--g_scale", type=float, default=0.0)
    parser.add_argument("--g_start", type=int, default=1001)
    parser.add_argument("--g_stop", type=int, default=-1)
    parser.add_argument("--g_space", type=str, default="latent")
    parser.add_argument("--g_repeat", type=int, default=1)
    # input parameters
    parser.add_argument("--input", type=str, required=True)
    parser.add_argument("--n_samples", type=int, default=1)
    # output parameters
    parser.add_argument("--output", type=str, required=True)
    # common parameters
    parser.add_argument("--seed", type=int, default=231)
    parser.add_argument("--device", type=str, default="cuda", choices=["cpu", "cuda", "mps"])
    parser.add_argument(
        "--precision", type=str, default="fp16", choices=["fp32", "fp16", "bf16"]
    )
    parser.add_argument("--llava_bit", type=str, default="4", choices=["16", "8", "4"])
    return parser.parse_args()


def main():
    args = parse_args()
    args.device = check_device(args.device)
    set_seed(args.seed)

    if args.version != "custom":
        loops = {
            "sr": BSRInferenceLoop,
            "denoise": BIDInferenceLoop,
            "face": BFRInferenceLoop,
            "unaligned_face": UnAlignedBFRInferenceLoop,
        }
        if args.version == "v1":
            V1InferenceLoop(args).run()
        else:
            loops[args.task](args).run()
    else:
        CustomInferenceLoop(args).run()
    print("done!")


if __name__ == "__main__":
    main()
