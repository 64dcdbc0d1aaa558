"""BEANS benchmark: train and evaluate a classifier / detector on one task.

Tasks are either classification (watkins, bats, cbi, dogs, humbugdb) or
detection (dcase, enabirds, hiceas, hainan-gibbons, rfcx). Models range from
linear probes on frozen embeddings to fully fine-tuned ResNets and AVES/BEATs.
"""
import argparse
import copy
import json
import random
import sys

import numpy as np
import torch
from torch.utils.data import DataLoader

from beans.datasets import ClassificationDataset, RecognitionDataset
from beans.metrics import Accuracy, BinaryF1Score, MulticlassBinaryF1Score, MeanAveragePrecision
from beans.models import ResNetClassifier, VGGishClassifier, AvesClassifier, BEATsClassifier


def read_datasets(path):
    with open(path) as f:
        datasets = json.load(f)
    return {ds['name']: ds for ds in datasets}


def spec2feats(spec):
    spec = torch.cat([spec, spec, spec], dim=1)
    return spec


def eval_pytorch_model(model, dataloader, metric_factory, device, desc):
    model.eval()
    total_loss = 0.
    steps = 0
    metric = metric_factory()
    with torch.no_grad():
        for x, y in dataloader:
            x = x.to(device)
            y = y.to(device)

            loss, logits = model(x, y)
            total_loss += loss.cpu().item()
            steps += 1

            metric.update(logits, y)

    total_loss /= steps

    return total_loss, metric.get_primary_metric()


def train_pytorch_model(args, dataloader_train, dataloader_valid, num_labels, metric_factory, sample_rate, device):
    lrs = [1e-5, 5e-5, 1e-4] if args.model_type.startswith(('aves', 'beats')) else [1e-5, 5e-5, 1e-4, 5e-4, 1e-3]

    valid_metric_best = 0.
    best_model = None

    for lr in lrs:
        print(f'lr = {lr}' , file=sys.stderr)

        if args.model_type.startswith('resnet'):
            pretrained = args.model_type.endswith('pretrained')
            model = ResNetClassifier(model_type=args.model_type, pretrained=pretrained,
                                     num_classes=num_labels, multi_label=(args.task == 'detection')).to(device)
        elif args.model_type == 'vggish':
            model = VGGishClassifier(sample_rate=sample_rate, num_classes=num_labels,
                                     multi_label=(args.task == 'detection')).to(device)
        elif args.model_type.startswith('aves'):
            model = AvesClassifier(model_path=args.model_path, num_classes=num_labels,
                                   multi_label=(args.task == 'detection')).to(device)
        elif args.model_type.startswith('beats'):
            model = BEATsClassifier(checkpoint_path=args.model_path, num_classes=num_labels,
                                    multi_label=(args.task == 'detection')).to(device)

        optimizer = torch.optim.Adam(params=model.parameters(), lr=lr)

        for epoch in range(args.epochs):
            print(f'epoch = {epoch}', file=sys.stderr)

            model.train()

            train_loss = 0.
            train_steps = 0
            train_metric = metric_factory()

            for x, y in dataloader_train:
                optimizer.zero_grad()

                x = x.to(device)
                y = y.to(device)

                loss, logits = model(x, y)
                loss.backward()

                optimizer.step()

                train_loss += loss.cpu().item()
                train_steps += 1

                train_metric.update(logits, y)

            valid_loss, valid_metric = eval_pytorch_model(
                model=model, dataloader=dataloader_valid, metric_factory=metric_factory,
                device=device, desc='valid')

            if valid_metric > valid_metric_best:
                valid_metric_best = valid_metric
                best_model = copy.deepcopy(model)

            print({
                'epoch': epoch,
                'train': {'loss': train_loss / train_steps, 'metric': train_metric.get_metric()},
                'valid': {'loss': valid_loss, 'metric': valid_metric}
            }, file=sys.stderr)

    return valid_metric_best, best_model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--model-type', type=str)
    parser.add_argument('--model-path', type=str, default=None)
    parser.add_argument('--dataset', type=str)
    parser.add_argument('--batch-size', type=int, default=32)
    parser.add_argument('--epochs', type=int, default=50)
    parser.add_argument('--num-workers', type=int, default=2)
    parser.add_argument('--seed', type=int, default=42)
    parser.add_argument('--stop-shuffle', action='store_true')
    parser.add_argument('--log-path', type=str)
    args = parser.parse_args()

    torch.random.manual_seed(args.seed)
    random.seed(args.seed)
    np.random.seed(args.seed)

    device = 'cuda' if torch.cuda.is_available() else 'cpu'

    datasets = read_datasets('datasets.json')
    dataset = datasets[args.dataset]
    args.task = dataset['type']
    num_labels = dataset['num_labels']
    sample_rate = dataset['sample_rate']
    feature_type = 'waveform' if args.model_type.startswith(('aves', 'beats', 'vggish')) else 'melspectrogram'

    if args.task == 'classification':
        dataset_train = ClassificationDataset(metadata_path=dataset['train_data'], num_labels=num_labels,
                                              labels=dataset['labels'], unknown_label=dataset.get('unknown_label'),
                                              sample_rate=sample_rate, max_duration=dataset['max_duration'],
                                              feature_type=feature_type)
        dataset_valid = ClassificationDataset(metadata_path=dataset['valid_data'], num_labels=num_labels,
                                              labels=dataset['labels'], unknown_label=dataset.get('unknown_label'),
                                              sample_rate=sample_rate, max_duration=dataset['max_duration'],
                                              feature_type=feature_type)
        metric_factory = Accuracy
    else:
        dataset_train = RecognitionDataset(metadata_path=dataset['train_data'], num_labels=num_labels,
                                           labels=dataset['labels'], unknown_label=dataset.get('unknown_label'),
                                           sample_rate=sample_rate, window_width=dataset['window_width'],
                                           window_shift=dataset['window_shift'], feature_type=feature_type)
        dataset_valid = RecognitionDataset(metadata_path=dataset['valid_data'], num_labels=num_labels,
                                           labels=dataset['labels'], unknown_label=dataset.get('unknown_label'),
                                           sample_rate=sample_rate, window_width=dataset['window_width'],
                                           window_shift=dataset['window_shift'], feature_type=feature_type)
        metric_factory = MeanAveragePrecision

    dataloader_train = DataLoader(dataset=dataset_train, batch_size=args.batch_size,
                                  shuffle=not args.stop_shuffle, num_workers=args.num_workers, pin_memory=True)
    dataloader_valid = DataLoader(dataset=dataset_valid, batch_size=args.batch_size,
                                  shuffle=False, num_workers=args.num_workers, pin_memory=True)

    valid_metric_best, best_model = train_pytorch_model(
        args, dataloader_train, dataloader_valid, num_labels, metric_factory, sample_rate, device)

    print('valid_metric_best = ', valid_metric_best)
    if args.log_path:
        with open(args.log_path, 'w') as f:
            json.dump({'dataset': args.dataset, 'model_type': args.model_type,
                       'valid_metric_best': valid_metric_best}, f)


if __name__ == '__main__':
    main()
