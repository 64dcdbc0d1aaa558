dependencies = ["torch", "torchaudio"]

import torch

from speechmos.utmos22.strong.model import UTMOS22Strong
from speechmos.aecmos.model import AECMOS


URLS = {
    "utmos22_strong": "https://github.com/tarepan/SpeechMOS/releases/download/v1.0.0/utmos22_strong_step7459_v1.pt",
}
# [Origin]
# "utmos22_strong" is derived from official sarulab-speech/UTMOS22 'UTMOS strong learner' checkpoint, under MIT lisence (Copyright 2022 Saruwatari&Koyama laboratory, The University of Tokyo, https://github.com/sarulab-speech/UTMOS22/blob/master/LICENSE).
# Weight transfer code is in the 'transfer_utmos22_strong' below.


def utmos22_strong(progress: bool = True, pretrained: bool = True, **kwargs) -> UTMOS22Strong:
    """
    `UTMOS strong learner` speech naturalness MOS predictor.

    Args:
        progress - Whether to show model checkpoint load progress
        pretrained - Whether to load pretrained weights
    """

    # Init
    model = UTMOS22Strong(**kwargs)

    # Pretrained weights
    if pretrained:
        state_dict = torch.hub.load_state_dict_from_url(url=URLS["utmos22_strong"], map_location="cpu", progress=progress)
        model.load_state_dict(state_dict)
        model.eval()

    return model


def aecmos(progress: bool = True, pretrained: bool = True, **kwargs) -> AECMOS:
    """AECMOS echo-impairment MOS predictor (onnx-backed, CPU only)."""
    return AECMOS(**kwargs)


def transfer_utmos22_strong(ckpt_path: str, out_path: str) -> None:
    """Convert the official lightning checkpoint into a plain state_dict (run once, offline)."""
    ckpt = torch.load(ckpt_path, map_location="cpu")
    state_dict = {}
    for k, v in ckpt["state_dict"].items():
        k = k.replace("feature_extractors.0.ssl_model.", "wav2vec2.")
        k = k.replace("feature_extractors.1.embedding.", "domain_emb.")
        k = k.replace("output_layers.0.judge_embedding.", "judge_emb.")
        k = k.replace("output_layers.0.decoder_rnn.", "blstm.")
        k = k.replace("output_layers.1.net.", "projection.")
        state_dict[k] = v
    torch.save(state_dict, out_path)
