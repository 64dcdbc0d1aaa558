import torch
import torch.nn as nn
import torch.nn.functional as F

from collections import deque

import numpy as np


def drop_zeros_hook(module, grad_input, grad_output):
    """
    Backward hook that replaces NaN gradients with zero. Very long byte
    sequences occasionally produce them when a whole chunk is padding.
    """
    grads = []
    with torch.no_grad():
        for g in grad_input:
            if g is None:
                grads.append(None)
            else:
                grads.append(torch.nan_to_num(g))
    return tuple(grads)


class LowMemConvBase(nn.Module):
    """
    Base class for MalConv style models that must look at sequences of many
    millions of bytes. The forward pass is split in two: first a no-grad sweep
    over the whole input in chunks to find which windows "win" the temporal
    max-pool, then a second pass that only recomputes those winning windows with
    gradients enabled. Memory use is therefore O(chunk_size) instead of O(T).

    Sub-classes implement processRange(x, **kwargs) which maps a (B, T) byte
    tensor slice to a (B, C, T') activation map.
    """

    def __init__(self, chunk_size=65536, overlap=512, min_chunk_size=1024):
        super(LowMemConvBase, self).__init__()
        self.chunk_size = chunk_size
        self.overlap = overlap
        self.min_chunk_size = min_chunk_size
        self.pooling = nn.AdaptiveMaxPool1d(1)
        self.receptive_field = None

    def processRange(self, x, **kwargs):
        raise NotImplementedError("sub-class must implement processRange")

    def determinRF(self):
        """
        Works out the receptive field and stride of processRange by probing it
        with growing inputs. Cached after the first call.
        """
        if self.receptive_field is not None:
            return self.receptive_field, self.stride, self.out_channels

        if not hasattr(self, "device_probe"):
            self.device_probe = next(self.parameters()).device
        device = self.device_probe

        min_rf = 1
        max_rf = self.chunk_size

        with torch.no_grad():
            tmp = torch.zeros((1, max_rf), dtype=torch.long, device=device)
            while True:
                test_size = (min_rf + max_rf) // 2
                is_valid = True
                try:
                    self.processRange(tmp[:, 0:test_size])
                except Exception:
                    is_valid = False
                if is_valid:
                    max_rf = test_size
                else:
                    min_rf = test_size + 1
                if max_rf == min_rf:
                    self.receptive_field = min_rf
                    out_shape = self.processRange(tmp).shape
                    self.stride = self.chunk_size // out_shape[2]
                    self.out_channels = out_shape[1]
                    break

        return self.receptive_field, self.stride, self.out_channels

    def pool_group(self, x, **kwargs):
        # x is (B, C, T'), returns (B, C) maximum over time plus arg-max indices
        vals, idx = F.max_pool1d(x, kernel_size=x.shape[-1], return_indices=True)
        return vals.squeeze(-1), idx.squeeze(-1)

    def seq2fix(self, x, pr_args={}):
        """
        x is a (B, T) LongTensor that normally lives in host memory. Only chunk
        sized slices are copied to the model's device.
        """
        receptive_window, stride, out_channels = self.determinRF()

        if x.shape[1] < receptive_window:
            x = F.pad(x, (0, receptive_window - x.shape[1]), value=0)

        batch_size = x.shape[0]
        length = x.shape[1]
        device = next(self.parameters()).device

        winner_values = np.zeros((batch_size, out_channels)) - 1.0
        winner_indices = np.zeros((batch_size, out_channels), dtype=np.int64)

        step = self.chunk_size
        start = 0
        end = start + step

        with torch.no_grad():
            while start < end and (end - start) >= max(self.min_chunk_size, receptive_window):
                x_sub = x[:, start:end].to(device, non_blocking=True)
                activs = self.processRange(x_sub.long(), **pr_args)
                activ_win, activ_indx = self.pool_group(activs)

                activ_win = activ_win.cpu().numpy()
                activ_indx = activ_indx.cpu().numpy()
                selected = winner_values < activ_win
                winner_indices[selected] = activ_indx[selected] * stride + start
                winner_values[selected] = activ_win[selected]

                start = end - self.overlap
                end = min(start + step, length)

        # Second pass: gather the winning receptive fields and recompute with grad
        final_indices = [np.unique(winner_indices[b, :]) for b in range(batch_size)]
        chunk_list = [[x[b:b + 1, max(i - receptive_window, 0):min(i + receptive_window, length)]
                       for i in final_indices[b]] for b in range(batch_size)]
        chunk_list = [torch.cat(c, dim=1)[0, :] for c in chunk_list]
        x_selected = nn.utils.rnn.pad_sequence(chunk_list, batch_first=True)
        x_selected = x_selected.to(device, non_blocking=True)

        x_selected = self.processRange(x_selected.long(), **pr_args)
        x_selected = self.pooling(x_selected)
        x_selected = x_selected.view(x_selected.size(0), -1)

        return x_selected


class ChunkStats(object):
    """Small helper to keep a running average of chunk timings for logging."""

    def __init__(self, window=100):
        self.times = deque(maxlen=window)

    def add(self, t):
        self.times.append(t)

    @property
    def mean(self):
        if len(self.times) == 0:
            return 0.0
        return sum(self.times) / len(self.times)
