#!/usr/bin/env python3
import math

import torch
import torch.nn.functional as F

import GNNAdvisor as GNNA


def gen_test_tensor(X_prime):
    """Debug helper: dump the first/last rows of a tensor."""
    num_rows = X_prime.size(0)
    print("{}: {}".format(0, X_prime[0][:10].tolist()))
    print("{}: {}".format(num_rows - 1, X_prime[num_rows - 1][:10].tolist()))


class ScatterAndGather(torch.autograd.Function):
    """
    Basic Scatter and Gather kernel for GNN.
    Graph is undirected.
    """

    @staticmethod
    def forward(ctx, X, inputInfo):
        ctx.inputInfo = inputInfo
        ctx.partSize, ctx.dimWorker, ctx.warpPerBlock = (
            inputInfo.partSize,
            inputInfo.dimWorker,
            inputInfo.warpPerBlock,
        )
        X_prime = GNNA.SAG(
            X,
            inputInfo.row_pointers,
            inputInfo.column_index,
            inputInfo.degrees,
            inputInfo.partPtr,
            inputInfo.part2Node,
            inputInfo.partSize,
            inputInfo.dimWorker,
            inputInfo.warpPerBlock,
        )
        return X_prime

    @staticmethod
    def backward(ctx, d_output):
        partSize, dimWorker, warpPerBlock = (
            ctx.partSize,
            ctx.dimWorker,
            ctx.warpPerBlock,
        )
        inputInfo = ctx.inputInfo
        d_input = GNNA.SAG(
            d_output,
            inputInfo.row_pointers,
            inputInfo.column_index,
            inputInfo.degrees,
            inputInfo.partPtr,
            inputInfo.part2Node,
            partSize,
            dimWorker,
            warpPerBlock,
        )
        return d_input, None


class GNNAFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, weight, inputInfo):
        # X = torch.sparse.mm(edge_coo, X)
        ctx.save_for_backward(X, weight)
        ctx.inputInfo = inputInfo
        ctx.partSize, ctx.dimWorker, ctx.warpPerBlock = (
            inputInfo.partSize,
            inputInfo.dimWorker,
            inputInfo.warpPerBlock,
        )

        X_prime, X = GNNA.forward(
            X,
            weight,
            inputInfo.row_pointers,
            inputInfo.column_index,
            inputInfo.degrees,
            inputInfo.partPtr,
            inputInfo.part2Node,
            inputInfo.partSize,
            inputInfo.dimWorker,
            inputInfo.warpPerBlock,
        )
        return X_prime

    @staticmethod
    def backward(ctx, d_output):
        X, weight = ctx.saved_tensors
        inputInfo = ctx.inputInfo

        d_input, d_weight = GNNA.backward(
            d_output,
            X,
            weight,
            inputInfo.row_pointers,
            inputInfo.column_index,
            inputInfo.degrees,
            inputInfo.partPtr,
            inputInfo.part2Node,
            ctx.partSize,
            ctx.dimWorker,
            ctx.warpPerBlock,
        )
        return d_input, d_weight, None


class GNNAFunction_GIN(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, weight, inputInfo, eplison):
        X_prime, X_agg = GNNA.forward_gin(
            X,
            weight,
            inputInfo.row_pointers,
            inputInfo.column_index,
            eplison,
            inputInfo.partPtr,
            inputInfo.part2Node,
            inputInfo.partSize,
            inputInfo.dimWorker,
            inputInfo.warpPerBlock,
        )

        ctx.save_for_backward(X_agg, weight)
        ctx.inputInfo = inputInfo
        ctx.partSize, ctx.dimWorker, ctx.warpPerBlock, ctx.eplison = (
            inputInfo.partSize,
            inputInfo.dimWorker,
            inputInfo.warpPerBlock,
            eplison,
        )
        return X_prime

    @staticmethod
    def backward(ctx, d_output):
        X, weights = ctx.saved_tensors
        inputInfo = ctx.inputInfo

        d_input, d_weights = GNNA.backward_gin(
            d_output,
            X,
            weights,
            inputInfo.row_pointers,
            inputInfo.column_index,
            ctx.eplison,
            ctx.partSize,
            ctx.dimWorker,
            ctx.warpPerBlock,
            inputInfo.partPtr,
            inputInfo.part2Node,
        )

        return d_input, d_weights, None, None


class GCNConv(torch.nn.Module):
    def __init__(self, input_dim, output_dim):
        super(GCNConv, self).__init__()
        self.weights = torch.nn.Parameter(torch.randn(input_dim, output_dim))
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.weights.size(1))
        self.weights.data.uniform_(-stdv, stdv)

    def forward(self, X, inputInfo):
        """
        @param:
        X:  the input tensor of the graph node embedding, shape: [n_nodes, n_dim].
        A:  the CSR node pointer of the graph, shape: [node, 1].
        edges: the CSR edge list of the graph, shape: [edge, 1].
        partitioin: for the graph with the part-based optimziation.
        """
        return GNNAFunction.apply(X, self.weights, inputInfo)


class GINConv(torch.nn.Module):
    def __init__(self, input_dim, output_dim):
        super(GINConv, self).__init__()
        self.weights = torch.nn.Parameter(torch.randn(input_dim, output_dim))
        self.eplison = 0.5
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.weights.size(1))
        self.weights.data.uniform_(-stdv, stdv)

    def forward(self, X, inputInfo):
        """
        @param:
        X:  the input tensor of the graph node embedding, shape: [n_nodes, n_dim].
        A:  the CSR node pointer of the graph, shape: [node, 1].
        edges: the CSR edge list of the graph, shape: [edge, 1].
        partitioin: for the graph with the part-based optimziation.
        """
        return GNNAFunction_GIN.apply(X, self.weights, inputInfo, self.eplison)


class GCN(torch.nn.Module):
    def __init__(self, in_dim, hidden_dim, out_dim, num_layers=2, dropout=0.5):
        super(GCN, self).__init__()
        self.convs = torch.nn.ModuleList()
        self.convs.append(GCNConv(in_dim, hidden_dim))
        for _ in range(num_layers - 2):
            self.convs.append(GCNConv(hidden_dim, hidden_dim))
        self.convs.append(GCNConv(hidden_dim, out_dim))
        self.dropout = dropout

    def forward(self, X, inputInfo):
        for conv in self.convs[:-1]:
            X = F.relu(conv(X, inputInfo))
            X = F.dropout(X, p=self.dropout, training=self.training)
        X = self.convs[-1](X, inputInfo)
        return F.log_softmax(X, dim=1)


class GIN(torch.nn.Module):
    def __init__(self, in_dim, hidden_dim, out_dim, num_layers=5):
        super(GIN, self).__init__()
        self.convs = torch.nn.ModuleList()
        self.convs.append(GINConv(in_dim, hidden_dim))
        for _ in range(num_layers - 2):
            self.convs.append(GINConv(hidden_dim, hidden_dim))
        self.convs.append(GINConv(hidden_dim, out_dim))

    def forward(self, X, inputInfo):
        for conv in self.convs[:-1]:
            X = F.relu(conv(X, inputInfo))
        X = self.convs[-1](X, inputInfo)
        return F.log_softmax(X, dim=1)
