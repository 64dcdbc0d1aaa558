"""Labels for probe496 (code LLMs: StarCoder/SantaCoder, bigcode-evaluation-harness, CodeT5/CodeT5+,
Code Llama, llama-recipes, bigcode Megatron-LM).  One C(...) per upstream line a careful porter edits."""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ---------------------------------------------------------------------------------------------
# bigcode-project/starcoder
# ---------------------------------------------------------------------------------------------
E("sc_finetune", "finetune/finetune.py", "explicit_replacement",
  "bigcode-project/starcoder finetune/finetune.py (PEFT LoRA + 8-bit + HF Trainer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu",
      "Explicit-port habit; not required: everything device-related goes through HF Trainer/accelerate, "
      "which import torch_npu themselves when it is installed (and torch_npu>=2.5.1 autoloads)."),
    C("load_in_8bit=True,", "unsupported_op_workaround", "removal", True, None,
      "Unconditional LLM.int8 load needs bitsandbytes' CUDA kernels; knowledge §6 lists only NF4 (4-bit) for "
      "NPU, no LLM.int8. Load in bf16/fp16 instead (prepare_model_for_int8_training still works on a "
      "non-quantised model, so that line can stay)."),
])

E("sc_merge", "finetune/merge_peft_adapters.py", "explicit_replacement",
  "bigcode-project/starcoder finetune/merge_peft_adapters.py", [])

E("sc_chat_generate", "chat/generate.py", "explicit_replacement",
  "bigcode-project/starcoder chat/generate.py (StarChat sampling script)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "The ported device line calls torch.npu.is_available() at the top of main(), before any HF/accelerate "
      "code has imported torch_npu, so the attribute must exist (torch_npu<2.5.1 has no autoload)."),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "Otherwise inputs stay on CPU while device_map='auto' put the model on npu:0 -> device mismatch in generate."),
])

E("sc_chat_config", "chat/config.yaml", "explicit_replacement",
  "bigcode-project/starcoder chat/config.yaml (StarChat TrainingArguments recipe)", [
    C("tf32: true", "device_capability_check", "replace", True,
      "tf32: false",
      "TrainingArguments(tf32=True) raises 'requires Ampere or a newer GPU arch, cuda>=11' when "
      "is_torch_tf32_available() is False, which it is without CUDA (transformers 4.28 era pinned here). "
      "Newer transformers may map tf32 to NPU HF32 - unconfirmed, so turn it off."),
])

E("sc_ds_config", "chat/deepspeed_z3_config_bf16.json", "explicit_replacement",
  "bigcode-project/starcoder chat/deepspeed_z3_config_bf16.json", [])

E("sc_requirements", "requirements.txt", "explicit_replacement",
  "bigcode-project/starcoder requirements.txt", [
    C("=torch", "import_torch_npu", "npu_only_addition", True,
      "torch-npu",
      "torch_npu wheel must be installed next to a matching torch (same x.y.z, knowledge §1.1)."),
    C("=bitsandbytes", "unsupported_op_workaround", "removal", False, None,
      "Only needed for the 8-bit load that the port removes; leaving it installed is harmless."),
    C("deepspeed==0.9.1", "distributed_framework", "replace", True,
      "deepspeed>=0.14.0",
      "0.9.1 has neither the upstream NPU_Accelerator (added in later releases; exact first version not in "
      "knowledge, the pin chosen is a safe recent one) nor Ascend's deepspeed_npu plugin, which supports only "
      "0.9.2 (knowledge §6). StarChat's ZeRO-3 training cannot start on NPU with this pin."),
])

# ---------------------------------------------------------------------------------------------
# bigcode-project/bigcode-evaluation-harness
# ---------------------------------------------------------------------------------------------
E("beh_main", "main.py", "explicit_replacement",
  "bigcode-project/bigcode-evaluation-harness main.py (accelerate-driven generation + eval)", [])

E("beh_generation", "bigcode_eval/generation.py", "explicit_replacement",
  "bigcode-project/bigcode-evaluation-harness bigcode_eval/generation.py", [])

E("beh_utils", "bigcode_eval/utils.py", "explicit_replacement",
  "bigcode-project/bigcode-evaluation-harness bigcode_eval/utils.py (TokenizedDataset, complete_code)", [])

E("beh_humaneval", "bigcode_eval/tasks/humaneval.py", "explicit_replacement",
  "bigcode-project/bigcode-evaluation-harness bigcode_eval/tasks/humaneval.py", [])

E("beh_docker", "Dockerfile-cuda", "explicit_replacement",
  "bigcode-project/bigcode-evaluation-harness Dockerfile-cuda", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "env_var", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "Base image must carry the CANN toolkit/runtime (and its set_env ENV) instead of the CUDA toolkit; "
      "image tag is illustrative."),
    C("pip3 install torch==2.1.2 --index-url https://download.pytorch.org/whl/cu118", "import_torch_npu",
      "replace", True,
      "RUN pip3 install torch==2.1.0 --index-url https://download.pytorch.org/whl/cpu && pip3 install torch-npu==2.1.0.post10",
      "CUDA wheel -> CPU torch + torch_npu; torch_npu pairs with torch 2.1.0 (not 2.1.2), knowledge §1.2."),
    C("ENV CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False,
      "ENV ASCEND_RT_VISIBLE_DEVICES=0",
      "Only restricts visibility; a single accelerate process uses device 0 anyway."),
])

# ---------------------------------------------------------------------------------------------
# salesforce/CodeT5 and CodeT5+
# ---------------------------------------------------------------------------------------------
E("ct5_configs", "CodeT5/configs.py", "explicit_replacement",
  "salesforce/CodeT5 CodeT5/configs.py (add_args, set_dist, set_seed)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "set_dist() is the first torch.npu user for every CodeT5 entry script (run_gen/run_defect/run_clone/"
      "run_multi_gen), so the import lives here rather than in run_gen.py."),
    C('device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")',
      "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")',
      "Otherwise the whole run silently falls back to CPU."),
    C("args.n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.n_gpu = torch.npu.device_count()",
      "n_gpu drives seeding, loss.mean() and the multi-device path."),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", ""),
    C('device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", args.local_rank)', ""),
    C("torch.distributed.init_process_group(backend='nccl')", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl')", ""),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)",
      "torch.manual_seed() two lines above already seeds the accelerator generators in recent torch "
      "(unconfirmed for the privateuse1/NPU backend in knowledge), so explicit for clarity only."),
])

E("ct5_models", "CodeT5/models.py", "explicit_replacement",
  "salesforce/CodeT5 CodeT5/models.py (build_or_load_gen_model, CodeBERT-style Seq2Seq + Beam)", [
    C("model.load_state_dict(torch.load(args.load_model_path))", "tensor_to_device", "replace", True,
      'model.load_state_dict(torch.load(args.load_model_path, map_location="cpu"))',
      "--load_model_path points at released/GPU-trained checkpoints whose storages are tagged cuda; "
      "unpickling them on a host without CUDA fails."),
    C("zero = torch.cuda.LongTensor(1).fill_(0)", "torch_cuda_api", "replace", True,
      "zero = torch.zeros(1, dtype=torch.long, device=source_ids.device)",
      "Legacy CUDA typed-tensor constructor in the roberta/codebert beam-search path."),
    C("self.tt = torch.cuda", "torch_cuda_api", "replace", True,
      "self.tt = torch.npu",
      "Beam builds FloatTensor/LongTensor through self.tt; torch_npu provides the same typed-tensor names "
      "in torch.npu (knowledge §2.1 list)."),
])

E("ct5_run_gen", "CodeT5/run_gen.py", "explicit_replacement",
  "salesforce/CodeT5 CodeT5/run_gen.py (generation fine-tuning/eval loop)", [
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
      "logger.warning('torch.nn.DataParallel is not supported on NPU; launch one process per NPU with torch.distributed')",
      "With n_gpu = torch.npu.device_count() > 1 in single-process mode this path is taken, and "
      "torch.nn.DataParallel is unsupported on Ascend (TSV ✘)."),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", True,
      "torch.npu.empty_cache()", "After the ppl eval; the CUDA call is a silent no-op on NPU."),
    C("torch.cuda.empty_cache()  # free cached blocks before the next epoch", "torch_cuda_api", "replace", True,
      "torch.npu.empty_cache()  # free cached blocks before the next epoch", ""),
])

E("ct5_utils", "CodeT5/utils.py", "explicit_replacement",
  "salesforce/CodeT5 CodeT5/utils.py (data caching helpers)", [])

E("ct5_exp_sh", "CodeT5/sh/exp_with_args.sh", "explicit_replacement",
  "salesforce/CodeT5 CodeT5/sh/exp_with_args.sh", [
    C("CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU} \\",
      "run_exp.py launches experiments on different --gpu indices; without the Ascend variable every job "
      "sees all NPUs, takes the multi-device path and they all land on npu:0."),
])

E("ct5p_tune", "CodeT5+/tune_codet5p_seq2seq.py", "explicit_replacement",
  "salesforce/CodeT5 CodeT5+/tune_codet5p_seq2seq.py (HF Trainer fine-tuning)", [])

E("ct5p_humaneval_gen", "CodeT5+/humaneval/generate_codet5p.py", "explicit_replacement",
  "salesforce/CodeT5 CodeT5+/humaneval/generate_codet5p.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "torch.npu.current_device() is called directly after from_pretrained, which does not go through accelerate."),
    C("model.to(torch.cuda.current_device())", "tensor_to_device", "replace", True,
      'model.to(f"npu:{torch.npu.current_device()}")',
      "A bare int passed to .to() means a CUDA ordinal, so the NPU index has to be spelled as 'npu:N'."),
    C("=torch.cuda.current_device())", "tensor_to_device", "replace", True,
      'f"npu:{torch.npu.current_device()}")',
      "BatchEncoding.to(int) forwards the int to Tensor.to -> CUDA ordinal."),
    C("max_length=args.max_len).to(torch.cuda.current_device())", "tensor_to_device", "replace", True,
      'max_length=args.max_len).to(f"npu:{torch.npu.current_device()}")', ""),
])

E("ct5p_humaneval_sh", "CodeT5+/humaneval/run_generate.sh", "explicit_replacement",
  "salesforce/CodeT5 CodeT5+/humaneval/run_generate.sh", [
    C("CUDA_VISIBLE_DEVICES=$gpu python generate_codet5p.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$gpu python generate_codet5p.py --model Salesforce/${model} \\",
      "Eight background workers each pinned to one device; ignored CUDA variable puts all eight 16B "
      "models on npu:0."),
])

# ---------------------------------------------------------------------------------------------
# meta-llama/codellama
# ---------------------------------------------------------------------------------------------
E("cl_generation", "llama/generation.py", "explicit_replacement",
  "meta-llama/codellama llama/generation.py (Llama.build / generate / infilling)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Module-level device probe below needs torch.npu at import time."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "Otherwise the module-level device global silently becomes 'cpu' (gloo, CPU fp16)."),
    C('device = "cuda"', "device_type", "replace", True,
      'device = "npu"', ""),
    C('backend = "nccl" if device == "cuda" else "gloo"', "dist_backend", "replace", True,
      'backend = "hccl" if device == "npu" else "gloo"', ""),
    C('=if device == "cuda":', "device_type", "replace", True,
      'if device == "npu":', "Guards set_device; must follow the renamed device global."),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)", ""),
    C('if device == "cuda":  # bf16 where', "device_type", "replace", True,
      'if device == "npu":  # bf16 where the NPU has it, fp16 otherwise', ""),
    C("if torch.cuda.is_bf16_supported():", "device_capability_check", "replace", True,
      "if torch.npu.is_bf16_supported():",
      "torch.cuda.is_bf16_supported() is False without CUDA -> fp16 silently chosen on bf16-capable NPUs."),
    C("torch.set_default_tensor_type(torch.cuda.BFloat16Tensor)", "torch_cuda_api", "replace", True,
      'torch.set_default_dtype(torch.bfloat16); torch.set_default_device("npu")',
      "Ascend's API table: set_default_tensor_type does not accept torch.npu.<Dtype>Tensor types, so the "
      "1:1 rename is not enough; use default dtype + default device."),
    C("torch.set_default_tensor_type(torch.cuda.HalfTensor)", "torch_cuda_api", "replace", True,
      'torch.set_default_dtype(torch.float16); torch.set_default_device("npu")',
      "Same restriction as above."),
])

E("cl_model", "llama/model.py", "explicit_replacement",
  "meta-llama/codellama llama/model.py (fairscale model-parallel Transformer, complex RoPE)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "Only needed for the optional npu_rms_norm below; the module-level torch.npu probe works because "
      "llama/__init__.py imports generation.py (which imports torch_npu) first."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():", "Module-level device global, duplicated from generation.py."),
    C('device = "cuda"', "device_type", "replace", True, 'device = "npu"', ""),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available():",
      "MPS workaround that moves q/k to CPU for the complex RoPE; left as-is it fires on NPU and the CPU "
      "tensors meet the NPU freqs_cis -> device mismatch. view_as_complex/polar are supported on NPU "
      "(fp32 inputs, which the code already uses), so the NPU keeps the on-device path."),
    C("output = self._norm(x.float()).type_as(x)", "npu_fused_op", "replace", False,
      "return torch_npu.npu_rms_norm(x, self.weight, epsilon=self.eps)[0]",
      "Performance only: fused RMSNorm (knowledge §5); the following line becomes dead."),
])

E("cl_requirements", "requirements.txt", "explicit_replacement",
  "meta-llama/codellama requirements.txt", [
    C("=torch", "import_torch_npu", "npu_only_addition", True, "torch-npu",
      "generation.py now imports torch_npu."),
])

E("cl_setup_sh", "run_completion.sh", "explicit_replacement",
  "meta-llama/codellama README torchrun recipe wrapped as a launcher (synthetic path)", [
    C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-$(seq -s, 0 $((MP-1)))}",
      "Default selects devices 0..MP-1, which torchrun local ranks use anyway; only user overrides are lost."),
    C("nvidia-smi --query-gpu", "env_var", "replace", True,
      "npu-smi info",
      "With set -e a missing nvidia-smi aborts the script before torchrun."),
])

# ---------------------------------------------------------------------------------------------
# facebookresearch/llama-recipes (Code Llama fine-tuning / inference recipes)
# ---------------------------------------------------------------------------------------------
E("lr_finetuning", "src/llama_recipes/finetuning.py", "explicit_replacement",
  "facebookresearch/llama-recipes src/llama_recipes/finetuning.py (FSDP/PEFT fine-tuning entry)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "torch.npu.* is used before any HF/accelerate code runs."),
    C("torch.cuda.manual_seed(train_config.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(train_config.seed)",
      "Followed by torch.manual_seed(), which seeds accelerator generators too (unconfirmed for NPU)."),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)", ""),
    C("device_id=torch.cuda.current_device(),", "torch_cuda_api", "replace", True,
      'device_id=torch.device("npu", torch.npu.current_device()),',
      "FSDP turns an int device_id into torch.device(int), i.e. a CUDA device; pass an explicit npu device."),
    C('module.to_empty(device=torch.device("cuda"), recurse=False)', "device_type", "replace", True,
      'param_init_fn=lambda module: module.to_empty(device=torch.device("npu"), recurse=False)',
      "low_cpu_fsdp: non-zero ranks materialise meta params on the device."),
    C('model.to("cuda")', "tensor_to_device", "replace", True,
      'model.to("npu")', "Single-device (no FSDP, no quantisation) path."),
])

E("lr_train_utils", "src/llama_recipes/utils/train_utils.py", "explicit_replacement",
  "facebookresearch/llama-recipes src/llama_recipes/utils/train_utils.py (train/eval loops, policies)", [
    C("import torch.cuda.nccl as nccl", "dist_backend", "removal", False, None,
      "Import itself succeeds; only nccl.version() (removed below) would fail."),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler()",
      "CUDA GradScaler disables itself (warning) without CUDA -> fp16 training without loss scaling."),
    C("autocast = torch.cuda.amp.autocast if", "amp", "replace", True,
      "autocast = torch.npu.amp.autocast if train_config.use_fp16 else nullcontext",
      "torch.cuda.amp.autocast disables itself without CUDA -> silently fp32 while the scaler expects fp16."),
    C("                        batch[key] = batch[key].to(local_rank)", "tensor_to_device", "replace", True,
      'batch[key] = batch[key].to(f"npu:{local_rank}")',
      "Bare int in Tensor.to() is a CUDA ordinal."),
    C("=batch[key] = batch[key].to('cuda:0')", "tensor_to_device", "replace", True,
      "batch[key] = batch[key].to('npu:0')", ""),
    C("=if torch.cuda.device_count() > 1 and train_config.enable_fsdp:", "torch_cuda_api", "replace", True,
      "if torch.npu.device_count() > 1 and train_config.enable_fsdp:",
      "device_count()==0 skips the all_reduce but the loss is still divided by world_size -> wrong train loss/ppl."),
    C("batch[key] = batch[key].to(local_rank)  # same device", "tensor_to_device", "replace", True,
      'batch[key] = batch[key].to(f"npu:{local_rank}")  # same device as the FSDP shard', ""),
    C("eval runs on the first device", "tensor_to_device", "replace", True,
      "batch[key] = batch[key].to('npu:0')  # eval runs on the first device", ""),
    C("if torch.cuda.device_count() > 1 and train_config.enable_fsdp:  # eval loss", "torch_cuda_api", "replace",
      True, "if torch.npu.device_count() > 1 and train_config.enable_fsdp:  # eval loss",
      "Same silent mis-reduction for the eval loss."),
    C('dist.init_process_group("nccl")', "dist_backend", "replace", True,
      'dist.init_process_group("hccl")', ""),
    C('os.environ["NCCL_ASYNC_ERROR_HANDLING"] = str(1)', "env_var", "replace", False,
      'os.environ["HCCL_ASYNC_ERROR_HANDLING"] = str(1)',
      "HCCL_ASYNC_ERROR_HANDLING already defaults to 1 (MindCluster doc, knowledge ascend-distributed §1)."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", True,
      "torch.npu.empty_cache()", "clear_gpu_cache(); CUDA call is a silent no-op on NPU."),
    C("=torch.version.cuda", "device_capability_check", "replace", True,
      "torch.npu.is_available()",
      "torch.version.cuda is None on the NPU stack -> bf16 policy silently off, FSDP trains in fp32."),
    C("and torch.cuda.is_bf16_supported()", "device_capability_check", "replace", True,
      "and torch.npu.is_bf16_supported()", ""),
    C("and packaging.version.parse(torch.version.cuda).release >= (11, 0)", "device_capability_check",
      "removal", True, None, "parse(None) raises once the first operand is truthy."),
    C("and dist.is_nccl_available()", "device_capability_check", "removal", True, None,
      "False on an NPU build -> bf16 off (or use dist.is_hccl_available())."),
    C("and nccl.version() >= (2, 10)", "device_capability_check", "removal", True, None,
      "Calls into the NCCL binding, which does not exist without CUDA."),
])

E("lr_memory_utils", "src/llama_recipes/utils/memory_utils.py", "explicit_replacement",
  "facebookresearch/llama-recipes src/llama_recipes/utils/memory_utils.py (MemoryTrace)", [
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", True, "torch.npu.empty_cache()", ""),
    C("torch.cuda.reset_max_memory_allocated()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_max_memory_allocated()  # reset the peak gauge to zero",
      "The CUDA reset call initialises CUDA and raises on a CUDA-less build."),
    C("self.begin = byte2gb(torch.cuda.memory_allocated())", "torch_cuda_api", "replace", True,
      "self.begin = byte2gb(torch.npu.memory_allocated())", "Silently 0 otherwise."),
    C("torch.cuda.empty_cache()  # drop cached blocks", "torch_cuda_api", "replace", True,
      "torch.npu.empty_cache()  # drop cached blocks so the reading reflects live tensors", ""),
    C("self.end = byte2gb(torch.cuda.memory_allocated())", "torch_cuda_api", "replace", True,
      "self.end = byte2gb(torch.npu.memory_allocated())", ""),
    C("self.peak = byte2gb(torch.cuda.max_memory_allocated())", "torch_cuda_api", "replace", True,
      "self.peak = byte2gb(torch.npu.max_memory_allocated())", ""),
    C("cuda_info = torch.cuda.memory_stats()", "torch_cuda_api", "replace", True,
      "cuda_info = torch.npu.memory_stats()",
      "CUDA memory_stats() returns {} -> KeyError on 'active_bytes.all.peak' two lines below."),
    C("self.max_reserved = byte2gb(torch.cuda.max_memory_reserved())", "torch_cuda_api", "replace", True,
      "self.max_reserved = byte2gb(torch.npu.max_memory_reserved())", ""),
])

E("lr_configs", "src/llama_recipes/configs/training.py", "explicit_replacement",
  "facebookresearch/llama-recipes src/llama_recipes/configs/training.py", [])

E("lr_policies", "src/llama_recipes/policies/mixed_precision.py", "explicit_replacement",
  "facebookresearch/llama-recipes src/llama_recipes/policies/mixed_precision.py", [])

E("lr_code_completion", "recipes/code_llama/code_completion_example.py", "explicit_replacement",
  "facebookresearch/llama-recipes recipes/code_llama/code_completion_example.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "load_model() goes through from_pretrained(device_map='auto') -> accelerate, which imports torch_npu "
      "before the first 'npu' string is used; explicit import for clarity only."),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "Redundant with the torch.manual_seed(seed) that follows (unconfirmed for NPU)."),
    C('batch = {k: v.to("cuda") for k, v in batch.items()}', "tensor_to_device", "replace", True,
      'batch = {k: v.to("npu") for k, v in batch.items()}', ""),
])

E("lr_requirements", "requirements.txt", "explicit_replacement",
  "facebookresearch/llama-recipes requirements.txt", [
    C("torch>=2.0.1", "import_torch_npu", "npu_only_addition", True, "torch-npu",
      "finetuning.py now imports torch_npu; version must match torch (knowledge §1)."),
])

E("lr_slurm", "recipes/finetuning/multi_node.slurm", "explicit_replacement",
  "facebookresearch/llama-recipes recipes/finetuning/multi_node.slurm", [
    C("#SBATCH --gpus-per-task=4", "env_var", "replace", False, "#SBATCH --gres=npu:4",
      "Site-specific GRES naming for NPUs; unconfirmed."),
    C("export LOGLEVEL=INFO", "env_var", "npu_only_addition", True, SET_ENV,
      "srun'd non-interactive shells do not pick up CANN's environment otherwise."),
    C("export CUDA_LAUNCH_BLOCKING=0", "env_var", "replace", False, "export ASCEND_LAUNCH_BLOCKING=0",
      "0 is the default; inert."),
    C('export NCCL_SOCKET_IFNAME="ens"', "env_var", "replace", True, 'export HCCL_SOCKET_IFNAME="ens"',
      "The site pins the rendezvous NIC; HCCL ignores NCCL_* and would pick a NIC by its own ordering "
      "(HCCL_SOCKET_IFNAME accepts the same prefix form)."),
])

# ---------------------------------------------------------------------------------------------
# bigcode-project/Megatron-LM (SantaCoder/StarCoder pre-training)
# ---------------------------------------------------------------------------------------------
E("mg_fused_kernels", "megatron/fused_kernels/__init__.py", "kernel_rewrite",
  "bigcode-project/Megatron-LM megatron/fused_kernels/__init__.py (JIT-built CUDA softmax/layernorm)", [])

E("mg_initialize", "megatron/initialize.py", "kernel_rewrite",
  "bigcode-project/Megatron-LM megatron/initialize.py", [
    C("assert torch.cuda.is_available(), 'Megatron requires CUDA.'", "torch_cuda_api", "replace", True,
      "assert torch.npu.is_available(), 'Megatron requires an NPU.'", ""),
    C("=fused_kernels.load(args)", "custom_cuda_extension", "removal", True, None,
      "JIT nvcc build of the fused softmax/layernorm kernels; no CUDA toolkit on the NPU host "
      "(CUDA_HOME is None -> crash in _get_cuda_bare_metal_version)."),
    C("fused_kernels.load(args)  # other ranks", "custom_cuda_extension", "removal", True, None, "Same, non-zero ranks."),
    C("device_count = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "device_count = torch.npu.device_count()",
      "0 would skip set_device and model-parallel initialisation."),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)", ""),
    C("backend=args.distributed_backend,", "dist_backend", "replace", True,
      "backend='hccl' if args.distributed_backend == 'nccl' else args.distributed_backend,",
      "--distributed-backend defaults to 'nccl' (choices nccl/gloo) in arguments.py."),
    C("if torch.cuda.device_count() > 0:", "torch_cuda_api", "replace", True,
      "if torch.npu.device_count() > 0:",
      "Skipping model_parallel_cuda_manual_seed leaves the model-parallel RNG tracker empty and "
      "get_cuda_rng_tracker().fork() raises later."),
    C("torch._C._jit_set_nvfuser_enabled(True)", "compile_mode", "removal", False, None,
      "nvFuser is CUDA-only; on NPU the TorchScript fusers do nothing useful. Unconfirmed whether enabling "
      "it errors on torch_npu, so not required."),
    C("bias = torch.rand(args.ffn_hidden_size // args.tensor_model_parallel_size, dtype=dtype, device='cuda')",
      "tensor_to_device", "replace", True,
      "bias = torch.rand(args.ffn_hidden_size // args.tensor_model_parallel_size, dtype=dtype, device='npu')",
      "JIT warm-up tensors."),
    C("=dtype=dtype, device='cuda')", "tensor_to_device", "replace", True, "dtype=dtype, device='npu')", ""),
    C("input = torch.rand((seq_length, args.micro_batch_size, args.hidden_size), dtype=dtype, device='cuda')",
      "tensor_to_device", "replace", True,
      "input = torch.rand((seq_length, args.micro_batch_size, args.hidden_size), dtype=dtype, device='npu')", ""),
    C("residual = torch.rand((seq_length, args.micro_batch_size, args.hidden_size), dtype=dtype, device='cuda')",
      "tensor_to_device", "replace", True,
      "residual = torch.rand((seq_length, args.micro_batch_size, args.hidden_size), dtype=dtype, device='npu')", ""),
    C("bias = torch.rand((args.hidden_size), dtype=dtype, device='cuda').expand_as(residual)",
      "tensor_to_device", "replace", True,
      "bias = torch.rand((args.hidden_size), dtype=dtype, device='npu').expand_as(residual)", ""),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", True, "torch.npu.empty_cache()", ""),
])

E("mg_transformer", "megatron/model/transformer.py", "kernel_rewrite",
  "bigcode-project/Megatron-LM megatron/model/transformer.py (multi-query CoreAttention + FlashSelfAttention)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "FlashSelfAttention now calls torch_npu.npu_fusion_attention."),
    C("assert flash_attn_unpadded_func is not None, ('Please install FlashAttention first, '",
      "attention_kernel", "removal", True, None,
      "flash-attn cannot be installed on NPU, so the import above yields None and this assert fires."),
    C("'e.g., with pip install flash-attn')", "attention_kernel", "removal", True, None,
      "Continuation line of the removed assert."),
    C("assert all((i.is_cuda for i in (q,k,v)))", "tensor_to_device", "replace", True,
      "assert all((i.is_npu for i in (q,k,v)))", ""),
    C("output = flash_attn_unpadded_func(q, k, v, cu_seqlens_q", "attention_kernel", "replace", True,
      'output = torch_npu.npu_fusion_attention(q, k, v, q.shape[1], "TND", atten_mask=torch.triu(torch.ones(2048, 2048, dtype=torch.bool, device=q.device), diagonal=1) if is_causal else None, scale=self.softmax_scale or 1.0 / math.sqrt(q.shape[-1]), keep_prob=1.0 - dropout_p, sparse_mode=3 if is_causal else 0, actual_seq_qlen=cu_seqlens_q[1:].tolist(), actual_seq_kvlen=cu_seqlens_k[1:].tolist())[0]',
      "Varlen FA -> npu_fusion_attention TND layout with cumulative lengths, causal via 2048x2048 mask + "
      "sparse_mode=3 (transformers' npu_flash_attention mapping). MQA (1 kv head) is within the Nq/Nkv rule. "
      "The pre-training script passes --use-flash-attn."),
    C("dropout_p, softmax_scale=self.softmax_scale, causal=is_causal)", "attention_kernel", "removal", True, None,
      "Continuation line of the replaced call."),
])

E("mg_launch", "examples/pretrain_santacoder.slurm", "kernel_rewrite",
  "bigcode-project/Megatron-LM SantaCoder/StarCoder pre-training slurm launcher (bigcode training repo style)", [
    C("#SBATCH --gres=gpu:8", "env_var", "replace", False, "#SBATCH --gres=npu:8",
      "Site-specific GRES naming; unconfirmed."),
    C("source /admin/home/bigcode/.bashrc", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN environment for every srun'd rank."),
    C("--clip-grad 1.0", "custom_cuda_extension", "npu_only_addition", True,
      "--no-gradient-accumulation-fusion \\",
      "Gradient-accumulation fusion is on by default and needs apex's fused_weight_gradient_mlp_cuda "
      "extension; ColumnParallelLinear raises when it is missing."),
    C("--bf16", "custom_cuda_extension", "npu_only_addition", False,
      "--no-masked-softmax-fusion \\",
      "With --use-flash-attn the FusedScaleMaskSoftmax path is not taken in training, so the unbuilt "
      "softmax kernel is never imported; added defensively."),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False,
      "export HCCL_ASYNC_ERROR_HANDLING=1", "Already the HCCL default."),
    C("export NCCL_SOCKET_IFNAME=ens", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=ens",
      "Same NIC-pinning judgement as lr_slurm."),
])
