#!/usr/bin/env python
# -*- coding: utf-8 -*-
"""
Model base
"""

import torch
import torch.nn as nn


class ModelBase(nn.Module):
    """
    Basic model wrapper for static graph and dygrpah.
    """
    _registry = dict()

    @classmethod
    def register(cls, name):
        ModelBase._registry[name] = cls
        return

    @staticmethod
    def by_name(name):
        return ModelBase._registry[name]

    @staticmethod
    def create(hparams, *args, **kwargs):
        model_cls = ModelBase.by_name(hparams.model)
        model = model_cls(hparams, *args, **kwargs)
        if hparams.use_gpu:
            model = model.cuda()
        return model

    @classmethod
    def add_cmdline_argument(cls, parser):
        """ Add cmdline argument. """
        group = parser.add_argument_group("Model")
        group.add_argument("--init_checkpoint", type=str, default=None)
        group.add_argument("--model", type=str, default="UnifiedTransformer",
                           choices=["UnifiedTransformer"])
        args, _ = parser.parse_known_args()
        model_cls = ModelBase.by_name(args.model)
        model_cls.add_cmdline_argument(group)
        return group

    def __init__(self, hparams):
        super(ModelBase, self).__init__()
        self.init_checkpoint = hparams.init_checkpoint
        self.use_gpu = hparams.use_gpu
        return

    def _create_parameters(self):
        """ Create model's paramters. """
        raise NotImplementedError

    def _load_params(self):
        """ Load saved paramters. """
        if self.init_checkpoint is not None:
            state_dict = torch.load(self.init_checkpoint, map_location="cpu")
            missing, unexpected = self.load_state_dict(state_dict, strict=False)
            print(f"Loaded parameters from {self.init_checkpoint}")
            if missing:
                print(f"Missing keys: {missing}")
            if unexpected:
                print(f"Unexpected keys: {unexpected}")
        return

    def _forward(self, inputs, is_training):
        """ Real forward process of model in different mode(train/test). """
        raise NotImplementedError

    def _collect_metrics(self, inputs, outputs):
        """ Calculate loss function by using inputs and outputs. """
        raise NotImplementedError

    def _optimize(self, loss):
        """ Optimize loss function and update model. """
        raise NotImplementedError

    def _infer(self, inputs):
        """ Real inference process of model. """
        raise NotImplementedError

    def forward(self, inputs, is_training=False):
        """
        Forward process, include real forward, collect metrices and optimize(optional)

        @params : inputs : input data
        @type : dict of numpy.ndarray/int/float/...
        """
        if is_training:
            self.train()
        else:
            self.eval()

        outputs = self._forward(inputs, is_training)
        metrics = self._collect_metrics(inputs, outputs)
        return metrics

    def infer(self, inputs):
        """
        Inference process.

        @params : inputs : input data
        @type : dict of numpy.ndarray/int/float/...
        """
        self.eval()
        with torch.no_grad():
            results = self._infer(inputs)
        results = {name: results[name].cpu().numpy() for name in results}
        return results
