import multiprocessing
import os
import platform
import tarfile
import urllib.request
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal, Optional

import click
import torch
from pytorch_lightning import Trainer, seed_everything
from pytorch_lightning.strategies import DDPStrategy
from pytorch_lightning.utilities import rank_zero_only
from rdkit import Chem
from tqdm import tqdm

from boltz.data.module.inference import BoltzInferenceDataModule
from boltz.data.write.writer import BoltzWriter
from boltz.model.models.boltz1 import Boltz1

CCD_URL = "https://huggingface.co/boltz-community/boltz-1/resolve/main/ccd.pkl"
MODEL_URL = "https://huggingface.co/boltz-community/boltz-1/resolve/main/boltz1_conf.ckpt"


@dataclass
class BoltzDiffusionParams:
    """Diffusion process parameters."""

    gamma_0: float = 0.605
    gamma_min: float = 1.107
    noise_scale: float = 0.901
    rho: float = 8
    step_scale: float = 1.638
    sigma_min: float = 0.0004
    sigma_max: float = 160.0
    sigma_data: float = 16.0
    P_mean: float = -1.2
    P_std: float = 1.5
    coordinate_augmentation: bool = True
    alignment_reverse_diff: bool = True
    synchronize_sigmas: bool = True
    use_inference_model_cache: bool = True


@rank_zero_only
def download(cache: Path) -> None:
    """Download all the required data."""
    ccd = cache / "ccd.pkl"
    if not ccd.exists():
        click.echo(f"Downloading the CCD dictionary to {ccd}. You may change the cache directory with the --cache flag.")
        urllib.request.urlretrieve(CCD_URL, str(ccd))  # noqa: S310
    model = cache / "boltz1_conf.ckpt"
    if not model.exists():
        click.echo(f"Downloading the model weights to {model}. You may change the cache directory with the --cache flag.")
        urllib.request.urlretrieve(MODEL_URL, str(model))  # noqa: S310


@click.group()
def cli() -> None:
    """Boltz1."""
    return


@cli.command()
@click.argument("data", type=click.Path(exists=True))
@click.option("--out_dir", type=click.Path(exists=False), default="./", help="The path where to save the predictions.")
@click.option("--cache", type=click.Path(exists=False), default="~/.boltz", help="The directory where to download the data and model.")
@click.option("--checkpoint", type=click.Path(exists=True), help="An optional checkpoint, will use the provided Boltz-1 model by default.", default=None)
@click.option("--devices", type=int, help="The number of devices to use for prediction. Default is 1.", default=1)
@click.option("--accelerator", type=click.Choice(["gpu", "cpu", "tpu"]), help="The accelerator to use for prediction. Default is gpu.", default="gpu")
@click.option("--recycling_steps", type=int, help="The number of recycling steps to use for prediction. Default is 3.", default=3)
@click.option("--sampling_steps", type=int, help="The number of sampling steps to use for prediction. Default is 200.", default=200)
@click.option("--diffusion_samples", type=int, help="The number of diffusion samples to use for prediction. Default is 1.", default=1)
@click.option("--output_format", type=click.Choice(["pdb", "mmcif"]), help="The output format to use for the predictions. Default is mmcif.", default="mmcif")
@click.option("--num_workers", type=int, help="The number of dataloader workers to use for prediction. Default is 2.", default=2)
@click.option("--override", is_flag=True, help="Whether to override existing found predictions. Default is False.")
@click.option("--use_kernels/--no_kernels", default=True, help="Use the cuEquivariance / DeepSpeed triangle kernels on GPU (default on).")
@click.option("--seed", type=int, help="Seed to use for random number generator. Default is None (no seeding).", default=None)
def predict(data: str, out_dir: str, cache: str = "~/.boltz", checkpoint: Optional[str] = None, devices: int = 1,
            accelerator: str = "gpu", recycling_steps: int = 3, sampling_steps: int = 200, diffusion_samples: int = 1,
            output_format: Literal["pdb", "mmcif"] = "mmcif", num_workers: int = 2, override: bool = False,
            use_kernels: bool = True, seed: Optional[int] = None) -> None:
    """Run predictions with Boltz-1."""
    # If cpu, write a friendly warning
    if accelerator == "cpu":
        msg = "Running on CPU, this will be slow. Consider using a GPU."
        click.echo(msg)

    # Set no grad
    torch.set_grad_enabled(False)

    # Ignore matmul precision warning
    torch.set_float32_matmul_precision("highest")

    # Set seed if desired
    if seed is not None:
        seed_everything(seed)

    # Set cache path
    cache = Path(cache).expanduser()
    cache.mkdir(parents=True, exist_ok=True)

    # Create output directories
    data = Path(data).expanduser()
    out_dir = Path(out_dir).expanduser()
    out_dir = out_dir / f"boltz_results_{data.stem}"
    out_dir.mkdir(parents=True, exist_ok=True)

    # Download necessary data and model
    download(cache)

    # Set up trainer
    strategy = "auto"
    if (isinstance(devices, int) and devices > 1) or (isinstance(devices, list) and len(devices) > 1):
        strategy = DDPStrategy()
        if len(list((out_dir / "processed" / "structures").glob("*.npz"))) < devices:
            msg = "Number of requested devices is greater than the number of predictions."
            raise ValueError(msg)

    # Load processed data
    processed_dir = out_dir / "processed"
    data_module = BoltzInferenceDataModule(
        manifest=processed_dir / "manifest.json",
        target_dir=processed_dir / "structures",
        msa_dir=processed_dir / "msa",
        num_workers=num_workers,
    )

    # Load model
    if checkpoint is None:
        checkpoint = cache / "boltz1_conf.ckpt"

    predict_args = {
        "recycling_steps": recycling_steps,
        "sampling_steps": sampling_steps,
        "diffusion_samples": diffusion_samples,
        "write_confidence_summary": True,
        "write_full_pae": False,
        "write_full_pde": False,
    }
    model_module: Boltz1 = Boltz1.load_from_checkpoint(
        checkpoint,
        strict=True,
        predict_args=predict_args,
        map_location="cpu",
        diffusion_process_args=asdict(BoltzDiffusionParams()),
        ema=False,
        use_kernels=use_kernels,
    )
    model_module.eval()

    # Create prediction writer
    pred_writer = BoltzWriter(
        data_dir=processed_dir / "structures",
        output_dir=out_dir / "predictions",
        output_format=output_format,
    )

    trainer = Trainer(
        default_root_dir=out_dir,
        strategy=strategy,
        callbacks=[pred_writer],
        accelerator=accelerator,
        devices=devices,
        precision=32,
    )

    # Compute predictions
    trainer.predict(model_module, datamodule=data_module, return_predictions=False)


if __name__ == "__main__":
    cli()
