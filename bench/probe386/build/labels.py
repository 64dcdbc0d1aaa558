"""Labels for probe386 (self-supervised speech: wav2vec 2.0, HuBERT, data2vec, WavLM; CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit; explicit port (torch.npu.*, 'npu', hccl, no
transfer_to_npu). required = complete-port counterfactual: with every other labelled line already ported,
would leaving this one line unchanged fail, compute something wrong, or silently misbehave on an NPU host?
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


X = "explicit_replacement"
B = "device_branch_or_abstraction"

# ------------------------------------------------------------------ fairseq (wav2vec 2.0 / HuBERT / data2vec)

E("fs_configs", "fairseq/dataclass/configs.py", X,
  "facebookresearch/fairseq fairseq/dataclass/configs.py (CommonConfig / DistributedTrainingConfig)", [
    C("=default=max(1, torch.cuda.device_count()),", "torch_cuda_api", "replace", True,
      "default=max(1, torch.npu.device_count()),",
      "Default distributed_world_size: torch.cuda.device_count() is 0 on an NPU host, so the default collapses "
      "to 1 and a multi-NPU node silently trains on one device."),
    C("default=max(1, torch.cuda.device_count()),  # one process per visible GPU", "torch_cuda_api", "replace", True,
      "default=max(1, torch.npu.device_count()),  # one process per visible NPU",
      "Default distributed_num_procs; same collapse to 1 process."),
    C('default="nccl", metadata={"help": "distributed backend"}', "dist_backend", "replace", True,
      'default="hccl", metadata={"help": "distributed backend"}',
      "Default backend handed to dist.init_process_group; NCCL does not exist on Ascend."),
])

E("fs_dist_utils", "fairseq/distributed/utils.py", X,
  "facebookresearch/fairseq fairseq/distributed/utils.py (init-method inference, spawn, all_gather_list, broadcast_object)", [
    C("torch.cuda.device_count(), cfg.distributed_world_size", "torch_cuda_api", "replace", True,
      "torch.npu.device_count(), cfg.distributed_world_size",
      "distributed_num_procs = min(device_count, world) -> 0 processes on an NPU host."),
    C("=torch.cuda.set_device(cfg.device_id)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(cfg.device_id)",
      "no-spawn path (external launcher): pins the process to its device."),
    C("cfg.device_id = cfg.distributed_rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "cfg.device_id = cfg.distributed_rank % torch.npu.device_count()",
      "torchrun path: modulo by 0 raises ZeroDivisionError on an NPU host."),
    C("gpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "gpus_per_node = torch.npu.device_count()",
      "Slurm one-task-per-node path: rank/world size computed from 0 devices."),
    C("cfg.distributed_world_size <= torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "cfg.distributed_world_size <= torch.npu.device_count()",
      "single-node assert fails for any world size > 0 on an NPU host."),
    C('f"world size is {cfg.distributed_world_size} but have {torch.cuda.device_count()} available devices"',
      "torch_cuda_api", "replace", False,
      '), f"world size is {cfg.distributed_world_size} but have {torch.npu.device_count()} available devices"',
      "Assertion message only; evaluated only when the assert already failed."),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "Guards a warm-up all_reduce only; skipping it on NPU is harmless (HCCL initialises lazily on first collective)."),
    C("dist.all_reduce(torch.zeros(1).cuda())", "tensor_to_device", "replace", True,
      "dist.all_reduce(torch.zeros(1).npu())",
      "Once the guard is ported this runs on every rank; .cuda() fails on an NPU host."),
    C("if torch.cuda.is_available() and not cfg.common.cpu and not cfg.common.tpu:", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and not cfg.common.cpu and not cfg.common.tpu:",
      "Spawned workers: if the guard stays False no rank pins its device, every rank lands on npu:0 and HCCL init fails."),
    C("torch.cuda.set_device(cfg.distributed_training.device_id)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(cfg.distributed_training.device_id)", "Per-rank device selection."),
    C("=torch.cuda.device_count(),", "torch_cuda_api", "replace", True,
      "torch.npu.device_count(),",
      "nprocs for torch.multiprocessing.spawn; min(0, world) spawns nothing."),
    C("all_gather_list._buffer = torch.cuda.ByteTensor(buffer_size)", "tensor_to_device", "replace", True,
      'all_gather_list._buffer = torch.empty(buffer_size, dtype=torch.uint8, device="npu")',
      "Device buffer for the pickled all-reduce (used for stats and the cuda_env gather); legacy torch.cuda.ByteTensor "
      "type does not exist for NPU and HCCL cannot reduce a CPU tensor."),
    C("all_gather_list._cpu_buffer = torch.ByteTensor(max_size).pin_memory()", "pin_memory", "replace", False,
      'all_gather_list._cpu_buffer = torch.ByteTensor(max_size).pin_memory(device="npu")',
      "Host staging buffer. Whether a device-less pin_memory() picks the NPU allocator depends on the torch version "
      "(unconfirmed in the knowledge base); worst case the buffer is just unpinned."),
    C('if torch.distributed.get_backend(group) == "nccl":', "dist_backend", "replace", True,
      'if torch.distributed.get_backend(group) == "hccl":',
      "Backend-string comparison (not rewritten by transfer_to_npu either). With hccl the objects would be staged on "
      "CPU tensors, which HCCL cannot broadcast; used by checkpoint loading."),
    C('dist_device = torch.device("cuda")', "device_type", "replace", True,
      'dist_device = torch.device("npu")', "Device for broadcast_object staging tensors."),
])

E("fs_trainer", "fairseq/trainer.py", X,
  "facebookresearch/fairseq fairseq/trainer.py (Trainer.__init__, _build_optimizer, train_step, _log_oom)", [
    C("self.cuda = torch.cuda.is_available() and not cfg.common.cpu and not self.tpu", "torch_cuda_api", "replace", True,
      "self.cuda = torch.npu.is_available() and not cfg.common.cpu and not self.tpu",
      "self.cuda is the trainer's 'on accelerator' flag; unported the whole run silently stays on CPU."),
    C('self.device = torch.device("cuda")', "device_type", "replace", True,
      'self.device = torch.device("npu")', "Model/criterion/sample device."),
    C("self._grad_norm_buf = torch.cuda.DoubleTensor(self.data_parallel_world_size)", "tensor_to_device", "replace", True,
      "self._grad_norm_buf = torch.zeros(self.data_parallel_world_size, dtype=torch.float32, device=self.device)",
      "Cross-rank grad-norm consistency buffer: legacy CUDA tensor type, and fp64 is poorly supported on NPU "
      "(transfer_to_npu itself maps DoubleTensor to FloatTensor)."),
    C("if self.cuda and torch.cuda.get_device_capability(0)[0] < 7:", "device_capability_check", "replace", True,
      "if self.cuda and (torch.npu.get_device_capability(0) or (7, 0))[0] < 7:",
      "Compute-capability hint. torch.cuda.* raises on an NPU host; torch.npu.get_device_capability returns None unless "
      "TORCH_NPU_DEVICE_CAPABILITY is set, so it must be guarded."),
    C("if self.cuda and torch.cuda.get_device_capability(0)[0] >= 7:", "device_capability_check", "replace", True,
      "if self.cuda and (torch.npu.get_device_capability(0) or (0, 0))[0] >= 7:",
      "Same check on the fp32 path."),
    C("torch.cuda.empty_cache()  # after first step", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # after first step",
      "torch.cuda.empty_cache() is a no-op when CUDA is not initialised; only the NPU cache release (OOM headroom) is lost."),
    C("torch.cuda.empty_cache()  # free what the failed batch held", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # free what the failed batch held",
      "OOM recovery; no-op when unported, recovery just less likely to succeed."),
    C("grad_norm = torch.tensor(0.0).cuda()", "tensor_to_device", "replace", True,
      "grad_norm = torch.tensor(0.0).npu()",
      "FP16Optimizer overflow path (frequent with --fp16 early in wav2vec2 training)."),
    C("gb_used = torch.cuda.max_memory_allocated() / 1024 / 1024 / 1024", "torch_cuda_api", "replace", False,
      "gb_used = torch.npu.max_memory_allocated() / 1024 / 1024 / 1024",
      "Logging only: the CUDA query returns 0 when CUDA is uninitialised, so gb_free is wrong but training is not."),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "Unlike max_memory_allocated this resolves the current CUDA device and raises on an NPU host; runs every update."),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", "--empty-cache-freq; no-op when unported."),
    C('if torch.cuda.is_available() and hasattr(torch.cuda, "memory_summary"):', "torch_cuda_api", "replace", False,
      'if torch.npu.is_available() and hasattr(torch.npu, "memory_summary"):',
      "OOM diagnostics guard; unported the summary is just skipped."),
    C("for device_idx in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", False,
      "for device_idx in range(torch.npu.device_count()):",
      "OOM diagnostics; unported the loop is empty."),
    C("logger.warning(torch.cuda.memory_summary(device=device_idx))", "torch_cuda_api", "replace", True,
      "logger.warning(torch.npu.memory_summary(device=device_idx))",
      "With guard and loop ported this would raise inside the OOM handler and turn a recoverable OOM into a crash."),
])

E("fs_utils", "fairseq/utils.py", X,
  "facebookresearch/fairseq fairseq/utils.py (move_to_cuda, clip_grad_norm_, RNG state, CudaEnvironment)", [
    C("device = device or torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "device = device or torch.npu.current_device()",
      "Trainer calls move_to_cuda(sample) without a device; note device 0 is falsy so this runs even for rank 0."),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "clip_grad_norm_ without amp_C: unported, per-tensor norms are moved to CPU and stacked there - correct but one "
      "host round-trip per parameter tensor every step (performance)."),
    C("=device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "device = torch.npu.current_device()",
      "Reached once the guard above is ported."),
    C("if torch.cuda.is_available():  # device-side generator (dropout masks)", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():  # device-side generator (dropout masks)",
      "get_rng_state is used by checkpoint_activations to replay dropout in the recompute; without the device RNG "
      "state the recomputed masks differ and gradients are silently wrong."),
    C('state["cuda_rng_state"] = torch.cuda.get_rng_state()', "torch_cuda_api", "replace", True,
      'state["npu_rng_state"] = torch.npu.get_rng_state()', "Device RNG snapshot."),
    C('if "cuda_rng_state" in state:', "torch_cuda_api", "replace", True,
      'if "npu_rng_state" in state:',
      "Key must follow the renamed key above, otherwise the NPU state is never restored (silent)."),
    C('torch.cuda.set_rng_state(state["cuda_rng_state"])', "torch_cuda_api", "replace", True,
      'torch.npu.set_rng_state(state["npu_rng_state"])', "Device RNG restore."),
    C("if torch.cuda.is_available():  # seed the current device as well", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():  # seed the current device as well",
      "torch.manual_seed above also seeds registered accelerator backends in torch 2.x (unconfirmed in the knowledge "
      "base); kept for symmetry."),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed)", "Redundant with torch.manual_seed (unconfirmed); see guard."),
    C("cur_device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "cur_device = torch.npu.current_device()", "CudaEnvironment is built by the Trainer whenever self.cuda."),
    C('prop = torch.cuda.get_device_properties("cuda:{}".format(cur_device))', "torch_cuda_api", "replace", True,
      'prop = torch.npu.get_device_properties("npu:{}".format(cur_device))', "Device properties query."),
    C("self.major = prop.major", "device_capability_check", "replace", True,
      'self.major = getattr(prop, "major", 0)',
      "NPU device properties have no major/minor (only name, total_memory, L2_cache_size, core counts)."),
    C("self.minor = prop.minor", "device_capability_check", "replace", True,
      'self.minor = getattr(prop, "minor", 0)', "Same as major."),
])

E("fs_amp_opt", "fairseq/optim/amp_optimizer.py", X,
  "facebookresearch/fairseq fairseq/optim/amp_optimizer.py", [
    C("self._grad_scaler = torch.cuda.amp.GradScaler(**amp_kwargs)", "amp", "replace", True,
      "self._grad_scaler = torch.npu.amp.GradScaler(**amp_kwargs)",
      "The CUDA GradScaler disables itself (warning) without CUDA: fp16 autocast would then run without loss scaling "
      "and gradients underflow silently."),
])

E("fs_task", "fairseq/tasks/fairseq_task.py", X,
  "facebookresearch/fairseq fairseq/tasks/fairseq_task.py (train_step)", [
    C("with torch.cuda.amp.autocast(enabled=(isinstance(optimizer, AMPOptimizer))):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=(isinstance(optimizer, AMPOptimizer))):",
      "Unported, CUDA autocast disables itself with a warning and --amp runs in fp32: slower and more memory, "
      "not wrong (performance)."),
])

E("fs_adam", "fairseq/optim/adam.py", X,
  "facebookresearch/fairseq fairseq/optim/adam.py (FairseqAdam with apex/fused_adam_cuda FusedAdam)", [
    C("=import torch.optim", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Needed by the ported fused-optimizer line below (torch_npu.optim)."),
    C("fused_adam_cls = get_fused_adam_class()", "fused_optimizer", "replace", False,
      "fused_adam_cls = torch_npu.optim.NpuFusedAdamW",
      "apex FusedAdam / fused_adam_cuda have no NPU build; fairseq's Adam is the decoupled (AdamW) variant, so the "
      "matching fused class is NpuFusedAdamW, not NpuFusedAdam. Performance only: the plain fallback works."),
    C("and torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "and torch.npu.is_available()",
      "Unported, use_fused_adam is False and the pure-PyTorch Adam is used (correct, slower)."),
    C("params, use_fp16_stats=self.cfg.fp16_adam_stats, **self.optimizer_config", "fused_optimizer", "replace", True,
      "params, **self.optimizer_config",
      "Once the two lines above are ported, NpuFusedAdamW does not accept use_fp16_stats -> TypeError."),
])

E("fs_train_cli", "fairseq_cli/train.py", X,
  "facebookresearch/fairseq fairseq_cli/train.py (main, cli_main)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry point; fairseq-era stacks predate torch_npu 2.5.1 backend autoload, and torch.npu.* is used throughout."),
    C("utils.set_torch_seed(cfg.common.seed)", "compile_mode", "npu_only_addition", False,
      "torch.npu.set_compile_mode(jit_compile=False)",
      "Variable-length audio batches are dynamic shapes; msFmkTransplt recommends jit_compile=False for them. Performance."),
    C("with torch.cuda.profiler.profile():", "torch_cuda_api", "replace", True,
      "with torch_npu.profiler.profile():",
      "--profile path: torch.cuda.profiler drives cudaProfilerStart and is not aliased for NPU."),
    C("with torch.autograd.profiler.emit_nvtx():", "torch_cuda_api", "removal", True, None,
      "emit_nvtx is unsupported on all Ascend products (2.7.1 list); drop it (or use torch_npu.npu.mstx ranges)."),
])

E("fs_gumbel", "fairseq/modules/gumbel_vector_quantizer.py", X,
  "facebookresearch/fairseq fairseq/modules/gumbel_vector_quantizer.py (wav2vec 2.0 quantizer)", [
    C("x = F.gumbel_softmax(x.float(), tau=self.curr_temp, hard=True).type_as(x)", "unsupported_op_workaround",
      "replace", True,
      "g = -torch.empty_like(x, dtype=torch.float32).exponential_().log(); y = ((x.float() + g) / self.curr_temp).softmax(-1); "
      "x = (torch.zeros_like(y).scatter_(-1, y.argmax(-1, keepdim=True), 1.0) - y.detach() + y).type_as(x)",
      "torch.nn.functional.gumbel_softmax is marked unsupported on Atlas A2/A3 in Ascend's 2.7.1 API list and is in "
      "msFmkTransplt's UNSUPPORTED list; rewrite with exponential_/softmax/scatter (all have NPU kernels), keeping the "
      "straight-through hard one-hot."),
])

E("fs_data2vec", "examples/data2vec/models/data2vec_audio.py", X,
  "facebookresearch/fairseq examples/data2vec/models/data2vec_audio.py (Data2VecAudioModel)", [
    C("zc = torch.tensor(y.size(0)).cuda()", "tensor_to_device", "replace", True,
      "zc = torch.tensor(y.size(0), device=y.device)",
      "compute_var under torch.distributed (always true in pre-training): all_reduce of a .cuda() scalar."),
])

E("fs_ctc", "fairseq/criterions/ctc.py", X,
  "facebookresearch/fairseq fairseq/criterions/ctc.py (CtcCriterion)", [])

E("fs_layer_norm", "fairseq/modules/layer_norm.py", X,
  "facebookresearch/fairseq fairseq/modules/layer_norm.py (apex FusedLayerNorm fallback)", [])

E("fs_setup", "setup.py", X,
  "facebookresearch/fairseq setup.py (cython + optional CUDA extensions)", [])

E("fs_pretrain_sh", "examples/wav2vec/scripts/pretrain_librivox.sh", X,
  "fairseq examples/wav2vec README recipe (fairseq-hydra-train wav2vec2_large_librivox) as a node launcher", [
    C("set -euo pipefail", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN runtime libraries/paths (LD_LIBRARY_PATH, ASCEND_OPP_PATH ...) unless the image already exports them."),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; a device subset would silently not be honoured."),
    C('NGPU=$(echo "${CUDA_VISIBLE_DEVICES}"', "env_var", "replace", True,
      """NGPU=$(echo "${ASCEND_RT_VISIBLE_DEVICES}" | tr ',' '\\n' | wc -l)""",
      "World size / update_freq are derived from the visible-device list; must read the renamed variable."),
])

E("fs_yaml", "examples/hubert/config/pretrain/hubert_base_librispeech.yaml", X,
  "fairseq examples/hubert/config/pretrain/hubert_base_librispeech.yaml (with an explicit backend override)", [
    C("distributed_backend: 'nccl'", "dist_backend", "replace", True,
      "distributed_backend: 'hccl'", "Explicit override beats the (ported) dataclass default."),
])

# ------------------------------------------------------------------ microsoft/unilm WavLM

E("wavlm_model", "WavLM/WavLM.py", X,
  "microsoft/unilm wavlm/WavLM.py (WavLMConfig, WavLM)", [])

E("wavlm_extract", "WavLM/extract_features.py", X,
  "microsoft/unilm WavLM README usage, grown into a SUPERB-style feature dump script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "Entry point; torch.npu.* used below."),
    C('parser.add_argument("--device", default="cuda",', "device_type", "replace", True,
      'parser.add_argument("--device", default="npu", help="device to run on, e.g. npu, npu:1 or cpu")',
      "Default device string."),
    C("checkpoint = torch.load(ckpt_path)", "device_type", "replace", True,
      'checkpoint = torch.load(ckpt_path, map_location="cpu")',
      "Checkpoints written from a GPU job hold CUDA storages; deserialising them without map_location raises on a "
      "host without CUDA."),
    C('device = torch.device(args.device if torch.cuda.is_available() else "cpu")', "torch_cuda_api", "replace", True,
      'device = torch.device(args.device if torch.npu.is_available() else "cpu")',
      "Unported this silently falls back to CPU."),
    C('=if device.type == "cuda":', "device_type", "replace", False,
      'if device.type == "npu":',
      "Only tf32 flags (inert on NPU) and a log line sit under it; unported the else-branch logs a misleading "
      "'CUDA not available' warning."),
    C("logger.info(f\"using {torch.cuda.get_device_name(device)}\")", "torch_cuda_api", "replace", True,
      "logger.info(f\"using {torch.npu.get_device_name(device)}\")", "Reached once the branch above is ported."),
    C('if device.type == "cuda":  # make sure', "device_type", "replace", False,
      'if device.type == "npu":  # make sure all kernels finished before reading the clock',
      "Timing/peak-memory report only; the per-file .cpu() copies already synchronise."),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "Reached once the branch above is ported."),
    C("peak = torch.cuda.max_memory_allocated(device) / 2 ** 30", "torch_cuda_api", "replace", True,
      "peak = torch.npu.max_memory_allocated(device) / 2 ** 30",
      "Passing an npu device to the CUDA allocator query raises."),
])

# ------------------------------------------------------------------ s3prl

E("s3prl_run", "s3prl/run_downstream.py", X,
  "s3prl/s3prl s3prl/run_downstream.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "Entry point; torch.npu.set_device below."),
    C("parser.add_argument('--backend', default='nccl'", "dist_backend", "replace", True,
      "parser.add_argument('--backend', default='hccl', help='The backend for distributed training')",
      "Passed positionally to init_process_group."),
    C("parser.add_argument('--device', default='cuda'", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu', help='model.to(device)')",
      "Every module and batch goes to args.device (and 'device' is never overwritten from a resumed checkpoint)."),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "torch.distributed.launch path."),
    C("if torch.cuda.is_available(): torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available(): torch.npu.manual_seed_all(args.seed)",
      "torch.manual_seed on the line above already seeds the device generators (unconfirmed in the knowledge base)."),
])

E("s3prl_runner", "s3prl/downstream/runner.py", X,
  "s3prl/s3prl s3prl/downstream/runner.py (Runner.train / evaluate)", [
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler()",
      "fp16 runner: CUDA scaler disables itself on an NPU host -> unscaled fp16 gradients."),
    C("with torch.cuda.amp.autocast(enabled=amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=amp):",
      "Unported the forward runs in fp32 (performance only)."),
    C("if 'CUDA out of memory' in str(e):", "torch_cuda_api", "replace", False,
      "if 'out of memory' in str(e):",
      "OOM-skip heuristic keys on the CUDA message text; the NPU allocator's wording is unconfirmed in the knowledge "
      "base. Unported, an NPU OOM crashes instead of skipping the batch."),
    C("=with torch.cuda.device(self.args.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(self.args.device):",
      "torch.cuda.device('npu:0') raises; reached once the message check matches."),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", "No-op when unported; only frees less memory."),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "Before evaluation: seeding is covered by torch.manual_seed, cache release is optional."),
    C("torch.cuda.manual_seed_all(self.args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(self.args.seed)", "Redundant with torch.manual_seed (unconfirmed)."),
    C("with torch.cuda.device(self.args.device):  # release training buffers before eval", "torch_cuda_api", "replace", True,
      "with torch.npu.device(self.args.device):  # release training buffers before eval",
      "Reached once the guard is ported; torch.cuda.device with an npu device raises."),
    C("torch.cuda.empty_cache()  # before eval", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # before eval", "No-op when unported."),
    C("if torch.cuda.is_available():  # prepare back to training", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():  # prepare back to training", "Cache release only."),
    C("with torch.cuda.device(self.args.device):  # give eval memory back", "torch_cuda_api", "replace", True,
      "with torch.npu.device(self.args.device):  # give eval memory back", "Same as above."),
    C("torch.cuda.empty_cache()  # after eval", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # after eval", "No-op when unported."),
])

E("s3prl_expert", "s3prl/upstream/wavlm/expert.py", X,
  "s3prl/s3prl s3prl/upstream/wavlm/expert.py (UpstreamExpert)", [])

# ------------------------------------------------------------------ torchaudio examples/hubert

E("ta_train", "examples/hubert/train.py", B,
  "pytorch/audio examples/hubert/train.py (Lightning Trainer)", [
    C("from pytorch_lightning import seed_everything, Trainer", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu",
      "No torch_npu symbol is used in this file; an NPU accelerator plugin or backend autoload (torch_npu >= 2.5.1) "
      "loads it. Recommended, not required."),
    C('accelerator="gpu",', "distributed_framework", "replace", True,
      'accelerator="npu",',
      "Lightning raises when no CUDA GPU is found. 'npu' requires an Ascend accelerator registered with Lightning "
      "(third-party/plugin; not covered by the knowledge base)."),
    C("strategy=DDPStrategy(find_unused_parameters=False),", "dist_backend", "replace", True,
      'strategy=DDPStrategy(find_unused_parameters=False, process_group_backend="hccl"),',
      "Lightning picks nccl only for a CUDA root device and gloo otherwise; gloo cannot reduce NPU tensors."),
])

E("ta_lightning", "examples/hubert/lightning.py", X,
  "pytorch/audio examples/hubert/lightning.py (HuBERTPreTrainModule / HuBERTFineTuneModule, manual AMP)", [
    C("self.scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler()",
      "Pre-training step runs under fp16 autocast with manual loss scaling; a self-disabled CUDA scaler leaves fp16 "
      "gradients unscaled."),
    C("with torch.cuda.amp.autocast(enabled=True):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=True):",
      "Unported: fp32 forward (performance only)."),
    C("pin_memory=True,", "pin_memory", "replace", False,
      'pin_memory=True, pin_memory_device="npu",',
      "Without an accelerator the DataLoader may skip pinning (version dependent, unconfirmed); performance only."),
    C("self.scaler = torch.cuda.amp.GradScaler(init_scale=2.0 ** 7)", "amp", "replace", False,
      "self.scaler = torch.npu.amp.GradScaler(init_scale=2.0 ** 7)",
      "Fine-tuning runs with autocast(enabled=False), i.e. fp32: a self-disabled scaler is harmless here."),
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=False):",
      "Explicit fp32 region; only matters if an outer NPU autocast were active (the CTC path is fp32 after "
      "log_softmax anyway)."),
])

E("ta_preprocess", "examples/hubert/preprocess.py", X,
  "pytorch/audio examples/hubert/preprocess.py (MFCC/HuBERT features, k-means labels)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "Entry point; the 'npu' device string needs the backend registered."),
    C('device = torch.device("cuda")', "device_type", "replace", True,
      'device = torch.device("npu")', "--use-gpu path for feature extraction and label prediction."),
])

E("ta_feature_utils", "examples/hubert/utils/feature_utils.py", X,
  "pytorch/audio examples/hubert/utils/feature_utils.py", [])

# ------------------------------------------------------------------ SpeechBrain

E("sb_core", "speechbrain/core.py", X,
  "speechbrain/speechbrain speechbrain/core.py (parse_arguments, Brain.__init__, _wrap_distributed), 0.5.x era", [
    C('default="cuda:0",', "device_type", "replace", True,
      'default="npu:0",', "--device default."),
    C('default="nccl",', "dist_backend", "replace", True,
      'default="hccl",', "--distributed_backend default."),
    C("if torch.cuda.device_count() == 0:", "torch_cuda_api", "replace", False,
      "if torch.npu.device_count() == 0:",
      "Only on the DataParallel path, which is unsupported on Ascend anyway (see DP below)."),
    C('if local_rank is not None and "cuda" in run_opts["device"]:', "device_type", "replace", True,
      'if local_rank is not None and "npu" in run_opts["device"]:',
      "Per-rank device rewrite for DDP; unported every rank keeps npu:0."),
    C('"distributed_backend": "nccl",', "dist_backend", "replace", False,
      '"distributed_backend": "hccl",',
      "Fallback default only used when Brain is built without run_opts (then DDP is off)."),
    C('if self.device == "cuda":', "device_type", "replace", False,
      'if self.device == "npu":', "Plain 'npu' already means device 0."),
    C("torch.cuda.set_device(0)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(0)", "Reached once the branch above is ported."),
    C('elif "cuda" in self.device:', "device_type", "replace", True,
      'elif "npu" in self.device:',
      "Without it no rank calls set_device; HCCL communicators all bind to device 0."),
    C("torch.cuda.set_device(int(self.device[-1]))", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(int(self.device[-1]))", "Per-rank device selection."),
    C("self.scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler()",
      "auto_mix_prec scaler (also checkpointed); self-disables on an NPU host."),
    C("module = DP(module)", "distributed_framework", "replace", True,
      'raise NotImplementedError("torch.nn.DataParallel is not supported on Ascend NPU; use --distributed_launch")',
      "torch.nn.DataParallel is unsupported on all Ascend products (2.7.1 list); only hit with --data_parallel_backend."),
])

E("sb_distributed", "speechbrain/utils/distributed.py", X,
  "speechbrain/speechbrain speechbrain/utils/distributed.py (ddp_init_group)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "Needed for torch_npu.distributed.is_hccl_available below."),
    C('if run_opts["local_rank"] + 1 > torch.cuda.device_count():', "torch_cuda_api", "replace", True,
      'if run_opts["local_rank"] + 1 > torch.npu.device_count():',
      "Raises 'Not enough GPUs available!' on every rank of an NPU host."),
    C('if run_opts["distributed_backend"] == "nccl":', "dist_backend", "replace", True,
      'if run_opts["distributed_backend"] == "hccl":',
      "Backend whitelist: an unknown backend string falls through to the final else and raises."),
    C("if not torch.distributed.is_nccl_available():", "dist_backend", "replace", True,
      "if not torch_npu.distributed.is_hccl_available():",
      "NCCL is not compiled into the CPU torch wheel used with torch_npu -> would raise."),
])

E("sb_train", "recipes/CommonVoice/self-supervised-learning/wav2vec2/train_sb_wav2vec2.py", X,
  "speechbrain/speechbrain recipes/CommonVoice/self-supervised-learning/wav2vec2/train_sb_wav2vec2.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "Entry point."),
    C("with torch.cuda.amp.autocast():", "amp", "replace", False,
      "with torch.npu.amp.autocast():", "Unported: fp32 forward with a working NPU scaler (performance only)."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():", "Memory logging only."),
    C('log_dct["gpu_mem_gb"] = torch.cuda.max_memory_allocated() / 2 ** 30', "torch_cuda_api", "replace", False,
      'log_dct["gpu_mem_gb"] = torch.npu.max_memory_allocated() / 2 ** 30',
      "Returns 0 when CUDA is uninitialised: wrong log value, no failure."),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "Raises on an NPU host once the guard is ported."),
    C('"pin_memory": True,', "pin_memory", "replace", False,
      '"pin_memory": True, "pin_memory_device": "npu",', "Performance only; unconfirmed default behaviour."),
    C("=pin_memory=True,", "pin_memory", "replace", False,
      'pin_memory=True, pin_memory_device="npu",', "Same for the validation loader."),
])

E("sb_hparams", "recipes/CommonVoice/self-supervised-learning/wav2vec2/hparams/wav2vec2_base.yaml", X,
  "speechbrain/speechbrain recipes/CommonVoice/self-supervised-learning/wav2vec2/hparams/wav2vec2_base.yaml", [])

E("sb_run", "recipes/CommonVoice/self-supervised-learning/wav2vec2/run_multigpu.sh", X,
  "SpeechBrain multi-GPU launch instructions (torch.distributed.launch + --distributed_launch) as a script", [
    C("=set -e", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment unless already exported by the image."),
    C("nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info",
      "Diagnostic only, but under set -e a missing nvidia-smi (exit 127) aborts the launcher before training."),
    C("export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((NGPU - 1)))", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=$(seq -s, 0 $((NGPU - 1)))",
      "Device subset must use the Ascend runtime variable."),
    C("--distributed_launch --distributed_backend=nccl", "dist_backend", "replace", True,
      "--distributed_launch --distributed_backend=hccl \\", "Overrides the argparse default."),
])

# ------------------------------------------------------------------ Hugging Face transformers speech-pretraining example

E("hf_pretrain_sh", "examples/pytorch/speech-pretraining/run_pretrain_base_librispeech.sh", X,
  "huggingface/transformers examples/pytorch/speech-pretraining README command (accelerate launch)", [
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "Ignored by the Ascend runtime; any subset would silently not be honoured."),
])

E("hf_requirements", "examples/pytorch/speech-pretraining/requirements.txt", X,
  "huggingface/transformers examples/pytorch/speech-pretraining/requirements.txt", [])
