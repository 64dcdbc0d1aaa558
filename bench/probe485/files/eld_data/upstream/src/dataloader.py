"""Datasets for long document classification.

Each split is a jsonl file with {"text": str, "label": int | [int]} per line, prepared by
scripts/prepare_data.py. For BERT+TextRank / BERT+Random we additionally select sentences beyond the first
512 tokens on the host (TextRank over a TF-IDF sentence graph) and hand them to the model as a second segment.
"""

import json
import os
import random

import networkx as nx
import numpy as np
import torch
from nltk.tokenize import sent_tokenize
from sklearn.feature_extraction.text import TfidfVectorizer
from torch.utils.data import Dataset

DATASETS = {
    'hyperpartisan': {'num_labels': 2, 'multilabel': False},
    '20news': {'num_labels': 20, 'multilabel': False},
    'eurlex': {'num_labels': 4271, 'multilabel': True},
    'inverted_eurlex': {'num_labels': 4271, 'multilabel': True},
    'books': {'num_labels': 227, 'multilabel': True},
    'paired_books': {'num_labels': 227, 'multilabel': True},
}


def textrank_order(sentences, top_k=None):
    """Rank sentences with PageRank over a cosine-similarity graph of TF-IDF vectors."""
    if len(sentences) <= 1:
        return list(range(len(sentences)))
    try:
        tfidf = TfidfVectorizer(stop_words='english').fit_transform(sentences)
    except ValueError:  # only stop words
        return list(range(len(sentences)))
    sim = (tfidf * tfidf.T).toarray()
    np.fill_diagonal(sim, 0.0)
    graph = nx.from_numpy_array(sim)
    try:
        scores = nx.pagerank(graph, max_iter=200)
    except nx.PowerIterationFailedConvergence:
        return list(range(len(sentences)))
    order = sorted(scores, key=scores.get, reverse=True)
    return order[:top_k] if top_k else order


class LongDocDataset(Dataset):

    def __init__(self, data_dir, name, split, tokenizer, max_len, model_name, extra_len=512, seed=42):
        path = os.path.join(data_dir, name, f'{split}.jsonl')
        with open(path) as f:
            self.examples = [json.loads(line) for line in f]
        info = DATASETS[name]
        self.num_labels = info['num_labels']
        self.multilabel = info['multilabel']
        self.tokenizer = tokenizer
        self.max_len = max_len if model_name in ('tobert', 'longformer') else 512
        self.model_name = model_name
        self.extra_len = extra_len
        self.rng = random.Random(seed)

    def __len__(self):
        return len(self.examples)

    def _label(self, label):
        if self.multilabel:
            y = torch.zeros(self.num_labels, dtype=torch.long)
            y[torch.as_tensor(label, dtype=torch.long)] = 1
            return y
        return torch.tensor(label, dtype=torch.long)

    def _extra_segment(self, text, first_ids):
        """Tokens of sentences that were not covered by the first 512 tokens, either TextRank- or randomly
        ordered, truncated to extra_len."""
        sentences = sent_tokenize(text)
        covered = self.tokenizer.decode(first_ids, skip_special_tokens=True)
        rest = [s for s in sentences if s not in covered]
        if not rest:
            return None
        if self.model_name == 'bertplustextrank':
            order = textrank_order(rest)
        else:
            order = list(range(len(rest)))
            self.rng.shuffle(order)
        selected = ' '.join(rest[i] for i in order)
        enc = self.tokenizer(selected, truncation=True, max_length=self.extra_len, padding='max_length',
                             return_tensors='pt')
        return enc['input_ids'][0], enc['attention_mask'][0]

    def __getitem__(self, idx):
        ex = self.examples[idx]
        enc = self.tokenizer(ex['text'], truncation=True, max_length=self.max_len, padding='max_length',
                             return_tensors='pt')
        item = {
            'input_ids': enc['input_ids'][0],
            'attention_mask': enc['attention_mask'][0],
            'labels': self._label(ex['label']),
        }
        if self.model_name in ('bertplusrandom', 'bertplustextrank'):
            extra = self._extra_segment(ex['text'], enc['input_ids'][0][:512].tolist())
            if extra is None:
                extra = (torch.full((self.extra_len,), self.tokenizer.pad_token_id, dtype=torch.long),
                         torch.zeros(self.extra_len, dtype=torch.long))
            item['extra_input_ids'], item['extra_attention_mask'] = extra
        return item


def collate_batch(batch):
    out = {}
    for k in batch[0]:
        out[k] = torch.stack([b[k] for b in batch])
    # trim trailing all-padding columns to save compute on short documents
    lengths = out['attention_mask'].sum(dim=1)
    max_len = int(lengths.max().item())
    if max_len < out['input_ids'].size(1):
        out['input_ids'] = out['input_ids'][:, :max_len]
        out['attention_mask'] = out['attention_mask'][:, :max_len]
    return out

