"""
Multi-GPU FWI with torch.nn.DataParallel, after the "Parallelism" section of the
Deepwave documentation: wrap the propagator in a Module so that DataParallel can
split the shots (batch dimension) across the visible GPUs.

    CUDA_VISIBLE_DEVICES=0,1,2,3 python fwi_dataparallel.py
"""
import time

import torch
from scipy.ndimage import gaussian_filter
from torch import nn

import deepwave


class Model(nn.Module):
    """Velocity model parametrised through a sigmoid to stay within [min_vel, max_vel]."""

    def __init__(self, initial, min_vel, max_vel):
        super().__init__()
        self.min_vel = min_vel
        self.max_vel = max_vel
        self.model = nn.Parameter(torch.logit((initial - min_vel) / (max_vel - min_vel)))

    def forward(self):
        return torch.sigmoid(self.model) * (self.max_vel - self.min_vel) + self.min_vel


class Prop(nn.Module):
    def __init__(self, model, dx, dt, freq):
        super().__init__()
        self.model = model
        self.dx = dx
        self.dt = dt
        self.freq = freq

    def forward(self, source_amplitudes, source_locations, receiver_locations):
        v = self.model()
        return deepwave.scalar(
            v, self.dx, self.dt,
            source_amplitudes=source_amplitudes,
            source_locations=source_locations,
            receiver_locations=receiver_locations,
            max_vel=2500,
            pml_freq=self.freq,
            time_pad_frac=0.2,
        )[-1]


def main():
    device = torch.device("cuda")
    n_gpus = torch.cuda.device_count()
    print(f"Using {n_gpus} GPUs: " + ", ".join(torch.cuda.get_device_name(i) for i in range(n_gpus)))

    ny, nx, dx = 2301, 751, 4.0
    v_true = torch.from_file("marmousi_vp.bin", size=ny * nx).reshape(ny, nx)
    ny, nx = 600, 250
    v_true = v_true[:ny, :nx]
    v_init = torch.tensor(1 / gaussian_filter(1 / v_true.numpy(), 40))

    n_shots = 120  # divisible by 1, 2, 3, 4, 6 GPUs
    n_receivers_per_shot = 384
    freq, nt, dt = 25, 750, 0.004
    peak_time = 1.5 / freq

    source_locations = torch.zeros(n_shots, 1, 2, dtype=torch.long)
    source_locations[..., 1] = 2
    source_locations[:, 0, 0] = torch.arange(n_shots) * 2 + 5
    receiver_locations = torch.zeros(n_shots, n_receivers_per_shot, 2, dtype=torch.long)
    receiver_locations[..., 1] = 2
    receiver_locations[:, :, 0] = (torch.arange(n_receivers_per_shot) * 6).repeat(n_shots, 1)
    source_amplitudes = deepwave.wavelets.ricker(freq, nt, dt, peak_time).repeat(n_shots, 1, 1)

    source_locations = source_locations.to(device)
    receiver_locations = receiver_locations.to(device)
    source_amplitudes = source_amplitudes.to(device)

    # observed data from the true model, also computed in parallel
    true_prop = nn.DataParallel(Prop(Model(v_true, 1000, 2500), dx, dt, freq)).to(device)
    with torch.no_grad():
        observed_data = true_prop(source_amplitudes, source_locations, receiver_locations)

    model = Model(v_init, 1000, 2500)
    prop = Prop(model, dx, dt, freq)
    prop = nn.DataParallel(prop).to(device)

    optimiser = torch.optim.Adam(prop.parameters(), lr=1e-2)
    loss_fn = nn.MSELoss()

    n_epochs = 50
    for epoch in range(n_epochs):
        t0 = time.time()
        optimiser.zero_grad()
        out = prop(source_amplitudes, source_locations, receiver_locations)
        loss = 1e9 * loss_fn(out, observed_data)
        loss.backward()
        torch.nn.utils.clip_grad_value_(prop.parameters(), torch.quantile(
            prop.module.model.model.grad.detach().abs(), 0.98))
        optimiser.step()
        torch.cuda.synchronize()
        print(f"epoch {epoch:3d} loss {loss.item():.5e} {time.time() - t0:.2f} s")

    v_out = model().detach().cpu()
    torch.save(v_out, "v_dataparallel.pt")


if __name__ == "__main__":
    main()
