"""
Convert an official Octo (JAX/Flax, orbax) checkpoint into the PyTorch layout used by octo_pytorch.

    python scripts/convert_jax_checkpoint.py --hf_path hf://rail-berkeley/octo-small-1.5 --out checkpoints/octo-small-torch

JAX is only used on the host to read the params; we hide the GPUs from it so it does not
pre-allocate 75% of device memory while the PyTorch side is running on the same machine.
"""
import argparse
import json
import os
import re

os.environ["CUDA_VISIBLE_DEVICES"] = ""
os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"

import jax  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from flax.traverse_util import flatten_dict  # noqa: E402

jax.config.update("jax_platform_name", "cpu")

# (flax path regex, torch name template, transform)
RULES = [
    (r"octo_transformer/BlockTransformer_0/Transformer_0/encoderblock_(\d+)/LayerNorm_(\d)/scale",
     "octo_transformer.transformer.layers.{0}.LayerNorm_{1}.weight", None),
    (r"octo_transformer/BlockTransformer_0/Transformer_0/encoderblock_(\d+)/LayerNorm_(\d)/bias",
     "octo_transformer.transformer.layers.{0}.LayerNorm_{1}.bias", None),
    (r"octo_transformer/BlockTransformer_0/Transformer_0/encoderblock_(\d+)/MultiHeadDotProductAttention_0/(query|key|value)/kernel",
     "octo_transformer.transformer.layers.{0}.MultiHeadDotProductAttention_0.{1}.weight", "qkv_kernel"),
    (r"octo_transformer/BlockTransformer_0/Transformer_0/encoderblock_(\d+)/MultiHeadDotProductAttention_0/(query|key|value)/bias",
     "octo_transformer.transformer.layers.{0}.MultiHeadDotProductAttention_0.{1}.bias", "qkv_bias"),
    (r"octo_transformer/BlockTransformer_0/Transformer_0/encoderblock_(\d+)/MultiHeadDotProductAttention_0/out/kernel",
     "octo_transformer.transformer.layers.{0}.MultiHeadDotProductAttention_0.out.weight", "out_kernel"),
    (r"octo_transformer/BlockTransformer_0/Transformer_0/encoderblock_(\d+)/MultiHeadDotProductAttention_0/out/bias",
     "octo_transformer.transformer.layers.{0}.MultiHeadDotProductAttention_0.out.bias", None),
    (r"octo_transformer/BlockTransformer_0/Transformer_0/encoderblock_(\d+)/MlpBlock_0/Dense_(\d)/kernel",
     "octo_transformer.transformer.layers.{0}.MlpBlock_0.Dense_{1}.weight", "dense_kernel"),
    (r"octo_transformer/BlockTransformer_0/Transformer_0/encoderblock_(\d+)/MlpBlock_0/Dense_(\d)/bias",
     "octo_transformer.transformer.layers.{0}.MlpBlock_0.Dense_{1}.bias", None),
    (r"octo_transformer/BlockTransformer_0/Transformer_0/encoder_norm/scale",
     "octo_transformer.transformer.encoder_norm.weight", None),
    (r"octo_transformer/BlockTransformer_0/Transformer_0/encoder_norm/bias",
     "octo_transformer.transformer.encoder_norm.bias", None),
]


def transform(value: np.ndarray, kind):
    if kind is None:
        return value
    if kind == "dense_kernel":
        return value.T
    if kind == "qkv_kernel":
        # (dim, heads, head_dim) -> (heads*head_dim, dim)
        d, h, hd = value.shape
        return value.reshape(d, h * hd).T
    if kind == "qkv_bias":
        return value.reshape(-1)
    if kind == "out_kernel":
        # (heads, head_dim, dim) -> (dim, heads*head_dim)
        h, hd, d = value.shape
        return value.reshape(h * hd, d).T
    raise ValueError(kind)


def convert_params(params):
    flat = flatten_dict(params, sep="/")
    state_dict, unmatched = {}, []
    for path, value in flat.items():
        value = np.asarray(jax.device_get(value), dtype=np.float32)
        for pattern, template, kind in RULES:
            m = re.fullmatch(pattern, path)
            if m:
                state_dict[template.format(*m.groups())] = torch.from_numpy(np.ascontiguousarray(transform(value, kind)))
                break
        else:
            unmatched.append(path)
    return state_dict, unmatched


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hf_path", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    from octo.model.octo_model import OctoModel as JaxOctoModel  # heavy import, keep local

    jax_model = JaxOctoModel.load_pretrained(args.hf_path)
    state_dict, unmatched = convert_params(jax_model.params)
    print(f"converted {len(state_dict)} tensors, {len(unmatched)} flax params need manual mapping")
    for p in unmatched[:20]:
        print("  unmatched:", p)

    os.makedirs(args.out, exist_ok=True)
    torch.save(state_dict, os.path.join(args.out, "model.pt"))
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(jax_model.config.to_dict() if hasattr(jax_model.config, "to_dict") else dict(jax_model.config), f, indent=2, default=str)
    with open(os.path.join(args.out, "dataset_statistics.json"), "w") as f:
        json.dump(jax.tree_util.tree_map(lambda x: np.asarray(x).tolist(), jax_model.dataset_statistics), f)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
