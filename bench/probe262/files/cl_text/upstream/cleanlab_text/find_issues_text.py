"""Find mislabeled examples in a text-classification dataset with cleanlab's Datalab.

Pipeline:
  1. mean-pooled transformer embeddings of every example (GPU, fp16),
  2. out-of-sample pred_probs from a logistic-regression head via K-fold cross-validation,
  3. Datalab.find_issues(...) -> label issues, near duplicates, outliers,
  4. optional zero-shot sanity check of the top flagged examples.

    python find_issues_text.py --csv data/banking77_noisy.csv --text-col text --label-col label
"""
import argparse
import json
import os
import time

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_predict, StratifiedKFold
from transformers import AutoModel, AutoTokenizer, pipeline

from cleanlab import Datalab


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument('--csv', required=True)
    ap.add_argument('--text-col', default='text')
    ap.add_argument('--label-col', default='label')
    ap.add_argument('--encoder', default='sentence-transformers/all-mpnet-base-v2')
    ap.add_argument('--batch-size', type=int, default=128)
    ap.add_argument('--folds', type=int, default=5)
    ap.add_argument('--zero-shot', action='store_true', help='re-check the top issues with an NLI zero-shot model')
    ap.add_argument('--top', type=int, default=50)
    ap.add_argument('--out', default='issues_out')
    return ap.parse_args()


@torch.no_grad()
def embed_texts(texts, model_name, batch_size, device):
    tok = AutoTokenizer.from_pretrained(model_name)
    model = AutoModel.from_pretrained(
        model_name, torch_dtype=torch.float16 if device.startswith('cuda') else torch.float32)
    model = model.to(device).eval()
    embs = []
    t0 = time.time()
    for i in range(0, len(texts), batch_size):
        batch = tok(texts[i:i + batch_size], padding=True, truncation=True, max_length=256, return_tensors='pt')
        batch = {k: v.to(device) for k, v in batch.items()}
        hidden = model(**batch).last_hidden_state
        mask = batch['attention_mask'].unsqueeze(-1).to(hidden.dtype)
        emb = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-6)
        embs.append(F.normalize(emb.float(), dim=1).cpu().numpy())
    print('embedded %d texts in %.1fs on %s' % (len(texts), time.time() - t0, device))
    return np.concatenate(embs).astype(np.float32)


def cross_val_pred_probs(embs, labels, folds, seed=0):
    clf = LogisticRegression(max_iter=2000, C=4.0, n_jobs=-1)
    cv = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    return cross_val_predict(clf, embs, labels, cv=cv, method='predict_proba')


def zero_shot_check(texts, candidate_labels, device_index, batch_size=16):
    clf = pipeline('zero-shot-classification', model='facebook/bart-large-mnli', device=device_index)
    out = clf(texts, candidate_labels=candidate_labels, batch_size=batch_size)
    return [o['labels'][0] for o in out]


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)
    df = pd.read_csv(args.csv)
    texts = df[args.text_col].astype(str).tolist()
    classes = sorted(df[args.label_col].unique().tolist())
    class_to_id = {c: i for i, c in enumerate(classes)}
    labels = df[args.label_col].map(class_to_id).to_numpy()

    device = 'cuda' if torch.cuda.is_available() else 'cpu'
    embs = embed_texts(texts, args.encoder, args.batch_size, device)
    if device == 'cuda':
        torch.cuda.empty_cache()
    np.save(os.path.join(args.out, 'embeddings.npy'), embs)

    pred_probs = cross_val_pred_probs(embs, labels, args.folds)
    print('cross-validated accuracy vs given labels: %.4f' % (pred_probs.argmax(1) == labels).mean())

    data = pd.DataFrame({'text': texts, 'label': labels})
    lab = Datalab(data=data, label_name='label')
    lab.find_issues(pred_probs=pred_probs, features=embs)
    lab.report(num_examples=5)

    issues = lab.get_issues('label')
    issues['given_label'] = [classes[i] for i in labels]
    issues['predicted_label'] = [classes[i] for i in issues['predicted_label']]
    issues['text'] = texts
    ranked = issues[issues['is_label_issue']].sort_values('label_score')
    ranked.to_csv(os.path.join(args.out, 'label_issues.csv'), index=True)
    print('%d label issues written to %s' % (len(ranked), args.out))

    if args.zero_shot and len(ranked):
        top = ranked.head(args.top)
        device_index = 0 if torch.cuda.is_available() else -1
        zs = zero_shot_check(top['text'].tolist(), classes, device_index)
        agree = np.mean([z == p for z, p in zip(zs, top['predicted_label'])])
        print('zero-shot agrees with cleanlab suggestion on %.1f%% of the top %d' % (100 * agree, len(top)))
        with open(os.path.join(args.out, 'zero_shot.json'), 'w') as f:
            json.dump({'agreement': float(agree), 'n': int(len(top))}, f, indent=2)


if __name__ == '__main__':
    main()
