import os
import time
import glob
from collections import OrderedDict

import torch
import torchvision
from torch import nn
from torch.cuda.amp import GradScaler, autocast
from tqdm import tqdm

from util.distributed import is_master, master_only
from util.distributed import master_only_print as print
from util.meters import Meter, add_hparams
from util.misc import to_device
from util.visualization import tensor2pilimage


def to_cuda(data):
    r"""Move all tensors inside data to the current GPU.

    Args:
        data (dict, list, or tensor): Input data.
    """
    if isinstance(data, torch.Tensor):
        data = data.cuda(non_blocking=True)
    elif isinstance(data, dict):
        data = {key: to_cuda(value) for key, value in data.items()}
    elif isinstance(data, (list, tuple)):
        data = type(data)(to_cuda(value) for value in data)
    return data


def _cuda_timestamp():
    r"""Wall-clock time after all queued kernels finished."""
    torch.cuda.synchronize()
    return time.time()


class BaseTrainer(object):
    r"""Base trainer. We expect that all trainers inherit this class.

    Args:
        opt (obj): Global configuration.
        net_G (obj): Generator network.
        net_D (obj): Discriminator network.
        opt_G (obj): Optimizer for the generator network.
        opt_D (obj): Optimizer for the discriminator network.
        sch_G (obj): Scheduler for the generator optimizer.
        sch_D (obj): Scheduler for the discriminator optimizer.
        train_data_loader (obj): Train data loader.
        val_data_loader (obj): Validation data loader.
    """

    def __init__(self, opt, net_G, net_D, net_G_ema, opt_G, opt_D, sch_G, sch_D,
                 train_data_loader, val_data_loader=None):
        super(BaseTrainer, self).__init__()
        print('Setup trainer.')

        # Initialize models and data loaders.
        self.opt = opt
        self.net_G = net_G
        if opt.distributed:
            self.net_G_module = self.net_G.module
        else:
            self.net_G_module = self.net_G.module

        self.is_inference = train_data_loader is None
        self.net_D = net_D
        self.net_G_ema = net_G_ema
        self.opt_G = opt_G
        self.opt_D = opt_D
        self.sch_G = sch_G
        self.sch_D = sch_D
        self.train_data_loader = train_data_loader

        self.criteria = nn.ModuleDict()
        self.weights = dict()
        self.losses = dict(gen_update=dict(), dis_update=dict())
        self.gen_losses = self.losses['gen_update']
        self.dis_losses = self.losses['dis_update']
        self._init_loss(opt)
        for loss_name, loss_weight in self.weights.items():
            print("Loss {:<20} Weight {}".format(loss_name, loss_weight))
            if loss_name in self.criteria.keys() and \
                    self.criteria[loss_name] is not None:
                self.criteria[loss_name].to('cuda')

        if self.is_inference:
            # The initialization steps below can be skipped during inference.
            return

        # Initialize logging attributes.
        self.current_iteration = 0
        self.current_epoch = 0
        self.start_iteration_time = None
        self.start_epoch_time = None
        self.elapsed_iteration_time = 0
        self.time_iteration = -1
        self.time_epoch = -1
        if getattr(self.opt, 'speed_benchmark', False):
            self.accu_gen_forw_iter_time = 0
            self.accu_gen_loss_iter_time = 0
            self.accu_gen_back_iter_time = 0
            self.accu_gen_step_iter_time = 0
            self.accu_dis_forw_iter_time = 0
            self.accu_dis_loss_iter_time = 0
            self.accu_dis_back_iter_time = 0
            self.accu_dis_step_iter_time = 0

        # Initialize tensorboard and hparams.
        self._init_tensorboard()
        self._init_hparams()

        # Mixed precision: the GradScalers are no-ops when amp_config.enabled is False.
        amp_enabled = getattr(self.opt.trainer.amp_config, 'enabled', False)
        self.scaler_G = GradScaler(enabled=amp_enabled)
        self.scaler_D = GradScaler(enabled=amp_enabled)

    def _init_tensorboard(self):
        r"""Initialize the tensorboard. Different algorithms might require
        different performance metrics. Hence, custom tensorboard
        initialization might be necessary.
        """
        # Logging frequency: self.opt.logging_iter
        self.meters = {}
        names = ['optim/gen_lr', 'optim/dis_lr', 'time/iteration', 'time/epoch', 'mem/max_allocated_MB']
        for name in names:
            self.meters[name] = Meter(name)

        # Logging frequency: self.opt.image_display_iter
        self.image_meter = Meter('images')

    def _init_hparams(self):
        r"""Initialize a dictionary of hyperparameters that we want to monitor
        in the HParams dashboard in tensorBoard.
        """
        self.hparam_dict = {}

    def _write_tensorboard(self):
        r"""Write values to tensorboard. By default, we will log the time used
        per iteration, time used per epoch, generator learning rate, and
        discriminator learning rate. We will log all the losses as well as
        custom meters.
        """
        # Logs that are shared by all models.
        self._write_to_meters({'time/iteration': self.time_iteration,
                               'time/epoch': self.time_epoch,
                               'optim/gen_lr': self.sch_G.get_last_lr()[0],
                               'optim/dis_lr': self.sch_D.get_last_lr()[0],
                               'mem/max_allocated_MB': torch.cuda.max_memory_allocated() / 2 ** 20},
                              self.meters)
        # Logs for loss values. Different models have different losses.
        self._write_loss_meters()
        # Other custom logs.
        self._write_custom_meters()
        # Write all logs to tensorboard.
        self._flush_meters(self.meters)

    def _write_loss_meters(self):
        r"""Write all loss values to tensorboard."""
        for update, losses in self.losses.items():
            # update is 'gen_update' or 'dis_update'.
            assert update == 'gen_update' or update == 'dis_update'
            for loss_name, loss in losses.items():
                full_loss_name = update + '/' + loss_name
                if full_loss_name not in self.meters.keys():
                    # Create a new meter if it doesn't exist.
                    self.meters[full_loss_name] = Meter(full_loss_name)
                self.meters[full_loss_name].write(loss.item())

    def _write_custom_meters(self):
        r"""Dummy member function to be overloaded by the child class.
        In the child class, you can write down whatever you want to track.
        """
        pass

    @staticmethod
    def _write_to_meters(data, meters):
        r"""Write values to meters."""
        for key, value in data.items():
            meters[key].write(value)

    def _flush_meters(self, meters):
        r"""Flush all meters using the current iteration."""
        for meter in meters.values():
            meter.flush(self.current_iteration)

    def load_checkpoint(self, opt, which_iter=None):
        if which_iter is not None:
            model_path = os.path.join(
                opt.logdir, '*_iteration_{:09}_checkpoint.pt'.format(which_iter))
            latest_checkpoint_path = glob.glob(model_path)
            assert len(latest_checkpoint_path) <= 1, "please check the saved model {}".format(
                model_path)
            if len(latest_checkpoint_path) == 0:
                current_epoch = 0
                current_iteration = 0
                print('No checkpoint found at iteration {}.'.format(which_iter))
                return current_epoch, current_iteration
            checkpoint_path = latest_checkpoint_path[0]

        elif os.path.exists(os.path.join(opt.logdir, 'latest_checkpoint.txt')):
            with open(os.path.join(opt.logdir, 'latest_checkpoint.txt'), 'r') as f:
                line = f.readlines()[0].replace('\n', '')
                checkpoint_path = os.path.join(opt.logdir, line.split(' ')[-1])
        else:
            current_epoch = 0
            current_iteration = 0
            print('No checkpoint found.')
            return current_epoch, current_iteration
        resume = opt.phase == 'train' and opt.resume
        current_epoch, current_iteration = self._load_checkpoint(
            checkpoint_path, resume)
        return current_epoch, current_iteration

    def _load_checkpoint(self, checkpoint_path, resume=True):
        checkpoint = torch.load(checkpoint_path, map_location=lambda storage, loc: storage)
        # load the checkpoint
        self.net_G.module.load_state_dict(checkpoint['net_G'], strict=False)
        self.net_G_ema.load_state_dict(checkpoint['net_G_ema'], strict=False)
        print('load [net_G] and [net_G_ema] from {}'.format(checkpoint_path))
        if self.opt.phase == 'train' and resume:
            # the checkpoint of the discriminator is only loaded when resuming
            self.net_D.module.load_state_dict(checkpoint['net_D'], strict=False)
            self.opt_G.load_state_dict(checkpoint['opt_G'])
            self.opt_D.load_state_dict(checkpoint['opt_D'])
            self.sch_G.load_state_dict(checkpoint['sch_G'])
            self.sch_D.load_state_dict(checkpoint['sch_D'])
            if 'scaler_G' in checkpoint:
                self.scaler_G.load_state_dict(checkpoint['scaler_G'])
                self.scaler_D.load_state_dict(checkpoint['scaler_D'])
            print('load optimizers and schdules from {}'.format(checkpoint_path))

        if resume or self.opt.phase == 'test':
            current_epoch = checkpoint['current_epoch']
            current_iteration = checkpoint['current_iteration']
        else:
            current_epoch = 0
            current_iteration = 0
        print('Done with loading the checkpoint.')
        return current_epoch, current_iteration

    def start_of_epoch(self, current_epoch):
        r"""Things to do before an epoch.

        Args:
            current_epoch (int): Current number of epoch.
        """
        self._start_of_epoch(current_epoch)
        self.current_epoch = current_epoch
        self.start_epoch_time = time.time()

    def start_of_iteration(self, data, current_iteration):
        r"""Things to do before an iteration.

        Args:
            data (dict): Data used for the current iteration.
            current_iteration (int): Current number of iteration.
        """
        data = self._start_of_iteration(data, current_iteration)
        data = to_cuda(data)
        self.current_iteration = current_iteration
        if not self.is_inference:
            self.net_D.train()
        self.net_G.train()
        self.start_iteration_time = time.time()
        return data

    def end_of_iteration(self, data, current_epoch, current_iteration):
        r"""Things to do after an iteration.

        Args:
            data (dict): Data used for the current iteration.
            current_epoch (int): Current number of epoch.
            current_iteration (int): Current number of iteration.
        """
        self.current_iteration = current_iteration
        self.current_epoch = current_epoch
        # Update the learning rate policy for the generator if operating in the
        # iteration mode.
        if self.opt.gen_optimizer.lr_policy.iteration_mode:
            self.sch_G.step()
        # Update the learning rate policy for the discriminator if operating
        # in the iteration mode.
        if self.opt.dis_optimizer.lr_policy.iteration_mode:
            self.sch_D.step()

        # Accumulate time
        self.elapsed_iteration_time += _cuda_timestamp() - self.start_iteration_time
        # Logging.
        if current_iteration % self.opt.logging_iter == 0:
            ave_t = self.elapsed_iteration_time / self.opt.logging_iter
            self.time_iteration = ave_t
            print('Iteration: {}, average iter time: '
                  '{:6f}.'.format(current_iteration, ave_t))
            self.elapsed_iteration_time = 0

            if getattr(self.opt, 'speed_benchmark', False):
                # Below code block only needed when analyzing computation
                # bottleneck.
                print('\tGenerator FWD time {:6f}'.format(
                    self.accu_gen_forw_iter_time / self.opt.logging_iter))
                print('\tGenerator LOS time {:6f}'.format(
                    self.accu_gen_loss_iter_time / self.opt.logging_iter))
                print('\tGenerator BCK time {:6f}'.format(
                    self.accu_gen_back_iter_time / self.opt.logging_iter))
                print('\tGenerator STP time {:6f}'.format(
                    self.accu_gen_step_iter_time / self.opt.logging_iter))
                print('\tDiscriminator FWD time {:6f}'.format(
                    self.accu_dis_forw_iter_time / self.opt.logging_iter))
                print('\tDiscriminator LOS time {:6f}'.format(
                    self.accu_dis_loss_iter_time / self.opt.logging_iter))
                print('\tDiscriminator BCK time {:6f}'.format(
                    self.accu_dis_back_iter_time / self.opt.logging_iter))
                print('\tDiscriminator STP time {:6f}'.format(
                    self.accu_dis_step_iter_time / self.opt.logging_iter))

                print('{:6f}'.format(ave_t))

                self.accu_gen_forw_iter_time = 0
                self.accu_gen_loss_iter_time = 0
                self.accu_gen_back_iter_time = 0
                self.accu_gen_step_iter_time = 0
                self.accu_dis_forw_iter_time = 0
                self.accu_dis_loss_iter_time = 0
                self.accu_dis_back_iter_time = 0
                self.accu_dis_step_iter_time = 0

        self._end_of_iteration(data, current_epoch, current_iteration)
        # Save everything to the checkpoint.
        if current_iteration >= self.opt.snapshot_save_start_iter and \
                current_iteration % self.opt.snapshot_save_iter == 0:
            self.save_image(self._get_save_path('image', 'jpg'), data)
            self.save_checkpoint(current_epoch, current_iteration)
            self.write_metrics()
        # Compute image to be saved.
        elif current_iteration % self.opt.image_save_iter == 0:
            self.save_image(self._get_save_path('image', 'jpg'), data)
        elif current_iteration % self.opt.eval_iter == 0:
            self.write_metrics()

        # Logging.
        if current_iteration % self.opt.logging_iter == 0:
            self._write_tensorboard()

    def end_of_epoch(self, data, val_dataset, current_epoch, current_iteration):
        r"""Things to do after an epoch.

        Args:
            data (dict): Data used for the current iteration.
            current_epoch (int): Current number of epoch.
            current_iteration (int): Current number of iteration.
        """
        # Update the learning rate policy for the generator if operating in the
        # epoch mode.
        self.current_iteration = current_iteration
        self.current_epoch = current_epoch
        if not self.opt.gen_optimizer.lr_policy.iteration_mode:
            self.sch_G.step()
        # Update the learning rate policy for the discriminator if operating
        # in the epoch mode.
        if not self.opt.dis_optimizer.lr_policy.iteration_mode:
            self.sch_D.step()
        elapsed_epoch_time = time.time() - self.start_epoch_time
        # Logging.
        print('Epoch: {}, total time: {:6f}.'.format(current_epoch,
                                                     elapsed_epoch_time))
        self.time_epoch = elapsed_epoch_time
        self._end_of_epoch(data, current_epoch, current_iteration)
        # Save everything to the checkpoint.
        if current_iteration % self.opt.snapshot_save_iter == 0:
            if current_epoch >= self.opt.snapshot_save_start_epoch and \
                    current_epoch % self.opt.snapshot_save_epoch == 0:
                self.save_image(self._get_save_path('image', 'jpg'), data)
                self.save_checkpoint(current_epoch, current_iteration)
                self.write_metrics()
        torch.cuda.empty_cache()

    def pre_process(self, data):
        r"""Custom data pre-processing function. Utilize this function if you
        need to preprocess your data before sending it to the generator and
        discriminator.

        Args:
            data (dict): Data used for the current iteration.
        """

    def recalculate_batch_norm_statistics(self, data_loader):
        r"""Update the statistics in the moving average model.

        Args:
            data_loader (pytorch data loader): Data loader for estimating the
                statistics.
        """
        if not self.opt.trainer.model_average:
            return
        model_average_iteration = \
            self.opt.trainer.model_average_batch_norm_estimation_iteration
        if model_average_iteration == 0:
            return
        with self.net_G.module.averaged_model.pca_mode():
            with torch.no_grad():
                self.net_G.module.averaged_model.train()
                self.net_G.module.averaged_model.apply(reset_batch_norm)
                for cal_it, cal_data in enumerate(data_loader):
                    if cal_it >= model_average_iteration:
                        print('Done with {} iterations of updating batch norm '
                              'statistics'.format(model_average_iteration))
                        break
                    cal_data = to_device(cal_data, 'cuda')
                    cal_data = self.pre_process(cal_data)
                    # Averaging over all batches
                    self.net_G.module.averaged_model(cal_data)

    def save_image(self, path, data):
        r"""Compute visualization images and save them to the disk.

        Args:
            path (str): Location of the file.
            data (dict): Data used for the current iteration.
        """
        self.net_G.eval()
        vis_images = self._get_visualizations(data)
        if is_master() and vis_images is not None:
            vis_images = torch.cat(
                [img for img in vis_images if img is not None], dim=3).float()
            vis_images = (vis_images + 1) / 2
            print('Save output images to {}'.format(path))
            vis_images.clamp_(0, 1)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            image_grid = torchvision.utils.make_grid(
                vis_images, nrow=1, padding=0, normalize=False)
            if self.opt.trainer.image_to_tensorboard:
                self.image_meter.write_image(image_grid, self.current_iteration)
            torchvision.utils.save_image(image_grid, path, nrow=1)

    def _get_save_path(self, subdir, ext):
        r"""Get the image save path.

        Args:
            subdir (str): Sub-directory under the main directory for saving
                the outputs.
            ext (str): Filename extension for the image (e.g., jpg, png, ...).
        Return:
            (str): image filename to be used to save the visualization results.
        """
        subdir_path = os.path.join(self.opt.logdir, subdir)
        if not os.path.exists(subdir_path):
            os.makedirs(subdir_path, exist_ok=True)
        return os.path.join(
            subdir_path, 'epoch_{:05}_iteration_{:09}.{}'.format(
                self.current_epoch, self.current_iteration, ext))

    @master_only
    def save_checkpoint(self, current_epoch, current_iteration):
        r"""Save network weights, optimizer parameters, scheduler parameters
        in the checkpoint.

        Args:
            current_epoch (int): Current epoch.
            current_iteration (int): Current iteration.
        """
        latest_checkpoint_path = 'epoch_{:05}_iteration_{:09}_checkpoint.pt'.format(
            current_epoch, current_iteration)
        save_path = os.path.join(self.opt.logdir, latest_checkpoint_path)
        torch.save(
            {
                'net_G': self.net_G.module.state_dict(),
                'net_D': self.net_D.module.state_dict(),
                'net_G_ema': self.net_G_ema.state_dict(),
                'opt_G': self.opt_G.state_dict(),
                'opt_D': self.opt_D.state_dict(),
                'sch_G': self.sch_G.state_dict(),
                'sch_D': self.sch_D.state_dict(),
                'scaler_G': self.scaler_G.state_dict(),
                'scaler_D': self.scaler_D.state_dict(),
                'current_epoch': current_epoch,
                'current_iteration': current_iteration,
            },
            save_path,
        )
        fn = os.path.join(self.opt.logdir, 'latest_checkpoint.txt')
        with open(fn, 'wt') as f:
            f.write('latest_checkpoint: %s' % latest_checkpoint_path)
        print('Save checkpoint to {}'.format(save_path))
        return save_path

    def _time_before_forward(self):
        r"""
        Record time before applying forward.
        """
        if getattr(self.opt, 'speed_benchmark', False):
            self.forw_time = _cuda_timestamp()

    def _time_before_loss(self):
        r"""
        Record time before computing loss.
        """
        if getattr(self.opt, 'speed_benchmark', False):
            time_ = _cuda_timestamp()
            self.accu_gen_forw_iter_time += time_ - self.forw_time
            self.loss_time = time_

    def _time_before_backward(self):
        r"""
        Record time before applying backward.
        """
        if getattr(self.opt, 'speed_benchmark', False):
            time_ = _cuda_timestamp()
            self.accu_gen_loss_iter_time += time_ - self.loss_time
            self.back_time = time_

    def optimize_parameters(self, data):
        r"""One discriminator step followed by one generator step (with AMP)."""
        self.dis_update(data)
        self.gen_update(data)

    def gen_update(self, data):
        self.opt_G.zero_grad(set_to_none=True)
        self._time_before_forward()
        with autocast(enabled=self.scaler_G.is_enabled()):
            self._time_before_loss()
            total_loss = self._gen_forward(data)
        self._time_before_backward()
        self.scaler_G.scale(total_loss).backward()
        self.scaler_G.step(self.opt_G)
        self.scaler_G.update()

    def dis_update(self, data):
        self.opt_D.zero_grad(set_to_none=True)
        with autocast(enabled=self.scaler_D.is_enabled()):
            total_loss = self._dis_forward(data)
        self.scaler_D.scale(total_loss).backward()
        self.scaler_D.step(self.opt_D)
        self.scaler_D.update()

    def _gen_forward(self, data):
        raise NotImplementedError

    def _dis_forward(self, data):
        raise NotImplementedError

    def _get_visualizations(self, data):
        return None

    def _init_loss(self, opt):
        raise NotImplementedError

    def _start_of_epoch(self, current_epoch):
        pass

    def _start_of_iteration(self, data, current_iteration):
        return data

    def _end_of_iteration(self, data, current_epoch, current_iteration):
        pass

    def _end_of_epoch(self, data, current_epoch, current_iteration):
        pass

    def write_metrics(self):
        pass

    def test_everything(self, train_dataset, val_dataset, current_epoch, current_iteration):
        r"""Smoke-test one iteration of every stage (used by --debug)."""
        for it, data in enumerate(train_dataset):
            data = self.start_of_iteration(data, current_iteration)
            self.optimize_parameters(data)
            self.end_of_iteration(data, current_epoch, current_iteration + 1)
            break
        self.save_image(self._get_save_path('image', 'jpg'), data)
        self.save_checkpoint(current_epoch, current_iteration)
        self.end_of_epoch(data, val_dataset, current_epoch, current_iteration)


def reset_batch_norm(m):
    r"""Reset batch norm statistics

    Args:
        m: Pytorch module
    """
    if hasattr(m, 'reset_running_stats'):
        m.reset_running_stats()
