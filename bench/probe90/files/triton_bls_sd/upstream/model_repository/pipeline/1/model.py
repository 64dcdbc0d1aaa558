"""
Stable Diffusion as a Triton BLS (business logic scripting) model.

text_encoder and vae are served by Triton as separate TensorRT/ONNX models; the UNet denoising
loop runs here in PyTorch so the scheduler can be swapped per request. Intermediate tensors stay
on the GPU: BLS responses are converted with DLPack instead of round-tripping through numpy.
"""
import json

import numpy as np
import torch
import triton_python_backend_utils as pb_utils
from diffusers import DPMSolverMultistepScheduler, EulerDiscreteScheduler, UNet2DConditionModel
from torch.utils.dlpack import from_dlpack, to_dlpack
from transformers import CLIPTokenizer

SCHEDULERS = {
    "dpm++": DPMSolverMultistepScheduler,
    "euler": EulerDiscreteScheduler,
}


class TritonPythonModel:
    def initialize(self, args):
        self.output_dtype = pb_utils.triton_string_to_numpy(
            pb_utils.get_output_config_by_name(
                json.loads(args["model_config"]), "generated_image"
            )["data_type"]
        )
        self.device = "cuda"
        model_id = "runwayml/stable-diffusion-v1-5"
        self.tokenizer = CLIPTokenizer.from_pretrained(model_id, subfolder="tokenizer")
        self.unet = UNet2DConditionModel.from_pretrained(
            model_id, subfolder="unet", torch_dtype=torch.float16, variant="fp16"
        ).to(self.device)
        self.unet.set_default_attn_processor()
        self.unet.enable_xformers_memory_efficient_attention()
        self.unet = torch.compile(self.unet, mode="max-autotune", fullgraph=True)
        self.scheduler_config = DPMSolverMultistepScheduler.load_config(model_id, subfolder="scheduler")
        self.vae_scale = 0.18215

    # ------------------------------------------------------------------ BLS calls
    def _text_encoder(self, prompts):
        tokens = self.tokenizer(
            prompts,
            padding="max_length",
            max_length=self.tokenizer.model_max_length,
            truncation=True,
            return_tensors="pt",
        )
        input_ids = pb_utils.Tensor("input_ids", tokens.input_ids.numpy().astype(np.int32))
        req = pb_utils.InferenceRequest(
            model_name="text_encoder",
            requested_output_names=["last_hidden_state"],
            inputs=[input_ids],
        )
        resp = req.exec()
        if resp.has_error():
            raise pb_utils.TritonModelException(resp.error().message())
        out = pb_utils.get_output_tensor_by_name(resp, "last_hidden_state")
        return from_dlpack(out.to_dlpack()).to(self.device, torch.float16)

    def _vae_decode(self, latents):
        latents = latents / self.vae_scale
        req = pb_utils.InferenceRequest(
            model_name="vae",
            requested_output_names=["images"],
            inputs=[pb_utils.Tensor.from_dlpack("latent_sample", to_dlpack(latents.contiguous()))],
        )
        resp = req.exec()
        if resp.has_error():
            raise pb_utils.TritonModelException(resp.error().message())
        images = pb_utils.get_output_tensor_by_name(resp, "images")
        return from_dlpack(images.to_dlpack())

    # ------------------------------------------------------------------ execute
    def execute(self, requests):
        responses = []
        for request in requests:
            prompt = [
                p.decode("utf-8")
                for p in pb_utils.get_input_tensor_by_name(request, "prompt").as_numpy().reshape(-1)
            ]
            steps = int(pb_utils.get_input_tensor_by_name(request, "steps").as_numpy().reshape(-1)[0])
            guidance = float(
                pb_utils.get_input_tensor_by_name(request, "guidance_scale").as_numpy().reshape(-1)[0]
            )
            seed = int(pb_utils.get_input_tensor_by_name(request, "seed").as_numpy().reshape(-1)[0])
            sched_name = "dpm++"
            sched_t = pb_utils.get_input_tensor_by_name(request, "scheduler")
            if sched_t is not None:
                sched_name = sched_t.as_numpy().reshape(-1)[0].decode()

            scheduler = SCHEDULERS[sched_name].from_config(self.scheduler_config)
            scheduler.set_timesteps(steps, device=self.device)

            batch = len(prompt)
            negative = [""] * batch
            neg_t = pb_utils.get_input_tensor_by_name(request, "negative_prompt")
            if neg_t is not None:
                negative = [n.decode("utf-8") for n in neg_t.as_numpy().reshape(-1)]
                if len(negative) == 1 and batch > 1:
                    negative = negative * batch
            text_emb = self._text_encoder(prompt)
            uncond_emb = self._text_encoder(negative)
            cond = torch.cat([uncond_emb, text_emb])

            generator = torch.Generator(device="cuda").manual_seed(seed)
            latents = torch.randn(
                (batch, 4, 64, 64), generator=generator, device=self.device, dtype=torch.float16
            )
            latents = latents * scheduler.init_noise_sigma

            with torch.inference_mode(), torch.autocast("cuda"):
                for t in scheduler.timesteps:
                    latent_in = scheduler.scale_model_input(torch.cat([latents] * 2), t)
                    noise = self.unet(latent_in, t, encoder_hidden_states=cond).sample
                    noise_uncond, noise_text = noise.chunk(2)
                    noise = noise_uncond + guidance * (noise_text - noise_uncond)
                    latents = scheduler.step(noise, t, latents).prev_sample

            images = self._vae_decode(latents)
            images = (images / 2 + 0.5).clamp(0, 1)
            if self._flagged(images):
                images = torch.zeros_like(images)
            images = (images.permute(0, 2, 3, 1) * 255).round().to(torch.uint8)
            out = pb_utils.Tensor("generated_image", images.cpu().numpy().astype(self.output_dtype))
            responses.append(pb_utils.InferenceResponse(output_tensors=[out]))
        return responses

    def _flagged(self, images) -> bool:
        """Ask the separately deployed safety model; an error there must not fail the request."""
        req = pb_utils.InferenceRequest(
            model_name="safety_checker",
            requested_output_names=["has_nsfw"],
            inputs=[pb_utils.Tensor("images", images.float().cpu().numpy())],
        )
        resp = req.exec()
        if resp.has_error():
            pb_utils.Logger.log_warn(f"safety_checker failed: {resp.error().message()}")
            return False
        flags = pb_utils.get_output_tensor_by_name(resp, "has_nsfw").as_numpy()
        return bool(flags.any())

    def finalize(self):
        self.unet = None
        torch.cuda.empty_cache()
