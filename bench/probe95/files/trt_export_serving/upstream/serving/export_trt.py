"""Export a trained CTR ranker to ONNX and build a TensorRT engine for the online ranking service.

    python serving/export_trt.py --model deepfm --checkpoint ckpt/deepfm_best.pt \
        --onnx deepfm.onnx --engine deepfm_fp16.plan --max_batch 1024 --fp16

The engine takes the same named inputs as the PyTorch model (dense_x float32 [B, 13], sparse_x int32 [B, 26])
with a dynamic batch dimension, and is checked against PyTorch on a random batch before it is saved.
"""
import argparse
import os

import numpy as np
import torch

import pycuda.autoinit  # noqa: F401  (creates the CUDA context)
import pycuda.driver as cuda
import tensorrt as trt

from ctr_bench.models import build_model

TRT_LOGGER = trt.Logger(trt.Logger.WARNING)


class ExportWrapper(torch.nn.Module):
    """Positional-input wrapper so torch.onnx.export sees (dense_x, sparse_x) instead of a dict."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, dense_x, sparse_x):
        return torch.sigmoid(self.model({"dense": dense_x, "sparse": sparse_x.long()}))


def export_onnx(model, path, num_dense, num_sparse, opset=17):
    wrapper = ExportWrapper(model).cuda().eval()
    dense = torch.randn(8, num_dense, device="cuda")
    sparse = torch.randint(0, 1000, (8, num_sparse), device="cuda", dtype=torch.int32)
    torch.onnx.export(
        wrapper, (dense, sparse), path,
        input_names=["dense_x", "sparse_x"], output_names=["prob"],
        dynamic_axes={"dense_x": {0: "batch"}, "sparse_x": {0: "batch"}, "prob": {0: "batch"}},
        opset_version=opset, do_constant_folding=True)
    print(f"wrote {path} ({os.path.getsize(path) / 2 ** 20:.1f} MiB)")


def build_engine(onnx_path, engine_path, num_dense, num_sparse, max_batch, fp16=True, workspace_gb=4):
    builder = trt.Builder(TRT_LOGGER)
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    parser = trt.OnnxParser(network, TRT_LOGGER)
    with open(onnx_path, "rb") as f:
        if not parser.parse(f.read()):
            for i in range(parser.num_errors):
                print(parser.get_error(i))
            raise RuntimeError("ONNX parse failed")
    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, workspace_gb << 30)
    if fp16 and builder.platform_has_fast_fp16:
        config.set_flag(trt.BuilderFlag.FP16)
    profile = builder.create_optimization_profile()
    opt = max(1, max_batch // 4)
    profile.set_shape("dense_x", (1, num_dense), (opt, num_dense), (max_batch, num_dense))
    profile.set_shape("sparse_x", (1, num_sparse), (opt, num_sparse), (max_batch, num_sparse))
    config.add_optimization_profile(profile)
    serialized = builder.build_serialized_network(network, config)
    if serialized is None:
        raise RuntimeError("TensorRT engine build failed")
    with open(engine_path, "wb") as f:
        f.write(serialized)
    print(f"wrote {engine_path} ({len(serialized) / 2 ** 20:.1f} MiB)")
    return trt.Runtime(TRT_LOGGER).deserialize_cuda_engine(serialized)


def run_engine(engine, dense, sparse):
    """Run one batch through the engine with explicit device buffers (the serving path does the same)."""
    context = engine.create_execution_context()
    batch = dense.shape[0]
    context.set_input_shape("dense_x", dense.shape)
    context.set_input_shape("sparse_x", sparse.shape)
    out = np.empty((batch, 1), dtype=np.float32)
    d_dense = cuda.mem_alloc(dense.nbytes)
    d_sparse = cuda.mem_alloc(sparse.nbytes)
    d_out = cuda.mem_alloc(out.nbytes)
    stream = cuda.Stream()
    cuda.memcpy_htod_async(d_dense, np.ascontiguousarray(dense), stream)
    cuda.memcpy_htod_async(d_sparse, np.ascontiguousarray(sparse), stream)
    context.set_tensor_address("dense_x", int(d_dense))
    context.set_tensor_address("sparse_x", int(d_sparse))
    context.set_tensor_address("prob", int(d_out))
    context.execute_async_v3(stream_handle=stream.handle)
    cuda.memcpy_dtoh_async(out, d_out, stream)
    stream.synchronize()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="deepfm")
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--onnx", default="model.onnx")
    ap.add_argument("--engine", default="model.plan")
    ap.add_argument("--num_dense", type=int, default=13)
    ap.add_argument("--num_sparse", type=int, default=26)
    ap.add_argument("--max_batch", type=int, default=1024)
    ap.add_argument("--fp16", action="store_true")
    args = ap.parse_args()

    model = build_model(args.model)
    state = torch.load(args.checkpoint, map_location="cuda")
    model.load_state_dict(state["model"] if "model" in state else state)
    model.eval()

    export_onnx(model, args.onnx, args.num_dense, args.num_sparse)
    engine = build_engine(args.onnx, args.engine, args.num_dense, args.num_sparse, args.max_batch, args.fp16)

    rng = np.random.default_rng(0)
    dense = rng.standard_normal((256, args.num_dense), dtype=np.float32)
    sparse = rng.integers(0, 1000, (256, args.num_sparse), dtype=np.int32)
    trt_out = run_engine(engine, dense, sparse)
    with torch.no_grad():
        ref = ExportWrapper(model).cuda()(torch.from_numpy(dense).cuda(), torch.from_numpy(sparse).cuda())
    err = np.abs(trt_out - ref.cpu().numpy()).max()
    print(f"max |trt - torch| = {err:.2e}")
    if err > (5e-3 if args.fp16 else 1e-4):
        raise SystemExit("engine output does not match PyTorch")


if __name__ == "__main__":
    main()
