import logging
import time
from typing import Callable

import numpy as np
import torch

from .. import configure

try:
    import cupy
except BaseException as e:
    logging.info(f'spikingjelly.activation_based.cuda_utils: {e}')
    cupy = None


def cpu_timer(f: Callable, *args, **kwargs):
    """
    * :ref:`API in English <cpu_timer-en>`

    .. _cpu_timer-cn:

    计算在CPU上执行 ``f(*args, **kwargs)`` 所需的时间

    :param f: 函数
    :type f: Callable
    :return: 用时，单位是毫秒
    :rtype: float

    * :ref:`中文 API <cpu_timer-cn>`

    .. _cpu_timer-en:

    Returns the used time for calling ``f(*args, **kwargs)`` in CPU

    :param f: a function
    :type f: Callable
    :return: used time in milliseconds
    :rtype: float
    """
    start = time.perf_counter()
    f(*args, **kwargs)
    return 1000. * (time.perf_counter() - start)


def cuda_timer(device: torch.device or int, f: Callable, *args, **kwargs):
    """
    * :ref:`API in English <cuda_timer-en>`

    .. _cuda_timer-cn:

    计算在CUDA上执行 ``f(*args, **kwargs)`` 所需的时间

    :param device: ``f`` 运行的CUDA设备
    :type device: torch.device or int
    :param f: 函数
    :type f: Callable
    :return: 用时，单位是毫秒
    :rtype: float

    * :ref:`中文 API <cuda_timer-cn>`

    .. _cuda_timer-en:

    Returns the used time for calling ``f(*args, **kwargs)`` in CUDA

    :param device: on which cuda device that ``f`` is running
    :type device: torch.device or int
    :param f: a function
    :type f: Callable
    :return: used time in milliseconds
    :rtype: float
    """
    torch.cuda.set_device(device)
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    f(*args, **kwargs)
    end.record()
    torch.cuda.synchronize(device)
    return start.elapsed_time(end)


def cal_fun_t(n: int, device: str or torch.device or int, f: Callable, *args, **kwargs):
    """
    * :ref:`API in English <cal_fun_t-en>`

    .. _cal_fun_t-cn:

    测量在 ``device`` 上执行 ``n`` 次 ``f(*args, **kwargs)`` 的平均用时

    .. note::

        当 ``n > 1`` 时，实际上会执行 ``2n`` 次，然后返回后 ``n`` 次的平均用时，以减小误差。

    * :ref:`中文 API <cal_fun_t-cn>`

    .. _cal_fun_t-en:

    Returns the used time averaged by calling ``f(*args, **kwargs)`` over ``n`` times

    .. admonition:: Note
        :class: note

        If ``n > 1``, this function will call ``f`` for ``2n`` times and return the average used time by the last
        ``n`` times to reduce the measure error.
    """
    if n == 1:
        if device == 'cpu':
            return cpu_timer(f, *args, **kwargs)
        else:
            return cuda_timer(device, f, *args, **kwargs)

    # warm up
    if device == 'cpu':
        cpu_timer(f, *args, **kwargs)
    else:
        cuda_timer(device, f, *args, **kwargs)

    t_list = []
    for _ in range(n * 2):
        if device == 'cpu':
            ti = cpu_timer(f, *args, **kwargs)
        else:
            ti = cuda_timer(device, f, *args, **kwargs)
        t_list.append(ti)
    t_list = np.asarray(t_list)
    return t_list[n:].mean()


def cal_blocks(numel: int, threads: int = -1):
    """
    :param numel: 并行执行的CUDA内核的数量
    :type numel: int
    :param threads: 每个cuda block中threads的数量，默认为-1，表示使用 ``configure.cuda_threads``
    :type threads: int
    :return: blocks的数量
    :rtype: int

    此函数返回 blocks的数量，用来按照 ``kernel((blocks,), (configure.cuda_threads,), ...)`` 调用 :class:`cupy.RawKernel`
    """
    if threads == -1:
        threads = configure.cuda_threads
    return (numel + threads - 1) // threads


def get_contiguous(*args):
    """
    将 ``*args`` 中所有的 ``torch.Tensor`` 或 ``cupy.ndarray`` 进行连续化。

    .. note::

        连续化的操作无法in-place，因此本函数返回一个新的list。

    Makes ``torch.Tensor`` or ``cupy.ndarray`` in ``*args`` to be contiguous.
    """
    ret_list = []
    for item in args:
        if isinstance(item, torch.Tensor):
            ret_list.append(item.contiguous())

        elif isinstance(item, cupy.ndarray):
            ret_list.append(cupy.ascontiguousarray(item))

        else:
            raise TypeError
    return ret_list


def wrap_args_to_raw_kernel(device: int, *args):
    """
    :param device: raw kernel运行的CUDA设备
    :type device: int
    :return: 包含指针或 ``cupy.ndarray`` 的tuple

    此函数可以包装 ``torch.Tensor`` 和 ``cupy.ndarray`` 并将其作为 :class:`cupy.RawKernel.__call__` 的 ``args``
    """
    # note that the input must be contiguous
    # check device and get data_ptr from tensor
    ret_list = []
    for item in args:
        if isinstance(item, torch.Tensor):
            assert item.get_device() == device
            assert item.is_contiguous()
            ret_list.append(item.data_ptr())

        elif isinstance(item, cupy.ndarray):
            assert item.device.id == device
            assert item.flags['C_CONTIGUOUS']
            ret_list.append(item)

        else:
            raise TypeError

    return tuple(ret_list)


class DeviceEnvironment:
    def __init__(self, device: int):
        """
        这个模块可以被用作在指定的 ``device`` 上执行CuPy函数的上下文，用来避免
        `torch.cuda.current_device()` 被CuPy意外改变( https://github.com/cupy/cupy/issues/6569 )。

        This module is used as a context to make CuPy use the specific device, and avoids
        `torch.cuda.current_device()` is changed by CuPy ( https://github.com/cupy/cupy/issues/6569 ).

        Codes example:

        .. code-block:: python

            with DeviceEnvironment(device):
                kernel((blocks,), (configure.cuda_threads,), ...)
        """
        self.device = device
        self.previous_device = None

    def __enter__(self):
        current_device = torch.cuda.current_device()
        if current_device != self.device:
            torch.cuda.set_device(self.device)
            self.previous_device = current_device

    def __exit__(self, exc_type, exc_val, exc_tb):
        if self.previous_device is not None:
            torch.cuda.set_device(self.previous_device)


def get_cupy_stream(device: int):
    """
    Returns a :class:`cupy.cuda.ExternalStream` that wraps the current PyTorch stream on ``device``, so that CuPy
    kernels are ordered with the surrounding PyTorch kernels.
    """
    torch_stream = torch.cuda.current_stream(device)
    return cupy.cuda.ExternalStream(torch_stream.cuda_stream, device)
