# -*- coding: utf-8 -*-
"""Higher-order Structure based Anomaly Detection on Attributed
    Networks (GUIDE)"""
# Author: Kay Liu <zliu234@uic.edu>
# License: BSD 2 clause

import os
import hashlib
import warnings

import torch
import numpy as np
import networkx as nx
from networkx.generators.atlas import graph_atlas_g
from torch_geometric.nn import GCN
from torch_geometric.utils import to_networkx

from . import DeepDetector
from ..nn import GUIDEBase


class GUIDE(DeepDetector):
    """
    Higher-order Structure based Anomaly Detection on Attributed
    Networks

    GUIDE is an anomaly detector consisting of an attribute graph
    convolutional autoencoder, and a structure graph attentive
    autoencoder (not the same as the graph attention networks). Instead
    of the adjacency matrix, node motif degree is used as input of
    structure autoencoder. The reconstruction mean square error of the
    autoencoders are defined as structure anomaly score and attribute
    anomaly score, respectively.

    Note: The calculation of node motif degree in preprocessing has
    high time complexity. It may take longer than you expect.

    See :cite:`yuan2021higher` for details.

    Parameters
    ----------
    hid_a : int, optional
        Hidden dimension for attribute autoencoder. Default: ``64``.
    hid_s : int, optional
        Hidden dimension for structure autoencoder. Default: ``4``.
    num_layers : int, optional
        Total number of layers in autoencoders. Default: ``4``.
    dropout : float, optional
        Dropout rate. Default: ``0.``.
    weight_decay : float, optional
        Weight decay (L2 penalty). Default: ``0.``.
    act : callable activation function or None, optional
        Activation function if not None.
        Default: ``torch.nn.functional.relu``.
    backbone : torch.nn.Module, optional
        The backbone of the deep detector implemented in PyG.
        Default: ``torch_geometric.nn.GCN``.
    alpha : float, optional
        Weight between reconstruction of node feature and structure.
        Default: ``None``, automatically balance based on the ratio.
    contamination : float, optional
        Valid in (0., 0.5). The proportion of outliers in the data set.
        Used when fitting to define the threshold on the decision
        function. Default: ``0.1``.
    lr : float, optional
        Learning rate. Default: ``0.004``.
    epoch : int, optional
        Maximum number of training epoch. Default: ``100``.
    gpu : int
        GPU Index, -1 for using CPU. Default: ``-1``.
    batch_size : int, optional
        Minibatch size, 0 for full batch training. Default: ``0``.
    num_neigh : int, optional
        Number of neighbors in sampling, -1 for all neighbors.
        Default: ``-1``.
    graphlet_size : int, optional
        The maximum graphlet size used to compute the node motif
        degree. Default: ``4``.
    selected_motif : bool, optional
        Use selected motifs which are defined in the original paper.
        Default: ``True``.
    cache_dir : str, option
        The directory for the node motif degree caching.
        Default: ``None``.
    verbose : int, optional
        Verbosity mode. Range in [0, 3]. Larger value for printing out
        more log information. Default: ``0``.
    save_emb : bool, optional
        Whether to save the embedding. Default: ``False``.
    compile_model : bool, optional
        Whether to compile the model with ``torch_geometric.compile``.
        Default: ``False``.
    **kwargs
        Other parameters for the backbone model.
    """

    def __init__(self,
                 hid_a=64,
                 hid_s=4,
                 num_layers=4,
                 dropout=0.,
                 weight_decay=0.,
                 act=torch.nn.functional.relu,
                 backbone=GCN,
                 alpha=None,
                 contamination=0.1,
                 lr=0.004,
                 epoch=100,
                 gpu=-1,
                 batch_size=0,
                 num_neigh=-1,
                 graphlet_size=4,
                 selected_motif=True,
                 cache_dir=None,
                 verbose=0,
                 save_emb=False,
                 compile_model=False,
                 **kwargs):
        super(GUIDE, self).__init__(hid_dim=(hid_a, hid_s),
                                    num_layers=num_layers,
                                    dropout=dropout,
                                    weight_decay=weight_decay,
                                    act=act,
                                    backbone=backbone,
                                    contamination=contamination,
                                    lr=lr,
                                    epoch=epoch,
                                    gpu=gpu,
                                    batch_size=batch_size,
                                    num_neigh=num_neigh,
                                    verbose=verbose,
                                    save_emb=save_emb,
                                    compile_model=compile_model,
                                    **kwargs)

        self.alpha = alpha
        self.graphlet_size = graphlet_size
        if selected_motif:
            assert self.graphlet_size == 4, \
                "Graphlet size is fixed when using selected motif"
        self.selected_motif = selected_motif

        if cache_dir is None:
            cache_dir = os.path.join(os.path.expanduser('~'), '.pygod')
        self.cache_dir = cache_dir

    def process_graph(self, data):
        data.s = self._get_nmd(data)
        self.dim_s = data.s.shape[1]

        if self.alpha is None:
            self.alpha = torch.std(data.s).detach() / \
                         (torch.std(data.x).detach() + torch.std(data.s).detach())

    def init_model(self, **kwargs):
        if self.save_emb:
            self.emb = (torch.zeros(self.num_nodes, self.hid_dim[0]),
                        torch.zeros(self.num_nodes, self.hid_dim[1]))

        return GUIDEBase(dim_a=self.in_dim,
                         dim_s=self.dim_s,
                         hid_a=self.hid_dim[0],
                         hid_s=self.hid_dim[1],
                         num_layers=self.num_layers,
                         dropout=self.dropout,
                         act=self.act,
                         backbone=self.backbone,
                         **kwargs).to(self.device)

    def forward_model(self, data):
        batch_size = data.batch_size

        x = data.x.to(self.device)
        s = data.s.to(self.device)
        edge_index = data.edge_index.to(self.device)

        x_, s_ = self.model(x, s, edge_index)
        score = self.model.loss_func(x[:batch_size],
                                     x_[:batch_size],
                                     s[:batch_size],
                                     s_[:batch_size],
                                     self.alpha)
        loss = torch.mean(score)

        return loss, score.detach().cpu()

    def _get_nmd(self, data):
        """Node motif degree, cached on disk keyed by the edge index hash."""
        key = hashlib.sha1(data.edge_index.cpu().numpy().tobytes()).hexdigest()[:16]
        file_name = os.path.join(self.cache_dir, 'nmd_{}_{}.pt'.format(
            key, 'sel' if self.selected_motif else self.graphlet_size))

        if os.path.exists(file_name):
            s = torch.load(file_name)
            if s.shape[0] == data.num_nodes:
                return s
            warnings.warn('Stale motif degree cache {}, recomputing'.format(file_name))

        g = to_networkx(data, to_undirected=True)
        if self.selected_motif:
            s = self._selected_motifs(g)
        else:
            s = self._graphlet_degree(g)

        os.makedirs(self.cache_dir, exist_ok=True)
        torch.save(s, file_name)
        return s

    @staticmethod
    def _selected_motifs(g):
        """Degree, triangle, 4-cycle and 4-clique counts per node."""
        n = g.number_of_nodes()
        s = torch.zeros(n, 4)
        deg = dict(g.degree())
        tri = nx.triangles(g)
        for v in g.nodes():
            s[v, 0] = deg[v]
            s[v, 1] = tri[v]
        # 4-cycles through each node
        for v in g.nodes():
            nbrs = list(g.neighbors(v))
            cnt = 0
            for i in range(len(nbrs)):
                for j in range(i + 1, len(nbrs)):
                    common = set(g.neighbors(nbrs[i])) & set(g.neighbors(nbrs[j]))
                    common.discard(v)
                    cnt += len(common)
            s[v, 2] = cnt / 2
        # 4-cliques through each node
        for clique in nx.enumerate_all_cliques(g):
            if len(clique) == 4:
                for v in clique:
                    s[v, 3] += 1
            elif len(clique) > 4:
                break
        return s

    def _graphlet_degree(self, g):
        atlas = [a for a in graph_atlas_g()[1:]
                 if a.number_of_nodes() <= self.graphlet_size and nx.is_connected(a)]
        n = g.number_of_nodes()
        s = np.zeros((n, len(atlas)), dtype=np.float32)
        matcher = nx.algorithms.isomorphism.GraphMatcher
        for k, a in enumerate(atlas):
            gm = matcher(g, a)
            for mapping in gm.subgraph_isomorphisms_iter():
                for v in mapping:
                    s[v, k] += 1
        return torch.from_numpy(s)
