import importlib
import random

import numpy as np
import torch
import torch.nn as nn
from torch.optim import Adam, lr_scheduler

from util.distributed import master_only_print as print
from util.init_weight import weights_init


def accumulate(model1, model2, decay=0.999):
    par1 = dict(model1.named_parameters())
    par2 = dict(model2.named_parameters())

    for k in par1.keys():
        par1[k].data.mul_(decay).add_(par2[k].data, alpha=1 - decay)


def set_random_seed(seed):
    r"""Set random seeds for everything.

    Args:
        seed (int): Random seed.
        by_rank (bool):
    """
    print(f"Using random seed {seed}")
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def init_cudnn(deterministic, benchmark):
    r"""Initialize the cudnn module. The two things to consider is whether to
    use cudnn benchmark and whether to use cudnn deterministic. If cudnn
    benchmark is set, then the cudnn deterministic is automatically false.

    Args:
        deterministic (bool): Whether to use cudnn deterministic.
        benchmark (bool): Whether to use cudnn benchmark.
    """
    torch.backends.cudnn.deterministic = deterministic
    torch.backends.cudnn.benchmark = benchmark
    print('cudnn benchmark: {}'.format(benchmark))
    print('cudnn deterministic: {}'.format(deterministic))


def get_trainer(opt, net_G, net_D, net_G_ema, opt_G, opt_D, sch_G, sch_D, train_data_loader):
    module, trainer_name = opt.trainer.type.split('::')

    trainer_lib = importlib.import_module(module)
    trainer_class = getattr(trainer_lib, trainer_name)
    trainer = trainer_class(opt, net_G, net_D, net_G_ema, opt_G, opt_D, sch_G, sch_D, train_data_loader)
    return trainer


def get_model_optimizer_and_scheduler(opt):
    gen_module, gen_network_name = opt.gen.type.split('::')
    lib = importlib.import_module(gen_module)
    network = getattr(lib, gen_network_name)
    net_G = network(**opt.gen.param).to(opt.device)
    init_bias = getattr(opt.trainer.init, 'bias', None)
    net_G.apply(weights_init(
        opt.trainer.init.type, opt.trainer.init.gain, init_bias))

    net_G_ema = network(**opt.gen.param).to(opt.device)
    net_G_ema.eval()
    accumulate(net_G_ema, net_G, 0)

    dis_module, dis_network_name = opt.dis.type.split('::')
    lib = importlib.import_module(dis_module)
    network = getattr(lib, dis_network_name)
    net_D = network(**opt.dis.param).to(opt.device)
    net_D.apply(weights_init(
        opt.trainer.init.type, opt.trainer.init.gain, init_bias))
    print('net [{}] parameter count: {:,}'.format(
        'net_G', _calculate_model_size(net_G)))
    print('net [{}] parameter count: {:,}'.format(
        'net_D', _calculate_model_size(net_D)))

    opt_G = get_optimizer(opt.gen_optimizer, net_G)
    opt_D = get_optimizer(opt.dis_optimizer, net_D)
    net_G, net_D, net_G_ema, opt_G, opt_D = \
        wrap_model(opt, net_G, net_D, net_G_ema, opt_G, opt_D)

    sch_G = get_scheduler(opt.gen_optimizer, opt_G)
    sch_D = get_scheduler(opt.dis_optimizer, opt_D)

    return net_G, net_D, net_G_ema, opt_G, opt_D, sch_G, sch_D


def _calculate_model_size(model):
    r"""Calculate number of parameters in a PyTorch network.

    Args:
        model (obj): PyTorch network.

    Returns:
        (int): Number of parameters.
    """
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def get_scheduler(opt_opt, opt):
    """Return the scheduler object.

    Args:
        opt_opt (obj): Config for the specific optimization module (gen/dis).
        opt (obj): PyTorch optimizer object.

    Returns:
        (obj): Scheduler
    """
    if opt_opt.lr_policy.type == 'step':
        scheduler = lr_scheduler.StepLR(
            opt,
            step_size=opt_opt.lr_policy.step_size,
            gamma=opt_opt.lr_policy.gamma)
    elif opt_opt.lr_policy.type == 'constant':
        scheduler = lr_scheduler.LambdaLR(opt, lambda x: 1)
    else:
        return NotImplementedError('Learning rate policy {} not implemented.'.
                                   format(opt_opt.lr_policy.type))
    return scheduler


def get_optimizer(opt_opt, net):
    return get_optimizer_for_params(opt_opt, net.parameters())


def get_optimizer_for_params(opt_opt, params):
    r"""Return the scheduler object.

    Args:
        opt_opt (obj): Config for the specific optimization module (gen/dis).
        params (obj): Parameters to be trained by the parameters.

    Returns:
        (obj): Optimizer
    """
    # We will use fuse optimizers by default.
    if opt_opt.type == 'adam':
        opt = Adam(params,
                   lr=opt_opt.lr,
                   betas=(opt_opt.adam_beta1, opt_opt.adam_beta2))
    elif opt_opt.type == 'fused_adam':
        from apex.optimizers import FusedAdam
        opt = FusedAdam(params,
                        lr=opt_opt.lr,
                        betas=(opt_opt.adam_beta1, opt_opt.adam_beta2))
    else:
        raise NotImplementedError(
            'Optimizer {} is not yet implemented.'.format(opt_opt.type))
    return opt


class WrappedModel(nn.Module):
    r"""Dummy wrapping the module.
    """

    def __init__(self, module):
        super(WrappedModel, self).__init__()
        self.module = module

    def forward(self, *args, **kwargs):
        r"""PyTorch module forward function overload."""
        return self.module(*args, **kwargs)


def wrap_model(opt, net_G, net_D, net_G_ema, opt_G, opt_D):
    r"""Wrap the networks with AMP DDP and (optionally) model average.

    Args:
        opt (obj): Global configuration.
        net_G (obj): Generator network.
        net_D (obj): Discriminator network.
        opt_G (obj): Optimizer for the generator network.
        opt_D (obj): Optimizer for the discriminator network.

    Returns:
        (dict):
          - net_G (obj): Generator network.
          - net_D (obj): Discriminator network.
          - opt_G (obj): Optimizer for the generator network.
          - opt_D (obj): Optimizer for the discriminator network.
    """
    # Apply DDP wrapper.
    if opt.distributed:
        net_G = nn.SyncBatchNorm.convert_sync_batchnorm(net_G)
        net_D = nn.SyncBatchNorm.convert_sync_batchnorm(net_D)
        net_G = nn.parallel.DistributedDataParallel(
            net_G,
            device_ids=[opt.local_rank],
            output_device=opt.local_rank,
            broadcast_buffers=False,
            find_unused_parameters=True,
        )
        net_D = nn.parallel.DistributedDataParallel(
            net_D,
            device_ids=[opt.local_rank],
            output_device=opt.local_rank,
            broadcast_buffers=False,
            find_unused_parameters=True,
        )
    else:
        net_G = WrappedModel(net_G)
        net_D = WrappedModel(net_D)
    return net_G, net_D, net_G_ema, opt_G, opt_D
