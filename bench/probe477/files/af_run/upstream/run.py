"""AntiFake: protect a speech sample against voice cloning.

Optimises a small, perceptually constrained perturbation so that several
speaker encoders (SV2TTS / RTVC, AdaIN-VC, YourTTS) map the protected audio
far away from the original speaker and close to a dissimilar target speaker.

    python run.py <input.wav> <output.wav>
"""
import os
import sys
import time
import random
import subprocess
import warnings
from pathlib import Path

import numpy as np
import yaml
import soundfile as sf


def get_free_gpu():
    """Pick the GPU with the most free memory (falls back to 0)."""
    try:
        out = subprocess.check_output(["nvidia-smi", "--query-gpu=memory.free", "--format=csv,nounits,noheader"])
        free = [int(x) for x in out.decode().strip().split("\n")]
        return str(int(np.argmax(free)))
    except Exception:
        return "0"


os.environ["CUDA_VISIBLE_DEVICES"] = get_free_gpu()
warnings.filterwarnings("ignore")

import torch  # noqa: E402
import torchaudio  # noqa: E402
import librosa  # noqa: E402

from rtvc.encoder import inference as rtvc_encoder  # noqa: E402
from rtvc.encoder.params_data import sampling_rate as rtvc_sr  # noqa: E402
from adaptive_voice_conversion.model import AE  # noqa: E402
from adaptive_voice_conversion.utils import infinite_iter  # noqa: E402
from TTS.api import TTS  # noqa: E402
from attack_utils import (  # noqa: E402
    rtvc_embed, avc_embed, coqui_embed, snr_db, frequency_penalty, pick_target_speaker, load_avc_mel,
)

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

CONFIG = {
    "learning_rate": 0.0002,
    "iterations": 1000,
    "snr_threshold": 30.0,          # dB, quality constraint
    "freq_penalty_weight": 0.1,
    "weights": {"rtvc": 1.0, "avc": 0.5, "coqui": 1.0},
    "target_pool": "speakers/target_pool",
    "rtvc_ckpt": "rtvc/saved_models/default/encoder.pt",
    "avc_ckpt": "adaptive_voice_conversion/vctk_model.ckpt",
    "avc_config": "adaptive_voice_conversion/config.yaml",
    "avc_attr": "adaptive_voice_conversion/attr.pkl",
    "coqui_model": "tts_models/multilingual/multi-dataset/your_tts",
}


def load_models():
    t0 = time.time()
    # SV2TTS speaker encoder
    rtvc_encoder.load_model(Path(CONFIG["rtvc_ckpt"]), device=device)

    # AdaIN-VC
    with open(CONFIG["avc_config"]) as f:
        avc_config = yaml.safe_load(f)
    avc_model = AE(avc_config).to(device)
    avc_model.load_state_dict(torch.load(CONFIG["avc_ckpt"]))
    avc_model.eval()

    # YourTTS (coqui)
    coqui_tts = TTS(CONFIG["coqui_model"], progress_bar=False, gpu=True)
    coqui_encoder = coqui_tts.synthesizer.tts_model.speaker_manager.encoder
    coqui_encoder.eval()
    print(f"models loaded in {time.time() - t0:.1f}s")
    return avc_model, avc_config, coqui_encoder


def protect(wav_in, wav_out):
    avc_model, avc_config, coqui_encoder = load_models()

    src, sr = librosa.load(wav_in, sr=rtvc_sr)
    src_t = torch.from_numpy(src).float().to(device)

    # embeddings of the source speaker (to push away from)
    with torch.no_grad():
        src_rtvc = rtvc_embed(src_t)
        src_avc = avc_embed(avc_model, load_avc_mel(src_t, avc_config))
        src_coqui = coqui_embed(coqui_encoder, src_t)

    # choose the most dissimilar target speaker from the pool
    target_path = pick_target_speaker(CONFIG["target_pool"], src_rtvc, device)
    tgt, _ = librosa.load(target_path, sr=rtvc_sr)
    tgt_t = torch.from_numpy(tgt).float().to(device)
    with torch.no_grad():
        tgt_rtvc = rtvc_embed(tgt_t)
        tgt_avc = avc_embed(avc_model, load_avc_mel(tgt_t, avc_config))
        tgt_coqui = coqui_embed(coqui_encoder, tgt_t)
    print(f"target speaker: {target_path}")

    delta = torch.zeros_like(src_t, requires_grad=True)
    opt = torch.optim.Adam([delta], lr=CONFIG["learning_rate"])
    w = CONFIG["weights"]
    best = None
    t_start = time.time()
    for it in range(CONFIG["iterations"]):
        x = torch.clamp(src_t + delta, -1.0, 1.0)
        # LSTM encoders need cudnn disabled to backprop in eval mode
        with torch.backends.cudnn.flags(enabled=False):
            e_rtvc = rtvc_embed(x)
        e_avc = avc_embed(avc_model, load_avc_mel(x, avc_config))
        e_coqui = coqui_embed(coqui_encoder, x)

        loss_rtvc = torch.nn.functional.cosine_similarity(e_rtvc, src_rtvc, dim=-1) - \
            torch.nn.functional.cosine_similarity(e_rtvc, tgt_rtvc, dim=-1)
        loss_avc = torch.nn.functional.cosine_similarity(e_avc, src_avc, dim=-1) - \
            torch.nn.functional.cosine_similarity(e_avc, tgt_avc, dim=-1)
        loss_coqui = torch.nn.functional.cosine_similarity(e_coqui, src_coqui, dim=-1) - \
            torch.nn.functional.cosine_similarity(e_coqui, tgt_coqui, dim=-1)
        loss = w["rtvc"] * loss_rtvc.mean() + w["avc"] * loss_avc.mean() + w["coqui"] * loss_coqui.mean()
        loss = loss + CONFIG["freq_penalty_weight"] * frequency_penalty(delta, rtvc_sr)

        opt.zero_grad()
        loss.backward()
        opt.step()

        with torch.no_grad():
            cur_snr = snr_db(src_t, x)
            if cur_snr < CONFIG["snr_threshold"]:
                # project back onto the SNR ball
                scale = 10 ** ((cur_snr - CONFIG["snr_threshold"]) / 20)
                delta.mul_(scale)
            if best is None or loss.item() < best[0]:
                best = (loss.item(), x.detach().clone())

        if it % 50 == 0:
            print(f"iter {it:4d} loss {loss.item():.4f} snr {cur_snr:.2f} dB "
                  f"({time.time() - t_start:.0f}s, {torch.cuda.max_memory_allocated() / 2 ** 30:.1f} GB)")
            torch.cuda.empty_cache()

    out = best[1].cpu().numpy()
    sf.write(wav_out, out, rtvc_sr)
    print(f"protected audio written to {wav_out}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: python run.py <input.wav> <output.wav>")
        sys.exit(1)
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    protect(sys.argv[1], sys.argv[2])
