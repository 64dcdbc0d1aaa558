"""Hybrid quantum neural network with CUDA-Q and PyTorch.

Binary classification of MNIST 0/1 with a small CNN whose last layer is a
single-qubit parameterised circuit.  The quantum expectation value and its
parameter-shift gradient are computed by CUDA-Q; with the ``nvidia`` target
the circuits are simulated by cuStateVec on the GPU, and with
``nvidia-mqpu`` the shifted circuits are spread over all visible GPUs with
``observe_async``.

    python hybrid_qnn_cudaq.py                      # nvidia target, 1 GPU
    python hybrid_qnn_cudaq.py --target nvidia-mqpu # all GPUs
    python hybrid_qnn_cudaq.py --target qpp-cpu     # CPU reference
"""

import argparse
import time

import cudaq
from cudaq import spin
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import torchvision
from torch.autograd import Function
from torchvision import datasets, transforms


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", default="nvidia", choices=["nvidia", "nvidia-mqpu", "qpp-cpu"])
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--n-samples", type=int, default=200)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--shift", type=float, default=np.pi / 2)
    ap.add_argument("--seed", type=int, default=22)
    return ap.parse_args()


@cudaq.kernel
def ansatz(theta: float):
    q = cudaq.qvector(1)
    ry(theta, q[0])
    rx(theta, q[0])


HAMILTONIAN = spin.z(0)


class QuantumFunction(Function):
    """Expectation <Z> of the ansatz with parameter-shift backward."""

    @staticmethod
    def run(theta_vals: torch.Tensor, n_qpus: int) -> torch.Tensor:
        thetas = theta_vals.detach().cpu().numpy().reshape(-1)
        if n_qpus > 1:
            futures = [cudaq.observe_async(ansatz, HAMILTONIAN, float(t), qpu_id=i % n_qpus)
                       for i, t in enumerate(thetas)]
            vals = [f.get().expectation() for f in futures]
        else:
            vals = [cudaq.observe(ansatz, HAMILTONIAN, float(t)).expectation() for t in thetas]
        return torch.tensor(vals, dtype=torch.float32, device=theta_vals.device).reshape(theta_vals.shape)

    @staticmethod
    def forward(ctx, thetas, shift, n_qpus):
        ctx.shift = shift
        ctx.n_qpus = n_qpus
        ctx.save_for_backward(thetas)
        return QuantumFunction.run(thetas, n_qpus)

    @staticmethod
    def backward(ctx, grad_output):
        (thetas,) = ctx.saved_tensors
        plus = QuantumFunction.run(thetas + ctx.shift, ctx.n_qpus)
        minus = QuantumFunction.run(thetas - ctx.shift, ctx.n_qpus)
        grad = (plus - minus) / 2.0
        return grad * grad_output, None, None


class QuantumLayer(nn.Module):
    def __init__(self, shift, n_qpus):
        super().__init__()
        self.shift = shift
        self.n_qpus = n_qpus

    def forward(self, x):
        return QuantumFunction.apply(x, self.shift, self.n_qpus)


class Hybrid(nn.Module):
    def __init__(self, shift, n_qpus):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, kernel_size=5)
        self.conv2 = nn.Conv2d(6, 16, kernel_size=5)
        self.dropout = nn.Dropout2d(0.25)
        self.fc1 = nn.Linear(256, 64)
        self.fc2 = nn.Linear(64, 1)
        self.quantum = QuantumLayer(shift, n_qpus)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = self.dropout(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.fc2(x)
        x = torch.sigmoid(self.quantum(x))
        return torch.cat((x, 1 - x), -1)


def filtered_mnist(train, n, transform):
    ds = datasets.MNIST("./data", train=train, download=True, transform=transform)
    idx = np.concatenate([np.where(ds.targets == 0)[0][:n], np.where(ds.targets == 1)[0][:n]])
    ds.data, ds.targets = ds.data[idx], ds.targets[idx]
    return ds


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    cudaq.set_random_seed(args.seed)

    cudaq.set_target(args.target)
    n_qpus = cudaq.get_target().num_qpus() if args.target == "nvidia-mqpu" else 1
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    print(f"CUDA-Q target {args.target} ({n_qpus} QPU(s)), torch device {device}")

    tf = transforms.Compose([transforms.ToTensor()])
    train_loader = torch.utils.data.DataLoader(filtered_mnist(True, args.n_samples, tf),
                                               batch_size=1, shuffle=True)
    test_loader = torch.utils.data.DataLoader(filtered_mnist(False, args.n_samples // 2, tf),
                                              batch_size=1, shuffle=False)

    model = Hybrid(args.shift, n_qpus).to(device)
    optimizer = optim.Adam(model.parameters(), lr=args.lr)
    loss_func = nn.NLLLoss()

    for epoch in range(args.epochs):
        model.train()
        losses = []
        t0 = time.time()
        for data, target in train_loader:
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            output = model(data)
            loss = loss_func(torch.log(output + 1e-9), target)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        print(f"epoch {epoch + 1}/{args.epochs}  loss {np.mean(losses):.4f}  ({time.time() - t0:.1f}s)")

    model.eval()
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            pred = model(data).argmax(dim=1)
            correct += (pred == target).sum().item()
    print(f"test accuracy: {100.0 * correct / len(test_loader.dataset):.1f}%")


if __name__ == "__main__":
    main()
