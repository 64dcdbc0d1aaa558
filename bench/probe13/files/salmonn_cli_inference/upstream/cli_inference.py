# Copyright (2024) Tsinghua University, Bytedance Ltd. and/or its affiliates
#
# Licensed under the Apache License, Version 2.0 (the "License");

import argparse
import json
import os

import numpy as np
import soundfile as sf
import torch
from transformers import LlamaForCausalLM, LlamaTokenizer, WhisperFeatureExtractor

from config import Config
from models.salmonn import SALMONN

parser = argparse.ArgumentParser()
parser.add_argument("--cfg-path", type=str, required=True, help="path to configuration file")
parser.add_argument("--device", type=str, default="cuda:0")
parser.add_argument(
    "--options",
    nargs="+",
    help="override some settings in the used config, the key-value pair "
    "in xxx=yyy format will be merged into config file (deprecate), "
    "change to --cfg-options instead.",
)
parser.add_argument("--low-resource", action="store_true", help="load the LLM in 8 bit (bitsandbytes)")
parser.add_argument("--batch-file", type=str, default=None, help="jsonl with {wav, prompt} for non-interactive use")


def prepare_one_sample(wav_path, wav_processor, cuda_enabled=True):
    audio, sr = sf.read(wav_path)
    if len(audio.shape) == 2:  # stereo to mono
        audio = audio[:, 0]
    if len(audio) < sr:  # pad audio to at least 1s
        sil = np.zeros(sr - len(audio), dtype=float)
        audio = np.concatenate((audio, sil), axis=0)
    audio = audio[: sr * 30]  # truncate audio to at most 30s

    spectrogram = wav_processor(audio, sampling_rate=sr, return_tensors="pt")["input_features"]

    samples = {
        "spectrogram": spectrogram,
        "raw_wav": torch.from_numpy(audio).unsqueeze(0),
        "padding_mask": torch.zeros(len(audio), dtype=torch.bool).unsqueeze(0),
    }
    if cuda_enabled:
        samples = move_to_cuda(samples)
    return samples


def move_to_cuda(samples):
    return {k: v.cuda() if isinstance(v, torch.Tensor) else v for k, v in samples.items()}


def load_llm(llama_path, low_resource, device_8bit=0):
    tokenizer = LlamaTokenizer.from_pretrained(llama_path, use_fast=False)
    tokenizer.add_special_tokens({"pad_token": "[PAD]"})
    if low_resource:
        llm = LlamaForCausalLM.from_pretrained(
            llama_path,
            torch_dtype=torch.float16,
            load_in_8bit=True,
            device_map={"": device_8bit},
        )
    else:
        llm = LlamaForCausalLM.from_pretrained(llama_path, torch_dtype=torch.float16)
    return tokenizer, llm


def run_one(model, cfg, wav_processor, wav_path, prompt):
    samples = prepare_one_sample(wav_path, wav_processor)
    prompt = [cfg.config.model.prompt_template.format("<Speech><SpeechHere></Speech> " + prompt.strip())]
    # for environment with cuda>=117
    with torch.cuda.amp.autocast(dtype=torch.float16):
        text = model.generate(samples, cfg.config.generate, prompts=prompt)[0]
    torch.cuda.empty_cache()
    return text


def main():
    args = parser.parse_args()
    cfg = Config(args)

    model_cfg = cfg.config.model
    if args.low_resource:
        model_cfg.low_resource = True
        model_cfg.device_8bit = 0

    model = SALMONN.from_config(model_cfg)
    model.to(args.device)
    model.eval()

    wav_processor = WhisperFeatureExtractor.from_pretrained(cfg.config.model.whisper_path)

    if args.batch_file:
        with open(args.batch_file, encoding="utf-8") as f:
            for line in f:
                item = json.loads(line)
                print(json.dumps({"wav": item["wav"], "output": run_one(model, cfg, wav_processor, item["wav"], item["prompt"])},
                                 ensure_ascii=False))
        return

    while True:
        try:
            print("=====================================")
            wav_path = input("Your Wav Path:\n")
            prompt = input("Your Prompt:\n")
            print("Output:")
            print(run_one(model, cfg, wav_processor, wav_path, prompt))
        except KeyboardInterrupt:
            break
        except Exception as e:
            print(e)


if __name__ == "__main__":
    main()
