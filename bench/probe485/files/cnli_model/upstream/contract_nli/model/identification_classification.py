# Copyright (c) 2021, Hitachi America Ltd. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

from dataclasses import dataclass
from typing import Optional, Tuple

import torch
import torch.nn as nn
from torch.nn import CrossEntropyLoss
from transformers import BertModel, BertPreTrainedModel, DebertaV2Model, DebertaV2PreTrainedModel
from transformers.file_utils import ModelOutput


@dataclass
class IdentificationClassificationModelOutput(ModelOutput):
    """Output of the joint evidence-span identification and NLI classification model.

    Attributes:
        loss: total loss = loss_span + class_loss_weight * loss_cls (only when labels are given)
        class_logits: (batch, 3) logits over {Entailment, Contradiction, NotMentioned}
        span_logits: (batch, seq_len, 2) logits for whether each [SPAN] marker token starts an evidence span
    """
    loss: Optional[torch.FloatTensor] = None
    loss_cls: Optional[torch.FloatTensor] = None
    loss_span: Optional[torch.FloatTensor] = None
    class_logits: torch.FloatTensor = None
    span_logits: torch.FloatTensor = None
    hidden_states: Optional[Tuple[torch.FloatTensor]] = None
    attentions: Optional[Tuple[torch.FloatTensor]] = None


class IdentificationClassificationHeads(nn.Module):

    def __init__(self, hidden_size: int, hidden_dropout_prob: float, num_classes: int):
        super().__init__()
        self.dropout = nn.Dropout(hidden_dropout_prob)
        self.class_outputs = nn.Linear(hidden_size, num_classes)
        self.span_outputs = nn.Linear(hidden_size, 2)

    def forward(self, sequence_output: torch.Tensor, pooled_output: torch.Tensor):
        class_logits = self.class_outputs(self.dropout(pooled_output))
        span_logits = self.span_outputs(self.dropout(sequence_output))
        return class_logits, span_logits


def _compute_loss(class_logits, span_logits, class_labels, span_labels, p_mask, class_loss_weight, num_classes):
    loss_fct = CrossEntropyLoss()
    loss_cls = loss_fct(class_logits.view(-1, num_classes), class_labels.view(-1))

    # Only [SPAN] marker tokens participate in the span loss; everything else is ignored (-100)
    active = (p_mask.view(-1) == 0)
    span_labels = span_labels.view(-1)
    ignore = torch.full_like(span_labels, -100)
    span_targets = torch.where(active, span_labels, ignore)
    # NotMentioned examples have no evidence spans at all: do not penalise them
    not_mentioned = (class_labels == 2).unsqueeze(1).expand(-1, p_mask.size(1)).reshape(-1)
    span_targets = torch.where(not_mentioned, ignore, span_targets)
    loss_span = loss_fct(span_logits.view(-1, 2), span_targets)
    if torch.isnan(loss_span):
        # every example in the batch was NotMentioned
        loss_span = torch.zeros((), dtype=loss_cls.dtype, device=loss_cls.device)
    loss = loss_span + class_loss_weight * loss_cls
    return loss, loss_cls, loss_span


class BertForIdentificationClassification(BertPreTrainedModel):

    _keys_to_ignore_on_load_unexpected = [r"cls"]

    def __init__(self, config, class_loss_weight: float = 1.0, num_classes: int = 3):
        super().__init__(config)
        self.num_classes = num_classes
        self.class_loss_weight = class_loss_weight
        self.bert = BertModel(config, add_pooling_layer=True)
        self.heads = IdentificationClassificationHeads(config.hidden_size, config.hidden_dropout_prob, num_classes)
        self.init_weights()

    def forward(
        self,
        input_ids=None,
        attention_mask=None,
        token_type_ids=None,
        position_ids=None,
        head_mask=None,
        inputs_embeds=None,
        class_labels=None,
        span_labels=None,
        p_mask=None,
        is_impossible=None,
        output_attentions=None,
        output_hidden_states=None,
        return_dict=None,
    ):
        outputs = self.bert(
            input_ids,
            attention_mask=attention_mask,
            token_type_ids=token_type_ids,
            position_ids=position_ids,
            head_mask=head_mask,
            inputs_embeds=inputs_embeds,
            output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
            return_dict=True,
        )
        class_logits, span_logits = self.heads(outputs.last_hidden_state, outputs.pooler_output)

        loss, loss_cls, loss_span = None, None, None
        if class_labels is not None and span_labels is not None:
            loss, loss_cls, loss_span = _compute_loss(
                class_logits, span_logits, class_labels, span_labels, p_mask,
                self.class_loss_weight, self.num_classes)

        return IdentificationClassificationModelOutput(
            loss=loss,
            loss_cls=loss_cls,
            loss_span=loss_span,
            class_logits=class_logits,
            span_logits=span_logits,
            hidden_states=outputs.hidden_states,
            attentions=outputs.attentions,
        )


class ContextPooler(nn.Module):
    """DeBERTa has no pooler; take the [CLS] vector through a dense + activation like BERT does."""

    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.pooler_hidden_size, config.pooler_hidden_size)
        self.dropout = nn.Dropout(config.pooler_dropout)
        self.activation = nn.GELU()

    def forward(self, hidden_states):
        context_token = hidden_states[:, 0]
        context_token = self.dropout(context_token)
        pooled_output = self.dense(context_token)
        return self.activation(pooled_output)


class DeBertaForIdentificationClassification(DebertaV2PreTrainedModel):

    _keys_to_ignore_on_load_unexpected = [r"lm_predictions"]

    def __init__(self, config, class_loss_weight: float = 1.0, num_classes: int = 3):
        super().__init__(config)
        self.num_classes = num_classes
        self.class_loss_weight = class_loss_weight
        self.deberta = DebertaV2Model(config)
        self.pooler = ContextPooler(config)
        self.heads = IdentificationClassificationHeads(config.hidden_size, config.hidden_dropout_prob, num_classes)
        self.init_weights()

    def forward(
        self,
        input_ids=None,
        attention_mask=None,
        token_type_ids=None,
        position_ids=None,
        inputs_embeds=None,
        class_labels=None,
        span_labels=None,
        p_mask=None,
        is_impossible=None,
        output_attentions=None,
        output_hidden_states=None,
        return_dict=None,
    ):
        outputs = self.deberta(
            input_ids,
            attention_mask=attention_mask,
            token_type_ids=token_type_ids,
            position_ids=position_ids,
            inputs_embeds=inputs_embeds,
            output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
            return_dict=True,
        )
        sequence_output = outputs.last_hidden_state
        pooled_output = self.pooler(sequence_output)
        class_logits, span_logits = self.heads(sequence_output, pooled_output)

        loss, loss_cls, loss_span = None, None, None
        if class_labels is not None and span_labels is not None:
            loss, loss_cls, loss_span = _compute_loss(
                class_logits, span_logits, class_labels, span_labels, p_mask,
                self.class_loss_weight, self.num_classes)

        return IdentificationClassificationModelOutput(
            loss=loss,
            loss_cls=loss_cls,
            loss_span=loss_span,
            class_logits=class_logits,
            span_logits=span_logits,
            hidden_states=outputs.hidden_states,
            attentions=outputs.attentions,
        )


MODEL_TYPE_TO_CLASS = {
    'bert': BertForIdentificationClassification,
    'deberta-v2': DeBertaForIdentificationClassification,
}
