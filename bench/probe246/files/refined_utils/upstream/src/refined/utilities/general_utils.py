import logging
import os
import subprocess
import sys
from functools import lru_cache
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, TypeVar

import torch
from transformers import AutoTokenizer, PreTrainedTokenizerFast

T = TypeVar("T")

LOG_FORMAT = "%(asctime)s - %(levelname)s - %(name)s - %(message)s"


def get_logger(name: str, level: int = logging.INFO) -> logging.Logger:
    logger = logging.getLogger(name)
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stdout)
        handler.setFormatter(logging.Formatter(LOG_FORMAT))
        logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False
    return logger


LOG = get_logger(__name__)


def batch_items(iterable: Iterable[T], n: int = 1) -> Iterable[List[T]]:
    """Split an iterable into lists of length n (the last one may be shorter)."""
    batch: List[T] = []
    for item in iterable:
        batch.append(item)
        if len(batch) == n:
            yield batch
            batch = []
    if batch:
        yield batch


def unique(func, iterable: Iterable[T]) -> List[T]:
    seen = set()
    result = []
    for item in iterable:
        key = func(item)
        if key not in seen:
            seen.add(key)
            result.append(item)
    return result


def round_list(lst: Sequence[float], n: int = 4) -> List[float]:
    return [round(x, n) for x in lst]


def merge_spans(spans: List[Tuple[int, int, str]]) -> List[Tuple[int, int, str]]:
    """Merge adjacent spans with the same label, e.g. from BIO tagging of sub-word tokens."""
    if not spans:
        return []
    spans = sorted(spans)
    merged = [spans[0]]
    for start, end, label in spans[1:]:
        last_start, last_end, last_label = merged[-1]
        if label == last_label and start <= last_end:
            merged[-1] = (last_start, max(end, last_end), label)
        else:
            merged.append((start, end, label))
    return merged


@lru_cache(maxsize=4)
def get_tokenizer(
    transformer_name: str,
    data_dir: Optional[str] = None,
    use_fast: bool = True,
    add_special_tokens: bool = True,
    add_prefix_space: bool = False,
) -> PreTrainedTokenizerFast:
    local_path = os.path.join(data_dir, transformer_name) if data_dir is not None else None
    if local_path is not None and os.path.isdir(local_path):
        name_or_path = local_path
    else:
        name_or_path = transformer_name
    return AutoTokenizer.from_pretrained(
        name_or_path,
        use_fast=use_fast,
        add_special_tokens=add_special_tokens,
        add_prefix_space=add_prefix_space,
    )


def get_device(device: Optional[str] = None, use_cpu: bool = False) -> Tuple[torch.device, int]:
    """Return the torch device to run on and the number of visible GPUs."""
    if use_cpu:
        return torch.device("cpu"), 0
    n_gpu = torch.cuda.device_count()
    if device is None:
        device = "cuda:0" if n_gpu > 0 else "cpu"
    return torch.device(device), n_gpu


def wrap_tensors(batch: Dict[str, Any], device: torch.device, non_blocking: bool = True) -> Dict[str, Any]:
    """Move every tensor of a (possibly nested) batch dict to `device`."""
    out: Dict[str, Any] = {}
    for key, value in batch.items():
        if isinstance(value, torch.Tensor):
            out[key] = value.to(device, non_blocking=non_blocking)
        elif isinstance(value, dict):
            out[key] = wrap_tensors(value, device, non_blocking)
        elif isinstance(value, (list, tuple)) and value and isinstance(value[0], torch.Tensor):
            out[key] = type(value)(v.to(device, non_blocking=non_blocking) for v in value)
        else:
            out[key] = value
    return out


def get_gpu_memory_map() -> Dict[int, int]:
    """Used memory (MiB) per GPU, as reported by nvidia-smi. Logged by the training loop."""
    try:
        result = subprocess.check_output(
            ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,nounits,noheader"],
            encoding="utf-8",
        )
    except (FileNotFoundError, subprocess.CalledProcessError):
        return {}
    gpu_memory = [int(x) for x in result.strip().split("\n") if x.strip()]
    return dict(zip(range(len(gpu_memory)), gpu_memory))


def log_gpu_usage(prefix: str = "") -> None:
    if not torch.cuda.is_available():
        return
    for i in range(torch.cuda.device_count()):
        allocated = torch.cuda.memory_allocated(i) / 2**30
        reserved = torch.cuda.memory_reserved(i) / 2**30
        LOG.info(f"{prefix}GPU {i}: allocated {allocated:.2f} GiB, reserved {reserved:.2f} GiB")
    mem_map = get_gpu_memory_map()
    if mem_map:
        LOG.info(f"{prefix}nvidia-smi used MiB: {mem_map}")


def sort_by_key(items: List[Dict[str, Any]], key: str, reverse: bool = False) -> List[Dict[str, Any]]:
    return sorted(items, key=lambda x: x[key], reverse=reverse)


def get_huggingface_config(transformer_name: str, data_dir: Optional[str] = None):
    from transformers import AutoConfig

    local_path = os.path.join(data_dir, transformer_name) if data_dir is not None else None
    if local_path is not None and os.path.isdir(local_path):
        return AutoConfig.from_pretrained(local_path)
    return AutoConfig.from_pretrained(transformer_name)


def set_torch_threads(n: Optional[int] = None) -> None:
    """Limit intra-op threads on CPU inference workers (the default oversubscribes with many workers)."""
    if n is None:
        n = max(1, (os.cpu_count() or 2) // 2)
    torch.set_num_threads(n)
