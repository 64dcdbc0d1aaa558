"""NVIDIA DALI input pipeline for audio tagging (DeepLearningExamples Jasper/QuartzNet style).

Decoding, resampling, random cropping, log-mel extraction and SpecAugment-free normalisation are
done inside DALI so that the training loop receives ready (B, n_mels, T) batches.  With
``device="gpu"`` everything after decoding runs on the GPU; ``device="cpu"`` keeps DALI on the host
(slower, but useful for debugging).
"""
import math
import os

import numpy as np
import torch
import torch.distributed as dist
from nvidia.dali import fn, pipeline_def, types
from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy


def read_manifest(path, label_map):
    files, labels = [], []
    with open(path) as f:
        for line in f:
            rel, tags = line.rstrip("\n").split("\t")
            files.append(rel)
            labels.append([label_map[t] for t in tags.split(",")])
    return files, labels


@pipeline_def
def _audio_pipeline(files, label_ids, num_classes, sample_rate, clip_seconds, n_fft, hop_length,
                    n_mels, training, shard_id, num_shards, device):
    encoded, label = fn.readers.file(
        files=files, labels=label_ids, shard_id=shard_id, num_shards=num_shards,
        random_shuffle=training, pad_last_batch=not training, name="Reader")
    audio, _ = fn.decoders.audio(encoded, dtype=types.FLOAT, downmix=True,
                                 sample_rate=float(sample_rate))
    clip_len = int(clip_seconds * sample_rate)
    if training:
        # random crop (or pad) to a fixed number of samples
        begin = fn.random.uniform(range=(0.0, 1.0))
        audio = fn.slice(audio, rel_start=begin, shape=[clip_len], axes=[0],
                         out_of_bounds_policy="pad", normalized_anchor=True)
        gain = fn.random.uniform(range=(-6.0, 6.0))
        audio = audio * fn.power(10.0, gain / 20.0)
    else:
        audio = fn.pad(audio, axes=[0], shape=[clip_len], fill_value=0.0)
        audio = fn.slice(audio, start=0, shape=[clip_len], axes=[0])

    if device == "gpu":
        audio = audio.gpu()
    spec = fn.spectrogram(audio, nfft=n_fft, window_length=n_fft, window_step=hop_length,
                          center_windows=True, layout="ft", power=2)
    mel = fn.mel_filter_bank(spec, sample_rate=sample_rate, nfilter=n_mels, normalize=True)
    logmel = fn.to_decibels(mel, multiplier=10.0, reference=1.0, cutoff_db=-80.0)
    logmel = fn.normalize(logmel, axes=[1], epsilon=1e-5)
    return logmel, label


class DaliAudioLoader:
    """Iterable yielding dicts {"logmel": FloatTensor(B, n_mels, T), "target": FloatTensor(B, C)}."""

    def __init__(self, manifest, audio_root, label_map, batch_size, sample_rate=32000,
                 clip_seconds=10.0, n_fft=1024, hop_length=320, n_mels=128, training=True,
                 num_threads=8, device="gpu", device_id=None, seed=1234):
        files, labels = read_manifest(manifest, label_map)
        self.num_classes = len(label_map)
        self.multi_hot = np.zeros((len(files), self.num_classes), dtype=np.float32)
        for i, ls in enumerate(labels):
            self.multi_hot[i, ls] = 1.0
        if dist.is_available() and dist.is_initialized():
            shard_id, num_shards = dist.get_rank(), dist.get_world_size()
        else:
            shard_id, num_shards = 0, 1
        if device_id is None:
            device_id = torch.cuda.current_device()
        self.batch_size = batch_size
        self.size = int(math.ceil(len(files) / num_shards))
        self.pipe = _audio_pipeline(
            batch_size=batch_size, num_threads=num_threads, seed=seed + shard_id,
            device_id=device_id if device == "gpu" else None,
            files=[os.path.join(audio_root, f) for f in files],
            label_ids=list(range(len(files))), num_classes=self.num_classes,
            sample_rate=sample_rate, clip_seconds=clip_seconds, n_fft=n_fft,
            hop_length=hop_length, n_mels=n_mels, training=training,
            shard_id=shard_id, num_shards=num_shards, device=device,
            prefetch_queue_depth=2, exec_async=True, exec_pipelined=True)
        self.pipe.build()
        self.iterator = DALIGenericIterator(
            [self.pipe], ["logmel", "index"], reader_name="Reader",
            last_batch_policy=LastBatchPolicy.PARTIAL if not training else LastBatchPolicy.DROP,
            auto_reset=True)
        self.device = torch.device("cuda", device_id) if device == "gpu" else torch.device("cpu")

    def __len__(self):
        return self.size // self.batch_size

    def __iter__(self):
        for batch in self.iterator:
            out = batch[0]
            idx = out["index"].view(-1).cpu().numpy()
            target = torch.from_numpy(self.multi_hot[idx]).to(self.device, non_blocking=True)
            yield {"logmel": out["logmel"], "target": target}


def benchmark(manifest, audio_root, label_map, batch_size=64, steps=200, device="gpu"):
    """Rough throughput check of the input pipeline alone (clips / s)."""
    import time

    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
    loader = DaliAudioLoader(manifest, audio_root, label_map, batch_size, device=device)
    it = iter(loader)
    next(it)
    torch.cuda.synchronize()
    t0 = time.time()
    n = 0
    for _ in range(steps):
        batch = next(it)
        n += batch["logmel"].shape[0]
    torch.cuda.synchronize()  # wait for the last batch
    dt = time.time() - t0
    print(f"{n / dt:.1f} clips/s ({device}, batch {batch_size})")


if __name__ == "__main__":
    import argparse
    import json

    ap = argparse.ArgumentParser()
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--audio_root", required=True)
    ap.add_argument("--labels", required=True, help="json: tag -> index")
    ap.add_argument("--batch_size", type=int, default=64)
    ap.add_argument("--device", choices=["gpu", "cpu"], default="gpu")
    a = ap.parse_args()
    with open(a.labels) as f:
        lm = json.load(f)
    benchmark(a.manifest, a.audio_root, lm, a.batch_size, device=a.device)
