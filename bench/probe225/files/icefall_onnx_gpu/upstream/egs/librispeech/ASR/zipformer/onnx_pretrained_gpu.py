#!/usr/bin/env python3
# Copyright      2023  Xiaomi Corp.        (authors: Fangjun Kuang)
#
# See ../../../../LICENSE for clarification regarding multiple authors
"""
This script loads ONNX models exported by ./export-onnx.py and uses them
to decode waves with onnxruntime-gpu (CUDAExecutionProvider). It falls back
to the CPU provider when no GPU is available.

Usage:

./zipformer/onnx_pretrained_gpu.py \
  --encoder-model-filename $repo/exp/encoder-epoch-99-avg-1.onnx \
  --decoder-model-filename $repo/exp/decoder-epoch-99-avg-1.onnx \
  --joiner-model-filename $repo/exp/joiner-epoch-99-avg-1.onnx \
  --tokens $repo/data/lang_bpe_500/tokens.txt \
  --provider cuda \
  $repo/test_wavs/1089-134686-0001.wav \
  $repo/test_wavs/1221-135766-0001.wav
"""

import argparse
import logging
import math
import time
from typing import List, Tuple

import k2
import kaldifeat
import numpy as np
import onnxruntime as ort
import torch
import torchaudio
from torch.nn.utils.rnn import pad_sequence


def get_parser():
    parser = argparse.ArgumentParser(
        formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    parser.add_argument("--encoder-model-filename", type=str, required=True)
    parser.add_argument("--decoder-model-filename", type=str, required=True)
    parser.add_argument("--joiner-model-filename", type=str, required=True)
    parser.add_argument("--tokens", type=str, help="Path to tokens.txt")
    parser.add_argument(
        "--provider",
        type=str,
        default="cuda",
        choices=["cpu", "cuda"],
        help="onnxruntime execution provider",
    )
    parser.add_argument("--device-id", type=int, default=0, help="GPU id for the CUDA provider")
    parser.add_argument("sound_files", type=str, nargs="+")
    parser.add_argument("--sample-rate", type=int, default=16000)
    return parser


class OnnxModel:
    def __init__(
        self,
        encoder_model_filename: str,
        decoder_model_filename: str,
        joiner_model_filename: str,
        provider: str = "cuda",
        device_id: int = 0,
    ):
        session_opts = ort.SessionOptions()
        session_opts.inter_op_num_threads = 1
        session_opts.intra_op_num_threads = 4

        self.session_opts = session_opts
        self.device_id = device_id
        self.use_cuda_io_binding = False

        available = ort.get_available_providers()
        if provider == "cuda" and "CUDAExecutionProvider" in available:
            self.providers = [
                (
                    "CUDAExecutionProvider",
                    {
                        "device_id": device_id,
                        "cudnn_conv_algo_search": "HEURISTIC",
                        "arena_extend_strategy": "kSameAsRequested",
                    },
                ),
                "CPUExecutionProvider",
            ]
            self.use_cuda_io_binding = True
        else:
            if provider == "cuda":
                logging.warning(f"CUDAExecutionProvider not in {available}; using CPU")
            self.providers = ["CPUExecutionProvider"]

        self.encoder = ort.InferenceSession(
            encoder_model_filename, sess_options=self.session_opts, providers=self.providers
        )
        self.decoder = ort.InferenceSession(
            decoder_model_filename, sess_options=self.session_opts, providers=self.providers
        )
        self.joiner = ort.InferenceSession(
            joiner_model_filename, sess_options=self.session_opts, providers=self.providers
        )

        decoder_meta = self.decoder.get_modelmeta().custom_metadata_map
        self.context_size = int(decoder_meta["context_size"])
        self.vocab_size = int(decoder_meta["vocab_size"])

    def run_encoder(self, x: torch.Tensor, x_lens: torch.Tensor) -> Tuple[np.ndarray, np.ndarray]:
        if not self.use_cuda_io_binding:
            out = self.encoder.run(
                ["encoder_out", "encoder_out_lens"],
                {"x": x.numpy(), "x_lens": x_lens.numpy()},
            )
            return out[0], out[1]

        # io binding keeps encoder_out on the GPU between calls
        io = self.encoder.io_binding()
        io.bind_cpu_input("x", x.numpy())
        io.bind_cpu_input("x_lens", x_lens.numpy())
        io.bind_output("encoder_out", "cuda", self.device_id)
        io.bind_output("encoder_out_lens")
        self.encoder.run_with_iobinding(io)
        outputs = io.copy_outputs_to_cpu()
        return outputs[0], outputs[1]

    def run_decoder(self, decoder_input: np.ndarray) -> np.ndarray:
        return self.decoder.run(["decoder_out"], {"y": decoder_input})[0]

    def run_joiner(self, encoder_out: np.ndarray, decoder_out: np.ndarray) -> np.ndarray:
        return self.joiner.run(
            ["logit"], {"encoder_out": encoder_out, "decoder_out": decoder_out}
        )[0]


def read_sound_files(filenames: List[str], expected_sample_rate: float) -> List[torch.Tensor]:
    ans = []
    for f in filenames:
        wave, sample_rate = torchaudio.load(f)
        assert (
            sample_rate == expected_sample_rate
        ), f"expected sample rate: {expected_sample_rate}. Given: {sample_rate}"
        # We use only the first channel
        ans.append(wave[0].contiguous())
    return ans


def greedy_search(model: OnnxModel, encoder_out: np.ndarray, encoder_out_lens: np.ndarray) -> List[List[int]]:
    blank_id = 0
    ans = []
    for i in range(encoder_out.shape[0]):
        hyp = [blank_id] * model.context_size
        decoder_out = model.run_decoder(np.array([hyp[-model.context_size :]], dtype=np.int64))
        for t in range(int(encoder_out_lens[i])):
            logit = model.run_joiner(encoder_out[i : i + 1, t], decoder_out)
            y = int(np.argmax(logit, axis=-1)[0])
            if y != blank_id:
                hyp.append(y)
                decoder_out = model.run_decoder(np.array([hyp[-model.context_size :]], dtype=np.int64))
        ans.append(hyp[model.context_size :])
    return ans


@torch.no_grad()
def main():
    args = get_parser().parse_args()
    logging.info(vars(args))

    model = OnnxModel(
        encoder_model_filename=args.encoder_model_filename,
        decoder_model_filename=args.decoder_model_filename,
        joiner_model_filename=args.joiner_model_filename,
        provider=args.provider,
        device_id=args.device_id,
    )

    # Feature extraction stays on CPU; onnxruntime copies the input itself.
    opts = kaldifeat.FbankOptions()
    opts.device = "cpu"
    opts.frame_opts.dither = 0
    opts.frame_opts.snip_edges = False
    opts.frame_opts.samp_freq = args.sample_rate
    opts.mel_opts.num_bins = 80
    fbank = kaldifeat.Fbank(opts)

    waves = read_sound_files(filenames=args.sound_files, expected_sample_rate=args.sample_rate)
    features = fbank(waves)
    feature_lengths = torch.tensor([f.size(0) for f in features], dtype=torch.int64)
    features = pad_sequence(features, batch_first=True, padding_value=math.log(1e-10))

    start = time.time()
    encoder_out, encoder_out_lens = model.run_encoder(features, feature_lengths)
    hyps = greedy_search(model, encoder_out, encoder_out_lens)
    elapsed = time.time() - start

    token_table = k2.SymbolTable.from_file(args.tokens)
    for filename, hyp in zip(args.sound_files, hyps):
        words = "".join([token_table[i] for i in hyp]).replace("▁", " ").strip()
        logging.info(f"{filename}:\n{words}\n")

    logging.info(f"Decoded {len(hyps)} files in {elapsed:.3f} s with {model.providers}")


if __name__ == "__main__":
    formatter = "%(asctime)s %(levelname)s [%(filename)s:%(lineno)d] %(message)s"
    logging.basicConfig(format=formatter, level=logging.INFO)
    main()
