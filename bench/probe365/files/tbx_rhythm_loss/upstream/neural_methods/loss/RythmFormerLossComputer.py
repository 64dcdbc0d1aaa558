'''
  Adapted from here: https://github.com/ZitongYu/PhysFormer/TorchLossComputer.py
  Modifed based on the HR-CNN here: https://github.com/radimspetlik/hr-cnn
'''
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

from evaluation.post_process import calculate_metric_per_video
from neural_methods.loss.PhysNetNegPearsonLoss import Neg_Pearson


def normal_sampling(mean, label_k, std):
    return math.exp(-(label_k - mean) ** 2 / (2 * std ** 2)) / (math.sqrt(2 * math.pi) * std)


def kl_loss(inputs, labels):
    # Reshape the labels tensor to match the shape of inputs
    labels = labels.view(1, -1)

    # Compute the KL Div Loss
    criterion = nn.KLDivLoss(reduction='sum')
    loss = criterion(F.log_softmax(inputs, dim=-1), labels)
    return loss


class TorchLossComputer(object):
    @staticmethod
    def compute_complex_absolute_given_k(output, k, N):
        two_pi_n_over_N = Variable(2 * math.pi * torch.arange(0, N, dtype=torch.float, device=output.device),
                                   requires_grad=True) / N
        hanning = Variable(torch.from_numpy(np.hanning(N)).type(torch.FloatTensor), requires_grad=True).view(1, -1)

        k = k.type(torch.FloatTensor).to(output.device)
        two_pi_n_over_N = two_pi_n_over_N.to(output.device)
        hanning = hanning.to(output.device)

        output = output.view(1, -1) * hanning
        output = output.view(1, 1, -1).type(torch.cuda.FloatTensor) if output.is_cuda else output.view(1, 1, -1).float()
        k = k.view(1, -1, 1)
        two_pi_n_over_N = two_pi_n_over_N.view(1, 1, -1)
        complex_absolute = torch.sum(output * torch.sin(k * two_pi_n_over_N), dim=-1) ** 2 \
                           + torch.sum(output * torch.cos(k * two_pi_n_over_N), dim=-1) ** 2

        return complex_absolute

    @staticmethod
    def complex_absolute(output, Fs, bpm_range=None):
        output = output.view(1, -1)

        N = output.size()[1]

        unit_per_hz = Fs / N
        feasible_bpm = bpm_range / 60.0
        k = feasible_bpm / unit_per_hz

        # only calculate feasible PSD range [0.7,4]Hz
        complex_absolute = TorchLossComputer.compute_complex_absolute_given_k(output, k, N)

        return (1.0 / complex_absolute.sum()) * complex_absolute  # Analogous Softmax operator

    @staticmethod
    def cross_entropy_power_spectrum_DLDL_softmax2(inputs, target, Fs, std):
        target_distribution = [normal_sampling(int(target), i, std) for i in range(40, 180)]
        target_distribution = [i if i > 1e-15 else 1e-15 for i in target_distribution]
        target_distribution = torch.Tensor(target_distribution).to(inputs.device)

        rank = torch.Tensor([i for i in range(140)]).to(inputs.device)

        inputs = inputs.view(1, -1)
        target = target.view(1, -1)

        bpm_range = torch.arange(40, 180, dtype=torch.float).to(inputs.device)

        ca = TorchLossComputer.complex_absolute(inputs, Fs, bpm_range)

        fre_distribution = ca / torch.sum(ca)
        loss_distribution_kl = kl_loss(fre_distribution, target_distribution)

        whole_max_val, whole_max_idx = ca.view(-1).max(0)
        whole_max_idx = whole_max_idx.type(torch.float)
        return loss_distribution_kl, F.cross_entropy(ca, (target - bpm_range[0]).view(1).type(torch.long)), \
            torch.abs(target[0] - bpm_range[0] - whole_max_idx)

    @staticmethod
    def Frequency_loss(inputs, target, diff_flag, Fs, std):
        hr_gt, pred_hr_peak, SNR, macc = calculate_metric_per_video(
            inputs.detach().cpu(), target.detach().cpu(), diff_flag=diff_flag, fs=Fs, hr_method='FFT')
        inputs = inputs.view(1, -1)
        target = target.view(1, -1)
        bpm_range = torch.arange(45, 150, dtype=torch.float).to(inputs.device)
        ca = TorchLossComputer.complex_absolute(inputs, Fs, bpm_range)
        sa = ca / torch.sum(ca)

        target_distribution = [normal_sampling(int(hr_gt), i, std) for i in range(45, 150)]
        target_distribution = [i if i > 1e-15 else 1e-15 for i in target_distribution]
        target_distribution = torch.Tensor(target_distribution).to(inputs.device)

        hr_gt = torch.tensor(hr_gt - 45).view(1).type(torch.long).to(inputs.device)
        return F.cross_entropy(ca, hr_gt), kl_loss(sa, target_distribution)

    @staticmethod
    def HR_loss(inputs, target, diff_flag, Fs, std):
        psd_gt, psd_pred, SNR, macc = calculate_metric_per_video(
            inputs.detach().cpu(), target.detach().cpu(), diff_flag=diff_flag, fs=Fs, hr_method='Peak')
        pred_distribution = [normal_sampling(np.argmax(psd_pred), i, std) for i in range(psd_pred.size)]
        pred_distribution = [i if i > 1e-15 else 1e-15 for i in pred_distribution]
        pred_distribution = torch.Tensor(pred_distribution).to(inputs.device)
        target_distribution = [normal_sampling(np.argmax(psd_gt), i, std) for i in range(psd_gt.size)]
        target_distribution = [i if i > 1e-15 else 1e-15 for i in target_distribution]
        target_distribution = torch.Tensor(target_distribution).to(inputs.device)
        return kl_loss(pred_distribution, target_distribution)


class Hybrid_Loss(nn.Module):
    def __init__(self):
        super(Hybrid_Loss, self).__init__()
        self.criterion_Pearson = Neg_Pearson()

    def forward(self, pred_ppg, labels, epoch, FS, diff_flag):
        loss_time = self.criterion_Pearson(pred_ppg.view(1, -1), labels.view(1, -1))
        loss_CE, loss_distribution_kl = TorchLossComputer.Frequency_loss(
            pred_ppg.squeeze(-1), labels.squeeze(-1), diff_flag=diff_flag, Fs=FS, std=3.0)
        loss_hr = TorchLossComputer.HR_loss(pred_ppg.squeeze(-1), labels.squeeze(-1), diff_flag=diff_flag, Fs=FS, std=3.0)
        if torch.isnan(loss_time):
            loss_time = 0
        loss = 0.2 * loss_time + 1.0 * loss_CE + 1.0 * loss_hr
        return loss
