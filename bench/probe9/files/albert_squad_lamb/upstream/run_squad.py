# coding=utf-8
"""Fine-tune ALBERT / XLNet on SQuAD v1.1 / v2.0 with LAMB and apex mixed precision.

    python -m torch.distributed.launch --nproc_per_node=8 run_squad.py --model_type albert \
        --model_name_or_path albert-xxlarge-v2 --do_train --do_predict --fp16 --train_file train-v2.0.json
"""
import argparse
import collections
import json
import logging
import os
import random
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, RandomSampler, SequentialSampler, TensorDataset
from torch.utils.data.distributed import DistributedSampler
from tqdm import tqdm

from apex import amp
from apex.optimizers import FusedLAMB
from apex.parallel import DistributedDataParallel as DDP

from transformers import (AlbertConfig, AlbertForQuestionAnswering, AlbertTokenizer,
                          XLNetConfig, XLNetForQuestionAnswering, XLNetTokenizer)
from utils_squad import (read_squad_examples, convert_examples_to_features, RawResult, write_predictions,
                         RawResultExtended, write_predictions_extended)

logger = logging.getLogger(__name__)

MODEL_CLASSES = {
    'albert': (AlbertConfig, AlbertForQuestionAnswering, AlbertTokenizer),
    'xlnet': (XLNetConfig, XLNetForQuestionAnswering, XLNetTokenizer),
}


def set_seed(args):
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    if args.n_gpu > 0:
        torch.cuda.manual_seed_all(args.seed)


def to_list(tensor):
    return tensor.detach().cpu().tolist()


def warmup_poly(step, total, warmup=0.01, degree=0.5):
    x = step / total
    if x < warmup:
        return x / warmup
    return max((1.0 - x) / (1.0 - warmup), 0.0) ** degree


def load_and_cache_examples(args, tokenizer, evaluate=False):
    input_file = args.predict_file if evaluate else args.train_file
    cached = os.path.join(os.path.dirname(input_file), 'cached_{}_{}_{}'.format(
        'dev' if evaluate else 'train', args.model_type, str(args.max_seq_length)))
    if os.path.exists(cached) and not args.overwrite_cache:
        features = torch.load(cached)
        examples = read_squad_examples(input_file=input_file, is_training=not evaluate,
                                       version_2_with_negative=args.version_2_with_negative) if evaluate else None
    else:
        examples = read_squad_examples(input_file=input_file, is_training=not evaluate,
                                       version_2_with_negative=args.version_2_with_negative)
        features = convert_examples_to_features(examples=examples, tokenizer=tokenizer,
                                                max_seq_length=args.max_seq_length, doc_stride=args.doc_stride,
                                                max_query_length=args.max_query_length, is_training=not evaluate,
                                                cls_token_at_end=(args.model_type == 'xlnet'),
                                                pad_on_left=(args.model_type == 'xlnet'))
        if args.local_rank in [-1, 0]:
            torch.save(features, cached)

    all_input_ids = torch.tensor([f.input_ids for f in features], dtype=torch.long)
    all_input_mask = torch.tensor([f.input_mask for f in features], dtype=torch.long)
    all_segment_ids = torch.tensor([f.segment_ids for f in features], dtype=torch.long)
    all_cls_index = torch.tensor([f.cls_index for f in features], dtype=torch.long)
    all_p_mask = torch.tensor([f.p_mask for f in features], dtype=torch.float)
    if evaluate:
        all_example_index = torch.arange(all_input_ids.size(0), dtype=torch.long)
        dataset = TensorDataset(all_input_ids, all_input_mask, all_segment_ids, all_example_index,
                                all_cls_index, all_p_mask)
    else:
        all_start_positions = torch.tensor([f.start_position for f in features], dtype=torch.long)
        all_end_positions = torch.tensor([f.end_position for f in features], dtype=torch.long)
        dataset = TensorDataset(all_input_ids, all_input_mask, all_segment_ids, all_start_positions,
                                all_end_positions, all_cls_index, all_p_mask)
    return (dataset, examples, features) if evaluate else dataset


def train(args, train_dataset, model, device):
    args.train_batch_size = args.per_gpu_train_batch_size
    sampler = RandomSampler(train_dataset) if args.local_rank == -1 else DistributedSampler(train_dataset)
    loader = DataLoader(train_dataset, sampler=sampler, batch_size=args.train_batch_size,
                        num_workers=4, pin_memory=True)
    t_total = len(loader) // args.gradient_accumulation_steps * args.num_train_epochs

    no_decay = ['bias', 'LayerNorm.weight', 'LayerNorm.bias']
    params = [
        {'params': [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
         'weight_decay': 0.01},
        {'params': [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], 'weight_decay': 0.0},
    ]
    optimizer = FusedLAMB(params, lr=args.learning_rate, betas=(0.9, 0.999), eps=1e-6, max_grad_norm=1.0)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: warmup_poly(s, t_total, args.warmup_proportion))

    if args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O2", keep_batchnorm_fp32=False,
                                          loss_scale="dynamic")
    if args.local_rank != -1:
        model = DDP(model)

    global_step = 0
    model.train()
    for epoch in range(int(args.num_train_epochs)):
        if args.local_rank != -1:
            sampler.set_epoch(epoch)
        for step, batch in enumerate(tqdm(loader, desc="Iteration", disable=args.local_rank not in [-1, 0])):
            batch = tuple(t.to(device, non_blocking=True) for t in batch)
            inputs = {'input_ids': batch[0], 'attention_mask': batch[1], 'token_type_ids': batch[2],
                      'start_positions': batch[3], 'end_positions': batch[4]}
            if args.model_type == 'xlnet':
                inputs.update({'cls_index': batch[5], 'p_mask': batch[6]})
            loss = model(**inputs)[0]
            if args.gradient_accumulation_steps > 1:
                loss = loss / args.gradient_accumulation_steps
            if args.fp16:
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            if (step + 1) % args.gradient_accumulation_steps == 0:
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
                global_step += 1
                if global_step % 100 == 0 and args.local_rank in [-1, 0]:
                    logger.info("step %d loss %.4f lr %.3e", global_step, loss.item(), scheduler.get_last_lr()[0])
    return global_step


def evaluate(args, model, tokenizer, device):
    dataset, examples, features = load_and_cache_examples(args, tokenizer, evaluate=True)
    loader = DataLoader(dataset, sampler=SequentialSampler(dataset), batch_size=args.predict_batch_size)
    model.eval()
    all_results = []
    infer_time = 0.0
    for batch in tqdm(loader, desc="Evaluating"):
        batch = tuple(t.to(device) for t in batch)
        with torch.no_grad():
            inputs = {'input_ids': batch[0], 'attention_mask': batch[1], 'token_type_ids': batch[2]}
            example_indices = batch[3]
            if args.model_type == 'xlnet':
                inputs.update({'cls_index': batch[4], 'p_mask': batch[5]})
            t0 = time.time()
            outputs = model(**inputs)
            torch.cuda.synchronize()
            infer_time += time.time() - t0
        for i, example_index in enumerate(example_indices):
            eval_feature = features[example_index.item()]
            unique_id = int(eval_feature.unique_id)
            if args.model_type == 'xlnet':
                result = RawResultExtended(unique_id=unique_id,
                                           start_top_log_probs=to_list(outputs[0][i]),
                                           start_top_index=to_list(outputs[1][i]),
                                           end_top_log_probs=to_list(outputs[2][i]),
                                           end_top_index=to_list(outputs[3][i]),
                                           cls_logits=to_list(outputs[4][i]))
            else:
                result = RawResult(unique_id=unique_id, start_logits=to_list(outputs[0][i]),
                                   end_logits=to_list(outputs[1][i]))
            all_results.append(result)
    logger.info("inference throughput: %.1f seq/s", len(dataset) / max(infer_time, 1e-9))

    output_prediction_file = os.path.join(args.output_dir, "predictions.json")
    output_nbest_file = os.path.join(args.output_dir, "nbest_predictions.json")
    output_null_log_odds_file = os.path.join(args.output_dir, "null_odds.json")
    if args.model_type == 'xlnet':
        write_predictions_extended(examples, features, all_results, args.n_best_size, args.max_answer_length,
                                   output_prediction_file, output_nbest_file, output_null_log_odds_file,
                                   args.predict_file, model.config.start_n_top, model.config.end_n_top,
                                   args.version_2_with_negative, tokenizer, False)
    else:
        write_predictions(examples, features, all_results, args.n_best_size, args.max_answer_length, True,
                          output_prediction_file, output_nbest_file, output_null_log_odds_file, False,
                          args.version_2_with_negative, args.null_score_diff_threshold)
    return output_prediction_file


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_type", default='albert', choices=list(MODEL_CLASSES))
    parser.add_argument("--model_name_or_path", default='albert-base-v2', type=str)
    parser.add_argument("--output_dir", default='squad_out', type=str)
    parser.add_argument("--train_file", default=None, type=str)
    parser.add_argument("--predict_file", default=None, type=str)
    parser.add_argument('--version_2_with_negative', action='store_true')
    parser.add_argument('--null_score_diff_threshold', type=float, default=0.0)
    parser.add_argument("--max_seq_length", default=384, type=int)
    parser.add_argument("--doc_stride", default=128, type=int)
    parser.add_argument("--max_query_length", default=64, type=int)
    parser.add_argument("--do_train", action='store_true')
    parser.add_argument("--do_predict", action='store_true')
    parser.add_argument("--per_gpu_train_batch_size", default=12, type=int)
    parser.add_argument("--predict_batch_size", default=64, type=int)
    parser.add_argument("--learning_rate", default=3e-5, type=float)
    parser.add_argument("--num_train_epochs", default=2.0, type=float)
    parser.add_argument("--warmup_proportion", default=0.1, type=float)
    parser.add_argument('--gradient_accumulation_steps', type=int, default=1)
    parser.add_argument("--n_best_size", default=20, type=int)
    parser.add_argument("--max_answer_length", default=30, type=int)
    parser.add_argument("--no_cuda", action='store_true')
    parser.add_argument('--overwrite_cache', action='store_true')
    parser.add_argument('--seed', type=int, default=42)
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument('--fp16', action='store_true')
    args = parser.parse_args()

    if args.local_rank == -1 or args.no_cuda:
        device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")
        args.n_gpu = 1 if device.type == 'cuda' else 0
    else:
        torch.cuda.set_device(args.local_rank)
        device = torch.device("cuda", args.local_rank)
        torch.distributed.init_process_group(backend='nccl', init_method='env://')
        args.n_gpu = 1

    logging.basicConfig(format='%(asctime)s - %(levelname)s - %(name)s - %(message)s',
                        level=logging.INFO if args.local_rank in [-1, 0] else logging.WARN)
    logger.info("device: {} n_gpu: {}, distributed training: {}, 16-bits training: {}".format(
        device, args.n_gpu, bool(args.local_rank != -1), args.fp16))
    set_seed(args)
    os.makedirs(args.output_dir, exist_ok=True)

    config_class, model_class, tokenizer_class = MODEL_CLASSES[args.model_type]
    config = config_class.from_pretrained(args.model_name_or_path)
    tokenizer = tokenizer_class.from_pretrained(args.model_name_or_path, do_lower_case=True)
    model = model_class.from_pretrained(args.model_name_or_path, config=config)
    model.to(device)

    if args.do_train:
        train_dataset = load_and_cache_examples(args, tokenizer, evaluate=False)
        global_step = train(args, train_dataset, model, device)
        logger.info("finished training: %d steps", global_step)
        if args.local_rank in [-1, 0]:
            model_to_save = model.module if hasattr(model, 'module') else model
            model_to_save.save_pretrained(args.output_dir)
            tokenizer.save_pretrained(args.output_dir)

    if args.do_predict and args.local_rank in [-1, 0]:
        model_to_eval = model.module if hasattr(model, 'module') else model
        pred_file = evaluate(args, model_to_eval, tokenizer, device)
        logger.info("predictions written to %s", pred_file)


if __name__ == "__main__":
    main()
