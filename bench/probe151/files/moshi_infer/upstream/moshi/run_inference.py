# Copyright (c) Kyutai, all rights reserved.
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.
"""Run Moshi offline on an input wav file: encode with Mimi, step the LM, decode back."""

import argparse
import json
import logging
import random
import sys
import time
import typing as tp

import numpy as np
import sphn
import torch

from .client_utils import log, AnyPrinter, Printer, RawPrinter
from .conditioners import ConditionAttributes, ConditionTensors
from .models import loaders, MimiModel, LMModel, LMGen


def seed_all(seed):
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(seed)
        torch.cuda.manual_seed_all(seed)  # for multi-GPU setups
    random.seed(seed)
    np.random.seed(seed)
    torch.backends.cudnn.deterministic = False
    torch.backends.cudnn.benchmark = False


class InferenceState:
    mimi: MimiModel
    text_tokenizer: tp.Any
    lm_gen: LMGen

    def __init__(
        self,
        checkpoint_info: loaders.CheckpointInfo,
        mimi: MimiModel,
        text_tokenizer,
        lm: LMModel,
        batch_size: int,
        cfg_coef: float,
        device: str | torch.device,
        **kwargs,
    ):
        self.checkpoint_info = checkpoint_info
        self.model_type = checkpoint_info.model_type
        self.mimi = mimi
        self.text_tokenizer = text_tokenizer
        condition_tensors = None
        self.lm_gen = LMGen(
            lm, cfg_coef=cfg_coef, condition_tensors=condition_tensors, **kwargs
        )
        self.device = device
        self.frame_size = int(self.mimi.sample_rate / self.mimi.frame_rate)
        self.batch_size = batch_size
        self.mimi.streaming_forever(batch_size)
        self.lm_gen.streaming_forever(batch_size)
        self.printer: AnyPrinter
        if sys.stdout.isatty():
            self.printer = Printer()
        else:
            self.printer = RawPrinter()

    def run(self, in_pcms: torch.Tensor) -> tp.List[tp.Tuple[torch.Tensor, torch.Tensor]]:
        out_pcms_per_item: tp.List[tp.List[torch.Tensor]] = [[] for _ in range(self.batch_size)]
        out_text_tokens_per_item: tp.List[tp.List[torch.Tensor]] = [[] for _ in range(self.batch_size)]
        eos_reached: tp.List[bool] = [False] * self.batch_size
        need_eos_input: bool = True
        self.printer.log(
            "info",
            "starting inference, "
            f"sampling: {self.lm_gen.use_sampling}, "
            f"audio temp: {self.lm_gen.temp}, "
            f"text temp: {self.lm_gen.temp_text}",
        )
        device = self.lm_gen.lm_model.device
        start_time = time.time()
        ntokens = 0
        first_frame = True
        chunks = [
            c
            for c in in_pcms.split(self.frame_size, dim=2)
            if c.shape[-1] == self.frame_size
        ]
        self.printer.print_header()
        while not all(eos_reached):
            if chunks:
                chunk = chunks.pop(0)
            else:
                if need_eos_input:
                    need_eos_input = False
                    eos_value = self.mimi.cardinality
                    codes = torch.full(
                        (self.batch_size, self.mimi.num_codebooks, 1),
                        eos_value,
                        dtype=torch.long,
                        device=device,
                    )
                else:
                    silence = torch.zeros(
                        (self.batch_size, self.mimi.channels, self.frame_size),
                        device=device,
                    )
                    codes = self.mimi.encode(silence)
                chunk = None
            if chunk is not None:
                codes = self.mimi.encode(chunk)
            if first_frame:
                # Ensure that the first slice of codes is properly seen by the transformer
                # as otherwise the first slice is replaced by the initial tokens.
                tokens = self.lm_gen.step(codes)
                if max(self.lm_gen.lm_model.delays) > 0:
                    assert tokens is None
                first_frame = False
            tokens = self.lm_gen.step(codes)
            if tokens is None:
                continue
            assert tokens.shape[1] == self.lm_gen.lm_model.dep_q + 1
            if self.lm_gen.lm_model.dep_q > 0:
                out_pcm = self.mimi.decode(tokens[:, 1:]).cpu()
                for b, (one_text, one_pcm) in enumerate(
                    zip(tokens[:, 0].cpu(), out_pcm)
                ):
                    if eos_reached[b]:
                        continue
                    elif one_text.item() == self.text_tokenizer.eos_id():
                        if need_eos_input:
                            # We sampled the EOS from the model, we need to send EOS as input
                            need_eos_input = False
                            continue
                        else:
                            eos_reached[b] = True
                    out_text_tokens_per_item[b].append(one_text)
                    out_pcms_per_item[b].append(one_pcm)
                    if b == 0:
                        if one_text.item() not in [0, 3]:
                            text = self.text_tokenizer.id_to_piece(one_text.item())  # pyright: ignore
                            text = text.replace("▁", " ")
                            self.printer.print_token(text)
            ntokens += 1
        dt = time.time() - start_time
        self.printer.log(
            "info",
            f"processed {ntokens} steps in {dt:.0f}s, {1000 * dt / ntokens:.2f}ms/step",
        )
        out = [
            (torch.cat(one_texts, dim=0), torch.cat(one_pcms, dim=1))
            for one_texts, one_pcms in zip(out_text_tokens_per_item, out_pcms_per_item)
        ]
        return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokenizer", type=str, help="Path to a local tokenizer file.")
    parser.add_argument("--moshi-weight", type=str, help="Path to a local checkpoint file for Moshi.")
    parser.add_argument("--mimi-weight", type=str, help="Path to a local checkpoint file for Mimi.")
    parser.add_argument("--hf-repo", type=str, default=loaders.DEFAULT_REPO,
                        help="HF repo to look into, defaults Moshiko. "
                             "Use this to select a different pre-trained model.")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--device", type=str, default="cuda", help="Device on which to run, defaults to 'cuda'.")
    parser.add_argument("--dtype", type=str, default="bfloat16", choices=["bfloat16", "float16"])
    parser.add_argument("--config", "--lm-config", dest="config", type=str, help="The config as a json file.")
    parser.add_argument("--cfg-coef", type=float, default=1., help="CFG coefficient.")
    parser.add_argument("--no-cuda-graph", action="store_true",
                        help="Disable CUDA graphs for the Mimi and LM step functions.")
    parser.add_argument("infile", type=str, help="Input audio file.")
    parser.add_argument("outfile", type=str, help="Output audio file in wav format.", nargs="?", default="")

    args = parser.parse_args()
    seed_all(4242_42)

    if args.no_cuda_graph:
        import os
        os.environ["NO_CUDA_GRAPH"] = "1"

    dtype = torch.bfloat16 if args.dtype == "bfloat16" else torch.float16
    log("info", "retrieving checkpoint")
    checkpoint_info = loaders.CheckpointInfo.from_hf_repo(
        args.hf_repo, args.moshi_weight, args.mimi_weight, args.tokenizer, args.config)
    log("info", "loading mimi")
    mimi = checkpoint_info.get_mimi(device=args.device)
    log("info", "mimi loaded")
    text_tokenizer = checkpoint_info.get_text_tokenizer()
    log("info", "loading moshi")
    lm = checkpoint_info.get_moshi(device=args.device, dtype=dtype)
    log("info", "moshi loaded")
    if args.device.startswith("cuda") and torch.cuda.is_available():
        loaders.log_gpu_memory("after load: ")

    log("info", f"loading input file {args.infile}")
    in_pcms, _ = sphn.read(args.infile, sample_rate=mimi.sample_rate)
    in_pcms = torch.from_numpy(in_pcms).to(device=args.device)
    in_pcms = in_pcms[None, 0:1].expand(args.batch_size, -1, -1)

    state = InferenceState(checkpoint_info, mimi, text_tokenizer, lm,
                           args.batch_size, args.cfg_coef, args.device)
    with torch.no_grad():
        # Warm up the CUDA graphs before timing.
        torch.cuda.synchronize()  # make sure loading/warm-up is done
        out_items = state.run(in_pcms)
        torch.cuda.synchronize()  # flush pending decode kernels

    if args.outfile:
        outfile = args.outfile
        for index, (_, out_pcm) in enumerate(out_items):
            if len(out_items) > 1:
                outfile_ = outfile.replace(".wav", f"-{index}.wav")
            else:
                outfile_ = outfile
            duration = out_pcm.shape[1] / mimi.sample_rate
            log("info", f"writing {outfile_} with duration {duration:.1f} sec.")
            sphn.write_wav(outfile_, out_pcm[0].numpy(), sample_rate=mimi.sample_rate)
        with open(outfile.replace(".wav", ".json"), "w") as f:
            json.dump({"n_items": len(out_items)}, f)


if __name__ == "__main__":
    with torch.no_grad():
        main()
