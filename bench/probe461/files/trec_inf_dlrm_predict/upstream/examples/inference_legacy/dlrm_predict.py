#!/usr/bin/env python3
# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.

# pyre-strict

import logging
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import torch
from torch import nn
from torchrec.datasets.criteo import DEFAULT_CAT_NAMES, DEFAULT_INT_NAMES
from torchrec.datasets.utils import Batch
from torchrec.distributed.global_settings import set_propogate_device
from torchrec.fx.tracer import Tracer
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
    return Batch.from_json(args.batch_json)


# OSS Only


@dataclass
class DLRMModelConfig:
    """
    Model Config for specifying DLRM model parameters.
    """

    dense_arch_layer_sizes: List[int]
    dense_in_features: int
    embedding_dim: int
    id_list_features_keys: List[str]
    num_embeddings_per_feature: List[int]
    num_embeddings: int
    over_arch_layer_sizes: List[int]
    sample_input: Batch = field(default_factory=lambda: None)


class DLRMPredictModule(PredictModule):
    """
    nn.Module to wrap DLRM model to use for inference.

    Args:
        embedding_bag_collection (EmbeddingBagCollection): collection of embedding bags
            used to define SparseArch.
        dense_in_features (int): the dimensionality of the dense input features.
        dense_arch_layer_sizes (List[int]): the layer sizes for the DenseArch.
        over_arch_layer_sizes (List[int]): the layer sizes for the OverArch. NOTE: The
            output dimension of the InteractionArch should not be manually specified
            here.
        id_list_features_keys (List[str]): the names of the sparse features. Used to
            construct a batch for inference.
        dense_device: (Optional[torch.device]).
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

    def predict_forward(
        self, batch: Dict[str, torch.Tensor]
    ) -> Dict[str, torch.Tensor]:
        """
        Args:
            batch (Dict[str, torch.Tensor]): currently expects input dense features
                to be mapped to the key "float_features" and input sparse features
                to be mapped to the key "id_list_features".

        Returns:
            Dict[str, torch.Tensor]: output of inference.
        """

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
        predictions = predictions.reshape(
            [
                predictions.size()[0],
            ]
        )

        return {
            "default": predictions.to(torch.device("cpu"), non_blocking=True).float()
        }


class DLRMPredictFactory(PredictFactory):
    """
    Factory Class for generating TorchScript DLRM Model for C++ inference.

    Args:
        model_config (DLRMModelConfig): model config

    """

    def __init__(self, model_config: DLRMModelConfig) -> None:
        self.model_config = model_config

    def create_predict_module(self, world_size: int, device: str = "cuda") -> torch.nn.Module:
        logging.basicConfig(level=logging.INFO)
        device = torch.device(device)
        set_propogate_device(True)

        eb_configs = [
            EmbeddingBagConfig(
                name=f"t_{feature_name}",
                embedding_dim=self.model_config.embedding_dim,
                num_embeddings=(
                    self.model_config.num_embeddings_per_feature[feature_idx]
                    if self.model_config.num_embeddings is None
                    else self.model_config.num_embeddings
                ),
                feature_names=[feature_name],
            )
            for feature_idx, feature_name in enumerate(
                self.model_config.id_list_features_keys
            )
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

        quant_model = quantize_inference_model(module)
        sharded_model, _ = shard_quant_model(
            quant_model, compute_device=device.type, sharding_device=device.type
        )

        batch = {}
        batch["float_features"] = self.model_config.sample_input.dense_features.to(
            device
        )
        batch["id_list_features.lengths"] = (
            self.model_config.sample_input.sparse_features.lengths().to(device)
        )
        batch["id_list_features.values"] = (
            self.model_config.sample_input.sparse_features.values().to(device)
        )

        sharded_model(batch)

        tracer = Tracer(leaf_modules=["IntNBitTableBatchedEmbeddingBagsCodegen"])

        graph = tracer.trace(sharded_model)
        gm = torch.fx.GraphModule(sharded_model, graph)

        gm(batch)
        scripted_gm = torch.jit.script(gm)
        scripted_gm(batch)
        return scripted_gm

    def batching_metadata(self) -> Dict[str, BatchingMetadata]:
        return {
            "float_features": BatchingMetadata(type="dense", device="cuda", pinned=[]),
            "id_list_features": BatchingMetadata(
                type="sparse", device="cuda", pinned=["lengths"]
            ),
        }

    def result_metadata(self) -> str:
        return "dict_of_tensor"

    def run_weights_independent_tranformations(
        self, predict_module: torch.nn.Module
    ) -> torch.nn.Module:
        return predict_module

    def run_weights_dependent_transformations(
        self, predict_module: torch.nn.Module
    ) -> torch.nn.Module:
        """
        Run transformations that depends on weights of the predict module. e.g. lowering to a backend.
        """
        return predict_module


def default_model_config(batch_size: int = 512) -> DLRMModelConfig:
    """
    Criteo-1TB-shaped config used by the packager and the local smoke test.
    """
    num_embeddings_per_feature = [
        45833188, 36746, 17245, 7413, 20243, 3, 7114, 1441, 62, 29275261,
        1572176, 345138, 10, 2209, 11267, 128, 4, 974, 14, 48937457,
        11316796, 40094537, 452104, 12606, 104, 35,
    ]
    return DLRMModelConfig(
        dense_arch_layer_sizes=[512, 256, 64],
        dense_in_features=len(DEFAULT_INT_NAMES),
        embedding_dim=64,
        id_list_features_keys=DEFAULT_CAT_NAMES,
        num_embeddings_per_feature=num_embeddings_per_feature,
        num_embeddings=100_000,
        over_arch_layer_sizes=[512, 512, 256, 1],
        sample_input=None,
    )


def smoke_test(batch_size: int = 16) -> None:
    """
    Build the predict module on the local accelerator and run a random batch.
    Handy when bringing up a new inference host before packaging.
    """
    if not torch.cuda.is_available():
        logger.warning("No GPU found, skipping DLRM predict smoke test")
        return
    torch.cuda.set_device(0)

    config = default_model_config(batch_size)
    config.sample_input = Batch(
        dense_features=torch.rand(batch_size, config.dense_in_features),
        sparse_features=KeyedJaggedTensor.from_lengths_sync(
            keys=config.id_list_features_keys,
            values=torch.randint(
                0, 1000, (batch_size * len(config.id_list_features_keys),)
            ),
            lengths=torch.ones(
                batch_size * len(config.id_list_features_keys), dtype=torch.int32
            ),
        ),
        labels=torch.randint(0, 2, (batch_size,)),
    )
    factory = DLRMPredictFactory(config)
    module = factory.create_predict_module(world_size=1)
    logger.info("smoke test produced scripted module %s", type(module).__name__)
