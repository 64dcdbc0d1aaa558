import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class Attention(nn.Module):
    def forward(self, query, key, value, mask=None, dropout=None, one_direction=False):
        scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.size(-1))

        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        if one_direction:  # Required for self-attention, but not for cross-attention
            direction_mask = torch.ones_like(scores)
            direction_mask = torch.tril(direction_mask)
            scores = scores.masked_fill(direction_mask == 0, -1e9)

        p_attn = F.softmax(scores, dim=-1)

        if dropout is not None:
            p_attn = dropout(p_attn)

        return torch.matmul(p_attn, value), p_attn


class MultiHeadedAttention(nn.Module):
    """
    Take in models size and number of heads.
    """

    def __init__(self, num_heads, d_model, head_size=None, dropout=0.0, positional_encoding_k=None,
                 positional_encoding_v=None, final_layer=False):
        super().__init__()

        assert d_model % num_heads == 0
        self.num_heads = num_heads
        if head_size is not None:
            self.head_size = head_size
        else:
            self.head_size = d_model // num_heads

        self.linear_layers = nn.ModuleList([nn.Linear(d_model, self.num_heads * self.head_size) for _ in range(3)])
        self.attention = Attention()
        self.dropout = nn.Dropout(p=dropout)
        if final_layer:
            self.final_layer = nn.Linear(self.num_heads * self.head_size, d_model)
        self.layer_norm = nn.LayerNorm(d_model)

        self.positional_encoding_k = positional_encoding_k
        self.positional_encoding_v = positional_encoding_v

    def forward(self, query, key, value, mask=None, one_direction=True):
        batch_size = query.size(0)

        # 1) do all the linear projections in batch from d_model => num_heads x d_k
        query_, key_, value_ = [layer(x).view(batch_size, -1, self.num_heads, self.head_size).transpose(1, 2)
                                for layer, x in zip(self.linear_layers, (query, key, value))]

        # 2) apply self_attention on all the projected vectors in batch.
        x, self.attn = self.attention(query_, key_, value_, mask=mask, dropout=self.dropout, one_direction=one_direction)

        # 3) "concat" using a view and apply a final linear.
        x = x.transpose(1, 2).contiguous().view(batch_size, -1, self.num_heads * self.head_size)

        if hasattr(self, "final_layer"):
            x = self.final_layer(x)

        return self.layer_norm(x + query)


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.1):
        super(PositionwiseFeedForward, self).__init__()
        self.conv1 = nn.Conv1d(in_channels=d_model, out_channels=d_ff, kernel_size=1)
        self.conv2 = nn.Conv1d(in_channels=d_ff, out_channels=d_model, kernel_size=1)
        self.dropout = nn.Dropout(dropout)
        self.activation = nn.ReLU()
        self.layer_norm = nn.LayerNorm(d_model)

    def forward(self, x):
        x_ = self.dropout(self.activation(self.conv1(x.permute(0, 2, 1))))
        return self.layer_norm(self.dropout(self.conv2(x_).permute(0, 2, 1)) + x)


class AbsolutePositionalEncoding(nn.Module):
    """
    Absolute positional encoding
    """

    def __init__(self, max_len, d_model, trainable=False):
        super().__init__()
        self.max_len = max_len
        self.trainable = trainable
        if trainable:
            self.pe = nn.Embedding(max_len, d_model)
        else:
            # Compute the positional encodings once in log space.
            pe = torch.zeros(max_len, d_model).float()
            pe.require_grad = False

            position = torch.arange(0, max_len).float().unsqueeze(1)
            div_term = (torch.arange(0, d_model, 2).float() * -(math.log(10000.0) / d_model)).exp()

            pe[:, 0::2] = torch.sin(position * div_term)
            pe[:, 1::2] = torch.cos(position * div_term)

            pe = pe.unsqueeze(0)
            self.register_buffer("pe", pe)

    def forward(self, x):
        if self.trainable:
            return self.pe(torch.arange(x.size(1), device=x.device)).unsqueeze(0)
        return self.pe[:, :x.size(1)]


class RelativePositionalEncoding(nn.Module):
    """
    Relative positional encoding
    """

    def __init__(self, max_relative_position, d_model, trainable=False, cross_attn=False):
        super().__init__()
        self.max_relative_position = max_relative_position
        self.trainable = trainable
        self.cross_attn = cross_attn
        self.num_embeddings = (max_relative_position * 2 + 1) if not cross_attn else (max_relative_position + 1)
        if trainable:
            self.embeddings_table = nn.Embedding(self.num_embeddings, d_model)
        else:
            self.embeddings_table = torch.zeros(self.num_embeddings, d_model)
            position = torch.arange(0, self.num_embeddings).float().unsqueeze(1)
            div_term = (torch.arange(0, d_model, 2).float() * -(math.log(10000.0) / d_model)).exp()
            self.embeddings_table[:, 0::2] = torch.sin(position * div_term)
            self.embeddings_table[:, 1::2] = torch.cos(position * div_term)
            self.embeddings_table = nn.Parameter(self.embeddings_table, requires_grad=False)

    def forward(self, length_q, length_k):
        range_vec_q = torch.arange(length_q, device=self.embeddings_table.weight.device
                                   if self.trainable else self.embeddings_table.device)
        range_vec_k = torch.arange(length_k, device=range_vec_q.device)
        distance_mat = range_vec_k[None, :] - range_vec_q[:, None]
        if not self.cross_attn:
            distance_mat_clipped = torch.clamp(distance_mat, -self.max_relative_position, self.max_relative_position)
            final_mat = distance_mat_clipped + self.max_relative_position
        else:
            distance_mat_clipped = torch.clamp(distance_mat, -self.max_relative_position, 0)
            final_mat = -distance_mat_clipped
        final_mat = final_mat.long()

        if self.trainable:
            embeddings = self.embeddings_table(final_mat)
        else:
            embeddings = self.embeddings_table[final_mat]

        return embeddings


class TransformerMultiInputBlock(nn.Module):
    """
    Transformer block with self-attention over each input stream and cross-attention between streams
    (treatments, outcomes and optionally vitals).
    """

    def __init__(self, hidden, attn_heads, head_size, feed_forward_hidden, dropout, attn_dropout,
                 self_positional_encoding_k=None, self_positional_encoding_v=None, n_inputs=2,
                 final_layer=False, disable_cross_attention=False, isolate_subnetwork=""):
        super().__init__()
        self.n_inputs = n_inputs
        self.disable_cross_attention = disable_cross_attention
        self.isolate_subnetwork = isolate_subnetwork
        self.self_attention = nn.ModuleList([
            MultiHeadedAttention(num_heads=attn_heads, d_model=hidden, head_size=head_size, dropout=attn_dropout,
                                 positional_encoding_k=self_positional_encoding_k,
                                 positional_encoding_v=self_positional_encoding_v, final_layer=final_layer)
            for _ in range(n_inputs)])
        self.feed_forwards = nn.ModuleList([PositionwiseFeedForward(d_model=hidden, d_ff=feed_forward_hidden,
                                                                    dropout=dropout) for _ in range(n_inputs)])
        self.n_cross = n_inputs * (n_inputs - 1)
        self.cross_attention = nn.ModuleList([
            MultiHeadedAttention(num_heads=attn_heads, d_model=hidden, head_size=head_size, dropout=attn_dropout,
                                 final_layer=final_layer) for _ in range(self.n_cross)])

    def forward(self, x_tov, x_s, active_entries_treat_outcomes, active_entries_vitals=None):
        self_att_mask_ot = active_entries_treat_outcomes.repeat(1, 1, active_entries_treat_outcomes.size(1)).unsqueeze(1)
        outs = []
        for i, x in enumerate(x_tov):
            outs.append(self.self_attention[i](x, x, x, self_att_mask_ot, True))
        if not self.disable_cross_attention:
            k = 0
            crossed = []
            for i in range(self.n_inputs):
                acc = outs[i]
                for j in range(self.n_inputs):
                    if i == j:
                        continue
                    acc = acc + self.cross_attention[k](outs[i], outs[j], outs[j], self_att_mask_ot, True)
                    k += 1
                crossed.append(acc)
            outs = crossed
        outs = [self.feed_forwards[i](x + x_s) for i, x in enumerate(outs)]
        return tuple(outs)
