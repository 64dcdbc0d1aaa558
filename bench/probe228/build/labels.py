# Labels for probe228 (neural compilers / code models: CodeT5, CodeGen, StarCoder, bigcode-evaluation-harness,
# SWE-bench / Magicoder vLLM inference, Code Llama, Megatron (bigcode fork), TenSet cost model, unsloth).
# One label per line a careful porter would edit to run -- and run well -- on Ascend NPU with torch_npu.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU_ENTRY = ("entry script; later edits call torch.npu / torch_npu. Mandatory before torch_npu 2.5.1, "
                    "autoloaded from 2.5.1 on but still recommended")
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
SET_ENV_NOTE = ("CANN environment (LD_LIBRARY_PATH, ASCEND_OPP_PATH...) must be sourced before torch_npu loads; "
                "not required when the login shell / container ENV already does it")

# ---------------------------------------------------------------- CodeT5
E("codet5_configs", "CodeT5/configs.py", "explicit_replacement",
  "salesforce/CodeT5 configs.py (add_args / set_dist / set_seed)", [
    C('device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")',
      "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")',
      "torch.cuda.is_available() is False on an Ascend host, so training silently falls back to CPU"),
    C("args.n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.n_gpu = torch.npu.device_count()",
      "returns 0 on NPU; n_gpu drives DataParallel, loss.mean() and seeding"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "CUDA runtime call fails without an NVIDIA driver"),
    C('device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", args.local_rank)', "per-rank device must be the local NPU"),
    C("torch.distributed.init_process_group(backend='nccl')", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl')", "NCCL does not exist on Ascend; HCCL is the collective backend"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)",
      "silent no-op without CUDA; torch.manual_seed on the line above already seeds the registered NPU backend"),
])

E("codet5_run_gen", "CodeT5/run_gen.py", "explicit_replacement",
  "salesforce/CodeT5 run_gen.py (summarize/translate/refine/concode fine-tuning loop) with torch.cuda.amp", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
    C("model = torch.nn.DataParallel(model)", "unsupported_op_workaround", "replace", True,
      "model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank])  # DataParallel is unsupported on NPU",
      "torch.nn.DataParallel is marked unsupported for Ascend (msFmkTransplt / 2.7.1 API list); with n_gpu>1 it breaks -- launch one process per NPU instead"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.fp16)",
      "the CUDA GradScaler disables itself (warning only) when CUDA is absent: --fp16 silently trains without loss scaling"),
    C("with torch.cuda.amp.autocast(enabled=args.fp16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=args.fp16):",
      "cuda autocast is a no-op on NPU tensors, so --fp16 silently runs in fp32"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op when CUDA is uninitialised; NPU cache is simply not released"),
    C("# release eval buffers before the next epoch", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # release eval buffers before the next epoch", "same silent no-op"),
])

E("codet5_models", "CodeT5/models.py", "explicit_replacement",
  "salesforce/CodeT5 models.py (build_or_load_gen_model, RoBERTa Seq2Seq + Beam search from CodeBERT)", [
    C('model.load_state_dict(torch.load(args.load_model_path, map_location="cuda:0"))', "device_type", "replace", True,
      'model.load_state_dict(torch.load(args.load_model_path, map_location="cpu"))',
      "map_location='cuda:0' cannot deserialize without CUDA; load to host, run_gen moves the model to args.device"),
    C("zero = torch.cuda.LongTensor(1).fill_(0)", "tensor_to_device", "replace", True,
      "zero = torch.zeros(1, dtype=torch.long, device=source_ids.device)",
      "legacy torch.cuda.LongTensor constructor raises on a host without CUDA"),
    C("self.tt = torch.cuda", "torch_cuda_api", "replace", True, "self.tt = torch.npu",
      "Beam builds torch.cuda.FloatTensor/LongTensor through self.tt; torch.npu exposes the same typed-tensor names"),
])

E("codet5_run_defect", "CodeT5/run_defect.py", "explicit_replacement",
  "salesforce/CodeT5 run_defect.py in the CodeXGLUE style, with NVIDIA apex amp and optional apex FusedAdam", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
    C("        model = torch.nn.DataParallel(model)", "unsupported_op_workaround", "replace", True,
      "        pass  # torch.nn.DataParallel unsupported on NPU: evaluate per process (DDP) instead",
      "DataParallel is unsupported on Ascend; evaluate() wraps the model whenever n_gpu > 1"),
    C("model = nn.DataParallel(model)", "unsupported_op_workaround", "replace", True,
      "model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank])",
      "DataParallel unsupported on NPU; use one process per NPU"),
    C("model = torch.nn.DataParallel(model, device_ids=list(range(args.n_gpu)))", "unsupported_op_workaround", "replace", True,
      "pass  # no DataParallel on NPU; test on the local device",
      "DataParallel unsupported on NPU"),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", True,
      "from torch_npu.optim import NpuFusedAdamW",
      "apex FusedAdam is a CUDA extension; Ascend apex does not ship it -- torch_npu.optim has the NPU fused version"),
    C("optimizer = FusedAdam(optimizer_grouped_parameters, lr=args.learning_rate, eps=args.adam_epsilon)",
      "fused_optimizer", "replace", True,
      "optimizer = NpuFusedAdamW(optimizer_grouped_parameters, lr=args.learning_rate, eps=args.adam_epsilon)",
      "apex FusedAdam defaults to decoupled (AdamW) weight decay, so NpuFusedAdamW keeps the math"),
    C("model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level)", "amp", "replace", False,
      "model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level, loss_scale='dynamic', combine_grad=True)",
      "Ascend apex (patched apex) keeps amp.initialize/scale_loss working; combine_grad is its NPU-specific speed option"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on NPU"),
])

E("codet5_exp_sh", "CodeT5/sh/exp_with_args.sh", "explicit_replacement",
  "salesforce/CodeT5 sh/exp_with_args.sh (per-task launcher, GPU id passed on the command line)", [
    C("export PYTHONPATH=$WORKDIR", "env_var", "npu_only_addition", False, SET_ENV, SET_ENV_NOTE),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
      "NCCL_* is ignored by HCCL; single-node launch so HCCL's default NIC choice usually works"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "HCCL equivalent (torch_npu watchdog); its default is already 1"),
    C("CUDA_VISIBLE_DEVICES=${GPU} \\", "env_var", "replace", True, "ASCEND_RT_VISIBLE_DEVICES=${GPU} \\",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: every sweep job would land on NPU 0"),
])

E("codet5_env", "CodeT5/environment.yml", "explicit_replacement",
  "CodeT5 / CodeT5+ conda environment.yml (pytorch + pytorch-cuda + NVIDIA apex)", [
    C("- pytorch=1.13.1", "device_type", "replace", True, "- pytorch=2.1.0  # CPU build; pairs with torch-npu 2.1.0.postN",
      "torch_npu has no 1.13 build (1.11.0 then 2.1.0 onward); torch and torch-npu versions must match exactly"),
    C("- pytorch-cuda=11.7", "device_type", "removal", True, None,
      "pulls the CUDA build of pytorch and has no aarch64 package (Atlas hosts are mostly Kunpeng aarch64)"),
    C("- cudatoolkit-dev=11.7", "device_type", "removal", True, None,
      "CUDA toolkit; unsolvable on aarch64 and useless on NPU"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post12",
      "the torch_npu wheel matching torch 2.1.0 (needs a matching CANN)"),
    C("- transformers==4.27.4", "distributed_framework", "replace", True, "- transformers>=4.32.0",
      "native NPU device selection in Trainer/TrainingArguments starts at transformers 4.32.0; 4.27 trains on CPU"),
    C("- accelerate==0.18.0", "distributed_framework", "replace", True, "- accelerate>=0.22.0",
      "native Ascend support in accelerate starts at 0.22.0"),
    C("- deepspeed==0.8.3", "distributed_framework", "replace", False, "- deepspeed>=0.10.0",
      "unconfirmed version floor: upstream DeepSpeed's NPU accelerator is newer than 0.8.x (legacy deepspeed_npu plugin only covers 0.9.2)"),
    C("- apex @ git+https://github.com/NVIDIA/apex.git@22.04-dev", "amp", "replace", True,
      "- apex @ file:///opt/ascend-apex/dist/apex-0.1+ascend-cp38-cp38-linux_aarch64.whl  # built from Ascend/apex",
      "NVIDIA apex amp drives torch.cuda; Ascend/apex is the patched build for NPU (built locally, no PyPI wheel)"),
])

# ---------------------------------------------------------------- CodeT5+
E("codet5p_generate", "CodeT5/CodeT5+/humaneval/generate_codet5p.py", "explicit_replacement",
  "salesforce/CodeT5 CodeT5+/humaneval/generate_codet5p.py (HumanEval sampling, one process per GPU)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
    C("f\"{torch.cuda.memory_allocated(device) / 2 ** 30:.2f} GiB on {torch.cuda.get_device_name(device)}\")",
      "torch_cuda_api", "replace", True,
      "f\"{torch.npu.memory_allocated(device) / 2 ** 30:.2f} GiB on {torch.npu.get_device_name(device)}\")",
      "torch.cuda.get_device_name lazily initialises CUDA and raises on an NPU host"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "CUDA runtime call fails without a driver"),
    C('device = torch.device(f"cuda:{args.gpu}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{args.gpu}")', "target device string"),
    C('print(f"peak memory: {torch.cuda.max_memory_allocated(device) / 2 ** 30:.2f} GiB")', "torch_cuda_api", "replace", False,
      'print(f"peak memory: {torch.npu.max_memory_allocated(device) / 2 ** 30:.2f} GiB")',
      "CUDA memory stats just report 0 when CUDA is uninitialised; log only"),
])

E("codet5p_run_generate", "CodeT5/CodeT5+/humaneval/run_generate.sh", "explicit_replacement",
  "salesforce/CodeT5 CodeT5+/humaneval/run_generate.sh (shard HumanEval across local GPUs)", [
    C("num_seqs_per_iter=${4:-25}", "env_var", "npu_only_addition", False, SET_ENV, SET_ENV_NOTE),
    C("gpu_num=$(nvidia-smi --list-gpus | wc -l)", "torch_cuda_api", "replace", True,
      "gpu_num=$(npu-smi info -l | awk '/Total Count/{print $NF}')",
      "nvidia-smi is absent: gpu_num=0 and the per_gpu arithmetic divides by zero"),
    C("CUDA_VISIBLE_DEVICES=$gpu python generate_codet5p.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$gpu python generate_codet5p.py --model Salesforce/${model} \\",
      "without it every shard runs on NPU 0 (each process uses local device 0)"),
])

# ---------------------------------------------------------------- CodeGen
E("codegen_sample", "CodeGen/jaxformer/hf/sample.py", "explicit_replacement",
  "salesforce/CodeGen jaxformer/hf/sample.py (CodeGen-mono/multi sampling with fp16 checkpoints)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guard is simply False on NPU; its body only seeds CUDA and sets cudnn flags (accepted as no-ops by torch_npu)"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "torch.manual_seed above already seeds the NPU generator"),
    C("parser.add_argument('--device', type=str, default='cuda:0')", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, default='npu:0')",
      "default device string; torch.device('cuda:0') fails at .to() on an NPU host"),
])

E("codegen_train_ds", "CodeGen/jaxformer/hf/train_deepspeed.py", "explicit_replacement",
  "salesforce/CodeGen jaxformer/hf/train_deepspeed.py (CodeGen-16B ZeRO-3 + CPU offload example)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NPU_ENTRY + "; DeepSpeed also only picks its NPU accelerator when torch_npu is importable"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "silent no-op on NPU"),
    C("dtype=torch.int64).cuda()", "tensor_to_device", "replace", True,
      "input_ids = torch.randint(low=0, high=10, size=[args.deepspeed_config['train_micro_batch_size_per_gpu'], 1024], dtype=torch.int64).npu()",
      ".cuda() raises without CUDA"),
    C("mem={torch.cuda.max_memory_allocated() / 2**30:.1f}GiB", "torch_cuda_api", "replace", False,
      "print(f'{step} {loss:8.3f} {time() - t0:.1f}s mem={torch.npu.max_memory_allocated() / 2**30:.1f}GiB')",
      "reports 0 on NPU; log only"),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)",
      "CUDA runtime call fails without a driver"),
    C("    if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "    if torch.npu.is_available():",
      "seed guard is False on NPU; torch.manual_seed already covers the NPU"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "silent no-op without CUDA"),
])

# ---------------------------------------------------------------- StarCoder
E("starcoder_finetune", "starcoder/finetune/finetune.py", "explicit_replacement",
  "bigcode-project/starcoder finetune/finetune.py (8-bit LoRA fine-tuning with peft + HF Trainer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "transformers (>=4.32) and accelerate import torch_npu themselves when it is installed; explicit import is hygiene"),
    C("load_in_8bit=True,", "unsupported_op_workaround", "replace", True, "torch_dtype=torch.bfloat16,",
      "bitsandbytes LLM.int8 has no Ascend backend (only NF4 4-bit in the multi-backend work); load bf16 instead"),
    C("model = prepare_model_for_int8_training(model)", "unsupported_op_workaround", "replace", False,
      "model.gradient_checkpointing_enable(); model.enable_input_require_grads()",
      "int8 helper is pointless once the model is bf16 and, in newer peft, upcasts every non-int8 weight to fp32 (15B -> ~62 GB)"),
])

E("starcoder_requirements", "starcoder/requirements.txt", "explicit_replacement",
  "bigcode-project/starcoder requirements.txt", [
    C("torch>=1.13.0", "device_type", "replace", True, "torch==2.1.0",
      "must equal the torch-npu version; unpinned pip resolves the newest (CUDA-bundled on x86) torch"),
    C("bitsandbytes>=0.38.1", "unsupported_op_workaround", "removal", False, None,
      "no longer used once 8-bit loading is dropped; LLM.int8 has no NPU backend"),
    C("peft @ git+https://github.com/huggingface/peft.git", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post12", "torch_npu wheel matching the torch pin"),
])

E("starcoder_accel_cfg", "starcoder/chat/deepspeed_z3.yaml", "explicit_replacement",
  "bigcode-project/starcoder chat/deepspeed_z3.yaml (accelerate config: DeepSpeed ZeRO-3 + dynamo)", [
    C("dynamo_backend: INDUCTOR", "compile_mode", "replace", True, "dynamo_backend: 'NO'",
      "Inductor's GPU codegen is Triton-CUDA; NPU Inductor needs torch_npu >= 2.6 (+ triton-ascend), not the 2.1 line pinned here"),
    C("dynamo_mode: max-autotune", "compile_mode", "removal", False, None,
      "max-autotune benchmarks CUDA/Triton kernel configs; meaningless once dynamo is off"),
])

# ---------------------------------------------------------------- bigcode-evaluation-harness
E("bceh_main", "bigcode-evaluation-harness/main.py", "device_branch_or_abstraction",
  "bigcode-project/bigcode-evaluation-harness main.py (accelerate, --precision, --load_in_8bit, --max_memory_per_gpu)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "accelerate's is_npu_available() imports torch_npu itself; explicit import is hygiene"),
    C('model_kwargs["attn_implementation"] = "flash_attention_2"', "attention_kernel", "replace", True,
      'model_kwargs["attn_implementation"] = "sdpa"',
      "flash-attn cannot be installed on NPU; SDPA dispatches to the NPU fused attention (transformers PR #36383)"),
    C('model_kwargs["load_in_8bit"] = args.load_in_8bit', "unsupported_op_workaround", "replace", True,
      'raise ValueError("--load_in_8bit (bitsandbytes LLM.int8) is not available on Ascend NPU; use --precision bf16")',
      "LLM.int8 has no Ascend backend; the flag path crashes inside bitsandbytes"),
    C('model_kwargs["load_in_4bit"] = args.load_in_4bit', "unsupported_op_workaround", "replace", False,
      'model_kwargs["quantization_config"] = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4")',
      "unconfirmed: NF4 on Ascend exists only in bitsandbytes' multi-backend work; keep only if that build is installed"),
])

E("bceh_generation", "bigcode-evaluation-harness/bigcode_eval/generation.py", "device_branch_or_abstraction",
  "bigcode-evaluation-harness bigcode_eval/generation.py (parallel_generations) with a throughput timer", [
    C("torch.cuda.synchronize(accelerator.device)", "torch_cuda_api", "add_branch", False,
      'elif accelerator.device.type == "npu": torch.npu.synchronize(accelerator.device)',
      "timing only: without a device sync the NPU wall clock under-reports generation time"),
    C("peak = torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else 0.0", "torch_cuda_api",
      "replace", False, "peak = torch.npu.max_memory_allocated() / 2**30 if torch.npu.is_available() else 0.0",
      "log line silently reports 0.0 GiB on NPU"),
])

E("bceh_dockerfile", "bigcode-evaluation-harness/Dockerfile-cuda", "explicit_replacement",
  "bigcode-evaluation-harness GPU image for the generation step (CUDA base, cu121 wheels, flash-attn, bitsandbytes)", [
    C("FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04", "device_type", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "needs a CANN base image (driver mounted from the host) instead of the CUDA one"),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None, "no CUDA toolkit in the image; harmless leftover"),
    C('ENV TORCH_CUDA_ARCH_LIST="8.0;8.6;9.0+PTX"', "env_var", "removal", False, None,
      "only steers nvcc builds; harmless leftover"),
    C("RUN pip3 install --no-cache-dir torch==2.1.2 --index-url https://download.pytorch.org/whl/cu121", "device_type",
      "replace", True, "RUN pip3 install --no-cache-dir torch==2.1.0 --index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch must be the CPU build at the exact torch-npu version (2.1.2 has no torch_npu)"),
    C("RUN pip3 install --no-cache-dir packaging ninja", "import_torch_npu", "npu_only_addition", True,
      "RUN pip3 install --no-cache-dir torch-npu==2.1.0.post12", "install the matching torch_npu wheel"),
    C("RUN MAX_JOBS=8 pip3 install --no-cache-dir flash-attn==2.5.6 --no-build-isolation", "attention_kernel",
      "removal", True, None, "flash-attn needs nvcc/CUDA and fails to build; SDPA / npu_fusion_attention replace it"),
    C("RUN pip3 install --no-cache-dir bitsandbytes==0.42.0", "unsupported_op_workaround", "removal", False, None,
      "CUDA-only build of bitsandbytes; unused unless --load_in_8bit/4bit (unconfirmed whether it even installs on aarch64)"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "read by the NVIDIA container runtime only; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES / --device /dev/davinciN"),
    C("ENV NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NCCL tuning, ignored by HCCL"),
])

E("bceh_launch", "bigcode-evaluation-harness/scripts/run_humaneval.sh", "explicit_replacement",
  "launcher around bigcode-evaluation-harness main.py (accelerate launch --multi_gpu / --max_memory_per_gpu auto)", [
    C("TASKS=${2:-humaneval}", "env_var", "npu_only_addition", False, SET_ENV, SET_ENV_NOTE),
    C("NGPUS=${NGPUS:-$(nvidia-smi -L | wc -l)}", "torch_cuda_api", "replace", True,
      "NGPUS=${NGPUS:-$(npu-smi info -l | awk '/Total Count/{print $NF}')}",
      "with set -e the missing nvidia-smi aborts the script"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "ignored on NPU; the default selects all 8 cards, which is what the runtime does anyway"),
    C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None, "ignored by HCCL"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "ignored by HCCL"),
])

# ---------------------------------------------------------------- SWE-bench
E("swe_run_llama", "SWE-bench/swebench/inference/run_llama.py", "explicit_replacement",
  "princeton-nlp/SWE-bench inference/run_llama.py (SWE-Llama patch generation with hand-made device maps)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
    C('k: f"{torch.cuda.get_device_properties(k).total_memory//1_010_000_000:d}GIB"', "torch_cuda_api", "replace", True,
      'k: f"{torch.npu.get_device_properties(k).total_memory//1_010_000_000:d}GIB"',
      "total_memory is one of the properties torch.npu.get_device_properties provides"),
    C("for k in range(torch.cuda.device_count())", "torch_cuda_api", "replace", True,
      "for k in range(torch.npu.device_count())", "0 devices -> max_memory only lists the CPU"),
    C('device_map = DEVICE_MAPS["7b"][str(torch.cuda.device_count())]', "torch_cuda_api", "replace", True,
      'device_map = DEVICE_MAPS["7b"][str(torch.npu.device_count())]', 'KeyError "0" on NPU'),
    C('device_map = DEVICE_MAPS["13b"][str(torch.cuda.device_count())]', "torch_cuda_api", "replace", True,
      'device_map = DEVICE_MAPS["13b"][str(torch.npu.device_count())]', 'KeyError "0" on NPU'),
    C('device_map = DEVICE_MAPS["34b"][str(torch.cuda.device_count())]', "torch_cuda_api", "replace", True,
      'device_map = DEVICE_MAPS["34b"][str(torch.npu.device_count())]', 'KeyError "0" on NPU'),
    C('input_ids = torch.tensor([input_ids], dtype=torch.long, device="cuda:0")', "tensor_to_device", "replace", True,
      'input_ids = torch.tensor([input_ids], dtype=torch.long, device="npu:0")',
      "first shard of the device map lives on device 0"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "silent no-op on NPU"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
      "the guard raises on every NPU host"),
])

E("swe_flash_llama", "SWE-bench/swebench/inference/llamao/modeling_flash_llama.py", "kernel_rewrite",
  "SWE-bench inference/llamao/modeling_flash_llama.py (LLaMA with flash-attn 2 varlen kernels and flash RoPE)", [
    C("from flash_attn.flash_attn_interface import (", "attention_kernel", "replace", True,
      "import torch_npu  # npu_fusion_attention replaces flash_attn_(varlen_)kvpacked_func",
      "flash-attn cannot be installed on Ascend; the module raises ImportError at import time"),
    C("from flash_attn.bert_padding import unpad_input, pad_input", "attention_kernel", "replace", True,
      "from .npu_padding import unpad_input, pad_input  # pure-torch index_select/index_put re-implementation",
      "bert_padding ships inside the flash-attn wheel"),
    C("from flash_attn.layers.rotary import apply_rotary_emb_func", "npu_fused_op", "replace", True,
      "from torch_npu import npu_rotary_mul",
      "flash-attn's rotary is a Triton-CUDA kernel; torch_npu.npu_rotary_mul is the fused NPU RoPE"),
    C("return apply_rotary_emb_func(", "npu_fused_op", "replace", True,
      "cos, sin = [torch.cat([c, c], -1)[None, :, None, :] for c in (self._cos_cached[seqlen_offset:], self._sin_cached[seqlen_offset:])]; return torch_npu.npu_rotary_mul(q, cos, sin), torch_npu.npu_rotary_mul(k, cos, sin)",
      "npu_rotary_mul wants full-width cos/sin broadcast as 1S1D (rotate_half layout) and is not in-place"),
    C("), apply_rotary_emb_func(", "npu_fused_op", "replace", True,
      ")  # second call folded into the npu_rotary_mul pair above", "same kernel for k"),
    C("attn_outputs = flash_attn_varlen_kvpacked_func(", "attention_kernel", "replace", True,
      "attn_outputs = torch_npu.npu_fusion_attention(unpadded_q, unpadded_kv[:, 0], unpadded_kv[:, 1], self.num_heads, 'TND', atten_mask=causal_mask, scale=1.0 / self.norm_factor.item(), sparse_mode=3, actual_seq_qlen=cu_seqlens_q[1:].tolist(), actual_seq_kvlen=cu_seqlens_k[1:].tolist())[0]",
      "varlen flash kernel -> npu_fusion_attention TND layout with cumulative lengths; cannot return attention probs"),
    C("attn_outputs = flash_attn_kvpacked_func(", "attention_kernel", "replace", True,
      "attn_outputs = torch_npu.npu_fusion_attention(q, kv[:, :, 0], kv[:, :, 1], self.num_heads, 'BSND', atten_mask=causal_mask, scale=1.0 / self.norm_factor.item(), sparse_mode=3)[0]",
      "dense flash kernel -> npu_fusion_attention BSND; causal via 2048x2048 triu mask + sparse_mode=3 (down-right aligned for the KV-cache case)"),
    C("hidden_states = hidden_states * torch.rsqrt(variance + variance_epsilon)", "npu_fused_op", "replace", False,
      "return torch_npu.npu_rms_norm(hidden_states.to(input_dtype), weight, epsilon=float(variance_epsilon))[0]",
      "performance only: fused NPU RMSNorm instead of four eager ops"),
])

E("swe_pyproject", "SWE-bench/pyproject.toml", "explicit_replacement",
  "princeton-nlp/SWE-bench pyproject.toml ([inference] extra)", [
    C('"flash_attn>=2.3.0",', "attention_kernel", "removal", True, None,
      "needs nvcc; installing the extra fails on an NPU host"),
    C('"torch",', "device_type", "replace", True, '"torch==2.9.0",',
      "torch must equal the torch-npu / vllm-ascend pairing; unpinned resolves a CUDA-bundled wheel on x86"),
    C('"transformers",', "import_torch_npu", "npu_only_addition", True, '"torch-npu==2.9.0.post2",',
      "torch_npu wheel matching the torch pin"),
    C('"triton",', "triton_kernel_tuning", "removal", False, None,
      "only consumed by flash-attn's rotary kernel; NPU Triton is the separate triton-ascend package"),
    C('"vllm>=0.4.2",', "distributed_framework", "replace", True, '"vllm==0.13.0", "vllm-ascend==0.13.0",',
      "the PyPI vllm wheel is the CUDA build; Ascend needs the vllm-ascend hardware plugin at the matching vllm version"),
])

E("swe_serve_sh", "SWE-bench/swebench/inference/scripts/serve_swe_llama.sh", "explicit_replacement",
  "vLLM OpenAI-server launcher for SWE-Llama used with SWE-bench run_api.py", [
    C("set -euo pipefail", "env_var", "npu_only_addition", False,
      "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u",
      SET_ENV_NOTE + "; set_env.sh fails under set -u, hence the +u/-u wrap"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1}",
      "ignored by the Ascend runtime: a user choosing 4,5 would still get NPU 0,1"),
    C('TP=${TP:-$(echo "${CUDA_VISIBLE_DEVICES}"', "env_var", "replace", True,
      'TP=${TP:-$(echo "${ASCEND_RT_VISIBLE_DEVICES}" | tr \',\' \'\\n\' | wc -l)}',
      "must follow the renamed variable (set -u aborts on an unset CUDA_VISIBLE_DEVICES)"),
    C("nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info", "set -e: missing nvidia-smi aborts the launcher"),
    C("export VLLM_ATTENTION_BACKEND=FLASH_ATTN", "attention_kernel", "removal", False, None,
      "CUDA FlashAttention backend selector; vllm-ascend picks its own attention backend (unconfirmed whether it errors or ignores)"),
    C("export NCCL_P2P_DISABLE=0", "env_var", "removal", False, None, "NCCL-only, ignored by HCCL"),
    C("export NCCL_IGNORE_DISABLED_P2P=1", "env_var", "removal", False, None, "NCCL-only, ignored by HCCL"),
])

# ---------------------------------------------------------------- Magicoder (vLLM HumanEval+/MBPP+)
E("magicoder_text2code", "magicoder/experiments/text2code.py", "explicit_replacement",
  "ise-uiuc/magicoder experiments/text2code.py (vLLM generation for EvalPlus)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "vllm-ascend requires torch_npu >= 2.5.1, which autoloads with torch"),
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpus = torch.npu.device_count()",
      "0 on NPU -> the script raises before building the engine"),
    C("tensor_parallel_size=torch.cuda.device_count(),", "torch_cuda_api", "replace", True,
      "tensor_parallel_size=torch.npu.device_count(),", "TP size 0 is rejected by vLLM"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "silent no-op on NPU"),
])

# ---------------------------------------------------------------- Code Llama
E("codellama_generation", "codellama/llama/generation.py", "device_branch_or_abstraction",
  "facebookresearch/codellama llama/generation.py (Llama.build with module-level device selection)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
    C('=device = "cuda"', "device_type", "add_branch", True,
      'elif torch.npu.is_available(): device = "npu"',
      "without an NPU branch the module picks 'cpu' and the whole model runs on the host"),
    C('torch.distributed.init_process_group("nccl")', "dist_backend", "add_branch", True,
      'elif device == "npu": torch.distributed.init_process_group("hccl")',
      "otherwise NPU ranks fall through to gloo, which has no NPU collectives for fairscale's model-parallel all-reduce"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "add_branch", True,
      'elif device == "npu": torch.npu.set_device(local_rank)',
      "without it every rank allocates on NPU 0"),
    C("torch.set_default_tensor_type(torch.cuda.HalfTensor)", "torch_cuda_api", "add_branch", False,
      'elif device == "npu": torch.set_default_tensor_type(torch.npu.BFloat16Tensor if torch.npu.is_bf16_supported() else torch.npu.HalfTensor)',
      "else-branch builds the model on the host in fp16 and moves it afterwards: works, but slow and fp16 instead of bf16"),
])

E("codellama_model", "codellama/llama/model.py", "device_branch_or_abstraction",
  "facebookresearch/codellama llama/model.py (fairscale model-parallel Transformer, complex RoPE)", [
    C('=device = "cuda"', "device_type", "add_branch", True,
      'elif torch.npu.is_available(): device = "npu"',
      "module-level device is used by the KV cache and by apply_rotary_emb's return; 'cpu' gives device mismatches"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, 'if device not in ("cuda", "npu"):',
      "Mac/MPS workaround: on NPU it ships q/k to the host for RoPE in every layer at every step"),
    C('self.freqs_cis = self.freqs_cis.to("cuda" if device == "cuda" else "cpu")', "tensor_to_device", "replace", True,
      "self.freqs_cis = self.freqs_cis.to(device)",
      "keeps the RoPE table on the host on NPU; must move together with the guard above"),
    C("xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))", "npu_fused_op", "replace", False,
      "xq_out, xk_out = torch_npu.npu_rotary_mul(xq, cos, sin, rotary_mode='interleave'), torch_npu.npu_rotary_mul(xk, cos, sin, rotary_mode='interleave')",
      "performance only: complex64 RoPE vs fused npu_rotary_mul (interleaved pairs, cos/sin precomputed from freqs_cis)"),
    C("return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)", "npu_fused_op", "replace", False,
      "return torch_npu.npu_rms_norm(x, torch.ones_like(self.weight, dtype=x.dtype), epsilon=self.eps)[0]",
      "performance only: fused RMSNorm (or fold self.weight into the call in forward)"),
])

# ---------------------------------------------------------------- WizardCoder (transfer_to_npu)
E("wizardcoder_infer", "WizardCoder/src/inference_wizardcoder.py", "transfer_to_npu",
  "nlpxucan/WizardLM WizardCoder/src/inference_wizardcoder.py (alpaca-lora style generate, fire CLI)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "transfer_to_npu redirects torch.cuda.* and 'cuda' device strings, so the device logic below stays as is"),
    C("load_in_8bit=load_8bit,", "unsupported_op_workaround", "replace", True, "load_in_8bit=False,  # no LLM.int8 on NPU",
      "--load_8bit path needs bitsandbytes LLM.int8 (no Ascend backend); transfer_to_npu cannot fix that"),
    C("model = torch.compile(model)", "compile_mode", "replace", True,
      "pass  # torch.compile dropped: Inductor has no NPU backend on the torch_npu 2.1 line (transfer_to_npu also forces has_triton=False)",
      "default Inductor backend cannot generate NPU code here"),
])

# ---------------------------------------------------------------- Megatron-LM (bigcode fork used for StarCoder)
E("megatron_initialize", "Megatron-LM/megatron/initialize.py", "explicit_replacement",
  "bigcode-project/Megatron-LM megatron/initialize.py (distributed init, fused-kernel build, nvfuser JIT warmup)", [
    C("assert torch.cuda.is_available(), 'Megatron requires CUDA.'", "torch_cuda_api", "replace", True,
      "assert torch.npu.is_available(), 'Megatron requires an NPU.'", "asserts on every NPU host"),
    C("=fused_kernels.load(args)", "custom_cuda_extension", "replace", True,
      "pass  # NPU: no nvcc kernels; fused softmax/layernorm come from torch_npu",
      "fused_kernels.load JIT-builds .cu sources with nvcc via cpp_extension.load"),
    C("# other ranks pick up rank 0's build from the cache", "custom_cuda_extension", "replace", True,
      "pass  # NPU: nothing to build", "same nvcc JIT build on the other ranks"),
    C("device_count = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "device_count = torch.npu.device_count()", "0 on NPU: no device binding and no model-parallel groups"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
      "CUDA runtime call fails without a driver"),
    C("backend=args.distributed_backend,", "dist_backend", "replace", True,
      "backend='hccl' if args.distributed_backend == 'nccl' else args.distributed_backend,",
      "--distributed-backend defaults to nccl (choices nccl/gloo) in arguments.py"),
    C("if torch.cuda.device_count() > 0:", "torch_cuda_api", "replace", True, "if torch.npu.device_count() > 0:",
      "skipping model_parallel_cuda_manual_seed leaves the tensor-parallel RNG tracker empty; dropout under fork() then raises"),
    C("torch._C._jit_set_nvfuser_enabled(True)", "compile_mode", "removal", False, None,
      "nvfuser is CUDA-only; TorchScript fusion is not used on NPU (unconfirmed whether the call warns or errors on torch 2.1)"),
    C("bias = torch.rand(ffn_size, dtype=dtype, device='cuda')", "tensor_to_device", "replace", True,
      "bias = torch.rand(ffn_size, dtype=dtype, device='npu')", "warmup tensors are created on CUDA"),
    C("input = torch.rand((args.seq_length, args.micro_batch_size, ffn_size), dtype=dtype, device='cuda')",
      "tensor_to_device", "replace", True,
      "input = torch.rand((args.seq_length, args.micro_batch_size, ffn_size), dtype=dtype, device='npu')", "same"),
    C("input = torch.rand((seq_length, args.micro_batch_size, args.hidden_size), dtype=dtype, device='cuda')",
      "tensor_to_device", "replace", True,
      "input = torch.rand((seq_length, args.micro_batch_size, args.hidden_size), dtype=dtype, device='npu')", "same"),
    C("residual = torch.rand((seq_length, args.micro_batch_size, args.hidden_size), dtype=dtype, device='cuda')",
      "tensor_to_device", "replace", True,
      "residual = torch.rand((seq_length, args.micro_batch_size, args.hidden_size), dtype=dtype, device='npu')", "same"),
    C("bias = torch.rand((args.hidden_size), dtype=dtype, device='cuda').expand_as(residual)", "tensor_to_device",
      "replace", True, "bias = torch.rand((args.hidden_size), dtype=dtype, device='npu').expand_as(residual)", "same"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "silent no-op on NPU"),
])

E("megatron_fused_softmax", "Megatron-LM/megatron/model/fused_softmax.py", "kernel_rewrite",
  "Megatron-LM megatron/model/fused_softmax.py (scaled/masked softmax autograd functions over nvcc-built kernels)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "forward_fused_softmax now calls torch_npu.npu_scaled_masked_softmax"),
    C("probs = ScaledUpperTriangMaskedSoftmax.apply(input, scale)", "custom_cuda_extension", "replace", True,
      "probs = torch_npu.npu_scaled_masked_softmax(input.view(b, np, sq, sk), self._causal_mask(sq, input.device), scale, True)",
      "scaled_upper_triang_masked_softmax_cuda is an nvcc extension; the NPU fused op takes 4-D input and fixed_triu_mask=True"),
    C("return ScaledMaskedSoftmax.apply(input, mask, scale)", "custom_cuda_extension", "replace", True,
      "return torch_npu.npu_scaled_masked_softmax(input, mask, scale, False)",
      "scaled_masked_softmax_cuda -> npu_scaled_masked_softmax (bool mask, True = masked)"),
    C("return ScaledSoftmax.apply(input, scale)", "custom_cuda_extension", "replace", True,
      "return torch_npu.npu_scaled_masked_softmax(input, torch.zeros_like(input, dtype=torch.bool), scale, False)",
      "scaled_softmax_cuda has no direct NPU twin; an all-False mask gives the same result"),
    C("from scaled_masked_softmax_cuda import get_batch_per_block", "custom_cuda_extension", "removal", True, None,
      "importing the nvcc extension fails on NPU (is_kernel_available calls this for every attention)"),
    C("=return get_batch_per_block(sq, sk, b, np)", "custom_cuda_extension", "replace", True, "return 1",
      "CUDA warp/block tiling constraint; no equivalent for the NPU op"),
])

# ---------------------------------------------------------------- TenSet (learned cost model for TVM auto-scheduler)
E("tenset_mlp_model", "tenset/python/tvm/auto_scheduler/cost_model/mlp_model.py", "explicit_replacement",
  "tlc-pack/tenset python/tvm/auto_scheduler/cost_model/mlp_model.py (segment-sum MLP + LambdaRank loss)", [
    C("if torch.cuda.device_count():", "torch_cuda_api", "replace", True, "if torch.npu.device_count():",
      "0 on NPU: the cost model silently trains on CPU"),
    C('=device = "cuda:0"', "device_type", "replace", True, 'device = "npu:0"', "default device string"),
    C("self.base_model = base_model.cuda() if torch.cuda.device_count() else base_model", "tensor_to_device", "replace",
      True, "self.base_model = base_model.npu() if torch.npu.device_count() else base_model",
      "loaded model stays on the host while SegmentDataLoader ships batches to self.device -> device mismatch"),
    C('device = "cuda:0" if torch.cuda.device_count() else "cpu"', "device_type", "replace", True,
      'device = "npu:0" if torch.npu.device_count() else "cpu"',
      "LambdaRank mask built on CPU is AND-ed with NPU tensors -> device mismatch in every training step"),
])

E("tenset_train_model", "tenset/scripts/train_model.py", "explicit_replacement",
  "tlc-pack/tenset scripts/train_model.py (train/evaluate xgb and mlp cost models)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
      "CUDA_VISIBLE_DEVICES is ignored: --gpu has no effect and jobs pile onto NPU 0 (set it before the first NPU call)"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"', "silently trains the MLP on the host"),
])

# ---------------------------------------------------------------- unsloth (Triton RMSNorm used for CodeLlama LoRA)
E("unsloth_rms_layernorm", "unsloth/unsloth/kernels/rms_layernorm.py", "kernel_rewrite",
  "unslothai/unsloth unsloth/kernels/rms_layernorm.py (Triton fused RMS LayerNorm fwd/bwd)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "NPU branch below calls torch_npu.npu_rms_norm"),
    C('Y = torch.empty((n_rows, n_cols), dtype = X.dtype, device = "cuda")', "tensor_to_device", "replace", False,
      'Y = torch.empty((n_rows, n_cols), dtype = X.dtype, device = X.device)',
      "only reached on the CUDA/Triton path after the NPU branch; hard-coded device is still wrong hygiene"),
    C('r = torch.empty(n_rows, dtype = torch.float32, device = "cuda")', "tensor_to_device", "replace", False,
      'r = torch.empty(n_rows, dtype = torch.float32, device = X.device)', "same"),
    C("out = Fast_RMS_Layernorm.apply(X, W, eps)", "npu_fused_op", "replace", True,
      'out = torch_npu.npu_rms_norm(X, W, epsilon=eps)[0] if X.device.type == "npu" else Fast_RMS_Layernorm.apply(X, W, eps)',
      "Triton-CUDA kernel cannot launch on NPU tensors; npu_rms_norm has its own backward"),
])
