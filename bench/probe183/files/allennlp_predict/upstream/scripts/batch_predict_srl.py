#!/usr/bin/env python
"""Run the AllenNLP SRL + coreference models over a JSONL corpus.

Reads one document per line ({"id": ..., "text": ...}), splits sentences with
spaCy, runs semantic role labelling on every sentence and coreference on every
document, and writes the merged annotations to another JSONL file.

    python scripts/batch_predict_srl.py data/news.jsonl out/news.srl.jsonl \
        --cuda-device 0 --batch-size 64

Models are downloaded from the AllenNLP public bucket on first use.
"""
import argparse
import json
import logging
import os
import sys
import time
from typing import Dict, Iterator, List

import spacy
import torch
from allennlp.common.util import import_module_and_submodules
from allennlp.predictors.predictor import Predictor
from tqdm import tqdm

SRL_MODEL = "https://storage.googleapis.com/allennlp-public-models/structured-prediction-srl-bert.2020.12.15.tar.gz"
COREF_MODEL = "https://storage.googleapis.com/allennlp-public-models/coref-spanbert-large-2021.03.10.tar.gz"

logger = logging.getLogger("batch_predict")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input", help="input JSONL")
    parser.add_argument("output", help="output JSONL")
    parser.add_argument("--cuda-device", type=int, default=0 if torch.cuda.is_available() else -1)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--skip-coref", action="store_true")
    parser.add_argument("--max-doc-chars", type=int, default=20000)
    parser.add_argument("--fp16", action="store_true", help="cast the SRL model to half precision (GPU only)")
    return parser.parse_args()


def read_jsonl(path: str) -> Iterator[Dict]:
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                yield json.loads(line)


def load_predictors(cuda_device: int, skip_coref: bool, fp16: bool):
    import_module_and_submodules("allennlp_models")
    srl = Predictor.from_path(SRL_MODEL, predictor_name="semantic_role_labeling", cuda_device=cuda_device)
    if fp16 and cuda_device >= 0:
        srl._model.half()
    coref = None
    if not skip_coref:
        coref = Predictor.from_path(COREF_MODEL, cuda_device=cuda_device)
    return srl, coref


def predict_srl(srl, sentences: List[str], batch_size: int) -> List[Dict]:
    results: List[Dict] = []
    for i in range(0, len(sentences), batch_size):
        batch = [{"sentence": s} for s in sentences[i : i + batch_size]]
        with torch.no_grad():
            results.extend(srl.predict_batch_json(batch))
    return results


def main() -> int:
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    if args.cuda_device >= 0:
        torch.cuda.set_device(args.cuda_device)
        logger.info("using GPU %d (%s)", args.cuda_device, torch.cuda.get_device_name(args.cuda_device))
    else:
        logger.info("running on CPU; this will be slow")

    nlp = spacy.load("en_core_web_sm", disable=["ner", "lemmatizer"])
    srl, coref = load_predictors(args.cuda_device, args.skip_coref, args.fp16)

    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    n_docs = n_sents = 0
    start = time.time()
    with open(args.output, "w", encoding="utf-8") as out:
        for doc in tqdm(read_jsonl(args.input), desc="docs"):
            text = doc["text"][: args.max_doc_chars]
            sentences = [s.text for s in nlp(text).sents if s.text.strip()]
            try:
                srl_out = predict_srl(srl, sentences, args.batch_size)
            except RuntimeError as err:
                if "out of memory" not in str(err):
                    raise
                logger.warning("OOM on doc %s, retrying sentence by sentence", doc.get("id"))
                torch.cuda.empty_cache()
                srl_out = predict_srl(srl, sentences, 1)
            record = {"id": doc.get("id"), "srl": srl_out}
            if coref is not None:
                record["coref"] = coref.predict(document=text)["clusters"]
            out.write(json.dumps(record) + "\n")
            n_docs += 1
            n_sents += len(sentences)

    elapsed = time.time() - start
    logger.info("%d docs / %d sentences in %.1fs (%.1f sent/s)", n_docs, n_sents, elapsed, n_sents / max(elapsed, 1e-6))
    if args.cuda_device >= 0:
        logger.info("peak GPU memory %.2f GiB", torch.cuda.max_memory_allocated() / 2 ** 30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
