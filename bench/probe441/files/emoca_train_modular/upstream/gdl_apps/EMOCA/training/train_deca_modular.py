"""
Author: Radek Danecek
Copyright (c) 2022, Radek Danecek
All rights reserved.

# Max-Planck-Gesellschaft zur Förderung der Wissenschaften e.V. (MPG) is
# holder of all proprietary rights on this computer program.
# Using this computer program means that you agree to the terms
# in the LICENSE file included with this software distribution.
# Any use not explicitly granted by the LICENSE is prohibited.
#
# For comments or questions, please email us at emoca@tue.mpg.de
# For commercial licensing contact, please contact ps-license@tuebingen.mpg.de
"""

import os, sys
from pathlib import Path
from omegaconf import DictConfig, OmegaConf
from pytorch_lightning.callbacks import ModelCheckpoint, EarlyStopping
from pytorch_lightning.loggers import WandbLogger
from pytorch_lightning import Trainer
import datetime
import time as t
import copy
import random as rand
import torch

from gdl.models.DECA import DecaModule
from gdl.datasets.DecaDataModule import DecaDataModule
from gdl.datasets.EmotionalDataModule import EmotionDataModule, EmotionalDataModule
from gdl.utils.other import class_from_str
from gdl_apps.EMOCA.utils.io import instantiate_deca

project_name = 'EmotionalDeca'


def prepare_data(cfg):
    if 'dataset_type' not in cfg.data.keys() or cfg.data.dataset_type is None:
        print("Dataset type not specified. Assuming DECA data with emotion annotation on top.")
        dm = DecaDataModule(cfg)
        sequence_name = "ClassicDECA"
    else:
        dataset_type = cfg.data.dataset_type
        dm_class = class_from_str(dataset_type, sys.modules[__name__])
        augmentation = OmegaConf.to_container(cfg.data.augmentation) if 'augmentation' in cfg.data.keys() else None
        dm = dm_class(
            cfg.data.input_dir,
            cfg.data.output_dir,
            processed_subfolder=cfg.data.processed_subfolder,
            ignore_invalid=cfg.data.ignore_invalid,
            mode=cfg.data.mode,
            face_detector=cfg.data.face_detector,
            face_detector_threshold=cfg.data.face_detector_threshold,
            image_size=cfg.data.image_size,
            scale=cfg.data.scale,
            train_batch_size=cfg.learning.batch_size_train,
            val_batch_size=cfg.learning.batch_size_val,
            test_batch_size=cfg.learning.batch_size_test,
            num_workers=cfg.data.num_workers,
            augmentation=augmentation,
            ring_type=cfg.data.ring_type if 'ring_type' in cfg.data.keys() else None,
            ring_size=cfg.data.ring_size if 'ring_size' in cfg.data.keys() else None,
            drop_last=cfg.data.drop_last if 'drop_last' in cfg.data.keys() else None,
        )
        sequence_name = "AffWild2"

    return dm, sequence_name


def create_logger(logger_type, name, project_name, version, save_dir, config=None):
    if logger_type is None:
        # legacy reasons
        logger_type = "WandbLogger"
        print(f"Logger type is not set. Defaulting to {logger_type}")

    if not logger_type or logger_type == "None":
        logger = None
    elif logger_type == "WandbLogger":
        short_name = name[:128]
        short_version = version[:128]
        print(f"Creating logger: {logger_type}")
        logger = WandbLogger(name=short_name,
                             project=project_name,
                             version=short_version,
                             save_dir=save_dir,
                             config=config)
        max_tries = 100
        tries = 0
        if logger is not None:
            while True:
                try:
                    ex = logger.experiment
                    break
                except Exception as e:
                    logger._experiment = None
                    print("Reinitiliznig wandb because it failed in 10s")
                    t.sleep(10)
                    if max_tries <= max_tries:
                        print("WANDB Initialization unsuccessful")
                        break
                    tries += 1
    else:
        raise ValueError(f"Invalid logger_type: '{logger_type}")
    return logger


def single_stage_deca_pass(deca, cfg, stage, prefix, dm=None, logger=None,
                           data_preparation_function=None,
                           checkpoint=None, checkpoint_kwargs=None, instantiation_function=None):
    if dm is None:
        dm, sequence_name = data_preparation_function(cfg)

    if logger is None:
        N = len(datetime.datetime.now().strftime("%Y_%m_%d_%H-%M-%S"))

        if hasattr(cfg.inout, 'time') and cfg.inout.time is not None:
            version = cfg.inout.time + "_" + cfg.inout.name
        else:
            version = sequence_name[:N] # unfortunately time doesn't cut it if two jobs happen to start at the same time

        logger = create_logger(
                    cfg.learning.logger_type,
                    name=cfg.inout.name,
                    project_name=project_name,
                    version=version,
                    save_dir=cfg.inout.full_run_dir)

    if deca is None:
        deca = instantiation_function(cfg, stage, prefix, checkpoint, checkpoint_kwargs)
    else:
        if stage == 'train':
            mode = True
        else:
            mode = False
        deca.reconfigure(cfg.model, cfg.inout, cfg.learning, prefix, downgrade_ok=True, train=mode)

    accelerator = None if cfg.learning.num_gpus == 1 else 'ddp'
    if accelerator is not None and 'LOCAL_RANK' not in os.environ.keys():
        print("SETTING BATCH SIZE AND NUM_WORKERS TO 0 because of DDP. The dataloaders will be recreated in each process")
        dm.num_workers = 0

    train_data_loader = dm.train_dataloader()
    if train_data_loader is not None:
        val_check_interval = cfg.learning.val_check_interval
        if val_check_interval is not None and isinstance(val_check_interval, float) and val_check_interval > 1.0:
            val_check_interval = int(len(train_data_loader) / val_check_interval)

    checkpoint_callback = ModelCheckpoint(
        monitor='val_loss/dataloader_idx_0',
        filename='deca-{epoch:02d}-{val_loss:.8f}',
        save_top_k=3,
        save_last=True,
        mode='min',
        dirpath=cfg.inout.checkpoint_dir
    )
    callbacks = [checkpoint_callback]

    if hasattr(cfg.learning, 'early_stopping') and cfg.learning.early_stopping:
        patience = 3
        if hasattr(cfg.learning.early_stopping, 'patience') and cfg.learning.early_stopping.patience:
            patience = cfg.learning.early_stopping.patience

        early_stopping_callback = EarlyStopping(monitor='val_loss/dataloader_idx_0',
                                                mode='min',
                                                patience=patience,
                                                strict=True)
        callbacks += [early_stopping_callback]

    max_steps = cfg.learning.max_steps if 'max_steps' in cfg.learning.keys() else -1
    max_epochs = cfg.learning.max_epochs

    trainer = Trainer(gpus=cfg.learning.num_gpus,
                      max_epochs=max_epochs,
                      max_steps=max_steps,
                      default_root_dir=cfg.inout.checkpoint_dir,
                      logger=logger,
                      accelerator=accelerator,
                      callbacks=callbacks,
                      val_check_interval=val_check_interval,
                      limit_train_batches=cfg.model.get('limit_train_batches', 1),
                      limit_val_batches=cfg.model.get('limit_val_batches', 1),
                      num_sanity_val_steps=0,
                      precision=cfg.learning.get('precision', 32),
                      )

    if stage == "train":
        trainer.fit(deca, datamodule=dm)
        if hasattr(cfg.inout, 'checkpoint_after_training'):
            if cfg.inout.checkpoint_after_training == 'best':
                print(f"Loading the best checkpoint after training '{checkpoint_callback.best_model_path}'.")
                deca = DecaModule.load_from_checkpoint(checkpoint_callback.best_model_path,
                                                       model_params=cfg.model,
                                                       learning_params=cfg.learning,
                                                       inout_params=cfg.inout,
                                                       stage_name=prefix
                                                       )
            elif cfg.inout.checkpoint_after_training == 'latest':
                print(f"Keeping the lastest weights after training.")
                pass # do nothing, the latest is obviously loaded
            else:
                print(f"[WARNING] Unexpected value of cfg.inout.checkpoint_after_training={cfg.inout.checkpoint_after_training}. "
                      f"Will do nothing")

    elif stage == "test":
        trainer.test(deca,
                     datamodule=dm,
                     ckpt_path=None)
    else:
        raise ValueError(f"Invalid stage {stage}")
    if logger is not None:
        logger.finalize("")
    return deca


def get_checkpoint_with_kwargs(cfg, prefix, replace_root = None, relative_to = None, checkpoint_mode=None):
    checkpoint = get_checkpoint(cfg, replace_root = replace_root,
                                relative_to = relative_to, checkpoint_mode=checkpoint_mode)
    cfg.model.resume_training = False  # make sure the training is not magically resumed by the old code
    checkpoint_kwargs = {
        "model_params": cfg.model,
        "learning_params": cfg.learning,
        "inout_params": cfg.inout,
        "stage_name": prefix
    }
    return checkpoint, checkpoint_kwargs


def get_checkpoint(cfg, replace_root = None, relative_to = None, checkpoint_mode=None):
    if checkpoint_mode is None:
        if hasattr(cfg.learning, 'checkpoint_after_training'):
            checkpoint_mode = cfg.learning.checkpoint_after_training
        else:
            checkpoint_mode = 'latest'
    checkpoint = locate_checkpoint(cfg, replace_root = replace_root,
                                   relative_to = relative_to, mode=checkpoint_mode)
    return checkpoint


def locate_checkpoint(cfg, replace_root = None, relative_to = None, mode=None):
    checkpoint_dir = cfg.inout.checkpoint_dir
    if replace_root is not None and relative_to is not None:
        try:
            checkpoint_dir = str(Path(replace_root) / Path(checkpoint_dir).relative_to(relative_to))
        except ValueError as e:
            print(f"Not replacing the root of checkpoint_dir '{checkpoint_dir}' beacuse the specified root does not fit:"
                  f"'{replace_root}'")
    print(f"Looking for checkpoint in '{checkpoint_dir}'")
    checkpoints = sorted(list(Path(checkpoint_dir).rglob("*.ckpt")))
    if len(checkpoints) == 0:
        print(f"Did not find checkpoints. Looking in subfolders")
        checkpoints = sorted(list(Path(checkpoint_dir).rglob("*.ckpt")))
        if len(checkpoints) == 0:
            print(f"Did not find checkpoints to resume from. Returning None")
            # sys.exit()
            return None
        print(f"Found {len(checkpoints)} checkpoints")
    else:
        print(f"Found {len(checkpoints)} checkpoints")
    for ckpt in checkpoints:
        print(f" - {str(ckpt)}")

    if isinstance(mode, int):
        checkpoint = str(checkpoints[mode])
    elif mode == 'latest':
        checkpoint = str(checkpoints[-1])
    elif mode == 'best':
        min_value = 999999999999999.
        min_idx = -1
        for idx, ckpt in enumerate(checkpoints):
            if ckpt.stem == "last": # disregard last
                continue
            end_idx = str(ckpt.stem).rfind('=') + 1
            loss_str = str(ckpt.stem)[end_idx:]
            try:
                loss_value = float(loss_str)
            except ValueError as e:
                print(f"Unable to convert '{loss_str}' to float. Skipping this checkpoint.")
                continue
            if loss_value <= min_value:
                min_value = loss_value
                min_idx = idx
        if min_idx == -1:
            raise FileNotFoundError("Finding the best checkpoint failed")
        checkpoint = str(checkpoints[min_idx])
    else:
        raise ValueError(f"Invalid checkopoint loading mode '{mode}'")
    print(f"Selecting checkpoint '{checkpoint}'")
    return checkpoint


def train_deca(configs: list, stage_types: list, stage_prefixes: list, stages_starts=None, stages_resumes=None,
               start_i=0, resume_from_previous = True,
               force_new_location=False, deca=None):
    # configs = [cfg_coarse_pretraining, cfg_coarse_pretraining, cfg_coarse, cfg_coarse, cfg_detail, cfg_detail]
    # stages = ["train", "test", "train", "test", "train", "test"]
    # stages_prefixes = ["pretrain", "pretrain", "", "", "", ""]

    if start_i > 0 or force_new_location:
        if resume_from_previous:
            resume_i = start_i - 1
            checkpoint_mode = None # loads latest or best based on cfg
            print(f"Resuming checkpoint from stage {resume_i} (and will start from the next stage {start_i})")
        else:
            resume_i = start_i
            print(f"Resuming checkpoint from stage {resume_i} (and will start from the same stage {start_i})")
            checkpoint_mode = 'latest' # resuminng in the same stage, we want to pick up where we left of
        checkpoint, checkpoint_kwargs = get_checkpoint_with_kwargs(configs[resume_i], stage_prefixes[resume_i], checkpoint_mode)
    else:
        checkpoint, checkpoint_kwargs = None, None

    if configs[0].inout.full_run_dir == 'todo' or force_new_location:
        if force_new_location:
            print("The run will be resumed in a new foler (forked)")
            with open_dict(configs[0]) as d:
                d.inout.previous_run_dir = d.inout.full_run_dir
        time = datetime.datetime.now().strftime("%Y_%m_%d_%H-%M-%S")
        random_id = str(hash(time))
        experiment_name = create_experiment_name(configs[0], configs[-2])
        full_run_dir = Path(configs[0].inout.output_dir) / (time + "_" + random_id + "_" + experiment_name)
        exist_ok = False # a path for a new experiment should not yet exist
    else:
        experiment_name = configs[0].inout.name
        len_time_str = len(datetime.datetime.now().strftime("%Y_%m_%d_%H-%M-%S"))
        if hasattr(configs[0].inout, 'time') and configs[0].inout.time is not None:
            time = configs[0].inout.time
        else:
            time = experiment_name[:len_time_str]
        if hasattr(configs[0].inout, 'random_id') and configs[0].inout.random_id is not None:
            random_id = configs[0].inout.random_id
        else:
            random_id = ""
        full_run_dir = Path(configs[0].inout.full_run_dir).parent
        exist_ok = True # a path for an old experiment should exist

    full_run_dir.mkdir(parents=True, exist_ok=exist_ok)
    print(f"The run will be saved  to: '{str(full_run_dir)}'")
    with open("out_folder.txt", "w") as f:
        f.write(str(full_run_dir))

    for i in range(start_i, len(configs)):
        cfg = configs[i]
        deca = single_stage_deca_pass(deca, cfg, stage_types[i], stage_prefixes[i], dm=None, logger=None,
                                      data_preparation_function=prepare_data,
                                      checkpoint=checkpoint, checkpoint_kwargs=checkpoint_kwargs,
                                      instantiation_function=instantiate_deca)
        checkpoint = None


def create_experiment_name(cfg_coarse, cfg_detail, version=1):
    experiment_name = "ExpDECA"
    if cfg_coarse.data.data_class:
        experiment_name += '_' + cfg_coarse.data.data_class[:5]
    if cfg_coarse.model.exp_deca_global_pose and cfg_coarse.model.exp_deca_jaw_pose:
        experiment_name += "_BackGlobJaw"
    if cfg_coarse.model.useSeg:
        experiment_name += f"_Seg{cfg_coarse.model.useSeg}"
    if cfg_coarse.learning.learning_rate != 0.0001:
        experiment_name += f"CoLR{cfg_coarse.learning.learning_rate}"
    if cfg_detail.learning.learning_rate != 0.0001:
        experiment_name += f"DeLR{cfg_detail.learning.learning_rate}"
    return experiment_name


from omegaconf import open_dict
