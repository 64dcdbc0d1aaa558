"""Parameter-efficient fine-tuning of whisper-large-v2 with LoRA on an 8-bit base model.

Follows the PEFT "int8 training" recipe: the frozen base model is loaded in 8-bit with
bitsandbytes (LLM.int8()), LoRA adapters are trained in fp32, and the whole thing fits on
a single 24GB consumer GPU (RTX 3090/4090) with batch size 8.

    python training/finetune_lora_int8.py --language Marathi --language_abbr mr \
        --output_dir ./whisper-large-v2-mr-lora
"""
import argparse
import gc
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Union

import evaluate
import numpy as np
import torch
from datasets import Audio, DatasetDict, load_dataset
from peft import LoraConfig, PeftConfig, PeftModel, get_peft_model, prepare_model_for_kbit_training
from torch.utils.data import DataLoader
from tqdm import tqdm
from transformers import (
    Seq2SeqTrainer,
    Seq2SeqTrainingArguments,
    TrainerCallback,
    TrainerControl,
    TrainerState,
    TrainingArguments,
    WhisperFeatureExtractor,
    WhisperForConditionalGeneration,
    WhisperProcessor,
    WhisperTokenizer,
)
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name_or_path", default="openai/whisper-large-v2")
    p.add_argument("--language", default="Marathi")
    p.add_argument("--language_abbr", default="mr")
    p.add_argument("--task", default="transcribe")
    p.add_argument("--dataset_name", default="mozilla-foundation/common_voice_11_0")
    p.add_argument("--output_dir", default="./whisper-lora-int8")
    p.add_argument("--lora_r", type=int, default=32)
    p.add_argument("--lora_alpha", type=int, default=64)
    p.add_argument("--lora_dropout", type=float, default=0.05)
    p.add_argument("--batch_size", type=int, default=8)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--eval_only", action="store_true")
    p.add_argument("--peft_model_id", default=None, help="adapter to evaluate with --eval_only")
    return p.parse_args()


@dataclass
class DataCollatorSpeechSeq2SeqWithPadding:
    processor: Any

    def __call__(self, features: List[Dict[str, Union[List[int], torch.Tensor]]]) -> Dict[str, torch.Tensor]:
        input_features = [{"input_features": feature["input_features"]} for feature in features]
        batch = self.processor.feature_extractor.pad(input_features, return_tensors="pt")

        label_features = [{"input_ids": feature["labels"]} for feature in features]
        labels_batch = self.processor.tokenizer.pad(label_features, return_tensors="pt")
        labels = labels_batch["input_ids"].masked_fill(labels_batch.attention_mask.ne(1), -100)

        if (labels[:, 0] == self.processor.tokenizer.bos_token_id).all().cpu().item():
            labels = labels[:, 1:]

        batch["labels"] = labels
        return batch


# This callback helps to save only the adapter weights and remove the base model weights.
class SavePeftModelCallback(TrainerCallback):
    def on_save(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        **kwargs,
    ):
        checkpoint_folder = os.path.join(args.output_dir, f"{PREFIX_CHECKPOINT_DIR}-{state.global_step}")

        peft_model_path = os.path.join(checkpoint_folder, "adapter_model")
        kwargs["model"].save_pretrained(peft_model_path)

        pytorch_model_path = os.path.join(checkpoint_folder, "pytorch_model.bin")
        if os.path.exists(pytorch_model_path):
            os.remove(pytorch_model_path)
        return control


def load_data(args, feature_extractor, tokenizer):
    common_voice = DatasetDict()
    common_voice["train"] = load_dataset(args.dataset_name, args.language_abbr, split="train+validation")
    common_voice["test"] = load_dataset(args.dataset_name, args.language_abbr, split="test")
    common_voice = common_voice.remove_columns(
        ["accent", "age", "client_id", "down_votes", "gender", "locale", "path", "segment", "up_votes"]
    )
    common_voice = common_voice.cast_column("audio", Audio(sampling_rate=16000))

    def prepare_dataset(batch):
        audio = batch["audio"]
        batch["input_features"] = feature_extractor(audio["array"], sampling_rate=audio["sampling_rate"]).input_features[0]
        batch["labels"] = tokenizer(batch["sentence"]).input_ids
        return batch

    return common_voice.map(prepare_dataset, remove_columns=common_voice.column_names["train"], num_proc=2)


def build_model(args):
    model = WhisperForConditionalGeneration.from_pretrained(
        args.model_name_or_path, load_in_8bit=True, device_map="auto"
    )
    model.config.forced_decoder_ids = None
    model.config.suppress_tokens = []

    # freeze the base model, cast layernorms to fp32, enable input grads for gradient checkpointing
    model = prepare_model_for_kbit_training(model, output_embedding_layer_name="proj_out")

    # the first conv layer does not receive gradients otherwise
    def make_inputs_require_grad(module, input, output):
        output.requires_grad_(True)

    model.model.encoder.conv1.register_forward_hook(make_inputs_require_grad)

    config = LoraConfig(
        r=args.lora_r,
        lora_alpha=args.lora_alpha,
        target_modules=["q_proj", "v_proj"],
        lora_dropout=args.lora_dropout,
        bias="none",
    )
    model = get_peft_model(model, config)
    model.print_trainable_parameters()
    return model


def train(args, model, processor, dataset):
    data_collator = DataCollatorSpeechSeq2SeqWithPadding(processor=processor)
    training_args = Seq2SeqTrainingArguments(
        output_dir=args.output_dir,
        per_device_train_batch_size=args.batch_size,
        gradient_accumulation_steps=1,  # increase by 2x for every 2x decrease in batch size
        learning_rate=args.lr,
        warmup_steps=50,
        num_train_epochs=args.epochs,
        evaluation_strategy="epoch",
        fp16=True,
        per_device_eval_batch_size=8,
        generation_max_length=128,
        logging_steps=25,
        remove_unused_columns=False,  # required as the PeftModel forward doesn't have the signature of the wrapped model's forward
        label_names=["labels"],  # same reason as above
        optim="adamw_bnb_8bit",
        report_to=["tensorboard"],
    )

    trainer = Seq2SeqTrainer(
        args=training_args,
        model=model,
        train_dataset=dataset["train"],
        eval_dataset=dataset["test"],
        data_collator=data_collator,
        tokenizer=processor.feature_extractor,
        callbacks=[SavePeftModelCallback],
    )
    model.config.use_cache = False  # silence the warnings. Please re-enable for inference!
    trainer.train()
    return trainer


def evaluate_wer(args, processor, dataset, peft_model_id):
    metric = evaluate.load("wer")
    peft_config = PeftConfig.from_pretrained(peft_model_id)
    base = WhisperForConditionalGeneration.from_pretrained(
        peft_config.base_model_name_or_path, load_in_8bit=True, device_map="auto"
    )
    model = PeftModel.from_pretrained(base, peft_model_id)
    model.config.use_cache = True
    model.eval()

    data_collator = DataCollatorSpeechSeq2SeqWithPadding(processor=processor)
    eval_dataloader = DataLoader(dataset["test"], batch_size=8, collate_fn=data_collator)
    forced_decoder_ids = processor.get_decoder_prompt_ids(language=args.language, task=args.task)

    for step, batch in enumerate(tqdm(eval_dataloader)):
        with torch.cuda.amp.autocast():
            with torch.no_grad():
                generated_tokens = (
                    model.generate(
                        input_features=batch["input_features"].to("cuda"),
                        forced_decoder_ids=forced_decoder_ids,
                        max_new_tokens=255,
                    )
                    .cpu()
                    .numpy()
                )
                labels = batch["labels"].cpu().numpy()
                labels = np.where(labels != -100, labels, processor.tokenizer.pad_token_id)
                decoded_preds = processor.tokenizer.batch_decode(generated_tokens, skip_special_tokens=True)
                decoded_labels = processor.tokenizer.batch_decode(labels, skip_special_tokens=True)
                metric.add_batch(predictions=decoded_preds, references=decoded_labels)
        del generated_tokens, labels, batch
        gc.collect()
    wer = 100 * metric.compute()
    print(f"{wer=}")
    return wer


def main():
    args = parse_args()
    feature_extractor = WhisperFeatureExtractor.from_pretrained(args.model_name_or_path)
    tokenizer = WhisperTokenizer.from_pretrained(args.model_name_or_path, language=args.language, task=args.task)
    processor = WhisperProcessor.from_pretrained(args.model_name_or_path, language=args.language, task=args.task)
    dataset = load_data(args, feature_extractor, tokenizer)

    if args.eval_only:
        evaluate_wer(args, processor, dataset, args.peft_model_id or args.output_dir)
        return

    model = build_model(args)
    train(args, model, processor, dataset)
    model.save_pretrained(args.output_dir)
    evaluate_wer(args, processor, dataset, args.output_dir)


if __name__ == "__main__":
    main()
