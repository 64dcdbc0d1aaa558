import sys

sys.path.append("..")
import argparse
import random
import time

import numpy as np
import torch
from accelerate import Accelerator
from torch.utils.data.dataloader import DataLoader
from tqdm import tqdm
from transformers import AutoTokenizer, DataCollatorForLanguageModeling

from data_converter import convert_c4_dataset_eval, convert_cnn_dataset, convert_wiki_dataset
from Engine.Engine import GraphInferenceEngine, OffloadEngine
from Tree.SpecTree import SpecTree
from utils import cuda_graph_for_residual, cuda_graph_for_sampling_without_replacement

parser = argparse.ArgumentParser()
parser.add_argument("--model", type=str, help="model")
parser.add_argument("--target", type=str, help="target model")
parser.add_argument("--dataset", type=str, default="dataset/c4_small.json", help="dataset path")
parser.add_argument("--growmap", type=str, default="growmaps/68m_7b-64.pt", help="growmap path")
parser.add_argument("--start", type=int, default=0, help="start")
parser.add_argument("--end", type=int, default=200, help="end")
parser.add_argument("--T", type=float, default=0.6, help="temperature")
parser.add_argument("--P", type=float, default=0.9, help="top_p")
parser.add_argument("--DP", type=float, default=1.1, help="draft_top_p")
parser.add_argument("--M", type=int, default=256, help="max length")
parser.add_argument("--seed", type=int, default=17, help="random seed")
parser.add_argument("--Mode", type=str, default="greedy", help="tree mode")
parser.add_argument("--offloading", action="store_true")
parser.add_argument("--graph-max-len", type=int, default=128, help="capture CUDA graphs for 1..N tokens")
args = parser.parse_args()
print(args)


def setup_seed(seed):
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    np.random.seed(seed)
    random.seed(seed)
    torch.backends.cudnn.deterministic = True


setup_seed(args.seed)


def simulation_fast(
    target_model,
    draft_model,
    dataloader,
    T=0.6,
    top_p=0.9,
    max_length=512,
    residual_graph=None,
    grow_map=None,
    sampling_callables=None,
    sample_gather_indices=None,
):
    num_eval_steps = len(dataloader)
    num_decoding_steps = 0
    num_large_model_steps = 0
    total_time = 0.0
    dtype = torch.float16
    attn_mask = torch.full((max_length, max_length), torch.finfo(dtype).min, dtype=dtype, device="cuda:0")
    sequence = torch.tensor(list(range(max_length)), device="cuda:0").long().unsqueeze(-1)
    new_tokens_buffer = torch.zeros(max_length).long().to("cuda:0")
    parents_buffer = torch.zeros(max_length).long().to(sequence.device)
    position_ids = torch.zeros(max_length).long().to(sequence.device)

    with torch.no_grad():
        for step, batch in tqdm(enumerate(dataloader), total=num_eval_steps):
            input_ids = batch["input_ids"][..., :128]
            labels = batch["labels"][..., :128]
            terminate = False
            if labels[0][-1] == -100:
                terminate = True
            draft_kv_len = 0
            target_kv_len = 0
            attn_mask.fill_(torch.finfo(dtype).min)
            spectree = SpecTree(
                prefix=input_ids.squeeze(0),
                device="cuda:0",
                temperature=T,
                top_p=top_p,
                draft_kv_len=draft_kv_len,
                target_kv_len=target_kv_len,
                draft_model_engine=draft_model,
                target_model_engine=target_model,
                max_length=max_length,
                grow_map=grow_map,
                attn_mask=attn_mask,
                sequence=sequence,
                new_tokens_buffer=new_tokens_buffer,
                parents_buffer=parents_buffer,
                position_ids=position_ids,
                residual_graph=residual_graph,
                sampling_callables=sampling_callables,
                sample_gather_indices=sample_gather_indices,
            )
            torch.cuda.synchronize()
            t1 = time.time()
            while input_ids.shape[1] < 256 and terminate == False:
                spectree.construct_grow_map()
                valid_tokens, draft_kv_len, target_kv_len, terminate = spectree.verify()

                num_decoding_steps += valid_tokens.shape[0] - input_ids.shape[1]
                num_large_model_steps += 1
                input_ids = valid_tokens.unsqueeze(0)
                if (input_ids[0][-1] == 2) or (input_ids[0][-1] == 0):
                    terminate = True

            torch.cuda.synchronize(device="cuda:0")
            t2 = time.time()
            total_time += t2 - t1
            draft_model.clear_kv()
            target_model.clear_kv()
    print(
        "total time :{:.5f}s, latency :{:.5f}s, decoding step: {}, large model step: {}, {}".format(
            total_time,
            total_time / num_decoding_steps,
            num_decoding_steps,
            num_large_model_steps,
            num_decoding_steps / num_large_model_steps,
        )
    )
    return num_decoding_steps / num_large_model_steps


def simulation_baseline(target_model, dataloader, T=0.6, top_p=0.9, max_length=256):
    """Autoregressive decoding with the same engine (no draft), for the speedup denominator."""
    num_eval_steps = len(dataloader)
    total_time = 0.0
    num_decoding_steps = 0
    dtype = torch.float16
    device = target_model.device
    attn_mask = torch.full((max_length, max_length), torch.finfo(dtype).min, dtype=dtype, device=device)
    attn_mask = torch.triu(attn_mask, diagonal=1)[None, None]
    with torch.no_grad():
        for step, batch in tqdm(enumerate(dataloader), total=num_eval_steps):
            input_ids = batch["input_ids"][..., :128].to(device)
            prefix_len = input_ids.shape[1]
            position_ids = torch.arange(prefix_len, device=device)[None]
            storage_ids = torch.arange(prefix_len, device=device)
            logits = target_model.model_run(input_ids, storage_ids, position_ids, attn_mask[..., :prefix_len, :])
            t1 = time.perf_counter()
            for pos in range(prefix_len, min(256, max_length)):
                next_token = logits[:, -1:].argmax(dim=-1)
                logits = target_model.model_run(
                    next_token,
                    torch.tensor([pos], device=device),
                    torch.tensor([[pos]], device=device),
                    attn_mask[..., pos : pos + 1, :],
                )
                num_decoding_steps += 1
                if next_token.item() in (0, 2):
                    break
            total_time += time.perf_counter() - t1
            target_model.clear_kv()
    print("total time :{:.5f}s, latency :{:.5f}s, decoding step: {}".format(total_time, total_time / max(num_decoding_steps, 1), num_decoding_steps))


tokenizer = AutoTokenizer.from_pretrained(args.model, use_fast=False)
tokenizer.pad_token = tokenizer.eos_token
if args.dataset == "wiki":
    tokenized_dataset_eval = convert_wiki_dataset(tokenizer=tokenizer).select(list(range(args.start, args.end)))
elif args.dataset == "cnn":
    tokenized_dataset_eval = convert_cnn_dataset(tokenizer=tokenizer).select(list(range(args.start, args.end)))
else:
    tokenized_dataset_eval = convert_c4_dataset_eval(tokenizer=tokenizer).select(list(range(args.start, args.end)))

data_collator = DataCollatorForLanguageModeling(tokenizer=tokenizer, mlm=False)
dataloader = DataLoader(tokenized_dataset_eval, batch_size=1, collate_fn=data_collator, shuffle=False)

if args.Mode == "baseline":
    target_model = OffloadEngine(max_length=args.M, model_name_or_path=args.target, dtype=torch.float16, device="cuda:0")
else:
    draft_model = GraphInferenceEngine(max_length=args.M, model_name_or_path=args.model, dtype=torch.float16)
    if args.offloading:
        target_model = OffloadEngine(max_length=args.M, model_name_or_path=args.target, dtype=torch.float16, device="cuda:0", stay_layers=4)
    else:
        target_model = GraphInferenceEngine(max_length=args.M, model_name_or_path=args.target, dtype=torch.float16, device="cuda:0")
    graph_capture_list = list(range(1, args.graph_max_len + 1))
    draft_model.initialize_cuda_graph(graph_capture_list)
    residual_graph = cuda_graph_for_residual()
    path = args.growmap
    grow_map = torch.load(path)

    tree_size = grow_map["size"]
    idx_lists = grow_map["roots"]
    branch_lists = grow_map["branches"]
    draft_step = len(grow_map["roots"])

    sampling_callables = {}
    sample_gather_indices = {}
    for i in range(draft_step - 1):
        idx_len = len(idx_lists[i])
        num_samples = max(branch_lists[i])
        sampling_callables[i] = cuda_graph_for_sampling_without_replacement(
            max_length=args.M, idx_len=idx_len, num_samples=num_samples, temperature=args.T, tree_size=tree_size
        )
    for i in range(draft_step - 1):
        ith_gather_list = []
        max_num_samples = max(branch_lists[i])
        for j, branch in enumerate(branch_lists[i]):
            branch_index = torch.arange(branch, device="cuda:0", dtype=torch.long)
            branch_index = branch_index + j * max_num_samples
            ith_gather_list.append(branch_index)
        ith_gather_list = torch.cat(ith_gather_list)
        sample_gather_indices[i] = ith_gather_list

accelerator = Accelerator()
dataloader = accelerator.prepare(dataloader)

if args.Mode == "greedy":
    simulation_fast(
        target_model=target_model,
        draft_model=draft_model,
        dataloader=dataloader,
        T=args.T,
        top_p=args.P,
        max_length=args.M,
        residual_graph=residual_graph,
        grow_map=grow_map,
        sampling_callables=sampling_callables,
        sample_gather_indices=sample_gather_indices,
    )
elif args.Mode == "baseline":
    simulation_baseline(target_model=target_model, dataloader=dataloader, T=args.T, top_p=args.P, max_length=args.M)
