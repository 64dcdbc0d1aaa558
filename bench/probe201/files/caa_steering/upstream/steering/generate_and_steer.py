"""
Contrastive Activation Addition (CAA) on Llama-2-chat.

1. Generate steering vectors: mean difference of residual-stream activations at the answer
   letter position between behaviour-matching (A/B) and behaviour-opposing completions.
2. Steer: add `multiplier * vector` to the output of one decoder layer at every position
   after the instruction, and score A/B probabilities on held-out questions.

Usage:
    python steering/generate_and_steer.py --behavior sycophancy --layers 13 14 15 --multipliers -1 0 1
"""

import argparse
import json
import os
import random

import numpy as np
import torch
from tqdm import tqdm
from transformers import AutoModelForCausalLM, AutoTokenizer
from transformers.utils import is_flash_attn_2_available

B_INST, E_INST = "[INST]", "[/INST]"
HF_TOKEN = os.getenv("HF_TOKEN")


def set_seed(seed: int):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True


def add_vector_after_position(matrix, vector, position_ids, after=None):
    after_id = after
    if after_id is None:
        after_id = position_ids.min().item() - 1
    mask = position_ids > after_id
    mask = mask.unsqueeze(-1)
    matrix += mask.float() * vector
    return matrix


def find_instruction_end_postion(tokens, end_str):
    start_pos = tokens.size(0) - end_str.size(0)
    for pos in range(start_pos, -1, -1):
        if torch.equal(tokens[pos : pos + end_str.size(0)], end_str):
            return pos + end_str.size(0) - 1
    return -1


class BlockOutputWrapper(torch.nn.Module):
    """Wraps a LlamaDecoderLayer: records its output and optionally adds a steering vector."""

    def __init__(self, block, end_of_instruction_tokens):
        super().__init__()
        self.block = block
        self.end_of_instruction_tokens = end_of_instruction_tokens
        self.activations = None
        self.add_activations = None

    def forward(self, *args, **kwargs):
        output = self.block(*args, **kwargs)
        self.activations = output[0]
        if self.add_activations is not None:
            instr_end = find_instruction_end_postion(
                kwargs["input_ids"][0] if "input_ids" in kwargs else self._last_tokens[0],
                self.end_of_instruction_tokens,
            )
            augmented = add_vector_after_position(
                matrix=output[0],
                vector=self.add_activations,
                position_ids=kwargs["position_ids"],
                after=instr_end,
            )
            output = (augmented,) + output[1:]
        return output

    def reset(self):
        self.add_activations = None
        self.activations = None


class LlamaWrapper:
    def __init__(self, model_name="meta-llama/Llama-2-7b-chat-hf"):
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        # bf16 on Ampere and newer, fp16 on older cards (V100/T4)
        if torch.cuda.get_device_capability()[0] >= 8:
            self.dtype = torch.bfloat16
        else:
            self.dtype = torch.float16
        self.tokenizer = AutoTokenizer.from_pretrained(model_name, token=HF_TOKEN)
        self.model = AutoModelForCausalLM.from_pretrained(
            model_name,
            token=HF_TOKEN,
            torch_dtype=self.dtype,
            attn_implementation="flash_attention_2" if is_flash_attn_2_available() else "sdpa",
        ).to(self.device)
        self.model.eval()
        self.end_str = torch.tensor(self.tokenizer.encode(E_INST)[1:]).to(self.device)
        for i, layer in enumerate(self.model.model.layers):
            self.model.model.layers[i] = BlockOutputWrapper(layer, self.end_str)

    def set_add_activations(self, layer, activations):
        self.model.model.layers[layer].add_activations = activations.to(self.dtype)

    def reset_all(self):
        for layer in self.model.model.layers:
            layer.reset()

    def get_last_activations(self, layer):
        return self.model.model.layers[layer].activations

    def get_logits(self, tokens):
        with torch.no_grad():
            position_ids = torch.arange(tokens.shape[1], device=self.device).unsqueeze(0)
            for layer in self.model.model.layers:
                layer._last_tokens = tokens
            return self.model(tokens, position_ids=position_ids).logits


def tokenize_ab(tokenizer, question, answer):
    prompt = f"{B_INST} {question.strip()} {E_INST} {answer}"
    return tokenizer.encode(prompt, return_tensors="pt")


def generate_vectors(wrapper, data, layers):
    pos_acts = {l: [] for l in layers}
    neg_acts = {l: [] for l in layers}
    for item in tqdm(data, desc="Generating steering vectors"):
        for answer_key, bucket in (("answer_matching_behavior", pos_acts), ("answer_not_matching_behavior", neg_acts)):
            tokens = tokenize_ab(wrapper.tokenizer, item["question"], item[answer_key]).to(wrapper.device)
            wrapper.reset_all()
            wrapper.get_logits(tokens)
            for l in layers:
                # activation at the answer letter (second-to-last token, before ")")
                bucket[l].append(wrapper.get_last_activations(l)[0, -2, :].detach().cpu())
    vectors = {}
    for l in layers:
        vectors[l] = torch.stack(pos_acts[l]).mean(0) - torch.stack(neg_acts[l]).mean(0)
    return vectors


def steer_and_score(wrapper, data, layer, vector, multiplier):
    a_id = wrapper.tokenizer.convert_tokens_to_ids("A")
    b_id = wrapper.tokenizer.convert_tokens_to_ids("B")
    results = []
    for item in tqdm(data, desc=f"L{layer} x{multiplier}", leave=False):
        wrapper.reset_all()
        wrapper.set_add_activations(layer, multiplier * vector.to(wrapper.device))
        tokens = tokenize_ab(wrapper.tokenizer, item["question"], "(").to(wrapper.device)
        probs = torch.softmax(wrapper.get_logits(tokens)[0, -1].float(), dim=-1)
        results.append(
            {
                "question": item["question"],
                "a_prob": probs[a_id].item(),
                "b_prob": probs[b_id].item(),
                "answer_matching_behavior": item["answer_matching_behavior"],
            }
        )
    return results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--behavior", default="sycophancy")
    parser.add_argument("--layers", nargs="+", type=int, default=[13])
    parser.add_argument("--multipliers", nargs="+", type=float, default=[-1.0, 0.0, 1.0])
    parser.add_argument("--model", default="meta-llama/Llama-2-7b-chat-hf")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()

    set_seed(args.seed)
    wrapper = LlamaWrapper(args.model)

    with open(f"datasets/generate/{args.behavior}.json") as f:
        gen_data = json.load(f)
    with open(f"datasets/test/{args.behavior}/test_dataset_ab.json") as f:
        test_data = json.load(f)

    vectors = generate_vectors(wrapper, gen_data, args.layers)
    os.makedirs(f"vectors/{args.behavior}", exist_ok=True)
    for l, v in vectors.items():
        torch.save(v, f"vectors/{args.behavior}/vec_layer_{l}.pt")

    os.makedirs(f"results/{args.behavior}", exist_ok=True)
    for l in args.layers:
        for m in args.multipliers:
            res = steer_and_score(wrapper, test_data, l, vectors[l], m)
            with open(f"results/{args.behavior}/layer_{l}_mult_{m}.json", "w") as f:
                json.dump(res, f, indent=2)


if __name__ == "__main__":
    main()
