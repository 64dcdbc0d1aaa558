"""
Export an EfficientViT classification model to ONNX and (optionally) build / benchmark a
TensorRT engine from it.

    python assets/onnx_export.py --model efficientvit-b1-r224 --export_path assets/export_models/b1.onnx
    python assets/onnx_export.py --model efficientvit-l2-r384 --resolution 384 --fp16 --build_trt

TensorRT >= 8.6 and pycuda are only needed for --build_trt.
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np
import onnx
import torch
from onnxsim import simplify as simplify_func

BASE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.append(BASE_DIR)

from efficientvit.cls_model_zoo import create_efficientvit_cls_model  # noqa: E402


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--export_path", type=str, default="assets/export_models/efficientvit_cls.onnx")
    parser.add_argument("--model", type=str, default="efficientvit-b1-r224")
    parser.add_argument("--weight_url", type=str, default=None)
    parser.add_argument("--resolution", type=int, default=224)
    parser.add_argument("--bs", help="batch size", type=int, default=16)
    parser.add_argument("--op_set", type=int, default=17)
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--no_simplify", action="store_true")
    parser.add_argument("--build_trt", action="store_true")
    parser.add_argument("--trt_workspace", type=int, default=4096, help="MiB")
    parser.add_argument("--runs", type=int, default=200)
    return parser.parse_args()


def export_onnx(model, args, device):
    dummy_input = torch.rand((args.bs, 3, args.resolution, args.resolution)).to(device)
    if args.fp16:
        model = model.half()
        dummy_input = dummy_input.half()

    os.makedirs(os.path.dirname(args.export_path) or ".", exist_ok=True)
    with torch.no_grad():
        torch.onnx.export(
            model,
            dummy_input,
            args.export_path,
            opset_version=args.op_set,
            input_names=["input"],
            output_names=["output"],
            do_constant_folding=True,
        )

    if not args.no_simplify:
        onnx_model = onnx.load(args.export_path)
        onnx_model, success = simplify_func(onnx_model)
        assert success, "onnxsim failed"
        onnx.save(onnx_model, args.export_path)
    print(f"exported {args.export_path}")


def build_trt_engine(onnx_path, engine_path, fp16=False, workspace=4096):
    cmd = ["trtexec", f"--onnx={onnx_path}", f"--saveEngine={engine_path}", f"--memPoolSize=workspace:{workspace}"]
    if fp16:
        cmd.append("--fp16")
    print(" ".join(cmd))
    subprocess.run(cmd, check=True)


def benchmark_trt(engine_path, input_shape, num_classes=1000, runs=200):
    import tensorrt as trt
    import pycuda.autoinit  # noqa: F401
    import pycuda.driver as cuda

    logger = trt.Logger(trt.Logger.WARNING)
    with open(engine_path, "rb") as f, trt.Runtime(logger) as runtime:
        engine = runtime.deserialize_cuda_engine(f.read())
    context = engine.create_execution_context()

    h_input = np.random.rand(*input_shape).astype(np.float32)
    h_output = np.empty((input_shape[0], num_classes), dtype=np.float32)
    d_input = cuda.mem_alloc(h_input.nbytes)
    d_output = cuda.mem_alloc(h_output.nbytes)
    stream = cuda.Stream()

    def infer():
        cuda.memcpy_htod_async(d_input, h_input, stream)
        context.execute_async_v2(bindings=[int(d_input), int(d_output)], stream_handle=stream.handle)
        cuda.memcpy_dtoh_async(h_output, d_output, stream)
        stream.synchronize()

    for _ in range(20):
        infer()
    t0 = time.time()
    for _ in range(runs):
        infer()
    elapsed = time.time() - t0
    return runs * input_shape[0] / elapsed


@torch.no_grad()
def benchmark_torch(model, input_shape, device, runs=200, fp16=False):
    x = torch.rand(*input_shape, device=device)
    if fp16:
        x = x.half()
    for _ in range(20):
        model(x)
    torch.cuda.synchronize()
    t0 = time.time()
    for _ in range(runs):
        model(x)
    torch.cuda.synchronize(device)
    return runs * input_shape[0] / (time.time() - t0)


def main():
    args = parse_args()
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

    model = create_efficientvit_cls_model(args.model, pretrained=args.weight_url is not None, weight_url=args.weight_url)
    model = model.to(device).eval()

    export_onnx(model, args, device)

    input_shape = (args.bs, 3, args.resolution, args.resolution)
    if args.fp16:
        model = model.half()
    print(f"PyTorch: {benchmark_torch(model, input_shape, device, args.runs, args.fp16):.1f} img/s")

    if args.build_trt:
        engine_path = os.path.splitext(args.export_path)[0] + (".fp16" if args.fp16 else "") + ".engine"
        build_trt_engine(args.export_path, engine_path, args.fp16, args.trt_workspace)
        print(f"TensorRT: {benchmark_trt(engine_path, input_shape, runs=args.runs):.1f} img/s")


if __name__ == "__main__":
    main()
