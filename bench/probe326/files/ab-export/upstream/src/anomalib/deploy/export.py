"""Utilities for optimization and OpenVINO conversion."""

# Copyright (C) 2022 Intel Corporation
# SPDX-License-Identifier: Apache-2.0

from __future__ import annotations

import json
import logging
import subprocess  # nosec
from enum import Enum
from importlib.util import find_spec
from pathlib import Path
from typing import Any
from warnings import warn

import albumentations as A
import numpy as np
import torch
from torch.types import Number

from anomalib.data.task_type import TaskType
from anomalib.models.components import AnomalyModule

logger = logging.getLogger("anomalib")

if find_spec("openvino") is not None:
    from openvino.runtime import Core, serialize  # type: ignore
    from openvino.tools.mo.convert import convert_model  # type: ignore
else:
    logger.warning("OpenVINO is not installed. Please install OpenVINO to use OpenVINOInferencer.")


class ExportMode(str, Enum):
    """Model export mode."""

    ONNX = "onnx"
    OPENVINO = "openvino"
    TORCH = "torch"


def export(
    task: TaskType,
    transform: dict[str, Any],
    input_size: tuple[int, int],
    model: AnomalyModule,
    export_mode: ExportMode,
    export_root: str | Path,
    half_precision: bool = False,
) -> None:
    """Export the model to onnx format and (optionally) convert to OpenVINO IR if export mode is set to OpenVINO.

    Args so far:
        task (TaskType): Task type.
        transform (dict[str, Any]): Data transforms (augmentatiions) used for the model.
        input_size (tuple[int, int]): Input size of the model.
        model (AnomalyModule): Anomaly model to export.
        export_mode (ExportMode): Mode to export the model. Torch, ONNX or OpenVINO.
        export_root (str | Path): Path to exported Torch, ONNX or OpenVINO IR.
        half_precision (bool): Export an fp16 graph (for TensorRT / OpenVINO GPU plugin). Defaults to False.
    """
    # Create export directory.
    export_path = Path(export_root) / "weights" / export_mode.value
    export_path.mkdir(parents=True, exist_ok=True)

    # Get metadata.
    metadata = get_metadata(task, transform, model)

    if export_mode == ExportMode.TORCH:
        export_to_torch(model, metadata, export_path)

    elif export_mode in (ExportMode.ONNX, ExportMode.OPENVINO):
        # Write metadata to json file. The file is written in the same directory as the target model.
        with (Path(export_path) / "metadata.json").open("w", encoding="utf-8") as metadata_file:
            json.dump(metadata, metadata_file, ensure_ascii=False, indent=4)

        # Export model to onnx and convert to OpenVINO IR if export mode is set to OpenVINO.
        onnx_path = export_to_onnx(model, input_size, export_path, half=half_precision)
        if export_mode == ExportMode.OPENVINO:
            export_to_openvino(export_path, onnx_path, metadata, input_size)

    else:
        raise ValueError(f"Unknown export mode {export_mode}")


def get_metadata(task: TaskType, transform: dict[str, Any], model: AnomalyModule) -> dict[str, Any]:
    """Get metadata for the exported model.

    Args:
        task (TaskType): Task type.
        transform (dict[str, Any]): Transform used for the model.
        model (AnomalyModule): Model to export.

    Returns:
        dict[str, Any]: Metadata for the exported model.
    """
    data_metadata = {"task": task, "transform": transform}
    model_metadata = get_model_metadata(model)
    metadata = {**data_metadata, **model_metadata}

    # Convert torch tensors to python lists or values for json serialization.
    for key, value in metadata.items():
        if isinstance(value, torch.Tensor):
            metadata[key] = value.numpy().tolist()

    return metadata


def get_model_metadata(model: AnomalyModule) -> dict[str, torch.Tensor]:
    """Get meta data related to normalization from model.

    Args:
        model (AnomalyModule): Anomaly model which contains metadata related to normalization.

    Returns:
        dict[str, torch.Tensor]: Model metadata
    """
    metadata = {}
    cached_metadata: dict[str, Number | torch.Tensor] = {
        "image_threshold": model.image_threshold.cpu().value.item(),
        "pixel_threshold": model.pixel_threshold.cpu().value.item(),
    }
    if hasattr(model, "normalization_metrics") and model.normalization_metrics.state_dict() is not None:
        for key, value in model.normalization_metrics.state_dict().items():
            cached_metadata[key] = value.cpu()
    # Remove undefined values by copying in a new dict
    for key, val in cached_metadata.items():
        if not np.isinf(val).all():
            metadata[key] = val
    del cached_metadata
    return metadata


def export_to_torch(model: AnomalyModule, metadata: dict[str, Any], export_path: Path) -> None:
    """Export AnomalibModel to torch.

    Args:
        model (AnomalyModule): Model to export.
        metadata (dict[str, Any]): Metadata for the exported model.
        export_path (Path): Path to the folder storing the exported model.
    """
    torch.save(
        obj={"model": model.model, "metadata": metadata},
        f=export_path / "model.pt",
    )


def export_to_onnx(model: AnomalyModule, input_size: tuple[int, int], export_path: Path, half: bool = False) -> Path:
    """Export model to onnx.

    Args:
        model (AnomalyModule): Model to export.
        input_size (list[int] | tuple[int, int]): Image size used as the input for onnx converter.
        export_path (Path): Path to the root folder of the exported model.
        half (bool): Trace the graph in fp16.

    Returns:
        Path: Path to the exported onnx model.
    """
    onnx_path = export_path / "model.onnx"
    dummy_input = torch.zeros((1, 3, *input_size)).to(model.device)
    if half:
        # fp16 tracing has to happen on the GPU: several CPU kernels (e.g. upsample_bilinear2d) lack Half support
        model.model.half().cuda()
        dummy_input = dummy_input.half().cuda()
    torch.onnx.export(
        model.model,
        dummy_input,
        str(onnx_path),
        opset_version=11,
        input_names=["input"],
        output_names=["output"],
        dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
    )
    if half:
        model.model.float()

    return onnx_path


def validate_onnx(onnx_path: Path, input_size: tuple[int, int], atol: float = 1e-3) -> bool:
    """Runs the exported graph once with ONNX Runtime to catch broken exports early.

    Uses the CUDA execution provider when onnxruntime-gpu is installed, CPU otherwise.
    """
    if find_spec("onnxruntime") is None:
        warn("onnxruntime is not installed, skipping ONNX validation.")
        return True
    import onnxruntime as ort  # pylint: disable=import-outside-toplevel

    providers = ["CUDAExecutionProvider", "CPUExecutionProvider"]
    session = ort.InferenceSession(str(onnx_path), providers=providers)
    dummy = np.random.rand(1, 3, *input_size).astype(np.float32)
    outputs = session.run(None, {"input": dummy})
    ok = all(np.isfinite(out).all() for out in outputs)
    logger.info("ONNX validation (%s): %s", session.get_providers()[0], "ok" if ok else "non-finite outputs")
    return ok


def export_to_openvino(
    export_path: str | Path, input_model: Path, metadata: dict[str, Any], input_size: tuple[int, int], **kwargs
) -> None:
    """Convert onnx model to OpenVINO IR.

    Args:
        export_path (str | Path): Path to the root folder of the exported model.
        input_model (Path): Path to the onnx model.
        metadata (dict[str, Any]): Metadata for the exported model.
        input_size (tuple[int, int]): Input size of the model. Used for adding metadata to the IR.
        kwargs: Additional arguments to pass to model optimizer.
    """
    model = convert_model(input_model=str(input_model), output_dir=str(export_path), **kwargs)
    _postprocess_openvino_model(model, metadata)
    serialize(model, str(Path(export_path) / "model.xml"))


def _postprocess_openvino_model(model, metadata: dict[str, Any]):
    """Add metadata to the OpenVINO model and serialize the transforms."""
    # Convert transforms to albumentations yaml format to make it compatible with model_api
    transform = A.from_dict(metadata["transform"])
    transform_yaml = str(A.to_dict(transform))
    model.set_rt_info(transform_yaml, ["model_info", "transforms"])
    for key, value in metadata.items():
        if key == "transform":
            continue
        model.set_rt_info(_serialize_list(value) if isinstance(value, (list, tuple)) else value, ["model_info", key])


def _serialize_list(arr: list[int] | list[float] | tuple[int, int]) -> str:
    """Serializes the list to a string."""
    return " ".join(map(str, arr))


def get_openvino_version() -> str:
    """Returns the installed OpenVINO version (``mo --version``)."""
    try:
        out = subprocess.run(["mo", "--version"], capture_output=True, check=True, text=True)  # nosec
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out.stdout.strip()
