# Labels for probe299: particle-physics deep learning (jet tagging, event reconstruction,
# calorimeter simulation), CUDA -> Ascend NPU.
#
# Target assumed by the labels (see README "How the labels were chosen"):
#   * projects pinned to torch 2.1 (weaver/ParT, LorentzNet, PELICAN, acorn, CaloDiffusion, CaloFlow)
#     port to torch 2.1.0 + torch_npu 2.1.0.postN, where `import torch_npu` is mandatory;
#   * MLPF pins torch 2.5.1 and ports to torch_npu 2.5.1.post1, where the backend autoloads and the
#     explicit import is only recommended (required: False).
# "required" = leaving the line unchanged (with everything else ported) fails, computes something
# wrong, or silently does the wrong thing on an NPU host. Silent no-ops and perf-only rewrites are
# False; claims not confirmed in /work/shared/knowledge are False and say "unconfirmed".

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ----------------------------------------------------------------------------------------------
# weaver-core / Particle Transformer
# ----------------------------------------------------------------------------------------------

E("weaver_train", "weaver/train.py", "explicit_replacement",
  "weaver-core train.py (ParticleNet/ParT training driver: --gpus, --backend, --use-amp, DataParallel)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "torch 2.1-era project: torch_npu must be imported before any npu device/API is used"),
      C("choices=['gloo', 'nccl', 'mpi']", "dist_backend", "replace", True,
        "parser.add_argument('--backend', type=str, choices=['gloo', 'nccl', 'hccl', 'mpi'], default=None,",
        "argparse rejects `--backend hccl`; NCCL does not exist on Ascend, HCCL is the collective backend"),
      C("from torch.profiler import profile, record_function, ProfilerActivity", "torch_cuda_api", "replace", False,
        "from torch_npu.profiler import profile, ProfilerActivity",
        "--profile only: device activity is recorded by torch_npu.profiler (ProfilerActivity.NPU); debug path"),
      C("activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],", "torch_cuda_api", "replace", False,
        "activities=[ProfilerActivity.CPU, ProfilerActivity.NPU],",
        "ProfilerActivity.CUDA records nothing on an NPU host (CPU-only trace); --profile debug path only"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(local_rank)",
        "torch.cuda.set_device needs a CUDA runtime; raises on an NPU host"),
      C("dev = torch.device(local_rank)", "device_type", "replace", True,
        "dev = torch.device('npu', local_rank)",
        "a bare integer torch.device means a CUDA device; model.to(dev) then fails"),
      C("dev = torch.device(gpus[0])", "device_type", "replace", True,
        "dev = torch.device('npu', gpus[0])",
        "integer device index = cuda:N"),
      C("if args.use_amp and dev.type != 'cuda':", "device_type", "replace", False,
        "if args.use_amp and dev.type not in ('cuda', 'npu'):",
        "would silently switch --use-amp off on NPU; result is correct fp32 training, only slower"),
      C("model = torch.nn.DataParallel(model, device_ids=gpus)", "distributed_framework", "replace", True,
        "raise RuntimeError('nn.DataParallel is not supported on Ascend NPU; use torchrun ... --backend hccl')",
        "torch.nn.DataParallel is unsupported on NPU (Ascend API list ✘, msFmkTransplt limitation); multi-device must go through DDP"),
      C("grad_scaler = torch.cuda.amp.GradScaler() if args.use_amp else None", "amp", "replace", True,
        "grad_scaler = torch.npu.amp.GradScaler() if args.use_amp else None",
        "CUDA GradScaler disables itself without CUDA; with the (ported) NPU fp16 autocast active, fp16 "
        "gradients go unscaled and can underflow"),
      C("dev = torch.device(predict_gpus[0])", "device_type", "replace", True,
        "dev = torch.device('npu', predict_gpus[0])",
        "integer device index = cuda:N in the prediction path"),
      C("model = torch.nn.DataParallel(model, device_ids=predict_gpus)", "distributed_framework", "removal", True, None,
        "DataParallel unsupported on NPU; evaluate on a single NPU (model already on dev)"),
  ])

E("weaver_tools", "weaver/utils/nn/tools.py", "explicit_replacement",
  "weaver-core utils/nn/tools.py (train/evaluate loops for classification and regression)",
  [
      C("with torch.cuda.amp.autocast(enabled=grad_scaler is not None):", "amp", "replace", False,
        "with torch.autocast('npu', enabled=grad_scaler is not None):",
        "CUDA autocast warns and disables itself for NPU tensors: AMP silently off, fp32 result is correct, only slower"),
      C("with torch.cuda.amp.autocast(enabled=(grad_scaler is not None)):", "amp", "replace", False,
        "with torch.autocast('npu', enabled=(grad_scaler is not None)):",
        "same as the classification loop: silent fallback to fp32 (performance only)"),
  ])

E("part_model", "weaver/nn/model/ParticleTransformer.py", "explicit_replacement",
  "Particle Transformer (ParT) model in weaver-core nn/model",
  [
      C("return torch.sparse_coo_tensor(", "unsupported_op_workaround", "replace", True,
        "return uu.new_zeros(batch_size, num_fts, (seq_len + 1) * (seq_len + 1)).index_put_((i[0], i[1], i[2] * (seq_len + 1) + i[3]), uu.flatten(), accumulate=True).view(batch_size, num_fts, seq_len + 1, seq_len + 1)[:, :, :seq_len, :seq_len]",
        "sparse COO -> to_dense has no NPU kernel (Tensor.to_dense on msFmkTransplt's unsupported list; sparse ops raise "
        "instead of falling back); reached whenever uu_idx pair features are fed (pair_extra_dim > 0)"),
      C("with torch.cuda.amp.autocast(enabled=self.use_amp):", "amp", "replace", False,
        "with torch.autocast('npu', enabled=self.use_amp):",
        "model-internal AMP switch: CUDA autocast is a silent no-op for NPU tensors; perf only"),
  ])

E("pnet_model", "weaver/nn/model/ParticleNet.py", "explicit_replacement",
  "ParticleNet (EdgeConv) model in weaver-core nn/model -- device-agnostic, nothing to change",
  [])

E("jetclass_sh", "particle_transformer/train_JetClass.sh", "explicit_replacement",
  "particle_transformer train_JetClass.sh launcher (weaver CLI, torchrun DDP)",
  [
      C("=source env.sh", "import_torch_npu", "npu_only_addition", True, SET_ENV,
        "CANN environment must be sourced or torch_npu fails to load libascendcl/libhccl"),
      C("export CUDA_VISIBLE_DEVICES=$GPUS", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=$GPUS",
        "NPU runtime ignores CUDA_VISIBLE_DEVICES: the requested device restriction is silently lost"),
      C("export NCCL_P2P_DISABLE=", "env_var", "removal", False, None,
        "NCCL-only knob, ignored by HCCL; no direct HCCL counterpart"),
      C("--backend nccl\"", "dist_backend", "replace", True,
        "CMD=\"torchrun --standalone --nnodes=1 --nproc_per_node=$NGPUS $(which weaver) --backend hccl\"",
        "DDP through weaver --backend; nccl cannot initialise on NPU"),
      C("nvidia-smi --query-gpu", "device_capability_check", "replace", False,
        "npu-smi info || true",
        "informational only and guarded by `|| true`"),
  ])

# ----------------------------------------------------------------------------------------------
# LorentzNet
# ----------------------------------------------------------------------------------------------

E("lorentznet_main", "LorentzNet/top_tagging.py", "explicit_replacement",
  "LorentzNet top_tagging.py (DDP training with NCCL, CUDA event timing)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "torch 2.x (<2.5) era: explicit torch_npu import needed"),
      C("tik = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "tik = torch.npu.Event(enable_timing=True)",
        "CUDA events need the CUDA runtime; raises on an NPU host"),
      C("tok = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "tok = torch.npu.Event(enable_timing=True)",
        "same as tik"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()",
        "CUDA synchronize lazily initialises CUDA and raises"),
      C("dist.init_process_group(backend='nccl')", "dist_backend", "replace", True,
        "dist.init_process_group(backend='hccl')",
        "HCCL is the Ascend collective backend"),
      C("device = torch.device(\"cuda\")", "device_type", "replace", True,
        "device = torch.device(\"npu\")",
        "all tensors/model are moved to this device"),
  ])

E("lorentznet_utils", "LorentzNet/utils.py", "explicit_replacement",
  "LorentzNet utils.py (args init, all-reduce helpers, warmup scheduler)",
  [
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)",
        "per-rank device binding; torch.cuda.set_device raises without CUDA"),
      C("score = score.cuda()", "tensor_to_device", "replace", True,
        "score = score.npu()",
        ".cuda() raises on an NPU host; HCCL all_gather needs NPU tensors"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if not torch.npu.is_available():",
        "debug memory print silently skipped on NPU"),
      C("alloc = torch.cuda.memory_allocated() / 1024 ** 2", "torch_cuda_api", "replace", False,
        "alloc = torch.npu.memory_allocated() / 1024 ** 2",
        "debug print only"),
      C("peak = torch.cuda.max_memory_allocated() / 1024 ** 2", "torch_cuda_api", "replace", False,
        "peak = torch.npu.max_memory_allocated() / 1024 ** 2",
        "debug print only"),
  ])

# ----------------------------------------------------------------------------------------------
# PELICAN (cormorant-style trainer)
# ----------------------------------------------------------------------------------------------

E("pelican_init", "PELICAN/src/trainer/utils.py", "device_branch_or_abstraction",
  "PELICAN src/trainer utilities (cormorant-style init_cuda, seeding, distributed helpers)",
  [
      C("if args.cuda and torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        "if args.cuda and hasattr(torch, 'npu') and torch.npu.is_available(): device = torch.device('npu' if device_id < 0 else f'npu:{device_id}')",
        "without an NPU branch init_cuda silently falls back to CPU on an NPU host"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", False,
        "if hasattr(torch, 'npu') and torch.npu.is_available(): torch.npu.manual_seed_all(seed)",
        "torch.manual_seed above should already seed the privateuse1 (NPU) generator -- unconfirmed in knowledge; explicit branch for symmetry"),
      C("t = torch.tensor([float(value)], dtype=torch.float64, device=device)", "unsupported_op_workaround", "replace", True,
        "t = torch.tensor([float(value)], dtype=torch.float32, device=device)",
        "HCCL all_reduce supports bf16/fp16/fp32/int32/int64/bool only (Ascend 2.7.1 API list), no fp64"),
      C("if device.type != 'cuda':", "device_type", "add_branch", False,
        "if device.type == 'npu': return 'NPU mem: {:.2f}G alloc'.format(torch.npu.memory_allocated(device) / 2 ** 30)",
        "log-line decoration only; NPU runs just print nothing"),
  ])

E("pelican_train", "PELICAN/train_pelican_classifier.py", "device_branch_or_abstraction",
  "PELICAN train_pelican_classifier.py (torchrun DDP entry point)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "entry point; torch_npu must be imported for torch.npu / hccl"),
      C("torch.cuda.set_device(device_id)", "torch_cuda_api", "replace", True,
        "(torch.npu if hasattr(torch, 'npu') and torch.npu.is_available() else torch.cuda).set_device(device_id)",
        "raises without CUDA"),
      C("dist.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
        "dist.init_process_group(backend='hccl' if hasattr(torch, 'npu') and torch.npu.is_available() else 'nccl', init_method='env://')",
        "nccl unavailable on Ascend"),
  ])

E("pelican_trainer", "PELICAN/src/trainer/trainer.py", "device_branch_or_abstraction",
  "PELICAN src/trainer/trainer.py (Trainer class: checkpoints, bf16 autocast, evaluation)",
  [
      C("self.scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", False,
        "self.scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
        "AMP here is bf16, which needs no loss scaling; the CUDA scaler disabling itself is harmless"),
      C("map_location = {'cuda:0': 'cuda:%d' % self.device_id}", "device_type", "replace", True,
        "map_location = self.device",
        "checkpoints written on NPU carry npu:0 storages (not remapped -> every rank loads onto npu:0) and GPU "
        "checkpoints would be mapped to cuda:N (no CUDA)"),
      C("with torch.autocast(device_type='cuda', dtype=torch.bfloat16, enabled=self.args.amp):", "amp", "replace", False,
        "with torch.autocast(device_type=self.device.type, dtype=torch.bfloat16, enabled=self.args.amp):",
        "autocast('cuda') disables itself for NPU tensors: --amp silently runs fp32 (perf only)"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "add_branch", False,
        "torch.npu.empty_cache() if self.device.type == 'npu' else torch.cuda.empty_cache()",
        "no-op when CUDA is not initialised"),
      C("torch.cuda.synchronize(self.device)", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize() if self.device.type == 'npu' else torch.cuda.synchronize(self.device)",
        "CUDA synchronize raises on an NPU host (runs after every predict())"),
  ])

E("pelican_slurm", "PELICAN/scripts/submit_4gpu.sh", "explicit_replacement",
  "PELICAN SLURM submission script (4 GPUs, torchrun, NCCL env)",
  [
      C("#SBATCH --gres=gpu:a100:4", "device_type", "replace", True,
        "#SBATCH --gres=npu:4",
        "GPU GRES cannot be satisfied on an Ascend partition; GRES name is site-specific (unconfirmed)"),
      C("module load cuda/11.8", "import_torch_npu", "replace", True, SET_ENV,
        "the CANN toolkit environment replaces the CUDA module"),
      C("NGPUS=$(echo \"${CUDA_VISIBLE_DEVICES:-0}\"", "env_var", "replace", True,
        "NGPUS=$(echo \"${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}\" | tr ',' '\\n' | wc -l)",
        "CUDA_VISIBLE_DEVICES is not set for NPU jobs -> NGPUS silently becomes 1"),
      C("=nvidia-smi", "device_capability_check", "replace", True,
        "npu-smi info",
        "script runs with `set -e`: a missing nvidia-smi aborts the job"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False,
        "export ASCEND_GLOBAL_LOG_LEVEL=2",
        "logging verbosity only"),
      C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False,
        "export HCCL_ASYNC_ERROR_HANDLING=1",
        "HCCL counterpart (torch_npu watchdog; defaults to 1 anyway)"),
      C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", False,
        "export HCCL_SOCKET_IFNAME=ib0",
        "single-node --standalone run; HCCL picks a host NIC itself"),
  ])

# ----------------------------------------------------------------------------------------------
# MLPF (jet-particle-flow / particleflow, PyTorch pipeline; torch 2.5.1)
# ----------------------------------------------------------------------------------------------

E("mlpf_training", "mlpf/pyg/training.py", "explicit_replacement",
  "MLPF mlpf/pyg/training.py (mp.spawn DDP, int rank as device, Ray Train)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU,
        "torch_npu 2.5.1 autoloads as a device backend; explicit import only recommended"),
      C("from torch.profiler import ProfilerActivity, profile, record_function", "torch_cuda_api", "replace", False,
        "from torch_npu.profiler import ProfilerActivity, profile; from torch.profiler import record_function",
        "profiling path only (config profile: False)"),
      C("device_type = \"cuda\" if isinstance(rank, int) else \"cpu\"", "device_type", "replace", False,
        "device_type = \"npu\" if isinstance(rank, int) else \"cpu\"",
        "only feeds autocast; with 'cuda' AMP silently stays off (perf only)"),
      C("batch = batch.to(rank, non_blocking=True)", "tensor_to_device", "replace", True,
        "batch = batch.to(f\"npu:{rank}\" if isinstance(rank, int) else rank, non_blocking=True)",
        "integer device = cuda:N; fails on an NPU host"),
      C("enabled=device_type == \"cuda\"):", "amp", "replace", False,
        "with torch.autocast(device_type=device_type, dtype=dtype, enabled=device_type == \"npu\"):",
        "bf16 autocast silently disabled otherwise (perf only)"),
      C("enabled=(device_type == \"cuda\")):", "amp", "replace", False,
        "with torch.autocast(device_type=device_type, dtype=dtype, enabled=(device_type == \"npu\")):",
        "same as above for the loss computation"),
      C("max_mem={torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
        "_logger.info(f\"step {itrain} loss={loss_accum/100:.4f} num_elems={num_elems} num_batch={num_batch} \" f\"max_mem={torch.npu.max_memory_allocated()/1000.0**3:.2f}GB\")",
        "log line; CUDA allocator stats just read 0 on NPU"),
      C("num_data = torch.tensor(len(data_loader), device=rank)", "tensor_to_device", "replace", True,
        "num_data = torch.tensor(len(data_loader), device=f\"npu:{rank}\" if isinstance(rank, int) else rank)",
        "integer device = cuda:N"),
      C("stale_epochs, best_val_loss = torch.tensor(0, device=rank), 99999.9", "tensor_to_device", "replace", True,
        "stale_epochs, best_val_loss = torch.tensor(0, device=f\"npu:{rank}\" if isinstance(rank, int) else rank), 99999.9",
        "integer device = cuda:N"),
      C("with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]", "torch_cuda_api", "replace", False,
        "with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.NPU], record_shapes=True, profile_memory=True) as prof:",
        "profiling path only"),
      C("dist.init_process_group(\"nccl\", rank=rank, world_size=world_size)", "dist_backend", "replace", True,
        "dist.init_process_group(\"hccl\", rank=rank, world_size=world_size)",
        "nccl unavailable on Ascend"),
      C("model = MLPF(**model_kwargs).to(torch.device(rank))", "tensor_to_device", "replace", True,
        "model = MLPF(**model_kwargs).to(torch.device(\"npu\", rank) if isinstance(rank, int) else torch.device(rank))",
        "torch.device(int) is a CUDA device"),
      C("checkpoint = torch.load(config[\"load\"], map_location=torch.device(rank))", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(config[\"load\"], map_location=torch.device(\"npu\", rank) if isinstance(rank, int) else rank)",
        "map_location=cuda:N fails without CUDA"),
      C("=model.to(rank)", "tensor_to_device", "replace", True,
        "model.to(torch.device(\"npu\", rank) if isinstance(rank, int) else rank)",
        "Module.to(int) targets cuda:N"),
      C("checkpoint = torch.load(f\"{outdir}/best_weights.pth\", map_location=torch.device(rank))", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(f\"{outdir}/best_weights.pth\", map_location=torch.device(\"npu\", rank) if isinstance(rank, int) else rank)",
        "map_location=cuda:N fails without CUDA"),
      C("world_size <= torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "world_size <= torch.npu.device_count()",
        "cuda.device_count() is 0 on an NPU host: the assert kills every --gpus run"),
      C("but only {torch.cuda.device_count()} gpus are available", "torch_cuda_api", "replace", False,
        "), f\"--gpus is too high (specified {world_size} gpus but only {torch.npu.device_count()} gpus are available)\"",
        "assert message only"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "no-op when CUDA is not initialised"),
      C("_logger.info(torch.cuda.get_device_name(rank), color=\"purple\")", "torch_cuda_api", "replace", True,
        "_logger.info(torch.npu.get_device_name(rank), color=\"purple\")",
        "get_device_name initialises CUDA and raises"),
      C("Will use single-gpu: {torch.cuda.get_device_name(rank)}", "torch_cuda_api", "replace", True,
        "_logger.info(f\"Will use single-gpu: {torch.npu.get_device_name(rank)}\", color=\"purple\")",
        "get_device_name initialises CUDA and raises"),
      C("use_gpu=True,", "distributed_framework", "replace", True,
        "use_gpu=False,",
        "Ray would wait forever for GPU resources on an NPU cluster; Ascend devices are requested as a custom "
        "resource instead (Ray's 'NPU' resource name unconfirmed in knowledge)"),
      C("\"GPU\": 1},  # -1 to avoid blocking", "distributed_framework", "replace", True,
        "resources_per_worker={\"CPU\": max(1, args.ray_cpus // num_workers - 1), \"NPU\": 1},  # -1 to avoid blocking",
        "no GPU resources exist on the Ascend nodes (resource name unconfirmed)"),
      C("torch_config=TorchConfig(backend=\"nccl\"),", "dist_backend", "replace", True,
        "torch_config=TorchConfig(backend=\"hccl\"),",
        "Ray Train process group backend"),
  ])

E("mlpf_model", "mlpf/pyg/mlpf.py", "explicit_replacement",
  "MLPF mlpf/pyg/mlpf.py (self-attention with SDPA backend selection, flash-attn option, GravNet with torch_cluster)",
  [
      C("from torch_cluster import knn", "unsupported_op_workaround", "removal", False, None,
        "goes together with the knn rewrite below (torch_cluster has no NPU kernels)"),
      C("attn = flash_attn_func(q, k, v,", "attention_kernel", "replace", False,
        "attn = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, \"BSND\", keep_prob=1.0 - (self.dropout_mha if self.training else 0.0), scale=1.0 / math.sqrt(self.head_dim))[0]",
        "flash-attn cannot be installed on NPU; only used with attention_type=flash_external (not the shipped config)"),
      C("with sdpa_kernel(SDPA_BACKENDS[self.attention_type]):", "attention_kernel", "replace", False,
        "with (sdpa_kernel(SDPA_BACKENDS[self.attention_type]) if x.device.type == \"cuda\" else contextlib.nullcontext()):",
        "only toggles the CUDA SDPA backend flags (torch.backends.cuda.*_sdp are ✘ on NPU); NPU SDPA picks its own "
        "fused kernel -- effect on NPU unconfirmed"),
      C("edge_index = knn(s, s, self.k, batch_idx, batch_idx)", "unsupported_op_workaround", "replace", False,
        "edge_index = knn_torch(s, self.k, batch_idx)  # cdist + topk per event, native NPU ops",
        "torch_cluster custom op has no NPU kernel; torch_npu's CPU fallback (knowledge 3.8) should run it on host "
        "-- unconfirmed for third-party op namespaces; performance rewrite"),
      C("scatter_reduce_(0, dst.unsqueeze(-1)", "unsupported_op_workaround", "replace", False,
        "agg_max = msg.view(-1, self.k, msg.size(-1)).amax(dim=1)",
        "scatter_reduce is ✘ in Ascend's list and has no native kernel -> CPU fallback; knn returns exactly k "
        "neighbours per node (dst-sorted), so a dense amax is equivalent"),
  ])

E("mlpf_config", "parameters/pytorch/pyg-clic.yaml", "explicit_replacement",
  "MLPF parameters/pytorch/pyg-clic.yaml (attention model, bf16)",
  [
      C("attention_type: flash", "attention_kernel", "replace", False,
        "attention_type: math",
        "selects the CUDA FlashAttention SDPA backend (sm80); backend selection is CUDA-only, NPU behaviour unconfirmed"),
  ])

E("mlpf_pipeline", "mlpf/pyg_pipeline.py", "explicit_replacement",
  "MLPF mlpf/pyg_pipeline.py (argparse entry point, GPU counting)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU,
        "torch_npu 2.5.1 autoloads; explicit import recommended"),
      C("env = os.environ.get(\"CUDA_VISIBLE_DEVICES\", None)", "env_var", "replace", False,
        "env = os.environ.get(\"ASCEND_RT_VISIBLE_DEVICES\", None)",
        "normally unset on NPU hosts, then the device_count fallback decides"),
      C("return torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "return torch.npu.device_count()",
        "returns 0 on an NPU host -> --gpus silently reduced to 0 -> CPU training"),
  ])

E("mlpf_utils", "mlpf/pyg/utils.py", "explicit_replacement",
  "MLPF mlpf/pyg/utils.py (target/prediction unpacking, loaders, checkpoint helpers)",
  [
      C("pin_memory_device=\"cuda:{}\".format(rank) if use_cuda else \"\",", "pin_memory", "replace", True,
        "pin_memory_device=\"npu:{}\".format(rank) if use_cuda else \"\",",
        "pinning for a CUDA device raises in the DataLoader pin thread without CUDA"),
      C("t = torch.tensor([num_elems], dtype=torch.int64, device=device)", "unsupported_op_workaround", "replace", True,
        "t = torch.tensor([num_elems], dtype=torch.int32, device=device)",
        "HCCL all_gather supports bf16/fp16/fp32/int8/int32/bool only (Ascend 2.7.1 API list), not int64"),
      C("map_location = lambda storage, loc: storage.cuda(rank)", "tensor_to_device", "replace", True,
        "map_location = f\"npu:{rank}\"",
        "storage.cuda() raises on an NPU host"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if not torch.npu.is_available():",
        "hardware metadata in config.json only"),
      C("props = [torch.cuda.get_device_properties(i) for i in range(torch.cuda.device_count())]", "torch_cuda_api", "replace", False,
        "props = [torch.npu.get_device_properties(i) for i in range(torch.npu.device_count())]",
        "metadata only"),
      C("\"compute_capability\": [", "device_capability_check", "removal", False, None,
        "NPU device properties carry no major/minor (only name, total_memory, L2 cache, core counts)"),
  ])

E("mlpf_requirements", "requirements.txt", "explicit_replacement",
  "MLPF requirements.txt (cu121 torch, PyG CUDA wheels, flash-attn, mamba-ssm)",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu121", "torch_cuda_api", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "torch_npu runs on the CPU build of torch (x86: whl/cpu; aarch64: plain PyPI); cu121 has no aarch64 wheels"),
      C("torch==2.5.1+cu121", "torch_cuda_api", "replace", True,
        "torch==2.5.1",
        "CUDA local version tag cannot be resolved from the CPU index"),
      C("torchvision==0.20.1", "import_torch_npu", "npu_only_addition", True,
        "torch-npu==2.5.1.post1",
        "torch_npu wheel must match torch 2.5.1 exactly"),
      C("-f https://data.pyg.org/whl/torch-2.5.1+cu121.html", "custom_cuda_extension", "replace", True,
        "-f https://data.pyg.org/whl/torch-2.5.1+cpu.html",
        "CUDA builds of torch_cluster/torch_scatter link libcudart and fail to import without CUDA"),
      C("flash-attn==2.6.3", "attention_kernel", "removal", True, None,
        "flash-attn cannot be built/installed on NPU hosts (x86 Ascend hosts hit this; aarch64 skips via the marker)"),
      C("mamba-ssm==2.2.2", "custom_cuda_extension", "removal", True, None,
        "nvcc-built package; pip install fails without CUDA"),
      C("causal-conv1d==1.4.0", "custom_cuda_extension", "removal", True, None,
        "nvcc-built package; pip install fails without CUDA"),
      C("onnxruntime-gpu==1.19.2", "custom_cuda_extension", "replace", False,
        "onnxruntime==1.19.2",
        "only the CUDA execution provider differs; falls back to CPU (unconfirmed for aarch64 availability)"),
  ])

E("mlpf_slurm", "scripts/flatiron/pt_train_4gpu.sh", "explicit_replacement",
  "MLPF SLURM script for a 4xA100 node (module loads, CUDA/NCCL env)",
  [
      C("#SBATCH --gpus-per-task=4", "device_type", "replace", True,
        "#SBATCH --gres=npu:4",
        "GPU request cannot be satisfied on an Ascend partition (GRES name site-specific, unconfirmed)"),
      C("#SBATCH --constraint=a100-80gb,ib", "device_type", "replace", True,
        "#SBATCH --constraint=ib",
        "A100 node feature does not exist on the NPU partition; job never starts"),
      C("module load slurm gcc cmake cuda/12.1.1", "import_torch_npu", "replace", True,
        "module load slurm gcc cmake openmpi apptainer && " + SET_ENV,
        "CUDA/cuDNN/NCCL modules replaced by the CANN environment"),
      C("=nvidia-smi", "device_capability_check", "replace", False,
        "npu-smi info",
        "informational; no `set -e` in this script"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
        "exclusive node and --gpus 4 picks devices 0-3 anyway; the restriction is silently ignored"),
      C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
        "NCCL-only knob; no HCCL counterpart needed for a single-node run"),
      C("export NCCL_DEBUG=INFO", "env_var", "replace", False,
        "export ASCEND_GLOBAL_LOG_LEVEL=1",
        "log verbosity only"),
      C("--attention-type flash", "attention_kernel", "replace", False,
        "    --checkpoint-freq 1 --comet --dtype bfloat16 --attention-type math",
        "same as the YAML attention_type: CUDA SDPA backend choice, NPU effect unconfirmed"),
  ])

# ----------------------------------------------------------------------------------------------
# acorn (Exa.TrkX / GNN4ITk tracking pipeline, Lightning)
# ----------------------------------------------------------------------------------------------

E("acorn_mlutils", "acorn/utils/ml_utils.py", "explicit_replacement",
  "acorn (Exa.TrkX successor) utils/ml_utils.py (build_edges with FRNN/FAISS/PyG, cuGraph components)",
  [
      C("device = \"cuda\" if torch.cuda.is_available() else \"cpu\"", "device_type", "replace", True,
        "device = \"npu\" if torch.npu.is_available() else \"cpu\"",
        "module-level device silently becomes cpu on NPU; graph_intersection_scipy then returns CPU tensors next to NPU ones"),
      C("res = faiss.StandardGpuResources()", "unsupported_op_workaround", "replace", False,
        "D, I = torch.cdist(query, database).topk(k_max, dim=1, largest=False)",
        "faiss-gpu unavailable on NPU; only reached with backend=FAISS"),
      C("edge_list = radius(database, query, r=r_max, max_num_neighbors=k_max)", "unsupported_op_workaround", "replace", False,
        "edge_list = radius_torch(database, query, r=r_max, max_num_neighbors=k_max)  # cdist + topk",
        "default path on NPU (FRNN not installable); torch_cluster radius runs through torch_npu's CPU fallback "
        "-- unconfirmed for third-party ops; perf rewrite"),
  ])

E("acorn_gnn", "acorn/stages/edge_classifier/models/interaction_gnn.py", "explicit_replacement",
  "acorn InteractionGNN edge classifier (torch_scatter aggregation, Lightning module)",
  [
      C("from torch_scatter import scatter_add, scatter_mean, scatter_max", "unsupported_op_workaround", "replace", False,
        "from acorn.utils.scatter_compat import scatter_add, scatter_mean, scatter_max  # index_add_/amax based",
        "torch_scatter ships no NPU kernels (CPU build + torch_npu CPU fallback, unconfirmed); sum/mean map to native "
        "index_add/scatter_add, max needs a rewrite"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if self.device.type == \"npu\":",
        "memory logging callback silently skipped on NPU"),
      C("torch.cuda.reset_peak_memory_stats(self.device)", "torch_cuda_api", "replace", False,
        "torch.npu.reset_peak_memory_stats(self.device)",
        "logging only"),
      C("if torch.cuda.is_available() and self.device.type == \"cuda\":", "torch_cuda_api", "replace", False,
        "if self.device.type == \"npu\":",
        "logging only"),
      C("peak = torch.cuda.max_memory_allocated(self.device) / 1024**3", "torch_cuda_api", "replace", False,
        "peak = torch.npu.max_memory_allocated(self.device) / 1024**3",
        "logging only"),
  ])

E("acorn_trainstage", "acorn/core/train_stage.py", "explicit_replacement",
  "acorn core/train_stage.py (Lightning Trainer setup, DDPStrategy, SLURM)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "torch 2.1-era project: torch_npu import needed before any npu use"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if not torch.npu.is_available():",
        "warning message only"),
      C("accelerator = config.get(\"accelerator\") or (\"gpu\" if torch.cuda.is_available() else \"cpu\")", "distributed_framework", "replace", True,
        "accelerator = config.get(\"accelerator\") or (NPUAccelerator() if torch.npu.is_available() else \"cpu\")",
        "default silently trains on CPU; Lightning has no built-in NPU accelerator (custom Accelerator, unconfirmed)"),
      C("process_group_backend=\"nccl\",", "dist_backend", "replace", True,
        "process_group_backend=\"hccl\",",
        "DDP process group on Ascend"),
  ])

E("acorn_config", "examples/Example_1/gnn_train.yaml", "explicit_replacement",
  "acorn example GNN stage config (Lightning accelerator/devices)",
  [
      C("accelerator: gpu", "distributed_framework", "replace", True,
        "accelerator: npu",
        "Lightning raises for accelerator=gpu without CUDA; the npu value needs a registered custom accelerator (unconfirmed)"),
  ])

E("acorn_env", "gpu_environment.yml", "explicit_replacement",
  "acorn conda environment (pytorch-cuda, RAPIDS cuGraph, faiss-gpu, FRNN)",
  [
      C("=- nvidia", "torch_cuda_api", "removal", False, None,
        "channel only serves CUDA packages; harmless once they are gone"),
      C("cuda-version=11.8", "torch_cuda_api", "removal", False, None,
        "CUDA metapackage constraint; harmless without CUDA packages"),
      C("pytorch=2.1.2", "torch_cuda_api", "replace", True,
        "- pytorch=2.1.0",
        "torch_npu wheels exist for torch 2.1.0 only in the 2.1 line (wheel version = torch version)"),
      C("pytorch-cuda=11.8", "torch_cuda_api", "removal", True, None,
        "pulls the CUDA build of pytorch; not available for aarch64 Ascend hosts"),
      C("cudf=23.12", "custom_cuda_extension", "removal", True, None,
        "RAPIDS needs an NVIDIA GPU/driver; code falls back to scipy when cuGraph is absent"),
      C("cugraph=23.12", "custom_cuda_extension", "removal", True, None,
        "RAPIDS needs an NVIDIA GPU/driver"),
      C("=- cupy", "custom_cuda_extension", "removal", False, None,
        "no Ascend support, but installable and unused by the training code"),
      C("faiss-gpu=1.7.4", "custom_cuda_extension", "replace", True,
        "- faiss-cpu=1.7.4",
        "faiss-gpu requires CUDA"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True,
        "- torch-npu==2.1.0.post17",
        "torch_npu from PyPI, matching torch 2.1.0"),
      C("frnn @ git+https://github.com/murnanedaniel/FRNN.git", "custom_cuda_extension", "removal", True, None,
        "nvcc-built extension: pip build fails and aborts env creation"),
  ])

# ----------------------------------------------------------------------------------------------
# pytorch_cmspepr (CUDA kNN / object condensation extensions for HGCAL reconstruction)
# ----------------------------------------------------------------------------------------------

E("cmspepr_setup", "pytorch_cmspepr/setup.py", "kernel_rewrite",
  "cms-pepr/pytorch_cmspepr setup.py (CppExtension + CUDAExtension per op)",
  [
      C("from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension, CUDA_HOME", "custom_cuda_extension", "replace", False,
        "from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension, CUDA_HOME; from torch_npu.utils.cpp_extension import NpuExtension",
        "NPU kernels (Ascend C) are bound with NpuExtension; without them the build still produces the CPU ops"),
      C("suffices = ['cpu', 'cuda'] if WITH_CUDA else ['cpu']", "custom_cuda_extension", "add_branch", False,
        "suffices = ['cpu', 'npu'] if WITH_NPU else (['cpu', 'cuda'] if WITH_CUDA else ['cpu'])",
        "build the npu variants when torch_npu is present"),
      C("Extension = CUDAExtension", "custom_cuda_extension", "add_branch", False,
        "Extension = NpuExtension if suffix == 'npu' else CUDAExtension",
        "Ascend C sources replace the .cu kernels for the npu suffix"),
  ])

E("cmspepr_knn", "pytorch_cmspepr/torch_cmspepr/select_knn.py", "kernel_rewrite",
  "cms-pepr/pytorch_cmspepr select_knn.py (dispatch to compiled CPU/CUDA ops)",
  [
      C("neighbours, distances = torch.ops.select_knn_cuda.select_knn_cuda(x, row_splits", "custom_cuda_extension", "add_branch", True,
        "neighbours, distances = torch.ops.select_knn_npu.select_knn_npu(x, row_splits, mask, k, max_radius, mask_mode)",
        "every non-CPU tensor is sent to the CUDA op, which is not built/loaded on NPU hosts"),
      C("if beta.is_cuda:", "custom_cuda_extension", "add_branch", True,
        "if beta.device.type == 'npu': V_att, V_rep = torch.ops.oc_npu.oc_npu(beta, q, x, y, row_splits)",
        "NPU tensors would go to the CPU op, which reads raw host pointers"),
  ])

# ----------------------------------------------------------------------------------------------
# CaloDiffusion / CaloFlow (calorimeter shower generation)
# ----------------------------------------------------------------------------------------------

E("calodiffu_train", "CaloDiffusion/scripts/train_diffu.py", "explicit_replacement",
  "CaloDiffusion scripts/train_diffu.py (device selection, AMP, training loop)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "torch 2.1-era entry point"),
      C("cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "cuda = torch.npu.is_available()",
        "False on an NPU host: silently trains on CPU"),
      C("device = torch.device(\"cuda:%i\" % flags.gpu)", "device_type", "replace", True,
        "device = torch.device(\"npu:%i\" % flags.gpu)",
        "device string"),
      C("torch.cuda.manual_seed(flags.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(flags.seed)",
        "torch.manual_seed already seeds all devices (privateuse1 included -- unconfirmed); CUDA call is a silent no-op"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=flags.amp)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=flags.amp)",
        "fp16 AMP on NPU needs the NPU scaler; the CUDA one disables itself -> unscaled fp16 gradients"),
      C("with torch.cuda.amp.autocast(enabled=flags.amp):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=flags.amp):",
        "silent no-op for NPU tensors: --amp just runs fp32"),
      C("print(\"peak GPU memory: %.2f GB\"", "torch_cuda_api", "replace", False,
        "print(\"peak NPU memory: %.2f GB\" % (torch.npu.max_memory_allocated(device) / 1e9), flush=True)",
        "reads 0 from the uninitialised CUDA allocator; log only"),
      C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats(device)",
        "runs every epoch once `cuda` is true on NPU; the CUDA implementation rejects an npu device (knowledge 2.1: "
        "torch.cuda names keep their CUDA implementation and fail on NPU)"),
  ])

E("calodiffu_model", "CaloDiffusion/scripts/CaloDiffu.py", "explicit_replacement",
  "CaloDiffusion scripts/CaloDiffu.py (diffusion model, noise schedule, loss, sampler)",
  [
      C("device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")", "device_type", "replace", False,
        "device = torch.device(\"npu\" if torch.npu.is_available() else \"cpu\")",
        "only places the R/Z/phi images; add_RZPhi moves them to x.device each batch (extra H2D copy, perf only)"),
      C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", True,
        "with torch.autocast('npu', enabled=False):",
        "a CUDA autocast region does not disable NPU autocast: under --amp the energy-sum matmuls of exp'd voxels run "
        "in fp16 and can overflow or lose the precision the fp32 region was written for"),
      C("return out.reshape(batch_size, *((1,) * (len(x_shape) - 1))).cuda()", "tensor_to_device", "replace", True,
        "return out.reshape(batch_size, *((1,) * (len(x_shape) - 1))).to(t.device)",
        ".cuda() raises on an NPU host (called for every noise-schedule lookup)"),
  ])

E("calodiffu_utils", "CaloDiffusion/scripts/utils.py", "device_branch_or_abstraction",
  "CaloDiffusion scripts/utils.py (get_device helper, data loading, geometry images)",
  [
      C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        "if hasattr(torch, 'npu') and torch.npu.is_available(): dev = torch.device('npu:%i' % gpu_idx)",
        "sampling/plotting scripts silently run on CPU otherwise"),
      C("if torch.cuda.is_available() and torch.cuda.is_initialized():", "torch_cuda_api", "add_branch", False,
        "if hasattr(torch, 'npu') and torch.npu.is_available(): print(\"%s: allocated %.2f GB\" % (tag, torch.npu.memory_allocated() / 1e9), flush=True)",
        "memory print only"),
  ])

E("caloflow_run", "CaloFlow/run.py", "transfer_to_npu",
  "CaloFlow run.py (nflows MAF teacher; --which_cuda, --no_cuda, NVTX ranges)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu; from torch_npu.contrib import transfer_to_npu",
        "automatic migration: redirects torch.cuda.*, cuda device strings/devices in wrapped calls, autocast('cuda')"),
      C("torch.cuda.nvtx.range_push(name)", "torch_cuda_api", "replace", False,
        "torch_npu.npu.mstx.range_start(name)",
        "torch.cuda.nvtx is not aliased by transfer_to_npu and fails without CUDA; --nvtx profiling flag only "
        "(mstx call signature unconfirmed)"),
      C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", False,
        "torch_npu.npu.mstx.range_end(args._mstx_id)",
        "same as range_push"),
      C("major, _ = torch.cuda.get_device_capability(args.device)", "device_capability_check", "replace", True,
        "major = 8 if torch.npu.is_bf16_supported() else 0",
        "under transfer_to_npu get_device_capability returns None, so the unpacking raises (device.type stays 'cuda')"),
  ])

E("calo_docker", "CaloDiffusion/Dockerfile", "explicit_replacement",
  "CaloDiffusion-style training image (nvidia/cuda base, cu118 torch)",
  [
      C("FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", "import_torch_npu", "replace", True,
        "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.10",
        "container needs the CANN toolkit (set_env.sh exports baked in as ENV); image tag unconfirmed"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False,
        "ENV ASCEND_VISIBLE_DEVICES=0-7",
        "device mounting is done by Ascend Docker Runtime / --device flags; NVIDIA var ignored"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container toolkit only"),
      C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None,
        "no CUDA toolkit in the image; nothing compiles against it"),
      C("ENV LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH}", "env_var", "replace", False,
        "ENV LD_LIBRARY_PATH=/usr/local/Ascend/driver/lib64/common:/usr/local/Ascend/driver/lib64/driver:${LD_LIBRARY_PATH}",
        "driver libs are mounted from the host; the CANN base image already sets the toolkit paths"),
      C("RUN pip install --no-cache-dir --index-url https://download.pytorch.org/whl/cu118 \\", "torch_cuda_api", "replace", True,
        "RUN pip install --no-cache-dir --index-url https://download.pytorch.org/whl/cpu \\",
        "torch_npu needs the CPU build of torch; cu118 has no aarch64 wheels"),
      C("torch==2.1.0 torchvision==0.16.0", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install --no-cache-dir torch-npu==2.1.0.post17",
        "torch_npu 2.1.0.post17 pairs with torch 2.1.0 and CANN 8.3.RC1"),
  ])
