import math
import os
import random

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
import tensorflow as tf

from modelling.S3D import S3D_backbone
from modelling.two_stream import S3D_two_stream_v2
from modelling.Visualhead import VisualHead
from utils.misc import get_logger, neq_load_customized
from modelling.Tokenizer import GlossTokenizer_S2G


def gen_gaussian_hmap_op(coords, raw_size=(260, 210), map_size=None, sigma=1, confidence=False, threshold=0, **kwargs):
    # openpose / hrnet keypoints -> gaussian heatmaps, computed on the GPU in chunks
    # coords: T,N,3 (x, y, score)
    T, hmap_num = coords.shape[:2]
    raw_h, raw_w = raw_size  # 260,210
    if map_size == None:
        map_h, map_w = raw_h, raw_w
        factor_h, factor_w = 1, 1
    else:
        map_h, map_w = map_size
        factor_h, factor_w = map_h / raw_h, map_w / raw_w
    # generate 2d coords
    # NOTE: openpose generate opencv-style coordinates!
    coords_y = coords[..., 1] * factor_h
    coords_x = coords[..., 0] * factor_w
    confs = coords[..., 2]  # T, N

    y, x = torch.meshgrid(torch.arange(map_h), torch.arange(map_w))
    coords = torch.stack([coords_y, coords_x], dim=0)
    grid = torch.stack([y, x], dim=0).cuda()  # [2,H,W]
    grid = grid.unsqueeze(0).unsqueeze(0).expand(T, hmap_num, -1, -1, -1)  # [T,N,2,H,W]
    coords = coords.unsqueeze(0).unsqueeze(0).expand(map_h, map_w, -1, -1, -1).permute(3, 4, 2, 0, 1)  # [T,N,2,H,W]
    hmap = torch.exp(-((grid - coords) ** 2).sum(dim=2) / (2 * sigma ** 2))  # [T,N,H,W]

    if confidence:
        confs = confs.unsqueeze(-1).unsqueeze(-1)  # T,N,1,1
        hmap = hmap * confs

    confs = confs.squeeze(-1).squeeze(-1) if confidence else confs
    confs = (confs <= threshold).float().unsqueeze(-1).unsqueeze(-1)
    hmap = hmap * (1 - confs)
    return hmap


def ctc_decode_func(tf_gloss_logits, input_lengths, beam_size):
    ctc_decode, _ = tf.nn.ctc_beam_search_decoder(
        inputs=tf_gloss_logits,
        sequence_length=input_lengths.cpu().detach().numpy(),
        beam_width=beam_size,
        top_paths=1,
    )
    ctc_decode = ctc_decode[0]
    # Create a decoded gloss list for each sample
    tmp_gloss_sequences = [[] for i in range(input_lengths.shape[0])]
    for (value_idx, dense_idx) in enumerate(ctc_decode.indices):
        tmp_gloss_sequences[dense_idx[0]].append(
            ctc_decode.values[value_idx].numpy() + 1
        )
    decoded_gloss_sequences = []
    for seq_idx in range(0, len(tmp_gloss_sequences)):
        decoded_gloss_sequences.append(
            [x[0] for x in groupby(tmp_gloss_sequences[seq_idx])]
        )
    return decoded_gloss_sequences


def groupby(seq):
    # itertools.groupby clone kept local to avoid an import cycle in older code
    import itertools
    return itertools.groupby(seq)


class RecognitionNetwork(torch.nn.Module):
    def __init__(self, cfg, input_type, transform_cfg,
                 input_streams=['rgb']):
        super().__init__()
        logger = get_logger()
        self.cfg = cfg
        self.input_type = input_type
        self.gloss_tokenizer = GlossTokenizer_S2G(cfg['GlossTokenizer'])
        self.input_streams = input_streams
        self.fuse_method = cfg.get('fuse_method', 'empty')
        self.heatmap_cfg = cfg.get('heatmap_cfg', {})
        self.transform_cfg = transform_cfg
        self.preprocess_chunksize = self.heatmap_cfg.get('preprocess_chunksize', 16)

        if self.input_type == 'video':
            if 'rgb' in input_streams and not 'keypoint' in input_streams:
                self.visual_backbone = S3D_backbone(in_channel=3, **cfg['s3d'])
            elif 'keypoint' in input_streams and not 'rgb' in input_streams:
                self.visual_backbone_keypoint = S3D_backbone(**cfg['keypoint_s3d'])
            elif 'rgb' in input_streams and 'keypoint' in input_streams:
                self.visual_backbone_twostream = S3D_two_stream_v2(
                    use_block=cfg['s3d']['use_block'],
                    freeze_block=(cfg['s3d']['freeze_block'], cfg['keypoint_s3d']['freeze_block']),
                    pose_inchannels=cfg['keypoint_s3d']['in_channel'],
                    flag_lateral=(cfg['lateral'].get('pose2rgb', True), cfg['lateral'].get('rgb2pose', True)),
                    lateral_variant=(cfg['lateral'].get('variant_pose2rgb', None), cfg['lateral'].get('variant_rgb2pose', None)),
                    lateral_ksize=tuple(cfg['lateral'].get('kernel_size', (1, 3, 3))),
                    lateral_ratio=tuple(cfg['lateral'].get('ratio', (1, 2, 2))),
                    lateral_interpolate=cfg['lateral'].get('interpolate', False),
                    cfg_pyramid=cfg['pyramid'],
                    fusion_features=cfg['lateral'].get('fusion_features', ['c1', 'c2', 'c3'])
                )
            else:
                raise ValueError
        else:
            self.visual_backbone = None

        if 'visual_head' in cfg:
            if 'rgb' in input_streams:
                self.visual_head = VisualHead(cls_num=len(self.gloss_tokenizer), **cfg['visual_head'])
            else:
                self.visual_head = None
            if 'keypoint' in input_streams:
                self.visual_head_keypoint = VisualHead(cls_num=len(self.gloss_tokenizer), **cfg['visual_head'])
            else:
                self.visual_head_keypoint = None
            if 'rgb' in input_streams and 'keypoint' in input_streams:
                self.visual_head_fuse = VisualHead(cls_num=len(self.gloss_tokenizer), **cfg['visual_head'])

        if 'pretrained_path' in cfg:
            load_dict = torch.load(cfg['pretrained_path'], map_location='cpu')['model_state']
            new_load_dict = {}
            for k, v in load_dict.items():
                if 'recognition_network' in k:
                    new_load_dict[k.replace('recognition_network.', '')] = v
            neq_load_customized(self, new_load_dict, verbose=True)
            logger.info('Load Visual Backbone and Visual Head from pretrained ckpt {}'.format(cfg['pretrained_path']))

        self.recognition_loss_func = torch.nn.CTCLoss(
            blank=self.gloss_tokenizer.silence_id, zero_infinity=True,
            reduction='sum'
        )

    def compute_recognition_loss(self, gloss_labels, gloss_lengths, gloss_probabilities_log, input_lengths):
        loss = self.recognition_loss_func(
            log_probs=gloss_probabilities_log.permute(1, 0, 2),  # T,N,C
            targets=gloss_labels,
            input_lengths=input_lengths,
            target_lengths=gloss_lengths
        )
        loss = loss / gloss_probabilities_log.shape[0]
        return loss

    def decode(self, gloss_logits, beam_size, input_lengths):
        gloss_logits = gloss_logits.permute(1, 0, 2)  # T,B,V
        gloss_logits = gloss_logits.cpu().detach().numpy()
        tf_gloss_logits = np.concatenate(
            (gloss_logits[:, :, 1:], gloss_logits[:, :, 0, None]),
            axis=-1,
        )
        decoded_gloss_sequences = ctc_decode_func(
            tf_gloss_logits=tf_gloss_logits,
            input_lengths=input_lengths,
            beam_size=beam_size
        )
        return decoded_gloss_sequences

    def generate_batch_heatmap(self, keypoints, heatmap_cfg):
        # self.generate_batch_heatmap(keypoints) #B,T,N,3
        B, T, N, D = keypoints.shape
        keypoints = keypoints.reshape(-1, N, D)
        chunk_size = int(math.ceil((B * T) / self.preprocess_chunksize))
        chunk_num = int(math.ceil((B * T) / chunk_size))
        hms = []
        for i in range(chunk_num):
            hm = gen_gaussian_hmap_op(
                coords=keypoints[i * chunk_size:(i + 1) * chunk_size],
                **heatmap_cfg)  # sigma, confidence, threshold) #B*T,N,H,W
            N, H, W = hm.shape[-3:]
            hms.append(hm)
        hm = torch.cat(hms, dim=0)
        hm = hm.reshape(B, T, N, H, W)
        return hm

    def apply_spatial_ops(self, x, spatial_ops_func):
        B, T, C_, H, W = x.shape
        x = x.view(-1, C_, H, W)
        chunks = torch.split(x, self.preprocess_chunksize, dim=0)
        transformed_x = []
        for chunk in chunks:
            transformed_x.append(spatial_ops_func(chunk))
        _, C_, H_o, W_o = transformed_x[-1].shape
        transformed_x = torch.cat(transformed_x, dim=0)
        transformed_x = transformed_x.view(B, T, C_, H_o, W_o)
        return transformed_x

    def augment_preprocess_inputs(self, is_train, sgn_videos=None, sgn_heatmaps=None):
        rgb_h, rgb_w = self.transform_cfg.get('img_size', 224), self.transform_cfg.get('img_size', 224)
        if sgn_heatmaps != None:
            hm_h, hm_w = self.heatmap_cfg['input_size'], self.heatmap_cfg['input_size']
            # factor_h, factor_w= hm_h/rgb_h, hm_w/rgb_w ！！
            if sgn_videos != None:
                rgb_h0, rgb_w0 = sgn_videos.shape[-2], sgn_videos.shape[-1]  # B,T,C,H,W
                hm_h0, hm_w0 = sgn_heatmaps.shape[-2], sgn_heatmaps.shape[-1]  # B,T,C,H,W
                factor_h, factor_w = hm_h0 / rgb_h0, hm_w0 / rgb_w0  # ！！
        if is_train:
            if sgn_videos != None:
                if self.transform_cfg.get('color_jitter', False) and random.random() < 0.3:
                    color_jitter_op = ColorJitter(0.4, 0.4, 0.4, 0.1)
                    sgn_videos = color_jitter_op(sgn_videos)  # B T C H W
                i, j, h, w = RandomResizedCrop.get_params(
                    img=sgn_videos,
                    scale=(self.transform_cfg.get('bottom_area', 0.2), 1.0),
                    ratio=(self.transform_cfg.get('aspect_ratio_min', 3. / 4),
                           self.transform_cfg.get('aspect_ratio_max', 4. / 3)))
                sgn_videos = self.apply_spatial_ops(
                    sgn_videos,
                    spatial_ops_func=lambda x: F.interpolate(
                        x[:, :, i:i + h, j:j + w], size=(rgb_h, rgb_w), mode='bilinear', align_corners=False))
            if sgn_heatmaps != None:
                sgn_heatmaps = self.apply_spatial_ops(
                    sgn_heatmaps,
                    spatial_ops_func=lambda x: F.interpolate(x, size=(hm_h, hm_w), mode='bilinear', align_corners=False))
        else:
            if sgn_videos != None:
                sgn_videos = self.apply_spatial_ops(
                    sgn_videos,
                    spatial_ops_func=lambda x: F.interpolate(x, size=(rgb_h, rgb_w), mode='bilinear', align_corners=False))
            if sgn_heatmaps != None:
                sgn_heatmaps = self.apply_spatial_ops(
                    sgn_heatmaps,
                    spatial_ops_func=lambda x: F.interpolate(x, size=(hm_h, hm_w), mode='bilinear', align_corners=False))

        if sgn_videos != None:
            # convert to BCTHW
            sgn_videos = sgn_videos.permute(0, 2, 1, 3, 4).float()
            sgn_videos = sgn_videos[:, [2, 1, 0], :, :, :]  # B T C H W
            sgn_videos = (sgn_videos - 0.5) / 0.5
            sgn_videos = sgn_videos.permute(0, 2, 1, 3, 4).float()
        if sgn_heatmaps != None:
            sgn_heatmaps = sgn_heatmaps.permute(0, 2, 1, 3, 4).float()
        return sgn_videos, sgn_heatmaps

    def forward(self, is_train, labels, sgn_videos=None, sgn_keypoints=None, epoch=0, **kwargs):
        s3d_outputs = []
        # Preprocess (Move from data loader)
        with torch.no_grad():
            # 1. generate heatmaps
            if 'keypoint' in self.input_streams:
                assert sgn_keypoints != None
                sgn_heatmaps = self.generate_batch_heatmap(
                    sgn_keypoints, self.heatmap_cfg)  # B,T,N,H,W or B,N,H,W
            else:
                sgn_heatmaps = None

            if not 'rgb' in self.input_streams:
                sgn_videos = None
            # 2. augmentation and permute(colorjitter, randomresizedcrop/centercrop+resize, normalize-0.5~0.5, channelswap for RGB)
            sgn_videos, sgn_heatmaps = self.augment_preprocess_inputs(is_train=is_train, sgn_videos=sgn_videos, sgn_heatmaps=sgn_heatmaps)

        if self.input_type == 'video':
            if 'rgb' in self.input_streams and not 'keypoint' in self.input_streams:
                s3d_outputs = self.visual_backbone(sgn_videos=sgn_videos, sgn_lengths=kwargs['sgn_lengths'])
            elif 'keypoint' in self.input_streams and not 'rgb' in self.input_streams:
                s3d_outputs = self.visual_backbone_keypoint(sgn_videos=sgn_heatmaps, sgn_lengths=kwargs['sgn_lengths'])
            elif 'rgb' in self.input_streams and 'keypoint' in self.input_streams:
                s3d_outputs = self.visual_backbone_twostream(x_rgb=sgn_videos, x_pose=sgn_heatmaps, sgn_lengths=kwargs['sgn_lengths'])
            else:
                raise ValueError
            input_lengths = s3d_outputs['valid_len_out']
            sgn_mask = s3d_outputs['sgn_mask']
        else:
            raise ValueError

        outputs = {}
        if 'rgb' in self.input_streams:
            head_outputs = self.visual_head(
                x=s3d_outputs['sgn'],
                mask=sgn_mask[-1],
                valid_len_in=input_lengths)
            outputs = {**head_outputs, 'input_lengths': input_lengths}
        if 'keypoint' in self.input_streams and 'rgb' in self.input_streams:
            head_outputs_fuse = self.visual_head_fuse(
                x=s3d_outputs['fuse_sgn'], mask=sgn_mask[-1], valid_len_in=input_lengths)
            outputs['fuse_gloss_logits'] = head_outputs_fuse['gloss_logits']
            outputs['fuse_gloss_probabilities_log'] = head_outputs_fuse['gloss_probabilities_log']
            outputs['ensemble_last_gloss_logits'] = (head_outputs_fuse['gloss_probabilities'] + outputs['gloss_probabilities']).log()

        if is_train:
            outputs['recognition_loss'] = self.compute_recognition_loss(
                gloss_labels=labels['gloss_labels'],
                gloss_lengths=labels['gls_lengths'],
                gloss_probabilities_log=outputs['gloss_probabilities_log'],
                input_lengths=input_lengths
            )
        else:
            outputs['recognition_loss'] = torch.tensor(0.0, device=input_lengths.device)
        outputs['total_loss'] = outputs['recognition_loss']
        return outputs


class ColorJitter(object):
    """Batched colour jitter done on the GPU (the loader only decodes and resizes)."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        self.brightness = brightness
        self.contrast = contrast
        self.saturation = saturation
        self.hue = hue

    def __call__(self, x):
        # x: B,T,C,H,W in [0,1]
        B = x.shape[0]
        b = torch.empty(B, 1, 1, 1, 1, device=x.device).uniform_(1 - self.brightness, 1 + self.brightness)
        c = torch.empty(B, 1, 1, 1, 1, device=x.device).uniform_(1 - self.contrast, 1 + self.contrast)
        x = (x * b).clamp(0, 1)
        mean = x.mean(dim=(2, 3, 4), keepdim=True)
        x = ((x - mean) * c + mean).clamp(0, 1)
        return x


class RandomResizedCrop(object):
    @staticmethod
    def get_params(img, scale, ratio):
        height, width = img.shape[-2:]
        area = height * width
        for _ in range(10):
            target_area = area * torch.empty(1).uniform_(scale[0], scale[1]).item()
            log_ratio = torch.log(torch.tensor(ratio))
            aspect_ratio = torch.exp(torch.empty(1).uniform_(log_ratio[0], log_ratio[1])).item()
            w = int(round(math.sqrt(target_area * aspect_ratio)))
            h = int(round(math.sqrt(target_area / aspect_ratio)))
            if 0 < w <= width and 0 < h <= height:
                i = torch.randint(0, height - h + 1, size=(1,)).item()
                j = torch.randint(0, width - w + 1, size=(1,)).item()
                return i, j, h, w
        # fallback to central crop
        return 0, 0, height, width
