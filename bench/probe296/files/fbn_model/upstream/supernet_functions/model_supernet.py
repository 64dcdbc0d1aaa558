from collections import OrderedDict

import torch
from torch import nn
import torch.nn.functional as F

from fbnet_building_blocks.fbnet_builder import ConvBNRelu, Flatten
from supernet_functions.config_for_supernet import CONFIG_SUPERNET


class MixedOperation(nn.Module):

    # Arguments:
    # proposed_operations is a dictionary {operation_name : op_constructor}
    # latency is a dictionary {operation_name : latency}
    def __init__(self, layer_parameters, proposed_operations, latency):
        super(MixedOperation, self).__init__()
        ops_names = [op_name for op_name in proposed_operations]

        self.ops = nn.ModuleList([proposed_operations[op_name](*layer_parameters)
                                  for op_name in ops_names])
        # kept as a buffer so that it follows the module to whatever device the supernet is moved to
        self.register_buffer('latency', torch.tensor([latency[op_name] for op_name in ops_names]))
        self.thetas = nn.Parameter(torch.Tensor([1.0 / len(ops_names) for i in range(len(ops_names))]))

    def forward(self, x, temperature, latency_to_accumulate):
        soft_mask_variables = nn.functional.gumbel_softmax(self.thetas, temperature)
        output = sum(m * op(x) for m, op in zip(soft_mask_variables, self.ops))
        latency = torch.sum(soft_mask_variables * self.latency)
        latency_to_accumulate = latency_to_accumulate + latency
        return output, latency_to_accumulate

    def argmax_op(self):
        return int(torch.argmax(self.thetas.detach()).item())


class FBNet_Stochastic_SuperNet(nn.Module):
    def __init__(self, lookup_table, cnt_classes=1000):
        super(FBNet_Stochastic_SuperNet, self).__init__()

        # self.first identical to 'add_first' in the fbnet_building_blocks/fbnet_builder.py
        self.first = ConvBNRelu(input_depth=3, output_depth=16, kernel=3, stride=2,
                                pad=3 // 2, no_bias=1, use_relu="relu", bn_type="bn")
        self.stages_to_search = nn.ModuleList([MixedOperation(
                                                   lookup_table.layers_parameters[layer_id],
                                                   lookup_table.lookup_table_operations,
                                                   lookup_table.lookup_table_latency[layer_id])
                                               for layer_id in range(lookup_table.cnt_layers)])
        self.last_stages = nn.Sequential(OrderedDict([
            ("conv_k1", nn.Conv2d(lookup_table.layers_parameters[-1][1], 1504, kernel_size=1)),
            ("avg_pool_k7", nn.AvgPool2d(kernel_size=7)),
            ("flatten", Flatten()),
            ("fc", nn.Linear(in_features=1504, out_features=cnt_classes)),
        ]))

    def forward(self, x, temperature, latency_to_accumulate):
        y = self.first(x)
        for mixed_op in self.stages_to_search:
            y, latency_to_accumulate = mixed_op(y, temperature, latency_to_accumulate)
        y = self.last_stages(y)
        return y, latency_to_accumulate

    def thetas_as_table(self):
        """ [n_layers, n_ops] softmax over thetas, on the host (for logging / tensorboard) """
        return torch.stack([F.softmax(m.thetas.detach(), dim=0) for m in self.stages_to_search]).cpu()

    def expected_latency(self):
        """ latency of the arg-max architecture according to the lookup table (micro-seconds) """
        total = 0.0
        for m in self.stages_to_search:
            total += float(m.latency[m.argmax_op()])
        return total


class SupernetLoss(nn.Module):
    def __init__(self):
        super(SupernetLoss, self).__init__()
        self.alpha = CONFIG_SUPERNET['loss']['alpha']
        self.beta = CONFIG_SUPERNET['loss']['beta']
        self.weight_criterion = nn.CrossEntropyLoss()

    def forward(self, outs, targets, latency, losses_ce, losses_lat, N):

        ce = self.weight_criterion(outs, targets)
        lat = torch.log(latency ** self.beta)

        losses_ce.update(ce.item(), N)
        losses_lat.update(lat.item(), N)

        loss = self.alpha * ce * lat
        return loss  # .unsqueeze(0)


def count_supernet_params(model):
    """ parameters of the over-parameterised net vs. the arg-max subnet (in millions) """
    if isinstance(model, nn.DataParallel):
        model = model.module
    total = sum(p.numel() for p in model.parameters())
    chosen = sum(p.numel() for p in model.first.parameters()) + sum(p.numel() for p in model.last_stages.parameters())
    for m in model.stages_to_search:
        chosen += sum(p.numel() for p in m.ops[m.argmax_op()].parameters())
    return total / 1e6, chosen / 1e6
