import torch
import torch.nn as nn
import torch.nn.functional as F
from functools import partial

from networks.layer import Block, DecoderBlock


def _no_grad_trunc_normal_(tensor, mean, std, a, b):
    def norm_cdf(x):
        return (1. + torch.erf(x / 2.0 ** 0.5)) / 2.

    with torch.no_grad():
        l = norm_cdf((a - mean) / std)
        u = norm_cdf((b - mean) / std)
        tensor.uniform_(2 * l - 1, 2 * u - 1)
        tensor.erfinv_()
        tensor.mul_(std * (2. ** 0.5))
        tensor.add_(mean)
        tensor.clamp_(min=a, max=b)
        return tensor


def trunc_normal_(tensor, mean=0., std=1., a=-2., b=2.):
    return _no_grad_trunc_normal_(tensor, mean, std, a, b)


def get_pad_mask(seq, pad_idx=0):
    if seq.dim() != 2:
        raise ValueError("<seq> has to be a 2-dimensional tensor!")
    if not isinstance(pad_idx, int):
        raise TypeError("<pad_index> has to be an int!")
    return (seq != pad_idx).unsqueeze(1)  # returns shape [batch_size, 1, seq_len]


def get_subsequent_mask(seq):
    """ For masking out the subsequent info. """
    sz_b, len_s = seq.size()[:2]
    subsequent_mask = (1 - torch.triu(torch.ones((1, len_s, len_s), device=seq.device), diagonal=1)).bool()
    return subsequent_mask


class Encoder(nn.Module):
    def __init__(self, num_patches=5, embed_dim=512, depth=6, num_heads=8, mlp_ratio=4.,
                 qkv_bias=False, qk_scale=None, drop_rate=0., attn_drop_rate=0.,
                 drop_path_rate=0.1, norm_layer=nn.LayerNorm, dropout=0.):
        super().__init__()
        self.pos_embed = nn.Parameter(torch.zeros(1, num_patches, embed_dim))
        self.time_embed = nn.Parameter(torch.zeros(1, num_patches, embed_dim))
        self.pos_drop = nn.Dropout(p=drop_rate)
        self.encoder_dropout = nn.Dropout(p=dropout)
        dpr = [x.item() for x in torch.linspace(0, drop_path_rate, depth)]
        self.encoder_blocks = nn.ModuleList([
            Block(dim=embed_dim, num_heads=num_heads, mlp_ratio=mlp_ratio, qkv_bias=qkv_bias,
                  qk_scale=qk_scale, drop=drop_rate, attn_drop=attn_drop_rate, drop_path=dpr[i],
                  norm_layer=norm_layer)
            for i in range(depth)])
        self.norm = norm_layer(embed_dim)

        trunc_normal_(self.pos_embed, std=.02)
        trunc_normal_(self.time_embed, std=.02)
        self.apply(self._init_weights)

    def _init_weights(self, m):
        if isinstance(m, nn.Linear):
            trunc_normal_(m.weight, std=.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.constant_(m.bias, 0)
        elif isinstance(m, nn.LayerNorm):
            nn.init.constant_(m.bias, 0)
            nn.init.constant_(m.weight, 1.0)

    def forward(self, x, mask=None):
        B, T, N = x.shape[:3]
        x = torch.flatten(x, start_dim=1, end_dim=2)  # B, T*N, C
        pos_embed = self.pos_embed.repeat(1, T, 1)
        time_embed = self.time_embed.repeat_interleave(N, dim=1)[:, :x.shape[1]]
        x = x + pos_embed[:, :x.shape[1]] + time_embed
        x = self.pos_drop(x)

        for blk in self.encoder_blocks:
            x = blk(x, mask=mask)
        x = self.norm(x)
        x = self.encoder_dropout(x)
        return x


class Decoder(nn.Module):
    def __init__(self, in_features, embed_dim=512, depth=6, num_heads=8, mlp_ratio=4.,
                 qkv_bias=False, qk_scale=None, drop_rate=0., attn_drop_rate=0.,
                 drop_path_rate=0.1, norm_layer=nn.LayerNorm, dropout=0., time_embed_type=None,
                 num_frames=None):
        super().__init__()
        self.trg_embedding = nn.Linear(in_features, embed_dim)

        self.time_embed_type = time_embed_type
        if not time_embed_type == "sin":
            self.time_embed = nn.Parameter(torch.zeros(1, num_frames, embed_dim))
            trunc_normal_(self.time_embed, std=.02)
        self.time_drop = nn.Dropout(p=drop_rate)

        dpr = [x.item() for x in torch.linspace(0, drop_path_rate, depth)]
        self.decoder_blocks = nn.ModuleList([
            DecoderBlock(dim=embed_dim, num_heads=num_heads, mlp_ratio=mlp_ratio, qkv_bias=qkv_bias,
                         qk_scale=qk_scale, drop=drop_rate, attn_drop=attn_drop_rate,
                         drop_path=dpr[i], norm_layer=norm_layer)
            for i in range(depth)])
        self.norm = norm_layer(embed_dim)
        self.decoder_dropout = nn.Dropout(p=dropout)
        self.apply(self._init_weights)

    def _init_weights(self, m):
        if isinstance(m, nn.Linear):
            trunc_normal_(m.weight, std=.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.constant_(m.bias, 0)
        elif isinstance(m, nn.LayerNorm):
            nn.init.constant_(m.bias, 0)
            nn.init.constant_(m.weight, 1.0)

    def forward(self, trg, memory, memory_mask=None, trg_mask=None):
        trg = self.trg_embedding(trg)
        trg = trg + self.time_embed[:, :trg.shape[1]]
        trg = self.time_drop(trg)

        for blk in self.decoder_blocks:
            trg = blk(trg, memory, memory_mask=memory_mask, trg_mask=trg_mask)

        trg = self.norm(trg)
        trg = self.decoder_dropout(trg)
        return trg


class EncoderDecoder(nn.Module):
    def __init__(self, num_patches, embed_dim, coord_dim, encoder_depth=6, decoder_depth=4,
                 num_heads=8, mlp_ratio=4., qkv_bias=False, drop_rate=0., attn_drop_rate=0.,
                 drop_path_rate=0.1, time_embed_type=None, num_frames_output=None):
        super().__init__()
        norm_layer = partial(nn.LayerNorm, eps=1e-6)
        self.encoder = Encoder(num_patches=num_patches, embed_dim=embed_dim, depth=encoder_depth,
                               num_heads=num_heads, mlp_ratio=mlp_ratio, qkv_bias=qkv_bias,
                               drop_rate=drop_rate, attn_drop_rate=attn_drop_rate,
                               drop_path_rate=drop_path_rate, norm_layer=norm_layer)
        self.decoder = Decoder(in_features=coord_dim, embed_dim=embed_dim, depth=decoder_depth,
                               num_heads=num_heads, mlp_ratio=mlp_ratio, qkv_bias=qkv_bias,
                               drop_rate=drop_rate, attn_drop_rate=attn_drop_rate,
                               drop_path_rate=drop_path_rate, norm_layer=norm_layer,
                               time_embed_type=time_embed_type, num_frames=num_frames_output)

    def encode(self, feat, mask=None):
        return self.encoder(feat, mask)

    def decode(self, trg, memory, memory_mask=None, trg_mask=None):
        return self.decoder(trg, memory, memory_mask=memory_mask, trg_mask=trg_mask)

    def forward(self, feat, trg, feat_mask=None, trg_mask=None):
        memory = self.encode(feat, feat_mask)
        output = self.decode(trg, memory, memory_mask=feat_mask, trg_mask=trg_mask)
        return output
