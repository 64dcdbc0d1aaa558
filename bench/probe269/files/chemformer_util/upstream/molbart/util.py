import os
import math
import json
from pathlib import Path

import torch
import pytorch_lightning as pl
from pytorch_lightning import Trainer
from pytorch_lightning.loggers import TensorBoardLogger
from pytorch_lightning.plugins import DDPPlugin, DeepSpeedPlugin
from pytorch_lightning.callbacks import LearningRateMonitor, ModelCheckpoint

from molbart.tokeniser import MolEncTokeniser
from molbart.models.pre_train import BARTModel, UnifiedModel
from molbart.data.datasets import (
    Chembl,
    Uspto50,
    UsptoMit,
    UsptoSep,
    MolOpt,
    Zinc,
    ZincSlice,
)
from molbart.data.datamodules import MoleculeDataModule, FineTuneReactionDataModule


# Default model hyperparams
DEFAULT_D_MODEL = 512
DEFAULT_NUM_LAYERS = 6
DEFAULT_NUM_HEADS = 8
DEFAULT_D_FEEDFORWARD = 2048
DEFAULT_ACTIVATION = "gelu"
DEFAULT_MAX_SEQ_LEN = 512
DEFAULT_DROPOUT = 0.1

DEFAULT_MODEL = "bart"
DEFAULT_DATASET_TYPE = "zinc"
DEFAULT_DEEPSPEED_CONFIG_PATH = "ds_config.json"
DEFAULT_LOG_DIR = "tb_logs"
DEFAULT_VOCAB_PATH = "bart_vocab.txt"
DEFAULT_CHEM_TOKEN_START = 272
REGEX = "\[[^\]]+]|Br?|Cl?|N|O|S|P|F|I|b|c|n|o|s|p|\(|\)|\.|=|#|-|\+|\\\\|\/|:|~|@|\?|>|\*|\$|\%[0-9]{2}|[0-9]"

DEFAULT_GPUS = 1
DEFAULT_NUM_NODES = 1

# evaluation scripts flip this off for CPU-only runs
use_gpu = True


def build_dataset(dataset_type, data_path):
    if dataset_type == "chembl":
        dataset = Chembl(data_path)
    elif dataset_type == "uspto_50":
        dataset = Uspto50(data_path)
    elif dataset_type == "uspto_50_aug":
        dataset = Uspto50(data_path, aug_prob=1.0)
    elif dataset_type == "uspto_mit":
        dataset = UsptoMit(data_path)
    elif dataset_type == "uspto_sep":
        dataset = UsptoSep(data_path)
    elif dataset_type == "mol_opt":
        dataset = MolOpt(data_path)
    elif dataset_type == "zinc":
        dataset = Zinc(data_path)
    elif dataset_type == "zinc_slice":
        dataset = ZincSlice(data_path)
    else:
        raise ValueError(f"Unknown dataset {dataset_type}")

    return dataset


def build_molecule_datamodule(args, dataset, tokeniser, augment=None):
    dm = MoleculeDataModule(
        dataset,
        tokeniser,
        args.batch_size,
        args.max_seq_len,
        task=args.task,
        val_idxs=dataset.val_idxs,
        test_idxs=dataset.test_idxs,
        train_token_batch_size=args.train_tokens,
        num_buckets=args.num_buckets,
        unified_model=args.model_type == "unified",
        augment=augment,
    )
    return dm


def build_reaction_datamodule(args, dataset, tokeniser, forward=True):
    dm = FineTuneReactionDataModule(
        dataset,
        tokeniser,
        args.batch_size,
        DEFAULT_MAX_SEQ_LEN,
        forward_pred=forward,
        val_idxs=dataset.val_idxs,
        test_idxs=dataset.test_idxs,
        train_token_batch_size=args.train_tokens,
        num_buckets=args.num_buckets,
        unified_model=args.model_type == "unified",
    )
    return dm


def load_tokeniser(vocab_path, chem_token_start):
    tokeniser = MolEncTokeniser.from_vocab_file(vocab_path, REGEX, chem_token_start)
    return tokeniser


def check_gpus(args):
    """Fail early if more devices were requested than are visible."""
    n_visible = torch.cuda.device_count()
    if args.gpus > n_visible:
        raise ValueError(
            f"Requested {args.gpus} GPUs but only {n_visible} are visible "
            "(check CUDA_VISIBLE_DEVICES)"
        )
    return n_visible


def build_trainer(args):
    logger = TensorBoardLogger(args.log_dir, name=args.model_type)
    lr_monitor = LearningRateMonitor(logging_interval="step")
    checkpoint_cb = ModelCheckpoint(monitor="val_molecular_accuracy", save_last=True)

    plugins = None
    accelerator = None
    if args.gpus > 1:
        accelerator = "ddp"
        plugins = [DDPPlugin(find_unused_parameters=False)]

    if getattr(args, "deepspeed_config_path", None):
        plugins = [DeepSpeedPlugin(config=args.deepspeed_config_path)]
        accelerator = "ddp"

    print(f"Num gpus: {args.gpus}")
    print(f"Accelerator: {accelerator}")

    trainer = Trainer(
        accelerator=accelerator,
        gpus=args.gpus,
        num_nodes=args.num_nodes,
        min_epochs=args.epochs,
        max_epochs=args.epochs,
        precision=16,
        accumulate_grad_batches=args.acc_batches,
        gradient_clip_val=args.clip_grad,
        limit_val_batches=args.limit_val_batches,
        callbacks=[lr_monitor, checkpoint_cb],
        logger=logger,
        plugins=plugins,
        check_val_every_n_epoch=args.check_val_every_n_epoch,
    )
    return trainer


def seed_everything(seed):
    pl.utilities.seed.seed_everything(seed)


def calc_train_steps(args, dm):
    dm.setup()
    batches_per_gpu = math.ceil(len(dm.train_dataloader()) / float(args.gpus))
    train_steps = math.ceil(batches_per_gpu / args.acc_batches) * args.epochs
    return train_steps


def load_bart(args, sampler):
    model = BARTModel.load_from_checkpoint(
        args.model_path,
        decode_sampler=sampler,
        map_location="cuda:0" if use_gpu else "cpu",
    )
    model.eval()
    return model


def load_unified(args, sampler):
    model = UnifiedModel.load_from_checkpoint(args.model_path, decode_sampler=sampler)
    model.eval()
    return model


def print_results(args, results):
    print(f"Results for model: {args.model_path}")
    print(f"{'Item':<25}Result")
    for key, val in results.items():
        print(f"{key:<25} {val:.4f}")


def write_results(args, results, out_path):
    Path(out_path).parent.mkdir(parents=True, exist_ok=True)
    payload = {"model_path": str(args.model_path), "dataset": args.dataset_type}
    payload.update({key: float(val) for key, val in results.items()})
    with open(out_path, "w") as fp:
        json.dump(payload, fp, indent=2)


def _clean_up_logs(log_dir):
    for fname in os.listdir(log_dir):
        if fname.endswith(".tmp"):
            os.remove(os.path.join(log_dir, fname))
