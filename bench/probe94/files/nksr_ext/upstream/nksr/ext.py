# Copyright (c) 2023, NVIDIA CORPORATION & AFFILIATES.  All rights reserved.
#
# NVIDIA CORPORATION & AFFILIATES and its licensors retain all intellectual property
# and proprietary rights in and to this software, related documentation
# and any modifications thereto.  Any use, reproduction, disclosure or
# distribution of this software and related documentation without an express
# license agreement from NVIDIA CORPORATION & AFFILIATES is strictly prohibited.

"""
Access point for the compiled NKSR kernels.

Prebuilt wheels ship ``nksr._C``. When working from a source checkout we JIT
compile the same sources with ``torch.utils.cpp_extension.load`` the first time
the module is imported (takes a few minutes; cached under TORCH_EXTENSIONS_DIR).
"""

import os
import logging
from pathlib import Path

import torch

logger = logging.getLogger(__name__)

_SRC_ROOT = Path(__file__).parent.parent / "csrc"


def _cuda_arch_flags():
    # Compile only for the card in this machine unless the user asked otherwise.
    if "TORCH_CUDA_ARCH_LIST" in os.environ:
        return []
    major, minor = torch.cuda.get_device_capability()
    os.environ["TORCH_CUDA_ARCH_LIST"] = f"{major}.{minor}"
    return [f"-gencode=arch=compute_{major}{minor},code=sm_{major}{minor}"]


def _collect_sources():
    sources = []
    for sub in ["bind.cpp", "sparse_grid", "meshing", "kernel_eval", "sparse_solve", "pcproc"]:
        p = _SRC_ROOT / sub
        if p.is_file():
            sources.append(str(p))
        else:
            sources += [str(f) for f in sorted(p.glob("*.cpp"))]
            sources += [str(f) for f in sorted(p.glob("*.cu"))]
    return sources


def _jit_load():
    from torch.utils.cpp_extension import load

    logger.warning("nksr._C not found, JIT-compiling NKSR kernels (this can take a while)...")
    return load(
        name="nksr_cuda",
        sources=_collect_sources(),
        extra_include_paths=[str(_SRC_ROOT / "include"), str(_SRC_ROOT / "third_party" / "cub")],
        extra_cflags=["-O3", "-std=c++17"],
        extra_cuda_cflags=["-O3", "-std=c++17", "--use_fast_math", "--expt-relaxed-constexpr",
                           "--extended-lambda"] + _cuda_arch_flags(),
        with_cuda=True,
        verbose=bool(int(os.environ.get("NKSR_JIT_VERBOSE", "0"))),
    )


try:
    from nksr import _C as _CpExt
except ImportError:
    _CpExt = _jit_load()


# ---------------------------------------------------------------------------
# Thin wrappers so that the Python side never touches the raw binding names.
# ---------------------------------------------------------------------------

def build_sparse_grid(xyz: torch.Tensor, voxel_size: float, depth: int):
    """Build the sparse voxel hierarchy (SVH) from points; returns list of grids."""
    assert xyz.is_cuda, "SVH construction only supports CUDA tensors"
    return _CpExt.sparse_grid_build_from_points(xyz.contiguous(), voxel_size, depth)


def kernel_evaluate(grid, query_xyz: torch.Tensor, feat: torch.Tensor, alpha: torch.Tensor):
    """Evaluate the neural kernel field at query points."""
    return _CpExt.kernel_evaluate(grid, query_xyz.contiguous(), feat.contiguous(), alpha.contiguous())


def build_gram_matrix(grid, feat: torch.Tensor, reg: float):
    """Assemble the sparse Gram matrix of the kernel (CSR: indptr, indices, values)."""
    indptr, indices, values = _CpExt.build_kernel_gram(grid, feat.contiguous(), reg)
    return indptr, indices, values


def marching_cubes_sparse(grid, sdf: torch.Tensor, iso: float = 0.0):
    """Dual marching cubes on the primal grid; returns (vertices, triangles)."""
    verts, tris = _CpExt.marching_cubes_sparse(grid, sdf.contiguous(), iso)
    return verts, tris.long()


def estimate_normals(xyz: torch.Tensor, knn: int, radius: float):
    """PCA normals with the CUDA kNN of the point-cloud processing module."""
    return _CpExt.pcproc_estimate_normals(xyz.contiguous(), knn, radius)


def device_summary():
    """Human-readable description of the device the kernels will run on."""
    if not torch.cuda.is_available():
        return "cpu (NKSR kernels unavailable)"
    idx = torch.cuda.current_device()
    props = torch.cuda.get_device_properties(idx)
    return f"{props.name} (sm_{props.major}{props.minor}, {props.total_memory / 2 ** 30:.1f} GiB)"
