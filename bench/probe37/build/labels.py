"""Labels for probe37 (hand-written synthetic upstream files; see ../README.md).

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

IMPORT_NOTE = ("module calls torch.npu.* / uses the 'npu' device after the port; explicit import recommended "
               "(autoload only since torch_npu 2.5.1)")

# ---------------------------------------------------------------- ESPnet (v1) ----------------------------------

E("espnet1_asr_train", "espnet/bin/asr_train.py", "explicit_replacement",
  "espnet/espnet espnet/bin/asr_train.py (ESPnet1 entry: --ngpu auto-detection, --ctc_type)", [
    C('cvd = os.environ.get("CUDA_VISIBLE_DEVICES")', "env_var", R, True,
      'cvd = os.environ.get("ASCEND_RT_VISIBLE_DEVICES")',
      "device count comes from the CUDA visibility variable; on an NPU host it is unset, so ngpu falls to "
      "the nvidia-smi probe; the runtime's own variable is ASCEND_RT_VISIBLE_DEVICES"),
    C('["nvidia-smi", "-L"]', "torch_cuda_api", R, True,
      "ngpu = torch_npu.npu.device_count()  # or parse `npu-smi info -l`",
      "nvidia-smi is missing on an NPU host -> FileNotFoundError -> ngpu=0 -> the job silently trains on CPU"),
    C('default="warpctc",', "custom_cuda_extension", R, True, 'default="builtin",',
      "warp-ctc is an nvcc-built extension with no NPU build; builtin torch.nn.CTCLoss is supported "
      "(fp32 input only per Ascend's 2.7.1 table)"),
])

E("espnet1_asr_pytorch", "espnet/asr/pytorch_backend/asr.py", "explicit_replacement",
  "espnet/espnet espnet/asr/pytorch_backend/asr.py (ESPnet1 chainer-style trainer, apex amp, data_parallel)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("=data_parallel(self.model, x, range(self.ngpu))", "distributed_framework", R, True,
      "self.model(*x)  # one process per NPU (DDP) instead of single-process data_parallel",
      "torch.nn.DataParallel / data_parallel is marked unsupported on Ascend (2.7.1 table, msFmkTransplt)"),
    C("data_parallel(self.model, x, range(self.ngpu)).mean() / self.accum_grad", "distributed_framework", R,
      True, "self.model(*x).mean() / self.accum_grad",
      "same as the evaluator: data_parallel is unsupported on NPU; move multi-device training to DDP/HCCL"),
    C("=from apex import amp", "amp", R, True, "from torch_npu.npu import amp as npu_amp",
      "NVIDIA apex amp keys its casts on CUDA tensors; use torch.npu.amp (or install Ascend's apex patch)"),
    C("with amp.scale_loss(loss, opt) as scaled_loss:", "amp", R, True,
      "self.scaler.scale(loss).backward()  # torch.npu.amp.GradScaler",
      "apex loss scaling -> torch.npu.amp.GradScaler (scale/step/update)"),
    C('device = torch.device("cuda" if args.ngpu > 0 else "cpu")', "device_type", R, True,
      'device = torch.device("npu" if args.ngpu > 0 else "cpu")', "hard-coded CUDA device"),
    C("from apex import amp  # noqa: F811", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler()",
      "--train-dtype O0..O3 selects NVIDIA apex; replace by torch.npu.amp autocast + GradScaler"),
    C("model, optimizer.optimizer = amp.initialize(", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler()  # no model/optimizer patching",
      "apex.amp.initialize patches CUDA casts; no effect (or failure) for NPU tensors"),
    C("model, optimizer = amp.initialize(", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler()",
      "same as above for the non-noam optimizers"),
    C("optimizer = torch.optim.Adadelta(", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdadelta(",
      "performance only: NpuFusedAdadelta is the tensor-fused variant (msFmkTransplt advice)"),
    C("optimizer = torch.optim.Adam(model.parameters(), weight_decay=args.weight_decay)", "fused_optimizer", R,
      False, "optimizer = torch_npu.optim.NpuFusedAdam(model.parameters(), weight_decay=args.weight_decay)",
      "performance only"),
])

E("espnet1_ctc", "espnet/nets/pytorch_backend/ctc.py", "explicit_replacement",
  "espnet/espnet espnet/nets/pytorch_backend/ctc.py (builtin / warpctc / cudnnctc / gtnctc CTC)", [
    C("import warpctc_pytorch as warp_ctc", "custom_cuda_extension", R, True,
      'self.ctc_type = "builtin"  # warpctc_pytorch has no NPU build',
      "reached with the recipe's default --ctc_type warpctc; the extension cannot be built on an NPU host"),
    C("self.ctc_loss = warp_ctc.CTCLoss(size_average=True, reduce=reduce)", "custom_cuda_extension", R, True,
      'self.ctc_loss = torch.nn.CTCLoss(reduction="sum" if reduce else "none", zero_infinity=True)',
      "replace the warp-ctc loss object by the builtin CTCLoss"),
])

E("espnet1_rnn_encoders", "espnet/nets/pytorch_backend/rnn/encoders.py", "explicit_replacement",
  "espnet/espnet espnet/nets/pytorch_backend/rnn/encoders.py (VGG2L + BLSTMP encoder with packed sequences)", [
    C("xs_pack = pack_padded_sequence(xs_pad, ilens.cpu(), batch_first=True)", "unsupported_op_workaround", R,
      True, "ys, states = rnn(xs_pad, hx=...)  # padded input + length mask instead of PackedSequence",
      "pack_padded_sequence is marked unsupported (2.7.1 table and msFmkTransplt list); failure mode "
      "(error vs CPU fallback) unconfirmed"),
    C("ys_pad, ilens = pad_packed_sequence(ys, batch_first=True)", "unsupported_op_workaround", R, True,
      "ys_pad = ys  # already padded; keep ilens",
      "pad_packed_sequence is marked unsupported"),
    C("=rnn.flatten_parameters()", "unsupported_op_workaround", X, False, None,
      "RNNBase.flatten_parameters is in msFmkTransplt's unsupported list; it returns early for non-CUDA "
      "weights, so it is a no-op rather than a failure (unconfirmed)"),
    C("xs_pack = pack_padded_sequence(xs_pad, ilens.cpu(), batch_first=True, enforce_sorted=True)",
      "unsupported_op_workaround", R, True, "ys, states = self.nbrnn(xs_pad, hx=prev_state)",
      "pack_padded_sequence unsupported on Ascend"),
    C("self.nbrnn.flatten_parameters()", "unsupported_op_workaround", X, False, None,
      "no-op off CUDA; listed unsupported by msFmkTransplt"),
    C("ys_pad, olens = pad_packed_sequence(ys, batch_first=True)", "unsupported_op_workaround", R, True,
      "ys_pad, olens = ys, ilens", "pad_packed_sequence unsupported on Ascend"),
    C("else torch.nn.GRU(idim, cdim, elayers, batch_first=True, dropout=dropout, bidirectional=bidir)",
      "unsupported_op_workaround", R, True,
      "else StackedGRU(idim, cdim, elayers, dropout, bidir)  # single-layer GRUs + nn.Dropout between them",
      "Ascend's 2.7.1 table: nn.GRU does not support the dropout argument"),
])

E("espnet_attention", "espnet/nets/pytorch_backend/transformer/attention.py", "explicit_replacement",
  "espnet/espnet transformer/attention.py (MHA with optional flash_attn and SDPA, RelPosition MHA)", [
    C("with torch.backends.cuda.sdp_kernel(", "attention_kernel", R, True,
      "x = F.scaled_dot_product_attention(  # no backend context; SDPA dispatches to NPU FA",
      "torch.backends.cuda.sdp_kernel is marked unsupported on Ascend (2.7.1 table, msFmkTransplt)"),
])

# ---------------------------------------------------------------- ESPnet2 --------------------------------------

E("espnet2_trainer", "espnet2/train/trainer.py", "device_branch_or_abstraction",
  "espnet/espnet espnet2/train/trainer.py (Trainer.run / train_one_epoch with torch.cuda.amp)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("from torch.cuda.amp import GradScaler, autocast", "amp", R, True,
      "from torch_npu.npu.amp import GradScaler, autocast",
      "CUDA autocast is inactive for NPU tensors and the CUDA GradScaler does not see them: --use_amp would "
      "silently train fp32 without loss scaling"),
    C('map_location=f"cuda:{torch.cuda.current_device()}" if ngpu > 0 else "cpu",', "torch_cuda_api", R, True,
      'map_location=f"npu:{torch.npu.current_device()}" if ngpu > 0 else "cpu",',
      "torch.cuda.current_device() needs a CUDA device"),
    C("[torch.cuda.current_device()]", "torch_cuda_api", R, True, "[torch.npu.current_device()]",
      "DDP device_ids from the CUDA runtime"),
    C("=torch.cuda.current_device()", "torch_cuda_api", R, True, "torch.npu.current_device()",
      "DDP output_device from the CUDA runtime"),
    C("dp_model = torch.nn.parallel.DataParallel(", "distributed_framework", R, True,
      "raise RuntimeError('use --multiprocessing_distributed true (DDP/HCCL) for ngpu > 1 on NPU')",
      "nn.DataParallel is unsupported on Ascend; single-process multi-device mode must become DDP"),
    C('=iterator_stop = torch.tensor(0).to("cuda" if ngpu > 0 else "cpu")', "tensor_to_device", R, True,
      'iterator_stop = torch.tensor(0).to("npu" if ngpu > 0 else "cpu")',
      "stop flag all-reduced over HCCL must live on the NPU"),
    C('=batch = to_device(batch, "cuda" if ngpu > 0 else "cpu")', "tensor_to_device", R, True,
      'batch = to_device(batch, "npu" if ngpu > 0 else "cpu")', "hard-coded CUDA device for the batch"),
    C("if torch.cuda.is_initialized():", "torch_cuda_api", R, False, "if torch.npu.is_initialized():",
      "memory statistic for the log only; False on an NPU host, so the value is silently missing"),
    C('{"gpu_max_cached_mem_GB": torch.cuda.max_memory_reserved() / 2**30}', "torch_cuda_api", R, False,
      '{"gpu_max_cached_mem_GB": torch.npu.max_memory_reserved() / 2**30}', "logging only"),
    C('iterator_stop = torch.tensor(0).to("cuda" if ngpu > 0 else "cpu")  # for DDP', "tensor_to_device", R,
      True, 'iterator_stop = torch.tensor(0).to("npu" if ngpu > 0 else "cpu")', "validation stop flag"),
    C('batch = to_device(batch, "cuda" if ngpu > 0 else "cpu", non_blocking=True)', "tensor_to_device", R,
      True, 'batch = to_device(batch, "npu" if ngpu > 0 else "cpu", non_blocking=True)',
      "validation batch device"),
])

E("espnet2_distributed_utils", "espnet2/train/distributed_utils.py", "device_branch_or_abstraction",
  "espnet/espnet espnet2/train/distributed_utils.py (DistributedOption, launcher/env resolution)", [
    C("=import torch.distributed", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('dist_backend: str = "nccl"', "dist_backend", R, False, 'dist_backend: str = "hccl"',
      "dataclass default is overwritten by build_dataclass from the --dist_backend argument (abs_task.py), "
      "changed for consistency only"),
    C('=if "CUDA_VISIBLE_DEVICES" in os.environ:', "env_var", R, False,
      'if "ASCEND_RT_VISIBLE_DEVICES" in os.environ:', "sanity check only; skipped on an NPU host"),
    C('=cvd = os.environ["CUDA_VISIBLE_DEVICES"]', "env_var", R, False,
      'cvd = os.environ["ASCEND_RT_VISIBLE_DEVICES"]', "sanity check only"),
    C('os.environ.setdefault("NCCL_DEBUG", "INFO")', "env_var", X, False, None,
      "no effect with HCCL; HCCL/CANN logging is configured separately (ASCEND_GLOBAL_LOG_LEVEL)"),
    C('os.environ.setdefault("NCCL_BLOCKING_WAIT", "1")', "env_var", R, False,
      'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
      "no effect with HCCL; the HCCL watchdog variable is the nearest equivalent (unconfirmed equivalence)"),
    C("torch.cuda.set_device(self.local_rank)", "torch_cuda_api", R, True,
      "torch.npu.set_device(self.local_rank)", "needs a CUDA device; every rank must pin its own NPU"),
    C('elif "CUDA_VISIBLE_DEVICES" in os.environ:', "env_var", R, False,
      'elif "ASCEND_RT_VISIBLE_DEVICES" in os.environ:',
      "LOCAL_RANK inferred from a one-device visibility mask (queue systems); only matters when the scheduler "
      "sets the per-process visibility variable"),
    C('cvd = os.environ["CUDA_VISIBLE_DEVICES"].split(",")', "env_var", R, False,
      'cvd = os.environ["ASCEND_RT_VISIBLE_DEVICES"].split(",")', "same path as above"),
    C('return int(os.environ.pop("CUDA_VISIBLE_DEVICES"))', "env_var", R, False,
      'return int(os.environ.pop("ASCEND_RT_VISIBLE_DEVICES"))', "same path as above"),
])

E("espnet2_conformer_encoder", "espnet2/asr/encoder/conformer_encoder.py", "explicit_replacement",
  "espnet/espnet espnet2/asr/encoder/conformer_encoder.py (device-agnostic; no change needed)", []),

E("espnet2_abs_task", "espnet2/tasks/abs_task.py", "device_branch_or_abstraction",
  "espnet/espnet espnet2/tasks/abs_task.py (argument parser, optimizer table, main_worker)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("adam=torch.optim.Adam,", "fused_optimizer", R, False, "adam=torch_npu.optim.NpuFusedAdam,",
      "performance only"),
    C("adamw=torch.optim.AdamW,", "fused_optimizer", R, False, "adamw=torch_npu.optim.NpuFusedAdamW,",
      "performance only (msFmkTransplt notes ~70% more memory for the fused AdamW)"),
    C('default="nccl",', "dist_backend", R, True, 'default="hccl",',
      "the --dist_backend default is what reaches init_process_group; NCCL does not exist on NPU"),
    C('device="cuda" if args.ngpu > 0 else "cpu",', "device_type", R, True,
      'device="npu" if args.ngpu > 0 else "cpu",', "hard-coded CUDA device for the model"),
    C('map_location=f"cuda:{torch.cuda.current_device()}"', "torch_cuda_api", R, True,
      'map_location=f"npu:{torch.npu.current_device()}"', "pretrained-parameter loading via the CUDA runtime"),
])

E("espnet2_run_sh", "egs2/librispeech_100/asr1/run.sh", "explicit_replacement",
  "ESPnet2 egs2 asr.sh/run.sh recipe (stages, espnet2.bin.launch, decoding)", [
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", R, True, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "device pinning uses the CUDA variable; the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES (CUDA_VISIBLE_DEVICES "
      "being ignored is inferred, not documented)"),
    C("export NCCL_IB_DISABLE=1", "env_var", X, False, None, "NCCL-only tuning; no effect with HCCL"),
    C('n_visible=$(nvidia-smi -L | wc -l)', "torch_cuda_api", R, True, "n_visible=$(npu-smi info -l | grep -c 'NPU ID')",
      "nvidia-smi is missing on an NPU host -> 0 visible -> the recipe exits before training (npu-smi output "
      "format per host-formats notes; the grep is unconfirmed)"),
    C("--dist_backend nccl \\", "dist_backend", R, True, "--dist_backend hccl \\",
      "explicit NCCL backend for DDP"),
])

E("espnet_path_sh", "egs2/librispeech_100/asr1/path.sh", "explicit_replacement",
  "ESPnet egs2 TEMPLATE path.sh (python env, NCCL_SOCKET_IFNAME, CUDA paths)", [
    C('. "${MAIN_ROOT}"/tools/extra_path.sh', "env_var", A, True,
      "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u",
      "without the CANN environment `import torch_npu` fails (libhccl.so not found); run.sh uses `set -u`, "
      "under which set_env.sh is reported to fail, hence the set +u guard"),
    C('export NCCL_SOCKET_IFNAME="^lo,docker,virbr,vmnet,vboxnet"', "env_var", R, False,
      'export HCCL_SOCKET_IFNAME="^lo,docker,virbr,vmnet,vboxnet"',
      "HCCL reads HCCL_SOCKET_IFNAME (same ^prefix exclusion syntax); matters for multi-node root-info init"),
    C("export CUDA_HOME=/usr/local/cuda", "env_var", X, False, None, "no CUDA toolkit on an NPU host; harmless"),
    C("export PATH=${CUDA_HOME}/bin:${PATH}", "env_var", X, False, None, "harmless"),
    C("export LD_LIBRARY_PATH=${CUDA_HOME}/lib64", "env_var", X, False, None, "harmless"),
    C("export CUDA_LAUNCH_BLOCKING=0", "env_var", R, False, "export ASCEND_LAUNCH_BLOCKING=0",
      "debug switch; the NPU equivalent is ASCEND_LAUNCH_BLOCKING"),
])

# ---------------------------------------------------------------- fairseq --------------------------------------

E("fairseq_train", "fairseq_cli/train.py", "device_branch_or_abstraction",
  "facebookresearch/fairseq fairseq_cli/train.py (hydra/omegaconf entry, --profile)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script: load the NPU backend"),
    C("with torch.cuda.profiler.profile():", "torch_cuda_api", R, True,
      "with torch_npu.profiler.profile(activities=[torch_npu.profiler.ProfilerActivity.NPU]):",
      "--profile path: torch.cuda.profiler is not redirected by torch_npu and needs a CUDA build"),
    C("with torch.autograd.profiler.emit_nvtx():", "torch_cuda_api", X, False, None,
      "NVTX ranges have no NPU consumer; failure mode on a non-CUDA build unconfirmed"),
])

E("fairseq_trainer", "fairseq/trainer.py", "device_branch_or_abstraction",
  "facebookresearch/fairseq fairseq/trainer.py (Trainer: device selection, train_step, OOM handling)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("self.cuda = torch.cuda.is_available() and not cfg.common.cpu and not self.tpu", "device_type", R, True,
      "self.cuda = torch.npu.is_available() and not cfg.common.cpu and not self.tpu",
      "False on an NPU host: the trainer silently runs on CPU"),
    C('self.device = torch.device("cuda")', "device_type", R, True, 'self.device = torch.device("npu")',
      "hard-coded CUDA device"),
    C("cfg.distributed_training.pipeline_devices[-1]", "device_type", R, False,
      'torch.device("npu", cfg.distributed_training.pipeline_devices[-1])',
      "an int device index means CUDA; pipeline model parallel only"),
    C("self._grad_norm_buf = torch.cuda.DoubleTensor(self.data_parallel_world_size)", "torch_cuda_api", R, True,
      "self._grad_norm_buf = torch.zeros(self.data_parallel_world_size, dtype=torch.float32, device=self.device)",
      "legacy CUDA tensor type; fp64 is also not an HCCL all_reduce dtype (2.7.1 table)"),
    C("if self.cuda and torch.cuda.get_device_capability(0)[0] < 7:", "device_capability_check", R, True,
      "if self.cuda and False:  # no compute-capability notion on NPU",
      "get_device_capability returns None on NPU unless TORCH_NPU_DEVICE_CAPABILITY is set -> None[0] "
      "TypeError once self.cuda is true"),
    C("if self.cuda and torch.cuda.get_device_capability(0)[0] >= 7:", "device_capability_check", R, True,
      "if self.cuda:", "same as above on the fp32 path"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
    C("torch.cuda.empty_cache()  # release cached blocks before retrying", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()", "OOM recovery; no-op without CUDA"),
    C("grad_norm = torch.tensor(0.0).cuda()", "tensor_to_device", R, True,
      "grad_norm = torch.tensor(0.0, device=self.device)", "fp16 overflow path: .cuda() fails on an NPU host"),
    C("gb_used = torch.cuda.max_memory_allocated() / 1024 / 1024 / 1024", "torch_cuda_api", R, False,
      "gb_used = torch.npu.max_memory_allocated() / 1024 / 1024 / 1024",
      "logging only: returns 0 without CUDA, so gb_free is wrong"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "reached every step once self.cuda is true; resolves the current CUDA device and fails"),
    C("torch.cuda.empty_cache()  # periodic, see --empty-cache-freq", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()", "silent no-op without CUDA"),
    C("total_norm = total_norm.cuda().float() ** 2", "tensor_to_device", R, False,
      "total_norm = total_norm.to(self.device).float() ** 2",
      "only with --ddp-backend=fully_sharded (fairscale FSDP, NPU support unconfirmed)"),
    C('if torch.cuda.is_available() and hasattr(torch.cuda, "memory_summary"):', "torch_cuda_api", R, False,
      'if torch.npu.is_available():', "OOM report only"),
    C("for device_idx in range(torch.cuda.device_count()):", "torch_cuda_api", R, False,
      "for device_idx in range(torch.npu.device_count()):", "OOM report only"),
    C("logger.warning(torch.cuda.memory_summary(device=device_idx))", "torch_cuda_api", R, False,
      "logger.warning(torch.npu.memory_summary(device=device_idx))", "OOM report only"),
])

E("fairseq_fp16_optimizer", "fairseq/optim/fp16_optimizer.py", "explicit_replacement",
  "facebookresearch/fairseq fairseq/optim/fp16_optimizer.py (FP16Optimizer with flat fp32 master params; "
  "device-agnostic)", []),

E("fairseq_utils", "fairseq/utils.py", "device_branch_or_abstraction",
  "facebookresearch/fairseq fairseq/utils.py (move_to_cuda, clip_grad_norm_, seeds, CudaEnvironment)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("device = device or torch.cuda.current_device()", "torch_cuda_api", R, True,
      "device = device or torch.npu.current_device()",
      "move_to_cuda is the trainer's batch transfer; the CUDA runtime call fails on an NPU host"),
    C("if torch.cuda.is_available():", "torch_cuda_api", R, True, "if torch.npu.is_available():",
      "without amp_C the norm reduction silently moves every per-parameter norm to the CPU on an NPU host"),
    C("=device = torch.cuda.current_device()", "torch_cuda_api", R, True, "device = torch.npu.current_device()",
      "reached once the branch above is ported"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(seed)",
      "lazily queued without CUDA, harmless; torch.manual_seed should already seed the registered npu "
      "backend (unconfirmed)"),
    C("cuda_rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", R, True,
      "npu_rng_state = torch.npu.get_rng_state()", "initialises CUDA and fails on an NPU host"),
    C("torch.cuda.set_rng_state(cuda_rng_state)", "torch_cuda_api", R, True,
      "torch.npu.set_rng_state(npu_rng_state)",
      "otherwise the NPU generator is never restored after the seeded block (queued CUDA call is a no-op)"),
    C("cur_device = torch.cuda.current_device()", "torch_cuda_api", R, True,
      "cur_device = torch.npu.current_device()", "CudaEnvironment is built whenever the trainer's device "
      "flag is true"),
    C('prop = torch.cuda.get_device_properties("cuda:{}".format(cur_device))', "torch_cuda_api", R, True,
      'prop = torch.npu.get_device_properties("npu:{}".format(cur_device))', "CUDA runtime + cuda: string"),
    C("self.major = prop.major", "device_capability_check", R, True, "self.major = getattr(prop, 'major', 0) or 0",
      "NPU device properties only carry name/total_memory/L2_cache_size/core counts; the {:2d} format in "
      "pretty_print_cuda_env_list then fails"),
    C("self.minor = prop.minor", "device_capability_check", R, True, "self.minor = getattr(prop, 'minor', 0) or 0",
      "same as major"),
])

E("fairseq_distributed_utils", "fairseq/distributed/utils.py", "device_branch_or_abstraction",
  "facebookresearch/fairseq fairseq/distributed/utils.py (init inference, spawn, all_gather_list, broadcast)", [
    C("=import torch.distributed as dist", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.device_count(), cfg.distributed_world_size", "torch_cuda_api", R, True,
      "torch.npu.device_count(), cfg.distributed_world_size", "0 on an NPU host -> no processes"),
    C("=torch.cuda.set_device(cfg.device_id)", "torch_cuda_api", R, True, "torch.npu.set_device(cfg.device_id)",
      "no-spawn launch (torchrun / slurm tasks) pins the CUDA device"),
    C("cfg.device_id = cfg.distributed_rank % torch.cuda.device_count()", "torch_cuda_api", R, True,
      "cfg.device_id = cfg.distributed_rank % torch.npu.device_count()", "modulo 0 -> ZeroDivisionError"),
    C("=gpus_per_node = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "gpus_per_node = torch.npu.device_count()", "slurm one-task-per-node: world size 0"),
    C("cfg.distributed_world_size <= torch.cuda.device_count()", "torch_cuda_api", R, True,
      "cfg.distributed_world_size <= torch.npu.device_count()", "single-node init asserts on 0 devices"),
    C('f"world size is {cfg.distributed_world_size} but have {torch.cuda.device_count()} available devices"',
      "torch_cuda_api", R, False,
      'f"world size is {cfg.distributed_world_size} but have {torch.npu.device_count()} available devices"',
      "assertion message only"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():",
      "warm-up all-reduce is skipped on an NPU host; the HCCL communicator is then created lazily (harmless)"),
    C("dist.all_reduce(torch.zeros(1).cuda())", "tensor_to_device", R, False,
      "dist.all_reduce(torch.zeros(1).npu())", "warm-up only"),
    C("if torch.cuda.is_available() and not cfg.common.cpu and not cfg.common.tpu:", "torch_cuda_api", R, True,
      "if torch.npu.is_available() and not cfg.common.cpu and not cfg.common.tpu:",
      "False on an NPU host: spawned ranks never pin their device and all land on npu:0"),
    C("torch.cuda.set_device(cfg.distributed_training.device_id)", "torch_cuda_api", R, True,
      "torch.npu.set_device(cfg.distributed_training.device_id)", "per-rank device pinning"),
    C("=torch.cuda.device_count(),", "torch_cuda_api", R, True, "torch.npu.device_count(),",
      "mp.spawn nprocs = 0 on an NPU host"),
    C("all_gather_list._buffer = torch.cuda.ByteTensor(buffer_size)", "torch_cuda_api", R, True,
      'all_gather_list._buffer = torch.zeros(buffer_size, dtype=torch.uint8, device="npu")',
      "legacy CUDA tensor type (uint8 is not in the 2.7.1 all_reduce dtype list either; may need int32, "
      "unconfirmed)"),
    C("all_gather_list._cpu_buffer = torch.ByteTensor(max_size).pin_memory()", "pin_memory", R, False,
      'all_gather_list._cpu_buffer = torch.ByteTensor(max_size).pin_memory(device="npu")',
      "bare pin_memory() pins for CUDA; whether torch_npu redirects it is unconfirmed"),
    C("cpu_data[k] = torch.tensor(t, dtype=torch.double)", "unsupported_op_workaround", R, True,
      "cpu_data[k] = torch.tensor(t, dtype=torch.float32)",
      "all_reduce on Ascend supports bf16/fp16/fp32/int32/int64/bool only (2.7.1 table): fp64 stats buffer fails"),
    C("cpu_data[k] = t.to(dtype=torch.double)", "unsupported_op_workaround", R, True,
      "cpu_data[k] = t.to(dtype=torch.float32)", "fp64 all_reduce unsupported on HCCL"),
    C("device_data[k] = t.to(dtype=torch.double)", "unsupported_op_workaround", R, True,
      "device_data[k] = t.to(dtype=torch.float32)", "fp64 all_reduce unsupported on HCCL"),
    C('if torch.distributed.get_backend(group) == "nccl":', "dist_backend", R, True,
      'if torch.distributed.get_backend(group) in ("nccl", "hccl"):',
      "backend-string comparison (not rewritten even by transfer_to_npu): with hccl the object is staged on "
      "CPU tensors, which HCCL cannot broadcast"),
    C('=dist_device = torch.device("cuda")', "device_type", R, True, 'dist_device = torch.device("npu")',
      "staging device for broadcast_object"),
    C('dist_device = torch.device("cuda") if backend == "nccl" else torch.device("cpu")', "dist_backend", R,
      True, 'dist_device = torch.device("npu") if backend == "hccl" else torch.device("cpu")',
      "same backend comparison in broadcast_tensors"),
])

E("fairseq_configs", "fairseq/dataclass/configs.py", "device_branch_or_abstraction",
  "facebookresearch/fairseq fairseq/dataclass/configs.py (CommonConfig, DistributedTrainingConfig)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "defaults call torch.npu.device_count() at import time after the port"),
    C("=default=max(1, torch.cuda.device_count()),", "torch_cuda_api", R, True,
      "default=max(1, torch.npu.device_count()),",
      "distributed_world_size defaults to 1 on an NPU host: multi-NPU training silently becomes single-device"),
    C("default=max(1, torch.cuda.device_count()),  # one process per visible GPU", "torch_cuda_api", R, True,
      "default=max(1, torch.npu.device_count()),", "number of processes to fork"),
    C('default="nccl", metadata={"help": "distributed backend"}', "dist_backend", R, True,
      'default="hccl", metadata={"help": "distributed backend"}', "NCCL backend default"),
    C("default=max(1, torch.cuda.device_count()),  # used by SlowMo only", "torch_cuda_api", R, False,
      "default=max(1, torch.npu.device_count()),", "SlowMo backend only"),
])

E("fairseq_mha", "fairseq/modules/multihead_attention.py", "explicit_replacement",
  "facebookresearch/fairseq fairseq/modules/multihead_attention.py (incremental decoding state, xformers hook)", [
    C("=class MultiheadAttention(nn.Module):", "npu_fused_op", R, False,
      "class MultiheadAttention(torch_npu.contrib.module.MultiheadAttention):  # or keep and use npu_fusion_attention",
      "msFmkTransplt's affinity list maps fairseq MultiheadAttention to torch_npu.contrib.module."
      "MultiheadAttention; performance only, signatures differ (unconfirmed drop-in)"),
    C("self.dropout_module = FairseqDropout(", "npu_fused_op", R, False,
      "self.dropout_module = NpuFairseqDropout(",
      "affinity list: FairseqDropout -> torch_npu.contrib NpuFairseqDropout/NpuCachedDropout; performance only"),
])

E("fairseq_generate", "fairseq_cli/generate.py", "device_branch_or_abstraction",
  "facebookresearch/fairseq fairseq_cli/generate.py (batched beam-search generation and scoring)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C("use_cuda = torch.cuda.is_available() and not cfg.common.cpu", "device_type", R, True,
      "use_cuda = torch.npu.is_available() and not cfg.common.cpu",
      "False on an NPU host: generation silently runs on CPU"),
    C("=model.cuda()", "tensor_to_device", R, True, "model.npu()", "model placement"),
])

E("fairseq_dynamicconv", "fairseq/modules/dynamic_convolution.py", "explicit_replacement",
  "facebookresearch/fairseq fairseq/modules/dynamic_convolution.py (optional CUDA layer with pure-PyTorch "
  "fallback)", []),

# ---------------------------------------------------------------- OpenNMT-py -----------------------------------

E("onmt_model_builder", "onmt/model_builder.py", "explicit_replacement",
  "OpenNMT/OpenNMT-py onmt/model_builder.py (build_base_model device selection, load_test_model)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda", gpu_id)', "device_type", R, True, 'device = torch.device("npu", gpu_id)',
      "hard-coded CUDA device"),
    C('device = torch.device("cuda")', "device_type", R, True, 'device = torch.device("npu")',
      "hard-coded CUDA device"),
])

E("onmt_distributed", "onmt/utils/distributed.py", "explicit_replacement",
  "OpenNMT/OpenNMT-py onmt/utils/distributed.py (multi_init, all_gather_list, spawned_train)", [
    C("=import torch.distributed", "import_torch_npu", A, True, "import torch_npu",
      "HCCL backend and torch.npu.* need torch_npu"),
    C("all_gather_list._in_buffer = torch.cuda.ByteTensor(max_size)", "torch_cuda_api", R, True,
      'all_gather_list._in_buffer = torch.zeros(max_size, dtype=torch.uint8, device="npu")',
      "legacy CUDA tensor type"),
    C("=torch.cuda.ByteTensor(max_size)", "torch_cuda_api", R, True,
      'torch.zeros(max_size, dtype=torch.uint8, device="npu")', "legacy CUDA tensor type (gather buffers)"),
    C("torch.distributed.all_gather(out_buffers, in_buffer.cuda())", "tensor_to_device", R, True,
      "torch.distributed.all_gather(out_buffers, in_buffer)", ".cuda() on an NPU host fails"),
    C("torch.cuda.set_device(device_id)", "torch_cuda_api", R, True, "torch.npu.set_device(device_id)",
      "each spawned process pins its device"),
])

E("onmt_optimizers", "onmt/utils/optimizers.py", "explicit_replacement",
  "OpenNMT/OpenNMT-py onmt/utils/optimizers.py (build_torch_optimizer, apex FusedAdam, GradScaler)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("optimizer = optim.Adam(", "fused_optimizer", R, False, "optimizer = torch_npu.optim.NpuFusedAdam(",
      "performance only"),
    C("optimizer = FusedAdam(params, lr=opt.learning_rate, betas=betas)", "fused_optimizer", R, True,
      "optimizer = torch_npu.optim.NpuFusedAdam(params, lr=opt.learning_rate, betas=betas)",
      "the shipped config selects optim fusedadam, whose constructor imports the CUDA-only fused_adam_cuda"),
    C("=import apex", "amp", X, False, None, "harmless once the FP16_Optimizer wrapper is gone"),
    C("optimizer = apex.contrib.optimizers.FP16_Optimizer(", "amp", R, True,
      "optimizer._fp16 = 'amp'  # torch.npu.amp.GradScaler path",
      "apex.contrib FP16_Optimizer relies on CUDA multi-tensor kernels"),
    C("from torch.cuda.amp import GradScaler", "amp", R, True, "from torch_npu.npu.amp import GradScaler",
      "the CUDA GradScaler does not scale NPU losses"),
    C('fused_adam_cuda = importlib.import_module("fused_adam_cuda")', "custom_cuda_extension", R, False,
      "raise RuntimeError('FusedAdam is CUDA-only; use NpuFusedAdam')",
      "unreached once the call site builds NpuFusedAdam"),
])

E("onmt_trainer", "onmt/trainer.py", "explicit_replacement",
  "OpenNMT/OpenNMT-py onmt/trainer.py (gradient accumulation, amp autocast, OOM skip)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("with torch.cuda.amp.autocast(enabled=self.optim.amp):  # F-prop through the model.", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=self.optim.amp):", "CUDA autocast is inactive for NPU tensors"),
    C("=with torch.cuda.amp.autocast(enabled=self.optim.amp):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=self.optim.amp):",
      "fp16 training silently runs without autocast on NPU"),
    C('if "CUDA out of memory" in trace_content:', "device_type", R, False,
      'if "out of memory" in trace_content:',
      "OOM batches are skipped only when the CUDA message matches; NPU OOM text differs (exact text unconfirmed)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
])

E("onmt_yaml", "config/wmt14_en_de.yaml", "explicit_replacement",
  "OpenNMT-py transformer WMT14 en-de training config (4 GPUs, fp16, fusedadam)", [
    C("gpu_ranks: [0, 1, 2, 3]", "dist_backend", A, True, 'gpu_backend: "hccl"',
      "OpenNMT's --gpu_backend defaults to nccl; set it in the config"),
    C('optim: "fusedadam"', "fused_optimizer", R, True, 'optim: "adam"',
      "fusedadam needs apex's CUDA extension (or map it to NpuFusedAdam in optimizers.py)"),
])

# ---------------------------------------------------------------- NeMo-style config -----------------------------

E("nemo_transducer_yaml", "examples/asr/conf/fastconformer/fast-conformer_transducer_bpe.yaml",
  "explicit_replacement", "NVIDIA NeMo FastConformer-Transducer BPE config (Lightning trainer section)", [
    C("use_cuda_graph_decoder: true", "torch_cuda_api", R, False, "use_cuda_graph_decoder: false",
      "CUDA-graph greedy decoder; expected to fall back when CUDA graphs are unavailable (unconfirmed)"),
    C('loss_name: "default"', "custom_cuda_extension", R, True, 'loss_name: "pytorch"',
      "default RNNT loss is the numba-CUDA warprnnt kernel; its CPU path cannot read NPU memory (unconfirmed "
      "failure mode); the pure-PyTorch loss runs on any device"),
    C("accelerator: gpu", "device_type", R, True, "accelerator: npu",
      "Lightning's gpu accelerator requires CUDA and raises on an NPU host; an NPU accelerator must be "
      "registered (Lightning has no built-in one - unconfirmed which plugin)"),
    C("strategy: ddp", "dist_backend", R, True,
      "strategy: {_target_: lightning.pytorch.strategies.DDPStrategy, process_group_backend: hccl}",
      "Lightning picks nccl only for CUDA and gloo otherwise; gloo cannot reduce NPU tensors"),
    C("precision: 16-mixed", "amp", R, False, "precision: bf16-mixed",
      "which autocast device Lightning uses depends on the NPU accelerator plugin (unconfirmed)"),
])

# ---------------------------------------------------------------- k2-free losses -------------------------------

E("transducer_loss_pytorch", "asr/losses/rnnt_pytorch.py", "explicit_replacement",
  "k2-free pure-PyTorch RNN-T loss as a custom autograd.Function (alpha/beta recursion, closed-form grad) "
  "+ fp32 CTC helper", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("@torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)", "amp", R, True,
      '@torch.amp.custom_fwd(device_type="npu", cast_inputs=torch.float32)',
      "cast_inputs is keyed to CUDA autocast: under NPU autocast the fp16 logits reach forward uncast and "
      "autocast stays on inside it"),
    C('torch.cuda.nvtx.range_push("rnnt_loss_fwd")', "torch_cuda_api", R, True,
      'torch_npu.npu.mstx.range_start("rnnt_loss_fwd")',
      "torch.cuda.nvtx is not redirected and raises without a CUDA build (NVTX stub); mstx method name "
      "unconfirmed"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", R, True, "torch_npu.npu.mstx.range_end(rng_id)",
      "as above"),
    C("@torch.cuda.amp.custom_bwd", "amp", R, False, '@torch.amp.custom_bwd(device_type="npu")',
      "keeps backward under the forward's autocast state; harmless as is"),
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", R, False,
      'with torch.autocast(device_type="npu", enabled=False):',
      "does not disable NPU autocast, but the inputs are cast with .float() anyway and ctc_loss is fp32 "
      "(NPU autocast op lists unconfirmed)"),
])

E("warprnnt_binding", "pytorch_binding/warprnnt_pytorch/__init__.py", "device_branch_or_abstraction",
  "HawkAaron/warp-transducer pytorch_binding/warprnnt_pytorch/__init__.py (cpu_rnnt / gpu_rnnt dispatch)", [
    C("is_cuda = acts.is_cuda", "custom_cuda_extension", B, True,
      "orig_device = acts.device; acts, labels, act_lens, label_lens = (t.cpu() for t in (acts, labels, act_lens, label_lens)); is_cuda = False",
      "an NPU tensor is not is_cuda, so it is handed to the C++ cpu_rnnt kernel that reads its data pointer "
      "as host memory; stage through the CPU (or use a pure-PyTorch loss)"),
    C("costs = costs.to(acts.device)", "tensor_to_device", R, True, "costs = costs.to(orig_device)",
      "acts now lives on the CPU copy; return the cost on the caller's NPU"),
    C("ctx.grads = grads", "tensor_to_device", R, True, "ctx.grads = grads.to(orig_device)",
      "autograd rejects a CPU gradient for an NPU input"),
])

E("warprnnt_setup", "setup.py", "kernel_rewrite",
  "1ytic/warp-rnnt-style setup.py (GPU-only CUDAExtension with nvcc flags)", [
    C("from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension", "custom_cuda_extension",
      R, False, "from torch_npu.utils.cpp_extension import NpuExtension\nfrom torch.utils.cpp_extension import BuildExtension",
      "the import itself succeeds; it changes together with the extension below"),
    C('if not torch.cuda.is_available() and os.getenv("FORCE_CUDA", "0") != "1":', "torch_cuda_api", R, True,
      "if False:  # NPU build does not need a CUDA device",
      "the build aborts on an NPU host"),
    C("if CUDA_HOME is None:", "custom_cuda_extension", R, True, 'if not os.getenv("ASCEND_HOME_PATH"):',
      "no CUDA toolkit on an NPU host -> aborts; check the CANN environment instead"),
    C('os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "6.0;7.0;7.5;8.0;8.6;9.0")', "env_var", X, False, None,
      "only meaningful for nvcc"),
    C("=CUDAExtension(", "custom_cuda_extension", R, True, "NpuExtension(",
      "nvcc-built extension; NpuExtension links torch_npu/ACL (kernels must be rewritten in Ascend C)"),
    C('sources=["core.cu", "core_gather.cu", "core_compact.cu", "binding.cpp"],', "custom_cuda_extension", R,
      True, 'sources=["csrc/rnnt_ascendc.cpp", "binding.cpp"],', ".cu kernels cannot be compiled for NPU"),
    C('"nvcc": ["-O3", "--use_fast_math", "-lineinfo", "--expt-relaxed-constexpr"],', "custom_cuda_extension",
      R, True, '# (no nvcc flags)', "nvcc flags; no nvcc on an NPU host"),
])

E("triton_rnnt_logprobs", "asr/ops/rnnt_logprobs_triton.py", "kernel_rewrite",
  "NeMo-style Triton kernel fusing log-softmax + blank/label gather for RNN-T (one program per lattice node)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('assert logits.is_cuda, "rnnt_logprobs_triton needs the joint logits on a CUDA device"', "device_type", R,
      True, 'assert logits.device.type == "npu", "rnnt_logprobs_triton needs the joint logits on an NPU"',
      "fails for NPU tensors"),
    C("with torch.cuda.device(logits.device.index):", "torch_cuda_api", R, True,
      "with torch.npu.device(logits.device.index):", "CUDA device context fails on an NPU host"),
    C("_rnnt_logprobs_fwd_kernel[(B, T, U1)](", "triton_kernel_tuning", R, False,
      "_rnnt_logprobs_fwd_kernel[(num_cores,)](  # loop over lattice nodes inside the kernel",
      "one program per lattice node (millions); triton-ascend prefers a grid near the AI-core count with an "
      "in-kernel loop (unconfirmed)"),
    C("=num_warps=8,", "triton_kernel_tuning", X, False, None,
      "warp count has no meaning on Ascend vector cores (unconfirmed)"),
    C("with torch.cuda.device(grad_logits.device.index):", "torch_cuda_api", R, True,
      "with torch.npu.device(grad_logits.device.index):", "backward launch context"),
    C("_rnnt_logprobs_bwd_kernel[(B, T, U1)](", "triton_kernel_tuning", R, False,
      "_rnnt_logprobs_bwd_kernel[(num_cores,)](", "same grid concern (unconfirmed)"),
    C("=num_warps=4,", "triton_kernel_tuning", X, False, None, "same as forward (unconfirmed)"),
])

# ---------------------------------------------------------------- files around code -----------------------------

E("asr_requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt of an ESPnet/NeMo-style speech training repo pinned to cu121 wheels", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu pairs with the CPU torch build on x86 (plain PyPI on aarch64)"),
    C("torch==2.1.2+cu121", "import_torch_npu", R, True, "torch==2.1.0",
      "a +cu121 build does not exist for aarch64 and 2.1.2 has no torch_npu pairing (torch_npu 2.1.0.postN "
      "pairs with torch 2.1.0)"),
    C("torchaudio>=2.1", "import_torch_npu", A, True, "torch-npu==2.1.0.post12",
      "the NPU backend package itself (version must match torch and the installed CANN)"),
    C("warp-rnnt==0.7.0", "custom_cuda_extension", X, True, None,
      "nvcc-built CUDA-only loss; pip install fails without the CUDA toolkit"),
    C("flash-attn==2.3.6", "attention_kernel", X, True, None,
      "cannot be installed on NPU; use SDPA / torch_npu.npu_fusion_attention"),
    C("triton==2.1.0", "triton_kernel_tuning", R, True, "triton-ascend",
      "the Triton kernels need the triton-ascend backend"),
    C("nvidia-dali-cuda120==1.32.0", "custom_cuda_extension", X, True, None, "CUDA-only data loading library"),
    C("pynvml>=11.5", "torch_cuda_api", X, False, None,
      "installs fine, no NVML on an NPU host (torch.npu.utilization / mem_get_info instead)"),
    C("cuda-python>=12.3", "torch_cuda_api", X, False, None,
      "only used by the CUDA-graph decoder; installs without a GPU"),
])

E("asr_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "Dockerfile of a speech training image on the NGC PyTorch base (ESPnet tools, apex, flash-attn)", [
    C("ARG BASE_IMAGE=nvcr.io/nvidia/pytorch:23.10-py3", "import_torch_npu", R, True,
      "ARG BASE_IMAGE=<CANN 8.x + torch 2.1.0 + torch_npu image for 910B>",
      "CUDA base image; an Ascend CANN image (Ascend/cann-container-image) plus torch/torch_npu is needed; "
      "exact image tag unconfirmed"),
    C("=FROM ${BASE_IMAGE}", "env_var", A, False,
      "ENV ASCEND_TOOLKIT_HOME=/usr/local/Ascend/ascend-toolkit/latest  # + the other set_env.sh exports",
      "Ascend's CANN images already export set_env.sh's variables as ENV; needed only on a hand-built base"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", X, False, None,
      "NVIDIA container runtime only; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, False, None, "NVIDIA runtime only"),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", X, False, None, "harmless"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0 7.5 8.0 8.6 9.0+PTX"', "env_var", X, False, None, "nvcc only"),
    C("make TH_VERSION=2.1.0 CUDA_VERSION=12.1 && \\", "import_torch_npu", R, True,
      "make TH_VERSION=2.1.0 CPU_ONLY=1 && \\",
      "ESPnet's tools Makefile installs the CUDA torch build; the NPU image needs the CPU torch + torch_npu "
      "(the exact Makefile switch is unconfirmed)"),
    C("./installers/install_warp-transducer.sh && \\", "custom_cuda_extension", X, False, None,
      "warp-transducer is only used on CUDA; whether its installer builds CPU-only without nvcc is unconfirmed"),
    C('--config-settings "--build-option=--cpp_ext" --config-settings "--build-option=--cuda_ext" ./',
      "amp", R, True, "# Ascend apex: bash scripts/build.sh --python=3.x (Ascend/apex) or drop apex",
      "--cuda_ext needs nvcc; NVIDIA apex's fused kernels do not exist for NPU"),
    C("MAX_JOBS=8 pip install --no-cache-dir flash-attn==2.3.6 --no-build-isolation", "attention_kernel", X,
      True, None, "flash-attn cannot be built for NPU"),
    C("ENV NCCL_DEBUG=WARN", "env_var", X, False, None, "no effect with HCCL"),
    C("ENV NCCL_IB_DISABLE=0", "env_var", X, False, None, "no effect with HCCL"),
    C("HEALTHCHECK --interval=5m --timeout=30s CMD nvidia-smi || exit 1", "torch_cuda_api", R, False,
      "HEALTHCHECK --interval=5m --timeout=30s CMD npu-smi info || exit 1",
      "container is marked unhealthy, the job itself still runs"),
])
