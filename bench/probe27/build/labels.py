"""Labels for probe27 (hand-written synthetic upstream files; see ../README.md).

C(sub, kind, change_type, required, ported, note) -> one labelled change; `sub` must match exactly one line
("=text": the stripped line equals text).
E(id, path, style, imitates, changes) -> one file entry.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required,
            "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


R, A, B, X = "replace", "npu_only_addition", "add_branch", "removal"

K = "/work/shared/knowledge/torch-npu-migration.md"
D = "/work/shared/knowledge/ascend-distributed.md"
TI = "import torch_npu after import torch (" + K + " §1.1/§3.4)"

E("neox_initialize", "megatron/initialize.py", "explicit_replacement", "GPT-NeoX megatron/initialize.py", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", TI),
    C('assert torch.cuda.is_available(), "Megatron requires CUDA."', "torch_cuda_api", R, True,
      'assert torch.npu.is_available(), "Megatron requires an NPU."', "torch.cuda.is_available() is False on an NPU host, assertion aborts start-up"),
    C("device_count = torch.cuda.device_count()", "torch_cuda_api", R, True, "device_count = torch.npu.device_count()",
      "cuda device_count is 0 on NPU host: no set_device and no model-parallel init"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)", K + " §3.4"),
    C("if torch.cuda.device_count() > 0:", "torch_cuda_api", R, True, "if torch.npu.device_count() > 0:",
      "otherwise model-parallel RNG tracker is never seeded on NPU"),
    C("mpu.model_parallel_cuda_manual_seed(seed)", "torch_cuda_api", R, False, "mpu.model_parallel_npu_manual_seed(seed)",
      "helper uses torch.cuda RNG state internally (mpu/random.py must be ported alongside); name here is cosmetic"),
])

E("neox_fused_kernels", "megatron/fused_kernels/__init__.py", "kernel_rewrite", "GPT-NeoX megatron/fused_kernels JIT loader", [
    C('os.environ["TORCH_CUDA_ARCH_LIST"] = ""', "env_var", X, False, None, "CUDA arch list meaningless on NPU"),
    C('[cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True', "custom_cuda_extension", X, True, None,
      "no nvcc on an Ascend host; subprocess fails"),
    C("cpp_extension.CUDA_HOME", "custom_cuda_extension", X, True, None, "CUDA_HOME is None on NPU host"),
    C("return cpp_extension.load(", "custom_cuda_extension", R, True,
      "return None  # CUDA kernels replaced by torch_npu.npu_scaled_masked_softmax / npu_rotary_mul",
      "cpp_extension.load of .cu sources cannot build without nvcc; " + K + " §6 (custom CUDA extensions)"),
    C('srcpath / "scaled_upper_triang_masked_softmax_cuda.cu",', "custom_cuda_extension", X, True, None, ".cu source has no NPU build path"),
    C('srcpath / "scaled_masked_softmax_cuda.cu",', "custom_cuda_extension", X, True, None, ".cu source has no NPU build path"),
    C('srcpath / "fused_rotary_positional_embedding_cuda.cu",', "custom_cuda_extension", X, True, None,
      ".cu source; replace with torch_npu.npu_rotary_mul (" + K + " §5)"),
])

E("neox_fused_softmax", "megatron/model/fused_softmax.py", "kernel_rewrite", "GPT-NeoX megatron/model/fused_softmax.py", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", TI),
    C("softmax_results = scaled_upper_triang_masked_softmax_cuda.forward(", "npu_fused_op", R, True,
      "softmax_results = torch_npu.npu_scaled_masked_softmax(inputs, causal_mask, scale_t[0].item(), fixed_triu_mask=True)",
      "CUDA extension call; npu_scaled_masked_softmax(x, mask, scale, fixed_triu_mask) " + K + " §5"),
    C("input_grads = scaled_upper_triang_masked_softmax_cuda.backward(", "custom_cuda_extension", R, True,
      "input_grads = torch_npu.npu_scaled_masked_softmax_backward(output_grads, softmax_results, scale_t[0].item(), True)",
      "CUDA extension backward; backward op name unconfirmed (or drop the autograd.Function and let autograd handle it)"),
    C("softmax_results = scaled_masked_softmax_cuda.forward(inputs, mask, scale_t[0])", "npu_fused_op", R, True,
      "softmax_results = torch_npu.npu_scaled_masked_softmax(inputs, mask, scale_t[0].item())", K + " §5"),
    C("input_grads = scaled_masked_softmax_cuda.backward(", "custom_cuda_extension", R, True,
      "input_grads = torch_npu.npu_scaled_masked_softmax_backward(output_grads, softmax_results, scale_t[0].item(), False)",
      "CUDA extension backward; NPU backward name unconfirmed"),
    C("return scaled_masked_softmax_cuda.get_batch_per_block(sq, sk, b, np)", "custom_cuda_extension", R, True,
      "return 1  # CUDA launch geometry helper; no NPU equivalent",
      "imports the CUDA extension on every forward when fusion enabled -> ImportError on NPU"),
])

E("neox_config", "configs/1-3B.yml", "explicit_replacement", "GPT-NeoX configs/*.yml neox_args", [
    C('"scaled_upper_triang_masked_softmax_fusion": true,', "custom_cuda_extension", R, True,
      '"scaled_upper_triang_masked_softmax_fusion": false,', "triggers load_fused_kernels() -> nvcc JIT build"),
    C('"rope_fusion": true,', "custom_cuda_extension", R, True, '"rope_fusion": false,', "fused rotary is a .cu extension"),
    C('"attention_config": [[["flash"], 24]],', "attention_kernel", R, True, '"attention_config": [[["global"], 24]],',
      "flash selects the flash-attn package, not installable on NPU (" + K + " §6)"),
    C('"distributed_backend": "nccl",', "dist_backend", R, True, '"distributed_backend": "hccl",', K + " §2.4"),
    C('"fp16": true,', "amp", R, False, '"bf16": true,', "bf16 preferred on Atlas A2; fp16 with loss scaling also works (performance/stability choice)"),
])

E("neox_dockerfile", "Dockerfile", "explicit_replacement", "GPT-NeoX Dockerfile", [
    C("FROM nvidia/cuda:12.1.1-devel-ubuntu22.04", "custom_cuda_extension", R, True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10", "CUDA base image; need CANN toolkit image (tag unconfirmed)"),
    C("iputils-ping net-tools libcupti-dev", "custom_cuda_extension", R, False,
      "iputils-ping net-tools libmlx4-1 infiniband-diags ibutils \\", "libcupti-dev is CUDA profiling lib; harmless but useless"),
    C("python -m pip install gpustat", "torch_cuda_api", R, False, "python -m pip install --upgrade setuptools",
      "gpustat needs NVML; npu-smi instead (" + K + " §6)"),
    C("torch==2.2.1 --index-url https://download.pytorch.org/whl/cu121", "custom_cuda_extension", R, True,
      "RUN python -m pip install --no-cache-dir torch==2.1.0 torch-npu==2.1.0.post10 --index-url https://download.pytorch.org/whl/cpu",
      "cu121 wheel; NPU needs CPU torch + matching torch_npu (" + K + " §1.1, §1.2)"),
    C("RUN python -m pip install -r requirements-flashattention.txt", "attention_kernel", X, True, None,
      "flash-attn cannot be installed on NPU (" + K + " §6)"),
    C("git+https://github.com/NVIDIA/apex.git@", "custom_cuda_extension", R, True,
      "git+https://gitee.com/ascend/apex.git", "--cuda_ext build of NVIDIA apex fails without nvcc; Ascend apex patch (" + K + " §6)"),
    C('--config-settings "--build-option=--cpp_ext" --config-settings "--build-option=--cuda_ext"', "custom_cuda_extension", R, True,
      '--config-settings "--build-option=--cpp_ext" \\', "--cuda_ext needs nvcc"),
    C('ENV TORCH_CUDA_ARCH_LIST="8.0;8.6;9.0"', "env_var", X, False, None, "CUDA arch list; no effect on NPU"),
    C("RUN python megatron/fused_kernels/setup.py install", "custom_cuda_extension", X, True, None,
      "builds .cu kernels with nvcc; fails on CANN image"),
])

E("neox_requirements", "requirements/requirements.txt", "explicit_replacement", "GPT-NeoX requirements/requirements.txt", [
    C("deepspeed@git+https://github.com/EleutherAI/DeeperSpeed.git", "distributed_framework", R, False,
      "deepspeed>=0.14.0", "upstream DeepSpeed has an NPU accelerator (" + K + " §6); whether the DeeperSpeed fork carries it is unconfirmed"),
    C("=flash-attn==2.5.6", "attention_kernel", X, True, None, "flash-attn not installable on NPU (" + K + " §6)"),
    C("=triton==2.1.0", "triton_kernel_tuning", R, False, "triton-ascend", "triton-ascend is the NPU Triton (" + K + " §6); only needed if Triton kernels are kept"),
    C("apex@git+https://github.com/NVIDIA/apex.git", "custom_cuda_extension", R, True,
      "apex  # Ascend apex patch, built from gitee.com/ascend/apex", "NVIDIA apex CUDA build fails (" + K + " §6)"),
    C("=nvidia-ml-py3", "torch_cuda_api", R, False, "# nvidia-ml-py3 removed (use npu-smi / torch.npu.mem_get_info)",
      "pynvml has no NPU equivalent (" + K + " §6); pip install works, NVML calls fail at runtime"),
    C("=pybind11>=2.6.2", "import_torch_npu", A, True, "pybind11>=2.6.2\ntorch-npu==2.1.0.post10",
      "torch_npu wheel must be added (version must match torch, " + K + " §1.1)"),
])

E("neox_launch", "tools/launch_125M_multinode.sh", "explicit_replacement", "GPT-NeoX multinode launch shell script", [
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", R, True, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "CUDA_VISIBLE_DEVICES is ignored by CANN (" + D + " §1)"),
    C("export NCCL_DEBUG=WARN", "env_var", R, False, "export ASCEND_GLOBAL_LOG_LEVEL=3", "NCCL env is a no-op under HCCL; log-level mapping unconfirmed"),
    C("export NCCL_IB_HCA=", "env_var", X, False, None, "NCCL-only; no-op on HCCL"),
    C("export NCCL_SOCKET_IFNAME=ens", "env_var", R, True, "export HCCL_SOCKET_IFNAME=ens",
      "HCCL picks the host NIC via HCCL_SOCKET_IFNAME; a wrong NIC breaks root-info link setup (" + D + " §1)"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "export HCCL_ASYNC_ERROR_HANDLING=1", D + " §1"),
    C("export NCCL_TIMEOUT=1800", "env_var", R, False, "export HCCL_EXEC_TIMEOUT=1800", D + " §1 (default 1836 s)"),
    C('"nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader"', "torch_cuda_api", R, True,
      'pdsh -w ^/job/hostfile "npu-smi info" | sort', "nvidia-smi absent on Ascend nodes; set -e aborts the script"),
    C('"nvidia-smi --query-gpu=index,memory.used --format=csv,noheader"', "torch_cuda_api", R, False,
      'pdsh -w ^/job/hostfile "npu-smi info" \\', "post-run only, guarded by || true"),
])

E("olmo_train", "scripts/train.py", "explicit_replacement", "AI2 OLMo scripts/train.py", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", TI),
    C('torch.cuda.set_device(f"cuda:{get_local_rank()}")', "torch_cuda_api", R, True,
      'torch.npu.set_device(f"npu:{get_local_rank()}")', K + " §3.4"),
    C('device = torch.device("cuda")', "device_type", R, True, 'device = torch.device("npu")', "cuda device string"),
    C("device_id=get_local_rank(),", "device_type", R, False, "device_id=torch.device('npu', get_local_rank()),",
      "FSDP int device_id resolves against current device; transfer_to_npu rewrites it (" + K + " §2.2) — explicit form is safer; unconfirmed that int fails"),
    C('dist.init_process_group(backend="nccl", timeout=timedelta(minutes=30))', "dist_backend", R, True,
      'dist.init_process_group(backend="hccl", timeout=timedelta(minutes=30))', K + " §2.4"),
])

E("olmo_torch_util", "olmo/torch_util.py", "device_branch_or_abstraction", "AI2 OLMo olmo/torch_util.py", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", TI),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "cuda seeding is lazy/no-op without CUDA; torch.manual_seed already seeds all devices"),
    C("if torch.cuda.is_available() and torch.cuda.is_initialized():", "torch_cuda_api", R, True,
      "if torch.npu.is_available() and torch.npu.is_initialized():", "otherwise default device silently becomes cpu (param_init_fn to_empty on cpu)"),
    C('return torch.device("cuda")', "device_type", R, True, 'return torch.device("npu")', "cuda device string"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", R, True, "if not torch.npu.is_available():",
      "peak memory silently returns None on NPU"),
    C('device = torch.device("cuda")', "device_type", R, True, 'device = torch.device("npu")', "cuda device string"),
    C("peak_mb = torch.cuda.max_memory_allocated(device) / 1000000", "torch_cuda_api", R, True,
      "peak_mb = torch.npu.max_memory_allocated(device) / 1000000", K + " §3.4"),
    C("torch.cuda.reset_max_memory_allocated(device)", "torch_cuda_api", R, True, "torch.npu.reset_max_memory_allocated(device)", K + " §3.4"),
    C("if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():", "empty_cache skipped silently; performance/memory only"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "only reached on CUDA path"),
])

E("olmo_speed_monitor", "olmo/speed_monitor.py", "explicit_replacement", "AI2 OLMo speed monitor (throughput/MFU)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", TI),
    C('"NVIDIA A100-SXM4-40GB": 312e12,', "device_capability_check", A, False,
      '"NVIDIA A100-SXM4-40GB": 312e12,\n    "Ascend910B": 313e12,', "peak-FLOPs table has no Ascend entry; MFU not reported (value unconfirmed)"),
    C("name = torch.cuda.get_device_name(device)", "torch_cuda_api", R, True, "name = torch.npu.get_device_name(device)", K + " §2.1"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True, "start = torch.npu.Event(enable_timing=True)", K + " §3.4"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True, "end = torch.npu.Event(enable_timing=True)", K + " §3.4"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", K + " §3.4"),
    C('metrics["System/Peak GPU Memory (MB)"] = torch.cuda.max_memory_allocated() / 1e6', "torch_cuda_api", R, True,
      'metrics["System/Peak GPU Memory (MB)"] = torch.npu.max_memory_allocated() / 1e6', K + " §3.4"),
    C('metrics["System/GPU Memory Reserved (MB)"] = torch.cuda.memory_reserved() / 1e6', "torch_cuda_api", R, True,
      'metrics["System/GPU Memory Reserved (MB)"] = torch.npu.memory_reserved() / 1e6', K + " §3.4"),
])

E("olmo_config", "configs/official/OLMo-1B.yaml", "explicit_replacement", "AI2 OLMo configs/official/OLMo-1B.yaml", [
    C("flash_attention: true", "attention_kernel", R, True, "flash_attention: false",
      "OLMo's flash path imports flash_attn (not installable on NPU, " + K + " §6); false falls back to SDPA which dispatches to NPU FA"),
])

E("olmo_slurm", "scripts/kempner/OLMo-1B.sbatch", "explicit_replacement", "AI2 OLMo SLURM launch script", [
    C("#SBATCH --gpus-per-node=4", "env_var", R, False, "#SBATCH --gres=npu:4", "cluster-specific gres name for NPUs; unconfirmed"),
    C("module load cuda/12.2.0-fasrc01 cudnn/8.9.2.26_cuda12-fasrc01", "env_var", R, True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment must be sourced instead of CUDA modules"),
    C("export CUDA_VISIBLE_DEVICES=$SLURM_LOCALID", "env_var", R, True, "export ASCEND_RT_VISIBLE_DEVICES=$SLURM_LOCALID",
      "CUDA_VISIBLE_DEVICES ignored on Ascend (" + D + " §1)"),
    C("export NCCL_DEBUG=INFO", "env_var", X, False, None, "NCCL-only"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", R, True, "export HCCL_SOCKET_IFNAME=ib0", D + " §1"),
    C("export NCCL_IB_TIMEOUT=22", "env_var", X, False, None, "NCCL-only"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", X, False, None, "NVLink-specific NCCL setting"),
    C("export TORCH_NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "export HCCL_ASYNC_ERROR_HANDLING=1", D + " §1"),
    C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", R, False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True", K + " §1.6 (PYTORCH_NPU_ALLOC_CONF expandable_segments)"),
    C("srun --ntasks-per-node=1 nvidia-smi", "torch_cuda_api", R, False, "srun --ntasks-per-node=1 npu-smi info \\",
      "post-run record only, guarded by || true"),
])

E("tinyllama_requirements", "requirements.txt", "explicit_replacement", "TinyLlama requirements.txt", [
    C("=torch>=2.1.0", "import_torch_npu", A, True, "torch>=2.1.0\ntorch-npu", "torch_npu wheel needed (" + K + " §1.1)"),
    C("=flash-attn==2.3.3", "attention_kernel", X, True, None, K + " §6"),
    C("=xformers==0.0.22.post7", "attention_kernel", X, True, None, "no NPU backend for xformers (" + K + " §6)"),
    C("rotary-emb@git+", "custom_cuda_extension", X, True, None, "CUDA extension from flash-attention csrc"),
    C("dropout-layer-norm@git+", "custom_cuda_extension", X, True, None, "CUDA extension from flash-attention csrc"),
])

E("tinyllama_pretrain", "pretrain/tinyllama.py", "explicit_replacement", "TinyLlama pretrain/tinyllama.py (Lightning Fabric)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", TI),
    C("from lit_gpt import FusedCrossEntropyLoss", "custom_cuda_extension", R, True, "from torch.nn import CrossEntropyLoss",
      "FusedCrossEntropyLoss wraps flash-attn's xentropy CUDA kernel"),
    C('fabric = L.Fabric(devices=devices, strategy=strategy, precision=precision, loggers=[logger, wandb_logger])', "device_type", R, False,
      'fabric = L.Fabric(accelerator=NPUAccelerator(), devices=devices, strategy=strategy, precision=precision, loggers=[logger, wandb_logger])',
      "Lightning auto-accelerator does not know npu; an NPU accelerator plug-in is needed (unconfirmed)"),
    C('if fabric.device.type == "cuda":', "device_type", R, False, 'if fabric.device.type == "npu":', "memory log skipped silently"),
    C('fabric.print(f"Memory used: {torch.cuda.max_memory_allocated() / 1e9:.02f} GB")', "torch_cuda_api", R, False,
      'fabric.print(f"Memory used: {torch.npu.max_memory_allocated() / 1e9:.02f} GB")', "unreachable unless device type is cuda"),
    C("loss_func = FusedCrossEntropyLoss()", "custom_cuda_extension", R, True, "loss_func = CrossEntropyLoss()",
      "fused xentropy is a CUDA kernel"),
])

E("tinyllama_model", "lit_gpt/model.py", "kernel_rewrite", "TinyLlama lit_gpt/model.py", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", TI),
    C("from flash_attn import flash_attn_func", "attention_kernel", X, True, None, "flash-attn not installable (" + K + " §6)"),
    C("from xformers.ops import SwiGLU", "attention_kernel", X, True, None, "xformers has no NPU backend (" + K + " §6)"),
    C('FlashAttention2Available = RequirementCache("flash-attn>=2.0.0.post1")', "attention_kernel", R, False,
      "FlashAttention2Available = False", "evaluates False without the package; harmless"),
    C("(name == \"w3.weight\" and isinstance(module, SwiGLU)", "npu_fused_op", R, True,
      "if (name == \"proj.weight\" and isinstance(module, LLaMAMLP)) or (name == \"w3.weight\" and isinstance(module, LLaMAMLP) or (name==\"proj.weight\" and isinstance(module, CausalSelfAttention))):",
      "references xformers SwiGLU class"),
    C('and q.device.type == "cuda"', "attention_kernel", R, True, 'and q.device.type == "npu"',
      "otherwise NPU falls to the repeat_interleave+SDPA path; use npu_fusion_attention instead"),
    C("return flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=scale, causal=True)", "attention_kernel", R, True,
      'return torch_npu.npu_fusion_attention(q, k, v, q.shape[2], "BSND", atten_mask=causal_mask, scale=scale, sparse_mode=3)[0]',
      "mapping from " + K + " §5 (transformers npu_flash_attention)"),
    C("self.swiglu = SwiGLU(config.n_embd,config.intermediate_size, bias=False, _pack_weights=False)", "npu_fused_op", R, True,
      "self.fc = nn.Linear(config.n_embd, 2 * config.intermediate_size, bias=False); self.proj = nn.Linear(config.intermediate_size, config.n_embd, bias=False)",
      "xformers SwiGLU; rebuild with Linear + torch_npu.npu_swiglu (" + K + " §5)"),
    C("return self.swiglu(x)", "npu_fused_op", R, True, "return self.proj(torch_npu.npu_swiglu(self.fc(x), dim=-1))", K + " §5 npu_swiglu"),
])

E("tinyllama_fused_rotary", "lit_gpt/fused_rotary_embedding.py", "kernel_rewrite", "TinyLlama fused_rotary_embedding.py (flash-attn rotary_emb CUDA ext)", [
    C("=import rotary_emb", "custom_cuda_extension", R, True, "import torch_npu", "rotary_emb is an nvcc-built extension"),
    C("=x1, x2,", "npu_fused_op", R, True, "out = torch_npu.npu_rotary_mul(x, cos, sin, rotary_mode='half')",
      "first argument line of the forward rotary_emb.apply_rotary call; replace with npu_rotary_mul (" + K + " §5; cos/sin must be expanded to full head dim)"),
    C("=do1, do2,", "npu_fused_op", R, True, "dx = torch_npu.npu_rotary_mul(do, cos, -sin, rotary_mode='half')",
      "backward rotary_emb.apply_rotary call (conj=True); or drop the Function and let autograd differentiate npu_rotary_mul"),
])

E("llmfoundry_attention", "llmfoundry/models/layers/attention.py", "device_branch_or_abstraction", "MosaicML llm-foundry attention.py", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", TI),
    C("if not tensor.is_cuda:", "device_type", R, True, "if not tensor.is_npu:", "NPU tensors have is_cuda False -> TypeError"),
    C("from flash_attn import bert_padding, flash_attn_interface", "attention_kernel", R, True,
      "import torch_npu", "flash-attn not installable (" + K + " §6)"),
    C("output = flash_attn_interface.flash_attn_func(", "attention_kernel", R, True,
      'output = torch_npu.npu_fusion_attention(query, key, value, n_heads, "BSND", keep_prob=1 - dropout_p, scale=softmax_scale, atten_mask=causal_mask, sparse_mode=3 if is_causal else 0)[0]',
      K + " §5 mapping"),
    C("from llmfoundry.models.layers.flash_attn_triton import flash_attn_func", "triton_kernel_tuning", R, True,
      "raise RuntimeError('attn_impl: triton is CUDA-only; use attn_impl: flash (npu_fusion_attention) or torch')",
      "triton-pre-mlir kernel has no NPU build; triton-ascend needs a kernel port (" + K + " §6)"),
    C("attn_impl: str = 'triton',", "attention_kernel", R, False, "attn_impl: str = 'flash',", "default only; configs override"),
])

E("llmfoundry_yaml", "scripts/train/yamls/pretrain/mpt-125m.yaml", "explicit_replacement", "llm-foundry mpt-125m.yaml", [
    C("attn_impl: triton", "attention_kernel", R, True, "attn_impl: torch", "triton flash kernel is CUDA-only (" + K + " §6)"),
    C("loss_fn: fused_crossentropy", "custom_cuda_extension", R, True, "loss_fn: torch_crossentropy",
      "fused_crossentropy uses flash-attn's xentropy CUDA kernel"),
])

E("megatron_ds_pretrain", "pretrain_gpt.py", "explicit_replacement", "Megatron-DeepSpeed pretrain_gpt.py (BLOOM/Pythia runs)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", TI),
    C("(1, args.seq_length, args.seq_length), device=torch.cuda.current_device())).view(", "torch_cuda_api", R, True,
      "(1, args.seq_length, args.seq_length), device=get_accelerator().current_device_name())).view(",
      "torch.cuda.current_device fails without CUDA; file already imports get_accelerator"),
])

E("bloom_slurm", "train/tr11-176B-ml/tr11-176B-ml.slurm", "explicit_replacement", "BigScience BLOOM tr11 Megatron-DeepSpeed SLURM", [
    C("#SBATCH --constraint=a100", "env_var", X, False, None, "cluster constraint; site-specific"),
    C("#SBATCH --gres=gpu:8", "env_var", R, False, "#SBATCH --gres=npu:8", "gres name site-specific; unconfirmed"),
    C("--abort-on-unmet-fused-kernel-constraints", "custom_cuda_extension", X, True, None,
      "Megatron-DS fused softmax kernels are CUDA; flag makes the run abort when they cannot be used"),
    C("--distributed-backend nccl", "dist_backend", R, True, "--distributed-backend hccl \\", K + " §2.4"),
    C("export CUDA_LAUNCH_BLOCKING=1", "env_var", R, False, "export ASCEND_LAUNCH_BLOCKING=1",
      "CUDA_LAUNCH_BLOCKING is ignored; NPU analogue name unconfirmed (also slows training, workaround was NCCL-specific)"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "export HCCL_ASYNC_ERROR_HANDLING=1", D + " §1"),
])

E("olmo_memmap_dataset", "olmo/data/memmap_dataset.py", "explicit_replacement", "AI2 OLMo memmap dataset (CPU-only, no labels)", [])

E("neox_convert_hf", "tools/ckpts/convert_neox_to_hf.py", "explicit_replacement", "GPT-NeoX tools/ckpts/convert_neox_to_hf.py", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu", "only the optional --test path needs an NPU"),
    C('device = "cuda:0" if torch.cuda.is_available() else "cpu"', "device_type", R, False,
      'device = "npu:0" if torch.npu.is_available() else "cpu"', "sanity check silently runs (slowly) on CPU; fp16 generate on CPU may fail — optional path"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "no-op without CUDA"),
])

E("neox_eval_adapter", "eval_tasks/eval_adapter.py", "explicit_replacement", "GPT-NeoX eval_tasks/eval_adapter.py (lm-eval hook)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", TI),
    C('self._device = torch.device(f"cuda:{neox_args.local_rank}")', "device_type", R, True,
      'self._device = torch.device(f"npu:{neox_args.local_rank}")', "cuda device string"),
    C("dtype=torch.long).cuda()", "tensor_to_device", R, True, "dtype=torch.long).to(self.device)", ".cuda() fails without CUDA"),
    C('with torch.cuda.amp.autocast(dtype=torch.float16, enabled=self.neox_args.precision == "fp16"):', "amp", R, True,
      'with torch.autocast("npu", dtype=torch.float16, enabled=self.neox_args.precision == "fp16"):',
      "CUDA autocast inactive for NPU tensors"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", K + " §3.4"),
])
