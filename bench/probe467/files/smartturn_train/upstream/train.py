import argparse
import os
import random
import subprocess
from datetime import datetime

import numpy as np
import torch
import wandb
from datasets import Audio, concatenate_datasets, load_dataset
from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score
from transformers import (
    EarlyStoppingCallback,
    Trainer,
    TrainingArguments,
    Wav2Vec2Config,
    Wav2Vec2Processor,
)

from logger import log, log_dataset_statistics, log_model_structure
from model import Wav2Vec2ForEndpointing

os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
os.environ["TOKENIZERS_PARALLELISM"] = "false"

CONFIG = {
    "model_name": "facebook/wav2vec2-base-960h",

    # Three types of dataset are used during in this script: training, eval, and test.
    #
    # - The eval set is used to guide the training process, for example with early stopping, and selecting
    #   the best checkpoint.
    #
    # - The test set is kept completely separate from the training process, and is periodically used to
    #   evaluate the performance of the model.
    #
    # The datasets in `datasets_training` are split 80/10/10 into training/eval/test, and the datasets
    # in `datasets_test` are used only for testing.
    "datasets_training": [
        "pipecat-ai/rime_2",
        "pipecat-ai/human_5_all",
        "pipecat-ai/human_convcollector_1",
        "pipecat-ai/orpheus_grammar_1",
        "pipecat-ai/orpheus_midfiller_1",
        "pipecat-ai/orpheus_endfiller_1",
        "pipecat-ai/chirp3_1",
    ],
    "datasets_test": [],  # e.g. "pipecat-ai/human_5_filler"

    # Training parameters
    "learning_rate": 5e-5,
    "num_epochs": 10,
    "train_batch_size": 30,
    "eval_batch_size": 64,
    "warmup_ratio": 0.2,
    "weight_decay": 0.01,

    # Evaluation parameters
    "eval_steps": 500,
    "save_steps": 500,
    "logging_steps": 100,

    # Audio parameters
    "sampling_rate": 16000,
    "max_audio_seconds": 16,
}


def seed_everything(seed: int):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def log_gpu_info():
    # Print the driver / GPU table at the start of the run so it ends up in the training log
    subprocess.run(["nvidia-smi"], check=False)
    if torch.cuda.is_available():
        log.info(f"Training on {torch.cuda.get_device_name(0)} "
                 f"({torch.cuda.get_device_properties(0).total_memory / 1e9:.1f} GB)")


def load_dataset_at(path: str):
    if path.startswith("/"):
        return load_dataset(path)["train"]
    return load_dataset(path, split="train")


def prepare_datasets(processor, config):
    """
    Loads, splits, and organizes datasets based on config settings.

    Returns a dictionary with "training", "eval", and "test" entries.
    """
    datasets_training = config["datasets_training"]
    datasets_test = config["datasets_test"]

    overlap = set(datasets_training).intersection(set(datasets_test))
    if overlap:
        raise ValueError(f"Found overlapping datasets in training and test: {overlap}")

    training_splits = []
    eval_splits = []
    test_splits = {}

    for dataset_path in datasets_training:
        dataset_name = dataset_path.split("/")[-1]
        full_dataset = load_dataset_at(dataset_path)
        full_dataset = full_dataset.remove_columns(["language", "midfiller", "endfiller"])
        full_dataset = full_dataset.cast_column("audio", Audio(sampling_rate=config["sampling_rate"]))

        dataset_dict = full_dataset.train_test_split(test_size=0.2, seed=42)
        training_splits.append(dataset_dict["train"])
        eval_test_dict = dataset_dict["test"].train_test_split(test_size=0.5, seed=42)
        eval_splits.append(eval_test_dict["train"])
        test_splits[dataset_name] = eval_test_dict["test"]

    merged_training_dataset = concatenate_datasets(training_splits).shuffle(seed=42)
    merged_eval_dataset = concatenate_datasets(eval_splits)

    for dataset_path in datasets_test:
        dataset_name = dataset_path.split("/")[-1]
        test_splits[dataset_name] = load_dataset_at(dataset_path)

    def preprocess_function(batch):
        audio_arrays = [x["array"] for x in batch["audio"]]
        labels = [1 if lb else 0 for lb in batch["endpoint_bool"]]
        inputs = processor(
            audio_arrays,
            sampling_rate=config["sampling_rate"],
            padding="max_length",
            truncation=True,
            max_length=config["sampling_rate"] * config["max_audio_seconds"],
            return_attention_mask=True,
            return_tensors="pt",
        )
        inputs["labels"] = labels
        return inputs

    def apply(ds):
        return ds.map(preprocess_function, batched=True, batch_size=8,
                      remove_columns=["audio", "endpoint_bool"], num_proc=8)

    return {
        "training": apply(merged_training_dataset),
        "eval": apply(merged_eval_dataset),
        "test": {name: apply(ds) for name, ds in test_splits.items()},
    }


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    probs = 1 / (1 + np.exp(-logits.squeeze()))
    predictions = (probs > 0.5).astype(int)
    return {
        "accuracy": accuracy_score(labels, predictions),
        "precision": precision_score(labels, predictions, zero_division=0),
        "recall": recall_score(labels, predictions, zero_division=0),
        "f1": f1_score(labels, predictions, zero_division=0),
        "pred_positives": int(predictions.sum()),
        "true_positives": int(labels.sum()),
    }


def evaluate_and_plot(model, dataset, split_name, processor, batch_size=64):
    """Run the model over a test split and log a confusion matrix / probability histogram to wandb."""
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = model.to(device)
    model.eval()

    all_probs = []
    all_labels = []
    for start in range(0, len(dataset), batch_size):
        batch = dataset[start:start + batch_size]
        input_values = torch.tensor(batch["input_values"]).to(device)
        attention_mask = torch.tensor(batch["attention_mask"]).to(device)
        with torch.no_grad():
            outputs = model(input_values=input_values, attention_mask=attention_mask)
        all_probs.extend(torch.sigmoid(outputs["logits"]).squeeze(-1).cpu().tolist())
        all_labels.extend(batch["labels"])

    probs = np.array(all_probs)
    labels = np.array(all_labels)
    preds = (probs > 0.5).astype(int)
    accuracy = accuracy_score(labels, preds)
    wandb.log({
        f"test/{split_name}/accuracy": accuracy,
        f"test/{split_name}/probability_histogram": wandb.Histogram(probs),
        f"test/{split_name}/confusion_matrix": wandb.plot.confusion_matrix(
            y_true=labels.tolist(), preds=preds.tolist(), class_names=["Incomplete", "Complete"]),
    })
    log.info(f"[{split_name}] accuracy={accuracy:.4f} on {len(labels)} samples")
    return accuracy


def final_evaluate(trainer, dataset, split_name):
    log.info(f"Evaluating on {split_name} set...")
    metrics = trainer.evaluate(eval_dataset=dataset)
    log.info(f"{split_name} metrics: {metrics}")
    return metrics


def do_training_run(run_name: str):
    wandb.init(project="speech-endpointing", name=run_name, config=CONFIG)
    seed_everything(42)
    log_gpu_info()

    model = Wav2Vec2ForEndpointing.from_pretrained(CONFIG["model_name"], num_labels=1)
    processor = Wav2Vec2Processor.from_pretrained(CONFIG["model_name"])
    log_model_structure(model)

    datasets = prepare_datasets(processor, CONFIG)
    log_dataset_statistics("training", datasets["training"])
    log_dataset_statistics("eval", datasets["eval"])

    use_bf16 = torch.cuda.is_available() and torch.cuda.is_bf16_supported()

    training_args = TrainingArguments(
        output_dir=f"./outputs/{run_name}",
        per_device_train_batch_size=CONFIG["train_batch_size"],
        per_device_eval_batch_size=CONFIG["eval_batch_size"],
        num_train_epochs=CONFIG["num_epochs"],
        eval_strategy="steps",
        gradient_accumulation_steps=1,
        eval_steps=CONFIG["eval_steps"],
        save_steps=CONFIG["save_steps"],
        logging_steps=CONFIG["logging_steps"],
        learning_rate=CONFIG["learning_rate"],
        warmup_ratio=CONFIG["warmup_ratio"],
        weight_decay=CONFIG["weight_decay"],
        lr_scheduler_type="cosine",
        bf16=use_bf16,
        fp16=not use_bf16,
        load_best_model_at_end=True,
        metric_for_best_model="accuracy",
        greater_is_better=True,
        save_total_limit=3,
        dataloader_num_workers=6,
        dataloader_pin_memory=True,
        report_to=["wandb"],
        run_name=run_name,
    )

    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=datasets["training"],
        eval_dataset=datasets["eval"],
        compute_metrics=compute_metrics,
        callbacks=[EarlyStoppingCallback(early_stopping_patience=5)],
    )

    trainer.train()
    log.info(f"Peak GPU memory: {torch.cuda.max_memory_allocated() / 1e9:.2f} GB")

    final_save_path = f"{training_args.output_dir}/final_model"
    trainer.save_model(final_save_path)
    processor.save_pretrained(final_save_path)
    log.info(f"Model saved to {final_save_path}")

    final_evaluate(trainer, datasets["eval"], "eval")
    torch.cuda.empty_cache()
    for split_name, ds in datasets["test"].items():
        evaluate_and_plot(model, ds, split_name, processor)

    wandb.finish()
    return final_save_path


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Train the smart-turn endpointing model")
    parser.add_argument("--run-name", type=str, default=None)
    args = parser.parse_args()

    run_name = args.run_name or f"smart-turn-{datetime.now().strftime('%Y-%m-%d_%H-%M')}"
    do_training_run(run_name)
