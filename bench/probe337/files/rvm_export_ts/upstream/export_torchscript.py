"""
python export_torchscript.py \
    --model-variant mobilenetv3 \
    --model-refiner deep_guided_filter \
    --precision float16 \
    --checkpoint rvm_mobilenetv3.pth \
    --output rvm_mobilenetv3_fp16.torchscript

The exported model is frozen for the device it was exported on. Export separately
for CPU (float32 only) and for the GPU.
"""

import argparse
import torch

from model import MattingNetwork


class Exporter:
    def __init__(self):
        self.parse_args()
        self.init_model()
        self.export()
        if self.args.smoke_test:
            self.smoke_test()

    def parse_args(self):
        parser = argparse.ArgumentParser()
        parser.add_argument('--model-variant', type=str, required=True, choices=['mobilenetv3', 'resnet50'])
        parser.add_argument('--model-refiner', type=str, default='deep_guided_filter', choices=['deep_guided_filter', 'fast_guided_filter'])
        parser.add_argument('--precision', type=str, required=True, choices=['float16', 'float32'])
        parser.add_argument('--device', type=str, default='cuda')
        parser.add_argument('--checkpoint', type=str, required=False)
        parser.add_argument('--output', type=str, required=True)
        parser.add_argument('--smoke-test', action='store_true')
        self.args = parser.parse_args()

    def init_model(self):
        self.precision = torch.float32 if self.args.precision == 'float32' else torch.float16
        if self.args.device == 'cpu' and self.precision == torch.float16:
            raise ValueError('float16 export requires a GPU device.')
        self.model = MattingNetwork(self.args.model_variant, self.args.model_refiner).eval()
        if self.args.checkpoint is not None:
            self.model.load_state_dict(torch.load(self.args.checkpoint, map_location='cpu'), strict=False)
        self.model = self.model.to(self.args.device, self.precision)

    def export(self):
        model = torch.jit.script(self.model)
        model = torch.jit.freeze(model)
        model.save(self.args.output)
        print(f'Saved TorchScript model to {self.args.output}')

    def smoke_test(self):
        model = torch.jit.load(self.args.output, map_location=self.args.device)
        src = torch.randn(1, 3, 720, 1280, device=self.args.device, dtype=self.precision)
        with torch.no_grad():
            fgr, pha, *rec = model(src, None, None, None, None, 0.375)
        print('fgr', tuple(fgr.shape), 'pha', tuple(pha.shape))


if __name__ == '__main__':
    Exporter()
