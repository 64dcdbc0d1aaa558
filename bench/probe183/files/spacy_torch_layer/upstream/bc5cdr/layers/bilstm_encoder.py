"""A PyTorch BiLSTM context encoder, wrapped as a thinc layer.

spaCy's built-in ``spacy.TorchBiLSTMEncoder.v1`` only exposes width/depth/
dropout; we need character-aware inputs and highway connections, so this is a
hand-rolled version registered under ``bc5cdr.TorchBiLSTMEncoder.v1``.

The layer is only fast on GPU.  On CPU it still works but is slow for the
full corpus.
"""
from typing import List, Optional, Tuple, cast

import numpy
from thinc.api import (
    Model,
    PyTorchWrapper,
    chain,
    get_current_ops,
    with_padded,
    xp2torch,
    torch2xp,
    ArgsKwargs,
)
from thinc.backends import CupyOps
from thinc.types import Floats2d, Padded

import spacy
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

try:  # CuPy is only present on GPU installs (spacy[cuda11x])
    import cupy
    import cupy.cuda
except ImportError:  # pragma: no cover
    cupy = None


def _torch_device_for_ops(ops) -> torch.device:
    """Mirror thinc's own logic: CupyOps -> the CuPy device, else CPU."""
    if cupy is not None and isinstance(ops, CupyOps):
        return torch.device(f"cuda:{cupy.cuda.get_device_id()}")
    return torch.device("cpu")


class Highway(nn.Module):
    def __init__(self, width: int, n_layers: int = 1):
        super().__init__()
        self.n_layers = n_layers
        self.nonlinear = nn.ModuleList([nn.Linear(width, width) for _ in range(n_layers)])
        self.gate = nn.ModuleList([nn.Linear(width, width) for _ in range(n_layers)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in range(self.n_layers):
            gate = torch.sigmoid(self.gate[layer](x))
            nonlinear = torch.relu(self.nonlinear[layer](x))
            x = gate * nonlinear + (1 - gate) * x
        return x


class BiLSTMHighway(nn.Module):
    def __init__(self, nI: int, nO: int, depth: int, dropout: float, highway_layers: int):
        super().__init__()
        if nO % 2 != 0:
            raise ValueError(f"nO must be even for a BiLSTM, got {nO}")
        self.lstm = nn.LSTM(
            nI,
            nO // 2,
            num_layers=depth,
            bidirectional=True,
            dropout=dropout if depth > 1 else 0.0,
            batch_first=False,
        )
        self.highway = Highway(nO, highway_layers)
        self.dropout = nn.Dropout(dropout)

    def forward(self, X: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        # X: (seq_len, batch, nI); lengths must live on the CPU for packing
        packed = pack_padded_sequence(X, lengths.cpu(), enforce_sorted=False)
        self.lstm.flatten_parameters()
        out, _ = self.lstm(packed)
        out, _ = pad_packed_sequence(out, total_length=X.shape[0])
        return self.highway(self.dropout(out))


def convert_padded_inputs(model: Model, Xp: Padded, is_train: bool):
    ops = model.ops
    device = _torch_device_for_ops(ops)
    lengths = torch.as_tensor(numpy.asarray(ops.to_numpy(Xp.lengths)), dtype=torch.long)
    X = xp2torch(Xp.data, requires_grad=is_train, device=device)
    shim_args = ArgsKwargs(args=(X, lengths), kwargs={})

    def convert_from_torch_backward(d_inputs: ArgsKwargs) -> Padded:
        dX = torch2xp(d_inputs.args[0], ops=ops)
        return Padded(dX, Xp.size_at_t, Xp.lengths, Xp.indices)

    return shim_args, convert_from_torch_backward


def convert_padded_outputs(model: Model, inputs_outputs, is_train: bool):
    Xp, Ytorch = inputs_outputs
    ops = model.ops
    Y = cast(Floats2d, torch2xp(Ytorch, ops=ops))
    Yp = Padded(Y, Xp.size_at_t, Xp.lengths, Xp.indices)

    def convert_for_torch_backward(dYp: Padded) -> ArgsKwargs:
        dY = xp2torch(dYp.data, device=Ytorch.device)
        return ArgsKwargs(args=(Ytorch,), kwargs={"grad_tensors": dY})

    return Yp, convert_for_torch_backward


@spacy.registry.architectures("bc5cdr.TorchBiLSTMEncoder.v1")
def TorchBiLSTMHighwayEncoder(
    width: int,
    depth: int,
    dropout: float = 0.2,
    highway_layers: int = 2,
    mixed_precision: bool = False,
) -> Model[List[Floats2d], List[Floats2d]]:
    """Build a BiLSTM+highway encoder that runs in PyTorch.

    mixed_precision: run the LSTM under torch.cuda.amp autocast. Only has an
        effect on GPU; ignored on CPU.
    """
    torch_model = BiLSTMHighway(width, width, depth, dropout, highway_layers)
    if mixed_precision and torch.cuda.is_available():
        torch_model = torch_model.half()
    wrapped = PyTorchWrapper(
        torch_model,
        convert_inputs=convert_padded_inputs,
        convert_outputs=convert_padded_outputs,
        mixed_precision=mixed_precision,
    )
    return with_padded(wrapped)


def describe_device() -> str:
    """Human readable summary of where thinc will put the torch model."""
    ops = get_current_ops()
    device = _torch_device_for_ops(ops)
    if device.type == "cuda":
        name = torch.cuda.get_device_name(device)
        return f"{type(ops).__name__} on {name} ({device})"
    return f"{type(ops).__name__} on CPU"


def _debug_roundtrip(n_words: int = 7, width: int = 32) -> Tuple[int, ...]:
    """Tiny smoke test used by ``python -m bc5cdr.layers.bilstm_encoder``."""
    ops = get_current_ops()
    model = TorchBiLSTMHighwayEncoder(width=width, depth=1)
    docs = [ops.alloc2f(n_words, width), ops.alloc2f(n_words - 2, width)]
    model.initialize(X=docs)
    Y, backprop = model.begin_update(docs)
    backprop(Y)
    return tuple(y.shape for y in Y)


if __name__ == "__main__":
    print(describe_device())
    print(_debug_roundtrip())
