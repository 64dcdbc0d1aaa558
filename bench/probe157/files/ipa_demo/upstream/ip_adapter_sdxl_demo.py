"""IP-Adapter SDXL demo (script version of ip_adapter_sdxl_demo.ipynb).

Runs image-prompted generation with SDXL 1.0 on a single GPU.  A 24GB card is enough for
1024x1024 with the fp16 weights; on smaller cards pass --offload.

    python ip_adapter_sdxl_demo.py --image assets/images/woman.png --prompt "best quality, high quality, wearing sunglasses"
"""
import argparse
import os

import torch
from diffusers import StableDiffusionXLPipeline, StableDiffusionXLImg2ImgPipeline, StableDiffusionXLInpaintPipeline
from diffusers import ControlNetModel, StableDiffusionXLControlNetPipeline
from PIL import Image

from ip_adapter import IPAdapterXL, IPAdapterPlusXL

base_model_path = "stabilityai/stable-diffusion-xl-base-1.0"
image_encoder_path = "sdxl_models/image_encoder"
image_encoder_path_plus = "models/image_encoder"
ip_ckpt = "sdxl_models/ip-adapter_sdxl.bin"
ip_ckpt_plus = "sdxl_models/ip-adapter-plus_sdxl_vit-h.bin"
controlnet_path = "diffusers/controlnet-depth-sdxl-1.0"
device = "cuda"


def image_grid(imgs, rows, cols):
    assert len(imgs) == rows * cols

    w, h = imgs[0].size
    grid = Image.new("RGB", size=(cols * w, rows * h))
    grid_w, grid_h = grid.size

    for i, img in enumerate(imgs):
        grid.paste(img, box=(i % cols * w, i // cols * h))
    return grid


def load_pipeline(mode, offload=False):
    if mode == "txt2img":
        pipe = StableDiffusionXLPipeline.from_pretrained(
            base_model_path,
            torch_dtype=torch.float16,
            add_watermarker=False,
        )
    elif mode == "img2img":
        pipe = StableDiffusionXLImg2ImgPipeline.from_pretrained(
            base_model_path,
            torch_dtype=torch.float16,
            add_watermarker=False,
        )
    elif mode == "inpaint":
        pipe = StableDiffusionXLInpaintPipeline.from_pretrained(
            base_model_path,
            torch_dtype=torch.float16,
            add_watermarker=False,
        )
    elif mode == "controlnet":
        controlnet = ControlNetModel.from_pretrained(controlnet_path, variant="fp16", use_safetensors=True, torch_dtype=torch.float16).to(device)
        pipe = StableDiffusionXLControlNetPipeline.from_pretrained(
            base_model_path,
            controlnet=controlnet,
            use_safetensors=True,
            torch_dtype=torch.float16,
            add_watermarker=False,
        ).to(device)
    else:
        raise ValueError(f"unknown mode {mode}")

    # VAE tiling keeps the 1024px decode under 16GB
    pipe.enable_vae_tiling()
    if offload:
        # keeps only the active sub-model on the GPU
        pipe.enable_model_cpu_offload()
    return pipe


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--image", type=str, default="assets/images/woman.png")
    parser.add_argument("--prompt", type=str, default="best quality, high quality, wearing sunglasses in the beach")
    parser.add_argument("--mode", type=str, default="txt2img", choices=["txt2img", "img2img", "inpaint", "controlnet"])
    parser.add_argument("--plus", action="store_true", help="use ip-adapter-plus (ViT-H, 16 tokens)")
    parser.add_argument("--scale", type=float, default=0.6)
    parser.add_argument("--num_samples", type=int, default=2)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--offload", action="store_true")
    parser.add_argument("--outdir", type=str, default="outputs")
    args = parser.parse_args()

    os.makedirs(args.outdir, exist_ok=True)

    pipe = load_pipeline(args.mode, offload=args.offload)

    # load ip-adapter
    if args.plus:
        ip_model = IPAdapterPlusXL(pipe, image_encoder_path_plus, ip_ckpt_plus, device, num_tokens=16)
    else:
        ip_model = IPAdapterXL(pipe, image_encoder_path, ip_ckpt, device)

    image = Image.open(args.image)
    image.resize((512, 512))

    if args.mode == "txt2img":
        images = ip_model.generate(
            pil_image=image,
            num_samples=args.num_samples,
            num_inference_steps=args.steps,
            seed=args.seed,
            prompt=args.prompt,
            scale=args.scale,
        )
    elif args.mode == "img2img":
        g_image = Image.open("assets/images/river.png")
        images = ip_model.generate(
            pil_image=image,
            image=g_image,
            strength=0.6,
            num_samples=args.num_samples,
            num_inference_steps=args.steps,
            seed=args.seed,
        )
    elif args.mode == "inpaint":
        masked_image = Image.open("assets/inpainting/image.png").resize((1024, 1024))
        mask = Image.open("assets/inpainting/mask.png").resize((1024, 1024))
        images = ip_model.generate(
            pil_image=image,
            num_samples=args.num_samples,
            num_inference_steps=args.steps,
            seed=args.seed,
            image=masked_image,
            mask_image=mask,
            strength=0.7,
        )
    else:
        depth_map = Image.open("assets/structure_controls/depth.png").resize((1024, 1024))
        images = ip_model.generate(
            pil_image=image,
            image=depth_map,
            controlnet_conditioning_scale=0.7,
            num_samples=args.num_samples,
            num_inference_steps=args.steps,
            seed=args.seed,
        )

    grid = image_grid(images, 1, args.num_samples)
    grid.save(os.path.join(args.outdir, f"ip_adapter_sdxl_{args.mode}.png"))

    print(f"peak GPU memory: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
