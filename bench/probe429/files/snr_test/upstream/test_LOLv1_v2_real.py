import os.path as osp
import logging
import time
import argparse
from collections import OrderedDict

import numpy as np
import torch
import options.options as option
import utils.util as util
from data.util import bgr2ycbcr
from data import create_dataset, create_dataloader
from models import create_model
import torchvision.transforms.functional as TF
import cv2
from skimage.metrics import structural_similarity as ssim_fn

#### options
parser = argparse.ArgumentParser()
parser.add_argument('-opt', type=str, default='./options/test/LOLv1.yml', help='Path to options YMAL file.')
parser.add_argument('--save_img', action='store_true', help='write the enhanced frames to disk')
opt = option.parse(parser.parse_args().opt, is_train=False)
opt = option.dict_to_nonedict(opt)
save_imgs = parser.parse_args().save_img or True

util.mkdirs(
    (path for key, path in opt['path'].items()
     if not key == 'experiments_root' and 'pretrain_model' not in key and 'resume' not in key))
util.setup_logger('base', opt['path']['log'], 'test_' + opt['name'], level=logging.INFO,
                  screen=True, tofile=True)
logger = logging.getLogger('base')
logger.info(option.dict2str(opt))

#### Create test dataset and dataloader
test_loaders = []
for phase, dataset_opt in sorted(opt['datasets'].items()):
    test_set = create_dataset(dataset_opt)
    test_loader = create_dataloader(test_set, dataset_opt)
    logger.info('Number of test images in [{:s}]: {:d}'.format(dataset_opt['name'], len(test_set)))
    test_loaders.append(test_loader)

model = create_model(opt)
for test_loader in test_loaders:
    test_set_name = test_loader.dataset.opt['name']  # path opt['']
    logger.info('\nTesting [{:s}]...'.format(test_set_name))
    test_start_time = time.time()
    dataset_dir = osp.join(opt['path']['results_root'], test_set_name)
    util.mkdir(dataset_dir)

    test_results = OrderedDict()
    test_results['psnr'] = []
    test_results['ssim'] = []
    test_results['psnr_y'] = []
    test_results['ssim_y'] = []

    psnr_total_avg = 0.
    ssim_total_avg = 0.
    num = 0
    for test_data in test_loader:
        need_GT = False if test_loader.dataset.opt['dataroot_GT'] is None else True

        folder = test_data['folder'][0]
        idx_d = test_data['idx']
        model.feed_data(test_data)
        torch.cuda.synchronize()  # make sure the H2D copies have landed
        t0 = time.time()
        model.test()
        torch.cuda.synchronize()  # wait for the kernels before reading the clock
        t1 = time.time()
        visuals = model.get_current_visuals()
        rlt_img = util.tensor2img(visuals['rlt'])  # uint8
        gt_img = util.tensor2img(visuals['GT'])  # uint8

        mid_ix = dataset_opt['N_frames'] // 2
        input_img = util.tensor2img(visuals['LQ'][mid_ix])

        if save_imgs:
            try:
                tag = '{}.{}'.format(test_data['folder'], idx_d[0].replace('/', '-'))
                print(osp.join(dataset_dir, 'pred', '{}.png'.format(tag)))
                cv2.imwrite(osp.join(dataset_dir, 'pred', '{}.png'.format(tag)), rlt_img)
                cv2.imwrite(osp.join(dataset_dir, 'gt', '{}.png'.format(tag)), gt_img)
            except Exception as e:
                print(e)
                import ipdb; ipdb.set_trace()

        # calculate PSNR
        psnr = util.calculate_psnr(rlt_img, gt_img)
        ssim = ssim_fn(rlt_img, gt_img, channel_axis=2, data_range=255)
        psnr_total_avg += psnr
        ssim_total_avg += ssim
        num += 1
        logger.info('{:20s} - PSNR: {:.6f} dB; SSIM: {:.6f}; {:.4f}s'.format(
            idx_d[0], psnr, ssim, t1 - t0))

    psnr_total_avg = psnr_total_avg / num
    ssim_total_avg = ssim_total_avg / num
    log_s = '# Validation # PSNR: {:.4e}:'.format(psnr_total_avg)
    logger.info(log_s)
    log_s = '# Validation # SSIM: {:.4e}:'.format(ssim_total_avg)
    logger.info(log_s)
    logger.info('Elapsed for {:s}: {:.1f}s'.format(test_set_name, time.time() - test_start_time))
