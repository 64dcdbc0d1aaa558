"""Convert a DeepSpeed (ZeRO) ShowUI checkpoint into a merged Hugging Face model.

    cd $LOG_DIR/ckpt_model && python zero_to_fp32.py . ../pytorch_model.bin
    python merge_weight.py --exp_dir $LOG_DIR --model_id Qwen/Qwen2-VL-2B-Instruct
"""
import argparse
import glob
import os
import shutil

import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoProcessor

from model.showui.modeling_showui import ShowUIForConditionalGeneration

# merging is done on the host; keep matmuls in full fp32 precision for the lora merge
torch.backends.cuda.matmul.allow_tf32 = False


def parse_args():
    parser = argparse.ArgumentParser(description="merge lora weights and save model with hf format")
    parser.add_argument("--exp_dir", required=True, type=str)
    parser.add_argument("--model_id", default="Qwen/Qwen2-VL-2B-Instruct", type=str)
    parser.add_argument("--lora_r", default=32, type=int)
    parser.add_argument("--lora_alpha", default=64, type=int)
    parser.add_argument("--lora_target_modules", default="qkv_proj", type=str)
    parser.add_argument("--save_dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    return parser.parse_args()


def main():
    args = parse_args()
    weight = os.path.join(args.exp_dir, "pytorch_model.bin")
    save_path = os.path.join(args.exp_dir, "ckpt_model", "merged_model")
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.save_dtype]

    model = ShowUIForConditionalGeneration.from_pretrained(
        args.model_id, torch_dtype=torch.float32, low_cpu_mem_usage=True, _attn_implementation="eager"
    )
    target_modules = sorted({
        name for name, module in model.named_modules()
        if isinstance(module, torch.nn.Linear) and "visual" not in name and "lm_head" not in name
        and any(t in name for t in args.lora_target_modules.split(","))
    })
    lora_config = LoraConfig(r=args.lora_r, lora_alpha=args.lora_alpha, target_modules=target_modules,
                             lora_dropout=0.0, bias="none", task_type="CAUSAL_LM")
    model = get_peft_model(model, lora_config)

    state_dict = torch.load(weight, map_location="cpu")
    missing, unexpected = model.load_state_dict(state_dict, strict=False)
    print(f"missing: {len(missing)}, unexpected: {len(unexpected)}")

    model = model.merge_and_unload()
    model = model.to(dtype)
    os.makedirs(save_path, exist_ok=True)
    model.save_pretrained(save_path, safe_serialization=True)

    processor = AutoProcessor.from_pretrained(args.model_id)
    processor.save_pretrained(save_path)
    for f in glob.glob(os.path.join(args.exp_dir, "*.json")):
        shutil.copy(f, save_path)
    print(f"merged model saved to {save_path}")


if __name__ == "__main__":
    main()
