# Once for All: Train One Network and Specialize it for Efficient Deployment
# Han Cai, Chuang Gan, Tianzhe Wang, Zhekai Zhang, Song Han
# International Conference on Learning Representations (ICLR), 2020.

import os
import time
import yaml
import torch
import torch.nn as nn

from ofa.utils import download_url, make_divisible, MyNetwork
from ofa.utils.layers import ConvLayer, LinearLayer, MBConvLayer, IdentityLayer, ResidualBlock

__all__ = ['LatencyTable', 'MBv3LatencyTable', 'GPULatencyTable', 'build_gpu_latency_lut']


class LatencyTable(object):

    def __init__(self, local_dir='~/.ofa/latency_tools/',
                 url='https://hanlab.mit.edu/files/proxylessNAS/LatencyTools/mobile_trim.yaml'):
        if url.startswith('http'):
            fname = download_url(url, local_dir, overwrite=True)
        else:
            fname = url
        with open(fname, 'r') as fp:
            self.lut = yaml.safe_load(fp)

    @staticmethod
    def repr_shape(shape):
        if isinstance(shape, (list, tuple)):
            return 'x'.join(str(_) for _ in shape)
        elif isinstance(shape, str):
            return shape
        else:
            return TypeError

    def query(self, **kwargs):
        raise NotImplementedError

    def predict_network_latency(self, net, image_size):
        return None

    def predict_network_latency_given_config(self, net_config, image_size):
        return None

    @staticmethod
    def count_flops_given_config(net_config, image_size=224):
        return None


class MBv3LatencyTable(LatencyTable):
    """ Per-op latency of MobileNetV3 blocks on a given device, keyed by
        op type / input shape / output shape / expand / kernel / stride / idskip. """

    def query(self, l_type: str, input_shape, output_shape, mid=None, ks=None, stride=None, id_skip=None,
              se=None, h_swish=None):
        infos = [l_type, 'input:%s' % self.repr_shape(input_shape), 'output:%s' % self.repr_shape(output_shape), ]

        if l_type in ('expanded_conv',):
            assert None not in (mid, ks, stride, id_skip, se, h_swish)
            infos += ['expand:%d' % mid, 'kernel:%d' % ks, 'stride:%d' % stride, 'idskip:%d' % id_skip,
                      'se:%d' % se, 'hs:%d' % h_swish]
        key = '-'.join(infos)
        return self.lut[key]['mean']

    def predict_network_latency(self, net, image_size=224):
        predicted_latency = 0
        # first conv
        predicted_latency += self.query(
            'Conv', [image_size, image_size, 3],
            [(image_size + 1) // 2, (image_size + 1) // 2, net.first_conv.out_channels]
        )
        # blocks
        fsize = (image_size + 1) // 2
        for block in net.blocks:
            mb_conv = block.conv
            shortcut = block.shortcut

            if mb_conv is None:
                continue
            if shortcut is None:
                idskip = 0
            else:
                idskip = 1
            out_fz = int((fsize - 1) / mb_conv.stride + 1)
            block_latency = self.query(
                'expanded_conv', [fsize, fsize, mb_conv.in_channels], [out_fz, out_fz, mb_conv.out_channels],
                mid=mb_conv.depth_conv.conv.in_channels, ks=mb_conv.kernel_size, stride=mb_conv.stride, id_skip=idskip,
                se=1 if mb_conv.use_se else 0, h_swish=1 if mb_conv.act_func == 'h_swish' else 0,
            )
            predicted_latency += block_latency
            fsize = out_fz
        # final expand layer
        predicted_latency += self.query(
            'Conv_1', [fsize, fsize, net.final_expand_layer.in_channels],
            [fsize, fsize, net.final_expand_layer.out_channels],
        )
        # global average pooling
        predicted_latency += self.query(
            'AvgPool2D', [fsize, fsize, net.final_expand_layer.out_channels],
            [1, 1, net.final_expand_layer.out_channels],
        )
        # feature mix layer
        predicted_latency += self.query(
            'Conv_2', [1, 1, net.feature_mix_layer.in_channels],
            [1, 1, net.feature_mix_layer.out_channels]
        )
        # classifier
        predicted_latency += self.query(
            'Logits', [1, 1, net.classifier.in_features], [net.classifier.out_features]
        )
        return predicted_latency

    def predict_network_latency_given_config(self, net_config, image_size=224):
        predicted_latency = 0
        # first conv
        predicted_latency += self.query(
            'Conv', [image_size, image_size, 3],
            [(image_size + 1) // 2, (image_size + 1) // 2, net_config['first_conv']['out_channels']]
        )
        # blocks
        fsize = (image_size + 1) // 2
        for block in net_config['blocks']:
            mb_conv = block['mobile_inverted_conv'] if 'mobile_inverted_conv' in block else block['conv']
            shortcut = block['shortcut']

            if mb_conv is None:
                continue
            if shortcut is None:
                idskip = 0
            else:
                idskip = 1
            out_fz = int((fsize - 1) / mb_conv['stride'] + 1)
            if mb_conv['mid_channels'] is None:
                mb_conv['mid_channels'] = round(mb_conv['in_channels'] * mb_conv['expand_ratio'])
            block_latency = self.query(
                'expanded_conv', [fsize, fsize, mb_conv['in_channels']], [out_fz, out_fz, mb_conv['out_channels']],
                mid=mb_conv['mid_channels'], ks=mb_conv['kernel_size'], stride=mb_conv['stride'], id_skip=idskip,
                se=1 if mb_conv['use_se'] else 0, h_swish=1 if mb_conv['act_func'] == 'h_swish' else 0,
            )
            predicted_latency += block_latency
            fsize = out_fz
        # final expand layer
        predicted_latency += self.query(
            'Conv_1', [fsize, fsize, net_config['final_expand_layer']['in_channels']],
            [fsize, fsize, net_config['final_expand_layer']['out_channels']],
        )
        # global average pooling
        predicted_latency += self.query(
            'AvgPool2D', [fsize, fsize, net_config['final_expand_layer']['out_channels']],
            [1, 1, net_config['final_expand_layer']['out_channels']],
        )
        # feature mix layer
        predicted_latency += self.query(
            'Conv_2', [1, 1, net_config['feature_mix_layer']['in_channels']],
            [1, 1, net_config['feature_mix_layer']['out_channels']]
        )
        # classifier
        predicted_latency += self.query(
            'Logits', [1, 1, net_config['classifier']['in_features']], [net_config['classifier']['out_features']]
        )
        return predicted_latency


def _time_module_on_gpu(module, input_shape, batch_size, n_warmup=10, n_runs=50):
    """ Median wall time (ms) of one forward of `module` on the current GPU.
        Each run is bracketed by device barriers so that queued kernels are accounted for. """
    module = module.cuda().eval()
    x = torch.randn(batch_size, *input_shape).cuda()
    times = []
    with torch.no_grad():
        for _ in range(n_warmup):
            module(x)
        torch.cuda.synchronize()  # drain warmup kernels before timing
        for _ in range(n_runs):
            t0 = time.perf_counter()
            module(x)
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2]


def build_gpu_latency_lut(ks_list=(3, 5, 7), expand_list=(3, 4, 6), image_size_list=(160, 176, 192, 208, 224),
                          batch_size=64, save_path='~/.ofa/latency_tools/gpu64_lut.yaml'):
    """ Measure an `expanded_conv` table for the OFA-MobileNetV3 search space at batch 64 ('gpu64').
        Shapes follow the same 'input:HxWxC-output:HxWxC-...' keys as the mobile tables. """
    stage_channels = [24, 40, 80, 112, 160]
    stage_strides = [2, 2, 2, 1, 2]
    stage_se = [0, 1, 0, 1, 1]
    stage_hs = [0, 0, 1, 1, 1]
    lut = {}
    for image_size in image_size_list:
        fsize = (image_size + 1) // 2
        in_c = 16
        for out_c, stride, se, hs in zip(stage_channels, stage_strides, stage_se, stage_hs):
            for first in (True, False):
                s = stride if first else 1
                c_in = in_c if first else out_c
                out_fz = int((fsize - 1) / s + 1)
                for e in expand_list:
                    for ks in ks_list:
                        layer = MBConvLayer(c_in, out_c, kernel_size=ks, stride=s, expand_ratio=e,
                                            mid_channels=make_divisible(round(c_in * e), MyNetwork.CHANNEL_DIVISIBLE),
                                            act_func='h_swish' if hs else 'relu', use_se=bool(se))
                        idskip = 1 if (s == 1 and c_in == out_c) else 0
                        if idskip:
                            layer = ResidualBlock(layer, IdentityLayer(c_in, c_in))
                        key = '-'.join([
                            'expanded_conv', 'input:%dx%dx%d' % (fsize, fsize, c_in),
                            'output:%dx%dx%d' % (out_fz, out_fz, out_c),
                            'expand:%d' % make_divisible(round(c_in * e), MyNetwork.CHANNEL_DIVISIBLE),
                            'kernel:%d' % ks, 'stride:%d' % s, 'idskip:%d' % idskip, 'se:%d' % se, 'hs:%d' % hs,
                        ])
                        if key in lut:
                            continue
                        lut[key] = {'mean': _time_module_on_gpu(layer, (c_in, fsize, fsize), batch_size),
                                    'count': 1}
                fsize = out_fz
            in_c = out_c
        # stem / head ops
        lut['Conv-input:%dx%dx3-output:%dx%dx16' % (image_size, image_size, (image_size + 1) // 2,
                                                    (image_size + 1) // 2)] = {
            'mean': _time_module_on_gpu(ConvLayer(3, 16, kernel_size=3, stride=2, act_func='h_swish'),
                                        (3, image_size, image_size), batch_size), 'count': 1}
    lut['Logits-input:1x1x1280-output:1000'] = {
        'mean': _time_module_on_gpu(LinearLayer(1280, 1000), (1280,), batch_size), 'count': 1}

    save_path = os.path.expanduser(save_path)
    os.makedirs(os.path.dirname(save_path), exist_ok=True)
    with open(save_path, 'w') as fout:
        yaml.safe_dump(lut, fout)
    print('GPU latency table (%d entries, device=%s) saved to %s'
          % (len(lut), torch.cuda.get_device_name(0), save_path))
    return save_path


class GPULatencyTable(MBv3LatencyTable):
    """ Same interface as the mobile table, but backed by a locally measured 'gpu64' yaml.
        Missing keys are measured on demand on the current GPU. """

    def __init__(self, local_dir='~/.ofa/latency_tools/', url=None, batch_size=64):
        self.batch_size = batch_size
        fname = os.path.expanduser(os.path.join(local_dir, 'gpu%d_lut.yaml' % batch_size)) if url is None else url
        if not os.path.exists(fname):
            fname = build_gpu_latency_lut(batch_size=batch_size, save_path=fname)
        super(GPULatencyTable, self).__init__(local_dir=local_dir, url=fname)

    def predict_network_latency_given_config(self, net_config, image_size=224):
        try:
            return super(GPULatencyTable, self).predict_network_latency_given_config(net_config, image_size)
        except KeyError:
            # fall back to measuring the whole subnet once
            from ofa.imagenet_classification.networks import MobileNetV3
            net = MobileNetV3.build_from_config(net_config)
            return _time_module_on_gpu(net, (3, image_size, image_size), self.batch_size)


class LatencyEstimator(object):
    """ Thin wrapper used by the evolution finder: hardware name -> table. """

    def __init__(self, hardware='note10', local_dir='~/.ofa/latency_tools/'):
        self.hardware = hardware
        if hardware == 'gpu64':
            self.table = GPULatencyTable(local_dir=local_dir, batch_size=64)
        else:
            url = 'https://hanlab.mit.edu/files/OnceForAll/tutorial/latency_table@%s/' % hardware
            self.table = MBv3LatencyTable(local_dir=local_dir, url=url + '224_lookup_table.yaml')

    def predict_efficiency(self, spec):
        return self.table.predict_network_latency_given_config(spec['net_config'], spec.get('r', [224])[0])

    def __repr__(self):
        return 'LatencyEstimator(hardware=%s)' % self.hardware


def _freeze(module: nn.Module):
    for p in module.parameters():
        p.requires_grad = False
    return module
