"""Index factories for efficient search (clustering)"""

import faiss


class FaissL2Index:
    """Faiss factory for indexes on cpu or gpu"""

    def __init__(self, gpu_id):
        self.gpu_id = gpu_id

    def create_index(self, dimension):
        """Return faiss index with given dimension"""
        if self.gpu_id is not None:
            res = faiss.StandardGpuResources()
            flat_config = faiss.GpuIndexFlatConfig()
            flat_config.device = self.gpu_id
            return faiss.GpuIndexFlatL2(res, dimension, flat_config)

        return faiss.IndexFlatL2(dimension)


def initialize_faiss_index(params):
    """Initialize faiss index from params, passing kwargs to the constructor"""
    params = dict(params)
    if "gpu_id" not in params:
        params["gpu_id"] = None
    return FaissL2Index(**params)


def faiss_kmeans(des, k, *, niter=20, seed=0, gpu_id=None, verbose=True):
    """Train a k-means codebook with faiss; the assignment step runs on the GPU when gpu_id is set.

    :param np.ndarray des: float32 descriptors (n x d)
    :param int k: codebook size
    """
    kmeans = faiss.Clustering(des.shape[1], k)
    kmeans.niter = niter
    kmeans.seed = seed
    kmeans.verbose = verbose
    kmeans.max_points_per_centroid = 10_000_000

    if gpu_id is not None:
        gpu_res = faiss.StandardGpuResources()
        cfg = faiss.GpuIndexFlatConfig()
        cfg.useFloat16 = False
        cfg.device = gpu_id
        index = faiss.GpuIndexFlatL2(gpu_res, des.shape[1], cfg)
    else:
        index = faiss.IndexFlatL2(des.shape[1])

    kmeans.train(des, index)
    centroids = faiss.vector_float_to_array(kmeans.centroids).reshape(k, des.shape[1])
    return centroids, index


def index_to_gpu(index, gpu_id):
    """Copy a cpu index (e.g. a loaded IVF coarse quantizer) to the given gpu, no-op on cpu"""
    if gpu_id is None:
        return index
    return faiss.index_cpu_to_gpu(faiss.StandardGpuResources(), gpu_id, index)
