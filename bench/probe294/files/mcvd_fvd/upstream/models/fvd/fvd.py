"""Frechet Video Distance with the TorchScript I3D detector from StyleGAN-V.

The detector (i3d_torchscript.pt) is downloaded once and cached next to this
file.  Features are extracted on the GPU in chunks; the Frechet distance itself
is computed with numpy/scipy on the host.
"""
import os
import math
import hashlib
import requests

import numpy as np
import scipy.linalg
import torch
import torch.nn.functional as F
from tqdm import tqdm

i3D_WEIGHTS_URL = "https://www.dropbox.com/s/ge9e5ujwgetktms/i3d_torchscript.pt"
i3D_WEIGHTS_MD5 = None


def download(id, fname, root=os.path.expanduser('~/.cache/video-diffusion')):
    os.makedirs(root, exist_ok=True)
    destination = os.path.join(root, fname)

    if os.path.exists(destination):
        return destination

    session = requests.Session()
    response = session.get(id, stream=True)
    token = get_confirm_token(response)

    if token:
        params = {'id': id, 'confirm': token}
        response = session.get(id, params=params, stream=True)
    save_response_content(response, destination)
    return destination


def get_confirm_token(response):
    for key, value in response.cookies.items():
        if key.startswith('download_warning'):
            return value
    return None


def save_response_content(response, destination):
    CHUNK_SIZE = 8192

    pbar = tqdm(total=0, unit='iB', unit_scale=True)
    with open(destination, 'wb') as f:
        for chunk in response.iter_content(CHUNK_SIZE):
            if chunk:  # filter out keep-alive new chunks
                f.write(chunk)
                pbar.update(len(chunk))
    pbar.close()


def load_i3d_pretrained(device=torch.device('cpu')):
    filepath = download(i3D_WEIGHTS_URL, 'i3d_torchscript.pt')
    i3d = torch.jit.load(filepath).eval().to(device)
    i3d = torch.nn.DataParallel(i3d)
    return i3d


def get_feats(videos, detector, device, bs=10):
    # videos : torch.tensor BCTHW [0, 1]
    detector_kwargs = dict(rescale=False, resize=False, return_features=True)  # Return raw features before the softmax layer.
    feats = np.empty((0, 400))
    with torch.no_grad():
        for i in range((len(videos) - 1) // bs + 1):
            feats = np.vstack([feats, detector(torch.stack([preprocess_single(video) for video in videos[i * bs:(i + 1) * bs]]).to(device), **detector_kwargs).detach().cpu().numpy()])
    return feats


def get_fvd_feats(videos, i3d, device, bs=10):
    # videos in [0, 1] as torch tensor BCTHW
    # videos = [preprocess_single(video) for video in videos]
    embeddings = get_feats(videos, i3d, device, bs)
    return embeddings


def preprocess_single(video, resolution=224, sequence_length=None):
    # video: CTHW, [0, 1]
    c, t, h, w = video.shape

    # temporal crop
    if sequence_length is not None:
        assert sequence_length <= t
        video = video[:, :sequence_length]

    # scale shorter side to resolution
    scale = resolution / min(h, w)
    if h < w:
        target_size = (resolution, math.ceil(w * scale))
    else:
        target_size = (math.ceil(h * scale), resolution)
    video = F.interpolate(video, size=target_size, mode='bilinear', align_corners=False)

    # center crop
    c, t, h, w = video.shape
    w_start = (w - resolution) // 2
    h_start = (h - resolution) // 2
    video = video[:, :, h_start:h_start + resolution, w_start:w_start + resolution]

    # [0, 1] -> [-1, 1]
    video = (video - 0.5) * 2

    return video.contiguous()


def _symmetric_matrix_square_root(mat, eps=1e-10):
    u, s, v = torch.svd(mat)
    si = torch.where(s < eps, s, torch.sqrt(s))
    return torch.matmul(torch.matmul(u, torch.diag(si)), v.t())


def trace_sqrt_product(sigma, sigma_v):
    sqrt_sigma = _symmetric_matrix_square_root(sigma)
    sqrt_a_sigmav_a = torch.matmul(sqrt_sigma, torch.matmul(sigma_v, sqrt_sigma))
    return torch.trace(_symmetric_matrix_square_root(sqrt_a_sigmav_a))


def cov(m, rowvar=False):
    '''Estimate a covariance matrix given data.

    Args:
        m: A 1-D or 2-D array containing multiple variables and observations.
        rowvar: If `rowvar` is True, then each row represents a variable.

    Returns:
        The covariance matrix of the variables.
    '''
    if m.dim() > 2:
        raise ValueError('m has more than 2 dimensions')
    if m.dim() < 2:
        m = m.view(1, -1)
    if not rowvar and m.size(0) != 1:
        m = m.t()

    fact = 1.0 / (m.size(1) - 1)  # unbiased estimate
    m_center = m - torch.mean(m, dim=1, keepdim=True)
    mt = m_center.t()  # if complex: mt = m.t().conj()
    return fact * m_center.matmul(mt).squeeze()


def frechet_distance(x1, x2):
    x1 = x1.flatten(start_dim=1) if torch.is_tensor(x1) else x1.reshape(len(x1), -1)
    x2 = x2.flatten(start_dim=1) if torch.is_tensor(x2) else x2.reshape(len(x2), -1)
    mu, sigma = compute_stats(x1)
    mu_gen, sigma_gen = compute_stats(x2)
    m = np.square(mu_gen - mu).sum()
    s, _ = scipy.linalg.sqrtm(np.dot(sigma_gen, sigma), disp=False)  # pylint: disable=no-member
    fid = np.real(m + np.trace(sigma_gen + sigma - s * 2))
    return float(fid)


def compute_stats(feats: np.ndarray):
    mu = feats.mean(axis=0)  # [d]
    sigma = np.cov(feats, rowvar=False)  # [d, d]
    return mu, sigma


if __name__ == '__main__':
    # quick self-check on random clips
    device = torch.device('cuda')
    i3d = load_i3d_pretrained(device=device)
    real = torch.rand(16, 3, 16, 64, 64)
    fake = torch.rand(16, 3, 16, 64, 64)
    fr = get_fvd_feats(real, i3d, device)
    ff = get_fvd_feats(fake, i3d, device)
    print('FVD(random, random) =', frechet_distance(fr, ff))
