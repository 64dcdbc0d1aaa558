# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.

import gc
import os
import time
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.elastic.multiprocessing.errors import record

from torchtitan.config_manager import JobConfig
from torchtitan.components.checkpoint import CheckpointManager
from torchtitan.components.float8 import Float8Converter
from torchtitan.components.metrics import build_metrics_processor
from torchtitan.models.llama3 import Transformer, llama3_configs
from torchtitan.models.llama3.infra.parallelize import parallelize_llama
from torchtitan.tools.logging import init_logger, logger
from torchtitan.tools import utils

# Device type used for the whole run; every mesh, tensor and memory monitor keys off this.
device_type = "cuda"
device_module = torch.cuda


class GarbageCollection:
    """Run the Python GC by hand every `gc_freq` steps to avoid stragglers."""

    def __init__(self, gc_freq: int = 1000):
        assert gc_freq > 0, "gc_freq must be a positive integer"
        self.gc_freq = gc_freq
        gc.disable()
        self.collect("Initial GC collection.")

    def run(self, step_count: int):
        if step_count > 1 and step_count % self.gc_freq == 0:
            self.collect("Performing periodical GC collection.")

    @staticmethod
    def collect(reason: str):
        begin = time.monotonic()
        gc.collect(1)
        logger.info("[GC] %s %.2f seconds.", reason, time.monotonic() - begin)


def init_distributed(job_config: JobConfig):
    # Dump NCCL flight recorder traces on timeout so hangs can be diagnosed offline.
    os.environ["TORCH_NCCL_DUMP_ON_TIMEOUT"] = str(job_config.comm.trace_buf_size > 0)
    os.environ["TORCH_NCCL_TRACE_BUFFER_SIZE"] = str(job_config.comm.trace_buf_size)
    os.environ["TORCH_NCCL_AVOID_RECORD_STREAMS"] = "1"
    dist.init_process_group(
        backend="cuda:nccl,cpu:gloo",
        timeout=timedelta(seconds=job_config.comm.init_timeout_seconds),
    )


def build_mesh(dp_shard: int, tp: int, cp: int, world_size: int):
    dims, names = [], []
    for d, name in ((dp_shard, "dp_shard"), (cp, "cp"), (tp, "tp")):
        if d > 1:
            dims.append(d)
            names.append(name)
    if not dims:
        dims, names = [world_size], ["dp_shard"]
    logger.info(f"Building {len(dims)}-D device mesh with {names}, {dims}")
    return init_device_mesh(device_type, dims, mesh_dim_names=names)


def device_memory_monitor(device: torch.device):
    device_name = torch.cuda.get_device_name(device)
    device_capacity = torch.cuda.get_device_properties(device).total_memory
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.empty_cache()
    logger.info(f"{device_name} ({device.index}) with {device_capacity / 2**30:.2f}GiB memory")
    return device_capacity


def memory_stats(device_capacity: int):
    stats = torch.cuda.memory_stats()
    max_active = stats["active_bytes.all.peak"]
    max_reserved = stats["reserved_bytes.all.peak"]
    num_retries = stats["num_alloc_retries"]
    num_ooms = stats["num_ooms"]
    if num_retries > 0:
        logger.warning(f"{num_retries} CUDA memory allocation retries.")
    return {
        "memory/max_active(GiB)": max_active / 2**30,
        "memory/max_active(%)": 100 * max_active / device_capacity,
        "memory/max_reserved(GiB)": max_reserved / 2**30,
        "memory/num_ooms": num_ooms,
    }


@record
def main(job_config: JobConfig):
    init_logger()
    world_size = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    gc_handler = GarbageCollection(gc_freq=job_config.training.gc_freq)

    device = torch.device(f"{device_type}:{local_rank}")
    device_module.set_device(device)
    init_distributed(job_config)

    world_mesh = build_mesh(
        job_config.parallelism.data_parallel_shard_degree,
        job_config.parallelism.tensor_parallel_degree,
        job_config.parallelism.context_parallel_degree,
        world_size,
    )
    utils.set_determinism(world_mesh, device, job_config.training.seed, job_config.training.deterministic)

    model_args = llama3_configs[job_config.model.flavor]
    with torch.device("meta"):
        model = Transformer(model_args)

    float8 = Float8Converter(job_config)
    float8.convert(model)

    parallelize_llama(model, world_mesh, job_config)
    model.to_empty(device="cuda")
    with torch.no_grad():
        model.init_weights(buffer_device=None)
    model.train()

    optimizer = torch.optim.AdamW(
        model.parameters(),
        lr=job_config.optimizer.lr,
        betas=(0.9, 0.95),
        weight_decay=0.1,
        fused=True,
    )
    lr_scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, (step + 1) / job_config.lr_scheduler.warmup_steps)
    )
    checkpoint = CheckpointManager(model, optimizer, lr_scheduler, job_config)
    metrics = build_metrics_processor(job_config, world_mesh)
    device_capacity = device_memory_monitor(device)

    data_iterator = iter(metrics.build_dataloader(job_config))
    step = checkpoint.load()
    time_last_log = time.perf_counter()
    ntokens_since_last_log = 0

    while step < job_config.training.steps:
        step += 1
        gc_handler.run(step)
        batch = next(data_iterator)
        input_ids, labels = batch["input"], batch["labels"]
        ntokens_since_last_log += labels.numel()
        input_ids = input_ids.to(device_type)
        labels = labels.cuda()

        optimizer.zero_grad()
        pred = model(input_ids)
        loss = torch.nn.functional.cross_entropy(pred.flatten(0, 1).float(), labels.flatten(0, 1))
        del pred
        loss.backward()
        grad_norm = utils.clip_grad_norm_(model.parameters(), job_config.training.max_norm, foreach=True)
        float8.precompute_float8_dynamic_scale_for_fsdp(model)
        optimizer.step()
        lr_scheduler.step()

        if step % job_config.metrics.log_freq == 0:
            loss_val = loss.detach()
            dist.all_reduce(loss_val, op=dist.ReduceOp.AVG)
            time_delta = time.perf_counter() - time_last_log
            tps = ntokens_since_last_log / (time_delta * world_size)
            mem = memory_stats(device_capacity)
            logger.info(
                f"step: {step:2}  loss: {loss_val.item():7.4f}  grad_norm: {grad_norm.item():7.4f}  "
                f"tps: {round(tps):,}  active: {mem['memory/max_active(GiB)']:5.2f}GiB"
            )
            metrics.log(step, {"loss": loss_val.item(), "tps": tps, **mem})
            ntokens_since_last_log = 0
            time_last_log = time.perf_counter()

        checkpoint.save(step, force=(step == job_config.training.steps))

        if step == 1:
            torch.cuda.synchronize()

    torch.cuda.synchronize(device)
    metrics.close()
    logger.info("Training completed")


if __name__ == "__main__":
    config = JobConfig()
    config.parse_args()
    main(config)
    dist.destroy_process_group()
