"""Measure peak GPU memory and throughput of each long-document model (Table 5 of the paper).

    python src/benchmark_memory.py --models bert tobert longformer --lengths 512 1024 2048 4096 --fp16
"""

import argparse
import csv
import subprocess

import torch
import torch.nn as nn

from models import build_model


def gpu_info():
    """Name / total memory / driver as reported by nvidia-smi (recorded next to the numbers)."""
    try:
        out = subprocess.check_output(
            ['nvidia-smi', '--query-gpu=name,memory.total,driver_version', '--format=csv,noheader'],
            encoding='utf-8')
        return out.strip().splitlines()[0]
    except (OSError, subprocess.CalledProcessError):
        return 'unknown'


def run_one(model, seq_len, batch_size, fp16, steps=10, warmup=3):
    device = torch.device('cuda')
    vocab = 30000
    input_ids = torch.randint(1000, vocab, (batch_size, seq_len), device=device)
    attention_mask = torch.ones_like(input_ids)
    labels = torch.randint(0, 2, (batch_size,), device=device)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    scaler = torch.cuda.amp.GradScaler(enabled=fp16)

    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    elapsed = 0.0
    for step in range(warmup + steps):
        if step == warmup:
            start.record()
        with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=fp16):
            logits = model(input_ids=input_ids, attention_mask=attention_mask)
            loss = loss_fn(logits.float(), labels)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
    end.record()
    torch.cuda.synchronize()
    elapsed = start.elapsed_time(end) / 1000.0
    peak_gb = torch.cuda.max_memory_allocated() / 2 ** 30
    return peak_gb, steps * batch_size / elapsed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--models', nargs='+', default=['bert', 'tobert', 'longformer'])
    parser.add_argument('--lengths', nargs='+', type=int, default=[512, 1024, 2048, 4096])
    parser.add_argument('--batch_size', type=int, default=2)
    parser.add_argument('--fp16', action='store_true')
    parser.add_argument('--out', type=str, default='outputs/memory_benchmark.csv')
    args = parser.parse_args()

    print(f'GPU: {gpu_info()}')
    rows = []
    for name in args.models:
        model = build_model(name, num_labels=2).cuda()
        model.train()
        for seq_len in args.lengths:
            if name == 'bert' and seq_len > 512:
                continue  # BERT truncates anyway
            try:
                peak_gb, docs_per_s = run_one(model, seq_len, args.batch_size, args.fp16)
            except RuntimeError as e:
                if 'out of memory' not in str(e):
                    raise
                peak_gb, docs_per_s = float('nan'), 0.0
                torch.cuda.empty_cache()  # release the partial graph before the next length
            print(f'{name:>12s} len={seq_len:5d}  peak={peak_gb:6.2f} GB  {docs_per_s:7.2f} docs/s')
            rows.append({'model': name, 'seq_len': seq_len, 'batch_size': args.batch_size,
                         'fp16': args.fp16, 'peak_gb': peak_gb, 'docs_per_s': docs_per_s})
        del model

    with open(args.out, 'w', newline='') as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)


if __name__ == '__main__':
    main()
