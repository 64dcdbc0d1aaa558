"""Finetuning the library models for sequence classification on GLUE (with differential privacy)."""

import collections
import copy
import dataclasses
import gc
import json
import logging
import os
from dataclasses import dataclass, field
from typing import Callable, Dict, Optional, Union

import numpy as np
import torch
from ml_swissknife import utils
from transformers import AutoConfig, AutoTokenizer, EvalPrediction
from transformers import GlueDataTrainingArguments as DataTrainingArguments
from transformers import HfArgumentParser, set_seed

from private_transformers import PrivacyEngine
from .src.common import true_tags
from .src.compiled_args import PrivacyArguments, TrainingArguments, AuxiliaryArguments
from .src.dataset import FewShotDataset
from .src.models import (
    BertForPromptFinetuning, RobertaForPromptFinetuning, AlbertForPromptFinetuning, DistilBertForPromptFinetuning,
    resize_token_type_embeddings
)
from .src.processors import num_labels_mapping, output_modes_mapping, compute_metrics_mapping, bound_mapping
from .src.trainer import Trainer

logger = logging.getLogger(__name__)

os.environ["WANDB_DISABLED"] = "true"


@dataclass
class ModelArguments:
    """
    Arguments pertaining to which model/config/tokenizer we are going to fine-tune from.
    """
    model_name_or_path: str = field(
        metadata={"help": "Path to pretrained model or model identifier from huggingface.co/models"}
    )
    config_name: Optional[str] = field(
        default=None, metadata={"help": "Pretrained config name or path if not the same as model_name"}
    )
    tokenizer_name: Optional[str] = field(
        default=None, metadata={"help": "Pretrained tokenizer name or path if not the same as model_name"}
    )
    cache_dir: Optional[str] = field(
        default=None, metadata={"help": "Where do you want to store the pretrained models downloaded from s3"}
    )
    # Few-shot type
    #   - finetune: standard fine-tuning
    #   - prompt: prompt-based fine-tuning
    #   - prompt-demo: prompt-based fine-tuning with demonstrations
    few_shot_type: str = field(
        default='prompt-demo',
        metadata={"help": "Few-shot learning model type. Choice: finetune, prompt, prompt-demo"}
    )
    # Only for BERT-type model
    random_segment: bool = field(
        default=False,
        metadata={"help": "Whether to reinitialize the token type embeddings (only for BERT)."}
    )
    static_embedding: str = field(default="no")
    static_lm_head: str = field(default="no")
    attention_only: str = field(default="no")

    def __post_init__(self):
        self.static_embedding = self.static_embedding.lower() in true_tags
        self.static_lm_head = self.static_lm_head.lower() in true_tags
        self.attention_only = self.attention_only.lower() in true_tags


@dataclass
class DynamicDataTrainingArguments(DataTrainingArguments):
    """
    Arguments for dynamic training.
    """
    num_k: Optional[int] = field(default=16, metadata={"help": "Number of training instances per class"})
    num_sample: Optional[int] = field(
        default=16,
        metadata={"help": "Number of samples (for inference) in fine-tuning with demonstrations"}
    )
    num_demo: Optional[int] = field(default=1, metadata={"help": "Number of demonstrations from each class"})
    auto_demo: bool = field(default=True, metadata={"help": "Automatically generate template for using demonstrations"})
    template: str = field(default=None, metadata={"help": "Template"})
    mapping: str = field(default=None, metadata={"help": "Label word mapping"})
    max_seq_length: int = field(default=256)
    inference_time_demo: bool = field(default=False)


def main():
    parser = HfArgumentParser(
        (ModelArguments, DynamicDataTrainingArguments, TrainingArguments, PrivacyArguments, AuxiliaryArguments)
    )
    model_args, data_args, training_args, privacy_args, auxiliary_args = parser.parse_args_into_dataclasses()

    if not os.path.exists(training_args.output_dir):
        print(f"output_dir doesn't exists, mkdir now: {training_args.output_dir}")
        os.makedirs(training_args.output_dir)

    if 'prompt' in model_args.few_shot_type:
        data_args.prompt = True

    if training_args.no_train:
        training_args.do_train = False
    if training_args.no_predict:
        training_args.do_predict = False

    # Setup logging
    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s -   %(message)s",
        datefmt="%m/%d/%Y %H:%M:%S",
        level=logging.INFO if training_args.local_rank in [-1, 0] else logging.WARN,
    )

    logger.warning(
        "Process rank: %s, device: %s, n_gpu: %s, distributed training: %s, 16-bits training: %s",
        training_args.local_rank,
        training_args.device,
        training_args.n_gpu,
        bool(training_args.local_rank != -1),
        training_args.fp16,
    )
    logger.info("Training/evaluation parameters %s", training_args)

    # Set seed
    set_seed(training_args.seed)

    try:
        num_labels = num_labels_mapping[data_args.task_name]
        output_mode = output_modes_mapping[data_args.task_name]
        logger.info(
            "Task name: {}, number of labels: {}, output mode: {}".format(data_args.task_name, num_labels, output_mode)
        )
    except KeyError:
        raise ValueError("Task not found: %s" % (data_args.task_name))

    # Load pretrained model and tokenizer
    config = AutoConfig.from_pretrained(
        model_args.config_name if model_args.config_name else model_args.model_name_or_path,
        num_labels=num_labels,
        finetuning_task=data_args.task_name,
        cache_dir=model_args.cache_dir,
    )

    if 'prompt' in model_args.few_shot_type:
        if config.model_type == 'roberta':
            model_fn = RobertaForPromptFinetuning
        elif config.model_type == 'bert':
            model_fn = BertForPromptFinetuning
        elif config.model_type == 'albert':
            model_fn = AlbertForPromptFinetuning
        elif config.model_type == 'distilbert':
            model_fn = DistilBertForPromptFinetuning
        else:
            raise NotImplementedError
    else:
        raise NotImplementedError

    tokenizer = AutoTokenizer.from_pretrained(
        model_args.tokenizer_name if model_args.tokenizer_name else model_args.model_name_or_path,
        additional_special_tokens=[],
        cache_dir=model_args.cache_dir,
    )

    # Get our special datasets.
    train_dataset = FewShotDataset(data_args, tokenizer=tokenizer, mode="train")
    eval_dataset = FewShotDataset(data_args, tokenizer=tokenizer, mode="dev") if training_args.do_eval else None
    test_dataset = FewShotDataset(data_args, tokenizer=tokenizer, mode="test") if training_args.do_predict else None

    set_seed(training_args.seed)

    model = model_fn.from_pretrained(
        model_args.model_name_or_path,
        from_tf=bool(".ckpt" in model_args.model_name_or_path),
        config=config,
        cache_dir=model_args.cache_dir,
    )
    print(" | model type: ")
    print(type(model))

    if config.model_type == 'bert':
        # Resize token type embeddings to 10
        resize_token_type_embeddings(model, new_num_types=10, random_segment=model_args.random_segment)

    # Pass dataset and argument information to the model
    if data_args.prompt:
        model.label_word_list = torch.tensor(train_dataset.label_word_list).long().to(training_args.device)
    if output_modes_mapping[data_args.task_name] == 'regression':
        # lower / upper bounds
        model.lb, model.ub = bound_mapping[data_args.task_name]
    model.model_args = model_args
    model.data_args = data_args
    model.tokenizer = tokenizer

    if model_args.attention_only:
        model.requires_grad_(False)
        for name, param in model.named_parameters():
            if 'query' in name or 'value' in name:
                param.requires_grad_(True)
        if model_args.static_lm_head:
            model.lm_head.requires_grad_(False)
    else:
        model.requires_grad_(True)
        if model_args.static_embedding:
            model.get_input_embeddings().requires_grad_(False)

    print('Params to update:')
    print(json.dumps([name for name, param in model.named_parameters() if param.requires_grad], indent=4))
    num_differentiable_params = utils.count_parameters(model, only_differentiable=True)
    print(f'Number of differentiable params: {num_differentiable_params / 1e6:.4f} million')

    # Build metric
    def build_compute_metrics_fn(task_name: str) -> Callable[[EvalPrediction], Dict]:
        def compute_metrics_fn(p: EvalPrediction):
            # Note: the eval dataloader is sequential, so the examples are in order.
            predictions = p.predictions
            num_logits = predictions.shape[-1]
            logits = predictions.reshape([eval_dataset.num_sample, -1, num_logits])
            logits = logits.mean(axis=0)

            if num_logits == 1:
                preds = np.squeeze(logits)
            else:
                preds = np.argmax(logits, axis=1)

            # Just for sanity, assert label ids are the same.
            label_ids = p.label_ids.reshape([eval_dataset.num_sample, -1])
            label_ids_avg = label_ids.mean(axis=0)
            label_ids_avg = label_ids_avg.astype(p.label_ids.dtype)
            assert (label_ids_avg - label_ids[0]).mean() < 1e-2
            label_ids = label_ids[0]

            return compute_metrics_mapping[task_name](task_name, preds, label_ids)

        return compute_metrics_fn

    # Initialize our Trainer
    named_params = [(name, param) for name, param in model.named_parameters() if param.requires_grad]
    optimizer = torch.optim.AdamW(
        [param for _, param in named_params],
        lr=training_args.learning_rate,
        betas=(0.9, 0.999),
        eps=training_args.adam_epsilon,
        weight_decay=training_args.weight_decay,
    )
    if privacy_args.non_private:
        privacy_args.noise_multiplier = 0.
        privacy_engine = None
    else:
        if privacy_args.clipping_mode == 'ghost':
            logger.info("Using ghost clipping; the per-example gradients are never instantiated.")
        privacy_engine = PrivacyEngine(
            module=model,
            batch_size=training_args.per_device_train_batch_size * training_args.gradient_accumulation_steps,
            sample_size=len(train_dataset),
            epochs=training_args.num_train_epochs,
            max_grad_norm=privacy_args.per_example_max_grad_norm,
            noise_multiplier=privacy_args.noise_multiplier,
            target_epsilon=privacy_args.target_epsilon,
            target_delta=privacy_args.target_delta,
            accounting_mode=privacy_args.accounting_mode,
            clipping_mode=privacy_args.clipping_mode,
            skip_checks=True,
        )
        # Originally, it could have been null.
        privacy_args.noise_multiplier = privacy_engine.noise_multiplier
        privacy_args.target_delta = privacy_engine.target_delta

        print('privacy_args: ')
        print(json.dumps(privacy_args.__dict__, indent=4))
        privacy_engine.attach(optimizer)

    trainer = Trainer(
        model=model,
        args=training_args,
        model_args=model_args,
        privacy_args=privacy_args,
        auxiliary_args=auxiliary_args,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        compute_metrics=build_compute_metrics_fn(data_args.task_name),
        privacy_engine=privacy_engine,
        optimizers=(optimizer, None),
    )

    # Training
    if training_args.do_train:
        # Write argparse.
        utils.jdump(
            {**training_args.__dict__, **data_args.__dict__, **model_args.__dict__, **privacy_args.__dict__},
            os.path.join(training_args.output_dir, 'argparse.json'),
            default=lambda x: str(x),
        )
        print(json.dumps(training_args.__dict__, indent=4, default=lambda x: str(x)))
        trainer.train(model_path=model_args.model_name_or_path if os.path.isdir(model_args.model_name_or_path) else None)

    # Evaluation
    final_result = {
        'time': str(utils.timestamp()),
    }

    if training_args.do_eval:
        logger.info("*** Validate ***")
        eval_datasets = [eval_dataset]
        for eval_dataset in eval_datasets:
            trainer.compute_metrics = build_compute_metrics_fn(eval_dataset.args.task_name)
            output = trainer.evaluate(eval_dataset=eval_dataset)
            eval_result = output.metrics
            for key, value in eval_result.items():
                final_result[eval_dataset.args.task_name + '_dev_' + key] = value

    utils.jdump(final_result, os.path.join(training_args.output_dir, 'final_results.json'))

    del model
    gc.collect()
    torch.cuda.empty_cache()
    return final_result


if __name__ == "__main__":
    main()
