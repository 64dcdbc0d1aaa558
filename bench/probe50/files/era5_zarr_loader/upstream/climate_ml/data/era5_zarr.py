"""ERA5 (WeatherBench2-style zarr) dataset with on-the-fly normalisation, plus a side-stream
prefetcher that overlaps the host->device copy of batch k+1 with compute on batch k.

Variables are stacked as [surface..., upper-air(level)...] channels in a fixed order; the
static fields (orography, land-sea mask, cos/sin latitude) are appended once per sample.
"""
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
import xarray as xr
from torch.utils.data import DataLoader, Dataset, DistributedSampler

SURFACE_VARS = ["2m_temperature", "10m_u_component_of_wind", "10m_v_component_of_wind", "mean_sea_level_pressure"]
UPPER_VARS = ["geopotential", "temperature", "u_component_of_wind", "v_component_of_wind", "specific_humidity"]
LEVELS = [50, 100, 150, 200, 250, 300, 400, 500, 600, 700, 850, 925, 1000]
STATIC_VARS = ["geopotential_at_surface", "land_sea_mask"]


@dataclass
class ERA5Config:
    path: str
    stats_path: str
    years: Sequence[int]
    lead_steps: int = 1           # 6-hourly steps
    history: int = 0
    surface_vars: List[str] = field(default_factory=lambda: list(SURFACE_VARS))
    upper_vars: List[str] = field(default_factory=lambda: list(UPPER_VARS))
    levels: List[int] = field(default_factory=lambda: list(LEVELS))


class ERA5Zarr(Dataset):
    def __init__(self, cfg: ERA5Config):
        self.cfg = cfg
        ds = xr.open_zarr(cfg.path, consolidated=True)
        ds = ds.sel(time=ds.time.dt.year.isin(list(cfg.years)), level=cfg.levels)
        self.ds = ds
        self.n_time = ds.sizes["time"]

        stats = xr.open_dataset(cfg.stats_path)
        self.channel_names = list(cfg.surface_vars) + [f"{v}_{l}" for v in cfg.upper_vars for l in cfg.levels]
        self.mean = np.concatenate([stats["mean"].sel(variable=v).values.reshape(-1) for v in cfg.surface_vars + cfg.upper_vars]).astype(np.float32)
        self.std = np.concatenate([stats["std"].sel(variable=v).values.reshape(-1) for v in cfg.surface_vars + cfg.upper_vars]).astype(np.float32)

        lat = ds.latitude.values
        coslat = np.cos(np.deg2rad(lat))[:, None] * np.ones((1, ds.sizes["longitude"]))
        sinlat = np.sin(np.deg2rad(lat))[:, None] * np.ones((1, ds.sizes["longitude"]))
        static = [ds[v].values for v in STATIC_VARS] + [coslat, sinlat]
        static = np.stack(static).astype(np.float32)
        self.static = (static - static.mean(axis=(1, 2), keepdims=True)) / (static.std(axis=(1, 2), keepdims=True) + 1e-6)

    def __len__(self):
        return self.n_time - (self.cfg.history + self.cfg.lead_steps)

    def _fields(self, t: int) -> np.ndarray:
        snap = self.ds.isel(time=t)
        sfc = [snap[v].values[None] for v in self.cfg.surface_vars]
        upper = [snap[v].values for v in self.cfg.upper_vars]
        x = np.concatenate(sfc + upper, axis=0).astype(np.float32)
        return (x - self.mean[:, None, None]) / self.std[:, None, None]

    def __getitem__(self, idx: int) -> Tuple[torch.Tensor, torch.Tensor]:
        t0 = idx + self.cfg.history
        inp = [self._fields(t0 - h) for h in range(self.cfg.history, -1, -1)]
        inp = np.concatenate(inp + [self.static], axis=0)
        tar = self._fields(t0 + self.cfg.lead_steps)
        return torch.from_numpy(inp), torch.from_numpy(tar)


class CUDAPrefetcher:
    """Wraps a DataLoader; copies the next batch to the GPU on a side stream."""

    def __init__(self, loader: DataLoader, device: torch.device):
        self.loader = loader
        self.device = device
        self.stream = torch.cuda.Stream(device=device)
        self._iter = None
        self._next = None

    def __len__(self):
        return len(self.loader)

    def _preload(self):
        try:
            batch = next(self._iter)
        except StopIteration:
            self._next = None
            return
        with torch.cuda.stream(self.stream):
            self._next = [t.cuda(self.device, non_blocking=True) for t in batch]

    def __iter__(self):
        self._iter = iter(self.loader)
        self._preload()
        while self._next is not None:
            torch.cuda.current_stream(self.device).wait_stream(self.stream)
            batch = self._next
            for t in batch:
                t.record_stream(torch.cuda.current_stream(self.device))
            self._preload()
            yield batch


def build_loader(cfg: ERA5Config, batch_size: int, num_workers: int, distributed: bool, train: bool,
                 device: Optional[torch.device] = None):
    ds = ERA5Zarr(cfg)
    sampler = DistributedSampler(ds, shuffle=train) if distributed else None
    loader = DataLoader(
        ds,
        batch_size=batch_size,
        shuffle=(sampler is None and train),
        sampler=sampler,
        num_workers=num_workers,
        pin_memory=True,
        persistent_workers=num_workers > 0,
        prefetch_factor=4 if num_workers > 0 else None,
        drop_last=train,
    )
    if device is not None and device.type == "cuda":
        return CUDAPrefetcher(loader, device), sampler
    return loader, sampler
