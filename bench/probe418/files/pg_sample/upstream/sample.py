"""
Sample meshes from trained PolyGen vertex + face models.

    python sample.py --config configs/polygen_shapenet.yaml \
        --vertex_ckpt runs/polygen/vertex_final.pt --face_ckpt runs/polygen/face_final.pt \
        --num_samples 16 --out samples/
"""

import argparse
import os

import numpy as np
import yaml
import torch

from polygen.modules import VertexModel, FaceModel
from polygen.data_utils import write_obj, unflatten_faces

parser = argparse.ArgumentParser()
parser.add_argument('--config', type=str, default='configs/polygen_shapenet.yaml')
parser.add_argument('--vertex_ckpt', type=str, required=True)
parser.add_argument('--face_ckpt', type=str, required=True)
parser.add_argument('--num_samples', type=int, default=16)
parser.add_argument('--class_label', type=int, default=None)
parser.add_argument('--top_p', type=float, default=0.9)
parser.add_argument('--out', type=str, default='samples')
args = parser.parse_args()

with open(args.config) as f:
    cfg = yaml.safe_load(f)
device = torch.device(cfg.get('device', 'cuda'))


def load(model, path):
    ckpt = torch.load(path, map_location='cpu')
    model.load_state_dict(ckpt['model'])
    return model.to(device).eval()


vertex_model = load(VertexModel(
    decoder_config=cfg['vertex_decoder'],
    quantization_bits=cfg['quantization_bits'],
    class_conditional=cfg['class_conditional'],
    num_classes=cfg['num_classes'],
    max_num_input_verts=cfg['max_num_input_verts'],
), args.vertex_ckpt)

face_model = load(FaceModel(
    encoder_config=cfg['face_encoder'],
    decoder_config=cfg['face_decoder'],
    class_conditional=False,
    max_seq_length=cfg['max_num_face_indices'],
    quantization_bits=cfg['quantization_bits'],
    max_num_input_verts=cfg['max_num_input_verts'],
    decoder_cross_attention=True,
), args.face_ckpt)

context = None
if cfg['class_conditional']:
    label = args.class_label if args.class_label is not None else 0
    context = {'class_label': torch.full((args.num_samples,), label, dtype=torch.long, device=device)}

starter = torch.cuda.Event(enable_timing=True)
ender = torch.cuda.Event(enable_timing=True)
starter.record()

vertex_samples = vertex_model.sample(
    args.num_samples, context=context, max_sample_length=cfg['max_num_input_verts'],
    top_p=args.top_p, recenter_verts=True, only_return_complete=False)
face_samples = face_model.sample(
    vertex_samples, max_sample_length=cfg['max_num_face_indices'],
    top_p=args.top_p, only_return_complete=False)

ender.record()
torch.cuda.synchronize()
print('sampling took %.1f ms for %d meshes' % (starter.elapsed_time(ender), args.num_samples))

os.makedirs(args.out, exist_ok=True)
n_ok = 0
for i in range(args.num_samples):
    if not (vertex_samples['completed'][i] and face_samples['completed'][i]):
        continue
    nv = int(vertex_samples['num_vertices'][i])
    verts = vertex_samples['vertices'][i, :nv].cpu().numpy()
    flat_faces = face_samples['faces'][i].cpu().numpy() + 1
    faces = unflatten_faces(np.concatenate([flat_faces, [0]]).astype(np.int64))
    write_obj(verts, faces, os.path.join(args.out, f'sample_{i:03d}.obj'))
    n_ok += 1
print(f'wrote {n_ok}/{args.num_samples} complete meshes to {args.out}')
