# -----------------------------------------------------
# Copyright (c) THL A29 Limited, a Tencent company. All rights reserved.
# -----------------------------------------------------

import torch
import torch.nn as nn
from nncore.nn import MODELS, build_linear_modules, build_model, build_norm_layer


@MODELS.register()
class UMT(nn.Module):

    def __init__(self,
                 video_enc=None,
                 audio_enc=None,
                 cross_enc=None,
                 query_gen=None,
                 query_dec=None,
                 pred_head=None):
        super(UMT, self).__init__()

        cnt = sum(e is None for e in (video_enc, audio_enc, cross_enc))
        assert not cnt % 2 and ((query_gen is None) == (query_dec is None))

        self.video_enc = build_model(video_enc)
        self.audio_enc = build_model(audio_enc)
        self.cross_enc = build_model(cross_enc)
        self.query_gen = build_model(query_gen)
        self.query_dec = build_model(query_dec)
        self.pred_head = build_model(pred_head, bundler='modulelist')

    def forward(self, data, mode):
        mask = torch.where(data['saliency'] >= 0, 1, 0)

        if self.video_enc is not None:
            d_emb = r_emb = v_emb = self.video_enc(data['video'], mask=mask)
        else:
            v_emb = data['video']

        if self.audio_enc is not None:
            d_emb = r_emb = a_emb = self.audio_enc(data['audio'], mask=mask)
        else:
            a_emb = data['audio']

        if self.cross_enc is not None:
            d_emb = r_emb = self.cross_enc(v_emb, a_emb, mask=mask)

        if self.query_gen is not None:
            q_emb = self.query_gen(r_emb, data.get('query'))
            d_emb = self.query_dec(q_emb, r_emb)

        output = dict(_avg_factor=mask.size(0))

        for pred_head in self.pred_head:
            output = pred_head(r_emb, d_emb, data, output, mode)

        return output


@MODELS.register()
class UniModalEncoder(nn.Module):

    def __init__(self,
                 dims=None,
                 p=0.5,
                 pos_cfg=None,
                 enc_cfg=None,
                 norm_cfg=None,
                 **kwargs):
        super(UniModalEncoder, self).__init__()

        drop_cfg = dict(type='drop', p=p) if p > 0 else None
        enc_dims = dims[-1] if isinstance(dims, (list, tuple)) else dims

        self.dropout = build_norm_layer(drop_cfg)
        self.mapping = build_linear_modules(dims, **kwargs)
        self.pos_enc = build_model(pos_cfg, enc_dims)
        self.encoder = build_model(enc_cfg, enc_dims, bundler='sequential')
        self.norm = build_norm_layer(norm_cfg, enc_dims)

    def forward(self, x, **kwargs):
        if self.dropout is not None:
            x = self.dropout(x)
        if self.mapping is not None:
            x = self.mapping(x)
        if self.encoder is not None:
            pe = None if self.pos_enc is None else self.pos_enc(x)
            x = self.encoder(x, pe=pe, **kwargs)
        if self.norm is not None:
            x = self.norm(x)
        return x


@MODELS.register()
class CrossModalEncoder(nn.Module):

    def __init__(self,
                 dims=None,
                 fusion_type='sum',
                 pos_cfg=None,
                 enc_cfg=None,
                 norm_cfg=None,
                 **kwargs):
        super(CrossModalEncoder, self).__init__()
        assert fusion_type in ('sum', 'mean', 'concat')

        map_dims = [2 * dims, dims] if fusion_type == 'concat' else None
        self.fusion_type = fusion_type

        self.pos_enc = build_model(pos_cfg, dims)
        self.encoder = build_model(enc_cfg, dims)
        self.mapping = build_linear_modules(map_dims, **kwargs)
        self.norm = build_norm_layer(norm_cfg, dims)

    def forward(self, a, b, **kwargs):
        if self.encoder is not None:
            pe = None if self.pos_enc is None else self.pos_enc(a)
            a, b = self.encoder(a, b, pe=pe, **kwargs)
        if self.fusion_type in ('sum', 'mean'):
            x = (a + b) / ((self.fusion_type == 'mean') + 1)
        else:
            x = torch.cat((a, b), dim=-1)
            x = self.mapping(x)
        if self.norm is not None:
            x = self.norm(x)
        return x


@MODELS.register()
class QueryGenerator(nn.Module):

    def __init__(self, dims=None, p=0.5, enc_cfg=None, **kwargs):
        super(QueryGenerator, self).__init__()

        drop_cfg = dict(type='drop', p=p) if p > 0 else None
        enc_dims = dims[-1] if isinstance(dims, (list, tuple)) else dims

        self.dropout = build_norm_layer(drop_cfg)
        self.mapping = build_linear_modules(dims, **kwargs)
        self.encoder = build_model(enc_cfg, enc_dims)

    def forward(self, x, y=None):
        if y is None or y.size(1) == 0:
            return x.new_zeros(x.size(0), 1, x.size(2))
        if self.dropout is not None:
            y = self.dropout(y)
        if self.mapping is not None:
            y = self.mapping(y)
        if self.encoder is not None:
            y = self.encoder(y, x)
        return y


@MODELS.register()
class QueryDecoder(nn.Module):

    def __init__(self, dims=None, pos_cfg=None, dec_cfg=None, norm_cfg=None):
        super(QueryDecoder, self).__init__()

        self.q_pos_enc = build_model(pos_cfg, dims)
        self.k_pos_enc = build_model(pos_cfg, dims)
        self.decoder = build_model(dec_cfg, dims, bundler='modulelist')
        self.norm = build_norm_layer(norm_cfg, dims)

    def forward(self, x, mem=None, **kwargs):
        if self.decoder is not None:
            q_pe = None if self.q_pos_enc is None else self.q_pos_enc(x)
            k_pe = None if self.k_pos_enc is None else self.k_pos_enc(mem)
            for dec in self.decoder:
                x = dec(x, mem=mem, q_pe=q_pe, k_pe=k_pe, **kwargs)
        if self.norm is not None:
            x = self.norm(x)
        return x
