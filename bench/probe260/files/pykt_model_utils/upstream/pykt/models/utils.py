import copy
import math

import torch
from torch import nn
from torch.nn import Module, Sequential, Linear, ReLU, Dropout, ModuleList

device = "cpu" if not torch.cuda.is_available() else "cuda"


class transformer_FFN(Module):
    def __init__(self, emb_size, dropout) -> None:
        super().__init__()
        self.emb_size = emb_size
        self.dropout = dropout
        self.FFN = Sequential(
            Linear(self.emb_size, self.emb_size),
            ReLU(),
            Dropout(self.dropout),
            Linear(self.emb_size, self.emb_size),
            # Dropout(self.dropout),
        )

    def forward(self, in_fea):
        return self.FFN(in_fea)


def ut_mask(seq_len):
    """ Upper Triangular Mask
    """
    return torch.triu(torch.ones(seq_len, seq_len), diagonal=1).to(dtype=torch.bool).to(device)


def lt_mask(seq_len):
    """ Upper Triangular Mask
    """
    return torch.tril(torch.ones(seq_len, seq_len), diagonal=-1).to(dtype=torch.bool).to(device)


def pos_encode(seq_len):
    """ position Encoding
    """
    return torch.arange(seq_len).unsqueeze(0).to(device)


def get_clones(module, N):
    """ Cloning nn modules
    """
    return ModuleList([copy.deepcopy(module) for i in range(N)])


def causal_mask_like(x, diagonal=1):
    """Same as ut_mask but created directly on the device of `x` (used by the newer models)."""
    seq_len = x.shape[1]
    return torch.triu(torch.ones(seq_len, seq_len, device=x.device), diagonal=diagonal).bool()


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=1024):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        # registered as a buffer so .to(device) on the model moves it too
        self.register_buffer("pe", pe.unsqueeze(0))

    def forward(self, x):
        x = x + self.pe[:, :x.size(1)]
        return self.dropout(x)


class timeGap(nn.Module):
    def __init__(self, num_rgap, num_sgap, num_pcount, emb_size) -> None:
        super().__init__()
        self.num_rgap, self.num_sgap, self.num_pcount = num_rgap, num_sgap, num_pcount
        input_size = num_rgap + num_sgap + num_pcount
        self.time_emb = nn.Linear(input_size, emb_size, bias=False)

    def forward(self, rgap, sgap, pcount):
        rgap = nn.functional.one_hot(rgap, self.num_rgap).float()
        sgap = nn.functional.one_hot(sgap, self.num_sgap).float()
        pcount = nn.functional.one_hot(pcount, self.num_pcount).float()
        tg = torch.cat((rgap, sgap, pcount), -1)
        tg_emb = self.time_emb(tg)
        return tg_emb
