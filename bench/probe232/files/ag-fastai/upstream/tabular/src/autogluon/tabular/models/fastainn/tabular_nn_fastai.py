import copy
import logging
import os
import time
from builtins import classmethod
from pathlib import Path

import numpy as np
import pandas as pd
import sklearn

from autogluon.common.features.types import R_BOOL, R_CATEGORY, R_DATETIME, R_FLOAT, R_INT, S_TEXT_AS_CATEGORY, S_TEXT_NGRAM
from autogluon.common.utils.pandas_utils import get_approximate_df_mem_usage
from autogluon.common.utils.resource_utils import ResourceManager
from autogluon.common.utils.try_import import try_import_fastai
from autogluon.core.constants import BINARY, MULTICLASS, QUANTILE, REGRESSION
from autogluon.core.hpo.constants import RAY_BACKEND
from autogluon.core.models import AbstractModel
from autogluon.core.utils.exceptions import TimeLimitExceeded
from autogluon.core.utils.files import make_temp_directory
from autogluon.core.utils.loaders import load_pkl
from autogluon.core.utils.savers import save_pkl

from .hyperparameters.parameters import get_param_baseline
from .hyperparameters.searchspaces import get_default_searchspace

# FIXME: Has a leak somewhere, training additional models in a single python script will slow down training for each additional model. Gets very slow after 20+ models (10x+ slowdown)
#  Slowdown does not appear to impact Mac OS
# Reproduced with raw torch: https://github.com/pytorch/pytorch/issues/31867
# https://forums.fast.ai/t/runtimeerror-received-0-items-of-ancdata/48935
# https://github.com/pytorch/pytorch/issues/973
# https://pytorch.org/docs/master/multiprocessing.html#file-system-file-system
# Slowdown bug not experienced on Linux if 'torch.multiprocessing.set_sharing_strategy('file_system')' commented out
# NOTE: If below line is commented out, Torch uses many file descriptors. If issues arise, increase ulimit through 'ulimit -n 2048' or larger. Default on Linux is 1024.
# torch.multiprocessing.set_sharing_strategy('file_system')

# MacOS issue: torchvision==0.7.0 + torch==1.6.0 can cause segfaults; use torch==1.2.0 torchvision==0.4.0

LABEL = "__label__"
MISSING = "__!#ag_internal_missing#!__"

logger = logging.getLogger(__name__)


class NNFastAiTabularModel(AbstractModel):
    """Class for fastai v1 neural network models that operate on tabular data.

    Hyperparameters:
        y_scaler: on a regression problems, the model can give unreasonable predictions on unseen data.
        This attribute allows to pass a scaler for y values to address this problem. Please note that intermediate
        iteration metrics will be affected by this transform and as a result intermediate iteration scores will be
        different from the final ones (these will be correct).
        https://github.com/fastai/fastai/issues/3077

        'layers': list of hidden layers sizes; None - use model's heuristics; default is None

        'emb_drop': embedding layers dropout; defaut is 0.1

        'ps': linear layers dropout - list of values applied to every layer in `layers`; default is [0.1]

        'bs': batch size; default is 256

        'lr': maximum learning rate for one cycle policy; default is 1e-2;
        see also https://fastai1.fast.ai/train.html#fit_one_cycle, One-cycle policy paper: https://arxiv.org/abs/1803.09820

        'epochs': number of epochs; default is 30

        # Early stopping settings. See more details here: https://fastai1.fast.ai/callbacks.tracker.html#EarlyStoppingCallback
        'early.stopping.min_delta': 0.0001,
        'early.stopping.patience': 10,
    """

    ag_key = "FASTAI"
    ag_name = "NeuralNetFastAI"
    ag_priority = 50
    seed_name = "random_state"

    model_internals_file_name = "model-internals.pkl"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.cat_columns = None
        self.cont_columns = None
        self.columns_fills = None
        self._columns_fills_names = None
        self.procs = None
        self.y_scaler = None
        self._cont_normalization = None
        self._load_model = None  # Whether to load inner model when loading.
        self._num_cpus_infer = None

    def _get_device(self, num_gpus: float):
        import torch

        if num_gpus > 0 and torch.cuda.is_available():
            return torch.device("cuda")
        return torch.device("cpu")

    def _preprocess_train(self, X, y, X_val, y_val, **kwargs):
        from fastai.data.block import CategoryBlock, RegressionBlock
        from fastai.data.transforms import IndexSplitter
        from fastai.tabular.core import TabularPandas
        from fastcore.basics import range_of

        X = self.preprocess(X, fit=True)
        if X_val is not None:
            X_val = self.preprocess(X_val)

        from fastai.tabular.core import Categorify

        self.procs = [Categorify]

        if self.problem_type in [REGRESSION, QUANTILE] and self.y_scaler is not None:
            y_norm = pd.Series(self.y_scaler.fit_transform(y.values.reshape(-1, 1)).reshape(-1))
            y_val_norm = pd.Series(self.y_scaler.transform(y_val.values.reshape(-1, 1)).reshape(-1)) if y_val is not None else None
            logger.log(0, f"Training with scaled targets: {self.y_scaler} - !!! NN training metric will be different from the final results !!!")
        else:
            y_norm = y
            y_val_norm = y_val

        logger.log(15, f"Using {len(self.cont_columns)} cont features")
        df_train, train_idx, val_idx = self._generate_datasets(X, y_norm, X_val, y_val_norm)
        y_block = RegressionBlock() if self.problem_type in [REGRESSION, QUANTILE] else CategoryBlock()

        # Copy cat_columns and cont_columns because TabularList is mutating the list
        data = TabularPandas(
            df_train,
            cat_names=self.cat_columns.copy(),
            cont_names=self.cont_columns.copy(),
            procs=self.procs,
            y_block=y_block,
            y_names=LABEL,
            splits=IndexSplitter(val_idx)(range_of(df_train)),
        )
        return data

    def _fit(self, X, y, X_val=None, y_val=None, time_limit=None, num_cpus=None, num_gpus=0, sample_weight=None, **kwargs):
        try_import_fastai()
        import torch
        from fastai import torch_core
        from fastai.tabular.learner import tabular_learner
        from fastai.tabular.model import tabular_config

        from .fastai_helpers import export, medae, mse_loss_wrapper
        from .quantile_helpers import HuberPinballLoss

        torch.set_num_threads(num_cpus)
        start_time = time.time()
        if sample_weight is not None:  # TODO: support
            logger.log(15, "sample_weight not yet supported for NNFastAiTabularModel, this model will ignore them in training.")

        params = self._get_model_params()

        self.y_scaler = params.get("y_scaler", None)
        if self.y_scaler is not None:
            self.y_scaler = copy.deepcopy(self.y_scaler)

        if num_cpus is None:
            num_cpus = ResourceManager.get_cpu_count()
        self._num_cpus_infer = params.pop("_num_cpus_infer", 1)

        device = self._get_device(num_gpus)
        torch_core.defaults.device = device
        if device.type == "cuda":
            torch_core.defaults.use_cuda = True
            logger.log(15, f"Training on GPU: {torch.cuda.get_device_name(device)}")

        logger.log(15, f"Fitting Neural Network with parameters {params}...")
        data = self._preprocess_train(X, y, X_val, y_val)

        nn_metric, objective_func_name = self.__get_objective_func_name(self.stopping_metric)
        objective_func_name_to_monitor = self.__get_objective_func_to_monitor(objective_func_name)
        objective_optim_mode = np.less if objective_func_name in ["root_mean_squared_error", "mean_squared_error", "mean_absolute_error", "median_absolute_error", "r2"] else np.greater

        # TODO: calculate max emb concat layer size and use 1st layer as that value and 2nd in between number of classes and the value
        if params.get("layers", None) is not None:
            layers = params["layers"]
        elif self.problem_type in [REGRESSION, BINARY]:
            layers = [200, 100]
        elif self.problem_type == QUANTILE:
            base_size = max(len(self.quantile_levels) * 4, 128)
            layers = [base_size, base_size, base_size]
        else:
            base_size = max(data.c * 2, 100)
            layers = [base_size * 2, base_size]

        loss_func = None
        if self.problem_type in [REGRESSION, QUANTILE] and self.y_scaler is not None:
            loss_func = mse_loss_wrapper
        elif self.problem_type == QUANTILE:
            loss_func = HuberPinballLoss(self.quantile_levels, alpha=params["alpha"])

        bs = params["bs"]
        if bs > len(X):
            bs = max(int(len(X) / 10), 2)
        # pin_memory only helps when the batches go to a GPU
        dls = data.dataloaders(bs=bs, num_workers=0, device=device, pin_memory=device.type == "cuda")

        config = tabular_config(ps=params["ps"], embed_p=params["emb_drop"])
        self.model = tabular_learner(
            dls, layers=layers, config=config, n_out=len(self.quantile_levels) if self.problem_type == QUANTILE else None, loss_func=loss_func, metrics=nn_metric
        )
        logger.log(15, self.model.model)

        fname = "model"
        save_callback = _get_save_callback(self.path, fname, objective_func_name_to_monitor, objective_optim_mode)
        with make_temp_directory() as temp_dir:
            with self.model.no_bar(), self.model.no_logging():
                original_path = self.model.path
                self.model.path = Path(temp_dir)
                epochs = params["epochs"] if time_limit is None else self._get_epochs_for_time_limit(time_limit, start_time)
                self.model.fit_one_cycle(epochs, params["lr"], cbs=[save_callback])
                self.model.load(fname)
                self.model.path = original_path
        if device.type == "cuda":  # free memory for the next model in the stack
            torch.cuda.empty_cache()

    def _get_epochs_for_time_limit(self, time_limit, start_time):
        time_left = time_limit - (time.time() - start_time)
        return max(1, int(time_left / 3))

    def __get_objective_func_name(self, stopping_metric):
        return None, stopping_metric.name

    def __get_objective_func_to_monitor(self, objective_func_name):
        return "valid_loss" if objective_func_name is None else objective_func_name

    def _generate_datasets(self, X, y, X_val, y_val):
        df_train = pd.concat([X, X_val], ignore_index=True)
        df_train[LABEL] = pd.concat([y, y_val], ignore_index=True)
        train_idx = np.arange(len(X))
        if X_val is None:
            # use validation set for refit_full case - it's not going to be used for early stopping
            val_idx = np.array([0, 1]) + len(train_idx)
            df_train = pd.concat([df_train, df_train[:2]], ignore_index=True)
        else:
            val_idx = np.arange(len(X_val)) + len(X)
        return df_train, train_idx, val_idx

    def _predict_proba(self, X, **kwargs):
        from fastai.tabular.core import TabularPandas

        X = self.preprocess(X, **kwargs)
        single_row = len(X) == 1
        if single_row:
            X = pd.concat([X, X]).reset_index(drop=True)
        test_dl = self.model.dls.test_dl(X, inplace=True)
        preds, _ = self.model.get_preds(dl=test_dl)
        preds = preds.numpy()
        return preds[:1] if single_row else preds

    def save(self, path: str = None, verbose=True) -> str:
        from .fastai_helpers import export

        self._load_model = self.model is not None
        __model = self.model
        self.model = None
        path = super().save(path=path, verbose=verbose)
        self.model = __model
        # Export model
        if self._load_model:
            save_pkl.save_with_fn(f"{path}{self.model_internals_file_name}", self.model, pickle_fn=lambda m, buffer: export(m, buffer), verbose=verbose)
        self._load_model = None
        return path

    @classmethod
    def load(cls, path: str, reset_paths=True, verbose=True):
        from fastai.learner import load_learner

        model = super().load(path, reset_paths=reset_paths, verbose=verbose)
        if model._load_model:
            model.model = load_pkl.load_with_fn(f"{model.path}{model.model_internals_file_name}", lambda p: load_learner(p, cpu=True), verbose=verbose)
        model._load_model = None
        return model

    def get_minimum_resources(self, is_gpu_available=False):
        minimum_resources = {"num_cpus": 1}
        if is_gpu_available:
            minimum_resources["num_gpus"] = 0.5
        return minimum_resources


def _get_save_callback(path, fname, monitor, comp):
    from fastai.callback.tracker import SaveModelCallback

    return SaveModelCallback(monitor=monitor, comp=comp, fname=fname, reset_on_fit=True)
