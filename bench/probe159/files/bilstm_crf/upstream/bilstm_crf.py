# -*- coding: utf-8 -*-
"""
Batched BiLSTM-CRF for Chinese NER (MSRA / People's Daily / Weibo, BIO tags).

Started from the PyTorch "Advanced: Making Dynamic Decisions and the Bi-LSTM CRF"
tutorial, rewritten to run whole mini-batches on the GPU (the tutorial version
is one sentence at a time on CPU and is far too slow for MSRA).

    python bilstm_crf.py --train data/msra/train.char.bmes --dev data/msra/dev.char.bmes --gpu
"""
import argparse
import codecs
import os
import pickle
import random
import time

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

START_TAG = "<START>"
STOP_TAG = "<STOP>"
PAD = "<PAD>"
UNK = "<UNK>"


def argmax(vec):
    # return the argmax as a python int
    _, idx = torch.max(vec, 1)
    return idx.item()


def log_sum_exp_batch(vec):
    """vec: (batch, tag, tag) -> (batch, tag), logsumexp over dim 1 (from-tag)."""
    max_score, _ = torch.max(vec, 1)
    max_score_broadcast = max_score.unsqueeze(1).expand_as(vec)
    return max_score + torch.log(torch.sum(torch.exp(vec - max_score_broadcast), 1))


class BiLSTM_CRF(nn.Module):

    def __init__(self, vocab_size, tag_to_ix, embedding_dim, hidden_dim, dropout=0.5, use_gpu=True):
        super(BiLSTM_CRF, self).__init__()
        self.embedding_dim = embedding_dim
        self.hidden_dim = hidden_dim
        self.vocab_size = vocab_size
        self.tag_to_ix = tag_to_ix
        self.tagset_size = len(tag_to_ix)
        self.use_gpu = use_gpu
        # choose tensor types once; everything in the CRF is built with these
        self.float_type = torch.cuda.FloatTensor if use_gpu else torch.FloatTensor
        self.long_type = torch.cuda.LongTensor if use_gpu else torch.LongTensor

        self.word_embeds = nn.Embedding(vocab_size, embedding_dim, padding_idx=0)
        self.lstm = nn.LSTM(embedding_dim, hidden_dim // 2,
                            num_layers=1, bidirectional=True, batch_first=True)
        self.dropout = nn.Dropout(dropout)

        # Maps the output of the LSTM into tag space.
        self.hidden2tag = nn.Linear(hidden_dim, self.tagset_size)

        # Matrix of transition parameters.  Entry i,j is the score of
        # transitioning *to* i *from* j.
        self.transitions = nn.Parameter(
            torch.randn(self.tagset_size, self.tagset_size))

        # These two statements enforce the constraint that we never transfer
        # to the start tag and we never transfer from the stop tag
        self.transitions.data[tag_to_ix[START_TAG], :] = -10000
        self.transitions.data[:, tag_to_ix[STOP_TAG]] = -10000

    def init_hidden(self, batch_size):
        h0 = torch.randn(2, batch_size, self.hidden_dim // 2)
        c0 = torch.randn(2, batch_size, self.hidden_dim // 2)
        if self.use_gpu:
            h0, c0 = h0.cuda(), c0.cuda()
        return (h0, c0)

    def _forward_alg(self, feats, mask):
        """
        feats: (batch, seq_len, tagset)   emission scores
        mask:  (batch, seq_len)           1 for real tokens
        returns log partition function per sentence, (batch,)
        """
        batch_size, seq_len, _ = feats.size()
        # Do the forward algorithm to compute the partition function
        init_alphas = torch.cuda.FloatTensor(batch_size, self.tagset_size).fill_(-10000.)
        # START_TAG has all of the score.
        init_alphas[:, self.tag_to_ix[START_TAG]] = 0.

        # Wrap in a variable so that we will get automatic backprop
        forward_var = init_alphas

        trans = self.transitions.unsqueeze(0).expand(batch_size, self.tagset_size, self.tagset_size)
        # Iterate through the sentence
        for t in range(seq_len):
            emit_score = feats[:, t, :].unsqueeze(2).expand(batch_size, self.tagset_size, self.tagset_size)
            # next_tag_var[b, i, j] = forward_var[b, j] + trans[i, j] + emit[b, i]
            next_tag_var = forward_var.unsqueeze(1).expand_as(trans) + trans + emit_score
            new_forward = log_sum_exp_batch(next_tag_var.transpose(1, 2))
            mask_t = mask[:, t].unsqueeze(1).type(self.float_type)
            forward_var = mask_t * new_forward + (1 - mask_t) * forward_var
        terminal_var = forward_var + self.transitions[self.tag_to_ix[STOP_TAG]].unsqueeze(0)
        max_score, _ = torch.max(terminal_var, 1)
        alpha = max_score + torch.log(torch.sum(torch.exp(terminal_var - max_score.unsqueeze(1)), 1))
        return alpha

    def _get_lstm_features(self, sentences, lengths):
        batch_size = sentences.size(0)
        hidden = self.init_hidden(batch_size)
        embeds = self.dropout(self.word_embeds(sentences))
        packed = nn.utils.rnn.pack_padded_sequence(embeds, lengths, batch_first=True)
        lstm_out, hidden = self.lstm(packed, hidden)
        lstm_out, _ = nn.utils.rnn.pad_packed_sequence(lstm_out, batch_first=True,
                                                       total_length=sentences.size(1))
        lstm_out = self.dropout(lstm_out)
        lstm_feats = self.hidden2tag(lstm_out)
        return lstm_feats

    def _score_sentence(self, feats, tags, mask):
        # Gives the score of a provided tag sequence, batched
        batch_size, seq_len, _ = feats.size()
        score = torch.zeros(batch_size).cuda()
        start = torch.full((batch_size, 1), self.tag_to_ix[START_TAG]).type(self.long_type)
        tags = torch.cat([start, tags], dim=1)
        mask_f = mask.type(torch.cuda.FloatTensor)
        for t in range(seq_len):
            emit = feats[:, t, :].gather(1, tags[:, t + 1].unsqueeze(1)).squeeze(1)
            trans = self.transitions[tags[:, t + 1], tags[:, t]]
            score = score + (emit + trans) * mask_f[:, t]
        lengths = mask.long().sum(1)
        last_tags = tags.gather(1, lengths.unsqueeze(1)).squeeze(1)
        score = score + self.transitions[self.tag_to_ix[STOP_TAG], last_tags]
        return score

    def _viterbi_decode(self, feats, mask):
        batch_size, seq_len, _ = feats.size()
        backpointers = []

        # Initialize the viterbi variables in log space
        init_vvars = torch.full((batch_size, self.tagset_size), -10000.)
        if feats.is_cuda:
            init_vvars = init_vvars.cuda()
        init_vvars[:, self.tag_to_ix[START_TAG]] = 0

        # forward_var at step i holds the viterbi variables for step i-1
        forward_var = init_vvars
        for t in range(seq_len):
            next_tag_var = forward_var.unsqueeze(1) + self.transitions.unsqueeze(0)  # (b, to, from)
            viterbivars_t, bptrs_t = torch.max(next_tag_var, 2)
            new_forward = viterbivars_t + feats[:, t, :]
            mask_t = mask[:, t].unsqueeze(1).float()
            forward_var = mask_t * new_forward + (1 - mask_t) * forward_var
            backpointers.append(bptrs_t)

        # Transition to STOP_TAG
        terminal_var = forward_var + self.transitions[self.tag_to_ix[STOP_TAG]].unsqueeze(0)
        path_score, best_tag_id = torch.max(terminal_var, 1)

        # Follow the back pointers to decode the best path (on host, per sentence).
        lengths = mask.long().sum(1).tolist()
        backpointers = torch.stack(backpointers, 1).cpu().numpy()  # (b, seq, tag)
        best_tag_id = best_tag_id.cpu().numpy()
        best_paths = []
        for b in range(batch_size):
            tag_id = int(best_tag_id[b])
            path = [tag_id]
            for t in range(lengths[b] - 1, 0, -1):
                tag_id = int(backpointers[b, t, tag_id])
                path.append(tag_id)
            path.reverse()
            best_paths.append(path)
        return path_score, best_paths

    def neg_log_likelihood(self, sentences, tags, lengths, mask):
        feats = self._get_lstm_features(sentences, lengths)
        forward_score = self._forward_alg(feats, mask)
        gold_score = self._score_sentence(feats, tags, mask)
        return (forward_score - gold_score).mean()

    def forward(self, sentences, lengths, mask):  # dont confuse this with _forward_alg above.
        # Get the emission scores from the BiLSTM
        lstm_feats = self._get_lstm_features(sentences, lengths)

        # Find the best path, given the features.
        score, tag_seq = self._viterbi_decode(lstm_feats, mask)
        return score, tag_seq


# ----------------------------------------------------------------------------- data

def read_bmes(path):
    sents, sent, tags = [], [], []
    with codecs.open(path, 'r', 'utf-8') as f:
        for line in f:
            line = line.strip()
            if not line:
                if sent:
                    sents.append((sent, tags))
                sent, tags = [], []
                continue
            ch, tag = line.split()
            sent.append(ch)
            tags.append(tag)
    if sent:
        sents.append((sent, tags))
    return sents


def build_maps(sents):
    word_to_ix = {PAD: 0, UNK: 1}
    tag_to_ix = {}
    for words, tags in sents:
        for w in words:
            if w not in word_to_ix:
                word_to_ix[w] = len(word_to_ix)
        for t in tags:
            if t not in tag_to_ix:
                tag_to_ix[t] = len(tag_to_ix)
    tag_to_ix[START_TAG] = len(tag_to_ix)
    tag_to_ix[STOP_TAG] = len(tag_to_ix)
    return word_to_ix, tag_to_ix


def make_batch(batch, word_to_ix, tag_to_ix, use_gpu):
    batch = sorted(batch, key=lambda x: len(x[0]), reverse=True)
    lengths = [len(x[0]) for x in batch]
    max_len = lengths[0]
    sent_ids = np.zeros((len(batch), max_len), dtype=np.int64)
    tag_ids = np.zeros((len(batch), max_len), dtype=np.int64)
    for i, (words, tags) in enumerate(batch):
        sent_ids[i, :len(words)] = [word_to_ix.get(w, 1) for w in words]
        tag_ids[i, :len(tags)] = [tag_to_ix[t] for t in tags]
    sentences = torch.from_numpy(sent_ids)
    tags = torch.from_numpy(tag_ids)
    mask = sentences.ne(0)
    if use_gpu:
        sentences = sentences.cuda()
        tags = tags.cuda()
        mask = mask.cuda()
    return sentences, tags, lengths, mask


def evaluate(model, data, word_to_ix, tag_to_ix, batch_size, use_gpu):
    ix_to_tag = {v: k for k, v in tag_to_ix.items()}
    model.eval()
    correct, total = 0, 0
    with torch.no_grad():
        for i in range(0, len(data), batch_size):
            batch = sorted(data[i:i + batch_size], key=lambda x: len(x[0]), reverse=True)
            sentences, tags, lengths, mask = make_batch(batch, word_to_ix, tag_to_ix, use_gpu)
            _, paths = model(sentences, lengths, mask)
            for (words, gold), path in zip(batch, paths):
                pred = [ix_to_tag[p] for p in path]
                correct += sum(int(p == g) for p, g in zip(pred, gold))
                total += len(gold)
    model.train()
    return correct / max(total, 1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--train', default='data/msra/train.char.bmes')
    parser.add_argument('--dev', default='data/msra/dev.char.bmes')
    parser.add_argument('--embedding_dim', type=int, default=100)
    parser.add_argument('--hidden_dim', type=int, default=200)
    parser.add_argument('--batch_size', type=int, default=64)
    parser.add_argument('--epochs', type=int, default=30)
    parser.add_argument('--lr', type=float, default=0.015)
    parser.add_argument('--gpu', action='store_true', help='train on the GPU (cuda:0)')
    parser.add_argument('--save', default='ckpt/bilstm_crf.pt')
    args = parser.parse_args()

    random.seed(1)
    torch.manual_seed(1)
    use_gpu = args.gpu and torch.cuda.is_available()

    train_data = read_bmes(args.train)
    dev_data = read_bmes(args.dev)
    word_to_ix, tag_to_ix = build_maps(train_data)
    print('vocab %d, tags %d, train %d, dev %d' % (len(word_to_ix), len(tag_to_ix), len(train_data), len(dev_data)))

    model = BiLSTM_CRF(len(word_to_ix), tag_to_ix, args.embedding_dim, args.hidden_dim, use_gpu=use_gpu)
    if use_gpu:
        model.cuda()
    optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-8)

    best = 0.
    for epoch in range(args.epochs):
        random.shuffle(train_data)
        start = time.time()
        total_loss = 0.
        for i in range(0, len(train_data), args.batch_size):
            sentences, tags, lengths, mask = make_batch(train_data[i:i + args.batch_size], word_to_ix, tag_to_ix, use_gpu)
            model.zero_grad()
            loss = model.neg_log_likelihood(sentences, tags, lengths, mask)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
            total_loss += loss.item()
        acc = evaluate(model, dev_data, word_to_ix, tag_to_ix, args.batch_size, use_gpu)
        print('epoch %d  loss %.3f  dev acc %.4f  (%.1fs)' % (epoch, total_loss, acc, time.time() - start))
        if acc > best:
            best = acc
            os.makedirs(os.path.dirname(args.save), exist_ok=True)
            torch.save({'model': model.state_dict(), 'word_to_ix': word_to_ix, 'tag_to_ix': tag_to_ix}, args.save)
            with open(args.save + '.maps', 'wb') as f:
                pickle.dump((word_to_ix, tag_to_ix), f)


if __name__ == '__main__':
    main()
