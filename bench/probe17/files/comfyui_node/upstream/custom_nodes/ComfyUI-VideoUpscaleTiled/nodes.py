"""ComfyUI custom nodes: temporal-consistent tiled video upscaling + frame interpolation.

Install: clone into ComfyUI/custom_nodes and `pip install -r requirements.txt`.
Works on NVIDIA GPUs; falls back to CPU (slow) when no GPU is found.
"""
import math
import os

import comfy.model_management as mm
import comfy.utils
import folder_paths
import torch
import torch.nn.functional as F

from .rife_arch import IFNet
from .upscaler_arch import load_upscaler

MODELS_DIR = os.path.join(folder_paths.models_dir, "video_upscale")
os.makedirs(MODELS_DIR, exist_ok=True)

if torch.cuda.is_available():
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.benchmark = True


def get_device():
    # prefer ComfyUI's device selection; honour the --gpu-only / --cpu flags
    return mm.get_torch_device()


def fp16_supported():
    if not torch.cuda.is_available():
        return False
    major, minor = torch.cuda.get_device_capability()
    return major >= 7


class LoadVideoUpscaler:
    @classmethod
    def INPUT_TYPES(cls):
        return {"required": {
            "model_name": (sorted(os.listdir(MODELS_DIR)),),
            "precision": (["fp16", "bf16", "fp32"], {"default": "fp16"}),
        }}

    RETURN_TYPES = ("VIDEO_UPSCALER",)
    FUNCTION = "load"
    CATEGORY = "video/upscale"

    def load(self, model_name, precision):
        dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[precision]
        if dtype == torch.float16 and not fp16_supported():
            dtype = torch.float32
        sd = comfy.utils.load_torch_file(os.path.join(MODELS_DIR, model_name), safe_load=True)
        model = load_upscaler(sd).eval().to(dtype)
        return ({"model": model, "dtype": dtype},)


class VideoUpscaleTiled:
    @classmethod
    def INPUT_TYPES(cls):
        return {"required": {
            "upscaler": ("VIDEO_UPSCALER",),
            "images": ("IMAGE",),
            "tile_size": ("INT", {"default": 512, "min": 128, "max": 2048, "step": 64}),
            "overlap": ("INT", {"default": 32, "min": 0, "max": 256, "step": 8}),
            "frames_per_batch": ("INT", {"default": 8, "min": 1, "max": 64}),
        }}

    RETURN_TYPES = ("IMAGE",)
    FUNCTION = "upscale"
    CATEGORY = "video/upscale"

    @torch.no_grad()
    def upscale(self, upscaler, images, tile_size, overlap, frames_per_batch):
        device = get_device()
        model, dtype = upscaler["model"], upscaler["dtype"]
        model.to(device)
        scale = model.scale
        frames = images.movedim(-1, 1)  # B H W C -> B C H W
        out = []
        pbar = comfy.utils.ProgressBar(frames.shape[0])
        for i in range(0, frames.shape[0], frames_per_batch):
            chunk = frames[i:i + frames_per_batch].to(device, dtype)
            with torch.autocast(device_type="cuda", dtype=dtype, enabled=dtype != torch.float32):
                up = comfy.utils.tiled_scale(chunk, lambda t: model(t), tile_x=tile_size, tile_y=tile_size,
                                             overlap=overlap, upscale_amount=scale)
            out.append(up.float().cpu())
            pbar.update(chunk.shape[0])
        model.to(mm.unet_offload_device())
        mm.soft_empty_cache()
        return (torch.cat(out).movedim(1, -1).clamp(0, 1),)


class RIFEInterpolate:
    @classmethod
    def INPUT_TYPES(cls):
        return {"required": {
            "images": ("IMAGE",),
            "multiplier": ("INT", {"default": 2, "min": 2, "max": 8}),
            "ckpt_name": (["rife47.pth", "rife49.pth"],),
        }}

    RETURN_TYPES = ("IMAGE",)
    FUNCTION = "interpolate"
    CATEGORY = "video/interpolate"

    def __init__(self):
        self.model = None

    def _load(self, ckpt_name):
        if self.model is None:
            self.model = IFNet(arch_ver="4.7")
            sd = torch.load(os.path.join(MODELS_DIR, ckpt_name), map_location="cuda")
            self.model.load_state_dict(sd)
            self.model.eval().cuda()
        return self.model

    @torch.no_grad()
    def interpolate(self, images, multiplier, ckpt_name):
        model = self._load(ckpt_name)
        frames = images.movedim(-1, 1).cuda()
        h, w = frames.shape[-2:]
        ph, pw = math.ceil(h / 32) * 32, math.ceil(w / 32) * 32
        frames = F.pad(frames, (0, pw - w, 0, ph - h))
        out = [frames[:1]]
        for i in range(frames.shape[0] - 1):
            a, b = frames[i:i + 1], frames[i + 1:i + 2]
            for k in range(1, multiplier):
                t = torch.full((1, 1, ph, pw), k / multiplier, device=frames.device)
                out.append(model(torch.cat([a, b, t], dim=1)))
            out.append(b)
        torch.cuda.synchronize()
        result = torch.cat(out)[:, :, :h, :w]
        torch.cuda.empty_cache()
        return (result.movedim(1, -1).cpu(),)


NODE_CLASS_MAPPINGS = {
    "LoadVideoUpscaler": LoadVideoUpscaler,
    "VideoUpscaleTiled": VideoUpscaleTiled,
    "RIFEInterpolate": RIFEInterpolate,
}
NODE_DISPLAY_NAME_MAPPINGS = {
    "LoadVideoUpscaler": "Load Video Upscaler",
    "VideoUpscaleTiled": "Video Upscale (tiled)",
    "RIFEInterpolate": "RIFE Frame Interpolation",
}
