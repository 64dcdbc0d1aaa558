import os
import random
import subprocess
import numpy as np
import torch
import torch.nn.functional as F
import pynvml

from config import *


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    os.environ['PYTHONHASHSEED'] = str(seed)


def get_loss(logits, targets, padding_mask):
    """cross entropy over the non-padded tokens"""
    logits = logits.reshape(-1, logits.shape[-1])
    targets = targets.reshape(-1)
    keep = ~padding_mask.reshape(-1)
    return F.cross_entropy(logits[keep], targets[keep])


def get_gpu_info():
    """query total / used memory of every visible GPU with nvidia-smi"""
    out = subprocess.check_output(
        ['nvidia-smi', '--query-gpu=index,name,memory.total,memory.used', '--format=csv,noheader,nounits'],
        encoding='utf-8')
    gpus = []
    for line in out.strip().split('\n'):
        idx, name, total, used = [x.strip() for x in line.split(',')]
        gpus.append({'index': int(idx), 'name': name, 'total_mb': int(total), 'used_mb': int(used)})
    return gpus


_NVML_READY = False


def log_gpu_memory(writer, step, local_rank=0):
    """write device memory utilisation (driver view, includes other processes) to tensorboard"""
    global _NVML_READY
    if not _NVML_READY:
        pynvml.nvmlInit()
        _NVML_READY = True
    handle = pynvml.nvmlDeviceGetHandleByIndex(local_rank)
    info = pynvml.nvmlDeviceGetMemoryInfo(handle)
    util = pynvml.nvmlDeviceGetUtilizationRates(handle)
    writer.add_scalar('GPU/mem_used_GB', info.used / 2 ** 30, step)
    writer.add_scalar('GPU/util', util.gpu, step)


def quantize(data, n_bits=8, min_range=-1.0, max_range=1.0):
    """Convert vertices in [-1., 1.] to discrete values in [0, n_bits**2 - 1]."""
    range_quantize = 2 ** n_bits - 1
    data_quantize = (data - min_range) * range_quantize / (max_range - min_range)
    data_quantize = np.clip(data_quantize, a_min=0, a_max=range_quantize)
    return data_quantize.astype('int32')


def dequantize(verts, n_bits=8, min_range=-0.5, max_range=0.5):
    """Convert quantized vertices to floats."""
    range_quantize = 2 ** n_bits - 1
    verts = verts.astype('float32')
    verts = verts * (max_range - min_range) / range_quantize + min_range
    return verts


def find_arc_geometry(a, b, c):
    A = b[0] - a[0]
    B = b[1] - a[1]
    C = c[0] - a[0]
    D = c[1] - a[1]

    E = A * (a[0] + b[0]) + B * (a[1] + b[1])
    F = C * (a[0] + c[0]) + D * (a[1] + c[1])

    G = 2.0 * (A * (c[1] - b[1]) - B * (c[0] - b[0]))

    if G == 0:
        raise Exception("zero G")

    p_0 = (D * E - B * F) / G
    p_1 = (A * F - C * E) / G

    center = np.array([p_0, p_1])
    radius = np.linalg.norm(center - a)

    angles = []
    for xx in [a, b, c]:
        angle = angle_from_vector_to_x(xx - center)
        angles.append(angle)

    ab = b - a
    ac = c - a
    cp = np.cross(ab, ac)
    if cp >= 0:
        start_angle_rads = angles[0]
        end_angle_rads = angles[2]
    else:
        start_angle_rads = angles[2]
        end_angle_rads = angles[0]

    return center, radius, start_angle_rads, end_angle_rads


def angle_from_vector_to_x(vec):
    assert vec.size == 2
    # We need to find a unit vector
    angle = 0.0

    l = np.linalg.norm(vec)
    uvec = vec / l

    # 2 | 1
    # -------
    # 3 | 4
    if uvec[0] >= 0:
        if uvec[1] >= 0:
            # Qadrant 1
            angle = np.arcsin(uvec[1])
        else:
            # Qadrant 4
            angle = 2.0 * np.pi - np.arcsin(-uvec[1])
    else:
        if vec[1] >= 0:
            # Qadrant 2
            angle = np.pi - np.arcsin(uvec[1])
        else:
            # Qadrant 3
            angle = np.pi + np.arcsin(-uvec[1])
    return angle


def sort_faces(faces):
    """sort loops (faces) by their bottom-left vertex, as in the DeepCAD ordering"""
    keys = []
    for face in faces:
        pts = np.concatenate([np.asarray(c)[:, :2] for c in face], 0)
        keys.append((pts[:, 1].min(), pts[:, 0].min()))
    order = sorted(range(len(faces)), key=lambda i: keys[i])
    return [faces[i] for i in order]
