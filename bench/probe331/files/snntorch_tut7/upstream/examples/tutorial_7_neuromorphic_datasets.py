# -*- coding: utf-8 -*-
"""
snnTorch - Neuromorphic Datasets with Tonic + snnTorch
======================================================
Tutorial 7 (script version of the notebook)

Train a convolutional SNN on N-MNIST event streams. Events are binned into frames with tonic and cached on
disk; training uses mixed precision on CUDA devices to speed things up.
"""
import argparse
import os
import time

import numpy as np
import tonic
import tonic.transforms as transforms
import torch
import torch.nn as nn
import torchvision
from tonic import DiskCachedDataset
from torch.utils.data import DataLoader

import snntorch as snn
from snntorch import functional as SF
from snntorch import surrogate
from snntorch import utils


def get_args():
    parser = argparse.ArgumentParser(description="N-MNIST with snnTorch")
    parser.add_argument("--data", default="./data", type=str)
    parser.add_argument("--cache", default="./cache/nmnist", type=str)
    parser.add_argument("--batch-size", default=128, type=int)
    parser.add_argument("--epochs", default=1, type=int)
    parser.add_argument("--num-iters", default=50, type=int, help="iterations per epoch (the tutorial stops early)")
    parser.add_argument("--lr", default=2e-2, type=float)
    parser.add_argument("--workers", default=4, type=int)
    parser.add_argument("--no-amp", action="store_true", help="disable fp16 autocast")
    return parser.parse_args()


def build_loaders(args):
    sensor_size = tonic.datasets.NMNIST.sensor_size

    # Denoise removes isolated, one-off events
    # time_window
    frame_transform = transforms.Compose([
        transforms.Denoise(filter_time=10000),
        transforms.ToFrame(sensor_size=sensor_size, time_window=1000),
    ])

    trainset = tonic.datasets.NMNIST(save_to=args.data, transform=frame_transform, train=True)
    testset = tonic.datasets.NMNIST(save_to=args.data, transform=frame_transform, train=False)

    transform = tonic.transforms.Compose([
        torch.from_numpy,
        torchvision.transforms.RandomRotation([-10, 10]),
    ])

    cached_trainset = DiskCachedDataset(trainset, transform=transform, cache_path=os.path.join(args.cache, "train"))

    # no augmentations for the testset
    cached_testset = DiskCachedDataset(testset, cache_path=os.path.join(args.cache, "test"))

    trainloader = DataLoader(cached_trainset, batch_size=args.batch_size, num_workers=args.workers,
                             collate_fn=tonic.collation.PadTensors(batch_first=False), shuffle=True,
                             pin_memory=True)
    testloader = DataLoader(cached_testset, batch_size=args.batch_size, num_workers=args.workers,
                            collate_fn=tonic.collation.PadTensors(batch_first=False), pin_memory=True)
    return trainloader, testloader


def build_net(device):
    # neuron and simulation parameters
    spike_grad = surrogate.atan()
    beta = 0.5

    #  Initialize Network
    net = nn.Sequential(
        nn.Conv2d(2, 12, 5),
        nn.MaxPool2d(2),
        snn.Leaky(beta=beta, spike_grad=spike_grad, init_hidden=True),
        nn.Conv2d(12, 32, 5),
        nn.MaxPool2d(2),
        snn.Leaky(beta=beta, spike_grad=spike_grad, init_hidden=True),
        nn.Flatten(),
        nn.Linear(32 * 5 * 5, 10),
        snn.Leaky(beta=beta, spike_grad=spike_grad, init_hidden=True, output=True),
    ).to(device)
    return net


def forward_pass(net, data):
    spk_rec = []
    utils.reset(net)  # resets hidden states for all LIF neurons in net

    for step in range(data.size(0)):  # data.size(0) = number of time steps
        spk_out, mem_out = net(data[step])
        spk_rec.append(spk_out)

    return torch.stack(spk_rec)


def main():
    args = get_args()

    device = torch.device("cuda") if torch.cuda.is_available() else torch.device("mps") if torch.backends.mps.is_available() else torch.device("cpu")
    use_amp = (device.type == "cuda") and not args.no_amp
    if device.type == "cuda":  # cudnn autotuner for the fixed-size frames
        torch.backends.cudnn.benchmark = True

    trainloader, testloader = build_loaders(args)
    net = build_net(device)

    optimizer = torch.optim.Adam(net.parameters(), lr=args.lr, betas=(0.9, 0.999))
    loss_fn = SF.mse_count_loss(correct_rate=0.8, incorrect_rate=0.2)
    scaler = torch.cuda.amp.GradScaler(enabled=use_amp)

    loss_hist = []
    acc_hist = []

    # training loop
    for epoch in range(args.epochs):
        t0 = time.time()
        for i, (data, targets) in enumerate(iter(trainloader)):
            data = data.to(device, non_blocking=True)
            targets = targets.to(device, non_blocking=True)

            net.train()
            with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=use_amp):
                spk_rec = forward_pass(net, data)
                loss_val = loss_fn(spk_rec, targets)

            # Gradient calculation + weight update
            optimizer.zero_grad()
            scaler.scale(loss_val).backward()
            scaler.step(optimizer)
            scaler.update()

            # Store loss history for future plotting
            loss_hist.append(loss_val.item())

            print(f"Epoch {epoch}, Iteration {i} \nTrain Loss: {loss_val.item():.2f}")

            acc = SF.accuracy_rate(spk_rec, targets)
            acc_hist.append(acc)
            print(f"Accuracy: {acc * 100:.2f}%\n")

            # training loop breaks after `num_iters` iterations
            if i == args.num_iters:
                break
        print(f"epoch {epoch} took {time.time() - t0:.1f}s")

    # evaluation on the full test set
    net.eval()
    correct, total = 0, 0
    with torch.no_grad():
        for data, targets in testloader:
            data = data.to(device)
            targets = targets.to(device)
            spk_rec = forward_pass(net, data)
            correct += (spk_rec.sum(0).argmax(1) == targets).sum().item()
            total += targets.numel()
    print(f"Test accuracy: {100. * correct / total:.2f}% ({correct}/{total})")

    if device.type == "cuda":
        print(f"peak GPU memory: {torch.cuda.max_memory_allocated() / 2 ** 20:.0f} MiB")
        torch.cuda.empty_cache()

    np.save("loss_hist.npy", np.asarray(loss_hist))


if __name__ == "__main__":
    main()
