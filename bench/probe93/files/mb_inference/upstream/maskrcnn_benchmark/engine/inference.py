# Copyright (c) Facebook, Inc. and its affiliates. All Rights Reserved.
import base64
import logging
import os
import time
import datetime
import json

import numpy as np
import torch
from tqdm import tqdm

from maskrcnn_benchmark.config import cfg
from maskrcnn_benchmark.data.datasets.evaluation import evaluate
from ..utils.comm import is_main_process, get_world_size
from ..utils.comm import all_gather, gather_on_master
from ..utils.comm import synchronize
from ..utils.timer import Timer, get_time_str
from .bbox_aug import im_detect_bbox_aug


def compute_on_dataset(model, data_loader, device, bbox_aug, timer=None):
    model.eval()
    results_dict = {}
    cpu_device = torch.device("cpu")
    for _, batch in enumerate(tqdm(data_loader)):
        images, targets, image_ids = batch
        with torch.no_grad():
            if timer:
                timer.tic()
            if bbox_aug:
                output = im_detect_bbox_aug(model, images, device)
            else:
                output = model(images.to(device))
            if timer:
                if not cfg.MODEL.DEVICE == 'cpu':
                    torch.cuda.synchronize()
                timer.toc()
            output = [o.to(cpu_device) for o in output]
        results_dict.update(
            {img_id: result for img_id, result in zip(image_ids, output)}
        )
    return results_dict


def _accumulate_predictions_from_multiple_gpus(predictions_per_gpu, gather_on_cpu=False, tmp_dir=None):
    if gather_on_cpu:
        all_predictions = gather_on_master(predictions_per_gpu, tmp_dir)
    else:
        all_predictions = all_gather(predictions_per_gpu)
    if not is_main_process():
        return
    # merge the list of dicts
    predictions = {}
    for p in all_predictions:
        predictions.update(p)
    # convert a dict where the key is the index in a list
    image_ids = list(sorted(predictions.keys()))
    if len(image_ids) != image_ids[-1] + 1:
        logger = logging.getLogger("maskrcnn_benchmark.inference")
        logger.warning(
            "Number of images that were gathered from multiple processes is not "
            "a contiguous set. Some images might be missing from the evaluation"
        )

    # convert to a list
    predictions = [predictions[i] for i in image_ids]
    return predictions


def _encode_array(arr):
    return base64.b64encode(np.ascontiguousarray(arr)).decode("utf-8")


def convert_predictions_to_tsv(predictions, dataset, output_file, save_subset, labelmap):
    """One row per image: image key and a JSON list of detected regions with
    their class, confidence, attributes and (optionally) the pooled 2048-d
    region feature used by Oscar / VinVL downstream."""
    with open(output_file, "w") as fp:
        for idx, prediction in enumerate(predictions):
            img_info = dataset.get_img_info(idx)
            image_key = dataset.get_img_key(idx)
            prediction = prediction.resize((img_info["width"], img_info["height"]))
            boxes = prediction.bbox.tolist()
            scores = prediction.get_field("scores").tolist()
            labels = prediction.get_field("labels").tolist()
            objects = []
            for i, (box, score, label) in enumerate(zip(boxes, scores, labels)):
                obj = {}
                if "rect" in save_subset:
                    obj["rect"] = box
                if "class" in save_subset:
                    obj["class"] = labelmap.get(label, str(label))
                if "conf" in save_subset:
                    obj["conf"] = score
                if "attr_labels" in save_subset and prediction.has_field("attr_labels"):
                    obj["attr_labels"] = prediction.get_field("attr_labels")[i].tolist()
                    obj["attr_scores"] = prediction.get_field("attr_scores")[i].tolist()
                if "feature" in save_subset and prediction.has_field("box_features"):
                    feat = prediction.get_field("box_features")[i].numpy().astype(np.float32)
                    obj["feature"] = _encode_array(feat)
                objects.append(obj)
            fp.write("{}\t{}\n".format(image_key, json.dumps(objects)))


def inference(
        model,
        data_loader,
        dataset_name,
        iou_types=("bbox",),
        box_only=False,
        bbox_aug=False,
        device="cuda",
        expected_results=(),
        expected_results_sigma_tol=4,
        output_folder=None,
        skip_performance_eval=False,
        labelmap=None,
        save_predictions=False,
):
    # convert to a torch.device for efficiency
    device = torch.device(device)
    num_devices = get_world_size()
    logger = logging.getLogger("maskrcnn_benchmark.inference")
    dataset = data_loader.dataset
    logger.info("Start evaluation on {} dataset({} images).".format(dataset_name, len(dataset)))
    total_timer = Timer()
    inference_timer = Timer()
    total_timer.tic()
    predictions = compute_on_dataset(model, data_loader, device, bbox_aug, inference_timer)
    # wait for all processes to complete before measuring the time
    synchronize()
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

    predictions = _accumulate_predictions_from_multiple_gpus(
        predictions,
        gather_on_cpu=cfg.TEST.GATHER_ON_CPU,
        tmp_dir=os.path.join(output_folder or ".", "tmp_gather"),
    )
    if not is_main_process():
        return

    if output_folder and save_predictions:
        torch.save(predictions, os.path.join(output_folder, "predictions.pth"))

    if output_folder and cfg.TEST.SAVE_RESULTS_TO_TSV:
        logger.info("Convert prediction results to tsv format and save.")
        convert_predictions_to_tsv(
            predictions, dataset,
            os.path.join(output_folder, "predictions.tsv"),
            cfg.TEST.TSV_SAVE_SUBSET, labelmap or {},
        )

    if skip_performance_eval:
        logger.info("Skip performance evaluation and return.")
        return

    extra_args = dict(
        box_only=box_only,
        iou_types=iou_types,
        expected_results=expected_results,
        expected_results_sigma_tol=expected_results_sigma_tol,
    )

    return evaluate(dataset=dataset,
                    predictions=predictions,
                    output_folder=output_folder,
                    **extra_args)
