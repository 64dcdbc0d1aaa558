#!/usr/bin/env python
# Copyright 2022 NVIDIA Corporation. All Rights Reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# ==============================================================================
"""Session-based recommendation with an XLNet (MLM) model in Transformers4Rec.

Notebook exported as a script. Expects the day-partitioned parquet files produced by
01-ETL-with-NVTabular (``OUTPUT_DIR/<day>/train.parquet`` and ``valid.parquet``)
and trains incrementally, one day at a time, evaluating on the next day.

At the end the trained model is traced with TorchScript and exported together with
the NVTabular workflow as a Triton Inference Server ensemble.
"""
import gc
import glob
import logging
import os
import shutil
from pathlib import Path

import numpy as np

os.environ["CUDA_VISIBLE_DEVICES"] = os.environ.get("CUDA_VISIBLE_DEVICES", "0")

import cudf  # noqa: E402
import torch  # noqa: E402
import transformers4rec.torch as tr  # noqa: E402
from merlin.io import Dataset  # noqa: E402
from merlin.schema import Tags  # noqa: E402
from transformers4rec.config.trainer import T4RecTrainingArguments  # noqa: E402
from transformers4rec.torch import Trainer  # noqa: E402
from transformers4rec.torch.ranking_metric import NDCGAt, RecallAt  # noqa: E402

logging.basicConfig(level=logging.INFO)
logger = logging.getLogger("t4rec")

INPUT_DATA_DIR = os.environ.get("INPUT_DATA_DIR", "/workspace/data/")
OUTPUT_DIR = os.environ.get("OUTPUT_DIR", f"{INPUT_DATA_DIR}/sessions_by_day")
MODEL_DIR = os.environ.get("MODEL_DIR", "/workspace/models")
NUM_EPOCHS = int(os.environ.get("NUM_EPOCHS", "3"))
BATCH_SIZE_TRAIN = int(os.environ.get("BATCH_SIZE_TRAIN", "256"))
BATCH_SIZE_VALID = int(os.environ.get("BATCH_SIZE_VALID", "128"))
MAX_SEQUENCE_LENGTH = 20
D_MODEL = 64

start_time_window_index = 1
final_time_window_index = 4


def wipe_memory():
    gc.collect()
    torch.cuda.empty_cache()


def check_inputs():
    """Quick sanity check of the day partitions with cuDF (the files are small)."""
    for day in range(start_time_window_index, final_time_window_index + 1):
        train_file = os.path.join(OUTPUT_DIR, f"{day}/train.parquet")
        if not os.path.exists(train_file):
            raise FileNotFoundError(train_file)
        df = cudf.read_parquet(train_file, columns=["session_id", "item_id-list_seq"])
        lens = df["item_id-list_seq"].list.len()
        logger.info("day %d: %d sessions, mean len %.2f", day, len(df), float(lens.mean()))
        del df


def build_model(schema):
    # Define input module to process tabular input-features and to prepare masked inputs
    input_module = tr.TabularSequenceFeatures.from_schema(
        schema,
        max_sequence_length=MAX_SEQUENCE_LENGTH,
        continuous_projection=64,
        aggregation="concat",
        d_output=D_MODEL,
        masking="mlm",
    )

    # Define Next item prediction-task
    prediction_task = tr.NextItemPredictionTask(
        weight_tying=True,
        metrics=[
            NDCGAt(top_ks=[10, 20], labels_onehot=True),
            RecallAt(top_ks=[10, 20], labels_onehot=True),
        ],
    )

    # Define the config of the XLNet Transformer architecture
    transformer_config = tr.XLNetConfig.build(
        d_model=D_MODEL, n_head=4, n_layer=2, total_seq_length=MAX_SEQUENCE_LENGTH
    )
    model = transformer_config.to_torch_model(input_module, prediction_task)
    return model


def train_args():
    return T4RecTrainingArguments(
        data_loader_engine="merlin",
        dataloader_drop_last=True,
        gradient_accumulation_steps=1,
        per_device_train_batch_size=BATCH_SIZE_TRAIN,
        per_device_eval_batch_size=BATCH_SIZE_VALID,
        output_dir="./tmp",
        learning_rate=0.0005,
        lr_scheduler_type="cosine",
        learning_rate_num_cosine_cycles_by_epoch=1.5,
        num_train_epochs=NUM_EPOCHS,
        max_sequence_length=MAX_SEQUENCE_LENGTH,
        report_to=[],
        logging_steps=50,
        fp16=True,
        no_cuda=False,
    )


def incremental_train(trainer):
    results = {}
    for time_index in range(start_time_window_index, final_time_window_index):
        # Set data
        time_index_train = time_index
        time_index_eval = time_index + 1
        train_paths = glob.glob(os.path.join(OUTPUT_DIR, f"{time_index_train}/train.parquet"))
        eval_paths = glob.glob(os.path.join(OUTPUT_DIR, f"{time_index_eval}/valid.parquet"))
        print(train_paths)

        # Train on day related to time_index
        print("*" * 20)
        print("Launch training for day %s are:" % time_index)
        print("*" * 20 + "\n")
        trainer.train_dataset_or_path = train_paths
        trainer.reset_lr_scheduler()
        trainer.train()
        trainer.state.global_step += 1
        print("finished")

        # Evaluate on the following day
        trainer.eval_dataset_or_path = eval_paths
        eval_metrics = trainer.evaluate(metric_key_prefix="eval")
        print("*" * 20)
        print("Eval results for day %s are:\t" % time_index_eval)
        print("\n" + "*" * 20 + "\n")
        for key in sorted(eval_metrics.keys()):
            print(" %s = %s" % (key, str(eval_metrics[key])))
        results[time_index_eval] = eval_metrics
        wipe_memory()
    return results


def export_for_triton(model, schema, eval_path):
    """Trace the model with TorchScript and write the Triton ensemble."""
    from merlin.systems.dag.ops.pytorch import PredictPyTorch
    from merlin.systems.dag.ensemble import Ensemble
    from merlin.systems.dag.ops.workflow import TransformWorkflow
    import nvtabular as nvt

    model.eval()
    model = model.cuda()
    loader = tr.data.merlin_dataloader.set_dataset(eval_path).batch_size(8).build()  # noqa
    batch, _ = next(iter(loader))
    batch = {k: v.to("cuda") for k, v in batch.items()}
    traced_model = torch.jit.trace(model, batch, strict=True)
    logger.info("traced model type: %s", type(traced_model))

    workflow = nvt.Workflow.load(os.path.join(INPUT_DATA_DIR, "workflow_etl"))
    input_schema = model.input_schema
    output_schema = model.output_schema
    torch_op = workflow.input_schema.column_names >> TransformWorkflow(workflow) >> PredictPyTorch(
        traced_model, input_schema, output_schema
    )
    ensemble = Ensemble(torch_op, workflow.input_schema)
    export_path = os.path.join(MODEL_DIR, "t4r_pytorch")
    if os.path.isdir(export_path):
        shutil.rmtree(export_path)
    ensemble.export(export_path)
    logger.info("Triton ensemble written to %s", export_path)


def main():
    check_inputs()
    train = Dataset(os.path.join(INPUT_DATA_DIR, "processed_nvt/part_0.parquet"))
    schema = train.schema
    schema = schema.select_by_tag([Tags.ITEM_ID, Tags.CATEGORICAL, Tags.CONTINUOUS])
    schema = schema.select_by_name(
        ["item_id-list_seq", "category-list_seq", "product_recency_days_log_norm-list_seq", "et_dayofweek_sin-list_seq"]
    )
    model = build_model(schema)
    logger.info(model)

    trainer = Trainer(
        model=model,
        args=train_args(),
        schema=schema,
        compute_metrics=True,
    )
    results = incremental_train(trainer)
    np.save(Path(MODEL_DIR) / "eval_results.npy", results, allow_pickle=True)

    model.save(MODEL_DIR)
    eval_path = os.path.join(OUTPUT_DIR, f"{final_time_window_index}/valid.parquet")
    export_for_triton(model, schema, eval_path)


if __name__ == "__main__":
    main()
