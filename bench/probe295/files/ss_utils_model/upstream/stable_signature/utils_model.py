# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.

# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.

import torch
import torch.nn as nn

from omegaconf import OmegaConf

from ldm.util import instantiate_from_config

from hidden.models import HiddenEncoder, HiddenDecoder, EncoderWithJND, EncoderDecoder
from hidden.attenuations import JND


### Load HiDDeN models

def get_hidden_decoder(num_bits, redundancy=1, num_blocks=7, channels=64):
    decoder = HiddenDecoder(num_blocks=num_blocks, num_bits=num_bits * redundancy, channels=channels)
    return decoder


def get_hidden_decoder_ckpt(ckpt_path):
    ckpt = torch.load(ckpt_path, map_location="cpu")
    decoder_ckpt = {k.replace('module.', '').replace('decoder.', ''): v
                    for k, v in ckpt['encoder_decoder'].items() if 'decoder' in k}
    return decoder_ckpt


def get_hidden_encoder(num_bits, num_blocks=4, channels=64, use_jnd=True, scale_channels=False, scaling_i=1.0,
                       scaling_w=1.5):
    encoder = HiddenEncoder(num_blocks=num_blocks, num_bits=num_bits, channels=channels)
    if use_jnd:
        attenuation = JND(preprocess=lambda x: x)
        encoder = EncoderWithJND(encoder, attenuation, scale_channels, scaling_i, scaling_w)
    return encoder


def get_hidden_encoder_ckpt(ckpt_path):
    ckpt = torch.load(ckpt_path, map_location="cpu")
    encoder_ckpt = {k.replace('module.', '').replace('encoder.', ''): v
                    for k, v in ckpt['encoder_decoder'].items() if 'encoder' in k}
    return encoder_ckpt


### Load LDM models

def load_model_from_config(config, ckpt, verbose=False):
    print(f"Loading model from {ckpt}")
    pl_sd = torch.load(ckpt, map_location="cpu")
    if "global_step" in pl_sd:
        print(f"Global Step: {pl_sd['global_step']}")
    sd = pl_sd["state_dict"]
    model = instantiate_from_config(config.model)
    m, u = model.load_state_dict(sd, strict=False)
    if len(m) > 0 and verbose:
        print("missing keys:")
        print(m)
    if len(u) > 0 and verbose:
        print("unexpected keys:")
        print(u)

    model.cuda()
    model.eval()
    return model


def load_watermarked_decoder(ldm_ae, ckpt_path, strict=False):
    """
    Replace the weights of the LDM (first stage) decoder with the fine-tuned ones produced by
    finetune_ldm_decoder.py (key 'ldm_decoder' of checkpoint_XXX.pth).
    """
    state_dict = torch.load(ckpt_path, map_location="cpu")
    if 'ldm_decoder' in state_dict:
        state_dict = state_dict['ldm_decoder']
    msg = ldm_ae.load_state_dict(state_dict, strict=strict)
    print(f"loaded watermarked LDM decoder from {ckpt_path}: {msg}")
    return ldm_ae


def get_ldm_autoencoder(config_path, ckpt_path, half=False):
    """ Returns only the first-stage (VAE) of the LDM, on the GPU, in eval mode. """
    config = OmegaConf.load(config_path)
    ldm = load_model_from_config(config, ckpt_path)
    ldm_ae = ldm.first_stage_model
    ldm_ae.eval()
    if half:
        ldm_ae = ldm_ae.half()
    del ldm
    return ldm_ae


def count_parameters(model: nn.Module, trainable_only=True):
    if trainable_only:
        return sum(p.numel() for p in model.parameters() if p.requires_grad)
    return sum(p.numel() for p in model.parameters())
