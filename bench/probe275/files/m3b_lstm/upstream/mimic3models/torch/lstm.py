"""PyTorch re-implementation of the channel-agnostic LSTM baselines from
Harutyunyan et al. (2019), "Multitask learning and benchmarking with clinical time series data".

The Keras originals live in mimic3models/keras_models/lstm.py.  These modules keep the same
hyper-parameter names (dim, depth, dropout, rec_dropout, target_repl) so the common
argument parser can be reused.  Tested on a single GPU (1080Ti / V100).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


class LSTM(nn.Module):

    def __init__(self, input_dim=76, hidden_dim=16, num_layers=2, dropout=0.3,
                 bidirectional=True, task='ihm', target_repl=False, deep_supervision=False,
                 num_classes=1, use_cuda=True):
        super(LSTM, self).__init__()
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.num_layers = num_layers
        self.task = task
        self.target_repl = target_repl
        self.deep_supervision = deep_supervision
        self.use_cuda = use_cuda
        self.num_dirs = 2 if bidirectional else 1

        # In the Keras version the bidirectional layers are all but the last one; we follow the
        # simpler cuDNN-friendly stack here and put a unidirectional LSTM on top.
        if num_layers > 1:
            self.encoder = nn.LSTM(input_dim, hidden_dim // self.num_dirs,
                                   num_layers=num_layers - 1,
                                   batch_first=True,
                                   dropout=dropout if num_layers > 2 else 0.0,
                                   bidirectional=bidirectional)
            top_in = hidden_dim // self.num_dirs * self.num_dirs
        else:
            self.encoder = None
            top_in = input_dim
        self.top = nn.LSTM(top_in, hidden_dim, num_layers=1, batch_first=True)
        self.dropout = nn.Dropout(dropout)

        if task in ('ihm', 'decomp'):
            self.head = nn.Linear(hidden_dim, 1)
        elif task == 'los':
            self.head = nn.Linear(hidden_dim, num_classes if num_classes > 1 else 1)
        elif task == 'pheno':
            self.head = nn.Linear(hidden_dim, 25)
        else:
            raise ValueError("unknown task {}".format(task))

    def init_hidden(self, batch_size, num_layers, hidden, num_dirs=1):
        h0 = torch.zeros(num_layers * num_dirs, batch_size, hidden)
        c0 = torch.zeros(num_layers * num_dirs, batch_size, hidden)
        if self.use_cuda:
            h0, c0 = h0.cuda(), c0.cuda()
        return h0, c0

    def forward(self, x, lengths=None):
        """x: (B, T, input_dim).  `lengths` is only given for variable-length tasks
        (decompensation / length-of-stay with deep supervision)."""
        batch_size = x.size(0)
        out = x
        if self.encoder is not None:
            hidden = self.init_hidden(batch_size, self.num_layers - 1,
                                      self.hidden_dim // self.num_dirs, self.num_dirs)
            if lengths is not None:
                packed = pack_padded_sequence(out, lengths.cpu(), batch_first=True, enforce_sorted=False)
                packed_out, _ = self.encoder(packed, hidden)
                out, _ = pad_packed_sequence(packed_out, batch_first=True, total_length=x.size(1))
            else:
                out, _ = self.encoder(out, hidden)
            out = self.dropout(out)

        top_hidden = self.init_hidden(batch_size, 1, self.hidden_dim)
        seq, (h_n, _) = self.top(out, top_hidden)
        seq = self.dropout(seq)

        if self.deep_supervision or self.task == 'decomp':
            # one prediction per time step, masked by the caller
            return self.head(seq).squeeze(-1)

        if lengths is not None:
            idx = (lengths - 1).clamp(min=0).view(-1, 1, 1).expand(-1, 1, seq.size(2))
            last = seq.gather(1, idx.to(seq.device)).squeeze(1)
        else:
            last = self.dropout(h_n[-1])
        logits = self.head(last)

        if self.target_repl:
            seq_logits = self.head(seq)
            return logits, seq_logits
        return logits


class ChannelWiseLSTM(nn.Module):
    """Channel-wise LSTM: one small LSTM per input variable (+ its mask), then a shared LSTM."""

    def __init__(self, channel_groups, hidden_dim=8, size_coef=4.0, dropout=0.3, task='ihm',
                 num_classes=1):
        super(ChannelWiseLSTM, self).__init__()
        self.channel_groups = channel_groups
        self.channel_lstms = nn.ModuleList([
            nn.LSTM(len(group), hidden_dim, batch_first=True, bidirectional=True)
            for group in channel_groups
        ])
        merged = 2 * hidden_dim * len(channel_groups)
        self.top = nn.LSTM(merged, int(size_coef * hidden_dim), batch_first=True)
        self.dropout = nn.Dropout(dropout)
        out_dim = 25 if task == 'pheno' else (num_classes if task == 'los' else 1)
        self.head = nn.Linear(int(size_coef * hidden_dim), out_dim)
        self.task = task

    def forward(self, x):
        outs = []
        for group, lstm in zip(self.channel_groups, self.channel_lstms):
            idx = torch.as_tensor(group, device=x.device, dtype=torch.long)
            sub = x.index_select(2, idx)
            o, _ = lstm(sub)
            outs.append(o)
        merged = self.dropout(torch.cat(outs, dim=2))
        seq, (h_n, _) = self.top(merged)
        if self.task == 'decomp':
            return self.head(self.dropout(seq)).squeeze(-1)
        return self.head(self.dropout(h_n[-1]))


def masked_bce_with_logits(logits, target, mask):
    """Deep-supervision loss used by decompensation: mean over observed steps only."""
    loss = F.binary_cross_entropy_with_logits(logits, target, reduction='none')
    loss = loss * mask
    return loss.sum() / mask.sum().clamp(min=1.0)
