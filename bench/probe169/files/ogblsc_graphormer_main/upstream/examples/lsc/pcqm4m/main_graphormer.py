"""
Stand-alone (non-fairseq) Graphormer baseline for OGB-LSC PCQM4M, in the style
of ogb/examples/lsc/pcqm4m/main_gnn.py. Mixed precision + optional multi-GPU
DataParallel, preprocessing with the Cython Floyd-Warshall from Graphormer.

    python main_graphormer.py --gpu 0,1 --batch_size 512 --amp --log_dir runs/gph
"""
import argparse
import os
import random

import numpy as np

# must be set before torch initialises CUDA
parser = argparse.ArgumentParser(description='Graphormer baseline for PCQM4M')
parser.add_argument('--gpu', type=str, default='0', help='comma separated GPU ids, e.g. 0,1,2,3')
parser.add_argument('--num_layers', type=int, default=12)
parser.add_argument('--hidden_dim', type=int, default=768)
parser.add_argument('--num_heads', type=int, default=32)
parser.add_argument('--dropout', type=float, default=0.0)
parser.add_argument('--attention_dropout', type=float, default=0.1)
parser.add_argument('--batch_size', type=int, default=256)
parser.add_argument('--epochs', type=int, default=300)
parser.add_argument('--lr', type=float, default=2e-4)
parser.add_argument('--warmup', type=int, default=60000)
parser.add_argument('--num_workers', type=int, default=8)
parser.add_argument('--multi_hop_max_dist', type=int, default=5)
parser.add_argument('--amp', action='store_true', help='use torch.cuda.amp (fp16) mixed precision')
parser.add_argument('--log_dir', type=str, default='')
parser.add_argument('--checkpoint_dir', type=str, default='')
parser.add_argument('--save_test_dir', type=str, default='')
parser.add_argument('--seed', type=int, default=42)
args = parser.parse_args()
os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu

import torch
import torch.nn as nn
import torch.optim as optim
from torch.optim.lr_scheduler import LambdaLR
from torch.utils.data import DataLoader
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

from ogb.lsc import PCQM4MDataset, PCQM4MEvaluator
from ogb.utils import smiles2graph

import pyximport
pyximport.install(setup_args={'include_dirs': np.get_include()})
import algos  # noqa: E402  (Cython: floyd_warshall, gen_edge_input)

from graphormer_model import Graphormer  # noqa: E402
from collator import collator  # noqa: E402

reg_criterion = torch.nn.L1Loss()


def convert_to_single_emb(x, offset=512):
    feature_num = x.size(1) if len(x.size()) > 1 else 1
    feature_offset = 1 + torch.arange(0, feature_num * offset, offset, dtype=torch.long)
    x = x + feature_offset
    return x


def preprocess_item(item):
    """Spatial encodings for one molecule; runs in DataLoader workers on CPU."""
    edge_attr, edge_index, x = item['edge_feat'], item['edge_index'], item['node_feat']
    x = torch.from_numpy(x).long()
    edge_attr = torch.from_numpy(edge_attr).long()
    edge_index = torch.from_numpy(edge_index).long()
    N = x.size(0)
    x = convert_to_single_emb(x)

    # node adj matrix [N, N] bool
    adj = torch.zeros([N, N], dtype=torch.bool)
    adj[edge_index[0, :], edge_index[1, :]] = True

    # edge feature here
    if len(edge_attr.size()) == 1:
        edge_attr = edge_attr[:, None]
    attn_edge_type = torch.zeros([N, N, edge_attr.size(-1)], dtype=torch.long)
    attn_edge_type[edge_index[0, :], edge_index[1, :]] = convert_to_single_emb(edge_attr) + 1

    shortest_path_result, path = algos.floyd_warshall(adj.numpy())
    max_dist = np.amax(shortest_path_result)
    edge_input = algos.gen_edge_input(max_dist, path, attn_edge_type.numpy())
    spatial_pos = torch.from_numpy((shortest_path_result)).long()
    attn_bias = torch.zeros([N + 1, N + 1], dtype=torch.float)  # with graph token

    item = dict(
        x=x,
        attn_bias=attn_bias,
        attn_edge_type=attn_edge_type,
        spatial_pos=spatial_pos,
        in_degree=adj.long().sum(dim=1).view(-1),
        out_degree=adj.long().sum(dim=0).view(-1),
        edge_input=torch.from_numpy(edge_input).long(),
    )
    return item


class PCQM4MGraphormerDataset(torch.utils.data.Dataset):
    def __init__(self, base, idx):
        self.base = base
        self.idx = idx

    def __len__(self):
        return len(self.idx)

    def __getitem__(self, i):
        smiles, y = self.base[int(self.idx[i])]
        item = preprocess_item(smiles2graph(smiles))
        item['y'] = torch.tensor([y], dtype=torch.float)
        item['idx'] = int(self.idx[i])
        return item


def _to_device(batch, device):
    return {k: (v.to(device, non_blocking=True) if torch.is_tensor(v) else v) for k, v in batch.items()}


def train(model, device, loader, optimizer, scheduler, scaler):
    model.train()
    loss_accum = 0
    for step, batch in enumerate(tqdm(loader, desc="Iteration")):
        batch = _to_device(batch, device)
        optimizer.zero_grad()
        with torch.cuda.amp.autocast(enabled=args.amp):
            pred = model(batch).view(-1,)
            loss = reg_criterion(pred, batch['y'].view(-1,))
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        loss_accum += loss.detach().cpu().item()
    return loss_accum / (step + 1)


@torch.no_grad()
def eval(model, device, loader, evaluator):
    model.eval()
    y_true = []
    y_pred = []
    for step, batch in enumerate(tqdm(loader, desc="Iteration")):
        batch = _to_device(batch, device)
        with torch.cuda.amp.autocast(enabled=args.amp, dtype=torch.float16):
            pred = model(batch).view(-1,)
        y_true.append(batch['y'].view(pred.shape).detach().cpu())
        y_pred.append(pred.detach().float().cpu())
    y_true = torch.cat(y_true, dim=0)
    y_pred = torch.cat(y_pred, dim=0)
    input_dict = {"y_true": y_true, "y_pred": y_pred}
    return evaluator.eval(input_dict)["mae"]


def main():
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.cuda.manual_seed_all(args.seed)

    device = torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu")
    n_gpus = torch.cuda.device_count()
    print(f"Using {n_gpus} GPU(s): {args.gpu}")

    ### automatic dataloading and splitting
    base = PCQM4MDataset(root='dataset/', only_smiles=True)
    split_idx = base.get_idx_split()
    evaluator = PCQM4MEvaluator()

    train_set = PCQM4MGraphormerDataset(base, split_idx["train"])
    valid_set = PCQM4MGraphormerDataset(base, split_idx["valid"])
    collate = lambda items: collator(items, max_node=128, multi_hop_max_dist=args.multi_hop_max_dist, spatial_pos_max=20)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, num_workers=args.num_workers,
                              collate_fn=collate, pin_memory=True, persistent_workers=True)
    valid_loader = DataLoader(valid_set, batch_size=args.batch_size, shuffle=False, num_workers=args.num_workers,
                              collate_fn=collate, pin_memory=True, pin_memory_device="cuda")

    model = Graphormer(
        n_layers=args.num_layers,
        num_heads=args.num_heads,
        hidden_dim=args.hidden_dim,
        dropout_rate=args.dropout,
        attention_dropout_rate=args.attention_dropout,
        multi_hop_max_dist=args.multi_hop_max_dist,
    ).to(device)
    if n_gpus > 1:
        model = nn.DataParallel(model)

    num_params = sum(p.numel() for p in model.parameters())
    print(f'#Params: {num_params}')

    optimizer = optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    total_steps = args.epochs * len(train_loader)
    scheduler = LambdaLR(optimizer, lambda s: min((s + 1) / args.warmup, max(0.0, (total_steps - s) / max(1, total_steps - args.warmup))))
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    writer = SummaryWriter(log_dir=args.log_dir) if args.log_dir != '' else None
    best_valid_mae = 1000

    for epoch in range(1, args.epochs + 1):
        print("=====Epoch {}".format(epoch))
        print('Training...')
        train_mae = train(model, device, train_loader, optimizer, scheduler, scaler)

        print('Evaluating...')
        valid_mae = eval(model, device, valid_loader, evaluator)

        print({'Train': train_mae, 'Validation': valid_mae})

        if writer is not None:
            writer.add_scalar('valid/mae', valid_mae, epoch)
            writer.add_scalar('train/mae', train_mae, epoch)
            writer.add_scalar('gpu/max_mem_gb', torch.cuda.max_memory_allocated() / 2 ** 30, epoch)

        if valid_mae < best_valid_mae:
            best_valid_mae = valid_mae
            if args.checkpoint_dir != '':
                print('Saving checkpoint...')
                os.makedirs(args.checkpoint_dir, exist_ok=True)
                state = model.module.state_dict() if isinstance(model, nn.DataParallel) else model.state_dict()
                checkpoint = {'epoch': epoch, 'model_state_dict': state,
                              'optimizer_state_dict': optimizer.state_dict(),
                              'scheduler_state_dict': scheduler.state_dict(),
                              'best_val_mae': best_valid_mae, 'num_params': num_params}
                torch.save(checkpoint, os.path.join(args.checkpoint_dir, 'checkpoint.pt'))

        print(f'Best validation MAE so far: {best_valid_mae}')

    if writer is not None:
        writer.close()


if __name__ == "__main__":
    main()
