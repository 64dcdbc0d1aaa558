import os
import random
from collections import OrderedDict

import cv2
import numpy as np
import torch
from skimage.filters import threshold_sauvola


class AverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def seed_everything(seed=42):
    random.seed(seed)
    os.environ['PYTHONHASHSEED'] = str(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def convert_state_dict(state_dict):
    """Converts a state dict saved from a dataParallel module to normal
       module state_dict inplace
       :param state_dict is the loaded DataParallel model_state
    """
    if not next(iter(state_dict)).startswith("module."):
        return state_dict  # abort if dict is not a DataParallel model_state
    new_state_dict = OrderedDict()
    for k, v in state_dict.items():
        name = k[7:]  # remove `module.`
        new_state_dict[name] = v
    return new_state_dict


def getBasecoord(h, w):
    base_coord0 = np.tile(np.arange(h).reshape(h, 1), (1, w)).astype(np.float32)
    base_coord1 = np.tile(np.arange(w).reshape(1, w), (h, 1)).astype(np.float32)
    base_coord = np.concatenate((np.expand_dims(base_coord1, -1), np.expand_dims(base_coord0, -1)), -1)
    return base_coord


def SauvolaModBinarization(image, n1=51, n2=51, k1=0.3, k2=0.3, default=True):
    '''
     Binarization using Sauvola's algorithm
        @name : SauvolaModBinarization
     parameters
        @param image (numpy array of shape (3/1) of type np.uint8): color or gray scale image
     optional parameters
        @param n1 (int) : window size for running sauvola during the first pass
        @param n2 (int): window size for running sauvola during the second pass
        @param k1 (float): k value corresponding to sauvola during the first pass
        @param k2 (float): k value corresponding to sauvola during the second pass
        @param default (bool) : bollean variable to set the above parameter as default.
            @param default is set to True : thus default values of the above optional parameters (n1,n2,k1,k2) are set to
                n1 = 5 % of min(image height, image width)
                n2 = 10 % of min(image height, image width)
                k1 = 0.5
                k2 = 0.5
     Returns
        @return A binary image of same size as @param image
    '''
    if image.ndim == 3:
        image = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    if default:
        n1 = int(0.05 * min(image.shape[:2]))
        if n1 % 2 == 0:
            n1 = n1 + 1
        n2 = int(0.1 * min(image.shape[:2]))
        if n2 % 2 == 0:
            n2 = n2 + 1
        k1 = 0.5
        k2 = 0.5

    T1 = threshold_sauvola(image, window_size=n1, k=k1)
    max_val = np.amax(image)
    min_val = np.amin(image)
    C = np.copy(T1)
    C = C.astype(np.float32)
    C[image > T1] = (image[image > T1] - T1[image > T1]) / (max_val - T1[image > T1])
    C[image <= T1] = 0
    C = C * 255.0
    new_in = np.copy(C.astype(np.uint8))
    T2 = threshold_sauvola(new_in, window_size=n2, k=k2)
    binary = np.copy(image)
    binary[new_in <= T2] = 0
    binary[new_in > T2] = 255
    return binary, T2


def tensor2img(t):
    """[1, C, H, W] float in [0, 1] -> HxWxC uint8 BGR"""
    img = t[0].detach().float().clamp(0, 1).cpu().numpy().transpose(1, 2, 0)
    return (img * 255.0).round().astype(np.uint8)


def save_checkpoint(state, path, is_best=False):
    torch.save(state, path)
    if is_best:
        best = os.path.join(os.path.dirname(path), 'best.pkl')
        torch.save(state, best)
