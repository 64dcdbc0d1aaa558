"""
Distributed FWI: every process owns one GPU and a subset of the shots, the
gradient with respect to the velocity model is all-reduced with
DistributedDataParallel (as in the "Parallelism" example of the Deepwave docs,
but with torch.distributed instead of DataParallel so it scales across nodes).

Single node:   python fwi_distributed.py --world-size 4
Multi node:    torchrun --nnodes 2 --nproc_per_node 4 --rdzv_backend c10d \
                   --rdzv_endpoint $MASTER_ADDR:29500 fwi_distributed.py --torchrun
"""
import argparse
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from scipy.ndimage import gaussian_filter
from torch.nn.parallel import DistributedDataParallel as DDP

import deepwave
from deepwave import scalar


class Model(torch.nn.Module):
    def __init__(self, initial, min_vel, max_vel):
        super().__init__()
        self.min_vel = min_vel
        self.max_vel = max_vel
        self.model = torch.nn.Parameter(torch.logit((initial - min_vel) / (max_vel - min_vel)))

    def forward(self):
        return torch.sigmoid(self.model) * (self.max_vel - self.min_vel) + self.min_vel


class Prop(torch.nn.Module):
    def __init__(self, model, dx, dt, freq):
        super().__init__()
        self.model = model
        self.dx = dx
        self.dt = dt
        self.freq = freq

    def forward(self, source_amplitudes, source_locations, receiver_locations):
        v = self.model()
        return scalar(
            v, self.dx, self.dt,
            source_amplitudes=source_amplitudes,
            source_locations=source_locations,
            receiver_locations=receiver_locations,
            max_vel=2500,
            pml_freq=self.freq,
            time_pad_frac=0.2,
        )


def setup(rank, world_size, use_torchrun):
    if use_torchrun:
        dist.init_process_group("nccl")
    else:
        os.environ["MASTER_ADDR"] = "localhost"
        os.environ["MASTER_PORT"] = "12355"
        dist.init_process_group("nccl", rank=rank, world_size=world_size)


def cleanup():
    dist.destroy_process_group()


def load_data(n_shots, device):
    ny, nx, dx = 2301, 751, 4.0
    v_true = torch.from_file("marmousi_vp.bin", size=ny * nx).reshape(ny, nx)[:600, :250]
    observed = torch.from_file("marmousi_data.bin", size=n_shots * 384 * 750).reshape(n_shots, 384, 750)
    v_init = torch.tensor(1 / gaussian_filter(1 / v_true.numpy(), 40))
    return v_init, observed, dx


def run_rank(rank, world_size, args):
    setup(rank, world_size, args.torchrun)
    if args.torchrun:
        rank = dist.get_rank()
        local_rank = int(os.environ["LOCAL_RANK"])
    else:
        local_rank = rank
    torch.cuda.set_device(local_rank)
    device = torch.device(f"cuda:{local_rank}")

    n_shots = args.n_shots
    freq, nt, dt = 25, 750, 0.004
    peak_time = 1.5 / freq
    v_init, observed_data, dx = load_data(n_shots, device)

    # Split the shots between ranks
    shots = torch.chunk(torch.arange(n_shots), world_size)[rank]
    n_local = len(shots)

    source_locations = torch.zeros(n_shots, 1, 2, dtype=torch.long)
    source_locations[..., 1] = 2
    source_locations[:, 0, 0] = torch.arange(n_shots) * 2 + 5
    receiver_locations = torch.zeros(n_shots, 384, 2, dtype=torch.long)
    receiver_locations[..., 1] = 2
    receiver_locations[:, :, 0] = (torch.arange(384) * 6).repeat(n_shots, 1)
    source_amplitudes = deepwave.wavelets.ricker(freq, nt, dt, peak_time).repeat(n_shots, 1, 1)

    source_amplitudes = source_amplitudes[shots].to(device)
    source_locations = source_locations[shots].to(device)
    receiver_locations = receiver_locations[shots].to(device)
    observed_data = observed_data[shots].to(device)

    model = Model(v_init, 1000, 2500)
    prop = Prop(model, dx, dt, freq).to(device)
    prop = DDP(prop, device_ids=[local_rank])
    optimiser = torch.optim.SGD(prop.parameters(), lr=args.lr, momentum=0.9)
    loss_fn = torch.nn.MSELoss()

    if rank == 0:
        print(f"{world_size} ranks, {n_local} shots per rank, backend {dist.get_backend()}")

    for epoch in range(args.n_epochs):
        t0 = time.time()
        optimiser.zero_grad()
        out = prop(source_amplitudes, source_locations, receiver_locations)[-1]
        loss = loss_fn(out, observed_data)
        loss.backward()
        # clip on the globally reduced gradient (DDP already averaged it)
        torch.nn.utils.clip_grad_norm_(prop.parameters(), 1e3)
        optimiser.step()

        loss_t = loss.detach().clone()
        dist.all_reduce(loss_t, op=dist.ReduceOp.SUM)
        if rank == 0:
            torch.cuda.synchronize()
            print(f"epoch {epoch:3d}  loss {loss_t.item() / world_size:.5e}  {time.time() - t0:.2f} s")

    if rank == 0:
        v = model().detach().cpu().numpy()
        np.save(args.out, v)
        print("saved", args.out)

    dist.barrier()
    cleanup()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--world-size", type=int, default=torch.cuda.device_count())
    parser.add_argument("--torchrun", action="store_true", help="launched with torchrun (env:// init)")
    parser.add_argument("--n-shots", type=int, default=96)
    parser.add_argument("--n-epochs", type=int, default=100)
    parser.add_argument("--lr", type=float, default=1e8)
    parser.add_argument("--out", default="v_distributed.npy")
    args = parser.parse_args()

    if args.torchrun:
        run_rank(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args)
    else:
        mp.spawn(run_rank, args=(args.world_size, args), nprocs=args.world_size, join=True)


if __name__ == "__main__":
    main()
