"""Online anomaly monitoring for CCTV streams.

Each camera is read by its own thread; every 16 decoded frames form one
snippet that goes through the frozen I3D backbone (centre crop only, fp16)
and the UR-DMU scoring head. Scores are smoothed over a sliding window and an
alert is POSTed when the smoothed score crosses an adaptive threshold.

    python demo/online_monitor.py --streams cams.txt --head ckpt/ucf_trans_2022.pkl \
        --i3d pretrained/rgb_imagenet.pt --gpu 0
"""
import argparse
import collections
import json
import logging
import os
import queue
import threading
import time

import cv2
import numpy as np
import requests
import torch
import torch.nn.functional as F

from models.pytorch_i3d import InceptionI3d
from model import WSAD

logging.basicConfig(level=logging.INFO, format='%(asctime)s %(threadName)s %(message)s')
log = logging.getLogger('monitor')

torch.backends.cudnn.benchmark = True

SNIPPET = 16
CROP = 224


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument('--streams', required=True, help='text file: one "<cam_id> <rtsp url>" per line')
    p.add_argument('--head', required=True)
    p.add_argument('--i3d', required=True)
    p.add_argument('--gpu', type=int, default=0)
    p.add_argument('--window', type=int, default=8, help='snippets in the smoothing window')
    p.add_argument('--history', type=int, default=2000, help='snippets kept per camera for the adaptive threshold')
    p.add_argument('--quantile', type=float, default=0.995)
    p.add_argument('--min-threshold', type=float, default=0.6)
    p.add_argument('--alert-url', default='')
    p.add_argument('--record-dir', default='', help='save the last seconds of video when an alert fires')
    p.add_argument('--gpu-stats', action='store_true', help='log GPU utilisation every minute')
    return p.parse_args()


def log_gpu_stats(index, period=60):
    """Periodically log utilisation / memory of the inference GPU through NVML."""
    import pynvml
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(index)
    while True:
        util = pynvml.nvmlDeviceGetUtilizationRates(h).gpu
        used = pynvml.nvmlDeviceGetMemoryInfo(h).used / 2 ** 20
        log.info('gpu util %d%% mem %.0f MB', util, used)
        time.sleep(period)


def center_crop(frame, size=CROP):
    h, w = frame.shape[:2]
    scale = 256.0 / min(h, w)
    frame = cv2.resize(frame, (int(round(w * scale)), int(round(h * scale))))
    h, w = frame.shape[:2]
    y0, x0 = (h - size) // 2, (w - size) // 2
    return frame[y0:y0 + size, x0:x0 + size]


class CameraReader(threading.Thread):
    def __init__(self, cam_id, url, out_q):
        super().__init__(daemon=True, name='cam-{}'.format(cam_id))
        self.cam_id = cam_id
        self.url = url
        self.out_q = out_q
        self.stop_flag = threading.Event()

    def run(self):
        buf = []
        while not self.stop_flag.is_set():
            cap = cv2.VideoCapture(self.url)
            if not cap.isOpened():
                log.warning('cannot open %s, retry in 5s', self.url)
                time.sleep(5)
                continue
            while not self.stop_flag.is_set():
                ok, frame = cap.read()
                if not ok:
                    break
                frame = cv2.cvtColor(center_crop(frame), cv2.COLOR_BGR2RGB)
                buf.append(frame)
                if len(buf) == SNIPPET:
                    clip = np.stack(buf).astype(np.float32)
                    buf = []
                    try:
                        self.out_q.put((self.cam_id, time.time(), clip), timeout=1)
                    except queue.Full:
                        log.warning('inference queue full, dropping a snippet of %s', self.cam_id)
            cap.release()


class Scorer:
    def __init__(self, args, device):
        self.device = device
        i3d = InceptionI3d(400, in_channels=3)
        i3d.load_state_dict(torch.load(args.i3d, map_location='cpu'))
        self.i3d = i3d.to(device).half().eval()

        head = WSAD(input_size=1024, flag="Test", a_nums=60, n_nums=60)
        head.load_state_dict(torch.load(args.head, map_location='cpu'))
        self.head = head.to(device).eval()

        self.window = args.window
        self.history = args.history
        self.q = args.quantile
        self.min_thr = args.min_threshold
        self.recent = collections.defaultdict(lambda: collections.deque(maxlen=self.window))
        self.past = collections.defaultdict(lambda: collections.deque(maxlen=self.history))

    @torch.inference_mode()
    def features(self, clips):
        # clips: list of (16, 224, 224, 3) float32 in [0, 255]
        x = torch.from_numpy(np.stack(clips)).pin_memory()
        x = x.to(self.device, non_blocking=True).permute(0, 4, 1, 2, 3)
        x = (x / 127.5 - 1.0).half()
        feats = self.i3d.extract_features(x)  # (B, 1024, 1, 1, 1)
        return feats.flatten(1).float()

    @torch.inference_mode()
    def score(self, feats):
        with torch.cuda.amp.autocast(dtype=torch.float16):
            out = self.head(feats.unsqueeze(1))["frame"]
        return out.float().view(-1)

    def update(self, cam_id, s):
        self.recent[cam_id].append(s)
        smoothed = float(np.mean(self.recent[cam_id]))
        hist = self.past[cam_id]
        hist.append(smoothed)
        if len(hist) >= 200:
            thr = torch.quantile(torch.tensor(list(hist), device=self.device), self.q).item()
            thr = max(thr, self.min_thr)
        else:
            thr = self.min_thr
        return smoothed, thr


class ClipRecorder:
    """Keep the last few seconds of every camera and dump them when an alert fires."""

    def __init__(self, out_dir, seconds=10, fps=25):
        self.out_dir = out_dir
        self.fps = fps
        self.buffers = collections.defaultdict(lambda: collections.deque(maxlen=seconds * fps // SNIPPET))
        os.makedirs(out_dir, exist_ok=True)

    def push(self, cam_id, clip):
        self.buffers[cam_id].append(clip.astype(np.uint8))

    def dump(self, cam_id, ts):
        clips = list(self.buffers[cam_id])
        if not clips:
            return None
        path = os.path.join(self.out_dir, '{}_{}.mp4'.format(cam_id, int(ts)))
        writer = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*'mp4v'), self.fps, (CROP, CROP))
        for clip in clips:
            for frame in clip:
                writer.write(cv2.cvtColor(frame, cv2.COLOR_RGB2BGR))
        writer.release()
        return path


def post_alert(url, payload):
    if not url:
        log.info('ALERT %s', json.dumps(payload))
        return
    try:
        requests.post(url, json=payload, timeout=2)
    except requests.RequestException as e:
        log.warning('alert post failed: %s', e)


def main():
    args = parse_args()
    device = 'cuda:{}'.format(args.gpu) if torch.cuda.is_available() else 'cpu'
    if device == 'cpu':
        log.warning('CUDA not available, running on CPU will not be real-time')
    else:
        torch.cuda.set_device(args.gpu)

    if args.gpu_stats:
        threading.Thread(target=log_gpu_stats, args=(args.gpu,), name='gpustats', daemon=True).start()

    scorer = Scorer(args, device)
    recorder = ClipRecorder(args.record_dir) if args.record_dir else None
    in_q = queue.Queue(maxsize=64)
    readers = []
    with open(args.streams) as f:
        for line in f:
            if not line.strip() or line.startswith('#'):
                continue
            cam_id, url = line.split(maxsplit=1)
            r = CameraReader(cam_id, url.strip(), in_q)
            r.start()
            readers.append(r)
    log.info('%d camera(s) on %s', len(readers), device)

    batch, meta = [], []
    cam_index, dashboard = {}, {}
    last_flush = time.time()
    try:
        while True:
            try:
                cam_id, ts, clip = in_q.get(timeout=0.05)
                if recorder is not None:
                    recorder.push(cam_id, clip)
                batch.append(clip)
                meta.append((cam_id, ts))
            except queue.Empty:
                pass
            if batch and (len(batch) >= 16 or time.time() - last_flush > 0.2):
                feats = scorer.features(batch)
                scores_t = scorer.score(feats)
                # per-camera peak of this batch, for the dashboard
                cam_idx = torch.tensor([cam_index.setdefault(c, len(cam_index)) for c, _ in meta], device=scores_t.device)
                peaks = torch.zeros(len(cam_index), device=scores_t.device).scatter_reduce(
                    0, cam_idx, scores_t, reduce='amax', include_self=False)
                dashboard.update({c: float(peaks[i]) for c, i in cam_index.items() if i < len(peaks)})
                scores = scores_t.cpu().numpy()
                for (cid, ts), s in zip(meta, scores):
                    smoothed, thr = scorer.update(cid, float(s))
                    if smoothed > thr:
                        payload = {'camera': cid, 'time': ts, 'score': smoothed, 'threshold': thr}
                        if recorder is not None:
                            payload['clip'] = recorder.dump(cid, ts)
                        post_alert(args.alert_url, payload)
                batch, meta = [], []
                last_flush = time.time()
    except KeyboardInterrupt:
        log.info('stopping')
        for r in readers:
            r.stop_flag.set()


if __name__ == '__main__':
    main()
