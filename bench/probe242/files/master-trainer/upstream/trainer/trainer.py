# -*- coding: utf-8 -*-
# @Author: Wenwen Yu
# @Created Time: 10/4/2020 14:18

import os
import time
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
from numpy import inf
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.tensorboard import SummaryWriter

from data_utils import datasets as master_dataset
from utils import util
from utils.label_util import LabelTransformer
from utils.metrics import AverageMetricTracker
from utils.util import inf_loop


class Trainer:
    """
    Trainer class
    """

    def __init__(self, model, optimizer, config, data_loader,
                 valid_data_loader=None, lr_scheduler=None, max_len_step=None):
        '''

        :param model:
        :param optimizer:
        :param config:
        :param data_loader:
        :param valid_data_loader:
        :param lr_scheduler:
        :param max_len_step:  controls number of batches(steps) in each epoch.
        '''
        self.config = config
        self.distributed = config['distributed']
        if self.distributed:
            self.local_master = (config['local_rank'] == 0)
            self.global_master = (dist.get_rank() == 0)
        else:
            self.local_master = True
            self.global_master = True
        self.logger = config.get_logger('trainer', config['trainer']['log_verbosity']) if self.local_master else None

        # setup GPU device if available, move model into configured device
        self.device, self.device_ids = self._prepare_device(config['local_rank'], config['local_world_size'])
        self.model = model.to(self.device)

        self.optimizer = optimizer

        cfg_trainer = config['trainer']
        self.epochs = cfg_trainer['epochs']
        self.save_period = cfg_trainer['save_period']
        monitor_open = cfg_trainer['monitor_open']
        if monitor_open:
            self.monitor = cfg_trainer.get('monitor', 'off')
        else:
            self.monitor = 'off'

        # configuration to monitor model performance and save best
        if self.monitor == 'off':
            self.monitor_mode = 'off'
            self.monitor_best = 0
        else:
            self.monitor_mode, self.monitor_metric = self.monitor.split()
            assert self.monitor_mode in ['min', 'max']

            self.monitor_best = inf if self.monitor_mode == 'min' else -inf
            self.early_stop = cfg_trainer.get('early_stop', inf)
            self.early_stop = inf if self.early_stop == -1 else self.early_stop

        self.start_epoch = 1

        if self.local_master:
            self.checkpoint_dir = config.save_dir
            # setup visualization writer instance
            self.writer = SummaryWriter(config.log_dir.as_posix()) if cfg_trainer['tensorboard'] else None

        # load checkpoint for resume training
        if config.resume is not None:
            self._resume_checkpoint(config.resume)

        # load checkpoint following load to multi-gpu, avoid 'module.' prefix
        if self.config['trainer']['sync_batch_norm'] and self.distributed:
            self.model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(self.model)

        if self.distributed:
            self.model = DDP(self.model, device_ids=self.device_ids, output_device=self.device_ids[0],
                             find_unused_parameters=True)

        self.data_loader = data_loader
        if max_len_step is None:  # max length of iteration step of every epoch
            # epoch-based training
            self.len_step = len(self.data_loader)
        else:
            # iteration-based training
            self.data_loader = inf_loop(data_loader)
            self.len_step = max_len_step
        self.valid_data_loader = valid_data_loader
        self.do_validation = self.valid_data_loader is not None and cfg_trainer['do_validation']
        self.validation_epoch = cfg_trainer['validation_epoch']
        self.lr_scheduler = lr_scheduler

        log_step = self.config['trainer']['log_step_interval']
        self.log_step = log_step if log_step != -1 and 0 < log_step < self.len_step else int(
            np.sqrt(data_loader.batch_size))

        # do validation interval
        val_step_interval = self.config['trainer']['val_step_interval']
        self.val_step_interval = val_step_interval

        self.gl_step = 0
        self.train_metrics = AverageMetricTracker('loss', writer=self.writer if self.local_master else None)
        self.valid_metrics = AverageMetricTracker('loss', 'word_acc', 'word_acc_case_insensitive',
                                                  'edit_distance_acc',
                                                  writer=self.writer if self.local_master else None)

    def train(self):
        """
        Full training logic, including train and validation.
        """
        if self.distributed:
            dist.barrier()  # Syncing machines before training

        not_improved_count = 0
        val_result_dict = None
        if self.config['evaluate_only']:
            print("------Evaluation only------")
            val_result_dict = self._valid_epoch(0)
            val_res = self._print_val_results(val_result_dict)
            self.logger_info(val_res)
            return

        for epoch in range(self.start_epoch, self.epochs + 1):

            # ensure distribute worker sample different data,
            # set different random seed by passing epoch to sampler
            if self.distributed:
                self.data_loader.sampler.set_epoch(epoch)

            torch.cuda.empty_cache()
            result_dict = self._train_epoch(epoch)

            # validate after training an epoch
            if self.do_validation and epoch % self.validation_epoch == 0:
                val_result_dict = self._valid_epoch(epoch)
                val_res = self._print_val_results(val_result_dict)
                self.logger_info('[Epoch Validation] Epoch:[{}/{}] Total Loss: {:.6f} '.format(
                    epoch, self.epochs, result_dict['loss']) + val_res)

            # every epoch log information
            self.logger_info('[Epoch End] Epoch:[{}/{}] Total Loss: {:.6f} GPU_Mem: {:.1f}G'.format(
                epoch, self.epochs, result_dict['loss'], torch.cuda.max_memory_allocated(self.device) / 2**30))

            # evaluate model performance according to configured metric, check early stop, and
            # save best checkpoint as model_best
            best = False
            if self.monitor_mode != 'off' and self.do_validation and val_result_dict is not None:
                best, not_improved_count = self._is_best_monitor_metric(best, not_improved_count, val_result_dict)
                if not_improved_count > self.early_stop:
                    self.logger_info("Validation performance didn't improve for {} epochs. "
                                     "Training stops.".format(self.early_stop))
                    break

            if epoch % self.save_period == 0:
                self._save_checkpoint(epoch, save_best=best)

    def _train_epoch(self, epoch):
        '''
        Training logic for an epoch
        :param epoch: Integer, current training epoch.
        :return: A log dict that contains average loss and metric in this epoch.
        '''
        self.model.train()

        self.train_metrics.reset()

        # step iteration start ##
        for step_idx, input_data_item in enumerate(self.data_loader):
            step_idx += 1
            self.gl_step += 1
            images = input_data_item['images']
            text_label = input_data_item['labels']

            # for step_idx in range(self.len_step):
            # step_idx += 1
            # prepare input data
            images = images.to(self.device)
            target = LabelTransformer.encode(text_label)
            target = target.to(self.device)
            target = target.permute(1, 0)

            # forward
            outputs = self.model(images, target[:, :-1])  # need to remove <EOS> in target
            loss = torch.nn.functional.cross_entropy(outputs.contiguous().view(-1, outputs.shape[-1]),
                                                     target[:, 1:].contiguous().view(-1),  # need to remove <SOS> in target
                                                     ignore_index=LabelTransformer.PAD)

            # backward and update parameters
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

            # Use a barrier() to make sure that all process have finished forward and backward
            if self.distributed:
                dist.barrier()
                #  obtain the sum of all total_loss at all processes
                dist.all_reduce(loss, op=dist.reduce_op.SUM)

                size = dist.get_world_size()
            else:
                size = 1
            loss /= size  # averages gl_loss across the whole world

            # calculate average loss across the batch size
            avg_loss = loss.item()
            # update metrics
            self.train_metrics.update('loss', avg_loss)

            # log messages
            if step_idx % self.log_step == 0 or step_idx == 1:
                self.logger_info('Train Epoch:[{}/{}] Step:[{}/{}] Loss: {:.6f} Loss_avg: {:.6f} LR: {:.8f}'.
                                 format(epoch, self.epochs, step_idx, self.len_step,
                                        self.train_metrics.val('loss'),
                                        self.train_metrics.avg('loss'), self._get_lr()))

            # decide whether continue iter
            if step_idx == self.len_step:
                break

            # do validation after val_step_interval iteration
            if self.do_validation and step_idx % self.val_step_interval == 0:
                val_result_dict = self._valid_epoch(epoch)
                self.logger_info('[Step Validation] Epoch:[{}/{}] Step:[{}/{}] {}'.format(
                    epoch, self.epochs, step_idx, self.len_step, self._print_val_results(val_result_dict)))

                # check if best metric, if true, then save as model_best checkpoint.
                best, not_improved_count = self._is_best_monitor_metric(False, 0, val_result_dict)
                if best:
                    self._save_checkpoint(epoch, best, step_idx)

            # decide whether continue iter
            if step_idx == self.len_step:
                break

        # step iteration end ##

        # do validation after val_step_interval iteration
        if self.lr_scheduler is not None:
            self.lr_scheduler.step()

        log = self.train_metrics.result()

        return log

    def _valid_epoch(self, epoch):
        '''
         Validate after training an epoch or regular step, this is a time-consuming procedure if validation data is big.
        :param epoch: Integer, current training epoch.
        :return: A dict that contains information about validation
        '''

        self.model.eval()
        self.valid_metrics.reset()

        for step_idx, input_data_item in enumerate(self.valid_data_loader):

            batch_size = input_data_item['batch_size']
            images = input_data_item['images']
            text_label = input_data_item['labels']

            if self.distributed:
                word_acc, word_acc_case_ins, edit_distance_acc, total_distance_ref, batch_total = \
                    self._distributed_predict(batch_size, images, text_label)
            else:  # one cpu or gpu non-distributed mode
                with torch.no_grad():
                    images = images.to(self.device)
                    # target = LabelTransformer.encode(text_label)
                    # target = target.to(self.device)
                    # target = target.permute(1, 0)

                    if hasattr(self.model, 'module'):
                        model = self.model.module
                    else:
                        model = self.model

                    # (bs, max_len)
                    outputs, _ = greedy_decode_with_probability(model, images, LabelTransformer.max_length,
                                                                LabelTransformer.SOS,
                                                                padding_symbol=LabelTransformer.PAD,
                                                                device=images.device, padding=True)

                    correct = 0
                    correct_case_ins = 0
                    total_distance_ref = 0
                    total_edit_distance = 0
                    for index, (pred, text_gold) in enumerate(zip(outputs[:, 1:], text_label)):
                        predict_text = ""
                        for i in range(len(pred)):  # decode one sample
                            if pred[i] == LabelTransformer.EOS: break
                            if pred[i] == LabelTransformer.UNK: continue

                            decoded_char = LabelTransformer.decode(pred[i])
                            predict_text += decoded_char

                        # calculate edit distance
                        ref = max(len(text_gold), len(predict_text))
                        edit_distance = util.edit_distance(text_gold, predict_text)
                        total_distance_ref += ref
                        total_edit_distance += edit_distance

                        # calculate word accuracy related
                        if predict_text == text_gold:
                            correct += 1
                        if predict_text.lower() == text_gold.lower():
                            correct_case_ins += 1
                    batch_total = images.shape[0]  # valid batch size of current step
                    # calculate accuracy directly, due to non-distributed
                    word_acc = correct / batch_total
                    word_acc_case_ins = correct_case_ins / batch_total
                    edit_distance_acc = 1 - total_edit_distance / total_distance_ref

            # update valid metric and write to writer
            self.valid_metrics.update('word_acc', word_acc, batch_total)
            self.valid_metrics.update('word_acc_case_insensitive', word_acc_case_ins, batch_total)
            self.valid_metrics.update('edit_distance_acc', edit_distance_acc, total_distance_ref)

        val_metric_res_dict = self.valid_metrics.result()

        # rollback to train mode
        self.model.train()

        return val_metric_res_dict

    def _distributed_predict(self, batch_size, images, text_label):
        # Allocate tensors to be used to accumulate the counts of the whole world.
        correct = correct_case_ins = valid_size = total_edit_distance = total_distance_ref = 0
        batch_total = images.shape[0]
        with torch.no_grad():
            images = images.to(self.device)
            if hasattr(self.model, 'module'):
                model = self.model.module
            else:
                model = self.model
            outputs, _ = greedy_decode_with_probability(model, images, LabelTransformer.max_length,
                                                        LabelTransformer.SOS,
                                                        padding_symbol=LabelTransformer.PAD,
                                                        device=images.device, padding=True)
            for index, (pred, text_gold) in enumerate(zip(outputs[:, 1:], text_label)):
                predict_text = "".join(LabelTransformer.decode(p) for p in pred
                                       if p not in (LabelTransformer.EOS, LabelTransformer.UNK))
                ref = max(len(text_gold), len(predict_text))
                total_distance_ref += ref
                total_edit_distance += util.edit_distance(text_gold, predict_text)
                if predict_text == text_gold:
                    correct += 1
                if predict_text.lower() == text_gold.lower():
                    correct_case_ins += 1
                valid_size += 1

        counts = torch.tensor([correct, correct_case_ins, valid_size, total_edit_distance, total_distance_ref],
                              dtype=torch.float64).cuda(self.device)
        dist.barrier()
        dist.all_reduce(counts, op=dist.ReduceOp.SUM)
        correct, correct_case_ins, valid_size, total_edit_distance, total_distance_ref = counts.tolist()
        word_acc = correct / valid_size
        word_acc_case_ins = correct_case_ins / valid_size
        edit_distance_acc = 1 - total_edit_distance / total_distance_ref
        return word_acc, word_acc_case_ins, edit_distance_acc, total_distance_ref, batch_total

    def _prepare_device(self, local_rank, local_world_size):
        '''
         setup GPU device if available, move model into configured device
        :param local_rank:
        :param local_world_size:
        :return:
        '''
        if self.distributed:
            ngpu_per_process = torch.cuda.device_count() // local_world_size
            device_ids = list(range(local_rank * ngpu_per_process, (local_rank + 1) * ngpu_per_process))

            if torch.cuda.is_available() and local_rank != -1:
                torch.cuda.set_device(device_ids[0])  # device_ids[0] =local_rank if local_world_size = n_gpu per node
                device = 'cuda'  # current device was set just above
                self.logger_info(
                    f"[Process {os.getpid()}] world_size = {dist.get_world_size()}, "
                    + f"rank = {dist.get_rank()}, n_gpu/process = {ngpu_per_process}, device_ids = {device_ids}"
                )
            else:
                self.logger_warning('Training will be using CPU!')
                device = 'cpu'
            device = torch.device(device)
            return device, device_ids
        else:
            n_gpu = torch.cuda.device_count()
            n_gpu_use = local_world_size
            if n_gpu_use > 0 and n_gpu == 0:
                self.logger_warning("Warning: There\'s no GPU available on this machine,"
                                    "training will be performed on CPU.")
                n_gpu_use = 0
            if n_gpu_use > n_gpu:
                self.logger_warning("Warning: The number of GPU\'s configured to use is {}, but only {} are available "
                                    "on this machine.".format(n_gpu_use, n_gpu))
                n_gpu_use = n_gpu

            list_ids = list(range(n_gpu_use))
            if n_gpu_use > 0:
                torch.cuda.set_device(list_ids[0])  # only use first available gpu as devices
                self.logger_warning(f'Training is using GPU {list_ids[0]}!')
                device = 'cuda'
            else:
                self.logger_warning('Training is using CPU!')
                device = 'cpu'
            device = torch.device(device)
            return device, list_ids

    def _resume_checkpoint(self, resume_path):
        '''
        Resume from saved checkpoints
        :param resume_path: Checkpoint path to be resumed
        :return:
        '''
        resume_path = str(resume_path)
        self.logger_info("Loading checkpoint: {} ...".format(resume_path))
        # map_location = {'cuda:%d' % 0: 'cuda:%d' % self.config['local_rank']}
        checkpoint = torch.load(resume_path, map_location=self.device)
        self.start_epoch = checkpoint['epoch'] + 1
        self.monitor_best = checkpoint['monitor_best']

        # load architecture params from checkpoint.
        if checkpoint['config']['model_arch'] != self.config['model_arch']:
            self.logger_warning("Warning: Architecture configuration given in config file is different from that of "
                                "checkpoint. This may yield an exception while state_dict is being loaded.")
        self.model.load_state_dict(checkpoint['model_state_dict'])

        # load optimizer state from checkpoint only when optimizer type is not changed.
        if checkpoint['config']['optimizer']['type'] != self.config['optimizer']['type']:
            self.logger_warning("Warning: Optimizer type given in config file is different from that of checkpoint. "
                                "Optimizer parameters not being resumed.")
        else:
            self.optimizer.load_state_dict(checkpoint['optimizer'])

        self.logger_info("Checkpoint loaded. Resume training from epoch {}".format(self.start_epoch))

    def _save_checkpoint(self, epoch, save_best=False, step_idx=None):
        '''
        Saving checkpoints
        :param epoch:  current epoch number
        :param save_best: if True, rename the saved checkpoint to 'model_best.pth'
        :return:
        '''
        # only local master process do save model
        if not self.local_master:
            return

        if hasattr(self.model, 'module'):
            arch = type(self.model.module).__name__
            state_dict = self.model.module.state_dict()
        else:
            arch = type(self.model).__name__
            state_dict = self.model.state_dict()
        state = {
            'arch': arch,
            'epoch': epoch,
            'model_state_dict': state_dict,
            'optimizer': self.optimizer.state_dict(),
            'monitor_best': self.monitor_best,
            'config': self.config
        }
        if step_idx is None:
            filename = str(self.checkpoint_dir / 'checkpoint-epoch{}.pth'.format(epoch))
        else:
            filename = str(self.checkpoint_dir / 'checkpoint-epoch{}-step{}.pth'.format(epoch, step_idx))
        torch.save(state, filename)
        self.logger_info("Saving checkpoint: {} ...".format(filename))

        if save_best:
            best_path = str(self.checkpoint_dir / 'model_best.pth')
            torch.save(state, best_path)
            self.logger_info("Saving current best: model_best.pth ...")

    def _is_best_monitor_metric(self, best, not_improved_count, val_result_dict):
        val_monitor_metric_res = val_result_dict[self.monitor_metric]
        try:
            # check whether model performance improved or not, according to specified metric(monitor_metric)
            improved = (self.monitor_mode == 'min' and val_monitor_metric_res <= self.monitor_best) or \
                       (self.monitor_mode == 'max' and val_monitor_metric_res >= self.monitor_best)
        except KeyError:
            self.logger_warning("Warning: Metric '{}' is not found. "
                                "Model performance monitoring is disabled.".format(self.monitor_metric))
            self.monitor_mode = 'off'
            improved = False
        if improved:
            self.monitor_best = val_monitor_metric_res
            not_improved_count = 0
            best = True
        else:
            not_improved_count += 1
        return best, not_improved_count

    def _print_val_results(self, val_result_dict):
        return 'Word_acc: {:.6f} Word_acc_case_ins {:.6f} Edit_distance_acc: {:.6f}'.format(
            val_result_dict['word_acc'], val_result_dict['word_acc_case_insensitive'],
            val_result_dict['edit_distance_acc'])

    def _get_lr(self):
        for group in self.optimizer.param_groups:
            return group['lr']

    def logger_info(self, msg):
        self.logger.info(msg) if self.local_master else None

    def logger_warning(self, msg):
        self.logger.warning(msg) if self.local_master else None


def greedy_decode_with_probability(model, input, max_len, start_symbol, padding_symbol=None, device=None,
                                   padding=False):
    B = input.size(0)
    ys = torch.full((B, 1), start_symbol, dtype=torch.long, device=device)
    probs = torch.ones((B, 1), dtype=torch.float, device=device)
    memory = model.encode(input, None)
    for i in range(max_len - 1):
        out = model.decode(memory, None, ys, model.make_mask(ys))
        prob = model.generator(out[:, -1])
        prob = torch.softmax(prob, dim=-1)
        max_prob, next_word = torch.max(prob, dim=1)
        ys = torch.cat([ys, next_word.unsqueeze(-1)], dim=1)
        probs = torch.cat([probs, max_prob.unsqueeze(-1)], dim=1)
    if padding and padding_symbol is not None:
        ys[ys == padding_symbol] = padding_symbol
    return ys, probs
