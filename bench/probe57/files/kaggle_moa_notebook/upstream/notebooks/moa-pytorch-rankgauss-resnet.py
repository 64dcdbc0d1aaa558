#!/usr/bin/env python
# coding: utf-8

# # MoA | PyTorch | RankGauss + PCA + weight-normed MLP (CV 0.01562)
#
# Exported from the Kaggle notebook. Training runs on the GPU accelerator; the inference-only
# version loads the weights of the `moa-pytorch-weights` dataset instead (set TRAIN = False).

# In[1]:


get_ipython().system('nvidia-smi')
get_ipython().system('pip install ../input/iterative-stratification/iterative-stratification-master/ > /dev/null')


# In[2]:


import os
import random
import sys
import warnings

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from iterstrat.ml_stratifiers import MultilabelStratifiedKFold
from sklearn.decomposition import PCA
from sklearn.feature_selection import VarianceThreshold
from sklearn.metrics import log_loss
from sklearn.preprocessing import QuantileTransformer

warnings.filterwarnings("ignore")


# In[3]:


TRAIN = True
WEIGHTS_DIR = "../input/moa-pytorch-weights"
DEVICE = ("cuda" if torch.cuda.is_available() else "cpu")
EPOCHS = 25
BATCH_SIZE = 128
LEARNING_RATE = 1e-3
WEIGHT_DECAY = 1e-5
NFOLDS = 7
EARLY_STOPPING_STEPS = 10
EARLY_STOP = False
SEEDS = [0, 1, 2]
hidden_size = 1500


def seed_everything(seed=42):
    random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.backends.cudnn.deterministic = True


seed_everything(seed=42)


# In[4]:


train_features = pd.read_csv("../input/lish-moa/train_features.csv")
train_targets_scored = pd.read_csv("../input/lish-moa/train_targets_scored.csv")
test_features = pd.read_csv("../input/lish-moa/test_features.csv")
sample_submission = pd.read_csv("../input/lish-moa/sample_submission.csv")

GENES = [col for col in train_features.columns if col.startswith("g-")]
CELLS = [col for col in train_features.columns if col.startswith("c-")]


# In[5]:


# RankGauss
for col in GENES + CELLS:
    transformer = QuantileTransformer(n_quantiles=100, random_state=0, output_distribution="normal")
    vec_len = len(train_features[col].values)
    vec_len_test = len(test_features[col].values)
    raw_vec = train_features[col].values.reshape(vec_len, 1)
    transformer.fit(raw_vec)
    train_features[col] = transformer.transform(raw_vec).reshape(1, vec_len)[0]
    test_features[col] = transformer.transform(test_features[col].values.reshape(vec_len_test, 1)).reshape(1, vec_len_test)[0]


# In[6]:


# PCA features for genes and cells
def add_pca(prefix, cols, n_comp):
    data = pd.concat([pd.DataFrame(train_features[cols]), pd.DataFrame(test_features[cols])])
    data2 = PCA(n_components=n_comp, random_state=42).fit_transform(data[cols])
    train2 = data2[: train_features.shape[0]]
    test2 = data2[-test_features.shape[0]:]
    names = [f"pca_{prefix}-{i}" for i in range(n_comp)]
    return (pd.concat((train_features, pd.DataFrame(train2, columns=names)), axis=1),
            pd.concat((test_features, pd.DataFrame(test2, columns=names)), axis=1))


train_features, test_features = add_pca("G", GENES, 600)
train_features, test_features = add_pca("C", CELLS, 50)

var_thresh = VarianceThreshold(0.8)
data = train_features.append(test_features)
data_transformed = var_thresh.fit_transform(data.iloc[:, 4:])
train_features_transformed = data_transformed[: train_features.shape[0]]
test_features_transformed = data_transformed[-test_features.shape[0]:]
train_features = pd.DataFrame(train_features[["sig_id", "cp_type", "cp_time", "cp_dose"]].values.reshape(-1, 4),
                              columns=["sig_id", "cp_type", "cp_time", "cp_dose"])
train_features = pd.concat([train_features, pd.DataFrame(train_features_transformed)], axis=1)
test_features = pd.DataFrame(test_features[["sig_id", "cp_type", "cp_time", "cp_dose"]].values.reshape(-1, 4),
                             columns=["sig_id", "cp_type", "cp_time", "cp_dose"])
test_features = pd.concat([test_features, pd.DataFrame(test_features_transformed)], axis=1)


# In[7]:


train = train_features.merge(train_targets_scored, on="sig_id")
train = train[train["cp_type"] != "ctl_vehicle"].reset_index(drop=True)
test = test_features[test_features["cp_type"] != "ctl_vehicle"].reset_index(drop=True)
target = train[train_targets_scored.columns]
train = train.drop("cp_type", axis=1)
test = test.drop("cp_type", axis=1)
target_cols = target.drop("sig_id", axis=1).columns.values.tolist()

folds = train.copy()
mskf = MultilabelStratifiedKFold(n_splits=NFOLDS)
for f, (t_idx, v_idx) in enumerate(mskf.split(X=train, y=target)):
    folds.loc[v_idx, "kfold"] = int(f)
folds["kfold"] = folds["kfold"].astype(int)

feature_cols = [c for c in folds.columns if c not in target_cols and c not in ["kfold", "sig_id"]]
num_features = len(feature_cols)
num_targets = len(target_cols)


# In[8]:


class MoADataset:
    def __init__(self, features, targets=None):
        self.features = features
        self.targets = targets

    def __len__(self):
        return self.features.shape[0]

    def __getitem__(self, idx):
        dct = {"x": torch.tensor(self.features[idx, :], dtype=torch.float)}
        if self.targets is not None:
            dct["y"] = torch.tensor(self.targets[idx, :], dtype=torch.float)
        return dct


class SmoothBCEwLogits(nn.modules.loss._WeightedLoss):
    def __init__(self, weight=None, reduction="mean", smoothing=0.0):
        super().__init__(weight=weight, reduction=reduction)
        self.smoothing = smoothing
        self.weight = weight
        self.reduction = reduction

    @staticmethod
    def _smooth(targets, n_labels, smoothing=0.0):
        assert 0 <= smoothing < 1
        with torch.no_grad():
            targets = targets * (1.0 - smoothing) + 0.5 * smoothing
        return targets

    def forward(self, inputs, targets):
        targets = SmoothBCEwLogits._smooth(targets, inputs.size(-1), self.smoothing)
        loss = F.binary_cross_entropy_with_logits(inputs, targets, self.weight)
        return loss.mean() if self.reduction == "mean" else loss.sum()


class Model(nn.Module):
    def __init__(self, num_features, num_targets, hidden_size):
        super().__init__()
        self.batch_norm1 = nn.BatchNorm1d(num_features)
        self.dense1 = nn.utils.weight_norm(nn.Linear(num_features, hidden_size))
        self.batch_norm2 = nn.BatchNorm1d(hidden_size)
        self.dropout2 = nn.Dropout(0.25)
        self.dense2 = nn.utils.weight_norm(nn.Linear(hidden_size, hidden_size))
        self.batch_norm3 = nn.BatchNorm1d(hidden_size)
        self.dropout3 = nn.Dropout(0.25)
        self.dense3 = nn.utils.weight_norm(nn.Linear(hidden_size, num_targets))

    def forward(self, x):
        x = self.batch_norm1(x)
        x = F.leaky_relu(self.dense1(x))
        x = self.batch_norm2(x)
        x = self.dropout2(x)
        x = F.leaky_relu(self.dense2(x))
        x = self.batch_norm3(x)
        x = self.dropout3(x)
        return self.dense3(x)


# In[9]:


def train_fn(model, optimizer, scheduler, loss_fn, dataloader, device, scaler):
    model.train()
    final_loss = 0
    for data in dataloader:
        optimizer.zero_grad()
        inputs, targets = data["x"].to(device), data["y"].to(device)
        with torch.cuda.amp.autocast():
            outputs = model(inputs)
            loss = loss_fn(outputs, targets)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm(model.parameters(), 1000)
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        final_loss += loss.item()
    return final_loss / len(dataloader)


def valid_fn(model, loss_fn, dataloader, device):
    model.eval()
    final_loss = 0
    valid_preds = []
    for data in dataloader:
        inputs, targets = data["x"].to(device), data["y"].to(device)
        with torch.no_grad():
            outputs = model(inputs)
        final_loss += loss_fn(outputs, targets).item()
        valid_preds.append(outputs.sigmoid().detach().cpu().numpy())
    return final_loss / len(dataloader), np.concatenate(valid_preds)


def inference_fn(model, dataloader, device):
    model.eval()
    preds = []
    for data in dataloader:
        with torch.no_grad():
            outputs = model(data["x"].to(device))
        preds.append(outputs.sigmoid().detach().cpu().numpy())
    return np.concatenate(preds)


# In[10]:


def run_training(fold, seed):
    seed_everything(seed)
    trn_idx = folds[folds["kfold"] != fold].index
    val_idx = folds[folds["kfold"] == fold].index
    train_df = folds[folds["kfold"] != fold].reset_index(drop=True)
    valid_df = folds[folds["kfold"] == fold].reset_index(drop=True)
    x_train, y_train = train_df[feature_cols].values, train_df[target_cols].values
    x_valid, y_valid = valid_df[feature_cols].values, valid_df[target_cols].values

    trainloader = torch.utils.data.DataLoader(MoADataset(x_train, y_train), batch_size=BATCH_SIZE, shuffle=True,
                                              num_workers=2, pin_memory=True)
    validloader = torch.utils.data.DataLoader(MoADataset(x_valid, y_valid), batch_size=BATCH_SIZE, shuffle=False)

    model = Model(num_features=num_features, num_targets=num_targets, hidden_size=hidden_size)
    model.to(DEVICE)
    optimizer = optim.Adam(model.parameters(), lr=LEARNING_RATE, weight_decay=WEIGHT_DECAY)
    scheduler = optim.lr_scheduler.OneCycleLR(optimizer=optimizer, pct_start=0.1, div_factor=1e3,
                                              max_lr=1e-2, epochs=EPOCHS, steps_per_epoch=len(trainloader))
    loss_tr = SmoothBCEwLogits(smoothing=0.001)
    loss_va = nn.BCEWithLogitsLoss()
    scaler = torch.cuda.amp.GradScaler()

    oof = np.zeros((len(train), target.iloc[:, 1:].shape[1]))
    best_loss = np.inf
    early_step = 0
    for epoch in range(EPOCHS):
        train_loss = train_fn(model, optimizer, scheduler, loss_tr, trainloader, DEVICE, scaler)
        valid_loss, valid_preds = valid_fn(model, loss_va, validloader, DEVICE)
        print(f"SEED {seed} FOLD {fold} EPOCH {epoch} train {train_loss:.5f} valid {valid_loss:.5f}")
        if valid_loss < best_loss:
            best_loss = valid_loss
            oof[val_idx] = valid_preds
            torch.save(model.state_dict(), f"SEED{seed}_FOLD{fold}_.pth")
        elif EARLY_STOP:
            early_step += 1
            if early_step >= EARLY_STOPPING_STEPS:
                break
    return oof


def run_inference(fold, seed):
    x_test = test[feature_cols].values
    testloader = torch.utils.data.DataLoader(MoADataset(x_test), batch_size=BATCH_SIZE, shuffle=False)
    model = Model(num_features=num_features, num_targets=num_targets, hidden_size=hidden_size)
    path = f"SEED{seed}_FOLD{fold}_.pth" if TRAIN else os.path.join(WEIGHTS_DIR, f"SEED{seed}_FOLD{fold}_.pth")
    model.load_state_dict(torch.load(path))
    model.to(DEVICE)
    return inference_fn(model, testloader, DEVICE)


# In[11]:


oof = np.zeros((len(train), len(target_cols)))
predictions = np.zeros((len(test), len(target_cols)))
for seed in SEEDS:
    for fold in range(NFOLDS):
        if TRAIN:
            oof += run_training(fold, seed) / len(SEEDS)
        predictions += run_inference(fold, seed) / (NFOLDS * len(SEEDS))

train[target_cols] = oof
test[target_cols] = predictions

valid_results = train_targets_scored.drop(columns=target_cols).merge(train[["sig_id"] + target_cols], on="sig_id",
                                                                     how="left").fillna(0)
y_true = train_targets_scored[target_cols].values
y_pred = valid_results[target_cols].values
score = np.mean([log_loss(y_true[:, i], y_pred[:, i], labels=[0, 1]) for i in range(len(target_cols))])
print("CV log_loss: ", score)


# In[12]:


sub = sample_submission.drop(columns=target_cols).merge(test[["sig_id"] + target_cols], on="sig_id",
                                                        how="left").fillna(0)
sub.to_csv("submission.csv", index=False)
