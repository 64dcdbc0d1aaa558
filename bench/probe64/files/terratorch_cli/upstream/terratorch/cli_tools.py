"""LightningCLI entry point for fine-tuning geospatial foundation models (Prithvi, SatMAE, ...)."""
import logging
import os
import sys
import warnings
from pathlib import Path

import lightning.pytorch as pl
import torch
from lightning.pytorch.callbacks import BasePredictionWriter, LearningRateMonitor, ModelCheckpoint
from lightning.pytorch.cli import ArgsType, LightningCLI, SaveConfigCallback
from lightning.pytorch.plugins import MixedPrecision

import rasterio

logger = logging.getLogger("terratorch")


def flatten(list_of_lists):
    return [item for sublist in list_of_lists for item in sublist]


def write_tiff(img_wrt, filename, metadata):
    with rasterio.open(filename, "w", **metadata) as dest:
        if len(img_wrt.shape) == 2:
            img_wrt = img_wrt[None]
        for i in range(img_wrt.shape[0]):
            dest.write(img_wrt[i, :, :], i + 1)
    return filename


def save_prediction(prediction, input_file_name, out_dir, dtype="int16"):
    with rasterio.open(input_file_name) as src:
        metadata = src.meta
        metadata.update(count=1, dtype=dtype, compress="lzw", nodata=-1)
    file_name = os.path.basename(input_file_name)
    file_name_no_ext = os.path.splitext(file_name)[0]
    out_file_name = file_name_no_ext + "_pred.tif"
    logger.info(f"Saving output to {out_file_name} ...")
    write_tiff(prediction, os.path.join(out_dir, out_file_name), metadata)


class CustomWriter(BasePredictionWriter):
    """Callback class to write geospatial data to file."""

    def __init__(self, output_dir=None, write_interval="batch"):
        super().__init__(write_interval)
        self.output_dir = output_dir

    def write_on_batch_end(self, trainer, pl_module, prediction, batch_indices, batch, batch_idx, dataloader_idx):
        output_dir = self.output_dir or trainer.predict_output_dir
        os.makedirs(output_dir, exist_ok=True)
        pred_batch, filename_batch = prediction
        for prediction, file_name in zip(torch.unbind(pred_batch, dim=0), filename_batch, strict=False):
            save_prediction(prediction.cpu().numpy(), file_name, output_dir)


class StudioDeploySaveConfig(SaveConfigCallback):
    """Save the config with the checkpoint so that it can be reloaded for inference."""

    def setup(self, trainer, pl_module, stage):
        if self.already_saved:
            return
        super().setup(trainer, pl_module, stage)


class MyLightningCLI(LightningCLI):
    def add_arguments_to_parser(self, parser):
        parser.add_argument("--predict_output_dir", default=None)
        parser.add_argument("--out_dtype", default="int16")
        parser.add_argument("--deploy_config_file", type=bool, default=True)

    def instantiate_classes(self) -> None:
        super().instantiate_classes()
        config = self.config.get(self.subcommand, self.config)
        if hasattr(config, "predict_output_dir"):
            self.trainer.predict_output_dir = config.predict_output_dir


def _tune_runtime():
    # TF32 matmuls are plenty accurate for reflectance regression and ~2x faster on Ampere
    torch.set_float32_matmul_precision("high")
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    # Prithvi-600 with 6 frames does not fit in 40GB otherwise
    os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")


def build_lightning_cli(args: ArgsType = None, run=True) -> LightningCLI:
    _tune_runtime()
    if torch.cuda.is_available() and torch.cuda.is_bf16_supported():
        default_precision = "bf16-mixed"
    else:
        default_precision = "32-true"
    cli = MyLightningCLI(
        model_class=pl.LightningModule,
        subclass_mode_model=True,
        subclass_mode_data=True,
        seed_everything_default=0,
        save_config_callback=StudioDeploySaveConfig,
        save_config_kwargs={"overwrite": True},
        args=args,
        trainer_defaults={
            "accelerator": "cuda",
            "devices": "auto",
            "precision": default_precision,
            "callbacks": [LearningRateMonitor(logging_interval="epoch")],
        },
        run=run,
    )
    return cli


def main():
    warnings.filterwarnings("ignore", message="The .* does not have many workers")
    build_lightning_cli()


if __name__ == "__main__":
    main()
