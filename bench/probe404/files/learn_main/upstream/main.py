import os
import time
import argparse
import numpy as np

import torch
import torch.nn as nn
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torch.utils.tensorboard import SummaryWriter

from model import Learn, count_parameters
from dataset import CTSliceDataset, RandomFlip, ImagePatchDataset, geometry_from_args


def get_args():
    parser = argparse.ArgumentParser(description='LEARN for sparse-view CT')
    parser.add_argument('--data_root', type=str, default='./data/aapm_fan')
    parser.add_argument('--save_dir', type=str, default='./checkpoints/learn_64views')
    parser.add_argument('--epochs', type=int, default=50)
    parser.add_argument('--batch_size', type=int, default=1, help='per-GPU batch size')
    parser.add_argument('--lr', type=float, default=1e-4)
    parser.add_argument('--block_num', type=int, default=50)
    parser.add_argument('--workers', type=int, default=4)
    parser.add_argument('--resume', type=str, default='')
    parser.add_argument('--dist_url', type=str, default='tcp://127.0.0.1:23456')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--evaluate', action='store_true', help='single-GPU test of --resume on the test split')
    parser.add_argument('--result_dir', type=str, default='./results')
    parser.add_argument('--pretrain_reg', action='store_true',
                        help='pre-train one regularisation CNN on image patches and exit')
    parser.add_argument('--pretrain_gpu', type=int, default=0)
    # fan-beam geometry (AAPM Mayo, 512x512)
    parser.add_argument('--views', type=int, default=64)
    parser.add_argument('--dets', type=int, default=736)
    parser.add_argument('--width', type=int, default=512)
    parser.add_argument('--height', type=int, default=512)
    parser.add_argument('--dImg', type=float, default=0.006641)
    parser.add_argument('--dDet', type=float, default=0.0072)
    parser.add_argument('--s2r', type=float, default=5.95)
    parser.add_argument('--d2r', type=float, default=4.906)
    parser.add_argument('--binshift', type=float, default=0.0)
    return parser.parse_args()


def reduce_mean(tensor, nprocs):
    rt = tensor.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    rt /= nprocs
    return rt


def psnr(x, y, data_range=1.0):
    mse = torch.mean((x - y) ** 2)
    return 10 * torch.log10(data_range ** 2 / mse)


def evaluate(args):
    import scipy.io as sio
    from measure import compute_ssim
    device = torch.device('cuda:0')
    geometry = geometry_from_args(args)
    model = Learn(args.block_num, **geometry).to(device)
    checkpoint = torch.load(args.resume, map_location='cpu')
    model.load_state_dict(checkpoint['model'])
    model.eval()
    test_set = CTSliceDataset(args.data_root, 'test', views=args.views)
    loader = DataLoader(test_set, batch_size=1, shuffle=False, num_workers=args.workers)
    os.makedirs(args.result_dir, exist_ok=True)

    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)
    timings, psnrs, ssims = [], [], []
    with torch.no_grad():
        for proj, label, name in loader:
            proj, label = proj.to(device), label.to(device)
            starter.record()
            out = model(proj)
            ender.record()
            torch.cuda.synchronize()
            timings.append(starter.elapsed_time(ender))
            data_range = label.max()
            psnrs.append(psnr(out.clamp(0, data_range), label, data_range).item())
            ssims.append(compute_ssim(out.clamp(0, data_range), label, data_range.item()))
            sio.savemat(os.path.join(args.result_dir, name[0]),
                        {'recon': out.squeeze().cpu().numpy(), 'label': label.squeeze().cpu().numpy()})
    print('test: PSNR {:.2f} dB  SSIM {:.4f}  {:.1f} ms/slice (excluding the first 5)'.format(
        np.mean(psnrs), np.mean(ssims), np.mean(timings[5:]) if len(timings) > 5 else np.mean(timings)))


def pretrain_regularizer(args, epochs=20):
    """Denoising pre-training of a single RegularizationBlock; its weights initialise
    every block of the unrolled network (speeds up convergence of the 50-block model)."""
    from model import RegularizationBlock
    device = torch.device('cuda:%d' % args.pretrain_gpu if torch.cuda.is_available() else 'cpu')
    reg = RegularizationBlock(48, 5, 2).to(device)
    data = ImagePatchDataset(args.data_root, patch_size=64)
    loader = DataLoader(data, batch_size=64, shuffle=True, num_workers=args.workers, drop_last=True)
    opt = torch.optim.Adam(reg.parameters(), lr=1e-3)
    for epoch in range(epochs):
        total = 0.0
        for noisy, clean in loader:
            noisy, clean = noisy.to(device), clean.to(device)
            loss = nn.functional.mse_loss(noisy + reg(noisy), clean)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
        print('pretrain epoch {} loss {:.3e}'.format(epoch, total / len(loader)))
    path = os.path.join(args.save_dir, 'reg_pretrained.pth')
    torch.save(reg.state_dict(), path)
    print('saved', path)


def main():
    args = get_args()
    if args.pretrain_reg:
        os.makedirs(args.save_dir, exist_ok=True)
        pretrain_regularizer(args)
        return
    if args.evaluate:
        evaluate(args)
        return
    os.makedirs(args.save_dir, exist_ok=True)
    ngpus_per_node = torch.cuda.device_count()
    args.world_size = ngpus_per_node
    print('spawning {} training processes'.format(ngpus_per_node))
    mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))


def main_worker(gpu, ngpus_per_node, args):
    args.gpu = gpu
    dist.init_process_group(backend='nccl', init_method=args.dist_url,
                            world_size=args.world_size, rank=gpu)
    torch.manual_seed(args.seed + gpu)
    np.random.seed(args.seed + gpu)
    torch.cuda.set_device(gpu)

    geometry = geometry_from_args(args)
    model = Learn(args.block_num, **geometry)
    model.cuda(gpu)
    if gpu == 0:
        print('trainable parameters: {}'.format(count_parameters(model)))
    model = DDP(model, device_ids=[gpu], find_unused_parameters=False)

    criterion = nn.MSELoss().cuda(gpu)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)

    start_epoch = 0
    if args.resume and os.path.isfile(args.resume):
        loc = 'cuda:{}'.format(gpu)
        checkpoint = torch.load(args.resume, map_location=loc)
        model.module.load_state_dict(checkpoint['model'])
        optimizer.load_state_dict(checkpoint['optimizer'])
        scheduler.load_state_dict(checkpoint['scheduler'])
        start_epoch = checkpoint['epoch'] + 1
        if gpu == 0:
            print('resumed from {} (epoch {})'.format(args.resume, checkpoint['epoch']))

    train_set = CTSliceDataset(args.data_root, 'train', views=args.views, transform=RandomFlip())
    val_set = CTSliceDataset(args.data_root, 'val', views=args.views)
    train_sampler = DistributedSampler(train_set, shuffle=True)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=train_sampler,
                              num_workers=args.workers, pin_memory=True, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=1, shuffle=False, num_workers=2, pin_memory=True)

    writer = SummaryWriter(os.path.join(args.save_dir, 'logs')) if gpu == 0 else None

    for epoch in range(start_epoch, args.epochs):
        train_sampler.set_epoch(epoch)
        model.train()
        t0 = time.time()
        running = 0.0
        for it, (proj, label, _) in enumerate(train_loader):
            proj = proj.cuda(gpu, non_blocking=True)
            label = label.cuda(gpu, non_blocking=True)
            out = model(proj)
            loss = criterion(out, label)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            loss_avg = reduce_mean(loss.detach(), ngpus_per_node)
            running += loss_avg.item()
            if gpu == 0 and it % 50 == 0:
                print('epoch {} iter {}/{} loss {:.3e} ({:.1f}s)'.format(
                    epoch, it, len(train_loader), loss_avg.item(), time.time() - t0))
        scheduler.step()

        if gpu == 0:
            writer.add_scalar('train/loss', running / max(1, len(train_loader)), epoch)
            model.eval()
            psnr_sum = 0.0
            with torch.no_grad():
                for proj, label, _ in val_loader:
                    proj, label = proj.cuda(gpu), label.cuda(gpu)
                    out = model.module(proj)
                    psnr_sum += psnr(out.clamp(0, label.max()), label, label.max()).item()
            writer.add_scalar('val/psnr', psnr_sum / len(val_loader), epoch)
            print('epoch {} val psnr {:.2f} dB'.format(epoch, psnr_sum / len(val_loader)))
            torch.save({'epoch': epoch,
                        'model': model.module.state_dict(),
                        'optimizer': optimizer.state_dict(),
                        'scheduler': scheduler.state_dict()},
                       os.path.join(args.save_dir, 'model_epoch_{}.pth'.format(epoch)))
        dist.barrier()

    if writer is not None:
        writer.close()
    dist.destroy_process_group()


if __name__ == '__main__':
    main()
