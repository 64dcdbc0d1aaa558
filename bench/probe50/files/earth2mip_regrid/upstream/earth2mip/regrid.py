# SPDX-FileCopyrightText: Copyright (c) 2023 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
"""Regridding between lat/lon grids (and from the CubedSphere / HEALPix grids some models use).

TempestRemap offline maps are stored as sparse (row, col, S) triplets; applying one is a
sparse-dense matmul on the flattened horizontal dimensions.
"""

from typing import Optional

import netCDF4 as nc
import numpy as np
import torch

from earth2mip import grid as grids
from earth2mip import schema


class TempestRegridder(torch.nn.Module):
    def __init__(self, file_path: str):
        super().__init__()
        dataset = nc.Dataset(file_path)
        self.lat = dataset["latc_b"][:]
        self.lon = dataset["lonc_b"][:]

        i = dataset["row"][:] - 1
        j = dataset["col"][:] - 1
        M = dataset["S"][:]

        i = i.data
        j = j.data
        M = M.data

        self.n_lat_out = dataset.dimensions["lat_b"].size if "lat_b" in dataset.dimensions else len(self.lat)
        self.n_lon_out = dataset.dimensions["lon_b"].size if "lon_b" in dataset.dimensions else len(self.lon)
        n_b = dataset.dimensions["n_b"].size
        n_a = dataset.dimensions["n_a"].size

        self.M = torch.sparse_coo_tensor((i, j), M, [n_b, n_a], dtype=torch.float).coalesce()

    def to(self, device):
        self.M = self.M.to(device)
        return self

    def forward(self, x):
        xr = torch.einsum("ijk->jki", x)
        x_flat = xr.reshape(-1, xr.shape[-1])
        x_regrid = torch.sparse.mm(self.M, x_flat)
        out = x_regrid.reshape(self.n_lat_out, self.n_lon_out, -1)
        return torch.einsum("jki->ijk", out)


class Identity(torch.nn.Module):
    def forward(self, x):
        return x


class BilinearRegridder(torch.nn.Module):
    """Regular lat/lon -> regular lat/lon by bilinear interpolation with periodic longitude."""

    def __init__(self, src: grids.LatLonGrid, dest: grids.LatLonGrid):
        super().__init__()
        lat_src = np.asarray(src.lat)
        lon_src = np.asarray(src.lon)
        lat_dst = np.asarray(dest.lat)
        lon_dst = np.asarray(dest.lon)
        self.lat, self.lon = lat_dst, lon_dst

        # normalised sampling positions in [-1, 1] for grid_sample (lat may be descending)
        gy = np.interp(lat_dst, lat_src[::-1], np.linspace(1, -1, len(lat_src))[::-1]) if lat_src[0] > lat_src[-1] \
            else np.interp(lat_dst, lat_src, np.linspace(-1, 1, len(lat_src)))
        lon_period = np.concatenate([lon_src, lon_src[:1] + 360.0])
        gx = np.interp(lon_dst % 360.0, lon_period, np.linspace(-1, 1 + 2.0 / len(lon_src), len(lon_period)))
        yy, xx = np.meshgrid(gy, gx, indexing="ij")
        grid = np.stack([xx, yy], axis=-1).astype(np.float32)[None]
        self.register_buffer("grid", torch.from_numpy(grid), persistent=False)

    def forward(self, x):
        shape = x.shape
        x = x.reshape(-1, 1, shape[-2], shape[-1])
        # pad one column for the periodic wrap
        x = torch.cat([x, x[..., :1]], dim=-1)
        out = torch.nn.functional.grid_sample(x, self.grid.expand(x.shape[0], -1, -1, -1).to(x.dtype),
                                              mode="bilinear", padding_mode="border", align_corners=True)
        return out.reshape(*shape[:-2], *out.shape[-2:])


def _get_tempest_regridder(src: schema.Grid, dest: schema.Grid) -> TempestRegridder:
    # TODO map data needs to be available for S2S scoring
    from earth2mip import config

    # TODO add instructions for how to make the tempest map file
    map_file = config.MAP_FILES[src][dest]
    return TempestRegridder(map_file)


def get_regridder(src: schema.Grid, dest: schema.Grid):
    if src == dest:
        return Identity()
    try:
        return _get_tempest_regridder(src, dest)
    except KeyError:
        pass
    if isinstance(src, grids.LatLonGrid) and isinstance(dest, grids.LatLonGrid):
        return BilinearRegridder(src, dest)
    raise NotImplementedError(f"No regridder from {src} to {dest}")


def regrid_to_cpu_numpy(regridder: torch.nn.Module, x: torch.Tensor, device: Optional[torch.device] = None) -> np.ndarray:
    """Convenience wrapper for scoring scripts: regrid on the model device, return numpy."""
    if device is not None:
        regridder = regridder.to(device)
        x = x.to(device)
    with torch.no_grad():
        return regridder(x).cpu().numpy()
