#  Copyright (c) Facebook, Inc. and its affiliates.
#  All rights reserved.
#
#  This source code is licensed under the license found in the
#  LICENSE file in the root directory of this source tree.

from typing import Dict, List, Tuple, Union, Any

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as nn_func

from table_bert.table_bert import TableBertModel
from table_bert.table import Table
from table_bert.utils import BertForMaskedLM, BertLMPredictionHead, BertLayerNorm, gelu, hf_flag
from table_bert.vertical.config import VerticalAttentionTableBertConfig, VerticalEmbeddingConfig
from table_bert.vertical.input_formatter import VerticalAttentionTableBertInputFormatter
from table_bert.vertical.dataset import collate


class VerticalEmbeddingLayer(nn.Module):
    def forward(self, hidden_states: torch.Tensor):
        return hidden_states


class BertVerticalAttention(nn.Module):
    def __init__(self, config: VerticalAttentionTableBertConfig):
        nn.Module.__init__(self)

        self.self_attention = VerticalSelfAttention(config)
        self.self_output = BertVerticalSelfOutput(config)

    def forward(self, hidden_states, attention_mask):
        self_attention_output = self.self_attention(hidden_states, attention_mask)
        output = self.self_output(self_attention_output, hidden_states)

        return output


class BertVerticalSelfOutput(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.LayerNorm = BertLayerNorm(config.hidden_size, eps=1e-12)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, hidden_states, input_tensor):
        hidden_states = self.dense(hidden_states)
        hidden_states = self.dropout(hidden_states)
        hidden_states = self.LayerNorm(hidden_states + input_tensor)
        return hidden_states


class VerticalSelfAttention(nn.Module):
    def __init__(self, config: VerticalAttentionTableBertConfig):
        super(VerticalSelfAttention, self).__init__()

        if config.hidden_size % config.num_vertical_attention_heads != 0:
            raise ValueError(
                f"The hidden size ({config.hidden_size}) is not a multiple of the number of attention "
                f"heads ({config.num_vertical_attention_heads})")

        self.num_attention_heads = config.num_vertical_attention_heads
        self.attention_head_size = int(config.hidden_size / config.num_vertical_attention_heads)
        self.all_head_size = self.num_attention_heads * self.attention_head_size

        self.query_linear = nn.Linear(config.hidden_size, self.all_head_size)
        self.key_linear = nn.Linear(config.hidden_size, self.all_head_size)
        self.value_linear = nn.Linear(config.hidden_size, self.all_head_size)

        self.dropout = nn.Dropout(config.attention_probs_dropout_prob)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        x = x.view(*new_x_shape)

        # (batch_size, max_row_num, max_sequence_len, num_attention_heads, attention_head_size)
        # -> (batch_size, max_sequence_len, num_attention_heads, max_row_num, attention_head_size)
        return x.permute(0, 2, 3, 1, 4)

    def forward(self, hidden_states, attention_mask):
        mixed_query_layer = self.query_linear(hidden_states)
        mixed_key_layer = self.key_linear(hidden_states)
        mixed_value_layer = self.value_linear(hidden_states)

        # ([batch_size, max_sequence_len], num_attention_heads, max_row_num, attention_head_size)
        query_layer = self.transpose_for_scores(mixed_query_layer)
        key_layer = self.transpose_for_scores(mixed_key_layer)
        value_layer = self.transpose_for_scores(mixed_value_layer)

        # ([batch_size, max_sequence_len], num_attention_heads, max_row_num, max_row_num)
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
        attention_scores = attention_scores / np.sqrt(self.attention_head_size)
        attention_scores = attention_scores + attention_mask

        attention_probs = nn.Softmax(dim=-1)(attention_scores)

        # This is actually dropping out entire tokens to attend to, which might
        # seem a bit unusual, but is taken from the original Transformer paper.
        attention_probs = self.dropout(attention_probs)

        # ([batch_size, max_sequence_len], num_attention_heads, max_row_num, attention_head_size)
        context_layer = torch.matmul(attention_probs, value_layer)

        # -> (batch_size, max_row_num, max_sequence_len, num_attention_heads, attention_head_size)
        context_layer = context_layer.permute(0, 3, 1, 2, 4).contiguous()

        # (batch_size, max_row_num, max_sequence_len, all_head_size)
        new_context_layer_shape = context_layer.size()[:-2] + (self.all_head_size,)
        context_layer = context_layer.view(*new_context_layer_shape)

        return context_layer


class BertVerticalLayer(nn.Module):
    def __init__(self, config: VerticalAttentionTableBertConfig):
        nn.Module.__init__(self)

        self.attention = BertVerticalAttention(config)
        self.intermediate = BertIntermediate(config)
        self.output = BertOutput(config)

    def forward(self, hidden_states, attention_mask):
        attention_output = self.attention(hidden_states, attention_mask)
        intermediate_output = self.intermediate(attention_output)
        layer_output = self.output(intermediate_output, attention_output)

        return layer_output


class BertIntermediate(nn.Module):
    def __init__(self, config):
        super(BertIntermediate, self).__init__()
        self.dense = nn.Linear(config.hidden_size, config.intermediate_size)
        self.intermediate_act_fn = gelu

    def forward(self, hidden_states):
        hidden_states = self.dense(hidden_states)
        hidden_states = self.intermediate_act_fn(hidden_states)
        return hidden_states


class BertOutput(nn.Module):
    def __init__(self, config):
        super(BertOutput, self).__init__()
        self.dense = nn.Linear(config.intermediate_size, config.hidden_size)
        self.LayerNorm = BertLayerNorm(config.hidden_size, eps=1e-12)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, hidden_states, input_tensor):
        hidden_states = self.dense(hidden_states)
        hidden_states = self.dropout(hidden_states)
        hidden_states = self.LayerNorm(hidden_states + input_tensor)
        return hidden_states


class SpanBasedPrediction(nn.Module):
    def __init__(self, config: VerticalAttentionTableBertConfig, prediction_layer: BertLMPredictionHead):
        super(SpanBasedPrediction, self).__init__()

        self.dense1 = nn.Linear(config.hidden_size * 2 + config.hidden_size, config.hidden_size)
        self.layer_norm1 = BertLayerNorm(config.hidden_size, eps=1e-12)
        self.dense2 = nn.Linear(config.hidden_size, config.hidden_size)
        self.layer_norm2 = BertLayerNorm(config.hidden_size, eps=1e-12)
        self.prediction = prediction_layer

    def forward(self, span_representation, position_embedding) -> torch.Tensor:
        h = self.layer_norm1(
            gelu(self.dense1(torch.cat([span_representation, position_embedding], dim=-1))))
        token_representation = self.layer_norm2(gelu(self.dense2(h)))

        return self.prediction(token_representation)


class VerticalAttentionTableBert(TableBertModel):
    CONFIG_CLASS = VerticalAttentionTableBertConfig

    def __init__(self, config: VerticalAttentionTableBertConfig, **kwargs):
        super(VerticalAttentionTableBert, self).__init__(config, **kwargs)

        self._bert_model = BertForMaskedLM.from_pretrained(config.base_model_name)

        self.input_formatter = VerticalAttentionTableBertInputFormatter(self.config, self.tokenizer)

        if config.predict_cell_tokens:
            self.span_based_prediction = SpanBasedPrediction(config, self._bert_model.cls.predictions)

        self.vertical_embedding_layer = VerticalEmbeddingLayer()
        self.vertical_transformer_layers = nn.ModuleList([
            BertVerticalLayer(self.config)
            for _ in range(self.config.num_vertical_layers)
        ])

        if config.initialize_from:
            print(f'Loading initial parameters from {config.initialize_from}')
            initial_state_dict = torch.load(config.initialize_from, map_location='cpu')
            if not any(key.startswith('_bert_model') for key in initial_state_dict):
                print('warning: loading model from an old version')
                bert_model = BertForMaskedLM.from_pretrained(
                    config.base_model_name,
                    state_dict=initial_state_dict
                )
                self._bert_model = bert_model
            else:
                load_result = self.load_state_dict(initial_state_dict, strict=False)
                print(f'Loaded state dict with result {load_result}')

    def forward(
        self,
        input_ids: torch.Tensor, segment_ids: torch.Tensor,
        context_token_positions: torch.Tensor, column_token_position_to_column_ids: torch.Tensor,
        sequence_mask: torch.Tensor, context_token_mask: torch.Tensor, table_mask: torch.Tensor,
        # masked_lm_labels: torch.Tensor = None
        **kwargs
    ):
        # first, flatten the rows
        batch_size = input_ids.size(0)
        max_row_num = input_ids.size(1)
        sequence_len = input_ids.size(-1)

        flattened_input_ids = input_ids.view(batch_size * max_row_num, -1)
        flattened_segment_ids = segment_ids.view(batch_size * max_row_num, -1)
        flattened_sequence_mask = sequence_mask.view(batch_size * max_row_num, -1)

        # (batch_size * max_row_num, sequence_len, hidden_size)
        bert_output, _ = self.bert(
            input_ids=flattened_input_ids,
            token_type_ids=flattened_segment_ids,
            attention_mask=flattened_sequence_mask,
            output_all_encoded_layers=False
        )

        # (batch_size, max_row_num, sequence_len, hidden_size)
        bert_output = bert_output.view(batch_size, max_row_num, sequence_len, -1)

        # expand to the same size as `bert_output`
        column_token_to_column_id_expanded = column_token_position_to_column_ids.unsqueeze(-1).expand(
            -1, -1, -1, bert_output.size(-1)  # (batch_size, max_row_num, sequence_len, hidden_size)
        )

        # (batch_size, max_row_num, max_column_num, hidden_size)
        max_column_num = table_mask.size(-1)
        table_encoding = torch.zeros(
            batch_size, max_row_num, max_column_num + 1, bert_output.size(-1),
            device=bert_output.device, dtype=bert_output.dtype
        ).scatter_add_(
            -2,  # across the sequence length dimension
            column_token_to_column_id_expanded,
            bert_output
        )[:, :, :-1, :]

        # average pooling over the cell tokens of each column
        column_token_num = torch.zeros(
            batch_size, max_row_num, max_column_num + 1,
            device=bert_output.device, dtype=bert_output.dtype
        ).scatter_add_(
            -1,
            column_token_position_to_column_ids,
            torch.ones_like(column_token_position_to_column_ids, dtype=bert_output.dtype)
        )[:, :, :-1]
        table_encoding = table_encoding / (column_token_num.unsqueeze(-1) + 1e-7)

        # (batch_size, max_row_num, max_context_len, hidden_size)
        context_encoding = torch.gather(
            bert_output,
            dim=-2,
            index=context_token_positions.unsqueeze(-1).expand(-1, -1, -1, bert_output.size(-1)),
        )

        # (batch_size, max_row_num, max_context_len + max_column_num, hidden_size)
        schema_encoding = torch.cat([context_encoding, table_encoding], dim=-2)
        # (batch_size, max_row_num, max_context_len + max_column_num)
        attention_mask = torch.cat([context_token_mask, table_mask], dim=-1).float()
        # (batch_size, max_context_len + max_column_num, 1, 1, max_row_num)
        attention_mask = attention_mask.permute(0, 2, 1)[:, :, None, None, :]
        attention_mask = (1.0 - attention_mask) * -10000.0

        hidden_states = self.vertical_embedding_layer(schema_encoding)
        for vertical_layer in self.vertical_transformer_layers:
            hidden_states = vertical_layer(hidden_states, attention_mask=attention_mask)

        # mean-pool last encoding
        # (batch_size, max_row_num, max_context_len + max_column_num, hidden_size)
        last_hidden_states = hidden_states * attention_mask.permute(0, 4, 1, 2, 3).squeeze(-1).eq(0).float()
        # (batch_size, max_context_len + max_column_num, hidden_size)
        mean_pooled_schema_encoding = last_hidden_states.sum(dim=1) / (
            table_mask.sum(dim=1).unsqueeze(-1).unsqueeze(-1).clamp(min=1)[:, :1, :]
        )

        return mean_pooled_schema_encoding
