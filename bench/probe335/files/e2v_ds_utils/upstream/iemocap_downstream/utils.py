import logging

import numpy as np
import torch
from sklearn.metrics import confusion_matrix, f1_score

logger = logging.getLogger(__name__)


def train_one_epoch(model, optimizer, criterion, train_loader, device, grad_clip=5.0):
    model.train()
    total_loss, n_batches = 0.0, 0
    for batch in train_loader:
        feats = batch["net_input"]["feats"].to(device, non_blocking=True)
        padding_mask = batch["net_input"]["padding_mask"].to(device, non_blocking=True)
        labels = batch["labels"].to(device, non_blocking=True)

        optimizer.zero_grad(set_to_none=True)
        logits = model(feats, padding_mask)
        loss = criterion(logits, labels.long())
        loss.backward()
        if grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()

        total_loss += loss.item()
        n_batches += 1
    return total_loss / max(n_batches, 1)


@torch.no_grad()
def validate_and_test(model, data_loader, device, num_classes):
    model.eval()
    preds, golds = [], []
    for batch in data_loader:
        # NOTE: kept as .cuda() from the original release; evaluation always ran on GPU 0
        feats = batch["net_input"]["feats"].cuda()
        padding_mask = batch["net_input"]["padding_mask"].cuda()
        labels = batch["labels"]
        logits = model(feats, padding_mask)
        preds.append(logits.argmax(dim=-1).cpu().numpy())
        golds.append(labels.numpy())
    preds = np.concatenate(preds)
    golds = np.concatenate(golds)

    wa = (preds == golds).mean() * 100
    cm = confusion_matrix(golds, preds, labels=list(range(num_classes)))
    per_class = cm.diagonal() / np.maximum(cm.sum(axis=1), 1)
    ua = per_class.mean() * 100
    f1 = f1_score(golds, preds, average="weighted") * 100
    return wa, ua, f1


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def log_confusion(cm, names):
    header = "      " + " ".join(f"{n:>5}" for n in names)
    logger.info(header)
    for name, row in zip(names, cm):
        logger.info(f"{name:>5} " + " ".join(f"{v:5d}" for v in row))


def gpu_mem_summary(device):
    """Short human readable memory line for the training log."""
    if device.type != "cuda":
        return "n/a"
    alloc = torch.cuda.memory_allocated(device) / 2**20
    reserved = torch.cuda.memory_reserved(device) / 2**20
    return f"{alloc:.0f}/{reserved:.0f} MiB"
