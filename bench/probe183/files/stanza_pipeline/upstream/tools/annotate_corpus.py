"""Annotate a multilingual corpus with Stanza (tokenize, POS, lemma, depparse, NER).

Input is a directory of plain-text files named ``<lang>/<doc_id>.txt``; output
is one CoNLL-U file per document plus an ``entities.tsv`` with NER spans.

    python tools/annotate_corpus.py corpus/ annotated/ --langs en,de,zh --gpu

Stanza moves every processor to the GPU when ``use_gpu=True`` and CUDA is
visible, so one process per GPU is the sweet spot. Use --device to pin a
particular card when several jobs share a machine.
"""
import argparse
import csv
import logging
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, Iterable, List, Tuple

import stanza
import torch
from stanza.utils.conll import CoNLL

logger = logging.getLogger("annotate")

PROCESSORS = "tokenize,mwt,pos,lemma,depparse,ner"
# languages without multi-word tokens (mwt would be a no-op but raises if unavailable)
NO_MWT = {"en", "zh", "ja", "ko", "vi"}


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input_dir", type=Path)
    p.add_argument("output_dir", type=Path)
    p.add_argument("--langs", default="en", help="comma separated language codes")
    p.add_argument("--gpu", action="store_true", help="run the neural processors on the GPU")
    p.add_argument("--device", default=None, help="explicit torch device, e.g. cuda:1")
    p.add_argument("--tokenize-batch-size", type=int, default=64)
    p.add_argument("--pos-batch-size", type=int, default=3000)
    p.add_argument("--depparse-batch-size", type=int, default=5000)
    p.add_argument("--ner-batch-size", type=int, default=64)
    p.add_argument("--model-dir", default=os.environ.get("STANZA_RESOURCES_DIR"))
    p.add_argument("--io-threads", type=int, default=4)
    return p.parse_args()


def processors_for(lang: str) -> str:
    if lang in NO_MWT:
        return PROCESSORS.replace("mwt,", "")
    return PROCESSORS


def build_pipeline(lang: str, args: argparse.Namespace) -> stanza.Pipeline:
    kwargs = dict(
        lang=lang,
        processors=processors_for(lang),
        tokenize_batch_size=args.tokenize_batch_size,
        pos_batch_size=args.pos_batch_size,
        depparse_batch_size=args.depparse_batch_size,
        ner_batch_size=args.ner_batch_size,
        download_method=stanza.DownloadMethod.REUSE_RESOURCES,
        logging_level="WARN",
    )
    if args.model_dir:
        kwargs["dir"] = args.model_dir
    if args.device is not None:
        kwargs["device"] = args.device
    else:
        kwargs["use_gpu"] = args.gpu
    nlp = stanza.Pipeline(**kwargs)
    logger.info("[%s] pipeline ready on %s", lang, getattr(nlp, "device", "cuda" if args.gpu else "cpu"))
    return nlp


def iter_documents(input_dir: Path, lang: str) -> Iterable[Tuple[str, str]]:
    lang_dir = input_dir / lang
    if not lang_dir.is_dir():
        logger.warning("no directory for language %s", lang)
        return
    for path in sorted(lang_dir.glob("*.txt")):
        yield path.stem, path.read_text(encoding="utf-8")


def write_outputs(doc, doc_id: str, lang: str, out_dir: Path, ent_writer) -> None:
    conll_path = out_dir / lang / f"{doc_id}.conllu"
    conll_path.parent.mkdir(parents=True, exist_ok=True)
    CoNLL.write_doc2conll(doc, str(conll_path))
    for ent in doc.ents:
        ent_writer.writerow([lang, doc_id, ent.start_char, ent.end_char, ent.type, ent.text])


def annotate_language(lang: str, args: argparse.Namespace, ent_writer) -> Dict[str, float]:
    nlp = build_pipeline(lang, args)
    stats = {"docs": 0, "tokens": 0, "seconds": 0.0}
    pool = ThreadPoolExecutor(max_workers=args.io_threads)
    futures = []
    for doc_id, text in iter_documents(args.input_dir, lang):
        start = time.perf_counter()
        doc = nlp(text)
        stats["seconds"] += time.perf_counter() - start
        stats["docs"] += 1
        stats["tokens"] += doc.num_tokens
        futures.append(pool.submit(write_outputs, doc, doc_id, lang, args.output_dir, ent_writer))
    for f in futures:
        f.result()
    pool.shutdown()
    # models for the next language should not fight with this one for GPU memory
    del nlp
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    return stats


def main() -> int:
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.gpu and not torch.cuda.is_available():
        logger.warning("--gpu given but CUDA is not available; Stanza will fall back to CPU")
    args.output_dir.mkdir(parents=True, exist_ok=True)
    langs = [l.strip() for l in args.langs.split(",") if l.strip()]
    with open(args.output_dir / "entities.tsv", "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, delimiter="\t")
        writer.writerow(["lang", "doc_id", "start", "end", "type", "text"])
        for lang in langs:
            stats = annotate_language(lang, args, writer)
            tps = stats["tokens"] / max(stats["seconds"], 1e-6)
            logger.info("[%s] %d docs, %d tokens, %.0f tokens/s", lang, stats["docs"], stats["tokens"], tps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
