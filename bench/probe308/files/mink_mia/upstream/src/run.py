"""Membership-inference scores for (unlearned) LLMs on WikiMIA / MUSE-style member vs. non-member splits.

Implements loss, reference-model ratio, zlib ratio, Min-K% Prob and Min-K%++ and reports AUROC / TPR@5%FPR.
Used to check whether an unlearned model still "remembers" the forget set.

    python src/run.py --model models/zephyr_rmu --ref_model HuggingFaceH4/zephyr-7b-beta --dataset WikiMIA_length64 --half
"""
import argparse
import json
import os
import zlib
from collections import defaultdict

import numpy as np
import torch
import torch.nn.functional as F
from datasets import load_dataset
from sklearn.metrics import auc, roc_curve
from tqdm import tqdm
from transformers import AutoModelForCausalLM, AutoTokenizer


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--model', type=str, default='EleutherAI/pythia-2.8b')
    parser.add_argument('--ref_model', type=str, default=None, help='reference model for the ratio attack')
    parser.add_argument('--dataset', type=str, default='WikiMIA_length64')
    parser.add_argument('--data_file', type=str, default=None, help='jsonl with "input" and "label" (1 = member)')
    parser.add_argument('--half', action='store_true', help='load the target model in bf16')
    parser.add_argument('--int8', action='store_true', help='load the target model with LLM.int8 (bitsandbytes)')
    parser.add_argument('--max_samples', type=int, default=None)
    parser.add_argument('--out', type=str, default='results/mia')
    return parser.parse_args()


def load_model(name, half=False, int8=False):
    kwargs = {}
    if int8:
        kwargs = dict(load_in_8bit=True, torch_dtype=torch.bfloat16)
    elif half:
        kwargs = dict(torch_dtype=torch.bfloat16)
    model = AutoModelForCausalLM.from_pretrained(name, return_dict=True, device_map='auto', **kwargs)
    model.eval()
    tokenizer = AutoTokenizer.from_pretrained(name)
    return model, tokenizer


def load_data(args):
    if args.data_file is not None:
        with open(args.data_file) as f:
            data = [json.loads(line) for line in f]
    else:
        data = list(load_dataset('swj0419/WikiMIA', split=args.dataset))
    if args.max_samples is not None:
        data = data[:args.max_samples]
    return data


@torch.no_grad()
def token_stats(text, model, tokenizer):
    input_ids = torch.tensor(tokenizer.encode(text)).unsqueeze(0).cuda()
    outputs = model(input_ids, labels=input_ids)
    loss, logits = outputs[:2]
    input_ids = input_ids[0][1:].unsqueeze(-1)
    probs = F.softmax(logits[0, :-1], dim=-1)
    log_probs = F.log_softmax(logits[0, :-1], dim=-1)
    token_log_probs = log_probs.gather(dim=-1, index=input_ids).squeeze(-1)
    mu = (probs * log_probs).sum(-1)
    sigma = (probs * torch.square(log_probs)).sum(-1) - torch.square(mu)
    return loss.item(), token_log_probs, mu, sigma


@torch.no_grad()
def ref_loss(text, ref_model, ref_tokenizer):
    input_ids = torch.tensor(ref_tokenizer.encode(text)).unsqueeze(0).to(ref_model.device)
    with torch.cuda.amp.autocast(dtype=torch.float16):
        outputs = ref_model(input_ids, labels=input_ids)
    return outputs.loss.item()


def get_metrics(scores, labels):
    fpr_list, tpr_list, thresholds = roc_curve(labels, scores)
    auroc = auc(fpr_list, tpr_list)
    fpr95 = fpr_list[np.where(tpr_list >= 0.95)[0][0]]
    tpr05 = tpr_list[np.where(fpr_list <= 0.05)[0][-1]]
    return auroc, fpr95, tpr05


def main():
    args = parse_args()
    model, tokenizer = load_model(args.model, half=args.half, int8=args.int8)
    ref_model, ref_tokenizer = (None, None)
    if args.ref_model is not None:
        ref_model, ref_tokenizer = load_model(args.ref_model, half=True)
    data = load_data(args)

    scores = defaultdict(list)
    for d in tqdm(data, total=len(data), desc='samples'):
        text = d['input']
        loss, token_log_probs, mu, sigma = token_stats(text, model, tokenizer)
        ll = -loss

        # loss and zlib attacks
        scores['loss'].append(ll)
        scores['zlib'].append(ll / len(zlib.compress(bytes(text, 'utf-8'))))

        # reference-model attack
        if ref_model is not None:
            scores['ref'].append(ll + ref_loss(text, ref_model, ref_tokenizer))

        # Min-K% Prob and Min-K%++
        mink_plus = (token_log_probs - mu) / sigma.sqrt()
        for ratio in [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]:
            k_length = max(1, int(len(token_log_probs) * ratio))
            topk = np.sort(token_log_probs.float().cpu().numpy())[:k_length]
            scores[f'mink_{ratio}'].append(np.mean(topk).item())
            topk_plus = np.sort(mink_plus.float().cpu().numpy())[:k_length]
            scores[f'mink++_{ratio}'].append(np.mean(topk_plus).item())

    torch.cuda.empty_cache()

    labels = [d['label'] for d in data]
    results = defaultdict(list)
    for method, method_scores in scores.items():
        auroc, fpr95, tpr05 = get_metrics(method_scores, labels)
        results['method'].append(method)
        results['auroc'].append(f"{auroc:.1%}")
        results['fpr95'].append(f"{fpr95:.1%}")
        results['tpr05'].append(f"{tpr05:.1%}")
        print(f"{method:12s}  AUROC {auroc:.1%}  FPR@95 {fpr95:.1%}  TPR@5 {tpr05:.1%}")

    os.makedirs(args.out, exist_ok=True)
    name = os.path.basename(os.path.normpath(args.model))
    with open(os.path.join(args.out, f'{name}_{args.dataset}.json'), 'w') as f:
        json.dump(results, f, indent=2)


if __name__ == '__main__':
    main()
