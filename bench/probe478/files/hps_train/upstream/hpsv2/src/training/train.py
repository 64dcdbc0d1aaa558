import json
import logging
import math
import os
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch.nn.parallel.distributed import DistributedDataParallel

try:
    import wandb
except ImportError:
    wandb = None

from hpsv2.src.open_clip import get_cast_dtype, PreferenceLoss, RankingLoss
from .distributed import is_master
from .precision import get_autocast


class AverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def unwrap_model(model):
    if hasattr(model, 'module'):
        return model.module
    else:
        return model


def backward(total_loss, scaler):
    if scaler is not None:
        scaler.scale(total_loss).backward()
    else:
        total_loss.backward()


def calc_ImageReward(pred, gt):
    # number of correctly ordered pairs over all pairs
    tol_cnt = 0.
    true_cnt = 0.
    for i in range(len(gt)):
        for j in range(i + 1, len(gt)):
            if gt[i] > gt[j]:
                tol_cnt += 1
                if pred[i] > pred[j]:
                    true_cnt += 1
            elif gt[i] < gt[j]:
                tol_cnt += 1
                if pred[i] < pred[j]:
                    true_cnt += 1
    return true_cnt / tol_cnt if tol_cnt > 0 else 0.


def inversion_score(p1, p2):
    assert len(p1) == len(p2), f'{len(p1)}, {len(p2)}'
    n = len(p1)
    cnt = 0
    for i in range(n - 1):
        for j in range(i + 1, n):
            if p1[i] > p1[j] and p2[i] < p2[j]:
                cnt += 1
            elif p1[i] < p1[j] and p2[i] > p2[j]:
                cnt += 1

    return 1 - cnt / (n * (n - 1) / 2)


def train_iters(model, data, iterations, loss, optimizer, scaler, scheduler, args, tb_writer=None):
    device = torch.device(args.device)
    autocast = get_autocast(args.precision)
    cast_dtype = get_cast_dtype(args.precision)

    model.train()
    preference_loss = PreferenceLoss()
    ranking_loss = RankingLoss()

    dataloader = data['train'].dataloader
    data_iter = iter(dataloader)

    losses_m = {}
    batch_time_m = AverageMeter()
    data_time_m = AverageMeter()
    end = time.time()
    for step in range(iterations, args.iterations):
        if not args.skip_scheduler:
            scheduler(step)

        try:
            batch, data_type = next(data_iter)
        except StopIteration:
            data_iter = iter(dataloader)
            batch, data_type = next(data_iter)

        data_time_m.update(time.time() - end)
        optimizer.zero_grad()

        if data_type == 'preference':
            images, num_images, labels, texts = batch
            images = images.to(device=device, dtype=cast_dtype, non_blocking=True)
            texts = texts.to(device=device, non_blocking=True)
            num_images = num_images.to(device=device, non_blocking=True)
            labels = labels.to(device=device, non_blocking=True)

            with autocast():
                outputs = model(images, texts)
                image_features, text_features, logit_scale = \
                    outputs["image_features"], outputs["text_features"], outputs["logit_scale"]
                total_loss = preference_loss(image_features, text_features, logit_scale, num_images, labels)
        elif data_type == 'ranking':
            images, num_images, labels, texts = batch
            images = images.to(device=device, dtype=cast_dtype, non_blocking=True)
            texts = texts.to(device=device, non_blocking=True)
            num_images = num_images.to(device=device, non_blocking=True)
            labels = labels.to(device=device, non_blocking=True)

            with autocast():
                outputs = model(images, texts)
                image_features, text_features, logit_scale = \
                    outputs["image_features"], outputs["text_features"], outputs["logit_scale"]
                total_loss = ranking_loss(image_features, text_features, args.logit_scale, num_images, labels)
        else:
            raise ValueError(f'unknown data type {data_type}')

        backward(total_loss, scaler)

        if scaler is not None:
            if args.horovod:
                optimizer.synchronize()
                scaler.unscale_(optimizer)
                if args.grad_clip_norm is not None:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip_norm, norm_type=2.0)
                with optimizer.skip_synchronize():
                    scaler.step(optimizer)
            else:
                if args.grad_clip_norm is not None:
                    scaler.unscale_(optimizer)
                    torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip_norm, norm_type=2.0)
                scaler.step(optimizer)
            scaler.update()
        else:
            if args.grad_clip_norm is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip_norm, norm_type=2.0)
            optimizer.step()

        # Note: we clamp to 4.6052 = ln(100), as in the original paper.
        with torch.no_grad():
            unwrap_model(model).logit_scale.clamp_(0, math.log(100))

        batch_time_m.update(time.time() - end)
        end = time.time()

        if is_master(args) and (step % 50 == 0 or step == args.iterations - 1):
            loss_name = f'{data_type}_loss'
            if loss_name not in losses_m:
                losses_m[loss_name] = AverageMeter()
            losses_m[loss_name].update(total_loss.item(), images.shape[0])
            logit_scale_scalar = logit_scale.item()
            loss_log = " ".join([f"{k}: {v.val:#.5g} ({v.avg:#.5g})" for k, v in losses_m.items()])
            samples_per_second = args.batch_size * args.world_size / batch_time_m.val
            logging.info(
                f"Train iteration: {step} "
                f"Data (t): {data_time_m.avg:.3f} "
                f"Batch (t): {batch_time_m.avg:.3f}, {samples_per_second:#g}/s "
                f"LR: {optimizer.param_groups[0]['lr']:5f} "
                f"Logit Scale: {logit_scale_scalar:.3f} " + loss_log
            )

            log_data = {
                "data_time": data_time_m.val,
                "batch_time": batch_time_m.val,
                "samples_per_second": samples_per_second,
                "scale": logit_scale_scalar,
                "lr": optimizer.param_groups[0]["lr"],
            }
            log_data.update({name: val.val for name, val in losses_m.items()})

            for name, val in log_data.items():
                name = "train/" + name
                if tb_writer is not None:
                    tb_writer.add_scalar(name, val, step)
                if args.wandb:
                    assert wandb is not None, 'Please install wandb.'
                    wandb.log({name: val, 'step': step})

            batch_time_m.reset()
            data_time_m.reset()

        if (step + 1) % args.val_frequency == 0 and 'val' in data:
            evaluate_preference(model, data, step, args, tb_writer)
            model.train()

        if args.save_logs and (step + 1) % args.save_frequency == 0:
            checkpoint_dict = {
                "epoch": step + 1,
                "name": args.name,
                "state_dict": model.state_dict(),
                "optimizer": optimizer.state_dict(),
            }
            if scaler is not None:
                checkpoint_dict["scaler"] = scaler.state_dict()
            torch.save(checkpoint_dict, os.path.join(args.checkpoint_path, f"iter_{step + 1}.pt"))
            if args.save_most_recent:
                torch.save(checkpoint_dict, os.path.join(args.checkpoint_path, "epoch_latest.pt"))


def evaluate_preference(model, data, step, args, tb_writer=None):
    if not is_master(args):
        return {}
    device = torch.device(args.device)
    model.eval()

    autocast = get_autocast(args.precision)
    cast_dtype = get_cast_dtype(args.precision)

    dataloader = data['val'].dataloader
    total = 0
    correct = 0
    with torch.no_grad():
        for i, batch in enumerate(dataloader):
            images, num_images, labels, texts = batch
            images = images.to(device=device, dtype=cast_dtype, non_blocking=True)
            texts = texts.to(device=device, non_blocking=True)
            num_images = num_images.to(device=device, non_blocking=True)
            labels = labels.to(device=device, non_blocking=True)

            with autocast():
                outputs = model(images, texts)
                image_features, text_features, logit_scale = \
                    outputs["image_features"], outputs["text_features"], outputs["logit_scale"]
                logits_per_image = logit_scale * image_features @ text_features.T
                paired_logits_list = [logit[:, i] for i, logit in enumerate(logits_per_image.split(num_images.tolist()))]

            predicted = torch.tensor([k.argmax().item() for k in paired_logits_list])
            labels = torch.tensor([label.argmax().item() for label in labels.split(num_images.tolist())])
            correct += (predicted == labels).sum().item()
            total += predicted.shape[0]

    accuracy = correct / max(total, 1)
    logging.info(f"Eval iteration: {step} preference_acc: {accuracy:.4f}")
    if tb_writer is not None:
        tb_writer.add_scalar("val/preference_acc", accuracy, step)
    if args.wandb:
        wandb.log({"val/preference_acc": accuracy, 'step': step})
    return {"preference_acc": accuracy}


def evaluate_ranking(model, data, step, args, tb_writer=None):
    if not is_master(args):
        return {}
    device = torch.device(args.device)
    model.eval()
    autocast = get_autocast(args.precision)
    dataloader = data['rank'].dataloader
    score = 0
    total = 0
    with torch.no_grad():
        for batch in dataloader:
            images, num_images, labels, texts = batch
            images = images.to(device=device, non_blocking=True)
            texts = texts.to(device=device, non_blocking=True)
            with autocast():
                outputs = model(images, texts)
                logits = outputs["logit_scale"] * outputs["image_features"] @ outputs["text_features"].T
                paired = [logit[:, i] for i, logit in enumerate(logits.split(num_images.tolist()))]
            predicted = [torch.argsort(-k) for k in paired]
            ranking = [[predicted[i].tolist().index(j) for j in range(n)] for i, n in enumerate(num_images)]
            gts = [label for label in labels.split(num_images.tolist())]
            score += sum(inversion_score(ranking[i], gts[i]) for i in range(len(ranking)))
            total += len(ranking)
    acc = score / max(total, 1)
    logging.info(f"Eval iteration: {step} ranking_acc: {acc:.4f}")
    if tb_writer is not None:
        tb_writer.add_scalar("val/ranking_acc", acc, step)
    return {"ranking_acc": acc}
