import os
import yaml
import random
import argparse
import model
import numpy as np
from glob import glob
from easydict import EasyDict
from PIL import Image, ImageOps
from torch import optim
import utils
from dataset import StegaData
import torch
from torchvision import transforms
from torch.utils.data import Dataset, DataLoader
from tensorboardX import SummaryWriter
import lpips


def get_args():
    parser = argparse.ArgumentParser(description='StegaStamp training (PyTorch port)')
    parser.add_argument('--config', type=str, default='cfg/setting.yaml')
    parser.add_argument('--exp_name', type=str, default=None, help='overrides exp_name from the yaml file')
    parser.add_argument('--gpu', type=str, default='0', help='GPU id(s) to use, e.g. "0" or "0,1"')
    parser.add_argument('--seed', type=int, default=42)
    parser.add_argument('--resume', type=str, default='', help='folder with encoder.pth / decoder.pth to resume from')
    cli = parser.parse_args()

    with open(cli.config, 'r') as f:
        args = EasyDict(yaml.load(f, Loader=yaml.SafeLoader))
    if cli.exp_name is not None:
        args.exp_name = cli.exp_name
    args.gpu = cli.gpu
    args.seed = cli.seed
    args.resume = cli.resume
    return args


args = get_args()

# restrict the visible GPUs before anything touches the CUDA context
os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu

if not os.path.exists(args.checkpoints_path):
    os.makedirs(args.checkpoints_path)

if not os.path.exists(args.saved_models):
    os.makedirs(args.saved_models)


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if args.cuda:
        torch.cuda.manual_seed(seed)
    torch.backends.cudnn.benchmark = True


def save_checkpoint(encoder, decoder, discriminator, global_step, path):
    state = {
        'encoder': encoder.state_dict(),
        'decoder': decoder.state_dict(),
        'discriminator': discriminator.state_dict(),
        'global_step': global_step,
    }
    torch.save(state, os.path.join(path, 'step_{:06d}.pth'.format(global_step)))


def infinite_loader(dataloader):
    while True:
        for batch in dataloader:
            yield batch


def main():
    set_seed(args.seed)
    log_path = os.path.join(args.logs_path, str(args.exp_name))
    writer = SummaryWriter(log_path)

    dataset = StegaData(args.train_path, args.secret_size, size=(400, 400))
    dataloader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, num_workers=4, pin_memory=True,
                            drop_last=True)
    data_iter = infinite_loader(dataloader)

    encoder = model.StegaStampEncoder()
    decoder = model.StegaStampDecoder(secret_size=args.secret_size)
    discriminator = model.Discriminator()
    lpips_alex = lpips.LPIPS(net="alex", verbose=False)

    if args.resume:
        ckpt = torch.load(os.path.join(args.resume, 'last.pth'), map_location='cpu')
        encoder.load_state_dict(ckpt['encoder'])
        decoder.load_state_dict(ckpt['decoder'])
        discriminator.load_state_dict(ckpt['discriminator'])
        global_step = ckpt['global_step']
        print('resumed from step {}'.format(global_step))
    else:
        global_step = 0

    if args.cuda:
        encoder = encoder.cuda()
        decoder = decoder.cuda()
        discriminator = discriminator.cuda()
        lpips_alex.cuda()
        print('Using GPU: {}'.format(torch.cuda.get_device_name(0)))

    d_vars = discriminator.parameters()
    g_vars = [{'params': encoder.parameters()},
              {'params': decoder.parameters()}]

    optimize_loss = optim.Adam(g_vars, lr=args.lr)
    optimize_secret_loss = optim.Adam(g_vars, lr=args.lr)
    optimize_dis = optim.RMSprop(d_vars, lr=0.00001)

    height = 400
    width = 400

    total_steps = len(dataset) // args.batch_size + 1

    while global_step < args.num_steps:
        for _ in range(min(total_steps, args.num_steps - global_step)):
            image_input, secret_input = next(data_iter)
            if args.cuda:
                image_input = image_input.cuda(non_blocking=True)
                secret_input = secret_input.cuda(non_blocking=True)
            no_im_loss = global_step < args.no_im_loss_steps
            l2_loss_scale = min(args.l2_loss_scale * global_step / args.l2_loss_ramp, args.l2_loss_scale)
            lpips_loss_scale = min(args.lpips_loss_scale * global_step / args.lpips_loss_ramp, args.lpips_loss_scale)
            secret_loss_scale = min(args.secret_loss_scale * global_step / args.secret_loss_ramp,
                                    args.secret_loss_scale)
            G_loss_scale = min(args.G_loss_scale * global_step / args.G_loss_ramp, args.G_loss_scale)
            l2_edge_gain = 0
            if global_step > args.l2_edge_delay:
                l2_edge_gain = min(args.l2_edge_gain * (global_step - args.l2_edge_delay) / args.l2_edge_ramp,
                                   args.l2_edge_gain)

            rnd_tran = min(args.rnd_trans * global_step / args.rnd_trans_ramp, args.rnd_trans)
            rnd_tran = np.random.uniform() * rnd_tran

            global_step += 1
            Ms = utils.get_rand_transform_matrix(width, np.floor(width * rnd_tran), args.batch_size)
            if args.cuda:
                Ms = Ms.cuda()

            loss_scales = [l2_loss_scale, lpips_loss_scale, secret_loss_scale, G_loss_scale]
            yuv_scales = [args.y_scale, args.u_scale, args.v_scale]
            loss, secret_loss, D_loss, bit_acc, str_acc = model.build_model(encoder, decoder, discriminator, lpips_alex,
                                                                            secret_input, image_input,
                                                                            l2_edge_gain, args.borders,
                                                                            args.secret_size, Ms, loss_scales,
                                                                            yuv_scales, args, global_step, writer)
            if no_im_loss:
                optimize_secret_loss.zero_grad()
                secret_loss.backward()
                optimize_secret_loss.step()
            else:
                optimize_loss.zero_grad()
                loss.backward()
                optimize_loss.step()
                if not args.no_gan:
                    optimize_dis.zero_grad()
                    optimize_dis.step()

            if global_step % 10 == 0:
                writer.add_scalars('Loss values', {'loss': loss.item(), 'secret loss': secret_loss.item(),
                                                   'D_loss loss': D_loss.item()}, global_step)
                writer.add_scalar('metric/bit_acc', bit_acc, global_step)
                writer.add_scalar('metric/str_acc', str_acc, global_step)
            if global_step % 100 == 0:
                print('step {} | loss = {:.4f} | secret_loss = {:.4f} | bit_acc = {:.4f} | str_acc = {:.4f}'.format(
                    global_step, loss.item(), secret_loss.item(), bit_acc, str_acc))
                if args.cuda:
                    mem = torch.cuda.max_memory_allocated() / 1024 ** 3
                    writer.add_scalar('sys/max_mem_gb', mem, global_step)
            if global_step % args.save_freq == 0:
                save_checkpoint(encoder, decoder, discriminator, global_step, args.checkpoints_path)

    writer.close()
    torch.save(encoder, os.path.join(args.saved_models, "encoder.pth"))
    torch.save(decoder, os.path.join(args.saved_models, "decoder.pth"))


if __name__ == '__main__':
    main()
