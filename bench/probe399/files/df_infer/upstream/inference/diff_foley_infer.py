"""Diff-Foley inference: video -> CAVP features -> LDM (double guidance) -> mel -> HiFi-GAN -> wav.

Script version of the inference notebook. Usage:
    python inference/diff_foley_infer.py --video demo/1.mp4 --out_dir results/
"""
import argparse
import os
import sys
import json

import numpy as np
import soundfile as sf
import torch
from omegaconf import OmegaConf
from pytorch_lightning import seed_everything

sys.path.append(os.path.join(os.path.dirname(__file__), ".."))
from diff_foley.util import instantiate_from_config
from diff_foley.modules.cavp.cavp_model import CAVP
from diff_foley.data.video_utils import extract_frames_decord, reencode_video
from ldm.models.diffusion.ddim import DDIMSampler
from vocoder.hifigan import Generator, AttrDict


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--video", type=str, required=True)
    parser.add_argument("--out_dir", type=str, default="results")
    parser.add_argument("--config", type=str, default="inference/config/diff_foley_ldm.yaml")
    parser.add_argument("--ldm_ckpt", type=str, default="diff_foley_ckpt/ldm_epoch240.ckpt")
    parser.add_argument("--cavp_ckpt", type=str, default="diff_foley_ckpt/cavp_epoch66.ckpt")
    parser.add_argument("--classifier_ckpt", type=str, default="diff_foley_ckpt/double_guidance_classifier.ckpt")
    parser.add_argument("--vocoder_dir", type=str, default="diff_foley_ckpt/vocoder")
    parser.add_argument("--fps", type=int, default=4)
    parser.add_argument("--duration", type=float, default=8.0)
    parser.add_argument("--steps", type=int, default=25)
    parser.add_argument("--cfg_scale", type=float, default=4.5)
    parser.add_argument("--cg_scale", type=float, default=50.0)
    parser.add_argument("--sample_num", type=int, default=4)
    parser.add_argument("--seed", type=int, default=123)
    return parser.parse_args()


def load_vocoder(ckpt_dir, device):
    with open(os.path.join(ckpt_dir, "config.json")) as f:
        h = AttrDict(json.load(f))
    vocoder = Generator(h)
    state = torch.load(os.path.join(ckpt_dir, "g_best"), map_location="cuda:0")
    vocoder.load_state_dict(state["generator"])
    vocoder.eval()
    vocoder.remove_weight_norm()
    return vocoder.to(device), h


def load_cavp(ckpt_path):
    cavp = CAVP(feat_dim=512, video_encode="Slowonly_pool", audio_encode="Cnn14", embed_dim=512,
                video_pretrained=False, audio_pretrained=False)
    state = torch.load(ckpt_path, map_location="cpu")["state_dict"]
    new_state = {k.replace("module.", ""): v for k, v in state.items()}
    cavp.load_state_dict(new_state, strict=False)
    cavp = cavp.cuda().eval()
    return cavp


def load_ldm(config_path, ckpt_path, device):
    config = OmegaConf.load(config_path)
    model = instantiate_from_config(config.model)
    sd = torch.load(ckpt_path, map_location="cpu")["state_dict"]
    missing, unexpected = model.load_state_dict(sd, strict=False)
    print(f"LDM loaded: {len(missing)} missing, {len(unexpected)} unexpected keys")
    model = model.to(device).eval()
    return model


@torch.no_grad()
def extract_cavp_features(cavp, video_path, fps, duration, tmp_dir, device):
    video_path_low = reencode_video(video_path, tmp_dir, fps=fps)
    frames = extract_frames_decord(video_path_low, size=224, fps=fps, duration=duration)  # T x H x W x C uint8
    frames = torch.from_numpy(frames).float().permute(0, 3, 1, 2) / 255.0
    mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
    frames = ((frames - mean) / std).unsqueeze(0).to(device)
    feats = cavp.encode_video(frames, normalize=True, pool=False)  # 1 x T x 512
    return feats


def mel_to_wave(vocoder, mel):
    # mel: B x n_mels x T in log scale, normalised to [-1, 1] during training
    mel = (mel + 1) / 2 * 11.5129 - 11.5129
    wav = vocoder(mel).squeeze(1)
    return wav.cpu().numpy()


def main():
    args = parse_args()
    seed_everything(args.seed)
    torch.cuda.manual_seed(args.seed)
    os.makedirs(args.out_dir, exist_ok=True)

    device = torch.device("cuda")

    cavp = load_cavp(args.cavp_ckpt)
    ldm = load_ldm(args.config, args.ldm_ckpt, device)
    sampler = DDIMSampler(ldm)
    vocoder, h = load_vocoder(args.vocoder_dir, device)

    classifier = None
    if args.cg_scale > 0 and os.path.exists(args.classifier_ckpt):
        classifier_cfg = OmegaConf.load("inference/config/double_guidance_classifier.yaml")
        classifier = instantiate_from_config(classifier_cfg.model)
        classifier.load_state_dict(torch.load(args.classifier_ckpt, map_location="cpu")["state_dict"])
        classifier = classifier.to(device).eval()

    video_feat = extract_cavp_features(cavp, args.video, args.fps, args.duration, args.out_dir, device)
    cond = ldm.get_learned_conditioning(video_feat.repeat(args.sample_num, 1, 1))
    uncond = ldm.get_learned_conditioning(torch.zeros_like(video_feat).repeat(args.sample_num, 1, 1))

    shape = (ldm.channels, ldm.image_size[0], ldm.image_size[1]) if isinstance(ldm.image_size, (list, tuple)) \
        else (ldm.channels, ldm.image_size, ldm.image_size)

    if classifier is not None:
        samples, _ = sampler.sample_with_classifier(S=args.steps, batch_size=args.sample_num, shape=shape,
                                                    conditioning=cond, classifier=classifier,
                                                    classifier_guide_scale=args.cg_scale,
                                                    unconditional_guidance_scale=args.cfg_scale,
                                                    unconditional_conditioning=uncond, verbose=False)
    else:
        samples, _ = sampler.sample(S=args.steps, batch_size=args.sample_num, shape=shape, conditioning=cond,
                                    unconditional_guidance_scale=args.cfg_scale,
                                    unconditional_conditioning=uncond, verbose=False)

    mel = ldm.decode_first_stage(samples)  # B x 1 x n_mels x T
    wavs = mel_to_wave(vocoder, mel.squeeze(1))
    name = os.path.splitext(os.path.basename(args.video))[0]
    for i, wav in enumerate(wavs):
        wav = wav[: int(h.sampling_rate * args.duration)]
        out_path = os.path.join(args.out_dir, f"{name}_sample{i}.wav")
        sf.write(out_path, wav, h.sampling_rate)
        print(f"saved {out_path}")


if __name__ == "__main__":
    main()
