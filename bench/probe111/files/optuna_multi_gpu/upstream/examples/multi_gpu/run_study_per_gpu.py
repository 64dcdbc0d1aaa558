"""Run one Optuna study on every GPU of a node.

Two modes are supported:

* ``--mode process`` (default): one worker *process* per GPU. Each worker pins
  itself to a card through ``CUDA_VISIBLE_DEVICES`` before torch initialises
  CUDA, then pulls trials from the shared RDB storage. This is the pattern the
  Optuna FAQ recommends ("How can I use two GPUs for evaluating two trials
  simultaneously?").
* ``--mode threads``: a single process with ``n_jobs == n_gpus``; a queue hands
  out device ids so that two concurrent trials never share a card.

Example::

    python run_study_per_gpu.py --storage sqlite:///cifar.db --n-trials 200
"""

import argparse
import logging
import multiprocessing as mp
import os
import queue
import sys
import time

import optuna
import torch
import torch.nn as nn
import torchvision
import torchvision.transforms as T

logger = logging.getLogger("multi_gpu_study")

DATA_ROOT = os.environ.get("CIFAR_ROOT", os.path.expanduser("~/data/cifar10"))

STUDY_NAME = "cifar10-resnet-hpo"
EPOCHS = 30


def conv_bn(cin, cout, stride=1):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )


class ResBlock(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.body = nn.Sequential(conv_bn(ch, ch), conv_bn(ch, ch))

    def forward(self, x):
        return x + self.body(x)


def build_model(width=32, depth=3, num_classes=10):
    layers = [conv_bn(3, width)]
    ch = width
    for stage in range(3):
        out = width * (2 ** stage)
        layers.append(conv_bn(ch, out, stride=1 if stage == 0 else 2))
        layers += [ResBlock(out) for _ in range(depth)]
        ch = out
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(ch, num_classes)]
    return nn.Sequential(*layers)


def get_loaders(batch_size, num_workers=4):
    norm = T.Normalize((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616))
    train_tf = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.ToTensor(), norm])
    test_tf = T.Compose([T.ToTensor(), norm])
    train_ds = torchvision.datasets.CIFAR10(DATA_ROOT, train=True, download=False, transform=train_tf)
    test_ds = torchvision.datasets.CIFAR10(DATA_ROOT, train=False, download=False, transform=test_tf)
    train_loader = torch.utils.data.DataLoader(train_ds, batch_size=batch_size, shuffle=True,
                                               num_workers=num_workers, pin_memory=True, drop_last=True)
    valid_loader = torch.utils.data.DataLoader(test_ds, batch_size=512, shuffle=False,
                                               num_workers=num_workers, pin_memory=True)
    return train_loader, valid_loader


def train_one_epoch(model, loader, optimizer, criterion, device):
    model.train()
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct, total = 0, 0
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        correct += (model(x).argmax(1) == y).sum().item()
        total += y.numel()
    return correct / total


def suggest_config(trial):
    return {
        "lr": trial.suggest_float("lr", 1e-4, 1e-1, log=True),
        "weight_decay": trial.suggest_float("weight_decay", 1e-6, 1e-3, log=True),
        "batch_size": trial.suggest_categorical("batch_size", [64, 128, 256]),
        "width": trial.suggest_categorical("width", [16, 32, 64]),
        "depth": trial.suggest_int("depth", 2, 5),
        "label_smoothing": trial.suggest_float("label_smoothing", 0.0, 0.2),
    }


def run_trial(trial, device):
    cfg = suggest_config(trial)
    model = build_model(width=cfg["width"], depth=cfg["depth"]).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9,
                                weight_decay=cfg["weight_decay"], nesterov=True)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=EPOCHS)
    criterion = torch.nn.CrossEntropyLoss(label_smoothing=cfg["label_smoothing"])
    train_loader, valid_loader = get_loaders(cfg["batch_size"], num_workers=4)

    acc = 0.0
    for epoch in range(EPOCHS):
        train_one_epoch(model, train_loader, optimizer, criterion, device)
        scheduler.step()
        acc = evaluate(model, valid_loader, device)
        trial.report(acc, epoch)
        if trial.should_prune():
            raise optuna.TrialPruned()
    return acc


# --------------------------------------------------------------------------
# process mode
# --------------------------------------------------------------------------
def worker(gpu_id, storage, n_trials, seed):
    # Must happen before the first CUDA call in this process.
    os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu_id)
    logging.basicConfig(level=logging.INFO,
                        format=f"[gpu{gpu_id}] %(asctime)s %(levelname)s %(message)s")

    device = torch.device("cuda:0")  # the only visible card
    torch.backends.cudnn.benchmark = True

    study = optuna.load_study(
        study_name=STUDY_NAME,
        storage=storage,
        sampler=optuna.samplers.TPESampler(seed=seed + gpu_id, constant_liar=True),
        pruner=optuna.pruners.HyperbandPruner(min_resource=1, max_resource=EPOCHS),
    )
    study.optimize(lambda t: run_trial(t, device), n_trials=n_trials, gc_after_trial=True)
    logger.info("worker on GPU %d finished", gpu_id)


def run_processes(args, gpu_ids):
    ctx = mp.get_context("spawn")
    procs = []
    for gpu_id in gpu_ids:
        p = ctx.Process(target=worker, args=(gpu_id, args.storage, args.n_trials_per_gpu, args.seed))
        p.start()
        procs.append(p)
        time.sleep(1.0)  # stagger sqlite schema creation
    failed = 0
    for p in procs:
        p.join()
        failed += int(p.exitcode != 0)
    return failed


# --------------------------------------------------------------------------
# thread mode
# --------------------------------------------------------------------------
class GpuQueueObjective:
    def __init__(self, gpu_queue):
        self.gpu_queue = gpu_queue

    def __call__(self, trial):
        gpu_id = self.gpu_queue.get()
        try:
            device = torch.device(f"cuda:{gpu_id}")
            torch.cuda.set_device(device)
            trial.set_user_attr("gpu", gpu_id)
            return run_trial(trial, device)
        finally:
            self.gpu_queue.put(gpu_id)


def run_threads(args, gpu_ids):
    gpu_queue = queue.Queue()
    for gpu_id in gpu_ids:
        gpu_queue.put(gpu_id)
    study = optuna.load_study(study_name=STUDY_NAME, storage=args.storage,
                              sampler=optuna.samplers.TPESampler(seed=args.seed, constant_liar=True))
    study.optimize(GpuQueueObjective(gpu_queue),
                   n_trials=args.n_trials_per_gpu * len(gpu_ids),
                   n_jobs=len(gpu_ids), gc_after_trial=True)
    return 0


def parse_gpu_list(spec):
    if not spec:
        return list(range(torch.cuda.device_count()))
    return [int(x) for x in spec.split(",") if x.strip()]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--storage", default="sqlite:///optuna_multi_gpu.db")
    parser.add_argument("--gpus", default="", help="comma separated GPU ids, default: all visible")
    parser.add_argument("--n-trials-per-gpu", type=int, default=25)
    parser.add_argument("--mode", choices=["process", "threads"], default="process")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    logging.basicConfig(level=logging.INFO)
    gpu_ids = parse_gpu_list(args.gpus)
    if not gpu_ids:
        logger.error("no CUDA devices found, refusing to run a GPU study on CPU")
        return 1

    optuna.create_study(study_name=STUDY_NAME, storage=args.storage,
                        direction="maximize", load_if_exists=True)
    logger.info("running %s workers on GPUs %s", args.mode, gpu_ids)

    if args.mode == "process":
        failed = run_processes(args, gpu_ids)
    else:
        failed = run_threads(args, gpu_ids)

    study = optuna.load_study(study_name=STUDY_NAME, storage=args.storage)
    logger.info("best value %.4f with %s", study.best_value, study.best_params)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
