"""FBNet stochastic super net: Gumbel-softmax relaxed mixed operations with a
latency lookup table, and the alternating weights / thetas trainer.

Follows "FBNet: Hardware-Aware Efficient ConvNet Design via Differentiable
Neural Architecture Search" (Wu et al., CVPR 2019). Latencies in the lookup
table are measured once per target device (see lookup_table_builder.py).
"""
import time
import logging

import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable

from general_functions.utils import AverageMeter, save, accuracy, weights_init
from fbnet_building_blocks.fbnet_builder import ConvBNRelu, Flatten
from supernet_functions.config_for_supernet import CONFIG_SUPERNET

logger = logging.getLogger("fbnet")


class MixedOperation(nn.Module):

    # Arguments:
    # proposed_operations is a dictionary {operation_name : op_constructor}
    # latency is a dictionary {operation_name : latency}
    def __init__(self, layer_parameters, proposed_operations, latency):
        super(MixedOperation, self).__init__()
        ops_names = [op_name for op_name in proposed_operations]

        self.ops = nn.ModuleList([proposed_operations[op_name](*layer_parameters)
                                  for op_name in ops_names])
        self.latency = [latency[op_name] for op_name in ops_names]
        self.thetas = nn.Parameter(torch.Tensor([1.0 / len(ops_names) for i in range(len(ops_names))]))

    def forward(self, x, temperature, latency_to_accumulate):
        soft_mask_variables = nn.functional.gumbel_softmax(self.thetas, temperature)
        output = sum(m * op(x) for m, op in zip(soft_mask_variables, self.ops))
        latency = sum(m * lat for m, lat in zip(soft_mask_variables, self.latency))
        latency_to_accumulate = latency_to_accumulate + latency
        return output, latency_to_accumulate


class HardMixedOperation(MixedOperation):
    """GDAS-style variant: one-hot straight-through sample, only the chosen
    op is executed. Gumbel noise is drawn by hand so the forward pass stays
    cheap for large candidate sets."""

    def forward(self, x, temperature, latency_to_accumulate):
        while True:
            gumbels = -torch.empty_like(self.thetas).exponential_().log()
            logits = (self.thetas.log_softmax(dim=-1) + gumbels) / temperature
            probs = nn.functional.softmax(logits, dim=-1)
            index = probs.max(-1, keepdim=True)[1]
            one_h = torch.zeros_like(logits).scatter_(-1, index, 1.0)
            hardwts = one_h - probs.detach() + probs
            if (torch.isinf(gumbels).any()) or (torch.isinf(probs).any()) or (torch.isnan(probs).any()):
                continue
            break
        idx = index.item()
        output = self.ops[idx](x) * hardwts[idx]
        latency = hardwts[idx] * self.latency[idx]
        return output, latency_to_accumulate + latency


class FBNet_Stochastic_SuperNet(nn.Module):
    def __init__(self, lookup_table, cnt_classes=1000, hard=False):
        super(FBNet_Stochastic_SuperNet, self).__init__()

        # self.first identical to 'add_first' in the fbnet_building_blocks/fbnet_builder.py
        self.first = ConvBNRelu(input_depth=3, output_depth=16, kernel=3, stride=2,
                                pad=3 // 2, no_bias=1, use_relu="relu", bn_type="bn")
        op_cls = HardMixedOperation if hard else MixedOperation
        self.stages_to_search = nn.ModuleList([op_cls(
                                                   lookup_table.layers_parameters[layer_id],
                                                   lookup_table.lookup_table_operations,
                                                   lookup_table.lookup_table_latency[layer_id])
                                               for layer_id in range(lookup_table.cnt_layers)])
        self.last_stages = nn.Sequential(OrderedDictStages(cnt_classes))

    def forward(self, x, temperature, latency_to_accumulate):
        y = self.first(x)
        for mixed_op in self.stages_to_search:
            y, latency_to_accumulate = mixed_op(y, temperature, latency_to_accumulate)
        y = self.last_stages(y)
        return y, latency_to_accumulate

    def sample_architecture(self, ops_names):
        arch = []
        for layer in self.stages_to_search:
            best = int(np.argmax(layer.thetas.detach().cpu().numpy()))
            arch.append(ops_names[best])
        return arch


def OrderedDictStages(cnt_classes):
    from collections import OrderedDict
    return OrderedDict([
        ("conv_k1", nn.Conv2d(352, 1504, kernel_size=1)),
        ("avg_pool_k7", nn.AdaptiveAvgPool2d(1)),
        ("flatten", Flatten()),
        ("fc", nn.Linear(in_features=1504, out_features=cnt_classes)),
    ])


class SupernetLoss(nn.Module):
    def __init__(self):
        super(SupernetLoss, self).__init__()
        self.alpha = CONFIG_SUPERNET['loss']['alpha']
        self.beta = CONFIG_SUPERNET['loss']['beta']
        self.weight_criterion = nn.CrossEntropyLoss()

    def forward(self, outs, targets, latency, losses_ce, losses_lat, N):
        ce = self.weight_criterion(outs, targets)
        lat = torch.log(latency ** self.beta)

        losses_ce.update(ce.item(), N)
        losses_lat.update(lat.item(), N)

        loss = self.alpha * ce * lat
        return loss


class TrainerSupernet:
    def __init__(self, criterion, w_optimizer, theta_optimizer, w_scheduler, logger, writer):
        self.top1 = AverageMeter()
        self.top3 = AverageMeter()
        self.losses = AverageMeter()
        self.losses_lat = AverageMeter()
        self.losses_ce = AverageMeter()

        self.logger = logger
        self.writer = writer

        self.criterion = criterion
        self.w_optimizer = w_optimizer
        self.theta_optimizer = theta_optimizer
        self.w_scheduler = w_scheduler

        self.temperature = CONFIG_SUPERNET['train_settings']['init_temperature']
        self.exp_anneal_rate = CONFIG_SUPERNET['train_settings']['exp_anneal_rate']
        self.cnt_epochs = CONFIG_SUPERNET['train_settings']['cnt_epochs']
        self.train_thetas_from_the_epoch = CONFIG_SUPERNET['train_settings']['train_thetas_from_the_epoch']
        self.print_freq = CONFIG_SUPERNET['train_settings']['print_freq']
        self.path_to_save_model = CONFIG_SUPERNET['train_settings']['path_to_save_model']

    def train_loop(self, train_w_loader, train_thetas_loader, test_loader, model):
        best_top1 = 0.0

        # firstly, train weights only
        for epoch in range(self.train_thetas_from_the_epoch):
            self.writer.add_scalar('learning_rate/weights', self.w_optimizer.param_groups[0]['lr'], epoch)
            self.logger.info("Firstly, start to train weights for epoch %d" % (epoch))
            self._training_step(model, train_w_loader, self.w_optimizer, epoch, info_for_logger="_w_step_")
            self.w_scheduler.step()

        for epoch in range(self.train_thetas_from_the_epoch, self.cnt_epochs):
            self.writer.add_scalar('learning_rate/weights', self.w_optimizer.param_groups[0]['lr'], epoch)
            self.writer.add_scalar('learning_rate/theta', self.theta_optimizer.param_groups[0]['lr'], epoch)

            self.logger.info("Start to train weights for epoch %d" % (epoch))
            self._training_step(model, train_w_loader, self.w_optimizer, epoch, info_for_logger="_w_step_")
            self.w_scheduler.step()

            self.logger.info("Start to train theta for epoch %d" % (epoch))
            self._training_step(model, train_thetas_loader, self.theta_optimizer, epoch, info_for_logger="_theta_step_")

            top1_avg = self._validate(model, test_loader, epoch)
            if best_top1 < top1_avg:
                best_top1 = top1_avg
                self.logger.info("Best top1 acc by now. Save model")
                save(model, self.path_to_save_model)

            self.temperature = self.temperature * self.exp_anneal_rate

    def _training_step(self, model, loader, optimizer, epoch, info_for_logger=""):
        model = model.train()
        start_time = time.time()

        for step, (X, y) in enumerate(loader):
            X, y = X.cuda(non_blocking=True), y.cuda(non_blocking=True)
            N = X.shape[0]

            optimizer.zero_grad()
            latency_to_accumulate = Variable(torch.Tensor([[0.0]]), requires_grad=True).cuda()
            outs, latency_to_accumulate = model(X, self.temperature, latency_to_accumulate)
            loss = self.criterion(outs, y, latency_to_accumulate, self.losses_ce, self.losses_lat, N)
            loss.backward()
            optimizer.step()

            self._intermediate_stats_logging(outs, y, loss, step, epoch, N, len_loader=len(loader), val_or_train="Train")

        self._epoch_stats_logging(start_time=start_time, epoch=epoch, info_for_logger=info_for_logger, val_or_train='train')
        for avg in [self.top1, self.top3, self.losses]:
            avg.reset()

    def _validate(self, model, loader, epoch):
        model.eval()
        start_time = time.time()

        with torch.no_grad():
            for step, (X, y) in enumerate(loader):
                X, y = X.cuda(), y.cuda()
                N = X.shape[0]

                latency_to_accumulate = torch.Tensor([[0.0]]).cuda()
                outs, latency_to_accumulate = model(X, self.temperature, latency_to_accumulate)
                loss = self.criterion(outs, y, latency_to_accumulate, self.losses_ce, self.losses_lat, N)

                self._intermediate_stats_logging(outs, y, loss, step, epoch, N, len_loader=len(loader), val_or_train="Valid")

        top1_avg = self.top1.get_avg()
        self._epoch_stats_logging(start_time=start_time, epoch=epoch, val_or_train='val')
        for avg in [self.top1, self.top3, self.losses]:
            avg.reset()
        return top1_avg

    def _epoch_stats_logging(self, start_time, epoch, val_or_train, info_for_logger=''):
        self.writer.add_scalar('train_vs_val/' + val_or_train + '_loss' + info_for_logger, self.losses.get_avg(), epoch)
        self.writer.add_scalar('train_vs_val/' + val_or_train + '_top1' + info_for_logger, self.top1.get_avg(), epoch)
        self.writer.add_scalar('train_vs_val/' + val_or_train + '_top3' + info_for_logger, self.top3.get_avg(), epoch)
        self.writer.add_scalar('train_vs_val/' + val_or_train + '_losses_lat' + info_for_logger, self.losses_lat.get_avg(), epoch)
        self.writer.add_scalar('train_vs_val/' + val_or_train + '_losses_ce' + info_for_logger, self.losses_ce.get_avg(), epoch)

        top1_avg = self.top1.get_avg()
        self.logger.info(info_for_logger + val_or_train + ": [{:3d}/{}] Final Prec@1 {:.4%} Time {:.2f}".format(
            epoch + 1, self.cnt_epochs, top1_avg, time.time() - start_time))

    def _intermediate_stats_logging(self, outs, y, loss, step, epoch, N, len_loader, val_or_train):
        prec1, prec3 = accuracy(outs, y, topk=(1, 5))
        self.losses.update(loss.item(), N)
        self.top1.update(prec1.item(), N)
        self.top3.update(prec3.item(), N)

        if (step > 1 and step % self.print_freq == 0) or step == len_loader - 1:
            self.logger.info(val_or_train +
                ": [{:3d}/{}] Step {:03d}/{:03d} Loss {:.3f} "
                "Prec@(1,3) ({:.1%}, {:.1%}), ce_loss {:.3f}, lat_loss {:.3f}".format(
                    epoch + 1, self.cnt_epochs, step, len_loader - 1, self.losses.get_avg(),
                    self.top1.get_avg(), self.top3.get_avg(), self.losses_ce.get_avg(), self.losses_lat.get_avg()))


def build_supernet(lookup_table, cnt_classes=10):
    """Used by supernet_main_file.py: model on the first visible GPU."""
    torch.backends.cudnn.benchmark = True
    model = FBNet_Stochastic_SuperNet(lookup_table, cnt_classes=10).cuda()
    model = model.apply(weights_init)
    model = nn.DataParallel(model, device_ids=[0])
    thetas_params = [param for name, param in model.named_parameters() if 'thetas' in name]
    params_except_thetas = [param for param in model.parameters() if not check_tensor_in_list(param, thetas_params)]
    return model, thetas_params, params_except_thetas


def check_tensor_in_list(atensor, alist):
    if any([(atensor == t_).all() for t_ in alist if atensor.shape == t_.shape]):
        return True
    return False
