import os
import sys
prj_path = os.path.join(os.path.dirname(__file__), '..')
if prj_path not in sys.path:
    sys.path.append(prj_path)

import argparse
import torch
from thop import profile
from thop.utils import clever_format
import time
import importlib


def parse_args():
    """
    args for profiling.
    """
    parser = argparse.ArgumentParser(description='Compute MACs, params and GPU speed of a MixFormer model')
    parser.add_argument('--script', type=str, default='mixformer_cvt', choices=['mixformer_cvt', 'mixformer_cvt_online',
                                                                                'mixformer_vit', 'mixformer_vit_online'],
                        help='training script name')
    parser.add_argument('--config', type=str, default='baseline', help='yaml configure file name')
    parser.add_argument('--display_name', type=str, default='MixFormer')
    parser.add_argument('--online_skip', type=int, default=200, help='the skip interval of mixformer-online')
    parser.add_argument('--fp16', action='store_true', help='profile in half precision')
    parser.add_argument('--gpu', type=int, default=0, help='which GPU to profile on')
    args = parser.parse_args()

    return args


def evaluate(model, template, search, skip=200, display_info='MixFormer'):
    """Compute FLOPs, Params, and Speed"""
    # compute flops and params except for score prediction
    macs, params = profile(model, inputs=(template, template, search, False), custom_ops=None, verbose=False)
    macs, params = clever_format([macs, params], "%.3f")
    print('==>Macs is ', macs)
    print('==>Params is ', params)

    # test speed
    T_w = 50
    T_t = 1000
    print("testing speed ...")
    with torch.no_grad():
        # warm up (cudnn autotuning, allocator)
        for i in range(T_w):
            _ = model(template, template, search, run_score_head=True)
        torch.cuda.synchronize()  # make sure warm-up kernels are done
        start = time.time()
        for i in range(T_t):
            if i % skip == 0:
                _ = model.set_online(template, template)
            _ = model.forward_test(search)
        torch.cuda.synchronize()  # wait for the async kernels before stopping the clock
        end = time.time()
        avg_lat = (end - start) / T_t
        print("\033[0;32;40m The average overall FPS of {} is {}.\033[0m".format(display_info, 1.0 / avg_lat))


def evaluate_vit(model, template, search, display_info='MixFormer-ViT'):
    """Speed of the plain (non-online) ViT variant"""
    macs, params = profile(model, inputs=(template, search), custom_ops=None, verbose=False)
    macs, params = clever_format([macs, params], "%.3f")
    print('==>Macs is ', macs)
    print('==>Params is ', params)

    T_w = 50
    T_t = 1000
    with torch.no_grad():
        for i in range(T_w):
            _ = model(template, search)
        start = time.time()
        for i in range(T_t):
            _ = model(template, search)
        torch.cuda.synchronize()
        end = time.time()
        avg_lat = (end - start) / T_t
        print("The average overall FPS of {} is {}.".format(display_info, 1.0 / avg_lat))


def get_data(bs, sz):
    img_patch = torch.randn(bs, 3, sz, sz)
    return img_patch


if __name__ == "__main__":
    args = parse_args()
    device = "cuda:%d" % args.gpu
    torch.cuda.set_device(device)
    '''update cfg'''
    prj_dir = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
    yaml_fname = os.path.join(prj_dir, 'experiments/%s/%s.yaml' % (args.script, args.config))
    print("yaml_fname: {}".format(yaml_fname))
    config_module = importlib.import_module('lib.config.%s.config' % args.script)
    cfg = config_module.cfg
    config_module.update_config_from_file(yaml_fname)
    print("cfg: {}".format(cfg))
    '''set some values'''
    bs = 1
    z_sz = cfg.TEST.TEMPLATE_SIZE
    x_sz = cfg.TEST.SEARCH_SIZE
    h_dim = cfg.MODEL.HIDDEN_DIM
    '''import network module'''
    model_module = importlib.import_module('lib.models.mixformer_cvt' if 'cvt' in args.script
                                           else 'lib.models.mixformer_vit')
    if args.script in ("mixformer_cvt", "mixformer_cvt_online"):
        if args.script == "mixformer_cvt":
            model = model_module.build_mixformer_cvt(cfg)
        else:
            model = model_module.build_mixformer_cvt_online_score(cfg, train=False)
        # get the template and search
        template = get_data(bs, z_sz)
        search = get_data(bs, x_sz)
        # transfer to device
        model = model.to(device).eval()
        template = template.to(device)
        search = search.to(device)
        if args.fp16:
            model = model.half()
            template = template.type(torch.cuda.HalfTensor)
            search = search.type(torch.cuda.HalfTensor)
        # evaluate the model properties
        evaluate(model, template, search, args.online_skip, args.display_name)
    elif args.script in ("mixformer_vit", "mixformer_vit_online"):
        model = model_module.build_mixformer_vit(cfg, train=False)
        template = get_data(bs, z_sz).to(device)
        search = get_data(bs, x_sz).to(device)
        model = model.to(device).eval()
        evaluate_vit(model, template, search, args.display_name)
    else:
        raise NotImplementedError

    print("max memory allocated: %.1f MB" % (torch.cuda.max_memory_allocated() / 1024 ** 2))
