"""
Variational quantum eigensolver on molecular Hamiltonians (H2, LiH, BeH2).

The Hamiltonian is read from a plain-text Pauli-string file produced by
``qiskit_nature`` / ``openfermion`` (one ``coeff PAULISTRING`` per line) and
the ansatz is a stack of U3 + CU3 layers.  Expectation values are computed
exactly from the state vector (``expval_joint_analytical``), which is where
the GPU helps: for 12+ qubits the batched state vector is the bottleneck.

Usage:
    python vqe.py --molecule h2 --n-blocks 4 --epochs 400
    python vqe.py --molecule lih --n-blocks 8 --epochs 1000 --exact
"""

import argparse
import os
import random
import time

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.optim.lr_scheduler import CosineAnnealingLR

import torchquantum as tq
from torchquantum.measurement import expval_joint_analytical
from torchquantum.algorithm import Hamiltonian


MOLECULE_FILES = {
    "h2": "h2.txt",
    "h2_new": "h2_new.txt",
    "lih": "lih.txt",
    "beh2": "beh2.txt",
}


class QVQEModel(tq.QuantumModule):
    def __init__(self, arch, hamil_info):
        super().__init__()
        self.arch = arch
        self.hamil_info = hamil_info
        self.n_wires = arch["n_wires"]
        self.n_blocks = arch["n_blocks"]
        self.u3_layers = tq.QuantumModuleList()
        self.cu3_layers = tq.QuantumModuleList()
        for _ in range(self.n_blocks):
            self.u3_layers.append(
                tq.Op1QAllLayer(
                    op=tq.U3,
                    n_wires=self.n_wires,
                    has_params=True,
                    trainable=True,
                )
            )
            self.cu3_layers.append(
                tq.Op2QAllLayer(
                    op=tq.CU3,
                    n_wires=self.n_wires,
                    has_params=True,
                    trainable=True,
                    circular=True,
                )
            )

    def forward(self):
        qdev = tq.QuantumDevice(
            n_wires=self.n_wires, bsz=1, device=next(self.parameters()).device
        )

        for k in range(self.n_blocks):
            self.u3_layers[k](qdev)
            self.cu3_layers[k](qdev)

        expval = 0
        for hamil in self.hamil_info["hamil_list"]:
            expval += (
                expval_joint_analytical(qdev, observable=hamil["pauli_string"])
                * hamil["coeff"]
            )

        return expval


def load_hamiltonian(path):
    """Parse ``coeff PAULI`` lines into the dict format the model expects."""
    hamil_list = []
    n_wires = None
    with open(path, "r") as rfid:
        for line in rfid:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split()
            coeff = float(parts[0])
            pauli = parts[1].upper()
            if n_wires is None:
                n_wires = len(pauli)
            assert len(pauli) == n_wires, f"inconsistent width in {path}: {line}"
            hamil_list.append({"coeff": coeff, "pauli_string": pauli})
    return {"hamil_list": hamil_list, "n_wires": n_wires}


PAULI = {
    "I": torch.tensor([[1, 0], [0, 1]], dtype=torch.complex64),
    "X": torch.tensor([[0, 1], [1, 0]], dtype=torch.complex64),
    "Y": torch.tensor([[0, -1j], [1j, 0]], dtype=torch.complex64),
    "Z": torch.tensor([[1, 0], [0, -1]], dtype=torch.complex64),
}


def dense_hamiltonian(hamil_info, device):
    """Build the 2^n x 2^n Hamiltonian matrix (only sensible for n <= 14)."""
    n = hamil_info["n_wires"]
    dim = 2**n
    H = torch.zeros(dim, dim, dtype=torch.complex64, device=device)
    for term in hamil_info["hamil_list"]:
        op = None
        for ch in term["pauli_string"]:
            p = PAULI[ch].to(device)
            op = p if op is None else torch.kron(op, p)
        H += term["coeff"] * op
    return H


def exact_ground_energy(hamil_info, device):
    """Reference energy from full diagonalisation of the dense matrix."""
    H = dense_hamiltonian(hamil_info, device)
    evals = torch.linalg.eigvalsh(H)
    return evals[0].real.item()


def train(model, optimizer, n_steps=1):
    for _ in range(n_steps):
        loss = model()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


def valid_test(model):
    with torch.no_grad():
        loss = model()
    return loss.item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--molecule", type=str, default="h2", choices=list(MOLECULE_FILES))
    parser.add_argument("--hamil-dir", type=str, default=os.path.join(os.path.dirname(__file__), "h2data"))
    parser.add_argument("--n-blocks", type=int, default=2)
    parser.add_argument("--steps-per-epoch", type=int, default=10)
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--lr", type=float, default=5e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--exact", action="store_true", help="also compute the exact ground energy on the GPU")
    parser.add_argument("--gpu", type=int, default=0, help="which CUDA device to use")
    parser.add_argument("--pdb", action="store_true", help="debug with pdb")
    args = parser.parse_args()

    if args.pdb:
        import pdb

        pdb.set_trace()

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.cuda.manual_seed(args.seed)

    hamil_info = load_hamiltonian(os.path.join(args.hamil_dir, MOLECULE_FILES[args.molecule]))
    n_wires = hamil_info["n_wires"]
    print(f"{args.molecule}: {n_wires} qubits, {len(hamil_info['hamil_list'])} Pauli terms")

    device = torch.device(f"cuda:{args.gpu}")

    model = QVQEModel(
        arch={"n_wires": n_wires, "n_blocks": args.n_blocks},
        hamil_info=hamil_info,
    ).to(device)

    optimizer = optim.Adam(model.parameters(), lr=args.lr, weight_decay=1e-4)
    scheduler = CosineAnnealingLR(optimizer, T_max=args.epochs)

    if args.exact and n_wires <= 14:
        t0 = time.time()
        e0 = exact_ground_energy(hamil_info, device)
        print(f"exact ground energy: {e0:.8f}  ({time.time() - t0:.2f}s)")
    else:
        e0 = None

    history = []
    for epoch in range(1, args.epochs + 1):
        loss = train(model, optimizer, n_steps=args.steps_per_epoch)
        scheduler.step()
        history.append(loss)
        if epoch % 10 == 0 or epoch == 1:
            msg = f"Epoch {epoch:4d}  energy {loss:.8f}  lr {optimizer.param_groups[0]['lr']:.2e}"
            if e0 is not None:
                msg += f"  err {abs(loss - e0):.2e}"
            print(msg)

    final = valid_test(model)
    print(f"\nfinal VQE energy: {final:.8f}")
    if e0 is not None:
        print(f"exact energy:     {e0:.8f}")
        print(f"abs error:        {abs(final - e0):.2e}")

    os.makedirs("checkpoints", exist_ok=True)
    torch.save(
        {"model": model.state_dict(), "energy": final, "history": history},
        os.path.join("checkpoints", f"vqe_{args.molecule}.pt"),
    )


if __name__ == "__main__":
    main()
