import logging
import pdb
import os
from collections import defaultdict

import numpy as np
import torch
from tqdm import tqdm

from utils import comm
from utils.timer import Timer, get_time_str
from data.datasets.evaluation import evaluate_python
from data.datasets.evaluation import generate_kitti_3d_detection
from engine.visualize_infer import show_image_with_boxes, show_image_with_boxes_test


def compute_on_dataset(model, data_loader, device, predict_folder, timer=None, vis=False,
                       eval_score_iou=False, eval_depth=False, eval_trunc_recall=False):
    model.eval()
    cpu_device = torch.device("cpu")
    dis_ious = defaultdict(list)
    depth_errors = defaultdict(list)

    for idx, batch in enumerate(tqdm(data_loader)):
        images, targets, image_ids = batch["images"], batch["targets"], batch["img_ids"]
        images = images.to(device)

        # extract label data for visualize
        vis_target = targets[0]
        targets = [target.to(device) for target in targets]

        with torch.no_grad():
            if timer:
                timer.tic()

            output, eval_utils, visualize_preds = model(images, targets)
            output = output.to(cpu_device)

            if timer:
                torch.cuda.synchronize()
                timer.toc()

            dis_iou = eval_utils['dis_ious']
            if dis_iou is not None:
                for key in dis_iou:
                    dis_ious[key] += dis_iou[key].tolist()

            if eval_depth:
                depth_error = eval_utils['depth_errors']
                for key in depth_error:
                    depth_errors[key] += depth_error[key].tolist()

            if vis:
                show_image_with_boxes(vis_target.get_field('ori_img'), output, vis_target,
                                      visualize_preds, vis_scores=eval_utils['vis_scores'])

            # generate txt files for predicted objects
            predict_txt = image_ids[0] + '.txt'
            predict_txt = os.path.join(predict_folder, predict_txt)
            generate_kitti_3d_detection(output, predict_txt)

    # disentangling IoU
    for key, value in dis_ious.items():
        mean_iou = np.mean(value)
        dis_ious[key] = mean_iou

    for key, value in depth_errors.items():
        value = np.array(value)
        value[value > 1] = 1
        mean_error = np.mean(value)
        depth_errors[key] = mean_error

    return dis_ious, depth_errors


def inference(
        model,
        data_loader,
        dataset_name,
        eval_types=("detections",),
        device="cuda",
        output_folder=None,
        metrics=['R40'],
        vis=False,
        eval_score_iou=False,
        eval_depth=False,
):
    device = torch.device(device)
    num_devices = comm.get_world_size()
    logger = logging.getLogger("monoflex.inference")
    dataset = data_loader.dataset
    logger.info("Start evaluation on {} dataset({} images).".format(dataset_name, len(dataset)))

    predict_folder = os.path.join(output_folder, 'data')
    os.makedirs(predict_folder, exist_ok=True)

    total_timer = Timer()
    inference_timer = Timer()
    total_timer.tic()

    dis_ious, depth_errors = compute_on_dataset(model, data_loader, device, predict_folder,
                                                inference_timer, vis, eval_score_iou, eval_depth)
    comm.synchronize()

    for key, value in dis_ious.items():
        logger.info("{}, MEAN IOU = {:.4f}".format(key, value))

    for key, value in depth_errors.items():
        logger.info("{}, MEAN ERROR/ACCURACY = {:.4f}".format(key, value))

    total_time = total_timer.toc()
    total_time_str = get_time_str(total_time)
    logger.info(
        "Total run time: {} ({} s / img per device, on {} devices)".format(
            total_time_str, total_time * num_devices / len(dataset), num_devices
        )
    )
    total_infer_time = get_time_str(inference_timer.total_time)
    logger.info(
        "Model inference time: {} ({} s / img per device, on {} devices)".format(
            total_infer_time,
            inference_timer.total_time * num_devices / len(dataset),
            num_devices,
        )
    )
    if not comm.is_main_process():
        return None, None, None

    logger.info('Finishing generating predictions, start evaluating ...')
    ret_dicts = []

    for metric in metrics:
        result, ret_dict = evaluate_python(label_path=dataset.label_dir,
                                           result_path=predict_folder,
                                           label_split_file=dataset.imageset_txt,
                                           current_class=dataset.classes,
                                           metric=metric)

        logger.info('metric = {}'.format(metric))
        logger.info('\n' + result)

        ret_dicts.append(ret_dict)

    return ret_dicts, result, dis_ious
