#!/usr/bin/env python
# coding: utf-8
"""Candidate ReRank Model using handcrafted rules (OTTO - Multi-Objective Recommender).

Exported from the Kaggle notebook. Co-visitation matrices are computed on the GPU with
RAPIDS cuDF in chunks (the full matrix does not fit in 16GB of GPU memory), then the
top-20 pairs per aid are saved to disk as parquet and reloaded on the CPU with pandas
for the (slow, python) candidate generation step.

Run on a Kaggle T4/P100 instance, or locally with RAPIDS 23.x installed.
"""
import gc
import glob
import itertools
import os
from collections import Counter

import numpy as np
import pandas as pd

import cudf
import cupy as cp

print("We will use RAPIDS version", cudf.__version__)

VER = 5
DATA_PATH = "../input/otto-chunk-data-inparquet-format"
OUT_PATH = "./"
DISK_PIECES = 4
PIECES = 5
TOP_CLICKS = 20
TOP_CARTS = 15
TOP_BUYS = 15

type_labels = {"clicks": 0, "carts": 1, "orders": 2}
type_weight = {0: 1, 1: 6, 2: 3}

# ====================================================================================
# CACHE DATA IN CPU RAM
# Reading parquet from disk for every chunk is slow; we read once into pandas and then
# copy the chunks we need to the GPU with cudf.DataFrame(pandas_df).
# ====================================================================================


def read_file(f):
    return cudf.DataFrame(data_cache[f])


def read_file_to_cache(f):
    df = pd.read_parquet(f)
    df.ts = (df.ts / 1000).astype("int32")
    df["type"] = df["type"].map(type_labels).astype("int8")
    return df


files = sorted(glob.glob(f"{DATA_PATH}/*_parquet/*"))
data_cache = {}
for f in files:
    data_cache[f] = read_file_to_cache(f)

CHUNK = int(np.ceil(len(files) / 6))
READ_CT = 5
print(f"We will process {len(files)} files, in groups of {READ_CT} and chunks of {CHUNK}.")


def _filter_session_window(df, max_events=30):
    # keep the last `max_events` events of each session, drop duplicate (session, aid, type)
    df = df.sort_values(["session", "ts"], ascending=[True, False])
    df = df.reset_index(drop=True)
    df["n"] = df.groupby("session").cumcount()
    df = df.loc[df.n < max_events].drop("n", axis=1)
    return df


def covisit_carts_orders(size):
    """"Carts Orders" co-visitation matrix - type weighted."""
    tmp_all = None
    for PART in range(DISK_PIECES):
        print("### DISK PART", PART + 1)
        for j in range(CHUNK):
            a = j * CHUNK
            b = min((j + 1) * CHUNK, len(files))
            print(f"Processing files {a} thru {b - 1} in groups of {READ_CT}...")
            for k in range(a, b, READ_CT):
                df = [read_file(files[k])]
                for i in range(1, READ_CT):
                    if k + i < b:
                        df.append(read_file(files[k + i]))
                df = cudf.concat(df, ignore_index=True, axis=0)
                df = _filter_session_window(df)
                df = df.merge(df, on="session")
                df = df.loc[((df.ts_x - df.ts_y).abs() < 24 * 60 * 60) & (df.aid_x != df.aid_y)]
                df = df.loc[(df.aid_x >= PART * size) & (df.aid_x < (PART + 1) * size)]
                df = df[["session", "aid_x", "aid_y", "type_y"]].drop_duplicates(["session", "aid_x", "aid_y"])
                df["wgt"] = df.type_y.map(type_weight)
                df = df[["aid_x", "aid_y", "wgt"]]
                df.wgt = df.wgt.astype("float32")
                df = df.groupby(["aid_x", "aid_y"]).wgt.sum()
                if tmp_all is None:
                    tmp_all = df
                else:
                    tmp_all = tmp_all.add(df, fill_value=0)
                del df
                gc.collect()
            print()
        # CONVERT MATRIX TO DICTIONARY
        tmp_all = tmp_all.reset_index()
        tmp_all = tmp_all.sort_values(["aid_x", "wgt"], ascending=[True, False])
        tmp_all = tmp_all.reset_index(drop=True)
        tmp_all["n"] = tmp_all.groupby("aid_x").aid_y.cumcount()
        tmp_all = tmp_all.loc[tmp_all.n < size].drop("n", axis=1)
        # SAVE PART TO DISK (convert to pandas first uses less memory)
        tmp_all.to_pandas().to_parquet(f"{OUT_PATH}top_15_carts_orders_v{VER}_{PART}.pqt")
        tmp_all = None


def covisit_buy2buy(size):
    """"Buy2Buy" co-visitation matrix: carts and orders only, 14 day window."""
    tmp_all = None
    for j in range(CHUNK):
        a = j * CHUNK
        b = min((j + 1) * CHUNK, len(files))
        for k in range(a, b, READ_CT):
            df = [read_file(files[k])]
            for i in range(1, READ_CT):
                if k + i < b:
                    df.append(read_file(files[k + i]))
            df = cudf.concat(df, ignore_index=True)
            df = df.loc[df["type"].isin([1, 2])]
            df = _filter_session_window(df)
            df = df.merge(df, on="session")
            df = df.loc[((df.ts_x - df.ts_y).abs() < 14 * 24 * 60 * 60) & (df.aid_x != df.aid_y)]
            df = df[["session", "aid_x", "aid_y", "type_y"]].drop_duplicates(["session", "aid_x", "aid_y"])
            df["wgt"] = 1
            df = df[["aid_x", "aid_y", "wgt"]]
            df.wgt = df.wgt.astype("float32")
            df = df.groupby(["aid_x", "aid_y"]).wgt.sum()
            tmp_all = df if tmp_all is None else tmp_all.add(df, fill_value=0)
            del df
            gc.collect()
    tmp_all = tmp_all.reset_index()
    tmp_all = tmp_all.sort_values(["aid_x", "wgt"], ascending=[True, False])
    tmp_all = tmp_all.reset_index(drop=True)
    tmp_all["n"] = tmp_all.groupby("aid_x").aid_y.cumcount()
    tmp_all = tmp_all.loc[tmp_all.n < size].drop("n", axis=1)
    tmp_all.to_pandas().to_parquet(f"{OUT_PATH}top_15_buy2buy_v{VER}_0.pqt")


def covisit_clicks(size):
    """"Clicks" co-visitation matrix - time weighted."""
    tmp_all = None
    for PART in range(DISK_PIECES):
        for j in range(CHUNK):
            a = j * CHUNK
            b = min((j + 1) * CHUNK, len(files))
            for k in range(a, b, READ_CT):
                df = [read_file(files[k])]
                for i in range(1, READ_CT):
                    if k + i < b:
                        df.append(read_file(files[k + i]))
                df = cudf.concat(df, axis=0, ignore_index=True)
                df = _filter_session_window(df)
                df = df.merge(df, on="session")
                df = df.loc[((df.ts_x - df.ts_y).abs() < 24 * 60 * 60) & (df.aid_x != df.aid_y)]
                df = df.loc[(df.aid_x >= PART * size) & (df.aid_x < (PART + 1) * size)]
                df = df[["session", "aid_x", "aid_y", "ts_x"]].drop_duplicates(["session", "aid_x", "aid_y"])
                # 1659304800 : minimum timestamp, 1662328791 : maximum timestamp
                df["wgt"] = 1 + 3 * (df.ts_x - 1659304800) / (1662328791 - 1659304800)
                df = df[["aid_x", "aid_y", "wgt"]]
                df.wgt = df.wgt.astype("float32")
                df = df.groupby(["aid_x", "aid_y"]).wgt.sum()
                tmp_all = df if tmp_all is None else tmp_all.add(df, fill_value=0)
                del df
                gc.collect()
        tmp_all = tmp_all.reset_index()
        tmp_all = tmp_all.sort_values(["aid_x", "wgt"], ascending=[True, False])
        tmp_all = tmp_all.reset_index(drop=True)
        tmp_all["n"] = tmp_all.groupby("aid_x").aid_y.cumcount()
        tmp_all = tmp_all.loc[tmp_all.n < size].drop("n", axis=1)
        tmp_all.to_pandas().to_parquet(f"{OUT_PATH}top_20_clicks_v{VER}_{PART}.pqt")
        tmp_all = None


# ====================================================================================
# Run the three co-visitation passes (each takes ~ 3-5 min on a T4)
# ====================================================================================
SIZE = 1.86e6 / DISK_PIECES
SIZE = int(np.ceil(SIZE))
covisit_carts_orders(SIZE)
covisit_buy2buy(SIZE)
covisit_clicks(SIZE)

# free GPU memory before the CPU part
del data_cache
gc.collect()
cp.get_default_memory_pool().free_all_blocks()

# ====================================================================================
# STEP 2 - RERANK (CPU, pandas)
# ====================================================================================


def load_test():
    dfs = []
    for e, chunk_file in enumerate(glob.glob(f"{DATA_PATH}/test_parquet/*")):
        chunk = pd.read_parquet(chunk_file)
        chunk.ts = (chunk.ts / 1000).astype("int32")
        chunk["type"] = chunk["type"].map(type_labels).astype("int8")
        dfs.append(chunk)
    return pd.concat(dfs).reset_index(drop=True)


test_df = load_test()
print("Test data has shape", test_df.shape)


def pqt_to_dict(df):
    return df.groupby("aid_x").aid_y.apply(list).to_dict()


top_20_clicks = pqt_to_dict(pd.read_parquet(f"{OUT_PATH}top_20_clicks_v{VER}_0.pqt"))
for k in range(1, DISK_PIECES):
    top_20_clicks.update(pqt_to_dict(pd.read_parquet(f"{OUT_PATH}top_20_clicks_v{VER}_{k}.pqt")))
top_15_buys = pqt_to_dict(pd.read_parquet(f"{OUT_PATH}top_15_carts_orders_v{VER}_0.pqt"))
for k in range(1, DISK_PIECES):
    top_15_buys.update(pqt_to_dict(pd.read_parquet(f"{OUT_PATH}top_15_carts_orders_v{VER}_{k}.pqt")))
top_15_buy2buy = pqt_to_dict(pd.read_parquet(f"{OUT_PATH}top_15_buy2buy_v{VER}_0.pqt"))

# most popular items in test, computed on the GPU because it is faster
test_gdf = cudf.from_pandas(test_df)
top_clicks = test_gdf.loc[test_gdf["type"] == 0, "aid"].value_counts().index.values_host[:TOP_CLICKS]
top_orders = test_gdf.loc[test_gdf["type"] == 2, "aid"].value_counts().index.values_host[:TOP_BUYS]
del test_gdf


def suggest_clicks(df):
    aids = df.aid.tolist()
    types = df.type.tolist()
    unique_aids = list(dict.fromkeys(aids[::-1]))
    if len(unique_aids) >= 20:
        weights = np.logspace(0.1, 1, len(aids), base=2, endpoint=True) - 1
        aids_temp = Counter()
        for aid, w, t in zip(aids, weights, types):
            aids_temp[aid] += w * type_weight[t]
        sorted_aids = [k for k, v in aids_temp.most_common(20)]
        return sorted_aids
    aids2 = list(itertools.chain(*[top_20_clicks[aid] for aid in unique_aids if aid in top_20_clicks]))
    top_aids2 = [aid2 for aid2, cnt in Counter(aids2).most_common(20) if aid2 not in unique_aids]
    result = unique_aids + top_aids2[: 20 - len(unique_aids)]
    return result + list(top_clicks)[: 20 - len(result)]


def suggest_buys(df):
    aids = df.aid.tolist()
    types = df.type.tolist()
    unique_aids = list(dict.fromkeys(aids[::-1]))
    df = df.loc[(df["type"] == 1) | (df["type"] == 2)]
    unique_buys = list(dict.fromkeys(df.aid.tolist()[::-1]))
    if len(unique_aids) >= 20:
        weights = np.logspace(0.5, 1, len(aids), base=2, endpoint=True) - 1
        aids_temp = Counter()
        for aid, w, t in zip(aids, weights, types):
            aids_temp[aid] += w * type_weight[t]
        aids3 = list(itertools.chain(*[top_15_buy2buy[aid] for aid in unique_buys if aid in top_15_buy2buy]))
        for aid in aids3:
            aids_temp[aid] += 0.1
        sorted_aids = [k for k, v in aids_temp.most_common(20)]
        return sorted_aids
    aids2 = list(itertools.chain(*[top_15_buys[aid] for aid in unique_aids if aid in top_15_buys]))
    aids3 = list(itertools.chain(*[top_15_buy2buy[aid] for aid in unique_buys if aid in top_15_buy2buy]))
    top_aids2 = [aid2 for aid2, cnt in Counter(aids2 + aids3).most_common(20) if aid2 not in unique_aids]
    result = unique_aids + top_aids2[: 20 - len(unique_aids)]
    return result + list(top_orders)[: 20 - len(result)]


pred_df_clicks = test_df.sort_values(["session", "ts"]).groupby(["session"]).apply(lambda x: suggest_clicks(x))
pred_df_buys = test_df.sort_values(["session", "ts"]).groupby(["session"]).apply(lambda x: suggest_buys(x))

clicks_pred_df = pd.DataFrame(pred_df_clicks.add_suffix("_clicks"), columns=["labels"]).reset_index()
orders_pred_df = pd.DataFrame(pred_df_buys.add_suffix("_orders"), columns=["labels"]).reset_index()
carts_pred_df = pd.DataFrame(pred_df_buys.add_suffix("_carts"), columns=["labels"]).reset_index()

pred_df = pd.concat([clicks_pred_df, orders_pred_df, carts_pred_df])
pred_df.columns = ["session_type", "labels"]
pred_df["labels"] = pred_df.labels.apply(lambda x: " ".join(map(str, x)))
pred_df.to_csv(os.path.join(OUT_PATH, "submission.csv"), index=False)
print(pred_df.head())
