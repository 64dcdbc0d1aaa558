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
        # recursive cases:
        return {key: to_cuda(val) for key, val in data.items()}
    elif isinstance(data, Sequence) and not isinstance(data, str):
        # recursive case: we're dealing with a list / tuple:
        return [to_cuda(val) for val in data]
    return data
