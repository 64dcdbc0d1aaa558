"""ogbn-products: GraphSAGE with neighbour sampling and mixed precision.

Leaderboard-style script: sampling is done on the CPU by the (old-style)
``NeighborSampler`` (torch_sparse ``sample_adj``), features are gathered on
the host and copied to the GPU for every mini-batch.
"""
import argparse
import os
import random
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch.nn import BatchNorm1d, Linear
from tqdm import tqdm

from ogb.nodeproppred import Evaluator, PygNodePropPredDataset
from torch_geometric.loader import NeighborSampler
from torch_geometric.nn import SAGEConv

from logger import Logger


def seed_everything(seed: int):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    os.environ['PYTHONHASHSEED'] = str(seed)


class SAGE(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels, num_layers,
                 dropout):
        super().__init__()
        self.num_layers = num_layers
        self.convs = torch.nn.ModuleList()
        self.bns = torch.nn.ModuleList()
        self.convs.append(SAGEConv(in_channels, hidden_channels))
        self.bns.append(BatchNorm1d(hidden_channels))
        for _ in range(num_layers - 2):
            self.convs.append(SAGEConv(hidden_channels, hidden_channels))
            self.bns.append(BatchNorm1d(hidden_channels))
        self.convs.append(SAGEConv(hidden_channels, out_channels))
        self.skip = Linear(in_channels, out_channels)
        self.dropout = dropout

    def reset_parameters(self):
        for conv in self.convs:
            conv.reset_parameters()
        for bn in self.bns:
            bn.reset_parameters()
        self.skip.reset_parameters()

    def forward(self, x, adjs):
        x_skip = self.skip(x[:adjs[-1].size[1]])
        for i, (edge_index, _, size) in enumerate(adjs):
            x_target = x[:size[1]]  # Target nodes are always placed first.
            x = self.convs[i]((x, x_target), edge_index)
            if i != self.num_layers - 1:
                x = self.bns[i](x)
                x = F.relu(x)
                x = F.dropout(x, p=self.dropout, training=self.training)
        return (x + x_skip).log_softmax(dim=-1)

    @torch.no_grad()
    def inference(self, x_all, subgraph_loader, device):
        pbar = tqdm(total=x_all.size(0) * self.num_layers)
        pbar.set_description('Evaluating')
        for i in range(self.num_layers):
            xs = []
            for batch_size, n_id, adj in subgraph_loader:
                edge_index, _, size = adj.to(device)
                x = x_all[n_id].to(device)
                x_target = x[:size[1]]
                x = self.convs[i]((x, x_target), edge_index)
                if i != self.num_layers - 1:
                    x = self.bns[i](x)
                    x = F.relu(x)
                xs.append(x.cpu())
                pbar.update(batch_size)
            x_all = torch.cat(xs, dim=0)
        pbar.close()
        return x_all


def train(model, loader, x, y, optimizer, scaler, device, use_amp):
    model.train()
    total_loss = total_correct = 0
    for batch_size, n_id, adjs in loader:
        adjs = [adj.to(device) for adj in adjs]
        optimizer.zero_grad(set_to_none=True)
        with torch.cuda.amp.autocast(enabled=use_amp):
            out = model(x[n_id].to(device, non_blocking=True), adjs)
            loss = F.nll_loss(out, y[n_id[:batch_size]].to(device))
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()

        total_loss += float(loss) * batch_size
        total_correct += int(out.argmax(dim=-1).eq(
            y[n_id[:batch_size]].to(device)).sum())
    return total_loss / loader.num_samples, total_correct / loader.num_samples


@torch.no_grad()
def test(model, x, y, subgraph_loader, split_idx, evaluator, device):
    model.eval()
    out = model.inference(x, subgraph_loader, device)
    y_pred = out.argmax(dim=-1, keepdim=True)
    results = []
    for split in ['train', 'valid', 'test']:
        results.append(evaluator.eval({
            'y_true': y[split_idx[split]].unsqueeze(-1),
            'y_pred': y_pred[split_idx[split]],
        })['acc'])
    return results


def main():
    parser = argparse.ArgumentParser(description='OGBN-Products (SAGE, AMP)')
    parser.add_argument('--device', type=int, default=0)
    parser.add_argument('--num_layers', type=int, default=3)
    parser.add_argument('--hidden_channels', type=int, default=256)
    parser.add_argument('--dropout', type=float, default=0.5)
    parser.add_argument('--batch_size', type=int, default=1024)
    parser.add_argument('--lr', type=float, default=0.003)
    parser.add_argument('--epochs', type=int, default=20)
    parser.add_argument('--eval_steps', type=int, default=2)
    parser.add_argument('--runs', type=int, default=10)
    parser.add_argument('--num_workers', type=int, default=12)
    parser.add_argument('--no_amp', action='store_true')
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args()
    print(args)

    seed_everything(args.seed)
    torch.backends.cudnn.benchmark = True
    device = torch.device(f'cuda:{args.device}')
    use_amp = not args.no_amp

    dataset = PygNodePropPredDataset('ogbn-products', root='../data')
    split_idx = dataset.get_idx_split()
    evaluator = Evaluator(name='ogbn-products')
    data = dataset[0]

    train_idx = split_idx['train']
    train_loader = NeighborSampler(data.edge_index, node_idx=train_idx,
                                   sizes=[15, 10, 5],
                                   batch_size=args.batch_size, shuffle=True,
                                   num_workers=args.num_workers,
                                   pin_memory=True)
    subgraph_loader = NeighborSampler(data.edge_index, node_idx=None,
                                      sizes=[-1], batch_size=4096,
                                      shuffle=False,
                                      num_workers=args.num_workers)

    model = SAGE(dataset.num_features, args.hidden_channels,
                 dataset.num_classes, args.num_layers, args.dropout)
    model = model.to(device)

    # Features and labels stay in page-locked host memory; every mini-batch
    # is copied asynchronously.
    x = data.x.pin_memory()
    y = data.y.squeeze()

    logger = Logger(args.runs, args)
    for run in range(args.runs):
        model.reset_parameters()
        optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
        scaler = torch.cuda.amp.GradScaler(enabled=use_amp)
        torch.cuda.reset_peak_memory_stats(device)
        best_val_acc = final_test_acc = 0
        for epoch in range(1, 1 + args.epochs):
            t0 = time.time()
            loss, acc = train(model, train_loader, x, y, optimizer, scaler,
                              device, use_amp)
            mem = torch.cuda.max_memory_allocated(device) / 1024**3
            print(f'Run: {run + 1:02d}, Epoch: {epoch:02d}, '
                  f'Loss: {loss:.4f}, Approx. Train: {acc:.4f}, '
                  f'Time: {time.time() - t0:.1f}s, Mem: {mem:.2f} GB')

            if epoch > 5 and epoch % args.eval_steps == 0:
                result = test(model, x, y, subgraph_loader, split_idx,
                              evaluator, device)
                logger.add_result(run, result)
                train_acc, valid_acc, test_acc = result
                if valid_acc > best_val_acc:
                    best_val_acc, final_test_acc = valid_acc, test_acc
                print(f'Train: {100 * train_acc:.2f}%, '
                      f'Valid: {100 * valid_acc:.2f}%, '
                      f'Test: {100 * test_acc:.2f}%')
                torch.cuda.empty_cache()

        logger.print_statistics(run)
    logger.print_statistics()


if __name__ == '__main__':
    main()
