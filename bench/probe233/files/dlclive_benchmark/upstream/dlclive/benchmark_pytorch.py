"""
DeepLabCut Toolbox (deeplabcut.org)
© A. & M. Mathis Labs

Licensed under GNU Lesser General Public License v3.0

Benchmark DeepLabCut-Live (PyTorch engine) on a set of videos: measures inference
speed per frame, and records the system the benchmark was run on so results from
different labs / GPUs can be compared on the DLC-Live benchmarking page.
"""
from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

import cv2
import numpy as np
import torch
from tqdm import tqdm

from dlclive import DLCLive
from dlclive.version import __version__

try:
    import pynvml

    pynvml.nvmlInit()
    _HAS_NVML = True
except Exception:  # pynvml missing or no NVIDIA driver
    _HAS_NVML = False


def get_system_info() -> dict:
    """Return summary info for system running benchmark

    Returns
    -------
    dict
        Dictionary containing the following system information:
        * ``host_name`` (str): name of machine
        * ``op_sys`` (str): operating system
        * ``python`` (str): path to python (which conda/virtual environment)
        * ``device_type`` (str): type of device used ('CPU' or 'GPU')
        * ``device`` (list): list containing the name of the device
        * ``freeze`` (list): list of installed packages and versions
        * ``python_version`` (str): python version
        * ``git_hash`` (str, None): If installed from git repository, hash of HEAD commit
        * ``dlclive_version`` (str): dlclive version from :data:`dlclive.VERSION`
    """
    # get os
    op_sys = platform.platform()
    host_name = platform.node().replace(" ", "")

    # A string giving the absolute path of the executable binary for the Python
    # interpreter, on systems where this makes sense.
    if platform.system() == "Windows":
        host_python = sys.executable.split(os.path.sep)[-2]
    else:
        host_python = sys.executable.split(os.path.sep)[-3]

    # try to get git hash if possible
    dlc_basedir = os.path.dirname(os.path.dirname(__file__))
    git_hash = None
    try:
        git_hash = subprocess.check_output(
            ["git", "rev-parse", "HEAD"], cwd=dlc_basedir
        )
        git_hash = git_hash.decode("utf-8").rstrip("\n")
    except subprocess.CalledProcessError:
        # not installed from git repo (e.g., pypi)
        # fine, keep git_hash as None
        pass

    # get device info (GPU or CPU)
    if torch.cuda.is_available():
        dev_type = "GPU"
        dev = [torch.cuda.get_device_name(torch.cuda.current_device())]
        driver = _nvidia_driver_version()
    else:
        from cpuinfo import get_cpu_info

        dev_type = "CPU"
        dev = [get_cpu_info()["brand_raw"]]
        driver = None

    return {
        "host_name": host_name,
        "op_sys": op_sys,
        "python": host_python,
        "device_type": dev_type,
        "device": dev,
        "driver": driver,
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
        "python_version": sys.version,
        "git_hash": git_hash,
        "dlclive_version": __version__,
    }


def _nvidia_driver_version() -> str | None:
    """Reads the driver version with nvidia-smi (None if it cannot be found)"""
    try:
        out = subprocess.check_output(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]
        )
        return out.decode().strip().split("\n")[0]
    except (OSError, subprocess.CalledProcessError):
        return None


def _gpu_utilization(index: int = 0) -> float | None:
    """Current GPU utilization in percent, through NVML"""
    if not _HAS_NVML:
        return None
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    return float(pynvml.nvmlDeviceGetUtilizationRates(handle).gpu)


def benchmark(
    model_path: str,
    model_type: str,
    video_path: str,
    device: str = "cuda",
    precision: str = "FP32",
    resize: float | None = None,
    pixels: int | None = None,
    cropping: list[int] | None = None,
    dynamic: tuple[bool, float, int] = (False, 0.5, 10),
    n_frames: int = 1000,
    print_rate: bool = False,
    display: bool = False,
    pcutoff: float = 0.0,
    display_radius: int = 3,
    cmap: str = "bmy",
    save_poses: bool = False,
    save_video: bool = False,
    output: str | None = None,
    profile: bool = False,
) -> tuple[np.ndarray, dict]:
    """Analyze video to benchmark inference time and GPU usage

    Parameters
    ----------
    model_path : str
        path to exported DeepLabCut model
    model_type: str
        "pytorch" or "onnx"
    video_path : str
        path to video file
    device: str
        torch device to benchmark, e.g. "cuda:0" or "cpu"
    ...

    Returns
    -------
    :class:`numpy.ndarray`
        vector of inference times
    dict
        the benchmark statistics
    """
    cap = cv2.VideoCapture(video_path)
    if not cap.isOpened():
        raise ValueError(f"Could not open video {video_path}")

    im_size = (
        int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)),
        int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT)),
    )
    if pixels is not None:
        resize = np.sqrt(pixels / (im_size[0] * im_size[1]))

    dlc_live = DLCLive(
        model_path,
        model_type=model_type,
        device=device,
        precision=precision,
        cropping=cropping,
        dynamic=dynamic,
        resize=resize,
        display=display,
        pcutoff=pcutoff,
        display_radius=display_radius,
        display_cmap=cmap,
    )

    use_gpu = str(device).startswith("cuda")
    if use_gpu:
        torch.cuda.reset_peak_memory_stats()

    # initialize DLCLive and perform inference on the first frame
    ret, frame = cap.read()
    if not ret:
        raise ValueError(f"Could not read the first frame of {video_path}")
    inf_time = time.perf_counter()
    dlc_live.init_inference(frame)
    init_time = time.perf_counter() - inf_time

    times = []
    utilization = []
    poses = []
    frame_index = 0
    total_n_frames = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))
    n_frames = min(n_frames, total_n_frames - 1) if n_frames > 0 else total_n_frames - 1

    profiler = None
    if profile:
        profiler = torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
            schedule=torch.profiler.schedule(wait=5, warmup=5, active=20, repeat=1),
            on_trace_ready=torch.profiler.tensorboard_trace_handler(
                str(Path(output or ".") / "profile")
            ),
        )
        profiler.start()

    iterator = range(n_frames)
    if print_rate:
        iterator = tqdm(iterator)
    for _ in iterator:
        ret, frame = cap.read()
        if not ret:
            warnings.warn(
                f"Did not complete {n_frames:d} frames. There probably were not enough "
                f"frames in the video {video_path}."
            )
            break

        start_time = time.perf_counter()
        if use_gpu:
            torch.cuda.nvtx.range_push(f"frame {frame_index}")
        pose = dlc_live.get_pose(frame)
        if use_gpu:
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()
        times.append(time.perf_counter() - start_time)

        if profiler is not None:
            profiler.step()

        if frame_index % 50 == 0:
            util = _gpu_utilization()
            if util is not None:
                utilization.append(util)

        if save_poses:
            poses.append({"frame": frame_index, "pose": pose})
        frame_index += 1

    if profiler is not None:
        profiler.stop()

    cap.release()
    dlc_live.close()

    stats = {
        "init_time_s": init_time,
        "median_ms": 1000 * float(np.median(times)),
        "fps": 1.0 / float(np.mean(times)),
        "im_size": im_size,
        "resize": resize,
        "mean_gpu_util": float(np.mean(utilization)) if utilization else None,
    }
    if use_gpu:
        stats["peak_memory_mb"] = torch.cuda.max_memory_allocated() / 2**20

    if save_poses and output is not None:
        np.save(Path(output) / f"{Path(video_path).stem}_poses.npy", poses)

    return np.array(times), stats


def main():
    parser = argparse.ArgumentParser(
        description="Benchmark DeepLabCut-Live (PyTorch) inference speed"
    )
    parser.add_argument("model_path", type=str)
    parser.add_argument("video_path", type=str)
    parser.add_argument("--model-type", type=str, default="pytorch")
    parser.add_argument(
        "--device", type=str, default="cuda", help="torch device, e.g. cuda:0 or cpu"
    )
    parser.add_argument("--precision", type=str, default="FP32", choices=["FP32", "FP16"])
    parser.add_argument("-o", "--output", type=str, default=None)
    parser.add_argument("-n", "--n-frames", type=int, default=1000)
    parser.add_argument("-r", "--resize", type=float, default=None)
    parser.add_argument("-p", "--pixels", type=float, default=None)
    parser.add_argument("-v", "--print-rate", action="store_true")
    parser.add_argument("-d", "--display", action="store_true")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--save-poses", action="store_true")
    args = parser.parse_args()

    info = get_system_info()
    print(f"Running on {info['device_type']}: {info['device'][0]}")

    times, stats = benchmark(
        args.model_path,
        args.model_type,
        args.video_path,
        device=args.device,
        precision=args.precision,
        resize=args.resize,
        pixels=args.pixels,
        n_frames=args.n_frames,
        print_rate=args.print_rate,
        display=args.display,
        output=args.output,
        profile=args.profile,
        save_poses=args.save_poses,
    )
    print(
        f"Inference: {stats['median_ms']:.2f} ms median, {stats['fps']:.1f} FPS "
        f"(image size {stats['im_size']}, resize={stats['resize']})"
    )

    if args.output is not None:
        os.makedirs(args.output, exist_ok=True)
        out_file = Path(args.output) / f"benchmark_{info['host_name']}_{int(time.time())}.npz"
        np.savez(out_file, times=times, stats=stats, info=info)
        print(f"Saved benchmark results to {out_file}")


if __name__ == "__main__":
    main()
