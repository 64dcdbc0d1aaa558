import argparse
import os
import sys

import pandas as pd
import torch
import torch.utils.benchmark as benchmark

torch.set_float32_matmul_precision("high")

from diffusers import AutoencoderKL, DiffusionPipeline
from diffusers.models.attention_processor import AttnProcessor

sys.path.append(".")
from utils.pipeline_utils import bytes_to_giga_bytes, generate_csv_dict, write_to_csv

CKPT_ID = "stabilityai/stable-diffusion-xl-base-1.0"
PROMPT = "ghibli style, a fantasy landscape with castles"


def dynamic_quant_filter_fn(mod, *args):
    return (
        isinstance(mod, torch.nn.Linear)
        and mod.in_features > 16
        and (mod.in_features, mod.out_features)
        not in [
            (1280, 640),
            (1920, 1280),
            (1920, 640),
            (2048, 1280),
            (2048, 2560),
            (2560, 1280),
            (256, 128),
            (2816, 1280),
            (320, 640),
            (512, 1536),
            (512, 256),
            (512, 512),
            (640, 1280),
            (640, 1920),
            (640, 320),
            (640, 5120),
            (640, 640),
            (960, 320),
            (960, 640),
        ]
    )


def conv_filter_fn(mod, *args):
    return (
        isinstance(mod, torch.nn.Conv2d) and mod.kernel_size == (1, 1) and 128 in [mod.in_channels, mod.out_channels]
    )


def load_pipeline(
    ckpt: str,
    compile_unet: bool,
    compile_vae: bool,
    no_sdpa: bool,
    no_bf16: bool,
    upcast_vae: bool,
    enable_fused_projections: bool,
    do_quant: bool,
    compile_mode: str,
    change_comp_config: bool,
):
    """Loads the SDXL pipeline."""

    if do_quant and not compile_unet:
        raise ValueError("Compilation for UNet must be enabled when quantizing.")
    if do_quant and not compile_vae:
        raise ValueError("Compilation for VAE must be enabled when quantizing.")

    dtype = torch.float32 if no_bf16 else torch.bfloat16
    print(f"Using dtype: {dtype}")

    pipe = DiffusionPipeline.from_pretrained(ckpt, torch_dtype=dtype, use_safetensors=True)

    if not upcast_vae and not no_bf16:
        print("Using a more numerically stable VAE.")
        pipe.vae = AutoencoderKL.from_pretrained("madebyollin/sdxl-vae-fp16-fix", torch_dtype=dtype)

    if enable_fused_projections:
        print("Enabling fused QKV projections for both UNet and VAE.")
        pipe.fuse_qkv_projections()

    if upcast_vae and not no_bf16:
        print("Upcasting VAE.")
        pipe.upcast_vae()

    if no_sdpa:
        print("Using vanilla attention.")
        pipe.unet.set_attn_processor(AttnProcessor())
        pipe.vae.set_attn_processor(AttnProcessor())

    pipe = pipe.to("cuda")

    if compile_unet:
        pipe.unet.to(memory_format=torch.channels_last)
        print("Compile UNet.")

        if compile_mode == "max-autotune" and change_comp_config:
            torch._inductor.config.conv_1x1_as_mm = True
            torch._inductor.config.coordinate_descent_tuning = True
            torch._inductor.config.epilogue_fusion = False
            torch._inductor.config.coordinate_descent_check_all_directions = True

        if do_quant:
            from torchao.quantization import apply_dynamic_quant, swap_conv2d_1x1_to_linear

            print("Apply quantization to UNet.")
            if do_quant == "int4weightonly":
                raise ValueError("int4 weight-only is not supported for the UNet in this benchmark")
            swap_conv2d_1x1_to_linear(pipe.unet, conv_filter_fn)
            apply_dynamic_quant(pipe.unet, dynamic_quant_filter_fn)
            torch._inductor.config.force_fuse_int_mm_with_mul = True
            torch._inductor.config.use_mixed_mm = True

        pipe.unet = torch.compile(pipe.unet, mode=compile_mode, fullgraph=True)

    if compile_vae:
        pipe.vae.to(memory_format=torch.channels_last)
        print("Compile VAE.")

        if do_quant:
            from torchao.quantization import apply_dynamic_quant, swap_conv2d_1x1_to_linear

            swap_conv2d_1x1_to_linear(pipe.vae, conv_filter_fn)
            apply_dynamic_quant(pipe.vae, dynamic_quant_filter_fn)  # vae

        pipe.vae.decode = torch.compile(pipe.vae.decode, mode=compile_mode, fullgraph=True)

    pipe.set_progress_bar_config(disable=True)
    return pipe


def run_inference(pipe, args):
    _ = pipe(
        prompt=PROMPT,
        num_inference_steps=args.num_inference_steps,
        num_images_per_prompt=args.batch_size,
    )


def benchmark_fn(f, *args, **kwargs):
    t0 = benchmark.Timer(
        stmt="f(*args, **kwargs)",
        globals={"args": args, "kwargs": kwargs, "f": f},
        num_threads=torch.get_num_threads(),
    )
    return f"{(t0.blocked_autorange().mean):.3f}"


def main(args) -> dict:
    if not args.no_bf16 and torch.cuda.get_device_capability()[0] < 8:
        print("bf16 needs sm80+, falling back to fp32")
        args.no_bf16 = True

    pipeline = load_pipeline(
        ckpt=args.ckpt,
        compile_unet=args.compile_unet,
        compile_vae=args.compile_vae,
        no_sdpa=args.no_sdpa,
        no_bf16=args.no_bf16,
        upcast_vae=args.upcast_vae,
        enable_fused_projections=args.enable_fused_projections,
        do_quant=args.do_quant,
        compile_mode=args.compile_mode,
        change_comp_config=args.change_comp_config,
    )

    # Warmup.
    for _ in range(5):
        run_inference(pipeline, args)

    time = benchmark_fn(run_inference, pipeline, args)
    torch.cuda.empty_cache()
    memory = bytes_to_giga_bytes(torch.cuda.max_memory_allocated())  # in GBs.
    data_dict = generate_csv_dict(
        pipeline_cls=str(pipeline.__class__.__name__),
        args=args,
        time=time,
        memory=memory,
    )
    img = pipeline(
        prompt=PROMPT,
        num_inference_steps=args.num_inference_steps,
        num_images_per_prompt=args.batch_size,
    ).images[0]

    return data_dict, img


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckpt", type=str, default=CKPT_ID)
    parser.add_argument("--prompt", type=str, default=PROMPT)
    parser.add_argument("--num_inference_steps", type=int, default=30)
    parser.add_argument("--batch_size", type=int, default=1)
    parser.add_argument("--no_sdpa", action="store_true")
    parser.add_argument("--no_bf16", action="store_true")
    parser.add_argument("--upcast_vae", action="store_true")
    parser.add_argument("--enable_fused_projections", action="store_true")
    parser.add_argument("--do_quant", type=str, default=None)
    parser.add_argument("--compile_unet", action="store_true")
    parser.add_argument("--compile_vae", action="store_true")
    parser.add_argument("--compile_mode", type=str, default="max-autotune", choices=["reduce-overhead", "max-autotune"])
    parser.add_argument("--change_comp_config", action="store_true")
    parser.add_argument("--run_profile", action="store_true")
    args = parser.parse_args()

    if not args.compile_mode == "max-autotune" and args.change_comp_config:
        raise ValueError("It's only meaningful to set `change_comp_config` when `compile_mode` is 'max-autotune'.")

    data_dict, img = main(args)

    name = (
        CKPT_ID.replace("/", "_")
        + f"bf16@{not args.no_bf16}-sdpa@{not args.no_sdpa}-bs@{args.batch_size}-fuse@{args.enable_fused_projections}-upcast_vae@{args.upcast_vae}-steps@{args.num_inference_steps}-unet@{args.compile_unet}-vae@{args.compile_vae}-mode@{args.compile_mode}-change_comp_config@{args.change_comp_config}-do_quant@{args.do_quant}.png"
    )
    img.save(name)

    write_to_csv(name.replace(".png", ".csv"), data_dict)
    print(pd.DataFrame([data_dict]).to_markdown())
    if os.environ.get("GITHUB_ACTIONS"):
        print(f"::notice::{name}: {data_dict['time (secs)']}s")
