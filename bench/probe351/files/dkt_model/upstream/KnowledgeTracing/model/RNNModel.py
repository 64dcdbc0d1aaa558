# -*- coding: utf-8 -*-
"""Deep Knowledge Tracing (Piech et al., 2015).

The input of every step is the one-hot encoding of (question, correctness), i.e. a vector of
size 2 * NUM_OF_QUESTIONS; the output is the predicted probability of answering every question
correctly at the next step.
"""
import torch
import torch.nn as nn
from torch.autograd import Variable


class DKT(nn.Module):
    def __init__(self, input_dim, hidden_dim, layer_dim, output_dim, rnn_type='rnn', dropout=0.0):
        super(DKT, self).__init__()
        self.hidden_dim = hidden_dim
        self.layer_dim = layer_dim
        self.output_dim = output_dim
        self.rnn_type = rnn_type
        if rnn_type == 'lstm':
            self.rnn = nn.LSTM(input_dim, hidden_dim, layer_dim, batch_first=True, dropout=dropout)
        elif rnn_type == 'gru':
            self.rnn = nn.GRU(input_dim, hidden_dim, layer_dim, batch_first=True)
        else:
            self.rnn = nn.RNN(input_dim, hidden_dim, layer_dim, batch_first=True, nonlinearity='tanh')
        self.fc = nn.Linear(self.hidden_dim, self.output_dim)
        self.sig = nn.Sigmoid()

    def init_hidden(self, x):
        h0 = Variable(torch.zeros(self.layer_dim, x.size(0), self.hidden_dim))
        if x.is_cuda:
            h0 = h0.cuda()
        if self.rnn_type == 'lstm':
            c0 = torch.zeros_like(h0)
            return (h0, c0)
        return h0

    def forward(self, x):
        hidden = self.init_hidden(x)
        out, hn = self.rnn(x, hidden)
        res = self.sig(self.fc(out))
        return res


class DKTEmbedding(nn.Module):
    """Variant that embeds the interaction id instead of feeding the 2Q-dim one-hot vector
    (needed for datasets with many questions such as ASSISTments 2017 / EdNet)."""

    def __init__(self, num_questions, emb_dim, hidden_dim, layer_dim, dropout=0.1):
        super(DKTEmbedding, self).__init__()
        self.num_questions = num_questions
        self.interaction_emb = nn.Embedding(2 * num_questions + 1, emb_dim, padding_idx=0)
        self.lstm = nn.LSTM(emb_dim, hidden_dim, layer_dim, batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(hidden_dim, num_questions)

    def forward(self, q, r):
        x = q + self.num_questions * r
        x = x.masked_fill(q < 0, 0)
        h, _ = self.lstm(self.interaction_emb(x))
        return torch.sigmoid(self.out(self.dropout(h)))
