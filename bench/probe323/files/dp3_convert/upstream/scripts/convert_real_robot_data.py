"""
Convert raw real-robot recordings (RealSense L515 point clouds + Franka states) into the
zarr replay buffer used by 3D Diffusion Policy.

    python scripts/convert_real_robot_data.py --root_dir data/real/drill_raw \
        --save_path data/real_drill_40demo_1024.zarr --num_points 1024

Point clouds are cropped to the workspace and down-sampled with farthest point sampling.
FPS over ~300k points per frame is painfully slow on CPU, so by default it runs on the GPU
through pytorch3d.
"""
import os
import argparse
import pickle
import zarr
import numpy as np
import torch
import tqdm
import cv2
import visualizer
from termcolor import cprint
import pytorch3d.ops as torch3d_ops


# workspace bounds in the robot base frame (metres)
WORK_SPACE = [
    [0.08, 0.75],
    [-0.45, 0.45],
    [-0.02, 0.60],
]

# extrinsics of the front camera (camera -> robot base), from our hand-eye calibration
EXTRINSICS_FRONT = np.array([
    [0.0193, -0.8321, 0.5543, -0.0741],
    [-0.9997, -0.0112, 0.0181, 0.4126],
    [-0.0089, -0.5545, -0.8321, 0.7412],
    [0.0, 0.0, 0.0, 1.0],
])


def farthest_point_sampling(points, num_points=1024, use_cuda=True):
    K = [num_points]
    if use_cuda:
        points = torch.from_numpy(points).cuda()
        sampled_points, indices = torch3d_ops.sample_farthest_points(points=points.unsqueeze(0), K=K)
        sampled_points = sampled_points.squeeze(0)
        sampled_points = sampled_points.cpu().numpy()
    else:
        points = torch.from_numpy(points)
        sampled_points, indices = torch3d_ops.sample_farthest_points(points=points.unsqueeze(0), K=K)
        sampled_points = sampled_points.squeeze(0)
        sampled_points = sampled_points.numpy()

    return sampled_points, indices


def preprocess_point_cloud(points, num_points=1024, use_cuda=True):
    extrinsics_matrix = EXTRINSICS_FRONT

    point_xyz = points[..., :3] * 0.0002500000118743628
    point_homogeneous = np.hstack((point_xyz, np.ones((point_xyz.shape[0], 1))))
    point_homogeneous = np.dot(point_homogeneous, extrinsics_matrix)
    point_xyz = point_homogeneous[..., :-1]
    points[..., :3] = point_xyz

    # crop
    points = points[np.where((points[..., 0] > WORK_SPACE[0][0]) & (points[..., 0] < WORK_SPACE[0][1]) &
                             (points[..., 1] > WORK_SPACE[1][0]) & (points[..., 1] < WORK_SPACE[1][1]) &
                             (points[..., 2] > WORK_SPACE[2][0]) & (points[..., 2] < WORK_SPACE[2][1]))]

    points_xyz = points[..., :3]
    points_xyz, sample_indices = farthest_point_sampling(points_xyz, num_points, use_cuda)
    sample_indices = sample_indices.cpu()
    points_rgb = points[sample_indices, 3:][0]
    points = np.hstack((points_xyz, points_rgb))
    return points


def preprocess_image(image, img_size=84):
    image = image.astype(np.float32)
    image = torch.from_numpy(image)
    image = image.permute(2, 0, 1)  # HxWx4 -> 4xHxW
    image = torch.nn.functional.interpolate(image.unsqueeze(0), size=(img_size, img_size),
                                            mode='bilinear', align_corners=False)
    image = image.squeeze(0)
    image = image.permute(1, 2, 0)
    image = image.numpy()
    return image


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--root_dir', type=str, default='data/real/drill_raw')
    parser.add_argument('--save_path', type=str, default='data/real_drill.zarr')
    parser.add_argument('--num_points', type=int, default=1024)
    parser.add_argument('--img_size', type=int, default=84)
    parser.add_argument('--no_cuda', action='store_true',
                        help='run farthest point sampling on CPU (slow)')
    parser.add_argument('--visualize', action='store_true')
    return parser.parse_args()


def main():
    args = parse_args()
    use_cuda = (not args.no_cuda) and torch.cuda.is_available()

    if os.path.exists(args.save_path):
        cprint(f'Data already exists at {args.save_path}', 'red')
        cprint("If you want to overwrite, delete the existing directory first.", "red")
        cprint("Do you want to overwrite? (y/n)", "red")
        user_input = input()
        if user_input == 'y':
            cprint('Overwriting {}'.format(args.save_path), 'red')
            os.system('rm -rf {}'.format(args.save_path))
        else:
            cprint('Exiting', 'red')
            return
    os.makedirs(args.save_path, exist_ok=True)

    demo_dirs = [os.path.join(args.root_dir, d, 'demo.pkl') for d in sorted(os.listdir(args.root_dir))]

    img_arrays = []
    point_cloud_arrays = []
    depth_arrays = []
    state_arrays = []
    action_arrays = []
    episode_ends_arrays = []
    total_count = 0

    for demo_dir in demo_dirs:
        cprint('Processing {}'.format(demo_dir), 'green')
        with open(demo_dir, 'rb') as f:
            demo = pickle.load(f)

        pcd_dirs = demo['point_cloud']
        demo_length = len(pcd_dirs)

        for step_idx in tqdm.tqdm(range(demo_length)):
            total_count += 1
            obs_image = demo['image'][step_idx]
            obs_depth = demo['depth'][step_idx]
            obs_image = preprocess_image(obs_image, args.img_size)
            obs_depth = preprocess_image(np.expand_dims(obs_depth, axis=-1), args.img_size).squeeze(-1)
            obs_pointcloud = demo['point_cloud'][step_idx]
            robot_state = demo['agent_pos'][step_idx]
            action = demo['action'][step_idx]

            obs_pointcloud = preprocess_point_cloud(obs_pointcloud, args.num_points, use_cuda=use_cuda)

            if args.visualize:
                visualizer.visualize_pointcloud(obs_pointcloud)

            img_arrays.append(obs_image)
            action_arrays.append(action)
            point_cloud_arrays.append(obs_pointcloud)
            depth_arrays.append(obs_depth)
            state_arrays.append(robot_state)

        episode_ends_arrays.append(total_count)

    # create zarr file
    zarr_root = zarr.group(args.save_path)
    zarr_data = zarr_root.create_group('data')
    zarr_meta = zarr_root.create_group('meta')

    img_arrays = np.stack(img_arrays, axis=0)
    if img_arrays.shape[1] == 3:  # make channel last
        img_arrays = np.transpose(img_arrays, (0, 2, 3, 1))
    point_cloud_arrays = np.stack(point_cloud_arrays, axis=0)
    depth_arrays = np.stack(depth_arrays, axis=0)
    action_arrays = np.stack(action_arrays, axis=0)
    state_arrays = np.stack(state_arrays, axis=0)
    episode_ends_arrays = np.array(episode_ends_arrays)

    compressor = zarr.Blosc(cname='zstd', clevel=3, shuffle=1)
    img_chunk_size = (100, img_arrays.shape[1], img_arrays.shape[2], img_arrays.shape[3])
    point_cloud_chunk_size = (100, point_cloud_arrays.shape[1], point_cloud_arrays.shape[2])
    depth_chunk_size = (100, depth_arrays.shape[1], depth_arrays.shape[2])
    if len(action_arrays.shape) == 2:
        action_chunk_size = (100, action_arrays.shape[1])
    elif len(action_arrays.shape) == 3:
        action_chunk_size = (100, action_arrays.shape[1], action_arrays.shape[2])
    else:
        raise NotImplementedError
    zarr_data.create_dataset('img', data=img_arrays, chunks=img_chunk_size, dtype='uint8', overwrite=True, compressor=compressor)
    zarr_data.create_dataset('state', data=state_arrays, chunks=(100, state_arrays.shape[1]), dtype='float32', overwrite=True, compressor=compressor)
    zarr_data.create_dataset('point_cloud', data=point_cloud_arrays, chunks=point_cloud_chunk_size, dtype='float64', overwrite=True, compressor=compressor)
    zarr_data.create_dataset('depth', data=depth_arrays, chunks=depth_chunk_size, dtype='float64', overwrite=True, compressor=compressor)
    zarr_data.create_dataset('action', data=action_arrays, chunks=action_chunk_size, dtype='float32', overwrite=True, compressor=compressor)
    zarr_meta.create_dataset('episode_ends', data=episode_ends_arrays, dtype='int64', overwrite=True, compressor=compressor)

    cprint(f'-' * 50, 'cyan')
    # print shape
    cprint(f'img shape: {img_arrays.shape}, range: [{np.min(img_arrays)}, {np.max(img_arrays)}]', 'green')
    cprint(f'point_cloud shape: {point_cloud_arrays.shape}, range: [{np.min(point_cloud_arrays)}, {np.max(point_cloud_arrays)}]', 'green')
    cprint(f'depth shape: {depth_arrays.shape}, range: [{np.min(depth_arrays)}, {np.max(depth_arrays)}]', 'green')
    cprint(f'state shape: {state_arrays.shape}, range: [{np.min(state_arrays)}, {np.max(state_arrays)}]', 'green')
    cprint(f'action shape: {action_arrays.shape}, range: [{np.min(action_arrays)}, {np.max(action_arrays)}]', 'green')
    cprint(f'Saved zarr file to {args.save_path}', 'green')

    # clean up
    del img_arrays, state_arrays, point_cloud_arrays, action_arrays, episode_ends_arrays
    del zarr_root, zarr_data, zarr_meta


if __name__ == '__main__':
    main()
