#!/usr/bin/env python
"""Programmatic training entry point for the transformer NER pipeline.

This is a thin wrapper around ``spacy.training.loop.train`` that adds a few
things the stock ``spacy train`` CLI does not give us:

* a per-step memory logger (the transformer easily OOMs on long PubTator
  abstracts, so we want to see the peak usage in the logs),
* a hook that periodically frees the CUDA caching allocator,
* config overrides from environment variables (handy on the cluster).

Usage::

    python scripts/train_trf.py configs/ner_trf.cfg training/ --gpu-id 0 \
        --paths.train corpus/train.spacy --paths.dev corpus/dev.spacy
"""
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, Optional

import spacy
import srsly
import typer
from spacy import util
from spacy.cli._util import parse_config_overrides, show_validation_error
from spacy.training.initialize import init_nlp
from spacy.training.loop import train as train_nlp
from thinc.api import Config, require_gpu, set_gpu_allocator, fix_random_seed
from wasabi import msg

import torch

logger = logging.getLogger("bc5cdr.train")

ENV_PREFIX = "BC5CDR_"


def env_overrides() -> Dict[str, Any]:
    """Collect overrides like BC5CDR_TRAINING__MAX_STEPS=5000 from os.environ."""
    overrides = {}
    for key, value in os.environ.items():
        if not key.startswith(ENV_PREFIX):
            continue
        dotted = key[len(ENV_PREFIX):].lower().replace("__", ".")
        try:
            overrides[dotted] = srsly.json_loads(value)
        except ValueError:
            overrides[dotted] = value
    return overrides


def setup_device(gpu_id: int, allocator: Optional[str]) -> None:
    """Select the device thinc (and therefore spaCy) will use.

    spaCy's own CLI does this in ``setup_gpu``; we do it by hand because we
    want to configure the allocator *before* the pipeline is built, so that
    CuPy and PyTorch share one memory pool.
    """
    if gpu_id < 0:
        msg.info("Using CPU")
        return
    msg.info(f"Using GPU: {gpu_id}")
    if allocator:
        # Route CuPy allocations through PyTorch's caching allocator so the
        # transformer and the thinc layers don't fight over memory.
        set_gpu_allocator(allocator)
    require_gpu(gpu_id)
    torch.cuda.set_device(gpu_id)
    props = torch.cuda.get_device_properties(gpu_id)
    msg.info(f"{props.name}: {props.total_memory / 1024 ** 3:.1f} GiB")


class MemoryLogger:
    """Callback for ``before_update`` that logs allocator statistics."""

    def __init__(self, every: int = 100, empty_cache_every: int = 0):
        self.every = every
        self.empty_cache_every = empty_cache_every
        self.start = time.time()

    def __call__(self, nlp, args: Dict[str, Any]) -> None:
        step = args["step"]
        if self.empty_cache_every and step and step % self.empty_cache_every == 0:
            torch.cuda.empty_cache()
        if step % self.every != 0:
            return
        if not torch.cuda.is_available():
            return
        allocated = torch.cuda.memory_allocated() / 1024 ** 2
        peak = torch.cuda.max_memory_allocated() / 1024 ** 2
        elapsed = time.time() - self.start
        logger.info(
            "step=%d elapsed=%.0fs cuda_allocated=%.0fMiB cuda_peak=%.0fMiB",
            step, elapsed, allocated, peak,
        )
        torch.cuda.reset_peak_memory_stats()


@spacy.registry.callbacks("bc5cdr.memory_logger.v1")
def create_memory_logger(every: int = 100, empty_cache_every: int = 0) -> Callable:
    return MemoryLogger(every=every, empty_cache_every=empty_cache_every)


def load_config(config_path: Path, overrides: Dict[str, Any]) -> Config:
    with show_validation_error(config_path):
        config = util.load_config(config_path, overrides=overrides, interpolate=False)
    return config


def main(
    ctx: typer.Context,
    config_path: Path = typer.Argument(..., exists=True, dir_okay=False),
    output_path: Optional[Path] = typer.Argument(None),
    gpu_id: int = typer.Option(0, "--gpu-id", "-g", help="GPU ID or -1 for CPU"),
    log_memory_every: int = typer.Option(200, "--log-memory-every"),
    empty_cache_every: int = typer.Option(0, "--empty-cache-every"),
    verbose: bool = typer.Option(False, "--verbose", "-V"),
):
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    util.logger.setLevel(logging.DEBUG if verbose else logging.INFO)
    overrides = parse_config_overrides(ctx.args)
    overrides.update(env_overrides())
    if output_path is not None and not output_path.exists():
        output_path.mkdir(parents=True)
        msg.good(f"Created output directory: {output_path}")

    config = load_config(config_path, overrides)
    allocator = config["system"].get("gpu_allocator")
    seed = config["system"].get("seed", 0)
    setup_device(gpu_id, allocator)
    fix_random_seed(seed)
    if gpu_id >= 0:
        torch.cuda.manual_seed_all(seed)

    # register our callback so the config can refer to it
    config["training"]["before_update"] = {
        "@callbacks": "bc5cdr.memory_logger.v1",
        "every": log_memory_every,
        "empty_cache_every": empty_cache_every,
    }
    with show_validation_error(config_path, hint_fill=False):
        nlp = init_nlp(config, use_gpu=gpu_id)
    msg.good("Initialized pipeline")
    msg.divider("Training pipeline")
    start = time.time()
    train_nlp(nlp, output_path, use_gpu=gpu_id, stdout=sys.stdout, stderr=sys.stderr)
    msg.good(f"Finished training in {(time.time() - start) / 60:.1f} min")
    if gpu_id >= 0:
        peak = torch.cuda.max_memory_reserved() / 1024 ** 3
        msg.info(f"Peak reserved GPU memory: {peak:.2f} GiB")


if __name__ == "__main__":
    app = typer.Typer(add_completion=False)
    app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(main)
    app()
