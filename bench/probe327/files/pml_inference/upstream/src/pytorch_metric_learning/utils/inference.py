import copy

import numpy as np
import torch

from ..distances import CosineSimilarity
from . import common_functions as c_f

try:
    import faiss
except ModuleNotFoundError:
    # faiss is optional; only FaissKNN / FaissKMeans need it
    faiss = None


def add_to_index_and_search(index, query, reference, k):
    if reference is not None:
        index.add(reference.float().cpu())
    return index.search(query.float().cpu(), k)


def try_gpu(index, query, reference, k, is_cuda, gpus):
    # https://github.com/facebookresearch/faiss/blob/master/faiss/gpu/utils/DeviceDefs.cuh
    gpu_index = None
    gpus_are_available = faiss.get_num_gpus() > 0
    gpu_condition = (is_cuda or (gpus is not None)) and gpus_are_available
    if gpu_condition:
        max_k_for_gpu = 1024 if float(torch.version.cuda) < 9.5 else 2048
        if k <= max_k_for_gpu:
            gpu_index = convert_to_gpu_index(index, gpus)
    try:
        return add_to_index_and_search(gpu_index, query, reference, k)
    except (AttributeError, RuntimeError) as e:
        if gpu_condition:
            c_f.LOGGER.warning(
                f"Using CPU for k-nn search because k = {k} > {max_k_for_gpu}, "
                "which is the maximum allowable on GPU."
            )
        cpu_index = convert_to_cpu_index(index)
        return add_to_index_and_search(cpu_index, query, reference, k)


def convert_to_gpu_index(index, gpus):
    if "Gpu" in str(type(index)):
        return index
    if gpus is None:
        return faiss.index_cpu_to_all_gpus(index)
    return faiss.index_cpu_to_gpus_list(index, gpus=gpus)


def convert_to_cpu_index(index):
    if "Gpu" not in str(type(index)):
        return index
    return faiss.index_gpu_to_cpu(index)


class FaissKNN:
    def __init__(
        self,
        reset_before=True,
        reset_after=True,
        index_init_fn=None,
        gpus=None,
    ):
        self.check_faiss()
        self.reset()
        self.reset_before = reset_before
        self.reset_after = reset_after
        self.index_init_fn = faiss.IndexFlatL2 if index_init_fn is None else index_init_fn
        if gpus is not None:
            if not isinstance(gpus, (list, tuple)):
                raise TypeError("gpus must be a list")
            if len(gpus) < 1:
                raise ValueError("gpus must have length greater than 0")
        self.gpus = gpus

    def __call__(
        self,
        query,
        k,
        reference=None,
        ref_includes_query=False,
    ):
        if ref_includes_query:
            k = k + 1
        device = query.device
        # a tensor that lives on a cuda device makes us try the GPU index first
        is_cuda = query.is_cuda
        d = query.shape[1]
        c_f.LOGGER.info("running k-nn with k=%d" % k)
        c_f.LOGGER.info("embedding dimensionality is %d" % d)
        if self.reset_before:
            self.index = self.index_init_fn(d)
        distances, indices = try_gpu(
            self.index,
            query,
            reference,
            k,
            is_cuda,
            self.gpus,
        )
        distances = c_f.to_device(torch.from_numpy(distances), device=device)
        indices = c_f.to_device(torch.from_numpy(indices), device=device)
        if self.reset_after:
            self.reset()
        return return_results(distances, indices, ref_includes_query)

    def train(self, embeddings):
        self.index = self.index_init_fn(embeddings.shape[1])
        self.index.train(embeddings.float().cpu())

    def add(self, embeddings):
        self.index.add(embeddings.float().cpu())

    def save(self, filename):
        faiss.write_index(self.index, filename)

    def load(self, filename):
        self.index = faiss.read_index(filename)

    def reset(self):
        self.index = None

    def check_faiss(self):
        if faiss is None:
            raise ModuleNotFoundError(
                "FaissKNN requires faiss. Install with pip install faiss-cpu "
                "(or conda install -c pytorch faiss-gpu for GPU support)"
            )


def return_results(distances, indices, ref_includes_query):
    if ref_includes_query:
        return distances[:, 1:], indices[:, 1:]
    return distances, indices


class CustomKNN:
    def __init__(self, distance, batch_size=None):
        self.distance = distance
        self.batch_size = batch_size

    def __call__(
        self,
        query,
        k,
        reference=None,
        ref_includes_query=False,
    ):
        if ref_includes_query:
            k = k + 1
        reference = query if reference is None else reference
        device = query.device
        is_cosine = isinstance(self.distance, CosineSimilarity)
        if self.batch_size is None:
            dist_mat = self.distance(query, reference)
            distances, indices = torch.topk(
                dist_mat, k, largest=self.distance.is_inverted, dim=1
            )
        else:
            distances, indices = [], []
            for s in range(0, len(query), self.batch_size):
                e = s + self.batch_size
                dist_mat = self.distance(query[s:e], reference)
                d, i = torch.topk(dist_mat, k, largest=self.distance.is_inverted, dim=1)
                distances.append(d)
                indices.append(i)
            distances = torch.cat(distances, dim=0)
            indices = torch.cat(indices, dim=0)
        if is_cosine:
            # keep faiss-like semantics: smaller is closer for the caller
            distances = 1 - distances
        distances = c_f.to_device(distances, device=device)
        indices = c_f.to_device(indices, device=device)
        return return_results(distances, indices, ref_includes_query)


class FaissKMeans:
    def __init__(self, niter=100, verbose=True, gpu=None, **kwargs):
        self.niter = niter
        self.verbose = verbose
        self.gpu = gpu
        self.kwargs = kwargs

    def __call__(self, x, nmb_clusters):
        device = x.device
        x = x.cpu().numpy()
        n_data, d = x.shape
        # faiss decides for itself whether the clustering index can go on a GPU
        use_gpu = self.gpu if self.gpu is not None else faiss.get_num_gpus() > 0
        kmeans = faiss.Kmeans(
            d,
            nmb_clusters,
            niter=self.niter,
            verbose=self.verbose,
            gpu=use_gpu,
            **self.kwargs,
        )
        kmeans.train(x)
        _, idxs = kmeans.index.search(x, 1)
        return torch.tensor([int(n[0]) for n in idxs], dtype=int, device=device)


def get_knn(
    reference_embeddings, test_embeddings, k, embeddings_come_from_same_source=False
):
    """Kept for backwards compatibility with the 0.9.x stat_utils API."""
    knn_func = FaissKNN()
    return knn_func(
        test_embeddings,
        k,
        reference_embeddings,
        embeddings_come_from_same_source,
    )


class MatchFinder:
    def __init__(self, distance=None, threshold=None):
        self.distance = CosineSimilarity() if distance is None else distance
        self.threshold = threshold

    def operate_on_emb(self, input_func, query_emb, ref_emb=None, *args, **kwargs):
        if ref_emb is None:
            ref_emb = query_emb
        return input_func(query_emb, ref_emb, *args, **kwargs)

    # for a batch of queries
    def get_matching_pairs(self, query_emb, ref_emb=None, threshold=None, return_tuples=False):
        with torch.no_grad():
            threshold = threshold if threshold is not None else self.threshold
            return self.operate_on_emb(
                self._get_matching_pairs, query_emb, ref_emb, threshold, return_tuples
            )

    def _get_matching_pairs(self, query_emb, ref_emb, threshold, return_tuples):
        mat = self.distance(query_emb, ref_emb)
        matches = mat >= threshold if self.distance.is_inverted else mat <= threshold
        matches = matches.cpu().numpy()
        if return_tuples:
            return list(zip(*np.where(matches)))
        return matches

    # where x and y are already matched pairs
    def is_match(self, x, y, threshold=None):
        threshold = threshold if threshold is not None else self.threshold
        with torch.no_grad():
            dist = self.distance.pairwise_distance(x, y)
            output = dist >= threshold if self.distance.is_inverted else dist <= threshold
            if output.nelement() == 1:
                return output.detach().item()
            return output.cpu().numpy()


class InferenceModel:
    def __init__(
        self,
        trunk,
        embedder=None,
        match_finder=None,
        normalize_embeddings=True,
        knn_func=None,
        data_device=None,
        dtype=None,
    ):
        self.trunk = trunk
        self.embedder = torch.nn.Identity() if embedder is None else embedder
        self.match_finder = MatchFinder() if match_finder is None else match_finder
        self.knn_func = FaissKNN() if knn_func is None else knn_func
        self.normalize_embeddings = normalize_embeddings
        self.data_device = (
            c_f.get_default_device() if data_device is None else data_device
        )
        self.dtype = dtype

    def train_knn(self, inputs, batch_size=64):
        self.call_knn(self.knn_func.train, inputs, batch_size)

    def add_to_knn(self, inputs, batch_size=64):
        self.call_knn(self.knn_func.add, inputs, batch_size)

    def call_knn(self, func, inputs, batch_size):
        if isinstance(inputs, torch.utils.data.Dataset):
            dataloader = torch.utils.data.DataLoader(inputs, batch_size=batch_size)
            for inp, _ in dataloader:
                embeddings = self.get_embeddings(inp)
                func(embeddings)
        else:
            embeddings = self.get_embeddings(inputs)
            func(embeddings)

    def get_nearest_neighbors(self, query, k):
        query_emb = self.get_embeddings(query)
        return self.knn_func(query_emb, k)

    def get_embeddings(self, x):
        if isinstance(x, torch.Tensor):
            x = c_f.to_device(x, device=self.data_device, dtype=self.dtype)
        self.trunk.eval()
        self.embedder.eval()
        with torch.no_grad():
            x_emb = self.embedder(self.trunk(x))
        if self.normalize_embeddings:
            x_emb = torch.nn.functional.normalize(x_emb, p=2, dim=1)
        return x_emb

    def get_matches(self, x, ref=None, threshold=None, return_tuples=False):
        x = self.get_embeddings(x)
        ref = x if ref is None else self.get_embeddings(ref)
        return self.match_finder.get_matching_pairs(
            x, ref, threshold, return_tuples
        )

    def is_match(self, x, y, threshold=None):
        x = self.get_embeddings(x)
        y = self.get_embeddings(y)
        return self.match_finder.is_match(x, y, threshold)

    def clone(self):
        return copy.deepcopy(self)
