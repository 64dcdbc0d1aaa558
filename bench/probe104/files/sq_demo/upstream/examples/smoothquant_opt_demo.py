"""SmoothQuant on OPT-13B: W8A8 fake quantisation vs. FP16 (converted from the demo notebook).

In this demo we use the fake-quantised W8A8 linear layers (per-channel weight, per-token
activation) to show that SmoothQuant keeps the accuracy of OPT-13B on LAMBADA, and then time
the real INT8 model built on the CUTLASS kernels of torch-int.

The full model needs ~26GB in FP16, so run it on one A100-40GB / A6000.
"""
import argparse
import os
import time

import torch
from transformers.models.opt.modeling_opt import (
    OPTAttention,
    OPTDecoderLayer,
    OPTForCausalLM,
)
from transformers import GPT2Tokenizer
from datasets import load_dataset
import tqdm

from smoothquant.smooth import smooth_lm
from smoothquant.fake_quant import W8A8Linear, quantize_opt


class Evaluator:
    def __init__(self, dataset, tokenizer, device):
        self.dataset = dataset
        self.tokenizer = tokenizer
        self.device = device

        # tokenize the dataset
        def tokenize_function(examples):
            example = self.tokenizer(examples["text"])
            return example

        self.dataset = self.dataset.map(tokenize_function, batched=True)
        self.dataset.set_format(type="torch", columns=["input_ids"])

    @torch.no_grad()
    def evaluate(self, model):
        model.eval()
        # The task is to predict the last word of the input.
        total, hit = 0, 0
        for batch in self.dataset:
            input_ids = batch["input_ids"].to(self.device).unsqueeze(0)
            label = input_ids[:, -1]
            outputs = model(input_ids)
            last_token_logits = outputs.logits[:, -2, :]
            pred = last_token_logits.argmax(dim=-1)
            total += label.size(0)
            hit += (pred == label).sum().item()
        acc = hit / total
        return acc


class PerplexityEvaluator:
    def __init__(self, dataset, tokenizer, device, n_samples=40):
        self.dataset = dataset
        self.tokenizer = tokenizer
        self.device = device

        self.dataset = tokenizer(
            "\n\n".join(dataset["text"]), return_tensors="pt"
        ).input_ids.to(device)

        self.n_samples = n_samples

    @torch.no_grad()
    def evaluate(self, model):
        model.eval()
        nlls = []
        for i in tqdm.tqdm(range(self.n_samples), desc="Evaluating..."):
            batch = self.dataset[:, (i * 2048) : ((i + 1) * 2048)].to(model.device)
            with torch.no_grad():
                lm_logits = model(batch).logits
            shift_logits = lm_logits[:, :-1, :].contiguous().float()
            shift_labels = self.dataset[:, (i * 2048) : ((i + 1) * 2048)][:, 1:]
            loss_fct = torch.nn.CrossEntropyLoss()
            loss = loss_fct(
                shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1)
            )
            neg_log_likelihood = loss.float() * 2048
            nlls.append(neg_log_likelihood)

        return torch.exp(torch.stack(nlls).sum() / (self.n_samples * 2048))


def print_model_size(model):
    # https://discuss.pytorch.org/t/finding-model-size/130275
    param_size = 0
    for param in model.parameters():
        param_size += param.nelement() * param.element_size()
    buffer_size = 0
    for buffer in model.buffers():
        buffer_size += buffer.nelement() * buffer.element_size()

    size_all_mb = (param_size + buffer_size) / 1024**2
    print("Model size: {:.3f}MB".format(size_all_mb))


@torch.no_grad()
def benchmark_latency(model, seq_len=512, batch_size=4, n_warmup=5, n_iter=20):
    """Prefill latency of one forward pass, timed with CUDA events."""
    input_ids = torch.randint(0, 50000, (batch_size, seq_len)).cuda()
    for _ in range(n_warmup):
        model(input_ids)
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(n_iter):
        model(input_ids)
    end.record()
    torch.cuda.synchronize()  # make sure all kernels are done before reading the events
    latency_ms = start.elapsed_time(end) / n_iter
    peak_mem = torch.cuda.max_memory_allocated() / 1024**3
    print(f"latency {latency_ms:.2f} ms | peak memory {peak_mem:.2f} GB")
    return latency_ms, peak_mem


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-name", type=str, default="facebook/opt-13b")
    parser.add_argument("--act-scales", type=str, default="act_scales/opt-13b.pt")
    parser.add_argument("--alpha", type=float, default=0.5)
    parser.add_argument("--int8-model", type=str, default=None,
                        help="path of the real INT8 model exported by export_int8_model.py")
    parser.add_argument("--n-samples", type=int, default=1000)
    args = parser.parse_args()

    tokenizer = GPT2Tokenizer.from_pretrained(args.model_name)
    dataset = load_dataset("lambada", split=f"validation[:{args.n_samples}]")
    evaluator = Evaluator(dataset, tokenizer, "cuda")

    model_fp16 = OPTForCausalLM.from_pretrained(
        args.model_name, torch_dtype=torch.float16, device_map="auto"
    )
    print_model_size(model_fp16)
    acc_fp16 = evaluator.evaluate(model_fp16)
    print(f"Original model (fp16) accuracy: {acc_fp16}")

    model_w8a8 = quantize_opt(model_fp16)
    print(model_w8a8)
    acc_w8a8 = evaluator.evaluate(model_w8a8)
    print(f"Naive W8A8 quantized model accuracy: {acc_w8a8}")

    del model_fp16, model_w8a8
    torch.cuda.empty_cache()

    model = OPTForCausalLM.from_pretrained(
        args.model_name, torch_dtype=torch.float16, device_map="auto"
    )
    act_scales = torch.load(args.act_scales)
    smooth_lm(model, act_scales, args.alpha)
    model_smoothquant_w8a8 = quantize_opt(model)
    print(model_smoothquant_w8a8)
    acc_smoothquant_w8a8 = evaluator.evaluate(model_smoothquant_w8a8)
    print(f"SmoothQuant W8A8 quantized model accuracy: {acc_smoothquant_w8a8}")

    wiki = load_dataset("wikitext", "wikitext-2-raw-v1", split="test")
    ppl_evaluator = PerplexityEvaluator(wiki, tokenizer, "cuda")
    ppl = ppl_evaluator.evaluate(model_smoothquant_w8a8)
    print(f"SmoothQuant W8A8 perplexity: {ppl}")

    if args.int8_model is not None:
        # real INT8 inference; needs the torch-int CUTLASS kernels (sm_80+)
        from smoothquant.opt import Int8OPTForCausalLM

        del model, model_smoothquant_w8a8
        torch.cuda.empty_cache()  # before loading the INT8 model
        torch.cuda.reset_peak_memory_stats()
        model_int8 = Int8OPTForCausalLM.from_pretrained(
            args.int8_model, torch_dtype=torch.float16, device_map="auto"
        )
        print_model_size(model_int8)
        acc_int8 = evaluator.evaluate(model_int8)
        print(f"SmoothQuant INT8 accuracy: {acc_int8}")
        benchmark_latency(model_int8)


if __name__ == "__main__":
    main()
