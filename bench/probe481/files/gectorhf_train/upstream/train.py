import argparse
import json
import math
import os
import random

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from tqdm import tqdm
from transformers import AutoTokenizer, get_scheduler

from gector import GECToR, GECToRConfig, load_dataset, build_vocab, load_vocab_from_config


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0


def setup_distributed(args):
    if 'LOCAL_RANK' not in os.environ:
        args.local_rank = -1
        args.world_size = 1
        return torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    args.local_rank = int(os.environ['LOCAL_RANK'])
    args.world_size = int(os.environ['WORLD_SIZE'])
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group(backend='nccl', init_method='env://')
    dist.barrier()
    return torch.device('cuda', args.local_rank)


def train(model, loader, optimizer, lr_scheduler, scaler, device, args, epoch, step_scheduler=True):
    log = {'loss': 0, 'accuracy': 0, 'accuracy_d': 0}
    model.train()
    if isinstance(loader.sampler, DistributedSampler):
        loader.sampler.set_epoch(epoch)
    pbar = tqdm(loader, total=len(loader), disable=not is_main_process())
    for step, batch in enumerate(pbar):
        batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
        with torch.cuda.amp.autocast(enabled=args.amp):
            outputs = model(**batch)
            loss = outputs.loss / args.accumulation
        scaler.scale(loss).backward()
        if (step + 1) % args.accumulation == 0 or step + 1 == len(loader):
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            if step_scheduler:
                lr_scheduler.step()
        log['loss'] += loss.item() * args.accumulation
        log['accuracy'] += outputs.accuracy.item()
        log['accuracy_d'] += outputs.accuracy_d.item()
        pbar.set_description(f"[Epoch {epoch}] loss {loss.item() * args.accumulation:.4f}")
    return {k: v / len(loader) for k, v in log.items()}


@torch.no_grad()
def valid(model, loader, device, args):
    log = {'loss': 0, 'accuracy': 0, 'accuracy_d': 0}
    model.eval()
    for batch in tqdm(loader, disable=not is_main_process()):
        batch = {k: v.to(device) for k, v in batch.items()}
        with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=args.amp):
            outputs = model(**batch)
        log['loss'] += outputs.loss.item()
        log['accuracy'] += outputs.accuracy.item()
        log['accuracy_d'] += outputs.accuracy_d.item()
    return {k: v / len(loader) for k, v in log.items()}


def get_loader(dataset, batch_size, shuffle, args, collate_fn):
    sampler = None
    if args.local_rank != -1:
        sampler = DistributedSampler(dataset, shuffle=shuffle)
        shuffle = False
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=shuffle,
        sampler=sampler,
        num_workers=args.num_workers,
        pin_memory=True,
        collate_fn=collate_fn,
    )


def main(args):
    device = setup_distributed(args)
    set_seed(args.seed)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    tokenizer = AutoTokenizer.from_pretrained(args.model_id)
    if args.restore_dir is not None:
        label2id, d_label2id = load_vocab_from_config(os.path.join(args.restore_dir, 'config.json'))
    else:
        label2id, d_label2id = build_vocab(
            args.train_file,
            n_max_labels=args.n_max_labels,
            n_max_d_labels=2,
        )
    train_dataset = load_dataset(
        args.train_file, tokenizer, label2id, d_label2id,
        batch_size=args.batch_size, max_length=args.max_len,
        delimeter=args.delimeter, additional_delimeter=args.additional_delimeter,
    )
    valid_dataset = load_dataset(
        args.valid_file, tokenizer, label2id, d_label2id,
        batch_size=args.batch_size, max_length=args.max_len,
        delimeter=args.delimeter, additional_delimeter=args.additional_delimeter,
    )
    if is_main_process():
        print('# instances of train:', len(train_dataset))
        print('# instances of valid:', len(valid_dataset))

    if args.restore_dir is not None:
        model = GECToR.from_pretrained(args.restore_dir)
    else:
        config = GECToRConfig(
            model_id=args.model_id,
            label2id=label2id,
            id2label={v: k for k, v in label2id.items()},
            d_label2id=d_label2id,
            p_dropout=args.p_dropout,
            max_length=args.max_len,
            label_smoothing=args.label_smoothing,
            has_add_pooling_layer=False,
        )
        model = GECToR(config=config)
    model = model.cuda()
    if args.local_rank != -1:
        model = DDP(model, device_ids=[args.local_rank], output_device=args.local_rank,
                    find_unused_parameters=False)
    raw_model = model.module if hasattr(model, 'module') else model

    train_loader = get_loader(train_dataset, args.batch_size, True, args, train_dataset.collate_fn)
    valid_loader = get_loader(valid_dataset, args.batch_size, False, args, valid_dataset.collate_fn)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, fused=torch.cuda.is_available())
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)
    num_training_steps = math.ceil(len(train_loader) / args.accumulation) * args.n_epochs
    lr_scheduler = get_scheduler(
        args.lr_scheduler_type,
        optimizer=optimizer,
        num_warmup_steps=args.num_warmup_steps,
        num_training_steps=num_training_steps,
    )

    os.makedirs(os.path.join(args.save_dir, 'best'), exist_ok=True)
    os.makedirs(os.path.join(args.save_dir, 'last'), exist_ok=True)
    max_acc = -1
    logs = {'argparse': vars(args)}
    for e in range(args.n_epochs):
        if e < args.n_cold_epochs:
            raw_model.tune_bert(False)
            train_log = train(model, train_loader, optimizer, lr_scheduler, scaler, device, args, e,
                              step_scheduler=False)
        else:
            raw_model.tune_bert(True)
            train_log = train(model, train_loader, optimizer, lr_scheduler, scaler, device, args, e)
        valid_log = valid(model, valid_loader, device, args)
        logs[f'Epoch {e}'] = {'train_log': train_log, 'valid_log': valid_log}
        if is_main_process():
            print(f'Epoch {e}: train {train_log} valid {valid_log}')
            print(f'max memory: {torch.cuda.max_memory_allocated() / 2 ** 30:.2f} GiB')
            if valid_log['accuracy'] > max_acc:
                raw_model.save_pretrained(os.path.join(args.save_dir, 'best'))
                tokenizer.save_pretrained(os.path.join(args.save_dir, 'best'))
                max_acc = valid_log['accuracy']
                logs['max_acc_epoch'] = e
            raw_model.save_pretrained(os.path.join(args.save_dir, 'last'))
            tokenizer.save_pretrained(os.path.join(args.save_dir, 'last'))
            with open(os.path.join(args.save_dir, 'log.json'), 'w') as fp:
                json.dump(logs, fp, indent=2)
        torch.cuda.reset_peak_memory_stats()
    if args.local_rank != -1:
        dist.destroy_process_group()


def get_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument('--train_file', required=True)
    parser.add_argument('--valid_file', required=True)
    parser.add_argument('--model_id', default='bert-base-cased')
    parser.add_argument('--batch_size', type=int, default=16)
    parser.add_argument('--delimeter', default='SEPL|||SEPR')
    parser.add_argument('--additional_delimeter', default='SEPL__SEPR')
    parser.add_argument('--restore_dir')
    parser.add_argument('--max_len', type=int, default=80)
    parser.add_argument('--n_max_labels', type=int, default=5000)
    parser.add_argument('--n_epochs', type=int, default=10)
    parser.add_argument('--n_cold_epochs', type=int, default=2)
    parser.add_argument('--p_dropout', type=float, default=0.0)
    parser.add_argument('--lr', type=float, default=1e-5)
    parser.add_argument('--accumulation', type=int, default=1)
    parser.add_argument('--max_grad_norm', type=float, default=1.0)
    parser.add_argument('--label_smoothing', type=float, default=0.0)
    parser.add_argument('--num_warmup_steps', type=int, default=500)
    parser.add_argument('--lr_scheduler_type', default='constant')
    parser.add_argument('--num_workers', type=int, default=4)
    parser.add_argument('--amp', action='store_true', help='mixed precision (fp16) on the GPU')
    parser.add_argument('--save_dir', default='outputs/sample')
    parser.add_argument('--seed', type=int, default=10)
    return parser


if __name__ == '__main__':
    parser = get_parser()
    args = parser.parse_args()
    main(args)
