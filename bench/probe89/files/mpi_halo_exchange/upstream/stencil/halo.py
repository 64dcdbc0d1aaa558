"""Halo exchange for a 2-D domain-decomposed finite-difference solver on GPUs.

Each MPI rank owns an (ny + 2h) x (nx + 2h) tile of every prognostic field, kept as a torch
tensor on its GPU. Halos are exchanged with mpi4py. With a CUDA-aware MPI (Open MPI built
--with-cuda, Cray MPICH with MPICH_GPU_SUPPORT_ENABLED=1, MVAPICH2-GDR) the device buffers
are handed to MPI directly through __cuda_array_interface__; otherwise they are staged
through pinned host buffers.
"""
import os
import time
from dataclasses import dataclass
from typing import Dict, List, Tuple

import numpy as np
import torch
from mpi4py import MPI

# mpi4py must not call MPI_Init_thread with THREAD_MULTIPLE on some Cray systems
CUDA_AWARE_MPI = os.environ.get("STENCIL_CUDA_AWARE_MPI", "1") == "1"

TAG_NORTH, TAG_SOUTH, TAG_EAST, TAG_WEST = 11, 12, 13, 14


@dataclass
class Decomposition:
    comm: MPI.Cartcomm
    coords: Tuple[int, int]
    dims: Tuple[int, int]
    north: int
    south: int
    east: int
    west: int


def setup_decomposition(periodic=(False, True)) -> Decomposition:
    world = MPI.COMM_WORLD
    dims = MPI.Compute_dims(world.Get_size(), [0, 0])
    cart = world.Create_cart(dims, periods=list(periodic), reorder=True)
    coords = tuple(cart.Get_coords(cart.Get_rank()))
    south, north = cart.Shift(0, 1)
    west, east = cart.Shift(1, 1)
    return Decomposition(cart, coords, tuple(dims), north, south, east, west)


def select_device(comm: MPI.Comm) -> torch.device:
    """One GPU per rank on the node, chosen by the node-local rank."""
    local = comm.Split_type(MPI.COMM_TYPE_SHARED)
    local_rank = local.Get_rank()
    local.Free()
    ngpu = torch.cuda.device_count()
    torch.cuda.set_device(local_rank % ngpu)
    return torch.device("cuda", local_rank % ngpu)


class HaloExchanger:
    """Exchanges halos of width `h` for a list of 2-D fields living on one device."""

    def __init__(self, decomp: Decomposition, shape: Tuple[int, int], halo: int, device: torch.device,
                 dtype=torch.float64, nfields: int = 1):
        self.d = decomp
        self.h = halo
        self.ny, self.nx = shape
        self.device = device
        self.dtype = dtype
        self.nfields = nfields
        self.use_device_buffers = CUDA_AWARE_MPI and device.type == "cuda"

        ns_shape = (nfields, halo, self.nx)
        ew_shape = (nfields, self.ny + 2 * halo, halo)
        self.bufs: Dict[str, torch.Tensor] = {}
        for name, shp in (("send_n", ns_shape), ("send_s", ns_shape), ("recv_n", ns_shape),
                          ("recv_s", ns_shape), ("send_e", ew_shape), ("send_w", ew_shape),
                          ("recv_e", ew_shape), ("recv_w", ew_shape)):
            if self.use_device_buffers:
                self.bufs[name] = torch.empty(shp, dtype=dtype, device=device)
            else:
                # page-locked host staging buffers
                self.bufs[name] = torch.empty(shp, dtype=dtype).pin_memory()

    def _mpi_buf(self, t: torch.Tensor):
        if self.use_device_buffers:
            return t  # exposes __cuda_array_interface__, understood by CUDA-aware MPI
        return t.numpy()

    def exchange(self, fields: List[torch.Tensor]):
        h, d, b = self.h, self.d, self.bufs
        stacked = torch.stack(fields)

        # ---- north/south (rows, interior columns only)
        b_send_n = stacked[:, -2 * h:-h, h:-h]
        b_send_s = stacked[:, h:2 * h, h:-h]
        b["send_n"].copy_(b_send_n, non_blocking=True)
        b["send_s"].copy_(b_send_s, non_blocking=True)
        # the copies above are asynchronous on the current stream
        torch.cuda.current_stream().synchronize()
        reqs = [
            d.comm.Irecv(self._mpi_buf(b["recv_n"]), source=d.north, tag=TAG_SOUTH),
            d.comm.Irecv(self._mpi_buf(b["recv_s"]), source=d.south, tag=TAG_NORTH),
            d.comm.Isend(self._mpi_buf(b["send_n"]), dest=d.north, tag=TAG_NORTH),
            d.comm.Isend(self._mpi_buf(b["send_s"]), dest=d.south, tag=TAG_SOUTH),
        ]
        MPI.Request.Waitall(reqs)
        if d.north != MPI.PROC_NULL:
            stacked[:, -h:, h:-h].copy_(b["recv_n"], non_blocking=True)
        if d.south != MPI.PROC_NULL:
            stacked[:, :h, h:-h].copy_(b["recv_s"], non_blocking=True)

        # ---- east/west (full columns incl. the fresh north/south halos -> corners are right)
        b["send_e"].copy_(stacked[:, :, -2 * h:-h], non_blocking=True)
        b["send_w"].copy_(stacked[:, :, h:2 * h], non_blocking=True)
        torch.cuda.synchronize()
        reqs = [
            d.comm.Irecv(self._mpi_buf(b["recv_e"]), source=d.east, tag=TAG_WEST),
            d.comm.Irecv(self._mpi_buf(b["recv_w"]), source=d.west, tag=TAG_EAST),
            d.comm.Isend(self._mpi_buf(b["send_e"]), dest=d.east, tag=TAG_EAST),
            d.comm.Isend(self._mpi_buf(b["send_w"]), dest=d.west, tag=TAG_WEST),
        ]
        MPI.Request.Waitall(reqs)
        if d.east != MPI.PROC_NULL:
            stacked[:, :, -h:].copy_(b["recv_e"], non_blocking=True)
        if d.west != MPI.PROC_NULL:
            stacked[:, :, :h].copy_(b["recv_w"], non_blocking=True)

        for i, f in enumerate(fields):
            f.copy_(stacked[i])
        return fields


def laplacian(u: torch.Tensor, dx: float, h: int = 1) -> torch.Tensor:
    """Second-order 5-point Laplacian of the interior; u includes halos of width >= 1."""
    c = u[h:-h, h:-h]
    return (u[h + 1:u.shape[0] - h + 1, h:-h] + u[h - 1:u.shape[0] - h - 1, h:-h]
            + u[h:-h, h + 1:u.shape[1] - h + 1] + u[h:-h, h - 1:u.shape[1] - h - 1] - 4.0 * c) / dx ** 2


def run_diffusion(nx_global=4096, ny_global=4096, steps=1000, kappa=1.0, report_every=100):
    decomp = setup_decomposition()
    rank = decomp.comm.Get_rank()
    device = select_device(decomp.comm)

    nx = nx_global // decomp.dims[1]
    ny = ny_global // decomp.dims[0]
    dx = 1.0 / nx_global
    dt = 0.2 * dx ** 2 / kappa
    h = 1

    u = torch.zeros(ny + 2 * h, nx + 2 * h, dtype=torch.float64, device=device)
    # a Gaussian bump in the middle of the global domain
    y0, x0 = decomp.coords[0] * ny, decomp.coords[1] * nx
    yy, xx = torch.meshgrid(torch.arange(ny, device=device) + y0, torch.arange(nx, device=device) + x0,
                            indexing="ij")
    u[h:-h, h:-h] = torch.exp(-((xx - nx_global / 2) ** 2 + (yy - ny_global / 2) ** 2) / (0.01 * nx_global ** 2))

    halo = HaloExchanger(decomp, (ny, nx), h, device, dtype=torch.float64)
    decomp.comm.Barrier()
    t0 = MPI.Wtime()
    for step in range(1, steps + 1):
        halo.exchange([u])
        u[h:-h, h:-h] += kappa * dt * laplacian(u, dx, h)
        if step % report_every == 0:
            # global heat content, reduced on the host
            local = np.array([u[h:-h, h:-h].sum().item()])
            total = np.zeros(1)
            decomp.comm.Allreduce(local, total, op=MPI.SUM)
            if rank == 0:
                print(f"step {step:6d}  heat {total[0]:.10e}  {MPI.Wtime() - t0:.2f}s", flush=True)
    return u


if __name__ == "__main__":
    run_diffusion()
