import os

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.utils import shuffle
from torch import nn
from tqdm import tqdm

from common.training.batcher import Batcher, prepare, prepare_with_labels
from common.training.early_stopping import EarlyStopping
from common.training.options import gpu, gpu_id, describe
from common.util.log_helper import LogHelper


def evaluate(model, data, labels, batch_size):
    predicted = predict(model, data, batch_size)
    return sum(predicted == labels) / labels.shape[0]


def predict(model, data, batch_size):
    batcher = Batcher(data, batch_size)

    predicted = []
    for batch, size, start, end in batcher:
        d = prepare(batch)
        model.eval()
        logits = model(d).cpu()

        predicted.extend(torch.max(logits, 1)[1])
    return torch.stack(predicted)


def train(model, fs, batch_size, lr, epochs, dev=None, clip=None, early_stopping=None, name=None):
    logger = LogHelper.get_logger(__name__)
    describe()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=1e-4)

    data, labels = fs
    if dev is not None:
        dev_data, dev_labels = dev

    for epoch in tqdm(range(epochs)):
        epoch_loss = 0
        epoch_data = 0

        shuffle(data, labels)

        batcher = Batcher(data, batch_size)

        for batch, size, start, end in batcher:
            d, gold = prepare_with_labels(batch, labels[start:end])

            model.train()
            optimizer.zero_grad()
            logits = model(d)

            loss = F.cross_entropy(logits, gold)
            loss.backward()

            epoch_loss += loss.cpu()
            epoch_data += size

            if clip is not None:
                torch.nn.utils.clip_grad_norm(model.parameters(), clip)
            optimizer.step()

        logger.info("Average epoch loss: {0}".format((epoch_loss / epoch_data).data.numpy()))

        if dev is not None:
            acc = evaluate(model, dev_data, dev_labels, batch_size)
            logger.info("Epoch {0} Accuracy {1}%".format(epoch, acc * 100))

            if early_stopping is not None and early_stopping(model, acc):
                break

    if early_stopping is not None:
        early_stopping.set_best_state(model)


def print_evaluation(model, data, ls, log=None):
    features, actual = data
    predictions = predict(model, features, 500).data.numpy().reshape(-1).tolist()

    labels = [ls.idx[i] for i, _ in enumerate(ls.idx)]

    actual = [labels[i] for i in actual]
    predictions = [labels[i] for i in predictions]

    from sklearn.metrics import accuracy_score, classification_report, confusion_matrix
    print(accuracy_score(actual, predictions))
    print(classification_report(actual, predictions))
    print(confusion_matrix(actual, predictions))

    data = zip(actual, predictions)
    if log is not None:
        f = open(log, "w+")
        for a, p in data:
            f.write(json.dumps({"actual": a, "predicted": p}) + "\n")
        f.close()


def exp_lr_scheduler(optimizer, epoch, init_lr=0.001, lr_decay_epoch=7):
    """Decay learning rate by a factor of 0.1 every lr_decay_epoch epochs."""
    lr = init_lr * (0.1 ** (epoch // lr_decay_epoch))

    if epoch % lr_decay_epoch == 0:
        print('LR is set to {}'.format(lr))

    for param_group in optimizer.param_groups:
        param_group['lr'] = lr

    return optimizer


def save_model(model, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.save(model.state_dict(), path)


def load_model(model, path):
    if gpu():
        model.load_state_dict(torch.load(path))
        return model.cuda(gpu_id())
    model.load_state_dict(torch.load(path, map_location=lambda storage, loc: storage))
    return model


import json  # noqa: E402  (used by print_evaluation)
