#!/usr/bin/env python3
# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.

# pyre-strict

import logging
import time
from typing import List, Optional

import click
import faiss  # @manual=//faiss/python:pyfaiss_gpu
import faiss.contrib.torch_utils  # @manual=//faiss/contrib:faiss_contrib_gpu
import torch
from torchrec import inference as trec_infer
from torchrec.datasets.movielens import DEFAULT_RATINGS_COLUMN_NAMES
from torchrec.distributed import DistributedModelParallel
from torchrec.distributed.embedding_types import EmbeddingComputeKernel
from torchrec.distributed.planner import EmbeddingShardingPlanner, Topology
from torchrec.distributed.planner.types import ParameterConstraints
from torchrec.distributed.types import ShardingEnv, ShardingType
from torchrec.modules.embedding_configs import EmbeddingBagConfig
from torchrec.modules.embedding_modules import EmbeddingBagCollection
from torchrec.sparse.jagged_tensor import KeyedJaggedTensor

# OSS import
try:
    # pyre-ignore[21]
    # @manual=//torchrec/github/examples/retrieval/modules:two_tower
    from modules.two_tower import (  # noqa F811
        convert_TwoTower_to_TwoTowerRetrieval,
        TwoTowerRetrieval,
    )
except ImportError:
    pass

# internal import
try:
    from .modules.two_tower import (  # noqa F811
        convert_TwoTower_to_TwoTowerRetrieval,
        TwoTowerRetrieval,
    )
except ImportError:
    pass

logger: logging.Logger = logging.getLogger(__name__)


@click.command()
@click.option("--num_embeddings", type=int, default=1024 * 1024)
@click.option("--embedding_dim", type=int, default=64)
@click.option("--layer_sizes", type=str, default="128,64")
@click.option("--num_centroids", type=int, default=100)
@click.option("--k", type=int, default=100)
@click.option("--num_subquantizers", type=int, default=8)
@click.option("--bits_per_code", type=int, default=8)
@click.option("--num_probe", type=int, default=8)
@click.option("--model_device_idx", type=int, default=0)
@click.option("--faiss_device_idx", type=int, default=0)
@click.option("--batch_size", type=int, default=32)
@click.option("--num_query_batches", type=int, default=10)
@click.option("--load_dir", type=str, default=None)
@click.option("--world_size", type=int, default=2)
def main(
    num_embeddings: int,
    embedding_dim: int,
    layer_sizes: str,
    num_centroids: int,
    k: int,
    num_subquantizers: int,
    bits_per_code: int,
    num_probe: int,
    model_device_idx: int,
    faiss_device_idx: int,
    batch_size: int,
    num_query_batches: int,
    load_dir: Optional[str],
    world_size: int,
) -> None:
    infer(
        num_embeddings=num_embeddings,
        embedding_dim=embedding_dim,
        layer_sizes=[int(s) for s in layer_sizes.split(",")],
        num_centroids=num_centroids,
        k=k,
        num_subquantizers=num_subquantizers,
        bits_per_code=bits_per_code,
        num_probe=num_probe,
        model_device_idx=model_device_idx,
        faiss_device_idx=faiss_device_idx,
        batch_size=batch_size,
        num_query_batches=num_query_batches,
        load_dir=load_dir,
        world_size=world_size,
    )


def infer(
    num_embeddings: int,
    embedding_dim: int,
    layer_sizes: Optional[List[int]] = None,
    num_centroids: int = 100,
    k: int = 100,
    num_subquantizers: int = 8,
    bits_per_code: int = 8,
    num_probe: int = 8,
    model_device_idx: int = 0,
    faiss_device_idx: int = 0,
    batch_size: int = 32,
    num_query_batches: int = 10,
    load_dir: Optional[str] = None,
    world_size: int = 2,
) -> None:
    """
    Loads the serialized model and FAISS index from `two_tower_train.py`.
    A `TwoTowerRetrieval` model is instantiated, which wraps the `KNNIndex`, the query (user) tower and the candidate item (movie) tower inside an `nn.Module`.
    The retreival model is quantized using [`torchrec.quant`](https://pytorch.org/torchrec/torchrec.quant.html).
    The serialized `TwoTower` model weights trained before are converted into `TwoTowerRetrieval` which are loaded into the retrieval model.
    The seralized trained FAISS index is also loaded.
    The entire retreival model can be queried with a batch of candidate (user) ids and returns logits which can be used in ranking.

    Args:
        num_embeddings (int): The number of embeddings the embedding table
        embedding_dim (int): embedding dimension of both embedding tables
        layer_sizes (str): Comma separated list representing layer sizes of the MLP. Last size is the final embedding size
        num_centroids (int): The number of centroids (Voronoi cells)
        k (int): The number of nearest neighbors to retrieve
        num_subquantizers (int): The number of subquanitizers in Product Quantization (PQ) compression of subvectors
        bits_per_code (int): The number of bits for each subvector in Product Quantization (PQ)
        num_probe (int): The number of centroids (Voronoi cells) to probe. Must be <= num_centroids. Sweeping powers of 2 for nprobe and picking one of those based on recall statistics (e.g., 1, 2, 4, 8, ..,) is typically done.
        model_device_idx (int): device index to place model on
        faiss_device_idx (int): device index to place FAISS index on
        batch_size (int): batch_size of the random batch used to query Retrieval model at the end of the script
        load_dir (Optional[str]): Directory to load model and faiss index from. If None, uses random data
    """
    if layer_sizes is None:
        layer_sizes = [128, 64]
    assert torch.cuda.is_available(), "This example requires a GPU"

    device: torch.device = torch.device(f"cuda:{model_device_idx}")
    torch.cuda.set_device(device)

    two_tower_column_names = DEFAULT_RATINGS_COLUMN_NAMES[:2]
    ebcs = []
    for feature_name in two_tower_column_names:
        config = EmbeddingBagConfig(
            name=f"t_{feature_name}",
            embedding_dim=embedding_dim,
            num_embeddings=num_embeddings,
            feature_names=[feature_name],
            data_type=trec_infer.modules.DataType.FP16,
        )
        ebcs.append(
            EmbeddingBagCollection(
                tables=[config],
                device=torch.device("meta"),
            )
        )

    retrieval_sd = None
    if load_dir is not None:
        load_dir = load_dir.rstrip("/")
        # pyre-ignore[16]
        cpu_index = faiss.read_index(f"{load_dir}/faiss.index")
        # pyre-ignore[16]
        res = faiss.StandardGpuResources()
        # pyre-ignore[16]
        index = faiss.index_cpu_to_gpu(res, faiss_device_idx, cpu_index)
        index.nprobe = num_probe
        two_tower_sd = torch.load(f"{load_dir}/model.pt", map_location=device)
        retrieval_sd = convert_TwoTower_to_TwoTowerRetrieval(
            two_tower_sd,
            [f"t_{two_tower_column_names[0]}"],
            [f"t_{two_tower_column_names[1]}"],
        )
    else:
        embeddings = torch.rand((num_embeddings, embedding_dim)).to(
            torch.device(f"cuda:{faiss_device_idx}")
        )
        # pyre-ignore[16]
        gpu_resources = faiss.StandardGpuResources()
        # pyre-ignore[16]
        quantizer = faiss.GpuIndexFlatL2(gpu_resources, embedding_dim)
        # pyre-ignore[16]
        index = faiss.GpuIndexIVFPQ(
            gpu_resources,
            quantizer,
            embedding_dim,
            num_centroids,
            num_subquantizers,
            bits_per_code,
        )
        index.train(embeddings)
        index.add(embeddings)
        index.nprobe = num_probe

    # Create a retrieval model from the trained index and two tower
    retrieval_model = TwoTowerRetrieval(
        index, ebcs[0], ebcs[1], layer_sizes, k, device, dtype=torch.float16
    )

    constraints = {}
    for feature_name in two_tower_column_names:
        constraints[f"t_{feature_name}"] = ParameterConstraints(
            sharding_types=[ShardingType.TABLE_WISE.value],
            compute_kernels=[EmbeddingComputeKernel.QUANT.value],
        )

    quant_model = trec_infer.modules.quantize_embeddings(
        retrieval_model, dtype=torch.qint8, inplace=True
    )

    dmp = DistributedModelParallel(
        module=quant_model,
        device=device,
        env=ShardingEnv.from_local(world_size=world_size, rank=model_device_idx),
        init_data_parallel=False,
    )
    if retrieval_sd is not None:
        dmp.load_state_dict(retrieval_sd)

    # query with random batches of user ids
    latencies_ms = []
    for _ in range(num_query_batches):
        batch = KeyedJaggedTensor(
            keys=[two_tower_column_names[0]],
            values=torch.randint(0, num_embeddings, (batch_size,), device=device),
            lengths=torch.ones((batch_size,), dtype=torch.int32, device=device),
        )
        start = time.perf_counter()
        with torch.no_grad():
            logits = dmp(batch)
        torch.cuda.synchronize()
        latencies_ms.append((time.perf_counter() - start) * 1000.0)
        logger.info(f"logits: {tuple(logits.shape)}")

    latencies_ms.sort()
    logger.info(
        "retrieval latency p50=%.2fms p99=%.2fms (GPU %d, faiss GPU %d)",
        latencies_ms[len(latencies_ms) // 2],
        latencies_ms[min(len(latencies_ms) - 1, int(len(latencies_ms) * 0.99))],
        model_device_idx,
        faiss_device_idx,
    )


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    main()
