"""Adjoint-gradient benchmark for PennyLane-Lightning GPU (cuStateVec).

Times forward + adjoint Jacobian of a strongly entangling circuit with many
observables on ``lightning.gpu`` and, for reference, ``lightning.qubit`` and
``default.qubit`` with the torch interface.  With ``--mpi`` the state vector
is distributed over all ranks of ``mpirun`` (one GPU per rank), which is how
the 30+ qubit points in the scaling plot were produced:

    mpirun -np 4 python lightning_gpu_adjoint.py --mpi --wires 30 32 \
        --layers 2 --obs 8 --repeat 3

Results are appended to a CSV so several runs can be merged.
"""

import argparse
import csv
import os
import socket
import sys
import time
from statistics import median

import pennylane as qml
import torch
from pennylane import numpy as pnp


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--wires", type=int, nargs=2, default=[12, 24])
    p.add_argument("--step", type=int, default=2)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--obs", type=int, default=4, help="number of Pauli-Z observables")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--devices", nargs="+", default=["lightning.gpu", "lightning.qubit", "default.qubit"])
    p.add_argument("--mpi", action="store_true", help="distribute lightning.gpu over MPI ranks")
    p.add_argument("--batch-obs", action="store_true", help="spread observables over GPUs")
    p.add_argument("--csv", default="results/lightning_gpu_adjoint.csv")
    return p.parse_args()


def setup_mpi():
    """Bind each MPI rank to one GPU *before* the device is created."""
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    local_rank = int(os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK",
                                    os.environ.get("MPI_LOCALRANKID", rank)))
    n_gpus = torch.cuda.device_count()
    os.environ["CUDA_VISIBLE_DEVICES"] = str(local_rank % max(n_gpus, 1))
    return comm, rank, size


def make_device(name, n_wires, args):
    if name == "lightning.gpu":
        kwargs = {"wires": n_wires, "batch_obs": args.batch_obs}
        if args.mpi:
            kwargs["mpi"] = True
            # cuStateVec needs 2^k ranks; the buffer is per-rank scratch space
            kwargs["mpi_buf_size"] = 64
        return qml.device("lightning.gpu", **kwargs)
    if name == "lightning.qubit":
        return qml.device("lightning.qubit", wires=n_wires, batch_obs=args.batch_obs)
    if name == "default.qubit":
        return qml.device("default.qubit", wires=n_wires)
    raise ValueError(name)


def make_circuit(dev, n_wires, n_layers, n_obs, interface):
    diff = "adjoint" if dev.name.startswith("lightning") or "lightning" in str(dev) else "backprop"

    @qml.qnode(dev, interface=interface, diff_method=diff)
    def circuit(weights):
        qml.StronglyEntanglingLayers(weights, wires=range(n_wires))
        return [qml.expval(qml.PauliZ(i)) for i in range(n_obs)]

    return circuit


def bench_one(name, n_wires, args, rank):
    dev = make_device(name, n_wires, args)
    shape = qml.StronglyEntanglingLayers.shape(n_layers=args.layers, n_wires=n_wires)

    if name == "default.qubit":
        interface = "torch"
        weights = torch.rand(shape, dtype=torch.float64, requires_grad=True)
    else:
        interface = "autograd"
        weights = pnp.random.random(shape, requires_grad=True)

    circuit = make_circuit(dev, n_wires, args.layers, args.obs, interface)

    def run():
        if interface == "torch":
            out = torch.stack(circuit(weights))
            out.sum().backward()
        else:
            qml.jacobian(lambda w: qml.math.stack(circuit(w)))(weights)

    run()  # warm-up, includes cuStateVec handle + workspace allocation
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return median(times)


def main():
    args = parse_args()

    comm, rank, size = (None, 0, 1)
    if args.mpi:
        comm, rank, size = setup_mpi()

    if rank == 0:
        print(f"PennyLane {qml.__version__} | torch {torch.__version__} | ranks {size}")
        try:
            import pennylane_lightning

            print(f"lightning {pennylane_lightning.__version__}")
        except ImportError:
            pass

    rows = []
    for name in args.devices:
        if args.mpi and name != "lightning.gpu":
            continue
        for n_wires in range(args.wires[0], args.wires[1] + 1, args.step):
            if name == "default.qubit" and n_wires > 20:
                continue
            try:
                t = bench_one(name, n_wires, args, rank)
            except (qml.DeviceError, ImportError, RuntimeError) as err:
                if rank == 0:
                    print(f"{name:16s} n={n_wires:2d}: skipped ({err})", file=sys.stderr)
                continue
            if rank == 0:
                print(f"{name:16s} n={n_wires:2d} layers={args.layers} obs={args.obs}: {t:8.3f} s")
                rows.append({
                    "host": socket.gethostname(),
                    "device": name,
                    "ranks": size,
                    "n_wires": n_wires,
                    "layers": args.layers,
                    "obs": args.obs,
                    "batch_obs": args.batch_obs,
                    "median_s": f"{t:.6f}",
                })
        if comm is not None:
            comm.Barrier()

    if rank == 0 and rows:
        os.makedirs(os.path.dirname(args.csv) or ".", exist_ok=True)
        new = not os.path.exists(args.csv)
        with open(args.csv, "a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            if new:
                w.writeheader()
            w.writerows(rows)
        print(f"appended {len(rows)} rows to {args.csv}")


if __name__ == "__main__":
    main()
