"""Exact KNN-Shapley (Jia et al., VLDB 2019) on the GPU.

For a K-NN classifier the Shapley value of every training point w.r.t. one
test point has a closed form that only needs the training points sorted by
distance to that test point:

    s_{a_N}   = 1[y_{a_N} = y_test] / N
    s_{a_i}   = s_{a_{i+1}} + (1[y_{a_i} = y_test] - 1[y_{a_{i+1}} = y_test]) / K * min(K, i) / i

The sort is the expensive part (N log N per test point), so test points are
processed in batches and the distances / argsort run on the GPU.
"""
import argparse
import logging
import time

import numpy as np
import torch

log = logging.getLogger(__name__)


def _to_gpu(a, dtype=torch.float32, device="cuda"):
    if isinstance(a, torch.Tensor):
        return a.to(device=device, dtype=dtype)
    return torch.as_tensor(np.ascontiguousarray(a), dtype=dtype, device=device)


@torch.no_grad()
def knn_shapley(x_train, y_train, x_test, y_test, K=5, batch_size=256, device="cuda",
                return_per_test=False):
    """Returns an (N,) array with the KNN-Shapley value of each training point,
    averaged over the test points (or (M, N) if `return_per_test`)."""
    N = len(x_train)
    M = len(x_test)
    xtr = _to_gpu(x_train, device=device)
    ytr = _to_gpu(y_train, dtype=torch.long, device=device)
    xte_all = _to_gpu(x_test, device=device)
    yte_all = _to_gpu(y_test, dtype=torch.long, device=device)

    i_arr = torch.arange(1, N, device=device, dtype=torch.float32)
    coef = torch.clamp(i_arr, max=K) / (K * i_arr)   # min(K, i) / (K i), i = 1..N-1

    total = torch.zeros(N, dtype=torch.float64, device=device)  # fp64 accumulator: M can be 1e5 test points
    per_test = [] if return_per_test else None
    t0 = time.time()
    for start in range(0, M, batch_size):
        xte = xte_all[start:start + batch_size]
        yte = yte_all[start:start + batch_size]
        B = xte.shape[0]
        dist = torch.cdist(xte, xtr)                         # (B, N)
        order = torch.argsort(dist, dim=1)                   # nearest first
        match = (ytr[order] == yte[:, None]).float()          # (B, N)

        s_sorted = torch.zeros(B, N, device=device)
        s_sorted[:, N - 1] = match[:, N - 1] / N
        # backward recursion; a python loop over N is slow, use a reversed cumsum instead
        diffs = (match[:, :-1] - match[:, 1:]) * coef        # (B, N-1)
        s_sorted[:, :-1] = s_sorted[:, N - 1:N] + torch.flip(torch.cumsum(torch.flip(diffs, [1]), 1), [1])

        s = torch.empty_like(s_sorted)
        s.scatter_(1, order, s_sorted)
        total += s.sum(0, dtype=torch.float64)
        if per_test is not None:
            per_test.append(s.cpu())
    torch.cuda.synchronize()
    log.info("KNN-Shapley: %d train x %d test in %.1fs, peak mem %.2f GiB",
             N, M, time.time() - t0, torch.cuda.max_memory_allocated() / 2 ** 30)
    if per_test is not None:
        return torch.cat(per_test).numpy()
    return (total / M).cpu().numpy()


def knn_shapley_numpy(x_train, y_train, x_test, y_test, K=5):
    """Reference implementation (slow, CPU) used in the unit tests."""
    N = len(x_train)
    vals = np.zeros(N)
    for x, y in zip(x_test, y_test):
        d = np.linalg.norm(x_train - x, axis=1)
        order = np.argsort(d)
        s = np.zeros(N)
        s[order[N - 1]] = float(y_train[order[N - 1]] == y) / N
        for i in range(N - 2, -1, -1):
            s[order[i]] = s[order[i + 1]] + \
                (float(y_train[order[i]] == y) - float(y_train[order[i + 1]] == y)) / K * min(K, i + 1) / (i + 1)
        vals += s
    return vals / len(x_test)


def mislabel_detection_curve(values, noisy_mask, fractions=(0.05, 0.1, 0.2, 0.3, 0.4, 0.5)):
    """Fraction of the flipped labels found when inspecting the lowest-valued
    `f * N` training points, for each f in `fractions` (Ghorbani & Zou, Fig. 3)."""
    order = np.argsort(values)
    n_noisy = max(int(noisy_mask.sum()), 1)
    curve = []
    for f in fractions:
        k = int(f * len(values))
        curve.append(float(noisy_mask[order[:k]].sum()) / n_noisy)
    return np.array(curve)


def flip_labels(y, rate, n_classes, seed=0):
    rng = np.random.RandomState(seed)
    y = np.array(y, copy=True)
    idx = rng.choice(len(y), size=int(rate * len(y)), replace=False)
    y[idx] = (y[idx] + rng.randint(1, n_classes, size=len(idx))) % n_classes
    mask = np.zeros(len(y), dtype=bool)
    mask[idx] = True
    return y, mask


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--features", required=True, help="npz with x_train, y_train, x_test, y_test (e.g. CLIP embeddings)")
    p.add_argument("--K", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--out", default="knn_shapley.npy")
    p.add_argument("--device", default="cuda:0")
    p.add_argument("--flip-rate", type=float, default=0.0, help="inject symmetric label noise for evaluation")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO)
    data = np.load(args.features)
    y_train, noisy = data["y_train"], None
    if args.flip_rate > 0:
        y_train, noisy = flip_labels(y_train, args.flip_rate, int(data["y_train"].max()) + 1, seed=args.seed)
    vals = knn_shapley(data["x_train"], y_train, data["x_test"], data["y_test"],
                       K=args.K, batch_size=args.batch_size, device=args.device)
    if noisy is not None:
        print("mislabel detection curve:", np.round(mislabel_detection_curve(vals, noisy), 3).tolist())
    np.save(args.out, vals)
    worst = np.argsort(vals)[:20]
    print("20 lowest-valued training points (likely mislabeled):", worst.tolist())


if __name__ == "__main__":
    main()
