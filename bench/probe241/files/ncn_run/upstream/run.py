import os
import argparse
import numpy as np
import torch
import random

parser = argparse.ArgumentParser(description='NowcastNet')

parser.add_argument('--gpu', type=str, default='0',
                    help='id(s) of the GPU(s) to use, e.g. "0" or "0,1"')
parser.add_argument('--device', type=str, default='cuda:0')
parser.add_argument('--worker', type=int, default=16)
parser.add_argument('--cpu_worker', type=int, default=4)
parser.add_argument('--dataset_name', type=str, default='radar')
parser.add_argument('--dataset_path', type=str, default='data/dataset/mrms/figure')
parser.add_argument('--model_name', type=str, default='NowcastNet')
parser.add_argument('--pretrained_model', type=str, default='data/checkpoints/mrms_model.ckpt')
parser.add_argument('--gen_frm_dir', type=str, default='results/us/')
parser.add_argument('--case_type', type=str, default='normal')
parser.add_argument('--input_length', type=int, default=9)
parser.add_argument('--total_length', type=int, default=29)
parser.add_argument('--img_height', type=int, default=512)
parser.add_argument('--img_width', type=int, default=512)
parser.add_argument('--img_ch', type=int, default=2)
parser.add_argument('--num_save_samples', type=int, default=10)
parser.add_argument('--ngf', type=int, default=32)
parser.add_argument('--batch_size', type=int, default=1)
parser.add_argument('--seed', type=int, default=1234)
parser.add_argument('--half', action='store_true', help='run the generator in fp16')

args = parser.parse_args()

# restrict this process to the requested card(s); must happen before the first CUDA call
os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu

args.evo_ic = args.total_length - args.input_length
args.gen_oc = args.total_length - args.input_length
args.ic_feature = args.ngf * 10

if args.case_type == 'normal':
    args.img_height = 512
    args.img_width = 512
elif args.case_type == 'large':
    args.img_height = 1024
    args.img_width = 1024
else:
    raise ValueError('unknown case_type {}'.format(args.case_type))

from nowcasting.data_provider import datasets_factory
from nowcasting.models.model_factory import Model
import nowcasting.evaluator as evaluator


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(seed)
    torch.backends.cudnn.deterministic = True


def test_wrapper_pytorch_loader(model):
    batch_size_test = args.batch_size
    test_input_handle = datasets_factory.data_provider(args)
    args.batch_size = batch_size_test
    evaluator.test_pytorch_loader(model, test_input_handle, args, 'test_result')


if __name__ == '__main__':
    set_seed(args.seed)
    if not torch.cuda.is_available():
        print('CUDA is not available, falling back to CPU (this will be very slow for 1024x1024 cases)')
        args.device = 'cpu'
    print('>>> device: {} | visible GPUs: {}'.format(args.device, torch.cuda.device_count()))

    print('Initializing models')
    model = Model(args)
    model.load(args.pretrained_model)
    if args.half:
        model.network.half()
    test_wrapper_pytorch_loader(model)
