#!/usr/bin/env python
# coding: utf-8

# ## Geneformer Fine-Tuning for Cell Annotation Application
# (exported from examples/cell_classification.ipynb)

import os

GPU_NUMBER = [0]
os.environ["CUDA_VISIBLE_DEVICES"] = ",".join([str(s) for s in GPU_NUMBER])
os.environ["NCCL_DEBUG"] = "INFO"

# imports
from collections import Counter
import datetime
import pickle
import subprocess

import numpy as np
import pandas as pd
import seaborn as sns

sns.set()
import torch
from datasets import load_from_disk
from ray import tune
from ray.tune.search.hyperopt import HyperOptSearch
from sklearn.metrics import accuracy_score, f1_score
from tqdm.auto import trange
from transformers import BertForSequenceClassification
from transformers import Trainer
from transformers.training_args import TrainingArguments

from geneformer import DataCollatorForCellClassification

# ## Prepare training and evaluation datasets

# load cell type dataset (includes all tissues)
train_dataset = load_from_disk("/path/to/cell_type_train_data.dataset")

dataset_list = []
evalset_list = []
organ_list = []
target_dict_list = []

for organ in Counter(train_dataset["organ_major"]).keys():
    # collect list of tissues for fine-tuning (immune and bone marrow are included together)
    if organ in ["bone_marrow"]:
        continue
    elif organ == "immune":
        organ_ids = ["immune", "bone_marrow"]
        organ_list += ["immune"]
    else:
        organ_ids = [organ]
        organ_list += [organ]

    print(organ)

    # filter datasets for given organ
    def if_organ(example):
        return example["organ_major"] in organ_ids

    trainset_organ = train_dataset.filter(if_organ, num_proc=16)

    # per scDeepsort published method, drop cell types representing <0.5% of cells
    celltype_counter = Counter(trainset_organ["cell_type"])
    total_cells = sum(celltype_counter.values())
    cells_to_keep = [k for k, v in celltype_counter.items() if v > (0.005 * total_cells)]

    def if_not_rare_celltype(example):
        return example["cell_type"] in cells_to_keep

    trainset_organ_subset = trainset_organ.filter(if_not_rare_celltype, num_proc=16)

    # shuffle datasets and rename columns
    trainset_organ_shuffled = trainset_organ_subset.shuffle(seed=42)
    trainset_organ_shuffled = trainset_organ_shuffled.rename_column("cell_type", "label")
    trainset_organ_shuffled = trainset_organ_shuffled.remove_columns("organ_major")

    # create dictionary of cell types : label ids
    target_names = list(Counter(trainset_organ_shuffled["label"]).keys())
    target_name_id_dict = dict(zip(target_names, [i for i in range(len(target_names))]))
    target_dict_list += [target_name_id_dict]

    # change labels to numerical ids
    def classes_to_ids(example):
        example["label"] = target_name_id_dict[example["label"]]
        return example

    labeled_trainset = trainset_organ_shuffled.map(classes_to_ids, num_proc=16)

    # create 80/20 train/eval splits
    labeled_train_split = labeled_trainset.select([i for i in range(0, round(len(labeled_trainset) * 0.8))])
    labeled_eval_split = labeled_trainset.select(
        [i for i in range(round(len(labeled_trainset) * 0.8), len(labeled_trainset))]
    )

    # filter dataset for cell types in corresponding training set
    trained_labels = list(Counter(labeled_train_split["label"]).keys())

    def if_trained_label(example):
        return example["label"] in trained_labels

    labeled_eval_split_subset = labeled_eval_split.filter(if_trained_label, num_proc=16)

    dataset_list += [labeled_train_split]
    evalset_list += [labeled_eval_split_subset]

trainset_dict = dict(zip(organ_list, dataset_list))
traintargetdict_dict = dict(zip(organ_list, target_dict_list))

evalset_dict = dict(zip(organ_list, evalset_list))


# ## Fine-Tune With Cell Classification Learning Objective and Quantify Predictive Performance

def compute_metrics(pred):
    labels = pred.label_ids
    preds = pred.predictions.argmax(-1)
    # calculate accuracy and macro f1 using sklearn's function
    acc = accuracy_score(labels, preds)
    macro_f1 = f1_score(labels, preds, average="macro")
    return {"accuracy": acc, "macro_f1": macro_f1}


# set model parameters
# max input size
max_input_size = 2**11  # 2048

# set training hyperparameters
# max learning rate
max_lr = 5e-5
# how many pretrained layers to freeze
freeze_layers = 0
# number gpus
num_gpus = 1
# number cpu cores
num_proc = 16
# batch size for training and eval
geneformer_batch_size = 12
# learning schedule
lr_schedule_fn = "linear"
# warmup steps
warmup_steps = 500
# number of epochs
epochs = 10
# optimizer
optimizer = "adamw"


def model_init(organ):
    model = BertForSequenceClassification.from_pretrained(
        "/path/to/pretrained_model/",
        num_labels=len(organ_label_dict[organ]),
        output_attentions=False,
        output_hidden_states=False,
    ).to("cuda")
    if freeze_layers is not None:
        modules_to_freeze = model.bert.encoder.layer[:freeze_layers]
        for module in modules_to_freeze:
            for param in module.parameters():
                param.requires_grad = False
    return model


@torch.no_grad()
def extract_cell_embs(model, dataset, batch_size=32, layer=-2):
    """Mean-pooled cell embeddings from the `layer`-th hidden state (used for the UMAPs)."""
    model.to("cuda")
    model.eval()
    embs = []
    for i in trange(0, len(dataset), batch_size):
        minibatch = dataset.select([j for j in range(i, min(i + batch_size, len(dataset)))])
        max_len = max(minibatch["length"])
        input_ids = [ids + [0] * (max_len - len(ids)) for ids in minibatch["input_ids"]]
        input_data_minibatch = torch.tensor(input_ids).cuda()
        attention_mask = (input_data_minibatch != 0).long()
        outputs = model.bert(input_ids=input_data_minibatch, attention_mask=attention_mask,
                             output_hidden_states=True)
        hidden = outputs.hidden_states[layer]
        mean_embs = (hidden * attention_mask[..., None]).sum(1) / attention_mask.sum(1, keepdim=True)
        embs.append(mean_embs.cpu())
        del outputs, hidden
        torch.cuda.empty_cache()
    return torch.cat(embs).numpy()


organ_label_dict = traintargetdict_dict
for organ in organ_list:
    print(organ)
    organ_trainset = trainset_dict[organ]
    organ_evalset = evalset_dict[organ]
    organ_label_dict = traintargetdict_dict[organ]

    # set logging steps
    logging_steps = round(len(organ_trainset) / geneformer_batch_size / 10)

    # reload pretrained model
    model = model_init(organ)

    # define output directory path
    current_date = datetime.datetime.now()
    datestamp = f"{str(current_date.year)[-2:]}{current_date.month:02d}{current_date.day:02d}"
    output_dir = f"/path/to/models/{datestamp}_geneformer_CellClassifier_{organ}_L{max_input_size}_B{geneformer_batch_size}_LR{max_lr}_LS{lr_schedule_fn}_WU{warmup_steps}_E{epochs}_O{optimizer}_F{freeze_layers}/"

    # ensure not overwriting previously saved model
    saved_model_test = os.path.join(output_dir, f"pytorch_model.bin")
    if os.path.isfile(saved_model_test) == True:
        raise Exception("Model already saved to this directory.")

    # make output directory
    subprocess.call(f"mkdir {output_dir}", shell=True)

    # set training arguments
    training_args = {
        "learning_rate": max_lr,
        "do_train": True,
        "do_eval": True,
        "evaluation_strategy": "epoch",
        "save_strategy": "epoch",
        "logging_steps": logging_steps,
        "group_by_length": True,
        "length_column_name": "length",
        "disable_tqdm": False,
        "lr_scheduler_type": lr_schedule_fn,
        "warmup_steps": warmup_steps,
        "weight_decay": 0.001,
        "per_device_train_batch_size": geneformer_batch_size,
        "per_device_eval_batch_size": geneformer_batch_size,
        "num_train_epochs": epochs,
        "load_best_model_at_end": True,
        "output_dir": output_dir,
        "fp16": True,
    }

    training_args_init = TrainingArguments(**training_args)

    # create the trainer
    trainer = Trainer(
        model_init=lambda: model_init(organ),
        args=training_args_init,
        data_collator=DataCollatorForCellClassification(),
        train_dataset=organ_trainset,
        eval_dataset=organ_evalset,
        compute_metrics=compute_metrics,
    )

    # optional: ray tune hyperparameter search before the final run
    if os.environ.get("GENEFORMER_HPO", "0") == "1":
        best = trainer.hyperparameter_search(
            direction="maximize",
            backend="ray",
            resources_per_trial={"cpu": 8, "gpu": 1},
            hp_space=lambda _: {
                "learning_rate": tune.loguniform(1e-6, 1e-3),
                "warmup_steps": tune.uniform(100, 2000),
                "weight_decay": tune.uniform(0.0, 0.3),
                "seed": tune.uniform(0, 100),
            },
            search_alg=HyperOptSearch(metric="eval_accuracy", mode="max"),
            n_trials=16,
        )
        print(best)

    # train the cell type classifier
    trainer.train()
    predictions = trainer.predict(organ_evalset)
    with open(f"{output_dir}predictions.pickle", "wb") as fp:
        pickle.dump(predictions, fp)
    trainer.save_metrics("eval", predictions.metrics)
    trainer.save_model(output_dir)

    embs = extract_cell_embs(trainer.model, organ_evalset)
    np.save(f"{output_dir}eval_cell_embs.npy", embs)
