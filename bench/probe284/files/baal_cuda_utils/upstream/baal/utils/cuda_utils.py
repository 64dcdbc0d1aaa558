from collections.abc import Sequence, Mapping

import torch


def to_cuda(data):
    """
    Move an object to CUDA.

    This function works recursively on lists and dicts, moving the values
    inside to cuda.

    Args:
        data (list, tuple, dict, torch.Tensor, torch.nn.Module):
            The data you'd like to move to the GPU. If there's a pytorch tensor or
            model in data (e.g. in a list or as values in a dictionary) this
            function will move them all to CUDA and return something that matches
            the input in structure.

    Returns:
        list, tuple, dict, torch.Tensor, torch.nn.Module:
            Data of the same type / structure as the input.
    """
    # the base case: if this is not a type we recognise, return it
    if isinstance(data, (torch.Tensor, torch.nn.Module)):
        return data.cuda()
    elif isinstance(data, Mapping):
        # preserve the mapping type (e.g. OrderedDict, BatchEncoding)
        return type(data)({key: to_cuda(val) for key, val in data.items()})
    elif isinstance(data, Sequence) and not isinstance(data, str):
        return type(data)(to_cuda(val) for val in data)
    else:
        return data


def is_on_gpu(data):
    """True if every tensor found in `data` lives on a CUDA device."""
    if isinstance(data, torch.Tensor):
        return data.is_cuda
    elif isinstance(data, Mapping):
        return all(is_on_gpu(v) for v in data.values())
    elif isinstance(data, Sequence) and not isinstance(data, str):
        return all(is_on_gpu(v) for v in data)
    return True
