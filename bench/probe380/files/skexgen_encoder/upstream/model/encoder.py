import torch
import torch.nn as nn
import torch.nn.functional as F
import numpy as np
from .layers.transformer import *
from .layers.improved_transformer import *
from .network import *
from config import *


class VectorQuantizerEMA(nn.Module):
    """Exponential-moving-average codebook (van den Oord et al.) with dead-code re-initialisation."""

    def __init__(self, num_embeddings, embedding_dim, commitment_cost=0.25, decay=0.99, epsilon=1e-5):
        super(VectorQuantizerEMA, self).__init__()
        self._embedding_dim = embedding_dim
        self._num_embeddings = num_embeddings

        self.codebook = nn.Embedding(self._num_embeddings, self._embedding_dim)
        self.codebook.weight.data.normal_()
        self._commitment_cost = commitment_cost

        self.register_buffer('_ema_cluster_size', torch.zeros(num_embeddings))
        self._ema_w = nn.Parameter(torch.Tensor(num_embeddings, self._embedding_dim))
        self._ema_w.data.normal_()

        self._decay = decay
        self._epsilon = epsilon

    def update_codebook(self, code_selection):
        """re-initialise unused codes with random encoder outputs seen during the last epoch"""
        code_count = torch.bincount(code_selection.flatten(), minlength=self._num_embeddings)
        dead = torch.where(code_count == 0)[0]
        if len(dead) == 0:
            return
        alive = torch.where(code_count > 0)[0]
        pick = alive[torch.randint(len(alive), (len(dead),), device=alive.device)]
        noise = 0.01 * torch.randn(len(dead), self._embedding_dim, device=self.codebook.weight.device)
        self.codebook.weight.data[dead] = self.codebook.weight.data[pick] + noise
        self._ema_w.data[dead] = self.codebook.weight.data[dead].clone()
        self._ema_cluster_size[dead] = 1.0
        print(f'{len(dead)} dead codes re-initialised')

    def forward(self, inputs, epoch=0):
        # convert inputs from BCHW -> BHWC
        input_shape = inputs.shape
        flat_input = inputs.reshape(-1, self._embedding_dim)

        # Calculate distances
        distances = (torch.sum(flat_input ** 2, dim=1, keepdim=True)
                     + torch.sum(self.codebook.weight ** 2, dim=1)
                     - 2 * torch.matmul(flat_input, self.codebook.weight.t()))

        # Encoding
        encoding_indices = torch.argmin(distances, dim=1).unsqueeze(1)
        encodings = torch.zeros(encoding_indices.shape[0], self._num_embeddings, device=inputs.device)
        encodings.scatter_(1, encoding_indices, 1)

        # Quantize and unflatten
        quantized = torch.matmul(encodings, self.codebook.weight).view(input_shape)

        # Use EMA to update the embedding vectors
        if self.training:
            self._ema_cluster_size = self._ema_cluster_size * self._decay + \
                                     (1 - self._decay) * torch.sum(encodings, 0)

            # Laplace smoothing of the cluster size
            n = torch.sum(self._ema_cluster_size.data)
            self._ema_cluster_size = (
                (self._ema_cluster_size + self._epsilon)
                / (n + self._num_embeddings * self._epsilon) * n)

            dw = torch.matmul(encodings.t(), flat_input)
            self._ema_w = nn.Parameter(self._ema_w * self._decay + (1 - self._decay) * dw)

            self.codebook.weight = nn.Parameter(self._ema_w / self._ema_cluster_size.unsqueeze(1))

        # Loss
        e_latent_loss = F.mse_loss(quantized.detach(), inputs)
        loss = self._commitment_cost * e_latent_loss

        # Straight Through Estimator
        quantized = inputs + (quantized - inputs).detach()
        selection = encoding_indices.view(input_shape[0], input_shape[1])
        return quantized, loss, selection


class SketchEncoder(nn.Module):
    """ Sketch encoder: pixel + xy tokens -> CODE_LEN discrete codes """

    def __init__(self):
        super(SketchEncoder, self).__init__()
        self.embed_dim = ENCODER_CONFIG['embed_dim']
        self.coord_embed_x = nn.Embedding(2 ** CAD_BIT + SKETCH_PAD, self.embed_dim)
        self.coord_embed_y = nn.Embedding(2 ** CAD_BIT + SKETCH_PAD, self.embed_dim)
        self.pixel_embeds = nn.Embedding(2 ** CAD_BIT * 2 ** CAD_BIT + SKETCH_PAD, self.embed_dim)
        self.pos_embed = PositionalEncoding(max_len=MAX_SKETCH_LEN, d_model=self.embed_dim)
        self.code_embed = nn.Embedding(SKETCH_CODE_LEN, self.embed_dim)
        layers = TransformerEncoderLayerImproved(d_model=self.embed_dim,
                                                 dim_feedforward=ENCODER_CONFIG['hidden_dim'],
                                                 nhead=ENCODER_CONFIG['num_heads'],
                                                 dropout=ENCODER_CONFIG['dropout_rate'])
        self.encoder = TransformerEncoder(layers, ENCODER_CONFIG['num_layers'], LayerNorm(self.embed_dim))
        self.up = nn.Linear(self.embed_dim, self.embed_dim + 1)
        self.vq_encoder = VectorQuantizerEMA(SKETCH_CODE_BOOK, self.embed_dim + 1)

    def forward(self, pixel, coord, mask, epoch):
        bs, seqlen, device = pixel.shape[0], pixel.shape[1], pixel.device
        code_index = torch.arange(SKETCH_CODE_LEN, device=device).unsqueeze(0).repeat(bs, 1)
        code_embed = self.code_embed(code_index)

        coord_embed = self.coord_embed_x(coord[..., 0]) + self.coord_embed_y(coord[..., 1])
        pixel_embed = self.pixel_embeds(pixel)
        embed_inputs = pixel_embed + coord_embed
        input_embeds = torch.cat([code_embed, embed_inputs], 1).transpose(0, 1)
        encoder_input = self.pos_embed(input_embeds)

        code_mask = torch.zeros(bs, SKETCH_CODE_LEN, dtype=torch.bool, device=device)
        mask = torch.cat([code_mask, mask], 1)
        outputs = self.encoder(src=encoder_input, src_key_padding_mask=mask)
        code_out = self.up(outputs[:SKETCH_CODE_LEN].transpose(0, 1))

        quantized, vq_loss, selection = self.vq_encoder(code_out, epoch)
        return quantized, vq_loss, selection, code_out


class ExtEncoder(nn.Module):
    """ Extrude encoder """

    def __init__(self):
        super(ExtEncoder, self).__init__()
        self.embed_dim = ENCODER_CONFIG['embed_dim']
        self.ext_embed = nn.Embedding(2 ** CAD_BIT + EXT_PAD, self.embed_dim)
        self.pos_embed = PositionalEncoding(max_len=MAX_EXT, d_model=self.embed_dim)
        self.code_embed = nn.Embedding(EXT_CODE_LEN, self.embed_dim)
        layers = TransformerEncoderLayerImproved(d_model=self.embed_dim,
                                                 dim_feedforward=ENCODER_CONFIG['hidden_dim'],
                                                 nhead=ENCODER_CONFIG['num_heads'],
                                                 dropout=ENCODER_CONFIG['dropout_rate'])
        self.encoder = TransformerEncoder(layers, ENCODER_CONFIG['num_layers'], LayerNorm(self.embed_dim))
        self.up = nn.Linear(self.embed_dim, self.embed_dim + 1)
        self.vq_encoder = VectorQuantizerEMA(EXT_CODE_BOOK, self.embed_dim + 1)

    def forward(self, ext_seq, mask, epoch):
        bs, device = ext_seq.shape[0], ext_seq.device
        code_index = torch.arange(EXT_CODE_LEN, device=device).unsqueeze(0).repeat(bs, 1)
        input_embeds = torch.cat([self.code_embed(code_index), self.ext_embed(ext_seq)], 1).transpose(0, 1)
        encoder_input = self.pos_embed(input_embeds)
        code_mask = torch.zeros(bs, EXT_CODE_LEN, dtype=torch.bool, device=device)
        outputs = self.encoder(src=encoder_input, src_key_padding_mask=torch.cat([code_mask, mask], 1))
        code_out = self.up(outputs[:EXT_CODE_LEN].transpose(0, 1))
        quantized, vq_loss, selection = self.vq_encoder(code_out, epoch)
        return quantized, vq_loss, selection, code_out
