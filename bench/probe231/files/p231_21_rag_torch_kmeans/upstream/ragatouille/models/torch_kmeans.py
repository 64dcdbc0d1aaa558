import time

import torch


# Taken from https://github.com/DeepWok/mase/blob/main/src/chop/passes/graph/transforms/quantize/quantizers/kmeans.py
# and adapted for ColBERT centroid training (cosine / inner-product assignment, float16 samples).
def _kmeans_plusplus_init(X, k, generator=None):
    n = X.size(0)
    first = torch.randint(0, n, (1,), generator=generator, device="cpu").item()
    centroids = [X[first]]
    closest = torch.full((n,), float("inf"), device=X.device)
    for _ in range(1, k):
        dist = torch.cdist(X, centroids[-1].unsqueeze(0)).squeeze(1) ** 2
        closest = torch.minimum(closest, dist)
        probs = closest / closest.sum()
        nxt = torch.multinomial(probs, 1, generator=generator).item()
        centroids.append(X[nxt])
    return torch.stack(centroids)


def compute_pytorch_kmeans(
    sample,
    dim,
    num_partitions,
    kmeans_niters,
    max_points_per_centroid=256,
    seed=123,
    chunk_size=1 << 15,
    init="random",
):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dtype = torch.float16 if device.type == "cuda" else torch.float32

    sample = sample.to(device=device, dtype=dtype)
    total_size = sample.shape[0]

    torch.manual_seed(seed)
    generator = torch.Generator(device="cpu").manual_seed(seed)

    # Subsample like faiss does: at most max_points_per_centroid points per centroid
    if total_size > num_partitions * max_points_per_centroid:
        permutation = torch.randperm(total_size, generator=generator)
        permutation = permutation[: num_partitions * max_points_per_centroid].to(device)
        sample = sample[permutation]
        total_size = sample.shape[0]

    if init == "k-means++":
        centroids = _kmeans_plusplus_init(sample.float().cpu(), num_partitions, generator).to(device=device, dtype=dtype)
    else:
        centroids = sample[torch.randperm(total_size, generator=generator)[:num_partitions].to(device)].clone()

    start = time.time()
    for it in range(kmeans_niters):
        # Compute assignments chunk by chunk to bound memory use on the GPU
        assignments = torch.empty(total_size, dtype=torch.long, device=device)
        for i in range(0, total_size, chunk_size):
            batch = sample[i : i + chunk_size]
            sims = batch @ centroids.T
            assignments[i : i + chunk_size] = sims.argmax(dim=1)

        counts = torch.bincount(assignments, minlength=num_partitions).to(torch.float32)
        new_centroids = torch.zeros(num_partitions, dim, dtype=torch.float32, device=device)
        new_centroids.index_add_(0, assignments, sample.float())
        nonempty = counts > 0
        new_centroids[nonempty] /= counts[nonempty].unsqueeze(1)

        # Re-seed empty clusters from random points to keep num_partitions stable
        n_empty = int((~nonempty).sum().item())
        if n_empty > 0:
            reseed = torch.randint(0, total_size, (n_empty,), generator=generator).to(device)
            new_centroids[~nonempty] = sample[reseed].float()

        centroids = torch.nn.functional.normalize(new_centroids, dim=-1).to(dtype)

        if device.type == "cuda":
            torch.cuda.synchronize()
        print(f"[torch-kmeans] iter {it + 1}/{kmeans_niters} ({time.time() - start:.1f}s, {n_empty} empty clusters)")

    return centroids.float().cpu()


def _train_kmeans(self, sample, shared_lists):
    if self.use_gpu:
        torch.cuda.empty_cache()
    centroids = compute_pytorch_kmeans(
        sample,
        *[self.config.dim, self.num_partitions, self.config.kmeans_niters],
    )
    centroids = torch.nn.functional.normalize(centroids, dim=-1)
    if self.use_gpu:
        centroids = centroids.half()
    else:
        centroids = centroids.float()
    return centroids
