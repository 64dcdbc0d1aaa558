#!/usr/bin/env python
"""T2I-Adapter-SDXL demo: lineart / canny / sketch / depth-midas / openpose conditioned SDXL.

Follows the TencentARC/t2i-adapter-sdxl Space.  All adapters and annotators are kept resident
on the GPU; switching adapter type only swaps `pipe.adapter`.
"""
import os
import random

import gradio as gr
import numpy as np
import PIL.Image
import torch
from controlnet_aux import CannyDetector, LineartDetector, MidasDetector, OpenposeDetector, PidiNetDetector
from diffusers import (
    AutoencoderKL,
    EulerAncestralDiscreteScheduler,
    StableDiffusionXLAdapterPipeline,
    T2IAdapter,
)

DESCRIPTION = "# T2I-Adapter-SDXL"

if not torch.cuda.is_available():
    DESCRIPTION += "\n<p>Running on CPU 🥶 This demo does not work on CPU.</p>"

MAX_SEED = np.iinfo(np.int32).max
ADAPTER_NAMES = [
    "TencentARC/t2i-adapter-canny-sdxl-1.0",
    "TencentARC/t2i-adapter-sketch-sdxl-1.0",
    "TencentARC/t2i-adapter-lineart-sdxl-1.0",
    "TencentARC/t2i-adapter-depth-midas-sdxl-1.0",
    "TencentARC/t2i-adapter-openpose-sdxl-1.0",
]
ENABLE_TORCH_COMPILE = os.getenv("ENABLE_TORCH_COMPILE") == "1"
DISABLE_XFORMERS = os.getenv("DISABLE_XFORMERS") == "1"

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


class Preprocessor:
    MODEL_ID = "lllyasviel/Annotators"

    def __init__(self, name):
        self.name = name
        if name == "canny":
            self.model = CannyDetector()
        elif name == "lineart":
            self.model = LineartDetector.from_pretrained(self.MODEL_ID).to(device)
        elif name == "sketch":
            self.model = PidiNetDetector.from_pretrained(self.MODEL_ID).to(device)
        elif name == "depth-midas":
            self.model = MidasDetector.from_pretrained(self.MODEL_ID, filename="dpt_large_384.pt", model_type="dpt_large").to(device)
        elif name == "openpose":
            self.model = OpenposeDetector.from_pretrained(self.MODEL_ID).to(device)
        else:
            raise ValueError(name)

    def __call__(self, image: PIL.Image.Image) -> PIL.Image.Image:
        if self.name == "canny":
            return self.model(image, detect_resolution=384, image_resolution=1024)
        elif self.name == "lineart":
            return self.model(image, detect_resolution=384, image_resolution=1024, coarse=False)
        elif self.name == "sketch":
            return self.model(image, detect_resolution=512, image_resolution=1024, apply_filter=True)
        elif self.name == "depth-midas":
            return self.model(image, detect_resolution=512, image_resolution=1024)
        return self.model(image, detect_resolution=512, image_resolution=1024, hand_and_face=False)


if torch.cuda.is_available():
    model_id = "stabilityai/stable-diffusion-xl-base-1.0"
    adapters = {
        name: T2IAdapter.from_pretrained(name, torch_dtype=torch.float16, varient="fp16").to(device)
        for name in ADAPTER_NAMES
    }
    euler_a = EulerAncestralDiscreteScheduler.from_pretrained(model_id, subfolder="scheduler")
    vae = AutoencoderKL.from_pretrained("madebyollin/sdxl-vae-fp16-fix", torch_dtype=torch.float16)
    pipe = StableDiffusionXLAdapterPipeline.from_pretrained(
        model_id,
        vae=vae,
        adapter=adapters[ADAPTER_NAMES[0]],
        scheduler=euler_a,
        torch_dtype=torch.float16,
        variant="fp16",
    )
    pipe.to(device)
    if not DISABLE_XFORMERS:
        pipe.enable_xformers_memory_efficient_attention()
    if ENABLE_TORCH_COMPILE:
        pipe.unet = torch.compile(pipe.unet, mode="reduce-overhead", fullgraph=True)
    preprocessors = {name.split("-sdxl")[0].split("t2i-adapter-")[1]: Preprocessor(name.split("-sdxl")[0].split("t2i-adapter-")[1]) for name in ADAPTER_NAMES}
else:
    pipe = None
    adapters = {}
    preprocessors = {}


def randomize_seed_fn(seed: int, randomize_seed: bool) -> int:
    if randomize_seed:
        seed = random.randint(0, MAX_SEED)
    return seed


def run(
    image: PIL.Image.Image,
    prompt: str,
    negative_prompt: str,
    adapter_name: str,
    num_inference_steps: int = 30,
    guidance_scale: float = 5.0,
    adapter_conditioning_scale: float = 1.0,
    adapter_conditioning_factor: float = 1.0,
    seed: int = 0,
    apply_preprocess: bool = True,
    progress=gr.Progress(track_tqdm=True),
) -> list[PIL.Image.Image]:
    if num_inference_steps > 50:
        raise ValueError("Number of steps must be <= 50")

    pipe.adapter = adapters[adapter_name]
    short_name = adapter_name.split("-sdxl")[0].split("t2i-adapter-")[1]
    if apply_preprocess:
        image = preprocessors[short_name](image)

    generator = torch.Generator(device=device).manual_seed(seed)
    out = pipe(
        prompt=prompt,
        negative_prompt=negative_prompt,
        image=image,
        num_inference_steps=num_inference_steps,
        adapter_conditioning_scale=adapter_conditioning_scale,
        adapter_conditioning_factor=adapter_conditioning_factor,
        generator=generator,
        guidance_scale=guidance_scale,
    ).images[0]
    torch.cuda.empty_cache()
    return [image, out]


with gr.Blocks(css="style.css") as demo:
    gr.Markdown(DESCRIPTION, elem_id="description")
    with gr.Row():
        with gr.Column():
            image = gr.Image(label="Input image", type="pil", height=600)
            prompt = gr.Textbox(label="Prompt")
            adapter_name = gr.Dropdown(label="Adapter name", choices=ADAPTER_NAMES, value=ADAPTER_NAMES[0])
            run_button = gr.Button("Run")
            with gr.Accordion("Advanced options", open=False):
                apply_preprocess = gr.Checkbox(label="Apply preprocess", value=True)
                negative_prompt = gr.Textbox(
                    label="Negative prompt",
                    value="extra digit, fewer digits, cropped, worst quality, low quality, glitch, deformed, mutated, ugly, disfigured",
                )
                num_inference_steps = gr.Slider(label="Number of steps", minimum=1, maximum=50, step=1, value=30)
                guidance_scale = gr.Slider(label="Guidance scale", minimum=0.1, maximum=30.0, step=0.1, value=5.0)
                adapter_conditioning_scale = gr.Slider(label="Adapter conditioning scale", minimum=0.5, maximum=1, step=0.1, value=1.0)
                adapter_conditioning_factor = gr.Slider(label="Adapter conditioning factor", minimum=0.5, maximum=1, step=0.1, value=1.0)
                seed = gr.Slider(label="Seed", minimum=0, maximum=MAX_SEED, step=1, value=0)
                randomize_seed = gr.Checkbox(label="Randomize seed", value=True)
        with gr.Column():
            result = gr.Gallery(label="Result", columns=2, height=600, object_fit="scale-down", show_label=False)

    inputs = [
        image, prompt, negative_prompt, adapter_name, num_inference_steps, guidance_scale,
        adapter_conditioning_scale, adapter_conditioning_factor, seed, apply_preprocess,
    ]
    run_button.click(
        fn=randomize_seed_fn,
        inputs=[seed, randomize_seed],
        outputs=seed,
        queue=False,
        api_name=False,
    ).then(
        fn=run,
        inputs=inputs,
        outputs=result,
        api_name="run",
    )

if __name__ == "__main__":
    demo.queue(max_size=20).launch()
