"""/system_stats and /free routes, split out of ComfyUI server.py for this deployment."""
import os
import sys
import logging

import torch
from aiohttp import web

import comfy.model_management
import comfyui_version

routes = web.RouteTableDef()


def _device_entry(device):
    vram_total, torch_vram_total = comfy.model_management.get_total_memory(device, torch_total_too=True)
    vram_free, torch_vram_free = comfy.model_management.get_free_memory(device, torch_free_too=True)
    return {
        "name": comfy.model_management.get_torch_device_name(device),
        "type": device.type,
        "index": device.index,
        "vram_total": vram_total,
        "vram_free": vram_free,
        "torch_vram_total": torch_vram_total,
        "torch_vram_free": torch_vram_free,
    }


@routes.get("/system_stats")
async def system_stats(request):
    device = comfy.model_management.get_torch_device()
    cpu_device = comfy.model_management.torch.device("cpu")
    ram_total = comfy.model_management.get_total_memory(cpu_device)
    ram_free = comfy.model_management.get_free_memory(cpu_device)

    system_stats = {
        "system": {
            "os": os.name,
            "ram_total": ram_total,
            "ram_free": ram_free,
            "comfyui_version": comfyui_version.__version__,
            "python_version": sys.version,
            "pytorch_version": comfy.model_management.torch_version,
            "embedded_python": os.path.split(os.path.split(sys.executable)[0])[1] == "python_embeded",
            "argv": sys.argv
        },
        "devices": [_device_entry(device)]
    }
    return web.json_response(system_stats)


@routes.get("/system_stats/gpus")
async def all_gpus(request):
    # multi-GPU boxes: report every visible card, not just the one ComfyUI runs on
    out = []
    for i in range(torch.cuda.device_count()):
        dev = torch.device("cuda", i)
        props = torch.cuda.get_device_properties(i)
        free, total = torch.cuda.mem_get_info(i)
        out.append({
            "index": i,
            "name": props.name,
            "compute_capability": f"{props.major}.{props.minor}",
            "multi_processor_count": props.multi_processor_count,
            "vram_total": total,
            "vram_free": free,
            "torch_allocated": torch.cuda.memory_allocated(dev),
        })
    return web.json_response({"cuda": torch.version.cuda, "gpus": out})


@routes.post("/free")
async def post_free(request):
    json_data = await request.json()
    unload_models = json_data.get("unload_models", False)
    free_memory = json_data.get("free_memory", False)
    if unload_models:
        comfy.model_management.unload_all_models()
    if free_memory:
        comfy.model_management.soft_empty_cache(force=True)
    logging.info("free: unload_models=%s free_memory=%s", unload_models, free_memory)
    return web.Response(status=200)
