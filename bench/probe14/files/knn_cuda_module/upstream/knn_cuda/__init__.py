"""K-nearest-neighbour search on the GPU.

Pytorch wrapper around a small CUDA kernel (knn.cu) that computes the k nearest
reference points for every query point. The kernel is compiled on first import
with torch.utils.cpp_extension.load and cached in ~/.cache/torch_extensions.

Example
-------
>>> import torch
>>> from knn_cuda import KNN
>>> knn = KNN(k=10, transpose_mode=True)
>>> ref = torch.rand(32, 1000, 5).cuda()
>>> query = torch.rand(32, 50, 5).cuda()
>>> dist, indx = knn(ref, query)  # 32 x 50 x 10
"""
import os

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load

__version__ = "0.2"


def _load_cpp_ext(ext_name):
    root_dir = os.path.join(os.path.split(__file__)[0])
    src_dir = os.path.join(root_dir, "csrc")
    tar_dir = os.path.join(src_dir, "build", ext_name)
    os.makedirs(tar_dir, exist_ok=True)
    srcs = ["cuda/knn.cu", "cuda/knn.cpp"]
    srcs = [os.path.join(src_dir, s) for s in srcs]

    ext = load(
        name=ext_name,
        sources=srcs,
        extra_cflags=["-O3"],
        extra_cuda_cflags=["-O3", "-gencode=arch=compute_70,code=sm_70",
                           "-gencode=arch=compute_80,code=sm_80"],
        build_directory=tar_dir,
        verbose=False,
    )
    return ext


# defer the (slow) build until somebody actually asks for a KNN
_knn = None


def _get_ext():
    global _knn
    if _knn is None:
        _knn = _load_cpp_ext("knn")
    return _knn


def knn(ref, query, k):
    d, i = _get_ext().knn(ref, query, k)
    i -= 1
    return d, i


def _T(t, mode=False):
    if mode:
        return t.transpose(0, 1).contiguous()
    else:
        return t


class KNN(nn.Module):
    """Batched exact KNN.

    Args:
        k (int): number of neighbours
        transpose_mode (bool): if True, inputs are [B, N, C] instead of [C, N] per batch
    """

    def __init__(self, k, transpose_mode=False):
        super(KNN, self).__init__()
        self.k = k
        self._t = transpose_mode

    def forward(self, ref, query):
        assert ref.size(0) == query.size(0), "ref.shape={} != query.shape={}".format(ref.shape, query.shape)
        assert ref.is_cuda and query.is_cuda, "KNN_CUDA only accepts CUDA tensors"
        with torch.no_grad():
            batch_size = ref.size(0)
            D, I = [], []
            for bi in range(batch_size):
                r, q = _T(ref[bi], self._t), _T(query[bi], self._t)
                d, i = knn(r.float(), q.float(), self.k)
                d, i = _T(d, self._t), _T(i, self._t)
                D.append(d)
                I.append(i)
            D = torch.stack(D, dim=0)
            I = torch.stack(I, dim=0)
        return D, I


def knn_torch(ref, query, k):
    """Reference implementation used in the unit tests (runs on any device)."""
    dist = torch.cdist(query, ref)  # [B, M, N]
    d, i = dist.topk(k, dim=-1, largest=False)
    return d, i


def group_points(points, idx):
    """Gather neighbour features: points [B, N, C], idx [B, M, K] -> [B, M, K, C]."""
    B, M, K = idx.shape
    batch = torch.arange(B, device=points.device).view(B, 1, 1).expand(B, M, K)
    return points[batch, idx]


if __name__ == "__main__":
    torch.manual_seed(0)
    ref = torch.rand(4, 2048, 3).cuda()
    query = torch.rand(4, 512, 3).cuda()
    knn_mod = KNN(k=16, transpose_mode=True)
    d, i = knn_mod(ref, query)
    d_ref, i_ref = knn_torch(ref, query, 16)
    print("max |d - d_ref| =", (d - d_ref).abs().max().item())
    torch.cuda.synchronize()
