# --------------------------------------------------------
# Fast R-CNN
# Copyright (c) 2015 Microsoft
# Licensed under The MIT License [see LICENSE for details]
# Written by Ross Girshick
# --------------------------------------------------------
# Used by util/functions.py::parse_det_offset with usegpu=True, gpu_id=0.
# Build the Cython/CUDA modules first: cd util && python setup.py build_ext --inplace

from util.nms.py_cpu_nms import py_cpu_nms
from util.nms.cpu_nms import cpu_nms, cpu_soft_nms
from util.nms.gpu_nms import gpu_nms


def nms(dets, thresh, usegpu, gpu_id):
    """Dispatch to either CPU or GPU NMS implementations. dets: (N, 5) float32 numpy."""
    if dets.shape[0] == 0:
        return []
    if usegpu:
        keep = gpu_nms(dets, thresh, device_id=gpu_id)
    else:
        keep = cpu_nms(dets, thresh)
    return keep


def soft_nms(dets, sigma=0.5, Nt=0.3, threshold=0.001, method=1):
    keep = cpu_soft_nms(dets.copy(), sigma=sigma, Nt=Nt, threshold=threshold, method=method)
    return keep


def nms_python(dets, thresh):
    """Slow reference implementation, handy when the extensions are not built."""
    return py_cpu_nms(dets, thresh)
