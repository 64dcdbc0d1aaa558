#!/usr/bin/env python
"""
Export a trained AASIST / AASIST-L countermeasure to TorchScript and ONNX for the
liveness-detection service, and check that ONNX Runtime reproduces the PyTorch
scores.

  python tools/export_onnx.py --config config/AASIST-L.conf \
      --weights models/weights/AASIST-L.pth --out export/aasist_l
"""
import argparse
import json
import os
import sys
import time
from importlib import import_module

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

NB_SAMP = 64600  # ~4 s at 16 kHz, the fixed input length used in training


class ScoreWrapper(torch.nn.Module):
    """AASIST returns (embedding, logits); the service only needs the
    bona fide score (logit difference)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, wav):
        _, logits = self.model(wav)
        return logits[:, 1] - logits[:, 0]


def build(config_path, weights):
    with open(config_path) as f:
        config = json.load(f)
    mc = config["model_config"]
    model = getattr(import_module("models.{}".format(mc["architecture"])), "Model")(mc)
    state = torch.load(weights, map_location="cpu")
    model.load_state_dict(state)
    return ScoreWrapper(model).eval()


def export_torchscript(model, example, path):
    with torch.no_grad():
        traced = torch.jit.trace(model, example, check_trace=False)
    traced.save(path)
    print("TorchScript ->", path)
    return traced


def export_onnx(model, example, path, opset):
    torch.onnx.export(
        model, example, path,
        input_names=["wav"], output_names=["score"],
        dynamic_axes={"wav": {0: "batch"}, "score": {0: "batch"}},
        opset_version=opset, do_constant_folding=True,
    )
    print("ONNX ->", path)


def check_onnx(path, example_np, ref):
    import onnxruntime as ort
    providers = ["CUDAExecutionProvider", "CPUExecutionProvider"]
    sess = ort.InferenceSession(path, providers=providers)
    print("ORT providers:", sess.get_providers())
    t0 = time.perf_counter()
    out = sess.run(["score"], {"wav": example_np})[0]
    dt = (time.perf_counter() - t0) * 1000
    err = np.abs(out - ref).max()
    print("max |ort - torch| = {:.2e}  ({:.1f} ms)".format(err, dt))
    return err


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", required=True)
    p.add_argument("--weights", required=True)
    p.add_argument("--out", default="export/aasist")
    p.add_argument("--opset", type=int, default=17)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--tol", type=float, default=1e-3)
    args = p.parse_args()

    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    model = build(args.config, args.weights)

    # tracing on the GPU so that the exported graph matches the serving setup
    model = model.cuda()
    example = torch.randn(args.batch, NB_SAMP).cuda()

    with torch.no_grad():
        ref = model(example).cpu().numpy()

    export_torchscript(model, example, args.out + ".ts.pt")
    # ONNX export is done on CPU to get deterministic constant folding
    model_cpu = model.cpu()
    example_cpu = example.cpu()
    export_onnx(model_cpu, example_cpu, args.out + ".onnx", args.opset)

    err = check_onnx(args.out + ".onnx", example_cpu.numpy(), ref)
    if err > args.tol:
        raise SystemExit("ONNX output deviates from PyTorch by {:.2e} > {:.1e}".format(err, args.tol))
    print("export OK")


if __name__ == "__main__":
    main()
