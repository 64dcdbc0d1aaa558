"""Export DDColor to ONNX and sanity-check it with onnxruntime.

    python export.py --model_path pretrain/ddcolor_paper_tiny.pth --model_size tiny --export_path weights/ddcolor-tiny.onnx

The exported graph takes an RGB image (grey, 3 channels, [0, 1]) of size input_size x input_size
and returns the predicted ab channels.
"""
import argparse
import os
import time

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnxsim import simplify

from basicsr.archs.ddcolor_arch import DDColor


def parse_args():
    parser = argparse.ArgumentParser(description='Export DDColor to ONNX')
    parser.add_argument('--input_size', type=int, default=512, help='model input size')
    parser.add_argument('--batch_size', type=int, default=1, help='batch size for the dummy input')
    parser.add_argument('--model_path', type=str, required=True, help='path to the .pth weights')
    parser.add_argument('--model_size', type=str, default='tiny', choices=['tiny', 'large'])
    parser.add_argument('--decoder_type', type=str, default='MultiScaleColorDecoder')
    parser.add_argument('--export_path', type=str, default='./ddcolor.onnx')
    parser.add_argument('--opset', type=int, default=12)
    parser.add_argument('--no_simplify', action='store_true')
    parser.add_argument('--device', type=str, default='cuda:0', help='device used for tracing')
    return parser.parse_args()


def create_model(args, device):
    encoder_name = 'convnext-t' if args.model_size == 'tiny' else 'convnext-l'
    if args.decoder_type == 'MultiScaleColorDecoder':
        model = DDColor(
            encoder_name=encoder_name,
            decoder_name='MultiScaleColorDecoder',
            input_size=[args.input_size, args.input_size],
            num_output_channels=2,
            last_norm='Spectral',
            do_normalize=False,
            num_queries=100,
            num_scales=3,
            dec_layers=9,
        )
    else:
        model = DDColor(
            encoder_name=encoder_name,
            decoder_name='SingleColorDecoder',
            input_size=[args.input_size, args.input_size],
            num_output_channels=2,
            last_norm='Spectral',
            do_normalize=False,
            num_queries=256,
        )
    state = torch.load(args.model_path, map_location='cpu')
    model.load_state_dict(state['params'], strict=False)
    return model.to(device).eval()


def check_onnx(model, export_path, dummy, rtol=1e-3, atol=1e-4):
    onnx_model = onnx.load(export_path)
    onnx.checker.check_model(onnx_model)

    providers = ['CUDAExecutionProvider', 'CPUExecutionProvider']
    session = ort.InferenceSession(export_path, providers=providers)
    print('onnxruntime providers in use:', session.get_providers())

    with torch.no_grad():
        ref = model(dummy).cpu().numpy()
    ort_inputs = {session.get_inputs()[0].name: dummy.cpu().numpy()}
    t0 = time.time()
    out = session.run(None, ort_inputs)[0]
    print(f'onnxruntime latency: {(time.time() - t0) * 1000:.1f} ms')
    np.testing.assert_allclose(ref, out, rtol=rtol, atol=atol)
    print('ONNX output matches PyTorch within tolerance.')


def main():
    args = parse_args()
    device = torch.device(args.device)

    model = create_model(args, device)
    dummy = torch.rand(args.batch_size, 3, args.input_size, args.input_size, device=device)

    os.makedirs(os.path.dirname(os.path.abspath(args.export_path)), exist_ok=True)
    torch.onnx.export(
        model,
        dummy,
        args.export_path,
        opset_version=args.opset,
        input_names=['input'],
        output_names=['output'],
        dynamic_axes={'input': {0: 'batch_size'}, 'output': {0: 'batch_size'}},
    )
    print(f'Exported to {args.export_path}')

    if not args.no_simplify:
        model_onnx = onnx.load(args.export_path)
        model_simp, ok = simplify(model_onnx)
        assert ok, 'Simplified ONNX model could not be validated'
        onnx.save(model_simp, args.export_path)
        print('Simplified ONNX saved.')

    check_onnx(model, args.export_path, dummy)


if __name__ == '__main__':
    main()
