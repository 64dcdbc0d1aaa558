# Converted from ip_adapter_sdxl_demo.ipynb (cells joined, outputs stripped).
import torch
from diffusers import StableDiffusionXLPipeline
from PIL import Image

from ip_adapter import IPAdapterXL

base_model_path = "stabilityai/stable-diffusion-xl-base-1.0"
image_encoder_path = "sdxl_models/image_encoder"
ip_ckpt = "sdxl_models/ip-adapter_sdxl.bin"
device = "cuda"


def image_grid(imgs, rows, cols):
    assert len(imgs) == rows * cols

    w, h = imgs[0].size
    grid = Image.new("RGB", size=(cols * w, rows * h))
    grid_w, grid_h = grid.size

    for i, img in enumerate(imgs):
        grid.paste(img, box=(i % cols * w, i // cols * h))
    return grid


# load SDXL pipeline
pipe = StableDiffusionXLPipeline.from_pretrained(
    base_model_path,
    torch_dtype=torch.float16,
    add_watermarker=False,
)

# reduce memory consumption
pipe.enable_vae_tiling()

# load ip-adapter
ip_model = IPAdapterXL(pipe, image_encoder_path, ip_ckpt, device)

# read image prompt
image = Image.open("assets/images/woman.png")
image.resize((512, 512))

# generate image variations with only image prompt
num_samples = 2
images = ip_model.generate(pil_image=image, num_samples=num_samples, num_inference_steps=30, seed=42)
grid = image_grid(images, 1, num_samples)
grid.save("outputs/sdxl_variations.png")

# multimodal prompts
images = ip_model.generate(
    pil_image=image,
    num_samples=num_samples,
    num_inference_steps=30,
    seed=42,
    prompt="best quality, high quality, wearing sunglasses on the beach",
    scale=0.5,
)
grid = image_grid(images, 1, num_samples)
grid.save("outputs/sdxl_multimodal.png")

torch.cuda.empty_cache()
print(f"peak memory: {torch.cuda.max_memory_reserved() / 2**30:.2f} GiB")
