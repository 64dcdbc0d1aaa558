import os
import sys
import cv2
import math
import time
import torch
import random
import logging
import argparse
import numpy as np
import torch.distributed as dist
from torch.utils.data import DataLoader
from torch.utils.tensorboard import SummaryWriter
from torch.utils.data.distributed import DistributedSampler

sys.path.append('.')
from model.model import Model
from dataset.dataset import *
from utils.util import *

device = torch.device("cuda")

parser = argparse.ArgumentParser()
parser.add_argument('--epoch', default=300, type=int)
parser.add_argument('--num_gpu', default=4, type=int)  # or 8
parser.add_argument('--num_workers', default=8, type=int)
parser.add_argument('--batch_size', default=8, type=int, help='minibatch size')  # 4 * 8 = 32
parser.add_argument('--local_rank', default=0, type=int, help='local rank')
parser.add_argument('--train_dataset', required=True, type=str, help='CityTrainDataset, KittiTrainDataset, UCF101TrainDataset, VimeoTrainDataset')
parser.add_argument('--val_datasets', type=str, nargs='+', default=['CityValDataset'])
parser.add_argument('--resume_path', default=None, type=str, help='continue to train, model path')
parser.add_argument('--resume_epoch', default=0, type=int, help='continue to train, epoch')
args = parser.parse_args()

exp = os.path.abspath('.').split('/')[-1]
log_path = './logs/train_log_{}'.format(args.train_dataset)
save_model_path = './models/train_log_{}'.format(args.train_dataset)

if not os.path.exists(log_path):
    os.makedirs(log_path, exist_ok=True)
if not os.path.exists(save_model_path):
    os.makedirs(save_model_path, exist_ok=True)

logging.basicConfig(level=logging.INFO,
                    format='%(asctime)s %(levelname)s %(message)s',
                    datefmt='%Y-%m-%d %H:%M:%S',
                    filename=os.path.join(log_path, 'train.log'),
                    filemode='a')
logger = logging.getLogger(__name__)


def base_build_dataset(name):
    return globals()[name]()


def get_learning_rate(step):
    if step < 2000:
        mul = step / 2000.
        return 1e-4 * mul
    else:
        mul = np.cos((step - 2000) / (args.epoch * args.step_per_epoch - 2000.) * math.pi) * 0.5 + 0.5
        return (1e-4 - 1e-5) * mul + 1e-5


def train(model, args):
    step = 0
    nr_eval = args.resume_epoch
    dataset = base_build_dataset(args.train_dataset)
    sampler = DistributedSampler(dataset)
    train_data = DataLoader(dataset, batch_size=args.batch_size, num_workers=args.num_workers,
                            pin_memory=True, drop_last=True, sampler=sampler)
    args.step_per_epoch = train_data.__len__()
    step = 0 + args.step_per_epoch * args.resume_epoch
    if local_rank == 0:
        writer = SummaryWriter(log_path + '/train')
        print('training...')
    time_stamp = time.time()
    for epoch in range(args.resume_epoch, args.epoch):
        sampler.set_epoch(epoch)
        for i, data in enumerate(train_data):
            data_time_interval = time.time() - time_stamp
            time_stamp = time.time()
            data_gpu = data.to(device, non_blocking=True) / 255.  # B,3,C,H,W

            learning_rate = get_learning_rate(step)

            loss_avg = model.train(data_gpu, learning_rate)

            train_time_interval = time.time() - time_stamp
            time_stamp = time.time()
            if step % 200 == 1 and local_rank == 0:
                writer.add_scalar('learning_rate', learning_rate, step)
                writer.add_scalar('loss_l1', loss_avg, step)
            if step % 100 == 0 and local_rank == 0:
                logger.info('epoch:{} {}/{} time:{:.2f}+{:.2f} loss_avg:{:.4e}'.format(
                    epoch, i, args.step_per_epoch, data_time_interval, train_time_interval, loss_avg))
            step += 1
        nr_eval += 1
        if nr_eval % 5 == 0:
            for dataset_name in args.val_datasets:
                val_dataset = base_build_dataset(dataset_name)
                val_data = DataLoader(val_dataset, batch_size=1, pin_memory=True, num_workers=1)
                evaluate(model, val_data, dataset_name, nr_eval, step)
        if local_rank <= 0:
            model.save_model(save_model_path, epoch, local_rank)
        dist.barrier()


def evaluate(model, val_data, name, nr_eval, step):
    if name == "CityValDataset" or name == "KittiValDataset" or name == "DavisValDataset":
        with torch.no_grad():
            lpips_score_mine, psnr_score_mine, msssim_score_mine, ssim_score_mine = np.zeros(5), np.zeros(5), np.zeros(5), np.zeros(5)
            time_stamp = time.time()
            num = val_data.__len__()
            for i, data in enumerate(val_data):
                data_gpu = data.to(device, non_blocking=True) / 255.
                preds = model.eval(data_gpu, name)

                b, n, c, h, w = data_gpu.shape
                gt, pred = data_gpu[:, 2:], torch.stack(preds, dim=1)
                for j in range(5):
                    psnr = -10 * math.log10(torch.mean((gt[:, j] - pred[:, j]) ** 2).cpu().data)
                    ssim_val = ssim_matlab(gt[:, j], pred[:, j]).cpu().numpy()
                    psnr_score_mine[j] += psnr
                    ssim_score_mine[j] += ssim_val

            eval_time_interval = time.time() - time_stamp
            if local_rank != 0:
                return
            psnr_score_mine, ssim_score_mine = psnr_score_mine / num, ssim_score_mine / num
            for i in range(5):
                logger.info('{} eval epoch:{} frame{} psnr:{:.4f} ssim:{:.4f} time:{:.2f}s'.format(
                    name, nr_eval, i, psnr_score_mine[i], ssim_score_mine[i], eval_time_interval))
    else:
        with torch.no_grad():
            psnr_list = []
            for i, data in enumerate(val_data):
                data_gpu = data.to(device, non_blocking=True) / 255.
                preds = model.eval(data_gpu, name)
                gt, pred = data_gpu[:, 2], preds[0]
                psnr_list.append(-10 * math.log10(torch.mean((gt - pred) ** 2).cpu().data))
            if local_rank == 0:
                logger.info('{} eval epoch:{} psnr:{:.4f}'.format(name, nr_eval, np.mean(psnr_list)))


if __name__ == "__main__":
    torch.distributed.init_process_group(backend="nccl", world_size=args.num_gpu)
    local_rank = torch.distributed.get_rank()
    torch.cuda.set_device(local_rank)
    seed = 1234
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.benchmark = True
    model = Model(local_rank=local_rank, resume_path=args.resume_path, resume_epoch=args.resume_epoch)
    train(model, args)
