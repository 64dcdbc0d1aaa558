import numpy as np
import torch
from tqdm import tqdm
from .strategy import Strategy


class KCenterGreedy(Strategy):
    """Core-set selection (Sener & Savarese, ICLR'18), greedy 2-approximation.

    The original implementation materialises the full n_pool x n_pool distance
    matrix in numpy.  That is fine for MNIST but needs ~20GB of host RAM on
    CIFAR10, see KCenterGreedyGPU below for the chunked GPU version.
    """

    def __init__(self, dataset, net):
        super(KCenterGreedy, self).__init__(dataset, net)

    def query(self, n):
        labeled_idxs, train_data = self.dataset.get_train_data()
        embeddings = self.get_embeddings(train_data)
        embeddings = embeddings.numpy()

        dist_mat = np.matmul(embeddings, embeddings.transpose())
        sq = np.array(dist_mat.diagonal()).reshape(len(labeled_idxs), 1)
        dist_mat *= -2
        dist_mat += sq
        dist_mat += sq.transpose()
        dist_mat = np.sqrt(dist_mat)

        mat = dist_mat[~labeled_idxs, :][:, labeled_idxs]

        for i in tqdm(range(n), ncols=100):
            mat_min = mat.min(axis=1)
            q_idx_ = mat_min.argmax()
            q_idx = np.arange(self.dataset.n_pool)[~labeled_idxs][q_idx_]
            labeled_idxs[q_idx] = True
            mat = np.delete(mat, q_idx_, 0)
            mat = np.append(mat, dist_mat[~labeled_idxs, q_idx][:, None], axis=1)

        return np.arange(self.dataset.n_pool)[(self.dataset.labeled_idxs ^ labeled_idxs)]


class KCenterGreedyGPU(Strategy):
    """Same greedy k-center, but keeps only the running min-distance vector.

    Distances are computed block-wise on the GPU with torch.cdist, so memory is
    O(n_pool * chunk) instead of O(n_pool^2).
    """

    def __init__(self, dataset, net, chunk_size=4096):
        super(KCenterGreedyGPU, self).__init__(dataset, net)
        self.chunk_size = chunk_size

    def _min_dist_to_centers(self, X, centers):
        # X: (N, d) on GPU, centers: (M, d) on GPU
        min_dist = torch.full((X.shape[0],), float("inf"), device=X.device)
        for start in range(0, centers.shape[0], self.chunk_size):
            c = centers[start:start + self.chunk_size]
            d = torch.cdist(X, c)
            min_dist = torch.minimum(min_dist, d.min(dim=1)[0])
        return min_dist

    def query(self, n):
        labeled_idxs, train_data = self.dataset.get_train_data()
        embeddings = self.get_embeddings(train_data)
        X = embeddings.cuda()

        lb = torch.from_numpy(labeled_idxs).cuda()
        if lb.sum() == 0:
            # cold start: pick a random first center
            first = np.random.choice(len(labeled_idxs))
            lb[first] = True
        min_dist = self._min_dist_to_centers(X, X[lb])
        min_dist[lb] = -1.0

        chosen = []
        for i in tqdm(range(n), ncols=100):
            q_idx = int(torch.argmax(min_dist).item())
            chosen.append(q_idx)
            new_d = torch.cdist(X, X[q_idx].unsqueeze(0)).squeeze(1)
            min_dist = torch.minimum(min_dist, new_d)
            min_dist[q_idx] = -1.0

        del X, min_dist
        return np.array(chosen)


class KCenterGreedyPCA(KCenterGreedy):
    """Variant used for the ablation in the README: project the embeddings to
    `n_components` dims first (numpy SVD), then run the CPU greedy."""

    def __init__(self, dataset, net, n_components=32):
        super(KCenterGreedyPCA, self).__init__(dataset, net)
        self.n_components = n_components

    def get_embeddings(self, data):
        emb = super(KCenterGreedyPCA, self).get_embeddings(data).numpy()
        emb = emb - emb.mean(axis=0, keepdims=True)
        u, s, vt = np.linalg.svd(emb, full_matrices=False)
        return torch.from_numpy(emb @ vt[:self.n_components].T)
