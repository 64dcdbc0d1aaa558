# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.

"""Command-line for audio compression (fork: batch mode + accelerator support)."""

import argparse
from pathlib import Path
import sys
import time

import torchaudio
import torch

from .compress import compress, decompress, MODELS
from .utils import save_audio, convert_audio


SUFFIX = '.ecdc'


def get_parser():
    parser = argparse.ArgumentParser(
        'encodec',
        description='High fidelity neural audio codec. '
                    'If input is a .ecdc, decompresses it. '
                    'If output is not given, uses input name with new suffix. '
                    'If output is a .ecdc, encodes it. ')
    parser.add_argument('input', type=Path, nargs='+')
    parser.add_argument('-o', '--output', type=Path,
                        help='output file, or output directory when several inputs are given')
    parser.add_argument(
        '-b', '--bandwidth', type=float, default=6, choices=[1.5, 3., 6., 12., 24.],
        help='Target bandwidth (1.5, 3, 6, 12 or 24). 1.5 is not supported with --hq.')
    parser.add_argument(
        '-q', '--hq', action='store_true',
        help='Use HQ stereo model operating on 48 kHz sampled audio.')
    parser.add_argument(
        '-l', '--lm', action='store_true',
        help='Use a language model to reduce the model size (5x slower though).')
    parser.add_argument(
        '-f', '--force', action='store_true',
        help='Overwrite output file if it exists.')
    parser.add_argument(
        '-s', '--decompress_suffix', type=str, default='_decompressed',
        help='Suffix for the decompressed output file (if no output path specified)')
    parser.add_argument(
        '-r', '--rescale', action='store_true',
        help='Automatically rescale the output to avoid clipping.')
    parser.add_argument(
        '-d', '--device', type=str,
        default='cuda' if torch.cuda.is_available() else 'cpu',
        help='Device used for the encoder/decoder networks (the LM always runs on cpu).')
    parser.add_argument(
        '--half', action='store_true',
        help='Run the encoder/decoder in float16 (GPU only).')
    parser.add_argument('--timing', action='store_true', help='print per-file timings')
    return parser


def fatal(*args):
    print(*args, file=sys.stderr)
    sys.exit(1)


def check_output_exists(args, output: Path):
    if not output.parent.exists():
        fatal(f"Output folder for {output} does not exist.")
    if output.exists() and not args.force:
        fatal(f"Output file {output} exist. Use -f / --force to overwrite.")


def check_clipping(wav, args):
    if args.rescale:
        return
    mx = wav.abs().max()
    limit = 0.99
    if mx > limit:
        print(
            f"Clipping!! max scale {mx}, limit is {limit}. "
            "To avoid clipping, use the `-r` option to rescale the output.",
            file=sys.stderr)


def _sync(device):
    if device.startswith('cuda'):
        torch.cuda.synchronize()


def _output_for(args, path: Path, suffix: str) -> Path:
    if args.output is None:
        return path.with_name(path.stem + suffix)
    if len(args.input) > 1:
        return args.output / (path.stem + suffix)
    return args.output


def decode_one(args, path: Path):
    output = _output_for(args, path, args.decompress_suffix).with_suffix('.wav')
    check_output_exists(args, output)
    t0 = time.time()
    out, out_sample_rate = decompress(path.read_bytes(), device=args.device, half=args.half)
    _sync(args.device)
    elapsed = time.time() - t0
    check_clipping(out, args)
    save_audio(out.float().cpu(), output, out_sample_rate, rescale=args.rescale)
    return elapsed


def encode_one(args, path: Path):
    output = _output_for(args, path, SUFFIX).with_suffix(SUFFIX)
    check_output_exists(args, output)
    model_name = 'encodec_48khz' if args.hq else 'encodec_24khz'
    model = MODELS[model_name]()
    if args.bandwidth not in model.target_bandwidths:
        fatal(f"Bandwidth {args.bandwidth} is not supported by the model {model_name}")
    model.set_target_bandwidth(args.bandwidth)
    model = model.to(args.device)
    if args.half:
        model = model.half()

    wav, sr = torchaudio.load(path)
    wav = convert_audio(wav, sr, model.sample_rate, model.channels)
    wav = wav.to(args.device)
    if args.half:
        wav = wav.half()
    t0 = time.time()
    compressed = compress(model, wav, use_lm=args.lm)
    _sync(args.device)
    elapsed = time.time() - t0
    output.write_bytes(compressed)
    return elapsed


def main():
    args = get_parser().parse_args()
    if args.half and args.device == 'cpu':
        fatal("--half needs a GPU device.")
    if len(args.input) > 1 and args.output is not None and not args.output.is_dir():
        fatal("With several inputs, --output must be an existing directory.")

    total = 0.
    for path in args.input:
        if not path.exists():
            fatal(f"Input file {path} does not exist.")
        if path.suffix.lower() == SUFFIX:
            elapsed = decode_one(args, path)
        else:
            elapsed = encode_one(args, path)
        total += elapsed
        if args.timing:
            print(f"{path}: {elapsed * 1000:.1f} ms")
    if args.timing and len(args.input) > 1:
        print(f"total: {total:.2f} s for {len(args.input)} files")


if __name__ == '__main__':
    main()
