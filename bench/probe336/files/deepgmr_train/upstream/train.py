import argparse
import numpy as np
import os
import torch
import torch.nn.functional as F
from data import TrainData, TestData
from model import DeepGMR
from tensorboardX import SummaryWriter
from time import time
from torch.utils.data import DataLoader
from tqdm import tqdm


use_cuda = torch.cuda.is_available()


def train_one_epoch(epoch, model, loader, writer, log_freq, plot_freq, clip_grad=0.0):
    model.train()

    log_fmt = 'Epoch {:03d} Step {:03d}/{:03d} Train: ' + \
              'batch time {:.2f}, data time {:.2f}, loss {:.4f}, ' + \
              'rotation error {:.2f}, translation error {:.4f}, RMSE {:.4f}'
    batch_time = []
    data_time = []
    losses = []
    r_errs = []
    t_errs = []
    rmses = []
    total_steps = len(loader)

    start = time()
    for step, (pts1, pts2, T_gt) in enumerate(loader):
        if use_cuda:
            pts1 = pts1.cuda()
            pts2 = pts2.cuda()
            T_gt = T_gt.cuda()
        data_time.append(time() - start)

        model.optimizer.zero_grad()
        loss, r_err, t_err, rmse = model(pts1, pts2, T_gt)
        loss.backward()
        if clip_grad > 0:
            torch.nn.utils.clip_grad_norm(model.parameters(), clip_grad)
        model.optimizer.step()
        batch_time.append(time() - start)

        losses.append(loss.item())
        r_errs.append(r_err.mean().item())
        t_errs.append(t_err.mean().item())
        rmses.append(rmse.mean().item())

        global_step = epoch * total_steps + step + 1
        if global_step % log_freq == 0:
            log_str = log_fmt.format(
                epoch+1, step+1, total_steps,
                np.mean(batch_time), np.mean(data_time), np.mean(losses),
                np.mean(r_errs), np.mean(t_errs), np.mean(rmses)
            )
            print(log_str)
            writer.add_scalar('train/loss', np.mean(losses), global_step)
            writer.add_scalar('train/rotation_error', np.mean(r_errs), global_step)
            writer.add_scalar('train/translation_error', np.mean(t_errs), global_step)
            writer.add_scalar('train/RMSE', np.mean(rmses), global_step)
            batch_time.clear()
            data_time.clear()
            losses.clear()
            r_errs.clear()
            t_errs.clear()
            rmses.clear()

        if global_step % plot_freq == 0:
            fig = model.visualize(0)
            writer.add_figure('train', fig, global_step)

        start = time()


def eval_one_epoch(epoch, model, loader, writer, log_freq, plot_freq):
    model.eval()

    log_fmt = 'Epoch {:03d} Step {:03d}/{:03d} Eval: ' + \
              'batch time {:.2f}, data time {:.2f}, loss {:.4f}, ' + \
              'rotation error {:.2f}, translation error {:.4f}, RMSE {:.4f}'
    batch_time = []
    data_time = []
    losses = []
    r_errs = []
    t_errs = []
    rmses = []
    total_steps = len(loader)

    start = time()
    for step, (pts1, pts2, T_gt) in enumerate(loader):
        if use_cuda:
            pts1, pts2, T_gt = pts1.cuda(), pts2.cuda(), T_gt.cuda()
        data_time.append(time() - start)

        with torch.no_grad():
            loss, r_err, t_err, rmse = model(pts1, pts2, T_gt)
            batch_time.append(time() - start)

        losses.append(loss.item())
        r_errs.append(r_err.mean().item())
        t_errs.append(t_err.mean().item())
        rmses.append(rmse.mean().item())

        global_step = epoch * total_steps + step + 1
        if global_step % log_freq == 0:
            log_str = log_fmt.format(
                epoch+1, step+1, total_steps,
                np.mean(batch_time), np.mean(data_time), np.mean(losses),
                np.mean(r_errs), np.mean(t_errs), np.mean(rmses)
            )
            print(log_str)

        if global_step % plot_freq == 0:
            fig = model.visualize(0)
            writer.add_figure('eval', fig, global_step)

        start = time()

    writer.add_scalar('eval/loss', np.mean(losses), epoch)
    writer.add_scalar('eval/rotation_error', np.mean(r_errs), epoch)
    writer.add_scalar('eval/translation_error', np.mean(t_errs), epoch)
    writer.add_scalar('eval/RMSE', np.mean(rmses), epoch)
    return np.mean(losses)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    # general
    parser.add_argument('--data_file')
    parser.add_argument('--log_dir')
    parser.add_argument('--test_file', default=None)
    # model
    parser.add_argument('--use_rri', action='store_true')
    parser.add_argument('--use_tnet', action='store_true')
    parser.add_argument('--k', type=int, default=20)
    parser.add_argument('--d_model', type=int, default=1024)
    parser.add_argument('--n_clusters', type=int, default=16)
    parser.add_argument('--use_mm', action='store_true')
    # dataset
    parser.add_argument('--max_angle', type=float, default=180)
    parser.add_argument('--max_trans', type=float, default=0.5)
    parser.add_argument('--n_points', type=int, default=1024)
    parser.add_argument('--noisy', action='store_true')
    # train setting
    parser.add_argument('--n_epochs', type=int, default=100)
    parser.add_argument('--batch_size', type=int, default=32)
    parser.add_argument('--lr', type=float, default=0.001)
    parser.add_argument('--clip_grad', type=float, default=0.0)
    # eval setting
    parser.add_argument('--val_fraction', type=float, default=0.1)
    # logging
    parser.add_argument('--log_freq', type=int, default=100)
    parser.add_argument('--plot_freq', type=int, default=250)
    parser.add_argument('--save_freq', type=int, default=10)
    args = parser.parse_args()

    model = DeepGMR(args)
    if use_cuda:
        model.cuda()

    data = TrainData(args.data_file, args)
    ids = np.random.permutation(len(data))
    n_val = int(args.val_fraction * len(data))
    train_data = torch.utils.data.Subset(data, ids[n_val:])
    valid_data = torch.utils.data.Subset(data, ids[:n_val])

    train_loader = DataLoader(train_data, args.batch_size, drop_last=True, shuffle=True,
                              num_workers=4, pin_memory=use_cuda)
    valid_loader = DataLoader(valid_data, args.batch_size, drop_last=True, num_workers=4)

    model.optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(model.optimizer, [50, 80], gamma=0.1)

    writer = SummaryWriter(args.log_dir)

    best_loss = float('inf')
    for epoch in range(args.n_epochs):
        train_one_epoch(epoch, model, train_loader, writer, args.log_freq, args.plot_freq, args.clip_grad)
        loss = eval_one_epoch(epoch, model, valid_loader, writer, args.log_freq, args.plot_freq)
        scheduler.step()
        if loss < best_loss:
            best_loss = loss
            torch.save(model.state_dict(), os.path.join(args.log_dir, 'checkpoint.pth'))
        if (epoch + 1) % args.save_freq == 0:
            torch.save(model.state_dict(), os.path.join(args.log_dir, 'checkpoint_{:03d}.pth'.format(epoch + 1)))
    # release cached blocks so a follow-up test run in the same session starts clean
    torch.cuda.empty_cache()
