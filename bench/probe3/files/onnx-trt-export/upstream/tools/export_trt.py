#!/usr/bin/env python
"""Export a detector to ONNX, check it with onnxruntime, build a TensorRT engine and benchmark all three.

    python tools/export_trt.py -f exps/yolox_s.py -c yolox_s.pth --half --batch 8 --engine yolox_s_fp16.engine
"""
import argparse
import os
import subprocess
import time

import numpy as np
import onnx
import onnxruntime as ort
import pycuda.autoinit  # noqa: F401  (creates the CUDA context)
import pycuda.driver as cuda
import tensorrt as trt
import torch
from loguru import logger

from yolox.exp import get_exp

TRT_LOGGER = trt.Logger(trt.Logger.WARNING)


def make_parser():
    parser = argparse.ArgumentParser("ONNX / TensorRT export")
    parser.add_argument("-f", "--exp_file", type=str, required=True)
    parser.add_argument("-c", "--ckpt", type=str, required=True)
    parser.add_argument("--onnx", type=str, default="model.onnx")
    parser.add_argument("--engine", type=str, default="model.engine")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--img-size", type=int, default=640)
    parser.add_argument("--opset", type=int, default=17)
    parser.add_argument("--half", action="store_true", help="fp16 engine")
    parser.add_argument("--workspace", type=int, default=4, help="builder workspace in GiB")
    parser.add_argument("--iters", type=int, default=200)
    parser.add_argument("--simplify", action="store_true")
    return parser


def export_onnx(model, args):
    model = model.cuda().eval()
    dummy = torch.randn(args.batch, 3, args.img_size, args.img_size, device="cuda")
    if args.half:
        model, dummy = model.half(), dummy.half()
    with torch.no_grad():
        reference = model(dummy)
    torch.onnx.export(
        model,
        dummy,
        args.onnx,
        opset_version=args.opset,
        input_names=["images"],
        output_names=["output"],
        dynamic_axes={"images": {0: "batch"}, "output": {0: "batch"}},
        do_constant_folding=True,
    )
    onnx_model = onnx.load(args.onnx)
    onnx.checker.check_model(onnx_model)
    if args.simplify:
        import onnxsim
        onnx_model, ok = onnxsim.simplify(onnx_model)
        assert ok, "onnx-simplifier failed"
        onnx.save(onnx_model, args.onnx)
    logger.info(f"ONNX written to {args.onnx}")
    return dummy.cpu().numpy(), reference.float().cpu().numpy()


def check_onnxruntime(args, inputs, reference):
    sess = ort.InferenceSession(args.onnx, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    out = sess.run(None, {"images": inputs})[0]
    err = np.abs(out.astype(np.float32) - reference).max()
    logger.info(f"onnxruntime max abs error vs torch: {err:.4e} ({sess.get_providers()[0]})")
    return err


def build_engine(args):
    builder = trt.Builder(TRT_LOGGER)
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    parser = trt.OnnxParser(network, TRT_LOGGER)
    with open(args.onnx, "rb") as f:
        if not parser.parse(f.read()):
            for i in range(parser.num_errors):
                logger.error(parser.get_error(i))
            raise RuntimeError("failed to parse the ONNX file")
    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, args.workspace << 30)
    if args.half and builder.platform_has_fast_fp16:
        config.set_flag(trt.BuilderFlag.FP16)
    profile = builder.create_optimization_profile()
    shape = (3, args.img_size, args.img_size)
    profile.set_shape("images", (1, *shape), (max(1, args.batch // 2), *shape), (args.batch, *shape))
    config.add_optimization_profile(profile)
    engine_bytes = builder.build_serialized_network(network, config)
    with open(args.engine, "wb") as f:
        f.write(engine_bytes)
    logger.info(f"TensorRT engine written to {args.engine}")


class TRTRunner:
    def __init__(self, engine_path, batch, img_size):
        runtime = trt.Runtime(TRT_LOGGER)
        with open(engine_path, "rb") as f:
            self.engine = runtime.deserialize_cuda_engine(f.read())
        self.context = self.engine.create_execution_context()
        self.context.set_input_shape("images", (batch, 3, img_size, img_size))
        self.stream = cuda.Stream()
        self.host, self.device, self.bindings = [], [], []
        for i in range(self.engine.num_io_tensors):
            name = self.engine.get_tensor_name(i)
            shape = self.context.get_tensor_shape(name)
            dtype = trt.nptype(self.engine.get_tensor_dtype(name))
            host_mem = cuda.pagelocked_empty(trt.volume(shape), dtype)
            device_mem = cuda.mem_alloc(host_mem.nbytes)
            self.host.append(host_mem)
            self.device.append(device_mem)
            self.bindings.append(int(device_mem))

    def infer(self, x):
        np.copyto(self.host[0], x.ravel())
        cuda.memcpy_htod_async(self.device[0], self.host[0], self.stream)
        self.context.execute_async_v2(bindings=self.bindings, stream_handle=self.stream.handle)
        cuda.memcpy_dtoh_async(self.host[1], self.device[1], self.stream)
        self.stream.synchronize()
        return self.host[1]


def benchmark_torch(model, inputs, iters):
    x = torch.from_numpy(inputs).to(next(model.parameters()).device)
    with torch.no_grad():
        for _ in range(10):
            model(x)
        torch.cuda.synchronize()  # warm-up done
        t0 = time.perf_counter()
        for _ in range(iters):
            model(x)
        torch.cuda.synchronize()
    return (time.perf_counter() - t0) / iters * 1000


def benchmark_trt(runner, inputs, iters):
    for _ in range(10):
        runner.infer(inputs)
    t0 = time.perf_counter()
    for _ in range(iters):
        runner.infer(inputs)
    return (time.perf_counter() - t0) / iters * 1000


@logger.catch
def main():
    args = make_parser().parse_args()
    exp = get_exp(args.exp_file, None)
    model = exp.get_model()
    ckpt = torch.load(args.ckpt, map_location="cpu")
    model.load_state_dict(ckpt["model"])
    model.head.decode_in_inference = True

    inputs, reference = export_onnx(model, args)
    check_onnxruntime(args, inputs, reference)
    build_engine(args)
    runner = TRTRunner(args.engine, args.batch, args.img_size)
    trt_out = runner.infer(inputs).reshape(reference.shape)
    logger.info(f"TensorRT max abs error vs torch: {np.abs(trt_out.astype(np.float32) - reference).max():.4e}")

    logger.info(f"torch    : {benchmark_torch(model, inputs, args.iters):.2f} ms / batch")
    logger.info(f"tensorrt : {benchmark_trt(runner, inputs, args.iters):.2f} ms / batch")
    logger.info(f"engine size: {os.path.getsize(args.engine) / 2 ** 20:.1f} MiB")
    subprocess.run(["trtexec", f"--loadEngine={args.engine}", "--dumpProfile", "--noDataTransfers"], check=False)


if __name__ == "__main__":
    main()
