"""Tokenise a fairseq audio manifest with EnCodec (24 kHz, 6 kbps -> 8 codebooks).

Writes one label file per codebook (`<split>.encodec_<k>`) with space-separated code
indices at 75 Hz, matching what MERTDataset expects.

    python scripts/prepare_codecs_from_manifest.py \
        --manifest_path data/music4all_sh/train.tsv \
        --out_root data/encodec_labels --codebook_size 1024 --n_codebook 8 \
        --n_shard 8 --shard_id 0 --device cuda:0
"""
import argparse
import os
import sys
import time

import numpy as np
import soundfile as sf
import torch
import torchaudio
from tqdm import tqdm

try:
    from encodec import EncodecModel
    from encodec.utils import convert_audio
except ImportError:
    print("please `pip install encodec` first", file=sys.stderr)
    raise


def get_shard_range(tot, nshard, rank):
    assert rank < nshard and rank >= 0, f"invaid rank/nshard {rank}/{nshard}"
    start = round(tot / nshard * rank)
    end = round(tot / nshard * (rank + 1))
    assert start < end, f"start={start}, end={end}"
    print(f"rank {rank} of {nshard}, process {end - start} ({start}-{end}) out of {tot}")
    return start, end


def read_manifest(path, nshard, rank):
    with open(path) as f:
        root = f.readline().rstrip()
        lines = [line.rstrip() for line in f]
    start, end = get_shard_range(len(lines), nshard, rank)
    lines = lines[start:end]
    return root, [line.split("\t")[0] for line in lines]


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--manifest_path", type=str, required=True)
    parser.add_argument("--out_root", type=str, required=True)
    parser.add_argument("--codebook_size", type=int, default=1024)
    parser.add_argument("--n_codebook", type=int, default=8)
    parser.add_argument("--bandwidth", type=float, default=6.0)
    parser.add_argument("--n_shard", type=int, default=1)
    parser.add_argument("--shard_id", type=int, default=0)
    parser.add_argument("--chunk_secs", type=float, default=30.0)
    parser.add_argument("--device", type=str, default="cuda:0")
    return parser.parse_args()


@torch.no_grad()
def encode_file(model, path, device, chunk_secs):
    wav, sr = torchaudio.load(path)
    wav = convert_audio(wav, sr, model.sample_rate, model.channels)
    chunk = int(chunk_secs * model.sample_rate)
    codes = []
    for s in range(0, wav.shape[-1], chunk):
        seg = wav[:, s:s + chunk].unsqueeze(0).to(device)
        encoded_frames = model.encode(seg)
        # list of (codes [B, n_q, T], scale)
        codes.append(torch.cat([f[0] for f in encoded_frames], dim=-1).squeeze(0).cpu())
    return torch.cat(codes, dim=-1)  # n_q, T


def main():
    args = parse_args()
    split = os.path.basename(args.manifest_path).replace(".tsv", "")
    os.makedirs(args.out_root, exist_ok=True)

    model = EncodecModel.encodec_model_24khz()
    model.set_target_bandwidth(args.bandwidth)
    model = model.cuda(args.device).eval()
    device = next(model.parameters()).device
    print(f"EnCodec loaded on {device} ({torch.cuda.get_device_name(device)})")

    root, names = read_manifest(args.manifest_path, args.n_shard, args.shard_id)
    suffix = f"_{args.shard_id}_{args.n_shard}" if args.n_shard > 1 else ""
    writers = [
        open(os.path.join(args.out_root, f"{split}{suffix}.encodec_{k}"), "w")
        for k in range(args.n_codebook)
    ]

    t0 = time.time()
    for i, name in enumerate(tqdm(names)):
        path = os.path.join(root, name)
        try:
            codes = encode_file(model, path, device, args.chunk_secs)
        except RuntimeError as e:
            if "out of memory" in str(e):
                print(f"OOM on {name}, retrying with smaller chunks")
                torch.cuda.empty_cache()
                codes = encode_file(model, path, device, args.chunk_secs / 4)
            else:
                raise
        codes = codes[: args.n_codebook].numpy().astype(np.int64)
        for k in range(args.n_codebook):
            writers[k].write(" ".join(map(str, codes[k].tolist())) + "\n")
        if i % 1000 == 0 and i > 0:
            mem = torch.cuda.max_memory_allocated(device) / 2 ** 30
            print(f"{i} files, {time.time() - t0:.1f}s, peak mem {mem:.2f} GiB")

    for w in writers:
        w.close()
    print("done")


if __name__ == "__main__":
    main()
