import os
import json
from functools import lru_cache
from typing import Any, Dict, Optional

import torch
import triton

from lightllm.utils.device_utils import get_current_device_name, is_hopper
from lightllm.utils.log_utils import init_logger

logger = init_logger(__name__)


class KernelConfigs:
    """
    Tuned launch parameters for Triton kernels live under
    lightllm/common/all_kernel_configs/<kernel_name>/<json params>_<device_name>.json,
    e.g. {N:128,K:7168,out_dtype:torch.bfloat16}_NVIDIA_H800.json. They are produced by
    the autotune scripts under test/kernel/ on each GPU type.
    """

    kernel_name: str = "unknown_kernel"

    @classmethod
    def get_config_file_name(cls, params: Dict[str, Any]) -> str:
        json_str = json.dumps(params, sort_keys=True)
        json_str = json_str.replace(" ", "").replace("\n", "").replace('"', "")
        filename = json_str
        device_name = get_current_device_name().replace(" ", "_")
        return f"{filename}_{device_name}.json"

    @classmethod
    def get_the_config(cls, params: Dict[str, Any]) -> Optional[dict]:
        assert isinstance(params, dict)
        return cls._get_the_config(frozenset(params.items()))

    @classmethod
    @lru_cache(maxsize=None)
    def _get_the_config(cls, frozen_params) -> Optional[dict]:
        params = dict(frozen_params)
        config_dir_path = os.path.join(
            os.path.dirname(os.path.abspath(__file__)), "all_kernel_configs", cls.kernel_name
        )
        file_name = cls.get_config_file_name(params)
        config_file_path = os.path.join(config_dir_path, file_name)
        if os.path.exists(config_file_path):
            with open(config_file_path, mode="r") as file:
                return json.load(file)
        logger.warning(
            f"kernel config {file_name} not found for {cls.kernel_name}, "
            "using the default config. Performance might be sub-optimal! "
            "Run the autotune script for this GPU to generate one."
        )
        return None

    @classmethod
    def store_config(cls, params: Dict[str, Any], dest_json: Dict[str, Any]):
        config_dir_path = os.path.join(
            os.path.dirname(os.path.abspath(__file__)), "all_kernel_configs", cls.kernel_name
        )
        os.makedirs(config_dir_path, exist_ok=True)
        file_name = cls.get_config_file_name(params)
        with open(os.path.join(config_dir_path, file_name), mode="w") as file:
            json.dump(dest_json, file, indent=4)


class GQADecodeAttentionKernelConfig(KernelConfigs):
    kernel_name: str = "gqa_decode_attentnion_kernel"

    @classmethod
    def try_to_get_best_config(
        cls,
        batch_size: int,
        avg_seq_len_in_batch: int,
        q_head_num: int,
        q_head_dim: int,
        q_rope_dim: int,
        out_dtype: str,
    ) -> dict:
        key_params = {
            "q_head_num": q_head_num,
            "q_head_dim": q_head_dim,
            "q_rope_dim": q_rope_dim,
            "out_dtype": str(out_dtype),
        }
        finded_config = cls.get_the_config(key_params)

        if finded_config:
            batch_size_config: dict = finded_config[
                min(
                    finded_config.keys(),
                    key=lambda x: abs(int(x) - avg_seq_len_in_batch),
                )
            ]
            config = batch_size_config[min(batch_size_config.keys(), key=lambda x: abs(int(x) - batch_size))]
            return config
        else:
            if is_hopper():
                config = {"BLOCK_SEQ": 64, "BLOCK_N": 32, "stage1_num_warps": 4, "stage1_num_stages": 3}
            else:
                config = {"BLOCK_SEQ": 64, "BLOCK_N": 16, "stage1_num_warps": 4, "stage1_num_stages": 2}
            config["stage2_num_warps"] = 4
            config["stage2_num_stages"] = 1
            return config


class MoeGroupedGemmKernelConfig(KernelConfigs):
    kernel_name: str = "grouped_moe_gemm_kernel"

    @classmethod
    def try_to_get_best_config(cls, M: int, N: int, K: int, topk_num: int, expert_num: int, mul_routed_weight: bool,
                               use_fp8_w8a8: bool, out_dtype: str) -> dict:
        key_params = {
            "N": N,
            "K": K,
            "topk_num": topk_num,
            "expert_num": expert_num,
            "mul_routed_weight": mul_routed_weight,
            "use_fp8_w8a8": use_fp8_w8a8,
            "out_dtype": str(out_dtype),
        }
        finded_config = cls.get_the_config(key_params)
        if finded_config:
            config = finded_config[min(finded_config.keys(), key=lambda x: abs(int(x) - M))]
            return config
        if M <= expert_num:
            config = {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 1,
                      "num_warps": 4, "num_stages": 1}
        else:
            config = {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8,
                      "num_warps": 4, "num_stages": 4 if torch.cuda.get_device_capability()[0] >= 9 else 3}
        return config
