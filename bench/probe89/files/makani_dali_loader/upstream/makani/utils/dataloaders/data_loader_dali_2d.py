# SPDX-License-Identifier: Apache-2.0
"""DALI pipeline feeding ERA5 (lat x lon x channel) samples straight into GPU memory.

Samples are read from HDF5 by a Python external source (one reader per rank, sharded by the
data-parallel rank), copied to the GPU by DALI, normalized and optionally augmented there,
and handed to the training loop as torch tensors without a host round-trip.
"""
import logging

import numpy as np
import torch

# DALI
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

from makani.utils import comm
from makani.utils.dataloaders.dali_es_helper_2d import GeneralES


class ERA5DaliESDataloader(object):
    def get_pipeline(self):
        pipeline = Pipeline(
            batch_size=self.batchsize,
            num_threads=2,
            device_id=self.device_index,  # CUDA device ordinal
            py_num_workers=self.num_data_workers,
            py_start_method="spawn",
            seed=self.global_seed,
            prefetch_queue_depth=2,
        )

        img_shape_x = self.img_shape_x
        img_shape_y = self.img_shape_y
        in_channels = self.in_channels
        out_channels = self.out_channels

        with pipeline:
            # get input and target
            data = fn.external_source(
                source=self.extsource,
                num_outputs=4,
                layout=["FHWC", "FHWC", "F", "F"],
                batch=False,
                no_copy=True,
                parallel=True,
                prefetch_queue_depth=self.num_data_workers,
            )
            inp, tar, izen, tzen = data

            # move to the device
            inp = inp.gpu()
            tar = tar.gpu()

            # normalize if requested
            if self.normalize:
                inp = fn.normalize(inp, device="gpu", axis_names=self.norm_channels,
                                   batch=self.norm_batch, mean=self.in_bias, stddev=self.in_scale)
                tar = fn.normalize(tar, device="gpu", axis_names=self.norm_channels,
                                   batch=self.norm_batch, mean=self.out_bias, stddev=self.out_scale)

            # add noise if requested
            if self.add_noise:
                inp = fn.noise.gaussian(inp, device="gpu", stddev=self.noise_std, seed=self.local_seed)

            # random roll in longitude (periodic) for augmentation
            if self.roll:
                shift = fn.random.uniform(range=[0, img_shape_y], dtype=types.INT32, seed=self.local_seed)
                inp = fn.roll(inp, shift=shift, axis_names="W", device="gpu")
                tar = fn.roll(tar, shift=shift, axis_names="W", device="gpu")

            # transpose to NCHW-like: F C H W
            inp = fn.transpose(inp, device="gpu", perm=[0, 3, 1, 2])
            tar = fn.transpose(tar, device="gpu", perm=[0, 3, 1, 2])

            pipeline.set_outputs(inp, tar, izen, tzen)

        return pipeline

    def __init__(self, params, location, train, seed=333, final_eval=False):
        self.num_data_workers = params.num_data_workers
        self.device_index = torch.cuda.current_device()
        self.device = torch.device(f"cuda:{self.device_index}")
        self.batchsize = int(params.batch_size)

        # set up seeds: the global seed is the same on all ranks, the local one differs
        self.global_seed = seed
        self.local_seed = seed + comm.get_rank("data")

        self.location = location
        self.train = train
        self.dt = params.dt
        self.dhours = params.dhours
        self.n_history = params.n_history
        self.n_future = params.n_future if train else params.valid_autoreg_steps
        self.in_channels = params.in_channels
        self.out_channels = params.out_channels
        self.img_shape_x = params.img_shape_x
        self.img_shape_y = params.img_shape_y
        self.roll = params.get("roll", False) and train
        self.add_noise = params.get("add_noise", False) and train
        self.noise_std = params.get("noise_std", 0.0)
        self.normalize = True
        self.norm_channels = "FHW" if params.normalization == "zscore" else "FHWC"
        self.norm_batch = False

        # load stats
        bias = np.load(params.global_means_path)[:, self.in_channels]
        scale = np.load(params.global_stds_path)[:, self.in_channels]
        self.in_bias = bias.astype(np.float32)
        self.in_scale = scale.astype(np.float32)
        self.out_bias = np.load(params.global_means_path)[:, self.out_channels].astype(np.float32)
        self.out_scale = np.load(params.global_stds_path)[:, self.out_channels].astype(np.float32)

        # create the external source; every data-parallel rank reads its own shard
        self.extsource = GeneralES(
            self.location,
            max_samples=None,
            samples_per_epoch=None,
            train=self.train,
            batch_size=self.batchsize,
            dt=self.dt,
            dhours=self.dhours,
            n_history=self.n_history,
            n_future=self.n_future,
            in_channels=self.in_channels,
            out_channels=self.out_channels,
            crop_size=(params.crop_size_x, params.crop_size_y),
            num_shards=comm.get_size("data"),
            shard_id=comm.get_rank("data"),
            device_id=self.device_index,
            truncate_old=True,
            zenith_angle=params.add_zenith,
            seed=self.global_seed,
            is_parallel=True,
        )

        # some image properties
        self.img_crop_shape_x = self.extsource.crop_size[0]
        self.img_crop_shape_y = self.extsource.crop_size[1]
        self.num_steps_per_epoch = len(self.extsource) // self.batchsize

        # create pipeline
        self.pipeline = self.get_pipeline()
        self.pipeline.start_py_workers()
        self.pipeline.build()

        # create iterator
        outnames = ["inp", "tar", "izen", "tzen"]
        self.iterator = DALIGenericIterator(
            [self.pipeline],
            outnames,
            auto_reset=True,
            size=-1,
            last_batch_policy=LastBatchPolicy.DROP,
            prepare_first_batch=True,
        )
        logging.info(f"DALI loader on device {self.device_index}: {self.num_steps_per_epoch} steps/epoch")

    def get_input_normalization(self):
        return self.in_bias, self.in_scale

    def get_output_normalization(self):
        return self.out_bias, self.out_scale

    def __len__(self):
        return self.num_steps_per_epoch

    def __iter__(self):
        for token in self.iterator:
            inp = token[0]["inp"]
            tar = token[0]["tar"]
            izen = token[0]["izen"]
            tzen = token[0]["tzen"]
            # DALI hands back tensors already on self.device
            result = inp, tar
            if self.extsource.zenith_angle:
                result = (inp, tar, izen.to(self.device, non_blocking=True),
                          tzen.to(self.device, non_blocking=True))
            yield result
