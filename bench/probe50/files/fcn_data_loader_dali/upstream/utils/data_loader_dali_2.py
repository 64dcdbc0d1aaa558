#BSD 3-Clause License
#
#Copyright (c) 2022, FourCastNet authors
#All rights reserved.
#
# DALI-based ERA5 loader: an external source reads samples from the yearly HDF5 files in
# parallel python workers, DALI moves the batch to the GPU and normalises it there.

import logging
import glob
import os
import numpy as np
import h5py
import torch

# DALI
import nvidia.dali as dali
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

import utils.dali_es_helper_2 as esh


def get_data_loader(params, files_pattern, train):
  dataloader = ERA5DaliESDataloader(params, files_pattern, train)
  if train:
    return dataloader, None
  else:
    return dataloader, None


class ERA5DaliESDataloader(object):

  def get_pipeline(self):
    pipeline = Pipeline(batch_size = self.batch_size,
                        num_threads = 2,
                        device_id = self.device_index,
                        py_num_workers = self.num_data_workers,
                        py_start_method='spawn',
                        seed = self.global_seed)

    img_shape_x = self.img_shape_x
    img_shape_y = self.img_shape_y
    in_channels = self.in_channels
    out_channels = self.out_channels

    with pipeline:
      # get input and target
      inp, tar = fn.external_source(source = esh.GeneralES(self.location,
                                                            max_samples = self.max_samples,
                                                            samples_per_epoch = self.samples_per_epoch,
                                                            train = self.train,
                                                            batch_size = self.batch_size,
                                                            n_history = self.n_history,
                                                            n_future = self.n_future,
                                                            in_channels = self.in_channels,
                                                            out_channels = self.out_channels,
                                                            crop_size = self.crop_size,
                                                            roll = self.roll,
                                                            dt = self.dt,
                                                            num_shards = self.num_shards,
                                                            shard_id = self.shard_id,
                                                            enable_logging = False,
                                                            seed=self.global_seed),
                                    num_outputs = 2,
                                    layout = ["FCHW", "FCHW"],
                                    batch = False,
                                    no_copy = True,
                                    parallel = True,
                                    prefetch_queue_depth = self.num_data_workers)

      # upload to GPU
      inp = inp.gpu()
      tar = tar.gpu()

      # roll if requested
      if self.train and self.roll:
        shift = fn.random.uniform(device = "cpu",
                                  dtype = types.INT32,
                                  range = [0, img_shape_y])

        inp = fn.cat(inp[:, :, :, shift:], inp[:, :, :, :shift], device="gpu", axis = 3)
        tar = fn.cat(tar[:, :, :, shift:], tar[:, :, :, :shift], device="gpu", axis = 3)

      # normalize if requested
      if self.normalize:
        inp = fn.normalize(inp,
                           device = "gpu",
                           axis_names = self.norm_channels,
                           batch = self.norm_batch,
                           mean = self.in_bias,
                           stddev = self.in_scale)

        tar = fn.normalize(tar,
                           device = 'gpu',
                           axis_names = self.norm_channels,
                           batch = self.norm_batch,
                           mean = self.out_bias,
                           stddev = self.out_scale)

      # add noise if requested
      if self.add_noise:
        inp = fn.noise.gaussian(inp, device = "gpu", stddev = self.noise_std, seed = self.local_seed)

      pipeline.set_outputs(inp, tar)

    return pipeline

  def __init__(self, params, location, train, seed = 333):
    # set up seeds
    # this one is the same on all ranks
    self.global_seed = seed
    # this one is the same for all ranks of the same model
    model_id = params.world_rank // params.model_parallel_size
    self.model_seed = self.global_seed + model_id
    # this seed is supposed to be diffferent for every rank
    self.local_seed = self.global_seed + params.world_rank

    self.num_data_workers = params.num_data_workers
    self.device_index = torch.cuda.current_device()
    self.batch_size = int(params.batch_size)
    self.location = location
    self.train = train
    self.dt = params.dt
    self.n_history = params.n_history
    self.n_future = params.n_future if train else params.valid_autoreg_steps
    self.in_channels = params.in_channels
    self.out_channels = params.out_channels
    self.roll = params.roll
    self.max_samples = params.train_max_samples if train else params.valid_max_samples
    self.samples_per_epoch = params.train_samples_per_epoch if train else params.valid_samples_per_epoch
    self.add_noise = params.add_noise if train else False
    self.noise_std = params.noise_std
    self.crop_size = (params.crop_size_x, params.crop_size_y) if train else None

    # sharding: one shard per data-parallel rank
    self.num_shards = params.data_num_shards
    self.shard_id = params.data_shard_id

    # normalization
    self.normalize = True
    means = np.load(params.global_means_path)[0][:, 0:params.img_shape_x, 0:params.img_shape_y]
    stds = np.load(params.global_stds_path)[0][:, 0:params.img_shape_x, 0:params.img_shape_y]
    if params.normalization == 'zscore':
      self.in_bias = means[self.in_channels]
      self.in_scale = stds[self.in_channels]
      self.out_bias = means[self.out_channels]
      self.out_scale = stds[self.out_channels]
      self.norm_channels = "FHW"
      self.norm_batch = False
    elif params.normalization == 'none':
      self.normalize = False
    else:
      raise NotImplementedError(f"Normalization {params.normalization} not supported by the DALI loader")

    # get data dims from a helper instance
    extsource = esh.GeneralES(self.location,
                              max_samples = self.max_samples,
                              samples_per_epoch = self.samples_per_epoch,
                              train = self.train,
                              batch_size = self.batch_size,
                              n_history = self.n_history,
                              n_future = self.n_future,
                              in_channels = self.in_channels,
                              out_channels = self.out_channels,
                              crop_size = self.crop_size,
                              roll = self.roll,
                              dt = self.dt,
                              num_shards = self.num_shards,
                              shard_id = self.shard_id,
                              enable_logging = False,
                              seed = self.global_seed)

    self.num_steps_per_epoch = len(extsource) // self.batch_size
    self.img_shape_x = extsource.img_shape_x
    self.img_shape_y = extsource.img_shape_y
    self.img_crop_shape_x = extsource.crop_size[0]
    self.img_crop_shape_y = extsource.crop_size[1]
    self.n_samples_total = extsource.n_samples_total
    del extsource

    # create pipeline
    self.pipeline = self.get_pipeline()
    self.pipeline.start_py_workers()
    self.pipeline.build()

    # create iterator
    self.iterator = DALIGenericIterator([self.pipeline], ['inp', 'tar'],
                                        auto_reset = True,
                                        size = -1,
                                        last_batch_policy = LastBatchPolicy.DROP,
                                        prepare_first_batch = True)

  def get_input_normalization(self):
    return self.in_bias, self.in_scale

  def get_output_normalization(self):
    return self.out_bias, self.out_scale

  def __len__(self):
    return self.num_steps_per_epoch

  def __iter__(self):
    # the iterator already returns torch tensors that live on the pipeline's device
    for token in self.iterator:
      inp = token[0]['inp']
      tar = token[0]['tar']

      # collapse history into the channel dim: (B, F, C, H, W) -> (B, F*C, H, W)
      inp = torch.reshape(inp, (inp.shape[0], inp.shape[1] * inp.shape[2], inp.shape[3], inp.shape[4]))
      if self.train and self.n_future == 0:
        tar = torch.squeeze(tar, dim=1)

      yield inp, tar
