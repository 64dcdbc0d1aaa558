"""
Extract clip-level I3D features (1024-d, after the last Mixed_5c block + avg pool) for
How2Sign / BOBSL style sign-language translation. A 16-frame window slides over each
video with stride 4 (as in the SLT baselines), giving a (T', 1024) array per video.

    python feature_extraction/extract_i3d_features.py \
        --video_list data/how2sign/train.txt --video_root data/how2sign/clips \
        --weights checkpoints/i3d_bsl1k.pth.tar --out_dir data/how2sign/i3d_features \
        --batch_size 64 --gpus 0,1
"""
import argparse
import os
import time

import cv2
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset, DataLoader

from models.pytorch_i3d import InceptionI3d


class SlidingWindowClips(Dataset):
    """Decodes one video and returns all 16-frame windows as a (N, 3, 16, 224, 224) tensor."""

    def __init__(self, video_path, num_in_frames=16, stride=4, resize=256, crop=224):
        self.video_path = video_path
        self.num_in_frames = num_in_frames
        self.stride = stride
        self.resize = resize
        self.crop = crop
        self.frames = self._load()
        n = max(1, (len(self.frames) - num_in_frames) // stride + 1)
        self.starts = [i * stride for i in range(n)]

    def _load(self):
        cap = cv2.VideoCapture(self.video_path)
        frames = []
        while True:
            ok, frame = cap.read()
            if not ok:
                break
            frame = cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)
            h, w = frame.shape[:2]
            scale = self.resize / min(h, w)
            frame = cv2.resize(frame, (int(round(w * scale)), int(round(h * scale))))
            frames.append(frame)
        cap.release()
        if len(frames) < self.num_in_frames:
            frames += [frames[-1]] * (self.num_in_frames - len(frames))
        return np.stack(frames)

    def __len__(self):
        return len(self.starts)

    def __getitem__(self, idx):
        s = self.starts[idx]
        clip = self.frames[s:s + self.num_in_frames]
        h, w = clip.shape[1:3]
        y0 = (h - self.crop) // 2
        x0 = (w - self.crop) // 2
        clip = clip[:, y0:y0 + self.crop, x0:x0 + self.crop]
        clip = torch.from_numpy(clip).float().permute(3, 0, 1, 2) / 255.0  # C,T,H,W
        clip = (clip - 0.5) / 0.5
        return clip


def load_i3d(weights, num_classes=1064):
    model = InceptionI3d(num_classes=num_classes, spatiotemporal_squeeze=True,
                         final_endpoint='Logits', name='inception_i3d', in_channels=3,
                         dropout_keep_prob=0.5, num_in_frames=16, include_embds=True)
    checkpoint = torch.load(weights, map_location=lambda storage, loc: storage)
    state_dict = checkpoint['state_dict']
    state_dict = {k.replace('module.', ''): v for k, v in state_dict.items()}
    model.load_state_dict(state_dict)
    return model


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--video_list', required=True)
    parser.add_argument('--video_root', required=True)
    parser.add_argument('--weights', required=True)
    parser.add_argument('--out_dir', required=True)
    parser.add_argument('--batch_size', type=int, default=64)
    parser.add_argument('--num_workers', type=int, default=4)
    parser.add_argument('--stride', type=int, default=4)
    parser.add_argument('--gpus', default='0', help='comma separated GPU ids, e.g. 0,1')
    return parser.parse_args()


def main():
    args = parse_args()
    os.environ['CUDA_VISIBLE_DEVICES'] = args.gpus
    n_gpus = torch.cuda.device_count()
    print(f'Using {n_gpus} GPU(s): {args.gpus}')

    model = load_i3d(args.weights)
    model = model.cuda()
    if n_gpus > 1:
        model = nn.DataParallel(model)
    model.eval()
    torch.backends.cudnn.benchmark = True

    with open(args.video_list) as f:
        videos = [l.strip() for l in f if l.strip()]
    os.makedirs(args.out_dir, exist_ok=True)

    t0 = time.time()
    for vi, name in enumerate(videos):
        out_path = os.path.join(args.out_dir, name + '.npy')
        if os.path.exists(out_path):
            continue
        ds = SlidingWindowClips(os.path.join(args.video_root, name + '.mp4'), stride=args.stride)
        loader = DataLoader(ds, batch_size=args.batch_size, shuffle=False,
                            num_workers=args.num_workers, pin_memory=True)
        feats = []
        with torch.no_grad():
            for clips in loader:
                clips = clips.cuda(non_blocking=True)
                out = model(clips)
                emb = out['embds'].squeeze(-1).squeeze(-1).squeeze(-1)  # B,1024
                feats.append(emb.cpu().numpy().astype(np.float16))
        feats = np.concatenate(feats, axis=0)
        np.save(out_path, feats)
        if vi % 50 == 0:
            elapsed = time.time() - t0
            mem = torch.cuda.memory_allocated() / 2 ** 30
            print(f'[{vi}/{len(videos)}] {name}: {feats.shape} ({elapsed:.0f}s, {mem:.2f} GB allocated)')


if __name__ == '__main__':
    main()
