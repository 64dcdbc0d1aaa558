# Once for All: Train One Network and Specialize it for Efficient Deployment
# Han Cai, Chuang Gan, Tianzhe Wang, Zhekai Zhang, Song Han
# International Conference on Learning Representations (ICLR), 2020.
#
# Evaluate a (randomly sampled or searched) sub-network of a pretrained OFA network on ImageNet.
#
#   python eval_ofa_net.py --path /dataset/imagenet --net ofa_mbv3_d234_e346_k357_w1.2 --gpu 0,1
#   python eval_ofa_net.py --search --latency-constraint 25 --hardware note10

import os
import time
import random
import argparse

import numpy as np
import torch

from ofa.imagenet_classification.elastic_nn.utils import set_running_statistics
from ofa.imagenet_classification.data_providers.imagenet import ImagenetDataProvider
from ofa.imagenet_classification.run_manager import ImagenetRunConfig, RunManager
from ofa.model_zoo import ofa_net
from ofa.nas.accuracy_predictor import AccuracyPredictor, ResNetArchEncoder, MobileNetArchEncoder
from ofa.nas.efficiency_predictor.latency_lookup_table import LatencyEstimator
from ofa.nas.search_algorithm import EvolutionFinder
from ofa.utils import download_url

parser = argparse.ArgumentParser()
parser.add_argument('-p', '--path', help='The path of imagenet', type=str, default='/dataset/imagenet')
parser.add_argument('-g', '--gpu', help='The gpu(s) to use', type=str, default='all')
parser.add_argument('-b', '--batch-size', help='The batch on every device for validation', type=int, default=100)
parser.add_argument('-j', '--workers', help='Number of workers', type=int, default=20)
parser.add_argument('-n', '--net', metavar='OFANET', default='ofa_resnet50',
                    choices=['ofa_mbv3_d234_e346_k357_w1.0', 'ofa_mbv3_d234_e346_k357_w1.2', 'ofa_proxyless_d234_e346_k357_w1.3',
                             'ofa_resnet50'],
                    help='OFA networks')
parser.add_argument('--seed', type=int, default=1)
parser.add_argument('--search', action='store_true', help='run the evolutionary search before evaluating')
parser.add_argument('--hardware', type=str, default='note10', choices=['note10', 'gpu64'],
                    help='latency table used by the search ("gpu64" = batch-64 table measured on the local GPU)')
parser.add_argument('--latency-constraint', type=float, default=25.0, help='ms')
parser.add_argument('--population-size', type=int, default=100)
parser.add_argument('--max-time-budget', type=int, default=500)

args = parser.parse_args()
if args.gpu == 'all':
    device_list = range(torch.cuda.device_count())
    args.gpu = ','.join(str(_) for _ in device_list)
else:
    device_list = [int(_) for _ in args.gpu.split(',')]
os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu
args.batch_size = args.batch_size * max(len(device_list), 1)
ImagenetDataProvider.DEFAULT_PATH = args.path

# set random seed
random.seed(args.seed)
np.random.seed(args.seed)
torch.manual_seed(args.seed)
cuda_available = torch.cuda.is_available()
if cuda_available:
    torch.backends.cudnn.enabled = True
    torch.backends.cudnn.benchmark = True
    torch.cuda.manual_seed(args.seed)
    print('Using GPU.')
else:
    print('Using CPU.')

ofa_network = ofa_net(args.net, pretrained=True)
run_config = ImagenetRunConfig(test_batch_size=args.batch_size, n_worker=args.workers)


def search_subnet(ofa_network):
    """ Accuracy predictor + latency table + evolution, as in the OFA tutorial. """
    if 'resnet' in args.net:
        arch_encoder = ResNetArchEncoder(
            image_size_list=[128, 144, 160, 176, 192, 224, 240, 256],
            depth_list=ofa_network.depth_list, expand_list=ofa_network.expand_ratio_list,
            width_mult_list=ofa_network.width_mult_list,
        )
        predictor_url = 'https://hanlab.mit.edu/files/OnceForAll/tutorial/ofa_resnet50_acc_predictor.pth'
    else:
        arch_encoder = MobileNetArchEncoder(
            image_size_list=[128, 144, 160, 176, 192, 208, 224],
            ks_list=ofa_network.ks_list, expand_list=ofa_network.expand_ratio_list,
            depth_list=ofa_network.depth_list,
        )
        predictor_url = 'https://hanlab.mit.edu/files/OnceForAll/tutorial/acc_predictor.pth'
    checkpoint_path = download_url(predictor_url, model_dir='~/.ofa/')
    accuracy_predictor = AccuracyPredictor(
        arch_encoder, hidden_size=400, n_layers=3, checkpoint_path=checkpoint_path,
        device='cuda:0' if cuda_available else 'cpu',
    )
    print('The accuracy predictor is ready!')
    print(accuracy_predictor.model)

    efficiency_predictor = LatencyEstimator(hardware=args.hardware)
    finder = EvolutionFinder(
        efficiency_predictor=efficiency_predictor, accuracy_predictor=accuracy_predictor,
        population_size=args.population_size, max_time_budget=args.max_time_budget,
        parent_ratio=0.25, mutation_ratio=0.5, mutate_prob=0.1,
    )
    st = time.time()
    best_valids, best_info = finder.run_evolution_search(args.latency_constraint, verbose=True)
    ed = time.time()
    print('Found best architecture on %s with latency <= %.2f ms in %.2f seconds! '
          'It achieves %.2f%s predicted accuracy with %.2f ms latency on %s.' %
          (args.hardware, args.latency_constraint, ed - st, best_info[0] * 100, '%', best_info[-1], args.hardware))
    _, net_config, latency = best_info
    ofa_network.set_active_subnet(ks=net_config['ks'], d=net_config['d'], e=net_config['e'])
    return net_config['r'][0]


if args.search:
    img_size = search_subnet(ofa_network)
else:
    """ Randomly sample a sub-network,
        you can also manually set the sub-network using:
            ofa_network.set_active_subnet(ks=7, e=6, d=4)
    """
    ofa_network.sample_active_subnet()
    img_size = 224
subnet = ofa_network.get_active_subnet(preserve_weight=True)

""" Test sampled subnet
"""
run_manager = RunManager('.tmp/eval_subnet', subnet, run_config, init=False)
# assign image size: 128, 132, ..., 224
run_config.data_provider.assign_active_img_size(img_size)
run_manager.reset_running_statistics(net=subnet)

print('Test random subnet:')
print(subnet.module_str)

loss, (top1, top5) = run_manager.validate(net=subnet)
print('Results: loss=%.5f,\t top1=%.1f,\t top5=%.1f' % (loss, top1, top5))
