"""
snnTorch Tutorial 6 as a script: surrogate gradient descent in a convolutional spiking neural network.

    12C5-MP2-64C5-MP2-1024FC10, leaky integrate-and-fire neurons with a fast-sigmoid surrogate,
    rate-coded cross-entropy loss on the output spike counts.

Run:  python examples/tutorial_6_csnn.py --epochs 1 --num-steps 25
"""
import argparse
import random

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

import snntorch as snn
from snntorch import functional as SF
from snntorch import spikeplot as splt
from snntorch import surrogate
from snntorch import utils


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data-path", default="/tmp/data/mnist")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--num-steps", type=int, default=25)
    p.add_argument("--beta", type=float, default=0.5)
    p.add_argument("--slope", type=float, default=25.0)
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--plot", action="store_true")
    return p.parse_args()


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


# dataloader arguments
args = get_args()
set_seed(args.seed)
dtype = torch.float
device = torch.device("cuda") if torch.cuda.is_available() else torch.device("mps") if torch.backends.mps.is_available() else torch.device("cpu")
print(f"Using device {device}")

# Define a transform
transform = transforms.Compose([
    transforms.Resize((28, 28)),
    transforms.Grayscale(),
    transforms.ToTensor(),
    transforms.Normalize((0,), (1,))])

mnist_train = datasets.MNIST(args.data_path, train=True, download=True, transform=transform)
mnist_test = datasets.MNIST(args.data_path, train=False, download=True, transform=transform)

# Create DataLoaders
train_loader = DataLoader(mnist_train, batch_size=args.batch_size, shuffle=True, drop_last=True)
test_loader = DataLoader(mnist_test, batch_size=args.batch_size, shuffle=True, drop_last=True)

# neuron and simulation parameters
spike_grad = surrogate.fast_sigmoid(slope=args.slope)
beta = args.beta
num_steps = args.num_steps

#  Initialize Network
net = nn.Sequential(nn.Conv2d(1, 12, 5),
                    nn.MaxPool2d(2),
                    snn.Leaky(beta=beta, spike_grad=spike_grad, init_hidden=True),
                    nn.Conv2d(12, 64, 5),
                    nn.MaxPool2d(2),
                    snn.Leaky(beta=beta, spike_grad=spike_grad, init_hidden=True),
                    nn.Flatten(),
                    nn.Linear(64 * 4 * 4, 10),
                    snn.Leaky(beta=beta, spike_grad=spike_grad, init_hidden=True, output=True)
                    ).to(device)


def forward_pass(net, num_steps, data):
    mem_rec = []
    spk_rec = []
    utils.reset(net)  # resets hidden states for all LIF neurons in net

    for step in range(num_steps):
        spk_out, mem_out = net(data)
        spk_rec.append(spk_out)
        mem_rec.append(mem_out)

    return torch.stack(spk_rec), torch.stack(mem_rec)


def batch_accuracy(loader, net, num_steps):
    with torch.no_grad():
        total = 0
        acc = 0
        net.eval()

        loader = iter(loader)
        for data, targets in loader:
            data = data.to(device)
            targets = targets.to(device)
            spk_rec, _ = forward_pass(net, num_steps, data)

            acc += SF.accuracy_rate(spk_rec, targets) * spk_rec.size(1)
            total += spk_rec.size(1)

    return acc / total


loss_fn = SF.ce_rate_loss()
optimizer = torch.optim.Adam(net.parameters(), lr=args.lr, betas=(0.9, 0.999))

loss_hist = []
test_acc_hist = []
counter = 0

# Outer training loop
for epoch in range(args.epochs):

    # Training loop
    for data, targets in iter(train_loader):
        data = data.to(device)
        targets = targets.to(device)

        # forward pass
        net.train()
        spk_rec, _ = forward_pass(net, num_steps, data)

        # initialize the loss & sum over time
        loss_val = loss_fn(spk_rec, targets)

        # Gradient calculation + weight update
        optimizer.zero_grad()
        loss_val.backward()
        optimizer.step()

        # Store loss history for future plotting
        loss_hist.append(loss_val.item())

        # Test set
        if counter % 50 == 0:
            with torch.no_grad():
                net.eval()

                # Test set forward pass
                test_acc = batch_accuracy(test_loader, net, num_steps)
                print(f"Iteration {counter}, Test Acc: {test_acc * 100:.2f}%\n")
                test_acc_hist.append(test_acc.item())

        counter += 1

if args.plot:
    # Plot Loss
    fig = plt.figure(facecolor="w")
    plt.plot(test_acc_hist)
    plt.title("Test Set Accuracy")
    plt.xlabel("Epoch")
    plt.ylabel("Accuracy")
    plt.savefig("test_acc.png")

    # visualise the output layer's spikes for one test sample
    data, targets = next(iter(test_loader))
    spk_rec, mem_rec = forward_pass(net, num_steps, data.to(device))
    idx = 0
    fig, ax = plt.subplots(facecolor='w', figsize=(12, 7))
    labels = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']
    print(f"The target label is: {targets[idx]}")
    anim = splt.spike_count(spk_rec[:, idx].detach().cpu(), fig, ax, labels=labels,
                            animate=True, interpolate=4)
    anim.save("spike_bar.mp4")
