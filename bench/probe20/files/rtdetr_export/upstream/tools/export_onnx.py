"""Export an RT-DETR checkpoint to ONNX / TorchScript and check it with onnxruntime.

    python tools/export_onnx.py -c configs/rtdetr/rtdetr_r50vd_6x_coco.yml -r ckpt/rtdetr_r50vd.pth --check --simplify
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))

import numpy as np
import torch
import torch.nn as nn

from src.core import YAMLConfig


class Model(nn.Module):
    def __init__(self, cfg) -> None:
        super().__init__()
        self.model = cfg.model.deploy()
        self.postprocessor = cfg.postprocessor.deploy()

    def forward(self, images, orig_target_sizes):
        outputs = self.model(images)
        return self.postprocessor(outputs, orig_target_sizes)


def load_model(args):
    cfg = YAMLConfig(args.config, resume=args.resume)
    if args.resume:
        checkpoint = torch.load(args.resume, map_location='cpu')
        if 'ema' in checkpoint:
            state = checkpoint['ema']['module']
        else:
            state = checkpoint['model']
    else:
        raise AttributeError('Only support resume to load model.state_dict by now.')
    # NOTE load train mode state -> convert to deploy mode
    cfg.model.load_state_dict(state)
    return Model(cfg)


def benchmark(model, size, n=50):
    data = torch.rand(1, 3, size, size).cuda()
    sizes = torch.tensor([[size, size]]).cuda()
    with torch.no_grad():
        for _ in range(10):
            model(data, sizes)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            model(data, sizes)
        torch.cuda.synchronize()  # drain the queue before stopping the clock
    return (time.perf_counter() - t0) / n * 1000


def main(args):
    model = load_model(args)
    model.eval()

    if args.benchmark:
        model_gpu = model.cuda()
        print(f'PyTorch latency @{args.size}: {benchmark(model_gpu, args.size):.2f} ms')
        model = model_gpu.cpu()

    data = torch.rand(1, 3, args.size, args.size)
    size = torch.tensor([[args.size, args.size]])
    _ = model(data, size)

    dynamic_axes = {
        'images': {0: 'N', },
        'orig_target_sizes': {0: 'N'}
    }

    torch.onnx.export(
        model,
        (data, size),
        args.file_name,
        input_names=['images', 'orig_target_sizes'],
        output_names=['labels', 'boxes', 'scores'],
        dynamic_axes=dynamic_axes,
        opset_version=16,
        verbose=False,
        do_constant_folding=True,
    )

    if args.torchscript:
        traced = torch.jit.trace(model, (data, size), check_trace=False)
        traced.save(os.path.splitext(args.file_name)[0] + '.pt')

    if args.check:
        import onnx
        onnx_model = onnx.load(args.file_name)
        onnx.checker.check_model(onnx_model)
        print('Check export onnx model done...')

        import onnxruntime as ort
        providers = ['CUDAExecutionProvider', 'CPUExecutionProvider']
        sess = ort.InferenceSession(args.file_name, providers=providers)
        print('onnxruntime providers:', sess.get_providers())
        outs = sess.run(None, {'images': data.numpy(), 'orig_target_sizes': size.numpy()})
        with torch.no_grad():
            ref = model(data, size)
        for o, r in zip(outs, ref):
            np.testing.assert_allclose(o, r.numpy(), rtol=1e-3, atol=1e-4)
        print('onnxruntime matches PyTorch')

    if args.simplify:
        import onnx
        import onnxsim
        dynamic = True
        input_shapes = {'images': data.shape, 'orig_target_sizes': size.shape} if dynamic else None
        onnx_model_simplify, check = onnxsim.simplify(args.file_name, input_shapes=input_shapes, dynamic_input_shape=dynamic)
        onnx.save(onnx_model_simplify, args.file_name)
        print(f'Simplify onnx model {check}...')


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--config', '-c', type=str, )
    parser.add_argument('--resume', '-r', type=str, )
    parser.add_argument('--file-name', '-f', type=str, default='model.onnx')
    parser.add_argument('--size', '-s', type=int, default=640)
    parser.add_argument('--check', action='store_true', default=False,)
    parser.add_argument('--simplify', action='store_true', default=False,)
    parser.add_argument('--torchscript', action='store_true', default=False, help='also save a TorchScript trace')
    parser.add_argument('--benchmark', action='store_true', default=False, help='time the PyTorch model on the GPU first')
    args = parser.parse_args()
    main(args)
