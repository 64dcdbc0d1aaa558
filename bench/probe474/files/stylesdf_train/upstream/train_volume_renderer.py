import argparse
import math
import random
import os
import yaml
import numpy as np
import torch
import torch.distributed as dist
from torch import nn, autograd, optim
from torch.nn import functional as F
from torch.utils import data
from torchvision import transforms, utils
from tqdm import tqdm
from PIL import Image
from losses import *
from options import BaseOptions
from model import Generator, VolumeRenderDiscriminator
from dataset import MultiResolutionDataset
from utils import data_sampler, requires_grad, accumulate, sample_data, make_noise, mixing_noise, generate_camera_params
from distributed import get_rank, synchronize, reduce_loss_dict, reduce_sum, get_world_size

try:
    import wandb
except ImportError:
    wandb = None


def train(opt, experiment_opt, loader, generator, discriminator, g_optim, d_optim, g_ema, device):
    loader = sample_data(loader)

    mean_path_length = 0

    d_loss_val = 0
    r1_loss = torch.tensor(0.0, device=device)
    g_loss_val = 0
    loss_dict = {}

    viewpoint_condition = opt.view_lambda > 0

    if opt.distributed:
        g_module = generator.module
        d_module = discriminator.module
    else:
        g_module = generator
        d_module = discriminator

    accum = 0.5 ** (32 / (10 * 1000))

    sample_z = [torch.randn(opt.val_n_sample, opt.style_dim, device=device).repeat_interleave(8, dim=0)]
    sample_cam_extrinsics, sample_focals, sample_near, sample_far, _ = generate_camera_params(opt.renderer_output_size, device, batch=opt.val_n_sample, sweep=True,
                                                                                             uniform=opt.camera.uniform, azim_range=opt.camera.azim,
                                                                                             elev_range=opt.camera.elev, fov_ang=opt.camera.fov,
                                                                                             dist_radius=opt.camera.dist_radius)

    pbar = range(opt.iter)
    if get_rank() == 0:
        pbar = tqdm(pbar, initial=opt.start_iter, dynamic_ncols=True, smoothing=0.01)

    for idx in pbar:
        i = idx + opt.start_iter

        if i > opt.iter:
            print("Done!")
            break

        requires_grad(generator, False)
        requires_grad(discriminator, True)
        discriminator.zero_grad()
        _, real_imgs = next(loader)
        real_imgs = real_imgs.to(device)
        noise = mixing_noise(opt.batch, opt.style_dim, opt.mixing, device)
        cam_extrinsics, focal, near, far, gt_viewpoints = generate_camera_params(opt.renderer_output_size, device, batch=opt.batch,
                                                                                 uniform=opt.camera.uniform, azim_range=opt.camera.azim,
                                                                                 elev_range=opt.camera.elev, fov_ang=opt.camera.fov,
                                                                                 dist_radius=opt.camera.dist_radius)
        gen_imgs = []
        for j in range(0, opt.batch, opt.chunk):
            curr_noise = [n[j:j+opt.chunk] for n in noise]
            _, fake_img = generator(curr_noise,
                                    cam_extrinsics[j:j+opt.chunk],
                                    focal[j:j+opt.chunk],
                                    near[j:j+opt.chunk],
                                    far[j:j+opt.chunk])

            gen_imgs += [fake_img]

        gen_imgs = torch.cat(gen_imgs, 0)
        fake_pred, fake_viewpoint_pred = discriminator(gen_imgs.detach())
        real_imgs.requires_grad = True
        real_pred, _ = discriminator(real_imgs)
        d_gan_loss = d_logistic_loss(real_pred, fake_pred)
        grad_penalty = d_r1_loss(real_pred, real_imgs)
        r1_loss = opt.R1 * 0.5 * grad_penalty
        d_loss = d_gan_loss + r1_loss
        d_loss.backward()
        d_optim.step()

        loss_dict["d"] = d_gan_loss
        loss_dict["r1"] = r1_loss

        accumulate(g_ema, g_module, accum)
        loss_reduced = reduce_loss_dict(loss_dict)
        d_loss_val = loss_reduced["d"].mean().item()
        r1_val = loss_reduced["r1"].mean().item()

        if get_rank() == 0:
            pbar.set_description((f"d: {d_loss_val:.4f}; r1: {r1_val:.4f}"))
            if i % 10000 == 0 or (i+1) == opt.iter:
                torch.save({"g": g_module.state_dict(), "d": d_module.state_dict(), "g_ema": g_ema.state_dict()},
                           os.path.join(opt.checkpoints_dir, experiment_opt.expname, 'volume_renderer', f"models_{str(i).zfill(7)}.pt"))


if __name__ == "__main__":
    device = "cuda"
    opt = BaseOptions().parse()
    opt.model.freeze_renderer = False
    opt.model.no_viewpoint_loss = opt.training.view_lambda == 0.0
    opt.training.camera = opt.camera
    opt.training.renderer_output_size = opt.model.renderer_spatial_output_dim
    opt.training.style_dim = opt.model.style_dim
    opt.training.with_sdf = not opt.rendering.no_sdf
    opt.inference.size = opt.model.size

    n_gpu = int(os.environ["WORLD_SIZE"]) if "WORLD_SIZE" in os.environ else 1
    opt.training.distributed = n_gpu > 1

    if opt.training.distributed:
        torch.cuda.set_device(opt.training.local_rank)
        torch.distributed.init_process_group(backend="nccl", init_method="env://")
        synchronize()

    # create checkpoints directories
    os.makedirs(os.path.join(opt.training.checkpoints_dir, opt.experiment.expname, 'volume_renderer'), exist_ok=True)

    generator = Generator(opt.model, opt.rendering, full_pipeline=False).to(device)
    discriminator = VolumeRenderDiscriminator(opt.model).to(device)
    g_ema = Generator(opt.model, opt.rendering, ema=True, full_pipeline=False).to(device)
    g_ema.eval()
    accumulate(g_ema, generator, 0)

    g_optim = optim.Adam(generator.parameters(), lr=2e-5, betas=(0, 0.9))
    d_optim = optim.Adam(discriminator.parameters(), lr=2e-4, betas=(0, 0.9))

    if opt.training.distributed:
        generator = nn.parallel.DistributedDataParallel(generator, device_ids=[opt.training.local_rank],
                                                        output_device=opt.training.local_rank, broadcast_buffers=False,
                                                        find_unused_parameters=True)
        discriminator = nn.parallel.DistributedDataParallel(discriminator, device_ids=[opt.training.local_rank],
                                                            output_device=opt.training.local_rank, broadcast_buffers=False,
                                                            find_unused_parameters=True)

    transform = transforms.Compose([transforms.ToTensor(), transforms.RandomHorizontalFlip(), transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5), inplace=True)])
    dataset = MultiResolutionDataset(opt.dataset.dataset_path, transform, opt.model.size, opt.model.renderer_spatial_output_dim)
    loader = data.DataLoader(dataset, batch_size=opt.training.batch, sampler=data_sampler(dataset, shuffle=True, distributed=opt.training.distributed), drop_last=True)
    opt.training.dataset_name = opt.dataset.dataset_path.lower()

    train(opt.training, opt.experiment, loader, generator, discriminator, g_optim, d_optim, g_ema, device)
