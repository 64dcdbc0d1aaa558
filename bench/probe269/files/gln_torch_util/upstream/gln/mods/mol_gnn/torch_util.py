from __future__ import print_function
from __future__ import absolute_import
from __future__ import division

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable
from torch.nn.parameter import Parameter

from gln.common.cmd_args import DEVICE, t_float


def glorot_uniform(t):
    if len(t.size()) == 2:
        fan_in, fan_out = t.size()
    elif len(t.size()) == 3:
        # out_ch, in_ch, kernel for Conv 1
        fan_in = t.size()[1] * t.size()[2]
        fan_out = t.size()[0] * t.size()[2]
    else:
        fan_in = np.prod(t.size())
        fan_out = np.prod(t.size())

    limit = np.sqrt(6.0 / (fan_in + fan_out))
    t.uniform_(-limit, limit)


def _param_init(m):
    if isinstance(m, Parameter):
        glorot_uniform(m.data)
    elif isinstance(m, nn.Linear):
        if m.bias is not None:
            m.bias.data.zero_()
        glorot_uniform(m.weight.data)
    elif isinstance(m, nn.Embedding):
        glorot_uniform(m.weight.data)


def weights_init(m):
    for p in m.modules():
        if isinstance(p, nn.ParameterList):
            for pp in p:
                _param_init(pp)
        else:
            _param_init(p)

    for name, p in m.named_parameters():
        if not '.' in name:  # top-level parameters
            _param_init(p)


class MySpMM(torch.autograd.Function):
    """sparse (adjacency / pooling matrix) x dense (node features).

    The message-passing layers build the graph-to-node and edge-to-node
    aggregation operators as torch.sparse COO matrices once per batch and
    multiply them with the dense node/edge embeddings here.
    """

    @staticmethod
    def forward(ctx, sp_mat, dense_mat):
        ctx.save_for_backward(sp_mat, dense_mat)

        return torch.mm(sp_mat, dense_mat)

    @staticmethod
    def backward(ctx, grad_output):
        sp_mat, dense_mat = ctx.saved_tensors
        grad_matrix1 = grad_matrix2 = None

        assert not ctx.needs_input_grad[0]
        if ctx.needs_input_grad[1]:
            grad_matrix2 = Variable(torch.mm(sp_mat.data.t(), grad_output.data))

        return grad_matrix1, grad_matrix2


def gnn_spmm(sp_mat, dense_mat):
    return MySpMM.apply(sp_mat, dense_mat)


def get_agg(agg_type):
    if agg_type == 'sum':
        return torch.sum
    elif agg_type == 'mean':
        return torch.mean
    elif agg_type == 'max':
        return lambda x, dim: torch.max(x, dim=dim)[0]
    else:
        raise NotImplementedError


class NONLINEARITIES(object):
    relu = nn.ReLU
    tanh = nn.Tanh
    sigmoid = nn.Sigmoid
    elu = nn.ELU


def get_act(act_name):
    return getattr(NONLINEARITIES, act_name)()


class MLP(nn.Module):
    def __init__(self, input_dim, hidden_dims, nonlinearity='elu', act_last=None, bn=False, dropout=-1):
        super(MLP, self).__init__()
        self.act_last = act_last
        self.nonlinearity = nonlinearity
        self.input_dim = input_dim
        self.bn = bn

        if isinstance(hidden_dims, str):
            hidden_dims = list(map(int, hidden_dims.split("-")))
        assert len(hidden_dims)
        hidden_dims = [input_dim] + hidden_dims
        self.output_size = hidden_dims[-1]

        list_layers = []

        for i in range(1, len(hidden_dims)):
            list_layers.append(nn.Linear(hidden_dims[i - 1], hidden_dims[i]))
            if i + 1 < len(hidden_dims):  # not the last layer
                if self.bn:
                    bnorm_layer = nn.BatchNorm1d(hidden_dims[i])
                    list_layers.append(bnorm_layer)
                list_layers.append(get_act(self.nonlinearity))
                if dropout > 0:
                    list_layers.append(nn.Dropout(dropout))
            else:
                if act_last is not None:
                    list_layers.append(get_act(act_last))

        self.main = nn.Sequential(*list_layers)

    def forward(self, z):
        x = self.main(z)
        return x


def prepare_sparse_pool(graph_list, is_cuda=False):
    """Build the (num_graphs x num_nodes) sum-pooling matrix as a sparse tensor."""
    num_nodes = [g.num_nodes for g in graph_list]
    total_num_nodes = sum(num_nodes)
    rows, cols = [], []
    offset = 0
    for i, n in enumerate(num_nodes):
        rows += [i] * n
        cols += list(range(offset, offset + n))
        offset += n
    idxes = torch.LongTensor([rows, cols])
    vals = torch.ones(total_num_nodes, dtype=t_float)
    pool = torch.sparse.FloatTensor(idxes, vals, torch.Size([len(graph_list), total_num_nodes]))
    if is_cuda:
        pool = pool.cuda()
    return pool


def prepare_edge_agg(graph_list, is_cuda=False):
    """Sparse (num_nodes x num_edges) operator that sums incoming edge messages."""
    num_nodes = sum(g.num_nodes for g in graph_list)
    num_edges = sum(g.num_edges for g in graph_list)
    rows, cols = [], []
    node_offset = edge_offset = 0
    for g in graph_list:
        for e_idx, (src, dst) in enumerate(g.edge_pairs):
            rows.append(dst + node_offset)
            cols.append(e_idx + edge_offset)
        node_offset += g.num_nodes
        edge_offset += g.num_edges
    idxes = torch.LongTensor([rows, cols])
    vals = torch.ones(len(rows), dtype=t_float)
    agg = torch.sparse.FloatTensor(idxes, vals, torch.Size([num_nodes, num_edges]))
    return agg.to(DEVICE) if is_cuda else agg


def logsumexp(x, dim=-1, keepdim=False):
    m, _ = torch.max(x, dim=dim, keepdim=True)
    out = m + torch.log(torch.sum(torch.exp(x - m), dim=dim, keepdim=True))
    return out if keepdim else out.squeeze(dim)
