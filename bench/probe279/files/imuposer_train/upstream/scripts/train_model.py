r"""
Train the IMUPoser LSTM for one device combination (lw_rp_h, rw_lp, ...).

    python train_model.py --combo_id lw_rp_h --experiment IMUPoserGlobalModel
    python train_model.py --combo_id global --experiment IMUPoserGlobalModel --gpu 1 --fast_dev_run
"""
import argparse
import os

import torch
import pytorch_lightning as pl
from pytorch_lightning.callbacks import ModelCheckpoint, EarlyStopping, LearningRateMonitor
from pytorch_lightning.loggers import WandbLogger, CSVLogger

from imuposer.config import Config, amass_combos
from imuposer.models.utils import get_model
from imuposer.datasets.utils import get_datamodule


def get_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--combo_id", default="global", help="device combination, or 'global' to sample all")
    parser.add_argument("--experiment", default="IMUPoserGlobalModel")
    parser.add_argument("--fast_dev_run", action="store_true")
    parser.add_argument("--gpu", type=int, default=0)
    parser.add_argument("--no_wandb", action="store_true")
    parser.add_argument("--mixed", action="store_true", help="16-bit mixed precision")
    parser.add_argument("--max_epochs", type=int, default=1000)
    parser.add_argument("--eval_ckpt", default=None, help="only evaluate this checkpoint on all combos")
    return parser


@torch.no_grad()
def evaluate_combos(config, ckpt_path, combos=None):
    r"""
    Evaluate one checkpoint on every device combination of the DIP-IMU test split.
    Reports the mean per-joint angular error (deg) and joint position error (cm).
    """
    from imuposer.evaluation import PoseEvaluator
    combos = combos or amass_combos
    model = get_model(config)
    state = torch.load(ckpt_path, map_location="cuda:0")
    model.load_state_dict(state["state_dict"] if "state_dict" in state else state)
    model = model.to(config.device).eval()
    evaluator = PoseEvaluator(config)

    results = {}
    for combo_id, joints_set in combos.items():
        config.joints_set = joints_set
        datamodule = get_datamodule(config)
        datamodule.setup("test")
        errs = []
        for batch in datamodule.test_dataloader():
            imu_inputs, target_pose, input_lengths, _ = batch
            imu_inputs = imu_inputs.to(config.device)
            target_pose = target_pose.to(config.device)
            pred_pose = model(imu_inputs, input_lengths)
            for i, l in enumerate(input_lengths.tolist()):
                errs.append(evaluator.eval(pred_pose[i, :l], target_pose[i, :l]))
        errs = torch.stack(errs).mean(dim=0)
        results[combo_id] = errs
        print(f"{combo_id:>8s}: angle {errs[0]:.2f} deg | joint {errs[1]:.2f} cm | jitter {errs[2]:.2f}")
    return results


def main():
    args = get_parser().parse_args()
    if args.eval_ckpt:
        config = Config(experiment=None, model="GlobalModelIMUPoser", project_root_dir="../../",
                        normalize="no_translation", r6d=True, loss_type="mse", mkdir=False, gpu=args.gpu)
        evaluate_combos(config, args.eval_ckpt)
        return
    pl.seed_everything(Config.torch_seed, workers=True)
    # Ampere tensor cores: trade a little fp32 precision for speed
    torch.set_float32_matmul_precision("medium")

    joints_set = None if args.combo_id == "global" else amass_combos[args.combo_id]
    config = Config(experiment=f"{args.experiment}_{args.combo_id}", model="GlobalModelIMUPoser",
                    project_root_dir="../../", joints_set=joints_set, normalize="no_translation",
                    r6d=True, loss_type="mse", use_joint_loss=True, gpu=args.gpu)

    # instantiate model and data
    model = get_model(config)
    datamodule = get_datamodule(config)
    checkpoint_path = config.checkpoint_path

    if args.no_wandb:
        logger = CSVLogger(save_dir=checkpoint_path)
    else:
        logger = WandbLogger(project=config.experiment, save_dir=checkpoint_path)

    early_stopping_callback = EarlyStopping(monitor="validation_step_loss", mode="min", verbose=False,
                                            min_delta=0.00001, patience=5)
    checkpoint_callback = ModelCheckpoint(monitor="validation_step_loss", mode="min", verbose=False,
                                          save_top_k=5, dirpath=checkpoint_path, save_weights_only=True,
                                          filename='epoch={epoch}-val_loss={validation_step_loss:.5f}')
    lr_monitor = LearningRateMonitor(logging_interval="epoch")

    trainer = pl.Trainer(fast_dev_run=args.fast_dev_run, logger=logger, max_epochs=args.max_epochs,
                         accelerator=config.accelerator, devices=[args.gpu],
                         precision="16-mixed" if args.mixed else 32,
                         callbacks=[early_stopping_callback, checkpoint_callback, lr_monitor],
                         deterministic=True)

    print(f"Training {config.model} on {torch.cuda.get_device_name(args.gpu)} -> {checkpoint_path}")
    trainer.fit(model, datamodule=datamodule)

    with open(checkpoint_path / "best_model.txt", "w") as f:
        f.write(f"{checkpoint_callback.best_model_path}\n\n{checkpoint_callback.best_k_models}")


if __name__ == "__main__":
    main()
