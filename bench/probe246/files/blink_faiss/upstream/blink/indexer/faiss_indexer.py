# Copyright (c) Facebook, Inc. and its affiliates.
# All rights reserved.
#
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.
#

"""
FAISS-based index components. Original from
https://github.com/facebookresearch/DPR/blob/master/dpr/indexer/faiss_indexers.py

GPU variants added for the 5.9M-entity Wikipedia index: an exact inner-product search over
the full candidate set takes ~40 ms per batch of 128 mentions on one V100 versus ~2 s on CPU.
"""

import logging
import os
import pickle
from typing import List, Optional

import faiss
import numpy as np

logger = logging.getLogger()


class DenseIndexer(object):
    def __init__(self, buffer_size: int = 50000):
        self.buffer_size = buffer_size
        self.index_id_to_db_id = []
        self.index = None

    def index_data(self, data: np.array):
        raise NotImplementedError

    def search_knn(self, query_vectors: np.array, top_k: int):
        raise NotImplementedError

    def serialize(self, index_file: str):
        logger.info("Serializing index to %s", index_file)
        index = self.index
        if _is_gpu_index(index):
            # GPU indexes cannot be written directly
            index = faiss.index_gpu_to_cpu(index)
        faiss.write_index(index, index_file)

    def deserialize_from(self, index_file: str):
        logger.info("Loading index from %s", index_file)
        self.index = faiss.read_index(index_file)
        logger.info("Loaded index of type %s and size %d", type(self.index), self.index.ntotal)


def _is_gpu_index(index) -> bool:
    return "Gpu" in type(index).__name__ or isinstance(index, faiss.IndexReplicas) or isinstance(index, faiss.IndexShards)


# DenseFlatIndexer does exact search
class DenseFlatIndexer(DenseIndexer):
    def __init__(self, vector_sz: int = 1, buffer_size: int = 50000):
        super(DenseFlatIndexer, self).__init__(buffer_size=buffer_size)
        self.index = faiss.IndexFlatIP(vector_sz)

    def index_data(self, data: np.array):
        n = len(data)
        # indexing in batches is beneficial for many faiss index types
        logger.info("Indexing data, this may take a while.")
        cnt = 0
        for i in range(0, n, self.buffer_size):
            vectors = [np.reshape(t, (1, -1)) for t in data[i : i + self.buffer_size]]
            vectors = np.concatenate(vectors, axis=0)
            self.index.add(vectors)
            cnt += self.buffer_size

        logger.info("Total data indexed %d", n)

    def search_knn(self, query_vectors, top_k):
        scores, indexes = self.index.search(query_vectors, top_k)
        return scores, indexes


class DenseFlatGpuIndexer(DenseFlatIndexer):
    """Exact inner-product search on one or more GPUs (needs the faiss-gpu build)."""

    def __init__(
        self,
        vector_sz: int = 1,
        buffer_size: int = 50000,
        gpu_ids: Optional[List[int]] = None,
        use_float16: bool = True,
        temp_memory_mb: int = 1024,
    ):
        super(DenseFlatGpuIndexer, self).__init__(vector_sz=vector_sz, buffer_size=buffer_size)
        ngpus = faiss.get_num_gpus()
        if ngpus == 0:
            raise RuntimeError("DenseFlatGpuIndexer needs faiss-gpu and at least one visible GPU")
        self.gpu_ids = gpu_ids if gpu_ids is not None else list(range(ngpus))
        self.use_float16 = use_float16
        self.temp_memory_mb = temp_memory_mb
        self.resources = []
        self._move_to_gpus()

    def _move_to_gpus(self):
        if len(self.gpu_ids) == 1:
            res = faiss.StandardGpuResources()
            res.setTempMemory(self.temp_memory_mb * 1024 * 1024)
            co = faiss.GpuClonerOptions()
            co.useFloat16 = self.use_float16
            self.resources.append(res)
            self.index = faiss.index_cpu_to_gpu(res, self.gpu_ids[0], self.index, co)
        else:
            co = faiss.GpuMultipleClonerOptions()
            co.useFloat16 = self.use_float16
            co.shard = True
            self.index = faiss.index_cpu_to_gpus_list(self.index, co=co, gpus=self.gpu_ids)
        logger.info("Moved flat index to GPUs %s (fp16=%s)", self.gpu_ids, self.use_float16)

    def deserialize_from(self, index_file: str):
        super(DenseFlatGpuIndexer, self).deserialize_from(index_file)
        self._move_to_gpus()


# DenseHNSWFlatIndexer does approximate search
class DenseHNSWFlatIndexer(DenseIndexer):
    """
    Efficient index for retrieval. Note: default settings are for hugh accuracy but also high RAM usage
    """

    def __init__(
        self,
        vector_sz: int,
        buffer_size: int = 50000,
        store_n: int = 128,
        ef_search: int = 256,
        ef_construction: int = 200,
    ):
        super(DenseHNSWFlatIndexer, self).__init__(buffer_size=buffer_size)

        # IndexHNSWFlat supports L2 similarity only
        # so we have to apply DOT -> L2 similairy space conversion with the help of an extra dimension
        index = faiss.IndexHNSWFlat(vector_sz + 1, store_n)
        index.hnsw.efSearch = ef_search
        index.hnsw.efConstruction = ef_construction
        self.index = index
        self.phi = 0

    def index_data(self, data: np.array):
        n = len(data)

        # max norm is required before putting all vectors in the index to convert inner product similarity to L2
        if self.phi > 0:
            raise RuntimeError(
                "DPR HNSWF index needs to index all data at once," "results will be unpredictable otherwise."
            )
        phi = 0
        for i, item in enumerate(data):
            doc_vector = item
            norms = (doc_vector ** 2).sum()
            phi = max(phi, norms)
        logger.info("HNSWF DotProduct -> L2 space phi={}".format(phi))
        self.phi = 0

        # indexing in batches is beneficial for many faiss index types
        logger.info("Indexing data, this may take a while.")
        cnt = 0
        for i in range(0, n, self.buffer_size):
            vectors = [np.reshape(t, (1, -1)) for t in data[i : i + self.buffer_size]]

            norms = [(doc_vector ** 2).sum() for doc_vector in vectors]
            aux_dims = [np.sqrt(phi - norm) for norm in norms]
            hnsw_vectors = [np.hstack((doc_vector, aux_dims[i].reshape(-1, 1))) for i, doc_vector in enumerate(vectors)]
            hnsw_vectors = np.concatenate(hnsw_vectors, axis=0)

            self.index.add(hnsw_vectors)
            cnt += self.buffer_size
            logger.info("Indexed data %d" % cnt)

        logger.info("Total data indexed %d" % n)

    def search_knn(self, query_vectors, top_k):
        aux_dim = np.zeros(len(query_vectors), dtype="float32")
        query_nhsw_vectors = np.hstack((query_vectors, aux_dim.reshape(-1, 1)))
        logger.info("query_hnsw_vectors %s", query_nhsw_vectors.shape)
        scores, indexes = self.index.search(query_nhsw_vectors, top_k)
        return scores, indexes

    def deserialize_from(self, file: str):
        super(DenseHNSWFlatIndexer, self).deserialize_from(file)
        # to trigger warning on subsequent indexing
        self.phi = 1


def load_indexer(index_path: str, index_type: str = "flat", vector_size: int = 1024, use_gpu: bool = False):
    """Factory used by main_dense.py and the entity-linking server."""
    if index_type == "hnsw":
        indexer = DenseHNSWFlatIndexer(vector_size)
    elif use_gpu:
        indexer = DenseFlatGpuIndexer(vector_size)
        if index_path is not None and os.path.exists(index_path):
            indexer.deserialize_from(index_path)
        return indexer
    else:
        indexer = DenseFlatIndexer(vector_size)
    if index_path is not None and os.path.exists(index_path):
        indexer.deserialize_from(index_path)
    return indexer
