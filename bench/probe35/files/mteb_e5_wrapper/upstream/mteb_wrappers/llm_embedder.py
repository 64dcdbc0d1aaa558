"""
MTEB wrapper for decoder-only embedding models (e5-mistral-7b-instruct, gte-Qwen2, SFR-Embedding):
instruction-prefixed queries, EOS appended, last-token pooling.

Usage with mteb:

    model = LLMEmbedder("intfloat/e5-mistral-7b-instruct")
    mteb.MTEB(tasks=mteb.get_tasks(tasks=["SciFact"])).run(model, output_folder="results")
"""
from __future__ import annotations

import logging
import math
from typing import Any, Dict, List, Optional

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor
from tqdm.auto import tqdm
from transformers import AutoModel, AutoTokenizer

logger = logging.getLogger(__name__)

DEFAULT_INSTRUCTIONS = {
    "Retrieval": "Given a web search query, retrieve relevant passages that answer the query",
    "Reranking": "Retrieve semantically similar text",
    "STS": "Retrieve semantically similar text",
    "Clustering": "Identify the topic or theme of the given text",
    "Classification": "Classify the given text",
}


def last_token_pool(last_hidden_states: Tensor, attention_mask: Tensor) -> Tensor:
    left_padding = attention_mask[:, -1].sum() == attention_mask.shape[0]
    if left_padding:
        return last_hidden_states[:, -1]
    sequence_lengths = attention_mask.sum(dim=1) - 1
    batch_size = last_hidden_states.shape[0]
    return last_hidden_states[torch.arange(batch_size, device=last_hidden_states.device), sequence_lengths]


class LLMEmbedder:
    def __init__(
        self,
        model_name: str,
        max_length: int = 4096,
        batch_size: int = 16,
        dtype: torch.dtype = torch.bfloat16,
        normalize: bool = True,
        instructions: Optional[Dict[str, str]] = None,
    ):
        self.model_name = model_name
        self.max_length = max_length
        self.batch_size = batch_size
        self.dtype = dtype
        self.normalize = normalize
        self.instructions = instructions or DEFAULT_INSTRUCTIONS

        self.tokenizer = AutoTokenizer.from_pretrained(model_name)
        self.tokenizer.padding_side = "right"
        self.model = AutoModel.from_pretrained(model_name, torch_dtype=dtype, attn_implementation="sdpa")
        self.model.eval()

        self.gpu_count = torch.cuda.device_count()
        self.device = torch.device("cuda:0")
        self.model.to(self.device)
        if self.gpu_count > 1:
            logger.info("Using DataParallel over %d GPUs", self.gpu_count)
            self.model = torch.nn.DataParallel(self.model)
        self.batch_size *= max(1, self.gpu_count)

    def _format_query(self, text: str, task_type: Optional[str]) -> str:
        instruction = self.instructions.get(task_type or "Retrieval", self.instructions["Retrieval"])
        return f"Instruct: {instruction}\nQuery: {text}"

    def _tokenize(self, texts: List[str]) -> Dict[str, Tensor]:
        batch = self.tokenizer(
            texts,
            max_length=self.max_length - 1,
            return_attention_mask=False,
            padding=False,
            truncation=True,
        )
        batch["input_ids"] = [ids + [self.tokenizer.eos_token_id] for ids in batch["input_ids"]]
        return self.tokenizer.pad(batch, padding=True, return_attention_mask=True, return_tensors="pt")

    @torch.no_grad()
    def _encode(self, texts: List[str], show_progress_bar: bool = True) -> np.ndarray:
        # sort by length to minimise padding, restore the order at the end
        order = np.argsort([-len(t) for t in texts])
        texts_sorted = [texts[i] for i in order]

        chunks = []
        for start in tqdm(range(0, len(texts_sorted), self.batch_size), disable=not show_progress_bar):
            batch = self._tokenize(texts_sorted[start : start + self.batch_size])
            batch = {k: v.to("cuda") for k, v in batch.items()}
            with torch.autocast("cuda", dtype=self.dtype):
                outputs = self.model(**batch)
                emb = last_token_pool(outputs.last_hidden_state, batch["attention_mask"])
            if self.normalize:
                emb = F.normalize(emb.float(), p=2, dim=-1)
            chunks.append(emb.float().cpu().numpy())

        embeddings = np.concatenate(chunks, axis=0)
        out = np.empty_like(embeddings)
        out[order] = embeddings
        torch.cuda.empty_cache()
        return out

    # --- mteb Encoder protocol -------------------------------------------------------

    def encode(self, sentences: List[str], *, task_name: str = "", prompt_type: Optional[str] = None, **kwargs: Any) -> np.ndarray:
        task_type = kwargs.get("task_type")
        if prompt_type == "query" or prompt_type is None:
            sentences = [self._format_query(s, task_type) for s in sentences]
        return self._encode(sentences, show_progress_bar=kwargs.get("show_progress_bar", True))

    def encode_queries(self, queries: List[str], **kwargs: Any) -> np.ndarray:
        return self._encode([self._format_query(q, "Retrieval") for q in queries])

    def encode_corpus(self, corpus: List[Dict[str, str]], **kwargs: Any) -> np.ndarray:
        if isinstance(corpus, dict):
            texts = [
                (corpus["title"][i] + " " + corpus["text"][i]).strip() if "title" in corpus else corpus["text"][i]
                for i in range(len(corpus["text"]))
            ]
        else:
            texts = [(doc.get("title", "") + " " + doc["text"]).strip() for doc in corpus]
        return self._encode(texts)

    def similarity(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return a @ b.T
