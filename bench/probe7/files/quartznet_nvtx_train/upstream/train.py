# QuartzNet / Jasper CTC acoustic model training (DeepLearningExamples-style script).
#
# Profiling: run under `nsys profile -c cudaProfilerApi --capture-range-end=stop` with
# --prof_start/--prof_stop to restrict the capture to a window of steps; NVTX ranges mark
# data / forward / backward / step inside each iteration.
import argparse
import copy
import os
import random
import time

import numpy as np
import torch
import torch.distributed as dist
from apex import amp
from apex.optimizers import FusedLAMB, FusedNovoGrad
from contextlib import suppress as empty_context

from common import helpers
from common.dataset import AudioDataset, get_data_loader
from common.features import FilterbankFeatures, SpecAugment
from common.helpers import Checkpointer, greedy_wer, num_weights, print_once, process_evaluation_epoch
from common.optimizers import lr_policy
from common.tb_dllogger import flush_log, init_log, log
from quartznet import config
from quartznet.model import CTCLossNM, GreedyCTCDecoder, QuartzNet


def parse_args():
    parser = argparse.ArgumentParser(description='QuartzNet')

    training = parser.add_argument_group('training setup')
    training.add_argument('--epochs', default=400, type=int)
    training.add_argument('--cudnn_benchmark', action='store_true', default=True)
    training.add_argument('--amp', '--fp16', action='store_true', default=False)
    training.add_argument('--seed', default=42, type=int)
    training.add_argument('--local_rank', '--local-rank', default=os.getenv('LOCAL_RANK', 0), type=int)
    training.add_argument('--prof_start', default=-1, type=int, help='step at which cudaProfilerStart is called')
    training.add_argument('--prof_stop', default=-1, type=int, help='step at which cudaProfilerStop is called')
    training.add_argument('--nvtx', action='store_true', help='emit NVTX ranges for nsys')

    optim = parser.add_argument_group('optimization setup')
    optim.add_argument('--batch_size', default=32, type=int)
    optim.add_argument('--lr', default=1e-3, type=float)
    optim.add_argument('--min_lr', default=1e-5, type=float)
    optim.add_argument('--lr_policy', default='exponential', type=str, choices=['exponential', 'legacy'])
    optim.add_argument('--warmup_epochs', default=0, type=int)
    optim.add_argument('--weight_decay', default=1e-3, type=float)
    optim.add_argument('--grad_accumulation_steps', default=1, type=int)
    optim.add_argument('--optimizer', default='novograd', type=str, choices=['novograd', 'adamw', 'lamb'])
    optim.add_argument('--clip_norm', default=None, type=float)
    optim.add_argument('--beta1', default=0.95, type=float)
    optim.add_argument('--beta2', default=0.5, type=float)

    io = parser.add_argument_group('feature and checkpointing setup')
    io.add_argument('--dali_device', type=str, choices=['none', 'cpu', 'gpu'], default='none')
    io.add_argument('--output_dir', type=str, required=True)
    io.add_argument('--log_frequency', default=25, type=int)
    io.add_argument('--val_frequency', default=1, type=int)
    io.add_argument('--model_config', type=str, required=True)
    io.add_argument('--dataset_dir', required=True, type=str)
    io.add_argument('--train_manifests', type=str, required=True, nargs='+')
    io.add_argument('--val_manifests', type=str, required=True, nargs='+')
    return parser.parse_args()


def reduce_tensor(tensor, num_gpus):
    rt = tensor.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    return rt.true_divide(num_gpus)


def nvtx_push(args, name):
    if args.nvtx:
        torch.cuda.nvtx.range_push(name)


def nvtx_pop(args):
    if args.nvtx:
        torch.cuda.nvtx.range_pop()


@torch.no_grad()
def evaluate(epoch, step, val_loader, val_feat_proc, labels, model, ctc_loss, greedy_decoder, use_amp):
    model.eval()
    agg = {'losses': [], 'preds': [], 'txts': []}
    for batch in val_loader:
        audio, audio_lens, txt, txt_lens = [t.cuda(non_blocking=True) for t in batch]
        feats, feat_lens = val_feat_proc(audio, audio_lens)
        with torch.cuda.amp.autocast(enabled=use_amp):
            log_probs, enc_lens = model(feats, feat_lens)
            loss = ctc_loss(log_probs, txt, enc_lens, txt_lens)
        pred = greedy_decoder(log_probs)
        agg['losses'] += helpers.gather_losses([loss])
        agg['preds'] += helpers.gather_predictions([pred], labels)
        agg['txts'] += helpers.gather_transcripts([txt], [txt_lens], labels)
    wer, loss = process_evaluation_epoch(agg)
    log((epoch,), step, 'dev_ema', {'loss': loss, 'wer': 100.0 * wer})
    model.train()
    return wer


def main():
    args = parse_args()

    assert torch.cuda.is_available()
    assert args.prof_start < args.prof_stop or args.prof_stop == -1

    torch.backends.cudnn.benchmark = args.cudnn_benchmark

    # set up distributed training
    multi_gpu = int(os.environ.get('WORLD_SIZE', 1)) > 1
    if multi_gpu:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group(backend='nccl', init_method='env://')
        world_size = dist.get_world_size()
        print_once(f'Distributed training with {world_size} GPUs\n')
    else:
        world_size = 1

    torch.manual_seed(args.seed + args.local_rank)
    np.random.seed(args.seed + args.local_rank)
    random.seed(args.seed + args.local_rank)

    init_log(args)

    cfg = config.load(args.model_config)
    config.apply_config_overrides(cfg, args)

    symbols = helpers.add_ctc_blank(cfg['labels'])
    assert args.grad_accumulation_steps >= 1
    batch_size = args.batch_size // args.grad_accumulation_steps

    print_once('Setting up datasets...')
    train_dataset_kw, train_features_kw = config.input(cfg, 'train')
    val_dataset_kw, val_features_kw = config.input(cfg, 'val')

    train_loader = get_data_loader(AudioDataset(args.dataset_dir, args.train_manifests, symbols, **train_dataset_kw),
                                   batch_size, multi_gpu=multi_gpu, shuffle=True, num_workers=4)
    val_loader = get_data_loader(AudioDataset(args.dataset_dir, args.val_manifests, symbols, **val_dataset_kw),
                                 batch_size, multi_gpu=multi_gpu, shuffle=False, num_workers=4, drop_last=False)

    train_feat_proc = torch.nn.Sequential(FilterbankFeatures(**train_features_kw), SpecAugment(**cfg['spec_augment']))
    val_feat_proc = FilterbankFeatures(**val_features_kw)
    train_feat_proc.cuda()
    val_feat_proc.cuda()

    steps_per_epoch = len(train_loader) // args.grad_accumulation_steps

    # set up the model
    model = QuartzNet(encoder_kw=config.encoder(cfg), decoder_kw=config.decoder(cfg, n_classes=len(symbols)))
    model.cuda()
    ctc_loss = CTCLossNM(n_classes=len(symbols))
    greedy_decoder = GreedyCTCDecoder()

    print_once(f'Model size: {num_weights(model) / 10**6:.1f}M params\n')

    # optimization
    kw = {'lr': args.lr, 'weight_decay': args.weight_decay}
    if args.optimizer == 'novograd':
        optimizer = FusedNovoGrad(model.parameters(), betas=(args.beta1, args.beta2), **kw)
    elif args.optimizer == 'adamw':
        optimizer = torch.optim.AdamW(model.parameters(), betas=(args.beta1, args.beta2), **kw)
    elif args.optimizer == 'lamb':
        optimizer = FusedLAMB(model.parameters(), betas=(args.beta1, args.beta2), **kw)
    else:
        raise ValueError(f'Invalid optimizer "{args.optimizer}"')

    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    adjust_lr = lambda step, epoch, optimizer: lr_policy(
        step, epoch, args.lr, optimizer, steps_per_epoch=steps_per_epoch,
        warmup_epochs=args.warmup_epochs, num_epochs=args.epochs, policy=args.lr_policy, min_lr=args.min_lr)

    if multi_gpu:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank],
                                                          output_device=args.local_rank)

    checkpointer = Checkpointer(args.output_dir, 'QuartzNet', [], args.amp)
    meta = {'best_wer': 10 ** 6, 'start_epoch': 0}
    epoch = 1
    step = 1
    bmark_stats = {'step_times': [], 'epoch_times': []}

    for epoch in range(meta['start_epoch'] + 1, args.epochs + 1):
        if multi_gpu:
            train_loader.sampler.set_epoch(epoch)
        epoch_utts = 0
        epoch_loss = 0
        accumulated_batches = 0
        epoch_start_time = time.time()
        step_start_time = time.time()

        for batch in train_loader:
            if step == args.prof_start:
                torch.cuda.profiler.start()
            if step == args.prof_stop:
                torch.cuda.profiler.stop()

            if accumulated_batches == 0:
                step_loss = 0
                step_utts = 0
                step_start_time = time.time()

            nvtx_push(args, 'data')
            audio, audio_lens, txt, txt_lens = [t.cuda(non_blocking=True) for t in batch]  # train batch
            feats, feat_lens = train_feat_proc(audio, audio_lens)
            nvtx_pop(args)

            nvtx_push(args, 'forward')
            with torch.cuda.amp.autocast(enabled=args.amp):
                log_probs, enc_lens = model(feats, feat_lens)
                loss = ctc_loss(log_probs, txt, enc_lens, txt_lens)
                loss /= args.grad_accumulation_steps
            nvtx_pop(args)

            if multi_gpu:
                reduced_loss = reduce_tensor(loss.data, world_size)
            else:
                reduced_loss = loss

            if torch.isnan(reduced_loss).any():
                print_once('WARNING: loss is NaN; skipping update')
                continue
            step_loss += reduced_loss.item()
            step_utts += batch[0].size(0) * world_size
            epoch_utts += batch[0].size(0) * world_size
            accumulated_batches += 1

            nvtx_push(args, 'backward')
            scaler.scale(loss).backward()
            nvtx_pop(args)

            if accumulated_batches % args.grad_accumulation_steps == 0:
                nvtx_push(args, 'step')
                adjust_lr(step, epoch, optimizer)
                if args.clip_norm is not None:
                    scaler.unscale_(optimizer)
                    torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_norm)
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad(set_to_none=True)
                nvtx_pop(args)

                epoch_loss += step_loss
                torch.cuda.synchronize()
                step_time = time.time() - step_start_time
                bmark_stats['step_times'].append(step_time)
                if step % args.log_frequency == 0:
                    log((epoch, step % steps_per_epoch or steps_per_epoch, steps_per_epoch), step, 'train',
                        {'loss': step_loss, 'throughput': step_utts / step_time, 'took': step_time,
                         'lrate': optimizer.param_groups[0]['lr'],
                         'mem_gb': torch.cuda.max_memory_allocated() / 2 ** 30})
                step += 1
                accumulated_batches = 0

        epoch_time = time.time() - epoch_start_time
        bmark_stats['epoch_times'].append(epoch_time)
        log((epoch,), None, 'train_avg', {'throughput': epoch_utts / epoch_time, 'loss': epoch_loss / steps_per_epoch})

        if epoch % args.val_frequency == 0:
            wer = evaluate(epoch, step, val_loader, val_feat_proc, symbols, model, ctc_loss, greedy_decoder, args.amp)
            if wer < meta['best_wer']:
                meta['best_wer'] = wer
                checkpointer.save(model, None, optimizer, scaler, epoch, step, meta, is_best=True)

    flush_log()


if __name__ == "__main__":
    main()
