#!/usr/bin/env python3
# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.

"""Sharding-plan helpers for the large (multi-hot, 4B-row) DLRM-DCNv2 config.

The default planner sizes HBM from ``torch.cuda.get_device_properties`` and
assumes every rank has the same GPU; for mixed fleets pass ``--hbm_cap_gb``.
"""

import logging
import math
from typing import Dict, List, Optional

import torch
import torch.distributed as dist
from torchrec.distributed.embedding_types import EmbeddingComputeKernel
from torchrec.distributed.planner import EmbeddingShardingPlanner, Topology
from torchrec.distributed.planner.storage_reservations import (
    HeuristicalStorageReservation,
)
from torchrec.distributed.planner.types import ParameterConstraints
from torchrec.distributed.types import ShardingType
from torchrec.modules.embedding_configs import EmbeddingBagConfig

logger: logging.Logger = logging.getLogger(__name__)

# Below this many rows a table is cheaper to replicate than to shard.
SMALL_TABLE_ROWS = 100_000
# Tables above this many rows are row-wise sharded across all ranks.
ROW_WISE_THRESHOLD = 20_000_000
# NVLink intra-node bandwidth (A100 SXM, bidirectional, GB/s) used by the
# planner's perf model; inter-node is IB HDR.
INTRA_HOST_BW_GBPS = 600.0
INTER_HOST_BW_GBPS = 25.0


def hbm_per_rank_bytes(hbm_cap_gb: Optional[float] = None) -> int:
    if hbm_cap_gb is not None:
        return int(hbm_cap_gb * 1024**3)
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return int(props.total_memory)


def build_constraints(
    tables: List[EmbeddingBagConfig],
    world_size: int,
    use_uvm_caching: bool = False,
    uvm_cache_load_factor: float = 0.2,
) -> Dict[str, ParameterConstraints]:
    constraints: Dict[str, ParameterConstraints] = {}
    for t in tables:
        if t.num_embeddings <= SMALL_TABLE_ROWS:
            constraints[t.name] = ParameterConstraints(
                sharding_types=[ShardingType.DATA_PARALLEL.value],
                compute_kernels=[EmbeddingComputeKernel.DENSE.value],
            )
        elif t.num_embeddings >= ROW_WISE_THRESHOLD and world_size > 1:
            kernels = [EmbeddingComputeKernel.FUSED.value]
            if use_uvm_caching:
                # keep hot rows in HBM, the rest in host memory via UVM
                kernels = [EmbeddingComputeKernel.FUSED_UVM_CACHING.value]
            constraints[t.name] = ParameterConstraints(
                sharding_types=[ShardingType.ROW_WISE.value],
                compute_kernels=kernels,
                cache_params=None,
            )
        else:
            constraints[t.name] = ParameterConstraints(
                sharding_types=[
                    ShardingType.TABLE_WISE.value,
                    ShardingType.COLUMN_WISE.value,
                    ShardingType.TABLE_ROW_WISE.value,
                ],
                compute_kernels=[EmbeddingComputeKernel.FUSED.value],
            )
    return constraints


def make_topology(
    world_size: int,
    local_world_size: int,
    hbm_cap_gb: Optional[float] = None,
    ddr_cap_gb: float = 512.0,
) -> Topology:
    return Topology(
        world_size=world_size,
        local_world_size=local_world_size,
        compute_device="cuda",
        hbm_cap=hbm_per_rank_bytes(hbm_cap_gb),
        ddr_cap=int(ddr_cap_gb * 1024**3 / local_world_size),
        intra_host_bw=INTRA_HOST_BW_GBPS * 1024**3 / 1000,
        inter_host_bw=INTER_HOST_BW_GBPS * 1024**3 / 1000,
    )


def make_planner(
    tables: List[EmbeddingBagConfig],
    batch_size: int,
    world_size: int,
    local_world_size: int,
    hbm_cap_gb: Optional[float] = None,
    use_uvm_caching: bool = False,
    reservation: float = 0.05,
) -> EmbeddingShardingPlanner:
    topology = make_topology(world_size, local_world_size, hbm_cap_gb)
    constraints = build_constraints(tables, world_size, use_uvm_caching)
    logger.info(
        f"planner: {len(tables)} tables, world_size={world_size}, "
        f"hbm/rank={topology.devices[0].storage.hbm / 1024**3:.1f} GiB, "
        f"uvm_caching={use_uvm_caching}"
    )
    return EmbeddingShardingPlanner(
        topology=topology,
        batch_size=batch_size,
        constraints=constraints,
        storage_reservation=HeuristicalStorageReservation(percentage=reservation),
    )


def summarize_plan(plan, tables: List[EmbeddingBagConfig]) -> str:  # pyre-ignore[2]
    rows_by_name = {t.name: t.num_embeddings for t in tables}
    lines = []
    for module_path, module_plan in plan.plan.items():
        for table_name, ps in module_plan.items():
            n_shards = len(ps.sharding_spec.shards) if ps.sharding_spec else 1
            lines.append(
                f"{module_path}.{table_name}: {ps.sharding_type} / {ps.compute_kernel} "
                f"rows={rows_by_name.get(table_name, -1):,} shards={n_shards}"
            )
    return "\n".join(lines)


def estimate_embedding_gb(tables: List[EmbeddingBagConfig], bytes_per_elem: int = 4) -> float:
    total = sum(t.num_embeddings * t.embedding_dim for t in tables)
    # row-wise Adagrad keeps one fp32 momentum scalar per row
    momentum = sum(t.num_embeddings for t in tables) * 4
    return (total * bytes_per_elem + momentum) / 1024**3


def check_fits(tables: List[EmbeddingBagConfig], world_size: int, hbm_cap_gb: Optional[float]) -> None:
    need = estimate_embedding_gb(tables)
    have = hbm_per_rank_bytes(hbm_cap_gb) / 1024**3 * world_size
    if need > 0.9 * have:
        msg = (
            f"embedding tables need ~{need:.0f} GiB but the job has {have:.0f} GiB of HBM; "
            "enable --use_uvm_caching or add GPUs"
        )
        if dist.is_initialized() and dist.get_rank() == 0:
            logger.warning(msg)
        elif not dist.is_initialized():
            logger.warning(msg)
    else:
        logger.info(f"embedding footprint {need:.1f} GiB / {have:.0f} GiB HBM ({math.ceil(100 * need / have)}%)")
