import datetime
import logging
import os
import time

import numpy as np
import scipy.stats as st
import torch
import torch.nn.functional as F
import torchvision.transforms as Transforms
from torch.utils.data import DataLoader
from torch.utils.tensorboard import SummaryWriter
from torchvision.utils import make_grid, save_image

from datasets import get_dataset, data_transform, inverse_data_transform
from losses import get_optimizer, warmup_lr
from losses.dsm import anneal_dsm_score_estimation
from models import (ddpm_sampler, FPndm_sampler, DDIM_sampler, anneal_Langevin_dynamics,
                    get_sigmas)
from models.ema import EMAHelper
from models.fvd.fvd import get_fvd_feats, frechet_distance, load_i3d_pretrained

__all__ = ['NCSNRunner']


def get_model(config):
    version = getattr(config.model, 'version', 'SMLD').upper()
    arch = getattr(config.model, 'arch', 'ncsn')

    if arch == 'unetmore':
        from models.better.ncsnpp_more import UNetMore_DDPM  # This lets the code run on CPU when 'unetmore' is not used
        return UNetMore_DDPM(config).to(config.device)
    elif arch in ['unetmore3d', 'unetmorepseudo3d']:
        from models.better.ncsnpp_more import UNetMore_DDPM
        # TODO: 3d, pseudo3d
        return UNetMore_DDPM(config).to(config.device)
    else:
        raise NotImplementedError(f"Architecture {arch} is not implemented")


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
        else:
            future_frames = X[:, cond + train:cond + train + future].reshape(len(X), -1, imsize, imsize)
            if prob_mask_future > 0.0:
                if getattr(config.data, "prob_mask_sync", False):
                    future_mask = cond_mask
                else:
                    future_mask = (torch.rand(X.shape[0], device=X.device) > prob_mask_future)
                future_frames = future_mask.reshape(-1, 1, 1, 1) * future_frames
                future_mask = future_mask.to(torch.int32)  # make 0,1
            else:
                future_mask = None
        cond_frames = torch.cat([cond_frames, future_frames], dim=1)
    else:
        future_mask = None

    return pred_frames, cond_frames, cond_mask


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

        self.calc_ssim = getattr(self.config.sampling, "ssim", False)
        self.calc_fvd = getattr(self.config.sampling, "fvd", False)
        self.calc_fvd1 = self.calc_fvd and getattr(self.config.sampling, "fvd1", False)

    def get_mode(self):
        self.condf, self.condp = self.config.data.num_frames_cond, getattr(self.config.data, "prob_mask_cond", 0.0)
        self.futrf, self.futrp = getattr(self.config.data, "num_frames_future", 0), getattr(self.config.data, "prob_mask_future", 0.0)
        self.prob_mask_sync = getattr(self.config.data, "prob_mask_sync", False)
        if not getattr(self.config.sampling, "ssim", False):
            if getattr(self.config.sampling, "fvd", False):
                self.mode_pred, self.mode_interp, self.mode_gen = None, None, "three"
            else:
                self.mode_pred, self.mode_interp, self.mode_gen = None, None, None
        elif self.condp == 0.0 and self.futrf == 0:
            self.mode_pred, self.mode_interp, self.mode_gen = "one", None, None
        elif self.condp == 0.0 and self.futrf > 0 and self.futrp == 0.0:
            self.mode_pred, self.mode_interp, self.mode_gen = None, "one", None
        else:
            self.mode_pred, self.mode_interp, self.mode_gen = "one", "one", "one"

    def get_time(self):
        curr_time = time.time()
        curr_time_str = datetime.datetime.fromtimestamp(curr_time).strftime('%Y-%m-%d %H:%M:%S')
        elapsed = str(datetime.timedelta(seconds=(curr_time - self.start_time)))
        return curr_time_str, elapsed

    def train(self):
        # Dataset
        dataset, test_dataset = get_dataset(self.args.data_path, self.config, video_frames_pred=self.config.data.num_frames)
        dataloader = DataLoader(dataset, batch_size=self.config.training.batch_size, shuffle=True,
                                num_workers=self.config.data.num_workers, drop_last=True,
                                pin_memory=not self.args.no_pin_memory)
        test_loader = DataLoader(test_dataset, batch_size=self.config.training.batch_size, shuffle=True,
                                 num_workers=self.config.data.num_workers, drop_last=True,
                                 pin_memory=not self.args.no_pin_memory)
        test_iter = iter(test_loader)
        self.config.input_dim = self.config.data.image_size ** 2 * self.config.data.channels

        # tb_logger
        self.tb_logger = SummaryWriter(log_dir=os.path.join(self.args.log_path, 'tb'))

        # Model
        scorenet = get_model(self.config)
        scorenet = torch.nn.DataParallel(scorenet)

        logging.info(f"Number of parameters: {sum([p.numel() for p in scorenet.parameters()])}")
        logging.info(f"Number of trainable parameters: {sum([p.numel() for p in scorenet.parameters() if p.requires_grad])}")

        # Optimizer
        optimizer = get_optimizer(self.config, scorenet.parameters())

        # Resume
        start_epoch, step = 0, 0
        if self.args.resume_training:
            states = torch.load(os.path.join(self.args.log_path, 'checkpoint.pt'), map_location=self.config.device)
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

        # Sigmas
        sigmas = get_sigmas(self.config)

        # Conditional
        conditional = self.config.data.num_frames_cond > 0
        cond, test_cond = None, None

        # Initialize meters
        self.init_meters()

        # Start training
        self.start_time = time.time()
        self.total_train_time = 0
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
                                                     prob_mask_future=getattr(self.config.data, 'prob_mask_future', 0.0),
                                                     conditional=conditional)

                # Loss
                itr_start = time.time()
                loss = anneal_dsm_score_estimation(scorenet, X, sigmas, None,
                                                   labels=None, loss_type=getattr(self.config.training, 'loss_type', 'a'),
                                                   hook=None, cond=cond, cond_mask=cond_mask,
                                                   gamma=getattr(self.config.model, 'gamma', False),
                                                   L1=getattr(self.config.training, 'L1', False), all_frames=getattr(self.config.model, 'output_all_frames', False))
                # tb_hook()

                # Optimize
                loss.backward()
                grad_norm = torch.nn.utils.clip_grad_norm_(scorenet.parameters(), getattr(self.config.optim, 'grad_clip', np.inf))
                optimizer.step()

                # Training time
                itr_time = time.time() - itr_start
                self.total_train_time += itr_time
                self.time_train.update(itr_time)

                # Record
                self.losses_train.update(loss.item(), step)
                self.epochs.update(epoch + (batch + 1) / len(dataloader))
                self.lr_meter.update(lr)
                self.grad_norm.update(grad_norm.item())
                if step == 1 or step % getattr(self.config.training, "log_freq", 1) == 0:
                    logging.info("elapsed: {}, train time: {:.04f}, mem: {:.03f}GB, GPUmem: {:.03f}GB, step: {}, lr: {:.06f}, grad: {:.04f}, loss: {:.04f}".format(
                        str(datetime.timedelta(seconds=(time.time() - self.start_time)))[:-3],
                        self.time_train.val, get_proc_mem(), get_GPU_mem(), step, lr, grad_norm, loss.item()))
                    self.tb_logger.add_scalar('loss', loss, global_step=step)

                if self.config.model.ema:
                    ema_helper.update(scorenet)

                if step >= self.config.training.n_iters:
                    return 0

                # Save model
                if step % self.config.training.snapshot_freq == 0:
                    states = [
                        scorenet.state_dict(),
                        optimizer.state_dict(),
                        epoch,
                        step,
                    ]
                    if self.config.model.ema:
                        states.append(ema_helper.state_dict())

                    logging.info(f"Saving checkpoint.pt in {self.args.log_path}")
                    torch.save(states, os.path.join(self.args.log_path, 'checkpoint_{}.pt'.format(step)))
                    torch.save(states, os.path.join(self.args.log_path, 'checkpoint.pt'))

                # Get test data
                if step % self.config.training.val_freq == 0:
                    try:
                        test_X, test_y = next(test_iter)
                    except StopIteration:
                        test_iter = iter(test_loader)
                        test_X, test_y = next(test_iter)

                    test_X = test_X.to(self.config.device)
                    test_X = data_transform(self.config, test_X)
                    test_X, test_cond, test_cond_mask = conditioning_fn(self.config, test_X, num_frames_pred=self.config.data.num_frames,
                                                                        prob_mask_cond=getattr(self.config.data, 'prob_mask_cond', 0.0),
                                                                        prob_mask_future=getattr(self.config.data, 'prob_mask_future', 0.0),
                                                                        conditional=conditional)

                    if self.config.model.ema:
                        test_scorenet = ema_helper.ema_copy(scorenet)
                    else:
                        test_scorenet = scorenet

                    test_scorenet.eval()
                    with torch.no_grad():
                        test_dsm_loss = anneal_dsm_score_estimation(test_scorenet, test_X, sigmas, None,
                                                                    cond=test_cond, cond_mask=test_cond_mask,
                                                                    loss_type=getattr(self.config.training, 'loss_type', 'a'),
                                                                    gamma=getattr(self.config.model, 'gamma', False),
                                                                    L1=getattr(self.config.training, 'L1', False))
                    self.tb_logger.add_scalar('test_loss', test_dsm_loss, global_step=step)
                    self.losses_test.update(test_dsm_loss.item(), step)
                    logging.info("elapsed: {}, step: {}, test_loss: {:.04f}".format(
                        str(datetime.timedelta(seconds=(time.time() - self.start_time)))[:-3], step, test_dsm_loss.item()))

                    del test_scorenet

                # Sample from model and compute FVD
                if self.calc_fvd and step % self.config.training.sample_freq == 0:
                    torch.cuda.empty_cache()
                    vid_metrics = self.video_gen(scorenet=scorenet, ckpt=step, train=True)
                    logging.info(f"step {step}: FVD {vid_metrics.get('fvd', -1):.3f}")
                    torch.cuda.empty_cache()  # drop sampler buffers before training resumes

    def init_meters(self):
        self.epochs = RunningAverageMeter()
        self.losses_train, self.losses_test = RunningAverageMeter(), RunningAverageMeter()
        self.lr_meter, self.grad_norm = RunningAverageMeter(), RunningAverageMeter()
        self.time_train, self.time_elapsed = RunningAverageMeter(), RunningAverageMeter()

    def load_model(self, ckpt_path=None):
        if ckpt_path is None:
            ckpt_path = os.path.join(self.args.log_path, 'checkpoint.pt')
        states = torch.load(ckpt_path, map_location=self.config.device)
        scorenet = get_model(self.config)
        scorenet = torch.nn.DataParallel(scorenet, device_ids=list(range(torch.cuda.device_count())))
        scorenet.load_state_dict(states[0], strict=False)
        scorenet.eval()
        if self.config.model.ema:
            ema_helper = EMAHelper(mu=self.config.model.ema_rate)
            ema_helper.register(scorenet)
            ema_helper.load_state_dict(states[-1])
            ema_helper.ema(scorenet)
        return scorenet

    @torch.no_grad()
    def video_gen(self, scorenet=None, ckpt=None, train=False):
        if scorenet is None:
            scorenet = self.load_model()
        if self.calc_fvd:
            i3d = load_i3d_pretrained(self.config.device)

        dataset, test_dataset = get_dataset(self.args.data_path, self.config,
                                            video_frames_pred=self.config.data.num_frames)
        test_loader = DataLoader(test_dataset, batch_size=self.config.fast_fid.batch_size, shuffle=False,
                                 num_workers=self.config.data.num_workers, drop_last=False)
        sampler = ddpm_sampler if self.version == "DDPM" else DDIM_sampler
        sigmas = get_sigmas(self.config)

        real_embeddings, fake_embeddings = [], []
        for i, (real, _) in enumerate(test_loader):
            if i >= self.config.fast_fid.num_samples // self.config.fast_fid.batch_size:
                break
            real = data_transform(self.config, real.to(self.config.device))
            real, cond, cond_mask = conditioning_fn(self.config, real, num_frames_pred=self.config.data.num_frames,
                                                    conditional=self.config.data.num_frames_cond > 0)
            init = torch.rand_like(real)
            pred = sampler(init, scorenet, cond=cond, cond_mask=cond_mask, n_steps_each=self.config.sampling.n_steps_each,
                           step_lr=self.config.sampling.step_lr, just_beta=False, final_only=True,
                           denoise=self.config.sampling.denoise, subsample_steps=getattr(self.config.sampling, 'subsample', None),
                           clip_before=getattr(self.config.sampling, 'clip_before', True), verbose=False, log=False, gamma=False)
            pred = inverse_data_transform(self.config, pred[-1])
            real = inverse_data_transform(self.config, real)
            if self.calc_fvd:
                ch, imsize = self.config.data.channels, self.config.data.image_size
                real_embeddings.append(get_fvd_feats(stretch_image(real, ch, imsize).unsqueeze(1), i3d=i3d, device=self.config.device))
                fake_embeddings.append(get_fvd_feats(stretch_image(pred, ch, imsize).unsqueeze(1), i3d=i3d, device=self.config.device))

        vid_metrics = {}
        if self.calc_fvd:
            real_embeddings = np.concatenate(real_embeddings)
            fake_embeddings = np.concatenate(fake_embeddings)
            vid_metrics['fvd'] = frechet_distance(fake_embeddings, real_embeddings)
        if train:
            save_image(make_grid(pred[:16], nrow=4), os.path.join(self.args.log_sample_path, f'video_{ckpt}.png'))
        return vid_metrics


class RunningAverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self, momentum=0.99):
        self.momentum = momentum
        self.reset()

    def reset(self):
        self.val = None
        self.avg = 0
        self.sum = 0
        self.count = 0
        self.vals = []
        self.steps = []

    def update(self, val, step=None):
        if self.val is None:
            self.avg = val
        else:
            self.avg = self.avg * self.momentum + val * (1 - self.momentum)
        self.val = val
        self.sum += val
        self.count += 1
        self.vals.append(val)
        if step is not None:
            self.steps.append(step)


def get_proc_mem():
    import psutil
    return psutil.Process(os.getpid()).memory_info().rss / 1024 ** 3


def get_GPU_mem():
    try:
        num = torch.cuda.device_count()
        mem = 0
        for i in range(num):
            mem_free, mem_total = torch.cuda.mem_get_info(i)
            mem += (mem_total - mem_free) / 1024 ** 3
        return mem
    except:
        return 0
