# ported from https://github.com/KaihuaTang/VCTree-Scene-Graph-Generation (lib/tree_lstm)
# Tree-LSTMs are run one image (one forest) at a time, node by node, so most of the
# work here is tiny kernels; keep everything on the GPU to avoid host round-trips.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable
import numpy as np

from .utils_motifs import block_orthogonal


class TreeLSTM_IO(object):
    def __init__(self, hidden_tensor, order_tensor, order_count, dists_tensor, commitments_tensor, dropout_mask):
        self.hidden = hidden_tensor # Float tensor [num_obj, self.out_dim]
        self.order = order_tensor # Long tensor [num_obj]
        self.order_count = order_count # int
        self.dists = dists_tensor # FLoat tensor [num_obj, len(self.classes)]
        self.commitments = commitments_tensor
        self.dropout_mask = dropout_mask


def get_dropout_mask(dropout_probability, h_dim):
    """
    Computes and returns an element-wise dropout mask for a given tensor, where
    each element in the mask is dropped out with probability dropout_probability.
    The mask is fixed for one forest (same for every node).
    """
    binary_mask = Variable(torch.FloatTensor(h_dim).cuda().fill_(0.0))
    binary_mask.data.copy_(torch.rand(h_dim) > dropout_probability)
    # Scale mask by 1/keep_prob to preserve output statistics.
    dropout_mask = binary_mask.float().div(1.0 - dropout_probability)
    return dropout_mask


class MultiLayer_BTreeLSTM(nn.Module):
    """
    Multilayer Bidirectional Tree LSTM
    Each layer contains one forward lstm(leaves to root) and one backward lstm(root to leaves)
    """
    def __init__(self, in_dim, out_dim, num_layer, dropout=0.0):
        super(MultiLayer_BTreeLSTM, self).__init__()
        self.num_layer = num_layer
        layers = []
        layers.append(BidirectionalTreeLSTM(in_dim, out_dim, dropout))
        for i in range(num_layer - 1):
            layers.append(BidirectionalTreeLSTM(out_dim, out_dim, dropout))
        self.multi_layer_lstm = nn.ModuleList(layers)

    def forward(self, tree, features, num_obj):
        for i in range(self.num_layer):
            features = self.multi_layer_lstm[i](tree, features, num_obj)
        return features


class BidirectionalTreeLSTM(nn.Module):
    """
    Bidirectional Tree LSTM
    Contains one forward lstm(leaves to root) and one backward lstm(root to leaves)
    Dropout mask will be generated one time for all trees in the forest, to make sure the consistancy
    """
    def __init__(self, in_dim, out_dim, dropout=0.0):
        super(BidirectionalTreeLSTM, self).__init__()
        self.dropout = dropout
        self.out_dim = out_dim
        self.treeLSTM_foreward = OneDirectionalTreeLSTM(in_dim, int(out_dim / 2), 'foreward', dropout)
        self.treeLSTM_backward = OneDirectionalTreeLSTM(in_dim, int(out_dim / 2), 'backward', dropout)

    def forward(self, tree, features, num_obj):
        foreward_output = self.treeLSTM_foreward(tree, features, num_obj)
        backward_output = self.treeLSTM_backward(tree, features, num_obj)

        final_output = torch.cat((foreward_output, backward_output), 1)

        return final_output


class OneDirectionalTreeLSTM(nn.Module):
    """
    One Way Tree LSTM
    direction = foreward | backward
    """
    def __init__(self, in_dim, out_dim, direction, dropout=0.0):
        super(OneDirectionalTreeLSTM, self).__init__()
        self.dropout = dropout
        self.out_dim = out_dim
        if direction == 'foreward':
            self.treeLSTM = BiTreeLSTM_Foreward(in_dim, out_dim)
        elif direction == 'backward':
            self.treeLSTM = BiTreeLSTM_Backward(in_dim, out_dim)
        else:
            print('Error Tree LSTM Direction')

    def forward(self, tree, features, num_obj):
        # calc dropout mask, same for all
        if self.dropout > 0.0:
            dropout_mask = get_dropout_mask(self.dropout, self.out_dim)
        else:
            dropout_mask = None

        # initialize result
        h_order = Variable(torch.LongTensor([0] * num_obj).cuda())
        lstm_io = TreeLSTM_IO(None, h_order, 0, None, None, dropout_mask)
        # run treelstm
        self.treeLSTM(tree, features, lstm_io)
        # resort the output
        output = torch.index_select(lstm_io.hidden, 0, lstm_io.order.long())
        return output


class BiTreeLSTM_Foreward(nn.Module):
    """
    From leaves to root
    """
    def __init__(self, feat_dim, h_dim, is_pass_embed=False, embed_layer=None, embed_out_layer=None):
        super(BiTreeLSTM_Foreward, self).__init__()
        self.feat_dim = feat_dim
        self.h_dim = h_dim
        self.is_pass_embed = is_pass_embed
        self.embed_layer = embed_layer
        self.embed_out_layer = embed_out_layer

        self.px = nn.Linear(self.feat_dim, self.h_dim)
        self.ioffux = nn.Linear(self.feat_dim, 6 * self.h_dim)
        self.ioffuh_left = nn.Linear(self.h_dim, 6 * self.h_dim)
        self.ioffuh_right = nn.Linear(self.h_dim, 6 * self.h_dim)

        # init parameter
        block_orthogonal(self.px.weight.data, [self.h_dim, self.feat_dim])
        block_orthogonal(self.ioffux.weight.data, [self.h_dim, self.feat_dim])
        block_orthogonal(self.ioffuh_left.weight.data, [self.h_dim, self.h_dim])
        block_orthogonal(self.ioffuh_right.weight.data, [self.h_dim, self.h_dim])

        self.px.bias.data.fill_(0.0)
        self.ioffux.bias.data.fill_(0.0)
        self.ioffuh_left.bias.data.fill_(0.0)
        self.ioffuh_right.bias.data.fill_(0.0)
        # Initialize forget gate biases to 1.0 as per An Empirical
        # Exploration of Recurrent Network Architectures, (Jozefowicz, 2015).
        self.ioffuh_left.bias.data[2 * self.h_dim:4 * self.h_dim].fill_(0.5)
        self.ioffuh_right.bias.data[2 * self.h_dim:4 * self.h_dim].fill_(0.5)

    def node_forward(self, feat_inp, left_c, right_c, left_h, right_h, dropout_mask):
        projected_x = self.px(feat_inp)
        ioffu = self.ioffux(feat_inp) + self.ioffuh_left(left_h) + self.ioffuh_right(right_h)
        i, o, f_l, f_r, u, r = torch.split(ioffu, ioffu.size(1) // 6, dim=1)
        i, o, f_l, f_r, u, r = torch.sigmoid(i), torch.sigmoid(o), torch.sigmoid(f_l), torch.sigmoid(f_r), torch.tanh(u), torch.sigmoid(r)

        c = torch.mul(i, u) + torch.mul(f_l, left_c) + torch.mul(f_r, right_c)
        h = torch.mul(o, torch.tanh(c))
        h_final = torch.mul(r, h) + torch.mul((1 - r), projected_x)
        # Only do dropout if the dropout prob is > 0.0 and we are in training mode.
        if dropout_mask is not None and self.training:
            h_final = torch.mul(h_final, dropout_mask)
        return c, h_final

    def forward(self, tree, features, treelstm_io):
        """
        tree: The root for a tree
        features: [num_obj, featuresize]
        treelstm_io.hidden: init as None, cat until it covers all objects as [num_obj, hidden_size]
        treelstm_io.order: init as 0 for all [num_obj], update for recovering original order
        """
        # recursively search child
        if tree.left_child is not None:
            left_c, left_h = self.forward(tree.left_child, features, treelstm_io)
        else:
            left_c = Variable(torch.FloatTensor([0.0] * self.h_dim).cuda()).view(1, -1)
            left_h = Variable(torch.FloatTensor([0.0] * self.h_dim).cuda()).view(1, -1)

        if tree.right_child is not None:
            right_c, right_h = self.forward(tree.right_child, features, treelstm_io)
        else:
            right_c = features.new_zeros((1, self.h_dim))
            right_h = features.new_zeros((1, self.h_dim))

        # calc
        next_feature = features[tree.index].view(1, -1)

        c, h = self.node_forward(next_feature, left_c, right_c, left_h, right_h, treelstm_io.dropout_mask)

        # record hidden state
        if treelstm_io.hidden is None:
            treelstm_io.hidden = h.view(1, -1)
        else:
            treelstm_io.hidden = torch.cat((treelstm_io.hidden, h.view(1, -1)), 0)

        treelstm_io.order[tree.index] = treelstm_io.order_count
        treelstm_io.order_count += 1
        return c, h


class BiTreeLSTM_Backward(nn.Module):
    """
    from root to leaves
    """
    def __init__(self, feat_dim, h_dim, is_pass_embed=False, embed_layer=None, embed_out_layer=None):
        super(BiTreeLSTM_Backward, self).__init__()
        self.feat_dim = feat_dim
        self.h_dim = h_dim
        self.is_pass_embed = is_pass_embed
        self.embed_layer = embed_layer
        self.embed_out_layer = embed_out_layer

        self.px = nn.Linear(self.feat_dim, self.h_dim)
        self.iofux = nn.Linear(self.feat_dim, 5 * self.h_dim)
        self.iofuh = nn.Linear(self.h_dim, 5 * self.h_dim)

        # init parameter
        block_orthogonal(self.px.weight.data, [self.h_dim, self.feat_dim])
        block_orthogonal(self.iofux.weight.data, [self.h_dim, self.feat_dim])
        block_orthogonal(self.iofuh.weight.data, [self.h_dim, self.h_dim])

        self.px.bias.data.fill_(0.0)
        self.iofux.bias.data.fill_(0.0)
        self.iofuh.bias.data.fill_(0.0)
        # Initialize forget gate biases to 1.0 as per An Empirical
        # Exploration of Recurrent Network Architectures, (Jozefowicz, 2015).
        self.iofuh.bias.data[2 * self.h_dim:3 * self.h_dim].fill_(1.0)

    def node_backward(self, feat_inp, root_c, root_h, dropout_mask):
        projected_x = self.px(feat_inp)
        iofu = self.iofux(feat_inp) + self.iofuh(root_h)
        i, o, f, u, r = torch.split(iofu, iofu.size(1) // 5, dim=1)
        i, o, f, u, r = torch.sigmoid(i), torch.sigmoid(o), torch.sigmoid(f), torch.tanh(u), torch.sigmoid(r)

        c = torch.mul(i, u) + torch.mul(f, root_c)
        h = torch.mul(o, torch.tanh(c))
        h_final = torch.mul(r, h) + torch.mul((1 - r), projected_x)
        # Only do dropout if the dropout prob is > 0.0 and we are in training mode.
        if dropout_mask is not None and self.training:
            h_final = torch.mul(h_final, dropout_mask)
        return c, h_final

    def forward(self, tree, features, treelstm_io):
        """
        tree: The root for a tree
        features: [num_obj, featuresize]
        treelstm_io.hidden: init as None, cat until it covers all objects as [num_obj, hidden_size]
        treelstm_io.order: init as 0 for all [num_obj], update for recovering original order
        """
        if tree.parent is None:
            root_c = torch.zeros((1, self.h_dim), device="cuda")
            root_h = torch.zeros((1, self.h_dim), device="cuda")
        else:
            root_c = tree.parent.state_c_backward
            root_h = tree.parent.state_h_backward

        next_features = features[tree.index].view(1, -1)

        c, h = self.node_backward(next_features, root_c, root_h, treelstm_io.dropout_mask)

        # record hidden state
        if treelstm_io.hidden is None:
            treelstm_io.hidden = h.view(1, -1)
        else:
            treelstm_io.hidden = torch.cat((treelstm_io.hidden, h.view(1, -1)), 0)

        treelstm_io.order[tree.index] = treelstm_io.order_count
        treelstm_io.order_count += 1

        # recursively update from root to leaves
        tree.state_c_backward = c
        tree.state_h_backward = h
        if tree.left_child is not None:
            self.forward(tree.left_child, features, treelstm_io)
        if tree.right_child is not None:
            self.forward(tree.right_child, features, treelstm_io)

        return
