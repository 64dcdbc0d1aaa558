"""
Synthesize DCASE-style SELD training mixtures (4-channel tetrahedral MIC format) with moving sources.

Room impulse responses are simulated with gpuRIR (image source method on the GPU), source signals are
drawn from FSD50K clips of the 13 STARSS23 classes, and every source follows a random linear or circular
trajectory. Output: mic_synth/<fold>/<name>.wav and metadata_synth/<fold>/<name>.csv in the DCASE
frame/class/source/azi/ele/dist format (100 ms label resolution).

One worker process per GPU:

    python data_synthesis/synthesize_seld_mixtures.py --out_dir /data/synth_seld --n_mixtures 6000 --gpus 0,1,2,3
"""
import argparse
import csv
import json
import math
import multiprocessing as mp
import os
import random

import numpy as np
import soundfile as sf

FS = 24000
LABEL_HOP_S = 0.1
MIX_LEN_S = 60
# Eigenmike-like tetrahedral subset used by the STARSS23 MIC format (radius 4.2 cm); (azi, ele) in degrees
MIC_DIRS = [(45, 35), (-45, -35), (135, -35), (-135, 35)]
MIC_RADIUS = 0.042


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument('--out_dir', required=True)
    p.add_argument('--fsd_dir', default='/data/FSD50K_selected')
    p.add_argument('--n_mixtures', type=int, default=1200)
    p.add_argument('--max_polyphony', type=int, default=3)
    p.add_argument('--gpus', default='0', help='comma separated list of GPU ids, one worker per GPU')
    p.add_argument('--auto_gpu', action='store_true', help='pick the GPU with most free memory (single worker)')
    p.add_argument('--seed', type=int, default=2024)
    return p.parse_args()


def pick_free_gpu():
    """Return the index of the GPU with the most free memory (nvidia-ml-py)."""
    import pynvml
    pynvml.nvmlInit()
    best, best_free = 0, -1
    for i in range(pynvml.nvmlDeviceGetCount()):
        handle = pynvml.nvmlDeviceGetHandleByIndex(i)
        info = pynvml.nvmlDeviceGetMemoryInfo(handle)
        if info.free > best_free:
            best, best_free = i, info.free
    pynvml.nvmlShutdown()
    return best


def mic_positions(center):
    pos = []
    for azi, ele in MIC_DIRS:
        a, e = math.radians(azi), math.radians(ele)
        pos.append([center[0] + MIC_RADIUS * math.cos(e) * math.cos(a),
                    center[1] + MIC_RADIUS * math.cos(e) * math.sin(a),
                    center[2] + MIC_RADIUS * math.sin(e)])
    return np.array(pos, dtype=np.float32)


def sample_room(rng):
    room_sz = [rng.uniform(4, 12), rng.uniform(4, 10), rng.uniform(2.5, 4.5)]
    t60 = rng.uniform(0.2, 1.0)
    array_pos = [room_sz[0] / 2 + rng.uniform(-0.5, 0.5), room_sz[1] / 2 + rng.uniform(-0.5, 0.5), rng.uniform(1.2, 1.8)]
    return room_sz, t60, array_pos


def sample_trajectory(rng, room_sz, array_pos, n_points):
    """Linear or circular trajectory around the array, at least 0.5 m from the walls."""
    dist = rng.uniform(1.0, min(room_sz[0], room_sz[1]) / 2 - 0.5)
    ele = math.radians(rng.uniform(-40, 40))
    azi0 = math.radians(rng.uniform(-180, 180))
    if rng.random() < 0.5:
        dazi = math.radians(rng.uniform(-90, 90))
        azis = np.linspace(azi0, azi0 + dazi, n_points)
    else:
        azis = np.full(n_points, azi0)
    traj = np.stack([array_pos[0] + dist * np.cos(ele) * np.cos(azis),
                     array_pos[1] + dist * np.cos(ele) * np.sin(azis),
                     np.full(n_points, array_pos[2] + dist * np.sin(ele))], axis=1)
    traj = np.clip(traj, 0.5, np.array(room_sz) - 0.5)
    return traj.astype(np.float32)


def cart2sph(xyz, center):
    d = xyz - np.array(center)[None]
    azi = np.degrees(np.arctan2(d[:, 1], d[:, 0]))
    ele = np.degrees(np.arctan2(d[:, 2], np.sqrt(d[:, 0] ** 2 + d[:, 1] ** 2)))
    dist = np.linalg.norm(d, axis=1)
    return azi, ele, dist


def load_class_pool(fsd_dir):
    with open(os.path.join(fsd_dir, 'class_map.json')) as f:
        class_map = json.load(f)
    pool = {}
    for cls_name, cls_idx in class_map.items():
        cls_dir = os.path.join(fsd_dir, cls_name)
        pool[cls_idx] = [os.path.join(cls_dir, fn) for fn in sorted(os.listdir(cls_dir)) if fn.endswith('.wav')]
    return pool


def worker(gpu_id, jobs, args):
    # gpuRIR picks the current CUDA device at import time, so restrict visibility first
    os.environ['CUDA_VISIBLE_DEVICES'] = str(gpu_id)
    import gpuRIR
    gpuRIR.activateMixedPrecision(False)
    gpuRIR.activateLUT(True)

    pool = load_class_pool(args.fsd_dir)
    for mix_idx, fold in jobs:
        rng = random.Random(args.seed * 100003 + mix_idx)
        room_sz, t60, array_pos = sample_room(rng)
        pos_rcv = mic_positions(array_pos)
        beta = gpuRIR.beta_SabineEstimation(room_sz, t60)
        tdiff = gpuRIR.att2t_SabineEstimator(15.0, t60)
        tmax = gpuRIR.att2t_SabineEstimator(60.0, t60)
        nb_img = gpuRIR.t2n(tdiff, room_sz)

        mixture = np.zeros((MIX_LEN_S * FS, 4), dtype=np.float32)
        rows = []
        n_events = rng.randint(8, 20)
        for ev in range(n_events):
            cls_idx = rng.choice(list(pool.keys()))
            sig, fs = sf.read(rng.choice(pool[cls_idx]), dtype='float32')
            if sig.ndim > 1:
                sig = sig.mean(axis=1)
            assert fs == FS, 'resample FSD50K to 24 kHz first'
            onset = rng.uniform(0, MIX_LEN_S - len(sig) / FS - 0.1)
            n_frames = max(2, int(math.ceil(len(sig) / FS / LABEL_HOP_S)))
            traj = sample_trajectory(rng, room_sz, array_pos, n_frames)

            rirs = gpuRIR.simulateRIR(room_sz, beta, traj, pos_rcv, nb_img, tmax, FS, Tdiff=tdiff, mic_pattern='omni')
            timestamps = np.arange(n_frames) * LABEL_HOP_S
            spatial = gpuRIR.simulateTrajectory(sig, rirs, timestamps=timestamps, fs=FS)  # (T', 4)
            start = int(onset * FS)
            end = min(start + spatial.shape[0], mixture.shape[0])
            mixture[start:end] += spatial[:end - start] * rng.uniform(0.3, 1.0)

            azi, ele, dist = cart2sph(traj, array_pos)
            first_frame = int(round(onset / LABEL_HOP_S))
            for k in range(n_frames):
                rows.append([first_frame + k, cls_idx, ev, int(round(azi[k])), int(round(ele[k])), int(round(dist[k] * 100))])

        peak = np.abs(mixture).max()
        if peak > 0:
            mixture = 0.9 * mixture / peak
        name = 'fold{}_room{:05d}_mix{:03d}'.format(fold, mix_idx // 100, mix_idx % 100)
        wav_dir = os.path.join(args.out_dir, 'mic_synth', 'fold{}'.format(fold))
        meta_dir = os.path.join(args.out_dir, 'metadata_synth', 'fold{}'.format(fold))
        os.makedirs(wav_dir, exist_ok=True)
        os.makedirs(meta_dir, exist_ok=True)
        sf.write(os.path.join(wav_dir, name + '.wav'), mixture, FS, subtype='PCM_16')
        rows.sort(key=lambda r: (r[0], r[1], r[2]))
        with open(os.path.join(meta_dir, name + '.csv'), 'w', newline='') as f:
            csv.writer(f).writerows(rows)
        print('[gpu {}] {} ({} events, T60 {:.2f}s)'.format(gpu_id, name, n_events, t60), flush=True)


def main():
    args = parse_args()
    jobs = [(i, 1 + i % 3) for i in range(args.n_mixtures)]
    if args.auto_gpu:
        gpus = [pick_free_gpu()]
    else:
        gpus = [int(g) for g in args.gpus.split(',')]
    chunks = [jobs[i::len(gpus)] for i in range(len(gpus))]
    ctx = mp.get_context('spawn')
    procs = [ctx.Process(target=worker, args=(g, c, args)) for g, c in zip(gpus, chunks)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    bad = [p.exitcode for p in procs if p.exitcode != 0]
    if bad:
        raise SystemExit('{} worker(s) failed'.format(len(bad)))


if __name__ == '__main__':
    main()
