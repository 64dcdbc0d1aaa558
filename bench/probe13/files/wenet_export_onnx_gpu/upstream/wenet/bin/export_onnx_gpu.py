# Copyright (c) 2022, NVIDIA CORPORATION.  All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");

from __future__ import print_function

import argparse
import logging
import os
import sys

import numpy as np
import onnxruntime as ort
import torch
import torch.nn.functional as F
import yaml

from wenet.utils.init_model import init_model
from wenet.utils.mask import make_pad_mask

try:
    import onnx
except ImportError:
    print("Please install onnx and onnxruntime-gpu!")
    sys.exit(1)

logger = logging.getLogger(__file__)
logger.setLevel(logging.INFO)


class Encoder(torch.nn.Module):
    def __init__(self, encoder, ctc, beam_size: int = 10):
        super().__init__()
        self.encoder = encoder
        self.ctc = ctc
        self.beam_size = beam_size

    def forward(self, speech: torch.Tensor, speech_lengths: torch.Tensor):
        encoder_out, encoder_mask = self.encoder(speech, speech_lengths, -1, -1)
        encoder_out_lens = encoder_mask.squeeze(1).sum(1)
        ctc_log_probs = self.ctc.log_softmax(encoder_out)
        encoder_out_lens = encoder_out_lens.int()
        beam_log_probs, beam_log_probs_idx = torch.topk(ctc_log_probs, self.beam_size, dim=2)
        return encoder_out, encoder_out_lens, ctc_log_probs, beam_log_probs, beam_log_probs_idx


def to_numpy(tensor):
    if tensor.requires_grad:
        return tensor.detach().cpu().numpy()
    else:
        return tensor.cpu().numpy()


def export_offline_encoder(model, configs, args, logger, encoder_onnx_path):
    bz = 32
    seq_len = 100
    beam_size = args.beam_size
    feature_size = configs["input_dim"]

    speech = torch.randn(bz, seq_len, feature_size, dtype=torch.float32)
    speech_lens = torch.randint(low=10, high=seq_len, size=(bz,), dtype=torch.int32)
    encoder = Encoder(model.encoder, model.ctc, beam_size)
    encoder.eval()

    torch.onnx.export(
        encoder,
        (speech, speech_lens),
        encoder_onnx_path,
        export_params=True,
        opset_version=13,
        do_constant_folding=True,
        input_names=["speech", "speech_lengths"],
        output_names=["encoder_out", "encoder_out_lens", "ctc_log_probs", "beam_log_probs", "beam_log_probs_idx"],
        dynamic_axes={
            "speech": {0: "B", 1: "T"},
            "speech_lengths": {0: "B"},
            "encoder_out": {0: "B", 1: "T_OUT"},
            "encoder_out_lens": {0: "B"},
            "ctc_log_probs": {0: "B", 1: "T_OUT"},
            "beam_log_probs": {0: "B", 1: "T_OUT"},
            "beam_log_probs_idx": {0: "B", 1: "T_OUT"},
        },
        verbose=False,
    )

    with torch.no_grad():
        o0 = encoder(speech, speech_lens)

    providers = ["CUDAExecutionProvider"]
    ort_session = ort.InferenceSession(encoder_onnx_path, providers=providers)
    ort_inputs = {"speech": to_numpy(speech), "speech_lengths": to_numpy(speech_lens)}
    ort_outs = ort_session.run(None, ort_inputs)

    # check encoder output
    test(to_numpy(o0), ort_outs)
    logger.info("export offline onnx encoder succeed!")


def test(xlist, blist, rtol=1e-3, atol=1e-5, tolerate_small_mismatch=True):
    for a, b in zip(xlist, blist):
        try:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
        except AssertionError as error:
            if tolerate_small_mismatch:
                print(error)
            else:
                raise


def get_args():
    parser = argparse.ArgumentParser(description="export your script model")
    parser.add_argument("--config", required=True, help="config file")
    parser.add_argument("--checkpoint", required=True, help="checkpoint model")
    parser.add_argument("--cmvn_file", required=False, default="", type=str, help="global_cmvn file, default path is in config file")
    parser.add_argument("--output_onnx_dir", default="onnx_model", help="output onnx encoder and decoder directory")
    parser.add_argument("--fp16", action="store_true", help="whether to export fp16 model, default false")
    parser.add_argument("--beam_size", default=10, type=int, required=False)
    return parser.parse_args()


if __name__ == "__main__":
    torch.manual_seed(0)
    torch.set_printoptions(precision=10)

    args = get_args()
    output_dir = args.output_onnx_dir
    os.system("mkdir -p " + output_dir)
    os.environ["CUDA_VISIBLE_DEVICES"] = "-1"

    with open(args.config, "r") as fin:
        configs = yaml.load(fin, Loader=yaml.FullLoader)

    model, configs = init_model(args, configs)
    model.eval()
    print(model)

    encoder_onnx_path = os.path.join(output_dir, "encoder.onnx")
    export_offline_encoder(model, configs, args, logger, encoder_onnx_path)

    if args.fp16:
        try:
            import onnxmltools
            from onnxmltools.utils.float16_converter import convert_float_to_float16
        except ImportError:
            print("Please install onnxmltools!")
            sys.exit(1)
        encoder_onnx_model = onnxmltools.utils.load_model(encoder_onnx_path)
        encoder_onnx_model = convert_float_to_float16(encoder_onnx_model)
        encoder_onnx_path = os.path.join(output_dir, "encoder_fp16.onnx")
        onnxmltools.utils.save_model(encoder_onnx_model, encoder_onnx_path)

    logger.info("export to onnx gpu succeed!")
