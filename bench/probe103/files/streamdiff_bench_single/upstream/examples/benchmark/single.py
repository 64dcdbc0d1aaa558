import io
import os
import sys
from typing import Dict, List, Literal, Optional

import fire
import numpy as np
import PIL.Image
import requests
import torch
from tqdm import tqdm

sys.path.append(os.path.join(os.path.dirname(__file__), "..", ".."))

from utils.wrapper import StreamDiffusionWrapper


def download_image(url: str):
    response = requests.get(url)
    image = PIL.Image.open(io.BytesIO(response.content))
    return image


def run(
    iterations: int = 100,
    model_id_or_path: str = "KBlueLeaf/kohaku-v2.1",
    lora_dict: Optional[Dict[str, float]] = None,
    prompt: str = "1girl with brown dog hair, thick glasses, smiling",
    negative_prompt: str = "bad image , bad quality",
    use_lcm_lora: bool = True,
    use_tiny_vae: bool = True,
    width: int = 512,
    height: int = 512,
    warmup: int = 10,
    acceleration: Literal["none", "xformers", "tensorrt"] = "xformers",
    device_ids: Optional[List[int]] = None,
    use_denoising_batch: bool = True,
    seed: int = 2,
    profile: bool = False,
):
    """
    Initializes the StreamDiffusionWrapper and measures img2img latency.

    Parameters
    ----------
    iterations : int, optional
        The number of iterations to run, by default 100.
    acceleration : Literal["none", "xformers", "tensorrt"], optional
        The type of acceleration to use for image generation, by default "xformers".
    device_ids : Optional[List[int]], optional
        The GPU ids to use for DataParallel, by default None.
    profile : bool, optional
        Dump a torch.profiler chrome trace of 5 iterations, by default False.
    """

    stream = StreamDiffusionWrapper(
        model_id_or_path=model_id_or_path,
        lora_dict=lora_dict,
        t_index_list=[32, 45],
        frame_buffer_size=1,
        width=width,
        height=height,
        warmup=warmup,
        acceleration=acceleration,
        device_ids=device_ids,
        mode="img2img",
        use_lcm_lora=use_lcm_lora,
        use_tiny_vae=use_tiny_vae,
        use_denoising_batch=use_denoising_batch,
        cfg_type="self",
        seed=seed,
    )

    stream.prepare(
        prompt=prompt,
        negative_prompt=negative_prompt,
        num_inference_steps=50,
        guidance_scale=1.2,
        delta=0.5,
    )

    image = download_image("https://github.com/ddpn08.png").resize((width, height))
    image_tensor = stream.preprocess_image(image)

    # warmup
    for _ in range(warmup):
        stream.stream(image_tensor)

    results = []

    for _ in tqdm(range(iterations)):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        stream.stream(image_tensor)
        end.record()

        torch.cuda.synchronize()
        results.append(start.elapsed_time(end))

    print(f"Device: {torch.cuda.get_device_name()}")
    print(f"Average time: {sum(results) / len(results)}ms")
    print(f"Average FPS: {1000 / (sum(results) / len(results))}")
    fps_arr = 1000 / np.array(results)
    print(f"Max FPS: {np.max(fps_arr)}")
    print(f"Min FPS: {np.min(fps_arr)}")
    print(f"Std: {np.std(fps_arr)}")
    print(f"Peak memory: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")

    if profile:
        from torch.profiler import ProfilerActivity, profile as torch_profile

        with torch_profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
            for _ in range(5):
                stream.stream(image_tensor)
            torch.cuda.synchronize()  # flush kernels before the profiler stops
        prof.export_chrome_trace("streamdiffusion_img2img_trace.json")
        print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=20))


def main():
    fire.Fire(run)


if __name__ == "__main__":
    main()
