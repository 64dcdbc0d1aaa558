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
"""Train / evaluate a span-identification + NLI model on ContractNLI.

    python train.py ./data/conf_base.yml ./output/base
    python -m torch.distributed.launch --nproc_per_node 4 train.py ./data/conf_base.yml ./output/base
"""

import argparse
import json
import logging
import os
import random
import shutil

import numpy as np
import torch
import torch.distributed as dist
import yaml
from transformers import AutoConfig, AutoTokenizer

from contract_nli.conf import load_conf
from contract_nli.dataset.dataset import load_and_cache_examples
from contract_nli.model.identification_classification import \
    BertForIdentificationClassification, MODEL_TYPE_TO_CLASS
from contract_nli.trainer import Trainer

logger = logging.getLogger(__name__)


def set_seed(seed: int, n_gpu: int):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if n_gpu > 0:
        torch.cuda.manual_seed_all(seed)


def setup_device(conf: dict):
    """Returns (device, local_rank, n_gpu). Supports single process and torch.distributed.launch."""
    local_rank = int(os.environ.get('LOCAL_RANK', -1))
    if local_rank == -1:
        use_cuda = torch.cuda.is_available() and not conf.get('no_cuda', False)
        device = torch.device('cuda:0' if use_cuda else 'cpu')
        n_gpu = 1 if use_cuda else 0
    else:
        torch.cuda.set_device(local_rank)
        device = torch.device(f'cuda:{local_rank}')
        dist.init_process_group(backend='nccl', init_method='env://')
        n_gpu = 1
    return device, local_rank, n_gpu


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('conf', help='Configuration YAML file')
    parser.add_argument('output_dir', help='Output directory')
    parser.add_argument('--resume', default=None, help='Checkpoint directory to resume optimizer state from')
    parser.add_argument('--eval_only', action='store_true')
    args = parser.parse_args()

    conf = load_conf(args.conf)
    device, local_rank, n_gpu = setup_device(conf)
    is_main = local_rank in (-1, 0)

    logging.basicConfig(
        format='%(asctime)s - %(levelname)s - %(name)s -   %(message)s',
        datefmt='%m/%d/%Y %H:%M:%S',
        level=logging.INFO if is_main else logging.WARN)
    logger.warning('Process rank: %s, device: %s, n_gpu: %s, distributed training: %s, fp16: %s, bf16: %s',
                   local_rank, device, n_gpu, local_rank != -1, conf.get('fp16'), conf.get('bf16'))

    if conf.get('bf16') and not torch.cuda.is_bf16_supported():
        raise ValueError('bf16 was requested in the config but this GPU does not support bfloat16 '
                         '(Ampere or newer is required). Use fp16: true instead.')

    if is_main:
        os.makedirs(args.output_dir, exist_ok=True)
        shutil.copy(args.conf, os.path.join(args.output_dir, 'conf.yml'))

    set_seed(conf['seed'], n_gpu)

    if local_rank not in (-1, 0):
        dist.barrier()

    config = AutoConfig.from_pretrained(conf['model_name_or_path'], cache_dir=conf.get('cache_dir'))
    tokenizer = AutoTokenizer.from_pretrained(
        conf['model_name_or_path'], do_lower_case=conf['do_lower_case'], cache_dir=conf.get('cache_dir'),
        use_fast=False)
    model_class = MODEL_TYPE_TO_CLASS.get(config.model_type, BertForIdentificationClassification)
    model = model_class.from_pretrained(
        conf['model_name_or_path'], config=config, cache_dir=conf.get('cache_dir'),
        class_loss_weight=conf['class_loss_weight'], num_classes=3)

    if local_rank == 0:
        dist.barrier()

    model.to(device)

    train_dataset = None
    if not args.eval_only:
        train_dataset = load_and_cache_examples(
            conf['train_file'], local_rank=local_rank, tokenizer=tokenizer, evaluate=False,
            output_examples=False, max_seq_length=conf['max_seq_length'],
            doc_stride=conf.get('doc_stride', None), max_query_length=conf['max_query_length'],
            symbol_based_hypothesis=conf['symbol_based_hypothesis'],
            cache_dir=conf.get('cache_dir', '.'), threads=conf.get('threads', 1))
    dev_dataset, dev_examples, dev_features = load_and_cache_examples(
        conf['dev_file'], local_rank=local_rank, tokenizer=tokenizer, evaluate=True,
        output_examples=True, max_seq_length=conf['max_seq_length'],
        doc_stride=conf.get('doc_stride', None), max_query_length=conf['max_query_length'],
        symbol_based_hypothesis=conf['symbol_based_hypothesis'],
        cache_dir=conf.get('cache_dir', '.'), threads=conf.get('threads', 1))

    trainer = Trainer(conf, model, tokenizer, train_dataset or dev_dataset, dev_dataset, dev_examples,
                      dev_features, output_dir=args.output_dir, device=device, local_rank=local_rank, n_gpu=n_gpu)
    if args.resume is not None:
        trainer.load_state(args.resume)

    if not args.eval_only:
        trainer.train()

    if is_main:
        # Reload the best checkpoint written by the trainer and evaluate it on dev and test
        model = model_class.from_pretrained(args.output_dir, class_loss_weight=conf['class_loss_weight'],
                                            num_classes=3)
        model.to(device)
        trainer.model = model
        metrics = trainer.evaluate()
        logger.info('dev metrics: %s', json.dumps(metrics, indent=2))
        with open(os.path.join(args.output_dir, 'metrics.json'), 'w') as f:
            json.dump(metrics, f, indent=2)

        if conf.get('test_file'):
            test_dataset, test_examples, test_features = load_and_cache_examples(
                conf['test_file'], local_rank=-1, tokenizer=tokenizer, evaluate=True,
                output_examples=True, max_seq_length=conf['max_seq_length'],
                doc_stride=conf.get('doc_stride', None), max_query_length=conf['max_query_length'],
                symbol_based_hypothesis=conf['symbol_based_hypothesis'],
                cache_dir=conf.get('cache_dir', '.'), threads=conf.get('threads', 1))
            test_trainer = Trainer(conf, model, tokenizer, test_dataset, test_dataset, test_examples,
                                   test_features, output_dir=args.output_dir, device=device, n_gpu=n_gpu)
            test_metrics = test_trainer.evaluate()
            with open(os.path.join(args.output_dir, 'test_metrics.json'), 'w') as f:
                json.dump(test_metrics, f, indent=2)

    if local_rank != -1:
        dist.destroy_process_group()


if __name__ == '__main__':
    main()
