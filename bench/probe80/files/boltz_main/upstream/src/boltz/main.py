import multiprocessing
import os
import pickle
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

from boltz.data import const
from boltz.data.module.inferencev2 import Boltz2InferenceDataModule
from boltz.data.mol import load_canonicals
from boltz.data.msa.mmseqs2 import run_mmseqs2
from boltz.data.parse.a3m import parse_a3m
from boltz.data.parse.csv import parse_csv
from boltz.data.parse.fasta import parse_fasta
from boltz.data.parse.yaml import parse_yaml
from boltz.data.types import MSA, Manifest, Record
from boltz.data.write.writer import BoltzWriter
from boltz.model.models.boltz2 import Boltz2

CCD_URL = "https://huggingface.co/boltz-community/boltz-1/resolve/main/ccd.pkl"
MOL_URL = "https://huggingface.co/boltz-community/boltz-2/resolve/main/mols.tar"
BOLTZ2_URL_WITH_FALLBACK = [
    "https://model-gateway.boltz.bio/boltz2_conf.ckpt",
    "https://huggingface.co/boltz-community/boltz-2/resolve/main/boltz2_conf.ckpt",
]


@dataclass
class BoltzProcessedInput:
    """Processed input data."""

    manifest: Manifest
    targets_dir: Path
    msa_dir: Path
    constraints_dir: Optional[Path] = None
    template_dir: Optional[Path] = None
    extra_mols_dir: Optional[Path] = None


@dataclass
class PairformerArgsV2:
    """Pairformer arguments."""

    num_blocks: int = 64
    num_heads: int = 16
    dropout: float = 0.0
    activation_checkpointing: bool = False
    offload_to_cpu: bool = False
    v2: bool = True


@dataclass
class MSAModuleArgs:
    """MSA module arguments."""

    msa_s: int = 64
    msa_blocks: int = 4
    msa_dropout: float = 0.0
    z_dropout: float = 0.0
    use_paired_feature: bool = True
    pairwise_head_width: int = 32
    pairwise_num_heads: int = 4
    activation_checkpointing: bool = False
    offload_to_cpu: bool = False
    subsample_msa: bool = False
    num_subsampled_msa: int = 1024


@dataclass
class BoltzDiffusionParams:
    """Diffusion process parameters."""

    gamma_0: float = 0.8
    gamma_min: float = 1.0
    noise_scale: float = 1.003
    rho: float = 7
    step_scale: float = 1.5
    sigma_min: float = 0.0001
    sigma_max: float = 160.0
    sigma_data: float = 16.0
    P_mean: float = -1.2
    P_std: float = 1.5
    coordinate_augmentation: bool = True
    alignment_reverse_diff: bool = True
    synchronize_sigmas: bool = True


def download_boltz2(cache: Path) -> None:
    """Download the CCD molecules and the Boltz-2 checkpoint into `cache` if missing."""
    mols = cache / "mols"
    tar_mols = cache / "mols.tar"
    if not tar_mols.exists():
        click.echo(f"Downloading the CCD data to {tar_mols}. This may take a bit of time. You may change the cache directory with the --cache flag.")
        urllib.request.urlretrieve(MOL_URL, str(tar_mols))  # noqa: S310
    if not mols.exists():
        click.echo(f"Extracting the CCD data to {mols}. This may take a bit of time.")
        with tarfile.open(str(tar_mols), "r") as tar:
            tar.extractall(cache)  # noqa: S202

    model = cache / "boltz2_conf.ckpt"
    if not model.exists():
        click.echo(f"Downloading the Boltz-2 weights to {model}. You may change the cache directory with the --cache flag.")
        for i, url in enumerate(BOLTZ2_URL_WITH_FALLBACK):
            try:
                urllib.request.urlretrieve(url, str(model))  # noqa: S310
                break
            except Exception as e:  # noqa: BLE001
                if i == len(BOLTZ2_URL_WITH_FALLBACK) - 1:
                    msg = f"Failed to download model from all URLs. Last error: {e}"
                    raise RuntimeError(msg) from e
                continue


def get_cache_path() -> str:
    env_cache = os.environ.get("BOLTZ_CACHE")
    if env_cache:
        resolved_cache = Path(env_cache).expanduser().resolve()
        if not resolved_cache.is_absolute():
            msg = f"BOLTZ_CACHE must be an absolute path, got: {env_cache}"
            raise ValueError(msg)
        return str(resolved_cache)
    return str(Path("~/.boltz").expanduser())


def check_inputs(data: Path) -> list[Path]:
    """Collect the .fasta / .yaml inputs (a single file or a directory of them)."""
    click.echo("Checking input data.")
    if data.is_dir():
        data: list[Path] = list(data.glob("*"))
        for d in data:
            if d.is_dir():
                msg = f"Found directory {d} instead of .fasta or .yaml."
                raise RuntimeError(msg)
            if d.suffix not in (".fa", ".fas", ".fasta", ".yml", ".yaml"):
                msg = f"Unable to parse filetype {d.suffix}, please provide a .fasta or .yaml file."
                raise RuntimeError(msg)
    else:
        data = [data]
    return data


def filter_inputs_structure(manifest: Manifest, outdir: Path, override: bool = False) -> Manifest:
    """Drop records whose prediction already exists in `outdir` (unless override)."""
    pred_dir = outdir / "predictions"
    if pred_dir.exists():
        existing = {d.name for d in pred_dir.iterdir() if d.is_dir()}
    else:
        existing = set()

    if existing and not override:
        manifest = Manifest([r for r in manifest.records if r.id not in existing])
        click.echo(f"Found some existing predictions ({len(existing)}), skipping them; use --override to redo.")
    elif existing and override:
        click.echo("Found existing predictions, will override.")
    return manifest


@click.group()
def cli() -> None:
    """Boltz."""
    return


@cli.command()
@click.argument("data", type=click.Path(exists=True))
@click.option("--out_dir", type=click.Path(exists=False), default="./", help="The path where to save the predictions.")
@click.option("--cache", type=click.Path(exists=False), default=get_cache_path,
              help="The directory where to download the data and model. Default is ~/.boltz, or $BOLTZ_CACHE if set.")
@click.option("--checkpoint", type=click.Path(exists=True), default=None, help="An optional checkpoint, will use the provided Boltz-2 model by default.")
@click.option("--devices", type=int, default=1, help="The number of devices to use for prediction. Default is 1.")
@click.option("--accelerator", type=click.Choice(["gpu", "cpu", "tpu"]), default="gpu",
              help="The accelerator to use for prediction. Default is gpu.")
@click.option("--recycling_steps", type=int, default=3, help="The number of recycling steps to use for prediction. Default is 3.")
@click.option("--sampling_steps", type=int, default=200, help="The number of sampling steps to use for prediction. Default is 200.")
@click.option("--diffusion_samples", type=int, default=1, help="The number of diffusion samples to use for prediction. Default is 1.")
@click.option("--max_parallel_samples", type=int, default=5, help="The maximum number of samples to predict in parallel. Default is 5.")
@click.option("--step_scale", type=float, default=None, help="The step size is related to the temperature at which the diffusion process samples the distribution.")
@click.option("--write_full_pae", type=bool, is_flag=True, help="Whether to dump the pae into a npz file. Default is True.")
@click.option("--output_format", type=click.Choice(["pdb", "mmcif"]), default="mmcif", help="The output format to use for the predictions. Default is mmcif.")
@click.option("--num_workers", type=int, default=2, help="The number of dataloader workers to use for prediction. Default is 2.")
@click.option("--override", is_flag=True, help="Whether to override existing found predictions. Default is False.")
@click.option("--seed", type=int, default=None, help="Seed to use for random number generator. Default is None (no seeding).")
@click.option("--use_msa_server", is_flag=True, help="Whether to use the MMSeqs2 server for MSA generation. Default is False.")
@click.option("--msa_server_url", type=str, default="https://api.colabfold.com", help="MSA server url. Used only if --use_msa_server is set.")
@click.option("--use_potentials", is_flag=True, help="Whether to run the original Boltz-2 model using inference time potentials.")
@click.option("--no_kernels", is_flag=True,
              help="Whether to disable the cuEquivariance triangle kernels (needed on pre-Ampere GPUs). Default False.")
@click.option("--write_embeddings", is_flag=True, help="Whether to dump the s and z embeddings into a npz file. Default is False.")
def predict(  # noqa: C901, PLR0915, PLR0912
    data: str,
    out_dir: str,
    cache: str = "~/.boltz",
    checkpoint: Optional[str] = None,
    devices: int = 1,
    accelerator: str = "gpu",
    recycling_steps: int = 3,
    sampling_steps: int = 200,
    diffusion_samples: int = 1,
    max_parallel_samples: Optional[int] = None,
    step_scale: Optional[float] = None,
    write_full_pae: bool = False,
    output_format: Literal["pdb", "mmcif"] = "mmcif",
    num_workers: int = 2,
    override: bool = False,
    seed: Optional[int] = None,
    use_msa_server: bool = False,
    msa_server_url: str = "https://api.colabfold.com",
    use_potentials: bool = False,
    no_kernels: bool = False,
    write_embeddings: bool = False,
) -> None:
    """Run predictions with Boltz."""
    # If cpu, write a friendly warning
    if accelerator == "cpu":
        msg = "Running on CPU, this will be slow. Consider using a GPU."
        click.echo(msg)

    # Supress some lightning warnings
    warnings.filterwarnings("ignore", ".*that has Tensor Cores. To properly utilize them.*")

    # Set no grad
    torch.set_grad_enabled(False)

    # Ignore matmul precision warning
    torch.set_float32_matmul_precision("highest")

    # Set rdkit pickle logic
    Chem.SetDefaultPickleProperties(Chem.PropertyPickleOptions.AllProps)

    # Set seed if desired
    if seed is not None:
        seed_everything(seed)

    for key in ["CUEQ_DEFAULT_CONFIG", "CUEQ_DISABLE_AOT_TUNING"]:
        # Disable kernel tuning by default,
        # but do not modify envvar if already set by caller
        os.environ[key] = os.environ.get(key, "1")

    # Set cache path
    cache = Path(cache).expanduser()
    cache.mkdir(parents=True, exist_ok=True)

    # Create output directories
    data = Path(data).expanduser()
    out_dir = Path(out_dir).expanduser()
    out_dir = out_dir / f"boltz_results_{data.stem}"
    out_dir.mkdir(parents=True, exist_ok=True)

    # Download necessary data and model
    download_boltz2(cache)

    # Validate inputs
    data = check_inputs(data)

    # Check method
    if step_scale is None:
        step_scale = 1.5

    # Process inputs
    ccd_path = cache / "ccd.pkl"
    mol_dir = cache / "mols"
    processed_dir = out_dir / "processed"
    manifest = Manifest.load(processed_dir / "manifest.json")

    # Filter out existing predictions
    filtered_manifest = filter_inputs_structure(manifest=manifest, outdir=out_dir, override=override)

    # Load processed data
    processed = BoltzProcessedInput(
        manifest=filtered_manifest,
        targets_dir=processed_dir / "structures",
        msa_dir=processed_dir / "msa",
        constraints_dir=(processed_dir / "constraints") if (processed_dir / "constraints").exists() else None,
        template_dir=(processed_dir / "templates") if (processed_dir / "templates").exists() else None,
        extra_mols_dir=(processed_dir / "mols") if (processed_dir / "mols").exists() else None,
    )

    # Set up trainer
    strategy = "auto"
    if (isinstance(devices, int) and devices > 1) or (isinstance(devices, list) and len(devices) > 1):
        start_method = "fork" if platform.system() != "win32" and platform.system() != "Windows" else "spawn"
        strategy = DDPStrategy(start_method=start_method)
        if len(filtered_manifest.records) < devices:
            msg = "Number of requested devices is greater than the number of predictions, taking the minimum."
            click.echo(msg)
            if isinstance(devices, list):
                devices = devices[: max(1, len(filtered_manifest.records))]
            else:
                devices = max(1, min(len(filtered_manifest.records), devices))

    # Create data module
    data_module = Boltz2InferenceDataModule(
        manifest=processed.manifest,
        target_dir=processed.targets_dir,
        msa_dir=processed.msa_dir,
        mol_dir=mol_dir,
        num_workers=num_workers,
        constraints_dir=processed.constraints_dir,
        template_dir=processed.template_dir,
        extra_mols_dir=processed.extra_mols_dir,
    )

    # Load model
    if checkpoint is None:
        checkpoint = cache / "boltz2_conf.ckpt"

    predict_args = {
        "recycling_steps": recycling_steps,
        "sampling_steps": sampling_steps,
        "diffusion_samples": diffusion_samples,
        "max_parallel_samples": max_parallel_samples,
        "write_confidence_summary": True,
        "write_full_pae": write_full_pae,
        "write_full_pde": False,
    }

    diffusion_params = BoltzDiffusionParams()
    diffusion_params.step_scale = step_scale
    pairformer_args = PairformerArgsV2()
    msa_args = MSAModuleArgs(subsample_msa=True, num_subsampled_msa=1024)

    model_module = Boltz2.load_from_checkpoint(
        checkpoint,
        strict=True,
        predict_args=predict_args,
        map_location="cpu",
        diffusion_process_args=asdict(diffusion_params),
        ema=False,
        use_kernels=not no_kernels,
        pairformer_args=asdict(pairformer_args),
        msa_args=asdict(msa_args),
        steering_args={"fk_steering": use_potentials, "physical_guidance_update": use_potentials},
    )
    model_module.eval()

    # Create prediction writer
    pred_writer = BoltzWriter(
        data_dir=processed.targets_dir,
        output_dir=out_dir / "predictions",
        output_format=output_format,
        boltz2=True,
        write_embeddings=write_embeddings,
    )

    trainer = Trainer(
        default_root_dir=out_dir,
        strategy=strategy,
        callbacks=[pred_writer],
        accelerator=accelerator,
        devices=devices,
        precision="bf16-mixed",
    )

    # Compute structure predictions
    trainer.predict(model_module, datamodule=data_module, return_predictions=False)


if __name__ == "__main__":
    cli()
