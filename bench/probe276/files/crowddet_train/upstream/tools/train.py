import os
import sys
import math
import time
import argparse

import numpy as np
from tqdm import tqdm
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

try:
    # optional mixed precision, `pip install` NVIDIA apex from source with --cuda_ext
    from apex import amp
    HAS_APEX = True
except ImportError:
    HAS_APEX = False

sys.path.insert(0, '../lib')
sys.path.insert(0, '../model')
from data.CrowdHuman import CrowdHuman
from utils import misc_utils, SGD_bias


class Train_config():
    # size
    world_size = None
    mini_batch_size = None
    iter_per_epoch = None
    total_epoch = None
    # learning
    warm_iter = None
    learning_rate = None
    momentum = None
    weight_decay = None
    lr_decay = None
    # model
    log_dump_interval = None
    resume_weights = None
    init_weights = None
    model_dir = None
    log_path = None
    # dist
    dist_url = None
    # mixed precision (apex O1)
    fp16 = False


def parse_devices(str_devices):
    """'0-3' -> [0, 1, 2, 3]; '0,2' -> [0, 2]. Used to fill CUDA_VISIBLE_DEVICES."""
    devices = []
    for part in str_devices.split(','):
        part = part.strip()
        if not part:
            continue
        if '-' in part:
            start, end = part.split('-')
            devices.extend(range(int(start), int(end) + 1))
        else:
            devices.append(int(part))
    return devices


def adjust_learning_rate(optimizer, epoch, step, train_config):
    base_lr = train_config.learning_rate
    if epoch == 1 and step < train_config.warm_iter:
        alpha = step / train_config.warm_iter
        lr_new = 0.33 * base_lr + (base_lr - 0.33 * base_lr) * alpha
    else:
        lr_new = base_lr
        for decay_epoch in train_config.lr_decay:
            if epoch >= decay_epoch:
                lr_new = lr_new / 10
    for group in optimizer.param_groups:
        group['lr'] = lr_new
    return lr_new


def do_train_epoch(net, data_iter, optimizer, rank, epoch, train_config):
    if rank == 0:
        fid_log = open(train_config.log_path, 'a')
        pbar = tqdm(total=train_config.iter_per_epoch, ncols=50)
    tic = time.time()
    for (images, gt_boxes, im_info), step in zip(data_iter, range(0, train_config.iter_per_epoch)):
        lr = adjust_learning_rate(optimizer, epoch, step, train_config)
        images = images.cuda(rank)
        gt_boxes = gt_boxes.cuda(rank)
        im_info = im_info.cuda(rank)
        optimizer.zero_grad()
        loss_dict = net(images, im_info, gt_boxes)
        losses = sum([loss_dict[k] for k in loss_dict])
        if not math.isfinite(losses.item()):
            print('Loss is {}, stopping training'.format(losses.item()))
            sys.exit(1)
        if train_config.fp16:
            with amp.scale_loss(losses, optimizer) as scaled_losses:
                scaled_losses.backward()
        else:
            losses.backward()
        optimizer.step()
        if rank == 0:
            pbar.update(1)
            if step % train_config.log_dump_interval == 0:
                elapsed = time.time() - tic
                stat_loss = ' '.join(['{}:{:.4f}'.format(k, v.item()) for k, v in loss_dict.items()])
                line = 'Epoch:{}, iter:{}, lr:{:.5f}, {}, {:.1f}s'.format(
                    epoch, step, lr, stat_loss, elapsed)
                print(line, file=fid_log)
                fid_log.flush()
                tic = time.time()
    if rank == 0:
        pbar.close()
        fid_log.close()


def build_optimizer(net, train_config):
    params = []
    for key, value in net.named_parameters():
        if not value.requires_grad:
            continue
        lr = train_config.learning_rate
        weight_decay = train_config.weight_decay
        if 'bias' in key:
            lr = lr * 2
            weight_decay = 0
        params += [{'params': [value], 'lr': lr, 'weight_decay': weight_decay}]
    optimizer = SGD_bias.SGD(params, lr=train_config.learning_rate,
                             momentum=train_config.momentum,
                             weight_decay=train_config.weight_decay)
    return optimizer


def remove_old_dumps(model_dir, keep_last=5):
    """dump-<epoch>.pth files are ~300MB each, keep the last few only."""
    dumps = [f for f in os.listdir(model_dir) if f.startswith('dump-') and f.endswith('.pth')]
    dumps = sorted(dumps, key=lambda f: int(f[5:-4]))
    for f in dumps[:-keep_last]:
        os.remove(os.path.join(model_dir, f))


def train_worker(rank, train_config, network, config):
    # set the parallel
    torch.cuda.set_device(rank)
    dist.init_process_group(backend='nccl', init_method=train_config.dist_url,
                            world_size=train_config.world_size, rank=rank)
    # initialize model
    net = network()
    # load pretrain model
    backbone_dict = torch.load(train_config.init_weights, map_location='cpu')
    del backbone_dict['state_dict']['fc.weight']
    del backbone_dict['state_dict']['fc.bias']
    net.resnet50.load_state_dict(backbone_dict['state_dict'])
    net.cuda(rank)
    begin_epoch = 1
    # build optimizer
    optimizer = build_optimizer(net, train_config)
    if train_config.resume_weights:
        model_file = os.path.join(train_config.model_dir,
                                  'dump-{}.pth'.format(train_config.resume_weights))
        check_point = torch.load(model_file, map_location=torch.device('cuda', rank))
        net.load_state_dict(check_point['state_dict'])
        begin_epoch = train_config.resume_weights + 1
    if train_config.fp16:
        net, optimizer = amp.initialize(net, optimizer, opt_level='O1', verbosity=0)
    # using distributed data parallel
    net = DDP(net, device_ids=[rank], broadcast_buffers=False)
    # build data provider
    crowdhuman = CrowdHuman(config, if_train=True)
    data_sampler = torch.utils.data.distributed.DistributedSampler(
        crowdhuman, num_replicas=train_config.world_size, rank=rank, shuffle=True)
    data_iter = torch.utils.data.DataLoader(dataset=crowdhuman,
            batch_size=train_config.mini_batch_size,
            num_workers=2,
            collate_fn=crowdhuman.merge_batch,
            sampler=data_sampler,
            pin_memory=True)
    for epoch_id in range(begin_epoch, train_config.total_epoch + 1):
        data_sampler.set_epoch(epoch_id)
        do_train_epoch(net, data_iter, optimizer, rank, epoch_id, train_config)
        if rank == 0:
            # save the model
            fpath = os.path.join(train_config.model_dir, 'dump-{}.pth'.format(epoch_id))
            model = dict(epoch=epoch_id,
                         state_dict=net.module.state_dict(),
                         optimizer=optimizer.state_dict())
            torch.save(model, fpath)
            remove_old_dumps(train_config.model_dir)
        torch.cuda.empty_cache()
        dist.barrier()
    dist.destroy_process_group()


def multi_train(params, config, network):
    # check gpus
    if not torch.cuda.is_available():
        print('No GPU exists!')
        return
    else:
        num_gpus = torch.cuda.device_count()
        torch.set_default_tensor_type('torch.FloatTensor')
    train_config = Train_config()
    train_config.world_size = num_gpus
    train_config.total_epoch = config.max_epoch
    train_config.iter_per_epoch = \
        config.nr_images_epoch // (num_gpus * config.train_batch_per_gpu)
    train_config.mini_batch_size = config.train_batch_per_gpu
    train_config.warm_iter = config.warm_iter
    train_config.learning_rate = \
        config.base_lr * config.train_batch_per_gpu * num_gpus
    train_config.momentum = config.momentum
    train_config.weight_decay = config.weight_decay
    train_config.lr_decay = config.lr_decay
    train_config.model_dir = os.path.join('../model/', params.model_dir, config.model_dir)
    line = 'network.lr.{}.train.{}'.format(
        train_config.learning_rate, train_config.total_epoch)
    train_config.log_path = os.path.join('../model/', params.model_dir, config.output_dir, line + '.log')
    train_config.init_weights = config.init_weights
    train_config.log_dump_interval = config.log_dump_interval
    train_config.resume_weights = params.resume_weights
    train_config.dist_url = 'tcp://127.0.0.1:{}'.format(params.port)
    train_config.fp16 = params.fp16 and HAS_APEX
    if params.fp16 and not HAS_APEX:
        print('apex not found, --fp16 ignored')
    misc_utils.ensure_dir(train_config.model_dir)
    # print the training config
    line = 'Num of GPUs:{}, learning rate:{:.5f}, mini batch size:{}, \
            \ntrain_epoch:{}, iter_per_epoch:{}, decay_epoch:{}'.format(
            num_gpus, train_config.learning_rate, train_config.mini_batch_size,
            train_config.total_epoch, train_config.iter_per_epoch, train_config.lr_decay)
    print(line)
    print("Init multi-processing training...")
    mp.spawn(train_worker, nprocs=num_gpus, args=(train_config, network, config))


def run_train():
    parser = argparse.ArgumentParser()
    parser.add_argument('--model_dir', '-md', default=None, required=True, type=str)
    parser.add_argument('--resume_weights', '-r', default=None, type=int)
    parser.add_argument('--devices', '-d', default='0-7', type=str,
                        help='gpu ids to train on, e.g. 0-3 or 0,2,4')
    parser.add_argument('--port', default=23456, type=int)
    parser.add_argument('--fp16', action='store_true', help='apex amp O1')
    os.environ['NCCL_IB_DISABLE'] = '1'
    args = parser.parse_args()
    os.environ['CUDA_VISIBLE_DEVICES'] = ','.join(str(d) for d in parse_devices(args.devices))
    # import libs
    model_root_dir = os.path.join('../model/', args.model_dir)
    sys.path.insert(0, model_root_dir)
    from config import config
    from network import Network
    np.random.seed(config.seed)
    torch.manual_seed(config.seed)
    multi_train(args, config, Network)


if __name__ == '__main__':
    run_train()
