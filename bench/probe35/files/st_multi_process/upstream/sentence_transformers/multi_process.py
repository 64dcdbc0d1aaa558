"""
Multi-process / multi-device encoding helpers for SentenceTransformer.

    pool = model.start_multi_process_pool()
    emb = model.encode_multi_process(sentences, pool)
    model.stop_multi_process_pool(pool)
"""
from __future__ import annotations

import logging
import math
import queue
from typing import Any, Literal

import numpy as np
import torch
import torch.multiprocessing as mp
from torch import Tensor
from tqdm.autonotebook import tqdm

logger = logging.getLogger(__name__)


def get_device_name() -> Literal["mps", "cuda", "cpu"]:
    """
    Returns the name of the device where this module is running on.

    It's a simple implementation that doesn't cover cases when more powerful GPUs are available
    and not a primary device ('cuda:0') or MPS device is available, but not configured properly.

    Returns:
        str: Device name, like 'cuda' or 'cpu'
    """
    if torch.cuda.is_available():
        return "cuda"
    elif torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def batch_to_device(batch: dict[str, Any], target_device: torch.device) -> dict[str, Any]:
    """
    Send a PyTorch batch (i.e., a dictionary of string keys to Tensors) to a device (e.g. "cpu", "cuda", "mps").
    """
    for key in batch:
        if isinstance(batch[key], Tensor):
            batch[key] = batch[key].to(target_device)
    return batch


def start_multi_process_pool(model, target_devices: list[str] | None = None) -> dict[str, Any]:
    """
    Starts a multi-process pool to process the encoding with several independent processes
    via :meth:`encode_multi_process`.

    This method is recommended if you want to encode on multiple GPUs or CPUs. It is advised
    to start only one process per GPU. This method works together with encode_multi_process
    and stop_multi_process_pool.

    Args:
        target_devices (List[str], optional): PyTorch target devices, e.g. ["cuda:0", "cuda:1", ...],
            ["npu:0", "npu:1", ...], or ["cpu", "cpu", "cpu", "cpu"]. If target_devices is None and CUDA/NPU
            is available, then all available CUDA/NPU devices will be used. If target_devices is None and
            CUDA/NPU is not available, then 4 CPU devices will be used.

    Returns:
        Dict[str, Any]: A dictionary with the target processes, an input queue, and an output queue.
    """
    if target_devices is None:
        n_gpus = torch.cuda.device_count()
        if n_gpus > 0:
            target_devices = [f"cuda:{i}" for i in range(n_gpus)]
        else:
            logger.info("CUDA is not available. Starting 4 CPU workers")
            target_devices = ["cpu"] * 4

    logger.info("Start multi-process pool on devices: {}".format(", ".join(map(str, target_devices))))

    model.to("cpu")
    model.share_memory()
    ctx = mp.get_context("spawn")
    input_queue = ctx.Queue()
    output_queue = ctx.Queue()
    processes = []

    for device_id in target_devices:
        p = ctx.Process(
            target=_encode_multi_process_worker,
            args=(device_id, model, input_queue, output_queue),
            daemon=True,
        )
        p.start()
        processes.append(p)

    return {"input": input_queue, "output": output_queue, "processes": processes}


def stop_multi_process_pool(pool: dict[str, Any]) -> None:
    """Stops all processes started with start_multi_process_pool."""
    for p in pool["processes"]:
        p.terminate()

    for p in pool["processes"]:
        p.join()
        p.close()

    pool["input"].close()
    pool["output"].close()


def encode_multi_process(
    model,
    sentences: list[str],
    pool: dict[str, Any],
    prompt_name: str | None = None,
    prompt: str | None = None,
    batch_size: int = 32,
    chunk_size: int | None = None,
    precision: Literal["float32", "int8", "uint8", "binary", "ubinary"] = "float32",
    normalize_embeddings: bool = False,
) -> np.ndarray:
    """
    Encodes a list of sentences using multiple processes and GPUs via :meth:`SentenceTransformer.encode`.
    The sentences are chunked into smaller packages and sent to individual processes, which encode them on
    the different GPUs or CPUs. This method is only suitable for encoding large sets of sentences.
    """
    if chunk_size is None:
        chunk_size = min(math.ceil(len(sentences) / len(pool["processes"]) / 10), 5000)

    logger.debug(f"Chunk data into {math.ceil(len(sentences) / chunk_size)} packages of size {chunk_size}")

    input_queue = pool["input"]
    last_chunk_id = 0
    chunk = []

    for sentence in sentences:
        chunk.append(sentence)
        if len(chunk) >= chunk_size:
            input_queue.put(
                [last_chunk_id, batch_size, chunk, prompt_name, prompt, precision, normalize_embeddings]
            )
            last_chunk_id += 1
            chunk = []

    if len(chunk) > 0:
        input_queue.put([last_chunk_id, batch_size, chunk, prompt_name, prompt, precision, normalize_embeddings])
        last_chunk_id += 1

    output_queue = pool["output"]
    results_list = sorted(
        [output_queue.get() for _ in tqdm(range(last_chunk_id), desc="Chunks")],
        key=lambda x: x[0],
    )
    embeddings = np.concatenate([result[1] for result in results_list])
    return embeddings


def _encode_multi_process_worker(
    target_device: str, model, input_queue: queue.Queue, results_queue: queue.Queue
) -> None:
    """
    Internal working process to encode sentences in multi-process setup
    """
    while True:
        try:
            chunk_id, batch_size, sentences, prompt_name, prompt, precision, normalize_embeddings = (
                input_queue.get()
            )
            embeddings = model.encode(
                sentences,
                prompt_name=prompt_name,
                prompt=prompt,
                device=target_device,
                show_progress_bar=False,
                precision=precision,
                convert_to_numpy=True,
                batch_size=batch_size,
                normalize_embeddings=normalize_embeddings,
            )

            results_queue.put([chunk_id, embeddings])
        except queue.Empty:
            break
