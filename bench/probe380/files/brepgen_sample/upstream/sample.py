import os
import yaml
import torch
import argparse
import numpy as np
from tqdm import tqdm
from diffusers import PNDMScheduler, DDPMScheduler
from diffusers.utils.torch_utils import randn_tensor
from network import *
from utils import (
    compute_bbox_center_and_size,
    detect_shared_vertex,
    detect_shared_edge,
    joint_optimize,
    construct_brep,
    remove_box_edge,
)
from OCC.Extend.DataExchange import write_stl_file, write_step_file

# Set device
device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')

text2int = {'uncond': 0,
            'bathtub': 1,
            'bed': 2,
            'bench': 3,
            'bookshelf': 4,
            'cabinet': 5,
            'chair': 6,
            'couch': 7,
            'lamp': 8,
            'sofa': 9,
            'table': 10
            }


def load_models(eval_args):
    # Load surface pos model
    surfPos_model = SurfPosNet(eval_args['use_cf'])
    surfPos_model.load_state_dict(torch.load(eval_args['surfpos_weight']))
    surfPos_model = surfPos_model.to(device).eval()

    # Load surface latent model
    surfZ_model = SurfZNet(eval_args['use_cf'])
    surfZ_model.load_state_dict(torch.load(eval_args['surfz_weight']))
    surfZ_model = surfZ_model.to(device).eval()

    # Load edge pos / latent models
    edgePos_model = EdgePosNet(eval_args['use_cf'])
    edgePos_model.load_state_dict(torch.load(eval_args['edgepos_weight']))
    edgePos_model = edgePos_model.to(device).eval()

    edgeZ_model = EdgeZNet(eval_args['use_cf'])
    edgeZ_model.load_state_dict(torch.load(eval_args['edgez_weight']))
    edgeZ_model = edgeZ_model.to(device).eval()

    # Load the surface / edge VAE decoders
    surf_vae = AutoencoderKLFastDecode(in_channels=3, out_channels=3,
                                       down_block_types=['DownEncoderBlock2D'] * 4,
                                       up_block_types=['UpDecoderBlock2D'] * 4,
                                       block_out_channels=[128, 256, 512, 512],
                                       layers_per_block=2, act_fn='silu', latent_channels=3,
                                       norm_num_groups=32, sample_size=512)
    surf_vae.load_state_dict(torch.load(eval_args['surfvae_weight']), strict=False)
    surf_vae = surf_vae.to(device).eval()

    edge_vae = AutoencoderKL1DFastDecode(in_channels=3, out_channels=3,
                                         down_block_types=['DownBlock1D'] * 3,
                                         up_block_types=['UpBlock1D'] * 3,
                                         block_out_channels=[128, 256, 512],
                                         layers_per_block=2, act_fn='silu', latent_channels=3,
                                         norm_num_groups=32, sample_size=512)
    edge_vae.load_state_dict(torch.load(eval_args['edgevae_weight']), strict=False)
    edge_vae = edge_vae.to(device).eval()

    return surfPos_model, surfZ_model, edgePos_model, edgeZ_model, surf_vae, edge_vae


def sample(eval_args):
    # Inference configuration
    batch_size = eval_args['batch_size']
    z_threshold = eval_args['z_threshold']
    bbox_threshold = eval_args['bbox_threshold']
    save_folder = eval_args['save_folder']
    num_surfaces = eval_args['num_surfaces']
    num_edges = eval_args['num_edges']

    if eval_args['use_cf']:
        class_label = torch.LongTensor([text2int[eval_args['class_label']]] * batch_size +
                                       [text2int['uncond']] * batch_size).cuda().reshape(-1, 1)
        w = 0.6

    surfPos_model, surfZ_model, edgePos_model, edgeZ_model, surf_vae, edge_vae = load_models(eval_args)

    pndm_scheduler = PNDMScheduler(
        num_train_timesteps=1000,
        beta_schedule='linear',
        prediction_type='epsilon',
        beta_start=0.0001,
        beta_end=0.02,
    )

    ddpm_scheduler = DDPMScheduler(
        num_train_timesteps=1000,
        beta_schedule='linear',
        prediction_type='epsilon',
        beta_start=0.0001,
        beta_end=0.02,
        clip_sample=True,
        clip_sample_range=3
    )

    with torch.no_grad():
        with torch.cuda.amp.autocast():
            ###########################################
            # STEP 1-1: generate the surface position #
            ###########################################
            surfPos = randn_tensor((batch_size, num_surfaces, 6)).to(device)

            pndm_scheduler.set_timesteps(200)
            for t in tqdm(pndm_scheduler.timesteps[:158]):  # 0.8 sec
                timesteps = t.reshape(-1).cuda()
                if eval_args['use_cf']:
                    _surfPos_ = surfPos.repeat(2, 1, 1)
                    pred = surfPos_model(_surfPos_, timesteps, class_label)
                    pred = pred[:batch_size] * (1 + w) - pred[batch_size:] * w
                else:
                    pred = surfPos_model(surfPos, timesteps, None)
                surfPos = pndm_scheduler.step(pred, t, surfPos).prev_sample

            # Late increase for ABC/DeepCAD (slightly more efficient)
            if not eval_args['use_cf']:
                surfPos = surfPos.repeat(1, 2, 1)
                num_surfaces *= 2

            ddpm_scheduler.set_timesteps(1000)
            for t in tqdm(ddpm_scheduler.timesteps[-250:]):
                timesteps = t.reshape(-1).cuda()  # (1,)
                if eval_args['use_cf']:
                    _surfPos_ = surfPos.repeat(2, 1, 1)
                    pred = surfPos_model(_surfPos_, timesteps, class_label)
                    pred = pred[:batch_size] * (1 + w) - pred[batch_size:] * w
                else:
                    pred = surfPos_model(surfPos, timesteps, None)
                surfPos = ddpm_scheduler.step(pred, t, surfPos).prev_sample

            #######################################
            # STEP 1-2: remove duplicate surfaces #
            #######################################
            surfPos_deduplicate = []
            surfMask_deduplicate = []
            for ii in range(batch_size):
                bboxes = np.round(surfPos[ii].unflatten(-1, torch.Size([2, 3])).detach().cpu().numpy(), 4)
                non_repeat = bboxes[:1]
                for bbox_idx, bbox in enumerate(bboxes):
                    diff = np.max(np.max(np.abs(non_repeat - bbox), -1), -1)
                    same = diff < bbox_threshold
                    bbox_rev = bbox[::-1]  # also test reverse bbox for matching
                    diff_rev = np.max(np.max(np.abs(non_repeat - bbox_rev), -1), -1)
                    same_rev = diff_rev < bbox_threshold
                    if same.sum() >= 1 or same_rev.sum() >= 1:
                        continue  # repeat value
                    else:
                        non_repeat = np.concatenate([non_repeat, bbox[np.newaxis, :, :]], 0)
                bboxes = non_repeat.reshape(len(non_repeat), -1)

                surf_mask = torch.zeros((1, len(bboxes))) == 1
                bbox_padded = torch.concat([torch.FloatTensor(bboxes), torch.zeros(num_surfaces - len(bboxes), 6)])
                mask_padded = torch.concat([surf_mask, torch.zeros(1, num_surfaces - len(bboxes)) == 0], -1)
                surfPos_deduplicate.append(bbox_padded)
                surfMask_deduplicate.append(mask_padded)

            surfPos = torch.stack(surfPos_deduplicate).cuda()
            surfMask = torch.vstack(surfMask_deduplicate).cuda()

            #################################
            # STEP 1-3:  generate surface z #
            #################################
            surfZ = randn_tensor((batch_size, num_surfaces, 48)).to(device)

            pndm_scheduler.set_timesteps(200)
            for t in tqdm(pndm_scheduler.timesteps):
                timesteps = t.reshape(-1).to(device)
                if eval_args['use_cf']:
                    _surfZ_ = surfZ.repeat(2, 1, 1)
                    _surfPos_ = surfPos.repeat(2, 1, 1)
                    _surfMask_ = surfMask.repeat(2, 1)
                    pred = surfZ_model(_surfZ_, timesteps, _surfPos_, _surfMask_, class_label)
                    pred = pred[:batch_size] * (1 + w) - pred[batch_size:] * w
                else:
                    pred = surfZ_model(surfZ, timesteps, surfPos, surfMask, None)
                surfZ = pndm_scheduler.step(pred, t, surfZ).prev_sample

            # Decode surface latents to UV grids
            surf_ncs = surf_vae(surfZ.unflatten(-1, torch.Size([16, 3])).flatten(0, 1).permute(0, 2, 1).unflatten(-1, torch.Size([4, 4])))
            surf_ncs = surf_ncs.sample.permute(0, 2, 3, 1).unflatten(0, torch.Size([batch_size, num_surfaces]))

    # Edge generation and B-rep assembly run per sample on the CPU (OpenCascade)
    surfPos_np = surfPos.float().detach().cpu().numpy()
    surfMask_np = surfMask.detach().cpu().numpy()
    surf_ncs_np = surf_ncs.float().detach().cpu().numpy()
    for batch_idx in range(batch_size):
        valid = ~surfMask_np[batch_idx]
        surf_wcs = surf_ncs_np[batch_idx][valid]
        surf_bbox = surfPos_np[batch_idx][valid] * 0.5 / eval_args['bbox_scaled']
        try:
            solid = construct_brep(surf_wcs, surf_bbox, edge_vae, edgePos_model, edgeZ_model,
                                   device=device, num_edges=num_edges, z_threshold=z_threshold)
        except Exception as e:
            print(f'B-rep rebuild failed for sample {batch_idx}: {e}')
            continue
        random_string = ''.join(np.random.choice(list('abcdefghijklmnopqrstuvwxyz0123456789'), 6))
        write_step_file(solid, f'{save_folder}/{random_string}_{batch_idx}.step')
        write_stl_file(solid, f'{save_folder}/{random_string}_{batch_idx}.stl', linear_deflection=0.001,
                       angular_deflection=0.5)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", type=str, choices=['abc', 'deepcad', 'furniture'], default='abc',
                        help="Choose between evaluation mode [abc/deepcad/furniture] (default: abc)")
    args = parser.parse_args()

    # Load evaluation config
    with open('eval_config.yaml', 'r') as file:
        config = yaml.safe_load(file)
    eval_args = config[args.mode]

    while (True):
        print('Writing results to ' + eval_args['save_folder'])
        if not os.path.exists(eval_args['save_folder']):
            os.makedirs(eval_args['save_folder'])
        sample(eval_args)
