# Copyright 2020, Sophos Limited. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License").

import os
import pickle
import sys
from collections import defaultdict

import baker
import numpy as np
import pandas as pd
import torch
import tqdm
from logzero import logger
from sklearn.metrics import roc_auc_score, roc_curve

import config
from dataset import Dataset, get_generator
from nets import PENetwork

all_tags = Dataset.tags


def detach_and_copy_array(array):
    if isinstance(array, torch.Tensor):
        return array.detach().cpu().numpy().ravel()
    elif isinstance(array, np.ndarray):
        return array.ravel()
    else:
        raise ValueError("Got array of unknown type {}".format(type(array)))


def normalize_results(labels_dict, results_dict, use_malware=True, use_count=True, use_tags=True):
    """
    Take a set of results dicts and break them out into
    a single dict of 1d arrays with appropriate column names
    that pandas can convert to a DataFrame.
    """
    # we do a lot of deepcopy stuff here to avoid a FD "leak" in the dataset generator
    # see here: https://github.com/pytorch/pytorch/issues/973#issuecomment-459398189
    rv = {}
    if use_malware:
        rv['label_malware'] = detach_and_copy_array(labels_dict['malware'])
        rv['pred_malware'] = detach_and_copy_array(results_dict['malware'])
    if use_count:
        rv['label_count'] = detach_and_copy_array(labels_dict['count'])
        rv['pred_count'] = detach_and_copy_array(results_dict['count'])
    if use_tags:
        for column, tag in enumerate(all_tags):
            rv[f'label_{tag}_tag'] = detach_and_copy_array(labels_dict['tags'][:, column])
            rv[f'pred_{tag}_tag'] = detach_and_copy_array(results_dict['tags'][:, column])
    return rv


@baker.command
def evaluate_network(results_dir, checkpoint_file, db_path=config.db_path, evaluate_malware=True,
                     evaluate_count=True, evaluate_tags=True, remove_missing_features='scan'):
    """
    Take a trained feedforward neural network model and output evaluation results to a csv in the specified location.

    :param results_dir: The directory to which to write the 'results.csv' file; WARNING -- this will overwrite any
        existing results in that location
    :param checkpoint_file: The checkpoint file containing the weights to evaluate (the released
        baseline checkpoints were saved directly from the GPU)
    :param db_path: the path to the directory containing the meta.db file; defaults to the value in config.py
    :param evaluate_malware: defaults to True; whether or not to record malware labels and predictions
    :param evaluate_count: defaults to True; whether or not to record count labels and predictions
    :param evaluate_tags: defaults to True; whether or not to record individual tag labels and predictions
    :param remove_missing_features: See help for remove_missing_features in train.py / train_network
    """
    os.system('mkdir -p {}'.format(results_dir))
    model = PENetwork(use_malware=True, use_counts=True, use_tags=True, n_tags=len(Dataset.tags),
                      feature_dimension=2381)
    model.load_state_dict(torch.load(checkpoint_file))
    model.to(config.device)
    generator = get_generator(db_path, mode='test', use_malicious_labels=evaluate_malware,
                              use_count_labels=evaluate_count,
                              use_tag_labels=evaluate_tags, return_shas=True,
                              remove_missing_features=remove_missing_features)
    logger.info('...running network evaluation')
    f = open(os.path.join(results_dir, 'results.csv'), 'w')
    first_batch = True
    for shas, features, labels in tqdm.tqdm(generator):
        features = features.to(config.device)
        with torch.no_grad():
            predictions = model(features)
        results = normalize_results(labels, predictions)
        pd.DataFrame(results, index=shas).to_csv(f, header=first_batch)
        first_batch = False
    f.close()
    print('...done')


@baker.command
def summarise_results(results_file, fpr_points="0.001,0.01,0.1"):
    """Print AUC and TPR at fixed FPRs for the malware head of a results.csv"""
    df = pd.read_csv(results_file, index_col=0)
    y, p = df['label_malware'].values, df['pred_malware'].values
    auc = roc_auc_score(y, p)
    fpr, tpr, _ = roc_curve(y, p)
    print('AUC: {:.5f}'.format(auc))
    for target in [float(v) for v in fpr_points.split(',')]:
        print('TPR @ FPR {:g}: {:.4f}'.format(target, np.interp(target, fpr, tpr)))


if __name__ == '__main__':
    baker.run()
