"""Batch inference for the LLM-based audio captioner (BEATs encoder + linear
projector + Vicuna-7B with a LoRA adapter), DCASE 2024 Task 6 style.

    python llm_aac/inference.py --ckpt exp/aac_lora/best --audio_dir clotho/evaluation \
        --out preds_eval.csv --beams 4
"""
import argparse
import csv
import glob
import logging
import os
import time

import torch
import torchaudio
from peft import PeftModel
from transformers import AutoModelForCausalLM, AutoTokenizer

from llm_aac.encoder import BEATsEncoder
from llm_aac.projector import LinearProjector

logger = logging.getLogger(__name__)

PROMPT = "Describe the audio you hear in one sentence."


def pick_dtype():
    # bf16 on Ampere and newer, fp16 otherwise
    if torch.cuda.is_available() and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float16


def pick_attn_impl():
    major, _ = torch.cuda.get_device_capability()
    if major >= 8:
        return "flash_attention_2"
    return "sdpa"


class AudioLLMCaptioner(torch.nn.Module):
    def __init__(self, llm_name, beats_ckpt, projector_ckpt, lora_dir=None, dtype=torch.float16):
        super().__init__()
        self.tokenizer = AutoTokenizer.from_pretrained(llm_name, use_fast=False)
        self.tokenizer.pad_token = self.tokenizer.unk_token
        self.tokenizer.padding_side = "left"
        self.llm = AutoModelForCausalLM.from_pretrained(
            llm_name,
            torch_dtype=dtype,
            attn_implementation=pick_attn_impl(),
            device_map="cuda",
        )
        if lora_dir is not None:
            self.llm = PeftModel.from_pretrained(self.llm, lora_dir)
            self.llm = self.llm.merge_and_unload()
        self.llm.eval()

        self.encoder = BEATsEncoder(beats_ckpt).eval()
        self.projector = LinearProjector(self.encoder.embed_dim, self.llm.config.hidden_size, downsample=5)
        self.projector.load_state_dict(torch.load(projector_ckpt, map_location="cpu"))
        self.encoder.to(self.llm.device)
        self.projector.to(self.llm.device, dtype=dtype)
        self.dtype = dtype

    @torch.no_grad()
    def embed_audio(self, wav, wav_mask):
        feats, feat_mask = self.encoder(wav, padding_mask=wav_mask)
        audio_embeds = self.projector(feats.to(self.dtype))
        return audio_embeds, feat_mask[:, :: self.projector.downsample]

    @torch.no_grad()
    def generate(self, wav, wav_mask, num_beams=4, max_new_tokens=40):
        device = self.llm.device
        audio_embeds, audio_mask = self.embed_audio(wav.to(device), wav_mask.to(device))
        bsz = audio_embeds.size(0)

        prompt = self.tokenizer([f"USER: <Speech>"] * bsz, return_tensors="pt", add_special_tokens=True)
        suffix = self.tokenizer([f"</Speech> {PROMPT} ASSISTANT:"] * bsz, return_tensors="pt",
                                add_special_tokens=False)
        embed_tokens = self.llm.get_input_embeddings()
        prompt_embeds = embed_tokens(prompt.input_ids.to(device))
        suffix_embeds = embed_tokens(suffix.input_ids.to(device))
        inputs_embeds = torch.cat([prompt_embeds, audio_embeds, suffix_embeds], dim=1)
        attention_mask = torch.cat(
            [prompt.attention_mask.to(device), (~audio_mask).long(), suffix.attention_mask.to(device)], dim=1
        )
        out = self.llm.generate(
            inputs_embeds=inputs_embeds,
            attention_mask=attention_mask,
            num_beams=num_beams,
            max_new_tokens=max_new_tokens,
            repetition_penalty=1.0,
            length_penalty=1.0,
            do_sample=False,
        )
        return [c.strip() for c in self.tokenizer.batch_decode(out, skip_special_tokens=True)]


def load_batch(paths, sr=16000, max_sec=30):
    wavs = []
    for p in paths:
        wav, fs = torchaudio.load(p)
        wav = wav.mean(0)
        if fs != sr:
            wav = torchaudio.functional.resample(wav, fs, sr)
        wavs.append(wav[: sr * max_sec])
    max_len = max(w.shape[0] for w in wavs)
    batch = torch.zeros(len(wavs), max_len)
    mask = torch.ones(len(wavs), max_len, dtype=torch.bool)  # True = padding (BEATs convention)
    for i, w in enumerate(wavs):
        batch[i, : w.shape[0]] = w
        mask[i, : w.shape[0]] = False
    return batch, mask


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--llm", default="lmsys/vicuna-7b-v1.5")
    parser.add_argument("--ckpt", required=True, help="experiment dir with beats.pt, projector.pt and lora/")
    parser.add_argument("--audio_dir", required=True)
    parser.add_argument("--out", default="predictions.csv")
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--beams", type=int, default=4)
    parser.add_argument("--compile", action="store_true", help="torch.compile the projector/encoder")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)

    torch.backends.cuda.matmul.allow_tf32 = True
    dtype = pick_dtype()
    model = AudioLLMCaptioner(
        args.llm,
        beats_ckpt=os.path.join(args.ckpt, "beats.pt"),
        projector_ckpt=os.path.join(args.ckpt, "projector.pt"),
        lora_dir=os.path.join(args.ckpt, "lora"),
        dtype=dtype,
    )
    if args.compile:
        model.encoder = torch.compile(model.encoder, mode="max-autotune")

    files = sorted(glob.glob(os.path.join(args.audio_dir, "*.wav")))
    logger.info("captioning %d files on %s (%s)", len(files), torch.cuda.get_device_name(0), dtype)

    rows = []
    torch.cuda.synchronize()
    t0 = time.time()
    for i in range(0, len(files), args.batch_size):
        chunk = files[i: i + args.batch_size]
        wav, mask = load_batch(chunk)
        caps = model.generate(wav, mask, num_beams=args.beams)
        rows.extend(zip([os.path.basename(f) for f in chunk], caps))
    torch.cuda.synchronize()  # wait for the last generate() before stopping the clock
    elapsed = time.time() - t0
    logger.info("done in %.1fs (%.2f s/clip), peak mem %.1f GB", elapsed, elapsed / max(len(files), 1),
                torch.cuda.max_memory_allocated() / 2 ** 30)

    with open(args.out, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["file_name", "caption_predicted"])
        writer.writerows(rows)


if __name__ == "__main__":
    main()
