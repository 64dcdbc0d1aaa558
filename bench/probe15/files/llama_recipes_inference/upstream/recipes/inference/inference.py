# Copyright (c) Meta Platforms, Inc. and affiliates.
# This software may be used and distributed according to the terms of the Llama 2 Community License Agreement.

import os
import sys
import time

import fire
import torch
from accelerate.utils import is_xpu_available
from peft import PeftModel
from transformers import AutoTokenizer, LlamaForCausalLM, BitsAndBytesConfig

from llama_recipes.inference.safety_utils import get_safety_checker, AgentType


def load_model(model_name, quantization, use_fast_kernels):
    bnb_config = None
    if quantization == "4bit":
        bnb_config = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16)
    elif quantization == "8bit":
        bnb_config = BitsAndBytesConfig(load_in_8bit=True)
    return LlamaForCausalLM.from_pretrained(
        model_name,
        return_dict=True,
        quantization_config=bnb_config,
        device_map="auto",
        low_cpu_mem_usage=True,
        attn_implementation="flash_attention_2" if use_fast_kernels else "sdpa",
    )


def main(
    model_name,
    peft_model: str = None,
    quantization: str = None,  # "4bit" or "8bit"
    max_new_tokens=100,
    prompt_file: str = None,
    seed: int = 42,
    do_sample: bool = True,
    min_length: int = None,
    use_cache: bool = True,
    top_p: float = 1.0,
    temperature: float = 1.0,
    top_k: int = 50,
    repetition_penalty: float = 1.0,
    length_penalty: int = 1,
    enable_azure_content_safety: bool = False,
    enable_sensitive_topics: bool = False,
    enable_salesforce_content_safety: bool = True,
    enable_llamaguard_content_safety: bool = False,
    max_padding_length: int = None,
    use_fast_kernels: bool = False,  # FlashAttention-2 kernels for faster inference
    **kwargs,
):
    if prompt_file is not None:
        assert os.path.exists(prompt_file), f"Provided Prompt file does not exist {prompt_file}"
        with open(prompt_file, "r") as f:
            user_prompt = "\n".join(f.readlines())
    elif not sys.stdin.isatty():
        user_prompt = "\n".join(sys.stdin.readlines())
    else:
        print("No user prompt provided. Exiting.")
        sys.exit(1)

    safety_checker = get_safety_checker(enable_azure_content_safety, enable_sensitive_topics,
                                        enable_salesforce_content_safety, enable_llamaguard_content_safety)
    safety_results = [check(user_prompt) for check in safety_checker]
    if not all(r[1] for r in safety_results):
        print("User prompt deemed unsafe.")
        for method, is_safe, report in safety_results:
            if not is_safe:
                print(method)
                print(report)
        print("Skipping the inference as the prompt is not safe.")
        sys.exit(1)

    # Set the seeds for reproducibility
    if is_xpu_available():
        torch.xpu.manual_seed(seed)
    else:
        torch.cuda.manual_seed(seed)
    torch.manual_seed(seed)

    model = load_model(model_name, quantization, use_fast_kernels)
    if peft_model:
        model = PeftModel.from_pretrained(model, peft_model)
    model.eval()

    tokenizer = AutoTokenizer.from_pretrained(model_name)
    tokenizer.pad_token = tokenizer.eos_token

    batch = tokenizer(user_prompt, padding="max_length", truncation=True, max_length=max_padding_length,
                      return_tensors="pt")
    if is_xpu_available():
        batch = {k: v.to("xpu") for k, v in batch.items()}
    else:
        batch = {k: v.to("cuda") for k, v in batch.items()}

    start = time.perf_counter()
    with torch.no_grad():
        outputs = model.generate(
            **batch,
            max_new_tokens=max_new_tokens,
            do_sample=do_sample,
            top_p=top_p,
            temperature=temperature,
            min_length=min_length,
            use_cache=use_cache,
            top_k=top_k,
            repetition_penalty=repetition_penalty,
            length_penalty=length_penalty,
            **kwargs,
        )
    e2e_inference_time = (time.perf_counter() - start) * 1000
    print(f"the inference time is {e2e_inference_time} ms")
    output_text = tokenizer.decode(outputs[0], skip_special_tokens=True)

    safety_results = [check(output_text, agent_type=AgentType.AGENT, user_prompt=user_prompt)
                      for check in safety_checker]
    if all(r[1] for r in safety_results):
        print(f"Model output:\n{output_text}")
    else:
        print("Model output deemed unsafe.")
        for method, is_safe, report in safety_results:
            if not is_safe:
                print(method)
                print(report)


if __name__ == "__main__":
    fire.Fire(main)
