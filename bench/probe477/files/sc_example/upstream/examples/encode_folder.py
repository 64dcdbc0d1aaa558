"""Watermark a whole folder with SilentCipher, one worker process per GPU.

    python examples/encode_folder.py --in_dir songs/ --out_dir songs_wm/ --message 12 34 56 78 90
    python examples/encode_folder.py --in_dir songs/ --out_dir songs_wm/ --num_gpus 4 --model_type 44.1k

Each worker loads its own copy of the model on its own GPU and handles every
num_gpus-th file. A CSV with the SDR and a decode check is written at the end.
"""
import argparse
import csv
import os
import time
from pathlib import Path

import librosa
import numpy as np
import soundfile as sf
import torch
import torch.multiprocessing as mp

import silentcipher

AUDIO_EXT = {'.wav', '.flac', '.mp3', '.ogg'}


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument('--in_dir', required=True)
    p.add_argument('--out_dir', required=True)
    p.add_argument('--model_type', default='44.1k', choices=['44.1k', '16k'])
    p.add_argument('--message', type=int, nargs=5, default=[123, 234, 111, 222, 11])
    p.add_argument('--message_sdr', type=float, default=None,
                   help='target SDR of the watermark, default uses the model setting')
    p.add_argument('--num_gpus', type=int, default=torch.cuda.device_count())
    p.add_argument('--check', action='store_true', help='decode right after encoding')
    return p.parse_args()


def list_files(in_dir):
    return sorted(p for p in Path(in_dir).rglob('*') if p.suffix.lower() in AUDIO_EXT)


def worker(rank, args, files, return_dict):
    torch.cuda.set_device(rank)
    model = silentcipher.get_model(model_type=args.model_type, device=f'cuda:{rank}')
    rows = []
    for i, path in enumerate(files):
        if i % args.num_gpus != rank:
            continue
        out_path = Path(args.out_dir) / path.relative_to(args.in_dir)
        out_path = out_path.with_suffix('.wav')
        out_path.parent.mkdir(parents=True, exist_ok=True)
        y, sr = librosa.load(str(path), sr=None, mono=False)
        if y.ndim == 2:
            y = y.T  # (T, C)
        peak = np.max(np.abs(y))
        if peak > 1.0:
            y = y / peak
        t0 = time.time()
        y_wm, sdr = model.encode_wav(y, sr, args.message, message_sdr=args.message_sdr)
        t_enc = time.time() - t0
        sf.write(str(out_path), y_wm, sr)
        row = {'file': str(path), 'sdr': float(sdr), 'encode_s': t_enc}
        if args.check:
            res = model.decode_wav(y_wm, sr, phase_shift_decoding=False)
            row['decoded'] = res['status'] and res['messages'][0] == list(args.message)
            row['confidence'] = res['confidences'][0] if res['status'] else 0.0
        rows.append(row)
        print(f'[gpu{rank}] {path.name}: SDR {sdr:.2f} dB, {t_enc:.2f}s')
    return_dict[rank] = rows
    torch.cuda.empty_cache()


def main():
    args = parse_args()
    files = list_files(args.in_dir)
    print(f'{len(files)} files, {args.num_gpus} GPU worker(s)')
    os.makedirs(args.out_dir, exist_ok=True)

    if args.num_gpus <= 1:
        rows = {}
        args.num_gpus = 1
        worker(0, args, files, rows)
    else:
        manager = mp.Manager()
        rows = manager.dict()
        mp.spawn(worker, args=(args, files, rows), nprocs=args.num_gpus, join=True)

    all_rows = [r for k in sorted(rows.keys()) for r in rows[k]]
    with open(os.path.join(args.out_dir, 'report.csv'), 'w', newline='') as f:
        fieldnames = ['file', 'sdr', 'encode_s', 'decoded', 'confidence']
        w = csv.DictWriter(f, fieldnames=fieldnames, extrasaction='ignore')
        w.writeheader()
        w.writerows(all_rows)
    if all_rows:
        print(f"mean SDR {np.mean([r['sdr'] for r in all_rows]):.2f} dB")
        if args.check:
            print(f"decode success {np.mean([bool(r.get('decoded')) for r in all_rows]) * 100:.1f}%")


if __name__ == '__main__':
    main()
