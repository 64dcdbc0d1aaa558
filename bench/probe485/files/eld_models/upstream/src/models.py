"""Document classifiers used in "Efficient Classification of Long Documents Using Transformers".

All models take (input_ids, attention_mask) of shape (batch, seq_len) where seq_len may be much longer than
512 tokens, and return logits of shape (batch, num_labels).

  * BERTClassifier          - plain BERT on the first 512 tokens (truncation baseline)
  * BERTPlusRandom          - first 512 tokens + 512 randomly selected sentences' tokens
  * BERTPlusTextRank        - first 512 tokens + 512 tokens of TextRank-selected sentences (precomputed)
  * ToBERT                  - Transformer over BERT: chunk the document, encode every chunk, then run a
                              small transformer over the chunk [CLS] vectors
  * LongformerClassifier    - Longformer-base-4096 with global attention on [CLS]
"""

import math

import torch
import torch.nn as nn
from transformers import AutoModel, LongformerModel


class BERTClassifier(nn.Module):

    def __init__(self, model_name='bert-base-uncased', num_labels=2, dropout=0.1, multilabel=False):
        super().__init__()
        self.bert = AutoModel.from_pretrained(model_name)
        hidden = self.bert.config.hidden_size
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(hidden, num_labels)
        self.multilabel = multilabel

    def forward(self, input_ids, attention_mask, **kwargs):
        input_ids = input_ids[:, :512]
        attention_mask = attention_mask[:, :512]
        outputs = self.bert(input_ids=input_ids, attention_mask=attention_mask)
        cls = outputs.last_hidden_state[:, 0]
        return self.classifier(self.dropout(cls))


class BERTPlusRandom(BERTClassifier):
    """Concatenate the first 512 tokens with 512 tokens of randomly chosen sentences, encode the two halves
    separately and average-pool the two [CLS] vectors."""

    def forward(self, input_ids, attention_mask, extra_input_ids=None, extra_attention_mask=None, **kwargs):
        first = self.bert(input_ids=input_ids[:, :512], attention_mask=attention_mask[:, :512])
        cls = first.last_hidden_state[:, 0]
        if extra_input_ids is not None:
            second = self.bert(input_ids=extra_input_ids, attention_mask=extra_attention_mask)
            cls = (cls + second.last_hidden_state[:, 0]) / 2
        return self.classifier(self.dropout(cls))


class BERTPlusTextRank(BERTPlusRandom):
    """Same architecture as BERTPlusRandom; the dataloader supplies TextRank-ranked sentences instead."""
    pass


class PositionalEncoding(nn.Module):

    def __init__(self, d_model, max_len=256, dropout=0.1):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer('pe', pe.unsqueeze(0))

    def forward(self, x):
        x = x + self.pe[:, :x.size(1)]
        return self.dropout(x)


class ToBERT(nn.Module):
    """Transformer over BERT (Pappagari et al., 2019)."""

    def __init__(self, model_name='bert-base-uncased', num_labels=2, chunk_len=512, stride=256,
                 max_chunks=32, num_layers=2, num_heads=8, dropout=0.1, multilabel=False):
        super().__init__()
        self.bert = AutoModel.from_pretrained(model_name)
        hidden = self.bert.config.hidden_size
        self.chunk_len = chunk_len
        self.stride = stride
        self.max_chunks = max_chunks
        self.hidden = hidden
        layer = nn.TransformerEncoderLayer(d_model=hidden, nhead=num_heads, dim_feedforward=4 * hidden,
                                           dropout=dropout, batch_first=True)
        self.doc_encoder = nn.TransformerEncoder(layer, num_layers=num_layers)
        self.pos = PositionalEncoding(hidden, max_len=max_chunks, dropout=dropout)
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(hidden, num_labels)
        self.multilabel = multilabel

    def _chunk(self, input_ids, attention_mask):
        """Split (B, L) into (B, C, chunk_len) overlapping windows; C <= max_chunks."""
        B, L = input_ids.size()
        if L <= self.chunk_len:
            pad = self.chunk_len - L
            input_ids = nn.functional.pad(input_ids, (0, pad), value=0)
            attention_mask = nn.functional.pad(attention_mask, (0, pad), value=0)
            return input_ids.unsqueeze(1), attention_mask.unsqueeze(1)
        n_chunks = min(self.max_chunks, 1 + math.ceil((L - self.chunk_len) / self.stride))
        total = self.chunk_len + (n_chunks - 1) * self.stride
        if total > L:
            input_ids = nn.functional.pad(input_ids, (0, total - L), value=0)
            attention_mask = nn.functional.pad(attention_mask, (0, total - L), value=0)
        ids = input_ids[:, :total].unfold(1, self.chunk_len, self.stride)
        mask = attention_mask[:, :total].unfold(1, self.chunk_len, self.stride)
        return ids.contiguous(), mask.contiguous()

    def forward(self, input_ids, attention_mask, **kwargs):
        ids, mask = self._chunk(input_ids, attention_mask)
        B, C, T = ids.size()
        # Encode every non-empty chunk with BERT in one batch
        flat_ids = ids.view(B * C, T)
        flat_mask = mask.view(B * C, T)
        non_empty = flat_mask.sum(dim=1) > 0
        chunk_embeddings = torch.zeros(B * C, self.hidden).cuda()
        out = self.bert(input_ids=flat_ids[non_empty], attention_mask=flat_mask[non_empty])
        chunk_embeddings[non_empty] = out.last_hidden_state[:, 0].to(chunk_embeddings.dtype)
        chunk_embeddings = chunk_embeddings.view(B, C, self.hidden)
        chunk_padding = ~non_empty.view(B, C)
        doc = self.doc_encoder(self.pos(chunk_embeddings), src_key_padding_mask=chunk_padding)
        # mean-pool over real chunks
        keep = (~chunk_padding).unsqueeze(-1).to(doc.dtype)
        pooled = (doc * keep).sum(dim=1) / keep.sum(dim=1).clamp(min=1.0)
        return self.classifier(self.dropout(pooled))


class LongformerClassifier(nn.Module):

    def __init__(self, model_name='allenai/longformer-base-4096', num_labels=2, dropout=0.1, multilabel=False,
                 gradient_checkpointing=True):
        super().__init__()
        self.longformer = LongformerModel.from_pretrained(model_name)
        if gradient_checkpointing:
            self.longformer.gradient_checkpointing_enable()
        hidden = self.longformer.config.hidden_size
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(hidden, num_labels)
        self.multilabel = multilabel

    def forward(self, input_ids, attention_mask, **kwargs):
        input_ids = input_ids[:, :4096]
        attention_mask = attention_mask[:, :4096]
        global_attention_mask = torch.zeros_like(input_ids)
        global_attention_mask[:, 0] = 1  # global attention on [CLS]
        outputs = self.longformer(input_ids=input_ids, attention_mask=attention_mask,
                                  global_attention_mask=global_attention_mask)
        cls = outputs.last_hidden_state[:, 0]
        return self.classifier(self.dropout(cls))


MODELS = {
    'bert': BERTClassifier,
    'bertplusrandom': BERTPlusRandom,
    'bertplustextrank': BERTPlusTextRank,
    'tobert': ToBERT,
    'longformer': LongformerClassifier,
}


def build_model(name, num_labels, multilabel=False, **kwargs):
    if name not in MODELS:
        raise ValueError(f'unknown model {name}; choose from {sorted(MODELS)}')
    if name == 'longformer':
        return LongformerClassifier(num_labels=num_labels, multilabel=multilabel, **kwargs)
    return MODELS[name](num_labels=num_labels, multilabel=multilabel, **kwargs)
