#!/usr/bin/env python
# coding: utf-8

# # MindEye2 training: fMRI (NSD betas) -> CLIP ViT-bigG image embeddings
#
# Converted from Train.ipynb with `jupyter nbconvert Train.ipynb --to python`.
# Launch with accel.sh (accelerate + deepspeed stage 2) for multi-GPU runs.

# In[1]:


import os
import sys
import json
import argparse
import numpy as np
import math
from einops import rearrange
import time
import random
import string
import h5py
from tqdm import tqdm
import webdataset as wds
import gc

import matplotlib.pyplot as plt
import torch
import torch.nn as nn
from torchvision import transforms

from accelerate import Accelerator, DeepSpeedPlugin

# SDXL unclip requirements
from generative_models.sgm.modules.encoders.modules import FrozenOpenCLIPImageEmbedder

# tf32 data type is faster than standard float32
torch.backends.cuda.matmul.allow_tf32 = True

# custom functions #
import utils


# In[2]:


### Multi-GPU config ###
local_rank = os.getenv('RANK')
if local_rank is None:
    local_rank = 0
else:
    local_rank = int(local_rank)
print("LOCAL RANK ", local_rank)

data_type = torch.float16  # change depending on your mixed_precision
num_devices = torch.cuda.device_count()
if num_devices == 0: num_devices = 1

# First use "accelerate config" in terminal and setup using deepspeed stage 2 with CPU offloading!
accelerator = Accelerator(split_batches=False, mixed_precision="fp16")
if utils.is_interactive():  # set batch size here if using interactive notebook instead of submitting job
    global_batch_size = batch_size = 8
else:
    global_batch_size = os.environ["GLOBAL_BATCH_SIZE"]
    batch_size = int(os.environ["GLOBAL_BATCH_SIZE"]) // num_devices


# In[3]:


print("PID of this process =", os.getpid())
device = accelerator.device
print("device:", device)
world_size = accelerator.state.num_processes
distributed = not accelerator.state.distributed_type == 'NO'
num_devices = torch.cuda.device_count()  # re-count now that the process group is up
if num_devices == 0 or not distributed: num_devices = 1
num_workers = num_devices
print(accelerator.state)

print("distributed =", distributed, "num_devices =", num_devices, "local rank =", local_rank,
      "world size =", world_size, "data_type =", data_type)
print = accelerator.print  # only print if local_rank=0


# # Configurations

# In[4]:


parser = argparse.ArgumentParser(description="Model Training Configuration")
parser.add_argument("--model_name", type=str, default="testing",
                    help="name of model, used for ckpt saving and wandb logging (if enabled)")
parser.add_argument("--data_path", type=str, default="/weka/proj-fmri/shared/natural-scenes-dataset",
                    help="Path to where NSD data is stored / where to download it to")
parser.add_argument("--cache_dir", type=str, default="/weka/proj-fmri/shared/cache",
                    help="Path to where misc. files downloaded from huggingface are stored. Defaults to current src directory.")
parser.add_argument("--subj", type=int, default=1, choices=[1, 2, 3, 4, 5, 6, 7, 8],
                    help="Validate on which subject?")
parser.add_argument("--multisubject_ckpt", type=str, default=None,
                    help="Path to pre-trained multisubject model to finetune a single subject from. multisubject must be False.")
parser.add_argument("--num_sessions", type=int, default=1,
                    help="Number of training sessions to include")
parser.add_argument("--use_prior", action=argparse.BooleanOptionalAction, default=True,
                    help="whether to train diffusion prior (True) or just rely on retrieval part of the pipeline (False)")
parser.add_argument("--batch_size", type=int, default=16,
                    help="Batch size can be increased by 10x if only training retreival submodule and not diffusion prior")
parser.add_argument("--wandb_log", action=argparse.BooleanOptionalAction, default=False,
                    help="whether to log to wandb")
parser.add_argument("--resume_from_ckpt", action=argparse.BooleanOptionalAction, default=False,
                    help="if not using wandb and want to resume from a ckpt")
parser.add_argument("--wandb_project", type=str, default="stability",
                    help="wandb project name")
parser.add_argument("--mixup_pct", type=float, default=.33,
                    help="proportion of way through training when to switch from BiMixCo to SoftCLIP")
parser.add_argument("--blurry_recon", action=argparse.BooleanOptionalAction, default=True,
                    help="whether to output blurry reconstructions")
parser.add_argument("--blur_scale", type=float, default=.5,
                    help="multiply loss from blurry recons by this number")
parser.add_argument("--clip_scale", type=float, default=1.,
                    help="multiply contrastive loss by this number")
parser.add_argument("--prior_scale", type=float, default=30,
                    help="multiply diffusion prior loss by this")
parser.add_argument("--use_image_aug", action=argparse.BooleanOptionalAction, default=False,
                    help="whether to use image augmentation")
parser.add_argument("--num_epochs", type=int, default=150,
                    help="number of epochs of training")
parser.add_argument("--n_blocks", type=int, default=4)
parser.add_argument("--hidden_dim", type=int, default=1024)
parser.add_argument("--lr_scheduler_type", type=str, default='cycle', choices=['cycle', 'linear'])
parser.add_argument("--ckpt_saving", action=argparse.BooleanOptionalAction, default=True)
parser.add_argument("--ckpt_interval", type=int, default=5,
                    help="save backup ckpt and reconstruct every x epochs")
parser.add_argument("--seed", type=int, default=42)
parser.add_argument("--max_lr", type=float, default=3e-4)

if utils.is_interactive():
    args = parser.parse_args(jupyter_args)  # noqa: F821
else:
    args = parser.parse_args()

# create global variables without the args prefix
for attribute_name in vars(args).keys():
    globals()[attribute_name] = getattr(args, attribute_name)

# seed all random functions
utils.seed_everything(seed)

outdir = os.path.abspath(f'../train_logs/{model_name}')
if not os.path.exists(outdir) and ckpt_saving:
    os.makedirs(outdir, exist_ok=True)

if use_image_aug or blurry_recon:
    import kornia
    from kornia.augmentation.container import AugmentationSequential
if use_image_aug:
    img_augment = AugmentationSequential(
        kornia.augmentation.RandomResizedCrop((224, 224), (0.6, 1), p=0.3),
        kornia.augmentation.Resize((224, 224)),
        kornia.augmentation.RandomHorizontalFlip(p=0.3),
        kornia.augmentation.ColorJitter(brightness=0.4, contrast=0.4, saturation=0.2, hue=0.1, p=0.3),
        kornia.augmentation.RandomGrayscale(p=0.3),
        same_on_batch=False,
        data_keys=["input"],
    )


# # Prep data, models, and dataloaders

# In[5]:


def my_split_by_node(urls): return urls


num_samples_per_epoch = (750 * num_sessions) // num_devices
print("dividing batch size by subj_list, which will then be concatenated across subj during training...")
num_iterations_per_epoch = num_samples_per_epoch // batch_size
print("batch_size =", batch_size, "num_iterations_per_epoch =", num_iterations_per_epoch,
      "num_samples_per_epoch =", num_samples_per_epoch)

train_url = f"{data_path}/wds/subj0{subj}/train/" + "{0.." + f"{num_sessions - 1}" + "}.tar"
test_url = f"{data_path}/wds/subj0{subj}/new_test/" + "0.tar"

train_data = wds.WebDataset(train_url, resampled=True, nodesplitter=my_split_by_node) \
    .shuffle(750, initial=1500, rng=random.Random(42)) \
    .decode("torch") \
    .rename(behav="behav.npy", past_behav="past_behav.npy", future_behav="future_behav.npy",
            olds_behav="olds_behav.npy") \
    .to_tuple(*["behav", "past_behav", "future_behav", "olds_behav"])
train_dl = torch.utils.data.DataLoader(train_data, batch_size=batch_size, shuffle=False, drop_last=True,
                                       pin_memory=True)

test_data = wds.WebDataset(test_url, resampled=False, nodesplitter=my_split_by_node) \
    .decode("torch") \
    .rename(behav="behav.npy", past_behav="past_behav.npy", future_behav="future_behav.npy",
            olds_behav="olds_behav.npy") \
    .to_tuple(*["behav", "past_behav", "future_behav", "olds_behav"])
test_dl = torch.utils.data.DataLoader(test_data, batch_size=300, shuffle=False, drop_last=True, pin_memory=True)

# load betas and images into memory (pinned host tensors; indexed per batch)
f = h5py.File(f'{data_path}/betas_all_subj0{subj}_fp32_renorm.hdf5', 'r')
betas = torch.Tensor(f['betas'][:]).to("cpu").to(data_type)
num_voxels = betas.shape[-1]
print(f"num_voxels for subj0{subj}: {num_voxels}")

f = h5py.File(f'{data_path}/coco_images_224_float16.hdf5', 'r')
images = f['images']
print("Loaded all 73k possible NSD images to cpu!", images.shape)


# In[6]:


clip_img_embedder = FrozenOpenCLIPImageEmbedder(
    arch="ViT-bigG-14",
    version="laion2b_s39b_b160k",
    output_tokens=True,
    only_tokens=True,
)
clip_img_embedder.to(device)

clip_seq_dim = 256
clip_emb_dim = 1664

if blurry_recon:
    from diffusers import AutoencoderKL
    autoenc = AutoencoderKL.from_pretrained(f"{cache_dir}/sd-vae-ft-mse", torch_dtype=data_type)
    autoenc.eval()
    autoenc.requires_grad_(False)
    autoenc.to(device)
    utils.count_params(autoenc)


# In[7]:


from models import MindEyeModule, RidgeRegression, BrainNetwork, PriorNetwork, BrainDiffusionPrior

model = MindEyeModule()
model.ridge = RidgeRegression([num_voxels], out_features=hidden_dim)
model.backbone = BrainNetwork(h=hidden_dim, in_dim=hidden_dim, seq_len=1, n_blocks=n_blocks,
                              clip_size=clip_emb_dim, out_dim=clip_emb_dim * clip_seq_dim,
                              blurry_recon=blurry_recon, clip_scale=clip_scale)
utils.count_params(model.ridge)
utils.count_params(model.backbone)

if use_prior:
    out_dim = clip_emb_dim
    depth = 6
    dim_head = 52
    heads = clip_emb_dim // 52  # heads * dim_head = clip_emb_dim
    timesteps = 100
    prior_network = PriorNetwork(dim=out_dim, depth=depth, dim_head=dim_head, heads=heads, causal=False,
                                 num_tokens=clip_seq_dim, learned_query_mode="pos_emb")
    model.diffusion_prior = BrainDiffusionPrior(net=prior_network, image_embed_dim=out_dim,
                                                condition_on_text_encodings=False, timesteps=timesteps,
                                                cond_drop_prob=0.2, image_embed_scale=None)
    utils.count_params(model.diffusion_prior)
utils.count_params(model)

no_decay = ['bias', 'LayerNorm.bias', 'LayerNorm.weight']
opt_grouped_parameters = [
    {'params': [p for n, p in model.ridge.named_parameters()], 'weight_decay': 1e-2},
    {'params': [p for n, p in model.backbone.named_parameters() if not any(nd in n for nd in no_decay)], 'weight_decay': 1e-2},
    {'params': [p for n, p in model.backbone.named_parameters() if any(nd in n for nd in no_decay)], 'weight_decay': 0.0},
]
if use_prior:
    opt_grouped_parameters.extend([
        {'params': [p for n, p in model.diffusion_prior.named_parameters() if not any(nd in n for nd in no_decay)], 'weight_decay': 1e-2},
        {'params': [p for n, p in model.diffusion_prior.named_parameters() if any(nd in n for nd in no_decay)], 'weight_decay': 0.0},
    ])
optimizer = torch.optim.AdamW(opt_grouped_parameters, lr=max_lr)

total_steps = int(np.floor(num_epochs * num_iterations_per_epoch))
lr_scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=max_lr, total_steps=total_steps,
                                                   final_div_factor=1000, last_epoch=-1,
                                                   pct_start=2 / num_epochs)


def save_ckpt(tag):
    ckpt_path = outdir + f'/{tag}.pth'
    if accelerator.is_main_process:
        unwrapped_model = accelerator.unwrap_model(model)
        torch.save({
            'epoch': epoch,
            'model_state_dict': unwrapped_model.state_dict(),
            'optimizer_state_dict': optimizer.state_dict(),
            'lr_scheduler': lr_scheduler.state_dict(),
            'train_losses': losses,
            'test_losses': test_losses,
            'lrs': lrs,
        }, ckpt_path)
    print(f"\n---saved {outdir}/{tag} ckpt!---\n")


# # Main

# In[8]:


epoch = 0
losses, test_losses, lrs = [], [], []
best_test_loss = 1e9
gc.collect(); torch.cuda.empty_cache()

model, optimizer, train_dl, lr_scheduler = accelerator.prepare(model, optimizer, train_dl, lr_scheduler)
# leaving out test_dl since we will only have local_rank 0 device do evals

print(f"{model_name} starting with epoch {epoch} / {num_epochs}")
progress_bar = tqdm(range(epoch, num_epochs), ncols=1200, disable=(local_rank != 0))
mse = nn.MSELoss()
l1 = nn.L1Loss()
soft_loss_temps = utils.cosine_anneal(0.004, 0.0075, num_epochs - int(mixup_pct * num_epochs))

for epoch in progress_bar:
    model.train()
    fwd_percent_correct = 0.
    bwd_percent_correct = 0.
    loss_clip_total = 0.
    loss_prior_total = 0.
    loss_blurry_total = 0.

    for train_i, (behav, past_behav, future_behav, old_behav) in enumerate(train_dl):
        with torch.cuda.amp.autocast(dtype=data_type):
            optimizer.zero_grad()
            loss = 0.

            image_idx = behav[:, 0, 0].cpu().long().numpy()
            image_sorted_idx = np.sort(image_idx)
            image = torch.from_numpy(images[image_sorted_idx]).to(device)
            voxel = betas[behav[:, 0, 5].cpu().long()].unsqueeze(1).to(device)

            if use_image_aug:
                image = img_augment(image)

            clip_target = clip_img_embedder(image)
            assert not torch.any(torch.isnan(clip_target))

            if epoch < int(mixup_pct * num_epochs):
                voxel, perm, betas_mix, select = utils.mixco(voxel)

            voxel_ridge = model.ridge(voxel, 0)
            backbone, clip_voxels, blurry_image_enc_ = model.backbone(voxel_ridge)

            if clip_scale > 0:
                clip_voxels_norm = nn.functional.normalize(clip_voxels.flatten(1), dim=-1)
                clip_target_norm = nn.functional.normalize(clip_target.flatten(1), dim=-1)

            if use_prior:
                loss_prior, prior_out = model.diffusion_prior(text_embed=backbone, image_embed=clip_target)
                loss_prior_total += loss_prior.item()
                loss_prior *= prior_scale
                loss += loss_prior

            if clip_scale > 0:
                if epoch < int(mixup_pct * num_epochs):
                    loss_clip = utils.mixco_nce(clip_voxels_norm, clip_target_norm, temp=.006, perm=perm,
                                                betas=betas_mix, select=select)
                else:
                    epoch_temp = soft_loss_temps[epoch - int(mixup_pct * num_epochs)]
                    loss_clip = utils.soft_clip_loss(clip_voxels_norm, clip_target_norm, temp=epoch_temp)
                loss_clip_total += loss_clip.item()
                loss_clip *= clip_scale
                loss += loss_clip

            if blurry_recon:
                image_enc_pred, transformer_feats = blurry_image_enc_
                image_enc = autoenc.encode(2 * image - 1).latent_dist.mode() * 0.18215
                loss_blurry = l1(image_enc_pred, image_enc)
                loss_blurry_total += loss_blurry.item()
                loss += loss_blurry * blur_scale

            if clip_scale > 0:
                # forward and backward top 1 accuracy
                labels = torch.arange(len(clip_voxels_norm)).to(clip_voxels_norm.device)
                fwd_percent_correct += utils.topk(utils.batchwise_cosine_similarity(clip_voxels_norm, clip_target_norm), labels, k=1).item()
                bwd_percent_correct += utils.topk(utils.batchwise_cosine_similarity(clip_target_norm, clip_voxels_norm), labels, k=1).item()

            utils.check_loss(loss)
            accelerator.backward(loss)
            optimizer.step()

            losses.append(loss.item())
            lrs.append(optimizer.param_groups[0]['lr'])
            lr_scheduler.step()

    model.eval()
    if local_rank == 0:
        with torch.no_grad(), torch.cuda.amp.autocast(dtype=data_type):
            for test_i, (behav, past_behav, future_behav, old_behav) in enumerate(test_dl):
                image_idx = behav[:, 0, 0].cpu().long().numpy()
                image = torch.from_numpy(images[np.sort(image_idx)]).to(device)
                voxel = betas[behav[:, 0, 5].cpu().long()].unsqueeze(1).to(device)
                clip_target = clip_img_embedder(image.float())
                voxel_ridge = model.ridge(voxel, 0)
                backbone, clip_voxels, _ = model.backbone(voxel_ridge)
                clip_voxels_norm = nn.functional.normalize(clip_voxels.flatten(1), dim=-1)
                clip_target_norm = nn.functional.normalize(clip_target.flatten(1), dim=-1)
                test_loss = utils.soft_clip_loss(clip_voxels_norm, clip_target_norm, temp=.006)
                test_losses.append(test_loss.item())

        logs = {"train/loss": np.mean(losses[-(train_i + 1):]),
                "test/loss": np.mean(test_losses[-(test_i + 1):]),
                "train/lr": lrs[-1],
                "train/fwd_pct_correct": fwd_percent_correct / (train_i + 1),
                "train/bwd_pct_correct": bwd_percent_correct / (train_i + 1),
                "train/loss_clip_total": loss_clip_total / (train_i + 1),
                "train/loss_prior_total": loss_prior_total / (train_i + 1),
                "train/loss_blurry_total": loss_blurry_total / (train_i + 1),
                "gpu/max_mem_gb": torch.cuda.max_memory_allocated() / 1e9}
        progress_bar.set_postfix(**logs)

        if ckpt_saving and (epoch % ckpt_interval == 0 or epoch == num_epochs - 1):
            save_ckpt('last')

    # wait for other GPUs to catch up if needed
    accelerator.wait_for_everyone()
    torch.cuda.empty_cache()
    gc.collect()

print("\n===Finished!===\n")
if ckpt_saving:
    save_ckpt('last')
