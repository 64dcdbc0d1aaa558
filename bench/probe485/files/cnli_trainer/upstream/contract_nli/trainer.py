# Copyright (c) 2021, Hitachi America Ltd. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

import json
import logging
import os
import time
from collections import defaultdict
from typing import Dict, List, Optional

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm
from transformers import AdamW, get_linear_schedule_with_warmup

from contract_nli.dataset.loader import build_dataloader
from contract_nli.evaluation import evaluate_all
from contract_nli.postprocess import IdentificationClassificationResult, compute_predictions_logits

logger = logging.getLogger(__name__)


def _to_device(batch: Dict[str, torch.Tensor], device) -> Dict[str, torch.Tensor]:
    return {k: (v.to(device, non_blocking=True) if isinstance(v, torch.Tensor) else v)
            for k, v in batch.items()}


class Trainer(object):
    """Minimal training loop for span identification + NLI classification on ContractNLI.

    Mirrors the structure of HuggingFace's run_squad.py but keeps the two heads' losses separate so that
    they can be weighted (``class_loss_weight``) and logged independently.
    """

    def __init__(self, conf: dict, model, tokenizer, train_dataset, dev_dataset, dev_examples, dev_features,
                 output_dir: str, device: torch.device, local_rank: int = -1, n_gpu: int = 1):
        self.conf = conf
        self.model = model
        self.tokenizer = tokenizer
        self.train_dataset = train_dataset
        self.dev_dataset = dev_dataset
        self.dev_examples = dev_examples
        self.dev_features = dev_features
        self.output_dir = output_dir
        self.device = device
        self.local_rank = local_rank
        self.n_gpu = n_gpu
        self.fp16 = conf.get('fp16', False)
        self.bf16 = conf.get('bf16', False)
        self.is_main = local_rank in (-1, 0)
        self.tb_writer = SummaryWriter(os.path.join(output_dir, 'tb')) if self.is_main else None
        self.global_step = 0
        self.best_metric = -np.inf

        self.train_loader = build_dataloader(
            train_dataset, batch_size=conf['per_gpu_train_batch_size'], shuffle=True,
            distributed=local_rank != -1, num_workers=conf.get('num_workers', 4))
        self.dev_loader = build_dataloader(
            dev_dataset, batch_size=conf['per_gpu_eval_batch_size'], shuffle=False,
            distributed=False, num_workers=conf.get('num_workers', 4))

        self.t_total = (len(self.train_loader) // conf['gradient_accumulation_steps']) * conf['num_epochs']
        self.optimizer, self.scheduler = self._build_optimizer()

        # Native AMP. bf16 does not need loss scaling, fp16 does.
        self.amp_dtype = torch.bfloat16 if self.bf16 else torch.float16
        self.scaler = torch.cuda.amp.GradScaler(enabled=self.fp16)

        if local_rank != -1:
            self.model = DistributedDataParallel(
                self.model, device_ids=[local_rank], output_device=local_rank,
                find_unused_parameters=True)

    def _build_optimizer(self):
        no_decay = ['bias', 'LayerNorm.weight']
        params = [
            {'params': [p for n, p in self.model.named_parameters() if not any(nd in n for nd in no_decay)],
             'weight_decay': self.conf['weight_decay']},
            {'params': [p for n, p in self.model.named_parameters() if any(nd in n for nd in no_decay)],
             'weight_decay': 0.0},
        ]
        optimizer = AdamW(params, lr=self.conf['learning_rate'], eps=self.conf['adam_epsilon'])
        scheduler = get_linear_schedule_with_warmup(
            optimizer, num_warmup_steps=int(self.conf['warmup_ratio'] * self.t_total),
            num_training_steps=self.t_total)
        return optimizer, scheduler

    def _log(self, values: Dict[str, float]):
        if self.tb_writer is None:
            return
        for k, v in values.items():
            self.tb_writer.add_scalar(k, v, self.global_step)

    def train(self):
        conf = self.conf
        logger.info('***** Running training *****')
        logger.info('  Num examples = %d', len(self.train_dataset))
        logger.info('  Num Epochs = %d', conf['num_epochs'])
        logger.info('  Instantaneous batch size per GPU = %d', conf['per_gpu_train_batch_size'])
        logger.info('  Total optimization steps = %d', self.t_total)

        self.model.zero_grad()
        running = defaultdict(float)
        for epoch in range(conf['num_epochs']):
            if self.local_rank != -1:
                self.train_loader.sampler.set_epoch(epoch)
            self.model.train()
            epoch_start = time.time()
            it = tqdm(self.train_loader, desc=f'Epoch {epoch}', disable=not self.is_main)
            for step, batch in enumerate(it):
                batch = _to_device(batch, self.device)
                with torch.cuda.amp.autocast(enabled=self.fp16 or self.bf16, dtype=self.amp_dtype):
                    outputs = self.model(**batch)
                    loss = outputs.loss
                    if self.n_gpu > 1:
                        loss = loss.mean()
                    loss = loss / conf['gradient_accumulation_steps']

                self.scaler.scale(loss).backward()
                running['loss'] += loss.item()
                running['loss_cls'] += outputs.loss_cls.mean().item() if outputs.loss_cls is not None else 0.0
                running['loss_span'] += outputs.loss_span.mean().item() if outputs.loss_span is not None else 0.0

                if (step + 1) % conf['gradient_accumulation_steps'] == 0:
                    self.scaler.unscale_(self.optimizer)
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), conf['max_grad_norm'])
                    self.scaler.step(self.optimizer)
                    self.scaler.update()
                    self.scheduler.step()
                    self.model.zero_grad()
                    self.global_step += 1

                    if self.global_step % conf['logging_steps'] == 0:
                        values = {k: v / conf['logging_steps'] for k, v in running.items()}
                        values['lr'] = self.scheduler.get_last_lr()[0]
                        values['max_mem_gb'] = torch.cuda.max_memory_allocated(self.device) / 1024 ** 3
                        self._log(values)
                        it.set_postfix(loss=values['loss'])
                        running = defaultdict(float)

                    if conf.get('eval_steps') and self.global_step % conf['eval_steps'] == 0:
                        self._evaluate_and_save()

            logger.info('Epoch %d took %.1f s', epoch, time.time() - epoch_start)
            if not conf.get('eval_steps'):
                self._evaluate_and_save()

        if self.tb_writer is not None:
            self.tb_writer.close()

    def _evaluate_and_save(self):
        if not self.is_main:
            if self.local_rank != -1:
                dist.barrier()
            return
        metrics = self.evaluate()
        self._log({f'dev/{k}': v for k, v in metrics.items() if isinstance(v, (int, float))})
        key = self.conf.get('metric_for_best_model', 'class_f1_mean')
        if metrics[key] > self.best_metric:
            self.best_metric = metrics[key]
            self.save(self.output_dir)
            logger.info('New best %s = %.4f at step %d', key, metrics[key], self.global_step)
        # Release cached blocks held by the evaluation activations before resuming training
        torch.cuda.empty_cache()
        if self.local_rank != -1:
            dist.barrier()

    @torch.no_grad()
    def evaluate(self) -> Dict[str, float]:
        model = self.model.module if hasattr(self.model, 'module') else self.model
        model.eval()
        all_results: List[IdentificationClassificationResult] = []
        start = time.time()
        for batch in tqdm(self.dev_loader, desc='Evaluating', disable=not self.is_main):
            feature_indices = batch.pop('feature_indices')
            batch = _to_device(batch, self.device)
            batch.pop('class_labels', None)
            batch.pop('span_labels', None)
            with torch.autocast('cuda', enabled=self.fp16 or self.bf16, dtype=self.amp_dtype):
                outputs = model(**batch)
            class_logits = outputs.class_logits.float().cpu().numpy()
            span_logits = outputs.span_logits.float().cpu().numpy()
            for i, feature_index in enumerate(feature_indices):
                feature = self.dev_features[feature_index.item()]
                all_results.append(IdentificationClassificationResult(
                    unique_id=int(feature.unique_id),
                    class_logits=class_logits[i],
                    span_logits=span_logits[i]))
        logger.info('Evaluation done in %.1f s', time.time() - start)
        preds = compute_predictions_logits(self.dev_examples, self.dev_features, all_results)
        metrics = evaluate_all(self.dev_examples, preds, [1, 3, 5, 8, 10, 15, 20, 30, 40, 50])
        model.train()
        return metrics

    def save(self, output_dir: str):
        os.makedirs(output_dir, exist_ok=True)
        model = self.model.module if hasattr(self.model, 'module') else self.model
        model.save_pretrained(output_dir)
        self.tokenizer.save_pretrained(output_dir)
        torch.save({'optimizer': self.optimizer.state_dict(),
                    'scheduler': self.scheduler.state_dict(),
                    'scaler': self.scaler.state_dict(),
                    'global_step': self.global_step},
                   os.path.join(output_dir, 'trainer_state.pt'))
        with open(os.path.join(output_dir, 'conf.json'), 'w') as f:
            json.dump(self.conf, f, indent=2)

    def load_state(self, checkpoint_dir: str):
        state = torch.load(os.path.join(checkpoint_dir, 'trainer_state.pt'), map_location='cpu')
        self.optimizer.load_state_dict(state['optimizer'])
        self.scheduler.load_state_dict(state['scheduler'])
        self.scaler.load_state_dict(state['scaler'])
        self.global_step = state['global_step']
