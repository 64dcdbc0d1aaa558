import os
import h5py
import json
import numpy as np
import pandas as pd
from pathlib import Path
from sklearn import metrics
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..utils import data_utils as du
from ..utils import logging_utils as lu
from ..paper.superNNova_plots import datasets_plots as dp

from ..training import bayesian_rnn
from ..training import bayesian_rnn_2
from ..training import variational_rnn
from ..training import vanilla_rnn


def normalize_arr(arr, settings):
    """Normalize array before input to RNN

    - Log transform
    - Mean and std dev normalization

    Args:
        arr (np.array) data to normalize
        settings (ExperimentSettings): controls experiment hyperparameters

    Returns:
        (np.array) normalized array
    """
    if settings.norm == "none":
        return arr

    if settings.norm == "cosmo":
        arr_to_norm = arr[:, settings.idx_flux]
        # time and flux normalization
        # using LC max flux
        arr_to_norm = arr_to_norm / np.max(arr_to_norm, axis=0)
        arr[:, settings.idx_flux] = arr_to_norm
        return arr

    arr_min = settings.arr_norm[:, 0]
    arr_mean = settings.arr_norm[:, 1]
    arr_std = settings.arr_norm[:, 2]
    arr_to_norm = arr[:, settings.idx_features_to_normalize]
    # clipping
    arr_to_norm = np.clip(arr_to_norm, arr_min, np.inf)
    # Normalize in log space
    arr_normed = np.log(arr_to_norm - arr_min + 1e-5)
    arr_normed = (arr_normed - arr_mean) / arr_std

    arr[:, settings.idx_features_to_normalize] = arr_normed

    return arr


def fill_data_list(idxs, arr_data, arr_target, arr_SNID, settings, n_features, desc, test=False):
    """Utility to create a list of data tuples used as inputs to RNN model"""
    list_data = []

    start_idx = settings.num_features_to_skip if hasattr(settings, "num_features_to_skip") else 0

    for i in lu.progress_bar(idxs, desc=desc):
        X_all = arr_data[i].reshape(-1, n_features)
        target = int(arr_target[i])
        lc = int(arr_SNID[i])

        # Keep an unnormalized copy of the data (for test and display)
        X_ori = X_all.copy()[:, start_idx:]

        # check if normalization converges
        # using clipping in case of min<model_min
        X_clip = X_all.copy()
        X_clip = np.clip(X_clip[:, settings.idx_features_to_normalize], settings.arr_norm[:, 0], np.inf)
        X_all[:, settings.idx_features_to_normalize] = X_clip

        X_tmp = normalize_arr(X_all.copy(), settings)

        list_data.append((X_tmp[:, start_idx:], target, lc, X_all.shape[0], X_ori))

    return list_data


def load_HDF5(settings, test=False):
    """Load data from HDF5

    Args:
        settings (ExperimentSettings): controls experiment hyperparameters
        test (bool): If True: load data for test. Else: load data for train/val

    Returns:
        list_data_train (list) list of tuples of (X, target, lightcurve_ID)
        list_data_val (list) list of tuples of (X, target, lightcurve_ID)
    """
    file_name = f"{settings.processed_dir}/database.h5"
    lu.print_green(f"Loading {file_name}")
    with h5py.File(file_name, "r") as hf:

        list_data_train = []
        list_data_val = []

        config_name = f"{settings.source_data}_{settings.nb_classes}classes"

        dataset_split_key = f"dataset_{config_name}"
        target_key = f"target_{settings.nb_classes}classes"

        if any([settings.train_plasticc, settings.predict]):
            dataset_split_key = "dataset_photometry_2classes"

        if test:
            idxs_test = np.where(hf[dataset_split_key][:] != 100)[0]
        else:
            idxs_train = np.where(hf[dataset_split_key][:] == 0)[0]
            idxs_val = np.where(hf[dataset_split_key][:] == 1)[0]
            idxs_test = np.where(hf[dataset_split_key][:] == 2)[0]

            # Shuffle for good measure
            np.random.shuffle(idxs_train)
            np.random.shuffle(idxs_val)
            np.random.shuffle(idxs_test)

            idxs_train = idxs_train[: int(settings.data_fraction * len(idxs_train))]

        n_features = hf["data"].attrs["n_features"]

        training_features_data = hf["features"][:].astype(str)
        training_features = settings.training_features

        # check if all model features are in db
        assert set(training_features) <= set(training_features_data)
        lu.print_green("Features used", " ".join(training_features))

        arr_data = hf["data"][:]
        if test:
            # ridiculous failsafe in case we have different classes in dataset/model
            # we will always have 2 classes
            try:
                arr_target = hf[target_key][:]
            except Exception:
                arr_target = hf["target_2classes"][:]
        else:
            arr_target = hf[target_key][:]
        arr_SNID = hf["SNID"][:].astype(str)

        if test is True:
            return fill_data_list(idxs_test, arr_data, arr_target, arr_SNID, settings, n_features, "Loading Test Set", test=True)
        else:
            list_data_train = fill_data_list(idxs_train, arr_data, arr_target, arr_SNID, settings, n_features, "Loading Training Set")
            list_data_val = fill_data_list(idxs_val, arr_data, arr_target, arr_SNID, settings, n_features, "Loading Validation Set")

        return list_data_train, list_data_val


def get_model(settings, input_size):
    """Create RNN model

    Args:
        settings (ExperimentSettings): controls experiment hyperparameters
        input_size (int): dimension of the input features

    Returns:
        (torch.nn Model) pytorch model
    """
    if settings.model == "vanilla":
        rnn = vanilla_rnn.VanillaRNN
    elif settings.model == "variational":
        rnn = variational_rnn.VariationalRNN
    elif settings.model == "bayesian":
        rnn = bayesian_rnn.BayesianRNN
    elif settings.model == "bayesian_2":
        rnn = bayesian_rnn_2.BayesianRNN

    rnn = rnn(input_size, settings)

    print(rnn)

    return rnn


def get_optimizer(settings, model):
    """Create gradient descent optimizer

    Args:
        settings (ExperimentSettings): controls experiment hyperparameters
        model (torch.nn Model): the pytorch model

    Returns:
        (torch.optim) the gradient descent optimizer
    """
    optimizer = torch.optim.Adam(model.parameters(), lr=settings.learning_rate, weight_decay=settings.weight_decay)

    return optimizer


def get_data_batch(list_data, idxs, settings, max_lengths=None, OOD=None):
    """Create a batch in a deterministic way

    Args:
        list_data: (list) tuples of (X, target, lightcurve_ID)
        idxs: (array / list) indices of batch element in list_data
        settings (ExperimentSettings): controls experiment hyperparameters
        max_length (int): Maximum light curve length to be used Default: ``None``.
        OOD (str): Whether to modify data to create out of distribution data to be used Default: ``None``.

    Returns:
        Tuple containing

        - packed_tensor (torch PackedSequence): the packed features
        - X_tensor (torch Tensor): the features
        - target_tensor (torch Tensor): the target
    """
    list_len = []
    X_tensor = []
    target_tensor = []

    if max_lengths is not None:
        assert len(max_lengths) == len(idxs)

    for pos, i in enumerate(idxs):
        X, target, *_ = list_data[i]

        if max_lengths is not None:
            X = X[: max_lengths[pos]]

        if OOD is not None:
            X = du.apply_OOD(X, OOD, settings)

        list_len.append(X.shape[0])
        X_tensor.append(X)
        target_tensor.append(target)

    # Sort indices by length (required by pack_padded_sequence)
    idxs_sort = np.argsort(list_len)[::-1]
    idxs_rev_sort = np.argsort(idxs_sort)  # these indices revert the sort
    max_len = list_len[idxs_sort[0]]

    X_tensor = torch.zeros((max_len, len(idxs), X_tensor[0].shape[-1])).float()
    for pos, idx in enumerate(idxs_sort):
        X, *_ = list_data[idxs[idx]]
        if max_lengths is not None:
            X = X[: max_lengths[idx]]
        if OOD is not None:
            X = du.apply_OOD(X, OOD, settings)
        X_tensor[: X.shape[0], pos, :] = torch.from_numpy(X)

    target_tensor = torch.from_numpy(np.array(target_tensor)[idxs_sort]).long()

    lengths = [list_len[i] for i in idxs_sort]

    if settings.use_cuda:
        X_tensor = X_tensor.cuda()
        target_tensor = target_tensor.cuda()

    # lengths must stay on the CPU for pack_padded_sequence (torch >= 1.7)
    packed = nn.utils.rnn.pack_padded_sequence(X_tensor, lengths)

    return packed, X_tensor, target_tensor, idxs_rev_sort


def train_step(settings, rnn, packed_tensor, target_tensor, criterion, optimizer, batch_size, num_batches):
    """Full training step : forward and backward pass

    Args:
        settings (ExperimentSettings): controls experiment hyperparameters
        rnn (torch.nn Model): pytorch model to train
        packed_tensor (torch PackedSequence): input tensor in packed form
        target_tensor (torch Tensor): target tensor
        criterion (torch loss function): loss function to optimize
        optimizer (torch optim): gradient descent optimizer
        batch_size (int): batch size
        num_batches (int): number of minibatches to train on

    Returns:
        (float) loss value
    """
    # Set NN to train mode (deals with dropout and batchnorm)
    rnn.train()

    # Zero the gradients
    optimizer.zero_grad()

    # Forward pass
    output = rnn(packed_tensor)
    loss = criterion(output.squeeze(), target_tensor)

    # Special case for BayesianRNN, need to use KL loss
    if isinstance(rnn, bayesian_rnn.BayesianRNN) or isinstance(rnn, bayesian_rnn_2.BayesianRNN):
        loss = loss + rnn.kl / (num_batches * batch_size)

    # Backward pass
    loss.backward()
    if settings.clip_grad > 0:
        torch.nn.utils.clip_grad_norm_(rnn.parameters(), settings.clip_grad)
    optimizer.step()

    return loss


def eval_step(rnn, packed_tensor, batch_size):
    """Eval step: Forward pass only

    Args:
        rnn (torch.nn Model): pytorch model to train
        packed_tensor (torch PackedSequence): input tensor in packed form
        batch_size (int): batch size

    Returns:
        output (torch Tensor): output of rnn
    """
    # Set NN to eval mode
    rnn.eval()

    # Forward pass
    output = rnn(packed_tensor)

    return output


def get_evaluation_metrics(settings, list_data, model, sample_size=None):
    """Compute evaluation metrics on a list of data points

    Args:
        settings (ExperimentSettings): controls experiment hyperparameters
        list_data (list): contains data in the form (X, target, lightcurve_ID)
        model (torch.nn Model): pytorch model
        sample_size (int): subset of the data to use for validation. Default: ``None``

    Returns:
        d_monitor (dict) dict containing the metrics
    """
    # Validate
    list_pred = []
    list_target = []
    list_kl = []
    num_elem = len(list_data)
    num_batches = num_elem // min(num_elem // 2, settings.batch_size)
    list_batches = np.array_split(np.arange(num_elem), num_batches)

    # If required, pick a subset of list batches at random
    if sample_size:
        batch_idxs = np.random.permutation(len(list_batches))
        num_batches = sample_size // settings.batch_size
        batch_idxs = batch_idxs[:num_batches]
        list_batches = [list_batches[batch_idx] for batch_idx in batch_idxs]

    for batch_idxs in list_batches:
        random_length = settings.random_length
        settings.random_length = False
        packed, _, target_tensor, idxs_rev_sort = get_data_batch(list_data, batch_idxs, settings)
        settings.random_length = random_length
        output = eval_step(model, packed, target_tensor.size(0))

        if "bayesian" in settings.pytorch_model_name:
            list_kl.append(model.kl.detach().cpu().item())

        # Apply softmax
        pred_proba = nn.functional.softmax(output, dim=1)

        # Convert to numpy array
        pred_proba = pred_proba.data.cpu().numpy()
        target_numpy = target_tensor.data.cpu().numpy()

        # Revert sort
        pred_proba = pred_proba[idxs_rev_sort]
        target_numpy = target_numpy[idxs_rev_sort]

        list_pred.append(pred_proba)
        list_target.append(target_numpy)
    targets = np.concatenate(list_target, axis=0)
    preds = np.concatenate(list_pred, axis=0)

    # Check if binary or multiclass classification
    binary = settings.nb_classes == 2
    if binary:
        auc = metrics.roc_auc_score(targets, preds[:, 1])
    else:
        auc = metrics.roc_auc_score(targets, preds, multi_class="ovr")
    acc = metrics.accuracy_score(targets, np.argmax(preds, 1))

    d_monitor = {"loss": metrics.log_loss(targets, preds, labels=range(settings.nb_classes)), "AUC": auc, "Acc": acc}
    if len(list_kl) != 0:
        d_monitor["KL"] = np.mean(list_kl)

    return d_monitor


def load_model(settings, model_file, input_size):
    """Load a trained RNN for validation / prediction on a machine that may not have a GPU."""
    rnn = get_model(settings, input_size)
    map_location = "cuda" if settings.use_cuda else "cpu"
    rnn.load_state_dict(torch.load(model_file, map_location=map_location))
    if settings.use_cuda:
        rnn.cuda()
    rnn.eval()
    return rnn
