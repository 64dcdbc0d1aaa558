# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.

"""
Encode a text corpus with a frozen encoder and write L2-normalised embeddings into a
memmap (N x D float32) plus the matching document paths, in the order given by the
dataloader's indices. Every shard of the dataset is handled by one SLURM array task.
"""

import argparse
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset, Subset
from tqdm import tqdm
from transformers import AutoModel, AutoTokenizer


class JsonlTextDataset(Dataset):
    def __init__(self, paths_file: str, tokenizer, max_length: int = 512):
        with open(paths_file) as f:
            self.records = [line.rstrip("\n").split("\t", 1) for line in f]
        self.tokenizer = tokenizer
        self.max_length = max_length

    def __len__(self):
        return len(self.records)

    def __getitem__(self, idx):
        path, text = self.records[idx]
        enc = self.tokenizer(text, truncation=True, max_length=self.max_length, padding="max_length", return_tensors="pt")
        return {k: v.squeeze(0) for k, v in enc.items()}, path, idx


def mean_pool(last_hidden_state, attention_mask):
    mask = attention_mask.unsqueeze(-1).type_as(last_hidden_state)
    return (last_hidden_state * mask).sum(1) / mask.sum(1).clamp(min=1e-9)


class Encoder(torch.nn.Module):
    def __init__(self, name: str):
        super().__init__()
        self.backbone = AutoModel.from_pretrained(name)

    def forward(self, input_ids, attention_mask):
        out = self.backbone(input_ids=input_ids, attention_mask=attention_mask)
        return mean_pool(out.last_hidden_state, attention_mask)


def get_embeddings(model, dataloader, emd_memmap, paths_memmap):
    """
    function to compute and store representations for the data from pretrained model. It is preferable to parallelize this function on mulitiple devices (GPUs). Each device will process part of the data.
    model: pretrained model
    dataloader: should return   1) data_batch: batch of data examples
                                2) paths_batch: path to location where the example is stored (unique identifier). For example, this could be "n04235860_14959.JPEG" for imagenet.
                                3) batch_indices: global index for each example (between 0 and of size <dataset_size>-1).
    emd_memmap: numpy memmap to store embeddings of size <dataset_size>.
    paths_memmap: numpy memmap to store paths of size <dataset_size>.
    """

    # -- device
    device = "cuda" if torch.cuda.is_available() else "cpu"

    # -- model
    model = model.to(device)
    model = model.eval()

    # -- Get and store 1)encodings 2)path to each example
    print("Get encoding...")
    with torch.no_grad():
        for data_batch, paths_batch, batch_indices in tqdm(dataloader):
            data_batch = {k: v.cuda(non_blocking=True) for k, v in data_batch.items()}
            with torch.cuda.amp.autocast(dtype=torch.float16):
                encodings = model(**data_batch)
            emd_memmap[batch_indices] = F.normalize(encodings.float(), dim=1).cpu().numpy()
            paths_memmap[batch_indices] = paths_batch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--paths-file", required=True, help="tsv: path<TAB>text per line")
    parser.add_argument("--model", default="intfloat/e5-base-v2")
    parser.add_argument("--emb-memory-loc", required=True)
    parser.add_argument("--paths-memory-loc", required=True)
    parser.add_argument("--dataset-size", type=int, required=True)
    parser.add_argument("--emb-size", type=int, default=768)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--num-workers", type=int, default=16)
    parser.add_argument("--num-shards", type=int, default=int(os.environ.get("SLURM_ARRAY_TASK_COUNT", 1)))
    parser.add_argument("--shard", type=int, default=int(os.environ.get("SLURM_ARRAY_TASK_ID", 0)))
    args = parser.parse_args()

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    dataset = JsonlTextDataset(args.paths_file, tokenizer)
    per_shard = math.ceil(len(dataset) / args.num_shards)
    shard_ids = range(args.shard * per_shard, min(len(dataset), (args.shard + 1) * per_shard))
    dataloader = DataLoader(
        Subset(dataset, shard_ids),
        batch_size=args.batch_size,
        num_workers=args.num_workers,
        pin_memory=True,
        shuffle=False,
    )

    model = Encoder(args.model)
    if torch.cuda.device_count() > 1:
        model = torch.nn.DataParallel(model)

    emd_memmap = np.memmap(args.emb_memory_loc, dtype="float32", mode="r+", shape=(args.dataset_size, args.emb_size))
    paths_memmap = np.memmap(args.paths_memory_loc, dtype="S256", mode="r+", shape=(args.dataset_size,))
    get_embeddings(model, dataloader, emd_memmap, paths_memmap)
    emd_memmap.flush()
    paths_memmap.flush()


if __name__ == "__main__":
    main()
