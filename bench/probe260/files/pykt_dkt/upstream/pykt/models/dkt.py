import os

import numpy as np
import pandas as pd
import torch

from torch.nn import Module, Embedding, LSTM, Linear, Dropout


class DKT(Module):
    """Deep Knowledge Tracing (Piech et al., 2015).

    The original Lua/Torch7 release trained on a single GPU; this re-implementation is
    device agnostic: everything follows the device of the embedding weights, so
    `model.to(device)` is all that is needed (see init_model.py).
    """

    def __init__(self, num_c, emb_size, dropout=0.1, emb_type='qid', emb_path="", pretrain_dim=768):
        super().__init__()
        self.model_name = "dkt"
        self.num_c = num_c
        self.emb_size = emb_size
        self.hidden_size = emb_size
        self.emb_type = emb_type

        if emb_type.startswith("qid"):
            self.interaction_emb = Embedding(self.num_c * 2, self.emb_size)

        self.lstm_layer = LSTM(self.emb_size, self.hidden_size, batch_first=True)
        self.dropout_layer = Dropout(dropout)
        self.out_layer = Linear(self.hidden_size, self.num_c)

    def forward(self, q, r):
        # print(f"q.shape is {q.shape}")
        emb_type = self.emb_type
        if emb_type == "qid":
            x = q + self.num_c * r
            xemb = self.interaction_emb(x)
        # print(f"xemb.shape is {xemb.shape}")
        h, _ = self.lstm_layer(xemb)
        h = self.dropout_layer(h)
        y = self.out_layer(h)
        y = torch.sigmoid(y)

        return y


class DKTPlus(Module):
    """DKT+ (Yeung & Yeung, 2018): DKT with reconstruction and waviness regularisers.

    The regulariser weights are read in train_model.cal_loss.
    """

    def __init__(self, num_c, emb_size, lambda_r, lambda_w1, lambda_w2, dropout=0.1, emb_type="qid", emb_path="", pretrain_dim=768):
        super().__init__()
        self.model_name = "dkt+"
        self.num_c = num_c
        self.emb_size = emb_size
        self.hidden_size = emb_size
        self.lambda_r = lambda_r
        self.lambda_w1 = lambda_w1
        self.lambda_w2 = lambda_w2
        self.emb_type = emb_type

        if emb_type.startswith("qid"):
            self.interaction_emb = Embedding(self.num_c * 2, self.emb_size)
        self.lstm_layer = LSTM(self.emb_size, self.hidden_size, batch_first=True)
        self.dropout_layer = Dropout(dropout)
        self.out_layer = Linear(self.hidden_size, self.num_c)

    def init_hidden(self, batch_size, ref):
        # zero initial state on the same device/dtype as the reference tensor
        h0 = torch.zeros(1, batch_size, self.hidden_size, device=ref.device, dtype=ref.dtype)
        c0 = torch.zeros_like(h0)
        return h0, c0

    def forward(self, q, r):
        emb_type = self.emb_type
        if emb_type == "qid":
            x = q + self.num_c * r
            xemb = self.interaction_emb(x)
        hidden = self.init_hidden(xemb.shape[0], xemb)
        h, _ = self.lstm_layer(xemb, hidden)
        h = self.dropout_layer(h)
        y = self.out_layer(h)
        y = torch.sigmoid(y)

        return y


def load_pretrained_emb(emb_path, num_c, emb_size):
    """Load a pretrained concept embedding table (saved on CPU as a .npy or .pkl)."""
    if emb_path.endswith(".npy"):
        arr = np.load(emb_path)
    else:
        arr = pd.read_pickle(emb_path)
        arr = np.stack([arr[i] for i in range(num_c)])
    assert arr.shape[0] >= num_c, f"pretrained emb has {arr.shape[0]} rows, need {num_c}"
    weight = torch.from_numpy(arr[:num_c]).float()
    if weight.shape[1] != emb_size:
        raise ValueError(f"pretrained dim {weight.shape[1]} != emb_size {emb_size}")
    return weight



def model_device(model):
    """Device the model lives on ("cuda:0" on a GPU box, "cpu" otherwise); used in log lines."""
    return next(model.parameters()).device
