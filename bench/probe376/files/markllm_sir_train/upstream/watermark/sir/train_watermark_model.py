# ==========================================================
# train_watermark_model.py
# Description: Train the transform model used by SIR.
#   The transform model maps sentence embeddings (1024-d, from
#   compositional-bert) to a 300-d watermark space while
#   preserving pairwise similarity and keeping outputs unbiased.
# ==========================================================

import os
import json
import random
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset, DataLoader
from tqdm import tqdm

from transform_model import TransformModel


class EmbeddingPairDataset(Dataset):
    """Pre-computed sentence embeddings, one per line in a jsonl file."""

    def __init__(self, path):
        self.embeddings = []
        with open(path, 'r') as f:
            for line in f:
                item = json.loads(line)
                self.embeddings.append(torch.tensor(item['embedding'], dtype=torch.float32))

    def __len__(self):
        return len(self.embeddings)

    def __getitem__(self, idx):
        return self.embeddings[idx]


def cosine_similarity_matrix(x):
    x = F.normalize(x, dim=-1)
    return x @ x.t()


def row_col_mean_penalty(output):
    """Keep every output dimension centred on zero across the batch and every row centred too."""
    row_mean = output.mean(dim=1)
    col_mean = output.mean(dim=0)
    return (row_mean ** 2).mean() + (col_mean ** 2).mean()


def train(args):
    dataset = EmbeddingPairDataset(args.input_path)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, num_workers=4, drop_last=True)

    model = TransformModel(input_dim=args.input_dim, output_dim=args.output_dim).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=args.lr_step, gamma=0.5)

    best_loss = float('inf')
    for epoch in range(args.epochs):
        model.train()
        running = 0.0
        pbar = tqdm(loader, desc=f"epoch {epoch}")
        for batch in pbar:
            batch = batch.cuda(non_blocking=True)
            output = model(batch)

            # similarity of the inputs should be reproduced (scaled) in the watermark space
            input_sim = cosine_similarity_matrix(batch)
            input_sim = input_sim - input_sim.mean()
            output_sim = cosine_similarity_matrix(output)
            loss_sim = F.mse_loss(torch.tanh(args.sim_scale * input_sim), output_sim)

            loss_mean = row_col_mean_penalty(output)
            loss_range = F.relu(output.abs() - 1.0).mean()

            loss = loss_sim + args.lambda_mean * loss_mean + args.lambda_range * loss_range

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            running += loss.item()
            pbar.set_postfix(loss=f"{loss.item():.4f}", sim=f"{loss_sim.item():.4f}")

        scheduler.step()
        epoch_loss = running / max(1, len(loader))
        print(f"epoch {epoch}: mean loss {epoch_loss:.5f}")

        if epoch_loss < best_loss:
            best_loss = epoch_loss
            os.makedirs(os.path.dirname(args.output_model) or '.', exist_ok=True)
            torch.save(model.state_dict(), args.output_model)
            print(f"saved new best model to {args.output_model}")

    return best_loss


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description='Train the SIR transform model')
    parser.add_argument('--input_path', type=str, default='data/sts/train_embeddings.jsonl')
    parser.add_argument('--output_model', type=str, default='model/transform_model_cbert.pth')
    parser.add_argument('--input_dim', type=int, default=1024)
    parser.add_argument('--output_dim', type=int, default=300)
    parser.add_argument('--epochs', type=int, default=2000)
    parser.add_argument('--batch_size', type=int, default=64)
    parser.add_argument('--lr', type=float, default=1e-4)
    parser.add_argument('--lr_step', type=int, default=500)
    parser.add_argument('--sim_scale', type=float, default=10.0)
    parser.add_argument('--lambda_mean', type=float, default=0.1)
    parser.add_argument('--lambda_range', type=float, default=0.1)
    parser.add_argument('--seed', type=int, default=42)
    args = parser.parse_args()

    set_seed(args.seed)
    train(args)
