import argparse
import itertools
import json
import os
import random
import re
from functools import partial

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm
from transformers import AutoModelForCausalLM, AutoTokenizer
from transformers.generation import GenerationConfig

'''
torchrun --nproc_per_node 8 --nnodes 1 --node_rank 0 \
    --master_addr 127.0.0.1 --master_port 12345 \
    evaluate_chat_mmlu_ddp.py --checkpoint-path Qwen/Qwen-7B-Chat \
    --eval_data_path data/mmlu/data --bf16
'''

SUBJECTS_FILE = 'subject_mapping.json'
PROMPT = ('The following is a multiple-choice question. Please choose the most '
          'suitable one among A, B, C and D as the answer to this question.\n\n')


class InferenceSampler(torch.utils.data.sampler.Sampler):

    def __init__(self, size):
        self._size = int(size)
        assert size > 0
        self._rank = torch.distributed.get_rank()
        self._world_size = torch.distributed.get_world_size()
        self._local_indices = self._get_local_indices(size, self._world_size,
                                                      self._rank)

    @staticmethod
    def _get_local_indices(total_size, world_size, rank):
        shard_size = total_size // world_size
        left = total_size % world_size
        shard_sizes = [shard_size + int(r < left) for r in range(world_size)]

        begin = sum(shard_sizes[:rank])
        end = min(sum(shard_sizes[:rank + 1]), total_size)
        return range(begin, end)

    def __iter__(self):
        yield from self._local_indices

    def __len__(self):
        return len(self._local_indices)


class MMLUDataset(torch.utils.data.Dataset):

    def __init__(self, data_dir, subjects):
        self.rows = []
        for subject in subjects:
            test_df = pd.read_csv(os.path.join(data_dir, 'test', f'{subject}_test.csv'),
                                  names=['question', 'A', 'B', 'C', 'D', 'answer'])
            for _, row in test_df.iterrows():
                self.rows.append((subject, row))

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, idx):
        subject, row = self.rows[idx]
        question = PROMPT + row['question']
        for choice in ['A', 'B', 'C', 'D']:
            question += f'\n{choice}. {row[choice]}'
        question += '\nAnswer:'
        return {
            'question': question,
            'subject': subject,
            'answer': row['answer'],
        }


def collate_fn(batches, tokenizer):
    questions = [_['question'] for _ in batches]
    subjects = [_['subject'] for _ in batches]
    answers = [_['answer'] for _ in batches]

    input_ids = tokenizer(questions, return_tensors='pt', padding='longest')

    return input_ids.input_ids, input_ids.attention_mask, subjects, answers


def extract_choice(response):
    '''
    Always return a choice, even cannot match by regex,
    to ensure fair comparison to other models.
    '''
    response = str(response)
    if response[0] in ['A', 'B', 'C', 'D']:
        return response[0]
    # 1. Single match
    patterns = [
        (r'答案(选项)?(是|为)：? ?([ABCD])', 3),
        (r'答案(是|为)选项 ?([ABCD])', 2),
        (r'故?选择?：? ?([ABCD])', 1),
        (r'([ABCD]) ?选?项(是|为)?正确', 1),
        (r'正确的?选项(是|为) ?([ABCD])', 2),
        (r'答案(应该)?(是|为)([ABCD])', 3),
        (r'选项 ?([ABCD]) ?(是|为)?正确', 1),
        (r'选择答案 ?([ABCD])', 1),
        (r'答案?：?([ABCD])', 1),
        (r'([ABCD])(选?项)?是?符合题意', 1),
        (r'答案选项：? ?([ABCD])', 1),
        (r'答案(选项)?为(.*?)([ABCD])', 3),
        (r'answer is:? ?\(?([ABCD])\)?', 1),
    ]
    for pattern, idx in patterns:
        m = re.search(pattern, response, re.M)
        if m:
            answer = m.group(idx)
            assert answer in ['A', 'B', 'C', 'D']
            return answer

    # 2. Recursive match
    patterns = [
        (r'([ABCD])(.*?)当选', 1),
        (r'([ABCD])(.*?)正确', 1),
    ]
    for pattern, idx in patterns:
        m = re.search(pattern, response, re.M)
        if m:
            while m:
                answer = m.group(idx)
                m = re.search(pattern, m.group(0)[1:], re.M)
            assert answer in ['A', 'B', 'C', 'D']
            return answer

    # 3. Weak single match
    patterns = [
        (r'[^不]是：? ?([ABCD])', 1),
    ]
    for pattern, idx in patterns:
        m = re.search(pattern, response, re.M)
        if m:
            answer = m.group(idx)
            assert answer in ['A', 'B', 'C', 'D']
            return answer

    # 4. Check the only mentioned choices
    pattern = r'^[^ABCD]*([ABCD])[^ABCD]*$'
    m = re.match(pattern, response)
    if m:
        answer = m.group(1)
        assert answer in ['A', 'B', 'C', 'D']
        return answer

    return random.choice(['A', 'B', 'C', 'D'])


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--checkpoint-path', type=str, default='Qwen/Qwen-7B-Chat')
    parser.add_argument('--eval_data_path', type=str, default='data/mmlu/data')
    parser.add_argument('--out-dir', type=str, default='outs_chat')
    parser.add_argument('--batch-size', type=int, default=1)
    parser.add_argument('--num-workers', type=int, default=1)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--bf16', action='store_true')
    parser.add_argument('--use-flash-attn', action='store_true')
    args = parser.parse_args()

    torch.distributed.init_process_group(
        backend='nccl',
        world_size=int(os.getenv('WORLD_SIZE', '1')),
        rank=int(os.getenv('RANK', '0')),
    )

    torch.cuda.set_device(int(os.getenv('LOCAL_RANK', 0)))

    tokenizer = AutoTokenizer.from_pretrained(args.checkpoint_path,
                                              trust_remote_code=True)
    tokenizer.padding_side = 'left'
    tokenizer.pad_token_id = tokenizer.eod_id

    model = AutoModelForCausalLM.from_pretrained(
        args.checkpoint_path, device_map='cuda', trust_remote_code=True,
        bf16=args.bf16, fp16=not args.bf16,
        use_flash_attn=args.use_flash_attn).eval()
    model.generation_config = GenerationConfig.from_pretrained(
        args.checkpoint_path, trust_remote_code=True)
    model.generation_config.do_sample = False

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)

    with open(os.path.join(args.eval_data_path, '..', SUBJECTS_FILE)) as f:
        subject_mapping = json.load(f)
    subjects = sorted(subject_mapping.keys())

    dataset = MMLUDataset(args.eval_data_path, subjects)
    dataloader = torch.utils.data.DataLoader(
        dataset=dataset,
        sampler=InferenceSampler(len(dataset)),
        batch_size=args.batch_size,
        num_workers=args.num_workers,
        pin_memory=True,
        drop_last=False,
        collate_fn=partial(collate_fn, tokenizer=tokenizer),
    )

    outputs = []
    for _, (input_ids, attention_mask, subject_list,
            answers) in tqdm(enumerate(dataloader)):
        pred = model.generate(
            input_ids=input_ids.cuda(),
            attention_mask=attention_mask.cuda(),
            do_sample=False,
            num_beams=1,
            max_new_tokens=32,
            min_new_tokens=1,
            length_penalty=1.0,
            num_return_sequences=1,
            use_cache=True,
            pad_token_id=tokenizer.eod_id,
            eos_token_id=tokenizer.eod_id,
        )
        responses = [
            tokenizer.decode(_[input_ids.size(1):].cpu(), skip_special_tokens=True).strip()
            for _ in pred
        ]

        for response, subject, answer in zip(responses, subject_list, answers):
            outputs.append({
                'subject': subject,
                'pred': extract_choice(response),
                'answer': answer,
                'response': response,
            })

    torch.distributed.barrier()

    world_size = torch.distributed.get_world_size()
    merged_outputs = [None for _ in range(world_size)]
    torch.distributed.all_gather_object(merged_outputs, json.dumps(outputs))

    merged_outputs = [json.loads(_) for _ in merged_outputs]
    merged_outputs = [_ for _ in itertools.chain.from_iterable(merged_outputs)]

    if torch.distributed.get_rank() == 0:
        print(f'Evaluating {len(merged_outputs)} predictions on {world_size} GPUs ...')
        os.makedirs(args.out_dir, exist_ok=True)
        per_subject = {}
        for item in merged_outputs:
            hit = int(item['pred'] == item['answer'])
            per_subject.setdefault(item['subject'], []).append(hit)
        category_hits = {}
        for subject, hits in per_subject.items():
            category = subject_mapping[subject]
            category_hits.setdefault(category, []).extend(hits)
            print(f'{subject:45s} {100 * np.mean(hits):.2f}')
        for category, hits in sorted(category_hits.items()):
            print(f'[{category}] {100 * np.mean(hits):.2f}')
        all_hits = list(itertools.chain.from_iterable(per_subject.values()))
        print(f'Average acc: {100 * np.mean(all_hits):.2f}')
        with open(os.path.join(args.out_dir, 'mmlu_results.json'), 'w') as f:
            json.dump(merged_outputs, f, ensure_ascii=False, indent=1)

    torch.distributed.barrier()
