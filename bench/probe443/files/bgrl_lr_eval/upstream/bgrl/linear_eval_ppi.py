import numpy as np
import torch
from sklearn.metrics import f1_score
from torch import nn
from torch.utils.data import TensorDataset, DataLoader


def train_linear_layer(num_classes, train_data, val_data, test_data, device):
    r"""
    Trains a linear layer on top of the representations. This function is specific to the PPI dataset,
    which has multiple labels.
    """
    def train(classifier, train_data, optimizer):
        classifier.train()

        x, label = train_data
        x, label = x.to(device), label.to(device)
        for step in range(100):
            # forward
            optimizer.zero_grad()
            pred_logits = classifier(x)
            # loss and backprop
            loss = criterion(pred_logits, label)
            loss.backward()
            optimizer.step()

    def test(classifier, data):
        classifier.eval()
        x, label = data
        label = label.cpu().numpy().squeeze()

        # feed to network and classifier
        with torch.no_grad():
            pred_logits = classifier(x.to(device))
            pred_class = (pred_logits > 0).float().cpu().numpy()

        return f1_score(label, pred_class, average='micro') if pred_class.sum() > 0 else 0

    num_feats = train_data[0].size(1)
    criterion = torch.nn.BCEWithLogitsLoss()

    # normalization
    mean, std = train_data[0].mean(0, keepdim=True), train_data[0].std(0, unbiased=False, keepdim=True)
    train_data[0] = (train_data[0] - mean) / std
    val_data[0] = (val_data[0] - mean) / std
    test_data[0] = (test_data[0] - mean) / std

    best_val_f1 = 0
    test_f1 = 0
    for weight_decay in 2.0 ** np.arange(-10, 11, 2):
        classifier = torch.nn.Linear(num_feats, num_classes).to(device)
        optimizer = torch.optim.AdamW(params=classifier.parameters(), lr=0.01, weight_decay=weight_decay)

        train(classifier, train_data, optimizer)
        val_f1 = test(classifier, val_data)
        if val_f1 > best_val_f1:
            best_val_f1 = val_f1
            test_f1 = test(classifier, test_data)

    return best_val_f1, test_f1


def batched_train_linear_layer(num_classes, train_data, val_data, test_data, device, batch_size=4096,
                               num_epochs=100):
    r"""Mini-batch variant used for the larger PPI-like benchmarks; representations stay on host memory and
    are streamed to the GPU one batch at a time."""
    num_feats = train_data[0].size(1)
    criterion = torch.nn.BCEWithLogitsLoss()

    train_loader = DataLoader(TensorDataset(*train_data), batch_size=batch_size, shuffle=True,
                              pin_memory=True, num_workers=2)
    val_loader = DataLoader(TensorDataset(*val_data), batch_size=batch_size, shuffle=False, pin_memory=True)
    test_loader = DataLoader(TensorDataset(*test_data), batch_size=batch_size, shuffle=False, pin_memory=True)

    def evaluate(classifier, loader):
        classifier.eval()
        preds, labels = [], []
        with torch.no_grad():
            for x, y in loader:
                x = x.to(device, non_blocking=True)
                preds.append((classifier(x) > 0).float().cpu())
                labels.append(y)
        preds = torch.cat(preds).numpy()
        labels = torch.cat(labels).numpy()
        return f1_score(labels, preds, average='micro') if preds.sum() > 0 else 0

    best_val_f1, best_test_f1 = 0, 0
    for weight_decay in 2.0 ** np.arange(-10, 11, 4):
        classifier = nn.Linear(num_feats, num_classes).to(device)
        optimizer = torch.optim.AdamW(classifier.parameters(), lr=0.01, weight_decay=weight_decay)
        for epoch in range(num_epochs):
            classifier.train()
            for x, y in train_loader:
                x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
                optimizer.zero_grad()
                loss = criterion(classifier(x), y)
                loss.backward()
                optimizer.step()
        val_f1 = evaluate(classifier, val_loader)
        if val_f1 > best_val_f1:
            best_val_f1 = val_f1
            best_test_f1 = evaluate(classifier, test_loader)
        del classifier, optimizer
        torch.cuda.empty_cache()

    return best_val_f1, best_test_f1
