"""
Generate an accompaniment for a melody with the Anticipatory Music Transformer.

    python scripts/accompany.py --midi examples/strawberry.mid --melody-program 53 \
        --start 5 --end 20 --model stanford-crfm/music-medium-800k --out out/

The melody instrument is turned into anticipated *controls*; everything else up to --start
is kept as the prompt and the model fills in the remaining instruments until --end seconds.
"""
import argparse
import os
import time

import torch
from transformers import AutoModelForCausalLM

from anticipation import ops
from anticipation.sample import generate
from anticipation.tokenize import extract_instruments
from anticipation.convert import events_to_midi, midi_to_events
from anticipation.config import TIME_RESOLUTION

SMALL_MODEL = 'stanford-crfm/music-small-800k'      # faster inference, worse sample quality
MEDIUM_MODEL = 'stanford-crfm/music-medium-800k'    # slower inference, better sample quality
LARGE_MODEL = 'stanford-crfm/music-large-800k'      # slowest inference, best sample quality


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--midi', required=True)
    p.add_argument('--melody-program', type=int, required=True,
                   help='General MIDI program number of the melody track')
    p.add_argument('--start', type=float, default=5.0, help='seconds of accompaniment kept as prompt')
    p.add_argument('--end', type=float, default=20.0, help='generate up to this time (seconds)')
    p.add_argument('--model', default=MEDIUM_MODEL)
    p.add_argument('--top-p', type=float, default=0.98)
    p.add_argument('--n-samples', type=int, default=3)
    p.add_argument('--out', default='out')
    p.add_argument('--gpu', type=int, default=0, help='which GPU to use')
    p.add_argument('--fp16', action='store_true', help='load weights in half precision')
    return p.parse_args()


def load_model(name, gpu, fp16):
    if not torch.cuda.is_available():
        raise SystemExit('A CUDA GPU is required (the medium model needs ~3 GB of GPU memory).')
    torch.cuda.set_device(gpu)
    dtype = torch.float16 if fp16 else torch.float32
    model = AutoModelForCausalLM.from_pretrained(name, torch_dtype=dtype).cuda()
    model.eval()
    props = torch.cuda.get_device_properties(gpu)
    print(f'loaded {name} on {props.name} ({props.total_memory / 2**30:.1f} GiB), dtype={dtype}')
    return model


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)

    model = load_model(args.model, args.gpu, args.fp16)

    events = midi_to_events(args.midi)
    events = ops.clip(events, 0, args.end, clip_duration=False)
    events, melody = extract_instruments(events, [args.melody_program])

    history = ops.clip(events, 0, args.start, clip_duration=False)
    print(f'prompt: {len(history) // 3} accompaniment events, {len(melody) // 3} melody controls')

    for i in range(args.n_samples):
        t0 = time.time()
        torch.cuda.synchronize()
        accompaniment = generate(model, args.start, args.end, inputs=history, controls=melody,
                                 top_p=args.top_p, debug=False)
        torch.cuda.synchronize(args.gpu)
        dt = time.time() - t0

        output = ops.combine(accompaniment, melody)
        mid = events_to_midi(output)
        path = os.path.join(args.out, f'accompaniment-{i}.mid')
        mid.save(path)

        n_new = (len(accompaniment) - len(history)) // 3
        print(f'[{i}] {n_new} new events in {dt:.1f}s -> {path}')

    print(f'peak GPU memory: {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB')


if __name__ == '__main__':
    main()
