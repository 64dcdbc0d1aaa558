"""Video-to-Audio with a training-free ImageBind aligner on top of AudioLDM.

At each denoising step we decode a coarse waveform, embed it with ImageBind and push the latent
towards the ImageBind embedding of the conditioning video (Seeing and Hearing, CVPR 2024).
"""
import argparse
import glob
import os
import random

import numpy as np
import scipy.io.wavfile
import torch
import torch.nn.functional as F
from diffusers import AudioLDMPipeline, DPMSolverMultistepScheduler
from tqdm import tqdm

from imagebind import data as ib_data
from imagebind.models import imagebind_model
from imagebind.models.imagebind_model import ModalityType
from pipelines.pipeline_audioldm_guided import AudioLDMGuidedPipeline


def parse_args():
    parser = argparse.ArgumentParser(description="ImageBind-guided V2A")
    parser.add_argument("--video_dir", type=str, required=True)
    parser.add_argument("--out_dir", type=str, default="outputs/v2a")
    parser.add_argument("--audioldm_ckpt", type=str, default="cvssp/audioldm-m-full")
    parser.add_argument("--gpu_id", type=int, default=0)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--num_inference_steps", type=int, default=30)
    parser.add_argument("--guidance_scale", type=float, default=2.5)
    parser.add_argument("--optimize_steps", type=int, default=1, help="gradient steps per denoising step")
    parser.add_argument("--lr", type=float, default=0.1, help="step size of the ImageBind guidance")
    parser.add_argument("--guidance_start", type=float, default=0.0)
    parser.add_argument("--guidance_end", type=float, default=0.8)
    parser.add_argument("--audio_length_in_s", type=float, default=5.12)
    parser.add_argument("--num_frames", type=int, default=8)
    parser.add_argument("--prompt", type=str, default="", help="optional text prompt")
    parser.add_argument("--fp16", action="store_true")
    return parser.parse_args()


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class ImageBindAligner(torch.nn.Module):
    """Wraps ImageBind-huge; exposes video and audio embeddings with grads on the audio branch."""

    def __init__(self, device):
        super().__init__()
        self.model = imagebind_model.imagebind_huge(pretrained=True)
        self.model.eval().to(device)
        for p in self.model.parameters():
            p.requires_grad_(False)
        self.device = device

    @torch.no_grad()
    def embed_video(self, video_path, num_frames):
        inputs = {
            ModalityType.VISION: ib_data.load_and_transform_video_data([video_path], self.device,
                                                                       clips_per_video=num_frames),
        }
        emb = self.model(inputs)[ModalityType.VISION]
        return F.normalize(emb, dim=-1)

    def embed_waveform(self, waveform, sr=16000):
        # waveform: B x T (float, on device). Kaldi fbank runs on CPU, so use the
        # differentiable torchaudio mel path here.
        mel = ib_data.waveform2melspec_torch(waveform, sample_rate=sr, num_mel_bins=128, target_length=204)
        inputs = {ModalityType.AUDIO: mel}
        emb = self.model(inputs)[ModalityType.AUDIO]
        return F.normalize(emb, dim=-1)


def guidance_loss(aligner, pipe, latents, video_emb):
    mel = pipe.decode_latents(latents)
    wave = pipe.vocoder(mel.squeeze(1))
    with torch.cuda.amp.autocast():
        audio_emb = aligner.embed_waveform(wave)
    return 1.0 - (audio_emb * video_emb).sum(dim=-1).mean()


def main():
    args = parse_args()
    set_seed(args.seed)
    os.makedirs(args.out_dir, exist_ok=True)

    device = torch.device(f"cuda:{args.gpu_id}")
    dtype = torch.float16 if args.fp16 else torch.float32

    pipe = AudioLDMGuidedPipeline.from_pretrained(args.audioldm_ckpt, torch_dtype=dtype)
    pipe.scheduler = DPMSolverMultistepScheduler.from_config(pipe.scheduler.config)
    pipe = pipe.to(device)
    pipe.set_progress_bar_config(disable=True)

    aligner = ImageBindAligner(device)
    generator = torch.Generator("cuda").manual_seed(args.seed)

    videos = sorted(glob.glob(os.path.join(args.video_dir, "*.mp4")))
    print(f"Found {len(videos)} videos; running on {torch.cuda.get_device_name(args.gpu_id)}")

    for video_path in tqdm(videos):
        name = os.path.splitext(os.path.basename(video_path))[0]
        out_path = os.path.join(args.out_dir, f"{name}.wav")
        if os.path.exists(out_path):
            continue

        video_emb = aligner.embed_video(video_path, args.num_frames)

        def callback_on_step(step, t, latents):
            frac = step / args.num_inference_steps
            if frac < args.guidance_start or frac > args.guidance_end:
                return latents
            for _ in range(args.optimize_steps):
                latents = latents.detach().float().requires_grad_(True)
                loss = guidance_loss(aligner, pipe, latents.to(dtype), video_emb)
                grad = torch.autograd.grad(loss, latents)[0]
                latents = latents - args.lr * grad / (grad.norm() + 1e-8) * latents.norm()
            return latents.detach().to(dtype)

        audio = pipe(
            prompt=args.prompt,
            num_inference_steps=args.num_inference_steps,
            guidance_scale=args.guidance_scale,
            audio_length_in_s=args.audio_length_in_s,
            generator=generator,
            latent_callback=callback_on_step,
        ).audios[0]

        scipy.io.wavfile.write(out_path, rate=16000, data=audio)
        torch.cuda.empty_cache()

    print(f"done, peak memory {torch.cuda.max_memory_allocated(device) / 2**30:.1f} GiB")


if __name__ == "__main__":
    main()
