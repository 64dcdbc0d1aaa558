#!/usr/bin/env python
# -*- coding: utf-8 -*-
"""
UnifiedTransformer (excerpt): embeddings, masks and the discrete latent.
"""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from plato.args import str2bool
from plato.modules.embedder import Embedder
from plato.models.model_base import ModelBase
from plato.modules.transformer_block import TransformerBlock
import plato.modules.functions as FF


class UnifiedTransformer(ModelBase):
    """
    Implement unified transformer.
    """

    @classmethod
    def add_cmdline_argument(cls, group):
        """ Add cmdline argument. """
        group.add_argument("--num_token_embeddings", type=int, default=-1,
                           help="The number of tokens in vocabulary. "
                           "It will be automatically calculated after loading vocabulary.")
        group.add_argument("--num_pos_embeddings", type=int, default=512,
                           help="The maximum number of position.")
        group.add_argument("--num_type_embeddings", type=int, default=2,
                           help="The number of different type of tokens.")
        group.add_argument("--num_turn_embeddings", type=int, default=16,
                           help="The maximum number of turn.")
        group.add_argument("--num_latent", type=int, default=20,
                           help="The number of latent.")
        group.add_argument("--tau", type=float, default=0.67,
                           help="The parameter of gumbel softmax.")
        group.add_argument("--with_bow", type=str2bool, default=True,
                           help="Whether to use BoW loss.")
        group.add_argument("--hidden_dim", type=int, default=768,
                           help="The size of hidden vector in transformer.")
        group.add_argument("--num_heads", type=int, default=12,
                           help="The number of heads in multi head attention.")
        group.add_argument("--lr", type=float, default=5e-5,
                           help="The inital learning rate for Adam.")
        group.add_argument("--weight_decay", type=float, default=0.0,
                           help="The weight decay for Adam.")
        group.add_argument("--max_grad_norm", type=float, default=None,
                           help="The maximum norm of gradient.")
        return group

    def _create_mask(self, input_mask, append_head=False, auto_regressive=False):
        """
        Create attention mask.

        @param : input_mask
        @type : Variable(shape: [batch_size, max_seq_len])

        @param : auto_regressive
        @type : bool
        """
        seq_len = input_mask.shape[1]

        input_mask = input_mask.float()
        mask1 = input_mask.unsqueeze(-1).repeat(1, 1, seq_len)
        mask2 = mask1.permute(0, 2, 1)
        mask = mask1 * mask2

        if append_head:
            mask = torch.cat([mask[:, :1, :], mask], dim=1)
            mask = torch.cat([mask[:, :, :1], mask], dim=2)
            seq_len += 1

        if auto_regressive:
            seq_mask = self.sequence_mask[:seq_len, :seq_len]
            mask = mask * seq_mask

        mask = 1 - mask
        return mask

    def _build_sequence_mask(self, max_len):
        """ Lower-triangular mask, built once and reused. """
        sequence_mask = np.tri(max_len, max_len, dtype="float32")
        sequence_mask = torch.tensor(sequence_mask)
        if self.use_gpu:
            sequence_mask = sequence_mask.cuda()
        return sequence_mask

    def _latent_network(self, post_embed):
        """ Sample a discrete latent with gumbel-softmax (train) or argmax (infer). """
        post_logits = self.post_network(post_embed)
        post_probs = self.softmax(post_logits)
        if self.training:
            z = F.gumbel_softmax(post_logits, self.tau)
        else:
            indices = torch.argmax(post_logits, dim=1)
            z = F.one_hot(indices, num_classes=self.num_latent).float()
        latent_embeddings = self.latent_embeddings
        latent_embed = torch.matmul(z, latent_embeddings)
        return latent_embed, post_probs
