"""
Optuna example that optimizes a small CNN on FashionMNIST, running one trial per GPU in parallel.

Each worker process pins itself to one GPU taken from a shared queue, so `n_jobs` trials
run concurrently on `n_jobs` devices. The study is stored in SQLite so it can be resumed.

    $ python pytorch_multigpu_search.py --n-trials 64
"""
import argparse
import multiprocessing as mp
import os

import optuna
from optuna.trial import TrialState
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader, Subset
from torchvision import datasets, transforms

BATCHSIZE = 128
EPOCHS = 10
N_TRAIN_EXAMPLES = BATCHSIZE * 30
N_VALID_EXAMPLES = BATCHSIZE * 10
DIR = os.getcwd()


def define_model(trial):
    n_layers = trial.suggest_int("n_layers", 1, 3)
    layers = []
    in_features = 28 * 28
    for i in range(n_layers):
        out_features = trial.suggest_int(f"n_units_l{i}", 4, 128)
        layers.append(nn.Linear(in_features, out_features))
        layers.append(nn.ReLU())
        p = trial.suggest_float(f"dropout_l{i}", 0.2, 0.5)
        layers.append(nn.Dropout(p))
        in_features = out_features
    layers.append(nn.Linear(in_features, 10))
    layers.append(nn.LogSoftmax(dim=1))
    return nn.Sequential(*layers)


def get_loaders():
    tf = transforms.ToTensor()
    train = datasets.FashionMNIST(DIR, train=True, download=True, transform=tf)
    valid = datasets.FashionMNIST(DIR, train=False, transform=tf)
    train_loader = DataLoader(Subset(train, range(N_TRAIN_EXAMPLES)), batch_size=BATCHSIZE, shuffle=True)
    valid_loader = DataLoader(Subset(valid, range(N_VALID_EXAMPLES)), batch_size=BATCHSIZE, shuffle=True)
    return train_loader, valid_loader


class Objective:
    def __init__(self, gpu_queue):
        self.gpu_queue = gpu_queue

    def __call__(self, trial):
        gpu_id = self.gpu_queue.get()
        try:
            device = torch.device(f"cuda:{gpu_id}")
            torch.cuda.set_device(device)
            trial.set_user_attr("gpu", gpu_id)
            model = define_model(trial).to(device)
            optimizer_name = trial.suggest_categorical("optimizer", ["Adam", "RMSprop", "SGD"])
            lr = trial.suggest_float("lr", 1e-5, 1e-1, log=True)
            optimizer = getattr(optim, optimizer_name)(model.parameters(), lr=lr)
            train_loader, valid_loader = get_loaders()

            for epoch in range(EPOCHS):
                model.train()
                for data, target in train_loader:
                    data, target = data.view(data.size(0), -1).cuda(gpu_id), target.cuda(gpu_id)
                    optimizer.zero_grad()
                    loss = F.nll_loss(model(data), target)
                    loss.backward()
                    optimizer.step()

                model.eval()
                correct = 0
                with torch.no_grad():
                    for data, target in valid_loader:
                        data, target = data.view(data.size(0), -1).to(device), target.to(device)
                        pred = model(data).argmax(dim=1, keepdim=True)
                        correct += pred.eq(target.view_as(pred)).sum().item()
                accuracy = correct / min(len(valid_loader.dataset), N_VALID_EXAMPLES)
                trial.report(accuracy, epoch)
                if trial.should_prune():
                    raise optuna.exceptions.TrialPruned()
            return accuracy
        finally:
            del model
            torch.cuda.empty_cache()
            self.gpu_queue.put(gpu_id)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n-trials", type=int, default=64)
    parser.add_argument("--storage", default="sqlite:///optuna_multigpu.db")
    parser.add_argument("--gpus", default=None, help="comma separated GPU ids, default: all visible GPUs")
    args = parser.parse_args()

    if args.gpus:
        gpu_ids = [int(g) for g in args.gpus.split(",")]
        os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus
        gpu_ids = list(range(len(gpu_ids)))
    else:
        gpu_ids = list(range(torch.cuda.device_count()))
    if not gpu_ids:
        raise SystemExit("no CUDA devices found")

    manager = mp.Manager()
    gpu_queue = manager.Queue()
    for i in gpu_ids:
        gpu_queue.put(i)

    study = optuna.create_study(
        study_name="fashionmnist-multigpu",
        storage=args.storage,
        direction="maximize",
        load_if_exists=True,
        pruner=optuna.pruners.MedianPruner(n_warmup_steps=3),
    )
    study.optimize(Objective(gpu_queue), n_trials=args.n_trials, n_jobs=len(gpu_ids))

    pruned = study.get_trials(deepcopy=False, states=[TrialState.PRUNED])
    complete = study.get_trials(deepcopy=False, states=[TrialState.COMPLETE])
    print(f"Finished trials: {len(study.trials)} (pruned {len(pruned)}, complete {len(complete)})")
    trial = study.best_trial
    print(f"Best accuracy: {trial.value:.4f} on gpu {trial.user_attrs.get('gpu')}")
    for key, value in trial.params.items():
        print(f"    {key}: {value}")


if __name__ == "__main__":
    main()
