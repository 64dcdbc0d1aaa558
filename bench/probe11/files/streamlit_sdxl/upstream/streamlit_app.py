"""Streamlit playground for SDXL (base + optional refiner) with LoRA loading.

    streamlit run streamlit_app.py -- --lora ./loras
"""
import argparse
import gc
import io
import os
import time

import streamlit as st
import torch
from diffusers import DiffusionPipeline, DPMSolverMultistepScheduler, EulerAncestralDiscreteScheduler
from PIL import Image

BASE_ID = os.getenv("SDXL_BASE", "stabilityai/stable-diffusion-xl-base-1.0")
REFINER_ID = os.getenv("SDXL_REFINER", "stabilityai/stable-diffusion-xl-refiner-1.0")

SCHEDULERS = {
    "DPM++ 2M Karras": lambda cfg: DPMSolverMultistepScheduler.from_config(cfg, use_karras_sigmas=True),
    "Euler a": lambda cfg: EulerAncestralDiscreteScheduler.from_config(cfg),
}


def cli_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lora", default=None, help="folder of .safetensors LoRA files")
    ap.add_argument("--compile", action="store_true")
    try:
        return ap.parse_args()
    except SystemExit:
        return ap.parse_args([])


ARGS = cli_args()
st.set_page_config(page_title="SDXL playground", layout="wide")


@st.cache_resource(show_spinner="Loading SDXL base…")
def load_base(low_vram: bool):
    pipe = DiffusionPipeline.from_pretrained(
        BASE_ID, torch_dtype=torch.float16, variant="fp16", use_safetensors=True,
    )
    if low_vram:
        pipe.enable_model_cpu_offload()
        pipe.enable_vae_slicing()
    else:
        pipe.to("cuda")
    pipe.enable_xformers_memory_efficient_attention()
    if ARGS.compile:
        pipe.unet = torch.compile(pipe.unet, mode="reduce-overhead", fullgraph=True)
    return pipe


@st.cache_resource(show_spinner="Loading refiner…")
def load_refiner(_base):
    refiner = DiffusionPipeline.from_pretrained(
        REFINER_ID,
        text_encoder_2=_base.text_encoder_2,
        vae=_base.vae,
        torch_dtype=torch.float16,
        variant="fp16",
        use_safetensors=True,
    )
    return refiner.to("cuda")


def list_loras():
    if not ARGS.lora or not os.path.isdir(ARGS.lora):
        return []
    return sorted(f for f in os.listdir(ARGS.lora) if f.endswith(".safetensors"))


def to_png_bytes(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


with st.sidebar:
    st.header("Settings")
    low_vram = st.checkbox("Low-VRAM mode (model CPU offload)", value=False)
    use_refiner = st.checkbox("Use refiner", value=False)
    scheduler_name = st.selectbox("Scheduler", list(SCHEDULERS))
    steps = st.slider("Steps", 10, 80, 30)
    guidance = st.slider("CFG scale", 1.0, 15.0, 7.0, 0.5)
    width = st.select_slider("Width", options=[768, 832, 896, 1024, 1152, 1216], value=1024)
    height = st.select_slider("Height", options=[768, 832, 896, 1024, 1152, 1216], value=1024)
    seed = st.number_input("Seed", value=0, step=1)
    n_images = st.slider("Images", 1, 4, 1)
    lora_choice = st.selectbox("LoRA", ["(none)"] + list_loras())
    lora_scale = st.slider("LoRA scale", 0.0, 1.5, 0.8, 0.05)
    free, total = torch.cuda.mem_get_info()
    st.caption(f"GPU memory free: {free / 2**30:.1f} / {total / 2**30:.1f} GiB")
    if st.button("Free memory"):
        st.cache_resource.clear()
        gc.collect()
        torch.cuda.empty_cache()

st.title("SDXL playground")
prompt = st.text_area("Prompt", "an astronaut riding a green horse, studio lighting, 35mm")
negative = st.text_input("Negative prompt", "blurry, low quality, deformed")

if st.button("Generate", type="primary"):
    pipe = load_base(low_vram)
    pipe.scheduler = SCHEDULERS[scheduler_name](pipe.scheduler.config)
    if lora_choice != "(none)":
        pipe.load_lora_weights(ARGS.lora, weight_name=lora_choice, adapter_name="user")
        pipe.set_adapters(["user"], adapter_weights=[lora_scale])
    else:
        pipe.unload_lora_weights()

    generator = torch.Generator("cuda").manual_seed(int(seed))
    t0 = time.perf_counter()
    with st.spinner("Denoising…"):
        if use_refiner:
            latents = pipe(prompt=prompt, negative_prompt=negative, num_inference_steps=steps,
                           guidance_scale=guidance, width=width, height=height, num_images_per_prompt=n_images,
                           denoising_end=0.8, output_type="latent", generator=generator).images
            refiner = load_refiner(pipe)
            images = refiner(prompt=prompt, negative_prompt=negative, num_inference_steps=steps,
                             denoising_start=0.8, image=latents, generator=generator).images
        else:
            images = pipe(prompt=prompt, negative_prompt=negative, num_inference_steps=steps,
                          guidance_scale=guidance, width=width, height=height, num_images_per_prompt=n_images,
                          generator=generator).images
    elapsed = time.perf_counter() - t0
    st.success(f"{len(images)} image(s) in {elapsed:.1f}s")
    cols = st.columns(len(images))
    for i, (col, img) in enumerate(zip(cols, images)):
        col.image(img, use_column_width=True)
        col.download_button("Download", data=to_png_bytes(img), file_name=f"sdxl_{int(seed)}_{i}.png",
                            mime="image/png", key=f"dl{i}")
