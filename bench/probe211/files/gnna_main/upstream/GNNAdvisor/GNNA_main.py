#!/usr/bin/env python3
import argparse
import os
import sys
import time

import torch
import torch.nn.functional as F
from tqdm import *
from scipy.sparse import *

import GNNAdvisor as GNNA           # import GNNAdvisor

from gnn_conv import *
from dataset import *

parser = argparse.ArgumentParser()
# Dataset related parameters.
parser.add_argument("--dataDir", type=str, default="../osdi-ae-graphs", help="the path to graphs")
parser.add_argument("--dataset", type=str, default='amazon0505', help="dataset")
parser.add_argument("--dim", type=int, default=96, help="input embedding dimension size")
parser.add_argument("--hidden", type=int, default=16, help="hidden dimension size")
parser.add_argument("--classes", type=int, default=22, help="output classes size")

# Model training related parameters.
parser.add_argument("--model", type=str, default='gcn', choices=['gcn', 'gin'],  help="GCN or GIN")
parser.add_argument("--num_epoches", type=int, default=200, help="number of epoches for training, default=200")

# Manually set the performance related parameters
parser.add_argument("--partSize", type=int, default=32, help="neighbor-group size")
parser.add_argument("--dimWorker", type=int, default=32, help="number of worker threads (MUST < 32)")
parser.add_argument("--warpPerBlock", type=int, default=4, help="number of warp per block, recommended: GCN: 8, GIN: 2")
parser.add_argument("--sharedMem", type=int, default=100, help="shared memory size of each block (Quadro P6000 64(KB) sm_61), default=100(KB) for RTX3090 sm_86")

# Additional flags for studies.
parser.add_argument('--manual_mode', type=str, choices=['True', 'False'], default='True', help="True: use manual config, False: auto config, default: True")
parser.add_argument('--verbose_mode', type=str, choices=['True', 'False'], default='False', help="True: verbose mode, False: simple mode, default: False")
parser.add_argument('--enable_rabbit', type=str, choices=['True', 'False'], default='False', help="True: enable rabbit reordering, False, disable rabbit reordering, default: False (disable for both manual and auto mode).")
parser.add_argument('--loadFromTxt', type=str, choices=['True', 'False'], default='False', help="True: load the graph TXT edge list, False: load from .npy, default: False (load from npz fast)")
parser.add_argument('--single_kernel', action='store_true', help="whether to profile a single SAG kernel")
parser.add_argument('--gpu', type=int, default=0, help="which GPU to run on")

args = parser.parse_args()
print(args)

partSize, dimWorker, warpPerBlock, sharedMem = args.partSize, args.dimWorker, args.warpPerBlock, args.sharedMem
manual_mode = args.manual_mode == 'True'
verbose_mode = args.verbose_mode == 'True'
enable_rabbit = args.enable_rabbit == 'True'
loadFromTxt = args.loadFromTxt == 'True'
dataset = args.dataset

os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu)

####################################
# loading data from files
####################################
if loadFromTxt:
    path = os.path.join(args.dataDir, args.dataset)
    dataset = custom_dataset(path, args.dim, args.classes, load_from_txt=True, verbose=verbose_mode)
else:
    path = os.path.join(args.dataDir, args.dataset + ".npz")
    dataset = custom_dataset(path, args.dim, args.classes, load_from_txt=False, verbose=verbose_mode)

num_nodes = dataset.num_nodes
num_edges = dataset.num_edges
column_index = dataset.column_index
row_pointers = dataset.row_pointers
degrees = dataset.degrees

####################################
# Query the GPU so that the auto mode can size blocks for this SM.
####################################
gpu_props = torch.cuda.get_device_properties(0)
num_sms = gpu_props.multi_processor_count
major, minor = torch.cuda.get_device_capability(0)
if major < 7:
    # Pascal has 64KB of shared memory per SM.
    sharedMem = min(sharedMem, 64)
print("GPU: {} (sm_{}{}), #SMs: {}".format(gpu_props.name, major, minor, num_sms))

####################################
# Building input property profile.
####################################
inputInfo = inputProperty(row_pointers, column_index, degrees,
                          partSize, dimWorker, warpPerBlock, sharedMem,
                          hiddenDim=args.hidden, dataset_obj=dataset, enable_rabbit=enable_rabbit,
                          manual_mode=manual_mode, verbose=verbose_mode)

####################################
# Decider for parameter selection.
####################################
inputInfo.decider()

inputInfo = inputInfo.set_input()
if verbose_mode:
    print('----------------------------')
    inputInfo.print_param()
    print()

inputInfo = inputInfo.set_hidden()
if verbose_mode:
    inputInfo.print_param()
    print()
    print('----------------------------')

####################################
# Building neighbor partitioning.
####################################
start = time.perf_counter()
partPtr, part2Node = GNNA.build_part(inputInfo.partSize, inputInfo.row_pointers)
build_neighbor_parts = time.perf_counter() - start
if verbose_mode:
    print("# Build nb_part (s): {:.3f}".format(build_neighbor_parts))

inputInfo.row_pointers = inputInfo.row_pointers.cuda()
inputInfo.column_index = inputInfo.column_index.cuda()
inputInfo.partPtr = partPtr.int().cuda()
inputInfo.part2Node = part2Node.int().cuda()

####################################
# Verifing a single SpMM kernel
# against the CPU reference.
####################################
if args.single_kernel:
    valid = Verification(args.hidden,
                         inputInfo.row_pointers, inputInfo.column_index, degrees,
                         inputInfo.partPtr, inputInfo.part2Node,
                         partSize, dimWorker, warpPerBlock)
    valid.compute()
    valid.reference(dataset.edge_index, dataset.x, num_nodes)
    valid.compare()
    valid.profile_spmm(round=100)
    sys.exit(0)

####################################
# Building GCN/GIN model
####################################
if args.model == 'gcn':
    model = GCN(in_dim=dataset.num_features, hidden_dim=args.hidden,
                out_dim=dataset.num_classes)
else:
    model = GIN(in_dim=dataset.num_features, hidden_dim=args.hidden,
                out_dim=dataset.num_classes)
model = model.cuda()

optimizer = torch.optim.Adam(model.parameters(), lr=0.01)


####################################
# Define training function.
####################################
def train():
    model.train()
    optimizer.zero_grad()
    X = dataset.x.cuda()
    y = dataset.y.cuda()
    out = model(X, inputInfo.set_input())
    loss = F.nll_loss(out, y)
    loss.backward()
    optimizer.step()
    return loss.item()


if __name__ == '__main__':
    # dry run
    for _ in range(10):
        train()
    torch.cuda.synchronize()  # flush the warm-up iterations
    start_train = time.perf_counter()
    for _ in tqdm(range(1, args.num_epoches + 1)):
        train()
    torch.cuda.synchronize()
    train_time = time.perf_counter() - start_train
    print('Time (ms): {:.3f}'.format(train_time * 1e3 / args.num_epoches))
    print()
