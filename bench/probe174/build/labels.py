# Labels for probe174 (audio-visual / lip-reading speech recognition, CUDA -> Ascend NPU).
# Format: see /work/main/bench/probe_build.py. One C(...) per upstream line a careful porter edits.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


E("avhubert_infer_s2s", "avhubert/infer_s2s.py", "explicit_replacement",
  "facebookresearch/av_hubert avhubert/infer_s2s.py (fairseq hydra decoding, WER scoring)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "registers the npu device and torch.npu namespace used below (mandatory before torch_npu 2.5.1, recommended after)"),
    C("models = [model.eval().cuda() for model in models]", "tensor_to_device", "replace", True,
      "models = [model.eval().npu() for model in models]",
      "Module.cuda() needs a CUDA device; fails on an Ascend host"),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = torch.npu.is_available()",
      "False on an NPU host, so the batches would silently stay on CPU while the model was moved to the device"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
      "second move of the ensemble/LM inside the optimize-for-generation loop"),
    C("with torch.cuda.profiler.profile():", "torch_cuda_api", "replace", True,
      "with torch_npu.profiler.profile(activities=[torch_npu.profiler.ProfilerActivity.NPU]):",
      "torch.cuda.profiler is not redirected to torch_npu and drives cudaProfilerStart; only reached with common.profile=true"),
    C("with torch.autograd.profiler.emit_nvtx():", "torch_cuda_api", "removal", True, None,
      "emit_nvtx is marked unsupported (x) for NPU in Ascend's 2.7.1 API list and by msFmkTransplt; drop it (profile=true path only)"),
])

E("fairseq_utils", "fairseq/fairseq/utils.py", "device_branch_or_abstraction",
  "facebookresearch/fairseq fairseq/utils.py as vendored by av_hubert (move_to_cuda, clip_grad_norm_, rng state, CudaEnvironment)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401",
      "first vendored fairseq module that touches torch.npu; fairseq-hydra-train's own entry point is not vendored here"),
    C("device = device or torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      'device = device or torch.device("npu", torch.npu.current_device())',
      "torch.cuda.current_device() raises without CUDA; a bare int index would also mean cuda:N to Tensor.to"),
    C("            if torch.cuda.is_available():", "torch_cuda_api", "add_branch", False,
      'if grads[0].device.type == "npu": device = grads[0].device',
      "without apex/amp_C on NPU the fallback puts every per-grad norm on CPU: correct but a host round-trip per parameter each step"),
    C('state["cuda_rng_state"] = torch.cuda.get_rng_state()', "torch_cuda_api", "add_branch", False,
      'if torch.npu.is_available(): state["npu_rng_state"] = torch.npu.get_rng_state()',
      "NPU RNG state is not captured (branch just skipped on NPU); reproducibility only"),
    C('torch.cuda.set_rng_state(state["cuda_rng_state"])', "torch_cuda_api", "add_branch", False,
      'if "npu_rng_state" in state: torch.npu.set_rng_state(state["npu_rng_state"])',
      "pairs with get_rng_state; set_torch_seed would otherwise not restore the NPU generator"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "add_branch", False,
      "if torch.npu.is_available(): torch.npu.manual_seed(seed)",
      "skipped on NPU; torch.manual_seed above should already seed the PrivateUse1 generator in recent torch (unconfirmed in knowledge)"),
    C("cur_device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "cur_device = torch.npu.current_device()",
      "CudaEnvironment is instantiated by the trainer once it treats the NPU as its accelerator"),
    C('prop = torch.cuda.get_device_properties("cuda:{}".format(cur_device))', "torch_cuda_api", "replace", True,
      'prop = torch.npu.get_device_properties("npu:{}".format(cur_device))',
      "CUDA call and cuda:N string both fail on an Ascend host"),
    C("self.major = prop.major", "device_capability_check", "replace", True,
      'self.major = getattr(prop, "major", 0)',
      "NPU device properties only expose name, total_memory, L2_cache_size, cube/vector core counts (no major/minor)"),
    C("self.minor = prop.minor", "device_capability_check", "replace", True,
      'self.minor = getattr(prop, "minor", 0)',
      "same: minor is not an attribute of NPU device properties"),
])

E("fairseq_trainer", "fairseq/fairseq/trainer.py", "device_branch_or_abstraction",
  "facebookresearch/fairseq fairseq/trainer.py (Trainer.__init__, train_step, _prepare_sample) as vendored by av_hubert", [
    C("self.cuda = torch.cuda.is_available() and not cfg.common.cpu and not self.tpu", "torch_cuda_api", "replace", True,
      "self.cuda = (torch.cuda.is_available() or torch.npu.is_available()) and not cfg.common.cpu and not self.tpu",
      "port keeps self.cuda as 'accelerator present'; unchanged it is False on Ascend and fairseq-hydra-train silently trains on CPU"),
    C('self.device = torch.device("cuda")', "device_type", "add_branch", True,
      'self.device = torch.device("npu") if torch.npu.is_available() else torch.device("cuda")',
      "model/criterion and the DDP wrapper are moved to self.device"),
    C("self._grad_norm_buf = torch.cuda.DoubleTensor(self.data_parallel_world_size)", "torch_cuda_api", "replace", True,
      "self._grad_norm_buf = torch.zeros(self.data_parallel_world_size, dtype=torch.float32, device=self.device)",
      "CUDA legacy tensor type; NPU has no fp64 (transfer_to_npu maps DoubleTensor to FloatTensor); multi-card runs only"),
    C("if self.cuda and torch.cuda.get_device_capability(0)[0] < 7:", "device_capability_check", "replace", True,
      "if self.cuda and torch.cuda.is_available() and torch.cuda.get_device_capability(0)[0] < 7:",
      "reached with fp16: true (all AV-HuBERT configs); a CUDA call on an NPU host, and NPU capability is None unless TORCH_NPU_DEVICE_CAPABILITY is set"),
    C("if self.cuda and torch.cuda.get_device_capability(0)[0] >= 7:", "device_capability_check", "replace", True,
      "if self.cuda and torch.cuda.is_available() and torch.cuda.get_device_capability(0)[0] >= 7:",
      "same check on the fp32 path"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "torch.cuda.empty_cache is a no-op while CUDA is uninitialised, so it silently frees nothing on NPU; memory headroom only"),
    C("torch.cuda.empty_cache()  # drop cached blocks before retrying", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # drop cached blocks before retrying",
      "OOM recovery path; silent no-op on NPU, retry less likely to succeed"),
    C("torch.cuda.empty_cache()  # periodic flush, see --empty-cache-freq", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # periodic flush, see --empty-cache-freq",
      "only with empty_cache_freq > 0; silent no-op on NPU"),
    C("grad_norm = torch.tensor(0.0).cuda()", "tensor_to_device", "replace", True,
      "grad_norm = torch.tensor(0.0, device=self.device)",
      "fp16 loss-scale overflow path (frequent early in fp16 training); .cuda() fails on Ascend"),
    C("gb_used = torch.cuda.max_memory_allocated() / 1024 / 1024 / 1024", "torch_cuda_api", "replace", False,
      "gb_used = torch.npu.max_memory_allocated() / 1024 / 1024 / 1024",
      "uninitialised CUDA reports 0, so gb_free is silently wrong; logging only (behaviour from memory of torch.cuda.memory, unconfirmed)"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device, which initialises CUDA and raises on an Ascend host; runs every update once self.cuda is True"),
    C('if torch.cuda.is_available() and hasattr(torch.cuda, "memory_summary"):', "torch_cuda_api", "add_branch", False,
      "if torch.npu.is_available(): logger.warning(torch.npu.memory_summary())",
      "OOM diagnostics are skipped on NPU; no functional impact"),
])

E("fairseq_dist_utils", "fairseq/fairseq/distributed/utils.py", "device_branch_or_abstraction",
  "facebookresearch/fairseq fairseq/distributed/utils.py (infer_init_method, distributed_main, all_gather_list, broadcast_object)", [
    C("torch.cuda.device_count(), cfg.distributed_world_size", "torch_cuda_api", "replace", True,
      "torch.npu.device_count(), cfg.distributed_world_size",
      "distributed_num_procs becomes 0 on an Ascend host, so torch.multiprocessing.spawn starts no workers"),
    C("gpus_per_node = torch.cuda.device_count()  # one task per node: spawn a worker per GPU", "torch_cuda_api", "replace", True,
      "gpus_per_node = torch.npu.device_count()  # one task per node: spawn a worker per NPU",
      "SLURM one-task-per-node mode: rank and world size come out as 0"),
    C("cfg.distributed_world_size <= torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "cfg.distributed_world_size <= torch.npu.device_count()",
      "single-node multi-card fallback asserts against 0 CUDA devices"),
    C("available devices\"", "torch_cuda_api", "replace", False,
      '), f"world size is {cfg.distributed_world_size} but have {torch.npu.device_count()} available devices"',
      "assertion message only; evaluated when the assert already fails"),
    C("=gpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "gpus_per_node = torch.npu.device_count()",
      "pipeline-model-parallel path (fairscale Pipe), not used by AV-HuBERT recipes"),
    C("gpus_per_node = torch.cuda.device_count()  # GPUs visible on this node", "torch_cuda_api", "replace", False,
      "gpus_per_node = torch.npu.device_count()  # NPUs visible on this node",
      "pipeline-model-parallel path only"),
    C("torch.cuda.set_device(cfg.device_id)", "torch_cuda_api", "replace", False,
      "torch.npu.set_device(cfg.device_id)",
      "pipeline-model-parallel path only"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", False,
      'elif torch.npu.is_available(): dist.all_reduce(torch.zeros(1, device="npu"))',
      "communicator warm-up all-reduce; skipped on NPU, HCCL initialises lazily on first collective"),
    C("if torch.cuda.is_available() and not cfg.common.cpu and not cfg.common.tpu:", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and not cfg.common.cpu and not cfg.common.tpu:",
      "without it the per-rank set_device is skipped and every spawned rank lands on npu:0"),
    C("torch.cuda.set_device(cfg.distributed_training.device_id)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(cfg.distributed_training.device_id)",
      "bind each worker to its own NPU before init_process_group"),
    C("all_gather_list._buffer = torch.cuda.ByteTensor(buffer_size)", "torch_cuda_api", "replace", True,
      'all_gather_list._buffer = torch.zeros(buffer_size, dtype=torch.uint8, device="npu")',
      "legacy CUDA tensor type; used by the trainer (cuda_env gather, slow stats sync) on multi-card runs"),
    C("all_gather_list._cpu_buffer = torch.ByteTensor(max_size).pin_memory()", "pin_memory", "replace", False,
      'all_gather_list._cpu_buffer = torch.ByteTensor(max_size).pin_memory("npu")',
      "pin_memory() without a device defaults to CUDA in older torch; with torch_npu loaded it may pin for NPU (unconfirmed); a 16 KB staging buffer, perf only"),
    C('if torch.distributed.get_backend(group) == "nccl":', "dist_backend", "add_branch", True,
      'elif torch.distributed.get_backend(group) == "hccl": dist_device = torch.device("npu")',
      "backend-string comparison is not rewritten by transfer_to_npu; with hccl the CPU fallback would hand CPU tensors to HCCL broadcast"),
    C('if dist.get_backend(group) == "nccl":', "dist_backend", "add_branch", True,
      'elif dist.get_backend(group) == "hccl": dist_device = torch.device("npu")',
      "broadcast_object is used when loading a checkpoint on rank 0 and broadcasting it; same CPU-tensor-over-HCCL failure"),
])

E("fairseq_ngram_block", "fairseq/fairseq/ngram_repeat_block.py", "device_branch_or_abstraction",
  "facebookresearch/fairseq fairseq/ngram_repeat_block.py (guarded CUDA extension with pure-PyTorch fallback)", [
    # Deliberately unlabelled: the extension import is guarded, is_cuda_extension_usable() returns False
    # on an Ascend host before any device="cuda" tensor is built, and the pure-PyTorch fallback is used.
])

E("fairseq_setup", "fairseq/setup.py", "device_branch_or_abstraction",
  "facebookresearch/fairseq setup.py (Cython/C++ extensions, .cu extensions gated on CUDA_HOME)", [
    # Deliberately unlabelled: the .cu extensions are only built when CUDA_HOME is set, which it is not on
    # an Ascend host; fairseq then falls back to the CPU libnat / pure-PyTorch ngram blocking.
])

E("avhubert_finetune_yaml", "avhubert/conf/finetune/large_vox_433h.yaml", "explicit_replacement",
  "facebookresearch/av_hubert avhubert/conf/finetune/*.yaml (fairseq-hydra-train fine-tuning config)", [
    C("distributed_backend: nccl", "dist_backend", "replace", True, "distributed_backend: hccl",
      "passed straight to dist.init_process_group; NCCL is not available on Ascend (and fairseq's own default would fall back to gloo without CUDA)"),
])

E("avhubert_train_slurm", "avhubert/scripts/finetune_slurm.sh", "explicit_replacement",
  "SLURM launcher for av_hubert fine-tuning with fairseq-hydra-train (cluster-side recipe)", [
    C("#SBATCH --gres=gpu:8", "device_type", "replace", False, "#SBATCH --gres=npu:8",
      "GRES name is site-defined on Ascend SLURM clusters (unconfirmed in knowledge)"),
    C("module load cuda/11.3 cudnn/8.2 nccl/2.10", "import_torch_npu", "replace", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CUDA modules do not exist on an Ascend cluster (set -e aborts); CANN's set_env.sh provides the runtime/HCCL libraries torch_npu loads"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL_* is ignored by HCCL; log-level equivalent is an assumption (unconfirmed)"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
      "no HCCL equivalent needed; silently ignored on NPU"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=${HOST_IFNAME:-eth0}",
      "HCCL picks the host NIC for root-info exchange from HCCL_SOCKET_IFNAME/HCCL_IF_IP; a wrong pick fails link setup across nodes"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu watchdog variable; default is already 1 per MindCluster docs"),
    C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", "removal", False, None,
      "CUDA-only knob, no effect on Ascend"),
    C("nvidia-smi --query-gpu=index,name,memory.total --format=csv", "torch_cuda_api", "replace", True, "npu-smi info",
      "nvidia-smi is absent on Ascend hosts and set -euo pipefail aborts the job"),
])

E("avhubert_decode_sh", "avhubert/scripts/decode_lrs3.sh", "explicit_replacement",
  "av_hubert decoding recipe (infer_s2s.py over modalities x noise SNRs)", [
    C("=set -e", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment needed before python imports torch_npu (unless the login shell already sources it)"),
    C("CUDA_VISIBLE_DEVICES=${GPU} python -B ${ROOT}/infer_s2s.py \\", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU} python -B ${ROOT}/infer_s2s.py \\",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so every decode silently runs on npu:0"),
])

E("avhubert_env", "avhubert/environment.yml", "explicit_replacement",
  "conda environment for av_hubert (pytorch + nvidia channels, pytorch-cuda)", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None,
      "NVIDIA conda channel only serves CUDA runtime packages; harmless but useless on an Ascend host"),
    C("- pytorch-cuda=11.8", "torch_cuda_api", "replace", True, "- cpuonly",
      "pytorch-cuda selects the CUDA build of pytorch 2.1.0 (no aarch64 build); torch_npu sits on top of the CPU build"),
    C("- cudnn=8.9", "torch_cuda_api", "removal", False, None,
      "CUDA-only library, not used by torch_npu"),
    C("- nccl=2.18", "dist_backend", "removal", False, None,
      "NCCL is replaced by HCCL from CANN; package unused on NPU"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post17",
      "torch_npu pin matching pytorch 2.1.0 (2.1.0.post17 = TorchNPU 7.2.0, CANN 8.3.RC1 in the compatibility matrix)"),
])

E("avhubert_detect_landmark", "avhubert/preparation/detect_landmark.py", "explicit_replacement",
  "av_hubert preparation/detect_landmark.py (dlib 68-point landmarks) with a face_alignment FAN backend as in common forks", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "needed for torch.npu and the npu device string used by the FAN backend"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available():",
      "the fan backend would refuse to start on an Ascend host"),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)",
      "CUDA call; fails without a CUDA device"),
    C("device='cuda',", "device_type", "replace", True, "device='npu',",
      "face_alignment moves S3FD/FAN with .to(device); 'cuda' fails on Ascend (whether its TorchScript FAN runs well on NPU is unconfirmed)"),
    C("batch = batch.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "batch = batch.npu(non_blocking=True)",
      "frames must be on the same device as the detector"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "memory logging only; silently skipped on NPU"),
    C("used = torch.cuda.memory_allocated() / 2 ** 30", "torch_cuda_api", "replace", False,
      "used = torch.npu.memory_allocated() / 2 ** 30", "logging only"),
    C("peak = torch.cuda.max_memory_allocated() / 2 ** 30", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated() / 2 ** 30", "logging only"),
])

E("avhubert_dump_feature", "avhubert/clustering/dump_hubert_feature.py", "explicit_replacement",
  "av_hubert avhubert/clustering/dump_hubert_feature.py (feature dumping for k-means targets)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "registers the npu device used by .npu() below"),
    C("self.model = model[0].eval().cuda()", "tensor_to_device", "replace", True,
      "self.model = model[0].eval().npu()", "CUDA move fails on Ascend"),
    C("audio_feats, video_feats = torch.from_numpy(audio_feats.astype(np.float32)).cuda(), torch.from_numpy(video_feats.astype(np.float32)).cuda()",
      "tensor_to_device", "replace", True,
      "audio_feats, video_feats = torch.from_numpy(audio_feats.astype(np.float32)).npu(), torch.from_numpy(video_feats.astype(np.float32)).npu()",
      "both inputs must be on the model's device"),
])

E("avhubert_model", "avhubert/hubert.py", "device_branch_or_abstraction",
  "facebookresearch/av_hubert avhubert/hubert.py (AVHubertModel: masking, fusion, feature extraction)", [
    # Deliberately unlabelled: model code is device-agnostic (mask indices follow x.device,
    # new_zeros/clone inherit the device); Conv3d/GLU/LayerNorm all have NPU kernels.
])

E("autoavsr_train", "auto_avsr/train.py", "explicit_replacement",
  "mpc001/auto_avsr train.py (PyTorch Lightning Trainer with DDPStrategy)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry point of the Lightning run; registers the npu device before the Trainer is built"),
    C('accelerator="gpu",', "device_type", "replace", True, "accelerator=NPUAccelerator(),",
      "'gpu' resolves to CUDA/MPS and errors without them; Lightning ships no Ascend accelerator (upstream PR was closed), so the port registers a small custom Accelerator"),
    C("strategy=DDPStrategy(find_unused_parameters=False),", "dist_backend", "replace", True,
      'strategy=DDPStrategy(find_unused_parameters=False, process_group_backend="hccl"),',
      "Lightning picks nccl only for cuda root devices and gloo otherwise; gloo cannot all-reduce NPU tensors"),
    C("precision=args.precision,", "amp", "replace", False,
      'plugins=[MixedPrecision(args.precision, device="npu", scaler=torch.npu.amp.GradScaler())],',
      "with a custom accelerator Lightning builds its mixed-precision plugin for device 'cuda', so autocast would not apply to NPU ops (Lightning internals from memory, unconfirmed)"),
])

E("autoavsr_lightning", "auto_avsr/lightning.py", "explicit_replacement",
  "mpc001/auto_avsr lightning.py (LightningModule: AdamW + warmup-cosine, CTC/attention beam search)", [
    C("optimizer = torch.optim.AdamW(", "fused_optimizer", "replace", False,
      'optimizer = torch_npu.optim.NpuFusedAdamW([{"name": "model", "params": self.model.parameters(), "lr": self.args.lr}], weight_decay=self.args.weight_decay, betas=(0.9, 0.98))',
      "performance only: Ascend's fused AdamW (msFmkTransplt advice; noted to cost extra memory)"),
    C("if batch_idx % 200 == 0 and torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if batch_idx % 200 == 0 and torch.npu.is_available():",
      "memory metric silently never logged on NPU"),
    C('self.log("gpu_mem_gb", torch.cuda.max_memory_allocated(self.device) / 1024 ** 3, rank_zero_only=True)', "torch_cuda_api", "replace", False,
      'self.log("gpu_mem_gb", torch.npu.max_memory_allocated(self.device) / 1024 ** 3, rank_zero_only=True)',
      "logging only; torch.cuda would report 0 for the NPU device even with the guard fixed"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op while CUDA is uninitialised, so the NPU cache is never released; memory headroom only"),
])

E("autoavsr_datamodule", "auto_avsr/datamodule/data_module.py", "explicit_replacement",
  "mpc001/auto_avsr datamodule/data_module.py (frame-count bucketing sampler, DDP sampler wrapper)", [
    C("self.args.gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "self.args.gpus = torch.npu.device_count()",
      "0 on an Ascend host: total_gpus becomes 0, the DistributedSamplerWrapper is never used and every rank iterates the full training set"),
])

E("autoavsr_ctc_prefix", "auto_avsr/espnet/nets/ctc_prefix_score.py", "device_branch_or_abstraction",
  "espnet/espnet espnet/nets/ctc_prefix_score.py (CTCPrefixScoreTH) as vendored by auto_avsr / VSR-for-multiple-languages", [
    C("=if x.is_cuda", "device_type", "replace", True, 'if x.device.type != "cpu"',
      "is_cuda is False for NPU tensors, so the scorer silently builds all its state on CPU and the later r[t] = logsumexp(...) + x_[:, t] mixes CPU and NPU tensors"),
    C('torch.device("cuda:%d" % x.get_device())', "device_type", "replace", True,
      'torch.device("%s:%d" % (x.device.type, x.get_device()))',
      "hard-coded cuda:N device string; follow the posterior tensor's own device type"),
])

E("autoavsr_attention", "auto_avsr/espnet/nets/pytorch_backend/transformer/attention.py", "explicit_replacement",
  "espnet transformer/attention.py (MultiHeadedAttention, RelPositionMultiHeadedAttention) with an SDPA fast path as in recent forks", [
    C("if self.use_sdpa and query.is_cuda and query.dtype in (torch.float16, torch.bfloat16):", "attention_kernel", "replace", False,
      'if self.use_sdpa and query.device.type in ("cuda", "npu") and query.dtype in (torch.float16, torch.bfloat16):',
      "is_cuda gate silently disables the fused path on NPU; the eager fallback is correct, only slower (SDPA dispatches to NPU flash attention)"),
    C("with torch.backends.cuda.sdp_kernel(", "attention_kernel", "removal", False, None,
      "torch.backends.cuda.sdp_kernel is marked unsupported (x) for NPU; drop the context and call SDPA directly (whether it raises on NPU is unconfirmed)"),
])

E("autoavsr_prep_loader", "auto_avsr/preparation/data/data_module.py", "explicit_replacement",
  "mpc001/auto_avsr preparation/data/data_module.py (AVSRDataLoader: RetinaFace or mediapipe + mouth ROI)", [
    C('self.landmarks_detector = LandmarksDetector(device=f"cuda:{gpu_idx}")', "device_type", "replace", True,
      'self.landmarks_detector = LandmarksDetector(device=f"npu:{gpu_idx}")',
      "RetinaFace/FAN predictors are moved to this device; cuda:N fails on Ascend (ibug packages on NPU unconfirmed, CPU is the safe fallback)"),
])

E("autoavsr_retinaface", "auto_avsr/preparation/detectors/retinaface/detector.py", "explicit_replacement",
  "mpc001/auto_avsr preparation/detectors/retinaface/detector.py (ibug RetinaFacePredictor + FANPredictor) with a batched fast path", [
    C("=import torchvision", "unsupported_op_workaround", "npu_only_addition", False,
      "import torchvision_npu  # NPU kernels for torchvision.ops.nms",
      "torchvision.ops.nms has no NPU kernel in plain torchvision; torch_npu's PrivateUse1 fallback should run it on CPU (slow), torchvision_npu provides a native one"),
    C('def __init__(self, device="cuda:0", model_name="resnet50", batch_size=16):', "device_type", "replace", False,
      'def __init__(self, device="npu:0", model_name="resnet50", batch_size=16):',
      "default only; the callers in this repo pass the device explicitly"),
    C('batch = torch.from_numpy(chunk).permute(0, 3, 1, 2).to("cuda", non_blocking=True)', "tensor_to_device", "replace", True,
      "batch = torch.from_numpy(chunk).permute(0, 3, 1, 2).to(self.device, non_blocking=True)",
      "hard-coded cuda ignores the device the detector was built on"),
])

E("autoavsr_preprocess", "auto_avsr/preparation/preprocess_lrs2lrs3.py", "explicit_replacement",
  "mpc001/auto_avsr preparation/preprocess_lrs2lrs3.py (segmenting LRS2/LRS3, mouth-ROI extraction jobs)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script of the preprocessing jobs; the detectors are built on npu:N"),
    C("n_gpus = max(torch.cuda.device_count(), 1)", "torch_cuda_api", "replace", True,
      "n_gpus = max(torch.npu.device_count(), 1)",
      "0 CUDA devices: every job is mapped to device 0 instead of being spread over the node's NPUs"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guard is False on Ascend, so set_device is silently skipped; the detectors get an explicit npu:N anyway"),
    C("torch.cuda.set_device(gpu_idx)", "torch_cuda_api", "replace", False, "torch.npu.set_device(gpu_idx)",
      "binds the job's current device (avoids stray allocations on device 0); explicit devices already used below"),
])

E("autoavsr_requirements", "auto_avsr/requirements.txt", "explicit_replacement",
  "auto_avsr requirements with pinned CUDA 11.8 wheels of torch/torchvision/torchaudio", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "cu118 index has no aarch64 wheels; torch_npu runs on the CPU build of torch"),
    C("torch==2.1.2+cu118", "torch_cuda_api", "replace", True, "torch==2.1.0",
      "torch_npu wheels pair with an exact torch x.y.z (2.1.0 for torch-npu 2.1.0.postN); +cu118 is the CUDA build"),
    C("torchvision==0.16.2+cu118", "torch_cuda_api", "replace", True, "torchvision==0.16.0",
      "must match torch 2.1.0 (0.16.0 is also the version torchvision_npu pairs with torch 2.1)"),
    C("torchaudio==2.1.2+cu118", "torch_cuda_api", "replace", True, "torchaudio==2.1.0",
      "must match torch 2.1.0; CUDA local version not available on the CPU index"),
    C("pytorch-lightning==2.1.3", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
      "Ascend extension pinned to the torch version (2.1.0.post17 = TorchNPU 7.2.0 / CANN 8.3.RC1)"),
])

E("autoavsr_train_sh", "auto_avsr/scripts/train_lrs3_vsr.sh", "explicit_replacement",
  "single-node launcher for auto_avsr VSR training (device discovery via nvidia-smi, Lightning DDP)", [
    C("=set -eo pipefail", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN runtime environment for torch_npu/HCCL"),
    C("NUM_GPUS=$(nvidia-smi --list-gpus | wc -l)", "torch_cuda_api", "replace", True,
      'NUM_GPUS=$(python -c "import torch, torch_npu; print(torch.npu.device_count())")',
      "no nvidia-smi on Ascend: NUM_GPUS silently becomes 0 and train.py is started with --gpus 0"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $((NUM_GPUS - 1)))}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-$(seq -s, 0 $((NUM_GPUS - 1)))}",
      "device masking variable of the Ascend runtime; CUDA_VISIBLE_DEVICES is ignored"),
    C("export NCCL_P2P_DISABLE=0", "env_var", "removal", False, None,
      "NCCL-only knob, ignored by HCCL"),
    C("export TORCH_NCCL_BLOCKING_WAIT=0", "env_var", "removal", False, None,
      "ProcessGroupNCCL setting; no effect with hccl"),
])

E("vsr_main", "Visual_Speech_Recognition_for_Multiple_Languages/main.py", "device_branch_or_abstraction",
  "mpc001/Visual_Speech_Recognition_for_Multiple_Languages main.py (hydra entry, gpu_idx device selection)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "registers the npu device for the new branch"),
    C("if gpu_idx >= 0 and torch.cuda.is_available():", "device_type", "add_branch", True,
      'if gpu_idx >= 0 and torch.npu.is_available(): return torch.device(f"npu:{gpu_idx}")',
      "without an NPU branch the helper silently falls back to CPU decoding on Ascend"),
])

E("vsr_pipeline", "Visual_Speech_Recognition_for_Multiple_Languages/pipelines/pipeline.py", "explicit_replacement",
  "VSR-for-multiple-languages pipelines/pipeline.py (InferencePipeline: ini config, detector, AVSR model)", [
    C('def __init__(self, config_filename, detector="retinaface", face_track=False, device="cuda:0", fp16=False):', "device_type", "replace", False,
      'def __init__(self, config_filename, detector="retinaface", face_track=False, device="npu:0", fp16=False):',
      "default only; main.py always passes the selected device"),
    C('decord_ctx = config.get("input", "decord_ctx", fallback="gpu")', "device_type", "replace", True,
      'decord_ctx = config.get("input", "decord_ctx", fallback="cpu")',
      "decord's GPU context needs a CUDA (NVDEC) build of decord; on Ascend only the CPU reader exists"),
    C('self.landmarks_detector = LandmarksDetector(device="cuda:0")', "device_type", "replace", True,
      "self.landmarks_detector = LandmarksDetector(device=device)",
      "hard-coded cuda:0 for RetinaFace/FAN, ignoring the pipeline device"),
])

E("vsr_model", "Visual_Speech_Recognition_for_Multiple_Languages/pipelines/model.py", "explicit_replacement",
  "VSR-for-multiple-languages pipelines/model.py (AVSR: ESPnet E2E + BatchBeamSearch with CTC/LM scorers)", [
    C('penalty=0., ctc_weight=0.1, lm_weight=0., beam_size=40, device="cuda:0", fp16=False):', "device_type", "replace", False,
      'penalty=0., ctc_weight=0.1, lm_weight=0., beam_size=40, device="npu:0", fp16=False):',
      "default only; InferencePipeline passes the device"),
    C("self.fp16 = fp16 and torch.cuda.is_available() and torch.cuda.get_device_capability(device)[0] >= 7", "device_capability_check", "replace", False,
      "self.fp16 = fp16 and torch.npu.is_available()",
      "short-circuits to False on Ascend, so fp16 decoding is silently off (correct, slower); NPU has no CUDA compute capability to test"),
    C("with torch.no_grad(), torch.cuda.amp.autocast(enabled=self.fp16):", "amp", "replace", False,
      "with torch.no_grad(), torch.npu.amp.autocast(enabled=self.fp16):",
      "CUDA autocast does not cast NPU ops; matters once fp16 is enabled on NPU"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "sync before timing is skipped on NPU: the debug timing is understated only"),
    C("torch.cuda.synchronize(self.device)", "torch_cuda_api", "replace", False, "torch.npu.synchronize(self.device)",
      "pairs with the guard above"),
])

E("vsr_data", "Visual_Speech_Recognition_for_Multiple_Languages/pipelines/data/data_module.py", "explicit_replacement",
  "VSR-for-multiple-languages pipelines/data/data_module.py (torchvision/decord video readers, audio resampling)", [
    C("ctx = decord.gpu(self.gpu_id)", "device_type", "replace", True, "ctx = decord.cpu(0)",
      "reached whenever an ini config sets decord_ctx=gpu (the pipeline default once did); the CPU build of decord on Ascend cannot open an NVDEC context"),
])

E("tcn_main", "Lipreading_using_Temporal_Convolutional_Networks/main.py", "explicit_replacement",
  "mpc001/Lipreading_using_Temporal_Convolutional_Networks main.py (LRW word classification, mixup, optional AMP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "registers the npu device used by every .npu() below"),
    C("return model(torch.FloatTensor(data)[None, None, :, :, :].cuda(), lengths=[data.shape[0]])", "tensor_to_device", "replace", True,
      "return model(torch.FloatTensor(data)[None, None, :, :, :].npu(), lengths=[data.shape[0]])",
      "feature-extraction path; .cuda() fails on Ascend"),
    C("=boundaries = boundaries.cuda()", "tensor_to_device", "replace", True, "boundaries = boundaries.npu()",
      "evaluation with word boundaries (LRW+boundary models)"),
    C("logits = model(input.unsqueeze(1).cuda(), lengths=lengths, boundaries=boundaries)", "tensor_to_device", "replace", True,
      "logits = model(input.unsqueeze(1).npu(), lengths=lengths, boundaries=boundaries)", "evaluation input"),
    C("running_corrects += preds.eq(labels.cuda().view_as(preds)).sum().item()", "tensor_to_device", "replace", True,
      "running_corrects += preds.eq(labels.npu().view_as(preds)).sum().item()", "labels must sit with the predictions"),
    C("loss = criterion(logits, labels.cuda())", "tensor_to_device", "replace", True,
      "loss = criterion(logits, labels.npu())", "validation loss"),
    C("boundaries = boundaries.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "boundaries = boundaries.npu(non_blocking=True)", "training with boundaries"),
    C("labels_a, labels_b = labels_a.cuda(), labels_b.cuda()", "tensor_to_device", "replace", True,
      "labels_a, labels_b = labels_a.npu(), labels_b.npu()", "mixup targets"),
    C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=args.amp):",
      "--amp only; CUDA autocast leaves NPU ops in fp32, so the flag silently does nothing"),
    C("logits = model(input.unsqueeze(1).cuda(non_blocking=True), lengths=lengths, boundaries=boundaries)", "tensor_to_device", "replace", True,
      "logits = model(input.unsqueeze(1).npu(non_blocking=True), lengths=lengths, boundaries=boundaries)", "training input"),
    C("extract_feats=args.extract_feats).cuda()", "tensor_to_device", "replace", True,
      "extract_feats=args.extract_feats).npu()", "model placement"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "disabled by default; with --amp the CUDA scaler disables itself when CUDA is absent, so no loss scaling on NPU"),
])

E("llmavsr_model", "Llama-AVSR/models/avsr_llm.py", "explicit_replacement",
  "LLM-based AVSR in the style of Llama-AVSR / VSP-LLM (frozen AV-HuBERT + Whisper encoders, LoRA LLaMA via transformers/peft)", [
    C('attn_implementation: str = "flash_attention_2"', "attention_kernel", "replace", True,
      'attn_implementation: str = "sdpa"',
      "flash-attn cannot be installed on Ascend and transformers refuses flash_attention_2 without it; sdpa dispatches to NPU flash attention"),
    # use_4bit/BitsAndBytesConfig deliberately unlabelled: off by default, NPU NF4 support is partial (see README).
    C('device_map={"": torch.cuda.current_device()},', "torch_cuda_api", "replace", True,
      'device_map={"": f"npu:{torch.npu.current_device()}"},',
      "torch.cuda.current_device() raises on an Ascend host; pass an explicit npu device to accelerate's dispatch"),
])

E("llmavsr_train", "Llama-AVSR/train.py", "explicit_replacement",
  "torchrun DDP training loop for an LLM-based AVSR model (bf16 autocast, LoRA-only checkpoints)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "registers npu device, torch.npu and the hccl backend"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "bind each torchrun worker to its NPU"),
    C('dist.init_process_group(backend="nccl", init_method="env://")', "dist_backend", "replace", True,
      'dist.init_process_group(backend="hccl", init_method="env://")', "NCCL is not available on Ascend"),
    C('pin_memory_device=f"cuda:{local_rank}",', "pin_memory", "replace", True,
      'pin_memory_device="npu",',
      "any pin device other than the bare PrivateUse1 name ('npu', not 'npu:0') sends the DataLoader's pin thread to torch.cuda.current_device(), which fails without CUDA (DataLoader internals from memory)"),
    C('with torch.autocast("cuda", dtype=torch.bfloat16):', "amp", "replace", True,
      'with torch.autocast("npu", dtype=torch.bfloat16):',
      "autocast for a device type that is not in use is a no-op, so the fp32 projector output meets the bf16 LLM weights in generate() and the matmul dtype check fails"),
    C('device = torch.device("cuda", local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", local_rank)', "model and every batch are moved to this device"),
    C('with torch.autocast(device_type="cuda", dtype=torch.bfloat16):', "amp", "replace", True,
      'with torch.autocast(device_type="npu", dtype=torch.bfloat16):',
      "training forward relies on bf16 autocast for the fp32 soft-prompt embeddings (see build_inputs); CUDA autocast does nothing for NPU tensors"),
    C("mem = torch.cuda.max_memory_allocated(device) / 2 ** 30", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated(device) / 2 ** 30",
      "uninitialised CUDA reports 0; logged memory is silently wrong"),
])

E("docker_avsr", "docker/Dockerfile", "explicit_replacement",
  "project Dockerfile for AV-HuBERT + auto_avsr on nvidia/cuda (cu118 wheels, decord built with NVDEC)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "base image must carry the CANN toolkit/runtime (and set_env exports) that torch_npu loads; the CUDA image has neither"),
    C("CUDA_HOME=/usr/local/cuda \\", "env_var", "removal", True, None,
      "fairseq's setup.py builds its .cu extensions whenever CUDA_HOME is set, which fails without nvcc"),
    C('TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6+PTX" \\', "env_var", "removal", False, None,
      "only read by CUDA extension builds"),
    C("NVIDIA_VISIBLE_DEVICES=all \\", "env_var", "replace", False, "ASCEND_VISIBLE_DEVICES=all \\",
      "NVIDIA container-runtime variable; NPUs are mounted by the Ascend Docker Runtime (ASCEND_VISIBLE_DEVICES) or --device flags (whether it is read from image ENV is unconfirmed)"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility,video", "env_var", "removal", False, None,
      "NVIDIA container-runtime only"),
    C("RUN pip install --no-cache-dir torch==2.1.2 torchvision==0.16.2 torchaudio==2.1.2 --index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torchaudio==2.1.0 --index-url https://download.pytorch.org/whl/cpu && pip install --no-cache-dir torch-npu==2.1.0.post17",
      "CUDA wheels (none for aarch64); torch_npu needs the matching CPU build of torch 2.1.0 plus the torch-npu wheel"),
    C("cmake .. -DUSE_CUDA=ON -DCMAKE_BUILD_TYPE=Release && make -j\"$(nproc)\" && \\", "custom_cuda_extension", "replace", True,
      "cmake .. -DUSE_CUDA=OFF -DCMAKE_BUILD_TYPE=Release && make -j\"$(nproc)\" && \\",
      "NVDEC build needs the CUDA toolkit; on Ascend only the CPU decoder can be built"),
])

E("bench_vsr", "auto_avsr/tools/benchmark_inference.py", "transfer_to_npu",
  "inference latency / RTF benchmark script for auto_avsr models (CUDA events, NVTX ranges, pynvml)", [
    # Ported with torch_npu.contrib.transfer_to_npu: .cuda(), torch.cuda.Event/synchronize/set_device/
    # reset_peak_memory_stats/max_memory_allocated, torch.cuda.amp.autocast and torch.device("cuda", i)
    # are redirected and stay as they are; only what transfer_to_npu does not cover is labelled.
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "from torch_npu.contrib import transfer_to_npu  # noqa: F401  (imports torch_npu too)",
      "automatic migration entry: redirects torch.cuda.* and cuda device strings to NPU"),
    C('"capability": f"{props.major}.{props.minor}",', "device_capability_check", "replace", True,
      '"capability": getattr(props, "name", "npu"),',
      "NPU device properties have no major/minor, even under transfer_to_npu"),
    C('"sm_count": props.multi_processor_count,', "device_capability_check", "replace", True,
      '"ai_cores": getattr(props, "cube_core_num", None),',
      "no multi_processor_count on NPU; cube_core_num/vector_core_num are the exposed counts"),
    C('["nvidia-smi", "-i", str(index), "--query-gpu=clocks.sm,clocks.mem,temperature.gpu", "--format=csv,noheader"]', "torch_cuda_api", "replace", True,
      '["npu-smi", "info", "-t", "common", "-i", str(index)]',
      "nvidia-smi is missing on Ascend hosts; check_output raises FileNotFoundError for every run (npu-smi query flags unconfirmed)"),
    C('torch.cuda.nvtx.range_push("encoder")', "torch_cuda_api", "replace", True,
      'rid = torch.npu.mstx.range_start("encoder")',
      "torch.cuda.nvtx is not redirected by transfer_to_npu and fails on a non-CUDA torch build; mstx is the NPU counterpart (exact signature unconfirmed)"),
    C("=torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True,
      "torch.npu.mstx.range_end(rid)",
      "closes the encoder range"),
    C("torch.cuda.nvtx.range_pop()  # beam_search", "torch_cuda_api", "replace", True,
      "torch.npu.mstx.range_end(rid)  # beam_search", "closes the beam-search range"),
    C('torch.cuda.nvtx.range_push("beam_search")', "torch_cuda_api", "replace", True,
      'rid = torch.npu.mstx.range_start("beam_search")', "same as the encoder range"),
    C("if args.bf16 and torch.cuda.get_device_capability(args.device_index)[0] < 8:", "device_capability_check", "replace", True,
      "if args.bf16 and not torch.cuda.is_bf16_supported():",
      "under transfer_to_npu get_device_capability returns None unless TORCH_NPU_DEVICE_CAPABILITY is set, so [0] raises TypeError"),
])
