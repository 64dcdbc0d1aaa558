# Copyright (c) 2023 Qualcomm Technologies, Inc.
# All Rights Reserved.

import os
import random
import shutil
import tarfile
import urllib.request
from glob import glob

import numpy as np
import soundfile as sf
import torch
import torch.nn.functional as F
import torchaudio
from torch.utils.data import Dataset
from torchaudio.transforms import FrequencyMasking, MelSpectrogram, TimeMasking
from tqdm import tqdm

label_dict = {
    "_silence_": 0,
    "_unknown_": 1,
    "down": 2,
    "go": 3,
    "left": 4,
    "no": 5,
    "off": 6,
    "on": 7,
    "right": 8,
    "stop": 9,
    "up": 10,
    "yes": 11,
}
print("labels:\t", label_dict)
sample_per_cls_v1 = [1854, 258, 257]
sample_per_cls_v2 = [3077, 371, 408]
SR = 16000


def ScanAudioFiles(root_dir, ver):
    sample_per_cls = sample_per_cls_v1 if ver == 1 else sample_per_cls_v2
    audio_paths, labels = [], []
    for path, _, files in sorted(os.walk(root_dir, followlinks=True)):
        random.shuffle(files)
        for idx, filename in enumerate(files):
            if not filename.endswith(".wav"):
                continue
            dataset, class_name = path.split("/")[-2:]
            if class_name in ("_unknown_", "_silence_"):  # balancing
                if "train" in dataset and idx == sample_per_cls[0]:
                    break
                if "valid" in dataset and idx == sample_per_cls[1]:
                    break
                if "test" in dataset and idx == sample_per_cls[2]:
                    break
            audio_paths.append(os.path.join(path, filename))
            labels.append(label_dict.get(class_name))
    return audio_paths, labels


class SpeechCommand(Dataset):
    def __init__(self, root_dir, ver, transform=None):
        self.transform = transform
        self.data_list, self.labels = ScanAudioFiles(root_dir, ver)

    def __len__(self):
        return len(self.data_list)

    def __getitem__(self, idx):
        audio_path = self.data_list[idx]
        sample, _ = torchaudio.load(audio_path)
        if self.transform:
            sample = self.transform(sample)
        label = self.labels[idx]
        return sample, label


def spec_augment(
    x, frequency_masking_para=20, time_masking_para=20, frequency_mask_num=2, time_mask_num=2
):
    lenF, lenT = x.shape[1:3]
    # Frequency masking
    for _ in range(frequency_mask_num):
        f = np.random.uniform(low=0.0, high=frequency_masking_para)
        f = int(f)
        f0 = random.randint(0, lenF - f)
        x[:, f0 : f0 + f, :] = 0
    # Time masking
    for _ in range(time_mask_num):
        t = np.random.uniform(low=0.0, high=time_masking_para)
        t = int(t)
        t0 = random.randint(0, lenT - t)
        x[:, :, t0 : t0 + t] = 0
    return x


class LogMel:
    def __init__(
        self, device, sample_rate=SR, hop_length=160, win_length=480, n_fft=512, n_mels=40
    ):
        # the mel filterbank runs on the same device as the model, so features are computed on the GPU
        self.mel = MelSpectrogram(
            sample_rate=sample_rate,
            hop_length=hop_length,
            win_length=win_length,
            n_fft=n_fft,
            n_mels=n_mels,
        ).to(device)
        self.device = device

    def __call__(self, x):
        x = x.to(self.device)
        output = (self.mel(x) + 1e-6).log()
        return output


class Padding:
    """zero pad to have 1 sec len"""

    def __init__(self):
        self.output_len = SR

    def __call__(self, x):
        pad_len = self.output_len - x.shape[-1]
        if pad_len > 0:
            x = torch.cat([x, torch.zeros([x.shape[0], pad_len])], dim=-1)
        elif pad_len < 0:
            raise ValueError("no sample exceed 1sec in GSC.")
        return x


class Preprocess:
    def __init__(
        self,
        noise_loc,
        device,
        hop_length=160,
        win_length=480,
        n_fft=512,
        n_mels=40,
        specaug=False,
        sample_rate=SR,
        frequency_masking_para=7,
        time_masking_para=20,
        frequency_mask_num=2,
        time_mask_num=2,
    ):
        if noise_loc is None:
            self.background_noise = []
        else:
            # keep the six background clips resident next to the model to avoid a host copy per batch
            self.background_noise = [
                torchaudio.load(file_name)[0].to(device) for file_name in glob(noise_loc + "/*.wav")
            ]
            assert len(self.background_noise) != 0
        self.feature = LogMel(
            device,
            sample_rate=sample_rate,
            hop_length=hop_length,
            win_length=win_length,
            n_fft=n_fft,
            n_mels=n_mels,
        )
        self.sample_len = sample_rate
        self.specaug = specaug
        self.device = device
        if self.specaug:
            self.frequency_masking_para = frequency_masking_para
            self.time_masking_para = time_masking_para
            self.frequency_mask_num = frequency_mask_num
            self.time_mask_num = time_mask_num
            print(
                "frequency specaug %d %d" % (self.frequency_mask_num, self.frequency_masking_para)
            )
            print("time specaug %d %d" % (self.time_mask_num, self.time_masking_para))

    def __call__(self, x, labels, augment=True, noise_prob=0.8, is_train=True):
        assert len(x.shape) == 3
        if augment:
            for idx in range(x.shape[0]):
                if labels[idx] != 0 and (not is_train or random.random() > noise_prob):
                    continue
                noise_amp = (
                    np.random.uniform(0, 0.1) if labels[idx] != 0 else np.random.uniform(0, 1)
                )
                noise = random.choice(self.background_noise)
                sample_loc = random.randint(0, noise.shape[-1] - self.sample_len)
                noise = noise_amp * noise[:, sample_loc : sample_loc + SR]

                if is_train:
                    x_shift = int(np.random.uniform(-0.1, 0.1) * SR)
                    zero_padding = torch.zeros(1, np.abs(x_shift), device=x.device)
                    if x_shift < 0:
                        temp_x = torch.cat([zero_padding, x[idx, :, :x_shift]], dim=-1)
                    else:
                        temp_x = torch.cat([x[idx, :, x_shift:], zero_padding], dim=-1)
                    x[idx] = temp_x + noise
                else:  # valid
                    x[idx] = x[idx] + noise
                x[idx] = torch.clamp(x[idx], -1.0, 1.0)

        x = self.feature(x)
        if self.specaug:
            for i in range(x.shape[0]):
                x[i] = spec_augment(
                    x[i],
                    self.frequency_masking_para,
                    self.time_masking_para,
                    self.frequency_mask_num,
                    self.time_mask_num,
                )
        return x


def DownloadDataset(loc, url):
    if not os.path.isdir(loc):
        os.mkdir(loc)
    filename = os.path.basename(url)
    urllib.request.urlretrieve(url, os.path.join(loc, filename))
    with tarfile.open(os.path.join(loc, filename), "r:gz") as tar:
        tar.extractall(loc)


def make_12class_dataset(base, target):
    os.mkdir(target)
    os.mkdir(target + "/_unknown_")
    class10 = ["yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go"]
    for clsdir in glob(base + "/*"):
        class_name = clsdir.split("/")[-1]
        if class_name in class10:
            target_dir = target + "/" + class_name
            shutil.copytree(clsdir, target_dir)
        else:
            for _, _, files in os.walk(clsdir):
                for filename in files:
                    if filename.endswith(".wav"):
                        shutil.copy(os.path.join(clsdir, filename),
                                    target + "/_unknown_/" + class_name + "_" + filename)


def SplitDataset(loc):
    # Load the validation and test lists
    with open(os.path.join(loc, "validation_list.txt")) as f:
        valid_list = f.read().splitlines()
    with open(os.path.join(loc, "testing_list.txt")) as f:
        test_list = f.read().splitlines()
    train_dir = loc + "/train"
    valid_dir = loc + "/valid"
    os.mkdir(train_dir)
    os.mkdir(valid_dir)
    for clsdir in tqdm(glob(loc + "/*/")):
        class_name = clsdir.rstrip("/").split("/")[-1]
        if class_name.startswith("_") or class_name in ("train", "valid"):
            continue
        os.makedirs(os.path.join(train_dir, class_name), exist_ok=True)
        os.makedirs(os.path.join(valid_dir, class_name), exist_ok=True)
        for wav in glob(clsdir + "*.wav"):
            rel = class_name + "/" + os.path.basename(wav)
            if rel in test_list:
                continue
            dst = valid_dir if rel in valid_list else train_dir
            shutil.move(wav, os.path.join(dst, rel))

    # silence: cut the background noise into 1 s clips
    noise_dir = os.path.join(loc, "_background_noise_")
    for split in ("train", "valid"):
        os.makedirs(os.path.join(loc, split, "_silence_"), exist_ok=True)
    for noise_file in glob(noise_dir + "/*.wav"):
        audio, sr = sf.read(noise_file)
        n_clip = len(audio) // SR
        for i in range(n_clip):
            split = "valid" if i % 10 == 0 else "train"
            out = os.path.join(loc, split, "_silence_", "%s_%d.wav" % (os.path.basename(noise_file)[:-4], i))
            sf.write(out, audio[i * SR:(i + 1) * SR], SR)

    make_12class_dataset(train_dir, loc + "/train_12class")
    make_12class_dataset(valid_dir, loc + "/valid_12class")
