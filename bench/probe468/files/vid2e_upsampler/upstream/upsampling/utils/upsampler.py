import os
import shutil
from typing import List

import cv2
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm

from .const import mean, std, img_formats
from .dataset import Sequence
from .model import UNet, backWarp
from .utils import get_sequence_or_none


class Interpolator:
    """Super-SloMo based frame interpolation (Jiang et al., CVPR 2018).

    Given two frames I0, I1 it predicts bidirectional flows, warps both frames to an
    intermediate time t and blends them with the predicted visibility maps.
    """

    def __init__(self, checkpoint: str, device: torch.device, dim: tuple):
        self.device = device
        self.flow_comp = UNet(6, 4).to(device)
        self.arb_time_flow_intrp = UNet(20, 5).to(device)
        for p in self.flow_comp.parameters():
            p.requires_grad = False
        for p in self.arb_time_flow_intrp.parameters():
            p.requires_grad = False

        state = torch.load(checkpoint, map_location=device)
        self.flow_comp.load_state_dict(state['state_dictFC'])
        self.arb_time_flow_intrp.load_state_dict(state['state_dictAT'])
        self.flow_comp.eval()
        self.arb_time_flow_intrp.eval()

        self.width, self.height = dim
        self.flow_back_warp = backWarp(self.width, self.height, device).to(device)

        self.mean = torch.tensor(mean, device=device).view(1, 3, 1, 1)
        self.std = torch.tensor(std, device=device).view(1, 3, 1, 1)

    def _normalize(self, img):
        return (img - self.mean) / self.std

    def _denormalize(self, img):
        return img * self.std + self.mean

    @torch.no_grad()
    def interpolate(self, I0: torch.Tensor, I1: torch.Tensor, num_intermediate: int) -> List[torch.Tensor]:
        I0 = self._normalize(I0)
        I1 = self._normalize(I1)

        flow_out = self.flow_comp(torch.cat((I0, I1), dim=1))
        F_0_1 = flow_out[:, :2, :, :]
        F_1_0 = flow_out[:, 2:, :, :]

        frames = []
        for i in range(1, num_intermediate + 1):
            t = float(i) / (num_intermediate + 1)
            temp = -t * (1 - t)
            fCoeff = [temp, t * t, (1 - t) * (1 - t), temp]

            F_t_0 = fCoeff[0] * F_0_1 + fCoeff[1] * F_1_0
            F_t_1 = fCoeff[2] * F_0_1 + fCoeff[3] * F_1_0

            g_I0_F_t_0 = self.flow_back_warp(I0, F_t_0)
            g_I1_F_t_1 = self.flow_back_warp(I1, F_t_1)

            intrp_out = self.arb_time_flow_intrp(
                torch.cat((I0, I1, F_0_1, F_1_0, F_t_1, F_t_0, g_I1_F_t_1, g_I0_F_t_0), dim=1))

            F_t_0_f = intrp_out[:, :2, :, :] + F_t_0
            F_t_1_f = intrp_out[:, 2:4, :, :] + F_t_1
            V_t_0 = torch.sigmoid(intrp_out[:, 4:5, :, :])
            V_t_1 = 1 - V_t_0

            g_I0_F_t_0_f = self.flow_back_warp(I0, F_t_0_f)
            g_I1_F_t_1_f = self.flow_back_warp(I1, F_t_1_f)

            wCoeff = [1 - t, t]
            Ft_p = (wCoeff[0] * V_t_0 * g_I0_F_t_0_f + wCoeff[1] * V_t_1 * g_I1_F_t_1_f) / \
                   (wCoeff[0] * V_t_0 + wCoeff[1] * V_t_1)
            frames.append(self._denormalize(Ft_p).clamp(0, 1))
        return frames


class Upsampler:
    _timestamps_filename = 'timestamps.txt'

    def __init__(self, input_dir: str, output_dir: str, checkpoint: str = 'checkpoints/SuperSloMo.ckpt',
                 device: str = 'cuda:0', num_intermediate: int = 7):
        assert os.path.isdir(input_dir), 'The input directory must exist'
        assert not os.path.exists(output_dir), 'The output directory must not exist'

        self._prepare_output_dir(input_dir, output_dir)
        self.src_dir = input_dir
        self.dest_dir = output_dir
        self.num_intermediate = num_intermediate
        self.checkpoint = checkpoint

        self.device = torch.device(device if torch.cuda.is_available() else 'cpu')
        if self.device.type == 'cpu':
            print('WARNING: no GPU found, upsampling will be very slow')

    def _prepare_output_dir(self, src_dir: str, dest_dir: str):
        # Copy directory structure.
        def ignore_files(directory, files):
            return [f for f in files if os.path.isfile(os.path.join(directory, f))]
        shutil.copytree(src_dir, dest_dir, ignore=ignore_files)

    def _to_tensor(self, img: np.ndarray) -> torch.Tensor:
        img = torch.from_numpy(img[..., ::-1].copy()).permute(2, 0, 1).float() / 255.
        return img[None].to(self.device)

    def _to_numpy(self, img: torch.Tensor) -> np.ndarray:
        img = (img[0].permute(1, 2, 0).cpu().numpy() * 255.).round().astype(np.uint8)
        return img[..., ::-1]

    def upsample(self):
        sequence_counter = 0
        for src_absdirpath, dirnames, filenames in os.walk(self.src_dir):
            sequence = get_sequence_or_none(src_absdirpath)
            if sequence is None:
                continue
            sequence_counter += 1
            print('Processing sequence number {}'.format(sequence_counter))
            reldirpath = os.path.relpath(src_absdirpath, self.src_dir)
            dest_imgs_dir = os.path.join(self.dest_dir, reldirpath, 'imgs')
            dest_timestamps_filepath = os.path.join(self.dest_dir, reldirpath, self._timestamps_filename)
            self.upsample_sequence(sequence, dest_imgs_dir, dest_timestamps_filepath)

    def upsample_sequence(self, sequence: Sequence, dest_imgs_dir: str, dest_timestamps_filepath: str):
        os.makedirs(dest_imgs_dir, exist_ok=True)
        timestamps_list = list()

        interpolator = Interpolator(self.checkpoint, self.device, sequence.dims())

        idx = 0
        for img_pair, time_pair in tqdm(iter(sequence), total=len(sequence), desc=type(sequence).__name__):
            I0 = self._to_tensor(img_pair[0])
            I1 = self._to_tensor(img_pair[1])
            t0, t1 = time_pair

            frames = [I0] + interpolator.interpolate(I0, I1, self.num_intermediate)
            dt = (t1 - t0) / (self.num_intermediate + 1)
            for k, frame in enumerate(frames):
                img = self._to_numpy(frame)
                cv2.imwrite(os.path.join(dest_imgs_dir, '{:08d}.png'.format(idx)), img)
                timestamps_list.append(t0 + k * dt)
                idx += 1

        # write the last frame
        last = sequence.last_frame()
        if last is not None:
            cv2.imwrite(os.path.join(dest_imgs_dir, '{:08d}.png'.format(idx)), last[0])
            timestamps_list.append(last[1])

        self._write_timestamps(timestamps_list, dest_timestamps_filepath)

    @staticmethod
    def _write_timestamps(timestamps: list, timestamps_filename: str) -> None:
        with open(timestamps_filename, 'w') as t_file:
            t_file.writelines([str(t) + '\n' for t in timestamps])
