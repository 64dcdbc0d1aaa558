import logging
from math import ceil
from functools import lru_cache

import numpy as np
from scipy.signal import butter
import cupy as cp
from tqdm.auto import tqdm

from .cptools import lfilter, median, svdecon
from .utils import get_good_channels_bounded

logger = logging.getLogger(__name__)


def get_filter_params(fs, fshigh=None, fslow=None):
    if fslow and fslow < fs / 2:
        # butterworth filter with only 3 nodes (otherwise it's unstable for float32)
        return butter(3, (2 * fshigh / fs, 2 * fslow / fs), 'bandpass')
    else:
        # butterworth filter with only 3 nodes (otherwise it's unstable for float32)
        return butter(3, fshigh / fs * 2, 'high')


def gpufilter(buff, chanMap=None, fs=None, fslow=None, fshigh=None, car=True):
    # filter this batch of data after common average referencing with the
    # median
    # buff is timepoints by channels
    # chanMap are indices of the channels to be kep
    # params.fs and params.fshigh are sampling and high-pass frequencies respectively
    # if params.fslow is present, it is used as low-pass frequency (discouraged)

    dataRAW = buff  # .T  # NOTE: we no longer use Fortran order upstream
    assert dataRAW.flags.c_contiguous
    assert dataRAW.ndim == 2
    assert dataRAW.shape[0] > dataRAW.shape[1]
    if chanMap is not None and len(chanMap):
        dataRAW = dataRAW[:, chanMap]  # subsample only good channels
    assert dataRAW.ndim == 2

    # apply filters and median subtraction
    dataRAW = dataRAW.astype(cp.float32)

    if car:
        # subtract median across channels
        dataRAW -= median(dataRAW, axis=1)[:, np.newaxis]

    b, a = get_filter_params(fs, fshigh=fshigh, fslow=fslow)
    datr = lfilter(b, a, dataRAW, axis=0)  # causal forward filter
    datr = lfilter(b, a, datr, axis=0, reverse=True)  # backward
    return datr


# Whitening of one batch in place: out[t, c] = sum_k W[c, k] * x[t, k], written as a
# small tiled kernel because the channel count (<= 400) makes cuBLAS GEMM launches
# dominate for the 65k-sample batches.
_whiten_code = r'''
extern "C" __global__ void whiten_batch(const float* x, const float* W, float* out,
                                        const int NT, const int Nchan) {
    __shared__ float sW[32][33];
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int c = blockIdx.y;
    float acc = 0.0f;
    for (int k0 = 0; k0 < Nchan; k0 += 32) {
        if (threadIdx.x < 32 && k0 + threadIdx.x < Nchan) {
            sW[0][threadIdx.x] = W[c * Nchan + k0 + threadIdx.x];
        }
        __syncthreads();
        if (t < NT) {
            for (int k = 0; k < 32 && k0 + k < Nchan; k++) {
                acc += sW[0][k] * x[t * Nchan + k0 + k];
            }
        }
        __syncthreads();
    }
    if (t < NT) {
        out[t * Nchan + c] = acc;
    }
}
'''


@lru_cache(maxsize=None)
def _get_whiten_kernel():
    return cp.RawKernel(_whiten_code, 'whiten_batch')


def whiten_batch(datr, Wrot, nthreads=256):
    """Apply the whitening matrix to a (NT, Nchan) float32 batch on the GPU."""
    NT, Nchan = datr.shape
    datr = cp.ascontiguousarray(datr, dtype=cp.float32)
    Wrot = cp.ascontiguousarray(Wrot, dtype=cp.float32)
    out = cp.empty_like(datr)
    kernel = _get_whiten_kernel()
    kernel((ceil(NT / nthreads), Nchan), (nthreads,), (datr, Wrot, out, cp.int32(NT), cp.int32(Nchan)))
    return out


def my_min(S1, sig, varargin=None):
    # returns a running minimum applied sequentially across a choice of dimensions and bin sizes
    # S1 is the matrix to be filtered
    # sig is either a scalar or a sequence of scalars, one for each axis to be filtered.
    #  it's the plus/minus bin length for the minimum filter
    # varargin can be the dimensions to do filtering, if len(sig) != x.shape
    # if sig is scalar and no axes are provided, the default axis is 2
    idims = 1
    if varargin is not None:
        idims = varargin
    idims = _make_vec(idims)
    if _is_vector(idims) and _is_vector(sig):
        sig = np.asarray(sig)
        sig = sig * np.ones(len(idims))
    for sigma, d in zip(sig, idims):
        S1 = cp.minimum.reduce(
            cp.stack([cp.roll(S1, s, axis=d) for s in range(-int(sigma), int(sigma) + 1)]), axis=0)
    return S1


def _make_vec(x):
    return (x,) if not isinstance(x, (tuple, list, np.ndarray)) else x


def _is_vector(x):
    return hasattr(x, '__len__') and len(x) > 1


def get_whitening_matrix(raw_data=None, probe=None, params=None, nSkipCov=None):
    """
    based on a subset of the data, compute a channel whitening matrix
    this requires temporal filtering first (gpufilter)
    """
    Nbatch = get_Nbatch(raw_data, params)
    ntbuff = params.ntbuff
    NTbuff = params.NTbuff
    whiteningRange = params.whiteningRange
    scaleproc = params.scaleproc
    NT = params.NT
    fs = params.fs
    fshigh = params.fshigh
    nSkipCov = nSkipCov or params.nSkipCov

    xc = probe.xc
    yc = probe.yc
    chanMap = probe.chanMap
    Nchan = probe.Nchan
    chanMap = probe.chanMap

    # Nchan is obtained after the bad channels have been removed
    CC = cp.zeros((Nchan, Nchan))

    for ibatch in tqdm(range(0, Nbatch, nSkipCov), desc="Computing the whitening matrix"):
        # we'll get a subset of the batches and compute the covariance matrix
        i = max(0, (NT - ntbuff) * ibatch - 2 * ntbuff)
        # WARNING: we use Fortran order, so raw_data is channels x timepoints
        buff = raw_data[i:i + NT - ntbuff]

        nsampcurr = buff.shape[0]
        if nsampcurr < NTbuff:
            buff = np.concatenate(
                (buff, np.tile(buff[nsampcurr - 1], (NTbuff, 1))), axis=0)

        buff_g = cp.asarray(buff, dtype=np.float32)

        # apply filters and median subtraction
        datr = gpufilter(buff_g, fs=fs, fshigh=fshigh, chanMap=chanMap)

        assert datr.shape[0] > datr.shape[1]

        CC = CC + cp.dot(datr.T, datr) / NT  # sample covariance

    CC = CC / ceil((Nbatch - 1) / nSkipCov)

    if whiteningRange < np.inf:
        #  if there are too many channels, a finite whiteningRange is more robust to noise
        # in the estimation of the covariance
        whiteningRange = min(whiteningRange, Nchan)
        # this function performs the same matrix inversions as below, just on subsets of
        # channels around each channel
        Wrot = whiteningLocal(CC, yc, xc, whiteningRange)
    else:
        Wrot = whiteningFromCovariance(CC)

    Wrot = Wrot * scaleproc

    logger.info("Computed the whitening matrix.")

    return Wrot


def whiteningFromCovariance(CC):
    # function Wrot = whiteningFromCovariance(CC)
    # takes as input the matrix CC of channel pairwise correlations
    # outputs a symmetric rotation matrix (also Nchan by Nchan) that whitens the data
    # Wrot = (E*diag(1./(diag(D)+eps).^.5)*E')
    E, D, _ = svdecon(CC)
    eps = 1e-6
    Di = cp.diag(1. / (D + eps) ** .5)
    Wrot = cp.dot(cp.dot(E, Di), E.T)
    return Wrot


def whiteningLocal(CC, yc, xc, nRange):
    # function to perform local whitening of channels
    # CC is a matrix of Nchan by Nchan correlations
    # yc and xc are vector of Y and X positions of each channel
    # nRange is the number of nearest channels to consider
    Wrot = cp.zeros((CC.shape[0], CC.shape[0]))
    for j in range(CC.shape[0]):
        ds = (xc - xc[j]) ** 2 + (yc - yc[j]) ** 2
        ilocal = np.argsort(ds)
        # take the closest channels to the primary channel.
        # First channel in this list will always be the primary channel.
        ilocal = ilocal[:nRange]

        wrot0 = cp.asnumpy(whiteningFromCovariance(CC[np.ix_(ilocal, ilocal)]))
        # the first column of wrot0 is the whitening filter for the primary channel
        Wrot[ilocal, j] = wrot0[:, 0]

    return Wrot


def get_Nbatch(raw_data, params):
    n_samples = max(raw_data.shape)
    # we assume raw_data as been already virtually split with the requested trange
    return ceil(n_samples / (params.NT - params.ntbuff))  # number of data batches


def preprocess_batch(raw_batch, Wrot, probe, params):
    """Filter + whiten one raw int16 batch; returns an int16 host array ready for proc.dat."""
    buff_g = cp.asarray(raw_batch, dtype=np.float32)
    datr = gpufilter(buff_g, chanMap=probe.chanMap, fs=params.fs, fshigh=params.fshigh,
                     fslow=params.fslow)
    datr = whiten_batch(datr, Wrot)
    datcpu = cp.asnumpy(cp.clip(datr, -32767, 32767).astype(np.int16))
    return datcpu


def run_preprocess(raw_data, probe, params, out_path):
    Nbatch = get_Nbatch(raw_data, params)
    Wrot = get_whitening_matrix(raw_data=raw_data, probe=probe, params=params)
    good = get_good_channels_bounded(raw_data=raw_data, probe=probe, params=params)
    logger.info("Found %d good channels.", int(np.sum(good)))
    with open(out_path, 'wb') as fw:
        for ibatch in tqdm(range(Nbatch), desc="Preprocessing"):
            i = max(0, (params.NT - params.ntbuff) * ibatch - 2 * params.ntbuff)
            raw = raw_data[i:i + params.NTbuff]
            fw.write(preprocess_batch(raw, Wrot, probe, params).tobytes())
    mempool = cp.get_default_memory_pool()
    logger.debug("cupy memory pool: %.1f MB used", mempool.used_bytes() / 2 ** 20)
    mempool.free_all_blocks()
    return Wrot
