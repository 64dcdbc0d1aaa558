import os
import time
import numpy as np
import torch
import cv2
from options.test_options import TestOptions
from data import CreateDataLoader
from models import create_model
from util.visualizer import Visualizer
from util import util
from skimage.metrics import structural_similarity as ssim


def rmse(a, b, mask=None):
    diff = (a.astype(np.float64) - b.astype(np.float64)) ** 2
    if mask is not None:
        diff = diff[mask > 0]
    return np.sqrt(diff.mean()) if diff.size else 0.0


if __name__ == '__main__':
    opt = TestOptions().parse()
    opt.num_threads = 1   # test code only supports num_threads = 1
    opt.batch_size = 1    # test code only supports batch_size = 1
    opt.serial_batches = True  # no shuffle
    opt.no_flip = True    # no flip
    opt.display_id = -1   # no visdom display
    data_loader = CreateDataLoader(opt)
    dataset = data_loader.load_data()
    dataset_size = len(data_loader)
    print('#test images = %d' % dataset_size)

    model = create_model(opt)
    model.setup(opt)
    model.eval()

    result_root = os.path.join(opt.results_dir, opt.name, '%s_%s' % (opt.phase, opt.epoch))
    os.makedirs(result_root, exist_ok=True)

    global_rmse, local_rmse, global_ssim, local_ssim = [], [], [], []
    start = time.time()
    for i, data in enumerate(dataset):
        with torch.no_grad():
            res = model.get_prediction(data)
        final = res['final']
        gt = util.tensor2im(data['C'].cuda(), scale=0)
        mask = util.tensor2im(data['B'].cuda(), scale=0)[..., 0]

        global_rmse.append(rmse(final, gt))
        local_rmse.append(rmse(final, gt, mask))
        global_ssim.append(ssim(final, gt, channel_axis=2, data_range=255))
        if mask.sum() > 0:
            ys, xs = np.where(mask > 0)
            crop = (slice(ys.min(), ys.max() + 1), slice(xs.min(), xs.max() + 1))
            local_ssim.append(ssim(final[crop], gt[crop], channel_axis=2, data_range=255, win_size=3))

        name = data['imname'][0] if isinstance(data['imname'], (list, tuple)) else data['imname']
        cv2.imwrite(os.path.join(result_root, name), np.concatenate([gt, final], axis=1)[:, :, ::-1])
        if i % 50 == 0:
            print('processed %d / %d, %.1fs' % (i, dataset_size, time.time() - start))

    print('GRMSE %.3f | LRMSE %.3f | GSSIM %.4f | LSSIM %.4f' % (
        np.mean(global_rmse), np.mean(local_rmse), np.mean(global_ssim), np.mean(local_ssim)))
    print('peak GPU memory: %.2f GB' % (torch.cuda.max_memory_allocated() / 1024 ** 3))
