import torch


class PolyWarmupAdamW(torch.optim.AdamW):

    def __init__(self, params, lr, weight_decay, betas, warmup_iter=None, max_iter=None, warmup_ratio=None, power=None):
        super().__init__(params, lr=lr, betas=betas, weight_decay=weight_decay, eps=1e-8)

        self.global_step = 0
        self.warmup_iter = warmup_iter
        self.warmup_ratio = warmup_ratio
        self.max_iter = max_iter
        self.power = power

        self.__init_lr = [group['lr'] for group in self.param_groups]

    def step(self, closure=None):
        ## adjust lr
        if self.global_step < self.warmup_iter:

            lr_mult = 1 - (1 - self.global_step / self.warmup_iter) * (1 - self.warmup_ratio)
            for i in range(len(self.param_groups)):
                self.param_groups[i]['lr'] = self.__init_lr[i] * lr_mult

        elif self.global_step < self.max_iter:

            lr_mult = (1 - self.global_step / self.max_iter) ** self.power
            for i in range(len(self.param_groups)):
                self.param_groups[i]['lr'] = self.__init_lr[i] * lr_mult

        # step
        super().step(closure)

        self.global_step += 1


class PolyWarmupSGD(torch.optim.SGD):
    """SGD counterpart used by the DeepLab-style segmentation stage."""

    def __init__(self, params, lr, weight_decay, momentum=0.9, warmup_iter=None, max_iter=None, warmup_ratio=None, power=None):
        super().__init__(params, lr=lr, momentum=momentum, weight_decay=weight_decay)

        self.global_step = 0
        self.warmup_iter = warmup_iter or 0
        self.warmup_ratio = warmup_ratio or 1.0
        self.max_iter = max_iter
        self.power = power

        self.__init_lr = [group['lr'] for group in self.param_groups]

    def step(self, closure=None):
        if self.global_step < self.warmup_iter:
            lr_mult = 1 - (1 - self.global_step / self.warmup_iter) * (1 - self.warmup_ratio)
        elif self.global_step < self.max_iter:
            lr_mult = (1 - self.global_step / self.max_iter) ** self.power
        else:
            lr_mult = 0.0

        for i in range(len(self.param_groups)):
            self.param_groups[i]['lr'] = self.__init_lr[i] * lr_mult

        super().step(closure)

        self.global_step += 1
