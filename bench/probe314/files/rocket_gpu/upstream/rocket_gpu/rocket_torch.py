"""ROCKET transform on the GPU.

Port of angus924/rocket (rocket_functions.py, numba) to PyTorch. Kernels are generated exactly as in the
reference implementation (same random draws for a given seed) and then grouped by (length, dilation,
padding) so that each group can be applied with a single conv1d call. Output: for every kernel the
proportion of positive values (ppv) and the max, i.e. 2 * num_kernels features per series.

The reference implementation works in float64; we use float32 on the GPU which changes the features
in the ~1e-6 range (irrelevant for the ridge classifier, checked on the 85 "bake off" datasets).
"""
from collections import defaultdict

import numpy as np
import torch
import torch.nn.functional as F

__all__ = ['generate_kernels', 'RocketGPU', 'apply_kernels_gpu']

if torch.cuda.is_available():
    dtype = torch.cuda.FloatTensor
    DEVICE = torch.device('cuda')
else:
    dtype = torch.FloatTensor
    DEVICE = torch.device('cpu')


def generate_kernels(input_length, num_kernels, seed=None):
    "Same as rocket_functions.generate_kernels (numpy only, runs on the host)"
    if seed is not None:
        np.random.seed(seed)

    candidate_lengths = np.array((7, 9, 11), dtype=np.int32)
    lengths = np.random.choice(candidate_lengths, num_kernels)

    weights = np.zeros(lengths.sum(), dtype=np.float64)
    biases = np.zeros(num_kernels, dtype=np.float64)
    dilations = np.zeros(num_kernels, dtype=np.int32)
    paddings = np.zeros(num_kernels, dtype=np.int32)

    a1 = 0

    for i in range(num_kernels):
        _length = lengths[i]

        _weights = np.random.normal(0, 1, _length)

        b1 = a1 + _length
        weights[a1:b1] = _weights - _weights.mean()

        biases[i] = np.random.uniform(-1, 1)

        dilation = 2 ** np.random.uniform(0, np.log2((input_length - 1) / (_length - 1)))
        dilation = np.int32(dilation)
        dilations[i] = dilation

        padding = ((_length - 1) * dilation) // 2 if np.random.randint(2) == 1 else 0
        paddings[i] = padding

        a1 = b1

    return weights, lengths, biases, dilations, paddings


class RocketGPU(object):
    """Holds the kernels grouped for batched application.

    rocket = RocketGPU(input_length=X.shape[-1], num_kernels=10_000, seed=0)
    features = rocket.transform(X)   # X: np.ndarray (n, length) or (n, 1, length)
    """

    def __init__(self, input_length, num_kernels=10_000, seed=None, device=None):
        self.input_length = input_length
        self.num_kernels = num_kernels
        self.device = DEVICE if device is None else torch.device(device)
        weights, lengths, biases, dilations, paddings = generate_kernels(input_length, num_kernels, seed)
        self.kernels = (weights, lengths, biases, dilations, paddings)
        self._build_groups(*self.kernels)

    def _build_groups(self, weights, lengths, biases, dilations, paddings):
        groups = defaultdict(list)
        a = 0
        for i in range(self.num_kernels):
            b = a + lengths[i]
            groups[(int(lengths[i]), int(dilations[i]), int(paddings[i]))].append((i, weights[a:b], biases[i]))
            a = b
        self.groups = []
        for (length, dilation, padding), items in groups.items():
            idx = torch.LongTensor([it[0] for it in items])
            w = torch.from_numpy(np.stack([it[1] for it in items])).unsqueeze(1).type(dtype)
            bias = torch.from_numpy(np.array([it[2] for it in items])).type(dtype)
            self.groups.append(dict(idx=idx, w=w, b=bias, dilation=dilation, padding=padding, length=length))

    def to(self, device):
        self.device = torch.device(device)
        for g in self.groups:
            g['w'] = g['w'].to(self.device)
            g['b'] = g['b'].to(self.device)
        return self

    @torch.no_grad()
    def transform(self, X, batch_size=256):
        X = np.asarray(X)
        if X.ndim == 2:
            X = X[:, None, :]
        n = X.shape[0]
        out = torch.zeros((n, self.num_kernels * 2), dtype=torch.float32)
        for start in range(0, n, batch_size):
            xb = torch.from_numpy(X[start:start + batch_size]).type(dtype)
            out[start:start + batch_size] = apply_kernels_gpu(xb, self.groups, self.num_kernels).cpu()
        return out.numpy()


def apply_kernels_gpu(xb, groups, num_kernels):
    "xb: (bs, 1, length) on the GPU -> (bs, 2 * num_kernels) features [ppv_0, max_0, ppv_1, max_1, ...]"
    bs = xb.shape[0]
    feats = torch.empty((bs, num_kernels, 2), dtype=xb.dtype, device=xb.device)
    for g in groups:
        C = F.conv1d(xb, g['w'], bias=g['b'], padding=g['padding'], dilation=g['dilation'])
        # C: (bs, n_kernels_in_group, output_length)
        ppv = (C > 0).float().mean(-1)
        mx = C.max(-1).values
        idx = g['idx'].to(xb.device)
        feats[:, idx, 0] = ppv
        feats[:, idx, 1] = mx
    return feats.reshape(bs, -1)
