import json
import logging
import os.path
import random
from dataclasses import dataclass
from typing import Any, Generator, List, Optional

import torch
from colorama import Fore, Style
from compel import Compel
from diffusers import (
    DDIMScheduler,
    DDPMScheduler,
    DPMSolverMultistepScheduler,
    EulerAncestralDiscreteScheduler,
    EulerDiscreteScheduler,
    PNDMScheduler,
    StableDiffusionPipeline,
)
from PIL import Image, ImageDraw, ImageFont
from torch import FloatTensor
from torch.utils.tensorboard import SummaryWriter
from tqdm.auto import tqdm


def clean_filename(filename):
    """
    removes all non-alphanumeric characters from a string so it is safe to use as a filename
    """
    return "".join([c for c in filename if c.isalpha() or c.isdigit() or c == " "]).rstrip()


@dataclass
class SampleRequest:
    prompt: str
    negative_prompt: str
    seed: int
    size: tuple[int, int]
    wants_random_caption: bool = False

    def __str__(self):
        rep = self.prompt
        if len(self.negative_prompt) > 0:
            rep += f"\n negative prompt: {self.negative_prompt}"
        rep += f"\n seed: {self.seed}"
        return rep


def chunk_list(l: List[Any], batch_size: int, compatibility_test=lambda l, e: True) -> Generator[List[Any], None, None]:
    buffer = []
    for item in l:
        if len(buffer) < batch_size and compatibility_test(buffer, item):
            buffer.append(item)
        else:
            yield buffer
            buffer = [item]
    if len(buffer) > 0:
        yield buffer


def get_best_size_for_aspect_ratio(aspect_ratio, default_resolution) -> tuple[int, int]:
    sizes = []
    target_pixel_count = default_resolution * default_resolution
    for w in range(256, 1024, 64):
        for h in range(256, 1024, 64):
            if abs((w * h) - target_pixel_count) <= 128 * 64:
                sizes.append((w, h))
    best_size = min(sizes, key=lambda s: abs(1 - (aspect_ratio / (s[0] / s[1]))))
    return best_size


class SampleGenerator:
    seed: int
    default_resolution: int
    cfgs: list[float] = [7, 4, 1.01]
    scheduler: str = "ddim"
    num_inference_steps: int = 30
    random_captions = False

    sample_requests: [str]
    log_folder: str
    log_writer: SummaryWriter

    def __init__(
        self,
        log_folder: str,
        log_writer: SummaryWriter,
        default_resolution: int,
        config_file_path: str,
        batch_size: int,
        default_seed: int,
        default_sample_steps: int,
        use_xformers: bool,
        use_penultimate_clip_layer: bool,
        guidance_rescale: float = 0,
    ):
        self.log_folder = log_folder
        self.log_writer = log_writer
        self.batch_size = batch_size
        self.config_file_path = config_file_path
        self.use_xformers = use_xformers
        self.show_progress_bars = False
        self.generate_pretrained_samples = False
        self.use_penultimate_clip_layer = use_penultimate_clip_layer
        self.guidance_rescale = guidance_rescale

        self.default_resolution = default_resolution
        self.default_seed = default_seed
        self.sample_steps = default_sample_steps

        self.sample_requests = None
        self.reload_config()
        print(f" * SampleGenerator initialized with {len(self.sample_requests)} prompts, generating samples every {self.sample_steps} training steps, using scheduler '{self.scheduler}' with {self.num_inference_steps} inference steps")

    def reload_config(self):
        try:
            config_file_extension = os.path.splitext(self.config_file_path)[1].lower()
            if config_file_extension == ".txt":
                self._reload_sample_prompts_txt(self.config_file_path)
            elif config_file_extension == ".json":
                self._reload_config_json(self.config_file_path)
            else:
                raise ValueError(f"Unrecognized file type '{config_file_extension}' for sample config, must be .txt or .json")
        except Exception as e:
            logging.warning(f" * {Fore.LIGHTYELLOW_EX}Error trying to read sample config from {self.config_file_path}: {Style.RESET_ALL}{e}")
            logging.warning(f"   Edit {self.config_file_path} to fix the problem. It will be automatically reloaded next time samples are due to be generated.")
            if self.sample_requests is None:
                logging.warning(f"   Will generate samples from random training image captions until the problem is fixed.")
                self.sample_requests = self._make_random_caption_sample_requests()

    def _reload_sample_prompts_txt(self, path):
        with open(path, "rt") as f:
            self.sample_requests = [SampleRequest(prompt=line.strip(), negative_prompt="", seed=self.default_seed, size=(self.default_resolution, self.default_resolution)) for line in f if len(line.strip()) > 0]

    def _reload_config_json(self, path):
        with open(path, "rt") as f:
            config = json.load(f)
            self.batch_size = config.get("batch_size", self.batch_size)
            self.scheduler = config.get("scheduler", self.scheduler)
            self.num_inference_steps = config.get("num_inference_steps", self.num_inference_steps)
            self.show_progress_bars = config.get("show_progress_bars", self.show_progress_bars)
            self.cfgs = config.get("cfgs", self.cfgs)
            self.sample_requests = [
                SampleRequest(prompt=p.get("prompt", ""), negative_prompt=p.get("negative_prompt", ""), seed=p.get("seed", self.default_seed), size=tuple(p.get("size", (self.default_resolution, self.default_resolution))))
                for p in config.get("samples", [])
            ]

    def _make_random_caption_sample_requests(self):
        return [SampleRequest(prompt="", negative_prompt="", seed=-1, size=(self.default_resolution, self.default_resolution), wants_random_caption=True)]

    @torch.no_grad()
    def generate_samples(self, unet, text_encoder, vae, tokenizer, gs: int):
        """
        generates samples at different cfg scales and saves them to disk
        """
        pipe = self._create_inference_pipeline(unet=unet, text_encoder=text_encoder, tokenizer=tokenizer, vae=vae, diffusers_scheduler_config=None)
        disable_progress_bars = not self.show_progress_bars
        pipe.set_progress_bar_config(disable=disable_progress_bars)
        compel = Compel(tokenizer=tokenizer, text_encoder=text_encoder, truncate_long_prompts=False)

        batches = list(chunk_list(self.sample_requests, self.batch_size, compatibility_test=lambda l, r: l[0].size == r.size if len(l) > 0 else True))
        pbar = tqdm(total=len(batches), disable=disable_progress_bars, position=1, leave=False, desc=f"{Fore.YELLOW}Image samples (batches of {self.batch_size}){Style.RESET_ALL}")
        for batch in batches:
            prompts = [p.prompt for p in batch]
            negative_prompts = [p.negative_prompt for p in batch]
            seeds = [(p.seed if p.seed != -1 else random.randint(0, 2**30)) for p in batch]
            # all sizes in a batch are the same
            size = batch[0].size
            generators = [torch.Generator(device="cuda").manual_seed(seed) for seed in seeds]

            batch_images = []
            for cfg in self.cfgs:
                pipe.set_progress_bar_config(disable=disable_progress_bars, position=2, leave=False, desc=f"{Fore.LIGHTYELLOW_EX}CFG scale {cfg}{Style.RESET_ALL}")
                prompt_embeds = compel(prompts)
                negative_prompt_embeds = compel(negative_prompts)
                with torch.autocast(device_type="cuda", dtype=torch.float16):
                    images = pipe(
                        prompt_embeds=prompt_embeds,
                        negative_prompt_embeds=negative_prompt_embeds,
                        num_inference_steps=self.num_inference_steps,
                        num_images_per_prompt=1,
                        guidance_scale=cfg,
                        generator=generators,
                        width=size[0],
                        height=size[1],
                        guidance_rescale=self.guidance_rescale,
                    ).images
                batch_images.append(images)

            for image_index, request in enumerate(batch):
                result = Image.new("RGB", (size[0] * len(self.cfgs), size[1]))
                for cfg_index in range(len(self.cfgs)):
                    result.paste(batch_images[cfg_index][image_index], (size[0] * cfg_index, 0))
                clean_prompt = clean_filename(request.prompt)
                result.save(f"{self.log_folder}/samples/gs{gs:05}-{image_index}-{clean_prompt[:100]}.jpg", format="JPEG", quality=95, optimize=True, progressive=False)
            pbar.update(1)

        del pipe
        torch.cuda.empty_cache()

    @torch.no_grad()
    def _create_inference_pipeline(self, unet, text_encoder, tokenizer, vae, diffusers_scheduler_config: dict):
        """
        creates a pipeline for SD inference
        """
        scheduler = self._create_scheduler(diffusers_scheduler_config)
        pipe = StableDiffusionPipeline(
            vae=vae,
            text_encoder=text_encoder,
            tokenizer=tokenizer,
            unet=unet,
            scheduler=scheduler,
            safety_checker=None,  # save vram
            requires_safety_checker=None,  # avoid nag
            feature_extractor=None,  # must be None if no safety checker
        )
        if self.use_xformers:
            try:
                pipe.enable_xformers_memory_efficient_attention()
            except Exception as e:
                logging.warning(f" * xformers unavailable for sampling, using default attention: {e}")
        return pipe

    def _create_scheduler(self, scheduler_config: dict):
        scheduler = self.scheduler
        if scheduler not in ["ddim", "dpm++", "pndm", "ddpm", "lms", "euler", "euler_a", "kdpm2"]:
            print(f"unsupported scheduler '{self.scheduler}', falling back to ddim")
            scheduler = "ddim"

        if scheduler == "ddim":
            return DDIMScheduler.from_config(scheduler_config)
        elif scheduler == "dpm++":
            return DPMSolverMultistepScheduler.from_config(scheduler_config, algorithm_type="dpmsolver++")
        elif scheduler == "pndm":
            return PNDMScheduler.from_config(scheduler_config)
        elif scheduler == "ddpm":
            return DDPMScheduler.from_config(scheduler_config)
        elif scheduler == "euler":
            return EulerDiscreteScheduler.from_config(scheduler_config)
        elif scheduler == "euler_a":
            return EulerAncestralDiscreteScheduler.from_config(scheduler_config)
        else:
            raise ValueError(f"unknown scheduler '{scheduler}'")
