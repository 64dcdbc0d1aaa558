"""Default training loop used for the target and reference models."""

import logging
import time

import numpy as np
import torch
import torch.nn as nn
from torch.optim.lr_scheduler import CosineAnnealingLR
from torch.utils.data import DataLoader
from tqdm import tqdm


def get_optimizer(model: nn.Module, configs: dict) -> torch.optim.Optimizer:
    """
    Get the optimizer for the given model.

    Args:
        model (torch.nn.Module): The model to be trained.
        configs (dict): Configurations for the optimizer.

    Returns:
        torch.optim.Optimizer: The optimizer.
    """
    optimizer = configs.get("optimizer", "SGD")
    learning_rate = configs.get("learning_rate", 0.001)
    weight_decay = configs.get("weight_decay", 0)
    momentum = configs.get("momentum", 0)
    print(f"Load the optimizer {optimizer}: ", end=" ")
    print(f"Learning rate {learning_rate}", end=" ")
    print(f"Weight decay {weight_decay} ")

    if optimizer == "SGD":
        return torch.optim.SGD(
            model.parameters(),
            lr=learning_rate,
            weight_decay=weight_decay,
            momentum=momentum,
        )
    elif optimizer == "Adam":
        return torch.optim.Adam(
            model.parameters(), lr=learning_rate, weight_decay=weight_decay
        )
    elif optimizer == "AdamW":
        return torch.optim.AdamW(
            model.parameters(), lr=learning_rate, weight_decay=weight_decay
        )
    else:
        raise NotImplementedError(
            f"Optimizer {optimizer} has not been implemented. Please choose from SGD or Adam"
        )


def get_dataloader(dataset, configs, shuffle=True):
    return DataLoader(
        dataset,
        batch_size=configs["batch_size"],
        shuffle=shuffle,
        num_workers=configs.get("num_workers", 4),
        pin_memory=True,
        persistent_workers=configs.get("num_workers", 4) > 0,
    )


def train(
    model: nn.Module,
    train_loader: DataLoader,
    configs: dict,
    test_loader: DataLoader = None,
    logger: logging.Logger = None,
):
    """
    Train a model and return it (moved back to the CPU).

    Args:
        model (nn.Module): Model to train.
        train_loader (DataLoader): Data loader for training.
        configs (dict): Training configuration ("train" section of the YAML).
        test_loader (DataLoader): Optional test loader for periodic evaluation.
        logger (logging.Logger): Logger for per-epoch statistics.

    Returns:
        nn.Module: Trained model.
    """
    device = configs["device"]
    model.to(device)
    model.train()

    optimizer = get_optimizer(model, configs)
    epochs = configs.get("epochs", 1)
    scheduler = CosineAnnealingLR(optimizer, T_max=epochs)
    criterion = nn.CrossEntropyLoss()

    for epoch_idx in range(epochs):
        start_time = time.time()
        train_loss, train_acc = 0, 0
        model.train()
        for data, target in tqdm(train_loader, desc=f"Epoch {epoch_idx + 1}/{epochs}"):
            data, target = data.to(device, non_blocking=True), target.to(
                device, non_blocking=True
            )
            optimizer.zero_grad(set_to_none=True)
            output = model(data)
            loss = criterion(output, target)
            pred = output.data.max(1, keepdim=True)[1]
            train_acc += pred.eq(target.data.view_as(pred)).sum()
            loss.backward()
            optimizer.step()
            train_loss += loss.item()

        scheduler.step()
        train_loss /= len(train_loader)
        train_acc = float(train_acc) / len(train_loader.dataset)

        msg = (
            f"Epoch {epoch_idx + 1}: train loss {train_loss:.4f}, "
            f"train acc {train_acc:.4f}, {time.time() - start_time:.1f}s"
        )
        if test_loader is not None and (epoch_idx + 1) % 10 == 0:
            test_loss, test_acc = inference(model, test_loader, device)
            msg += f", test loss {test_loss:.4f}, test acc {test_acc:.4f}"
        if logger is not None:
            logger.info(msg)
        else:
            print(msg)

    # Move the model back to the CPU so the reference models do not pile up on the GPU
    model.to("cpu")
    torch.cuda.empty_cache()

    return model


def inference(model: nn.Module, loader: DataLoader, device: str, is_train=False):
    """
    Evaluate the model performance on the test loader.

    Args:
        model (torch.nn.Module): Model to evaluate.
        loader (torch.utils.data.DataLoader): DataLoader for test data.
        device (str): Device used for inference.

    Returns:
        loss (float): Loss for the given model on the test dataset.
        acc (float): Accuracy for the given model on the test dataset.
    """
    model.eval()
    model.to(device)
    loss, acc = 0, 0
    with torch.no_grad():
        for data, target in loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            loss += nn.functional.cross_entropy(output, target).item()
            pred = output.data.max(1, keepdim=True)[1]
            acc += pred.eq(target.data.view_as(pred)).sum()
        loss /= len(loader)
        acc = float(acc) / len(loader.dataset)
    if is_train:
        model.train()
    return loss, acc


def get_model_memory_mb(model: nn.Module) -> float:
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    buffers = sum(b.numel() * b.element_size() for b in model.buffers())
    return (params + buffers) / 2**20


def summarize_training(models, loaders, configs, logger):
    accs = []
    for model, loader in zip(models, loaders):
        _, acc = inference(model, loader, configs["device"])
        accs.append(acc)
        model.to("cpu")
    logger.info(
        f"Mean test accuracy over {len(accs)} models: {np.mean(accs):.4f} +- {np.std(accs):.4f}"
    )
    return accs
