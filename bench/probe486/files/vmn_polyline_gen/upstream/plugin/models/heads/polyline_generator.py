import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from mmdet.models import HEADS

from .detgen_utils.causal_trans import (CausalTransformerDecoder,
                                        CausalTransformerDecoderLayer)
from .detgen_utils.utils import (dequantize_verts, generate_square_subsequent_mask,
                                 quantize_verts, top_k_logits, top_p_logits)


@HEADS.register_module(force=True)
class PolylineGenerator(nn.Module):
    """Autoregressive generative model of n-gon meshes.

    Operates on sets of input vertices as well as flattened face sequences with
    new face and stopping tokens:

    [f_0^0, f_0^1, f_0^2, NEW, f_1^0, f_1^1, ..., STOP]

    Input vertices are encoded using a Transformer encoder.

    Input face sequences are embedded and tagged with learned position indicators,
    as well as their corresponding vertex embeddings. A transformer decoder
    outputs a pointer which is compared to each vertex embedding to obtain a
    distribution over vertex indices.
    """

    def __init__(self,
                 in_channels,
                 encoder_config,
                 decoder_config,
                 class_conditional=True,
                 num_classes=55,
                 decoder_cross_attention=True,
                 use_discrete_vertex_embeddings=True,
                 canvas_size=(400, 200),
                 max_seq_length=500,
                 name='gen_model'):
        super(PolylineGenerator, self).__init__()
        self.embedding_dim = decoder_config['layer_config']['d_model']
        self.class_conditional = class_conditional
        self.num_classes = num_classes
        self.max_seq_length = max_seq_length
        self.decoder_cross_attention = decoder_cross_attention
        self.use_discrete_vertex_embeddings = use_discrete_vertex_embeddings
        self.fp16_enabled = False

        self.register_buffer('canvas_size', torch.tensor(canvas_size))
        self.coord_dim = 2

        self.kp_coord_embed = nn.Embedding(
            max(canvas_size)+1, self.embedding_dim)
        self.label_embed = nn.Embedding(self.num_classes, self.embedding_dim)

        self.input_proj = nn.Conv2d(
            in_channels, self.embedding_dim, kernel_size=1)

        # initialize the verteices embedding
        self.coord_embed = nn.Embedding(self.coord_dim, self.embedding_dim)
        self.pos_embeddings = nn.Embedding(
            self.max_seq_length, self.embedding_dim)
        self.vertex_embed = nn.Embedding(
            max(canvas_size)+1, self.embedding_dim)

        decoder_layer = CausalTransformerDecoderLayer(
            **decoder_config['layer_config'])
        self.decoder = CausalTransformerDecoder(
            decoder_layer, decoder_config['num_layers'],
            norm=nn.LayerNorm(self.embedding_dim))

        self.output_proj = nn.Linear(self.embedding_dim, max(canvas_size)+2)

        self.init_weights()

    def init_weights(self):
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
        nn.init.normal_(self.pos_embeddings.weight, std=0.02)

    def _embed_kps(self, bbox):
        '''
            bbox: B, num_kp, coord_dim
        '''
        bbox = bbox.long()
        coord_embeddings = self.kp_coord_embed(bbox)
        # B, num_kp*coord_dim, embedding_dim
        coord_embeddings = coord_embeddings.flatten(1, 2)
        return coord_embeddings

    def _prepare_context(self, batch, context):
        """Prepare class label and vertex context."""

        global_context_embedding = None
        if self.class_conditional:
            global_context_embedding = self.label_embed(batch['lines_cls'])

        bbox_embeddings = self._embed_kps(batch['bbox_flat'])
        if global_context_embedding is not None:
            global_context_embedding = torch.cat(
                [global_context_embedding[:, None], bbox_embeddings], dim=1)
        else:
            global_context_embedding = bbox_embeddings

        seq_context_embedding = None
        if self.decoder_cross_attention:
            bev = self.input_proj(context['bev_embeddings'])
            seq_context_embedding = bev.flatten(2).permute(0, 2, 1)
            seq_context_embedding = seq_context_embedding[batch['lines_bs_idx']]

        return global_context_embedding, seq_context_embedding

    def _embed_inputs(self, seqs, global_context_embedding=None):
        """Embeds face sequences and adds within and between face positions.
        Args:
            seqs: B, seqlen=vertex_len*coord_dim
        """
        seq_len = seqs.shape[1]

        coord_embeddings = self.coord_embed.weight.repeat(
            (seq_len + self.coord_dim - 1) // self.coord_dim, 1)[:seq_len]
        pos_embeddings = self.pos_embeddings.weight[:seq_len]
        vert_embeddings = self.vertex_embed(seqs)

        embeddings = vert_embeddings + coord_embeddings[None] + pos_embeddings[None]

        if global_context_embedding is not None:
            embeddings = torch.cat([global_context_embedding, embeddings], dim=1)

        return embeddings

    def forward(self, batch, context, is_training=True, **kwargs):
        global_context, seq_context = self._prepare_context(batch, context)

        polylines = batch['polylines'].long()
        polylines_in = polylines[:, :-1]
        decoder_inputs = self._embed_inputs(polylines_in, global_context)

        seq_len = decoder_inputs.shape[1]
        causal_mask = generate_square_subsequent_mask(seq_len, device=decoder_inputs.device)

        outputs = self.decoder(
            decoder_inputs.transpose(0, 1),
            memory=None if seq_context is None else seq_context.transpose(0, 1),
            tgt_mask=causal_mask).transpose(0, 1)

        # drop the context tokens
        ctx_len = global_context.shape[1]
        logits = self.output_proj(outputs[:, ctx_len - 1:])
        return logits

    def loss(self, batch, logits):
        targets = batch['polylines'].long()
        weights = batch['polyline_weights']
        masks = batch['polyline_masks']
        logits = logits[:, :targets.shape[1]]

        loss = F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction='none')
        loss = (loss * weights.reshape(-1) * masks.reshape(-1)).sum() / masks.sum().clamp(min=1)
        return dict(seq=loss)

    @torch.no_grad()
    def inference(self, batch, context, max_sample_length=None, top_k=0, top_p=0.9,
                  temperature=1.0, only_return_complete=False):
        if max_sample_length is None:
            max_sample_length = self.max_seq_length
        global_context, seq_context = self._prepare_context(batch, context)
        num_samples = global_context.shape[0]
        device = global_context.device

        samples = torch.zeros((num_samples, 0), dtype=torch.long, device=device)
        finished = torch.zeros(num_samples, dtype=torch.bool, device=device)

        for step in range(max_sample_length):
            decoder_inputs = self._embed_inputs(samples, global_context)
            seq_len = decoder_inputs.shape[1]
            causal_mask = generate_square_subsequent_mask(seq_len, device=device)
            outputs = self.decoder(
                decoder_inputs.transpose(0, 1),
                memory=None if seq_context is None else seq_context.transpose(0, 1),
                tgt_mask=causal_mask).transpose(0, 1)
            logits = self.output_proj(outputs[:, -1]) / temperature

            logits = top_k_logits(logits, top_k)
            logits = top_p_logits(logits, top_p)
            next_token = torch.distributions.Categorical(logits=logits).sample()
            next_token = torch.where(finished, torch.zeros_like(next_token), next_token)
            samples = torch.cat([samples, next_token[:, None]], dim=1)

            finished = finished | (next_token == 0)
            if finished.all():
                break

        lines = dequantize_verts(samples[:, :-1], self.canvas_size)
        return dict(lines=lines, finished=finished)
