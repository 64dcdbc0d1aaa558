# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.

"""
Sharding-plan helpers for large embedding tables.

The defaults are tuned for DGX A100/H100 nodes (8 GPUs on NVLink/NVSwitch, 8x200G IB
between hosts). Tables above ``uvm_threshold_rows`` are placed in UVM with an HBM
cache in front of them; everything else is sharded table-wise / row-wise in HBM.
"""

import logging
import math
from typing import Dict, List, Optional

import torch
import torch.distributed as dist
from fbgemm_gpu.split_embedding_configs import SparseType
from fbgemm_gpu.split_table_batched_embeddings_ops_common import CacheAlgorithm
from torchrec.distributed.embedding_types import EmbeddingComputeKernel
from torchrec.distributed.embeddingbag import EmbeddingBagCollectionSharder
from torchrec.distributed.planner import EmbeddingShardingPlanner, Topology
from torchrec.distributed.planner.storage_reservations import (
    HeuristicalStorageReservation,
)
from torchrec.distributed.planner.types import ParameterConstraints
from torchrec.distributed.types import (
    CacheParams,
    ModuleSharder,
    ShardingPlan,
    ShardingType,
)
from torchrec.modules.embedding_configs import EmbeddingBagConfig

logger: logging.Logger = logging.getLogger(__name__)

GB: int = 1024 * 1024 * 1024

# NVLink (intra-host) and InfiniBand (inter-host) bandwidths, bytes / ms
DGX_INTRA_HOST_BW: float = 600 * GB / 1000
DGX_INTER_HOST_BW: float = 25 * GB / 1000


def build_topology(
    world_size: int,
    local_world_size: int,
    ddr_cap_per_rank: int = 128 * GB,
    hbm_reserve_fraction: float = 0.1,
) -> Topology:
    hbm_cap = torch.cuda.get_device_properties(0).total_memory
    hbm_cap = int(hbm_cap * (1.0 - hbm_reserve_fraction))
    logger.info(
        f"topology: world_size={world_size} local_world_size={local_world_size} "
        f"hbm_cap={hbm_cap / GB:.1f}GiB ddr_cap={ddr_cap_per_rank / GB:.1f}GiB"
    )
    return Topology(
        world_size=world_size,
        local_world_size=local_world_size,
        compute_device="cuda",
        hbm_cap=hbm_cap,
        ddr_cap=ddr_cap_per_rank,
        intra_host_bw=DGX_INTRA_HOST_BW,
        inter_host_bw=DGX_INTER_HOST_BW,
    )


def build_constraints(
    tables: List[EmbeddingBagConfig],
    uvm_threshold_rows: int = 50_000_000,
    row_wise_threshold_rows: int = 2_000_000,
    cache_load_factor: float = 0.2,
) -> Dict[str, ParameterConstraints]:
    constraints: Dict[str, ParameterConstraints] = {}
    for t in tables:
        if t.num_embeddings >= uvm_threshold_rows:
            # huge tables: rows live in host memory mapped into the device address
            # space (cudaMallocManaged); a device-side LRU cache absorbs the hot rows
            constraints[t.name] = ParameterConstraints(
                sharding_types=[ShardingType.ROW_WISE.value],
                compute_kernels=[EmbeddingComputeKernel.FUSED_UVM_CACHING.value],
                cache_params=CacheParams(
                    algorithm=CacheAlgorithm.LRU,
                    load_factor=cache_load_factor,
                    reserved_memory=0.0,
                    precision=SparseType.FP16,
                ),
            )
        elif t.num_embeddings >= row_wise_threshold_rows:
            constraints[t.name] = ParameterConstraints(
                sharding_types=[
                    ShardingType.ROW_WISE.value,
                    ShardingType.TABLE_ROW_WISE.value,
                ],
                compute_kernels=[EmbeddingComputeKernel.FUSED.value],
            )
        else:
            constraints[t.name] = ParameterConstraints(
                sharding_types=[
                    ShardingType.TABLE_WISE.value,
                    ShardingType.COLUMN_WISE.value,
                    ShardingType.DATA_PARALLEL.value,
                ],
                compute_kernels=[
                    EmbeddingComputeKernel.FUSED.value,
                    EmbeddingComputeKernel.DENSE.value,
                ],
            )
    return constraints


def build_sharders(
    fp16_cache: bool = True, prefetch_pipeline: bool = False
) -> List[ModuleSharder[torch.nn.Module]]:
    fused_params = {
        "cache_precision": SparseType.FP16 if fp16_cache else SparseType.FP32,
        "output_dtype": SparseType.FP32,
        "prefetch_pipeline": prefetch_pipeline,
        "stochastic_rounding": True,
    }
    return [EmbeddingBagCollectionSharder(fused_params=fused_params)]


def plan_sharding(
    model: torch.nn.Module,
    tables: List[EmbeddingBagConfig],
    batch_size: int,
    local_world_size: int,
    pg: Optional[dist.ProcessGroup] = None,
) -> ShardingPlan:
    pg = pg or dist.GroupMember.WORLD
    world_size = dist.get_world_size(pg)
    topology = build_topology(world_size, local_world_size)
    planner = EmbeddingShardingPlanner(
        topology=topology,
        batch_size=batch_size,
        constraints=build_constraints(tables),
        storage_reservation=HeuristicalStorageReservation(percentage=0.15),
        debug=True,
    )
    plan = planner.collective_plan(model, build_sharders(), pg)
    if dist.get_rank(pg) == 0:
        logger.info(f"sharding plan computed for {torch.cuda.get_device_name()} x {world_size}")
        summarize_plan(plan, tables)
    return plan


def summarize_plan(plan: ShardingPlan, tables: List[EmbeddingBagConfig]) -> None:
    by_name = {t.name: t for t in tables}
    total_bytes = 0
    for module_path, module_plan in plan.plan.items():
        for table_name, param_sharding in module_plan.items():  # type: ignore[union-attr]
            t = by_name.get(table_name)
            if t is None:
                continue
            nbytes = t.num_embeddings * t.embedding_dim * 4
            total_bytes += nbytes
            ranks = param_sharding.ranks or []
            logger.info(
                f"{module_path}.{table_name}: {param_sharding.sharding_type} / "
                f"{param_sharding.compute_kernel} on ranks {ranks[:8]}"
                f"{'...' if len(ranks) > 8 else ''} ({nbytes / GB:.2f} GiB)"
            )
    logger.info(f"total embedding storage: {total_bytes / GB:.1f} GiB")


def estimate_num_ranks_for_tables(
    tables: List[EmbeddingBagConfig], hbm_per_rank_gb: float = 72.0
) -> int:
    total_gb = sum(t.num_embeddings * t.embedding_dim * 4 for t in tables) / GB
    # optimizer state (rowwise adagrad) adds one float per row
    total_gb += sum(t.num_embeddings * 4 for t in tables) / GB
    return max(1, math.ceil(total_gb / (hbm_per_rank_gb * 0.8)))
