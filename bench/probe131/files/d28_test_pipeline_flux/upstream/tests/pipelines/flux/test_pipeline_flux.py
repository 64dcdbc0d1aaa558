import gc
import unittest

import numpy as np
import pytest
import torch

from diffusers import FluxPipeline
from diffusers.utils.testing_utils import (
    backend_empty_cache,
    load_pt,
    nightly,
    numpy_cosine_similarity_distance,
    require_big_gpu_with_torch_cuda,
    require_torch_gpu,
    slow,
    torch_device,
)


@slow
@require_big_gpu_with_torch_cuda
@pytest.mark.big_gpu_with_torch_cuda
class FluxPipelineSlowTests(unittest.TestCase):
    pipeline_class = FluxPipeline
    repo_id = "black-forest-labs/FLUX.1-schnell"

    def setUp(self):
        super().setUp()
        gc.collect()
        backend_empty_cache(torch_device)

    def tearDown(self):
        super().tearDown()
        gc.collect()
        torch.cuda.empty_cache()

    def get_inputs(self, device, seed=0):
        if str(device).startswith("mps"):
            generator = torch.manual_seed(seed)
        else:
            generator = torch.Generator(device="cpu").manual_seed(seed)

        prompt_embeds = load_pt(
            "https://huggingface.co/datasets/diffusers/test-slices/resolve/main/flux/prompt_embeds.pt"
        ).to(torch_device)
        pooled_prompt_embeds = load_pt(
            "https://huggingface.co/datasets/diffusers/test-slices/resolve/main/flux/pooled_prompt_embeds.pt"
        ).to(torch_device)
        return {
            "prompt_embeds": prompt_embeds,
            "pooled_prompt_embeds": pooled_prompt_embeds,
            "num_inference_steps": 2,
            "guidance_scale": 0.0,
            "max_sequence_length": 256,
            "output_type": "np",
            "generator": generator,
        }

    def test_flux_inference(self):
        pipe = self.pipeline_class.from_pretrained(
            self.repo_id, torch_dtype=torch.bfloat16, text_encoder=None, text_encoder_2=None
        )
        pipe.enable_model_cpu_offload()

        inputs = self.get_inputs(torch_device)

        image = pipe(**inputs).images[0]
        image_slice = image[0, :10, :10]
        expected_slice = np.array(
            [0.3242, 0.3203, 0.3164, 0.3164, 0.3125, 0.3125, 0.3281, 0.3242, 0.3203, 0.3301]
            + [0.3262, 0.3242, 0.3281, 0.3242, 0.3262, 0.3262, 0.3262, 0.3281, 0.3242, 0.3262]
        )

        max_diff = numpy_cosine_similarity_distance(expected_slice.flatten(), image_slice.flatten())

        assert max_diff < 1e-4


@nightly
@require_torch_gpu
class FluxPipelineMemoryTests(unittest.TestCase):
    repo_id = "black-forest-labs/FLUX.1-schnell"

    def test_flux_sequential_offload_memory(self):
        pipe = FluxPipeline.from_pretrained(self.repo_id, torch_dtype=torch.bfloat16)
        pipe.enable_sequential_cpu_offload(device=torch_device)

        torch.cuda.reset_peak_memory_stats()
        _ = pipe(
            "A cat holding a sign that says hello world",
            num_inference_steps=2,
            guidance_scale=0.0,
            max_sequence_length=256,
            generator=torch.Generator("cpu").manual_seed(0),
        )
        peak = torch.cuda.max_memory_allocated() / 1024**3

        # sequential offload should keep the 12B transformer off the GPU
        assert peak < 4.0, f"peak GPU memory {peak:.2f} GB"
