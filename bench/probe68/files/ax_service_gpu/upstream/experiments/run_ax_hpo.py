#!/usr/bin/env python3
"""Hyperparameter optimisation of a small CNN with Ax's Service API (AxClient).

Sobol for the first trials, then a BoTorch (modular) GP with qLogNEI.  The GP and the acquisition
optimisation run on the GPU; the trained CNN for each trial runs on the GPU as well, so the
script pins one card via CUDA_VISIBLE_DEVICES and shares it between the two.

    python experiments/run_ax_hpo.py --trials 40 --gpu 1 --out results/ax_cnn.json
"""
import argparse
import json
import logging
import os
import sys


def _early_args():
    # CUDA_VISIBLE_DEVICES must be set before torch initialises CUDA
    for i, a in enumerate(sys.argv):
        if a == "--gpu" and i + 1 < len(sys.argv):
            os.environ["CUDA_VISIBLE_DEVICES"] = sys.argv[i + 1]


_early_args()

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.utils.data import DataLoader, random_split  # noqa: E402
from torchvision import datasets, transforms  # noqa: E402

from ax.modelbridge.generation_strategy import GenerationStep, GenerationStrategy  # noqa: E402
from ax.modelbridge.registry import Models  # noqa: E402
from ax.models.torch.botorch_modular.surrogate import SurrogateSpec  # noqa: E402
from ax.service.ax_client import AxClient, ObjectiveProperties  # noqa: E402
from botorch.acquisition.logei import qLogNoisyExpectedImprovement  # noqa: E402
from botorch.models import SingleTaskGP  # noqa: E402

logger = logging.getLogger("ax_hpo")

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class CNN(nn.Module):
    def __init__(self, channels=16, hidden=64, dropout=0.25):
        super().__init__()
        self.conv1 = nn.Conv2d(1, channels, kernel_size=5)
        self.conv2 = nn.Conv2d(channels, 2 * channels, kernel_size=5)
        self.drop = nn.Dropout(dropout)
        self.fc1 = nn.Linear(2 * channels * 4 * 4, hidden)
        self.fc2 = nn.Linear(hidden, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = self.drop(torch.flatten(x, 1))
        return self.fc2(F.relu(self.fc1(x)))


def load_mnist(data_dir, batch_size):
    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
    full = datasets.MNIST(data_dir, train=True, download=True, transform=tf)
    train_set, valid_set = random_split(full, [55000, 5000], generator=torch.Generator().manual_seed(0))
    train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True, num_workers=2,
                              pin_memory=torch.cuda.is_available())
    valid_loader = DataLoader(valid_set, batch_size=1024, shuffle=False, num_workers=2)
    return train_loader, valid_loader


def train_evaluate(params, data_dir, epochs=2):
    train_loader, valid_loader = load_mnist(data_dir, int(params["batch_size"]))
    net = CNN(channels=int(params["channels"]), hidden=int(params["hidden"]),
              dropout=params["dropout"]).to(DEVICE)
    opt = torch.optim.SGD(net.parameters(), lr=params["lr"], momentum=params["momentum"],
                          weight_decay=params["weight_decay"])
    scaler = torch.cuda.amp.GradScaler(enabled=params.get("amp", True))
    for _ in range(epochs):
        net.train()
        for x, y in train_loader:
            x, y = x.to(DEVICE, non_blocking=True), y.to(DEVICE, non_blocking=True)
            opt.zero_grad(set_to_none=True)
            with torch.cuda.amp.autocast(enabled=params.get("amp", True)):
                loss = F.cross_entropy(net(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()

    net.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in valid_loader:
            x, y = x.to(DEVICE), y.to(DEVICE)
            correct += (net(x).argmax(-1) == y).sum().item()
            total += y.numel()
    return {"accuracy": (correct / total, 0.0)}


def make_generation_strategy(n_sobol):
    return GenerationStrategy(
        name="Sobol+BoTorch(qLogNEI)",
        steps=[
            GenerationStep(model=Models.SOBOL, num_trials=n_sobol, min_trials_observed=n_sobol // 2),
            GenerationStep(
                model=Models.BOTORCH_MODULAR,
                num_trials=-1,
                model_kwargs={
                    "surrogate_spec": SurrogateSpec(botorch_model_class=SingleTaskGP),
                    "botorch_acqf_class": qLogNoisyExpectedImprovement,
                    "torch_device": torch.device("cuda"),
                    "torch_dtype": torch.double,
                },
                model_gen_kwargs={"model_gen_options": {"optimizer_kwargs": {"num_restarts": 20,
                                                                              "raw_samples": 1024}}},
            ),
        ],
    )


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--trials", type=int, default=40)
    p.add_argument("--sobol", type=int, default=8)
    p.add_argument("--gpu", default="0")
    p.add_argument("--data-dir", default="data")
    p.add_argument("--out", default="results/ax_cnn.json")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO)
    logger.info("running trials on %s (visible: %s)", DEVICE, os.environ.get("CUDA_VISIBLE_DEVICES"))

    ax_client = AxClient(generation_strategy=make_generation_strategy(args.sobol), random_seed=0)
    ax_client.create_experiment(
        name="mnist_cnn_hpo",
        parameters=[
            {"name": "lr", "type": "range", "bounds": [1e-4, 0.3], "log_scale": True},
            {"name": "momentum", "type": "range", "bounds": [0.0, 0.99]},
            {"name": "weight_decay", "type": "range", "bounds": [1e-6, 1e-2], "log_scale": True},
            {"name": "dropout", "type": "range", "bounds": [0.0, 0.6]},
            {"name": "channels", "type": "range", "bounds": [8, 64], "value_type": "int"},
            {"name": "hidden", "type": "range", "bounds": [32, 512], "value_type": "int", "log_scale": True},
            {"name": "batch_size", "type": "choice", "values": [64, 128, 256], "is_ordered": True},
        ],
        objectives={"accuracy": ObjectiveProperties(minimize=False)},
    )

    for _ in range(args.trials):
        params, trial_index = ax_client.get_next_trial()
        ax_client.complete_trial(trial_index=trial_index, raw_data=train_evaluate(params, args.data_dir))

    best_parameters, values = ax_client.get_best_parameters()
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"best_parameters": best_parameters, "values": values,
                   "trials": ax_client.get_trials_data_frame().to_dict("records")}, f, indent=2,
                  default=str)
    logger.info("best: %s", best_parameters)


if __name__ == "__main__":
    main()
