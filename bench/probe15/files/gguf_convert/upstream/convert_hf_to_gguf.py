#!/usr/bin/env python3
"""Convert a Hugging Face Llama-style checkpoint to GGUF (f32 / f16 / q8_0).

Runs entirely on the CPU; no GPU (CUDA or otherwise) is needed for conversion. The resulting
file can be run by llama.cpp on CPU, or with -ngl to offload layers to a CUDA/Metal GPU.
"""
import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Dict, Iterator, Tuple

import numpy as np
import torch
from safetensors import safe_open

import gguf

logger = logging.getLogger("hf-to-gguf")

TENSOR_MAP = {
    "model.embed_tokens.weight": "token_embd.weight",
    "model.norm.weight": "output_norm.weight",
    "lm_head.weight": "output.weight",
}
LAYER_MAP = {
    "self_attn.q_proj.weight": "attn_q.weight",
    "self_attn.k_proj.weight": "attn_k.weight",
    "self_attn.v_proj.weight": "attn_v.weight",
    "self_attn.o_proj.weight": "attn_output.weight",
    "mlp.gate_proj.weight": "ffn_gate.weight",
    "mlp.up_proj.weight": "ffn_up.weight",
    "mlp.down_proj.weight": "ffn_down.weight",
    "input_layernorm.weight": "attn_norm.weight",
    "post_attention_layernorm.weight": "ffn_norm.weight",
}


def parse_args():
    p = argparse.ArgumentParser(description="Convert a HF model to GGUF (CPU only; the device flag of llama.cpp decides GPU use later)")
    p.add_argument("model", type=Path)
    p.add_argument("--outfile", type=Path, default=None)
    p.add_argument("--outtype", choices=["f32", "f16", "q8_0"], default="f16")
    p.add_argument("--verbose", action="store_true")
    return p.parse_args()


def map_name(name: str) -> str:
    if name in TENSOR_MAP:
        return TENSOR_MAP[name]
    if name.startswith("model.layers."):
        _, _, idx, rest = name.split(".", 3)
        if rest in LAYER_MAP:
            return f"blk.{idx}.{LAYER_MAP[rest]}"
    raise ValueError(f"cannot map tensor {name}")


def iter_tensors(model_dir: Path) -> Iterator[Tuple[str, torch.Tensor]]:
    st_files = sorted(model_dir.glob("*.safetensors"))
    if st_files:
        for f in st_files:
            with safe_open(f, framework="pt", device="cpu") as sf:
                for name in sf.keys():
                    yield name, sf.get_tensor(name)
        return
    for f in sorted(model_dir.glob("pytorch_model*.bin")):
        # checkpoints saved on a GPU box carry cuda storages; force them onto the CPU
        state = torch.load(f, map_location="cpu", weights_only=True)
        yield from state.items()


def permute_qk(w: np.ndarray, n_head: int, n_head_kv: int) -> np.ndarray:
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
             .swapaxes(1, 2)
             .reshape(w.shape))


def quantize_q8_0(data: np.ndarray) -> np.ndarray:
    return gguf.quants.quantize(data, gguf.GGMLQuantizationType.Q8_0)


def main():
    args = parse_args()
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO)
    hparams: Dict = json.loads((args.model / "config.json").read_text())
    outfile = args.outfile or args.model / f"ggml-model-{args.outtype}.gguf"

    writer = gguf.GGUFWriter(outfile, "llama")
    writer.add_name(args.model.name)
    writer.add_context_length(hparams["max_position_embeddings"])
    writer.add_embedding_length(hparams["hidden_size"])
    writer.add_block_count(hparams["num_hidden_layers"])
    writer.add_feed_forward_length(hparams["intermediate_size"])
    writer.add_head_count(hparams["num_attention_heads"])
    writer.add_head_count_kv(hparams.get("num_key_value_heads", hparams["num_attention_heads"]))
    writer.add_layer_norm_rms_eps(hparams["rms_norm_eps"])
    writer.add_rope_freq_base(hparams.get("rope_theta", 10000.0))
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16 if args.outtype == "f16" else gguf.LlamaFileType.ALL_F32)

    n_head = hparams["num_attention_heads"]
    n_kv = hparams.get("num_key_value_heads", n_head)
    for name, tensor in iter_tensors(args.model):
        if name.endswith("rotary_emb.inv_freq"):
            continue
        if tensor.is_cuda:
            tensor = tensor.cpu()
        data = tensor.to(torch.float32).numpy()
        if name.endswith("q_proj.weight"):
            data = permute_qk(data, n_head, n_head)
        elif name.endswith("k_proj.weight"):
            data = permute_qk(data, n_head, n_kv)
        new_name = map_name(name)
        if args.outtype == "f16" and data.ndim == 2:
            data = data.astype(np.float16)
        elif args.outtype == "q8_0" and data.ndim == 2:
            data = quantize_q8_0(data)
        logger.debug(f"{name:48s} -> {new_name:32s} {data.dtype} {data.shape}")
        writer.add_tensor(new_name, data)

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    logger.info(f"wrote {outfile}")


if __name__ == "__main__":
    sys.exit(main())
