#! /usr/bin/env python
# -*- coding: utf-8 -*_
# Author: Yunlong Feng <ylfeng@ir.hit.edu.cn>
import os
import re
import itertools
from typing import List, Union, Optional

import torch
from torch.nn.utils.rnn import pad_sequence
import transformers
from packaging import version
from transformers import AutoTokenizer, AutoConfig, cached_path

from ltp.models import Model
from ltp.utils import length_to_mask, eisner, split_sentence, get_pretrained
from ltp.utils.trie import Trie

transformers_version = version.parse(transformers.__version__)

model_map = {
    'base': 'http://39.96.43.154/ltp/v3/base.tgz',
    'small': 'http://39.96.43.154/ltp/v3/small.tgz',
    'tiny': 'http://39.96.43.154/ltp/v3/tiny.tgz',
}


def no_grad(func):
    def wrapper(*args, **kwargs):
        with torch.no_grad():
            return func(*args, **kwargs)

    return wrapper


def _resolve_device(device: Optional[Union[int, str, torch.device]]) -> torch.device:
    """
    device=None  -> first GPU if there is one, otherwise CPU
    device=-1    -> CPU
    device=k     -> the k-th GPU
    device="cpu" / "cuda:1" / torch.device(...) -> as given
    """
    if device is None:
        return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
    if isinstance(device, torch.device):
        return device
    if isinstance(device, int):
        if device < 0:
            return torch.device("cpu")
        return torch.device(f"cuda:{device}")
    return torch.device(device)


class LTP(object):
    model: Model
    seg_vocab: List[str]
    pos_vocab: List[str]
    ner_vocab: List[str]
    dep_vocab: List[str]
    sdp_vocab: List[str]
    srl_vocab: List[str]

    def __init__(self, path: str = 'small', device: Optional[Union[int, str, torch.device]] = None,
                 fp16: bool = False, **kwargs):
        self.device = _resolve_device(device)
        # half precision only makes sense on GPUs
        self.fp16 = fp16 and self.device.type == "cuda"

        if path in model_map or path.startswith('http'):
            path = get_pretrained(model_map.get(path, path))
        ckpt = torch.load(os.path.join(path, "ltp.model"), map_location=lambda storage, loc: storage)

        patch_4_1_3 = kwargs.pop('patch_4_1_3', False)
        ckpt['model_config']['init'].update(kwargs)
        self.model = Model.from_params(ckpt['model_config'], config=ckpt['transformer_config']).to(self.device)
        self.model.load_state_dict(ckpt['model'], strict=not patch_4_1_3)
        self.model.eval()

        self.seg_vocab = ckpt.get('seg', ['I-W', 'B-W'])
        self.seg_vocab_dict = {tag: idx for idx, tag in enumerate(self.seg_vocab)}
        self.pos_vocab = ckpt.get('pos', [])
        self.ner_vocab = ckpt.get('ner', [])
        self.dep_vocab = ckpt.get('dep', [])
        self.sdp_vocab = ckpt.get('sdp', [])
        self.srl_vocab = [re.sub(r'ARG(\d)', r'A\1', tag.lstrip('ARGM-')) for tag in ckpt.get('srl', [])]
        self.tokenizer = AutoTokenizer.from_pretrained(path, config=self.model.pretrained.config, use_fast=True)
        self.trie = Trie()
        self._model_version = ckpt.get('version', None)

    def __str__(self):
        return f"LTP {self.version} on {self.device}"

    def __repr__(self):
        return f"LTP {self.version} on {self.device}"

    @property
    def avaliable_models(self):
        return model_map.keys()

    @property
    def version(self):
        from ltp import __version__ as version
        return self._model_version or version

    def init_dict(self, path, max_window=None):
        self.trie.init(path, max_window)

    def add_words(self, words, max_window=None):
        self.trie.add_words(words)
        self.trie.max_window = max_window

    @staticmethod
    def sent_split(inputs: List[str], flag: str = "all", limit: int = 510):
        inputs = [split_sentence(text, flag=flag, limit=limit) for text in inputs]
        inputs = list(itertools.chain(*inputs))
        return inputs

    def seg_with_dict(self, inputs: List[str], tokenized, batch_prefix):
        # 进行正向字典匹配
        matching = []
        for source_text, encoding, preffix in zip(inputs, tokenized.encodings, batch_prefix):
            text = [source_text[start:end] for start, end in encoding.offsets[1:-1] if end != 0]
            matching_pos = self.trie.maximum_forward_matching(text, preffix)
            matching.append(matching_pos)
        return matching

    @no_grad
    def _seg(self, tokenizerd, is_preseged=False):
        input_ids = tokenizerd['input_ids'].to(self.device)
        attention_mask = tokenizerd['attention_mask'].to(self.device)
        token_type_ids = tokenizerd['token_type_ids'].to(self.device)
        length = torch.sum(attention_mask, dim=-1) - 2

        with torch.cuda.amp.autocast(enabled=self.fp16):
            pretrained_output, *_ = self.model.pretrained(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids,
                return_dict=False
            )

        # remove [CLS] [SEP]
        word_cls = pretrained_output[:, :1]
        char_input = torch.narrow(pretrained_output, 1, 1, pretrained_output.size(1) - 2)
        if is_preseged:
            segment_output = None
        else:
            segment_output = torch.argmax(self.model.seg_classifier(char_input).logits, dim=-1).cpu().numpy()
        return word_cls, char_input, segment_output, length

    @no_grad
    def seg(self, inputs: Union[List[str], List[List[str]]], truncation: bool = True, is_preseged=False):
        """
        分词

        Args:
            inputs: 句子列表
            truncation: 是否对过长的句子进行截断，如果为 False 可能会抛出异常
            is_preseged:  是否已经进行过分词

        Returns:
            words: 分词后的序列
            hidden: 用于其他任务的中间表示
        """

        if transformers_version.major >= 3:
            kwargs = {'is_split_into_words': is_preseged}
        else:
            kwargs = {'is_pretokenized': is_preseged}

        tokenized = self.tokenizer.batch_encode_plus(
            inputs, padding=True, truncation=truncation,
            return_tensors='pt', return_offsets_mapping=True, **kwargs
        )
        cls, hidden, seg, lengths = self._seg(tokenized, is_preseged=is_preseged)

        batch_prefix = [[
            word_idx != encoding.words[idx - 1]
            for idx, word_idx in enumerate(encoding.words) if word_idx is not None
        ] for encoding in tokenized.encodings]

        # merge segments with maximum forward matching
        if self.trie.is_init and not is_preseged:
            matches = self.seg_with_dict(inputs, tokenized, batch_prefix)
            for sent_match, sent_seg in zip(matches, seg):
                for start, end in sent_match:
                    sent_seg[start] = self.seg_vocab_dict['B-W']
                    sent_seg[start + 1:end] = self.seg_vocab_dict['I-W']
                    if end < len(sent_seg):
                        sent_seg[end] = self.seg_vocab_dict['B-W']

        if is_preseged:
            sentences = inputs
            word_length = [len(sentence) for sentence in sentences]

            word_idx = []
            for encodings in tokenized.encodings:
                sentence_word_idx = []
                for idx, (start, end) in enumerate(encodings.offsets[1:]):
                    if start == 0 and end != 0:
                        sentence_word_idx.append(idx)
                word_idx.append(torch.as_tensor(sentence_word_idx, device=self.device))
        else:
            segment_output = convert_idx_to_name(seg, lengths, self.seg_vocab)
            sentences = []
            word_idx = []
            word_length = []

            for source_text, length, encoding, seg_tag, preffix in \
                    zip(inputs, lengths, tokenized.encodings, segment_output, batch_prefix):
                offsets = encoding.offsets[1:length + 1]
                text = []
                last_offset = None
                for start, end in offsets:
                    text.append('' if last_offset == (start, end) else source_text[start:end])
                    last_offset = (start, end)

                for idx in range(1, length):
                    current_beg = offsets[idx][0]
                    forward_end = offsets[idx - 1][-1]
                    if forward_end < current_beg:
                        text[idx] = source_text[forward_end:current_beg] + text[idx]
                    if not preffix[idx]:
                        seg_tag[idx] = 'I-W'

                words = list(self._merge(text, seg_tag))
                sentences.append(words)
                word_length.append(len(words))
                word_idx.append(torch.as_tensor(
                    [i for i, tag in enumerate(seg_tag) if tag == 'B-W'], device=self.device
                ))

        word_idx = pad_sequence(word_idx, batch_first=True)
        word_idx = word_idx.unsqueeze(-1).expand(-1, -1, hidden.shape[-1])
        word_input = torch.gather(hidden, dim=1, index=word_idx)
        word_cls_input = torch.cat([cls, word_input], dim=1)
        word_cls_mask = length_to_mask(torch.as_tensor(word_length, device=self.device) + 1)
        word_cls_mask[:, 0] = False
        return sentences, {
            'word_cls': cls, 'word_input': word_input, 'word_length': word_length,
            'word_cls_input': word_cls_input, 'word_cls_mask': word_cls_mask
        }

    @staticmethod
    def _merge(text, seg_tag):
        word = ''
        for char, tag in zip(text, seg_tag):
            if tag == 'B-W' and word:
                yield word
                word = char
            else:
                word += char
        if word:
            yield word

    @no_grad
    def pos(self, hidden: dict):
        # 词性标注
        postagger_output = self.model.pos_classifier(hidden['word_input']).logits
        postagger_output = torch.argmax(postagger_output, dim=-1).cpu().numpy()
        postagger_output = convert_idx_to_name(postagger_output, hidden['word_length'], self.pos_vocab)
        return postagger_output

    @no_grad
    def dep(self, hidden: dict, fast=True):
        # 依存句法分析
        word_attention_mask = hidden['word_cls_mask']
        result = self.model.dep_classifier.forward(
            input=hidden['word_cls_input'], word_attention_mask=word_attention_mask[:, 1:]
        )
        dep_arc, dep_label = result.arc_logits, result.rel_logits
        dep_arc[:, 0, 1:] = float('-inf')
        dep_arc.diagonal(0, 1, 2).fill_(float('-inf'))
        dep_arc = dep_arc.argmax(dim=-1) if fast else eisner(dep_arc, word_attention_mask)

        dep_label = torch.argmax(dep_label, dim=-1)
        dep_label = dep_label.gather(-1, dep_arc.unsqueeze(-1)).squeeze(-1)

        dep_arc[~word_attention_mask] = -1
        dep_label[~word_attention_mask] = -1

        head_pred = [[item for item in arcs if item != -1] for arcs in dep_arc[:, 1:].cpu().numpy().tolist()]
        rel_pred = [[self.dep_vocab[item] for item in rels if item != -1] for rels in dep_label[:, 1:].cpu().numpy().tolist()]

        return [
            [(idx + 1, head, rel) for idx, (head, rel) in enumerate(zip(heads, rels))]
            for heads, rels in zip(head_pred, rel_pred)
        ]


def convert_idx_to_name(y, array_len, id2label=None):
    if id2label:
        return [[id2label[idx] for idx in row[:row_len]] for row, row_len in zip(y, array_len)]
    else:
        return [row[:row_len] for row, row_len in zip(y, array_len)]

