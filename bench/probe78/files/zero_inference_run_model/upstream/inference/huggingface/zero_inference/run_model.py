"""
Run OPT / BLOOM / LLAMA with ZeRO-Inference: weights live in CPU or NVMe memory and are streamed layer by layer into
GPU memory by ZeRO stage 3, optionally with 4-bit weight quantization and KV-cache offload to the host.

    deepspeed --num_gpus 1 run_model.py --model facebook/opt-66b --batch-size 16 --cpu-offload --kv-offload
    deepspeed --num_gpus 1 run_model.py --model bigscience/bloom-7b1 --disk-offload --offload-dir /local_nvme
"""
import argparse
import gc
import os
import time

import deepspeed
import torch
from deepspeed.accelerator import get_accelerator
from packaging import version
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
from transformers.integrations.deepspeed import HfDeepSpeedConfig

assert version.parse(deepspeed.__version__) >= version.parse("0.10.3"), "ZeRO-Inference with weight quantization and kv cache offloading is available only in DeepSpeed 0.10.3+, please upgrade DeepSpeed"

KB = 1 << 10
MB = 1 << 20
GB = 1 << 30
T = 1e12


def get_filename(model_name, batch_size, prompt_len, gen_len, cpu_offload, disk_offload, num_nodes, num_gpus_per_node,
                 kv_offload, weight_quantize):
    modelsize = model_name.split('-')[-1]
    filename = f"ds-{modelsize}-bs{batch_size}-prompt{prompt_len}-gen{gen_len}-n{num_nodes}x{num_gpus_per_node}-"
    if cpu_offload:
        filename += "cpu"
    elif disk_offload:
        filename += "disk"
    else:
        filename += "gpu"
    if kv_offload:
        filename += "-kv_offload"
    if weight_quantize:
        filename += "-w_quant"
    return filename


def meta_to_cpu(container, dtype=None):
    if isinstance(container, torch.Tensor):
        return torch.empty(*container.shape, dtype=dtype or container.dtype)
    elif isinstance(container, tuple):
        return tuple(meta_to_cpu(x, dtype) for x in container)
    elif isinstance(container, dict):
        return dict((k, meta_to_cpu(v, dtype)) for k, v in container.items())
    else:
        raise ValueError(f"Invalid type: {container}")


def model_bytes(config):
    h = config.hidden_size
    return 2 * (config.num_hidden_layers * (
        # self-attention
        h * (3 * h + 1) + h * (h + 1) +
        # mlp
        h * (4 * h + 1) + h * 4 * (h + 1) +
        # layer norm
        h * 4) +
        # embedding
        config.vocab_size * (h + 1))


def cache_bytes(config, batch_size, seq_len):
    return 2 * batch_size * seq_len * config.num_hidden_layers * config.hidden_size * 2


def hidden_bytes(config, batch_size, seq_len):
    return batch_size * seq_len * config.hidden_size * 2


def add_model_hooks(model: torch.nn.Module):
    """Record the time of the first token (prefill) by hooking the first decoder layer."""

    def start_time_hook(module, input):
        if hasattr(module, 'stage') and module.stage == "decode":
            return
        elif hasattr(module, 'stage') and module.stage == 'prefill':
            torch.cuda.synchronize()
            module.__start_time__ = time.time()

    def end_time_hook(module, input, output):
        if hasattr(module, 'stage') and module.stage == "decode":
            return
        elif hasattr(module, 'stage') and module.stage == 'prefill':
            torch.cuda.synchronize()  # prefill finished
            module.__duration__ = time.time() - module.__start_time__
            module.stage = "decode"

    if not hasattr(model, '__start_time_hook_handle'):
        model.__start_time_hook_handle__ = model.register_forward_pre_hook(start_time_hook, )

    if not hasattr(model, '__end_time_hook_handle__'):
        model.__end_time_hook_handle__ = model.register_forward_hook(end_time_hook, )


def get_model_config(model_name):
    if "175b" in model_name:
        config = AutoConfig.from_pretrained("facebook/opt-66b")
        config.hidden_size = 12288
        config.word_embed_proj_dim = 12288
        config.ffn_dim = 12288 * 4
        config.num_attention_heads = 96
        config.num_hidden_layers = 96
    else:
        config = AutoConfig.from_pretrained(model_name)
    return config


def get_ds_model(model_name, dtype, cpu_offload, disk_offload, offload_dir, dummy_weights, bits, group_size):
    config = get_model_config(model_name)
    hidden_size = config.hidden_size
    deepspeed.init_distributed("nccl")
    pin_memory = bool(args.pin_memory)

    ds_config = {
        "fp16": {
            "enabled": dtype == torch.float16,
        },
        "bf16": {
            "enabled": dtype == torch.bfloat16,
        },
        "zero_optimization": {
            "stage": 3,
            "stage3_prefetch_bucket_size": 2 * hidden_size * hidden_size,
            "stage3_param_persistence_threshold": hidden_size,
            "stage3_max_live_parameters": 2 * hidden_size * hidden_size,
        },
        "steps_per_print": 2000,
        "train_batch_size": args.batch_size,
        "wall_clock_breakdown": False,
    }

    if bits == 4:
        quant_config = {
            "weight_quantization": {
                "quantized_initialization": {
                    "num_bits": bits,
                    "group_size": group_size,
                    "group_dim": 1,
                    "symmetric": False
                },
            }
        }
        ds_config.update(quant_config)

    if cpu_offload:
        ds_config["zero_optimization"]["offload_param"] = dict(device="cpu", pin_memory=pin_memory)

    if disk_offload:
        if config.model_type == 'bloom':
            buffer_count = 3 if args.use_gds else 5
            buffer_size = 8 * GB if args.use_gds else 9 * GB
        else:
            buffer_count = 5
            buffer_size = 2 * GB

        ds_config["zero_optimization"]["offload_param"] = dict(
            device="nvme",
            pin_memory=pin_memory,
            nvme_path=offload_dir,
            buffer_count=buffer_count,
            buffer_size=buffer_size,
        )
        ds_config["aio"] = {
            "block_size": 1048576 * 16,
            "queue_depth": 64,
            "thread_count": 8,
            "use_gds": args.use_gds,
            "single_submit": False,
            "overlap_events": True,
        }

    dschf = HfDeepSpeedConfig(ds_config)  # this tells from_pretrained to instantiate directly on gpus

    if dummy_weights:
        with deepspeed.zero.Init(config_dict_or_path=ds_config):
            model = AutoModelForCausalLM.from_config(config, torch_dtype=dtype)
    else:
        model = AutoModelForCausalLM.from_pretrained(model_name, torch_dtype=dtype)
    model = model.eval()

    ds_engine = deepspeed.initialize(model=model, config_params=ds_config)[0]
    ds_engine.module.eval()
    model = ds_engine.module
    print(f"model.config = {model.config}")

    return model


def run_generation(model_name, batch_size, prompt_len, gen_len, cpu_offload, disk_offload, offload_dir, num_nodes,
                   num_gpus_per_node, dummy, output_file, verbose, kv_offload, quant_bits, quant_group_size,
                   pin_kv_cache, async_kv_offload, loops):
    # Load tokenizer
    config = get_model_config(model_name)
    return_token_type_ids = True
    padding_side = "left" if config.model_type in ['opt'] else "right"

    tokenizer = AutoTokenizer.from_pretrained(model_name, return_token_type_ids=return_token_type_ids,
                                              padding_side=padding_side)
    tokenizer.pad_token = tokenizer.eos_token

    def _batch_encode(prompts):
        input_tokens = tokenizer.batch_encode_plus(prompts, return_tensors="pt", padding="max_length",
                                                   max_length=prompt_len)
        for t in input_tokens:
            if torch.is_tensor(input_tokens[t]):
                input_tokens[t] = input_tokens[t].to(torch.cuda.current_device())
        return input_tokens

    # Load model
    model = get_ds_model(model_name, torch.float16, cpu_offload, disk_offload, offload_dir, dummy, quant_bits,
                         quant_group_size)

    if kv_offload:
        model.set_kv_cache_offload(True, gen_len, pin_kv_cache, async_kv_offload)

    add_model_hooks(model)

    prompts = ["Paris is the capital city of"] * (batch_size // 2) + ["Beijing is the capital city of"] * (
        batch_size - batch_size // 2)
    input_tokens = _batch_encode(prompts)

    generate_kwargs = dict(max_new_tokens=gen_len, do_sample=False)
    prefill_timings = []
    timings = []
    for _ in range(loops):
        model.stage = "prefill"
        torch.cuda.synchronize()  # start of a measured loop
        start = time.time()
        with torch.no_grad():
            output_ids = model.generate(**input_tokens, **generate_kwargs)
        torch.cuda.synchronize()  # end of a measured loop
        end = time.time()
        prefill_timings.append(model.__duration__)
        timings.append(end - start)

    outputs = tokenizer.batch_decode(output_ids, skip_special_tokens=True)

    if verbose:
        for o in outputs[:2]:
            print(o.replace("\n", " "))

    # Log output
    prefill_latency = sum(prefill_timings[1:]) / max(len(prefill_timings) - 1, 1)
    total_latency = sum(timings[1:]) / max(len(timings) - 1, 1)
    num_generated_tokens = batch_size * gen_len
    decode_latency = total_latency - prefill_latency
    decode_throughput = (num_generated_tokens - batch_size) / max(decode_latency, 1e-6)

    gpu_peak_mem = get_accelerator().max_memory_allocated(torch.device("cuda"))

    cache_size = cache_bytes(config, batch_size, prompt_len + gen_len)
    hidden_size = hidden_bytes(config, batch_size, prompt_len + gen_len)
    log_str = (f"model size: {model_bytes(config)/GB:.3f} GB\t"
               f"cache size: {cache_size/GB:.3f} GB\t"
               f"hidden size (p): {hidden_size/GB:.3f} GB\n"
               f"peak gpu mem: {gpu_peak_mem / GB:.3f} GB\t"
               f"prefill latency: {prefill_latency:.3f} s\t"
               f"decode latency: {decode_latency:.3f} s\t"
               f"decode throughput: {decode_throughput:.3f} token/s\n")
    print(log_str)

    if output_file == "auto":
        filename = get_filename(model_name, batch_size, prompt_len, gen_len, cpu_offload, disk_offload, num_nodes,
                                num_gpus_per_node, kv_offload, quant_bits != 16) + ".log"
    else:
        filename = output_file
    with open(filename, "a") as fout:
        fout.write(log_str + "\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", type=str, default="facebook/opt-1.3b", help="model name or path")
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--prompt-len", type=int, default=512)
    parser.add_argument("--gen-len", type=int, default=32)
    parser.add_argument("--local_rank", type=int, help="local rank for distributed inference")
    parser.add_argument("--pin-memory", type=int, default=0)
    parser.add_argument("--cpu-offload", action="store_true", help="Use cpu offload.")
    parser.add_argument("--disk-offload", action="store_true", help="Use disk offload.")
    parser.add_argument("--offload-dir", type=str, default="~/offload_dir", help="Directory to store offloaded cache.")
    parser.add_argument("--use_gds", action="store_true", help="Use NVIDIA GPU DirectStorage to transfer between NVMe and GPU.")
    parser.add_argument("--kv-offload", action="store_true", help="Use kv cache cpu offloading.")
    parser.add_argument("--log-file", type=str, default="auto", help="log file name")
    parser.add_argument("--verbose", type=int, default=2, help="verbose level")
    parser.add_argument("--quant_bits", type=int, default=16, help="model weight quantization bits; either 4 or 8")
    parser.add_argument("--quant_group_size", type=int, default=64, help="model weight quantization group size")
    parser.add_argument("--pin_kv_cache", action="store_true", help="Allocate kv cache in pinned memory for offloading.")
    parser.add_argument("--async_kv_offload", action="store_true", help="Using non_blocking copy for kv cache offloading.")
    parser.add_argument("--loops", type=int, default=3, help="Number of token generation iterations")
    parser.add_argument("--dummy", action="store_true", help="Use dummy weights for benchmark purposes.")
    args = parser.parse_args()

    deepspeed.init_distributed()
    num_gpus_per_node = get_accelerator().device_count()
    num_nodes = dist_size = int(os.getenv("WORLD_SIZE", "1")) // num_gpus_per_node if num_gpus_per_node else 1

    run_generation(args.model, args.batch_size, args.prompt_len, args.gen_len, args.cpu_offload, args.disk_offload,
                   os.path.abspath(os.path.expanduser(args.offload_dir)), num_nodes, num_gpus_per_node, args.dummy,
                   args.log_file, args.verbose, args.kv_offload, args.quant_bits, args.quant_group_size,
                   args.pin_kv_cache, args.async_kv_offload, args.loops)

    gc.collect()
