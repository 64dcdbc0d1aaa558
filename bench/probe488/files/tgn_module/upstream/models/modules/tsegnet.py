import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from external_libs.pointops.functions import pointops
from models.modules.cbl_point_transformer.cbl_point_transformer_module import get_model as get_backbone
import ops_utils as ou


def square_distance(src, dst):
    """
    Calculate Euclid distance between each two points.
    src^T * dst = xn * xm + yn * ym + zn * zm;
    sum(src^2, dim=-1) = xn*xn + yn*yn + zn*zn;
    sum(dst^2, dim=-1) = xm*xm + ym*ym + zm*zm;
    dist = (xn - xm)^2 + (yn - ym)^2 + (zn - zm)^2
         = sum(src**2,dim=-1)+sum(dst**2,dim=-1)-2*src^T*dst
    Input:
        src: source points, [B, N, C]
        dst: target points, [B, M, C]
    Output:
        dist: per-point square distance, [B, N, M]
    """
    B, N, _ = src.shape
    _, M, _ = dst.shape
    dist = -2 * torch.matmul(src, dst.permute(0, 2, 1))
    dist += torch.sum(src ** 2, -1).view(B, N, 1)
    dist += torch.sum(dst ** 2, -1).view(B, 1, M)
    return dist


def knn(x, k):
    inner = -2 * torch.matmul(x.transpose(2, 1), x)
    xx = torch.sum(x ** 2, dim=1, keepdim=True)
    pairwise_distance = -xx - inner - xx.transpose(2, 1)
    idx = pairwise_distance.topk(k=k, dim=-1)[1]  # (batch_size, num_points, k)
    return idx


def get_graph_feature(x, k=20, idx=None):
    batch_size = x.size(0)
    num_points = x.size(2)
    x = x.view(batch_size, -1, num_points)
    if idx is None:
        idx = knn(x, k=k)  # (batch_size, num_points, k)
    device = torch.device('cuda')

    idx_base = torch.arange(0, batch_size, device=device).view(-1, 1, 1) * num_points
    idx = idx + idx_base
    idx = idx.view(-1)

    _, num_dims, _ = x.size()
    x = x.transpose(2, 1).contiguous()
    feature = x.view(batch_size * num_points, -1)[idx, :]
    feature = feature.view(batch_size, num_points, k, num_dims)
    x = x.view(batch_size, num_points, 1, num_dims).repeat(1, 1, k, 1)
    feature = torch.cat((feature - x, x), dim=3).permute(0, 3, 1, 2).contiguous()
    return feature


class CentroidModule(nn.Module):
    """Predicts, for every sampled point, an offset to its tooth centroid and a distance score."""

    def __init__(self, config):
        super().__init__()
        self.backbone = get_backbone(config, stride=config["stride"][:4], nsample=config["nsample"][:4])
        in_ch = config["planes"][3]
        self.offset_head = nn.Sequential(
            nn.Conv1d(in_ch, 128, 1), nn.BatchNorm1d(128), nn.ReLU(inplace=True),
            nn.Conv1d(128, 3, 1))
        self.dist_head = nn.Sequential(
            nn.Conv1d(in_ch, 128, 1), nn.BatchNorm1d(128), nn.ReLU(inplace=True),
            nn.Conv1d(128, 1, 1))

    def forward(self, inputs):
        l3_xyz, l3_feat = self.backbone(inputs)
        offset = self.offset_head(l3_feat)
        dist = self.dist_head(l3_feat)
        return l3_xyz, l3_feat, offset, dist


class SegModule(nn.Module):
    """Per-tooth binary segmentation + FDI id classification on cropped patches."""

    def __init__(self, config, num_ids=16):
        super().__init__()
        self.input_feat = config["input_feat"]
        self.conv1 = nn.Sequential(nn.Conv2d((self.input_feat + 1) * 2, 64, 1, bias=False), nn.BatchNorm2d(64), nn.LeakyReLU(0.2))
        self.conv2 = nn.Sequential(nn.Conv2d(64 * 2, 64, 1, bias=False), nn.BatchNorm2d(64), nn.LeakyReLU(0.2))
        self.conv3 = nn.Sequential(nn.Conv2d(64 * 2, 128, 1, bias=False), nn.BatchNorm2d(128), nn.LeakyReLU(0.2))
        self.conv4 = nn.Sequential(nn.Conv1d(256, 512, 1, bias=False), nn.BatchNorm1d(512), nn.LeakyReLU(0.2))
        self.mask_head = nn.Sequential(nn.Conv1d(512 + 256, 256, 1), nn.BatchNorm1d(256), nn.ReLU(), nn.Conv1d(256, 1, 1))
        self.id_head = nn.Sequential(nn.Linear(512, 256), nn.ReLU(), nn.Dropout(0.3), nn.Linear(256, num_ids))

    def forward(self, x):
        n = x.size(2)
        x1 = self.conv1(get_graph_feature(x, k=20)).max(dim=-1, keepdim=False)[0]
        x2 = self.conv2(get_graph_feature(x1, k=20)).max(dim=-1, keepdim=False)[0]
        x3 = self.conv3(get_graph_feature(x2, k=20)).max(dim=-1, keepdim=False)[0]
        local = torch.cat((x1, x2, x3), dim=1)
        glob = self.conv4(local)
        g = glob.max(dim=-1, keepdim=False)[0]
        mask = self.mask_head(torch.cat([glob, local], dim=1)).squeeze(1)
        ids = self.id_head(g)
        return mask, ids


class TSegNetModule(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.crop_sample_size = config["crop_sample_size"]
        self.centroid_seed_num = config.get("centroid_seed_num", 8)
        self.cent_module = CentroidModule(config)
        self.seg_module = SegModule(config)
        self.run_type = config["run_type"]

    def crop_by_centroids(self, xyz, feat, centroids):
        """Gather the crop_sample_size nearest points around every centroid (B=1)."""
        B, N, _ = xyz.shape
        K = centroids.shape[1]
        xyz_flat = xyz.view(-1, 3).contiguous().float()
        cent_flat = centroids.view(-1, 3).contiguous().float()
        offset = torch.cuda.IntTensor([N])
        new_offset = torch.cuda.IntTensor([K])
        idx, _ = pointops.knnquery(self.crop_sample_size, xyz_flat, cent_flat, offset, new_offset)
        idx = idx.long()
        cropped_xyz = xyz_flat[idx.view(-1)].view(K, self.crop_sample_size, 3)
        cropped_feat = feat[0].transpose(0, 1)[idx.view(-1)].view(K, self.crop_sample_size, -1)
        return idx, cropped_xyz, cropped_feat

    def cluster_centroids(self, moved_xyz, dist, bandwidth=0.05):
        """Keep confident centroid votes and merge nearby ones (simple mean shift on the GPU)."""
        keep = dist.squeeze(1)[0] < 0.2
        votes = moved_xyz[0].transpose(0, 1)[keep]
        if votes.shape[0] == 0:
            return moved_xyz[0].transpose(0, 1)[:1].unsqueeze(0)
        centers = votes.clone()
        for _ in range(10):
            d = torch.cdist(centers, votes)
            w = (d < bandwidth).float()
            centers = (w @ votes) / w.sum(dim=1, keepdim=True).clamp(min=1)
        fps_idx = pointops.furthestsampling(centers.contiguous(), torch.cuda.IntTensor([centers.shape[0]]),
                                            torch.cuda.IntTensor([min(self.centroid_seed_num * 2, centers.shape[0])]))
        return centers[fps_idx.long()].unsqueeze(0)

    def forward(self, inputs, test=False):
        points, seg_label = inputs
        B, C, N = points.shape
        l3_xyz, l3_feat, offset, dist = self.cent_module(points)
        outputs = {
            "l3_xyz": l3_xyz,
            "offset_1": offset,
            "dist_1": dist,
            "sem_1": None,
        }
        if self.run_type == "train_cent":
            return outputs

        moved = l3_xyz + offset
        centroids = self.cluster_centroids(moved, dist)
        xyz = points[:, :3, :].permute(0, 2, 1).contiguous()
        idx, cropped_xyz, cropped_feat = self.crop_by_centroids(xyz, points, centroids)
        K = cropped_xyz.shape[0]

        # attach a gaussian heat map around the centroid as the extra channel
        cent_exp = centroids[0].unsqueeze(1).repeat(1, self.crop_sample_size, 1)
        heat = torch.exp(-torch.sum((cropped_xyz - cent_exp) ** 2, dim=-1) / (2 * 0.1 ** 2)).unsqueeze(-1)
        crop_input = torch.cat([cropped_feat, heat], dim=-1).permute(0, 2, 1).contiguous()

        pd_mask, pd_id = self.seg_module(crop_input)
        outputs["pd_1"] = pd_mask
        outputs["id_pred"] = pd_id
        outputs["cropped_idx"] = idx
        outputs["centroids"] = centroids
        if seg_label is not None:
            cropped_label = seg_label.view(-1)[idx.view(-1)].view(K, self.crop_sample_size)
            cluster_gt = torch.mode(cropped_label, dim=1)[0]
            outputs["cluster_gt_seg_label"] = (cropped_label == cluster_gt.unsqueeze(1)).float()
            outputs["cluster_gt_id"] = ou.fdi_to_class(cluster_gt)
            outputs["weight_1"] = heat.squeeze(-1) + 1.0
        return outputs
