"""
Neuroevolution of a small convolutional network on MNIST ("MNIST30K").

Follows the EvoTorch tutorial: a SupervisedNE problem whose fitness is the
cross-entropy of each candidate network on a common minibatch. Evaluation is
spread over Ray actors that share the machine's GPUs (4 actors per GPU by
default), while the SNES distribution itself stays on the CPU.

    CUDA_VISIBLE_DEVICES=0,1 python train_mnist30k.py --actors-per-gpu 4
"""

import argparse
import os
import time

import ray
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

from evotorch.algorithms import SNES
from evotorch.logging import PandasLogger, StdOutLogger
from evotorch.neuroevolution import SupervisedNE


class MNIST30K(nn.Module):
    """~30k-parameter CNN used in the EvoTorch tutorial."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, kernel_size=3, stride=1, padding=1)
        self.pool1 = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(16, 32, kernel_size=3, stride=1, padding=1)
        self.pool2 = nn.MaxPool2d(2)
        self.fc1 = nn.Linear(32 * 7 * 7, 16)
        self.fc2 = nn.Linear(16, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = self.pool1(x)
        x = F.relu(self.conv2(x))
        x = self.pool2(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="./data")
    p.add_argument("--popsize", type=int, default=1000)
    p.add_argument("--minibatch-size", type=int, default=256)
    p.add_argument("--num-minibatches", type=int, default=5)
    p.add_argument("--generations", type=int, default=2000)
    p.add_argument("--stdev-init", type=float, default=0.1)
    p.add_argument("--actors-per-gpu", type=int, default=4)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--test-batch-size", type=int, default=1024)
    p.add_argument("--baseline-epochs", type=int, default=0, help="also train the net with Adam for comparison")
    return p.parse_args()


def load_data(root: str):
    tfm = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
    train = datasets.MNIST(root, train=True, download=True, transform=tfm)
    test = datasets.MNIST(root, train=False, download=True, transform=tfm)
    return train, test


@torch.no_grad()
def test_accuracy(net: nn.Module, test_set, batch_size: int, device: torch.device) -> float:
    loader = DataLoader(test_set, batch_size=batch_size, shuffle=False, num_workers=4, pin_memory=True)
    net.eval()
    correct, total = 0, 0
    for images, labels in loader:
        images = images.to(device, non_blocking=True)
        labels = labels.to(device, non_blocking=True)
        pred = net(images).argmax(dim=-1)
        correct += (pred == labels).sum().item()
        total += labels.numel()
    return correct / total


def sgd_baseline(train_set, test_set, epochs: int, device: torch.device, use_amp: bool = True) -> float:
    """Plain Adam training of the same network, for the comparison table in the tutorial."""
    net = MNIST30K().to(device)
    loader = DataLoader(train_set, batch_size=128, shuffle=True, num_workers=4, pin_memory=True, drop_last=True)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for epoch in range(epochs):
        net.train()
        running = 0.0
        for images, labels in loader:
            images = images.to(device, non_blocking=True)
            labels = labels.to(device, non_blocking=True)
            opt.zero_grad(set_to_none=True)
            with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=use_amp):
                loss = F.cross_entropy(net(images), labels)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            running += loss.item()
        print(f"  [baseline] epoch {epoch + 1}: loss {running / len(loader):.4f}")
    return test_accuracy(net, test_set, 1024, device)


def main():
    args = parse_args()
    torch.manual_seed(args.seed)

    num_gpus = torch.cuda.device_count()
    if num_gpus == 0:
        print("No GPU found; running all actors on CPU")
    ray.init(num_gpus=num_gpus, include_dashboard=False)

    train_set, test_set = load_data(args.data)

    if num_gpus > 0:
        num_actors = num_gpus * args.actors_per_gpu
        gpus_per_actor = 1.0 / args.actors_per_gpu
    else:
        num_actors = "max"
        gpus_per_actor = None

    problem = SupervisedNE(
        train_set,
        MNIST30K,
        nn.CrossEntropyLoss(),
        minibatch_size=args.minibatch_size,
        common_minibatch=True,
        num_minibatches=args.num_minibatches,
        num_actors=num_actors,
        num_gpus_per_actor=gpus_per_actor,
        subbatch_size=50,
        device="cpu",
    )
    print(f"Solution length (number of parameters): {problem.solution_length}")

    searcher = SNES(problem, popsize=args.popsize, stdev_init=args.stdev_init)
    StdOutLogger(searcher, interval=1)
    pandas_logger = PandasLogger(searcher, interval=1)

    t0 = time.time()
    searcher.run(args.generations)
    print(f"Evolution took {time.time() - t0:.1f}s")

    eval_device = torch.device("cuda:0" if num_gpus > 0 else "cpu")
    net = problem.parameterize_net(searcher.status["center"]).to(eval_device)
    acc = test_accuracy(net, test_set, args.test_batch_size, eval_device)
    print(f"Test accuracy of the centre solution: {100 * acc:.2f}%")
    if args.baseline_epochs > 0:
        base_acc = sgd_baseline(train_set, test_set, args.baseline_epochs, eval_device)
        print(f"Adam baseline ({args.baseline_epochs} epochs): {100 * base_acc:.2f}%")

    os.makedirs("results", exist_ok=True)
    pandas_logger.to_dataframe().to_csv("results/mnist30k_progress.csv")
    torch.save(net.state_dict(), "results/mnist30k_center.pt")
    problem.kill_actors()
    ray.shutdown()


if __name__ == "__main__":
    main()
