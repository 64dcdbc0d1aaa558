# By Hanrong Ye
# Licensed under the CC BY-NC 4.0 license (https://creativecommons.org/licenses/by-nc/4.0/)

import os
import time
import cv2
import imageio
import numpy as np
import scipy.io as sio
import torch
import torch.nn.functional as F
from tqdm import tqdm

from evaluation.evaluate_utils import PerformanceMeter
from utils.utils import get_output, mkdir_if_missing, to_cuda


@torch.no_grad()
def test_phase(p, test_loader, model, criterion, epoch):
    tasks = p.TASKS.NAMES
    performance_meter = PerformanceMeter(p, tasks)

    model.eval()

    tasks_to_save = ['edge']
    save_dirs = {task: os.path.join(p['save_dir'], task) for task in tasks_to_save}
    for save_dir in save_dirs.values():
        mkdir_if_missing(save_dir)

    # release cached blocks left over from training before running full-resolution inference
    torch.cuda.empty_cache()

    timings = []
    for i, batch in enumerate(tqdm(test_loader)):
        # Forward pass
        with torch.no_grad():
            images = batch['image'].cuda(non_blocking=True)
            targets = {task: batch[task].cuda(non_blocking=True) for task in tasks}

            torch.cuda.synchronize()  # drain the host-to-device copies before timing
            tic = time.perf_counter()
            output = model.module(images)
            torch.cuda.synchronize()
            timings.append(time.perf_counter() - tic)

            # Measure performance
            performance_meter.update({t: get_output(output[t], t) for t in tasks}, targets)

            for task in tasks_to_save:
                save_model_pred_for_one_task(p, batch, output, save_dirs, task, epoch=epoch)

    eval_results = performance_meter.get_score(verbose=True)
    if len(timings) > 10:
        # skip warm-up iterations (kernel selection, allocator growth)
        steady = timings[10:]
        print('Average forward time: %.1f ms/batch (%.2f img/s)' % (
            1000.0 * np.mean(steady), p['valBatch'] / np.mean(steady)))
    return eval_results


def save_model_pred_for_one_task(p, sample, output, save_dirs, task=None, epoch=None):
    """ Save model predictions for one task"""

    inputs, meta = sample['image'].cuda(non_blocking=True), sample['meta']
    output_task = get_output(output[task], task)

    for jj in range(int(inputs.size()[0])):
        if len(sample[task][jj].unique()) == 1 and sample[task][jj].unique() == 255:
            continue
        fname = meta['img_name'][jj]

        im_height = meta['img_size'][jj][0]
        im_width = meta['img_size'][jj][1]
        pred = output_task[jj]  # (H, W) or (H, W, C)
        # if we used padding on the input, we crop the prediction accordingly
        if (im_height, im_width) != pred.shape[:2]:
            delta_height = max(pred.shape[0] - im_height, 0)
            delta_width = max(pred.shape[1] - im_width, 0)
            if delta_height > 0 or delta_width > 0:
                height_location = [delta_height // 2,
                                   (delta_height // 2) + im_height]
                width_location = [delta_width // 2,
                                  (delta_width // 2) + im_width]
                pred = pred[height_location[0]:height_location[1],
                            width_location[0]:width_location[1]]
        assert pred.shape[:2] == (im_height, im_width)
        result = pred.cpu().numpy()
        if task == 'depth':
            sio.savemat(os.path.join(save_dirs[task], fname + '.mat'), {'depth': result})
        else:
            imageio.imwrite(os.path.join(save_dirs[task], fname + '.png'), result.astype(np.uint8))
