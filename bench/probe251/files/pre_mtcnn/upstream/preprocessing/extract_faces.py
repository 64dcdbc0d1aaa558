"""
Extract, crop and save face images from deepfake video datasets.

Frames are sampled with OpenCV, faces are detected with facenet-pytorch's MTCNN
(batched on the GPU) and the enlarged bounding box is cropped and resized.
Landmarks (5 points from MTCNN) are stored next to each crop as .npy.

    python preprocessing/extract_faces.py --config preprocessing/config.yaml \
        --dataset Celeb-DF-v2 --workers 4
"""
import argparse
import json
import logging
import os
import sys
import time
from functools import partial
from multiprocessing import get_context
from pathlib import Path

import cv2
import numpy as np
import yaml
from PIL import Image
from tqdm import tqdm

import torch
from facenet_pytorch import MTCNN

logging.basicConfig(level=logging.INFO, format='%(asctime)s %(levelname)s %(message)s')
logger = logging.getLogger('extract_faces')


def load_config(path):
    with open(path, 'r') as f:
        cfg = yaml.safe_load(f)
    return cfg


def list_videos(root, dataset_name, comp):
    root = Path(root)
    if dataset_name == 'FaceForensics++':
        subsets = ['original_sequences/youtube', 'manipulated_sequences/Deepfakes',
                   'manipulated_sequences/Face2Face', 'manipulated_sequences/FaceSwap',
                   'manipulated_sequences/NeuralTextures']
        videos = []
        for s in subsets:
            videos += sorted((root / dataset_name / s / comp / 'videos').glob('*.mp4'))
        return videos
    return sorted((root / dataset_name).rglob('*.mp4'))


def sample_frames(video_path, num_frames, mode='fixed_num_frames', stride=1):
    cap = cv2.VideoCapture(str(video_path))
    total = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))
    if total <= 0:
        cap.release()
        return [], []
    if mode == 'fixed_num_frames':
        idxs = np.linspace(0, total - 1, num_frames, endpoint=True, dtype=int)
    else:
        idxs = np.arange(0, total, stride)
    wanted = set(idxs.tolist())
    frames, kept = [], []
    for i in range(total):
        ok = cap.grab()
        if not ok:
            break
        if i not in wanted:
            continue
        ok, frame = cap.retrieve()
        if not ok:
            continue
        frames.append(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB))
        kept.append(i)
    cap.release()
    return frames, kept


def enlarge_box(box, scale, h, w):
    x1, y1, x2, y2 = box
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    size = max(x2 - x1, y2 - y1) * scale
    x1 = int(max(0, cx - size / 2))
    y1 = int(max(0, cy - size / 2))
    x2 = int(min(w, cx + size / 2))
    y2 = int(min(h, cy + size / 2))
    return x1, y1, x2, y2


class FaceExtractor:
    def __init__(self, det_cfg, device):
        self.device = torch.device(device)
        self.batch_size = det_cfg.get('batch_size', 32)
        self.detector = MTCNN(
            margin=0,
            thresholds=det_cfg.get('thresholds', [0.6, 0.7, 0.7]),
            factor=det_cfg.get('factor', 0.709),
            min_face_size=det_cfg.get('min_face_size', 40),
            keep_all=det_cfg.get('keep_all', False),
            select_largest=det_cfg.get('select_largest', True),
            post_process=det_cfg.get('post_process', False),
            device=self.device,
        )
        if det_cfg.get('fp16', False) and self.device.type == 'cuda':
            self.detector = self.detector.half()

    @torch.no_grad()
    def detect(self, frames):
        boxes_all, probs_all, lms_all = [], [], []
        for i in range(0, len(frames), self.batch_size):
            batch = [Image.fromarray(f) for f in frames[i:i + self.batch_size]]
            boxes, probs, lms = self.detector.detect(batch, landmarks=True)
            boxes_all.extend(boxes)
            probs_all.extend(probs)
            lms_all.extend(lms)
        return boxes_all, probs_all, lms_all


def process_video(video_path, extractor, cfg, out_root):
    d = cfg['default']
    frames, idxs = sample_frames(video_path, d['num_frames'], d['mode'], d['stride'])
    if not frames:
        return 0
    boxes, probs, lms = extractor.detect(frames)
    rel = Path(video_path).with_suffix('')
    out_dir = Path(out_root) / rel.relative_to(rel.anchor)
    (out_dir / 'frames').mkdir(parents=True, exist_ok=True)
    if d['save_landmark']:
        (out_dir / 'landmarks').mkdir(parents=True, exist_ok=True)
    saved = 0
    for frame, idx, box, lm in zip(frames, idxs, boxes, lms):
        if box is None:
            continue
        h, w = frame.shape[:2]
        x1, y1, x2, y2 = enlarge_box(box[0], d['scale'], h, w)
        crop = frame[y1:y2, x1:x2]
        if crop.size == 0:
            continue
        crop = cv2.resize(crop, (d['output_size'], d['output_size']), interpolation=cv2.INTER_CUBIC)
        cv2.imwrite(str(out_dir / 'frames' / f'{idx:03d}.png'), cv2.cvtColor(crop, cv2.COLOR_RGB2BGR))
        if d['save_landmark'] and lm is not None:
            lm0 = lm[0].copy()
            lm0[:, 0] = (lm0[:, 0] - x1) * d['output_size'] / max(1, x2 - x1)
            lm0[:, 1] = (lm0[:, 1] - y1) * d['output_size'] / max(1, y2 - y1)
            np.save(str(out_dir / 'landmarks' / f'{idx:03d}.npy'), lm0)
        saved += 1
    return saved


def worker(rank, video_chunks, cfg, out_root, gpu_ids):
    gpu_id = gpu_ids[rank % len(gpu_ids)]
    torch.cuda.set_device(gpu_id)
    extractor = FaceExtractor(cfg['face_detector'], device=f'cuda:{gpu_id}')
    n_faces = 0
    for vp in tqdm(video_chunks[rank], position=rank, desc=f'gpu{gpu_id}'):
        try:
            n_faces += process_video(vp, extractor, cfg, out_root)
        except Exception as e:  # keep going, some DFDC videos are corrupt
            logger.warning(f'{vp}: {e}')
    torch.cuda.empty_cache()
    return n_faces


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--config', default='preprocessing/config.yaml')
    parser.add_argument('--dataset', default=None)
    parser.add_argument('--out', default='/data/datasets/faces')
    parser.add_argument('--workers', type=int, default=None)
    args = parser.parse_args()

    cfg = load_config(args.config)
    if args.dataset:
        cfg['default']['dataset_name'] = args.dataset
    workers = args.workers or cfg['io']['workers']
    d = cfg['default']

    videos = list_videos(d['dataset_root_path'], d['dataset_name'], d['comp'])
    logger.info(f"{len(videos)} videos found for {d['dataset_name']}")
    if not videos:
        sys.exit(1)

    start = time.time()
    if workers <= 1 or not torch.cuda.is_available():
        extractor = FaceExtractor(cfg['face_detector'], device=cfg['face_detector']['device'])
        total = 0
        for vp in tqdm(videos):
            total += process_video(vp, extractor, cfg, args.out)
    else:
        gpu_ids = cfg['io']['gpus'][:torch.cuda.device_count()]
        chunks = [videos[i::workers] for i in range(workers)]
        ctx = get_context('spawn')  # CUDA cannot be re-initialised in a forked child
        with ctx.Pool(workers) as pool:
            counts = pool.map(partial(worker, video_chunks=chunks, cfg=cfg, out_root=args.out, gpu_ids=gpu_ids),
                              range(workers))
        total = sum(counts)
    elapsed = time.time() - start
    logger.info(f'saved {total} faces in {elapsed / 60:.1f} min')
    with open(os.path.join(args.out, f"{d['dataset_name']}_extract_log.json"), 'w') as f:
        json.dump({'videos': len(videos), 'faces': total, 'seconds': elapsed}, f)


if __name__ == '__main__':
    main()
