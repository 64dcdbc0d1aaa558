"""Amortized posterior estimation for galaxy-galaxy strong lenses with sbi (SNPE-C / APT).

Parameters (6): Einstein radius theta_E [arcsec], ellipticity (e1, e2), external shear (g1, g2),
and source Sersic index n. Observations are 64x64 HST-like cutouts (0.05"/pix) with Gaussian noise.

Simulating 500k lenses on the GPU takes ~3 minutes; on CPU it is the bottleneck (hours), so we keep
the simulator, the prior and the density estimator all on the same CUDA device.

    python examples/lens_snpe.py --num-sims 500000 --rounds 1 --out results/snpe_sie
"""
import argparse
import os
import pickle
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sbi.inference import SNPE, simulate_for_sbi
from sbi.neural_nets import posterior_nn
from sbi.utils import BoxUniform
from sbi.utils.user_input_checks import check_sbi_inputs, process_prior, process_simulator

from lensing.simulator import SIELensSimulator


LABELS = [r"$\theta_E$", r"$e_1$", r"$e_2$", r"$\gamma_1$", r"$\gamma_2$", r"$n_{\rm src}$"]


class LensCNN(nn.Module):
    """Small ResNet-ish embedding network: 64x64 image -> 64-d summary."""

    def __init__(self, out_features: int = 64, width: int = 32):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1), nn.GELU(),
            nn.Conv2d(width, width, 3, padding=1), nn.GELU(),
            nn.MaxPool2d(2),                                   # 32
            nn.Conv2d(width, 2 * width, 3, padding=1), nn.GELU(),
            nn.Conv2d(2 * width, 2 * width, 3, padding=1), nn.GELU(),
            nn.MaxPool2d(2),                                   # 16
            nn.Conv2d(2 * width, 4 * width, 3, padding=1), nn.GELU(),
            nn.MaxPool2d(2),                                   # 8
            nn.Conv2d(4 * width, 4 * width, 3, padding=1), nn.GELU(),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )
        self.fc = nn.Sequential(nn.Linear(4 * width, 128), nn.GELU(), nn.Linear(128, out_features))

    def forward(self, x):
        # sbi hands us flattened observations
        x = x.view(-1, 1, 64, 64)
        return self.fc(self.net(x))


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--num-sims", type=int, default=200_000)
    p.add_argument("--rounds", type=int, default=1, help="1 = amortized NPE, >1 = sequential (needs --observation)")
    p.add_argument("--observation", type=str, default=None, help="torch .pt file with a 64x64 observed cutout")
    p.add_argument("--noise-sigma", type=float, default=0.02)
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--num-workers", type=int, default=1, help="simulation workers (1 when simulating on GPU)")
    p.add_argument("--out", type=str, default="results/snpe_sie")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)

    # --- prior: lives on the GPU so simulate_for_sbi draws theta there directly ---
    low = torch.tensor([0.5, -0.3, -0.3, -0.1, -0.1, 0.8])
    high = torch.tensor([2.0, 0.3, 0.3, 0.1, 0.1, 4.0])
    prior = BoxUniform(low=low, high=high, device="cuda")

    simulator = SIELensSimulator(npix=64, pixscale=0.05, noise_sigma=args.noise_sigma, device="cuda")

    prior, num_parameters, prior_returns_numpy = process_prior(prior)
    simulator = process_simulator(simulator, prior, prior_returns_numpy)
    check_sbi_inputs(simulator, prior)

    embedding_net = LensCNN(out_features=64)
    density_estimator_build_fun = posterior_nn(
        model="nsf",
        embedding_net=embedding_net,
        hidden_features=128,
        num_transforms=8,
        z_score_x="independent",
    )
    inference = SNPE(prior=prior, density_estimator=density_estimator_build_fun, device="cuda")

    x_o = None
    if args.observation is not None:
        x_o = torch.load(args.observation).reshape(1, -1).cuda()

    proposal = prior
    posteriors = []
    for r in range(args.rounds):
        t0 = time.time()
        theta, x = simulate_for_sbi(
            simulator,
            proposal,
            num_simulations=args.num_sims // args.rounds,
            num_workers=args.num_workers,
            simulation_batch_size=2000,
        )
        torch.cuda.synchronize()
        print(f"[round {r}] simulated {len(theta)} lenses in {time.time() - t0:.1f}s")

        density_estimator = inference.append_simulations(theta, x, proposal=proposal).train(
            training_batch_size=args.batch_size,
            learning_rate=args.lr,
            show_train_summary=True,
        )
        posterior = inference.build_posterior(density_estimator)
        posteriors.append(posterior)
        if x_o is not None and args.rounds > 1:
            proposal = posterior.set_default_x(x_o)

    with open(os.path.join(args.out, "posterior.pkl"), "wb") as f:
        pickle.dump(posteriors[-1], f)

    if x_o is not None:
        samples = posteriors[-1].sample((10_000,), x=x_o)
        np.save(os.path.join(args.out, "samples.npy"), samples.cpu().numpy())
        for name, s in zip(LABELS, samples.T):
            print(f"{name}: {s.mean().item():.3f} +/- {s.std().item():.3f}")

    # simulation-based calibration on held-out simulations (coverage check)
    theta_test = prior.sample((200,))
    x_test = simulator(theta_test)
    ranks = []
    for th, xx in zip(theta_test, x_test):
        s = posteriors[-1].sample((1000,), x=xx[None], show_progress_bars=False)
        ranks.append((s < th[None]).sum(0))
    ranks = torch.stack(ranks).cpu().numpy()
    np.save(os.path.join(args.out, "sbc_ranks.npy"), ranks)
    print("Max GPU memory: %.2f GB" % (torch.cuda.max_memory_allocated() / 1e9))


if __name__ == "__main__":
    main()
