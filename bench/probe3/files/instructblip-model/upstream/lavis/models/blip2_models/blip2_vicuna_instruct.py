"""
Requires Transformer 4.28 and above, implementation may change according the Llama implementation
"""
import contextlib
import logging
import string

import torch
import torch.nn as nn
from packaging import version
from transformers import LlamaForCausalLM, LlamaTokenizer

from lavis.common.registry import registry
from lavis.models.blip2_models.blip2 import Blip2Base, disabled_train


@registry.register_model("blip2_vicuna_instruct")
class Blip2VicunaInstruct(Blip2Base):
    """
    BLIP2 Vicuna model.
    Supported model types:
        - vicuna7b
        - vicuna13b
    Usage:
        >>> from lavis.models import load_model
        >>> model = load_model("blip2_vicuna_instruct", "vicuna7b")
    """

    PRETRAINED_MODEL_CONFIG_DICT = {
        "vicuna7b": "configs/models/blip2/blip2_instruct_vicuna7b.yaml",
        "vicuna13b": "configs/models/blip2/blip2_instruct_vicuna13b.yaml",
    }

    def __init__(self, vit_model="eva_clip_g", img_size=224, drop_path_rate=0, use_grad_checkpoint=False,
                 vit_precision="fp16", freeze_vit=True, num_query_token=32, llm_model="", prompt="",
                 max_txt_len=128, max_output_txt_len=256, apply_lemmatizer=False, qformer_text_input=True):
        super().__init__()
        transformers_version = version.parse(transformers_version_str())
        assert transformers_version >= version.parse("4.28"), "BLIP-2 Vicuna requires transformers>=4.28"

        self.tokenizer = self.init_tokenizer(truncation_side="left")
        self.visual_encoder, self.ln_vision = self.init_vision_encoder(
            vit_model, img_size, drop_path_rate, use_grad_checkpoint, vit_precision)
        if freeze_vit:
            for name, param in self.visual_encoder.named_parameters():
                param.requires_grad = False
            self.visual_encoder = self.visual_encoder.eval()
            self.visual_encoder.train = disabled_train
            logging.info("freeze vision encoder")

        self.Qformer, self.query_tokens = self.init_Qformer(num_query_token, self.visual_encoder.num_features)
        if not qformer_text_input:
            self.Qformer.bert.embeddings.word_embeddings = None
            self.Qformer.bert.embeddings.position_embeddings = None
            for layer in self.Qformer.bert.encoder.layer:
                layer.output = None
                layer.intermediate = None
        else:
            self.Qformer.resize_token_embeddings(len(self.tokenizer))
        self.Qformer.cls = None

        self.llm_tokenizer = LlamaTokenizer.from_pretrained(llm_model, use_fast=False, truncation_side="left")
        self.llm_model = LlamaForCausalLM.from_pretrained(llm_model, torch_dtype=torch.float16)
        self.llm_tokenizer.add_special_tokens({"pad_token": "[PAD]"})
        self.llm_tokenizer.add_special_tokens({"bos_token": "</s>"})
        self.llm_tokenizer.add_special_tokens({"eos_token": "</s>"})
        self.llm_tokenizer.add_special_tokens({"unk_token": "</s>"})
        self.llm_model.resize_token_embeddings(len(self.llm_tokenizer))
        for name, param in self.llm_model.named_parameters():
            param.requires_grad = False

        self.llm_proj = nn.Linear(self.Qformer.config.hidden_size, self.llm_model.config.hidden_size)
        self.max_txt_len = max_txt_len
        self.max_output_txt_len = max_output_txt_len
        self.prompt = prompt
        prompt_tokens = self.llm_tokenizer(self.prompt, return_tensors="pt")
        self.prompt_length = prompt_tokens.attention_mask.sum(1)
        self._lemmatizer = None
        self.qformer_text_input = qformer_text_input

    @property
    def device(self):
        return list(self.parameters())[0].device

    def maybe_autocast(self, dtype=torch.float16):
        # if on cpu, don't use autocast
        # if on gpu, use autocast with dtype if provided, otherwise use torch.float16
        enable_autocast = self.device != torch.device("cpu")
        if enable_autocast:
            return torch.cuda.amp.autocast(dtype=dtype)
        else:
            return contextlib.nullcontext()

    def _encode_image(self, image, prompt):
        bs = image.size(0)
        query_tokens = self.query_tokens.expand(bs, -1, -1)
        if self.qformer_text_input:
            text_Qformer = self.tokenizer(prompt, padding="longest", truncation=True, max_length=self.max_txt_len,
                                          return_tensors="pt").to(image.device)
            query_atts = torch.ones(query_tokens.size()[:-1], dtype=torch.long).to(image.device)
            Qformer_atts = torch.cat([query_atts, text_Qformer.attention_mask], dim=1)
        with self.maybe_autocast():
            image_embeds = self.ln_vision(self.visual_encoder(image))
        image_atts = torch.ones(image_embeds.size()[:-1], dtype=torch.long).to(image.device)
        if self.qformer_text_input:
            query_output = self.Qformer.bert(text_Qformer.input_ids, attention_mask=Qformer_atts,
                                             query_embeds=query_tokens, encoder_hidden_states=image_embeds,
                                             encoder_attention_mask=image_atts, return_dict=True)
        else:
            query_output = self.Qformer.bert(query_embeds=query_tokens, encoder_hidden_states=image_embeds,
                                             encoder_attention_mask=image_atts, return_dict=True)
        inputs_llm = self.llm_proj(query_output.last_hidden_state[:, :query_tokens.size(1), :])
        atts_llm = torch.ones(inputs_llm.size()[:-1], dtype=torch.long).to(image.device)
        return inputs_llm, atts_llm

    def forward(self, samples):
        image = samples["image"]
        inputs_llm, atts_llm = self._encode_image(image, samples["text_input"])
        self.llm_tokenizer.padding_side = "right"
        self.llm_tokenizer.truncation_side = "left"
        text_input_tokens = self.llm_tokenizer(samples["text_input"], return_tensors="pt", padding="longest",
                                               truncation=True, max_length=self.max_txt_len).to(image.device)
        self.llm_tokenizer.truncation_side = "right"
        text_output_tokens = self.llm_tokenizer([t + self.llm_tokenizer.eos_token for t in samples["text_output"]],
                                                return_tensors="pt", padding="longest", truncation=True,
                                                max_length=self.max_output_txt_len).to(image.device)
        input_ids = torch.cat([text_input_tokens.input_ids, text_output_tokens.input_ids], dim=1)
        attention_mask = torch.cat([text_input_tokens.attention_mask, text_output_tokens.attention_mask], dim=1)
        targets = input_ids.masked_fill(input_ids == self.llm_tokenizer.pad_token_id, -100)
        targets[:, :text_input_tokens.input_ids.size(1)] = -100
        empty_targets = torch.ones(atts_llm.size(), dtype=torch.long).to(image.device).fill_(-100)
        targets = torch.cat([empty_targets, targets], dim=1)

        inputs_embeds = self.llm_model.get_input_embeddings()(input_ids)
        inputs_embeds = torch.cat([inputs_llm, inputs_embeds], dim=1)
        attention_mask = torch.cat([atts_llm, attention_mask], dim=1)
        with self.maybe_autocast():
            outputs = self.llm_model(inputs_embeds=inputs_embeds, attention_mask=attention_mask, return_dict=True,
                                     labels=targets)
        return {"loss": outputs.loss}

    @torch.no_grad()
    def generate(self, samples, use_nucleus_sampling=False, num_beams=5, max_length=256, min_length=1, top_p=0.9,
                 repetition_penalty=1.5, length_penalty=1, num_captions=1, temperature=1):
        self.llm_tokenizer.padding_side = "left"
        prompt = samples.get("prompt", self.prompt)
        image = samples["image"]
        bs = image.size(0)
        prompt = [prompt] * bs if isinstance(prompt, str) else prompt
        inputs_llm, atts_llm = self._encode_image(image, prompt)
        llm_tokens = self.llm_tokenizer(prompt, padding="longest", return_tensors="pt").to(image.device)
        with self.maybe_autocast():
            inputs_embeds = self.llm_model.get_input_embeddings()(llm_tokens.input_ids)
            inputs_embeds = torch.cat([inputs_llm, inputs_embeds], dim=1)
            attention_mask = torch.cat([atts_llm, llm_tokens.attention_mask], dim=1)
            outputs = self.llm_model.generate(
                inputs_embeds=inputs_embeds, attention_mask=attention_mask, do_sample=use_nucleus_sampling,
                top_p=top_p, temperature=temperature, num_beams=num_beams, max_length=max_length,
                min_length=min_length, repetition_penalty=repetition_penalty, length_penalty=length_penalty,
                num_return_sequences=num_captions)
        outputs[outputs == 0] = 2  # convert output id 0 to 2 (eos_token_id)
        output_text = self.llm_tokenizer.batch_decode(outputs, skip_special_tokens=True)
        return [text.strip() for text in output_text]


def transformers_version_str():
    import transformers
    return transformers.__version__
