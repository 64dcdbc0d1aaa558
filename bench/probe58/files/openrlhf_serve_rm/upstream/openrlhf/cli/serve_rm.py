import argparse
import re

import pynvml
import torch
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from openrlhf.models import get_llm_for_sequence_regression
from openrlhf.utils import get_tokenizer
from openrlhf.utils.logging_utils import init_logger

logger = init_logger(__name__)


def strip_sequence(text, pad_token, eos_token):
    pad_token_escaped = re.escape(pad_token)
    eos_token_escaped = re.escape(eos_token)

    pattern = f"^({eos_token_escaped}|{pad_token_escaped})+"
    text = re.sub(pattern, "", text)

    pattern = f"({eos_token_escaped}|{pad_token_escaped})+$"
    text = re.sub(pattern, "", text)
    return text


class RewardModelProxy:
    def __init__(self, args):
        # Modify the reward_model to your remote model
        self.reward_model = get_llm_for_sequence_regression(
            args.reward_pretrain,
            "reward",
            normalize_reward=args.normalize_reward,
            use_flash_attention_2=args.flash_attn,
            bf16=args.bf16,
            load_in_4bit=args.load_in_4bit,
            value_head_prefix=args.value_head_prefix,
            device_map="auto",
        )
        self.reward_model.eval()

        self.tokenizer = get_tokenizer(args.reward_pretrain, self.reward_model, "left", None, use_fast=not args.disable_fast_tokenizer)
        self.max_length = args.max_len
        self.batch_size = args.batch_size

    def get_reward(self, queries):
        if self.batch_size is None:
            batch_size = len(queries)
        else:
            batch_size = self.batch_size

        # remove pad_token
        for i in range(len(queries)):
            queries[i] = (
                strip_sequence(queries[i], self.tokenizer.pad_token, self.tokenizer.eos_token) + self.tokenizer.eos_token
            )
        logger.info(f"queries[0]: {queries[0]}")

        scores = []
        # batch
        with torch.no_grad():
            for i in range(0, len(queries), batch_size):
                inputs = self.tokenize_fn(queries[i : min(len(queries), i + batch_size)], device=self.reward_model.device)
                r = self.reward_model(inputs["input_ids"], inputs["attention_mask"])
                r = r.tolist()
                scores.extend(r)
        return scores

    def tokenize_fn(self, texts, device):
        batch = self.tokenizer(
            texts,
            return_tensors="pt",
            add_special_tokens=False,
            max_length=self.max_length,
            padding=True,
            truncation=True,
        )
        return {k: v.to(device) for k, v in batch.items()}


class RuleAndModelReward:
    """Mix a cheap rule (format check) with the model score; used by the math recipes."""

    def __init__(self, proxy: RewardModelProxy, format_weight: float = 0.1):
        self.proxy = proxy
        self.format_weight = format_weight

    def __call__(self, queries):
        scores = self.proxy.get_reward(list(queries))
        out = []
        for q, s in zip(queries, scores):
            fmt = 1.0 if re.search(r"\\boxed\{.+\}", q) else 0.0
            out.append(s + self.format_weight * fmt)
        return out


def device_health(index: int = 0) -> dict:
    """GPU utilisation / memory for the /health endpoint (the launcher polls it before sending traffic)."""
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    util = pynvml.nvmlDeviceGetUtilizationRates(handle)
    mem = pynvml.nvmlDeviceGetMemoryInfo(handle)
    return {
        "device": torch.cuda.get_device_name(index),
        "gpu_util": util.gpu,
        "mem_used_gb": mem.used / 2**30,
        "mem_total_gb": mem.total / 2**30,
    }


def warmup(proxy: RewardModelProxy, n: int = 2):
    """Run a couple of dummy batches so the first real request does not pay for kernel selection."""
    dummy = ["Hello, world." + proxy.tokenizer.eos_token] * n
    with torch.autocast("cuda", dtype=torch.bfloat16):
        proxy.get_reward(dummy)
    torch.cuda.synchronize()
    logger.info(f"warmup done, max memory allocated {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    # Reward Model
    parser.add_argument("--reward_pretrain", type=str, default=None, help="HF model name or path")
    parser.add_argument("--normalize_reward", action="store_true", default=False, help="Enable Reward Normazation")
    parser.add_argument("--value_head_prefix", type=str, default="score")
    parser.add_argument("--max_len", type=int, default="2048")

    parser.add_argument("--port", type=int, default=5000, help="Port number for the server")
    parser.add_argument("--host", type=str, default="0.0.0.0", help="IP for the server")

    # Performance
    parser.add_argument("--load_in_4bit", action="store_true", default=False)
    parser.add_argument("--bf16", action="store_true", default=False, help="Enable bfloat16")
    parser.add_argument("--flash_attn", action="store_true", default=False, help="Enable FlashAttention2")
    parser.add_argument("--disable_fast_tokenizer", action="store_true", default=False)
    parser.add_argument("--batch_size", type=int, default=None)
    parser.add_argument("--rule_format_weight", type=float, default=0.0)

    # ModelScope parameters
    parser.add_argument("--use_ms", action="store_true", default=False)

    args = parser.parse_args()

    if args.use_ms:
        from modelscope.utils.hf_util import patch_hub

        # Patch hub to download models from modelscope to speed up.
        patch_hub()

    if not torch.cuda.is_available():
        raise RuntimeError("serve_rm needs at least one GPU")
    torch.backends.cuda.matmul.allow_tf32 = True
    pynvml.nvmlInit()

    # server
    reward_model = RewardModelProxy(args)
    warmup(reward_model)
    scorer = RuleAndModelReward(reward_model, args.rule_format_weight) if args.rule_format_weight > 0 else None
    app = FastAPI()

    @app.post("/get_reward")
    async def get_reward(request: Request):
        data = await request.json()
        queries = data.get("query")
        rewards = scorer(queries) if scorer is not None else reward_model.get_reward(queries)
        result = {"rewards": rewards, "scores": rewards, "extra_logs": {"dummy_scores": rewards}}
        logger.info(f"Sent JSON: {result}")
        return JSONResponse(result)

    @app.get("/health")
    async def health():
        return JSONResponse(device_health(0))

    uvicorn.run(app, host=args.host, port=args.port, log_level="info")
