"""
Synthesise virtual IMU data (orientations + accelerations) from AMASS SMPL-H sequences.

For every sequence: resample to 60 Hz, run the SMPL-H body model on the GPU, read the vertices where
the sensors are attached, take the global orientation of the parent joint as sensor orientation and
compute accelerations with a smoothed second-order finite difference (TransPose, Sec. 4.1).

Several GPUs can be used: one worker process per card, files are distributed round-robin.

    python preprocess/synthesize_amass_imu.py --amass data/raw/AMASS --out data/processed/amass --workers 4
"""
import argparse
import glob
import os
import os.path as osp
import time

import numpy as np
import torch
import torch.multiprocessing as mp
from tqdm import tqdm

from human_body_prior.body_model.body_model import BodyModel

VI_MASK = [1961, 5424, 1176, 4662, 411, 3021]   # l-wrist, r-wrist, l-knee, r-knee, head, pelvis
JI_MASK = [18, 19, 4, 5, 15, 0]
TARGET_FPS = 60
comp_device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def resample(arr, src_fps, dst_fps=TARGET_FPS):
    if abs(src_fps - dst_fps) < 1e-3:
        return arr
    n_src = arr.shape[0]
    n_dst = int(round(n_src * dst_fps / src_fps))
    t_src = np.linspace(0, 1, n_src)
    t_dst = np.linspace(0, 1, n_dst)
    flat = arr.reshape(n_src, -1)
    out = np.stack([np.interp(t_dst, t_src, flat[:, k]) for k in range(flat.shape[1])], axis=1)
    return out.reshape((n_dst,) + arr.shape[1:])


def syn_acc(v, smooth_n=4):
    """
    Synthesize accelerations from vertex positions [T, 6, 3] (metres) -> [T, 6, 3] (m/s^2).
    """
    mid = smooth_n // 2
    acc = torch.stack([(v[i] + v[i + 2] - 2 * v[i + 1]) * 3600 for i in range(0, v.shape[0] - 2)])
    acc = torch.cat((torch.zeros_like(acc[:1]), acc, torch.zeros_like(acc[:1])))
    if mid != 0:
        acc[smooth_n:-smooth_n] = torch.stack(
            [(v[i] + v[i + smooth_n * 2] - 2 * v[i + smooth_n]) * 3600 / smooth_n ** 2
             for i in range(0, v.shape[0] - smooth_n * 2)])
    return acc


def load_body_models(support_dir, device):
    models = {}
    for gender in ['male', 'female', 'neutral']:
        bm_fname = osp.join(support_dir, 'body_models/smplh/{}/model.npz'.format(gender))
        dmpl_fname = osp.join(support_dir, 'body_models/dmpls/{}/model.npz'.format(gender))
        models[gender] = BodyModel(bm_fname=bm_fname, num_betas=16, num_dmpls=8, dmpl_fname=dmpl_fname).to(device)
    return models


def process_file(path, body_models, device, out_dir, min_frames=120):
    bdata = np.load(path)
    if 'mocap_framerate' not in bdata.files:
        return None   # shape.npz
    fps = float(bdata['mocap_framerate'])
    poses = resample(bdata['poses'], fps)
    trans = resample(bdata['trans'], fps)
    if poses.shape[0] < min_frames:
        return None
    gender = str(bdata['gender'].astype(str)) if 'gender' in bdata.files else 'neutral'
    gender = gender if gender in body_models else 'neutral'
    bm = body_models[gender]
    T = poses.shape[0]

    body_parms = {
        'root_orient': torch.Tensor(poses[:, :3]).to(device),        # global orientation
        'pose_body': torch.Tensor(poses[:, 3:66]).to(device),         # body joints
        'pose_hand': torch.Tensor(poses[:, 66:]).to(device),          # finger articulation
        'trans': torch.Tensor(trans).to(device),
        'betas': torch.Tensor(np.repeat(bdata['betas'][:16][np.newaxis], repeats=T, axis=0)).to(device),
    }
    with torch.no_grad():
        body = bm(**{k: v for k, v in body_parms.items() if k in ['root_orient', 'pose_body', 'pose_hand',
                                                                     'trans', 'betas']})
        verts = body.v[:, VI_MASK]                              # [T, 6, 3]
        # global rotation of the joints the sensors are attached to
        rot = torch.stack([body.full_pose_global_R[:, j] for j in JI_MASK], dim=1) \
            if hasattr(body, 'full_pose_global_R') else None
        acc = syn_acc(verts)

    rec = {
        'pose': poses[:, :72].astype(np.float32),
        'tran': trans.astype(np.float32),
        'vacc': acc.cpu().numpy().astype(np.float32),
        'vrot': rot.cpu().numpy().astype(np.float32) if rot is not None else None,
        'joint': body.Jtr[:, :24].cpu().numpy().astype(np.float32),
        'gender': gender,
        'fps': TARGET_FPS,
    }
    rel = osp.relpath(path).replace(os.sep, '__').replace('.npz', '.pt')
    torch.save(rec, osp.join(out_dir, rel))
    return T


def process_dipimu(raw_dir, out_dir, test_subjects=('s_09', 's_10')):
    """
    Convert the real DIP-IMU recordings (.pkl, 60 Hz) to the same format as the synthetic data.
    Runs on the CPU: only the 6 sparse sensors are kept, NaN frames are filled by nearest valid frame.
    """
    import pickle
    imu_mask = [7, 8, 11, 12, 0, 2]
    splits = {'train': {'acc': [], 'ori': [], 'pose': [], 'tran': []},
              'test': {'acc': [], 'ori': [], 'pose': [], 'tran': []}}
    for subject in sorted(os.listdir(raw_dir)):
        split = 'test' if subject in test_subjects else 'train'
        for motion in sorted(os.listdir(osp.join(raw_dir, subject))):
            with open(osp.join(raw_dir, subject, motion), 'rb') as f:
                data = pickle.load(f, encoding='latin1')
            acc = torch.from_numpy(data['imu_acc'][:, imu_mask]).float()
            ori = torch.from_numpy(data['imu_ori'][:, imu_mask]).float()
            pose = torch.from_numpy(data['gt']).float()

            # fill nan with nearest neighbors
            for _ in range(4):
                acc[1:].masked_scatter_(torch.isnan(acc[1:]), acc[:-1][torch.isnan(acc[1:])])
                ori[1:].masked_scatter_(torch.isnan(ori[1:]), ori[:-1][torch.isnan(ori[1:])])
                acc[:-1].masked_scatter_(torch.isnan(acc[:-1]), acc[1:][torch.isnan(acc[:-1])])
                ori[:-1].masked_scatter_(torch.isnan(ori[:-1]), ori[1:][torch.isnan(ori[:-1])])

            acc, ori, pose = acc[6:-6], ori[6:-6], pose[6:-6]
            if torch.isnan(acc).sum() == 0 and torch.isnan(ori).sum() == 0 and torch.isnan(pose).sum() == 0:
                splits[split]['acc'].append(acc.clone())
                splits[split]['ori'].append(ori.clone())
                splits[split]['pose'].append(pose.clone())
                splits[split]['tran'].append(torch.zeros(pose.shape[0], 3))  # dip-imu does not contain translations
            else:
                print('DIP-IMU: %s/%s has too much nan! Discard!' % (subject, motion))
    os.makedirs(out_dir, exist_ok=True)
    for split, d in splits.items():
        torch.save(d, osp.join(out_dir, split + '.pt'))
        print('DIP-IMU %s: %d sequences' % (split, len(d['acc'])))


def process_totalcapture(dip_dir, official_dir, out_dir, device=comp_device):
    """
    TotalCapture with the SMPL poses recalculated by DIP; accelerations come from the official Xsens
    *_Xsens_AuxFields.sensors files (the DIP version has a wrong acceleration calibration).
    The calibration (global rotation alignment) is a few small matrix products, done on `device`.
    """
    import pickle
    inches_to_meters = 0.0254
    imu_mask = [5, 0, 1, 2, 3, 4]   # TotalCapture sensor order -> ours
    data = {'acc': [], 'ori': [], 'pose': [], 'tran': []}
    for file in sorted(os.listdir(dip_dir)):
        with open(osp.join(dip_dir, file), 'rb') as f:
            d = pickle.load(f, encoding='latin1')
        ori = torch.from_numpy(d['ori']).float()[:, imu_mask].to(device)
        acc = torch.from_numpy(d['acc']).float()[:, imu_mask].to(device)
        pose = torch.from_numpy(d['gt']).float().view(-1, 24, 3)

        # recompute the global accelerations with the official files
        subject, motion = file.split('_')[0].upper(), file.split('_')[1].split('.')[0]
        aux = osp.join(official_dir, subject, '%s_Xsens_AuxFields.sensors' % motion)
        if osp.exists(aux):
            with open(aux) as f:
                lines = [l.split() for l in f.readlines()[2:] if len(l.split()) > 10]
            raw = np.array([[float(v) for v in l[1:]] for l in lines if l[0] != 'frame'], dtype=np.float32)
            if raw.shape[0] >= acc.shape[0] and raw.shape[1] >= 6 * 7:
                glb = torch.from_numpy(raw[:acc.shape[0]].reshape(acc.shape[0], -1, 7)[:, :6, 4:7]).to(device)
                acc = glb[:, imu_mask]
        # align with the SMPL coordinate frame (y up)
        R = torch.tensor([[1, 0, 0], [0, 0, 1], [0, -1, 0.]], device=device)
        ori = R.matmul(ori)
        acc = R.matmul(acc.unsqueeze(-1)).squeeze(-1)

        tran_file = osp.join(official_dir, subject, '%s_gt_skel_gbl_pos.txt' % motion)
        if osp.exists(tran_file):
            tran = np.loadtxt(tran_file, skiprows=1, usecols=(0, 1, 2)) * inches_to_meters
            tran = torch.from_numpy(tran).float()[:pose.shape[0]]
        else:
            tran = torch.zeros(pose.shape[0], 3)
        n = min(acc.shape[0], pose.shape[0], tran.shape[0])
        data['acc'].append(acc[:n].cpu())
        data['ori'].append(ori[:n].cpu())
        data['pose'].append(pose[:n].view(n, 72))
        data['tran'].append(tran[:n])
    os.makedirs(out_dir, exist_ok=True)
    torch.save(data, osp.join(out_dir, 'test.pt'))
    print('TotalCapture: %d sequences' % len(data['acc']))


def worker(rank, files, args):
    n_gpu = torch.cuda.device_count()
    if n_gpu > 0:
        torch.cuda.set_device(rank % n_gpu)
        device = torch.device('cuda', rank % n_gpu)
    else:
        device = comp_device
    body_models = load_body_models(args.support_dir, device)
    my_files = files[rank::args.workers]
    n_frames = 0
    for i, f in enumerate(tqdm(my_files, position=rank, desc='worker %d (%s)' % (rank, device))):
        try:
            n = process_file(f, body_models, device, args.out)
            n_frames += n or 0
        except Exception as e:   # corrupted npz files exist in older AMASS releases
            print('[worker %d] skip %s: %s' % (rank, f, e))
        if i % 200 == 0:
            torch.cuda.empty_cache()
    print('[worker %d] done, %d frames' % (rank, n_frames))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--amass', default='data/raw/AMASS')
    parser.add_argument('--support-dir', default='support_data')
    parser.add_argument('--out', default='data/processed/amass')
    parser.add_argument('--workers', type=int, default=max(1, torch.cuda.device_count()))
    parser.add_argument('--datasets', nargs='*', default=None)
    parser.add_argument('--dipimu', default=None, help='also convert the raw DIP-IMU pkl files in this folder')
    parser.add_argument('--totalcapture', nargs=2, default=None, metavar=('DIP_DIR', 'OFFICIAL_DIR'),
                        help='also convert TotalCapture (DIP-recalculated pkl dir, official dir)')
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.dipimu:
        process_dipimu(args.dipimu, osp.join(osp.dirname(args.out), 'dip_imu'))
    if args.totalcapture:
        process_totalcapture(args.totalcapture[0], args.totalcapture[1], osp.join(osp.dirname(args.out), 'totalcapture'))

    files = sorted(glob.glob(osp.join(args.amass, '*', '**', '*.npz'), recursive=True))
    if args.datasets:
        files = [f for f in files if f.split(os.sep)[-3] in args.datasets or f.split(os.sep)[-4] in args.datasets]
    print('%d files, %d workers, device %s' % (len(files), args.workers, comp_device))
    t0 = time.time()
    if args.workers == 1:
        worker(0, files, args)
    else:
        mp.set_start_method('spawn', force=True)
        mp.spawn(worker, args=(files, args), nprocs=args.workers, join=True)
    print('finished in %.1f min' % ((time.time() - t0) / 60))


if __name__ == '__main__':
    main()
