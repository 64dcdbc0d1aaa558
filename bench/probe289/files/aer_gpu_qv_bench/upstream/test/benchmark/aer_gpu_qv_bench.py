"""Quantum-volume benchmark for Qiskit Aer on GPU, with a PyTorch sanity check.

Runs QV circuits of increasing width with ``AerSimulator(device='GPU')``
(optionally cuStateVec and chunked "blocking" for > 30 qubits or multi-GPU)
and compares the resulting statevector for the small widths against a
batched PyTorch statevector simulation on the same GPU.

Typical invocations:

    python aer_gpu_qv_bench.py --qubits 20 30 --shots 1000
    python aer_gpu_qv_bench.py --qubits 30 34 --blocking 28 --custatevec
    mpirun -np 4 python aer_gpu_qv_bench.py --qubits 32 36 --blocking 30 --mpi
"""

import argparse
import json
import os
import time

import numpy as np
import torch
from qiskit import transpile
from qiskit.circuit.library import QuantumVolume
from qiskit.quantum_info import Statevector
from qiskit_aer import AerSimulator, AerError


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--qubits", type=int, nargs=2, default=[16, 26])
    p.add_argument("--step", type=int, default=2)
    p.add_argument("--depth", type=int, default=None, help="QV depth, defaults to width")
    p.add_argument("--shots", type=int, default=0, help="0 = statevector only")
    p.add_argument("--precision", choices=["single", "double"], default="single")
    p.add_argument("--custatevec", action="store_true", help="use cuStateVec kernels")
    p.add_argument("--blocking", type=int, default=0,
                   help="chunk size in qubits for multi-GPU/host-memory blocking (0 = off)")
    p.add_argument("--batched-shots", action="store_true",
                   help="GPU batched shots optimisation for noisy sampling")
    p.add_argument("--mpi", action="store_true")
    p.add_argument("--check-torch", type=int, default=14,
                   help="cross-check against torch statevector up to this width")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--out", default="qv_gpu.json")
    return p.parse_args()


def make_backend(args):
    opts = dict(
        method="statevector",
        device="GPU",
        precision=args.precision,
        max_parallel_experiments=1,
    )
    if args.custatevec:
        opts["cuStateVec_enable"] = True
    if args.blocking:
        opts["blocking_enable"] = True
        opts["blocking_qubits"] = args.blocking
    if args.batched_shots:
        opts["batched_shots_gpu"] = True
        opts["batched_shots_gpu_max_qubits"] = 16
    try:
        backend = AerSimulator(**opts)
    except AerError as err:
        raise SystemExit(f"cannot create a GPU AerSimulator ({err}); is qiskit-aer-gpu installed?")
    if "GPU" not in backend.available_devices():
        raise SystemExit("qiskit-aer was built without GPU support; pip install qiskit-aer-gpu")
    return backend


# ---------------------------------------------------------------------------
# PyTorch reference: apply the unitary gates of a transpiled circuit to a
# complex state vector.  Only for small widths (dense 4x4 per 2-qubit gate).
# ---------------------------------------------------------------------------
def torch_statevector(circ, device, dtype=torch.complex64):
    n = circ.num_qubits
    psi = torch.zeros([2] * n, dtype=dtype, device=device)
    psi.view(-1)[0] = 1.0
    for inst in circ.data:
        op = inst.operation
        if op.name in ("barrier", "measure"):
            continue
        qubits = [circ.find_bit(q).index for q in inst.qubits]
        mat = torch.as_tensor(np.asarray(op.to_matrix()), dtype=dtype, device=device)
        k = len(qubits)
        mat = mat.reshape([2] * (2 * k))
        # qiskit is little-endian: qubit 0 is the last tensor axis
        axes = [n - 1 - q for q in reversed(qubits)]
        psi = torch.tensordot(mat, psi, dims=(list(range(k, 2 * k)), axes))
        psi = torch.movedim(psi, list(range(k)), axes)
    return psi.reshape(-1)


def fidelity(a, b):
    a = a / torch.linalg.vector_norm(a)
    b = b / torch.linalg.vector_norm(b)
    return torch.abs(torch.vdot(a, b)).item() ** 2


def main():
    args = parse_args()
    backend = make_backend(args)
    torch_device = torch.device("cuda:0")
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))

    records = []
    for n in range(args.qubits[0], args.qubits[1] + 1, args.step):
        depth = args.depth or n
        qv = QuantumVolume(n, depth, seed=1234)
        circ = transpile(qv, basis_gates=["u", "cx"], optimization_level=0)
        if args.shots:
            circ.measure_all()
        else:
            circ.save_statevector()

        times = []
        result = None
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            result = backend.run(circ, shots=args.shots or None).result()
            times.append(time.perf_counter() - t0)
        meta = result.results[0].metadata
        rec = {
            "qubits": n,
            "depth": depth,
            "median_s": float(np.median(times)),
            "device": meta.get("device"),
            "cuStateVec_enable": meta.get("cuStateVec_enable", False),
            "chunk_qubits": meta.get("chunk_parallel_gpus") and meta.get("chunk_qubits"),
            "gpu_parallel_shots": meta.get("gpu_parallel_shots_"),
        }

        if not args.shots and n <= args.check_torch:
            sv_aer = torch.as_tensor(np.asarray(result.get_statevector()), device=torch_device)
            t0 = time.perf_counter()
            sv_t = torch_statevector(circ.remove_final_measurements(inplace=False), torch_device)
            torch.cuda.synchronize()
            rec["torch_s"] = time.perf_counter() - t0
            rec["fidelity_vs_torch"] = fidelity(sv_aer.to(sv_t.dtype), sv_t)

        records.append(rec)
        if rank == 0:
            print(json.dumps(rec))

    if rank == 0:
        with open(args.out, "w") as f:
            json.dump(records, f, indent=1)


if __name__ == "__main__":
    main()
