"""AnimateDiff-Lightning: 4-step text-to-video with diffusers' AnimateDiffPipeline.

    python animatediff_lightning.py --steps 4 --base emilianJR/epiCRealism --prompt "A girl smiling"
"""
import argparse

import torch
from diffusers import AnimateDiffPipeline, MotionAdapter, EulerDiscreteScheduler
from diffusers.utils import export_to_gif
from huggingface_hub import hf_hub_download
from safetensors.torch import load_file

REPO = "ByteDance/AnimateDiff-Lightning"


def build(base: str, steps: int, device: str, dtype: torch.dtype):
    ckpt = f"animatediff_lightning_{steps}step_diffusers.safetensors"

    adapter = MotionAdapter().to(device, dtype)
    adapter.load_state_dict(load_file(hf_hub_download(REPO, ckpt), device=device))
    pipe = AnimateDiffPipeline.from_pretrained(base, motion_adapter=adapter, torch_dtype=dtype).to(device)
    pipe.scheduler = EulerDiscreteScheduler.from_config(
        pipe.scheduler.config, timestep_spacing="trailing", beta_schedule="linear"
    )
    return pipe


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default="emilianJR/epiCRealism", help="any SD1.5 DreamBooth base")
    parser.add_argument("--steps", type=int, default=4, choices=[1, 2, 4, 8])
    parser.add_argument("--prompt", default="A girl smiling")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="animation.gif")
    args = parser.parse_args()

    device = "cuda"
    dtype = torch.float16

    pipe = build(args.base, args.steps, device, dtype)
    output = pipe(
        prompt=args.prompt,
        guidance_scale=1.0,
        num_inference_steps=args.steps,
        generator=torch.Generator("cuda").manual_seed(args.seed),
    )
    export_to_gif(output.frames[0], args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
