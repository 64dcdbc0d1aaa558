"""On-the-fly audio feature extractors.

The extractors are nn.Modules so that they can be moved to the GPU together with the
network and wrapped in nn.DataParallel; the raw multichannel waveform is shipped to the
device and the STFT / mel / intensity computation happens there.
"""
import librosa
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def nCr(n, r):
    return int(np.math.factorial(n) / np.math.factorial(r) / np.math.factorial(n - r))


class STFT(nn.Module):
    """Thin wrapper around torch.stft that keeps the window as a buffer."""

    def __init__(self, n_fft=1024, hop_length=600, win_length=None, window='hann', center=True, pad_mode='reflect'):
        super().__init__()
        self.n_fft = n_fft
        self.hop_length = hop_length
        self.win_length = win_length or n_fft
        self.center = center
        self.pad_mode = pad_mode
        if window == 'hann':
            win = torch.hann_window(self.win_length, periodic=True)
        elif window == 'hamming':
            win = torch.hamming_window(self.win_length, periodic=True)
        else:
            raise ValueError('unsupported window {}'.format(window))
        self.register_buffer('window', win, persistent=False)

    def forward(self, x):
        """x: (batch, channels, samples) -> complex (batch, channels, frames, freq)"""
        B, C, N = x.shape
        spec = torch.stft(x.reshape(B * C, N), n_fft=self.n_fft, hop_length=self.hop_length,
                          win_length=self.win_length, window=self.window, center=self.center,
                          pad_mode=self.pad_mode, return_complex=True)
        spec = spec.reshape(B, C, spec.shape[-2], spec.shape[-1]).transpose(2, 3)
        return spec


class LogmelFilterBank(nn.Module):
    def __init__(self, sr=24000, n_fft=1024, n_mels=64, fmin=50, fmax=None, ref=1.0, amin=1e-10, top_db=None):
        super().__init__()
        self.ref = ref
        self.amin = amin
        self.top_db = top_db
        melW = librosa.filters.mel(sr=sr, n_fft=n_fft, n_mels=n_mels, fmin=fmin, fmax=fmax or sr // 2).T
        self.register_buffer('melW', torch.from_numpy(melW).float(), persistent=False)

    def power_to_db(self, x):
        log_spec = 10.0 * torch.log10(torch.clamp(x, min=self.amin))
        log_spec = log_spec - 10.0 * np.log10(np.maximum(self.amin, self.ref))
        if self.top_db is not None:
            log_spec = torch.clamp(log_spec, min=log_spec.max().item() - self.top_db)
        return log_spec

    def forward(self, power):
        mel = torch.matmul(power, self.melW)
        return self.power_to_db(mel)


def intensityvector(spec, melW):
    """Active intensity vector of a FOA STFT.

    spec: complex (batch, 4, frames, freq), channel order W, Y, Z, X
    returns (batch, 3, frames, mel)
    """
    W = spec[:, 0]
    IVx = torch.real(torch.conj(W) * spec[:, 3])
    IVy = torch.real(torch.conj(W) * spec[:, 1])
    IVz = torch.real(torch.conj(W) * spec[:, 2])
    normal = torch.sqrt(IVx ** 2 + IVy ** 2 + IVz ** 2) + 1e-10
    IVx = torch.matmul(IVx / normal, melW)
    IVy = torch.matmul(IVy / normal, melW)
    IVz = torch.matmul(IVz / normal, melW)
    return torch.stack((IVx, IVy, IVz), dim=1)


class LogmelIntensity_Extractor(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        data = cfg['data']
        sample_rate, n_fft, hop_length, window, n_mels = \
            data['sample_rate'], data['n_fft'], data['hop_length'], data['window'], data['n_mels']
        center = True
        pad_mode = 'reflect'
        ref = 1.0
        amin = 1e-10
        top_db = None

        # STFT extractor
        self.stft_extractor = STFT(n_fft=n_fft, hop_length=hop_length, win_length=n_fft,
                                   window=window, center=center, pad_mode=pad_mode)

        # Logmel extractor
        self.logmel_extractor = LogmelFilterBank(sr=sample_rate, n_fft=n_fft, n_mels=n_mels, fmin=20,
                                                 fmax=sample_rate / 2, ref=ref, amin=amin, top_db=top_db)

    def forward(self, x):
        """
        input:
            (batch_size, channels=4, data_length)
        output:
            (batch_size, channels, time_steps, freq_bins)
        """
        if x.ndim != 3:
            raise ValueError("x shape must be (batch_size, num_channels, data_length)\n \
                            Now it is {}".format(x.shape))
        spec = self.stft_extractor(x)
        power = spec.real ** 2 + spec.imag ** 2
        logmel = self.logmel_extractor(power)
        intensity_vector = intensityvector(spec, self.logmel_extractor.melW)
        out = torch.cat((logmel, intensity_vector), dim=1)
        return out


class LogmelGcc_Extractor(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        data = cfg['data']
        sample_rate, n_fft, hop_length, window, n_mels = \
            data['sample_rate'], data['n_fft'], data['hop_length'], data['window'], data['n_mels']
        self.n_mels = n_mels
        self.stft_extractor = STFT(n_fft=n_fft, hop_length=hop_length, win_length=n_fft,
                                   window=window, center=True, pad_mode='reflect')
        self.logmel_extractor = LogmelFilterBank(sr=sample_rate, n_fft=n_fft, n_mels=n_mels, fmin=20,
                                                 fmax=sample_rate / 2, ref=1.0, amin=1e-10, top_db=None)
        # frequency axis of the one-sided spectrum, only used for plotting / debugging
        self.register_buffer('freqs', torch.fft.rfftfreq(n_fft, d=1.0 / sample_rate), persistent=False)

    def gcc_phat(self, spec_m, spec_n):
        R = spec_m * torch.conj(spec_n)
        R = R / (torch.abs(R) + 1e-8)
        cc = torch.fft.irfft(R, dim=-1)
        # put the zero-lag bin in the middle and keep n_mels lags around it
        cc = torch.fft.fftshift(cc, dim=-1)
        mid = cc.shape[-1] // 2
        return cc[..., mid - self.n_mels // 2: mid + self.n_mels // 2]

    def forward(self, x):
        """
        input:
            (batch_size, channels=4, data_length)
        output:
            (batch_size, channels, time_steps, freq_bins)
        """
        if x.ndim != 3:
            raise ValueError("x shape must be (batch_size, num_channels, data_length)\n \
                            Now it is {}".format(x.shape))
        spec = self.stft_extractor(x)
        power = spec.real ** 2 + spec.imag ** 2
        logmel = self.logmel_extractor(power)
        num_channels = x.shape[1]
        gcc_channels = nCr(num_channels, 2)
        gcc_list = []
        for n in range(num_channels):
            for m in range(n + 1, num_channels):
                gcc_list.append(self.gcc_phat(spec[:, m], spec[:, n]))
        gcc = torch.stack(gcc_list, dim=1)
        assert gcc.shape[1] == gcc_channels
        out = torch.cat((logmel, gcc), dim=1)
        return out


class PhaseExtractor(nn.Module):
    """Inter-channel phase differences (sin / cos), optional third stream used by some variants."""

    def __init__(self, cfg):
        super().__init__()
        data = cfg['data']
        self.stft_extractor = STFT(n_fft=data['n_fft'], hop_length=data['hop_length'], window=data['window'])

    def forward(self, x):
        spec = self.stft_extractor(x)
        phase = torch.angle(spec)
        ipd = phase[:, 1:] - phase[:, :1]
        return torch.cat((torch.sin(ipd), torch.cos(ipd)), dim=1)


def mixup_waveform(x, alpha=0.2):
    """Simple in-batch mixup done on whatever device the batch already lives on."""
    lam = np.random.beta(alpha, alpha)
    index = torch.randperm(x.shape[0], device=x.device)
    return lam * x + (1 - lam) * x[index], index, lam


def random_gain(x, low_db=-6., high_db=6.):
    gains_db = torch.empty(x.shape[0], 1, 1, device=x.device).uniform_(low_db, high_db)
    return x * (10. ** (gains_db / 20.))


def pad_to_multiple(x, multiple):
    n = x.shape[-1]
    pad = (multiple - n % multiple) % multiple
    return F.pad(x, (0, pad))
