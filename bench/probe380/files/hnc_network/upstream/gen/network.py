import math
import torch
import torch.nn as nn
import torch.nn.functional as F
from config import *


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=512):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = torch.sin(position * div_term)
        pe[:, 0, 1::2] = torch.cos(position * div_term)
        self.register_buffer('pe', pe)

    def forward(self, x):
        """x: [seq_len, batch_size, embedding_dim]"""
        x = x + self.pe[:x.size(0)]
        return self.dropout(x)


class Embedder(nn.Module):
    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        nn.init.kaiming_normal_(self.embed.weight, mode="fan_in")

    def forward(self, x):
        return self.embed(x)


class VectorQuantizer(nn.Module):
    """straight-through VQ with codebook EMA and dead-code restarts (per hierarchy level)"""

    def __init__(self, num_code, code_dim, beta=0.25, decay=0.99):
        super().__init__()
        self.num_code = num_code
        self.code_dim = code_dim
        self.beta = beta
        self.decay = decay
        self.codebook = nn.Embedding(num_code, code_dim)
        self.codebook.weight.data.uniform_(-1.0 / num_code, 1.0 / num_code)
        self.register_buffer('ema_count', torch.ones(num_code))
        self.register_buffer('ema_weight', self.codebook.weight.data.clone())

    def forward(self, z, epoch=0):
        flat = z.reshape(-1, self.code_dim)
        dist = torch.cdist(flat, self.codebook.weight)
        code_idx = dist.argmin(dim=1)
        one_hot = F.one_hot(code_idx, self.num_code).type(flat.dtype)
        z_q = self.codebook(code_idx).view_as(z)

        if self.training:
            with torch.no_grad():
                count = one_hot.sum(0)
                self.ema_count.mul_(self.decay).add_(count, alpha=1 - self.decay)
                self.ema_weight.mul_(self.decay).add_(one_hot.t() @ flat, alpha=1 - self.decay)
                n = self.ema_count.sum()
                count_norm = (self.ema_count + 1e-5) / (n + self.num_code * 1e-5) * n
                self.codebook.weight.data.copy_(self.ema_weight / count_norm.unsqueeze(1))

        commit = F.mse_loss(z, z_q.detach())
        z_q = z + (z_q - z).detach()
        return z_q, self.beta * commit, code_idx.view(z.shape[0], -1)


class _CodeEncoder(nn.Module):
    """shared transformer encoder: parameter tokens -> N learned query codes -> VQ"""

    def __init__(self, vocab, max_len, code_len, num_code, d_model=256, nhead=8, nlayer=4):
        super().__init__()
        self.code_len = code_len
        self.param_embed = Embedder(vocab, d_model)
        self.query_embed = nn.Embedding(code_len, d_model)
        self.pos_embed = PositionalEncoding(d_model, max_len=max_len + code_len)
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=512, dropout=0.1)
        self.encoder = nn.TransformerEncoder(layer, nlayer, nn.LayerNorm(d_model))
        self.vq = VectorQuantizer(num_code, d_model)

    def forward(self, param, seq_mask, epoch=0):
        bs, device = param.shape[0], param.device
        query = self.query_embed.weight.unsqueeze(1).expand(-1, bs, -1)
        tokens = self.param_embed(param).transpose(0, 1)
        x = self.pos_embed(torch.cat([query, tokens], 0))
        mask = torch.cat([torch.zeros(bs, self.code_len, dtype=torch.bool, device=device), seq_mask], 1)
        out = self.encoder(x, src_key_padding_mask=mask)[:self.code_len].transpose(0, 1)
        z_q, vq_loss, selection = self.vq(out, epoch)
        return z_q, vq_loss, selection, out


class _CodeDecoder(nn.Module):
    def __init__(self, vocab, max_len, d_model=256, nhead=8, nlayer=4):
        super().__init__()
        self.param_embed = Embedder(vocab, d_model)
        self.pos_embed = PositionalEncoding(d_model, max_len=max_len + 1)
        layer = nn.TransformerDecoderLayer(d_model, nhead, dim_feedforward=512, dropout=0.1)
        self.decoder = nn.TransformerDecoder(layer, nlayer, nn.LayerNorm(d_model))
        self.fc = nn.Linear(d_model, vocab)

    def forward(self, param, seq_mask, ignore_mask, latent):
        bs, seqlen, device = param.shape[0], param.shape[1], param.device
        start = torch.zeros(1, bs, self.fc.in_features, device=device)
        x = torch.cat([start, self.param_embed(param).transpose(0, 1)], 0)
        x = self.pos_embed(x)
        causal = nn.Transformer.generate_square_subsequent_mask(seqlen + 1).to(device)
        key_mask = torch.cat([torch.zeros(bs, 1, dtype=torch.bool, device=device), seq_mask], 1)
        out = self.decoder(x, latent.transpose(0, 1), tgt_mask=causal, tgt_key_padding_mask=key_mask)
        return self.fc(out).transpose(0, 1)

    @torch.no_grad()
    def sample(self, latent, max_len, top_p=0.9):
        bs, device = latent.shape[0], latent.device
        seq = torch.zeros(bs, 0, dtype=torch.long, device=device)
        done = torch.zeros(bs, dtype=torch.bool, device=device)
        for _ in range(max_len):
            logits = self.forward(seq, torch.zeros_like(seq, dtype=torch.bool), None, latent)[:, -1]
            probs = F.softmax(logits, -1)
            sorted_p, sorted_idx = probs.sort(-1, descending=True)
            cum = sorted_p.cumsum(-1)
            sorted_p[cum - sorted_p > top_p] = 0
            nxt = sorted_idx.gather(-1, torch.multinomial(sorted_p, 1))
            nxt[done] = 0
            seq = torch.cat([seq, nxt], 1)
            done |= nxt.squeeze(1) == 0
            if done.all():
                break
        return seq


class SolidEncoder(_CodeEncoder):
    def __init__(self):
        super().__init__(SOLID_VOCAB, MAX_SOLID, SOLID_CODE_LEN, SOLID_CODEBOOK)


class SolidDecoder(_CodeDecoder):
    def __init__(self):
        super().__init__(SOLID_VOCAB, MAX_SOLID)


class ProfileEncoder(_CodeEncoder):
    def __init__(self):
        super().__init__(PROFILE_VOCAB, MAX_PROFILE, PROFILE_CODE_LEN, PROFILE_CODEBOOK)


class ProfileDecoder(_CodeDecoder):
    def __init__(self):
        super().__init__(PROFILE_VOCAB, MAX_PROFILE)


class LoopEncoder(_CodeEncoder):
    def __init__(self):
        super().__init__(LOOP_VOCAB, MAX_LOOP, LOOP_CODE_LEN, LOOP_CODEBOOK)


class LoopDecoder(_CodeDecoder):
    def __init__(self):
        super().__init__(LOOP_VOCAB, MAX_LOOP)


class CodeTreeGenerator(nn.Module):
    """autoregressive generator over the (solid, profile, loop) code tree"""

    def __init__(self, num_code, max_len, d_model=512, nhead=8, nlayer=8):
        super().__init__()
        self.embed = Embedder(num_code + CODE_PAD, d_model)
        self.pos = PositionalEncoding(d_model, max_len=max_len + 1)
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=1536, dropout=0.1)
        self.net = nn.TransformerEncoder(layer, nlayer, nn.LayerNorm(d_model))
        self.head = nn.Linear(d_model, num_code + CODE_PAD)

    def forward(self, code, mask):
        bs, seqlen, device = code.shape[0], code.shape[1], code.device
        x = torch.cat([torch.zeros(1, bs, self.head.in_features, device=device),
                       self.embed(code).transpose(0, 1)], 0)
        causal = nn.Transformer.generate_square_subsequent_mask(seqlen + 1).to(device)
        key_mask = torch.cat([torch.zeros(bs, 1, dtype=torch.bool, device=device), mask], 1)
        return self.head(self.net(self.pos(x), mask=causal, src_key_padding_mask=key_mask)).transpose(0, 1)
