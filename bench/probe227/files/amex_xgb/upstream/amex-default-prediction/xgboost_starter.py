#!/usr/bin/env python
# coding: utf-8
"""XGBoost Starter - [0.793] (AMEX Default Prediction), exported from the Kaggle notebook.

We use RAPIDS cuDF to load and feature-engineer the 16GB train set on the GPU, then
train XGBoost with the GPU hist algorithm. To save GPU memory the training DMatrix is
built with an iterator (IterLoadForDMatrix) so XGBoost never holds two copies of the data.

The out-of-fold and test predictions are saved as .npy so that the PyTorch stacking
model (src/models/stack_mlp.py) can use them as features.
"""
import gc
import os
import time

import numpy as np
import pandas as pd

import cudf
import cupy
import xgboost as xgb
from sklearn.model_selection import KFold

print("RAPIDS version", cudf.__version__)
print("XGB Version", xgb.__version__)

# VERSION NAME FOR SAVED MODEL FILES
VER = 1

# TRAIN RANDOM SEED
SEED = 42

# FILL NAN VALUE
NAN_VALUE = -127  # will fit in int8

# FOLDS PER MODEL
FOLDS = 5

TRAIN_PATH = "../input/amex-data-integer-dtypes-parquet-format/train.parquet"
TEST_PATH = "../input/amex-data-integer-dtypes-parquet-format/test.parquet"
LABEL_PATH = "../input/amex-default-prediction/train_labels.csv"
OOF_DIR = "./oof"
os.makedirs(OOF_DIR, exist_ok=True)


def read_file(path="", usecols=None):
    # LOAD DATAFRAME
    if usecols is not None:
        df = cudf.read_parquet(path, columns=usecols)
    else:
        df = cudf.read_parquet(path)
    # REDUCE DTYPE FOR CUSTOMER AND DATE
    df["customer_ID"] = df["customer_ID"].str[-16:].str.hex_to_int().astype("int64")
    df.S_2 = cudf.to_datetime(df.S_2)
    # SORT BY CUSTOMER AND DATE (so agg('last') works correctly)
    # df = df.sort_values(['customer_ID','S_2'])
    # df = df.reset_index(drop=True)
    # FILL NAN
    df = df.fillna(NAN_VALUE)
    print("shape of data:", df.shape)
    return df


def process_and_feature_engineer(df):
    # FEATURE ENGINEERING FROM
    # https://www.kaggle.com/code/huseyincot/amex-agg-data-how-it-created
    all_cols = [c for c in list(df.columns) if c not in ["customer_ID", "S_2"]]
    cat_features = ["B_30", "B_38", "D_114", "D_116", "D_117", "D_120", "D_126", "D_63", "D_64", "D_66", "D_68"]
    num_features = [col for col in all_cols if col not in cat_features]

    test_num_agg = df.groupby("customer_ID")[num_features].agg(["mean", "std", "min", "max", "last"])
    test_num_agg.columns = ["_".join(x) for x in test_num_agg.columns]

    test_cat_agg = df.groupby("customer_ID")[cat_features].agg(["count", "last", "nunique"])
    test_cat_agg.columns = ["_".join(x) for x in test_cat_agg.columns]

    df = cudf.concat([test_num_agg, test_cat_agg], axis=1)
    del test_num_agg, test_cat_agg
    print("shape after engineering", df.shape)
    return df


# ====================================================================================
# TRAIN DATA
# ====================================================================================
print("Reading train data...")
train = read_file(path=TRAIN_PATH)
train = process_and_feature_engineer(train)

targets = cudf.read_csv(LABEL_PATH)
targets["customer_ID"] = targets["customer_ID"].str[-16:].str.hex_to_int().astype("int64")
targets = targets.set_index("customer_ID")
train = train.merge(targets, left_index=True, right_index=True, how="left")
train.target = train.target.astype("int8")
del targets

# NEEDED TO MAKE CV DETERMINISTIC (cudf merge above randomly shuffles rows)
train = train.sort_index().reset_index()

# FEATURES
FEATURES = train.columns[1:-1]
print(f"There are {len(FEATURES)} features!")

# ====================================================================================
# XGB PARAMETERS
# ====================================================================================
xgb_parms = {
    "max_depth": 4,
    "learning_rate": 0.05,
    "subsample": 0.8,
    "colsample_bytree": 0.6,
    "eval_metric": "logloss",
    "objective": "binary:logistic",
    "tree_method": "gpu_hist",
    "predictor": "gpu_predictor",
    "random_state": SEED,
}


class IterLoadForDMatrix(xgb.core.DataIter):
    """Feed XGBoost the training data in batches to save GPU memory."""

    def __init__(self, df=None, features=None, target=None, batch_size=256 * 1024):
        self.features = features
        self.target = target
        self.df = df
        self.it = 0  # set iterator to 0
        self.batch_size = batch_size
        self.batches = int(np.ceil(len(df) / self.batch_size))
        super().__init__()

    def reset(self):
        """Reset the iterator"""
        self.it = 0

    def next(self, input_data):
        """Yield next batch of data."""
        if self.it == self.batches:
            return 0  # Return 0 when there's no more batch.
        a = self.it * self.batch_size
        b = min((self.it + 1) * self.batch_size, len(self.df))
        dt = cudf.DataFrame(self.df.iloc[a:b])
        input_data(data=dt[self.features], label=dt[self.target])  # , weight=dt['weight'])
        self.it += 1
        return 1


# https://www.kaggle.com/kyakovlev
# https://www.kaggle.com/competitions/amex-default-prediction/discussion/327534
def amex_metric_mod(y_true, y_pred):
    labels = np.transpose(np.array([y_true, y_pred]))
    labels = labels[labels[:, 1].argsort()[::-1]]
    weights = np.where(labels[:, 0] == 0, 20, 1)
    cut_vals = labels[np.cumsum(weights) <= int(0.04 * np.sum(weights))]
    top_four = np.sum(cut_vals[:, 0]) / np.sum(labels[:, 0])

    gini = [0, 0]
    for i in [1, 0]:
        labels = np.transpose(np.array([y_true, y_pred]))
        labels = labels[labels[:, i].argsort()[::-1]]
        weight = np.where(labels[:, 0] == 0, 20, 1)
        weight_random = np.cumsum(weight / np.sum(weight))
        total_pos = np.sum(labels[:, 0] * weight)
        cum_pos_found = np.cumsum(labels[:, 0] * weight)
        lorentz = cum_pos_found / total_pos
        gini[i] = np.sum((lorentz - weight_random) * weight)

    return 0.5 * (gini[1] / gini[0] + top_four)


importances = []
oof = []
train = train.to_pandas()  # free GPU memory
TRAIN_SUBSAMPLE = 1.0
gc.collect()

skf = KFold(n_splits=FOLDS, shuffle=True, random_state=SEED)
for fold, (train_idx, valid_idx) in enumerate(skf.split(train, train.target)):
    # TRAIN WITH SUBSAMPLE OF TRAIN FOLD DATA
    if TRAIN_SUBSAMPLE < 1.0:
        np.random.seed(SEED)
        train_idx = np.random.choice(train_idx, int(len(train_idx) * TRAIN_SUBSAMPLE), replace=False)
        np.random.seed(None)

    print("#" * 25)
    print("### Fold", fold + 1)
    print("### Train size", len(train_idx), "Valid size", len(valid_idx))
    print(f"### Training with {int(TRAIN_SUBSAMPLE * 100)}% fold data...")
    print("#" * 25)

    # TRAIN, VALID, TEST FOR FOLD K
    Xy_train = IterLoadForDMatrix(train.loc[train_idx], FEATURES, "target")
    X_valid = train.loc[valid_idx, FEATURES]
    y_valid = train.loc[valid_idx, "target"]

    dtrain = xgb.DeviceQuantileDMatrix(Xy_train, max_bin=256)
    dvalid = xgb.DMatrix(data=X_valid, label=y_valid)

    # TRAIN MODEL FOLD K
    t0 = time.time()
    model = xgb.train(
        xgb_parms,
        dtrain=dtrain,
        evals=[(dtrain, "train"), (dvalid, "valid")],
        num_boost_round=9999,
        early_stopping_rounds=100,
        verbose_eval=100,
    )
    model.save_model(f"XGB_v{VER}_fold{fold}.xgb")
    print(f"fold {fold} trained in {time.time() - t0:.0f}s")

    # GET FEATURE IMPORTANCE FOR FOLD K
    dd = model.get_score(importance_type="weight")
    df = pd.DataFrame({"feature": dd.keys(), f"importance_{fold}": dd.values()})
    importances.append(df)

    # INFER OOF FOLD K
    oof_preds = model.predict(dvalid)
    acc = amex_metric_mod(y_valid.values, oof_preds)
    print("Kaggle Metric =", acc, "\n")

    # SAVE OOF
    df = train.loc[valid_idx, ["customer_ID", "target"]].copy()
    df["oof_pred"] = oof_preds
    oof.append(df)

    del dtrain, Xy_train, dd, df
    del X_valid, y_valid, dvalid, model
    _ = gc.collect()

print("#" * 25)
oof = pd.concat(oof, axis=0, ignore_index=True).set_index("customer_ID")
acc = amex_metric_mod(oof.target.values, oof.oof_pred.values)
print("OVERALL CV Kaggle Metric =", acc)
oof.to_csv(f"{OOF_DIR}/oof_xgb_v{VER}.csv")
np.save(f"{OOF_DIR}/oof_xgb_v{VER}.npy", oof.oof_pred.values)

# ====================================================================================
# TEST DATA (processed in 4 parts to fit in 16GB GPU memory)
# ====================================================================================
NUM_PARTS = 4
test_customers = read_file(path=TEST_PATH, usecols=["customer_ID", "S_2"])["customer_ID"].unique()
customers = np.array_split(test_customers.values_host, NUM_PARTS)
test_preds = []
for k, part in enumerate(customers):
    print(f"Reading test part {k + 1}...")
    test = read_file(path=TEST_PATH)
    test = test.loc[test.customer_ID.isin(part)]
    test = process_and_feature_engineer(test)
    dtest = xgb.DMatrix(data=test[FEATURES])
    preds = np.zeros(len(test))
    for fold in range(FOLDS):
        model = xgb.Booster()
        model.load_model(f"XGB_v{VER}_fold{fold}.xgb")
        preds += model.predict(dtest) / FOLDS
    test_preds.append(pd.DataFrame({"customer_ID": test.index.to_pandas(), "prediction": preds}))
    del test, dtest, model
    cupy.get_default_memory_pool().free_all_blocks()
    gc.collect()

sub = pd.concat(test_preds, ignore_index=True)
sub.to_csv(f"submission_xgb_v{VER}.csv", index=False)
np.save(f"{OOF_DIR}/test_xgb_v{VER}.npy", sub.prediction.values)
print("Submission file shape is", sub.shape)
