#!/usr/bin/env python3
# coding: utf-8
# @Author  : Xinhao Mei @CVSSP, University of Surrey
# @E-mail  : x.mei@surrey.ac.uk

import argparse
import platform
import time
from pprint import PrettyPrinter

import ruamel.yaml as yaml
import torch
import wandb
from loguru import logger
from tqdm import tqdm
from warmup_scheduler import GradualWarmupScheduler

from data_handling.datamodule import AudioCaptionDataModule
from models.bart_captioning import BartCaptionModel
from pretrain import get_optimizer, cosine_lr
from tools.utils import setup_seed, set_logger, AverageMeter, decode_output
from eval_metrics import evaluate_metrics


def train(model, dataloader, optimizer, scheduler, device, epoch, scaler=None, use_amp=False):
    model.train()

    epoch_loss = AverageMeter()
    start_time = time.time()

    for batch_id, (audio, text, audio_names, _) in tqdm(enumerate(dataloader), total=len(dataloader)):

        optimizer.zero_grad()

        step = len(dataloader) * (epoch - 1) + batch_id
        if scheduler is not None:
            scheduler(step)

        audio = audio.to(device, non_blocking=True)

        with torch.cuda.amp.autocast(enabled=use_amp):
            loss = model(audio, text)

        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=2.0)
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=2.0)
            optimizer.step()

        epoch_loss.update(loss.cpu().item())

    elapsed_time = time.time() - start_time

    wandb.log({"loss": epoch_loss.avg,
               "epoch": epoch})

    return {
        "loss": epoch_loss.avg,
        "time": elapsed_time
    }


@torch.no_grad()
def validate(data_loader, model, device, log_dir, epoch, beam_size):
    model.eval()
    y_hat_all = []
    ref_captions_dict = []
    file_names_all = []
    start_time = time.time()

    for i, batch_data in tqdm(enumerate(data_loader), total=len(data_loader)):
        audios, caption_dict, audio_names, audio_ids = batch_data
        # move data to GPU
        audios = audios.to(device)

        output = model.generate(samples=audios,
                                num_beams=beam_size)

        y_hat_all.extend(output)
        ref_captions_dict.extend(caption_dict)
        file_names_all.extend(audio_names)

    captions_pred, captions_gt = decode_output(y_hat_all, ref_captions_dict, file_names_all,
                                              log_dir, epoch, beam_size=beam_size)
    metrics = evaluate_metrics(captions_pred, captions_gt)

    spider = metrics['spider']['score']
    cider = metrics['cider']['score']

    eval_time = time.time() - start_time

    wandb.log({f"{log_dir.split('/')[-2]}/spider_beam_{beam_size}": spider,
               f"{log_dir.split('/')[-2]}/cider_beam_{beam_size}": cider,
               "epoch": epoch})

    return {
        "cider": cider,
        "spider": spider,
        "metrics": metrics,
        "time": eval_time
    }


def main():
    parser = argparse.ArgumentParser(description='Settings.')
    parser.add_argument('-n', '--exp_name', default='exp_name', type=str,
                        help='Name of the experiment.')
    parser.add_argument('-c', '--config', default='settings/settings.yaml', type=str,
                        help='Name of the setting file.')
    parser.add_argument('-l', '--lr', default=1e-05, type=float,
                        help='Learning rate.')
    parser.add_argument('-s', '--seed', default=20, type=int,
                        help='Training seed.')

    args = parser.parse_args()

    exp_name = args.exp_name

    with open(args.config, 'r') as f:
        config = yaml.safe_load(f)

    config["exp_name"] = args.exp_name
    config["seed"] = args.seed
    config["optim_args"]["lr"] = args.lr
    seed = config["seed"]
    setup_seed(seed)

    exp_name = exp_name + f"_lr_{args.lr}_seed_{seed}"

    wandb.init(
        project="audio-captioning",
        name=exp_name,
        config=config
    )

    model_output_dir, log_output_dir = set_logger(exp_name)

    main_logger = logger.bind(indent=1)

    device, device_name = (torch.device('cuda'), torch.cuda.get_device_name(torch.cuda.current_device())) \
        if torch.cuda.is_available() else (torch.device('cpu'), platform.processor())
    main_logger.info(f'Process on {device_name}')

    # data loading
    datamodule = AudioCaptionDataModule(config, config["data_args"]["dataset"])
    train_loader = datamodule.train_dataloader(is_distributed=False)
    val_loader = datamodule.val_dataloader()
    test_loader = datamodule.test_dataloader()

    model = BartCaptionModel(config)
    model = model.to(device)

    if config["pretrain"]:
        pretrain_checkpoint = torch.load(config["pretrain_path"])
        model.load_state_dict(pretrain_checkpoint["model"])
        main_logger.info(f"Loaded weights from {config['pretrain_path']}")

    # print training settings
    printer = PrettyPrinter()
    main_logger.info('Training setting:\n'
                     f'{printer.pformat(config)}')

    main_logger.info(f'Total numer of parameters: {sum([i.numel() for i in model.parameters()])}')
    main_logger.info(f'Size of training set: {len(train_loader.dataset)}, size of batches: {len(train_loader)}')
    main_logger.info(f'Size of validation set: {len(val_loader.dataset)}, size of batches: {len(val_loader)}')
    main_logger.info(f'Size of test set: {len(test_loader.dataset)}, size of batches: {len(test_loader)}')

    # set up optimizer and loss
    optimizer = get_optimizer(model.parameters(),
                              lr=config["optim_args"]["lr"],
                              betas=config["optim_args"]["betas"],
                              eps=config["optim_args"]["eps"],
                              momentum=config["optim_args"]["momentum"],
                              weight_decay=config["optim_args"]["weight_decay"],
                              optimizer_name=config["optim_args"]["optimizer_name"])
    # scheduler = None
    scheduler = cosine_lr(optimizer,
                          base_lr=config["optim_args"]["lr"],
                          warmup_length=config["optim_args"]["warmup_epochs"] * len(train_loader),
                          steps=len(train_loader) * config["training"]["epochs"])

    use_amp = config["training"].get("amp", False)
    scaler = torch.cuda.amp.GradScaler() if use_amp else None

    main_logger.info(f'Size of training set: {len(train_loader.dataset)}, size of batches: {len(train_loader)}')

    loss_stats = []
    spiders = []

    for epoch in range(1, config["training"]["epochs"] + 1):
        main_logger.info(f'Training for epoch [{epoch}]')

        train_statics = train(model, train_loader, optimizer, scheduler, device, epoch,
                              scaler=scaler, use_amp=use_amp)
        loss = train_statics["loss"]
        elapsed_time = train_statics["time"]
        loss_stats.append(loss)

        main_logger.info(f'Training statistics:\tloss for epoch [{epoch}]: {loss:.3f},'
                         f'\ttime: {elapsed_time:.1f}, lr: {optimizer.param_groups[0]["lr"]:.6f}.')

        # validation
        if epoch >= 5:
            metrics = validate(val_loader, model, device, log_output_dir, epoch, beam_size=3)
            spiders.append(metrics["spider"])
            main_logger.info(f'Validation statistics:\tspider for epoch [{epoch}]: {metrics["spider"]:.3f},'
                             f'\ttime: {metrics["time"]:.1f}.')
            if metrics["spider"] >= max(spiders):
                torch.save({
                    "model": model.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "epoch": epoch,
                    "config": config,
                }, str(model_output_dir) + '/best_model.pt')

    # Training done, evaluate on evaluation set
    main_logger.info('Training done. Start evaluating.')
    best_checkpoint_path = str(model_output_dir) + '/best_model.pt'
    state_dict = torch.load(best_checkpoint_path)["model"]
    model.load_state_dict(state_dict)
    main_logger.info(f'Best checkpoint occurred in {state_dict.get("epoch", "?")} th epoch.')
    for i in range(1, 4):
        test_metrics = validate(test_loader, model, device, log_output_dir, epoch, beam_size=i)
        main_logger.info(f'Evaluation statistics:\tspider: {test_metrics["spider"]:.3f},'
                         f'\tbeam_size: {i}, time: {test_metrics["time"]:.1f}.')
    main_logger.info('Evaluation done.')
    wandb.finish()


if __name__ == '__main__':
    main()
