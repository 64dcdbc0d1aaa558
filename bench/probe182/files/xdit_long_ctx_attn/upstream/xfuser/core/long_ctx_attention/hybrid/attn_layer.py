from typing import Any, Optional

import torch
import torch.distributed
from torch import Tensor

from yunchang import LongContextAttention
from yunchang.kernels import AttnType
from yunchang.comm.all_to_all import SeqAllToAll4D
from yunchang.globals import PROCESS_GROUP

from xfuser.logger import init_logger
from xfuser.core.long_ctx_attention.ring import xdit_ring_flash_attn_func
from xfuser.core.cache_manager.cache_manager import get_cache_manager

logger = init_logger(__name__)

try:
    import flash_attn_interface  # FlashAttention-3, Hopper only

    HAS_FLASH_ATTN_3 = True
except ImportError:
    flash_attn_interface = None
    HAS_FLASH_ATTN_3 = False


def _pick_attn_type(requested: Optional[AttnType]) -> AttnType:
    """Choose the fastest kernel the current GPU can run."""
    if requested is not None:
        return requested
    major, _ = torch.cuda.get_device_capability()
    if major >= 9 and HAS_FLASH_ATTN_3:
        return AttnType.FA3
    if major >= 8:
        return AttnType.FA
    # Volta / Turing: no flash-attn 2 kernels
    return AttnType.TORCH


class xFuserLongContextAttention(LongContextAttention):
    ring_impl_type_supported_kv_cache = ["basic"]

    def __init__(
        self,
        scatter_idx: int = 2,
        gather_idx: int = 1,
        ring_impl_type: str = "basic",
        use_pack_qkv: bool = False,
        use_kv_cache: bool = False,
        use_sync: bool = False,
        attn_type: Optional[AttnType] = None,
        attn_processor: torch.nn.Module = None,
    ) -> None:
        """
        Arguments:
            scatter_idx: int = 2, the scatter dimension index for Ulysses All2All
            gather_idx: int = 1, the gather dimension index for Ulysses All2All
            ring_impl_type: str = "basic", the ring implementation type, currently only support "basic"
            use_pack_qkv: bool = False, whether to use pack qkv in the input
            use_kv_cache: bool = False, whether to use kv cache in the attention layer, which is applied in PipeFusion.
            attn_type: AttnType = None, the attention kernel; picked from the GPU arch when None.
        """
        attn_type = _pick_attn_type(attn_type)
        super().__init__(
            scatter_idx=scatter_idx,
            gather_idx=gather_idx,
            ring_impl_type=ring_impl_type,
            use_pack_qkv=use_pack_qkv,
            use_sync=use_sync,
            attn_type=attn_type,
        )
        self.use_kv_cache = use_kv_cache
        if (
            use_kv_cache
            and ring_impl_type not in self.ring_impl_type_supported_kv_cache
        ):
            raise RuntimeError(
                f"ring_impl_type: {ring_impl_type} do not support SP kv cache."
            )
        self.ring_pg = PROCESS_GROUP.RING_PG
        self.ulysses_pg = PROCESS_GROUP.ULYSSES_PG
        self.attn_processor = attn_processor
        self.use_fa3 = attn_type == AttnType.FA3
        if self.use_fa3 and not HAS_FLASH_ATTN_3:
            raise ImportError("AttnType.FA3 requested but flash_attn_interface is missing")
        self.ring_attn_fn = xdit_ring_flash_attn_func

    @torch.compiler.disable
    def forward(
        self,
        attn,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        *,
        joint_tensor_query=None,
        joint_tensor_key=None,
        joint_tensor_value=None,
        dropout_p=0.0,
        softmax_scale=None,
        causal=False,
        window_size=(-1, -1),
        alibi_slopes=None,
        deterministic=False,
        return_attn_probs=False,
        joint_strategy="none",
    ) -> Tensor:
        """forward

        Arguments:
            attn (Attention): the attention module
            query (Tensor): query input to the layer
            key (Tensor): key input to the layer
            value (Tensor): value input to the layer
            args: other args,
            joint_tensor_query: Tensor = None, a replicated tensor among processes appended to the front or rear of query, depends the joint_strategy
            joint_tensor_key: Tensor = None, a replicated tensor among processes appended to the front or rear of key, depends the joint_strategy
            joint_tensor_value: Tensor = None, a replicated tensor among processes appended to the front or rear of value, depends the joint_strategy,
            *args: the args same as flash_attn_interface
            joint_strategy: str = "none", the joint strategy for joint attention, currently only support "front" and "rear"

        Returns:
            * output (Tensor): context output
        """
        is_joint = False
        if (joint_tensor_query is not None and
            joint_tensor_key is not None and
            joint_tensor_value is not None):
            supported_joint_strategy = ["front", "rear"]
            if joint_strategy not in supported_joint_strategy:
                raise ValueError(
                    f"joint_strategy: {joint_strategy} not supprted. supported joint strategy: {supported_joint_strategy}"
                )
            elif joint_strategy == "rear":
                query = torch.cat([query, joint_tensor_query], dim=1)
                is_joint = True
            else:
                query = torch.cat([joint_tensor_query, query], dim=1)
                is_joint = True
        elif (joint_tensor_query is None and
            joint_tensor_key is None and
            joint_tensor_value is None):
            pass
        else:
            raise ValueError(
                f"joint_tensor_query, joint_tensor_key, and joint_tensor_value should be None or not None simultaneously."
            )

        if is_joint:
            ulysses_world_size = torch.distributed.get_world_size(self.ulysses_pg)
            ulysses_rank = torch.distributed.get_rank(self.ulysses_pg)
            attn_heads_per_ulysses_rank = (
                joint_tensor_key.shape[-2] // ulysses_world_size
            )
            joint_tensor_key = joint_tensor_key[
                ...,
                attn_heads_per_ulysses_rank
                * ulysses_rank : attn_heads_per_ulysses_rank
                * (ulysses_rank + 1),
                :,
            ]
            joint_tensor_value = joint_tensor_value[
                ...,
                attn_heads_per_ulysses_rank
                * ulysses_rank : attn_heads_per_ulysses_rank
                * (ulysses_rank + 1),
                :,
            ]

        # 3 X (bs, seq_len/N, head_cnt, head_size) -> 3 X (bs, seq_len, head_cnt/N, head_size)
        # scatter 2, gather 1
        if self.use_pack_qkv:
            # (3*bs, seq_len/N, head_cnt, head_size)
            qkv = torch.cat([query, key, value]).contiguous()
            # (3*bs, seq_len, head_cnt/N, head_size)
            qkv = SeqAllToAll4D.apply(
                self.ulysses_pg, qkv, self.scatter_idx, self.gather_idx, self.use_sync
            )
            qkv = torch.chunk(qkv, 3, dim=0)
            query_layer, key_layer, value_layer = qkv

        else:
            query_layer = SeqAllToAll4D.apply(
                self.ulysses_pg, query, self.scatter_idx, self.gather_idx, self.use_sync
            )
            key_layer = SeqAllToAll4D.apply(
                self.ulysses_pg, key, self.scatter_idx, self.gather_idx, self.use_sync
            )
            value_layer = SeqAllToAll4D.apply(
                self.ulysses_pg, value, self.scatter_idx, self.gather_idx, self.use_sync
            )

        if self.attn_processor is not None and self.ring_pg is None:
            # single-ring case with a custom processor (e.g. sparse attention)
            out = self.attn_processor(query_layer, key_layer, value_layer)
        elif self.ring_pg is None or torch.distributed.get_world_size(self.ring_pg) == 1:
            if self.use_fa3:
                out, _ = flash_attn_interface.flash_attn_func(
                    query_layer, key_layer, value_layer,
                    softmax_scale=softmax_scale, causal=causal,
                )
            else:
                out = self.ring_attn_fn(
                    query_layer, key_layer, value_layer,
                    dropout_p=dropout_p, softmax_scale=softmax_scale, causal=causal,
                    window_size=window_size, alibi_slopes=alibi_slopes,
                    deterministic=deterministic, return_attn_probs=return_attn_probs,
                    group=self.ring_pg, attn_layer=attn if self.use_kv_cache else None,
                    joint_tensor_key=joint_tensor_key, joint_tensor_value=joint_tensor_value,
                    joint_strategy=joint_strategy, attn_type=self.attn_type,
                )
        else:
            out = self.ring_attn_fn(
                query_layer,
                key_layer,
                value_layer,
                dropout_p=dropout_p,
                softmax_scale=softmax_scale,
                causal=causal,
                window_size=window_size,
                alibi_slopes=alibi_slopes,
                deterministic=deterministic,
                return_attn_probs=return_attn_probs,
                group=self.ring_pg,
                attn_layer=attn if self.use_kv_cache else None,
                joint_tensor_key=joint_tensor_key,
                joint_tensor_value=joint_tensor_value,
                joint_strategy=joint_strategy,
                attn_type=self.attn_type,
            )

        if type(out) == tuple:
            context_layer, _, _ = out
        else:
            context_layer = out

        # (bs, seq_len, head_cnt/N, head_size) -> (bs, seq_len/N, head_cnt, head_size)
        # scatter 1, gather 2
        output = SeqAllToAll4D.apply(
            self.ulysses_pg, context_layer, self.gather_idx, self.scatter_idx, self.use_sync
        )

        # out e.g., [s/p::h]
        return output
