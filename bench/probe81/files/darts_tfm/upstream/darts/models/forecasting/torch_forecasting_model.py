"""
This file contains several abstract classes:

    * TorchForecastingModel is the super-class of all torch (deep learning) darts forecasting models.

    * PastCovariatesTorchModel(TorchForecastingModel) for torch models consuming only past-observed covariates.
    * FutureCovariatesTorchModel(TorchForecastingModel) for torch models consuming only future values of
      future covariates.
    * DualCovariatesTorchModel(TorchForecastingModel) for torch models consuming past and future values of some single
      future covariates.
    * MixedCovariatesTorchModel(TorchForecastingModel) for torch models consuming both past-observed
      as well as past and future values of some future covariates.
    * SplitCovariatesTorchModel(TorchForecastingModel) for torch models consuming past-observed as well as future
      values of some future covariates.
"""

import copy
import datetime
import inspect
import os
import shutil
from abc import ABC, abstractmethod
from glob import glob
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import pytorch_lightning as pl
import torch
from pytorch_lightning import loggers as pl_loggers
from torch import Tensor
from torch.utils.data import DataLoader

from darts.logging import get_logger, raise_if, raise_if_not, raise_log
from darts.models.forecasting.forecasting_model import GlobalForecastingModel
from darts.models.forecasting.pl_forecasting_module import PLForecastingModule
from darts.timeseries import TimeSeries
from darts.utils.data.training_dataset import TrainingDataset
from darts.utils.torch import random_method

DEFAULT_DARTS_FOLDER = "darts_logs"
CHECKPOINTS_FOLDER = "checkpoints"
RUNS_FOLDER = "runs"
INIT_MODEL_NAME = "_model.pth.tar"

# pickling a TorchForecastingModel will not save below attributes: the keys specify the
# attributes to be ignored, and the values are the default values getting assigned upon loading
TFM_ATTRS_NO_PICKLE = {"model": None, "trainer": None}

logger = get_logger(__name__)


def _get_checkpoint_folder(work_dir, model_name):
    return os.path.join(work_dir, model_name, CHECKPOINTS_FOLDER)


def _get_logs_folder(work_dir, model_name):
    return os.path.join(work_dir, model_name)


def _get_runs_folder(work_dir, model_name):
    return os.path.join(work_dir, model_name)


def _get_checkpoint_fname(work_dir, model_name, best=False):
    checkpoint_dir = _get_checkpoint_folder(work_dir, model_name)
    path = os.path.join(checkpoint_dir, "best-*" if best else "last-*")

    checklist = glob(path)
    if len(checklist) == 0:
        raise_log(FileNotFoundError(f"There is no file matching prefix {path} in {checkpoint_dir}"), logger)

    file_name = max(checklist, key=os.path.getctime)
    return os.path.basename(file_name)


class TorchForecastingModel(GlobalForecastingModel, ABC):
    @random_method
    def __init__(
        self,
        batch_size: int = 32,
        n_epochs: int = 100,
        model_name: str = None,
        work_dir: str = os.path.join(os.getcwd(), DEFAULT_DARTS_FOLDER),
        log_tensorboard: bool = False,
        nr_epochs_val_period: int = 1,
        force_reset: bool = False,
        save_checkpoints: bool = False,
        add_encoders: Optional[dict] = None,
        random_state: Optional[int] = None,
        pl_trainer_kwargs: Optional[dict] = None,
        show_warnings: bool = False,
    ):
        """Pytorch Lightning (PL)-based Forecasting Model.

        pl_trainer_kwargs
            By default :class:`TorchForecastingModel` creates a PyTorch Lightning Trainer with several useful presets
            that performs the training, validation and prediction processes. These presets include automatic
            checkpointing, tensorboard logging, setting the torch device and more.
            With ``pl_trainer_kwargs`` you can add additional kwargs to instantiate the PyTorch Lightning trainer
            object. Check the `PL Trainer documentation
            <https://pytorch-lightning.readthedocs.io/en/stable/common/trainer.html>`_ for more information about the
            supported kwargs. Default: ``None``.
            Running on GPU(s) is also possible using ``pl_trainer_kwargs`` by specifying keys ``"accelerator",
            "devices", and "auto_select_gpus"``. Some examples for setting the devices inside the ``pl_trainer_kwargs``
            dict:

            - ``{"accelerator": "cpu"}`` for CPU,
            - ``{"accelerator": "gpu", "devices": [i]}`` to use only GPU ``i`` (``i`` must be an integer),
            - ``{"accelerator": "gpu", "devices": -1, "auto_select_gpus": True}`` to use all available GPUS.
        """
        super().__init__(add_encoders=add_encoders)
        suppress_lightning_warnings(suppress_all=not show_warnings)

        # save model parameters here in case they are needed for rebuilding the model
        self.batch_size = batch_size
        self.n_epochs = n_epochs
        self.model_name = model_name if model_name is not None else f"{datetime.datetime.now():%Y-%m-%d_%H_%M_%S}"
        self.work_dir = work_dir
        self.save_checkpoints = save_checkpoints
        self.force_reset = force_reset

        # by default models are deterministic (i.e. not probabilistic)
        self.model: Optional[PLForecastingModule] = None
        self.train_sample: Optional[Tuple] = None
        self.output_dim: Optional[int] = None

        # pytorch lightning trainer will be created at training time
        self.trainer: Optional[pl.Trainer] = None
        self.load_ckpt_path: Optional[str] = None

        # get pytorch lightning trainer parameters
        self.trainer_params: Dict[str, Any] = {
            "logger": pl_loggers.TensorBoardLogger(save_dir=work_dir, name=self.model_name, default_hp_metric=False)
            if log_tensorboard else False,
            "max_epochs": n_epochs,
            "check_val_every_n_epoch": nr_epochs_val_period,
            "enable_checkpointing": save_checkpoints,
            "callbacks": [],
        }

        # update trainer parameters with user defined `pl_trainer_kwargs`
        if pl_trainer_kwargs is not None:
            pl_trainer_kwargs_copy = {key: val for key, val in pl_trainer_kwargs.items()}
            self.n_epochs = pl_trainer_kwargs_copy.get("max_epochs", self.n_epochs)
            self.trainer_params["callbacks"] += pl_trainer_kwargs.get("callbacks", [])
            self.trainer_params = dict(self.trainer_params, **pl_trainer_kwargs_copy)

    def _setup_trainer(self, trainer: Optional[pl.Trainer], model: PLForecastingModule, verbose: Optional[bool] = None,
                       epochs: int = 0) -> pl.Trainer:
        """Sets up a PyTorch-Lightning trainer (if not already provided) for training or prediction."""
        if trainer is not None:
            return trainer

        trainer_params = {key: val for key, val in self.trainer_params.items()}
        has_progress_bar = any([isinstance(cb, pl.callbacks.ProgressBar) for cb in trainer_params.get("callbacks", [])])
        # we ignore `verbose` if `trainer` has a progress bar, to avoid errors from lightning
        if verbose is not None and not has_progress_bar:
            trainer_params["enable_model_summary"] = verbose if model.epochs_trained == 0 else False
            trainer_params["enable_progress_bar"] = verbose

        # the trainer precision follows the dtype of the training series (float64 by default in darts)
        precision = trainer_params.pop("precision", None)
        dtype = self.train_sample[0].dtype
        if np.issubdtype(dtype, np.float32):
            precision = "32-true"
        elif np.issubdtype(dtype, np.float64):
            precision = "64-true"
        trainer_params["precision"] = precision
        return self._init_trainer(trainer_params=trainer_params, max_epochs=epochs)

    @staticmethod
    def _init_trainer(trainer_params: dict, max_epochs: Optional[int] = None) -> pl.Trainer:
        """Initializes a PyTorch-Lightning trainer for training or prediction from `trainer_params`."""
        trainer_params_copy = {key: val for key, val in trainer_params.items()}
        if max_epochs is not None:
            trainer_params_copy["max_epochs"] = max_epochs
        return pl.Trainer(**trainer_params_copy)

    @abstractmethod
    def _create_model(self, train_sample: Tuple[Tensor]) -> PLForecastingModule:
        """Create the underlying PyTorch Lightning model"""

    def to_cpu(self):
        """Updates the PyTorch Lightning Trainer parameters to move the model to CPU the next time :func:`fit()` or
        :func:`predict()` is called.
        """
        self.trainer_params["accelerator"] = "cpu"
        self.trainer_params = {k: v for k, v in self.trainer_params.items() if k not in ["devices", "auto_select_gpus"]}

    @random_method
    def fit_from_dataset(self, train_dataset: TrainingDataset, val_dataset: Optional[TrainingDataset] = None,
                         trainer: Optional[pl.Trainer] = None, verbose: Optional[bool] = None, epochs: int = 0,
                         num_loader_workers: int = 0, dataloader_kwargs: Optional[Dict[str, Any]] = None):
        self._verify_train_dataset_type(train_dataset)
        raise_if(len(train_dataset) == 0, "The provided training time series dataset is too short for obtaining even one "
                 "training point.", logger)
        train_sample = train_dataset[0]
        if self.model is None:
            self.train_sample, self.output_dim = train_sample, train_sample[-1].shape[1]
            self.model = self._init_model(trainer)

        # Setting drop_last to False makes the model see each sample at least once, and guarantee the presence of at
        # least one batch no matter the chosen batch size
        dataloader_kwargs = dict(
            {
                "batch_size": self.batch_size,
                "pin_memory": True,
                "drop_last": False,
                "collate_fn": self._batch_collate_fn,
                "num_workers": num_loader_workers,
            },
            **(dataloader_kwargs or dict()),
        )
        train_loader = DataLoader(train_dataset, shuffle=True, **dataloader_kwargs)
        val_loader = None if val_dataset is None else DataLoader(val_dataset, shuffle=False, **dataloader_kwargs)

        # if user wants to train the model for more epochs, ignore the n_epochs parameter
        train_num_epochs = epochs if epochs > 0 else self.n_epochs
        self.trainer = self._setup_trainer(trainer, self.model, verbose, train_num_epochs)
        ckpt_path = self.load_ckpt_path
        self.load_ckpt_path = None
        self.trainer.fit(self.model, train_dataloaders=train_loader, val_dataloaders=val_loader, ckpt_path=ckpt_path)
        self.model = self.trainer.model
        return self

    def save(self, path: Optional[str] = None, clean: bool = False) -> None:
        """Saves the model under a given path, and its checkpoint (.ckpt) under the same path plus ".ckpt"."""
        if path is None:
            path = self._default_save_path() + ".pt"
        # save the TorchForecastingModel (does not save the PyTorch LightningModule, and Trainer)
        with open(path, "wb") as f_out:
            torch.save(self if not clean else self._clean(), f_out)
        # save the LightningModule checkpoint (weights only with `save_checkpoints=False`)
        path_ptl_ckpt = path + ".ckpt"
        if self.trainer is not None:
            self.trainer.save_checkpoint(path_ptl_ckpt)

    @staticmethod
    def load(path: str, pl_trainer_kwargs: Optional[dict] = None, **kwargs) -> "TorchForecastingModel":
        """Loads a model from a given file path.

        Example for loading a general save from :class:`RNNModel`:

        .. highlight:: python
        .. code-block:: python

            from darts.models import RNNModel
            model_loaded = RNNModel.load(path)

        Example for loading an :class:`RNNModel` to CPU that was saved on GPU:

        .. code-block:: python

            model_loaded = RNNModel.load(path, map_location="cpu")
            model_loaded.to_cpu()

        **kwargs
            Additional kwargs for PyTorch Lightning's :func:`LightningModule.load_from_checkpoint()` method,
            such as ``map_location`` to load the model onto a different device than the one on which it was saved.
        """
        # load the base TorchForecastingModel (does not contain the actual PyTorch LightningModule)
        with open(path, "rb") as fin:
            model: TorchForecastingModel = torch.load(fin, weights_only=False, map_location=kwargs.get("map_location", None))

        # if a checkpoint was saved, we also load the PyTorch LightningModule from checkpoint
        path_ptl_ckpt = path + ".ckpt"
        if os.path.exists(path_ptl_ckpt):
            model.model = model._load_from_checkpoint(path_ptl_ckpt, **kwargs)
        else:
            model._fit_called = False
            logger.warning(f"Model was loaded without weights since no PyTorch LightningModule checkpoint ('.ckpt') "
                           f"could be found at {path_ptl_ckpt}. Please call `fit()` before calling `predict()`.")

        if pl_trainer_kwargs is not None:
            model.trainer_params = dict(model.trainer_params, **pl_trainer_kwargs)
        return model

    def _load_from_checkpoint(self, file_path, **kwargs):
        """Loads a checkpoint for the underlying :class:`PLForecastingModule` (PLM) model."""
        # extract pl module class path and name from checkpoint
        ckpt = torch.load(file_path, weights_only=False, map_location=kwargs.get("map_location"))
        pl_module_cls = ckpt["model_cls"]
        model = pl_module_cls.load_from_checkpoint(file_path, **kwargs)
        # restore the attributes of the TorchForecastingModel
        self._restore_from_checkpoint(ckpt)
        return model

    def _restore_from_checkpoint(self, ckpt: dict) -> None:
        self.train_sample = ckpt.get("train_sample", self.train_sample)
        self.output_dim = ckpt.get("output_dim", self.output_dim)
        self._fit_called = True


def suppress_lightning_warnings(suppress_all: bool = False):
    import logging
    import warnings

    warnings.filterwarnings("ignore", ".*You defined a `validation_step` but have no `val_dataloader`.*")
    if suppress_all:
        warnings.filterwarnings("ignore", ".*does not have many workers which may be a bottleneck.*")
        warnings.filterwarnings("ignore", ".*GPU available but not used.*")
        logging.getLogger("pytorch_lightning.utilities.rank_zero").setLevel(logging.WARNING)
        logging.getLogger("pytorch_lightning.accelerators.cuda").setLevel(logging.WARNING)
