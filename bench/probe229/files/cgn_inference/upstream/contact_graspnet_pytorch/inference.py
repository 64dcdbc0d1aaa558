"""Run Contact-GraspNet (PyTorch port) on saved RGB-D / point cloud scenes.

Example:
    python contact_graspnet_pytorch/inference.py \
        --np_path="test_data/*.npy" --local_regions --filter_grasps
"""
import glob
import os
import time
import argparse

import torch
import numpy as np

from contact_graspnet_pytorch.contact_grasp_estimator import GraspEstimator
from contact_graspnet_pytorch import config_utils
from contact_graspnet_pytorch.visualization_utils_o3d import visualize_grasps, show_image
from contact_graspnet_pytorch.checkpoints import CheckpointIO
from data import load_available_input_data

# TF32 matmuls are fine for this network (checked against fp32 on the test scenes)
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True


def inference(global_config,
              ckpt_dir,
              input_paths,
              local_regions=True,
              filter_grasps=True,
              skip_border_objects=False,
              z_range=[0.2, 1.8],
              forward_passes=1,
              K=None,
              visualize=True,
              benchmark=False):
    """
    Predict 6-DoF grasp distribution for given model and input data

    :param global_config: config.yaml from checkpoint directory
    :param checkpoint_dir: checkpoint directory
    :param input_paths: .png/.npz/.npy file paths that contain depth/pointcloud and optionally intrinsics/segmentation/rgb
    :param K: Camera Matrix with intrinsics to convert depth to point cloud
    :param local_regions: Crop 3D local regions around given segments.
    :param skip_border_objects: When extracting local_regions, ignore segments at depth map boundary.
    :param filter_grasps: Filter and assign grasp contacts according to segmap.
    :param segmap_id: only return grasps from specified segmap_id.
    :param z_range: crop point cloud at a minimum/maximum z distance from camera to filter out outlier points. Default: [0.2, 1.8] m
    :param forward_passes: Number of forward passes to run on each point cloud. Default: 1
    """
    # Build the model
    grasp_estimator = GraspEstimator(global_config)

    # Load the weights
    model_checkpoint_dir = os.path.join(ckpt_dir, 'checkpoints')
    checkpoint_io = CheckpointIO(checkpoint_dir=model_checkpoint_dir, model=grasp_estimator.model)
    try:
        load_dict = checkpoint_io.load('model.pt', map_location='cuda')
    except FileExistsError:
        print('No model checkpoint found')
        load_dict = {}

    os.makedirs('results', exist_ok=True)

    if benchmark:
        start_evt = torch.cuda.Event(enable_timing=True)
        end_evt = torch.cuda.Event(enable_timing=True)

    # Process example test scenes
    for p in glob.glob(input_paths):
        print('Loading ', p)

        pc_segments = {}
        segmap, rgb, depth, cam_K, pc_full, pc_colors = load_available_input_data(p, K=K)

        if segmap is None and (local_regions or filter_grasps):
            raise ValueError('Need segmentation map to extract local regions or filter grasps')

        if pc_full is None:
            print('Converting depth to point cloud(s)...')
            pc_full, pc_segments, pc_colors = grasp_estimator.extract_point_clouds(depth, cam_K, segmap=segmap, rgb=rgb,
                                                                                    skip_border_objects=skip_border_objects,
                                                                                    z_range=z_range)

        print(pc_full.shape)

        print('Generating Grasps...')
        if benchmark:
            start_evt.record()
        pred_grasps_cam, scores, contact_pts, _ = grasp_estimator.predict_scene_grasps(pc_full,
                                                                                       pc_segments=pc_segments,
                                                                                       local_regions=local_regions,
                                                                                       filter_grasps=filter_grasps,
                                                                                       forward_passes=forward_passes)
        if benchmark:
            end_evt.record()
            torch.cuda.synchronize()
            print('inference time: {:.1f} ms'.format(start_evt.elapsed_time(end_evt)))

        # Save results
        np.savez('results/predictions_{}'.format(os.path.basename(p.replace('png', 'npz').replace('npy', 'npz'))),
                 pred_grasps_cam=pred_grasps_cam, scores=scores, contact_pts=contact_pts)

        # Visualize results
        if visualize:
            # show_image(rgb, segmap)
            visualize_grasps(pc_full, pred_grasps_cam, scores, plot_opencv_cam=True, pc_colors=pc_colors)

    if not glob.glob(input_paths):
        print('No files found: ', input_paths)


if __name__ == "__main__":

    parser = argparse.ArgumentParser()
    parser.add_argument('--ckpt_dir', default='checkpoints/contact_graspnet', help='Log dir')
    parser.add_argument('--np_path', default='test_data/7.npy', help='Input data: npz/npy file with keys either "depth" & camera matrix "K" or just point cloud "pc" in meters. Optionally, a 2D "segmap"')
    parser.add_argument('--K', default=None, help='Flat Camera Matrix, pass as "[fx, 0, cx, 0, fy, cy, 0, 0 ,1]"')
    parser.add_argument('--z_range', default=[0.2, 1.8], help='Z value threshold to crop the input point cloud')
    parser.add_argument('--local_regions', action='store_true', default=True, help='Crop 3D local regions around given segments.')
    parser.add_argument('--filter_grasps', action='store_true', default=True, help='Filter grasp contacts according to segmap.')
    parser.add_argument('--skip_border_objects', action='store_true', default=False, help='When extracting local_regions, ignore segments at depth map boundary.')
    parser.add_argument('--forward_passes', type=int, default=1, help='Run multiple parallel forward passes to mesh_utils more potential contact points.')
    parser.add_argument('--arg_configs', nargs="*", type=str, default=[], help='overwrite config parameters')
    parser.add_argument('--no_vis', action='store_true', help='skip the open3d window (headless GPU nodes)')
    parser.add_argument('--benchmark', action='store_true', help='time the forward pass with CUDA events')
    FLAGS = parser.parse_args()

    global_config = config_utils.load_config(FLAGS.ckpt_dir, batch_size=FLAGS.forward_passes, arg_configs=FLAGS.arg_configs)

    print(str(global_config))
    print('pid: %s' % (str(os.getpid())))

    inference(global_config,
              FLAGS.ckpt_dir,
              FLAGS.np_path,
              local_regions=FLAGS.local_regions,
              filter_grasps=FLAGS.filter_grasps,
              skip_border_objects=FLAGS.skip_border_objects,
              z_range=eval(str(FLAGS.z_range)),
              forward_passes=FLAGS.forward_passes,
              K=eval(str(FLAGS.K)),
              visualize=not FLAGS.no_vis,
              benchmark=FLAGS.benchmark)
