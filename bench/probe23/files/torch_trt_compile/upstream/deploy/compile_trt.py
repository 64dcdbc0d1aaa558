"""Ahead-of-time (Torch-TensorRT) and JIT (torch.compile backend="tensorrt")
compilation of a classification model, with an accuracy check against eager.

    python deploy/compile_trt.py --arch resnet50 --mode aot --precision fp16
    python deploy/compile_trt.py --arch vit_b_16 --mode dynamo
"""
import argparse
import time

import torch
import torch_tensorrt
import torchvision


def get_model(arch):
    model = getattr(torchvision.models, arch)(weights="DEFAULT")
    return model.eval().cuda()


def compile_aot(model, batch, precision):
    enabled = {torch.float16} if precision == "fp16" else {torch.float32}
    inputs = [torch_tensorrt.Input(
        min_shape=[1, 3, 224, 224],
        opt_shape=[batch, 3, 224, 224],
        max_shape=[max(batch, 32), 3, 224, 224],
        dtype=torch.float16 if precision == "fp16" else torch.float32,
    )]
    trt_model = torch_tensorrt.compile(
        model,
        ir="dynamo",
        inputs=inputs,
        enabled_precisions=enabled,
        workspace_size=4 << 30,
        truncate_double=True,
        min_block_size=3,
    )
    return trt_model


def compile_jit(model, precision):
    options = {
        "enabled_precisions": {torch.float16} if precision == "fp16" else {torch.float32},
        "min_block_size": 2,
        "optimization_level": 3,
        "use_python_runtime": False,
    }
    torch._dynamo.reset()
    return torch.compile(model, backend="tensorrt", dynamic=False, options=options)


@torch.inference_mode()
def timed(fn, x, iters=50, warmup=10):
    for _ in range(warmup):
        fn(x)
    torch.cuda.synchronize()  # drain warm-up
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        out = fn(x)
    end.record()
    torch.cuda.synchronize()
    return out, start.elapsed_time(end) / iters


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="resnet50")
    ap.add_argument("--mode", choices=["aot", "dynamo"], default="aot")
    ap.add_argument("--precision", choices=["fp16", "fp32"], default="fp16")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--save", default=None, help="save the AOT module (TorchScript/ExportedProgram)")
    args = ap.parse_args()

    torch.backends.cuda.matmul.allow_tf32 = True
    model = get_model(args.arch)
    dtype = torch.float16 if args.precision == "fp16" else torch.float32
    x = torch.randn(args.batch, 3, 224, 224, device="cuda", dtype=dtype)
    if dtype == torch.float16:
        model = model.half()

    ref, t_eager = timed(model, x)
    t0 = time.time()
    compiled = compile_aot(model, args.batch, args.precision) if args.mode == "aot" else compile_jit(model, args.precision)
    out, t_trt = timed(compiled, x)
    print(f"compile time {time.time() - t0:.1f}s")

    cos = torch.nn.functional.cosine_similarity(ref.float().flatten(), out.float().flatten(), dim=0)
    print(f"eager {t_eager:.2f} ms | trt {t_trt:.2f} ms | speedup {t_eager / t_trt:.2f}x | cos {cos.item():.5f}")
    if args.save and args.mode == "aot":
        torch_tensorrt.save(compiled, args.save, inputs=[x])
        print("saved", args.save)


if __name__ == "__main__":
    main()
