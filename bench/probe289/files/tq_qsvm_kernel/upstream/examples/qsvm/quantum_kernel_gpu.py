"""Quantum-kernel SVM with the kernel matrix computed on the GPU.

K(x, x') = |<phi(x)|phi(x')>|^2 where |phi(x)> is a ZZ-feature-map state.
All training states are simulated in one batch with torchquantum, then the
Gram matrix is a single complex matmul per chunk.  For n_train in the tens
of thousands the state matrix does not fit at once, so the rows are
processed in chunks sized from the free GPU memory.

    python quantum_kernel_gpu.py --dataset ad_hoc --n-wires 8 --n-train 4000
"""

import argparse
import math
import time

import numpy as np
import torch
import torchquantum as tq
import torchquantum.functional as tqf
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC


class ZZFeatureMap(tq.QuantumModule):
    def __init__(self, n_wires, reps=2):
        super().__init__()
        self.n_wires = n_wires
        self.reps = reps

    @tq.static_support
    def forward(self, qdev, x):
        for _ in range(self.reps):
            for w in range(self.n_wires):
                tqf.h(qdev, wires=w)
                tqf.rz(qdev, wires=w, params=2.0 * x[:, w])
            for w in range(self.n_wires - 1):
                phi = 2.0 * (math.pi - x[:, w]) * (math.pi - x[:, w + 1])
                tqf.cnot(qdev, wires=[w, w + 1])
                tqf.rz(qdev, wires=w + 1, params=phi)
                tqf.cnot(qdev, wires=[w, w + 1])


@torch.no_grad()
def feature_states(fmap, x, device, chunk):
    """Return a [n, 2**n_wires] complex64 matrix of feature states."""
    out = []
    for i in range(0, x.shape[0], chunk):
        xb = x[i:i + chunk].to(device)
        qdev = tq.QuantumDevice(n_wires=fmap.n_wires, bsz=xb.shape[0], device=device)
        fmap(qdev, xb)
        out.append(qdev.get_states_1d())
    return torch.cat(out, dim=0)


@torch.no_grad()
def kernel_matrix(states_a, states_b, row_chunk):
    rows = []
    for i in range(0, states_a.shape[0], row_chunk):
        overlap = states_a[i:i + row_chunk].conj() @ states_b.T
        rows.append((overlap.abs() ** 2).float().cpu())
    return torch.cat(rows, dim=0).numpy()


def pick_chunk(n_wires, n_cols, device, fraction=0.6):
    """Rows per chunk so that chunk x n_cols complex64 fits in free memory."""
    if device.type != "cuda":
        return 512
    free, _ = torch.cuda.mem_get_info(device)
    bytes_per_row = 8 * max(n_cols, 2**n_wires) * 3  # overlap + abs + temporaries
    return max(16, int(free * fraction) // bytes_per_row)


def load_data(name, n_wires, n_train, n_test, seed):
    if name == "synthetic":
        X, y = make_classification(n_samples=n_train + n_test, n_features=n_wires,
                                   n_informative=n_wires, n_redundant=0, random_state=seed)
    elif name == "ad_hoc":
        from qiskit_machine_learning.datasets import ad_hoc_data

        Xtr, ytr, Xte, yte = ad_hoc_data(training_size=n_train // 2, test_size=n_test // 2,
                                         n=n_wires, gap=0.3, one_hot=False)
        X = np.concatenate([Xtr, Xte])
        y = np.concatenate([ytr, yte])
    else:
        raise ValueError(name)
    X = MinMaxScaler((0, np.pi)).fit_transform(X)
    return train_test_split(X, y, train_size=n_train, test_size=n_test, random_state=seed, stratify=y)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dataset", default="synthetic", choices=["synthetic", "ad_hoc"])
    p.add_argument("--n-wires", type=int, default=6)
    p.add_argument("--reps", type=int, default=2)
    p.add_argument("--n-train", type=int, default=1000)
    p.add_argument("--n-test", type=int, default=250)
    p.add_argument("--C", type=float, default=1.0)
    p.add_argument("--state-chunk", type=int, default=2048)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cpu", action="store_true")
    args = p.parse_args()

    torch.manual_seed(args.seed)
    device = torch.device("cpu" if args.cpu or not torch.cuda.is_available() else "cuda")
    print(f"device: {device}")

    Xtr, Xte, ytr, yte = load_data(args.dataset, args.n_wires, args.n_train, args.n_test, args.seed)
    Xtr_t = torch.tensor(Xtr, dtype=torch.float32)
    Xte_t = torch.tensor(Xte, dtype=torch.float32)

    fmap = ZZFeatureMap(args.n_wires, args.reps).to(device)

    t0 = time.time()
    S_tr = feature_states(fmap, Xtr_t, device, args.state_chunk)
    S_te = feature_states(fmap, Xte_t, device, args.state_chunk)
    if device.type == "cuda":
        torch.cuda.synchronize()
    t_states = time.time() - t0

    row_chunk = pick_chunk(args.n_wires, S_tr.shape[0], device)
    t0 = time.time()
    K_tr = kernel_matrix(S_tr, S_tr, row_chunk)
    K_te = kernel_matrix(S_te, S_tr, row_chunk)
    t_kernel = time.time() - t0

    del S_tr, S_te
    torch.cuda.empty_cache()

    svc = SVC(kernel="precomputed", C=args.C)
    svc.fit(K_tr, ytr)
    acc_tr = svc.score(K_tr, ytr)
    acc_te = svc.score(K_te, yte)

    print(f"states: {t_states:.2f}s  kernel: {t_kernel:.2f}s  (row chunk {row_chunk})")
    print(f"train acc {acc_tr:.4f}  test acc {acc_te:.4f}  n_sv {svc.n_support_.sum()}")
    if torch.cuda.is_available() and not args.cpu:
        print(f"peak GPU memory: {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
