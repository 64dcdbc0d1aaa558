'''
Misc Utility functions
'''
from collections import OrderedDict
import os
import numpy as np
import torch
import random
import torchvision
import torch.nn.functional as F


def recursive_glob(rootdir='.', suffix=''):
    """Performs recursive glob with given suffix and rootdir
        :param rootdir is the root directory
        :param suffix is the suffix to be searched
    """
    return [os.path.join(looproot, filename)
        for looproot, _, filenames in os.walk(rootdir)
        for filename in filenames if filename.endswith(suffix)]


def get_lr(optimizer):
    for param_group in optimizer.param_groups:
        return float(param_group['lr'])


def adjust_learning_rate(optimizer, init_lr, epoch):
    """Sets the learning rate to the initial LR decayed by 10 every 30 epochs"""
    lr = init_lr * (0.1 ** (epoch // 30))
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr


def alpha_blend(input_image, segmentation_mask, alpha=0.5):
    """Alpha Blending utility to overlay RGB masks on RBG images
        :param input_image is a np.ndarray with 3 channels
        :param segmentation_mask is a np.ndarray with 3 channels
        :param alpha is a float value
    """
    blended = np.zeros(input_image.size, dtype=np.float32)
    blended = input_image * alpha + segmentation_mask * (1 - alpha)
    return blended


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


def show_uloss(uwpred,uworg,inp_img, samples=7):

    n,c,h,w=inp_img.shape
    # print(labels.shape)
    uwpred=uwpred.detach().cpu().numpy()
    uworg=uworg.detach().cpu().numpy()
    inp_img=inp_img.detach().cpu().numpy()

    #NCHW->NHWC
    uwpred=uwpred.transpose((0, 2, 3, 1))
    uworg=uworg.transpose((0, 2, 3, 1))

    choices=random.sample(range(n), min(n,samples))
    f, axarr = plt.subplots(samples, 3)
    for j in range(samples):
        idx=choices[j]
        axarr[j][0].imshow(inp_img[idx].transpose((1, 2, 0)))
        axarr[j][1].imshow(uworg[idx])
        axarr[j][2].imshow(uwpred[idx])

    plt.show()


def show_wc_tnsboard(epoch, writer, inputs, labels, pred, n_samples, tag1, tag2, tag3):
    idxs=torch.LongTensor(random.sample(range(inputs.shape[0]), min(n_samples,inputs.shape[0])))
    grid_inp = torchvision.utils.make_grid(inputs[idxs],normalize=True, scale_each=True)
    writer.add_image(tag1, grid_inp, epoch)
    grid_lbl = torchvision.utils.make_grid(labels[idxs],normalize=True, scale_each=True)
    writer.add_image(tag2, grid_lbl, epoch)
    grid_pred = torchvision.utils.make_grid(pred[idxs],normalize=True, scale_each=True)
    writer.add_image(tag3, grid_pred, epoch)


def show_unwarp_tnsboard(global_step, writer, uwpred, uworg, n_samples, tag1, tag2):
    idxs=torch.LongTensor(random.sample(range(uwpred.shape[0]), min(n_samples,uwpred.shape[0])))
    grid_uworg = torchvision.utils.make_grid(uworg[idxs],normalize=True, scale_each=True)
    writer.add_image(tag1, grid_uworg, global_step)
    grid_uwpr = torchvision.utils.make_grid(uwpred[idxs],normalize=True, scale_each=True)
    writer.add_image(tag2, grid_uwpr, global_step)


def unwarp_with_grid(img, bm):
    """img: [n,c,h,w] tensor; bm: [n,h,w,2] in [-1,1]"""
    return F.grid_sample(img, bm, align_corners=True)
