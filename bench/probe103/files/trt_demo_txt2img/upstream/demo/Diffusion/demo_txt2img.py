#
# SPDX-FileCopyrightText: Copyright (c) 1993-2023 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
# http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
#

import argparse

from cuda import cudart
import tensorrt as trt
import torch

from stable_diffusion_pipeline import StableDiffusionPipeline


def add_arguments(parser):
    # Stable Diffusion configuration
    parser.add_argument("--version", type=str, default="1.5", choices=["1.4", "1.5", "2.0-base", "2.0", "2.1", "2.1-base"],
                        help="Version of Stable Diffusion")
    parser.add_argument("prompt", nargs="*", help="Text prompt(s) to guide image generation")
    parser.add_argument("--negative-prompt", nargs="*", default=[""], help="The negative prompt to guide the image generation.")
    parser.add_argument("--repeat-prompt", type=int, default=1, choices=[1, 2, 4, 8, 16],
                        help="Number of times to repeat the prompt (batch size multiplier)")
    parser.add_argument("--height", type=int, default=512, help="Height of image to generate (must be multiple of 8)")
    parser.add_argument("--width", type=int, default=512, help="Height of image to generate (must be multiple of 8)")
    parser.add_argument("--denoising-steps", type=int, default=50, help="Number of denoising steps")

    # ONNX export
    parser.add_argument("--onnx-opset", type=int, default=17, choices=range(7, 18), help="Select ONNX opset version to target for exported models")
    parser.add_argument("--onnx-dir", default="onnx", help="Output directory for ONNX export")
    parser.add_argument("--force-onnx-export", action="store_true", help="Force ONNX export of CLIP, UNET, and VAE models")
    parser.add_argument("--force-onnx-optimize", action="store_true", help="Force ONNX optimizations for CLIP, UNET, and VAE models")

    # Framework model ckpt
    parser.add_argument("--framework-model-dir", default="pytorch_model", help="Directory for HF saved models")

    # TensorRT engine build
    parser.add_argument("--engine-dir", default="engine", help="Output directory for TensorRT engines")
    parser.add_argument("--force-engine-build", action="store_true", help="Force rebuilding the TensorRT engine")
    parser.add_argument("--build-static-batch", action="store_true", help="Build TensorRT engines with fixed batch size.")
    parser.add_argument("--build-dynamic-shape", action="store_true", help="Build TensorRT engines with dynamic image shapes.")
    parser.add_argument("--build-enable-refit", action="store_true", help="Enable Refit option in TensorRT engines during build.")
    parser.add_argument("--build-all-tactics", action="store_true", help="Build TensorRT engines using all tactic sources.")
    parser.add_argument("--timing-cache", default=None, type=str, help="Path to the precached timing measurements to accelerate build.")

    # TensorRT inference
    parser.add_argument("--num-warmup-runs", type=int, default=5, help="Number of warmup runs before benchmarking performance")
    parser.add_argument("--nvtx-profile", action="store_true", help="Enable NVTX markers for performance profiling")
    parser.add_argument("--use-cuda-graph", action="store_true", help="Enable cuda graph")

    parser.add_argument("--seed", type=int, default=None, help="Seed for random generator to get consistent results")
    parser.add_argument("--output-dir", default="output", help="Output directory for logs and image artifacts")
    parser.add_argument("--hf-token", type=str, help="HuggingFace API access token for downloading model checkpoints")
    parser.add_argument("-v", "--verbose", action="store_true", help="Show verbose output")
    return parser


def parseArgs():
    parser = argparse.ArgumentParser(description="Options for Stable Diffusion Txt2Img Demo")
    parser = add_arguments(parser)
    parser.add_argument("--scheduler", type=str, default="DDIM", choices=["PNDM", "LMSD", "DPM", "DDIM", "EulerA"],
                        help="Scheduler for diffusion process")
    return parser.parse_args()


if __name__ == "__main__":
    print("[I] Initializing StableDiffusion txt2img demo using TensorRT")
    args = parseArgs()

    # Register TensorRT plugins (GroupNorm, LayerNorm, fMHA) shipped with libnvinfer_plugin
    trt.init_libnvinfer_plugins(trt.Logger(trt.Logger.WARNING), "")

    # Process prompt
    if not isinstance(args.prompt, list):
        raise ValueError(f"`prompt` must be of type `str` or `str` list, but is {type(args.prompt)}")
    prompt = args.prompt * args.repeat_prompt

    if not isinstance(args.negative_prompt, list):
        raise ValueError(f"`--negative-prompt` must be of type `str` or `str` list, but is {type(args.negative_prompt)}")
    if len(args.negative_prompt) == 1:
        negative_prompt = args.negative_prompt * len(prompt)
    else:
        negative_prompt = args.negative_prompt

    # Validate image dimensions
    image_height = args.height
    image_width = args.width
    if image_height % 8 != 0 or image_width % 8 != 0:
        raise ValueError(f"Image height and width have to be divisible by 8 but specified as: {image_height} and {image_width}.")

    # Register TensorRT plugins
    max_batch_size = 16
    # FIXME VAE build fails due to element limit. Limitting batch size is WAR
    if args.build_dynamic_shape or image_height > 512 or image_width > 512:
        max_batch_size = 4

    batch_size = len(prompt)
    if batch_size > max_batch_size:
        raise ValueError(f"Batch size {len(prompt)} is larger than allowed {max_batch_size}. If dynamic shape is used, then maximum batch size is 4")

    if args.use_cuda_graph and (not args.build_static_batch or args.build_dynamic_shape):
        raise ValueError("Using CUDA graph requires static dimensions. Enable `--build-static-batch` and do not specify `--build-dynamic-shape`")

    torch.manual_seed(args.seed if args.seed is not None else 0)

    # Initialize demo
    demo = StableDiffusionPipeline(
        scheduler=args.scheduler,
        denoising_steps=args.denoising_steps,
        output_dir=args.output_dir,
        version=args.version,
        hf_token=args.hf_token,
        verbose=args.verbose,
        nvtx_profile=args.nvtx_profile,
        max_batch_size=max_batch_size,
        use_cuda_graph=args.use_cuda_graph,
    )

    # Load TensorRT engines and pytorch modules
    demo.loadEngines(
        args.engine_dir,
        args.framework_model_dir,
        args.onnx_dir,
        args.onnx_opset,
        opt_batch_size=len(prompt),
        opt_image_height=image_height,
        opt_image_width=image_width,
        force_export=args.force_onnx_export,
        force_optimize=args.force_onnx_optimize,
        force_build=args.force_engine_build,
        static_batch=args.build_static_batch,
        static_shape=not args.build_dynamic_shape,
        enable_refit=args.build_enable_refit,
        enable_all_tactics=args.build_all_tactics,
        timing_cache=args.timing_cache,
    )

    # Load resources
    _, shared_device_memory = cudart.cudaMalloc(demo.calculateMaxDeviceMemory())
    demo.activateEngines(shared_device_memory)
    demo.loadResources(image_height, image_width, batch_size, args.seed)

    if args.use_cuda_graph:
        # inference once to get cuda graph
        images = demo.infer(prompt, negative_prompt, image_height, image_width, warmup=True, verbose=False)

    print("[I] Warming up ..")
    for _ in range(args.num_warmup_runs):
        images = demo.infer(prompt, negative_prompt, image_height, image_width, warmup=True, verbose=False)

    print("[I] Running StableDiffusion pipeline")
    if args.nvtx_profile:
        cudart.cudaProfilerStart()
    images = demo.infer(prompt, negative_prompt, image_height, image_width, verbose=args.verbose)
    if args.nvtx_profile:
        cudart.cudaProfilerStop()

    demo.teardown()
