# Copyright The Lightning team.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
from functools import partial
from typing import Any

import numpy as np
import pytest
import torch
from torch import Tensor

from torchmetrics.audio.dnsmos import DeepNoiseSuppressionMeanOpinionScore
from torchmetrics.functional.audio.dnsmos import (
    DNSMOS_DIR,
    _load_session,
    _polyfit_val,
    deep_noise_suppression_mean_opinion_score,
)
from torchmetrics.utilities.imports import _LIBROSA_AVAILABLE, _ONNXRUNTIME_AVAILABLE, _REQUESTS_AVAILABLE
from unittests import _Input
from unittests._helpers import seed_all
from unittests._helpers.testers import MetricTester

seed_all(42)

if _LIBROSA_AVAILABLE and _ONNXRUNTIME_AVAILABLE and _REQUESTS_AVAILABLE:
    import librosa
else:
    librosa = None

_DNSMOS_READY = _LIBROSA_AVAILABLE and _ONNXRUNTIME_AVAILABLE and _REQUESTS_AVAILABLE

inputs = [
    _Input(preds=torch.rand(2, 3, 1, 16000), target=None),
    _Input(preds=torch.rand(2, 3, 1, 48000), target=None),
    _Input(preds=torch.rand(2, 2, 40000), target=None),
]


def _reference_dnsmos(preds: np.ndarray, fs: int, personalized: bool, device: str = "cpu") -> Tensor:
    """Straight port of microsoft/DNS-Challenge dnsmos_local.py used as the reference implementation."""
    sess = _load_session(f"{DNSMOS_DIR}/{'p' if personalized else ''}DNSMOS/sig_bak_ovr.onnx", torch.device(device))
    p808_sess = _load_session(f"{DNSMOS_DIR}/DNSMOS/model_v8.onnx", torch.device(device))
    shape = preds.shape
    preds = preds.reshape(-1, shape[-1])
    out = []
    for p in preds:
        if fs != 16000:
            p = librosa.resample(p, orig_sr=fs, target_sr=16000)
        while len(p) < int(9.01 * 16000):
            p = np.append(p, p)
        seg = p[: int(9.01 * 16000)].astype("float32")[None]
        mel = librosa.feature.melspectrogram(y=seg[0, :-160], sr=16000, n_fft=321, hop_length=160, n_mels=120)
        mel = ((librosa.power_to_db(mel, ref=np.max) + 40) / 40).T.astype("float32")[None]
        p808 = p808_sess.run(None, {"input_1": mel})[0]
        mos = sess.run(None, {"input_1": seg})[0]
        res = _polyfit_val(np.concatenate([p808, mos], axis=-1).astype("float64"), personalized)
        out.append(res[0])
    return torch.from_numpy(np.stack(out).reshape(shape[:-1] + (4,)))


def _dnsmos_cheat(preds, target, **kwargs: Any):
    # cheat the MetricTester as the dnsmos doesn't need target
    return deep_noise_suppression_mean_opinion_score(preds, **kwargs)


class _DNSMOSCheat(DeepNoiseSuppressionMeanOpinionScore):
    # cheat the MetricTester as DeepNoiseSuppressionMeanOpinionScore doesn't need target
    def update(self, preds: Tensor, target: Tensor) -> None:
        super().update(preds=preds)


def _average_metric(preds, target, metric_func, **kwargs: Any):
    # DNSMOS returns 4 values per sample; the modular metric averages over samples
    return metric_func(preds, **kwargs).reshape(-1, 4).mean(dim=0)


@pytest.mark.skipif(not _DNSMOS_READY, reason="test requires librosa, onnxruntime and requests")
@pytest.mark.parametrize(
    ("preds", "fs", "personalized"),
    [
        (inputs[0].preds, 16000, False),
        (inputs[0].preds, 16000, True),
        (inputs[1].preds, 48000, False),
        (inputs[2].preds, 16000, False),
    ],
)
class TestDNSMOS(MetricTester):
    """Test class for `DeepNoiseSuppressionMeanOpinionScore` metric."""

    atol = 5e-3

    @pytest.mark.parametrize("ddp", [pytest.param(True, marks=pytest.mark.DDP), False])
    def test_dnsmos(self, preds: Tensor, fs: int, personalized: bool, ddp: bool, device="cpu"):
        """Test class implementation of metric."""
        if ddp and preds.ndim > 3:
            pytest.skip("ddp test only supports 3d inputs")
        self.run_class_metric_test(
            ddp=ddp,
            preds=preds,
            target=preds,
            metric_class=_DNSMOSCheat,
            reference_metric=partial(
                _average_metric, metric_func=_reference_dnsmos, fs=fs, personalized=personalized, device=device
            ),
            metric_args={"fs": fs, "personalized": personalized, "device": device},
        )

    def test_dnsmos_functional(self, preds: Tensor, fs: int, personalized: bool, device="cpu"):
        """Test functional implementation of metric."""
        self.run_functional_metric_test(
            preds=preds,
            target=preds,
            metric_functional=_dnsmos_cheat,
            reference_metric=partial(_reference_dnsmos, fs=fs, personalized=personalized, device=device),
            metric_args={"fs": fs, "personalized": personalized, "device": device},
        )

    @pytest.mark.skipif(not torch.cuda.is_available(), reason="test requires cuda")
    def test_dnsmos_gpu(self, preds: Tensor, fs: int, personalized: bool):
        """Run the functional metric on GPU tensors; the onnx session should pick the CUDA provider."""
        device = "cuda:0"
        res_gpu = deep_noise_suppression_mean_opinion_score(preds.to(device), fs=fs, personalized=personalized)
        res_cpu = _reference_dnsmos(preds.numpy(), fs=fs, personalized=personalized, device="cpu")
        assert torch.allclose(res_gpu.cpu(), res_cpu, atol=self.atol)

    def test_dnsmos_differentiability(self, preds: Tensor, fs: int, personalized: bool):
        """DNSMOS runs through onnxruntime and is therefore not differentiable."""
        metric = DeepNoiseSuppressionMeanOpinionScore(fs=fs, personalized=personalized)
        assert not metric.is_differentiable

    def test_dnsmos_half_cpu(self, preds: Tensor, fs: int, personalized: bool):
        """Half precision inputs are upcast before being handed to onnxruntime."""
        res = deep_noise_suppression_mean_opinion_score(preds.half(), fs=fs, personalized=personalized)
        assert res.dtype == torch.float64
