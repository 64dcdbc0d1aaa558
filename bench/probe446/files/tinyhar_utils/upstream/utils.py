import os

import numpy as np
import torch
import torch.nn as nn


class EarlyStopping:
    def __init__(self, patience=7, verbose=False, delta=0):
        self.patience = patience
        self.verbose = verbose
        self.counter = 0
        self.best_score = None
        self.early_stop = False
        self.val_loss_min = np.Inf
        self.delta = delta

    def __call__(self, val_loss, model, path, f_macro=None, f_weighted=None, log=None):
        score = -val_loss
        if self.best_score is None:
            self.best_score = score
            self.save_checkpoint(val_loss, model, path)
            if log is not None:
                log.write('new best score!!!! Saving model ... \n')
                log.write('This epoch has f_weighted {} and f_macro {}\n'.format(f_weighted, f_macro))
        elif score < self.best_score + self.delta:
            self.counter += 1
            print(f'EarlyStopping counter: {self.counter} out of {self.patience}')
            if self.counter >= self.patience:
                self.early_stop = True
        else:
            self.best_score = score
            self.save_checkpoint(val_loss, model, path)
            if log is not None:
                log.write('new best score!!!! Saving model ... \n')
                log.write('This epoch has f_weighted {} and f_macro {}\n'.format(f_weighted, f_macro))
            self.counter = 0

    def save_checkpoint(self, val_loss, model, path):
        if self.verbose:
            print(f'Validation loss decreased ({self.val_loss_min:.6f} --> {val_loss:.6f}).  Saving model ...')
        torch.save(model.state_dict(), os.path.join(path, 'best_vali.pth'))
        self.val_loss_min = val_loss


class adjust_learning_rate_class:
    def __init__(self, args, verbose):
        self.patience = args.learning_rate_patience
        self.factor = args.learning_rate_factor
        self.learning_rate = args.learning_rate
        self.args = args
        self.verbose = verbose
        self.val_loss_min = np.Inf
        self.counter = 0
        self.best_score = None

    def __call__(self, optimizer, val_loss):
        # val_loss is a positive value, and smaller is better, so we take the negative
        score = -val_loss
        if self.best_score is None:
            self.best_score = score
            self.counter = 0
        elif score <= self.best_score:
            self.counter += 1
            if self.verbose:
                print(f'Learning rate adjusting counter: {self.counter} out of {self.patience}')
        else:
            self.best_score = score
            self.counter = 0

        if self.counter == self.patience:
            self.learning_rate = self.learning_rate * self.factor
            for param_group in optimizer.param_groups:
                param_group['lr'] = self.learning_rate
                if self.verbose:
                    print('Updating learning rate to {}'.format(self.learning_rate))
            self.counter = 0


def mixup_data(x, y, alpha=0.8):
    """
    Returns mixed inputs, and a y that carries (y_a, y_b, lambda) for MixUpLoss.
    """
    if alpha > 0:
        lam = np.random.beta(alpha, alpha)
    else:
        lam = 1.
    batch_size = x.size()[0]
    index = torch.randperm(batch_size).cuda()

    mixed_x = lam * x + (1 - lam) * x[index, :]
    y_a, y_b = y, y[index]
    y_a_y_b_lam = torch.cat([y_a[:, None].float(), y_b[:, None].float(),
                             torch.tensor([lam] * batch_size, device=y.device)[:, None].float()], 1)
    return mixed_x, y_a_y_b_lam


class MixUpLoss(nn.Module):
    """
    Adapts the loss function `crit` to go with mixup.
    """
    def __init__(self, crit, reduction='mean'):
        super().__init__()
        if hasattr(crit, 'reduction'):
            self.crit = crit
            self.old_red = crit.reduction
            setattr(self.crit, 'reduction', 'none')
        self.reduction = reduction

    def forward(self, output, target):
        if len(target.size()) == 2:
            loss1 = self.crit(output, target[:, 0].long())
            loss2 = self.crit(output, target[:, 1].long())
            d = loss1 * target[:, 2] + loss2 * (1 - target[:, 2])
        else:
            d = self.crit(output, target)
        if self.reduction == 'mean':
            return d.mean()
        elif self.reduction == 'sum':
            return d.sum()
        return d

    def get_old(self):
        if hasattr(self, 'old_crit'):
            return self.old_crit
        elif hasattr(self, 'old_red'):
            setattr(self.crit, 'reduction', self.old_red)
            return self.crit
