import datetime
import glob
import logging
import numpy as np
import os
import pickle
import psutil
import scipy.stats as st
import sys
import time
import yaml

import torch
import torch.nn.functional as F
import torchvision.transforms as Transforms

from collections import OrderedDict
from functools import partial
from math import ceil
from torch.distributions.gamma import Gamma
from torch.utils.data import DataLoader
from torchvision.utils import make_grid, save_image
from tqdm import tqdm

from datasets import get_dataset, data_transform, inverse_data_transform
from losses import get_optimizer, warmup_lr
from losses.dsm import anneal_dsm_score_estimation
from models import (ddpm_sampler, ddim_sampler, FPNDM_sampler, anneal_Langevin_dynamics,
                    anneal_Langevin_dynamics_consistent, get_sigmas)
from models.ema import EMAHelper
from models.fvd.fvd import get_fvd_feats, frechet_distance, load_i3d_pretrained

__all__ = ['NCSNRunner']


def count_training_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def count_parameters(model):
    return sum(p.numel() for p in model.parameters())


def get_model(config):
    version = getattr(config.model, 'version', 'SMLD').upper()
    arch = getattr(config.model, 'arch', 'ncsn')
    depth = getattr(config.model, 'depth', 'deep')

    if arch == 'unetmore':
        from models.better.ncsnpp_more import UNetMore_DDPM  # This lets the code run on CPU when 'unetmore' is not used
        return UNetMore_DDPM(config).to(config.device)
    elif arch in ['unetmore3d', 'unetmorepseudo3d']:
        from models.better.ncsnpp_more import UNetMore_DDPM
        # TODO: make sure that 3d convs are used
        return UNetMore_DDPM(config).to(config.device)
    else:
        Exception("arch is not valid [ncsn, unet, unetmore, unetmore3d]")


def conditioning_fn(config, X, num_frames_pred=0, prob_mask_cond=0.0, prob_mask_future=0.0, conditional=True):
    imsize = config.data.image_size
    if not conditional:
        return X.reshape(len(X), -1, imsize, imsize), None, None

    cond = config.data.num_frames_cond
    train = config.data.num_frames
    pred = num_frames_pred
    future = getattr(config.data, "num_frames_future", 0)

    # Frames to train on / sample
    pred_frames = X[:, cond:cond + pred].reshape(len(X), -1, imsize, imsize)

    # Condition (Past)
    cond_frames = X[:, :cond].reshape(len(X), -1, imsize, imsize)

    if prob_mask_cond > 0.0:
        cond_mask = (torch.rand(X.shape[0], device=X.device) > prob_mask_cond)
        cond_frames = cond_mask.reshape(-1, 1, 1, 1) * cond_frames
        cond_mask = cond_mask.to(torch.int32)  # make 0,1
    else:
        cond_mask = None

    # Future
    if future > 0:

        if prob_mask_future == 1.0:
            future_frames = torch.zeros(len(X), config.data.channels * future, imsize, imsize)
            # future_mask = torch.zeros(len(X), 1, 1, 1).to(torch.int32) # make 0,1
        else:
            future_frames = X[:, cond + train:cond + train + future].reshape(len(X), -1, imsize, imsize)
            if prob_mask_future > 0.0:
                if getattr(config.data, "prob_mask_sync", False):
                    future_mask = cond_mask
                else:
                    future_mask = (torch.rand(X.shape[0], device=X.device) > prob_mask_future)
                future_frames = future_mask.reshape(-1, 1, 1, 1) * future_frames
            #     future_mask = future_mask.to(torch.int32) # make 0,1
            # else:
            #     future_mask = None

        cond_frames = torch.cat([cond_frames, future_frames], dim=1)

    return pred_frames, cond_frames, cond_mask   # , future_mask


def stretch_image(X, ch, imsize):
    return X.reshape(len(X), -1, ch, imsize, imsize).permute(0, 2, 1, 4, 3).reshape(len(X), ch, -1, imsize).permute(0, 1, 3, 2)


class NCSNRunner():
    def __init__(self, args, config, config_uncond=None):
        self.args = args
        self.config = config
        self.config_uncond = config_uncond
        self.version = getattr(self.config.model, 'version', "SMLD")
        args.log_sample_path = os.path.join(args.log_path, 'samples')
        os.makedirs(args.log_sample_path, exist_ok=True)
        self.get_mode()

    def get_mode(self):
        self.condf, self.condp = self.config.data.num_frames_cond, getattr(self.config.data, "prob_mask_cond", 0.0)
        self.futrf, self.futrp = getattr(self.config.data, "num_frames_future", 0), getattr(self.config.data, "prob_mask_future", 0.0)
        self.prob_mask_sync = getattr(self.config.data, "prob_mask_sync", False)
        if not getattr(self.config.sampling, "ssim", False):
            if getattr(self.config.sampling, "fvd", False):
                self.mode_pred, self.mode_interp, self.mode_gen = None, None, None
                if self.condp == 0.0 and self.futrf == 0:                                                   # (1) Prediction
                    self.mode_pred = "one"
                elif self.condp == 0.0 and self.futrf > 0 and self.futrp == 0.0:                            # (1) Interpolation
                    self.mode_interp = "one"
                elif self.condp == 0.0 and self.futrf > 0 and self.futrp > 0.0:                             # (1) Interp + (2) Pred
                    self.mode_interp = "one"
                    self.mode_pred = "two"
                elif self.condp > 0.0 and self.futrf == 0:                                                  # (1) Pred + (3) Gen
                    self.mode_pred = "one"
                    self.mode_gen = "three"
                elif self.condp > 0.0 and self.futrf > 0 and self.futrp > 0.0 and not self.prob_mask_sync:  # (1) Interp + (2) Pred + (3) Gen
                    self.mode_interp = "one"
                    self.mode_pred = "two"
                    self.mode_gen = "three"
                elif self.condp > 0.0 and self.futrf > 0 and self.futrp > 0.0 and self.prob_mask_sync:      # (1) Interp + (3) Gen
                    self.mode_interp = "one"
                    self.mode_gen = "three"

    def get_sampler(self):
        # Sampler
        if self.version == "SMLD":
            consistent = getattr(self.config.sampling, 'consistent', False)
            sampler = anneal_Langevin_dynamics_consistent if consistent else anneal_Langevin_dynamics
        elif self.version == "DDPM":
            sampler = partial(ddpm_sampler, config=self.config)
        elif self.version == "DDIM":
            sampler = partial(ddim_sampler, config=self.config)
        elif self.version == "FPNDM":
            sampler = partial(FPNDM_sampler, config=self.config)
        return sampler

    def train(self):
        # Training dataset
        dataset, test_dataset = get_dataset(self.args.data_path, self.config, video_frames_pred=self.config.data.num_frames, start_at=self.args.start_at)
        dataloader = DataLoader(dataset, batch_size=self.config.training.batch_size, shuffle=True,
                                num_workers=self.config.data.num_workers)
        test_loader = DataLoader(test_dataset, batch_size=self.config.training.batch_size, shuffle=True,
                                 num_workers=self.config.data.num_workers, drop_last=True)
        test_iter = iter(test_loader)

        # tb_logger
        tb_logger = self.config.tb_logger

        # Model
        scorenet = torch.nn.DataParallel(get_model(self.config))

        logging.info(f"Number of parameters: {count_parameters(scorenet)}")
        logging.info(f"Number of trainable parameters: {count_training_parameters(scorenet)}")

        # Optimizer
        optimizer = get_optimizer(self.config, scorenet.parameters())

        # Resume
        start_epoch = 0
        step = 0
        if self.args.resume_training:
            states = torch.load(os.path.join(self.args.log_path, 'checkpoint.pt'))
            scorenet.load_state_dict(states[0])
            ### Make sure we can resume with different eps
            states[1]['param_groups'][0]['eps'] = self.config.optim.eps
            optimizer.load_state_dict(states[1])
            start_epoch = states[2]
            step = states[3]
            logging.info(f"Resuming training from checkpoint.pt in {self.args.log_path} at epoch {start_epoch}, step {step}.")

        # EMA
        if self.config.model.ema:
            ema_helper = EMAHelper(mu=self.config.model.ema_rate)
            ema_helper.register(scorenet)
            if self.args.resume_training:
                ema_helper.load_state_dict(states[4])

        net = scorenet.module if hasattr(scorenet, 'module') else scorenet

        # Conditional
        conditional = self.config.data.num_frames_cond > 0
        cond, test_cond = None, None

        # Initialize meters
        self.init_meters()

        # Initial samples
        n_init_samples = min(36, self.config.training.batch_size)
        init_samples_shape = (n_init_samples, self.config.data.channels * self.config.data.num_frames, self.config.data.image_size, self.config.data.image_size)
        if self.version == "SMLD":
            init_samples = torch.rand(init_samples_shape, device=self.config.device)
            init_samples = data_transform(self.config, init_samples)
        elif self.version == "DDPM" or self.version == "DDIM" or self.version == "FPNDM":
            if getattr(self.config.model, 'gamma', False):
                used_k, used_theta = net.k_cum[0], net.theta_t[0]
                z = Gamma(torch.full(init_samples_shape, used_k), torch.full(init_samples_shape, 1 / used_theta)).sample().to(self.config.device)
                init_samples = z - used_k * used_theta  # we don't scale here
            else:
                init_samples = torch.randn(init_samples_shape, device=self.config.device)

        # Sampler
        sampler = self.get_sampler()

        self.total_train_time = 0
        self.start_time = time.time()

        early_end = False
        for epoch in range(start_epoch, self.config.training.n_epochs):
            for batch, (X, y) in enumerate(dataloader):

                optimizer.zero_grad()
                lr = warmup_lr(optimizer, step, getattr(self.config.optim, 'warmup', 0), self.config.optim.lr)
                scorenet.train()
                step += 1

                # Data
                X = X.to(self.config.device)
                X = data_transform(self.config, X)
                X, cond, cond_mask = conditioning_fn(self.config, X, num_frames_pred=self.config.data.num_frames,
                                                     prob_mask_cond=getattr(self.config.data, 'prob_mask_cond', 0.0),
                                                     prob_mask_future=getattr(self.config.data, 'prob_mask_future', 0.0))

                # Loss
                itr_start = time.time()
                loss = anneal_dsm_score_estimation(scorenet, X, labels=None, cond=cond, cond_mask=cond_mask,
                                                   loss_type=getattr(self.config.training, 'loss_type', 'a'),
                                                   gamma=getattr(self.config.model, 'gamma', False),
                                                   L1=getattr(self.config.training, 'L1', False), hook=None,
                                                   all_frames=getattr(self.config.model, 'output_all_frames', False))
                # Optimize
                loss.backward()
                grad_norm = torch.nn.utils.clip_grad_norm_(scorenet.parameters(), getattr(self.config.optim, 'grad_clip', np.inf))
                optimizer.step()

                # Training time
                itr_time = time.time() - itr_start
                self.total_train_time += itr_time
                self.time_train.update(itr_time)

                # Record
                self.losses_train.update(loss.item(), epoch, step)
                self.epochs.update(epoch + (batch + 1) / len(dataloader))
                self.lr_meter.update(lr)
                self.grad_norm.update(grad_norm.item())
                if step == 1 or step % getattr(self.config.training, "log_freq", 1) == 0:
                    logging.info("elapsed: {}, train time: {:.04f}, mem: {:.03f}GB, GPUmem: {:.03f}GB, step: {}, lr: {:.06f}, grad: {:.04f}, loss: {:.04f}".format(
                        str(datetime.timedelta(seconds=(time.time() - self.start_time)))[:-3],
                        self.time_train.val, get_proc_mem(), get_GPU_mem(), step, lr, grad_norm, loss.item()))

                if self.config.model.ema:
                    ema_helper.update(scorenet)

                if step >= self.config.training.n_iters:
                    early_end = True
                    break

                # Save model
                if (step % 1000 == 0 and step != 0) or step % self.config.training.snapshot_freq == 0:
                    states = [
                        scorenet.state_dict(),
                        optimizer.state_dict(),
                        epoch,
                        step,
                    ]
                    if self.config.model.ema:
                        states.append(ema_helper.state_dict())
                    logging.info(f"Saving checkpoint.pt in {self.args.log_path}")
                    torch.save(states, os.path.join(self.args.log_path, 'checkpoint.pt'))
                    if step % self.config.training.snapshot_freq == 0:
                        ckpt_path = os.path.join(self.args.log_path, f'checkpoint_{step}.pt')
                        logging.info(f"Saving {ckpt_path}")
                        torch.save(states, ckpt_path)

                test_scorenet = None
                # Get test_scorenet
                if step == 1 or step % self.config.training.val_freq == 0 or (step % self.config.training.snapshot_freq == 0 and self.config.training.snapshot_sampling):
                    if self.config.model.ema:
                        test_scorenet = ema_helper.ema_copy(scorenet)
                    else:
                        test_scorenet = scorenet
                    test_scorenet.eval()

                # Validation
                if step == 1 or step % self.config.training.val_freq == 0:
                    try:
                        test_X, test_y = next(test_iter)
                    except StopIteration:
                        test_iter = iter(test_loader)
                        test_X, test_y = next(test_iter)

                    test_X = test_X.to(self.config.device)
                    test_X = data_transform(self.config, test_X)
                    test_X, test_cond, test_cond_mask = conditioning_fn(self.config, test_X, num_frames_pred=self.config.data.num_frames,
                                                                        prob_mask_cond=getattr(self.config.data, 'prob_mask_cond', 0.0),
                                                                        prob_mask_future=getattr(self.config.data, 'prob_mask_future', 0.0))

                    with torch.no_grad():
                        test_dsm_loss = anneal_dsm_score_estimation(test_scorenet, test_X, labels=None, cond=test_cond, cond_mask=test_cond_mask,
                                                                    loss_type=getattr(self.config.training, 'loss_type', 'a'),
                                                                    gamma=getattr(self.config.model, 'gamma', False),
                                                                    L1=getattr(self.config.training, 'L1', False), hook=None,
                                                                    all_frames=getattr(self.config.model, 'output_all_frames', False))
                    self.losses_test.update(test_dsm_loss.item(), epoch, step)
                    logging.info("elapsed: {}, step: {}, mem: {:.03f}GB, GPUmem: {:.03f}GB, test_loss: {:.04f}".format(
                        str(datetime.timedelta(seconds=(time.time() - self.start_time)))[:-3],
                        step, get_proc_mem(), get_GPU_mem(), test_dsm_loss.item()))

                    del test_scorenet
                    torch.cuda.empty_cache()

            if early_end:
                break

        # Save model at the very end
        states = [
            scorenet.state_dict(),
            optimizer.state_dict(),
            epoch,
            step,
        ]
        if self.config.model.ema:
            states.append(ema_helper.state_dict())
        logging.info(f"Saving checkpoint.pt in {self.args.log_path}")
        torch.save(states, os.path.join(self.args.log_path, 'checkpoint.pt'))
        torch.save(states, os.path.join(self.args.log_path, f'checkpoint_{step}.pt'))

    def init_meters(self):
        success = self.load_meters()
        if not success:
            self.epochs = RunningAverageMeter()
            self.losses_train, self.losses_test = RunningAverageMeter(), RunningAverageMeter()
            self.lr_meter, self.grad_norm = RunningAverageMeter(), RunningAverageMeter()
            self.time_train, self.time_elapsed = RunningAverageMeter(), RunningAverageMeter()
            self.fvds = RunningAverageMeter()

    def load_meters(self):
        meters_pkl = os.path.join(self.args.log_path, 'meters.pkl')
        if not os.path.exists(meters_pkl):
            print(f"{meters_pkl} does not exist! Returning.")
            return False
        with open(meters_pkl, "rb") as f:
            a = pickle.load(f)
        self.epochs = a['epochs']
        self.losses_train = a['losses_train']
        self.losses_test = a['losses_test']
        self.lr_meter = a['lr_meter']
        self.grad_norm = a['grad_norm']
        self.time_train = a['time_train']
        self.time_elapsed = a['time_elapsed']
        self.fvds = a['fvds']
        return True

    @torch.no_grad()
    def video_gen(self):
        # Checkpoint
        if self.args.ckpt is None:
            ckpt_path = os.path.join(self.args.log_path, 'checkpoint.pt')
        else:
            ckpt_path = os.path.join(self.args.log_path, f'checkpoint_{self.args.ckpt}.pt')
        logging.info(f"Loading {ckpt_path}")
        states = torch.load(ckpt_path, map_location=self.config.device)

        scorenet = get_model(self.config)
        scorenet = torch.nn.DataParallel(scorenet)
        scorenet.load_state_dict(states[0], strict=True)
        scorenet.eval()

        if self.config.model.ema and not self.args.no_ema:
            ema_helper = EMAHelper(mu=self.config.model.ema_rate)
            ema_helper.register(scorenet)
            ema_helper.load_state_dict(states[-1])
            ema_helper.ema(scorenet)

        net = scorenet.module if hasattr(scorenet, 'module') else scorenet

        # Data
        dataset, test_dataset = get_dataset(self.args.data_path, self.config, video_frames_pred=self.config.sampling.num_frames_pred, start_at=self.args.start_at)
        test_loader = DataLoader(test_dataset, batch_size=self.config.sampling.batch_size, shuffle=True,
                                 num_workers=self.config.data.num_workers, drop_last=False)

        conditional = self.config.data.num_frames_cond > 0
        calc_fvd = getattr(self.config.sampling, "fvd", False)

        if calc_fvd:
            i3d = load_i3d_pretrained(self.config.device)
            real_embeddings, fake_embeddings = [], []

        sampler = self.get_sampler()
        preds_all, gt_all = [], []
        for i, (test_x, test_y) in enumerate(tqdm(test_loader, desc="video_gen")):

            if self.args.subsample is not None and i * self.config.sampling.batch_size >= self.args.subsample:
                break

            test_x = data_transform(self.config, test_x)
            real, cond, cond_mask = conditioning_fn(self.config, test_x, num_frames_pred=self.config.sampling.num_frames_pred,
                                                    prob_mask_cond=getattr(self.config.data, 'prob_mask_cond', 0.0),
                                                    prob_mask_future=getattr(self.config.data, 'prob_mask_future', 0.0))
            real = inverse_data_transform(self.config, real)
            cond = cond.to(self.config.device)

            init_samples_shape = (real.shape[0], self.config.data.channels * self.config.data.num_frames,
                                  self.config.data.image_size, self.config.data.image_size)
            init_samples = torch.randn(init_samples_shape, device=self.config.device)

            n_iter_frames = ceil(self.config.sampling.num_frames_pred / self.config.data.num_frames)
            pred_samples = []
            last_frame = None
            for i_frame in range(n_iter_frames):
                gen_samples = sampler(init_samples, scorenet, cond=cond, cond_mask=cond_mask,
                                      n_steps_each=self.config.sampling.n_steps_each,
                                      step_lr=self.config.sampling.step_lr, verbose=False,
                                      final_only=True, denoise=self.config.sampling.denoise,
                                      subsample_steps=getattr(self.config.sampling, 'subsample', None),
                                      clip_before=getattr(self.config.sampling, 'clip_before', True),
                                      t_min=getattr(self.config.sampling, 'init_prev_t', -1),
                                      log=False, gamma=getattr(self.config.model, 'gamma', False))
                gen_samples = gen_samples[-1].reshape(gen_samples[-1].shape[0], self.config.data.channels * self.config.data.num_frames,
                                                      self.config.data.image_size, self.config.data.image_size)
                pred_samples.append(gen_samples.to('cpu'))

                if i_frame == n_iter_frames - 1:
                    continue

                # autoregressive: condition on the last generated frames
                cond = torch.cat([cond[:, self.config.data.channels * self.config.data.num_frames:],
                                  gen_samples[:, -self.config.data.channels * self.config.data.num_frames_cond:]], dim=1) \
                    if self.config.data.num_frames_cond > self.config.data.num_frames else \
                    gen_samples[:, -self.config.data.channels * self.config.data.num_frames_cond:]
                init_samples = torch.randn(init_samples_shape, device=self.config.device)

            pred = torch.cat(pred_samples, dim=1)[:, :self.config.data.channels * self.config.sampling.num_frames_pred]
            pred = inverse_data_transform(self.config, pred)
            preds_all.append(pred)
            gt_all.append(real)

            if calc_fvd:
                # BTCHW -> BCTHW
                real_fvd = real.reshape(len(real), -1, self.config.data.channels, self.config.data.image_size, self.config.data.image_size).permute(0, 2, 1, 3, 4)
                pred_fvd = pred.reshape(len(pred), -1, self.config.data.channels, self.config.data.image_size, self.config.data.image_size).permute(0, 2, 1, 3, 4)
                if self.config.data.channels == 1:
                    real_fvd = real_fvd.repeat(1, 3, 1, 1, 1)
                    pred_fvd = pred_fvd.repeat(1, 3, 1, 1, 1)
                real_embeddings.append(get_fvd_feats(real_fvd, i3d=i3d, device=self.config.device))
                fake_embeddings.append(get_fvd_feats(pred_fvd, i3d=i3d, device=self.config.device))

            if i == 0:
                grid = make_grid(torch.cat([stretch_image(real[:8], self.config.data.channels, self.config.data.image_size),
                                            stretch_image(pred[:8], self.config.data.channels, self.config.data.image_size)]),
                                 nrow=1, padding=2, pad_value=1.0)
                save_image(grid, os.path.join(self.args.video_folder if hasattr(self.args, 'video_folder') else self.args.image_folder,
                                              f"videos_pred_{self.args.ckpt}.png"))

        if calc_fvd:
            fvd = frechet_distance(np.concatenate(fake_embeddings), np.concatenate(real_embeddings))
            logging.info(f"FVD: {fvd:.4f}")
            self.fvds.update(fvd)
        torch.cuda.empty_cache()  # free sampler buffers before the next checkpoint


class RunningAverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self, momentum=0.99):
        self.momentum = momentum
        self.reset()

    def reset(self):
        self.val = None
        self.avg = 0
        self.vals = []
        self.steps = []

    def update(self, val, epoch=None, step=None):
        if self.val is None:
            self.avg = val
        else:
            self.avg = self.avg * self.momentum + val * (1 - self.momentum)
        self.val = val
        self.vals.append(val)
        if step is not None:
            self.steps.append(step)


def get_proc_mem():
    return psutil.Process(os.getpid()).memory_info().rss / 1024**3


def get_GPU_mem():
    try:
        num = torch.cuda.device_count()
        mem = 0
        for i in range(num):
            mem_free, mem_total = torch.cuda.mem_get_info(i)
            mem += (mem_total - mem_free) / 1024**3
        return mem
    except:
        return 0
