import os
import sys
import pdb
import time
import yaml
import torch
import chamfer
import mmcv
import numpy as np
from tqdm import tqdm
from nuscenes.nuscenes import NuScenes
from nuscenes.utils import splits
from nuscenes.utils.geometry_utils import transform_matrix
from pyquaternion import Quaternion
from mmdet3d.core.bbox import box_np_ops
from scipy.spatial.transform import Rotation
import open3d as o3d
from copy import deepcopy
from argparse import ArgumentParser


def run_poisson(pcd, depth, n_threads, min_density=None):
    mesh, densities = o3d.geometry.TriangleMesh.create_from_point_cloud_poisson(
        pcd, depth=depth, n_threads=8
    )

    # Post-process the mesh
    if min_density:
        vertices_to_remove = densities < np.quantile(densities, min_density)
        mesh.remove_vertices_by_mask(vertices_to_remove)
    mesh.compute_vertex_normals()

    return mesh, densities


def create_mesh_from_map(buffer, depth, n_threads, min_density=None, point_cloud_original=None):

    if point_cloud_original is None:
        pcd = buffer_to_pointcloud(buffer)
    else:
        pcd = point_cloud_original

    return run_poisson(pcd, depth, n_threads, min_density)


def buffer_to_pointcloud(buffer, compute_normals=False):
    pcd = o3d.geometry.PointCloud()
    for cloud in buffer:
        pcd += cloud
    if compute_normals:
        pcd.estimate_normals()

    return pcd


def preprocess_cloud(
    pcd,
    max_nn=20,
    normals=None,
):

    cloud = deepcopy(pcd)
    if normals:
        params = o3d.geometry.KDTreeSearchParamKNN(max_nn)
        cloud.estimate_normals(params)
        cloud.orient_normals_towards_camera_location()

    return cloud


def preprocess(pcd, config):
    return preprocess_cloud(
        pcd,
        config['max_nn'],
        normals=True
    )


def nn_correspondance(verts1, verts2):
    """ for each vertex in verts2 find the nearest vertex in verts1

        Args:
            nx3 np.array's
        Returns:
            ([indices], [distances])

    """
    indices = []
    distances = []
    if len(verts1) == 0 or len(verts2) == 0:
        return indices, distances

    pcd = o3d.geometry.PointCloud()
    pcd.points = o3d.utility.Vector3dVector(verts1)
    kdtree = o3d.geometry.KDTreeFlann(pcd)

    for vert in verts2:
        _, inds, dist = kdtree.search_knn_vector_3d(vert, 1)
        indices.append(inds[0])
        distances.append(np.sqrt(dist[0]))

    return indices, distances


def lidar_to_world_to_lidar(pc, lidar_calibrated_sensor, lidar_ego_pose,
                            cam_calibrated_sensor,
                            cam_ego_pose):

    pc = LidarPointCloud(pc.T)
    pc.rotate(Quaternion(lidar_calibrated_sensor['rotation']).rotation_matrix)
    pc.translate(np.array(lidar_calibrated_sensor['translation']))

    pc.rotate(Quaternion(lidar_ego_pose['rotation']).rotation_matrix)
    pc.translate(np.array(lidar_ego_pose['translation']))

    pc.translate(-np.array(cam_ego_pose['translation']))
    pc.rotate(Quaternion(cam_ego_pose['rotation']).rotation_matrix.T)

    pc.translate(-np.array(cam_calibrated_sensor['translation']))
    pc.rotate(Quaternion(cam_calibrated_sensor['rotation']).rotation_matrix.T)

    return pc


def voxelize_scene(points, pc_range, voxel_size, occ_size):
    points[:, 0] = (points[:, 0] - pc_range[0]) / voxel_size
    points[:, 1] = (points[:, 1] - pc_range[1]) / voxel_size
    points[:, 2] = (points[:, 2] - pc_range[2]) / voxel_size
    points = np.floor(points).astype(np.int32)
    keep = (points[:, 0] >= 0) & (points[:, 0] < occ_size[0]) & \
        (points[:, 1] >= 0) & (points[:, 1] < occ_size[1]) & \
        (points[:, 2] >= 0) & (points[:, 2] < occ_size[2])
    return points[keep]


def semantic_from_nearest(dense_voxels, pcd_np_cor, pcd_label):
    """Assign each dense voxel the label of its nearest labelled lidar point.

    Uses the chamfer CUDA extension (compiled from ChamferDistancePytorch),
    which returns, for every point of x, the index of its nearest neighbour in y.
    """
    x = torch.from_numpy(dense_voxels).cuda().unsqueeze(0).float()
    y = torch.from_numpy(pcd_np_cor).cuda().unsqueeze(0).float()
    d1, d2, idx1, idx2 = chamfer.forward(x, y)
    indices = idx1[0].cpu().numpy()

    dense_semantic = pcd_label[:, 0][np.array(indices)]
    dense_voxels_with_semantic = np.concatenate([dense_voxels, dense_semantic[:, np.newaxis]], axis=1)

    # to voxel coordinate
    return dense_voxels_with_semantic.astype(int)


def main(nusc, val_list, indice, nuscenesyaml, args, config):

    save_path = args.save_path
    data_root = args.dataroot
    learning_map = nuscenesyaml['learning_map']
    voxel_size = config['voxel_size']
    pc_range = config['pc_range']
    occ_size = config['occ_size']

    my_scene = nusc.scene[indice]
    sensor = 'LIDAR_TOP'

    if args.split == 'train':
        if my_scene['token'] in val_list:
            return
    elif args.split == 'val':
        if my_scene['token'] not in val_list:
            return
    elif args.split == 'all':
        pass
    else:
        raise NotImplementedError

    # load the first sample from a scene to start
    first_sample_token = my_scene['first_sample_token']
    my_sample = nusc.get('sample', first_sample_token)
    lidar_data = nusc.get('sample_data', my_sample['data'][sensor])
    lidar_ego_pose0 = nusc.get('ego_pose', lidar_data['ego_pose_token'])
    lidar_calibrated_sensor0 = nusc.get('calibrated_sensor', lidar_data['calibrated_sensor_token'])

    # collect LiDAR sequence
    dict_list = []

    while True:
        # (long aggregation of static / dynamic points across the scene omitted
        #  here; it is plain numpy and open3d code)
        break

    for i in tqdm(range(len(dict_list)), desc='frames'):
        dict = dict_list[i]
        pc = dict['pc']
        pcd_np_cor = voxelize_scene(pc[:, :3].copy(), pc_range, voxel_size, occ_size)

        if args.to_mesh:
            pcd = o3d.geometry.PointCloud()
            pcd.points = o3d.utility.Vector3dVector(pc[:, :3])
            pcd = preprocess(pcd, config)
            mesh, _ = create_mesh_from_map(None, config['depth'], config['n_threads'],
                                           config['min_density'], pcd)
            dense_points = np.asarray(mesh.vertices, dtype=float)
        else:
            dense_points = pc[:, :3]

        dense_voxels = voxelize_scene(dense_points.copy(), pc_range, voxel_size, occ_size)
        dense_voxels = np.unique(dense_voxels, axis=0)

        if args.with_semantic:
            pcd_label = dict['pc_label']
            dense_voxels_with_semantic = semantic_from_nearest(dense_voxels, pcd_np_cor, pcd_label)
        else:
            dense_voxels_with_semantic = dense_voxels

        dirs = os.path.join(save_path, 'dense_voxels_with_semantic/')
        if not os.path.exists(dirs):
            os.makedirs(dirs)
        np.save(os.path.join(dirs, dict['pc_file_name'] + '.npy'), dense_voxels_with_semantic)

        i = i + 1
        continue


def save_ply(points, name):
    point_cloud_original = o3d.geometry.PointCloud()
    point_cloud_original.points = o3d.utility.Vector3dVector(points[:, :3])
    o3d.io.write_point_cloud("{}.ply".format(name), point_cloud_original)


if __name__ == '__main__':
    from nuscenes.utils.data_classes import LidarPointCloud
    parse = ArgumentParser()

    parse.add_argument('--dataset', type=str, default='nuscenes')
    parse.add_argument('--config_path', type=str, default='config.yaml')
    parse.add_argument('--split', type=str, default='train')
    parse.add_argument('--save_path', type=str, default='./data/GT_occupancy/')
    parse.add_argument('--start', type=int, default=0)
    parse.add_argument('--end', type=int, default=850)
    parse.add_argument('--dataroot', type=str, default='./data/nuScenes/')
    parse.add_argument('--nusc_val_list', type=str, default='./nuscenes_val_list.txt')
    parse.add_argument('--label_mapping', type=str, default='nuscenes.yaml')
    parse.add_argument('--to_mesh', action='store_true', default=False)
    parse.add_argument('--with_semantic', action='store_true', default=False)
    args = parse.parse_args()

    if args.dataset == 'nuscenes':
        val_list = []
        with open(args.nusc_val_list, 'r') as file:
            for item in file:
                val_list.append(item[:-1])
        file.close()

        nusc = NuScenes(version='v1.0-trainval',
                        dataroot=args.dataroot,
                        verbose=True)
        train_scenes = splits.train
        val_scenes = splits.val
    else:
        raise NotImplementedError

    # load config
    with open(args.config_path, 'r') as stream:
        config = yaml.safe_load(stream)

    # load learning map
    label_mapping = args.label_mapping
    with open(label_mapping, 'r') as stream:
        nuscenesyaml = yaml.safe_load(stream)

    for i in range(args.start, args.end):
        print('processing sequecne:', i)
        main(nusc, val_list, indice=i,
             nuscenesyaml=nuscenesyaml, args=args, config=config)
