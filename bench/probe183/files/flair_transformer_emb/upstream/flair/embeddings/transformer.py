import inspect
import os
import random
import tempfile
import warnings
from abc import abstractmethod
from io import BytesIO
from pathlib import Path
from typing import Any, Dict, List, Literal, Optional, Tuple, Type, Union, cast

import torch
import transformers
from torch.jit import ScriptModule
from transformers import (
    AutoConfig,
    AutoModel,
    AutoTokenizer,
    PretrainedConfig,
    PreTrainedTokenizer,
)
from transformers.tokenization_utils_base import LARGE_INTEGER

import flair
from flair.data import Sentence, Token, log
from flair.embeddings.base import (
    DocumentEmbeddings,
    Embeddings,
    TokenEmbeddings,
    register_embeddings,
)

SENTENCE_BOUNDARY_TAG: str = "[FLERT]"


@torch.jit.script_if_tracing
def pad_sequence_embeddings(all_hidden_states: List[torch.Tensor]) -> torch.Tensor:
    embedding_length = all_hidden_states[0].shape[1]
    longest_token_sequence_in_batch = 0
    for hidden_states in all_hidden_states:
        if hidden_states.shape[0] > longest_token_sequence_in_batch:
            longest_token_sequence_in_batch = hidden_states.shape[0]
    pre_allocated_zero_tensor = torch.zeros(
        embedding_length * longest_token_sequence_in_batch,
        dtype=all_hidden_states[0].dtype,
        device=all_hidden_states[0].device,
    )
    all_embs = []
    for hidden_states in all_hidden_states:
        all_embs.append(hidden_states.view(-1))
        nb_padding_tokens = longest_token_sequence_in_batch - hidden_states.shape[0]
        if nb_padding_tokens > 0:
            all_embs.append(pre_allocated_zero_tensor[: embedding_length * nb_padding_tokens])
    return torch.cat(all_embs).view(len(all_hidden_states), longest_token_sequence_in_batch, embedding_length)


@torch.jit.script_if_tracing
def truncate_hidden_states(hidden_states: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
    return hidden_states[:, :, : input_ids.size()[1]]


@torch.jit.script_if_tracing
def combine_strided_tensors(
    hidden_states: torch.Tensor,
    overflow_to_sample_mapping: torch.Tensor,
    half_stride: int,
    max_length: int,
    default_value: int,
) -> torch.Tensor:
    _, counts = torch.unique(overflow_to_sample_mapping, sorted=True, return_counts=True)
    sentence_count = int(overflow_to_sample_mapping.max().item() + 1)
    token_count = max_length + (max_length - 2) * int(counts.max().item() - 1)
    if hidden_states.dim() == 2:
        sentence_hidden_states = torch.zeros(
            (sentence_count, token_count), device=flair.device, dtype=hidden_states.dtype
        )
    else:
        sentence_hidden_states = torch.zeros(
            (sentence_count, token_count, hidden_states.shape[2]), device=flair.device, dtype=hidden_states.dtype
        )

    sentence_hidden_states += default_value

    for sentence_id in torch.arange(0, sentence_hidden_states.shape[0]):
        selected_sentences = hidden_states[overflow_to_sample_mapping == sentence_id]
        if selected_sentences.size(0) > 1:
            start_part = selected_sentences[0, : half_stride + 1]
            mid_part = selected_sentences[:, half_stride + 1 : max_length - 1 - half_stride]
            mid_part = torch.reshape(mid_part, (mid_part.shape[0] * mid_part.shape[1],) + mid_part.shape[2:])
            end_part = selected_sentences[selected_sentences.shape[0] - 1, max_length - half_stride - 1 :]
            sentence_hidden_state = torch.cat((start_part, mid_part, end_part), dim=0)
            sentence_hidden_states[sentence_id, : sentence_hidden_state.shape[0]] = torch.cat(
                (start_part, mid_part, end_part), dim=0
            )
        else:
            sentence_hidden_states[sentence_id, : selected_sentences.shape[1]] = selected_sentences[0, :]

    return sentence_hidden_states


@torch.jit.script_if_tracing
def fill_masked_elements(
    all_token_embeddings: torch.Tensor,
    sentence_hidden_states: torch.Tensor,
    mask: torch.Tensor,
    word_ids: torch.Tensor,
    lengths: torch.LongTensor,
):
    for i in torch.arange(int(all_token_embeddings.shape[0])):
        r = insert_missing_embeddings(sentence_hidden_states[i][mask[i] & (word_ids[i] >= 0)], word_ids[i], lengths[i])
        all_token_embeddings[i, : lengths[i], :] = r
    return all_token_embeddings


@torch.jit.script_if_tracing
def insert_missing_embeddings(
    token_embeddings: torch.Tensor, word_id: torch.Tensor, length: torch.LongTensor
) -> torch.Tensor:
    # in some cases we need to insert zero vectors for tokens without embedding.
    if token_embeddings.shape[0] == 0:
        if token_embeddings.dim() == 2:
            token_embeddings = torch.zeros(
                int(length), token_embeddings.shape[1], dtype=token_embeddings.dtype, device=token_embeddings.device
            )
        elif token_embeddings.dim() == 3:
            token_embeddings = torch.zeros(
                int(length),
                token_embeddings.shape[1],
                token_embeddings.shape[2],
                dtype=token_embeddings.dtype,
                device=token_embeddings.device,
            )
    elif token_embeddings.shape[0] < length:
        for _id in torch.arange(int(length)):
            zero_vector = torch.zeros_like(token_embeddings[:1])
            if not (word_id == _id).any():
                token_embeddings = torch.cat(
                    (
                        token_embeddings[:_id],
                        zero_vector,
                        token_embeddings[_id:],
                    ),
                    dim=0,
                )
    return token_embeddings


def _legacy_reconstruct_word_ids(
    embedding: "TransformerBaseEmbeddings", flair_tokens: List[List[str]]
) -> List[List[Optional[int]]]:
    word_ids_list = []
    max_len = 0
    for tokens in flair_tokens:
        token_texts = embedding.tokenizer.tokenize(" ".join(tokens), is_split_into_words=True)
        token_ids = cast(List[int], embedding.tokenizer.convert_tokens_to_ids(token_texts))
        expanded_token_ids = embedding.tokenizer.build_inputs_with_special_tokens(token_ids)
        j = 0
        for _i, token_id in enumerate(token_ids):
            if token_id == embedding.tokenizer.unk_token_id:
                token_texts[_i] = embedding.tokenizer.convert_ids_to_tokens(token_id)
        word_ids: List[Optional[int]] = []
        for i in range(len(expanded_token_ids)):
            if j < len(token_ids) and expanded_token_ids[i] == token_ids[j]:
                word_ids.append(j)
                j += 1
            else:
                word_ids.append(None)
        word_ids_list.append(word_ids)
        max_len = max(max_len, len(word_ids))
    return word_ids_list


class TransformerOnnxEmbeddings:
    """Embeddings exported to ONNX and executed with onnxruntime.

    Exporting the FLERT tagger's transformer to ONNX roughly halves latency for
    CPU serving; on GPU use the CUDA execution provider.
    """

    def __init__(self, onnx_model: str, providers: List = [], session_options: Optional[Dict] = None, **kwargs) -> None:
        # onnx prepares numpy arrays, no mather if it runs on gpu or cpu, the input is on cpu first.
        self.onnx_model = onnx_model
        self.providers = providers
        self.session_options = session_options
        self.session = None
        self.kwargs = kwargs

    def create_session(self):
        try:
            import onnxruntime
        except ImportError:
            log.error(
                "You cannot use OnnxEmbeddings without ONNXruntime being installed,"
                "please run `pip install onnxruntime`"
            )
            raise
        if os.path.isfile(self.onnx_model):
            self.session = onnxruntime.InferenceSession(
                self.onnx_model, providers=self.providers, sess_options=self.session_options
            )
        else:
            log.warning(
                f"Could not find file '{self.onnx_model}' used in {self.__class__.__name__}({self.name})."
                "The embedding won't work unless a valid path is set."
            )

    @classmethod
    def export_from_embedding(
        cls,
        path: Union[str, Path],
        embedding: "TransformerEmbeddings",
        example_sentences: List[Sentence],
        opset_version: int = 14,
        providers: Optional[List] = None,
        session_options: Optional[dict] = None,
    ):
        path = str(path)
        example_tensors = embedding.prepare_tensors(example_sentences)
        dynamic_axes = {k: {0: "batch", 1: "sequ_length"} for k in example_tensors.keys()}
        output_names = ["token_embeddings"]
        desired_keys_order = [
            param for param in inspect.signature(embedding.forward).parameters.keys() if param in example_tensors
        ]
        torch.onnx.export(
            embedding,
            (example_tensors,),
            path,
            input_names=desired_keys_order,
            output_names=output_names,
            dynamic_axes=dynamic_axes,
            opset_version=opset_version,
        )
        if providers is None:
            if flair.device.type == "cuda":
                providers = [
                    (
                        "CUDAExecutionProvider",
                        {"device_id": flair.device.index or 0, "cudnn_conv_algo_search": "EXHAUSTIVE"},
                    ),
                    "CPUExecutionProvider",
                ]
            else:
                providers = ["CPUExecutionProvider"]
        return cls(onnx_model=path, providers=providers, session_options=session_options)


class TransformerEmbeddingsRuntime:
    """Helper holding the HF model + tokenizer and doing the forward pass.

    (Condensed from flair.embeddings.transformer.TransformerEmbeddings.)
    """

    def __init__(
        self,
        model: str = "bert-base-uncased",
        fine_tune: bool = True,
        layers: str = "-1",
        subtoken_pooling: str = "first",
        allow_long_sentences: bool = True,
        use_fp16_inference: bool = False,
        **kwargs,
    ) -> None:
        self.name = model
        self.tokenizer: PreTrainedTokenizer = AutoTokenizer.from_pretrained(model, add_prefix_space=True, **kwargs)
        config = AutoConfig.from_pretrained(model, output_hidden_states=True, **kwargs)
        self.model = AutoModel.from_pretrained(model, config=config)
        self.fine_tune = fine_tune
        self.layer_indexes = [int(x) for x in layers.split(",")]
        self.subtoken_pooling = subtoken_pooling
        self.allow_long_sentences = allow_long_sentences
        self.stride = self.tokenizer.model_max_length // 2 if allow_long_sentences else 0
        self.use_fp16_inference = use_fp16_inference and not fine_tune

        # move model to the device flair uses; fp16 inference only makes sense on CUDA
        self.model.to(flair.device)
        if self.use_fp16_inference and flair.device.type == "cuda":
            self.model.half()
        if not fine_tune:
            self.model.eval()

    def prepare_tensors(self, sentences: List[Sentence]) -> Dict[str, torch.Tensor]:
        texts = [[t.text for t in s] for s in sentences]
        batch = self.tokenizer(
            texts,
            is_split_into_words=True,
            stride=self.stride,
            return_overflowing_tokens=self.allow_long_sentences,
            truncation=True,
            padding=True,
            return_tensors="pt",
        )
        model_kwargs = {
            "input_ids": batch["input_ids"].to(flair.device, non_blocking=True),
            "attention_mask": batch["attention_mask"].to(flair.device, non_blocking=True),
        }
        if "overflow_to_sample_mapping" in batch:
            model_kwargs["overflow_to_sample_mapping"] = batch["overflow_to_sample_mapping"].to(flair.device)
        word_ids = [
            [-100 if w is None else w for w in batch.word_ids(i)] for i in range(len(batch["input_ids"]))
        ]
        model_kwargs["word_ids"] = torch.tensor(word_ids, device=flair.device)
        model_kwargs["lengths"] = torch.tensor([len(s) for s in sentences], device=flair.device)
        return model_kwargs

    def forward(self, input_ids, attention_mask, word_ids, lengths, overflow_to_sample_mapping=None):
        gradient_context = torch.enable_grad() if (self.fine_tune and self.model.training) else torch.no_grad()
        with gradient_context:
            out = self.model(input_ids=input_ids, attention_mask=attention_mask)
            hidden_states = torch.stack(out.hidden_states)[self.layer_indexes]
            hidden_states = hidden_states.permute(1, 2, 0, 3).flatten(2)
            if overflow_to_sample_mapping is not None:
                hidden_states = combine_strided_tensors(
                    hidden_states, overflow_to_sample_mapping, self.stride // 2, self.tokenizer.model_max_length, 0
                )
            mask = word_ids >= 0
            all_token_embeddings = torch.zeros(
                word_ids.shape[0], int(lengths.max()), hidden_states.shape[-1],
                device=flair.device, dtype=hidden_states.dtype,
            )
            return fill_masked_elements(all_token_embeddings, hidden_states, mask, word_ids, lengths)

    def embed_with_oom_retry(self, sentences: List[Sentence], min_chunk: int = 1) -> torch.Tensor:
        """Embed, halving the chunk size whenever the GPU runs out of memory."""
        chunk = len(sentences)
        while True:
            try:
                parts = []
                for i in range(0, len(sentences), chunk):
                    tensors = self.prepare_tensors(sentences[i : i + chunk])
                    parts.append(self.forward(**tensors))
                return torch.cat([p.flatten(0, 1) for p in parts])
            except torch.cuda.OutOfMemoryError:
                if chunk <= min_chunk:
                    raise
                torch.cuda.empty_cache()
                chunk = max(min_chunk, chunk // 2)
                log.warning(f"CUDA OOM while embedding; retrying with chunk size {chunk}")
