"""
EV-FlowNet (PyTorch re-implementation): self-supervised optical flow from event cameras (MVSEC).

The network sees a 4-channel event image (positive/negative counts and most recent timestamps)
and is trained with a photometric loss on the grayscale APS frames, warped by the predicted flow.

    python train.py --data /data/mvsec --gpu 0 --batch-size 8 --epochs 30
    python train.py --data /data/mvsec --gpu 0 --evaluate --pretrained checkpoints/evflownet.pth.tar
"""
import argparse
import datetime
import os
import shutil
import time

import numpy as np
import torch
import torch.backends.cudnn as cudnn
import torch.nn as nn
import torch.nn.functional as F
import torch.optim
import torch.utils.data
from torch.autograd import Variable
from tensorboardX import SummaryWriter

import models
import datasets
from utils.flow_utils import flow2rgb, AverageMeter, flow_error_dense, estimate_corresponding_gt_flow

model_names = sorted(name for name in models.__dict__
                     if name.islower() and not name.startswith("__"))

parser = argparse.ArgumentParser(description='EV-FlowNet training on MVSEC',
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
parser.add_argument('--data', metavar='DIR', default='/data/mvsec', help='path to the MVSEC hdf5 files')
parser.add_argument('--savedir', type=str, metavar='DATASET', default='evflownet', help='results save dir')
parser.add_argument('--arch', '-a', metavar='ARCH', default='ev_flownet', choices=model_names,
                    help='model architecture, overwritten if pretrained is specified: ' + ' | '.join(model_names))
parser.add_argument('-j', '--workers', default=8, type=int, metavar='N', help='number of data loading workers')
parser.add_argument('--epochs', default=30, type=int, metavar='N', help='number of total epochs to run')
parser.add_argument('--start-epoch', default=0, type=int, metavar='N', help='manual epoch number (useful on restarts)')
parser.add_argument('-b', '--batch-size', default=8, type=int, metavar='N', help='mini-batch size')
parser.add_argument('--lr', '--learning-rate', default=1e-5, type=float, metavar='LR', help='initial learning rate')
parser.add_argument('--beta', default=0.999, type=float, metavar='M', help='beta parameter for adam')
parser.add_argument('--weight-decay', '--wd', default=4e-4, type=float, metavar='W', help='weight decay')
parser.add_argument('--smooth-weight', default=0.5, type=float, help='weight of the smoothness loss')
parser.add_argument('--print-freq', '-p', default=100, type=int, metavar='N', help='print frequency')
parser.add_argument('-e', '--evaluate', dest='evaluate', action='store_true', help='evaluate model on validation set')
parser.add_argument('--pretrained', dest='pretrained', default=None, help='path to pre-trained model')
parser.add_argument('--no-date', action='store_true', help='don\'t append date timestamp to folder')
parser.add_argument('--milestones', default=[5, 10, 20], metavar='N', nargs='*', help='epochs at which learning rate is divided by 2')
parser.add_argument('--render', dest='render', action='store_true', help='render flow images during evaluation')
parser.add_argument('--gpu', default='0', type=str, help='comma separated list of GPU ids')
parser.add_argument('--seed', default=42, type=int)
parser.add_argument('--dt', default=1, type=int, help='frame gap used for evaluation (dt=1 or dt=4)')

args = parser.parse_args()

os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu

n_iter = 0
image_resize = 256
event_interval = 0
spiking_ts = 1
sp_threshold = 0.75

trainenv = 'outdoor_day2'
testenv = 'indoor_flying1'

traindir = os.path.join(args.data, trainenv)
testdir = os.path.join(args.data, testenv)

trainfile = traindir + '/' + trainenv + '_data.hdf5'
testfile = testdir + '/' + testenv + '_data.hdf5'

gt_file = testdir + '/' + testenv + '_gt.hdf5'


def warp(x, flo):
    """
    warp an image/tensor (im2) back to im1, according to the optical flow
    x: [B, C, H, W] (im2)
    flo: [B, 2, H, W] flow
    """
    B, C, H, W = x.size()
    # mesh grid
    xx = torch.arange(0, W).view(1, -1).repeat(H, 1)
    yy = torch.arange(0, H).view(-1, 1).repeat(1, W)
    xx = xx.view(1, 1, H, W).repeat(B, 1, 1, 1)
    yy = yy.view(1, 1, H, W).repeat(B, 1, 1, 1)
    grid = torch.cat((xx, yy), 1).float()

    if x.is_cuda:
        grid = grid.cuda()
    vgrid = Variable(grid) + flo

    # scale grid to [-1,1]
    vgrid[:, 0, :, :] = 2.0 * vgrid[:, 0, :, :].clone() / max(W - 1, 1) - 1.0
    vgrid[:, 1, :, :] = 2.0 * vgrid[:, 1, :, :].clone() / max(H - 1, 1) - 1.0

    vgrid = vgrid.permute(0, 2, 3, 1)
    output = nn.functional.grid_sample(x, vgrid, align_corners=True)
    mask = torch.autograd.Variable(torch.ones(x.size())).cuda()
    mask = nn.functional.grid_sample(mask, vgrid, align_corners=True)

    mask[mask < 0.9999] = 0
    mask[mask > 0] = 1

    return output * mask


def charbonnier_loss(delta, alpha=0.45, epsilon=1e-3):
    loss = torch.mean(torch.pow((delta ** 2 + epsilon ** 2), alpha))
    return loss


def compute_smoothness_loss(flow):
    """
    Local smoothness loss, as defined in equation (5) of the paper.
    The neighborhood here is defined as the 8-connected region around each pixel.
    """
    flow_ucrop = flow[..., 1:]
    flow_dcrop = flow[..., :-1]
    flow_lcrop = flow[..., 1:, :]
    flow_rcrop = flow[..., :-1, :]

    flow_ulcrop = flow[..., 1:, 1:]
    flow_drcrop = flow[..., :-1, :-1]
    flow_dlcrop = flow[..., :-1, 1:]
    flow_urcrop = flow[..., 1:, :-1]

    smoothness_loss = charbonnier_loss(flow_lcrop - flow_rcrop) + \
                      charbonnier_loss(flow_ucrop - flow_dcrop) + \
                      charbonnier_loss(flow_ulcrop - flow_drcrop) + \
                      charbonnier_loss(flow_dlcrop - flow_urcrop)
    smoothness_loss /= 4.

    return smoothness_loss


def compute_photometric_loss(prev_images, next_images, flow_dict):
    """
    Multi-scale photometric loss, as defined in equation (3) of the paper.
    """
    total_photometric_loss = 0.
    loss_weight_sum = 0.
    for i in range(len(flow_dict)):
        flow = flow_dict[i]
        height, width = flow.shape[2], flow.shape[3]
        prev_images_resize = F.interpolate(prev_images, size=(height, width), mode='bilinear', align_corners=False)
        next_images_resize = F.interpolate(next_images, size=(height, width), mode='bilinear', align_corners=False)
        next_images_warped = warp(next_images_resize, flow)
        photometric_loss = charbonnier_loss(next_images_warped - prev_images_resize)
        total_photometric_loss += photometric_loss
        loss_weight_sum += 1.
    total_photometric_loss /= loss_weight_sum
    return total_photometric_loss


def train(train_loader, model, optimizer, epoch, train_writer):
    global n_iter
    batch_time = AverageMeter()
    data_time = AverageMeter()
    losses = AverageMeter()

    # switch to train mode
    model.train()

    end = time.time()
    for ww, data in enumerate(train_loader, 0):
        # measure data loading time
        data_time.update(time.time() - end)

        event_image, prev_gray, next_gray = data
        # [B, 4, H, W]: pos count, neg count, pos timestamp, neg timestamp
        event_image = event_image.cuda()
        prev_gray = prev_gray.cuda()
        next_gray = next_gray.cuda()

        # compute output
        output = model(event_image.type(torch.cuda.FloatTensor))

        # photometric + smoothness loss on every scale
        photometric_loss = compute_photometric_loss(prev_gray, next_gray, output)
        smoothness_loss = 0
        for i in range(len(output)):
            smoothness_loss = smoothness_loss + compute_smoothness_loss(output[i])
        smoothness_loss = smoothness_loss / len(output)
        loss = photometric_loss + args.smooth_weight * smoothness_loss

        # compute gradient and do optimization step
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        # record loss and EPE
        train_writer.add_scalar('train_loss', loss.item(), n_iter)
        losses.update(loss.item(), event_image.size(0))

        # measure elapsed time
        batch_time.update(time.time() - end)
        end = time.time()

        if ww % args.print_freq == 0:
            print('Epoch: [{0}][{1}/{2}]\t Time {3}\t Data {4}\t Loss {5}'
                  .format(epoch, ww, len(train_loader), batch_time, data_time, losses))
        n_iter += 1

    return losses.avg


def validate(test_loader, model, epoch, output_writers):
    global args, image_resize
    model.eval()

    AEE_sum = 0.
    AEE_sum_sum = 0.
    AEE_sum_gt = 0.
    percent_AEE_sum = 0.
    iters = 0.
    forward_times = []
    gt_temp = np.load(gt_file.replace('.hdf5', '_flow_dist.npy'))
    with torch.no_grad():
        for i, data in enumerate(test_loader, 0):
            event_image, prev_gray, next_gray, gt_idx, (ts_start, ts_end), gt_ts = data
            event_image = event_image.cuda(non_blocking=True)

            t0 = time.time()
            output = model(event_image.type(torch.cuda.FloatTensor))[-1]
            torch.cuda.synchronize()
            forward_times.append(time.time() - t0)

            pred_flow = np.zeros((image_resize, image_resize, 2))
            output_temp = output.cpu()
            pred_flow[:, :, 0] = cv2_resize(np.array(output_temp[0, 0, :, :]), image_resize)
            pred_flow[:, :, 1] = cv2_resize(np.array(output_temp[0, 1, :, :]), image_resize)

            U_gt_all = np.array(gt_temp[:, 0, :, :])
            V_gt_all = np.array(gt_temp[:, 1, :, :])

            U_gt, V_gt = estimate_corresponding_gt_flow(U_gt_all, V_gt_all, gt_ts, np.array(ts_start), np.array(ts_end))
            gt_flow = np.stack((U_gt, V_gt), axis=2)

            event_count = torch.sum(event_image[0, :2], dim=0).cpu().numpy()
            AEE, percent_AEE, n_points, AEE_sum_temp, AEE_gt_temp = flow_error_dense(
                gt_flow, pred_flow, event_count, is_car=False)

            AEE_sum = AEE_sum + args.dt * AEE
            AEE_sum_sum = AEE_sum_sum + AEE_sum_temp
            AEE_sum_gt = AEE_sum_gt + AEE_gt_temp
            percent_AEE_sum += percent_AEE
            iters += 1

            if args.render and i < 100:
                output_writers[i].add_image('FlowNet Outputs', flow2rgb(pred_flow.transpose(2, 0, 1)), epoch)

    print('-------------------------------------------------------')
    print('Mean AEE: {:.2f}, sum AEE: {:.2f}, Mean AEE_gt: {:.2f}, % Outliers: {:.2f}, # pts: {:.2f}'
          .format(AEE_sum / iters, AEE_sum_sum / iters, AEE_sum_gt / iters, percent_AEE_sum / iters, n_points))
    print('Mean forward time: {:.2f} ms'.format(1000.0 * np.mean(forward_times)))
    print('-------------------------------------------------------')

    return AEE_sum / iters


def cv2_resize(arr, size):
    import cv2
    return cv2.resize(arr, (size, size), interpolation=cv2.INTER_LINEAR)


def save_checkpoint(state, is_best, save_path, filename='checkpoint.pth.tar'):
    torch.save(state, os.path.join(save_path, filename))
    if is_best:
        shutil.copyfile(os.path.join(save_path, filename), os.path.join(save_path, 'model_best.pth.tar'))


def main():
    global args
    best_EPE = -1
    torch.manual_seed(args.seed)
    torch.cuda.manual_seed(args.seed)
    np.random.seed(args.seed)

    save_path = '{},{},{}epochs{},b{},lr{}'.format(
        args.arch, 'adam', args.epochs,
        ',epochSize' if args.start_epoch > 0 else '',
        args.batch_size, args.lr)
    if not args.no_date:
        timestamp = datetime.datetime.now().strftime("%m-%d-%H:%M")
        save_path = os.path.join(timestamp, save_path)
    save_path = os.path.join(args.savedir, save_path)
    print('=> Everything will be saved to {}'.format(save_path))
    if not os.path.exists(save_path):
        os.makedirs(save_path)

    train_writer = SummaryWriter(os.path.join(save_path, 'train'))
    test_writer = SummaryWriter(os.path.join(save_path, 'test'))
    output_writers = []
    for i in range(100):
        output_writers.append(SummaryWriter(os.path.join(save_path, 'test', str(i))))

    # Data loading code
    co_transform = datasets.transforms.Compose([
        datasets.transforms.RandomCrop((image_resize, image_resize)),
        datasets.transforms.RandomHorizontalFlip(),
    ])
    train_set = datasets.MvsecEventImages(trainfile, transform=co_transform, train=True)
    test_set = datasets.MvsecEventImages(testfile, transform=None, train=False, dt=args.dt)

    train_loader = torch.utils.data.DataLoader(
        train_set, batch_size=args.batch_size, num_workers=args.workers,
        pin_memory=True, shuffle=True, drop_last=True)
    test_loader = torch.utils.data.DataLoader(
        test_set, batch_size=1, num_workers=args.workers,
        pin_memory=True, shuffle=False)

    # create model
    if args.pretrained:
        network_data = torch.load(args.pretrained)
        args.arch = network_data['arch']
        print("=> using pre-trained model '{}'".format(args.arch))
    else:
        network_data = None
        print("=> creating model '{}'".format(args.arch))

    model = models.__dict__[args.arch](network_data).cuda()
    model = torch.nn.DataParallel(model).cuda()
    cudnn.benchmark = True

    assert (args.solver in ['adam', 'sgd']) if hasattr(args, 'solver') else True
    print('=> setting adam solver')
    param_groups = [{'params': model.module.bias_parameters(), 'weight_decay': 0},
                    {'params': model.module.weight_parameters(), 'weight_decay': args.weight_decay}]
    optimizer = torch.optim.Adam(param_groups, args.lr, betas=(0.9, args.beta))

    if args.evaluate:
        with torch.no_grad():
            best_EPE = validate(test_loader, model, -1, output_writers)
        return

    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=args.milestones, gamma=0.5)

    for epoch in range(args.start_epoch, args.epochs):
        train_loss = train(train_loader, model, optimizer, epoch, train_writer)
        scheduler.step()
        train_writer.add_scalar('mean loss', train_loss, epoch)

        # evaluate on validation set
        with torch.no_grad():
            EPE = validate(test_loader, model, epoch, output_writers)
        test_writer.add_scalar('mean EPE', EPE, epoch)

        if best_EPE < 0:
            best_EPE = EPE

        is_best = EPE < best_EPE
        best_EPE = min(EPE, best_EPE)
        save_checkpoint({
            'epoch': epoch + 1,
            'arch': args.arch,
            'state_dict': model.module.state_dict(),
            'best_EPE': best_EPE,
        }, is_best, save_path)


if __name__ == '__main__':
    main()
