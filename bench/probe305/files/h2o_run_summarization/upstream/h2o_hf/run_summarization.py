import argparse
import json
import os.path
import logging

import tqdm
import torch
import copy
import numpy as np

from transformers import AutoModelForCausalLM, AutoTokenizer, AutoConfig

from utils_real_drop.modify_llama import H2OLlamaAttention_drop, convert_kvcache_llama_heavy_recent
from utils_real_drop.modify_gptneox import GPTNeoXAttention_Mask, convert_kvcache_gpt_neox_heavy_recent
from utils_real_drop.modify_opt import OPTAttention_Mask, convert_kvcache_opt_heavy_recent


logging.basicConfig(
    format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
    datefmt="%m/%d/%Y %H:%M:%S",
    level=logging.INFO,
)
logger = logging.getLogger(__name__)


ENABLE_Heavy_Hitter_FUNCTIONS = {
    "llama": convert_kvcache_llama_heavy_recent,
    "opt": convert_kvcache_opt_heavy_recent,
    "gpt_neox": convert_kvcache_gpt_neox_heavy_recent,
}

TARGET_MODULE = {
    "llama": H2OLlamaAttention_drop,
    "opt": OPTAttention_Mask,
    "gpt_neox": GPTNeoXAttention_Mask,
}


def set_seed(args):
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    if args.n_gpu > 0:
        torch.cuda.manual_seed_all(args.seed)


def load_requests(input_path, sample_num):
    requests = []
    with open(input_path, 'r') as f:
        for line in f:
            if line.strip() != '':
                requests.append(json.loads(line))

    print(len(requests))
    if sample_num < len(requests):
        print('Sample {} Examples from {} samples'.format(sample_num, len(requests)))
    requests = requests[:sample_num]
    return requests


def build_model(args, model_name, config):
    model = AutoModelForCausalLM.from_pretrained(model_name, cache_dir=args.cache_dir)

    if args.enable_h2o_cache:
        print('Enabling H2O KV cache')
        config.hh_size = args.hh_size
        config.recent_size = args.recent_size
        checkpoint = copy.deepcopy(model.state_dict())
        model = ENABLE_Heavy_Hitter_FUNCTIONS[args.model_arch](model, config)
        model.load_state_dict(checkpoint)

    # keep everything in fp16 on the first GPU; the 7B/13B checkpoints fit on one A100-80G
    model.half().eval().cuda()
    return model


if __name__ == '__main__':

    parser = argparse.ArgumentParser()

    parser.add_argument("--input_path", type=str, default="")
    parser.add_argument("--output_path", type=str, default="")
    parser.add_argument("--model_arch", type=str, default="llama")
    parser.add_argument("--model_name", type=str, default="huggyllama/llama-7b")
    parser.add_argument("--cache_dir", type=str, default=None)

    parser.add_argument("--hh_size", type=int, default=1024)
    parser.add_argument("--recent_size", type=int, default=1024)

    parser.add_argument('--enable_h2o_cache', action='store_true')

    parser.add_argument("--sample_num", type=int, default=10)
    parser.add_argument("--k", type=int, default=0)
    parser.add_argument("--seed", type=int, default=42, help="random seed for initialization")
    parser.add_argument("--no_cuda", action="store_true", help="Avoid using CUDA when available")
    args = parser.parse_args()

    args.device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")
    args.n_gpu = 0 if args.no_cuda else torch.cuda.device_count()
    logger.warning(f"device: {args.device}, n_gpu: {args.n_gpu}, 16-bits inference: True")
    set_seed(args)

    model_name = args.model_name
    input_path = args.input_path
    output_path = args.output_path

    config = AutoConfig.from_pretrained(model_name, cache_dir=args.cache_dir)
    tokenizer = AutoTokenizer.from_pretrained(model_name, use_fast=True, cache_dir=args.cache_dir)

    model = build_model(args, model_name, config)

    requests = load_requests(input_path, args.sample_num)

    results = []
    rouge = None
    try:
        from rouge import Rouge
        rouge = Rouge()
    except ImportError:
        logger.warning("rouge not installed, skipping on-the-fly ROUGE")

    rouge1_score_list = []
    rouge2_score_list = []
    rougel_score_list = []

    with torch.no_grad():
        for request in tqdm.tqdm(requests):
            result = {'request': request, 'result': {}}
            prompt = request['article']
            label = request['summary_gt']
            temperature = request['temperature']
            stop = request['stop']

            input_ids = tokenizer(prompt, add_special_tokens=False, return_tensors='pt').input_ids.to(model.device)

            output_sequences = model.generate(
                input_ids=input_ids,
                max_length=request['max_tokens'] + len(input_ids[0]),
                temperature=temperature,
                top_k=args.k,
                top_p=request['top_p'],
                do_sample=True,
                num_return_sequences=request['n'],
                return_dict_in_generate=True, output_scores=True,
            )

            for name, m in model.named_modules():
                if isinstance(m, TARGET_MODULE[args.model_arch]):
                    m._clean_cache()

            tokens = tokenizer.convert_ids_to_tokens(output_sequences['sequences'].squeeze(0))[len(input_ids[0]):]
            logprobs = [logits.log_softmax(dim=-1).max().item() for logits in output_sequences['scores']]
            top_logprobs = [{i: v for i, v in zip(tokens, logprobs)}]

            generate_text = tokenizer.decode(output_sequences['sequences'].squeeze(0)[len(input_ids[0]):])
            generate_text = generate_text[: generate_text.find(stop[0])]

            if rouge is not None and len(generate_text.strip()) > 0:
                scores = rouge.get_scores(generate_text, label)[0]
                rouge1_score_list.append(scores['rouge-1']['f'])
                rouge2_score_list.append(scores['rouge-2']['f'])
                rougel_score_list.append(scores['rouge-l']['f'])

            result['result'] = {
                "choices": [
                    {
                        "text": generate_text,
                        "logprobs": {
                            "tokens": tokens,
                            "token_logprobs": logprobs,
                            "top_logprobs": top_logprobs,
                            "text_offset": []
                        },
                        "finish_reason": "length"
                    }
                ],
                "request_time": {
                    "batch_time": 0,
                    "batch_size": 1}
            }

            results.append(result)

    if len(rouge1_score_list) > 0:
        print('rouge-1: {:.6f}, rouge-2: {:.6f}, rouge-l: {:.6f}'.format(
            np.mean(rouge1_score_list), np.mean(rouge2_score_list), np.mean(rougel_score_list)))

    os.makedirs(os.path.dirname(output_path) or ".", exist_ok=True)
    with open(output_path, 'w') as f:
        for result in results:
            f.write(json.dumps(result) + '\n')
