"""Data-parallel SDXL inference: one prompt shard per GPU.

    python distributed_sdxl_inference.py --prompts_file prompts.txt --num_gpus 4
    accelerate launch --num_processes 4 distributed_sdxl_inference.py --prompts_file prompts.txt --use_accelerate
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from diffusers import DiffusionPipeline


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", type=str, default="stabilityai/stable-diffusion-xl-base-1.0")
    parser.add_argument("--prompts_file", type=str, required=True)
    parser.add_argument("--output_dir", type=str, default="dist_outputs")
    parser.add_argument("--num_gpus", type=int, default=None, help="defaults to all visible GPUs")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--use_accelerate", action="store_true")
    return parser.parse_args()


def load_prompts(path):
    with open(path) as f:
        return [line.strip() for line in f if line.strip()]


def setup(rank, world_size):
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "12355")
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)


def run_inference(rank, world_size, args):
    setup(rank, world_size)

    pipe = DiffusionPipeline.from_pretrained(
        args.model, torch_dtype=torch.float16, use_safetensors=True, variant="fp16"
    )
    pipe.to(rank)
    pipe.set_progress_bar_config(disable=rank != 0)

    prompts = load_prompts(args.prompts_file)[rank::world_size]
    generator = torch.Generator(device=f"cuda:{rank}").manual_seed(args.seed + rank)

    local_paths = []
    os.makedirs(args.output_dir, exist_ok=True)
    for i, prompt in enumerate(prompts):
        image = pipe(prompt=prompt, num_inference_steps=args.steps, generator=generator).images[0]
        path = os.path.join(args.output_dir, f"rank{rank}_{i:04d}.png")
        image.save(path)
        local_paths.append(path)

    gathered = [None] * world_size
    dist.all_gather_object(gathered, local_paths)
    if rank == 0:
        total = sum(len(p) for p in gathered)
        print(f"wrote {total} images to {args.output_dir}")

    dist.barrier()
    dist.destroy_process_group()


def run_with_accelerate(args):
    from accelerate import PartialState

    distributed_state = PartialState()
    pipe = DiffusionPipeline.from_pretrained(args.model, torch_dtype=torch.float16, use_safetensors=True)
    pipe.to(distributed_state.device)

    prompts = load_prompts(args.prompts_file)
    os.makedirs(args.output_dir, exist_ok=True)
    with distributed_state.split_between_processes(prompts) as shard:
        for i, prompt in enumerate(shard):
            image = pipe(prompt, num_inference_steps=args.steps).images[0]
            image.save(os.path.join(args.output_dir, f"proc{distributed_state.process_index}_{i:04d}.png"))


def main():
    args = parse_args()
    if args.use_accelerate:
        run_with_accelerate(args)
        return

    world_size = args.num_gpus or torch.cuda.device_count()
    mp.spawn(run_inference, args=(world_size, args), nprocs=world_size, join=True)


if __name__ == "__main__":
    main()
