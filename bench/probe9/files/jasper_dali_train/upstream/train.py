# Copyright (c) 2019, NVIDIA CORPORATION. All rights reserved.
# Licensed under the Apache License, Version 2.0
"""Jasper / QuartzNet CTC speech recognition training (DeepLearningExamples layout, single file)."""
import argparse
import copy
import os
import random
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

import amp_C
from apex import amp
from apex.multi_tensor_apply import multi_tensor_applier
from apex.optimizers import FusedLAMB, FusedNovoGrad

from common.dali.data_loader import DaliDataLoader
from common.dataset import AudioDataset, get_data_loader
from common.features import FilterbankFeatures
from common.helpers import print_once, greedy_wer, Checkpointer
from common.text import Tokenizer


# ----------------------------------------------------------------------------- model
class MaskedConv1d(nn.Conv1d):
    def __init__(self, *args, use_mask=True, **kwargs):
        super().__init__(*args, **kwargs)
        self.use_mask = use_mask

    def get_seq_len(self, lens):
        return ((lens + 2 * self.padding[0] - self.dilation[0] * (self.kernel_size[0] - 1) - 1)
                // self.stride[0] + 1)

    def forward(self, x, x_lens=None):
        if self.use_mask:
            max_len = x.size(2)
            idxs = torch.arange(max_len, dtype=x_lens.dtype, device=x_lens.device)
            mask = idxs.expand(x_lens.size(0), max_len) >= x_lens.unsqueeze(1)
            x = x.masked_fill(mask.unsqueeze(1), 0)
            x_lens = self.get_seq_len(x_lens)
        return super().forward(x), x_lens


class JasperBlock(nn.Module):
    def __init__(self, infilters, filters, repeat=3, kernel_size=11, stride=1, dilation=1, dropout=0.2,
                 residual=True, separable=False):
        super().__init__()
        padding = dilation * kernel_size // 2
        self.convs = nn.ModuleList()
        self.bns = nn.ModuleList()
        in_f = infilters
        for i in range(repeat):
            groups = in_f if separable else 1
            self.convs.append(MaskedConv1d(in_f, filters, kernel_size, stride=stride, padding=padding,
                                           dilation=dilation, groups=groups, bias=False))
            self.bns.append(nn.BatchNorm1d(filters, eps=1e-3, momentum=0.1))
            in_f = filters
        self.dropout = nn.Dropout(dropout)
        self.res = nn.ModuleList([MaskedConv1d(infilters, filters, 1, bias=False),
                                  nn.BatchNorm1d(filters, eps=1e-3, momentum=0.1)]) if residual else None

    def forward(self, x, x_lens):
        out, lens = x, x_lens
        for i, (conv, bn) in enumerate(zip(self.convs, self.bns)):
            out, lens = conv(out, lens)
            out = bn(out)
            if i < len(self.convs) - 1:
                out = self.dropout(F.relu(out))
        if self.res is not None:
            r, _ = self.res[0](x, x_lens)
            out = out + self.res[1](r)
        return self.dropout(F.relu(out)), lens


class Jasper(nn.Module):
    def __init__(self, n_feats=64, n_vocab=29, widths=(256, 256, 384, 512, 640, 768, 896, 1024)):
        super().__init__()
        blocks = [JasperBlock(n_feats, widths[0], repeat=1, kernel_size=11, stride=2, residual=False)]
        for a, b in zip(widths[:-1], widths[1:]):
            blocks.append(JasperBlock(a, b, repeat=5, kernel_size=13))
        self.encoder = nn.ModuleList(blocks)
        self.decoder = nn.Conv1d(widths[-1], n_vocab, kernel_size=1, bias=True)

    def forward(self, feats, feat_lens):
        x, lens = feats, feat_lens
        for block in self.encoder:
            x, lens = block(x, lens)
        log_probs = F.log_softmax(self.decoder(x).transpose(1, 2), dim=-1)
        return log_probs, lens


# ----------------------------------------------------------------------------- helpers
def grad_norm(model):
    """L2 norm of all gradients in one multi-tensor launch (cheap enough to log every step)."""
    grads = [p.grad.detach() for p in model.parameters() if p.grad is not None]
    overflow_buf = torch.cuda.IntTensor([0])
    norm, _ = multi_tensor_applier(amp_C.multi_tensor_l2norm, overflow_buf, [grads], False)
    return norm.item()


def init_distributed(args):
    args.world_size = int(os.environ.get('WORLD_SIZE', 1))
    distributed = args.world_size > 1
    if distributed:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group(backend='nccl', init_method='env://')
    return distributed


def parse_args():
    parser = argparse.ArgumentParser(description='Jasper')
    parser.add_argument('--epochs', default=400, type=int)
    parser.add_argument('--batch_size', default=64, type=int)
    parser.add_argument('--lr', default=1e-2, type=float)
    parser.add_argument('--weight_decay', default=1e-3, type=float)
    parser.add_argument('--optimizer', default='novograd', choices=['novograd', 'lamb'])
    parser.add_argument('--amp', action='store_true', help='use mixed precision (apex O1)')
    parser.add_argument('--seed', default=42, type=int)
    parser.add_argument('--cudnn_benchmark', action='store_true', default=True)
    parser.add_argument('--local_rank', default=int(os.environ.get('LOCAL_RANK', 0)), type=int)
    parser.add_argument('--dataset_dir', required=True, type=str)
    parser.add_argument('--train_manifests', type=str, nargs='+', required=True)
    parser.add_argument('--val_manifests', type=str, nargs='+', required=True)
    parser.add_argument('--dali_device', type=str, choices=['none', 'cpu', 'gpu'], default='gpu',
                        help='Use DALI pipeline for fast data processing')
    parser.add_argument('--output_dir', type=str, required=True)
    parser.add_argument('--log_frequency', default=25, type=int)
    return parser.parse_args()


@torch.no_grad()
def evaluate(model, val_loader, feat_proc, tokenizer, use_dali):
    model.eval()
    agg = {'preds': [], 'txts': []}
    for batch in val_loader:
        if use_dali:
            feats, feat_lens, txt, txt_lens = batch
        else:
            audio, audio_lens, txt, txt_lens = [t.cuda(non_blocking=True) for t in batch]
            feats, feat_lens = feat_proc(audio, audio_lens)
        log_probs, _ = model(feats, feat_lens)
        preds = log_probs.argmax(dim=-1)
        agg['preds'] += [tokenizer.detokenize(p) for p in preds.cpu().numpy()]
        agg['txts'] += [tokenizer.detokenize(t[:l]) for t, l in zip(txt.cpu().numpy(), txt_lens.cpu().numpy())]
    model.train()
    wer, _, _ = greedy_wer(agg['preds'], agg['txts'])
    return wer


def main():
    args = parse_args()
    distributed = init_distributed(args)
    torch.backends.cudnn.benchmark = args.cudnn_benchmark
    torch.manual_seed(args.seed + args.local_rank)
    np.random.seed(args.seed + args.local_rank)
    random.seed(args.seed + args.local_rank)

    tokenizer = Tokenizer(charset=list(" abcdefghijklmnopqrstuvwxyz'"))
    use_dali = args.dali_device in ('cpu', 'gpu')
    if use_dali:
        train_loader = DaliDataLoader(gpu_id=args.local_rank, dataset_path=args.dataset_dir,
                                      manifest_filepaths=args.train_manifests, batch_size=args.batch_size,
                                      pipeline_type='train', device_type=args.dali_device, tokenizer=tokenizer)
        val_loader = DaliDataLoader(gpu_id=args.local_rank, dataset_path=args.dataset_dir,
                                    manifest_filepaths=args.val_manifests, batch_size=args.batch_size,
                                    pipeline_type='val', device_type=args.dali_device, tokenizer=tokenizer)
        feat_proc = None
    else:
        train_loader = get_data_loader(AudioDataset(args.dataset_dir, args.train_manifests, tokenizer),
                                       args.batch_size, multi_gpu=distributed, shuffle=True, num_workers=4)
        val_loader = get_data_loader(AudioDataset(args.dataset_dir, args.val_manifests, tokenizer),
                                     args.batch_size, multi_gpu=distributed, shuffle=False, num_workers=4)
        feat_proc = FilterbankFeatures(n_filt=64, dither=1e-5).cuda()

    model = Jasper(n_vocab=tokenizer.num_labels + 1).cuda()
    ctc_loss = nn.CTCLoss(blank=tokenizer.num_labels, reduction='none', zero_infinity=True)

    if args.optimizer == 'novograd':
        optimizer = FusedNovoGrad(model.parameters(), lr=args.lr, betas=(0.95, 0.5), weight_decay=args.weight_decay)
    else:
        optimizer = FusedLAMB(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)

    if args.amp:
        model, optimizer = amp.initialize(model, optimizer, opt_level='O1', max_loss_scale=512.0)
    if distributed:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank],
                                                    output_device=args.local_rank)

    checkpointer = Checkpointer(args.output_dir, 'Jasper')
    step = 0
    for epoch in range(1, args.epochs + 1):
        if distributed and not use_dali:
            train_loader.sampler.set_epoch(epoch)
        epoch_start = time.time()
        for batch in train_loader:
            step += 1
            if use_dali:
                feats, feat_lens, txt, txt_lens = batch
            else:
                audio, audio_lens, txt, txt_lens = [t.cuda(non_blocking=True) for t in batch]  # train
                feats, feat_lens = feat_proc(audio, audio_lens)

            log_probs, enc_lens = model(feats, feat_lens)
            loss = ctc_loss(log_probs.transpose(0, 1).float(), txt, enc_lens, txt_lens).mean()

            optimizer.zero_grad()
            if args.amp:
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            gnorm = grad_norm(model)
            optimizer.step()

            if step % args.log_frequency == 0:
                torch.cuda.synchronize()
                print_once(f'epoch {epoch} step {step} loss {loss.item():.3f} grad-norm {gnorm:.2f} '
                           f'{(time.time() - epoch_start) / step:.3f}s/it')

        wer = evaluate(model, val_loader, feat_proc, tokenizer, use_dali)
        print_once(f'epoch {epoch}: dev WER {100 * wer:.2f}%')
        if not distributed or dist.get_rank() == 0:
            checkpointer.save(model, None, optimizer, epoch, step, {'wer': wer})


if __name__ == '__main__':
    main()
