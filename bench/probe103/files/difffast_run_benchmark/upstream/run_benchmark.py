import torch

torch.set_float32_matmul_precision("high")

import argparse  # noqa: E402
import copy  # noqa: E402
import csv  # noqa: E402
import gc  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from typing import Dict, Union  # noqa: E402

import torch.utils.benchmark as benchmark  # noqa: E402

sys.path.append(".")
from utils.pipeline_utils import PROMPT, load_pipeline  # noqa: E402

BENCHMARK_FIELDS = [
    "pipeline_cls",
    "ckpt_id",
    "bf16",
    "sdpa",
    "fused_qkv_projections",
    "upcast_vae",
    "batch_size",
    "num_inference_steps",
    "compile_unet",
    "compile_vae",
    "compile_mode",
    "change_comp_config",
    "do_quant",
    "time (secs)",
    "memory (gbs)",
    "actual_gpu_memory (gbs)",
    "gpu",
    "tag",
]


def create_parser():
    """Creates CLI args parser."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckpt", type=str, default="stabilityai/stable-diffusion-xl-base-1.0")
    parser.add_argument("--prompt", type=str, default=PROMPT)
    parser.add_argument("--batch_size", type=int, default=1)
    parser.add_argument("--num_inference_steps", type=int, default=30)
    parser.add_argument("--enable_fused_projections", action="store_true")
    parser.add_argument("--upcast_vae", action="store_true")
    parser.add_argument("--compile_unet", action="store_true")
    parser.add_argument("--compile_vae", action="store_true")
    parser.add_argument("--compile_mode", type=str, default="max-autotune", choices=["reduce-overhead", "max-autotune"])
    parser.add_argument("--change_comp_config", action="store_true")
    parser.add_argument("--do_quant", type=str, default=None)
    parser.add_argument("--tag", type=str, default="")
    parser.add_argument("--device", type=str, choices=["cuda", "mps"], default="cuda")
    parser.add_argument("--no_sdpa", action="store_true")
    parser.add_argument("--no_bf16", action="store_true")
    parser.add_argument("--output_dir", type=str, default="outputs")
    return parser


def flush():
    """Wipes off memory."""
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.reset_max_memory_allocated()
    torch.cuda.reset_peak_memory_stats()


def bytes_to_giga_bytes(bytes):
    return f"{(bytes / 1024 / 1024 / 1024):.3f}"


def benchmark_fn(f, *args, **kwargs):
    # torch.utils.benchmark synchronizes the device around each measurement
    t0 = benchmark.Timer(
        stmt="f(*args, **kwargs)",
        globals={"args": args, "kwargs": kwargs, "f": f},
        num_threads=torch.get_num_threads(),
    )
    return f"{(t0.blocked_autorange().mean):.3f}"


def generate_csv_dict(pipeline_cls: str, args, time: float) -> Dict[str, Union[str, bool, float]]:
    """Packs benchmarking data into a dictionary for latter serialization."""
    data_dict = {
        "pipeline_cls": pipeline_cls,
        "ckpt_id": args.ckpt,
        "bf16": not args.no_bf16,
        "sdpa": not args.no_sdpa,
        "fused_qkv_projections": args.enable_fused_projections,
        "upcast_vae": args.upcast_vae,
        "batch_size": args.batch_size,
        "num_inference_steps": args.num_inference_steps,
        "compile_unet": args.compile_unet,
        "compile_vae": args.compile_vae,
        "compile_mode": args.compile_mode,
        "change_comp_config": args.change_comp_config,
        "do_quant": args.do_quant,
        "time (secs)": time,
        "tag": args.tag,
    }
    if args.device == "cuda":
        memory = bytes_to_giga_bytes(torch.cuda.max_memory_allocated())  # in GBs.
        total_gpu_memory = torch.cuda.get_device_properties(0).total_memory
        data_dict["memory (gbs)"] = memory
        data_dict["actual_gpu_memory (gbs)"] = f"{(total_gpu_memory / (1024**3)):.3f}"
        data_dict["gpu"] = torch.cuda.get_device_name()
    else:
        data_dict["memory (gbs)"] = "n/a"
        data_dict["actual_gpu_memory (gbs)"] = "n/a"
        data_dict["gpu"] = args.device
    return data_dict


def write_to_csv(file_name: str, data_dict: Dict[str, Union[str, bool, float]]):
    """Serializes a dictionary into a CSV file."""
    with open(file_name, mode="w", newline="") as csvfile:
        writer = csv.DictWriter(csvfile, fieldnames=BENCHMARK_FIELDS)
        writer.writeheader()
        writer.writerow(data_dict)


def collate_csv(input_files, output_file):
    """Collates multiple identically structured CSVs into a single CSV file."""
    with open(output_file, mode="w", newline="") as outfile:
        writer = csv.DictWriter(outfile, fieldnames=BENCHMARK_FIELDS)
        writer.writeheader()

        for file in input_files:
            with open(file, mode="r") as infile:
                reader = csv.DictReader(infile)
                for row in reader:
                    writer.writerow(row)


def run_inference(pipe, args):
    _ = pipe(
        prompt=args.prompt,
        num_inference_steps=args.num_inference_steps,
        num_images_per_prompt=args.batch_size,
    )


def main(args) -> dict:
    flush()
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
        device=args.device,
    )

    # Warmup.
    run_inference(pipeline, args)
    run_inference(pipeline, args)
    run_inference(pipeline, args)

    time = benchmark_fn(run_inference, pipeline, args)  # in seconds.
    data_dict = generate_csv_dict(
        pipeline_cls=str(pipeline.__class__.__name__),
        args=args,
        time=time,
    )
    img = pipeline(
        prompt=args.prompt,
        num_inference_steps=args.num_inference_steps,
        num_images_per_prompt=args.batch_size,
    ).images[0]

    return data_dict, img


if __name__ == "__main__":
    parser = create_parser()
    args = parser.parse_args()
    print(args)

    data_dict, img = main(args)

    name = (
        args.ckpt.replace("/", "_")
        + f"bf16@{not args.no_bf16}-sdpa@{not args.no_sdpa}-bs@{args.batch_size}-fuse@{args.enable_fused_projections}-upcast_vae@{args.upcast_vae}-steps@{args.num_inference_steps}-unet@{args.compile_unet}-vae@{args.compile_vae}-mode@{args.compile_mode}-change_comp_config@{args.change_comp_config}-do_quant@{args.do_quant}-tag@{args.tag}-device@{args.device}.csv"
    )
    os.makedirs(args.output_dir, exist_ok=True)
    img.save(os.path.join(args.output_dir, f"{name}.jpeg"))
    write_to_csv(os.path.join(args.output_dir, name), copy.deepcopy(data_dict))
