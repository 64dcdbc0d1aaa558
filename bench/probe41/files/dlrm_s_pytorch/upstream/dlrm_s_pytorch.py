# Copyright (c) Meta Platforms, Inc. and affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.
#
# Description: an implementation of a deep learning recommendation model (DLRM)
# The model input consists of dense and sparse features. The former is a vector
# of floating point values. The latter is a list of sparse indices into
# embedding tables, which consist of vectors of floating point values.
# The selected vectors are passed to mlp networks denoted by triangles,
# in some cases the vectors are interacted through operators (Op).
#
# output:
#                         vector of values
# model:                        |
#                              /\
#                             /__\
#                               |
#       _____________________> Op  <___________________
#     /                         |                      \
#    /\                        /\                      /\
#   /__\                      /__\           ...      /__\
#    |                          |                       |
#    |                         Op                      Op
#    |                    ____/__\_____           ____/__\____
#    |                   |_Emb_|____|__|    ...  |_Emb_|__|___|
# input:
# [ dense features ]     [sparse indices] , ..., [sparse indices]

from __future__ import absolute_import, division, print_function, unicode_literals

import argparse
import sys
import time

import dlrm_data_pytorch as dp
import extend_distributed as ext_dist
import mlperf_logger
import numpy as np
import sklearn.metrics
import torch
import torch.nn as nn
from torch.autograd.profiler import record_function
from torch.nn.parallel.parallel_apply import parallel_apply
from torch.nn.parallel.replicate import replicate
from torch.nn.parallel.scatter_gather import gather, scatter

try:
    import fbgemm_gpu
    from fbgemm_gpu import split_table_batched_embeddings_ops  # noqa: F401

    fbgemm_gpu_available = True
except (ImportError, OSError):
    fbgemm_gpu_available = False


def time_wrap(use_gpu):
    if use_gpu:
        torch.cuda.synchronize()
    return time.time()


def dlrm_wrap(X, lS_o, lS_i, use_gpu, device, ndevices=1):
    with record_function("DLRM forward"):
        if use_gpu:  # .cuda()
            # lS_i can be either a list of tensors or a stacked tensor.
            # Handle each case below:
            if ndevices == 1:
                lS_i = [S_i.to(device) for S_i in lS_i] if isinstance(lS_i, list) else lS_i.to(device)
                lS_o = [S_o.to(device) for S_o in lS_o] if isinstance(lS_o, list) else lS_o.to(device)
        return dlrm(X.to(device), lS_o, lS_i)


def loss_fn_wrap(Z, T, use_gpu, device):
    with record_function("DLRM loss compute"):
        if args.loss_function == "mse" or args.loss_function == "bce":
            return dlrm.loss_fn(Z, T.to(device))
        elif args.loss_function == "wbce":
            loss_ws_ = dlrm.loss_ws[T.data.view(-1).long()].view_as(T).to(device)
            loss_fn_ = dlrm.loss_fn(Z, T.to(device))
            loss_sc_ = loss_ws_ * loss_fn_
            return loss_sc_.mean()


class DLRM_Net(nn.Module):
    def create_mlp(self, ln, sigmoid_layer):
        layers = nn.ModuleList()
        for i in range(0, ln.size - 1):
            n = ln[i]
            m = ln[i + 1]
            LL = nn.Linear(int(n), int(m), bias=True)
            mean = 0.0
            std_dev = np.sqrt(2 / (m + n))
            W = np.random.normal(mean, std_dev, size=(m, n)).astype(np.float32)
            std_dev = np.sqrt(1 / m)
            bt = np.random.normal(mean, std_dev, size=m).astype(np.float32)
            LL.weight.data = torch.tensor(W, requires_grad=True)
            LL.bias.data = torch.tensor(bt, requires_grad=True)
            layers.append(LL)
            if i == sigmoid_layer:
                layers.append(nn.Sigmoid())
            else:
                layers.append(nn.ReLU())
        return torch.nn.Sequential(*layers)

    def create_emb(self, m, ln, weighted_pooling=None):
        emb_l = nn.ModuleList()
        v_W_l = []
        for i in range(0, ln.size):
            if ext_dist.my_size > 1:
                if i not in self.local_emb_indices:
                    continue
            n = ln[i]
            EE = nn.EmbeddingBag(n, m, mode="sum", sparse=True)
            W = np.random.uniform(low=-np.sqrt(1 / n), high=np.sqrt(1 / n), size=(n, m)).astype(np.float32)
            EE.weight.data = torch.tensor(W, requires_grad=True)
            if weighted_pooling is None:
                v_W_l.append(None)
            else:
                v_W_l.append(torch.ones(n, dtype=torch.float32))
            emb_l.append(EE)
        return emb_l, v_W_l

    def __init__(self, m_spa=None, ln_emb=None, ln_bot=None, ln_top=None, arch_interaction_op=None,
                 arch_interaction_itself=False, sigmoid_bot=-1, sigmoid_top=-1, sync_dense_params=True,
                 loss_threshold=0.0, ndevices=-1, weighted_pooling=None, loss_function="bce"):
        super(DLRM_Net, self).__init__()
        self.ndevices = ndevices
        self.output_d = 0
        self.parallel_model_batch_size = -1
        self.parallel_model_is_not_prepared = True
        self.arch_interaction_op = arch_interaction_op
        self.arch_interaction_itself = arch_interaction_itself
        self.sync_dense_params = sync_dense_params
        self.loss_threshold = loss_threshold
        self.loss_function = loss_function
        self.weighted_pooling = weighted_pooling
        if ext_dist.my_size > 1:
            n_emb = len(ln_emb)
            self.n_global_emb = n_emb
            self.n_local_emb, self.n_emb_per_rank = ext_dist.get_split_lengths(n_emb)
            self.local_emb_slice = ext_dist.get_my_slice(n_emb)
            self.local_emb_indices = list(range(n_emb))[self.local_emb_slice]
        self.emb_l, w_list = self.create_emb(m_spa, ln_emb, weighted_pooling)
        self.v_W_l = w_list
        self.bot_l = self.create_mlp(ln_bot, sigmoid_bot)
        self.top_l = self.create_mlp(ln_top, sigmoid_top)
        if self.loss_function == "mse":
            self.loss_fn = torch.nn.MSELoss(reduction="mean")
        else:
            self.loss_fn = torch.nn.BCELoss(reduction="mean")

    def apply_mlp(self, x, layers):
        return layers(x)

    def apply_emb(self, lS_o, lS_i, emb_l, v_W_l):
        ly = []
        for k, sparse_index_group_batch in enumerate(lS_i):
            sparse_offset_group_batch = lS_o[k]
            per_sample_weights = v_W_l[k].gather(0, sparse_index_group_batch) if v_W_l[k] is not None else None
            E = emb_l[k]
            V = E(sparse_index_group_batch, sparse_offset_group_batch, per_sample_weights=per_sample_weights)
            ly.append(V)
        return ly

    def interact_features(self, x, ly):
        if self.arch_interaction_op == "dot":
            (batch_size, d) = x.shape
            T = torch.cat([x] + ly, dim=1).view((batch_size, -1, d))
            Z = torch.bmm(T, torch.transpose(T, 1, 2))
            _, ni, nj = Z.shape
            offset = 1 if self.arch_interaction_itself else 0
            li = torch.tensor([i for i in range(ni) for j in range(i + offset)])
            lj = torch.tensor([j for i in range(nj) for j in range(i + offset)])
            Zflat = Z[:, li, lj]
            R = torch.cat([x] + [Zflat], dim=1)
        elif self.arch_interaction_op == "cat":
            R = torch.cat([x] + ly, dim=1)
        else:
            sys.exit("ERROR: --arch-interaction-op=" + self.arch_interaction_op + " is not supported")
        return R

    def forward(self, dense_x, lS_o, lS_i):
        if ext_dist.my_size > 1:
            return self.distributed_forward(dense_x, lS_o, lS_i)
        elif self.ndevices <= 1:
            return self.sequential_forward(dense_x, lS_o, lS_i)
        else:
            return self.parallel_forward(dense_x, lS_o, lS_i)

    def distributed_forward(self, dense_x, lS_o, lS_i):
        batch_size = dense_x.size()[0]
        if batch_size < ext_dist.my_size:
            sys.exit("ERROR: batch_size (%d) must be larger than number of ranks (%d)" % (batch_size, ext_dist.my_size))
        lS_o = lS_o[self.local_emb_slice]
        lS_i = lS_i[self.local_emb_slice]
        ly = self.apply_emb(lS_o, lS_i, self.emb_l, self.v_W_l)
        a2a_req = ext_dist.alltoall(ly, self.n_emb_per_rank)
        x = self.apply_mlp(dense_x, self.bot_l)
        ly = a2a_req.wait()
        ly = list(ly)
        z = self.interact_features(x, ly)
        p = self.apply_mlp(z, self.top_l)
        if 0.0 < self.loss_threshold and self.loss_threshold < 1.0:
            z = torch.clamp(p, min=self.loss_threshold, max=(1.0 - self.loss_threshold))
        else:
            z = p
        return z

    def sequential_forward(self, dense_x, lS_o, lS_i):
        x = self.apply_mlp(dense_x, self.bot_l)
        ly = self.apply_emb(lS_o, lS_i, self.emb_l, self.v_W_l)
        z = self.interact_features(x, ly)
        p = self.apply_mlp(z, self.top_l)
        if 0.0 < self.loss_threshold and self.loss_threshold < 1.0:
            z = torch.clamp(p, min=self.loss_threshold, max=(1.0 - self.loss_threshold))
        else:
            z = p
        return z

    def parallel_forward(self, dense_x, lS_o, lS_i):
        # prepare model (overwrite) -- single node, multiple devices, data parallel MLPs
        batch_size = dense_x.size()[0]
        ndevices = min(self.ndevices, batch_size, len(self.emb_l))
        device_ids = range(ndevices)
        if self.parallel_model_batch_size != batch_size:
            self.parallel_model_is_not_prepared = True
        if self.parallel_model_is_not_prepared or self.sync_dense_params:
            self.bot_l_replicas = replicate(self.bot_l, device_ids)
            self.top_l_replicas = replicate(self.top_l, device_ids)
            self.parallel_model_batch_size = batch_size
        if self.parallel_model_is_not_prepared:
            # model parallel embeddings: table k lives on device k % ndevices
            t_list = []
            for k, emb in enumerate(self.emb_l):
                d = torch.device("cuda:" + str(k % ndevices))
                t_list.append(emb.to(d))
            self.emb_l = nn.ModuleList(t_list)
            self.parallel_model_is_not_prepared = False
        dense_x = scatter(dense_x, device_ids, dim=0)
        t_list, i_list = [], []
        for k, _ in enumerate(self.emb_l):
            d = torch.device("cuda:" + str(k % ndevices))
            t_list.append(lS_o[k].to(d))
            i_list.append(lS_i[k].to(d))
        lS_o, lS_i = t_list, i_list
        x = parallel_apply(self.bot_l_replicas, dense_x, None, device_ids)
        ly = self.apply_emb(lS_o, lS_i, self.emb_l, self.v_W_l)
        t_list = []
        for k, _ in enumerate(self.emb_l):
            d = torch.device("cuda:" + str(k % ndevices))
            y = scatter(ly[k], device_ids, dim=0)
            t_list.append(y)
        ly = list(map(list, zip(*t_list)))
        z = [self.interact_features(x[k], ly[k]) for k in range(ndevices)]
        p = parallel_apply(self.top_l_replicas, z, None, device_ids)
        p0 = gather(p, self.output_d, dim=0)
        if 0.0 < self.loss_threshold and self.loss_threshold < 1.0:
            z0 = torch.clamp(p0, min=self.loss_threshold, max=(1.0 - self.loss_threshold))
        else:
            z0 = p0
        return z0


def run():
    parser = argparse.ArgumentParser(description="Train Deep Learning Recommendation Model (DLRM)")
    parser.add_argument("--arch-sparse-feature-size", type=int, default=2)
    parser.add_argument("--arch-embedding-size", type=dash_separated_ints, default="4-3-2")
    parser.add_argument("--arch-mlp-bot", type=dash_separated_ints, default="4-3-2")
    parser.add_argument("--arch-mlp-top", type=dash_separated_ints, default="4-2-1")
    parser.add_argument("--arch-interaction-op", type=str, default="dot")
    parser.add_argument("--loss-function", type=str, default="mse")
    parser.add_argument("--mini-batch-size", type=int, default=1)
    parser.add_argument("--nepochs", type=int, default=1)
    parser.add_argument("--learning-rate", type=float, default=0.01)
    parser.add_argument("--numpy-rand-seed", type=int, default=123)
    parser.add_argument("--use-gpu", action="store_true", default=False)
    parser.add_argument("--dist-backend", type=str, default="")
    parser.add_argument("--enable-profiling", action="store_true", default=False)
    parser.add_argument("--load-model", type=str, default="")
    parser.add_argument("--data-generation", type=str, default="random")
    global args
    global dlrm
    args = parser.parse_args()
    ext_dist.init_distributed(local_rank=-1, use_gpu=args.use_gpu, backend=args.dist_backend)

    np.random.seed(args.numpy_rand_seed)
    torch.manual_seed(args.numpy_rand_seed)
    use_gpu = args.use_gpu and torch.cuda.is_available()
    if use_gpu:
        torch.cuda.manual_seed_all(args.numpy_rand_seed)
        torch.backends.cudnn.deterministic = True
        if ext_dist.my_size > 1:
            ngpus = 1
            device = torch.device("cuda", ext_dist.my_local_rank)
        else:
            ngpus = torch.cuda.device_count()
            device = torch.device("cuda", 0)
        print("Using {} GPU(s)...".format(ngpus))
    else:
        device = torch.device("cpu")
        print("Using CPU...")

    train_data, train_ld, test_data, test_ld = dp.make_random_data_and_loader(args, np.fromstring(args.arch_embedding_size, dtype=int, sep="-"), args.arch_sparse_feature_size)
    ln_emb = np.array(args.arch_embedding_size)
    dlrm = DLRM_Net(args.arch_sparse_feature_size, ln_emb, np.array(args.arch_mlp_bot), np.array(args.arch_mlp_top),
                    arch_interaction_op=args.arch_interaction_op, ndevices=ngpus if use_gpu else -1,
                    loss_function=args.loss_function)
    if use_gpu:
        dlrm = dlrm.to(device)
    if ext_dist.my_size > 1:
        dlrm.bot_l = ext_dist.DDP(dlrm.bot_l, device_ids=[ext_dist.my_local_rank] if use_gpu else None)
        dlrm.top_l = ext_dist.DDP(dlrm.top_l, device_ids=[ext_dist.my_local_rank] if use_gpu else None)
    if args.load_model != "":
        ld_model = torch.load(args.load_model, map_location=torch.device("cuda") if use_gpu else torch.device("cpu"))
        dlrm.load_state_dict(ld_model["state_dict"])

    optimizer = torch.optim.SGD(dlrm.parameters(), lr=args.learning_rate)
    with torch.autograd.profiler.profile(args.enable_profiling, use_cuda=use_gpu, record_shapes=True) as prof:
        for k in range(args.nepochs):
            for j, inputBatch in enumerate(train_ld):
                X, lS_o, lS_i, T, W, CBPP = inputBatch
                t1 = time_wrap(use_gpu)
                Z = dlrm_wrap(X, lS_o, lS_i, use_gpu, device, ndevices=dlrm.ndevices)
                E = loss_fn_wrap(Z, T, use_gpu, device)
                optimizer.zero_grad()
                E.backward()
                optimizer.step()
                t2 = time_wrap(use_gpu)
                if j % 100 == 0 and ext_dist.my_rank <= 0:
                    print("epoch {} iter {} loss {:.6f} {:.2f} ms/it".format(k, j, E.item(), 1000.0 * (t2 - t1)))
    if args.enable_profiling:
        prof.export_chrome_trace("dlrm_s_pytorch.json")
        print(prof.key_averages().table(sort_by="self_cuda_time_total" if use_gpu else "self_cpu_time_total"))


def dash_separated_ints(value):
    return [int(v) for v in value.split("-")]


if __name__ == "__main__":
    run()
