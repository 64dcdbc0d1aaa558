"""
ComfyUI-MultiGPU: pin individual loaders (UNet, CLIP, VAE, ControlNet) to a chosen CUDA device.

Every wrapped loader gains a `device` input. The selection is stored in a module global and
comfy.model_management.get_torch_device / text_encoder_device are monkey-patched to return it while
the loader runs, so the model is loaded, kept and sampled on that card.
"""
import copy
import logging
import torch

import folder_paths
import comfy.model_management as mm
from nodes import NODE_CLASS_MAPPINGS as GLOBAL_NODE_CLASS_MAPPINGS

logger = logging.getLogger("MultiGPU")

current_device = mm.get_torch_device()
current_text_encoder_device = mm.text_encoder_device()


def get_device_list():
    devs = ["cpu"]
    devs += [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    return devs


def set_current_device(device):
    global current_device
    current_device = device
    logger.info(f"[MultiGPU] current_device set to {device}")


def set_current_text_encoder_device(device):
    global current_text_encoder_device
    current_text_encoder_device = device


def get_torch_device_patched():
    if not torch.cuda.is_available() or mm.cpu_state == mm.CPUState.CPU or "cpu" in str(current_device).lower():
        return torch.device("cpu")
    return torch.device(current_device)


def text_encoder_device_patched():
    if not torch.cuda.is_available() or mm.cpu_state == mm.CPUState.CPU or "cpu" in str(current_text_encoder_device).lower():
        return torch.device("cpu")
    return torch.device(current_text_encoder_device)


mm.get_torch_device = get_torch_device_patched
mm.text_encoder_device = text_encoder_device_patched


def describe_devices():
    lines = []
    for i in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(i)
        free, total = torch.cuda.mem_get_info(i)
        lines.append(f"cuda:{i} {props.name} sm_{props.major}{props.minor} {free / 1024**3:.1f}/{total / 1024**3:.1f} GiB free")
    return "\n".join(lines)


def override_class(cls):
    class NodeOverride(cls):
        @classmethod
        def INPUT_TYPES(s):
            inputs = copy.deepcopy(cls.INPUT_TYPES())
            devices = get_device_list()
            default_device = devices[1] if len(devices) > 1 else devices[0]
            inputs["optional"] = inputs.get("optional", {})
            inputs["optional"]["device"] = (devices, {"default": default_device})
            return inputs

        CATEGORY = "multigpu"
        FUNCTION = "override"

        def override(self, *args, device=None, **kwargs):
            if device is not None:
                set_current_device(device)
            fn = getattr(super(), cls.FUNCTION)
            out = fn(*args, **kwargs)
            return out

    return NodeOverride


def override_class_clip(cls):
    class NodeOverride(cls):
        @classmethod
        def INPUT_TYPES(s):
            inputs = copy.deepcopy(cls.INPUT_TYPES())
            devices = get_device_list()
            default_device = devices[1] if len(devices) > 1 else devices[0]
            inputs["optional"] = inputs.get("optional", {})
            inputs["optional"]["device"] = (devices, {"default": default_device})
            return inputs

        CATEGORY = "multigpu"
        FUNCTION = "override"

        def override(self, *args, device=None, **kwargs):
            if device is not None:
                set_current_text_encoder_device(device)
            kwargs["device"] = "default"
            fn = getattr(super(), cls.FUNCTION)
            out = fn(*args, **kwargs)
            return out

    return NodeOverride


class DeviceSelectorMultiGPU:
    @classmethod
    def INPUT_TYPES(s):
        devices = get_device_list()
        default_device = devices[1] if len(devices) > 1 else devices[0]
        return {"required": {"device": (devices, {"default": default_device})}}

    RETURN_TYPES = ("STRING",)
    FUNCTION = "select"
    CATEGORY = "multigpu"

    def select(self, device):
        if device.startswith("cuda"):
            torch.cuda.set_device(torch.device(device))
        return (device,)


class DeviceInfoMultiGPU:
    @classmethod
    def INPUT_TYPES(s):
        return {"required": {}}

    RETURN_TYPES = ("STRING",)
    FUNCTION = "info"
    CATEGORY = "multigpu"
    OUTPUT_NODE = True

    def info(self):
        text = describe_devices()
        logger.info(text)
        torch.cuda.synchronize()
        return (text,)


NODE_CLASS_MAPPINGS = {
    "DeviceSelectorMultiGPU": DeviceSelectorMultiGPU,
    "DeviceInfoMultiGPU": DeviceInfoMultiGPU,
}

for name in ["UNETLoader", "VAELoader", "ControlNetLoader", "CheckpointLoaderSimple", "UpscaleModelLoader"]:
    if name in GLOBAL_NODE_CLASS_MAPPINGS:
        NODE_CLASS_MAPPINGS[f"{name}MultiGPU"] = override_class(GLOBAL_NODE_CLASS_MAPPINGS[name])

for name in ["CLIPLoader", "DualCLIPLoader", "TripleCLIPLoader"]:
    if name in GLOBAL_NODE_CLASS_MAPPINGS:
        NODE_CLASS_MAPPINGS[f"{name}MultiGPU"] = override_class_clip(GLOBAL_NODE_CLASS_MAPPINGS[name])

logger.info(f"[MultiGPU] devices: {get_device_list()}")
