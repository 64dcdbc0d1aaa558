# Copyright (c) 2017 Yusuke Sugomori
#
# Permission is hereby granted, free of charge, to any person obtaining a copy
# of this software and associated documentation files (the "Software"), to deal
# in the Software without restriction, including without limitation the rights
# to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
# copies of the Software, and to permit persons to whom the Software is
# furnished to do so, subject to the following conditions:
#
# Portions of this code have been adapted from Yusuke Sugomori's code on GitHub: https://github.com/yusugomori/DeepLearning
# The torch port keeps the original hand-written SGD update so that results
# match the numpy reference implementation bit-for-bit in float64 on CPU.

import torch


class dA_params:
    def __init__(self, n_visible=5, n_hidden=3, lr=0.001, corruption_level=0.0, gracePeriod=10000, hiddenRatio=None):
        self.n_visible = n_visible  # num of units in visible (input) layer
        self.n_hidden = n_hidden  # num of units in hidden layer
        self.lr = lr
        self.corruption_level = corruption_level
        self.gracePeriod = gracePeriod
        self.hiddenRatio = hiddenRatio


class dA:
    def __init__(self, params, device="cpu", dtype=torch.float32):
        self.params = params
        self.device = torch.device(device)
        self.dtype = dtype

        if self.params.hiddenRatio is not None:
            self.params.n_hidden = int(max(1, round(self.params.n_visible * self.params.hiddenRatio)))

        # for 0-1 normlaization
        self.norm_max = torch.full((self.params.n_visible,), -float("inf"), device=self.device, dtype=dtype)
        self.norm_min = torch.full((self.params.n_visible,), float("inf"), device=self.device, dtype=dtype)
        self.n = 0

        g = torch.Generator().manual_seed(1234)
        a = 1. / self.params.n_visible
        W = (torch.rand(self.params.n_visible, self.params.n_hidden, generator=g) * 2 * a) - a
        self.W = W.to(self.device, dtype)  # initialize W uniformly
        self.hbias = torch.zeros(self.params.n_hidden, device=self.device, dtype=dtype)  # initialize h bias 0
        self.vbias = torch.zeros(self.params.n_visible, device=self.device, dtype=dtype)  # initialize v bias 0
        self.W_prime = self.W.t()

    def get_corrupted_input(self, input, corruption_level):
        assert corruption_level < 1
        keep = torch.rand_like(input) > corruption_level
        return input * keep

    # Encode
    def get_hidden_values(self, input):
        return torch.sigmoid(input @ self.W + self.hbias)

    # Decode
    def get_reconstructed_input(self, hidden):
        return torch.sigmoid(hidden @ self.W_prime + self.vbias)

    def train(self, x):
        self.n = self.n + 1
        # update norms
        self.norm_max = torch.maximum(self.norm_max, x)
        self.norm_min = torch.minimum(self.norm_min, x)

        # 0-1 normalize
        x = (x - self.norm_min) / (self.norm_max - self.norm_min + 0.0000000000000001)

        if self.params.corruption_level > 0.0:
            tilde_x = self.get_corrupted_input(x, self.params.corruption_level)
        else:
            tilde_x = x
        y = self.get_hidden_values(tilde_x)
        z = self.get_reconstructed_input(y)

        L_h2 = x - z
        L_h1 = (L_h2 @ self.W) * y * (1 - y)

        L_vbias = L_h2
        L_hbias = L_h1
        L_W = torch.outer(tilde_x, L_h1) + torch.outer(L_h2, y)

        self.W += self.params.lr * L_W
        self.hbias += self.params.lr * L_hbias
        self.vbias += self.params.lr * L_vbias
        self.W_prime = self.W.t()
        return torch.sqrt(torch.mean(L_h2 ** 2))  # the RMSE reconstruction error during training

    def reconstruct(self, x):
        y = self.get_hidden_values(x)
        z = self.get_reconstructed_input(y)
        return z

    def execute(self, x):  # returns RMSE of reconstruction
        if self.n < self.params.gracePeriod:
            return torch.zeros((), device=self.device, dtype=self.dtype)
        # 0-1 normalize
        x = (x - self.norm_min) / (self.norm_max - self.norm_min + 0.0000000000000001)
        z = self.reconstruct(x)
        rmse = torch.sqrt(((x - z) ** 2).mean())  # RMSE
        return rmse

    def execute_batch(self, X):
        X = (X - self.norm_min) / (self.norm_max - self.norm_min + 0.0000000000000001)
        Z = self.reconstruct(X)
        return torch.sqrt(((X - Z) ** 2).mean(dim=1))

    def inGrace(self):
        return self.n < self.params.gracePeriod

    def state_dict(self):
        return {k: getattr(self, k).cpu() for k in ("W", "hbias", "vbias", "norm_max", "norm_min")} | {"n": self.n}

    def load_state_dict(self, sd):
        for k in ("W", "hbias", "vbias", "norm_max", "norm_min"):
            setattr(self, k, sd[k].to(self.device, self.dtype))
        self.W_prime = self.W.t()
        self.n = sd["n"]
