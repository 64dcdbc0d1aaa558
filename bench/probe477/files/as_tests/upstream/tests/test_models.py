# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.

import urllib.request
from pathlib import Path

import pytest
import torch
import torchaudio

from audioseal import AudioSeal
from audioseal.builder import create_generator, AudioSealWMConfig
from audioseal.models import AudioSealDetector, AudioSealWM

SAMPLE_URL = "https://dl.fbaipublicfiles.com/audioseal/test/example.wav"


@pytest.fixture
def example_audio(tmp_path: Path):
    path = tmp_path / "test.wav"
    urllib.request.urlretrieve(SAMPLE_URL, path)
    wav, sample_rate = torchaudio.load(path)
    # add batch dimension
    yield wav.unsqueeze(0), sample_rate


@pytest.fixture(scope="module")
def device() -> str:
    # run the heavier tests on GPU when one is around
    return "cuda" if torch.cuda.is_available() else "cpu"


def test_detector(example_audio, device):
    audio, sr = example_audio
    model = AudioSeal.load_generator("audioseal_wm_16bits").to(device)
    audio = audio.to(device)

    secret_message = torch.randint(0, 2, (1, 16), dtype=torch.int32, device=device)
    watermark = model(audio, sample_rate=sr, message=secret_message, alpha=0.8)

    detector = AudioSeal.load_detector("audioseal_detector_16bits").to(device)
    watermarked_audio = audio + watermark

    result, message = detector.detect_watermark(watermarked_audio, sample_rate=sr)  # noqa

    # Due to non-deterministic decoding, messages are not always the same as message
    print(f"\nOriginal message: {secret_message}")
    print(f"Decoded message: {message}")
    print(
        "Matching bits in decoded and original messages: "
        f"{torch.count_nonzero(torch.eq(message, secret_message)).item()}\n"
    )
    assert result > 0.7


def test_loading_from_hf():
    model = AudioSeal.load_generator("facebook/audioseal/generator_base.pth", nbits=16)
    assert isinstance(model, AudioSealWM)

    detector = AudioSeal.load_detector(
        "facebook/audioseal/detector_base.pth", nbits=16
    )
    assert isinstance(detector, AudioSealDetector)


def test_generator_shapes():
    config = AudioSealWMConfig(nbits=16)
    model = create_generator(config)
    x = torch.randn(2, 1, 16000)
    y = model(x, sample_rate=16000, alpha=1.0)
    assert y.shape == x.shape


@pytest.mark.parametrize("sample_rate", [8000, 22050, 44100])
def test_resample_roundtrip(example_audio, sample_rate):
    audio, sr = example_audio
    audio = torchaudio.functional.resample(audio, sr, sample_rate)
    model = AudioSeal.load_generator("audioseal_wm_16bits")
    watermark = model.get_watermark(audio, sample_rate=sample_rate)
    assert watermark.shape[-1] == audio.shape[-1]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="fp16 inference needs a GPU")
def test_half_precision_detector(example_audio):
    audio, sr = example_audio
    detector = AudioSeal.load_detector("audioseal_detector_16bits")
    detector = detector.half().cuda().eval()
    with torch.no_grad():
        result, _ = detector(audio.half().cuda(), sample_rate=sr)
    assert result.dtype == torch.float16
    assert torch.isfinite(result).all()


def test_batch_detection(example_audio, device):
    audio, sr = example_audio
    batch = audio.repeat(4, 1, 1).to(device)
    generator = AudioSeal.load_generator("audioseal_wm_16bits").to(device)
    detector = AudioSeal.load_detector("audioseal_detector_16bits").to(device)
    with torch.no_grad():
        wm = generator.get_watermark(batch, sample_rate=sr)
        probs, msgs = detector(batch + wm, sample_rate=sr)
    assert probs.shape[0] == 4
    assert msgs.shape == (4, 16)
