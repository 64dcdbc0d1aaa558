"""Text -> mel (Tacotron 2) -> audio (WaveGlow) for a list of sentences.

    python inference.py -i phrases.txt -o output/ \
        --tacotron2 tacotron2_statedict.pt --waveglow waveglow_256channels.pt --fp16

Both checkpoints are the ones published with the NVIDIA repos (trained and
saved on GPU).
"""
import sys
sys.path.append('waveglow/')
import argparse
import os
import time

import numpy as np
import torch
from scipy.io.wavfile import write

from hparams import create_hparams
from model import Tacotron2
from text import text_to_sequence
from denoiser import Denoiser


class MeasureTime():
    def __init__(self, measurements, key, cpu_run=False):
        self.measurements = measurements
        self.key = key
        self.cpu_run = cpu_run

    def __enter__(self):
        if not self.cpu_run:
            torch.cuda.synchronize()
        self.t0 = time.perf_counter()

    def __exit__(self, exc_type, exc_value, exc_traceback):
        if not self.cpu_run:
            torch.cuda.synchronize()  # wait for queued kernels before reading the clock
        self.measurements[self.key] = time.perf_counter() - self.t0


def parse_args(parser):
    parser.add_argument('-i', '--input', type=str, required=True,
                        help='full path to the input text (phareses separated by new line)')
    parser.add_argument('-o', '--output', required=True,
                        help='output folder to save audio (file per phrase)')
    parser.add_argument('--tacotron2', type=str, required=True,
                        help='full path to the Tacotron2 model checkpoint file')
    parser.add_argument('--waveglow', type=str, required=True,
                        help='full path to the WaveGlow model checkpoint file')
    parser.add_argument('-s', '--sigma-infer', default=0.666, type=float)
    parser.add_argument('-d', '--denoising-strength', default=0.01, type=float)
    parser.add_argument('-sr', '--sampling-rate', default=22050, type=int,
                        help='Sampling rate')
    parser.add_argument('--fp16', action='store_true',
                        help='inference with AMP')
    parser.add_argument('--cpu', action='store_true',
                        help='Run inference on CPU')
    return parser


def load_tacotron2(checkpoint_path, hparams, fp16_run, cpu_run):
    model = Tacotron2(hparams)
    if cpu_run:
        state_dict = torch.load(checkpoint_path, map_location='cpu')['state_dict']
    else:
        state_dict = torch.load(checkpoint_path)['state_dict']
    model.load_state_dict(state_dict)
    if not cpu_run:
        model = model.cuda()
    model.eval()
    if fp16_run:
        model.half()
    return model


def load_waveglow(checkpoint_path, fp16_run, cpu_run):
    if cpu_run:
        waveglow = torch.load(checkpoint_path, map_location='cpu')['model']
    else:
        waveglow = torch.load(checkpoint_path)['model']
    waveglow = waveglow.remove_weightnorm(waveglow)
    waveglow.eval()
    if not cpu_run:
        waveglow.cuda()
    if fp16_run:
        waveglow.half()
        for k in waveglow.convinv:
            k.float()
    return waveglow


def prepare_input_sequence(text, cpu_run=False):
    sequence = np.array(text_to_sequence(text, ['english_cleaners']))[None, :]
    sequence = torch.from_numpy(sequence).long()
    if not cpu_run:
        sequence = sequence.cuda()
    return sequence


def main():
    parser = argparse.ArgumentParser(description='PyTorch Tacotron 2 Inference')
    parser = parse_args(parser)
    args, _ = parser.parse_known_args()

    hparams = create_hparams()
    hparams.sampling_rate = args.sampling_rate

    tacotron2 = load_tacotron2(args.tacotron2, hparams, args.fp16, args.cpu)
    waveglow = load_waveglow(args.waveglow, args.fp16, args.cpu)
    denoiser = Denoiser(waveglow)
    if not args.cpu:
        denoiser.cuda()

    texts = []
    try:
        f = open(args.input, 'r')
        texts = f.readlines()
    except Exception:
        print("Could not read file")
        sys.exit(1)

    os.makedirs(args.output, exist_ok=True)
    measurements = {}
    for i, text in enumerate(texts):
        sequence = prepare_input_sequence(text.strip(), args.cpu)

        with torch.no_grad(), MeasureTime(measurements, "tacotron2_time", args.cpu):
            _, mel, _, alignments = tacotron2.inference(sequence)

        with torch.no_grad(), MeasureTime(measurements, "waveglow_time", args.cpu):
            audio = waveglow.infer(mel, sigma=args.sigma_infer)
            audio = audio.float()
            audio = denoiser(audio, strength=args.denoising_strength).squeeze(1)

        audio = audio[0].cpu().numpy()
        audio = audio / np.abs(audio).max()
        write(os.path.join(args.output, "audio_{}.wav".format(i)), args.sampling_rate, audio)

        print("[{}] tacotron2 {:.3f}s  waveglow {:.3f}s  ({} samples)".format(
            i, measurements["tacotron2_time"], measurements["waveglow_time"], audio.shape[0]))


if __name__ == '__main__':
    main()
