"""Tune a distributed (DDP) FashionMNIST classifier with Ray Train + Ray Tune.

Each Tune trial launches a ``TorchTrainer`` with ``num_workers`` data-parallel
workers, one GPU each. Ray Train wires up the process group (NCCL on GPU
workers) and moves the model / batches to the right device for us.

    python tune_torch_trainer_asha.py --num-workers 2 --num-samples 16
"""
import argparse
import os
import tempfile
from typing import Dict

import torch
from filelock import FileLock
from torch import nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
from torchvision.transforms import Normalize, ToTensor

import ray
import ray.train
import ray.train.torch
from ray import tune
from ray.train import RunConfig, ScalingConfig, CheckpointConfig
from ray.train.torch import TorchTrainer, TorchConfig
from ray.tune.schedulers import ASHAScheduler
from ray.tune.search.optuna import OptunaSearch


def get_dataloaders(batch_size):
    transform = transforms.Compose([ToTensor(), Normalize((0.5,), (0.5,))])

    with FileLock(os.path.expanduser("~/data.lock")):
        training_data = datasets.FashionMNIST(
            root="~/data", train=True, download=True, transform=transform
        )
        test_data = datasets.FashionMNIST(
            root="~/data", train=False, download=True, transform=transform
        )

    train_dataloader = DataLoader(training_data, batch_size=batch_size, shuffle=True, pin_memory=True)
    test_dataloader = DataLoader(test_data, batch_size=batch_size, pin_memory=True)
    return train_dataloader, test_dataloader


class NeuralNetwork(nn.Module):
    def __init__(self, hidden: int = 512, dropout: float = 0.25):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28 * 28, hidden),
            nn.ReLU(),
            nn.Dropout(dropout),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Dropout(dropout),
            nn.Linear(hidden, 10),
            nn.ReLU(),
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


def train_func_per_worker(config: Dict):
    lr = config["lr"]
    epochs = config["epochs"]
    batch_size = config["batch_size_per_worker"]

    train_dataloader, test_dataloader = get_dataloaders(batch_size=batch_size)

    # [1] Prepare Dataloader for distributed training
    # Shard the datasets among workers and move batches to the correct device
    train_dataloader = ray.train.torch.prepare_data_loader(train_dataloader)
    test_dataloader = ray.train.torch.prepare_data_loader(test_dataloader)

    model = NeuralNetwork(hidden=config["hidden"], dropout=config["dropout"])

    # [2] Prepare and wrap your model with DistributedDataParallel
    # Move the model to the correct GPU/CPU device
    model = ray.train.torch.prepare_model(model)

    # Resume after a PBT exploit / trial restart
    checkpoint = ray.train.get_checkpoint()
    start_epoch = 0
    if checkpoint:
        with checkpoint.as_directory() as ckpt_dir:
            state = torch.load(os.path.join(ckpt_dir, "checkpoint.pt"), map_location="cpu")
        target = model.module if hasattr(model, "module") else model
        target.load_state_dict(state["model"])
        start_epoch = state["epoch"] + 1

    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    scaler = torch.cuda.amp.GradScaler(enabled=config["amp"])

    for epoch in range(start_epoch, epochs):
        if ray.train.get_context().get_world_size() > 1:
            train_dataloader.sampler.set_epoch(epoch)

        model.train()
        for X, y in train_dataloader:
            with torch.cuda.amp.autocast(enabled=config["amp"]):
                pred = model(X)
                loss = loss_fn(pred, y)

            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()

        model.eval()
        test_loss, num_correct, num_total = 0, 0, 0
        with torch.no_grad():
            for X, y in test_dataloader:
                pred = model(X)
                loss = loss_fn(pred, y)

                test_loss += loss.item()
                num_total += y.shape[0]
                num_correct += (pred.argmax(1) == y).sum().item()

        test_loss /= len(test_dataloader)
        accuracy = num_correct / num_total

        # [3] Report metrics (and a checkpoint from rank 0) to Ray Train
        metrics = {"loss": test_loss, "accuracy": accuracy, "epoch": epoch}
        if ray.train.get_context().get_world_rank() == 0 and (epoch + 1) % config.get("ckpt_every", 5) == 0:
            with tempfile.TemporaryDirectory() as tmp:
                state = model.module.state_dict() if hasattr(model, "module") else model.state_dict()
                torch.save({"model": state, "optimizer": optimizer.state_dict(), "epoch": epoch},
                           os.path.join(tmp, "checkpoint.pt"))
                ray.train.report(metrics=metrics, checkpoint=ray.train.Checkpoint.from_directory(tmp))
        else:
            ray.train.report(metrics=metrics)


def tune_fashion_mnist(num_workers=2, num_samples=16, use_gpu=True, smoke_test=False):
    global_batch_size = 64

    train_config = {
        "lr": tune.loguniform(1e-4, 1e-1),
        "hidden": tune.choice([128, 256, 512, 1024]),
        "dropout": tune.uniform(0.0, 0.5),
        "epochs": 2 if smoke_test else 20,
        "batch_size_per_worker": global_batch_size // num_workers,
        "amp": tune.choice([False, True]) if use_gpu else False,
    }

    # Configure computation resources
    scaling_config = ScalingConfig(
        num_workers=num_workers,
        use_gpu=use_gpu,
        resources_per_worker={"CPU": 4, "GPU": 1} if use_gpu else {"CPU": 4},
    )

    trainer = TorchTrainer(
        train_loop_per_worker=train_func_per_worker,
        scaling_config=scaling_config,
        torch_config=TorchConfig(backend="nccl" if use_gpu else "gloo", timeout_s=1800),
        run_config=RunConfig(
            checkpoint_config=CheckpointConfig(num_to_keep=1),
            storage_path=os.environ.get("RAY_RESULTS_DIR", "~/ray_results"),
        ),
    )

    tuner = tune.Tuner(
        trainer,
        param_space={"train_loop_config": train_config},
        tune_config=tune.TuneConfig(
            metric="accuracy",
            mode="max",
            num_samples=num_samples,
            search_alg=OptunaSearch(),
            scheduler=ASHAScheduler(max_t=train_config["epochs"], grace_period=2),
            max_concurrent_trials=int(ray.cluster_resources().get("GPU", 1)) // num_workers or 1,
        ),
    )
    results = tuner.fit()
    best = results.get_best_result()
    print(f"Best config: {best.config['train_loop_config']}")
    print(f"Best accuracy: {best.metrics['accuracy']:.4f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=False, type=str, help="the address to use for Ray")
    parser.add_argument("--num-workers", "-n", type=int, default=2,
                        help="Sets number of workers for training.")
    parser.add_argument("--num-samples", type=int, default=16)
    parser.add_argument("--cpu-only", action="store_true", default=False,
                        help="Disables GPU training")
    parser.add_argument("--smoke-test", action="store_true", default=False,
                        help="Finish quickly for testing.")
    args, _ = parser.parse_known_args()

    ray.init(address=args.address)
    tune_fashion_mnist(num_workers=args.num_workers, num_samples=args.num_samples,
                       use_gpu=not args.cpu_only, smoke_test=args.smoke_test)
