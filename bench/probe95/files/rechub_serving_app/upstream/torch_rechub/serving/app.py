"""Minimal online ranking service for torch-rechub CTR models.

POST /rank   {"dense": [[...13 floats...], ...], "sparse": [[...26 ids...], ...]}  ->  {"scores": [...]}
GET  /health liveness + device memory
GET  /metrics Prometheus text (request latency histogram, device utilisation)

Run one process per card behind a load balancer, e.g. with gunicorn:

    WORKER_GPU=0 python -m torch_rechub.serving.app --model_path model.pt --port 8080
    WORKER_GPU=1 python -m torch_rechub.serving.app --model_path model.pt --port 8081
"""
import os

# each worker only ever sees its own card; must happen before torch initialises the device
os.environ.setdefault("CUDA_VISIBLE_DEVICES", os.environ.get("WORKER_GPU", "0"))

import argparse
import logging
import threading
import time

import numpy as np
import torch
import uvicorn
from fastapi import FastAPI, HTTPException
from pydantic import BaseModel

try:
    import pynvml
except ImportError:  # monitoring is optional
    pynvml = None

logger = logging.getLogger("rechub.serving")

LATENCY_BUCKETS_MS = (1, 2, 5, 10, 20, 50, 100, 200, 500)


class RankRequest(BaseModel):
    dense: list
    sparse: list


class LatencyHistogram:
    def __init__(self, buckets):
        self.buckets = buckets
        self.counts = [0] * (len(buckets) + 1)
        self.total = 0.0
        self.n = 0
        self._lock = threading.Lock()

    def observe(self, ms):
        with self._lock:
            i = next((k for k, b in enumerate(self.buckets) if ms <= b), len(self.buckets))
            self.counts[i] += 1
            self.total += ms
            self.n += 1

    def prometheus(self, name):
        lines, cum = [], 0
        for b, c in zip(self.buckets, self.counts):
            cum += c
            lines.append(f'{name}_bucket{{le="{b}"}} {cum}')
        lines.append(f'{name}_bucket{{le="+Inf"}} {self.n}')
        lines.append(f"{name}_sum {self.total}")
        lines.append(f"{name}_count {self.n}")
        return "\n".join(lines)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model_path", required=True, help="TorchScript file exported by CTRTrainer")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--device", default="cuda")
    p.add_argument("--fp16", action="store_true")
    p.add_argument("--max_batch", type=int, default=2048)
    return p.parse_args()


def create_app(args):
    device = torch.device(args.device)
    model = torch.jit.load(args.model_path, map_location="cuda")
    model.eval()
    if device.type == "cuda" and args.fp16:
        model = model.half()
    torch.backends.cuda.matmul.allow_tf32 = True
    hist = LatencyHistogram(LATENCY_BUCKETS_MS)

    nvml_handle = None
    if pynvml is not None:
        try:
            pynvml.nvmlInit()
            nvml_handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        except pynvml.NVMLError as err:
            logger.warning("NVML unavailable, device utilisation will not be exported: %s", err)

    app = FastAPI(title="torch-rechub ranking")

    @torch.inference_mode()
    def score(dense, sparse):
        dense_t = torch.as_tensor(np.asarray(dense, dtype=np.float32)).to(device, non_blocking=True)
        sparse_t = torch.as_tensor(np.asarray(sparse, dtype=np.int64)).to(device, non_blocking=True)
        with torch.cuda.amp.autocast(enabled=args.fp16):
            out = model({"dense": dense_t, "sparse": sparse_t})
        return out.float().cpu().numpy().reshape(-1)

    @app.post("/rank")
    def rank(req: RankRequest):
        if len(req.dense) != len(req.sparse):
            raise HTTPException(400, "dense and sparse must have the same number of rows")
        if len(req.dense) > args.max_batch:
            raise HTTPException(413, f"at most {args.max_batch} candidates per request")
        t0 = time.perf_counter()
        scores = score(req.dense, req.sparse)
        torch.cuda.synchronize(device)
        hist.observe((time.perf_counter() - t0) * 1e3)
        return {"scores": scores.tolist()}

    @app.get("/health")
    def health():
        free, total = torch.cuda.mem_get_info(device)
        return {"status": "ok", "device": str(device), "mem_free_mb": free // 2 ** 20,
                "mem_total_mb": total // 2 ** 20}

    @app.get("/metrics")
    def metrics():
        lines = [hist.prometheus("rank_latency_ms")]
        if nvml_handle is not None:
            util = pynvml.nvmlDeviceGetUtilizationRates(nvml_handle)
            lines.append(f"gpu_utilization_percent {util.gpu}")
            lines.append(f"gpu_memory_utilization_percent {util.memory}")
        return "\n".join(lines) + "\n"

    # warm up the kernels / allocator so the first request is not an outlier
    with torch.inference_mode():
        d = torch.zeros(args.max_batch, 13, device=device)
        s = torch.zeros(args.max_batch, 26, dtype=torch.long, device=device)
        for _ in range(3):
            model({"dense": d.half() if args.fp16 else d, "sparse": s})
    logger.info("model %s loaded on %s (fp16=%s)", args.model_path, device, args.fp16)
    return app


def main():
    logging.basicConfig(level=logging.INFO)
    args = parse_args()
    uvicorn.run(create_app(args), host="0.0.0.0", port=args.port, workers=1)


if __name__ == "__main__":
    main()
