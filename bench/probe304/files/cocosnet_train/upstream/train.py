# Copyright (c) Microsoft Corporation.
# Licensed under the MIT License.

import os
import sys
import time
import numpy as np
import torch
import torch.nn.functional as F
import torchvision.utils as vutils
from collections import OrderedDict

from options.train_options import TrainOptions
import data
from util.iter_counter import IterationCounter
from util.util import print_current_errors
from trainers.pix2pix_trainer import Pix2PixTrainer


def device_sync():
    # only meaningful for the step timing below; CPU runs skip it
    if torch.cuda.is_available():
        torch.cuda.synchronize()


# parse options
opt = TrainOptions().parse()

# print options to help debugging
print(' '.join(sys.argv))

# load the dataset
dataloader = data.create_dataloader(opt)
len_dataloader = len(dataloader)
dataloader.dataset[11]

# create tool for counting iterations
iter_counter = IterationCounter(opt, len(dataloader))

# create trainer for our model
trainer = Pix2PixTrainer(opt, resume_epoch=iter_counter.first_epoch)

save_root = os.path.join(os.path.dirname(opt.checkpoints_dir), 'output', opt.name)

# optional fine-grained timing of the G / D steps (adds a device sync per step)
profile_steps = getattr(opt, 'profile_steps', False)
g_time, d_time, n_timed = 0.0, 0.0, 0

for epoch in iter_counter.training_epochs():
    opt.epoch = epoch
    if not opt.maskmix:
        print('inject nothing')
    elif opt.maskmix and opt.noise_for_mask and epoch > opt.mask_epoch:
        print('inject noise')
    else:
        print('inject mask')
    print('real_reference_probability is :{}'.format(dataloader.dataset.real_reference_probability))
    print('hard_reference_probability is :{}'.format(dataloader.dataset.hard_reference_probability))
    iter_counter.record_epoch_start(epoch)
    for i, data_i in enumerate(dataloader, start=iter_counter.epoch_iter):
        iter_counter.record_one_iteration()
        # use for Domain adaptation loss
        p = min(float(i + (epoch - 1) * len_dataloader) / 50 / len_dataloader, 1)
        alpha = 2. / (1. + np.exp(-10 * p)) - 1

        # Training
        # train generator
        if profile_steps:
            device_sync()
            t0 = time.time()
        if i % opt.D_steps_per_G == 0:
            trainer.run_generator_one_step(data_i, alpha=alpha)
        if profile_steps:
            device_sync()
            t1 = time.time()
            g_time += t1 - t0

        # train discriminator
        trainer.run_discriminator_one_step(data_i)
        if profile_steps:
            device_sync()
            d_time += time.time() - t1
            n_timed += 1

        if iter_counter.needs_printing():
            losses = trainer.get_latest_losses()
            try:
                print_current_errors(opt, epoch, iter_counter.epoch_iter,
                                     losses, iter_counter.time_per_iter)
            except OSError as err:
                print(err)
            if profile_steps and n_timed > 0:
                print('  G step %.1f ms | D step %.1f ms | peak mem %.0f MB' % (
                    1000 * g_time / n_timed, 1000 * d_time / n_timed,
                    torch.cuda.max_memory_allocated() / 1024 ** 2))
                g_time, d_time, n_timed = 0.0, 0.0, 0

        if iter_counter.needs_displaying():
            if not os.path.exists(save_root + opt.name):
                os.makedirs(save_root + opt.name)
            imgs_num = data_i['label'].shape[0]
            if opt.dataset_mode == 'celebahq':
                data_i['label'] = data_i['label'][:, ::2, :, :]
            elif opt.dataset_mode == 'celebahqedge':
                data_i['label'] = data_i['label'][:, :1, :, :]
            elif opt.dataset_mode == 'deepfashion':
                # the first 3 channels are the rendered DensePose / openpose skeleton
                data_i['label'] = data_i['label'][:, :3, :, :]
            if data_i['label'].shape[1] == 3:
                label = data_i['label']
            else:
                label = data_i['label'].expand(-1, 3, -1, -1).float() / data_i['label'].max()

            cycleshow = None
            if opt.use_coordconv:
                cycleshow = trainer.out['cycle']

            if cycleshow is not None:
                imgs = torch.cat((label.cpu(), data_i['ref'].cpu(), trainer.out['warp_out'].cpu(),
                                  trainer.get_latest_generated().data.cpu(), data_i['image'].cpu(),
                                  cycleshow.cpu()), 0)
            else:
                imgs = torch.cat((label.cpu(), data_i['ref'].cpu(), trainer.out['warp_out'].cpu(),
                                  trainer.get_latest_generated().data.cpu(), data_i['image'].cpu()), 0)

            try:
                vutils.save_image(imgs, save_root + opt.name + '/' + str(epoch) + '_' + str(iter_counter.total_steps_so_far) + '.png',
                                  nrow=imgs_num, padding=0, normalize=True)
            except OSError as err:
                print(err)

        if iter_counter.needs_saving():
            print('saving the latest model (epoch %d, total_steps %d)' %
                  (epoch, iter_counter.total_steps_so_far))
            try:
                trainer.save('latest')
                iter_counter.record_current_iter()
            except OSError as err:
                print(err)

    trainer.update_learning_rate(epoch)
    iter_counter.record_epoch_end()

    if epoch % opt.save_epoch_freq == 0 or \
            epoch == iter_counter.total_epochs:
        print('saving the model at the end of epoch %d, iters %d' %
              (epoch, iter_counter.total_steps_so_far))
        try:
            trainer.save('latest')
            trainer.save(epoch)
        except OSError as err:
            print(err)

print('Training was successfully finished.')
