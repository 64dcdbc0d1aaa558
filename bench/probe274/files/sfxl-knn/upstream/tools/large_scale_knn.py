"""
k-NN retrieval for city-scale databases (SF-XL: 2.8M database images, ~25 GB of
fp32 512-D descriptors), where a single faiss.IndexFlatL2 on one GPU runs out of memory.

Two backends:
  * "faiss": the database is sharded over all visible GPUs with index_cpu_to_all_gpus
  * "torch": exact search in chunks with torch.cdist, one database chunk per GPU,
             queries streamed through every chunk and partial top-k merged on the CPU

    python tools/large_scale_knn.py --database_desc sfxl_db.npy --queries_desc sfxl_q.npy \
        --k 100 --backend torch --chunk_size 500000 --out predictions.npy
"""
import argparse
import logging
import math
import time

import numpy as np
import torch

try:
    import faiss
except ImportError:  # the torch backend does not need faiss
    faiss = None


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--database_desc", type=str, required=True, help=".npy file, float32 [N, D]")
    parser.add_argument("--queries_desc", type=str, required=True, help=".npy file, float32 [Q, D]")
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--backend", type=str, default="torch", choices=["torch", "faiss"])
    parser.add_argument("--chunk_size", type=int, default=500_000, help="database rows per GPU chunk (torch backend)")
    parser.add_argument("--query_batch", type=int, default=4096)
    parser.add_argument("--fp16", action="store_true", help="store the database chunks in fp16 on the GPUs")
    parser.add_argument("--out", type=str, default="predictions.npy")
    return parser.parse_args()


def faiss_search(database, queries, k, fp16=False):
    ngpus = faiss.get_num_gpus()
    logging.info(f"faiss: sharding {database.shape[0]} vectors over {ngpus} GPUs")
    cpu_index = faiss.IndexFlatL2(database.shape[1])
    co = faiss.GpuMultipleClonerOptions()
    co.shard = True
    co.useFloat16 = fp16
    gpu_index = faiss.index_cpu_to_all_gpus(cpu_index, co=co, ngpu=ngpus)
    gpu_index.add(database)
    distances, predictions = gpu_index.search(queries, k)
    return distances, predictions


class ChunkedTorchKNN:
    """Exact L2 k-NN, database split into chunks that live on different GPUs."""

    def __init__(self, database: np.ndarray, chunk_size: int, fp16: bool = False):
        self.num_gpus = torch.cuda.device_count()
        if self.num_gpus == 0:
            raise RuntimeError("ChunkedTorchKNN needs at least one GPU")
        self.dtype = torch.float16 if fp16 else torch.float32
        self.chunks = []      # (device, tensor, squared norms, global offset)
        n_chunks = math.ceil(database.shape[0] / chunk_size)
        for c in range(n_chunks):
            device = torch.device("cuda", c % self.num_gpus)
            start = c * chunk_size
            block = torch.from_numpy(database[start:start + chunk_size]).pin_memory()
            block = block.to(device, dtype=self.dtype, non_blocking=True)
            sq_norms = (block.float() ** 2).sum(dim=1)
            self.chunks.append((device, block, sq_norms, start))
        torch.cuda.synchronize()
        logging.info(f"torch: {n_chunks} chunks on {self.num_gpus} GPUs, "
                     f"{sum(torch.cuda.memory_allocated(i) for i in range(self.num_gpus)) / 2**30:.1f} GB allocated")
        # one side stream per GPU so that the chunks on different GPUs are searched concurrently
        self.streams = [torch.cuda.Stream(device=i) for i in range(self.num_gpus)]

    @torch.no_grad()
    def search(self, queries: np.ndarray, k: int, query_batch: int):
        all_d, all_i = [], []
        for qs in range(0, queries.shape[0], query_batch):
            q_cpu = torch.from_numpy(queries[qs:qs + query_batch])
            partial_d, partial_i = [], []
            for device, block, sq_norms, offset in self.chunks:
                stream = self.streams[device.index]
                with torch.cuda.stream(stream):
                    q = q_cpu.to(device, dtype=self.dtype, non_blocking=True)
                    # ||q - x||^2 = ||q||^2 - 2 q.x + ||x||^2 ; ||q||^2 is constant per query
                    dots = q @ block.T
                    dist = sq_norms[None, :] - 2 * dots.float()
                    kk = min(k, block.shape[0])
                    d, i = torch.topk(dist, kk, dim=1, largest=False)
                    partial_d.append(d.cpu())
                    partial_i.append((i + offset).cpu())
            for s in self.streams:
                s.synchronize()
            d = torch.cat(partial_d, dim=1)
            i = torch.cat(partial_i, dim=1)
            best_d, order = torch.topk(d, k, dim=1, largest=False)
            best_i = torch.gather(i, 1, order)
            q_norm = (q_cpu.float() ** 2).sum(dim=1, keepdim=True)
            all_d.append((best_d + q_norm).numpy())
            all_i.append(best_i.numpy())
        return np.concatenate(all_d), np.concatenate(all_i)


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    database = np.load(args.database_desc, mmap_mode="r")
    queries = np.load(args.queries_desc).astype(np.float32)
    logging.info(f"database {database.shape}, queries {queries.shape}")

    t0 = time.time()
    if args.backend == "faiss":
        if faiss is None or not hasattr(faiss, "StandardGpuResources"):
            raise RuntimeError("The faiss backend needs faiss-gpu")
        distances, predictions = faiss_search(np.ascontiguousarray(database, dtype=np.float32), queries,
                                              args.k, args.fp16)
    else:
        knn = ChunkedTorchKNN(database, args.chunk_size, args.fp16)
        distances, predictions = knn.search(queries, args.k, args.query_batch)
    logging.info(f"search done in {time.time() - t0:.1f} s")

    np.save(args.out, predictions.astype(np.int64))
    np.save(args.out.replace(".npy", "_dist.npy"), distances.astype(np.float32))
    logging.info(f"saved predictions to {args.out}")


if __name__ == "__main__":
    main()
