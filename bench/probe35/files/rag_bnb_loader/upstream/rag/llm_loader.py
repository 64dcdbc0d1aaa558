"""
Local LLM + embedding loaders for the LangChain RAG pipeline.

The generator is loaded in 4-bit NF4 with bitsandbytes so that a 7B/8B instruct model fits
next to the embedding model on a single 24 GB GPU.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Optional

import torch
from langchain_community.embeddings import HuggingFaceBgeEmbeddings
from langchain_community.llms import HuggingFacePipeline
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    BitsAndBytesConfig,
    StoppingCriteria,
    StoppingCriteriaList,
    pipeline,
)

logger = logging.getLogger(__name__)

DEFAULT_LLM = os.getenv("RAG_LLM", "meta-llama/Meta-Llama-3-8B-Instruct")
DEFAULT_EMBEDDER = os.getenv("RAG_EMBEDDER", "BAAI/bge-large-en-v1.5")


@dataclass
class LLMConfig:
    model_id: str = DEFAULT_LLM
    load_in_4bit: bool = True
    max_new_tokens: int = 512
    temperature: float = 0.1
    top_p: float = 0.95
    repetition_penalty: float = 1.1
    use_flash_attention: bool = True
    stop_strings: list = field(default_factory=lambda: ["<|eot_id|>", "\nQuestion:"])


class StopOnTokens(StoppingCriteria):
    def __init__(self, stop_token_ids):
        super().__init__()
        self.stop_token_ids = stop_token_ids

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor, **kwargs) -> bool:
        for stop_ids in self.stop_token_ids:
            if torch.equal(input_ids[0][-len(stop_ids) :], stop_ids):
                return True
        return False


def _quantization_config(cfg: LLMConfig) -> Optional[BitsAndBytesConfig]:
    if not cfg.load_in_4bit:
        return None
    if not torch.cuda.is_available():
        logger.warning("bitsandbytes 4-bit needs a GPU; loading the model unquantized on CPU")
        return None
    return BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_use_double_quant=True,
        bnb_4bit_compute_dtype=torch.float16,
    )


def load_llm(cfg: Optional[LLMConfig] = None) -> HuggingFacePipeline:
    cfg = cfg or LLMConfig()
    tokenizer = AutoTokenizer.from_pretrained(cfg.model_id)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token

    quant_config = _quantization_config(cfg)
    model_kwargs = dict(
        quantization_config=quant_config,
        torch_dtype=torch.float16,
        device_map="cuda:0",
        low_cpu_mem_usage=True,
    )
    if cfg.use_flash_attention:
        model_kwargs["attn_implementation"] = "flash_attention_2"

    model = AutoModelForCausalLM.from_pretrained(cfg.model_id, **model_kwargs)
    model.eval()
    logger.info(
        "Loaded %s (4bit=%s) - %.1f GB allocated",
        cfg.model_id,
        quant_config is not None,
        torch.cuda.memory_allocated() / 1e9,
    )

    stop_token_ids = [
        torch.LongTensor(tokenizer(s, add_special_tokens=False)["input_ids"]).to("cuda") for s in cfg.stop_strings
    ]
    stopping = StoppingCriteriaList([StopOnTokens(stop_token_ids)])

    generate = pipeline(
        "text-generation",
        model=model,
        tokenizer=tokenizer,
        return_full_text=False,
        max_new_tokens=cfg.max_new_tokens,
        do_sample=cfg.temperature > 0,
        temperature=cfg.temperature,
        top_p=cfg.top_p,
        repetition_penalty=cfg.repetition_penalty,
        stopping_criteria=stopping,
    )
    return HuggingFacePipeline(pipeline=generate)


def load_embeddings(model_name: str = DEFAULT_EMBEDDER, batch_size: int = 64) -> HuggingFaceBgeEmbeddings:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    return HuggingFaceBgeEmbeddings(
        model_name=model_name,
        model_kwargs={"device": device},
        encode_kwargs={"normalize_embeddings": True, "batch_size": batch_size},
        query_instruction="Represent this sentence for searching relevant passages: ",
    )


def free_gpu_memory() -> None:
    import gc

    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.ipc_collect()
