"""
Distributed fine-tuning of a text classifier with Ray Train (TorchTrainer).

    python train_ray.py --num-workers 8 --epochs 3 --amp --storage-path s3://bucket/ray-results

Ray starts one worker per device on the cluster, wires up torch.distributed, and collects
metrics / checkpoints reported from the workers.
"""
import argparse
import os
import tempfile

import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_linear_schedule_with_warmup
from datasets import load_dataset

import ray
import ray.train
import ray.train.torch
from ray.train import Checkpoint, CheckpointConfig, RunConfig, ScalingConfig
from ray.train.torch import TorchConfig, TorchTrainer

MODEL_NAME = "bert-base-uncased"


def build_loaders(tokenizer, batch_size, max_len):
    ds = load_dataset("glue", "sst2")

    def encode(batch):
        enc = tokenizer(batch["sentence"], truncation=True, max_length=max_len, padding="max_length")
        enc["labels"] = batch["label"]
        return enc

    ds = ds.map(encode, batched=True, remove_columns=["sentence", "idx", "label"])
    ds.set_format("torch")
    train = DataLoader(ds["train"], batch_size=batch_size, shuffle=True, num_workers=2)
    val = DataLoader(ds["validation"], batch_size=2 * batch_size, num_workers=2)
    return train, val


def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for batch in loader:
            batch = {k: v.to(device) for k, v in batch.items()}
            logits = model(**batch).logits
            correct += (logits.argmax(-1) == batch["labels"]).sum().item()
            total += batch["labels"].numel()
    model.train()
    return correct / max(total, 1)


def train_func(config):
    tokenizer = AutoTokenizer.from_pretrained(MODEL_NAME)
    train_loader, val_loader = build_loaders(tokenizer, config["batch_size"], config["max_len"])
    # shards the data with a DistributedSampler and moves every batch to this worker's device
    train_loader = ray.train.torch.prepare_data_loader(train_loader)
    val_loader = ray.train.torch.prepare_data_loader(val_loader)

    model = AutoModelForSequenceClassification.from_pretrained(MODEL_NAME, num_labels=2)
    # moves the model to the worker's device and wraps it in DDP
    model = ray.train.torch.prepare_model(model)
    device = ray.train.torch.get_device()

    optimizer = torch.optim.AdamW(model.parameters(), lr=config["lr"], weight_decay=0.01)
    steps = config["epochs"] * len(train_loader)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(0.06 * steps), steps)
    scaler = torch.cuda.amp.GradScaler(enabled=config["amp"])

    start_epoch = 0
    ckpt = ray.train.get_checkpoint()
    if ckpt:
        with ckpt.as_directory() as d:
            state = torch.load(os.path.join(d, "state.pt"), map_location=device)
            model.module.load_state_dict(state["model"])
            optimizer.load_state_dict(state["optimizer"])
            start_epoch = state["epoch"] + 1

    for epoch in range(start_epoch, config["epochs"]):
        if ray.train.get_context().get_world_size() > 1:
            train_loader.sampler.set_epoch(epoch)
        running = 0.0
        for step, batch in enumerate(train_loader):
            with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=config["amp"]):
                loss = model(**batch).loss
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            running += loss.item()

        acc = evaluate(model, val_loader, device)
        metrics = {"epoch": epoch, "train_loss": running / len(train_loader), "val_acc": acc}
        with tempfile.TemporaryDirectory() as tmp:
            checkpoint = None
            if ray.train.get_context().get_world_rank() == 0:
                torch.save({"model": model.module.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch},
                           os.path.join(tmp, "state.pt"))
                checkpoint = Checkpoint.from_directory(tmp)
            ray.train.report(metrics, checkpoint=checkpoint)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--num-workers", type=int, default=8)
    ap.add_argument("--cpus-per-worker", type=int, default=8)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-5)
    ap.add_argument("--max-len", type=int, default=128)
    ap.add_argument("--amp", action="store_true")
    ap.add_argument("--storage-path", default=os.path.expanduser("~/ray_results"))
    ap.add_argument("--address", default=None, help="Ray cluster address (default: start or connect locally)")
    args = ap.parse_args()

    ray.init(address=args.address)
    print(ray.cluster_resources())

    trainer = TorchTrainer(
        train_func,
        train_loop_config={"lr": args.lr, "epochs": args.epochs, "batch_size": args.batch_size,
                           "max_len": args.max_len, "amp": args.amp},
        scaling_config=ScalingConfig(
            num_workers=args.num_workers,
            use_gpu=True,
            resources_per_worker={"CPU": args.cpus_per_worker, "GPU": 1},
        ),
        torch_config=TorchConfig(backend="nccl", timeout_s=1800),
        run_config=RunConfig(
            name="sst2-bert",
            storage_path=args.storage_path,
            checkpoint_config=CheckpointConfig(num_to_keep=2, checkpoint_score_attribute="val_acc",
                                               checkpoint_score_order="max"),
        ),
    )
    result = trainer.fit()
    print("best checkpoint:", result.checkpoint)
    print("final metrics:", result.metrics)


if __name__ == "__main__":
    main()
