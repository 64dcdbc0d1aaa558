import os

import torch

import flag_gems

from .conftest import QUICK_MODE, TO_CPU

DEVICE = "cuda"
# when TO_CPU is set the reference is computed on the host in float64
REF_DEVICE = "cpu" if TO_CPU else DEVICE

major, minor = torch.cuda.get_device_capability()
bf16_is_supported = torch.cuda.is_bf16_supported()

FLOAT_DTYPES = [torch.float16, torch.float32]
if bf16_is_supported:
    FLOAT_DTYPES.append(torch.bfloat16)
ALL_FLOAT_DTYPES = FLOAT_DTYPES + [torch.float64]
INT_DTYPES = [torch.int16, torch.int32]
ALL_INT_DTYPES = INT_DTYPES + [torch.int64]
BOOL_TYPES = [torch.bool]

SCALARS = [0.001, -0.999, 100.001, -111.999]
DIM_LIST = [1] if QUICK_MODE else [0, 1]
DIMS_LIST = [1] if QUICK_MODE else [0, 1, [0, 1], [1, 0]]
KEEPDIM_DIMS = (
    [(True, DIMS_LIST[0])] if QUICK_MODE else list(zip([True, False] * 2, DIMS_LIST))
)

POINTWISE_SHAPES = (
    [(2, 19, 7)]
    if QUICK_MODE
    else [(), (1,), (1024, 1024), (20, 320, 15), (16, 128, 64, 60), (16, 7, 57, 32, 29)]
)
REDUCTION_SHAPES = [(2, 32)] if QUICK_MODE else [(1, 2), (4096, 256), (200, 40999, 3)]
REDUCTION_SMALL_SHAPES = (
    [(1, 32)] if QUICK_MODE else [(1, 2), (4096, 256), (200, 2560, 3)]
)
MNK_SHAPES = [15] if QUICK_MODE else [15, 160, 1024]

RESOLUTION = {
    torch.bool: 0,
    torch.int16: 0,
    torch.int32: 0,
    torch.int64: 0,
    torch.float16: 1e-3,
    torch.float32: 1.3e-6,
    torch.bfloat16: 0.016,
    torch.float64: 1e-7,
}

# TF32 in cuBLAS would make the torch reference less precise than our kernels
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


def SkipVersion(module_name, skip_pattern):
    cmp = skip_pattern[0]
    assert cmp in ("=", "<", ">"), f"Invalid comparison operator: {cmp}"
    try:
        M, N = skip_pattern[1:].split(".")
        M, N = int(M), int(N)
    except Exception:
        raise ValueError("Cannot parse version number from skip_pattern.")

    try:
        module = getattr(__import__("builtins"), module_name, None) or __import__(module_name)
        version = module.__version__
        major, minor = map(int, version.split(".")[:2])
    except Exception:
        raise ImportError(f"Cannot determine version of module: {module_name}")

    if cmp == "=":
        return major == M and minor == N
    elif cmp == "<":
        return (major, minor) < (M, N)
    else:
        return (major, minor) > (M, N)


def to_reference(inp, upcast=False):
    if inp is None:
        return None
    ref_inp = inp
    if TO_CPU:
        ref_inp = ref_inp.to("cpu")
    if upcast:
        if ref_inp.is_complex():
            ref_inp = ref_inp.to(torch.complex128)
        else:
            ref_inp = ref_inp.to(torch.float64)
    return ref_inp


def to_cpu(res, ref):
    if TO_CPU:
        res = res.to("cpu")
        assert ref.device == torch.device("cpu")
    return res


def gems_assert_close(res, ref, dtype, equal_nan=False, reduce_dim=1, atol=1e-4):
    res = to_cpu(res, ref)
    flag_gems.testing.assert_close(
        res, ref, dtype, equal_nan=equal_nan, reduce_dim=reduce_dim, atol=atol
    )


def gems_assert_equal(res, ref, equal_nan=False):
    res = to_cpu(res, ref)
    flag_gems.testing.assert_equal(res, ref, equal_nan=equal_nan)


def make_input(shape, dtype, low=-1.0, high=1.0, requires_grad=False):
    if dtype in ALL_INT_DTYPES:
        t = torch.randint(-1000, 1000, shape, dtype=dtype, device="cuda")
    elif dtype is torch.bool:
        t = torch.randint(0, 2, shape, dtype=dtype, device="cuda")
    else:
        t = torch.empty(shape, dtype=dtype, device="cuda").uniform_(low, high)
    if requires_grad:
        t.requires_grad_(True)
    return t


def init_seed(seed=0):
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    os.environ.setdefault("PYTHONHASHSEED", str(seed))


def device_is_hopper_or_newer():
    return major >= 9
