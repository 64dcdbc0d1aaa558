import argparse
import os
import warnings

import pandas as pd
import torch
import yaml

import pytorch_lightning as pl
from pytorch_lightning.callbacks import EarlyStopping, ModelCheckpoint, LearningRateMonitor
from pytorch_lightning.loggers import TensorBoardLogger
from pytorch_lightning.strategies import DDPStrategy

from desed_task.dataio import ConcatDatasetBatchSampler
from desed_task.dataio.datasets_atst_sed import StronglyAnnotatedSet, UnlabeledSet, WeakSet
from desed_task.nnet.CRNN_e2e import CRNN
from desed_task.utils.encoder import ManyHotEncoder
from desed_task.utils.schedulers import CosineScheduler

from local.classes_dict import classes_labels
from local.ultra_sed_trainer_stage2 import UltraSEDTrainer
from local.utils import get_param_groups

warnings.filterwarnings("ignore", category=UserWarning)


def single_run(config, log_dir, gpus, checkpoint_resume=None, test_state_dict=None,
               fast_dev_run=False, evaluation=False, callbacks=None):
    config.update({"log_dir": log_dir})

    seed = config["training"]["seed"]
    if seed:
        pl.seed_everything(seed, workers=True)

    encoder = ManyHotEncoder(
        list(classes_labels.keys()),
        audio_len=config["data"]["audio_max_len"],
        frame_len=config["feats"]["n_filters"],
        frame_hop=config["feats"]["hop_length"],
        net_pooling=config["data"]["net_subsample"],
        fs=config["data"]["fs"],
    )

    devtest_df = pd.read_csv(config["data"]["test_tsv"], sep="\t")
    devtest_dataset = StronglyAnnotatedSet(
        config["data"]["test_folder"], devtest_df, encoder,
        return_filename=True, pad_to=config["data"]["audio_max_len"],
    )
    test_dataset = devtest_dataset

    # CRNN with the frame-level ATST encoder (stage 1 weights are loaded inside)
    sed_student = CRNN(**config["net"])
    if config["net"].get("stage1_ckpt"):
        state = torch.load(config["net"]["stage1_ckpt"], map_location="cpu")["state_dict"]
        state = {k.replace("sed_student.", ""): v for k, v in state.items() if k.startswith("sed_student.")}
        missing, unexpected = sed_student.load_state_dict(state, strict=False)
        print("Loaded stage-1 checkpoint, missing: {}, unexpected: {}".format(len(missing), len(unexpected)))

    if test_state_dict is None:
        synth_df = pd.read_csv(config["data"]["synth_tsv"], sep="\t")
        synth_set = StronglyAnnotatedSet(config["data"]["synth_folder"], synth_df, encoder,
                                         pad_to=config["data"]["audio_max_len"])
        strong_df = pd.read_csv(config["data"]["strong_tsv"], sep="\t")
        strong_set = StronglyAnnotatedSet(config["data"]["strong_folder"], strong_df, encoder,
                                          pad_to=config["data"]["audio_max_len"])
        weak_df = pd.read_csv(config["data"]["weak_tsv"], sep="\t")
        train_weak_df = weak_df.sample(frac=config["training"]["weak_split"],
                                       random_state=config["training"]["seed"])
        valid_weak_df = weak_df.drop(train_weak_df.index).reset_index(drop=True)
        train_weak_df = train_weak_df.reset_index(drop=True)
        weak_set = WeakSet(config["data"]["weak_folder"], train_weak_df, encoder,
                           pad_to=config["data"]["audio_max_len"])
        unlabeled_set = UnlabeledSet(config["data"]["unlabeled_folder"], encoder,
                                     pad_to=config["data"]["audio_max_len"])

        synth_df_val = pd.read_csv(config["data"]["synth_val_tsv"], sep="\t")
        synth_val = StronglyAnnotatedSet(config["data"]["synth_val_folder"], synth_df_val, encoder,
                                         return_filename=True, pad_to=config["data"]["audio_max_len"])
        weak_val = WeakSet(config["data"]["weak_folder"], valid_weak_df, encoder,
                           pad_to=config["data"]["audio_max_len"], return_filename=True)

        strong_full_set = torch.utils.data.ConcatDataset([strong_set, synth_set])
        tot_train_data = [strong_full_set, weak_set, unlabeled_set]
        train_dataset = torch.utils.data.ConcatDataset(tot_train_data)

        batch_sizes = config["training"]["batch_size"]
        samplers = [torch.utils.data.RandomSampler(x) for x in tot_train_data]
        batch_sampler = ConcatDatasetBatchSampler(samplers, batch_sizes)
        valid_dataset = torch.utils.data.ConcatDataset([synth_val, weak_val])

        epoch_len = min([
            len(tot_train_data[indx]) // (config["training"]["batch_size"][indx] * config["training"]["accumulate_batches"])
            for indx in range(len(tot_train_data))
        ])

        # layer-wise lr decay for the ATST encoder, plain lr for the CRNN head
        param_groups = get_param_groups(sed_student, config["opt"]["lr_cnn"], config["opt"]["lr_atst"],
                                        layer_decay=config["opt"]["layer_decay"])
        opt = torch.optim.AdamW(param_groups, weight_decay=config["opt"]["weight_decay"])
        total_steps = config["training"]["n_epochs"] * epoch_len
        exp_scheduler = {
            "scheduler": CosineScheduler(opt, warmup_steps=config["training"]["n_epochs_warmup"] * epoch_len,
                                         total_steps=total_steps),
            "interval": "step",
        }
        logger = TensorBoardLogger(os.path.dirname(config["log_dir"]), config["log_dir"].split("/")[-1])
        logger.log_hyperparams(config)
        print(f"experiment dir: {logger.log_dir}")

        if callbacks is None:
            callbacks = [
                EarlyStopping(monitor="val/obj_metric", patience=config["training"]["early_stop_patience"],
                              verbose=True, mode="max"),
                ModelCheckpoint(logger.log_dir, monitor="val/obj_metric", save_top_k=1, mode="max",
                                save_last=True),
                LearningRateMonitor(logging_interval="step"),
            ]
    else:
        train_dataset = valid_dataset = batch_sampler = opt = exp_scheduler = callbacks = None
        logger = True

    sed_trainer = UltraSEDTrainer(
        config, encoder=encoder, sed_student=sed_student, opt=opt,
        train_data=train_dataset, valid_data=valid_dataset, test_data=test_dataset,
        train_sampler=batch_sampler, scheduler=exp_scheduler,
        fast_dev_run=fast_dev_run, evaluation=evaluation,
    )

    if fast_dev_run:
        log_every_n_steps, limit_train_batches, limit_val_batches, limit_test_batches, n_epochs = 1, 2, 2, 2, 3
    else:
        log_every_n_steps, limit_train_batches, limit_val_batches, limit_test_batches = 40, 1.0, 1.0, 1.0
        n_epochs = config["training"]["n_epochs"]

    # "--gpus 0," -> [0]; "--gpus 0,1," -> [0, 1]; "--gpus cpu" for debugging
    if gpus == "cpu":
        accelerator, devices = "cpu", 1
    else:
        accelerator = "gpu"
        devices = [int(x) for x in gpus.split(",") if x != ""]

    if isinstance(devices, list) and len(devices) > 1:
        strategy = DDPStrategy(find_unused_parameters=True)
    else:
        strategy = "auto"

    trainer = pl.Trainer(
        precision=config["training"]["precision"],
        max_epochs=n_epochs,
        callbacks=callbacks,
        accelerator=accelerator,
        devices=devices,
        strategy=strategy,
        accumulate_grad_batches=config["training"]["accumulate_batches"],
        logger=logger,
        gradient_clip_val=config["training"]["gradient_clip"],
        check_val_every_n_epoch=config["training"]["validation_interval"],
        num_sanity_val_steps=0,
        log_every_n_steps=log_every_n_steps,
        limit_train_batches=limit_train_batches,
        limit_val_batches=limit_val_batches,
        limit_test_batches=limit_test_batches,
        sync_batchnorm=isinstance(strategy, DDPStrategy),
    )

    if test_state_dict is None:
        trainer.fit(sed_trainer, ckpt_path=checkpoint_resume)
        best_path = trainer.checkpoint_callback.best_model_path
        print(f"best model: {best_path}")
        test_state_dict = torch.load(best_path, map_location="cpu")["state_dict"]

    sed_trainer.load_state_dict(test_state_dict)
    trainer.test(sed_trainer)


if __name__ == "__main__":
    parser = argparse.ArgumentParser("Training ATST-SED (stage 2: fine-tune ATST-Frame + CRNN)")
    parser.add_argument("--conf_file", default="./confs/stage2.yaml")
    parser.add_argument("--log_dir", default="./exp/stage2")
    parser.add_argument("--resume_from_checkpoint", default=None)
    parser.add_argument("--test_from_checkpoint", default=None)
    parser.add_argument("--gpus", default="0,", help="comma separated GPU ids, e.g. '0,' or '0,1,'")
    parser.add_argument("--fast_dev_run", action="store_true", default=False)
    args = parser.parse_args()

    with open(args.conf_file, "r") as f:
        configs = yaml.safe_load(f)

    test_model_state_dict = None
    if args.test_from_checkpoint is not None:
        checkpoint = torch.load(args.test_from_checkpoint, map_location="cpu")
        configs_ckpt = checkpoint["hyper_parameters"]
        configs_ckpt["data"] = configs["data"]
        configs = configs_ckpt
        print(f"loaded model: {args.test_from_checkpoint} \nat epoch: {checkpoint['epoch']}")
        test_model_state_dict = checkpoint["state_dict"]

    single_run(configs, args.log_dir, args.gpus, args.resume_from_checkpoint,
               test_model_state_dict, args.fast_dev_run)
