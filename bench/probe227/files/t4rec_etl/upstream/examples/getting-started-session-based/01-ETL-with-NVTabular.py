#!/usr/bin/env python
# Copyright 2022 NVIDIA Corporation. All Rights Reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# ==============================================================================
"""ETL with NVTabular for session-based recommendation (exported notebook).

1. generate a synthetic e-commerce interaction log on the GPU (cuDF + CuPy)
2. NVTabular workflow: categorify items/categories, add temporal features, group the
   interactions by session into list columns and truncate them to 20 items
3. split the sessions by day into ``OUTPUT_DIR/<day>/{train,valid,test}.parquet``
   for the incremental training in 02-session-based-XLNet-with-PyT.
"""
import gc
import glob
import os

import numpy as np

import cudf
import cupy as cp
import nvtabular as nvt
from merlin.dag import ColumnSelector
from merlin.schema import Schema, Tags
from nvtabular.ops import (
    AddMetadata,
    Categorify,
    Filter,
    Groupby,
    LambdaOp,
    ListSlice,
    Normalize,
    Rename,
)
from transformers4rec.utils.data_utils import save_time_based_splits

INPUT_DATA_DIR = os.environ.get("INPUT_DATA_DIR", "/workspace/data/")
OUTPUT_DIR = os.environ.get("OUTPUT_DIR", f"{INPUT_DATA_DIR}/sessions_by_day")
NUM_ROWS = int(os.environ.get("NUM_ROWS", 100_000))
SESSIONS_MAX_LENGTH = 20
MINIMUM_SESSION_LENGTH = 2

os.makedirs(INPUT_DATA_DIR, exist_ok=True)


# ====================================================================================
# 1. synthetic data
# ====================================================================================
def generate_interactions(num_rows: int, seed: int = 0) -> "cudf.DataFrame":
    cp.random.seed(seed)
    long_tailed_item_distribution = cp.clip(cp.random.lognormal(3.0, 1.0, num_rows).astype(cp.int32), 1, 50000)

    df = cudf.DataFrame({"session_id": cp.random.randint(70000, 90000, num_rows)})
    df["item_id"] = long_tailed_item_distribution
    # generate category mapping for each item-id
    df["category"] = cp.clip(cp.random.lognormal(3.0, 1.0, num_rows).astype(cp.int32), 1, 1000)
    df["age_days"] = cp.random.uniform(0, 1, num_rows)
    df["weekday_sin"] = cp.random.uniform(0, 1, num_rows)
    # generate day mapping for each session
    map_day = cudf.DataFrame(
        {"session_id": cp.arange(70000, 90000), "day": cp.random.randint(1, 10, 20000)}
    )
    df = df.merge(map_day, on="session_id", how="left")
    df["timestamp"] = (df["day"] * 86400 + cp.random.randint(0, 86400, len(df))).astype("int64")
    return df


interactions_df = generate_interactions(NUM_ROWS)
print(interactions_df.head())
print(f"{len(interactions_df)} interactions, {interactions_df.session_id.nunique()} sessions")

# ====================================================================================
# 2. NVTabular workflow
# ====================================================================================
# categorify features
categ_feats = ["item_id", "category"] >> Categorify(start_index=1)

# define time features
session_ts = ["timestamp"]
session_time = (
    session_ts
    >> LambdaOp(lambda col: (col // 86400).astype("int32"))
    >> Rename(postfix="_day")
)


def get_cycled_feature_value_sin(col, max_value):
    value_scaled = (col + 0.000001) / max_value
    value_sin = np.sin(2 * np.pi * value_scaled)
    return value_sin


weekday_sin = (
    ["timestamp"]
    >> LambdaOp(lambda col: get_cycled_feature_value_sin(((col // 86400) % 7) + 1, 7))
    >> Rename(name="et_dayofweek_sin")
)

age_norm = ["age_days"] >> Normalize() >> Rename(postfix="_norm")

# Define groupby operation
groupby_feats = ["session_id", "timestamp", "day"] + categ_feats + age_norm + weekday_sin + session_time

groupby_features = groupby_feats >> Groupby(
    groupby_cols=["session_id"],
    sort_cols=["timestamp"],
    aggs={
        "item_id": ["list", "count"],
        "category": ["list"],
        "day": ["first"],
        "age_days_norm": ["list"],
        "et_dayofweek_sin": ["list"],
        "timestamp": ["first"],
    },
    name_sep="-",
)

# Truncate sequence features to first interacted 20 items
sequence_features_truncated = (
    groupby_features["item_id-list", "category-list"]
    >> ListSlice(-SESSIONS_MAX_LENGTH, pad=True)
    >> Rename(postfix="_seq")
    >> AddMetadata(tags=[Tags.CATEGORICAL, Tags.LIST])
)
sequence_features_truncated_cont = (
    groupby_features["age_days_norm-list", "et_dayofweek_sin-list"]
    >> ListSlice(-SESSIONS_MAX_LENGTH, pad=True)
    >> Rename(postfix="_seq")
    >> AddMetadata(tags=[Tags.CONTINUOUS, Tags.LIST])
)

# tag session_id column for serving with legacy api
sess_id = groupby_features["session_id"] >> AddMetadata(tags=[Tags.CATEGORICAL])

# Select features for training
selected_features = (
    sess_id
    + groupby_features["item_id-count", "day-first"]
    + sequence_features_truncated
    + sequence_features_truncated_cont
)

# Filter out sessions with less than 2 interactions
filtered_sessions = selected_features >> Filter(f=lambda df: df["item_id-count"] >= MINIMUM_SESSION_LENGTH)

workflow = nvt.Workflow(filtered_sessions)
dataset = nvt.Dataset(interactions_df)
workflow.fit(dataset)
sessions_gdf = workflow.transform(dataset).to_ddf().compute()
print(sessions_gdf.head(3))
print("output schema:", workflow.output_schema.column_names)

workflow.save(os.path.join(INPUT_DATA_DIR, "workflow_etl"))

# save the whole processed frame once (used by 02 to read the schema)
processed_dir = os.path.join(INPUT_DATA_DIR, "processed_nvt")
os.makedirs(processed_dir, exist_ok=True)
workflow.transform(dataset).to_parquet(processed_dir)

# ====================================================================================
# 3. split by day
# ====================================================================================
save_time_based_splits(
    data=nvt.Dataset(sessions_gdf),
    output_dir=OUTPUT_DIR,
    partition_col="day-first",
    timestamp_col="session_id",
    test_size=0.1,
    val_size=0.1,
    overwrite=True,
    cpu=False,
)

for day_dir in sorted(glob.glob(os.path.join(OUTPUT_DIR, "*")))[:3]:
    tr = cudf.read_parquet(os.path.join(day_dir, "train.parquet"))
    print(day_dir, tr.shape, tr["item_id-list_seq"].list.len().mean())

sel = ColumnSelector(["item_id-list_seq", "category-list_seq"])
print("selected for the model:", sel.names)
print(Schema([workflow.output_schema[c] for c in sel.names]))

del interactions_df, sessions_gdf
gc.collect()
