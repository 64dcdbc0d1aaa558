"""Neural posterior estimation (NPE) on the two-moons benchmark, trained on the GPU.

Simulations are cheap and run on the CPU (batched, in a joblib pool); the density estimator
(a neural spline flow) and the posterior sampling run on the GPU.  Follows the sbi tutorial
"Training on the GPU" but runs several rounds (SNPE-C / APT) and reports C2ST against the
reference posterior.

    python examples/npe_two_moons_gpu.py --rounds 2 --sims-per-round 5000 --device cuda
"""
import argparse
import math
import time

import torch
from torch.distributions import MultivariateNormal

from sbi.analysis import pairplot
from sbi.inference import SNPE, simulate_for_sbi
from sbi.neural_nets import posterior_nn
from sbi.utils import BoxUniform
from sbi.utils.metrics import c2st
from sbi.utils.user_input_checks import (
    check_sbi_inputs,
    process_prior,
    process_simulator,
)


def two_moons_simulator(theta: torch.Tensor) -> torch.Tensor:
    """Two-moons simulator (Greenberg et al. 2019), vectorised over a batch of thetas."""
    theta = torch.atleast_2d(theta)
    n = theta.shape[0]
    a = torch.rand(n) * math.pi - math.pi / 2
    r = 0.1 + 0.01 * torch.randn(n)
    p = torch.stack([r * torch.cos(a) + 0.25, r * torch.sin(a)], dim=-1)
    ang = torch.tensor(-math.pi / 4.0)
    c, s = torch.cos(ang), torch.sin(ang)
    z0 = c * theta[:, 0] - s * theta[:, 1]
    z1 = s * theta[:, 0] + c * theta[:, 1]
    return p + torch.stack([-torch.abs(z0), z1], dim=-1)


def reference_posterior_samples(x_o, num_samples, prior):
    """Rejection sampler for the (analytically known) two-moons posterior."""
    samples = []
    while sum(s.shape[0] for s in samples) < num_samples:
        theta = prior.sample((50_000,)).cpu()
        x = two_moons_simulator(theta)
        keep = ((x - x_o.cpu()) ** 2).sum(-1) < 1e-4
        samples.append(theta[keep])
    return torch.cat(samples)[:num_samples]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--sims-per-round", type=int, default=5000)
    p.add_argument("--num-workers", type=int, default=8)
    p.add_argument("--density-estimator", default="nsf", choices=["maf", "nsf", "mdn", "made"])
    p.add_argument("--device", default="cuda")
    p.add_argument("--batch-size", type=int, default=200)
    p.add_argument("--num-posterior-samples", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--plot", default=None)
    return p.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    if args.device.startswith("cuda"):
        torch.cuda.manual_seed(args.seed)
        torch.backends.cudnn.benchmark = False

    # The prior has to live on the training device: sbi checks that prior and
    # density estimator are on the same device.
    prior = BoxUniform(low=-2 * torch.ones(2), high=2 * torch.ones(2), device=args.device)
    prior, num_parameters, prior_returns_numpy = process_prior(prior)
    simulator = process_simulator(two_moons_simulator, prior, prior_returns_numpy)
    check_sbi_inputs(simulator, prior)

    density_estimator_build_fun = posterior_nn(
        model=args.density_estimator, hidden_features=64, num_transforms=5, num_bins=10,
    )
    inference = SNPE(prior=prior, density_estimator=density_estimator_build_fun, device=args.device)

    x_o = torch.tensor([[0.0, 0.0]], device="cuda")
    proposal = prior
    posteriors = []
    t0 = time.time()
    for r in range(args.rounds):
        # simulate_for_sbi draws theta from the proposal (on the training device), moves them to
        # the CPU for the simulator workers and returns CPU tensors
        theta, x = simulate_for_sbi(simulator, proposal, num_simulations=args.sims_per_round,
                                    num_workers=args.num_workers, show_progress_bar=False)
        density_estimator = inference.append_simulations(
            theta, x, proposal=proposal, data_device="cpu"
        ).train(training_batch_size=args.batch_size, show_train_summary=True,
                learning_rate=5e-4, max_num_epochs=500)
        posterior = inference.build_posterior(density_estimator, sample_with="direct")
        posteriors.append(posterior)
        proposal = posterior.set_default_x(x_o)
        print(f"round {r + 1}/{args.rounds} done after {time.time() - t0:.1f}s")

    posterior_samples = posteriors[-1].sample((args.num_posterior_samples,), x=x_o)
    ref = reference_posterior_samples(x_o, args.num_posterior_samples, prior)
    score = c2st(posterior_samples.cpu(), ref)
    print(f"C2ST to reference posterior: {score.item():.3f} (0.5 is perfect)")

    log_probs = posteriors[-1].log_prob(posterior_samples[:1000], x=x_o)
    print(f"mean log-prob of own samples: {log_probs.mean().item():.3f}")

    if args.plot:
        fig, _ = pairplot(posterior_samples.cpu(), limits=[[-2, 2], [-2, 2]], figsize=(5, 5))
        fig.savefig(args.plot, dpi=150)

    # gaussian fit of the final posterior, for the summary table
    mvn = MultivariateNormal(posterior_samples.mean(0), torch.cov(posterior_samples.T))
    print("posterior mean:", mvn.mean.tolist())
    if torch.cuda.is_available():
        print(f"peak GPU memory: {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
