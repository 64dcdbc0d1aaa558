#!/usr/bin/env python
"""Evaluate a trained model on a dataset and dump metrics (and optionally outputs)."""
import dataclasses
import json
import logging
import os
from typing import Any, Dict, List, Optional

import hydra
import hydra_zen
import pytorch_lightning as pl
import torch

import ocl.hydra_plugins  # noqa: F401
from ocl.cli import cli_utils, eval_utils, train

logger = logging.getLogger("eval")


@dataclasses.dataclass
class EvaluationConfig:
    """Configuration for evaluation."""

    # Path to training configuration file or configuration dir. If dir, train_config_name
    # needs to be set as well.
    train_config_path: str
    train_config_overrides: Optional[List[str]] = None
    train_config_name: Optional[str] = None
    checkpoint_path: Optional[str] = None
    output_dir: Optional[str] = None
    report_filename: str = "metrics.json"

    # Setting this allows to add modules to the model that are executed during evaluation
    modules: Optional[Dict[str, Any]] = None
    # Setting this allows to evaluate on a different dataset than the model was trained on
    dataset: Optional[Any] = None
    # Setting this allows to evaluate on different metrics than the model was trained on
    evaluation_metrics: Optional[Dict[str, Any]] = None

    save_outputs: bool = False
    skip_metrics: bool = False
    outputs_dirname: str = "outputs"
    outputs_to_store: Optional[List[str]] = None
    n_samples_to_store: Optional[int] = None

    eval_train: bool = False
    eval_val: bool = True
    eval_test: bool = False
    eval_batch_size: Optional[int] = None


hydra.core.config_store.ConfigStore.instance().store(
    name="evaluation_config",
    node=EvaluationConfig,
)


def _to_cpu(outputs):
    if isinstance(outputs, torch.Tensor):
        return outputs.detach().cpu()
    if isinstance(outputs, dict):
        return {k: _to_cpu(v) for k, v in outputs.items()}
    if isinstance(outputs, (list, tuple)):
        return type(outputs)(_to_cpu(v) for v in outputs)
    return outputs


@hydra.main(config_name="evaluation_config", config_path="../../configs", version_base="1.1")
def evaluate(config: EvaluationConfig):
    config.train_config_path = hydra.utils.to_absolute_path(config.train_config_path)
    if config.train_config_path.endswith(".yaml"):
        config_dir, config_name = os.path.split(config.train_config_path)
    else:
        config_dir, config_name = config.train_config_path, config.train_config_name

    if not os.path.exists(config_dir):
        raise ValueError(f"Inferred config dir at {config_dir} does not exist.")

    if config.checkpoint_path is None:
        try:
            run_dir = os.path.dirname(config_dir)
            checkpoint_path = cli_utils.find_checkpoint(run_dir)
            config.checkpoint_path = checkpoint_path
            logger.info(f"Automatically derived checkpoint path: {checkpoint_path}")
        except (TypeError, IndexError):
            raise ValueError(
                "Unable to automatically derive checkpoint from command line provided config file "
                "path. You can manually specify a checkpoint using the `checkpoint_path` argument."
            )
    else:
        config.checkpoint_path = hydra.utils.to_absolute_path(config.checkpoint_path)
        if not os.path.exists(config.checkpoint_path):
            raise ValueError(f"Checkpoint at {config.checkpoint_path} does not exist.")

    if config.output_dir is None:
        config.output_dir = os.path.join(run_dir, "eval", cli_utils.get_timestamp())
    os.makedirs(config.output_dir, exist_ok=True)

    with hydra.initialize_config_dir(config_dir=config_dir, version_base="1.1"):
        overrides = config.train_config_overrides if config.train_config_overrides else []
        train_config = hydra.compose(os.path.splitext(config_name)[0], overrides=overrides)
        train_config.dataset.eval_batch_size = config.eval_batch_size or train_config.dataset.batch_size
        if config.dataset is not None:
            train_config.dataset = config.dataset
        if config.evaluation_metrics is not None:
            train_config.evaluation_metrics = config.evaluation_metrics

    datamodule = train.build_and_register_datamodule_from_config(train_config)
    model = train.build_model_from_config(train_config, config.checkpoint_path)
    if config.modules is not None:
        modules = hydra_zen.instantiate(config.modules, _convert_="all")
        for key, module in modules.items():
            model.models[key] = module

    # Single-GPU evaluation is deterministic; multi-GPU would reorder outputs.
    trainer = pl.Trainer(
        accelerator="gpu",
        devices=1,
        logger=False,
        enable_progress_bar=True,
    )

    metrics = {}
    if config.eval_val:
        if not config.skip_metrics:
            results = trainer.validate(model, datamodule.val_dataloader())
            metrics["val"] = results[0]
    if config.eval_test:
        results = trainer.test(model, datamodule.test_dataloader())
        metrics["test"] = results[0]

    if config.save_outputs:
        outputs_dir = os.path.join(config.output_dir, config.outputs_dirname)
        os.makedirs(outputs_dir, exist_ok=True)
        model.eval().to("cuda")
        n_stored = 0
        with torch.no_grad():
            for batch_idx, batch in enumerate(datamodule.val_dataloader()):
                batch = eval_utils.move_to_device(batch, "cuda")
                outputs = model(batch)
                if config.outputs_to_store:
                    outputs = {k: outputs[k] for k in config.outputs_to_store}
                torch.save(_to_cpu(outputs), os.path.join(outputs_dir, f"{batch_idx:06d}.pt"))
                n_stored += batch["batch_size"]
                if config.n_samples_to_store and n_stored >= config.n_samples_to_store:
                    break

    with open(os.path.join(config.output_dir, config.report_filename), "w") as f:
        json.dump(metrics, f, indent=2)
    logger.info(f"Wrote metrics to {config.output_dir}")


if __name__ == "__main__":
    evaluate()
