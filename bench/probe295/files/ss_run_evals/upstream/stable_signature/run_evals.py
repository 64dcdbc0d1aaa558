# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.

# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.

import argparse
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from PIL import Image
from torchvision import transforms
from torchvision.transforms import functional
from torchvision.utils import save_image
from tqdm import tqdm

import utils
import utils_img

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def get_parser():
    parser = argparse.ArgumentParser()

    def aa(*args, **kwargs):
        group.add_argument(*args, **kwargs)

    group = parser.add_argument_group('Data parameters')
    aa("--img_dir", type=str, default="", help="Directory of the watermarked images to evaluate")
    aa("--img_dir_nw", type=str, default=None, help="Directory of the non-watermarked images (for image metrics)")
    aa("--img_dir_fid", type=str, default=None, help="Directory of the reference images (for FID)")
    aa("--output_dir", type=str, default="output/", help="Output directory for logs and images (Default: /output)")
    aa("--save_n_imgs", type=int, default=10)

    group = parser.add_argument_group('Eval type')
    aa("--eval_imgs", type=utils.bool_inst, default=True, help="Compute PSNR/SSIM/FID (Default: True)")
    aa("--eval_bits", type=utils.bool_inst, default=True, help="Decode the watermark and compute bit accuracy (Default: True)")

    group = parser.add_argument_group('Watermark parameters')
    aa("--msg_decoder_path", type=str, default="models/dec_48b_whit.torchscript.pt")
    aa("--key_str", type=str, default="111010110101000001010111010011010100010000100111")
    aa("--attack_mode", type=str, default="all", help="none | few | all")
    aa("--decode_bs", type=int, default=64)
    aa("--half", type=utils.bool_inst, default=False, help="Run the decoder under fp16 autocast")

    group = parser.add_argument_group('Distributed training parameters')
    aa('--num_workers', type=int, default=8)

    return parser


def get_attacks(mode):
    if mode == 'none':
        return {'none': lambda x: x}
    attacks = {
        'none': lambda x: x,
        'crop_05': lambda x: utils_img.center_crop(x, 0.5),
        'crop_01': lambda x: utils_img.center_crop(x, 0.1),
        'rot_25': lambda x: utils_img.rotate(x, 25),
        'rot_90': lambda x: utils_img.rotate(x, 90),
        'jpeg_80': lambda x: utils_img.jpeg_compress(x, 80),
        'jpeg_50': lambda x: utils_img.jpeg_compress(x, 50),
        'brightness_1p5': lambda x: utils_img.adjust_brightness(x, 1.5),
        'brightness_2': lambda x: utils_img.adjust_brightness(x, 2),
        'contrast_1p5': lambda x: utils_img.adjust_contrast(x, 1.5),
        'contrast_2': lambda x: utils_img.adjust_contrast(x, 2),
        'saturation_1p5': lambda x: utils_img.adjust_saturation(x, 1.5),
        'saturation_2': lambda x: utils_img.adjust_saturation(x, 2),
        'sharpness_1p5': lambda x: utils_img.adjust_sharpness(x, 1.5),
        'sharpness_2': lambda x: utils_img.adjust_sharpness(x, 2),
        'resize_05': lambda x: utils_img.resize(x, 0.5),
        'resize_01': lambda x: utils_img.resize(x, 0.1),
        'overlay_text': lambda x: utils_img.overlay_text(x, [76, 111, 114, 101, 109, 32, 73, 112, 115, 117, 109]),
        'comb': lambda x: utils_img.jpeg_compress(utils_img.adjust_brightness(utils_img.center_crop(x, 0.5), 1.5), 80),
    }
    if mode == 'few':
        keep = ['none', 'crop_01', 'jpeg_50', 'brightness_2', 'resize_01', 'comb']
        attacks = {k: v for k, v in attacks.items() if k in keep}
    return attacks


@torch.no_grad()
def get_bit_accs(img_dir: str, msg_decoder: torch.nn.Module, key: torch.Tensor, params: argparse.Namespace):
    transform = transforms.Compose([
        transforms.ToTensor(),
        utils_img.normalize_img,
    ])
    data_loader = utils.get_dataloader(img_dir, transform, batch_size=1, collate_fn=None)
    attacks = get_attacks(params.attack_mode)
    logs = []
    for ii, imgs in enumerate(tqdm(data_loader)):
        imgs = imgs.to(device)
        log_stats = {'img': ii}
        for name, attack in attacks.items():
            imgs_aug = attack(imgs)
            with torch.autocast("cuda", dtype=torch.float16, enabled=params.half):
                decoded = msg_decoder(imgs_aug)  # b c h w -> b k
            diff = (~torch.logical_xor(decoded.float() > 0, key > 0))  # b k -> b k
            bit_accs = torch.sum(diff, dim=-1) / diff.shape[-1]  # b k -> b
            word_accs = (bit_accs == 1)  # b
            log_stats[f'bit_acc_{name}'] = torch.mean(bit_accs).item()
            log_stats[f'word_acc_{name}'] = torch.mean(word_accs.type(torch.float)).item()
        logs.append(log_stats)
    return logs


@torch.no_grad()
def get_img_metric(img_dir, img_dir_nw, num_imgs=None):
    filenames = os.listdir(img_dir)
    filenames.sort()
    if num_imgs is not None:
        filenames = filenames[:num_imgs]
    log_stats = []
    for ii, filename in enumerate(tqdm(filenames)):
        pil_img_ori = Image.open(os.path.join(img_dir_nw, filename))
        pil_img = Image.open(os.path.join(img_dir, filename))
        img_ori = np.asarray(pil_img_ori)
        img = np.asarray(pil_img)
        log_stat = {
            'filename': filename,
            'ssim': utils_img.ssim(img_ori, img),
            'psnr': utils_img.psnr_np(img_ori, img),
            'linf': np.amax(np.abs(img_ori.astype(int) - img.astype(int)))
        }
        log_stats.append(log_stat)
    return log_stats


def get_fid(img_dir, ref_dir, num_workers=8):
    from pytorch_fid import fid_score
    # pytorch_fid takes a device string; it runs the inception network on it
    fid = fid_score.calculate_fid_given_paths([img_dir, ref_dir], batch_size=50, device=device, dims=2048,
                                              num_workers=num_workers)
    return fid


def main(params):
    # Create the directories
    if not os.path.exists(params.output_dir):
        os.makedirs(params.output_dir)

    if params.eval_imgs:
        print(f">>> Computing img-wise stats...")
        if params.img_dir_nw is not None:
            img_metrics = get_img_metric(params.img_dir, params.img_dir_nw)
            img_df = pd.DataFrame(img_metrics)
            img_df.to_csv(os.path.join(params.output_dir, 'img_metrics.csv'), index=False)
            ssims = img_df['ssim'].tolist()
            psnrs = img_df['psnr'].tolist()
            linfs = img_df['linf'].tolist()
            ssim_mean, ssim_std, ssim_max, ssim_min = np.mean(ssims), np.std(ssims), np.max(ssims), np.min(ssims)
            psnr_mean, psnr_std, psnr_max, psnr_min = np.mean(psnrs), np.std(psnrs), np.max(psnrs), np.min(psnrs)
            linf_mean, linf_std, linf_max, linf_min = np.mean(linfs), np.std(linfs), np.max(linfs), np.min(linfs)
            print(f"SSIM: {ssim_mean:.4f}±{ssim_std:.4f} [{ssim_min:.4f}, {ssim_max:.4f}]")
            print(f"PSNR: {psnr_mean:.4f}±{psnr_std:.4f} [{psnr_min:.4f}, {psnr_max:.4f}]")
            print(f"Linf: {linf_mean:.4f}±{linf_std:.4f} [{linf_min:.4f}, {linf_max:.4f}]")

        if params.img_dir_fid is not None:
            print(f">>> Computing FID...")
            fid = get_fid(params.img_dir, params.img_dir_fid, params.num_workers)
            print(f"FID watermark : {fid:.4f}")
            if params.img_dir_nw is not None:
                fid_nw = get_fid(params.img_dir_nw, params.img_dir_fid, params.num_workers)
                print(f"FID original  : {fid_nw:.4f}")

    if params.eval_bits:
        # Loads hidden decoder
        print(f'>>> Building hidden decoder with weights from {params.msg_decoder_path}...')
        if 'torchscript' in params.msg_decoder_path:
            msg_decoder = torch.jit.load(params.msg_decoder_path, map_location="cpu").to(device)
        else:
            raise NotImplementedError('only the whitened torchscript decoders are supported here')
        msg_decoder.eval()

        # Creating key
        key = torch.tensor([k == '1' for k in params.key_str]).to(device)

        print(f'>>> Computing bit accuracy under attacks...')
        bit_accs = get_bit_accs(params.img_dir, msg_decoder, key, params)
        df = pd.DataFrame(bit_accs)
        df.to_csv(os.path.join(params.output_dir, 'log_stats.csv'), index=False)
        print(df.mean(axis=0, numeric_only=True))
        print(f'evaluated on {torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"}')


if __name__ == '__main__':

    # generate parser / parse parameters
    parser = get_parser()
    params = parser.parse_args()

    # run experiment
    main(params)
