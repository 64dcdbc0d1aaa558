#!/usr/bin/env python
# Copyright (c) Facebook, Inc. and its affiliates.
# All rights reserved.
#
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.
#

import os
import time
import torch
import numpy as np
from options.train_options import TrainOptions
from data.data_loader import CreateDataLoader
from models.models import ModelBuilder
from models.audioVisual_model import AudioVisualModel
from models import criterion
from tensorboardX import SummaryWriter


def create_optimizer(nets, opt):
    (net_lipreading, net_facial_attribtes, net_unet, net_vocal_attributes) = nets
    param_groups = [{'params': net_lipreading.parameters(), 'lr': opt.lr_lipreading},
                    {'params': net_facial_attribtes.parameters(), 'lr': opt.lr_facial_attributes},
                    {'params': net_unet.parameters(), 'lr': opt.lr_unet},
                    {'params': net_vocal_attributes.parameters(), 'lr': opt.lr_vocal_attributes}]
    if opt.optimizer == 'sgd':
        return torch.optim.SGD(param_groups, momentum=opt.beta1, weight_decay=opt.weight_decay)
    elif opt.optimizer == 'adam':
        return torch.optim.Adam(param_groups, betas=(opt.beta1, 0.999), weight_decay=opt.weight_decay)


def decrease_learning_rate(optimizer, decay_factor=0.94):
    for param_group in optimizer.param_groups:
        param_group['lr'] *= decay_factor


# used to display validation loss
def display_val(model, crit, writer, index, dataset_val, opt):
    # remove previous viz results
    sep_loss_list = []
    coseparation_loss_list = []
    crossmodal_loss_list = []
    with torch.no_grad():
        for i, val_data in enumerate(dataset_val):
            if i < opt.validation_batches:
                output = model.forward(val_data)
                sep_loss = get_separation_loss(output, crit['loss_sep'], opt)
                coseparation_loss = get_coseparation_loss(output, crit['loss_coseparation'], opt)
                crossmodal_loss = get_crossmodal_loss(output, crit['loss_crossmodal'], opt)
                sep_loss_list.append(sep_loss.item())
                coseparation_loss_list.append(coseparation_loss.item())
                crossmodal_loss_list.append(crossmodal_loss.item())
            else:
                break

    avg_sep_loss = sum(sep_loss_list) / len(sep_loss_list)
    avg_coseparation_loss = sum(coseparation_loss_list) / len(coseparation_loss_list)
    avg_crossmodal_loss = sum(crossmodal_loss_list) / len(crossmodal_loss_list)
    if opt.tensorboard:
        writer.add_scalar('data/val_sep_loss', avg_sep_loss, index)
        writer.add_scalar('data/val_coseparation_loss', avg_coseparation_loss, index)
        writer.add_scalar('data/val_crossmodal_loss', avg_crossmodal_loss, index)
    print('val loss: %.5f' % avg_sep_loss)
    print('val coseparation loss: %.5f' % avg_coseparation_loss)
    print('val crossmodal loss: %.5f' % avg_crossmodal_loss)
    return avg_sep_loss + avg_coseparation_loss * opt.coseparation_loss_weight


def synced_time():
    # kernels are launched asynchronously, wait for the GPU before reading the clock
    torch.cuda.synchronize()
    return time.time()


def get_separation_loss(output, loss_sep, opt):
    pred_masks = output['pred_mask']
    gt_masks = output['gt_mask']
    weight = output['weight']
    sep_loss = loss_sep(pred_masks, gt_masks, weight)
    return sep_loss


def get_coseparation_loss(output, loss_coseparation, opt):
    if not opt.use_coseparation_loss:
        return torch.zeros(1, device=output['pred_mask'].device)
    audio_embeddings_A1 = output['audio_embedding_A1_pred']
    audio_embeddings_A2 = output['audio_embedding_A2_pred']
    audio_embeddings_B1 = output['audio_embedding_B1_pred']
    audio_embeddings_B2 = output['audio_embedding_B2_pred']
    coseparation_loss = loss_coseparation(audio_embeddings_A1, audio_embeddings_A2,
                                          audio_embeddings_B1, audio_embeddings_B2)
    return coseparation_loss


def get_crossmodal_loss(output, loss_crossmodal, opt):
    identity_feature = output['identity_feature']
    audio_embeddings = output['audio_embedding_pred']
    return loss_crossmodal(identity_feature, audio_embeddings)


# parse arguments
opt = TrainOptions().parse()
opt.device = torch.device("cuda")

# construct data loader
data_loader = CreateDataLoader(opt)
dataset = data_loader.load_data()
dataset_size = len(data_loader)
print('#training clips = %d' % dataset_size)

# create validation set data loader if validation_on option is set
if opt.validation_on:
    # temperally set to val to load val data
    opt.mode = 'val'
    data_loader_val = CreateDataLoader(opt)
    dataset_val = data_loader_val.load_data()
    dataset_size_val = len(data_loader_val)
    print('#validation clips = %d' % dataset_size_val)
    opt.mode = 'train'  # set it back

if opt.tensorboard:
    writer = SummaryWriter(comment=opt.name)
else:
    writer = None

# Network Builders
builder = ModelBuilder()
net_lipreading = builder.build_lipreadingnet(
    config_path=opt.lipreading_config_path,
    weights=opt.weights_lipreadingnet,
    extract_feats=opt.lipreading_extract_feature)
# if identity feature dim is not 512, for resnet reduce dimension to this feature dim
if opt.identity_feature_dim != 512:
    opt.with_fc = True
else:
    opt.with_fc = False
net_facial_attributes = builder.build_facial(
    pool_type=opt.visual_pool,
    fc_out=opt.identity_feature_dim,
    with_fc=opt.with_fc,
    weights=opt.weights_facial)
net_unet = builder.build_unet(
    ngf=opt.unet_ngf,
    input_nc=opt.unet_input_nc,
    output_nc=opt.unet_output_nc,
    audioVisual_feature_dim=opt.audioVisual_feature_dim,
    identity_feature_dim=opt.identity_feature_dim,
    weights=opt.weights_unet)
net_vocal_attributes = builder.build_vocal(
    pool_type=opt.audio_pool,
    input_channel=2,
    with_fc=opt.with_fc,
    fc_out=opt.identity_feature_dim,
    weights=opt.weights_vocal)

nets = (net_lipreading, net_facial_attributes, net_unet, net_vocal_attributes)
print(net_lipreading)
print(net_facial_attributes)
print(net_unet)
print(net_vocal_attributes)

# construct our audio-visual model
model = AudioVisualModel(nets, opt)
model = torch.nn.DataParallel(model, device_ids=opt.gpu_ids)
model.to(opt.device)

# Set up optimizer
optimizer = create_optimizer(nets, opt)

# Set up loss functions
loss_sep = criterion.MaskLoss(loss_type=opt.mask_loss_type)
loss_coseparation = criterion.TripletLossCosine(margin=opt.margin)
loss_crossmodal = criterion.ContrastiveLoss(margin=opt.margin)
crit = {'loss_sep': loss_sep, 'loss_coseparation': loss_coseparation, 'loss_crossmodal': loss_crossmodal}

# initialization
total_batches = 0
batch_loss = []
batch_coseparation_loss = []
batch_crossmodal_loss = []
best_err = float("inf")
data_loading_time = []
model_forward_time = []
model_backward_time = []

for epoch in range(1 + opt.epoch_count, opt.niter + 1):
    epoch_start_time = time.time()

    if opt.measure_time:
        iter_start_time = time.time()
    for i, data in enumerate(dataset):
        if opt.measure_time:
            iter_data_loaded_time = synced_time()

        total_batches += 1

        # forward pass
        model.zero_grad()
        output = model.forward(data)

        # compute loss
        sep_loss = get_separation_loss(output, loss_sep, opt)
        coseparation_loss = get_coseparation_loss(output, loss_coseparation, opt)
        crossmodal_loss = get_crossmodal_loss(output, loss_crossmodal, opt)
        loss = sep_loss + coseparation_loss * opt.coseparation_loss_weight \
            + crossmodal_loss * opt.crossmodal_loss_weight
        batch_loss.append(sep_loss.item())
        batch_coseparation_loss.append(coseparation_loss.item())
        batch_crossmodal_loss.append(crossmodal_loss.item())

        if opt.measure_time:
            iter_data_forwarded_time = synced_time()

        # update optimizer
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        if opt.measure_time:
            iter_model_backwarded_time = synced_time()
            data_loading_time.append(iter_data_loaded_time - iter_start_time)
            model_forward_time.append(iter_data_forwarded_time - iter_data_loaded_time)
            model_backward_time.append(iter_model_backwarded_time - iter_data_forwarded_time)

        if total_batches % opt.display_freq == 0:
            print('Display training progress at (epoch %d, total_batches %d)' % (epoch, total_batches))
            avg_loss = sum(batch_loss) / len(batch_loss)
            avg_coseparation_loss = sum(batch_coseparation_loss) / len(batch_coseparation_loss)
            avg_crossmodal_loss = sum(batch_crossmodal_loss) / len(batch_crossmodal_loss)
            print('separation loss: %.5f' % avg_loss)
            print('coseparation loss: %.5f' % avg_coseparation_loss)
            print('crossmodal loss: %.5f' % avg_crossmodal_loss)
            batch_loss = []
            batch_coseparation_loss = []
            batch_crossmodal_loss = []
            if opt.tensorboard:
                writer.add_scalar('data/sep_loss', avg_loss, total_batches)
                writer.add_scalar('data/coseparation_loss', avg_coseparation_loss, total_batches)
                writer.add_scalar('data/crossmodal_loss', avg_crossmodal_loss, total_batches)
                writer.add_scalar('data/max_memory_gb',
                                  torch.cuda.max_memory_allocated() / (1024 ** 3), total_batches)
            print('end of display \n')

        if total_batches % opt.save_latest_freq == 0:
            print('saving the latest model (epoch %d, total_batches %d)' % (epoch, total_batches))
            torch.save(net_lipreading.state_dict(), os.path.join('.', opt.checkpoints_dir, opt.name, 'lipreading_latest.pth'))
            torch.save(net_facial_attributes.state_dict(), os.path.join('.', opt.checkpoints_dir, opt.name, 'facial_latest.pth'))
            torch.save(net_unet.state_dict(), os.path.join('.', opt.checkpoints_dir, opt.name, 'unet_latest.pth'))
            torch.save(net_vocal_attributes.state_dict(), os.path.join('.', opt.checkpoints_dir, opt.name, 'vocal_latest.pth'))

        if total_batches % opt.validation_freq == 0 and opt.validation_on:
            model.eval()
            opt.mode = 'val'
            print('Display validation results at (epoch %d, total_batches %d)' % (epoch, total_batches))
            val_err = display_val(model, crit, writer, total_batches, dataset_val, opt)
            print('end of display \n')
            model.train()
            opt.mode = 'train'
            # save the model that achieves the smallest validation error
            if val_err < best_err:
                best_err = val_err
                print('saving the best model (epoch %d, total_batches %d) with validation error %.3f\n'
                      % (epoch, total_batches, val_err))
                torch.save(net_lipreading.state_dict(), os.path.join('.', opt.checkpoints_dir, opt.name, 'lipreading_best.pth'))
                torch.save(net_facial_attributes.state_dict(), os.path.join('.', opt.checkpoints_dir, opt.name, 'facial_best.pth'))
                torch.save(net_unet.state_dict(), os.path.join('.', opt.checkpoints_dir, opt.name, 'unet_best.pth'))
                torch.save(net_vocal_attributes.state_dict(), os.path.join('.', opt.checkpoints_dir, opt.name, 'vocal_best.pth'))
            # free cached blocks held from the validation pass before training resumes
            torch.cuda.empty_cache()

        if opt.measure_time:
            iter_start_time = time.time()

    if epoch % opt.save_epoch_freq == 0:
        print('saving the model at the end of epoch %d, total_batches %d' % (epoch, total_batches))
        torch.save(net_lipreading.state_dict(), os.path.join('.', opt.checkpoints_dir, opt.name, str(epoch) + '_lipreading.pth'))
        torch.save(net_facial_attributes.state_dict(), os.path.join('.', opt.checkpoints_dir, opt.name, str(epoch) + '_facial.pth'))
        torch.save(net_unet.state_dict(), os.path.join('.', opt.checkpoints_dir, opt.name, str(epoch) + '_unet.pth'))
        torch.save(net_vocal_attributes.state_dict(), os.path.join('.', opt.checkpoints_dir, opt.name, str(epoch) + '_vocal.pth'))

    # decrease learning rate 6% every opt.learning_rate_decrease_itr epochs
    if opt.learning_rate_decrease_itr > 0 and epoch % opt.learning_rate_decrease_itr == 0:
        decrease_learning_rate(optimizer, opt.decay_factor)
        print('decreased learning rate by ', opt.decay_factor)

    print('End of epoch %d / %d \t Time Taken: %d sec' % (epoch, opt.niter, time.time() - epoch_start_time))
