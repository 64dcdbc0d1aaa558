import numpy as np
import cupy
import torch
import sys

from pyVHR.BVP.filters import *
from pyVHR.BVP.methods import *

"""
This module contains the dispatcher that applies an rPPG method to windowed RGB signals.
device_type selects where the maths runs:
    'cpu'   -> numpy implementation (cpu_* methods)
    'cuda'  -> cupy implementation on the GPU (cupy_* methods)
    'torch' -> torch implementation (torch_* methods), on the GPU when one is available
"""

if torch.cuda.is_available():
    TORCH_DEVICE = torch.device('cuda:0')
else:
    TORCH_DEVICE = torch.device('cpu')


def signals_to_bvps_cuda(sig, cupy_method, params={}):
    """
    Transform an input RGB signal in a BVP signal using a rPPG method (see pyVHR.BVP.methods).
    This method must use cupy and executes on GPU. You can pass also non-RGB signal but the method used must handle its shape.

    Args:
        sig (float32 ndarray): RGB Signal as float32 ndarray with shape  [num_estimators, rgb_channels, num_frames].
            You can pass also a generic signal but the method used must handle its shape and type.
        cupy_method: a method that comply with the fucntion signature documented
            in pyVHR.BVP.methods. This method must use Cupy.
        params (dict): dictionary of usefull parameters that will be passed to the method.

    Returns:
        float32 ndarray: BVP signal as float32 ndarray with shape [num_estimators, num_frames].
    """
    if sig.shape[0] == 0:
        return np.zeros((0, sig.shape[2]), dtype=sig.dtype)
    gpu_sig = cupy.asarray(sig)
    if len(params) > 0:
        bvps = cupy_method(gpu_sig, **params)
    else:
        bvps = cupy_method(gpu_sig)
    r_bvps = cupy.asnumpy(bvps)
    gpu_sig = None
    bvps = None
    return r_bvps


def signals_to_bvps_torch(sig, torch_method, params={}):
    """
    Transform an input RGB signal in a BVP signal using a rPPG method (see pyVHR.BVP.methods).
    This method must use Torch and executes on GPU (or CPU when no GPU is visible).

    Args:
        sig (float32 ndarray): RGB Signal as float32 ndarray with shape  [num_estimators, rgb_channels, num_frames].
        torch_method: a method that comply with the fucntion signature documented
            in pyVHR.BVP.methods. This method must use Torch.
        params (dict): dictionary of usefull parameters that will be passed to the method.

    Returns:
        float32 ndarray: BVP signal as float32 ndarray with shape [num_estimators, num_frames].
    """
    if sig.shape[0] == 0:
        return np.zeros((0, sig.shape[2]), dtype=sig.dtype)
    t_sig = torch.from_numpy(sig).to(TORCH_DEVICE)
    if len(params) > 0:
        bvps = torch_method(t_sig, **params)
    else:
        bvps = torch_method(t_sig)
    return bvps.cpu().numpy()


def signals_to_bvps_cpu(sig, cpu_method, params={}):
    """
    Transform an input RGB signal in a BVP signal using a rPPG method (see pyVHR.BVP.methods).
    This method must use and execute on CPU. You can pass also non-RGB signal but the method used must handle its shape.

    Args:
        sig (float32 ndarray): RGB Signal as float32 ndarray with shape  [num_estimators, rgb_channels, num_frames].
        cpu_method: a method that comply with the fucntion signature documented
            in pyVHR.BVP.methods. This method must use Numpy.
        params (dict): dictionary of usefull parameters that will be passed to the method. If the method needs fps
            you can set {'fps':'adaptive'} in the dictionary to use the 'fps' argument.

    Returns:
        float32 ndarray: BVP signal as float32 ndarray with shape [num_estimators, num_frames].
    """
    if sig.shape[0] == 0:
        return np.zeros((0, sig.shape[2]), dtype=sig.dtype)
    cpu_sig = np.array(sig)
    if len(params) > 0:
        bvps = cpu_method(cpu_sig, **params)
    else:
        bvps = cpu_method(cpu_sig)
    return bvps


def RGB_sig_to_BVP(windowed_sig, fps, device_type=None, method=None, params={}):
    """
    Transform an input RGB windowed signal in a BVP windowed signal using a rPPG method (see pyVHR.BVP.methods).
    You can pass also non-RGB signal but the method used must handle its shape.

    Args:
        windowed_sig (list): RGB windowed signal as a list of length num_windows of np.ndarray with shape [num_estimators, rgb_channels, num_frames].
        fps (float): frames per seconds.
        device_type (str): the chosen device, 'cpu', 'cuda' or 'torch'.
        method: a method that comply with the fucntion signature documented
            in pyVHR.BVP.methods. This method must use Numpy if the 'device_type' is 'cpu', Torch if the 'device_type' is 'torch',
            and Cupy if the 'device_type' is 'cuda'.
        params(dict): dictionary of usefull parameters that will be passed to the method. If the method needs fps
            you can set {'fps':'adaptive'} in the dictionary to use the 'fps' argument.

    Returns:
        A list of length num_windows of BVP signals as np.ndarray with shape [num_estimators, num_frames];
        if no BVP can be found in a window, then the np.ndarray has num_estimators == 0.
    """
    if device_type is None:
        print("[ERROR] No device_type given to RGB_sig_to_BVP")
        return []
    if 'fps' in params and params['fps'] == 'adaptive':
        params['fps'] = np.float32(fps)

    bvps = []
    for sig in windowed_sig:
        copy_signal = np.copy(sig)
        bvp = np.zeros((0, 1), dtype=np.float32)
        if device_type == 'cpu':
            bvp = signals_to_bvps_cpu(copy_signal, method, params)
        elif device_type == 'torch':
            bvp = signals_to_bvps_torch(copy_signal, method, params)
        elif device_type == 'cuda':
            bvp = signals_to_bvps_cuda(copy_signal, method, params)
        else:
            print("[ERROR] Unknown device_type %s" % device_type, file=sys.stderr)
        bvps.append(bvp)
    return bvps


def concatenate_BVPs(list_of_bvps_list):
    """
    This method is used to concatenate multiple BVP signals, obtained with different rPPG methods, along the
    num_estimators axis. The windows and the frames of each list must be aligned.

    Args:
        list_of_bvps_list (list): list of BVP windowed signals.

    Returns:
        A list of length num_windows of BVP signals as np.ndarray with shape [total_num_estimators, num_frames];
        if the input lists are not compatible it returns 0.
    """
    first_len = len(list_of_bvps_list[0])
    for item in list_of_bvps_list:
        if len(item) != first_len:
            return 0
    data_type = list_of_bvps_list[0][0].dtype
    result = []
    for i in range(first_len):
        curr_w = np.zeros((0, list_of_bvps_list[0][i].shape[1]), dtype=data_type)
        for bvps in list_of_bvps_list:
            if bvps[i].shape[1] != curr_w.shape[1]:
                return 0
            curr_w = np.concatenate((curr_w, bvps[i]), axis=0)
        result.append(curr_w)
    return result
