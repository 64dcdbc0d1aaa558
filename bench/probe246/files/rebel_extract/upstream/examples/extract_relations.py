"""Extract (head, relation, tail) triplets from raw text with REBEL.

    python examples/extract_relations.py --input news.jsonl --output triplets.jsonl --batch_size 16

Two code paths:
  * --use_pipeline : the transformers text2text-generation pipeline (simplest, one GPU)
  * default        : manual batching with model.generate (faster, supports fp16)
"""
import argparse
import json
import sys
import time

import torch
from tqdm import tqdm
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, pipeline

MODEL_NAME = "Babelscape/rebel-large"


def extract_triplets(text):
    triplets = []
    relation, subject, object_ = "", "", ""
    text = text.strip()
    current = "x"
    for token in text.replace("<s>", "").replace("<pad>", "").replace("</s>", "").split():
        if token == "<triplet>":
            current = "t"
            if relation != "":
                triplets.append({"head": subject.strip(), "type": relation.strip(), "tail": object_.strip()})
                relation = ""
            subject = ""
        elif token == "<subj>":
            current = "s"
            if relation != "":
                triplets.append({"head": subject.strip(), "type": relation.strip(), "tail": object_.strip()})
            object_ = ""
        elif token == "<obj>":
            current = "o"
            relation = ""
        else:
            if current == "t":
                subject += " " + token
            elif current == "s":
                object_ += " " + token
            elif current == "o":
                relation += " " + token
    if subject != "" and relation != "" and object_ != "":
        triplets.append({"head": subject.strip(), "type": relation.strip(), "tail": object_.strip()})
    return triplets


def read_jsonl(path):
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                yield json.loads(line)


def run_pipeline(args, docs):
    # device=0 -> first GPU, -1 -> CPU
    triplet_extractor = pipeline(
        "text2text-generation",
        model=MODEL_NAME,
        tokenizer=MODEL_NAME,
        device=0 if not args.cpu else -1,
    )
    for doc in tqdm(docs, desc="pipeline"):
        out = triplet_extractor(doc["text"], return_tensors=True, return_text=False)
        decoded = triplet_extractor.tokenizer.batch_decode([out[0]["generated_token_ids"]])
        yield doc, extract_triplets(decoded[0])


def run_generate(args, docs):
    device = torch.device("cpu" if args.cpu else "cuda")
    tokenizer = AutoTokenizer.from_pretrained(MODEL_NAME)
    model = AutoModelForSeq2SeqLM.from_pretrained(
        MODEL_NAME, torch_dtype=torch.float16 if args.fp16 else torch.float32
    )
    model.to(device)
    model.eval()

    gen_kwargs = {
        "max_length": 256,
        "length_penalty": 0,
        "num_beams": args.num_beams,
        "num_return_sequences": 1,
    }

    for start in tqdm(range(0, len(docs), args.batch_size), desc="generate"):
        batch = docs[start : start + args.batch_size]
        model_inputs = tokenizer(
            [d["text"] for d in batch], max_length=256, padding=True, truncation=True, return_tensors="pt"
        )
        with torch.no_grad():
            generated_tokens = model.generate(
                model_inputs["input_ids"].to(model.device),
                attention_mask=model_inputs["attention_mask"].to(model.device),
                **gen_kwargs,
            )
        decoded_preds = tokenizer.batch_decode(generated_tokens, skip_special_tokens=False)
        for doc, pred in zip(batch, decoded_preds):
            yield doc, extract_triplets(pred)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--input", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--num_beams", type=int, default=3)
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--cpu", action="store_true")
    parser.add_argument("--use_pipeline", action="store_true")
    args = parser.parse_args()

    if not args.cpu and not torch.cuda.is_available():
        sys.exit("CUDA is not available; pass --cpu to run on the CPU")

    docs = list(read_jsonl(args.input))
    t0 = time.time()
    runner = run_pipeline if args.use_pipeline else run_generate
    n_triplets = 0
    with open(args.output, "w") as out:
        for doc, triplets in runner(args, docs):
            n_triplets += len(triplets)
            out.write(json.dumps({"id": doc.get("id"), "triplets": triplets}, ensure_ascii=False) + "\n")

    dt = time.time() - t0
    print(f"{len(docs)} documents, {n_triplets} triplets in {dt:.1f}s ({len(docs) / dt:.1f} docs/s)")
    if not args.cpu:
        print(f"peak GPU memory: {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
