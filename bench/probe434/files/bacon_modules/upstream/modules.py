import torch
from torch import nn
import numpy as np
import math


def mfn_weights_init(m):
    if hasattr(m, 'weight'):
        num_input = m.weight.size(-1)
        m.weight.uniform_(-np.sqrt(6 / num_input), np.sqrt(6 / num_input))


class FourierLayer(nn.Module):
    def __init__(self, in_features, out_features, weight_scale, quantization_interval=2*np.pi,
                 ndims=2, bias=True):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=bias)

        r = 2*weight_scale[0] / quantization_interval
        assert math.isclose(r, round(r)), \
            'weight_scale should be divisible by quantization interval'

        # sample discrete uniform distribution of frequencies
        for i in range(self.linear.weight.data.shape[1]):
            init = torch.randint_like(self.linear.weight.data[:, i],
                                      0, int(2*weight_scale[i] / quantization_interval)+1)
            init = init * quantization_interval - weight_scale[i]
            self.linear.weight.data[:, i] = init

        self.linear.weight.requires_grad = False
        self.linear.bias.data.uniform_(-np.pi, np.pi)
        return

    def forward(self, x):
        return torch.sin(self.linear(x))


class BACON(nn.Module):
    def __init__(self,
                 in_size,
                 hidden_size,
                 out_size,
                 hidden_layers=3,
                 weight_scale=1.0,
                 bias=True,
                 output_act=False,
                 frequency=(128, 128),
                 quantization_interval=2*np.pi,  # assumes data range [-.5,.5]
                 reuse_filters=False):
        super().__init__()

        self.quantization_interval = quantization_interval
        self.hidden_layers = hidden_layers
        self.frequency = frequency
        self.output_act = output_act

        input_scale = [round((np.pi * freq / (hidden_layers + 1))
                       / quantization_interval) * quantization_interval for freq in frequency]

        self.filters = nn.ModuleList([
                FourierLayer(in_size, hidden_size, input_scale,
                             quantization_interval=quantization_interval)
                for i in range(hidden_layers + 1)])

        self.linear = nn.ModuleList(
            [nn.Linear(hidden_size, hidden_size, bias) for _ in range(hidden_layers)]
        )
        self.output_linear = nn.Linear(hidden_size, out_size)

        self.linear.apply(mfn_weights_init)
        self.output_linear.apply(mfn_weights_init)

        if reuse_filters:
            for i in range(1, hidden_layers + 1):
                self.filters[i] = self.filters[0]

    def forward(self, model_input):
        input_dict = {key: input.clone().detach().requires_grad_(True)
                      for key, input in model_input.items()}
        coords = input_dict['coords']

        out = self.filters[0](coords)
        for i in range(1, len(self.filters)):
            out = self.filters[i](coords) * self.linear[i - 1](out)
        out = self.output_linear(out)

        if self.output_act:
            out = torch.sin(out)

        return {'model_in': input_dict, 'model_out': {'output': out}}


class MultiscaleBACON(BACON):
    def __init__(self,
                 in_size,
                 hidden_size,
                 out_size,
                 hidden_layers=3,
                 weight_scale=1.0,
                 bias=True,
                 output_act=False,
                 frequency=(128, 128),
                 quantization_interval=2*np.pi,
                 centered=True,
                 is_sdf=False,
                 input_scales=None,
                 output_layers=None,
                 reuse_filters=False):

        super().__init__(in_size, hidden_size, out_size,
                         hidden_layers=hidden_layers,
                         weight_scale=weight_scale,
                         bias=bias,
                         output_act=output_act,
                         frequency=frequency,
                         quantization_interval=quantization_interval,
                         reuse_filters=reuse_filters)

        self.in_size = in_size
        if input_scales is None:
            input_scales = [round((np.pi * freq / (hidden_layers + 1))
                            / quantization_interval) * quantization_interval for freq in frequency]
            input_scales = [[s for s in input_scales] for _ in range(hidden_layers + 1)]
        else:
            input_scales = [[round((np.pi * freq * s) / quantization_interval) * quantization_interval
                             for freq in frequency] for s in input_scales]

        self.filters = nn.ModuleList([
            FourierLayer(in_size, hidden_size, input_scales[i],
                         quantization_interval=quantization_interval)
            for i in range(hidden_layers + 1)])

        if reuse_filters:
            for i in range(1, hidden_layers + 1):
                self.filters[i] = self.filters[0]

        print(self)

        # we need to multiply the output by the shift and scale of each output
        self.output_layers = output_layers
        self.is_sdf = is_sdf

        self.output_linear = nn.ModuleList(
            [nn.Linear(hidden_size, out_size) for _ in range(len(self.output_layers))]
        )
        self.output_linear.apply(mfn_weights_init)

        # shift the initial phase
        if centered:
            for filt in self.filters:
                filt.linear.bias.data = filt.linear.bias.data \
                    + filt.linear.weight.data.sum(-1) * 0.5

    def layer_forward(self, coords, filter_outputs, specified_layers,
                      get_feature, continue_layer, continue_feature):
        """ for multiscale SDF extraction """

        # hardcode the 8 layer network that we use for all sdf experiments
        filter_ins = [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6), (7, 7)]
        outputs = []

        if continue_feature is None:
            assert(continue_layer == 0)
            out = self.filters[filter_ins[0][0]](coords)
            filter_output_dict = {filter_ins[0]: out}
        else:
            out = continue_feature
            filter_output_dict = {}

        for i in range(continue_layer+1, len(self.filters)):
            if filter_ins[i] not in filter_output_dict.keys():
                filter_output_dict[filter_ins[i]] = self.filters[filter_ins[i][0]](coords)
            out = filter_output_dict[filter_ins[i]] * self.linear[i - 1](out)

            if i in self.output_layers and i == specified_layers:
                if get_feature:
                    outputs.append([self.output_linear[0](out), out])
                else:
                    outputs.append(self.output_linear[0](out))
                return outputs

        return outputs

    def forward(self, model_input, mode=None, specified_layers=None, get_feature=False,
                continue_layer=0, continue_feature=None):

        if mode == 'test':
            coords = model_input['coords']
            return self.layer_forward(coords, None, specified_layers, get_feature,
                                      continue_layer, continue_feature)

        input_dict = {key: input.clone().detach().requires_grad_(True)
                      for key, input in model_input.items()}
        coords = input_dict['coords']

        outputs = []
        out = self.filters[0](coords)
        for i in range(1, len(self.filters)):
            out = self.filters[i](coords) * self.linear[i - 1](out)

            if i in self.output_layers:
                outputs.append(self.output_linear[len(outputs)](out))
                if self.is_sdf:
                    outputs[-1] = outputs[-1] * (1 / 2**(len(self.output_layers) - len(outputs)))

        # return a list of the outputs at each scale if we are performing multiscale
        return {'model_in': input_dict, 'model_out': {'output': outputs}}


class MultiscaleCoordinateNet(nn.Module):
    '''A canonical coordinate network with multiscale outputs for the radiance field experiments.'''

    def __init__(self, out_features=4, hidden_features=128, num_hidden_layers=4,
                 in_features=6, frequency=(128, 128, 128, 4, 4, 4), output_layers=(1, 2, 4),
                 quantization_interval=2*np.pi, **kwargs):
        super().__init__()

        self.net = MultiscaleBACON(in_features, hidden_features, out_features,
                                   hidden_layers=num_hidden_layers,
                                   frequency=frequency,
                                   quantization_interval=quantization_interval,
                                   output_layers=list(output_layers),
                                   centered=True)

    def forward(self, model_input):
        out = self.net(model_input)
        outputs = out['model_out']['output']
        # split into rgb and sigma at every scale
        rgb = [torch.sigmoid(o[..., :3]) for o in outputs]
        sigma = [torch.relu(o[..., 3:4]) for o in outputs]
        return {'model_in': out['model_in'],
                'model_out': {'output': outputs, 'rgb': rgb, 'sigma': sigma}}
