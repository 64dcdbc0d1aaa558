# Incremental object detection (Faster ILOD style):
# a frozen "source" detector trained on the old classes distils its RPN and
# RCNN outputs into a "target" detector that learns the new classes.
#
#   python -m torch.distributed.launch --nproc_per_node=4 tools/train_incremental.py \
#       --config-file configs/e2e_faster_rcnn_R_50_C4_4x_Target_model.yaml \
#       --source-config configs/e2e_faster_rcnn_R_50_C4_4x_Source_model.yaml
import argparse
import datetime
import logging
import os
import time

import torch
import torch.nn.functional as F
from torch.distributions.categorical import Categorical

from maskrcnn_benchmark.config import cfg
from maskrcnn_benchmark.data import make_data_loader
from maskrcnn_benchmark.solver import make_lr_scheduler, make_optimizer
from maskrcnn_benchmark.engine.inference import inference
from maskrcnn_benchmark.modeling.detector import build_detection_model
from maskrcnn_benchmark.utils.checkpoint import DetectronCheckpointer
from maskrcnn_benchmark.utils.collect_env import collect_env_info
from maskrcnn_benchmark.utils.comm import get_rank, synchronize, get_world_size
from maskrcnn_benchmark.utils.imports import import_file
from maskrcnn_benchmark.utils.logger import setup_logger
from maskrcnn_benchmark.utils.metric_logger import MetricLogger
from maskrcnn_benchmark.utils.miscellaneous import mkdir
from maskrcnn_benchmark.engine.trainer import reduce_loss_dict


def calculate_rpn_distillation_loss(rpn_output_source, rpn_output_target, cls_loss=None, bbs_loss=None,
                                    bbs_threshold=0.1):
    rpn_objectness_source, rpn_bbox_regression_source = rpn_output_source
    rpn_objectness_target, rpn_bbox_regression_target = rpn_output_target

    # calculate rpn classification loss
    num_source_rpn_objectness = len(rpn_objectness_source)
    num_target_rpn_objectness = len(rpn_objectness_target)
    final_rpn_cls_distillation_loss = []
    objectness_difference = []

    if num_source_rpn_objectness == num_target_rpn_objectness:
        for i in range(num_target_rpn_objectness):
            current_source_rpn_objectness = rpn_objectness_source[i]
            current_target_rpn_objectness = rpn_objectness_target[i]
            if cls_loss == 'filtered_l1':
                rpn_objectness_difference = current_source_rpn_objectness - current_target_rpn_objectness
                objectness_difference.append(rpn_objectness_difference)
                filter = torch.zeros(current_source_rpn_objectness.size()).to('cuda')
                rpn_difference = torch.max(rpn_objectness_difference, filter)
                rpn_distillation_loss = torch.mul(rpn_difference, rpn_difference)
                final_rpn_cls_distillation_loss.append(torch.mean(rpn_distillation_loss))
                del filter
                torch.cuda.empty_cache()  # Release unoccupied memory
            elif cls_loss == 'mse':
                rpn_distillation_loss = F.mse_loss(current_target_rpn_objectness, current_source_rpn_objectness)
                final_rpn_cls_distillation_loss.append(rpn_distillation_loss)
            else:
                raise ValueError("Wrong loss function for rpn classification distillation")
    else:
        raise ValueError("Wrong rpn objectness output")
    final_rpn_cls_distillation_loss = sum(final_rpn_cls_distillation_loss) / num_source_rpn_objectness

    # calculate rpn bounding box regression loss
    num_source_rpn_bbox = len(rpn_bbox_regression_source)
    num_target_rpn_bbox = len(rpn_bbox_regression_target)
    final_rpn_bbs_distillation_loss = []
    l2_loss = torch.nn.MSELoss(size_average=False, reduce=False)

    if num_source_rpn_bbox == num_target_rpn_bbox:
        for i in range(num_target_rpn_bbox):
            current_source_rpn_bbox = rpn_bbox_regression_source[i]
            current_target_rpn_bbox = rpn_bbox_regression_target[i]
            current_objectness_difference = objectness_difference[i]
            [N, A, H, W] = current_objectness_difference.size()  # N A H W
            current_objectness_difference = current_objectness_difference.permute(0, 2, 3, 1)
            current_objectness_difference = current_objectness_difference.reshape(N, -1)
            current_objectness_mask = current_objectness_difference.clone()
            current_objectness_mask[current_objectness_difference > bbs_threshold] = 1
            current_objectness_mask[current_objectness_difference <= bbs_threshold] = 0
            masked_source_rpn_bbox = current_source_rpn_bbox
            masked_target_rpn_bbox = current_target_rpn_bbox
            if bbs_loss == 'l2':
                current_bbs_loss = l2_loss(masked_source_rpn_bbox, masked_target_rpn_bbox)
                final_rpn_bbs_distillation_loss.append(torch.mean(torch.mean(torch.sum(current_bbs_loss, dim=2), dim=1), dim=0))
            elif bbs_loss == 'None':
                final_rpn_bbs_distillation_loss.append(0)
            else:
                raise ValueError('Wrong loss function for rpn bounding box regression distillation')
    else:
        raise ValueError('Wrong RPN bounding box regression output')
    final_rpn_bbs_distillation_loss = sum(final_rpn_bbs_distillation_loss) / num_source_rpn_bbox

    final_rpn_loss = final_rpn_cls_distillation_loss + final_rpn_bbs_distillation_loss
    final_rpn_loss.to('cuda')

    return final_rpn_loss


def calculate_roi_distillation_loss(soften_results, target_results, cls_preprocess=None, cls_loss=None, bbs_loss=None,
                                    temperature=1):
    soften_scores, soften_bboxes = soften_results
    target_scores, target_bboxes = target_results
    num_of_distillation_categories = soften_scores.size()[1]

    # compute distillation loss
    if cls_preprocess == 'sigmoid':  # exception
        soften_scores = F.sigmoid(soften_scores)
        target_scores = F.sigmoid(target_scores)
        modified_target_scores = target_scores[:, :num_of_distillation_categories]
    elif cls_preprocess == 'softmax':  # exception
        soften_scores = F.softmax(soften_scores / temperature, dim=1)
        target_scores = F.softmax(target_scores / temperature, dim=1)
        modified_target_scores = target_scores[:, :num_of_distillation_categories]
    elif cls_preprocess == 'log_softmax':  # exception
        soften_scores = F.log_softmax(soften_scores, dim=1)
        target_scores = F.log_softmax(target_scores, dim=1)
        modified_target_scores = target_scores[:, :num_of_distillation_categories]
    elif cls_preprocess == 'normalization':  # exception
        class_wise_soften_scores_avg = torch.mean(soften_scores, dim=1).view(-1, 1)
        class_wise_target_scores_avg = torch.mean(target_scores, dim=1).view(-1, 1)
        normalized_soften_scores = torch.sub(soften_scores, class_wise_soften_scores_avg)
        normalized_target_scores = torch.sub(target_scores, class_wise_target_scores_avg)
        modified_target_scores = normalized_target_scores[:, :num_of_distillation_categories]
        soften_scores = normalized_soften_scores
    elif cls_preprocess == 'raw':
        modified_target_scores = target_scores[:, :num_of_distillation_categories]
    else:
        raise ValueError("Wrong preprocessing method for raw classification output")

    if cls_loss == 'l2':
        l2_loss = torch.nn.MSELoss(size_average=False, reduce=False)
        class_distillation_loss = l2_loss(modified_target_scores, soften_scores)
        class_distillation_loss = torch.mean(torch.mean(class_distillation_loss, dim=1), dim=0)
    elif cls_loss == 'cross-entropy':  # softmax/sigmoid + cross-entropy
        class_distillation_loss = - soften_scores * torch.log(modified_target_scores)
        class_distillation_loss = torch.mean(torch.mean(class_distillation_loss, dim=1), dim=0)
    elif cls_loss == 'softmax cross-entropy with temperature':  # raw + softmax cross-entropy with temperature
        log_softmax = torch.nn.LogSoftmax()
        softmax = torch.nn.Softmax()
        class_distillation_loss = - softmax(soften_scores / temperature) * log_softmax(modified_target_scores / temperature)
        class_distillation_loss = class_distillation_loss * temperature * temperature
        class_distillation_loss = torch.mean(class_distillation_loss)
    elif cls_loss == 'filtered_l2':
        cls_difference = modified_target_scores - soften_scores
        filter = torch.zeros(modified_target_scores.size()).to('cuda')
        class_difference = torch.max(cls_difference, filter)
        class_distillation_loss = torch.mul(class_difference, class_difference)
        class_distillation_loss = torch.mean(torch.mean(class_distillation_loss, dim=1), dim=0)
        del filter
        torch.cuda.empty_cache()  # release the memory held by the filter
    else:
        raise ValueError("Wrong loss function for classification")

    # compute distillation bbox loss
    modified_soften_boxes = soften_bboxes[:, 1:, :]  # exclude background bbox
    modified_target_bboxes = target_bboxes[:, 1:num_of_distillation_categories, :]  # exclude background bbox
    if bbs_loss == 'l2':
        l2_loss = torch.nn.MSELoss(size_average=False, reduce=False)
        bbox_distillation_loss = l2_loss(modified_target_bboxes, modified_soften_boxes)
        bbox_distillation_loss = torch.mean(torch.mean(torch.sum(bbox_distillation_loss, dim=2), dim=1), dim=0)
    elif bbs_loss == 'smooth_l1':
        num_bboxes = modified_target_bboxes.size()[0]
        num_categories = modified_target_bboxes.size()[1]
        bbox_distillation_loss = F.smooth_l1_loss(modified_target_bboxes, modified_soften_boxes, size_average=False,
                                                  reduce=False)
        bbox_distillation_loss = torch.sum(bbox_distillation_loss) / (num_bboxes * num_categories)
    elif bbs_loss == 'None':
        bbox_distillation_loss = 0
    else:
        raise ValueError("Wrong loss function for bounding box regression")

    roi_distillation_losses = torch.add(class_distillation_loss, bbox_distillation_loss)

    return roi_distillation_losses


def do_train(model_source, model_target, data_loader, optimizer, scheduler, checkpointer_target, device,
             checkpoint_period, arguments_target, cfg_target, distributed):
    logger = logging.getLogger("maskrcnn_benchmark.trainer")
    logger.info("Start training")
    meters = MetricLogger(delimiter="  ")
    max_iter = len(data_loader)
    start_iter = arguments_target["iteration"]
    model_target.train()
    model_source.eval()
    start_training_time = time.time()
    end = time.time()

    for iteration, (images, targets, _) in enumerate(data_loader, start_iter):
        data_time = time.time() - end
        iteration = iteration + 1
        arguments_target["iteration"] = iteration
        scheduler.step()

        images = images.to(device)
        targets = [target.to(device) for target in targets]

        loss_dict_target, target_proposals, rpn_output_target, target_features, roi_align_features_target, \
            soften_result_target = model_target(images, targets)

        with torch.no_grad():
            soften_result, soften_mask_logits, soften_proposal, feature_source, backbone_feature_source, \
                anchor_source, rpn_output_source, roi_align_features_source = model_source.generate_soften_proposal(images)

        roi_distillation_losses = calculate_roi_distillation_loss(
            soften_result, soften_result_target, cls_preprocess='normalization', cls_loss='l2', bbs_loss='l2')
        rpn_distillation_losses = calculate_rpn_distillation_loss(
            rpn_output_source, rpn_output_target, cls_loss='filtered_l1', bbs_loss='l2', bbs_threshold=0.1)

        distillation_losses = roi_distillation_losses + rpn_distillation_losses
        distillation_dict = {'distillation_loss': distillation_losses.clone().detach()}
        loss_dict_target.update(distillation_dict)

        losses = sum(loss for loss in loss_dict_target.values())

        # reduce losses over all GPUs for logging purposes
        loss_dict_reduced = reduce_loss_dict(loss_dict_target)
        losses_reduced = sum(loss for loss in loss_dict_reduced.values())
        meters.update(loss=losses_reduced, **loss_dict_reduced)

        optimizer.zero_grad()
        (losses + distillation_losses * 0.0).backward()
        optimizer.step()

        batch_time = time.time() - end
        end = time.time()
        meters.update(time=batch_time, data=data_time)

        eta_seconds = meters.time.global_avg * (max_iter - iteration)
        eta_string = str(datetime.timedelta(seconds=int(eta_seconds)))

        if iteration % 20 == 0 or iteration == max_iter:
            logger.info(
                meters.delimiter.join(["eta: {eta}", "iter: {iter}", "{meters}", "lr: {lr:.6f}", "max mem: {memory:.0f}"]
                                      ).format(eta=eta_string, iter=iteration, meters=str(meters),
                                               lr=optimizer.param_groups[0]["lr"],
                                               memory=torch.cuda.max_memory_allocated() / 1024.0 / 1024.0))
        if iteration % checkpoint_period == 0:
            checkpointer_target.save("model_{:07d}".format(iteration), **arguments_target)
        if iteration == max_iter:
            checkpointer_target.save("model_last", **arguments_target)

    total_training_time = time.time() - start_training_time
    total_time_str = str(datetime.timedelta(seconds=total_training_time))
    logger.info("Total training time: {} ({:.4f} s / it)".format(total_time_str, total_training_time / (max_iter)))


def train(cfg_source, logger_source, cfg_target, logger_target, local_rank, distributed):
    model_source = build_detection_model(cfg_source)  # create the source model
    model_target = build_detection_model(cfg_target)  # create the target model
    device = torch.device(cfg_source.MODEL.DEVICE)  # default is "cuda"
    model_target.to(device)  # move target model to gpu
    model_source.to(device)  # move source model to gpu
    optimizer = make_optimizer(cfg_target, model_target)  # config optimization strategy
    scheduler = make_lr_scheduler(cfg_target, optimizer)  # config learning rate

    if distributed:
        model_target = torch.nn.parallel.DistributedDataParallel(
            model_target, device_ids=[local_rank], output_device=local_rank,
            # this should be removed if we update BatchNorm stats
            broadcast_buffers=False, find_unused_parameters=True,
        )

    arguments_source = {}
    arguments_source["iteration"] = 0
    arguments_target = {}
    arguments_target["iteration"] = 0
    output_dir_target = cfg_target.OUTPUT_DIR
    save_to_disk = get_rank() == 0
    checkpointer_source = DetectronCheckpointer(cfg_source, model_source, optimizer=None, scheduler=None,
                                                save_dir=cfg_source.OUTPUT_DIR, save_to_disk=save_to_disk)
    extra_checkpoint_data_source = checkpointer_source.load(cfg_source.MODEL.WEIGHT)
    checkpointer_target = DetectronCheckpointer(cfg_target, model_target, optimizer=optimizer, scheduler=scheduler,
                                                save_dir=output_dir_target, save_to_disk=save_to_disk,
                                                logger=logger_target)
    extra_checkpoint_data_target = checkpointer_target.load(cfg_target.MODEL.WEIGHT)
    data_loader = make_data_loader(cfg_target, is_train=True, is_distributed=distributed,
                                   start_iter=arguments_target["iteration"])
    checkpoint_period = cfg_target.SOLVER.CHECKPOINT_PERIOD

    do_train(model_source, model_target, data_loader, optimizer, scheduler, checkpointer_target, device,
             checkpoint_period, arguments_target, cfg_target, distributed)
    return model_target


def test(cfg, model, distributed):
    if distributed:
        model = model.module
    torch.cuda.empty_cache()  # TODO check if it helps
    iou_types = ("bbox",)
    output_folders = [None] * len(cfg.DATASETS.TEST)
    dataset_names = cfg.DATASETS.TEST
    if cfg.OUTPUT_DIR:
        for idx, dataset_name in enumerate(dataset_names):
            output_folder = os.path.join(cfg.OUTPUT_DIR, "inference", dataset_name)
            mkdir(output_folder)
            output_folders[idx] = output_folder
    data_loaders_val = make_data_loader(cfg, is_train=False, is_distributed=distributed)
    for output_folder, dataset_name, data_loader_val in zip(output_folders, dataset_names, data_loaders_val):
        inference(model, data_loader_val, dataset_name=dataset_name, iou_types=iou_types,
                  box_only=False if cfg.MODEL.RETINANET_ON else cfg.MODEL.RPN_ONLY, device=cfg.MODEL.DEVICE,
                  expected_results=cfg.TEST.EXPECTED_RESULTS,
                  expected_results_sigma_tol=cfg.TEST.EXPECTED_RESULTS_SIGMA_TOL, output_folder=output_folder)
        synchronize()


def main():
    parser = argparse.ArgumentParser(description="PyTorch Incremental Object Detection Training")
    parser.add_argument("--config-file", default="", metavar="FILE", help="path to the target config file", type=str)
    parser.add_argument("--source-config", default="", metavar="FILE", help="path to the source config file", type=str)
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--skip-test", dest="skip_test", help="Do not test the final model", action="store_true")
    parser.add_argument("opts", help="Modify config options using the command-line", default=None,
                        nargs=argparse.REMAINDER)
    args = parser.parse_args()

    num_gpus = int(os.environ["WORLD_SIZE"]) if "WORLD_SIZE" in os.environ else 1
    args.distributed = num_gpus > 1

    if args.distributed:
        torch.cuda.set_device(args.local_rank)
        torch.distributed.init_process_group(backend="nccl", init_method="env://")
        synchronize()

    cfg_source = cfg.clone()
    cfg_source.merge_from_file(args.source_config)
    cfg_source.freeze()

    cfg_target = cfg.clone()
    cfg_target.merge_from_file(args.config_file)
    cfg_target.merge_from_list(args.opts)
    cfg_target.freeze()

    output_dir = cfg_target.OUTPUT_DIR
    if output_dir:
        mkdir(output_dir)

    logger_source = setup_logger("maskrcnn_benchmark_source_model", output_dir, get_rank())
    logger_target = setup_logger("maskrcnn_benchmark_target_model", output_dir, get_rank())
    logger_target.info("Using {} GPUs".format(num_gpus))
    logger_target.info(args)
    logger_target.info("Collecting env info (might take some time)")
    logger_target.info("\n" + collect_env_info())

    model_target = train(cfg_source, logger_source, cfg_target, logger_target, args.local_rank, args.distributed)

    if not args.skip_test:
        test(cfg_target, model_target, args.distributed)


if __name__ == "__main__":
    main()
