"""Batch transcription with Parakeet-TDT (NeMo) + word timestamps, writing one JSONL per shard.

    CUDA_VISIBLE_DEVICES=2 python nemo_asr/parakeet_batch_infer.py \
        --manifest data/eval_clean.jsonl --out preds/eval_clean.parakeet.jsonl --batch-size 32

Long files (> ~24 min) need local attention: pass --long-form.
"""
import argparse
import json
import logging
import os
import time
from pathlib import Path

import torch
from omegaconf import open_dict

import nemo.collections.asr as nemo_asr
from nemo.collections.asr.parts.utils.rnnt_utils import Hypothesis

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
log = logging.getLogger("parakeet")


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="nvidia/parakeet-tdt-0.6b-v2")
    ap.add_argument("--manifest", required=True, help="NeMo-style JSONL with audio_filepath[, duration, text]")
    ap.add_argument("--out", required=True)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--num-workers", type=int, default=4)
    ap.add_argument("--bf16", action="store_true", default=True)
    ap.add_argument("--no-cuda-graphs", action="store_true", help="disable CUDA-graph TDT decoder")
    ap.add_argument("--long-form", action="store_true", help="use rel_pos_local_attn for >24min audio")
    ap.add_argument("--timestamps", action="store_true")
    return ap.parse_args()


def read_manifest(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load_model(name: str, long_form: bool, use_cuda_graphs: bool):
    if name.endswith(".nemo"):
        model = nemo_asr.models.ASRModel.restore_from(name, map_location="cpu")
    else:
        model = nemo_asr.models.ASRModel.from_pretrained(model_name=name, map_location="cpu")

    if long_form:
        # switch to local attention + chunked subsampling so 1h+ files fit in memory
        model.change_attention_model("rel_pos_local_attn", [256, 256])
        model.change_subsampling_conv_chunking_factor(1)

    decoding_cfg = model.cfg.decoding
    with open_dict(decoding_cfg):
        decoding_cfg.strategy = "greedy_batch"
        decoding_cfg.greedy.use_cuda_graph_decoder = use_cuda_graphs
        decoding_cfg.greedy.max_symbols = 10
        decoding_cfg.fused_batch_size = -1
    model.change_decoding_strategy(decoding_cfg)

    model = model.cuda()
    model.eval()
    return model


def hyp_to_record(item: dict, hyp, with_ts: bool) -> dict:
    text = hyp.text if isinstance(hyp, Hypothesis) else str(hyp)
    rec = {"audio_filepath": item["audio_filepath"], "pred_text": text}
    if "text" in item:
        rec["text"] = item["text"]
    if with_ts and isinstance(hyp, Hypothesis) and hyp.timestamp:
        rec["words"] = [
            {"word": w["word"], "start": round(w["start"], 3), "end": round(w["end"], 3)}
            for w in hyp.timestamp.get("word", [])
        ]
    return rec


def main():
    args = parse_args()
    torch.backends.cudnn.benchmark = True

    items = read_manifest(args.manifest)
    total_dur = sum(it.get("duration", 0.0) for it in items)
    log.info("manifest: %d utterances, %.1f h", len(items), total_dur / 3600)

    model = load_model(args.model, args.long_form, use_cuda_graphs=not args.no_cuda_graphs)
    log.info("loaded %s on %s (%s)", args.model, next(model.parameters()).device, torch.cuda.get_device_name())

    paths = [it["audio_filepath"] for it in items]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)

    t0 = time.time()
    with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.bf16):
        hyps = model.transcribe(
            paths,
            batch_size=args.batch_size,
            num_workers=args.num_workers,
            timestamps=args.timestamps,
            return_hypotheses=True,
            verbose=True,
        )
    torch.cuda.synchronize()
    elapsed = time.time() - t0
    if isinstance(hyps, tuple):
        hyps = hyps[0]

    with open(args.out, "w", encoding="utf-8") as f:
        for item, hyp in zip(items, hyps):
            f.write(json.dumps(hyp_to_record(item, hyp, args.timestamps), ensure_ascii=False) + "\n")

    rtfx = total_dur / elapsed if elapsed > 0 else float("nan")
    log.info("done in %.1fs, RTFx=%.1f, peak mem %.2f GiB", elapsed, rtfx, torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main()
