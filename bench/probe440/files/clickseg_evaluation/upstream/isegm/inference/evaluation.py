from time import time

import numpy as np
import torch
import cv2

from isegm.inference import utils
from isegm.inference.clicker import Click, Clicker

try:
    get_ipython()
    from tqdm import tqdm_notebook as tqdm
except NameError:
    from tqdm import tqdm


def evaluate_dataset(dataset, predictor, vis=True, vis_path='./experiments/vis_val/', **kwargs):
    all_ious = []
    all_times = []

    if vis:
        save_dir = vis_path + dataset.name + '/'
        print(f'visualisations will be written to {save_dir}')

    start_time = time()
    for index in tqdm(range(len(dataset)), leave=False):
        sample = dataset.get_sample(index)

        for object_id in sample.objects_ids:
            _, sample_ious, _, sample_times = evaluate_sample(sample.image, sample.gt_mask(object_id), predictor,
                                                              sample_id=index, **kwargs)
            all_ious.append(sample_ious)
            all_times.append(sample_times)
    end_time = time()
    elapsed_time = end_time - start_time

    # forward-only time (the wall clock above also counts data loading and click simulation)
    net_time = float(np.sum([np.sum(t) for t in all_times]))
    print(f'Net forward time: {net_time:.2f}s of {elapsed_time:.2f}s')

    return all_ious, elapsed_time


def Progressive_Merge(pred_mask, previous_mask, y, x):
    diff_regions = np.logical_xor(previous_mask, pred_mask)
    num, labels = cv2.connectedComponents(diff_regions.astype(np.uint8))
    label = labels[y, x]
    corr_mask = labels == label
    if previous_mask[y, x] == 1:
        progressive_mask = np.logical_and(previous_mask, np.logical_not(corr_mask))
    else:
        progressive_mask = np.logical_or(previous_mask, corr_mask)
    return progressive_mask


def evaluate_sample(image, gt_mask, predictor, max_iou_thr,
                    pred_thr=0.49, min_clicks=1, max_clicks=20,
                    sample_id=None, callback=None, progressive_mode=True):
    clicker = Clicker(gt_mask=gt_mask)
    pred_mask = np.zeros_like(gt_mask)
    prev_mask = pred_mask
    ious_list = []
    times_list = []

    with torch.no_grad():
        predictor.set_input_image(image)

        for click_indx in range(max_clicks):
            clicker.make_next_click(pred_mask)

            if torch.cuda.is_available():
                torch.cuda.synchronize()
            tic = time()
            pred_probs = predictor.get_prediction(clicker)
            torch.cuda.synchronize(predictor.device)
            times_list.append(time() - tic)

            pred_mask = pred_probs > pred_thr

            if progressive_mode:
                clicks = clicker.get_clicks()
                if len(clicks) >= 10:
                    last_click = clicks[-1]
                    last_y, last_x = last_click.coords[0], last_click.coords[1]
                    pred_mask = Progressive_Merge(pred_mask, prev_mask, last_y, last_x)
                    predictor.transforms[0]._prev_probs = np.expand_dims(np.expand_dims(pred_mask, 0), 0)

            if callback is not None:
                callback(image, gt_mask, pred_probs, sample_id, click_indx, clicker.clicks_list)

            iou = utils.get_iou(gt_mask, pred_mask)
            ious_list.append(iou)
            prev_mask = pred_mask

            if iou >= max_iou_thr and click_indx + 1 >= min_clicks:
                break

        return clicker.clicks_list, np.array(ious_list, dtype=np.float32), pred_probs, times_list
