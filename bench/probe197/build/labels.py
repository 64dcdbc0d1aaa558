"""Labels for probe197: open LLM pre-training codebases (OLMo / GPT-NeoX / TinyLlama-lit-gpt), CUDA -> Ascend NPU.

One C(...) per upstream line a careful porter would edit so the file runs (and runs well) on Ascend NPU with
torch_npu. See README.md "How the labels were chosen" for the policy and the deliberate near-misses.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


CANN_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
TORCH_NPU_PIN = "torch-npu==2.1.0.post12"

# ---------------------------------------------------------------------------------------------------------------
# OLMo-style
# ---------------------------------------------------------------------------------------------------------------

E("olmo_train_script", "scripts/train.py", "explicit_replacement",
  "OLMo scripts/train.py (torchrun entry: set_device, FSDP wrap, nccl init)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry script; the torch 2.1-era pins need an explicit import before torch.npu / hccl exist"),
    C('torch.cuda.set_device(f"cuda:{get_local_rank()}")', "torch_cuda_api", "replace", True,
      'torch.npu.set_device(f"npu:{get_local_rank()}")',
      "torch.cuda.set_device and a 'cuda:N' string both fail on a CPU-build torch + torch_npu host"),
    C('device = torch.device("cuda")', "device_type", "replace", True,
      'device = torch.device("npu")',
      "device handed to the evaluators and Trainer; every batch is moved there"),
    C('device_mesh = init_device_mesh("cuda",', "device_type", "replace", True,
      'device_mesh = init_device_mesh("npu", (num_model_replicas, get_world_size() // num_model_replicas))',
      "hybrid-sharding path: a 'cuda' mesh cannot be built on an NPU host"),
    C("device_id=get_local_rank(),", "device_type", "replace", True,
      'device_id=torch.device("npu", get_local_rank()),',
      "FSDP turns a bare int device_id into a CUDA device (transfer_to_npu rewrites exactly this kwarg)"),
    C('dist.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'dist.init_process_group(backend="hccl")',
      "NCCL backend does not exist on Ascend; HCCL is the collective library"),
])

E("olmo_torch_util", "olmo/torch_util.py", "device_branch_or_abstraction",
  "OLMo olmo/torch_util.py (seed_all, get_default_device, peak_gpu_memory, gc_cuda)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "redundant: torch.manual_seed already seeds the PrivateUse1 (npu) generator via _seed_custom_device (torch>=2.1)"),
    C("if torch.cuda.is_available() and torch.cuda.is_initialized():", "device_type", "add_branch", True,
      'if torch.npu.is_available() and torch.npu.is_initialized():\n        return torch.device("npu")\n    elif torch.cuda.is_available() and torch.cuda.is_initialized():',
      "without an npu branch get_default_device() returns cpu, so FSDP's param_init_fn materialises every meta "
      "parameter on the host and any caller building tensors on the 'default device' gets CPU tensors"),
    C("if not torch.cuda.is_available():", "device_type", "add_branch", False,
      "if not (torch.cuda.is_available() or torch.npu.is_available()):",
      "peak-memory metric only: on NPU it silently returns None and the metric disappears"),
    C('device = torch.device("cuda")', "device_type", "replace", False,
      'device = torch.device("npu" if torch.npu.is_available() else "cuda")',
      "part of the optional peak_gpu_memory fix (unreachable on NPU until the guard above is changed)"),
    C("peak_mb = torch.cuda.max_memory_allocated(device) / 1000000", "torch_cuda_api", "replace", False,
      "peak_mb = torch.npu.max_memory_allocated(device) / 1000000",
      "part of the optional peak_gpu_memory fix"),
    C("torch.cuda.reset_max_memory_allocated(device)", "torch_cuda_api", "replace", False,
      "torch.npu.reset_max_memory_allocated(device)",
      "part of the optional peak_gpu_memory fix"),
    C("=if torch.cuda.is_available():", "device_type", "replace", False,
      "    if torch.npu.is_available():",
      "gc_cuda: cache flush silently skipped on NPU (memory headroom only)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "gc_cuda: would be a no-op on NPU; releasing cached blocks is a memory/perf matter"),
])

E("olmo_model", "olmo/model.py", "device_branch_or_abstraction",
  "OLMo olmo/model.py (BufferCache, low-precision LayerNorm, RoPE, optional flash-attn, SDPA)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "the NPU document-masking branch below calls torch_npu.npu_fusion_attention"),
    C('return torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", False,
      'return torch.device("npu" if torch.npu.is_available() else "cpu")',
      "only decides where RoPE/ALiBi caches are pre-built when init_device=meta; they are moved to q.device on "
      "first use, so on NPU this costs one host build + copy"),
    C('if tensor.device.type == "cuda" and torch.is_autocast_enabled():', "amp", "add_branch", False,
      'elif tensor.device.type == "npu" and torch.npu.is_autocast_enabled():\n            return tensor.to(dtype=dtype if dtype is not None else torch.npu.get_autocast_dtype())',
      "layer_norm_type=low_precision only: on NPU nothing is down-cast, LN runs in fp32 (correct, slower)"),
    C('if bias.device.type == "cuda" and torch.is_autocast_enabled():', "amp", "add_branch", False,
      'elif bias.device.type == "npu" and torch.npu.is_autocast_enabled():\n            target_dtype = torch.npu.get_autocast_dtype()',
      "padded batches / ALiBi: bias stays fp32 while q/k/v are bf16 under autocast; whether NPU SDPA accepts the "
      "mixed dtypes is unconfirmed"),
    C('assert self.flash_attn_varlen_func is not None, "flash-attn is required for document masking"',
      "attention_kernel", "add_branch", True,
      'if q.device.type == "npu":\n                return self._npu_varlen_attention(q, k, v, cu_doc_lens, dropout_p, is_causal)  # npu_fusion_attention, input_layout="TND", actual_seq_qlen=cu_doc_lens[1:]',
      "document masking (data.generate_doc_lengths) needs flash-attn varlen; on NPU the assert fires. "
      "torch_npu.npu_fusion_attention with TND layout is the documented counterpart"),
    C("elif self.flash_attn_func is not None and attn_mask is None:", "attention_kernel", "add_branch", False,
      'elif q.device.type == "npu" and attn_mask is None:\n            return torch_npu.npu_fusion_attention(q, k, v, self.config.n_heads, "BNSD", keep_prob=1.0 - dropout_p, scale=1.0 / math.sqrt(q.size(-1)), atten_mask=self._npu_causal_mask(q), sparse_mode=3)[0]',
      "flash-attn import fails quietly on NPU and the SDPA fallback already dispatches to NPU fused attention; "
      "explicit npu_fusion_attention is a performance choice"),
    C("torch.backends.cuda.enable_flash_sdp(True)", "torch_cuda_api", "removal", False, None,
      "CUDA SDPA backend switch; listed as unsupported in Ascend's 2.7.1 API list, effect on an NPU host unconfirmed"),
    C("torch.backends.cuda.enable_mem_efficient_sdp(False)", "torch_cuda_api", "removal", False, None,
      "same as enable_flash_sdp: CUDA-only SDPA backend flag (unconfirmed whether it errors or is ignored on NPU)"),
])

E("olmo_trainer", "olmo/train.py", "explicit_replacement",
  "OLMo olmo/train.py Trainer (autocast('cuda'), fused loss, torch.profiler, system metrics)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu",
      "only the (optional) profiler switch below refers to the torch_npu name; torch.npu itself is registered by the entry script"),
    C("from flash_attn.ops.triton.cross_entropy import cross_entropy_loss  # type: ignore", "npu_fused_op", "replace", True,
      "from olmo.npu_ops import npu_cross_entropy_loss as cross_entropy_loss  # wraps torch_npu.npu_cross_entropy_loss",
      "fused_loss=true imports flash-attn's Triton CE kernel, which cannot be installed on NPU"),
    C('with torch.autocast("cuda", enabled=True, dtype=self.cfg.autocast_precision):', "amp", "replace", True,
      'with torch.autocast("npu", enabled=True, dtype=self.cfg.autocast_precision):',
      "autocast('cuda') on an NPU host only warns and disables itself: the loss would silently run without AMP"),
    C('with torch.no_grad(), torch.autocast("cuda", enabled=True, dtype=self.cfg.autocast_precision):', "amp",
      "replace", True,
      'with torch.no_grad(), torch.autocast("npu", enabled=True, dtype=self.cfg.autocast_precision):',
      "same silent autocast disable in eval"),
    C("from torch.profiler import ProfilerActivity, schedule", "torch_cuda_api", "replace", False,
      "from torch_npu.profiler import ProfilerActivity, schedule",
      "torch_profiling only; torch.profiler on NPU records host ops only"),
    C("activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],", "torch_cuda_api", "replace", False,
      "activities=[ProfilerActivity.CPU, ProfilerActivity.NPU],",
      "ProfilerActivity.CUDA -> NPU (profiling only)"),
    C("return torch.profiler.profile(", "torch_cuda_api", "replace", False,
      "return torch_npu.profiler.profile(",
      "Ascend PyTorch Profiler instead of kineto/CUPTI (profiling only)"),
])

E("olmo_config_1b", "configs/official/OLMo-1B.yaml", "explicit_replacement",
  "OLMo configs/official/OLMo-1B.yaml", [
    C("flash_attention: true", "attention_kernel", "replace", False,
      "flash_attention: false  # no flash-attn on Ascend; SDPA dispatches to the NPU fused attention",
      "model code swallows the ImportError and falls back to SDPA, so leaving it true is harmless but misleading"),
])

E("olmo_slurm_launch", "scripts/slurm/olmo-1b.sbatch", "explicit_replacement",
  "OLMo-style multi-node Slurm launcher", [
    C("#SBATCH --gpus-per-node=8", "device_type", "replace", False,
      "#SBATCH --gres=npu:8           # site-specific GRES name",
      "how NPUs are requested depends on the site's Slurm GRES config (unconfirmed)"),
    C("module load gcc/11.3.0 cuda/12.1 nccl/2.18.3", "import_torch_npu", "replace", True,
      "module load gcc/11.3.0 && " + CANN_ENV,
      "CANN environment (ACL/HCCL libs) must be sourced or torch_npu cannot load libascendcl/libhccl"),
    C("export NCCL_DEBUG=INFO", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=1",
      "NCCL_* variables are ignored by HCCL; debug logging goes through the CANN log level"),
    C("export NCCL_IB_HCA=", "env_var", "removal", False, None,
      "InfiniBand HCA selection has no HCCL meaning (NPU RoCE ports are configured with hccn_tool)"),
    C("export NCCL_SOCKET_IFNAME=ens", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=ens",
      "HCCL picks its own host NIC for root-info negotiation when unset; may or may not be the right one"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False,
      "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu watchdog equivalent (documented default 1)"),
    C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", "replace", False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
      "caching-allocator option has an NPU twin; fragmentation/memory only"),
    C("nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -n 1", "device_type",
      "replace", True,
      "npu-smi info | head -n 20",
      "nvidia-smi does not exist on an Ascend host; with set -o pipefail the job script aborts here"),
])

E("olmo_pyproject", "pyproject.toml", "explicit_replacement",
  "OLMo pyproject.toml", [
    C('"torch>=2.1,<2.3",', "import_torch_npu", "npu_only_addition", True,
      '"torch-npu>=2.1.0,<2.3",',
      "torch_npu must be installed next to torch (its wheel version must match torch x.y.z)"),
    C('"flash-attn>=2.3.3,<2.6",', "attention_kernel", "removal", False, None,
      "optional [flash] extra; installing it fails on an NPU host, the core package does not need it"),
])

E("olmo_dockerfile", "docker/Dockerfile.train", "explicit_replacement",
  "OLMo training Dockerfile (CUDA base, cu121 wheel, flash-attn build)", [
    C("FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "image must carry CANN (driver mounted from the host); exact tag/registry unconfirmed"),
    C("ARG TORCH_VERSION=2.1.2", "import_torch_npu", "replace", True,
      "ARG TORCH_VERSION=2.1.0",
      "torch_npu 2.1.0.postN is built for torch 2.1.0 exactly; there is no 2.1.2 build"),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None,
      "no CUDA toolkit in the image; only matters for extension builds"),
    C('ENV TORCH_CUDA_ARCH_LIST="8.0;9.0"', "env_var", "removal", False, None,
      "CUDA arch list for nvcc builds; meaningless on NPU"),
    C("RUN pip install --no-cache-dir torch==${TORCH_VERSION} --index-url https://download.pytorch.org/whl/cu121",
      "import_torch_npu", "replace", True,
      "RUN pip install --no-cache-dir torch==${TORCH_VERSION} --index-url https://download.pytorch.org/whl/cpu && pip install --no-cache-dir " + TORCH_NPU_PIN,
      "Ascend pairs torch_npu with the CPU build of torch (x86: whl/cpu index); torch_npu itself must be added"),
    C("RUN pip install --no-cache-dir flash-attn==2.5.6 --no-build-isolation", "attention_kernel", "removal", True, None,
      "flash-attn builds CUDA kernels with nvcc; the docker build fails on the CANN image"),
])

E("olmo_hf_bench", "scripts/benchmark_hf_inference.py", "transfer_to_npu",
  "OLMo-style HF inference benchmark (transformers + torch.cuda timing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu  # noqa: F401",
      "this script is ported with transfer_to_npu: torch.cuda.Event/synchronize/memory stats/get_device_name and "
      "'cuda' strings passed to torch calls are redirected, so those lines stay"),
    C('p.add_argument("--device", default="cuda", help="Device the model is placed on (default: cuda).")',
      "device_type", "replace", False,
      'p.add_argument("--device", default="npu", help="Device the model is placed on (default: npu).")',
      "the default also reaches from_pretrained(device_map=...), whose coverage by transfer_to_npu is unconfirmed"),
    C("major, minor = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
      "major, minor = 8, 0  # Ascend: get_device_capability() returns None unless TORCH_NPU_DEVICE_CAPABILITY is set",
      "transfer_to_npu maps it to torch_npu.npu.get_device_capability, which returns None -> unpacking TypeError"),
    C('attn = "flash_attention_2" if major >= 8 and dtype in (torch.float16, torch.bfloat16) else "sdpa"',
      "attention_kernel", "replace", True,
      'attn = "sdpa"  # flash-attn has no NPU build; SDPA dispatches to the NPU fused attention',
      "transformers refuses flash_attention_2 without the flash-attn package"),
    C("sdp_ctx = torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False)",
      "attention_kernel", "replace", False,
      "sdp_ctx = contextlib.nullcontext()  # sdp_kernel is unsupported on Ascend",
      "--force-flash-sdp only; sdp_kernel is listed unsupported by Ascend, runtime effect unconfirmed"),
])

# ---------------------------------------------------------------------------------------------------------------
# GPT-NeoX-style
# ---------------------------------------------------------------------------------------------------------------

E("neox_initialize", "megatron/initialize.py", "explicit_replacement",
  "GPT-NeoX megatron/initialize.py", [
    C('assert torch.cuda.is_available(), "Megatron requires CUDA."', "torch_cuda_api", "replace", True,
      'assert torch.npu.is_available(), "Megatron requires an accelerator (NPU)."',
      "torch.cuda.is_available() is False on an NPU host, training aborts immediately"),
    C("device_count = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "device_count = torch.npu.device_count()",
      "returns 0 on NPU: set_device is skipped and the model-parallel groups are never initialised"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(device)",
      "binds each rank to its local NPU"),
    C("if torch.cuda.device_count() > 0:", "torch_cuda_api", "replace", True,
      "if torch.npu.device_count() > 0:",
      "else the model-parallel RNG tracker is never seeded and later fork() calls raise"),
])

E("neox_mpu_random", "megatron/mpu/random.py", "explicit_replacement",
  "GPT-NeoX / Megatron megatron/mpu/random.py (CUDA RNG tracker, activation checkpointing)", [
    C("from torch.cuda import _lazy_call, device as device_ctx_manager", "torch_cuda_api", "replace", True,
      "from torch_npu.npu import _lazy_call, device as device_ctx_manager",
      "torch.cuda._lazy_call only queues callbacks that never run on a non-CUDA build: RNG states are silently not restored"),
    C("numel, dtype=dtype, device=torch.cuda.current_device(), requires_grad=False", "tensor_to_device", "replace",
      True, "numel, dtype=dtype, device=torch.npu.current_device(), requires_grad=False",
      "checkpointed-activation buffer allocated on the current device"),
    C('device = torch.device("cuda")', "device_type", "replace", True,
      'device = torch.device("npu")', "default device for the RNG state setter"),
    C('device = torch.device("cuda", device)', "device_type", "replace", True,
      'device = torch.device("npu", device)', "int device index -> npu device"),
    C("idx = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "idx = torch.npu.current_device()", "current device index"),
    C("default_generator = torch.cuda.default_generators[idx]", "torch_cuda_api", "replace", True,
      "default_generator = torch.npu.default_generators[idx]",
      "empty tuple on a non-CUDA build -> IndexError; MindSpeed makes exactly this change"),
    C("=device=torch.cuda.current_device(),", "tensor_to_device", "replace", True,
      "device=torch.npu.current_device(),", "gather buffer for split activations"),
    C("orig_rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True,
      "orig_rng_state = torch.npu.get_rng_state()", "CUDA RNG query fails without CUDA"),
    C("=torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", True,
      "torch.npu.manual_seed(seed)",
      "on a non-CUDA build this is queued and never applied: model-parallel dropout streams would not be seeded"),
    C("self.states_[name] = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True,
      "self.states_[name] = torch.npu.get_rng_state()", "tracked state must be the NPU generator's"),
    C("orig_cuda_rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True,
      "orig_cuda_rng_state = torch.npu.get_rng_state()", "fork(): save device RNG state"),
    C("forked_state = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True,
      "forked_state = torch.npu.get_rng_state()", "fork(): read advanced device RNG state"),
    C("torch.cuda.manual_seed(data_parallel_seed)", "torch_cuda_api", "replace", True,
      "torch.npu.manual_seed(data_parallel_seed)", "default (data-parallel) device seed"),
    C("ctx.fwd_cuda_rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True,
      "ctx.fwd_cuda_rng_state = torch.npu.get_rng_state()",
      "activation recompute must replay the same NPU dropout masks"),
    C("bwd_cuda_rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True,
      "bwd_cuda_rng_state = torch.npu.get_rng_state()", "same, backward side"),
])

E("neox_mpu_data", "megatron/mpu/data.py", "explicit_replacement",
  "GPT-NeoX / Megatron megatron/mpu/data.py (broadcast_data)", [
    C("sizes_cuda = torch.cuda.LongTensor(sizes)", "tensor_to_device", "replace", True,
      "sizes_cuda = torch.tensor(sizes, dtype=torch.long, device=torch.npu.current_device())",
      "legacy torch.cuda.LongTensor constructor is unavailable without CUDA; HCCL broadcast needs an NPU tensor"),
    C(").cuda()", "tensor_to_device", "replace", True,
      ").npu()", "flattened batch moved to the device before the model-parallel broadcast"),
    C("total_numel, device=torch.cuda.current_device(), dtype=datatype", "tensor_to_device", "replace", True,
      "total_numel, device=torch.npu.current_device(), dtype=datatype", "receive buffer on non-source ranks"),
])

E("neox_utils", "megatron/utils.py", "explicit_replacement",
  "GPT-NeoX megatron/utils.py (report_memory, Timers, resource pool)", [
    C('string += " | allocated: {}".format(torch.cuda.memory_allocated() / mega_bytes)', "torch_cuda_api",
      "replace", True,
      'string += " | allocated: {}".format(torch.npu.memory_allocated() / mega_bytes)',
      "reads 0 on an NPU host: the memory report is silently wrong"),
    C("torch.cuda.max_memory_allocated() / mega_bytes", "torch_cuda_api", "replace", True,
      "torch.npu.max_memory_allocated() / mega_bytes", "same"),
    C('string += " | reserved: {}".format(torch.cuda.memory_reserved() / mega_bytes)', "torch_cuda_api",
      "replace", True,
      'string += " | reserved: {}".format(torch.npu.memory_reserved() / mega_bytes)', "same"),
    C("torch.cuda.max_memory_reserved() / mega_bytes", "torch_cuda_api", "replace", True,
      "torch.npu.max_memory_reserved() / mega_bytes", "same"),
    C("device_count = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "device_count = torch.npu.device_count()",
      "deepy.py launcher without a hostfile raises 'no GPU resources available'"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "Timer.start: torch.cuda.synchronize raises on a non-CUDA build"),
    C("torch.cuda.synchronize()  # make sure queued kernels are done before reading the clock", "torch_cuda_api",
      "replace", True, "torch.npu.synchronize()  # make sure queued kernels are done before reading the clock",
      "Timer.stop: same"),
    C("total_n_parameters = torch.tensor([params]).cuda(torch.cuda.current_device())", "tensor_to_device",
      "replace", True,
      "total_n_parameters = torch.tensor([params]).npu(torch.npu.current_device())",
      "all_reduce over HCCL needs a device tensor"),
])

E("neox_training", "megatron/training.py", "explicit_replacement",
  "GPT-NeoX megatron/training.py (optimizer choice, profiling, memory snapshots, train loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "the ported profiler / mstx / memory-snapshot lines refer to the torch_npu name"),
    C("torch.cuda.nvtx.range_push(msg)", "torch_cuda_api", "replace", True,
      "_RANGE_IDS.append(torch_npu.npu.mstx.range_start(msg))",
      "NVTX is a stub that raises on a non-CUDA build (--profile only); mstx.range_start returns an id"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True,
      "torch_npu.npu.mstx.range_end(_RANGE_IDS.pop())", "paired with range_start (--profile only)"),
    C("torch.cuda.memory._record_memory_history(", "torch_cuda_api", "replace", True,
      "torch_npu.npu.memory._record_memory_history(",
      "memory_profiling only; the CUDA binding is missing on a non-CUDA build, torch_npu has the NPU version"),
    C("torch.cuda.memory._dump_snapshot(", "torch_cuda_api", "replace", True,
      'torch_npu.npu.memory._dump_snapshot(f"{neox_args.memory_profiling_path}/mem_snapshot.pickle")',
      "memory_profiling only"),
    C("from apex.optimizers import FusedAdam as Adam", "fused_optimizer", "replace", False,
      "from torch_npu.optim import NpuFusedAdamW as Adam",
      "NVIDIA apex is absent on NPU, so the code falls back to deepspeed.ops.adam.FusedAdam; whether the DeepSpeed "
      "NPU op builder provides it for this DeeperSpeed pin is unconfirmed. NpuFusedAdamW is the documented fused AdamW"),
    C("prof = torch.profiler.profile(", "torch_cuda_api", "replace", False,
      "prof = torch_npu.profiler.profile(",
      "--profile only; torch.profiler on NPU records host ops only"),
    C("on_trace_ready=torch.profiler.tensorboard_trace_handler(", "torch_cuda_api", "replace", False,
      "on_trace_ready=torch_npu.profiler.tensorboard_trace_handler(",
      "goes with the torch_npu profiler"),
    C("torch.cuda.cudart().cudaProfilerStart()", "torch_cuda_api", "removal", True, None,
      "nsys capture range: cudart() raises on a non-CUDA build; the torch_npu profiler schedule covers the window "
      "(the one-line if-guard goes with it)"),
    C("torch.cuda.cudart().cudaProfilerStop()", "torch_cuda_api", "removal", True, None,
      "same, stop side"),
])

E("neox_text_generation", "megatron/text_generation_utils.py", "explicit_replacement",
  "GPT-NeoX megatron/text_generation_utils.py", [
    C("tokens = context_tokens.contiguous().cuda()", "tensor_to_device", "replace", True,
      "tokens = context_tokens.contiguous().npu()", "prompt tokens to device"),
    C("terminate_runs_tensor = torch.cuda.LongTensor([terminate_runs])", "tensor_to_device", "replace", True,
      "terminate_runs_tensor = torch.tensor([terminate_runs], dtype=torch.long, device=torch.npu.current_device())",
      "torch.cuda.LongTensor unavailable; broadcast over HCCL needs a device tensor"),
    C("context_tokens = torch.cuda.LongTensor(context_tokens)", "tensor_to_device", "replace", True,
      "context_tokens = torch.tensor(context_tokens, dtype=torch.long, device=torch.npu.current_device())", "same"),
    C("stop_tokens[i] = torch.cuda.LongTensor(stop_tokens[i])", "tensor_to_device", "replace", True,
      "stop_tokens[i] = torch.tensor(stop_tokens[i], dtype=torch.long, device=torch.npu.current_device())", "same"),
    C("token_generation_start_index = torch.cuda.LongTensor(context_lengths)", "tensor_to_device", "replace", True,
      "token_generation_start_index = torch.tensor(context_lengths, dtype=torch.long, device=torch.npu.current_device())",
      "same"),
    C("state_is_done = torch.zeros([batch_size]).byte().cuda()", "tensor_to_device", "replace", True,
      "state_is_done = torch.zeros([batch_size]).byte().npu()", "generation state on device"),
    C("token_generation_end_index = torch.ones([batch_size]).long().cuda() * (-1)", "tensor_to_device", "replace",
      True, "token_generation_end_index = torch.ones([batch_size]).long().npu() * (-1)", "same"),
    C("torch.empty(maximum_tokens, neox_args.padded_vocab_size).float().cuda()", "tensor_to_device", "replace", True,
      "torch.empty(maximum_tokens, neox_args.padded_vocab_size).float().npu()", "same"),
    C("else torch.zeros(batch_size, dtype=torch.long).cuda()", "tensor_to_device", "replace", True,
      "else torch.zeros(batch_size, dtype=torch.long).npu()", "pipe-parallel broadcast buffer"),
])

E("neox_fused_kernels", "megatron/fused_kernels/__init__.py", "device_branch_or_abstraction",
  "GPT-NeoX megatron/fused_kernels/__init__.py (JIT cpp_extension.load of the softmax kernels)", [
    C("def load(neox_args=None):", "custom_cuda_extension", "npu_only_addition", True,
      "    if importlib.util.find_spec(\"torch_npu\") is not None:\n        return  # NPU: fused softmax goes through torch_npu.npu_scaled_masked_softmax, nothing to build",
      "initialize_megatron calls load() whenever a softmax/rope fusion flag is on (the 1-3B config turns one on); "
      "the nvcc probe and cpp_extension.load cannot work on an NPU host"),
    C("def load_fused_kernels():", "custom_cuda_extension", "npu_only_addition", True,
      "    if importlib.util.find_spec(\"torch_npu\") is not None:\n        return",
      "otherwise the import of scaled_upper_triang_masked_softmax_cuda fails and the function calls exit()"),
])

E("neox_fused_softmax", "megatron/model/fused_softmax.py", "kernel_rewrite",
  "GPT-NeoX megatron/model/fused_softmax.py (FusedScaleMaskSoftmax)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "the NPU branch calls torch_npu.npu_scaled_masked_softmax"),
    C("if self.is_kernel_available(mask, *input.size()):", "npu_fused_op", "add_branch", True,
      'if input.device.type == "npu" and (self.upper_triang_mask_fusion or self.general_mask_fusion) and mask is not None:\n            return torch_npu.npu_scaled_masked_softmax(input, mask, self.scale if self.scale is not None else 1.0, fixed_triu_mask=self.upper_triang_mask_fusion)\n        if self.is_kernel_available(mask, *input.size()):',
      "with the fusion flag on, is_kernel_available() imports scaled_masked_softmax_cuda (ImportError on NPU); "
      "npu_scaled_masked_softmax is the Ascend fused scale+mask+softmax"),
])

E("neox_args", "megatron/neox_arguments/neox_args.py", "explicit_replacement",
  "GPT-NeoX megatron/neox_arguments/neox_args.py", [
    C('distributed_backend: str = "nccl"', "dist_backend", "replace", True,
      'distributed_backend: str = "hccl"',
      "default passed to deepspeed.init_distributed(dist_backend=...); an explicit 'nccl' is not remapped"),
])

E("neox_config_1_3b", "configs/1-3B.yml", "explicit_replacement",
  "GPT-NeoX configs/1-3B.yml", [
    C('"attention_config": [[["flash"], 24]],', "attention_kernel", "replace", True,
      '"attention_config": [[["global"], 24]],',
      "'flash' imports the flash-attn package (no NPU build); 'global' uses the fused-softmax path, which the port "
      "routes to npu_scaled_masked_softmax"),
    C('"distributed_backend": "nccl",', "dist_backend", "replace", True,
      '"distributed_backend": "hccl",', "overrides the code default; must be HCCL on Ascend"),
])

E("neox_requirements", "requirements/requirements.txt", "explicit_replacement",
  "GPT-NeoX requirements/requirements.txt", [
    C("git+https://github.com/EleutherAI/DeeperSpeed.git@02e2ebf7dee6aaab3d89094ed470a4609763c742#egg=deepspeed",
      "distributed_framework", "replace", False,
      "deepspeed>=0.12.4",
      "needs a DeepSpeed with accelerator/npu_accelerator.py; whether this DeeperSpeed pin has it is unconfirmed"),
    C("tokenizers>=0.12.1", "import_torch_npu", "npu_only_addition", True,
      TORCH_NPU_PIN, "torch_npu itself (torch comes from the base image)"),
])

E("neox_dockerfile", "Dockerfile", "explicit_replacement",
  "GPT-NeoX Dockerfile (CUDA devel base, apex --cuda_ext, fused kernels setup.py)", [
    C("FROM nvidia/cuda:12.1.1-devel-ubuntu22.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "needs a CANN base image; exact tag/registry unconfirmed"),
    C("wget iputils-ping net-tools libcupti-dev libmlx4-1", "device_type", "replace", False,
      "        wget iputils-ping net-tools libmlx4-1 infiniband-diags ibutils \\",
      "CUPTI is a CUDA profiling library; useless on NPU (availability on the CANN base image unconfirmed)"),
    C("RUN python -m pip install --no-cache-dir torch==2.1.2 torchvision==0.16.2 --index-url https://download.pytorch.org/whl/cu121",
      "import_torch_npu", "replace", True,
      "RUN python -m pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu && python -m pip install --no-cache-dir " + TORCH_NPU_PIN,
      "CPU torch matching the torch_npu version, plus torch_npu"),
    C("pip install -r requirements-onebitadam.txt", "distributed_framework", "replace", False,
      "RUN python -m pip install --no-cache-dir -r requirements.txt",
      "1-bit Adam pulls cupy-cuda, which has no Ascend support (only used with optimizer type onebitadam)"),
    C("RUN python -m pip install -r requirements-sparseattention.txt", "attention_kernel", "removal", False, None,
      "Triton-based DeepSpeed sparse attention; not usable on NPU (install outcome on the CANN image unconfirmed)"),
    C("RUN python -m pip install -r requirements-flashattention.txt", "attention_kernel", "removal", True, None,
      "flash-attn build needs nvcc; the image build fails"),
    C("RUN python -m pip install -v --disable-pip-version-check --no-cache-dir --no-build-isolation \\",
      "custom_cuda_extension", "removal", True, None,
      "apex with --cuda_ext needs nvcc; the port uses torch_npu fused optimizers instead"),
    C("RUN python setup.py install", "custom_cuda_extension", "removal", True, None,
      "builds the CUDA fused-softmax kernels; replaced by torch_npu.npu_scaled_masked_softmax"),
])

# ---------------------------------------------------------------------------------------------------------------
# TinyLlama / lit-gpt-style
# ---------------------------------------------------------------------------------------------------------------

E("tinyllama_pretrain", "pretrain/tinyllama.py", "explicit_replacement",
  "TinyLlama pretrain/tinyllama.py (Lightning Fabric + FSDPStrategy)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "entry script"),
    C("limit_all_gathers=True,", "dist_backend", "npu_only_addition", True,
      'process_group_backend="hccl",',
      "Lightning picks 'nccl' only for cuda root devices and 'gloo' for anything else; gloo cannot run FSDP "
      "collectives on NPU tensors"),
    C('fabric = L.Fabric(accelerator="cuda",', "device_type", "replace", True,
      "fabric = L.Fabric(accelerator=NPUAccelerator(), devices=devices, strategy=strategy, precision=precision, loggers=[logger, wandb_logger])",
      "accelerator='cuda' raises on an NPU host; Lightning 2.1 has no built-in NPU accelerator, so a small "
      "Accelerator subclass (torch.npu based) is registered (unconfirmed that none ships)"),
    C("optimizer = torch.optim.AdamW(", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(",
      "performance only (msFmkTransplt advice); interaction with FSDP flat params unconfirmed"),
    C('    if fabric.device.type == "cuda":', "device_type", "add_branch", False,
      '    if fabric.device.type == "npu":\n        fabric.print(f"Memory used: {torch.npu.max_memory_allocated() / 1e9:.02f} GB")\n    elif fabric.device.type == "cuda":',
      "final memory print is silently skipped on NPU"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", "no-op on NPU otherwise; memory headroom only"),
])

E("tinyllama_model", "lit_gpt/model.py", "explicit_replacement",
  "TinyLlama lit_gpt/model.py (flash_attn_func, xformers SwiGLU, fused rotary)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu",
      "only the optional npu_fusion_attention branch names torch_npu here (the SwiGLU replacement lives in its own module)"),
    C("from flash_attn import flash_attn_func", "attention_kernel", "replace", True,
      "flash_attn_func = None  # flash-attn is CUDA-only; see the NPU branch in scaled_dot_product_attention",
      "unguarded import: the model module cannot even be imported on NPU"),
    C("from xformers.ops import SwiGLU", "npu_fused_op", "replace", True,
      "from lit_gpt.npu_ops import NpuSwiGLU as SwiGLU  # same w1/w2/w3 layout (_pack_weights=False), forward via torch_npu.npu_swiglu",
      "xformers has no NPU backend; keeping the class name keeps _init_weights and the checkpoint keys unchanged"),
    C('if FlashAttention2Available and mask is None and q.device.type == "cuda"', "attention_kernel",
      "add_branch", False,
      'if mask is None and q.device.type == "npu":\n            return torch_npu.npu_fusion_attention(q, k, v, self.config.n_head, "BSND", atten_mask=self._npu_causal_mask(q), scale=scale, sparse_mode=3)[0]',
      "SDPA fallback already works on NPU; npu_fusion_attention (BSND, native GQA) avoids the repeat_interleave"),
])

E("tinyllama_fused_rotary", "lit_gpt/fused_rotary_embedding.py", "kernel_rewrite",
  "TinyLlama lit_gpt/fused_rotary_embedding.py (flash-attn csrc/rotary binding)", [
    C("=import rotary_emb", "custom_cuda_extension", "removal", True, None,
      "flash-attn's csrc/rotary CUDA extension cannot be built on NPU"),
    C("rotary_emb.apply_rotary(x1, x2, cos_, sin_, o1, o2, False)", "custom_cuda_extension", "replace", True,
      "r1, r2 = x1 * cos_ - x2 * sin_, x1 * sin_ + x2 * cos_; o1.copy_(r1); o2.copy_(r2)",
      "forward rotation in plain torch ops (npu_rotary_mul is the faster option but wants full-width cos/sin)"),
    C("rotary_emb.apply_rotary(do1, do2, cos_, sin_, dx1, dx2, True)", "custom_cuda_extension", "replace", True,
      "g1, g2 = do1 * cos_ + do2 * sin_, do2 * cos_ - do1 * sin_; dx1.copy_(g1); dx2.copy_(g2)",
      "backward = conjugate rotation"),
])

E("tinyllama_rmsnorm", "lit_gpt/rmsnorm.py", "kernel_rewrite",
  "TinyLlama lit_gpt/rmsnorm.py (flash-attn dropout_layer_norm extension)", [
    C("=import dropout_layer_norm", "custom_cuda_extension", "replace", True,
      'dropout_layer_norm = importlib.import_module("dropout_layer_norm") if importlib.util.find_spec("dropout_layer_norm") else None',
      "unguarded import of a CUDA-only extension; the module (and FusedRMSNorm) cannot be imported on NPU"),
    C("from torch.nn import init", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "for torch_npu.npu_rms_norm"),
    C("return DropoutAddLayerNormFn.apply(", "npu_fused_op", "add_branch", True,
      'if x.device.type == "npu":\n        return torch_npu.npu_rms_norm(x, weight, epsilon)[0]\n    return DropoutAddLayerNormFn.apply(',
      "FusedRMSNorm (the TinyLlama default norm) otherwise ends in dropout_layer_norm.dropout_add_ln_fwd"),
])

E("tinyllama_fused_xent", "lit_gpt/fused_cross_entropy.py", "kernel_rewrite",
  "TinyLlama lit_gpt/fused_cross_entropy.py (flash-attn xentropy_cuda_lib)", [
    C("=import xentropy_cuda_lib", "custom_cuda_extension", "removal", True, None,
      "flash-attn's csrc/xentropy CUDA extension; unguarded import breaks `from lit_gpt import FusedCrossEntropyLoss`"),
    C("losses, lse = xentropy_cuda_lib.forward(logits, labels, smoothing)", "custom_cuda_extension", "replace", True,
      "lse = torch.logsumexp(logits.float(), dim=-1); losses = lse - logits.float().gather(1, labels.clamp(min=0).unsqueeze(1)).squeeze(1)",
      "single-rank forward in torch ops (TinyLlama uses smoothing=0)"),
    C("losses, lse_local = xentropy_cuda_lib.forward(", "custom_cuda_extension", "replace", False,
      "lse_local = torch.logsumexp(logits.float(), dim=-1); losses = (lse_local - logits.float().gather(1, labels_local.clamp(0, vocab_size - 1).unsqueeze(1)).squeeze(1)).masked_fill(labels_mask, 0.0)",
      "tensor-parallel branch; TinyLlama never passes a process_group, so it is unreachable here"),
    C("grad_logits = xentropy_cuda_lib.backward(", "custom_cuda_extension", "replace", True,
      "grad_logits = (torch.softmax(logits.float(), dim=-1) - torch.nn.functional.one_hot(labels.clamp(min=0), logits.size(-1)).float()).mul_(grad_loss.unsqueeze(1)).to(logits.dtype)",
      "gradient of CE w.r.t. logits in torch ops"),
    C("assert input.is_cuda and target.is_cuda", "device_type", "replace", True,
      'assert input.device.type in ("cuda", "npu") and target.device == input.device',
      "is_cuda is False for NPU tensors: every training step would assert"),
])

E("tinyllama_speed_monitor", "lit_gpt/speed_monitor.py", "device_branch_or_abstraction",
  "TinyLlama / lit-gpt lit_gpt/speed_monitor.py (GPU peak-FLOPs table for MFU)", [
    C('if device.type == "cuda":', "device_type", "add_branch", False,
      'if device.type == "npu":\n        return NPU_AVAILABLE_FLOPS.get(torch.npu.get_device_name(device).lower(), {}).get(precision)\n    if device.type == "cuda":',
      "unknown device types already fall through to None (no MFU metric); an Ascend peak-FLOPs entry is an enhancement"),
])

E("tinyllama_utils", "lit_gpt/utils.py", "explicit_replacement",
  "TinyLlama lit_gpt/utils.py (precision default, lazy_load, chunked CE) - no change needed", [])

E("litgpt_generate", "generate/base.py", "explicit_replacement",
  "lit-gpt generate/base.py (Fabric inference, --compile, --quantize)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "entry script"),
    C('strategy = FSDPStrategy(auto_wrap_policy={Block}, cpu_offload=False)', "dist_backend", "replace", True,
      'strategy = FSDPStrategy(auto_wrap_policy={Block}, cpu_offload=False, process_group_backend="hccl")',
      "--strategy fsdp: Lightning would default to gloo for a non-cuda device"),
    C("fabric = L.Fabric(devices=devices, precision=precision, strategy=strategy, plugins=plugins)", "device_type",
      "replace", True,
      "fabric = L.Fabric(accelerator=NPUAccelerator(), devices=devices, precision=precision, strategy=strategy, plugins=plugins)",
      "accelerator='auto' finds no CUDA and silently runs generation on the CPU"),
    C("torch._inductor.config.triton.unique_kernel_names = True", "triton_kernel_tuning", "removal", False, None,
      "Inductor/Triton tuning knob; irrelevant with an NPU graph backend"),
    C("torch._inductor.config.coordinate_descent_tuning = True", "triton_kernel_tuning", "removal", False, None,
      "same"),
    C('next_token = torch.compile(next_token, mode="reduce-overhead")', "compile_mode", "replace", False,
      'next_token = torch.compile(next_token, backend="npugraphs")',
      "--compile only: reduce-overhead means CUDA graphs; npugraphs is the documented NPU analogue. Behaviour of the "
      "unchanged line on torch_npu 2.1 is unconfirmed"),
    C('    if fabric.device.type == "cuda":', "device_type", "add_branch", False,
      '    if fabric.device.type == "npu":\n        fabric.print(f"Memory used: {torch.npu.max_memory_allocated() / 1e9:.02f} GB", file=sys.stderr)\n    elif fabric.device.type == "cuda":',
      "memory print silently skipped on NPU"),
])

E("tinyllama_install", "scripts/install_env.sh", "explicit_replacement",
  "TinyLlama PRETRAIN.md install steps as a script", [
    C('conda activate "${ENV_NAME}"', "import_torch_npu", "npu_only_addition", True,
      CANN_ENV, "CANN environment must be sourced before torch_npu can load"),
    C("pip install --index-url https://download.pytorch.org/whl/nightly/cu118 --pre 'torch>=2.1.0dev'",
      "import_torch_npu", "replace", True,
      "pip install torch==2.1.0 --index-url https://download.pytorch.org/whl/cpu && pip install " + TORCH_NPU_PIN,
      "a nightly CUDA wheel cannot be paired with torch_npu (wheel must match torch x.y.z exactly)"),
    C("pip install -v -U git+https://github.com/facebookresearch/xformers.git@main#egg=xformers", "npu_fused_op",
      "removal", False, None,
      "xformers has no NPU backend and the ported model no longer imports it (build outcome on NPU host unconfirmed)"),
    C("=python setup.py install", "attention_kernel", "removal", True, None,
      "flash-attn setup.py requires CUDA/nvcc"),
    C("cd csrc/rotary && pip install .", "custom_cuda_extension", "removal", True, None,
      "CUDAExtension build, replaced by torch ops in fused_rotary_embedding.py"),
    C("cd ../layer_norm && pip install .", "custom_cuda_extension", "removal", True, None,
      "CUDAExtension build, replaced by torch_npu.npu_rms_norm"),
    C("cd ../xentropy && pip install .", "custom_cuda_extension", "removal", True, None,
      "CUDAExtension build, replaced by torch ops in fused_cross_entropy.py"),
    C('python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())"',
      "torch_cuda_api", "replace", False,
      'python -c "import torch, torch_npu; print(torch.__version__, torch_npu.__version__, torch.npu.is_available())"',
      "sanity print only; would report False"),
])

E("tinyllama_environment", "environment.yml", "explicit_replacement",
  "TinyLlama-style conda environment.yml", [
    C("=- nvidia", "import_torch_npu", "removal", False, None, "NVIDIA conda channel is not needed"),
    C("- pytorch-cuda=11.8", "import_torch_npu", "replace", True,
      "- cpuonly",
      "torch_npu is paired with the CPU build of torch; pytorch-cuda selects the CUDA build"),
    C("- cuda-nvcc=11.8", "custom_cuda_extension", "removal", False, None,
      "nvcc was only there to build the flash-attn extensions"),
    C("- lightning==2.1.2", "import_torch_npu", "npu_only_addition", True,
      "      - " + TORCH_NPU_PIN, "torch_npu itself"),
    C("- xformers==0.0.22.post7", "npu_fused_op", "removal", False, None,
      "CUDA-only package, no longer imported by the ported model (install outcome on NPU host unconfirmed)"),
    C("- flash-attn==2.3.3", "attention_kernel", "removal", True, None,
      "flash-attn build requires CUDA; env creation fails"),
])

E("tinyllama_launch", "scripts/pretrain_multinode.sh", "explicit_replacement",
  "TinyLlama multi-node `lightning run model` launcher", [
    C("=set -e", "import_torch_npu", "npu_only_addition", True,
      CANN_ENV, "CANN environment for every rank"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "ignored on NPU, but job A would use devices 0-3 anyway; rename for clarity / isolation"),
    C("export CUDA_VISIBLE_DEVICES=4,5,6,7", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=4,5,6,7",
      "ignored on NPU: job B would also land on devices 0-3 and collide with job A"),
    C("export NCCL_IB_GID_INDEX=3", "env_var", "removal", False, None,
      "RoCE GID index for NCCL; no HCCL counterpart"),
    C("--accelerator=cuda \\", "device_type", "removal", True, None,
      "the CLI would force the CUDA accelerator; let the script's Fabric(accelerator=...) choose the NPU"),
])
