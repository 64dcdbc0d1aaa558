# -*- coding: utf-8 -*-
import argparse
import os
import sys
import time

import torch
from tqdm import tqdm
from transformers import BartForConditionalGeneration, BertTokenizer

parser = argparse.ArgumentParser()
parser.add_argument("-m", "--model_path", required=True)
parser.add_argument("-i", "--input_path", required=True)
parser.add_argument("-o", "--output_path", required=True)
parser.add_argument("-b", "--batch_size", type=int, default=50)
parser.add_argument("--beam", type=int, default=10)
parser.add_argument("--max_length", type=int, default=128)
parser.add_argument("--gpu", type=str, default="0")
parser.add_argument("--fp16", action="store_true")
args = parser.parse_args()

os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu
device = "cuda" if torch.cuda.is_available() else "cpu"

tokenizer = BertTokenizer.from_pretrained(args.model_path)
model = BartForConditionalGeneration.from_pretrained(args.model_path)
model.eval()
model.to(device)
if args.fp16:
    model.half()


def split_sentence(document: str, flag: str = "all", limit: int = 510):
    """Split a long Chinese document into sentences (max ``limit`` characters)."""
    sent_list = []
    try:
        if flag == "zh":
            document = document.replace("。", "。\n").replace("！", "！\n").replace("？", "？\n")
        elif flag == "en":
            document = document.replace(". ", ".\n").replace("! ", "!\n").replace("? ", "?\n")
        else:
            for ch in ["。", "！", "？", ". ", "! ", "? "]:
                document = document.replace(ch, ch.strip() + "\n")
        sent_list_ori = document.splitlines()
        for sent in sent_list_ori:
            sent = sent.strip()
            if not sent:
                continue
            while len(sent) > limit:
                temp = sent[0:limit]
                sent_list.append(temp)
                sent = sent[limit:]
            sent_list.append(sent)
    except Exception:
        sent_list.clear()
        sent_list.append(document)
    return sent_list


def predict(sents):
    batch = tokenizer(sents, return_tensors="pt", padding=True,
                      truncation=True, max_length=args.max_length)
    batch.pop("token_type_ids", None)
    batch = {k: v.cuda() for k, v in batch.items()}
    with torch.no_grad():
        outputs = model.generate(**batch,
                                 num_beams=args.beam,
                                 max_length=args.max_length,
                                 early_stopping=True)
    results = tokenizer.batch_decode(outputs, skip_special_tokens=True)
    # BertTokenizer decodes with spaces between Chinese characters
    return [r.replace(" ", "") for r in results]


def main():
    with open(args.input_path, "r", encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f]
    ids, sents = [], []
    for line in lines:
        parts = line.split("\t")
        if len(parts) == 2:
            ids.append(parts[0])
            sents.append(parts[1])
        else:
            ids.append(str(len(ids)))
            sents.append(parts[0])

    start = time.time()
    outputs = []
    for i in tqdm(range(0, len(sents), args.batch_size)):
        outputs.extend(predict(sents[i:i + args.batch_size]))
        if i % (args.batch_size * 20) == 0:
            torch.cuda.empty_cache()
    elapsed = time.time() - start
    print(f"Decoded {len(sents)} sentences in {elapsed:.1f}s "
          f"({len(sents) / max(elapsed, 1e-6):.1f} sent/s) on GPU {args.gpu}", file=sys.stderr)

    with open(args.output_path, "w", encoding="utf-8") as f:
        for sid, out in zip(ids, outputs):
            f.write(sid + "\t" + out + "\n")


if __name__ == "__main__":
    main()
