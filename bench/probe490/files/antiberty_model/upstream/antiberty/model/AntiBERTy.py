from dataclasses import dataclass
from typing import Optional, Tuple

import torch
import torch.nn as nn
from torch.nn import CrossEntropyLoss
import transformers
from transformers.models.bert.modeling_bert import BertPreTrainedModel, BertModel, BertOnlyMLMHead
from transformers.utils import ModelOutput


@dataclass
class AntiBERTyOutput(ModelOutput):
    """
    Output type of :class:`~AntiBERTy`.

    Args:
        loss (`torch.FloatTensor` of shape :obj:`(1,)`, `optional`):
            Total loss as the sum of the masked language modeling loss and the species/chain classification losses.
        prediction_logits (:obj:`torch.FloatTensor` of shape :obj:`(batch_size, sequence_length, config.vocab_size)`):
            Prediction scores of the language modeling head.
        species_logits (:obj:`torch.FloatTensor` of shape :obj:`(batch_size, n_species)`):
            Prediction scores of the species head.
        chain_logits (:obj:`torch.FloatTensor` of shape :obj:`(batch_size, 2)`):
            Prediction scores of the chain-type head.
    """

    loss: Optional[torch.FloatTensor] = None
    prediction_logits: torch.FloatTensor = None
    species_logits: torch.FloatTensor = None
    chain_logits: torch.FloatTensor = None
    hidden_states: Optional[Tuple[torch.FloatTensor]] = None
    attentions: Optional[Tuple[torch.FloatTensor]] = None


class AntiBERTyHeads(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.predictions = BertOnlyMLMHead(config)
        self.species = nn.Linear(config.hidden_size, 6)
        self.chain = nn.Linear(config.hidden_size, 2)

    def forward(self, sequence_output, pooled_output):
        prediction_scores = self.predictions(sequence_output)
        species_score = self.species(pooled_output)
        chain_score = self.chain(pooled_output)
        return prediction_scores, species_score, chain_score


class AntiBERTy(BertPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)

        self.bert = BertModel(config)
        self.cls = AntiBERTyHeads(config)

        self.init_weights()

    def get_output_embeddings(self):
        return self.cls.predictions.decoder

    def set_output_embeddings(self, new_embeddings):
        self.cls.predictions.decoder = new_embeddings

    def forward(
        self,
        input_ids=None,
        attention_mask=None,
        token_type_ids=None,
        position_ids=None,
        head_mask=None,
        inputs_embeds=None,
        labels=None,
        species_label=None,
        chain_label=None,
        output_attentions=None,
        output_hidden_states=None,
        return_dict=None,
    ):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict

        outputs = self.bert(
            input_ids,
            attention_mask=attention_mask,
            token_type_ids=token_type_ids,
            position_ids=position_ids,
            head_mask=head_mask,
            inputs_embeds=inputs_embeds,
            output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
            return_dict=return_dict,
        )

        sequence_output, pooled_output = outputs[:2]
        prediction_scores, species_score, chain_score = self.cls(sequence_output, pooled_output)

        total_loss = None
        if labels is not None and species_label is not None and chain_label is not None:
            loss_fct = CrossEntropyLoss()
            masked_lm_loss = loss_fct(prediction_scores.view(-1, self.config.vocab_size), labels.view(-1))
            species_loss = loss_fct(species_score.view(-1, 6), species_label.view(-1))
            chain_loss = loss_fct(chain_score.view(-1, 2), chain_label.view(-1))
            total_loss = masked_lm_loss + species_loss + chain_loss

        if not return_dict:
            output = (prediction_scores, species_score, chain_score) + outputs[2:]
            return ((total_loss,) + output) if total_loss is not None else output

        return AntiBERTyOutput(
            loss=total_loss,
            prediction_logits=prediction_scores,
            species_logits=species_score,
            chain_logits=chain_score,
            hidden_states=outputs.hidden_states,
            attentions=outputs.attentions,
        )
