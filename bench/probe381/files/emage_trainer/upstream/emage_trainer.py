import train
import os
import time
import csv
import sys
import warnings
import random
import numpy as np
import time
import pprint
import pickle

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from tensorboardX import SummaryWriter
import wandb
from loguru import logger
import librosa
import smplx

from utils import config, logger_tools, other_tools, metric, data_transfer
from utils import rotation_conversions as rc
from dataloaders import data_tools
from optimizers.optim_factory import create_optimizer
from optimizers.scheduler_factory import create_scheduler
from optimizers.loss_factory import get_loss_func
from dataloaders.data_tools import joints_list


class CustomTrainer(train.BaseTrainer):
    '''
    motion representation learning
    '''
    def __init__(self, args):
        super().__init__(args)
        self.joints = self.train_data.joints
        self.ori_joint_list = joints_list[self.args.ori_joints]
        self.tar_joint_list_face = joints_list["beat_smplx_face"]
        self.tar_joint_list_upper = joints_list["beat_smplx_upper"]
        self.tar_joint_list_hands = joints_list["beat_smplx_hands"]
        self.tar_joint_list_lower = joints_list["beat_smplx_lower"]

        self.joint_mask_face = np.zeros(len(list(self.ori_joint_list.keys())) * 3)
        self.joints = 55
        for joint_name in self.tar_joint_list_face:
            self.joint_mask_face[self.ori_joint_list[joint_name][1] - self.ori_joint_list[joint_name][0]:self.ori_joint_list[joint_name][1]] = 1
        self.joint_mask_upper = np.zeros(len(list(self.ori_joint_list.keys())) * 3)
        for joint_name in self.tar_joint_list_upper:
            self.joint_mask_upper[self.ori_joint_list[joint_name][1] - self.ori_joint_list[joint_name][0]:self.ori_joint_list[joint_name][1]] = 1
        self.joint_mask_hands = np.zeros(len(list(self.ori_joint_list.keys())) * 3)
        for joint_name in self.tar_joint_list_hands:
            self.joint_mask_hands[self.ori_joint_list[joint_name][1] - self.ori_joint_list[joint_name][0]:self.ori_joint_list[joint_name][1]] = 1
        self.joint_mask_lower = np.zeros(len(list(self.ori_joint_list.keys())) * 3)
        for joint_name in self.tar_joint_list_lower:
            self.joint_mask_lower[self.ori_joint_list[joint_name][1] - self.ori_joint_list[joint_name][0]:self.ori_joint_list[joint_name][1]] = 1

        self.tracker = other_tools.EpochTracker(["fid", "l1div", "bc", "rec", "trans", "vel", "transv", 'dis', 'gen', 'acc', 'transa', 'exp', 'lvd', 'mse', "cls", "rec_face", "latent", "cls_full", "cls_self", "cls_word", "latent_word", "latent_self"], [False, True, True, False, False, False, False, False, False, False, False, False, False, False, False, False, False, False, False, False, False, False])

        vq_model_module = __import__(f"models.motion_representation", fromlist=["something"])
        self.args.vae_layer = 2
        self.args.vae_length = 256
        self.args.vae_test_dim = 106
        self.vq_model_face = getattr(vq_model_module, "VQVAEConvZero")(self.args).to(self.rank)
        # print(self.vq_model_face)
        other_tools.load_checkpoints(self.vq_model_face, "./datasets/hub/pretrained_vq/last_790_face_v2.bin", args.e_name)
        self.args.vae_test_dim = 78
        self.vq_model_upper = getattr(vq_model_module, "VQVAEConvZero")(self.args).to(self.rank)
        other_tools.load_checkpoints(self.vq_model_upper, "./datasets/hub/pretrained_vq/upper_vertex_1layer_710.bin", args.e_name)
        self.args.vae_test_dim = 180
        self.vq_model_hands = getattr(vq_model_module, "VQVAEConvZero")(self.args).to(self.rank)
        other_tools.load_checkpoints(self.vq_model_hands, "./datasets/hub/pretrained_vq/hands_vertex_1layer_710.bin", args.e_name)
        self.args.vae_test_dim = 61
        self.args.vae_layer = 4
        self.vq_model_lower = getattr(vq_model_module, "VQVAEConvZero")(self.args).to(self.rank)
        other_tools.load_checkpoints(self.vq_model_lower, "./datasets/hub/pretrained_vq/lower_foot_600.bin", args.e_name)
        self.args.vae_test_dim = 61
        self.args.vae_layer = 4
        self.global_motion = getattr(vq_model_module, "VAEConvZero")(self.args).to(self.rank)
        other_tools.load_checkpoints(self.global_motion, "./datasets/hub/pretrained_vq/last_1700_foot.bin", args.e_name)
        self.args.vae_test_dim = 330
        self.args.vae_layer = 4
        self.args.vae_length = 240

        self.vq_model_face.eval()
        self.vq_model_upper.eval()
        self.vq_model_hands.eval()
        self.vq_model_lower.eval()
        self.global_motion.eval()

        self.cls_loss = nn.NLLLoss().to(self.rank)
        self.reclatent_loss = nn.MSELoss().to(self.rank)
        self.vel_loss = torch.nn.L1Loss(reduction='mean').to(self.rank)
        self.rec_loss = get_loss_func("GeodesicLoss").to(self.rank)
        self.log_softmax = nn.LogSoftmax(dim=2).to(self.rank)

        self.scaler = torch.cuda.amp.GradScaler(enabled=self.args.use_amp)

    def inverse_selection(self, filtered_t, selection_array, n):
        original_shape_t = np.zeros((n, selection_array.size))
        selected_indices = np.where(selection_array == 1)[0]
        for i in range(n):
            original_shape_t[i, selected_indices] = filtered_t[i]
        return original_shape_t

    def _load_data(self, dict_data):
        tar_pose_raw = dict_data["pose"]
        tar_pose = tar_pose_raw[:, :, :165].to(self.rank)
        tar_contact = tar_pose_raw[:, :, 165:169].to(tar_pose.device)
        tar_trans = dict_data["trans"].to(tar_pose.device)
        tar_exps = dict_data["facial"].to(tar_pose.device)
        in_audio = dict_data["audio"].to(tar_pose.device)
        in_word = dict_data["word"].to(tar_pose.device)
        tar_beta = dict_data["beta"].to(tar_pose.device)
        tar_id = dict_data["id"].to(tar_pose.device).long()
        bs, n, j = tar_pose.shape[0], tar_pose.shape[1], self.joints

        tar_pose_jaw = tar_pose[:, :, 66:69]
        tar_pose_jaw = rc.axis_angle_to_matrix(tar_pose_jaw.reshape(bs, n, 1, 3))
        tar_pose_jaw = rc.matrix_to_rotation_6d(tar_pose_jaw).reshape(bs, n, 1 * 6)
        tar_pose_face = torch.cat([tar_pose_jaw, tar_exps], dim=2)

        tar_pose_hands = tar_pose[:, :, 25 * 3:55 * 3]
        tar_pose_hands = rc.axis_angle_to_matrix(tar_pose_hands.reshape(bs, n, 30, 3))
        tar_pose_hands = rc.matrix_to_rotation_6d(tar_pose_hands).reshape(bs, n, 30 * 6)

        tar_pose_upper = tar_pose[:, :, self.joint_mask_upper.astype(bool)]
        tar_pose_upper = rc.axis_angle_to_matrix(tar_pose_upper.reshape(bs, n, 13, 3))
        tar_pose_upper = rc.matrix_to_rotation_6d(tar_pose_upper).reshape(bs, n, 13 * 6)

        tar_pose_leg = tar_pose[:, :, self.joint_mask_lower.astype(bool)]
        tar_pose_leg = rc.axis_angle_to_matrix(tar_pose_leg.reshape(bs, n, 9, 3))
        tar_pose_leg = rc.matrix_to_rotation_6d(tar_pose_leg).reshape(bs, n, 9 * 6)
        tar_pose_lower = torch.cat([tar_pose_leg, tar_trans, tar_contact], dim=2)

        tar_pose_6d = rc.axis_angle_to_matrix(tar_pose.reshape(bs, n, 55, 3))
        tar_pose_6d = rc.matrix_to_rotation_6d(tar_pose_6d).reshape(bs, n, 55 * 6)
        latent_rec = self.vq_model_upper.map2latent(tar_pose_upper)

        tar_index_value_face_top = self.vq_model_face.map2index(tar_pose_face)  # bs*n/4
        tar_index_value_upper_top = self.vq_model_upper.map2index(tar_pose_upper)  # bs*n/4
        tar_index_value_hands_top = self.vq_model_hands.map2index(tar_pose_hands)  # bs*n/4
        tar_index_value_lower_top = self.vq_model_lower.map2index(tar_pose_lower)  # bs*n/4

        latent_face_top = self.vq_model_face.map2latent(tar_pose_face)  # bs*n/4
        latent_upper_top = self.vq_model_upper.map2latent(tar_pose_upper)  # bs*n/4
        latent_hands_top = self.vq_model_hands.map2latent(tar_pose_hands)  # bs*n/4
        latent_lower_top = self.vq_model_lower.map2latent(tar_pose_lower)  # bs*n/4

        latent_in = torch.cat([latent_upper_top, latent_hands_top, latent_lower_top], dim=2)

        index_in = torch.stack([tar_index_value_upper_top, tar_index_value_hands_top, tar_index_value_lower_top], dim=-1).long()

        tar_pose_6d = rc.axis_angle_to_matrix(tar_pose.reshape(bs, n, 55, 3))
        tar_pose_6d = rc.matrix_to_rotation_6d(tar_pose_6d).reshape(bs, n, 55 * 6)
        latent_all = torch.cat([tar_pose_6d, tar_trans, tar_contact], dim=-1)

        style_feature = None
        if self.args.use_motionclip:
            motionclip_feat = tar_pose_6d[..., :22 * 6]
            batch = {}
            bs = motionclip_feat.shape[0]
            batch['x'] = motionclip_feat.permute(0, 2, 1).contiguous()
            batch['y'] = torch.zeros(bs).int().to(self.rank)
            batch['mask'] = torch.ones([bs, n]).bool().to(self.rank)
            style_feature = self.motionclip.encoder(batch)['mu'].detach().float()

        # print(tar_index_value_upper_top.shape, index_in.shape)
        return {
            "tar_pose_jaw": tar_pose_jaw,
            "tar_pose_face": tar_pose_face,
            "tar_pose_upper": tar_pose_upper,
            "tar_pose_lower": tar_pose_lower,
            "tar_pose_hands": tar_pose_hands,
            'tar_pose_leg': tar_pose_leg,
            "in_audio": in_audio,
            "in_word": in_word,
            "tar_trans": tar_trans,
            "tar_exps": tar_exps,
            "tar_beta": tar_beta,
            "tar_pose": tar_pose,
            "tar4dis": torch.cat([tar_pose_jaw, tar_pose_upper, tar_pose_hands, tar_pose_leg], dim=2),
            "tar_index_value_face_top": tar_index_value_face_top,
            "tar_index_value_upper_top": tar_index_value_upper_top,
            "tar_index_value_hands_top": tar_index_value_hands_top,
            "tar_index_value_lower_top": tar_index_value_lower_top,
            "latent_face_top": latent_face_top,
            "latent_upper_top": latent_upper_top,
            "latent_hands_top": latent_hands_top,
            "latent_lower_top": latent_lower_top,
            "latent_in": latent_in,
            "index_in": index_in,
            "tar_id": tar_id,
            "latent_all": latent_all,
            "tar_pose_6d": tar_pose_6d,
            "tar_contact": tar_contact,
            "style_feature": style_feature,
        }

    def _g_training(self, loaded_data, use_adv, mode="train", epoch=0):
        bs, n, j = loaded_data["tar_pose"].shape[0], loaded_data["tar_pose"].shape[1], self.joints
        # ------ full generatation task ------ #
        mask_val = torch.ones(bs, n, self.args.pose_dims + 3 + 4).float().to(self.rank)
        mask_val[:, :self.args.pre_frames, :] = 0.0

        net_out_val = self.model(
            loaded_data['in_audio'], loaded_data['in_word'], mask=mask_val,
            in_id=loaded_data['tar_id'], in_motion=loaded_data['latent_all'],
            use_attentions=True)
        g_loss_final = 0
        _, cls_seed_face = torch.max(F.log_softmax(net_out_val["cls_face"], dim=2), dim=2)
        loss_face = self.reclatent_loss(net_out_val["rec_face"], loaded_data["latent_face_top"])
        self.tracker.update_meter("rec_face", "train", loss_face.item())
        g_loss_final += loss_face

        _, cls_seed_upper = torch.max(F.log_softmax(net_out_val["cls_upper"], dim=2), dim=2)
        _, cls_seed_hands = torch.max(F.log_softmax(net_out_val["cls_hands"], dim=2), dim=2)
        _, cls_seed_lower = torch.max(F.log_softmax(net_out_val["cls_lower"], dim=2), dim=2)

        index_loss_top = self.cls_loss(self.log_softmax(net_out_val["cls_upper"]).reshape(-1, self.args.vae_codebook_size), loaded_data["tar_index_value_upper_top"].reshape(-1))
        index_loss_top += self.cls_loss(self.log_softmax(net_out_val["cls_hands"]).reshape(-1, self.args.vae_codebook_size), loaded_data["tar_index_value_hands_top"].reshape(-1))
        index_loss_top += self.cls_loss(self.log_softmax(net_out_val["cls_lower"]).reshape(-1, self.args.vae_codebook_size), loaded_data["tar_index_value_lower_top"].reshape(-1))
        self.tracker.update_meter("cls_full", "train", index_loss_top.item())
        g_loss_final += index_loss_top * self.args.cls_weight

        latent_loss = self.reclatent_loss(net_out_val["rec_upper"], loaded_data["latent_upper_top"])
        latent_loss += self.reclatent_loss(net_out_val["rec_hands"], loaded_data["latent_hands_top"])
        latent_loss += self.reclatent_loss(net_out_val["rec_lower"], loaded_data["latent_lower_top"])
        self.tracker.update_meter("latent", "train", latent_loss.item())
        g_loss_final += latent_loss * self.args.latent_weight

        if mode == 'train':
            return g_loss_final
        elif mode == 'val':
            return {
                'rec_pose': net_out_val,
                'tar_pose': loaded_data["tar_pose_6d"],
            }

    def train(self, epoch):
        use_adv = bool(epoch >= self.args.no_adv_epoch)
        self.model.train()
        t_start = time.time()
        self.tracker.reset()
        for its, batch_data in enumerate(self.train_loader):
            loaded_data = self._load_data(batch_data)
            t_data = time.time() - t_start

            self.opt.zero_grad()
            g_loss_final = 0
            with torch.cuda.amp.autocast(enabled=self.args.use_amp):
                g_loss_final += self._g_training(loaded_data, use_adv, 'train', epoch)
            self.scaler.scale(g_loss_final).backward()
            if self.args.grad_norm != 0:
                self.scaler.unscale_(self.opt)
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.grad_norm)
            self.scaler.step(self.opt)
            self.scaler.update()

            mem_cost = torch.cuda.memory_cached() / 1E9
            lr_g = self.opt.param_groups[0]['lr']
            t_train = time.time() - t_start - t_data
            t_start = time.time()
            if its % self.args.log_period == 0:
                self.train_recording(epoch, its, t_data, t_train, mem_cost, lr_g)
            if self.args.debug:
                if its == 1: break
        self.opt_s.step(epoch)

    def test(self, epoch):
        results_save_path = self.checkpoint_path + f"/{epoch}/"
        if os.path.exists(results_save_path):
            return 0
        os.makedirs(results_save_path)
        start_time = time.time()
        total_length = 0
        test_seq_list = self.test_data.selected_file
        align = 0
        latent_out = []
        latent_ori = []
        l2_all = 0
        lvel = 0
        self.model.eval()
        self.smplx.eval()
        self.eval_copy.eval()
        with torch.no_grad():
            for its, batch_data in enumerate(self.test_loader):
                loaded_data = self._load_data(batch_data)
                net_out = self._g_test(loaded_data)
                tar_pose = net_out['tar_pose']
                rec_pose = net_out['rec_pose']
                tar_exps = net_out['tar_exps']
                tar_beta = net_out['tar_beta']
                rec_trans = net_out['rec_trans']
                tar_trans = net_out['tar_trans']
                rec_exps = net_out['rec_exps']
                bs, n, j = tar_pose.shape[0], tar_pose.shape[1], self.joints
                if (30 / self.args.pose_fps) != 1:
                    assert 30 % self.args.pose_fps == 0
                    n *= int(30 / self.args.pose_fps)
                    tar_pose = torch.nn.functional.interpolate(tar_pose.permute(0, 2, 1), scale_factor=30 / self.args.pose_fps, mode='linear').permute(0, 2, 1)
                    rec_pose = torch.nn.functional.interpolate(rec_pose.permute(0, 2, 1), scale_factor=30 / self.args.pose_fps, mode='linear').permute(0, 2, 1)

                remain = n % self.args.vae_test_len
                latent_out.append(self.eval_copy.map2latent(rec_pose[:, :n - remain]).reshape(-1, self.args.vae_length).detach().cpu().numpy())  # bs * n/8 * 240
                latent_ori.append(self.eval_copy.map2latent(tar_pose[:, :n - remain]).reshape(-1, self.args.vae_length).detach().cpu().numpy())

                rec_pose = rc.rotation_6d_to_matrix(rec_pose.reshape(bs * n, j, 6))
                rec_pose = rc.matrix_to_axis_angle(rec_pose).reshape(bs * n, j * 3)
                tar_pose = rc.rotation_6d_to_matrix(tar_pose.reshape(bs * n, j, 6))
                tar_pose = rc.matrix_to_axis_angle(tar_pose).reshape(bs * n, j * 3)

                vertices_rec = self.smplx(
                    betas=tar_beta.reshape(bs * n, 300),
                    transl=rec_trans.reshape(bs * n, 3) - rec_trans.reshape(bs * n, 3),
                    expression=tar_exps.reshape(bs * n, 100) - tar_exps.reshape(bs * n, 100),
                    jaw_pose=rec_pose[:, 66:69],
                    global_orient=rec_pose[:, :3],
                    body_pose=rec_pose[:, 3:21 * 3 + 3],
                    left_hand_pose=rec_pose[:, 25 * 3:40 * 3],
                    right_hand_pose=rec_pose[:, 40 * 3:55 * 3],
                    return_joints=True,
                    leye_pose=rec_pose[:, 69:72],
                    reye_pose=rec_pose[:, 72:75],
                )
                joints_rec = vertices_rec["joints"].detach().cpu().numpy().reshape(1, n, 127 * 3)[0, :n, :55 * 3]
                _ = self.l1_calculator.run(joints_rec)
                if self.alignmenter is not None:
                    in_audio_eval, sr = librosa.load(self.args.data_path + "wave16k/" + test_seq_list.iloc[its]['id'] + ".wav")
                    in_audio_eval = librosa.resample(in_audio_eval, orig_sr=sr, target_sr=self.args.audio_sr)
                    a_offset = int(self.align_mask * (self.args.audio_sr / self.args.pose_fps))
                    onset_bt = self.alignmenter.load_audio(in_audio_eval[:int(self.args.audio_sr / self.args.pose_fps * n)], a_offset, len(in_audio_eval) - a_offset, True)
                    beat_vel = self.alignmenter.load_pose(joints_rec, self.align_mask, n - self.align_mask, 30, True)
                    align += (self.alignmenter.calculate_align(onset_bt, beat_vel, 30) * (n - 2 * self.align_mask))
                total_length += n

        logger.info(f"l2 loss: {l2_all / total_length}")
        logger.info(f"lvel loss: {lvel / total_length}")

        latent_out_all = np.concatenate(latent_out, axis=0)
        latent_ori_all = np.concatenate(latent_ori, axis=0)
        fid = data_tools.FIDCalculator.frechet_distance(latent_out_all, latent_ori_all)
        logger.info(f"fid score: {fid}")
        self.test_recording("fid", fid, epoch)

        align_avg = align / (total_length - 2 * len(self.test_loader) * self.align_mask)
        logger.info(f"align score: {align_avg}")
        self.test_recording("bc", align_avg, epoch)

        l1div = self.l1_calculator.avg()
        logger.info(f"l1div score: {l1div}")
        self.test_recording("l1div", l1div, epoch)

        end_time = time.time() - start_time
        logger.info(f"total inference time: {int(end_time)} s for {int(total_length / self.args.pose_fps)} s motion")
