import os
import json
import argparse
import numpy as np
import open3d as o3d
import torch
from tqdm import tqdm
from torch.utils.data import DataLoader

from spann3r.model import Spann3R
from spann3r.datasets import *
from spann3r.tools.eval_recon import accuracy, completion
from spann3r.tools.vis import render_frames, find_render_cam
from spann3r.tools.utils import umeyama_alignment


def get_args_parser():
    parser = argparse.ArgumentParser('Spann3R evaluation', add_help=False)
    parser.add_argument('--exp_path', type=str, default='./output/eval', help='Path to experiment folder')
    parser.add_argument('--exp_name', type=str, default='ckpt_best', help='Experiment name')
    parser.add_argument('--ckpt', type=str, default='./checkpoints/spann3r.pth', help='Checkpoint path')
    parser.add_argument('--scene_id', type=str, default=None, help='Scene ID')
    parser.add_argument('--device', type=str, default='cuda', help='Device')
    parser.add_argument('--conf_thresh', type=float, default=0.0, help='Confidence threshold')
    parser.add_argument('--kf_every', type=int, default=10, help='Keyframe frequency')
    parser.add_argument('--icp', action='store_true', help='Use ICP to refine the alignment')
    parser.add_argument('--save_pcd', action='store_true', help='Save the point clouds')
    return parser


def register_icp(pred, gt, threshold=0.1):
    pcd_pred = o3d.geometry.PointCloud()
    pcd_pred.points = o3d.utility.Vector3dVector(pred)
    pcd_gt = o3d.geometry.PointCloud()
    pcd_gt.points = o3d.utility.Vector3dVector(gt)
    trans_init = np.eye(4)
    reg_p2p = o3d.pipelines.registration.registration_icp(
        pcd_pred, pcd_gt, threshold, trans_init,
        o3d.pipelines.registration.TransformationEstimationPointToPoint())
    return reg_p2p.transformation


@torch.no_grad()
def main(args):
    workspace = os.path.join(args.exp_path, args.exp_name)
    os.makedirs(workspace, exist_ok=True)

    datasets_all = {
        '7scenes': SevenScenes(split='test', ROOT='./data/7scenes', resolution=224, num_seq=1,
                               full_video=True, kf_every=args.kf_every),
        'NRGBD': NRGBD(split='test', ROOT='./data/neural_rgbd', resolution=224, num_seq=1,
                       full_video=True, kf_every=args.kf_every),
        'DTU': DTU(split='test', ROOT='./data/dtu_test', resolution=224, num_seq=1,
                   full_video=True, kf_every=5),
    }

    model = Spann3R(dus3r_name='./checkpoints/DUSt3R_ViTLarge_BaseDecoder_512_dpt.pth',
                    use_feat=False).to(args.device)
    model.load_state_dict(torch.load(args.ckpt, map_location='cpu')['model'])
    model.eval()

    for name_data, dataset in datasets_all.items():
        save_path = os.path.join(workspace, name_data)
        os.makedirs(save_path, exist_ok=True)
        log_file = os.path.join(save_path, 'logs.txt')

        acc_all = 0
        acc_all_med = 0
        comp_all = 0
        comp_all_med = 0
        nc1_all = 0
        fps_all = []
        time_all = []

        dataloader = DataLoader(dataset, batch_size=1, shuffle=False, num_workers=0)

        with torch.no_grad():
            for i, batch in tqdm(enumerate(dataloader), total=len(dataloader)):
                for view in batch:
                    view['img'] = view['img'].to(args.device, non_blocking=True)

                scene_id = view['label'][0].rsplit('/', 1)[0]
                if args.scene_id is not None and scene_id != args.scene_id:
                    continue

                start_event = torch.cuda.Event(enable_timing=True)
                end_event = torch.cuda.Event(enable_timing=True)
                start_event.record()
                preds, preds_all = model.forward(batch)
                end_event.record()
                torch.cuda.synchronize()
                elapsed = start_event.elapsed_time(end_event) / 1000.0  # ms -> s

                fps = len(batch) / elapsed
                fps_all.append(fps)
                time_all.append(elapsed)

                # Evaluation
                print(f'Evaluation for {name_data} {i+1}/{len(dataloader)}')

                pts_all = []
                pts_gt_all = []
                images_all = []
                masks_all = []
                conf_all = []

                for j, view in enumerate(batch):
                    image = view['img'].permute(0, 2, 3, 1).cpu().numpy()[0]
                    mask = view['valid_mask'].cpu().numpy()[0]
                    pts = preds[j]['pts3d' if j == 0 else 'pts3d_in_other_view'].detach().cpu().numpy()[0]
                    conf = preds[j]['conf'][0].cpu().data.numpy()
                    pts_gt = view['pts3d'].detach().cpu().numpy()[0]

                    images_all.append((image[None, ...] + 1.0) / 2.0)
                    pts_all.append(pts[None, ...])
                    pts_gt_all.append(pts_gt[None, ...])
                    masks_all.append(mask[None, ...])
                    conf_all.append(conf[None, ...])

                images_all = np.concatenate(images_all, axis=0)
                pts_all = np.concatenate(pts_all, axis=0)
                pts_gt_all = np.concatenate(pts_gt_all, axis=0)
                masks_all = np.concatenate(masks_all, axis=0)
                conf_all = np.concatenate(conf_all, axis=0)

                pts_all_masked = pts_all[masks_all > 0].reshape(-1, 3)
                pts_gt_all_masked = pts_gt_all[masks_all > 0].reshape(-1, 3)
                images_all_masked = images_all[masks_all > 0].reshape(-1, 3)

                # similarity alignment (Umeyama) before computing the metrics
                R, t, s = umeyama_alignment(pts_all_masked.T, pts_gt_all_masked.T, with_scale=True)
                pts_all_masked = (s * (R @ pts_all_masked.T)).T + t

                if args.icp:
                    trans = register_icp(pts_all_masked, pts_gt_all_masked)
                    pts_all_masked = (trans[:3, :3] @ pts_all_masked.T).T + trans[:3, 3]

                pcd = o3d.geometry.PointCloud()
                pcd.points = o3d.utility.Vector3dVector(pts_all_masked)
                pcd.colors = o3d.utility.Vector3dVector(images_all_masked)
                pcd_gt = o3d.geometry.PointCloud()
                pcd_gt.points = o3d.utility.Vector3dVector(pts_gt_all_masked)
                pcd_gt.colors = o3d.utility.Vector3dVector(images_all_masked)

                if args.save_pcd:
                    o3d.io.write_point_cloud(os.path.join(save_path, f"{scene_id.replace('/', '_')}-mask.ply"), pcd)
                    o3d.io.write_point_cloud(os.path.join(save_path, f"{scene_id.replace('/', '_')}-gt.ply"), pcd_gt)

                pcd.estimate_normals()
                pcd_gt.estimate_normals()

                acc, acc_med, nc1, nc1_med = accuracy(pcd_gt.points, pcd.points, pcd_gt.normals, pcd.normals)
                comp, comp_med, nc2, nc2_med = completion(pcd_gt.points, pcd.points, pcd_gt.normals, pcd.normals)
                print(f"Idx: {scene_id}, Acc: {acc}, Comp: {comp}, NC1: {nc1}, NC2: {nc2} - Acc_med: {acc_med}, Compc_med: {comp_med}, NC1c_med: {nc1_med}, NC2c_med: {nc2_med}")
                print(f"Idx: {scene_id}, Acc: {acc}, Comp: {comp}, NC1: {nc1}, NC2: {nc2} - Acc_med: {acc_med}, Compc_med: {comp_med}, NC1c_med: {nc1_med}, NC2c_med: {nc2_med}",
                      file=open(log_file, "a"))

                acc_all += acc
                comp_all += comp
                nc1_all += nc1
                acc_all_med += acc_med
                comp_all_med += comp_med

                torch.cuda.empty_cache()

            to_write = ""
            to_write += f"Dataset: {name_data}\n"
            to_write += f"Mean Acc: {acc_all / len(dataloader):.4f}, Mean Comp: {comp_all / len(dataloader):.4f}, Mean NC1: {nc1_all / len(dataloader):.4f}\n"
            to_write += f"Median Acc: {acc_all_med / len(dataloader):.4f}, Median Comp: {comp_all_med / len(dataloader):.4f}\n"
            to_write += f"Average FPS: {np.mean(fps_all):.2f}, Average time per sequence: {np.mean(time_all):.3f}s\n"
            print(to_write)
            with open(log_file, "a") as f:
                f.write(to_write)

        with open(os.path.join(save_path, 'summary.json'), 'w') as f:
            json.dump({'acc': acc_all / len(dataloader), 'comp': comp_all / len(dataloader),
                       'nc1': nc1_all / len(dataloader), 'fps': float(np.mean(fps_all))}, f, indent=2)


if __name__ == '__main__':
    parser = get_args_parser()
    args = parser.parse_args()
    main(args)
