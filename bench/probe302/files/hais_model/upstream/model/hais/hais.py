'''
HAIS: Hierarchical Aggregation for 3D Instance Segmentation
Network + loss (model_fn_decorator), PointGroup code layout.
'''
import functools
import sys
from collections import OrderedDict

import spconv
import torch
import torch.nn as nn
import torch.nn.functional as F
from spconv.modules import SparseModule

sys.path.append('../../')

from lib.hais_ops.functions import hais_ops  # noqa: E402
from util import utils  # noqa: E402


class ResidualBlock(SparseModule):

    def __init__(self, in_channels, out_channels, norm_fn, indice_key=None):
        super().__init__()

        if in_channels == out_channels:
            self.i_branch = spconv.SparseSequential(nn.Identity())
        else:
            self.i_branch = spconv.SparseSequential(
                spconv.SubMConv3d(in_channels, out_channels, kernel_size=1, bias=False))

        self.conv_branch = spconv.SparseSequential(
            norm_fn(in_channels), nn.ReLU(),
            spconv.SubMConv3d(
                in_channels, out_channels, kernel_size=3, padding=1, bias=False,
                indice_key=indice_key), norm_fn(out_channels), nn.ReLU(),
            spconv.SubMConv3d(
                out_channels, out_channels, kernel_size=3, padding=1, bias=False,
                indice_key=indice_key))

    def forward(self, input):
        identity = spconv.SparseConvTensor(input.features, input.indices, input.spatial_shape,
                                           input.batch_size)
        output = self.conv_branch(input)
        output.features += self.i_branch(identity).features
        return output


class UBlock(nn.Module):

    def __init__(self, nPlanes, norm_fn, block_reps, block, indice_key_id=1):
        super().__init__()
        self.nPlanes = nPlanes

        blocks = {
            'block{}'.format(i): block(nPlanes[0], nPlanes[0], norm_fn,
                                       indice_key='subm{}'.format(indice_key_id))
            for i in range(block_reps)
        }
        blocks = OrderedDict(blocks)
        self.blocks = spconv.SparseSequential(blocks)

        if len(nPlanes) > 1:
            self.conv = spconv.SparseSequential(
                norm_fn(nPlanes[0]), nn.ReLU(),
                spconv.SparseConv3d(
                    nPlanes[0], nPlanes[1], kernel_size=2, stride=2, bias=False,
                    indice_key='spconv{}'.format(indice_key_id)))

            self.u = UBlock(nPlanes[1:], norm_fn, block_reps, block,
                            indice_key_id=indice_key_id + 1)

            self.deconv = spconv.SparseSequential(
                norm_fn(nPlanes[1]), nn.ReLU(),
                spconv.SparseInverseConv3d(
                    nPlanes[1], nPlanes[0], kernel_size=2, bias=False,
                    indice_key='spconv{}'.format(indice_key_id)))

            blocks_tail = {}
            for i in range(block_reps):
                blocks_tail['block{}'.format(i)] = block(
                    nPlanes[0] * (2 - i), nPlanes[0], norm_fn,
                    indice_key='subm{}'.format(indice_key_id))
            blocks_tail = OrderedDict(blocks_tail)
            self.blocks_tail = spconv.SparseSequential(blocks_tail)

    def forward(self, input):
        output = self.blocks(input)
        identity = spconv.SparseConvTensor(output.features, output.indices, output.spatial_shape,
                                           output.batch_size)
        if len(self.nPlanes) > 1:
            output_decoder = self.conv(output)
            output_decoder = self.u(output_decoder)
            output_decoder = self.deconv(output_decoder)
            output.features = torch.cat((identity.features, output_decoder.features), dim=1)
            output = self.blocks_tail(output)
        return output


class HAIS(nn.Module):

    def __init__(self, cfg):
        super().__init__()

        input_c = cfg.input_channel
        m = cfg.m
        classes = cfg.classes
        block_reps = cfg.block_reps
        block_residual = cfg.block_residual

        self.point_aggr_radius = cfg.point_aggr_radius
        self.cluster_shift_meanActive = cfg.cluster_shift_meanActive
        self.score_scale = cfg.score_scale
        self.score_fullscale = cfg.score_fullscale
        self.score_mode = cfg.score_mode
        self.prepare_epochs = cfg.prepare_epochs
        self.pretrain_path = cfg.pretrain_path
        self.pretrain_module = cfg.pretrain_module
        self.fix_module = cfg.fix_module
        self.using_set_aggr_in_training = cfg.using_set_aggr_in_training
        self.using_set_aggr_in_testing = cfg.using_set_aggr_in_testing
        self.mask_score_thr = getattr(cfg, 'mask_score_thr', -0.5)
        self.max_proposal_num = getattr(cfg, 'max_proposal_num', 200)

        norm_fn = functools.partial(nn.BatchNorm1d, eps=1e-4, momentum=0.1)
        block = ResidualBlock

        if cfg.use_coords:
            input_c += 3

        # backbone
        self.input_conv = spconv.SparseSequential(
            spconv.SubMConv3d(input_c, m, kernel_size=3, padding=1, bias=False,
                              indice_key='subm1'))
        self.unet = UBlock([m, 2 * m, 3 * m, 4 * m, 5 * m, 6 * m, 7 * m], norm_fn, block_reps,
                           block, indice_key_id=1)
        self.output_layer = spconv.SparseSequential(norm_fn(m), nn.ReLU())

        # semantic segmentation branch
        self.semantic_linear = nn.Sequential(
            nn.Linear(m, m, bias=True), norm_fn(m), nn.ReLU(), nn.Linear(m, classes))

        # center shift vector branch
        self.offset_linear = nn.Sequential(
            nn.Linear(m, m, bias=True), norm_fn(m), nn.ReLU(), nn.Linear(m, 3, bias=True))

        # intra-instance network
        self.tiny_unet = UBlock([m, 2 * m], norm_fn, 2, block, indice_key_id=11)
        self.tiny_unet_outputlayer = spconv.SparseSequential(norm_fn(m), nn.ReLU())
        self.cls_linear = nn.Linear(m, classes)
        self.mask_linear = nn.Sequential(nn.Linear(m, m), nn.ReLU(), nn.Linear(m, 1))
        self.score_linear = nn.Linear(m, 1)

        self.apply(self.set_bn_init)

        # fix parameter
        for mod in self.fix_module:
            mod = getattr(self, mod)
            for param in mod.parameters():
                param.requires_grad = False

        # load pretrain weights
        if self.pretrain_path is not None:
            pretrain_dict = torch.load(self.pretrain_path)
            for m in self.pretrain_module:
                n1, n2 = utils.load_model_param(getattr(self, m), pretrain_dict, prefix=m)
                print('Load pretrained ' + m + ': %d/%d' % (n1, n2))

    @staticmethod
    def set_bn_init(m):
        classname = m.__class__.__name__
        if classname.find('BatchNorm') != -1:
            m.weight.data.fill_(1.0)
            m.bias.data.fill_(0.0)

    def clusters_voxelization(self, clusters_idx, clusters_offset, feats, coords, fullscale,
                              scale, mode):
        '''
        :param clusters_idx: (SumNPoint, 2), int, dim 0 for cluster_id, dim 1 for corresponding point idxs in N, cpu
        :param clusters_offset: (nCluster + 1), int, cpu
        :param feats: (N, C), float, cuda
        :param coords: (N, 3), float, cuda
        :return:
        '''
        c_idxs = clusters_idx[:, 1].cuda()
        clusters_feats = feats[c_idxs.long()]
        clusters_coords = coords[c_idxs.long()]

        clusters_coords_mean = hais_ops.sec_mean(clusters_coords, clusters_offset.cuda())
        clusters_coords_mean = torch.index_select(clusters_coords_mean, 0,
                                                  clusters_idx[:, 0].cuda().long())
        clusters_coords -= clusters_coords_mean

        clusters_coords_min = hais_ops.sec_min(clusters_coords, clusters_offset.cuda())
        clusters_coords_max = hais_ops.sec_max(clusters_coords, clusters_offset.cuda())

        clusters_scale = 1 / ((clusters_coords_max - clusters_coords_min) / fullscale).max(1)[0] - 0.01
        clusters_scale = torch.clamp(clusters_scale, min=None, max=scale)

        min_xyz = clusters_coords_min * clusters_scale.unsqueeze(-1)
        max_xyz = clusters_coords_max * clusters_scale.unsqueeze(-1)

        clusters_scale = torch.index_select(clusters_scale, 0, clusters_idx[:, 0].cuda().long())

        clusters_coords = clusters_coords * clusters_scale.unsqueeze(-1)

        range = max_xyz - min_xyz
        offset = -min_xyz + torch.clamp(fullscale - range - 0.001, min=0) * torch.rand(3).cuda() \
            + torch.clamp(fullscale - range + 0.001, max=0) * torch.rand(3).cuda()
        offset = torch.index_select(offset, 0, clusters_idx[:, 0].cuda().long())
        clusters_coords += offset
        assert clusters_coords.shape.numel() == ((clusters_coords >= 0) *
                                                 (clusters_coords < fullscale)).sum()

        clusters_coords = clusters_coords.long()
        clusters_coords = torch.cat([clusters_idx[:, 0].view(-1, 1).long(), clusters_coords.cpu()],
                                    1)

        out_coords, inp_map, out_map = hais_ops.voxelization_idx(clusters_coords,
                                                                 int(clusters_idx[-1, 0]) + 1, mode)
        out_feats = hais_ops.voxelization(clusters_feats, out_map.cuda(), mode)

        spatial_shape = [fullscale] * 3
        voxelization_feats = spconv.SparseConvTensor(out_feats,
                                                     out_coords.int().cuda(), spatial_shape,
                                                     int(clusters_idx[-1, 0]) + 1)

        return voxelization_feats, inp_map

    def forward(self, input, input_map, coords, batch_idxs, batch_offsets, epoch, training_mode,
                gt_instances=None):
        '''
        :param input_map: (N), int, cuda
        :param coords: (N, 3), float, cuda
        :param batch_idxs: (N), int, cuda
        :param batch_offsets: (B + 1), int, cuda
        '''
        ret = {}

        output = self.input_conv(input)
        output = self.unet(output)
        output = self.output_layer(output)
        output_feats = output.features[input_map.long()]

        # semantic segmentation
        semantic_scores = self.semantic_linear(output_feats)  # (N, nClass), float
        semantic_preds = semantic_scores.max(1)[1]  # (N), long

        ret['semantic_scores'] = semantic_scores

        # point offset
        pt_offsets = self.offset_linear(output_feats)  # (N, 3), float32
        ret['pt_offsets'] = pt_offsets

        if (epoch > self.prepare_epochs):
            # point aggregation on foreground points
            object_idxs = torch.nonzero(semantic_preds > 1).view(-1)

            batch_idxs_ = batch_idxs[object_idxs]
            batch_offsets_ = utils.get_batch_offsets(batch_idxs_, input.batch_size)
            coords_ = coords[object_idxs]
            pt_offsets_ = pt_offsets[object_idxs]

            semantic_preds_cpu = semantic_preds[object_idxs].int().cpu()

            idx_shift, start_len_shift = hais_ops.ballquery_batch_p(
                coords_ + pt_offsets_, batch_idxs_, batch_offsets_, self.point_aggr_radius,
                self.cluster_shift_meanActive)

            using_set_aggr = self.using_set_aggr_in_training if training_mode == 'train' \
                else self.using_set_aggr_in_testing
            # hierarchical aggregation is a host-side op: everything goes through .cpu()
            proposals_idx, proposals_offset = hais_ops.hierarchical_aggregation(
                semantic_preds_cpu, (coords_ + pt_offsets_).cpu(), idx_shift.cpu(),
                start_len_shift.cpu(), batch_idxs_.cpu(), training_mode, using_set_aggr)

            proposals_idx[:, 1] = object_idxs[proposals_idx[:, 1].long()].int()

            # restrict the num of training proposals, avoid OOM
            max_proposal_num = getattr(self, 'max_proposal_num', 200)
            if proposals_offset.shape[0] > max_proposal_num:
                proposals_offset = proposals_offset[:max_proposal_num + 1]
                proposals_idx = proposals_idx[:proposals_offset[-1]]
                assert proposals_idx.shape[0] == proposals_offset[-1]

            # proposals voxelization again
            input_feats, inp_map = self.clusters_voxelization(proposals_idx, proposals_offset,
                                                              output_feats, coords,
                                                              self.score_fullscale,
                                                              self.score_scale, self.score_mode)

            # predict instance scores
            score = self.tiny_unet(input_feats)
            score = self.tiny_unet_outputlayer(score)

            # predict mask scores
            mask_scores = self.mask_linear(score.features)
            mask_scores = mask_scores[inp_map.long()]
            mask_index_select = torch.ones_like(mask_scores)
            mask_index_select[torch.sigmoid(mask_scores) < self.mask_score_thr] = 0.

            score_feats = score.features[inp_map.long()] * mask_index_select
            score_feats = hais_ops.roipool(score_feats, proposals_offset.cuda())  # (nProposal, C)
            scores = self.score_linear(score_feats)  # (nProposal, 1)

            ret['proposal_scores'] = (scores, proposals_idx, proposals_offset, mask_scores)

        return ret


def model_fn_decorator(test=False):
    # config
    from util.config import cfg

    # criterion
    semantic_criterion = nn.CrossEntropyLoss(ignore_index=cfg.ignore_label).cuda()
    score_criterion = nn.BCELoss(reduction='none').cuda()

    def test_model_fn(batch, model, epoch):
        coords = batch['locs'].cuda()
        voxel_coords = batch['voxel_locs'].cuda()
        p2v_map = batch['p2v_map'].cuda()
        v2p_map = batch['v2p_map'].cuda()
        coords_float = batch['locs_float'].cuda()
        feats = batch['feats'].cuda()
        batch_offsets = batch['offsets'].cuda()
        spatial_shape = batch['spatial_shape']

        if cfg.use_coords:
            feats = torch.cat((feats, coords_float), 1)
        voxel_feats = hais_ops.voxelization(feats, v2p_map, cfg.mode)

        input_ = spconv.SparseConvTensor(voxel_feats, voxel_coords.int(), spatial_shape,
                                         cfg.batch_size)
        ret = model(input_, p2v_map, coords_float, coords[:, 0].int(), batch_offsets, epoch,
                    'test')
        semantic_scores = ret['semantic_scores']  # (N, nClass) float32, cuda
        pt_offsets = ret['pt_offsets']  # (N, 3), float32, cuda
        if (epoch > cfg.prepare_epochs):
            scores, proposals_idx, proposals_offset, mask_scores = ret['proposal_scores']

        # preds
        with torch.no_grad():
            preds = {}
            preds['semantic'] = semantic_scores
            preds['pt_offsets'] = pt_offsets
            if (epoch > cfg.prepare_epochs):
                preds['score'] = scores
                preds['proposals'] = (proposals_idx, proposals_offset)
                preds['mask_scores'] = mask_scores

        return preds

    def model_fn(batch, model, epoch):
        # prepare input and forward
        coords = batch['locs'].cuda()  # (N, 1 + 3), long, cuda, dim 0 for batch_idx
        voxel_coords = batch['voxel_locs'].cuda()  # (M, 1 + 3), long, cuda
        p2v_map = batch['p2v_map'].cuda()  # (N), int, cuda
        v2p_map = batch['v2p_map'].cuda()  # (M, 1 + maxActive), int, cuda

        coords_float = batch['locs_float'].cuda()  # (N, 3), float32, cuda
        feats = batch['feats'].cuda()  # (N, C), float32, cuda
        labels = batch['labels'].cuda()  # (N), long, cuda
        instance_labels = batch['instance_labels'].cuda()  # (N), long, cuda, 0~total_nInst, -100

        instance_info = batch['instance_info'].cuda()  # (N, 9), float32, cuda
        instance_pointnum = batch['instance_pointnum'].cuda()  # (total_nInst), int, cuda

        batch_offsets = batch['offsets'].cuda()  # (B + 1), int, cuda
        spatial_shape = batch['spatial_shape']

        if cfg.use_coords:
            feats = torch.cat((feats, coords_float), 1)

        voxel_feats = hais_ops.voxelization(feats, v2p_map, cfg.mode)  # (M, C), float, cuda

        input_ = spconv.SparseConvTensor(voxel_feats, voxel_coords.int(), spatial_shape,
                                         cfg.batch_size)

        ret = model(input_, p2v_map, coords_float, coords[:, 0].int(), batch_offsets, epoch,
                    'train')
        semantic_scores = ret['semantic_scores']  # (N, nClass) float32, cuda
        pt_offsets = ret['pt_offsets']  # (N, 3), float32, cuda

        loss_inp = {}
        loss_inp['semantic_scores'] = (semantic_scores, labels)
        loss_inp['pt_offsets'] = (pt_offsets, coords_float, instance_info, instance_labels)

        if (epoch > cfg.prepare_epochs):
            scores, proposals_idx, proposals_offset, mask_scores = ret['proposal_scores']
            loss_inp['proposal_scores'] = (scores, proposals_idx, proposals_offset,
                                           instance_pointnum, mask_scores)

        loss, loss_out = loss_fn(loss_inp, epoch)

        # accuracy / visual_dict / meter_dict
        with torch.no_grad():
            preds = {}
            preds['semantic'] = semantic_scores
            preds['pt_offsets'] = pt_offsets
            visual_dict = {}
            visual_dict['loss'] = loss
            for k, v in loss_out.items():
                visual_dict[k] = v[0]
            meter_dict = {}
            meter_dict['loss'] = (loss.item(), coords.shape[0])
            for k, v in loss_out.items():
                meter_dict[k] = (float(v[0]), v[1])

        return loss, preds, visual_dict, meter_dict

    def loss_fn(loss_inp, epoch):
        loss_out = {}

        # semantic loss
        semantic_scores, semantic_labels = loss_inp['semantic_scores']
        semantic_loss = semantic_criterion(semantic_scores, semantic_labels)
        loss_out['semantic_loss'] = (semantic_loss, semantic_scores.shape[0])

        # offset loss
        pt_offsets, coords, instance_info, instance_labels = loss_inp['pt_offsets']
        gt_offsets = instance_info[:, 0:3] - coords  # (N, 3)
        pt_diff = pt_offsets - gt_offsets  # (N, 3)
        pt_dist = torch.sum(torch.abs(pt_diff), dim=-1)  # (N)
        valid = (instance_labels != cfg.ignore_label).float()
        offset_norm_loss = torch.sum(pt_dist * valid) / (torch.sum(valid) + 1e-6)
        loss_out['offset_norm_loss'] = (offset_norm_loss, valid.sum())

        if (epoch > cfg.prepare_epochs):
            scores, proposals_idx, proposals_offset, instance_pointnum, mask_scores = \
                loss_inp['proposal_scores']
            ious, mask_label = hais_ops.cal_iou_and_masklabel(
                proposals_idx[:, 1].cuda(), proposals_offset.cuda(), instance_labels,
                instance_pointnum, mask_scores.sigmoid().detach(), 1)
            mask_label_weight = (mask_label != -1).float()
            mask_label[mask_label == -1.] = 0.5
            mask_loss = F.binary_cross_entropy(
                torch.sigmoid(mask_scores.view(-1)), mask_label, weight=mask_label_weight,
                reduction='mean')
            loss_out['mask_loss'] = (mask_loss, mask_label_weight.sum())

            gt_ious, gt_instance_idxs = ious.max(1)  # (nProposal) float, long
            gt_scores = get_segmented_scores(gt_ious, cfg.fg_thresh, cfg.bg_thresh)
            score_loss = score_criterion(torch.sigmoid(scores.view(-1)), gt_scores)
            score_loss = score_loss.mean()
            loss_out['score_loss'] = (score_loss, gt_ious.shape[0])

        loss = cfg.loss_weight[0] * semantic_loss + cfg.loss_weight[1] * offset_norm_loss
        if (epoch > cfg.prepare_epochs):
            loss += (cfg.loss_weight[2] * score_loss)
            loss += (cfg.loss_weight[3] * mask_loss)
        return loss, loss_out

    def get_segmented_scores(scores, fg_thresh=1.0, bg_thresh=0.0):
        '''
        :param scores: (N), float, 0~1
        :return: segmented_scores: (N), float 0~1, >fg_thresh: 1, <bg_thresh: 0, mid: linear
        '''
        fg_mask = scores > fg_thresh
        bg_mask = scores < bg_thresh
        interval_mask = (fg_mask == 0) & (bg_mask == 0)

        segmented_scores = (fg_mask > 0).float()
        k = 1 / (fg_thresh - bg_thresh)
        b = bg_thresh / (bg_thresh - fg_thresh)
        segmented_scores[interval_mask] = scores[interval_mask] * k + b
        return segmented_scores

    if test:
        fn = test_model_fn
    else:
        fn = model_fn
    return fn
