#!/usr/bin/env python
# coding: utf-8

# # Understanding Llama2 with Captum LLM Attribution
#
# In this tutorial, we demonstrate the LLM attribution functionality
# introduced in Captum v0.7, which makes it a breeze to applying the
# attribution algorithms to interpret the large langague models (LLM) in
# text generation. The new functionalities include a series utilities that
# help you with many common tedious scaffolding required by LLMs like
# defining masks and baselines, and a new attribution wrapper class
# `LLMAttribution`, which adapts the existing attribution algorithms for
# LLM. We will showcase its usage with the Llama2 model.
#
# The 4-bit weights need a GPU with bitsandbytes support (tested on A10G).

import warnings

import bitsandbytes as bnb
import matplotlib.pyplot as plt
import torch
from transformers import AutoTokenizer, AutoModelForCausalLM, BitsAndBytesConfig

from captum.attr import (
    FeatureAblation,
    ShapleyValues,
    LayerIntegratedGradients,
    LLMAttribution,
    LLMGradientAttribution,
    TextTokenInput,
    TextTemplateInput,
    ProductBaselines,
)

# Ignore warnings due to transformers library
warnings.filterwarnings("ignore", ".*past_key_values.*")
warnings.filterwarnings("ignore", ".*Skipping this token.*")


# ## Preparation
#
# Let's make a helper function to load models through Huggingface. We will
# also add an extra step to quantize the model, which will significantly
# reduce its memory usage.

def load_model(model_name, bnb_config):
    n_gpus = torch.cuda.device_count()
    max_memory = "10000MB"

    model = AutoModelForCausalLM.from_pretrained(
        model_name,
        quantization_config=bnb_config,
        device_map="cuda:0",  # dispatch efficiently the model on the available ressources
        max_memory={i: max_memory for i in range(n_gpus)},
    )
    tokenizer = AutoTokenizer.from_pretrained(model_name, use_auth_token=True)

    # Needed for LLaMA tokenizer
    tokenizer.pad_token = tokenizer.eos_token

    return model, tokenizer


def create_bnb_config():
    bnb_config = BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_use_double_quant=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_compute_dtype=torch.bfloat16,
    )

    return bnb_config


# Then we load the pretrained Llama2 model and its tokenizer. You need to
# have a Huggingface token with access to Meta's Llama2 weights.

model_name = "meta-llama/Llama-2-13b-chat-hf"

bnb_config = create_bnb_config()

model, tokenizer = load_model(model_name, bnb_config)

print("Loaded", model_name, "- footprint %.2f GB" % (model.get_memory_footprint() / 2**30))
print("4-bit linear layers:", sum(isinstance(m, bnb.nn.Linear4bit) for m in model.modules()))

# Let's test the model with a simple prompt and take a look at the output.

eval_prompt = "Dave lives in Palm Coast, FL and is a lawyer. His personal interests include"

model_input = tokenizer(eval_prompt, return_tensors="pt").to("cuda")
model.eval()
with torch.no_grad():
    output_ids = model.generate(model_input["input_ids"], max_new_tokens=15)[0]
    response = tokenizer.decode(output_ids, skip_special_tokens=True)
    print(response)

# ## Perturbation-based Attribution
#
# Let's start with the perturbation-based methods. We wrap FeatureAblation
# in LLMAttribution and feed it a TextTemplateInput so that each feature is
# a whole phrase (name, city, state, occupation, pronoun).

fa = FeatureAblation(model)

llm_attr = LLMAttribution(fa, tokenizer)

inp = TextTemplateInput(
    template="{} lives in {}, {} and is a {}. {} personal interests include",
    values=["Dave", "Palm Coast", "FL", "lawyer", "His"],
)

target = "playing golf, hiking, and cooking."

attr_res = llm_attr.attribute(inp, target=target)

print("attr to the output sequence:", attr_res.seq_attr.shape)  # shape(n_input_token)
print("attr to the output tokens:", attr_res.token_attr.shape)  # shape(n_output_token, n_input_token)

attr_res.plot_token_attr(show=True)

# Baselines: instead of removing a feature we can replace it with a
# reference value drawn from a distribution.

baselines = ProductBaselines(
    {
        ("name", "pronoun"): [("Sarah", "her"), ("John", "His"), ("Martin", "His"), ("Rachel", "Her")],
        ("city", "state"): [("Seattle", "WA"), ("Boston", "MA")],
        "occupation": ["doctor", "engineer", "teacher", "technician", "plumber"],
    }
)

inp = TextTemplateInput(
    "{name} lives in {city}, {state} and is a {occupation}. {pronoun} personal interests include",
    values={"name": "Dave", "city": "Palm Coast", "state": "FL", "occupation": "lawyer", "pronoun": "His"},
    baselines=baselines,
    mask={"name": 0, "city": 1, "state": 1, "occupation": 2, "pronoun": 0},
)

attr_res = llm_attr.attribute(inp, target=target, num_trials=3)
attr_res.plot_token_attr(show=True)

# Shapley values over the same grouped features.

sv = ShapleyValues(model)
sv_llm_attr = LLMAttribution(sv, tokenizer)
attr_res = sv_llm_attr.attribute(inp, target=target, num_trials=3)
attr_res.plot_seq_attr(show=True)

# Free the perturbation passes' activations before the gradient methods.
torch.cuda.empty_cache()
print("peak memory after perturbation methods: %.2f GB" % (torch.cuda.max_memory_allocated() / 2**30))

# ## Gradient-based Attribution
#
# Gradient-based methods need access to the embedding layer; we use
# LayerIntegratedGradients on `model.model.embed_tokens` and wrap it in
# LLMGradientAttribution, which accepts TextTokenInput.

lig = LayerIntegratedGradients(model, model.model.embed_tokens)

llm_attr = LLMGradientAttribution(lig, tokenizer)

skip_tokens = [1]  # skip the special token for the start of the text <s>
inp = TextTokenInput(
    eval_prompt,
    tokenizer,
    skip_tokens=skip_tokens,
)

target = "playing guitar, hiking, and spending time with his family."

attr_res = llm_attr.attribute(inp, target=target, skip_tokens=skip_tokens)

attr_res.plot_seq_attr(show=True)
attr_res.plot_token_attr(show=True)
plt.savefig("llama2_lig_token_attr.png", bbox_inches="tight")
