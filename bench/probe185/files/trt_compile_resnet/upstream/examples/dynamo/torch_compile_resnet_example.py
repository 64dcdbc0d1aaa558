"""
.. _torch_compile_resnet:

Compiling ResNet with dynamic shapes using the `torch.compile` backend
==========================================================================

This interactive script is intended as a sample of the Torch-TensorRT workflow with `torch.compile` on a ResNet model,
followed by a comparison against the ahead-of-time ``ir="dynamo"`` path and a simple latency benchmark.

Run with::

    python torch_compile_resnet_example.py --batch-size 16 --precision fp16 --benchmark
"""

# %%
# Imports and Model Definition
# ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^

import argparse
import time

import numpy as np
import torch
import torch_tensorrt
import torchvision.models as models

# %%
# Command line options
# ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^

parser = argparse.ArgumentParser(description="Torch-TensorRT ResNet compile example")
parser.add_argument("--arch", default="resnet18", help="torchvision model name")
parser.add_argument("--batch-size", type=int, default=16)
parser.add_argument("--precision", choices=["fp32", "fp16"], default="fp16")
parser.add_argument("--workspace-gb", type=int, default=4, help="TensorRT builder workspace (GiB)")
parser.add_argument("--benchmark", action="store_true")
parser.add_argument("--save", default="", help="save the AOT compiled program to this path (.ep)")
args = parser.parse_args()

# Initialize model with float precision and sample inputs
model = models.__dict__[args.arch](weights="DEFAULT").eval().to("cuda")
inputs = [torch.randn((args.batch_size, 3, 224, 224)).to("cuda")]

# %%
# Optional Input Arguments to `torch_tensorrt.compile`
# ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^

# Enabled precision for TensorRT optimization
enabled_precisions = {torch.half} if args.precision == "fp16" else {torch.float}

# Whether to print verbose logs
debug = False

# Workspace size for TensorRT
workspace_size = args.workspace_gb << 30

# Maximum number of TRT Engines
# (Lower value allows more graph segmentation)
min_block_size = 7

# Operations to Run in Torch, regardless of converter support
torch_executed_ops = {}

# %%
# Compilation with `torch_tensorrt.compile`
# ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^

# Build and compile the model with torch.compile, using Torch-TensorRT backend
optimized_model = torch_tensorrt.compile(
    model,
    ir="torch_compile",
    inputs=inputs,
    enabled_precisions=enabled_precisions,
    debug=debug,
    workspace_size=workspace_size,
    min_block_size=min_block_size,
    torch_executed_ops=torch_executed_ops,
)

# %%
# Equivalently, we could have run the above via the torch.compile frontend, as so:
# `optimized_model = torch.compile(model, backend="torch_tensorrt", options={"enabled_precisions": enabled_precisions, ...}); optimized_model(*inputs)`

# %%
# Inference
# ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^

# Does not cause recompilation (same batch size as input)
new_inputs = [torch.randn((args.batch_size, 3, 224, 224)).half().to("cuda")]
new_outputs = optimized_model(*new_inputs)

# Does cause recompilation (new batch size)
new_batch_size_inputs = [torch.randn((8, 3, 224, 224)).half().to("cuda")]
new_batch_size_outputs = optimized_model(*new_batch_size_inputs)

# %%
# Ahead-of-time compilation with dynamic batch through the dynamo IR
# ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^

dyn_inputs = [
    torch_tensorrt.Input(
        min_shape=(1, 3, 224, 224),
        opt_shape=(args.batch_size, 3, 224, 224),
        max_shape=(4 * args.batch_size, 3, 224, 224),
        dtype=torch.half if args.precision == "fp16" else torch.float32,
    )
]
aot_model = torch_tensorrt.compile(
    model.half() if args.precision == "fp16" else model,
    ir="dynamo",
    inputs=dyn_inputs,
    enabled_precisions=enabled_precisions,
    workspace_size=workspace_size,
    min_block_size=min_block_size,
)

if args.save:
    torch_tensorrt.save(aot_model, args.save, inputs=[inp.half() if args.precision == "fp16" else inp for inp in inputs])
    print(f"Saved TensorRT-compiled exported program to {args.save}")


# %%
# Benchmark
# ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^

def benchmark(fn, input_data, nwarmup=50, nruns=500):
    with torch.no_grad():
        for _ in range(nwarmup):
            fn(input_data)
    torch.cuda.synchronize()  # drain the warmup work before timing
    print("Start timing ...")
    timings = []
    with torch.no_grad():
        for i in range(1, nruns + 1):
            start_time = time.perf_counter()
            fn(input_data)
            torch.cuda.synchronize()
            end_time = time.perf_counter()
            timings.append(end_time - start_time)
            if i % 100 == 0:
                print("Iteration %d/%d, ave batch time %.2f ms" % (i, nruns, np.mean(timings) * 1000))
    print("Average throughput: %.2f images/second" % (input_data.shape[0] / np.mean(timings)))
    return np.mean(timings) * 1000


if args.benchmark:
    x = torch.randn((args.batch_size, 3, 224, 224), device="cuda")
    if args.precision == "fp16":
        x = x.half()
    eager = model.half() if args.precision == "fp16" else model
    print("== PyTorch eager ==")
    t_eager = benchmark(eager, x)
    print("== Torch-TensorRT (dynamo AOT) ==")
    t_trt = benchmark(aot_model, x)
    print(f"speedup: {t_eager / t_trt:.2f}x on {torch.cuda.get_device_name()}")

# %%
# Cleanup
# ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^

# Finally, we use Torch utilities to clean up the workspace
torch._dynamo.reset()
