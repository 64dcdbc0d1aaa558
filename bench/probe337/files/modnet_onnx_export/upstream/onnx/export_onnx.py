"""
Export ONNX model of MODNet with:
    input shape: (batch_size, 3, height, width)
    output shape: (batch_size, 1, height, width)

Arguments:
    --ckpt-path: path of the checkpoint that will be converted
    --output-path: path for saving the ONNX model
    --opset: ONNX opset version (default: 11)
    --check: run onnx.checker and compare against PyTorch on a random input

Example:
    python export_onnx.py \
        --ckpt-path=modnet_photographic_portrait_matting.ckpt \
        --output-path=modnet_photographic_portrait_matting.onnx

NOTE: the released checkpoints were trained on GPUs with nn.DataParallel, hence the
      wrapper below; the exported graph itself is device independent.
"""

import os
import argparse

import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable

from . import modnet_onnx


def check_onnx(onnx_path, torch_out, dummy):
    import onnx
    import onnxruntime

    model = onnx.load(onnx_path)
    onnx.checker.check_model(model)

    # the check is done on CPU so that it works on any machine
    session = onnxruntime.InferenceSession(onnx_path, providers=['CPUExecutionProvider'])
    input_name = session.get_inputs()[0].name
    ort_out = session.run(None, {input_name: dummy.cpu().numpy()})[0]
    np.testing.assert_allclose(torch_out.detach().cpu().numpy(), ort_out, rtol=1e-3, atol=1e-5)
    print('ONNX output matches PyTorch output.')


if __name__ == '__main__':
    # define cmd arguments
    parser = argparse.ArgumentParser()
    parser.add_argument('--ckpt-path', type=str, required=True, help='path of the checkpoint that will be converted')
    parser.add_argument('--output-path', type=str, required=True, help='path for saving the ONNX model')
    parser.add_argument('--opset', type=int, default=11, help='ONNX opset version')
    parser.add_argument('--check', action='store_true', help='validate the exported model with onnxruntime')
    args = parser.parse_args()

    # check input arguments
    if not os.path.exists(args.ckpt_path):
        print('Cannot find checkpoint path: {0}'.format(args.ckpt_path))
        exit()

    # define model & load checkpoint
    modnet = modnet_onnx.MODNet(backbone_pretrained=False)
    modnet = nn.DataParallel(modnet).cuda()
    state_dict = torch.load(args.ckpt_path)
    modnet.load_state_dict(state_dict)
    modnet.eval()

    # prepare dummy_input
    batch_size = 1
    height = 512
    width = 512
    dummy_input = Variable(torch.randn(batch_size, 3, height, width)).cuda()

    with torch.no_grad():
        torch_out = modnet.module(dummy_input)

    # export to onnx model
    torch.onnx.export(
        modnet.module, dummy_input, args.output_path, export_params=True,
        opset_version=args.opset,
        input_names=['input'], output_names=['output'],
        dynamic_axes={'input': {0: 'batch_size', 2: 'height', 3: 'width'}, 'output': {0: 'batch_size', 2: 'height', 3: 'width'}})

    if args.check:
        check_onnx(args.output_path, torch_out, dummy_input)
