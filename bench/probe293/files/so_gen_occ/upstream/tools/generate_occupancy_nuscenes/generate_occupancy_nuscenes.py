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
from argparse import ArgumentParser

import open3d as o3d
from pyquaternion import Quaternion
from nuscenes.nuscenes import NuScenes
from nuscenes.utils import splits
from nuscenes.utils.data_classes import LidarPointCloud
from nuscenes.utils.geometry_utils import view_points
from mmdet3d.core.bbox import box_np_ops
from scipy.spatial.transform import Rotation


def run_poisson(pcd, depth, n_threads, min_density=None):
    mesh, densities = o3d.geometry.TriangleMesh.create_from_point_cloud_poisson(
        pcd, depth=depth, n_threads=n_threads
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

    cloud = copy_pcd(pcd)
    if normals:
        params = o3d.geometry.KDTreeSearchParamKNN(max_nn)
        cloud.estimate_normals(params)
        cloud.orient_normals_towards_camera_location()

    return cloud


def copy_pcd(pcd):
    cloud = o3d.geometry.PointCloud()
    cloud.points = o3d.utility.Vector3dVector(np.asarray(pcd.points))
    if pcd.has_normals():
        cloud.normals = o3d.utility.Vector3dVector(np.asarray(pcd.normals))
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
    import open3d as o3d

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
                            cam_calibrated_sensor, cam_ego_pose):

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


def assign_semantics(dense_voxels, point_cloud_with_semantic):
    """Give every dense (meshed) voxel the label of its nearest annotated
    lidar point. Runs the chamfer kernel on the GPU: ~40x faster than the
    open3d KD-tree loop above for 1M+ voxels."""
    x = torch.from_numpy(dense_voxels).cuda().unsqueeze(0).float()
    y = torch.from_numpy(point_cloud_with_semantic[:, :3]).cuda().unsqueeze(0).float()
    d1, d2, idx1, idx2 = chamfer.forward(x, y)
    indices = idx1[0].cpu().numpy()

    dense_semantic = point_cloud_with_semantic[:, 3][np.array(indices)]
    dense_voxels_with_semantic = np.concatenate([dense_voxels, dense_semantic[:, np.newaxis]], axis=1)
    return dense_voxels_with_semantic


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

    i = 0
    while True:
        ############################# get boxes ##########################
        lidar_path, boxes, _ = nusc.get_sample_data(lidar_data['token'])
        boxes_token = [box.token for box in boxes]
        object_tokens = [nusc.get('sample_annotation', box_token)['instance_token'] for box_token in boxes_token]
        object_category = [nusc.get('sample_annotation', box_token)['category_name'] for box_token in boxes_token]

        ############################# get object categories ##########################
        converted_object_category = []
        for category in object_category:
            for (j, label) in enumerate(nuscenesyaml['labels']):
                if category == nuscenesyaml['labels'][label]:
                    converted_object_category.append(np.vectorize(learning_map.__getitem__)(label).item())

        ############################# get bbox attributes ##########################
        locs = np.array([b.center for b in boxes]).reshape(-1, 3)
        dims = np.array([b.wlh for b in boxes]).reshape(-1, 3)
        rots = np.array([b.orientation.yaw_pitch_roll[0]
                         for b in boxes]).reshape(-1, 1)
        gt_bbox_3d = np.concatenate([locs, dims, rots], axis=1).astype(np.float32)
        gt_bbox_3d[:, 6] += np.pi / 2.
        gt_bbox_3d[:, 2] -= dims[:, 2] / 2.
        gt_bbox_3d[:, 2] = gt_bbox_3d[:, 2] - 0.1  # Move the bbox slightly down in the z direction
        gt_bbox_3d[:, 3:6] = gt_bbox_3d[:, 3:6] * 1.1  # Slightly expand the bbox to wrap all object points

        ############################# get LiDAR points with semantics ##########################
        pc_file_name = lidar_data['filename']  # load LiDAR names
        pc0 = np.fromfile(os.path.join(data_root, pc_file_name),
                          dtype=np.float32,
                          count=-1).reshape(-1, 5)[..., :4]
        if lidar_data['is_key_frame']:  # only key frame has semantic annotations
            lidar_sd_token = lidar_data['token']
            lidarseg_labels_filename = os.path.join(nusc.dataroot,
                                                    nusc.get('lidarseg', lidar_sd_token)['filename'])

            points_label = np.fromfile(lidarseg_labels_filename, dtype=np.uint8).reshape([-1, 1])
            points_label = np.vectorize(learning_map.__getitem__)(points_label)

            pc_with_semantic = np.concatenate([pc0[:, :3], points_label], axis=1)

        ############################# cut out movable object points and masks ##########################
        points_in_boxes = box_np_ops.points_in_rbbox(pc0[:, :3], gt_bbox_3d)
        object_points_list = []
        j = 0
        while j < points_in_boxes.shape[-1]:
            object_points_mask = points_in_boxes[:, j][np.newaxis, :]
            object_points = pc0[object_points_mask.squeeze(0)]
            object_points_list.append(object_points)
            j = j + 1

        moving_mask = np.ones_like(points_in_boxes)
        points_in_boxes = np.sum(points_in_boxes * moving_mask, axis=-1).astype(bool)
        points_mask = ~(points_in_boxes)

        dict_list.append(dict(pc=pc0[points_mask], object_points_list=object_points_list,
                              gt_bbox_3d=gt_bbox_3d, converted_object_category=converted_object_category,
                              pc_with_semantic=pc_with_semantic if lidar_data['is_key_frame'] else None,
                              is_key_frame=lidar_data['is_key_frame'], lidar_token=lidar_data['token']))

        i = i + 1
        if lidar_data['next'] != '':
            lidar_data = nusc.get('sample_data', lidar_data['next'])
        else:
            break

    ################## aggregate + mesh + voxelize, key frames only ##############
    for frame in dict_list:
        if not frame['is_key_frame']:
            continue
        point_cloud = frame['pc'][:, :3]
        pcd = o3d.geometry.PointCloud()
        pcd.points = o3d.utility.Vector3dVector(point_cloud)
        pcd = preprocess(pcd, config)
        mesh, _ = create_mesh_from_map(None, config['depth'], config['n_threads'],
                                       config['min_density'], pcd)
        points = np.asarray(mesh.vertices)
        pcd.points = o3d.utility.Vector3dVector(points)
        voxel = o3d.geometry.VoxelGrid.create_from_point_cloud(pcd, voxel_size=voxel_size)
        voxels = np.array([v.grid_index for v in voxel.get_voxels()]).astype(np.float64)
        dense_voxels = voxels * voxel_size + np.array(pc_range[:3])

        if args.with_semantic:
            occ = assign_semantics(dense_voxels, frame['pc_with_semantic'])
        else:
            occ = np.concatenate([dense_voxels, np.ones((len(dense_voxels), 1))], axis=1)

        occ[:, :3] = (occ[:, :3] - np.array(pc_range[:3])) / voxel_size
        occ = occ[(occ[:, 0] >= 0) & (occ[:, 0] < occ_size[0]) &
                  (occ[:, 1] >= 0) & (occ[:, 1] < occ_size[1]) &
                  (occ[:, 2] >= 0) & (occ[:, 2] < occ_size[2])]
        dirs = os.path.join(save_path, 'dense_voxels_with_semantic')
        os.makedirs(dirs, exist_ok=True)
        np.save(os.path.join(dirs, frame['lidar_token'] + '.npy'), occ.astype(np.float32))

    # the chamfer kernel caches large workspaces; free them between scenes
    torch.cuda.empty_cache()


if __name__ == '__main__':
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
    parse.add_argument('--with_semantic', action='store_true')
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
