"""Fine-tune Qwen2-1.5B into CAD-Recode on procedurally generated CadQuery programs.

    torchrun --nproc_per_node 8 train.py --config configs/train.yaml
"""
import os
import pickle
import random
import argparse
import yaml
import numpy as np
import torch
from torch.utils.data import Dataset
from transformers import AutoTokenizer, Trainer, TrainingArguments, set_seed
from cad_recode.model import CADRecode


class CadRecodeDataset(Dataset):
    def __init__(self, root, split, tokenizer, n_points=256, noise_std=0.01, max_code_len=1024):
        with open(os.path.join(root, f'{split}.pkl'), 'rb') as f:
            self.annotations = pickle.load(f)
        self.root = root
        self.split = split
        self.tokenizer = tokenizer
        self.n_points = n_points
        self.noise_std = noise_std
        self.max_code_len = max_code_len

    def __len__(self):
        return len(self.annotations)

    def __getitem__(self, index):
        item = self.annotations[index]
        points = np.load(os.path.join(self.root, item['point_cloud']))
        ids = np.random.choice(len(points), self.n_points, replace=len(points) < self.n_points)
        points = points[ids].astype(np.float32)
        if self.split == 'train' and random.random() < 0.5:
            points = points + np.random.normal(0, self.noise_std, points.shape).astype(np.float32)
        with open(os.path.join(self.root, item['py_path'])) as f:
            code = f.read()
        code_ids = self.tokenizer(code, truncation=True, max_length=self.max_code_len)['input_ids']
        return {'point_cloud': points, 'code_ids': code_ids}


class Collator:
    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.start_id = tokenizer('<|im_start|>')['input_ids'][0]
        self.end_id = tokenizer('<|endoftext|>')['input_ids'][0]

    def __call__(self, batch):
        n_points = len(batch[0]['point_cloud'])
        max_len = max(len(b['code_ids']) for b in batch) + 2
        input_ids, attention_mask, labels = [], [], []
        for b in batch:
            code = [self.start_id] + b['code_ids'] + [self.end_id]
            pad = max_len - len(code)
            input_ids.append([self.tokenizer.pad_token_id] * n_points + code + [self.tokenizer.pad_token_id] * pad)
            attention_mask.append([-1] * n_points + [1] * len(code) + [0] * pad)
            labels.append([-100] * (n_points + 1) + code[1:] + [-100] * pad)
        return {
            'input_ids': torch.tensor(input_ids),
            'attention_mask': torch.tensor(attention_mask),
            'labels': torch.tensor(labels),
            'point_cloud': torch.tensor(np.stack([b['point_cloud'] for b in batch])),
        }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--config', type=str, default='configs/train.yaml')
    args = parser.parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)

    set_seed(cfg['seed'])
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    tokenizer = AutoTokenizer.from_pretrained(cfg['llm'], pad_token='<|im_end|>', padding_side='left')
    model = CADRecode.from_pretrained(
        cfg['llm'],
        torch_dtype=torch.bfloat16,
        attn_implementation=cfg['attn_implementation'])
    if cfg.get('gradient_checkpointing', False):
        model.gradient_checkpointing_enable()

    train_set = CadRecodeDataset(cfg['data_root'], 'train', tokenizer, n_points=cfg['n_points'])
    val_set = CadRecodeDataset(cfg['data_root'], 'val', tokenizer, n_points=cfg['n_points'])

    training_args = TrainingArguments(
        output_dir=cfg['output_dir'],
        per_device_train_batch_size=cfg['batch_size'],
        per_device_eval_batch_size=cfg['batch_size'],
        gradient_accumulation_steps=cfg.get('grad_accum', 1),
        learning_rate=float(cfg['lr']),
        weight_decay=0.01,
        warmup_steps=cfg['warmup_steps'],
        max_steps=cfg['max_steps'],
        lr_scheduler_type='cosine',
        bf16=True,
        tf32=True,
        optim=cfg.get('optim', 'adamw_torch_fused'),
        logging_steps=50,
        eval_strategy='steps',
        eval_steps=cfg['eval_steps'],
        save_steps=cfg['save_steps'],
        save_total_limit=3,
        dataloader_num_workers=cfg['num_workers'],
        dataloader_pin_memory=True,
        ddp_backend=cfg['ddp_backend'],
        ddp_find_unused_parameters=False,
        remove_unused_columns=False,
        report_to='tensorboard')

    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=train_set,
        eval_dataset=val_set,
        data_collator=Collator(tokenizer))
    trainer.train(resume_from_checkpoint=cfg.get('resume', None))
    trainer.save_model(os.path.join(cfg['output_dir'], 'final'))
    tokenizer.save_pretrained(os.path.join(cfg['output_dir'], 'final'))


if __name__ == '__main__':
    main()
