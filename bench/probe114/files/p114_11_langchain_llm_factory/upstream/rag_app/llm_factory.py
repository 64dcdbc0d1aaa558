"""Builds the LangChain LLM object the rest of the app talks to.

Supported backends (``LLMConfig.backend``):

* ``hf``        -- transformers pipeline wrapped in HuggingFacePipeline (fp16 / 8-bit / 4-bit)
* ``llamacpp``  -- GGUF through llama-cpp-python (layers offloaded with ``n_gpu_layers``)
* ``vllm``      -- vLLM offline engine through langchain_community.llms.VLLM
* ``openai``    -- any OpenAI-compatible endpoint (Ollama, llama.cpp server, LM Studio ...)

The GPU backends assume an NVIDIA card; everything falls back to CPU when none is found.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Any, Dict, Optional

import torch

logger = logging.getLogger(__name__)


@dataclass
class LLMConfig:
    backend: str = "hf"
    model_id: str = "meta-llama/Llama-2-7b-chat-hf"
    model_path: Optional[str] = None          # GGUF file for llamacpp
    quantization: Optional[str] = None        # None | "8bit" | "4bit"
    max_new_tokens: int = 512
    temperature: float = 0.1
    top_p: float = 0.95
    repetition_penalty: float = 1.15
    context_window: int = 4096
    n_gpu_layers: int = -1                    # llamacpp: -1 = offload everything
    n_batch: int = 512
    gpu_memory_utilization: float = 0.85      # vllm
    tensor_parallel_size: int = 1             # vllm
    openai_base_url: str = "http://localhost:11434/v1"
    extra: Dict[str, Any] = field(default_factory=dict)


def pick_device() -> str:
    """Return the torch device string the HF backend should use."""
    if torch.cuda.is_available():
        return "cuda:0"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def pick_dtype(device: str) -> torch.dtype:
    if device.startswith("cuda"):
        # Ampere and newer have native bf16; older cards (T4, V100) need fp16
        major, _ = torch.cuda.get_device_capability()
        return torch.bfloat16 if major >= 8 else torch.float16
    if device == "mps":
        return torch.float16
    return torch.float32


def _build_hf(cfg: LLMConfig):
    from langchain_community.llms import HuggingFacePipeline
    from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig, pipeline

    device = pick_device()
    dtype = pick_dtype(device)
    logger.info("Loading %s on %s (%s, quantization=%s)", cfg.model_id, device, dtype, cfg.quantization)

    tokenizer = AutoTokenizer.from_pretrained(cfg.model_id, use_fast=True)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token

    model_kwargs: Dict[str, Any] = {"torch_dtype": dtype, "low_cpu_mem_usage": True}
    if cfg.quantization == "8bit":
        model_kwargs["quantization_config"] = BitsAndBytesConfig(load_in_8bit=True)
        model_kwargs["device_map"] = "auto"
    elif cfg.quantization == "4bit":
        model_kwargs["quantization_config"] = BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_quant_type="nf4",
            bnb_4bit_use_double_quant=True,
            bnb_4bit_compute_dtype=dtype,
        )
        model_kwargs["device_map"] = "auto"

    model = AutoModelForCausalLM.from_pretrained(cfg.model_id, **model_kwargs)
    if cfg.quantization is None:
        model = model.to(device)
    model.eval()

    pipe = pipeline(
        "text-generation",
        model=model,
        tokenizer=tokenizer,
        max_new_tokens=cfg.max_new_tokens,
        do_sample=cfg.temperature > 0,
        temperature=cfg.temperature,
        top_p=cfg.top_p,
        repetition_penalty=cfg.repetition_penalty,
        return_full_text=False,
    )
    return HuggingFacePipeline(pipeline=pipe)


def _build_llamacpp(cfg: LLMConfig):
    from langchain_community.llms import LlamaCpp

    if not cfg.model_path or not os.path.isfile(cfg.model_path):
        raise FileNotFoundError(f"GGUF model not found: {cfg.model_path}")

    n_gpu_layers = cfg.n_gpu_layers if torch.cuda.is_available() else 0
    return LlamaCpp(
        model_path=cfg.model_path,
        n_ctx=cfg.context_window,
        n_batch=cfg.n_batch,
        n_gpu_layers=n_gpu_layers,
        f16_kv=True,
        temperature=cfg.temperature,
        top_p=cfg.top_p,
        repeat_penalty=cfg.repetition_penalty,
        max_tokens=cfg.max_new_tokens,
        verbose=False,
    )


def _build_vllm(cfg: LLMConfig):
    from langchain_community.llms import VLLM

    tp = cfg.tensor_parallel_size or torch.cuda.device_count()
    return VLLM(
        model=cfg.model_id,
        trust_remote_code=True,
        max_new_tokens=cfg.max_new_tokens,
        temperature=cfg.temperature,
        top_p=cfg.top_p,
        tensor_parallel_size=tp,
        vllm_kwargs={
            "gpu_memory_utilization": cfg.gpu_memory_utilization,
            "max_model_len": cfg.context_window,
            "dtype": "half",
            "enforce_eager": False,
        },
    )


def _build_openai(cfg: LLMConfig):
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        base_url=cfg.openai_base_url,
        api_key=os.environ.get("OPENAI_API_KEY", "not-needed"),
        model=cfg.model_id,
        temperature=cfg.temperature,
        max_tokens=cfg.max_new_tokens,
    )


_BUILDERS = {
    "hf": _build_hf,
    "llamacpp": _build_llamacpp,
    "vllm": _build_vllm,
    "openai": _build_openai,
}


def build_llm(cfg: Optional[LLMConfig] = None):
    cfg = cfg or LLMConfig()
    try:
        builder = _BUILDERS[cfg.backend]
    except KeyError:
        raise ValueError(f"unknown backend {cfg.backend!r}, choose one of {sorted(_BUILDERS)}") from None
    llm = builder(cfg)
    logger.info("LLM backend %s ready", cfg.backend)
    return llm


def from_env() -> LLMConfig:
    """Build an LLMConfig from RAG_LLM_* environment variables (used by the docker images)."""
    cfg = LLMConfig()
    env = os.environ
    cfg.backend = env.get("RAG_LLM_BACKEND", cfg.backend)
    cfg.model_id = env.get("RAG_LLM_MODEL", cfg.model_id)
    cfg.model_path = env.get("RAG_LLM_GGUF", cfg.model_path)
    cfg.quantization = env.get("RAG_LLM_QUANT") or None
    cfg.max_new_tokens = int(env.get("RAG_LLM_MAX_NEW_TOKENS", cfg.max_new_tokens))
    cfg.temperature = float(env.get("RAG_LLM_TEMPERATURE", cfg.temperature))
    cfg.context_window = int(env.get("RAG_LLM_CTX", cfg.context_window))
    cfg.n_gpu_layers = int(env.get("RAG_LLM_N_GPU_LAYERS", cfg.n_gpu_layers))
    cfg.gpu_memory_utilization = float(env.get("RAG_LLM_GPU_MEM", cfg.gpu_memory_utilization))
    cfg.tensor_parallel_size = int(env.get("RAG_LLM_TP", cfg.tensor_parallel_size))
    cfg.openai_base_url = env.get("RAG_LLM_OPENAI_URL", cfg.openai_base_url)
    return cfg


def warmup(llm, prompt: str = "Say OK.") -> float:
    """Run one short generation so the first user request doesn't pay for lazy init."""
    import time

    t0 = time.perf_counter()
    try:
        llm.invoke(prompt)
    except Exception as exc:  # noqa: BLE001 - warmup must never kill the app
        logger.warning("warmup failed: %s", exc)
    return time.perf_counter() - t0


def describe_hardware() -> Dict[str, Any]:
    """Used by the /health endpoint."""
    info: Dict[str, Any] = {"torch": torch.__version__, "device": pick_device()}
    if info["device"].startswith("cuda"):
        free, total = torch.cuda.mem_get_info()
        info.update(
            gpu_name=torch.cuda.get_device_name(),
            gpu_count=torch.cuda.device_count(),
            vram_free_gb=round(free / 2**30, 2),
            vram_total_gb=round(total / 2**30, 2),
            cuda=torch.version.cuda,
        )
    return info
