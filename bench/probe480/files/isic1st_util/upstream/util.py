import torch
from warmup_scheduler import GradualWarmupScheduler


class GradualWarmupSchedulerV2(GradualWarmupScheduler):
    """ https://github.com/ildoonet/pytorch-gradual-warmup-lr

    The upstream scheduler calls after_scheduler.step() with the wrong epoch
    on the first step after warm-up; this subclass fixes the lr returned in
    the transition epoch.
    """

    def __init__(self, optimizer, multiplier, total_epoch, after_scheduler=None):
        super(GradualWarmupSchedulerV2, self).__init__(optimizer, multiplier, total_epoch, after_scheduler)

    def get_lr(self):
        if self.last_epoch > self.total_epoch:
            if self.after_scheduler:
                if not self.finished:
                    self.after_scheduler.base_lrs = [base_lr * self.multiplier for base_lr in self.base_lrs]
                    self.finished = True
                return self.after_scheduler.get_lr()
            return [base_lr * self.multiplier for base_lr in self.base_lrs]
        if self.multiplier == 1.0:
            return [base_lr * (float(self.last_epoch) / self.total_epoch) for base_lr in self.base_lrs]
        else:
            return [base_lr * ((self.multiplier - 1.) * self.last_epoch / self.total_epoch + 1.) for base_lr in self.base_lrs]


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def rank_average(df, cols):
    """Rank-average several submission columns; used for the final blend."""
    out = None
    for c in cols:
        r = df[c].rank(pct=True)
        out = r if out is None else out + r
    return out / len(cols)


def freeze_bn(model):
    """Keep BatchNorm statistics fixed when fine-tuning at 896/1024 px
    where the per-GPU batch becomes too small for stable statistics."""
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.eval()
            m.weight.requires_grad = False
            m.bias.requires_grad = False
