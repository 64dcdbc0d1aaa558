import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from .encoderblocks import EncoderBlocks
from .embedding import AbEmbeddings


class AbLang(torch.nn.Module):
    """
    Pretraining model includes Abrep and the head model used for training.
    """

    def __init__(self, hparams):
        super().__init__()
        self.hparams = hparams

        self.AbRep = AbRep(self.hparams)
        self.AbHead = AbHead(self.hparams)

    def forward(self, x, attention_mask=None):
        representations = self.AbRep(x, attention_mask)

        output = self.AbHead(representations.last_hidden_states)

        return output

    def get_aa_embeddings(self):
        "This function is used to extract the trained aa_embeddings."
        return self.AbRep.AbEmbeddings.AAEmbeddings


class AbRep(torch.nn.Module):
    """
    This is the AbRep model.
    """

    def __init__(self, hparams):
        super().__init__()
        self.hparams = hparams

        self.AbEmbeddings = AbEmbeddings(self.hparams)
        self.EncoderBlocks = EncoderBlocks(self.hparams)

        self.init_weights()

    def forward(self, src, attention_mask=None, output_attentions=False):
        attention_mask = torch.zeros(*src.shape, device=src.device).masked_fill(src == self.hparams.pad_token_id, 1)

        src = self.AbEmbeddings(src)

        output = self.EncoderBlocks(src, attention_mask=attention_mask, output_attentions=output_attentions)

        return output

    def _init_weights(self, module):
        """Initialize the weights"""
        if isinstance(module, nn.Linear):
            module.weight.data.normal_(mean=0.0, std=self.hparams.initializer_range)
            if module.bias is not None:
                module.bias.data.zero_()
        elif isinstance(module, nn.Embedding):
            module.weight.data.normal_(mean=0.0, std=self.hparams.initializer_range)
            if module.padding_idx is not None:
                module.weight.data[module.padding_idx].zero_()
        elif isinstance(module, nn.LayerNorm):
            module.bias.data.zero_()
            module.weight.data.fill_(1.0)

    def init_weights(self):
        """
        Initializes and prunes weights if needed.
        """
        # Initialize weights
        self.apply(self._init_weights)


class AbHead(torch.nn.Module):
    """
    Head for masked sequence prediction.
    """

    def __init__(self, hparams):
        super().__init__()
        self.dense = nn.Linear(hparams.hidden_size, hparams.hidden_size)
        self.layer_norm = nn.LayerNorm(hparams.hidden_size, eps=hparams.layer_norm_eps)

        self.decoder = nn.Linear(hparams.hidden_size, hparams.vocab_size, bias=False)
        self.bias = nn.Parameter(torch.zeros(hparams.vocab_size))

        self.activation = nn.GELU()

        # Need a link between the two variables so that the bias is correctly resized with `resize_token_embeddings`
        self.decoder.bias = self.bias

    def forward(self, features, **kwargs):
        x = self.dense(features)

        x = self.activation(x)
        x = self.layer_norm(x)

        # project back to size of vocabulary with bias
        x = self.decoder(x)

        return x


@dataclass
class AbRepOutput:
    """
    Dataclass used to store AbRep output.
    """

    last_hidden_states: torch.FloatTensor
    all_hidden_states: tuple = None
    attentions: tuple = None


class SelfAttention(nn.Module):
    """
    Plain scaled dot-product self-attention as used in the AbLang encoder blocks.
    Written out by hand so that the attention weights can be returned for analysis.
    """

    def __init__(self, hidden_size, num_heads, dropout=0.1):
        super().__init__()
        assert hidden_size % num_heads == 0
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.scaling = self.head_dim ** -0.5

        self.q_proj = nn.Linear(hidden_size, hidden_size)
        self.k_proj = nn.Linear(hidden_size, hidden_size)
        self.v_proj = nn.Linear(hidden_size, hidden_size)
        self.out_proj = nn.Linear(hidden_size, hidden_size)
        self.dropout = nn.Dropout(dropout)

    def _shape(self, x, bsz, seq_len):
        return x.view(bsz, seq_len, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x, attention_mask=None, output_attentions=False):
        bsz, seq_len, _ = x.shape

        q = self._shape(self.q_proj(x) * self.scaling, bsz, seq_len)
        k = self._shape(self.k_proj(x), bsz, seq_len)
        v = self._shape(self.v_proj(x), bsz, seq_len)

        attn_weights = torch.matmul(q, k.transpose(-1, -2))

        if attention_mask is not None:
            attn_weights = attn_weights.masked_fill(
                attention_mask[:, None, None, :].to(torch.bool), float("-inf")
            )

        attn_probs = F.softmax(attn_weights, dim=-1)
        attn_probs = self.dropout(attn_probs)

        out = torch.matmul(attn_probs, v)
        out = out.transpose(1, 2).reshape(bsz, seq_len, self.num_heads * self.head_dim)
        out = self.out_proj(out)

        return out, (attn_probs if output_attentions else None)
