"""Multi-GPU image generation for erased SD models (MACE / ESD / UCE checkpoints).

    python inference.py --model_path saved_model/LoRA_fusion_model --prompts_path prompts_csv/celebrity_100_concepts.csv \
        --save_path ./results --num_samples 5 --gpus 0,1,2,3

Every process owns one GPU and takes every world_size-th row of the prompt csv.
"""
import argparse
import os

import pandas as pd
import torch
import torch.multiprocessing as mp
from diffusers import DPMSolverMultistepScheduler, StableDiffusionPipeline
from tqdm import tqdm


def parse_args():
    parser = argparse.ArgumentParser(description="Generate images for erased concepts")
    parser.add_argument("--model_path", type=str, required=True, help="folder of the (fused) diffusers model")
    parser.add_argument("--prompts_path", type=str, required=True)
    parser.add_argument("--save_path", type=str, default="./results")
    parser.add_argument("--num_samples", type=int, default=5, help="images per prompt")
    parser.add_argument("--batch_size", type=int, default=5)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--guidance_scale", type=float, default=7.5)
    parser.add_argument("--step", type=int, default=1, help="stride over the csv rows")
    parser.add_argument("--gpus", type=str, default=None, help="comma separated GPU ids, e.g. 0,1")
    parser.add_argument("--fp32", action="store_true", help="disable half precision")
    parser.add_argument("--xformers", action="store_true", help="use xformers attention (saves memory on V100)")
    return parser.parse_args()


def load_pipeline(args, device):
    dtype = torch.float32 if args.fp32 else torch.float16
    pipe = StableDiffusionPipeline.from_pretrained(
        args.model_path,
        torch_dtype=dtype,
        safety_checker=None,
        requires_safety_checker=False,
    ).to(device)
    pipe.scheduler = DPMSolverMultistepScheduler.from_config(pipe.scheduler.config)
    pipe.set_progress_bar_config(disable=True)
    if args.xformers:
        try:
            pipe.enable_xformers_memory_efficient_attention()
        except Exception as e:  # xformers missing or incompatible with this torch build
            print(f"[rank] could not enable xformers: {e}")
    return pipe


def worker(rank, world_size, args):
    device = f"cuda:{rank}"
    torch.cuda.set_device(rank)

    pipe = load_pipeline(args, device)
    df = pd.read_csv(args.prompts_path)
    rows = list(df.iterrows())[rank::world_size]

    for _, row in tqdm(rows, desc=f"gpu{rank}", position=rank):
        prompt = str(row.prompt)
        seed = int(row.evaluation_seed) if "evaluation_seed" in row else 42
        case_number = int(row.case_number) if "case_number" in row else _
        concept = str(row.concept) if "concept" in row else "all"
        out_dir = os.path.join(args.save_path, concept)
        os.makedirs(out_dir, exist_ok=True)
        if os.path.exists(os.path.join(out_dir, f"{case_number}_{args.num_samples - 1}.jpg")):
            continue

        generator = torch.Generator(device="cuda").manual_seed(seed)
        images = []
        remaining = args.num_samples
        while remaining > 0:
            n = min(args.batch_size, remaining)
            with torch.autocast("cuda", enabled=not args.fp32):
                out = pipe(prompt=[prompt] * n,
                           num_inference_steps=args.steps,
                           guidance_scale=args.guidance_scale,
                           generator=generator)
            images.extend(out.images)
            remaining -= n
        for i, im in enumerate(images):
            im.save(os.path.join(out_dir, f"{case_number}_{i}.jpg"))

    torch.cuda.synchronize()
    print(f"[gpu{rank}] done, peak memory {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB")


def main():
    args = parse_args()
    if args.gpus is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus
    world_size = torch.cuda.device_count()
    assert world_size > 0, "no GPU found"
    os.makedirs(args.save_path, exist_ok=True)
    if world_size == 1:
        worker(0, 1, args)
    else:
        mp.spawn(worker, args=(world_size, args), nprocs=world_size, join=True)


if __name__ == "__main__":
    main()
