"""nequip-compile: turn a training checkpoint or package into a deployable TorchScript or AOTInductor model."""

import argparse
import logging
import pathlib
from typing import Dict, List, Optional

import torch

from nequip.data import AtomicDataDict
from nequip.model.saved_models import ModelFromCheckpoint, ModelFromPackage
from nequip.model.modify_utils import modify, only_apply_persistent_modifiers
from nequip.nn.compile import CompileGraphModel
from nequip.scripts._workflow_utils import set_workflow_state
from nequip.utils import get_current_code_versions
from nequip.utils.compile import prepare_model_for_compile
from nequip.utils._global_options import _set_global_options
from nequip.utils.logger import RankedLogger
from nequip.scripts._compile_utils import COMPILE_TARGET_DICT, PAIR_NEQUIP_TARGET
from nequip.utils.versions import _TORCH_GE_2_6

logger = RankedLogger(__name__, rank_zero_only=True)

# modifiers that replace e3nn/torch code paths with GPU kernels; applied automatically
# only when compiling for a GPU target
_GPU_ONLY_MODIFIERS: List[Dict] = [{"modifier": "enable_TritonContracter"}]

_METADATA_KEYS = (
    "r_max",
    "num_types",
    "type_names",
    "per_edge_type_cutoff",
    "model_dtype",
    "allow_tf32",
    "_jit_bailout_depth",
    "_jit_fusion_strategy",
)


def _parse_args(args=None):
    parser = argparse.ArgumentParser(
        description="Compiles NequIP/Allegro models into a format for deployment in ASE or LAMMPS."
    )
    parser.add_argument(
        "input_path",
        help="path to a checkpoint model or packaged model file",
        type=pathlib.Path,
    )
    parser.add_argument(
        "output_path",
        help="path to write compiled model file (.nequip.pth for TorchScript, .nequip.pt2 for AOTInductor)",
        type=pathlib.Path,
    )
    parser.add_argument(
        "--mode",
        help="compile using TorchScript or AOTInductor",
        type=str,
        choices=["torchscript", "aotinductor"],
        required=True,
    )
    parser.add_argument(
        "--device",
        help="device to compile the model for; it must match the device used for inference",
        type=str,
        choices=["cpu", "cuda"],
        default="cuda",
    )
    parser.add_argument(
        "--target",
        help="target integration (ase, pair_nequip, pair_allegro)",
        type=str,
        required=True,
    )
    parser.add_argument(
        "--tf32",
        help="whether to use TF32 during inference (only relevant for GPUs)",
        action=argparse.BooleanOptionalAction,
        default=False,
    )
    parser.add_argument(
        "--modifiers",
        help="modifiers to apply to the model before compiling (e.g. enable_TritonContracter)",
        nargs="+",
        default=[],
    )
    parser.add_argument(
        "--inductor-configs",
        help="extra key=value inductor configs for AOTInductor",
        nargs="*",
        default=[],
    )
    return parser.parse_args(args=args)


def _load_model(input_path: pathlib.Path, device: torch.device, modifiers: List[Dict]):
    if input_path.suffix == ".ckpt":
        model = ModelFromCheckpoint(str(input_path), compile_mode="eager")
    elif str(input_path).endswith(".nequip.zip"):
        model = ModelFromPackage(str(input_path), compile_mode="eager")
    else:
        raise ValueError(f"unrecognized model file {input_path}")
    model = only_apply_persistent_modifiers(model, persistent=False)
    if modifiers:
        model = modify(model, modifiers)
    return model.to(device).eval()


def _metadata(model, tf32: bool) -> Dict[str, str]:
    metadata = {k: "" for k in _METADATA_KEYS}
    metadata.update(model.metadata)
    metadata["allow_tf32"] = str(int(tf32))
    metadata["code_versions"] = str(get_current_code_versions(verbose=False))
    return metadata


def _compile_torchscript(model, metadata: Dict[str, str], output_path: pathlib.Path):
    script_model = torch.jit.script(model)
    script_model = torch.jit.freeze(script_model.eval())
    extra_files = {k: str(v).encode("ascii") for k, v in metadata.items()}
    torch.jit.save(script_model, str(output_path), _extra_files=extra_files)
    logger.info(f"TorchScript model written to {output_path}")


def _parse_inductor_configs(items: List[str]) -> Dict[str, object]:
    configs: Dict[str, object] = {
        "max_autotune": True,
        "max_autotune_gemm_backends": "TRITON,ATEN",
        "triton.cudagraphs": False,
        "epilogue_fusion": True,
    }
    for item in items:
        key, _, value = item.partition("=")
        if value.lower() in ("true", "false"):
            configs[key] = value.lower() == "true"
        else:
            try:
                configs[key] = int(value)
            except ValueError:
                configs[key] = value
    return configs


def _compile_aotinductor(
    model,
    metadata: Dict[str, str],
    output_path: pathlib.Path,
    device: torch.device,
    target: str,
    inductor_configs: Dict[str, object],
):
    assert _TORCH_GE_2_6, "AOTInductor compilation requires torch >= 2.6"
    fields = COMPILE_TARGET_DICT[target]["input"]
    example = AtomicDataDict.to_(model.example_data(), device)
    example = {k: example[k] for k in fields}
    graph_model = CompileGraphModel(prepare_model_for_compile(model, device), fields)
    exported = torch.export.export(
        graph_model,
        args=(example,),
        dynamic_shapes=graph_model.dynamic_shapes(),
        strict=False,
    )
    package_path = torch._inductor.aoti_compile_and_package(
        exported,
        package_path=str(output_path),
        inductor_configs=inductor_configs,
    )
    with open(str(output_path) + ".metadata", "w") as f:
        for k, v in metadata.items():
            f.write(f"{k}: {v}\n")
    logger.info(f"AOTInductor package written to {package_path}")


def main(args=None):
    args = _parse_args(args)
    set_workflow_state("compile")
    device = torch.device(args.device)

    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    torch.backends.cudnn.allow_tf32 = args.tf32

    modifiers = [{"modifier": m} for m in args.modifiers]
    if device.type == "cuda":
        modifiers += _GPU_ONLY_MODIFIERS
    model = _load_model(args.input_path, device, modifiers)
    metadata = _metadata(model, args.tf32)
    _set_global_options(allow_tf32=args.tf32)

    if args.target in (PAIR_NEQUIP_TARGET,) and args.mode == "aotinductor":
        logger.info("pair_nequip with AOTInductor requires the LAMMPS plugin built with NEQUIP_AOT_COMPILE=ON")

    if args.mode == "torchscript":
        _compile_torchscript(model, metadata, args.output_path)
    else:
        _compile_aotinductor(
            model,
            metadata,
            args.output_path,
            device,
            args.target,
            _parse_inductor_configs(args.inductor_configs),
        )


if __name__ == "__main__":
    main()
