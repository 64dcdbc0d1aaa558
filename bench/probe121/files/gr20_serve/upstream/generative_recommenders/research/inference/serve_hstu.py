# Copyright (c) Meta Platforms, Inc. and affiliates.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

# pyre-unsafe

"""Offline batch inference for a trained HSTU retrieval model.

Loads a checkpoint written by ``trainer/train.py``, encodes every user in the
eval split and writes top-K item ids per user. User encoding runs under
bf16 autocast; the item-side index is built once and kept resident on the GPU.

    python3 -m generative_recommenders.research.inference.serve_hstu \
        --ckpt ckpts/ml-20m-l200/HSTU-..._ep100 \
        --gin configs/ml-20m/hstu-sampled-softmax-n128-large-final.gin \
        --out /tmp/topk.parquet --k 200 --batch-size 1024 --cuda-graphs
"""

import argparse
import logging
import os
import time
from typing import Dict, List, Optional, Tuple

import gin
import pandas as pd
import torch

from generative_recommenders.common import HammerKernel
from generative_recommenders.research.data.dataloader import create_data_loader
from generative_recommenders.research.data.reco_dataset import get_reco_dataset
from generative_recommenders.research.indexing.candidate_index import (
    CandidateIndex,
    MIPSBruteForceTopK,
)
from generative_recommenders.research.modeling.sequential.features import (
    movielens_seq_features_from_row,
)
from generative_recommenders.research.trainer.model_factory import build_model

logger = logging.getLogger(__name__)


def _parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--ckpt", required=True)
    p.add_argument("--gin", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--k", type=int, default=200)
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--gpu", type=int, default=0)
    p.add_argument("--cuda-graphs", action="store_true")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--mem-fraction", type=float, default=0.9)
    return p.parse_args()


def load_model(ckpt_path: str, device: torch.device) -> torch.nn.Module:
    model = build_model()
    state = torch.load(ckpt_path, map_location="cuda:0")
    sd = state["model_state_dict"]
    # checkpoints are saved from the DDP wrapper
    sd = {k[len("module."):] if k.startswith("module.") else k: v for k, v in sd.items()}
    missing, unexpected = model.load_state_dict(sd, strict=False)
    if missing or unexpected:
        logger.warning(f"missing={missing} unexpected={unexpected}")
    model.set_hammer_kernel(HammerKernel.TRITON)
    return model.to(device).eval()


class GraphedEncoder:
    """Captures model.encode for one static batch shape into a CUDA graph.

    Only full batches are replayed through the graph; the last partial batch
    falls back to eager execution.
    """

    def __init__(
        self,
        model: torch.nn.Module,
        batch_size: int,
        max_len: int,
        device: torch.device,
    ) -> None:
        self._model = model
        self._bs = batch_size
        self._static_lengths = torch.full((batch_size,), max_len, dtype=torch.int64, device=device)
        self._static_ids = torch.ones((batch_size, max_len), dtype=torch.int64, device=device)
        self._static_ts = torch.zeros((batch_size, max_len), dtype=torch.int64, device=device)
        self._graph = torch.cuda.CUDAGraph()

        # warm up on a side stream (required before capture)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                self._run()
        torch.cuda.current_stream().wait_stream(s)

        with torch.cuda.graph(self._graph):
            self._static_out = self._run()

    def _run(self) -> torch.Tensor:
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            emb = self._model.get_item_embeddings(self._static_ids)
            out, _ = self._model.encode(
                past_lengths=self._static_lengths,
                past_ids=self._static_ids,
                past_embeddings=emb,
                past_payloads={"timestamps": self._static_ts},
            )
        return out

    def __call__(
        self, lengths: torch.Tensor, ids: torch.Tensor, ts: torch.Tensor
    ) -> torch.Tensor:
        self._static_lengths.copy_(lengths)
        self._static_ids.copy_(ids)
        self._static_ts.copy_(ts)
        self._graph.replay()
        return self._static_out.clone()


@torch.inference_mode()
def build_index(model: torch.nn.Module, num_items: int, device: torch.device) -> CandidateIndex:
    ids = torch.arange(1, num_items + 1, device=device).unsqueeze(0)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        emb = model.get_item_embeddings(ids)
    return CandidateIndex(ids=ids, embeddings=emb.float())


@torch.inference_mode()
def main() -> None:
    args = _parse_args()
    logging.basicConfig(level=logging.INFO)
    gin.parse_config_file(args.gin)

    if not torch.cuda.is_available():
        raise SystemExit("serve_hstu requires a CUDA device")
    device = torch.device(f"cuda:{args.gpu}")
    torch.cuda.set_device(device)
    torch.cuda.set_per_process_memory_fraction(args.mem_fraction, device)

    dataset = get_reco_dataset(dataset_name="ml-20m", max_sequence_length=200, chronological=True)
    _, loader = create_data_loader(
        dataset.eval_dataset,
        batch_size=args.batch_size,
        world_size=1,
        rank=0,
        shuffle=False,
    )

    model = load_model(args.ckpt, device)
    if args.compile:
        model = torch.compile(model, mode="max-autotune", dynamic=False)

    index = build_index(model, dataset.max_item_id, device)
    top_k = MIPSBruteForceTopK(index.embeddings, index.ids)

    graphed: Optional[GraphedEncoder] = None
    if args.cuda_graphs:
        graphed = GraphedEncoder(model, args.batch_size, dataset.max_sequence_length, device)

    results: List[Dict[str, object]] = []
    t0 = time.time()
    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    start_evt.record()
    n_users = 0
    for row in loader:
        seq, _, _ = movielens_seq_features_from_row(row, device=device, max_output_length=11)
        B = seq.past_ids.size(0)
        if graphed is not None and B == args.batch_size:
            user_emb = graphed(seq.past_lengths, seq.past_ids, seq.past_payloads["timestamps"])
        else:
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=True):
                emb = model.get_item_embeddings(seq.past_ids)
                user_emb, _ = model.encode(
                    past_lengths=seq.past_lengths,
                    past_ids=seq.past_ids,
                    past_embeddings=emb,
                    past_payloads=seq.past_payloads,
                )
        top_ids, top_scores, _ = index.get_top_k_outputs(
            query_embeddings=user_emb.float(),
            k=args.k,
            top_k_module=top_k,
            invalid_ids=seq.past_ids,
        )
        user_ids = row["user_id"].tolist()
        for uid, ids_, scores_ in zip(user_ids, top_ids.cpu().tolist(), top_scores.cpu().tolist()):
            results.append({"user_id": uid, "item_ids": ids_, "scores": scores_})
        n_users += B
    end_evt.record()
    torch.cuda.synchronize()
    gpu_ms = start_evt.elapsed_time(end_evt)
    logger.info(
        f"encoded {n_users} users in {time.time() - t0:.1f}s wall / {gpu_ms / 1e3:.1f}s GPU "
        f"({n_users / (gpu_ms / 1e3):.0f} users/s), peak mem "
        f"{torch.cuda.max_memory_allocated(device) / 2**30:.1f} GiB"
    )
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    pd.DataFrame(results).to_parquet(args.out)
    logger.info(f"wrote {len(results)} rows to {args.out}")


if __name__ == "__main__":
    main()
