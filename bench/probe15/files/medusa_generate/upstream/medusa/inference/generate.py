"""Medusa speculative decoding with tree attention (single sequence, greedy acceptance)."""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from fastchat.model import get_conversation_template

from medusa.model.medusa_model import MedusaModel
from medusa.model.medusa_choices import mc_sim_7b_63
from medusa.model.utils import (
    evaluate_posterior,
    generate_candidates,
    generate_medusa_buffers,
    initialize_medusa,
    reset_medusa_mode,
    tree_decoding,
    update_inference_inputs,
)


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="FasterDecoding/medusa-vicuna-7b-v1.3")
    p.add_argument("--prompt", default="Tell me a short story about a robot learning to paint.")
    p.add_argument("--max-steps", type=int, default=512)
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--posterior-threshold", type=float, default=0.09)
    p.add_argument("--posterior-alpha", type=float, default=0.3)
    p.add_argument("--load-in-8bit", action="store_true")
    p.add_argument("--load-in-4bit", action="store_true")
    return p.parse_args()


@torch.inference_mode()
def medusa_generate(model, tokenizer, input_ids, medusa_choices, temperature, posterior_threshold,
                    posterior_alpha, max_steps):
    assert input_ids.shape[0] == 1, "Only support batch size 1 for now!!"
    input_ids = input_ids.clone()

    if hasattr(model, "medusa_choices") and model.medusa_choices == medusa_choices:
        medusa_buffers = model.medusa_buffers
    else:
        medusa_buffers = generate_medusa_buffers(medusa_choices, device=model.base_model.device)
    model.medusa_buffers = medusa_buffers
    model.medusa_choices = medusa_choices

    if hasattr(model, "past_key_values"):
        past_key_values = model.past_key_values
        past_key_values_data = model.past_key_values_data
        current_length_data = model.current_length_data
        current_length_data.zero_()
    else:
        past_key_values, past_key_values_data, current_length_data = initialize_medusa_kv(model)
        model.past_key_values = past_key_values
        model.past_key_values_data = past_key_values_data
        model.current_length_data = current_length_data

    input_len = input_ids.shape[1]
    reset_medusa_mode(model)
    medusa_logits, logits = initialize_medusa(input_ids, model, medusa_buffers["medusa_attn_mask"], past_key_values)
    new_token = 0
    accept_lengths = []

    for idx in range(max_steps):
        candidates, tree_candidates = generate_candidates(medusa_logits, logits, medusa_buffers["tree_indices"],
                                                          medusa_buffers["retrieve_indices"], temperature)
        medusa_logits, logits, outputs = tree_decoding(model, tree_candidates, past_key_values,
                                                       medusa_buffers["medusa_position_ids"], input_ids,
                                                       medusa_buffers["retrieve_indices"])
        best_candidate, accept_length = evaluate_posterior(logits, candidates, temperature, posterior_threshold,
                                                           posterior_alpha)
        input_ids, logits, medusa_logits, new_token = update_inference_inputs(
            input_ids, candidates, best_candidate, accept_length, medusa_buffers["retrieve_indices"], outputs,
            logits, medusa_logits, new_token, past_key_values_data, current_length_data)
        accept_lengths.append(int(accept_length) + 1)
        if tokenizer.eos_token_id in input_ids[0, input_len:]:
            break
    return input_ids[0, input_len:], accept_lengths


def initialize_medusa_kv(model):
    """Pre-allocate one contiguous KV buffer for all layers (avoids HF cache concatenation)."""
    cfg = model.config
    batch_size = 1
    head_dim = cfg.hidden_size // cfg.num_attention_heads
    data = torch.zeros(cfg.num_hidden_layers * 2, batch_size, cfg.num_key_value_heads, cfg.max_position_embeddings,
                       head_dim, device="cuda", dtype=model.dtype)
    current_length_data = torch.zeros(cfg.num_hidden_layers * 2, dtype=torch.long, device="cpu")
    past_key_values = []
    for i in range(cfg.num_hidden_layers):
        past_key_values.append([(data[2 * i + j], current_length_data[2 * i + j]) for j in range(2)])
    return past_key_values, data, current_length_data


def main():
    args = parse()
    model = MedusaModel.from_pretrained(
        args.model,
        torch_dtype=torch.float16,
        low_cpu_mem_usage=True,
        device_map="auto",
        load_in_8bit=args.load_in_8bit,
        load_in_4bit=args.load_in_4bit,
    )
    tokenizer = model.get_tokenizer()
    conv = get_conversation_template("vicuna")
    conv.append_message(conv.roles[0], args.prompt)
    conv.append_message(conv.roles[1], None)
    input_ids = tokenizer([conv.get_prompt()]).input_ids
    input_ids = torch.as_tensor(input_ids).cuda()

    torch.cuda.synchronize()
    start = time.time()
    output_ids, accept = medusa_generate(model, tokenizer, input_ids, mc_sim_7b_63, args.temperature,
                                         args.posterior_threshold, args.posterior_alpha, args.max_steps)
    torch.cuda.synchronize()  # stop the clock after the last token
    elapsed = time.time() - start
    text = tokenizer.decode(output_ids, skip_special_tokens=True, spaces_between_special_tokens=False)
    print(text)
    print(f"{len(output_ids)} tokens in {elapsed:.2f}s ({len(output_ids) / elapsed:.1f} tok/s), "
          f"mean accepted length {sum(accept) / len(accept):.2f}")


if __name__ == "__main__":
    main()
