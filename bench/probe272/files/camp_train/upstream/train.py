"""Train CAMP on Flickr30K / MSCOCO precomputed region features.

    python train.py --config experiments/f30k_gate/config.yaml
"""
import argparse
import logging
import os
import pickle
import shutil
import time

import numpy as np
import torch
import torch.backends.cudnn as cudnn
import yaml
from easydict import EasyDict

import data
from model.CAMP import CAMP
from evaluation import i2t, t2i, encode_data, AverageMeter

try:
    from apex import amp
    APEX_AVAILABLE = True
except ImportError:
    amp = None
    APEX_AVAILABLE = False

logger = logging.getLogger(__name__)


def parse_args():
    parser = argparse.ArgumentParser(description='CAMP training')
    parser.add_argument('--config', required=True, help='experiment yaml')
    parser.add_argument('--resume', default='', help='checkpoint to resume from')
    parser.add_argument('--gpu_id', type=int, default=None, help='override the gpu in the config')
    parser.add_argument('--fp16', action='store_true', help='mixed precision with apex O1')
    return parser.parse_args()


def load_config(args):
    with open(args.config) as f:
        cfg = EasyDict(yaml.safe_load(f))
    if args.gpu_id is not None:
        cfg.gpu_id = args.gpu_id
    cfg.fp16 = args.fp16 or cfg.get('fp16', False)
    cfg.resume = args.resume
    cfg.exp_dir = os.path.dirname(args.config)
    return cfg


def main():
    args = parse_args()
    opt = load_config(args)

    logging.basicConfig(format='%(asctime)s %(levelname)s %(message)s', level=logging.INFO,
                        handlers=[logging.StreamHandler(),
                                  logging.FileHandler(os.path.join(opt.exp_dir, 'train.log'))])
    logger.info(opt)

    np.random.seed(opt.seed)
    torch.manual_seed(opt.seed)
    torch.cuda.manual_seed(opt.seed)
    torch.cuda.set_device(opt.gpu_id)
    cudnn.benchmark = True

    with open(os.path.join(opt.vocab_path, '%s_vocab.pkl' % opt.data_name), 'rb') as f:
        vocab = pickle.load(f)
    opt.vocab_size = len(vocab)

    train_loader, val_loader = data.get_loaders(opt.data_name, vocab, opt.batch_size, opt.workers, opt)

    model = CAMP(opt)
    model = model.cuda()

    optimizer = torch.optim.Adam(model.parameters(), lr=opt.learning_rate)
    if opt.fp16:
        if not APEX_AVAILABLE:
            logger.warning('apex is not installed, falling back to fp32 training')
            opt.fp16 = False
        else:
            model, optimizer = amp.initialize(model, optimizer, opt_level='O1')

    start_epoch, best_rsum = 0, 0
    if opt.resume and os.path.isfile(opt.resume):
        ckpt = torch.load(opt.resume, map_location='cuda:{}'.format(opt.gpu_id))
        model.load_state_dict(ckpt['model'])
        optimizer.load_state_dict(ckpt['optimizer'])
        start_epoch, best_rsum = ckpt['epoch'], ckpt['best_rsum']
        logger.info('resumed from %s (epoch %d, rsum %.2f)', opt.resume, start_epoch, best_rsum)

    for epoch in range(start_epoch, opt.num_epochs):
        adjust_learning_rate(opt, optimizer, epoch)
        train_one_epoch(opt, train_loader, model, optimizer, epoch)
        rsum = validate(opt, val_loader, model)

        is_best = rsum > best_rsum
        best_rsum = max(rsum, best_rsum)
        state = {'epoch': epoch + 1, 'model': model.state_dict(), 'optimizer': optimizer.state_dict(),
                 'best_rsum': best_rsum, 'opt': dict(opt)}
        save_checkpoint(state, is_best, opt.exp_dir)


def train_one_epoch(opt, train_loader, model, optimizer, epoch):
    batch_time, data_time, losses = AverageMeter(), AverageMeter(), AverageMeter()
    model.train()
    end = time.time()
    for i, (images, captions, lengths, ids) in enumerate(train_loader):
        data_time.update(time.time() - end)

        loss, _ = model(images, captions, lengths)

        optimizer.zero_grad()
        if opt.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        if opt.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), opt.grad_clip)
        optimizer.step()

        losses.update(loss.item(), images.size(0))
        batch_time.update(time.time() - end)
        end = time.time()

        if i % opt.log_step == 0:
            logger.info('Epoch [%d][%d/%d] loss %.4f (%.4f) time %.3f data %.3f mem %.0fMB',
                        epoch, i, len(train_loader), losses.val, losses.avg,
                        batch_time.avg, data_time.avg,
                        torch.cuda.memory_allocated(opt.gpu_id) / 2 ** 20)


def validate(opt, val_loader, model):
    model.eval()
    img_embs, cap_embs, cap_lens = encode_data(model, val_loader)
    img_embs = img_embs[::5]
    start = time.time()
    sims = model.score_shards(img_embs, cap_embs, cap_lens, shard_size=opt.eval_shard)
    logger.info('similarity computed in %.1fs', time.time() - start)
    r1, r5, r10, medr, meanr = i2t(len(img_embs), sims)
    r1i, r5i, r10i, medri, meanri = t2i(len(img_embs), sims)
    logger.info('i2t %.1f %.1f %.1f | t2i %.1f %.1f %.1f', r1, r5, r10, r1i, r5i, r10i)
    return r1 + r5 + r10 + r1i + r5i + r10i


def save_checkpoint(state, is_best, exp_dir):
    path = os.path.join(exp_dir, 'checkpoint.pth.tar')
    torch.save(state, path)
    if is_best:
        shutil.copyfile(path, os.path.join(exp_dir, 'model_best.pth.tar'))


def adjust_learning_rate(opt, optimizer, epoch):
    lr = opt.learning_rate * (0.1 ** (epoch // opt.lr_update))
    for group in optimizer.param_groups:
        group['lr'] = lr


if __name__ == '__main__':
    main()
