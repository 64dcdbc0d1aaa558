import logging
import time

import numpy as np
import torch

from .. import configure

try:
    import cupy
except BaseException as e:
    logging.info(f'spikingjelly.activation_based.cuda_utils: {e}')
    cupy = None


def cpu_timer(f, *args, **kwargs):
    """
    * :ref:`API in English <cpu_timer-en>`

    计算在CPU上执行 ``f(*args, **kwargs)`` 所需的时间

    * :ref:`中文API <cpu_timer-cn>`

    Returns the used time for calling ``f(*args, **kwargs)`` in CPU

    :param f: a function
    :type f: typing.Callable
    :return: used time in milliseconds
    :rtype: float
    """
    start = time.perf_counter()
    f(*args, **kwargs)
    return time.perf_counter() - start


def cuda_timer(device, f, *args, **kwargs):
    """
    Returns the used time for calling ``f(*args, **kwargs)`` on the GPU ``device``.
    The timing uses CUDA events, so asynchronous kernel launches are measured correctly.

    :param device: on which device the function ``f`` runs
    :type device: str or torch.device or int
    :param f: a function
    :type f: typing.Callable
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


def cal_fun_t(n, device, f, *args, **kwargs):
    """
    Returns the used time of calling ``f(*args, **kwargs)`` ``n`` times.
    The first ``n // 2`` calls are warm-up; the median-free mean of the rest is returned.

    :param n: run ``f`` for ``n`` times
    :type n: int
    :param device: on which device ``f`` runs. ``'cpu'`` uses the host timer, anything else the device timer
    :type device: str or torch.device or int
    :param f: function
    :type f: typing.Callable
    :return: used time in milliseconds
    :rtype: float
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
    :param numel: the number of parallel CUDA threads
    :type numel: int
    :param threads: the number of threads in one block, ``-1`` means ``configure.cuda_threads``
    :type threads: int
    :return: the number of blocks
    :rtype: int

    Returns the number of blocks to call a CUDA kernel with ``numel`` parallel threads.
    """
    if threads == -1:
        threads = configure.cuda_threads
    return (numel + threads - 1) // threads


def get_contiguous(*args):
    """
    Makes every tensor in ``args`` contiguous. Non-tensor items are wrapped to contiguous
    ``cupy`` arrays so that they can be passed to a raw kernel.

    :param args: a list of tensors or ndarrays
    :return: a list of contiguous tensors or ndarrays
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
    :param device: on which GPU the kernel runs
    :type device: int
    :param args: a list of tensors or ndarrays
    :return: a tuple that can be passed to ``cupy.RawKernel.__call__``

    Tensors are passed by their ``data_ptr()``; ndarrays are moved to ``device`` first.
    """
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
        Makes the cupy kernels run on the same device as the torch tensors they read.

        .. code-block:: python

            with DeviceEnvironment(device):
                kernel((blocks,), (configure.cuda_threads,), ...)

        """
        self.device = device
        self.previous_device = None

    def __enter__(self):
        current_device = torch.cuda.current_device()
        if self.device != current_device:
            torch.cuda.set_device(self.device)
            self.previous_device = current_device

    def __exit__(self, exc_type, exc_val, exc_tb):
        if self.previous_device is not None:
            torch.cuda.set_device(self.previous_device)


def float_to_cupy_scalar(x: float, dtype: torch.dtype):
    """Casts a python float to a 0-dim cupy array with the dtype matching ``dtype``."""
    if dtype == torch.float32:
        return cupy.asarray([x], dtype=np.float32)
    elif dtype == torch.float16:
        return cupy.asarray([x, x], dtype=np.half)
    else:
        raise NotImplementedError(dtype)


def benchmark_backends(module_fn, x_seq: torch.Tensor, backends=('torch', 'cupy'), n: int = 64):
    """
    Times the forward and backward pass of the module built by ``module_fn(backend)`` for every backend
    that is available, e.g. ``benchmark_backends(lambda b: neuron.LIFNode(step_mode='m', backend=b), x_seq)``.
    """
    results = {}
    device = x_seq.device
    for backend in backends:
        if backend == 'cupy' and cupy is None:
            continue
        net = module_fn(backend).to(device)
        x = x_seq.detach().clone().requires_grad_(True)

        def run():
            y = net(x)
            y.sum().backward()
            net.reset()

        results[backend] = cal_fun_t(n, str(device), run)
    return results
