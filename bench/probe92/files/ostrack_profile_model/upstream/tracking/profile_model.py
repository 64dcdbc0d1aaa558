import os
import sys

prj_path = os.path.join(os.path.dirname(__file__), '..')
if prj_path not in sys.path:
    sys.path.append(prj_path)

import argparse
import importlib
import time

import torch
from thop import profile
from thop.utils import clever_format

from lib.utils.merge import merge_template_search


def parse_args():
    """
    args for training.
    """
    parser = argparse.ArgumentParser(description='Parse args for training')
    # for train
    parser.add_argument('--script', type=str, default='ostrack', choices=['ostrack'],
                        help='training script name')
    parser.add_argument('--config', type=str, default='vitb_256_mae_ce_32x4_ep300', help='yaml configure file name')
    parser.add_argument('--gpu', type=int, default=0, help='which card to profile on')
    parser.add_argument('--T_w', type=int, default=100, help='warm-up iterations')
    parser.add_argument('--T_t', type=int, default=1000, help='timed iterations')
    parser.add_argument('--half', action='store_true', help='profile the fp16 model')
    args = parser.parse_args()

    return args


def evaluate_vit(model, template, search, T_w, T_t):
    '''Speed Test'''
    macs1, params1 = profile(model, inputs=(template, search),
                             custom_ops=None, verbose=False)
    macs, params = clever_format([macs1, params1], "%.3f")
    print('overall macs is ', macs)
    print('overall params is ', params)

    print("testing speed ...")
    torch.cuda.synchronize()  # flush the thop profiling work
    with torch.no_grad():
        # overall
        for i in range(T_w):
            _ = model(template, search)
        start = time.time()
        for i in range(T_t):
            _ = model(template, search)
        torch.cuda.synchronize()  # wait for the timed loop
        end = time.time()
        avg_lat = (end - start) / T_t
        print("The average overall latency is %.2f ms" % (avg_lat * 1000))
        print("FPS is %.2f fps" % (1. / avg_lat))


def evaluate_vit_separate(model, template, search, T_w, T_t):
    '''Speed Test, template branch and search branch timed on their own'''
    with torch.no_grad():
        for i in range(T_w):
            _ = model(template, search)
        torch.cuda.synchronize()  # drain warm-up
        start = time.time()
        for i in range(T_t):
            _ = model.backbone.forward_template(template)
        torch.cuda.synchronize()  # template branch done
        end = time.time()
        print("The average template branch latency is %.2f ms" % ((end - start) / T_t * 1000))

        start_evt = torch.cuda.Event(enable_timing=True)
        end_evt = torch.cuda.Event(enable_timing=True)
        start_evt.record()
        for i in range(T_t):
            _ = model(template, search)
        end_evt.record()
        end_evt.synchronize()
        print("The average search branch latency is %.2f ms" % (start_evt.elapsed_time(end_evt) / T_t))


def get_data(bs, sz):
    img_patch = torch.randn(bs, 3, sz, sz)
    return img_patch


if __name__ == "__main__":
    device = "cuda:0"
    torch.cuda.set_device(device)
    # Compute the Flops and Params of our STARK-S model
    args = parse_args()
    '''update cfg'''
    yaml_fname = 'experiments/%s/%s.yaml' % (args.script, args.config)
    config_module = importlib.import_module('lib.config.%s.config' % args.script)
    cfg = config_module.cfg
    config_module.update_config_from_file(yaml_fname)
    '''set some values'''
    bs = 1
    z_sz = cfg.TEST.TEMPLATE_SIZE
    x_sz = cfg.TEST.SEARCH_SIZE

    if args.script == "ostrack":
        model_module = importlib.import_module('lib.models')
        model_constructor = model_module.build_ostrack
        model = model_constructor(cfg, training=False)
        # get the template and search
        template = get_data(bs, z_sz)
        search = get_data(bs, x_sz)
        # transfer to device
        model = model.to(device)
        template = template.to(device)
        search = search.to(device)
        if args.half:
            model = model.half()
            template = template.half()
            search = search.half()

        merge_layer = cfg.MODEL.HIDDEN_DIM
        if merge_layer <= 0:
            evaluate_vit(model, template, search, args.T_w, args.T_t)
        else:
            evaluate_vit_separate(model, template, search, args.T_w, args.T_t)

        print("device name: %s" % torch.cuda.get_device_name(device))
        print("peak memory: %.1f MB" % (torch.cuda.max_memory_allocated(device) / 2 ** 20))

    else:
        raise NotImplementedError
