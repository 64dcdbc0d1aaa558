# Copyright (c) 2024, EleutherAI
#
# Licensed under the Apache License, Version 2.0 (the "License");

"""Convert a GPT-NeoX (DeepSpeed pipeline) checkpoint into a Hugging Face GPTNeoXForCausalLM.

Conversion itself is done on CPU; the optional --test flag runs a short greedy
generation on the first accelerator to sanity-check the result.
"""

import argparse
import os
import sys

import torch
import yaml
from tqdm import tqdm
from transformers import AutoTokenizer, GPTNeoXConfig, GPTNeoXForCausalLM


def load_partitions(input_checkpoint_path, mp_partitions, layer_idx):
    """Returns a list containing all weights in a given layer from a model (across MP partitions)"""
    loaded_tp_ranks = [
        torch.load(
            os.path.join(
                input_checkpoint_path,
                f"layer_{layer_idx:02}-model_{i:02}-model_states.pt",
            ),
            map_location=torch.device("cpu"),
        )
        for i in range(mp_partitions)
    ]
    return loaded_tp_ranks


def get_key(loaded_config, key, default=None):
    """Search for a given key in a NeoX yaml. normalizes underscores -> hyphens"""
    key = key.replace("_", "-")
    try:
        return loaded_config[key]
    except KeyError:
        key = key.replace("-", "_")
        try:
            return loaded_config[key]
        except KeyError:
            return default


def create_config(neox_config):
    """take in a loaded yaml from NeoX and assign relevant values to HF config."""
    args = dict(
        vocab_size=get_key(neox_config, "padded-vocab-size", 50432),
        hidden_size=get_key(neox_config, "hidden-size"),
        num_hidden_layers=get_key(neox_config, "num-layers"),
        num_attention_heads=get_key(neox_config, "num-attention-heads"),
        intermediate_size=(get_key(neox_config, "hidden-size") * 4),
        hidden_act=get_key(neox_config, "activation", default="gelu"),
        rotary_pct=get_key(neox_config, "rotary-pct", default=1.0),
        rotary_emb_base=get_key(neox_config, "rotary-emb-base", default=10000),
        max_position_embeddings=get_key(neox_config, "max-position-embeddings"),
        initializer_range=get_key(neox_config, "init-method-std", 0.02),
        layer_norm_eps=get_key(neox_config, "layernorm-epsilon", 1e-5),
        use_cache=True,
        bos_token_id=0,
        eos_token_id=0,
        tie_word_embeddings=(not get_key(neox_config, "no-weight-tying", False)),
        use_parallel_residual=get_key(neox_config, "gpt-j-residual", False),
    )
    return GPTNeoXConfig(**args)


def convert(input_checkpoint_path, loaded_config, output_checkpoint_path):
    hf_config = create_config(loaded_config)
    hf_model = GPTNeoXForCausalLM(hf_config)
    mp_partitions = get_key(loaded_config, "model-parallel-size")

    # embeddings
    loaded_tp_ranks = load_partitions(input_checkpoint_path, mp_partitions, 0)
    hf_model.gpt_neox.embed_in.load_state_dict(
        {"weight": torch.cat([t["word_embeddings.weight"] for t in loaded_tp_ranks], dim=0)}
    )

    for layer_i in tqdm(range(get_key(loaded_config, "num-layers"))):
        hf_layer = hf_model.gpt_neox.layers[layer_i]
        loaded_tp_ranks = load_partitions(input_checkpoint_path, mp_partitions, layer_i + 2)
        state_dict = {}
        for key in ["attention.dense.weight", "mlp.dense_4h_to_h.weight"]:
            state_dict[key] = torch.cat([t[key] for t in loaded_tp_ranks], dim=1)
        for key in ["input_layernorm.weight", "input_layernorm.bias", "post_attention_layernorm.weight",
                    "post_attention_layernorm.bias", "attention.dense.bias", "mlp.dense_4h_to_h.bias"]:
            state_dict[key] = sum([t[key] for t in loaded_tp_ranks]) / len(loaded_tp_ranks)
        for key in ["mlp.dense_h_to_4h.weight", "mlp.dense_h_to_4h.bias",
                    "attention.query_key_value.weight", "attention.query_key_value.bias"]:
            state_dict[key] = torch.cat([t[key] for t in loaded_tp_ranks], dim=0)
        state_dict["attention.bias"] = hf_layer.state_dict()["attention.bias"]
        state_dict["attention.masked_bias"] = hf_layer.state_dict()["attention.masked_bias"]
        hf_layer.load_state_dict(state_dict)

    # final layer norm and output head
    n = get_key(loaded_config, "num-layers")
    loaded_tp_ranks = load_partitions(input_checkpoint_path, mp_partitions, n + 3)
    hf_model.gpt_neox.final_layer_norm.load_state_dict(
        {"weight": sum([t["norm.weight"] for t in loaded_tp_ranks]) / len(loaded_tp_ranks),
         "bias": sum([t["norm.bias"] for t in loaded_tp_ranks]) / len(loaded_tp_ranks)}
    )
    loaded_tp_ranks = load_partitions(input_checkpoint_path, mp_partitions, n + 4)
    hf_model.embed_out.load_state_dict(
        {"weight": torch.cat([t["final_linear.weight"] for t in loaded_tp_ranks], dim=0)}
    )
    del loaded_tp_ranks
    hf_model.save_pretrained(output_checkpoint_path)
    return hf_model


def sanity_check(hf_model, tokenizer_path):
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_path)
    device = "cuda:0" if torch.cuda.is_available() else "cpu"
    hf_model = hf_model.half().to(device).eval()
    inputs = tokenizer("The capital of France is", return_tensors="pt").to(device)
    with torch.no_grad():
        out = hf_model.generate(**inputs, max_new_tokens=16, do_sample=False)
    print(tokenizer.decode(out[0]))
    torch.cuda.empty_cache()


def main(input_args=None):
    parser = argparse.ArgumentParser(description="Merge MP partitions and convert to HF Model.")
    parser.add_argument("--input_dir", type=str, help="Path to NeoX checkpoint, e.g. /path/to/model/global_step143000")
    parser.add_argument("--config_file", type=str, help="Path to config file for the input NeoX checkpoint.")
    parser.add_argument("--output_dir", type=str, help="Output dir, where to save the HF Model, tokenizer, and configs")
    parser.add_argument("--tokenizer", type=str, default=None)
    parser.add_argument("--test", action="store_true", help="run a short greedy generation after conversion")
    args = parser.parse_args(input_args)

    with open(args.config_file) as f:
        loaded_config = yaml.full_load(f)

    hf_model = convert(args.input_dir, loaded_config, args.output_dir)
    if args.test and args.tokenizer:
        sanity_check(hf_model, args.tokenizer)


if __name__ == "__main__":
    main()
