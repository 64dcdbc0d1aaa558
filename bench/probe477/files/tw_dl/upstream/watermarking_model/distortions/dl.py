import random
import numpy as np
import torch
import torch.nn as nn
import torchaudio
import julius
from pydub import AudioSegment
from distortions.frequency import fixed_STFT_filter
import kornia

SAMPLE_RATE = 22050
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class distortion(nn.Module):
    """Differentiable (or straight-through) audio attacks applied between the
    watermark encoder and decoder during training."""

    def __init__(self, process_config=None):
        super(distortion, self).__init__()
        self.device = device
        self.resample_kernel1 = julius.ResampleFrac(22050, 16000).to(self.device)
        self.resample_kernel1_re = julius.ResampleFrac(16000, 22050).to(self.device)
        self.resample_kernel2 = julius.ResampleFrac(22050, 8000).to(self.device)
        self.resample_kernel2_re = julius.ResampleFrac(8000, 22050).to(self.device)
        self.augment = kornia.augmentation.RandomGaussianNoise(mean=0.0, std=0.001, p=1.0)
        self.band_lowpass = julius.LowPassFilter(2000 / 22050).to(self.device)
        self.band_highpass = julius.HighPassFilter(500 / 22050).to(self.device)

    def none(self, x):
        return x

    def crop(self, x):
        length = x.shape[2]
        if length > 18000:
            start = random.randint(0, 1000)
            end = random.randint(1, 1000)
            y = x[:, :, start:0 - end]
        else:
            y = x
        return y

    def crop2(self, x):
        length = x.shape[2]
        if length > 18000:
            cut_len = int(length * 0.1)  # cut 10% off
            start = random.randint(0, cut_len - 1)
            end = cut_len - start
            y = x[:, :, start:0 - end]
        else:
            y = x
        return y

    def resample(self, x):
        return x

    def white_noise(self, y):  # SNR = 10log(ps/pn)
        choices = [20, 50, 80]
        SNR = random.choice(choices)
        mean = 0.
        RMS_s = torch.sqrt(torch.mean(y ** 2, dim=2))
        RMS_n = torch.sqrt(RMS_s ** 2 / (pow(10, SNR / 20)))
        for i in range(y.shape[0]):
            noise = torch.normal(mean, float(RMS_n[i][0]), size=(1, y.shape[2]))
            if i == 0:
                batch_noise = noise
            else:
                batch_noise = torch.cat((batch_noise, noise), dim=0)
        batch_noise = batch_noise.unsqueeze(1).to(self.device)
        signal_edit = y + batch_noise
        return signal_edit

    def change_top(self, y):
        y = y * 0.9
        return y

    def mp3(self, y):
        f = []
        a = y.cpu().detach().numpy()
        for i in a:
            audio_segment = AudioSegment(
                (i * 32767).astype(np.int16).tobytes(),
                frame_rate=SAMPLE_RATE,
                sample_width=2,
                channels=1,
            )
            audio_segment.export("./tmp.mp3", format="mp3", bitrate="64k")
            y_mp3 = AudioSegment.from_mp3("./tmp.mp3")
            samples = np.array(y_mp3.get_array_of_samples()).astype(np.float32) / 32767
            f.append(samples[: a.shape[-1]])
        f = torch.tensor(np.array(f)).to(self.device)
        # straight-through estimator: forward value of mp3, gradient of identity
        y = y + (f.view_as(y) - y).detach()
        return y

    def recount(self, y):
        y2 = torch.tensor(np.array(y.cpu().detach().numpy() * (2 ** 7)).astype(np.int8)) / (2 ** 7)
        y2 = y2.to(self.device)
        y = y + (y2 - y).detach()
        return y

    def medfilt(self, y):
        y = kornia.filters.median_blur(y.unsqueeze(1), (1, 3)).squeeze(1)
        return y

    def low_band_pass(self, y):
        y = self.band_lowpass(y)
        return y

    def high_band_pass(self, y):
        y = self.band_highpass(y)
        return y

    def modify_mel(self, y):
        pass
        return y

    def resample_dif(self, y):
        choice = random.choice([1, 2])
        if choice == 1:
            y = self.resample_kernel1_re(self.resample_kernel1(y))
        else:
            y = self.resample_kernel2_re(self.resample_kernel2(y))
        return y

    def amplitude_scaling(self, y):
        factor = random.choice([0.5, 0.8, 0.9, 1.2, 1.5])
        return y * factor

    def echo(self, y, volume=0.3, delay=0.1):
        shift = int(delay * SAMPLE_RATE)
        echo = torch.zeros_like(y)
        echo[..., shift:] = y[..., :-shift] * volume
        return y + echo

    def time_stretch(self, y):
        # time stretching is done in the STFT domain on CPU: phase vocoder is not differentiable
        rate = random.choice([0.9, 1.1])
        spec = torch.stft(y.squeeze(1).cpu(), n_fft=1024, hop_length=256,
                          window=torch.hann_window(1024), return_complex=True)
        stretched = torchaudio.functional.phase_vocoder(spec, rate, torch.linspace(0, np.pi * 256, 513)[..., None])
        out = torch.istft(stretched, n_fft=1024, hop_length=256, window=torch.hann_window(1024))
        return out.unsqueeze(1).to(y.device)

    def forward(self, x, attack_choice=1, ratio=10):
        attack_functions = {
            0: lambda x: self.none(x),
            1: lambda x: self.crop(x),
            2: lambda x: self.white_noise(x),
            3: lambda x: self.change_top(x),
            4: lambda x: self.mp3(x),
            5: lambda x: self.recount(x),
            6: lambda x: self.medfilt(x),
            7: lambda x: self.low_band_pass(x),
            8: lambda x: self.high_band_pass(x),
            9: lambda x: self.resample_dif(x),
            10: lambda x: self.crop2(x),
            11: lambda x: self.amplitude_scaling(x),
            12: lambda x: self.echo(x),
            13: lambda x: self.time_stretch(x),
        }
        x = x.clamp(-1, 1)
        y = attack_functions[attack_choice](x)
        y = y.clamp(-1, 1)
        return y
