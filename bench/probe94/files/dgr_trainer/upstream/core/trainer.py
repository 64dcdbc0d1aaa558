# Copyright (c) Chris Choy (chrischoy@ai.stanford.edu) and Wei Dong (weidong@andrew.cmu.edu)
# Deep Global Registration, CVPR 2020 -- training of the 6D inlier ConvNet on top of frozen FCGF.
import gc
import logging
import os.path as osp
import os
import json
import time

import numpy as np
import torch
import torch.optim as optim
import torch.nn.functional as F
from tensorboardX import SummaryWriter

from model import load_model
from core.knn import find_knn_batch
from core.correspondence import find_correct_correspondence
from core.loss import UnbalancedLoss, BalancedLoss
from core.metrics import batch_rotation_error, batch_translation_error
import core.registration as GlobalRegistration

from util.timer import Timer, AverageMeter
from util.file import ensure_dir

import MinkowskiEngine as ME

eps = np.finfo(float).eps


class WeightedProcrustesTrainer:
  def __init__(self, config, data_loader, val_data_loader=None):
    # occupancy only for 3D Match dataset. For ScanNet, use RGB 3 channels.
    num_feats = 3 if config.use_xyz_feature else 1

    # Feature model initialization
    if config.use_gpu and not torch.cuda.is_available():
      logging.warning('Warning: There\'s no CUDA support on this machine, '
                      'training is performed on CPU.')
      raise ValueError('GPU not available, but cuda flag set')
    self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')

    self.config = config

    # Training config
    self.max_epoch = config.max_epoch
    self.start_epoch = 1
    self.checkpoint_dir = config.out_dir

    self.data_loader = data_loader
    self.train_data_loader_iter = self.data_loader.__iter__()

    self.iter_size = config.iter_size
    self.batch_size = data_loader.batch_size

    # Validation config
    self.val_max_iter, self.val_epoch_freq = config.val_max_iter, config.val_epoch_freq
    self.best_val_metric, self.best_val_epoch, self.best_val = config.best_val_metric, -np.inf, -np.inf

    self.val_data_loader = val_data_loader
    self.test_valid = True if self.val_data_loader is not None else False

    # Logging
    self.log_step = int(np.sqrt(self.config.batch_size))
    self.writer = SummaryWriter(config.out_dir)

    # Model
    FeatModel = load_model(config.feat_model)
    InlierModel = load_model(config.inlier_model)

    num_feats = 6 if self.config.inlier_feature_type == 'coords' else 1
    self.feat_model = FeatModel(num_feats,
                                config.feat_model_n_out,
                                bn_momentum=config.bn_momentum,
                                conv1_kernel_size=config.feat_conv1_kernel_size,
                                normalize_feature=config.normalize_feature).to(
                                    self.device)

    self.inlier_model = InlierModel(num_feats,
                                    1,
                                    bn_momentum=config.bn_momentum,
                                    conv1_kernel_size=config.inlier_conv1_kernel_size,
                                    normalize_feature=False,
                                    D=6).to(self.device)

    # Loss and optimizer
    self.clip_weight_thresh = self.config.clip_weight_thresh
    if self.config.use_balanced_loss:
      self.crit = BalancedLoss()
    else:
      self.crit = UnbalancedLoss()

    self.optimizer = getattr(optim, config.optimizer)(self.inlier_model.parameters(),
                                                      lr=config.lr,
                                                      momentum=config.momentum,
                                                      weight_decay=config.weight_decay)
    self.scheduler = optim.lr_scheduler.ExponentialLR(self.optimizer, config.exp_gamma)

    # Output preparation
    ensure_dir(self.checkpoint_dir)
    json.dump(config, open(os.path.join(self.checkpoint_dir, 'config.json'), 'w'), indent=4)

    self._load_weights(config)

  def _train_epoch(self, epoch):
    gc.collect()

    # Fix the feature model and train the inlier model
    self.feat_model.eval()
    self.inlier_model.train()

    # Epoch starts from 1
    total_loss, total_num = 0, 0.0
    data_loader = self.data_loader
    iter_size = self.iter_size

    # Meters for statistics and timers for profiling
    average_valid_meter, loss_meter, data_meter = AverageMeter(), AverageMeter(), AverageMeter()
    regist_succ_meter, regist_rte_meter, regist_rre_meter = AverageMeter(), AverageMeter(), AverageMeter()
    data_timer, nn_timer, inlier_timer, total_timer = Timer(), Timer(), Timer(), Timer()

    if self.config.num_train_iter > 0:
      num_train_iter = self.config.num_train_iter
    else:
      num_train_iter = len(data_loader) // iter_size
    start_iter = (epoch - 1) * num_train_iter

    tp, fp, tn, fn = 0, 0, 0, 0

    # Iterate over batches
    for curr_iter in range(num_train_iter):
      self.optimizer.zero_grad()

      batch_loss, data_time = 0, 0
      total_timer.tic()

      for iter_idx in range(iter_size):
        data_timer.tic()
        input_dict = self.get_data(self.train_data_loader_iter)
        data_time += data_timer.toc(average=False)

        # Initial inlier prediction with FCGF and KNN matching
        reg_coords, reg_feats, pred_pairs, is_correct, feat_time, nn_time = self.generate_inlier_input(
            xyz0=input_dict['pcd0'],
            xyz1=input_dict['pcd1'],
            iC0=input_dict['sinput0_C'],
            iC1=input_dict['sinput1_C'],
            iF0=input_dict['sinput0_F'],
            iF1=input_dict['sinput1_F'],
            len_batch=input_dict['len_batch'],
            pos_pairs=input_dict['correspondences'])
        nn_timer.update(nn_time)

        # Inlier prediction with 6D ConvNet
        inlier_timer.tic()
        reg_sinput = ME.SparseTensor(reg_feats.contiguous(),
                                     coordinates=reg_coords.int(),
                                     device=self.device)
        reg_soutput = self.inlier_model(reg_sinput)
        inlier_timer.toc()

        logits = reg_soutput.F
        weights = logits.sigmoid()

        # Truncate weights too low (no inplace modification: needed for backward)
        if self.clip_weight_thresh > 0:
          weights_tmp = torch.zeros_like(weights)
          valid_mask = weights > self.clip_weight_thresh
          weights_tmp[valid_mask] = weights[valid_mask]
          weights = weights_tmp

        # Weighted Procrustes
        pred_rots, pred_trans, ws = self.weighted_procrustes(xyz0s=input_dict['pcd0'],
                                                             xyz1s=input_dict['pcd1'],
                                                             pred_pairs=pred_pairs,
                                                             weights=weights)

        # Get batch registration loss
        gt_rots, gt_trans = self.decompose_rotation_translation(input_dict['T_gt'])
        rot_error = batch_rotation_error(pred_rots, gt_rots)
        trans_error = batch_translation_error(pred_trans, gt_trans)
        individual_loss = rot_error + self.config.trans_weight * trans_error

        # Select batches with at least 10 valid correspondences
        valid_mask = ws > 10
        num_valid = valid_mask.sum().item()
        average_valid_meter.update(num_valid)

        # Registration loss against registration GT
        loss = self.config.procrustes_loss_weight * individual_loss[valid_mask].mean()
        if not np.isfinite(loss.item()):
          max_val = loss.item()
          logging.info('Loss is infinite, abort ')
          continue

        # Direct inlier loss against nearest neighbor searched GT
        target = torch.from_numpy(is_correct).squeeze()
        if self.config.inlier_use_direct_loss:
          inlier_loss = self.config.inlier_direct_loss_weight * self.crit(
              logits.cpu().squeeze(), target.to(torch.float)) / iter_size
          loss += inlier_loss

        loss.backward()

        # Update statistics before backprop
        with torch.no_grad():
          regist_rre_meter.update(rot_error.squeeze() * 180 / np.pi)
          regist_rte_meter.update(trans_error.squeeze())

          success = (trans_error.squeeze() < self.config.success_rte_thresh) * (
              rot_error.squeeze() * 180 / np.pi < self.config.success_rre_thresh)
          regist_succ_meter.update(success.float())

          pred_on_pos, pred_on_neg = self.evaluate_inlier_prediction(logits, target)
          tp += pred_on_pos.sum().item()
          fp += pred_on_neg.sum().item()

          batch_loss += loss.mean().item()

      # Check gradient and avoid backprop of inf values
      max_grad = torch.abs(self.inlier_model.final.kernel.grad).max().cpu().item()

      # Backprop only if gradient is finite
      if not np.isfinite(max_grad):
        self.optimizer.zero_grad()
        logging.info(f'Clearing the NaN gradient at iter {curr_iter}')
      else:
        self.optimizer.step()

      gc.collect()
      torch.cuda.empty_cache()

      total_loss += batch_loss
      total_num += 1.0
      total_timer.toc()
      data_meter.update(data_time)
      loss_meter.update(batch_loss)

      # Output to logs
      if curr_iter % self.config.stat_freq == 0:
        stat = {'loss': loss_meter.avg, 'precision': tp / (tp + fp + eps),
                'succ_rate': regist_succ_meter.avg, 'rre': regist_rre_meter.avg, 'rte': regist_rte_meter.avg}
        for k, v in stat.items():
          self.writer.add_scalar(f'train/{k}', v, start_iter + curr_iter)
        logging.info(f"Train Epoch: {epoch} [{curr_iter}/{num_train_iter}], " +
                     ", ".join([f"{k}: {v:.4e}" for k, v in stat.items()]))
        for meter in (loss_meter, regist_rte_meter, regist_rre_meter, regist_succ_meter, data_meter, total_timer):
          meter.reset()
        tp, fp, tn, fn = 0, 0, 0, 0

  def _valid_epoch(self):
    # Change the network to evaluation mode
    self.feat_model.eval()
    self.inlier_model.eval()
    self.val_data_loader.dataset.reset_seed(0)
    num_data = 0
    succ_meter, rre_meter, rte_meter = AverageMeter(), AverageMeter(), AverageMeter()
    reg_timer = Timer()
    tot_num_data = len(self.val_data_loader.dataset)
    if self.val_max_iter > 0:
      tot_num_data = min(self.val_max_iter, tot_num_data)
    data_loader_iter = self.val_data_loader.__iter__()

    with torch.no_grad():
      for batch_idx in range(tot_num_data):
        input_dict = self.get_data(data_loader_iter)
        reg_timer.tic()
        reg_coords, reg_feats, pred_pairs, is_correct, _, _ = self.generate_inlier_input(
            xyz0=input_dict['pcd0'], xyz1=input_dict['pcd1'],
            iC0=input_dict['sinput0_C'], iC1=input_dict['sinput1_C'],
            iF0=input_dict['sinput0_F'], iF1=input_dict['sinput1_F'],
            len_batch=input_dict['len_batch'], pos_pairs=input_dict['correspondences'])
        reg_sinput = ME.SparseTensor(reg_feats.contiguous(), coordinates=reg_coords.int(), device=self.device)
        weights = self.inlier_model(reg_sinput).F.sigmoid()
        pred_rots, pred_trans, _ = self.weighted_procrustes(
            xyz0s=input_dict['pcd0'], xyz1s=input_dict['pcd1'], pred_pairs=pred_pairs, weights=weights)
        torch.cuda.synchronize()
        reg_timer.toc()

        gt_rots, gt_trans = self.decompose_rotation_translation(input_dict['T_gt'])
        rot_error = batch_rotation_error(pred_rots, gt_rots) * 180 / np.pi
        trans_error = batch_translation_error(pred_trans, gt_trans)
        rre_meter.update(rot_error.squeeze())
        rte_meter.update(trans_error.squeeze())
        succ_meter.update(((trans_error.squeeze() < self.config.success_rte_thresh) *
                           (rot_error.squeeze() < self.config.success_rre_thresh)).float())
        num_data += 1

    logging.info(f"Val: succ {succ_meter.avg:.4f}, RRE {rre_meter.avg:.3f}, RTE {rte_meter.avg:.3f}, "
                 f"reg time {reg_timer.avg:.3f}s over {num_data} pairs")
    return {'succ_rate': succ_meter.avg, 'rre': rre_meter.avg, 'rte': rte_meter.avg}

  def _load_weights(self, config):
    if config.resume is None and config.weights:
      logging.info("=> loading weights for inlier model '{}'".format(config.weights))
      checkpoint = torch.load(config.weights)
      self.feat_model.load_state_dict(checkpoint['state_dict'])
      logging.info("=> Loaded base model weights from '{}'".format(config.weights))
      if 'state_dict_inlier' in checkpoint:
        self.inlier_model.load_state_dict(checkpoint['state_dict_inlier'])
        logging.info("=> Loaded inlier weights from '{}'".format(config.weights))
      else:
        logging.warn("Inlier weight not found in '{}'".format(config.weights))

    if config.resume is not None:
      if osp.isfile(config.resume):
        logging.info("=> loading checkpoint '{}'".format(config.resume))
        state = torch.load(config.resume)

        self.start_epoch = state['epoch']
        self.feat_model.load_state_dict(state['state_dict'])
        self.feat_model = self.feat_model.to(self.device)
        self.scheduler.load_state_dict(state['scheduler'])
        self.optimizer.load_state_dict(state['optimizer'])

        if 'state_dict_inlier' in state:
          self.inlier_model.load_state_dict(state['state_dict_inlier'])
          self.inlier_model = self.inlier_model.to(self.device)
        else:
          logging.warn("Inlier weights not found in '{}'".format(config.resume))
      else:
        logging.warn("Inlier weights does not exist at '{}'".format(config.resume))

  def generate_inlier_input(self, xyz0, xyz1, iC0, iC1, iF0, iF1, len_batch, pos_pairs):
    # pairs consist of (xyz1 index, xyz0 index)
    stime = time.time()
    sinput0 = ME.SparseTensor(iF0, coordinates=iC0, device=self.device)
    oF0 = self.feat_model(sinput0).F

    sinput1 = ME.SparseTensor(iF1, coordinates=iC1, device=self.device)
    oF1 = self.feat_model(sinput1).F
    feat_time = time.time() - stime

    stime = time.time()
    pred_pairs = self.find_pairs(oF0, oF1, len_batch)
    nn_time = time.time() - stime

    is_correct = find_correct_correspondence(pos_pairs, pred_pairs, len_batch=len_batch)

    cat_pred_pairs = []
    start_inds = torch.zeros((1, 2)).long()
    for lens, pred_pair in zip(len_batch, pred_pairs):
      cat_pred_pairs.append(pred_pair + start_inds)
      start_inds += torch.LongTensor(lens)

    cat_pred_pairs = torch.cat(cat_pred_pairs, 0)
    pred_pair_inds0, pred_pair_inds1 = cat_pred_pairs.t()
    reg_coords = torch.cat((iC0[pred_pair_inds0], iC1[pred_pair_inds1, 1:]), 1)
    reg_feats = self.generate_inlier_features(xyz0, xyz1, iC0, iC1, oF0, oF1,
                                              pred_pair_inds0, pred_pair_inds1).float()

    return reg_coords, reg_feats, pred_pairs, is_correct, feat_time, nn_time

  def find_pairs(self, F0, F1, len_batch):
    nn_batch = find_knn_batch(F0,
                              F1,
                              len_batch,
                              nn_max_n=self.config.nn_max_n,
                              knn=self.config.inlier_knn,
                              return_distance=False,
                              search_method=self.config.knn_search_method)

    pred_pairs = []
    for nns, lens in zip(nn_batch, len_batch):
      ind0, ind1 = torch.arange(len(nns)).long()[:, None], nns.long().cpu()
      pred_pairs.append(torch.cat([torch.cat((ind0, ind1[:, j:j + 1]), 1) for j in range(nns.shape[1])], 0))
    return pred_pairs

  def weighted_procrustes(self, xyz0s, xyz1s, pred_pairs, weights):
    decomposed_weights = self.decompose_by_length(weights, pred_pairs)
    RT = []
    ws = []

    for xyz0, xyz1, pred_pair, w in zip(xyz0s, xyz1s, pred_pairs, decomposed_weights):
      xyz0.requires_grad = False
      xyz1.requires_grad = False
      ws.append(w.sum().item())
      predT = GlobalRegistration.weighted_procrustes(
          X=xyz0[pred_pair[:, 0]].to(self.device),
          Y=xyz1[pred_pair[:, 1]].to(self.device),
          w=w,
          eps=np.finfo(np.float32).eps)
      RT.append(predT)

    Rs, ts = list(zip(*RT))
    Rs = torch.stack(Rs, 0)
    ts = torch.stack(ts, 0)
    ws = torch.Tensor(ws)
    return Rs, ts, ws

  def get_data(self, iterator):
    while True:
      try:
        input_data = iterator.next()
      except ValueError as e:
        logging.info('Skipping an empty batch')
        continue

      return input_data
