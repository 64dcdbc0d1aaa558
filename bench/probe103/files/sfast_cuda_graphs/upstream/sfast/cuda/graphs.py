import logging
import functools
import threading
import dataclasses

import torch
from sfast.utils.copy import (tree_copy_, tree_copy, shadow_copy, can_be_perfectly_copied)
from sfast.hooks.module_jit_hook import (apply_to_all_modules, apply_to_module)

logger = logging.getLogger()


@dataclasses.dataclass
class GraphExecutionEnv:
    mempool: tuple
    device: int
    stream: "torch.cuda.Stream"
    lock: threading.Lock


_per_device_execution_envs = {}
_per_device_execution_envs_lock = threading.Lock()


def apply_auto_graph_compiler_to_all_modules(m, filter_func=None, recursive=True):
    return apply_to_all_modules(m,
                                auto_graph_compiler,
                                filter_func=filter_func,
                                recursive=recursive)


def apply_auto_graph_compiler(m, filter_func=None, recursive=True):
    return apply_to_module(m,
                           auto_graph_compiler,
                           filter_func=filter_func,
                           recursive=recursive)


def auto_graph_compiler(m, /, **kwargs):
    if isinstance(m, torch.nn.Module):
        return make_dynamic_graphed_callable(m.forward, **kwargs)
    return make_dynamic_graphed_callable(m, **kwargs)


def hash_arg(arg):
    # micro optimization: bool obj is an instance of int
    if isinstance(arg, (str, int, float, bytes)):
        return arg
    if isinstance(arg, (tuple, list)):
        return tuple(map(hash_arg, arg))
    if isinstance(arg, dict):
        return tuple(
            sorted(((hash_arg(k), hash_arg(v)) for k, v in arg.items()),
                   key=lambda x: x[0]))
    if isinstance(arg, torch.Tensor):
        # graphs are captured per (device, dtype, shape, stride); data is copied in
        return (arg.device, arg.dtype, arg.shape, arg.stride())
    return type(arg)


def make_dynamic_graphed_callable(callable):
    lock = threading.Lock()
    cached_callables = {}

    @functools.wraps(callable)
    def dynamic_graphed_callable(*args, **kwargs):
        key = (hash_arg(args), hash_arg(kwargs))
        cached_callable = cached_callables.get(key)
        if cached_callable is None:
            with lock:
                cached_callable = cached_callables.get(key)
                if cached_callable is None:
                    logger.info(
                        f'Dynamically graphing {getattr(callable, "__name__", callable.__class__.__name__)}'
                    )
                    cached_callable = simple_make_graphed_callable(
                        callable, args, kwargs)
                    cached_callables[key] = cached_callable
        return cached_callable(*args, **kwargs)

    dynamic_graphed_callable.cached_callables = cached_callables

    return dynamic_graphed_callable


def simple_make_graphed_callable(callable, inputs, kwarg_inputs):
    cuda_device = get_cuda_device_from_tensors((inputs, kwarg_inputs))
    assert cuda_device is not None, "CUDA graphs need at least one input tensor on a CUDA device"
    execution_env = get_per_device_graph_execution_env(cuda_device)
    return make_graphed_callable(callable,
                                 example_inputs=inputs,
                                 example_kwarg_inputs=kwarg_inputs,
                                 execution_env=execution_env)


def make_graphed_callable(callable,
                          example_inputs=None,
                          example_kwarg_inputs=None,
                          *,
                          execution_env):
    is_default_allocator = not hasattr(
        torch.cuda, 'get_allocator_backend'
    ) or torch.cuda.get_allocator_backend() == 'native'

    training = getattr(callable, 'training', False)

    if example_inputs is None:
        example_inputs = tuple()
    if example_kwarg_inputs is None:
        example_kwarg_inputs = {}

    # Warmup
    # Hopefully prevents cudnn benchmarking and other lazy-initialization cuda work
    # from ending up in any captures.
    torch.cuda.synchronize()
    with torch.cuda.stream(torch.cuda.Stream(device=execution_env.device)):
        for _ in range(3):
            callable(*tree_copy(example_inputs, detach=True),
                     **tree_copy(example_kwarg_inputs, detach=True))
    torch.cuda.synchronize()  # end of warmup

    if is_default_allocator:
        tmp_graph = torch.cuda.CUDAGraph()

        with execution_env.lock:
            with torch.cuda.device(execution_env.device), torch.cuda.stream(execution_env.stream):
                with torch.cuda.graph(tmp_graph,
                                      pool=execution_env.mempool,
                                      stream=execution_env.stream):
                    static_inputs_ = tree_copy(example_inputs, detach=True)
                    static_kwarg_inputs_ = tree_copy(example_kwarg_inputs,
                                                     detach=True)

    fwd_graph = torch.cuda.CUDAGraph()

    try:
        with execution_env.lock:
            with torch.cuda.device(execution_env.device), torch.cuda.stream(
                    execution_env.stream):

                with torch.cuda.graph(fwd_graph,
                                      pool=execution_env.mempool,
                                      stream=execution_env.stream):
                    static_inputs = shadow_copy(static_inputs_)
                    static_kwarg_inputs = shadow_copy(static_kwarg_inputs_)
                    static_outputs = callable(*static_inputs,
                                              **static_kwarg_inputs)
    except Exception as e:
        logger.exception('Failed to capture CUDA Graph, please try without it')
        raise e
    finally:
        if is_default_allocator:
            del tmp_graph

    if training:
        raise NotImplementedError('Training mode is not supported yet when using graph capture')

    def functionalized(*inputs, **kwarg_inputs):
        # Copies inputs into the static tensors used during capture, replays the graph.
        tree_copy_(static_inputs, inputs)
        tree_copy_(static_kwarg_inputs, kwarg_inputs)
        fwd_graph.replay()
        return tree_copy(static_outputs)

    return functionalized


def get_cuda_device_from_tensors(x):
    if isinstance(x, torch.Tensor):
        device = x.device
        if device.type == 'cuda':
            return device.index
        return None
    elif isinstance(x, (list, tuple)):
        for y in x:
            device = get_cuda_device_from_tensors(y)
            if device is not None:
                return device
        return None
    elif dataclasses.is_dataclass(x):
        for k in dataclasses.fields(x):
            device = get_cuda_device_from_tensors(getattr(x, k.name))
            if device is not None:
                return device
        return None
    elif isinstance(x, dict):
        for v in x.values():
            device = get_cuda_device_from_tensors(v)
            if device is not None:
                return device
        return None
    else:
        return None


def get_per_device_graph_execution_env(device=None):
    if isinstance(device, torch.device):
        device = device.index
    if device is None:
        device = torch.cuda.current_device()
    with _per_device_execution_envs_lock:
        if device not in _per_device_execution_envs:
            with torch.cuda.device(device):
                mempool, stream, lock = torch.cuda.graph_pool_handle(
                ), torch.cuda.Stream(), threading.Lock()
            _per_device_execution_envs[device] = GraphExecutionEnv(
                mempool=mempool, device=device, stream=stream, lock=lock)
        return _per_device_execution_envs[device]


def check_graph_inputs(inputs):
    """Raises if an input can't be copied into a captured buffer in place."""
    if not can_be_perfectly_copied(inputs):
        raise ValueError(
            'Inputs of a graphed callable must be tensors, scalars or containers of them')
