"""Evaluate a trained spaCy NER + entity-linking pipeline and dump per-label metrics.

    python scripts/evaluate_ner.py training/model-best corpus/dev.spacy --output training/metrics.json --gpu-id 0

With --hf-model the same dev set is also run through a Hugging Face token-classification
checkpoint, so the spaCy pipeline can be compared against a plain transformers baseline.
"""
import json
import time
from pathlib import Path
from typing import Dict, List, Optional

import spacy
import srsly
import torch
import typer
from spacy.scorer import Scorer
from spacy.tokens import DocBin
from spacy.training import Example
from thinc.api import require_gpu, set_gpu_allocator

try:
    import cupy

    HAS_CUPY = True
except ImportError:
    HAS_CUPY = False

app = typer.Typer()


def setup_device(gpu_id: int) -> bool:
    """Route spaCy/thinc to the GPU and let PyTorch own the memory pool so that the
    transformer and the thinc layers don't fight over two separate allocators."""
    if gpu_id < 0:
        spacy.require_cpu()
        return False
    set_gpu_allocator("pytorch")
    require_gpu(gpu_id)
    torch.cuda.set_device(gpu_id)
    return True


def free_gpu_memory() -> None:
    if HAS_CUPY:
        cupy.get_default_memory_pool().free_all_blocks()
        cupy.get_default_pinned_memory_pool().free_all_blocks()
    torch.cuda.empty_cache()


def per_label_scores(scores: Dict) -> Dict[str, Dict[str, float]]:
    out = {}
    for label, vals in scores.get("ents_per_type", {}).items():
        out[label] = {k: round(v, 4) for k, v in vals.items()}
    return out


def run_hf_baseline(model_name: str, docs: List, device: str, batch_size: int) -> Dict[str, float]:
    from transformers import AutoModelForTokenClassification, AutoTokenizer, pipeline

    tokenizer = AutoTokenizer.from_pretrained(model_name)
    model = AutoModelForTokenClassification.from_pretrained(model_name, torch_dtype=torch.float16)
    ner = pipeline(
        "token-classification",
        model=model,
        tokenizer=tokenizer,
        aggregation_strategy="simple",
        device=torch.device(device),
    )
    texts = [doc.text for doc in docs]
    t0 = time.perf_counter()
    preds = ner(texts, batch_size=batch_size)
    elapsed = time.perf_counter() - t0

    tp = fp = fn = 0
    for doc, pred in zip(docs, preds):
        gold = {(e.start_char, e.end_char, e.label_) for e in doc.ents}
        sys_ents = {(p["start"], p["end"], p["entity_group"]) for p in pred}
        tp += len(gold & sys_ents)
        fp += len(sys_ents - gold)
        fn += len(gold - sys_ents)
    p = tp / max(tp + fp, 1)
    r = tp / max(tp + fn, 1)
    f = 2 * p * r / max(p + r, 1e-9)
    return {"p": p, "r": r, "f": f, "docs_per_sec": len(docs) / elapsed}


@app.command()
def main(
    model: Path,
    data: Path,
    output: Optional[Path] = typer.Option(None, "--output", "-o"),
    gpu_id: int = typer.Option(0, "--gpu-id", "-g", help="GPU id, or -1 for CPU"),
    batch_size: int = typer.Option(64, "--batch-size", "-b"),
    hf_model: Optional[str] = typer.Option(None, "--hf-model", help="optional transformers NER baseline"),
):
    on_gpu = setup_device(gpu_id)
    nlp = spacy.load(model)
    doc_bin = DocBin().from_disk(data)
    gold_docs = list(doc_bin.get_docs(nlp.vocab))

    examples = []
    t0 = time.perf_counter()
    pred_docs = list(nlp.pipe((d.text for d in gold_docs), batch_size=batch_size))
    elapsed = time.perf_counter() - t0
    for pred, gold in zip(pred_docs, gold_docs):
        examples.append(Example(pred, gold))

    scorer = Scorer(nlp)
    scores = scorer.score(examples)
    n_words = sum(len(d) for d in gold_docs)
    results = {
        "ents_p": scores.get("ents_p"),
        "ents_r": scores.get("ents_r"),
        "ents_f": scores.get("ents_f"),
        "nel_micro_f": scores.get("nel_micro_f"),
        "per_label": per_label_scores(scores),
        "words_per_second": n_words / elapsed,
        "device": f"cuda:{gpu_id}" if on_gpu else "cpu",
    }
    if on_gpu:
        results["gpu_name"] = torch.cuda.get_device_name(gpu_id)
        results["peak_mem_mb"] = torch.cuda.max_memory_allocated(gpu_id) / 2**20
        free_gpu_memory()

    if hf_model is not None:
        device = f"cuda:{gpu_id}" if on_gpu else "cpu"
        results["hf_baseline"] = run_hf_baseline(hf_model, gold_docs, device, batch_size)

    typer.echo(json.dumps(results, indent=2))
    if output is not None:
        srsly.write_json(output, results)


if __name__ == "__main__":
    app()
