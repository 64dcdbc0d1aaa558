#!/usr/bin/env python
# coding: utf-8

# # TabNet vs. GBDT baseline
#
# Tabular playground: TabNet (pytorch-tabnet) against GPU XGBoost and a cuML random forest.
# Run on a single-GPU notebook instance; all models use the same 5-fold split.

# In[1]:


get_ipython().system('pip install -q pytorch-tabnet==4.1.0')


# In[2]:


get_ipython().run_line_magic('env', 'CUDA_VISIBLE_DEVICES=0')
get_ipython().system('nvidia-smi')


# In[3]:


import os
import gc
import random
import warnings

import numpy as np
import pandas as pd
import torch
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import LabelEncoder

from pytorch_tabnet.tab_model import TabNetClassifier
from pytorch_tabnet.pretraining import TabNetPretrainer
import xgboost as xgb

try:
    import cudf as xd  # GPU dataframe when RAPIDS is installed
except ImportError:
    import pandas as xd

from cuml.ensemble import RandomForestClassifier as cuRF

warnings.filterwarnings("ignore")


# In[4]:


SEED = 42
N_FOLDS = 5
TARGET = "target"
DEVICE = 'cuda' if torch.cuda.is_available() else 'cpu'
print("device:", DEVICE, "| torch", torch.__version__)

def seed_everything(seed=SEED):
    random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.backends.cudnn.deterministic = True

seed_everything()


# In[5]:


train = xd.read_csv("../input/tabular-playground/train.csv")
test = xd.read_csv("../input/tabular-playground/test.csv")
if hasattr(train, "to_pandas"):
    train, test = train.to_pandas(), test.to_pandas()
print(train.shape, test.shape)
train.head()


# In[6]:


cat_cols = [c for c in train.columns if c.startswith("cat")]
num_cols = [c for c in train.columns if c.startswith("cont")]
features = cat_cols + num_cols

cat_dims = []
for c in cat_cols:
    le = LabelEncoder()
    full = pd.concat([train[c], test[c]]).astype(str)
    le.fit(full)
    train[c] = le.transform(train[c].astype(str))
    test[c] = le.transform(test[c].astype(str))
    cat_dims.append(len(le.classes_))

cat_idxs = [features.index(c) for c in cat_cols]
X = train[features].values
y = train[TARGET].values
X_test = test[features].values


# ## TabNet (self-supervised pretraining + fine-tuning)

# In[7]:


pretrainer = TabNetPretrainer(
    cat_idxs=cat_idxs, cat_dims=cat_dims, cat_emb_dim=3,
    optimizer_fn=torch.optim.Adam, optimizer_params=dict(lr=2e-2),
    mask_type="entmax", device_name=DEVICE,
)
pretrainer.fit(X_train=X, eval_set=[X_test], pretraining_ratio=0.8, max_epochs=30, batch_size=4096,
               virtual_batch_size=512, num_workers=2, pin_memory=True)


# In[8]:


skf = StratifiedKFold(n_splits=N_FOLDS, shuffle=True, random_state=SEED)
oof_tabnet = np.zeros(len(train))
pred_tabnet = np.zeros(len(test))

for fold, (tr, va) in enumerate(skf.split(X, y)):
    clf = TabNetClassifier(
        n_d=32, n_a=32, n_steps=4, gamma=1.5, lambda_sparse=1e-4,
        cat_idxs=cat_idxs, cat_dims=cat_dims, cat_emb_dim=3,
        optimizer_fn=torch.optim.Adam, optimizer_params=dict(lr=2e-2, weight_decay=1e-5),
        scheduler_fn=torch.optim.lr_scheduler.OneCycleLR,
        scheduler_params=dict(max_lr=5e-2, steps_per_epoch=int(len(tr) / 4096) + 1, epochs=50),
        mask_type="entmax", device_name=DEVICE, verbose=10, seed=SEED + fold,
    )
    clf.fit(X[tr], y[tr], eval_set=[(X[va], y[va])], eval_metric=["auc"], max_epochs=50, patience=10,
            batch_size=4096, virtual_batch_size=512, from_unsupervised=pretrainer)
    oof_tabnet[va] = clf.predict_proba(X[va])[:, 1]
    pred_tabnet += clf.predict_proba(X_test)[:, 1] / N_FOLDS
    print(f"fold {fold} TabNet AUC {roc_auc_score(y[va], oof_tabnet[va]):.5f}")
    del clf
    gc.collect()
    torch.cuda.empty_cache()

print("TabNet OOF AUC", roc_auc_score(y, oof_tabnet))


# ## XGBoost (GPU)

# In[9]:


xgb_params = dict(
    n_estimators=5000, learning_rate=0.02, max_depth=8, subsample=0.8, colsample_bytree=0.5,
    tree_method="gpu_hist", predictor="gpu_predictor", gpu_id=0,
    eval_metric="auc", early_stopping_rounds=200, random_state=SEED,
)
oof_xgb = np.zeros(len(train))
pred_xgb = np.zeros(len(test))
for fold, (tr, va) in enumerate(skf.split(X, y)):
    model = xgb.XGBClassifier(**xgb_params)
    model.fit(X[tr], y[tr], eval_set=[(X[va], y[va])], verbose=500)
    oof_xgb[va] = model.predict_proba(X[va])[:, 1]
    pred_xgb += model.predict_proba(X_test)[:, 1] / N_FOLDS
print("XGB OOF AUC", roc_auc_score(y, oof_xgb))


# ## cuML random forest

# In[10]:


oof_rf = np.zeros(len(train))
pred_rf = np.zeros(len(test))
for fold, (tr, va) in enumerate(skf.split(X, y)):
    rf = cuRF(n_estimators=400, max_depth=16, n_bins=128, random_state=SEED)
    rf.fit(X[tr].astype(np.float32), y[tr].astype(np.int32))
    oof_rf[va] = rf.predict_proba(X[va].astype(np.float32))[:, 1]
    pred_rf += rf.predict_proba(X_test.astype(np.float32))[:, 1] / N_FOLDS
print("cuRF OOF AUC", roc_auc_score(y, oof_rf))


# ## Blend & submit

# In[11]:


blend_oof = 0.4 * oof_tabnet + 0.45 * oof_xgb + 0.15 * oof_rf
print("Blend OOF AUC", roc_auc_score(y, blend_oof))

sub = pd.read_csv("../input/tabular-playground/sample_submission.csv")
sub[TARGET] = 0.4 * pred_tabnet + 0.45 * pred_xgb + 0.15 * pred_rf
sub.to_csv("submission.csv", index=False)
sub.head()
