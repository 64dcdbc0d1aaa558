"""
Module to train posterior inference models using the lampe package (NPE with
normalizing flows), with a hand-written training loop so that we control the
device placement, early stopping and mixed precision.
"""

import json
import logging
import time
from copy import deepcopy
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np
import torch
import torch.nn as nn
import yaml
from torch.utils.data import DataLoader, TensorDataset, random_split

from ili.dataloaders import _BaseLoader
from ili.utils import load_from_config, load_nde_lampe, LampeEnsemble

logging.basicConfig(level=logging.INFO)


class LampeRunner:
    """Class to train NPE models using the lampe package.

    Args:
        prior (Distribution): prior on the parameters
        nets (List[Callable]): list of neural density estimator constructors
        device (str, optional): device to run on. Defaults to 'cpu'.
        embedding_net (nn.Module, optional): neural network to compress data
        train_args (Dict, optional): dictionary of hyperparameters for training
        out_dir (str, Path, optional): directory where to store outputs
        name (str, optional): name of the model (for saving purposes)
    """

    def __init__(
        self,
        prior: Any,
        nets: List[Any],
        device: str = 'cpu',
        embedding_net: Optional[nn.Module] = None,
        train_args: Dict = {},
        out_dir: Optional[Path] = None,
        name: Optional[str] = "",
    ):
        self.prior = prior
        self.nets = nets
        self.device = device
        self.embedding_net = embedding_net
        self.name = name
        self.out_dir = None if out_dir is None else Path(out_dir)
        if self.out_dir is not None:
            self.out_dir.mkdir(parents=True, exist_ok=True)

        default_args = dict(
            training_batch_size=64,
            learning_rate=1e-3,
            validation_fraction=0.1,
            stop_after_epochs=30,
            max_epochs=int(1e10),
            clip_max_norm=5.0,
            num_workers=4,
            use_amp=False,
        )
        default_args.update(train_args)
        self.train_args = default_args

    @classmethod
    def from_config(cls, config_path: Path, **kwargs) -> "LampeRunner":
        """Create a runner from a yaml config file (see examples/configs/infer/npe_*.yaml)"""
        with open(config_path, "r") as fd:
            config = yaml.safe_load(fd)

        # optionally overload config with kwargs
        config.update(kwargs)

        device = config.get('device', 'cpu')
        if device.startswith('cuda') and not torch.cuda.is_available():
            logging.warning('CUDA requested in %s but not available, running on CPU', config_path)
            device = 'cpu'

        # load prior distribution (prior must live on the training device)
        config['prior']['args']['device'] = device
        prior = load_from_config(config['prior'])

        # load embedding net
        if 'embedding_net' in config:
            embedding_net = load_from_config(config['embedding_net'])
        else:
            embedding_net = nn.Identity()

        # load logistics
        train_args = config.get('train_args', {})
        out_dir = Path(config['out_dir'])
        name = config['model'].get('name', '')

        nets = [load_nde_lampe(embedding_net=embedding_net, device=device, **model_args)
                for model_args in config['model']['nets']]

        return cls(prior=prior, nets=nets, device=device, embedding_net=embedding_net,
                   train_args=train_args, out_dir=out_dir, name=name)

    def _make_loaders(self, loader: _BaseLoader):
        x = torch.as_tensor(loader.get_all_data(), dtype=torch.float32)
        theta = torch.as_tensor(loader.get_all_parameters(), dtype=torch.float32)
        dataset = TensorDataset(theta, x)
        n_val = int(self.train_args['validation_fraction'] * len(dataset))
        train_set, val_set = random_split(dataset, [len(dataset) - n_val, n_val])
        kwargs = dict(
            batch_size=self.train_args['training_batch_size'],
            num_workers=self.train_args['num_workers'],
            pin_memory=True,
            persistent_workers=self.train_args['num_workers'] > 0,
        )
        return (DataLoader(train_set, shuffle=True, drop_last=True, **kwargs),
                DataLoader(val_set, shuffle=False, **kwargs))

    def _train_round(self, model: nn.Module, train_loader: DataLoader, val_loader: DataLoader):
        optimizer = torch.optim.Adam(model.parameters(), lr=self.train_args['learning_rate'])
        use_amp = self.train_args['use_amp']
        scaler = torch.cuda.amp.GradScaler(enabled=use_amp)

        best_val, best_state, epochs_since_best = float('inf'), None, 0
        summary = {'training_log_probs': [], 'validation_log_probs': [], 'epochs_trained': 0}

        for epoch in range(self.train_args['max_epochs']):
            model.train()
            train_loss = []
            for theta, x in train_loader:
                theta = theta.to(self.device, non_blocking=True)
                x = x.to(self.device, non_blocking=True)
                optimizer.zero_grad(set_to_none=True)
                with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=use_amp):
                    loss = -model(theta, x).mean()
                scaler.scale(loss).backward()
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(model.parameters(), self.train_args['clip_max_norm'])
                scaler.step(optimizer)
                scaler.update()
                train_loss.append(loss.detach())

            model.eval()
            with torch.no_grad():
                val_loss = torch.stack([
                    -model(theta.to(self.device), x.to(self.device)).mean()
                    for theta, x in val_loader
                ]).mean().item()
            train_loss = torch.stack(train_loss).mean().item()
            summary['training_log_probs'].append(-train_loss)
            summary['validation_log_probs'].append(-val_loss)

            if val_loss < best_val:
                best_val, epochs_since_best = val_loss, 0
                best_state = deepcopy(model.state_dict())
            else:
                epochs_since_best += 1
            if epochs_since_best >= self.train_args['stop_after_epochs']:
                break
        summary['epochs_trained'] = epoch + 1
        summary['best_validation_log_prob'] = -best_val
        model.load_state_dict(best_state)
        return model, summary

    def __call__(self, loader: _BaseLoader, seed: Optional[int] = None):
        """Train your posterior and save it to file

        Args:
            loader (_BaseLoader): dataloader with stored data-parameter pairs
            seed (int): torch seed for reproducibility
        """
        if seed is not None:
            torch.manual_seed(seed)

        t0 = time.time()
        train_loader, val_loader = self._make_loaders(loader)

        posteriors, summaries = [], []
        for i, net in enumerate(self.nets):
            logging.info(f"Training model {i + 1} / {len(self.nets)}.")
            model = net(torch.zeros(1, self.prior.event_shape[0]), next(iter(train_loader))[1][:1]).to(self.device)
            model, summary = self._train_round(model, train_loader, val_loader)
            posteriors.append(model)
            summaries.append(summary)
            torch.cuda.empty_cache()

        # ensemble, weighted by the validation log-probability
        val_logprob = torch.tensor([s['best_validation_log_prob'] for s in summaries])
        weights = torch.exp(val_logprob - val_logprob.max())
        weights = (weights / weights.sum()).to(self.device)
        posterior = LampeEnsemble(posteriors, weights)

        if self.out_dir is not None:
            str_p = self.name + "posterior.pkl"
            str_s = self.name + "summary.json"
            torch.save(posterior, self.out_dir / str_p)
            with open(self.out_dir / str_s, "w") as handle:
                json.dump(summaries, handle)
        logging.info(f"It took {time.time() - t0:.1f} seconds to train models.")
        return posterior, summaries


def load_posterior(path: Path, device: str = 'cpu'):
    """Load a trained LampeEnsemble; posteriors trained on GPU can be loaded on CPU laptops."""
    posterior = torch.load(path, map_location=device)
    posterior.to(device)
    return posterior
