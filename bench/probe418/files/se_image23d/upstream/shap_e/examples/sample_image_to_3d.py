"""
Script version of shap_e/examples/sample_image_to_3d.ipynb, extended to run a
whole folder of images in one go.

Images should be RGBA with the background removed (see the notebook for why).
"""

import argparse
import glob
import os
import time

import torch

from shap_e.diffusion.sample import sample_latents
from shap_e.diffusion.gaussian_diffusion import diffusion_from_config
from shap_e.models.download import load_model, load_config
from shap_e.util.image_util import load_image
from shap_e.util.notebooks import decode_latent_mesh


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument('--image_dir', type=str, required=True)
    p.add_argument('--out_dir', type=str, default='outputs_image23d')
    p.add_argument('--batch_size', type=int, default=2)
    p.add_argument('--guidance_scale', type=float, default=3.0)
    p.add_argument('--device', type=str, default='cuda:0')
    p.add_argument('--cache_dir', type=str, default=None)
    return p.parse_args()


@torch.no_grad()
def main():
    args = parse_args()
    device = torch.device(args.device)

    xm = load_model('transmitter', device=device, cache_dir=args.cache_dir)
    model = load_model('image300M', device=device, cache_dir=args.cache_dir)
    diffusion = diffusion_from_config(load_config('diffusion'))

    os.makedirs(args.out_dir, exist_ok=True)
    paths = sorted(glob.glob(os.path.join(args.image_dir, '*.png')))
    print(f'found {len(paths)} images, running on {device}')

    for path in paths:
        name = os.path.splitext(os.path.basename(path))[0]
        image = load_image(path)

        t0 = time.time()
        with torch.autocast(device_type='cuda', dtype=torch.float16):
            latents = sample_latents(
                batch_size=args.batch_size,
                model=model,
                diffusion=diffusion,
                guidance_scale=args.guidance_scale,
                model_kwargs=dict(images=[image] * args.batch_size),
                progress=True,
                clip_denoised=True,
                use_fp16=True,
                use_karras=True,
                karras_steps=64,
                sigma_min=1e-3,
                sigma_max=160,
                s_churn=0,
            )
        torch.cuda.synchronize(device)
        print(f'{name}: sampled {len(latents)} latents in {time.time() - t0:.1f}s')

        for i, latent in enumerate(latents):
            mesh = decode_latent_mesh(xm, latent.float()).tri_mesh()
            with open(os.path.join(args.out_dir, f'{name}_{i}.ply'), 'wb') as f:
                mesh.write_ply(f)

        # the transmitter keeps big intermediate buffers around; free them
        # between images so that long folders do not run out of GPU memory
        del latents
        torch.cuda.empty_cache()


if __name__ == '__main__':
    main()
