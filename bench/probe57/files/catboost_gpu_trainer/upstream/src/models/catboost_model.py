"""CatBoost wrapper for the competition pipeline (same interface as LGBMModel / XGBModel).

The pipeline calls ``fit(tr_x, tr_y, va_x, va_y)`` once per fold, then ``predict`` and
``feature_importance``. Categorical columns are passed by name from the feature config.
"""
import logging
import os
from typing import Dict, List, Optional

import numpy as np
import pandas as pd
from catboost import CatBoostClassifier, CatBoostRegressor, Pool
from catboost.utils import get_gpu_device_count

from .base import BaseModel

logger = logging.getLogger(__name__)

DEFAULT_PARAMS: Dict = {
    "loss_function": "Logloss",
    "eval_metric": "AUC",
    "iterations": 20000,
    "learning_rate": 0.03,
    "depth": 8,
    "l2_leaf_reg": 3.0,
    "border_count": 254,
    "random_strength": 1.0,
    "bootstrap_type": "Poisson",
    "subsample": 0.8,
    "task_type": "GPU",
    "devices": "0",
    "gpu_ram_part": 0.95,
    "gpu_cat_features_storage": "GpuRam",
    "od_type": "Iter",
    "od_wait": 300,
    "allow_writing_files": False,
}


def default_task_type() -> str:
    """Used by the quick depth sweep: GPU when the box has one, CPU otherwise."""
    return "GPU" if get_gpu_device_count() > 0 else "CPU"


class CatBoostModel(BaseModel):
    def __init__(self, params: Optional[Dict] = None, cat_features: Optional[List[str]] = None,
                 task: str = "binary", name: str = "catboost"):
        super().__init__(name=name)
        self.params = dict(DEFAULT_PARAMS)
        if params:
            self.params.update(params)
        self.cat_features = cat_features or []
        self.task = task
        self.model = None

    def _estimator(self):
        if self.task == "regression":
            params = dict(self.params, loss_function="RMSE", eval_metric="RMSE")
            return CatBoostRegressor(**params)
        return CatBoostClassifier(**self.params)

    def _pool(self, x: pd.DataFrame, y=None) -> Pool:
        cats = [c for c in self.cat_features if c in x.columns]
        x = x.copy()
        for c in cats:
            x[c] = x[c].fillna("nan").astype(str)
        return Pool(x, label=y, cat_features=cats)

    def fit(self, tr_x: pd.DataFrame, tr_y, va_x: pd.DataFrame = None, va_y=None):
        train_pool = self._pool(tr_x, tr_y)
        valid_pool = self._pool(va_x, va_y) if va_x is not None else None
        self.model = self._estimator()
        logger.info("fitting %s on %s with task_type=%s devices=%s", self.name, tr_x.shape,
                    self.params["task_type"], self.params.get("devices"))
        self.model.fit(
            train_pool,
            eval_set=valid_pool,
            use_best_model=valid_pool is not None,
            verbose=500,
        )
        logger.info("best iteration %s, best score %s", self.model.get_best_iteration(),
                    self.model.get_best_score())
        return self

    def predict(self, x: pd.DataFrame) -> np.ndarray:
        pool = self._pool(x)
        if self.task == "regression":
            return self.model.predict(pool)
        return self.model.predict_proba(pool)[:, 1]

    def feature_importance(self, x: pd.DataFrame = None) -> pd.Series:
        imp = self.model.get_feature_importance(type="PredictionValuesChange")
        return pd.Series(imp, index=self.model.feature_names_).sort_values(ascending=False)

    def shap_values(self, x: pd.DataFrame) -> np.ndarray:
        # SHAP on GPU is not implemented by CatBoost; the calculation always runs on the host
        return self.model.get_feature_importance(self._pool(x), type="ShapValues")

    def save(self, path: str):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.model.save_model(path)

    def load(self, path: str):
        self.model = self._estimator()
        self.model.load_model(path)
        return self


def tune_depth(tr_x, tr_y, va_x, va_y, cat_features, depths=(6, 7, 8, 9, 10)):
    """Quick sweep over depth with a fixed learning rate; returns the best depth."""
    results = {}
    for depth in depths:
        params = dict(DEFAULT_PARAMS, depth=depth, iterations=3000, learning_rate=0.08,
                      task_type=default_task_type())
        if params["task_type"] == "CPU":
            params.pop("devices", None)
            params.pop("gpu_ram_part", None)
            params.pop("gpu_cat_features_storage", None)
            params["bootstrap_type"] = "Bernoulli"
        m = CatBoostModel(params, cat_features).fit(tr_x, tr_y, va_x, va_y)
        results[depth] = m.model.get_best_score()["validation"]["AUC"]
        logger.info("depth=%d auc=%.5f", depth, results[depth])
    best = max(results, key=results.get)
    logger.info("best depth %d", best)
    return best


def multi_gpu_params(n_gpus: int) -> Dict:
    """Spread one model over several cards ('0:1:2:3'); used by the full refit."""
    devices = ":".join(str(i) for i in range(n_gpus))
    return dict(DEFAULT_PARAMS, devices=devices, gpu_ram_part=0.9)


def refit_full(x: pd.DataFrame, y, cat_features, iterations: int, n_gpus: int = 2, seed: int = 0):
    params = multi_gpu_params(n_gpus)
    params.update(iterations=iterations, random_seed=seed)
    params.pop("od_type")
    params.pop("od_wait")
    model = CatBoostModel(params, cat_features)
    model.fit(x, y)
    return model
