"""Gradio demo of FontDiffuser: one-shot font generation from a single style reference.

    python app.py                    # local demo on GPU 0
    python app.py --share --fp16     # public link, half-precision UNet
"""
import argparse
import os
import random

import gradio as gr
import numpy as np
import torch
from PIL import Image

from sample import (arg_parse,
                    sampling,
                    load_fontdiffuer_pipeline)


def pick_dtype(args):
    """fp16 only pays off (and is only numerically safe for the DPM solver) on Volta or newer."""
    if not args.fp16:
        return torch.float32
    major, minor = torch.cuda.get_device_capability(0)
    if major < 7:
        print(f"GPU compute capability {major}.{minor} < 7.0, falling back to fp32")
        return torch.float32
    return torch.float16


def run_fontdiffuer(source_image,
                    character,
                    reference_image,
                    sampling_step,
                    guidance_scale,
                    batch_size):
    args.character_input = False if source_image is not None else True
    args.content_character = character
    args.sampling_step = sampling_step
    args.guidance_scale = guidance_scale
    args.batch_size = batch_size
    args.seed = random.randint(0, 10000)
    out_image = sampling(
        args=args,
        pipe=pipe,
        content_image=source_image,
        style_image=reference_image)
    return out_image


def gpu_status():
    if not torch.cuda.is_available():
        return "CPU mode"
    free, total = torch.cuda.mem_get_info()
    name = torch.cuda.get_device_name(torch.cuda.current_device())
    return f"{name}: {(total - free) / 2**30:.1f} / {total / 2**30:.1f} GB used"


if __name__ == '__main__':
    extra = argparse.ArgumentParser(add_help=False)
    extra.add_argument("--share", action="store_true")
    extra.add_argument("--port", type=int, default=7860)
    extra.add_argument("--compile", action="store_true", help="torch.compile the UNet (PyTorch 2.x)")
    extra_args, remaining = extra.parse_known_args()

    import sys
    sys.argv = [sys.argv[0]] + remaining
    args = arg_parse()
    args.demo = True
    args.ckpt_dir = 'ckpt'
    args.ttf_path = 'ttf/KaiXinSongA.ttf'
    args.device = 'cuda'

    # load fontdiffuser pipeline
    pipe = load_fontdiffuer_pipeline(args=args)
    dtype = pick_dtype(args)
    if dtype == torch.float16:
        pipe.model.half()
    if extra_args.compile:
        pipe.model.unet = torch.compile(pipe.model.unet, mode="reduce-overhead", fullgraph=False)

    with gr.Blocks() as demo:
        with gr.Row():
            with gr.Column(scale=1):
                gr.HTML("""
                    <div style="text-align: center; max-width: 1200px; margin: 20px auto;">
                    <h1 style="font-weight: 900; font-size: 3rem; margin: 0rem">
                        FontDiffuser
                    </h1>
                    <h2 style="font-weight: 450; font-size: 1rem; margin: 0rem">
                        Generating Chinese characters in any style from a single reference glyph
                    </h2>
                    </div>
                    """)
                gr.Markdown(f"Running on: **{gpu_status()}**")
                gr.Image('figures/result_vis.png')
                gr.Image('figures/demo_tips.png')
            with gr.Column(scale=1):
                with gr.Row():
                    source_image = gr.Image(width=320, label='[Option 1] Source Image', image_mode='RGB', type='pil')
                    reference_image = gr.Image(width=320, label='Reference Image', image_mode='RGB', type='pil')
                with gr.Row():
                    character = gr.Textbox(value='隆', label='[Option 2] Source Character')
                with gr.Row():
                    fontdiffuer_output_image = gr.Image(height=200, label="FontDiffuser Output Image",
                                                        image_mode='RGB', type='pil')

                sampling_step = gr.Slider(20, 50, value=20, step=10,
                                          label="Sampling Step",
                                          info="The sampling step by FontDiffuser.")
                guidance_scale = gr.Slider(1, 12, value=7.5, step=0.5,
                                           label="Scale of Classifier-free Guidance",
                                           info="The scale used for classifier-free guidance sampling")
                batch_size = gr.Slider(1, 4, value=1, step=1,
                                       label="Batch Size",
                                       info="The number of images to be sampled.")

                FontDiffuser = gr.Button('Run FontDiffuser')
                gr.Markdown("## <font color=#008000, size=6>Examples that You Can Choose Below⬇️</font>")
        with gr.Row():
            gr.Markdown("## Examples")
        with gr.Row():
            with gr.Column(scale=1):
                gr.Markdown("## Example 1️⃣: Source Image and Reference Image")
                gr.Markdown("### In this mode, we provide both the source image and \
                            the reference image for you to try our demo!")
                gr.Examples(
                    examples=[['figures/source_imgs/source_灨.jpg', 'figures/ref_imgs/ref_籍.jpg'],
                              ['figures/source_imgs/source_鑻.jpg', 'figures/ref_imgs/ref_鹰.jpg'],
                              ['figures/source_imgs/source_鑫.jpg', 'figures/ref_imgs/ref_壤.jpg'],
                              ['figures/source_imgs/source_釅.jpg', 'figures/ref_imgs/ref_雕.jpg']],
                    inputs=[source_image, reference_image]
                )
            with gr.Column(scale=1):
                gr.Markdown("## Example 2️⃣: Character and Reference Image")
                gr.Markdown("### In this mode, we provide the content character and the reference image \
                            for you to try our demo!")
                gr.Examples(
                    examples=[['龍', 'figures/ref_imgs/ref_鷢.jpg'],
                              ['轉', 'figures/ref_imgs/ref_鲸.jpg'],
                              ['懭', 'figures/ref_imgs/ref_籍_1.jpg'],
                              ['識', 'figures/ref_imgs/ref_鞣.jpg']],
                    inputs=[character, reference_image]
                )
        FontDiffuser.click(
            fn=run_fontdiffuer,
            inputs=[source_image,
                    character,
                    reference_image,
                    sampling_step,
                    guidance_scale,
                    batch_size],
            outputs=fontdiffuer_output_image)
    demo.launch(debug=True, share=extra_args.share, server_port=extra_args.port)
