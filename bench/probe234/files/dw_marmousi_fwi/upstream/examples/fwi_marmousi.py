"""
Full-waveform inversion of a section of the Marmousi model with Deepwave.

Follows the "Full-Waveform Inversion (FWI)" example of the Deepwave docs:
the true model is used to generate observed data, which is then inverted
starting from a smoothed model, with a low-pass frequency continuation.

Download the model first:
    wget https://www.geoazur.fr/WIND/pub/nfs/FWI-DATA/GEOMODELS/Marmousi/vp_marmousi-ii.segy.gz
    python convert_marmousi.py   # -> marmousi_vp.bin (float32, ny x nx)
"""
import argparse
import time

import matplotlib.pyplot as plt
import numpy as np
import torch
import torchaudio
from scipy.ndimage import gaussian_filter
from scipy.signal import butter

import deepwave
from deepwave import scalar

parser = argparse.ArgumentParser()
parser.add_argument("--model", default="marmousi_vp.bin")
parser.add_argument("--n-epochs", type=int, default=2)
parser.add_argument("--n-shots", type=int, default=115)
parser.add_argument("--batches", type=int, default=5)
parser.add_argument("--freqs", type=float, nargs="+", default=[10, 15, 20, 25, 30])
parser.add_argument("--out", default="fwi_result.npy")
parser.add_argument("--no-plot", action="store_true")
args = parser.parse_args()

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
print(f"Running on {device}")

ny = 2301
nx = 751
dx = 4.0
v_true = torch.from_file(args.model, size=ny * nx).reshape(ny, nx)

# Select portion of model for inversion
ny = 600
nx = 250
v_true = v_true[:ny, :nx]

# Smooth to use as starting model
v_init = torch.tensor(1 / gaussian_filter(1 / v_true.numpy(), 40)).to(device)
v = v_init.clone()
v.requires_grad_()

n_shots = args.n_shots
n_sources_per_shot = 1
d_source = 20  # 20 * 4m = 80m
first_source = 10  # 10 * 4m = 40m
source_depth = 2  # 2 * 4m = 8m

n_receivers_per_shot = 384
d_receiver = 6  # 6 * 4m = 24m
first_receiver = 0  # 0 * 4m = 0m
receiver_depth = 2  # 2 * 4m = 8m

freq = 25
nt = 750
dt = 0.004
peak_time = 1.5 / freq

# source_locations
source_locations = torch.zeros(n_shots, n_sources_per_shot, 2, dtype=torch.long, device=device)
source_locations[..., 1] = source_depth
source_locations[:, 0, 0] = torch.arange(n_shots) * d_source + first_source

# receiver_locations
receiver_locations = torch.zeros(n_shots, n_receivers_per_shot, 2, dtype=torch.long, device=device)
receiver_locations[..., 1] = receiver_depth
receiver_locations[:, :, 0] = (
    (torch.arange(n_receivers_per_shot) * d_receiver + first_receiver).repeat(n_shots, 1)
)

# source_amplitudes
source_amplitudes = (
    deepwave.wavelets.ricker(freq, nt, dt, peak_time)
    .repeat(n_shots, n_sources_per_shot, 1)
    .to(device)
)

# Generate "observed" data with the true model
t0 = time.time()
with torch.no_grad():
    observed_data = scalar(
        v_true.to(device), dx, dt,
        source_amplitudes=source_amplitudes,
        source_locations=source_locations,
        receiver_locations=receiver_locations,
        accuracy=8,
        pml_freq=freq,
    )[-1]
torch.cuda.synchronize()  # kernels are asynchronous, wait before reading the clock
print(f"Forward modelling of {n_shots} shots: {time.time() - t0:.1f} s")

# Setup optimiser to perform inversion
loss_fn = torch.nn.MSELoss()

# Run optimisation/inversion
n_batch = args.batches
n_shots_per_batch = (n_shots + n_batch - 1) // n_batch
for cutoff_freq in args.freqs:
    sos = butter(6, cutoff_freq, fs=1 / dt, output="sos")
    sos = [torch.tensor(sosi).to(observed_data.dtype).to(device) for sosi in sos]

    def filt(x):
        return torchaudio.functional.biquad(
            torchaudio.functional.biquad(
                torchaudio.functional.biquad(x, *sos[0]), *sos[1]
            ), *sos[2]
        )

    observed_data_filt = filt(observed_data)
    optimiser = torch.optim.LBFGS([v], line_search_fn="strong_wolfe")
    for epoch in range(args.n_epochs):
        t_epoch = time.time()

        def closure():
            optimiser.zero_grad()
            total_loss = 0.0
            for batch in range(n_batch):
                batch_start = batch * n_shots_per_batch
                batch_end = min(batch_start + n_shots_per_batch, n_shots)
                if batch_end <= batch_start:
                    continue
                s = slice(batch_start, batch_end)
                out = scalar(
                    v, dx, dt,
                    source_amplitudes=source_amplitudes[s],
                    source_locations=source_locations[s],
                    receiver_locations=receiver_locations[s],
                    max_vel=2500,
                    pml_freq=freq,
                    time_pad_frac=0.2,
                )
                out_filt = filt(out[-1])
                loss = 1e6 * loss_fn(out_filt, observed_data_filt[s])
                loss.backward()
                total_loss += loss.item()
            return total_loss

        loss_val = optimiser.step(closure)
        torch.cuda.synchronize()
        print(f"f={cutoff_freq:4.1f} Hz epoch {epoch}: loss {loss_val:.4e} "
              f"({time.time() - t_epoch:.1f} s, peak mem {torch.cuda.max_memory_allocated() / 1e9:.2f} GB)")

v_out = v.detach().cpu().numpy()
np.save(args.out, v_out)

if not args.no_plot:
    vmin = v_true.min()
    vmax = v_true.max()
    _, ax = plt.subplots(3, figsize=(10.5, 10.5), sharex=True, sharey=True)
    ax[0].imshow(v_init.cpu().T, aspect="auto", cmap="gray", vmin=vmin, vmax=vmax)
    ax[0].set_title("Initial")
    ax[1].imshow(v_out.T, aspect="auto", cmap="gray", vmin=vmin, vmax=vmax)
    ax[1].set_title("Out")
    ax[2].imshow(v_true.cpu().T, aspect="auto", cmap="gray", vmin=vmin, vmax=vmax)
    ax[2].set_title("True")
    plt.tight_layout()
    plt.savefig("example_increasing_freq_fwi.jpg")
