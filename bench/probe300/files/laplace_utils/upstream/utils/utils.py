import os
import random
import time
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim
from sklearn.metrics import roc_auc_score, roc_curve
import scipy.stats as st

from models.wrn import WideResNet
from models.models import MLP, LeNet
from models import wilds_models


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    # results in the paper were produced with cudnn in deterministic mode
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def timing(fun):
    """ Return the original output(s) and a wall-clock timing in second. """
    if torch.cuda.is_available():
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        ret = fun()
        end.record()
        torch.cuda.synchronize()
        elapsed_time = start.elapsed_time(end) / 1000
    else:
        start_time = time.time()
        ret = fun()
        end_time = time.time()
        elapsed_time = end_time - start_time
    return ret, elapsed_time


def load_pretrained_model(args, model_idx, n_classes, device):
    """ Choose appropriate architecture and load pre-trained weights """

    if "WILDS" in args.benchmark:
        dataset = args.benchmark[6:]
        model = wilds_models.load_model(dataset, model_idx, device)
    else:
        if args.model == "MLP":
            model = MLP(n_classes)
        elif args.model == "LeNet":
            model = LeNet(n_classes)
        elif args.model == "WRN16-4-fixup":
            model = WideResNet(16, 4, num_classes=n_classes, fixup=True)
        elif args.model == "WRN50-2":
            import torchvision
            model = torchvision.models.wide_resnet50_2()
            model = torch.nn.DataParallel(model)
        else:
            model = WideResNet(16, 4, num_classes=n_classes)

        if args.benchmark in ["R-MNIST", "MNIST-OOD"]:
            fpath = os.path.join(args.models_root, "lenet_mnist/lenet_mnist_{}_{}")
        elif args.benchmark in ["R-FMNIST", "FMNIST-OOD"]:
            fpath = os.path.join(args.models_root, "lenet_fmnist/lenet_fmnist_{}_{}")
        elif args.benchmark in ["CIFAR-10-C", "CIFAR-10-OOD"]:
            fpath = os.path.join(args.models_root, "wrn16_4_cifar10/wrn_16-4_cifar10_{}_{}")
        elif args.benchmark == "ImageNet-C":
            fpath = os.path.join(args.models_root, "wrn50_2_imagenet/wrn_50-2_imagenet_{}_{}")

        model_seed = args.model_seed if args.model_seed is not None else 972394 + model_idx
        fpath = fpath.format(model_seed, "mixup" if getattr(args, "mixup", False) else "")
        state_dict = torch.load(fpath + ".pt", map_location=device)
        if args.model == "WRN50-2":
            # ImageNet checkpoints were saved from a DataParallel wrapper
            state_dict = OrderedDict(("module." + k if not k.startswith("module.") else k, v)
                                     for k, v in state_dict.items())
        model.load_state_dict(state_dict)

    model.to(device)
    model.eval()
    return model


def get_auroc(py_in, py_out):
    py_in, py_out = py_in.cpu().numpy(), py_out.cpu().numpy()
    labels = np.zeros(len(py_in) + len(py_out), dtype="int32")
    labels[: len(py_in)] = 1
    examples = np.concatenate([py_in.max(1), py_out.max(1)])
    return roc_auc_score(labels, examples)


def get_fpr95(py_in, py_out):
    py_in, py_out = py_in.cpu().numpy(), py_out.cpu().numpy()
    conf_in, conf_out = py_in.max(1), py_out.max(1)
    tpr = 95
    perc = np.percentile(conf_in, 100 - tpr)
    fp = np.sum(conf_out >= perc)
    fpr = np.sum(conf_out >= perc) / len(conf_out)
    return fpr.item(), perc.item()


def get_brier_score(probs, targets):
    targets = F.one_hot(targets, num_classes=probs.shape[1])
    return torch.mean(torch.sum((probs - targets) ** 2, axis=1)).item()


def get_calib(pys, y_true, M=100):
    pys, y_true = pys.cpu().numpy(), y_true.cpu().numpy()
    # Put the confidence into M bins
    _, bins = np.histogram(pys, M, range=(0, 1))

    labels = pys.argmax(1)
    confs = np.max(pys, axis=1)
    conf_idxs = np.digitize(confs, bins)

    # Accuracy and avg. confidence per bin
    accs_bin = []
    confs_bin = []
    nitems_bin = []

    for i in range(M):
        labels_i = labels[conf_idxs == i]
        y_true_i = y_true[conf_idxs == i]
        confs_i = confs[conf_idxs == i]

        acc = np.nan_to_num(np.mean(labels_i == y_true_i), 0)
        conf = np.nan_to_num(np.mean(confs_i), 0)

        accs_bin.append(acc)
        confs_bin.append(conf)
        nitems_bin.append(len(labels_i))

    accs_bin, confs_bin = np.array(accs_bin), np.array(confs_bin)
    nitems_bin = np.array(nitems_bin)

    ECE = np.average(np.abs(confs_bin - accs_bin), weights=nitems_bin / nitems_bin.sum())
    MCE = np.max(np.abs(accs_bin - confs_bin))

    return ECE, MCE


def get_calib_regression(pred_means, pred_stds, y_true, return_hist=False, M=10):
    """
    Kuleshov et al. ICML 2018, eq. 9
    * pred_means, pred_stds, y_true must be np.array's
    * Set return_hist to True to also return the "histogram"---useful for visualization (see paper)
    """
    T = np.linspace(0, 1, M)
    q = st.norm.ppf(T[1:-1])
    # standardised residuals
    z = (y_true - pred_means) / pred_stds
    ps = np.array([np.mean(z <= qi) for qi in q])
    cal = T[1:-1] - ps
    if return_hist:
        return np.sum(cal ** 2), (T[1:-1], ps)
    return np.sum(cal ** 2)


def optimize_noise_standard_deviation(model, val_loader, device, epochs=100, lr=1e-1):
    """ optimize the observation noise standard deviation on the validation data """
    log_sigma_noise = nn.Parameter(torch.zeros(1, device=device))
    optimizer = optim.Adam([log_sigma_noise], lr=lr)

    all_y_true = []
    all_f_mu = []
    with torch.no_grad():
        for x, y in val_loader:
            all_f_mu.append(model(x.to(device)))
            all_y_true.append(y.to(device))
    f_mu = torch.cat(all_f_mu).squeeze()
    y_true = torch.cat(all_y_true).squeeze()

    for _ in range(epochs):
        optimizer.zero_grad()
        sigma_noise = log_sigma_noise.exp()
        nll = -torch.distributions.Normal(f_mu, sigma_noise).log_prob(y_true).mean()
        nll.backward()
        optimizer.step()
    return log_sigma_noise.exp().item()


class TemperatureScaling:
    """ fit a single temperature on held-out logits with LBFGS """

    def __init__(self, logits, y_true, init_temp=1.0):
        self.logits = logits
        self.y_true = y_true
        self.log_temperature = nn.Parameter(torch.tensor([np.log(init_temp)], dtype=torch.float32))

    def optimize(self, max_iter=500):
        optimizer = optim.LBFGS([self.log_temperature], lr=0.01, max_iter=max_iter)

        def closure():
            optimizer.zero_grad()
            loss = F.cross_entropy(self.logits / self.log_temperature.exp(), self.y_true)
            loss.backward()
            return loss

        optimizer.step(closure)
        return self.log_temperature.exp().item()


class TemperatureScaledModel(nn.Module):
    def __init__(self, model, temperature):
        super().__init__()
        self.model = model
        self.temperature = temperature

    def forward(self, x):
        return self.model(x) / self.temperature


def mixture_model_pred(components, x, mixture_weights, prob_space=False,
                       pred_type="glm", link_approx="probit", n_samples=100, likelihood="classification"):
    """ predictive of a (Laplace) mixture model, e.g. MoLA / ensembles """
    out = 0.0
    for model, pi in zip(components, mixture_weights):
        if prob_space:
            out += pi * model(x, pred_type=pred_type, link_approx=link_approx, n_samples=n_samples)
        else:
            logits = model(x)
            out += pi * (torch.softmax(logits, dim=-1) if likelihood == "classification" else logits)
    return out


def expand_prior_precision(prior_prec, model):
    theta = nn.utils.parameters_to_vector(model.parameters())
    device, P = theta.device, len(theta)
    assert prior_prec.ndim == 1
    if len(prior_prec) == 1:  # scalar
        return torch.ones(P, device=device) * prior_prec
    elif len(prior_prec) == P:  # full diagonal
        return prior_prec.to(device)
    else:
        return torch.cat([delta * torch.ones_like(m).flatten() for delta, m
                          in zip(prior_prec, model.parameters())])


def print_gpu_memory(prefix=""):
    if not torch.cuda.is_available():
        return
    alloc = torch.cuda.memory_allocated() / 2 ** 30
    reserved = torch.cuda.memory_reserved() / 2 ** 30
    print(f"{prefix} allocated={alloc:.2f}GiB reserved={reserved:.2f}GiB")
