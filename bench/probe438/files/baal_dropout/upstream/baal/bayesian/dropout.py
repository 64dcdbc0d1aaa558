import copy
import warnings
from typing import Optional

import torch
from torch.nn import functional as F

from baal.bayesian.common import replace_layers_in_module, _patching_wrapper, BayesianModule


class Dropout(torch.nn.Dropout):
    """Randomly zeroes some of the elements of the input tensor with probability
    :attr:`p` using samples from a Bernoulli distribution.

    The dropout is always applied, even at test time: this is what makes
    Monte-Carlo dropout (Gal & Ghahramani, 2016) work.

    Args:
        p: probability of an element to be zeroed. Default: 0.5
        inplace: If set to ``True``, will do this operation in-place. Default: ``False``

    Shape:
        - Input: `Any`. Input can be of any shape
        - Output: `Same`. Output is of the same shape as input
    """

    def forward(self, input):
        return F.dropout(input, self.p, True, self.inplace)


class Dropout2d(torch.nn.Dropout2d):
    """Randomly zero out entire channels (a channel is a 2D feature map,
    e.g., the :math:`j`-th channel of the :math:`i`-th sample in the
    batched input is a 2D tensor :math:`\\text{input}[i, j]`) of the input tensor).

    As for :class:`Dropout`, dropout is kept active in eval mode.
    """

    def forward(self, input):
        return F.dropout2d(input, self.p, True, self.inplace)


def patch_module(module: torch.nn.Module, inplace: bool = True) -> torch.nn.Module:
    """Replace dropout layers in a model with MC Dropout layers.

    Args:
        module (torch.nn.Module):
            The module in which you would like to replace dropout layers.
        inplace (bool, optional):
            Whether to modify the module in place or return a copy of the module.

    Raises:
        UserWarning if no layer is modified.

    Returns:
        torch.nn.Module:
            The modified module, which is either the same object as you passed in
            (if inplace = True) or a copy of that object.
    """
    return _patching_wrapper(module, inplace=inplace, patching_fn=_dropout_to_mc_dropout)


def unpatch_module(module: torch.nn.Module, inplace: bool = True) -> torch.nn.Module:
    """Replace MC-Dropout layers in a model with Dropout layers.

    Args:
        module (torch.nn.Module):
            The module in which you would like to replace dropout layers.
        inplace (bool, optional):
            Whether to modify the module in place or return a copy of the module.

    Returns:
        torch.nn.Module:
            The modified module, which is either the same object as you passed in
            (if inplace = True) or a copy of that object.
    """
    return _patching_wrapper(module, inplace=inplace, patching_fn=_mc_dropout_to_dropout)


def _dropout_to_mc_dropout(module: torch.nn.Module) -> Optional[torch.nn.Module]:
    new_module: Optional[torch.nn.Module] = None
    if isinstance(module, torch.nn.Dropout):
        new_module = Dropout(p=module.p, inplace=module.inplace)
    elif isinstance(module, torch.nn.Dropout2d):
        new_module = Dropout2d(p=module.p, inplace=module.inplace)
    return new_module


def _mc_dropout_to_dropout(module: torch.nn.Module) -> Optional[torch.nn.Module]:
    new_module: Optional[torch.nn.Module] = None
    if isinstance(module, Dropout):
        new_module = torch.nn.Dropout(p=module.p, inplace=module.inplace)
    elif isinstance(module, Dropout2d):
        new_module = torch.nn.Dropout2d(p=module.p, inplace=module.inplace)
    return new_module


class MCDropoutModule(BayesianModule):
    """Create a module that with all dropout layers patched.

    Args:
        module (torch.nn.Module):
            A fully specified neural network.
    """

    patching_function = patch_module
    unpatch_function = unpatch_module


class MCDropoutConnectModule(BayesianModule):
    """Placeholder kept for backward compatibility with baal<1.5 pickles."""

    def __init__(self, module: torch.nn.Module, layers, weight_dropout=0.0):
        warnings.warn(
            "MCDropoutConnectModule moved to baal.bayesian.weight_drop", DeprecationWarning
        )
        super().__init__(module, layers=layers, weight_dropout=weight_dropout)


def _count_dropout_layers(module: torch.nn.Module) -> int:
    """Utility used by the tests: number of (MC) dropout layers inside `module`."""
    n = 0
    for m in module.modules():
        if isinstance(m, (torch.nn.Dropout, torch.nn.Dropout2d)):
            n += 1
    return n


def _copy_if_needed(module: torch.nn.Module, inplace: bool) -> torch.nn.Module:
    if not inplace:
        module = copy.deepcopy(module)
    return module
