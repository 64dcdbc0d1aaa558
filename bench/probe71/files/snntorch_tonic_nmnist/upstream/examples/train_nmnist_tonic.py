"""
Neuromorphic MNIST with Tonic + snnTorch (tutorial 7, extended with checkpointing and a cosine schedule).

Events are denoised, binned into frames of ``--time-window`` microseconds and cached on disk. Because
N-MNIST recordings have slightly different durations, the number of frames varies per sample and the
batches are padded to the longest sequence with tonic.collation.PadTensors.
"""
import argparse
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader

import tonic
import tonic.transforms as transforms
from tonic import DiskCachedDataset, MemoryCachedDataset

import snntorch as snn
from snntorch import functional as SF
from snntorch import surrogate
from snntorch import utils


def get_args():
    parser = argparse.ArgumentParser(description="N-MNIST CSNN with snnTorch")
    parser.add_argument("--data-dir", default="./data")
    parser.add_argument("--cache-dir", default="./cache/nmnist")
    parser.add_argument("--time-window", type=int, default=1000, help="frame length in us")
    parser.add_argument("--filter-time", type=int, default=10000, help="denoise filter time in us")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--lr", type=float, default=2e-2)
    parser.add_argument("--beta", type=float, default=0.5)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--memory-cache", action="store_true", help="keep the frames in RAM instead of on disk")
    parser.add_argument("--out", default="./checkpoints/nmnist")
    return parser.parse_args()


args = get_args()

sensor_size = tonic.datasets.NMNIST.sensor_size

# Denoise removes isolated, one-off events
# time_window
frame_transform = transforms.Compose([transforms.Denoise(filter_time=args.filter_time),
                                      transforms.ToFrame(sensor_size=sensor_size,
                                                         time_window=args.time_window)
                                      ])

trainset = tonic.datasets.NMNIST(save_to=args.data_dir, transform=frame_transform, train=True)
testset = tonic.datasets.NMNIST(save_to=args.data_dir, transform=frame_transform, train=False)

# random crops/rotations are applied to the cached frames, not to the raw events
train_aug = tonic.transforms.Compose([torch.from_numpy,
                                      torchvision.transforms.RandomRotation([-10, 10])])

if args.memory_cache:
    cached_trainset = MemoryCachedDataset(trainset, transform=train_aug)
    cached_testset = MemoryCachedDataset(testset)
else:
    cached_trainset = DiskCachedDataset(trainset, transform=train_aug, cache_path=os.path.join(args.cache_dir, "train"))
    cached_testset = DiskCachedDataset(testset, cache_path=os.path.join(args.cache_dir, "test"))

trainloader = DataLoader(cached_trainset, batch_size=args.batch_size, num_workers=args.workers,
                         collate_fn=tonic.collation.PadTensors(batch_first=False), shuffle=True,
                         pin_memory=True, persistent_workers=args.workers > 0)
testloader = DataLoader(cached_testset, batch_size=args.batch_size, num_workers=args.workers,
                        collate_fn=tonic.collation.PadTensors(batch_first=False))

device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
if device.type == "cuda":
    torch.backends.cudnn.benchmark = True

# neuron and simulation parameters
spike_grad = surrogate.atan()
beta = args.beta

#  Initialize Network
net = nn.Sequential(nn.Conv2d(2, 12, 5),
                    snn.Leaky(beta=beta, spike_grad=spike_grad, init_hidden=True),
                    nn.MaxPool2d(2),
                    nn.Conv2d(12, 32, 5),
                    snn.Leaky(beta=beta, spike_grad=spike_grad, init_hidden=True),
                    nn.MaxPool2d(2),
                    nn.Flatten(),
                    nn.Linear(32 * 5 * 5, 10),
                    snn.Leaky(beta=beta, spike_grad=spike_grad, init_hidden=True, output=True)
                    ).to(device)


def forward_pass(net, data):
    spk_rec = []
    utils.reset(net)  # resets hidden states for all LIF neurons in net

    for step in range(data.size(0)):  # data.size(0) = number of time steps
        spk_out, mem_out = net(data[step])
        spk_rec.append(spk_out)

    return torch.stack(spk_rec)


optimizer = torch.optim.Adam(net.parameters(), lr=args.lr, betas=(0.9, 0.999))
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs * len(trainloader))
loss_fn = SF.mse_count_loss(correct_rate=0.8, incorrect_rate=0.2)


def evaluate():
    net.eval()
    correct, total = 0, 0
    with torch.no_grad():
        for data, targets in testloader:
            data = data.to(device, non_blocking=True)
            targets = targets.to(device, non_blocking=True)
            spk_rec = forward_pass(net, data)
            correct += SF.accuracy_rate(spk_rec, targets) * targets.size(0)
            total += targets.size(0)
    net.train()
    return correct / total


os.makedirs(args.out, exist_ok=True)
loss_hist = []
acc_hist = []
best_acc = 0.0

# training loop
for epoch in range(args.epochs):
    t0 = time.time()
    for i, (data, targets) in enumerate(iter(trainloader)):
        data = data.to(device, non_blocking=True).float()
        targets = targets.to(device, non_blocking=True)

        net.train()
        spk_rec = forward_pass(net, data)
        loss_val = loss_fn(spk_rec, targets)

        # Gradient calculation + weight update
        optimizer.zero_grad()
        loss_val.backward()
        optimizer.step()
        scheduler.step()

        # Store loss history for future plotting
        loss_hist.append(loss_val.item())

        if i % 25 == 0:
            acc = SF.accuracy_rate(spk_rec, targets)
            acc_hist.append(acc)
            print(f"Epoch {epoch}, Iteration {i} \nTrain Loss: {loss_val.item():.2f}")
            print(f"Accuracy: {acc * 100:.2f}%\n")

    test_acc = evaluate()
    print(f"epoch {epoch}: test accuracy {test_acc * 100:.2f}%  ({time.time() - t0:.1f}s)")
    if test_acc > best_acc:
        best_acc = test_acc
        torch.save({"net": net.state_dict(), "epoch": epoch, "acc": best_acc},
                   os.path.join(args.out, "best.pt"))

np.save(os.path.join(args.out, "loss_hist.npy"), np.asarray(loss_hist))
print(f"best test accuracy {best_acc * 100:.2f}%")
