import numpy as np
import torch
import torch.nn as nn

from .base_model import BaseModel
from ...utils import MODEL
from ..modules.losses import filter_valid_label
from ...datasets.augment import SemsegAugmentation
from open3d.ml.torch.layers import SparseConv, SparseConvTranspose
from open3d.ml.torch.ops import voxelize, reduce_subarrays_sum


class SparseConvUnet(BaseModel):
    """Semantic Segmentation model.

    Uses UNet architecture replacing convolutions with Sparse Convolutions.

    Attributes:
        name: Name of model.
          Default to "SparseConvUnet".
        device: Which device to use (cpu or cuda).
        voxel_size: Voxel length for subsampling.
        multiplier: min length of feature length in each layer.
        conv_block_reps: repetition of Unet Blocks.
        residual_blocks: Whether to use Residual Blocks.
        in_channels: Number of features(default 3 for color).
        num_classes: Number of classes.
    """

    def __init__(
            self,
            name="SparseConvUnet",
            device="cuda",
            multiplier=16,  # Proportional to number of neurons in each layer.
            voxel_size=0.05,
            conv_block_reps=1,  # Conv block repetitions.
            residual_blocks=False,
            in_channels=3,
            num_classes=20,
            grid_size=4096,
            batcher='ConcatBatcher',
            augment=None,
            **kwargs):
        super(SparseConvUnet, self).__init__(name=name,
                                             device=device,
                                             multiplier=multiplier,
                                             voxel_size=voxel_size,
                                             conv_block_reps=conv_block_reps,
                                             residual_blocks=residual_blocks,
                                             in_channels=in_channels,
                                             num_classes=num_classes,
                                             grid_size=grid_size,
                                             batcher=batcher,
                                             augment=augment,
                                             **kwargs)
        cfg = self.cfg
        self.device = device
        self.augmenter = SemsegAugmentation(cfg.augment, seed=self.rng)
        self.multiplier = cfg.multiplier
        self.input_layer = InputLayer()
        self.sub_sparse_conv = SubmanifoldSparseConv(in_channels=in_channels,
                                                     filters=multiplier,
                                                     kernel_size=[3, 3, 3])
        self.unet = UNet(conv_block_reps, [
            multiplier, 2 * multiplier, 3 * multiplier, 4 * multiplier,
            5 * multiplier, 6 * multiplier, 7 * multiplier
        ], residual_blocks)
        self.batch_norm = BatchNormBlock(multiplier)
        self.relu = ReLUBlock()
        self.linear = LinearBlock(multiplier, num_classes)
        self.output_layer = OutputLayer()

    def forward(self, inputs):
        pos_list = []
        feat_list = []
        index_map_list = []

        for i in range(len(inputs.batch_lengths)):
            pos = inputs.point[i]
            feat = inputs.feat[i]
            feat, pos, rev = self.input_layer(feat, pos)
            pos_list.append(pos)
            feat_list.append(feat)
            index_map_list.append(rev)

        feat = self.sub_sparse_conv(feat_list, pos_list, voxel_size=1.0)
        feat = self.unet(pos_list, feat)
        feat = self.batch_norm(feat)
        feat = self.relu(feat)
        feat = self.linear(feat)
        output = self.output_layer(feat, index_map_list)

        return output

    def preprocess(self, data, attr):
        points = np.array(data['point'], dtype=np.float32)

        if 'label' not in data.keys() or data['label'] is None:
            labels = np.zeros((points.shape[0],), dtype=np.int32)
        else:
            labels = np.array(data['label'], dtype=np.int32).reshape((-1,))

        if 'feat' not in data.keys() or data['feat'] is None:
            raise Exception(
                "SparseConvnet doesn't work without feature values.")

        feat = np.array(data['feat'], dtype=np.float32)

        # Scale to voxel size.
        points *= 1. / self.cfg.voxel_size  # Scale = 1/voxel_size

        if attr['split'] in ['training', 'train']:
            points, feat, labels = self.augmenter.augment(
                points, feat, labels, self.cfg.get('augment', None))

        m = points.min(0)
        M = points.max(0)

        # Randomly place pointcloud in 4096 size grid.
        grid_size = self.cfg.grid_size
        offset = -m + np.clip(grid_size - M + m - 0.001, 0, None) * np.random.rand(3) + \
            np.clip(grid_size - M + m + 0.001, None, 0) * np.random.rand(3)

        points += offset
        idxs = (points.min(1) >= 0) * (points.max(1) < 4096)

        points = points[idxs]
        feat = feat[idxs]
        labels = labels[idxs]

        points = (points.astype(np.int32) + 0.5).astype(np.float32)  # Move points to voxel center.

        data = {}
        data['point'] = points
        data['feat'] = feat
        data['label'] = labels

        return data

    def transform(self, data, attr):
        data['point'] = torch.from_numpy(data['point'])
        data['feat'] = torch.from_numpy(data['feat'])
        data['label'] = torch.from_numpy(data['label'])

        return data

    def get_loss(self, Loss, results, inputs, device):
        cfg = self.cfg
        labels = torch.cat(inputs['data'].label, 0)

        scores, labels = filter_valid_label(results, labels, cfg.num_classes,
                                            cfg.ignored_label_inds, device)

        loss = Loss.weighted_CrossEntropyLoss(scores, labels)

        return loss, labels, scores

    def get_optimizer(self, cfg_pipeline):
        optimizer = torch.optim.Adam(self.parameters(), **cfg_pipeline.optimizer)
        scheduler = torch.optim.lr_scheduler.ExponentialLR(
            optimizer, cfg_pipeline.scheduler_gamma)

        return optimizer, scheduler


MODEL._register_module(SparseConvUnet, 'torch')


class BatchNormBlock(nn.Module):

    def __init__(self, C, eps=1e-4, momentum=0.01):
        super(BatchNormBlock, self).__init__()
        self.bn = nn.BatchNorm1d(C, eps=eps, momentum=momentum)

    def forward(self, feat_list):
        lengths = [feat.shape[0] for feat in feat_list]
        out = self.bn(torch.cat(feat_list, 0))
        out_list = []
        start = 0
        for l in lengths:
            out_list.append(out[start:start + l])
            start += l

        return out_list


class ReLUBlock(nn.Module):

    def __init__(self):
        super(ReLUBlock, self).__init__()
        self.relu = nn.ReLU()

    def forward(self, feat_list):
        return [self.relu(feat) for feat in feat_list]


class LinearBlock(nn.Module):

    def __init__(self, a, b):
        super(LinearBlock, self).__init__()
        self.linear = nn.Linear(a, b)

    def forward(self, feat_list):
        out_list = []
        for feat in feat_list:
            out_list.append(self.linear(feat))

        return out_list


class InputLayer(nn.Module):

    def __init__(self, voxel_size=1.0):
        super(InputLayer, self).__init__()
        self.voxel_size = torch.Tensor([voxel_size, voxel_size, voxel_size])

    def forward(self, features, in_positions):
        v = voxelize(
            in_positions,
            torch.LongTensor([0, in_positions.shape[0]]).to(in_positions.device),
            self.voxel_size, torch.Tensor([0, 0, 0]),
            torch.Tensor([40960, 40960, 40960]))

        # Contiguous repeating positions.
        in_positions = in_positions[v.voxel_point_indices]
        features = features[v.voxel_point_indices]

        # Find reverse mapping.
        reverse_map_voxelize = np.zeros((in_positions.shape[0],))
        reverse_map_voxelize[v.voxel_point_indices.cpu().numpy()] = np.arange(
            in_positions.shape[0])
        reverse_map_voxelize = reverse_map_voxelize.astype(np.int32)

        # Unique positions.
        in_positions = in_positions[v.voxel_point_row_splits[:-1]]

        # Mean of features.
        count = v.voxel_point_row_splits[1:] - v.voxel_point_row_splits[:-1]
        reverse_map_sort = np.repeat(np.arange(count.shape[0]),
                                     count.cpu().numpy()).astype(np.int32)

        features_avg = in_positions.clone()
        features_avg[:, 0] = reduce_subarrays_sum(features[:, 0],
                                                  v.voxel_point_row_splits)
        features_avg[:, 1] = reduce_subarrays_sum(features[:, 1],
                                                  v.voxel_point_row_splits)
        features_avg[:, 2] = reduce_subarrays_sum(features[:, 2],
                                                  v.voxel_point_row_splits)

        features_avg = features_avg / count.unsqueeze(1)

        return features_avg, in_positions, reverse_map_sort[reverse_map_voxelize]


class OutputLayer(nn.Module):

    def __init__(self):
        super(OutputLayer, self).__init__()

    def forward(self, features_list, index_map_list):
        out = []
        for feat, index_map in zip(features_list, index_map_list):
            out.append(feat[index_map])
        return torch.cat(out, 0)


class SubmanifoldSparseConv(nn.Module):

    def __init__(self,
                 in_channels,
                 filters,
                 kernel_size,
                 use_bias=False,
                 offset=None,
                 normalize=False):
        super(SubmanifoldSparseConv, self).__init__()

        if offset is None:
            if kernel_size[0] % 2:
                offset = 0.
            else:
                offset = -0.5

        self.net = SparseConv(in_channels=in_channels,
                              filters=filters,
                              kernel_size=kernel_size,
                              use_bias=use_bias,
                              offset=offset,
                              normalize=normalize)

    def forward(self, features_list, in_positions_list, out_positions_list=None, voxel_size=1.0):
        if out_positions_list is None:
            out_positions_list = in_positions_list

        out_feat = []
        for feat, in_pos, out_pos in zip(features_list, in_positions_list, out_positions_list):
            out_feat.append(self.net(feat, in_pos, out_pos, voxel_size))

        return out_feat
