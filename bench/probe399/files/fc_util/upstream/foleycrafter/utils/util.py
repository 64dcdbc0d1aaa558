import glob
import io
import os
import os.path as osp
import random
from typing import Union

import imageio
import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.distributed as dist
import torchvision
import torchvision.transforms as transforms
from einops import rearrange
from moviepy.editor import VideoFileClip
from PIL import Image
from tqdm import tqdm

from diffusers import (
    AutoencoderKL,
    ControlNetModel,
    DDIMScheduler,
    PNDMScheduler,
    UNet2DConditionModel,
)
from diffusers.utils.import_utils import is_xformers_available
from transformers import CLIPTextModel, CLIPTokenizer

from foleycrafter.models.auffusion_unet import UNet2DConditionModel as AffusionUNet
from foleycrafter.models.adapters.ip_adapter import VideoProjModel
from foleycrafter.models.auffusion.attention_processor import AttnProcessor2_0
from foleycrafter.pipelines.pipeline_controlnet import StableDiffusionControlNetPipeline
from foleycrafter.models.time_detector.resnet import resnet9


def zero_rank_print(s):
    if (not dist.is_initialized()) or (dist.is_initialized() and dist.get_rank() == 0):
        print("### " + s, flush=True)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def save_videos_grid(videos: torch.Tensor, path: str, rescale=False, n_rows=6, fps=8):
    videos = rearrange(videos, "b c t h w -> t b c h w")
    outputs = []
    for x in videos:
        x = torchvision.utils.make_grid(x, nrow=n_rows)
        x = x.transpose(0, 1).transpose(1, 2).squeeze(-1)
        if rescale:
            x = (x + 1.0) / 2.0  # -1,1 -> 0,1
        x = (x * 255).numpy().astype(np.uint8)
        outputs.append(x)

    os.makedirs(os.path.dirname(path), exist_ok=True)
    imageio.mimsave(path, outputs, fps=fps)


def save_videos_from_pil_list(videos: list, path: str, fps=7):
    for i in range(len(videos)):
        videos[i] = np.array(videos[i])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    imageio.mimwrite(path, videos, fps=fps)


def read_frames_with_moviepy(video_path, max_frame_nums=None):
    clip = VideoFileClip(video_path)
    duration = clip.duration
    frames = []
    for frame in clip.iter_frames():
        frames.append(frame)
    if max_frame_nums is not None:
        frames_idx = np.linspace(0, len(frames) - 1, max_frame_nums, dtype=int)
    return np.array(frames)[frames_idx, ...], duration


def read_frames_with_moviepy_resample(video_path, save_path):
    vision_transform_list = [
        transforms.Resize((128, 128)),
        transforms.CenterCrop((112, 112)),
    ]
    video_transform = transforms.Compose(vision_transform_list)
    os.makedirs(save_path, exist_ok=True)
    command = f"ffmpeg -v quiet -y -i {video_path} -r 15 {save_path}/%04d.jpg"
    os.system(command)
    frame_paths = sorted(glob.glob(f"{save_path}/*.jpg"))
    frames = []
    for frame_path in frame_paths:
        frame = Image.open(frame_path).convert("RGB")
        frames.append(video_transform(frame))
    return frames


def spec_to_figure(spec, vmin=None, vmax=None, title="", f0s=None, dur_info=None):
    if isinstance(spec, torch.Tensor):
        spec = spec.cpu().numpy()
    H = spec.shape[1] // 2
    fig = plt.figure(figsize=(12, 6))
    plt.title(title)
    plt.pcolor(spec.T, vmin=vmin, vmax=vmax)
    if dur_info is not None:
        assert isinstance(dur_info, dict)
        txt = dur_info["txt"]
        dur_gt = dur_info["dur_gt"]
        if isinstance(dur_gt, torch.Tensor):
            dur_gt = dur_gt.cpu().numpy()
        dur_gt = np.cumsum(dur_gt).astype(int)
        for i in range(len(dur_gt)):
            shift = (i % 8) + 1
            plt.text(dur_gt[i], shift * 4, txt[i])
            plt.vlines(dur_gt[i], 0, H // 2, colors="b")
        plt.xlim(0, dur_gt[-1])
    if f0s is not None:
        ax = plt.gca()
        ax2 = ax.twinx()
        if not isinstance(f0s, dict):
            f0s = {"f0": f0s}
        for i, (k, f0) in enumerate(f0s.items()):
            if isinstance(f0, torch.Tensor):
                f0 = f0.cpu().numpy()
            ax2.plot(np.arange(len(f0)) + 0.5, f0, label=k, c=["r", "g", "b"][i], linewidth=1, alpha=0.5)
        ax2.set_ylim(0, 1000)
        ax2.legend()
    return fig


def fig_to_image(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    plt.close(fig)
    buf.seek(0)
    return Image.open(buf)


def gpu_memory_gb():
    return torch.cuda.memory_allocated() / 1024**3


def build_foleycrafter(
    pretrained_model_name_or_path: str = "auffusion/auffusion-full-no-adapter",
) -> StableDiffusionControlNetPipeline:
    vae = AutoencoderKL.from_pretrained(pretrained_model_name_or_path, subfolder="vae")
    unet = AffusionUNet.from_pretrained(pretrained_model_name_or_path, subfolder="unet")
    scheduler = PNDMScheduler.from_pretrained(pretrained_model_name_or_path, subfolder="scheduler")
    tokenizer = CLIPTokenizer.from_pretrained(pretrained_model_name_or_path, subfolder="tokenizer")
    text_encoder = CLIPTextModel.from_pretrained(pretrained_model_name_or_path, subfolder="text_encoder")

    controlnet = ControlNetModel.from_unet(unet, conditioning_channels=1)

    pipe = StableDiffusionControlNetPipeline(
        vae=vae,
        controlnet=controlnet,
        unet=unet,
        scheduler=scheduler,
        tokenizer=tokenizer,
        text_encoder=text_encoder,
        feature_extractor=None,
        safety_checker=None,
        requires_safety_checker=False,
    )
    return pipe


def load_model(cp_path, net, device=None, strict=True):
    if not device:
        device = torch.device("cpu")
    if os.path.isfile(cp_path):
        print("=> loading checkpoint '{}'".format(cp_path))
        checkpoint = torch.load(cp_path, map_location=device)

        # check if there is module
        if list(checkpoint["state_dict"].keys())[0][:7] == "module.":
            state_dict = {}
            for k, v in checkpoint["state_dict"].items():
                state_dict[k[7:]] = v
        else:
            state_dict = checkpoint["state_dict"]
        net.load_state_dict(state_dict, strict=strict)

        print("=> loaded checkpoint '{}' (epoch {})".format(cp_path, checkpoint["epoch"]))
        start_epoch = checkpoint["epoch"]
    else:
        print("=> no checkpoint found at '{}'".format(cp_path))
        start_epoch = 0
        raise FileNotFoundError(cp_path)

    return net.to(device), start_epoch


def denormalize_spectrogram(
    data: torch.Tensor,
    max_value: float = 200,
    min_value: float = 1e-5,
    power: float = 1,
    inverse: bool = False,
) -> torch.Tensor:
    max_value = np.log(max_value)
    min_value = np.log(min_value)

    # Flip Y axis: image origin at the top-left corner, spectrogram origin at the bottom-left corner
    data = torch.flip(data, [1])

    assert len(data.shape) == 3, "Expected 3 dimensions, got {}".format(len(data.shape))

    if data.shape[0] == 1:
        data = data.repeat(3, 1, 1)

    assert data.shape[0] == 3, "Expected 3 channels, got {}".format(data.shape[0])
    data = data[0]

    # Reverse the power curve
    data = torch.pow(data, 1 / power)

    # Invert
    if inverse:
        data = 1 - data

    # Rescale to max value
    spectrogram = data * (max_value - min_value) + min_value

    return spectrogram
