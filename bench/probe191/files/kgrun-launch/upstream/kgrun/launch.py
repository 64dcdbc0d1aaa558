"""GraphVite-style launcher for partitioned knowledge graph embedding training.

Reads the same YAML schema as ``graphvite run`` (``resource`` / ``graph`` / ``build`` /
``train`` / ``evaluate`` / ``save`` sections) but trains with PyTorch: the entity table is
split into ``num_partition`` blocks, every GPU worker owns one block at a time and the
blocks are rotated between workers after each episode (the "parallel negative sampling"
schedule of GraphVite). Relation embeddings are replicated and all-reduced.

    python -m kgrun.launch config/kg/rotate_wikidata5m.yaml --gpus 0,1,2,3
"""

import argparse
import logging
import math
import os
import pickle
import time
from contextlib import nullcontext

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import yaml

from kgrun import models, sampler
from kgrun.data import load_triplets, partition_entities
from kgrun.evaluate import link_prediction

logger = logging.getLogger("kgrun")

AUTO = "auto"


class Resource:
    """Resolved ``resource`` section of the config."""

    def __init__(self, cfg, cli_gpus=None):
        gpus = cli_gpus if cli_gpus is not None else cfg.get("gpus", [])
        if not gpus:
            gpus = list(range(torch.cuda.device_count()))
        if not gpus:
            raise RuntimeError("kgrun needs at least one GPU; none found")
        self.gpus = gpus
        self.dim = int(cfg.get("dim", 512))
        self.backend = cfg.get("backend", "nccl")

        cpu_per_gpu = cfg.get("cpu_per_gpu", AUTO)
        if cpu_per_gpu == AUTO:
            cpu_per_gpu = max(1, (os.cpu_count() or 1) // len(gpus) - 1)
        self.cpu_per_gpu = int(cpu_per_gpu)

        limit = cfg.get("gpu_memory_limit", AUTO)
        if limit == AUTO:
            # leave 10% head room for the caching allocator and the sampler buffers
            free = min(torch.cuda.mem_get_info(g)[0] for g in gpus)
            limit = int(free * 0.9)
        self.gpu_memory_limit = int(limit)

    def __repr__(self):
        return "Resource(gpus=%s, dim=%d, cpu_per_gpu=%d, gpu_memory_limit=%.1fGiB)" % (
            self.gpus, self.dim, self.cpu_per_gpu, self.gpu_memory_limit / 2 ** 30)


def auto_num_partition(num_entity, dim, num_gpu, memory_limit, bytes_per_param=4):
    """Smallest partition count (multiple of the GPU count) whose blocks fit into memory.

    Each worker holds two entity blocks (head block and tail block), their Adam moments
    and the gradients.
    """
    per_entity = dim * bytes_per_param * 4
    num_partition = num_gpu
    while True:
        block = math.ceil(num_entity / num_partition)
        if 2 * block * per_entity < memory_limit:
            return num_partition
        num_partition += num_gpu


def amp_dtype_for(gpu):
    """bf16 on Ampere and newer, fp16 otherwise."""
    major, minor = torch.cuda.get_device_capability(gpu)
    return torch.bfloat16 if major >= 8 else torch.float16


class Worker:
    def __init__(self, rank, world_size, resource, cfg, graph):
        self.rank = rank
        self.world_size = world_size
        self.gpu = resource.gpus[rank]
        self.device = torch.device("cuda", self.gpu)
        self.cfg = cfg
        self.graph = graph
        self.resource = resource
        self.use_amp = cfg["build"].get("amp", False)
        self.profile = cfg["train"].get("profile", False)

        model_cls = getattr(models, cfg["train"]["model"])
        self.model = model_cls(graph.num_relation, resource.dim, margin=cfg["train"].get("margin", 12))
        self.model.relation.to(self.device)
        opt_cfg = dict(cfg["build"]["optimizer"])
        opt_type = opt_cfg.pop("type")
        self.relation_optimizer = getattr(torch.optim, opt_type)(self.model.relation.parameters(), **opt_cfg)
        self.amp_dtype = amp_dtype_for(self.gpu) if self.use_amp else torch.float32
        self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp and self.amp_dtype == torch.float16)

    def load_block(self, store, block_id):
        """Copy one entity block (and its optimizer state) from host memory to the GPU."""
        emb = store.embeddings[block_id].to(self.device, non_blocking=True)
        state = store.states[block_id].to(self.device, non_blocking=True)
        return emb.requires_grad_(), state

    def train_episode(self, store, head_block, tail_block, episode):
        head, head_state = self.load_block(store, head_block)
        tail, tail_state = self.load_block(store, tail_block)
        edges = self.graph.block_edges(head_block, tail_block)
        batch_size = self.cfg["train"].get("sample_batch_size", 2000)
        num_negative = self.cfg["build"].get("num_negative", 64)
        temperature = self.cfg["train"].get("adversarial_temperature", 0)

        if self.profile:
            torch.cuda.nvtx.range_push("episode%d_b%d_%d" % (episode, head_block, tail_block))
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()

        total_loss = 0.0
        for batch in sampler.iterate(edges, batch_size, num_negative, num_workers=self.resource.cpu_per_gpu):
            batch = batch.to(self.device, non_blocking=True)
            ctx = torch.autocast("cuda", dtype=self.amp_dtype) if self.use_amp else nullcontext()
            with ctx:
                loss = self.model.loss(head, tail, batch, adversarial_temperature=temperature)
            self.relation_optimizer.zero_grad(set_to_none=True)
            head.grad = None
            tail.grad = None
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.relation_optimizer)
            sampler.sparse_adam_(head, head.grad, head_state, lr=self.cfg["build"]["optimizer"]["lr"])
            sampler.sparse_adam_(tail, tail.grad, tail_state, lr=self.cfg["build"]["optimizer"]["lr"])
            self.scaler.step(self.relation_optimizer)
            self.scaler.update()
            total_loss += loss.item()

        end.record()
        torch.cuda.synchronize(self.device)
        if self.profile:
            torch.cuda.nvtx.range_pop()

        store.embeddings[head_block].copy_(head.detach().cpu())
        store.embeddings[tail_block].copy_(tail.detach().cpu())
        store.states[head_block].copy_(head_state.cpu())
        store.states[tail_block].copy_(tail_state.cpu())
        return total_loss, start.elapsed_time(end) / 1000.0

    def sync_relations(self):
        for p in self.model.relation.parameters():
            dist.all_reduce(p.data, op=dist.ReduceOp.SUM)
            p.data /= self.world_size


def _worker(rank, world_size, resource, cfg, graph, store, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(resource.gpus[rank])
    dist.init_process_group(backend=resource.backend, rank=rank, world_size=world_size)
    logging.basicConfig(level=logging.INFO, format="[gpu %d] %%(asctime)s %%(message)s" % resource.gpus[rank])

    worker = Worker(rank, world_size, resource, cfg, graph)
    num_partition = store.num_partition
    num_epoch = cfg["train"]["num_epoch"]
    log_frequency = cfg["train"].get("log_frequency", 100)

    for epoch in range(num_epoch):
        # GraphVite schedule: in each round every worker takes a disjoint (head, tail) block pair
        for shift in range(num_partition):
            head_block = (rank + shift) % num_partition
            for tail_block in range(rank, num_partition, world_size):
                loss, seconds = worker.train_episode(store, head_block, tail_block, epoch)
            dist.barrier()
        worker.sync_relations()
        if rank == 0 and epoch % log_frequency == 0:
            logger.info("epoch %d loss %.4f (%.2fs last episode)", epoch, loss, seconds)
            logger.info("max memory allocated: %.2f GiB", torch.cuda.max_memory_allocated() / 2 ** 30)

    if rank == 0:
        store.relations = worker.model.relation.state_dict()
    dist.barrier()
    dist.destroy_process_group()


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="GraphVite-style KGE launcher")
    parser.add_argument("config", help="YAML config in GraphVite format")
    parser.add_argument("--gpus", default=None, help="comma separated GPU ids (overrides resource.gpus)")
    parser.add_argument("--port", type=int, default=29513)
    parser.add_argument("--seed", type=int, default=1024)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    with open(args.config) as fin:
        cfg = yaml.safe_load(fin)

    torch.manual_seed(args.seed)
    np.random.seed(args.seed)

    cli_gpus = [int(g) for g in args.gpus.split(",")] if args.gpus else None
    resource = Resource(cfg.get("resource", {}), cli_gpus)
    logger.info(resource)

    # NCCL over PCIe is more stable than P2P on the consumer cards we have
    os.environ.setdefault("NCCL_P2P_DISABLE", "1")
    os.environ.setdefault("NCCL_DEBUG", "WARN")

    graph = load_triplets(cfg["graph"]["file_name"], **cfg.get("format", {}))
    num_partition = cfg["build"].get("num_partition", AUTO)
    if num_partition == AUTO:
        num_partition = auto_num_partition(graph.num_entity, resource.dim, len(resource.gpus),
                                           resource.gpu_memory_limit)
    store = partition_entities(graph, num_partition, resource.dim)
    store.share_memory_()
    logger.info("%d entities in %d partitions", graph.num_entity, num_partition)

    start = time.time()
    mp.spawn(_worker, args=(len(resource.gpus), resource, cfg, graph, store, args.port),
             nprocs=len(resource.gpus), join=True)
    logger.info("training took %.1f min", (time.time() - start) / 60)

    if "evaluate" in cfg:
        device = torch.device("cuda", resource.gpus[0])
        metrics = link_prediction(store, graph, cfg["evaluate"], device=device)
        for k, v in metrics.items():
            logger.info("%s: %g", k, v)

    if "save" in cfg:
        with open(cfg["save"]["file_name"], "wb") as fout:
            pickle.dump({"entity": store.full_embeddings(), "relation": store.relations}, fout)


if __name__ == "__main__":
    main()
