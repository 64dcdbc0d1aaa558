#!/usr/bin/env python
"""Convert an OpenNMT-py checkpoint to CTranslate2 and translate files with it.

    python tools/ct2_translate.py convert --model run/model_avg10.pt \
        --output_dir ct2_ende --quantization int8_float16

    python tools/ct2_translate.py translate --model_dir ct2_ende \
        --sp_model data/wmt14_ende/wmtende.model \
        --src test.en --output hyp.de --device_index 0 1

Throughput on 2 x A100 with int8_float16 is ~10x onmt_translate fp16.
"""
import argparse
import logging
import os
import sys
import time

import ctranslate2
import sentencepiece as spm

logger = logging.getLogger("ct2_translate")

# Use the CUB caching allocator: much faster than the default cudaMalloc
# when batch shapes vary a lot (token batching).
os.environ.setdefault("CT2_CUDA_ALLOCATOR", "cub_caching")
# Let CTranslate2 use packed GEMM on CPU fallback hosts.
os.environ.setdefault("CT2_USE_EXPERIMENTAL_PACKED_GEMM", "1")


def convert(args):
    from ctranslate2.converters import OpenNMTPyConverter

    converter = OpenNMTPyConverter(args.model)
    output_dir = converter.convert(
        args.output_dir, quantization=args.quantization, force=args.force
    )
    logger.info("Converted %s -> %s (%s)", args.model, output_dir, args.quantization)


def pick_device(requested):
    """'auto' means: the first CUDA device if there is one, else CPU."""
    if requested == "auto":
        return "cuda" if ctranslate2.get_cuda_device_count() > 0 else "cpu"
    return requested


def pick_compute_type(device, requested):
    if requested != "auto":
        return requested
    if device == "cuda":
        return "int8_float16"
    return "int8"


def read_batches(path, sp, max_batch_lines):
    batch = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            batch.append(sp.encode(line.rstrip("\n"), out_type=str))
            if len(batch) == max_batch_lines:
                yield batch
                batch = []
    if batch:
        yield batch


def translate(args):
    device = pick_device(args.device)
    compute_type = pick_compute_type(device, args.compute_type)
    logger.info(
        "Loading %s on %s:%s (%s)", args.model_dir, device, args.device_index, compute_type
    )
    translator = ctranslate2.Translator(
        args.model_dir,
        device=device,
        device_index=args.device_index,
        compute_type=compute_type,
        inter_threads=len(args.device_index) if device == "cuda" else 1,
        intra_threads=args.intra_threads,
    )

    sp = spm.SentencePieceProcessor(model_file=args.sp_model)
    n_lines, n_tokens = 0, 0
    start = time.time()
    with open(args.output, "w", encoding="utf-8") as out:
        for batch in read_batches(args.src, sp, args.read_batch_lines):
            results = translator.translate_batch(
                batch,
                max_batch_size=args.max_batch_size,
                batch_type="tokens",
                beam_size=args.beam_size,
                length_penalty=args.length_penalty,
                max_decoding_length=args.max_decoding_length,
                asynchronous=False,
            )
            for res in results:
                tokens = res.hypotheses[0]
                n_tokens += len(tokens)
                out.write(sp.decode(tokens) + "\n")
            n_lines += len(batch)
    elapsed = time.time() - start
    logger.info(
        "Translated %d lines (%d tokens) in %.1fs: %.1f tok/s",
        n_lines,
        n_tokens,
        elapsed,
        n_tokens / max(elapsed, 1e-6),
    )


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    p_conv = sub.add_parser("convert", help="OpenNMT-py .pt -> CTranslate2 directory")
    p_conv.add_argument("--model", required=True)
    p_conv.add_argument("--output_dir", required=True)
    p_conv.add_argument(
        "--quantization",
        default="int8_float16",
        choices=["int8", "int8_float16", "int16", "float16", "float32"],
    )
    p_conv.add_argument("--force", action="store_true")

    p_tr = sub.add_parser("translate", help="translate a raw text file")
    p_tr.add_argument("--model_dir", required=True)
    p_tr.add_argument("--sp_model", required=True)
    p_tr.add_argument("--src", required=True)
    p_tr.add_argument("--output", required=True)
    p_tr.add_argument("--device", default="cuda", choices=["auto", "cpu", "cuda"])
    p_tr.add_argument("--device_index", type=int, nargs="+", default=[0])
    p_tr.add_argument("--compute_type", default="auto")
    p_tr.add_argument("--intra_threads", type=int, default=4)
    p_tr.add_argument("--beam_size", type=int, default=4)
    p_tr.add_argument("--length_penalty", type=float, default=0.6)
    p_tr.add_argument("--max_batch_size", type=int, default=4096)
    p_tr.add_argument("--max_decoding_length", type=int, default=256)
    p_tr.add_argument("--read_batch_lines", type=int, default=20000)
    return parser


def main():
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    args = build_parser().parse_args()
    if args.command == "convert":
        convert(args)
    else:
        translate(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
