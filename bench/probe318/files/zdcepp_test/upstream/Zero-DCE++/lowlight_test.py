import torch
import torch.nn as nn
import torchvision
import torch.backends.cudnn as cudnn
import torch.optim
import os
import sys
import argparse
import time
import dataloader
import model
import numpy as np
from torchvision import transforms
from PIL import Image
import glob
import time



def lowlight(image_path, scale_factor=12, weights='snapshots_Zero_DCE++/Epoch99.pth'):
    os.environ['CUDA_VISIBLE_DEVICES']='0'
    data_lowlight = Image.open(image_path)



    data_lowlight = (np.asarray(data_lowlight)/255.0)


    data_lowlight = torch.from_numpy(data_lowlight).float()

    h=(data_lowlight.shape[0]//scale_factor)*scale_factor
    w=(data_lowlight.shape[1]//scale_factor)*scale_factor
    data_lowlight = data_lowlight[0:h,0:w,:]
    data_lowlight = data_lowlight.permute(2,0,1)
    data_lowlight = data_lowlight.cuda().unsqueeze(0)

    DCE_net = model.enhance_net_nopool(scale_factor).cuda()
    DCE_net.load_state_dict(torch.load(weights))
    start = time.time()
    enhanced_image,params_maps = DCE_net(data_lowlight)

    end_time = (time.time() - start)

    print(end_time)
    image_path = image_path.replace('test_data','result_Zero_DCE++')

    result_path = image_path
    if not os.path.exists(image_path.replace('/'+image_path.split("/")[-1],'')):
        os.makedirs(image_path.replace('/'+image_path.split("/")[-1],''))
    # import pdb;pdb.set_trace()
    torchvision.utils.save_image(enhanced_image, result_path)
    return end_time


def save_curve_maps(params_maps, out_prefix):
    """Dump the estimated LE-curve parameter maps (one png per iteration).

    params_maps is the (1, 3*n, h, w) tensor returned by the network; we move
    it to the host before normalising so this also works for CPU inference.
    """
    maps = params_maps.detach().cpu()
    n_iter = maps.shape[1] // 3
    for i in range(n_iter):
        m = maps[:, 3 * i:3 * (i + 1), :, :]
        m = (m - m.min()) / (m.max() - m.min() + 1e-8)
        torchvision.utils.save_image(m, '%s_curve%d.png' % (out_prefix, i))


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--test_dir', type=str, default='data/test_data/')
    parser.add_argument('--scale_factor', type=int, default=12,
                        help='downsampling factor used when estimating the curves (1 = Zero-DCE)')
    parser.add_argument('--weights', type=str, default='snapshots_Zero_DCE++/Epoch99.pth')
    parser.add_argument('--save_curves', action='store_true')
    args = parser.parse_args()

# test_images
    with torch.no_grad():
        filePath = args.test_dir

        file_list = os.listdir(filePath)
        sum_time = 0
        n_images = 0
        for file_name in file_list:
            test_list = glob.glob(filePath+file_name+"/*")
            for image in test_list:

                # image = image
                print(image)
                sum_time = sum_time + lowlight(image, args.scale_factor, args.weights)
                n_images += 1

        print(sum_time)
        if n_images:
            print('average runtime per image on GPU: %.4fs' % (sum_time / n_images))
