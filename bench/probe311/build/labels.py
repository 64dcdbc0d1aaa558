# Labels for probe311: SELD / spatial audio (CUDA -> Ascend NPU).
# One label per line a careful porter edits. See ../README.md for the policy.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ---------------------------------------------------------------------------------------------
# DCASE SELD baseline (seld.py / parameters.py / seldnet_model.py / visualize)
# ---------------------------------------------------------------------------------------------
E("p311-01-dcase-seld", "seld.py", "explicit_replacement",
  "DCASE2023 Task 3 SELD baseline training wrapper (seld.py)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script: register the npu device before any 'npu' device string is used (no autoload on the 2.1 pin)"),
      C("use_cuda = params['use_cuda'] and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "use_cuda = params['use_cuda'] and torch.npu.is_available()",
        "torch.cuda.is_available() is False on an NPU host, so training silently falls back to the CPU"),
      C('device = torch.device("cuda:0" if use_cuda else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu:0" if use_cuda else "cpu")',
        "device string"),
      C("print('Training on GPU: {}'.format(torch.cuda.get_device_name(0)))", "torch_cuda_api", "replace", True,
        "print('Training on NPU: {}'.format(torch.npu.get_device_name(0)))",
        "once the guard above is ported this branch runs; torch.cuda.get_device_name raises without CUDA"),
      C("print('peak GPU memory: {:.1f} MB'.format(torch.cuda.max_memory_allocated(device) / 1024 ** 2))",
        "torch_cuda_api", "replace", False,
        "print('peak NPU memory: {:.1f} MB'.format(torch.npu.max_memory_allocated(device) / 1024 ** 2))",
        "logging only: torch.cuda memory stats return 0 when CUDA was never initialised"),
  ])

E("p311-02-dcase-params", "parameters.py", "device_branch_or_abstraction",
  "DCASE2023 SELD baseline parameters.py (config dict with use_cuda flag)",
  [])

E("p311-03-dcase-model", "seldnet_model.py", "explicit_replacement",
  "DCASE2023 SELD baseline model (CRNN + MHSA, ADPIT loss)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "the __main__ shape check calls .npu(); Tensor.npu only exists once torch_npu is imported (torch 2.1)"),
      C("dropout=params['dropout_rate'], bidirectional=True)", "unsupported_op_workaround", "replace", False,
        "bidirectional=True)  # inter-layer dropout applied explicitly on NPU",
        "Ascend's 2.7.1 API list marks nn.GRU as not supporting the dropout argument (msFmkTransplt lists nn.GRU as "
        "unsupported); effect at runtime unconfirmed"),
      C("model = SeldModel(in_shape, out_shape, params).cuda()", "tensor_to_device", "replace", True,
        "model = SeldModel(in_shape, out_shape, params).npu()", ".cuda() raises without CUDA"),
      C("x = torch.randn(4, 7, params['feature_sequence_length'], params['nb_mel_bins']).cuda()", "tensor_to_device",
        "replace", True, "x = torch.randn(4, 7, params['feature_sequence_length'], params['nb_mel_bins']).npu()",
        ".cuda() raises without CUDA"),
  ])

E("p311-04-dcase-visualize", "visualize_seldnet_output.py", "device_branch_or_abstraction",
  "DCASE SELD baseline visualize_seldnet_output.py with a device-picking helper",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("if gpu >= 0 and torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        "if gpu >= 0 and hasattr(torch, 'npu') and torch.npu.is_available(): return torch.device('npu:{}'.format(gpu))",
        "pick_device only knows CUDA: on an NPU host inference silently runs on the CPU; add an NPU branch next to it"),
      C("if device.type == 'cuda':", "device_type", "replace", False, "if device.type in ('cuda', 'npu'):",
        "never true on NPU: only skips the cache flush below"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache() if device.type == 'npu' else torch.cuda.empty_cache()",
        "no-op when CUDA is not initialised; freeing the NPU cache is optional"),
  ])

# ---------------------------------------------------------------------------------------------
# EINV2 (Event-Independent Network V2), seld/ package
# ---------------------------------------------------------------------------------------------
E("p311-05-ein-main", "seld/main.py", "explicit_replacement",
  "EINV2 (yinkalario/EIN-SELD) seld/main.py entry point with argparse + yaml config",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script of the seld package; every module below uses torch.npu / .npu()"),
  ])

E("p311-06-ein-initialize", "seld/learning/initialize.py", "explicit_replacement",
  "EINV2 seld/learning/initialize.py (init_train / init_infer)",
  [
      C("os.environ['CUDA_VISIBLE_DEVICES'] = str(cfg['training']['cuda_visible_devices'])", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(cfg['training']['cuda_visible_devices'])",
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: the configured card selection is silently lost"),
      C("args.cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "args.cuda = not args.no_cuda and torch.npu.is_available()",
        "False on NPU: training silently on CPU"),
      C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
        "lazy CUDA seeding never runs on an NPU host (silent no-op); NPU RNG stays unseeded (reproducibility only)"),
      C("logging.info('Using {} GPU(s): {}'.format(torch.cuda.device_count(),", "torch_cuda_api", "replace", False,
        "logging.info('Using {} NPU(s): {}'.format(torch.npu.device_count(),", "logging only: returns 0 on NPU"),
      C("[torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]))", "torch_cuda_api", "replace", False,
        "[torch.npu.get_device_name(i) for i in range(torch.npu.device_count())]))",
        "logging only: range(0) is empty, nothing raises"),
      C("args.cuda = (not args.no_cuda) and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "args.cuda = (not args.no_cuda) and torch.npu.is_available()", "inference silently on CPU otherwise"),
  ])

E("p311-07-ein-config", "seld/utils/config.py", "explicit_replacement",
  "EINV2 seld/utils/config.py builders (DataLoader, feature extractor, DataParallel model)",
  [
      C("=pin_memory=True", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu'",
        "DataLoader pins only for CUDA unless pin_memory_device is given (torch 2.1); perf only, unconfirmed"),
      C("pin_memory=True,  # faster host->GPU copies", "pin_memory", "replace", False,
        "pin_memory=True, pin_memory_device='npu',  # faster host->NPU copies", "same as above; perf only, unconfirmed"),
      C("pin_memory=torch.cuda.is_available()", "pin_memory", "replace", False, "pin_memory=torch.npu.is_available()",
        "evaluates to False on NPU: no pinning, perf only"),
      C("afextractor = nn.DataParallel(afextractor)", "distributed_framework", "removal", True, None,
        "torch.nn.DataParallel is unsupported (x) on Atlas A2/A3; run single-device (or DDP); checkpoint code "
        "unwraps .module only if present"),
      C("afextractor = afextractor.cuda()", "tensor_to_device", "replace", True, "afextractor = afextractor.npu()",
        ".cuda() raises without CUDA"),
      C("model = nn.DataParallel(model)", "distributed_framework", "removal", True, None,
        "nn.DataParallel unsupported on NPU"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", ".cuda() raises without CUDA"),
  ])

E("p311-08-ein-training", "seld/methods/ein_seld/training.py", "explicit_replacement",
  "EINV2 ein_seld Trainer (train_step / validate_step) with torch.cuda.amp",
  [
      C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", True,
        "from torch_npu.npu.amp import GradScaler, autocast",
        "torch.cuda.amp disables itself without CUDA (warning), so amp: true silently trains in fp32 without scaling"),
      C("self.mean = torch.tensor(self.mean, dtype=torch.float32).cuda()", "tensor_to_device", "replace", True,
        "self.mean = torch.tensor(self.mean, dtype=torch.float32).npu()", ".cuda() raises"),
      C("self.std = torch.tensor(self.std, dtype=torch.float32).cuda()", "tensor_to_device", "replace", True,
        "self.std = torch.tensor(self.std, dtype=torch.float32).npu()", ".cuda() raises"),
      C("batch_x = batch_x.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "batch_x = batch_x.npu(non_blocking=True)", ".cuda() raises"),
      C("batch_target['sed'] = batch_target['sed'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "batch_target['sed'] = batch_target['sed'].npu(non_blocking=True)", ".cuda() raises"),
      C("batch_target['doa'] = batch_target['doa'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "batch_target['doa'] = batch_target['doa'].npu(non_blocking=True)", ".cuda() raises"),
      C("batch_x = batch_x.cuda()", "tensor_to_device", "replace", True, "batch_x = batch_x.npu()", ".cuda() raises"),
      C("batch_target['sed'] = batch_target['sed'].cuda()", "tensor_to_device", "replace", True,
        "batch_target['sed'] = batch_target['sed'].npu()", ".cuda() raises"),
      C("batch_target['doa'] = batch_target['doa'].cuda()", "tensor_to_device", "replace", True,
        "batch_target['doa'] = batch_target['doa'].npu()", ".cuda() raises"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op without CUDA; optional on NPU"),
  ])

E("p311-09-ein-inference", "seld/methods/ein_seld/inference.py", "explicit_replacement",
  "EINV2 ein_seld Inferer + infer() with checkpoint ensembling and FOA TTA",
  [
      C("self.mean = torch.tensor(self.mean, dtype=torch.float32).cuda(non_blocking=True)", "tensor_to_device",
        "replace", True, "self.mean = torch.tensor(self.mean, dtype=torch.float32).npu(non_blocking=True)",
        ".cuda() raises"),
      C("self.std = torch.tensor(self.std, dtype=torch.float32).cuda(non_blocking=True)", "tensor_to_device",
        "replace", True, "self.std = torch.tensor(self.std, dtype=torch.float32).npu(non_blocking=True)",
        ".cuda() raises"),
      C("batch_x = batch_x.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "batch_x = batch_x.npu(non_blocking=True)", ".cuda() raises"),
      C("map_location = (lambda storage, loc: storage.cuda()) if cuda else 'cpu'", "device_type", "replace", True,
        "map_location = (lambda storage, loc: storage.npu()) if cuda else 'cpu'",
        "map_location callable moves storages with .cuda(): raises on an NPU host"),
  ])

E("p311-10-ein-feature", "seld/methods/feature.py", "explicit_replacement",
  "EINV2-style on-the-fly logmel + intensity-vector / GCC-PHAT extractors (nn.Module, torch.stft)",
  [
      C("cc = torch.fft.fftshift(cc, dim=-1)", "unsupported_op_workaround", "replace", False,
        "cc = torch.roll(cc, shifts=cc.shape[-1] // 2, dims=-1)",
        "torch.fft.fftshift is x in Ascend's 2.7.1 list and in msFmkTransplt's unsupported list; roll has an NPU "
        "kernel. Whether fftshift errors or falls back is unconfirmed"),
  ])

E("p311-11-ein-checkpoint", "seld/learning/checkpoint.py", "explicit_replacement",
  "EINV2 seld/learning/checkpoint.py CheckpointIO saving RNG states",
  [
      C("'cuda_rng': torch.cuda.get_rng_state(),", "torch_cuda_api", "replace", True,
        "'npu_rng': torch.npu.get_rng_state(),", "torch.cuda.get_rng_state initialises CUDA and raises on an NPU host"),
      C("state_dict = torch.load(checkpoint_path, map_location=torch.device('cuda', torch.cuda.current_device()))",
        "device_type", "replace", True,
        "state_dict = torch.load(checkpoint_path, map_location=torch.device('npu', torch.npu.current_device()))",
        "torch.cuda.current_device raises; 'cuda' map_location fails"),
      C("torch.cuda.set_rng_state(state_dict['cuda_rng'])", "torch_cuda_api", "replace", True,
        "torch.npu.set_rng_state(state_dict['npu_rng'])", "raises without CUDA"),
  ])

E("p311-12-ein-scripts", "scripts/train.sh", "explicit_replacement",
  "EINV2 scripts/train.sh (preprocess + train + infer)",
  [
      C("=set -e", "import_torch_npu", "npu_only_addition", True, SET_ENV,
        "CANN environment (LD_LIBRARY_PATH, ASCEND_OPP_PATH...) must be sourced or import torch_npu fails"),
      C("export CUDA_VISIBLE_DEVICES=$GPU_IDS", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=$GPU_IDS",
        "ignored by the Ascend runtime: card selection silently lost"),
  ])

E("p311-13-ein-config-yaml", "configs/ein_seld/seld.yaml", "explicit_replacement",
  "EINV2 configs/ein_seld/seld.yaml", [])

# ---------------------------------------------------------------------------------------------
# SALSA (PyTorch Lightning) + GPU SALSA-Lite extraction
# ---------------------------------------------------------------------------------------------
E("p311-14-salsa-train", "experiments/train.py", "explicit_replacement",
  "SALSA (thomeou/SALSA) experiments/train.py with PyTorch Lightning 1.x Trainer(gpus=...)",
  [
      C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpus = torch.npu.device_count()",
        "returns 0 on NPU, so gpus=0 and Lightning silently trains on the CPU"),
      C("props = torch.cuda.get_device_properties(i)", "torch_cuda_api", "replace", True,
        "props = torch.npu.get_device_properties(i)", "raises without CUDA once the loop runs"),
      C("props.major, props.minor))", "device_capability_check", "replace", False,
        "props.cube_core_num, props.vector_core_num))",
        "NPU device properties only carry name/total_memory/L2_cache_size/cube_core_num/vector_core_num; major/minor "
        "are empty (logging only)"),
      C("accelerator = 'ddp' if gpus > 1 else None", "dist_backend", "replace", False,
        "os.environ.setdefault('PL_TORCH_DISTRIBUTED_BACKEND', 'hccl'); accelerator = 'ddp' if gpus > 1 else None",
        "Lightning 1.x DDP chooses nccl/gloo itself; multi-card NPU needs hccl. Unconfirmed"),
      C("trainer = pl.Trainer(gpus=gpus, accelerator=accelerator, sync_batchnorm=gpus > 1,", "device_type", "replace",
        True, "trainer = pl.Trainer(accelerator=NPUAccelerator(), devices=max(gpus, 1), strategy=accelerator, sync_batchnorm=gpus > 1,",
        "gpus=N requires CUDA (MisconfigurationException); Lightning has no built-in NPU accelerator, a custom "
        "Accelerator/plugin is needed (replacement unconfirmed)"),
      C("precision=cfg.training.precision,", "amp", "replace", False,
        "precision=cfg.training.precision if torch.npu.is_available() else 32,",
        "Lightning 1.x native AMP (precision=16) is tied to CUDA; NPU AMP through a custom plugin. Unconfirmed"),
  ])

E("p311-15-salsa-gpu-features", "dataset/extract_salsa_lite_gpu.py", "explicit_replacement",
  "GPU (torchaudio) variant of SALSA-Lite feature extraction for the MIC format",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
        "script exits on an NPU host"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "raises without CUDA"),
      C("device = torch.device('cuda', args.gpu)", "device_type", "replace", True,
        "device = torch.device('npu', args.gpu)", "device string"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "lazy CUDA init raises"),
      C("count + 1, time.time() - start_time, torch.cuda.memory_allocated(device) / 2 ** 20))", "torch_cuda_api",
        "replace", False, "count + 1, time.time() - start_time, torch.npu.memory_allocated(device) / 2 ** 20))",
        "logging only: returns 0"),
  ])

# ---------------------------------------------------------------------------------------------
# CST-former style DDP training (torchrun) + model + launcher
# ---------------------------------------------------------------------------------------------
E("p311-16-cst-train-ddp", "train_ddp.py", "explicit_replacement",
  "CST-former / DCASE2024-style DDP training script (torchrun, AMP bf16, torch.compile, profiler)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script; also needed for torch_npu.npu.mstx below"),
      C("from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler", "torch_cuda_api",
        "replace", False, "from torch_npu.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler",
        "torch.profiler does not record NPU kernels; only with --profile. Unconfirmed whether CUDA activity errors"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "silent no-op on NPU host; reproducibility only"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
      C("os.environ.setdefault('NCCL_ASYNC_ERROR_HANDLING', '1')", "env_var", "replace", False,
        "os.environ.setdefault('HCCL_ASYNC_ERROR_HANDLING', '1')",
        "NCCL variable is ignored; HCCL's watchdog variable is the counterpart (default already 1 per MindCluster docs)"),
      C("dist.init_process_group(backend='nccl', init_method='env://',", "dist_backend", "replace", True,
        "dist.init_process_group(backend='hccl', init_method='env://',", "NCCL backend unavailable on NPU"),
      C("return torch.device('cuda', args.local_rank)", "device_type", "replace", True,
        "return torch.device('npu', args.local_rank)", "device string"),
      C("major, minor = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
        "major, minor = (8, 0) if torch.npu.is_bf16_supported() else (7, 0)",
        "torch.cuda.get_device_capability raises without CUDA; a plain rename is not enough either: torch_npu's "
        "get_device_capability returns None unless TORCH_NPU_DEVICE_CAPABILITY is set, and unpacking None raises"),
      C("t = torch.tensor([value], dtype=torch.float32, device='cuda')", "device_type", "replace", True,
        "t = torch.tensor([value], dtype=torch.float32, device='npu')", "device string"),
      C("sampler=train_sampler, num_workers=cfg['train']['num_workers'], pin_memory=True,", "pin_memory", "replace",
        False, "sampler=train_sampler, num_workers=cfg['train']['num_workers'], pin_memory=True, pin_memory_device='npu',",
        "perf only, unconfirmed"),
      C("torch.cuda.nvtx.range_push('step{}'.format(step))", "torch_cuda_api", "replace", True,
        "nvtx_id = torch_npu.npu.mstx.range_start('step{}'.format(step))",
        "torch.cuda.nvtx is not redirected and raises without a CUDA build; mstx is the NPU counterpart "
        "(exact mstx call signature unconfirmed)"),
      C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(nvtx_id)",
        "as above"),
      C("amp_ctx = lambda: torch.autocast(device_type='cuda', dtype=amp_dtype)", "amp", "replace", True,
        "amp_ctx = lambda: torch.autocast(device_type='npu', dtype=amp_dtype)",
        "autocast('cuda') disables itself without CUDA: --amp silently runs fp32"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp and amp_dtype == torch.float16)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=args.amp and amp_dtype == torch.float16)",
        "torch.cuda.amp.GradScaler disables itself without CUDA: fp16 runs unscaled"),
      C("optimizer = torch.optim.Adam(model.parameters(), lr=cfg['train']['lr'], weight_decay=cfg['train']['weight_decay'], fused=True)",
        "fused_optimizer", "replace", False,
        "optimizer = torch_npu.optim.NpuFusedAdam(model.parameters(), lr=cfg['train']['lr'], weight_decay=cfg['train']['weight_decay'])",
        "the NPU op lists have _fused_adamw_ but no _fused_adam_: fused=True may fall back to CPU or fail; "
        "NpuFusedAdam is the NPU fused optimizer. Unconfirmed"),
      C("ckpt = torch.load(args.resume, map_location='cuda:{}'.format(args.local_rank))", "device_type", "replace", True,
        "ckpt = torch.load(args.resume, map_location='npu:{}'.format(args.local_rank))", "device string"),
      C("model = torch.compile(model, mode='max-autotune')", "compile_mode", "replace", False,
        "model = torch.compile(model)",
        "max-autotune relies on Triton templates / CUDA graphs; Triton is forced off on NPU. Default inductor "
        "(torch_npu >= 2.6) or backend='npugraphs'. Unconfirmed"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats()",
        "resolves the current CUDA device (lazy init) and raises"),
      C("prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],", "torch_cuda_api", "replace", False,
        "prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.NPU],",
        "CUDA activity records nothing on NPU; only with --profile. Unconfirmed"),
      C("peak = torch.cuda.max_memory_allocated() / 2 ** 30", "torch_cuda_api", "replace", False,
        "peak = torch.npu.max_memory_allocated() / 2 ** 30", "logging only: returns 0"),
  ])

E("p311-17-cst-model", "models/cst_former.py", "explicit_replacement",
  "CST-former (channel-spectro-temporal transformer) SELD model with fused-SDPA attention",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "the __main__ smoke test selects 'npu'; needs torch_npu loaded (torch 2.1)"),
      C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True):",
        "attention_kernel", "removal", False, None,
        "torch.backends.cuda.sdp_kernel is x on Ascend; unreachable on NPU (x.is_cuda is False, the plain SDPA branch "
        "runs and dispatches to the NPU flash-attention kernel). Remove if the guard is ever ported"),
      C("dev = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
        "dev = 'npu' if torch.npu.is_available() else 'cpu'", "smoke test silently on CPU otherwise"),
      C("with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=dev == 'cuda'):", "amp", "replace", False,
        "with torch.autocast(device_type='npu', dtype=torch.float16, enabled=dev == 'npu'):",
        "smoke test only: autocast simply stays off"),
  ])

E("p311-18-cst-run-ddp", "scripts/run_ddp.sh", "explicit_replacement",
  "torchrun multi-node launcher with NCCL tuning variables",
  [
      C("MASTER_ADDR=10.0.0.1 NNODES=2 NODE_RANK=1", "import_torch_npu", "npu_only_addition", True,
        SET_ENV + "  # before set -u: set_env.sh references unset variables",
        "CANN env must be sourced; put it before `set -euo pipefail` because set_env.sh trips over unbound variables"),
      C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $((GPUS_PER_NODE - 1)))}", "env_var",
        "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-$(seq -s, 0 $((GPUS_PER_NODE - 1)))}",
        "ignored by the Ascend runtime"),
      C("export NCCL_DEBUG=${NCCL_DEBUG:-WARN}", "env_var", "replace", False,
        "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}", "log level only"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "no effect under HCCL"),
      C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}", "env_var", "replace", False,
        "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
        "HCCL ignores it and picks a host NIC by its own order; matters only when that pick is wrong (multi-node)"),
      C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NVLink tuning, no effect under HCCL"),
      C("export TORCH_NCCL_BLOCKING_WAIT=1", "env_var", "removal", False, None, "NCCL-only knob"),
      C('echo "[$(hostname)] node ${NODE_RANK}/${NNODES}, ${GPUS_PER_NODE} GPUs, devices=${CUDA_VISIBLE_DEVICES}"',
        "env_var", "replace", True,
        'echo "[$(hostname)] node ${NODE_RANK}/${NNODES}, ${GPUS_PER_NODE} NPUs, devices=${ASCEND_RT_VISIBLE_DEVICES}"',
        "script runs under set -u: once the export is renamed, ${CUDA_VISIBLE_DEVICES} is unbound and aborts the launch"),
  ])

# ---------------------------------------------------------------------------------------------
# SoundSpaces (audio-visual navigation, habitat-baselines style)
# ---------------------------------------------------------------------------------------------
E("p311-19-ss-ppo-trainer", "ss_baselines/av_nav/ppo/ppo_trainer.py", "device_branch_or_abstraction",
  "SoundSpaces ss_baselines/av_nav/ppo/ppo_trainer.py (habitat-baselines PPOTrainer)",
  [
      C("=if torch.cuda.is_available()", "torch_cuda_api", "add_branch", True,
        'if torch.cuda.is_available() else torch.device("npu", self.config.TORCH_GPU_ID) if torch.npu.is_available()',
        "CUDA-or-CPU choice: on an NPU host the policy silently trains on the CPU; add an NPU alternative"),
      C('self.device = torch.device("cuda", config.TORCH_GPU_ID) if torch.cuda.is_available() else torch.device("cpu")',
        "device_type", "add_branch", True,
        'self.device = torch.device("cuda", config.TORCH_GPU_ID) if torch.cuda.is_available() else torch.device("npu", config.TORCH_GPU_ID) if torch.npu.is_available() else torch.device("cpu")',
        "evaluation silently on CPU otherwise"),
  ])

E("p311-20-ss-ddp-utils", "ss_baselines/common/ddp_utils.py", "explicit_replacement",
  "habitat-baselines / SoundSpaces ddp_utils.py (init_distrib_slurm, SLURM requeue)",
  [
      C('backend: str = "nccl",', "dist_backend", "replace", False, 'backend: str = "hccl",',
        "default only; the DD-PPO trainer passes RL.DDPPO.distrib_backend from the YAML"),
      C('if "NCCL_SOCKET_IFNAME" not in os.environ:', "env_var", "replace", False,
        'if "HCCL_SOCKET_IFNAME" not in os.environ:', "NIC hint for HCCL; only matters multi-node"),
      C('os.environ["NCCL_SOCKET_IFNAME"] = get_ifname()', "env_var", "replace", False,
        'os.environ["HCCL_SOCKET_IFNAME"] = get_ifname()', "as above"),
  ])

E("p311-21-ss-ddppo-trainer", "ss_baselines/av_nav/ddppo/ddppo_trainer.py", "device_branch_or_abstraction",
  "SoundSpaces / habitat-baselines DD-PPO trainer",
  [
      C("torch.cuda.set_device(self.device)", "torch_cuda_api", "add_branch", True,
        'elif torch.npu.is_available(): self.device = torch.device("npu", self.local_rank); torch.npu.set_device(self.device)',
        "CUDA-or-CPU branch: every DD-PPO worker silently uses the CPU on an NPU host; NPU branch goes after the CUDA block"),
      C("torch.cuda.memory_allocated(self.device) / 2 ** 20,", "torch_cuda_api", "replace", False,
        "(torch.npu if self.device.type == 'npu' else torch.cuda).memory_allocated(self.device) / 2 ** 20,",
        "logging only (returns 0)"),
      C("torch.cuda.memory_reserved(self.device) / 2 ** 20,", "torch_cuda_api", "replace", False,
        "(torch.npu if self.device.type == 'npu' else torch.cuda).memory_reserved(self.device) / 2 ** 20,",
        "logging only (returns 0)"),
  ])

E("p311-22-ss-ddppo-yaml", "ss_baselines/av_nav/config/audionav/replica/train_telephone/audiogoal_depth_ddppo.yaml",
  "explicit_replacement", "SoundSpaces DD-PPO AudioGoal config",
  [
      C("distrib_backend: NCCL", "dist_backend", "replace", True, "distrib_backend: HCCL",
        "passed to init_process_group (lower-cased): NCCL is unavailable on NPU"),
  ])

# ---------------------------------------------------------------------------------------------
# Binaural speech synthesis (meta BinauralSpeechSynthesis style)
# ---------------------------------------------------------------------------------------------
E("p311-23-binaural-trainer", "src/trainer.py", "explicit_replacement",
  "BinauralSpeechSynthesis src/trainer.py (DataParallel over num_gpus)",
  [
      C("pin_memory=True, drop_last=True)", "pin_memory", "replace", False,
        "pin_memory=True, pin_memory_device='npu', drop_last=True)", "perf only, unconfirmed"),
      C("net = net.cuda()", "tensor_to_device", "replace", True, "net = net.npu()", ".cuda() raises"),
      C("self.net = th.nn.DataParallel(net, gpus)", "distributed_framework", "replace", True, "self.net = net",
        "nn.DataParallel is unsupported on NPU: single device (or DDP)"),
      C('self.net.module.save(self.config["artifacts_dir"], suffix)', "distributed_framework", "replace", True,
        'self.net.save(self.config["artifacts_dir"], suffix)',
        "follows from dropping DataParallel: the bare module has no .module"),
      C('mem_str = f"[max mem {th.cuda.max_memory_allocated() / 2**30:.1f}G]"', "torch_cuda_api", "replace", False,
        'mem_str = f"[max mem {th.npu.max_memory_allocated() / 2**30:.1f}G]"', "logging only"),
      C("mono, binaural, quats = mono.cuda(), binaural.cuda(), quats.cuda()", "tensor_to_device", "replace", True,
        "mono, binaural, quats = mono.npu(), binaural.npu(), quats.npu()", ".cuda() raises"),
  ])

E("p311-24-binaural-train", "train.py", "explicit_replacement",
  "BinauralSpeechSynthesis train.py (config dict, --num_gpus)",
  [
      C("=import argparse", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script never imports torch itself; torch_npu must be loaded before Trainer calls .npu()"),
  ])

E("p311-25-binaural-evaluate", "evaluate.py", "explicit_replacement",
  "BinauralSpeechSynthesis evaluate.py (chunked forwarding on the GPU)",
  [
      C("=import torch as th", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("net.eval().cuda()", "tensor_to_device", "replace", True, "net.eval().npu()", ".cuda() raises"),
      C("mono, view = mono.cuda(), view.cuda()", "tensor_to_device", "replace", True,
        "mono, view = mono.npu(), view.npu()", ".cuda() raises"),
      C("with th.no_grad(), th.cuda.amp.autocast(enabled=args.fp16):", "amp", "replace", True,
        "with th.no_grad(), th.npu.amp.autocast(enabled=args.fp16):",
        "--fp16 silently runs fp32 (torch.cuda.amp disables itself without CUDA)"),
      C("th.cuda.empty_cache()", "torch_cuda_api", "replace", False, "th.npu.empty_cache()", "no-op; optional"),
  ])

E("p311-26-binaural-utils", "src/utils.py", "explicit_replacement",
  "BinauralSpeechSynthesis src/utils.py (Net save/load, NewbobAdam, FourierTransform)",
  [
      C("=self.cuda()", "tensor_to_device", "replace", True, "self.npu()", ".cuda() raises"),
      C('self.to(th.device("cuda"))', "device_type", "replace", True, 'self.to(th.device("npu"))', "device type"),
      C("hann = hann.cuda() if audio.is_cuda else hann", "tensor_to_device", "replace", True,
        "hann = hann.to(audio.device)",
        "audio.is_cuda is False for NPU tensors: the window stays on the CPU and th.stft fails with a device mismatch"),
      C("if spec.is_cuda:", "device_type", "replace", True, "if spec.device.type != 'cpu':",
        "False for NPU tensors: the mel matrix stays on the CPU and the matmul below fails with a device mismatch"),
      C("mel_warping = mel_warping.cuda()", "tensor_to_device", "replace", True,
        "mel_warping = mel_warping.to(spec.device)", ".cuda() raises"),
  ])

E("p311-27-binaural-warping", "src/warping.py", "kernel_rewrite",
  "BinauralSpeechSynthesis src/warping.py with an optional fused CUDA warping kernel",
  [
      C("import warp_cuda  # compiled extension from setup.py", "custom_cuda_extension", "removal", False, None,
        "nvcc-built extension cannot exist on NPU; ImportError is already caught"),
      C("return warp_cuda.forward(input.contiguous(), warpfield.contiguous())", "custom_cuda_extension", "replace",
        False, "return warp_npu.forward(input.contiguous(), warpfield.contiguous())",
        "CUDA kernel call site; unreachable on NPU (is_cuda False) so the gather path runs. Ascend C port is perf only"),
      C("grad_input, grad_warpfield = warp_cuda.backward(grad_output.contiguous(), input, warpfield)",
        "custom_cuda_extension", "replace", False,
        "grad_input, grad_warpfield = warp_npu.backward(grad_output.contiguous(), input, warpfield)",
        "as above (backward)"),
      C("warp_cuda = _load_warp_cuda_jit()", "custom_cuda_extension", "replace", True,
        "warp_cuda = None  # no nvcc on Ascend: torch gather/scatter path (or an Ascend C op via OpPlugin)",
        "use_cuda_warp=True JIT-compiles a .cu file: no nvcc, and cpp_extension.load is x on A2/A3"),
  ])

E("p311-28-binaural-setup", "setup.py", "kernel_rewrite",
  "setup.py building the warping kernel with torch.utils.cpp_extension.CUDAExtension",
  [
      C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
        "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
        "CUDAExtension needs CUDA_HOME/nvcc: pip install fails on an NPU host"),
      C('os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "7.0;7.5;8.0;8.6")', "env_var", "removal", False, None,
        "CUDA arch list, meaningless on NPU"),
      C("CUDAExtension(", "custom_cuda_extension", "replace", True, "NpuExtension(", "see import"),
      C('sources=["csrc/warp_cuda.cpp", "csrc/warp_cuda_kernel.cu"],', "custom_cuda_extension", "replace", True,
        'sources=["csrc/warp_npu.cpp"],', ".cu sources cannot be compiled; kernel rewritten in Ascend C"),
      C('"nvcc": ["-O3", "--use_fast_math", "-lineinfo"],', "custom_cuda_extension", "removal", False, None,
        "nvcc flags unused once the .cu source is gone"),
  ])

# ---------------------------------------------------------------------------------------------
# gpuRIR-based synthetic data generation
# ---------------------------------------------------------------------------------------------
E("p311-29-gpurir-synth", "data_synthesis/synthesize_seld_mixtures.py", "kernel_rewrite",
  "SELD data synthesis with gpuRIR (GPU image-source RIRs) and pynvml GPU picking",
  [
      C("os.environ['CUDA_VISIBLE_DEVICES'] = str(gpu_id)", "env_var", "removal", False, None,
        "only steered gpuRIR's device; the CPU simulation needs no device"),
      C("=import gpuRIR", "custom_cuda_extension", "replace", True, "import pyroomacoustics as pra",
        "gpuRIR is a CUDA library (nvcc build); not installable on an NPU host"),
      C("gpuRIR.activateMixedPrecision(False)", "custom_cuda_extension", "removal", True, None, "gpuRIR call"),
      C("gpuRIR.activateLUT(True)", "custom_cuda_extension", "removal", True, None, "gpuRIR call"),
      C("beta = gpuRIR.beta_SabineEstimation(room_sz, t60)", "custom_cuda_extension", "replace", True,
        "e_absorption, max_order = pra.inverse_sabine(t60, room_sz)", "gpuRIR helper"),
      C("tdiff = gpuRIR.att2t_SabineEstimator(15.0, t60)", "custom_cuda_extension", "removal", True, None,
        "gpuRIR helper"),
      C("tmax = gpuRIR.att2t_SabineEstimator(60.0, t60)", "custom_cuda_extension", "removal", True, None,
        "gpuRIR helper"),
      C("nb_img = gpuRIR.t2n(tdiff, room_sz)", "custom_cuda_extension", "removal", True, None, "gpuRIR helper"),
      C("rirs = gpuRIR.simulateRIR(room_sz, beta, traj, pos_rcv, nb_img, tmax, FS, Tdiff=tdiff, mic_pattern='omni')",
        "custom_cuda_extension", "replace", True,
        "rirs = simulate_rirs_pra(room_sz, e_absorption, max_order, traj, pos_rcv, FS)",
        "CUDA RIR simulation replaced by pyroomacoustics (CPU)"),
      C("spatial = gpuRIR.simulateTrajectory(sig, rirs, timestamps=timestamps, fs=FS)  # (T', 4)",
        "custom_cuda_extension", "replace", True, "spatial = convolve_trajectory(sig, rirs, timestamps, FS)  # (T', 4)",
        "CUDA trajectory convolution; fftconvolve (numpy, or torch on NPU)"),
      C("gpus = [pick_free_gpu()]", "torch_cuda_api", "replace", True, "gpus = [0]",
        "NVML (nvidia-ml-py) cannot initialise on an NPU host (--auto_gpu); nothing to pick in the CPU port"),
  ])

# ---------------------------------------------------------------------------------------------
# Packaging
# ---------------------------------------------------------------------------------------------
E("p311-30-requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt pinning +cu118 torch wheels, gpuRIR, cupy-cuda11x",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu118", "custom_cuda_extension", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; torch_npu pairs with CPU torch (x86: CPU index, aarch64: PyPI)"),
      C("torch==2.1.2+cu118", "custom_cuda_extension", "replace", True, "torch==2.1.0",
        "CUDA build; torch must match a torch-npu release (2.1.0 <-> 2.1.0.postN)"),
      C("torchaudio==2.1.2+cu118", "custom_cuda_extension", "replace", True, "torchaudio==2.1.0",
        "CUDA build; must match the torch pin"),
      C("numpy>=1.23,<2.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "torch-npu pin (placed here because the torch/torchaudio lines are themselves edited)"),
      C("gpuRIR @ git+https://github.com/DavidDiazGuerra/gpuRIR@v1.2.0", "custom_cuda_extension", "replace", True,
        "pyroomacoustics>=0.7.3", "gpuRIR builds CUDA kernels with nvcc: pip install fails"),
      C("nvidia-ml-py>=12.535", "custom_cuda_extension", "removal", False, None, "installs, but NVML is useless on NPU"),
      C("cupy-cuda11x>=12.2", "custom_cuda_extension", "removal", False, None,
        "optional CUDA-only package (no Ascend support); installs but cannot run"),
  ])

E("p311-31-dockerfile", "docker/Dockerfile", "explicit_replacement",
  "Dockerfile for an EINV2/SALSA training image on nvidia/cuda",
  [
      C("FROM nvidia/cuda:11.7.1-cudnn8-devel-ubuntu20.04", "custom_cuda_extension", "replace", True,
        "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
        "CUDA base image; a CANN image provides the Ascend toolkit and its environment"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "NVIDIA container runtime knob; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES at run time"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "NVIDIA runtime knob"),
      C('ENV TORCH_CUDA_ARCH_LIST="7.0 7.5 8.0 8.6+PTX"', "env_var", "removal", False, None, "CUDA arch list"),
      C("RUN pip install --no-cache-dir torch==1.13.1+cu117 torchaudio==0.13.1+cu117 \\", "custom_cuda_extension",
        "replace", True, "RUN pip install --no-cache-dir torch==2.1.0 torch-npu==2.1.0.post12 torchaudio==2.1.0 \\",
        "CUDA builds; torch 1.13 has no torch_npu release; adds the torch-npu pin"),
      C("--extra-index-url https://download.pytorch.org/whl/cu117", "custom_cuda_extension", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index"),
      C("RUN pip install --no-cache-dir https://github.com/DavidDiazGuerra/gpuRIR/zipball/master",
        "custom_cuda_extension", "replace", True, "RUN pip install --no-cache-dir pyroomacoustics",
        "gpuRIR needs nvcc at build time"),
      C("ENV CUDA_VISIBLE_DEVICES=0", "env_var", "replace", True, "ENV ASCEND_RT_VISIBLE_DEVICES=0",
        "ignored by the Ascend runtime"),
  ])

E("p311-32-environment-yml", "environment.yml", "explicit_replacement",
  "SoundSpaces conda environment.yml (pytorch + cudatoolkit + headless habitat-sim)",
  [
      C("- nvidia", "custom_cuda_extension", "removal", False, None, "CUDA package channel, unused after the port"),
      C("- pytorch=1.12.1", "custom_cuda_extension", "replace", True, "- pytorch=2.1.0",
        "conda resolves a CUDA build next to cudatoolkit; 1.12 has no torch_npu release"),
      C("- torchvision=0.13.1", "custom_cuda_extension", "replace", True, "- torchvision=0.16.0",
        "must follow the torch pin (0.13.1 requires pytorch 1.12.1)"),
      C("- torchaudio=0.12.1", "custom_cuda_extension", "replace", True, "- torchaudio=2.1.0",
        "must follow the torch pin"),
      C("- cudatoolkit=11.3", "custom_cuda_extension", "replace", True, "- cpuonly",
        "CUDA runtime; force CPU builds of pytorch so torch-npu can sit on top"),
      C("- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12", "torch-npu pin"),
  ])
