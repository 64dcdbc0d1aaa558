# -*- coding: utf-8 -*-

# Copyright 2024 Wen-Chin Huang
#  MIT License (https://opensource.org/licenses/MIT)

"""LDNet model (Huang et al., ICASSP 2022): listener-dependent MOS prediction.

Encoder: MobileNetV3-style inverted residual blocks over a log-magnitude spectrogram.
Decoder: listener embedding + BLSTM + frame-level projection.
"""

import math

import torch
import torch.nn as nn
import torchaudio
from sheet.modules.ldnet.modules import MobileNetV3ConvBlocks, Projection
from sheet.modules.utils import make_non_pad_mask


class LDNet(nn.Module):
    def __init__(
        self,
        model_input: str,
        # listener related
        num_listeners: int,
        listener_emb_dim: int = 128,
        use_mean_listener: bool = True,
        # model related
        activation: str = "ReLU",
        encoder_type: str = "mobilenetv3",
        encoder_bneck_configs: list = [
            [16, 3, 16, 16, True, "RE", 3, 1],
            [16, 3, 72, 24, False, "RE", 3, 1],
            [24, 3, 88, 24, False, "RE", 1, 1],
            [24, 5, 96, 40, True, "HS", 3, 1],
            [40, 5, 240, 40, True, "HS", 1, 1],
            [40, 5, 240, 40, True, "HS", 1, 1],
            [40, 5, 120, 48, True, "HS", 1, 1],
            [48, 5, 144, 48, True, "HS", 1, 1],
            [48, 5, 288, 96, True, "HS", 3, 1],
            [96, 5, 576, 96, True, "HS", 1, 1],
            [96, 5, 576, 96, True, "HS", 1, 1],
        ],
        encoder_output_dim: int = 256,
        decoder_type: str = "ffn",
        decoder_dnn_dim: int = 64,
        output_type: str = "scalar",
        range_clipping: bool = True,
        # feature extraction
        n_fft: int = 512,
        hop_length: int = 256,
        win_length: int = 512,
    ):
        super().__init__()  # this is needed! or else there will be an error.
        self.use_mean_listener = use_mean_listener
        self.output_type = output_type
        self.model_input = model_input

        # only accept waveform input; spectrogram is computed on the fly
        assert model_input == "waveform", "LDNet in sheet only supports waveform input"
        self.spectrogram = torchaudio.transforms.Spectrogram(
            n_fft=n_fft, hop_length=hop_length, win_length=win_length, power=1.0
        )
        self.hop_length = hop_length
        feat_dim = n_fft // 2 + 1

        # define listener embedding
        self.num_listeners = num_listeners
        self.listener_embeddings = nn.Embedding(
            num_embeddings=num_listeners, embedding_dim=listener_emb_dim
        )

        # define activation
        self.activation = getattr(nn, activation)

        # define encoder
        if encoder_type == "mobilenetv3":
            self.encoder = MobileNetV3ConvBlocks(encoder_bneck_configs, encoder_output_dim)
        else:
            raise NotImplementedError

        # define decoder
        self.decoder_type = decoder_type
        if decoder_type == "ffn":
            decoder_dnn_input_dim = encoder_output_dim + listener_emb_dim
        elif decoder_type == "rnn":
            self.decoder_rnn = nn.LSTM(
                input_size=encoder_output_dim + listener_emb_dim,
                hidden_size=decoder_dnn_dim // 2,
                num_layers=1,
                batch_first=True,
                bidirectional=True,
            )
            decoder_dnn_input_dim = decoder_dnn_dim
        else:
            raise NotImplementedError
        # there is always dnn
        self.decoder_dnn = Projection(
            decoder_dnn_input_dim,
            decoder_dnn_dim,
            self.activation,
            output_type,
            range_clipping,
        )

    def _intermediate_forward(self, waveform, waveform_lengths, listener_ids):
        # log magnitude spectrogram: (B, T) -> (B, 1, T', F)
        mag = self.spectrogram(waveform)
        mag = torch.log1p(mag).transpose(1, 2).unsqueeze(1)
        frame_lengths = waveform_lengths // self.hop_length + 1

        encoder_outputs = self.encoder(mag)  # (B, T', encoder_output_dim)
        time_step = encoder_outputs.size(1)

        # inject listener embedding
        listener_embs = self.listener_embeddings(listener_ids)  # (B, emb_dim)
        listener_embs = torch.stack([listener_embs for i in range(time_step)], dim=1)
        decoder_inputs = torch.cat([encoder_outputs, listener_embs], dim=-1)

        # masked frames are zeroed so the mean over time ignores padding
        mask = make_non_pad_mask(frame_lengths, xs=encoder_outputs[..., 0]).unsqueeze(-1)
        if self.decoder_type == "rnn":
            decoder_outputs, _ = self.decoder_rnn(decoder_inputs)
        else:
            decoder_outputs = decoder_inputs
        decoder_outputs = self.decoder_dnn(decoder_outputs)
        decoder_outputs = decoder_outputs * mask.to(decoder_outputs.dtype)
        return decoder_outputs, frame_lengths

    def forward(self, inputs):
        """Calculate forward propagation.

        Args:
            inputs: dict, which has the following keys:
                - waveform has shape (batch, time)
                - waveform_lengths has shape (batch)
                - listener_ids has shape (batch)
        """
        waveform = inputs["waveform"]
        waveform_lengths = inputs["waveform_lengths"]
        listener_ids = inputs["listener_idxs"]

        batch_size = waveform.size(0)
        if self.use_mean_listener:
            mean_listener_ids = torch.ones(batch_size, dtype=torch.long, device=waveform.device) * (self.num_listeners - 1)
            listener_ids = torch.cat([listener_ids, mean_listener_ids], dim=0)
            waveform = torch.cat([waveform, waveform], dim=0)
            waveform_lengths = torch.cat([waveform_lengths, waveform_lengths], dim=0)

        decoder_outputs, frame_lengths = self._intermediate_forward(waveform, waveform_lengths, listener_ids)

        ret = {"frame_lengths": frame_lengths[:batch_size]}
        if self.use_mean_listener:
            ret["ld_scores"] = decoder_outputs[:batch_size]
            ret["mean_scores"] = decoder_outputs[batch_size:]
        else:
            ret["ld_scores"] = decoder_outputs
        return ret

    def mean_listener_inference(self, inputs):
        waveform = inputs["waveform"]
        waveform_lengths = inputs["waveform_lengths"]
        batch_size = waveform.size(0)
        listener_ids = torch.ones(batch_size, dtype=torch.long, device=waveform.device) * (self.num_listeners - 1)
        decoder_outputs, frame_lengths = self._intermediate_forward(waveform, waveform_lengths, listener_ids)
        scores = decoder_outputs.squeeze(-1).sum(dim=1) / frame_lengths.to(decoder_outputs.dtype)
        return {"scores": scores}

    def average_inference(self, inputs):
        waveform = inputs["waveform"]
        waveform_lengths = inputs["waveform_lengths"]
        batch_size = waveform.size(0)
        all_scores = []
        for lid in range(self.num_listeners - 1):
            listener_ids = torch.full((batch_size,), lid, dtype=torch.long, device=waveform.device)
            decoder_outputs, frame_lengths = self._intermediate_forward(waveform, waveform_lengths, listener_ids)
            all_scores.append(decoder_outputs.squeeze(-1).sum(dim=1) / frame_lengths.to(decoder_outputs.dtype))
        return {"scores": torch.stack(all_scores, dim=0).mean(dim=0)}

    def get_num_params(self):
        return sum(p.numel() for n, p in self.named_parameters())
