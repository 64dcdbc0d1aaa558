"""
Script version of point_e/examples/pointcloud2mesh.ipynb.

Turns a sampled point cloud into a mesh with the SDF regression model
and marching cubes, and writes it out as a PLY file.
"""

import argparse
import os

import torch
import matplotlib.pyplot as plt
from tqdm.auto import tqdm

from point_e.models.download import load_checkpoint
from point_e.models.configs import MODEL_CONFIGS, model_from_config
from point_e.util.pc_to_mesh import marching_cubes_mesh
from point_e.util.plotting import plot_point_cloud
from point_e.util.point_cloud import PointCloud

parser = argparse.ArgumentParser()
parser.add_argument('--pc', type=str, default='example_data/pc_corgi.npz')
parser.add_argument('--out', type=str, default='mesh.ply')
parser.add_argument('--grid_size', type=int, default=32, help='increase to 128 for resolution used in evals')
parser.add_argument('--gpu', type=int, default=0)
args = parser.parse_args()

device = torch.device(f'cuda:{args.gpu}')
torch.backends.cudnn.benchmark = True

print('creating SDF model...')
name = 'sdf'
model = model_from_config(MODEL_CONFIGS[name], device)
model.eval()

print('loading SDF model...')
model.load_state_dict(load_checkpoint(name, device))

# Load a point cloud we want to convert into a mesh.
pc = PointCloud.load(args.pc)

# Plot the point cloud as a sanity check.
fig = plot_point_cloud(pc, grid_size=2)
fig.savefig(os.path.splitext(args.out)[0] + '_pc.png')
plt.close(fig)

# Produce a mesh (with vertex colors)
start = torch.cuda.Event(enable_timing=True)
end = torch.cuda.Event(enable_timing=True)
start.record()
mesh = marching_cubes_mesh(
    pc=pc,
    model=model,
    batch_size=4096,
    grid_size=args.grid_size,
    progress=True,
)
end.record()
torch.cuda.synchronize()
print(f'marching cubes took {start.elapsed_time(end) / 1000:.2f}s, '
      f'peak memory {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB')

# Write the mesh to a PLY file to import into some other program.
with open(args.out, 'wb') as f:
    mesh.write_ply(f)
print(f'wrote {args.out}')
