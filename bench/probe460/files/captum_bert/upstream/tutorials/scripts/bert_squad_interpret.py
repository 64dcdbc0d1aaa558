#!/usr/bin/env python3
"""Interpreting BERT models (part 1), as a script.

Exported from the Bert_SQUAD_Interpret notebook so it can run unattended on a
GPU box. It fine-tunes nothing: it loads a BERT question-answering model that
was already trained on SQuAD and explains the start/end position predictions
with Layer Integrated Gradients and Layer Conductance.
"""
import argparse
import os

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
import torch
from captum.attr import LayerConductance, LayerIntegratedGradients
from captum.attr import visualization as viz
from transformers import BertForQuestionAnswering, BertTokenizer

parser = argparse.ArgumentParser()
parser.add_argument("--model-path", default="models/bert-base-uncased-squad2")
parser.add_argument("--n-steps", type=int, default=50)
parser.add_argument("--internal-batch-size", type=int, default=8)
parser.add_argument("--out-dir", default="bert_squad_out")
parser.add_argument("--fp16", action="store_true", help="run the forward passes under CUDA autocast")
args = parser.parse_args()

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

# load model
model = BertForQuestionAnswering.from_pretrained(args.model_path)
model.to(device)
model.eval()
model.zero_grad()

# load tokenizer
tokenizer = BertTokenizer.from_pretrained(args.model_path)


def predict(inputs, token_type_ids=None, position_ids=None, attention_mask=None):
    with torch.cuda.amp.autocast(enabled=args.fp16):
        output = model(
            inputs,
            token_type_ids=token_type_ids,
            position_ids=position_ids,
            attention_mask=attention_mask,
        )
    return output.start_logits.float(), output.end_logits.float()


def squad_pos_forward_func(inputs, token_type_ids=None, position_ids=None, attention_mask=None, position=0):
    pred = predict(
        inputs,
        token_type_ids=token_type_ids,
        position_ids=position_ids,
        attention_mask=attention_mask,
    )
    pred = pred[position]
    return pred.max(1).values


ref_token_id = tokenizer.pad_token_id  # A token used for generating token reference
sep_token_id = tokenizer.sep_token_id  # A token used as a separator between question and text and it is also added to the end of the text.
cls_token_id = tokenizer.cls_token_id  # A token used for prepending to the concatenated question-text word sequence


def construct_input_ref_pair(question, text, ref_token_id, sep_token_id, cls_token_id):
    question_ids = tokenizer.encode(question, add_special_tokens=False)
    text_ids = tokenizer.encode(text, add_special_tokens=False)

    # construct input token ids
    input_ids = [cls_token_id] + question_ids + [sep_token_id] + text_ids + [sep_token_id]

    # construct reference token ids
    ref_input_ids = (
        [cls_token_id] + [ref_token_id] * len(question_ids) + [sep_token_id] + [ref_token_id] * len(text_ids) + [sep_token_id]
    )

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


def summarize_attributions(attributions):
    attributions = attributions.sum(dim=-1).squeeze(0)
    attributions = attributions / torch.norm(attributions)
    return attributions


def pdf_attr(attrs, bins=100):
    return np.histogram(attrs, bins=bins, density=True)[0]


question, text = "What is important to us?", "It is important to us to include, empower and support humans of all kinds."

input_ids, ref_input_ids, sep_id = construct_input_ref_pair(question, text, ref_token_id, sep_token_id, cls_token_id)
token_type_ids, ref_token_type_ids = construct_input_ref_token_type_pair(input_ids, sep_id)
position_ids, ref_position_ids = construct_input_ref_pos_id_pair(input_ids)
attention_mask = construct_attention_mask(input_ids)

indices = input_ids[0].detach().tolist()
all_tokens = tokenizer.convert_ids_to_tokens(indices)

ground_truth = "to include, empower and support humans of all kinds"
ground_truth_tokens = tokenizer.encode(ground_truth, add_special_tokens=False)
ground_truth_end_ind = indices.index(ground_truth_tokens[-1])
ground_truth_start_ind = ground_truth_end_ind - len(ground_truth_tokens) + 1

start_scores, end_scores = predict(
    input_ids, token_type_ids=token_type_ids, position_ids=position_ids, attention_mask=attention_mask
)

print("Question: ", question)
print("Predicted Answer: ", " ".join(all_tokens[torch.argmax(start_scores): torch.argmax(end_scores) + 1]))

lig = LayerIntegratedGradients(squad_pos_forward_func, model.bert.embeddings)

attributions_start, delta_start = lig.attribute(
    inputs=input_ids,
    baselines=ref_input_ids,
    additional_forward_args=(token_type_ids, position_ids, attention_mask, 0),
    n_steps=args.n_steps,
    internal_batch_size=args.internal_batch_size,
    return_convergence_delta=True,
)
attributions_end, delta_end = lig.attribute(
    inputs=input_ids,
    baselines=ref_input_ids,
    additional_forward_args=(token_type_ids, position_ids, attention_mask, 1),
    n_steps=args.n_steps,
    internal_batch_size=args.internal_batch_size,
    return_convergence_delta=True,
)

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
    delta_start,
)
end_position_vis = viz.VisualizationDataRecord(
    attributions_end_sum,
    torch.max(torch.softmax(end_scores[0], dim=0)),
    torch.argmax(end_scores),
    torch.argmax(end_scores),
    str(ground_truth_end_ind),
    attributions_end_sum.sum(),
    all_tokens,
    delta_end,
)

os.makedirs(args.out_dir, exist_ok=True)
html = viz.visualize_text([start_position_vis, end_position_vis])
with open(os.path.join(args.out_dir, "lig_embeddings.html"), "w") as f:
    f.write(html.data)

# Interpreting every layer of BERT with Layer Conductance.
layer_attrs_start = []
layer_attrs_end = []

# The token that we would like to examine separately.
token_to_explain = 23  # the index of the token that we would like to examine more thoroughly
layer_attrs_start_dist = []
layer_attrs_end_dist = []

input_embeddings, ref_input_embeddings = model.bert.embeddings(input_ids), model.bert.embeddings(ref_input_ids)

for i in range(model.config.num_hidden_layers):
    lc = LayerConductance(squad_pos_forward_func, model.bert.encoder.layer[i])
    layer_attributions_start = lc.attribute(
        inputs=input_ids,
        baselines=ref_input_ids,
        additional_forward_args=(token_type_ids, position_ids, attention_mask, 0),
        internal_batch_size=args.internal_batch_size,
    )
    layer_attributions_end = lc.attribute(
        inputs=input_ids,
        baselines=ref_input_ids,
        additional_forward_args=(token_type_ids, position_ids, attention_mask, 1),
        internal_batch_size=args.internal_batch_size,
    )
    layer_attrs_start.append(summarize_attributions(layer_attributions_start).cpu().detach().tolist())
    layer_attrs_end.append(summarize_attributions(layer_attributions_end).cpu().detach().tolist())

    # storing attributions of the token id that we would like to examine in more detail in token_to_explain
    layer_attrs_start_dist.append(layer_attributions_start[0, token_to_explain, :].cpu().detach().tolist())
    layer_attrs_end_dist.append(layer_attributions_end[0, token_to_explain, :].cpu().detach().tolist())

    # 12 layers x 50 steps of activations add up; give the memory back between layers
    del layer_attributions_start, layer_attributions_end
    torch.cuda.empty_cache()

fig, ax = plt.subplots(figsize=(15, 5))
xticklabels = all_tokens
yticklabels = list(range(1, 13))
ax = sns.heatmap(np.array(layer_attrs_start), xticklabels=xticklabels, yticklabels=yticklabels, linewidth=0.2)
plt.xlabel("Tokens")
plt.ylabel("Layers")
plt.savefig(os.path.join(args.out_dir, "layer_conductance_start.png"))

fig, ax = plt.subplots(figsize=(15, 5))
ax = sns.heatmap(np.array(layer_attrs_end), xticklabels=xticklabels, yticklabels=yticklabels, linewidth=0.2)
plt.xlabel("Tokens")
plt.ylabel("Layers")
plt.savefig(os.path.join(args.out_dir, "layer_conductance_end.png"))

fig, ax = plt.subplots(figsize=(20, 10))
ax = sns.boxplot(data=layer_attrs_start_dist)
plt.xlabel("Layers")
plt.ylabel("Attribution")
plt.savefig(os.path.join(args.out_dir, "token_dist_start.png"))

layer_attrs_end_pdf = map(lambda layer_attrs_end_dist: pdf_attr(layer_attrs_end_dist), layer_attrs_end_dist)
layer_attrs_end_pdf = np.array(list(layer_attrs_end_pdf))

attr_sum = np.array(layer_attrs_end_dist).sum(-1)

# size: #layers
layer_attrs_end_pdf_norm = np.linalg.norm(layer_attrs_end_pdf, axis=-1, ord=1)

# size: #bins x #layers
layer_attrs_end_pdf = np.transpose(layer_attrs_end_pdf)

# size: #bins x #layers
layer_attrs_end_pdf = np.divide(layer_attrs_end_pdf, layer_attrs_end_pdf_norm, where=layer_attrs_end_pdf_norm != 0)

fig, ax = plt.subplots(figsize=(20, 10))
plt.plot(layer_attrs_end_pdf)
plt.xlabel("Bins")
plt.ylabel("Density")
plt.legend(["Layer " + str(i) for i in range(1, 13)])
plt.savefig(os.path.join(args.out_dir, "token_pdf_end.png"))

layer_attrs_end_pdf[layer_attrs_end_pdf == 0] = 1
layer_attrs_end_pdf_log = np.log2(layer_attrs_end_pdf)

# size: #layers
entropies = -(layer_attrs_end_pdf * layer_attrs_end_pdf_log).sum(0)

fig, ax = plt.subplots(figsize=(20, 10))
plt.scatter(np.arange(12), attr_sum, s=entropies * 100)
plt.xlabel("Layers")
plt.ylabel("Total Attribution")
plt.savefig(os.path.join(args.out_dir, "entropy_vs_attribution.png"))
print(f"Figures written to {args.out_dir}")
