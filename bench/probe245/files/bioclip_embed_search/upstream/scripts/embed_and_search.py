"""
Embed a folder of images with BioCLIP and run nearest-neighbour retrieval against
a reference gallery (e.g. Rare Species or a curated camera-trap gallery).

    # 1. build the gallery index once
    python scripts/embed_and_search.py build --images /data/gallery --index gallery.faiss

    # 2. query it
    python scripts/embed_and_search.py query --images /data/unknown --index gallery.faiss -k 10

Embeddings are L2-normalised so inner product == cosine similarity.
"""

import argparse
import json
import os
import time

import faiss
import numpy as np
import open_clip
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm

MODEL_STR = "hf-hub:imageomics/bioclip"

# Which GPU the embedding model goes on; faiss gets all GPUs
EMBED_DEVICE = os.environ.get("BIOCLIP_DEVICE", "cuda:0")


class Folder(Dataset):
    def __init__(self, root, transform):
        self.paths = sorted(
            os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs
            if f.lower().endswith((".jpg", ".jpeg", ".png"))
        )
        self.transform = transform

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return self.transform(Image.open(self.paths[i]).convert("RGB")), i


def load_model(device):
    model, _, preprocess = open_clip.create_model_and_transforms(MODEL_STR)
    model = model.to(device).eval()
    if device.startswith("cuda"):
        model = model.half()
    return model, preprocess


@torch.no_grad()
def embed_folder(model, preprocess, folder, device, batch_size=512, workers=8):
    ds = Folder(folder, preprocess)
    dl = DataLoader(ds, batch_size=batch_size, num_workers=workers, pin_memory=True)
    dtype = next(model.parameters()).dtype
    feats = np.zeros((len(ds), model.visual.output_dim), dtype=np.float32)
    for x, idx in tqdm(dl, desc=f"embed {os.path.basename(folder)}"):
        x = x.to(device, dtype=dtype, non_blocking=True)
        f = model.encode_image(x)
        f = torch.nn.functional.normalize(f.float(), dim=-1)
        feats[idx.numpy()] = f.cpu().numpy()
    return feats, ds.paths


def make_index(dim, use_gpu):
    index = faiss.IndexFlatIP(dim)
    if use_gpu:
        # Shard the flat index over every visible GPU
        co = faiss.GpuMultipleClonerOptions()
        co.shard = True
        co.useFloat16 = True
        index = faiss.index_cpu_to_all_gpus(index, co=co)
    return index


def cmd_build(args):
    model, preprocess = load_model(EMBED_DEVICE)
    feats, paths = embed_folder(model, preprocess, args.images, EMBED_DEVICE, args.batch_size, args.workers)
    index = make_index(feats.shape[1], use_gpu=False)  # write the CPU version to disk
    index.add(feats)
    faiss.write_index(index, args.index)
    with open(args.index + ".paths.json", "w") as f:
        json.dump(paths, f)
    print(f"Indexed {index.ntotal} gallery images -> {args.index}")


def cmd_query(args):
    ngpu = faiss.get_num_gpus()
    print(f"faiss sees {ngpu} GPU(s)")

    cpu_index = faiss.read_index(args.index)
    with open(args.index + ".paths.json") as f:
        gallery_paths = json.load(f)

    if ngpu > 0:
        co = faiss.GpuMultipleClonerOptions()
        co.shard = True
        co.useFloat16 = True
        index = faiss.index_cpu_to_all_gpus(cpu_index, co=co)
    else:
        index = cpu_index

    model, preprocess = load_model(EMBED_DEVICE)
    feats, paths = embed_folder(model, preprocess, args.images, EMBED_DEVICE, args.batch_size, args.workers)

    # Free the embedding model before the search so faiss gets the GPU memory
    del model
    torch.cuda.empty_cache()

    t0 = time.time()
    sims, ids = index.search(feats, args.k)
    print(f"Searched {len(feats)} queries in {time.time() - t0:.2f}s")

    out = []
    for p, s_row, i_row in zip(paths, sims, ids):
        out.append({
            "query": p,
            "neighbours": [{"path": gallery_paths[i], "sim": float(s)} for s, i in zip(s_row, i_row) if i >= 0],
        })
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    print(f"Wrote {args.out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("build", "query"):
        p = sub.add_parser(name)
        p.add_argument("--images", required=True)
        p.add_argument("--index", required=True)
        p.add_argument("--batch-size", type=int, default=512)
        p.add_argument("--workers", type=int, default=8)
        if name == "query":
            p.add_argument("-k", type=int, default=10)
            p.add_argument("--out", default="neighbours.json")
    args = ap.parse_args()
    {"build": cmd_build, "query": cmd_query}[args.cmd](args)


if __name__ == "__main__":
    main()
