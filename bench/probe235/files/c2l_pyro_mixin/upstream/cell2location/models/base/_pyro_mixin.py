import gc
import logging
from datetime import date
from functools import partial
from typing import Optional, Union

import lightning.pytorch as pl
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pyro
import torch
from lightning.pytorch.callbacks import Callback
from pyro import poutine
from pyro.infer.autoguide import AutoNormal, init_to_feasible, init_to_mean
from scipy.sparse import issparse
from scvi import REGISTRY_KEYS
from scvi.dataloaders import AnnDataLoader
from scvi.model._utils import parse_use_gpu_arg
from scvi.module.base import PyroBaseModuleClass
from scvi.train import PyroTrainingPlan as PyroTrainingPlan_scvi
from scvi.utils import track

from ...distributions.AutoAmortisedNormalMessenger import (
    AutoAmortisedHierarchicalNormalMessenger,
)

logger = logging.getLogger(__name__)


def init_to_value(site=None, values={}, init_fn=init_to_mean):
    if site is None:
        return partial(init_to_value, values=values)
    if site["name"] in values:
        return values[site["name"]]
    else:
        return init_fn(site)


def expand_zeros_along_dim(tensor, size, axis):
    shape = np.array(tensor.shape)
    shape[axis] = size
    return np.zeros(shape)


def complete_tensor_along_dim(tensor, indices, axis, value, mode="put"):
    shape = value.shape
    shape = np.ones(len(shape))
    shape[axis] = len(indices)
    shape = shape.astype(int)
    indices = indices.reshape(shape)
    if mode == "take":
        return np.take_along_axis(arr=tensor, indices=indices, axis=axis)
    np.put_along_axis(arr=tensor, indices=indices, values=value, axis=axis)
    return tensor


def _free_device_memory(device: torch.device):
    """Release cached blocks between posterior batches (large Visium HD slides)."""
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def _auto_batch_size(n_obs: int, n_vars: int, n_factors: int, device: torch.device, safety: float = 0.5) -> int:
    """Pick the largest minibatch for posterior sampling that fits in GPU memory.

    The dominant tensor is (n_samples=1, batch, n_vars) for mu plus
    (batch, n_factors) per local site, all float32.
    """
    if device.type != "cuda":
        return min(n_obs, 2500)
    free_bytes, _ = torch.cuda.mem_get_info(device)
    per_obs = 4 * (3 * n_vars + 4 * n_factors)
    bs = int(safety * free_bytes / per_obs)
    return int(max(128, min(bs, n_obs)))


class AutoGuideMixinModule:
    """
    This mixin class provides methods for:

    - initialising standard AutoNormal guides
    - initialising amortised guides (AutoNormalEncoder)
    - initialising amortised guides with special additional inputs
    """

    def _create_autoguide(
        self,
        model,
        amortised,
        encoder_kwargs,
        data_transform,
        encoder_mode,
        init_loc_fn=init_to_mean(fallback=init_to_feasible),
        n_cat_list: list = [],
        encoder_instance=None,
        guide_class=AutoNormal,
        guide_kwargs: Optional[dict] = None,
    ):
        if guide_kwargs is None:
            guide_kwargs = dict()
        if not amortised:
            if getattr(model, "discrete_variables", None) is not None:
                model = poutine.block(model, hide=model.discrete_variables)
            if issubclass(guide_class, poutine.messenger.Messenger):
                # messenger guides don't need create_plates function
                _guide = guide_class(model, init_loc_fn=init_loc_fn, **guide_kwargs)
            else:
                _guide = guide_class(
                    model,
                    init_loc_fn=init_loc_fn,
                    **guide_kwargs,
                    create_plates=self.model.create_plates,
                )
        else:
            encoder_kwargs = encoder_kwargs if isinstance(encoder_kwargs, dict) else dict()
            n_hidden = encoder_kwargs["n_hidden"] if "n_hidden" in encoder_kwargs.keys() else 200
            amortised_vars = model.list_obs_plate_vars()
            if len(amortised_vars["input"]) >= 2:
                encoder_kwargs["n_cat_list"] = n_cat_list
            amortised_vars["input_transform"] = data_transform
            if "n_in" in amortised_vars.keys():
                n_in = amortised_vars["n_in"]
            else:
                n_in = model.n_vars
            _guide = AutoAmortisedHierarchicalNormalMessenger(
                model,
                amortised_plate_sites=amortised_vars,
                n_in=n_in,
                n_hidden=n_hidden,
                encoder_kwargs=encoder_kwargs,
                encoder_mode=encoder_mode,
                encoder_instance=encoder_instance,
                **guide_kwargs,
            )
        return _guide


class QuantileMixin:
    """
    This mixin class provides methods for:

    - computing median and quantiles of the posterior distribution using both direct and amortised inference
    """

    @torch.no_grad()
    def _posterior_quantile_minibatch(
        self,
        q: float = 0.5,
        batch_size: Optional[int] = 2048,
        use_gpu: bool = None,
        use_median: bool = False,
        exclude_vars: list = None,
        data_loader_indices=None,
    ):
        """
        Compute median of the posterior distribution of each parameter, separating local (minibatch) variable
        and global variables, which is necessary when performing amortised inference.

        Parameters
        ----------
        q
            quantile to compute
        batch_size
            number of observations per batch; ``None`` picks the largest size that fits in GPU memory
        use_gpu
            Bool, use gpu?
        use_median
            Bool, when q=0.5 use median rather than quantile method of the guide

        Returns
        -------
        dictionary {variable_name: posterior quantile}
        """
        gpus, device = parse_use_gpu_arg(use_gpu)
        if batch_size is None:
            batch_size = _auto_batch_size(
                self.adata_manager.adata.n_obs,
                self.adata_manager.adata.n_vars,
                getattr(self.module.model, "n_factors", 50),
                device,
            )

        train_dl = AnnDataLoader(
            self.adata_manager, shuffle=False, batch_size=batch_size, indices=data_loader_indices
        )

        i = 0
        for tensor_dict in train_dl:
            args, kwargs = self.module._get_fn_args_from_batch(tensor_dict)
            args = [a.to(device) for a in args]
            kwargs = {k: v.to(device) for k, v in kwargs.items()}
            self.to_device(device)

            if i == 0:
                # find plate sites
                obs_plate_sites = self._get_obs_plate_sites(args, kwargs, return_observed=True)
                if len(obs_plate_sites) == 0:
                    # if no local variables - don't sample
                    break
                # find plate dimension
                obs_plate_dim = list(obs_plate_sites.values())[0]
                if use_median and q == 0.5:
                    means = self.module.guide.median(*args, **kwargs)
                else:
                    means = self.module.guide.quantiles([q], *args, **kwargs)
                means = {
                    k: means[k].cpu().numpy()
                    for k in means.keys()
                    if k in obs_plate_sites and k not in (exclude_vars or [])
                }

            else:
                if use_median and q == 0.5:
                    means_ = self.module.guide.median(*args, **kwargs)
                else:
                    means_ = self.module.guide.quantiles([q], *args, **kwargs)

                means_ = {
                    k: means_[k].cpu().numpy()
                    for k in means_.keys()
                    if k in obs_plate_sites and k not in (exclude_vars or [])
                }
                means = {
                    k: np.concatenate([means[k], means_[k]], axis=obs_plate_dim) for k in means.keys()
                }
            i += 1
            _free_device_memory(device)

        # sample global parameters
        tensor_dict = next(iter(train_dl))
        args, kwargs = self.module._get_fn_args_from_batch(tensor_dict)
        args = [a.to(device) for a in args]
        kwargs = {k: v.to(device) for k, v in kwargs.items()}
        self.to_device(device)

        if use_median and q == 0.5:
            global_means = self.module.guide.median(*args, **kwargs)
        else:
            global_means = self.module.guide.quantiles([q], *args, **kwargs)
        global_means = {
            k: global_means[k].cpu().numpy()
            for k in global_means.keys()
            if k not in obs_plate_sites and k not in (exclude_vars or [])
        }

        for k in global_means.keys():
            means[k] = global_means[k]

        self.module.to(device)

        return means

    def posterior_quantile(self, q: float = 0.5, batch_size: int = None, use_gpu: bool = None, use_median: bool = False, **kwargs):
        """
        Compute median of the posterior distribution of each parameter.

        Parameters
        ----------
        q
            Quantile to compute
        use_gpu
            Bool, use gpu?
        use_median
            Bool, when q=0.5 use median rather than quantile method of the guide

        Returns
        -------

        """
        if batch_size is not None:
            return self._posterior_quantile_minibatch(q=q, batch_size=batch_size, use_gpu=use_gpu, use_median=use_median, **kwargs)
        return self._posterior_quantile(q=q, use_gpu=use_gpu, use_median=use_median, **kwargs)


class PyroAggressiveConvergence(Callback):
    """
    A callback to compute/apply aggressive training convergence criteria for amortised inference.
    Motivated by this paper: https://arxiv.org/pdf/1901.05534.pdf
    """

    def __init__(self, dataloader: AnnDataLoader = None, patience: int = 10, tolerance: float = 1e-4) -> None:
        super().__init__()
        self.dataloader = dataloader
        self.patience = patience
        self.tolerance = tolerance

    def on_train_epoch_end(self, trainer: "pl.Trainer", pl_module: "pl.LightningModule", unused: Optional = None) -> None:
        """
        Compute aggressive training convergence criteria for amortised inference.
        """
        pyro_guide = pl_module.module.guide
        if self.dataloader is None:
            dl = trainer.datamodule.train_dataloader()
        else:
            dl = self.dataloader
        for tensors in dl:
            tens = {k: t.to(pl_module.device) for k, t in tensors.items()}
            args, kwargs = pl_module.module._get_fn_args_from_batch(tens)
            break
        mi_ = pyro_guide.mutual_information(*args, **kwargs)
        mi_ = np.array([v for v in mi_.values()]).sum()
        pl_module.log("MI", mi_, prog_bar=True)
        if len(pl_module.mi) > 1:
            if pl_module.mi[-1] >= (mi_ - self.tolerance):
                pl_module.n_epochs_patience += 1
        else:
            pl_module.n_epochs_patience = 0
        if pl_module.n_epochs_patience > self.patience:
            # stop aggressive training by setting epoch counter to max epochs
            # pl_module.aggressive_epochs_counter = pl_module.n_aggressive_epochs + 1
            logger.info('Stopped aggressive training after "{}" epochs'.format(pl_module.aggressive_epochs_counter))
        pl_module.mi.append(mi_)


class PyroTrainingPlan(PyroTrainingPlan_scvi):
    """
    Lightning module task to train Pyro scvi-tools modules.
    """

    @property
    def n_obs_training(self):
        """
        Number of training examples.

        If not `None`, updates the `n_obs` attr
        of the Pyro module's `model` and `guide`, if they exist.
        """
        return self._n_obs_training

    @n_obs_training.setter
    def n_obs_training(self, n_obs: int):
        # important for scaling log prob in Pyro plates
        if n_obs is not None:
            if hasattr(self.module.model, "n_obs"):
                setattr(self.module.model, "n_obs", n_obs)
            if hasattr(self.module.guide, "n_obs"):
                setattr(self.module.guide, "n_obs", n_obs)

        self._n_obs_training = n_obs

    def training_epoch_end(self, outputs):
        """Training epoch end for Pyro training."""
        elbo = 0
        n = 0
        for out in outputs:
            elbo += out["loss"]
            n += 1
        if n > 0:
            elbo /= n
        self.log("elbo_train", elbo, prog_bar=True)
        gc.collect()
        torch.cuda.empty_cache()  # pyro keeps references to large traces
