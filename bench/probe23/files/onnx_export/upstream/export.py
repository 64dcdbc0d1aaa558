"""Export a PyTorch detection model to ONNX (optionally FP16) and verify it.

Usage:
    python export.py --weights yolo_s.pt --imgsz 640 --device 0 --half --simplify
    python export.py --weights yolo_s.pt --device cpu --dynamic
"""
import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np
import onnx
import torch

from models.experimental import attempt_load  # local helper
from utils.general import LOGGER, colorstr, file_size


def select_device(device="", batch_size=0):
    """device = 'cpu' or '0' or '0,1,2,3'."""
    s = f"torch-{torch.__version__} "
    device = str(device).strip().lower().replace("cuda:", "").replace("none", "")
    cpu = device == "cpu"
    if cpu:
        os.environ["CUDA_VISIBLE_DEVICES"] = "-1"  # force torch.cuda.is_available() = False
    elif device:
        os.environ["CUDA_VISIBLE_DEVICES"] = device
        assert torch.cuda.is_available() and torch.cuda.device_count() >= len(device.replace(",", "")), \
            f"Invalid CUDA '--device {device}' requested, use '--device cpu' or pass valid CUDA device(s)"

    if not cpu and torch.cuda.is_available():
        devices = device.split(",") if device else "0"
        n = len(devices)
        if n > 1 and batch_size > 0:
            assert batch_size % n == 0, f"batch-size {batch_size} not multiple of GPU count {n}"
        space = " " * (len(s) + 1)
        for i, d in enumerate(devices):
            p = torch.cuda.get_device_properties(i)
            s += f"{'' if i == 0 else space}CUDA:{d} ({p.name}, {p.total_memory / (1 << 20):.0f}MiB)\n"
        arg = "cuda:0"
    else:
        s += "CPU\n"
        arg = "cpu"
    LOGGER.info(s.rstrip() if platform.system() != "Windows" else s.encode().decode("ascii", "ignore"))
    return torch.device(arg)


def export_onnx(model, im, file, opset, dynamic, simplify, prefix=colorstr("ONNX:")):
    f = file.with_suffix(".onnx")
    LOGGER.info(f"\n{prefix} starting export with onnx {onnx.__version__}...")
    torch.onnx.export(
        model.cpu() if dynamic else model,  # dynamic export is only supported on CPU
        im.cpu() if dynamic else im,
        f,
        verbose=False,
        opset_version=opset,
        do_constant_folding=True,
        input_names=["images"],
        output_names=["output0"],
        dynamic_axes={"images": {0: "batch", 2: "height", 3: "width"}} if dynamic else None,
    )
    model_onnx = onnx.load(f)
    onnx.checker.check_model(model_onnx)
    if simplify:
        import onnxsim
        model_onnx, ok = onnxsim.simplify(model_onnx)
        assert ok, "onnxsim check failed"
        onnx.save(model_onnx, f)
    LOGGER.info(f"{prefix} export success, saved as {f} ({file_size(f):.1f} MB)")
    return f


def verify_onnxruntime(f, im, torch_out, cuda):
    import onnxruntime as ort
    providers = ["CUDAExecutionProvider", "CPUExecutionProvider"] if cuda else ["CPUExecutionProvider"]
    sess = ort.InferenceSession(str(f), providers=providers)
    ort_out = sess.run(None, {sess.get_inputs()[0].name: im.cpu().numpy()})[0]
    err = np.abs(ort_out.astype(np.float32) - torch_out.float().cpu().numpy()).max()
    LOGGER.info(f"onnxruntime ({sess.get_providers()[0]}) max abs diff vs torch: {err:.2e}")


def run(weights="yolo_s.pt", imgsz=(640, 640), batch_size=1, device="cpu", half=False,
        dynamic=False, simplify=False, opset=17, verify=True):
    t = time.time()
    file = Path(weights)
    device = select_device(device)
    if half:
        assert device.type != "cpu", "--half only compatible with GPU export, i.e. use --device 0"
        assert not dynamic, "--half not compatible with --dynamic"
    model = attempt_load(weights, device=device, inplace=True, fuse=True)
    im = torch.zeros(batch_size, 3, *imgsz).to(device)
    model.eval()
    for k, m in model.named_modules():
        if hasattr(m, "export"):
            m.export = True
    for _ in range(2):
        y = model(im)  # dry runs
    if half:
        im, model = im.half(), model.half()
        y = model(im)
    f = export_onnx(model, im, file, opset, dynamic, simplify)
    if verify:
        verify_onnxruntime(f, im, y[0] if isinstance(y, (list, tuple)) else y, cuda=device.type == "cuda")
    LOGGER.info(f"\nExport complete ({time.time() - t:.1f}s)")
    return f


def parse_opt():
    parser = argparse.ArgumentParser()
    parser.add_argument("--weights", type=str, default="yolo_s.pt")
    parser.add_argument("--imgsz", nargs="+", type=int, default=[640, 640])
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--device", default="cpu", help="cuda device, i.e. 0 or 0,1,2,3 or cpu")
    parser.add_argument("--half", action="store_true", help="FP16 half-precision export (GPU only)")
    parser.add_argument("--dynamic", action="store_true", help="ONNX: dynamic axes")
    parser.add_argument("--simplify", action="store_true")
    parser.add_argument("--opset", type=int, default=17)
    return parser.parse_args()


if __name__ == "__main__":
    opt = parse_opt()
    run(**vars(opt))
