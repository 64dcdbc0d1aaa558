"""
python inference_speed_test.py \
    --model-variant mobilenetv3 \
    --resolution 1920 1080 \
    --downsample-ratio 0.25 \
    --precision float32

Add `--backend pytorch` to time the eager model instead of the frozen TorchScript one,
and `--report-memory` to print the peak GPU memory of the timed loop.
"""

import argparse
import time
import torch
from tqdm import tqdm

from model.model import MattingNetwork

torch.backends.cudnn.benchmark = True


class InferenceSpeedTest:
    def __init__(self):
        self.parse_args()
        self.init_model()
        self.loop()

    def parse_args(self):
        parser = argparse.ArgumentParser()
        parser.add_argument('--model-variant', type=str, required=True)
        parser.add_argument('--resolution', type=int, required=True, nargs=2)
        parser.add_argument('--downsample-ratio', type=float, required=True)
        parser.add_argument('--precision', type=str, default='float32')
        parser.add_argument('--backend', type=str, default='torchscript', choices=['torchscript', 'pytorch'])
        parser.add_argument('--iterations', type=int, default=1000)
        parser.add_argument('--warmup', type=int, default=10)
        parser.add_argument('--report-memory', action='store_true')
        parser.add_argument('--disable-refiner', action='store_true')
        self.args = parser.parse_args()

    def init_model(self):
        self.device = 'cuda'
        self.precision = {'float32': torch.float32, 'float16': torch.float16}[self.args.precision]
        self.model = MattingNetwork(self.args.model_variant)
        self.model = self.model.to(device=self.device, dtype=self.precision).eval()
        if self.args.backend == 'torchscript':
            self.model = torch.jit.script(self.model)
            self.model = torch.jit.freeze(self.model)

    def loop(self):
        w, h = self.args.resolution
        src = torch.randn((1, 3, h, w), device=self.device, dtype=self.precision)
        with torch.no_grad():
            rec = None, None, None, None
            for _ in range(self.args.warmup):
                fgr, pha, *rec = self.model(src, *rec, self.args.downsample_ratio)
            rec = None, None, None, None
            if self.args.report_memory:
                torch.cuda.reset_peak_memory_stats()
            start = time.time()
            for _ in tqdm(range(self.args.iterations)):
                fgr, pha, *rec = self.model(src, *rec, self.args.downsample_ratio)
                torch.cuda.synchronize()
            elapsed = time.time() - start
        print(f'{self.args.model_variant} [{self.args.backend}] @ {w}x{h} ({self.args.precision}): '
              f'{self.args.iterations / elapsed:.1f} FPS')
        if self.args.report_memory:
            peak = torch.cuda.max_memory_allocated() / 2 ** 20
            print(f'peak memory: {peak:.0f} MB on {torch.cuda.get_device_name()}')


if __name__ == '__main__':
    InferenceSpeedTest()
