"""Fine-tune TabPFN v2 on a collection of related classification datasets.

Single GPU:
    python examples/finetune_classifier.py --epochs 10

Multi GPU (one process per GPU, meta-batches are sharded across ranks):
    torchrun --standalone --nproc_per_node=4 examples/finetune_classifier.py --epochs 10 --ddp
"""

from __future__ import annotations

import argparse
import logging
import os
from contextlib import nullcontext
from functools import partial

import numpy as np
import sklearn.datasets
import torch
import torch.distributed as dist
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import train_test_split
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.optim import AdamW
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from tqdm import tqdm

from tabpfn import TabPFNClassifier
from tabpfn.finetune_utils import clone_model_for_evaluation
from tabpfn.utils import meta_dataset_collator

logger = logging.getLogger("tabpfn.finetune")


def get_args() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--lr", type=float, default=1.5e-6)
    p.add_argument("--max-data-size", type=int, default=10_000)
    p.add_argument("--n-estimators", type=int, default=2)
    p.add_argument("--meta-batch-size", type=int, default=1)
    p.add_argument("--amp", choices=["no", "fp16", "bf16"], default="bf16")
    p.add_argument("--ddp", action="store_true")
    p.add_argument("--num-workers", type=int, default=2)
    p.add_argument("--output", default="checkpoints/tabpfn_finetuned.ckpt")
    p.add_argument("--seed", type=int, default=42)
    return p.parse_args()


def setup_distributed(args) -> tuple[int, int, torch.device]:
    if not args.ddp:
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        return 0, 1, device
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
    return dist.get_rank(), dist.get_world_size(), torch.device("cuda", local_rank)


def load_data(seed: int):
    X, y = sklearn.datasets.fetch_covtype(return_X_y=True, shuffle=True, random_state=seed)
    X, y = X[:50_000].astype(np.float32), y[:50_000]
    return train_test_split(X, y, test_size=0.3, random_state=seed, stratify=y)


def evaluate(classifier: TabPFNClassifier, eval_config: dict, X_train, y_train, X_test, y_test):
    eval_clf = clone_model_for_evaluation(classifier, eval_config, TabPFNClassifier)
    eval_clf.fit(X_train, y_train)
    proba = eval_clf.predict_proba(X_test)
    return accuracy_score(y_test, proba.argmax(axis=1)), log_loss(y_test, proba)


def main() -> None:
    args = get_args()
    logging.basicConfig(level=logging.INFO)
    rank, world_size, device = setup_distributed(args)
    torch.manual_seed(args.seed + rank)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    X_train, X_test, y_train, y_test = load_data(args.seed)

    classifier_config = {
        "ignore_pretraining_limits": True,
        "device": device,
        "n_estimators": args.n_estimators,
        "random_state": args.seed,
        "inference_precision": torch.float32,
    }
    classifier = TabPFNClassifier(**classifier_config, fit_mode="batched", differentiable_input=False)
    classifier._initialize_model_variables()

    splitter = partial(train_test_split, test_size=0.3)
    datasets_collection = classifier.get_preprocessed_datasets(
        X_train, y_train, splitter, max_data_size=args.max_data_size
    )
    sampler = DistributedSampler(datasets_collection, shuffle=True) if args.ddp else None
    loader = DataLoader(
        datasets_collection,
        batch_size=args.meta_batch_size,
        collate_fn=meta_dataset_collator,
        sampler=sampler,
        shuffle=sampler is None,
        num_workers=args.num_workers,
        pin_memory=True,
    )

    model = classifier.model_
    if args.ddp:
        model = DDP(model, device_ids=[device.index], find_unused_parameters=True)
        classifier.model_ = model.module
    optimizer = AdamW(model.parameters(), lr=args.lr, weight_decay=0.0, fused=torch.cuda.is_available())
    loss_fn = torch.nn.CrossEntropyLoss()

    amp_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(args.amp)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp == "fp16")
    autocast_ctx = (
        partial(torch.autocast, device_type="cuda", dtype=amp_dtype)
        if amp_dtype is not None
        else nullcontext
    )

    eval_config = {**classifier_config, "inference_config": {"SUBSAMPLE_SAMPLES": args.max_data_size}}
    if rank == 0:
        acc, ll = evaluate(classifier, eval_config, X_train[:10_000], y_train[:10_000], X_test, y_test)
        logger.info("Initial: acc=%.4f log_loss=%.4f", acc, ll)

    for epoch in range(1, args.epochs + 1):
        if sampler is not None:
            sampler.set_epoch(epoch)
        model.train()
        pbar = tqdm(loader, desc=f"epoch {epoch}", disable=rank != 0)
        for X_trains_p, X_tests_p, y_trains_p, y_test_raw, cat_ixs, confs in pbar:
            if len(np.unique(y_trains_p[0])) != len(np.unique(y_test_raw[0])):
                continue  # skip splits with unseen classes
            optimizer.zero_grad(set_to_none=True)
            classifier.fit_from_preprocessed(X_trains_p, y_trains_p, cat_ixs, confs)
            with autocast_ctx():
                logits = classifier.forward(X_tests_p, return_logits=True)
                loss = loss_fn(logits, y_test_raw.to(device))
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            pbar.set_postfix(loss=f"{loss.item():.4f}")

        if rank == 0:
            acc, ll = evaluate(classifier, eval_config, X_train[:10_000], y_train[:10_000], X_test, y_test)
            mem = torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else 0.0
            logger.info("epoch %d: acc=%.4f log_loss=%.4f peak_mem=%.1fGiB", epoch, acc, ll, mem)

    if rank == 0:
        os.makedirs(os.path.dirname(args.output), exist_ok=True)
        torch.save({"state_dict": classifier.model_.state_dict(), "config": classifier.config_}, args.output)
        logger.info("saved %s", args.output)
    if args.ddp:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
