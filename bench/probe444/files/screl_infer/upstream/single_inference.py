# Rejection-sampling fine-tuning (RFT), step 1: sample k reasoning paths per GSM8K training question
# from an SFT model. One process per GPU; each process uses a different seed (see sample_rft.sh).
import argparse
import json
import os
import re
import time

import torch
import transformers
from tqdm import tqdm
from transformers import AutoTokenizer, LlamaForCausalLM

ANS_RE = re.compile(r"#### (\-?[0-9\.\,]+)")
INVALID_ANS = "[invalid]"

PROMPT = (
    "Below is an instruction that describes a task. "
    "Write a response that appropriately completes the request.\n\n"
    "### Instruction:\n{query}\n\n### Response:"
)


def extract_answer(completion):
    match = ANS_RE.search(completion)
    if match:
        match_str = match.group(1).strip()
        match_str = match_str.replace(",", "")
        return match_str
    else:
        return INVALID_ANS


def is_correct(model_completion, gt_example):
    gt_answer = extract_answer(gt_example["answer"])
    assert gt_answer != INVALID_ANS
    return extract_answer(model_completion) == gt_answer


def load_gsm8k(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def set_all_seeds(seed):
    transformers.set_seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base_model", type=str, required=True)
    parser.add_argument("--data_path", type=str, default="data/train_use.jsonl")
    parser.add_argument("--out_path", type=str, required=True)
    parser.add_argument("--seed", type=int, default=100)
    parser.add_argument("--temp", type=float, default=0.7)
    parser.add_argument("--num_return_sequences", type=int, default=4)
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--max_new_tokens", type=int, default=512)
    parser.add_argument("--shard", type=int, default=0)
    parser.add_argument("--num_shards", type=int, default=1)
    parser.add_argument("--load_8bit", action="store_true")
    args = parser.parse_args()

    set_all_seeds(args.seed)
    torch.backends.cuda.matmul.allow_tf32 = True

    tokenizer = AutoTokenizer.from_pretrained(args.base_model, use_fast=False)
    tokenizer.pad_token_id = 0
    tokenizer.padding_side = "left"

    model = LlamaForCausalLM.from_pretrained(
        args.base_model,
        load_in_8bit=args.load_8bit,
        torch_dtype=torch.float16,
    )
    if not args.load_8bit:
        model = model.cuda()
    model.eval()
    print(f"loaded {args.base_model} on {torch.cuda.get_device_name(0)}")

    data = load_gsm8k(args.data_path)
    data = data[args.shard :: args.num_shards]

    os.makedirs(os.path.dirname(args.out_path) or ".", exist_ok=True)
    fout = open(args.out_path, "w")
    n_correct, n_total = 0, 0
    t0 = time.time()
    for i in tqdm(range(0, len(data), args.batch_size)):
        batch = data[i : i + args.batch_size]
        prompts = [PROMPT.format(query=ex["question"]) for ex in batch]
        enc = tokenizer(prompts, return_tensors="pt", padding=True)
        input_ids = enc.input_ids.cuda()
        attention_mask = enc.attention_mask.cuda()
        with torch.no_grad():
            out = model.generate(
                input_ids=input_ids,
                attention_mask=attention_mask,
                do_sample=True,
                temperature=args.temp,
                top_p=1.0,
                max_new_tokens=args.max_new_tokens,
                num_return_sequences=args.num_return_sequences,
                pad_token_id=tokenizer.pad_token_id,
            )
        texts = tokenizer.batch_decode(out[:, input_ids.shape[1] :], skip_special_tokens=True)
        for j, ex in enumerate(batch):
            gens = texts[j * args.num_return_sequences : (j + 1) * args.num_return_sequences]
            for g in gens:
                ok = is_correct(g, ex)
                n_correct += int(ok)
                n_total += 1
                fout.write(
                    json.dumps({"question": ex["question"], "answer": ex["answer"], "gen": g, "correct": ok}) + "\n"
                )
        fout.flush()
    fout.close()
    print(
        f"shard {args.shard}: {n_total} samples, acc={n_correct / max(n_total, 1):.4f}, "
        f"{(time.time() - t0) / 60:.1f} min, peak mem {torch.cuda.max_memory_allocated() / 1e9:.1f} GB"
    )


if __name__ == "__main__":
    main()
