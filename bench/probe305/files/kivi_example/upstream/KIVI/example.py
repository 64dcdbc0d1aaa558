# LLaMA model with KIVI
import warnings
warnings.filterwarnings("ignore")
import torch
import random
from models.llama_kivi import LlamaForCausalLM_KIVI
from transformers import LlamaConfig, AutoTokenizer
from datasets import load_dataset

# For reproducibility
random.seed(0)
torch.manual_seed(0)

config = LlamaConfig.from_pretrained("meta-llama/Llama-2-7b-hf")

config.k_bits = 2  # KiVi currently support 2/4 K/V bits
config.v_bits = 2
config.group_size = 32
config.residual_length = 32  # corresponding to the number of recent fp16 tokens
config.use_flash = True  # use flash-attention-2 for the prefill

CACHE_DIR = "./cache"

model = LlamaForCausalLM_KIVI.from_pretrained(
    pretrained_model_name_or_path="meta-llama/Llama-2-7b-hf",
    config=config,
    cache_dir=CACHE_DIR,
    torch_dtype=torch.float16,
    low_cpu_mem_usage=True,
    device_map="auto",
)

tokenizer = AutoTokenizer.from_pretrained(
    "meta-llama/Llama-2-7b-hf",
    use_fast=False,
    trust_remote_code=True,
    tokenizer_type="llama")

model.eval()
file_name = "passkey_examples.jsonl"
method_name = f"K{config.k_bits}V{config.v_bits} KiVi"
print("=========="*2 + f"**{method_name}**" + "=========="*2)
for line in open(file_name, "r"):
    example = eval(line)
    prompt = example["input"]
    groundtruth = example["target"]
    input_ids = tokenizer(prompt, return_tensors="pt").input_ids.cuda()
    prompt_length = input_ids.shape[-1]
    output = model.generate(input_ids, max_new_tokens=len(groundtruth) + 10)[0]
    pred = tokenizer.decode(output[prompt_length:], skip_special_tokens=True)
    print("=========="*2 + f"**Sample {example.get('id', '?')}**" + "=========="*2)
    print(f"Prompt length: {prompt_length}")
    print(f"Ground truth: {groundtruth}")
    print(f"Prediction: {pred.strip()}")

# GSM8K sanity check
dataset = load_dataset("gsm8k", "main")
prompt = ""
for i in range(5):
    prompt += "Question: " + dataset["train"][i]["question"] + "\nAnswer: " + dataset["train"][i]["answer"] + "\n"
prompt += "Question: John takes care of 10 dogs. Each dog takes .5 hours a day to walk and take care of their business. How many hours a week does he spend taking care of dogs?"
inputs = tokenizer(prompt, return_tensors="pt").input_ids.cuda()

output = model.generate(inputs, max_new_tokens=96)
config_str = f"# prompt tokens: {inputs.shape[1]}, K bit: {config.k_bits}, v_bits: {config.v_bits}, group_size: {config.group_size}, residual_length: {config.residual_length}"

print(prompt + "\n" + "=" * 10 + f"\n{config_str}\n" + "=" * 10 + "\nKiVi Output:")
print(tokenizer.decode(output[0].tolist()[inputs.shape[1]:], skip_special_tokens=True))
