"""Train / evaluate long-document classifiers on Hyperpartisan, 20NewsGroups, EURLEX-57K, CMU Book Summary
and the paired/inverted variants.

    python src/train.py --data hyperpartisan --model_name tobert --epochs 20 --lr 3e-5 --fp16
"""

import argparse
import json
import logging
import os
import random
import time

import numpy as np
import torch
import torch.nn as nn
from sklearn.metrics import accuracy_score, f1_score
from torch.optim import AdamW
from torch.utils.data import DataLoader
from tqdm import tqdm
from transformers import AutoTokenizer, get_linear_schedule_with_warmup

from dataloader import DATASETS, LongDocDataset, collate_batch
from models import build_model

logger = logging.getLogger(__name__)

DEVICE = torch.device('cuda' if torch.cuda.is_available() else 'cpu')


def parse_args():
    parser = argparse.ArgumentParser(description='Long document classification')
    parser.add_argument('--data', type=str, required=True, choices=sorted(DATASETS))
    parser.add_argument('--data_dir', type=str, default='data')
    parser.add_argument('--model_name', type=str, default='bert',
                        choices=['bert', 'bertplusrandom', 'bertplustextrank', 'tobert', 'longformer'])
    parser.add_argument('--pretrained', type=str, default=None,
                        help='HF model id; defaults to bert-base-uncased / allenai/longformer-base-4096')
    parser.add_argument('--max_len', type=int, default=4096)
    parser.add_argument('--batch_size', type=int, default=8)
    parser.add_argument('--grad_accum', type=int, default=1)
    parser.add_argument('--epochs', type=int, default=20)
    parser.add_argument('--lr', type=float, default=3e-5)
    parser.add_argument('--weight_decay', type=float, default=0.01)
    parser.add_argument('--warmup_ratio', type=float, default=0.1)
    parser.add_argument('--seed', type=int, default=42)
    parser.add_argument('--fp16', action='store_true', help='mixed precision with torch.cuda.amp')
    parser.add_argument('--num_workers', type=int, default=4)
    parser.add_argument('--patience', type=int, default=5)
    parser.add_argument('--output_dir', type=str, default='outputs')
    parser.add_argument('--eval_only', action='store_true')
    parser.add_argument('--checkpoint', type=str, default=None)
    return parser.parse_args()


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def compute_metrics(logits, labels, multilabel):
    if multilabel:
        preds = (torch.sigmoid(torch.as_tensor(logits)) > 0.5).int().numpy()
        return {'micro_f1': f1_score(labels, preds, average='micro', zero_division=0),
                'macro_f1': f1_score(labels, preds, average='macro', zero_division=0)}
    preds = np.argmax(logits, axis=-1)
    return {'accuracy': accuracy_score(labels, preds),
            'macro_f1': f1_score(labels, preds, average='macro')}


@torch.no_grad()
def evaluate(model, loader, multilabel, use_amp):
    model.eval()
    all_logits, all_labels = [], []
    for batch in tqdm(loader, desc='eval', leave=False):
        labels = batch.pop('labels')
        batch = {k: v.to(DEVICE) for k, v in batch.items()}
        with torch.cuda.amp.autocast(enabled=use_amp):
            logits = model(**batch)
        all_logits.append(logits.float().cpu())
        all_labels.append(labels)
    logits = torch.cat(all_logits).numpy()
    labels = torch.cat(all_labels).numpy()
    model.train()
    return compute_metrics(logits, labels, multilabel)


def train(args):
    set_seed(args.seed)
    info = DATASETS[args.data]
    pretrained = args.pretrained or ('allenai/longformer-base-4096' if args.model_name == 'longformer'
                                     else 'bert-base-uncased')
    tokenizer = AutoTokenizer.from_pretrained(pretrained)

    train_set = LongDocDataset(args.data_dir, args.data, 'train', tokenizer, args.max_len, args.model_name)
    dev_set = LongDocDataset(args.data_dir, args.data, 'dev', tokenizer, args.max_len, args.model_name)
    test_set = LongDocDataset(args.data_dir, args.data, 'test', tokenizer, args.max_len, args.model_name)

    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, collate_fn=collate_batch,
                              num_workers=args.num_workers)
    dev_loader = DataLoader(dev_set, batch_size=args.batch_size, shuffle=False, collate_fn=collate_batch,
                            num_workers=args.num_workers)
    test_loader = DataLoader(test_set, batch_size=args.batch_size, shuffle=False, collate_fn=collate_batch,
                             num_workers=args.num_workers)

    model = build_model(args.model_name, num_labels=info['num_labels'], multilabel=info['multilabel'],
                        model_name=pretrained)
    model.to(DEVICE)

    if args.checkpoint:
        state = torch.load(args.checkpoint, map_location='cuda:0')
        model.load_state_dict(state['model'])
        logger.info('loaded %s (epoch %s)', args.checkpoint, state.get('epoch'))

    loss_fn = nn.BCEWithLogitsLoss() if info['multilabel'] else nn.CrossEntropyLoss()

    if args.eval_only:
        metrics = evaluate(model, test_loader, info['multilabel'], args.fp16)
        print(json.dumps(metrics, indent=2))
        return metrics

    no_decay = ['bias', 'LayerNorm.weight']
    grouped = [
        {'params': [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
         'weight_decay': args.weight_decay},
        {'params': [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
         'weight_decay': 0.0},
    ]
    optimizer = AdamW(grouped, lr=args.lr)
    steps = len(train_loader) // args.grad_accum * args.epochs
    scheduler = get_linear_schedule_with_warmup(optimizer, int(args.warmup_ratio * steps), steps)
    scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)

    os.makedirs(args.output_dir, exist_ok=True)
    best, bad_epochs, step = -1.0, 0, 0
    key = 'micro_f1' if info['multilabel'] else 'accuracy'
    for epoch in range(args.epochs):
        model.train()
        t0 = time.time()
        running = 0.0
        for i, batch in enumerate(tqdm(train_loader, desc=f'epoch {epoch}')):
            labels = batch.pop('labels').to(DEVICE)
            batch = {k: v.to(DEVICE) for k, v in batch.items()}
            with torch.cuda.amp.autocast(enabled=args.fp16):
                logits = model(**batch)
                loss = loss_fn(logits, labels.float() if info['multilabel'] else labels)
                loss = loss / args.grad_accum
            scaler.scale(loss).backward()
            running += loss.item()
            if (i + 1) % args.grad_accum == 0:
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(optimizer)
                scaler.update()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
                step += 1
        logger.info('epoch %d: loss %.4f, %.1fs, peak mem %.2f GB', epoch, running / max(1, len(train_loader)),
                    time.time() - t0, torch.cuda.max_memory_allocated() / 2 ** 30)

        dev = evaluate(model, dev_loader, info['multilabel'], args.fp16)
        logger.info('epoch %d dev: %s', epoch, dev)
        if dev[key] > best:
            best, bad_epochs = dev[key], 0
            torch.save({'model': model.state_dict(), 'epoch': epoch, 'dev': dev},
                       os.path.join(args.output_dir, f'{args.data}_{args.model_name}_best.pt'))
        else:
            bad_epochs += 1
            if bad_epochs >= args.patience:
                logger.info('early stopping after %d epochs without improvement', bad_epochs)
                break

    state = torch.load(os.path.join(args.output_dir, f'{args.data}_{args.model_name}_best.pt'))
    model.load_state_dict(state['model'])
    test = evaluate(model, test_loader, info['multilabel'], args.fp16)
    logger.info('test: %s', test)
    with open(os.path.join(args.output_dir, f'{args.data}_{args.model_name}_results.json'), 'w') as f:
        json.dump({'dev_best': best, 'test': test, 'args': vars(args)}, f, indent=2)
    return test


if __name__ == '__main__':
    logging.basicConfig(format='%(asctime)s %(levelname)s %(message)s', level=logging.INFO)
    args = parse_args()
    logger.info('device: %s (%s)', DEVICE,
                torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'no GPU found')
    train(args)
