#!/usr/bin/env python
# -*- coding: utf-8 -*-

import argparse
import math
import os
import random
import time

import dgl
import dgl.function as fn
import numpy as np
import torch as th
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from dgl.nn.pytorch import edge_softmax
from dgl.utils import expand_as_pair
from ogb.nodeproppred import DglNodePropPredDataset, Evaluator

epsilon = 1 - math.log(2)

device = None
in_feats, n_classes = None, None


def seed(seed=0):
    random.seed(seed)
    np.random.seed(seed)
    th.manual_seed(seed)
    th.cuda.manual_seed(seed)
    th.backends.cudnn.deterministic = True
    th.backends.cudnn.benchmark = False
    dgl.random.seed(seed)


class GATConv(nn.Module):
    def __init__(self, in_feats, out_feats, num_heads=1, feat_drop=0.0,
                 attn_drop=0.0, edge_drop=0.0, negative_slope=0.2,
                 use_attn_dst=True, residual=False, activation=None,
                 allow_zero_in_degree=False, use_symmetric_norm=False):
        super(GATConv, self).__init__()
        self._num_heads = num_heads
        self._in_src_feats, self._in_dst_feats = expand_as_pair(in_feats)
        self._out_feats = out_feats
        self._allow_zero_in_degree = allow_zero_in_degree
        self._use_symmetric_norm = use_symmetric_norm
        if isinstance(in_feats, tuple):
            self.fc_src = nn.Linear(self._in_src_feats, out_feats * num_heads,
                                    bias=False)
            self.fc_dst = nn.Linear(self._in_dst_feats, out_feats * num_heads,
                                    bias=False)
        else:
            self.fc = nn.Linear(self._in_src_feats, out_feats * num_heads,
                                bias=False)
        self.attn_l = nn.Parameter(th.FloatTensor(size=(1, num_heads, out_feats)))
        if use_attn_dst:
            self.attn_r = nn.Parameter(th.FloatTensor(size=(1, num_heads, out_feats)))
        else:
            self.register_buffer("attn_r", None)
        self.feat_drop = nn.Dropout(feat_drop)
        self.attn_drop = nn.Dropout(attn_drop)
        self.edge_drop = edge_drop
        self.leaky_relu = nn.LeakyReLU(negative_slope)
        if residual:
            self.res_fc = nn.Linear(self._in_dst_feats, num_heads * out_feats,
                                    bias=False)
        else:
            self.register_buffer("res_fc", None)
        self.reset_parameters()
        self._activation = activation

    def reset_parameters(self):
        gain = nn.init.calculate_gain("relu")
        if hasattr(self, "fc"):
            nn.init.xavier_normal_(self.fc.weight, gain=gain)
        else:
            nn.init.xavier_normal_(self.fc_src.weight, gain=gain)
            nn.init.xavier_normal_(self.fc_dst.weight, gain=gain)
        nn.init.xavier_normal_(self.attn_l, gain=gain)
        if isinstance(self.attn_r, nn.Parameter):
            nn.init.xavier_normal_(self.attn_r, gain=gain)
        if isinstance(self.res_fc, nn.Linear):
            nn.init.xavier_normal_(self.res_fc.weight, gain=gain)

    def forward(self, graph, feat):
        with graph.local_scope():
            h_src = h_dst = self.feat_drop(feat)
            feat_src = feat_dst = self.fc(h_src).view(
                -1, self._num_heads, self._out_feats)
            if graph.is_block:
                h_dst = h_src[:graph.number_of_dst_nodes()]
                feat_dst = feat_src[:graph.number_of_dst_nodes()]

            if self._use_symmetric_norm:
                degs = graph.out_degrees().float().clamp(min=1)
                norm = th.pow(degs, -0.5)
                shp = norm.shape + (1,) * (feat_src.dim() - 1)
                norm = th.reshape(norm, shp)
                feat_src = feat_src * norm

            el = (feat_src * self.attn_l).sum(dim=-1).unsqueeze(-1)
            graph.srcdata.update({"ft": feat_src, "el": el})
            if self.attn_r is not None:
                er = (feat_dst * self.attn_r).sum(dim=-1).unsqueeze(-1)
                graph.dstdata.update({"er": er})
                graph.apply_edges(fn.u_add_v("el", "er", "e"))
            else:
                graph.apply_edges(fn.copy_u("el", "e"))
            e = self.leaky_relu(graph.edata.pop("e"))

            if self.training and self.edge_drop > 0:
                perm = th.randperm(graph.number_of_edges(), device=e.device)
                bound = int(graph.number_of_edges() * self.edge_drop)
                eids = perm[bound:]
                graph.edata["a"] = th.zeros_like(e)
                graph.edata["a"][eids] = self.attn_drop(
                    edge_softmax(graph, e[eids], eids=eids))
            else:
                graph.edata["a"] = self.attn_drop(edge_softmax(graph, e))

            graph.update_all(fn.u_mul_e("ft", "a", "m"), fn.sum("m", "ft"))
            rst = graph.dstdata["ft"]

            if self._use_symmetric_norm:
                degs = graph.in_degrees().float().clamp(min=1)
                norm = th.pow(degs, 0.5)
                shp = norm.shape + (1,) * (feat_dst.dim() - 1)
                norm = th.reshape(norm, shp)
                rst = rst * norm

            if self.res_fc is not None:
                resval = self.res_fc(h_dst).view(h_dst.shape[0], -1,
                                                 self._out_feats)
                rst = rst + resval

            if self._activation is not None:
                rst = self._activation(rst)
            return rst


class GAT(nn.Module):
    def __init__(self, in_feats, n_classes, n_hidden, n_layers, n_heads,
                 activation, dropout=0.0, input_drop=0.0, attn_drop=0.0,
                 edge_drop=0.0, use_attn_dst=True, use_symmetric_norm=False):
        super().__init__()
        self.n_layers = n_layers
        self.convs = nn.ModuleList()
        self.norms = nn.ModuleList()
        for i in range(n_layers):
            in_hidden = n_heads * n_hidden if i > 0 else in_feats
            out_hidden = n_hidden if i < n_layers - 1 else n_classes
            num_heads = n_heads if i < n_layers - 1 else 1
            self.convs.append(GATConv(
                in_hidden, out_hidden, num_heads=num_heads,
                attn_drop=attn_drop, edge_drop=edge_drop,
                use_attn_dst=use_attn_dst,
                use_symmetric_norm=use_symmetric_norm, residual=True))
            if i < n_layers - 1:
                self.norms.append(nn.BatchNorm1d(out_hidden * num_heads))
        self.input_drop = nn.Dropout(min(0.1, input_drop))
        self.dropout = nn.Dropout(dropout)
        self.activation = activation

    def forward(self, graph, feat):
        h = self.input_drop(feat)
        for i in range(self.n_layers):
            conv = self.convs[i](graph, h)
            h = conv
            if i < self.n_layers - 1:
                h = h.flatten(1)
                h = self.norms[i](h)
                h = self.activation(h, inplace=True)
                h = self.dropout(h)
        h = h.mean(1)
        return h


def cross_entropy(x, labels):
    y = F.cross_entropy(x, labels[:, 0], reduction="none")
    y = th.log(epsilon + y) - math.log(epsilon)
    return th.mean(y)


def compute_acc(pred, labels, evaluator):
    return evaluator.eval({"y_pred": pred.argmax(dim=-1, keepdim=True),
                           "y_true": labels})["acc"]


def adjust_learning_rate(optimizer, lr, epoch):
    if epoch <= 50:
        for param_group in optimizer.param_groups:
            param_group["lr"] = lr * epoch / 50


def run(args, graph, labels, train_idx, val_idx, test_idx, evaluator,
        n_running):
    model = GAT(in_feats, n_classes, n_hidden=args.n_hidden,
                n_layers=args.n_layers, n_heads=args.n_heads,
                activation=F.relu, dropout=args.dropout,
                input_drop=args.input_drop, attn_drop=args.attn_drop,
                edge_drop=args.edge_drop, use_attn_dst=not args.no_attn_dst,
                use_symmetric_norm=args.use_norm).to(device)
    optimizer = optim.RMSprop(model.parameters(), lr=args.lr,
                              weight_decay=args.wd)

    best_val_acc, final_test_acc = 0, 0
    for epoch in range(1, args.n_epochs + 1):
        tic = time.time()
        adjust_learning_rate(optimizer, args.lr, epoch)

        model.train()
        optimizer.zero_grad()
        pred = model(graph, graph.srcdata["feat"])
        loss = cross_entropy(pred[train_idx], labels[train_idx])
        loss.backward()
        optimizer.step()

        model.eval()
        with th.no_grad():
            pred = model(graph, graph.srcdata["feat"])
        train_acc = compute_acc(pred[train_idx], labels[train_idx], evaluator)
        val_acc = compute_acc(pred[val_idx], labels[val_idx], evaluator)
        test_acc = compute_acc(pred[test_idx], labels[test_idx], evaluator)
        if val_acc > best_val_acc:
            best_val_acc, final_test_acc = val_acc, test_acc

        if epoch % args.log_every == 0:
            print(f"Run: {n_running}/{args.n_runs}, Epoch: {epoch}, "
                  f"Time: {time.time() - tic:.4f}s, Loss: {loss.item():.4f}, "
                  f"Acc: {train_acc:.4f}/{val_acc:.4f}/{test_acc:.4f}, "
                  f"Best: {best_val_acc:.4f}/{final_test_acc:.4f}")
    return best_val_acc, final_test_acc


def main():
    global device, in_feats, n_classes

    argparser = argparse.ArgumentParser("GAT on OGBN-Arxiv",
                                        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    argparser.add_argument("--cpu", action="store_true",
                           help="CPU mode. This option overrides --gpu.")
    argparser.add_argument("--gpu", type=int, default=0, help="GPU device ID.")
    argparser.add_argument("--seed", type=int, default=0)
    argparser.add_argument("--n-runs", type=int, default=10)
    argparser.add_argument("--n-epochs", type=int, default=2000)
    argparser.add_argument("--use-labels", action="store_true")
    argparser.add_argument("--no-attn-dst", action="store_true")
    argparser.add_argument("--use-norm", action="store_true")
    argparser.add_argument("--lr", type=float, default=0.002)
    argparser.add_argument("--n-layers", type=int, default=3)
    argparser.add_argument("--n-heads", type=int, default=3)
    argparser.add_argument("--n-hidden", type=int, default=250)
    argparser.add_argument("--dropout", type=float, default=0.75)
    argparser.add_argument("--input-drop", type=float, default=0.1)
    argparser.add_argument("--attn-drop", type=float, default=0.0)
    argparser.add_argument("--edge-drop", type=float, default=0.0)
    argparser.add_argument("--wd", type=float, default=0)
    argparser.add_argument("--log-every", type=int, default=20)
    args = argparser.parse_args()

    if args.cpu:
        device = th.device("cpu")
    else:
        device = th.device(f"cuda:{args.gpu}")

    # load data
    data = DglNodePropPredDataset(name="ogbn-arxiv")
    evaluator = Evaluator(name="ogbn-arxiv")
    splitted_idx = data.get_idx_split()
    train_idx, val_idx, test_idx = (splitted_idx["train"],
                                    splitted_idx["valid"],
                                    splitted_idx["test"])
    graph, labels = data[0]

    # add reverse edges
    srcs, dsts = graph.all_edges()
    graph.add_edges(dsts, srcs)
    # add self-loop
    print(f"Total edges before adding self-loop {graph.number_of_edges()}")
    graph = graph.remove_self_loop().add_self_loop()
    print(f"Total edges after adding self-loop {graph.number_of_edges()}")

    in_feats = graph.ndata["feat"].shape[1]
    n_classes = (labels.max() + 1).item()
    graph.create_formats_()

    train_idx = train_idx.to(device)
    val_idx = val_idx.to(device)
    test_idx = test_idx.to(device)
    labels = labels.to(device)
    graph = graph.to(device)

    # run
    val_accs, test_accs = [], []
    for i in range(args.n_runs):
        seed(args.seed + i)
        val_acc, test_acc = run(args, graph, labels, train_idx, val_idx,
                                test_idx, evaluator, i + 1)
        val_accs.append(val_acc)
        test_accs.append(test_acc)
        th.cuda.empty_cache()

    print(f"Runned {args.n_runs} times")
    print(f"Val Accs: {val_accs}")
    print(f"Test Accs: {test_accs}")
    print(f"Average val accuracy: {np.mean(val_accs)} ± {np.std(val_accs)}")
    print(f"Average test accuracy: {np.mean(test_accs)} ± {np.std(test_accs)}")
    print(f"Number of params: {sum(p.numel() for p in (GAT(in_feats, n_classes, args.n_hidden, args.n_layers, args.n_heads, F.relu).parameters()) if p.requires_grad)}")
    if not args.cpu:
        print(f"Peak memory: {th.cuda.max_memory_allocated(device) / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
