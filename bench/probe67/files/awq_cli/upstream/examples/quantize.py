import argparse
import os

import torch
from awq import AutoAWQForCausalLM
from transformers import AutoTokenizer


def parse_args():
    p = argparse.ArgumentParser(description="Quantize a HF causal LM with AWQ and run a quick smoke test.")
    p.add_argument("--model_path", type=str, default="mistralai/Mistral-7B-Instruct-v0.2")
    p.add_argument("--quant_path", type=str, default="mistral-instruct-v0.2-awq")
    p.add_argument("--w_bit", type=int, default=4)
    p.add_argument("--q_group_size", type=int, default=128)
    p.add_argument("--version", type=str, default="GEMM", choices=["GEMM", "GEMV", "Marlin", "GEMV_Fast"])
    p.add_argument("--max_calib_samples", type=int, default=128)
    p.add_argument("--fuse_layers", action="store_true", help="use AutoAWQ fused attention/MLP modules")
    p.add_argument("--smoke_test", action="store_true")
    return p.parse_args()


@torch.no_grad()
def wikitext_ppl(model, tokenizer, n_ctx=2048, max_chunks=40):
    from datasets import load_dataset
    text = "\n\n".join(load_dataset("wikitext", "wikitext-2-raw-v1", split="test")["text"])
    ids = tokenizer(text, return_tensors="pt").input_ids
    nlls = []
    for i in range(min(max_chunks, ids.shape[1] // n_ctx)):
        chunk = ids[:, i * n_ctx:(i + 1) * n_ctx].to(model.device)
        logits = model(chunk).logits.float()
        shift_logits = logits[:, :-1, :].reshape(-1, logits.shape[-1])
        shift_labels = chunk[:, 1:].reshape(-1)
        nlls.append(torch.nn.functional.cross_entropy(shift_logits, shift_labels))
    return torch.exp(torch.stack(nlls).mean()).item()


def main():
    args = parse_args()
    quant_config = {"zero_point": True, "q_group_size": args.q_group_size, "w_bit": args.w_bit, "version": args.version}

    # Load model
    model = AutoAWQForCausalLM.from_pretrained(args.model_path, low_cpu_mem_usage=True, use_cache=False)
    tokenizer = AutoTokenizer.from_pretrained(args.model_path, trust_remote_code=True)

    # Quantize
    model.quantize(tokenizer, quant_config=quant_config, max_calib_samples=args.max_calib_samples)

    # Save quantized model
    model.save_quantized(args.quant_path)
    tokenizer.save_pretrained(args.quant_path)
    print(f'Model is quantized and saved at "{args.quant_path}"')

    if not args.smoke_test:
        return

    del model
    torch.cuda.empty_cache()

    model = AutoAWQForCausalLM.from_quantized(args.quant_path, fuse_layers=args.fuse_layers, device_map="cuda")
    prompt = "[INST] Explain activation-aware weight quantization in two sentences. [/INST]"
    tokens = tokenizer(prompt, return_tensors="pt").input_ids.to("cuda")
    with torch.no_grad():
        out = model.generate(tokens, max_new_tokens=96, do_sample=False)
    print(tokenizer.decode(out[0], skip_special_tokens=True))
    print(f"wikitext2 ppl: {wikitext_ppl(model, tokenizer):.3f}")
    print(f"max memory: {torch.cuda.max_memory_reserved() / 1e9:.2f} GB")


if __name__ == "__main__":
    main()
