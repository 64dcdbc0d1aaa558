"""Joint video-audio generation: AnimateDiff (video) + AudioLDM (audio), coupled through ImageBind.

Both latents are denoised in lock-step; every `couple_every` steps we compute the ImageBind
similarity between the decoded frames and the decoded waveform and back-propagate it into both latents.
"""
import argparse
import datetime
import inspect
import os

import numpy as np
import torch
import torch.nn.functional as F
from diffusers import AudioLDMPipeline, AutoencoderKL, DDIMScheduler
from diffusers.utils.import_utils import is_xformers_available
from einops import rearrange
from omegaconf import OmegaConf
from transformers import CLIPTextModel, CLIPTokenizer

from animatediff.models.unet import UNet3DConditionModel
from animatediff.pipelines.pipeline_animation import AnimationPipeline
from animatediff.utils.util import save_videos_grid, load_weights
from imagebind.models import imagebind_model
from imagebind.models.imagebind_model import ModalityType
from imagebind import data as ib_data


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pretrained_model_path", type=str, default="models/StableDiffusion/stable-diffusion-v1-5")
    parser.add_argument("--inference_config", type=str, default="configs/inference/inference-v1.yaml")
    parser.add_argument("--config", type=str, required=True)
    parser.add_argument("--audioldm", type=str, default="cvssp/audioldm-s-full-v2")
    parser.add_argument("--L", type=int, default=16)
    parser.add_argument("--W", type=int, default=512)
    parser.add_argument("--H", type=int, default=512)
    parser.add_argument("--steps", type=int, default=25)
    parser.add_argument("--couple_every", type=int, default=5)
    parser.add_argument("--couple_lr", type=float, default=0.05)
    parser.add_argument("--out", type=str, default="samples/joint")
    return parser.parse_args()


def imagebind_coupling(ib_model, frames, wave, device):
    # frames: B x C x T x H x W in [0, 1]; wave: B x samples
    frames = rearrange(frames, "b c t h w -> (b t) c h w")
    frames = F.interpolate(frames, size=(224, 224), mode="bilinear", align_corners=False)
    mel = ib_data.waveform2melspec_torch(wave, sample_rate=16000, num_mel_bins=128, target_length=204)
    out = ib_model({ModalityType.VISION: frames.to(device), ModalityType.AUDIO: mel.to(device)})
    v = F.normalize(out[ModalityType.VISION].mean(0, keepdim=True), dim=-1)
    a = F.normalize(out[ModalityType.AUDIO], dim=-1)
    return (v * a).sum(-1).mean()


@torch.no_grad()
def main(args):
    *_, func_args = inspect.getargvalues(inspect.currentframe())
    func_args = dict(func_args)

    time_str = datetime.datetime.now().strftime("%Y-%m-%dT%H-%M-%S")
    savedir = f"{args.out}/{os.path.basename(args.config).split('.')[0]}-{time_str}"
    os.makedirs(savedir)
    torch.backends.cudnn.benchmark = True

    config = OmegaConf.load(args.config)
    inference_config = OmegaConf.load(args.inference_config)

    tokenizer = CLIPTokenizer.from_pretrained(args.pretrained_model_path, subfolder="tokenizer")
    text_encoder = CLIPTextModel.from_pretrained(args.pretrained_model_path, subfolder="text_encoder").cuda()
    vae = AutoencoderKL.from_pretrained(args.pretrained_model_path, subfolder="vae").cuda()
    unet = UNet3DConditionModel.from_pretrained_2d(
        args.pretrained_model_path, subfolder="unet",
        unet_additional_kwargs=OmegaConf.to_container(inference_config.unet_additional_kwargs)).cuda()

    if is_xformers_available():
        unet.enable_xformers_memory_efficient_attention()
    else:
        assert False

    video_pipe = AnimationPipeline(
        vae=vae, text_encoder=text_encoder, tokenizer=tokenizer, unet=unet,
        scheduler=DDIMScheduler(**OmegaConf.to_container(inference_config.noise_scheduler_kwargs)),
    ).to("cuda")
    video_pipe = load_weights(
        video_pipe,
        motion_module_path=config.motion_module,
        dreambooth_model_path=config.get("dreambooth_path", ""),
        lora_model_path=config.get("lora_model_path", ""),
        lora_alpha=config.get("lora_alpha", 0.8),
    ).to(torch.device("cuda"))

    audio_pipe = AudioLDMPipeline.from_pretrained(args.audioldm, torch_dtype=torch.float32).to("cuda")
    ib_model = imagebind_model.imagebind_huge(pretrained=True).eval().to("cuda")

    samples = []
    for prompt_idx, (prompt, n_prompt, audio_prompt, seed) in enumerate(
            zip(config.prompt, config.n_prompt, config.audio_prompt, config.seed)):
        torch.manual_seed(seed)
        print(f"current seed: {torch.initial_seed()}")
        print(f"sampling {prompt} / {audio_prompt} ...")

        video_latents = video_pipe.prepare_initial_latents(1, args.L, args.H, args.W)
        audio_latents = audio_pipe.prepare_latents(1, audio_pipe.unet.config.in_channels, 512,
                                                   torch.float32, "cuda", None)
        video_pipe.scheduler.set_timesteps(args.steps, device="cuda")
        audio_pipe.scheduler.set_timesteps(args.steps, device="cuda")

        for i, (tv, ta) in enumerate(zip(video_pipe.scheduler.timesteps, audio_pipe.scheduler.timesteps)):
            video_latents = video_pipe.denoise_step(video_latents, tv, prompt, n_prompt, guidance_scale=7.5)
            audio_latents = audio_pipe.denoise_step(audio_latents, ta, audio_prompt, guidance_scale=2.5)

            if (i + 1) % args.couple_every == 0 and i < args.steps - 1:
                with torch.enable_grad():
                    video_latents = video_latents.detach().requires_grad_(True)
                    audio_latents = audio_latents.detach().requires_grad_(True)
                    frames = video_pipe.decode_latents_grad(video_latents)
                    wave = audio_pipe.vocoder(audio_pipe.decode_latents(audio_latents).squeeze(1))
                    score = imagebind_coupling(ib_model, frames, wave, "cuda")
                    gv, ga = torch.autograd.grad(score, [video_latents, audio_latents])
                video_latents = (video_latents + args.couple_lr * gv / (gv.norm() + 1e-8)).detach()
                audio_latents = (audio_latents + args.couple_lr * ga / (ga.norm() + 1e-8)).detach()

        video = video_pipe.decode_latents(video_latents)
        audio = audio_pipe.mel_spectrogram_to_waveform(audio_pipe.decode_latents(audio_latents))
        samples.append(torch.from_numpy(video))
        prompt_tag = "-".join((prompt.replace("/", "").split(" ")[:10]))
        save_videos_grid(torch.from_numpy(video), f"{savedir}/sample/{prompt_idx}-{prompt_tag}.gif")
        np.save(f"{savedir}/sample/{prompt_idx}-{prompt_tag}.npy", audio.numpy())
        print(f"save to {savedir}/sample/{prompt_tag}.gif")

    samples = torch.concat(samples)
    save_videos_grid(samples, f"{savedir}/sample.gif", n_rows=4)
    OmegaConf.save(config, f"{savedir}/config.yaml")


if __name__ == "__main__":
    main(get_args())
