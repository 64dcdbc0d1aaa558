"""Dense passage index: encode a corpus with a bi-encoder and search it with FAISS.

Training of the IVF-PQ quantizer and the search itself run on all visible GPUs
(index_cpu_to_all_gpus / GpuMultipleClonerOptions), the encoder runs under autocast.
"""
import logging
import math
import os
import time
from typing import List, Optional, Tuple

import faiss
import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader
from tqdm import tqdm

logger = logging.getLogger(__name__)


def get_faiss_gpu_count() -> int:
    try:
        return faiss.get_num_gpus()
    except AttributeError:  # CPU-only faiss build
        return 0


class DenseEncoder:

    def __init__(self, model, tokenizer, max_length=256, batch_size=512, fp16=True, device=None):
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model = model.to(self.device).eval()
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.batch_size = batch_size
        self.fp16 = fp16

    @torch.no_grad()
    def encode(self, texts: List[str], desc="encoding") -> np.ndarray:
        out = []
        for start in tqdm(range(0, len(texts), self.batch_size), desc=desc, mininterval=10):
            batch = texts[start:start + self.batch_size]
            toks = self.tokenizer(batch, padding=True, truncation=True, max_length=self.max_length,
                                  return_tensors="pt")
            toks = {k: v.to(self.device, non_blocking=True) for k, v in toks.items()}
            with torch.autocast("cuda", dtype=torch.float16, enabled=self.fp16):
                hidden = self.model(**toks).last_hidden_state
            emb = hidden[:, 0]
            emb = F.normalize(emb.float(), dim=-1)
            out.append(emb.cpu().numpy())
        return np.concatenate(out, axis=0).astype(np.float32)


class FaissIndex:

    def __init__(self, dim: int, nlist: int = 65536, m: int = 64, nbits: int = 8, use_gpu: bool = True,
                 use_float16: bool = True, shard: bool = True, temp_mem_mb: int = 1536):
        self.dim = dim
        self.nlist = nlist
        self.m = m
        self.nbits = nbits
        self.use_gpu = use_gpu and get_faiss_gpu_count() > 0
        self.use_float16 = use_float16
        self.shard = shard
        self.temp_mem_mb = temp_mem_mb
        self.resources = []
        self.index = None
        self.cpu_index = None

    def _gpu_resources(self, ngpu):
        if not self.resources:
            for i in range(ngpu):
                res = faiss.StandardGpuResources()
                res.setTempMemory(self.temp_mem_mb * 1024 * 1024)
                self.resources.append(res)
        return self.resources

    def _to_gpu(self, cpu_index):
        ngpu = min(get_faiss_gpu_count(), torch.cuda.device_count())
        co = faiss.GpuMultipleClonerOptions()
        co.useFloat16 = self.use_float16
        co.useFloat16CoarseQuantizer = False
        co.usePrecomputed = False
        co.indicesOptions = faiss.INDICES_CPU
        co.shard = self.shard
        res = self._gpu_resources(ngpu)
        vres = faiss.GpuResourcesVector()
        vdev = faiss.Int32Vector()
        for i in range(ngpu):
            vdev.push_back(i)
            vres.push_back(res[i])
        logger.info("moving index to %d GPUs (shard=%s, fp16=%s)", ngpu, self.shard, self.use_float16)
        return faiss.index_cpu_to_gpu_multiple(vres, vdev, cpu_index, co)

    def train(self, xb: np.ndarray, max_train: int = 1_000_000, seed: int = 1234):
        quantizer = faiss.IndexFlatIP(self.dim)
        cpu_index = faiss.IndexIVFPQ(quantizer, self.dim, self.nlist, self.m, self.nbits, faiss.METRIC_INNER_PRODUCT)
        rs = np.random.RandomState(seed)
        sample = xb[rs.choice(len(xb), size=min(max_train, len(xb)), replace=False)]
        t0 = time.time()
        if self.use_gpu:
            # k-means for the coarse quantizer on GPU, PQ codebooks on CPU
            clus = faiss.Clustering(self.dim, self.nlist)
            clus.niter = 20
            clus.max_points_per_centroid = 256
            gpu_flat = faiss.index_cpu_to_all_gpus(faiss.IndexFlatIP(self.dim))
            clus.train(sample, gpu_flat)
            centroids = faiss.vector_float_to_array(clus.centroids).reshape(self.nlist, self.dim)
            quantizer.add(centroids)
            cpu_index.quantizer_trains_alone = 0
        cpu_index.train(sample)
        logger.info("trained IVF%d,PQ%dx%d in %.1fs", self.nlist, self.m, self.nbits, time.time() - t0)
        self.cpu_index = cpu_index
        self.index = self._to_gpu(cpu_index) if self.use_gpu else cpu_index

    def add(self, xb: np.ndarray, chunk: int = 1_000_000):
        for start in range(0, len(xb), chunk):
            self.index.add(xb[start:start + chunk])
        logger.info("index holds %d vectors", self.index.ntotal)

    def search(self, xq: np.ndarray, k: int = 100, nprobe: int = 64) -> Tuple[np.ndarray, np.ndarray]:
        if self.use_gpu:
            ps = faiss.GpuParameterSpace()
        else:
            ps = faiss.ParameterSpace()
        ps.initialize(self.index)
        ps.set_index_parameter(self.index, "nprobe", nprobe)
        return self.index.search(xq, k)

    def save(self, path: str):
        index = faiss.index_gpu_to_cpu(self.index) if self.use_gpu else self.index
        faiss.write_index(index, path)

    @classmethod
    def load(cls, path: str, use_gpu: bool = True, **kwargs):
        cpu_index = faiss.read_index(path)
        obj = cls(cpu_index.d, use_gpu=use_gpu, **kwargs)
        obj.cpu_index = cpu_index
        obj.index = obj._to_gpu(cpu_index) if obj.use_gpu else cpu_index
        return obj


def exact_search_torch(q: torch.Tensor, corpus: torch.Tensor, k: int = 100, chunk: int = 2_000_000):
    """Brute-force inner-product top-k on the accelerator, used to measure the recall of the ANN index."""
    q = q.cuda().half()
    best_scores, best_ids = None, None
    for start in range(0, corpus.size(0), chunk):
        block = corpus[start:start + chunk].cuda(non_blocking=True).half()
        scores = q @ block.T
        s, i = scores.topk(min(k, scores.size(1)), dim=1)
        i = i + start
        if best_scores is None:
            best_scores, best_ids = s, i
        else:
            cat_s = torch.cat([best_scores, s], dim=1)
            cat_i = torch.cat([best_ids, i], dim=1)
            best_scores, pos = cat_s.topk(k, dim=1)
            best_ids = cat_i.gather(1, pos)
    torch.cuda.synchronize()
    return best_scores.float().cpu(), best_ids.cpu()


def recall_at_k(ann_ids: np.ndarray, exact_ids: np.ndarray, k: int) -> float:
    hits = 0
    for a, e in zip(ann_ids[:, :k], exact_ids[:, :k]):
        hits += len(set(a.tolist()) & set(e.tolist()))
    return hits / float(k * len(ann_ids))


def build_index(encoder: DenseEncoder, passages: List[str], out_dir: str, nlist: int = 65536):
    os.makedirs(out_dir, exist_ok=True)
    xb = encoder.encode(passages, desc="passages")
    np.save(os.path.join(out_dir, "embeddings.npy"), xb)
    index = FaissIndex(xb.shape[1], nlist=nlist, use_gpu=True)
    index.train(xb)
    index.add(xb)
    index.save(os.path.join(out_dir, "ivfpq.faiss"))
    return index
