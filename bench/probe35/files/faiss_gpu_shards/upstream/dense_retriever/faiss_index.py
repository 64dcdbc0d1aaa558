"""
FAISS-based dense indexers used by the retriever.

``DenseFlatIndexer`` keeps an exact inner-product index and, by default, shards it over
all visible GPUs.  ``DenseRerankSearcher`` re-scores the FAISS candidates exactly with
torch, which matters for fp16 GPU indexes.
"""
import logging
import os
import pickle
import time
from typing import List, Optional, Tuple

import faiss
import numpy as np
import torch

logger = logging.getLogger(__name__)


class DenseIndexer(object):
    def __init__(self, buffer_size: int = 50000):
        self.buffer_size = buffer_size
        self.index_id_to_db_id = []
        self.index = None

    def init_index(self, vector_sz: int):
        raise NotImplementedError

    def index_data(self, data: List[Tuple[object, np.array]]):
        raise NotImplementedError

    def get_index_name(self):
        raise NotImplementedError

    def search_knn(self, query_vectors: np.array, top_docs: int) -> List[Tuple[List[object], List[float]]]:
        raise NotImplementedError

    def serialize(self, file: str):
        logger.info("Serializing index to %s", file)

        if os.path.isdir(file):
            index_file = os.path.join(file, "index.dpr")
            meta_file = os.path.join(file, "index_meta.dpr")
        else:
            index_file = file + ".index.dpr"
            meta_file = file + ".index_meta.dpr"

        faiss.write_index(self._cpu_index(), index_file)
        with open(meta_file, mode="wb") as f:
            pickle.dump(self.index_id_to_db_id, f)

    def get_files(self, path: str):
        if os.path.isdir(path):
            index_file = os.path.join(path, "index.dpr")
            meta_file = os.path.join(path, "index_meta.dpr")
        else:
            index_file = path + ".{}.dpr".format(self.get_index_name())
            meta_file = path + ".{}_meta.dpr".format(self.get_index_name())
        return index_file, meta_file

    def deserialize(self, path: str):
        logger.info("Loading index from %s", path)
        index_file, meta_file = self.get_files(path)

        self.index = faiss.read_index(index_file)
        logger.info("Loaded index of type %s and size %d", type(self.index), self.index.ntotal)

        with open(meta_file, "rb") as reader:
            self.index_id_to_db_id = pickle.load(reader)
        assert (
            len(self.index_id_to_db_id) == self.index.ntotal
        ), "Deserialized index_id_to_db_id should match faiss index size"

    def _update_id_mapping(self, db_ids: List) -> int:
        self.index_id_to_db_id.extend(db_ids)
        return len(self.index_id_to_db_id)

    def _cpu_index(self):
        return self.index


class DenseFlatIndexer(DenseIndexer):
    def __init__(
        self,
        buffer_size: int = 50000,
        use_gpu: bool = True,
        gpu_ids: Optional[List[int]] = None,
        use_float16: bool = True,
        temp_memory_mb: int = 1536,
    ):
        super(DenseFlatIndexer, self).__init__(buffer_size=buffer_size)
        self.use_gpu = use_gpu
        self.gpu_ids = gpu_ids if gpu_ids is not None else list(range(torch.cuda.device_count()))
        self.use_float16 = use_float16
        self.temp_memory_mb = temp_memory_mb
        self.gpu_resources = []

    def init_index(self, vector_sz: int):
        cpu_index = faiss.IndexFlatIP(vector_sz)
        if self.use_gpu:
            self.index = self._to_gpus(cpu_index)
        else:
            self.index = cpu_index

    def _to_gpus(self, cpu_index):
        """Shard a CPU index over all configured GPUs (one StandardGpuResources per device)."""
        logger.info("Sharding flat index over GPUs %s (fp16=%s)", self.gpu_ids, self.use_float16)
        self.gpu_resources = [faiss.StandardGpuResources() for _ in self.gpu_ids]
        for res in self.gpu_resources:
            res.setTempMemory(self.temp_memory_mb * 1024 * 1024)

        co = faiss.GpuMultipleClonerOptions()
        co.shard = True
        co.useFloat16 = self.use_float16

        vres = faiss.GpuResourcesVector()
        vdev = faiss.Int32Vector()
        for dev, res in zip(self.gpu_ids, self.gpu_resources):
            vdev.push_back(dev)
            vres.push_back(res)
        return faiss.index_cpu_to_gpu_multiple(vres, vdev, cpu_index, co)

    def _cpu_index(self):
        if self.use_gpu:
            return faiss.index_gpu_to_cpu(self.index)
        return self.index

    def index_data(self, data: List[Tuple[object, np.array]]):
        n = len(data)
        # indexing in batches is beneficial for many faiss index types
        for i in range(0, n, self.buffer_size):
            db_ids = [t[0] for t in data[i : i + self.buffer_size]]
            vectors = [np.reshape(t[1], (1, -1)) for t in data[i : i + self.buffer_size]]
            vectors = np.concatenate(vectors, axis=0).astype(np.float32)
            total_data = self._update_id_mapping(db_ids)
            self.index.add(vectors)
            logger.info("data indexed %d", total_data)

        indexed_cnt = len(self.index_id_to_db_id)
        logger.info("Total data indexed %d", indexed_cnt)

    def search_knn(self, query_vectors: np.array, top_docs: int) -> List[Tuple[List[object], List[float]]]:
        start = time.time()
        scores, indexes = self.index.search(query_vectors.astype(np.float32), top_docs)
        logger.info("index search time: %f sec.", time.time() - start)
        # convert to external ids
        db_ids = [[self.index_id_to_db_id[i] for i in query_top_idxs] for query_top_idxs in indexes]
        result = [(db_ids[i], scores[i]) for i in range(len(db_ids))]
        return result

    def get_index_name(self):
        return "flat_index"


class DenseHNSWFlatIndexer(DenseIndexer):
    """
    Efficient index for retrieval. Note: default settings are for high accuracy but also high RAM usage
    (CPU only - faiss has no GPU HNSW).
    """

    def __init__(self, buffer_size: int = 1e9, store_n: int = 512, ef_search: int = 128, ef_construction: int = 200):
        super(DenseHNSWFlatIndexer, self).__init__(buffer_size=buffer_size)
        self.store_n = store_n
        self.ef_search = ef_search
        self.ef_construction = ef_construction
        self.phi = 0

    def init_index(self, vector_sz: int):
        # IndexHNSWFlat supports L2 similarity only
        # so we have to apply DOT -> L2 similairy space conversion with the help of an extra dimension
        index = faiss.IndexHNSWFlat(vector_sz + 1, self.store_n)
        index.hnsw.efSearch = self.ef_search
        index.hnsw.efConstruction = self.ef_construction
        self.index = index

    def index_data(self, data: List[Tuple[object, np.array]]):
        n = len(data)

        # max norm is required before putting all vectors in the index to convert inner product similarity to L2
        if self.phi > 0:
            raise RuntimeError(
                "DPR HNSWF index needs to index all data at once, results will be unpredictable otherwise."
            )
        phi = 0
        for i, item in enumerate(data):
            id, doc_vector = item[0:2]
            norms = (doc_vector**2).sum()
            phi = max(phi, norms)
        logger.info("HNSWF DotProduct -> L2 space phi=%s", phi)
        self.phi = phi

        # indexing in batches is beneficial for many faiss index types
        bs = int(self.buffer_size)
        for i in range(0, n, bs):
            db_ids = [t[0] for t in data[i : i + bs]]
            vectors = [np.reshape(t[1], (1, -1)) for t in data[i : i + bs]]

            norms = [(doc_vector**2).sum() for doc_vector in vectors]
            aux_dims = [np.sqrt(phi - norm) for norm in norms]
            hnsw_vectors = [np.hstack((doc_vector, aux_dims[i].reshape(-1, 1))) for i, doc_vector in enumerate(vectors)]
            hnsw_vectors = np.concatenate(hnsw_vectors, axis=0).astype(np.float32)
            self.train(hnsw_vectors)

            self._update_id_mapping(db_ids)
            self.index.add(hnsw_vectors)
            logger.info("data indexed %d", len(self.index_id_to_db_id))
        indexed_cnt = len(self.index_id_to_db_id)
        logger.info("Total data indexed %d", indexed_cnt)

    def train(self, vectors: np.array):
        pass

    def search_knn(self, query_vectors: np.array, top_docs: int) -> List[Tuple[List[object], List[float]]]:
        aux_dim = np.zeros(len(query_vectors), dtype="float32")
        query_nhsw_vectors = np.hstack((query_vectors, aux_dim.reshape(-1, 1)))
        logger.info("query_hnsw_vectors %s", query_nhsw_vectors.shape)
        scores, indexes = self.index.search(query_nhsw_vectors, top_docs)
        # convert to external ids
        db_ids = [[self.index_id_to_db_id[i] for i in query_top_idxs] for query_top_idxs in indexes]
        result = [(db_ids[i], scores[i]) for i in range(len(db_ids))]
        return result

    def deserialize(self, file: str):
        super(DenseHNSWFlatIndexer, self).deserialize(file)
        # to trigger exception on subsequent indexing
        self.phi = 1

    def get_index_name(self):
        return "hnsw_index"


class DenseIVFPQIndexer(DenseIndexer):
    """
    IVF-PQ index trained on a single GPU (k-means + PQ codebooks are the slow part), then moved back to
    the CPU for serving unless ``search_on_gpu`` is set.
    """

    def __init__(self, buffer_size: int = 50000, nlist: int = 16384, m: int = 64, nprobe: int = 64,
                 gpu_id: int = 0, search_on_gpu: bool = False):
        super(DenseIVFPQIndexer, self).__init__(buffer_size=buffer_size)
        self.nlist, self.m, self.nprobe = nlist, m, nprobe
        self.gpu_id = gpu_id
        self.search_on_gpu = search_on_gpu
        self.res = faiss.StandardGpuResources()

    def init_index(self, vector_sz: int):
        quantizer = faiss.IndexFlatIP(vector_sz)
        self.index = faiss.IndexIVFPQ(quantizer, vector_sz, self.nlist, self.m, 8, faiss.METRIC_INNER_PRODUCT)

    def train(self, sample: np.ndarray):
        co = faiss.GpuClonerOptions()
        co.useFloat16LookupTables = True
        gpu_index = faiss.index_cpu_to_gpu(self.res, self.gpu_id, self.index, co)
        t0 = time.time()
        gpu_index.train(sample.astype(np.float32))
        logger.info("IVF-PQ training on GPU %d took %.1fs", self.gpu_id, time.time() - t0)
        self.index = gpu_index if self.search_on_gpu else faiss.index_gpu_to_cpu(gpu_index)
        faiss.extract_index_ivf(self.index).nprobe = self.nprobe

    def index_data(self, data: List[Tuple[object, np.array]]):
        for i in range(0, len(data), self.buffer_size):
            db_ids = [t[0] for t in data[i : i + self.buffer_size]]
            vectors = np.stack([t[1] for t in data[i : i + self.buffer_size]]).astype(np.float32)
            self._update_id_mapping(db_ids)
            self.index.add(vectors)
        logger.info("Total data indexed %d", len(self.index_id_to_db_id))

    def search_knn(self, query_vectors: np.array, top_docs: int) -> List[Tuple[List[object], List[float]]]:
        scores, indexes = self.index.search(query_vectors.astype(np.float32), top_docs)
        db_ids = [[self.index_id_to_db_id[i] for i in row if i >= 0] for row in indexes]
        return [(db_ids[i], scores[i]) for i in range(len(db_ids))]

    def get_index_name(self):
        return "ivfpq_index"


class DenseRerankSearcher(object):
    """
    Takes the top-k candidates of a (possibly approximate / fp16) FAISS index and re-scores them
    exactly in fp32 with the stored document vectors.
    """

    def __init__(self, indexer: DenseIndexer, doc_vectors: np.ndarray, candidate_factor: int = 4):
        self.indexer = indexer
        self.doc_vectors = torch.from_numpy(doc_vectors).cuda()
        self.candidate_factor = candidate_factor

    @torch.no_grad()
    def search(self, query_vectors: np.ndarray, top_docs: int) -> List[Tuple[List[object], List[float]]]:
        n_cand = top_docs * self.candidate_factor
        _, cand_idx = self.indexer.index.search(query_vectors.astype(np.float32), n_cand)

        t0 = time.time()
        q = torch.from_numpy(query_vectors).float().cuda()
        idx = torch.from_numpy(cand_idx).to(self.doc_vectors.device)
        idx = idx.clamp_min(0)  # faiss pads with -1 when fewer than n_cand hits exist
        cand = self.doc_vectors[idx]  # (nq, n_cand, d)
        exact = torch.einsum("qd,qkd->qk", q, cand)
        top_scores, top_pos = exact.topk(top_docs, dim=1)
        top_idx = torch.gather(idx, 1, top_pos)
        torch.cuda.synchronize()
        logger.info("exact re-scoring: %.3f sec for %d queries", time.time() - t0, len(query_vectors))

        top_idx = top_idx.cpu().numpy()
        top_scores = top_scores.cpu().numpy()
        id_map = self.indexer.index_id_to_db_id
        return [([id_map[i] for i in row], top_scores[r]) for r, row in enumerate(top_idx)]
