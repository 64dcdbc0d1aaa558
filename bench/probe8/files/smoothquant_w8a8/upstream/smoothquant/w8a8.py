"""SmoothQuant: activation-scale calibration, smoothing and W8A8 linear layers.

1. run a few hundred calibration sequences and record per-channel max |activation| for every
   Linear input;
2. migrate quantisation difficulty from activations to weights with s = max|X|^a / max|W|^(1-a);
3. replace the Linear layers with W8A8Linear (per-channel int8 weights, per-token int8 activations).
"""
import argparse
import functools
import json
import os
from collections import defaultdict
from typing import Dict, Iterable, List, Optional

import torch
import torch.nn as nn
from tqdm import tqdm
from transformers import AutoModelForCausalLM, AutoTokenizer
from transformers.models.llama.modeling_llama import LlamaDecoderLayer, LlamaRMSNorm
from transformers.models.opt.modeling_opt import OPTDecoderLayer


# ---------------------------------------------------------------------------- calibration
@torch.no_grad()
def get_act_scales(model: nn.Module, tokenizer, samples: List[str], seq_len: int = 512) -> Dict[str, torch.Tensor]:
    model.eval()
    device = next(model.parameters()).device
    act_scales: Dict[str, torch.Tensor] = {}

    def stat_tensor(name: str, tensor: torch.Tensor):
        hidden_dim = tensor.shape[-1]
        tensor = tensor.view(-1, hidden_dim).abs().detach()
        coming_max = torch.max(tensor, dim=0)[0].float().cpu()
        if name in act_scales:
            act_scales[name] = torch.max(act_scales[name], coming_max)
        else:
            act_scales[name] = coming_max

    def stat_input_hook(m, x, y, name):
        if isinstance(x, tuple):
            x = x[0]
        stat_tensor(name, x)

    hooks = []
    for name, m in model.named_modules():
        if isinstance(m, nn.Linear):
            hooks.append(m.register_forward_hook(functools.partial(stat_input_hook, name=name)))

    for text in tqdm(samples, desc="calibrating"):
        input_ids = tokenizer(text, return_tensors="pt", max_length=seq_len, truncation=True).input_ids.to(device)
        model(input_ids)

    for h in hooks:
        h.remove()
    return act_scales


# ---------------------------------------------------------------------------- smoothing
@torch.no_grad()
def smooth_ln_fcs(ln: nn.Module, fcs: Iterable[nn.Linear], act_scales: torch.Tensor, alpha: float = 0.5):
    fcs = list(fcs)
    device, dtype = fcs[0].weight.device, fcs[0].weight.dtype
    act_scales = act_scales.to(device=device, dtype=dtype)
    weight_scales = torch.cat([fc.weight.abs().max(dim=0, keepdim=True)[0] for fc in fcs], dim=0)
    weight_scales = weight_scales.max(dim=0)[0].clamp(min=1e-5)
    scales = (act_scales.pow(alpha) / weight_scales.pow(1 - alpha)).clamp(min=1e-5).to(device).to(dtype)
    ln.weight.div_(scales)
    if getattr(ln, "bias", None) is not None:
        ln.bias.div_(scales)
    for fc in fcs:
        fc.weight.mul_(scales.view(1, -1))


@torch.no_grad()
def smooth_lm(model: nn.Module, scales: Dict[str, torch.Tensor], alpha: float = 0.5):
    for name, module in model.named_modules():
        if isinstance(module, OPTDecoderLayer):
            attn_ln = module.self_attn_layer_norm
            qkv = [module.self_attn.q_proj, module.self_attn.k_proj, module.self_attn.v_proj]
            smooth_ln_fcs(attn_ln, qkv, scales[name + ".self_attn.q_proj"], alpha)
            smooth_ln_fcs(module.final_layer_norm, [module.fc1], scales[name + ".fc1"], alpha)
        elif isinstance(module, LlamaDecoderLayer):
            attn_ln = module.input_layernorm
            qkv = [module.self_attn.q_proj, module.self_attn.k_proj, module.self_attn.v_proj]
            smooth_ln_fcs(attn_ln, qkv, scales[name + ".self_attn.q_proj"], alpha)
            ffn_ln = module.post_attention_layernorm
            smooth_ln_fcs(ffn_ln, [module.mlp.gate_proj, module.mlp.up_proj], scales[name + ".mlp.gate_proj"], alpha)


# ---------------------------------------------------------------------------- quantisers
@torch.no_grad()
def quantize_weight_per_channel_absmax(w: torch.Tensor, n_bits: int = 8):
    q_max = 2 ** (n_bits - 1) - 1
    scales = w.abs().max(dim=-1, keepdim=True)[0].clamp(min=1e-5) / q_max
    q = torch.round(w / scales).clamp(-q_max - 1, q_max).to(torch.int8)
    return q, scales


@torch.no_grad()
def quantize_per_token_absmax(x: torch.Tensor, n_bits: int = 8):
    q_max = 2 ** (n_bits - 1) - 1
    scales = x.abs().amax(dim=-1, keepdim=True).clamp(min=1e-5) / q_max
    q = torch.round(x / scales).clamp(-q_max - 1, q_max).to(torch.int8)
    return q, scales


class W8A8Linear(nn.Module):
    """int8 x int8 -> int32 GEMM, dequantised with (token scale) x (channel scale)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, output_dtype=torch.float16):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.output_dtype = output_dtype
        self.register_buffer("weight_int8", torch.zeros(out_features, in_features, dtype=torch.int8))
        self.register_buffer("w_scale", torch.ones(out_features, 1, dtype=torch.float32))
        self.register_buffer("bias", torch.zeros(out_features, dtype=output_dtype) if bias else None)

    @classmethod
    def from_float(cls, module: nn.Linear, output_dtype=torch.float16) -> "W8A8Linear":
        new = cls(module.in_features, module.out_features, module.bias is not None, output_dtype)
        q, s = quantize_weight_per_channel_absmax(module.weight.float())
        new.weight_int8.copy_(q)
        new.w_scale.copy_(s)
        if module.bias is not None:
            new.bias.copy_(module.bias.to(output_dtype))
        return new.to(module.weight.device)

    @torch.no_grad()
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        x2d = x.reshape(-1, shape[-1])
        q_x, s_x = quantize_per_token_absmax(x2d)
        if x2d.shape[0] <= 16:
            q_x = torch.nn.functional.pad(q_x, (0, 0, 0, 17 - x2d.shape[0]))
        acc = torch._int_mm(q_x, self.weight_int8.t())[: x2d.shape[0]]
        y = acc.float() * s_x.float() * self.w_scale.view(1, -1)
        y = y.to(self.output_dtype)
        if self.bias is not None:
            y = y + self.bias
        return y.reshape(*shape[:-1], self.out_features)

    def extra_repr(self) -> str:
        return f"in={self.in_features}, out={self.out_features}, w=int8/channel, a=int8/token"


def quantize_model(model: nn.Module, skip: Optional[List[str]] = None) -> nn.Module:
    skip = set(skip or ["lm_head"])
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            full = f"{name}.{child_name}" if name else child_name
            if isinstance(child, nn.Linear) and child_name not in skip:
                setattr(module, child_name, W8A8Linear.from_float(child))
    return model


@torch.no_grad()
def evaluate_ppl(model, tokenizer, texts: List[str], device, seq_len: int = 2048) -> float:
    enc = tokenizer("\n\n".join(texts), return_tensors="pt").input_ids
    n = enc.shape[1] // seq_len
    nlls = []
    for i in tqdm(range(n), desc="ppl"):
        batch = enc[:, i * seq_len:(i + 1) * seq_len].to(device)
        logits = model(batch).logits.float()
        shift_logits = logits[:, :-1, :]
        shift_labels = batch[:, 1:]
        loss = nn.functional.cross_entropy(shift_logits.reshape(-1, shift_logits.size(-1)), shift_labels.reshape(-1))
        nlls.append(loss.float() * seq_len)
    return float(torch.exp(torch.stack(nlls).sum() / (n * seq_len)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--calib", default="data/val.jsonl")
    p.add_argument("--n_samples", type=int, default=512)
    p.add_argument("--alpha", type=float, default=0.5)
    p.add_argument("--device", default="cuda")
    p.add_argument("--scales_out", default="act_scales/model.pt")
    p.add_argument("--eval", default=None, help="text file for perplexity")
    args = p.parse_args()

    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=torch.float16).to(args.device)
    with open(args.calib) as fh:
        samples = [json.loads(line)["text"] for line in fh][: args.n_samples]
    if os.path.exists(args.scales_out):
        scales = torch.load(args.scales_out)
    else:
        scales = get_act_scales(model, tok, samples)
        os.makedirs(os.path.dirname(args.scales_out), exist_ok=True)
        torch.save(scales, args.scales_out)
    torch.cuda.empty_cache()
    smooth_lm(model, scales, args.alpha)
    quantize_model(model)
    if args.eval:
        with open(args.eval) as fh:
            texts = fh.read().split("\n\n")
        print("ppl:", evaluate_ppl(model, tok, texts, args.device))


if __name__ == "__main__":
    main()
