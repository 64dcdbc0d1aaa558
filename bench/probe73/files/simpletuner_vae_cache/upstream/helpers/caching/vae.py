import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import List, Optional

import torch
from PIL import Image
from torchvision import transforms
from tqdm import tqdm

from helpers.image_manipulation.training_sample import TrainingSample
from helpers.multiaspect.image import MultiaspectImage
from helpers.training.multi_process import rank_info, should_log
from helpers.training.state_tracker import StateTracker

logger = logging.getLogger("VAECache")
if should_log():
    logger.setLevel(os.environ.get("SIMPLETUNER_LOG_LEVEL", "INFO"))
else:
    logger.setLevel("ERROR")

DEFAULT_VAE_BATCH_SIZE = 4


def prepare_sample(image: Image.Image, data_backend_id: str, filepath: str, model=None):
    metadata = StateTracker.get_metadata_by_filepath(filepath, data_backend_id=data_backend_id)
    training_sample = TrainingSample(image=image, data_backend_id=data_backend_id, image_metadata=metadata, image_path=filepath, model=model)
    prepared_sample = training_sample.prepare()
    return (prepared_sample.image, prepared_sample.crop_coordinates, prepared_sample.aspect_ratio)


class VAECache:
    read_queue = None
    process_queue = None
    vae_input_queue = None

    def __init__(
        self,
        id: str,
        model,
        vae,
        accelerator,
        metadata_backend,
        instance_data_dir: str,
        image_data_backend,
        cache_data_backend=None,
        cache_dir="vae_cache",
        resolution: float = 1024,
        maximum_image_size: Optional[int] = None,
        target_downsample_size: Optional[int] = None,
        delete_problematic_images: bool = False,
        write_batch_size: int = 25,
        read_batch_size: int = 25,
        process_queue_size: int = 16,
        vae_batch_size: int = DEFAULT_VAE_BATCH_SIZE,
        hash_filenames: bool = False,
        max_workers: int = 32,
        vae_cache_ondemand: bool = False,
    ):
        self.id = id
        self.model = model
        if image_data_backend and image_data_backend.id != id:
            raise ValueError(f"VAECache received incorrect image_data_backend: {image_data_backend}")
        self.image_data_backend = image_data_backend
        self.cache_data_backend = cache_data_backend if cache_data_backend is not None else image_data_backend
        self.hash_filenames = hash_filenames
        self.vae = vae
        self.accelerator = accelerator
        self.cache_dir = cache_dir
        if len(self.cache_dir) > 0 and self.cache_dir[-1] == "/":
            # Remove trailing slash
            self.cache_dir = self.cache_dir[:-1]
        if self.cache_data_backend and self.cache_data_backend.type == "local":
            self.cache_data_backend.create_directory(self.cache_dir)
        self.resolution = resolution
        self.maximum_image_size = maximum_image_size
        self.target_downsample_size = target_downsample_size
        self.delete_problematic_images = delete_problematic_images
        self.write_batch_size = write_batch_size
        self.read_batch_size = read_batch_size
        self.process_queue_size = process_queue_size
        self.vae_batch_size = self._auto_vae_batch_size(vae_batch_size)
        self.instance_data_dir = instance_data_dir
        self.transform = MultiaspectImage.get_image_transforms()
        self.rank_info = rank_info()
        self.metadata_backend = metadata_backend
        self.max_workers = max_workers
        self.vae_cache_ondemand = vae_cache_ondemand
        if self.vae is not None:
            self.vae.to(self.accelerator.device)
            self.vae.requires_grad_(False)

    def _auto_vae_batch_size(self, requested: int) -> int:
        """Shrink the VAE batch when the card is short on memory; 1024px SDXL VAE encodes take ~2.5 GiB each."""
        if not torch.cuda.is_available():
            return requested
        free_bytes, _total = torch.cuda.mem_get_info()
        fits = max(1, int(free_bytes / (2.5 * 1024**3)))
        if fits < requested:
            logger.warning(f"(id={self.id}) Reducing VAE batch size from {requested} to {fits} to fit in free VRAM.")
        return min(requested, fits)

    def debug_log(self, msg: str):
        logger.debug(f"{self.rank_info}(id={self.id}) {msg}")

    def generate_vae_cache_filename(self, filepath: str) -> tuple:
        """Get the cache filename for a given image filepath and its base name."""
        if filepath.endswith(".pt"):
            return filepath, os.path.basename(filepath)
        # Extract the base name from the filepath and replace the image extension with .pt
        base_filename = os.path.splitext(os.path.basename(filepath))[0]
        base_filename = str(base_filename) + ".pt"
        # Find the subfolders the sample was in, and replace the instance_data_dir with the cache_dir
        subfolders = ""
        if self.instance_data_dir is not None:
            subfolders = os.path.dirname(filepath).replace(self.instance_data_dir, "")
            subfolders = subfolders.lstrip(os.sep)
        if len(subfolders) > 0:
            full_filename = os.path.join(self.cache_dir, subfolders, base_filename)
        else:
            full_filename = os.path.join(self.cache_dir, base_filename)
        return full_filename, base_filename

    def retrieve_from_cache(self, filepath: str):
        """
        Use the encode_images method to emulate a single image encoding.
        """
        return self.encode_images([None], [filepath])[0]

    def _read_from_storage(self, filename: str, hide_errors: bool = False) -> torch.Tensor:
        try:
            return self.cache_data_backend.torch_load(filename)
        except Exception as e:
            if self.delete_problematic_images:
                self.metadata_backend.remove_image(filename)
                self.cache_data_backend.delete(filename)
            if not hide_errors:
                logger.error(f"Failed to load latent from {filename}: {e}")
            raise e

    def encode_images(self, images, filepaths, load_from_cache=True):
        """
        Encode a batch of input images. Images must be the same dimension.

        If load_from_cache=True, we read from the VAE cache rather than encode.
        If load_from_cache=True, we will throw an exception if the entry is not found.
        """
        batch_size = len(images)
        if batch_size != len(filepaths):
            raise ValueError("Mismatch between number of images and filepaths.")

        full_filenames = [self.generate_vae_cache_filename(filepath)[0] for filepath in filepaths]

        # Check cache for each image and filter out already cached ones
        uncached_images = []
        uncached_image_indices = [i for i, filename in enumerate(full_filenames) if not self.cache_data_backend.exists(filename)]
        uncached_image_paths = [filepaths[i] for i, filename in enumerate(full_filenames) if i in uncached_image_indices]

        if len(uncached_image_indices) > 0 and load_from_cache and not self.vae_cache_ondemand:
            raise Exception(f"(id={self.id}) Some images were not correctly cached during the VAE Cache operations. Ensure --skip_file_discovery=vae is not set.\nProblematic images: {uncached_image_paths}")

        if load_from_cache:
            # If all images are cached, simply load them
            latents = [self._read_from_storage(filename) for filename in full_filenames if filename not in uncached_images]
        elif len(uncached_images) > 0:
            latents = []

        if len(uncached_image_indices) > 0 and not load_from_cache:
            uncached_images = [images[i] for i in uncached_image_indices]

        if len(uncached_images) > 0 and (len(uncached_image_indices) > 0 and load_from_cache) or not load_from_cache:
            # Now, encode only the uncached images
            with torch.no_grad():
                processed_images = torch.stack(uncached_images).to(self.accelerator.device, dtype=StateTracker.get_vae_dtype(), non_blocking=True)
                start = time.time()
                with torch.autocast(device_type="cuda", dtype=self.vae.dtype, enabled=self.vae.dtype != torch.float32):
                    latents_uncached = self.vae.encode(processed_images)
                torch.cuda.synchronize()
                self.debug_log(f"Encoded {len(uncached_images)} images in {time.time() - start:.3f}s")

                if hasattr(latents_uncached, "latent_dist"):
                    latents_uncached = latents_uncached.latent_dist.sample()
                elif hasattr(latents_uncached, "sample"):
                    latents_uncached = latents_uncached.sample()
                latents_uncached = self.model.scale_latents(latents_uncached)

            # Prepare final latents list by combining cached and newly computed latents
            latents = []
            cached_idx, uncached_idx = 0, 0
            for i in range(batch_size):
                if i in uncached_image_indices:
                    latents.append(latents_uncached[uncached_idx])
                    uncached_idx += 1
                else:
                    latents.append(self._read_from_storage(full_filenames[i]))
                    cached_idx += 1
        return latents

    def _write_latents_in_batch(self, filepaths: List[str], latents: List[torch.Tensor]):
        with ThreadPoolExecutor(max_workers=self.max_workers) as executor:
            futures = []
            for filepath, latent in zip(filepaths, latents):
                output_file, _ = self.generate_vae_cache_filename(filepath)
                cpu_latent = latent.to("cpu", non_blocking=False).clone()
                futures.append(executor.submit(self.cache_data_backend.torch_save, cpu_latent, output_file))
            for future in futures:
                future.result()

    def process_buckets(self):
        aspect_bucket_cache = self.metadata_backend.read_cache().copy()
        for bucket in tqdm(list(aspect_bucket_cache.keys()), desc=f"Processing buckets for {self.id}", leave=False, ncols=125):
            relevant_files = aspect_bucket_cache[bucket]
            loader = torch.utils.data.DataLoader(relevant_files, batch_size=self.vae_batch_size, num_workers=4, pin_memory=True, collate_fn=lambda x: x)
            for file_batch in loader:
                images = []
                for filepath in file_batch:
                    image = self.image_data_backend.read_image(filepath)
                    prepared_image, _crop, _aspect = prepare_sample(image, self.id, filepath, self.model)
                    images.append(self.transform(prepared_image))
                latents = self.encode_images(images, file_batch, load_from_cache=False)
                self._write_latents_in_batch(file_batch, latents)
            torch.cuda.empty_cache()
        self.accelerator.wait_for_everyone()
