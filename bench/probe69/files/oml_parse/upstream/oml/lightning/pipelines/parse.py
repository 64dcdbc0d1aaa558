import warnings
from pathlib import Path
from typing import Any, Dict, Optional, Union

import torch
from pytorch_lightning.callbacks import ModelCheckpoint
from pytorch_lightning.strategies import DDPStrategy

from oml.const import OVERALL_CATEGORIES_KEY, TCfg
from oml.datasets.base import DatasetWithLabels
from oml.interfaces.loggers import IPipelineLogger
from oml.interfaces.models import IExtractor
from oml.interfaces.retrieval import IRetrievalPostprocessor
from oml.interfaces.samplers import IBatchSampler
from oml.lightning.pipelines.logging import TensorBoardPipelineLogger
from oml.registry.loggers import get_logger_by_cfg
from oml.registry.models import get_extractor_by_cfg
from oml.registry.postprocessors import get_postprocessor_by_cfg
from oml.registry.samplers import SAMPLERS_CATEGORIES_BASED, get_sampler_by_cfg
from oml.registry.schedulers import get_scheduler_by_cfg
from oml.utils.misc import dictconfig_to_dict


def parse_engine_params_from_config(cfg: TCfg) -> Dict[str, Any]:
    """
    The function parses config and based on it prepares DDP parameters for PytorchLightning Trainer module.
    There are two parameters 'devices' and 'accelerator' which affect DDP.

    Args:
        cfg: Dictionary with pipeline parameters

    Returns:
        Dictionary with parameters for PytorchLightning Trainer
    """
    # we want to replace possible null or no values in config for "accelerator" and "devices"
    accelerator = cfg.get("accelerator") or ("gpu" if torch.cuda.is_available() else "cpu")
    devices = cfg.get("devices") or 1

    if isinstance(devices, (tuple, list)):
        devices = len(devices)

    if accelerator == "cpu" and devices > 1:
        warnings.warn(
            "You requested several processes on CPU. DDP on CPU is slow and only meant for debugging, "
            "consider using a GPU."
        )

    if devices > 1:
        strategy = DDPStrategy(find_unused_parameters=cfg.get("find_unused_parameters", False))
    else:
        strategy = "auto"

    return {
        "devices": devices,
        "strategy": strategy,
        "accelerator": accelerator,
        "precision": cfg.get("precision", 32),
        "use_distributed_sampler": False,
    }


def check_is_config_for_ddp(cfg: TCfg) -> bool:
    return isinstance(cfg["strategy"], DDPStrategy)


def parse_logger_from_config(cfg: TCfg) -> IPipelineLogger:
    logger = (
        TensorBoardPipelineLogger(".")
        if cfg.get("logger", None) is None
        else get_logger_by_cfg(cfg["logger"])
    )
    return logger  # type: ignore


def parse_scheduler_from_config(cfg: TCfg, optimizer: torch.optim.Optimizer) -> Dict[str, Any]:
    if cfg.get("scheduling"):
        scheduler_kwargs = {
            "scheduler": get_scheduler_by_cfg(cfg["scheduling"]["scheduler"], optimizer=optimizer),
            "scheduler_interval": cfg["scheduling"]["scheduler_interval"],
            "scheduler_frequency": cfg["scheduling"]["scheduler_frequency"],
            "scheduler_monitor_metric": cfg["scheduling"].get("monitor_metric", None),
        }
    else:
        scheduler_kwargs = {"scheduler": None}

    return scheduler_kwargs


def parse_sampler_from_config(cfg: TCfg, dataset: DatasetWithLabels) -> Optional[IBatchSampler]:
    if (
        (not dataset.categories_key)
        and (cfg["sampler"] is not None)
        and cfg["sampler"]["name"] in SAMPLERS_CATEGORIES_BASED.keys()
    ):
        raise ValueError(
            "NOTE! You are trying to use Sampler which works with the information related"
            "to categories, but there is no <categories_key> in your Dataset."
        )

    sampler_runtime_args = {"labels": dataset.get_labels()}
    label2category = dataset.get_label2category()
    if dataset.categories_key and label2category is not None:
        sampler_runtime_args["label2category"] = label2category

    sampler = (
        get_sampler_by_cfg(cfg["sampler"], **sampler_runtime_args) if cfg["sampler"] is not None else None
    )

    return sampler


def parse_ckpt_callback_from_config(cfg: TCfg) -> ModelCheckpoint:
    if "metric_for_checkpointing" not in cfg:
        return ModelCheckpoint(
            dirpath=Path.cwd() / "checkpoints",
            monitor=None,
            save_top_k=-1,
            save_last=True,
            filename="{epoch}",
        )
    return ModelCheckpoint(
        dirpath=Path.cwd() / "checkpoints",
        monitor=cfg["metric_for_checkpointing"],
        mode=cfg.get("mode_for_checkpointing", "max"),
        save_top_k=1,
        verbose=True,
        filename="best",
    )


def parse_postprocessor_from_config(cfg: TCfg) -> Optional[IRetrievalPostprocessor]:
    postprocessor = (
        None if not cfg.get("postprocessor", None) else get_postprocessor_by_cfg(cfg["postprocessor"])
    )
    return postprocessor


def initialize_extractor(cfg: TCfg) -> IExtractor:
    """Builds the extractor described in the config and, for evaluation-only runs,
    loads an external checkpoint on the host first so that any device layout works."""
    extractor = get_extractor_by_cfg(cfg["extractor"])
    weights = cfg.get("weights_for_validation", None)
    if weights:
        state_dict = torch.load(weights, map_location="cpu")
        state_dict = state_dict.get("state_dict", state_dict)
        state_dict = {k.replace("model.", "", 1): v for k, v in state_dict.items()}
        extractor.load_state_dict(state_dict, strict=True)
    return extractor


def parse_metric_args(cfg: TCfg) -> Dict[str, Any]:
    metric_args = dictconfig_to_dict(cfg.get("metric_args", {}))
    metric_args.setdefault("categories_to_visualize", [OVERALL_CATEGORIES_KEY])
    metric_args.setdefault("return_only_overall_category", False)
    return metric_args


def convert_to_new_format_if_needed(cfg: Union[TCfg, Dict[str, Any]]) -> Dict[str, Any]:
    """
    Configs written for OML 1.x used "model" instead of "extractor" and "gpus" instead of
    "accelerator"/"devices"; translate them so old experiment folders keep working.
    """
    cfg = dict(cfg)
    if "model" in cfg and "extractor" not in cfg:
        cfg["extractor"] = cfg.pop("model")
    if "gpus" in cfg:
        gpus = cfg.pop("gpus")
        if gpus:
            cfg.setdefault("accelerator", "gpu")
            cfg.setdefault("devices", gpus)
        else:
            cfg.setdefault("accelerator", "cpu")
    return cfg
