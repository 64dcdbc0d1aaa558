import copy

import torch
from torch import nn
from torch.nn import Module, Dropout, Linear, ReLU, ModuleList

device = "cpu" if not torch.cuda.is_available() else "cuda"


class transformer_FFN(Module):
    def __init__(self, emb_size, dropout) -> None:
        super().__init__()
        self.emb_size = emb_size
        self.dropout = dropout
        self.FFN = nn.Sequential(
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
    """ Lower Triangular Mask
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


class Dim:
    batch = 0
    seq = 1
    feature = 2


def mask_future(seqlen, k=1, dev=None):
    """Boolean mask that hides positions j >= i + k (used by the attention models).

    Works on whatever device the caller hands in; falls back to the module default.
    """
    dev = dev if dev is not None else device
    nopeek = torch.triu(torch.ones(seqlen, seqlen, dtype=torch.uint8, device=dev), diagonal=k)
    return nopeek == 0


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
