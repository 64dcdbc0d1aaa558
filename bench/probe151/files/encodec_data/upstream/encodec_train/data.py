"""Audio datasets and loaders for codec training (EnCodec-style solver)."""
import logging
import random
import typing as tp
from pathlib import Path

import torch
import torchaudio
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

from encodec import distrib
from encodec.utils import convert_audio

logger = logging.getLogger(__name__)


class AudioSegmentDataset(Dataset):
    """Random fixed-length crops from a list of audio files."""

    def __init__(self, files: tp.List[Path], sample_rate: int, channels: int,
                 segment_duration: float = 1.0, num_samples: int = 100_000,
                 normalize: bool = True):
        self.files = list(files)
        self.sample_rate = sample_rate
        self.channels = channels
        self.segment = int(segment_duration * sample_rate)
        self.num_samples = num_samples
        self.normalize = normalize

    def __len__(self):
        return self.num_samples

    def __getitem__(self, index):
        rng = random.Random(index)
        path = self.files[rng.randrange(len(self.files))]
        info = torchaudio.info(str(path))
        frames = info.num_frames
        target = int(self.segment * info.sample_rate / self.sample_rate) + 1
        offset = rng.randint(0, max(0, frames - target))
        wav, sr = torchaudio.load(str(path), frame_offset=offset, num_frames=target)
        wav = convert_audio(wav, sr, self.sample_rate, self.channels)
        wav = wav[:, :self.segment]
        if wav.shape[-1] < self.segment:
            wav = torch.nn.functional.pad(wav, (0, self.segment - wav.shape[-1]))
        if self.normalize:
            wav = wav / wav.abs().max().clamp_min(1e-5) * 0.95
        return wav


def find_audio_files(root: tp.Union[str, Path], exts=(".wav", ".flac", ".mp3")) -> tp.List[Path]:
    root = Path(root)
    files = [p for p in root.rglob("*") if p.suffix.lower() in exts]
    logger.info("Found %d audio files under %s", len(files), root)
    return sorted(files)


def build_loader(cfg, split: str = "train") -> DataLoader:
    """Build a DataLoader; shards the data across ranks when running distributed."""
    files = find_audio_files(cfg.dset[split])
    dataset = AudioSegmentDataset(
        files, cfg.sample_rate, cfg.channels,
        segment_duration=cfg.segment_duration,
        num_samples=cfg.num_samples[split])
    sampler = None
    if distrib.is_distributed():
        sampler = DistributedSampler(dataset, num_replicas=distrib.world_size(),
                                     rank=distrib.rank(), shuffle=(split == "train"))
    per_rank_batch = cfg.batch_size // distrib.world_size()
    loader = DataLoader(
        dataset,
        batch_size=per_rank_batch,
        sampler=sampler,
        shuffle=(sampler is None and split == "train"),
        num_workers=cfg.num_workers,
        pin_memory=cfg.device.startswith("cuda"),
        drop_last=(split == "train"),
        persistent_workers=cfg.num_workers > 0,
    )
    return loader


class CUDAPrefetcher:
    """Overlap host->device copies with compute using a side stream."""

    def __init__(self, loader: DataLoader, device: tp.Union[str, torch.device]):
        self.loader = loader
        self.device = torch.device(device)
        self.stream = torch.cuda.Stream(device=self.device)
        self._iter = None
        self._next = None

    def __iter__(self):
        self._iter = iter(self.loader)
        self._preload()
        return self

    def _preload(self):
        try:
            batch = next(self._iter)
        except StopIteration:
            self._next = None
            return
        with torch.cuda.stream(self.stream):
            self._next = batch.to(self.device, non_blocking=True)

    def __next__(self):
        torch.cuda.current_stream(self.device).wait_stream(self.stream)
        batch = self._next
        if batch is None:
            raise StopIteration
        batch.record_stream(torch.cuda.current_stream(self.device))
        self._preload()
        return batch

    def __len__(self):
        return len(self.loader)
