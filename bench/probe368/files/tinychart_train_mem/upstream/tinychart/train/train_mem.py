# Entry point used by scripts/train.sh (deepspeed launcher).
# FlashAttention-2 is required for the 3072-token chart + program-of-thought sequences;
# without it the 3B model does not fit on 8x A100-40G at batch size 8.
from tinychart.train.train import train

if __name__ == "__main__":
    train(attn_implementation="flash_attention_2")
