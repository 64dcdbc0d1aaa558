# Angus Dempster, Daniel F Schmidt, Geoffrey I Webb

# MiniRocket: A Very Fast (Almost) Deterministic Transform for Time Series
# Classification

# https://arxiv.org/abs/2012.08791

# ** EXPERIMENTAL **
# This is an *untested*, *experimental* extension allowing for the use of
# MiniRocket on larger datasets (using a softmax / logistic regression classifier
# trained with minibatch gradient descent). GPU version: the classifier (not the
# transform, which stays in numba) is trained with PyTorch on a CUDA device using
# mixed precision.

import copy
import time

import numpy as np
import pandas as pd

import torch
import torch.nn as nn
import torch.optim as optim

from minirocket import fit, transform

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
# bf16 is only worth it on Ampere or newer, fall back to fp16 + loss scaling otherwise
if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8:
    AMP_DTYPE = torch.bfloat16
else:
    AMP_DTYPE = torch.float16


def train(path, num_classes, training_size, **kwargs):

    # -- init ------------------------------------------------------------------

    # default hyperparameters are reusable for any dataset
    args = \
    {
        "num_features"    : 10_000,
        "validation_size" : 2 ** 11,
        "chunk_size"      : 2 ** 12,
        "minibatch_size"  : 256,
        "lr"              : 1e-4,
        "max_epochs"      : 50,
        "patience_lr"     : 5,   #  50 minibatches
        "patience"        : 10,  # 100 minibatches
        "cache_size"      : training_size,  # set to 0 to prevent caching
        "use_amp"         : True,
        "compile"         : False,
    }
    args = {**args, **kwargs}

    _num_features = 84 * (args["num_features"] // 84)
    num_chunks = np.int32(np.ceil(training_size / args["chunk_size"]))

    def init(layer):
        if isinstance(layer, nn.Linear):
            nn.init.constant_(layer.weight.data, 0)
            nn.init.constant_(layer.bias.data, 0)

    # -- cache -----------------------------------------------------------------

    # cache as much as possible to avoid unecessarily repeating the transform
    # consider caching to disk if appropriate, along the lines of numpy.memmap
    # pinned host memory makes the host->GPU copies of cached features asynchronous
    cache_X = torch.zeros((args["cache_size"], _num_features)).pin_memory()
    cache_Y = torch.zeros(args["cache_size"], dtype=torch.long)
    cache_count = 0
    fully_cached = False

    # -- model -----------------------------------------------------------------

    model = nn.Sequential(nn.Linear(_num_features, num_classes)).to(DEVICE)  # logistic / softmax regression
    loss_function = nn.CrossEntropyLoss()
    optimizer = optim.Adam(model.parameters(), lr=args["lr"])
    scheduler = optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, min_lr=1e-8,
                                                     patience=args["patience_lr"])
    scaler = torch.cuda.amp.GradScaler(enabled=args["use_amp"] and AMP_DTYPE == torch.float16)
    model.apply(init)
    if args["compile"]:
        model = torch.compile(model, mode="max-autotune")

    # -- run -------------------------------------------------------------------

    minibatch_count = 0
    best_validation_loss = np.inf
    stall_count = 0
    stop = False

    print("Training... (faster once caching is finished)")

    for epoch in range(args["max_epochs"]):

        if epoch > 0 and stop:
            break

        if not fully_cached:
            file = pd.read_csv(path, header=None, chunksize=args["chunk_size"])

        for chunk_index in range(num_chunks):

            a = chunk_index * args["chunk_size"]
            b = min(a + args["chunk_size"], training_size)
            _b = b - a

            if epoch > 0 and stop:
                break

            print(f"Epoch {epoch + 1}; Chunk = {chunk_index + 1}...".ljust(80, " "), end="\r", flush=True)

            # if not fully cached, read next file chunk
            if not fully_cached:

                # read file chunk
                training_data = file.get_chunk().values
                Y, X = training_data[:, 0], training_data[:, 1:]

                # if first epoch, first chunk, then fit the transform and split off validation data
                if epoch == 0 and chunk_index == 0:

                    parameters = fit(X[args["validation_size"]:], args["num_features"])

                    # transform validation data
                    X_validation_transform = transform(X[:args["validation_size"]], parameters)
                    Y_validation = Y[:args["validation_size"]]

                    X = X[args["validation_size"]:]
                    Y = Y[args["validation_size"]:]
                    _b = _b - args["validation_size"]

                    # normalise transformed features
                    f_mean = X_validation_transform.mean(0)
                    f_std = X_validation_transform.std(0) + 1e-8

                    X_validation_transform = (X_validation_transform - f_mean) / f_std
                    X_validation_transform = torch.FloatTensor(X_validation_transform).to(DEVICE)
                    Y_validation = torch.LongTensor(Y_validation).to(DEVICE)

                X_training_transform = transform(X, parameters)

                X_training_transform = (X_training_transform - f_mean) / f_std
                X_training_transform = torch.FloatTensor(X_training_transform)
                Y_training = torch.LongTensor(Y)

                # cache as much of the transform as possible
                if epoch == 0 and args["cache_size"] > 0:
                    cache_remaining = args["cache_size"] - cache_count

                    if cache_remaining > 0:
                        cache_X[cache_count:cache_count + _b] = X_training_transform[:cache_remaining]
                        cache_Y[cache_count:cache_count + _b] = Y_training[:cache_remaining]
                        cache_count += _b

                        if cache_count >= training_size:
                            fully_cached = True

            else:
                X_training_transform = cache_X[a:b]
                Y_training = cache_Y[a:b]

            # -- train -------------------------------------------------------------

            minibatches = torch.randperm(len(X_training_transform)).split(args["minibatch_size"])

            for minibatch_index, minibatch in enumerate(minibatches):

                if epoch > 0 and stop:
                    break

                # abandon undersized minibatches
                if minibatch_index > 0 and len(minibatch) < args["minibatch_size"]:
                    break

                xb = X_training_transform[minibatch].to(DEVICE, non_blocking=True)
                yb = Y_training[minibatch].to(DEVICE, non_blocking=True)

                optimizer.zero_grad()
                with torch.cuda.amp.autocast(enabled=args["use_amp"], dtype=AMP_DTYPE):
                    _Y_training = model(xb)
                    training_loss = loss_function(_Y_training, yb)
                scaler.scale(training_loss).backward()
                scaler.step(optimizer)
                scaler.update()

                minibatch_count += 1

                if minibatch_count % 10 == 0:

                    with torch.no_grad(), torch.cuda.amp.autocast(enabled=args["use_amp"], dtype=AMP_DTYPE):
                        _Y_validation = model(X_validation_transform)
                        validation_loss = loss_function(_Y_validation.float(), Y_validation).item()

                    scheduler.step(validation_loss)

                    if validation_loss < best_validation_loss:
                        best_validation_loss = validation_loss
                        best_model = copy.deepcopy(model)
                        stall_count = 0
                    else:
                        stall_count += 1
                        if stall_count >= args["patience"]:
                            stop = True
                            print(f"\n<Stopped at Epoch {epoch + 1}>")

    return parameters, best_model, f_mean, f_std


def predict(path, parameters, model, f_mean, f_std, **kwargs):

    args = \
    {
        "score"      : True,
        "chunk_size" : 2 ** 12,
        "test_size"  : None
    }
    args = {**args, **kwargs}

    file = pd.read_csv(path, header=None, chunksize=args["chunk_size"])

    predictions = []

    correct = 0
    total = 0

    for chunk_index, chunk in enumerate(file):

        print(f"Chunk = {chunk_index + 1}...".ljust(80, " "), end="\r")

        test_data = chunk.values
        Y, X = test_data[:, 0], test_data[:, 1:]

        X_transform = transform(X, parameters)
        X_transform = (X_transform - f_mean) / f_std
        X_transform = torch.FloatTensor(X_transform).to(DEVICE)

        with torch.no_grad():
            _predictions = model(X_transform).argmax(1).cpu().numpy()
        predictions.append(_predictions)

        total += len(test_data)
        correct += (_predictions == Y).sum()

    if args["score"]:
        return np.concatenate(predictions), correct / total
    else:
        return np.concatenate(predictions)


if __name__ == "__main__":
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument("--train_path", required=True)
    p.add_argument("--test_path", required=True)
    p.add_argument("--num_classes", type=int, required=True)
    p.add_argument("--training_size", type=int, required=True)
    p.add_argument("--no_amp", action="store_true")
    p.add_argument("--compile", action="store_true")
    a = p.parse_args()
    t0 = time.time()
    parameters, model, f_mean, f_std = train(a.train_path, a.num_classes, a.training_size,
                                             use_amp=not a.no_amp, compile=a.compile)
    t1 = time.time()
    _, acc = predict(a.test_path, parameters, model, f_mean, f_std)
    print(f"\naccuracy: {acc:.4f} | training time: {t1 - t0:.1f}s | device: {DEVICE} | amp dtype: {AMP_DTYPE}")
