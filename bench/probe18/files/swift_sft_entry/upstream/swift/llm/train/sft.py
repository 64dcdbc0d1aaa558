# Copyright (c) Alibaba, Inc. and its affiliates.
import os
from functools import partial
from typing import Any, Dict, List, Optional, Union

import torch
from datasets import Dataset as HfDataset

from swift.plugin import extra_callbacks, get_loss_func, get_metric
from swift.trainers import TrainerFactory
from swift.utils import (append_to_jsonl, get_logger, get_model_parameter_info, is_master, plot_images,
                         stat_array, use_torchacc)
from ..argument import TrainArguments
from ..base import SwiftPipeline
from ..dataset import EncodePreprocessor, GetLengthPreprocessor, LazyLLMDataset, PackingPreprocessor, load_dataset
from ..infer import prepare_generation_config
from ..model import HfConfigFactory, get_model_arch
from ..utils import deep_getattr, dynamic_gradient_checkpointing
from .tuner import TunerMixin

logger = get_logger()


def get_max_cuda_memory(device_ids: Optional[List[int]] = None) -> float:
    if device_ids is None:
        n_gpu = torch.cuda.device_count()
        device_ids = list(range(n_gpu))
    mem = 0
    for device_id in device_ids:
        mem += torch.cuda.max_memory_reserved(device_id)
    return mem / 1024**3


class SwiftSft(SwiftPipeline, TunerMixin):
    args_class = TrainArguments
    args: args_class

    def __init__(self, args: Union[List[str], TrainArguments, None] = None) -> None:
        super().__init__(args)
        self.train_msg = {}
        self._prepare_model_tokenizer()
        self._prepare_template()
        self._prepare_callbacks()

    def _prepare_gradient_checkpointing(self):
        args = self.args
        HfConfigFactory.set_model_config_attr(self.model, 'use_cache', False)
        if args.gradient_checkpointing:
            self.model.supports_gradient_checkpointing = True
            dynamic_gradient_checkpointing(self.model)
            self.model.enable_input_require_grads()
        model_meta = self.model.model_meta
        model_arch = get_model_arch(model_meta.model_arch)
        if model_meta.is_multimodal and model_arch:
            for vision_tower_name in model_arch.vision_tower:
                vision_tower = deep_getattr(self.model, vision_tower_name)
                if hasattr(vision_tower, 'enable_input_require_grads'):
                    vision_tower.enable_input_require_grads()

    def _prepare_generation_config(self):
        args = self.args
        self.model.origin_generation_config = self.model.generation_config
        self.model.generation_config = prepare_generation_config(self.model.generation_config,
                                                                 args.get_request_config(), self.tokenizer)
        logger.info(f'model.generation_config: {self.model.generation_config}')

    def _prepare_model_tokenizer(self):
        args = self.args
        if args.packing or args.padding_free:
            # packing writes several samples into one row; only flash-attn varlen keeps them apart
            if args.attn_impl not in {'flash_attn', 'flash_attention_2'}:
                raise ValueError('`packing` / `padding_free` requires `--attn_impl flash_attn`.')
        if args.use_liger_kernel:
            from liger_kernel.transformers import apply_liger_kernel_to_qwen2
            apply_liger_kernel_to_qwen2(rope=True, rms_norm=True, swiglu=True, fused_linear_cross_entropy=True)
        self.model, self.processor = args.get_model_processor()
        if hasattr(self.model, 'hf_device_map'):
            logger.info(f'model.hf_device_map: {self.model.hf_device_map}')
        logger.info(f'model_info: {self.model.model_info}')
        if getattr(self.model, 'generation_config', None):
            self._prepare_generation_config()
        self._prepare_gradient_checkpointing()

    def _prepare_template(self) -> None:
        template = self.args.get_template(self.processor)
        if self.args.task_type == 'causal_lm':
            template.set_mode('train')
        if template.use_model:
            template.model = self.model
        self.template = template

    def _get_dataset(self):
        args = self.args
        dataset_kwargs = args.get_dataset_kwargs()
        train_dataset, val_dataset = load_dataset(
            args.dataset, split_dataset_ratio=args.split_dataset_ratio, shuffle=args.dataset_shuffle, **dataset_kwargs)
        return train_dataset, val_dataset

    def _prepare_callbacks(self):
        self.callbacks = list(extra_callbacks)

    def run(self):
        args = self.args
        train_dataset, val_dataset = self._get_dataset()
        train_dataset, val_dataset = self._encode_dataset(train_dataset, val_dataset)
        data_collator = partial(self.template.data_collator, padding_to=args.max_length if args.padding_free else None)
        self.model = self.prepare_model(args, self.model, template=self.template, train_dataset=train_dataset)
        logger.info(f'model: {self.model}')
        model_parameter_info = get_model_parameter_info(self.model)
        self.train_msg['model_parameter_info'] = model_parameter_info
        logger.info(f'model_parameter_info: {model_parameter_info}')

        trainer_cls = TrainerFactory.get_trainer_cls(args)
        trainer = trainer_cls(
            model=self.model,
            args=self.args.training_args,
            data_collator=data_collator,
            train_dataset=train_dataset,
            eval_dataset=val_dataset,
            callbacks=self.callbacks,
            template=self.template,
            **self._get_trainer_kwargs(),
        )
        return self.train(trainer)

    def _get_trainer_kwargs(self):
        args = self.args
        compute_loss_func = get_loss_func(args.loss_type) if args.loss_type else None
        compute_metrics, preprocess_logits_for_metrics = get_metric(args.metric) if args.metric else (None, None)
        return {
            'compute_metrics': compute_metrics,
            'preprocess_logits_for_metrics': preprocess_logits_for_metrics,
            'compute_loss_func': compute_loss_func,
        }

    def train(self, trainer):
        logging_path = os.path.join(trainer.args.output_dir, 'logging.jsonl')
        logger.info(f'The logging file will be saved in: {logging_path}')
        try:
            trainer.train(trainer.args.resume_from_checkpoint)
        finally:
            res = self._save_trainer_state(trainer)
        return res

    def _save_trainer_state(self, trainer):
        training_args = trainer.args
        state = trainer.state
        self.train_msg['last_model_checkpoint'] = state.last_model_checkpoint
        self.train_msg['best_model_checkpoint'] = state.best_model_checkpoint
        self.train_msg['memory'] = f'{get_max_cuda_memory():.2f}GiB'
        if is_master():
            if self.args.create_checkpoint_symlink and state.best_model_checkpoint:
                os.symlink(state.best_model_checkpoint, os.path.join(training_args.output_dir, 'best'))
            images_dir = os.path.join(training_args.output_dir, 'images')
            logger.info(f'images_dir: {images_dir}')
            plot_images(images_dir, training_args.logging_dir, ['train/loss'], 0.9)
            append_to_jsonl(os.path.join(training_args.output_dir, 'logging.jsonl'), self.train_msg)
        torch.cuda.empty_cache()
        return self.train_msg

    def _encode_dataset(self, train_dataset, val_dataset):
        template = self.template
        args = self.args
        is_grpo = hasattr(args, 'rlhf_type') and args.rlhf_type == 'grpo'
        datasets = [train_dataset, val_dataset]
        if not is_grpo:
            if args.lazy_tokenize:
                datasets = [LazyLLMDataset(ds, template.encode, strict=args.strict) if ds is not None else None
                            for ds in datasets]
            else:
                preprocessor_cls = PackingPreprocessor if args.packing else EncodePreprocessor
                datasets = [preprocessor_cls(template=template)(ds, num_proc=args.dataset_num_proc) if ds is not None
                            else None for ds in datasets]
            for i, dataset in enumerate(datasets):
                if dataset is None or not hasattr(dataset, '__len__'):
                    continue
                length = GetLengthPreprocessor()(dataset, num_proc=args.dataset_num_proc)['length']
                _, stat_str = stat_array(length)
                logger.info(f'Dataset Token Length: {stat_str}')
        return datasets


def sft_main(args: Union[List[str], TrainArguments, None] = None):
    return SwiftSft(args).main()
