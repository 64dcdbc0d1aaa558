#!/usr/bin/env python3
"""Evaluate a CTC acoustic model on LibriSpeech with the CUDA CTC beam search decoder.

Compares the CUDA prefix beam search (``torchaudio.models.decoder.cuda_ctc_decoder``) with
greedy decoding and reports WER and decoding throughput.

    python inference.py --librispeech-path ./datasets/ --split test-other \
        --tokens ./tokens.txt --checkpoint ./ctc_conformer.pt --beam-size 10
"""
import argparse
import logging
import os
import time
from typing import List, Optional

import sentencepiece as spm
import torch
import torchaudio
from torchaudio.models.decoder import cuda_ctc_decoder

logger = logging.getLogger(__name__)


def _get_device(device_arg: Optional[str]) -> torch.device:
    if device_arg:
        return torch.device(device_arg)
    if torch.cuda.is_available():
        return torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
    raise RuntimeError("The CUDA CTC decoder requires a GPU; no CUDA device found")


class GreedyCTCDecoder(torch.nn.Module):
    def __init__(self, blank: int = 0):
        super().__init__()
        self.blank = blank

    def forward(self, emission: torch.Tensor, lengths: torch.Tensor) -> List[List[int]]:
        indices = torch.argmax(emission, dim=-1)  # [B, T]
        out = []
        for b in range(indices.size(0)):
            seq = torch.unique_consecutive(indices[b, : lengths[b]], dim=-1)
            out.append([i for i in seq.tolist() if i != self.blank])
        return out


def load_model(checkpoint: str, device: torch.device):
    if checkpoint.endswith(".pt") or checkpoint.endswith(".pth"):
        model = torch.jit.load(checkpoint, map_location="cpu")
    else:
        bundle = getattr(torchaudio.pipelines, checkpoint)
        model = bundle.get_model()
    return model.eval().to(device)


def collate(batch, sample_rate=16000):
    waveforms, transcripts = [], []
    for waveform, sr, transcript, *_ in batch:
        if sr != sample_rate:
            waveform = torchaudio.functional.resample(waveform, sr, sample_rate)
        waveforms.append(waveform[0])
        transcripts.append(transcript)
    lengths = torch.tensor([w.size(0) for w in waveforms], dtype=torch.int32)
    padded = torch.nn.utils.rnn.pad_sequence(waveforms, batch_first=True)
    return padded, lengths, transcripts


def word_errors(ref: str, hyp: str):
    ref_words = ref.split()
    hyp_words = hyp.split()
    return torchaudio.functional.edit_distance(ref_words, hyp_words), len(ref_words)


def run_inference(args):
    device = _get_device(args.device)
    torch.cuda.set_device(device)
    logger.info("decoding on %s (%s)", device, torch.cuda.get_device_name(device))

    sp_model = spm.SentencePieceProcessor(model_file=args.sp_model) if args.sp_model else None
    model = load_model(args.checkpoint, device)

    dataset = torchaudio.datasets.LIBRISPEECH(args.librispeech_path, url=args.split)
    loader = torch.utils.data.DataLoader(
        dataset, batch_size=args.batch_size, collate_fn=collate, num_workers=4, pin_memory=True
    )

    cuda_decoder = cuda_ctc_decoder(args.tokens, nbest=1, beam_size=args.beam_size, blank_skip_threshold=0.95)
    greedy_decoder = GreedyCTCDecoder(blank=0)
    tokens = cuda_decoder.vocab_list

    totals = {"beam": [0, 0], "greedy": [0, 0]}
    decode_time = {"beam": 0.0, "greedy": 0.0}
    n_utts = 0

    with torch.inference_mode():
        for idx, (waveforms, lengths, transcripts) in enumerate(loader):
            waveforms = waveforms.cuda(non_blocking=True)
            lengths = lengths.cuda(non_blocking=True)

            with torch.autocast("cuda", enabled=args.fp16):
                emission, out_lengths = model(waveforms, lengths)
            log_probs = torch.nn.functional.log_softmax(emission.float(), dim=-1).contiguous()
            if out_lengths is None:
                out_lengths = torch.full(
                    (log_probs.size(0),), log_probs.size(1), dtype=torch.int32, device=log_probs.device
                )
            out_lengths = out_lengths.to(torch.int32)

            torch.cuda.synchronize()
            t0 = time.perf_counter()
            beam_results = cuda_decoder(log_probs, out_lengths)
            torch.cuda.synchronize(device)
            decode_time["beam"] += time.perf_counter() - t0

            t0 = time.perf_counter()
            greedy_results = greedy_decoder(log_probs, out_lengths)
            decode_time["greedy"] += time.perf_counter() - t0

            for b, ref in enumerate(transcripts):
                beam_tokens = beam_results[b][0].tokens
                if sp_model is not None:
                    beam_hyp = sp_model.decode(beam_tokens)
                    greedy_hyp = sp_model.decode(greedy_results[b])
                else:
                    beam_hyp = "".join(tokens[t] for t in beam_tokens).replace("|", " ").strip()
                    greedy_hyp = "".join(tokens[t] for t in greedy_results[b]).replace("|", " ").strip()
                for name, hyp in (("beam", beam_hyp), ("greedy", greedy_hyp)):
                    errs, n = word_errors(ref.lower(), hyp.lower())
                    totals[name][0] += errs
                    totals[name][1] += n
            n_utts += len(transcripts)

            if idx % 20 == 0:
                logger.info(
                    "[%d] beam WER %.2f%%  greedy WER %.2f%%  (mem %.0f MiB)",
                    n_utts,
                    100.0 * totals["beam"][0] / max(totals["beam"][1], 1),
                    100.0 * totals["greedy"][0] / max(totals["greedy"][1], 1),
                    torch.cuda.memory_allocated() / 2**20,
                )

    for name in ("beam", "greedy"):
        wer = 100.0 * totals[name][0] / max(totals[name][1], 1)
        logger.info("%s: WER %.3f%%, %.1f utts/s decode", name, wer, n_utts / max(decode_time[name], 1e-9))


def _parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--librispeech-path", type=str, required=True, help="folder where LibriSpeech is stored")
    parser.add_argument("--split", type=str, default="test-other")
    parser.add_argument("--checkpoint", type=str, default="WAV2VEC2_ASR_BASE_960H")
    parser.add_argument("--tokens", type=str, required=True, help="tokens.txt, one token per line, blank first")
    parser.add_argument("--sp-model", type=str, default=None, help="sentencepiece model for BPE units")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--beam-size", type=int, default=10)
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--device", type=str, default=None, help="e.g. cuda:1 (default: cuda:$LOCAL_RANK)")
    parser.add_argument("--debug", action="store_true")
    return parser.parse_args()


def _init_logger(debug):
    fmt = "%(asctime)s %(message)s" if debug else "%(message)s"
    level = logging.DEBUG if debug else logging.INFO
    logging.basicConfig(format=fmt, level=level, datefmt="%Y-%m-%d %H:%M:%S")


def cli_main():
    args = _parse_args()
    _init_logger(args.debug)
    run_inference(args)


if __name__ == "__main__":
    cli_main()
