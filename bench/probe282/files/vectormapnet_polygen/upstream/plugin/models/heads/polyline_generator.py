import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions.categorical import Categorical

from mmcv.cnn import Linear, build_activation_layer
from mmcv.runner import force_fp32
from mmdet.models import HEADS, build_loss

from .detgen_utils.causal_trans import (CausalTransformerDecoder,
                                        CausalTransformerDecoderLayer)
from .detgen_utils.utils import (dequantize_verts, generate_square_subsequent_mask,
                                 quantize_verts, top_k_logits, top_p_logits)


def causal_mask(sz):
    """Upper triangular -inf mask for the autoregressive decoder.

    NOTE: the mask is created directly on the GPU to avoid a host->device
    copy per decoding step (this is called inside the sampling loop).
    """
    mask = torch.triu(torch.ones(sz, sz, device='cuda'), diagonal=1)
    return mask.masked_fill(mask == 1, float('-inf'))


@HEADS.register_module(force=True)
class PolylineGenerator(nn.Module):
    """Autoregressive generator for polyline vertices (VectorMapNet).

    The generator is conditioned on the keypoint / class embedding predicted
    by the detection head and emits the (quantized) x, y coordinates of every
    vertex one token at a time, ending with a stop token.
    """

    def __init__(self,
                 in_channels,
                 encoder_config=None,
                 decoder_config=None,
                 class_conditional=True,
                 num_classes=55,
                 canvas_size=(400, 200),
                 max_seq_length=500,
                 decoder_cross_attention=False,
                 use_discrete_vertex_embeddings=True,
                 coord_dim=2,
                 kp_coord_dim=2,
                 condition_points_num=3,
                 loss_weight=dict(label=1.0, vert=1.0),
                 **kwargs):
        super().__init__()

        self.embedding_dim = decoder_config['layer_config']['d_model']
        self.class_conditional = class_conditional
        self.num_classes = num_classes
        self.max_seq_length = max_seq_length
        self.decoder_cross_attention = decoder_cross_attention
        self.use_discrete_vertex_embeddings = use_discrete_vertex_embeddings
        self.coord_dim = coord_dim
        self.kp_coord_dim = kp_coord_dim
        self.condition_points_num = condition_points_num
        self.register_buffer('canvas_size', torch.tensor(canvas_size))
        self.loss_weight = loss_weight
        self.fp16_enabled = False

        self._prepare_context_embeddings()

        decoder_layer = CausalTransformerDecoderLayer(**decoder_config['layer_config'])
        self.decoder = CausalTransformerDecoder(decoder_layer, decoder_config['num_layers'],
                                                norm=nn.LayerNorm(self.embedding_dim))

        # vertex embeddings
        self.coord_embeddings = nn.Embedding(self.coord_dim, self.embedding_dim)
        self.pos_embeddings = nn.Embedding(self.max_seq_length, self.embedding_dim)
        if self.use_discrete_vertex_embeddings:
            self.vertex_embeddings = nn.Embedding(max(canvas_size) + 1, self.embedding_dim)
        else:
            self.vertex_embeddings = nn.Linear(1, self.embedding_dim)
        self.stop_embedding = nn.Parameter(torch.zeros(1, self.embedding_dim))

        # output projection: (canvas) coordinate logits + stop token
        self.vertex_head = nn.Linear(self.embedding_dim, max(canvas_size) + 2)
        self.init_weights()

    def _prepare_context_embeddings(self):
        if self.class_conditional:
            self.label_embed = nn.Embedding(self.num_classes, self.embedding_dim)
        self.kp_embed = nn.Linear(self.kp_coord_dim, self.embedding_dim)

    def init_weights(self):
        for p in self.decoder.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
        nn.init.normal_(self.stop_embedding, std=0.02)

    def _embed_inputs(self, seqs, context_embedding):
        """Embeds flat vertex sequences and prepends the context embedding.

        Args:
            seqs: [B, L] quantized coordinates, flattened x0 y0 x1 y1 ...
            context_embedding: [B, C, E] condition tokens.
        Returns:
            [B, C + L, E]
        """
        B, seq_len = seqs.shape[:2]
        coord_idx = torch.arange(seq_len, device=seqs.device) % self.coord_dim
        pos_idx = torch.div(torch.arange(seq_len, device=seqs.device), self.coord_dim,
                            rounding_mode='floor')
        coord_embeddings = self.coord_embeddings(coord_idx)
        pos_embeddings = self.pos_embeddings(pos_idx)

        if self.use_discrete_vertex_embeddings:
            vert_embeddings = self.vertex_embeddings(seqs)
        else:
            vert_embeddings = self.vertex_embeddings(seqs[..., None].float())

        embeddings = vert_embeddings + (coord_embeddings + pos_embeddings)[None]
        embeddings = torch.cat([context_embedding, embeddings], dim=1)
        return embeddings

    def _create_context(self, batch):
        """Condition tokens: class label + the detected keypoints."""
        kps = batch['kps']  # B, K, kp_dim (normalized)
        context = self.kp_embed(kps)
        if self.class_conditional:
            label_emb = self.label_embed(batch['labels'])[:, None]
            context = torch.cat([label_emb, context], dim=1)
        return context

    def forward_train(self, batch, context=None, **kwargs):
        """Teacher-forced training pass.

        Returns:
            dict of losses.
        """
        seqs = batch['polylines']  # B, L
        seq_masks = batch['polyline_masks']  # B, L
        context_embedding = self._create_context(batch)
        num_ctx = context_embedding.shape[1]

        embeddings = self._embed_inputs(seqs[:, :-1], context_embedding)
        tgt_len = embeddings.shape[1]
        tgt_mask = generate_square_subsequent_mask(tgt_len)

        # the decoder is kept in fp32: the vertex softmax over the whole
        # canvas is numerically sensitive
        with torch.cuda.amp.autocast(enabled=False):
            hidden = self.decoder(embeddings.float().transpose(0, 1),
                                  memory=context.transpose(0, 1) if context is not None else None,
                                  tgt_mask=tgt_mask.float())
            hidden = hidden.transpose(0, 1)[:, num_ctx - 1:]
            logits = self.vertex_head(hidden)

        loss_vert = F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), seqs.reshape(-1), reduction='none')
        loss_vert = (loss_vert * seq_masks.reshape(-1).float()).sum() / seq_masks.float().sum().clamp(min=1.0)

        return dict(vert=loss_vert * self.loss_weight['vert'])

    @torch.no_grad()
    def inference(self, batch, context=None, max_sample_length=None,
                  temperature=1.0, top_k=0, top_p=0.95, only_return_complete=False):
        """Autoregressive sampling of polyline vertices.

        Returns:
            dict with the sampled 'polylines' [B, L] and 'polyline_masks'.
        """
        context_embedding = self._create_context(batch)
        B = context_embedding.shape[0]
        num_ctx = context_embedding.shape[1]
        max_sample_length = max_sample_length or self.max_seq_length
        device = context_embedding.device

        samples = torch.zeros([B, 0], dtype=torch.long, device=device)
        stopped = torch.zeros([B], dtype=torch.bool, device=device)
        stop_token = max(self.canvas_size.tolist()) + 1

        for step in range(max_sample_length):
            embeddings = self._embed_inputs(samples, context_embedding)
            tgt_mask = causal_mask(embeddings.shape[1])
            hidden = self.decoder(embeddings.transpose(0, 1),
                                  memory=context.transpose(0, 1) if context is not None else None,
                                  tgt_mask=tgt_mask)
            next_logits = self.vertex_head(hidden[-1])[:, None] / temperature
            next_logits = top_k_logits(next_logits, top_k)
            next_logits = top_p_logits(next_logits, top_p)
            cat_dist = Categorical(logits=next_logits[:, 0])
            next_sample = cat_dist.sample()
            next_sample = torch.where(stopped, torch.full_like(next_sample, stop_token), next_sample)
            samples = torch.cat([samples, next_sample[:, None]], dim=1)
            stopped = stopped | (next_sample == stop_token)
            if stopped.all():
                break

        masks = samples != stop_token
        # cumulative product keeps everything before the first stop token
        masks = torch.cumprod(masks.long(), dim=1).bool()
        samples = samples * masks

        if only_return_complete:
            complete = (~masks).any(dim=1)
            samples = samples[complete]
            masks = masks[complete]

        return dict(polylines=samples, polyline_masks=masks)

    @force_fp32(apply_to=('polylines',))
    def post_process(self, polylines, polyline_masks, labels, scores, tokens=None):
        """Convert sampled token sequences back to metric polylines."""
        results = []
        for i in range(polylines.shape[0]):
            seq = polylines[i][polyline_masks[i]]
            seq = seq[: (seq.shape[0] // self.coord_dim) * self.coord_dim]
            verts = seq.view(-1, self.coord_dim)
            verts = dequantize_verts(verts, self.canvas_size)
            results.append(dict(
                vectors=verts.cpu().numpy(),
                label=int(labels[i]),
                score=float(scores[i]),
            ))
        return results

    def forward(self, batch, context=None, return_loss=True, **kwargs):
        if return_loss:
            return self.forward_train(batch, context, **kwargs)
        return self.inference(batch, context, **kwargs)
