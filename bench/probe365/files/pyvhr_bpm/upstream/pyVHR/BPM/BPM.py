import numpy as np
import cupy
import cupyx.scipy.signal as cusignal
from scipy.signal import welch
from pyVHR.BPM.utils import Welch, Welch_cuda

"""
This module contains the estimators of Beats Per Minute (BPM) from windowed BVP signals.
CPU estimators use numpy/scipy, CUDA estimators use cupy.
"""


class BPMcpu:
    """
    Provides BPMs estimate from BVP signals using CPU.

    BVP signal must be a float32 numpy.ndarray with shape [num_estimators, num_frames].
    """
    def __init__(self, data, fps, startTime=0, minHz=0.65, maxHz=4., verb=False):
        """
        Input 'data' is a BVP signal defined as a float32 Numpy.ndarray with shape [num_estimators, num_frames]
        """
        self.nFFT = 2048 // 1  # freq. resolution for STFTs
        if len(data.shape) == 1:
            self.data = data.reshape(1, -1)  # 2D array raw-wise
        else:
            self.data = data
        self.fps = fps                       # sample rate
        self.startTime = startTime
        self.verb = verb
        self.minHz = minHz
        self.maxHz = maxHz

    def BVP_to_BPM(self):
        """
        Return the BPM signal as a float32 Numpy.ndarray with shape [num_estimators, ].

        This method use the Welch's method to estimate the spectral density of the BVP signal,
        then it chooses as BPM the maximum Amplitude frequency.
        """
        if self.data.shape[0] == 0:
            return np.float32(0.0)
        Pfreqs, Power = Welch(self.data, self.fps, self.minHz, self.maxHz, self.nFFT)
        # -- BPM estimate
        Pmax = np.argmax(Power, axis=1)  # power max
        return Pfreqs[Pmax.squeeze()]


class BPMcuda:
    """
    Provides BPMs estimate from BVP signals using GPU.

    BVP signal must be a float32 cupy.ndarray with shape [num_estimators, num_frames].
    """
    def __init__(self, data, fps, startTime=0, minHz=0.65, maxHz=4., verb=False):
        """
        Input 'data' is a BVP signal defined as a float32 cupy.ndarray with shape [num_estimators, num_frames]
        """
        self.nFFT = 2048 // 1  # freq. resolution for STFTs
        if len(data.shape) == 1:
            self.data = data.reshape(1, -1)  # 2D array raw-wise
        else:
            self.data = data
        self.fps = fps                       # sample rate
        self.startTime = startTime
        self.verb = verb
        self.minHz = minHz
        self.maxHz = maxHz

    def BVP_to_BPM(self):
        """
        Return the BPM signal as a float32 Numpy.ndarray with shape [num_estimators, ].

        This method use the Welch's method to estimate the spectral density of the BVP signal,
        then it chooses as BPM the maximum Amplitude frequency.
        """
        if self.data.shape[0] == 0:
            return np.float32(0.0)
        Pfreqs, Power = Welch_cuda(self.data, self.fps, self.minHz, self.maxHz, self.nFFT)
        # -- BPM estimate
        Pmax = cupy.argmax(Power, axis=1)  # power max
        return cupy.asnumpy(Pfreqs[Pmax.squeeze()])


def BVP_to_BPM(bvps, fps, minHz=0.65, maxHz=4.):
    """
    Computes BPMs from multiple BVPs (window) using PSDs maxima (CPU version)

    Args:
        bvps (list): list of length num_windows of BVP signal defined as a float32 Numpy.ndarray with shape [num_estimators, num_frames].
        fps (float): frames per seconds.
        minHz (float): frequency in Hz used to isolate a specific subband [minHz, maxHz] (esclusive).
        maxHz (float): frequency in Hz used to isolate a specific subband [minHz, maxHz] (esclusive).

    Returns:
        A list of length num_windows of BPM signals defined as a float32 Numpy.ndarray with shape [num_estimators, ].
        If any BPM can't be found in a window, then the ndarray has num_estimators == 0.
    """
    bpms = []
    obj = None
    for bvp in bvps:
        if obj is None:
            obj = BPMcpu(bvp, fps, minHz=minHz, maxHz=maxHz)
        else:
            obj.data = bvp
        bpm_es = obj.BVP_to_BPM()
        bpms.append(bpm_es)
    return bpms


def BVP_to_BPM_cuda(bvps, fps, minHz=0.65, maxHz=4.):
    """
    Computes BPMs from multiple BVPs (window) using PSDs maxima (GPU version)

    Args:
        bvps (list): list of length num_windows of BVP signal defined as a float32 Numpy.ndarray with shape [num_estimators, num_frames].
        fps (float): frames per seconds.
        minHz (float): frequency in Hz used to isolate a specific subband [minHz, maxHz] (esclusive).
        maxHz (float): frequency in Hz used to isolate a specific subband [minHz, maxHz] (esclusive).

    Returns:
        A list of length num_windows of BPM signals defined as a float32 Numpy.ndarray with shape [num_estimators, ].
        If any BPM can't be found in a window, then the ndarray has num_estimators == 0.
    """
    bpms = []
    obj = None
    for bvp in bvps:
        bvp_device = cupy.asarray(bvp)
        if obj is None:
            obj = BPMcuda(bvp_device, fps, minHz=minHz, maxHz=maxHz)
        else:
            obj.data = bvp_device
        bpm_es = obj.BVP_to_BPM()
        bpms.append(bpm_es)
    return bpms


def BPM_median(bpms_es):
    """
    This method is used for computing the median and the median absolute deviation (MAD) of the estimated BPM windowed signal.

    Args:
        bpms_es (list): list of lenght num_windows of BPM signals, each defined as a Numpy.ndarray with shape [num_estimators, ],
            or 1D Numpy.ndarray in case of MTTS-CAN.

    Returns:
        Two 1D float32 Numpy.ndarray: the first one contains the median of the estimated BPM signal
        for each window, the second one contains the MAD.
    """
    median_bpms = np.zeros((len(bpms_es)))
    MAD_bpms = np.zeros((len(bpms_es)))
    i = 0
    for bpm_es in bpms_es:
        median_bpms[i] = np.median(bpm_es)
        MAD_bpms[i] = np.median(np.abs(bpm_es - median_bpms[i]))
        i += 1
    return median_bpms, MAD_bpms


def BPM_clustering(sig_processing, bvps, winsize, movement_thrs=[10, 5, 2], fps=30, opt_factor=0.5):
    """
    Computes BPMs from multiple BVPs by clustering the PSD peaks of all the estimators of a window
    (CPU version; used by the 'clustering' estimator of the pipeline).
    """
    bpms = []
    prev_bpm = None
    for i, bvp in enumerate(bvps):
        if bvp.shape[0] == 0:
            bpms.append(np.float32(prev_bpm if prev_bpm is not None else 0.0))
            continue
        F, P = welch(bvp, nperseg=min(256, bvp.shape[1]), noverlap=None, fs=fps, nfft=2048)
        band = np.argwhere((F > 0.65) & (F < 4.0)).flatten()
        F = F[band] * 60.0
        P = P[:, band]
        peaks = F[np.argmax(P, axis=1)]
        thr = movement_thrs[min(i, len(movement_thrs) - 1)]
        if prev_bpm is not None:
            near = peaks[np.abs(peaks - prev_bpm) < thr]
            if near.size > 0:
                peaks = near
        bpm = np.float32(np.median(peaks))
        if prev_bpm is not None:
            bpm = np.float32(opt_factor * bpm + (1.0 - opt_factor) * prev_bpm)
        bpms.append(bpm)
        prev_bpm = bpm
    return bpms
