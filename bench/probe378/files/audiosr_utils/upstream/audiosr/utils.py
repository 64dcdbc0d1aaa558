import contextlib
import importlib
import json
import os
import time
from huggingface_hub import hf_hub_download

import numpy as np
import soundfile as sf
import torch
import torchaudio
from scipy.signal import butter, cheby1, ellip, bessel, sosfiltfilt, resample_poly

from audiosr.lowpass import lowpass
from audiosr.latent_diffusion.modules.audiomae.AudioMAE import Vanilla_AudioMAE
from audiosr.hifigan.mel_processing import mel_spectrogram_torch

hann_window = {}
mel_basis = {}

CACHE_DIR = os.getenv(
    "AUDIOSR_CACHE_DIR", os.path.join(os.path.expanduser("~"), ".cache/audiosr")
)


def read_list(fname):
    result = []
    with open(fname, "r", encoding="utf-8") as f:
        for each in f.readlines():
            each = each.strip("\n")
            result.append(each)
    return result


def get_duration(fname):
    with contextlib.closing(sf.SoundFile(fname)) as f:
        frames = f.frames
        rate = f.samplerate
        return frames / float(rate)


def get_bit_depth(fname):
    with contextlib.closing(sf.SoundFile(fname)) as f:
        return f.subtype


def get_time():
    t = time.localtime()
    return time.strftime("%d_%m_%Y_%H_%M_%S", t)


def seed_worker(worker_id):
    worker_seed = torch.initial_seed() % 2**32
    np.random.seed(worker_seed)


def normalize_wav(waveform):
    waveform = waveform - np.mean(waveform)
    waveform = waveform / (np.max(np.abs(waveform)) + 1e-8)
    return waveform * 0.5


def pad_wav(waveform, target_length):
    waveform_length = waveform.shape[-1]
    assert waveform_length > 100, "Waveform is too short, %s" % waveform_length

    if waveform_length == target_length:
        return waveform

    # Pad
    temp_wav = np.zeros((1, target_length), dtype=np.float32)
    rand_start = 0

    temp_wav[:, rand_start : rand_start + waveform_length] = waveform
    return temp_wav


def lowpass_filtering_prepare_inference(dl_output):
    waveform = dl_output["waveform"]  # [1, samples]
    sampling_rate = dl_output["sampling_rate"]

    cutoff_freq = (
        _locate_cutoff_freq(dl_output["stft"], percentile=0.985) / 1024
    ) * 24000

    # If the audio is almost empty. Give up processing
    if cutoff_freq < 1000:
        cutoff_freq = 24000

    order = 8
    ftype = np.random.choice(["butter", "cheby1", "ellip", "bessel"])
    filtered_audio = lowpass(
        waveform.numpy().squeeze(),
        highcut=cutoff_freq,
        fs=sampling_rate,
        order=order,
        _type=ftype,
    )

    filtered_audio = torch.FloatTensor(filtered_audio.copy()).unsqueeze(0)

    if waveform.size(-1) <= filtered_audio.size(-1):
        filtered_audio = filtered_audio[..., : waveform.size(-1)]
    else:
        filtered_audio = torch.functional.pad(
            filtered_audio, (0, waveform.size(-1) - filtered_audio.size(-1))
        )

    return {"waveform_lowpass": filtered_audio}


def _locate_cutoff_freq(stft, percentile=0.97):
    def _find_cutoff(x, percentile=0.95):
        percentile = x[-1] * percentile
        for i in range(1, x.shape[0]):
            if x[-i] < percentile:
                return x.shape[0] - i
        return 0

    magnitude = torch.abs(stft)
    energy = torch.cumsum(torch.sum(magnitude, dim=0), dim=0)
    return _find_cutoff(energy, percentile)


def pad_spec(log_mel_spec, target_frame):
    n_frames = log_mel_spec.shape[0]
    p = target_frame - n_frames
    # cut and pad
    if p > 0:
        m = torch.nn.ZeroPad2d((0, 0, 0, p))
        log_mel_spec = m(log_mel_spec)
    elif p < 0:
        log_mel_spec = log_mel_spec[0:target_frame, :]

    if log_mel_spec.size(-1) % 2 != 0:
        log_mel_spec = log_mel_spec[..., :-1]

    return log_mel_spec


def wav_feature_extraction(waveform, target_frame):
    waveform = waveform[0, ...]
    waveform = torch.FloatTensor(waveform)

    log_mel_spec, stft, energy = mel_spectrogram_torch(
        waveform.unsqueeze(0), 2048, 256, 48000, 480, 2048, 20, 24000, center=False
    )
    log_mel_spec = torch.FloatTensor(log_mel_spec[0].T)
    stft = torch.FloatTensor(stft[0].T)

    log_mel_spec, stft = pad_spec(log_mel_spec, target_frame), pad_spec(
        stft, target_frame
    )
    return log_mel_spec, stft


def read_wav_file(filename):
    waveform, sr = torchaudio.load(filename)
    duration = waveform.size(-1) / sr

    if duration > 10.24:
        print(
            "\033[93m {}\033[00m".format(
                "Warning: audio is longer than 10.24 seconds, may degrade the model performance. It's recommand to truncate your audio to 5.12 seconds before input to AudioSR to get the best performance."
            )
        )

    if duration % 5.12 != 0:
        pad_duration = duration + (5.12 - duration % 5.12)
    else:
        pad_duration = duration

    target_frame = int(pad_duration * 100)

    waveform = torchaudio.functional.resample(waveform, sr, 48000)

    waveform = waveform.numpy()[0, ...]

    waveform = normalize_wav(waveform)

    waveform = waveform[None, ...]
    waveform = pad_wav(waveform, target_length=int(48000 * pad_duration))
    return waveform, target_frame, pad_duration


def read_audio_file(filename):
    waveform, target_frame, duration = read_wav_file(filename)
    log_mel_spec, stft = wav_feature_extraction(waveform, target_frame)
    return log_mel_spec, stft, waveform, duration, target_frame


def save_wave(waveform, inputpath, savepath, name="outwav", samplerate=16000):
    if type(name) is not list:
        name = [name] * waveform.shape[0]

    for i in range(waveform.shape[0]):
        if waveform.shape[0] > 1:
            fname = "%s_%s.wav" % (
                os.path.basename(name[i])
                if (not ".wav" in name[i])
                else os.path.basename(name[i]).split(".")[0],
                i,
            )
        else:
            fname = (
                "%s.wav" % os.path.basename(name[i])
                if (not ".wav" in name[i])
                else os.path.basename(name[i]).split(".")[0]
            )
            # Avoid the file name too long to be saved
            if len(fname) > 255:
                fname = f"{hex(hash(fname))}.wav"

        save_path = os.path.join(savepath, fname)
        temp_saved_path = os.path.join(savepath, "temp_" + fname)
        print(
            "\033[98m {}\033[00m".format(
                "Don't forget to try different seeds by setting --seed <int> so that AudioSR can have optimal performance on your hardware."
            )
        )
        print("Save audio to %s." % save_path)
        sf.write(temp_saved_path, waveform[i, 0], samplerate=samplerate)

        # Make sure the output has the same length as the input
        waveform_in, sr_in = torchaudio.load(inputpath)
        target_length = int(waveform_in.size(-1) / sr_in * samplerate)
        data, _ = sf.read(temp_saved_path)
        sf.write(save_path, data[:target_length], samplerate=samplerate)
        os.remove(temp_saved_path)


def get_available_checkpoint_keys(model, ckpt):
    state_dict = torch.load(ckpt, map_location="cpu")["state_dict"]
    current_state_dict = model.state_dict()
    new_state_dict = {}
    for k in state_dict.keys():
        if (
            k in current_state_dict.keys()
            and current_state_dict[k].size() == state_dict[k].size()
        ):
            new_state_dict[k] = state_dict[k]
        else:
            print("==> WARNING: Skipping %s" % k)
    print(
        "%s out of %s keys are matched"
        % (len(new_state_dict.keys()), len(state_dict.keys()))
    )
    return new_state_dict


def get_param_num(model):
    num_param = sum(param.numel() for param in model.parameters())
    return num_param


def instantiate_from_config(config):
    if not "target" in config:
        if config == "__is_first_stage__":
            return None
        elif config == "__is_unconditional__":
            return None
        raise KeyError("Expected key `target` to instantiate.")
    return get_obj_from_str(config["target"])(**config.get("params", dict()))


def get_obj_from_str(string, reload=False):
    module, cls = string.rsplit(".", 1)
    if reload:
        module_imp = importlib.import_module(module)
        importlib.reload(module_imp)
    return getattr(importlib.import_module(module, package=None), cls)


def default_audioldm_config(model_name="basic"):
    basic_config = get_basic_config()
    if "speech" in model_name:
        basic_config["model"]["params"]["unet_config"]["params"]["context_dim"] = None
    return basic_config


def get_basic_config():
    with open(os.path.join(os.path.dirname(__file__), "basic.json"), "r") as f:
        return json.load(f)


def download_checkpoint(checkpoint_name="basic"):
    if checkpoint_name == "basic":
        model_id = "haoheliu/audiosr_basic"

        checkpoint_path = hf_hub_download(
            repo_id=model_id, filename="pytorch_model.bin", cache_dir=CACHE_DIR
        )
    elif checkpoint_name == "speech":
        model_id = "haoheliu/audiosr_speech"
        checkpoint_path = hf_hub_download(
            repo_id=model_id, filename="pytorch_model.bin", cache_dir=CACHE_DIR
        )
    else:
        raise ValueError("Invalid Model Name %s" % checkpoint_name)
    return checkpoint_path
