#########################################################################
##   This file is part of the auto_LiRPA library, a core part of the   ##
##   alpha-beta-CROWN (alpha-beta-CROWN) neural network verifier       ##
##   developed by the alpha-beta-CROWN Team                            ##
##                                                                     ##
##   This program is licensed under the BSD 3-Clause License,          ##
##   contained in the LICENCE file in this directory.                  ##
##                                                                     ##
#########################################################################
"""Optional CUDA kernels used by auto_LiRPA.

``double2float`` converts a float64 bound tensor to float32 while rounding in a
*sound* direction (down for lower bounds, up for upper bounds). The fast path is a
small CUDA kernel compiled on first use with ``torch.utils.cpp_extension.load``;
when the kernel cannot be built we fall back to a pure PyTorch implementation.
"""
import os
import sys
import time

import torch
from torch.utils.cpp_extension import load, BuildExtension, CUDAExtension
from setuptools import setup


class DummyCudaClass:
    """A dummy class with error message when a CUDA function is called."""

    def __getattr__(self, attr):
        if attr == "double2float":
            # When CUDA is not available, we return a workaround for double2float.
            return double2float_torch
        raise RuntimeError(
            "auto_LiRPA was unable to build the CUDA kernel ({}); please make sure nvcc is "
            "installed and matches the CUDA version of PyTorch.".format(attr))


def double2float_torch(x, direction):
    """Pure PyTorch fallback: round-to-nearest, then step one ulp in the sound direction
    wherever rounding went the wrong way."""
    assert direction in ("down", "up")
    x_f = x.float()
    if direction == "down":
        wrong = x_f.double() > x
        target = torch.full_like(x_f, -float("inf"))
    else:
        wrong = x_f.double() < x
        target = torch.full_like(x_f, float("inf"))
    x_f = torch.where(wrong, torch.nextafter(x_f, target), x_f)
    return x_f


# Only try to build the kernel if CUDA is available; compiling takes ~1 minute on first use
# and the result is cached under ~/.cache/torch_extensions.
if (torch.cuda.is_available()
        and not os.environ.get("AUTOLIRPA_DISABLE_CUDA_KERNEL", "0") == "1"):
    try:
        _start = time.time()
        cuda_utils = load(
            "cuda_utils",
            [os.path.join(os.path.dirname(__file__), "cuda_utils.cpp"),
             os.path.join(os.path.dirname(__file__), "cuda_kernels.cu")],
            extra_cuda_cflags=["-O3", "--use_fast_math"],
            verbose=False)
        print("CUDA kernels loaded in {:.1f}s".format(time.time() - _start))
    except Exception as e:  # pylint: disable=broad-except
        print("CUDA kernel build failed ({}); falling back to the PyTorch implementation.".format(e))
        cuda_utils = DummyCudaClass()
else:
    cuda_utils = DummyCudaClass()


def double2float(x, direction):
    """Public entry point used by the bound propagation code."""
    if x.dtype != torch.float64:
        return x
    return cuda_utils.double2float(x, direction)


def test_double2float():
    # Find the impl in CUDA.
    import random
    for _ in range(20):
        shape = (random.randint(1, 1000), random.randint(1, 100))
        a = torch.randn(size=shape, dtype=torch.float64, device="cuda")
        a = a * torch.exp(torch.randn(size=shape, dtype=torch.float64, device="cuda") * 10)
        down = cuda_utils.double2float(a, "down")
        up = cuda_utils.double2float(a, "up")
        ref_down = double2float_torch(a, "down")
        ref_up = double2float_torch(a, "up")
        assert (down.double() <= a).all(), "rounding down is not sound"
        assert (up.double() >= a).all(), "rounding up is not sound"
        assert torch.equal(down, ref_down) and torch.equal(up, ref_up)
    torch.cuda.synchronize()
    print("double2float: all tests passed.")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "install":
        # Build an ahead-of-time extension: python auto_LiRPA/cuda_utils.py install
        setup(
            name="cuda_utils",
            ext_modules=[CUDAExtension("cuda_utils", [
                "auto_LiRPA/cuda_utils.cpp", "auto_LiRPA/cuda_kernels.cu"])],
            cmdclass={"build_ext": BuildExtension.with_options(use_ninja=False)},
            script_args=["build_ext", "--inplace"],
        )
    else:
        test_double2float()
