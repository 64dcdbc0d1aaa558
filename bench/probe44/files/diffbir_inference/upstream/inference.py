import os
from argparse import ArgumentParser, Namespace

import torch
from accelerate.utils import set_seed
from omegaconf import OmegaConf

from diffbir.inference import (
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


def check_precision(args: Namespace) -> Namespace:
    # bf16 needs Ampere or newer; older cards overflow in the VAE decoder with fp16,
    # so they fall back to fp32 there.
    if args.device != "cuda":
        args.precision = "fp32"
        return args
    major, _ = torch.cuda.get_device_capability()
    if args.precision == "bf16" and major < 8:
        print(f"bf16 is not supported on sm_{major}x, use fp16 instead")
        args.precision = "fp16"
    if args.precision == "bf16" and not torch.cuda.is_bf16_supported():
        args.precision = "fp16"
    return args


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
        required=True,
        choices=["sr", "face", "denoise", "unaligned_face"],
        help="Task you want to do. Ignore this option if you are using self-trained model.",
    )
    parser.add_argument(
        "--upscale", type=float, required=True, help="Upscale factor of output."
    )
    parser.add_argument(
        "--version",
        type=str,
        default="v2",
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
    parser.add_argument(
        "--steps",
        type=int,
        default=10,
        help="Sampling steps. More steps, more details.",
    )
    parser.add_argument(
        "--cfg_scale",
        type=float,
        default=6.0,
        help="Classifier-free guidance scale for text prompts.",
    )
    parser.add_argument("--pos_prompt", type=str, default=DEFAULT_POS_PROMPT)
    parser.add_argument("--neg_prompt", type=str, default=DEFAULT_NEG_PROMPT)
    # patch-based sampling
    parser.add_argument(
        "--cleaner_tiled",
        action="store_true",
        help="Enable tiled inference for stage-1 model, which reduces the GPU memory usage.",
    )
    parser.add_argument("--cleaner_tile_size", type=int, default=512)
    parser.add_argument("--cleaner_tile_stride", type=int, default=256)
    parser.add_argument("--vae_encoder_tiled", action="store_true")
    parser.add_argument("--vae_encoder_tile_size", type=int, default=256)
    parser.add_argument("--vae_decoder_tiled", action="store_true")
    parser.add_argument("--vae_decoder_tile_size", type=int, default=256)
    parser.add_argument("--cldm_tiled", action="store_true")
    parser.add_argument("--cldm_tile_size", type=int, default=512)
    parser.add_argument("--cldm_tile_stride", type=int, default=256)
    # io parameters
    parser.add_argument("--input", type=str, required=True)
    parser.add_argument("--n_samples", type=int, default=1)
    parser.add_argument("--batch_size", type=int, default=1)
    parser.add_argument("--output", type=str, required=True)
    # common parameters
    parser.add_argument("--seed", type=int, default=231)
    parser.add_argument(
        "--device",
        type=str,
        default="cuda",
        choices=["cpu", "cuda", "mps"],
        help="Device used to run the models.",
    )
    parser.add_argument(
        "--gpu_ids",
        type=str,
        default="",
        help="Comma separated GPU ids made visible to this process, e.g. '0' or '2,3'.",
    )
    parser.add_argument(
        "--precision",
        type=str,
        default="fp16",
        choices=["fp32", "fp16", "bf16"],
    )
    parser.add_argument(
        "--compile",
        action="store_true",
        help="torch.compile the ControlLDM (first call is slow).",
    )
    parser.add_argument(
        "--llava_bit", type=str, default="4", choices=["16", "8", "4"]
    )
    return parser.parse_args()


def main():
    args = parse_args()
    if args.gpu_ids:
        os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_ids
    args.device = check_device(args.device)
    args = check_precision(args)
    set_seed(args.seed)

    if args.version != "custom":
        loops = {
            "sr": BSRInferenceLoop,
            "denoise": BIDInferenceLoop,
            "face": BFRInferenceLoop,
            "unaligned_face": UnAlignedBFRInferenceLoop,
        }
        loop = loops[args.task](args)
    else:
        loop = CustomInferenceLoop(args)

    if args.compile:
        loop.pipeline.cldm = torch.compile(loop.pipeline.cldm, mode="reduce-overhead")

    loop.run()
    print("done!")
    if args.device == "cuda":
        print(f"peak memory: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
