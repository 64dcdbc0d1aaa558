# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.

"""
Training of the Watermark-Anything Model (WAM): embedder + extractor (per-pixel bit decoding and
watermark-mask segmentation), with perceptual + detection + decoding losses.

Example (1 node, 8 GPUs):
    torchrun --nproc_per_node=8 train.py --local_rank 0 \
        --train_dir /datasets/coco/train2017 --train_annotation_file /datasets/coco/annotations/instances_train2017.json \
        --val_dir /datasets/coco/val2017 --val_annotation_file /datasets/coco/annotations/instances_val2017.json \
        --output_dir output/wam_coco --nbits 32 --img_size 256 --batch_size 16 --epochs 300
"""

import argparse
import datetime
import json
import os
import time
from typing import List

import numpy as np
import omegaconf

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.tensorboard import SummaryWriter
from torchvision.utils import save_image

import watermark_anything.utils as utils
import watermark_anything.utils.dist as udist
import watermark_anything.utils.optim as uoptim
import watermark_anything.utils.logger as ulogger
from watermark_anything.augmentation.augmenter import Augmenter
from watermark_anything.data.loader import get_dataloader_segmentation
from watermark_anything.data.metrics import accuracy, psnr, iou, bit_accuracy, bit_accuracy_inference
from watermark_anything.data.transforms import get_transforms_segmentation, normalize_img, unnormalize_img
from watermark_anything.losses.detperceptual import LPIPSWithDiscriminator
from watermark_anything.models import Wam, build_embedder, build_extractor
from watermark_anything.modules.jnd import JND

device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')


def get_parser():
    parser = argparse.ArgumentParser()

    def aa(*args, **kwargs):
        group.add_argument(*args, **kwargs)

    group = parser.add_argument_group('Dataset parameters')
    aa("--train_dir", type=str, required=True)
    aa("--train_annotation_file", type=str, required=True)
    aa("--val_dir", type=str, required=True)
    aa("--val_annotation_file", type=str, required=True)
    aa("--output_dir", type=str, default="output/", help="Output directory for logs and images (Default: /output)")

    group = parser.add_argument_group('Experiments parameters')
    aa("--nbits", type=int, default=32, help="Number of bits used to generate the message. If 0, no message is used.")
    aa("--img_size", type=int, default=256, help="Size of the input images for data preprocessing")
    aa("--img_size_extractor", type=int, default=256, help="Images are resized to this size before being fed to the extractor")
    aa("--attenuation", type=str, default="None", help="Attenuation model to use")
    aa("--scaling_w", type=float, default=0.2, help="Scaling factor for the watermark in the embedder model")
    aa("--scaling_w_schedule", type=str, default=None, help="Scaling factor for the watermark in the embedder model")
    aa("--scaling_i", type=float, default=1.0, help="Scaling factor for the image in the embedder model")
    aa("--roll_probability", type=float, default=0, help="Probability to roll the image in the batch")
    aa("--multiple_w", type=float, default=0, help="Probability to use multiple watermarks")

    group = parser.add_argument_group('Configs for the models')
    aa("--embedder_config", type=str, default="configs/embedder.yaml")
    aa("--augmentation_config", type=str, default="configs/all_augs.yaml")
    aa("--extractor_config", type=str, default="configs/extractor.yaml")
    aa("--attenuation_config", type=str, default="configs/attenuation.yaml")
    aa("--embedder_model", type=str, default=None)
    aa("--extractor_model", type=str, default=None)

    group = parser.add_argument_group('Optimizer parameters')
    aa("--optimizer", type=str, default="AdamW,lr=1e-4", help="Optimizer (default: AdamW,lr=1e-4)")
    aa("--optimizer_d", type=str, default=None, help="Discriminator optimizer. If None uses the same params (default: None)")
    aa("--scheduler", type=str, default="None", help="Scheduler (default: None)")
    aa('--epochs', default=100, type=int, help='Number of total epochs to run')
    aa('--batch_size', default=16, type=int, help='Batch size')
    aa('--batch_size_eval', default=64, type=int, help='Batch size for evaluation')
    aa('--temperature', default=1.0, type=float, help='Temperature for the mask loss')
    aa('--workers', default=8, type=int, help='Number of data loading workers')
    aa('--resume_from', default=None, type=str, help='Path to the checkpoint to resume from')

    group = parser.add_argument_group('Losses parameters')
    aa('--lambda_w', default=1.0, type=float, help='Weight for the watermark detection loss')
    aa('--lambda_w2', default=4.0, type=float, help='Weight for the watermark decoding loss')
    aa('--lambda_i', default=1.0, type=float, help='Weight for the image loss')
    aa('--lambda_d', default=0.5, type=float, help='Weight for the discriminator loss')
    aa('--balanced', type=utils.bool_inst, default=True, help='If True, the weights of the losses are balanced')
    aa('--total_gnorm', default=0.0, type=float, help='Total norm for the adaptive weights. If 0, uses the norm of the biggest weight.')
    aa('--perceptual_loss', default='lpips', type=str, help='Perceptual loss to use. "lpips", "watson_vgg" or "watson_fft"')
    aa('--disc_start', default=0, type=float, help='Weight for the discriminator loss')
    aa('--disc_num_layers', default=2, type=int, help='Number of layers for the discriminator')

    group = parser.add_argument_group('Perf parameters')
    aa('--amp', type=utils.bool_inst, default=True, help='bf16 autocast on Ampere+ GPUs, fp32 otherwise')
    aa('--compile', type=utils.bool_inst, default=False, help='torch.compile the WAM (PyTorch>=2.1)')

    group = parser.add_argument_group('Misc.')
    aa('--only_eval', type=utils.bool_inst, default=False, help='If True, only runs evaluate')
    aa('--eval_freq', default=5, type=int, help='Frequency for evaluation')
    aa('--saveimg_freq', default=5, type=int, help='Frequency for saving images')
    aa('--saveckpt_freq', default=50, type=int, help='Frequency for saving ckpts')
    aa('--seed', default=0, type=int, help='Random seed')

    group = parser.add_argument_group('Distributed training parameters')
    aa('--debug_slurm', action='store_true')
    aa('--local_rank', default=-1, type=int)
    aa('--master_port', default=-1, type=int)

    return parser


def pick_amp_dtype(params):
    """ bf16 if the GPU supports it (sm80+), otherwise disable autocast: fp16 without a scaler diverges for WAM. """
    if not params.amp or device.type != 'cuda':
        return None
    major, _ = torch.cuda.get_device_capability()
    if major >= 8:
        return torch.bfloat16
    print('GPU does not support bf16, running in fp32')
    return None


def main(params):

    # Distributed mode
    udist.init_distributed_mode(params)

    # Set seeds for reproductibility
    seed = params.seed + udist.get_rank()
    torch.manual_seed(seed)
    np.random.seed(seed)

    # TF32 matmuls/convs: ~2x faster on A100 with no measurable effect on bit accuracy
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True

    # Print the arguments
    print("__git__:{}".format(utils.get_sha()))
    print("__log__:{}".format(json.dumps(vars(params))))

    # Copy the config files to the output dir
    if udist.is_main_process():
        os.makedirs(os.path.join(params.output_dir, 'configs'), exist_ok=True)
        os.system(f'cp {params.embedder_config} {params.output_dir}/configs/embedder.yaml')
        os.system(f'cp {params.augmentation_config} {params.output_dir}/configs/augs.yaml')
        os.system(f'cp {params.extractor_config} {params.output_dir}/configs/extractor.yaml')

    # Build the embedder model
    embedder_cfg = omegaconf.OmegaConf.load(params.embedder_config)
    params.embedder_model = params.embedder_model or embedder_cfg.model
    embedder_params = embedder_cfg[params.embedder_model]
    embedder = build_embedder(params.embedder_model, embedder_params, params.nbits)
    print(embedder)
    print(f'embedder: {sum(p.numel() for p in embedder.parameters() if p.requires_grad) / 1e6:.1f}M parameters')

    # build the augmenter
    augmenter_cfg = omegaconf.OmegaConf.load(params.augmentation_config)
    augmenter = Augmenter(**augmenter_cfg).to(device)
    print(f'augmenter: {augmenter}')

    # Build the extractor model
    extractor_cfg = omegaconf.OmegaConf.load(params.extractor_config)
    params.extractor_model = params.extractor_model or extractor_cfg.model
    extractor_params = extractor_cfg[params.extractor_model]
    extractor = build_extractor(params.extractor_model, extractor_params, params.img_size_extractor, params.nbits)
    print(f'extractor: {sum(p.numel() for p in extractor.parameters() if p.requires_grad) / 1e6:.1f}M parameters')

    # build attenuation
    if params.attenuation.lower() != "none":
        attenuation_cfg = omegaconf.OmegaConf.load(params.attenuation_config)
        attenuation = JND(**attenuation_cfg[params.attenuation], preprocess=unnormalize_img, postprocess=normalize_img)
    else:
        attenuation = None
    print(f'attenuation: {attenuation}')

    # build the complete model
    wam = Wam(embedder, extractor, augmenter, attenuation, params.scaling_w, params.scaling_i,
              roll_probability=params.roll_probability, img_size_extractor=params.img_size_extractor)
    wam.to(device)

    # build losses
    image_detection_loss = LPIPSWithDiscriminator(
        balanced=params.balanced, total_norm=params.total_gnorm,
        disc_weight=params.lambda_d, percep_weight=params.lambda_i,
        detect_weight=params.lambda_w, decode_weight=params.lambda_w2,
        disc_start=params.disc_start, disc_num_layers=params.disc_num_layers,
        percep_loss=params.perceptual_loss,
    ).to(device)
    print(image_detection_loss)

    # Build the scaling schedule. Default is none
    if params.scaling_w_schedule is not None:
        scaling_w_schedule = uoptim.parse_params(params.scaling_w_schedule)
        scaling_scheduler = uoptim.ScalingScheduler(
            obj=wam.blender, attribute="scaling_w", scaling_o=params.scaling_w,
            **scaling_w_schedule
        )
    else:
        scaling_scheduler = None

    # Build optimizer and scheduler
    model_params = list(embedder.parameters()) + list(extractor.parameters())
    optim_params = uoptim.parse_params(params.optimizer)
    optimizer = uoptim.build_optimizer(model_params, **optim_params)
    scheduler_params = uoptim.parse_params(params.scheduler)
    scheduler = uoptim.build_lr_scheduler(optimizer, **scheduler_params)
    print('optimizer: %s' % optimizer)
    print('scheduler: %s' % scheduler)

    # discriminator optimizer
    if params.optimizer_d is None:
        params.optimizer_d = params.optimizer
    optim_params_d = uoptim.parse_params(params.optimizer) if params.optimizer_d is None else uoptim.parse_params(params.optimizer_d)
    optimizer_d = uoptim.build_optimizer(
        model_params=[*image_detection_loss.discriminator.parameters()],
        **optim_params_d
    )
    print('optimizer_d: %s' % optimizer_d)

    # Data loaders
    train_transform, train_mask_transform, val_transform, val_mask_transform = get_transforms_segmentation(params.img_size)
    train_loader = get_dataloader_segmentation(params.train_dir, params.train_annotation_file,
                                               transform=train_transform, mask_transform=train_mask_transform,
                                               batch_size=params.batch_size, num_workers=params.workers, shuffle=True,
                                               multi_w=params.multiple_w > 0)
    val_loader = get_dataloader_segmentation(params.val_dir, params.val_annotation_file,
                                             transform=val_transform, mask_transform=val_mask_transform,
                                             batch_size=params.batch_size_eval, num_workers=params.workers,
                                             shuffle=False, random_nb_object=False)

    # optionally resume training
    if params.resume_from is not None:
        uoptim.restart_from_checkpoint(
            params.resume_from,
            model=wam,
        )
    to_restore = {"epoch": 0}
    uoptim.restart_from_checkpoint(
        os.path.join(params.output_dir, "checkpoint.pth"),
        run_variables=to_restore,
        model=wam,
        discriminator=image_detection_loss.discriminator,
        optimizer=optimizer,
        optimizer_d=optimizer_d,
        scheduler=scheduler,
    )
    start_epoch = to_restore["epoch"]
    for param_group in optimizer.param_groups:
        param_group['lr'] = optim_params['lr']
    for param_group in optimizer_d.param_groups:
        param_group['lr'] = optim_params_d['lr']

    # specific thing to do if distributed training
    if params.distributed:
        # if model has batch norm convert it to sync batchnorm in distributed mode
        wam = nn.SyncBatchNorm.convert_sync_batchnorm(wam)

        wam_ddp = nn.parallel.DistributedDataParallel(wam, device_ids=[params.local_rank])
        image_detection_loss.discriminator = nn.parallel.DistributedDataParallel(
            image_detection_loss.discriminator, device_ids=[params.local_rank])
        wam = wam_ddp.module
    else:
        wam_ddp = wam

    if params.compile:
        # compiles the forward of embedder+augmenter+extractor; first iterations are slow
        wam_ddp = torch.compile(wam_ddp)

    amp_dtype = pick_amp_dtype(params)
    print(f'autocast dtype: {amp_dtype}')

    # setup for validation
    dummy_img = torch.ones(3, params.img_size, params.img_size)
    validation_masks = augmenter.mask_embedder.sample_representative_masks(dummy_img)  # n 1 h w, full of ones or random masks
    if udist.is_main_process():
        save_image(validation_masks, os.path.join(params.output_dir, 'validation_masks.png'))

    # writer
    tensorboard = SummaryWriter(os.path.join(params.output_dir, 'tensorboard')) if udist.is_main_process() else None

    if params.only_eval:
        val_stats = eval_one_epoch(wam, val_loader, image_detection_loss, 0, validation_masks, params, amp_dtype)
        log_stats = {'epoch': 0, **{f'val_{k}': v for k, v in val_stats.items()}}
        if udist.is_main_process():
            with open(os.path.join(params.output_dir, 'log_only_eval.txt'), 'a') as f:
                f.write(json.dumps(log_stats) + "\n")
        return

    # start training
    print('training...')
    start_time = time.time()
    for epoch in range(start_epoch, params.epochs):
        log_stats = {'epoch': epoch}

        if scheduler is not None:
            scheduler.step(epoch)
        if scaling_scheduler is not None:
            scaling_scheduler.step(epoch)

        if params.distributed:
            train_loader.sampler.set_epoch(epoch)

        train_stats = train_one_epoch(wam_ddp, optimizer, optimizer_d, train_loader, image_detection_loss, epoch,
                                      params, amp_dtype, tensorboard)
        log_stats = {**log_stats, **{f'train_{k}': v for k, v in train_stats.items()}}

        if epoch % params.eval_freq == 0:
            torch.cuda.empty_cache()
            val_stats = eval_one_epoch(wam, val_loader, image_detection_loss, epoch, validation_masks, params, amp_dtype)
            log_stats = {**log_stats, **{f'val_{k}': v for k, v in val_stats.items()}}

        if udist.is_main_process():
            with open(os.path.join(params.output_dir, 'log.txt'), 'a') as f:
                f.write(json.dumps(log_stats) + "\n")
            if tensorboard is not None:
                for k, v in log_stats.items():
                    if k != 'epoch':
                        tensorboard.add_scalar(k, v, epoch)

        save_dict = {
            'epoch': epoch + 1,
            'model': wam.state_dict(),
            'discriminator': image_detection_loss.discriminator.state_dict(),
            'optimizer': optimizer.state_dict(),
            'optimizer_d': optimizer_d.state_dict(),
            'scheduler': scheduler.state_dict() if scheduler is not None else None,
            'args': omegaconf.OmegaConf.to_yaml(params.__dict__),
        }
        udist.save_on_master(save_dict, os.path.join(params.output_dir, 'checkpoint.pth'))
        if params.saveckpt_freq and epoch % params.saveckpt_freq == 0:
            udist.save_on_master(save_dict, os.path.join(params.output_dir, f'checkpoint{epoch:03}.pth'))

    total_time = time.time() - start_time
    total_time_str = str(datetime.timedelta(seconds=int(total_time)))
    print('Total time {}'.format(total_time_str))


def train_one_epoch(wam: Wam, optimizer, optimizer_d, train_loader, image_detection_loss, epoch, params,
                    amp_dtype, tensorboard=None):
    wam.train()

    header = 'Train - Epoch: [{}/{}]'.format(epoch, params.epochs)
    metric_logger = ulogger.MetricLogger(delimiter="  ")

    for it, (imgs, masks) in enumerate(metric_logger.log_every(train_loader, 10, header)):
        imgs = imgs.to(device, non_blocking=True)

        # forward
        with torch.autocast(device_type='cuda', dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):
            outputs = wam(imgs, masks, params=params)
            outputs["preds"] /= params.temperature

            last_layer = wam.module.embedder.get_last_layer() if hasattr(wam, 'module') else wam.embedder.get_last_layer()
            for optimizer_idx in [1, 0]:
                loss, logs = image_detection_loss(
                    imgs, outputs["imgs_w"],
                    outputs["masks"], outputs["msgs"], outputs["preds"],
                    optimizer_idx, epoch,
                    last_layer=last_layer,
                )
                if optimizer_idx == 0:
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                else:
                    optimizer_d.zero_grad()
                    loss.backward(retain_graph=True)
                    optimizer_d.step()

        # log stats
        log_stats = {
            **logs,
            'psnr': psnr(outputs["imgs_w"], imgs).mean().item(),
            'lr': optimizer.param_groups[0]['lr'],
        }
        bit_preds = outputs["preds"][:, 1:, :, :]  # b k h w
        mask_preds = outputs["preds"][:, 0:1, :, :]  # b 1 h w
        log_stats['acc'] = accuracy(mask_preds, outputs["masks"]).item()
        log_stats['miou'] = iou(mask_preds, outputs["masks"], label=1).mean().item()
        log_stats['bit_acc'] = bit_accuracy(bit_preds, outputs["msgs"], outputs["masks"]).nanmean().item()

        torch.cuda.synchronize()
        for name, value in log_stats.items():
            metric_logger.update(**{name: value})

        if tensorboard is not None and it % 100 == 0:
            step = epoch * len(train_loader) + it
            for name, value in log_stats.items():
                tensorboard.add_scalar(f'iter/{name}', value, step)

        # save images on training
        if (epoch % params.saveimg_freq == 0) and it == 0 and udist.is_main_process():
            ori_path = os.path.join(params.output_dir, f'{epoch:03}_{it:03}_train_0_ori.png')
            wm_path = os.path.join(params.output_dir, f'{epoch:03}_{it:03}_train_1_w.png')
            diff_path = os.path.join(params.output_dir, f'{epoch:03}_{it:03}_train_2_diff.png')
            aug_path = os.path.join(params.output_dir, f'{epoch:03}_{it:03}_train_3_aug.png')
            save_image(unnormalize_img(imgs), ori_path, nrow=8)
            save_image(unnormalize_img(outputs["imgs_w"]), wm_path, nrow=8)
            save_image(utils.create_diff_img(imgs, outputs["imgs_w"]), diff_path, nrow=8)
            save_image(unnormalize_img(outputs["imgs_aug"]), aug_path, nrow=8)

    metric_logger.synchronize_between_processes()
    print("Averaged {} stats:".format('train'), metric_logger)
    return {k: meter.global_avg for k, meter in metric_logger.meters.items()}


@torch.no_grad()
def eval_one_epoch(wam: Wam, val_loader, image_detection_loss, epoch, validation_masks, params, amp_dtype):
    if torch.is_tensor(validation_masks):
        validation_masks = list(torch.unbind(validation_masks, dim=0))

    wam.eval()

    header = 'Val - Epoch: [{}/{}]'.format(epoch, params.epochs)
    metric_logger = ulogger.MetricLogger(delimiter="  ")

    aug_list = wam.augmenter.get_val_augs()

    for it, (imgs, masks) in enumerate(metric_logger.log_every(val_loader, 10, header)):
        imgs = imgs.to(device, non_blocking=True)

        msgs = wam.get_random_msg(imgs.shape[0])  # b x k
        msgs = msgs.to(imgs.device)

        # generate watermarked images
        with torch.autocast('cuda', dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):
            deltas_w = wam.embedder(imgs, msgs)
        imgs_w = wam.scaling_i * imgs + wam.scaling_w * deltas_w.float()
        if wam.attenuation is not None:
            imgs_w = wam.attenuation(imgs, imgs_w)

        log_stats = {
            "psnr": psnr(imgs_w, imgs).mean().item(),
        }

        for mask_id, masks_ in enumerate(validation_masks):
            masks_ = masks_.to(imgs.device).unsqueeze(0).repeat(imgs.shape[0], 1, 1, 1)
            imgs_masked = imgs_w * masks_ + imgs * (1 - masks_)
            for transform, strengths in aug_list:
                for strength in strengths:
                    imgs_aug, masks_aug = transform(imgs_masked, masks_, strength)
                    selected_aug = str(transform.__name__).lower() + '_' + str(strength)
                    preds = wam.detector(imgs_aug)
                    mask_preds = preds[:, 0:1, :, :]
                    bit_preds = preds[:, 1:, :, :]
                    log_stats[f'acc_{selected_aug}_m{mask_id}'] = accuracy(mask_preds, masks_aug).item()
                    log_stats[f'miou_{selected_aug}_m{mask_id}'] = iou(mask_preds, masks_aug, label=1).mean().item()
                    log_stats[f'bit_acc_{selected_aug}_m{mask_id}'] = bit_accuracy(
                        bit_preds, msgs, masks_aug).nanmean().item()

        for name, value in log_stats.items():
            metric_logger.update(**{name: value})

    metric_logger.synchronize_between_processes()
    print("Averaged {} stats:".format('val'), metric_logger)
    return {k: meter.global_avg for k, meter in metric_logger.meters.items()}


if __name__ == '__main__':

    # generate parser / parse parameters
    parser = get_parser()
    params = parser.parse_args()

    # run experiment
    main(params)
