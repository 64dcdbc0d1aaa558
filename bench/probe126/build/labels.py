# Labels for probe126 (video-generation DiT training / sampling, CUDA -> Ascend NPU).
# One C(...) per line a careful porter would edit. See README.md "How the labels were chosen".
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ----------------------------------------------------------------------------------------------
# Open-Sora (hpcaitech) v1.2-style
# ----------------------------------------------------------------------------------------------
E("os_train", "scripts/train.py", "explicit_replacement",
  "Open-Sora 1.2 scripts/train.py (ColossalAI booster, ZeRO-2, EMA, bucketed video dataloader)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "entry script: register the npu device before torch.npu.* calls (autoload only from torch_npu 2.5.1)"),
      C('assert torch.cuda.is_available(), "Training currently requires at least one GPU."', "torch_cuda_api", "replace", True,
        'assert torch.npu.is_available(), "Training currently requires at least one NPU."',
        "torch.cuda.is_available() is False on an NPU host, the assert aborts training"),
      C('dist.init_process_group(backend="nccl", timeout=timedelta(hours=24))', "dist_backend", "replace", True,
        'dist.init_process_group(backend="hccl", timeout=timedelta(hours=24))',
        "NCCL backend does not exist in a CPU/NPU torch build; HCCL is the Ascend collective backend"),
      C("torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(dist.get_rank() % torch.npu.device_count())",
        "torch.cuda.set_device raises without CUDA; device_count() would be 0 (ZeroDivisionError)"),
      C("pin_memory=True,", "pin_memory", "replace", False,
        'pin_memory=True, pin_memory_device="npu",',
        "performance only: without a pin device the DataLoader silently skips pinning when CUDA is absent (torch<2.6 behaviour; unconfirmed for newer)"),
      C("optimizer = HybridAdam(", "fused_optimizer", "replace", False,
        "optimizer = torch_npu.optim.NpuFusedAdamW(",
        "HybridAdam loads ColossalAI's CUDA fused-optim kernel for device params; no NPU kernel extension for it was found -- likely fails, unconfirmed"),
      C('"max_mem_gb": torch.cuda.max_memory_allocated() / 1024**3,', "torch_cuda_api", "replace", True,
        '"max_mem_gb": torch.npu.max_memory_allocated() / 1024**3,',
        "torch.cuda memory stats return 0 when CUDA is not initialised: the logged peak memory is silently wrong"),
  ])

E("os_train_utils", "opensora/utils/train_utils.py", "explicit_replacement",
  "Open-Sora opensora/utils/train_utils.py (create_colossalai_plugin, update_ema, MaskGenerator)",
  [
      C("enable_fused_normalization=True,", "distributed_framework", "replace", False,
        "enable_fused_normalization=False,",
        "shardformer fused norm relies on apex/CUDA LayerNorm kernels; whether ColossalAI substitutes an NPU kernel is unconfirmed"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "torch.cuda.synchronize() raises (lazy CUDA init) on an NPU host"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats()",
        "calls torch._C._cuda_resetPeakMemoryStats, absent from a CPU/NPU torch build"),
  ])

E("os_misc", "opensora/utils/misc.py", "device_branch_or_abstraction",
  "Open-Sora opensora/utils/misc.py (logger, dtype mapping, Timer, memory logging helpers)",
  [
      C("if not torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        'if hasattr(torch, "npu") and torch.npu.is_available(): return f"{torch.npu.get_device_name()} ({torch.npu.get_device_properties(0).total_memory / 1024**3:.0f} GB)"',
        "NPU branch added before the CUDA one (the CUDA branch, incl. sm_major/minor, stays for GPUs); without it the log says 'cpu'"),
      C("allocated = torch.cuda.memory_allocated() / 1024**3", "torch_cuda_api", "replace", True,
        "allocated = torch.npu.memory_allocated() / 1024**3", "silently logs 0 on NPU"),
      C("reserved = torch.cuda.memory_reserved() / 1024**3", "torch_cuda_api", "replace", True,
        "reserved = torch.npu.memory_reserved() / 1024**3", "silently logs 0 on NPU"),
      C("peak = torch.cuda.max_memory_allocated() / 1024**3", "torch_cuda_api", "replace", True,
        "peak = torch.npu.max_memory_allocated() / 1024**3", "silently logs 0 on NPU"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "Timer.__enter__: raises without CUDA when record_time is on"),
      C("torch.cuda.synchronize()  # wait for all kernels", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for all kernels of this stage before reading the clock",
        "Timer.__exit__: raises without CUDA"),
  ])

E("os_comm", "opensora/acceleration/communications.py", "device_branch_or_abstraction",
  "Open-Sora opensora/acceleration/communications.py (all_to_all / gather-split autograd functions for sequence parallel)",
  [])

E("os_blocks", "opensora/models/layers/blocks.py", "kernel_rewrite",
  "Open-Sora opensora/models/layers/blocks.py (flash-attn self-attention, xformers cross-attention, apex FusedLayerNorm)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "needed for torch_npu.npu_fusion_attention used by the rewritten attention paths"),
      C("=import xformers.ops", "attention_kernel", "removal", True, None,
        "xformers has no NPU backend (and is not installable against an NPU torch); the module-level import fails"),
      C("from apex.normalization import FusedLayerNorm", "custom_cuda_extension", "replace", True,
        "return nn.LayerNorm(hidden_size, eps, elementwise_affine=affine)",
        "apex fused_layer_norm_cuda is a CUDA extension; shipped configs set enable_layernorm_kernel=True so this path raises RuntimeError"),
      C("=from flash_attn import flash_attn_func", "attention_kernel", "removal", True, None,
        "flash-attn cannot be installed on NPU; configs enable_flash_attn=True so the import runs"),
      C("=x = flash_attn_func(", "attention_kernel", "replace", True,
        'x = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, "BSND", keep_prob=1.0 - (self.attn_drop.p if self.training else 0.0), scale=self.scale, sparse_mode=0)[0]',
        "FlashAttention-2 -> NPU fused attention, BSND layout (q/k/v already permuted to B,N,H,D)"),
      C("from flash_attn import flash_attn_func  # heads are already split", "attention_kernel", "removal", True, None,
        "sequence-parallel path: same flash-attn import"),
      C("x = flash_attn_func(q, k, v, dropout_p=self.attn_drop.p if self.training else 0.0, softmax_scale=self.scale)",
        "attention_kernel", "replace", True,
        'x = torch_npu.npu_fusion_attention(q, k, v, q.shape[2], "BSND", keep_prob=1.0 - (self.attn_drop.p if self.training else 0.0), scale=self.scale)[0]',
        "heads are local after all_to_all, so head_num = q.shape[2]"),
      C("=attn_bias = xformers.ops.fmha.BlockDiagonalMask.from_seqlens([N] * B, mask)", "attention_kernel", "replace", True,
        "actual_seq_qlen, actual_seq_kvlen = np.cumsum([N] * B).tolist(), np.cumsum(mask).tolist()",
        "block-diagonal varlen mask -> cumulative q/kv lengths for the TND layout"),
      C("=x = xformers.ops.memory_efficient_attention(q, k, v, p=self.attn_drop.p, attn_bias=attn_bias)", "attention_kernel", "replace", True,
        'x = torch_npu.npu_fusion_attention(q[0], k[0], v[0], self.num_heads, "TND", keep_prob=1.0 - self.attn_drop.p, scale=self.head_dim**-0.5, actual_seq_qlen=actual_seq_qlen, actual_seq_kvlen=actual_seq_kvlen)[0]',
        "xformers memory_efficient_attention has no NPU kernel"),
      C("from_seqlens([N] * B, mask)  # seq-parallel", "attention_kernel", "replace", True,
        "actual_seq_qlen, actual_seq_kvlen = np.cumsum([N] * B).tolist(), np.cumsum(mask).tolist()  # seq-parallel: full N per rank",
        "same as the non-SP cross attention"),
      C("attn_bias=attn_bias)  # heads split over sp group", "attention_kernel", "replace", True,
        'x = torch_npu.npu_fusion_attention(q[0], k[0], v[0], self.num_heads // sp_size, "TND", keep_prob=1.0 - self.attn_drop.p, scale=self.head_dim**-0.5, actual_seq_qlen=actual_seq_qlen, actual_seq_kvlen=actual_seq_kvlen)[0]  # heads split over sp group',
        "same as the non-SP cross attention, with local head count"),
      C("drop_ids = torch.rand(caption.shape[0]).cuda() < self.uncond_prob", "tensor_to_device", "replace", True,
        "drop_ids = torch.rand(caption.shape[0], device=caption.device) < self.uncond_prob",
        ".cuda() raises without CUDA (classifier-free-guidance token drop during training)"),
  ])

E("os_ckpt", "opensora/utils/ckpt_utils.py", "explicit_replacement",
  "Open-Sora opensora/utils/ckpt_utils.py (pretrained download, booster save/load, EMA sharding, RNG state)",
  [
      C('state_dict = torch.load(ckpt_path, map_location=f"cuda:{torch.cuda.current_device()}")', "device_type", "replace", True,
        'state_dict = torch.load(ckpt_path, map_location=f"npu:{torch.npu.current_device()}")',
        "torch.cuda.current_device() raises; map_location 'cuda:N' cannot be honoured"),
      C('"cuda": torch.cuda.get_rng_state(),', "torch_cuda_api", "replace", True,
        '"cuda": torch.npu.get_rng_state(),  # key kept for checkpoint compatibility',
        "torch.cuda.get_rng_state() initialises CUDA and raises on an NPU host (called on every checkpoint save)"),
      C('torch.cuda.set_rng_state(state["cuda"])', "torch_cuda_api", "replace", False,
        'torch.npu.set_rng_state(state["cuda"])',
        "silent no-op without CUDA (lazy call never runs): NPU RNG not restored, resume not bit-exact"),
  ])

E("os_vae", "opensora/models/vae/vae.py", "device_branch_or_abstraction",
  "Open-Sora opensora/models/vae/vae.py (SD VAE wrapper with micro-batch decode, temporal VAE pipeline)",
  [
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on NPU; only affects peak reserved memory during chunked decode"),
  ])

E("os_dataloader", "opensora/datasets/dataloader.py", "device_branch_or_abstraction",
  "Open-Sora opensora/datasets/dataloader.py (copy of torch's multiprocessing iterator with a custom pin-memory loop)",
  [
      C("current_device = torch.cuda.current_device()  # choose cuda for default", "torch_cuda_api", "replace", False,
        "current_device = torch.npu.current_device()  # choose npu for default",
        "not reached on NPU: _pin_memory is False unless pin_memory_device is set, and then the privateuse1 branch above runs; cleanup only"),
  ])

E("os_inference", "scripts/inference.py", "explicit_replacement",
  "Open-Sora 1.2 scripts/inference.py (T5 + VAE + STDiT3 sampling, optional sequence parallel via colossalai.launch_from_torch)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        'device = "npu" if torch.npu.is_available() else "cpu"',
        "silently runs the whole 720p sampler on CPU"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
      C("torch.cuda.synchronize()  # make the wall-clock", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # make the wall-clock number include VAE decode", "raises without CUDA"),
      C("torch.cuda.max_memory_allocated() / 1024**3,", "torch_cuda_api", "replace", True,
        "torch.npu.max_memory_allocated() / 1024**3,", "silently logs 0 GB"),
  ])

E("os_cfg_train", "configs/opensora-v1-2/train/stage1.py", "explicit_replacement",
  "Open-Sora configs/opensora-v1-2/train/stage1.py (mmengine-style python config: buckets, bf16, zero2, flash-attn flags)",
  [])

E("os_launch", "scripts/misc/launch_train.sh", "explicit_replacement",
  "Open-Sora-style multi-node torchrun launcher with NCCL/IB tuning",
  [
      C("=set -x", "import_torch_npu", "npu_only_addition", True, SET_ENV,
        "CANN environment (library paths, ASCEND_* vars) must be sourced before torch_npu can load"),
      C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: device masking silently stops working"),
      C("NUM_GPUS=$(echo $CUDA_VISIBLE_DEVICES", "env_var", "replace", True,
        "NUM_GPUS=$(echo $ASCEND_RT_VISIBLE_DEVICES | tr ',' '\\n' | wc -l)",
        "must follow the renamed variable, otherwise nproc_per_node silently becomes 1"),
      C("export NCCL_IB_HCA=", "env_var", "removal", False, None, "NCCL-only (Mellanox HCA list); HCCL ignores it"),
      C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
        "HCCL's equivalent for the host NIC; ignored NCCL var is a silent no-op"),
      C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None, "NCCL logging knob; no effect on HCCL"),
      C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NVLink-specific; no effect on HCCL"),
      C("export TORCH_NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "removal", False, None,
        "ProcessGroupNCCL option; no HCCL counterpart confirmed in the knowledge base"),
      C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", "replace", False,
        "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
        "NPU caching allocator reads PYTORCH_NPU_ALLOC_CONF; fragmentation/peak-memory only"),
      C("nvidia-smi > $LOG_DIR", "torch_cuda_api", "replace", False,
        "npu-smi info > $LOG_DIR/npu_node${NODE_RANK}.txt",
        "diagnostic only: nvidia-smi is not present, the script continues (no set -e)"),
  ])

E("os_req", "requirements/requirements-cu121.txt", "explicit_replacement",
  "Open-Sora requirements/requirements-cu121.txt (CUDA 12.1 torch/xformers wheels + runtime deps)",
  [
      C("torch==2.2.2 --index-url https://download.pytorch.org/whl/cu121", "device_type", "replace", True,
        "torch==2.3.1 --index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; torch_npu needs the CPU torch build of a version that has a torch_npu release (2.2.2 has none)"),
      C("torchvision==0.17.2 --index-url https://download.pytorch.org/whl/cu121", "device_type", "replace", True,
        "torchvision==0.18.1 --index-url https://download.pytorch.org/whl/cpu",
        "cu121 torchvision pins the CUDA torch build"),
      C("xformers==0.0.25.post1", "attention_kernel", "removal", True, None,
        "xformers has no NPU support and drags in a CUDA torch pin"),
      C("=packaging", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.3.1.post6",
        "torch_npu wheel matching torch 2.3.1 (CANN 8.1.RC1)"),
      C("flash-attn==2.5.8", "attention_kernel", "removal", True, None,
        "flash-attn needs nvcc/CUDA to build; cannot be installed on NPU"),
  ])

E("os_docker", "docker/Dockerfile", "explicit_replacement",
  "Open-Sora docker/Dockerfile (hpcaitech CUDA base image, flash-attn + apex source builds)",
  [
      C("FROM hpcaitech/pytorch-cuda:2.1.0-12.1.0", "device_type", "replace", True,
        "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
        "CUDA base image; an image with CANN + driver user-space is needed (tag plausible, not tested)"),
      C('ENV TORCH_CUDA_ARCH_LIST="8.0 8.6 9.0"', "env_var", "removal", False, None, "only read by nvcc builds"),
      C("pip install flash-attn --no-build-isolation", "attention_kernel", "removal", True, None,
        "build fails without nvcc/CUDA"),
      C("RUN git clone https://github.com/NVIDIA/apex.git /tmp/apex", "custom_cuda_extension", "replace", True,
        "RUN git clone https://gitee.com/ascend/apex.git /tmp/apex && \\",
        "NVIDIA apex CUDA extensions cannot build; Ascend apex is a patch set on top of it"),
      C('--config-settings "--build-option=--cuda_ext"', "custom_cuda_extension", "replace", True,
        "bash scripts/build.sh --python=3.10 && pip install apex/dist/apex-*.whl && \\",
        "--cuda_ext compiles fused_layer_norm_cuda/amp_C with nvcc"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "NVIDIA container runtime knob; Ascend docker runtime uses ASCEND_VISIBLE_DEVICES"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container runtime knob"),
  ])

# ----------------------------------------------------------------------------------------------
# Open-Sora-Plan (PKU-YuanGroup) v1.2/1.3-style
# ----------------------------------------------------------------------------------------------
E("osp_attn", "opensora/models/diffusion/opensora/modules.py", "kernel_rewrite",
  "Open-Sora-Plan opensora/models/diffusion/opensora/modules.py (RoPE3D, SDPA processor with sdp_kernel backend pinning, all_to_all SBH sequence parallel)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU,
        "only needed for the optional npu_rotary_mul below"),
      C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", False,
        'with torch.autocast("npu", enabled=False):',
        "cuda autocast context does not disable NPU autocast; only the fp32 precision of the einsum is affected and the table is cast to the token dtype anyway"),
      C("return (tokens * cos) + (self.rotate_half(tokens) * sin)", "npu_fused_op", "replace", False,
        "return torch_npu.npu_rotary_mul(tokens, cos, sin)",
        "performance: fused RoPE (rotate_half mode); check npu_rotary_mul broadcast-shape limits for B1SD/BS1D cos tables"),
      C("with torch.backends.cuda.sdp_kernel(enable_math=False, enable_flash=True, enable_mem_efficient=False):",
        "attention_kernel", "replace", False, "with contextlib.nullcontext():",
        "sdp_kernel is marked unsupported on Ascend; it only toggles CUDA SDPA backend flags, NPU SDPA picks its fused kernel anyway (no-op, unconfirmed whether it warns)"),
      C("with torch.backends.cuda.sdp_kernel(enable_math=False, enable_flash=False, enable_mem_efficient=True):",
        "attention_kernel", "replace", False, "with contextlib.nullcontext():",
        "same as above"),
  ])

E("osp_causalvae", "opensora/models/causalvideovae/model/modules/updownsample.py", "explicit_replacement",
  "Open-Sora-Plan CausalVideoVAE updownsample.py (spatial/temporal down/up-sampling blocks)",
  [
      C("=return self.avg_pool(x)", "unsupported_op_workaround", "replace", False,
        "return avg_pool_time(x, self.kernel_size)  # AvgPool1d over t, then restore (b c t h w)",
        "nn.AvgPool3d is marked unsupported in Ascend's 2.7.1 API list although op-plugin registers avg_pool3d; unconfirmed"),
      C("return alpha * self.avg_pool(x) + (1 - alpha) * self.conv(x)", "unsupported_op_workaround", "replace", False,
        "return alpha * avg_pool_time(x, self.kernel_size[0]) + (1 - alpha) * self.conv(x)",
        "same AvgPool3d concern; unconfirmed"),
  ])

E("osp_parallel", "opensora/utils/parallel_states.py", "explicit_replacement",
  "Open-Sora-Plan opensora/utils/parallel_states.py (sequence-parallel groups, nccl_info holder)",
  [
      C('def init_distributed(backend: str = "nccl", timeout_minutes: int = 60):', "dist_backend", "replace", True,
        'def init_distributed(backend: str = "hccl", timeout_minutes: int = 60):', "NCCL backend unavailable on NPU"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "raises without CUDA"),
      C('group = dist.new_group(ranks, backend="nccl")', "dist_backend", "replace", True,
        'group = dist.new_group(ranks, backend="hccl")', "explicit NCCL sub-group backend fails on NPU"),
  ])

E("osp_sh", "scripts/text_condition/gpu/train_t2v.sh", "explicit_replacement",
  "Open-Sora-Plan scripts/text_condition/gpu/train_t2v.sh (accelerate + deepspeed multi-node launcher)",
  [
      C('export WANDB_KEY=""', "import_torch_npu", "npu_only_addition", True, SET_ENV,
        "CANN environment must be sourced before launching"),
      C("export NCCL_SOCKET_IFNAME=bond0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=bond0",
        "HCCL NIC selection; NCCL var silently ignored"),
      C("export NCCL_IB_HCA=", "env_var", "removal", False, None, "Mellanox HCA list, NCCL only"),
      C("export NCCL_IB_GID_INDEX=3", "env_var", "removal", False, None, "RoCE GID for NCCL; HCCL uses the NPU NIC config"),
      C("export NCCL_IB_TC=162", "env_var", "removal", False, None, "NCCL traffic class; no effect on HCCL"),
      C("export NCCL_IB_TIMEOUT=22", "env_var", "removal", False, None,
        "NCCL IB timeout; HCCL timeouts are HCCL_CONNECT_TIMEOUT/HCCL_EXEC_TIMEOUT (different semantics)"),
      C("=export NCCL_ALGO=Ring", "env_var", "removal", False, None,
        "NCCL algorithm pin; HCCL_ALGO has a different syntax, not a 1:1 rename"),
  ])

E("osp_train", "opensora/train/train_t2v_diffusers.py", "explicit_replacement",
  "Open-Sora-Plan opensora/train/train_t2v_diffusers.py (accelerate trainer, WF-VAE + mT5, EMA, SP batch broadcast, profiler)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on NPU after validation"),
      C("shape = torch.tensor(list(x.shape), dtype=torch.int64, device=torch.cuda.current_device())", "torch_cuda_api",
        "replace", True,
        "shape = torch.tensor(list(x.shape), dtype=torch.int64, device=torch.npu.current_device())",
        "torch.cuda.current_device() raises; HCCL broadcast also needs a device tensor"),
      C("optimizer_class = bnb.optim.AdamW8bit", "fused_optimizer", "replace", False,
        "optimizer_class = torch_npu.optim.NpuFusedAdamW",
        "bitsandbytes 8-bit optimizers are not listed for NPU (only NF4 quant); only with --use_8bit_adam; unconfirmed"),
      C("pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
        "performance only (pinning silently skipped without CUDA)"),
      C("prof = torch.profiler.profile(", "torch_cuda_api", "replace", False, "prof = torch_npu.profiler.profile(",
        "--enable_profiling only: torch.profiler records no NPU kernels"),
      C("activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],", "torch_cuda_api",
        "replace", False,
        "activities=[torch_npu.profiler.ProfilerActivity.CPU, torch_npu.profiler.ProfilerActivity.NPU],",
        "ProfilerActivity.CUDA -> NPU; profiling-only"),
      C('on_trace_ready=torch.profiler.tensorboard_trace_handler(f"{args.output_dir}/profile"),', "torch_cuda_api",
        "replace", False,
        'on_trace_ready=torch_npu.profiler.tensorboard_trace_handler(f"{args.output_dir}/profile"),',
        "NPU trace export format; profiling-only"),
      C('f"max mem {torch.cuda.max_memory_allocated() / 1024**3:.1f} GB"', "torch_cuda_api", "replace", True,
        'f"max mem {torch.npu.max_memory_allocated() / 1024**3:.1f} GB"', "silently logs 0"),
  ])

# ----------------------------------------------------------------------------------------------
# CogVideoX (THUDM) diffusers-based
# ----------------------------------------------------------------------------------------------
E("cog_cli", "inference/cli_demo.py", "explicit_replacement",
  "CogVideoX inference/cli_demo.py (diffusers CogVideoX t2v/i2v/v2v pipelines, CPU offload, VAE tiling)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("=pipe.enable_sequential_cpu_offload()", "device_type", "replace", False,
        'pipe.enable_sequential_cpu_offload(device="npu")',
        "older diffusers default the offload device to 'cuda'; newer ones auto-detect npu -- version dependent, unconfirmed"),
      C('pipe.to("cuda")', "tensor_to_device", "replace", True, 'pipe.to("npu")', "--no_cpu_offload path: raises without CUDA"),
      C("peak memory {torch.cuda.max_memory_reserved() / 1024**3:.2f} GB reserved", "torch_cuda_api", "replace", True,
        'f"Generated in {elapsed:.1f}s, peak memory {torch.npu.max_memory_reserved() / 1024**3:.2f} GB reserved"',
        "silently logs 0"),
  ])

E("cog_quant", "inference/cli_demo_quantization.py", "explicit_replacement",
  "CogVideoX inference/cli_demo_quantization.py (torchao int8/fp8 quantisation, inductor max-autotune)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("major, minor = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
        "return False  # no FP8 inference path on Ascend; torch.npu.get_device_capability() returns None",
        "raises without CUDA (fp8 is the default scheme, so this runs on every call)"),
      C('pipe.to("cuda")', "tensor_to_device", "replace", True, 'pipe.to("npu")', "--compile path: raises without CUDA"),
      C("pipe.transformer.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", True, None,
        "channels_last is listed as not supported on NPU by the migration tool docs; exact failure mode unconfirmed"),
      C('pipe.transformer = torch.compile(pipe.transformer, mode="max-autotune", fullgraph=True)', "compile_mode",
        "replace", False, "pipe.transformer = torch.compile(pipe.transformer, fullgraph=True)",
        "max-autotune relies on Triton autotuning + CUDA graphs; NPU inductor exists only in newer torch_npu -- unconfirmed"),
      C("pipe.enable_model_cpu_offload()", "device_type", "replace", False, 'pipe.enable_model_cpu_offload(device="npu")',
        "offload device default is version dependent in diffusers; unconfirmed"),
      C('generator=torch.Generator(device="cuda").manual_seed(seed),', "device_type", "replace", True,
        'generator=torch.Generator(device="npu").manual_seed(seed),', "CUDA generator cannot be created without CUDA"),
  ])

E("cog_lora", "finetune/train_cogvideox_lora.py", "explicit_replacement",
  "CogVideoX finetune/train_cogvideox_lora.py (cogvideox-factory style accelerate LoRA trainer with memory probes)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "silent no-op"),
      C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats(device)",
        "raises: CUDA binding absent / an npu device is rejected by the CUDA device-index check"),
      C("torch.cuda.reset_accumulated_memory_stats(device)", "torch_cuda_api", "replace", True,
        "torch.npu.reset_accumulated_memory_stats(device)", "raises, same as above"),
      C("memory_allocated = torch.cuda.memory_allocated(device) / 1024**3", "torch_cuda_api", "replace", True,
        "memory_allocated = torch.npu.memory_allocated(device) / 1024**3", "silently reports 0"),
      C("max_memory_allocated = torch.cuda.max_memory_allocated(device) / 1024**3", "torch_cuda_api", "replace", True,
        "max_memory_allocated = torch.npu.max_memory_allocated(device) / 1024**3", "silently reports 0"),
      C("max_memory_reserved = torch.cuda.max_memory_reserved(device) / 1024**3", "torch_cuda_api", "replace", True,
        "max_memory_reserved = torch.npu.max_memory_reserved(device) / 1024**3", "silently reports 0"),
      C('init_process_group_kwargs = InitProcessGroupKwargs(backend="nccl"', "dist_backend", "replace", True,
        'init_process_group_kwargs = InitProcessGroupKwargs(backend="hccl", timeout=timedelta(seconds=args.nccl_timeout))',
        "accelerate passes this backend straight to init_process_group"),
      C("pin_memory=args.pin_memory,", "pin_memory", "replace", False,
        'pin_memory=args.pin_memory, pin_memory_device="npu" if args.pin_memory else "",',
        "performance only"),
      C("torch.cuda.empty_cache()  # vae/text encoder", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()  # vae/text encoder are not needed with precomputed latents", "silent no-op"),
      C("torch.cuda.synchronize(device=accelerator.device)", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize(device=accelerator.device)", "raises without CUDA (--load_tensors path)"),
      C("=torch.cuda.synchronize(accelerator.device)", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize(accelerator.device)", "raises without CUDA (validation)"),
      C("pipe.enable_model_cpu_offload()", "device_type", "replace", False, 'pipe.enable_model_cpu_offload(device="npu")',
        "offload device default is version dependent in diffusers; unconfirmed"),
      C("torch.cuda.empty_cache()  # release the validation", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()  # release the validation pipeline before resuming training", "silent no-op"),
      C("torch.cuda.synchronize(accelerator.device)  # and wait", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize(accelerator.device)  # and wait until the frees are done", "raises without CUDA"),
  ])

E("cog_sh", "finetune/train_text_to_video_lora.sh", "explicit_replacement",
  "CogVideoX / cogvideox-factory finetune/train_text_to_video_lora.sh (accelerate sweep launcher)",
  [
      C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True, SET_ENV, "CANN environment"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None, "NCCL-only workaround; HCCL ignores it"),
      C("export TORCH_NCCL_ENABLE_MONITORING=0", "env_var", "removal", False, None,
        "ProcessGroupNCCL watchdog knob; no effect with HCCL"),
  ])

# ----------------------------------------------------------------------------------------------
# HunyuanVideo (Tencent)
# ----------------------------------------------------------------------------------------------
E("hy_attn", "hyvideo/modules/attenion.py", "kernel_rewrite",
  "HunyuanVideo hyvideo/modules/attenion.py (flash_attn_varlen_func with cu_seqlens, xDiT hybrid SP attention)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "for torch_npu.npu_fusion_attention"),
      C('cu_seqlens = torch.zeros([2 * batch_size + 1], dtype=torch.int32, device="cuda")', "device_type", "replace", True,
        "cu_seqlens = torch.zeros([2 * batch_size + 1], dtype=torch.int32, device=text_mask.device)",
        "hard-coded 'cuda' raises on every forward"),
      C("x = flash_attn_varlen_func(", "attention_kernel", "replace", True,
        'x = torch_npu.npu_fusion_attention(q, k, v, q.shape[1], "TND", scale=1.0 / math.sqrt(q.shape[-1]), actual_seq_qlen=cu_seqlens_q[1:].tolist(), actual_seq_kvlen=cu_seqlens_kv[1:].tolist())[0]',
        "default attn_mode is 'flash'; flash_attn_varlen_func is None on NPU (guarded import) -> TypeError. TND takes cumulative lengths"),
      C('if flash_attn.__version__ >= "2.7.0":', "attention_kernel", "replace", True,
        'attn2 = torch_npu.npu_fusion_attention(q[:, cu_seqlens_q[1]:], k[:, cu_seqlens_kv[1]:], v[:, cu_seqlens_kv[1]:], q.shape[-2], "BSND", scale=q.shape[-1] ** (-0.5))[0]',
        "xDiT SP path: flash_attn is None -> AttributeError; replaces both version branches"),
  ])

E("hy_inference", "hyvideo/inference.py", "explicit_replacement",
  "HunyuanVideo hyvideo/inference.py (Inference.from_pretrained, xDiT Ulysses/Ring init, HunyuanVideoSampler.predict)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "first module sample_video.py imports; registers npu before devices are resolved"),
      C('self.device = device if device is not None else "cuda" if torch.cuda.is_available() else "cpu"', "device_type",
        "replace", True,
        'self.device = device if device is not None else "npu" if torch.npu.is_available() else "cpu"',
        "fallback silently picks CPU"),
      C('dist.init_process_group("nccl")', "dist_backend", "replace", True, 'dist.init_process_group("hccl")',
        "ulysses/ring > 1 path"),
      C("device = torch.device(f\"cuda:{os.environ['LOCAL_RANK']}\")", "device_type", "replace", True,
        "device = torch.device(f\"npu:{os.environ['LOCAL_RANK']}\")", "explicit cuda device"),
      C('=device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        'device = "npu" if torch.npu.is_available() else "cpu"', "single-card path silently falls back to CPU"),
      C("convert_fp8_linear(model, args.dit_weight, original_dtype=PRECISION_TO_TYPE[args.precision])",
        "unsupported_op_workaround", "replace", False,
        'logger.warning("--use-fp8 ignored on Ascend: keeping bf16 weights")',
        "--use-fp8 only: float8_e4m3fn weight storage/cast on NPU not confirmed (Ascend lists float8 storages as unsupported)"),
      C("block.hybrid_seq_parallel_attn = xFuserLongContextAttention()", "attention_kernel", "replace", False,
        'block.hybrid_seq_parallel_attn = xFuserLongContextAttention(attn_type=AttnType.NPU)',
        "xDiT/yunchang long-context attention defaults to flash-attn kernels; an NPU attention type is assumed, unconfirmed"),
      C("pipeline.enable_sequential_cpu_offload()", "device_type", "replace", False,
        'pipeline.enable_sequential_cpu_offload(device="npu")',
        "--use-cpu-offload only; diffusers 0.31 offload device default is 'cuda' (version dependent, unconfirmed)"),
      C("peak memory: {torch.cuda.max_memory_allocated() / 1024**3:.1f} GiB", "torch_cuda_api", "replace", True,
        'logger.info(f"Success, time: {gen_time}, peak memory: {torch.npu.max_memory_allocated() / 1024**3:.1f} GiB")',
        "silently logs 0"),
  ])

E("hy_env", "environment.yml", "explicit_replacement",
  "HunyuanVideo environment.yml (conda pytorch + pytorch-cuda, pip flash-attn / xfuser)",
  [
      C("=- nvidia", "device_type", "removal", False, None, "NVIDIA conda channel only serves CUDA packages"),
      C("- pytorch-cuda=12.4", "device_type", "removal", True, None,
        "selects the CUDA build of pytorch and pulls the CUDA runtime"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.4.0.post4",
        "torch_npu wheel matching pytorch 2.4.0"),
      C("- flash-attn @ git+https://github.com/Dao-AILab/flash-attention.git@v2.6.3", "attention_kernel", "removal",
        True, None, "source build needs nvcc"),
  ])

E("hy_sh", "scripts/run_sample_video_multigpu.sh", "explicit_replacement",
  "HunyuanVideo scripts/run_sample_video_multigpu.sh (torchrun + xDiT ulysses/ring degrees)",
  [
      C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True, SET_ENV, "CANN environment"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "device mask silently ignored on NPU"),
  ])

# ----------------------------------------------------------------------------------------------
# Latte (Vchitect)
# ----------------------------------------------------------------------------------------------
E("latte_train", "train.py", "explicit_replacement",
  "Latte train.py (plain DDP trainer, diffusers VAE, xformers/compile/AMP switches)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C('assert torch.cuda.is_available(), "Training currently requires at least one GPU."', "torch_cuda_api", "replace",
        True, 'assert torch.npu.is_available(), "Training currently requires at least one NPU."', "assert aborts"),
      C('device = torch.device("cuda", local_rank)', "device_type", "replace", True,
        'device = torch.device("npu", local_rank)', "cuda device object"),
      C("model = torch.compile(model)", "compile_mode", "replace", False,
        'model = torch.compile(model, backend="npugraphs")',
        "use_compile only; default inductor backend on NPU needs a recent torch_npu -- unconfirmed"),
      C("model.enable_xformers_memory_efficient_attention()", "attention_kernel", "replace", True,
        "model.set_attn_processor(AttnProcessor2_0())  # SDPA -> NPU fused attention",
        "xformers unavailable on NPU: with the flag on this raises (or the is_xformers_available() branch raises)"),
      C("pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
        "performance only"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.mixed_precision)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=args.mixed_precision)",
        "with mixed_precision on, the CUDA scaler disables itself without CUDA: fp16 loss unscaled"),
      C("with torch.cuda.amp.autocast(enabled=args.mixed_precision, dtype=torch.float16):", "amp", "replace", True,
        'with torch.autocast("npu", enabled=args.mixed_precision, dtype=torch.float16):',
        "CUDA autocast is disabled on an NPU host: AMP silently off"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises"),
  ])

E("latte_utils", "utils.py", "explicit_replacement",
  "Latte utils.py (clip_grad_norm_, loggers, EMA, slurm/torchrun setup_distributed, caption cleaning)",
  [
      C('def setup_distributed(backend="nccl", port=None):', "dist_backend", "replace", True,
        'def setup_distributed(backend="hccl", port=None):', "NCCL unavailable"),
      C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "num_gpus = torch.npu.device_count()",
        "0 on an NPU host -> ZeroDivisionError in rank % num_gpus"),
      C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True, "torch.npu.set_device(rank % num_gpus)",
        "raises without CUDA"),
      C("print(torch.cuda.get_arch_list())", "torch_cuda_api", "replace", False, "print(torch_npu.__version__)",
        "collect_env diagnostic only: returns [] silently"),
      C("print(torch.version.cuda)", "torch_cuda_api", "removal", False, None, "prints None; diagnostic only"),
  ])

E("latte_sample", "sample/sample_ddp.py", "explicit_replacement",
  "Latte sample/sample_ddp.py (multi-GPU FVD sampling with int device indices)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C('assert torch.cuda.is_available(), "Sampling with DDP', "torch_cuda_api", "replace", True,
        'assert torch.npu.is_available(), "Sampling with DDP requires at least one NPU. sample.py supports CPU-only usage"',
        "assert aborts"),
      C('dist.init_process_group("nccl")', "dist_backend", "replace", True, 'dist.init_process_group("hccl")', "NCCL unavailable"),
      C("device = rank % torch.cuda.device_count()", "device_type", "replace", True,
        'device = torch.device("npu", rank % torch.npu.device_count())',
        "bare int device means cuda:N in .to()/randn(device=); also device_count() is 0"),
      C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)", "raises"),
      C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", False,
        "model = torch.compile(model)", "max-autotune (Triton autotune + CUDA graphs); unconfirmed on NPU"),
  ])

# ----------------------------------------------------------------------------------------------
# EasyAnimate (aigc-apps)
# ----------------------------------------------------------------------------------------------
E("ea_predict", "predict_t2v.py", "explicit_replacement",
  "EasyAnimate predict_t2v.py (module-level script: GPU_memory_mode offload/qfloat8, TeaCache, xfuser multi-GPU)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C('dist.init_process_group("nccl")', "dist_backend", "replace", True, 'dist.init_process_group("hccl")',
        "ulysses/ring > 1 path"),
      C('device = torch.device(f"cuda:{get_world_group().local_rank}")', "device_type", "replace", True,
        'device = torch.device(f"npu:{get_world_group().local_rank}")', "explicit cuda device"),
      C('=device = "cuda"', "device_type", "replace", True, 'device = "npu"',
        "single-card default; offload hooks and the generator would target CUDA"),
      C('GPU_memory_mode = "model_cpu_offload_and_qfloat8"', "unsupported_op_workaround", "replace", False,
        'GPU_memory_mode = "model_cpu_offload"',
        "float8_e4m3fn weight storage + upcast wrapper on NPU not confirmed (float8 storages listed unsupported)"),
  ])

E("ea_sh", "scripts/train.sh", "explicit_replacement",
  "EasyAnimate scripts/train.sh (accelerate launch with NCCL workarounds)",
  [
      C('export MODEL_NAME="models/Diffusion_Transformer/EasyAnimateV5.1-12b-zh"', "import_torch_npu",
        "npu_only_addition", True, SET_ENV, "CANN environment"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only; HCCL ignores it"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None, "NCCL-only; HCCL ignores it"),
  ])
