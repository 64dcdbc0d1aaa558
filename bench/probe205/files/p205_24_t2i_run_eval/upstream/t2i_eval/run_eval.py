"""Zero-shot text-to-image evaluation on COCO-30k.

Generates one image per caption with a diffusers pipeline (sharded over ranks),
then computes clean-FID against the resized COCO val images, CLIP score and the
LAION aesthetic score of the generated set.

    torchrun --nproc_per_node 8 -m t2i_eval.run_eval --config configs/eval_coco30k.yaml
    python -m t2i_eval.run_eval --config configs/eval_coco30k.yaml --skip-generation
"""
import argparse
import json
import logging
import os
import time
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
from omegaconf import OmegaConf
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm

logger = logging.getLogger("t2i_eval")


# --------------------------------------------------------------------------- runtime


def init_runtime(cfg):
    """Returns (rank, world_size, local_rank). Initialises torch.distributed when launched by torchrun."""
    os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")
    if "WORLD_SIZE" in os.environ and int(os.environ["WORLD_SIZE"]) > 1:
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        dist.init_process_group(backend=cfg.runtime.dist_backend, init_method=cfg.runtime.dist_url)
        return dist.get_rank(), dist.get_world_size(), local_rank
    return 0, 1, 0


def get_device(cfg, local_rank):
    if cfg.runtime.device == "cuda" and not torch.cuda.is_available():
        logger.warning("CUDA requested but not available -- running the evaluation on CPU (slow!)")
        return torch.device("cpu")
    if cfg.runtime.device == "cpu":
        return torch.device("cpu")
    return torch.device(cfg.runtime.device, local_rank)


def configure_backends(cfg):
    torch.backends.cudnn.benchmark = bool(cfg.runtime.cudnn_benchmark)
    torch.backends.cuda.matmul.allow_tf32 = bool(cfg.runtime.tf32)
    torch.backends.cudnn.allow_tf32 = bool(cfg.runtime.tf32)


def barrier(world_size):
    if world_size > 1:
        dist.barrier()


# --------------------------------------------------------------------------- generation


def load_prompts(path):
    with open(path) as f:
        data = json.load(f)
    # {"annotations": [{"image_id": .., "caption": ..}, ...]} or {"<id>": "<caption>"}
    if isinstance(data, dict) and "annotations" in data:
        return [(str(a["image_id"]), a["caption"].strip()) for a in data["annotations"]]
    return sorted((str(k), v.strip()) for k, v in data.items())


def build_pipeline(cfg, device):
    from diffusers import DDIMScheduler, StableDiffusionPipeline

    dtype = torch.float16 if cfg.runtime.mixed_precision == "fp16" else torch.float32
    pipe = StableDiffusionPipeline.from_pretrained(cfg.generation.pipeline, torch_dtype=dtype, safety_checker=None)
    if cfg.generation.scheduler == "ddim":
        pipe.scheduler = DDIMScheduler.from_config(pipe.scheduler.config)
    pipe = pipe.to(device)
    pipe.set_progress_bar_config(disable=True)

    if cfg.runtime.attention == "xformers":
        pipe.enable_xformers_memory_efficient_attention()
    elif cfg.runtime.attention == "sdpa":
        from diffusers.models.attention_processor import AttnProcessor2_0
        pipe.unet.set_attn_processor(AttnProcessor2_0())

    # 16 GB cards (V100/T4) need attention slicing at 512px with batch 16
    if torch.cuda.get_device_properties(device).total_memory < 20 * 2**30:
        pipe.enable_attention_slicing()

    if cfg.runtime.compile:
        pipe.unet = torch.compile(pipe.unet)
    return pipe


@torch.no_grad()
def generate(cfg, rank, world_size, device):
    out_dir = Path(cfg.generation.output_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    prompts = load_prompts(cfg.data.prompts)[rank::world_size]
    todo = [(i, p) for i, p in prompts if not (out_dir / f"{i}.png").exists()]
    if not todo:
        return out_dir

    pipe = build_pipeline(cfg, device)
    generator = torch.Generator(device="cuda").manual_seed(cfg.seed + rank)
    bs = cfg.data.batch_size
    t0 = time.time()
    for s in tqdm(range(0, len(todo), bs), disable=rank != 0, desc="generating"):
        chunk = todo[s:s + bs]
        with torch.autocast("cuda", dtype=torch.float16, enabled=cfg.runtime.mixed_precision == "fp16"):
            images = pipe([p for _, p in chunk],
                          num_inference_steps=cfg.generation.num_inference_steps,
                          guidance_scale=cfg.generation.guidance_scale,
                          height=cfg.data.image_size, width=cfg.data.image_size,
                          generator=generator).images
        for (i, _), img in zip(chunk, images):
            img.save(out_dir / f"{i}.png")
    logger.info("rank %d generated %d images in %.1fs", rank, len(todo), time.time() - t0)

    del pipe
    torch.cuda.empty_cache()
    return out_dir


# --------------------------------------------------------------------------- metrics


class PromptImageDataset(Dataset):
    def __init__(self, img_dir, prompts, preprocess):
        self.items = [(img_dir / f"{i}.png", p) for i, p in prompts if (img_dir / f"{i}.png").exists()]
        self.preprocess = preprocess

    def __len__(self):
        return len(self.items)

    def __getitem__(self, k):
        path, prompt = self.items[k]
        return self.preprocess(Image.open(path).convert("RGB")), prompt


@torch.no_grad()
def clip_and_aesthetic(cfg, img_dir, device):
    import clip
    from t2i_eval.aesthetic import AestheticMLP, normalized

    model, preprocess = clip.load(cfg.metrics.clip_score.model, device=device)
    model.eval()
    ds = PromptImageDataset(img_dir, load_prompts(cfg.data.prompts), preprocess)
    loader = DataLoader(ds, batch_size=cfg.metrics.fid.batch_size, shuffle=False,
                        num_workers=cfg.data.num_workers, pin_memory=cfg.data.pin_memory)

    mlp = None
    if cfg.metrics.aesthetic.enabled:
        mlp = AestheticMLP(768)
        mlp.load_state_dict(torch.load(cfg.metrics.aesthetic.checkpoint, map_location="cpu"))
        mlp = mlp.to(device).eval()

    clip_scores, aesthetic = [], []
    for images, prompts in tqdm(loader, desc="clip/aesthetic"):
        images = images.to(device, non_blocking=True)
        tokens = clip.tokenize(list(prompts), truncate=True).to(device)
        img_f = model.encode_image(images).float()
        txt_f = model.encode_text(tokens).float()
        img_f = img_f / img_f.norm(dim=-1, keepdim=True)
        txt_f = txt_f / txt_f.norm(dim=-1, keepdim=True)
        clip_scores.append((100.0 * (img_f * txt_f).sum(-1)).clamp(min=0).cpu())
        if mlp is not None:
            emb = torch.from_numpy(normalized(img_f.cpu().numpy())).to(device)
            aesthetic.append(mlp(emb).squeeze(1).cpu())

    out = {"clip_score": torch.cat(clip_scores).mean().item()}
    if aesthetic:
        out["aesthetic"] = torch.cat(aesthetic).mean().item()
    return out


def compute_metrics(cfg, img_dir, device):
    results = {}
    if cfg.metrics.fid.enabled:
        from cleanfid import fid
        results["fid"] = fid.compute_fid(str(img_dir), cfg.data.real_images, mode=cfg.metrics.fid.mode,
                                         batch_size=cfg.metrics.fid.batch_size,
                                         num_workers=cfg.data.num_workers,
                                         device=device, use_dataparallel=False)
    if cfg.metrics.clip_score.enabled or cfg.metrics.aesthetic.enabled:
        results.update(clip_and_aesthetic(cfg, img_dir, device))
    return results


# --------------------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    ap.add_argument("--skip-generation", action="store_true")
    ap.add_argument("overrides", nargs="*", help="OmegaConf dotlist overrides, e.g. runtime.device=cpu")
    args = ap.parse_args()

    cfg = OmegaConf.merge(OmegaConf.load(args.config), OmegaConf.from_dotlist(args.overrides))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    rank, world_size, local_rank = init_runtime(cfg)
    device = get_device(cfg, local_rank)
    configure_backends(cfg)
    torch.manual_seed(cfg.seed)
    np.random.seed(cfg.seed)

    if not args.skip_generation:
        img_dir = generate(cfg, rank, world_size, device)
    else:
        img_dir = Path(cfg.generation.output_dir)
    barrier(world_size)

    if rank == 0:
        results = compute_metrics(cfg, img_dir, device)
        results["experiment"] = cfg.experiment
        print(json.dumps(results, indent=2))
        with open(Path(cfg.generation.output_dir) / "metrics.json", "w") as f:
            json.dump(results, f, indent=2)
    barrier(world_size)
    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
