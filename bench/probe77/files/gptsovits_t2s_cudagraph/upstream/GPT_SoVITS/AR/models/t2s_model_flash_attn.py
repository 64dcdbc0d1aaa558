"""T2S (text -> semantic token) decoder for fast inference.

KV cache lives in preallocated tensors and attention uses flash_attn_with_kvcache, so one decode
step has static shapes and can be captured in a CUDA graph; the python loop then only replays it.
Used by the "fast inference" path of api_v2.py / inference_webui_fast.py.
"""
import math
import time
from typing import List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from flash_attn import flash_attn_with_kvcache
from tqdm import tqdm

from AR.models.utils import make_pad_mask, sample, topk_sampling
from AR.modules.embedding import SinePositionalEmbedding, TokenEmbedding


class T2SMLP:
    def __init__(self, w1, b1, w2, b2):
        self.w1 = w1
        self.b1 = b1
        self.w2 = w2
        self.b2 = b2

    def forward(self, x):
        x = F.relu(F.linear(x, self.w1, self.b1))
        x = F.linear(x, self.w2, self.b2)
        return x


class T2SBlock:
    def __init__(self, num_heads: int, hidden_dim: int, mlp: T2SMLP, qkv_w, qkv_b, out_w, out_b,
                 norm_w1, norm_b1, norm_eps1, norm_w2, norm_b2, norm_eps2):
        self.num_heads = num_heads
        self.mlp = mlp
        self.hidden_dim: int = hidden_dim
        self.qkv_w = qkv_w
        self.qkv_b = qkv_b
        self.out_w = out_w
        self.out_b = out_b
        self.norm_w1 = norm_w1
        self.norm_b1 = norm_b1
        self.norm_eps1 = norm_eps1
        self.norm_w2 = norm_w2
        self.norm_b2 = norm_b2
        self.norm_eps2 = norm_eps2

    def process_prompt(self, x, attn_mask: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor):
        q, k, v = F.linear(x, self.qkv_w, self.qkv_b).chunk(3, dim=-1)
        batch_size, q_len = q.shape[0], q.shape[1]
        kv_len = k.shape[1]

        # fill the preallocated cache with the prompt keys / values
        k_cache[:, :kv_len] = k.view(batch_size, kv_len, self.num_heads, -1)
        v_cache[:, :kv_len] = v.view(batch_size, kv_len, self.num_heads, -1)

        q = q.view(batch_size, q_len, self.num_heads, -1).transpose(1, 2)
        k = k.view(batch_size, kv_len, self.num_heads, -1).transpose(1, 2)
        v = v.view(batch_size, kv_len, self.num_heads, -1).transpose(1, 2)

        attn = F.scaled_dot_product_attention(q, k, v, ~attn_mask)
        attn = attn.permute(2, 0, 1, 3).reshape(batch_size * q_len, self.hidden_dim)
        attn = attn.view(q_len, batch_size, self.hidden_dim).transpose(1, 0)
        attn = F.linear(attn, self.out_w, self.out_b)

        x = F.layer_norm(x + attn, [self.hidden_dim], self.norm_w1, self.norm_b1, self.norm_eps1)
        x = F.layer_norm(x + self.mlp.forward(x), [self.hidden_dim], self.norm_w2, self.norm_b2, self.norm_eps2)
        return x

    def decode_next_token(self, x, k_cache: torch.Tensor, v_cache: torch.Tensor, cache_seqlens: torch.Tensor):
        q, k, v = F.linear(x, self.qkv_w, self.qkv_b).chunk(3, dim=-1)
        batch_size = q.shape[0]
        q = q.view(batch_size, 1, self.num_heads, -1)
        k = k.view(batch_size, 1, self.num_heads, -1)
        v = v.view(batch_size, 1, self.num_heads, -1)

        # appends k/v at cache_seqlens in place and attends over the valid prefix
        attn = flash_attn_with_kvcache(q, k_cache, v_cache, k, v, cache_seqlens=cache_seqlens, causal=True)
        attn = attn.view(batch_size, 1, self.hidden_dim)
        attn = F.linear(attn, self.out_w, self.out_b)

        x = F.layer_norm(x + attn, [self.hidden_dim], self.norm_w1, self.norm_b1, self.norm_eps1)
        x = F.layer_norm(x + self.mlp.forward(x), [self.hidden_dim], self.norm_w2, self.norm_b2, self.norm_eps2)
        return x


class T2STransformer:
    def __init__(self, num_blocks: int, blocks: List[T2SBlock]):
        self.num_blocks: int = num_blocks
        self.blocks = blocks

    def process_prompt(self, x, attn_mask, k_caches, v_caches):
        for i in range(self.num_blocks):
            x = self.blocks[i].process_prompt(x, attn_mask, k_caches[i], v_caches[i])
        return x

    def decode_next_token(self, x, k_caches, v_caches, cache_seqlens):
        for i in range(self.num_blocks):
            x = self.blocks[i].decode_next_token(x, k_caches[i], v_caches[i], cache_seqlens)
        return x


class CUDAGraphRunner:
    """Captures one decode step (all layers + logits) and replays it."""

    def __init__(self, t2s_transformer: T2STransformer, ar_predict_layer: nn.Module, k_caches, v_caches,
                 batch_size: int, hidden_dim: int, dtype, device):
        self.t2s_transformer = t2s_transformer
        self.ar_predict_layer = ar_predict_layer
        self.k_caches = k_caches
        self.v_caches = v_caches
        self.static_x = torch.zeros((batch_size, 1, hidden_dim), dtype=dtype, device=device)
        self.static_seqlens = torch.zeros((batch_size,), dtype=torch.int32, device=device)
        self.static_logits = None
        self.graph = None

    def capture(self):
        # warm up on a side stream before capture (allocator + flash-attn workspace)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                xy_dec = self.t2s_transformer.decode_next_token(self.static_x, self.k_caches, self.v_caches, self.static_seqlens)
                self.ar_predict_layer(xy_dec[:, -1])
        torch.cuda.current_stream().wait_stream(s)

        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            xy_dec = self.t2s_transformer.decode_next_token(self.static_x, self.k_caches, self.v_caches, self.static_seqlens)
            self.static_logits = self.ar_predict_layer(xy_dec[:, -1])

    def __call__(self, x, cache_seqlens):
        self.static_x.copy_(x)
        self.static_seqlens.copy_(cache_seqlens)
        self.graph.replay()
        return self.static_logits


class Text2SemanticDecoderFast(nn.Module):
    def __init__(self, config, norm_first=False, top_k=3, use_cuda_graph=True, max_len=2000):
        super().__init__()
        self.model_dim = config["model"]["hidden_dim"]
        self.embedding_dim = config["model"]["embedding_dim"]
        self.num_head = config["model"]["head"]
        self.num_layers = config["model"]["n_layer"]
        self.vocab_size = config["model"]["vocab_size"]
        self.phoneme_vocab_size = config["model"]["phoneme_vocab_size"]
        self.EOS = config["model"]["EOS"]
        self.use_cuda_graph = use_cuda_graph
        self.max_len = max_len

        self.bert_proj = nn.Linear(1024, self.embedding_dim)
        self.ar_text_embedding = TokenEmbedding(self.embedding_dim, self.phoneme_vocab_size, 0.1)
        self.ar_text_position = SinePositionalEmbedding(self.embedding_dim, dropout=0.1, scale=False, alpha=True)
        self.ar_audio_embedding = TokenEmbedding(self.embedding_dim, self.vocab_size, 0.1)
        self.ar_audio_position = SinePositionalEmbedding(self.embedding_dim, dropout=0.1, scale=False, alpha=True)
        self.ar_predict_layer = nn.Linear(self.model_dim, self.vocab_size, bias=False)
        self.t2s_transformer: Optional[T2STransformer] = None
        self.graph_runner: Optional[CUDAGraphRunner] = None

    def init_caches(self, batch_size, dtype, device):
        head_dim = self.model_dim // self.num_head
        shape = (batch_size, self.max_len, self.num_head, head_dim)
        k_caches = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(self.num_layers)]
        v_caches = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(self.num_layers)]
        return k_caches, v_caches

    @torch.inference_mode()
    def infer_panel(self, x, x_lens, prompts, bert_feature, top_k: int = -100, top_p: int = 100,
                    early_stop_num: int = -1, temperature: float = 1.0, repetition_penalty: float = 1.35):
        device, dtype = x.device, self.bert_proj.weight.dtype
        x = self.ar_text_embedding(x)
        x = x + self.bert_proj(bert_feature.transpose(1, 2))
        x = self.ar_text_position(x)

        y = prompts
        prefix_len = y.shape[1]
        y_emb = self.ar_audio_embedding(y)
        y_pos = self.ar_audio_position(y_emb)
        xy_pos = torch.concat([x, y_pos], dim=1)

        batch_size = x.shape[0]
        x_len, y_len = x.shape[1], y.shape[1]
        src_len = x_len + y_len
        x_attn_mask = F.pad(torch.zeros((x_len, x_len), dtype=torch.bool), (0, y_len), value=True)
        y_attn_mask = F.pad(torch.triu(torch.ones(y_len, y_len, dtype=torch.bool), diagonal=1), (x_len, 0), value=False)
        xy_attn_mask = torch.concat([x_attn_mask, y_attn_mask], dim=0).unsqueeze(0).expand(batch_size * self.num_head, -1, -1)
        xy_attn_mask = xy_attn_mask.view(batch_size, self.num_head, src_len, src_len).to(device=device, dtype=torch.bool)

        k_caches, v_caches = self.init_caches(batch_size, dtype, device)
        cache_seqlens = torch.full((batch_size,), src_len, dtype=torch.int32, device=device)

        t_start = torch.cuda.Event(enable_timing=True)
        t_end = torch.cuda.Event(enable_timing=True)
        t_start.record()

        xy_dec = self.t2s_transformer.process_prompt(xy_pos, xy_attn_mask, k_caches, v_caches)
        logits = self.ar_predict_layer(xy_dec[:, -1])

        if self.use_cuda_graph and self.graph_runner is None:
            self.graph_runner = CUDAGraphRunner(self.t2s_transformer, self.ar_predict_layer, k_caches, v_caches,
                                                batch_size, self.model_dim, dtype, device)
            self.graph_runner.capture()

        stop = False
        for idx in tqdm(range(self.max_len - src_len)):
            if idx > 0:
                if self.graph_runner is not None:
                    logits = self.graph_runner(xy_pos, cache_seqlens)
                else:
                    xy_dec = self.t2s_transformer.decode_next_token(xy_pos, k_caches, v_caches, cache_seqlens)
                    logits = self.ar_predict_layer(xy_dec[:, -1])
                cache_seqlens += 1
            if idx == 0:
                logits = logits[:, :-1]  # EOS is not allowed as the first token
            samples = sample(logits, y, top_k=top_k, top_p=top_p, repetition_penalty=repetition_penalty, temperature=temperature)[0]
            y = torch.concat([y, samples], dim=1)
            if early_stop_num != -1 and (y.shape[1] - prefix_len) > early_stop_num:
                stop = True
            if torch.argmax(logits, dim=-1)[0] == self.EOS or samples[0, 0] == self.EOS:
                stop = True
            if stop:
                if y.shape[1] == 0:
                    y = torch.concat([y, torch.zeros_like(samples)], dim=1)
                break
            y_emb = self.ar_audio_embedding(y[:, -1:])
            xy_pos = y_emb * self.ar_audio_position.x_scale + self.ar_audio_position.alpha * self.ar_audio_position.pe[
                :, y_len + idx
            ].to(dtype=y_emb.dtype, device=y_emb.device)

        t_end.record()
        torch.cuda.synchronize()
        n_tokens = y.shape[1] - prefix_len
        elapsed_ms = t_start.elapsed_time(t_end)
        print(f"T2S: {n_tokens} tokens in {elapsed_ms:.0f} ms ({n_tokens / max(elapsed_ms, 1e-3) * 1000:.1f} tok/s)")
        return y[:, :-1], idx
