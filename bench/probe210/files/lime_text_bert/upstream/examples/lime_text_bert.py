"""LIME explanations for a HuggingFace sentiment classifier.

    python examples/lime_text_bert.py --text "The plot was thin but the acting was superb." --num-samples 2000

LIME samples thousands of perturbed sentences; the predictor batches them
through the transformer on the GPU under fp16 autocast.
"""
import argparse
import html
import os

import numpy as np
import torch
import torch.nn.functional as F
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from lime.lime_text import LimeTextExplainer

MODEL_NAME = "distilbert-base-uncased-finetuned-sst-2-english"

# TF32 matmuls are fine for a classifier's softmax scores
torch.backends.cuda.matmul.allow_tf32 = True


class BertPredictor:
    """Callable that maps a list of strings to an (N, num_classes) numpy array
    of probabilities, the interface LimeTextExplainer expects."""

    def __init__(self, model_name=MODEL_NAME, device="cuda", batch_size=128,
                 fp16=True, max_length=256, profile=False):
        self.tokenizer = AutoTokenizer.from_pretrained(model_name)
        self.model = AutoModelForSequenceClassification.from_pretrained(model_name)
        self.model.to(device).eval()
        self.device = device
        self.batch_size = batch_size
        self.fp16 = fp16 and torch.cuda.is_available()
        self.max_length = max_length
        self.profile = profile
        self.class_names = [self.model.config.id2label[i]
                            for i in range(self.model.config.num_labels)]

    @torch.no_grad()
    def __call__(self, texts):
        probs = []
        for i in range(0, len(texts), self.batch_size):
            chunk = list(texts[i:i + self.batch_size])
            if self.profile:
                torch.cuda.nvtx.range_push(f"lime_chunk_{i}")
            enc = self.tokenizer(chunk, return_tensors="pt", padding=True,
                                 truncation=True, max_length=self.max_length).to(self.device)
            with torch.cuda.amp.autocast(enabled=self.fp16):
                logits = self.model(**enc).logits
            probs.append(F.softmax(logits.float(), dim=-1).cpu().numpy())
            if self.profile:
                torch.cuda.nvtx.range_pop()
        return np.concatenate(probs, axis=0)


def explanation_to_html(exp, label, path):
    weights = dict(exp.as_list(label=label))
    max_abs = max(abs(w) for w in weights.values()) or 1.0
    spans = []
    for word in exp.domain_mapper.indexed_string.as_list:
        w = weights.get(word, 0.0)
        alpha = min(1.0, abs(w) / max_abs)
        color = f"rgba(0,160,0,{alpha:.2f})" if w > 0 else f"rgba(200,0,0,{alpha:.2f})"
        spans.append(f'<span style="background:{color}">{html.escape(word)}</span>')
    with open(path, "w") as f:
        f.write("<html><body><p>" + "".join(spans) + "</p></body></html>")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--text", required=True)
    p.add_argument("--model", default=MODEL_NAME)
    p.add_argument("--num-samples", type=int, default=5000)
    p.add_argument("--num-features", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--no-fp16", action="store_true")
    p.add_argument("--profile", action="store_true", help="emit NVTX ranges for nsys")
    p.add_argument("--out-dir", default="outputs/lime_text")
    args = p.parse_args()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    predictor = BertPredictor(args.model, device=device, batch_size=args.batch_size,
                              fp16=not args.no_fp16, profile=args.profile)

    explainer = LimeTextExplainer(class_names=predictor.class_names, bow=False,
                                  split_expression=r"\W+", random_state=0)
    exp = explainer.explain_instance(args.text, predictor,
                                     num_features=args.num_features,
                                     num_samples=args.num_samples,
                                     top_labels=1)
    label = exp.available_labels()[0]
    print(f"predicted: {predictor.class_names[label]}")
    for word, weight in exp.as_list(label=label):
        print(f"{word:>20s} {weight:+.4f}")

    os.makedirs(args.out_dir, exist_ok=True)
    exp.save_to_file(os.path.join(args.out_dir, "lime.html"))
    explanation_to_html(exp, label, os.path.join(args.out_dir, "lime_inline.html"))


if __name__ == "__main__":
    main()
