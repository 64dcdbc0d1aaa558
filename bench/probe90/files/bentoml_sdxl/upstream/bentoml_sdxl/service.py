"""
SDXL Turbo + SDXL refiner as a BentoML 1.2 service.

    bentoml serve service:SDXLService
    bentoml build && bentoml containerize sdxl_service:latest
"""
from __future__ import annotations

import os
import typing as t

import bentoml
import torch
from PIL.Image import Image
from annotated_types import Le, Ge
from typing_extensions import Annotated

MODEL_ID = "stabilityai/sdxl-turbo"
REFINER_ID = "stabilityai/stable-diffusion-xl-refiner-1.0"
VAE_ID = "madebyollin/sdxl-vae-fp16-fix"

sample_prompt = "A cinematic shot of a baby racoon wearing an intricate italian priest robe."


@bentoml.service(
    traffic={"timeout": 300, "concurrency": 4},
    workers=1,
    resources={
        "gpu": 1,
        "memory": "16Gi",
    },
    envs=[{"name": "HF_HUB_ENABLE_HF_TRANSFER", "value": "1"}],
)
class SDXLService:
    model_path = bentoml.models.HuggingFaceModel(MODEL_ID)
    vae_path = bentoml.models.HuggingFaceModel(VAE_ID)

    def __init__(self) -> None:
        from diffusers import AutoencoderKL, AutoPipelineForText2Image, StableDiffusionXLImg2ImgPipeline

        self.device = "cuda"
        vae = AutoencoderKL.from_pretrained(self.vae_path, torch_dtype=torch.float16)
        self.pipe = AutoPipelineForText2Image.from_pretrained(
            self.model_path,
            vae=vae,
            torch_dtype=torch.float16,
            variant="fp16",
            use_safetensors=True,
        )
        self.pipe.to(device=self.device)
        self.pipe.fuse_qkv_projections()
        self.pipe.unet.to(memory_format=torch.channels_last)

        if os.environ.get("SDXL_COMPILE", "1") == "1":
            torch._inductor.config.conv_1x1_as_mm = True
            torch._inductor.config.coordinate_descent_tuning = True
            torch._inductor.config.epilogue_fusion = False
            self.pipe.unet = torch.compile(self.pipe.unet, mode="max-autotune", fullgraph=True)
            self.pipe.vae.decode = torch.compile(self.pipe.vae.decode, mode="max-autotune", fullgraph=True)

        self.refiner = None
        if os.environ.get("SDXL_REFINER", "0") == "1":
            self.refiner = StableDiffusionXLImg2ImgPipeline.from_pretrained(
                REFINER_ID,
                text_encoder_2=self.pipe.text_encoder_2,
                vae=self.pipe.vae,
                torch_dtype=torch.float16,
                variant="fp16",
            )
            # refiner only runs on ~20% of requests; keep it off-GPU between calls
            self.refiner.enable_model_cpu_offload(gpu_id=0)

        self._warmup()

    def _warmup(self):
        for _ in range(3):
            self.pipe(prompt=sample_prompt, num_inference_steps=1, guidance_scale=0.0)
        torch.cuda.synchronize()
        stats = torch.cuda.memory_stats()
        print(
            f"[sdxl] warm-up done, peak {stats['allocated_bytes.all.peak'] / 2**30:.1f} GiB, "
            f"device {torch.cuda.get_device_name()}"
        )

    @bentoml.api
    def txt2img(
        self,
        prompt: str = sample_prompt,
        num_inference_steps: Annotated[int, Ge(1), Le(10)] = 1,
        guidance_scale: float = 0.0,
        seed: t.Optional[int] = None,
        refine: bool = False,
    ) -> Image:
        generator = None
        if seed is not None:
            generator = torch.Generator(device=self.device).manual_seed(seed)

        image = self.pipe(
            prompt=prompt,
            num_inference_steps=num_inference_steps,
            guidance_scale=guidance_scale,
            generator=generator,
        ).images[0]

        if refine and self.refiner is not None:
            image = self.refiner(prompt=prompt, image=image, num_inference_steps=10,
                                 strength=0.3, generator=generator).images[0]
        return image

    @bentoml.api
    def txt2img_batch(
        self,
        prompts: t.List[str],
        num_inference_steps: Annotated[int, Ge(1), Le(10)] = 1,
        guidance_scale: float = 0.0,
        seed: t.Optional[int] = None,
    ) -> t.List[Image]:
        if not prompts or len(prompts) > 8:
            raise bentoml.exceptions.InvalidArgument("between 1 and 8 prompts per call")
        generator = None
        if seed is not None:
            generator = [torch.Generator(device=self.device).manual_seed(seed + i) for i in range(len(prompts))]
        return self.pipe(
            prompt=prompts,
            num_inference_steps=num_inference_steps,
            guidance_scale=guidance_scale,
            generator=generator,
        ).images

    @bentoml.api
    def health(self) -> dict:
        free, total = torch.cuda.mem_get_info()
        return {
            "device": self.device,
            "free_gib": round(free / 2**30, 2),
            "total_gib": round(total / 2**30, 2),
            "compiled": os.environ.get("SDXL_COMPILE", "1") == "1",
        }
