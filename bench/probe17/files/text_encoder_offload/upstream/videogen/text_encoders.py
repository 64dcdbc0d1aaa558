"""T5-XXL + CLIP text encoders with optional CPU offloading (HunyuanVideo / Open-Sora style)."""
import gc
import logging
from typing import List, Optional

import torch
import torch.nn as nn
from transformers import AutoTokenizer, CLIPTextModel, CLIPTokenizer, T5EncoderModel

logger = logging.getLogger(__name__)


def free_gpu_memory(min_free_gib: float = 0.0):
    """Collect garbage and return the free device memory in GiB."""
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.ipc_collect()
    free, _ = torch.cuda.mem_get_info()
    free_gib = free / 2**30
    if free_gib < min_free_gib:
        logger.warning("only %.1f GiB free on GPU, expect OOM", free_gib)
    return free_gib


class T5Embedder(nn.Module):
    available_models = ["DeepFloyd/t5-v1_1-xxl", "google/umt5-xxl"]

    def __init__(self, from_pretrained: str, model_max_length: int = 300, dtype=torch.bfloat16,
                 device: Optional[str] = None, cpu_offload: bool = False, local_files_only: bool = False):
        super().__init__()
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.cpu_offload = cpu_offload
        self.model_max_length = model_max_length
        self.dtype = dtype
        self.tokenizer = AutoTokenizer.from_pretrained(from_pretrained, local_files_only=local_files_only)
        if cpu_offload:
            # keep the 4.7B encoder in pinned host memory, move it to the GPU per call
            self.model = T5EncoderModel.from_pretrained(from_pretrained, torch_dtype=dtype,
                                                        local_files_only=local_files_only).eval()
            for p in self.model.parameters():
                p.data = p.data.pin_memory()
        else:
            self.model = T5EncoderModel.from_pretrained(from_pretrained, torch_dtype=dtype,
                                                        device_map="cuda",
                                                        local_files_only=local_files_only).eval()
        self.model.requires_grad_(False)

    @torch.no_grad()
    def get_text_embeddings(self, texts: List[str]):
        text_tokens_and_mask = self.tokenizer(texts, max_length=self.model_max_length, padding="max_length",
                                              truncation=True, return_attention_mask=True,
                                              add_special_tokens=True, return_tensors="pt")
        input_ids = text_tokens_and_mask["input_ids"].to(self.device)
        attention_mask = text_tokens_and_mask["attention_mask"].to(self.device)
        if self.cpu_offload:
            self.model.to(self.device, non_blocking=True)
        with torch.autocast("cuda", dtype=self.dtype):
            text_encoder_embs = self.model(input_ids=input_ids, attention_mask=attention_mask)["last_hidden_state"]
        if self.cpu_offload:
            self.model.to("cpu")
            free_gpu_memory()
        return text_encoder_embs.detach(), attention_mask


class ClipEmbedder(nn.Module):
    def __init__(self, from_pretrained: str = "openai/clip-vit-large-patch14", max_length: int = 77,
                 dtype=torch.float16, device: Optional[str] = None):
        super().__init__()
        self.device = torch.device(device) if device is not None else torch.device("cuda:0")
        self.tokenizer = CLIPTokenizer.from_pretrained(from_pretrained)
        self.transformer = CLIPTextModel.from_pretrained(from_pretrained, torch_dtype=dtype).to(self.device).eval()
        self.max_length = max_length
        self.transformer.requires_grad_(False)

    @torch.no_grad()
    def forward(self, text: List[str]):
        batch_encoding = self.tokenizer(text, truncation=True, max_length=self.max_length, return_length=True,
                                        return_overflowing_tokens=False, padding="max_length", return_tensors="pt")
        tokens = batch_encoding["input_ids"].to(self.device)
        outputs = self.transformer(input_ids=tokens)
        return outputs.pooler_output


class TextEncoderBundle:
    """Owns both encoders; encodes a batch of prompts and optionally drops the encoders afterwards."""

    def __init__(self, t5_path: str, clip_path: str, t5_offload: bool = True, device: Optional[str] = None):
        self.t5 = T5Embedder(t5_path, cpu_offload=t5_offload, device=device)
        self.clip = ClipEmbedder(clip_path, device=device)
        self.device = self.t5.device

    def encode(self, prompts: List[str], negative_prompts: Optional[List[str]] = None):
        y, mask = self.t5.get_text_embeddings(prompts)
        pooled = self.clip(prompts)
        out = {"y": y, "mask": mask, "pooled": pooled}
        if negative_prompts is not None:
            y_null, mask_null = self.t5.get_text_embeddings(negative_prompts)
            out.update({"y_null": y_null, "mask_null": mask_null, "pooled_null": self.clip(negative_prompts)})
        return out

    def unload(self):
        """Free both encoders once all prompts are encoded (saves ~10 GB of GPU memory)."""
        self.t5.model.to("cpu")
        self.clip.transformer.to("cpu")
        del self.t5, self.clip
        free_gpu_memory()

    def report(self):
        logger.info("text encoders on %s, allocated %.2f GiB", self.device,
                    torch.cuda.memory_allocated() / 2**30)
