"""
Offline batch RAG: retrieve passages with a dense retriever, then generate answers for a whole
question file with vLLM.

    CUDA_VISIBLE_DEVICES=0,1,2,3 python scripts/rag_vllm_offline.py \
        --questions data/nq_test.jsonl --index indexes/wiki-bge --out runs/nq_rag.jsonl
"""
import argparse
import json
import os
import time

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0,1,2,3")
os.environ.setdefault("VLLM_ATTENTION_BACKEND", "FLASHINFER")
os.environ["TOKENIZERS_PARALLELISM"] = "false"

import faiss  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402
from transformers import AutoTokenizer  # noqa: E402
from vllm import LLM, SamplingParams  # noqa: E402

PROMPT = (
    "Answer the question using the passages. Give a short answer.\n\n"
    "{passages}\n\nQuestion: {question}\nAnswer:"
)


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", required=True)
    ap.add_argument("--index", required=True, help="dir with index.faiss, passages.jsonl")
    ap.add_argument("--out", required=True)
    ap.add_argument("--retriever", default="BAAI/bge-base-en-v1.5")
    ap.add_argument("--generator", default="Qwen/Qwen2-7B-Instruct-AWQ")
    ap.add_argument("--quantization", default="awq")
    ap.add_argument("--top-k", type=int, default=5)
    ap.add_argument("--max-model-len", type=int, default=8192)
    ap.add_argument("--gpu-memory-utilization", type=float, default=0.85)
    ap.add_argument("--max-tokens", type=int, default=64)
    return ap.parse_args()


def load_passages(path):
    with open(path) as f:
        return [json.loads(l) for l in f]


def retrieve(args, questions):
    index = faiss.read_index(os.path.join(args.index, "index.faiss"))
    passages = load_passages(os.path.join(args.index, "passages.jsonl"))

    retriever = SentenceTransformer(args.retriever, device="cuda")
    retriever.half()
    q_emb = retriever.encode(
        ["Represent this sentence for searching relevant passages: " + q for q in questions],
        batch_size=256,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=True,
    ).astype(np.float32)

    scores, ids = index.search(q_emb, args.top_k)

    # free the retriever before vLLM grabs its share of device memory
    del retriever
    torch.cuda.empty_cache()
    return [[passages[i] for i in row if i >= 0] for row in ids], scores


def build_prompts(tokenizer, questions, contexts):
    prompts = []
    for q, ctx in zip(questions, contexts):
        passages = "\n\n".join(f"[{i + 1}] {p['title']}: {p['text']}" for i, p in enumerate(ctx))
        messages = [{"role": "user", "content": PROMPT.format(passages=passages, question=q)}]
        prompts.append(tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True))
    return prompts


def main():
    args = parse_args()
    with open(args.questions) as f:
        rows = [json.loads(l) for l in f]
    questions = [r["question"] for r in rows]

    t0 = time.time()
    contexts, _ = retrieve(args, questions)
    print(f"retrieval: {time.time() - t0:.1f}s for {len(questions)} questions")

    tokenizer = AutoTokenizer.from_pretrained(args.generator)
    prompts = build_prompts(tokenizer, questions, contexts)

    llm = LLM(
        model=args.generator,
        quantization=args.quantization,
        tensor_parallel_size=torch.cuda.device_count(),
        gpu_memory_utilization=args.gpu_memory_utilization,
        max_model_len=args.max_model_len,
        dtype="float16",
        enforce_eager=False,
        seed=0,
    )
    sampling = SamplingParams(temperature=0.0, max_tokens=args.max_tokens, stop=["\n\n"])

    t0 = time.time()
    outputs = llm.generate(prompts, sampling)
    dt = time.time() - t0
    n_tok = sum(len(o.outputs[0].token_ids) for o in outputs)
    print(f"generation: {dt:.1f}s, {n_tok / dt:.0f} tok/s")

    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        for row, ctx, out in zip(rows, contexts, outputs):
            row = dict(row)
            row["prediction"] = out.outputs[0].text.strip()
            row["retrieved"] = [p["id"] for p in ctx]
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
