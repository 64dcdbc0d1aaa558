import json
import os
import re
import warnings
from pathlib import Path
from typing import Dict, List, Optional, Union

import torch
from huggingface_hub import PyTorchModelHubMixin, snapshot_download
from torch import nn
from transformers import AutoConfig, AutoTokenizer

from .config import GLiNERConfig
from .data_processing import SpanProcessor, TokenProcessor
from .data_processing.collator import DataCollator
from .data_processing.tokenizer import WordsSplitter
from .decoding import SpanDecoder, TokenDecoder
from .evaluation import Evaluator
from .modeling.base import SpanModel, TokenModel
from .onnx.model import GLiNERModel, SpanORTModel, TokenORTModel

try:
    import onnxruntime as ort

    ONNX_AVAILABLE = True
except ImportError:
    ONNX_AVAILABLE = False


class GLiNER(nn.Module, PyTorchModelHubMixin):
    """Generalist model for Named Entity Recognition.

    The model can be placed on any torch device; most published checkpoints were
    trained on a single A100 and are usually run with ``model.to("cuda")``.
    """

    def __init__(
        self,
        config: GLiNERConfig,
        model: Optional[Union[SpanModel, TokenModel, GLiNERModel]] = None,
        tokenizer: Optional[Union[str, AutoTokenizer]] = None,
        words_splitter: Optional[Union[str, WordsSplitter]] = None,
        data_processor: Optional[Union[SpanProcessor, TokenProcessor]] = None,
        encoder_from_pretrained: bool = True,
        cache_dir: Optional[Union[str, Path]] = None,
    ):
        super().__init__()
        self.config = config

        if tokenizer is None and data_processor is None:
            tokenizer = AutoTokenizer.from_pretrained(config.model_name, cache_dir=cache_dir)

        if words_splitter is None and data_processor is None:
            words_splitter = WordsSplitter(config.words_splitter_type)

        if config.span_mode == "token_level":
            if model is None:
                self.model = TokenModel(config, encoder_from_pretrained, cache_dir=cache_dir)
            else:
                self.model = model
            if data_processor is None:
                self.data_processor = TokenProcessor(config, tokenizer, words_splitter)
            else:
                self.data_processor = data_processor
            self.decoder = TokenDecoder(config)
        else:
            if model is None:
                self.model = SpanModel(config, encoder_from_pretrained, cache_dir=cache_dir)
            else:
                self.model = model
            if data_processor is None:
                self.data_processor = SpanProcessor(config, tokenizer, words_splitter)
            else:
                self.data_processor = data_processor
            self.decoder = SpanDecoder(config)

        if config.vocab_size != -1 and config.vocab_size != len(self.data_processor.transformer_tokenizer):
            warnings.warn(
                f"""Vocab size of the model ({config.vocab_size}) does't match length of tokenizer
                ({len(self.data_processor.transformer_tokenizer)}).
                You should to consider manually add new tokens to tokenizer or to load tokenizer with added tokens."""
            )

        if isinstance(self.model, GLiNERModel):
            self.onnx_model = True
        else:
            self.onnx_model = False

        # to suppress an AttributeError when training
        self._keys_to_ignore_on_save = None

    def forward(self, *args, **kwargs):
        """Wrapper function for the model's forward pass."""
        output = self.model(*args, **kwargs)
        return output

    @property
    def device(self):
        if self.onnx_model:
            providers = self.model.session.get_providers()
            if "CUDAExecutionProvider" in providers:
                return torch.device("cuda")
            return torch.device("cpu")
        device = next(self.model.parameters()).device
        return device

    def resize_token_embeddings(
        self,
        add_tokens,
        set_class_token_index=True,
        add_tokens_to_tokenizer=True,
        pad_to_multiple_of=None,
    ) -> nn.Embedding:
        if set_class_token_index:
            self.config.class_token_index = len(self.data_processor.transformer_tokenizer) + 1
        if add_tokens_to_tokenizer:
            self.data_processor.transformer_tokenizer.add_tokens(add_tokens)
        new_num_tokens = len(self.data_processor.transformer_tokenizer)
        model_embeds = self.model.token_rep_layer.resize_token_embeddings(new_num_tokens, pad_to_multiple_of)
        self.config.encoder_config.vocab_size = model_embeds.num_embeddings
        self.config.vocab_size = model_embeds.num_embeddings
        if self.config.encoder_config is not None:
            self.config.encoder_config.vocab_size = model_embeds.num_embeddings
        return model_embeds

    def prepare_texts(self, texts: List[str]):
        all_tokens = []
        all_start_token_idx_to_text_idx = []
        all_end_token_idx_to_text_idx = []

        for text in texts:
            tokens = []
            start_token_idx_to_text_idx = []
            end_token_idx_to_text_idx = []
            for token, start, end in self.data_processor.words_splitter(text):
                tokens.append(token)
                start_token_idx_to_text_idx.append(start)
                end_token_idx_to_text_idx.append(end)
            all_tokens.append(tokens)
            all_start_token_idx_to_text_idx.append(start_token_idx_to_text_idx)
            all_end_token_idx_to_text_idx.append(end_token_idx_to_text_idx)

        input_x = [{"tokenized_text": tk, "ner": None} for tk in all_tokens]
        return input_x, all_start_token_idx_to_text_idx, all_end_token_idx_to_text_idx

    def prepare_model_inputs(self, texts: List[str], labels: List[str], prepare_entities: bool = True):
        input_x, all_start_token_idx_to_text_idx, all_end_token_idx_to_text_idx = self.prepare_texts(texts)
        raw_batch = self.data_processor.collate_raw_batch(input_x, labels)
        model_input = self.data_processor.collate_fn(raw_batch, prepare_labels=False)
        model_input.update(
            {
                "span_idx": raw_batch["span_idx"] if "span_idx" in raw_batch else None,
                "span_mask": raw_batch["span_mask"] if "span_mask" in raw_batch else None,
                "text_lengths": raw_batch["seq_length"],
            }
        )

        device = self.device
        for key in model_input:
            if model_input[key] is not None and isinstance(model_input[key], torch.Tensor):
                model_input[key] = model_input[key].to(device)

        return model_input, raw_batch, all_start_token_idx_to_text_idx, all_end_token_idx_to_text_idx

    @torch.no_grad()
    def batch_predict_entities(
        self, texts, labels, flat_ner=True, threshold=0.5, multi_label=False, batch_size=8, **kwargs
    ):
        """Predict entities for a batch of texts."""
        self.eval()
        all_entities = []
        for i in range(0, len(texts), batch_size):
            batch_texts = texts[i : i + batch_size]
            model_input, raw_batch, start_map, end_map = self.prepare_model_inputs(batch_texts, labels)

            model_output = self.model(**model_input)[0]

            if not isinstance(model_output, torch.Tensor):
                model_output = torch.from_numpy(model_output)

            outputs = self.decoder.decode(
                raw_batch["tokens"],
                raw_batch["id_to_classes"],
                model_output,
                flat_ner=flat_ner,
                threshold=threshold,
                multi_label=multi_label,
            )

            for j, output in enumerate(outputs):
                start_token_idx_to_text_idx = start_map[j]
                end_token_idx_to_text_idx = end_map[j]
                entities = []
                for start_token_idx, end_token_idx, ent_type, ent_score in output:
                    start_text_idx = start_token_idx_to_text_idx[start_token_idx]
                    end_text_idx = end_token_idx_to_text_idx[end_token_idx]
                    entities.append(
                        {
                            "start": start_text_idx,
                            "end": end_text_idx,
                            "text": batch_texts[j][start_text_idx:end_text_idx],
                            "label": ent_type,
                            "score": ent_score,
                        }
                    )
                all_entities.append(entities)

        return all_entities

    def predict_entities(self, text, labels, flat_ner=True, threshold=0.5, multi_label=False):
        return self.batch_predict_entities(
            [text], labels, flat_ner=flat_ner, threshold=threshold, multi_label=multi_label
        )[0]

    def evaluate(
        self,
        test_data,
        flat_ner=False,
        multi_label=False,
        threshold=0.5,
        batch_size=12,
        entity_types=None,
    ):
        self.eval()
        dataset = test_data
        collator = DataCollator(
            self.config,
            data_processor=self.data_processor,
            return_tokens=True,
            return_entities=True,
            return_id_to_classes=True,
            prepare_labels=False,
            entity_types=entity_types,
        )
        data_loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=False, collate_fn=collator)

        all_preds = []
        all_trues = []
        device = self.device

        for batch in data_loader:
            for key in batch:
                if isinstance(batch[key], torch.Tensor):
                    batch[key] = batch[key].to(device)

            with torch.no_grad():
                model_output = self.model(**batch)[0]

            if not isinstance(model_output, torch.Tensor):
                model_output = torch.from_numpy(model_output)

            decoded_outputs = self.decoder.decode(
                batch["tokens"],
                batch["id_to_classes"],
                model_output,
                flat_ner=flat_ner,
                threshold=threshold,
                multi_label=multi_label,
            )
            all_preds.extend(decoded_outputs)
            all_trues.extend(batch["entities"])

        evaluator = Evaluator(all_trues, all_preds)
        out, f1 = evaluator.evaluate()
        return out, f1

    def compile(self):
        self.model = torch.compile(self.model)

    def compile_for_training(self):
        print("Compiling transformer encoder...")
        self.model.token_rep_layer = torch.compile(self.model.token_rep_layer)
        print("Compiling RNN...")
        self.model.rnn = torch.compile(self.model.rnn)
        if hasattr(self.model, "span_rep_layer"):
            print("Compiling span representation layer...")
            self.model.span_rep_layer = torch.compile(self.model.span_rep_layer)
        if hasattr(self.model, "prompt_rep_layer"):
            print("Compiling prompt representation layer...")
            self.model.prompt_rep_layer = torch.compile(self.model.prompt_rep_layer)
        if hasattr(self.model, "scorer"):
            print("Compiling scorer...")
            self.model.scorer = torch.compile(self.model.scorer)

    def set_sampling_params(
        self, max_types, shuffle_types, random_drop, max_neg_type_ratio, max_len
    ):
        self.config.max_types = max_types
        self.config.shuffle_types = shuffle_types
        self.config.random_drop = random_drop
        self.config.max_neg_type_ratio = max_neg_type_ratio
        self.config.max_len = max_len

    def save_pretrained(
        self,
        save_directory: Union[str, Path],
        *,
        config: Optional[GLiNERConfig] = None,
        repo_id: Optional[str] = None,
        push_to_hub: bool = False,
        safe_serialization=False,
        **push_to_hub_kwargs,
    ) -> Optional[str]:
        save_directory = Path(save_directory)
        save_directory.mkdir(parents=True, exist_ok=True)

        # save model weights
        model_path = save_directory / "pytorch_model.bin"
        torch.save(self.model.state_dict(), model_path)

        # save config
        if config is None:
            config = self.config
        if config is not None:
            config.to_json_file(save_directory / "gliner_config.json")

        self.data_processor.transformer_tokenizer.save_pretrained(save_directory)
        if push_to_hub:
            kwargs = push_to_hub_kwargs.copy()
            if config is not None:
                kwargs["config"] = config
            if repo_id is None:
                repo_id = save_directory.name
            return self.push_to_hub(repo_id=repo_id, **kwargs)
        return None

    @classmethod
    def _from_pretrained(
        cls,
        *,
        model_id: str,
        revision: Optional[str] = None,
        cache_dir: Optional[Union[str, Path]] = None,
        force_download: bool = False,
        proxies: Optional[Dict] = None,
        resume_download: bool = False,
        local_files_only: bool = False,
        token: Union[str, bool, None] = None,
        map_location: str = "cpu",
        strict: bool = False,
        load_tokenizer: Optional[bool] = None,
        resize_token_embeddings: Optional[bool] = True,
        load_onnx_model: Optional[bool] = False,
        onnx_model_file: Optional[str] = "model.onnx",
        compile_torch_model: Optional[bool] = False,
        session_options=None,
        _attn_implementation: Optional[str] = None,
        max_length: Optional[int] = None,
        max_width: Optional[int] = None,
        **model_kwargs,
    ):
        # Newer format: Use "pytorch_model.bin" and "gliner_config.json"
        model_dir = Path(model_id)
        if not model_dir.exists():
            model_dir = snapshot_download(
                repo_id=model_id,
                revision=revision,
                cache_dir=cache_dir,
                force_download=force_download,
                proxies=proxies,
                resume_download=resume_download,
                token=token,
                local_files_only=local_files_only,
            )
        model_file = Path(model_dir) / "pytorch_model.bin"
        if not model_file.exists():
            model_file = Path(model_dir) / "model.safetensors"
        config_file = Path(model_dir) / "gliner_config.json"

        if load_tokenizer:
            tokenizer = AutoTokenizer.from_pretrained(model_dir, cache_dir=cache_dir)
        else:
            if os.path.exists(os.path.join(model_dir, "tokenizer_config.json")):
                tokenizer = AutoTokenizer.from_pretrained(model_dir, cache_dir=cache_dir)
            else:
                tokenizer = None
        with open(config_file, "r") as f:
            config_ = json.load(f)
        config = GLiNERConfig(**config_)

        if _attn_implementation is not None:
            config.encoder_config._attn_implementation = _attn_implementation
        if max_length is not None:
            config.max_len = max_length
        if max_width is not None:
            config.max_width = max_width

        add_tokens = ["[FLERT]", config.ent_token, config.sep_token]

        if not load_onnx_model:
            gliner = cls(config, tokenizer=tokenizer, encoder_from_pretrained=False)
            # to be able to load GLiNER models from previous version
            if (
                config.class_token_index == -1 or config.vocab_size == -1
            ) and resize_token_embeddings and not config.labels_encoder:
                gliner.resize_token_embeddings(add_tokens=add_tokens)
            if str(model_file).endswith("safetensors"):
                from safetensors.torch import load_file

                state_dict = load_file(str(model_file), device="cpu")
            else:
                state_dict = torch.load(model_file, map_location=torch.device(map_location), weights_only=True)
            gliner.model.load_state_dict(state_dict, strict=strict)
            gliner.model.to(map_location)
            if compile_torch_model and "cuda" in map_location:
                print("Compiling torch model...")
                gliner.compile()
            elif compile_torch_model:
                warnings.warn(
                    "It's not possible to compile GLiNER model on CPU, use `map_location='cuda'` to compile it."
                )
            gliner.eval()
        else:
            model_file = Path(model_dir) / onnx_model_file
            if not os.path.exists(model_file):
                raise FileNotFoundError(f"The ONNX model can't be loaded from {model_file}.")
            if session_options is None:
                session_options = ort.SessionOptions()
                session_options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            if "cuda" in map_location:
                providers = ["CUDAExecutionProvider", "CPUExecutionProvider"]
            else:
                providers = ["CPUExecutionProvider"]
            ort_session = ort.InferenceSession(model_file, session_options, providers=providers)
            if config.span_mode == "token_level":
                model = TokenORTModel(ort_session)
            else:
                model = SpanORTModel(ort_session)

            gliner = cls(config, tokenizer=tokenizer, model=model)
            if (
                config.class_token_index == -1 or config.vocab_size == -1
            ) and resize_token_embeddings:
                gliner.data_processor.transformer_tokenizer.add_tokens(add_tokens)

        return gliner

    def to(self, device):
        if self.onnx_model:
            if re.match(r"^cuda(:\d+)?$", str(device)):
                warnings.warn("ONNX sessions are pinned to the providers chosen at load time.")
            return self
        return super().to(device)
