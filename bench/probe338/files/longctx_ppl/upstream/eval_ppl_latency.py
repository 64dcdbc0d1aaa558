# Long-context perplexity + decode-latency evaluation for (LoRA-)extended LLaMA models.
#
#   python eval_ppl_latency.py --seq_len 8192 --context_size 8192 --batch_size 1 \
#       --base_model path_to/Llama-2-7b-longlora-8k --data_path pg19/test.bin --flash_attn True
#
# Written for a single A100/H100; the latency section uses CUDA events so that
# kernel launch overhead is not hidden by the Python timer.
import argparse
import math
import os
import time

import numpy as np
import torch
import transformers
from peft import PeftModel
from tqdm import tqdm

from llama_attn_replace import replace_llama_attn


def parse_config():
    parser = argparse.ArgumentParser(description='arg parser')
    parser.add_argument('--batch_size', type=int, default=32, help='batch size during inference')
    parser.add_argument('--base_model', type=str, default="/data1/pretrained-models/llama-7b-hf")
    parser.add_argument('--cache_dir', type=str, default="./cache")
    parser.add_argument('--seq_len', type=int, default=2048, help='context length during evaluation')
    parser.add_argument('--context_size', type=int, default=-1, help='context size during fine-tuning')
    parser.add_argument('--peft_model', type=str, default=None, help='')
    parser.add_argument('--flash_attn', type=bool, default=True, help='')
    parser.add_argument('--data_path', type=str, default="./test.bin", help='')
    parser.add_argument('--latency_tokens', type=int, default=128, help='decode steps for the latency probe')
    parser.add_argument('--compile', action='store_true', help='torch.compile the model for the latency probe')
    args = parser.parse_args()
    return args


def get_as_batch(data, seq_length, batch_size, device='cpu', sliding_window=1):
    all_ix = list(range(0, len(data) - seq_length, sliding_window))
    all_ix.pop()

    for idx in range(0, len(all_ix), batch_size):
        ix = all_ix[idx:idx + batch_size]
        assert all([idx + seq_length + 1 <= len(data) for idx in ix])
        x = torch.stack([torch.from_numpy((data[i:i + seq_length]).astype(np.int64)) for i in ix])
        y = torch.stack([torch.from_numpy((data[i + 1:i + 1 + seq_length]).astype(np.int64)) for i in ix])
        if device != 'cpu':
            x, y = x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)
        yield x, y


def iceildiv(x, y):
    return (x + y - 1) // y


def evaluate(model, data, batch_size, device, seq_length, sliding_window=256, use_cache=False):
    stats = {}

    model.eval()

    loss_list_val, acc_list = [], []
    loss_step_list_val = []

    with torch.no_grad():
        print(f"Using seq length {seq_length}")
        torch.set_printoptions(sci_mode=False)
        for idx, (x, y) in tqdm(
            enumerate(
                get_as_batch(
                    data['val'],
                    seq_length,
                    batch_size,
                    device=device,
                    sliding_window=sliding_window
                )
            ),
            total=iceildiv(
                iceildiv(len(data['val']), sliding_window),
                batch_size
            )
        ):
            val_loss = 0.
            acc = 0.
            cnt = 0

            for part_idx, i in enumerate(range(0, x.shape[1], seq_length)):
                part_len = x[:, i:i + seq_length].shape[1]

                with torch.autocast("cuda", dtype=torch.float16):
                    outputs = model(
                        input_ids=x[:, i:i + seq_length],
                        labels=x[:, i + 1:i + seq_length + 1].contiguous(),
                        use_cache=use_cache)

                val_loss = outputs.loss * part_len + val_loss
                acc = ((outputs.logits.argmax(-1) == y[:, i:i + seq_length]).float().sum()) + acc
                cnt += part_len
                while len(loss_step_list_val) <= part_idx:
                    loss_step_list_val.append([])
                loss_step_list_val[part_idx].append(outputs.loss.item())
            val_loss /= cnt
            acc /= cnt

            loss_list_val.append(val_loss.item())
            acc_list.append(acc.item())

    stats['val_acc'] = torch.as_tensor(acc_list).mean().item()
    stats['val_loss'] = torch.as_tensor(loss_list_val).mean().item()
    stats['val_perplexity'] = 2.71828 ** stats['val_loss']
    stats['val_perplexity_per_chunk'] = torch.exp(torch.as_tensor(loss_step_list_val).mean(dim=1))

    return stats


@torch.no_grad()
def measure_decode_latency(model, device, prompt_len, new_tokens, warmup=3):
    """Time prefill and per-token decode with CUDA events."""
    input_ids = torch.randint(100, 20000, (1, prompt_len), device=device)
    for _ in range(warmup):
        model.generate(input_ids, max_new_tokens=8, do_sample=False)
    torch.cuda.synchronize()  # drain warmup work before resetting stats
    torch.cuda.reset_peak_memory_stats()

    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)

    torch.cuda.nvtx.range_push("prefill")
    start.record()
    out = model(input_ids, use_cache=True)
    end.record()
    torch.cuda.synchronize()  # events must complete before elapsed_time
    torch.cuda.nvtx.range_pop()  # prefill
    prefill_ms = start.elapsed_time(end)

    past = out.past_key_values
    next_tok = out.logits[:, -1:].argmax(-1)
    torch.cuda.nvtx.range_push("decode")
    t0 = time.perf_counter()
    for _ in range(new_tokens):
        out = model(next_tok, past_key_values=past, use_cache=True)
        past = out.past_key_values
        next_tok = out.logits[:, -1:].argmax(-1)
    torch.cuda.synchronize()  # wait for the last decode step
    torch.cuda.nvtx.range_pop()  # decode
    decode_ms = (time.perf_counter() - t0) * 1000 / new_tokens

    return {
        'prefill_ms': prefill_ms,
        'decode_ms_per_token': decode_ms,
        'peak_mem_gb': torch.cuda.max_memory_allocated() / 1024 ** 3,
    }


def main(args):
    device = "cuda:0"
    seed = 2
    torch.cuda.set_device(device)

    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)

    # TF32 matmuls are fine for perplexity; they only affect fp32 reductions
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    data = {'val': np.memmap(args.data_path, dtype=np.uint16, mode='r')}

    print(f"Num validation tokens: {len(data['val'])}")
    print("data path", args.data_path)
    print("base model", args.base_model)
    print("peft model", args.peft_model)
    print("device", torch.cuda.get_device_name(device))

    if args.flash_attn:
        replace_llama_attn(use_flash_attn=True, use_full=True)

    # Set RoPE scaling factor
    config = transformers.AutoConfig.from_pretrained(
        args.base_model,
        cache_dir=args.cache_dir,
    )

    context_size = args.context_size if args.context_size > 0 else args.seq_len
    orig_ctx_len = getattr(config, "max_position_embeddings", None)  # this value should be 4096 for LLaMA2 models
    if orig_ctx_len and context_size > orig_ctx_len:
        scaling_factor = float(math.ceil(context_size / orig_ctx_len))
        config.rope_scaling = {"type": "linear", "factor": scaling_factor}

    # bf16 only pays off on Ampere and newer
    use_bf16 = torch.cuda.get_device_capability()[0] >= 8
    dtype = torch.bfloat16 if use_bf16 else torch.float16

    # Load model and tokenizer
    model = transformers.AutoModelForCausalLM.from_pretrained(
        args.base_model,
        config=config,
        cache_dir=args.cache_dir,
        torch_dtype=dtype,
        device_map="auto",
    )
    model.resize_token_embeddings(32001)

    if args.peft_model:
        trainable_params = os.path.join(args.peft_model, "trainable_params.bin")
        if os.path.isfile(trainable_params):
            model.load_state_dict(torch.load(trainable_params, map_location=model.device), strict=False)
        else:
            raise ValueError("Trainable input embedding and normalization are required.")
        model = PeftModel.from_pretrained(
            model,
            args.peft_model,
            device_map="auto",
            torch_dtype=dtype,
        )

    stats = evaluate(model, data, args.batch_size, device, args.seq_len, sliding_window=256)
    print(stats)

    if args.compile:
        model = torch.compile(model, mode="reduce-overhead")
    with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):
        latency = measure_decode_latency(model, device, prompt_len=args.seq_len // 2,
                                         new_tokens=args.latency_tokens)
    print(latency)


if __name__ == "__main__":
    args = parse_config()
    main(args)
