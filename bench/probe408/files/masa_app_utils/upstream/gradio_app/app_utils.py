import os
import torch
from diffusers import DDIMScheduler

from masactrl.diffuser_utils import MasaCtrlPipeline

# Shared state for the MasaCtrl gradio demos (consistent synthesis + real image editing).
# The model is loaded once, on the first GPU, and reused by all tabs.

MODEL_PATH = os.environ.get("MASACTRL_MODEL", "CompVis/stable-diffusion-v1-4")

global_context = {
    "model_path": MODEL_PATH,
    "device": torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu"),
}

scheduler = DDIMScheduler(beta_start=0.00085,
                          beta_end=0.012,
                          beta_schedule="scaled_linear",
                          clip_sample=False,
                          set_alpha_to_one=False)
global_context["scheduler"] = scheduler
global_context["model"] = MasaCtrlPipeline.from_pretrained(
    MODEL_PATH, scheduler=scheduler).to(global_context["device"])

# the models users can choose from in the synthesis tab
global_context["model_choices"] = {
    "Stable Diffusion v1.4": "CompVis/stable-diffusion-v1-4",
    "Stable Diffusion v1.5": "runwayml/stable-diffusion-v1-5",
    "Anything v4.0": "xyn-ai/anything-v4.0",
    "RealisticVision v2.0": "SG161222/Realistic_Vision_V2.0",
}


def change_model(model_name):
    """Swap the pipeline held in the global context; frees the old weights first."""
    model_path = global_context["model_choices"].get(model_name, model_name)
    if model_path == global_context["model_path"]:
        return f"{model_name} already loaded"
    del global_context["model"]
    torch.cuda.empty_cache()
    global_context["model"] = MasaCtrlPipeline.from_pretrained(
        model_path, scheduler=global_context["scheduler"]).to(global_context["device"])
    global_context["model_path"] = model_path
    return f"{model_name} loaded"


def get_gpu_memory_summary():
    if not torch.cuda.is_available():
        return "no GPU"
    free, total = torch.cuda.mem_get_info()
    return f"GPU memory: {(total - free) / 1024 ** 3:.1f} / {total / 1024 ** 3:.1f} GB used"
