"""
MIT License

Copyright (c) 2019 Sadeep Jayasumana

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

GPU port of the permutohedral lattice: the CUDA kernels in src/permutohedral_cuda.cu
follow the splat / blur / slice scheme of Adams et al. and Monteiro's TF op.
"""

import os
from abc import ABC, abstractmethod

import numpy as np
import torch
from torch.utils.cpp_extension import load

try:
    import permuto_cpp
except ImportError as e:
    raise ImportError("Could not import permuto_cpp; did you run `python setup.py install` "
                      "in crfasrnn/ and import `torch` first?") from e

_SRC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "src")

if torch.cuda.is_available():
    # JIT-compile the CUDA lattice the first time the module is imported (~1 min)
    permuto_gpu = load(
        name="permuto_cuda",
        sources=[
            os.path.join(_SRC_DIR, "permuto_cuda.cpp"),
            os.path.join(_SRC_DIR, "permutohedral_cuda.cu"),
        ],
        extra_cuda_cflags=["-O3", "--use_fast_math", "-DPD_DIM_CAP=8"],
        verbose=False,
    )
else:
    permuto_gpu = None

_DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
_EPS = np.finfo("float").eps


class PermutoFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q_in, features):
        if q_in.is_cuda:
            q_out = permuto_gpu.forward(q_in.contiguous(), features.contiguous())[0]
        else:
            q_out = permuto_cpp.forward(q_in, features)[0]
        ctx.save_for_backward(features)
        return q_out

    @staticmethod
    def backward(ctx, grad_q_out):
        feature_saved = ctx.saved_tensors[0]
        if grad_q_out.is_cuda:
            grad_q_back = permuto_gpu.backward(
                grad_q_out.contiguous(), feature_saved.contiguous()
            )[0]
        else:
            grad_q_back = permuto_cpp.backward(
                grad_q_out.contiguous(), feature_saved.contiguous()
            )[0]
        return grad_q_back, None  # No need of grads w.r.t. features


def _spatial_features(image, sigma):
    """
    Return the spatial features as a Tensor

    Args:
        image:  Image as a Tensor of shape (channels, height, wight)
        sigma:  Bandwidth parameter

    Returns:
        Tensor of shape [h, w, 2] with spatial features
    """
    sigma = float(sigma)
    _, h, w = image.size()
    x = torch.arange(start=0, end=w, dtype=torch.float32, device=_DEVICE)
    xx = x.repeat([h, 1]) / sigma

    y = torch.arange(
        start=0, end=h, dtype=torch.float32, device=_DEVICE
    ).view(-1, 1)
    yy = y.repeat([1, w]) / sigma

    return torch.stack([xx, yy], dim=2)


class AbstractFilter(ABC):
    """
    Super-class for permutohedral-based Gaussian filters
    """

    def __init__(self, image):
        self.features = self._calc_features(image)
        self.norm = self._calc_norm(image)

    def apply(self, input_):
        output = PermutoFunction.apply(input_, self.features)
        return output * self.norm

    @abstractmethod
    def _calc_features(self, image):
        pass

    def _calc_norm(self, image):
        _, h, w = image.size()
        all_ones = torch.ones((1, h, w), dtype=torch.float32, device=_DEVICE)
        norm = PermutoFunction.apply(all_ones, self.features)
        return 1.0 / (norm + _EPS)


class SpatialFilter(AbstractFilter):
    """
    Gaussian filter in the spatial ([x, y]) domain
    """

    def __init__(self, image, gamma):
        """
        Create new instance

        Args:
            image:  Image tensor of shape (3, height, width)
            gamma:  Standard deviation
        """
        self.gamma = gamma
        super(SpatialFilter, self).__init__(image)

    def _calc_features(self, image):
        return _spatial_features(image, self.gamma)


class BilateralFilter(AbstractFilter):
    """
    Gaussian filter in the bilateral ([r, g, b, x, y]) domain
    """

    def __init__(self, image, alpha, beta):
        """
        Create new instance

        Args:
            image:  Image tensor of shape (3, height, width)
            alpha:  Smoothness (spatial) sigma
            beta:   Appearance (color) sigma
        """
        self.alpha = alpha
        self.beta = beta
        super(BilateralFilter, self).__init__(image)

    def _calc_features(self, image):
        xy = _spatial_features(
            image, self.alpha
        )  # TODO Possible optimisation, was calculated in the spatial kernel
        rgb = (image / float(self.beta)).permute(1, 2, 0)  # Channel last order
        return torch.cat([xy, rgb], dim=2)
