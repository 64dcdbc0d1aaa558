# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.

# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.

"""SAM builders that apply the "fast" recipe: bf16 eval dtype, torch.compile(max-autotune) on the image
encoder, and a custom Triton flash-attention kernel that fuses the decomposed relative-position bias.
"""
import json
import math
import os
from functools import partial

import torch

from segment_anything_fast.modeling import (
    ImageEncoderViT,
    MaskDecoder,
    PromptEncoder,
    Sam,
    TwoWayTransformer,
)
from segment_anything_fast.flash_4_kernel import _fwd_kernel_aligned

_VARIANTS = {
    "vit_h": dict(encoder_embed_dim=1280, encoder_depth=32, encoder_num_heads=16, encoder_global_attn_indexes=[7, 15, 23, 31]),
    "vit_l": dict(encoder_embed_dim=1024, encoder_depth=24, encoder_num_heads=16, encoder_global_attn_indexes=[5, 11, 17, 23]),
    "vit_b": dict(encoder_embed_dim=768, encoder_depth=12, encoder_num_heads=12, encoder_global_attn_indexes=[2, 5, 8, 11]),
}

# Kernel launch configs found by the offline sweep (tools/autotune_flash4.py), keyed by GPU name.
_CONFIG_FILE = os.path.join(os.path.dirname(__file__), "configs", "flash_4_configs_a100.json")


def _load_best_configs():
    device_name = torch.cuda.get_device_name()
    if not os.path.exists(_CONFIG_FILE):
        return None
    with open(_CONFIG_FILE) as f:
        all_configs = json.load(f)
    return all_configs.get(device_name)


BEST_CONFIGS = None


def _attention_rel_h_rel_w_kernel_aligned_device(q, k, v, rel_h_w, sm_scale, o, BLOCK_M, BLOCK_N, num_warps, num_stages):
    Lq, Lk, Lv = q.shape[-1], k.shape[-1], v.shape[-1]
    assert Lq == Lk and Lk == Lv
    assert Lk in {16, 32, 64, 128}
    assert q.size() == k.size()
    assert q.size() == v.size()
    assert q.size(-2) == rel_h_w.size(-2)
    assert (q.dtype == torch.bfloat16 or q.dtype == torch.float16)
    assert k.dtype == q.dtype
    assert v.dtype == k.dtype
    assert o.dtype == v.dtype
    assert rel_h_w.dtype == q.dtype
    assert rel_h_w.size(-1) == 128

    grid = (math.ceil(q.shape[2] / BLOCK_M), q.shape[0] * q.shape[1], 1)
    P_SEQ = 0 if q.shape[-2] == k.shape[-2] else k.shape[-2] - q.shape[-2]
    assert P_SEQ == 0
    assert rel_h_w.is_contiguous(), str(rel_h_w.stride())
    _fwd_kernel_aligned[grid](
        q, k, v,
        rel_h_w,
        sm_scale,
        o,
        q.stride(1), q.stride(2), q.stride(3),
        k.stride(1), k.stride(2), k.stride(3),
        v.stride(1), v.stride(2), v.stride(3),
        o.stride(1), o.stride(2), o.stride(3),
        rel_h_w.stride(1), rel_h_w.stride(2),
        q.shape[0],
        q.shape[1],
        q.shape[2],
        P_SEQ,
        OUT_DTYPE=torch.float16 if q.dtype == torch.float16 else torch.bfloat16,
        BIAS_LAST_SIZE=(rel_h_w.size(-1) // 2),
        B0_NUMEL=rel_h_w.size(-1),
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        num_warps=num_warps,
        num_stages=num_stages)


def _custom_flash_aligned_impl(q, k, v, rel_h_w, sm_scale):
    global BEST_CONFIGS
    if BEST_CONFIGS is None:
        BEST_CONFIGS = _load_best_configs()
    o = torch.empty_like(q, memory_format=torch.contiguous_format)
    key = str(tuple(q.shape))
    if BEST_CONFIGS is not None and key in BEST_CONFIGS:
        BLOCK_M, BLOCK_N, num_warps, num_stages = BEST_CONFIGS[key]
    else:
        BLOCK_M, BLOCK_N, num_warps, num_stages = 64, 64, 4, 3
    _attention_rel_h_rel_w_kernel_aligned_device(q, k, v, rel_h_w, sm_scale, o, BLOCK_M, BLOCK_N, num_warps, num_stages)
    return o


def _custom_flash_aligned_meta(q, k, v, rel_h_w, sm_scale):
    return q.contiguous()


lib = torch.library.Library("customflash", "FRAGMENT")
lib.define("custom_flash_aligned(Tensor q, Tensor k, Tensor v, Tensor rel_h_w, float sm_scale) -> Tensor")
lib.impl("custom_flash_aligned", _custom_flash_aligned_impl, "CUDA")
lib.impl("custom_flash_aligned", _custom_flash_aligned_meta, "Meta")


def _attention_rel_h_rel_w(q_, k_, v_, rel_h_, rel_w_):
    """Fused SDPA with decomposed rel-pos bias; falls back to SDPA + explicit bias when the kernel can't be used."""
    sm_scale = 1. / math.sqrt(q_.size(-1))
    q_size_2_padded = (((q_.size(-2) + 256 - 1) // 256) * 256) - q_.size(-2)
    use_kernel = q_.is_cuda and q_size_2_padded == 0 and q_.size(-1) == 64
    if use_kernel:
        rel_h_w = torch.cat([rel_h_.squeeze(-1), rel_w_.squeeze(-2)], dim=-1)
        return torch.ops.customflash.custom_flash_aligned(q_, k_, v_, rel_h_w, sm_scale)
    attn_bias = (rel_h_ + rel_w_).view(q_.size(0), q_.size(1), rel_h_.size(2), rel_h_.size(3) * rel_w_.size(4))
    return torch.nn.functional.scaled_dot_product_attention(q_, k_, v_, attn_mask=attn_bias)


def _apply_eval_dtype_sam(model, dtype):

    def prep_model(model, dtype):
        if dtype is not None:
            return model.eval().to(dtype)
        return model.eval()

    model.image_encoder = prep_model(model.image_encoder, dtype)
    model.prompt_encoder = prep_model(model.prompt_encoder, dtype)
    model.mask_decoder = prep_model(model.mask_decoder, dtype)

    return model


def _build_sam(encoder_embed_dim, encoder_depth, encoder_num_heads, encoder_global_attn_indexes, checkpoint=None):
    prompt_embed_dim = 256
    image_size = 1024
    vit_patch_size = 16
    image_embedding_size = image_size // vit_patch_size
    sam = Sam(
        image_encoder=ImageEncoderViT(
            depth=encoder_depth,
            embed_dim=encoder_embed_dim,
            img_size=image_size,
            mlp_ratio=4,
            norm_layer=partial(torch.nn.LayerNorm, eps=1e-6),
            num_heads=encoder_num_heads,
            patch_size=vit_patch_size,
            qkv_bias=True,
            use_rel_pos=True,
            global_attn_indexes=encoder_global_attn_indexes,
            window_size=14,
            out_chans=prompt_embed_dim,
            attention_fn=_attention_rel_h_rel_w,
        ),
        prompt_encoder=PromptEncoder(
            embed_dim=prompt_embed_dim,
            image_embedding_size=(image_embedding_size, image_embedding_size),
            input_image_size=(image_size, image_size),
            mask_in_chans=16,
        ),
        mask_decoder=MaskDecoder(
            num_multimask_outputs=3,
            transformer=TwoWayTransformer(depth=2, embedding_dim=prompt_embed_dim, mlp_dim=2048, num_heads=8),
            transformer_dim=prompt_embed_dim,
            iou_head_depth=3,
            iou_head_hidden_dim=256,
        ),
        pixel_mean=[123.675, 116.28, 103.53],
        pixel_std=[58.395, 57.12, 57.375],
    )
    sam.eval()
    if checkpoint is not None:
        with open(checkpoint, "rb") as f:
            state_dict = torch.load(f, weights_only=True)
        sam.load_state_dict(state_dict)
    return sam


def build_sam_fast(variant="vit_h", checkpoint=None, compile_mode="max-autotune", dtype=torch.bfloat16, device="cuda"):
    sam = _build_sam(**_VARIANTS[variant], checkpoint=checkpoint)
    sam = _apply_eval_dtype_sam(sam, dtype)
    sam = sam.to(device)
    if compile_mode is not None:
        sam.image_encoder = torch.compile(sam.image_encoder, mode=compile_mode)
    return sam


def set_fast_amg(mask_generator, batch_size=64):
    """Batched point prompts for SamAutomaticMaskGenerator + a compiled mask decoder."""
    mask_generator.points_per_batch = batch_size
    torch._dynamo.config.cache_size_limit = 50000
    mask_generator.predictor.model.mask_decoder = torch.compile(
        mask_generator.predictor.model.mask_decoder, mode="max-autotune-no-cudagraphs", dynamic=True
    )
    torch.cuda.empty_cache()
    return mask_generator
