#!/usr/bin/env python
# coding: utf-8
# Converted from notebooks/finetune_mistral_sft.ipynb with `jupyter nbconvert --to script`.
# Shell cells (`!cmd`) were rewritten as os.system(...) so the script runs outside Jupyter.

# # Fine-tune Mistral-7B on your own chat data (SFT + LoRA) — Colab edition
#
# Runtime → Change runtime type → **A100** (or T4 with 4-bit loading).

# In[1]:


import os

os.system("nvidia-smi")


# In[2]:


os.system("pip install -q -U transformers datasets accelerate peft trl bitsandbytes")
os.system("pip install -q flash-attn --no-build-isolation")


# In[3]:


import gc
import json

import torch
from datasets import load_dataset
from peft import LoraConfig
from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig
from trl import SFTConfig, SFTTrainer

assert torch.cuda.is_available(), "Switch the Colab runtime to a GPU first!"
gpu_stats = torch.cuda.get_device_properties(0)
start_gpu_memory = round(torch.cuda.max_memory_reserved() / 1024 / 1024 / 1024, 3)
max_memory = round(gpu_stats.total_memory / 1024 / 1024 / 1024, 3)
print(f"GPU = {gpu_stats.name}. Max memory = {max_memory} GB.")
print(f"{start_gpu_memory} GB of memory reserved.")


# ## Load the model
# On a T4 (16 GB) we load in 4-bit; on an A100 bf16 fits comfortably.

# In[4]:


model_id = "mistralai/Mistral-7B-v0.3"
use_4bit = max_memory < 30

bnb_config = BitsAndBytesConfig(
    load_in_4bit=True,
    bnb_4bit_quant_type="nf4",
    bnb_4bit_compute_dtype=torch.float16,
) if use_4bit else None

model = AutoModelForCausalLM.from_pretrained(
    model_id,
    quantization_config=bnb_config,
    torch_dtype=torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16,
    attn_implementation="flash_attention_2",
    device_map="auto",
)
tokenizer = AutoTokenizer.from_pretrained(model_id)
tokenizer.pad_token = tokenizer.eos_token
tokenizer.padding_side = "right"


# ## Data
# Any dataset with a `messages` column in the OpenAI chat format works.

# In[5]:


dataset = load_dataset("HuggingFaceH4/ultrachat_200k", split="train_sft[:5000]")
dataset = dataset.train_test_split(test_size=0.02, seed=42)
print(dataset)
print(json.dumps(dataset["train"][0]["messages"][:2], indent=2)[:800])


# In[6]:


peft_config = LoraConfig(
    r=16,
    lora_alpha=32,
    lora_dropout=0.05,
    bias="none",
    task_type="CAUSAL_LM",
    target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
)

args = SFTConfig(
    output_dir="mistral-7b-ultrachat-lora",
    num_train_epochs=1,
    per_device_train_batch_size=4,
    gradient_accumulation_steps=4,
    gradient_checkpointing=True,
    optim="adamw_8bit",
    learning_rate=2e-4,
    lr_scheduler_type="cosine",
    warmup_ratio=0.03,
    max_seq_length=2048,
    packing=True,
    logging_steps=10,
    save_strategy="epoch",
    fp16=not torch.cuda.is_bf16_supported(),
    bf16=torch.cuda.is_bf16_supported(),
    report_to="none",
)

trainer = SFTTrainer(
    model=model,
    args=args,
    train_dataset=dataset["train"],
    eval_dataset=dataset["test"],
    peft_config=peft_config,
    processing_class=tokenizer,
)


# In[7]:


trainer_stats = trainer.train()


# In[8]:


used_memory = round(torch.cuda.max_memory_reserved() / 1024 / 1024 / 1024, 3)
used_memory_for_lora = round(used_memory - start_gpu_memory, 3)
used_percentage = round(used_memory / max_memory * 100, 3)
print(f"{trainer_stats.metrics['train_runtime']} seconds used for training.")
print(f"Peak reserved memory = {used_memory} GB ({used_percentage} % of max).")
print(f"Peak reserved memory for training = {used_memory_for_lora} GB.")


# ## Try it

# In[9]:


messages = [{"role": "user", "content": "Give me three tips for writing clean Python."}]
inputs = tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt").to("cuda")
outputs = model.generate(input_ids=inputs, max_new_tokens=256, do_sample=True, temperature=0.7)
print(tokenizer.decode(outputs[0][inputs.shape[1]:], skip_special_tokens=True))


# ## Save and free memory

# In[10]:


trainer.model.save_pretrained("mistral-7b-ultrachat-lora/final")
tokenizer.save_pretrained("mistral-7b-ultrachat-lora/final")
del trainer, model
gc.collect()
torch.cuda.empty_cache()
os.system("nvidia-smi --query-gpu=memory.used,memory.total --format=csv")
