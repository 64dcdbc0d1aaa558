import itertools
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import torch
from torch.nn.functional import ctc_loss
from torch.nn.utils.rnn import PackedSequence, pad_packed_sequence

import laia.common.logging as log
from laia.losses.loss import Loss

_logger = log.get_logger(__name__)

try:
    # Baidu's warp-ctc bindings (https://github.com/SeanNaren/warp-ctc).
    # Faster than the native implementation on old GPUs but only builds
    # against the CUDA toolkit; kept as an optional backend.
    from warpctc_pytorch import CTCLoss as _WarpCTCLoss
except ImportError:
    _WarpCTCLoss = None

FloatScalar = Union[float, torch.FloatTensor]

# TODO(jpuigcerver): Properly tests the logging messages.


def transform_batch(batch) -> Tuple[torch.Tensor, List[int]]:
    if isinstance(batch, PackedSequence):
        x, xs = pad_packed_sequence(batch)
    elif isinstance(batch, torch.Tensor):
        x, xs = batch, [batch.size(0)] * batch.size(1)
    else:
        raise NotImplementedError("Not implemented for type {}".format(type(batch)))
    return x, xs


def get_valid_indices(
    xs: Sequence[int], ys: Sequence[Sequence[int]], ids: Optional[List[str]] = None
) -> List[int]:
    """Returns the indices of the samples whose output sequence is long enough.

    A CTC alignment needs at least one frame per label plus one frame for
    each pair of consecutive repeated labels.
    """
    valid = []
    for i in range(len(xs)):
        num_repeats = sum(1 for a, b in zip(ys[i][:-1], ys[i][1:]) if a == b)
        if xs[i] >= len(ys[i]) + num_repeats:
            valid.append(i)
        else:
            _logger.warning(
                "The length of sample {}output {} is shorter than the target ({}): "
                "the sample will be ignored",
                "" if ids is None else "{!r} ".format(ids[i]),
                xs[i],
                len(ys[i]) + num_repeats,
            )
    return valid


class CTCLoss(Loss):
    """Attention: The ``forward`` method of this class expects the
    unnormalized (linear) scores, the log-softmax is applied here.

    Args:
        reduction: one of ``"none"``, ``"mean"``, ``"sum"``.
        average_frames: divide each loss by the number of frames.
        blank: index of the CTC blank symbol.
        implementation: ``"pytorch"`` (``torch.nn.functional.ctc_loss``) or
            ``"warp"`` (Baidu's warp-ctc, GPU only).
    """

    def __init__(
        self,
        reduction: str = "mean",
        average_frames: bool = False,
        blank: int = 0,
        get_valid_indices_fn: Callable = get_valid_indices,
        implementation: str = "pytorch",
    ):
        super().__init__()
        assert reduction in ("none", "mean", "sum")
        assert implementation in ("pytorch", "warp")
        self._reduction = reduction
        self._average_frames = average_frames
        self._blank = blank
        self._get_valid_indices = get_valid_indices_fn
        self._implementation = implementation
        if implementation == "warp":
            if _WarpCTCLoss is None:
                raise ImportError("warpctc_pytorch is required for implementation='warp'")
            if blank != 0:
                raise ValueError("warp-ctc only supports blank=0")
            self._warp = _WarpCTCLoss(blank=0, size_average=False, length_average=False)

    def forward(
        self, output: Any, target: List[List[int]], **kwargs
    ) -> Optional[FloatScalar]:
        assert isinstance(target, (list, tuple))
        assert isinstance(output, (torch.Tensor, PackedSequence))

        # Transform the output to a padded tensor
        xs, xn = transform_batch(output)
        assert xs.dim() == 3, "Output must be a 3D tensor (T x N x C)"
        assert len(xn) == xs.size(1), "Length of the output and lengths mismatch"
        assert len(target) == xs.size(1), "Length of the output and target mismatch"

        # Check that the output is valid (no nans or infs)
        if not torch.isfinite(xs).all():
            _logger.error("The output of the model contains nans or infs")

        # Get indices of the valid batch elements
        valid_indices = self._get_valid_indices(
            xs=xn, ys=target, ids=kwargs.get("batch_ids", None)
        )
        if not valid_indices:
            _logger.warning("The batch was ignored.")
            return None

        # Prepare tensors of the correct type
        if len(valid_indices) < xs.size(1):
            idx = torch.tensor(valid_indices, device=xs.device)
            xs = xs.index_select(1, idx)
            xn = [xn[i] for i in valid_indices]
            target = [target[i] for i in valid_indices]

        ys = list(itertools.chain.from_iterable(target))
        yn = [len(y) for y in target]

        if self._implementation == "warp":
            # warp-ctc wants activations (it applies the softmax itself),
            # int32 labels/lengths on the CPU and float32 activations on the GPU
            losses = self._warp(
                xs.float().cuda(),
                torch.IntTensor(ys),
                torch.IntTensor(xn),
                torch.IntTensor(yn),
            )
            return losses.to(xs.device) / (len(xn) if self._reduction == "mean" else 1)

        if xs.is_cuda and self._blank == 0 and max(yn) <= 256:
            # cuDNN's CTC kernel is only picked with int32 targets on the CPU
            # and it is several times faster for long text lines
            ys = torch.tensor(ys, dtype=torch.int32)
            xn_t = torch.tensor(xn, dtype=torch.int32)
            yn_t = torch.tensor(yn, dtype=torch.int32)
        else:
            ys = torch.tensor(ys, dtype=torch.long, device=xs.device)
            xn_t = torch.tensor(xn, dtype=torch.long, device=xs.device)
            yn_t = torch.tensor(yn, dtype=torch.long, device=xs.device)

        losses = ctc_loss(
            log_probs=torch.nn.functional.log_softmax(xs.float(), dim=-1),
            targets=ys,
            input_lengths=xn_t,
            target_lengths=yn_t,
            blank=self._blank,
            reduction="none",
            zero_infinity=True,
        )

        # Average loss over the number of frames
        if self._average_frames:
            losses = losses / xn_t.to(losses)

        if self._reduction == "none":
            return losses
        if self._reduction == "mean":
            return losses.mean()
        return losses.sum()


def ctc_loss_stats(
    output: Any, target: List[List[int]], blank: int = 0
) -> Dict[str, float]:
    """Cheap diagnostics used by the ``--train.debug_ctc`` flag."""
    xs, xn = transform_batch(output)
    with torch.no_grad():
        probs = torch.softmax(xs.float(), dim=-1)
        blank_ratio = probs[..., blank].mean().item()
    return {
        "frames": float(sum(xn)),
        "labels": float(sum(len(t) for t in target)),
        "blank_ratio": blank_ratio,
    }
