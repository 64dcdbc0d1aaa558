# ------------------------------------------------------------------------
# Iter-E2EDet
# Modified from Deformable DETR (https://github.com/fundamentalvision/Deformable-DETR)
# ------------------------------------------------------------------------
"""
Train and eval functions used in main.py
"""
import json
import math
import os
import sys
from typing import Iterable

import torch
import util.misc as utils
from datasets.data_prefetcher import data_prefetcher
from datasets.crowdhuman_eval import CrowdHumanEvaluator


def train_one_epoch(model: torch.nn.Module, criterion: torch.nn.Module,
                    data_loader: Iterable, optimizer: torch.optim.Optimizer,
                    device: torch.device, epoch: int, max_norm: float = 0,
                    scaler=None, amp=False):
    model.train()
    criterion.train()
    metric_logger = utils.MetricLogger(delimiter="  ")
    metric_logger.add_meter('lr', utils.SmoothedValue(window_size=1, fmt='{value:.6f}'))
    metric_logger.add_meter('class_error', utils.SmoothedValue(window_size=1, fmt='{value:.2f}'))
    metric_logger.add_meter('grad_norm', utils.SmoothedValue(window_size=1, fmt='{value:.2f}'))
    header = 'Epoch: [{}]'.format(epoch)
    print_freq = 10

    prefetcher = data_prefetcher(data_loader, device, prefetch=True)
    samples, targets = prefetcher.next()

    # for samples, targets in metric_logger.log_every(data_loader, print_freq, header):
    for _ in metric_logger.log_every(range(len(data_loader)), print_freq, header):
        with torch.cuda.amp.autocast(enabled=amp):
            outputs = model(samples)
            loss_dict = criterion(outputs, targets)
            weight_dict = criterion.weight_dict
            losses = sum(loss_dict[k] * weight_dict[k] for k in loss_dict.keys() if k in weight_dict)

        # reduce losses over all GPUs for logging purposes
        loss_dict_reduced = utils.reduce_dict(loss_dict)
        loss_dict_reduced_unscaled = {f'{k}_unscaled': v
                                      for k, v in loss_dict_reduced.items()}
        loss_dict_reduced_scaled = {k: v * weight_dict[k]
                                    for k, v in loss_dict_reduced.items() if k in weight_dict}
        losses_reduced_scaled = sum(loss_dict_reduced_scaled.values())

        loss_value = losses_reduced_scaled.item()

        if not math.isfinite(loss_value):
            print("Loss is {}, stopping training".format(loss_value))
            print(loss_dict_reduced)
            sys.exit(1)

        optimizer.zero_grad()
        scaler.scale(losses).backward()
        if max_norm > 0:
            scaler.unscale_(optimizer)
            grad_total_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        else:
            grad_total_norm = utils.get_total_grad_norm(model.parameters(), max_norm)
        scaler.step(optimizer)
        scaler.update()

        metric_logger.update(loss=loss_value, **loss_dict_reduced_scaled, **loss_dict_reduced_unscaled)
        metric_logger.update(class_error=loss_dict_reduced['class_error'])
        metric_logger.update(lr=optimizer.param_groups[0]["lr"])
        metric_logger.update(grad_norm=grad_total_norm)

        samples, targets = prefetcher.next()
    # gather the stats from all processes
    metric_logger.synchronize_between_processes()
    print("Averaged stats:", metric_logger)
    return {k: meter.global_avg for k, meter in metric_logger.meters.items()}


@torch.no_grad()
def evaluate(model, criterion, postprocessors, data_loader, device, output_dir):
    model.eval()
    criterion.eval()

    metric_logger = utils.MetricLogger(delimiter="  ")
    metric_logger.add_meter('class_error', utils.SmoothedValue(window_size=1, fmt='{value:.2f}'))
    header = 'Test:'

    evaluator = CrowdHumanEvaluator()
    all_results = []

    for samples, targets in metric_logger.log_every(data_loader, 10, header):
        samples = samples.to(device)
        targets = [{k: v.to(device) for k, v in t.items()} for t in targets]

        outputs = model(samples)
        loss_dict = criterion(outputs, targets)
        weight_dict = criterion.weight_dict

        # reduce losses over all GPUs for logging purposes
        loss_dict_reduced = utils.reduce_dict(loss_dict)
        loss_dict_reduced_scaled = {k: v * weight_dict[k]
                                    for k, v in loss_dict_reduced.items() if k in weight_dict}
        loss_dict_reduced_unscaled = {f'{k}_unscaled': v
                                      for k, v in loss_dict_reduced.items()}
        metric_logger.update(loss=sum(loss_dict_reduced_scaled.values()),
                             **loss_dict_reduced_scaled,
                             **loss_dict_reduced_unscaled)
        metric_logger.update(class_error=loss_dict_reduced['class_error'])

        orig_target_sizes = torch.stack([t["orig_size"] for t in targets], dim=0)
        results = postprocessors['bbox'](outputs, orig_target_sizes)
        for target, output in zip(targets, results):
            image_id = target['image_id'].item()
            boxes = output['boxes'].cpu().numpy()
            scores = output['scores'].cpu().numpy()
            all_results.append(dict(ID=image_id,
                                    dtboxes=[dict(box=b.tolist(), score=float(s), tag=1)
                                             for b, s in zip(boxes, scores)]))

    # gather the stats from all processes
    metric_logger.synchronize_between_processes()
    print("Averaged stats:", metric_logger)
    all_results = utils.all_gather(all_results)
    all_results = [r for part in all_results for r in part]

    stats = {k: meter.global_avg for k, meter in metric_logger.meters.items()}
    if utils.is_main_process():
        AP, MR, JI = evaluator.evaluate(all_results)
        stats.update(AP=AP, MR=MR, JI=JI)
        print('AP: {:.4f}  MR: {:.4f}  JI: {:.4f}'.format(AP, MR, JI))
        if output_dir:
            with open(os.path.join(output_dir, 'dt_results.json'), 'w') as f:
                for r in all_results:
                    f.write(json.dumps(r) + '\n')
    return stats


@torch.no_grad()
def benchmark_fps(model, data_loader, device, num_iters=200, warmup=20):
    """Pure forward speed on one GPU, batch size 1, as reported in the paper
    (V100, 1000 queries). Data loading is excluded."""
    model.eval()
    timings = []
    it = iter(data_loader)
    for i in range(num_iters + warmup):
        try:
            samples, _ = next(it)
        except StopIteration:
            it = iter(data_loader)
            samples, _ = next(it)
        samples = samples.to(device)
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        model(samples)
        end.record()
        torch.cuda.synchronize()
        if i >= warmup:
            timings.append(start.elapsed_time(end))
    mean_ms = sum(timings) / len(timings)
    print('mean forward {:.1f} ms -> {:.2f} FPS'.format(mean_ms, 1000.0 / mean_ms))
    return 1000.0 / mean_ms


@torch.no_grad()
def visualize_predictions(model, postprocessors, dataset, device, out_dir, num_images=20, score_thr=0.5):
    """Dump a few CrowdHuman val images with predicted full-body boxes."""
    import cv2
    import numpy as np
    os.makedirs(out_dir, exist_ok=True)
    model.eval()
    mean = np.array([0.485, 0.456, 0.406])[:, None, None]
    std = np.array([0.229, 0.224, 0.225])[:, None, None]
    for idx in range(min(num_images, len(dataset))):
        img, target = dataset[idx]
        samples = utils.nested_tensor_from_tensor_list([img.to(device)])
        outputs = model(samples)
        orig_size = target['orig_size'][None].to(device)
        result = postprocessors['bbox'](outputs, orig_size)[0]
        keep = result['scores'] > score_thr
        boxes = result['boxes'][keep].cpu().numpy()
        vis = (img.numpy() * std + mean) * 255.0
        vis = np.ascontiguousarray(vis.transpose(1, 2, 0)[:, :, ::-1].astype(np.uint8))
        h, w = vis.shape[:2]
        oh, ow = target['orig_size'].tolist()
        scale_x, scale_y = w / ow, h / oh
        for x0, y0, x1, y1 in boxes:
            cv2.rectangle(vis, (int(x0 * scale_x), int(y0 * scale_y)),
                          (int(x1 * scale_x), int(y1 * scale_y)), (0, 255, 0), 2)
        cv2.imwrite(os.path.join(out_dir, '{:05d}.jpg'.format(idx)), vis)
