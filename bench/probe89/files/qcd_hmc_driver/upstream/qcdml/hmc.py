"""Ensemble generation driver: independent HMC streams, one per GPU, coordinated with MPI.

Each MPI rank runs its own Markov chain (different seed) on its own GPU; rank 0 gathers
acceptance rates / plaquettes with mpi4py and writes the ensemble metadata. Configurations are
saved per rank as they are produced.

    mpirun -np 16 python -m qcdml.hmc --lattice 16 16 16 32 --beta 6.0 --ntraj 2000
"""
import argparse
import json
import os
import pathlib
import time

import numpy as np
import torch
from mpi4py import MPI

from qcdml.gauge import SU3Field, plaquette, wilson_action, random_su3_algebra, expm_su3
from qcdml.ops.dslash import conjugate_gradient

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
size = comm.Get_size()

# one GPU per rank, round-robin over the GPUs of the node
local_rank = int(os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", rank)) % torch.cuda.device_count()
torch.cuda.set_device(local_rank)
DEVICE = torch.device("cuda", local_rank)

# cuSOLVER is much faster than MAGMA for the batched 3x3 eigensolves in expm_su3
torch.backends.cuda.preferred_linalg_library("cusolver")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--lattice", type=int, nargs=4, default=[8, 8, 8, 16], metavar=("X", "Y", "Z", "T"))
    p.add_argument("--beta", type=float, default=6.0)
    p.add_argument("--ntraj", type=int, default=1000)
    p.add_argument("--nmd", type=int, default=20, help="leapfrog steps per trajectory")
    p.add_argument("--tau", type=float, default=1.0, help="trajectory length")
    p.add_argument("--therm", type=int, default=200)
    p.add_argument("--save-every", type=int, default=10)
    p.add_argument("--out", default="ensembles")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--cold-start", action="store_true")
    return p.parse_args()


def momentum_refresh(shape, generator):
    """Gaussian su(3) momenta, one per link."""
    return random_su3_algebra(shape, generator=generator, device=DEVICE, dtype=torch.complex128)


def kinetic(P: torch.Tensor) -> torch.Tensor:
    # 1/2 sum tr(P^2) for anti-Hermitian P (P = i H)
    return -0.5 * torch.einsum("...ab,...ba->", P, P).real


def leapfrog(U: SU3Field, P: torch.Tensor, beta: float, nmd: int, tau: float):
    eps = tau / nmd
    U = U.clone()
    P = P - 0.5 * eps * U.force(beta)
    for step in range(nmd):
        U.links = expm_su3(eps * P) @ U.links
        if step != nmd - 1:
            P = P - eps * U.force(beta)
    P = P - 0.5 * eps * U.force(beta)
    U.reunitarize_()
    return U, P


def hmc_trajectory(U: SU3Field, beta: float, nmd: int, tau: float, generator):
    P0 = momentum_refresh(U.links.shape[:-2], generator)
    H0 = kinetic(P0) + wilson_action(U, beta)
    U1, P1 = leapfrog(U, P0, beta, nmd, tau)
    H1 = kinetic(P1) + wilson_action(U1, beta)
    dH = (H1 - H0).item()
    accept = dH < 0 or torch.rand((), generator=generator, device=DEVICE).item() < np.exp(-dH)
    return (U1 if accept else U), accept, dH


def main():
    args = parse_args()
    out = pathlib.Path(args.out) / f"b{args.beta:.2f}_{'x'.join(map(str, args.lattice))}"
    if rank == 0:
        out.mkdir(parents=True, exist_ok=True)
    comm.Barrier()

    torch.manual_seed(args.seed + 1000 * rank)
    torch.cuda.manual_seed(args.seed + 1000 * rank)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(args.seed + 7919 * rank)

    U = SU3Field.cold(args.lattice, device=DEVICE) if args.cold_start else \
        SU3Field.random(args.lattice, device=DEVICE, generator=gen)

    if rank == 0:
        print(f"{size} streams on {size} GPUs ({torch.cuda.get_device_name(DEVICE)}), "
              f"lattice {args.lattice}, beta {args.beta}", flush=True)

    history = []
    n_acc = 0
    t_start = time.time()
    for traj in range(1, args.ntraj + 1):
        torch.cuda.synchronize()
        t0 = time.time()
        U, acc, dH = hmc_trajectory(U, args.beta, args.nmd, args.tau, gen)
        torch.cuda.synchronize(DEVICE)
        dt = time.time() - t0
        n_acc += int(acc)
        plaq = plaquette(U).item()
        history.append({"traj": traj, "acc": bool(acc), "dH": dH, "plaq": plaq, "sec": dt})

        if traj > args.therm and traj % args.save_every == 0:
            torch.save({"links": U.links.cpu(), "traj": traj, "rank": rank, "beta": args.beta},
                       out / f"cfg_r{rank:03d}_t{traj:06d}.pt")

        if traj % 50 == 0:
            # ensemble-wide acceptance and plaquette (host-side reductions)
            acc_rate = comm.allreduce(n_acc / traj, op=MPI.SUM) / size
            mean_plaq = comm.allreduce(plaq, op=MPI.SUM) / size
            if rank == 0:
                print(f"traj {traj:6d}  acc {acc_rate:.3f}  <P> {mean_plaq:.6f}  "
                      f"{dt:.2f}s/traj  mem {torch.cuda.max_memory_allocated(DEVICE) / 2**30:.2f} GiB",
                      flush=True)

    all_hist = comm.gather(history, root=0)
    if rank == 0:
        with open(out / "history.json", "w") as f:
            json.dump({"args": vars(args), "streams": all_hist,
                       "wallclock": time.time() - t_start}, f)
        print("done", flush=True)


if __name__ == "__main__":
    main()
