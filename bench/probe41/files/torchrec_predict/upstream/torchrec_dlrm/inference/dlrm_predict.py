#!/usr/bin/env python3
# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.

"""
Packaging a trained DLRM for the TorchRec inference server.

The predict factory quantizes the embedding tables to int8 (fbgemm int-nbit TBE),
shards them over the local GPUs and scripts the result; the C++ server loads the
package and batches requests on the GPU.
"""

import argparse
import logging
from typing import Dict, List, Optional

import torch
from torch import nn

import fbgemm_gpu.sparse_ops  # noqa: F401, E402  registers torch.ops.fbgemm used by the int-nbit TBE
from torchrec.datasets.criteo import DEFAULT_CAT_NAMES, DEFAULT_INT_NAMES
from torchrec.datasets.utils import Batch
from torchrec.distributed.planner import EmbeddingShardingPlanner, Topology
from torchrec.distributed.quant_embeddingbag import QuantEmbeddingBagCollectionSharder
from torchrec.distributed.test_utils.infer_utils import shard_qebc
from torchrec.inference.modules import (
    BatchingMetadata,
    PredictFactory,
    PredictModule,
    quantize_inference_model,
    shard_quant_model,
)
from torchrec.models.dlrm import DLRM
from torchrec.modules.embedding_configs import EmbeddingBagConfig
from torchrec.modules.embedding_modules import EmbeddingBagCollection
from torchrec.sparse.jagged_tensor import KeyedJaggedTensor

logger: logging.Logger = logging.getLogger(__name__)


def create_training_batch(args) -> Batch:
    return Batch(
        dense_features=torch.rand(args.batch_size, len(DEFAULT_INT_NAMES)),
        sparse_features=KeyedJaggedTensor.from_lengths_sync(
            keys=DEFAULT_CAT_NAMES,
            values=torch.randint(0, args.num_embeddings, (args.batch_size * len(DEFAULT_CAT_NAMES),)),
            lengths=torch.ones(args.batch_size * len(DEFAULT_CAT_NAMES), dtype=torch.int32),
        ),
        labels=torch.randint(2, (args.batch_size,)),
    )


class DLRMModuleConfig:
    def __init__(
        self,
        dense_arch_layer_sizes: List[int],
        dense_in_features: int,
        embedding_dim: int,
        id_list_features_keys: List[str],
        num_embeddings_per_feature: List[int],
        num_embeddings: int,
        over_arch_layer_sizes: List[int],
        model_path: Optional[str] = None,
    ) -> None:
        self.dense_arch_layer_sizes = dense_arch_layer_sizes
        self.dense_in_features = dense_in_features
        self.embedding_dim = embedding_dim
        self.id_list_features_keys = id_list_features_keys
        self.num_embeddings_per_feature = num_embeddings_per_feature
        self.num_embeddings = num_embeddings
        self.over_arch_layer_sizes = over_arch_layer_sizes
        self.model_path = model_path


class DLRMPredictModule(PredictModule):
    """
    nn.Module to wrap DLRM model to use for inference.
    """

    def __init__(
        self,
        embedding_bag_collection: EmbeddingBagCollection,
        dense_in_features: int,
        dense_arch_layer_sizes: List[int],
        over_arch_layer_sizes: List[int],
        id_list_features_keys: List[str],
        dense_device: Optional[torch.device] = None,
    ) -> None:
        module = DLRM(
            embedding_bag_collection=embedding_bag_collection,
            dense_in_features=dense_in_features,
            dense_arch_layer_sizes=dense_arch_layer_sizes,
            over_arch_layer_sizes=over_arch_layer_sizes,
            dense_device=dense_device,
        )
        super().__init__(module, dense_device)
        self.id_list_features_keys: List[str] = id_list_features_keys

    def predict_forward(self, batch: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        try:
            logits = self.predict_module(
                batch["float_features"],
                KeyedJaggedTensor(
                    keys=self.id_list_features_keys,
                    lengths=batch["id_list_features.lengths"],
                    values=batch["id_list_features.values"],
                ),
            )
            predictions = logits.sigmoid()
        except Exception as e:
            logger.info(e)
            raise e
        # Flip predictions tensor to be 1D. TODO: Determine why prediction shape
        # can be 2D at times (likely due to input format?)
        predictions = predictions.reshape([predictions.size()[0]])
        return {"default": predictions.to(torch.device("cpu"), non_blocking=True).float()}


class DLRMPredictFactory(PredictFactory):
    def __init__(self, model_config: DLRMModuleConfig, world_size: int = 1) -> None:
        self.model_config = model_config
        self.world_size = world_size

    def create_predict_module(self, world_size: int, device: str = "cuda") -> torch.nn.Module:
        logging.basicConfig(level=logging.INFO)
        device = torch.device(device)
        default_cuda_rank = 0
        torch.cuda.set_device(default_cuda_rank)

        eb_configs = [
            EmbeddingBagConfig(
                name=f"t_{feature_name}",
                embedding_dim=self.model_config.embedding_dim,
                num_embeddings=self.model_config.num_embeddings_per_feature[feature_idx]
                if self.model_config.num_embeddings is None
                else self.model_config.num_embeddings,
                feature_names=[feature_name],
            )
            for feature_idx, feature_name in enumerate(self.model_config.id_list_features_keys)
        ]
        ebc = EmbeddingBagCollection(tables=eb_configs, device=torch.device("meta"))

        module = DLRMPredictModule(
            embedding_bag_collection=ebc,
            dense_in_features=self.model_config.dense_in_features,
            dense_arch_layer_sizes=self.model_config.dense_arch_layer_sizes,
            over_arch_layer_sizes=self.model_config.over_arch_layer_sizes,
            id_list_features_keys=self.model_config.id_list_features_keys,
            dense_device=device,
        )

        if self.model_config.model_path is not None:
            state = torch.load(self.model_config.model_path, map_location=device)
            module.predict_module.load_state_dict(state, strict=False)

        quant_model = quantize_inference_model(module)
        sharded_model, _ = shard_quant_model(
            quant_model,
            world_size=world_size,
            compute_device="cuda",
            sharding_device="cuda",
        )

        batch = {}
        batch["float_features"] = torch.rand(
            (2, self.model_config.dense_in_features), device=device
        )
        batch["id_list_features.lengths"] = torch.ones(
            (2 * len(self.model_config.id_list_features_keys),),
            dtype=torch.int32,
            device=device,
        )
        batch["id_list_features.values"] = torch.zeros(
            (2 * len(self.model_config.id_list_features_keys),),
            dtype=torch.int32,
            device=device,
        )
        sharded_model(batch)  # materialise lazy modules before tracing

        tracer = torch.fx.Tracer(autowrap_functions=[])  # noqa: F841
        return torch.jit.script(sharded_model)

    def batching_metadata(self) -> Dict[str, BatchingMetadata]:
        return {
            "float_features": BatchingMetadata(type="dense", device="cuda", pinned=[]),
            "id_list_features": BatchingMetadata(type="sparse", device="cuda", pinned=[]),
        }

    def result_metadata(self) -> str:
        return "dict_of_tensor"

    def run_weights_independent_tranformations(self, predict_module: torch.nn.Module) -> torch.nn.Module:
        return predict_module

    def run_weights_dependent_transformations(self, predict_module: torch.nn.Module) -> torch.nn.Module:
        return predict_module


def main() -> None:
    parser = argparse.ArgumentParser(description="package a TorchRec DLRM for the inference server")
    parser.add_argument("--model_path", type=str, default=None)
    parser.add_argument("--output_path", type=str, default="dlrm_predict.pt")
    parser.add_argument("--embedding_dim", type=int, default=128)
    parser.add_argument("--num_embeddings", type=int, default=100_000)
    parser.add_argument("--world_size", type=int, default=torch.cuda.device_count())
    args = parser.parse_args()

    config = DLRMModuleConfig(
        dense_arch_layer_sizes=[512, 256, args.embedding_dim],
        dense_in_features=len(DEFAULT_INT_NAMES),
        embedding_dim=args.embedding_dim,
        id_list_features_keys=DEFAULT_CAT_NAMES,
        num_embeddings_per_feature=[args.num_embeddings] * len(DEFAULT_CAT_NAMES),
        num_embeddings=args.num_embeddings,
        over_arch_layer_sizes=[512, 512, 256, 1],
        model_path=args.model_path,
    )
    factory = DLRMPredictFactory(config, world_size=args.world_size)
    scripted = factory.create_predict_module(world_size=args.world_size)
    torch.jit.save(scripted, args.output_path)
    logger.info(f"saved scripted predict module to {args.output_path}")


if __name__ == "__main__":
    main()
