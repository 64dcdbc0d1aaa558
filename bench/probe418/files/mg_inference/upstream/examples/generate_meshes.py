"""
Sample meshes from a trained MeshGPT transformer and write them as one .obj
(each mesh shifted along x so they do not overlap).

    python examples/generate_meshes.py --ckpt mlruns/meshgpt/mesh-transformer.pt --num 8
"""

import argparse
import time

import torch

from meshgpt_pytorch import MeshAutoencoder, MeshTransformer
from meshgpt_pytorch.mesh_export import mesh_render


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument('--ckpt', type=str, required=True)
    p.add_argument('--encoder_ckpt', type=str, required=True)
    p.add_argument('--num', type=int, default=8)
    p.add_argument('--temperature', type=float, default=0.0)
    p.add_argument('--cond_scale', type=float, default=1.0)
    p.add_argument('--texts', type=str, nargs='*', default=None)
    p.add_argument('--out', type=str, default='generated.obj')
    p.add_argument('--half', action='store_true')
    return p.parse_args()


def main():
    args = parse_args()
    device = torch.device('cuda:0')

    autoencoder = MeshAutoencoder.init_and_load(args.encoder_ckpt)
    transformer = MeshTransformer.init_and_load(args.ckpt)
    transformer.autoencoder = autoencoder
    transformer = transformer.to(device).eval()
    if args.half:
        transformer = transformer.half()

    print(f'loaded transformer ({sum(p.numel() for p in transformer.parameters()) / 1e6:.0f}M params) '
          f'on {torch.cuda.get_device_name(device)}')

    t0 = time.time()
    with torch.no_grad(), torch.autocast('cuda', dtype=torch.float16, enabled=args.half):
        if args.texts:
            face_coords, face_mask = transformer.generate(
                texts=args.texts,
                temperature=args.temperature,
                cond_scale=args.cond_scale,
            )
        else:
            face_coords, face_mask = transformer.generate(
                batch_size=args.num,
                temperature=args.temperature,
            )
    torch.cuda.synchronize()
    elapsed = time.time() - t0
    print(f'generated {face_coords.shape[0]} meshes in {elapsed:.1f}s')

    meshes = []
    for coords, mask in zip(face_coords, face_mask):
        meshes.append(coords[mask].float().cpu())
    mesh_render.save_rendering(args.out, meshes)
    print(f'wrote {args.out}')


if __name__ == '__main__':
    main()
