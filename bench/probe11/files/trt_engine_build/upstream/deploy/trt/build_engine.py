"""Build a TensorRT engine from an ONNX vision encoder (ViT / CLIP image tower) and run it with pycuda.

    python deploy/trt/build_engine.py build --onnx vit.onnx --engine vit_fp16.plan --fp16 --max-batch 32
    python deploy/trt/build_engine.py infer --engine vit_fp16.plan --images samples/*.jpg
"""
import argparse
import glob
import os
import time

import numpy as np
import pycuda.autoinit  # noqa: F401  (creates the CUDA context)
import pycuda.driver as cuda
import tensorrt as trt
from PIL import Image

TRT_LOGGER = trt.Logger(trt.Logger.WARNING)
MEAN = np.array([0.48145466, 0.4578275, 0.40821073], dtype=np.float32)
STD = np.array([0.26862954, 0.26130258, 0.27577711], dtype=np.float32)


def build_engine(onnx_path, engine_path, fp16=True, int8=False, max_batch=32, image_size=224, workspace_gb=4):
    builder = trt.Builder(TRT_LOGGER)
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    parser = trt.OnnxParser(network, TRT_LOGGER)
    with open(onnx_path, "rb") as f:
        if not parser.parse(f.read()):
            for i in range(parser.num_errors):
                print(parser.get_error(i))
            raise RuntimeError(f"failed to parse {onnx_path}")

    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, workspace_gb << 30)
    if fp16 and builder.platform_has_fast_fp16:
        config.set_flag(trt.BuilderFlag.FP16)
    if int8:
        config.set_flag(trt.BuilderFlag.INT8)

    profile = builder.create_optimization_profile()
    inp = network.get_input(0)
    profile.set_shape(inp.name, (1, 3, image_size, image_size), (max_batch // 2, 3, image_size, image_size),
                      (max_batch, 3, image_size, image_size))
    config.add_optimization_profile(profile)

    t0 = time.time()
    serialized = builder.build_serialized_network(network, config)
    if serialized is None:
        raise RuntimeError("engine build failed")
    with open(engine_path, "wb") as f:
        f.write(serialized)
    print(f"built {engine_path} in {time.time() - t0:.0f}s ({os.path.getsize(engine_path) / 2**20:.1f} MiB)")


def preprocess(path, image_size=224):
    img = Image.open(path).convert("RGB").resize((image_size, image_size), Image.BICUBIC)
    arr = np.asarray(img, dtype=np.float32) / 255.0
    arr = (arr - MEAN) / STD
    return arr.transpose(2, 0, 1)


class TrtRunner:
    def __init__(self, engine_path):
        runtime = trt.Runtime(TRT_LOGGER)
        with open(engine_path, "rb") as f:
            self.engine = runtime.deserialize_cuda_engine(f.read())
        self.context = self.engine.create_execution_context()
        self.stream = cuda.Stream()
        self.input_name = self.engine.get_tensor_name(0)
        self.output_name = self.engine.get_tensor_name(1)
        self.buffers = {}

    def _alloc(self, batch, image_size, out_dim):
        key = (batch, image_size)
        if key in self.buffers:
            return self.buffers[key]
        h_in = cuda.pagelocked_empty((batch, 3, image_size, image_size), dtype=np.float32)
        h_out = cuda.pagelocked_empty((batch, out_dim), dtype=np.float32)
        d_in = cuda.mem_alloc(h_in.nbytes)
        d_out = cuda.mem_alloc(h_out.nbytes)
        self.buffers[key] = (h_in, h_out, d_in, d_out)
        return self.buffers[key]

    def __call__(self, batch_np):
        b, _, s, _ = batch_np.shape
        self.context.set_input_shape(self.input_name, batch_np.shape)
        out_dim = self.context.get_tensor_shape(self.output_name)[-1]
        h_in, h_out, d_in, d_out = self._alloc(b, s, out_dim)
        np.copyto(h_in, batch_np)
        self.context.set_tensor_address(self.input_name, int(d_in))
        self.context.set_tensor_address(self.output_name, int(d_out))
        cuda.memcpy_htod_async(d_in, h_in, self.stream)
        self.context.execute_async_v3(stream_handle=self.stream.handle)
        cuda.memcpy_dtoh_async(h_out, d_out, self.stream)
        self.stream.synchronize()
        return h_out.copy()


def infer(args):
    runner = TrtRunner(args.engine)
    paths = sorted(p for pattern in args.images for p in glob.glob(pattern))
    if not paths:
        raise SystemExit("no images")
    batch = np.stack([preprocess(p, args.image_size) for p in paths]).astype(np.float32)
    runner(batch)  # warm-up
    t0 = time.perf_counter()
    for _ in range(args.iters):
        emb = runner(batch)
    dt = (time.perf_counter() - t0) / args.iters
    emb = emb / np.linalg.norm(emb, axis=-1, keepdims=True)
    print(f"{len(paths)} images, {dt * 1000:.2f} ms/batch, emb dim {emb.shape[-1]}")
    if args.save:
        np.save(args.save, emb)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["build", "infer"])
    ap.add_argument("--onnx")
    ap.add_argument("--engine", required=True)
    ap.add_argument("--fp16", action="store_true")
    ap.add_argument("--int8", action="store_true")
    ap.add_argument("--max-batch", type=int, default=32)
    ap.add_argument("--image-size", type=int, default=224)
    ap.add_argument("--images", nargs="*", default=[])
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--save", default=None)
    args = ap.parse_args()
    if args.cmd == "build":
        build_engine(args.onnx, args.engine, fp16=args.fp16, int8=args.int8, max_batch=args.max_batch,
                     image_size=args.image_size)
    else:
        infer(args)


if __name__ == "__main__":
    main()
