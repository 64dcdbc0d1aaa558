"""DIMES: meta-training of the KNN-graph heatmap network for large TSP instances.

Outer loop: Adam/AdamW over the GNN parameters (theta).
Inner loop: a few steps of gradient descent on the per-instance heatmap parameters (phi),
            REINFORCE with the sampled tour length as reward, batched over instances.
"""
import argparse
import os
import random
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch.cuda.amp import autocast, GradScaler
from tqdm import tqdm

from net import Net
from utils.graph_sparsify import knn_graph
from inc_tsp import tsp_sample, tsp_greedy, tour_length


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--gpu', type=str, default='0', help='GPU id(s), e.g. "0" or "0,1"')
    parser.add_argument('--seed', type=int, default=1234)
    parser.add_argument('--n_nodes', type=int, default=500)
    parser.add_argument('--knn_k', type=int, default=50)
    parser.add_argument('--net_units', type=int, default=32)
    parser.add_argument('--net_act', type=str, default='silu')
    parser.add_argument('--emb_depth', type=int, default=12)
    parser.add_argument('--par_depth', type=int, default=3)
    parser.add_argument('--outer_opt', type=str, default='AdamW')
    parser.add_argument('--outer_opt_lr', type=float, default=1e-3)
    parser.add_argument('--outer_opt_wd', type=float, default=1e-5)
    parser.add_argument('--inner_opt', type=str, default='AdamW')
    parser.add_argument('--inner_opt_lr', type=float, default=5e-2)
    parser.add_argument('--inner_opt_wd', type=float, default=5e-4)
    parser.add_argument('--tr_batch_size', type=int, default=3)
    parser.add_argument('--tr_outer_steps', type=int, default=120)
    parser.add_argument('--tr_inner_steps', type=int, default=15)
    parser.add_argument('--tr_inner_sample_size', type=int, default=100)
    parser.add_argument('--amp', action='store_true', help='fp16 autocast for the GNN forward')
    parser.add_argument('--save_name', type=str, default='tsp500')
    parser.add_argument('--save_dir', type=str, default='./ckpt')
    parser.add_argument('--log_every', type=int, default=10)
    return parser.parse_args()


args = get_args()
os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu
device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def make_optimizer(name, params, lr, wd):
    if name == 'AdamW':
        return torch.optim.AdamW(params, lr=lr, weight_decay=wd)
    if name == 'Adam':
        return torch.optim.Adam(params, lr=lr, weight_decay=wd)
    if name == 'SGD':
        return torch.optim.SGD(params, lr=lr, momentum=0.9, weight_decay=wd)
    raise ValueError(f'unknown optimizer {name}')


def gen_instances(batch_size, n_nodes):
    return [np.random.rand(n_nodes, 2).astype(np.float32) for _ in range(batch_size)]


def build_graph(points, k):
    edge_index, edge_attr = knn_graph(points, k, device)
    x = torch.from_numpy(points).to(device)
    return x, edge_index, edge_attr


def inner_loop(net, x, edge_index, edge_attr, n_nodes, args):
    """Fine-tune the heatmap phi (initialised by the network) with REINFORCE; returns the final
    loss whose gradient w.r.t. theta is used by the outer optimiser (first-order approximation)."""
    with autocast(enabled=args.amp):
        par0 = net(x, edge_index, edge_attr)
    par0 = par0.float()
    phi = par0.detach().clone().requires_grad_(True)
    opt = make_optimizer(args.inner_opt, [phi], args.inner_opt_lr, args.inner_opt_wd)
    for _ in range(args.tr_inner_steps):
        tours, log_probs = tsp_sample(phi, edge_index, n_nodes, args.tr_inner_sample_size)
        lengths = tour_length(x, tours)
        adv = lengths - lengths.mean()
        loss = (adv.detach() * log_probs).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    # first-order meta-gradient: pull the network output towards the fine-tuned heatmap
    meta_loss = F.mse_loss(par0, phi.detach())
    return meta_loss, lengths.min().item()


def evaluate(net, n_eval=16):
    net.eval()
    lens = []
    with torch.no_grad():
        for points in gen_instances(n_eval, args.n_nodes):
            x, edge_index, edge_attr = build_graph(points, args.knn_k)
            par = net(x, edge_index, edge_attr).float()
            tour = tsp_greedy(par, edge_index, args.n_nodes)
            lens.append(tour_length(x, tour[None]).item())
    net.train()
    return float(np.mean(lens))


def main():
    set_seed(args.seed)
    os.makedirs(args.save_dir, exist_ok=True)

    net = Net(args.net_units, args.net_act, args.emb_depth, args.par_depth).to(device)
    outer_opt = make_optimizer(args.outer_opt, net.parameters(), args.outer_opt_lr, args.outer_opt_wd)
    scaler = GradScaler(enabled=args.amp)

    print(f'device: {device}, #params: {sum(p.numel() for p in net.parameters())}')
    torch.cuda.reset_peak_memory_stats(device)

    best = float('inf')
    for step in tqdm(range(1, args.tr_outer_steps + 1)):
        torch.cuda.synchronize()  # do not bill the previous step's async kernels to this one
        t0 = time.time()
        outer_opt.zero_grad()
        batch_best = []
        for points in gen_instances(args.tr_batch_size, args.n_nodes):
            x, edge_index, edge_attr = build_graph(points, args.knn_k)
            meta_loss, best_len = inner_loop(net, x, edge_index, edge_attr, args.n_nodes, args)
            scaler.scale(meta_loss / args.tr_batch_size).backward()
            batch_best.append(best_len)
        scaler.unscale_(outer_opt)
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        scaler.step(outer_opt)
        scaler.update()
        torch.cuda.synchronize()
        dt = time.time() - t0

        if step % args.log_every == 0:
            val = evaluate(net)
            mem = torch.cuda.max_memory_allocated(device) / 2 ** 30
            tqdm.write(f'[{step}] train best {np.mean(batch_best):.4f}  val greedy {val:.4f}  '
                       f'{dt:.2f}s/step  peak mem {mem:.2f} GiB')
            if val < best:
                best = val
                torch.save({'net': net.state_dict(), 'args': vars(args), 'step': step},
                           os.path.join(args.save_dir, f'{args.save_name}_best.pt'))

    torch.save({'net': net.state_dict(), 'args': vars(args), 'step': args.tr_outer_steps},
               os.path.join(args.save_dir, f'{args.save_name}_last.pt'))


if __name__ == '__main__':
    main()
