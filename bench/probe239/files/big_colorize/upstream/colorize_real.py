"""Colorize real grayscale photos with a trained BigColor model.

    python colorize_real.py --path_ckpt ckpts/bigcolor --path_input images_gray --epoch 11 --type_resize powerof \
        --seed -1 --device cuda:0
"""
import argparse
import os
import pickle
import random
from os.path import join, exists

import numpy as np
import timm
import torch
import torch.nn.functional as F
from PIL import Image
from torchvision.transforms import ToPILImage, ToTensor, Grayscale, Resize
from tqdm import tqdm

from models import Colorizer
from utils.common_utils import lab_fusion, set_seed


def parse():
    parser = argparse.ArgumentParser()
    # I/O
    parser.add_argument('--path_config', default='./pretrained/config.pickle')
    parser.add_argument('--path_ckpt_g', default='./pretrained/G_ema_256.pth')
    parser.add_argument('--path_ckpt', default='./ckpts/bigcolor')
    parser.add_argument('--path_output', default='./results_real')
    parser.add_argument('--path_input', default='./resource/real_grays')
    parser.add_argument('--epoch', type=int, default=11)
    parser.add_argument('--use_ema', action='store_true')
    # Conversion
    parser.add_argument('--type_resize', type=str, default='powerof',
                        choices=['absolute', 'original', 'square', 'patch', 'powerof'])
    parser.add_argument('--num_power', type=int, default=4)
    parser.add_argument('--size_target', type=int, default=256)
    parser.add_argument('--topk', type=int, default=5)
    # Encoder
    parser.add_argument('--dim_encoder_c', type=int, default=128)
    parser.add_argument('--dim_f', type=int, default=16)
    parser.add_argument('--no_res', action='store_true')
    parser.add_argument('--no_cond_e', action='store_true')
    # Others
    parser.add_argument('--seed', type=int, default=-1)
    parser.add_argument('--device', default='cuda:0')
    parser.add_argument('--half', action='store_true', help='run the generator in fp16 (GPU only)')
    return parser.parse_args()


def main(args):
    if args.seed >= 0:
        set_seed(args.seed)
        torch.cuda.manual_seed_all(args.seed)

    print('Target Epoch is %03d' % args.epoch)

    path_eg = join(args.path_ckpt, 'EG_%03d.ckpt' % args.epoch)
    path_eg_ema = join(args.path_ckpt, 'EG_EMA_%03d.ckpt' % args.epoch)
    path_args = join(args.path_ckpt, 'exp_args.pkl')

    if not exists(path_eg):
        raise FileNotFoundError(path_eg)
    if not exists(path_args):
        raise FileNotFoundError(path_args)

    # Load Configuratuion
    with open(args.path_config, 'rb') as f:
        config = pickle.load(f)
    with open(path_args, 'rb') as f:
        args_loaded = pickle.load(f)

    dev = args.device
    use_half = args.half and str(dev).startswith('cuda')

    # Load Colorizer
    EG = Colorizer(config,
                   args.path_ckpt_g,
                   args_loaded.norm_type,
                   id_mid_layer=args_loaded.num_layer,
                   activation=args_loaded.activation,
                   use_attention=args_loaded.use_attention,
                   dim_f=args.dim_f)
    EG.load_state_dict(torch.load(path_eg, map_location='cpu'), strict=True)
    EG_ema = ExponentialMovingAverage(EG.parameters(), decay=0.99)
    EG_ema.load_state_dict(torch.load(path_eg_ema, map_location='cpu'))

    EG.eval()
    EG.float()
    EG.to(dev)

    if args.use_ema:
        print('Use EMA')
        EG_ema.copy_to()

    if use_half:
        EG.half()

    # Classifier used to pick the ImageNet class that conditions the generator
    classifier = timm.create_model('vit_large_patch16_224', pretrained=True).to(dev).eval()

    os.makedirs(args.path_output, exist_ok=True)

    paths = sorted(os.listdir(args.path_input))
    for path in tqdm(paths):
        im = Image.open(join(args.path_input, path))
        x = ToTensor()(im)
        if x.shape[0] != 1:
            x = Grayscale()(x)

        size = x.shape[1:]

        x = x.unsqueeze(0)
        x = x.to(dev)
        z = torch.zeros((1, args_loaded.dim_z)).to(dev)
        z.normal_(mean=0, std=0.8)

        # Classification
        x_cls = x.repeat(1, 3, 1, 1)
        x_cls = Resize((224, 224))(x_cls)
        with torch.no_grad():
            logits = classifier(x_cls)
        c = torch.topk(logits, k=args.topk, dim=-1)[1][0]

        x_resize = resize_for_model(x, size, args)

        for k, ci in enumerate(c):
            c_ = ci.view(1).to(dev)
            with torch.no_grad():
                inp = x_resize.half() if use_half else x_resize
                output = EG(inp, c_, z)
                output = output.float().add(1).div(2)

            if args.no_res:
                output = F.interpolate(output, size=size, mode='bilinear')
            output = lab_fusion(x, F.interpolate(output, size=size, mode='bilinear'))
            output = output.squeeze(0).detach().cpu()

            name = path.split('.')[0]
            out_name = join(args.path_output, f'{name}_c{k}_{ci.item():04d}.jpg')
            ToPILImage()(output).save(out_name)

    torch.cuda.empty_cache()


def resize_for_model(x, size, args):
    if args.type_resize == 'absolute':
        return Resize((args.size_target))(x)
    if args.type_resize == 'original':
        return x
    if args.type_resize == 'square':
        return Resize((args.size_target, args.size_target))(x)
    if args.type_resize == 'powerof':
        assert args.size_target % (2 ** args.num_power) == 0
        h, w = size
        if not h % (2 ** args.num_power) == 0:
            h = h // (2 ** args.num_power) * (2 ** args.num_power)
        if not w % (2 ** args.num_power) == 0:
            w = w // (2 ** args.num_power) * (2 ** args.num_power)
        return Resize((h, w))(x)
    raise Exception('Invalid resize type')


class ExponentialMovingAverage:
    """Minimal EMA holder (same state_dict layout as torch_ema)."""

    def __init__(self, parameters, decay):
        self.decay = decay
        self.parameters = list(parameters)
        self.shadow_params = [p.clone().detach() for p in self.parameters]

    def copy_to(self):
        for s_param, param in zip(self.shadow_params, self.parameters):
            param.data.copy_(s_param.data)

    def load_state_dict(self, state_dict):
        self.decay = state_dict['decay']
        self.shadow_params = [p.to(self.parameters[0].device) for p in state_dict['shadow_params']]


if __name__ == '__main__':
    args = parse()
    main(args)
