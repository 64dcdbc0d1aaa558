"""
Modified from https://github.com/m-bain/frozen-in-time/blob/22a91d78405ec6032fdf521ae1ff5573358e632f/base/base_dataset.py
"""
import random
import io
import os
import av
import cv2
import decord
import imageio
from decord import VideoReader
import torch
import torchvision
import numpy as np
import math
import gc
import logging

logger = logging.getLogger(__name__)

# Decoding on the GPU (NVDEC) is only used by the in-process readers below
# (zero-shot eval / feature dumping). DataLoader workers always decode on CPU.
DECODE_ON_GPU = os.environ.get("VIDEO_DECODE_ON_GPU", "0") == "1"


def pts_to_secs(pts: int, time_base: float, start_pts: int) -> float:
    """
    Converts a present time with the given time base and start_pts offset to seconds.

    Returns:
        time_in_seconds (float): The corresponding time in seconds.

    https://github.com/facebookresearch/pytorchvideo/blob/main/pytorchvideo/data/utils.py#L54-L64
    """
    if pts == math.inf:
        return math.inf

    return int(pts - start_pts) * time_base


def get_pyav_video_duration(video_reader):
    video_stream = video_reader.streams.video[0]
    video_duration = pts_to_secs(
        video_stream.duration,
        video_stream.time_base,
        video_stream.start_time
    )
    return float(video_duration)


def get_frame_indices(num_frames, vlen, sample='rand', fix_start=None, input_fps=1, max_num_frames=-1):
    if sample in ["rand", "middle"]: # uniform sampling
        acc_samples = min(num_frames, vlen)
        # split the video into `acc_samples` intervals, and sample from each interval.
        intervals = np.linspace(start=0, stop=vlen, num=acc_samples + 1).astype(int)
        ranges = []
        for idx, interv in enumerate(intervals[:-1]):
            ranges.append((interv, intervals[idx + 1] - 1))
        if sample == 'rand':
            try:
                frame_indices = [random.choice(range(x[0], x[1])) for x in ranges]
            except:
                frame_indices = np.random.permutation(vlen)[:acc_samples]
                frame_indices.sort()
                frame_indices = list(frame_indices)
        elif fix_start is not None:
            frame_indices = [x[0] + fix_start for x in ranges]
        elif sample == 'middle':
            frame_indices = [(x[0] + x[1]) // 2 for x in ranges]
        else:
            raise NotImplementedError

        if len(frame_indices) < num_frames:  # padded with last frame
            padded_frame_indices = [frame_indices[-1]] * num_frames
            padded_frame_indices[:len(frame_indices)] = frame_indices
            frame_indices = padded_frame_indices
    elif "fps" in sample:  # fps0.5, sequentially sample frames at 0.5 fps
        output_fps = float(sample[3:])
        duration = float(vlen) / input_fps
        delta = 1 / output_fps  # gap between frames, this is also the clip length each frame represents
        frame_seconds = np.arange(0 + delta / 2, duration + delta / 2, delta)
        frame_indices = np.around(frame_seconds * input_fps).astype(int)
        frame_indices = [e for e in frame_indices if e < vlen]
        if max_num_frames > 0 and len(frame_indices) > max_num_frames:
            frame_indices = frame_indices[:max_num_frames]
            # frame_indices = np.linspace(0 + delta / 2, duration + delta / 2, endpoint=False, num=max_num_frames)
    else:
        raise ValueError
    return frame_indices


def read_frames_av(
        video_path, num_frames, sample='rand', fix_start=None,
        max_num_frames=-1, client=None, trimmed30=False,
    ):
    reader = av.open(video_path)
    frames = [torch.from_numpy(f.to_rgb().to_ndarray()) for f in reader.decode(video=0)]
    vlen = len(frames)
    duration = get_pyav_video_duration(reader)
    fps = vlen / float(duration)
    frame_indices = get_frame_indices(
        num_frames, vlen, sample=sample, fix_start=fix_start,
        input_fps=fps, max_num_frames=max_num_frames
    )
    frames = torch.stack([frames[idx] for idx in frame_indices])  # (T, H, W, C), torch.uint8
    frames = frames.permute(0, 3, 1, 2)  # (T, C, H, W), torch.uint8
    return frames, frame_indices, duration


def read_frames_gif(
        video_path, num_frames, sample='rand', fix_start=None,
        max_num_frames=-1, client=None, trimmed30=False,
    ):
    if video_path.startswith('s3') or video_path.startswith('p2'):
        video_bytes = client.get(video_path)
        gif = imageio.get_reader(io.BytesIO(video_bytes))
    else:
        gif = imageio.get_reader(video_path)
    vlen = len(gif)
    frame_indices = get_frame_indices(
        num_frames, vlen, sample=sample, fix_start=fix_start,
        max_num_frames=max_num_frames
    )
    frames = []
    for index, frame in enumerate(gif):
        # for index in frame_idxs:
        if index in frame_indices:
            frame = cv2.cvtColor(frame, cv2.COLOR_RGBA2RGB)
            frame = torch.from_numpy(frame).byte()
            # # (H x W x C) to (C x H x W)
            frame = frame.permute(2, 0, 1)
            frames.append(frame)
    frames = torch.stack(frames)  # .float() / 255

    return frames, frame_indices, None


def read_frames_decord(
        video_path, num_frames, sample='rand', fix_start=None,
        max_num_frames=-1, client=None, trimmed30=False
    ):
    if video_path.startswith('s3') or video_path.startswith('p2'):
        video_bytes = client.get(video_path)
        video_reader = VideoReader(io.BytesIO(video_bytes), num_threads=1)
    else:
        video_reader = VideoReader(video_path, num_threads=1)
    vlen = len(video_reader)
    fps = video_reader.get_avg_fps()
    duration = vlen / float(fps)

    # only use top 30 seconds
    if trimmed30 and duration > 30:
        duration = 30
        vlen = int(30 * float(fps))

    frame_indices = get_frame_indices(
        num_frames, vlen, sample=sample, fix_start=fix_start,
        input_fps=fps, max_num_frames=max_num_frames
    )

    frames = video_reader.get_batch(frame_indices)  # (T, H, W, C), torch.uint8
    frames = frames.permute(0, 3, 1, 2)  # (T, C, H, W), torch.uint8
    return frames, frame_indices, duration


def _decord_ctx():
    """decord context for in-process decoding; NVDEC only when asked for and a GPU exists."""
    if DECODE_ON_GPU and torch.cuda.is_available():
        return decord.gpu(torch.cuda.current_device())
    return decord.cpu(0)


def read_frames_decord_gpu(
        video_path, num_frames, sample='middle', fix_start=None,
        max_num_frames=-1, client=None, trimmed30=False
    ):
    """NVDEC-backed decord reader used by the zero-shot eval (one process per GPU).

    Requires decord built with -DUSE_CUDA=ON. Frames come back as CUDA uint8 tensors,
    so the normalisation in the eval transform runs on the GPU as well.
    """
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    video_reader = VideoReader(video_path, ctx=decord.gpu(local_rank), num_threads=1)
    vlen = len(video_reader)
    fps = video_reader.get_avg_fps()
    duration = vlen / float(fps)
    frame_indices = get_frame_indices(
        num_frames, vlen, sample=sample, fix_start=fix_start,
        input_fps=fps, max_num_frames=max_num_frames
    )
    frames = video_reader.get_batch(frame_indices)  # (T, H, W, C) on cuda:local_rank
    frames = frames.permute(0, 3, 1, 2)
    return frames, frame_indices, duration


def read_frames_torchvision_gpu(
        video_path, num_frames, sample='middle', fix_start=None,
        max_num_frames=-1, client=None, trimmed30=False
    ):
    """torchvision GPU decoder (torchvision must be built with NVDEC support)."""
    reader = torchvision.io.VideoReader(video_path, "video", device="cuda")
    meta = reader.get_metadata()["video"]
    fps = meta["fps"][0]
    duration = meta["duration"][0]
    all_frames = [frame["data"] for frame in reader]
    vlen = len(all_frames)
    frame_indices = get_frame_indices(
        num_frames, vlen, sample=sample, fix_start=fix_start,
        input_fps=fps, max_num_frames=max_num_frames
    )
    frames = torch.stack([all_frames[i] for i in frame_indices])  # (T, H, W, C)
    frames = frames.permute(0, 3, 1, 2)
    del all_frames
    gc.collect()
    return frames, frame_indices, duration


def read_frames_decord_inproc(video_path, num_frames, sample='middle', **kwargs):
    """Main-process decoding for small eval sets (falls back to CPU automatically)."""
    video_reader = VideoReader(video_path, ctx=_decord_ctx(), num_threads=1)
    vlen = len(video_reader)
    fps = video_reader.get_avg_fps()
    frame_indices = get_frame_indices(num_frames, vlen, sample=sample, input_fps=fps)
    frames = video_reader.get_batch(frame_indices).permute(0, 3, 1, 2)
    return frames, frame_indices, vlen / float(fps)


VIDEO_READER_FUNCS = {
    'av': read_frames_av,
    'decord': read_frames_decord,
    'gif': read_frames_gif,
    'decord_gpu': read_frames_decord_gpu,
    'torchvision_gpu': read_frames_torchvision_gpu,
    'decord_inproc': read_frames_decord_inproc,
}
