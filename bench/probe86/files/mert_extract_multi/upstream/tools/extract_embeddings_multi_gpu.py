#!/usr/bin/env python3
"""Extract MERT layer-wise embeddings for a music dataset on every free GPU of the node.

The file list is sharded across worker processes; each worker is pinned to one GPU through
CUDA_VISIBLE_DEVICES, loads MERT from the Hugging Face hub and writes one .npy per track with
the time-averaged hidden states of all layers (shape: [n_layers + 1, hidden]).

    python tools/extract_embeddings_multi_gpu.py --audio_dir data/gtzan/wav \
        --out_dir features/mert_v1_95m --model m-a-p/MERT-v1-95M --min_free_mem_gb 10
"""
import argparse
import glob
import os
import subprocess
import sys
import time

import numpy as np
import pynvml
import torch
import torchaudio
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModel, Wav2Vec2FeatureExtractor


def free_gpus(min_free_gb):
    """GPUs whose free memory exceeds `min_free_gb`, most free first (NVML)."""
    pynvml.nvmlInit()
    found = []
    for idx in range(pynvml.nvmlDeviceGetCount()):
        handle = pynvml.nvmlDeviceGetHandleByIndex(idx)
        info = pynvml.nvmlDeviceGetMemoryInfo(handle)
        util = pynvml.nvmlDeviceGetUtilizationRates(handle).gpu
        if info.free / 2 ** 30 >= min_free_gb and util < 50:
            found.append((info.free, idx))
    pynvml.nvmlShutdown()
    return [idx for _, idx in sorted(found, reverse=True)]


class AudioDataset(Dataset):
    def __init__(self, files, target_sr, max_seconds):
        self.files = files
        self.target_sr = target_sr
        self.max_len = int(max_seconds * target_sr)

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        wav, sr = torchaudio.load(self.files[i])
        wav = wav.mean(0)
        if sr != self.target_sr:
            wav = torchaudio.functional.resample(wav, sr, self.target_sr)
        wav = wav[: self.max_len]
        return wav, self.files[i]


def collate(batch):
    wavs, names = zip(*batch)
    lengths = torch.tensor([w.numel() for w in wavs])
    padded = torch.zeros(len(wavs), int(lengths.max()))
    for i, w in enumerate(wavs):
        padded[i, : w.numel()] = w
    return padded, lengths, list(names)


def worker(args, shard_id, files):
    device = torch.device("cuda:0")  # CUDA_VISIBLE_DEVICES exposes exactly one card
    torch.backends.cuda.matmul.allow_tf32 = True
    amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16

    processor = Wav2Vec2FeatureExtractor.from_pretrained(args.model, trust_remote_code=True)
    model = AutoModel.from_pretrained(args.model, trust_remote_code=True).to("cuda")
    model.eval()

    ds = AudioDataset(files, processor.sampling_rate, args.max_seconds)
    loader = DataLoader(ds, batch_size=args.batch_size, num_workers=args.num_workers,
                        collate_fn=collate, pin_memory=True, pin_memory_device="cuda")

    t0 = time.time()
    n_done = 0
    for wavs, lengths, names in loader:
        wavs = wavs.to(device, non_blocking=True)
        # MERT expects zero-mean / unit-variance input per clip
        mask = torch.arange(wavs.size(1), device=device)[None, :] < lengths.to(device)[:, None]
        mean = (wavs * mask).sum(1, keepdim=True) / lengths.to(device)[:, None]
        var = (((wavs - mean) * mask) ** 2).sum(1, keepdim=True) / lengths.to(device)[:, None]
        wavs = ((wavs - mean) / torch.sqrt(var + 1e-7)) * mask

        with torch.no_grad(), torch.cuda.amp.autocast(dtype=amp_dtype):
            out = model(input_values=wavs, attention_mask=mask.long(), output_hidden_states=True)
        hidden = torch.stack(out.hidden_states, dim=1).float()          # (B, L+1, T, H)
        frame_mask = torch.nn.functional.interpolate(
            mask[:, None, :].float(), size=hidden.size(2), mode="nearest")[:, 0]   # (B, T)
        pooled = (hidden * frame_mask[:, None, :, None]).sum(2) / frame_mask.sum(1)[:, None, None]

        for emb, name in zip(pooled.cpu().numpy(), names):
            rel = os.path.relpath(name, args.audio_dir)
            out_path = os.path.join(args.out_dir, os.path.splitext(rel)[0] + ".npy")
            os.makedirs(os.path.dirname(out_path), exist_ok=True)
            np.save(out_path, emb.astype(np.float16))
        n_done += len(names)
        if n_done % (20 * args.batch_size) < args.batch_size:
            rate = n_done / (time.time() - t0)
            mem = torch.cuda.max_memory_reserved() / 2 ** 30
            print(f"[shard {shard_id}] {n_done}/{len(files)} tracks, {rate:.1f} tracks/s, peak {mem:.1f} GiB",
                  flush=True)
    print(f"[shard {shard_id}] done: {n_done} tracks in {time.time() - t0:.0f}s", flush=True)


def launch(args):
    files = sorted(glob.glob(os.path.join(args.audio_dir, "**", "*.wav"), recursive=True)
                   + glob.glob(os.path.join(args.audio_dir, "**", "*.mp3"), recursive=True))
    if args.skip_existing:
        files = [f for f in files if not os.path.exists(
            os.path.join(args.out_dir, os.path.splitext(os.path.relpath(f, args.audio_dir))[0] + ".npy"))]
    if not files:
        print("nothing to do")
        return

    gpus = free_gpus(args.min_free_mem_gb) if args.gpus is None else [int(g) for g in args.gpus.split(",")]
    if not gpus:
        sys.exit("no GPU with enough free memory; lower --min_free_mem_gb")
    gpus = gpus[: args.max_workers]
    print(f"{len(files)} tracks on GPUs {gpus} (torch sees {torch.cuda.device_count()})")

    procs = []
    for shard_id, gpu in enumerate(gpus):
        shard = files[shard_id::len(gpus)]
        list_path = os.path.join(args.out_dir, f".shard_{shard_id}.txt")
        os.makedirs(args.out_dir, exist_ok=True)
        with open(list_path, "w") as f:
            f.write("\n".join(shard))
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(gpu))
        cmd = [sys.executable, __file__, "--worker", "--shard_id", str(shard_id), "--file_list", list_path,
               "--audio_dir", args.audio_dir, "--out_dir", args.out_dir, "--model", args.model,
               "--batch_size", str(args.batch_size), "--max_seconds", str(args.max_seconds),
               "--num_workers", str(args.num_workers)]
        procs.append(subprocess.Popen(cmd, env=env))
    codes = [p.wait() for p in procs]
    if any(codes):
        sys.exit(f"worker exit codes: {codes}")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--audio_dir", required=True)
    p.add_argument("--out_dir", required=True)
    p.add_argument("--model", default="m-a-p/MERT-v1-95M")
    p.add_argument("--batch_size", type=int, default=8)
    p.add_argument("--max_seconds", type=float, default=30.0)
    p.add_argument("--num_workers", type=int, default=4)
    p.add_argument("--gpus", type=str, default=None, help="comma separated ids; default: all free GPUs")
    p.add_argument("--min_free_mem_gb", type=float, default=10.0)
    p.add_argument("--max_workers", type=int, default=8)
    p.add_argument("--skip_existing", action="store_true")
    p.add_argument("--worker", action="store_true")
    p.add_argument("--shard_id", type=int, default=0)
    p.add_argument("--file_list", type=str, default=None)
    return p.parse_args()


if __name__ == "__main__":
    args = parse_args()
    if args.worker:
        with open(args.file_list) as f:
            shard_files = [line.strip() for line in f if line.strip()]
        worker(args, args.shard_id, shard_files)
    else:
        launch(args)
