"""Torch helpers shared by the dexterous-manipulation tasks and the PPO learner.

Most of the math below is a copy of isaacgym/torch_utils.py (TorchScript'ed so the per-env
computations in compute_observations() stay fused), plus a few device / seeding / memory helpers.
"""
import os
import random
import warnings

import numpy as np
import torch

try:
    import pynvml

    pynvml.nvmlInit()
    _NVML_OK = True
except Exception:  # no NVIDIA driver / pynvml missing
    _NVML_OK = False


# ----------------------------------------------------------------------------
# device / seeding helpers
# ----------------------------------------------------------------------------

def get_device(device: str = "auto") -> torch.device:
    """Resolve a device string. 'auto' picks the first GPU when there is one."""
    if device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda:0")
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        warnings.warn(f"Requested {device} but CUDA is not available, falling back to CPU.")
        return torch.device("cpu")
    return torch.device(device)


def seed_everything(seed: int, deterministic: bool = False) -> int:
    if seed < 0:
        seed = np.random.randint(0, 2**31 - 1)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    if deterministic:
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
        torch.use_deterministic_algorithms(True, warn_only=True)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
    return seed


def gpu_memory_stats(device=None) -> dict:
    """Allocator statistics in GB, logged to tensorboard every `log_interval` iterations."""
    if not torch.cuda.is_available():
        return {}
    gb = 1024.0 ** 3
    stats = {
        "mem/allocated_gb": torch.cuda.memory_allocated(device) / gb,
        "mem/reserved_gb": torch.cuda.memory_reserved(device) / gb,
        "mem/max_allocated_gb": torch.cuda.max_memory_allocated(device) / gb,
    }
    if _NVML_OK:
        index = 0 if device is None else torch.device(device).index or 0
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        stats["gpu/util_percent"] = pynvml.nvmlDeviceGetUtilizationRates(handle).gpu
    return stats


def release_cached_memory():
    """Called after env re-creation (curriculum switches) to hand the cache back to PhysX."""
    torch.cuda.empty_cache()


# ----------------------------------------------------------------------------
# tensor construction
# ----------------------------------------------------------------------------

def to_torch(x, dtype=torch.float, device="cuda:0", requires_grad=False):
    return torch.tensor(x, dtype=dtype, device=device, requires_grad=requires_grad)


def torch_rand_float(lower, upper, shape, device):
    # type: (float, float, Tuple[int, int], str) -> Tensor
    return (upper - lower) * torch.rand(*shape, device=device) + lower


def unscale_transform(x, lower, upper):
    offset = (lower + upper) * 0.5
    return (x - offset) * 2 / (upper - lower)


def scale_transform(x, lower, upper):
    offset = (lower + upper) * 0.5
    return 0.5 * x * (upper - lower) + offset


# ----------------------------------------------------------------------------
# quaternion math (xyzw convention, as in Isaac Gym)
# ----------------------------------------------------------------------------

@torch.jit.script
def normalize(x, eps: float = 1e-9):
    return x / x.norm(p=2, dim=-1).clamp(min=eps, max=None).unsqueeze(-1)


@torch.jit.script
def quat_mul(a, b):
    assert a.shape == b.shape
    shape = a.shape
    a = a.reshape(-1, 4)
    b = b.reshape(-1, 4)

    x1, y1, z1, w1 = a[:, 0], a[:, 1], a[:, 2], a[:, 3]
    x2, y2, z2, w2 = b[:, 0], b[:, 1], b[:, 2], b[:, 3]
    ww = (z1 + x1) * (x2 + y2)
    yy = (w1 - y1) * (w2 + z2)
    zz = (w1 + y1) * (w2 - z2)
    xx = ww + yy + zz
    qq = 0.5 * (xx + (z1 - x1) * (x2 - y2))
    w = qq - ww + (z1 - y1) * (y2 - z2)
    x = qq - xx + (x1 + w1) * (x2 + w2)
    y = qq - yy + (w1 - x1) * (y2 + z2)
    z = qq - zz + (z1 + y1) * (w2 - x2)

    quat = torch.stack([x, y, z, w], dim=-1).view(shape)

    return quat


@torch.jit.script
def quat_conjugate(a):
    shape = a.shape
    a = a.reshape(-1, 4)
    return torch.cat((-a[:, :3], a[:, -1:]), dim=-1).view(shape)


@torch.jit.script
def quat_apply(a, b):
    shape = b.shape
    a = a.reshape(-1, 4)
    b = b.reshape(-1, 3)
    xyz = a[:, :3]
    t = xyz.cross(b, dim=-1) * 2
    return (b + a[:, 3:] * t + xyz.cross(t, dim=-1)).view(shape)


@torch.jit.script
def quat_rotate(q, v):
    shape = q.shape
    q_w = q[:, -1]
    q_vec = q[:, :3]
    a = v * (2.0 * q_w ** 2 - 1.0).unsqueeze(-1)
    b = torch.cross(q_vec, v, dim=-1) * q_w.unsqueeze(-1) * 2.0
    c = q_vec * \
        torch.bmm(q_vec.view(shape[0], 1, 3), v.view(
            shape[0], 3, 1)).squeeze(-1) * 2.0
    return a + b + c


@torch.jit.script
def quat_rotate_inverse(q, v):
    shape = q.shape
    q_w = q[:, -1]
    q_vec = q[:, :3]
    a = v * (2.0 * q_w ** 2 - 1.0).unsqueeze(-1)
    b = torch.cross(q_vec, v, dim=-1) * q_w.unsqueeze(-1) * 2.0
    c = q_vec * \
        torch.bmm(q_vec.view(shape[0], 1, 3), v.view(
            shape[0], 3, 1)).squeeze(-1) * 2.0
    return a - b + c


@torch.jit.script
def quat_from_angle_axis(angle, axis):
    theta = (angle / 2).unsqueeze(-1)
    xyz = normalize(axis) * theta.sin()
    w = theta.cos()
    return quat_unit(torch.cat([xyz, w], dim=-1))


@torch.jit.script
def quat_unit(a):
    return normalize(a)


@torch.jit.script
def tensor_clamp(t, min_t, max_t):
    return torch.max(torch.min(t, max_t), min_t)


@torch.jit.script
def orientation_error(desired, current):
    cc = quat_conjugate(current)
    q_r = quat_mul(desired, cc)
    return q_r[:, 0:3] * torch.sign(q_r[:, 3]).unsqueeze(-1)


@torch.jit.script
def randomize_rotation(rand0, rand1, x_unit_tensor, y_unit_tensor):
    return quat_mul(quat_from_angle_axis(rand0 * np.pi, x_unit_tensor),
                    quat_from_angle_axis(rand1 * np.pi, y_unit_tensor))


def get_axis_params(value, axis_idx, x_value=0., dtype=np.float64, n_dims=3):
    """construct arguments to `Vec` according to axis index.
    """
    zs = np.zeros((n_dims,))
    assert axis_idx < n_dims, "the axis dim should be within the vector dimensions"
    zs[axis_idx] = 1.
    params = np.where(zs == 1., value, zs)
    params[0] = x_value
    return list(params.astype(dtype))
