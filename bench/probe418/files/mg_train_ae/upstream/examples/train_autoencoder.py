"""
Train the MeshGPT autoencoder (stage 1) on a folder of .obj/.glb meshes,
then the mesh transformer (stage 2) on the tokenized dataset.

    python examples/train_autoencoder.py --data ./shapenet_chairs --steps 50000

Single GPU script; for multiple GPUs run it through `accelerate launch`.
"""

import argparse
import gc
import os
import random

import numpy as np
import torch
import trimesh

from meshgpt_pytorch import (
    MeshAutoencoder,
    MeshAutoencoderTrainer,
    MeshTransformer,
    MeshTransformerTrainer,
)
from meshgpt_pytorch.data import DatasetFromTransforms, derive_face_edges_from_faces

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True

device = 'cuda'


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument('--data', type=str, required=True)
    p.add_argument('--out', type=str, default='./mlruns/meshgpt')
    p.add_argument('--steps', type=int, default=50000)
    p.add_argument('--batch_size', type=int, default=16)
    p.add_argument('--grad_accum', type=int, default=1)
    p.add_argument('--lr', type=float, default=1e-3)
    p.add_argument('--resume', type=str, default=None)
    p.add_argument('--seed', type=int, default=42)
    p.add_argument('--stage', type=str, default='autoencoder', choices=['autoencoder', 'transformer'])
    return p.parse_args()


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def load_mesh(path):
    mesh = trimesh.load(path, force='mesh')
    vertices = np.asarray(mesh.vertices, dtype=np.float32)

    # center and scale into [-0.95, 0.95]
    center = (vertices.max(0) + vertices.min(0)) / 2
    vertices = vertices - center
    vertices = vertices / np.abs(vertices).max() * 0.95

    # MeshGPT orders vertices z, y, x and faces by their lowest vertex
    vertices = vertices[:, [2, 1, 0]]
    order = np.lexsort(vertices.T)
    inverse = np.argsort(order)
    vertices = vertices[order]
    faces = inverse[np.asarray(mesh.faces)]
    faces = faces[np.lexsort(np.sort(faces, axis=1).T[::-1])]

    return torch.from_numpy(vertices), torch.from_numpy(faces).long()


def main():
    args = parse_args()
    seed_everything(args.seed)
    os.makedirs(args.out, exist_ok=True)

    dataset = DatasetFromTransforms(
        args.data,
        transforms={'obj': load_mesh, 'glb': load_mesh},
        data_kwargs=['vertices', 'faces'],
    )
    print(f'{len(dataset)} meshes')

    autoencoder = MeshAutoencoder(
        decoder_dims_through_depth=(128,) * 6 + (192,) * 12 + (256,) * 24 + (384,) * 6,
        codebook_size=2048,
        dim_codebook=192,
        dim_area_embed=16,
        dim_coor_embed=16,
        dim_normal_embed=16,
        dim_angle_embed=8,
        attn_decoder_depth=4,
        attn_encoder_depth=2,
    ).to(device)

    if args.resume is not None:
        pkg = torch.load(args.resume, map_location=device)
        autoencoder.load_state_dict(pkg['model'])
        print(f'resumed autoencoder from {args.resume}')

    total_params = sum(p.numel() for p in autoencoder.parameters())
    print(f'autoencoder parameters: {total_params / 1e6:.1f}M')

    if args.stage == 'autoencoder':
        trainer = MeshAutoencoderTrainer(
            model=autoencoder,
            warmup_steps=10,
            dataset=dataset,
            num_train_steps=args.steps,
            batch_size=args.batch_size,
            grad_accum_every=args.grad_accum,
            learning_rate=args.lr,
            checkpoint_every=2000,
            checkpoint_folder=os.path.join(args.out, 'autoencoder'),
            accelerator_kwargs={'mixed_precision': 'fp16'},
        )
        trainer()
        trainer.save(os.path.join(args.out, 'mesh-encoder.pt'))
        return

    # stage 2: tokenize once, then train the transformer on the codes
    autoencoder.eval()
    codes = []
    with torch.no_grad():
        for i in range(len(dataset)):
            vertices, faces = dataset[i]
            vertices, faces = vertices.to(device), faces.to(device)
            face_edges = derive_face_edges_from_faces(faces)
            codes.append(autoencoder.tokenize(vertices=vertices, faces=faces, face_edges=face_edges).cpu())
    print(f'tokenized {len(codes)} meshes')

    gc.collect()
    torch.cuda.empty_cache()

    transformer = MeshTransformer(
        autoencoder,
        dim=768,
        coarse_pre_gateloop_depth=3,
        fine_pre_gateloop_depth=3,
        attn_depth=12,
        attn_heads=12,
        max_seq_len=1500,
        condition_on_text=False,
    ).to(device)

    trainer = MeshTransformerTrainer(
        model=transformer,
        warmup_steps=10,
        dataset=dataset,
        num_train_steps=args.steps,
        grad_accum_every=4,
        batch_size=args.batch_size // 4,
        learning_rate=1e-4,
        checkpoint_every=2000,
        checkpoint_folder=os.path.join(args.out, 'transformer'),
        accelerator_kwargs={'mixed_precision': 'fp16'},
    )
    trainer()
    trainer.save(os.path.join(args.out, 'mesh-transformer.pt'))

    print(f'max memory allocated: {torch.cuda.max_memory_allocated() / 1024**3:.2f} GB')


if __name__ == '__main__':
    main()
