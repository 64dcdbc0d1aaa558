"""Fast batched Whisper transcription from the command line.

    whisper-cli audio.mp3 --model openai/whisper-large-v3 --batch-size 24 --timestamp chunk --out transcript.json
"""
import argparse
import json
import os
import sys
import time

import torch
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from transformers import AutoModelForSpeechSeq2Seq, AutoProcessor, pipeline
from transformers.utils import is_flash_attn_2_available


def build_parser():
    parser = argparse.ArgumentParser(description="Automatic speech recognition with Whisper")
    parser.add_argument("file_name", type=str, help="path or URL to the audio file to be transcribed")
    parser.add_argument("--device-id", default="0", type=str,
                        help='device ID for your GPU; "mps" for Macs with Apple Silicon')
    parser.add_argument("--out", default="output.json", type=str)
    parser.add_argument("--model", default="openai/whisper-large-v3", type=str)
    parser.add_argument("--task", default="transcribe", choices=["transcribe", "translate"])
    parser.add_argument("--language", default=None, type=str)
    parser.add_argument("--batch-size", default=24, type=int)
    parser.add_argument("--chunk-length", default=30, type=int)
    parser.add_argument("--timestamp", default="chunk", choices=["chunk", "word"])
    parser.add_argument("--fp32", action="store_true", help="disable half precision")
    parser.add_argument("--compile", action="store_true", help="torch.compile the decoder (static cache)")
    return parser


def pick_device(device_id: str) -> str:
    if device_id == "mps":
        return "mps"
    return f"cuda:{device_id}"


def format_timestamp(seconds):
    if seconds is None:
        return "--:--:--,---"
    ms = int(round(seconds * 1000))
    h, ms = divmod(ms, 3_600_000)
    m, ms = divmod(ms, 60_000)
    s, ms = divmod(ms, 1000)
    return f"{h:02d}:{m:02d}:{s:02d},{ms:03d}"


def write_srt(chunks, path):
    with open(path, "w", encoding="utf8") as f:
        for i, ch in enumerate(chunks, 1):
            start, end = ch["timestamp"]
            f.write(f"{i}\n{format_timestamp(start)} --> {format_timestamp(end)}\n{ch['text'].strip()}\n\n")


def main(argv=None):
    args = build_parser().parse_args(argv)
    device = pick_device(args.device_id)
    dtype = torch.float32 if args.fp32 else torch.float16

    if device == "mps":
        torch.mps.empty_cache()
    else:
        torch.cuda.set_device(int(args.device_id))

    model = AutoModelForSpeechSeq2Seq.from_pretrained(
        args.model,
        torch_dtype=dtype,
        low_cpu_mem_usage=True,
        use_safetensors=True,
        attn_implementation="flash_attention_2" if is_flash_attn_2_available() else "sdpa",
    ).to(device)
    processor = AutoProcessor.from_pretrained(args.model)

    if args.compile:
        model.generation_config.cache_implementation = "static"
        model.forward = torch.compile(model.forward, mode="reduce-overhead", fullgraph=True)

    asr = pipeline(
        "automatic-speech-recognition",
        model=model,
        tokenizer=processor.tokenizer,
        feature_extractor=processor.feature_extractor,
        torch_dtype=dtype,
        device=device,
    )

    generate_kwargs = {"task": args.task, "language": args.language}
    if args.model.endswith(".en"):
        generate_kwargs.pop("task")
        generate_kwargs.pop("language")

    ts = "word" if args.timestamp == "word" else True
    t0 = time.perf_counter()
    with Progress(TextColumn("🤗 [progress.description]{task.description}"), BarColumn(style="yellow1"),
                  TimeElapsedColumn(), transient=True) as progress:
        progress.add_task("[yellow]Transcribing...", total=None)
        outputs = asr(
            args.file_name,
            chunk_length_s=args.chunk_length,
            batch_size=args.batch_size,
            generate_kwargs=generate_kwargs,
            return_timestamps=ts,
        )
    elapsed = time.perf_counter() - t0

    result = {
        "speakers": [],
        "chunks": outputs["chunks"],
        "text": outputs["text"],
        "meta": {
            "model": args.model,
            "device": device,
            "dtype": str(dtype),
            "batch_size": args.batch_size,
            "seconds": round(elapsed, 2),
            "peak_mem_gb": round(torch.cuda.max_memory_allocated() / 2**30, 2) if device != "mps" else None,
        },
    }
    with open(args.out, "w", encoding="utf8") as fp:
        json.dump(result, fp, ensure_ascii=False)
    if args.out.endswith(".json"):
        write_srt(outputs["chunks"], args.out[:-5] + ".srt")
    print(f"Voila!✨ Your file has been transcribed & saved here ~ {args.out} ({elapsed:.1f}s)")

    del asr, model
    if device != "mps":
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
