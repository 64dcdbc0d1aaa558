from collections import deque

import random
import os
import sys
import time
import argparse

import numpy as np

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils import data
from torch.utils.data import Dataset, DataLoader, Subset

from sklearn.metrics import roc_auc_score

from binaryLoader import BinaryDataset, RandomChunkSampler, pad_collate_func
from MalConvGCT_nocat import MalConvGCT

import multiprocessing

from tqdm import tqdm


def check_dir_exists(dir_path):
    if not os.path.isdir(dir_path):
        raise argparse.ArgumentTypeError(f"{dir_path} is not a valid directory")
    return dir_path


parser = argparse.ArgumentParser(description="Train a MalConv model with Global Channel Gating")

parser.add_argument("--filter_size", type=int, default=512, help="How wide should the filter be")
parser.add_argument("--filter_stride", type=int, default=512, help="Filter Stride")
parser.add_argument("--embd_size", type=int, default=8, help="Size of embedding layer")
parser.add_argument("--num_channels", type=int, default=128, help="Total number of channels in output")
parser.add_argument("--epochs", type=int, default=10, help="How many training epochs to perform")
parser.add_argument("--non-neg", type=bool, default=False, help="Should non-negative training be used")
parser.add_argument("--batch_size", type=int, default=128, help="Batch size during training")
# Default is set ot 16MB!
parser.add_argument("--max_len", type=int, default=16000000, help="Maximum length of input file in bytes, at which point files will be truncated")
parser.add_argument("--gpus", nargs="+", type=int, default=[0], help="Which GPU ids to train on")
parser.add_argument("--lr", type=float, default=1e-3)
parser.add_argument("--seed", type=int, default=0)

parser.add_argument("mal_train", type=check_dir_exists, help="Path to directory containing malware files for training")
parser.add_argument("ben_train", type=check_dir_exists, help="Path to directory containing benign files for training")
parser.add_argument("mal_test", type=check_dir_exists, help="Path to directory containing malware files for testing")
parser.add_argument("ben_test", type=check_dir_exists, help="Path to directory containing benign files for testing")

args = parser.parse_args()

GPUS = args.gpus

NON_NEG = args.non_neg
EMBD_SIZE = args.embd_size
FILTER_SIZE = args.filter_size
FILTER_STRIDE = args.filter_stride
NUM_CHANNELS = args.num_channels
EPOCHS = args.epochs
MAX_FILE_LEN = args.max_len

BATCH_SIZE = args.batch_size

random.seed(args.seed)
np.random.seed(args.seed)
torch.manual_seed(args.seed)

whole_dataset = BinaryDataset(args.ben_train, args.mal_train, sort_by_size=True, max_len=MAX_FILE_LEN)
test_dataset = BinaryDataset(args.ben_test, args.mal_test, sort_by_size=True, max_len=MAX_FILE_LEN)

loader_threads = max(multiprocessing.cpu_count() - 4, multiprocessing.cpu_count() // 2 + 1)

train_loader = DataLoader(whole_dataset, batch_size=BATCH_SIZE, num_workers=loader_threads, collate_fn=pad_collate_func,
                          sampler=RandomChunkSampler(whole_dataset, BATCH_SIZE), pin_memory=True)

test_loader = DataLoader(test_dataset, batch_size=BATCH_SIZE, num_workers=loader_threads, collate_fn=pad_collate_func,
                         sampler=RandomChunkSampler(test_dataset, BATCH_SIZE), pin_memory=True)

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

model = MalConvGCT(channels=NUM_CHANNELS, window_size=FILTER_SIZE, stride=FILTER_STRIDE, embd_size=EMBD_SIZE,
                   low_mem=True).to(device)

base_name = "{}_channels_{}_filterSize_{}_stride_{}_embdSize_{}".format(
    type(model).__name__,
    NUM_CHANNELS,
    FILTER_SIZE,
    FILTER_STRIDE,
    EMBD_SIZE,
)

if NON_NEG:
    base_name = "NonNeg_" + base_name

if not os.path.exists(base_name):
    os.makedirs(base_name)
file_name = os.path.join(base_name, base_name)

headers = ["epoch", "train_acc", "train_auc", "test_acc", "test_auc", "epoch_time", "peak_mem_mb"]

with open(base_name + ".csv", "w") as csv_log:
    csv_log.write(",".join(headers) + "\n")

if len(GPUS) > 1:
    print("Using", len(GPUS), "GPUs:", GPUS)
    model = nn.DataParallel(model, device_ids=GPUS)

criterion = nn.CrossEntropyLoss()
optimizer = optim.AdamW(model.parameters(), lr=args.lr)

for epoch in tqdm(range(EPOCHS)):

    preds = []
    truths = []
    running_loss = 0.0

    train_correct = 0
    train_total = 0

    epoch_stats = {"epoch": epoch}

    model.train()
    epoch_start = time.time()
    torch.cuda.reset_peak_memory_stats()
    for inputs, labels in tqdm(train_loader):

        # inputs stay on the host: the low-memory forward copies chunks itself
        labels = labels.to(device, non_blocking=True)

        optimizer.zero_grad()

        try:
            outputs, penultimate_activ, conv_active = model(inputs)
        except RuntimeError as e:
            if "out of memory" in str(e):
                print("| WARNING: ran out of memory on batch of size", inputs.shape, ", skipping")
                del inputs
                torch.cuda.empty_cache()
                continue
            raise

        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()

        if NON_NEG:
            for p in model.parameters():
                p.data.clamp_(0)

        running_loss += loss.item()

        _, predicted = torch.max(outputs.data, 1)

        with torch.no_grad():
            preds.extend(F.softmax(outputs, dim=-1).data[:, 1].detach().cpu().numpy().ravel())
            truths.extend(labels.detach().cpu().numpy().ravel())

        train_total += labels.size(0)
        train_correct += (predicted == labels).sum().item()

    epoch_stats["train_acc"] = train_correct * 1.0 / train_total
    epoch_stats["train_auc"] = roc_auc_score(truths, preds)

    # Save the model and current state!
    model_path = os.path.join(base_name, "epoch_{}.checkpoint".format(epoch))

    # Have to handle model state special if multi-gpu was used
    if type(model).__name__ == "DataParallel":
        mstd = model.module.state_dict()
    else:
        mstd = model.state_dict()

    copy_of_model = MalConvGCT(channels=NUM_CHANNELS, window_size=FILTER_SIZE, stride=FILTER_STRIDE,
                               embd_size=EMBD_SIZE, low_mem=True)
    copy_of_model.load_state_dict(mstd)

    torch.save({
        "epoch": epoch,
        "model_state_dict": copy_of_model.state_dict(),
        "optimizer_state_dict": optimizer.state_dict(),
        "channels": NUM_CHANNELS,
        "filter_size": FILTER_SIZE,
        "stride": FILTER_STRIDE,
        "embd_dim": EMBD_SIZE,
        "non_neg": NON_NEG,
    }, model_path)

    # Test Set Eval
    model.eval()
    eval_train_correct = 0
    eval_train_total = 0

    preds = []
    truths = []
    with torch.no_grad():
        for inputs, labels in tqdm(test_loader):

            labels = labels.to(device, non_blocking=True)

            outputs, _, _ = model(inputs)

            _, predicted = torch.max(outputs.data, 1)

            preds.extend(F.softmax(outputs, dim=-1).data[:, 1].detach().cpu().numpy().ravel())
            truths.extend(labels.detach().cpu().numpy().ravel())

            eval_train_total += labels.size(0)
            eval_train_correct += (predicted == labels).sum().item()

    epoch_stats["test_acc"] = eval_train_correct * 1.0 / eval_train_total
    epoch_stats["test_auc"] = roc_auc_score(truths, preds)
    epoch_stats["epoch_time"] = time.time() - epoch_start
    epoch_stats["peak_mem_mb"] = torch.cuda.max_memory_allocated() / 2 ** 20

    with open(base_name + ".csv", "a") as csv_log:
        csv_log.write(",".join([str(epoch_stats[h]) for h in headers]) + "\n")
