import os
from os.path import join as opj
import omegaconf
from importlib import import_module
import argparse

import torch
from torch.utils.data import DataLoader
import pytorch_lightning as pl
from pytorch_lightning.callbacks import ModelCheckpoint, LearningRateMonitor
from pytorch_lightning.strategies import DDPStrategy

from cldm.logger import ImageLogger
from cldm.model import create_model, load_state_dict


def build_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config_name", type=str, default="VITONHD")
    parser.add_argument("--transform_size", type=str, nargs="+", default=["crop"])
    parser.add_argument("--transform_color", type=str, nargs="+", default=["hflip", "bright", "contrast"])
    parser.add_argument("--use_atv_loss", action="store_true")
    parser.add_argument("--resume_path", type=str, default="./ckpts/VITONHD_PBE_pose.ckpt")
    parser.add_argument("--vae_load_path", type=str, default="./ckpts/VITONHD_VAE_finetuning.ckpt")
    parser.add_argument("--no_strict_load", action="store_true")
    parser.add_argument("--batch_size", "-bs", type=int, default=32)
    parser.add_argument("--data_root_dir", type=str, default="./DATA/zalando-hd-resized")
    parser.add_argument("--save_root_dir", type=str, default="./logs")
    parser.add_argument("--save_name", type=str, default="dummy")
    parser.add_argument("--logger_freq", type=int, default=1000)
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    parser.add_argument("--sd_locked", type=bool, default=True)
    parser.add_argument("--only_mid_control", type=bool, default=False)
    parser.add_argument("--img_H", type=int, default=512)
    parser.add_argument("--img_W", type=int, default=384)
    parser.add_argument("--valid_epoch_freq", type=int, default=1000)
    parser.add_argument("--save_every_n_epochs", type=int, default=1)
    parser.add_argument("--max_epochs", type=int, default=1000)
    parser.add_argument("--accumulate_grad_batches", type=int, default=1)
    parser.add_argument("--imageclip_trainable", action="store_false")
    parser.add_argument("--n_gpus", type=int, default=torch.cuda.device_count())
    parser.add_argument("--precision", type=int, default=16)
    args = parser.parse_args()
    args.seed = 23
    return args


def build_config(args, config_path=None):
    if config_path is None:
        config_path = opj("./configs", f"{args.config_name}.yaml")
    config = omegaconf.OmegaConf.load(config_path)
    config.model.params.setdefault("use_VAEdownsample", False)
    config.model.params.setdefault("use_imageCLIP", False)
    config.model.params.setdefault("use_lastzc", False)
    config.model.params.setdefault("use_pbe_weight", False)
    config.model.params.setdefault("u_cond_percent", 0.0)
    config.model.params.setdefault("img_H", args.img_H)
    config.model.params.setdefault("img_W", args.img_W)
    if not args.imageclip_trainable:
        config.model.params.cond_stage_trainable = False
    config.model.params.use_atv_loss = args.use_atv_loss
    return config


def main(args):
    pl.seed_everything(args.seed)
    torch.backends.cudnn.benchmark = True
    # TF32 on Ampere: keep float32 matmuls fast without touching the fp16 path
    torch.set_float32_matmul_precision("high")

    save_dir = opj(args.save_root_dir, args.save_name)
    os.makedirs(save_dir, exist_ok=True)
    config = build_config(args)
    omegaconf.OmegaConf.save(config, opj(save_dir, "config.yaml"))

    model = create_model(config_path=None, config=config)
    model.load_state_dict(load_state_dict(args.resume_path, location="cpu"), strict=not args.no_strict_load)
    if args.vae_load_path is not None:
        state_dict = load_state_dict(args.vae_load_path, location="cpu")
        new_state_dict = {}
        for k, v in state_dict.items():
            if "loss." not in k:
                new_state_dict[k] = v.clone()
        model.first_stage_model.load_state_dict(new_state_dict)
    model.learning_rate = args.learning_rate
    model.sd_locked = args.sd_locked
    model.only_mid_control = args.only_mid_control

    train_dataset = getattr(import_module("dataset"), config.dataset_name)(
        data_root_dir=args.data_root_dir,
        img_H=args.img_H,
        img_W=args.img_W,
        transform_size=args.transform_size,
        transform_color=args.transform_color,
    )
    valid_paired_dataset = getattr(import_module("dataset"), config.dataset_name)(
        data_root_dir=args.data_root_dir,
        img_H=args.img_H,
        img_W=args.img_W,
        is_test=True,
        is_paired=True,
        is_sorted=True,
    )
    train_dataloader = DataLoader(train_dataset, num_workers=4, batch_size=args.batch_size, shuffle=True, pin_memory=True)
    valid_paired_dataloader = DataLoader(valid_paired_dataset, num_workers=4, batch_size=args.batch_size, shuffle=False)

    img_logger = ImageLogger(batch_frequency=args.logger_freq)
    cp_callback = ModelCheckpoint(
        dirpath=opj(save_dir, "models"),
        filename="[Train]_[{epoch}]_[{train_loss_epoch:.04f}]",
        monitor="train_loss_epoch",
        save_top_k=-1,
        every_n_epochs=args.save_every_n_epochs,
    )
    lr_monitor = LearningRateMonitor(logging_interval="step")

    print(f"training on {args.n_gpus} x {torch.cuda.get_device_name(0)}")
    trainer = pl.Trainer(
        accelerator="gpu",
        devices=args.n_gpus,
        strategy=DDPStrategy(find_unused_parameters=True),
        precision=args.precision,
        accumulate_grad_batches=args.accumulate_grad_batches,
        callbacks=[img_logger, cp_callback, lr_monitor],
        max_epochs=args.max_epochs,
        check_val_every_n_epoch=args.valid_epoch_freq,
        num_sanity_val_steps=0,
        default_root_dir=save_dir,
    )
    trainer.fit(model, train_dataloader, valid_paired_dataloader)


if __name__ == "__main__":
    args = build_args()
    main(args)
