from __future__ import print_function

import argparse
import os
import pickle as cp
import random
import sys

import networkx as nx
import numpy as np
from tqdm import tqdm

cmd_opt = argparse.ArgumentParser(description='Argparser for MAGIC: attributed CFG classification with DGCNN')
cmd_opt.add_argument('-mode', default='cpu', help='cpu/gpu')
cmd_opt.add_argument('-gm', default='DGCNN', help='gnn model to use')
cmd_opt.add_argument('-data', default=None, help='data folder name (e.g. MSKCFG, YANCFG)')
cmd_opt.add_argument('-batch_size', type=int, default=40, help='minibatch size')
cmd_opt.add_argument('-seed', type=int, default=1, help='seed')
cmd_opt.add_argument('-feat_dim', type=int, default=0, help='dimension of discrete node feature (maximum node tag)')
cmd_opt.add_argument('-edge_feat_dim', type=int, default=0, help='dimension of edge features')
cmd_opt.add_argument('-num_class', type=int, default=0, help='#classes')
cmd_opt.add_argument('-fold', type=int, default=1, help='fold (1..10)')
cmd_opt.add_argument('-test_number', type=int, default=0, help='if specified, will overwrite -fold and use the last -test_number graphs as testing data')
cmd_opt.add_argument('-num_epochs', type=int, default=1000, help='number of epochs')
cmd_opt.add_argument('-latent_dim', type=str, default='64', help='dimension(s) of latent layers')
cmd_opt.add_argument('-sortpooling_k', type=float, default=30, help='number of nodes kept after SortPooling')
cmd_opt.add_argument('-conv1d_activation', type=str, default='ReLU', help='which nn activation layer to use')
cmd_opt.add_argument('-out_dim', type=int, default=1024, help='graph embedding output size')
cmd_opt.add_argument('-hidden', type=int, default=100, help='dimension of mlp hidden layer')
cmd_opt.add_argument('-max_lv', type=int, default=4, help='max rounds of message passing')
cmd_opt.add_argument('-learning_rate', type=float, default=0.0001, help='init learning_rate')
cmd_opt.add_argument('-dropout', type=bool, default=False, help='whether add dropout after dense layer')
cmd_opt.add_argument('-printAUC', type=bool, default=False, help='whether to print AUC (for binary classification only)')
cmd_opt.add_argument('-extract_features', type=bool, default=False, help='whether to extract final graph features')
cmd_opt.add_argument('-attr_dim', type=int, default=11, help='dimension of the ACFG block attributes')
cmd_opt.add_argument('-weighted_loss', type=bool, default=False, help='weight the loss by inverse family frequency')

cmd_args, _ = cmd_opt.parse_known_args()

cmd_args.latent_dim = [int(x) for x in cmd_args.latent_dim.split('-')]
if len(cmd_args.latent_dim) == 1:
    cmd_args.latent_dim = cmd_args.latent_dim[0]


class GNNGraph(object):
    def __init__(self, g, label, node_tags=None, node_features=None):
        '''
            g: a networkx graph
            label: an integer graph label
            node_tags: a list of integer node tags
            node_features: a numpy array of continuous node features
        '''
        self.num_nodes = len(node_tags)
        self.node_tags = node_tags
        self.label = label
        self.node_features = node_features  # numpy array (node_num * feature_dim)
        self.degs = list(dict(g.degree).values())

        if len(g.edges()) != 0:
            x, y = zip(*g.edges())
            self.num_edges = len(x)
            self.edge_pairs = np.ndarray(shape=(self.num_edges, 2), dtype=np.int32)
            self.edge_pairs[:, 0] = x
            self.edge_pairs[:, 1] = y
            self.edge_pairs = self.edge_pairs.flatten()
        else:
            self.num_edges = 0
            self.edge_pairs = np.array([])

        # see if there are edge features
        self.edge_features = None
        if nx.get_edge_attributes(g, 'features'):
            # make sure edges have an attribute 'features' (1 * feature_dim numpy array)
            edge_features = nx.get_edge_attributes(g, 'features')
            assert (type(edge_features.values()[0]) == np.ndarray)
            # need to rearrange edge_features using the e2n edge order
            edge_features = {(min(x, y), max(x, y)): z for (x, y), z in edge_features.items()}
            keys = sorted(edge_features)
            self.edge_features = []
            for edge in keys:
                self.edge_features.append(edge_features[edge])
                self.edge_features.append(edge_features[edge])  # add reversed edges
            self.edge_features = np.concatenate(self.edge_features, 0)


def load_acfg_pickle(path):
    """MAGIC stores each ACFG as a pickled networkx DiGraph whose nodes carry an 11-d 'attr' vector."""
    with open(path, 'rb') as fh:
        g = cp.load(fh)
    g = nx.convert_node_labels_to_integers(g)
    feats = np.asarray([g.nodes[n].get('attr', np.zeros(cmd_args.attr_dim)) for n in g.nodes], dtype=np.float32)
    return g, feats


def load_data():
    print('loading data')
    g_list = []
    label_dict = {}
    feat_dict = {}

    root = os.path.join('data', cmd_args.data)
    index_file = os.path.join(root, 'index.txt')
    with open(index_file, 'r') as f:
        lines = [ln.strip() for ln in f if ln.strip()]
    for line in tqdm(lines, desc='graphs'):
        rel_path, family = line.split()
        if family not in label_dict:
            label_dict[family] = len(label_dict)
        g, feats = load_acfg_pickle(os.path.join(root, rel_path))
        node_tags = []
        for n in range(g.number_of_nodes()):
            deg = g.degree[n]
            if deg not in feat_dict:
                feat_dict[deg] = len(feat_dict)
            node_tags.append(feat_dict[deg])
        g_list.append(GNNGraph(g.to_undirected(), label_dict[family], node_tags, feats))
    for g in g_list:
        g.label = label_dict[[k for k, v in label_dict.items() if v == g.label][0]]
    cmd_args.num_class = len(label_dict)
    cmd_args.feat_dim = len(feat_dict)  # maximum node label (tag)
    cmd_args.edge_feat_dim = 0
    cmd_args.attr_dim = g_list[0].node_features.shape[1] if g_list[0].node_features is not None else 0
    print('# classes: %d' % cmd_args.num_class)
    print('# maximum node tag: %d' % cmd_args.feat_dim)

    if cmd_args.test_number == 0:
        train_idxes = np.loadtxt(os.path.join(root, '10fold_idx', 'train_idx-%d.txt' % cmd_args.fold), dtype=np.int32).tolist()
        test_idxes = np.loadtxt(os.path.join(root, '10fold_idx', 'test_idx-%d.txt' % cmd_args.fold), dtype=np.int32).tolist()
        return [g_list[i] for i in train_idxes], [g_list[i] for i in test_idxes]
    else:
        return g_list[: len(g_list) - cmd_args.test_number], g_list[len(g_list) - cmd_args.test_number:]
