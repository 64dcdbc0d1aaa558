import os
import random

import dgl
import numpy as np
import torch
from sklearn.metrics import f1_score, precision_score, recall_score, roc_auc_score, average_precision_score


def set_random_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    dgl.random.seed(seed)
    # cuDNN is not used by any layer here, kept for parity with BWGNN
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    os.environ['PYTHONHASHSEED'] = str(seed)


def split_dataset(labels, dataset_name, train_ratio, seed=2):
    from sklearn.model_selection import train_test_split
    index = list(range(len(labels)))
    if dataset_name == 'amazon':
        index = list(range(3305, len(labels)))
    labels_np = labels.cpu().numpy()
    idx_train, idx_rest, y_train, y_rest = train_test_split(index, labels_np[index], stratify=labels_np[index],
                                                            train_size=train_ratio, random_state=seed, shuffle=True)
    idx_valid, idx_test, y_valid, y_test = train_test_split(idx_rest, y_rest, stratify=y_rest, test_size=0.67,
                                                            random_state=seed, shuffle=True)
    n = len(labels)
    train_mask = torch.zeros(n, dtype=torch.bool)
    val_mask = torch.zeros(n, dtype=torch.bool)
    test_mask = torch.zeros(n, dtype=torch.bool)
    train_mask[idx_train] = True
    val_mask[idx_valid] = True
    test_mask[idx_test] = True
    return train_mask, val_mask, test_mask


def get_best_f1(labels, probs):
    best_f1, best_thre = 0, 0
    for thres in np.linspace(0.05, 0.95, 19):
        preds = np.zeros_like(labels)
        preds[probs[:, 1] > thres] = 1
        mf1 = f1_score(labels, preds, average='macro')
        if mf1 > best_f1:
            best_f1 = mf1
            best_thre = thres
    return best_f1, best_thre


def evaluate(labels, probs, thres):
    """labels / probs are numpy arrays on the host."""
    preds = np.zeros_like(labels)
    preds[probs[:, 1] > thres] = 1
    rec = recall_score(labels, preds)
    pre = precision_score(labels, preds, zero_division=0)
    mf1 = f1_score(labels, preds, average='macro')
    auc = roc_auc_score(labels, probs[:, 1])
    prc = average_precision_score(labels, probs[:, 1])
    return rec, pre, mf1, auc, prc


@torch.no_grad()
def heterophily_scores(graph, h, labels, train_mask):
    """High-frequency score of every edge.

    For an edge (u, v) the score is the squared difference of the
    (label-corrected) node signals, i.e. the contribution of that edge to
    the quadratic form x^T L x. Training labels overwrite predictions so that
    known fraud-benign edges are ranked first.
    """
    src, dst = graph.edges()
    probs = h.softmax(1)[:, 1]
    signal = probs.clone()
    signal[train_mask] = labels[train_mask].float()
    score = (signal[src] - signal[dst]).pow(2)
    return score


@torch.no_grad()
def delete_edges(graph, h, labels, train_mask, del_ratio, homo=True):
    """Remove the ``del_ratio`` fraction of edges with the highest
    high-frequency score (GHRN, Sec. 4). Self loops are never removed."""
    if del_ratio <= 0:
        return graph
    if homo:
        score = heterophily_scores(graph, h, labels, train_mask)
        src, dst = graph.edges()
        score[src == dst] = -1.0
        k = int(del_ratio * graph.num_edges())
        drop = torch.topk(score, k).indices
        new_graph = dgl.remove_edges(graph, drop)
        return new_graph
    else:
        data_dict = {}
        for etype in graph.canonical_etypes:
            sub = graph[etype]
            score = heterophily_scores(sub, h, labels, train_mask)
            src, dst = sub.edges()
            score[src == dst] = -1.0
            k = int(del_ratio * sub.num_edges())
            keep = torch.ones(sub.num_edges(), dtype=torch.bool, device=score.device)
            keep[torch.topk(score, k).indices] = False
            data_dict[etype] = (src[keep], dst[keep])
        new_graph = dgl.heterograph(data_dict, num_nodes_dict={graph.ntypes[0]: graph.num_nodes()},
                                    device=graph.device)
        for key in graph.ndata:
            new_graph.ndata[key] = graph.ndata[key]
        return new_graph


def log_memory(tag, device):
    if torch.cuda.is_available():
        alloc = torch.cuda.memory_allocated(device) / 1024 ** 3
        reserved = torch.cuda.memory_reserved(device) / 1024 ** 3
        print(f'[{tag}] GPU mem allocated {alloc:.2f} GB, reserved {reserved:.2f} GB')
