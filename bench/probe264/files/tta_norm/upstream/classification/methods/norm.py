"""
Normalization-based test-time adaptation baselines.

* BNTest   - "Improving robustness against common corruptions by covariate shift adaptation"
             (Schneider et al., NeurIPS 2020): replace the source statistics by test-batch statistics.
* AlphaBN  - mix source and test statistics with a fixed weight alpha (You et al., 2021).
* DUA      - "The Norm Must Go On: Dynamic Unsupervised Domain Adaptation by Normalization"
             (Mirza et al., CVPR 2022): update running stats with a decaying momentum on augmented copies.
"""

import logging
from copy import deepcopy

import torch
import torch.nn as nn
import torch.nn.functional as F

from methods.base import TTAMethod

logger = logging.getLogger(__name__)


class AlphaBatchNorm(nn.Module):
    """ Use the source statistics as a prior on the target statistics """

    @staticmethod
    def find_bns(parent, alpha):
        replace_mods = []
        if parent is None:
            return []
        for name, child in parent.named_children():
            if isinstance(child, nn.BatchNorm2d):
                module = AlphaBatchNorm(child, alpha)
                replace_mods.append((parent, name, module))
            else:
                replace_mods.extend(AlphaBatchNorm.find_bns(child, alpha))
        return replace_mods

    @staticmethod
    def adapt_model(model, alpha):
        replace_mods = AlphaBatchNorm.find_bns(model, alpha)
        logger.info(f"| Found {len(replace_mods)} modules to be replaced.")
        for (parent, name, child) in replace_mods:
            setattr(parent, name, child)
        return model

    def __init__(self, layer, alpha):
        assert 0 <= alpha <= 1
        super().__init__()
        self.layer = layer
        self.layer.eval()
        self.alpha = alpha

        self.norm = nn.BatchNorm2d(self.layer.num_features, affine=False, momentum=1.0)

    def forward(self, input):
        self.norm(input)

        running_mean = ((1 - self.alpha) * self.layer.running_mean + self.alpha * self.norm.running_mean)
        running_var = ((1 - self.alpha) * self.layer.running_var + self.alpha * self.norm.running_var)

        return F.batch_norm(
            input,
            running_mean,
            running_var,
            self.layer.weight,
            self.layer.bias,
            False,
            0,
            self.layer.eps,
        )


class EMABatchNorm(nn.Module):
    @staticmethod
    def adapt_model(model):
        model = EMABatchNorm(model)
        return model

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        # store statistics, but discard result
        self.model.train()
        self.model(x)
        # store statistics, use the stored stats
        self.model.eval()
        return self.model(x)


class DUABatchNorm(nn.Module):
    """Running-statistics update used by DUA: every test batch is augmented a few times and the
    BN running mean / variance are pulled towards the statistics of the augmented batch with a
    momentum that decays after each update."""

    def __init__(self, layer, mom_pre=0.1, decay_factor=0.94, min_mom=0.005):
        super().__init__()
        self.layer = layer
        self.mom = mom_pre
        self.decay_factor = decay_factor
        self.min_mom = min_mom

    @torch.no_grad()
    def update_stats(self, x):
        b_var, b_mean = torch.var_mean(x, dim=[0, 2, 3], unbiased=False)
        n = x.numel() / x.size(1)
        b_var = b_var * n / max(n - 1, 1)  # unbiased, as in nn.BatchNorm2d
        self.layer.running_mean.mul_(1 - self.mom).add_(self.mom * b_mean)
        self.layer.running_var.mul_(1 - self.mom).add_(self.mom * b_var)
        self.mom = max(self.mom * self.decay_factor, self.min_mom)

    def forward(self, x):
        return F.batch_norm(x, self.layer.running_mean, self.layer.running_var,
                            self.layer.weight, self.layer.bias, False, 0.0, self.layer.eps)


class BNTest(TTAMethod):
    def __init__(self, cfg, model, num_classes):
        super().__init__(cfg, model, num_classes)

    @torch.no_grad()
    def forward_and_adapt(self, x):
        return self.model(x[0])

    def configure_model(self):
        self.model.eval()
        for m in self.model.modules():
            # Re-activate bn-layers
            if isinstance(m, nn.BatchNorm2d):
                m.train()
                # force use of batch stats in train and eval modes
                m.track_running_stats = False
                m.running_mean = None
                m.running_var = None

    def collect_params(self):
        return [], []

    def copy_model_and_optimizer(self):
        return [deepcopy(self.model.state_dict())], None

    def load_model_and_optimizer(self):
        self.model.load_state_dict(self.model_states[0], strict=True)

    def reset(self):
        self.load_model_and_optimizer()


class AlphaBN(BNTest):
    def configure_model(self):
        self.model.eval()
        self.model = AlphaBatchNorm.adapt_model(self.model, alpha=self.cfg.BN.ALPHA)


class DUA(BNTest):
    def __init__(self, cfg, model, num_classes):
        super().__init__(cfg, model, num_classes)
        self.num_augs = cfg.DUA.NUM_AUGS if hasattr(cfg, "DUA") else 16
        self.tta_transform = self.get_tta_transforms(soft=True)

    def configure_model(self):
        self.model.eval()
        self.dua_layers = []
        for name, m in self.model.named_modules():
            for cname, child in list(m.named_children()):
                if isinstance(child, nn.BatchNorm2d):
                    dua = DUABatchNorm(child)
                    setattr(m, cname, dua)
                    self.dua_layers.append(dua)
        logger.info(f"DUA: wrapped {len(self.dua_layers)} BatchNorm2d layers")

    @torch.no_grad()
    def forward_and_adapt(self, x):
        imgs_test = x[0]
        # hook every DUA layer so that a forward on the augmented batch updates the stats
        handles = [l.register_forward_pre_hook(lambda mod, inp: mod.update_stats(inp[0])) for l in self.dua_layers]
        aug = torch.cat([self.tta_transform(imgs_test) for _ in range(self.num_augs)], dim=0)
        self.model(aug)
        for h in handles:
            h.remove()
        return self.model(imgs_test)
