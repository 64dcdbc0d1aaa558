"""Distributed data-parallel training of a small MLP on FashionMNIST with Ray Train.

    python train_fashion_mnist.py --num-workers 4 --epochs 10
    python train_fashion_mnist.py --address ray://head:10001 --num-workers 16

Each Ray Train worker runs `train_func`; Ray sets up the torch process group, wraps the model
in DDP (prepare_model) and shards the data (prepare_data_loader).
"""
import argparse
import os
import tempfile
from typing import Dict

import ray
import ray.train
import ray.train.torch
import torch
from filelock import FileLock
from ray.train import Checkpoint, CheckpointConfig, RunConfig, ScalingConfig
from ray.train.torch import TorchConfig, TorchTrainer
from torch import nn
from torch.utils.data import DataLoader
from torchvision import datasets
from torchvision.transforms import Normalize, ToTensor, Compose


def get_dataloaders(batch_size):
    transform = Compose([ToTensor(), Normalize((0.28604,), (0.32025,))])

    with FileLock(os.path.expanduser("~/data.lock")):
        training_data = datasets.FashionMNIST(root="~/data", train=True, download=True, transform=transform)
        test_data = datasets.FashionMNIST(root="~/data", train=False, download=True, transform=transform)

    train_dataloader = DataLoader(training_data, batch_size=batch_size, shuffle=True, num_workers=2,
                                  pin_memory=True, pin_memory_device="cuda")
    test_dataloader = DataLoader(test_data, batch_size=batch_size, num_workers=2)
    return train_dataloader, test_dataloader


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28 * 28, 512),
            nn.ReLU(),
            nn.Dropout(0.25),
            nn.Linear(512, 512),
            nn.ReLU(),
            nn.Dropout(0.25),
            nn.Linear(512, 10),
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

    model = NeuralNetwork()

    # [2] Prepare and wrap your model with DistributedDataParallel
    # Move the model to the correct device
    model = ray.train.torch.prepare_model(model)

    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    scaler = torch.cuda.amp.GradScaler(enabled=config.get("amp", True))

    start_epoch = 0
    checkpoint = ray.train.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as ckpt_dir:
            state = torch.load(os.path.join(ckpt_dir, "model.pt"), map_location="cuda")
            model.module.load_state_dict(state["model"])
            optimizer.load_state_dict(state["optimizer"])
            start_epoch = state["epoch"] + 1

    for epoch in range(start_epoch, epochs):
        if ray.train.get_context().get_world_size() > 1:
            train_dataloader.sampler.set_epoch(epoch)

        model.train()
        for X, y in train_dataloader:
            with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=config.get("amp", True)):
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
        with tempfile.TemporaryDirectory() as tmp:
            ckpt = None
            if ray.train.get_context().get_world_rank() == 0:
                torch.save({"model": model.module.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch},
                           os.path.join(tmp, "model.pt"))
                ckpt = Checkpoint.from_directory(tmp)
            ray.train.report(metrics={"loss": test_loss, "accuracy": accuracy}, checkpoint=ckpt)


def train_fashion_mnist(num_workers=2, epochs=10, storage_path=None):
    global_batch_size = 32

    train_config = {
        "lr": 1e-3,
        "epochs": epochs,
        "batch_size_per_worker": global_batch_size // num_workers,
        "amp": True,
    }

    # Configure computation resources
    scaling_config = ScalingConfig(
        num_workers=num_workers,
        use_gpu=True,
        resources_per_worker={"CPU": 4, "GPU": 1},
        accelerator_type="A100",
    )
    torch_config = TorchConfig(backend="nccl", timeout_s=1800)

    # Initialize a Ray TorchTrainer
    trainer = TorchTrainer(
        train_loop_per_worker=train_func_per_worker,
        train_loop_config=train_config,
        scaling_config=scaling_config,
        torch_config=torch_config,
        run_config=RunConfig(
            name="fashion-mnist-ddp",
            storage_path=storage_path,
            checkpoint_config=CheckpointConfig(num_to_keep=2),
        ),
    )

    # [4] Start distributed training
    # Run `train_func_per_worker` on all workers
    result = trainer.fit()
    print(f"Training result: {result}")
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", default=None, help="Ray cluster address (ray://host:port)")
    parser.add_argument("--num-workers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--storage-path", default=None)
    args = parser.parse_args()

    ray.init(
        address=args.address,
        runtime_env={"env_vars": {"NCCL_SOCKET_IFNAME": "ens5", "NCCL_DEBUG": "WARN"}},
    )
    train_fashion_mnist(num_workers=args.num_workers, epochs=args.epochs, storage_path=args.storage_path)
