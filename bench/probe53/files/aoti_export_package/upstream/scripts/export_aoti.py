#!/usr/bin/env python3
"""Export the detector backbone with torch.export and package it with AOTInductor.

The .pt2 package is what the C++ serving binary loads (torch::inductor::AOTIModelPackageLoader);
this script also reloads it in Python and checks it against eager.

    python scripts/export_aoti.py --ckpt runs/best.pt --out artifacts/backbone.pt2 --dynamic-batch
"""
import argparse
import json
import os
import time
from typing import Tuple

import torch
import torch._inductor
from torch.export import Dim

from models.backbone import build_backbone


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--ckpt", required=True)
    p.add_argument("--arch", default="convnext_tiny")
    p.add_argument("--out", default="artifacts/backbone.pt2")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--img-size", type=int, default=640)
    p.add_argument("--dynamic-batch", action="store_true")
    p.add_argument("--max-autotune", action="store_true")
    p.add_argument("--fp16", action="store_true")
    p.add_argument("--legacy-so", action="store_true", help="torch<=2.4: produce a bare .so with torch._export.aot_compile")
    p.add_argument("--save-ep", action="store_true", help="also write the ExportedProgram (.ep) next to the package")
    return p.parse_args()


class ExportWrapper(torch.nn.Module):
    """Flatten the feature dict into a tuple: torch.export wants pytree-friendly outputs."""

    def __init__(self, backbone, out_features):
        super().__init__()
        self.backbone = backbone
        self.out_features = list(out_features)

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        feats = self.backbone(x)
        return tuple(feats[k] for k in self.out_features)


def load_model(args, device):
    backbone = build_backbone(args.arch)
    state = torch.load(args.ckpt, map_location="cpu", weights_only=True)
    state = state.get("model", state)
    missing, unexpected = backbone.load_state_dict(state, strict=False)
    if missing:
        print(f"missing keys: {len(missing)} (first: {missing[:3]})")
    model = ExportWrapper(backbone, backbone.out_features).eval().to(device)
    if args.fp16:
        model = model.half()
    return model


def export_program(model, example_inputs, dynamic_batch: bool):
    dynamic_shapes = None
    if dynamic_batch:
        batch = Dim("batch", min=1, max=64)
        dynamic_shapes = {"x": {0: batch}}
    with torch.no_grad():
        ep = torch.export.export(model, example_inputs, dynamic_shapes=dynamic_shapes, strict=False)
    return ep


def package(ep, out_path: str, max_autotune: bool) -> str:
    inductor_configs = {
        "max_autotune": max_autotune,
        "epilogue_fusion": True,
        "aot_inductor.package_cpp_only": False,
    }
    os.makedirs(os.path.dirname(out_path) or ".", exist_ok=True)
    return torch._inductor.aoti_compile_and_package(
        ep,
        package_path=out_path,
        inductor_configs=inductor_configs,
    )


def legacy_so(model, example_inputs, out_dir: str):
    so_path = torch._export.aot_compile(
        model,
        example_inputs,
        options={"aot_inductor.output_path": os.path.join(out_dir, "backbone.so")},
    )
    runner = torch._C._aoti.AOTIModelContainerRunnerCuda(so_path, 1)
    return so_path, lambda *xs: runner.run(list(xs))


def time_fn(fn, inputs, iters=50):
    for _ in range(5):
        fn(*inputs)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn(*inputs)
    torch.cuda.synchronize()  # end of timed loop
    return (time.perf_counter() - t0) / iters * 1e3


def max_abs_diff(a, b):
    return max((x.float() - y.float()).abs().max().item() for x, y in zip(a, b))


def main():
    args = parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = load_model(args, device)
    dtype = torch.half if args.fp16 else torch.float32
    example_inputs = (torch.randn(args.batch, 3, args.img_size, args.img_size, device=device, dtype=dtype),)

    with torch.no_grad():
        ref = model(*example_inputs)

    t0 = time.time()
    if args.legacy_so:
        so_path, compiled = legacy_so(model, example_inputs, os.path.dirname(args.out) or ".")
        artefact = so_path
    else:
        ep = export_program(model, example_inputs, args.dynamic_batch)
        print(ep.graph_signature)
        if args.save_ep:
            torch.export.save(ep, os.path.splitext(args.out)[0] + ".ep")
        artefact = package(ep, args.out, args.max_autotune)
        compiled = torch._inductor.aoti_load_package(artefact)
    print(f"AOTInductor build: {time.time() - t0:.1f}s -> {artefact}")

    with torch.no_grad():
        out = compiled(*example_inputs)
    diff = max_abs_diff(ref, out)
    eager_ms = time_fn(model, example_inputs)
    aoti_ms = time_fn(compiled, example_inputs)
    print(f"max |diff| {diff:.3e}   eager {eager_ms:.2f} ms   aoti {aoti_ms:.2f} ms")

    meta = {
        "arch": args.arch,
        "batch": args.batch,
        "dynamic_batch": args.dynamic_batch,
        "dtype": str(dtype),
        "device": device,
        "torch": torch.__version__,
        "max_abs_diff": diff,
    }
    with open(os.path.splitext(args.out)[0] + ".json", "w") as f:
        json.dump(meta, f, indent=2)


if __name__ == "__main__":
    main()
