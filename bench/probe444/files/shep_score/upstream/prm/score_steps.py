"""
Step-level scoring with a trained Math-Shepherd PRM.

    from prm.score_steps import PRMScorer
    scorer = PRMScorer("peiyi9979/math-shepherd-mistral-7b-prm")
    scorer.score(question, "Step 1: ... ки\nStep 2: ... ки")   # -> [0.99, 0.12]

The score of a step is P("+") after a softmax over the two candidate tokens at the step tag.
"""
import argparse
import json

import torch
from tqdm import tqdm
from transformers import AutoModelForCausalLM, AutoTokenizer

GOOD_TOKEN = "+"
BAD_TOKEN = "-"
STEP_TAG = "ки"

DEVICE = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


class PRMScorer:
    def __init__(self, model_name_or_path, dtype=torch.float16, max_length=2048):
        self.tokenizer = AutoTokenizer.from_pretrained(model_name_or_path)
        self.candidate_tokens = self.tokenizer.encode(f"{GOOD_TOKEN} {BAD_TOKEN}")[1:]  # [648, 387]
        self.step_tag_id = self.tokenizer.encode(f"{STEP_TAG}")[-1]  # 12902
        self.model = AutoModelForCausalLM.from_pretrained(model_name_or_path, torch_dtype=dtype)
        self.model = self.model.to(DEVICE).eval()
        self.max_length = max_length

    @torch.no_grad()
    def score(self, question, solution):
        text = f"{question} {solution}"
        input_id = torch.tensor([self.tokenizer.encode(text)[-self.max_length:]]).to(DEVICE)
        logits = self.model(input_id).logits[:, :, self.candidate_tokens]
        scores = logits.softmax(dim=-1)[:, :, 0]
        step_scores = scores[input_id == self.step_tag_id]
        return step_scores.float().cpu().tolist()

    @torch.no_grad()
    def score_batch(self, questions, solutions, batch_size=8):
        """Right-padded batched scoring; returns one list of step scores per solution."""
        out = []
        pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        for i in range(0, len(questions), batch_size):
            texts = [f"{q} {s}" for q, s in zip(questions[i:i + batch_size], solutions[i:i + batch_size])]
            ids = [self.tokenizer.encode(t)[-self.max_length:] for t in texts]
            max_len = max(len(x) for x in ids)
            batch = torch.full((len(ids), max_len), pad_id, dtype=torch.long)
            mask = torch.zeros((len(ids), max_len), dtype=torch.long)
            for j, x in enumerate(ids):
                batch[j, : len(x)] = torch.tensor(x)
                mask[j, : len(x)] = 1
            batch = batch.cuda(non_blocking=True)
            mask = mask.cuda(non_blocking=True)
            logits = self.model(input_ids=batch, attention_mask=mask).logits[:, :, self.candidate_tokens]
            probs = logits.softmax(dim=-1)[:, :, 0]
            for j in range(len(ids)):
                row = probs[j][batch[j] == self.step_tag_id]
                out.append(row.float().cpu().tolist())
        return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--prm", type=str, default="peiyi9979/math-shepherd-mistral-7b-prm")
    p.add_argument("--input", type=str, required=True, help="jsonl with question and a list of candidate solutions")
    p.add_argument("--output", type=str, required=True)
    p.add_argument("--batch_size", type=int, default=8)
    args = p.parse_args()

    scorer = PRMScorer(args.prm)
    print(f"PRM on {DEVICE}")
    with open(args.input) as f, open(args.output, "w") as fout:
        for line in tqdm(f):
            ex = json.loads(line)
            qs = [ex["question"]] * len(ex["candidates"])
            ex["step_scores"] = scorer.score_batch(qs, ex["candidates"], args.batch_size)
            fout.write(json.dumps(ex, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    # quick check with the example from the model card
    question = (
        "Janet\u2019s ducks lay 16 eggs per day. She eats three for breakfast every morning and bakes muffins "
        "for her friends every day with four. She sells the remainder at the farmers' market daily for $2 per "
        "fresh duck egg. How much in dollars does she make every day at the farmers' market?"
    )
    output1 = (
        "Step 1: Janet's ducks lay 16 eggs per day. ки\nStep 2: She eats three for breakfast every morning, "
        "so she has 16 - 3 = 13 eggs left. ки\nStep 3: She bakes muffins for her friends every day with four "
        "eggs, so she has 13 - 4 = 9 eggs left. ки\nStep 4: She sells the remainder at the farmers' market "
        "daily for $2 per fresh duck egg, so she makes 9 * $2 = $18 every day at the farmers' market. "
        "The answer is: 18 ки"
    )
    import sys

    if len(sys.argv) == 1:
        s = PRMScorer("peiyi9979/math-shepherd-mistral-7b-prm")
        print(s.score(question, output1))  # [1.0, 0.9955, 0.9958, 0.9983]
    else:
        main()
