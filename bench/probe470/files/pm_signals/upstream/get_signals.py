"""Computing the signals (softmax outputs, losses, rescaled logits) used by the attacks."""

import os
import logging
import pickle

import numpy as np
import torch
from torch.utils.data import DataLoader
from tqdm import tqdm


def get_softmax(
    model, samples, labels, batch_size, device, temp=1.0, pad_token_id=None
):
    """
    Get the model's softmax probabilities for the given inputs and expected outputs.

    Args:
        model (PyTorch model): Model instance.
        samples (torch.Tensor): Model input.
        labels (torch.Tensor): Model expected output.
        batch_size (int): Batch size for getting signals.
        device (str): Device used for computing signals.
        temp (float): Temperature used in softmax computation.
        pad_token_id (int): Padding token ID to ignore in aggregation (LLMs only).

    Returns:
        np.ndarray: Softmax value of the true class for each input.
    """
    with torch.no_grad():
        model.to(device)
        model.eval()

        softmax_list = []
        batched_samples = torch.split(samples, batch_size)
        batched_labels = torch.split(labels, batch_size)

        for x, y in tqdm(
            zip(batched_samples, batched_labels),
            total=len(batched_samples),
            desc="Computing softmax",
        ):
            x = x.to(device)
            y = y.to(device)

            pred = model(x)
            if isinstance(pred, tuple) or hasattr(pred, "logits"):
                pred = pred.logits if hasattr(pred, "logits") else pred[0]

            logits = pred / temp
            if logits.dim() == 3:
                # sequence models: average the per-token true-class probability
                log_probs = torch.log_softmax(logits[:, :-1], dim=-1)
                tgt = y[:, 1:]
                true_lp = log_probs.gather(2, tgt.unsqueeze(-1)).squeeze(-1)
                if pad_token_id is not None:
                    mask = (tgt != pad_token_id).float()
                    true_lp = (true_lp * mask).sum(1) / mask.sum(1).clamp(min=1)
                else:
                    true_lp = true_lp.mean(1)
                softmax_list.append(torch.exp(true_lp).to("cpu").view(-1, 1))
            else:
                max_logit_signals, _ = torch.max(logits, dim=1)
                logit_signals = torch.sub(
                    logits, max_logit_signals.reshape(-1, 1)
                )
                exp_logit_signals = torch.exp(logit_signals)
                exp_logit_sum = exp_logit_signals.sum(axis=1).reshape(-1, 1)
                true_exp_logit = exp_logit_signals.gather(1, y.reshape(-1, 1))
                softmax_list.append(
                    torch.div(true_exp_logit, exp_logit_sum).to("cpu")
                )

        all_softmax_list = np.concatenate(softmax_list)
    model.to("cpu")
    return all_softmax_list


def get_loss(model, samples, labels, batch_size, device):
    """Per-sample cross-entropy loss, used by the LOSS attack."""
    with torch.no_grad():
        model.to(device)
        model.eval()
        losses = []
        for x, y in zip(torch.split(samples, batch_size), torch.split(labels, batch_size)):
            x, y = x.to(device), y.to(device)
            out = model(x)
            losses.append(
                torch.nn.functional.cross_entropy(out, y, reduction="none").cpu()
            )
    model.to("cpu")
    return torch.cat(losses).numpy()


def get_model_signals(models_list, dataset, configs, logger, is_population=False):
    """
    Function to get models' signals (softmax, loss, logits) on a given dataset.

    Args:
        models_list (list): List of models for computing (softmax, loss, logits) signals from them.
        dataset (torchvision.datasets): The whole dataset.
        configs (dict): Configurations of the tool.
        logger (logging.Logger): Logger object for the current run.
        is_population (bool): Whether the signals are computed on population data.

    Returns:
        signals (np.array): Signal value for all samples in all models
    """
    # Check if signals are available on disk
    signal_file_name = (
        f"{configs['audit']['algorithm'].lower()}_ramia_signals"
        if configs.get("ramia", None)
        else f"{configs['audit']['algorithm'].lower()}_signals"
    )
    signal_file_name += "_pop.npy" if is_population else ".npy"
    signal_path = f"{configs['run']['log_dir']}/signals/{signal_file_name}"
    if os.path.exists(signal_path):
        signals = np.load(signal_path)
        if len(signals) == len(dataset) and signals.shape[1] == len(models_list):
            logger.info("Signals loaded from disk successfully.")
            return signals
        logger.info("Signal shape mismatch, recomputing signals.")

    batch_size = configs["audit"]["batch_size"]
    device = configs["audit"]["device"]

    loader = DataLoader(dataset, batch_size=len(dataset), shuffle=False)
    samples, labels = next(iter(loader))

    signals = []
    logger.info("Computing signals for all models.")
    for model in models_list:
        signals.append(get_softmax(model, samples, labels, batch_size, device))

    signals = np.concatenate(signals, axis=1)
    os.makedirs(f"{configs['run']['log_dir']}/signals", exist_ok=True)
    np.save(signal_path, signals)
    logger.info("Signals saved to disk.")
    return signals
