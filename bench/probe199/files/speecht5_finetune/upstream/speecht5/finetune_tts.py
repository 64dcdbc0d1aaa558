#!/usr/bin/env python3
"""Fine-tune SpeechT5 TTS on a new language / voice (VoxPopuli-style data).

Follows the recipe from the HF audio course: speaker embeddings are computed
once with SpeechBrain's x-vector model and cached in the dataset, targets are
log-mel spectrograms from the SpeechT5 feature extractor, reduction factor 2.

    python speecht5/finetune_tts.py --dataset facebook/voxpopuli --config nl \
        --output-dir checkpoints/speecht5_tts_voxpopuli_nl --max-steps 4000
"""
import argparse
import logging
import os
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Dict, List, Union

import torch
from datasets import Audio, load_dataset
from speechbrain.pretrained import EncoderClassifier
from transformers import (
    Seq2SeqTrainer,
    Seq2SeqTrainingArguments,
    SpeechT5ForTextToSpeech,
    SpeechT5Processor,
)

logger = logging.getLogger(__name__)

SPK_MODEL = "speechbrain/spkrec-xvect-voxceleb"


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--dataset", default="facebook/voxpopuli")
    p.add_argument("--config", default="nl")
    p.add_argument("--checkpoint", default="microsoft/speecht5_tts")
    p.add_argument("--output-dir", required=True)
    p.add_argument("--max-steps", type=int, default=4000)
    p.add_argument("--per-device-batch-size", type=int, default=4)
    p.add_argument("--grad-accum", type=int, default=8)
    p.add_argument("--lr", type=float, default=1e-5)
    p.add_argument("--min-speaker-utts", type=int, default=100)
    p.add_argument("--max-speaker-utts", type=int, default=400)
    p.add_argument("--max-input-tokens", type=int, default=200)
    p.add_argument("--num-proc", type=int, default=8)
    return p.parse_args()


# Characters that the English SpeechT5 tokenizer does not know, mapped to
# ASCII look-alikes. Dutch needs only a handful.
REPLACEMENTS = [
    ("à", "a"), ("ç", "c"), ("è", "e"), ("ë", "e"), ("í", "i"),
    ("ï", "i"), ("ö", "o"), ("ü", "u"),
]


def cleanup_text(inputs: Dict[str, Any]) -> Dict[str, Any]:
    for src, dst in REPLACEMENTS:
        inputs["normalized_text"] = inputs["normalized_text"].replace(src, dst)
    return inputs


def build_speaker_model() -> EncoderClassifier:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    return EncoderClassifier.from_hparams(
        source=SPK_MODEL,
        run_opts={"device": device},
        savedir=os.path.join("/tmp", SPK_MODEL),
    )


def create_speaker_embedding(speaker_model: EncoderClassifier, waveform) -> List[float]:
    with torch.no_grad():
        emb = speaker_model.encode_batch(torch.tensor(waveform))
        emb = torch.nn.functional.normalize(emb, dim=2)
        return emb.squeeze().cpu().numpy().tolist()


@dataclass
class TTSDataCollatorWithPadding:
    processor: Any
    reduction_factor: int = 2

    def __call__(self, features: List[Dict[str, Union[List[int], torch.Tensor]]]) -> Dict[str, torch.Tensor]:
        input_ids = [{"input_ids": f["input_ids"]} for f in features]
        label_features = [{"input_values": f["labels"]} for f in features]
        speaker_features = [f["speaker_embeddings"] for f in features]

        batch = self.processor.pad(input_ids=input_ids, labels=label_features, return_tensors="pt")

        # replace padding with -100 to ignore loss correctly
        batch["labels"] = batch["labels"].masked_fill(
            batch.decoder_attention_mask.unsqueeze(-1).ne(1), -100
        )
        del batch["decoder_attention_mask"]

        # round down target lengths to multiple of reduction factor
        if self.reduction_factor > 1:
            target_lengths = torch.tensor([len(f["input_values"]) for f in label_features])
            target_lengths = target_lengths.new([
                length - length % self.reduction_factor for length in target_lengths
            ])
            max_length = max(target_lengths)
            batch["labels"] = batch["labels"][:, :max_length]

        batch["speaker_embeddings"] = torch.tensor(speaker_features)
        return batch


def main() -> None:
    args = parse_args()
    logging.basicConfig(level=logging.INFO)

    processor = SpeechT5Processor.from_pretrained(args.checkpoint)
    tokenizer = processor.tokenizer

    ds = load_dataset(args.dataset, args.config, split="train")
    ds = ds.cast_column("audio", Audio(sampling_rate=16000))
    ds = ds.map(cleanup_text)

    # keep speakers with a reasonable amount of data
    speaker_counts: Dict[str, int] = defaultdict(int)
    for spk in ds["speaker_id"]:
        speaker_counts[spk] += 1
    ds = ds.filter(
        lambda s: args.min_speaker_utts <= speaker_counts[s] <= args.max_speaker_utts,
        input_columns=["speaker_id"],
    )
    logger.info("%d utterances from %d speakers", len(ds), len(set(ds["speaker_id"])))

    speaker_model = build_speaker_model()

    def prepare_dataset(example):
        audio = example["audio"]
        example = processor(
            text=example["normalized_text"],
            audio_target=audio["array"],
            sampling_rate=audio["sampling_rate"],
            return_attention_mask=False,
        )
        # strip off the batch dimension
        example["labels"] = example["labels"][0]
        example["speaker_embeddings"] = create_speaker_embedding(speaker_model, audio["array"])
        return example

    # speaker embeddings run on the GPU inside map(); keep num_proc=1 for that step
    ds = ds.map(prepare_dataset, remove_columns=ds.column_names)
    ds = ds.filter(lambda ids: len(ids) < args.max_input_tokens, input_columns=["input_ids"])
    ds = ds.train_test_split(test_size=0.1, seed=42)

    model = SpeechT5ForTextToSpeech.from_pretrained(args.checkpoint)
    model.config.use_cache = False  # incompatible with gradient checkpointing

    training_args = Seq2SeqTrainingArguments(
        output_dir=args.output_dir,
        per_device_train_batch_size=args.per_device_batch_size,
        gradient_accumulation_steps=args.grad_accum,
        learning_rate=args.lr,
        warmup_steps=500,
        max_steps=args.max_steps,
        gradient_checkpointing=True,
        fp16=True,
        optim="adamw_torch_fused",
        evaluation_strategy="steps",
        per_device_eval_batch_size=2,
        save_steps=1000,
        eval_steps=1000,
        logging_steps=25,
        report_to=["tensorboard"],
        load_best_model_at_end=True,
        greater_is_better=False,
        label_names=["labels"],
        dataloader_num_workers=4,
        dataloader_pin_memory=True,
        push_to_hub=False,
    )

    trainer = Seq2SeqTrainer(
        args=training_args,
        model=model,
        train_dataset=ds["train"],
        eval_dataset=ds["test"],
        data_collator=TTSDataCollatorWithPadding(processor=processor),
        tokenizer=tokenizer,
    )
    trainer.train()
    trainer.save_model(args.output_dir)
    processor.save_pretrained(args.output_dir)


if __name__ == "__main__":
    main()
