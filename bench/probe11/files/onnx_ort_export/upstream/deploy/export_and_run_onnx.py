"""Export a fine-tuned sequence classifier to ONNX, check parity against PyTorch, and serve it with
onnxruntime-gpu using IO binding (inputs/outputs stay in device memory).

    python deploy/export_and_run_onnx.py export --model ./outputs/best --onnx model.onnx
    python deploy/export_and_run_onnx.py bench  --model ./outputs/best --onnx model.onnx --batch 32
"""
import argparse
import os
import time

import numpy as np
import onnx
import onnxruntime as ort
import torch
from optimum.onnxruntime import ORTModelForSequenceClassification
from transformers import AutoModelForSequenceClassification, AutoTokenizer

SAMPLE_TEXTS = [
    "The service was quick and the staff were friendly.",
    "I waited forty minutes and the food arrived cold.",
    "Decent value for money, would probably come back.",
    "Absolutely terrible, never again.",
]


def export(args):
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForSequenceClassification.from_pretrained(args.model).eval()
    dummy = tokenizer(SAMPLE_TEXTS[:2], padding="max_length", max_length=args.seq_len, truncation=True,
                      return_tensors="pt")
    torch.onnx.export(
        model,
        (dummy["input_ids"], dummy["attention_mask"]),
        args.onnx,
        input_names=["input_ids", "attention_mask"],
        output_names=["logits"],
        dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                      "logits": {0: "batch"}},
        opset_version=17,
        do_constant_folding=True,
    )
    onnx.checker.check_model(onnx.load(args.onnx))
    print(f"exported {args.onnx} ({os.path.getsize(args.onnx) / 2**20:.1f} MiB)")


def make_session(path, fp16_io=False):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = 1
    providers = [
        ("CUDAExecutionProvider", {"device_id": 0, "arena_extend_strategy": "kNextPowerOfTwo",
                                   "cudnn_conv_algo_search": "EXHAUSTIVE", "do_copy_in_default_stream": True}),
        "CPUExecutionProvider",
    ]
    sess = ort.InferenceSession(path, sess_options=so, providers=providers)
    assert "CUDAExecutionProvider" in sess.get_providers(), "onnxruntime-gpu not active"
    return sess


def parity(args):
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForSequenceClassification.from_pretrained(args.model).eval().to("cuda")
    enc = tokenizer(SAMPLE_TEXTS, padding=True, return_tensors="pt")
    with torch.no_grad():
        ref = model(**{k: v.to("cuda") for k, v in enc.items()}).logits.cpu().numpy()
    sess = make_session(args.onnx)
    got = sess.run(["logits"], {"input_ids": enc["input_ids"].numpy(),
                                "attention_mask": enc["attention_mask"].numpy()})[0]
    err = np.abs(ref - got).max()
    print(f"max |torch - ort| = {err:.2e}")
    assert err < 1e-3, "parity check failed"


def bench(args):
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    sess = make_session(args.onnx)
    texts = (SAMPLE_TEXTS * (args.batch // len(SAMPLE_TEXTS) + 1))[: args.batch]
    enc = tokenizer(texts, padding="max_length", max_length=args.seq_len, truncation=True, return_tensors="pt")
    input_ids = enc["input_ids"].to("cuda").contiguous()
    attention_mask = enc["attention_mask"].to("cuda").contiguous()
    logits = torch.empty((args.batch, 2), dtype=torch.float32, device="cuda")

    binding = sess.io_binding()
    binding.bind_input("input_ids", device_type="cuda", device_id=0, element_type=np.int64,
                       shape=tuple(input_ids.shape), buffer_ptr=input_ids.data_ptr())
    binding.bind_input("attention_mask", device_type="cuda", device_id=0, element_type=np.int64,
                       shape=tuple(attention_mask.shape), buffer_ptr=attention_mask.data_ptr())
    binding.bind_output("logits", device_type="cuda", device_id=0, element_type=np.float32,
                        shape=tuple(logits.shape), buffer_ptr=logits.data_ptr())

    for _ in range(10):
        sess.run_with_iobinding(binding)
    t0 = time.perf_counter()
    for _ in range(args.iters):
        sess.run_with_iobinding(binding)
    dt = (time.perf_counter() - t0) / args.iters
    print(f"ORT CUDA: batch={args.batch} seq={args.seq_len}  {dt * 1000:.2f} ms/iter  "
          f"{args.batch / dt:.0f} seq/s")

    ort_model = ORTModelForSequenceClassification.from_pretrained(
        os.path.dirname(os.path.abspath(args.onnx)), file_name=os.path.basename(args.onnx),
        provider="CUDAExecutionProvider",
    )
    enc_small = tokenizer(SAMPLE_TEXTS, padding=True, return_tensors="pt")
    preds = ort_model(**enc_small).logits.argmax(-1).tolist()
    print("optimum predictions:", preds)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["export", "parity", "bench"])
    ap.add_argument("--model", required=True)
    ap.add_argument("--onnx", default="model.onnx")
    ap.add_argument("--seq-len", dest="seq_len", type=int, default=128)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--iters", type=int, default=100)
    args = ap.parse_args()
    print("onnxruntime", ort.__version__, "device:", ort.get_device(), "providers:", ort.get_available_providers())
    {"export": export, "parity": parity, "bench": bench}[args.cmd](args)


if __name__ == "__main__":
    main()
