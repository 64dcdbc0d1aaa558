import logging

import numpy as np
import torch
from torch.fft import fft, ifft, fftshift
from scipy.signal import butter, filtfilt

logger = logging.getLogger(__name__)


def find_good_channels(ops, chunk_size=60000, device=torch.device('cuda')):
    """Drop channels whose spike rate is implausibly low (detached / broken sites)."""
    if ops['settings']['highpass_cutoff'] is None:
        cutoff = 300
    else:
        cutoff = ops['settings']['highpass_cutoff']
    hp_filter = get_highpass_filter(ops['fs'], cutoff, device=device)
    twav_min = ops['settings']['twav_min']
    n_chan_bin = ops['n_chan_bin']
    chan_map = ops['probe']['chanMap']

    # Load a chunk of data from the middle of the recording
    from kilosort.io import BinaryRWFile
    bfile = BinaryRWFile(ops['filename'], n_chan_bin, ops['fs'], chunk_size, ops['nt'],
                         twav_min, chan_map, hp_filter, device=device,
                         dtype=ops['data_dtype'])
    X = bfile.padded_batch_to_torch(bfile.n_batches // 2)
    bfile.close()

    # find spikes with a generous threshold, on every channel independently
    X = X - X.mean(1, keepdim=True)
    thresh = ops['settings']['Th_universal'] * X.std(1, keepdim=True)
    n_spikes = (X < -thresh).sum(1).float()
    rate = n_spikes / (chunk_size / ops['fs'])
    igood = rate >= ops['settings']['min_spike_rate'] if 'min_spike_rate' in ops['settings'] else rate > 0.0
    return igood.cpu().numpy()


def whitening_from_covariance(CC):
    """ Whitening matrix for a covariance matrix CC.

    This is the so-called ZCA whitening matrix.

    """
    E, D, V = torch.linalg.svd(CC)
    eps = 1e-6
    Wrot = (E / (D + eps)**.5) @ E.T
    return Wrot


def whitening_local(CC, xc, yc, nrange=32, device=torch.device('cuda')):
    """ Loop through each channel and compute its whitening filter based on nearest channels.

    """
    Nchan = CC.shape[0]
    Wrot = torch.zeros((Nchan, Nchan), device=device)

    # for each channel, a local covariance matrix is extracted
    # the whitening matrix is computed for that local neighborhood
    for j in range(CC.shape[0]):
        ds = (xc[j] - xc)**2 + (yc[j] - yc)**2
        isort = np.argsort(ds)
        ix = isort[:nrange]

        wrot = whitening_from_covariance(CC[np.ix_(ix, ix)])

        # the first column of wrot are the weights for channel j
        Wrot[j, ix] = wrot[0]

    return Wrot


def kernel2D_torch(x, y, sig=1):
    ds = ((x.unsqueeze(1) - y)**2).sum(-1)
    Kn = torch.exp(-ds / (2 * sig**2))
    return Kn


def get_drift_matrix(ops, dshift, device=torch.device('cuda')):
    """ For given dshift returns the drift matrix M, such that the shifted data is M @ X.

    """
    x, y = np.meshgrid(ops['xc'], ops['yc'])
    yblk = ops['yblk']
    xp = np.vstack((ops['xc'], ops['yc'])).T
    Mshift = None
    # kriging interpolation between the original probe geometry and the shifted one
    xp = torch.from_numpy(xp).to(device)
    sig = ops['settings']['sig_interp']
    Kxx = kernel2D_torch(xp, xp, sig)
    Kxx = Kxx + 0.01 * torch.eye(Kxx.shape[0], device=device)
    for j in range(len(yblk)):
        ycurr = ops['yc'] - dshift[j]
        xq = np.vstack((ops['xc'], ycurr)).T
        xq = torch.from_numpy(xq).to(device)
        Kyx = kernel2D_torch(xq, xp, sig)
        M = Kyx @ torch.linalg.inv(Kxx)
        Mshift = M if Mshift is None else Mshift + M
    return (Mshift / len(yblk)).float()


def get_whitening_matrix(f, xc, yc, nskip=25, nrange=32, device=torch.device('cuda')):
    """ Get the whitening matrix, use every nskip batches.

    """
    n_chan = len(f.chan_map)
    # collect the covariance matrix across channels
    CC = torch.zeros((n_chan, n_chan), device=device)
    k = 0
    for j in range(0, f.n_batches-1, nskip):
        # load data with high-pass filtering (see the Binary file class)
        X = f.padded_batch_to_torch(j)

        # remove padding
        X = X[:, f.nt : -f.nt]

        # cumulative covariance matrix
        CC = CC + (X @ X.T) / X.shape[1]

        k += 1

    CC = CC / k

    # compute the local whitening filters and collect back into Wrot
    Wrot = whitening_local(CC, xc, yc, nrange=nrange, device=device)

    return Wrot


def get_highpass_filter(fs=30000, cutoff=300, device=torch.device('cuda')):
    """ Filter to use for high-pass filtering.

    """
    NT = 30122

    # a butterworth filter is specified in scipy
    b, a = butter(3, cutoff, fs=fs, btype='high')

    # a signal with a single entry is used to compute the impulse response
    x = np.zeros(NT)
    x[NT//2] = 1

    # symmetric filter from scipy
    hp_filter = filtfilt(b, a, x).copy()

    hp_filter = torch.from_numpy(hp_filter).to(device).float()
    return hp_filter


def fft_highpass(hp_filter, NT=30122):
    """ Convert filter to fourier domain.

    """
    device = hp_filter.device
    ft = hp_filter.shape[0]

    # the filter is padded or cropped depending on the size of NT
    if ft < NT:
        pad = (NT - ft) // 2
        fhp = fft(torch.cat((torch.zeros(pad, device=device),
                             hp_filter,
                             torch.zeros(pad + (NT-pad*2-ft), device=device))))
    elif ft > NT:
        crop = (ft - NT) // 2
        fhp = fft(hp_filter[crop : crop + NT])
    else:
        fhp = fft(hp_filter)
    return fhp


def filter_torch(X, ops=None, ibatch=None, fwav=None):
    """Apply the high pass filter in the fourier domain, batch x channels."""
    if fwav is None:
        fwav = fft_highpass(ops['fwav'], NT=X.shape[1])
    X = torch.real(ifft(fft(X) * torch.conj(fwav)))
    X = fftshift(X, dim=-1)
    return X


def run(ops, bfile, device=torch.device('cuda')):
    """Standalone preprocessing entry point used by the GUI's preview pane."""
    hp_filter = get_highpass_filter(ops['fs'], ops['settings']['highpass_cutoff'] or 300, device=device)
    bfile.hp_filter = hp_filter
    whiten_mat = get_whitening_matrix(bfile, ops['xc'], ops['yc'], nskip=ops['settings']['nskip'],
                                      nrange=ops['settings']['whitening_range'], device=device)
    ops['preprocessing'] = {'hp_filter': hp_filter, 'whiten_mat': whiten_mat}
    logger.debug(f"whitening matrix: {tuple(whiten_mat.shape)} on {whiten_mat.device}")
    return ops
