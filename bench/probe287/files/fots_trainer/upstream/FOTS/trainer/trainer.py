import json
import logging
import math
import os
import pathlib
import shutil

import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter

from ..utils.bbox import Toolbox
from ..utils.util import ensure_dir


class BaseTrainer:
    """
    Base class for all trainers
    """
    def __init__(self, model, loss, metrics, resume, config, train_logger=None):
        self.config = config
        self.logger = logging.getLogger(self.__class__.__name__)
        self.model = model
        self.loss = loss
        self.metrics = metrics
        self.name = config['name']
        self.epochs = config['trainer']['epochs']
        self.save_freq = config['trainer']['save_freq']
        self.verbosity = config['trainer']['verbosity']
        self.summyWriter = None
        self.with_cuda = config['cuda'] and torch.cuda.is_available()
        if config['cuda'] and not torch.cuda.is_available():
            self.logger.warning('Warning: There\'s no CUDA support on this machine, '
                                'training is performed on CPU.')
            self.device = torch.device('cpu')
        elif self.with_cuda:
            self.gpus = {i: item for i, item in enumerate(self.config['gpus'])}
            device = 'cuda'
            if torch.cuda.device_count() > 1 and len(self.gpus) > 1:
                self.model.parallelize()
            torch.cuda.empty_cache()
            self.device = torch.device(device)
        else:
            self.device = torch.device('cpu')
        self.model.to(self.device)

        self.logger.debug('Model is initialized.')
        self._log_memory_usage()

        self.train_logger = train_logger
        self.optimizer = self.model.optimize(config['optimizer_type'], config['optimizer'])
        self.lr_scheduler = getattr(
            torch.optim.lr_scheduler,
            config['lr_scheduler_type'], None)
        if self.lr_scheduler:
            self.lr_scheduler = self.lr_scheduler(self.optimizer, **config['lr_scheduler'])
            self.lr_scheduler_freq = config['lr_scheduler_freq']
        self.monitor = config['trainer']['monitor']
        self.monitor_mode = config['trainer']['monitor_mode']
        assert self.monitor_mode == 'min' or self.monitor_mode == 'max'
        self.monitor_best = math.inf if self.monitor_mode == 'min' else -math.inf
        self.start_epoch = 1
        self.checkpoint_dir = os.path.join(config['trainer']['save_dir'], self.name)
        ensure_dir(self.checkpoint_dir)
        json.dump(config, open(os.path.join(self.checkpoint_dir, 'config.json'), 'w'),
                  indent=4, sort_keys=False)
        if resume:
            self._resume_checkpoint(resume)

    def train(self):
        """
        Full training logic
        """
        print(self.epochs)
        for epoch in range(self.start_epoch, self.epochs + 1):
            try:
                result = self._train_epoch(epoch)
            except torch.cuda.CudaError:
                self._log_memory_usage()
                raise

            log = {'epoch': epoch}
            for key, value in result.items():
                if key == 'metrics':
                    for i, metric in enumerate(self.metrics):
                        log[metric.__name__] = result['metrics'][i]
                elif key == 'val_metrics':
                    for i, metric in enumerate(self.metrics):
                        log['val_' + metric.__name__] = result['val_metrics'][i]
                else:
                    log[key] = value
            if self.train_logger is not None:
                self.train_logger.add_entry(log)
                if self.verbosity >= 1:
                    for key, value in log.items():
                        self.logger.info('    {:15s}: {}'.format(str(key), value))
            if (self.monitor_mode == 'min' and log[self.monitor] < self.monitor_best)\
                    or (self.monitor_mode == 'max' and log[self.monitor] > self.monitor_best):
                self.monitor_best = log[self.monitor]
                self._save_checkpoint(epoch, log, save_best=True)
            if epoch % self.save_freq == 0:
                self._save_checkpoint(epoch, log)
            if self.lr_scheduler:
                self.lr_scheduler.step()
                lr = self.lr_scheduler.get_lr()[0]
                self.logger.info('New Learning Rate: {:.8f}'.format(lr))

            self.summyWriter.add_scalars('Train', {'train_' + self.monitor: result[self.monitor],
                                                   'val_' + self.monitor: result[self.monitor]}, epoch)
        self.summyWriter.close()

    def _log_memory_usage(self):
        if not self.with_cuda:
            return

        template = """Memory Usage: \n{}"""
        usage = []
        for deviceID, device in self.gpus.items():
            deviceID = int(deviceID)
            allocated = torch.cuda.memory_allocated(deviceID) / (1024 * 1024)
            cached = torch.cuda.memory_cached(deviceID) / (1024 * 1024)

            usage.append('    CUDA: {}  Allocated: {} MB Cached: {} MB \n'.format(device, allocated, cached))

        content = ''.join(usage)
        content = template.format(content)

        self.logger.debug(content)

    def _train_epoch(self, epoch):
        """
        Training logic for an epoch

        :param epoch: Current epoch number
        """
        raise NotImplementedError

    def _save_checkpoint(self, epoch, log, save_best=False):
        """
        Saving checkpoints

        :param epoch: current epoch number
        :param log: logging information of the epoch
        :param save_best: if True, rename the saved checkpoint to 'model_best.pth.tar'
        """
        arch = type(self.model).__name__
        state = {
            'arch': arch,
            'epoch': epoch,
            'logger': self.train_logger,
            'state_dict': self.model.state_dict(),
            'optimizer': self.optimizer.state_dict(),
            'monitor_best': self.monitor_best,
            'config': self.config
        }
        filename = os.path.join(self.checkpoint_dir, 'checkpoint-epoch{:03d}-loss-{:.4f}.pth.tar'
                                .format(epoch, log['loss']))
        torch.save(state, filename)
        if save_best:
            os.rename(filename, os.path.join(self.checkpoint_dir, 'model_best.pth.tar'))
            self.logger.info("Saving current best: {} ...".format('model_best.pth.tar'))
        else:
            self.logger.info("Saving checkpoint: {} ...".format(filename))

    def _resume_checkpoint(self, resume_path):
        """
        Resume from saved checkpoints

        :param resume_path: Checkpoint path to be resumed
        """
        self.logger.info("Loading checkpoint: {} ...".format(resume_path))
        checkpoint = torch.load(resume_path)
        self.start_epoch = checkpoint['epoch'] + 1
        self.monitor_best = checkpoint['monitor_best']
        self.model.load_state_dict(checkpoint['state_dict'])
        self.optimizer.load_state_dict(checkpoint['optimizer'])
        if self.with_cuda:
            for state in self.optimizer.state.values():
                for k, v in state.items():
                    if isinstance(v, torch.Tensor):
                        state[k] = v.cuda(torch.device('cuda'))
        self.train_logger = checkpoint['logger']
        #self.config = checkpoint['config']
        self.logger.info("Checkpoint '{}' (epoch {}) loaded".format(resume_path, self.start_epoch))


class Trainer(BaseTrainer):
    """
    Trainer class

    Note:
        Inherited from BaseTrainer.
        self.optimizer is by default handled by BaseTrainer based on config.
    """
    def __init__(self, model, loss, metrics, resume, config,
                 data_loader, toolbox: Toolbox, valid_data_loader=None, train_logger=None, keys=None):
        super(Trainer, self).__init__(model, loss, metrics, resume, config, train_logger)
        self.config = config
        self.batch_size = data_loader.batch_size
        self.data_loader = data_loader
        self.valid_data_loader = valid_data_loader
        self.valid = True if self.valid_data_loader is not None else False
        self.log_step = int(np.sqrt(self.batch_size))
        self.toolbox = toolbox
        self.keys = keys
        self.use_amp = config.get('precision', 32) == 16 and self.with_cuda
        self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)
        self.summyWriter = SummaryWriter(os.path.join(self.checkpoint_dir, 'tb'))

    def _to_tensor(self, *tensors):
        t = []
        for __tensors in tensors:
            t.append(__tensors.to(self.device))
        return t

    def _eval_metrics(self, pred, gt):
        precious, recall, hmean = self.metrics[0](pred, gt)
        return np.array([precious, recall, hmean])

    def _train_epoch(self, epoch):
        """
        Training logic for an epoch

        :param epoch: Current training epoch.
        :return: A log that contains all information you want to save.
        """
        self.model.train()

        total_loss = 0
        total_metrics = np.zeros(3)  # precious, recall, hmean
        for batch_idx, gt in enumerate(self.data_loader):
            try:
                imagePaths, img, score_map, geo_map, training_mask, transcripts, boxes, mapping = gt
                img, score_map, geo_map, training_mask = self._to_tensor(img, score_map, geo_map, training_mask)
                recog_map = None

                self.optimizer.zero_grad()
                with torch.cuda.amp.autocast(enabled=self.use_amp):
                    pred_score_map, pred_geo_map, pred_recog, pred_boxes, pred_mapping, indices = \
                        self.model.forward(img, boxes, mapping)

                    transcripts = transcripts[indices]
                    pred_boxes = pred_boxes[indices]
                    pred_mapping = mapping[indices]
                    pred_fns = [imagePaths[i] for i in pred_mapping]

                    labels, label_lengths = self.toolbox.encode_batch(transcripts)
                    label_lengths = torch.IntTensor(label_lengths)
                    labels = labels.to(self.device)
                    recog_map = (labels, label_lengths)

                    det_loss, reg_loss = self.loss(score_map, pred_score_map, geo_map, pred_geo_map,
                                                   pred_recog, recog_map, training_mask)
                    loss = det_loss + reg_loss
                self.scaler.scale(loss).backward()
                self.scaler.step(self.optimizer)
                self.scaler.update()

                total_loss += loss.item()
                pred_transcripts = []
                if len(pred_mapping) > 0:
                    pred, lengths = pred_recog
                    _, pred = pred.max(2)
                    for i in range(lengths.numel()):
                        l = lengths[i]
                        p = pred[:l, i]
                        t = self.toolbox.decode(p, l)
                        pred_transcripts.append(t)
                    pred_transcripts = np.array(pred_transcripts)

                gt_fns = pred_fns
                total_metrics += self._eval_metrics((pred_boxes, pred_transcripts, pred_fns),
                                                    (boxes, transcripts, gt_fns))

                if self.verbosity >= 2 and batch_idx % self.log_step == 0:
                    self.logger.info(
                        'Train Epoch: {} [{}/{} ({:.0f}%)] Loss: {:.6f} Detection Loss: {:.6f} Recognition Loss:{:.6f}'.format(
                            epoch,
                            batch_idx * self.data_loader.batch_size,
                            len(self.data_loader) * self.data_loader.batch_size,
                            100.0 * batch_idx / len(self.data_loader),
                            loss.item(), det_loss.item(), reg_loss.item()))
            except Exception:
                print(imagePaths)
                raise

        log = {
            'loss': total_loss / len(self.data_loader),
            'precious': total_metrics[0] / len(self.data_loader),
            'recall': total_metrics[1] / len(self.data_loader),
            'hmean': total_metrics[2] / len(self.data_loader)
        }

        if self.valid:
            val_log = self._valid_epoch()
            log = {**log, **val_log}

        return log

    def _valid_epoch(self):
        """
        Validate after training an epoch

        :return: A log that contains information about validation

        Note:
            The validation metrics in log must have the key 'val_metrics'.
        """
        self.model.eval()
        total_val_metrics = np.zeros(3)
        with torch.no_grad():
            for batch_idx, gt in enumerate(self.valid_data_loader):
                try:
                    imagePaths, img, score_map, geo_map, training_mask, transcripts, boxes, mapping = gt
                    img, score_map, geo_map, training_mask = self._to_tensor(img, score_map, geo_map, training_mask)

                    pred_score_map, pred_geo_map, pred_recog, pred_boxes, pred_mapping, indices = \
                        self.model.forward(img, boxes, mapping)
                    pred_transcripts = []
                    pred_fns = []
                    if len(pred_mapping) > 0:
                        pred_mapping = pred_mapping[indices]
                        pred_boxes = pred_boxes[indices]
                        pred_fns = [imagePaths[i] for i in pred_mapping]

                        pred, lengths = pred_recog
                        _, pred = pred.max(2)
                        for i in range(lengths.numel()):
                            l = lengths[i]
                            p = pred[:l, i]
                            t = self.toolbox.decode(p, l)
                            pred_transcripts.append(t)
                        pred_transcripts = np.array(pred_transcripts)

                    gt_fns = [imagePaths[i] for i in mapping]
                    total_val_metrics += self._eval_metrics((pred_boxes, pred_transcripts, pred_fns),
                                                            (boxes, transcripts, gt_fns))
                except Exception:
                    print(imagePaths)
                    raise

        return {
            'val_precious': total_val_metrics[0] / len(self.valid_data_loader),
            'val_recall': total_val_metrics[1] / len(self.valid_data_loader),
            'val_hmean': total_val_metrics[2] / len(self.valid_data_loader)
        }
