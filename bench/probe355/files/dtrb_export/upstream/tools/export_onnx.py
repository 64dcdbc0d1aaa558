"""
Export a trained scene-text-recognition model (saved by train.py) to ONNX and check the
exported graph against PyTorch with onnxruntime.

    python3 tools/export_onnx.py --saved_model saved_models/TPS-ResNet-BiLSTM-Attn.pth \
        --Transformation TPS --FeatureExtraction ResNet --SequenceModeling BiLSTM --Prediction Attn \
        --output trba.onnx

The modules read the global `device` (see modules/prediction.py), so the export has to run on the
GPU when the model was trained there; onnxruntime-gpu is used for the numerical check.
"""
import argparse
import os
import string
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))
from model import Model  # noqa: E402
from utils import CTCLabelConverter, AttnLabelConverter  # noqa: E402

try:
    import onnxruntime as ort
except ImportError:  # export still works, only the check is skipped
    ort = None


def build_model(opt):
    if 'CTC' in opt.Prediction:
        converter = CTCLabelConverter(opt.character)
    else:
        converter = AttnLabelConverter(opt.character)
    opt.num_class = len(converter.character)
    if opt.rgb:
        opt.input_channel = 3

    model = Model(opt)
    state = torch.load(opt.saved_model, map_location='cpu')
    # checkpoints written by train.py come from nn.DataParallel and carry a 'module.' prefix
    state = {k.replace('module.', '', 1): v for k, v in state.items()}
    model.load_state_dict(state)
    return model.eval()


class ExportWrapper(torch.nn.Module):
    """Fix `is_train=False` so the traced graph is the greedy-decoding path."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, image, text):
        return self.model(image, text, is_train=False)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--saved_model', required=True)
    parser.add_argument('--output', default='model.onnx')
    parser.add_argument('--opset', type=int, default=13)
    parser.add_argument('--batch_max_length', type=int, default=25)
    parser.add_argument('--imgH', type=int, default=32)
    parser.add_argument('--imgW', type=int, default=100)
    parser.add_argument('--rgb', action='store_true')
    parser.add_argument('--character', type=str, default='0123456789abcdefghijklmnopqrstuvwxyz')
    parser.add_argument('--sensitive', action='store_true')
    parser.add_argument('--PAD', action='store_true')
    parser.add_argument('--Transformation', type=str, required=True)
    parser.add_argument('--FeatureExtraction', type=str, required=True)
    parser.add_argument('--SequenceModeling', type=str, required=True)
    parser.add_argument('--Prediction', type=str, required=True)
    parser.add_argument('--num_fiducial', type=int, default=20)
    parser.add_argument('--input_channel', type=int, default=1)
    parser.add_argument('--output_channel', type=int, default=512)
    parser.add_argument('--hidden_size', type=int, default=256)
    opt = parser.parse_args()
    if opt.sensitive:
        opt.character = string.printable[:-6]

    model = ExportWrapper(build_model(opt)).cuda()
    dummy_image = torch.randn(1, opt.input_channel, opt.imgH, opt.imgW).cuda()
    dummy_text = torch.zeros(1, opt.batch_max_length + 1, dtype=torch.long, device='cuda')

    with torch.no_grad():
        torch_out = model(dummy_image, dummy_text)

    torch.onnx.export(
        model, (dummy_image, dummy_text), opt.output,
        opset_version=opt.opset,
        input_names=['image', 'text'],
        output_names=['preds'],
        dynamic_axes={'image': {0: 'batch'}, 'text': {0: 'batch'}, 'preds': {0: 'batch'}},
        do_constant_folding=True,
    )
    print(f'exported {opt.output}')

    if ort is None:
        print('onnxruntime not installed, skipping the numerical check')
        return
    sess = ort.InferenceSession(opt.output, providers=['CUDAExecutionProvider', 'CPUExecutionProvider'])
    ort_out = sess.run(None, {'image': dummy_image.cpu().numpy(), 'text': dummy_text.cpu().numpy()})[0]
    diff = np.abs(torch_out.cpu().numpy() - ort_out).max()
    print(f'max |torch - onnxruntime| = {diff:.2e} (providers: {sess.get_providers()})')
    np.testing.assert_allclose(torch_out.cpu().numpy(), ort_out, rtol=1e-3, atol=1e-4)


if __name__ == '__main__':
    main()
