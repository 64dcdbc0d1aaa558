"""Labels for probe137 (HF Trainer fine-tuning repos, CUDA -> Ascend NPU). See ../README.md for the policy."""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---------------------------------------------------------------- stanford_alpaca-style project
E("alpaca_train", "train.py", "explicit_replacement",
  "stanford_alpaca train.py (Trainer + smart_tokenizer_and_embedding_resize) with lab tweaks", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "Trainer-only script: transformers/accelerate import torch_npu themselves when probing for an NPU, and torch_npu>=2.5.1 autoloads; added for clarity only"),
    C('model_kwargs["attn_implementation"] = "flash_attention_2"', "attention_kernel", "replace", False,
      'model_kwargs["attn_implementation"] = "sdpa"',
      "only with --use_flash_attn (default off); the flash-attn package cannot be installed on NPU, transformers' NPU FA2 path depends on its version (unconfirmed) - transformers #36383 recommends sdpa on NPU"),
])

E("alpaca_launch", "scripts/train_alpaca_7b.sh", "explicit_replacement",
  "stanford_alpaca README torchrun + FSDP launch command as a script", [
    C("# usage: bash scripts/train_alpaca_7b.sh", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before torch_npu can load its libraries (before set -u, set_env.sh reads unset vars)"),
    C("export CUDA_VISIBLE_DEVICES=${GPUS:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPUS:-0,1,2,3}",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; without the rename every NPU is visible, silently"),
    C('--fsdp "full_shard auto_wrap"', "distributed_framework", "replace", False,
      '--deepspeed configs/ds_zero3.json \\',
      "unconfirmed: Ascend's 2.7.1 API list marks torch.distributed.fsdp.FullyShardedDataParallel unsupported while transfer_to_npu patches FSDP.__init__; a cautious porter moves to DeepSpeed ZeRO-3"),
    C("--tf32 True", "device_capability_check", "replace", True, "--tf32 False \\",
      "TrainingArguments raises 'Your setup doesn't support tf32' when is_torch_tf32_available() is False (it checks CUDA/Ampere; transfer_to_npu keeps it reporting no CUDA)"),
])

E("alpaca_reqs", "requirements.txt", "explicit_replacement",
  "stanford_alpaca requirements.txt with a CUDA wheel index and flash-attn added by the lab", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu pairs with the CPU torch wheel on x86 (plain PyPI on aarch64); the cu118 index pulls a CUDA build"),
    C("=torch==2.1.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "torch-npu wheel matching torch 2.1.0 (plus CANN 8.0.0) has to be installed"),
    C("flash-attn==2.3.6", "attention_kernel", "removal", True, None,
      "flash-attn builds CUDA kernels with nvcc and cannot be installed on an Ascend host"),
])

# ---------------------------------------------------------------- FastChat-style project
E("fastchat_train_mem", "fastchat/train/train_mem.py", "kernel_rewrite",
  "FastChat fastchat/train/train_mem.py (flash-attn / xformers monkey-patch entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "the patched attention module imports torch_npu itself; Trainer probes import it too"),
    C("if torch.cuda.get_device_capability()[0] < 8:", "device_capability_check", "removal", True, None,
      "get_device_capability lazily initialises CUDA and raises on an NPU host; sm80 gate is meaningless for npu_fusion_attention"),
])

E("fastchat_flash_patch", "fastchat/train/llama2_flash_attn_monkey_patch.py", "kernel_rewrite",
  "FastChat llama2_flash_attn_monkey_patch.py (flash-attn 2 varlen kernels for LLaMA)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the rewritten forward calls torch_npu.npu_fusion_attention, so the name must be bound here"),
    C("from flash_attn import __version__ as flash_attn_version", "attention_kernel", "removal", True, None,
      "flash-attn cannot be installed on NPU: ImportError at import time"),
    C("from flash_attn.bert_padding import pad_input, unpad_input", "attention_kernel", "replace", True,
      "from fastchat.train.npu_padding import pad_input, unpad_input  # pure-torch copies",
      "bert_padding lives inside the uninstallable flash-attn package; pure-torch index_select/scatter versions are needed"),
    C("from flash_attn.flash_attn_interface import flash_attn_func, flash_attn_varlen_kvpacked_func", "attention_kernel", "removal", True, None,
      "CUDA-only kernels; replaced by torch_npu.npu_fusion_attention"),
    C("q, k = ((x * cos) + (rotate_half(x) * sin) for x in (q, k))", "npu_fused_op", "replace", False,
      "q, k = (torch_npu.npu_rotary_mul(x, cos, sin) for x in (q, k))",
      "performance only: fused RoPE kernel"),
    C('assert flash_attn_version >= "2.1.0"', "attention_kernel", "removal", True, None,
      "refers to the removed flash_attn import (NameError)"),
    C("output = flash_attn_func(q, k, v, 0.0, softmax_scale=None, causal=True).view(bsz, q_len, -1)", "attention_kernel", "replace", True,
      'output = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, "BSND", atten_mask=_causal_mask(q.device), scale=self.head_dim ** -0.5, sparse_mode=3)[0].view(bsz, q_len, -1)',
      "flash_attn_func -> npu_fusion_attention BSND with causal sparse_mode=3 (mapping used by transformers' npu_flash_attention.py)"),
    C("output_unpad = flash_attn_varlen_kvpacked_func(", "attention_kernel", "replace", True,
      'output_unpad = torch_npu.npu_fusion_attention(q, kv[:, 0], kv[:, 1], self.num_heads, "TND", atten_mask=_causal_mask(q.device), scale=self.head_dim ** -0.5, sparse_mode=3, actual_seq_qlen=cu_q_lens[1:].tolist(), actual_seq_kvlen=cu_k_lens[1:].tolist())[0]',
      "varlen kernel -> npu_fusion_attention TND layout with cumulative actual_seq_qlen/kvlen host lists"),
    C("cuda_major, cuda_minor = torch.cuda.get_device_capability()", "device_capability_check", "removal", True, None,
      "raises on an NPU host (no CUDA); the A100/H100 head-dim warning does not apply to npu_fusion_attention"),
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
      "self-test places tensors on CUDA"),
])

E("fastchat_xformers_patch", "fastchat/train/llama_xformers_attn_monkey_patch.py", "kernel_rewrite",
  "FastChat llama_xformers_attn_monkey_patch.py (xformers memory_efficient_attention hijack)", [
    C("=import xformers.ops", "attention_kernel", "removal", False, None,
      "guarded by try/except ImportError, so the import itself only logs; xformers has no NPU backend and is dropped"),
    C("attn_bias=None)", "attention_kernel", "replace", True,
      "attn_output = torch.nn.functional.scaled_dot_product_attention(query_states.transpose(1, 2), key_states.transpose(1, 2), value_states.transpose(1, 2)).transpose(1, 2)",
      "xformers is not installable on NPU -> NameError; SDPA dispatches to the NPU flash-attention kernel"),
    C("=attn_output = xformers.ops.memory_efficient_attention(", "attention_kernel", "replace", True,
      "attn_output = torch.nn.functional.scaled_dot_product_attention(query_states.transpose(1, 2), key_states.transpose(1, 2), value_states.transpose(1, 2), is_causal=True).transpose(1, 2)",
      "LowerTriangularMask -> is_causal=True with SDPA (attn_mask must be None when is_causal on NPU)"),
])

E("fastchat_train_lora", "fastchat/train/train_lora.py", "explicit_replacement",
  "FastChat fastchat/train/train_lora.py (LoRA / QLoRA with DeepSpeed ZeRO helpers)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script whose port calls torch.npu.device_count(); torch 2.1-era torch_npu has no autoload"),
    C("if not ddp and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", True,
      "if not ddp and torch.npu.device_count() > 1:",
      "returns 0 on an NPU host, so naive model parallelism for single-process QLoRA is silently skipped"),
])

E("fastchat_model_loader", "fastchat/model/model_adapter.py", "device_branch_or_abstraction",
  "FastChat fastchat/model/model_adapter.py (load_model with per-device kwargs, adapter registry)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "inference path has no transformers device probe before model.to('npu'); torch_npu must register the device (torch_npu < 2.5.1 has no autoload)"),
    C('device: str = "cuda",', "device_type", "replace", False, 'device: str = "npu",',
      "default only; every caller passes --device explicitly"),
    C('elif device == "cuda":', "device_type", "add_branch", True, 'elif device in ("cuda", "npu"):',
      "without an npu branch load_model raises 'Invalid device: npu'"),
    C('if (device == "cuda" and num_gpus == 1 and not cpu_offloading) or device in (', "device_type", "replace", True,
      'if (device in ("cuda", "npu") and num_gpus == 1 and not cpu_offloading) or device in (',
      "single-device models would silently stay on the CPU"),
    C('choices=["cpu", "cuda", "mps", "xpu"],', "device_type", "replace", True,
      'choices=["cpu", "cuda", "mps", "xpu", "npu"],', "argparse rejects --device npu"),
    C('default="cuda",', "device_type", "replace", True, 'default="npu",',
      "default --device cuda fails on an NPU host"),
])

E("fastchat_utils", "fastchat/utils.py", "explicit_replacement",
  "FastChat fastchat/utils.py (build_logger, get_gpu_memory, misc helpers)", [
    C("=torch.cuda.device_count()", "torch_cuda_api", "replace", True, "torch.npu.device_count()",
      "returns 0 on an NPU host -> empty memory list, IndexError in load_model's max_memory"),
    C("else min(max_gpus, torch.cuda.device_count())", "torch_cuda_api", "replace", True,
      "else min(max_gpus, torch.npu.device_count())", "same as above"),
    C("with torch.cuda.device(gpu_id):", "torch_cuda_api", "replace", True, "with torch.npu.device(gpu_id):",
      "CUDA device context raises without CUDA"),
    C("device = torch.cuda.current_device()", "torch_cuda_api", "replace", True, "device = torch.npu.current_device()",
      "lazy CUDA init raises"),
    C("gpu_properties = torch.cuda.get_device_properties(device)", "torch_cuda_api", "replace", True,
      "gpu_properties = torch.npu.get_device_properties(device)",
      "raises without CUDA; NPU properties do carry total_memory"),
    C("allocated_memory = torch.cuda.memory_allocated() / (1024**3)", "torch_cuda_api", "replace", True,
      "allocated_memory = torch.npu.memory_allocated() / (1024**3)",
      "CUDA allocator stats silently read 0 when CUDA is not initialised"),
])

E("fastchat_worker", "fastchat/serve/model_worker.py", "explicit_replacement",
  "FastChat fastchat/serve/model_worker.py (FastAPI worker, streaming generation, embeddings)", [
    C("except torch.cuda.OutOfMemoryError as e:", "torch_cuda_api", "replace", False,
      "except torch.OutOfMemoryError as e:",
      "unconfirmed: an NPU OOM is most likely a RuntimeError, caught by the next except clause anyway; only the reported error code differs (torch>=2.5 has torch.OutOfMemoryError)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on NPU (CUDA never initialised); NPU cache is simply not released between requests"),
    C("torch.cuda.empty_cache()  # free activations", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # free activations of long embedding batches", "same silent no-op"),
    C("except torch.cuda.OutOfMemoryError as oom:", "torch_cuda_api", "replace", False,
      "except torch.OutOfMemoryError as oom:", "same as the generate path; unconfirmed"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpus',
      "--gpus would be silently ignored by the Ascend runtime"),
])

E("fastchat_cli", "fastchat/serve/cli.py", "explicit_replacement",
  "FastChat fastchat/serve/cli.py (terminal chat) with a lab-added device banner", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpus',
      "--gpus would be silently ignored by the Ascend runtime"),
])

E("fastchat_pyproject", "pyproject.toml", "explicit_replacement",
  "FastChat pyproject.toml (optional-dependency groups for training / serving)", [
    C('model_worker = ["accelerate>=0.21"', "import_torch_npu", "npu_only_addition", False,
      'npu = ["torch-npu"]',
      "an npu extra is convenient; torch-npu can also be installed by hand next to CANN, so not required"),
    C('train = ["einops", "flash-attn>=2.0", "wandb"]', "attention_kernel", "replace", True,
      'train = ["einops", "wandb"]',
      "pip install -e '.[train]' (the documented training install) fails: flash-attn needs nvcc"),
])

E("fastchat_launch", "scripts/train_vicuna_7b.sh", "explicit_replacement",
  "FastChat docs/training.md Vicuna-7B torchrun + FSDP command wrapped in a cluster script", [
    C("# Based on the command in docs/training.md", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced for torch_npu"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL_* is ignored by HCCL; logging level only"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "HCCL counterpart of the watchdog switch (its default is already 1)"),
    C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", "replace", False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
      "ignored on NPU; memory fragmentation only (expandable_segments needs HDK >= 23.0.0)"),
    C("GPUS_PER_NODE=$(nvidia-smi", "torch_cuda_api", "replace", True,
      "GPUS_PER_NODE=$(python -c 'import torch, torch_npu; print(torch.npu.device_count())')",
      "nvidia-smi does not exist on an Ascend host -> empty --nproc_per_node and torchrun fails"),
    C('--fsdp "full_shard auto_wrap offload"', "distributed_framework", "replace", False,
      '--deepspeed playground/deepspeed_config_s3.json \\',
      "unconfirmed: FSDP is marked unsupported in Ascend's 2.7.1 API list; DeepSpeed ZeRO-3 is the safer route"),
    C("--tf32 True", "device_capability_check", "replace", True, "--tf32 False \\",
      "TrainingArguments raises when tf32 is requested and is_torch_tf32_available() is False"),
])

# ---------------------------------------------------------------- alpaca-lora-style project
E("alpaca_lora_finetune", "finetune.py", "explicit_replacement",
  "tloen/alpaca-lora finetune.py (8-bit LoRA with peft, fire CLI, torch.compile)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script whose port calls torch.npu.device_count() before any Trainer device probe"),
    C("load_in_8bit=True,", "unsupported_op_workaround", "replace", True, "load_in_8bit=False,",
      "LLM.int8 (bitsandbytes 8-bit) is not available on Ascend; train the LoRA on fp16 weights instead"),
    C("model = prepare_model_for_int8_training(model)", "unsupported_op_workaround", "replace", False,
      "model.gradient_checkpointing_enable()",
      "still runs on an unquantised model but only makes sense for 8-bit weights (upcasts params, memory only)"),
    C("if not ddp and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", True,
      "if not ddp and torch.npu.device_count() > 1:",
      "returns 0 on an NPU host: naive model parallel silently disabled"),
    C("model = torch.compile(model)", "compile_mode", "removal", False, None,
      "unconfirmed: Inductor on NPU only from torch_npu 2.6 (or TorchAir backend); with the 2.1-era stack safer to skip"),
])

E("alpaca_lora_generate", "generate.py", "device_branch_or_abstraction",
  "tloen/alpaca-lora generate.py (module-level device pick, Gradio UI, streaming generate)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the module-level device pick needs torch.npu before anything else runs"),
    C("if torch.cuda.is_available():", "device_type", "add_branch", True,
      'elif torch.npu.is_available(): device = "npu"',
      "without an npu branch the demo silently runs on the CPU"),
    C('if device == "cuda":', "device_type", "add_branch", False, 'if device in ("cuda", "npu"):',
      "the fall-through branch already works with device_map={'': 'npu'} (then model.half()); adding npu only avoids an fp32 load"),
    C("load_in_8bit=load_8bit,", "unsupported_op_workaround", "replace", False, "load_in_8bit=False,",
      "only with --load_8bit (default off): LLM.int8 not available on Ascend"),
    C("model = torch.compile(model)", "compile_mode", "removal", False, None,
      "unconfirmed: Inductor on NPU only from torch_npu 2.6 / TorchAir; skip on the 2.1-era stack"),
])

E("alpaca_lora_export", "export_hf_checkpoint.py", "device_branch_or_abstraction",
  "tloen/alpaca-lora export_hf_checkpoint.py (merge LoRA into base weights) with a MERGE_DEVICE tweak", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "only needed once the merge device default names the NPU (itself a performance-only change)"),
    C('MERGE_DEVICE = os.environ.get("MERGE_DEVICE", "cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", False,
      'MERGE_DEVICE = os.environ.get("MERGE_DEVICE", "npu" if torch.npu.is_available() else "cpu")',
      "falls back to a CPU merge on an NPU host: correct, only slower"),
])

# ---------------------------------------------------------------- artidoro/qlora-style project
E("qlora_main", "qlora.py", "device_branch_or_abstraction",
  "artidoro/qlora qlora.py (4-bit NF4 + LoRA, get_accelerate_model, paged optimizers)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "get_accelerate_model queries torch.npu before any Trainer device probe"),
    C("torch.backends.cuda.matmul.allow_tf32 = True", "torch_cuda_api", "replace", False,
      "torch.npu.matmul.allow_hf32 = True",
      "its CUDA guard is False on NPU so the line never runs; only a matmul precision/perf knob (NPU HF32 counterpart unconfirmed)"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      "elif torch.npu.is_available(): n_gpus = torch.npu.device_count()",
      "n_gpus stays 0 -> max_memory is {} and max_memory[local_rank] raises KeyError under torchrun"),
    C("load_in_8bit=args.bits == 8,", "unsupported_op_workaround", "replace", False, "load_in_8bit=False,",
      "only with --bits 8 (default 4): LLM.int8 is not available for Ascend in bitsandbytes"),
    C("if torch.cuda.is_bf16_supported():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_bf16_supported():",
      "torch 2.1's is_bf16_supported() calls current_device() and raises without CUDA (newer torch just returns False)"),
    C("optim: str = field(default='paged_adamw_32bit'", "fused_optimizer", "replace", True,
      "optim: str = field(default='adamw_torch', metadata={\"help\": 'The optimizer to be used'})",
      "bitsandbytes paged optimizers use CUDA unified memory; no Ascend implementation"),
])

E("qlora_launch", "scripts/finetune_guanaco_7b.sh", "explicit_replacement",
  "artidoro/qlora scripts/finetune_guanaco_7b.sh (single-GPU QLoRA launch)", [
    C("# to pick a card on a shared box.", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment for torch_npu"),
    C("export CUDA_VISIBLE_DEVICES=${GPU:-0}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU:-0}",
      "ignored on Ascend: GPU=3 would silently still run on device 0"),
    C("export CUDA_LAUNCH_BLOCKING=${DEBUG:-0}", "env_var", "replace", False,
      "export ASCEND_LAUNCH_BLOCKING=${DEBUG:-0}", "debug-only synchronous launch switch"),
    C("--optim paged_adamw_32bit", "fused_optimizer", "replace", True, "--optim adamw_torch \\",
      "bitsandbytes paged AdamW needs CUDA unified memory; not available on Ascend"),
])

E("qlora_reqs", "requirements.txt", "explicit_replacement",
  "artidoro/qlora requirements.txt (pinned bnb / transformers / peft / accelerate)", [
    C("bitsandbytes==0.40.0", "unsupported_op_workaround", "replace", True,
      "bitsandbytes @ git+https://github.com/bitsandbytes-foundation/bitsandbytes.git@multi-backend-refactor",
      "0.40 is a CUDA-only build; Ascend NF4 quant/dequant exists only in the multi-backend branch (PR #1422)"),
    C("transformers==4.31.0", "device_type", "replace", True, "transformers>=4.32.0",
      "native NPU device selection in transformers starts at 4.32.0; 4.31 trains on the CPU"),
    C("peft==0.4.0", "device_type", "replace", False, "peft>=0.5.0",
      "peft NPU support (infer_device) from 0.5.0; qlora passes devices explicitly, so unconfirmed whether 0.4 breaks"),
    C("accelerate==0.21.0", "device_type", "replace", True, "accelerate>=0.22.0",
      "accelerate learns NPU (hccl backend, device maps) in 0.22.0"),
    C("wandb==0.15.3", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "torch-npu (matching the installed torch) is required and not pulled by anything here"),
    C("nvidia-ml-py==12.535.77", "torch_cuda_api", "removal", False, None,
      "NVML bindings install fine but have nothing to talk to on Ascend; only used for optional GPU monitoring"),
])

# ---------------------------------------------------------------- HF example-script copies
E("hf_run_clm", "examples/run_clm.py", "explicit_replacement",
  "transformers examples/pytorch/language-modeling/run_clm.py copy with FA2 flag and peak-memory metrics", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "port calls torch.npu memory APIs directly"),
    C('attn_implementation = "flash_attention_2" if model_args.use_flash_attn else "sdpa"', "attention_kernel", "replace", True,
      'attn_implementation = "sdpa"',
      "--use_flash_attn defaults to True; with transformers 4.36 FA2 requires the flash-attn package (ImportError on NPU); SDPA reaches the NPU fused attention"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device and raises 'Torch not compiled with CUDA' on the CPU torch wheel used with torch_npu"),
    C('metrics["train_peak_mem_gb"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)', "torch_cuda_api", "replace", True,
      'metrics["train_peak_mem_gb"] = round(torch.npu.max_memory_allocated() / 2**30, 2)',
      "CUDA stats silently read 0 when CUDA was never initialised: wrong metric"),
])

E("hf_run_mlm", "examples/run_mlm.py", "explicit_replacement",
  "transformers examples/pytorch/language-modeling/run_mlm.py copy (DAPT variant with whole-word masking)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the ported fp16 check calls torch.npu.is_available() right after argument parsing"),
    C("if training_args.fp16 and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if training_args.fp16 and not torch.npu.is_available():",
      "lab-added guard raises on every NPU run with --fp16"),
])

E("hf_run_glue", "examples/run_glue.py", "explicit_replacement",
  "transformers examples/pytorch/text-classification/run_glue.py copy with apex FusedAdam and a smoke prediction", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "port constructs torch_npu.optim.NpuFusedAdamW by name"),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", True,
      "from torch_npu.optim import NpuFusedAdamW",
      "NVIDIA apex FusedAdam needs the CUDA amp_C/fused_adam_cuda extensions; use_fused_adam defaults to True"),
    C("return FusedAdam(", "fused_optimizer", "replace", True, "return NpuFusedAdamW(",
      "NpuFusedAdamW takes (params, lr, betas, eps, weight_decay); drop adam_w_mode=True"),
    C("adam_w_mode=True,", "fused_optimizer", "removal", True, None,
      "NpuFusedAdamW has no adam_w_mode argument (TypeError); it is already decoupled AdamW"),
    C('enc = tokenizer(lab_args.sanity_sentence, return_tensors="pt").to("cuda")', "tensor_to_device", "replace", True,
      'enc = tokenizer(lab_args.sanity_sentence, return_tensors="pt").to(training_args.device)',
      "hard-coded CUDA device for the post-training smoke prediction"),
])

# ---------------------------------------------------------------- lab research utilities
E("weighted_trainer", "src/trainers/weighted_trainer.py", "explicit_replacement",
  "research-repo Trainer subclasses overriding compute_loss (class weights, distillation) with torch.cuda.amp", [
    C("class_weights = class_weights.cuda()", "tensor_to_device", "replace", True,
      "class_weights = class_weights.to(self.args.device)",
      "Tensor.cuda() raises without CUDA"),
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", False,
      'with torch.autocast(device_type="npu", enabled=False):',
      "CUDA autocast is a warned no-op on NPU; the block only computes the loss from already-produced logits, which are upcast with .float(), so the loss is fp32 either way"),
    C("with torch.no_grad(), torch.cuda.amp.autocast(enabled=self.teacher_fp16, dtype=torch.float16):", "amp", "replace", False,
      'with torch.no_grad(), torch.autocast(device_type="npu", enabled=self.teacher_fp16, dtype=torch.float16):',
      "silently disabled: the (unprepared) teacher forward runs in its load dtype instead of fp16 autocast; logits are upcast anyway, so memory/speed only"),
])

E("trainer_callbacks", "src/trainers/callbacks.py", "explicit_replacement",
  "research-repo TrainerCallbacks: torch.cuda memory stats, CUDA-event throughput, NVML sampling, torch.profiler window", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "port uses torch_npu.profiler by name"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "False on NPU: only the informational device banner is skipped"),
    C("name = torch.cuda.get_device_name(torch.cuda.current_device())", "torch_cuda_api", "replace", False,
      "name = torch.npu.get_device_name(torch.npu.current_device())",
      "dead on NPU until the guard above is ported; would raise once it is"),
    C("total = torch.cuda.get_device_properties(0).total_memory / GiB", "torch_cuda_api", "replace", False,
      "total = torch.npu.get_device_properties(0).total_memory / GiB", "same: dead code behind the CUDA guard"),
    C('logs["mem/alloc_gb"] = round(torch.cuda.memory_allocated() / GiB, 3)', "torch_cuda_api", "replace", True,
      'logs["mem/alloc_gb"] = round(torch.npu.memory_allocated() / GiB, 3)',
      "CUDA allocator stats silently read 0 on NPU: wrong logged metric"),
    C('logs["mem/peak_alloc_gb"] = round(torch.cuda.max_memory_allocated() / GiB, 3)', "torch_cuda_api", "replace", True,
      'logs["mem/peak_alloc_gb"] = round(torch.npu.max_memory_allocated() / GiB, 3)', "silently 0"),
    C('logs["mem/reserved_gb"] = round(torch.cuda.memory_reserved() / GiB, 3)', "torch_cuda_api", "replace", True,
      'logs["mem/reserved_gb"] = round(torch.npu.memory_reserved() / GiB, 3)', "silently 0"),
    C('logs["mem/peak_reserved_gb"] = round(torch.cuda.max_memory_reserved() / GiB, 3)', "torch_cuda_api", "replace", True,
      'logs["mem/peak_reserved_gb"] = round(torch.npu.max_memory_reserved() / GiB, 3)', "silently 0"),
    C("=torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device and raises on the CPU torch wheel"),
    C("self._start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "self._start_evt = torch.npu.Event(enable_timing=True)", "CUDA Event cannot be created without CUDA"),
    C("self._end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "self._end_evt = torch.npu.Event(enable_timing=True)", "same"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("self.schedule = torch.profiler.schedule(", "torch_cuda_api", "replace", False,
      "self.schedule = torch_npu.profiler.schedule(wait=wait, warmup=warmup, active=active, repeat=1)",
      "schedule is a plain step->action function; swapped for consistency with the Ascend profiler (transfer_to_npu does the same)"),
    C("self.prof = torch.profiler.profile(", "torch_cuda_api", "replace", True, "self.prof = torch_npu.profiler.profile(",
      "the stock profiler records no NPU kernels: the trace silently lacks all device activity"),
    C("torch.profiler.ProfilerActivity.CPU,", "torch_cuda_api", "replace", False,
      "torch_npu.profiler.ProfilerActivity.CPU,",
      "unconfirmed whether torch_npu.profiler accepts the stock enum; swapped alongside the NPU activity"),
    C("torch.profiler.ProfilerActivity.CUDA,", "torch_cuda_api", "replace", True,
      "torch_npu.profiler.ProfilerActivity.NPU,", "no CUDA activity exists on an Ascend host"),
    C("on_trace_ready=torch.profiler.tensorboard_trace_handler(trace_dir),", "torch_cuda_api", "replace", False,
      "on_trace_ready=torch_npu.profiler.tensorboard_trace_handler(trace_dir),",
      "unconfirmed that the stock handler fails with the Ascend profiler; torch_npu's writes the *_ascend_pt layout that MindStudio / msprof-analyze read"),
    C("peak = torch.cuda.max_memory_reserved() / GiB", "torch_cuda_api", "replace", True,
      "peak = torch.npu.max_memory_reserved() / GiB",
      "silently 0 on NPU: the over-budget dump never fires"),
    C('if _HAS_NVML and os.environ.get("LOG_NVML", "1") == "1":', "torch_cuda_api", "replace", True,
      'if _HAS_NVML and os.environ.get("LOG_NVML", "0") == "1":',
      "with nvidia-ml-py installed, nvmlInit() raises NVMLError_LibraryNotFound on an Ascend host; NVML sampling has to be off by default (or rewritten around torch.npu.utilization())"),
])

E("eval_ppl", "eval/eval_ppl.py", "explicit_replacement",
  "HF perplexity-guide sliding-window eval script as carried in LoRA/QLoRA research repos", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "standalone script (no Trainer) that moves the model to an npu device"),
    C('p.add_argument("--device", default="cuda:0")', "device_type", "replace", True,
      'p.add_argument("--device", default="npu:0")', "default device string"),
    C('sd = torch.load(adapter_path, map_location="cuda:0")', "device_type", "replace", True,
      'sd = torch.load(adapter_path, map_location="cpu")',
      "deserialising onto cuda:0 raises on an NPU host; the merge moves the delta to the weight's device anyway"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16):', "amp", "replace", False,
      'with torch.autocast(device_type="npu", dtype=torch.float16):',
      "warned no-op on NPU; weights are already in --dtype (fp16 by default), so only --dtype float32 runs lose the fp16 speed-up"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "removal", False, None,
      "silent no-op; torch.manual_seed already seeds the NPU generator"),
    C('device = torch.device(args.device if torch.cuda.is_available() else "cpu")', "torch_cuda_api", "replace", True,
      'device = torch.device(args.device if torch.npu.is_available() else "cpu")',
      "silently evaluates on the CPU"),
    C("model = model.cuda(device)", "tensor_to_device", "replace", True, "model = model.to(device)",
      "Module.cuda raises without CUDA"),
    C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):", "attention_kernel", "replace", False,
      "with contextlib.nullcontext():",
      "only with --flash_sdp; backend switches are marked unsupported in Ascend's 2.7.1 list and SDPA picks the NPU kernel itself (effect on NPU unconfirmed)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op between datasets"),
    C('"device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",', "device_type", "replace", False,
      '"device_name": torch.npu.get_device_name(device) if device.type == "npu" else "cpu",',
      "metadata only: records 'cpu' as device name for an NPU run"),
])

E("ds_zero3_config", "configs/ds_zero3_offload.json", "explicit_replacement",
  "DeepSpeed ZeRO-3 + CPU offload config as shipped with Trainer repos (FastChat/LLaVA-style, 'auto' values)", [
    # Deliberately no labels: every key is device-neutral. DeepSpeed picks its accelerator (npu -> hccl) at runtime,
    # "auto" values come from TrainingArguments, offload device "cpu" and pin_memory are supported paths.
])

E("accelerate_fsdp_config", "configs/accelerate_fsdp.yaml", "explicit_replacement",
  "accelerate config (accelerate config / default_config.yaml) for FSDP on one 8-GPU node", [
    C("distributed_type: FSDP", "distributed_framework", "replace", False, "distributed_type: DEEPSPEED",
      "unconfirmed: Ascend's 2.7.1 API list marks FullyShardedDataParallel unsupported although accelerate/transfer_to_npu patch it; DeepSpeed ZeRO-3 is the conservative route (needs a deepspeed_config block)"),
])

E("docker_train", "docker/Dockerfile", "explicit_replacement",
  "training Dockerfile of an LLM SFT repo (CUDA devel base, cu118 wheels, flash-attn/xformers/DeepSpeed prebuilt ops)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "device_type", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "the image must carry CANN (driver mounted from the host) instead of the CUDA toolkit"),
    C('TORCH_CUDA_ARCH_LIST="7.0;8.0;8.6;9.0+PTX" \\', "env_var", "removal", False, None,
      "only read by nvcc extension builds; harmless but meaningless on Ascend"),
    C("RUN pip install torch==2.1.2 torchvision==0.16.2 --index-url https://download.pytorch.org/whl/cu118", "device_type", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu",
      "torch_npu pairs with the CPU wheel of exactly torch 2.1.0 (there is no torch_npu for 2.1.2)"),
    C("RUN pip install -r /tmp/requirements.txt", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install torch-npu==2.1.0.post10", "torch-npu wheel matching torch 2.1.0 / CANN 8.0.0"),
    C("RUN DS_BUILD_FUSED_ADAM=1 DS_BUILD_CPU_ADAM=1 pip install deepspeed==0.12.6", "custom_cuda_extension", "replace", True,
      "RUN pip install deepspeed==0.12.6",
      "prebuilding DeepSpeed's CUDA fused-Adam op needs nvcc; on Ascend DeepSpeed uses its NPU accelerator / op builders at runtime"),
    C("RUN MAX_JOBS=8 pip install flash-attn==2.5.2 --no-build-isolation", "attention_kernel", "removal", True, None,
      "flash-attn cannot be built without CUDA"),
    C("RUN pip install xformers==0.0.23.post1 --index-url https://download.pytorch.org/whl/cu118", "attention_kernel", "removal", True, None,
      "no NPU backend, and the cu118 wheel would drag a CUDA torch back in"),
    C("RUN pip install bitsandbytes==0.42.0 nvidia-ml-py", "unsupported_op_workaround", "replace", True,
      "RUN pip install 'bitsandbytes @ git+https://github.com/bitsandbytes-foundation/bitsandbytes.git@multi-backend-refactor'",
      "0.42 is CUDA-only; Ascend NF4 support lives in the multi-backend branch; NVML bindings are useless on Ascend"),
    C("WORKDIR /workspace", "import_torch_npu", "npu_only_addition", False,
      "RUN echo 'source /usr/local/Ascend/ascend-toolkit/set_env.sh' >> /root/.bashrc",
      "CANN base images usually export the toolkit environment already"),
    C("ENV NCCL_DEBUG=WARN", "env_var", "replace", False, "ENV ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL variables are ignored by HCCL; log level only"),
])

E("conda_env", "environment.yml", "explicit_replacement",
  "conda environment.yml of an LLM fine-tuning repo (pytorch + nvidia channels, pip section)", [
    C("=- nvidia", "device_type", "removal", False, None,
      "channel only serves CUDA runtime packages; harmless once pytorch-cuda is gone"),
    C("- pytorch-cuda=11.8", "device_type", "replace", True, "- cpuonly",
      "pulls the CUDA build of pytorch; torch_npu needs the CPU build of torch 2.1.0"),
    C("- cudatoolkit-dev=11.7", "custom_cuda_extension", "removal", False, None,
      "nvcc only needed to build flash-attn/apex CUDA extensions, which are dropped"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post10",
      "torch-npu wheel matching pytorch 2.1.0"),
    C("- bitsandbytes==0.41.3", "unsupported_op_workaround", "replace", True,
      "- bitsandbytes @ git+https://github.com/bitsandbytes-foundation/bitsandbytes.git@multi-backend-refactor",
      "CUDA-only release; Ascend NF4 support only in the multi-backend branch"),
    C("- flash-attn==2.4.2", "attention_kernel", "removal", True, None, "needs nvcc/CUDA to build: env creation fails"),
    C("- git+https://github.com/NVIDIA/apex.git@23.08", "fused_optimizer", "removal", False, None,
      "a plain pip install of apex builds python-only and succeeds; its fused CUDA kernels are unusable (code moves to torch_npu.optim)"),
])

E("ds_rm_launch", "scripts/run_rm_deepspeed.sh", "explicit_replacement",
  "DeepSpeed-Chat / OpenRLHF-style reward-model launch script (deepspeed launcher, NCCL tweaks)", [
    C("# Multi-node: set HOSTFILE=", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment for torch_npu / HCCL"),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
      "consumer-GPU P2P workaround; ignored by HCCL and has no counterpart to set"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "ignored by HCCL"),
    C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}", "env_var", "replace", True,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "multi-node path: HCCL ignores NCCL_SOCKET_IFNAME and picks the host NIC by its own order, which may not reach the root node"),
    C("export TORCH_NCCL_BLOCKING_WAIT=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "NCCL process-group knob; HCCL error handling is configured separately"),
    C("--tf32 True", "device_capability_check", "replace", True, "--tf32 False \\",
      "TrainingArguments raises when tf32 is requested and is_torch_tf32_available() is False"),
])

E("reward_model_train", "train_rm.py", "explicit_replacement",
  "reward-model training script of an RLHF repo (custom RewardTrainer.compute_loss, deepspeed.init_distributed)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "torch.npu.set_device runs before any Trainer/DeepSpeed device probe"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C('deepspeed.init_distributed(dist_backend="nccl")', "dist_backend", "replace", True,
      'deepspeed.init_distributed(dist_backend="hccl")',
      "NCCL backend is unavailable on Ascend; DeepSpeed's NPU accelerator uses hccl"),
    C("batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}", "tensor_to_device", "replace", True,
      "batch = {k: v.to(model.device, non_blocking=True) for k, v in batch.items()}",
      "Tensor.cuda raises without CUDA (--eval_only path)"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
      "Module.cuda raises without CUDA (--eval_only path)"),
    C('f"peak memory on rank0: {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB, "', "torch_cuda_api", "replace", True,
      'f"peak memory on rank0: {torch.npu.max_memory_allocated() / 2**30:.1f} GiB, "',
      "silently logs 0 GiB"),
])
