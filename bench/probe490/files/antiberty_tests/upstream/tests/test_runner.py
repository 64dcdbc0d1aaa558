import time

import pytest
import torch

from antiberty import AntiBERTyRunner

HEAVY = "EVQLVQSGAEVKKPGESLKISCKGSGYSFTSYWIGWVRQMPGKGLEWMGIIYPGDSDTRYSPSFQGQVTISADKSISTAYLQWSSLKASDTAMYYCARRGYSSGWYSFDYWGQGTLVTVSS"
LIGHT = "DIQMTQSPSSLSASVGDRVTITCRASQSISSYLNWYQQKPGKAPKLLIYAASSLQSGVPSRFSGSGSGTDFTLTISSLQPEDFATYYCQQSYSTPLTFGQGTKVEIK"


@pytest.fixture(scope="module")
def runner():
    return AntiBERTyRunner()


def test_embed_shapes(runner):
    embeddings = runner.embed([HEAVY, LIGHT])
    assert len(embeddings) == 2
    # +2 for [CLS] and [SEP]
    assert embeddings[0].shape == (len(HEAVY) + 2, 512)
    assert embeddings[1].shape == (len(LIGHT) + 2, 512)


def test_embed_all_layers(runner):
    embeddings = runner.embed([HEAVY], hidden_layer=None)
    assert embeddings[0].shape[0] == 9


def test_attention(runner):
    embeddings, attentions = runner.embed([LIGHT], return_attention=True)
    assert attentions[0].shape[-1] == len(LIGHT) + 2


def test_classify(runner):
    species, chains = runner.classify([HEAVY, LIGHT])
    assert chains == ["H", "L"]
    assert species[0] == "Human"


def test_fill_masks(runner):
    masked = HEAVY[:30] + "_" * 5 + HEAVY[35:]
    filled = runner.fill_masks([masked])[0]
    assert len(filled) == len(HEAVY)


def test_pll_batched_matches_unbatched(runner):
    a = runner.pseudo_log_likelihood([LIGHT])
    b = runner.pseudo_log_likelihood([LIGHT], batch_size=16)
    assert torch.allclose(a, b, atol=1e-4)


def test_runner_uses_gpu_when_present(runner):
    if torch.cuda.is_available():
        assert runner.device.type == "cuda"
        assert next(runner.model.parameters()).is_cuda
    else:
        assert runner.device.type == "cpu"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="requires a CUDA GPU")
def test_pll_throughput_gpu(runner):
    seqs = [HEAVY] * 8
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    runner.pseudo_log_likelihood(seqs, batch_size=64)
    torch.cuda.synchronize()  # wait for the last batch before stopping the clock
    elapsed = time.perf_counter() - t0
    # ~120 forward passes of 64 sequences each; a single A100 does this in well under a minute
    assert elapsed < 60.0
