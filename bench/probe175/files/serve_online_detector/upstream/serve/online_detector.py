"""Low-latency streaming anomaly scorer for TSLib reconstruction models.

Consumes sliding windows of metrics (one row per host per second), scores them with a trained
TimesNet / iTransformer reconstruction model and emits anomaly flags.  The forward pass is captured
once into a CUDA graph, so steady-state latency is one graph replay plus two async copies.

    python -m serve.online_detector --ckpt checkpoints/SMD_TimesNet/checkpoint.pth --model TimesNet \
        --win 100 --channels 38 --batch 256 --threshold-file thresholds/SMD.json
"""
import argparse
import json
import logging
import os
import queue
import threading
import time
from collections import deque

import numpy as np
import torch

from models import TimesNet, iTransformer, PatchTST
from utils.tools import dotdict

log = logging.getLogger("detector")

MODELS = {"TimesNet": TimesNet, "iTransformer": iTransformer, "PatchTST": PatchTST}
DEVICE = os.environ.get("DETECTOR_DEVICE", "cuda:0")

torch.backends.cudnn.benchmark = True


def pick_dtype(device):
    """bf16 on Ampere and newer, fp16 on Volta/Turing."""
    major, minor = torch.cuda.get_device_capability(device)
    return torch.bfloat16 if (major, minor) >= (8, 0) else torch.float16


def max_batch_for_memory(win, channels, d_model, safety=0.5):
    total = torch.cuda.get_device_properties(0).total_memory
    per_sample = win * max(channels, d_model) * 4 * 24  # activations, rough upper bound
    return max(1, int(total * safety // per_sample))


class GraphedScorer:
    """Wraps model(x) -> reconstruction; scores = per-timestep MSE averaged over channels."""

    def __init__(self, model, batch, win, channels, dtype, use_graph=True, warmup=3):
        self.model = model
        self.batch, self.win, self.channels = batch, win, channels
        self.dtype = dtype
        self.use_graph = use_graph
        # pinned staging buffer so the H2D copy can overlap with the previous replay
        self.host_buf = torch.empty((batch, win, channels), dtype=torch.float32).pin_memory()
        self.static_in = torch.zeros((batch, win, channels), device=DEVICE, dtype=torch.float32)
        self.copy_stream = torch.cuda.Stream()
        self.graph = None
        if use_graph:
            self._capture(warmup)

    def _forward(self, x):
        with torch.autocast(device_type="cuda", dtype=self.dtype):
            rec = self.model(x, None, None, None)
        return ((rec.float() - x) ** 2).mean(dim=-1)

    def _capture(self, warmup):
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s), torch.no_grad():
            for _ in range(warmup):
                self._forward(self.static_in)
        torch.cuda.current_stream().wait_stream(s)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph), torch.no_grad():
            self.static_out = self._forward(self.static_in)
        log.info("captured CUDA graph for batch=%d win=%d channels=%d", self.batch, self.win, self.channels)

    @torch.no_grad()
    def score(self, windows):
        n = windows.shape[0]
        self.host_buf[:n].copy_(torch.from_numpy(windows))
        if n < self.batch:
            self.host_buf[n:].zero_()
        with torch.cuda.stream(self.copy_stream):
            self.static_in.copy_(self.host_buf, non_blocking=True)
        torch.cuda.current_stream().wait_stream(self.copy_stream)
        if self.graph is not None:
            self.graph.replay()
            out = self.static_out
        else:
            out = self._forward(self.static_in)
        return out[:n].cpu().numpy()


def load_model(args):
    cfg = dotdict(json.load(open(args.config))) if args.config else dotdict()
    cfg.update(task_name="anomaly_detection", seq_len=args.win, pred_len=0, label_len=0,
               enc_in=args.channels, c_out=args.channels)
    cfg.setdefault("d_model", 64)
    cfg.setdefault("d_ff", 64)
    cfg.setdefault("e_layers", 2)
    cfg.setdefault("top_k", 3)
    cfg.setdefault("num_kernels", 6)
    cfg.setdefault("embed", "timeF")
    cfg.setdefault("freq", "s")
    cfg.setdefault("dropout", 0.0)
    model = MODELS[args.model].Model(cfg).float()
    state = torch.load(args.ckpt, map_location=DEVICE)
    state = {k.replace("module.", ""): v for k, v in state.items()}
    model.load_state_dict(state)
    return model.to(DEVICE).eval(), cfg


class WindowBuffer:
    """Keeps the last `win` rows per host and yields complete windows."""

    def __init__(self, win, channels):
        self.win, self.channels = win, channels
        self.rows = {}

    def push(self, host, row):
        dq = self.rows.setdefault(host, deque(maxlen=self.win))
        dq.append(np.asarray(row, dtype=np.float32))
        if len(dq) == self.win:
            return np.stack(dq)
        return None


def consumer(in_q, out_q, scorer, threshold, batch, timeout_s=0.05):
    pending_hosts, pending = [], []
    latency = deque(maxlen=1000)
    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    while True:
        try:
            item = in_q.get(timeout=timeout_s)
        except queue.Empty:
            item = None
        if item is not None:
            if item == "STOP":
                break
            host, window = item
            pending_hosts.append(host)
            pending.append(window)
        if pending and (len(pending) >= batch or item is None):
            torch.cuda.nvtx.range_push("detector.score")
            start_evt.record()
            scores = scorer.score(np.stack(pending))
            end_evt.record()
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()
            latency.append(start_evt.elapsed_time(end_evt))
            last = scores[:, -1]
            for h, s in zip(pending_hosts, last):
                out_q.put((h, float(s), bool(s > threshold)))
            pending_hosts, pending = [], []
            if len(latency) == latency.maxlen:
                log.info("p50 %.2f ms  p99 %.2f ms", np.percentile(latency, 50), np.percentile(latency, 99))
                latency.clear()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ckpt", required=True)
    p.add_argument("--config", default=None, help="json with the training args (d_model, e_layers, ...)")
    p.add_argument("--model", default="TimesNet", choices=sorted(MODELS))
    p.add_argument("--win", type=int, default=100)
    p.add_argument("--channels", type=int, default=38)
    p.add_argument("--batch", type=int, default=0, help="0 = size from free GPU memory")
    p.add_argument("--threshold-file", required=True)
    p.add_argument("--no-graph", action="store_true")
    p.add_argument("--compile", action="store_true", help="torch.compile instead of manual graph capture")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO)

    model, cfg = load_model(args)
    dtype = pick_dtype(torch.device(DEVICE))
    batch = args.batch or min(1024, max_batch_for_memory(args.win, args.channels, cfg.d_model))
    if args.compile:
        model = torch.compile(model, mode="reduce-overhead", fullgraph=False)
    scorer = GraphedScorer(model, batch, args.win, args.channels, dtype,
                           use_graph=not (args.no_graph or args.compile))
    threshold = json.load(open(args.threshold_file))["threshold"]

    in_q, out_q = queue.Queue(maxsize=10 * batch), queue.Queue()
    worker = threading.Thread(target=consumer, args=(in_q, out_q, scorer, threshold, batch), daemon=True)
    worker.start()

    # demo source: replay a .npy of shape [T, hosts, channels]
    src = np.load(os.environ.get("DETECTOR_REPLAY", "dataset/SMD/SMD_test.npy"), mmap_mode="r")
    buf = WindowBuffer(args.win, args.channels)
    t0 = time.time()
    for t in range(src.shape[0]):
        for host in range(src.shape[1]):
            w = buf.push(host, src[t, host])
            if w is not None:
                in_q.put((host, w))
    in_q.put("STOP")
    worker.join()
    n_alarm = 0
    while not out_q.empty():
        _, _, flag = out_q.get()
        n_alarm += flag
    log.info("done in %.1fs, %d alarms", time.time() - t0, n_alarm)


if __name__ == "__main__":
    main()
