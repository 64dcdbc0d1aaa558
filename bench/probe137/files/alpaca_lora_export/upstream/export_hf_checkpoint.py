"""Merge the LoRA adapter into the base LLaMA weights and write a plain HF checkpoint.

    BASE_MODEL=huggyllama/llama-7b LORA_WEIGHTS=./lora-alpaca python export_hf_checkpoint.py

Merging on the GPU is ~10x faster than on the CPU for 13B+; set MERGE_DEVICE=cpu
if the model does not fit into VRAM.
"""
import os

import torch
import transformers  # noqa: F401
from peft import PeftModel
from transformers import LlamaForCausalLM, LlamaTokenizer  # noqa: F402

BASE_MODEL = os.environ.get("BASE_MODEL", None)
LORA_WEIGHTS = os.environ.get("LORA_WEIGHTS", "tloen/alpaca-lora-7b")
OUT_DIR = os.environ.get("OUT_DIR", "./hf_ckpt")
MERGE_DEVICE = os.environ.get("MERGE_DEVICE", "cuda" if torch.cuda.is_available() else "cpu")
assert (
    BASE_MODEL
), "Please specify a value for BASE_MODEL environment variable, e.g. `export BASE_MODEL=huggyllama/llama-7b`"  # noqa: E501

tokenizer = LlamaTokenizer.from_pretrained(BASE_MODEL)

base_model = LlamaForCausalLM.from_pretrained(
    BASE_MODEL,
    load_in_8bit=False,
    torch_dtype=torch.float16,
    device_map={"": MERGE_DEVICE},
)

first_weight = base_model.model.layers[0].self_attn.q_proj.weight
first_weight_old = first_weight.clone()

lora_model = PeftModel.from_pretrained(
    base_model,
    LORA_WEIGHTS,
    device_map={"": MERGE_DEVICE},
    torch_dtype=torch.float16,
)

lora_weight = lora_model.base_model.model.model.layers[0].self_attn.q_proj.weight

assert torch.allclose(first_weight_old, first_weight)

# merge weights - new merging method from peft
lora_model = lora_model.merge_and_unload()

lora_model.train(False)

# did we do anything?
assert not torch.allclose(first_weight_old, first_weight)

lora_model_sd = lora_model.state_dict()
deloreanized_sd = {
    k.replace("base_model.model.", ""): v.to("cpu")
    for k, v in lora_model_sd.items()
    if "lora" not in k
}

LlamaForCausalLM.save_pretrained(
    base_model, OUT_DIR, state_dict=deloreanized_sd, max_shard_size="400MB"
)
tokenizer.save_pretrained(OUT_DIR)
print(f"saved merged checkpoint to {OUT_DIR} (merged on {MERGE_DEVICE})")
