"""Generate HumanEval(+) / MBPP(+) completions with vLLM for EvalPlus scoring.

    python experiments/text2code.py \
        --model_key ise-uiuc/Magicoder-S-DS-6.7B \
        --dataset humaneval --save_path evalplus-humaneval.jsonl \
        --n_problems_per_batch 28 --n_samples_per_problem 1 --n_batches 6 \
        --temperature 0.0 --max_new_tokens 512

Uses every visible GPU for tensor parallelism; restrict with CUDA_VISIBLE_DEVICES.
"""
import gc
import itertools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Literal, Optional, TypedDict, cast

import torch
from evalplus.data import get_human_eval_plus, get_mbpp_plus, write_jsonl
from tqdm.auto import tqdm
from transformers import AutoTokenizer, HfArgumentParser
from vllm import LLM, SamplingParams

MAGICODER_PROMPT = """You are an exceptionally intelligent coding assistant that consistently delivers accurate and reliable responses to user instructions.

@@ Instruction
{instruction}

@@ Response
"""

INSTRUCTION_HUMANEVAL = (
    "Write a solution to the following problem:\n```python\n{prompt}\n```"
)
INSTRUCTION_MBPP = "{prompt}"


class Text2CodeProblem(TypedDict):
    id: str
    instruction: str
    response_prefix: str


def get_humaneval_raw_problems() -> list[dict]:
    problems = get_human_eval_plus()
    return list(problems.values())


def get_mbpp_raw_problems() -> list[dict]:
    problems = get_mbpp_plus()
    return list(problems.values())


def map_humaneval_problem(p: dict) -> Text2CodeProblem:
    id = p["task_id"]
    prompt = p["prompt"]
    prompt = prompt.strip()
    instruction = INSTRUCTION_HUMANEVAL.format(prompt=prompt)
    response_prefix = f"""```python
{prompt}"""
    return Text2CodeProblem(
        id=str(id), instruction=instruction, response_prefix=response_prefix
    )


def map_mbpp_problem(p: dict) -> Text2CodeProblem:
    id = p["task_id"]
    prompt = p["prompt"]
    start_index = prompt.index('"""')
    end_index = prompt.rindex('"""')
    prompt = prompt[start_index + 3 : end_index]
    assert_index = prompt.index("assert")
    instruction = prompt[:assert_index].strip()
    if not instruction.endswith("."):
        instruction += "."
    assertion = prompt[assert_index:].strip()
    instruction = f"""{instruction} Your code should satisfy the following assertion:
```python
{assertion}
```"""
    response_prefix = f"""```python"""
    return Text2CodeProblem(
        id=str(id), instruction=instruction, response_prefix=response_prefix
    )


@dataclass(frozen=True)
class Args:
    model_key: str
    dataset: Literal["humaneval", "mbpp"]
    save_path: str

    n_batches: int
    n_problems_per_batch: int
    n_samples_per_problem: int

    model_name_or_path: Optional[str] = None
    temperature: float = field(default=0.0)
    max_new_tokens: int = field(default=512)
    top_p: float = field(default=1.0)

    # vLLM engine knobs
    gpu_memory_utilization: float = field(default=0.9)
    dtype: str = field(default="bfloat16")
    enforce_eager: bool = field(default=False)
    swap_space: int = field(default=4, metadata={"help": "CPU swap space per GPU (GiB)"})
    max_model_len: Optional[int] = field(default=None)


def chunked(seq: list, n: int) -> Iterable[list]:
    for i in range(0, len(seq), n):
        yield seq[i : i + n]


def build_llm(args: Args) -> LLM:
    model_path = args.model_name_or_path or args.model_key
    n_gpus = torch.cuda.device_count()
    if n_gpus == 0:
        raise RuntimeError("No CUDA device visible; vLLM needs at least one GPU")
    llm = LLM(
        model=model_path,
        tokenizer=model_path,
        tensor_parallel_size=torch.cuda.device_count(),
        gpu_memory_utilization=args.gpu_memory_utilization,
        dtype=args.dtype,
        enforce_eager=args.enforce_eager,
        swap_space=args.swap_space,
        max_model_len=args.max_model_len,
        seed=42,
    )
    return llm


def main():
    parser = HfArgumentParser(Args)
    args = cast(Args, parser.parse_args_into_dataclasses()[0])

    raw_problem_fn, map_problem_fn = (
        (get_humaneval_raw_problems, map_humaneval_problem)
        if args.dataset == "humaneval"
        else (get_mbpp_raw_problems, map_mbpp_problem)
    )
    raw_problems = raw_problem_fn()
    problems = list(map(map_problem_fn, raw_problems))

    llm = build_llm(args)
    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path or args.model_key)
    sampling_params = SamplingParams(
        n=args.n_samples_per_problem,
        temperature=args.temperature,
        top_p=args.top_p,
        max_tokens=args.max_new_tokens,
        stop=["\n```", "@@ Instruction"],
    )

    problems_chunked = list(chunked(list(problems), args.n_problems_per_batch))
    iter = itertools.islice(problems_chunked, args.n_batches)
    n_total = min(args.n_batches, len(problems_chunked))
    Path(args.save_path).write_text("")
    for problems in tqdm(iter, total=n_total):
        prompts = [
            MAGICODER_PROMPT.format(instruction=problem["instruction"])
            + problem["response_prefix"]
            for problem in problems
        ]
        all_prompts = prompts
        outputs = llm.generate(all_prompts, sampling_params, use_tqdm=False)
        samples = []
        for problem, output in zip(problems, outputs):
            for completion in output.outputs:
                samples.append(
                    dict(
                        task_id=problem["id"],
                        completion=completion.text,
                        solution=problem["response_prefix"] + completion.text,
                        n_tokens=len(completion.token_ids),
                    )
                )
        write_jsonl(args.save_path, samples, append=True)

    # release the engine (and its KV cache) before the process exits / next model is loaded
    del llm
    gc.collect()
    torch.cuda.empty_cache()
    print(f"Wrote {args.save_path} ({tokenizer.name_or_path})")


if __name__ == "__main__":
    main()
