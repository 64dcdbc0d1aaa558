# Copyright 2022 The HuggingFace Team. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
"""
Benchmark loading time, generation latency and peak memory of big models dispatched with `device_map="auto"`
(GPU + CPU + disk offload). Run with

    python big_model_inference.py gpt-j-6b --dtype float16
    python big_model_inference.py opt-30b --offload-folder /scratch/offload
"""

import argparse
import gc
import threading
import time

import psutil
import torch
from accelerate.utils import compute_module_sizes
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, pipeline

DEFAULT_MODELS = {
    "gpt-j-6b": {"is_causal": True, "model": "sgugger/sharded-gpt-j-6B", "tokenizer": "EleutherAI/gpt-j-6B"},
    "gpt-neox": {"is_causal": True, "model": "EleutherAI/gpt-neox-20b"},
    "opt": {"is_causal": True, "model": "facebook/opt-30b"},
    "T0pp": {"is_causal": False, "model": "bigscience/T0pp", "model_revision": "sharded"},
}

PROMPTS = [
    "Hello, my name is",
    "Are unicorns real? Unicorns are",
    "For the first time in several years,",
    "My name is Julien and I am",
    "The goal of life is",
    "Whenever I'm sad, I like to",
]


class PeakCPUMemory:
    def __init__(self):
        self.process = psutil.Process()
        self.peak_monitoring = False

    def peak_monitor(self):
        self.cpu_memory_peak = -1

        while True:
            self.cpu_memory_peak = max(self.process.memory_info().rss, self.cpu_memory_peak)

            # can't sleep or will not catch the peak right (this comment is here on purpose)
            if not self.peak_monitoring:
                break

    def start(self):
        self.peak_monitoring = True
        self.thread = threading.Thread(target=self.peak_monitor)
        self.thread.daemon = True
        self.thread.start()

    def stop(self):
        self.peak_monitoring = False
        self.thread.join()
        return self.cpu_memory_peak


cpu_peak_tracker = PeakCPUMemory()
N_GPUS = torch.cuda.device_count()


def start_measure():
    # Time
    measures = {"time": time.time()}

    gc.collect()
    torch.cuda.empty_cache()

    # CPU mem
    measures["cpu"] = psutil.Process().memory_info().rss
    cpu_peak_tracker.start()

    # GPU mem
    for i in range(N_GPUS):
        measures[str(i)] = torch.cuda.memory_allocated(i)
    torch.cuda.reset_peak_memory_stats()

    return measures


def end_measure(start_measures):
    # Time
    measures = {"time": time.time() - start_measures["time"]}

    gc.collect()
    torch.cuda.empty_cache()  # before reading the allocator counters

    # CPU mem
    measures["cpu"] = (psutil.Process().memory_info().rss - start_measures["cpu"]) / 2**20
    measures["cpu-peak"] = (cpu_peak_tracker.stop() - start_measures["cpu"]) / 2**20

    # GPU mem
    for i in range(N_GPUS):
        measures[str(i)] = (torch.cuda.memory_allocated(i) - start_measures[str(i)]) / 2**20
        measures[f"{i}-peak"] = (torch.cuda.max_memory_allocated(i) - start_measures[str(i)]) / 2**20

    return measures


def log_measures(measures, description):
    print(f"{description}:")
    print(f"- Time: {measures['time']:.2f}s")
    for i in range(N_GPUS):
        print(f"- GPU {i} allocated: {measures[str(i)]:.2f}MiB")
        peak = measures[f"{i}-peak"]
        print(f"- GPU {i} peak: {peak:.2f}MiB")
    print(f"- CPU RAM allocated: {measures['cpu']:.2f}MiB")
    print(f"- CPU RAM peak: {measures['cpu-peak']:.2f}MiB")


def parse_args():
    parser = argparse.ArgumentParser(description="Run and time generations on a big model using Accelerate.")
    parser.add_argument("model_name", type=str, default=None, help="The name of the model to try.")
    parser.add_argument(
        "--tokenizer_name", type=str, default=None, help="The name of the tokenizer (if different from the model."
    )
    parser.add_argument("--is_causal", type=bool, default=None, help="Whether or not the model is causal.")
    parser.add_argument(
        "--model_revision", type=str, default=None, help="The revision to use for the model checkpoint."
    )
    parser.add_argument("--torch_dtype", type=str, default=None, help="The dtype for the model.")
    parser.add_argument("--disk_offload", action="store_true")
    parser.add_argument("--offload_folder", type=str, default="offload")
    parser.add_argument("--max_new_tokens", type=int, default=50)

    args = parser.parse_args()

    # Sanitize args
    if args.model_name in DEFAULT_MODELS:
        defaults = DEFAULT_MODELS[args.model_name]
        args.model_name = defaults["model"]
        if args.tokenizer_name is None:
            args.tokenizer_name = defaults.get("tokenizer", args.model_name)
        if args.is_causal is None:
            args.is_causal = defaults["is_causal"]
        if args.model_revision is None:
            args.model_revision = defaults.get("model_revision", "main")

    if args.is_causal is None:
        raise ValueError("Could not infer the default for `--is_causal`, pass either True or False for it.")
    if args.tokenizer_name is None:
        args.tokenizer_name = args.model_name
    if args.model_revision is None:
        args.model_revision = "main"

    return args


def main():
    args = parse_args()
    torch.manual_seed(0)

    if args.torch_dtype is None:
        config = AutoConfig.from_pretrained(args.model_name)
        torch_dtype = getattr(config, "torch_dtype", torch.float32)
    else:
        torch_dtype = getattr(torch, args.torch_dtype)
    model_cls = AutoModelForCausalLM if args.is_causal else None
    if model_cls is None:
        from transformers import AutoModelForSeq2SeqLM

        model_cls = AutoModelForSeq2SeqLM

    kwargs = {
        "device_map": "auto",
        "revision": args.model_revision,
        "torch_dtype": torch_dtype,
    }
    if args.disk_offload:
        kwargs["offload_folder"] = args.offload_folder
        kwargs["max_memory"] = {0: "4GiB", "cpu": "8GiB"}

    start_measures = start_measure()
    model = model_cls.from_pretrained(args.model_name, **kwargs)
    end_measures = end_measure(start_measures)
    log_measures(end_measures, "Model loading")

    sizes = compute_module_sizes(model)
    print(f"Model size: {sizes[''] / 2**30:.2f} GiB, device map: {getattr(model, 'hf_device_map', None)}")

    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer_name, revision=args.model_revision)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"

    # Single prompts, one at a time through a pipeline (the first GPU is the execution device).
    generator = pipeline("text-generation" if args.is_causal else "text2text-generation", model=model,
                         tokenizer=tokenizer)
    start_measures = start_measure()
    generation_times = []
    for prompt in PROMPTS:
        start_time = time.time()
        _ = generator(prompt, max_new_tokens=args.max_new_tokens, do_sample=False)
        generation_times.append(time.time() - start_time)
    end_measures = end_measure(start_measures)
    log_measures(end_measures, "Pipeline generation")
    print(f"- First prompt: {generation_times[0]:.2f}s")
    print(f"- Average on others: {sum(generation_times[1:]) / (len(generation_times) - 1):.2f}s")

    # Batched generation, inputs moved by hand to the execution device.
    inputs = tokenizer(PROMPTS, return_tensors="pt", padding=True).to(0)
    start_measures = start_measure()
    with torch.no_grad():
        outputs = model.generate(**inputs, max_new_tokens=args.max_new_tokens, do_sample=False)
    torch.cuda.synchronize()
    end_measures = end_measure(start_measures)
    log_measures(end_measures, "Batched generation")
    new_tokens = (outputs.shape[1] - inputs["input_ids"].shape[1]) * outputs.shape[0]
    print(f"- Throughput: {new_tokens / end_measures['time']:.2f} tokens/s")
    print(tokenizer.batch_decode(outputs[:2], skip_special_tokens=True))


if __name__ == "__main__":
    main()
