"""
Accelerated video decoding with NVDEC
=====================================

.. _nvdec_tutorial:

**Author**: `Moto Hira <moto@meta.com>`__

This tutorial shows how to use NVIDIA’s hardware video decoder (NVDEC)
with TorchAudio, and how it improves the performance of video decoding.
"""

######################################################################
#
# .. note::
#
#    This tutorial requires FFmpeg libraries compiled with HW
#    acceleration enabled.
#
#    Please refer to
#    :ref:`Enabling GPU video decoder/encoder <enabling_hw_decoder>`
#    for how to build FFmpeg with HW acceleration.
#

import torch
import torchaudio

print(torch.__version__)
print(torchaudio.__version__)

######################################################################
#
import os
import time

import matplotlib.pyplot as plt
from torchaudio.io import StreamReader

######################################################################
#
# Check the prerequisites
# -----------------------
#
# First, we check that TorchAudio correctly detects FFmpeg libraries
# that support HW decoder/encoder.
#

from torchaudio.utils import ffmpeg_utils

######################################################################
#

print("FFmpeg Library versions:")
for k, ver in ffmpeg_utils.get_versions().items():
    print(f"  {k}:\t{'.'.join(str(v) for v in ver)}")

######################################################################
#

print("Available NVDEC Decoders:")
for k in ffmpeg_utils.get_video_decoders().keys():
    if "cuvid" in k:
        print(f" - {k}")

######################################################################
#

print("Avaialbe GPU:")
print(torch.cuda.get_device_properties(0))

######################################################################
#
# We will use the following video which has the following properties;
#
# - Codec: H.264
# - Resolution: 960x540
# - FPS: 29.97
# - Pixel format: YUV420P
#

src = torchaudio.utils.download_asset(
    "tutorial-assets/stream-api/NASAs_Most_Scientifically_Complex_Space_Observatory_Requires_Precision-MP4_small.mp4"
)

######################################################################
# Decoding videos with NVDEC
# --------------------------
#
# To use HW video decoder, you need to specify the HW decoder when
# defining the output video stream by passing ``decoder`` option to
# :py:meth:`~torchaudio.io.StreamReader.add_video_stream` method.
#

s = StreamReader(src)
s.add_video_stream(5, decoder="h264_cuvid")
s.fill_buffer()
(video,) = s.pop_chunks()

######################################################################
#
# The video frames are decoded and returned as tensor of NCHW format.

print(video.shape, video.dtype)

######################################################################
#
# By default, the decoded frames are sent back to CPU memory, and
# CPU tensors are created.

print(video.device)

######################################################################
#
# By specifying ``hw_accel`` option, you can convert the decoded frames
# to CUDA tensor.
# ``hw_accel`` option takes string values and pass it
# to :py:class:`torch.device`.
#
# .. note::
#
#    Currently, ``hw_accel`` option and
#    :py:meth:`~torchaudio.io.StreamReader.add_basic_video_stream`
#    are not compatible. ``add_basic_video_stream`` adds post-decoding
#    process, which is designed for frames in CPU memory.
#    Please use :py:meth:`~torchaudio.io.StreamReader.add_video_stream`.
#

s = StreamReader(src)
s.add_video_stream(5, decoder="h264_cuvid", hw_accel="cuda:0")
s.fill_buffer()
(video,) = s.pop_chunks()

print(video.shape, video.dtype, video.device)


######################################################################
# .. note::
#
#    When there are multiple of GPUs available, ``StreamReader`` by
#    default uses the first GPU. You can change this by providing
#    ``"gpu"`` option.
#
# .. code::
#
#    # Video data is sent to CUDA device 0, decoded and
#    # converted on the same device.
#    s.add_video_stream(
#        ...,
#        decoder="h264_cuvid",
#        decoder_option={"gpu": "0"},
#        hw_accel="cuda:0",
#    )
#

######################################################################
# Converting pixel format
# -----------------------
#
# The NVDEC decoder produces NV12; the tensors returned with
# ``hw_accel`` are YUV444 planes, so convert to RGB on the GPU.
#


def yuv_to_rgb(frames):
    frames = frames.cuda().to(torch.float)
    y = frames[..., 0, :, :]
    u = frames[..., 1, :, :]
    v = frames[..., 2, :, :]

    y /= 255
    u = u / 255 - 0.5
    v = v / 255 - 0.5

    r = y + 1.14 * v
    g = y + -0.396 * u - 0.581 * v
    b = y + 2.029 * u

    rgb = torch.stack([r, g, b], -1)
    rgb = (rgb * 255).clamp(0, 255).to(torch.uint8)
    return rgb.cpu()


def plot(frames: torch.Tensor, title: str):
    imgs = yuv_to_rgb(frames)
    fig, axes = plt.subplots(1, len(imgs), figsize=(3 * len(imgs), 3))
    for ax, img in zip(axes, imgs):
        ax.imshow(img)
        ax.set_axis_off()
    fig.suptitle(title)
    plt.tight_layout()


s = StreamReader(src)
s.add_video_stream(5, decoder="h264_cuvid", hw_accel="cuda:0", decoder_option={"crop": "0x0x0x0"})
s.seek(12.0)
s.fill_buffer()
(video,) = s.pop_chunks()
plot(video, "NVDEC decoded frames")

######################################################################
# Resizing and cropping on the decoder
# ------------------------------------
#
# The ``h264_cuvid`` decoder can also resize (``"resize"``) and crop
# (``"crop"``) as part of decoding, which saves a separate GPU kernel.
#

s = StreamReader(src)
s.add_video_stream(
    5,
    decoder="h264_cuvid",
    hw_accel="cuda:0",
    decoder_option={"resize": "480x270"},
)
s.fill_buffer()
(video_small,) = s.pop_chunks()
print(video_small.shape)

######################################################################
# Benchmark
# ---------
#
# We compare the time it takes to decode the whole video with the
# software decoder (``h264``) using several threads against NVDEC.
#


def test_decode_cpu(src, threads, decoder=None, frames_per_chunk=5):
    s = StreamReader(src)
    s.add_video_stream(frames_per_chunk, decoder=decoder, decoder_option={"threads": f"{threads}"})

    num_frames = 0
    t0 = time.monotonic()
    for i, (chunk,) in enumerate(s.stream()):
        num_frames += chunk.shape[0]
    elapsed = time.monotonic() - t0
    fps = num_frames / elapsed
    print(f" - Shape: {chunk.shape}")
    print(f" - Processed {num_frames} frames in {elapsed:.2f} seconds. ({fps:.2f} fps)")
    return fps


def test_decode_cuda(src, decoder, hw_accel="cuda", frames_per_chunk=5):
    s = StreamReader(src)
    s.add_video_stream(frames_per_chunk, decoder=decoder, hw_accel=hw_accel)

    num_frames = 0
    chunk = None
    t0 = time.monotonic()
    for (chunk,) in s.stream():
        num_frames += chunk.shape[0]
    torch.cuda.synchronize()
    elapsed = time.monotonic() - t0
    fps = num_frames / elapsed
    print(f" - Shape: {chunk.shape}")
    print(f" - Processed {num_frames} frames in {elapsed:.2f} seconds. ({fps:.2f} fps)")
    return fps


def run_decode_tests(src, frames_per_chunk=5):
    fps = []
    print(f"Testing: {os.path.basename(src)}")
    for threads in [1, 4, 8, 16]:
        print(f"* Software decoding (num_threads={threads})")
        fps.append(test_decode_cpu(src, threads))
    print("* Hardware decoding")
    fps.append(test_decode_cuda(src, decoder="h264_cuvid"))
    return fps


fps_cpu_gpu = run_decode_tests(src)


def plot_fps(fps):
    fig, ax = plt.subplots(figsize=[9.6, 6.4])
    xs = ["CPU\n(1 thread)", "CPU\n(4 threads)", "CPU\n(8 threads)", "CPU\n(16 threads)", "NVDEC"]
    ax.bar(xs, fps)
    ax.set_ylabel("Frames per second")
    ax.grid(axis="y")
    plt.tight_layout()
    return fig


plot_fps(fps_cpu_gpu)

######################################################################
#
# Encoding with NVENC
# -------------------
#
# The same applies to the encoder: pass ``encoder="h264_nvenc"`` and
# ``hw_accel`` to :py:meth:`~torchaudio.io.StreamWriter.add_video_stream`
# and write CUDA tensors directly.
#

from torchaudio.io import StreamWriter

dst = "nvenc_output.mp4"
w = StreamWriter(dst)
w.add_video_stream(
    frame_rate=29.97,
    width=960,
    height=540,
    format="rgb24",
    encoder="h264_nvenc",
    encoder_format="yuv444p",
    hw_accel="cuda",
)
frames = torch.randint(0, 255, (60, 3, 540, 960), dtype=torch.uint8, device="cuda:0")
with w.open():
    w.write_video_chunk(0, frames)
print(f"wrote {os.path.getsize(dst) / 1024:.1f} KiB to {dst}")

######################################################################
#
# Tag: :obj:`torchaudio.io`
