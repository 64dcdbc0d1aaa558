"""
.. _compile_resnet_trt:

Compiling ResNet50 with Torch-TensorRT
======================================

Compile a torchvision ResNet-50 through the Torch-TensorRT frontends
(``ir="dynamo"`` and the ``torch.compile`` backend), check the
outputs against eager PyTorch and report median latency. Optionally serialize the
compiled module as an ExportedProgram and reload it.
"""
import argparse
import time

import numpy as np
import torch
import torch_tensorrt
import torchvision.models as models

PRECISIONS = {"fp32": torch.float32, "fp16": torch.half}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ir", choices=["dynamo", "torch_compile"], default="dynamo")
    p.add_argument("--precision", choices=list(PRECISIONS), default="fp16")
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--min-batch", type=int, default=1)
    p.add_argument("--max-batch", type=int, default=64)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--iters", type=int, default=200)
    p.add_argument("--cudagraphs", action="store_true", help="wrap the TRT engine in a CUDA graph")
    p.add_argument("--save", type=str, default="", help="write the compiled module to this .ep file")
    p.add_argument("--atol", type=float, default=5e-2)
    return p.parse_args()


def benchmark(model, inputs, nwarmup=50, nruns=200):
    """Median latency in ms measured with device events (host timers hide async launch)."""
    with torch.no_grad():
        for _ in range(nwarmup):
            model(*inputs)
        torch.cuda.synchronize()  # drain warmup

        start_events = [torch.cuda.Event(enable_timing=True) for _ in range(nruns)]
        end_events = [torch.cuda.Event(enable_timing=True) for _ in range(nruns)]
        for i in range(nruns):
            start_events[i].record()
            model(*inputs)
            end_events[i].record()
        torch.cuda.synchronize()  # wait for the last end event
        timings = [s.elapsed_time(e) for s, e in zip(start_events, end_events)]
    return float(np.median(timings))


def compare(ref, out, atol):
    ref = ref.float()
    out = out.float()
    max_diff = (ref - out).abs().max().item()
    cos = torch.nn.functional.cosine_similarity(ref.flatten(), out.flatten(), dim=0).item()
    ok = max_diff <= atol or cos > 0.999
    print(f"  max |diff| = {max_diff:.4e}  cosine = {cos:.6f}  -> {'OK' if ok else 'MISMATCH'}")
    return ok


def build_trt(model, inputs, dtype, args):
    shape = tuple(inputs[0].shape[1:])
    if args.ir == "dynamo":
        trt_inputs = [
            torch_tensorrt.Input(
                min_shape=(args.min_batch,) + shape,
                opt_shape=(args.batch_size,) + shape,
                max_shape=(args.max_batch,) + shape,
                dtype=dtype,
            )
        ]
        return torch_tensorrt.compile(
            model,
            ir="dynamo",
            inputs=trt_inputs,
            enabled_precisions={dtype},
            workspace_size=1 << 30,
            min_block_size=7,
            truncate_double=True,
        )
    # torch.compile frontend: graph breaks fall back to eager PyTorch kernels
    return torch.compile(
        model,
        backend="tensorrt",
        dynamic=False,
        options={"enabled_precisions": {dtype}, "min_block_size": 2, "debug": False},
    )


def main():
    args = parse_args()
    dtype = PRECISIONS[args.precision]
    torch.backends.cudnn.benchmark = True
    print(f"device: {torch.cuda.get_device_name(0)}  torch {torch.__version__}  torch_tensorrt {torch_tensorrt.__version__}")

    model = models.resnet50(weights=models.ResNet50_Weights.DEFAULT).eval().to("cuda")
    inputs = [torch.randn((args.batch_size, 3, 224, 224)).cuda()]
    if dtype == torch.half:
        model = model.half()
        inputs = [x.half() for x in inputs]

    with torch.inference_mode():
        ref = model(*inputs)
    eager_ms = benchmark(model, inputs, args.warmup, args.iters)
    print(f"eager {args.precision}: {eager_ms:.3f} ms/batch")

    t0 = time.time()
    trt_model = build_trt(model, inputs, dtype, args)
    with torch.inference_mode():
        out = trt_model(*inputs)  # first call builds the engine for torch.compile
    print(f"compile ({args.ir}) took {time.time() - t0:.1f} s")
    compare(ref, out, args.atol)

    if args.cudagraphs:
        torch_tensorrt.runtime.set_cudagraphs_mode(True)
    trt_ms = benchmark(trt_model, inputs, args.warmup, args.iters)
    print(f"torch-tensorrt {args.ir} {args.precision}: {trt_ms:.3f} ms/batch  speedup x{eager_ms / trt_ms:.2f}")

    if args.save:
        torch_tensorrt.save(trt_model, args.save, output_format="exported_program", inputs=inputs)
        reloaded = torch.export.load(args.save).module()
        with torch.inference_mode():
            compare(ref, reloaded(*inputs), args.atol)
        print(f"saved to {args.save}")

    torch._dynamo.reset()


if __name__ == "__main__":
    main()
