import functools
import math

import spconv.pytorch as spconv
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch_scatter import scatter_max, scatter_mean, scatter_sum

from ..ops import voxelization
from ..pointnet2 import pointnet2_utils
from ..util import cuda_cast, rle_encode_gpu_batch
from .blocks import MLP, GenericMLP, ResidualBlock, UBlock, conv_with_kaiming_uniform
from .model_utils import (batch_giou_corres, batch_giou_cross, compute_dice_loss,
                          compute_sigmoid_focal_loss, get_batch_offsets, matrix_nms)


class ISBNet(nn.Module):
    """Instance-wise sampling + box-aware dynamic convolution (ISBNet, CVPR 2023 style)."""

    def __init__(
        self,
        channels=32,
        num_blocks=7,
        semantic_only=False,
        semantic_classes=20,
        instance_classes=18,
        semantic_weight=None,
        sem2ins_classes=[],
        ignore_label=-100,
        with_coords=True,
        instance_head_cfg=None,
        test_cfg=None,
        fixed_modules=[],
        criterion=None,
        dataset_name="scannetv2",
        trainall=False,
        voxel_scale=50,
        use_spp_pool=True,
        filter_bg_thresh=0.1,
        iterative_sampling=True,
        mask_dim_out=32,
    ):
        super().__init__()
        self.channels = channels
        self.num_blocks = num_blocks
        self.semantic_only = semantic_only
        self.semantic_classes = semantic_classes
        self.instance_classes = instance_classes
        self.semantic_weight = semantic_weight
        self.sem2ins_classes = sem2ins_classes
        self.ignore_label = ignore_label
        self.with_coords = with_coords
        self.instance_head_cfg = instance_head_cfg
        self.test_cfg = test_cfg
        self.fixed_modules = fixed_modules
        self.voxel_scale = voxel_scale
        self.criterion = criterion
        self.dataset_name = dataset_name
        self.label_shift = semantic_classes - instance_classes
        self.trainall = trainall
        self.use_spp_pool = use_spp_pool
        self.filter_bg_thresh = filter_bg_thresh
        self.iterative_sampling = iterative_sampling
        self.mask_dim_out = mask_dim_out

        in_channels = 6 if with_coords else 3

        norm_fn = functools.partial(nn.BatchNorm1d, eps=1e-4, momentum=0.1)
        block = ResidualBlock

        # backbone
        self.input_conv = spconv.SparseSequential(
            spconv.SubMConv3d(in_channels, channels, kernel_size=3, padding=1, bias=False, indice_key="subm1")
        )
        block_channels = [channels * (i + 1) for i in range(num_blocks)]
        self.unet = UBlock(block_channels, norm_fn, 2, block, indice_key_id=1)
        self.output_layer = spconv.SparseSequential(norm_fn(channels), nn.ReLU())

        # semantic + offset heads
        self.point_wise_head = MLP(channels, semantic_classes + 3 + 1, norm_fn=norm_fn, num_layers=2)

        if not self.semantic_only:
            self.set_aggregator = GenericMLP(
                input_dim=channels + 3,
                hidden_dims=[channels, channels],
                output_dim=channels,
                norm_fn_name="bn1d",
                use_conv=True,
            )
            self.inst_shared_mlp = MLP(channels, channels, norm_fn=norm_fn, num_layers=2)
            self.inst_sem_head = MLP(channels, instance_classes + 1, norm_fn=norm_fn, num_layers=2)
            self.inst_conf_head = MLP(channels, 1, norm_fn=norm_fn, num_layers=2)
            self.inst_box_head = MLP(channels, 6, norm_fn=norm_fn, num_layers=2)

            # dynamic convolution: weights of a 2-layer mask head are predicted per instance
            conv_block = conv_with_kaiming_uniform("BN", activation=True)
            self.mask_tower = nn.Sequential(conv_block(channels, channels), conv_block(channels, channels),
                                            nn.Conv1d(channels, self.mask_dim_out, 1))
            weight_nums = [(self.mask_dim_out + 3 + 3) * self.mask_dim_out, self.mask_dim_out * 1]
            bias_nums = [self.mask_dim_out, 1]
            self.weight_nums = weight_nums
            self.bias_nums = bias_nums
            self.num_gen_params = sum(weight_nums) + sum(bias_nums)
            self.controller = nn.Conv1d(channels, self.num_gen_params, kernel_size=1)

        self.init_weights()

        for mod in fixed_modules:
            mod = getattr(self, mod)
            for param in mod.parameters():
                param.requires_grad = False

    def init_weights(self):
        for m in self.modules():
            if isinstance(m, MLP):
                m.init_weights()
        if not self.semantic_only:
            nn.init.normal_(self.controller.weight, std=0.01)
            nn.init.constant_(self.controller.bias, 0)

    def train(self, mode=True):
        super().train(mode)
        for mod in self.fixed_modules:
            mod = getattr(self, mod)
            for m in mod.modules():
                if isinstance(m, nn.BatchNorm1d):
                    m.eval()

    def forward(self, batch, return_loss=False, epoch=0):
        if return_loss:
            return self.forward_train(**batch, epoch=epoch)
        else:
            return self.forward_test(**batch)

    @cuda_cast
    def forward_train(self, batch_idxs, voxel_coords, p2v_map, v2p_map, coords_float, feats, semantic_labels,
                      instance_labels, spps, spatial_shape, batch_size, epoch, **kwargs):
        if self.with_coords:
            feats = torch.cat((feats, coords_float), 1)
        voxel_feats = voxelization(feats, p2v_map)
        input = spconv.SparseConvTensor(voxel_feats, voxel_coords.int(), spatial_shape, batch_size)

        output_feats = self.forward_backbone(input, v2p_map)
        if self.use_spp_pool:
            # superpoint pooling: average the point features of every superpoint
            spp_feats = scatter_mean(output_feats, spps, dim=0)
            output_feats = spp_feats[spps]

        semantic_scores, pt_offsets, pt_angles = self.forward_pw_head(output_feats)
        losses = self.criterion.point_wise_loss(semantic_scores, pt_offsets, semantic_labels, instance_labels,
                                                coords_float)

        if self.semantic_only or epoch <= self.instance_head_cfg.warmup_epochs:
            return self.parse_losses(losses)

        batch_offsets = get_batch_offsets(batch_idxs, batch_size).cuda()
        sampled_inds, sampled_feats = self.forward_aggregator(coords_float, output_feats, pt_offsets,
                                                              semantic_scores, batch_offsets, batch_size)
        mask_features = self.mask_tower(torch.unsqueeze(output_feats, dim=2).permute(2, 1, 0)).permute(2, 1, 0)
        cls_logits, mask_logits, conf_logits, box_preds = self.forward_head(
            sampled_feats, mask_features, coords_float, sampled_inds, batch_offsets)
        inst_losses = self.criterion.instance_loss(cls_logits, mask_logits, conf_logits, box_preds,
                                                   instance_labels, batch_offsets, sampled_inds)
        losses.update(inst_losses)
        return self.parse_losses(losses)

    def parse_losses(self, losses):
        loss = sum(v for v in losses.values())
        losses["loss"] = loss
        for loss_name, loss_value in losses.items():
            if dist.is_available() and dist.is_initialized():
                loss_value = loss_value.data.clone()
                dist.all_reduce(loss_value.div_(dist.get_world_size()))
            losses[loss_name] = loss_value.item()
        return loss, losses

    @cuda_cast
    def forward_test(self, batch_idxs, voxel_coords, p2v_map, v2p_map, coords_float, feats, semantic_labels,
                     instance_labels, spps, spatial_shape, batch_size, scan_ids, **kwargs):
        assert batch_size == 1
        if self.with_coords:
            feats = torch.cat((feats, coords_float), 1)
        voxel_feats = voxelization(feats, p2v_map)  # test time: one scan per batch
        input = spconv.SparseConvTensor(voxel_feats, voxel_coords.int(), spatial_shape, batch_size)
        output_feats = self.forward_backbone(input, v2p_map)
        if self.use_spp_pool:
            spp_feats = scatter_mean(output_feats, spps, dim=0)
            output_feats = spp_feats[spps]

        semantic_scores, pt_offsets, pt_angles = self.forward_pw_head(output_feats)
        semantic_preds = semantic_scores.max(1)[1]
        ret = dict(
            scan_id=scan_ids[0],
            semantic_preds=semantic_preds.cpu().numpy(),
            semantic_labels=semantic_labels.cpu().numpy(),
            offset_preds=pt_offsets.cpu().numpy(),
            instance_labels=instance_labels.cpu().numpy(),
        )
        if self.semantic_only:
            return ret

        batch_offsets = torch.tensor([0, coords_float.shape[0]], dtype=torch.int32).cuda()
        sampled_inds, sampled_feats = self.forward_aggregator(coords_float, output_feats, pt_offsets,
                                                              semantic_scores, batch_offsets, batch_size)
        mask_features = self.mask_tower(torch.unsqueeze(output_feats, dim=2).permute(2, 1, 0)).permute(2, 1, 0)
        cls_logits, mask_logits, conf_logits, box_preds = self.forward_head(
            sampled_feats, mask_features, coords_float, sampled_inds, batch_offsets)
        pred_instances = self.get_instances(scan_ids[0], cls_logits, mask_logits, conf_logits, semantic_scores,
                                            spps)
        ret.update(dict(pred_instances=pred_instances))
        return ret

    def forward_backbone(self, input, input_map):
        output = self.input_conv(input)
        output = self.unet(output)
        output = self.output_layer(output)
        return output.features[input_map.long()]

    def forward_pw_head(self, output_feats):
        out = self.point_wise_head(output_feats)
        semantic_scores = out[:, :self.semantic_classes]
        pt_offsets = out[:, self.semantic_classes:self.semantic_classes + 3]
        pt_angles = out[:, -1:]
        return semantic_scores, pt_offsets, pt_angles

    def forward_aggregator(self, coords_float, output_feats, pt_offsets, semantic_scores, batch_offsets,
                           batch_size):
        """Instance-wise sampling: FPS on foreground points, then set aggregation per seed."""
        sampled_inds_list, sampled_feats_list = [], []
        fg_prob = 1 - semantic_scores.softmax(-1)[:, :self.label_shift].sum(-1)
        n_sample = self.instance_head_cfg.n_sample_pa1
        for b in range(batch_size):
            start, end = batch_offsets[b], batch_offsets[b + 1]
            fg_inds = torch.nonzero(fg_prob[start:end] > self.filter_bg_thresh).view(-1) + start
            if fg_inds.shape[0] == 0:
                fg_inds = torch.arange(start, end, device=coords_float.device)
            shifted = (coords_float + pt_offsets)[fg_inds]
            fps_inds = pointnet2_utils.furthest_point_sample(
                shifted[None].contiguous(), min(n_sample, fg_inds.shape[0])).long()[0]
            seeds = fg_inds[fps_inds]

            # ball query around every seed, then max-pool the grouped features
            group_idx = pointnet2_utils.ball_query(
                self.instance_head_cfg.radius, self.instance_head_cfg.neighbor, shifted[None].contiguous(),
                shifted[fps_inds][None].contiguous()).long()[0]
            grouped_xyz = shifted[group_idx] - shifted[fps_inds][:, None, :]
            grouped_feats = output_feats[fg_inds][group_idx]
            grouped = torch.cat([grouped_feats, grouped_xyz], dim=-1).permute(0, 2, 1)
            agg = self.set_aggregator(grouped).max(-1)[0]

            sampled_inds_list.append(seeds)
            sampled_feats_list.append(agg)
        return torch.cat(sampled_inds_list), torch.cat(sampled_feats_list)

    def forward_head(self, inst_feats, mask_features, coords_float, inst_inds, batch_offsets):
        inst_feats = self.inst_shared_mlp(inst_feats)
        cls_logits = self.inst_sem_head(inst_feats)
        conf_logits = self.inst_conf_head(inst_feats)
        box_preds = self.inst_box_head(inst_feats)

        controllers = self.controller(inst_feats[..., None]).squeeze(-1)
        num_inst = controllers.shape[0]
        weights, biases = self.parse_dynamic_params(controllers)

        mask_logits = []
        for i in range(num_inst):
            rel_coords = coords_float - coords_float[inst_inds[i]]
            box_feats = box_preds[i, None, :3].expand(coords_float.shape[0], -1)
            x = torch.cat([mask_features, rel_coords, box_feats], dim=1)
            for j, (w, b) in enumerate(zip(weights, biases)):
                x = F.linear(x, w[i].view(-1, x.shape[1]), b[i])
                if j < len(weights) - 1:
                    x = F.relu(x)
            mask_logits.append(x.squeeze(-1))
        mask_logits = torch.stack(mask_logits, dim=0)
        return cls_logits, mask_logits, conf_logits, box_preds

    def parse_dynamic_params(self, params):
        num_layers = len(self.weight_nums)
        params_splits = list(torch.split_with_sizes(params, self.weight_nums + self.bias_nums, dim=1))
        weight_splits = params_splits[:num_layers]
        bias_splits = params_splits[num_layers:]
        return weight_splits, bias_splits

    def get_instances(self, scan_id, cls_logits, mask_logits, conf_logits, semantic_scores, spps):
        num_points = semantic_scores.shape[0]
        cls_scores = F.softmax(cls_logits, dim=-1)[:, :-1]
        conf_scores = conf_logits.sigmoid().squeeze(-1)
        scores = cls_scores * conf_scores[:, None]

        # superpoint-level mask refinement: a superpoint is in the mask if its max logit is positive
        mask_logits_spp, _ = scatter_max(mask_logits, spps[None].expand(mask_logits.shape[0], -1), dim=1)
        mask_logits = mask_logits_spp[:, spps]
        masks = mask_logits.sigmoid() > self.test_cfg.mask_thresh

        topk = min(self.test_cfg.topk_insts, scores.numel())
        topk_scores, topk_idx = scores.flatten().topk(topk)
        inst_idx = topk_idx // self.instance_classes
        cls_pred = topk_idx % self.instance_classes + 1
        masks = masks[inst_idx]
        keep = matrix_nms(masks.float(), cls_pred, topk_scores, kernel="linear")
        masks, cls_pred, topk_scores = masks[keep], cls_pred[keep], topk_scores[keep]

        npoints = masks.sum(1)
        valid = npoints >= self.test_cfg.min_npoint
        masks, cls_pred, topk_scores = masks[valid], cls_pred[valid], topk_scores[valid]

        pred_instances = []
        rles = rle_encode_gpu_batch(masks)
        for i in range(masks.shape[0]):
            pred_instances.append(
                dict(scan_id=scan_id, label_id=int(cls_pred[i]), conf=float(topk_scores[i]),
                     pred_mask=rles[i]))
        if num_points > 250000:
            # very large S3DIS/STPLS3D areas: release the per-instance mask buffers right away
            torch.cuda.empty_cache()
        return pred_instances
