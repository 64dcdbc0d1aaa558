import logging
from typing import Dict, List

import numpy as np
import torch
from sklearn.metrics import f1_score

logger = logging.getLogger('IEMOCAP_Downstream')


def train_one_epoch(model, optimizer, criterion, train_loader, device):
    model.train()
    total_loss = 0.0
    n_batches = 0

    for batch in train_loader:
        ids = batch["id"]
        net_input = batch["net_input"]
        feats = net_input["feats"].to(device)
        padding_mask = net_input["padding_mask"].to(device)
        labels = batch["labels"].to(device)

        optimizer.zero_grad()
        outputs = model(feats, padding_mask)
        loss = criterion(outputs, labels.long())
        loss.backward()
        optimizer.step()

        total_loss += loss.item()
        n_batches += 1

    return total_loss / max(n_batches, 1)


@torch.no_grad()
def validate_and_test(model, data_loader, device, num_classes):
    model.eval()
    correct, total = 0, 0

    # unweighted accuracy
    unweighted_correct = [0] * num_classes
    unweighted_total = [0] * num_classes

    # weighted f1
    all_preds: List[int] = []
    all_labels: List[int] = []

    for batch in data_loader:
        feats = batch["net_input"]["feats"].to(device)
        padding_mask = batch["net_input"]["padding_mask"].to(device)
        labels = batch["labels"].to(device)

        outputs = model(feats, padding_mask)
        _, predicted = torch.max(outputs.data, 1)

        total += labels.size(0)
        correct += (predicted == labels.long()).sum().item()
        for i in range(len(labels)):
            unweighted_total[labels[i]] += 1
            if predicted[i] == labels[i]:
                unweighted_correct[labels[i]] += 1

        all_preds += predicted.cpu().numpy().tolist()
        all_labels += labels.cpu().numpy().tolist()

    weighted_acc = correct / total * 100
    unweighted_acc = np.mean(
        [c / t for c, t in zip(unweighted_correct, unweighted_total) if t > 0]
    ) * 100
    weighted_f1 = f1_score(all_labels, all_preds, average='weighted') * 100

    return weighted_acc, unweighted_acc, weighted_f1


def collate_padded(samples: List[Dict]):
    """Pad variable-length frame features to the longest item in the batch."""
    if len(samples) == 0:
        return {}
    feats = [s["feats"] for s in samples]
    sizes = [f.shape[0] for f in feats]
    labels = torch.tensor([s["label"] for s in samples])
    target_size = max(sizes)
    collated = feats[0].new_zeros(len(feats), target_size, feats[0].size(-1))
    padding_mask = torch.BoolTensor(torch.Size([len(feats), target_size])).fill_(False)
    for i, (f, size) in enumerate(zip(feats, sizes)):
        collated[i, :size] = f
        padding_mask[i, size:] = True
    return {
        "id": torch.LongTensor([s["id"] for s in samples]),
        "net_input": {"feats": collated, "padding_mask": padding_mask},
        "labels": labels,
    }


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def describe_confusion(all_labels, all_preds, label_names):
    n = len(label_names)
    cm = np.zeros((n, n), dtype=np.int64)
    for y, p in zip(all_labels, all_preds):
        cm[y, p] += 1
    lines = ["\t" + "\t".join(label_names)]
    for i, name in enumerate(label_names):
        lines.append(name + "\t" + "\t".join(str(v) for v in cm[i]))
    return "\n".join(lines)
