"""NVIDIA DALI input pipelines for video clips and frame folders.

The video reader decodes with NVDEC straight into GPU memory and all augmentation
(resize, crop, flip, normalize) runs on the GPU, so the training loop receives CUDA
tensors in NCTHW layout.
"""
import os

import torch
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import pipeline_def
from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

_MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
_STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def _read_file_list(file_list, root):
    filenames, labels = [], []
    with open(file_list) as f:
        for line in f:
            path, label = line.strip().rsplit(" ", 1)
            filenames.append(os.path.join(root, path))
            labels.append(int(label))
    return filenames, labels


@pipeline_def
def video_pipe(filenames, labels, sequence_length, stride, crop_size, shard_id, num_shards,
               is_training=True):
    videos, label = fn.readers.video(
        device="gpu",
        filenames=filenames,
        labels=labels,
        sequence_length=sequence_length,
        stride=stride,
        shard_id=shard_id,
        num_shards=num_shards,
        random_shuffle=is_training,
        initial_fill=64,
        pad_last_batch=True,
        file_list_include_preceding_frame=True,
        skip_vfr_check=True,
        name="Reader",
    )
    if is_training:
        videos = fn.random_resized_crop(videos, size=crop_size, random_area=(0.08, 1.0))
        mirror = fn.random.coin_flip(probability=0.5)
    else:
        videos = fn.resize(videos, resize_shorter=int(crop_size * 256 / 224))
        videos = fn.crop(videos, crop=(crop_size, crop_size))
        mirror = False
    videos = fn.crop_mirror_normalize(
        videos,
        dtype=types.FLOAT,
        output_layout="CFHW",
        mean=_MEAN,
        std=_STD,
        mirror=mirror,
    )
    return videos, label


@pipeline_def
def frames_pipe(file_root, crop_size, shard_id, num_shards, is_training=True):
    jpegs, label = fn.readers.file(
        file_root=file_root, shard_id=shard_id, num_shards=num_shards,
        random_shuffle=is_training, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_shorter=crop_size)
    images = fn.crop_mirror_normalize(
        images, dtype=types.FLOAT, output_layout="CHW", crop=(crop_size, crop_size),
        mean=_MEAN, std=_STD)
    return images, label


class DALIVideoLoader:
    """Wraps a DALI pipeline so it looks like a torch DataLoader to the trainer."""

    def __init__(self, file_list, root, batch_size, num_threads=4, sequence_length=16, stride=4,
                 crop_size=224, is_training=True, seed=42):
        self.local_rank = int(os.environ.get("LOCAL_RANK", 0))
        self.rank = int(os.environ.get("RANK", 0))
        self.world_size = int(os.environ.get("WORLD_SIZE", 1))
        self.batch_size = batch_size

        filenames, labels = _read_file_list(file_list, root)
        self.num_samples = len(filenames)
        self.pipe = video_pipe(
            batch_size=batch_size,
            num_threads=num_threads,
            device_id=self.local_rank,
            seed=seed + self.rank,
            filenames=filenames,
            labels=labels,
            sequence_length=sequence_length,
            stride=stride,
            crop_size=crop_size,
            shard_id=self.rank,
            num_shards=self.world_size,
            is_training=is_training,
        )
        self.pipe.build()
        self.iterator = DALIGenericIterator(
            [self.pipe],
            ["data", "label"],
            reader_name="Reader",
            last_batch_policy=LastBatchPolicy.PARTIAL if not is_training else LastBatchPolicy.DROP,
            auto_reset=True,
        )

    def __iter__(self):
        for batch in self.iterator:
            data = batch[0]["data"]  # (N, C, T, H, W) float on cuda:local_rank
            label = batch[0]["label"].squeeze(-1).long()
            label = label.cuda(non_blocking=True)
            yield data, label

    def __len__(self):
        return (self.num_samples // self.world_size + self.batch_size - 1) // self.batch_size


def build_dali_loader(args, is_training=True):
    torch.cuda.set_device(args.local_rank)
    file_list = args.train_list if is_training else args.val_list
    return DALIVideoLoader(
        file_list,
        args.data_root,
        batch_size=args.batch_size,
        num_threads=args.num_workers,
        sequence_length=args.num_frames,
        stride=args.sampling_rate,
        crop_size=args.input_size,
        is_training=is_training,
    )
