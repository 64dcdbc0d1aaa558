
import __future__

import numpy as np
import warnings
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch as th


class NetVLAD(nn.Module):
    def __init__(self, cluster_size, feature_size, add_batch_norm=True):
        super().__init__()
        self.feature_size = feature_size
        self.cluster_size = cluster_size
        init_sc = (1 / math.sqrt(feature_size))
        # The `clusters` weights are the `w,b` in the paper
        self.clusters = nn.Parameter(init_sc * th.randn(feature_size, cluster_size))
        # The `clusters2` weights are the visual words `c_k` in the paper
        self.clusters2 = nn.Parameter(init_sc * th.randn(1, feature_size, cluster_size))
        self.add_batch_norm = add_batch_norm
        self.batch_norm = nn.BatchNorm1d(cluster_size)
        self.out_dim = cluster_size * feature_size

    def forward(self, x):
        """Aggregates feature maps into a fixed size representation.  In the following
        notation, B = batch_size, N = num_features, K = num_clusters, D = feature_size.

        Args:
            x (th.Tensor): B x N x D

        Returns:
            (th.Tensor): B x DK
        """
        max_sample = x.size()[1]
        x = x.view(-1, self.feature_size)  # B x N x D -> BN x D

        if x.device != self.clusters.device:
            msg = f"x.device {x.device} != cluster.device {self.clusters.device}"
            raise ValueError(msg)

        assignment = th.matmul(x, self.clusters)  # (BN x D) x (D x K) -> BN x K

        if self.add_batch_norm:
            assignment = self.batch_norm(assignment)

        assignment = F.softmax(assignment, dim=1)  # BN x K -> BN x K
        # -> B x N x K
        assignment = assignment.view(-1, max_sample, self.cluster_size)
        a_sum = th.sum(assignment, dim=1, keepdim=True)  # B x N x K -> B x 1 x K
        a = a_sum * self.clusters2

        assignment = assignment.transpose(1, 2)  # B x N x K -> B x K x N

        x = x.view(-1, max_sample, self.feature_size)  # BN x D -> B x N x D
        vlad = th.matmul(assignment, x)  # (B x K x N) x (B x N x D) -> B x K x D
        vlad = vlad.transpose(1, 2)  # -> B x D x K
        vlad = vlad - a

        # L2 intra norm
        vlad = F.normalize(vlad)

        # flattening + L2 norm
        vlad = vlad.reshape(-1, self.cluster_size * self.feature_size)  # -> B x DK
        vlad = F.normalize(vlad)
        return vlad  # B x DK


class NetRVLAD(nn.Module):
    def __init__(self, cluster_size, feature_size, add_batch_norm=True):
        super().__init__()
        self.feature_size = feature_size
        self.cluster_size = cluster_size
        init_sc = (1 / math.sqrt(feature_size))
        # The `clusters` weights are the `w,b` in the paper
        self.clusters = nn.Parameter(init_sc * th.randn(feature_size, cluster_size))
        self.add_batch_norm = add_batch_norm
        self.batch_norm = nn.BatchNorm1d(cluster_size)
        self.out_dim = cluster_size * feature_size

    def forward(self, x):
        max_sample = x.size()[1]
        x = x.view(-1, self.feature_size)  # B x N x D -> BN x D

        if x.device != self.clusters.device:
            msg = f"x.device {x.device} != cluster.device {self.clusters.device}"
            raise ValueError(msg)

        assignment = th.matmul(x, self.clusters)  # (BN x D) x (D x K) -> BN x K

        if self.add_batch_norm:
            assignment = self.batch_norm(assignment)

        assignment = F.softmax(assignment, dim=1)  # BN x K -> BN x K
        assignment = assignment.view(-1, max_sample, self.cluster_size)

        assignment = assignment.transpose(1, 2)  # B x N x K -> B x K x N

        x = x.view(-1, max_sample, self.feature_size)  # BN x D -> B x N x D
        rvlad = th.matmul(assignment, x)  # (B x K x N) x (B x N x D) -> B x K x D
        rvlad = rvlad.transpose(-1, 1)  # -> B x D x K

        # L2 intra norm
        rvlad = F.normalize(rvlad)

        # flattening + L2 norm
        rvlad = rvlad.reshape(-1, self.cluster_size * self.feature_size)  # -> B x DK
        rvlad = F.normalize(rvlad)

        return rvlad


class Model(nn.Module):
    def __init__(self, weights=None, input_size=512, num_classes=17, vocab_size=64, window_size=15, framerate=2,
                 pool="NetVLAD"):
        """
        INPUT: a Tensor of shape (batch_size,window_size,feature_size)
        OUTPUTS: a Tensor of shape (batch_size,num_classes+1)
        """

        super(Model, self).__init__()

        self.window_size_frame = window_size * framerate
        self.input_size = input_size
        self.num_classes = num_classes
        self.framerate = framerate
        self.pool = pool
        self.vlad_k = vocab_size

        # are feature alread PCA'ed?
        if not self.input_size == 512:
            self.feature_extractor = nn.Linear(self.input_size, 512)
            input_size = 512
            self.input_size = 512

        if self.pool == "MAX":
            self.pool_layer = nn.MaxPool1d(self.window_size_frame, stride=1)
            self.fc = nn.Linear(input_size, self.num_classes + 1)

        if self.pool == "MAX++":
            self.pool_layer_before = nn.MaxPool1d(int(self.window_size_frame / 2), stride=1)
            self.pool_layer_after = nn.MaxPool1d(int(self.window_size_frame / 2), stride=1)
            self.fc = nn.Linear(2 * input_size, self.num_classes + 1)

        if self.pool == "AVG":
            self.pool_layer = nn.AvgPool1d(self.window_size_frame, stride=1)
            self.fc = nn.Linear(input_size, self.num_classes + 1)

        if self.pool == "AVG++":
            self.pool_layer_before = nn.AvgPool1d(int(self.window_size_frame / 2), stride=1)
            self.pool_layer_after = nn.AvgPool1d(int(self.window_size_frame / 2), stride=1)
            self.fc = nn.Linear(2 * input_size, self.num_classes + 1)

        elif self.pool == "NetVLAD":
            self.pool_layer = NetVLAD(cluster_size=self.vlad_k, feature_size=self.input_size,
                                      add_batch_norm=True)
            self.fc = nn.Linear(input_size * self.vlad_k, self.num_classes + 1)

        elif self.pool == "NetVLAD++":
            self.pool_layer_before = NetVLAD(cluster_size=int(self.vlad_k / 2), feature_size=self.input_size,
                                             add_batch_norm=True)
            self.pool_layer_after = NetVLAD(cluster_size=int(self.vlad_k / 2), feature_size=self.input_size,
                                            add_batch_norm=True)
            self.fc = nn.Linear(input_size * self.vlad_k, self.num_classes + 1)

        elif self.pool == "NetRVLAD":
            self.pool_layer = NetRVLAD(cluster_size=self.vlad_k, feature_size=self.input_size,
                                       add_batch_norm=True)
            self.fc = nn.Linear(input_size * self.vlad_k, self.num_classes + 1)

        elif self.pool == "NetRVLAD++":
            self.pool_layer_before = NetRVLAD(cluster_size=int(self.vlad_k / 2), feature_size=self.input_size,
                                              add_batch_norm=True)
            self.pool_layer_after = NetRVLAD(cluster_size=int(self.vlad_k / 2), feature_size=self.input_size,
                                             add_batch_norm=True)
            self.fc = nn.Linear(input_size * self.vlad_k, self.num_classes + 1)

        self.drop = nn.Dropout(p=0.4)
        self.sigm = nn.Sigmoid()

        self.load_weights(weights=weights)

    def load_weights(self, weights=None):
        if (weights is not None):
            print("=> loading checkpoint '{}'".format(weights))
            checkpoint = torch.load(weights)
            self.load_state_dict(checkpoint['state_dict'])
            print("=> loaded checkpoint '{}' (epoch {})"
                  .format(weights, checkpoint['epoch']))

    def forward(self, inputs):
        # input_shape: (batch,frames,dim_features)

        BS, FR, IC = inputs.shape
        if not IC == 512:
            inputs = inputs.reshape(BS * FR, IC)
            inputs = self.feature_extractor(inputs)
            inputs = inputs.reshape(BS, FR, -1)

        # Temporal pooling operation
        if self.pool == "MAX" or self.pool == "AVG":
            inputs_pooled = self.pool_layer(inputs.permute((0, 2, 1))).squeeze(-1)

        elif self.pool == "MAX++" or self.pool == "AVG++":
            nb_frames_50 = int(inputs.shape[1] / 2)
            input_before = inputs[:, :nb_frames_50, :]
            input_after = inputs[:, nb_frames_50:, :]
            inputs_before_pooled = self.pool_layer_before(input_before.permute((0, 2, 1))).squeeze(-1)
            inputs_after_pooled = self.pool_layer_after(input_after.permute((0, 2, 1))).squeeze(-1)
            inputs_pooled = torch.cat((inputs_before_pooled, inputs_after_pooled), dim=1)

        elif self.pool == "NetVLAD" or self.pool == "NetRVLAD":
            inputs_pooled = self.pool_layer(inputs)

        elif self.pool == "NetVLAD++" or self.pool == "NetRVLAD++":
            nb_frames_50 = int(inputs.shape[1] / 2)
            inputs_before_pooled = self.pool_layer_before(inputs[:, :nb_frames_50, :])
            inputs_after_pooled = self.pool_layer_after(inputs[:, nb_frames_50:, :])
            inputs_pooled = torch.cat((inputs_before_pooled, inputs_after_pooled), dim=1)

        # Extra FC layer with dropout and sigmoid activation
        output = self.sigm(self.fc(self.drop(inputs_pooled)))

        return output


if __name__ == "__main__":
    BS = 256
    T = 15
    framerate = 2
    D = 512
    pool = "NetRVLAD++"
    model = Model(pool=pool, input_size=D, framerate=framerate, window_size=T)
    print(model)
    inp = torch.rand([BS, T * framerate, D])
    print(inp.shape)
    output = model(inp)
    print(output.shape)
