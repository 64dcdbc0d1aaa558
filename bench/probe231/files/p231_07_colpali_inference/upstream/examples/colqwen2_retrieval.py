"""
Minimal ColPali / ColQwen2 retrieval demo: embed a folder of page images and a handful of
queries, score them with late interaction (MaxSim) and print the top pages per query.

    python examples/colqwen2_retrieval.py --model vidore/colqwen2-v1.0 --images ./pages --top_k 3

Runs comfortably on a single 24GB GPU in bf16.
"""
import argparse
import time
from pathlib import Path
from typing import List

import torch
from PIL import Image
from torch.utils.data import DataLoader
from tqdm import tqdm
from transformers.utils.import_utils import is_flash_attn_2_available

from colpali_engine.models import ColPali, ColPaliProcessor, ColQwen2, ColQwen2Processor
from colpali_engine.utils.torch_utils import ListDataset, get_torch_device


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="vidore/colqwen2-v1.0")
    parser.add_argument("--images", default="./pages")
    parser.add_argument("--queries", nargs="+", default=[
        "What is the revenue growth in Q3?",
        "Which figure shows the attention heatmap?",
    ])
    parser.add_argument("--batch_size", type=int, default=4)
    parser.add_argument("--top_k", type=int, default=3)
    parser.add_argument("--device", default="cuda:0")
    return parser.parse_args()


def load_model(model_name: str, device: str):
    if "colqwen2" in model_name.lower():
        model = ColQwen2.from_pretrained(
            model_name,
            torch_dtype=torch.bfloat16,
            device_map=device,  # or "mps" if on Apple Silicon
            attn_implementation="flash_attention_2" if is_flash_attn_2_available() else None,
        ).eval()
        processor = ColQwen2Processor.from_pretrained(model_name)
    else:
        model = ColPali.from_pretrained(
            model_name,
            torch_dtype=torch.bfloat16,
            device_map="cuda",
        ).eval()
        processor = ColPaliProcessor.from_pretrained(model_name)
    return model, processor


def embed_images(model, processor, images: List[Image.Image], batch_size: int):
    dataloader = DataLoader(
        dataset=ListDataset[Image.Image](images),
        batch_size=batch_size,
        shuffle=False,
        collate_fn=lambda x: processor.process_images(x),
        num_workers=2,
        pin_memory=True,
    )

    embeddings = []
    for batch in tqdm(dataloader, desc="Embedding pages"):
        with torch.no_grad():
            batch = {k: v.to(model.device, non_blocking=True) for k, v in batch.items()}
            out = model(**batch)
        embeddings.extend(list(torch.unbind(out.to("cpu"))))
    return embeddings


def embed_queries(model, processor, queries: List[str]):
    batch_queries = processor.process_queries(queries).to(model.device)
    with torch.no_grad():
        query_embeddings = model(**batch_queries)
    return list(torch.unbind(query_embeddings.to("cpu")))


def main():
    args = parse_args()

    image_paths = sorted(p for p in Path(args.images).iterdir() if p.suffix.lower() in {".png", ".jpg", ".jpeg"})
    images = [Image.open(p).convert("RGB") for p in image_paths]
    print(f"Loaded {len(images)} pages from {args.images}")

    model, processor = load_model(args.model, args.device)
    print(f"Model on {model.device}, dtype {model.dtype}")

    torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    image_embeddings = embed_images(model, processor, images, args.batch_size)
    query_embeddings = embed_queries(model, processor, args.queries)
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    print(f"Encoded in {elapsed:.1f}s, peak GPU memory {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")

    scores = processor.score_multi_vector(query_embeddings, image_embeddings, device=get_torch_device("auto"))

    for qi, query in enumerate(args.queries):
        top = scores[qi].topk(min(args.top_k, len(images)))
        print(f"\nQuery: {query}")
        for rank, (score, idx) in enumerate(zip(top.values.tolist(), top.indices.tolist()), start=1):
            print(f"  {rank}. {image_paths[idx].name}  score={score:.2f}")


if __name__ == "__main__":
    main()
