"""
pytoch native backend for dlrm
"""
# pylint: disable=unused-argument,missing-docstring
import os
import threading
import time
from typing import Dict, List

import numpy as np
import torch  # currently supports pytorch1.0
import torch.distributed as dist
import torch.multiprocessing as mp
import torchrec

import backend
from torchrec import EmbeddingBagCollection
from torchrec.datasets.criteo import DEFAULT_CAT_NAMES, DEFAULT_INT_NAMES
from torchrec.datasets.utils import Batch
from torchrec.distributed import TrainPipelineSparseDist
from torchrec.distributed.comm import get_local_size
from torchrec.distributed.model_parallel import (
    DistributedModelParallel,
    get_default_sharders,
)
from torchrec.distributed.planner import EmbeddingShardingPlanner, Topology
from torchrec.distributed.planner.storage_reservations import (
    HeuristicalStorageReservation,
)
from torchrec.models.dlrm import DLRM, DLRM_DCN, DLRMTrain
from torchrec.modules.embedding_configs import EmbeddingBagConfig
from torchrec.sparse.jagged_tensor import KeyedJaggedTensor
from torchsnapshot import Snapshot


class BackendPytorchNative(backend.Backend):
    def __init__(
        self,
        num_embeddings_per_feature,
        embedding_dim=128,
        dcn_num_layers=3,
        dcn_low_rank_dim=512,
        dense_arch_layer_sizes=[512, 256, 128],
        over_arch_layer_sizes=[1024, 1024, 512, 256, 1],
        use_gpu=False,
        debug=False,
    ):
        super(BackendPytorchNative, self).__init__()
        self.i = 0
        self.sess = None
        self.model = None

        self.embedding_dim = embedding_dim
        self.num_embeddings_per_feature = num_embeddings_per_feature
        self.dcn_num_layers = dcn_num_layers
        self.dcn_low_rank_dim = dcn_low_rank_dim
        self.dense_arch_layer_sizes = dense_arch_layer_sizes
        self.over_arch_layer_sizes = over_arch_layer_sizes
        self.debug = debug

        self.use_gpu = use_gpu and torch.cuda.is_available()
        if self.use_gpu:
            print("Using GPU...")
            self.world_size = torch.cuda.device_count()
            self.dist_backend = "nccl"
            self.device = "cuda"
        else:
            print("Using CPU...")
            self.world_size = int(os.environ.get("WORLD_SIZE", 1))
            self.dist_backend = "gloo"
            self.device = "cpu"

        os.environ["MASTER_ADDR"] = os.environ.get("MASTER_ADDR", "localhost")
        os.environ["MASTER_PORT"] = os.environ.get("MASTER_PORT", "29500")

        # one model replica per local device, each fed from its own queue
        self.input_queues = []
        self.output_queues = []
        self.workers = []

    def version(self):
        return torch.__version__

    def name(self):
        return "pytorch-native-dlrm"

    def load(self, model_path, inputs=None, outputs=None):
        # debug prints
        # print(model_path, inputs, outputs)
        print(f"Loading model from {model_path}")

        ctx = mp.get_context("spawn")
        ready = ctx.Barrier(self.world_size + 1)
        for rank in range(self.world_size):
            in_q = ctx.Queue()
            out_q = ctx.Queue()
            p = ctx.Process(
                target=self._worker,
                args=(rank, model_path, in_q, out_q, ready),
                daemon=True,
            )
            p.start()
            self.input_queues.append(in_q)
            self.output_queues.append(out_q)
            self.workers.append(p)
        ready.wait()
        print(f"{self.world_size} model workers ready")
        return self

    def _build_model(self, device):
        eb_configs = [
            EmbeddingBagConfig(
                name=f"t_{feature_name}",
                embedding_dim=self.embedding_dim,
                num_embeddings=self.num_embeddings_per_feature[feature_idx],
                feature_names=[feature_name],
            )
            for feature_idx, feature_name in enumerate(DEFAULT_CAT_NAMES)
        ]
        dlrm_model = DLRM_DCN(
            embedding_bag_collection=EmbeddingBagCollection(
                tables=eb_configs, device=torch.device("meta")
            ),
            dense_in_features=len(DEFAULT_INT_NAMES),
            dense_arch_layer_sizes=self.dense_arch_layer_sizes,
            over_arch_layer_sizes=self.over_arch_layer_sizes,
            dcn_num_layers=self.dcn_num_layers,
            dcn_low_rank_dim=self.dcn_low_rank_dim,
            dense_device=device,
        )
        return DLRMTrain(dlrm_model)

    def _worker(self, rank, model_path, in_q, out_q, ready):
        os.environ["RANK"] = str(rank)
        os.environ["LOCAL_RANK"] = str(rank)
        os.environ["WORLD_SIZE"] = str(self.world_size)
        if self.use_gpu:
            torch.cuda.set_device(rank)
            device = torch.device(f"cuda:{rank}")
        else:
            device = torch.device("cpu")
        dist.init_process_group(
            backend=self.dist_backend, rank=rank, world_size=self.world_size
        )

        train_model = self._build_model(device)

        planner = EmbeddingShardingPlanner(
            topology=Topology(
                local_world_size=get_local_size(),
                world_size=dist.get_world_size(),
                compute_device=device.type,
            ),
            batch_size=1,
            storage_reservation=HeuristicalStorageReservation(percentage=0.05),
        )
        plan = planner.collective_plan(
            train_model, get_default_sharders(), dist.GroupMember.WORLD
        )
        model = DistributedModelParallel(
            module=train_model,
            device=device,
            plan=plan,
        )
        # Load model
        t0 = time.time()
        snapshot = Snapshot(path=model_path)
        snapshot.restore(app_state={"model": model})
        if rank == 0:
            print(f"Snapshot restored in {time.time() - t0:.1f}s")
        model.eval()
        ready.wait()

        with torch.no_grad():
            while True:
                item = in_q.get()
                if item is None:
                    break
                idx, batch = item
                batch = batch.to(device, non_blocking=True)
                _, (_, out, _) = model(batch)
                out = torch.sigmoid(out)
                out = torch.reshape(out, (-1,))
                if self.use_gpu:
                    torch.cuda.synchronize(device)
                out_q.put((idx, out.cpu()))

        dist.destroy_process_group()

    def predict(self, samples, ids=None):
        outputs = [None] * len(samples)
        for i, batch in enumerate(samples):
            self.input_queues[self.i % self.world_size].put((i, batch))
            self.i += 1
        received = 0
        while received < len(samples):
            for q in self.output_queues:
                while not q.empty():
                    idx, out = q.get()
                    outputs[idx] = out
                    received += 1
        return outputs

    def unload(self):
        for q in self.input_queues:
            q.put(None)
        for p in self.workers:
            p.join()
        if self.use_gpu:
            torch.cuda.empty_cache()
