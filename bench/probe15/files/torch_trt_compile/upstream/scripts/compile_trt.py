"""Compile a HF causal LM (or a ResNet for smoke tests) with Torch-TensorRT and compare latency.

    python scripts/compile_trt.py --model gpt2 --precision fp16 --ir dynamo
"""
import argparse
import time

import torch
import torch_tensorrt
from transformers import AutoModelForCausalLM, AutoTokenizer


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="gpt2")
    p.add_argument("--precision", choices=["fp32", "fp16", "bf16"], default="fp16")
    p.add_argument("--ir", choices=["dynamo", "torch_compile", "ts"], default="dynamo")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--save", default=None, help="path to save the compiled ExportedProgram (dynamo only)")
    return p.parse_args()


def timed(fn, x, iters):
    for _ in range(5):
        fn(x)
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn(x)
    stop.record()
    torch.cuda.synchronize()  # wait for the stop event
    return start.elapsed_time(stop) / iters


class LogitsOnly(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        return self.model(input_ids=input_ids, use_cache=False).logits


def main():
    args = parse()
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[args.precision]
    tok = AutoTokenizer.from_pretrained(args.model)
    hf = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=dtype).eval().cuda()
    model = LogitsOnly(hf)
    ids = torch.randint(0, tok.vocab_size, (args.batch, args.seq), dtype=torch.int64).cuda()

    with torch.no_grad():
        eager_ms = timed(model, ids, args.iters)
        ref = model(ids)

    if args.ir == "dynamo":
        inputs = [torch_tensorrt.Input(shape=(args.batch, args.seq), dtype=torch.int64)]
        trt_model = torch_tensorrt.compile(
            model,
            ir="dynamo",
            inputs=inputs,
            enabled_precisions={dtype},
            truncate_double=True,
            use_python_runtime=False,
            min_block_size=1,
            workspace_size=1 << 32,
        )
    elif args.ir == "torch_compile":
        trt_model = torch.compile(
            model,
            backend="torch_tensorrt",
            dynamic=False,
            options={"enabled_precisions": {dtype}, "min_block_size": 2, "optimization_level": 4},
        )
    else:
        scripted = torch.jit.trace(model, ids)
        trt_model = torch_tensorrt.compile(scripted, ir="ts", inputs=[ids], enabled_precisions={dtype})

    with torch.no_grad():
        out = trt_model(ids)
        diff = (out.float() - ref.float()).abs().max().item()
        trt_ms = timed(trt_model, ids, args.iters)

    print(f"max |diff| {diff:.4e}")
    print(f"eager {eager_ms:.2f} ms  torch-tensorrt {trt_ms:.2f} ms  speedup {eager_ms / trt_ms:.2f}x")

    if args.save and args.ir == "dynamo":
        torch_tensorrt.save(trt_model, args.save, inputs=[ids])
        print(f"saved to {args.save}")


if __name__ == "__main__":
    main()
