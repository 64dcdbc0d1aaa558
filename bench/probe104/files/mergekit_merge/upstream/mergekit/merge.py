# Copyright (C) 2024 Charles O. Goddard
#
# This software is free software: you can redistribute it and/or
# modify it under the terms of the GNU Lesser General Public License as
# published by the Free Software Foundation, either version 3 of the
# License, or (at your option) any later version.

import logging
import os
import shutil
from collections import Counter
from typing import Dict, List, Optional, Tuple

import click
import torch
import tqdm
import transformers
from pydantic import BaseModel
from safetensors import safe_open

from mergekit.architecture import ArchitectureInfo, get_architecture_info
from mergekit.card import generate_card
from mergekit.config import MergeConfiguration
from mergekit.graph import Executor, Task
from mergekit.io.lazy_tensor_loader import LazyTensorLoader, ShardedTensorIndex
from mergekit.io.tasks import LoaderCache
from mergekit.plan import MergePlanner
from mergekit.tokenizer import TokenizerInfo


class MergeOptions(BaseModel):
    allow_crimes: bool = False
    transformers_cache: Optional[str] = None
    lora_merge_cache: Optional[str] = None
    cuda: bool = False
    low_cpu_memory: bool = False
    out_shard_size: int = 5 * 1024**3  # 5 GiB
    copy_tokenizer: bool = True
    clone_tensors: bool = False
    trust_remote_code: bool = False
    random_seed: Optional[int] = None
    lazy_unpickle: bool = False
    write_model_card: bool = True
    safe_serialization: bool = True
    quiet: bool = False
    read_to_gpu: bool = False


def _device_for(options: MergeOptions) -> Tuple[str, str]:
    """Where to do the math and where to keep loaded tensors between tasks."""
    math_device = "cuda" if options.cuda else "cpu"
    storage_device = "cuda" if options.low_cpu_memory else "cpu"
    return math_device, storage_device


class EagerTensorLoader:
    """Loads whole shards at once; faster than lazy loading when the model fits in memory."""

    def __init__(self, index: ShardedTensorIndex, device: str = "cpu"):
        self.index = index
        self.device = device
        self._cache: Dict[str, torch.Tensor] = {}

    def get_tensor(self, key: str) -> torch.Tensor:
        if key not in self._cache:
            shard = self.index.tensor_paths[key]
            path = os.path.join(self.index.base_path, shard)
            with safe_open(path, framework="pt", device=self.device) as f:
                for name in f.keys():
                    self._cache[name] = f.get_tensor(name)
        return self._cache[key]


def run_merge(
    merge_config: MergeConfiguration,
    out_path: str,
    options: MergeOptions,
    config_source: Optional[str] = None,
):
    if options.random_seed is not None:
        transformers.trainer_utils.set_seed(options.random_seed)

    if not merge_config.models and not merge_config.slices:
        raise RuntimeError("No output requested")

    model_arch_info = [
        get_architecture_info(m.config(trust_remote_code=options.trust_remote_code))
        for m in merge_config.referenced_models()
    ]
    if not options.allow_crimes:
        if not all(a == model_arch_info[0] for a in model_arch_info[1:]):
            raise RuntimeError(
                "Must specify --allow-crimes to attempt to mix different architectures"
            )
    arch_info = model_arch_info[0]

    # initialize loader cache and set options
    loader_cache = LoaderCache()
    loader_cache.setup(options=options)

    # create config for output model
    cfg_out = _model_out_config(
        merge_config, arch_info, trust_remote_code=options.trust_remote_code
    )

    # warm up loader cache
    for model in (
        pbar := tqdm.tqdm(
            merge_config.referenced_models(),
            desc="Warmup loader cache",
            disable=options.quiet,
        )
    ):
        loader_cache.get(model)
    del pbar

    logging.info("Planning operations")
    targets = MergePlanner(
        merge_config,
        arch_info,
        options=options,
        out_model_config=cfg_out,
    ).plan_to_disk(out_path=out_path)

    math_device, storage_device = _device_for(options)
    exec = Executor(
        tasks=targets,
        math_device=math_device,
        storage_device=storage_device,
    )

    tokenizer = None
    for _task, value in exec.run(quiet=options.quiet):
        if isinstance(value, TokenizerInfo):
            tokenizer = value.tokenizer

    if tokenizer:
        _update_config_vocab(cfg_out, tokenizer)

    logging.info("Saving config")
    cfg_out.save_pretrained(out_path)

    if options.write_model_card:
        if not config_source:
            config_source = merge_config.to_yaml()

        card_md = generate_card(
            config=merge_config,
            config_yaml=config_source,
            name=os.path.basename(out_path),
        )
        with open(os.path.join(out_path, "README.md"), "w", encoding="utf-8") as fp:
            fp.write(card_md)

        with open(
            os.path.join(out_path, "mergekit_config.yml"), "w", encoding="utf-8"
        ) as fp:
            fp.write(config_source)

    if tokenizer is None and options.copy_tokenizer:
        try:
            _copy_tokenizer(
                merge_config, out_path, trust_remote_code=options.trust_remote_code
            )
        except Exception as e:
            logging.error(
                "Failed to copy tokenizer. The merge was still successful, just copy it from somewhere else.",
                exc_info=e,
            )

    if tokenizer:
        logging.info("Saving tokenizer")
        tokenizer.save_pretrained(out_path, safe_serialization=True)

    if options.cuda:
        logging.info(
            "peak GPU memory during merge: %.2f GiB",
            torch.cuda.max_memory_allocated() / 1024**3,
        )


def _copy_tokenizer(
    merge_config: MergeConfiguration, out_path: str, trust_remote_code: bool = False
):
    donor_model = merge_config.base_model or (merge_config.referenced_models()[0])

    if os.path.exists(
        os.path.join(donor_model.model.path, "tokenizer_config.json")
    ) and (
        os.path.exists(os.path.join(donor_model.model.path, "tokenizer.json"))
        or os.path.exists(os.path.join(donor_model.model.path, "tokenizer.model"))
    ):
        logging.info(f"Copying tokenizer from {donor_model}")

        for file_name in [
            "tokenizer_config.json",
            "special_tokens_map.json",
            "tokenizer.json",
            "tokenizer.model",
        ]:
            if os.path.exists(os.path.join(donor_model.model.path, file_name)):
                shutil.copy(
                    os.path.join(donor_model.model.path, file_name),
                    os.path.join(out_path, file_name),
                )

        return

    # fallback: load tokenizer
    logging.info("Reserializing tokenizer from base model")
    tokenizer = transformers.AutoTokenizer.from_pretrained(
        donor_model.model.path,
        revision=donor_model.model.revision,
        trust_remote_code=trust_remote_code,
    )
    tokenizer.save_pretrained(out_path, safe_serialization=True)


def _model_out_config(
    config: MergeConfiguration,
    arch_info: ArchitectureInfo,
    trust_remote_code: bool = False,
) -> transformers.PretrainedConfig:
    """Return a configuration for the resulting model."""
    if config.base_model:
        res = config.base_model.config(trust_remote_code=trust_remote_code)
    else:
        res = config.referenced_models()[0].config(trust_remote_code=trust_remote_code)
    if config.out_dtype:
        res.torch_dtype = config.out_dtype
    elif config.dtype:
        res.torch_dtype = config.dtype

    if config.slices:
        try:
            num_layers = sum(
                s.sources[0].layer_range[1] - s.sources[0].layer_range[0]
                for s in config.slices
            )
            setattr(res, arch_info.num_layers_config_key(), num_layers)
        except Exception as e:
            logging.warning(
                "Unable to set number of layers in output config - you may need to manually correct it.",
                exc_info=e,
            )
    return res


def _update_config_vocab(
    config: transformers.PretrainedConfig,
    tokenizer: transformers.PreTrainedTokenizerBase,
):
    try:
        config.vocab_size = len(tokenizer.get_vocab())
    except Exception as e:
        logging.warning(
            "Unable to set vocabulary size in output config - you may need to manually correct it.",
            exc_info=e,
        )


@click.command("mergekit-yaml")
@click.argument("config_file")
@click.argument("out_path")
@click.option("--verbose", "-v", type=bool, default=False, is_flag=True, help="Verbose logging")
@click.option("--cuda/--no-cuda", type=bool, default=False, help="Perform matrix arithmetic on GPU")
@click.option("--low-cpu-memory/--no-low-cpu-memory", type=bool, default=False,
              help="Store results and intermediate values on GPU. Useful if VRAM > RAM")
@click.option("--read-to-gpu/--no-read-to-gpu", type=bool, default=False,
              help="Read model weights directly to GPU")
@click.option("--lazy-unpickle/--no-lazy-unpickle", type=bool, default=False,
              help="Experimental lazy unpickler for lower memory usage")
@click.option("--copy-tokenizer/--no-copy-tokenizer", type=bool, default=True, help="Copy a tokenizer to the output")
@click.option("--allow-crimes/--no-allow-crimes", type=bool, default=False, help="Allow mixing architectures")
@click.option("--random-seed", type=int, default=None, help="Seed for reproducible use of randomized merge methods")
def main(
    config_file: str,
    out_path: str,
    verbose: bool,
    cuda: bool,
    low_cpu_memory: bool,
    read_to_gpu: bool,
    lazy_unpickle: bool,
    copy_tokenizer: bool,
    allow_crimes: bool,
    random_seed: Optional[int],
):
    import yaml

    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING)

    with open(config_file, "r", encoding="utf-8") as file:
        config_source = file.read()

    merge_config: MergeConfiguration = MergeConfiguration.model_validate(
        yaml.safe_load(config_source)
    )

    if cuda and not torch.cuda.is_available():
        raise click.BadParameter("--cuda was given but no CUDA device is available")

    run_merge(
        merge_config,
        out_path=out_path,
        options=MergeOptions(
            cuda=cuda,
            low_cpu_memory=low_cpu_memory,
            read_to_gpu=read_to_gpu,
            lazy_unpickle=lazy_unpickle,
            copy_tokenizer=copy_tokenizer,
            allow_crimes=allow_crimes,
            random_seed=random_seed,
        ),
        config_source=config_source,
    )


if __name__ == "__main__":
    main()
