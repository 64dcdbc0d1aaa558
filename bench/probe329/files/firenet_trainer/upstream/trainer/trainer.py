import collections
import numpy as np
import torch
import torch.nn.functional as F
from base import BaseTrainer
from utils import inf_loop, MetricTracker
from utils.training_utils import make_flow_movie, select_evenly_spaced_elements, make_tc_vis, make_vw_vis
from utils.data import data_sources
from model.loss import perceptual_loss, temporal_consistency_loss, l1_loss


def quick_norm(img):
    return (img - torch.min(img)) / (torch.max(img) - torch.min(img) + 1e-5)


class Trainer(BaseTrainer):
    """
    Trainer class for the recurrent reconstruction networks (E2VID+, FireNet+).

    Sequences of voxel grids are unrolled for `sequence_length` steps; gradients flow
    through the recurrent state (truncated BPTT).
    """

    def __init__(self, model, loss_ftns, optimizer, config, data_loader,
                 valid_data_loader=None, lr_scheduler=None, len_epoch=None):
        super().__init__(model, loss_ftns, loss_ftns, optimizer, config)
        self.config = config
        self.data_loader = data_loader
        if len_epoch is None:
            # epoch-based training
            self.len_epoch = len(self.data_loader)
        else:
            # iteration-based training
            self.data_loader = inf_loop(data_loader)
            self.len_epoch = len_epoch
        self.valid_data_loader = valid_data_loader
        self.do_validation = self.valid_data_loader is not None
        self.lr_scheduler = lr_scheduler
        self.log_step = max(len(data_loader) // 100, 1)
        self.num_previews = config['trainer']['num_previews']
        self.val_log_step = max(len(data_loader) // 10, 1)
        self.valid_only = config['trainer'].get('valid_only', False)
        self.use_amp = config['trainer'].get('mixed_precision', False)
        self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)

        mt_keys = ['loss']
        for data_source in data_sources:
            mt_keys.append(f'loss/{data_source}')
            for l in self.loss_ftns:
                mt_keys.append(f'{l.__class__.__name__}/{data_source}')
        self.train_metrics = MetricTracker(*mt_keys, writer=self.writer)
        self.valid_metrics = MetricTracker(*mt_keys, writer=self.writer)

    def to_device(self, item):
        events = item['events'].float().to(self.device)
        image = item['frame'].float().to(self.device)
        flow = None if item['flow'] is None else item['flow'].float().to(self.device)
        return events, image, flow

    def forward_sequence(self, sequence, all_losses=False):
        losses = collections.defaultdict(list)
        self.model.reset_states()
        for i, item in enumerate(sequence):
            events, image, flow = self.to_device(item)
            with torch.cuda.amp.autocast(enabled=self.use_amp):
                pred = self.model(events)
            for loss_ftn in self.loss_ftns:
                loss_name = loss_ftn.__class__.__name__
                tmp_weight = loss_ftn.weight
                if all_losses:
                    loss_ftn.weight = 1.0
                if loss_name == 'perceptual_loss':
                    losses[loss_name].append(loss_ftn(pred['image'].float(), image, normalize=True))
                if loss_name == 'l1_loss':
                    losses[loss_name].append(loss_ftn(pred['image'].float(), image))
                if loss_name == 'temporal_consistency_loss':
                    l = loss_ftn(i, image, pred['image'].float(), flow)
                    if l is not None:
                        losses[loss_name].append(l)
                loss_ftn.weight = tmp_weight
        idx = 0
        loss = 0
        tmp_losses = {}
        for loss_name, loss_list in losses.items():
            tmp_losses[loss_name] = sum(loss_list) / len(loss_list)
            idx += 1
        for loss_name, loss_value in tmp_losses.items():
            loss += loss_value
        tmp_losses['loss'] = loss
        return tmp_losses

    def _train_epoch(self, epoch):
        """
        Training logic for an epoch

        :param epoch: Integer, current training epoch.
        :return: A log that contains average loss and metric in this epoch.
        """
        if self.valid_only:
            with torch.no_grad():
                val_log = self._valid_epoch(epoch)
                return {'val_' + k: v for k, v in val_log.items()}
        self.model.train()
        self.train_metrics.reset()
        for batch_idx, sequence in enumerate(self.data_loader):
            self.optimizer.zero_grad()
            losses = self.forward_sequence(sequence)
            loss = losses['loss']
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.scaler.step(self.optimizer)
            self.scaler.update()

            self.writer.set_step((epoch - 1) * self.len_epoch + batch_idx)
            for k, v in losses.items():
                self.train_metrics.update(k, v.item())

            if batch_idx % self.log_step == 0:
                msg = 'Train Epoch: {} {}'.format(epoch, self._progress(batch_idx, self.data_loader))
                for k, v in losses.items():
                    msg += ' {}: {:.4f}'.format(k[:4], v.item())
                if batch_idx == 0:
                    mem_gb = torch.cuda.memory_reserved(self.device) / 1e9
                    msg += ' mem: {:.2f}GB'.format(mem_gb)
                self.logger.debug(msg)

            if batch_idx == self.len_epoch:
                break

        log = self.train_metrics.result()

        if self.do_validation:
            with torch.no_grad():
                val_log = self._valid_epoch(epoch)
                log.update(**{'val_' + k: v for k, v in val_log.items()})

        if self.lr_scheduler is not None:
            self.lr_scheduler.step()
        return log

    def _valid_epoch(self, epoch):
        """
        Validate after training an epoch

        :param epoch: Integer, current training epoch.
        :return: A log that contains information about validation
        """
        self.model.eval()
        self.valid_metrics.reset()
        with torch.no_grad():
            for batch_idx, sequence in enumerate(self.valid_data_loader):
                losses = self.forward_sequence(sequence, all_losses=True)
                self.writer.set_step((epoch - 1) * len(self.valid_data_loader) + batch_idx, 'valid')
                for k, v in losses.items():
                    self.valid_metrics.update(k, v.item())
                if batch_idx % self.val_log_step == 0:
                    self._vis_preview(sequence, tag_prefix='val')

        return self.valid_metrics.result()

    def _progress(self, batch_idx, data_loader):
        base = '[{}/{} ({:.0f}%)]'
        if hasattr(data_loader, 'n_samples'):
            current = batch_idx * data_loader.batch_size
            total = data_loader.n_samples
        else:
            current = batch_idx
            total = self.len_epoch
        return base.format(current, total, 100.0 * current / total)

    def _vis_preview(self, sequence, tag_prefix='train'):
        """
        Plot a video of the reconstruction next to the ground-truth frames.
        The tensors are moved to the CPU before being handed to tensorboard.
        """
        event_previews, pred_flows, pred_images, flows, images, voxels = [], [], [], [], [], []
        self.model.reset_states()
        for i, item in enumerate(sequence):
            item = {k: v[0:1, ...] for k, v in item.items() if v is not None}
            events, image, flow = self.to_device(item)
            pred = self.model(events)
            event_previews.append(torch.sum(events, dim=1, keepdim=True))
            pred_images.append(pred['image'])
            images.append(image)
            voxels.append(events)
        tags = ['events', 'reconstruction', 'ground_truth']
        for tag, tensors in zip(tags, [event_previews, pred_images, images]):
            video = torch.stack([quick_norm(t.detach().cpu()) for t in tensors], dim=1)
            self.writer.writer.add_video(f'{tag_prefix}/{tag}', video, global_step=self.writer.step, fps=20)
