"""CAMP: Cross-Modal Adaptive Message Passing for text-image retrieval.

Every image is paired with every caption in the batch; the two modalities
exchange messages through cross attention, a gate decides how much of the
message is fused, and a small MLP turns the fused pair into a matching score.
"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


def l2norm(x, dim=-1, eps=1e-8):
    return x / (x.pow(2).sum(dim=dim, keepdim=True).sqrt() + eps)


def get_mask(lengths, max_len=None):
    """(B,) lengths -> (B, L) byte mask, 1 for valid positions."""
    if max_len is None:
        max_len = int(max(lengths))
    mask = torch.cuda.ByteTensor(len(lengths), max_len).fill_(0)
    for i, l in enumerate(lengths):
        mask[i, :int(l)] = 1
    return mask


def qkv_attention(query, key, value, mask=None, dropout=None):
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = F.softmax(scores, dim=-1)
    if dropout is not None:
        p_attn = dropout(p_attn)
    return torch.matmul(p_attn, value), p_attn


class SummaryAttn(nn.Module):
    """Attention pooling of a set of vectors into one."""

    def __init__(self, dim, num_attn, dropout, is_cat=False):
        super(SummaryAttn, self).__init__()
        self.linear = nn.Sequential(
            nn.Linear(dim, dim),
            nn.ReLU(inplace=True),
            nn.Linear(dim, num_attn),
        )
        self.h = num_attn
        self.is_cat = is_cat
        self.attn = None
        self.dropout = nn.Dropout(p=dropout) if dropout > 0 else None

    def forward(self, query, value, mask=None):
        if mask is not None:
            mask = mask.unsqueeze(-2)
        batch = query.size(0)

        weight = self.linear(query)
        if mask is not None:
            weight = weight.masked_fill(mask.transpose(-2, -1) == 0, -1e9)
        self.attn = F.softmax(weight.transpose(-2, -1), dim=-1)
        if self.dropout is not None:
            self.attn = self.dropout(self.attn)
        weighted = torch.matmul(self.attn, value)
        if self.is_cat:
            weighted = weighted.view(batch, -1)
        else:
            weighted = weighted.mean(dim=-2)
        return weighted


class GatedFusion(nn.Module):
    """Cross-modal message passing + gated fusion for every (image, caption) pair."""

    def __init__(self, dim, num_attn, dropout=0.01, reduce_func="self_attn", fusion_func="concat"):
        super(GatedFusion, self).__init__()
        self.dim = dim
        self.h = num_attn

        self.reduce_func = reduce_func
        self.fusion_func = fusion_func

        self.img_key_fc = nn.Linear(dim, dim, bias=False)
        self.txt_key_fc = nn.Linear(dim, dim, bias=False)

        in_dim = dim * 2 if fusion_func == "concat" else dim
        self.fc_1 = nn.Sequential(nn.Linear(in_dim, dim, bias=False), nn.ReLU(inplace=True), nn.Dropout(p=dropout))
        self.fc_2 = nn.Sequential(nn.Linear(in_dim, dim, bias=False), nn.ReLU(inplace=True), nn.Dropout(p=dropout))
        self.fc_out = nn.Sequential(
            nn.Linear(dim, dim),
            nn.ReLU(inplace=True),
            nn.Dropout(p=dropout),
            nn.Linear(dim, 1),
            nn.Sigmoid(),
        )

        if reduce_func == "self_attn":
            self.final_reduce_1 = SummaryAttn(dim, num_attn, dropout)
            self.final_reduce_2 = SummaryAttn(dim, num_attn, dropout)

        self.init_weights()

    def init_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    m.bias.data.zero_()

    def fuse(self, v, msg, fc):
        gate = torch.sigmoid((v * msg).sum(dim=-1)).unsqueeze(-1)
        if self.fusion_func == "concat":
            fused = torch.cat([v, msg * gate], dim=-1)
        else:
            fused = v + msg * gate
        return fc(fused) + v

    def forward(self, v1, v2, get_score=True, keep=None, mask=None):
        """v1: (n_img, R, D) regions, v2: (n_cap, L, D) words, mask: (n_cap, L)."""
        n_img, n_cap = v1.size(0), v2.size(0)

        # pair every image with every caption
        v1 = v1.unsqueeze(1).expand(-1, n_cap, -1, -1).contiguous().view(n_img * n_cap, v1.size(1), -1)
        v2 = v2.unsqueeze(0).expand(n_img, -1, -1, -1).contiguous().view(n_img * n_cap, v2.size(1), -1)
        if mask is not None:
            mask = mask.unsqueeze(0).expand(n_img, -1, -1).contiguous().view(n_img * n_cap, -1)

        k1 = self.img_key_fc(v1)
        k2 = self.txt_key_fc(v2)

        # messages: words -> regions and regions -> words
        txt_mask = mask.unsqueeze(1) if mask is not None else None
        msg_to_img, _ = qkv_attention(k1, k2, v2, mask=txt_mask)
        msg_to_txt, _ = qkv_attention(k2, k1, v1)

        fused_v1 = self.fuse(v1, msg_to_img, self.fc_1)
        fused_v2 = self.fuse(v2, msg_to_txt, self.fc_2)

        if not get_score:
            return fused_v1, fused_v2

        if self.reduce_func == "self_attn":
            g1 = self.final_reduce_1(fused_v1, fused_v1)
            g2 = self.final_reduce_2(fused_v2, fused_v2, mask)
        else:
            g1 = fused_v1.mean(dim=1)
            g2 = fused_v2.mean(dim=1)

        score = self.fc_out(l2norm(g1) * l2norm(g2)).view(n_img, n_cap)
        return score


class EncoderImagePrecompSelfAttn(nn.Module):
    def __init__(self, img_dim, embed_size, self_attention=False, dropout=0.1):
        super(EncoderImagePrecompSelfAttn, self).__init__()
        self.fc = nn.Linear(img_dim, embed_size)
        self.self_attention = self_attention
        if self_attention:
            self.attn = SummaryAttn(embed_size, 1, dropout)

    def forward(self, images):
        feats = l2norm(self.fc(images))
        return feats


class EncoderText(nn.Module):
    def __init__(self, vocab_size, word_dim, embed_size, num_layers, bi_gru=True):
        super(EncoderText, self).__init__()
        self.embed = nn.Embedding(vocab_size, word_dim)
        self.rnn = nn.GRU(word_dim, embed_size, num_layers, batch_first=True, bidirectional=bi_gru)
        self.bi_gru = bi_gru

    def forward(self, x, lengths):
        x = self.embed(x)
        packed = pack_padded_sequence(x, lengths, batch_first=True)
        out, _ = self.rnn(packed)
        cap_emb, cap_len = pad_packed_sequence(out, batch_first=True)
        if self.bi_gru:
            half = cap_emb.size(2) // 2
            cap_emb = (cap_emb[:, :, :half] + cap_emb[:, :, half:]) / 2
        return l2norm(cap_emb), cap_len


class ContrastiveLoss(nn.Module):
    def __init__(self, margin=0.2, max_violation=True):
        super(ContrastiveLoss, self).__init__()
        self.margin = margin
        self.max_violation = max_violation

    def forward(self, scores):
        diagonal = scores.diag().view(scores.size(0), 1)
        d1 = diagonal.expand_as(scores)
        d2 = diagonal.t().expand_as(scores)
        cost_s = (self.margin + scores - d1).clamp(min=0)
        cost_im = (self.margin + scores - d2).clamp(min=0)
        mask = torch.eye(scores.size(0), device=scores.device) > .5
        cost_s = cost_s.masked_fill(mask, 0)
        cost_im = cost_im.masked_fill(mask, 0)
        if self.max_violation:
            cost_s = cost_s.max(1)[0]
            cost_im = cost_im.max(0)[0]
        return cost_s.sum() + cost_im.sum()


class CAMP(nn.Module):
    def __init__(self, opt):
        super(CAMP, self).__init__()
        self.opt = opt
        self.img_enc = EncoderImagePrecompSelfAttn(opt.img_dim, opt.embed_size, opt.self_attention)
        self.txt_enc = EncoderText(opt.vocab_size, opt.word_dim, opt.embed_size, opt.num_layers, opt.bi_gru)
        self.fusion = GatedFusion(opt.embed_size, opt.num_head, opt.fusion_dropout,
                                  reduce_func=opt.reduce_func, fusion_func=opt.fusion_func)
        self.criterion = ContrastiveLoss(opt.margin, opt.max_violation)

    def forward_emb(self, images, captions, lengths):
        images = images.cuda(non_blocking=True)
        captions = captions.cuda(non_blocking=True)
        img_emb = self.img_enc(images)
        cap_emb, cap_len = self.txt_enc(captions, lengths)
        return img_emb, cap_emb, cap_len

    def forward_score(self, img_emb, cap_emb, cap_len):
        mask = get_mask(cap_len, cap_emb.size(1))
        return self.fusion(img_emb, cap_emb, mask=mask)

    def forward(self, images, captions, lengths):
        img_emb, cap_emb, cap_len = self.forward_emb(images, captions, lengths)
        scores = self.forward_score(img_emb, cap_emb, cap_len)
        loss = self.criterion(scores)
        return loss, scores

    @torch.no_grad()
    def score_shards(self, img_embs, cap_embs, cap_lens, shard_size=128):
        """Full similarity matrix for evaluation, computed on the GPU in shards."""
        n_img, n_cap = len(img_embs), len(cap_embs)
        sims = np.zeros((n_img, n_cap), dtype=np.float32)
        for i in range(0, n_img, shard_size):
            im = torch.from_numpy(img_embs[i:i + shard_size]).float().cuda()
            for j in range(0, n_cap, shard_size):
                ca = torch.from_numpy(cap_embs[j:j + shard_size]).float().cuda()
                lens = torch.cuda.LongTensor(cap_lens[j:j + shard_size])
                sims[i:i + shard_size, j:j + shard_size] = self.forward_score(im, ca, lens).cpu().numpy()
        return sims
