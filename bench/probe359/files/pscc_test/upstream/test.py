import os
import numpy as np
import imageio
from tqdm import tqdm

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

from utils.config import get_pscc_args
from utils.load_vdata import TestData

from models.seg_hrnet import get_seg_model
from models.seg_hrnet_config import get_cfg_defaults
from models.NLCDetection import NLCDetection
from models.detection_head import DetectionHead

device_ids = [0]
device = torch.device('cuda:0')


def load_network_weight(net, checkpoint_dir, name):
    weight_path = '{}/{}.pth'.format(checkpoint_dir, name)
    net_state_dict = torch.load(weight_path)
    net.load_state_dict(net_state_dict)
    print('{} weight-loading succeeds'.format(name))


def test(args):
    # define backbone
    FENet_name = 'HRNet'
    FENet_cfg = get_cfg_defaults()
    FENet = get_seg_model(FENet_cfg).to(device)  # HRNet shared backbone

    # define localization head
    SegNet_name = 'NLCDetection'
    SegNet = NLCDetection(args).to(device)

    # define detection head
    ClsNet_name = 'DetectionHead'
    ClsNet = DetectionHead(args).to(device)

    FENet_checkpoint_dir = './checkpoint/{}_checkpoint'.format(FENet_name)
    SegNet_checkpoint_dir = './checkpoint/{}_checkpoint'.format(SegNet_name)
    ClsNet_checkpoint_dir = './checkpoint/{}_checkpoint'.format(ClsNet_name)

    FENet = nn.DataParallel(FENet, device_ids=device_ids)
    SegNet = nn.DataParallel(SegNet, device_ids=device_ids)
    ClsNet = nn.DataParallel(ClsNet, device_ids=device_ids)

    # the released weights were saved from the DataParallel-wrapped nets
    load_network_weight(FENet, FENet_checkpoint_dir, FENet_name)
    load_network_weight(SegNet, SegNet_checkpoint_dir, SegNet_name)
    load_network_weight(ClsNet, ClsNet_checkpoint_dir, ClsNet_name)

    test_data_loader = DataLoader(TestData(args), batch_size=1, shuffle=False,
                                  num_workers=8)

    FENet.eval()
    SegNet.eval()
    ClsNet.eval()

    for batch_id, test_data in enumerate(tqdm(test_data_loader)):

        image, cls, name = test_data
        image = image.to(device)

        with torch.no_grad():

            # backbone network
            feat = FENet(image)

            # localization head
            pred_mask = SegNet(feat)[0]

            pred_mask = F.interpolate(pred_mask, size=(image.size(2), image.size(3)), mode='bilinear',
                                      align_corners=True)

            # classification head
            pred_logit = ClsNet(feat)

        # ce
        sm = nn.Softmax(dim=1)
        pred_logit = sm(pred_logit)
        _, binary_cls = torch.max(pred_logit, 1)

        pred_tag = 'forged' if binary_cls.item() == 1 else 'authentic'

        if args['save_tag']:
            save_image(pred_mask, name, 'mask')

        print_name = name[0].split('/')[-1].split('.')[0]
        print(f'The image {print_name} is {pred_tag}')


def save_image(image, image_name, category):
    image = image.squeeze(1)
    image = image.detach().cpu().numpy()
    image = (image * 255).astype(np.uint8)
    batch_num = image.shape[0]
    os.makedirs('./result/{}'.format(category), exist_ok=True)
    for ind in range(batch_num):
        imageio.imwrite('./result/{}/{}'.format(category, image_name[ind].split('/')[-1].replace('.jpg', '.png')),
                        image[ind])


if __name__ == '__main__':
    args = get_pscc_args()
    test(args)
