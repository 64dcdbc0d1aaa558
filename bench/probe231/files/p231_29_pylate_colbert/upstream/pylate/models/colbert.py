from __future__ import annotations

import logging
import math
import os
import string
from typing import Iterable, Literal, Optional

import numpy as np
import torch
import torch.multiprocessing as mp
from scipy.cluster import hierarchy
from sentence_transformers import SentenceTransformer
from sentence_transformers.models import Dense as DenseSentenceTransformer
from sentence_transformers.models import Transformer
from sentence_transformers.util import batch_to_device, load_file_path
from torch import nn
from tqdm.autonotebook import trange

from ..utils import _start_multi_process_pool
from .Dense import Dense

logger = logging.getLogger(__name__)


class ColBERT(SentenceTransformer):
    """
    Loads or creates a ColBERT model that can be used to map sentences / text to multi-vectors embeddings.

    Parameters
    ----------
    model_name_or_path
        If it is a filepath on disk, it loads the model from that path. If it is not a path, it first tries to
        download a pre-trained SentenceTransformer model. If that fails, tries to construct a model from the
        Hugging Face Hub with that name.
    embedding_size
        The output size of the projection layer. Default to 128.
    query_prefix
        Prefix to add to the queries.
    document_prefix
        Prefix to add to the documents.
    device
        Device (like "cuda", "cpu", "mps", "npu") that should be used for computation. If None, checks if a GPU
        can be used.
    attend_to_expansion_tokens
        Whether to attend to the expansion tokens in the attention layer model. If False, the original tokens will
        not only attend to the expansion tokens, only the expansion tokens will attend to the original tokens.
    """

    def __init__(
        self,
        model_name_or_path: str | None = None,
        modules: Optional[Iterable[nn.Module]] = None,
        device: str | None = None,
        prompts: dict[str, str] | None = None,
        default_prompt_name: str | None = None,
        prefix: str | None = None,
        embedding_size: int | None = None,
        query_prefix: str | None = None,
        document_prefix: str | None = None,
        add_special_tokens: bool = True,
        truncation: bool = True,
        query_length: int | None = None,
        document_length: int | None = None,
        attend_to_expansion_tokens: bool | None = None,
        skiplist_words: list[str] | None = None,
        model_kwargs: dict | None = None,
        tokenizer_kwargs: dict | None = None,
        config_kwargs: dict | None = None,
        **kwargs,
    ) -> None:
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        self.query_length = query_length
        self.document_length = document_length
        self.attend_to_expansion_tokens = attend_to_expansion_tokens
        self.skiplist_words = skiplist_words

        super(ColBERT, self).__init__(
            model_name_or_path=model_name_or_path,
            modules=modules,
            device=device,
            prompts=prompts,
            default_prompt_name=default_prompt_name,
            model_kwargs=model_kwargs,
            tokenizer_kwargs=tokenizer_kwargs,
            config_kwargs=config_kwargs,
            **kwargs,
        )

        hidden_size = self[0].get_word_embedding_dimension()

        # If there is no dense layer after the transformer, add a default one
        if len(self) < 2:
            if embedding_size is None:
                embedding_size = 128
            logger.warning(f"Adding a Dense layer to map {hidden_size} -> {embedding_size}.")
            self.append(
                Dense(
                    in_features=hidden_size, out_features=embedding_size, bias=False
                )
            )

        self.to(self.device)
        self.skiplist = [
            self.tokenizer.convert_tokens_to_ids(word)
            for word in (self.skiplist_words or list(string.punctuation))
        ]
        self.query_prefix_id = self.tokenizer.convert_tokens_to_ids(self.query_prefix or "[Q] ")
        self.document_prefix_id = self.tokenizer.convert_tokens_to_ids(self.document_prefix or "[D] ")

    @staticmethod
    def load(input_path) -> "ColBERT":
        return ColBERT(model_name_or_path=input_path)

    def skiplist_mask(self, input_ids: torch.Tensor, skiplist: list[int]) -> torch.Tensor:
        """Create a mask for the set of input_ids that are in the skiplist."""
        skiplist = torch.tensor(skiplist, dtype=torch.long, device=input_ids.device)
        # Create a tensor of ones with the same shape as input_ids
        mask = torch.ones_like(input_ids, dtype=torch.bool)
        # Update the mask for each token in the skiplist
        for token_id in skiplist:
            mask = torch.where(input_ids == token_id, torch.tensor(0, dtype=torch.bool, device=input_ids.device), mask)
        return mask

    def encode(
        self,
        sentences: str | list[str],
        prompt_name: str | None = None,
        prompt: str | None = None,
        batch_size: int = 32,
        show_progress_bar: bool = None,
        precision: Literal["float32", "int8", "uint8", "binary", "ubinary"] = "float32",
        convert_to_numpy: bool = True,
        convert_to_tensor: bool = False,
        padding: bool = False,
        device: str = None,
        normalize_embeddings: bool = True,
        is_query: bool = True,
        pool_factor: int = 1,
        protected_tokens: int = 1,
    ) -> list[torch.Tensor] | np.ndarray | torch.Tensor:
        """Computes the sentence embeddings."""
        if isinstance(sentences, list):
            # If we have a list of list of sentences, we encode each list separately.
            if isinstance(sentences[0], list):
                embeddings = []
                for batch in sentences:
                    batch_embeddings = self.encode(
                        sentences=batch,
                        prompt_name=prompt_name,
                        prompt=prompt,
                        batch_size=batch_size,
                        show_progress_bar=show_progress_bar,
                        precision=precision,
                        convert_to_numpy=convert_to_numpy,
                        convert_to_tensor=convert_to_tensor,
                        padding=padding,
                        device=device,
                        normalize_embeddings=normalize_embeddings,
                        is_query=is_query,
                        pool_factor=pool_factor,
                        protected_tokens=protected_tokens,
                    )
                    batch_embeddings = (
                        torch.stack(batch_embeddings) if convert_to_tensor else batch_embeddings
                    )
                    embeddings.append(batch_embeddings)
                return embeddings

        self.eval()
        if show_progress_bar is None:
            show_progress_bar = (
                logger.getEffectiveLevel() == logging.INFO or logger.getEffectiveLevel() == logging.DEBUG
            )

        input_was_string = False
        if isinstance(sentences, str) or not hasattr(sentences, "__len__"):
            sentences = [sentences]
            input_was_string = True

        if device is None:
            device = self.device

        self.to(device)

        all_embeddings = []
        length_sorted_idx = np.argsort([-self._text_length(sen) for sen in sentences])
        sentences_sorted = [sentences[idx] for idx in length_sorted_idx]

        for start_index in trange(0, len(sentences), batch_size, desc="Batches", disable=not show_progress_bar):
            sentences_batch = sentences_sorted[start_index : start_index + batch_size]
            features = self.tokenize(texts=sentences_batch, is_query=is_query)
            features = batch_to_device(features, device)

            with torch.no_grad():
                out_features = self.forward(features)
                if not is_query:
                    # Remove the embeddings of the tokens that are in the skiplist
                    masks = self.skiplist_mask(features["input_ids"], self.skiplist)
                    masks = torch.logical_and(masks, out_features["attention_mask"])
                else:
                    masks = torch.ones_like(features["input_ids"], dtype=torch.bool)

                embeddings = []
                for token_embedding, mask in zip(out_features["token_embeddings"], masks):
                    token_embedding = (
                        torch.nn.functional.normalize(token_embedding[mask], p=2, dim=1)
                        if normalize_embeddings
                        else token_embedding[mask]
                    )
                    embeddings.append(token_embedding)

                if pool_factor > 1 and not is_query:
                    embeddings = self.pool_embeddings_hierarchical(
                        documents_embeddings=embeddings,
                        pool_factor=pool_factor,
                        protected_tokens=protected_tokens,
                    )

                if convert_to_numpy:
                    embeddings = [embedding.float().cpu().numpy() for embedding in embeddings]

                all_embeddings.extend(embeddings)

        all_embeddings = [all_embeddings[idx] for idx in np.argsort(length_sorted_idx)]

        if convert_to_tensor:
            if padding:
                all_embeddings = torch.nn.utils.rnn.pad_sequence(all_embeddings, batch_first=True, padding_value=0)
        elif convert_to_numpy and padding:
            all_embeddings = np.array(all_embeddings)

        return all_embeddings[0] if input_was_string else all_embeddings

    def pool_embeddings_hierarchical(
        self,
        documents_embeddings: list[torch.Tensor],
        pool_factor: int = 1,
        protected_tokens: int = 1,
    ) -> list[torch.Tensor]:
        """Pools the embeddings hierarchically by clustering and averaging them (runs on the CPU)."""
        pooled_embeddings = []
        for document_embeddings in documents_embeddings:
            document_pooled_embeddings = []
            # Protect some tokens (such as the [CLS] token) from pooling
            protected_embeddings = document_embeddings[:protected_tokens]
            embeddings_to_pool = document_embeddings[protected_tokens:]
            # Compute cosine similarity and convert to distance matrix
            cosine_similarities = torch.mm(embeddings_to_pool, embeddings_to_pool.t())
            distance_matrix = 1 - cosine_similarities.float().cpu().numpy()
            # Perform hierarchical clustering using Ward's method
            clusters = hierarchy.linkage(distance_matrix, method="ward")
            # Determine the number of clusters based on pool factor
            num_embeddings = len(embeddings_to_pool)
            num_clusters = max(num_embeddings // pool_factor, 1)
            cluster_labels = hierarchy.fcluster(clusters, t=num_clusters, criterion="maxclust")
            # Pool embeddings within each cluster
            for cluster_id in range(1, num_clusters + 1):
                cluster_indices = torch.where(
                    torch.tensor(cluster_labels == cluster_id, device=document_embeddings.device)
                )[0]
                if cluster_indices.numel() > 0:
                    pooled_embedding = embeddings_to_pool[cluster_indices].mean(dim=0)
                    document_pooled_embeddings.append(pooled_embedding)
            # Re-add protected embeddings
            document_pooled_embeddings.extend(protected_embeddings)
            pooled_embeddings.append(torch.stack(document_pooled_embeddings))
        return pooled_embeddings

    def start_multi_process_pool(self, target_devices: list[str] | None = None) -> dict:
        """
        Starts a multi-process pool to process the encoding with several independent processes.
        This method is recommended if you want to encode on multiple GPUs or CPUs. It is advised
        to start only one process per GPU. This method works together with encode_multi_process
        and stop_multi_process_pool.

        Parameters
        ----------
        target_devices
            PyTorch target devices, e.g. ["cuda:0", "cuda:1", ...], ["npu:0", "npu:1", ...], or ["cpu", "cpu", "cpu", "cpu"].
            If target_devices is None and CUDA/NPU is available, then all available CUDA/NPU devices will be used.
            If target_devices is None and CUDA/NPU is not available, then 4 CPU devices will be used.
        """
        if target_devices is None:
            if torch.cuda.is_available():
                target_devices = [f"cuda:{i}" for i in range(torch.cuda.device_count())]
            else:
                logger.info("CUDA is not available. Starting 4 CPU workers")
                target_devices = ["cpu"] * 4

        logger.info(f"Start multi-process pool on devices: {', '.join(map(str, target_devices))}")

        self.to("cpu")
        self.share_memory()
        ctx = mp.get_context("spawn")
        input_queue = ctx.Queue()
        output_queue = ctx.Queue()
        processes = []

        for device_id in target_devices:
            p = ctx.Process(
                target=_start_multi_process_pool,
                args=(device_id, self, input_queue, output_queue),
                daemon=True,
            )
            p.start()
            processes.append(p)

        return {"input": input_queue, "output": output_queue, "processes": processes}

    def encode_multi_process(
        self,
        sentences: list[str],
        pool: dict,
        batch_size: int = 32,
        chunk_size: int | None = None,
        is_query: bool = True,
        pool_factor: int = 1,
        protected_tokens: int = 1,
    ) -> list[np.ndarray]:
        """Encodes a list of sentences using multiple processes and GPUs via encode."""
        if chunk_size is None:
            chunk_size = min(math.ceil(len(sentences) / len(pool["processes"]) / 10), 5000)

        logger.debug(f"Chunk data into {math.ceil(len(sentences) / chunk_size)} packages of size {chunk_size}")

        input_queue = pool["input"]
        last_chunk_id = 0
        chunk = []

        for sentence in sentences:
            chunk.append(sentence)
            if len(chunk) >= chunk_size:
                input_queue.put([last_chunk_id, batch_size, chunk, is_query, pool_factor, protected_tokens])
                last_chunk_id += 1
                chunk = []

        if len(chunk) > 0:
            input_queue.put([last_chunk_id, batch_size, chunk, is_query, pool_factor, protected_tokens])
            last_chunk_id += 1

        output_queue = pool["output"]
        results_list = sorted(
            [output_queue.get() for _ in trange(last_chunk_id, desc="Chunks")],
            key=lambda x: x[0],
        )
        embeddings = [embedding for result in results_list for embedding in result[1]]
        return embeddings

    def insert_prefix_token(self, input_ids: torch.Tensor, prefix_id: int) -> torch.Tensor:
        """Inserts a prefix token at the beginning of each sequence in the input tensor."""
        prefix_tensor = torch.full(
            size=(input_ids.size(dim=0), 1),
            fill_value=prefix_id,
            dtype=torch.long,
            device=input_ids.device,
        )
        return torch.cat([input_ids[:, :1], prefix_tensor, input_ids[:, 1:]], dim=1)

    def tokenize(
        self,
        texts: list[str] | list[dict] | list[tuple[str, str]],
        is_query: bool = True,
        pad_document: bool = False,
    ) -> dict[str, torch.Tensor]:
        """Tokenizes the input texts, adding the query/document marker and query expansion tokens."""
        # Set max sequence length based on whether the input is a query or document
        max_length = self.query_length if is_query else self.document_length
        self._first_module().max_seq_length = max_length - 1  # reserve one token for the marker

        tokenized_outputs = self._first_module().tokenize(texts, padding="max_length" if is_query or pad_document else True)

        # Determine prefix ID based on input type
        prefix_id = self.query_prefix_id if is_query else self.document_prefix_id

        # add prefix
        tokenized_outputs["input_ids"] = self.insert_prefix_token(tokenized_outputs["input_ids"], prefix_id)

        # Update attention mask to account for the new token
        tokenized_outputs["attention_mask"] = self.insert_prefix_token(tokenized_outputs["attention_mask"], 1)

        # Update token type ids
        if "token_type_ids" in tokenized_outputs:
            tokenized_outputs["token_type_ids"] = self.insert_prefix_token(tokenized_outputs["token_type_ids"], 0)

        if is_query:
            # Fill the padding with mask tokens (query expansion)
            mask = tokenized_outputs["input_ids"] == self.tokenizer.pad_token_id
            tokenized_outputs["input_ids"][mask] = self.tokenizer.mask_token_id
            if self.attend_to_expansion_tokens:
                tokenized_outputs["attention_mask"].fill_(1)

        return tokenized_outputs
