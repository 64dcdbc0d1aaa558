"""mapper module transform images and text to embeddings"""

import time
from functools import lru_cache

import torch
from sentence_transformers import SentenceTransformer

from clip_retrieval.load_clip import load_clip


def normalized(a, axis=-1, order=2):
    import numpy as np  # pylint: disable=import-outside-toplevel

    l2 = np.atleast_1d(np.linalg.norm(a, order, axis))
    l2[l2 == 0] = 1
    return a / np.expand_dims(l2, axis)


@lru_cache(maxsize=None)
def get_device_for_worker():
    """One inference worker per GPU; the worker index picks the GPU."""
    if not torch.cuda.is_available():
        return "cpu"
    return "cuda"


class ClipMapper:
    """transforms images and texts into clip embeddings"""

    def __init__(
        self,
        enable_image,
        enable_text,
        enable_metadata,
        use_mclip,
        clip_model,
        use_jit,
        mclip_model,
        warmup_batch_size=1,
        clip_cache_path=None,
    ):
        self.enable_image = enable_image
        self.enable_text = enable_text
        self.enable_metadata = enable_metadata
        self.use_mclip = use_mclip
        self.device = get_device_for_worker()
        model, _ = load_clip(
            clip_model=clip_model,
            use_jit=use_jit,
            warmup_batch_size=warmup_batch_size,
            clip_cache_path=clip_cache_path,
            device=self.device,
        )
        self.model_img = model.encode_image
        self.model_txt = model.encode_text
        if use_mclip:
            print("\nLoading MCLIP model for text embedding\n")
            mclip = SentenceTransformer(mclip_model)
            self.model_txt = mclip.encode

    def __call__(self, item):
        with torch.no_grad():
            image_embs = None
            text_embs = None
            image_filename = None
            text = None
            metadata = None
            if self.enable_image:
                image_features = self.model_img(item["image_tensor"].to(self.device))
                image_features /= image_features.norm(dim=-1, keepdim=True)
                image_embs = image_features.cpu().to(torch.float16).numpy()
                image_filename = item["image_filename"]
            if self.enable_text:
                if self.use_mclip:
                    text_embs = normalized(self.model_txt(item["text"]))
                else:
                    text_features = self.model_txt(item["text_tokens"].to(self.device))
                    text_features /= text_features.norm(dim=-1, keepdim=True)
                    text_embs = text_features.cpu().to(torch.float16).numpy()
                text = item["text"]
            if self.enable_metadata:
                metadata = item["metadata"]

            return {
                "image_embs": image_embs,
                "text_embs": text_embs,
                "image_filename": image_filename,
                "text": text,
                "metadata": metadata,
            }


class OpenClipAmpMapper(ClipMapper):
    """Same as ClipMapper, but runs the open_clip towers under fp16 autocast for throughput."""

    def __call__(self, item):
        with torch.no_grad(), torch.cuda.amp.autocast():
            return super().__call__(item)


def load_open_clip(clip_model, use_jit=True, device="cuda", clip_cache_path=None):
    """load open clip"""

    import open_clip  # pylint: disable=import-outside-toplevel

    torch.backends.cuda.matmul.allow_tf32 = True

    pretrained = dict(open_clip.list_pretrained())
    checkpoint = pretrained[clip_model]
    model, _, preprocess = open_clip.create_model_and_transforms(
        clip_model, pretrained=checkpoint, device=device, jit=use_jit, cache_dir=clip_cache_path
    )
    model = model.half() if device == "cuda" else model
    return model, preprocess


def warmup(batch_size, device, preprocess, model, tokenizer):
    """Run a couple of dummy batches through both towers so cudnn picks its kernels before timing."""
    fake_img = torch.rand(batch_size, 3, 224, 224)
    fake_txt = tokenizer(["a photo of a cat"] * batch_size)
    t0 = time.time()
    for _ in range(3):
        image_tensor = fake_img.to(device)
        text_tokens = fake_txt.to(device)
        model.encode_image(image_tensor.half() if device == "cuda" else image_tensor)
        model.encode_text(text_tokens)
    torch.cuda.synchronize()
    print(f"warmup done in {time.time() - t0:.2f}s")


def benchmark_mapper(mapper, dataloader, n_batches=50):
    """Images/s for a mapper over a reader, used by `clip-retrieval inference --benchmark`."""
    n_images = 0
    start = time.perf_counter()
    for i, item in enumerate(dataloader):
        if i >= n_batches:
            break
        out = mapper(item)
        if out["image_embs"] is not None:
            n_images += out["image_embs"].shape[0]
    elapsed = time.perf_counter() - start
    peak_mb = torch.cuda.max_memory_allocated() / 2**20
    print(f"{n_images / elapsed:.1f} images/s, peak memory {peak_mb:.0f} MB")
    return n_images / elapsed
