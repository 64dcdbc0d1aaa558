import os
import sys
import random
import time
import warnings

import numpy as np
import torch

from openood.pipelines import get_pipeline
from openood.utils import launch, setup_config, setup_logger
from openood.utils import comm

warnings.filterwarnings('ignore', category=UserWarning)


def set_random_seed(seed, deterministic=False):
    """Seed every RNG we know about.

    The default OpenOOD configs use seed 0. Setting ``deterministic`` makes
    cudnn pick deterministic convolution algorithms, which is ~10% slower on
    V100 but makes the benchmark numbers reproducible to the 4th digit.
    """
    random.seed(seed)
    os.environ['PYTHONHASHSEED'] = str(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    if deterministic:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
    else:
        torch.backends.cudnn.benchmark = True


def print_env_info(config):
    print('=' * 60, flush=True)
    print('python   : {}'.format(sys.version.split()[0]))
    print('torch    : {}'.format(torch.__version__))
    print('numpy    : {}'.format(np.__version__))
    print('num_gpus : {}  (machines: {}, rank: {})'.format(
        config.num_gpus, config.num_machines, config.machine_rank))
    if config.num_gpus > 0:
        print('device   : {}'.format(torch.cuda.get_device_name(0)))
        print('cudnn    : {}'.format(torch.backends.cudnn.version()))
    print('=' * 60, flush=True)


def main(config):
    """Main entrance. Config is all you need to provide to run the code. Config
    should be provided in the format of YAML and can be modified with command
    line.

    Example:
        python main.py \\
            --config configs/datasets/cifar10/cifar10.yml \\
            configs/datasets/cifar10/cifar10_ood.yml \\
            configs/networks/resnet18_32x32.yml \\
            configs/pipelines/test/test_ood.yml \\
            configs/postprocessors/odin.yml \\
            --network.checkpoint ./results/cifar10_resnet18_32x32_base_e100_lr0.1/best.ckpt \\
            --num_gpus 1 --num_workers 8

    Note:
        A config file is the minimum requirement.
        You don't need to write "--config" when only one config is provided.
        To modify a nested item, use "." to connect the keys, e.g.
        ``--dataset.image_size 32``.
    """
    if config.num_gpus > 0:
        local_rank = comm.get_local_rank()
        torch.cuda.set_device(local_rank)

    set_random_seed(config.seed + comm.get_rank(),
                    deterministic=config.get('deterministic', False))

    # generate output directory and save the full config file
    if comm.is_main_process():
        setup_logger(config)
        print_env_info(config)

    tic = time.time()
    pipeline = get_pipeline(config)
    pipeline.run()

    if comm.is_main_process():
        print('Total time: {:.1f}s'.format(time.time() - tic), flush=True)


if __name__ == '__main__':
    config = setup_config()

    # multi-gpu / multi-node training goes through launch(); evaluation is
    # almost always done with a single card.
    if config.num_gpus * config.num_machines > 1:
        launch(
            main,
            config.num_gpus,
            num_machines=config.num_machines,
            machine_rank=config.machine_rank,
            dist_url='auto',
            args=(config, ),
        )
    else:
        main(config)
