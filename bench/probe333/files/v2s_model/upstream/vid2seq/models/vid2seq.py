"""Vid2Seq: a T5 language model conditioned on a temporal transformer over frame-level CLIP features.

Time is quantised into `num_bins` special tokens <time=0> ... <time=N-1> that are added to the
T5 vocabulary, so an event is written as "<time=s> <time=e> caption".
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import T5ForConditionalGeneration, T5Tokenizer
from transformers.modeling_outputs import BaseModelOutput

try:  # optional, only used when cfg.use_xformers=True on GPUs with enough shared memory
    import xformers.ops as xops
    HAS_XFORMERS = True
except ImportError:
    xops = None
    HAS_XFORMERS = False


def get_tokenizer(t5_path, num_bins=100):
    tokenizer = T5Tokenizer.from_pretrained(t5_path, local_files_only=True)
    if num_bins:
        new_tokens = ["<time=" + str(i) + ">" for i in range(num_bins)]
        tokenizer.add_tokens(list(new_tokens))
    return tokenizer


class TemporalAttention(nn.Module):
    def __init__(self, dim, num_heads=12, dropout=0.1, use_xformers=False):
        super().__init__()
        assert dim % num_heads == 0
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.dropout = dropout
        self.use_xformers = use_xformers and HAS_XFORMERS

    def forward(self, x, key_padding_mask=None):
        B, T, C = x.shape
        qkv = self.qkv(x).reshape(B, T, 3, self.num_heads, self.head_dim)
        dropout_p = self.dropout if self.training else 0.0
        if self.use_xformers and key_padding_mask is None:
            q, k, v = qkv.unbind(2)  # (B, T, H, D) layout for xformers
            out = xops.memory_efficient_attention(q, k, v, p=dropout_p)
            out = out.reshape(B, T, C)
        else:
            q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # (B, H, T, D)
            attn_mask = None
            if key_padding_mask is not None:
                # True = keep for SDPA bool masks
                attn_mask = (~key_padding_mask)[:, None, None, :]
            with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):
                out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, dropout_p=dropout_p)
            out = out.transpose(1, 2).reshape(B, T, C)
        return self.proj(out)


class TemporalBlock(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio=4.0, dropout=0.1, use_xformers=False):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = TemporalAttention(dim, num_heads, dropout, use_xformers)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(
            nn.Linear(dim, int(dim * mlp_ratio)),
            nn.GELU(),
            nn.Dropout(dropout),
            nn.Linear(int(dim * mlp_ratio), dim),
            nn.Dropout(dropout),
        )

    def forward(self, x, key_padding_mask=None):
        x = x + self.attn(self.norm1(x), key_padding_mask)
        x = x + self.mlp(self.norm2(x))
        return x


class VisualEncoder(nn.Module):
    """12-layer temporal transformer on top of frozen CLIP ViT-L/14 features (768-d)."""

    def __init__(self, in_dim=768, dim=768, depth=12, num_heads=12, max_feats=100, dropout=0.1, use_xformers=False):
        super().__init__()
        self.proj = nn.Linear(in_dim, dim) if in_dim != dim else nn.Identity()
        self.pos_embed = nn.Parameter(torch.zeros(1, max_feats, dim))
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        self.blocks = nn.ModuleList([TemporalBlock(dim, num_heads, dropout=dropout, use_xformers=use_xformers)
                                     for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)

    def forward(self, video, key_padding_mask=None):
        x = self.proj(video)
        x = x + self.pos_embed[:, :x.shape[1]]
        for blk in self.blocks:
            x = blk(x, key_padding_mask)
        return self.norm(x)


class Vid2Seq(nn.Module):
    def __init__(self, t5_path, num_features=100, embed_dim=768, depth=12, heads=12, mlp_dim=2048,
                 vis_drop=0.1, tokenizer=None, enc_drop=0.1, dec_drop=0.1, use_speech=True, use_video=True,
                 num_bins=100, label_smoothing=0.1, use_xformers=False):
        super().__init__()
        self.t5_model = T5ForConditionalGeneration.from_pretrained(
            t5_path, local_files_only=True, dropout_rate=enc_drop)
        self.t5_model.resize_token_embeddings(len(tokenizer) - num_bins)  # remove the weights of the 28 tokens that are not used
        self.t5_model.resize_token_embeddings(len(tokenizer))  # add time tokens
        self.visual_encoder = VisualEncoder(embed_dim, self.t5_model.model_dim, depth, heads, num_features,
                                            vis_drop, use_xformers)
        self.t5_tokenizer = tokenizer
        self.use_speech = use_speech
        self.use_video = use_video
        self.num_bins = num_bins
        self.label_smoothing = label_smoothing
        # fp32 prior over time tokens (keeps bin scores stable under fp16)
        self.time_transition = nn.Parameter(torch.eye(num_bins))
        self.time_logit_scale = nn.Parameter(torch.ones([]) * math.log(1 / 0.07))

    def encode(self, video, input_tokenized):
        atts_vis = torch.ones(video.size()[:-1], dtype=torch.long, device=video.device)
        video = self.visual_encoder(video)
        if self.use_speech:
            text = self.t5_model.encoder(input_ids=input_tokenized['input_ids'],
                                         attention_mask=input_tokenized['attention_mask'],
                                         return_dict=True).last_hidden_state
            encoded = torch.cat([video, text], dim=1)
            encoder_atts = torch.cat([atts_vis, input_tokenized['attention_mask']], dim=1)
        else:
            encoded = video
            encoder_atts = atts_vis
        return encoded, encoder_atts

    def time_token_bias(self, logits):
        """Mix the <time=*> logits with a learnt bins x bins prior, in fp32."""
        with torch.cuda.amp.autocast(enabled=False):
            logits = logits.float()
            time_slice = slice(len(self.t5_tokenizer) - self.num_bins, len(self.t5_tokenizer))
            time_logits = logits[..., time_slice] @ self.time_transition.float()
            logits[..., time_slice] = time_logits * self.time_logit_scale.exp()
        return logits

    def forward(self, video, input_tokenized, output_tokenized):
        encoded, encoder_atts = self.encode(video, input_tokenized)
        targets = output_tokenized['input_ids'].masked_fill(
            output_tokenized['input_ids'] == self.t5_tokenizer.pad_token_id, -100
        )
        outputs = self.t5_model(
            encoder_outputs=BaseModelOutput(last_hidden_state=encoded),
            attention_mask=encoder_atts,
            decoder_attention_mask=output_tokenized['attention_mask'],
            return_dict=True,
            labels=targets,
        )
        logits = self.time_token_bias(outputs.logits)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-100,
                               label_smoothing=self.label_smoothing)
        return loss, logits

    @torch.no_grad()
    def generate(
            self,
            video,
            input_tokenized,
            use_nucleus_sampling=False,
            num_beams=4,
            max_length=256,
            min_length=1,
            top_p=0.9,
            repetition_penalty=1.0,
            length_penalty=1.0,
            num_captions=1,
            temperature=1,
    ):
        """
        Args:
            video (torch.Tensor): A tensor of shape (batch_size, T, D)
            input_tokenized (dict): speech transcript tokens
            use_nucleus_sampling (bool): Whether to use nucleus sampling. If False, use top-k sampling.
            num_beams (int): Number of beams for beam search. 1 means no beam search.
            max_length (int): The maximum length of the sequence to be generated.
            min_length (int): The minimum length of the sequence to be generated.
            top_p (float): The cumulative probability for nucleus sampling.
            repetition_penalty (float): The parameter for repetition penalty. 1.0 means no penalty.
            num_captions (int): Number of captions to be generated for each image.
        Returns:
            captions (list): A list of strings of length batch_size * num_captions.
        """
        encoded, encoder_atts = self.encode(video, input_tokenized)

        outputs = self.t5_model.generate(
            encoder_outputs=BaseModelOutput(last_hidden_state=encoded),
            attention_mask=encoder_atts,
            do_sample=use_nucleus_sampling,
            top_p=top_p,
            temperature=temperature,
            num_beams=num_beams,
            max_new_tokens=max_length,
            min_length=min_length,
            repetition_penalty=repetition_penalty,
            length_penalty=length_penalty,
            num_return_sequences=num_captions,
        )
        output_text = self.t5_tokenizer.batch_decode(
            outputs, skip_special_tokens=True
        )

        return output_text


def build_vid2seq_model(cfg, tokenizer):
    model = Vid2Seq(t5_path=cfg.t5_path,
                    num_features=cfg.max_feats,
                    embed_dim=cfg.embedding_dim,
                    depth=cfg.depth,
                    heads=cfg.heads,
                    mlp_dim=cfg.mlp_dim,
                    vis_drop=cfg.visual_encoder_dropout,
                    enc_drop=cfg.text_encoder_dropout,
                    dec_drop=cfg.text_decoder_dropout,
                    tokenizer=tokenizer,
                    num_bins=cfg.num_bins,
                    label_smoothing=cfg.label_smoothing,
                    use_speech=cfg.use_speech,
                    use_video=cfg.use_video,
                    use_xformers=cfg.get("use_xformers", False))
    return model
