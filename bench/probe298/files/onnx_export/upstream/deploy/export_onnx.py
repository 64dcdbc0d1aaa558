#!/usr/bin/env python
"""Export a trained CXR classifier to ONNX and check it against PyTorch with onnxruntime.

    python deploy/export_onnx.py --weights output/densenet121/checkpoint-best.pth \
        --model densenet121 --img-size 320 --out deploy/densenet121_cxr.onnx --fp16

The exported graph includes the sigmoid so the serving side gets probabilities directly.
"""
import argparse
import os
import time

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn as nn

import timm

TASKS = ['Atelectasis', 'Cardiomegaly', 'Consolidation', 'Edema', 'Pleural Effusion']


class WithSigmoid(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return torch.sigmoid(self.model(x))


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument('--weights', required=True)
    p.add_argument('--model', default='densenet121')
    p.add_argument('--img-size', type=int, default=320)
    p.add_argument('--opset', type=int, default=17)
    p.add_argument('--out', default='deploy/model.onnx')
    p.add_argument('--fp16', action='store_true', help='export in half precision (needs a GPU)')
    p.add_argument('--dynamic-batch', action='store_true', default=True)
    p.add_argument('--check-batches', type=int, default=4)
    return p.parse_args()


def build(args):
    model = timm.create_model(args.model, pretrained=False, num_classes=len(TASKS))
    ckpt = torch.load(args.weights, map_location='cpu')
    model.load_state_dict(ckpt.get('model', ckpt))
    return WithSigmoid(model).eval()


def export(model, args):
    model = model.cuda()
    dummy = torch.randn(1, 3, args.img_size, args.img_size, device='cuda')
    if args.fp16:
        model = model.half()
        dummy = dummy.half()
    dynamic_axes = {'input': {0: 'batch'}, 'probs': {0: 'batch'}} if args.dynamic_batch else None
    os.makedirs(os.path.dirname(args.out) or '.', exist_ok=True)
    torch.onnx.export(model, dummy, args.out,
                      input_names=['input'], output_names=['probs'],
                      opset_version=args.opset, do_constant_folding=True,
                      dynamic_axes=dynamic_axes)
    onnx_model = onnx.load(args.out)
    onnx.checker.check_model(onnx_model)
    print(f'exported {args.out} ({os.path.getsize(args.out) / 1e6:.1f} MB)')
    return model


def check(model, args):
    providers = ['CUDAExecutionProvider', 'CPUExecutionProvider']
    sess = ort.InferenceSession(args.out, providers=providers)
    print('onnxruntime providers:', sess.get_providers())
    dtype = np.float16 if args.fp16 else np.float32
    max_err = 0.0
    t_ort = 0.0
    for _ in range(args.check_batches):
        x = torch.randn(8, 3, args.img_size, args.img_size)
        x_dev = x.to('cuda', dtype=torch.float16 if args.fp16 else torch.float32)
        with torch.no_grad():
            ref = model(x_dev).float().cpu().numpy()
        t0 = time.perf_counter()
        out = sess.run(['probs'], {'input': x.numpy().astype(dtype)})[0]
        t_ort += time.perf_counter() - t0
        max_err = max(max_err, float(np.abs(out.astype(np.float32) - ref).max()))
    tol = 1e-2 if args.fp16 else 1e-4
    print(f'max |onnx - torch| = {max_err:.2e} (tol {tol:.0e}); ort {t_ort / args.check_batches * 1000:.1f} ms/batch')
    if max_err > tol:
        raise SystemExit('ONNX output does not match PyTorch')


def main():
    args = parse_args()
    model = build(args)
    model = export(model, args)
    check(model, args)


if __name__ == '__main__':
    main()
