"""Online marginal-likelihood training + GLM predictive on UCI / toy regression.

Mirrors the laplace-torch regression example, extended to the UCI splits used in
"Laplace Redux" (Sec. 4.3).  All tensors live on the GPU: the full-network Kronecker
GGN of the 50-unit MLP is tiny, so the whole split fits in memory at once.

    python examples/regression_marglik.py --dataset boston --split 0 --epochs 1000
    python examples/regression_marglik.py --toy --double
"""
import argparse
import json
import os
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from laplace import Laplace, marglik_training
from laplace.curvature import BackPackGGN, AsdlGGN
from laplace.curvature.backpack import BackPackEF

UCI_ROOT = Path(os.environ.get("UCI_ROOT", "~/data/uci")).expanduser()

parser = argparse.ArgumentParser()
parser.add_argument("--dataset", default="boston",
                    choices=["boston", "concrete", "energy", "kin8nm", "naval", "power", "wine", "yacht"])
parser.add_argument("--split", type=int, default=0)
parser.add_argument("--toy", action="store_true", help="use the 1-d sinusoid toy problem")
parser.add_argument("--epochs", type=int, default=1000)
parser.add_argument("--hidden", type=int, default=50)
parser.add_argument("--batch_size", type=int, default=-1, help="-1 = full batch")
parser.add_argument("--hessian_structure", default="kron", choices=["diag", "kron", "full"])
parser.add_argument("--backend", default="backpack", choices=["backpack", "asdl", "backpack_ef"])
parser.add_argument("--prior_structure", default="layerwise", choices=["scalar", "layerwise", "diagonal"])
parser.add_argument("--lr", type=float, default=1e-2)
parser.add_argument("--lr_hyp", type=float, default=1e-1)
parser.add_argument("--n_epochs_burnin", type=int, default=100)
parser.add_argument("--marglik_frequency", type=int, default=50)
parser.add_argument("--double", action="store_true",
                    help="run everything in float64 (full Hessians of wide nets are badly conditioned)")
parser.add_argument("--seed", type=int, default=711)
parser.add_argument("--out", default="results/marglik")
args = parser.parse_args()

torch.manual_seed(args.seed)
np.random.seed(args.seed)

device = torch.device("cuda:0")
if args.double:
    torch.set_default_dtype(torch.float64)
dtype = torch.get_default_dtype()


def get_sinusoid_example(n_data=150, sigma_noise=0.3, batch_size=150):
    # create simple sinusoid data set
    X_train = (torch.rand(n_data) * 8).unsqueeze(-1)
    y_train = torch.sin(X_train) + torch.randn_like(X_train) * sigma_noise
    X_test = torch.linspace(-5, 13, 500).unsqueeze(-1)
    return X_train, y_train, X_test, None


def load_uci(name, split):
    data = np.loadtxt(UCI_ROOT / name / "data.txt")
    idx_train = np.loadtxt(UCI_ROOT / name / f"index_train_{split}.txt").astype(int)
    idx_test = np.loadtxt(UCI_ROOT / name / f"index_test_{split}.txt").astype(int)
    X, y = data[:, :-1], data[:, -1:]
    X_tr, y_tr, X_te, y_te = X[idx_train], y[idx_train], X[idx_test], y[idx_test]
    x_mean, x_std = X_tr.mean(0), X_tr.std(0) + 1e-8
    y_mean, y_std = y_tr.mean(0), y_tr.std(0)
    X_tr, X_te = (X_tr - x_mean) / x_std, (X_te - x_mean) / x_std
    y_tr_n = (y_tr - y_mean) / y_std
    to_t = lambda a: torch.from_numpy(a).to(dtype)
    return to_t(X_tr), to_t(y_tr_n), to_t(X_te), to_t(y_te), float(y_mean), float(y_std)


if args.toy:
    X_train, y_train, X_test, y_test = get_sinusoid_example()
    y_mean, y_std = 0.0, 1.0
else:
    X_train, y_train, X_test, y_test, y_mean, y_std = load_uci(args.dataset, args.split)

X_train, y_train = X_train.to(device), y_train.to(device)
X_test = X_test.to(device)

bs = len(X_train) if args.batch_size == -1 else args.batch_size
train_loader = DataLoader(TensorDataset(X_train, y_train), batch_size=bs, shuffle=True)

model = nn.Sequential(
    nn.Linear(X_train.shape[1], args.hidden), nn.Tanh(),
    nn.Linear(args.hidden, 1),
).to(device=device, dtype=dtype)

backend = {"backpack": BackPackGGN, "asdl": AsdlGGN, "backpack_ef": BackPackEF}[args.backend]

la, model, margliks, losses = marglik_training(
    model=model,
    train_loader=train_loader,
    likelihood="regression",
    hessian_structure=args.hessian_structure,
    backend=backend,
    n_epochs=args.epochs,
    optimizer_kwargs={"lr": args.lr},
    prior_structure=args.prior_structure,
    lr_hyp=args.lr_hyp,
    n_epochs_burnin=args.n_epochs_burnin,
    marglik_frequency=args.marglik_frequency,
)

print(f"sigma={la.sigma_noise.item():.3f}",
      f"prior precision={la.prior_precision.detach().cpu().numpy().round(3)}")

# GLM predictive; the posterior covariance is formed from the Kronecker eigendecompositions
f_mu, f_var = la(X_test, pred_type="glm")
f_mu = f_mu.squeeze().detach().cpu().numpy()
f_sigma = f_var.squeeze().sqrt().cpu().numpy()
pred_std = np.sqrt(f_sigma ** 2 + la.sigma_noise.item() ** 2)

# de-standardise
f_mu = f_mu * y_std + y_mean
pred_std = pred_std * y_std

results = {"marglik": [float(m) for m in margliks[-5:]], "sigma_noise": la.sigma_noise.item()}
if y_test is not None:
    y_np = y_test.squeeze().numpy()
    rmse = float(np.sqrt(np.mean((f_mu - y_np) ** 2)))
    ll = float(np.mean(-0.5 * np.log(2 * np.pi * pred_std ** 2) - 0.5 * (y_np - f_mu) ** 2 / pred_std ** 2))
    results.update({"rmse": rmse, "test_ll": ll})
    print(f"[{args.dataset} split {args.split}] RMSE {rmse:.3f}  test LL {ll:.3f}")

# log evidence of the final model for model selection tables
with torch.no_grad():
    log_marglik = la.log_marginal_likelihood().item()
results["log_marglik"] = log_marglik
results["peak_gpu_mem_mb"] = torch.cuda.max_memory_allocated(device) / 2 ** 20

os.makedirs(args.out, exist_ok=True)
tag = "toy" if args.toy else f"{args.dataset}_{args.split}"
with open(os.path.join(args.out, f"{tag}_{args.hessian_structure}_{args.backend}.json"), "w") as f:
    json.dump(results, f, indent=2)

torch.save({"model": model.state_dict(),
            "prior_precision": la.prior_precision.detach().cpu(),
            "sigma_noise": la.sigma_noise.detach().cpu()},
           os.path.join(args.out, f"{tag}_la.pt"))
