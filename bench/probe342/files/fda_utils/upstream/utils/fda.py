"""
Fourier Domain Adaptation (FDA, CVPR 2020): swap the low-frequency amplitude
spectrum of a source image with that of a target image.

Ported from the original torch.rfft implementation (removed in PyTorch 1.8) to
the torch.fft module. `FDA_source_to_target` runs batched on the GPU inside the
training loop; `FDA_source_to_target_np` is the numpy reference used by
`tools/visualize_fda.py` and the unit tests.
"""
import numpy as np
import torch


def low_freq_mutate(amp_src, amp_trg, L=0.1):
    """Replace the centred low-frequency window of amp_src by amp_trg.

    Both amplitudes are expected *fft-shifted*, shape (B, C, H, W).
    """
    _, _, h, w = amp_src.size()
    b = int(np.floor(min(h, w) * L))
    c_h = int(np.floor(h / 2.0))
    c_w = int(np.floor(w / 2.0))

    h1, h2 = c_h - b, c_h + b + 1
    w1, w2 = c_w - b, c_w + b + 1
    amp_src = amp_src.clone()
    amp_src[:, :, h1:h2, w1:w2] = amp_trg[:, :, h1:h2, w1:w2]
    return amp_src


def FDA_source_to_target(src_img, trg_img, L=0.1):
    """Batched FDA on tensors that already live on the training device.

    src_img, trg_img: (B, 3, H, W) float tensors, same size.
    """
    assert src_img.shape == trg_img.shape, (src_img.shape, trg_img.shape)

    # get fft of both source and target
    fft_src = torch.fft.fft2(src_img.clone(), dim=(-2, -1))
    fft_trg = torch.fft.fft2(trg_img.clone(), dim=(-2, -1))

    # extract amplitude and phase of both ffts
    amp_src, pha_src = torch.abs(fft_src), torch.angle(fft_src)
    amp_trg = torch.abs(fft_trg)

    # centre the spectrum so the low frequencies form one window
    amp_src = torch.fft.fftshift(amp_src, dim=(-2, -1))
    amp_trg = torch.fft.fftshift(amp_trg, dim=(-2, -1))

    # replace the low frequency amplitude part of source with that from target
    amp_src_ = low_freq_mutate(amp_src, amp_trg, L=L)
    amp_src_ = torch.fft.ifftshift(amp_src_, dim=(-2, -1))

    # recompose fft of source
    fft_src_ = torch.polar(amp_src_, pha_src)

    # get the recomposed image: source content, target style
    src_in_trg = torch.fft.ifft2(fft_src_, dim=(-2, -1))
    return torch.real(src_in_trg)


def low_freq_mutate_np(amp_src, amp_trg, L=0.1):
    a_src = np.fft.fftshift(amp_src, axes=(-2, -1))
    a_trg = np.fft.fftshift(amp_trg, axes=(-2, -1))

    _, h, w = a_src.shape
    b = (np.floor(np.amin((h, w)) * L)).astype(int)
    c_h = np.floor(h / 2.0).astype(int)
    c_w = np.floor(w / 2.0).astype(int)

    h1 = c_h - b
    h2 = c_h + b + 1
    w1 = c_w - b
    w2 = c_w + b + 1

    a_src[:, h1:h2, w1:w2] = a_trg[:, h1:h2, w1:w2]
    a_src = np.fft.ifftshift(a_src, axes=(-2, -1))
    return a_src


def FDA_source_to_target_np(src_img, trg_img, L=0.1):
    # exchange magnitude
    # input: src_img, trg_img (C, H, W) numpy arrays
    src_img_np = src_img
    trg_img_np = trg_img

    # get fft of both source and target
    fft_src_np = np.fft.fft2(src_img_np, axes=(-2, -1))
    fft_trg_np = np.fft.fft2(trg_img_np, axes=(-2, -1))

    # extract amplitude and phase of both ffts
    amp_src, pha_src = np.abs(fft_src_np), np.angle(fft_src_np)
    amp_trg, pha_trg = np.abs(fft_trg_np), np.angle(fft_trg_np)

    # mutate the amplitude part of source with target
    amp_src_ = low_freq_mutate_np(amp_src, amp_trg, L=L)

    # mutated fft of source
    fft_src_ = amp_src_ * np.exp(1j * pha_src)

    # get the mutated image
    src_in_trg = np.fft.ifft2(fft_src_, axes=(-2, -1))
    src_in_trg = np.real(src_in_trg)

    return src_in_trg


class EntropyLoss(torch.nn.Module):
    """Charbonnier-penalised entropy used by FDA's self-supervised round."""

    def __init__(self, ita=2.0):
        super().__init__()
        self.ita = ita

    def forward(self, x):
        P = torch.softmax(x, dim=1)
        logP = torch.log_softmax(x, dim=1)
        PlogP = P * logP
        ent = -1.0 * PlogP.sum(dim=1)
        ent = ent / 2.9444  # chanage when classes is not 19
        # compute robust entropy
        ent = ent ** 2.0 + 1e-8
        ent = ent ** self.ita
        return ent.mean()


class FDABatchMixer:
    """Applies FDA to a source batch with randomly paired target images.

    Keeps the ImageNet mean on the device once instead of re-creating it every
    iteration (the original training script built it with `.cuda()` per batch).
    """

    def __init__(self, L=0.01, mean=(104.00698793, 116.66876762, 122.67891434)):
        self.L = L
        self.mean_img = torch.tensor(mean, dtype=torch.float32).view(1, 3, 1, 1).cuda()

    def __call__(self, src_img, trg_img):
        B = src_img.size(0)
        mean_img = self.mean_img.repeat(B, 1, src_img.size(2), src_img.size(3))
        src_in_trg = FDA_source_to_target(src_img, trg_img, L=self.L)
        return src_in_trg.clone() - mean_img, trg_img.clone() - mean_img
