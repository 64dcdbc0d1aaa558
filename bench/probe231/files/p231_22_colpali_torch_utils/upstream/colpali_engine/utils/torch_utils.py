import gc
import logging
from typing import List, TypeVar

import torch
from torch.utils.data import Dataset

logger = logging.getLogger(__name__)
T = TypeVar("T")


def get_torch_device(device: str = "auto") -> str:
    """
    Returns the device (string) to be used by PyTorch.

    `device` arg defaults to "auto" which will use:
    - "cuda:0" if available
    - else "mps" if available
    - else "cpu".
    """

    if device == "auto":
        if torch.cuda.is_available():
            device = "cuda:0"
        elif torch.backends.mps.is_available():  # for Apple Silicon
            device = "mps"
        else:
            device = "cpu"
        logger.info(f"Using device: {device}")

    return device


def tear_down_torch():
    """
    Teardown for PyTorch.
    Clears GPU cache for both CUDA and MPS.
    """
    gc.collect()

    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    if torch.backends.mps.is_available():
        torch.mps.empty_cache()


def get_gpu_memory_usage(device: str = "auto") -> dict:
    """
    Small helper used by the benchmarks notebooks to report peak memory.
    Returns an empty dict on devices without memory statistics.
    """
    device = get_torch_device(device)
    if device.startswith("cuda"):
        return {
            "allocated_gb": torch.cuda.memory_allocated(device) / 1024**3,
            "max_allocated_gb": torch.cuda.max_memory_allocated(device) / 1024**3,
            "reserved_gb": torch.cuda.memory_reserved(device) / 1024**3,
        }
    return {}


class ListDataset(Dataset[T]):
    def __init__(self, elements: List[T]):
        self.elements = elements

    def __len__(self) -> int:
        return len(self.elements)

    def __getitem__(self, idx: int) -> T:
        return self.elements[idx]


def unbind_padded_multivector_embeddings(
    embeddings: torch.Tensor,
    padding_value: float = 0.0,
    padding_side: str = "left",
) -> List[torch.Tensor]:
    """
    Removes padding elements from a batch of multivector embeddings.

    Args:
        embeddings (torch.Tensor): A tensor of shape (batch_size, seq_length, dim) with padding.
        padding_value (float): The value used for padding. Each padded token is assumed
            to be a vector where all elements equal this value.
        padding_side (str): Either "left" or "right", indicating where the padding was applied.

    Returns:
        List[torch.Tensor]: A list of tensors, one per sequence in the batch, where
            each tensor has shape (new_seq_length, dim) and contains only the non-padding elements.
    """
    results: List[torch.Tensor] = []

    for seq in embeddings:
        is_padding = torch.all(seq.eq(padding_value), dim=-1)

        if padding_side == "left":
            non_padding_indices = (~is_padding).nonzero(as_tuple=False)
            start_index = non_padding_indices[0].item() if len(non_padding_indices) > 0 else seq.size(0)
            results.append(seq[start_index:])
        elif padding_side == "right":
            non_padding_indices = (~is_padding).nonzero(as_tuple=False)
            end_index = non_padding_indices[-1].item() + 1 if len(non_padding_indices) > 0 else 0
            results.append(seq[:end_index])
        else:
            raise ValueError("padding_side must be either 'left' or 'right'.")

    return results
