"""Point cloud (or mesh) -> CadQuery code -> STEP/STL with a pretrained CAD-Recode checkpoint.

    python inference.py --input demo/meshes --output results/ --checkpoint filapro/cad-recode-v1.5
"""
import os
import argparse
import subprocess
import tempfile
import numpy as np
import torch
import trimesh
from glob import glob
from tqdm import tqdm
from transformers import AutoTokenizer
from pytorch3d.ops import sample_farthest_points
from cad_recode.model import CADRecode

device = 'cuda' if torch.cuda.is_available() else 'cpu'
NUM_POINTS = 256


def mesh_to_point_cloud(mesh, n_points=NUM_POINTS, n_pre_points=8192):
    vertices, faces = trimesh.sample.sample_surface(mesh, n_pre_points)
    _, ids = sample_farthest_points(torch.tensor(vertices).unsqueeze(0), K=n_points)
    ids = ids[0].numpy()
    return np.asarray(vertices[ids])


def normalize_mesh(mesh):
    mesh.apply_translation(-(mesh.bounds[0] + mesh.bounds[1]) / 2.0)
    mesh.apply_scale(2.0 / max(mesh.extents))
    return mesh


def load_model(checkpoint):
    tokenizer = AutoTokenizer.from_pretrained(
        'Qwen/Qwen2-1.5B',
        pad_token='<|im_end|>',
        padding_side='left')
    model = CADRecode.from_pretrained(
        checkpoint,
        torch_dtype='auto',
        attn_implementation='flash_attention_2').eval().to(device)
    return tokenizer, model


@torch.no_grad()
def point_cloud_to_code(points, tokenizer, model, max_new_tokens=768):
    input_ids = [tokenizer.pad_token_id] * len(points) + [tokenizer('<|im_start|>')['input_ids'][0]]
    attention_mask = [-1] * len(points) + [1]
    batch_ids = model.generate(
        input_ids=torch.tensor(input_ids).unsqueeze(0).to(model.device),
        attention_mask=torch.tensor(attention_mask).unsqueeze(0).to(model.device),
        point_cloud=torch.tensor(points.astype(np.float32)).unsqueeze(0).to(model.device),
        max_new_tokens=max_new_tokens,
        pad_token_id=tokenizer.pad_token_id)
    py_string = tokenizer.batch_decode(batch_ids)[0]
    begin = py_string.find('<|im_start|>') + 12
    end = py_string.find('<|endoftext|>')
    return py_string[begin:end]


def execute_code(py_string, out_prefix, timeout=30):
    """run the generated CadQuery script in a subprocess (it may hang or crash)"""
    script = py_string + f"\nimport cadquery as cq\ncq.exporters.export(r, '{out_prefix}.step')\n" \
                         f"cq.exporters.export(r, '{out_prefix}.stl')\n"
    with tempfile.NamedTemporaryFile('w', suffix='.py', delete=False) as f:
        f.write(script)
        path = f.name
    try:
        subprocess.run(['python', path], timeout=timeout, check=True, capture_output=True)
        return True
    except (subprocess.TimeoutExpired, subprocess.CalledProcessError):
        return False
    finally:
        os.remove(path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--input', type=str, required=True, help='folder with .stl/.obj meshes or .npy point clouds')
    parser.add_argument('--output', type=str, required=True)
    parser.add_argument('--checkpoint', type=str, default='filapro/cad-recode-v1.5')
    parser.add_argument('--max_new_tokens', type=int, default=768)
    args = parser.parse_args()

    os.makedirs(args.output, exist_ok=True)
    tokenizer, model = load_model(args.checkpoint)
    print(f'Loaded {args.checkpoint} on {torch.cuda.get_device_name(0)}')

    files = sorted(glob(os.path.join(args.input, '*')))
    n_valid = 0
    for path in tqdm(files):
        name = os.path.splitext(os.path.basename(path))[0]
        if path.endswith('.npy'):
            points = np.load(path)
        else:
            mesh = normalize_mesh(trimesh.load_mesh(path))
            points = mesh_to_point_cloud(mesh)
        code = point_cloud_to_code(points, tokenizer, model, args.max_new_tokens)
        with open(os.path.join(args.output, name + '.py'), 'w') as f:
            f.write(code)
        n_valid += execute_code(code, os.path.join(args.output, name))

    print(f'{n_valid}/{len(files)} generated programs executed successfully')
    print(f'peak GPU memory: {torch.cuda.max_memory_allocated() / 2 ** 30:.2f} GB')


if __name__ == '__main__':
    main()
