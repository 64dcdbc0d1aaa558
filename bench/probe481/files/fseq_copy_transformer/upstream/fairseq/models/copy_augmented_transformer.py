# Copyright (c) 2017-present, Facebook, Inc.
# All rights reserved.
#
# This source code is licensed under the license found in the LICENSE file in
# the root directory of this source tree. An additional grant of patent rights
# can be found in the PATENTS file in the same directory.
#
# Copy-augmented transformer for grammatical error correction
# (Zhao et al., NAACL 2019): a transformer decoder whose output distribution
# is a mixture of the vocabulary softmax and a copy distribution over the
# source tokens, plus a token-level labelling auxiliary task on the encoder.

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from fairseq import options, utils
from fairseq.modules import (
    AdaptiveSoftmax, LearnedPositionalEmbedding, MultiheadAttention,
    SinusoidalPositionalEmbedding,
)

from . import (
    FairseqIncrementalDecoder, FairseqEncoder, FairseqModel,
    register_model, register_model_architecture,
)
from .transformer import TransformerEncoderLayer, TransformerDecoderLayer


@register_model('copy_augmented_transformer')
class CopyAugmentedTransformerModel(FairseqModel):
    """Transformer with a copy attention over the source sentence."""

    def __init__(self, encoder, decoder):
        super().__init__(encoder, decoder)

    @staticmethod
    def add_args(parser):
        """Add model-specific arguments to the parser."""
        # fmt: off
        parser.add_argument('--dropout', type=float, metavar='D',
                            help='dropout probability')
        parser.add_argument('--attention-dropout', type=float, metavar='D',
                            help='dropout probability for attention weights')
        parser.add_argument('--relu-dropout', type=float, metavar='D',
                            help='dropout probability after ReLU in FFN')
        parser.add_argument('--copy-attention-dropout', type=float, metavar='D',
                            help='dropout probability for copy attention weights')
        parser.add_argument('--encoder-embed-dim', type=int, metavar='N',
                            help='encoder embedding dimension')
        parser.add_argument('--copy-attention', default=False, action='store_true',
                            help='train transformer with copy attention')
        parser.add_argument('--copy-attention-heads', type=int, metavar='N',
                            help='num copy attention heads')
        parser.add_argument('--share-all-embeddings', action='store_true',
                            help='share encoder, decoder and output embeddings'
                                 ' (requires shared dictionary and embed dim)')
        parser.add_argument('--pretrained-model', type=str, metavar='STR',
                            help='path to a pre-trained (denoising auto-encoder) checkpoint')
        parser.add_argument('--positive-label-weight', type=float, metavar='W',
                            help='weight of the positive class in the token labelling loss')
        # fmt: on

    @classmethod
    def build_model(cls, args, task):
        """Build a new model instance."""
        base_architecture(args)

        if not hasattr(args, 'max_source_positions'):
            args.max_source_positions = 1024
        if not hasattr(args, 'max_target_positions'):
            args.max_target_positions = 1024

        src_dict, tgt_dict = task.source_dictionary, task.target_dictionary

        def build_embedding(dictionary, embed_dim):
            num_embeddings = len(dictionary)
            padding_idx = dictionary.pad()
            return Embedding(num_embeddings, embed_dim, padding_idx)

        if args.share_all_embeddings:
            if src_dict != tgt_dict:
                raise ValueError('--share-all-embeddings requires a joined dictionary')
            encoder_embed_tokens = build_embedding(src_dict, args.encoder_embed_dim)
            decoder_embed_tokens = encoder_embed_tokens
        else:
            encoder_embed_tokens = build_embedding(src_dict, args.encoder_embed_dim)
            decoder_embed_tokens = build_embedding(tgt_dict, args.decoder_embed_dim)

        encoder = CopyAugmentedTransformerEncoder(args, src_dict, encoder_embed_tokens)
        decoder = CopyAugmentedTransformerDecoder(args, tgt_dict, decoder_embed_tokens)
        model = CopyAugmentedTransformerModel(encoder, decoder)

        if args.pretrained_model:
            states = torch.load(args.pretrained_model, map_location='cpu')['model']
            model.load_state_dict(states, strict=False)
            print('| loaded pre-trained parameters from {}'.format(args.pretrained_model))
        return model


class CopyAugmentedTransformerEncoder(FairseqEncoder):
    def __init__(self, args, dictionary, embed_tokens, left_pad=True):
        super().__init__(dictionary)
        self.dropout = args.dropout

        embed_dim = embed_tokens.embedding_dim
        self.padding_idx = embed_tokens.padding_idx
        self.max_source_positions = args.max_source_positions

        self.embed_tokens = embed_tokens
        self.embed_scale = math.sqrt(embed_dim)
        self.embed_positions = SinusoidalPositionalEmbedding(
            embed_dim, self.padding_idx, left_pad=left_pad,
            init_size=self.max_source_positions + self.padding_idx + 1,
        )

        self.layers = nn.ModuleList([])
        self.layers.extend([
            TransformerEncoderLayer(args)
            for i in range(args.encoder_layers)
        ])
        # auxiliary token-level labelling head (is this source token changed?)
        self.label_proj = nn.Linear(embed_dim, 2)
        self.normalize = args.encoder_normalize_before
        if self.normalize:
            self.layer_norm = LayerNorm(embed_dim)

    def forward(self, src_tokens, src_lengths):
        # embed tokens and positions
        x = self.embed_scale * self.embed_tokens(src_tokens)
        x += self.embed_positions(src_tokens)
        x = F.dropout(x, p=self.dropout, training=self.training)

        # B x T x C -> T x B x C
        x = x.transpose(0, 1)

        # compute padding mask
        encoder_padding_mask = src_tokens.eq(self.padding_idx)
        if not encoder_padding_mask.any():
            encoder_padding_mask = None

        # encoder layers
        for layer in self.layers:
            x = layer(x, encoder_padding_mask)

        if self.normalize:
            x = self.layer_norm(x)

        encoder_label = self.label_proj(x).transpose(0, 1)  # B x T x 2

        return {
            'encoder_out': x,  # T x B x C
            'encoder_padding_mask': encoder_padding_mask,  # B x T
            'encoder_label': encoder_label,
            'src_tokens': src_tokens,
        }

    def reorder_encoder_out(self, encoder_out, new_order):
        if encoder_out['encoder_out'] is not None:
            encoder_out['encoder_out'] = encoder_out['encoder_out'].index_select(1, new_order)
        if encoder_out['encoder_padding_mask'] is not None:
            encoder_out['encoder_padding_mask'] = encoder_out['encoder_padding_mask'].index_select(0, new_order)
        encoder_out['src_tokens'] = encoder_out['src_tokens'].index_select(0, new_order)
        return encoder_out

    def max_positions(self):
        return self.max_source_positions


class CopyAugmentedTransformerDecoder(FairseqIncrementalDecoder):
    def __init__(self, args, dictionary, embed_tokens, left_pad=False):
        super().__init__(dictionary)
        self.dropout = args.dropout
        self.copy_attention = args.copy_attention

        embed_dim = embed_tokens.embedding_dim
        padding_idx = embed_tokens.padding_idx
        self.max_target_positions = args.max_target_positions

        self.embed_tokens = embed_tokens
        self.embed_scale = math.sqrt(embed_dim)
        self.embed_positions = SinusoidalPositionalEmbedding(
            embed_dim, padding_idx, left_pad=left_pad,
            init_size=self.max_target_positions + padding_idx + 1,
        )

        self.layers = nn.ModuleList([])
        self.layers.extend([
            TransformerDecoderLayer(args)
            for _ in range(args.decoder_layers)
        ])

        self.embed_out = nn.Parameter(torch.Tensor(len(dictionary), embed_dim))
        nn.init.normal_(self.embed_out, mean=0, std=embed_dim ** -0.5)

        if self.copy_attention:
            self.copy_attn_layer = MultiheadAttention(
                embed_dim, args.copy_attention_heads,
                dropout=args.copy_attention_dropout,
            )
            self.copy_alpha_linear = nn.Linear(embed_dim, 1)

        self.normalize = args.decoder_normalize_before
        if self.normalize:
            self.layer_norm = LayerNorm(embed_dim)

    def forward(self, prev_output_tokens, encoder_out=None, incremental_state=None):
        positions = self.embed_positions(
            prev_output_tokens,
            incremental_state=incremental_state,
        )

        if incremental_state is not None:
            prev_output_tokens = prev_output_tokens[:, -1:]
            positions = positions[:, -1:]

        x = self.embed_scale * self.embed_tokens(prev_output_tokens)
        x += positions
        x = F.dropout(x, p=self.dropout, training=self.training)

        # B x T x C -> T x B x C
        x = x.transpose(0, 1)
        attn = None
        inner_states = [x]

        for layer in self.layers:
            x, attn = layer(
                x,
                encoder_out['encoder_out'] if encoder_out is not None else None,
                encoder_out['encoder_padding_mask'] if encoder_out is not None else None,
                incremental_state,
                self_attn_mask=self.buffered_future_mask(x) if incremental_state is None else None,
            )
            inner_states.append(x)

        if self.normalize:
            x = self.layer_norm(x)

        copy_x, copy_attn, copy_alpha = None, None, None
        if self.copy_attention:
            copy_x, copy_attn = self.copy_attn_layer(
                query=x,
                key=encoder_out['encoder_out'],
                value=encoder_out['encoder_out'],
                key_padding_mask=encoder_out['encoder_padding_mask'],
                incremental_state=incremental_state,
                static_kv=True,
                need_weights=True,
            )
            copy_alpha = torch.sigmoid(self.copy_alpha_linear(copy_x)).transpose(0, 1)

        # T x B x C -> B x T x C
        x = x.transpose(0, 1)
        x = F.linear(x, self.embed_out)

        return x, {
            'attn': attn,
            'copy_attn': copy_attn,
            'copy_alpha': copy_alpha,
            'src_tokens': encoder_out['src_tokens'],
            'inner_states': inner_states,
        }

    def get_normalized_probs(self, net_output, log_probs, sample):
        logits = net_output[0].float()
        probs = utils.softmax(logits, dim=-1, onnx_trace=False)
        extra = net_output[1]
        if self.copy_attention and extra['copy_attn'] is not None:
            # scatter the copy distribution onto the (extended) vocabulary
            copy_probs = torch.zeros_like(probs)
            src_tokens = extra['src_tokens'].unsqueeze(1).expand(-1, probs.size(1), -1)
            copy_probs.scatter_add_(2, src_tokens, extra['copy_attn'].float())
            alpha = extra['copy_alpha'].float()
            probs = (1 - alpha) * probs + alpha * copy_probs
        if log_probs:
            return torch.log(probs.clamp(min=1e-12))
        return probs

    def max_positions(self):
        return self.max_target_positions

    def buffered_future_mask(self, tensor):
        dim = tensor.size(0)
        if not hasattr(self, '_future_mask') or self._future_mask is None \
                or self._future_mask.device != tensor.device:
            self._future_mask = torch.triu(utils.fill_with_neg_inf(tensor.new(dim, dim)), 1)
        if self._future_mask.size(0) < dim:
            self._future_mask = torch.triu(utils.fill_with_neg_inf(self._future_mask.resize_(dim, dim)), 1)
        return self._future_mask[:dim, :dim]


def Embedding(num_embeddings, embedding_dim, padding_idx):
    m = nn.Embedding(num_embeddings, embedding_dim, padding_idx=padding_idx)
    nn.init.normal_(m.weight, mean=0, std=embedding_dim ** -0.5)
    nn.init.constant_(m.weight[padding_idx], 0)
    return m


def LayerNorm(embedding_dim, eps=1e-5, elementwise_affine=True):
    if torch.cuda.is_available():
        try:
            from apex.normalization import FusedLayerNorm
            return FusedLayerNorm(embedding_dim, eps, elementwise_affine)
        except ImportError:
            pass
    return nn.LayerNorm(embedding_dim, eps, elementwise_affine)


@register_model_architecture('copy_augmented_transformer', 'copy_augmented_transformer')
def base_architecture(args):
    args.encoder_embed_dim = getattr(args, 'encoder_embed_dim', 512)
    args.encoder_ffn_embed_dim = getattr(args, 'encoder_ffn_embed_dim', 2048)
    args.encoder_layers = getattr(args, 'encoder_layers', 6)
    args.encoder_attention_heads = getattr(args, 'encoder_attention_heads', 8)
    args.encoder_normalize_before = getattr(args, 'encoder_normalize_before', False)
    args.decoder_embed_dim = getattr(args, 'decoder_embed_dim', args.encoder_embed_dim)
    args.decoder_ffn_embed_dim = getattr(args, 'decoder_ffn_embed_dim', args.encoder_ffn_embed_dim)
    args.decoder_layers = getattr(args, 'decoder_layers', 6)
    args.decoder_attention_heads = getattr(args, 'decoder_attention_heads', 8)
    args.decoder_normalize_before = getattr(args, 'decoder_normalize_before', False)
    args.attention_dropout = getattr(args, 'attention_dropout', 0.)
    args.relu_dropout = getattr(args, 'relu_dropout', 0.)
    args.dropout = getattr(args, 'dropout', 0.1)
    args.copy_attention_heads = getattr(args, 'copy_attention_heads', 1)
    args.copy_attention_dropout = getattr(args, 'copy_attention_dropout', 0.)
    args.share_all_embeddings = getattr(args, 'share_all_embeddings', False)
    args.positive_label_weight = getattr(args, 'positive_label_weight', 1.0)
