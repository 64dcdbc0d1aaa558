import argparse
import os
import time

import numpy as np
import torch

from gliner import GLiNER

try:
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic
except ImportError:  # pragma: no cover
    ort = None


def parse_args():
    parser = argparse.ArgumentParser(description="Export a GLiNER checkpoint to ONNX and sanity-check it")
    parser.add_argument("--model_path", type=str, default="logs/model_12000")
    parser.add_argument("--save_path", type=str, default="model/")
    parser.add_argument("--quantize", action="store_true")
    parser.add_argument("--opset", type=int, default=14)
    parser.add_argument("--benchmark", action="store_true", help="Compare ORT-GPU against eager PyTorch")
    parser.add_argument("--n_runs", type=int, default=50)
    return parser.parse_args()


def build_export_inputs(gliner_model, text, labels):
    inputs, _, _, _ = gliner_model.prepare_model_inputs([text], labels)
    if gliner_model.config.span_mode == "token_level":
        all_inputs = (
            inputs["input_ids"],
            inputs["attention_mask"],
            inputs["words_mask"],
            inputs["text_lengths"],
        )
        input_names = ["input_ids", "attention_mask", "words_mask", "text_lengths"]
        dynamic_axes = {
            "input_ids": {0: "batch_size", 1: "sequence_length"},
            "attention_mask": {0: "batch_size", 1: "sequence_length"},
            "words_mask": {0: "batch_size", 1: "sequence_length"},
            "text_lengths": {0: "batch_size", 1: "value"},
            "logits": {0: "position", 1: "batch_size", 2: "sequence_length", 3: "num_classes"},
        }
    else:
        all_inputs = (
            inputs["input_ids"],
            inputs["attention_mask"],
            inputs["words_mask"],
            inputs["text_lengths"],
            inputs["span_idx"],
            inputs["span_mask"],
        )
        input_names = ["input_ids", "attention_mask", "words_mask", "text_lengths", "span_idx", "span_mask"]
        dynamic_axes = {
            "input_ids": {0: "batch_size", 1: "sequence_length"},
            "attention_mask": {0: "batch_size", 1: "sequence_length"},
            "words_mask": {0: "batch_size", 1: "sequence_length"},
            "text_lengths": {0: "batch_size", 1: "value"},
            "span_idx": {0: "batch_size", 1: "num_spans", 2: "idx"},
            "span_mask": {0: "batch_size", 1: "num_spans"},
            "logits": {0: "batch_size", 1: "sequence_length", 2: "num_spans", 3: "num_classes"},
        }
    return all_inputs, input_names, dynamic_axes


def benchmark_torch(gliner_model, all_inputs, n_runs):
    model = gliner_model.model
    gpu_inputs = tuple(t.cuda() for t in all_inputs)
    model.cuda().eval()
    with torch.no_grad():
        for _ in range(5):
            model(*gpu_inputs)
        torch.cuda.synchronize()  # warm-up done
        start = time.perf_counter()
        for _ in range(n_runs):
            model(*gpu_inputs)
        torch.cuda.synchronize()
    return (time.perf_counter() - start) / n_runs * 1000


def benchmark_ort(onnx_path, input_names, all_inputs, n_runs):
    sess_options = ort.SessionOptions()
    sess_options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    providers = [
        ("CUDAExecutionProvider", {"device_id": 0, "arena_extend_strategy": "kNextPowerOfTwo"}),
        "CPUExecutionProvider",
    ]
    session = ort.InferenceSession(onnx_path, sess_options, providers=providers)
    if "CUDAExecutionProvider" not in session.get_providers():
        print("WARNING: onnxruntime-gpu not installed, ORT is running on CPU")

    binding = session.io_binding()
    for name, tensor in zip(input_names, all_inputs):
        arr = tensor.cpu().numpy()
        ort_value = ort.OrtValue.ortvalue_from_numpy(arr, "cuda", 0)
        binding.bind_ortvalue_input(name, ort_value)
    binding.bind_output("logits", "cuda")

    for _ in range(5):
        session.run_with_iobinding(binding)
    start = time.perf_counter()
    for _ in range(n_runs):
        session.run_with_iobinding(binding)
    elapsed = (time.perf_counter() - start) / n_runs * 1000
    logits = binding.copy_outputs_to_cpu()[0]
    return elapsed, logits


def main():
    args = parse_args()
    os.makedirs(args.save_path, exist_ok=True)
    onnx_save_path = os.path.join(args.save_path, "model.onnx")

    print("Loading a model...")
    gliner_model = GLiNER.from_pretrained(args.model_path, load_tokenizer=True)

    text = "ONNX is an open-source format designed to enable the interoperability of AI models."
    labels = ["format", "model", "tool", "cat"]
    all_inputs, input_names, dynamic_axes = build_export_inputs(gliner_model, text, labels)

    print("Converting the model...")
    torch.onnx.export(
        gliner_model.model,
        all_inputs,
        f=onnx_save_path,
        input_names=input_names,
        output_names=["logits"],
        dynamic_axes=dynamic_axes,
        opset_version=args.opset,
    )

    if args.quantize:
        quantized_save_path = os.path.join(args.save_path, "model_quantized.onnx")
        print("Quantizing the model...")
        quantize_dynamic(onnx_save_path, quantized_save_path, weight_type=QuantType.QUInt8)

    if args.benchmark and ort is not None:
        torch_ms = benchmark_torch(gliner_model, all_inputs, args.n_runs)
        ort_ms, ort_logits = benchmark_ort(onnx_save_path, input_names, all_inputs, args.n_runs)
        with torch.no_grad():
            ref = gliner_model.model(*[t.cuda() for t in all_inputs])[0].float().cpu().numpy()
        max_diff = float(np.abs(ref - ort_logits).max())
        print(f"torch (cuda): {torch_ms:.2f} ms | onnxruntime: {ort_ms:.2f} ms | max |diff| = {max_diff:.2e}")

    print("Done!")


if __name__ == "__main__":
    main()
