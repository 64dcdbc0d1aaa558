#!/usr/bin/env python
# coding=utf-8
"""
Fine-tune UDOP (unified vision-text-layout T5) on RVL-CDIP document classification,
casting the task as text generation ("document classification on rvlcdip. <text>" -> "<label>").

    torchrun --nproc_per_node=8 finetune_rvlcdip.py --model_name_or_path udop-unimodel-large-224 \
        --data_dir /data/rvl-cdip --output_dir ./out --do_train --do_eval --bf16
"""
import logging
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import torch
import transformers
from torch import nn
from transformers import (
    HfArgumentParser,
    Seq2SeqTrainer,
    Seq2SeqTrainingArguments,
    T5Tokenizer,
    set_seed,
)
from transformers.trainer_utils import get_last_checkpoint, is_main_process

from core.common.utils import img_trans_torchvision, get_visual_bbox
from core.datasets import RvlCdipDataset
from core.models import UdopConfig, UdopUnimodelForConditionalGeneration, UdopTokenizer
from core.trainers import DataCollatorForT5DocCLS

logger = logging.getLogger(__name__)

RVLCDIP_LABELS = [
    "letter", "form", "email", "handwritten", "advertisement", "scientific report",
    "scientific publication", "specification", "file folder", "news article", "budget",
    "invoice", "presentation", "questionnaire", "resume", "memo",
]


@dataclass
class ModelArguments:
    model_name_or_path: str = field(metadata={"help": "Path to pretrained model or model identifier"})
    config_name: Optional[str] = field(default=None)
    tokenizer_name: Optional[str] = field(default=None)
    cache_dir: Optional[str] = field(default=None)
    attention_type: str = field(default="original_full", metadata={"help": "Attention type: BigBird configuruation only."})


@dataclass
class DataTrainingArguments:
    data_dir: Optional[str] = field(default=None, metadata={"help": "RVL-CDIP root (images/ + labels/ + ocr/)"})
    max_seq_length: int = field(default=512)
    max_seq_length_decoder: int = field(default=16)
    image_size: int = field(default=224)
    overwrite_cache: bool = field(default=False)
    max_train_samples: Optional[int] = field(default=None)
    max_eval_samples: Optional[int] = field(default=None)
    unit: str = field(default="word", metadata={"help": "word or token level OCR boxes"})
    curriculum: bool = field(default=False)


class UdopTrainer(Seq2SeqTrainer):
    """
    Seq2SeqTrainer whose evaluation decodes label strings and scores exact-match accuracy.
    The image tensor is passed through unchanged; only the text side is generated.
    """

    def prediction_step(
        self,
        model: nn.Module,
        inputs: Dict[str, Union[torch.Tensor, Any]],
        prediction_loss_only: bool,
        ignore_keys: Optional[List[str]] = None,
    ) -> Tuple[Optional[torch.Tensor], Optional[torch.Tensor], Optional[torch.Tensor]]:
        if not self.args.predict_with_generate or prediction_loss_only:
            return super().prediction_step(model, inputs, prediction_loss_only=prediction_loss_only, ignore_keys=ignore_keys)

        inputs = self._prepare_inputs(inputs)
        gen_kwargs = {
            "max_length": self.args.generation_max_length or 16,
            "num_beams": self.args.generation_num_beams or 1,
        }
        amp_dtype = torch.bfloat16 if self.args.bf16 else torch.float16
        with torch.no_grad(), torch.cuda.amp.autocast(enabled=self.args.fp16 or self.args.bf16, dtype=amp_dtype):
            generated_tokens = model.generate(
                input_ids=inputs["input_ids"],
                attention_mask=inputs["attention_mask"],
                seg_data=inputs["seg_data"],
                visual_seg_data=inputs.get("visual_seg_data"),
                image=inputs["image"],
                **gen_kwargs,
            )
            outputs = model(**inputs)
            loss = outputs.loss.mean().detach()

        if generated_tokens.shape[-1] < gen_kwargs["max_length"]:
            generated_tokens = self._pad_tensors_to_max_len(generated_tokens, gen_kwargs["max_length"])
        labels = inputs["labels"]
        if labels.shape[-1] < gen_kwargs["max_length"]:
            labels = self._pad_tensors_to_max_len(labels, gen_kwargs["max_length"])
        return (loss, generated_tokens, labels)

    def evaluate(self, *args, **kwargs):
        metrics = super().evaluate(*args, **kwargs)
        # generation with 16 beams fragments the caching allocator; give memory back before training resumes
        torch.cuda.empty_cache()
        return metrics


def main():
    parser = HfArgumentParser((ModelArguments, DataTrainingArguments, Seq2SeqTrainingArguments))
    if len(sys.argv) == 2 and sys.argv[1].endswith(".json"):
        model_args, data_args, training_args = parser.parse_json_file(json_file=os.path.abspath(sys.argv[1]))
    else:
        model_args, data_args, training_args = parser.parse_args_into_dataclasses()

    # T5 overflows in fp16; bf16 needs Ampere or newer. Fall back to fp16 on V100/T4.
    if training_args.bf16 and not (torch.cuda.is_available() and torch.cuda.is_bf16_supported()):
        logger.warning("bf16 requested but not supported by this GPU; falling back to fp16")
        training_args.bf16 = False
        training_args.fp16 = True

    last_checkpoint = None
    if os.path.isdir(training_args.output_dir) and training_args.do_train and not training_args.overwrite_output_dir:
        last_checkpoint = get_last_checkpoint(training_args.output_dir)
        if last_checkpoint is None and len(os.listdir(training_args.output_dir)) > 0:
            raise ValueError(
                f"Output directory ({training_args.output_dir}) already exists and is not empty. "
                "Use --overwrite_output_dir to overcome."
            )

    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s -   %(message)s",
        datefmt="%m/%d/%Y %H:%M:%S",
        handlers=[logging.StreamHandler(sys.stdout)],
    )
    logger.setLevel(logging.INFO if is_main_process(training_args.local_rank) else logging.WARN)
    logger.warning(
        f"Process rank: {training_args.local_rank}, device: {training_args.device}, n_gpu: {training_args.n_gpu}, "
        + f"distributed training: {bool(training_args.local_rank != -1)}, 16-bits training: {training_args.fp16}, "
        + f"bf16: {training_args.bf16}"
    )
    if is_main_process(training_args.local_rank):
        transformers.utils.logging.set_verbosity_info()
        transformers.utils.logging.enable_default_handler()
        transformers.utils.logging.enable_explicit_format()

    set_seed(training_args.seed)

    config = UdopConfig.from_pretrained(
        model_args.config_name if model_args.config_name else model_args.model_name_or_path,
        cache_dir=model_args.cache_dir,
        attention_type=model_args.attention_type if model_args.attention_type else None,
    )
    tokenizer = UdopTokenizer.from_pretrained(
        model_args.tokenizer_name if model_args.tokenizer_name else model_args.model_name_or_path,
        cache_dir=model_args.cache_dir,
        use_fast=True,
    )
    model = UdopUnimodelForConditionalGeneration.from_pretrained(
        model_args.model_name_or_path,
        config=config,
        cache_dir=model_args.cache_dir,
    )

    train_dataset = None
    eval_dataset = None
    if training_args.do_train:
        train_dataset = RvlCdipDataset(
            data_args=data_args,
            tokenizer=tokenizer,
            mode="train",
            label_list=RVLCDIP_LABELS,
        )
        if data_args.max_train_samples is not None:
            train_dataset.examples = train_dataset.examples[: data_args.max_train_samples]
    if training_args.do_eval:
        eval_dataset = RvlCdipDataset(
            data_args=data_args,
            tokenizer=tokenizer,
            mode="val",
            label_list=RVLCDIP_LABELS,
        )
        if data_args.max_eval_samples is not None:
            eval_dataset.examples = eval_dataset.examples[: data_args.max_eval_samples]

    padding = "max_length"
    data_collator = DataCollatorForT5DocCLS(
        tokenizer=tokenizer,
        padding=padding,
        max_length=data_args.max_seq_length,
        max_length_decoder=data_args.max_seq_length_decoder,
    )

    def compute_metrics(eval_pred):
        predictions, labels = eval_pred
        predictions = np.where(predictions != -100, predictions, tokenizer.pad_token_id)
        labels = np.where(labels != -100, labels, tokenizer.pad_token_id)
        decoded_preds = tokenizer.batch_decode(predictions, skip_special_tokens=True)
        decoded_labels = tokenizer.batch_decode(labels, skip_special_tokens=True)
        correct = sum(p.strip() == l.strip() for p, l in zip(decoded_preds, decoded_labels))
        return {"accuracy": correct / max(len(decoded_labels), 1)}

    trainer = UdopTrainer(
        model=model,
        args=training_args,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        tokenizer=tokenizer,
        data_collator=data_collator,
        compute_metrics=compute_metrics if training_args.predict_with_generate else None,
    )

    if training_args.do_train:
        checkpoint = last_checkpoint
        train_result = trainer.train(resume_from_checkpoint=checkpoint)
        trainer.save_model()
        metrics = train_result.metrics
        metrics["train_samples"] = len(train_dataset)
        trainer.log_metrics("train", metrics)
        trainer.save_metrics("train", metrics)
        trainer.save_state()

    if training_args.do_eval:
        logger.info("*** Evaluate ***")
        metrics = trainer.evaluate(metric_key_prefix="eval")
        metrics["eval_samples"] = len(eval_dataset)
        trainer.log_metrics("eval", metrics)
        trainer.save_metrics("eval", metrics)


if __name__ == "__main__":
    main()
