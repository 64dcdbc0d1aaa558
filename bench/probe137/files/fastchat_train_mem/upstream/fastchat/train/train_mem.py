# Make it more memory efficient by monkey patching the LLaMA model with FlashAttn.
#
# Need to call this before importing transformers.
# Launch:
#   torchrun --nproc_per_node=8 --master_port=20001 fastchat/train/train_mem.py ...
import os

import torch

USE_XFORMERS = os.environ.get("FASTCHAT_USE_XFORMERS", "0") == "1"

if USE_XFORMERS:
    # V100 / T4 nodes: flash-attn 2 has no sm70 kernels, fall back to xformers.
    from fastchat.train.llama_xformers_attn_monkey_patch import (
        replace_llama_attn_with_xformers_attn,
    )

    replace_llama_attn_with_xformers_attn()
else:
    if torch.cuda.get_device_capability()[0] < 8:
        raise RuntimeError(
            "FlashAttention-2 training needs an Ampere (sm80) or newer GPU. "
            "Set FASTCHAT_USE_XFORMERS=1 or run fastchat/train/train.py instead."
        )
    from fastchat.train.llama2_flash_attn_monkey_patch import (
        replace_llama_attn_with_flash_attn,
    )

    replace_llama_attn_with_flash_attn()

from fastchat.train.train import train  # noqa: E402

if __name__ == "__main__":
    train()
