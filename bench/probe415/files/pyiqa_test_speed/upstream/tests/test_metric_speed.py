"""Benchmark the forward speed of every metric in pyiqa.

Run with:
    pytest tests/test_metric_speed.py -s --metric musiq,maniqa,topiq_nr

Results (ms / image, 1 x 3 x 512 x 512 input) are written to ``ResultsCalibra/speed_benchmark.csv``.
The numbers in the README were measured on a single A100 GPU.
"""
import csv
import os
import time

import pytest
import torch

import pyiqa

SPEED_TEST_SIZE = (1, 3, 512, 512)
WARMUP = 5
REPEAT = 20

SKIP_METRICS = ['fid', 'inception_score', 'qalign']


def pytest_addoption(parser):
    parser.addoption('--metric', action='store', default=None)


@pytest.fixture(scope='module')
def device():
    return torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')


@pytest.fixture(scope='module')
def metric_list(request):
    names = request.config.getoption('--metric', default=None)
    if names:
        return names.split(',')
    return [m for m in pyiqa.list_models() if m not in SKIP_METRICS]


def time_metric_cpu(metric, img, ref=None):
    for _ in range(WARMUP):
        metric(img, ref)
    start = time.time()
    for _ in range(REPEAT):
        metric(img, ref)
    return (time.time() - start) / REPEAT * 1000


def time_metric_gpu(metric, img, ref=None):
    for _ in range(WARMUP):
        metric(img, ref)
    torch.cuda.synchronize()

    start_event = torch.cuda.Event(enable_timing=True)
    end_event = torch.cuda.Event(enable_timing=True)
    start_event.record()
    for _ in range(REPEAT):
        metric(img, ref)
    end_event.record()
    torch.cuda.synchronize()  # wait for the timing events
    return start_event.elapsed_time(end_event) / REPEAT


@torch.no_grad()
def test_speed(device, metric_list):
    results = []
    img = torch.rand(*SPEED_TEST_SIZE).to(device)
    ref = torch.rand(*SPEED_TEST_SIZE).to(device)

    hw_name = torch.cuda.get_device_name(0) if device.type == 'cuda' else 'cpu'
    print(f'Benchmarking {len(metric_list)} metrics on {hw_name}')

    for name in metric_list:
        metric = pyiqa.create_metric(name, device=device)
        use_ref = metric.metric_mode == 'FR'
        if device.type == 'cuda':
            torch.cuda.reset_peak_memory_stats()
            elapsed = time_metric_gpu(metric, img, ref if use_ref else None)
            peak_mem = torch.cuda.max_memory_allocated() / 1024**2
        else:
            elapsed = time_metric_cpu(metric, img, ref if use_ref else None)
            peak_mem = 0
        results.append((name, metric.metric_mode, f'{elapsed:.2f}', f'{peak_mem:.0f}'))
        print(f'{name:<24} {metric.metric_mode:<3} {elapsed:8.2f} ms  {peak_mem:8.0f} MB')

        del metric
        torch.cuda.empty_cache()

    os.makedirs('ResultsCalibra', exist_ok=True)
    with open(os.path.join('ResultsCalibra', 'speed_benchmark.csv'), 'w', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(['metric', 'mode', 'time_ms', 'peak_mem_mb'])
        writer.writerows(results)
