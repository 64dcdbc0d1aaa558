import gc
import hashlib
import io
import json
import logging
import os
import time
from pathlib import Path

import librosa
import numpy as np
import soundfile
import torch
import torchaudio

import cluster
import utils
from models import SynthesizerTrn
from diffusion.unit2mel import load_model_vocoder

logging.getLogger('matplotlib').setLevel(logging.WARNING)


def pad_array(arr, target_length):
    current_length = arr.shape[0]
    if current_length >= target_length:
        return arr
    pad_width = target_length - current_length
    pad_left = pad_width // 2
    pad_right = pad_width - pad_left
    return np.pad(arr, (pad_left, pad_right), 'constant', constant_values=(0, 0))


def split_list_by_n(list_collection, n, pre=0):
    for i in range(0, len(list_collection), n):
        yield list_collection[i - pre if i - pre >= 0 else i: i + n]


class Svc(object):
    def __init__(self, net_g_path, config_path,
                 device=None,
                 cluster_model_path="logs/44k/kmeans_10000.pt",
                 nsf_hifigan_enhance=False,
                 diffusion_model_path="logs/44k/diffusion/model_0.pt",
                 shallow_diffusion=False,
                 only_diffusion=False,
                 spk_mix_enable=False):
        self.net_g_path = net_g_path
        self.only_diffusion = only_diffusion
        self.shallow_diffusion = shallow_diffusion
        if device is None:
            self.dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        else:
            self.dev = torch.device(device)
        self.net_g_ms = None
        self.hps_ms = utils.get_hparams_from_file(config_path, True)
        self.target_sample = self.hps_ms.data.sampling_rate
        self.hop_size = self.hps_ms.data.hop_length
        self.spk2id = self.hps_ms.spk
        self.unit_interpolate_mode = getattr(self.hps_ms.data, "unit_interpolate_mode", "left")
        self.vol_embedding = getattr(self.hps_ms.model, "vol_embedding", False)
        self.speech_encoder = getattr(self.hps_ms.model, "speech_encoder", "vec768l12")
        self.nsf_hifigan_enhance = nsf_hifigan_enhance

        if self.shallow_diffusion or self.only_diffusion:
            self.diffusion_model, self.vocoder, self.diffusion_args = load_model_vocoder(
                diffusion_model_path, self.dev, config_path=self.diffusion_model_path)

        self.hubert_model = utils.get_speech_encoder(self.speech_encoder, device=self.dev)
        self.load_model(spk_mix_enable)
        if os.path.exists(cluster_model_path):
            self.cluster_model = cluster.get_cluster_model(cluster_model_path)

    def load_model(self, spk_mix_enable=False):
        self.net_g_ms = SynthesizerTrn(
            self.hps_ms.data.filter_length // 2 + 1,
            self.hps_ms.train.segment_size // self.hps_ms.data.hop_length,
            **self.hps_ms.model)
        _ = utils.load_checkpoint(self.net_g_path, self.net_g_ms, None)
        self.dtype = list(self.net_g_ms.parameters())[0].dtype
        if "half" in self.net_g_path and torch.cuda.is_available():
            _ = self.net_g_ms.half().eval().to(self.dev)
        else:
            _ = self.net_g_ms.eval().to(self.dev)
        if spk_mix_enable:
            self.net_g_ms.EnableCharacterMix(len(self.spk2id), self.dev)

    def get_unit_f0(self, wav, tran, cluster_infer_ratio, speaker, f0_filter, f0_predictor, cr_threshold=0.05):
        f0_predictor_object = utils.get_f0_predictor(
            f0_predictor, hop_length=self.hop_size, sampling_rate=self.target_sample,
            device=self.dev, threshold=cr_threshold)
        f0, uv = f0_predictor_object.compute_f0_uv(wav)
        f0 = torch.FloatTensor(f0).to(self.dev)
        uv = torch.FloatTensor(uv).to(self.dev)
        f0 = f0 * 2 ** (tran / 12)
        f0 = f0.unsqueeze(0)
        uv = uv.unsqueeze(0)

        wav = torch.from_numpy(wav).to(self.dev)
        wav16k = torchaudio.functional.resample(wav, self.target_sample, 16000)
        c = self.hubert_model.encoder(wav16k)
        c = utils.repeat_expand_2d(c.squeeze(0), f0.shape[1], self.unit_interpolate_mode)
        c = c.unsqueeze(0)
        return c, f0, uv

    def infer(self, speaker, tran, raw_path, cluster_infer_ratio=0, auto_predict_f0=False,
              noice_scale=0.4, f0_filter=False, f0_predictor='pm', enhancer_adaptive_key=0,
              cr_threshold=0.05, k_step=100, frame=0, spk_mix=False, second_encoding=False, loudness_envelope_adjustment=1):
        torchaudio.set_audio_backend("soundfile") if hasattr(torchaudio, "set_audio_backend") else None
        wav, sr = torchaudio.load(raw_path)
        if not hasattr(self, "audio_resample_transform") or self.audio16k_resample_transform.orig_freq != sr:
            self.audio_resample_transform = torchaudio.transforms.Resample(sr, self.target_sample)
        wav = self.audio_resample_transform(wav).numpy()[0]
        speaker_id = self.spk2id.get(speaker)
        sid = torch.LongTensor([int(speaker_id)]).to(self.dev).unsqueeze(0)
        c, f0, uv = self.get_unit_f0(wav, tran, cluster_infer_ratio, speaker, f0_filter, f0_predictor, cr_threshold=cr_threshold)
        c = c.to(self.dtype)
        f0 = f0.to(self.dtype)
        uv = uv.to(self.dtype)
        with torch.no_grad():
            start = time.time()
            vol = None
            audio, f0 = self.net_g_ms.infer(c, f0=f0, g=sid, uv=uv, predict_f0=auto_predict_f0,
                                            noice_scale=noice_scale, vol=vol)
            audio = audio[0, 0].data.float()
            use_time = time.time() - start
            print("vits use time:{}".format(use_time))
        return audio, audio.shape[-1], f0

    def clear_empty(self):
        # clean up vram
        torch.cuda.empty_cache()

    def unload_model(self):
        # unload the model
        if self.net_g_ms is not None:
            del self.net_g_ms
            if hasattr(self, "enhancer"):
                del self.enhancer.enhancer
                del self.enhancer
            gc.collect()

    def slice_inference(self, raw_audio_path, spk, tran, slice_db, cluster_infer_ratio, auto_predict_f0,
                        noice_scale, pad_seconds=0.5, clip_seconds=0, lg_num=0, lgr_num=0.75):
        wav, sr = librosa.load(raw_audio_path, sr=self.target_sample)
        audio = []
        per_size = int(clip_seconds * sr)
        for chunk in split_list_by_n(wav, per_size if per_size else len(wav)):
            soundfile.write("tmp.wav", chunk, sr, format="wav")
            out_audio, out_sr, out_frame = self.infer(spk, tran, "tmp.wav", cluster_infer_ratio=cluster_infer_ratio,
                                                      auto_predict_f0=auto_predict_f0, noice_scale=noice_scale)
            audio.extend(list(out_audio.cpu().numpy()))
            self.clear_empty()
        return np.array(audio)
