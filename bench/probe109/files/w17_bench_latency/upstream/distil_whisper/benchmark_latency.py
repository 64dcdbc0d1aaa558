"""Latency / throughput benchmark for Whisper-family checkpoints on short-form and long-form audio.

Measures, per model:
  * encoder-only and full generate() latency at batch size 1 (mean of N runs after warm-up)
  * real-time factor (RTF) on long-form audio with the chunked pipeline
  * peak GPU memory

    python benchmark_latency.py --models openai/whisper-large-v3 distil-whisper/distil-large-v3 \
        --dtype float16 --attn sdpa --num-runs 20
"""
import argparse
import json
import platform
import statistics
import time
from contextlib import nullcontext

import numpy as np
import torch
from datasets import load_dataset
from transformers import AutoModelForSpeechSeq2Seq, AutoProcessor, pipeline

DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--models", nargs="+", default=["openai/whisper-large-v3"])
    p.add_argument("--dtype", default="float16", choices=list(DTYPES))
    p.add_argument("--attn", default="sdpa", choices=["eager", "sdpa", "flash_attention_2"])
    p.add_argument("--force-flash-sdp", action="store_true", help="restrict SDPA to the flash backend")
    p.add_argument("--num-runs", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=1)
    p.add_argument("--longform-batch-size", type=int, default=16)
    p.add_argument("--max-new-tokens", type=int, default=128)
    p.add_argument("--out", default="latency_results.json")
    return p.parse_args()


class CudaTimer:
    """Times a region on the GPU stream with CUDA events (host timers miss async work)."""

    def __init__(self):
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)

    def __enter__(self):
        self.start.record()
        return self

    def __exit__(self, *exc):
        self.end.record()
        torch.cuda.synchronize()
        self.elapsed_ms = self.start.elapsed_time(self.end)


def sdp_context(force_flash: bool):
    if not force_flash:
        return nullcontext()
    return torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False)


def load_short_sample(processor, batch_size, device, dtype):
    ds = load_dataset("hf-internal-testing/librispeech_asr_dummy", "clean", split="validation")
    audios = [ds[i]["audio"]["array"] for i in range(batch_size)]
    inputs = processor(audios, sampling_rate=16000, return_tensors="pt")
    return inputs.input_features.to(device, dtype=dtype)


def load_longform_sample():
    ds = load_dataset("distil-whisper/meanwhile", split="test")
    return [np.asarray(x["audio"]["array"], dtype=np.float32) for x in ds.select(range(4))]


def bench_model(name, args, device, dtype):
    processor = AutoProcessor.from_pretrained(name)
    model = AutoModelForSpeechSeq2Seq.from_pretrained(
        name, torch_dtype=dtype, low_cpu_mem_usage=True, attn_implementation=args.attn
    ).to(device)
    model.eval()

    features = load_short_sample(processor, args.batch_size, device, dtype)
    encoder = model.get_encoder()

    torch.cuda.reset_peak_memory_stats()
    enc_times, gen_times = [], []
    with torch.inference_mode(), sdp_context(args.force_flash_sdp):
        for _ in range(args.warmup):
            encoder(features)
            model.generate(features, max_new_tokens=args.max_new_tokens)

        for _ in range(args.num_runs):
            with CudaTimer() as t:
                encoder(features)
            enc_times.append(t.elapsed_ms)

            with CudaTimer() as t:
                out = model.generate(features, max_new_tokens=args.max_new_tokens)
            gen_times.append(t.elapsed_ms)

    n_tokens = int(out.shape[-1])
    peak_mem = torch.cuda.max_memory_allocated() / 2**30

    # long-form, chunked batched pipeline
    asr = pipeline(
        "automatic-speech-recognition",
        model=model,
        tokenizer=processor.tokenizer,
        feature_extractor=processor.feature_extractor,
        chunk_length_s=30,
        batch_size=args.longform_batch_size,
        torch_dtype=dtype,
        device=device,
    )
    longform = load_longform_sample()
    total_audio = sum(len(a) for a in longform) / 16000
    t0 = time.perf_counter()
    for audio in longform:
        asr(audio, generate_kwargs={"language": "en", "task": "transcribe"})
    torch.cuda.synchronize(device)
    longform_s = time.perf_counter() - t0

    del asr, model
    torch.cuda.empty_cache()

    return {
        "model": name,
        "encoder_ms_mean": statistics.mean(enc_times),
        "generate_ms_mean": statistics.mean(gen_times),
        "generate_ms_p90": float(np.percentile(gen_times, 90)),
        "ms_per_token": statistics.mean(gen_times) / max(n_tokens, 1),
        "longform_rtf": longform_s / total_audio,
        "peak_mem_gb": round(peak_mem, 2),
    }


def main():
    args = parse_args()
    device = torch.device("cuda:0")
    dtype = DTYPES[args.dtype]

    env = {
        "gpu": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "python": platform.python_version(),
        "dtype": args.dtype,
        "attn": args.attn,
    }
    print(json.dumps(env, indent=1))

    results = []
    for name in args.models:
        r = bench_model(name, args, device, dtype)
        print(json.dumps(r))
        results.append(r)

    with open(args.out, "w") as f:
        json.dump({"env": env, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
