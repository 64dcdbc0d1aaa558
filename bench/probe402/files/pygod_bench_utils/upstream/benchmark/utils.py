import torch
import random
import numpy as np
from pygod.detector import *
from pygod.utils import load_data
from torch_geometric.nn import GIN, GCN, GAT


def init_model(args):
    dropout = [0, 0.1, 0.3]
    lr = [0.1, 0.05, 0.01]
    weight_decay = 0.01

    if args.dataset == 'inj_flickr' or args.dataset == 'dgraph':
        # sampling and minibatch training on large dataset flickr
        batch_size = 64
        num_neigh = 3
        epoch = 2
    else:
        batch_size = 0
        num_neigh = -1
        epoch = 300

    model_name = args.model
    gpu = args.gpu

    if hasattr(args, 'epoch'):
        epoch = args.epoch

    if args.dataset == 'reddit':
        # for the low feature dimension dataset
        hid_dim = [32, 48, 64]
    elif args.dataset in ['enron', 'disney', 'dgraph', 'books']:
        hid_dim = [8, 12, 16]
    else:
        hid_dim = [32, 64, 128, 256]

    if args.dataset[:3] == 'inj':
        # auto balancing on injected dataset
        alpha = [None]
    else:
        alpha = [0.8, 0.5, 0.2]

    if model_name == "adone":
        return AdONE(hid_dim=random.choice(hid_dim),
                     weight_decay=weight_decay,
                     dropout=random.choice(dropout),
                     lr=random.choice(lr),
                     epoch=epoch,
                     gpu=gpu,
                     batch_size=batch_size,
                     num_neigh=num_neigh)
    elif model_name == 'anomalydae':
        hd = random.choice(hid_dim)
        return AnomalyDAE(emb_dim=hd,
                          hid_dim=hd,
                          weight_decay=weight_decay,
                          dropout=random.choice(dropout),
                          lr=random.choice(lr),
                          epoch=epoch,
                          gpu=gpu,
                          alpha=random.choice(alpha),
                          batch_size=batch_size,
                          num_neigh=num_neigh)
    elif model_name == 'conad':
        return CONAD(hid_dim=random.choice(hid_dim),
                     weight_decay=weight_decay,
                     dropout=random.choice(dropout),
                     lr=random.choice(lr),
                     epoch=epoch,
                     gpu=gpu,
                     weight=random.choice(alpha),
                     batch_size=batch_size,
                     num_neigh=num_neigh)
    elif model_name == 'dominant':
        return DOMINANT(hid_dim=random.choice(hid_dim),
                        weight_decay=weight_decay,
                        dropout=random.choice(dropout),
                        lr=random.choice(lr),
                        epoch=epoch,
                        gpu=gpu,
                        weight=random.choice(alpha),
                        batch_size=batch_size,
                        num_neigh=num_neigh)
    elif model_name == 'done':
        return DONE(hid_dim=random.choice(hid_dim),
                    weight_decay=weight_decay,
                    dropout=random.choice(dropout),
                    lr=random.choice(lr),
                    epoch=epoch,
                    gpu=gpu,
                    batch_size=batch_size,
                    num_neigh=num_neigh)
    elif model_name == 'gaan':
        return GAAN(noise_dim=random.choice([8, 16, 32]),
                    hid_dim=random.choice(hid_dim),
                    weight_decay=weight_decay,
                    dropout=random.choice(dropout),
                    lr=random.choice(lr),
                    epoch=epoch,
                    gpu=gpu,
                    weight=random.choice(alpha),
                    batch_size=batch_size,
                    num_neigh=num_neigh)
    elif model_name == 'gae':
        return GAE(hid_dim=random.choice(hid_dim),
                   weight_decay=weight_decay,
                   dropout=random.choice(dropout),
                   lr=random.choice(lr),
                   epoch=epoch,
                   gpu=gpu,
                   batch_size=batch_size,
                   num_neigh=num_neigh)
    elif model_name == 'guide':
        return GUIDE(a_hid=random.choice(hid_dim),
                     s_hid=random.choice([4, 5, 6]),
                     weight_decay=weight_decay,
                     dropout=random.choice(dropout),
                     lr=random.choice(lr),
                     epoch=epoch,
                     gpu=gpu,
                     alpha=random.choice(alpha),
                     batch_size=batch_size,
                     num_neigh=num_neigh,
                     cache_dir='./tmp')
    elif model_name == "ocgnn":
        return OCGNN(hid_dim=random.choice(hid_dim),
                     weight_decay=weight_decay,
                     dropout=random.choice(dropout),
                     lr=random.choice(lr),
                     epoch=epoch,
                     gpu=gpu,
                     batch_size=batch_size,
                     num_neigh=num_neigh)
    elif model_name == 'cola':
        return CoLA(hid_dim=random.choice(hid_dim),
                    weight_decay=weight_decay,
                    dropout=random.choice(dropout),
                    lr=random.choice(lr),
                    epoch=epoch,
                    gpu=gpu,
                    batch_size=batch_size,
                    num_neigh=num_neigh)
    elif model_name == 'radar':
        return Radar(lr=random.choice(lr), gpu=gpu)
    elif model_name == 'anomalous':
        return ANOMALOUS(lr=random.choice(lr), gpu=gpu)
    elif model_name == 'scan':
        return SCAN(eps=random.choice([0.3, 0.5, 0.8]),
                    mu=random.choice([2, 5, 10]))
    elif model_name == 'lof':
        from pyod.models.lof import LOF
        return LOF()
    elif model_name == 'if':
        from pyod.models.iforest import IForest
        return IForest()


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False


def load_benchmark(name):
    data = load_data(name)
    if name in ['weibo', 'reddit', 'disney', 'books', 'enron']:
        data.y = data.y.bool()
    else:
        # injected datasets keep the 2-bit label, binarise here
        data.y = data.y.bool()
    return data
