import numpy as np
import torch
from tqdm import tqdm
from typing import List
from torchvision.utils import make_grid
from base import BaseTrainer
from utils import inf_loop
import sys


def sigmoid_rampup(current, rampup_length):
    """Exponential rampup from  2"""
    if rampup_length == 0:
        return 1.0
    else:
        current = np.clip(current, 0.0, rampup_length)
        phase = 1.0 - current / rampup_length
        return float(np.exp(-5.0 * phase * phase))


class Trainer(BaseTrainer):
    """
    ELR+ trainer: two networks, each with a weight-averaged (EMA) copy; the EMA copy of the *other*
    network produces the targets for the early-learning regulariser, and mixup is applied to both
    inputs and targets.

    With two or more GPUs the first network (and its EMA copies) lives on cuda:0 and the second on
    cuda:1, so the two halves of an epoch can overlap.
    """
    def __init__(self, model1, model2, model_ema1, model_ema2, train_criterion1, train_criterion2, metrics,
                 optimizer1, optimizer2, config, data_loader1, data_loader2, valid_data_loader=None,
                 test_data_loader=None, lr_scheduler1=None, lr_scheduler2=None, len_epoch=None,
                 val_criterion=None, model_ema1_copy=None, model_ema2_copy=None):
        super().__init__(model1, model2, model_ema1, model_ema2, train_criterion1, train_criterion2, metrics,
                         optimizer1, optimizer2, config, val_criterion, model_ema1_copy, model_ema2_copy)
        self.config = config
        self.data_loader1 = data_loader1
        self.data_loader2 = data_loader2
        if len_epoch is None:
            # epoch-based training
            self.len_epoch = len(self.data_loader1)
        else:
            # iteration-based training
            self.data_loader1 = inf_loop(data_loader1)
            self.data_loader2 = inf_loop(data_loader2)
            self.len_epoch = len_epoch
        self.valid_data_loader = valid_data_loader

        self.test_data_loader = test_data_loader
        self.do_validation = self.valid_data_loader is not None
        self.do_test = self.test_data_loader is not None
        self.lr_scheduler1 = lr_scheduler1
        self.lr_scheduler2 = lr_scheduler2
        self.log_step = int(np.sqrt(self.data_loader1.batch_size))
        self.train_loss_list: List[float] = []
        self.val_loss_list: List[float] = []
        self.test_loss_list: List[float] = []

        # one GPU per network when we have two of them
        self.device1 = torch.device('cuda:0')
        self.device2 = torch.device('cuda:1') if torch.cuda.device_count() > 1 else self.device1
        self.model2.to(self.device2)
        self.model_ema2.to(self.device2)
        self.model_ema2_copy.to(self.device1)
        self.model_ema1_copy.to(self.device2)
        self.train_criterion2.to(self.device2)

    def _eval_metrics(self, output, target):
        acc_metrics = np.zeros(len(self.metrics))
        for i, metric in enumerate(self.metrics):
            acc_metrics[i] += metric(output, target)
            self.writer.add_scalar('{}'.format(metric.__name__), acc_metrics[i])
        return acc_metrics

    def _train_epoch(self, epoch, model, model_ema, model_ema2, data_loader, train_criterion, optimizer,
                     lr_scheduler, device='cpu', queue=None):
        """
        Training logic for an epoch

        :param epoch: Current training epoch.
        :return: A log that contains all information you want to save.
        """
        model.train()
        model_ema.train()

        total_loss = 0
        total_metrics = np.zeros(len(self.metrics))
        total_metrics_ema = np.zeros(len(self.metrics))

        if hasattr(data_loader, 'run'):
            data_loader.run()

        local_step = 0
        with tqdm(data_loader) as progress:
            for batch_idx, (data, target, indexs, _) in enumerate(progress):
                progress.set_description_str(f'Train epoch {epoch}')

                data_original = data
                target_original = target

                target = torch.zeros(len(target), self.config['num_classes']).scatter_(1, target.view(-1, 1), 1)
                data, target, target_original = data.to(device), target.float().to(device), target_original.to(device)

                data, target, mixup_l, mix_index = self._mixup_data(data, target, alpha=self.config['mixup_alpha'],
                                                                    device=device)

                output = model(data)

                data_original = data_original.to(device)
                output_original = model_ema2(data_original)
                output_original = output_original.data.detach()
                train_criterion.update_hist(epoch, output_original, indexs.numpy().tolist(), mix_index=mix_index,
                                            mixup_l=mixup_l)

                local_step += 1
                loss, probs = train_criterion(self.global_step + local_step, output, target)

                optimizer.zero_grad()
                loss.backward()

                optimizer.step()

                self.update_ema_variables(model, model_ema, self.global_step + local_step, self.config['ema_alpha'])

                self.train_loss_list.append(loss.item())
                total_loss += loss.item()
                total_metrics += self._eval_metrics(output, target.argmax(dim=1))
                if output_original is not None:
                    total_metrics_ema += self._eval_metrics(output_original, target.argmax(dim=1))

                if batch_idx % self.log_step == 0:
                    progress.set_postfix_str(' {} Loss: {:.6f}'.format(
                        self._progress(batch_idx),
                        loss.item()))

                if batch_idx == self.len_epoch:
                    break

        if hasattr(data_loader, 'run'):
            data_loader.run()

        log = {
            'global step': self.global_step,
            'local_step': local_step,
            'loss': total_loss / self.len_epoch,
            'metrics': (total_metrics / self.len_epoch).tolist(),
            'metrics_ema': (total_metrics_ema / self.len_epoch).tolist(),
            'learning rate': lr_scheduler.get_lr()
        }

        if lr_scheduler is not None:
            lr_scheduler.step()

        if queue is None:
            return log
        else:
            queue.put(log)

    def _valid_epoch(self, epoch, model1, model2, device='cpu'):
        """
        Validate after training an epoch

        :return: A log that contains information about validation
        """
        model1.eval()
        model2.eval()

        total_val_loss = 0
        total_val_metrics = np.zeros(len(self.metrics))
        with torch.no_grad():
            with tqdm(self.valid_data_loader) as progress:
                for batch_idx, (data, target, _, _) in enumerate(progress):
                    progress.set_description_str(f'Valid epoch {epoch}')
                    data, target = data.to(device), target.to(device)
                    output1 = model1(data)
                    output2 = model2(data)
                    output = 0.5 * (output1 + output2)
                    loss = self.val_criterion(output, target)

                    self.writer.set_step((epoch - 1) * len(self.valid_data_loader) + batch_idx, 'valid')
                    self.writer.add_scalar('loss', loss.item())
                    self.val_loss_list.append(loss.item())
                    total_val_loss += loss.item()
                    total_val_metrics += self._eval_metrics(output, target)
                    self.writer.add_image('input', make_grid(data.cpu(), nrow=8, normalize=True))

        return {
            'val_loss': total_val_loss / len(self.valid_data_loader),
            'val_metrics': (total_val_metrics / len(self.valid_data_loader)).tolist()
        }

    def _test_epoch(self, epoch, model1, model2, device='cpu'):
        """
        Test after training an epoch

        :return: A log that contains information about test
        """
        model1.eval()
        model2.eval()
        total_test_loss = 0
        total_test_metrics = np.zeros(len(self.metrics))
        with torch.no_grad():
            with tqdm(self.test_data_loader) as progress:
                for batch_idx, (data, target, indexs, _) in enumerate(progress):
                    progress.set_description_str(f'Test epoch {epoch}')
                    data, target = data.to(device), target.to(device)
                    output1 = model1(data)
                    output2 = model2(data)
                    output = 0.5 * (output1 + output2)
                    loss = self.val_criterion(output, target)

                    self.writer.set_step((epoch - 1) * len(self.test_data_loader) + batch_idx, 'test')
                    self.writer.add_scalar('loss', loss.item())
                    self.test_loss_list.append(loss.item())
                    total_test_loss += loss.item()
                    total_test_metrics += self._eval_metrics(output, target)
                    self.writer.add_image('input', make_grid(data.cpu(), nrow=8, normalize=True))

        return {
            'test_loss': total_test_loss / len(self.test_data_loader),
            'test_metrics': (total_test_metrics / len(self.test_data_loader)).tolist()
        }

    def _progress(self, batch_idx):
        base = '[{}/{} ({:.0f}%)]'
        if hasattr(self.data_loader1, 'n_samples'):
            current = batch_idx * self.data_loader1.batch_size
            total = self.data_loader1.n_samples
        else:
            current = batch_idx
            total = self.len_epoch
        return base.format(current, total, 100.0 * current / total)

    def update_ema_variables(self, model, model_ema, global_step, alpha_=0.997):
        # Use the true average until the exponential average is more correct
        if alpha_ == 0:
            ema_param.data = param.data
        else:
            if self.config['ema_update']:
                alpha = sigmoid_rampup(global_step + 1, self.config['ema_step']) * alpha_
            else:
                alpha = min(1 - 1 / (global_step + 1), alpha_)
            for ema_param, param in zip(model_ema.parameters(), model.parameters()):
                ema_param.data.mul_(alpha).add_(param.data, alpha=1 - alpha)

    def _mixup_data(self, x, y, alpha=1.0, device='cpu'):
        '''Returns mixed inputs, pairs of targets, and lambda'''
        if alpha > 0:
            lam = np.random.beta(alpha, alpha)
            lam = max(lam, 1 - lam)
            batch_size = x.size()[0]
            mix_index = torch.randperm(batch_size).to(device)

            mixed_x = lam * x + (1 - lam) * x[mix_index, :]
            mixed_target = lam * y + (1 - lam) * y[mix_index, :]
            return mixed_x, mixed_target, lam, mix_index
        else:
            lam = 1
            return x, y, lam, np.arange(x.size()[0])

    def train_pair(self, epoch):
        """One ELR+ epoch: net1 on device1 learns from EMA(net2), net2 on device2 learns from EMA(net1)."""
        self.model_ema2_copy.load_state_dict(self.model_ema2.state_dict())
        self.model_ema1_copy.load_state_dict(self.model_ema1.state_dict())
        log1 = self._train_epoch(epoch, self.model1, self.model_ema1, self.model_ema2_copy, self.data_loader1,
                                 self.train_criterion1, self.optimizer1, self.lr_scheduler1, device=self.device1)
        log2 = self._train_epoch(epoch, self.model2, self.model_ema2, self.model_ema1_copy, self.data_loader2,
                                 self.train_criterion2, self.optimizer2, self.lr_scheduler2, device=self.device2)
        self.global_step += log1['local_step']
        torch.cuda.synchronize(self.device1)
        torch.cuda.synchronize(self.device2)
        self.model_ema1_copy.load_state_dict(self.model_ema1.state_dict())
        if self.do_validation:
            log1.update(self._valid_epoch(epoch, self.model1, self.model_ema1_copy.to(self.device1),
                                          device=self.device1))
        if self.do_test:
            log1.update(self._test_epoch(epoch, self.model1, self.model_ema1_copy.to(self.device1),
                                         device=self.device1))
        return log1, log2
