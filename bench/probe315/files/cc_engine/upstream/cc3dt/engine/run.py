"""CC-3DT command line entry point (pytorch-lightning).

    python -m cc3dt.engine.run fit  --config configs/cc3dt/cc3dt_frcnn_r101_fpn_nusc.py --gpus 8
    python -m cc3dt.engine.run test --config configs/cc3dt/cc3dt_frcnn_r101_fpn_nusc.py --gpus 8 \
        --ckpt checkpoints/cc3dt_frcnn_r101_fpn_24e_nusc.ckpt
"""
from __future__ import annotations

import logging
import os
import warnings
from argparse import ArgumentParser, Namespace

import pytorch_lightning as pl
import torch
from pytorch_lightning.callbacks import LearningRateMonitor, ModelCheckpoint, RichProgressBar
from pytorch_lightning.loggers import TensorBoardLogger, WandbLogger
from pytorch_lightning.strategies import DDPStrategy
from pytorch_lightning.utilities import rank_zero_info

from cc3dt.config import load_config
from cc3dt.data import CC3DTDataModule
from cc3dt.model import CC3DTModule

# keep the NCCL watchdog from hanging forever when one rank dies during eval
os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")
warnings.filterwarnings("ignore", ".*does not have many workers.*")

logger = logging.getLogger(__name__)


def default_argument_parser() -> ArgumentParser:
    parser = ArgumentParser(description="CC-3DT: Panoramic 3D Object Tracking via Cross-Camera Fusion")
    parser.add_argument("action", choices=["fit", "test", "predict"], help="what to run")
    parser.add_argument("--config", required=True, help="path to the python config")
    parser.add_argument("--gpus", type=int, default=1, help="number of GPUs per node")
    parser.add_argument("--nodes", type=int, default=1, help="number of nodes")
    parser.add_argument("--ckpt", type=str, default=None, help="checkpoint to test / finetune from")
    parser.add_argument("--resume", action="store_true", help="resume the trainer state from --ckpt")
    parser.add_argument("--work-dir", type=str, default="vis4d-workspace")
    parser.add_argument("--exp-name", type=str, default=None)
    parser.add_argument("--precision", type=str, default="16-mixed", help="32, 16-mixed or bf16-mixed")
    parser.add_argument("--tf32", action="store_true", help="allow TF32 matmuls on Ampere GPUs")
    parser.add_argument("--benchmark", action="store_true", help="cudnn.benchmark")
    parser.add_argument("--wandb", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cfg-options", nargs="*", default=[], help="key=value overrides")
    return parser


def setup_callbacks(cfg, args: Namespace, output_dir: str) -> list[pl.Callback]:
    callbacks: list[pl.Callback] = [
        LearningRateMonitor(logging_interval="step"),
        ModelCheckpoint(
            dirpath=os.path.join(output_dir, "checkpoints"),
            filename="{epoch:02d}",
            save_last=True,
            save_top_k=-1,
            every_n_epochs=cfg.checkpoint_period,
        ),
    ]
    if cfg.get("rich_progress", True):
        callbacks.append(RichProgressBar())
    return callbacks


def setup_backends(args: Namespace) -> None:
    """Global torch switches."""
    if args.tf32 and torch.cuda.get_device_capability()[0] >= 8:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        rank_zero_info("TF32 enabled for matmul / cudnn")
    torch.backends.cudnn.benchmark = args.benchmark
    torch.set_float32_matmul_precision("high" if args.tf32 else "highest")


def setup_trainer(cfg, args: Namespace) -> pl.Trainer:
    exp_name = args.exp_name or os.path.splitext(os.path.basename(args.config))[0]
    output_dir = os.path.join(args.work_dir, exp_name)
    os.makedirs(output_dir, exist_ok=True)

    if args.wandb:
        exp_logger = WandbLogger(project="cc3dt", name=exp_name, save_dir=output_dir)
    else:
        exp_logger = TensorBoardLogger(save_dir=args.work_dir, name=exp_name, default_hp_metric=False)

    if args.gpus > 1 or args.nodes > 1:
        strategy = DDPStrategy(
            find_unused_parameters=cfg.get("find_unused_parameters", False),
            process_group_backend="nccl",
            static_graph=False,
        )
    else:
        strategy = "auto"

    trainer = pl.Trainer(
        accelerator="gpu",
        devices=args.gpus,
        num_nodes=args.nodes,
        strategy=strategy,
        precision=args.precision,
        max_epochs=cfg.max_epochs,
        sync_batchnorm=cfg.get("sync_bn", False) and (args.gpus * args.nodes > 1),
        gradient_clip_val=cfg.get("grad_clip", 35.0),
        check_val_every_n_epoch=cfg.get("val_interval", cfg.max_epochs),
        log_every_n_steps=50,
        logger=exp_logger,
        callbacks=setup_callbacks(cfg, args, output_dir),
        deterministic=False,
        benchmark=args.benchmark,
        use_distributed_sampler=False,  # the data module builds its own sequence samplers
    )
    return trainer


def log_environment(args: Namespace) -> None:
    rank_zero_info(f"torch {torch.__version__}, lightning {pl.__version__}")
    if torch.cuda.is_available():
        rank_zero_info(
            f"CUDA {torch.version.cuda}, {torch.cuda.device_count()} x {torch.cuda.get_device_name(0)}, "
            f"cudnn {torch.backends.cudnn.version()}"
        )
    rank_zero_info(f"launching {args.gpus} GPU(s) x {args.nodes} node(s)")


def main(args: Namespace) -> None:
    pl.seed_everything(args.seed, workers=True)
    setup_backends(args)
    log_environment(args)

    cfg = load_config(args.config, args.cfg_options)
    data_module = CC3DTDataModule(cfg.data)
    model = CC3DTModule(cfg.model, cfg.optim)

    if args.ckpt is not None and not args.resume:
        # load weights only; detector checkpoints come from the vis4d model zoo
        state = torch.load(args.ckpt, map_location="cpu")
        state = state.get("state_dict", state)
        missing, unexpected = model.load_state_dict(state, strict=False)
        rank_zero_info(f"loaded {args.ckpt}: {len(missing)} missing, {len(unexpected)} unexpected keys")

    trainer = setup_trainer(cfg, args)

    ckpt_path = args.ckpt if args.resume else None
    if args.action == "fit":
        trainer.fit(model, datamodule=data_module, ckpt_path=ckpt_path)
    elif args.action == "test":
        trainer.test(model, datamodule=data_module)
    else:
        trainer.predict(model, datamodule=data_module)


if __name__ == "__main__":
    main(default_argument_parser().parse_args())
