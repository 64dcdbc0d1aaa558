"""NVIDIA DALI video pipeline for fast pre-training on Kinetics / WebVid shards.

Decoding happens on the GPU (NVDEC) so CPU workers only read the mp4 bytes.
Roughly 3x faster than the decord workers on 8x A100 with 16-frame clips.

Usage:
    loader = build_dali_loader(file_list, labels, cfg, local_rank, world_size, rank)
    for batch in loader:
        video, label = batch[0]["video"], batch[0]["label"]   # already on cuda:local_rank
"""
import logging
import math

import torch

from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

logger = logging.getLogger(__name__)

IMAGENET_MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
IMAGENET_STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


@pipeline_def
def video_pipe(filenames, labels, sequence_length, stride, crop_size, shard_id, num_shards,
               random_shuffle=True, training=True):
    videos, label = fn.readers.video(
        device="gpu",
        filenames=filenames,
        labels=labels,
        sequence_length=sequence_length,
        stride=stride,
        shard_id=shard_id,
        num_shards=num_shards,
        random_shuffle=random_shuffle,
        initial_fill=64,
        pad_last_batch=True,
        file_list_include_preceding_frame=True,
        name="Reader",
    )
    if training:
        # random resized crop + flip, applied per sequence
        videos = fn.random_resized_crop(videos, size=[crop_size, crop_size],
                                        random_area=[0.25, 1.0])
        mirror = fn.random.coin_flip(probability=0.5)
    else:
        videos = fn.resize(videos, resize_shorter=crop_size)
        mirror = False
    videos = fn.crop_mirror_normalize(
        videos,
        dtype=types.FLOAT,
        output_layout="CFHW",
        crop=(crop_size, crop_size),
        mean=IMAGENET_MEAN,
        std=IMAGENET_STD,
        mirror=mirror,
    )
    return videos, label


class DALIVideoLoader(object):
    """Thin wrapper so the DALI iterator looks like a torch DataLoader to the trainer."""

    def __init__(self, file_list, labels, cfg, local_rank, world_size, rank, training=True):
        self.batch_size = cfg.inputs.batch_size.video
        self.num_frames = cfg.inputs.video_input.num_frames
        self.training = training
        pipe = video_pipe(
            batch_size=self.batch_size,
            num_threads=cfg.get("dali_threads", 4),
            device_id=local_rank,
            seed=cfg.seed + rank,
            filenames=file_list,
            labels=labels,
            sequence_length=self.num_frames,
            stride=cfg.inputs.video_input.get("sample_stride", 4),
            crop_size=cfg.inputs.image_res,
            shard_id=rank,
            num_shards=world_size,
            random_shuffle=training,
            training=training,
        )
        pipe.build()
        self.epoch_size = pipe.epoch_size("Reader")
        self.iterator = DALIGenericIterator(
            [pipe], ["video", "label"],
            reader_name="Reader",
            last_batch_policy=LastBatchPolicy.PARTIAL if not training else LastBatchPolicy.DROP,
            auto_reset=True,
        )
        logger.info(f"[rank {rank}] DALI video loader: {self.epoch_size} clips, "
                    f"{len(self)} iters/epoch, decoding on cuda:{local_rank}")

    def __len__(self):
        per_shard = self.epoch_size // max(1, torch.distributed.get_world_size() if torch.distributed.is_initialized() else 1)
        return math.ceil(per_shard / self.batch_size)

    def __iter__(self):
        for batch in self.iterator:
            video = batch[0]["video"]  # (B, C, T, H, W) float32 on the GPU
            label = batch[0]["label"].squeeze(-1).long()
            # the model expects (B, T, C, H, W)
            yield video.permute(0, 2, 1, 3, 4).contiguous(), label

    @property
    def sampler(self):
        # DALI shards internally; keep `set_epoch` calls from the trainer harmless
        class _NoOpSampler(object):
            def set_epoch(self, epoch):
                pass
        return _NoOpSampler()


def build_dali_loader(file_list, labels, cfg, local_rank=None, world_size=1, rank=0, training=True):
    if local_rank is None:
        local_rank = torch.cuda.current_device()
    return DALIVideoLoader(file_list, labels, cfg, local_rank, world_size, rank, training=training)
