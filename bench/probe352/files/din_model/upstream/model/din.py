"""Deep Interest Network (Zhou et al., KDD 2018) in PyTorch.

Follows the structure of the official TensorFlow implementation:
item embedding = concat(goods_emb, cate_emb), a local activation unit over the user
behaviour sequence, and a 200-80-1 MLP with Dice activations.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Dice(nn.Module):
    """Data-adaptive activation from the DIN paper.

    alpha is kept as a plain tensor (not a Parameter), exactly like the TF code where it is
    created with ``tf.get_variable(..., trainable=True)`` but never regularised.
    """

    def __init__(self, num_features, dim=2, epsilon=1e-8):
        super(Dice, self).__init__()
        assert dim == 2 or dim == 3
        self.bn = nn.BatchNorm1d(num_features, eps=epsilon)
        self.sigmoid = nn.Sigmoid()
        self.dim = dim

        if self.dim == 2:
            self.alpha = torch.zeros((num_features,)).cuda()
        else:
            self.alpha = torch.zeros((num_features, 1)).cuda()

    def forward(self, x):
        assert x.dim() == self.dim
        if self.dim == 2:
            x_p = self.sigmoid(self.bn(x))
            out = self.alpha * (1 - x_p) * x + x_p * x
        else:
            x = torch.transpose(x, 1, 2)
            x_p = self.sigmoid(self.bn(x))
            out = self.alpha * (1 - x_p) * x + x_p * x
            out = torch.transpose(out, 1, 2)
        return out


class LocalActivationUnit(nn.Module):
    """Attention MLP over [queries, keys, queries - keys, queries * keys]."""

    def __init__(self, hidden_units=(80, 40), embedding_dim=4, dropout_rate=0.0, use_dice=False):
        super(LocalActivationUnit, self).__init__()
        layers = []
        input_dim = 4 * embedding_dim
        for h in hidden_units:
            layers.append(nn.Linear(input_dim, h))
            layers.append(Dice(h) if use_dice else nn.Sigmoid())
            if dropout_rate > 0:
                layers.append(nn.Dropout(dropout_rate))
            input_dim = h
        self.dnn = nn.Sequential(*layers)
        self.dense = nn.Linear(input_dim, 1)

    def forward(self, query, user_behavior):
        # query: [B, 1, E], user_behavior: [B, T, E]
        user_behavior_len = user_behavior.size(1)
        queries = query.expand(-1, user_behavior_len, -1)
        attention_input = torch.cat(
            [queries, user_behavior, queries - user_behavior, queries * user_behavior], dim=-1)
        attention_output = self.dnn(attention_input)
        attention_score = self.dense(attention_output)  # [B, T, 1]
        return attention_score


class AttentionSequencePoolingLayer(nn.Module):
    def __init__(self, embedding_dim=4, att_hidden_units=(80, 40), weight_normalization=False):
        super(AttentionSequencePoolingLayer, self).__init__()
        self.weight_normalization = weight_normalization
        self.local_att = LocalActivationUnit(hidden_units=att_hidden_units, embedding_dim=embedding_dim)

    def forward(self, query_ad, user_behavior, user_behavior_length):
        # query_ad: [B, 1, E]; user_behavior: [B, T, E]; user_behavior_length: [B, 1]
        attention_score = self.local_att(query_ad, user_behavior)  # [B, T, 1]
        attention_score = torch.transpose(attention_score, 1, 2)  # [B, 1, T]

        max_len = user_behavior.size(1)
        mask = torch.arange(max_len).cuda().unsqueeze(0) < user_behavior_length  # [B, T]
        mask = mask.unsqueeze(1)  # [B, 1, T]

        if self.weight_normalization:
            paddings = torch.ones_like(attention_score) * (-2 ** 32 + 1)
        else:
            paddings = torch.zeros_like(attention_score)
        attention_score = torch.where(mask, attention_score, paddings)
        if self.weight_normalization:
            attention_score = F.softmax(attention_score, dim=-1)

        output = torch.matmul(attention_score, user_behavior)  # [B, 1, E]
        return output


class FullyConnectedLayer(nn.Module):
    def __init__(self, input_size, hidden_units, bias=None, batch_norm=False, dropout_rate=0.5,
                 activation='relu', sigmoid=False, dice_dim=2):
        super(FullyConnectedLayer, self).__init__()
        assert len(hidden_units) >= 1
        self.sigmoid = sigmoid
        bias = bias or [True] * len(hidden_units)

        layers = [nn.Linear(input_size, hidden_units[0], bias=bias[0])]
        for i, h in enumerate(hidden_units[:-1]):
            if batch_norm:
                layers.append(nn.BatchNorm1d(hidden_units[i]))
            if activation.lower() == 'relu':
                layers.append(nn.ReLU(inplace=True))
            elif activation.lower() == 'dice':
                layers.append(Dice(hidden_units[i], dim=dice_dim))
            elif activation.lower() == 'prelu':
                layers.append(nn.PReLU())
            else:
                raise NotImplementedError(activation)
            layers.append(nn.Dropout(p=dropout_rate))
            layers.append(nn.Linear(hidden_units[i], hidden_units[i + 1], bias=bias[i + 1]))

        self.fc = nn.Sequential(*layers)
        if self.sigmoid:
            self.output_layer = nn.Sigmoid()

        # weight initialization xavier_normal (or glorot_normal in keras, tf)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_normal_(m.weight.data, gain=1.0)
                if m.bias is not None:
                    nn.init.zeros_(m.bias.data)

    def forward(self, x):
        return self.output_layer(self.fc(x)) if self.sigmoid else self.fc(x)


class DeepInterestNetwork(nn.Module):
    def __init__(self, user_count, item_count, cate_count, cate_list, embedding_dim=64,
                 hidden_units=(200, 80), att_hidden_units=(80, 40)):
        super(DeepInterestNetwork, self).__init__()
        self.embedding_dim = embedding_dim
        half = embedding_dim // 2
        self.item_emb = nn.Embedding(item_count, half)
        self.cate_emb = nn.Embedding(cate_count, half)
        self.item_bias = nn.Parameter(torch.zeros(item_count))
        # cate_list maps item id -> category id; registered so that .to()/.state_dict() see it
        self.register_buffer('cate_list', cate_list)

        self.attn = AttentionSequencePoolingLayer(embedding_dim=embedding_dim,
                                                  att_hidden_units=att_hidden_units,
                                                  weight_normalization=False)
        self.bn_hist = nn.BatchNorm1d(embedding_dim)
        self.fc = FullyConnectedLayer(input_size=3 * embedding_dim,
                                      hidden_units=list(hidden_units) + [1],
                                      batch_norm=True,
                                      activation='dice',
                                      dropout_rate=0.0,
                                      dice_dim=2)

    def item_embedding(self, iid, cid):
        return torch.cat([self.item_emb(iid), self.cate_emb(cid)], dim=-1)

    def forward(self, uid, iid, cid, hist_iid, hist_cid, hist_len):
        query = self.item_embedding(iid, cid).unsqueeze(1)  # [B, 1, E]
        hist = self.item_embedding(hist_iid, hist_cid)  # [B, T, E]

        interest = self.attn(query, hist, hist_len.unsqueeze(1)).squeeze(1)  # [B, E]
        interest = self.bn_hist(interest)

        query = query.squeeze(1)
        din_all = torch.cat([interest, query, interest * query], dim=-1)
        logits = self.fc(din_all).squeeze(-1) + self.item_bias[iid]
        return logits

    @torch.no_grad()
    def all_item_scores(self, uid, hist_iid, hist_cid, hist_len, batch_items=4096):
        """Score every item for a batch of users (used by the HR@K evaluation script)."""
        item_count = self.item_emb.num_embeddings
        scores = []
        for start in range(0, item_count, batch_items):
            iids = torch.arange(start, min(start + batch_items, item_count), device=hist_iid.device)
            cids = self.cate_list[iids]
            B, N = uid.size(0), iids.size(0)
            s = self.forward(uid.repeat_interleave(N),
                             iids.repeat(B), cids.repeat(B),
                             hist_iid.repeat_interleave(N, dim=0),
                             hist_cid.repeat_interleave(N, dim=0),
                             hist_len.repeat_interleave(N))
            scores.append(s.view(B, N))
        return torch.cat(scores, dim=1)
