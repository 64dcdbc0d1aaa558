from __future__ import annotations

import math
import re
from typing import List, Optional

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image
from tqdm import tqdm

from surya.common.polygon import PolygonBox
from surya.common.predictor import BasePredictor
from surya.common.util import mark_step
from surya.recognition.loader import RecognitionModelLoader
from surya.recognition.schema import TextLine, OCRResult, TextChar
from surya.settings import settings


class StaticDecodeCache:
    """Pre-allocated key/value buffers so the compiled decoder can be captured as a
    CUDA graph ("reduce-overhead") without re-allocating every step."""

    def __init__(self, config, batch_size: int, max_cache_len: int, device, dtype):
        self.max_cache_len = max_cache_len
        self.key_cache: List[torch.Tensor] = []
        self.value_cache: List[torch.Tensor] = []
        head_dim = config.hidden_size // config.num_attention_heads
        cache_shape = (batch_size, config.num_key_value_heads, max_cache_len, head_dim)
        for _ in range(config.num_hidden_layers):
            k = torch.zeros(cache_shape, dtype=dtype, device=device)
            v = torch.zeros(cache_shape, dtype=dtype, device=device)
            torch._dynamo.mark_static_address(k)
            torch._dynamo.mark_static_address(v)
            self.key_cache.append(k)
            self.value_cache.append(v)

    def reset(self):
        for k, v in zip(self.key_cache, self.value_cache):
            k.zero_()
            v.zero_()


class RecognitionPredictor(BasePredictor):
    model_loader_cls = RecognitionModelLoader
    batch_size = settings.RECOGNITION_BATCH_SIZE
    default_batch_sizes = {
        "cpu": 32,
        "mps": 64,
        "cuda": 256,
        "xla": 128,
    }
    encoder_chunk_size: int = 4096
    encoder_chunk_sizes = {"cpu": 4096, "mps": 4096, "cuda": 32768, "xla": 32768}
    torch_dtype = settings.MODEL_DTYPE_BFLOAT

    def __init__(self, checkpoint=None, device=settings.TORCH_DEVICE_MODEL, dtype=None):
        super().__init__(checkpoint, device, dtype)
        self.kv_cache = None
        self.graph = None
        self.static_inputs = None

    def get_encoder_chunk_size(self) -> int:
        if settings.RECOGNITION_CHUNK_SIZE if hasattr(settings, "RECOGNITION_CHUNK_SIZE") else None:
            return settings.RECOGNITION_CHUNK_SIZE
        chunk_size = self.encoder_chunk_size
        if settings.TORCH_DEVICE_MODEL in self.encoder_chunk_sizes:
            chunk_size = self.encoder_chunk_sizes[settings.TORCH_DEVICE_MODEL]
        return chunk_size

    def setup_cache(self, batch_size: int, max_cache_len: int):
        self.kv_cache = StaticDecodeCache(
            self.model.config.decoder,
            batch_size,
            max_cache_len,
            device=self.model.device,
            dtype=self.model.dtype,
        )

    def capture_decode_graph(self, input_ids: torch.Tensor, position_ids: torch.Tensor):
        """Capture a single decoder step with CUDA graphs; replayed for every token."""
        self.static_inputs = {
            "input_ids": input_ids.clone(),
            "position_ids": position_ids.clone(),
        }
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                self.model.decoder(**self.static_inputs, past_key_values=self.kv_cache)
        torch.cuda.current_stream().wait_stream(s)

        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.static_outputs = self.model.decoder(
                **self.static_inputs, past_key_values=self.kv_cache
            )

    def decode_step(self, input_ids: torch.Tensor, position_ids: torch.Tensor):
        if self.graph is not None:
            self.static_inputs["input_ids"].copy_(input_ids)
            self.static_inputs["position_ids"].copy_(position_ids)
            self.graph.replay()
            return self.static_outputs
        return self.model.decoder(
            input_ids=input_ids, position_ids=position_ids, past_key_values=self.kv_cache
        )

    def prepare_input(self, images: List[Image.Image], task_names: List[str]):
        batch = self.processor(images=images, tasks=task_names)
        pixel_values = batch["pixel_values"].to(self.model.device, dtype=self.model.dtype)
        input_ids = batch["input_ids"].to(self.model.device)
        attention_mask = batch["attention_mask"].to(self.model.device)
        return pixel_values, input_ids, attention_mask

    def __call__(
        self,
        images: List[Image.Image],
        task_names: List[str] | None = None,
        det_predictor=None,
        recognition_batch_size: int | None = None,
        sort_lines: bool = True,
        math_mode: bool = True,
        max_tokens: int | None = None,
    ) -> List[OCRResult]:
        if task_names is None:
            task_names = ["ocr_with_boxes"] * len(images)
        if recognition_batch_size is None:
            recognition_batch_size = self.get_batch_size()
        max_tokens = max_tokens or settings.RECOGNITION_MAX_TOKENS

        all_results = []
        for i in tqdm(range(0, len(images), recognition_batch_size), desc="Recognizing Text",
                      disable=self.disable_tqdm):
            batch_images = images[i:i + recognition_batch_size]
            batch_tasks = task_names[i:i + recognition_batch_size]
            current_batch_size = len(batch_images)

            pixel_values, input_ids, attention_mask = self.prepare_input(batch_images, batch_tasks)

            with settings.INFERENCE_MODE():
                encoder_hidden_states = self.model.encoder(pixel_values=pixel_values)
                mark_step()

                if settings.RECOGNITION_STATIC_CACHE:
                    # pad the batch so the captured graph always sees the same shapes
                    padding = recognition_batch_size - current_batch_size
                    if padding > 0:
                        input_ids = F.pad(input_ids, (0, 0, 0, padding), value=0)
                        attention_mask = F.pad(attention_mask, (0, 0, 0, padding), value=0)
                    self.setup_cache(recognition_batch_size, max_tokens + input_ids.shape[1])

                batch_predictions = [[] for _ in range(current_batch_size)]
                done = torch.zeros(input_ids.shape[0], dtype=torch.bool, device=self.model.device)
                position_ids = torch.arange(input_ids.shape[1], device=self.model.device).unsqueeze(0)

                out = self.model.decoder(
                    input_ids=input_ids,
                    encoder_hidden_states=encoder_hidden_states,
                    attention_mask=attention_mask,
                    position_ids=position_ids,
                    past_key_values=self.kv_cache,
                )
                next_token = out.logits[:, -1].argmax(-1, keepdim=True)

                if settings.RECOGNITION_STATIC_CACHE and settings.TORCH_DEVICE_MODEL == "cuda" and self.graph is None:
                    self.capture_decode_graph(next_token, position_ids[:, -1:] + 1)

                for step in range(max_tokens):
                    position_ids = position_ids[:, -1:] + 1
                    out = self.decode_step(next_token, position_ids)
                    next_token = out.logits[:, -1].argmax(-1, keepdim=True)
                    done = done | (next_token.squeeze(-1) == self.processor.eos_token_id)
                    for j in range(current_batch_size):
                        if not done[j]:
                            batch_predictions[j].append(int(next_token[j]))
                    if done[:current_batch_size].all():
                        break

                if settings.TORCH_DEVICE_MODEL == "cuda":
                    torch.cuda.synchronize()

            for j, tokens in enumerate(batch_predictions):
                text = self.processor.decode(tokens, batch_tasks[j])
                all_results.append(
                    OCRResult(
                        text_lines=[TextLine(text=text, polygon=[[0, 0], [0, 0], [0, 0], [0, 0]], confidence=1.0)],
                        image_bbox=[0, 0, batch_images[j].width, batch_images[j].height],
                    )
                )

            del encoder_hidden_states
            if settings.TORCH_DEVICE_MODEL == "cuda":  # free activations between batches
                torch.cuda.empty_cache()

        return all_results
