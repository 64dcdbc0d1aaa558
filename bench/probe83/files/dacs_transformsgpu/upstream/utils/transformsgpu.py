'''
Code taken from https://github.com/WilhelmT/ClassMix
Slightly modified
'''

import kornia
import numpy as np
import torch
import torch.nn as nn


def normalize_rgb(data, dataset):
    """

    Args:
        data: data to normalize BxCxWxH
        dataset: name of the dataset to normalize

    Returns:
        normalized data as  (x-mean)/255

    """
    if dataset == 'pascal_voc':
        mean = (122.6789143, 116.66876762, 104.00698793) # rgb
    elif dataset == 'cityscapes':
        mean = (73.15835921, 82.90891754, 72.39239876) # rgb
    else:
        mean = (127.5, 127.5, 127.5 )

    mean = torch.Tensor(mean).unsqueeze(0).unsqueeze(2).unsqueeze(3).cuda()
    data_norm = ((data-mean)/255.0)
    return data_norm


def normalize_bgr(data, dataset):
    """

    Args:
        data: data to normalize BxCxWxH
        dataset: name of the dataset to normalize

    Returns:
        normalized data as  (x-mean)/255

    """
    if dataset == 'pascal_voc':
        mean = (104.00698793, 116.66876762, 122.6789143) # bgr
    elif dataset == 'cityscapes':
        mean = (72.39239876, 82.90891754, 73.15835921) # bgr
    else:
        mean = (127.5, 127.5, 127.5 )

    mean_bgr = torch.Tensor(mean).view(1, 3, 1, 1).cuda(data.device)
    data_norm = ((data-mean_bgr)/255.0)
    return data_norm


def grayscale(grayscale, data = None, target = None, probs = None):
    """

    Args:
        grayscale: boolean whether to apply grayscale augmentation
        data: input data to augment BxCxWxH
        target: labels to augment BxWxH
        probs: probability masks to augment BxCxWxH

    Returns:
        data is converted from rgb to grayscale if [grayscale] is True
        target and probs are also returned with no modifications applied

    """
    if not (data is None):
        if grayscale and data.shape[1]==3:
            seq = nn.Sequential(kornia.augmentation.RandomGrayscale(p=1.) )
            data = seq(data)
    return data, target, probs


def colorJitter(colorJitter, img_mean, data = None, target = None, s=0.25):
    # s is the strength of colorjitter
    #colorJitter
    if not (data is None):
        if data.shape[1]==3:
            if colorJitter > 0.2:
                img_mean, _ = torch.broadcast_tensors(img_mean.unsqueeze(1).unsqueeze(2).unsqueeze(0), data)
                seq = nn.Sequential(kornia.augmentation.ColorJitter(brightness=s,contrast=s,saturation=s,hue=s))
                data = (data+img_mean)/255
                data = seq(data)
                data = (data*255-img_mean).float()
    return data, target


def gaussian_blur(blur, data = None, target = None):
    if not (data is None):
        if data.shape[1]==3:
            if blur > 0.5:
                sigma = np.random.uniform(0.15,1.15)
                kernel_size_y = int(np.floor(np.ceil(0.1 * data.shape[2]) - 0.5 + np.ceil(0.1 * data.shape[2]) % 2))
                kernel_size_x = int(np.floor(np.ceil(0.1 * data.shape[3]) - 0.5 + np.ceil(0.1 * data.shape[3]) % 2))
                kernel_size = (kernel_size_y, kernel_size_x)
                seq = nn.Sequential(kornia.filters.GaussianBlur2d(kernel_size=kernel_size, sigma=(sigma, sigma)))
                data = seq(data)
    return data, target


def flip(flip, data = None, target = None, probs = None):
    #Flip
    if flip == 1:
        if not (data is None): data = torch.flip(data,(3,))#np.array([np.fliplr(data[i].cpu().numpy()) for i in range(np.shape(data)[0])])
        if not (target is None):
            target = torch.flip(target,(2,))#np.array([np.fliplr(target[i].cpu().numpy()) for i in range(np.shape(target)[0])])
        if not (probs is None):
            probs = torch.flip(probs,(2,))
    return data, target, probs


def generate_cow_mask(img_size, sigma, p, batch_size):
    """CowMix masks: thresholded, Gaussian-smoothed noise (French et al.)."""
    noise = torch.cuda.FloatTensor(batch_size, 1, *img_size).normal_()
    ksize = int(sigma * 3) * 2 + 1
    smooth = kornia.filters.GaussianBlur2d((ksize, ksize), (sigma, sigma))(noise)
    flat = smooth.view(batch_size, -1)
    thresholds = torch.quantile(flat, 1.0 - p, dim=1, keepdim=True).view(batch_size, 1, 1, 1)
    return (smooth > thresholds).float()


def cowMix(mask, data = None, target = None):
    #Mix
    if not (data is None):
        if mask.shape[0] == data.shape[0]:
            data = torch.cat([((1 - mask[(i + 1) % data.shape[0]]) * data[i] + mask[(i + 1) % data.shape[0]] * data[(i + 1) % data.shape[0]]).unsqueeze(0) for i in range(data.shape[0])])
        elif mask.shape[0] == data.shape[0] / 2:
            data = torch.cat((torch.cat([((1 - mask[i]) * data[2 * i] + mask[i] * data[2 * i + 1]).unsqueeze(0) for i in range(int(data.shape[0] / 2))]),
                              torch.cat([((1 - mask[i]) * data[2 * i + 1] + mask[i] * data[2 * i]).unsqueeze(0) for i in range(int(data.shape[0] / 2))])))
    if not (target is None):
        target = torch.cat([((1 - mask[(i + 1) % data.shape[0]]) * target[i] + mask[(i + 1) % data.shape[0]] * target[(i + 1) % target.shape[0]]).unsqueeze(0) for i in range(target.shape[0])])
    return data, target


def mix(mask, data = None, target = None):
    #Mix
    if not (data is None):
        if mask.shape[0] == data.shape[0]:
            data = torch.cat([(mask[i] * data[i] + (1 - mask[i]) * data[(i + 1) % data.shape[0]]).unsqueeze(0) for i in range(data.shape[0])])
        elif mask.shape[0] == data.shape[0] / 2:
            data = torch.cat((torch.cat([(mask[i] * data[2 * i] + (1 - mask[i]) * data[2 * i + 1]).unsqueeze(0) for i in range(int(data.shape[0] / 2))]),
                              torch.cat([((1 - mask[i]) * data[2 * i] + mask[i] * data[2 * i + 1]).unsqueeze(0) for i in range(int(data.shape[0] / 2))])))
    if not (target is None):
        target = torch.cat([(mask[i] * target[i] + (1 - mask[i]) * target[(i + 1) % target.shape[0]]).unsqueeze(0) for i in range(target.shape[0])])
    return data, target


def oneMix(mask, data = None, target = None):
    #Mix
    if not (data is None):
        stackedMask0, _ = torch.broadcast_tensors(mask[0], data[0])
        data = (stackedMask0*data[0]+(1-stackedMask0)*data[1]).unsqueeze(0)
    if not (target is None):
        stackedMask0, _ = torch.broadcast_tensors(mask[0], target[0])
        target = (stackedMask0*target[0]+(1-stackedMask0)*target[1]).unsqueeze(0)
    return data, target


def normalize(MEAN, STD, data = None, target = None):
    #Normalize
    if not (data is None):
        if data.shape[1]==3:
            STD = torch.Tensor(STD).unsqueeze(0).unsqueeze(2).unsqueeze(3).to(data.device)
            MEAN = torch.Tensor(MEAN).unsqueeze(0).unsqueeze(2).unsqueeze(3).to(data.device)
            STD, data = torch.broadcast_tensors(STD, data)
            MEAN, data = torch.broadcast_tensors(MEAN, data)
            data = ((data-MEAN)/STD).float()
    return data, target
