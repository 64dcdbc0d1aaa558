"""
Optuna example that optimizes multi-layer perceptrons using PyTorch, one worker process per GPU.

In this example, we optimize the validation accuracy of fashion product recognition using
PyTorch and FashionMNIST. We optimize the neural network architecture as well as the optimizer
configuration. As it is too time consuming to use the whole FashionMNIST dataset,
we here use a small subset of it.

All workers share one RDB storage, so they cooperate on the same study. Each worker pins
itself to one device through CUDA_VISIBLE_DEVICES before touching torch.cuda.

    python pytorch_multi_gpu.py --trials-per-gpu 25 --storage sqlite:///fmnist.db
"""
import argparse
import os
from concurrent.futures import ProcessPoolExecutor

import optuna
from optuna.trial import TrialState
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import torch.utils.data
from torchvision import datasets
from torchvision import transforms


DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
BATCHSIZE = 128
CLASSES = 10
DIR = os.getcwd()
EPOCHS = 10
N_TRAIN_EXAMPLES = BATCHSIZE * 30
N_VALID_EXAMPLES = BATCHSIZE * 10
STUDY_NAME = "fmnist-mlp"


def define_model(trial):
    # We optimize the number of layers, hidden units and dropout ratio in each layer.
    n_layers = trial.suggest_int("n_layers", 1, 3)
    layers = []

    in_features = 28 * 28
    for i in range(n_layers):
        out_features = trial.suggest_int("n_units_l{}".format(i), 4, 128)
        layers.append(nn.Linear(in_features, out_features))
        layers.append(nn.ReLU())
        p = trial.suggest_float("dropout_l{}".format(i), 0.2, 0.5)
        layers.append(nn.Dropout(p))

        in_features = out_features
    layers.append(nn.Linear(in_features, CLASSES))
    layers.append(nn.LogSoftmax(dim=1))

    return nn.Sequential(*layers)


def get_mnist():
    # Load FashionMNIST dataset.
    train_loader = torch.utils.data.DataLoader(
        datasets.FashionMNIST(DIR, train=True, download=True, transform=transforms.ToTensor()),
        batch_size=BATCHSIZE,
        shuffle=True,
        pin_memory=True,
    )
    valid_loader = torch.utils.data.DataLoader(
        datasets.FashionMNIST(DIR, train=False, transform=transforms.ToTensor()),
        batch_size=BATCHSIZE,
        shuffle=True,
    )

    return train_loader, valid_loader


def objective(trial):
    # Generate the model.
    model = define_model(trial).to(DEVICE)

    # Generate the optimizers.
    optimizer_name = trial.suggest_categorical("optimizer", ["Adam", "RMSprop", "SGD"])
    lr = trial.suggest_float("lr", 1e-5, 1e-1, log=True)
    optimizer = getattr(optim, optimizer_name)(model.parameters(), lr=lr)
    use_amp = trial.suggest_categorical("use_amp", [False, True])
    scaler = torch.cuda.amp.GradScaler(enabled=use_amp)

    # Get the FashionMNIST dataset.
    train_loader, valid_loader = get_mnist()

    # Training of the model.
    for epoch in range(EPOCHS):
        model.train()
        for batch_idx, (data, target) in enumerate(train_loader):
            # Limiting training data for faster epochs.
            if batch_idx * BATCHSIZE >= N_TRAIN_EXAMPLES:
                break

            data, target = data.view(data.size(0), -1).to(DEVICE, non_blocking=True), target.to(DEVICE)

            optimizer.zero_grad()
            with torch.cuda.amp.autocast(enabled=use_amp):
                output = model(data)
                loss = F.nll_loss(output, target)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()

        # Validation of the model.
        model.eval()
        correct = 0
        with torch.no_grad():
            for batch_idx, (data, target) in enumerate(valid_loader):
                # Limiting validation data.
                if batch_idx * BATCHSIZE >= N_VALID_EXAMPLES:
                    break
                data, target = data.view(data.size(0), -1).to(DEVICE), target.to(DEVICE)
                output = model(data)
                # Get the index of the max log-probability.
                pred = output.argmax(dim=1, keepdim=True)
                correct += pred.eq(target.view_as(pred)).sum().item()

        accuracy = correct / min(len(valid_loader.dataset), N_VALID_EXAMPLES)

        trial.report(accuracy, epoch)

        # Handle pruning based on the intermediate value.
        if trial.should_prune():
            raise optuna.exceptions.TrialPruned()

    trial.set_user_attr("peak_mem_mb", torch.cuda.max_memory_allocated() / 2**20)
    return accuracy


def release_cached_memory(study, trial):
    """Study callback: give cached blocks back between trials so the next model starts clean."""
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def run_worker(gpu_id, n_trials, storage):
    # Must happen before the first CUDA call in this process.
    os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu_id)
    global DEVICE
    DEVICE = torch.device("cuda:0")
    study = optuna.load_study(study_name=STUDY_NAME, storage=storage)
    study.optimize(objective, n_trials=n_trials, timeout=1200, callbacks=[release_cached_memory])


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials-per-gpu", type=int, default=25)
    parser.add_argument("--storage", default="sqlite:///fmnist.db")
    args = parser.parse_args()

    study = optuna.create_study(
        study_name=STUDY_NAME,
        storage=args.storage,
        direction="maximize",
        pruner=optuna.pruners.MedianPruner(n_warmup_steps=2),
        load_if_exists=True,
    )

    n_gpus = torch.cuda.device_count()
    if n_gpus == 0:
        study.optimize(objective, n_trials=args.trials_per_gpu, timeout=600)
    else:
        ctx = torch.multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=n_gpus, mp_context=ctx) as pool:
            futures = [pool.submit(run_worker, g, args.trials_per_gpu, args.storage) for g in range(n_gpus)]
            for f in futures:
                f.result()

    pruned_trials = study.get_trials(deepcopy=False, states=[TrialState.PRUNED])
    complete_trials = study.get_trials(deepcopy=False, states=[TrialState.COMPLETE])

    print("Study statistics: ")
    print("  Number of finished trials: ", len(study.trials))
    print("  Number of pruned trials: ", len(pruned_trials))
    print("  Number of complete trials: ", len(complete_trials))

    print("Best trial:")
    trial = study.best_trial

    print("  Value: ", trial.value)

    print("  Params: ")
    for key, value in trial.params.items():
        print("    {}: {}".format(key, value))
