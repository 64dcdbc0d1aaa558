"""TorchServe custom handler for a Hugging Face sequence-classification / token-classification model.

Packaged with:
    torch-model-archiver --model-name bert_cls --version 1.0 --serialized-file model/model.safetensors \
        --handler serve/handlers/transformers_classifier_handler.py --extra-files "model/config.json,setup_config.json"
"""
import json
import logging
import os
from abc import ABC

import torch
import transformers
from transformers import AutoConfig, AutoModelForSequenceClassification, AutoModelForTokenClassification, AutoTokenizer
from ts.torch_handler.base_handler import BaseHandler

logger = logging.getLogger(__name__)
logger.info("Transformers version %s", transformers.__version__)


class TransformersClassifierHandler(BaseHandler, ABC):
    """Handles tokenisation, batched inference and post-processing for classification models."""

    def __init__(self):
        super().__init__()
        self.initialized = False
        self.setup_config = {}
        self.use_fp16 = False

    def initialize(self, ctx):
        self.manifest = ctx.manifest
        properties = ctx.system_properties
        model_dir = properties.get("model_dir")
        serialized_file = self.manifest["model"]["serializedFile"]
        model_pt_path = os.path.join(model_dir, serialized_file)

        self.map_location = "cuda" if torch.cuda.is_available() and properties.get("gpu_id") is not None else "cpu"
        self.device = torch.device(
            self.map_location + ":" + str(properties.get("gpu_id"))
            if torch.cuda.is_available() and properties.get("gpu_id") is not None
            else self.map_location
        )
        logger.info("Loading model on %s", self.device)

        setup_config_path = os.path.join(model_dir, "setup_config.json")
        if os.path.isfile(setup_config_path):
            with open(setup_config_path) as setup_config_file:
                self.setup_config = json.load(setup_config_file)
        else:
            logger.warning("Missing the setup_config.json file.")

        self.use_fp16 = bool(self.setup_config.get("fp16", True)) and self.device.type == "cuda"
        torch.backends.cudnn.benchmark = True

        config = AutoConfig.from_pretrained(model_dir)
        if self.setup_config.get("mode", "sequence_classification") == "sequence_classification":
            self.model = AutoModelForSequenceClassification.from_pretrained(model_dir, config=config)
        elif self.setup_config["mode"] == "token_classification":
            self.model = AutoModelForTokenClassification.from_pretrained(model_dir, config=config)
        else:
            raise ValueError(f"unsupported mode {self.setup_config['mode']}")
        self.model.to(self.device)
        self.model.eval()

        if self.setup_config.get("torch_compile", False):
            self.model = torch.compile(self.model, backend="inductor", dynamic=True)

        self.tokenizer = AutoTokenizer.from_pretrained(model_dir, do_lower_case=self.setup_config.get("do_lower_case"))
        mapping_file_path = os.path.join(model_dir, "index_to_name.json")
        if os.path.isfile(mapping_file_path):
            with open(mapping_file_path) as f:
                self.mapping = json.load(f)
        else:
            self.mapping = config.id2label
        self.max_length = int(self.setup_config.get("max_length", 128))
        self.initialized = True
        logger.info("Transformer model from path %s loaded successfully", model_dir)

    def preprocess(self, requests):
        texts = []
        for idx, data in enumerate(requests):
            input_text = data.get("data") or data.get("body")
            if isinstance(input_text, (bytes, bytearray)):
                input_text = input_text.decode("utf-8")
            if isinstance(input_text, dict):
                input_text = input_text.get("text", "")
            logger.debug("Received text %d: '%s'", idx, input_text)
            texts.append(input_text)
        inputs = self.tokenizer(
            texts,
            max_length=self.max_length,
            padding="longest",
            truncation=True,
            return_tensors="pt",
        )
        return {k: v.to(self.device) for k, v in inputs.items()}

    def inference(self, inputs, *args, **kwargs):
        with torch.inference_mode(), torch.cuda.amp.autocast(enabled=self.use_fp16):
            outputs = self.model(**inputs)
        logits = outputs.logits.float()
        if self.setup_config.get("mode", "sequence_classification") == "sequence_classification":
            probs = torch.softmax(logits, dim=-1)
            scores, predictions = probs.max(dim=-1)
            results = []
            for score, pred in zip(scores.tolist(), predictions.tolist()):
                label = self.mapping.get(str(pred), self.mapping.get(pred, str(pred)))
                results.append({"label": label, "score": round(score, 4)})
            return results
        predictions = logits.argmax(dim=-1).tolist()
        results = []
        for row_ids, row_pred in zip(inputs["input_ids"].tolist(), predictions):
            tokens = self.tokenizer.convert_ids_to_tokens(row_ids)
            results.append([(tok, self.mapping.get(str(p), str(p))) for tok, p in zip(tokens, row_pred)
                            if tok not in self.tokenizer.all_special_tokens])
        return results

    def postprocess(self, inference_output):
        return inference_output

    def describe_handle(self):
        info = super().describe_handle() if hasattr(super(), "describe_handle") else {}
        info.update({
            "device": str(self.device),
            "fp16": self.use_fp16,
            "memory_allocated_mb": torch.cuda.memory_allocated(self.device) // 2**20
            if self.device.type == "cuda" else 0,
        })
        return info
