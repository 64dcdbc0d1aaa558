#!/usr/bin/env python3
"""Export a (optionally QAT-fine-tuned) torchvision ResNet to ONNX, check it with ONNX Runtime
and build a TensorRT engine with trtexec.

    python deploy/export_resnet.py --config configs/resnet50_int8.yaml --ckpt runs/qat/best.pth

Steps
  1. load the fp32 / fake-quant model on the GPU
  2. torch.onnx.export (opset 13, Q/DQ nodes kept when --qdq)
  3. compare PyTorch vs ONNX Runtime (CUDA EP) outputs on a few random batches
  4. trtexec --onnx=... --saveEngine=... (--int8 / --fp16 / --best)
"""
import argparse
import logging
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torchvision
import yaml

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
log = logging.getLogger("export_resnet")

TRTEXEC = os.environ.get("TRTEXEC", "/usr/src/tensorrt/bin/trtexec")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", required=True, help="yaml with model/export/engine sections")
    p.add_argument("--ckpt", default=None, help="state_dict to load (fp32 or pytorch-quantization QAT)")
    p.add_argument("--qdq", action="store_true", help="model contains pytorch-quantization TensorQuantizers")
    p.add_argument("--out-dir", default="export")
    p.add_argument("--skip-engine", action="store_true", help="only export + check the ONNX file")
    p.add_argument("--gpu", type=int, default=0)
    return p.parse_args()


def load_cfg(path):
    with open(path) as f:
        cfg = yaml.safe_load(f)
    cfg.setdefault("export", {})
    cfg.setdefault("engine", {})
    return cfg


def build_model(cfg, ckpt, qdq, device):
    arch = cfg["model"]["arch"]
    if qdq:
        from pytorch_quantization import nn as quant_nn
        from pytorch_quantization import quant_modules
        quant_modules.initialize()
        quant_nn.TensorQuantizer.use_fb_fake_quant = True
    model = torchvision.models.__dict__[arch](weights=None if ckpt else "DEFAULT")
    if ckpt:
        state = torch.load(ckpt, map_location="cpu")
        state = state.get("model", state)
        missing, unexpected = model.load_state_dict(state, strict=False)
        log.info("loaded %s (missing=%d unexpected=%d)", ckpt, len(missing), len(unexpected))
    return model.eval().to(device)


def export(model, cfg, out_path, device):
    exp = cfg["export"]
    bs = exp.get("batch_size", 1)
    res = cfg["model"].get("input_size", 224)
    dummy = torch.randn(bs, 3, res, res, device=device)
    dynamic_axes = {"input": {0: "batch"}, "output": {0: "batch"}} if exp.get("dynamic_batch", True) else None
    if exp.get("fp16", False):
        model, dummy = model.half(), dummy.half()
    t0 = time.time()
    with torch.no_grad():
        torch.onnx.export(
            model,
            dummy,
            out_path,
            opset_version=exp.get("opset", 13),
            input_names=["input"],
            output_names=["output"],
            dynamic_axes=dynamic_axes,
            do_constant_folding=True,
        )
    onnx.checker.check_model(onnx.load(out_path))
    log.info("exported %s in %.1fs", out_path, time.time() - t0)
    return dummy


def check_with_ort(model, onnx_path, dummy, n_batches=3, atol=1e-2):
    providers = [("CUDAExecutionProvider", {"device_id": torch.cuda.current_device()}), "CPUExecutionProvider"]
    sess = ort.InferenceSession(onnx_path, providers=providers)
    log.info("ONNX Runtime providers: %s", sess.get_providers())
    worst = 0.0
    for _ in range(n_batches):
        x = torch.randn_like(dummy)
        with torch.no_grad():
            ref = model(x).float().cpu().numpy()
        out = sess.run(None, {"input": x.cpu().numpy()})[0].astype(np.float32)
        worst = max(worst, float(np.abs(ref - out).max()))
    log.info("max |torch - ort| = %.4e", worst)
    if worst > atol:
        log.warning("ONNX Runtime mismatch above %.1e - check unsupported Q/DQ patterns", atol)
    return worst


def build_engine(onnx_path, engine_path, cfg):
    eng = cfg["engine"]
    if not (shutil.which("trtexec") or os.path.exists(TRTEXEC)):
        raise FileNotFoundError("trtexec not found; run inside nvcr.io/nvidia/tensorrt or set $TRTEXEC")
    cmd = [
        TRTEXEC,
        f"--onnx={onnx_path}",
        f"--saveEngine={engine_path}",
        f"--memPoolSize=workspace:{eng.get('workspace_mb', 4096)}",
        "--verbose" if eng.get("verbose") else "--noDataTransfers",
    ]
    if eng.get("int8"):
        cmd.append("--int8")
    if eng.get("fp16", True):
        cmd.append("--fp16")
    if eng.get("best"):
        cmd.append("--best")
    bs = eng.get("batch_sizes", [1, 8, 32])
    cmd += [f"--minShapes=input:{bs[0]}x3x224x224", f"--optShapes=input:{bs[1]}x3x224x224", f"--maxShapes=input:{bs[2]}x3x224x224"]
    log.info("running: %s", " ".join(cmd))
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        log.error(proc.stdout[-4000:])
        log.error(proc.stderr[-4000:])
        raise RuntimeError("trtexec failed")
    for line in proc.stdout.splitlines():
        if "Throughput" in line or "GPU Compute Time" in line:
            log.info(line.strip())


def main():
    args = parse_args()
    cfg = load_cfg(args.config)
    if not torch.cuda.is_available():
        log.error("A CUDA GPU is required for export (fake-quant kernels + engine build)")
        sys.exit(1)
    torch.cuda.set_device(args.gpu)
    device = torch.device("cuda", args.gpu)
    torch.backends.cudnn.deterministic = True

    os.makedirs(args.out_dir, exist_ok=True)
    stem = f"{cfg['model']['arch']}_{'qdq' if args.qdq else 'fp'}"
    onnx_path = os.path.join(args.out_dir, stem + ".onnx")
    engine_path = os.path.join(args.out_dir, stem + ".engine")

    model = build_model(cfg, args.ckpt, args.qdq, device)
    dummy = export(model, cfg, onnx_path, device)
    check_with_ort(model, onnx_path, dummy)

    if not args.skip_engine:
        build_engine(onnx_path, engine_path, cfg)
        log.info("engine written to %s", engine_path)


if __name__ == "__main__":
    main()
