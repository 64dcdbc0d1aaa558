import json
import random

import numpy as np
import torch
from torch.utils.data import TensorDataset


def load_json(path):
    with open(path, "r") as f:
        dict = json.load(f)
    return dict


def get_dataset_pos_mask(dataset):
    """
    Returns a list, pos_mask, where pos_mask[i] indicates is True if the ith example in the dataset is positive
    (i.e. it contains some text that should be highlighted) and False otherwise.
    """
    pos_mask = []
    for i in range(len(dataset)):
        ex = dataset[i]
        start_pos = ex[3]
        end_pos = ex[4]
        is_positive = end_pos > start_pos
        pos_mask.append(is_positive)
    return pos_mask


def get_random_subset(dataset, keep_frac=1):
    """
    Takes a random subset of dataset, where a keep_frac fraction is kept.
    """
    keep_indices = [i for i in range(len(dataset)) if np.random.random() < keep_frac]
    subset_dataset = torch.utils.data.Subset(dataset, keep_indices)
    return subset_dataset


def get_balanced_dataset(dataset, keep_frac=1.0):
    """
    returns a new dataset, where positive and negative examples are approximately balanced
    """
    pos_mask = get_dataset_pos_mask(dataset)
    neg_mask = [~mask for mask in pos_mask]
    npos, nneg = np.sum(pos_mask), np.sum(neg_mask)

    neg_keep_frac = npos / nneg  # So that in expectation there will be an equal number of positives and negatives
    # keep all positives and a random subset of negatives
    neg_keep_mask = [mask and np.random.random() < neg_keep_frac for mask in neg_mask]

    # filter the dataset
    keep_indices = [i for i in range(len(pos_mask)) if pos_mask[i] or neg_keep_mask[i]]
    if keep_frac < 1.0:
        keep_indices = [i for i in keep_indices if random.random() < keep_frac]

    subset_dataset = torch.utils.data.Subset(dataset, keep_indices)
    return subset_dataset


def tensor_dataset_from_subset(subset):
    """
    Materialises a torch Subset back into a TensorDataset so that it can be cached with torch.save and
    re-loaded without the (large) parent dataset. Tensors stay on the CPU; the training loop moves each
    batch to args.device.
    """
    columns = list(zip(*[subset[i] for i in range(len(subset))]))
    tensors = [torch.stack(col, dim=0) for col in columns]
    return TensorDataset(*tensors)


def get_category_names(data_path):
    """
    Reads the 41 CUAD clause categories from the question text of the SQuAD-format json
    (e.g. 'Highlight the parts (if any) of this contract related to "Governing Law" ...').
    """
    data = load_json(data_path)["data"]
    categories = []
    for paragraph in data[0]["paragraphs"]:
        for qa in paragraph["qas"]:
            question = qa["question"]
            start = question.find('"')
            end = question.find('"', start + 1)
            name = question[start + 1:end]
            if name not in categories:
                categories.append(name)
    return categories


def count_answers(data_path):
    """
    Counts, per category, how many contracts have at least one highlighted span.
    """
    data = load_json(data_path)["data"]
    counts = {}
    for contract in data:
        for paragraph in contract["paragraphs"]:
            for qa in paragraph["qas"]:
                category = qa["id"].split("__")[-1]
                has_answer = len(qa["answers"]) > 0
                counts.setdefault(category, [0, 0])
                counts[category][0] += int(has_answer)
                counts[category][1] += 1
    return counts


def summarize_dataset(dataset, name="train"):
    pos_mask = get_dataset_pos_mask(dataset)
    npos = int(np.sum([bool(m) for m in pos_mask]))
    print("{}: {} features, {} positive ({:.2f}%)".format(name, len(dataset), npos, 100.0 * npos / max(1, len(dataset))))
