"""Export a (pruned / quantized) PyTorch model to OpenVINO IR and benchmark it.

This path is CPU-only: it is what we ship to edge boxes without a GPU. The
OpenVINO "GPU" device below means an Intel integrated/discrete GPU, not CUDA.

    python tools/export_openvino.py --ckpt runs/pruned.pth --arch resnet50 --device CPU
"""
import argparse
import time
from pathlib import Path

import numpy as np
import openvino as ov
import torch
import torchvision


def load_torch_model(arch: str, ckpt: str) -> torch.nn.Module:
    obj = torch.load(ckpt, map_location="cpu")
    if isinstance(obj, torch.nn.Module):  # pruned checkpoints store the full module
        model = obj
    else:
        model = getattr(torchvision.models, arch)(weights=None)
        model.load_state_dict(obj.get("model", obj))
    return model.eval().cpu()


def convert(model: torch.nn.Module, out_dir: Path, input_shape, compress_fp16: bool) -> Path:
    example = torch.randn(*input_shape)
    with torch.no_grad():
        ov_model = ov.convert_model(model, example_input=example)
    out_dir.mkdir(parents=True, exist_ok=True)
    xml = out_dir / "model.xml"
    ov.save_model(ov_model, xml, compress_to_fp16=compress_fp16)
    return xml


def check_against_torch(model, compiled, input_shape, atol=1e-3):
    x = torch.randn(*input_shape)
    with torch.no_grad():
        ref = model(x).numpy()
    out = compiled(x.numpy())[0]
    err = float(np.abs(out - ref).max())
    print(f"max abs diff vs torch (cpu): {err:.2e}")
    return err < atol


def benchmark(compiled, input_shape, seconds=10.0, nireq=4):
    x = np.random.rand(*input_shape).astype(np.float32)
    queue = ov.AsyncInferQueue(compiled, nireq)
    done = 0

    def cb(_req, _ud):
        nonlocal done
        done += 1

    queue.set_callback(cb)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        queue.start_async({0: x})
    queue.wait_all()
    dt = time.perf_counter() - t0
    print(f"throughput: {done * input_shape[0] / dt:.1f} img/s ({nireq} infer requests)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--arch", default="resnet50")
    ap.add_argument("--out", default="exports/openvino")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--device", default="CPU", choices=["CPU", "GPU", "AUTO"],
                    help="OpenVINO device (GPU = Intel GPU, CUDA is not used here)")
    ap.add_argument("--fp16", action="store_true", help="compress weights to FP16 in the IR")
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()

    torch.set_num_threads(max(1, args.threads or torch.get_num_threads()))
    shape = (args.batch, 3, 224, 224)
    model = load_torch_model(args.arch, args.ckpt)
    xml = convert(model, Path(args.out), shape, args.fp16)

    core = ov.Core()
    print("available devices:", core.available_devices)
    config = {"PERFORMANCE_HINT": "THROUGHPUT"}
    if args.threads:
        config["INFERENCE_NUM_THREADS"] = str(args.threads)
    compiled = core.compile_model(core.read_model(xml), args.device, config)
    ok = check_against_torch(model, compiled, shape)
    benchmark(compiled, shape)
    print("saved", xml, "| accuracy check", "passed" if ok else "FAILED")


if __name__ == "__main__":
    main()
