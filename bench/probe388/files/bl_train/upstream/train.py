"""
Pretraining script for BrainLM: a ViT-MAE style masked autoencoder over parcellated fMRI
recordings (424 parcels x time), trained with the HuggingFace Trainer.
"""
import logging
import os
import sys
from dataclasses import dataclass, field
from typing import Optional

import torch
import wandb
from datasets import load_from_disk
import transformers
from transformers import HfArgumentParser, TrainingArguments
from transformers.trainer_utils import get_last_checkpoint

from brainlm_mae.modeling_brainlm import BrainLMForPretraining
from brainlm_mae.configuration_brainlm import BrainLMConfig
from brainlm_trainer import BrainLMTrainer
from utils.brainlm_trainer_callbacks import MetricsCallback
from utils.metrics import compute_metrics

logger = logging.getLogger(__name__)


@dataclass
class DataTrainingArguments:
    train_dataset_path: str = field(metadata={"help": "Path to saved train arrow dataset of cell x gene expression matrix."})
    val_dataset_path: str = field(metadata={"help": "Path to saved val arrow dataset of cell x gene expression matrix."})
    coords_dataset_path: str = field(metadata={"help": "Path to saved arrow dataset of brain region coordinates."})
    recording_col_name: str = field(default="Voxelwise_RobustScaler_Normalized_Recording")
    variable_of_interest_col_name: str = field(default="Order")
    num_timepoints_per_voxel: int = field(default=200)
    timepoint_patching_size: int = field(default=20)


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default=None)
    hidden_size: int = field(default=256)
    num_hidden_layers: int = field(default=4)
    num_attention_heads: int = field(default=4)
    intermediate_size: int = field(default=1024)
    decoder_hidden_size: int = field(default=256)
    decoder_num_hidden_layers: int = field(default=2)
    mask_ratio: float = field(default=0.75)
    loss_fn: str = field(default="mse")


@dataclass
class CustomTrainingArguments(TrainingArguments):
    remove_unused_columns: bool = field(default=False)
    base_learning_rate: float = field(default=1e-3, metadata={"help": "lr = base_lr * total_batch_size / 256"})
    wandb_logging: bool = field(default=False)


def collate_fn(examples):
    signal_vectors = torch.stack([example["signal_vectors"] for example in examples], dim=0)
    xyz_vectors = torch.stack([example["xyz_vectors"] for example in examples])
    labels = torch.stack([example["label"] for example in examples])
    return {"signal_vectors": signal_vectors, "xyz_vectors": xyz_vectors, "input_ids": signal_vectors, "labels": labels}


def main():
    parser = HfArgumentParser((ModelArguments, DataTrainingArguments, CustomTrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()

    logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                        datefmt="%m/%d/%Y %H:%M:%S", handlers=[logging.StreamHandler(sys.stdout)])
    log_level = training_args.get_process_log_level()
    logger.setLevel(log_level)
    transformers.utils.logging.set_verbosity(log_level)

    # Log on each process the small summary:
    logger.warning(
        f"Process rank: {training_args.local_rank}, device: {training_args.device}, n_gpu: {training_args.n_gpu}"
        + f" distributed training: {bool(training_args.local_rank != -1)}, 16-bits training: {training_args.fp16}"
    )

    if training_args.wandb_logging and training_args.local_rank in (-1, 0):
        wandb.init(project="brainlm", name=training_args.run_name)

    last_checkpoint = None
    if os.path.isdir(training_args.output_dir) and not training_args.overwrite_output_dir:
        last_checkpoint = get_last_checkpoint(training_args.output_dir)

    train_ds = load_from_disk(data_args.train_dataset_path)
    val_ds = load_from_disk(data_args.val_dataset_path)
    coords_ds = load_from_disk(data_args.coords_dataset_path)

    config = BrainLMConfig(
        hidden_size=model_args.hidden_size,
        num_hidden_layers=model_args.num_hidden_layers,
        num_attention_heads=model_args.num_attention_heads,
        intermediate_size=model_args.intermediate_size,
        decoder_hidden_size=model_args.decoder_hidden_size,
        decoder_num_hidden_layers=model_args.decoder_num_hidden_layers,
        num_timepoints_per_voxel=data_args.num_timepoints_per_voxel,
        timepoint_patching_size=data_args.timepoint_patching_size,
        mask_ratio=model_args.mask_ratio,
        loss_fn=model_args.loss_fn,
    )
    if model_args.model_name_or_path:
        model = BrainLMForPretraining.from_pretrained(model_args.model_name_or_path, config=config)
    else:
        model = BrainLMForPretraining(config)

    # Compute absolute learning rate
    total_train_batch_size = (
        training_args.train_batch_size * training_args.gradient_accumulation_steps * training_args.world_size
    )
    if training_args.base_learning_rate is not None:
        training_args.learning_rate = training_args.base_learning_rate * total_train_batch_size / 256

    trainer = BrainLMTrainer(
        model=model,
        args=training_args,
        train_dataset=train_ds,
        eval_dataset=val_ds,
        data_collator=collate_fn,
        compute_metrics=compute_metrics,
        callbacks=[MetricsCallback()],
    )

    checkpoint = training_args.resume_from_checkpoint or last_checkpoint
    train_result = trainer.train(resume_from_checkpoint=checkpoint)
    trainer.save_model()
    trainer.log_metrics("train", train_result.metrics)
    trainer.save_metrics("train", train_result.metrics)
    trainer.save_state()

    metrics = trainer.evaluate()
    trainer.log_metrics("eval", metrics)
    trainer.save_metrics("eval", metrics)


if __name__ == "__main__":
    main()
