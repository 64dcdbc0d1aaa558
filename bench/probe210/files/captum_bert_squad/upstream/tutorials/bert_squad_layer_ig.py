#!/usr/bin/env python
# coding: utf-8

# # Interpreting BERT Models (Part 1)
#
# In this notebook we demonstrate how to interpret Bert models using
# `Captum` library. In this particular case study we focus on a fine-tuned
# Question Answering model on SQUAD dataset using transformers library from
# Hugging Face.
#
# We show how to use interpretation hooks to examine and better understand
# embeddings, sub-embeddings, bert, and attention layers.
#
# Note: Before running this tutorial, please install `seaborn`, `pandas` and
# `matplotlib`, `transformers` (from hugging face) python packages.
# Exported from the notebook; extra CLI flags were added for the batch runs
# on the lab's GPU boxes.

import argparse
import random

import numpy as np
import pandas as pd
import seaborn as sns
import matplotlib.pyplot as plt

import torch
import torch.nn as nn

from transformers import BertTokenizer, BertForQuestionAnswering, BertConfig

from captum.attr import visualization as viz
from captum.attr import LayerConductance, LayerIntegratedGradients


parser = argparse.ArgumentParser(description="Layer IG / conductance for BERT-SQuAD")
parser.add_argument("--model-path", default="bert-large-uncased-whole-word-masking-finetuned-squad")
parser.add_argument("--n-steps", type=int, default=50)
parser.add_argument("--internal-batch-size", type=int, default=8)
parser.add_argument("--fp16", action="store_true",
                    help="run the forward passes under autocast (bert-large on 12GB cards)")
parser.add_argument("--seed", type=int, default=123)
parser.add_argument("--save-prefix", default="bert_squad")
args = parser.parse_args()


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


set_seed(args.seed)

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


# The first step is to fine-tune BERT model on SQUAD dataset. This can be
# easiy accomplished by following the steps described in hugging face's
# official web site:
# https://github.com/huggingface/transformers#run_squadpy-fine-tuning-on-squad-for-question-answering
#
# Note that the fine-tuning is done on a `bert-base-uncased` pre-trained
# model.

# load model
model = BertForQuestionAnswering.from_pretrained(args.model_path)
model.to(device)
model.eval()
model.zero_grad()

# load tokenizer
tokenizer = BertTokenizer.from_pretrained(args.model_path)


# A helper function to perform forward pass of the model and make
# predictions.

def predict(inputs, token_type_ids=None, position_ids=None, attention_mask=None):
    with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.fp16):
        output = model(inputs, token_type_ids=token_type_ids,
                       position_ids=position_ids, attention_mask=attention_mask, )
    return output.start_logits.float(), output.end_logits.float()


# Defining a custom forward function that will allow us to access the start
# and end positions of our prediction using `position` input argument.

def squad_pos_forward_func(inputs, token_type_ids=None, position_ids=None, attention_mask=None, position=0):
    pred = predict(inputs,
                   token_type_ids=token_type_ids,
                   position_ids=position_ids,
                   attention_mask=attention_mask)
    pred = pred[position]
    return pred.max(1).values


# Let's compute attributions with respect to the `BertEmbeddings` layer.
#
# To do so, we need to define baselines / references, numericalize both the
# baselines and the inputs. We will define helper functions to achieve
# that.
#
# The cell below defines numericalized special tokens that will be later
# used for constructing inputs and corresponding baselines/references.

ref_token_id = tokenizer.pad_token_id  # A token used for generating token reference
sep_token_id = tokenizer.sep_token_id  # A token used as a separator between question and text and it is also added to the end of the text.
cls_token_id = tokenizer.cls_token_id  # A token used for prepending to the concatenated question-text word sequence


def construct_input_ref_pair(question, text, ref_token_id, sep_token_id, cls_token_id):
    question_ids = tokenizer.encode(question, add_special_tokens=False)
    text_ids = tokenizer.encode(text, add_special_tokens=False)

    # construct input token ids
    input_ids = [cls_token_id] + question_ids + [sep_token_id] + text_ids + [sep_token_id]

    # construct reference token ids
    ref_input_ids = [cls_token_id] + [ref_token_id] * len(question_ids) + [sep_token_id] + \
        [ref_token_id] * len(text_ids) + [sep_token_id]

    return torch.tensor([input_ids], device=device), torch.tensor([ref_input_ids], device=device), len(question_ids)


def construct_input_ref_token_type_pair(input_ids, sep_ind=0):
    seq_len = input_ids.size(1)
    token_type_ids = torch.tensor([[0 if i <= sep_ind else 1 for i in range(seq_len)]], device=device)
    ref_token_type_ids = torch.zeros_like(token_type_ids, device=device)  # * -1
    return token_type_ids, ref_token_type_ids


def construct_input_ref_pos_id_pair(input_ids):
    seq_length = input_ids.size(1)
    position_ids = torch.arange(seq_length, dtype=torch.long, device=device)
    # we could potentially also use random permutation with `torch.randperm(seq_length, device=device)`
    ref_position_ids = torch.zeros(seq_length, dtype=torch.long, device=device)

    position_ids = position_ids.unsqueeze(0).expand_as(input_ids)
    ref_position_ids = ref_position_ids.unsqueeze(0).expand_as(input_ids)
    return position_ids, ref_position_ids


def construct_attention_mask(input_ids):
    return torch.ones_like(input_ids)


def construct_whole_bert_embeddings(input_ids, ref_input_ids,
                                    token_type_ids=None, ref_token_type_ids=None,
                                    position_ids=None, ref_position_ids=None):
    input_embeddings = model.bert.embeddings(input_ids, token_type_ids=token_type_ids, position_ids=position_ids)
    ref_input_embeddings = model.bert.embeddings(ref_input_ids, token_type_ids=ref_token_type_ids,
                                                 position_ids=ref_position_ids)

    return input_embeddings, ref_input_embeddings


# Let's define the `question - text` pair that we'd like to use as an input
# for our Bert model and interpret what the model was focusing on when
# predicting an answer to the question from given input text

question, text = "What is important to us?", "It is important to us to include, empower and support humans of all kinds."

# Let's numericalize the question, the input text and generate corresponding
# baselines / references for all three sub-embeddings (word, token type and
# position embeddings) types using our helper functions defined above.

input_ids, ref_input_ids, sep_id = construct_input_ref_pair(question, text, ref_token_id, sep_token_id, cls_token_id)
token_type_ids, ref_token_type_ids = construct_input_ref_token_type_pair(input_ids, sep_id)
position_ids, ref_position_ids = construct_input_ref_pos_id_pair(input_ids)
attention_mask = construct_attention_mask(input_ids)

indices = input_ids[0].detach().tolist()
all_tokens = tokenizer.convert_ids_to_tokens(indices)

# Also, let's define the ground truth for prediction's start and end
# positions.

ground_truth = 'to include, empower and support humans of all kinds'

ground_truth_tokens = tokenizer.encode(ground_truth, add_special_tokens=False)
ground_truth_end_ind = indices.index(ground_truth_tokens[-1])
ground_truth_start_ind = ground_truth_end_ind - len(ground_truth_tokens) + 1

# Now let's make predictions using input, token type, position id and a
# default attention mask.

start_scores, end_scores = predict(input_ids,
                                   token_type_ids=token_type_ids,
                                   position_ids=position_ids,
                                   attention_mask=attention_mask)

print('Question: ', question)
print('Predicted Answer: ', ' '.join(all_tokens[torch.argmax(start_scores): torch.argmax(end_scores) + 1]))

# There are two different ways of computing the attributions for embedding
# layers. One option is to use `LayerIntegratedGradients` and compute the
# attributions with respect to `BertEmbedding`. The second option is to use
# `LayerIntegratedGradients` for each `word_embeddings`,
# `token_type_embeddings` and `position_embeddings` and compute the
# attributions w.r.t each embedding vector.

lig = LayerIntegratedGradients(squad_pos_forward_func, model.bert.embeddings)

attributions_start, delta_start = lig.attribute(inputs=input_ids,
                                                baselines=ref_input_ids,
                                                additional_forward_args=(token_type_ids, position_ids, attention_mask, 0),
                                                n_steps=args.n_steps,
                                                internal_batch_size=args.internal_batch_size,
                                                return_convergence_delta=True)
attributions_end, delta_end = lig.attribute(inputs=input_ids, baselines=ref_input_ids,
                                            additional_forward_args=(token_type_ids, position_ids, attention_mask, 1),
                                            n_steps=args.n_steps,
                                            internal_batch_size=args.internal_batch_size,
                                            return_convergence_delta=True)


# A helper function to summarize attributions for each word token in the
# sequence.

def summarize_attributions(attributions):
    attributions = attributions.sum(dim=-1).squeeze(0)
    attributions = attributions / torch.norm(attributions)
    return attributions


attributions_start_sum = summarize_attributions(attributions_start)
attributions_end_sum = summarize_attributions(attributions_end)

# storing couple samples in an array for visualization purposes
start_position_vis = viz.VisualizationDataRecord(
    attributions_start_sum,
    torch.max(torch.softmax(start_scores[0], dim=0)),
    torch.argmax(start_scores),
    torch.argmax(start_scores),
    str(ground_truth_start_ind),
    attributions_start_sum.sum(),
    all_tokens,
    delta_start)

end_position_vis = viz.VisualizationDataRecord(
    attributions_end_sum,
    torch.max(torch.softmax(end_scores[0], dim=0)),
    torch.argmax(end_scores),
    torch.argmax(end_scores),
    str(ground_truth_end_ind),
    attributions_end_sum.sum(),
    all_tokens,
    delta_end)

print('\033[1m', 'Visualizations For Start Position', '\033[0m')
viz.visualize_text([start_position_vis])

print('\033[1m', 'Visualizations For End Position', '\033[0m')
viz.visualize_text([end_position_vis])


# ## Interpreting Bert Layers
#
# Now let's look into the layers of our network. More specifically we would
# like to look into the distribution of attribution scores for each token
# across all layers in Bert model and dive deeper into specific tokens.

def squad_pos_forward_func2(input_emb, attention_mask=None, position=0):
    pred = model(inputs_embeds=input_emb, attention_mask=attention_mask, )
    pred = pred[position]
    return pred.max(1).values


layer_attrs_start = []
layer_attrs_end = []

input_embeddings, ref_input_embeddings = construct_whole_bert_embeddings(input_ids, ref_input_ids,
                                                                         token_type_ids=token_type_ids,
                                                                         ref_token_type_ids=ref_token_type_ids,
                                                                         position_ids=position_ids,
                                                                         ref_position_ids=ref_position_ids)

for i in range(model.config.num_hidden_layers):
    lc = LayerConductance(squad_pos_forward_func2, model.bert.encoder.layer[i])
    layer_attributions_start = lc.attribute(inputs=input_embeddings, baselines=ref_input_embeddings,
                                            additional_forward_args=(attention_mask, 0),
                                            internal_batch_size=args.internal_batch_size)
    layer_attributions_end = lc.attribute(inputs=input_embeddings, baselines=ref_input_embeddings,
                                          additional_forward_args=(attention_mask, 1),
                                          internal_batch_size=args.internal_batch_size)
    layer_attrs_start.append(summarize_attributions(layer_attributions_start).cpu().detach().tolist())
    layer_attrs_end.append(summarize_attributions(layer_attributions_end).cpu().detach().tolist())
    # bert-large has 24 layers; the conductance graphs of the previous layer
    # are garbage by now.
    del layer_attributions_start, layer_attributions_end
    torch.cuda.empty_cache()

fig, ax = plt.subplots(figsize=(15, 5))
xticklabels = all_tokens
yticklabels = list(range(1, model.config.num_hidden_layers + 1))
ax = sns.heatmap(np.array(layer_attrs_start), xticklabels=xticklabels, yticklabels=yticklabels, linewidth=0.2)
plt.xlabel('Tokens')
plt.ylabel('Layers')
plt.savefig(f"{args.save_prefix}_start_layers.png", bbox_inches="tight")

fig, ax = plt.subplots(figsize=(15, 5))
ax = sns.heatmap(np.array(layer_attrs_end), xticklabels=xticklabels, yticklabels=yticklabels, linewidth=0.2)
plt.xlabel('Tokens')
plt.ylabel('Layers')
plt.savefig(f"{args.save_prefix}_end_layers.png", bbox_inches="tight")

pd.DataFrame(np.array(layer_attrs_start), columns=all_tokens).to_csv(f"{args.save_prefix}_start_layers.csv")
pd.DataFrame(np.array(layer_attrs_end), columns=all_tokens).to_csv(f"{args.save_prefix}_end_layers.csv")
