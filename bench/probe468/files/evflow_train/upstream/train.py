import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.backends.cudnn as cudnn
from torch.utils.data import DataLoader
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

from config import configs
from data_loader import EventData
from losses import TotalLoss
from model import EVFlowNet
from vis_utils import flow_viz_np


def validate(model, loader, device, writer, epoch):
    model.eval()
    total_photo = 0.0
    n = 0
    with torch.no_grad():
        for event_volume, prev_image, next_image, _ in loader:
            event_volume = event_volume.to(device)
            prev_image = prev_image.to(device)
            next_image = next_image.to(device)
            flow_dict = model(event_volume)
            # only the photometric part, smoothness is not meaningful for validation
            photo = TotalLoss.photometric_only(flow_dict['flow3'], prev_image, next_image)
            total_photo += photo.item()
            n += 1
    writer.add_scalar('val/photometric_loss', total_photo / max(n, 1), epoch)
    model.train()
    return total_photo / max(n, 1)


def train():
    args = configs()
    os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu

    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    if args.cuda:
        torch.cuda.manual_seed(args.seed)
        cudnn.benchmark = True

    device = torch.device('cuda' if args.cuda else 'cpu')
    print('Training on {}'.format(device))

    # Dataset
    train_dataset = EventData(args.data_path, args.train_bag, args, train=True)
    val_dataset = EventData(args.data_path, args.test_sequence, args, train=False)
    train_loader = DataLoader(train_dataset, batch_size=args.batch_size, shuffle=True,
                              num_workers=args.num_workers, drop_last=True)
    val_loader = DataLoader(val_dataset, batch_size=args.batch_size, shuffle=False,
                            num_workers=args.num_workers)
    print('{} training samples, {} validation samples'.format(len(train_dataset), len(val_dataset)))

    # Model
    model = EVFlowNet(args)
    if args.load_path is not None:
        model.load_state_dict(torch.load(args.load_path, map_location='cpu'))
    if args.cuda:
        model = nn.DataParallel(model, device_ids=list(range(len(args.gpu_ids)))).cuda()
    model.train()

    optimizer = torch.optim.Adam(model.parameters(), lr=args.initial_learning_rate,
                                 betas=(0.9, 0.999), eps=1e-8)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=args.learning_rate_decay)
    loss_fun = TotalLoss(args.smoothness_weight)

    writer = SummaryWriter(args.summary_path)

    global_step = 0
    best_val = float('inf')
    for epoch in range(args.num_epochs):
        epoch_loss = 0.0
        t_epoch = time.time()
        for iteration, item in enumerate(tqdm(train_loader, desc='epoch {}'.format(epoch))):
            event_volume, prev_image, next_image, _ = item
            event_volume = event_volume.to(device)
            prev_image = prev_image.to(device, non_blocking=True)
            next_image = next_image.cuda(non_blocking=True) if args.cuda else next_image

            flow_dict = model(event_volume)
            loss = loss_fun(flow_dict, prev_image, next_image, model)

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            epoch_loss += loss.item()
            global_step += 1

            if iteration % args.log_interval == 0:
                writer.add_scalar('train/loss', loss.item(), global_step)
                writer.add_scalar('train/lr', optimizer.param_groups[0]['lr'], global_step)
                if args.cuda:
                    print('iter {:6d} loss {:.4f} peak mem {:.0f} MB'.format(
                        global_step, loss.item(), torch.cuda.max_memory_allocated() / 1024 ** 2))
                flow_rgb = flow_viz_np(flow_dict['flow3'][0].detach().cpu().numpy())
                writer.add_image('train/flow', flow_rgb, global_step, dataformats='HWC')

        scheduler.step()
        print('epoch {} done in {:.1f}s, mean loss {:.4f}'.format(
            epoch, time.time() - t_epoch, epoch_loss / len(train_loader)))

        val_loss = validate(model, val_loader, device, writer, epoch)
        if (epoch + 1) % args.save_interval == 0 or val_loss < best_val:
            best_val = min(best_val, val_loss)
            path = os.path.join(args.checkpoint_path, 'evflownet_{:04d}.pth'.format(epoch))
            state = model.module.state_dict() if args.cuda else model.state_dict()
            torch.save(state, path)
            print('saved {}'.format(path))

    writer.close()


if __name__ == '__main__':
    train()
