"""
Ray Serve application: text-to-image with Stable Diffusion 2.1.

    serve run stable_diffusion:entrypoint
    curl "http://127.0.0.1:8000/imagine?prompt=a%20cat%20in%20space&img_size=768" > out.png

The FastAPI ingress runs on CPU; the diffusion deployment asks for one GPU per replica and
autoscales on the number of queued requests.
"""
from io import BytesIO
import logging
import time

import torch
from fastapi import FastAPI, Request
from fastapi.responses import Response
from PIL import Image, ImageOps
from ray import serve
from ray.serve.handle import DeploymentHandle

logger = logging.getLogger("ray.serve")

app = FastAPI()


@serve.deployment(num_replicas=1)
@serve.ingress(app)
class APIIngress:
    def __init__(self, diffusion_model_handle: DeploymentHandle) -> None:
        self.handle = diffusion_model_handle

    @app.get(
        "/imagine",
        responses={200: {"content": {"image/png": {}}}},
        response_class=Response,
    )
    async def generate(self, prompt: str, img_size: int = 768, steps: int = 30, seed: int = -1):
        assert len(prompt), "prompt parameter cannot be empty"

        image = await self.handle.generate.remote(prompt, img_size=img_size, steps=steps, seed=seed)
        file_stream = BytesIO()
        image.save(file_stream, "PNG")
        return Response(content=file_stream.getvalue(), media_type="image/png")

    @app.post(
        "/variation",
        responses={200: {"content": {"image/png": {}}}},
        response_class=Response,
    )
    async def variation(self, request: Request):
        form = await request.form()
        prompt = form.get("prompt", "")
        strength = float(form.get("strength", 0.6))
        if not 0.0 < strength <= 1.0:
            return Response(content=b"strength must be in (0, 1]", status_code=422)
        upload = form["image"]
        init_image = Image.open(BytesIO(await upload.read())).convert("RGB")
        init_image = ImageOps.fit(init_image, (768, 768))
        image = await self.handle.variation.remote(prompt, init_image, strength=strength)
        file_stream = BytesIO()
        image.save(file_stream, "PNG")
        return Response(content=file_stream.getvalue(), media_type="image/png")

    @app.get("/healthz")
    async def healthz(self):
        return {"status": "ok"}


@serve.deployment(
    ray_actor_options={"num_gpus": 1},
    autoscaling_config={
        "min_replicas": 0,
        "max_replicas": 4,
        "target_ongoing_requests": 2,
        "upscale_delay_s": 10,
        "downscale_delay_s": 300,
    },
    max_ongoing_requests=4,
    health_check_period_s=30,
)
class StableDiffusionV2:
    def __init__(self, model_id: str = "stabilityai/stable-diffusion-2-1", compile_unet: bool = False):
        from diffusers import EulerDiscreteScheduler, StableDiffusionPipeline

        t0 = time.time()
        scheduler = EulerDiscreteScheduler.from_pretrained(model_id, subfolder="scheduler")
        self.pipe = StableDiffusionPipeline.from_pretrained(
            model_id, scheduler=scheduler, revision="fp16", torch_dtype=torch.float16
        )
        self.pipe = self.pipe.to("cuda")
        self.pipe.enable_xformers_memory_efficient_attention()
        self.pipe.set_progress_bar_config(disable=True)
        self.img2img = None
        if compile_unet:
            self.pipe.unet = torch.compile(self.pipe.unet, mode="reduce-overhead", fullgraph=True)
        # first call triggers cudnn autotuning / compilation
        self.pipe("warmup", height=512, width=512, num_inference_steps=2)
        logger.info(
            "SD replica ready in %.1fs on %s", time.time() - t0, torch.cuda.get_device_name()
        )

    def generate(self, prompt: str, img_size: int = 768, steps: int = 30, seed: int = -1):
        assert len(prompt), "prompt parameter cannot be empty"
        generator = None
        if seed >= 0:
            generator = torch.Generator("cuda").manual_seed(seed)

        with torch.autocast("cuda"):
            image = self.pipe(
                prompt,
                height=img_size,
                width=img_size,
                num_inference_steps=steps,
                generator=generator,
            ).images[0]
        return image

    def variation(self, prompt: str, init_image, strength: float = 0.6, steps: int = 30):
        """img2img reusing the text-to-image components (no second copy of the weights)."""
        from diffusers import StableDiffusionImg2ImgPipeline

        if self.img2img is None:
            self.img2img = StableDiffusionImg2ImgPipeline(**self.pipe.components)
            self.img2img.set_progress_bar_config(disable=True)
        with torch.inference_mode():
            image = self.img2img(
                prompt=prompt,
                image=init_image,
                strength=strength,
                num_inference_steps=steps,
                guidance_scale=7.5,
            ).images[0]
        return image

    def check_health(self):
        # Ray Serve calls this every health_check_period_s; an unhealthy replica is restarted
        if not torch.cuda.is_available():
            raise RuntimeError("CUDA device lost")
        torch.zeros(1, device="cuda").add_(1)


entrypoint = APIIngress.bind(StableDiffusionV2.bind())
