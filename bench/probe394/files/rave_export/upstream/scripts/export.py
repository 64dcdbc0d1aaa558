import logging
import math
import os

logging.basicConfig(level=logging.INFO,
                    format='%(asctime)s - %(levelname)s - %(message)s')
logging.info("library loading")
logging.info("DEBUG")
import torch
import torch.nn as nn

torch.set_grad_enabled(False)

import cached_conv as cc
import gin
import nn_tilde
import numpy as np
from absl import flags, app
from typing import Union, Optional

try:
    import rave
except:
    import sys, os
    sys.path.append(os.path.abspath('.'))
    import rave

import rave.blocks
import rave.core
import rave.resampler

FLAGS = flags.FLAGS

flags.DEFINE_string(
    'run',
    default=None,
    help='Path to the run to export. Supports .ckpt file or folder',
    required=True)
flags.DEFINE_bool('streaming',
                  default=False,
                  help='Enable the model streaming mode')
flags.DEFINE_float(
    'fidelity',
    default=.95,
    lower_bound=.1,
    upper_bound=.999,
    help='Fidelity to use during inference (Variational mode only)')
flags.DEFINE_bool(
    'stereo',
    default=False,
    help='Enable fake stereo mode (one encoding, double decoding')
flags.DEFINE_integer('sr',
                     default=None,
                     help='Optional resampling sample rate')
flags.DEFINE_string('output', default=None, help='Output directory')
flags.DEFINE_string('name', default=None, help='Name of the exported model')
flags.DEFINE_bool('ema', default=True, help='Use EMA weights if available')


class ScriptedRAVE(nn_tilde.Module):

    def __init__(self,
                 pretrained: rave.RAVE,
                 channels: Optional[int] = None,
                 fidelity: float = .95,
                 target_sr: bool = None) -> None:

        super().__init__()
        self.pqmf = pretrained.pqmf
        self.sr = pretrained.sr
        self.spectrogram = pretrained.spectrogram
        self.resampler = None
        self.input_mode = pretrained.input_mode
        self.output_mode = pretrained.output_mode
        self.n_channels = pretrained.n_channels
        self.target_channels = channels or self.n_channels
        self.stereo_mode = False

        if target_sr is not None:
            if target_sr != self.sr:
                assert not target_sr % self.sr, "Incompatible target sampling rate"
                self.resampler = rave.resampler.Resampler(target_sr, self.sr)
                self.sr = target_sr

        self.full_latent_size = pretrained.latent_size
        self.is_using_adain = False
        for m in self.modules():
            if isinstance(m, rave.blocks.AdaptiveInstanceNormalization):
                self.is_using_adain = True
                break

        self.register_attribute("learn_target", False)
        self.register_attribute("reset_target", False)
        self.register_attribute("learn_source", False)
        self.register_attribute("reset_source", False)

        self.register_buffer("latent_pca", pretrained.latent_pca)
        self.register_buffer("latent_mean", pretrained.latent_mean)
        self.register_buffer("fidelity", pretrained.fidelity)

        self.encoder = pretrained.encoder
        self.decoder = pretrained.decoder

        x_len = 2**14
        x = torch.zeros(1, self.n_channels, x_len)
        z = self.encode(x)
        ratio_encode = x_len // z.shape[-1]

        self.register_buffer(
            "encode_params",
            torch.tensor([
                self.n_channels,
                1,
                self.full_latent_size,
                ratio_encode,
            ]))

        self.register_method(
            "encode",
            in_channels=self.n_channels,
            in_ratio=1,
            out_channels=self.full_latent_size,
            out_ratio=ratio_encode,
            input_labels=['(signal) Channel %d' % d for d in range(1, self.n_channels + 1)],
            output_labels=[
                f'(signal) Latent dimension {i + 1}'
                for i in range(self.full_latent_size)
            ],
        )
        self.register_method(
            "decode",
            in_channels=self.full_latent_size,
            in_ratio=ratio_encode,
            out_channels=self.target_channels,
            out_ratio=1,
            input_labels=[
                f'(signal) Latent dimension {i+1}'
                for i in range(self.full_latent_size)
            ],
            output_labels=['(signal) Channel %d' % d for d in range(1, self.target_channels + 1)],
        )

    @torch.jit.export
    def encode(self, x):
        if self.resampler is not None:
            x = self.resampler.to_model_sampling_rate(x)
        if self.input_mode == "pqmf":
            x = self.pqmf(x)
        z = self.encoder(x)
        z = self.post_process_latent(z)
        return z

    @torch.jit.export
    def decode(self, z):
        z = self.pre_process_latent(z)
        y = self.decoder(z)
        if self.output_mode == "pqmf":
            y = self.pqmf.inverse(y)
        if self.resampler is not None:
            y = self.resampler.from_model_sampling_rate(y)
        return y

    def post_process_latent(self, z):
        raise NotImplementedError

    def pre_process_latent(self, z):
        raise NotImplementedError

    def forward(self, x):
        return self.decode(self.encode(x))


class VariationalScriptedRAVE(ScriptedRAVE):

    def post_process_latent(self, z):
        z = self.encoder.reparametrize(z)[0]
        z = z - self.latent_mean.unsqueeze(-1)
        z = nn.functional.conv1d(z, self.latent_pca.unsqueeze(-1))
        return z

    def pre_process_latent(self, z):
        z = nn.functional.conv1d(z, self.latent_pca.T.unsqueeze(-1))
        z = z + self.latent_mean.unsqueeze(-1)
        return z


def main(argv):
    cc.use_cached_conv(FLAGS.streaming)

    logging.info("building rave")

    gin.parse_config_file(rave.core.search_for_config(FLAGS.run))
    checkpoint_path = rave.core.search_for_run(FLAGS.run)
    pretrained = rave.RAVE()
    if checkpoint_path is not None:
        checkpoint = torch.load(checkpoint_path, map_location='cpu')
        if FLAGS.ema and "EMA" in checkpoint["callbacks"]:
            pretrained.load_state_dict(checkpoint["callbacks"]["EMA"],
                                       strict=False)
        else:
            pretrained.load_state_dict(checkpoint["state_dict"], strict=False)
    else:
        print("No checkpoint found, RAVE will remain randomly initialized")
    pretrained.eval()

    if isinstance(pretrained.encoder, rave.blocks.VariationalEncoder):
        script_class = VariationalScriptedRAVE
    else:
        raise ValueError(f"Encoder type {type(pretrained.encoder)} "
                         "not supported for export.")

    logging.info("warmup pass")

    x = torch.zeros(1, pretrained.n_channels, 2**14)
    pretrained(x)

    logging.info("optimize model")

    for m in pretrained.modules():
        if hasattr(m, "weight_g"):
            nn.utils.remove_weight_norm(m)

    logging.info("script model")

    scripted_rave = script_class(
        pretrained=pretrained,
        channels=2 if FLAGS.stereo else None,
        fidelity=FLAGS.fidelity,
        target_sr=FLAGS.sr,
    )

    logging.info("save model")
    model_name = FLAGS.name or os.path.basename(os.path.normpath(FLAGS.run))
    if FLAGS.streaming:
        model_name += "_streaming"
    model_name += ".ts"

    output = FLAGS.output or os.path.dirname(FLAGS.run)
    scripted_rave.export_to_ts(os.path.join(output, model_name))

    logging.info(
        f"all good ! model exported to {os.path.join(output, model_name)}")


if __name__ == '__main__':
    app.run(main)
