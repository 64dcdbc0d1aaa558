# coding=utf-8
"""Utterance-level emotion classifier on top of a (frozen or fine-tuned)
wav2vec2 / HuBERT / WavLM encoder.

The head follows the SUPERB ER recipe: optional learnable weighted sum over
all hidden layers, a projector, then mean / max / attentive statistics pooling
and a two-layer classifier.
"""
from dataclasses import dataclass
from typing import Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import AutoModel, PreTrainedModel, Wav2Vec2Config
from transformers.file_utils import ModelOutput


@dataclass
class SpeechClassifierOutput(ModelOutput):
    loss: Optional[torch.FloatTensor] = None
    logits: torch.FloatTensor = None
    hidden_states: Optional[Tuple[torch.FloatTensor]] = None
    attentions: Optional[Tuple[torch.FloatTensor]] = None


class AttentiveStatsPooling(nn.Module):
    def __init__(self, dim, bottleneck=128):
        super().__init__()
        self.attention = nn.Sequential(
            nn.Conv1d(dim, bottleneck, kernel_size=1),
            nn.Tanh(),
            nn.Conv1d(bottleneck, dim, kernel_size=1),
        )

    def forward(self, x, mask):
        # x: (B, T, D), mask: (B, T) with 1 for valid frames
        w = self.attention(x.transpose(1, 2)).transpose(1, 2)
        w = w.masked_fill(~mask.bool().unsqueeze(-1), float("-inf"))
        w = torch.softmax(w, dim=1)
        mu = torch.sum(x * w, dim=1)
        sg = torch.sqrt((torch.sum((x**2) * w, dim=1) - mu**2).clamp(min=1e-5))
        return torch.cat([mu, sg], dim=-1)


class ClassificationHead(nn.Module):
    def __init__(self, in_dim, hidden, num_labels, dropout):
        super().__init__()
        self.dense = nn.Linear(in_dim, hidden)
        self.dropout = nn.Dropout(dropout)
        self.out_proj = nn.Linear(hidden, num_labels)

    def forward(self, features):
        x = self.dropout(features)
        x = torch.tanh(self.dense(x))
        x = self.dropout(x)
        return self.out_proj(x)


class Wav2Vec2ForSpeechClassification(PreTrainedModel):
    config_class = Wav2Vec2Config
    base_model_prefix = "wav2vec2"
    main_input_name = "input_values"
    supports_gradient_checkpointing = True
    _supports_flash_attn_2 = True
    _supports_sdpa = True

    def __init__(self, config):
        super().__init__(config)
        self.num_labels = config.num_labels
        self.pooling_mode = getattr(config, "pooling_mode", "mean")
        self.use_weighted_layer_sum = getattr(config, "use_weighted_layer_sum", False)

        self.wav2vec2 = AutoModel.from_config(config, attn_implementation=config._attn_implementation)
        num_layers = config.num_hidden_layers + 1  # + CNN/projection output
        if self.use_weighted_layer_sum:
            self.layer_weights = nn.Parameter(torch.ones(num_layers) / num_layers)

        proj = getattr(config, "classifier_proj_size", 256)
        self.projector = nn.Linear(config.hidden_size, proj)
        if self.pooling_mode == "attentive":
            self.pooler = AttentiveStatsPooling(proj)
            head_in = 2 * proj
        else:
            self.pooler = None
            head_in = proj
        self.classifier = ClassificationHead(head_in, proj, config.num_labels, getattr(config, "final_dropout", 0.1))
        self.post_init()

    def freeze_feature_encoder(self):
        self.wav2vec2.feature_extractor._freeze_parameters()

    def freeze_base_model(self):
        for p in self.wav2vec2.parameters():
            p.requires_grad = False

    def _frame_mask(self, hidden_states, attention_mask):
        if attention_mask is None:
            return torch.ones(hidden_states.shape[:2], dtype=torch.bool, device=hidden_states.device)
        output_lengths = self.wav2vec2._get_feat_extract_output_lengths(attention_mask.sum(-1)).to(torch.long)
        idx = torch.arange(hidden_states.size(1), device=hidden_states.device)
        return idx[None, :] < output_lengths[:, None]

    def merged_strategy(self, hidden_states, mask):
        # statistics are computed in fp32: fp16 sums over ~750 frames of
        # HuBERT-large activations overflow in the attentive std branch
        with torch.cuda.amp.autocast(enabled=False):
            hidden_states = hidden_states.float()
            if self.pooling_mode == "mean":
                m = mask.unsqueeze(-1).to(hidden_states.dtype)
                return (hidden_states * m).sum(1) / m.sum(1).clamp(min=1.0)
            if self.pooling_mode == "max":
                return hidden_states.masked_fill(~mask.unsqueeze(-1), -1e4).max(dim=1).values
            if self.pooling_mode == "attentive":
                return self.pooler(hidden_states, mask)
        raise ValueError(f"unknown pooling mode {self.pooling_mode}")

    def forward(
        self,
        input_values,
        attention_mask=None,
        output_attentions=None,
        output_hidden_states=None,
        return_dict=None,
        labels=None,
    ):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        output_hidden_states = True if self.use_weighted_layer_sum else output_hidden_states

        outputs = self.wav2vec2(
            input_values,
            attention_mask=attention_mask,
            output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
            return_dict=return_dict,
        )
        if self.use_weighted_layer_sum:
            hidden_states = torch.stack(outputs.hidden_states, dim=1)
            norm_weights = F.softmax(self.layer_weights, dim=-1)
            hidden_states = (hidden_states * norm_weights.view(-1, 1, 1)).sum(dim=1)
        else:
            hidden_states = outputs[0]

        hidden_states = self.projector(hidden_states)
        mask = self._frame_mask(hidden_states, attention_mask)
        pooled = self.merged_strategy(hidden_states, mask)
        logits = self.classifier(pooled.to(self.classifier.dense.weight.dtype))

        loss = None
        if labels is not None:
            loss = F.cross_entropy(logits.view(-1, self.num_labels), labels.view(-1))

        if not return_dict:
            output = (logits,) + outputs[2:]
            return ((loss,) + output) if loss is not None else output

        return SpeechClassifierOutput(
            loss=loss,
            logits=logits,
            hidden_states=outputs.hidden_states,
            attentions=outputs.attentions,
        )
