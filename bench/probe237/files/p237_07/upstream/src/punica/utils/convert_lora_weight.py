"""Convert a PEFT LoRA checkpoint into punica's stacked layout.

PEFT stores one ``lora_A``/``lora_B`` pair per module and layer, e.g.::

    base_model.model.model.layers.3.self_attn.q_proj.lora_A.weight  [r, h_in]
    base_model.model.model.layers.3.self_attn.q_proj.lora_B.weight  [h_out, r]

punica wants, per projection, ``[num_layers, r, h_in]`` for A and
``[num_layers, r, h_out]`` for B (B transposed) with the LoRA scaling
``alpha / r`` folded into B.

    python -m punica.utils.convert_lora_weight adapter_dir/ out.punica.pt
"""
import argparse
import json
import pathlib
import re
from collections import defaultdict
from typing import Dict

import torch

PROJ_MAP = {
    "q_proj": "q",
    "k_proj": "k",
    "v_proj": "v",
    "o_proj": "o",
    "gate_proj": "gate",
    "up_proj": "up",
    "down_proj": "down",
}
_KEY_RE = re.compile(
    r"^base_model\.model\.model\.layers\.(\d+)\.(self_attn|mlp)\.(\w+_proj)\.lora_([AB])(?:\.default)?\.weight$"
)


def load_peft_state(adapter_dir: pathlib.Path) -> Dict[str, torch.Tensor]:
    st = adapter_dir / "adapter_model.safetensors"
    if st.exists():
        from safetensors.torch import load_file

        return load_file(str(st), device="cpu")
    # older PEFT versions write a pickled state dict
    return torch.load(adapter_dir / "adapter_model.bin", map_location="cpu")


def convert(
    adapter_dir: pathlib.Path,
    dtype: torch.dtype = torch.float16,
    device: str = "cpu",
) -> Dict[str, torch.Tensor]:
    cfg = json.loads((adapter_dir / "adapter_config.json").read_text())
    r = int(cfg["r"])
    scale = float(cfg.get("lora_alpha", r)) / r
    if cfg.get("use_rslora"):
        scale = float(cfg["lora_alpha"]) / (r ** 0.5)

    state = load_peft_state(adapter_dir)
    per_proj = defaultdict(dict)
    num_layers = 0
    for key, w in state.items():
        m = _KEY_RE.match(key)
        if m is None:
            print(f"skip {key}")
            continue
        layer, _, proj, ab = m.groups()
        layer = int(layer)
        num_layers = max(num_layers, layer + 1)
        # fp32 math for the transpose + scaling, then cast once
        w = w.to(device=device, dtype=torch.float32)
        if ab == "B":
            w = (w * scale).t().contiguous()
        per_proj[(PROJ_MAP[proj], ab)][layer] = w

    out = {}
    for (name, ab), layers in per_proj.items():
        missing = [i for i in range(num_layers) if i not in layers]
        if missing:
            raise ValueError(f"{name}.{ab}: missing layers {missing}")
        stacked = torch.stack([layers[i] for i in range(num_layers)])
        out[f"{name}.{ab}"] = stacked.to(dtype).cpu()
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("adapter_dir", type=pathlib.Path)
    parser.add_argument("output", type=pathlib.Path)
    parser.add_argument("--dtype", default="float16", choices=["float16", "bfloat16", "float32"])
    parser.add_argument(
        "--device",
        default="cuda" if torch.cuda.is_available() else "cpu",
        help="device used for the transpose/scale math (GPU is ~20x faster for 70B adapters)",
    )
    args = parser.parse_args()

    tensors = convert(args.adapter_dir, getattr(torch, args.dtype), args.device)
    for k, v in sorted(tensors.items()):
        print(f"{k:>8}: {tuple(v.shape)} {v.dtype}")
    torch.save(tensors, args.output)
    print(f"saved {len(tensors)} tensors to {args.output}")


if __name__ == "__main__":
    main()
