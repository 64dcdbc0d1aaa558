"""CARTE estimators for regression and classification (single-table setting).

Each estimator trains `num_model` CARTE networks on different train/validation
splits (bagging with early stopping) and averages their predictions. The models
are trained in parallel with joblib; when several GPUs are visible the models are
spread over them round-robin.
"""

import copy
import math
import warnings
from typing import Union

import numpy as np
import torch
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.model_selection import ShuffleSplit, StratifiedShuffleSplit
from sklearn.utils.validation import check_is_fitted, check_random_state
from torch import Tensor
from torch_geometric.data import Batch
from torch_geometric.loader import DataLoader
from tqdm import tqdm

from carte_ai.configs.directory import config_directory
from carte_ai.src.carte_model import CARTE_NN_Model


class IdxIterator:
    """Class for iterating indices to set up the batch for CARTE Multitables"""

    def __init__(self, n_batch: int, domain_indicator: Tensor, target_fraction: float):
        self.n_batch = n_batch
        self.target_fraction = target_fraction
        self.domain_indicator = domain_indicator


class BaseCARTEEstimator(BaseEstimator):
    """Base class for CARTE Estimator."""

    def __init__(
        self,
        *,
        num_layers,
        load_pretrain,
        freeze_pretrain,
        learning_rate,
        batch_size,
        max_epoch,
        dropout,
        val_size,
        cross_validate,
        early_stopping_patience,
        num_model,
        random_state,
        n_jobs,
        device,
        disable_pbar,
    ):
        self.num_layers = num_layers
        self.load_pretrain = load_pretrain
        self.freeze_pretrain = freeze_pretrain
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.max_epoch = max_epoch
        self.dropout = dropout
        self.val_size = val_size
        self.cross_validate = cross_validate
        self.early_stopping_patience = early_stopping_patience
        self.num_model = num_model
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.device = device
        self.disable_pbar = disable_pbar

    def fit(self, X, y):
        """Fit the CARTE model.

        Parameters
        ----------
        X : list of graph objects with size (n_samples)
            The input samples.

        y : array-like of shape (n_samples,)
            Target values.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        # Preliminary settings
        self.is_fitted_ = False
        self.device_ = torch.device(self.device)
        self.X_ = X
        self.y_ = y
        self._set_task_specific_settings()

        # Calculate the parameters for the model
        self.num_heads = 12 if self.load_pretrain else 1
        self.dim_input = X[0].x.size(1)
        self.dim_edge = X[0].edge_attr.size(1)

        # Set the cv splits
        random_state = check_random_state(self.random_state)
        random_state_list = [random_state.randint(1000) for _ in range(self.num_model)]
        if self.cross_validate:
            self.num_model = 5
        splits = [self._set_train_valid_split(X, y, rs) for rs in random_state_list]

        # Devices the bagged models run on (round-robin over the visible GPUs)
        if self.device_.type == "cuda" and torch.cuda.device_count() > 1:
            devices = [torch.device(f"cuda:{i % torch.cuda.device_count()}") for i in range(len(splits))]
        else:
            devices = [self.device_] * len(splits)

        # Fit model
        result_fit = Parallel(n_jobs=self.n_jobs, prefer="processes")(
            delayed(self._run_train_with_early_stopping)(X, split_index, dev)
            for split_index, dev in zip(splits, devices)
        )

        # Store the required results that may be used later
        self.model_list_ = [model for (model, _, _) in result_fit]
        self.valid_loss_ = [valid_loss for (_, valid_loss, _) in result_fit]
        self.weights_ = np.array([weight for (_, _, weight) in result_fit])
        self.weights_ = self.weights_ / np.sum(self.weights_)
        self.is_fitted_ = True

        return self

    def _run_train_with_early_stopping(self, X, split_index, device):
        """Train each model corresponding to the random_state with the early_stopping patience."""
        # Set datasets
        ds_train = [X[i] for i in split_index[0]]
        ds_valid = [X[i] for i in split_index[1]]

        # Set batch size
        batch_size = self.batch_size if len(ds_train) > self.batch_size else max(len(ds_train) // 8, 2)

        # Set the data loader for training. pin_memory speeds up host->GPU copies.
        train_loader = DataLoader(ds_train, batch_size=batch_size, shuffle=False, pin_memory=device.type == "cuda")
        ds_valid_eval = self._set_data_eval(data=ds_valid, device=device)

        # Load model and optimizer
        model_run_train = self._load_model(device)
        model_run_train.to(device)
        optimizer = torch.optim.AdamW(model_run_train.parameters(), lr=self.learning_rate)

        # Train model
        valid_loss_best = 9e15
        es_counter = 0
        model_best_ = copy.deepcopy(model_run_train)
        for _ in tqdm(range(1, self.max_epoch + 1), disable=self.disable_pbar):
            self._run_epoch(model_run_train, optimizer, train_loader, device)
            valid_loss = self._eval(model_run_train, ds_valid_eval)
            if valid_loss < valid_loss_best:
                valid_loss_best = valid_loss
                model_best_ = copy.deepcopy(model_run_train)
                es_counter = 0
            else:
                es_counter += 1
                if es_counter > self.early_stopping_patience:
                    break
        model_best_.eval()
        # move the bagged model back to the host so that the parent process can unpickle it
        model_best_ = model_best_.cpu()
        if device.type == "cuda":
            torch.cuda.empty_cache()
        return model_best_, valid_loss_best, self._get_weight(valid_loss_best)

    def _run_epoch(self, model, optimizer, train_loader, device):
        """Run an epoch of the input model."""
        model.train()
        for data in train_loader:
            self._run_step(model, data, optimizer, device)

    def _run_step(self, model, data, optimizer, device):
        """Run a step of the training."""
        optimizer.zero_grad()  # Clear gradients.
        data = data.to(device, non_blocking=True)  # Send to device
        out = model(data)  # Perform a single forward pass.
        target = data.y  # Set target
        if self.loss == "categorical_crossentropy":
            target = target.to(torch.long)
        if self.output_dim_ == 1:
            out = out.view(-1).to(torch.float32)  # Reshape output
            target = target.to(torch.float32)  # Reshape target
        loss = self.criterion_(out, target)  # Compute the loss.
        loss.backward()  # Derive gradients.
        optimizer.step()  # Update parameters based on gradients.

    def _eval(self, model, ds_eval):
        """Run an evaluation of the input data on the input model."""
        with torch.no_grad():
            model.eval()
            out = model(ds_eval)
            target = ds_eval.y
            if self.loss == "categorical_crossentropy":
                target = target.to(torch.long)
            if self.output_dim_ == 1:
                out = out.view(-1).to(torch.float32)
                target = target.to(torch.float32)
            loss_eval = self.criterion_(out, target)
            loss_eval = round(loss_eval.detach().item(), 4)
        return loss_eval

    def _set_train_valid_split(self, X, y, random_state):
        if self._estimator_type == "regressor":
            splitter = ShuffleSplit(n_splits=1, test_size=self.val_size, random_state=random_state)
        else:
            splitter = StratifiedShuffleSplit(n_splits=1, test_size=self.val_size, random_state=random_state)
        return next(splitter.split(np.zeros(len(y)), y))

    def _set_data_eval(self, data, device):
        """Constructs the aggregated graph object from the list of data."""
        make_batch = Batch()
        with torch.no_grad():
            ds_eval = make_batch.from_data_list(data, follow_batch=["edge_index"])
            ds_eval.to(device)
        return ds_eval

    def _load_model(self, device):
        """Load the CARTE model for training."""
        # Model configuration
        model_config = dict()
        model_config["input_dim_x"] = self.dim_input
        model_config["input_dim_e"] = self.dim_edge
        model_config["hidden_dim"] = self.dim_input
        model_config["ff_dim"] = self.dim_input
        model_config["num_heads"] = self.num_heads
        model_config["num_layers"] = self.num_layers - 1
        model_config["output_dim"] = self.output_dim_
        model_config["dropout"] = self.dropout

        # Set model architecture
        model = CARTE_NN_Model(**model_config)

        # Load the pretrained weights if specified
        if self.load_pretrain:
            dir_model = config_directory["pretrained_model"]
            model.load_state_dict(torch.load(dir_model, map_location=device), strict=False)
            # Freeze the pretrained weights if specified
            if self.freeze_pretrain:
                for param in model.ft_base.read_out_block.parameters():
                    param.requires_grad = False
                for param in model.ft_base.layers.parameters():
                    param.requires_grad = False
        return model

    def _generate_output(self, X, model_list, weights):
        """Generate the output from the trained model."""
        ds_predict_eval = self._set_data_eval(data=X, device=self.device_)
        out = []
        for model in model_list:
            model = model.to(self.device_)
            with torch.no_grad():
                out.append(model(ds_predict_eval).cpu().detach().numpy())
        return np.average(np.stack(out), axis=0, weights=weights)

    def _get_weight(self, valid_loss):
        return 1.0 / max(valid_loss, 1e-6)


class CARTERegressor(RegressorMixin, BaseCARTEEstimator):
    """CARTE Regressor for Regression tasks."""

    def __init__(
        self,
        *,
        loss: str = "squared_error",
        scoring: str = "r2_score",
        num_layers: int = 1,
        load_pretrain: bool = True,
        freeze_pretrain: bool = True,
        learning_rate: float = 1e-3,
        batch_size: int = 16,
        max_epoch: int = 500,
        dropout: float = 0,
        val_size: float = 0.2,
        cross_validate: bool = False,
        early_stopping_patience: Union[None, int] = 40,
        num_model: int = 1,
        random_state: int = 0,
        n_jobs: int = 1,
        device: str = "cuda",
        disable_pbar: bool = True,
    ):
        super().__init__(
            num_layers=num_layers, load_pretrain=load_pretrain, freeze_pretrain=freeze_pretrain,
            learning_rate=learning_rate, batch_size=batch_size, max_epoch=max_epoch, dropout=dropout,
            val_size=val_size, cross_validate=cross_validate, early_stopping_patience=early_stopping_patience,
            num_model=num_model, random_state=random_state, n_jobs=n_jobs, device=device, disable_pbar=disable_pbar,
        )
        self.loss = loss
        self.scoring = scoring

    def predict(self, X):
        check_is_fitted(self, "is_fitted_")
        out = self._generate_output(X=X, model_list=self.model_list_, weights=self.weights_)
        return out.squeeze()

    def _set_task_specific_settings(self):
        self.criterion_ = torch.nn.MSELoss() if self.loss == "squared_error" else torch.nn.L1Loss()
        self.output_dim_ = 1
