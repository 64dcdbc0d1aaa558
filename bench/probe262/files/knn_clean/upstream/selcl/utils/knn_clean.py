"""kNN-based noisy-label detection in the learned feature space (Sel-CL / FINE style).

Every `--clean_every` epochs the training script calls `select_confident_pairs` which
  1. embeds the whole (noisy) training set with the current encoder,
  2. builds an inner-product index over the L2-normalised features (faiss, on the GPU if present),
  3. lets each sample's k nearest neighbours vote on its label,
  4. keeps samples whose given label agrees with the neighbourhood vote.
"""
import time

import faiss
import numpy as np
import torch
import torch.nn.functional as F


@torch.no_grad()
def extract_features(model, loader, feat_dim=128):
    """Return (features [N, D] float32 numpy, given labels [N] int64 numpy) ordered by dataset index."""
    model.eval()
    n = len(loader.dataset)
    feats = np.zeros((n, feat_dim), dtype=np.float32)
    labels = np.zeros(n, dtype=np.int64)
    for x, y, idx in loader:
        x = x.cuda(non_blocking=True)
        f = model(x, return_feat=True)
        f = F.normalize(f, dim=1)
        feats[idx.numpy()] = f.cpu().numpy()
        labels[idx.numpy()] = y.numpy()
    return feats, labels


def build_index(feats, use_gpu=True, gpu_id=0):
    d = feats.shape[1]
    index = faiss.IndexFlatIP(d)
    if use_gpu:
        res = faiss.StandardGpuResources()
        index = faiss.index_cpu_to_gpu(res, gpu_id, index)
    index.add(feats)
    return index


def knn_vote(feats, noisy_labels, num_classes, k=250, temperature=0.1, use_gpu=True):
    """Soft kNN label distribution for every sample (self excluded)."""
    t0 = time.time()
    index = build_index(feats, use_gpu=use_gpu, gpu_id=0)
    sims, nbrs = index.search(feats, k + 1)
    sims, nbrs = sims[:, 1:], nbrs[:, 1:]  # drop self-match

    n = feats.shape[0]
    nbrs_t = torch.from_numpy(nbrs).long().cuda()
    w = torch.from_numpy(sims).cuda().div_(temperature).exp_()
    labels_t = torch.from_numpy(noisy_labels).cuda()
    votes = torch.zeros(n, num_classes, device='cuda')
    votes.scatter_add_(1, labels_t[nbrs_t], w)
    votes = votes / votes.sum(dim=1, keepdim=True)
    print('[knn] %d samples, k=%d, search+vote %.1fs' % (n, k, time.time() - t0))
    return votes


def select_confident_examples(votes, noisy_labels, threshold=None):
    """Indices whose given label gets at least `threshold` of the neighbourhood vote.

    With threshold=None, a sample is kept when its label is the arg-max of the vote.
    """
    labels_t = torch.as_tensor(noisy_labels, device=votes.device)
    if threshold is None:
        keep = votes.argmax(dim=1) == labels_t
    else:
        keep = votes.gather(1, labels_t.view(-1, 1)).squeeze(1) >= threshold
    return keep.nonzero(as_tuple=False).view(-1).cpu().numpy()


def select_confident_pairs(model, loader, num_classes, k=250, temperature=0.1, threshold=None, feat_dim=128):
    """Entry point used by the training loop; returns (clean_idx, corrected_labels)."""
    feats, noisy = extract_features(model, loader, feat_dim=feat_dim)
    # faiss-gpu needs a CUDA device; fall back to the CPU index otherwise
    votes = knn_vote(feats, noisy, num_classes, k=k, temperature=temperature,
                     use_gpu=torch.cuda.is_available())
    clean_idx = select_confident_examples(votes, noisy, threshold=threshold)
    corrected = votes.argmax(dim=1).cpu().numpy()
    return clean_idx, corrected


def label_precision_recall(clean_idx, noisy_labels, true_labels):
    """Diagnostics when ground truth is known (CIFAR with synthetic noise)."""
    noisy_labels = np.asarray(noisy_labels)
    true_labels = np.asarray(true_labels)
    is_clean = noisy_labels == true_labels
    selected = np.zeros_like(is_clean)
    selected[clean_idx] = True
    precision = is_clean[selected].mean() if selected.any() else 0.0
    recall = selected[is_clean].mean() if is_clean.any() else 0.0
    return float(precision), float(recall)


def build_pairs(clean_idx, labels, max_pairs_per_class=None, rng=None):
    """Positive pairs (i, j) among selected samples that share a label, for the supervised contrastive loss."""
    rng = np.random.default_rng() if rng is None else rng
    labels = np.asarray(labels)[clean_idx]
    pairs = []
    for c in np.unique(labels):
        members = clean_idx[labels == c]
        if len(members) < 2:
            continue
        a = rng.permutation(members)
        b = np.roll(a, 1)
        cls_pairs = np.stack([a, b], axis=1)
        if max_pairs_per_class is not None:
            cls_pairs = cls_pairs[:max_pairs_per_class]
        pairs.append(cls_pairs)
    if not pairs:
        return np.zeros((0, 2), dtype=np.int64)
    return np.concatenate(pairs, axis=0)
