from __future__ import absolute_import

import itertools
from enum import Enum
from typing import List, Optional, Sequence, Tuple, Union

import torch
from torch.nn.functional import ctc_loss
from torch.nn.utils.rnn import PackedSequence

import laia.common.logging as log
from laia.losses.loss import Loss

try:
    # Baidu's warp-ctc (SeanNaren/warp-ctc pytorch_binding). It was the fastest
    # CTC implementation on GPU before PyTorch shipped its own (and cuDNN's).
    from warpctc_pytorch import _CTC as _WarpCTC

    _HAS_WARP_CTC = True
except ImportError:
    _WarpCTC = None
    _HAS_WARP_CTC = False

_logger = log.get_logger(__name__)

FloatScalar = Union[float, torch.FloatTensor]


class CTCLossImpl(str, Enum):
    PYTORCH = "PYTORCH"
    WARP_CTC = "WARP_CTC"


def transform_output(output):
    # Size: T x N x D
    if isinstance(output, PackedSequence):
        output, xs = torch.nn.utils.rnn.pad_packed_sequence(output)
    elif isinstance(output, torch.Tensor):
        xs = [output.size(0)] * output.size(1)
    else:
        raise NotImplementedError(
            "Not implemented for type {}".format(type(output))
        )
    return output, xs


def get_valids_and_errors(output_sizes, target_sizes):
    # type: (List[int], List[int]) -> Tuple[List[int], List[int]]
    assert len(output_sizes) == len(target_sizes)
    valid, err_indices = [], []
    for i, (x, y) in enumerate(zip(output_sizes, target_sizes)):
        if x >= y:
            valid.append(i)
        else:
            err_indices.append(i)
    return valid, err_indices


def _cudnn_ctc_eligible(logits, xs, ys, blank):
    # type: (torch.Tensor, Sequence[int], Sequence[int], int) -> bool
    """cuDNN's CTC only kicks in under very specific conditions.

    - blank must be 0
    - all input lengths must be equal to T
    - label lengths must be <= 256
    - targets must be int32, concatenated and live on the CPU
    """
    return (
        logits.is_cuda
        and torch.backends.cudnn.enabled
        and blank == 0
        and all(x == logits.size(0) for x in xs)
        and max(ys) <= 256
    )


class CTCLoss(Loss):
    """
    Attributes:
      reduction (string, optional): Specifies the type of reduction to
        perform on the minibatch costs: 'none' | 'mean' | 'sum'.
        With 'none': no reduction is applied, 'mean': the sum of the cost
        of each sample is divided by the batch size, 'sum': the sum of the
        cost of each sample is returned. Default: 'mean'.
      average_frames (bool): Specifies whether the loss of each sample should
        be divided by its number of frames. Default: ``False''.
      blank (integer, optional): Index of the blank label. Default: 0.
      implementation (CTCLossImpl): which CTC to use. warp-ctc is only
        used when it is importable *and* the logits live on a GPU.
    """

    def __init__(
        self,
        reduction="mean",
        average_frames=False,
        blank=0,
        implementation=CTCLossImpl.PYTORCH,
    ):
        # type: (str, bool, int, CTCLossImpl) -> None
        super(CTCLoss, self).__init__()
        assert reduction in ("none", "mean", "sum")
        self._reduction = reduction
        self._average_frames = average_frames
        self._blank = blank
        self._impl = CTCLossImpl(implementation)
        if self._impl == CTCLossImpl.WARP_CTC and not _HAS_WARP_CTC:
            _logger.warning(
                "warp-ctc was requested but warpctc_pytorch is not installed, "
                "falling back to PyTorch's native CTC"
            )
            self._impl = CTCLossImpl.PYTORCH

    def forward(self, output, target, **kwargs):
        # type: (Union[torch.Tensor, PackedSequence], List[List[int]], ...) -> Optional[FloatScalar]
        """
        Args:
            output: Size seqLength x outputDim, contains
                the output from the network as well as a list of seq sizes
                returned by pad_packed_sequence
            target: Contains the size of the target sequence
        """
        # Size: T x N x D
        logits, xs = transform_output(output)
        ys = [len(y_n) for y_n in target]
        valid_indices, err_indices = get_valids_and_errors(xs, ys)
        if err_indices:
            ids = kwargs.get("batch_ids", None)
            if ids is not None and isinstance(ids, (list, tuple)):
                err_indices = [ids[i] for i in err_indices]
            _logger.warning(
                "The following samples in the batch were ignored for the loss "
                "computation: {}",
                err_indices,
            )
        if not valid_indices:
            _logger.warning("All samples in the batch were ignored!")
            return None

        # TODO: Remove the ugly indexing once PyTorch supports this natively
        valid = torch.tensor(valid_indices, device=logits.device)
        logits = logits.index_select(1, valid)
        xs = [xs[i] for i in valid_indices]
        target = [target[i] for i in valid_indices]
        ys = [ys[i] for i in valid_indices]

        if self._impl == CTCLossImpl.WARP_CTC and logits.is_cuda:
            return self._forward_warp_ctc(logits, xs, target, ys)

        if _cudnn_ctc_eligible(logits, xs, ys, self._blank):
            # cuDNN path: int32 concatenated targets on the CPU
            targets = torch.tensor(
                list(itertools.chain.from_iterable(target)), dtype=torch.int32
            )
            input_lengths = torch.tensor(xs, dtype=torch.int32)
            target_lengths = torch.tensor(ys, dtype=torch.int32)
        else:
            targets = torch.tensor(
                list(itertools.chain.from_iterable(target)),
                dtype=torch.long,
                device=logits.device,
            )
            input_lengths = torch.tensor(xs, dtype=torch.long, device=logits.device)
            target_lengths = torch.tensor(ys, dtype=torch.long, device=logits.device)

        # CTC is numerically fragile in half precision; the log-softmax and
        # the loss itself are always computed in fp32.
        log_probs = torch.nn.functional.log_softmax(logits.float(), dim=-1)
        losses = ctc_loss(
            log_probs=log_probs,
            targets=targets,
            input_lengths=input_lengths,
            target_lengths=target_lengths,
            blank=self._blank,
            reduction="none",
            zero_infinity=True,
        )

        if self._average_frames:
            losses = losses / input_lengths.to(losses)

        if self._reduction == "none":
            return losses
        elif self._reduction == "mean":
            return losses.mean()
        else:
            return losses.sum()

    def _forward_warp_ctc(self, logits, xs, target, ys):
        # warp-ctc wants activations (not log-probs), int32 CPU sizes and
        # a flat int32 CPU label tensor. Costs come back on the CPU.
        acts = logits.contiguous()
        labels = torch.IntTensor(list(itertools.chain.from_iterable(target)))
        act_lens = torch.IntTensor(xs)
        label_lens = torch.IntTensor(ys)
        costs = _WarpCTC.apply(acts, labels, act_lens, label_lens, False, True)
        if self._average_frames:
            costs = costs / act_lens.float()
        if self._reduction == "none":
            return costs
        elif self._reduction == "mean":
            return costs.sum() / len(xs)
        return costs.sum()
