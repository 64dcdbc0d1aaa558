import os
import time
import random
import datetime
import numpy as np
import torch
import torch.nn as nn
import torch.distributed as dist
import torch.backends.cudnn as cudnn
from torch.cuda.amp import autocast, GradScaler
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from datasets.aapm_dataset import AAPMSparseDataset
from utils.ct_tools import CTTools
from utils.metrics import compute_measure, AverageMeter

try:
    import wandb
except ImportError:
    wandb = None


class BasicTrainer(object):
    """Common plumbing: distributed setup, data, optimiser, checkpoints, logging.

    Sub-classes implement ``build_network`` and ``train_step``/``val_step``.
    """

    def __init__(self, opt):
        self.opt = opt
        self.init_distributed()
        self.set_seed(opt.seed + self.rank)
        self.ct_tools = CTTools(
            img_size=opt.img_size, num_views=opt.num_views, num_full_views=opt.num_full_views,
            det_count=opt.det_count, source_distance=opt.source_distance, det_distance=opt.det_distance,
            min_hu=opt.min_hu, max_hu=opt.max_hu, mu_water=opt.mu_water)
        self.net = self.build_network().to(self.device)
        if self.opt.dist:
            self.net = nn.SyncBatchNorm.convert_sync_batchnorm(self.net)
            self.net = DistributedDataParallel(self.net, device_ids=[self.local_rank],
                                               output_device=self.local_rank,
                                               find_unused_parameters=False)
        self.optimizer = torch.optim.AdamW(self.net.parameters(), lr=opt.lr,
                                           weight_decay=opt.weight_decay)
        self.scheduler = self.build_scheduler()
        self.scaler = GradScaler(enabled=opt.amp)
        self.start_epoch = 0
        self.best_psnr = 0.0
        self.itlog_intv = opt.log_interval
        self.checkpoint_dir = os.path.join(opt.checkpoint_root, self.run_name())
        if self.is_main:
            os.makedirs(self.checkpoint_dir, exist_ok=True)
        if opt.checkpoint_path:
            self.load_checkpoint(opt.checkpoint_path)
        self.init_logger()

    # ------------------------------------------------------------------ setup
    def init_distributed(self):
        if self.opt.dist:
            self.local_rank = int(os.environ.get('LOCAL_RANK', self.opt.local_rank))
            torch.cuda.set_device(self.local_rank)
            dist.init_process_group(backend='nccl', init_method='env://',
                                    timeout=datetime.timedelta(minutes=30))
            self.rank = dist.get_rank()
            self.world_size = dist.get_world_size()
            self.device = torch.device('cuda', self.local_rank)
        else:
            self.local_rank = 0
            self.rank = 0
            self.world_size = 1
            self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
        self.is_main = self.rank == 0

    @staticmethod
    def set_seed(seed):
        random.seed(seed)
        np.random.seed(seed)
        torch.manual_seed(seed)
        torch.cuda.manual_seed_all(seed)
        cudnn.benchmark = False
        cudnn.deterministic = True

    def run_name(self):
        return '{}_{}_{}v'.format(self.opt.network, self.opt.dataset_name, self.opt.num_views)

    def build_network(self):
        raise NotImplementedError

    def build_scheduler(self):
        if self.opt.scheduler == 'step':
            return torch.optim.lr_scheduler.StepLR(self.optimizer, self.opt.step_size, self.opt.step_gamma)
        return torch.optim.lr_scheduler.CosineAnnealingLR(self.optimizer, T_max=self.opt.epochs, eta_min=1e-6)

    def build_loader(self, mode):
        dataset = AAPMSparseDataset(self.opt.dataset_path, mode=mode, dataset_name=self.opt.dataset_name,
                                    min_hu=self.opt.min_hu, max_hu=self.opt.max_hu)
        shuffle = mode == 'train'
        sampler = DistributedSampler(dataset, shuffle=shuffle) if self.opt.dist else None
        loader = DataLoader(dataset, batch_size=self.opt.batch_size if mode == 'train' else 1,
                            shuffle=(shuffle and sampler is None), sampler=sampler,
                            num_workers=self.opt.num_workers, pin_memory=True,
                            drop_last=(mode == 'train'))
        return loader, sampler

    def init_logger(self):
        self.use_wandb = self.opt.use_wandb and wandb is not None and self.is_main
        if self.use_wandb:
            wandb.init(project=self.opt.wandb_project, name=self.run_name(), config=vars(self.opt))
        if self.is_main:
            print('=' * 80)
            print('device: {} ({})'.format(self.device, torch.cuda.get_device_name(self.device)))
            print('world size: {}, batch per GPU: {}'.format(self.world_size, self.opt.batch_size))
            print('=' * 80)

    # -------------------------------------------------------------- utilities
    @property
    def net_without_ddp(self):
        return self.net.module if isinstance(self.net, DistributedDataParallel) else self.net

    def reduce_value(self, value, average=True):
        if not self.opt.dist:
            return value
        value = value.clone()
        dist.all_reduce(value)
        if average:
            value /= self.world_size
        return value

    def log(self, stats, step):
        if self.use_wandb:
            wandb.log(stats, step=step)

    def save_checkpoint(self, epoch, is_best=False):
        if not self.is_main:
            return
        state = {
            'epoch': epoch,
            'net': self.net_without_ddp.state_dict(),
            'optimizer': self.optimizer.state_dict(),
            'scheduler': self.scheduler.state_dict(),
            'scaler': self.scaler.state_dict(),
            'best_psnr': self.best_psnr,
            'opt': vars(self.opt),
        }
        torch.save(state, os.path.join(self.checkpoint_dir, 'epoch_{}.pkl'.format(epoch)))
        if is_best:
            torch.save(state, os.path.join(self.checkpoint_dir, 'best.pkl'))

    def load_checkpoint(self, path):
        state = torch.load(path, map_location='cpu')
        self.net_without_ddp.load_state_dict(state['net'])
        if self.opt.trainer_mode == 'train':
            self.optimizer.load_state_dict(state['optimizer'])
            self.scheduler.load_state_dict(state['scheduler'])
            self.scaler.load_state_dict(state['scaler'])
            self.start_epoch = state['epoch'] + 1
            self.best_psnr = state.get('best_psnr', 0.0)
        if self.is_main:
            print('loaded checkpoint {} (epoch {})'.format(path, state['epoch']))

    def init_from_pretrained(self, path, strict=False):
        """Initialise (part of) the network from another run, e.g. FreeNet -> SeedNet."""
        state = torch.load(path, map_location='cpu')
        state = state.get('net', state)
        own = self.net_without_ddp.state_dict()
        matched = {k: v for k, v in state.items() if k in own and own[k].shape == v.shape}
        missing = [k for k in own if k not in matched]
        self.net_without_ddp.load_state_dict(matched, strict=strict)
        if self.is_main:
            print('initialised {} / {} tensors from {}'.format(len(matched), len(own), path))
            if missing:
                print('  not initialised: {}{}'.format(', '.join(missing[:8]), ' ...' if len(missing) > 8 else ''))

    # ---------------------------------------------------------------- loops
    def fit(self):
        train_loader, train_sampler = self.build_loader('train')
        val_loader, _ = self.build_loader('val')
        global_step = self.start_epoch * len(train_loader)
        for epoch in range(self.start_epoch, self.opt.epochs):
            if train_sampler is not None:
                train_sampler.set_epoch(epoch)
            self.net.train()
            loss_meter = AverageMeter()
            t0 = time.time()
            torch.cuda.reset_peak_memory_stats()
            for it, batch in enumerate(train_loader):
                batch = [b.to(self.device, non_blocking=True) for b in batch[:2]]
                losses = self.train_step(batch)
                loss = self.reduce_value(losses['loss'].detach())
                loss_meter.update(loss.item(), batch[0].size(0))
                global_step += 1
                if self.is_main and it % self.itlog_intv == 0:
                    mem = torch.cuda.max_memory_allocated() / 1024 ** 3
                    print('[epoch {:>3d}][{:>5d}/{:>5d}] loss {:.4e} lr {:.2e} mem {:.1f}G {:.1f}s'.format(
                        epoch, it, len(train_loader), loss_meter.avg,
                        self.optimizer.param_groups[0]['lr'], mem, time.time() - t0))
                    self.log({k: v.item() for k, v in losses.items()}, global_step)
            self.scheduler.step()
            psnr = self.validate(val_loader, epoch)
            is_best = psnr > self.best_psnr
            self.best_psnr = max(psnr, self.best_psnr)
            if (epoch + 1) % self.opt.save_epochs == 0 or is_best:
                self.save_checkpoint(epoch, is_best)
            if self.opt.dist:
                dist.barrier()
        if self.opt.dist:
            dist.destroy_process_group()

    def backward_and_step(self, loss):
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        if self.opt.grad_clip > 0:
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.opt.grad_clip)
        self.scaler.step(self.optimizer)
        self.scaler.update()

    @torch.no_grad()
    def validate(self, val_loader, epoch):
        self.net.eval()
        meters = {k: AverageMeter() for k in ('psnr', 'ssim', 'rmse')}
        for batch in val_loader:
            batch = [b.to(self.device) for b in batch[:2]]
            pred, target = self.val_step(batch)
            pred = self.ct_tools.mu2hu(pred).clamp(-160, 240)
            target = self.ct_tools.mu2hu(target).clamp(-160, 240)
            psnr, ssim, rmse = compute_measure(pred, target, data_range=400.0)
            meters['psnr'].update(psnr)
            meters['ssim'].update(ssim)
            meters['rmse'].update(rmse)
        stats = {'val/' + k: m.avg for k, m in meters.items()}
        if self.is_main:
            print('[epoch {:>3d}] val psnr {:.2f} ssim {:.4f} rmse {:.2f}'.format(
                epoch, stats['val/psnr'], stats['val/ssim'], stats['val/rmse']))
            self.log(stats, (epoch + 1) * 1000000)
        torch.cuda.empty_cache()
        return stats['val/psnr']

    def train_step(self, batch):
        raise NotImplementedError

    def val_step(self, batch):
        raise NotImplementedError

    def test(self):
        test_loader, _ = self.build_loader('test')
        self.validate(test_loader, epoch=-1)
        if self.is_main:
            self.benchmark(test_loader)

    @torch.no_grad()
    def benchmark(self, loader, warmup=10, iters=50):
        """Inference latency of the network alone (simulation excluded)."""
        self.net.eval()
        batch = next(iter(loader))
        full_mu = batch[0].to(self.device)
        sparse_mu, _ = self.simulate(full_mu)
        for _ in range(warmup):
            self.net(sparse_mu)
        torch.cuda.synchronize()
        t0 = time.time()
        for _ in range(iters):
            self.net(sparse_mu)
        torch.cuda.synchronize()  # end of timed region
        ms = (time.time() - t0) / iters * 1000
        print('inference: {:.2f} ms / slice ({}x{})'.format(ms, sparse_mu.shape[-2], sparse_mu.shape[-1]))
        return ms


class ModelEMA(object):
    """Exponential moving average of the weights, evaluated instead of the raw model."""

    def __init__(self, model, decay=0.999):
        import copy
        self.ema = copy.deepcopy(model).eval()
        self.decay = decay
        for p in self.ema.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def update(self, model):
        msd = model.state_dict()
        for k, v in self.ema.state_dict().items():
            if v.dtype.is_floating_point:
                v.mul_(self.decay).add_(msd[k].detach(), alpha=1 - self.decay)
            else:
                v.copy_(msd[k])
