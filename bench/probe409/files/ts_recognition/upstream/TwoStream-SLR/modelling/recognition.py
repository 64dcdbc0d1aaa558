import torch
import torch.nn as nn
import torch.nn.functional as F
import math
import random
import numpy as np
import tensorflow as tf
from itertools import groupby
from modelling.S3D import S3D_backbone
from modelling.two_stream import S3D_two_stream_v2
from modelling.fusion import Lateral_Conn
from modelling.Visualhead import VisualHead
from utils.misc import get_logger, neq_load_customized
from utils.gen_gaussian import gen_gaussian_hmap_op
from utils.loss import LabelSmoothCE
from modelling.Tokenizer import GlossTokenizer_S2G


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
        cfg['pyramid'] = cfg.get('pyramid', {'version': None, 'rgb': None, 'pose': None})
        if self.input_type == 'video':
            if 'rgb' in input_streams and not 'keypoint' in input_streams:
                if 's3d' in cfg:
                    self.visual_backbone = S3D_backbone(in_channel=3, **cfg['s3d'], cfg_pyramid=cfg['pyramid'])
                else:
                    raise ValueError
                self.visual_backbone_keypoint, self.visual_backbone_twostream = None, None
            elif 'keypoint' in input_streams and not 'rgb' in input_streams:
                if 'keypoint_s3d' in cfg:
                    self.visual_backbone_keypoint = S3D_backbone(**cfg['keypoint_s3d'], cfg_pyramid=cfg['pyramid'])
                self.visual_backbone, self.visual_backbone_twostream = None, None
            elif 'rgb' in input_streams and 'keypoint' in input_streams:
                self.visual_backbone_twostream = S3D_two_stream_v2(
                    use_block=cfg['s3d']['use_block'],
                    freeze_block=(cfg['s3d']['freeze_block'], cfg['keypoint_s3d']['freeze_block']),
                    pose_inchannels=cfg['keypoint_s3d']['in_channel'],
                    flag_lateral=(cfg['lateral'].get('pose2rgb', False), cfg['lateral'].get('rgb2pose', False)),
                    lateral_variant=(cfg['lateral'].get('variant_pose2rgb', None), cfg['lateral'].get('variant_rgb2pose', None)),
                    lateral_ksize=tuple(cfg['lateral'].get('kernel_size', (1, 3, 3))),
                    cfg_pyramid=cfg['pyramid'],
                    fusion_features=cfg['lateral'].get('fusion_features', ['c1', 'c2', 'c3'])
                )
                self.visual_backbone, self.visual_backbone_keypoint = None, None
            else:
                raise ValueError
        if 'visual_head' in cfg:
            if 'rgb' in input_streams:
                self.visual_head = VisualHead(cls_num=len(self.gloss_tokenizer), **cfg['visual_head'])
            else:
                self.visual_head = None
            if 'keypoint' in input_streams:
                self.visual_head_keypoint = VisualHead(cls_num=len(self.gloss_tokenizer), **cfg['visual_head'])
            else:
                self.visual_head_keypoint = None
            if 'doublehead_fuse' == self.fuse_method:
                self.visual_head_fuse = VisualHead(cls_num=len(self.gloss_tokenizer), **cfg['visual_head'])
            else:
                self.visual_head_fuse = None
        # NOTE: S3D backbones load their Kinetics-400 weights themselves (see modelling/S3D.py)
        if cfg['pyramid']['rgb'] == 'multi_head':
            self.fc_layers_rgb = nn.ModuleList()
            for i in range(len(cfg['s3d']['use_block']) - 1):
                self.fc_layers_rgb.append(VisualHead(cls_num=len(self.gloss_tokenizer),
                                                     input_size=[832, 480, 192][i], **cfg['visual_head']))
        self.recognition_loss_func = torch.nn.CTCLoss(
            blank=self.gloss_tokenizer.silence_id, zero_infinity=True,
            reduction='sum'
        )

    def compute_recognition_loss(self, gloss_labels, gloss_lengths, gloss_probabilities_log, input_lengths):
        # cudnn's CTC is non-deterministic and needs int32 cpu targets; force the native kernel
        with torch.backends.cudnn.flags(enabled=False):
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

    def generate_batch_heatmap(self, keypoints):
        # self.map_size
        B, T, N, D = keypoints.shape
        keypoints = keypoints.reshape(-1, N, D)
        chunk_size = int(math.ceil((B * T) / self.preprocess_chunksize))
        chunks = torch.split(keypoints, chunk_size, dim=0)
        heatmaps = []
        for chunk in chunks:
            hm = gen_gaussian_hmap_op(
                coords=chunk,
                **self.heatmap_cfg)  # sigma, confidence, threshold) #B*T,N,H,W
            N, H, W = hm.shape[-3:]
            heatmaps.append(hm)
        heatmaps = torch.cat(heatmaps, dim=0)  # B*T, N, H, W
        return heatmaps.reshape(B, T, N, H, W)

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
                        x[:, :, i:i + h, j:j + w], size=(rgb_h, rgb_w),
                        mode='bilinear', align_corners=False))
            if sgn_heatmaps != None:
                sgn_heatmaps = self.apply_spatial_ops(
                    sgn_heatmaps,
                    spatial_ops_func=lambda x: F.interpolate(
                        x, size=(hm_h, hm_w), mode='bilinear', align_corners=False))
        else:
            if sgn_videos != None:
                sgn_videos = self.apply_spatial_ops(
                    sgn_videos,
                    spatial_ops_func=lambda x: F.interpolate(
                        x, size=(rgb_h, rgb_w), mode='bilinear', align_corners=False))
            if sgn_heatmaps != None:
                sgn_heatmaps = self.apply_spatial_ops(
                    sgn_heatmaps,
                    spatial_ops_func=lambda x: F.interpolate(
                        x, size=(hm_h, hm_w), mode='bilinear', align_corners=False))
        if sgn_videos != None:
            # convert to BGR for S3D
            if 's3d' in self.cfg and self.cfg['s3d'].get('use_block', 4) == 4:
                sgn_videos = sgn_videos[:, :, [2, 1, 0], :, :]  # B T 3 H W
            sgn_videos = sgn_videos.float()
            sgn_videos = (sgn_videos - 0.5) / 0.5
            sgn_videos = sgn_videos.permute(0, 2, 1, 3, 4).float()  # B C T H W
        if sgn_heatmaps != None:
            sgn_heatmaps = (sgn_heatmaps - 0.5) / 0.5
            sgn_heatmaps = sgn_heatmaps.permute(0, 2, 1, 3, 4).float()
        return sgn_videos, sgn_heatmaps

    def forward(self, is_train, labels, sgn_videos=None, sgn_keypoints=None, sgn_lengths=None,
                selected_indexs=None, gls_lengths=None):
        if self.input_type == 'video':
            s3d_outputs = []
            # Preprocess (Move from data loader)
            with torch.no_grad():
                # 1. generate heatmaps
                if 'keypoint' in self.input_streams:
                    assert sgn_keypoints != None
                    sgn_heatmaps = self.generate_batch_heatmap(sgn_keypoints)  # B,T,N,H,W or B,N,H,W
                else:
                    sgn_heatmaps = None
                if not 'rgb' in self.input_streams:
                    sgn_videos = None
                # 2. augmentation and permute(colorjitter, randomresizedcrop/centercrop+resize, normalize-0.5~0.5, channelswap for RGB)
                sgn_videos, sgn_heatmaps = self.augment_preprocess_inputs(is_train, sgn_videos, sgn_heatmaps)

            if self.visual_backbone_twostream != None:
                s3d_outputs = self.visual_backbone_twostream(x_rgb=sgn_videos, x_pose=sgn_heatmaps, sgn_lengths=sgn_lengths)
            elif self.visual_backbone != None:
                s3d_outputs = self.visual_backbone(sgn_videos=sgn_videos, sgn_lengths=sgn_lengths)
            else:
                s3d_outputs = self.visual_backbone_keypoint(sgn_videos=sgn_heatmaps, sgn_lengths=sgn_lengths)

            if self.fuse_method == 'empty':
                assert len(self.input_streams) == 1, self.input_streams
                assert self.cfg['pyramid']['rgb'] == None
                if 'rgb' in self.input_streams:
                    head_outputs = self.visual_head(
                        x=s3d_outputs['sgn_feature'],
                        mask=s3d_outputs['sgn_mask'][-1],
                        valid_len_in=s3d_outputs['valid_len_out'][-1])
                elif 'keypoint' in self.input_streams:
                    head_outputs = self.visual_head_keypoint(
                        x=s3d_outputs['sgn_feature'],
                        mask=s3d_outputs['sgn_mask'][-1],
                        valid_len_in=s3d_outputs['valid_len_out'][-1])
                else:
                    raise ValueError
                head_outputs['ensemble_last_gloss_logits'] = head_outputs['gloss_probabilities'].log()
            else:
                raise ValueError('fuse_method {} is handled in the two-stream head'.format(self.fuse_method))

            outputs = {**head_outputs,
                       'input_lengths': head_outputs['valid_len_out']}

        if self.input_type == 'feature':
            raise NotImplementedError
        outputs['recognition_loss'] = self.compute_recognition_loss(
            gloss_labels=labels,
            gloss_lengths=gls_lengths,
            gloss_probabilities_log=head_outputs['gloss_probabilities_log'],
            input_lengths=outputs['input_lengths'])
        outputs['total_loss'] = outputs['recognition_loss']
        return outputs


from torchvision.transforms import ColorJitter, RandomResizedCrop  # noqa: E402
