"""
python inference_speed_test.py \
    --model-variant mobilenetv3 \
    --resolution 1920 1080 \
    --downsample-ratio 0.25 \
    --precision float32

Measures per-frame latency of the recurrent matting network at a fixed input
resolution. Numbers in the README were taken on an RTX 3090 / GTX 1080Ti with
the TorchScript-frozen model, batch size 1, recurrent states carried over.
"""

import argparse
import statistics
import time

import torch
from tqdm import tqdm

from model.model import MattingNetwork

torch.backends.cudnn.benchmark = True


class InferenceSpeedTest:
    def __init__(self):
        self.parse_args()
        self.init_model()
        self.warmup()
        self.loop()
        self.report()

    def parse_args(self):
        parser = argparse.ArgumentParser()
        parser.add_argument('--model-variant', type=str, required=True)
        parser.add_argument('--resolution', type=int, required=True, nargs=2)
        parser.add_argument('--downsample-ratio', type=float, required=True)
        parser.add_argument('--precision', type=str, default='float32', choices=['float32', 'float16'])
        parser.add_argument('--disable-refiner', action='store_true')
        parser.add_argument('--backend', type=str, default='torchscript', choices=['torchscript', 'eager'])
        parser.add_argument('--iters', type=int, default=1000)
        parser.add_argument('--warmup', type=int, default=50)
        self.args = parser.parse_args()

    def init_model(self):
        self.device = 'cuda'
        self.precision = {'float32': torch.float32, 'float16': torch.float16}[self.args.precision]
        self.model = MattingNetwork(self.args.model_variant)
        if self.args.disable_refiner:
            self.model.refiner = None
        self.model = self.model.to(device=self.device, dtype=self.precision).eval()
        if self.args.backend == 'torchscript':
            self.model = torch.jit.script(self.model)
            self.model = torch.jit.freeze(self.model)

    def _inputs(self):
        w, h = self.args.resolution
        return torch.randn((1, 3, h, w), device=self.device, dtype=self.precision)

    def warmup(self):
        src = self._inputs()
        with torch.no_grad():
            rec = None, None, None, None
            for _ in range(self.args.warmup):
                fgr, pha, *rec = self.model(src, *rec, self.args.downsample_ratio)
        torch.cuda.synchronize()

    def loop(self):
        src = self._inputs()
        self.times_ms = []
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        torch.cuda.reset_peak_memory_stats()
        wall_start = time.perf_counter()
        with torch.no_grad():
            rec = None, None, None, None
            for _ in tqdm(range(self.args.iters)):
                start.record()
                fgr, pha, *rec = self.model(src, *rec, self.args.downsample_ratio)
                end.record()
                end.synchronize()
                self.times_ms.append(start.elapsed_time(end))
        self.wall_s = time.perf_counter() - wall_start

    def report(self):
        w, h = self.args.resolution
        mean_ms = statistics.mean(self.times_ms)
        p50 = statistics.median(self.times_ms)
        p90 = sorted(self.times_ms)[int(0.9 * len(self.times_ms)) - 1]
        peak_mb = torch.cuda.max_memory_allocated() / 2**20
        print(f'device      : {torch.cuda.get_device_name()}')
        print(f'variant     : {self.args.model_variant} ({self.args.backend}, {self.args.precision})')
        print(f'resolution  : {w}x{h}, downsample {self.args.downsample_ratio}')
        print(f'latency     : mean {mean_ms:.2f} ms | p50 {p50:.2f} ms | p90 {p90:.2f} ms')
        print(f'throughput  : {self.args.iters / self.wall_s:.1f} fps (wall clock)')
        print(f'peak memory : {peak_mb:.0f} MiB')


if __name__ == '__main__':
    InferenceSpeedTest()
