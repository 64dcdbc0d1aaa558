"""Batch text-to-SQL inference with vLLM (greedy or self-consistency sampling).

Input: a json list of {"input_seq": <prompt>, "db_id", "question", ...} produced by
prepare_prompts.py. Output: the same list with "responses" and "pred_sqls" filled in.

    python infer/vllm_batch_infer.py --pretrained_model_name_or_path seeklhy/OmniSQL-7B \
        --input_file data/spider_dev_prompts.json --output_file results/omnisql7b_spider_dev.json \
        --n 8 --temperature 0.8 --visible_devices 0,1,2,3
"""
import argparse
import gc
import json
import os
import re
from collections import Counter

import torch
from tqdm import tqdm
from transformers import AutoTokenizer

os.environ.setdefault("VLLM_WORKER_MULTIPROC_METHOD", "spawn")
# FlashAttention backend gives the best throughput for long schema prompts on A100/H100
os.environ.setdefault("VLLM_ATTENTION_BACKEND", "FLASH_ATTN")

from vllm import LLM, SamplingParams  # noqa: E402


def parse_response(response: str) -> str:
    """Extract the last ```sql ... ``` block; fall back to the raw text."""
    pattern = r"```sql\s*(.*?)\s*```"
    sql_blocks = re.findall(pattern, response, re.DOTALL)
    if sql_blocks:
        last_sql = sql_blocks[-1].strip()
        return last_sql
    return response.strip()


def majority_vote(sqls, db_path, execute_fn):
    """Self-consistency: group candidate SQLs by execution result and return one from the biggest group."""
    results = []
    for sql in sqls:
        res = execute_fn(db_path, sql)
        if res is None:
            continue
        results.append((sql, frozenset(map(tuple, res))))
    if not results:
        return sqls[0] if sqls else "SELECT"
    counter = Counter(r for _, r in results)
    best = counter.most_common(1)[0][0]
    return next(sql for sql, r in results if r == best)


def release_llm(llm):
    """Free the engine between models when sweeping several checkpoints in one process."""
    from vllm.distributed.parallel_state import destroy_distributed_environment, destroy_model_parallel

    destroy_model_parallel()
    destroy_distributed_environment()
    del llm.llm_engine.model_executor
    del llm
    gc.collect()
    torch.cuda.empty_cache()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pretrained_model_name_or_path", type=str, required=True)
    parser.add_argument("--input_file", type=str, required=True)
    parser.add_argument("--output_file", type=str, required=True)
    parser.add_argument("--tensor_parallel_size", type=int, default=None,
                        help="defaults to the number of visible GPUs")
    parser.add_argument("--n", type=int, default=1, help="sampled responses per prompt")
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--max_tokens", type=int, default=2048)
    parser.add_argument("--max_model_len", type=int, default=8192)
    parser.add_argument("--gpu_memory_utilization", type=float, default=0.92)
    parser.add_argument("--visible_devices", type=str, default="0,1,2,3")
    parser.add_argument("--self_consistency", action="store_true")
    opt = parser.parse_args()
    print(opt)

    os.environ["CUDA_VISIBLE_DEVICES"] = opt.visible_devices
    tensor_parallel_size = opt.tensor_parallel_size or torch.cuda.device_count()

    input_dataset = json.load(open(opt.input_file))
    tokenizer = AutoTokenizer.from_pretrained(opt.pretrained_model_name_or_path, trust_remote_code=True)

    if "Qwen2.5-" in opt.pretrained_model_name_or_path or "OmniSQL-" in opt.pretrained_model_name_or_path:
        stop_token_ids = [151645]  # 151645 is the token id of <|im_end|> (end of turn token in Qwen2.5)
    elif "deepseek-coder-" in opt.pretrained_model_name_or_path:
        stop_token_ids = [32021]
    elif "Meta-Llama-3.1-" in opt.pretrained_model_name_or_path:
        stop_token_ids = [128009, 128001]
    else:
        print("Use Qwen2.5's stop tokens by default.")
        stop_token_ids = [151645]
    print("stop_token_ids:", stop_token_ids)

    max_model_len = opt.max_model_len
    print("max_model_len:", max_model_len)

    sampling_params = SamplingParams(
        temperature=opt.temperature,
        max_tokens=opt.max_tokens,
        n=opt.n,
        stop_token_ids=stop_token_ids,
    )

    llm = LLM(
        model=opt.pretrained_model_name_or_path,
        dtype="bfloat16",
        tensor_parallel_size=tensor_parallel_size,
        max_model_len=max_model_len,
        gpu_memory_utilization=opt.gpu_memory_utilization,
        swap_space=42,
        enforce_eager=True,
        disable_custom_all_reduce=True,
        trust_remote_code=True,
    )

    chat_prompts = [
        tokenizer.apply_chat_template(
            [{"role": "user", "content": data["input_seq"]}],
            add_generation_prompt=True,
            tokenize=False,
        )
        for data in input_dataset
    ]

    outputs = llm.generate(chat_prompts, sampling_params)

    results = []
    for data, output in tqdm(zip(input_dataset, outputs), total=len(input_dataset)):
        responses = [o.text for o in output.outputs]
        sqls = [parse_response(response) for response in responses]

        data["responses"] = responses
        data["pred_sqls"] = sqls
        if opt.self_consistency and len(sqls) > 1:
            from utils.db_utils import execute_sql_with_timeout

            data["pred_sql"] = majority_vote(sqls, data["db_path"], execute_sql_with_timeout)
        else:
            data["pred_sql"] = sqls[0]
        results.append(data)

    os.makedirs(os.path.dirname(os.path.abspath(opt.output_file)), exist_ok=True)
    with open(opt.output_file, "w", encoding="utf-8") as f:
        f.write(json.dumps(results, indent=2, ensure_ascii=False))

    release_llm(llm)


if __name__ == "__main__":
    main()
