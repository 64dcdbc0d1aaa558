# Labels for probe129: timm (pytorch-image-models) internals + training scripts, CUDA -> Ascend NPU.
# One entry per file; one C() per line a careful porter would edit. See README.md for the policy.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU_NOTE = ("register the NPU backend before any 'npu' device string / torch.npu call; mandatory before "
                   "torch_npu 2.5.1, recommended after (autoload)")

# ---------------------------------------------------------------------------------------------------------------
E("timm_train", "train.py", "device_branch_or_abstraction",
  "timm train.py (0.9.x era: --device/--amp-impl/NativeScaler/ApexScaler, init_distributed_device, PrefetchLoader)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
      C("group.add_argument('--device', default='cuda', type=str,", "device_type", "replace", True,
        "group.add_argument('--device', default='npu', type=str,",
        "default device string; init_distributed_device() and torch.device(args.device) would target CUDA"),
      C("assert device.type == 'cuda', 'APEX AMP is CUDA only'", "amp", "replace", False,
        "assert device.type in ('cuda', 'npu'), 'APEX AMP requires CUDA or Ascend apex on NPU'",
        "only hit with --amp-impl apex; Ascend's apex patch supports O1/O2 amp on NPU, but native AMP is the "
        "recommended path (knowledge §6); whether amp.initialize works in this flow is unconfirmed"),
      C("if device.type == 'cuda' and amp_dtype == torch.float16:", "amp", "replace", True,
        "if device.type in ('cuda', 'npu') and amp_dtype == torch.float16:",
        "with --device npu --amp (fp16) no loss scaler is created, so fp16 gradients run unscaled "
        "(silent underflow); the scaler is needed on NPU just as on CUDA"),
      C("model = ApexDDP(model, delay_allreduce=True)", "distributed_framework", "replace", False,
        "model = NativeDDP(model, device_ids=[device], broadcast_buffers=not args.no_ddp_bb)",
        "apex.parallel DDP path only taken with --amp-impl apex; NPU support of apex.parallel unconfirmed, "
        "native DDP over HCCL is the safe choice"),
      C("=device=torch.device('cuda'),", "device_type", "replace", True, "device=torch.device('npu'),",
        "train_one_epoch() is called without device=, so this default is what --no-prefetcher .to(device) and "
        "the synchronize-step check use"),
      C("if args.synchronize_step and device.type == 'cuda':", "torch_cuda_api", "add_branch", False,
        "elif args.synchronize_step and device.type == 'npu': torch.npu.synchronize()",
        "--synchronize-step silently becomes a no-op on NPU (timing accuracy only, off by default)"),
      C("device=torch.device('cuda'),  # FIXME not passed from main(), uses default", "device_type", "replace", True,
        "device=torch.device('npu'),  # FIXME not passed from main(), uses default",
        "validate() is called without device=; with the CUDA default the unconditional "
        "device.type == 'cuda' branch calls torch.cuda.synchronize() on every eval batch and fails on NPU"),
      C("=if device.type == 'cuda':", "torch_cuda_api", "add_branch", False,
        "elif device.type == 'npu': torch.npu.synchronize()",
        "per-batch eval timing only; the following .item() calls synchronize anyway"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("timm_validate", "validate.py", "device_branch_or_abstraction",
  "timm validate.py (bulk validation with batch-size decay retry, --num-gpu DataParallel, native/apex AMP)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
      C("parser.add_argument('--device', default='cuda', type=str,", "device_type", "replace", True,
        "parser.add_argument('--device', default='npu', type=str,", "default device string"),
      C("model = torch.nn.DataParallel(model, device_ids=list(range(args.num_gpu)))", "unsupported_op_workaround",
        "replace", True,
        "assert args.num_gpu == 1, 'torch.nn.DataParallel is not supported on Ascend NPU, run one process per device'",
        "torch.nn.DataParallel is ✘ on NPU (Ascend API list / msFmkTransplt limitation); fails whenever --num-gpu > 1"),
      C("if torch.cuda.is_available() and 'cuda' in args.device:", "torch_cuda_api", "add_branch", False,
        "elif 'npu' in args.device: torch.npu.empty_cache()",
        "batch-size-decay retry after an OOM does not release the NPU caching allocator's blocks; robustness only"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("timm_inference", "inference.py", "explicit_replacement",
  "timm inference.py (older .cuda() style, top-k csv/json/parquet output, --num-gpu)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
      C("amp_autocast = partial(torch.cuda.amp.autocast, dtype=amp_dtype)", "amp", "replace", True,
        "amp_autocast = partial(torch.npu.amp.autocast, dtype=amp_dtype)",
        "CUDA autocast on an NPU host only warns and disables itself: --amp silently runs fp32"),
      C("model = torch.nn.DataParallel(model, device_ids=list(range(args.num_gpu))).cuda()",
        "unsupported_op_workaround", "replace", True,
        "raise ValueError('--num-gpu > 1 (DataParallel) is not supported on Ascend NPU')",
        "DataParallel is ✘ on NPU, and .cuda() fails on the CPU-only torch build used with torch_npu"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
        ".cuda() raises 'Torch not compiled with CUDA enabled' on an NPU host"),
      C("use_prefetcher=True,", "tensor_to_device", "npu_only_addition", True, "device=torch.device('npu'),",
        "create_loader() is called without device=, so PrefetchLoader builds mean/std on its 'cuda' default"),
      C("input = input.cuda()", "tensor_to_device", "replace", True, "input = input.npu()",
        ".cuda() fails on NPU host"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("timm_benchmark", "benchmark.py", "device_branch_or_abstraction",
  "timm benchmark.py (inference/train/profile runners, cuda_timestamp, batch-size retry, deepspeed/fvcore flops)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
      C("parser.add_argument('--device', default='cuda', type=str,", "device_type", "replace", True,
        "parser.add_argument('--device', default='npu', type=str,", "default device string"),
      C("torch.cuda.synchronize(device=device)", "torch_cuda_api", "add_branch", True,
        "torch.npu.synchronize(device=device) if 'npu' in str(device) else torch.cuda.synchronize(device=device)",
        "device sync used for step timing; must target the NPU once the timer dispatch below includes npu"),
      C("self.amp_autocast = partial(torch.cuda.amp.autocast, dtype=self.amp_dtype)", "amp", "replace", True,
        "self.amp_autocast = partial(torch.autocast, device_type=torch.device(self.device).type, dtype=self.amp_dtype)",
        "--amp / --precision amp silently benchmark fp32 on NPU (CUDA autocast disables itself)"),
      C("if 'cuda' in self.device:", "torch_cuda_api", "add_branch", True,
        "if 'cuda' in self.device or 'npu' in self.device:",
        "without a device sync NPU kernels run async and perf_counter() only measures launch time: "
        "reported samples/sec is wrong"),
      C("torch.cuda.reset_peak_memory_stats(self.device)", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats(self.device)",
        "--track-memory: torch.cuda memory API with an 'npu:N' device raises"),
      C("return round(torch.cuda.max_memory_allocated(self.device) / (1024 ** 2), 1)", "torch_cuda_api", "replace",
        True, "return round(torch.npu.max_memory_allocated(self.device) / (1024 ** 2), 1)",
        "--track-memory: reported peak memory is the benchmark's output; CUDA API fails / reports nothing on NPU"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on NPU host (CUDA never initialised): retries after OOM keep the NPU cache"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("timm_data_loader", "timm/data/loader.py", "device_branch_or_abstraction",
  "timm/data/loader.py (create_loader, fast_collate, PrefetchLoader with side CUDA stream)",
  [
      C("=device=torch.device('cuda'),", "device_type", "replace", False, "device=torch.device('npu'),",
        "PrefetchLoader default; create_loader() always passes device, so only direct callers hit it"),
      C("self.is_cuda = torch.cuda.is_available() and device.type == 'cuda'", "torch_cuda_api", "add_branch", False,
        "self.is_npu = hasattr(torch, 'npu') and torch.npu.is_available() and device.type == 'npu'",
        "on NPU the side-stream prefetch is skipped: H2D copy + normalise no longer overlap compute (perf only)"),
      C("=if self.is_cuda:", "torch_cuda_api", "add_branch", False, "if self.is_cuda or self.is_npu:",
        "gate for the side-stream path; paired with the is_npu flag above"),
      C("stream = torch.cuda.Stream()", "torch_cuda_api", "add_branch", False,
        "stream = torch.npu.Stream() if self.is_npu else torch.cuda.Stream()",
        "prefetch side stream; only reached once the is_cuda gate admits npu"),
      C("stream_context = partial(torch.cuda.stream, stream=stream)", "torch_cuda_api", "add_branch", False,
        "stream_context = partial(torch.npu.stream if self.is_npu else torch.cuda.stream, stream=stream)",
        "paired with the side stream"),
      C("torch.cuda.current_stream().wait_stream(stream)", "torch_cuda_api", "add_branch", False,
        "(torch.npu if self.is_npu else torch.cuda).current_stream().wait_stream(stream)",
        "paired with the side stream; without it the NPU compute stream could read an unfinished batch"),
      C("device: torch.device = torch.device('cuda'),", "device_type", "replace", False,
        "device: torch.device = torch.device('npu'),",
        "public API default; callers that omit device (inference.py, extract_features.py here) are fixed at "
        "the call site instead"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("timm_utils_distributed", "timm/utils/distributed.py", "device_branch_or_abstraction",
  "timm/utils/distributed.py (init_distributed_device_so, world_info_from_env, distribute_bn)",
  [
      C("device=getattr(args, 'device', 'cuda'),", "device_type", "replace", False,
        "device=getattr(args, 'device', 'npu'),",
        "fallback only used when args has no device attribute (train/validate always set it)"),
      C("device: str = 'cuda',", "device_type", "replace", False, "device: str = 'npu',",
        "function default; callers pass the resolved --device"),
      C("dist_backend = 'nccl' if 'cuda' in device else 'gloo'", "dist_backend", "add_branch", True,
        "dist_backend = 'hccl' if 'npu' in device else ('nccl' if 'cuda' in device else 'gloo')",
        "with an npu device the backend falls through to gloo, which cannot all_reduce NPU tensors"),
      C("torch.cuda.set_device(device)", "torch_cuda_api", "add_branch", True,
        "elif device.startswith('npu:'): torch.npu.set_device(device)",
        "each rank must bind its local NPU before HCCL init / first allocation (Ascend launch guidance)"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("timm_utils_cuda", "timm/utils/cuda.py", "device_branch_or_abstraction",
  "timm/utils/cuda.py (ApexScaler / NativeScaler loss-scaler wrappers)",
  [
      C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
        "self._scaler = torch.npu.amp.GradScaler()",
        "torch.cuda.amp.GradScaler disables itself without CUDA: scale() returns the loss unscaled, fp16 grads "
        "underflow silently"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("timm_utils_model_ema", "timm/utils/model_ema.py", "device_branch_or_abstraction",
  "timm/utils/model_ema.py (ModelEma / ModelEmaV2 / ModelEmaV3 with foreach lerp)", [])

E("timm_utils_clip_grad", "timm/utils/clip_grad.py", "device_branch_or_abstraction",
  "timm/utils/clip_grad.py + agc helpers (dispatch_clip_grad)", [])

# ---------------------------------------------------------------------------------------------------------------
E("timm_layers_fast_norm", "timm/layers/fast_norm.py", "device_branch_or_abstraction",
  "timm/layers/fast_norm.py (apex fused LN/RMSNorm, low-precision GN/LN under autocast)",
  [
      C("=if torch.is_autocast_enabled():", "amp", "replace", False,
        "if torch.is_autocast_enabled() or torch.npu.is_autocast_enabled():",
        "argless is_autocast_enabled() reads the CUDA autocast flag, so under NPU autocast fast GN never "
        "down-casts; opt-in (--fast-norm) perf feature, result stays correct"),
      C("=dt = torch.get_autocast_gpu_dtype()", "amp", "replace", False,
        "dt = torch.npu.get_autocast_dtype() if x.device.type == 'npu' else torch.get_autocast_gpu_dtype()",
        "GPU autocast dtype query; NPU has its own"),
      C("=with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", False,
        "with torch.autocast(device_type=x.device.type, enabled=False):",
        "disables CUDA autocast only; NPU autocast stays active and re-upcasts GN (no speed-up, still correct; "
        "NPU autocast op lists unconfirmed)"),
      C("if torch.is_autocast_enabled():  # apex LN does not upcast, mimic that", "amp", "replace", False,
        "if torch.is_autocast_enabled() or torch.npu.is_autocast_enabled():  # apex LN does not upcast, mimic that",
        "same as fast_group_norm"),
      C("dt = torch.get_autocast_gpu_dtype()  # FIXME what to do re CPU autocast?", "amp", "replace", False,
        "dt = torch.npu.get_autocast_dtype() if x.device.type == 'npu' else torch.get_autocast_gpu_dtype()",
        "same as fast_group_norm"),
      C("with torch.cuda.amp.autocast(enabled=False):  # keep LN in low precision", "amp", "replace", False,
        "with torch.autocast(device_type=x.device.type, enabled=False):  # keep LN in low precision",
        "same as fast_group_norm"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("timm_layers_config", "timm/layers/config.py", "device_branch_or_abstraction",
  "timm/layers/config.py (exportable/scriptable/no_jit flags, TIMM_FUSED_ATTN, use_fused_attn)", [])

E("timm_layers_attention", "timm/layers/attention.py", "device_branch_or_abstraction",
  "timm/layers/attention.py (Attention / AttentionPoolLatent with fused_attn -> F.scaled_dot_product_attention)",
  [])

# ---------------------------------------------------------------------------------------------------------------
E("timm_optim_factory", "timm/optim/_optim_factory.py", "device_branch_or_abstraction",
  "timm/optim/_optim_factory.py (create_optimizer_v2 incl. apex fused* and bitsandbytes bnb* names)",
  [
      C("from apex.optimizers import FusedNovoGrad, FusedAdam, FusedLAMB, FusedSGD", "fused_optimizer", "replace",
        True, "from torch_npu.optim import NpuFusedSGD, NpuFusedAdam, NpuFusedAdamW, NpuFusedLamb",
        "apex FusedAdam/FusedLAMB/FusedSGD are CUDA kernels (not in Ascend's apex patch); "
        "torch_npu.optim has NpuFused* equivalents"),
      C("assert has_apex and torch.cuda.is_available(), 'APEX and CUDA required for fused optimizers'",
        "fused_optimizer", "add_branch", True,
        "assert has_npu_fused or (has_apex and torch.cuda.is_available()), 'APEX+CUDA or torch_npu required for fused optimizers'",
        "every fused* optimizer (e.g. the shipped hparams' fusedlamb) fails this assert on an NPU host"),
      C("optimizer = FusedSGD(parameters, momentum=momentum, nesterov=True, **opt_args)", "fused_optimizer",
        "replace", True, "optimizer = NpuFusedSGD(parameters, momentum=momentum, nesterov=True, **opt_args)",
        "apex fused SGD -> torch_npu.optim.NpuFusedSGD"),
      C("optimizer = FusedSGD(parameters, momentum=momentum, nesterov=False, **opt_args)", "fused_optimizer",
        "replace", True, "optimizer = NpuFusedSGD(parameters, momentum=momentum, nesterov=False, **opt_args)",
        "apex fused SGD -> NpuFusedSGD"),
      C("optimizer = FusedAdam(parameters, adam_w_mode=False, **opt_args)", "fused_optimizer", "replace", True,
        "optimizer = NpuFusedAdam(parameters, **opt_args)", "apex FusedAdam -> NpuFusedAdam"),
      C("optimizer = FusedAdam(parameters, adam_w_mode=True, **opt_args)", "fused_optimizer", "replace", True,
        "optimizer = NpuFusedAdamW(parameters, **opt_args)",
        "apex FusedAdam(adam_w_mode=True) -> NpuFusedAdamW (no adam_w_mode kwarg)"),
      C("optimizer = FusedLAMB(parameters, **opt_args)", "fused_optimizer", "replace", True,
        "optimizer = NpuFusedLamb(parameters, **opt_args)", "apex FusedLAMB -> NpuFusedLamb"),
      C("optimizer = FusedNovoGrad(parameters, **opt_args)", "fused_optimizer", "replace", True,
        "optimizer = NvNovoGrad(parameters, **opt_args)",
        "no NPU fused NovoGrad; fall back to timm's pure-PyTorch NvNovoGrad"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("timm_data_mixup", "timm/data/mixup.py", "device_branch_or_abstraction",
  "timm/data/mixup.py (one_hot / mixup_target, Mixup, FastCollateMixup)",
  [
      C("def one_hot(x, num_classes, on_value=1., off_value=0., device='cuda'):", "device_type", "replace", False,
        "def one_hot(x, num_classes, on_value=1., off_value=0., device='npu'):",
        "public helper default; in-repo callers pass x.device or 'cpu'"),
      C("def mixup_target(target, num_classes, lam=1., smoothing=0.0, device='cuda'):", "device_type", "replace",
        False, "def mixup_target(target, num_classes, lam=1., smoothing=0.0, device='npu'):",
        "public helper default; Mixup passes x.device, FastCollateMixup passes 'cpu'"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("timm_data_random_erasing", "timm/data/random_erasing.py", "device_branch_or_abstraction",
  "timm/data/random_erasing.py (RandomErasing used on CPU in transforms and on-device in PrefetchLoader)",
  [
      C("def _get_pixels(per_pixel, rand_color, patch_size, dtype=torch.float32, device='cuda'):", "device_type",
        "replace", False, "def _get_pixels(per_pixel, rand_color, patch_size, dtype=torch.float32, device='npu'):",
        "default never used: _erase() always passes self.device"),
      C("=device='cuda',", "device_type", "replace", False, "device='npu',",
        "RandomErasing default; transforms_factory passes 'cpu' and PrefetchLoader passes its device"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("timm_utils_jit", "timm/utils/jit.py", "device_branch_or_abstraction",
  "timm/utils/jit.py (set_jit_legacy / set_jit_fuser te/old/nvfuser)",
  [
      C("torch._C._jit_set_nvfuser_enabled(True)", "compile_mode", "replace", False,
        "raise RuntimeError('nvfuser is CUDA-only; use --torchcompile on Ascend NPU')",
        "--fuser nvfuser has no NPU meaning; unconfirmed whether this call raises on the CPU torch build"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("timm_distributed_train_sh", "distributed_train.sh", "explicit_replacement",
  "timm distributed_train.sh (torchrun launcher), extended with device pinning and a status print",
  [
      C("=shift", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment (LD_LIBRARY_PATH, ASCEND_OPP_PATH...) must be sourced or torch_npu fails to load libhccl"),
      C("export CUDA_VISIBLE_DEVICES=$GPU_IDS", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=$GPU_IDS",
        "device subset would be silently ignored; ranks land on NPU 0..N-1"),
      C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
        "NCCL var has no effect under HCCL; HCCL equivalent exists (default 1 per MindCluster docs)"),
      C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "torch_cuda_api", "replace",
        False, "npu-smi info", "status print only; script has no set -e so a missing nvidia-smi just prints an error"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("timm_slurm_sh", "scripts/slurm_train_vit_b16.sh", "explicit_replacement",
  "SLURM sbatch launcher for timm train.py (srun, SLURM_PROCID picked up by init_distributed_device)",
  [
      C("#SBATCH --gres=gpu:8", "device_type", "replace", False, "#SBATCH --gres=npu:8",
        "GRES name is cluster configuration; unconfirmed what Ascend SLURM sites call it"),
      C("module load cuda/11.8 nccl/2.18.3", "import_torch_npu", "replace", True,
        "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u",
        "load CANN instead of CUDA/NCCL modules; set_env.sh is known to fail under set -u, and the script runs "
        "with set -euo pipefail"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
        "NCCL logging knob is ignored by HCCL; CANN log level is the closest analogue"),
      C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None, "no HCCL meaning; HCCL uses RoCE/HCCS"),
      C("export NCCL_IB_HCA=mlx5", "env_var", "removal", False, None, "no HCCL meaning"),
      C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=ib0",
        "host NIC for HCCL root-info negotiation; without it HCCL picks by its own priority, which may or may "
        "not reach the master node"),
      C("export NCCL_NET_GDR_LEVEL=2", "env_var", "removal", False, None, "GPUDirect RDMA knob, no HCCL meaning"),
      C("--device cuda \\", "device_type", "replace", True, "--device npu \\",
        "CLI overrides the yaml; 'cuda' device fails on NPU host"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("timm_bulk_validate_sh", "scripts/bulk_validate.sh", "explicit_replacement",
  "shell wrapper around timm validate.py for a model list on one pinned device",
  [
      C("=set -e", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment must be sourced before python imports torch_npu"),
      C("export CUDA_VISIBLE_DEVICES=$GPU", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=$GPU",
        "device pinning silently ignored on NPU: every run would use NPU 0"),
      C("--device cuda:0 \\", "device_type", "replace", True, "--device npu:0 \\", "device string"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("ft_requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt of a timm-based fine-tuning repo (cu118 wheel index, flash-attn, xformers)",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "Ascend pairs torch_npu with the CPU torch wheel (x86: whl/cpu; aarch64: plain PyPI); index alone is not "
        "fatal"),
      C("torch==2.1.2+cu118", "torch_cuda_api", "replace", True, "torch==2.1.0",
        "torch_npu wheel version must equal the torch version (2.1.0 line); +cu118 build has no aarch64 wheel"),
      C("torchvision==0.16.2+cu118", "torch_cuda_api", "replace", True, "torchvision==0.16.0",
        "torchvision 0.16.2 hard-pins torch 2.1.2, conflicting with torch 2.1.0"),
      C("timm==0.9.12", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "pin torch_npu matching torch 2.1.0 (branch v2.1.0-7.0.0, CANN 8.1.RC1)"),
      C("flash-attn==2.3.6", "attention_kernel", "removal", True, None,
        "flash-attn cannot be built/installed on NPU hosts (needs CUDA); use npu_fusion_attention / SDPA"),
      C("xformers==0.0.23.post1", "attention_kernel", "removal", True, None,
        "no NPU backend and the wheel pins torch 2.1.2 + CUDA"),
      C("nvidia-ml-py==12.535.133", "torch_cuda_api", "removal", False, None,
        "installs fine (pure Python) but NVML is useless on NPU"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("ft_dockerfile", "Dockerfile", "explicit_replacement",
  "Dockerfile of a timm-based repo on the NGC PyTorch image with NVIDIA apex built from source",
  [
      C("FROM nvcr.io/nvidia/pytorch:23.10-py3", "import_torch_npu", "replace", True,
        "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
        "CUDA base image -> CANN base image (driver/firmware stay on the host)"),
      C("ENV TORCH_CUDA_ARCH_LIST=\"7.0;8.0;8.6;9.0\"", "env_var", "removal", False, None,
        "only steers nvcc builds"),
      C("git clone https://github.com/NVIDIA/apex /opt/apex && \\", "custom_cuda_extension", "replace", False,
        "git clone https://gitee.com/ascend/apex /opt/apex && \\",
        "Ascend's apex patch (pure Python, NPU fused optimizers/amp) if apex is still wanted; native AMP needs none"),
      C("--config-settings \"--build-option=--cuda_ext\" \\", "custom_cuda_extension", "removal", True, None,
        "--cuda_ext compiles amp_C / fused_layer_norm_cuda with nvcc: build fails without a CUDA toolkit"),
      C("WORKDIR /workspace/timm-ft", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12",
        "the CANN image has no torch; the NGC image did, so the Dockerfile never installed it"),
      C("ENV NCCL_DEBUG=WARN \\", "env_var", "replace", False, "ENV ASCEND_GLOBAL_LOG_LEVEL=3 \\",
        "NCCL var ignored by HCCL"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("timm_hparams_yaml", "hparams/vit_base_patch16_224.in1k.yaml", "explicit_replacement",
  "timm --config args yaml (args.yaml style) for a ViT-B/16 ImageNet recipe",
  [
      C("device: cuda", "device_type", "replace", True, "device: npu",
        "loaded as parser defaults; distributed_train.sh does not override --device"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("ft_environment", "environment.yml", "explicit_replacement",
  "conda environment.yml with pytorch + pytorch-cuda from the pytorch/nvidia channels",
  [
      C("=- nvidia", "torch_cuda_api", "removal", False, None, "CUDA channel no longer needed"),
      C("  - pytorch=2.1.2", "torch_cuda_api", "replace", True, "  - pytorch=2.1.0",
        "must equal the torch_npu line (2.1.0)"),
      C("  - torchvision=0.16.2", "torch_cuda_api", "replace", True, "  - torchvision=0.16.0",
        "pairs with torch 2.1.0"),
      C("  - pytorch-cuda=11.8", "torch_cuda_api", "replace", True, "  - cpuonly",
        "selects the CUDA build (none for linux-aarch64); torch_npu expects the CPU build"),
      C("  - cudatoolkit-dev=11.8", "torch_cuda_api", "removal", True, None,
        "nvcc toolkit package, unavailable on linux-aarch64 so the solve fails on Kunpeng hosts"),
      C("  - pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post12",
        "torch_npu is pip-only"),
      C("      - nvidia-ml-py==12.535.133", "torch_cuda_api", "removal", False, None, "NVML useless on NPU"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("ft_finetune", "finetune_timm.py", "explicit_replacement",
  "downstream timm fine-tuning script (torchrun DDP, GradScaler, ModelEmaV2, CosineLRScheduler)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "CPU-only torch build has no CUDA runtime: raises"),
      C("os.environ.setdefault('NCCL_ASYNC_ERROR_HANDLING', '1')", "env_var", "replace", False,
        "os.environ.setdefault('HCCL_ASYNC_ERROR_HANDLING', '1')", "NCCL var has no effect under HCCL"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "raises on NPU host"),
      C("dist.init_process_group(backend='nccl', init_method='env://', world_size=world_size, rank=rank)",
        "dist_backend", "replace", True,
        "dist.init_process_group(backend='hccl', init_method='env://', world_size=world_size, rank=rank)",
        "NCCL backend unavailable on NPU"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "queued lazily and never run on an NPU host (silent no-op); torch.manual_seed above already seeds"),
      C("images = images.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "images = images.npu(non_blocking=True)", ".cuda() raises on NPU host"),
      C("targets = targets.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "targets = targets.npu(non_blocking=True)", ".cuda() raises on NPU host"),
      C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=args.amp):", "--amp silently trains fp32 (CUDA autocast disables itself)"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "lazy CUDA init raises 'Torch not compiled with CUDA enabled'"),
      C("mem = torch.cuda.max_memory_allocated() / (1024 ** 3)", "torch_cuda_api", "replace", False,
        "mem = torch.npu.max_memory_allocated() / (1024 ** 3)",
        "returns 0 when CUDA is uninitialised: log shows 0.0G (cosmetic)"),
      C("with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
        "eval autocast silently disabled on NPU"),
      C("device = torch.device('cuda', local_rank)", "device_type", "replace", True,
        "device = torch.device('npu', local_rank)", "device used by evaluate() .to(device) and zeros(device=)"),
      C("logger.info(f'world size {world_size}, device {torch.cuda.get_device_name(local_rank)}')", "torch_cuda_api",
        "replace", True, "logger.info(f'world size {world_size}, device {torch.npu.get_device_name(local_rank)}')",
        "get_device_name initialises CUDA and raises on NPU host"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", ".cuda() raises on NPU host"),
      C("criterion = criterion.cuda()", "tensor_to_device", "replace", True, "criterion = criterion.npu()",
        ".cuda() raises on NPU host"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
        "CUDA GradScaler disables itself without CUDA: fp16 loss never scaled"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on NPU host"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("ft_extract_features", "extract_features.py", "explicit_replacement",
  "downstream timm feature-extraction script (create_loader prefetcher, fp16 autocast, optional DataParallel)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
      C("assert torch.cuda.is_available(), 'feature extraction expects a CUDA device'", "torch_cuda_api", "replace",
        True, "assert torch.npu.is_available(), 'feature extraction expects an NPU device'",
        "is_available() is False on NPU host: assert fails"),
      C("_logger.info(f'{torch.cuda.device_count()} GPU(s) visible, using {torch.cuda.get_device_name(0)}')",
        "torch_cuda_api", "replace", True,
        "_logger.info(f'{torch.npu.device_count()} NPU(s) visible, using {torch.npu.get_device_name(0)}')",
        "get_device_name raises on NPU host"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
        ".cuda() raises on NPU host"),
      C("if args.multi_gpu and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
        "if args.multi_gpu and torch.npu.device_count() > 1:",
        "device_count() is 0 on NPU host, so --multi-gpu is silently ignored"),
      C("model = torch.nn.DataParallel(model)", "unsupported_op_workaround", "removal", False, None,
        "DataParallel is ✘ on NPU; only reached once the device_count check is ported -> drop --multi-gpu "
        "or shard over processes"),
      C("use_prefetcher=True,", "tensor_to_device", "npu_only_addition", True, "device=torch.device('npu'),",
        "create_loader() without device= makes PrefetchLoader allocate mean/std on its 'cuda' default"),
      C("with torch.cuda.amp.autocast(enabled=args.fp16, dtype=torch.float16):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=args.fp16, dtype=torch.float16):", "--fp16 silently ignored on NPU"),
      C("f'({(time.time() - start):.0f}s, peak mem {torch.cuda.max_memory_reserved() / 2**30:.1f} GiB)')",
        "torch_cuda_api", "replace", False,
        "f'({(time.time() - start):.0f}s, peak mem {torch.npu.max_memory_reserved() / 2**30:.1f} GiB)')",
        "reports 0 GiB on NPU host (cosmetic)"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("ft_vit_flash", "models/vit_flash.py", "kernel_rewrite",
  "downstream flash-attn 2 drop-in for timm Attention (flash_attn_func / flash_attn_varlen_func)",
  [
      C("from flash_attn import flash_attn_func, flash_attn_varlen_func", "attention_kernel", "replace", True,
        "import torch_npu",
        "unguarded import of a CUDA-only package: importing this module (done by extract_features.py) fails"),
      C("if not torch.cuda.is_available():", "device_capability_check", "replace", False,
        "if not (hasattr(torch, 'npu') and torch.npu.is_available()):",
        "gate is False on NPU so the patch is skipped and timm's SDPA path runs (correct, slower)"),
      C("major, minor = torch.cuda.get_device_capability(device)", "device_capability_check", "removal", False, None,
        "sm80 check meaningless on NPU (get_device_capability returns None / env-configured there)"),
      C("x = flash_attn_func(q, k, v, dropout_p=dropout_p, softmax_scale=self.scale, causal=self.causal)",
        "attention_kernel", "replace", False,
        "x = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, 'BSND', keep_prob=1. - dropout_p, scale=self.scale)[0]",
        "perf rewrite: flash-attn BSND call -> npu_fusion_attention (SDPA fallback is correct meanwhile)"),
      C("x = flash_attn_varlen_func(", "attention_kernel", "replace", False,
        "x = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, 'TND', keep_prob=1. - dropout_p, scale=self.scale, actual_seq_qlen=cu_seqlens[1:].tolist(), actual_seq_kvlen=cu_seqlens[1:].tolist())[0]",
        "varlen -> TND layout with cumulative host-side lengths; only reachable after the flash patch is enabled"),
      C("return cu.to(device=device or 'cuda', non_blocking=True)", "device_type", "replace", False,
        "return cu.to(device=device or 'npu', non_blocking=True)",
        "helper default; NPU TND path wants host lists anyway"),
      C("x = torch.randn(batch, seq, dim, device='cuda', dtype=dtype)", "tensor_to_device", "replace", True,
        "x = torch.randn(batch, seq, dim, device='npu', dtype=dtype)", "hard-coded CUDA device in the self-check"),
      C("attn = attn.to(device='cuda', dtype=dtype).eval()", "tensor_to_device", "replace", True,
        "attn = attn.to(device='npu', dtype=dtype).eval()", "hard-coded CUDA device in the self-check"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("ft_knn_eval", "tools/knn_eval.py", "explicit_replacement",
  "downstream k-NN evaluation over extracted features (mp.spawn per GPU, NCCL, CUDA events)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
      C("p.add_argument('--backend', default='nccl')", "dist_backend", "replace", True,
        "p.add_argument('--backend', default='hccl')", "NCCL unavailable on NPU"),
      C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(rank)",
        "raises on NPU host"),
      C("device = torch.device(f'cuda:{rank}')", "device_type", "replace", True,
        "device = torch.device(f'npu:{rank}')", "device string"),
      C("bank = F.normalize(torch.from_numpy(train_feats).cuda(rank), dim=1).half()", "tensor_to_device", "replace",
        True, "bank = F.normalize(torch.from_numpy(train_feats).npu(rank), dim=1).half()", ".cuda() raises"),
      C("if args.backend == 'nccl':", "dist_backend", "replace", True, "if args.backend in ('nccl', 'hccl'):",
        "backend-string comparison (not rewritten by transfer_to_npu): with hccl the else-branch all_reduces CPU "
        "tensors, which HCCL cannot do"),
      C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start_evt = torch.npu.Event(enable_timing=True)", "CUDA Event is a dummy type on the CPU torch build"),
      C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end_evt = torch.npu.Event(enable_timing=True)", "same"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises"),
      C("world_size = args.world_size or torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "world_size = args.world_size or torch.npu.device_count()",
        "device_count() is 0 on NPU host: mp.spawn starts no workers and the script silently evaluates nothing"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("timm_tests_optim", "tests/test_optim.py", "device_branch_or_abstraction",
  "timm tests/test_optim.py (adapted PyTorch optimizer tests incl. device round-trip and apex fused cases)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "tests pass on CPU without it; needed only for the NPU branches on torch_npu < 2.5.1"),
      C("i = input_device if weight.is_cuda else input", "device_type", "replace", False,
        "i = input_device if weight.device.type != 'cpu' else input",
        "paired with the device round-trip below; an NPU weight would otherwise meet a CPU input"),
      C("=if not torch.cuda.is_available():", "torch_cuda_api", "add_branch", False,
        "if not (torch.cuda.is_available() or torch.npu.is_available()):",
        "device state-dict round-trip silently skipped on NPU"),
      C("input_device = Parameter(input.clone().detach().float().cuda())", "tensor_to_device", "replace", False,
        "input_device = Parameter(input.clone().detach().float().npu())", "test device move"),
      C("weight_device = Parameter(weight.clone().detach().cuda())", "tensor_to_device", "replace", False,
        "weight_device = Parameter(weight.clone().detach().npu())", "test device move"),
      C("bias_device = Parameter(bias.clone().detach().cuda())", "tensor_to_device", "replace", False,
        "bias_device = Parameter(bias.clone().detach().npu())", "test device move"),
      C("if not torch.cuda.is_available():  # CUDA", "torch_cuda_api", "add_branch", False,
        "if not (torch.cuda.is_available() or torch.npu.is_available()):  # accelerator",
        "device basic cases silently skipped on NPU"),
      C("torch.randn(10, 5).cuda(),", "tensor_to_device", "replace", False, "torch.randn(10, 5).npu(),",
        "test device move"),
      C("torch.randn(10).cuda(),", "tensor_to_device", "replace", False, "torch.randn(10).npu(),",
        "test device move"),
      C("torch.randn(5).cuda(),", "tensor_to_device", "replace", False, "torch.randn(5).npu(),",
        "test device move"),
      C("@pytest.mark.skipif(not (has_apex and torch.cuda.is_available()), reason='NVIDIA APEX + CUDA required')",
        "fused_optimizer", "replace", False,
        "@pytest.mark.skipif(not ((has_apex and torch.cuda.is_available()) or torch.npu.is_available()), reason='fused optimizers need APEX+CUDA or torch_npu')",
        "fused optimizer tests silently skipped on NPU"),
      C("_test_model(optimizer, dict(lr=1e-3), device=torch.device('cuda'))", "tensor_to_device", "replace", False,
        "_test_model(optimizer, dict(lr=1e-3), device=torch.device('npu'))",
        "paired with the skipif"),
  ])
