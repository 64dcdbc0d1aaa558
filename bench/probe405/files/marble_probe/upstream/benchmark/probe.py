"""Train / evaluate a downstream prober on top of frozen (or pre-extracted) representations.

    python . probe -c configs/mert/MERT-v1-95M/MTT.yaml
    python . probe -c configs/mert/MERT-v1-95M/GS.yaml -o "trainer.devices=2,dataloader.batch_size.train=32"
"""
import argparse
import os
import time

import torch
import wandb
import pytorch_lightning as pl
from pytorch_lightning import loggers as pl_loggers
from pytorch_lightning.callbacks import EarlyStopping, LearningRateMonitor, ModelCheckpoint

import benchmark as bench
from benchmark.utils.config_utils import load_config, override_config, print_config, merge_args_to_config


def get_model(args):
    dataset = args.dataset.dataset
    task_type = bench.NAME_TO_TASK_TYPE.get(dataset, "multilabel")
    if task_type == "multilabel":
        return bench.MultiLabelProber(args)
    if task_type == "multiclass":
        return bench.MultiClassProber(args)
    if task_type == "regression":
        return bench.RegressionProber(args)
    if task_type == "sequence":
        return bench.SequenceProber(args)
    raise NotImplementedError(f"unknown task type {task_type} for dataset {dataset}")


def get_dataloaders(args):
    dataset_name = args.dataset.dataset
    DatasetCls = eval(f"bench.{dataset_name}FeatureDataset" if args.dataset.input_type == "feature"
                      else f"bench.{dataset_name}AudioDataset")
    train_dataset = DatasetCls(args, split="train")
    valid_dataset = DatasetCls(args, split="valid")
    test_dataset = DatasetCls(args, split="test")

    collate_fn = getattr(train_dataset, "collate_fn", None)
    train_loader = torch.utils.data.DataLoader(
        train_dataset,
        batch_size=args.dataloader.batch_size.train,
        shuffle=True,
        num_workers=args.dataloader.num_workers,
        collate_fn=collate_fn,
        pin_memory=True,
        persistent_workers=args.dataloader.num_workers > 0,
    )
    valid_loader = torch.utils.data.DataLoader(
        valid_dataset,
        batch_size=args.dataloader.batch_size.valid,
        shuffle=False,
        num_workers=args.dataloader.num_workers,
        collate_fn=collate_fn,
    )
    test_loader = torch.utils.data.DataLoader(
        test_dataset,
        batch_size=args.dataloader.batch_size.test,
        shuffle=False,
        num_workers=args.dataloader.num_workers,
        collate_fn=collate_fn,
    )
    return train_loader, valid_loader, test_loader


def get_logger(args):
    if args.logger.wandb_off:
        return pl_loggers.CSVLogger(save_dir=os.path.dirname(args.checkpoint.save_best_to))
    return pl_loggers.WandbLogger(
        project=args.logger.wandb_proj_name,
        name=args.logger.wandb_run_name,
        save_dir=args.logger.wandb_dir,
        config=vars(args) if isinstance(args, argparse.Namespace) else None,
    )


def main(config):
    pl.seed_everything(config.trainer.seed)
    # probes are tiny; TF32 matmuls are fine and make feature-mode probing much faster on Ampere
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    logger = get_logger(config)
    model = get_model(config)
    train_loader, valid_loader, test_loader = get_dataloaders(config)

    monitor = config.logger.monitor
    mode = "min" if "loss" in monitor else "max"
    early_stop_callback = EarlyStopping(
        monitor=monitor, min_delta=0.0, patience=config.scheduler.earlystop_patience, verbose=True, mode=mode,
    )
    checkpoint_callback = ModelCheckpoint(
        monitor=monitor,
        dirpath=os.path.dirname(config.checkpoint.save_best_to),
        filename=os.path.basename(config.checkpoint.save_best_to).replace(".ckpt", ""),
        save_top_k=1,
        mode=mode,
    )
    lr_monitor = LearningRateMonitor(logging_interval="epoch")

    trainer = pl.Trainer(
        accelerator=config.trainer.accelerator,
        devices=config.trainer.devices,
        strategy="ddp_find_unused_parameters_true" if config.trainer.devices > 1 else config.trainer.strategy,
        precision=config.trainer.precision,
        max_epochs=config.trainer.max_epochs,
        accumulate_grad_batches=config.trainer.accumulate_grad_batches,
        check_val_every_n_epoch=config.trainer.check_val_every_n_epoch,
        gradient_clip_val=config.trainer.gradient_clip_val,
        deterministic=config.trainer.deterministic,
        fast_dev_run=config.trainer.fast_dev_run,
        logger=logger,
        callbacks=[early_stop_callback, checkpoint_callback, lr_monitor],
    )

    t0 = time.time()
    if not config.trainer.eval_only:
        trainer.fit(model, train_loader, valid_loader)
        print(f"training took {time.time() - t0:.1f}s")
        best = checkpoint_callback.best_model_path
    else:
        best = config.checkpoint.save_best_to

    # reload the best probe on CPU first; Lightning moves it to the accelerator for testing
    ckpt = torch.load(best, map_location="cpu")
    model.load_state_dict(ckpt["state_dict"])
    trainer.test(model, dataloaders=test_loader)

    if not config.logger.wandb_off:
        wandb.finish()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("-c", "--config", type=str, required=True)
    parser.add_argument("-o", "--override", type=str, default=None)
    args = parser.parse_args()
    config = load_config(args.config, namespace=True)
    if args.override is not None and args.override.lower() != "none":
        override_config(args.override, config)
    config = merge_args_to_config(args, config)
    print_config(config)
    main(config)
