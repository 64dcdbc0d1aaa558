"""
Script version of shap_e/examples/sample_text_to_3d.ipynb.

Samples latents for a text prompt with the text300M diffusion prior, renders
turntable previews with the STF renderer and writes every latent out as a
triangle mesh (.ply and .obj).
"""

import argparse
import os

import torch

from shap_e.diffusion.sample import sample_latents
from shap_e.diffusion.gaussian_diffusion import diffusion_from_config
from shap_e.models.download import load_model, load_config
from shap_e.util.notebooks import create_pan_cameras, decode_latent_images, gif_widget
from shap_e.util.notebooks import decode_latent_mesh

parser = argparse.ArgumentParser()
parser.add_argument('--prompt', type=str, default='a shark')
parser.add_argument('--batch_size', type=int, default=4)
parser.add_argument('--guidance_scale', type=float, default=15.0)
parser.add_argument('--render_mode', type=str, default='nerf', choices=['nerf', 'stf'])
parser.add_argument('--size', type=int, default=64, help='renderer resolution; higher values take longer')
parser.add_argument('--out_dir', type=str, default='outputs')
parser.add_argument('--fp16', action='store_true', default=True)
args = parser.parse_args()

device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')

xm = load_model('transmitter', device=device)
model = load_model('text300M', device=device)
diffusion = diffusion_from_config(load_config('diffusion'))

latents = sample_latents(
    batch_size=args.batch_size,
    model=model,
    diffusion=diffusion,
    guidance_scale=args.guidance_scale,
    model_kwargs=dict(texts=[args.prompt] * args.batch_size),
    progress=True,
    clip_denoised=True,
    use_fp16=args.fp16,
    use_karras=True,
    karras_steps=64,
    sigma_min=1e-3,
    sigma_max=160,
    s_churn=0,
)

os.makedirs(args.out_dir, exist_ok=True)
cameras = create_pan_cameras(args.size, device)
for i, latent in enumerate(latents):
    images = decode_latent_images(xm, latent, cameras, rendering_mode=args.render_mode)
    images[0].save(
        os.path.join(args.out_dir, f'preview_{i}.gif'),
        save_all=True, append_images=images[1:], duration=100, loop=0,
    )

# Example of saving the latents as meshes.
for i, latent in enumerate(latents):
    t = decode_latent_mesh(xm, latent).tri_mesh()
    with open(os.path.join(args.out_dir, f'example_mesh_{i}.ply'), 'wb') as f:
        t.write_ply(f)
    with open(os.path.join(args.out_dir, f'example_mesh_{i}.obj'), 'w') as f:
        t.write_obj(f)

if torch.cuda.is_available():
    print(f'peak GPU memory: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB')
