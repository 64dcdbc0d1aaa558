"""
Torch Connector and Hybrid QNNs on a GPU simulator
==================================================

Adapted from the Qiskit Machine Learning tutorial "Torch Connector and
Hybrid QNNs" (part 2: MNIST hybrid CNN).  Differences from the upstream
notebook:

* the classical CNN runs on the GPU (``--device cuda``),
* the quantum layer's ``EstimatorQNN`` uses Qiskit Aer's GPU statevector
  simulator (``qiskit-aer-gpu``) through the Aer Estimator primitive,
* training is wrapped in a small CLI so it can be launched from the lab's
  Slurm scripts.

Note that ``TorchConnector`` exchanges NumPy arrays with the QNN, so the
tensor entering the quantum layer is moved to the host and the result is
moved back to the training device inside ``HybridNet.forward``.
"""

import argparse
import time

import numpy as np
import matplotlib.pyplot as plt

import torch
from torch import cat, no_grad, manual_seed
from torch.nn import (
    Module,
    Conv2d,
    Linear,
    Dropout2d,
    NLLLoss,
)
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

from qiskit import QuantumCircuit
from qiskit.circuit.library import ZZFeatureMap, RealAmplitudes
from qiskit_aer import AerSimulator
from qiskit_aer.primitives import Estimator as AerEstimator
from qiskit_machine_learning.neural_networks import EstimatorQNN
from qiskit_machine_learning.connectors import TorchConnector
from qiskit_machine_learning.utils import algorithm_globals


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda", help="torch device for the classical part")
    parser.add_argument("--aer-device", default="GPU", choices=["CPU", "GPU"],
                        help="Aer simulation device for the quantum layer")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--n-train", type=int, default=100)
    parser.add_argument("--n-test", type=int, default=50)
    parser.add_argument("--lr", type=float, default=0.001)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--save", default="model_cnn.pt")
    return parser.parse_args()


def make_loaders(n_train, n_test, batch_size):
    # Train Dataset
    # -------------
    # Use pre-defined torchvision function to load MNIST train data
    X_train = datasets.MNIST(
        root="./data", train=True, download=True, transform=transforms.Compose([transforms.ToTensor()])
    )

    # Filter out labels (originally 0-9), leaving only labels 0 and 1
    idx = np.append(
        np.where(X_train.targets == 0)[0][:n_train], np.where(X_train.targets == 1)[0][:n_train]
    )
    X_train.data = X_train.data[idx]
    X_train.targets = X_train.targets[idx]

    # Define torch dataloader with filtered data
    train_loader = DataLoader(X_train, batch_size=batch_size, shuffle=True)

    # Test Dataset
    # -------------
    X_test = datasets.MNIST(
        root="./data", train=False, download=True, transform=transforms.Compose([transforms.ToTensor()])
    )
    idx = np.append(
        np.where(X_test.targets == 0)[0][:n_test], np.where(X_test.targets == 1)[0][:n_test]
    )
    X_test.data = X_test.data[idx]
    X_test.targets = X_test.targets[idx]
    test_loader = DataLoader(X_test, batch_size=batch_size, shuffle=True)
    return train_loader, test_loader


def make_estimator(aer_device, seed):
    """Aer Estimator primitive; ``device='GPU'`` needs the qiskit-aer-gpu wheel."""
    backend_options = {
        "method": "statevector",
        "device": aer_device,
        "precision": "single",
    }
    if aer_device == "GPU":
        # cuStateVec is faster than Aer's own kernels from ~20 qubits on,
        # for the 2-qubit layer here it mostly saves host<->device copies
        backend_options["cuStateVec_enable"] = True
    return AerEstimator(
        backend_options=backend_options,
        run_options={"seed": seed, "shots": None},
        approximation=True,
    )


def create_qnn(estimator):
    feature_map = ZZFeatureMap(2)
    ansatz = RealAmplitudes(2, reps=1)
    qc = QuantumCircuit(2)
    qc.compose(feature_map, inplace=True)
    qc.compose(ansatz, inplace=True)

    # REMEMBER TO SET input_gradients=True FOR ENABLING HYBRID GRADIENT BACKPROP
    qnn = EstimatorQNN(
        circuit=qc,
        estimator=estimator,
        input_params=feature_map.parameters,
        weight_params=ansatz.parameters,
        input_gradients=True,
    )
    return qnn


class HybridNet(Module):
    def __init__(self, qnn):
        super().__init__()
        self.conv1 = Conv2d(1, 2, kernel_size=5)
        self.conv2 = Conv2d(2, 16, kernel_size=5)
        self.dropout = Dropout2d()
        self.fc1 = Linear(256, 64)
        self.fc2 = Linear(64, 2)  # 2-dimensional input to QNN
        self.qnn = TorchConnector(qnn)  # Apply torch connector, weights chosen
        # uniformly at random from interval [-1,1].
        self.fc3 = Linear(1, 1)  # 1-dimensional output from QNN

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(x, 2)
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout(x)
        x = x.view(x.shape[0], -1)
        x = F.relu(self.fc1(x))
        x = self.fc2(x)
        # TorchConnector works on host tensors
        dev = x.device
        x = self.qnn(x.cpu()).to(dev)  # apply QNN
        x = self.fc3(x)
        return cat((x, 1 - x), -1)


def train(model, train_loader, optimizer, loss_func, device, epochs):
    loss_list = []  # Store loss history
    model.train()  # Set model to training mode

    for epoch in range(epochs):
        total_loss = []
        t0 = time.time()
        for batch_idx, (data, target) in enumerate(train_loader):
            data = data.cuda(non_blocking=True)
            target = target.cuda(non_blocking=True)
            optimizer.zero_grad(set_to_none=True)  # Initialize gradient
            output = model(data)  # Forward pass
            loss = loss_func(output, target)  # Calculate loss
            loss.backward()  # Backward pass
            optimizer.step()  # Optimize weights
            total_loss.append(loss.item())  # Store loss
        loss_list.append(sum(total_loss) / len(total_loss))
        print(
            "Training [{:.0f}%]\tLoss: {:.4f}\t({:.1f}s)".format(
                100.0 * (epoch + 1) / epochs, loss_list[-1], time.time() - t0
            )
        )
    return loss_list


def evaluate(model, test_loader, loss_func, device, batch_size):
    model.eval()  # set model to evaluation mode
    with no_grad():
        correct = 0
        total_loss = []
        for batch_idx, (data, target) in enumerate(test_loader):
            data, target = data.to(device), target.to(device)
            output = model(data)
            if len(output.shape) == 1:
                output = output.reshape(1, *output.shape)

            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()

            loss = loss_func(output, target)
            total_loss.append(loss.item())

        print(
            "Performance on test data:\n\tLoss: {:.4f}\n\tAccuracy: {:.1f}%".format(
                sum(total_loss) / len(total_loss), correct / len(test_loader) / batch_size * 100
            )
        )


def main():
    args = parse_args()
    manual_seed(args.seed)
    algorithm_globals.random_seed = args.seed

    device = torch.device(args.device)
    if device.type == "cuda":
        print(f"classical part on {torch.cuda.get_device_name(device)}")
    avail = AerSimulator().available_devices()
    print(f"Aer devices available: {avail}")

    train_loader, test_loader = make_loaders(args.n_train, args.n_test, args.batch_size)

    estimator = make_estimator(args.aer_device, args.seed)
    qnn = create_qnn(estimator)
    model = HybridNet(qnn).to(device)

    optimizer = optim.Adam(model.parameters(), lr=args.lr)
    loss_func = NLLLoss()

    loss_list = train(model, train_loader, optimizer, loss_func, device, args.epochs)

    plt.plot(loss_list)
    plt.title("Hybrid NN Training Convergence")
    plt.xlabel("Training Iterations")
    plt.ylabel("Neg. Log Likelihood Loss")
    plt.savefig("hybrid_training_loss.png")

    torch.save(model.state_dict(), args.save)

    # reload on the same device and evaluate
    qnn5 = create_qnn(estimator)
    model5 = HybridNet(qnn5)
    model5.load_state_dict(torch.load(args.save, map_location=device))
    model5.to(device)
    evaluate(model5, test_loader, loss_func, device, args.batch_size)


if __name__ == "__main__":
    main()
