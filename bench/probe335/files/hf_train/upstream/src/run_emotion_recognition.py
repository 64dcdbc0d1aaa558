#!/usr/bin/env python
# coding=utf-8
"""
Fine-tune wav2vec2 / HuBERT / WavLM for speech emotion recognition with the
Hugging Face Trainer (utterance classification on IEMOCAP, MSP-Podcast,
RAVDESS, CREMA-D csv manifests).

    torchrun --nproc_per_node 4 src/run_emotion_recognition.py \
        --model_name_or_path facebook/hubert-large-ll60k \
        --train_file data/msp/train.csv --validation_file data/msp/dev.csv \
        --output_dir exp/hubert_large_msp --fp16 --per_device_train_batch_size 8
"""
import logging
import os
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Union

import datasets
import evaluate
import numpy as np
import torch
import torch.nn as nn
import transformers
from datasets import Audio, load_dataset
from transformers import (
    AutoConfig,
    AutoFeatureExtractor,
    EarlyStoppingCallback,
    HfArgumentParser,
    Trainer,
    TrainingArguments,
    set_seed,
)
from transformers.trainer_utils import get_last_checkpoint

from modeling_ser import Wav2Vec2ForSpeechClassification

logger = logging.getLogger(__name__)


@dataclass
class ModelArguments:
    model_name_or_path: str = field(metadata={"help": "Pretrained SSL checkpoint (hub id or path)"})
    pooling_mode: str = field(default="mean", metadata={"help": "mean | max | attentive"})
    freeze_feature_encoder: bool = field(default=True)
    freeze_base_model: bool = field(default=False)
    attention_dropout: float = field(default=0.1)
    hidden_dropout: float = field(default=0.1)
    final_dropout: float = field(default=0.1)
    layerdrop: float = field(default=0.05)
    use_weighted_layer_sum: bool = field(default=False)
    attn_implementation: str = field(
        default="flash_attention_2",
        metadata={"help": "eager | sdpa | flash_attention_2 (needs flash-attn and an Ampere+ GPU)"},
    )
    cache_dir: Optional[str] = field(default=None)


@dataclass
class DataArguments:
    train_file: str = field(metadata={"help": "csv with columns path,emotion[,speaker]"})
    validation_file: str = field(default=None)
    test_file: str = field(default=None)
    audio_column_name: str = field(default="path")
    label_column_name: str = field(default="emotion")
    max_duration_in_seconds: float = field(default=15.0)
    min_duration_in_seconds: float = field(default=0.5)
    preprocessing_num_workers: Optional[int] = field(default=8)
    max_train_samples: Optional[int] = field(default=None)
    max_eval_samples: Optional[int] = field(default=None)


@dataclass
class DataCollatorWithPadding:
    feature_extractor: AutoFeatureExtractor
    padding: Union[bool, str] = True
    pad_to_multiple_of: Optional[int] = 320

    def __call__(self, features: List[Dict[str, Union[List[int], torch.Tensor]]]) -> Dict[str, torch.Tensor]:
        input_features = [{"input_values": f["input_values"]} for f in features]
        labels = [f["labels"] for f in features]
        batch = self.feature_extractor.pad(
            input_features,
            padding=self.padding,
            pad_to_multiple_of=self.pad_to_multiple_of,
            return_attention_mask=True,
            return_tensors="pt",
        )
        batch["labels"] = torch.tensor(labels, dtype=torch.long)
        return batch


class CUDAMemoryCallback(transformers.TrainerCallback):
    """Release cached blocks after every evaluation; long MSP-Podcast eval
    utterances otherwise fragment the allocator and OOM the next train step."""

    def on_evaluate(self, args, state, control, **kwargs):
        torch.cuda.empty_cache()
        if state.is_world_process_zero:
            logger.info(
                "after eval: allocated %.2f GiB, reserved %.2f GiB",
                torch.cuda.memory_allocated() / 2**30,
                torch.cuda.memory_reserved() / 2**30,
            )


class ClassBalancedTrainer(Trainer):
    def __init__(self, *args, class_weights=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.class_weights = class_weights

    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        logits = outputs.logits
        weight = None
        if self.class_weights is not None:
            weight = self.class_weights.to(logits.device, dtype=logits.dtype)
        loss = nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1), weight=weight)
        return (loss, outputs) if return_outputs else loss


def main():
    parser = HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))
    if len(sys.argv) == 2 and sys.argv[1].endswith(".json"):
        model_args, data_args, training_args = parser.parse_json_file(json_file=os.path.abspath(sys.argv[1]))
    else:
        model_args, data_args, training_args = parser.parse_args_into_dataclasses()

    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
        datefmt="%m/%d/%Y %H:%M:%S",
        handlers=[logging.StreamHandler(sys.stdout)],
    )
    log_level = training_args.get_process_log_level()
    logger.setLevel(log_level)
    datasets.utils.logging.set_verbosity(log_level)
    transformers.utils.logging.set_verbosity(log_level)
    logger.warning(
        f"Process rank: {training_args.local_rank}, device: {training_args.device}, n_gpu: {training_args.n_gpu}, "
        f"distributed training: {training_args.parallel_mode.value == 'distributed'}, 16-bits training: {training_args.fp16}"
    )

    last_checkpoint = None
    if os.path.isdir(training_args.output_dir) and training_args.do_train and not training_args.overwrite_output_dir:
        last_checkpoint = get_last_checkpoint(training_args.output_dir)

    set_seed(training_args.seed)

    data_files = {"train": data_args.train_file}
    if data_args.validation_file:
        data_files["validation"] = data_args.validation_file
    if data_args.test_file:
        data_files["test"] = data_args.test_file
    raw = load_dataset("csv", data_files=data_files, cache_dir=model_args.cache_dir)

    label_list = sorted(set(raw["train"][data_args.label_column_name]))
    label2id = {l: i for i, l in enumerate(label_list)}
    id2label = {i: l for l, i in label2id.items()}
    logger.info(f"{len(label_list)} classes: {label_list}")

    feature_extractor = AutoFeatureExtractor.from_pretrained(model_args.model_name_or_path, cache_dir=model_args.cache_dir)
    raw = raw.cast_column(data_args.audio_column_name, Audio(sampling_rate=feature_extractor.sampling_rate))

    max_len = int(data_args.max_duration_in_seconds * feature_extractor.sampling_rate)
    min_len = int(data_args.min_duration_in_seconds * feature_extractor.sampling_rate)

    def prepare(batch):
        audio = batch[data_args.audio_column_name]
        values = audio["array"][:max_len]
        out = feature_extractor(values, sampling_rate=audio["sampling_rate"])
        batch["input_values"] = out.input_values[0]
        batch["input_length"] = len(values)
        batch["labels"] = label2id[batch[data_args.label_column_name]]
        return batch

    with training_args.main_process_first(desc="dataset map pre-processing"):
        vectorized = raw.map(
            prepare,
            remove_columns=raw["train"].column_names,
            num_proc=data_args.preprocessing_num_workers,
            desc="extract input values",
        )
        vectorized = vectorized.filter(lambda n: n >= min_len, input_columns=["input_length"])

    if data_args.max_train_samples is not None:
        vectorized["train"] = vectorized["train"].select(range(data_args.max_train_samples))
    if data_args.max_eval_samples is not None and "validation" in vectorized:
        vectorized["validation"] = vectorized["validation"].select(range(data_args.max_eval_samples))

    counts = np.bincount(vectorized["train"]["labels"], minlength=len(label_list))
    class_weights = torch.tensor(counts.sum() / (len(counts) * np.maximum(counts, 1)), dtype=torch.float)

    config = AutoConfig.from_pretrained(
        model_args.model_name_or_path,
        num_labels=len(label_list),
        label2id=label2id,
        id2label=id2label,
        finetuning_task="speech-emotion-recognition",
        cache_dir=model_args.cache_dir,
    )
    config.update(
        {
            "pooling_mode": model_args.pooling_mode,
            "attention_dropout": model_args.attention_dropout,
            "hidden_dropout": model_args.hidden_dropout,
            "final_dropout": model_args.final_dropout,
            "layerdrop": model_args.layerdrop,
            "use_weighted_layer_sum": model_args.use_weighted_layer_sum,
        }
    )

    model = Wav2Vec2ForSpeechClassification.from_pretrained(
        model_args.model_name_or_path,
        config=config,
        cache_dir=model_args.cache_dir,
        attn_implementation=model_args.attn_implementation,
        torch_dtype=torch.float16 if training_args.fp16 and model_args.attn_implementation == "flash_attention_2" else None,
    )
    if model_args.freeze_feature_encoder:
        model.freeze_feature_encoder()
    if model_args.freeze_base_model:
        model.freeze_base_model()

    metric_acc = evaluate.load("accuracy")
    metric_f1 = evaluate.load("f1")
    metric_recall = evaluate.load("recall")

    def compute_metrics(p):
        preds = np.argmax(p.predictions, axis=1)
        out = {}
        out.update(metric_acc.compute(predictions=preds, references=p.label_ids))
        out["macro_f1"] = metric_f1.compute(predictions=preds, references=p.label_ids, average="macro")["f1"]
        out["uar"] = metric_recall.compute(predictions=preds, references=p.label_ids, average="macro")["recall"]
        return out

    # Ampere+: TF32 matmuls are ~2x faster for the CNN feature encoder in fp32 eval
    torch.backends.cuda.matmul.allow_tf32 = True
    training_args.group_by_length = True
    training_args.length_column_name = "input_length"
    training_args.ddp_find_unused_parameters = model_args.freeze_base_model or model_args.layerdrop > 0

    trainer = ClassBalancedTrainer(
        model=model,
        args=training_args,
        train_dataset=vectorized["train"] if training_args.do_train else None,
        eval_dataset=vectorized.get("validation") if training_args.do_eval else None,
        data_collator=DataCollatorWithPadding(feature_extractor=feature_extractor),
        tokenizer=feature_extractor,
        compute_metrics=compute_metrics,
        class_weights=class_weights,
        callbacks=[EarlyStoppingCallback(early_stopping_patience=5), CUDAMemoryCallback()],
    )

    if training_args.do_train:
        checkpoint = training_args.resume_from_checkpoint or last_checkpoint
        train_result = trainer.train(resume_from_checkpoint=checkpoint)
        trainer.save_model()
        metrics = train_result.metrics
        metrics["train_samples"] = len(vectorized["train"])
        metrics["peak_gpu_mem_gib"] = torch.cuda.max_memory_allocated() / 2**30
        trainer.log_metrics("train", metrics)
        trainer.save_metrics("train", metrics)
        trainer.save_state()

    if training_args.do_eval:
        metrics = trainer.evaluate()
        trainer.log_metrics("eval", metrics)
        trainer.save_metrics("eval", metrics)

    if training_args.do_predict and "test" in vectorized:
        torch.cuda.empty_cache()  # drop train-time cache before the long test utterances
        pred = trainer.predict(vectorized["test"], metric_key_prefix="test")
        trainer.log_metrics("test", pred.metrics)
        trainer.save_metrics("test", pred.metrics)
        np.save(os.path.join(training_args.output_dir, "test_logits.npy"), pred.predictions)

    kwargs = {"finetuned_from": model_args.model_name_or_path, "tasks": "audio-classification"}
    if training_args.push_to_hub:
        trainer.push_to_hub(**kwargs)
    else:
        trainer.create_model_card(**kwargs)


if __name__ == "__main__":
    main()
