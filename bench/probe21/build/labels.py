"""Labels for probe21 (hand-written synthetic upstream files; see ../README.md).

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

TN = ("registers the NPU backend and the torch.npu namespace; mandatory before torch_npu 2.5.1 and still "
      "recommended after (knowledge torch-npu-migration.md §1.1)")
ISAV = ("torch.cuda.is_available() is False on an NPU host, so this pushes the run onto the CPU path; "
        "torch.npu.is_available() (knowledge §2.1)")
AMP = ("CUDA autocast/GradScaler is inactive for NPU tensors, so fp16 runs without autocast or loss scaling; "
       "torch.npu.amp / torch.amp with device_type='npu' (knowledge §2.1, 2.7.1 API table)")
NCCL = "NCCL does not exist on Ascend; HCCL is the collective backend (knowledge §2.4, ascend-distributed.md §6.1)"
CUDEV = "a 'cuda' device on an NPU host raises (no CUDA build); 'npu' device (knowledge §2.2, §3.4 ReplaceStringRule)"
DOTCUDA = "Tensor/Module.cuda() needs a CUDA build; .npu() or .to(device) (knowledge §2.3, §3.4 FuncNameModifyRule)"
EMPTY = "torch.cuda.empty_cache() is a silent no-op without CUDA initialised; torch.npu.empty_cache() (knowledge §3.4)"

# ---------------------------------------------------------------- RFdiffusion
E("rfd_run_inference", "scripts/run_inference.py", "explicit_replacement",
  "RFdiffusion scripts/run_inference.py (hydra entry point)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", TN),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "seeding the CUDA generator is lazy/no-op without CUDA, so NPU RNG stays unseeded -> designs not reproducible; "
      "torch.npu.manual_seed_all (knowledge §2.1). Not a crash, so not required"),
    C("if torch.cuda.is_available():", "torch_cuda_api", R, True, "if torch.npu.is_available():", ISAV),
    C("device_name = torch.cuda.get_device_name(torch.cuda.current_device())", "torch_cuda_api", R, False,
      "device_name = torch.npu.get_device_name(torch.npu.current_device())",
      "only reached inside the is_available() branch, which the unchanged code never takes on NPU (knowledge §2.1)"),
    C("device=torch.cuda.get_device_name(torch.cuda.current_device()) if on_gpu", "torch_cuda_api", R, True,
      "device=torch.npu.get_device_name(torch.npu.current_device()) if on_gpu else \"CPU\",",
      "on_gpu is False on NPU until describe_device() is ported, so the unchanged code never evaluates this; once it "
      "is, torch.cuda.get_device_name raises without a CUDA build"),
    C("Peak GPU memory", "torch_cuda_api", R, False,
      "log.info(f\"Peak NPU memory: {torch.npu.max_memory_allocated() / 2**30:.2f} GiB\")",
      "reached once on_gpu is True on NPU; with CUDA never initialised torch.cuda.max_memory_allocated silently "
      "returns 0 (a wrong log value, no crash); torch.npu.max_memory_allocated (knowledge §2.1)"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, False, "torch.npu.reset_peak_memory_stats()",
      "same on_gpu branch (not taken by the unchanged code on NPU); would resolve the current CUDA device and raise; "
      "torch.npu.reset_peak_memory_stats (knowledge §2.1)"),
  ])

E("rfd_sampler", "rfdiffusion/inference/model_runners.py", "explicit_replacement",
  "RFdiffusion rfdiffusion/inference/model_runners.py (Sampler)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", TN),
    C("if torch.cuda.is_available():", "torch_cuda_api", R, True, "if torch.npu.is_available():", ISAV),
    C('self.device = torch.device("cuda")', "device_type", R, False, 'self.device = torch.device("npu")',
      "inside the is_available() branch, which the unchanged code never takes on NPU; " + CUDEV),
    C("seq_tmp = seq_tmp.cuda()", "tensor_to_device", R, True, "seq_tmp = seq_tmp.to(self.device)", DOTCUDA),
    C("msa_masked = msa_masked.cuda()", "tensor_to_device", R, True, "msa_masked = msa_masked.to(self.device)", DOTCUDA),
    C("msa_full = msa_full.cuda()", "tensor_to_device", R, True, "msa_full = msa_full.to(self.device)", DOTCUDA),
    C("t1d = t1d.cuda()", "tensor_to_device", R, True, "t1d = t1d.to(self.device)", DOTCUDA),
    C("t2d = t2d.cuda()", "tensor_to_device", R, True, "t2d = t2d.to(self.device)", DOTCUDA),
    C("idx = idx.cuda()", "tensor_to_device", R, True, "idx = idx.to(self.device)", DOTCUDA),
  ])

E("rfd_env", "env/SE3nv.yml", "explicit_replacement",
  "RFdiffusion env/SE3nv.yml (conda environment)", [
    C("=- nvidia", "device_type", X, False, None,
      "the nvidia channel only serves CUDA runtime packages; harmless but useless on an NPU host"),
    C("=- pytorch=1.9", "device_type", R, True, "- pytorch=2.1.0  # CPU build + torch-npu==2.1.0.post* via pip",
      "torch 1.9 has no torch_npu release paired with a current CANN; torch_npu wheel must equal the torch version "
      "(knowledge §1.1-1.3: oldest listed pairs are 1.5/1.8/1.11)"),
    C("=- cudatoolkit=11.1", "device_type", X, True, None,
      "cudatoolkit cannot be used on an Ascend host; CANN toolkit is installed outside conda (knowledge §6)"),
    C("=- dgl-cuda11.1", "custom_cuda_extension", R, True, "- dgl  # CPU build; SE3-Transformer graph ops then run through torch ops on NPU",
      "the dgl CUDA build links libcudart and fails to load; no Ascend DGL build in the knowledge (unconfirmed whether "
      "the CPU build's sparse kernels accept NPU tensors)"),
    C("pynvml==11.0.0", "torch_cuda_api", X, False, None,
      "pynvml has no NPU equivalent (knowledge §6: use torch.npu.utilization / mem_get_info); only used for logging"),
    C("=- pip:", "import_torch_npu", A, True, "- pip:\n      - torch-npu==2.1.0.post17",
      "torch_npu wheel matching the torch pin (knowledge §1.2: 2.1.0.post17 <-> torch 2.1.0, CANN 8.3.RC1)"),
  ])

# ---------------------------------------------------------------- ProteinMPNN
E("pmpnn_run", "protein_mpnn_run.py", "explicit_replacement",
  "ProteinMPNN protein_mpnn_run.py (sequence design CLI)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\n    import torch_npu", TN),
    C('device = torch.device("cuda:0" if (torch.cuda.is_available()) else "cpu")', "device_type", R, True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")', ISAV),
  ])

E("pmpnn_train", "training/training.py", "explicit_replacement",
  "ProteinMPNN training/training.py (mixed-precision trainer)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\n    import torch_npu", TN),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", R, True, "scaler = torch.npu.amp.GradScaler()", AMP),
    C('device = torch.device("cuda:0" if (torch.cuda.is_available()) else "cpu")', "device_type", R, True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")', ISAV),
    C("checkpoint = torch.load(PATH)", "device_type", R, True, "checkpoint = torch.load(PATH, map_location=device)",
      "checkpoints written by this script on a GPU hold cuda tensors; torch.load without map_location tries to "
      "restore them to CUDA and raises on an NPU host (knowledge §2.2 rewrites map_location for this reason)"),
    C("with torch.cuda.amp.autocast():", "amp", R, True, "with torch.npu.amp.autocast():", AMP),
    C("optimizer = get_std_opt(model.parameters(), args.hidden_dim, total_step)", "fused_optimizer", R, False,
      "optimizer = get_std_opt(model.parameters(), args.hidden_dim, total_step)  # NoamOpt over torch_npu.optim.NpuFusedAdam",
      "performance only: the Noam wrapper builds torch.optim.Adam; NpuFusedAdam is the tensor-fusion version "
      "(knowledge §5 fused optimizers, §3.5 advice)"),
  ])

E("pmpnn_submit", "training/submit_exp_020.sh", "explicit_replacement",
  "ProteinMPNN training/submit_exp_020.sh (Slurm launch)", [
    C("#SBATCH --gres=gpu:a100:1", "device_type", R, False, "#SBATCH --gres=npu:1",
      "requests a GPU the NPU partition does not have; the gres name for NPUs is site-specific (unconfirmed)"),
    C("module load cuda/11.3", "env_var", R, True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "no CUDA module on an Ascend host (set -e aborts); without set_env.sh torch_npu cannot find libhccl/libascendcl "
      "(knowledge ascend-host-formats.md §3.8, §4.1)"),
    C("export CUDA_VISIBLE_DEVICES=", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0}",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so the job lands on NPU 0 whatever was allocated; "
      "ASCEND_RT_VISIBLE_DEVICES (knowledge ascend-distributed.md §1)"),
    C("export CUDA_LAUNCH_BLOCKING=0", "env_var", R, False, "export ASCEND_LAUNCH_BLOCKING=0",
      "value 0 is the default anyway; NPU analogue name unconfirmed in the knowledge"),
    C("nvidia-smi --query-gpu", "device_type", R, True,
      "npu-smi info > \"${OUT}/npu_info.txt\"",
      "nvidia-smi is not installed on an Ascend host and set -e stops the job; npu-smi info "
      "(knowledge ascend-host-formats.md §1, torch-npu-migration.md §6)"),
  ])

# ---------------------------------------------------------------- DiffDock
PYG = ("PyG wheels built against a CUDA torch (+cu117) do not load next to the CPU torch that torch_npu pairs with; "
       "use the +cpu wheels (knowledge §1.1: x86 installs CPU torch; §6: compiled extensions have no NPU kernels)")
E("diffdock_inference", "inference.py", "explicit_replacement",
  "DiffDock inference.py (docking CLI)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", TN),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", R, True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')", ISAV),
    C("peak mem {torch.cuda.max_memory_allocated()", "torch_cuda_api", R, False,
      "print(f\"{complex_name_list[idx]}: {run_time:.1f}s, peak mem {torch.npu.max_memory_allocated() / 1e9:.2f} GB\")",
      "CUDA never initialised -> silently prints 0; torch.npu.max_memory_allocated (knowledge §2.1)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY),
  ])

E("diffdock_model", "models/score_model.py", "explicit_replacement",
  "DiffDock models/score_model.py (e3nn tensor-product score model, torch_cluster graphs)", [
    C("from torch_cluster import radius, radius_graph", "custom_cuda_extension", R, False,
      "from utils.graph_ops import radius, radius_graph  # torch.cdist + topk based, runs on NPU",
      "the import itself works with the CPU wheel; edited because the call sites below are replaced"),
    C("from torch_scatter import scatter, scatter_mean, scatter_max", "custom_cuda_extension", R, False,
      "from torch_scatter import scatter, scatter_mean",
      "scatter/scatter_mean are pure torch (scatter_add_) inside torch_scatter and keep working; scatter_max is the "
      "compiled op that goes (unconfirmed: torch_scatter internals are not in the knowledge)"),
    C("radius_edges = radius_graph(data['ligand'].pos", "custom_cuda_extension", R, True,
      "radius_edges = radius_graph(data['ligand'].pos, self.lig_max_radius, data['ligand'].batch)  # local torch.cdist version",
      "torch_cluster has CPU and CUDA kernels only; NPU tensors reach neither (knowledge §6 custom extensions; "
      "torch_cluster itself is not covered there)"),
    C("edge_index = radius(data['receptor'].pos / cross_distance_cutoff", "custom_cuda_extension", R, True,
      "edge_index = radius(data['receptor'].pos / cross_distance_cutoff[data['receptor'].batch],  # local torch.cdist version",
      "same as radius_graph: compiled torch_cluster op without an NPU kernel"),
    C("edge_index = radius(data['receptor'].pos, data['ligand'].pos, cross_distance_cutoff,", "custom_cuda_extension", R, True,
      "edge_index = radius(data['receptor'].pos, data['ligand'].pos, cross_distance_cutoff,  # local torch.cdist version",
      "same as above (torch.cdist is ✔ on A2 in knowledge ops/torch_api_npu_support_2.7.1.tsv)"),
    C("max_pool, _ = scatter_max(node_attr, batch, dim=0, dim_size=num_graphs)", "custom_cuda_extension", R, True,
      "max_pool = torch.zeros_like(mean_pool).index_reduce_(0, batch, node_attr, 'amax', include_self=False)",
      "compiled torch_scatter op (CPU/CUDA kernels only); index_reduce is ✔ on A2 but 'may fall back to CPU' "
      "(knowledge ops/torch_api_npu_support_2.7.1.tsv)"),
    C('out.scatter_reduce_(0, batch.unsqueeze(-1).expand_as(pos), pos, reduce="mean", include_self=False)',
      "unsupported_op_workaround", R, True,
      "out.index_add_(0, batch, pos); out = out / torch.bincount(batch, minlength=num_graphs).clamp(min=1).unsqueeze(-1).to(pos.dtype)",
      "torch.scatter_reduce is ✘ on A2/A3 and in msFmkTransplt's unsupported list (knowledge "
      "ops/torch_api_npu_support_2.7.1.tsv, ops/mstt_unsupported_torch_apis_2.7.txt); index_add ✔"),
  ])

E("diffdock_env", "environment.yml", "explicit_replacement",
  "DiffDock environment.yml (conda + PyG wheels)", [
    C("=- nvidia", "device_type", X, False, None, "CUDA runtime channel, useless on an Ascend host"),
    C("=- pytorch=1.13.1", "device_type", R, True, "- pytorch=2.1.0=*cpu*",
      "torch 1.13 has no torch_npu release (knowledge §1.2-1.3 list 1.11 then 2.0.1/2.1.0)"),
    C("=- pytorch-cuda=11.7", "device_type", X, True, None, "pulls the CUDA build of torch; no CUDA on an NPU host"),
    C("--find-links https://data.pyg.org/whl/torch-1.13.1+cu117.html", "custom_cuda_extension", R, True,
      "- --find-links https://data.pyg.org/whl/torch-2.1.0+cpu.html", PYG),
    C("torch-cluster==1.6.0+pt113cu117", "custom_cuda_extension", R, True, "- torch-cluster==1.6.3+pt21cpu", PYG),
    C("torch-scatter==2.1.0+pt113cu117", "custom_cuda_extension", R, True, "- torch-scatter==2.1.2+pt21cpu", PYG),
    C("torch-sparse==0.6.16+pt113cu117", "custom_cuda_extension", R, True, "- torch-sparse==0.6.18+pt21cpu", PYG),
    C("torch-spline-conv==1.2.1+pt113cu117", "custom_cuda_extension", R, True, "- torch-spline-conv==1.2.2+pt21cpu", PYG),
    C("openfold @ git+", "custom_cuda_extension", R, False,
      "- openfold @ git+https://github.com/aqlaboratory/openfold.git@4b41059694619831a7db195b7e0988fc4ff3a307  # built without its CUDA kernels",
      "openfold's setup builds attention CUDA kernels; whether it installs cleanly without nvcc is unconfirmed"),
    C("=- pip:", "import_torch_npu", A, True, "- pip:\n      - torch-npu==2.1.0.post17",
      "torch_npu wheel matching torch 2.1.0 (knowledge §1.2)"),
  ])

# ---------------------------------------------------------------- Uni-Core / Uni-Mol
GUARD = "only reached under a torch.cuda.is_available()/self.cuda guard that is False on NPU until ported; "
E("unicore_softmax", "unicore/modules/softmax_dropout.py", "device_branch_or_abstraction",
  "Uni-Core unicore/modules/softmax_dropout.py (fused softmax+dropout CUDA op, guarded)", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu",
      "only needed for the optional fused NPU branch below; the unchanged file already runs on NPU via its "
      "input.is_cuda fallback"),
    C("if input.is_cuda and HAS_SOFTMAX:", "npu_fused_op", B, False,
      "if input.is_npu and bias is None and mask is not None and mask.shape == input.shape: "
      "return torch_npu.npu_dropout_with_add_softmax(mask, input, 1.0, dropout_prob, -1)[2] if is_training else F.softmax(input + mask, -1)\n    if input.is_cuda and HAS_SOFTMAX:",
      "performance only: the is_cuda guard sends NPU tensors to the unfused torch path, which works; "
      "npu_dropout_with_add_softmax exists (knowledge ops/npu_custom_ops_torch2.7.1_v7.3.0.txt) but its exact "
      "argument order/outputs for this use are unconfirmed"),
  ])

E("unicore_norm", "unicore/modules/layer_norm.py", "device_branch_or_abstraction",
  "Uni-Core unicore/modules/layer_norm.py (fused LayerNorm/RMSNorm CUDA ops, guarded)", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu",
      "only needed for the optional npu_rms_norm path; the unchanged file already runs on NPU"),
    C("self.func = torch_rms_norm if (not HAS_RMS_NORM", "npu_fused_op", R, False,
      "self.func = (lambda x: torch_npu.npu_rms_norm(x, self.weight.type(x.dtype), self.eps)[0]) if torch.npu.is_available() else (torch_rms_norm if (not HAS_RMS_NORM or normalized_shape[0] not in FUSED_LAYER_NORM_SUPPORT_DIM) else fused_rms_norm)",
      "performance only: the torch fallback is used on NPU; torch_npu.npu_rms_norm(x, gamma, epsilon) -> (y, rstd) "
      "(knowledge §5)"),
  ])

E("unicore_utils", "unicore/utils.py", "explicit_replacement",
  "Uni-Core unicore/utils.py (move_to_cuda, RNG helpers, CudaEnvironment, fused multi-tensor norm)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", TN),
    C("device = device or torch.cuda.current_device()", "torch_cuda_api", R, False,
      "device = device or torch.npu.current_device()",
      "move_to_cuda is only called by Trainer under self.cuda (False on NPU until ported); torch.cuda.current_device "
      "raises without a CUDA build (knowledge §2.1)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "lazily queued and silently dropped without CUDA: NPU dropout RNG unseeded, runs not reproducible (knowledge §2.1)"),
    C("cuda_state = torch.cuda.get_rng_state()", "torch_cuda_api", R, True, "npu_state = torch.npu.get_rng_state()",
      "get_rng_state initialises CUDA and raises on an NPU host; torch.npu.get_rng_state (knowledge §2.1)"),
    C("=torch.cuda.manual_seed(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(seed)",
      "silently queued without CUDA; NPU RNG not seeded inside the context (knowledge §2.1)"),
    C("torch.cuda.set_rng_state(cuda_state)", "torch_cuda_api", R, False, "torch.npu.set_rng_state(npu_state)",
      "queued and dropped without CUDA (no crash), NPU RNG state not restored; torch.npu.set_rng_state (knowledge §2.1)"),
    C("cur_device = torch.cuda.current_device()", "torch_cuda_api", R, False, "cur_device = torch.npu.current_device()",
      "CudaEnvironment is only built by Trainer under self.cuda; " + GUARD + "torch.npu.current_device"),
    C('prop = torch.cuda.get_device_properties("cuda:{}".format(cur_device))', "device_capability_check", R, False,
      'prop = torch.npu.get_device_properties("npu:{}".format(cur_device))', GUARD + "knowledge §2.1"),
    C("self.major = prop.major", "device_capability_check", R, False, "self.major = getattr(prop, 'major', 0)",
      GUARD + "NPU device properties carry only name, total_memory, L2_cache_size, cube_core_num, vector_core_num "
      "(knowledge §2.8 and 2.7.1 API table)"),
    C("self.minor = prop.minor", "device_capability_check", R, False, "self.minor = getattr(prop, 'minor', 0)",
      GUARD + "no minor attribute on NPU properties (knowledge §2.8)"),
  ])

E("unicore_trainer", "unicore/trainer.py", "explicit_replacement",
  "Uni-Core unicore/trainer.py (fp16/bf16 data-parallel trainer)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", TN),
    C("self.cuda = torch.cuda.is_available()", "torch_cuda_api", R, True, "self.cuda = torch.npu.is_available()",
      ISAV + "; also drops the half-precision model onto CPU, where fp16 training is unusably slow"),
    C('self.device = torch.device("cuda")', "device_type", R, False, 'self.device = torch.device("npu")', GUARD + CUDEV),
    C("self._grad_norm_buf = torch.cuda.DoubleTensor(self.data_parallel_world_size)", "torch_cuda_api", R, False,
      "self._grad_norm_buf = torch.zeros(self.data_parallel_world_size, dtype=torch.float32, device=self.device)",
      GUARD + "torch.cuda.DoubleTensor needs CUDA and fp64 is not supported on NPU (transfer_to_npu maps it to "
      "FloatTensor, knowledge §2.3)"),
    C("if self.cuda and torch.cuda.get_device_capability(0)[0] < 7:", "device_capability_check", R, False,
      'if self.device.type == "cuda" and torch.cuda.get_device_capability(0)[0] < 7:',
      GUARD + "get_device_capability returns None on NPU (knowledge §2.8), so [0] raises TypeError"),
    C("if self.cuda and torch.cuda.get_device_capability(0)[0] >= 7:", "device_capability_check", R, False,
      'if self.device.type == "cuda" and torch.cuda.get_device_capability(0)[0] >= 7:',
      GUARD + "same None capability on NPU (knowledge §2.8)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY),
    C("torch.cuda.empty_cache()  # release cached blocks", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # release cached blocks before retrying", EMPTY + "; matters for OOM recovery"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, False, "torch.npu.synchronize()",
      GUARD + "torch.cuda.synchronize raises without a CUDA build (knowledge §2.1)"),
    C('if torch.cuda.is_available() and hasattr(torch.cuda, "memory_summary"):', "torch_cuda_api", R, False,
      'if torch.npu.is_available():',
      "False on NPU, so the OOM log just lacks the memory summary (diagnostics only)"),
    C("for device_idx in range(torch.cuda.device_count()):", "torch_cuda_api", R, False,
      "for device_idx in range(torch.npu.device_count()):", GUARD + "knowledge §2.1"),
    C("logger.warning(torch.cuda.memory_summary(device=device_idx))", "torch_cuda_api", R, False,
      "logger.warning(torch.npu.memory_summary(device=device_idx))", GUARD + "torch.npu.memory_summary (knowledge §2.1)"),
  ])

E("unicore_dist", "unicore/distributed/utils.py", "explicit_replacement",
  "Uni-Core unicore/distributed/utils.py (fairseq-style distributed init, Slurm inference)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", TN),
    C("gpus_per_node = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "gpus_per_node = torch.npu.device_count()",
      "torch.cuda.device_count() is 0 on an NPU host -> world size 0 under Slurm; torch.npu.device_count (knowledge §2.1)"),
    C("assert args.distributed_world_size <= torch.cuda.device_count()", "torch_cuda_api", R, True,
      "assert args.distributed_world_size <= torch.npu.device_count()",
      "device_count() is 0 on NPU, the assertion fails for any multi-device run"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():",
      "unchanged it only skips the warm-up all-reduce on NPU (HCCL initialises lazily on the first collective)"),
    C("dist.all_reduce(torch.zeros(1).cuda())", "tensor_to_device", R, False, "dist.all_reduce(torch.zeros(1).npu())",
      GUARD + DOTCUDA),
    C("if torch.cuda.is_available() and not args.cpu:", "torch_cuda_api", R, True,
      "if torch.npu.is_available() and not args.cpu:",
      "without it every rank stays on npu:0 and HCCL cannot build a communicator with several ranks on one device; "
      "ascend-distributed.md §6.1 asks for torch.npu.set_device(local_rank)"),
    C("torch.cuda.set_device(args.device_id)", "torch_cuda_api", R, False, "torch.npu.set_device(args.device_id)",
      GUARD + "torch.npu.set_device (knowledge §2.1)"),
    C("nprocs=min(torch.cuda.device_count(), args.distributed_world_size),", "torch_cuda_api", R, True,
      "nprocs=min(torch.npu.device_count(), args.distributed_world_size),",
      "device_count() is 0 on NPU, so spawn starts no workers"),
    C("all_gather_list._buffer = torch.cuda.ByteTensor(buffer_size)", "torch_cuda_api", R, True,
      "all_gather_list._buffer = torch.zeros(buffer_size, dtype=torch.uint8, device='npu')",
      "torch.cuda.ByteTensor needs a CUDA build; HCCL all_reduce needs a device buffer"),
    C("all_gather_list._cpu_buffer = torch.ByteTensor(max_size).pin_memory()", "pin_memory", R, False,
      "all_gather_list._cpu_buffer = torch.ByteTensor(max_size).pin_memory()  # pinned for the NPU with torch_npu loaded",
      "pin_memory() targets the CUDA host allocator by default; whether torch_npu redirects it is unconfirmed"),
    C("default=max(1, torch.cuda.device_count()),", "torch_cuda_api", R, True,
      "default=max(1, torch.npu.device_count()),",
      "defaults to world size 1 on an 8-NPU host, silently training on one device"),
    C('group.add_argument("--distributed-backend", default="nccl"', "dist_backend", R, True,
      'group.add_argument("--distributed-backend", default="hccl", type=str, help="distributed backend")', NCCL),
  ])

EXT = ("nvcc-built CUDA kernel: no nvcc on an Ascend host and no NPU kernel (knowledge §6 custom CUDA extensions); "
       "the porter builds this CUDAExtension only when CUDA_HOME is set and relies on Uni-Core's torch fallbacks on NPU")
E("unicore_setup", "setup.py", "explicit_replacement",
  "Uni-Core setup.py (CUDAExtension builds for fused ops)", [
    C("if not torch.cuda.is_available():", "torch_cuda_api", R, True,
      "if CUDA_HOME is not None and not torch.cuda.is_available():",
      "True on every NPU host, so the cross-compile branch runs nvcc lookup on CUDA_HOME=None and the install crashes"),
    C('raise RuntimeError("Cuda extensions are being compiled', "custom_cuda_extension", R, True,
      'print("CUDA_HOME not found: installing Uni-Core without its fused CUDA kernels")',
      "aborts pip install on an NPU host (no CUDA toolkit); knowledge §6"),
    C("_, bare_metal_major, bare_metal_minor = get_cuda_bare_metal_version(CUDA_HOME)", "custom_cuda_extension", R, True,
      "_, bare_metal_major, bare_metal_minor = get_cuda_bare_metal_version(CUDA_HOME) if CUDA_HOME else (None, '0', '0')",
      "runs $CUDA_HOME/bin/nvcc -V unconditionally"),
    C('name="unicore_fused_rounding",', "custom_cuda_extension", R, True, 'name="unicore_fused_rounding",', EXT),
    C('name="unicore_fused_multi_tensor",', "custom_cuda_extension", R, True, 'name="unicore_fused_multi_tensor",', EXT),
    C('name="unicore_fused_adam",', "custom_cuda_extension", R, True, 'name="unicore_fused_adam",',
      EXT + "; the Adam step itself maps to torch_npu.optim.NpuFusedAdam (knowledge §5)"),
    C('name="unicore_fused_softmax_dropout",', "custom_cuda_extension", R, True, 'name="unicore_fused_softmax_dropout",', EXT),
    C('name="unicore_fused_layernorm",', "custom_cuda_extension", R, True, 'name="unicore_fused_layernorm",', EXT),
    C('name="unicore_fused_layernorm_backward_gamma_beta",', "custom_cuda_extension", R, True,
      'name="unicore_fused_layernorm_backward_gamma_beta",', EXT),
  ])

E("unimol_pretrain", "examples/mol_pretrain.sh", "explicit_replacement",
  "Uni-Mol examples/mol_pretrain.sh (8-GPU unicore-train launch)", [
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "NCCL variable has no effect with HCCL; HCCL_ASYNC_ERROR_HANDLING is the torch_npu watchdog switch "
      "(knowledge ascend-distributed.md §1)"),
    C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", X, False, None,
      "CUDA stream-connection knob, meaningless on Ascend (NPU analogue unconfirmed)"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime (knowledge ascend-distributed.md §1)"),
    C("torch.version.cuda, torch.cuda.device_count()", "torch_cuda_api", R, False,
      "python -c \"import torch, torch_npu; print(torch.__version__, torch_npu.__version__, torch.npu.device_count())\" | tee \"${save_dir}/env.txt\"",
      "only logs None / 0 on an NPU host"),
    C("--distributed-backend nccl", "dist_backend", R, True, "--distributed-backend hccl", NCCL),
    C("CUDA_VISIBLE_DEVICES=0 python $(which unicore-train)", "env_var", R, True,
      "ASCEND_RT_VISIBLE_DEVICES=0 python $(which unicore-train) ./molecular_property_prediction \\",
      "ignored on Ascend: the 'single GPU' fine-tune sees all NPUs and, with the ported device_count default, "
      "spawns one worker per NPU"),
  ])

# ---------------------------------------------------------------- TorchDrug
DEVT = ('after the device fix the type is "npu", so this check silently skips the move and the run mixes CPU and NPU '
        'tensors; the porter tests device.type != "cpu"')
E("torchdrug_engine", "torchdrug/core/engine.py", "explicit_replacement",
  "TorchDrug torchdrug/core/engine.py (Engine with gpus=[...] list)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", TN),
    C("self.device = torch.device(gpus[self.rank % len(gpus)])", "device_type", R, True,
      'self.device = torch.device("npu", gpus[self.rank % len(gpus)])',
      "torch.device(int) means a CUDA device index, so gpus=[0,1,...] builds cuda:N devices that do not exist on "
      "an NPU host (knowledge §2.2: transfer_to_npu rewrites int device arguments for this reason)"),
    C('backend = "gloo" if gpus is None else "nccl"', "dist_backend", R, True,
      'backend = "gloo" if gpus is None else "hccl"', NCCL),
    C('=if self.device.type == "cuda":', "device_type", R, True, 'if self.device.type != "cpu":', DEVT),
    C("task = task.cuda(self.device)", "tensor_to_device", R, True, "task = task.to(self.device)", DOTCUDA),
    C('if self.device.type == "cuda":  # one device per process', "device_type", R, True,
      'if self.device.type != "cpu":  # one device per process',
      DEVT + "; without device_ids DDP on NPU still works but this is the intended branch"),
    C('if self.device.type == "cuda":  # move the batch to the device', "device_type", R, True,
      'if self.device.type != "cpu":  # move the batch to the device', DEVT),
    C('if self.device.type == "cuda":  # same as in train()', "device_type", R, True,
      'if self.device.type != "cpu":  # same as in train()', DEVT),
  ])

E("torchdrug_utils", "torchdrug/utils/torch.py", "explicit_replacement",
  "TorchDrug torchdrug/utils/torch.py (JIT cpp_extension.load, utils.cuda helper)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", TN),
    C("instance = cpp_extension.load(self.name, self.sources", "custom_cuda_extension", R, True,
      "instance = importlib.import_module(self.name)  # prebuilt with CppExtension/NpuExtension in setup.py",
      "torch.utils.cpp_extension.load is ✘ on Atlas A2/A3 in Ascend's 2.7.1 API list (knowledge §6, "
      "ops/torch_api_npu_support_2.7.1.tsv); CppExtension/BuildExtension are ✔"),
    C('if hasattr(obj, "cuda"):', "tensor_to_device", R, True, 'if hasattr(obj, "to"):',
      "public helper used by Engine and user scripts; Tensor.cuda(device=npu) raises"),
    C("return obj.cuda(*args, **kwargs)", "tensor_to_device", R, True, "return obj.to(*args, **kwargs)", DOTCUDA),
    C("return torch_ext.sparse_coo_tensor_unsafe(indices, values, size)", "custom_cuda_extension", R, False,
      "return torch.sparse_coo_tensor(indices, values, size, check_invariants=False)",
      "avoids the JIT extension; torch.sparse_coo_tensor is ✔ on A2 with int32/int64 indices (knowledge "
      "ops/torch_api_npu_support_2.7.1.tsv); the original C++ would be device-generic once built"),
  ])

# ---------------------------------------------------------------- scGPT
E("scgpt_model", "scgpt/model/model.py", "device_branch_or_abstraction",
  "scGPT scgpt/model/model.py (FlashMHA encoder layer with guarded flash_attn import)", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu",
      "only needed for the optional NPU flash-attention layer; the unchanged file falls back to the PyTorch encoder"),
    C("from flash_attn.flash_attention import FlashMHA", "attention_kernel", R, False,
      "from .npu_flash_mha import NpuFlashMHA as FlashMHA  # wraps torch_npu.npu_fusion_attention",
      "flash-attn cannot be installed on NPU (knowledge §6); the try/except already falls back to "
      "nn.TransformerEncoderLayer, so this is performance only"),
    C("self.self_attn = FlashMHA(", "attention_kernel", R, False,
      "self.self_attn = NpuFlashMHA(",
      "only built when flash_attn imports, which never happens on NPU; npu_fusion_attention with input_layout "
      "'BSND' and the padding mask as atten_mask (knowledge §5 flash_attn mapping)"),
  ])

E("scgpt_finetune", "examples/finetune_integration.py", "explicit_replacement",
  "scGPT examples/finetune_integration.py (AMP fine-tuning notebook script)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", TN),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")', ISAV),
    C('model.load_state_dict(torch.load(Path(config.load_model) / "best_model.pt"))', "device_type", R, True,
      'model.load_state_dict(torch.load(Path(config.load_model) / "best_model.pt", map_location="cpu"))',
      "the released checkpoint was saved from CUDA tensors; torch.load without map_location restores to CUDA and "
      "raises on an NPU host (the bare except then hits the same error below)"),
    C('pretrained_dict = torch.load(Path(config.load_model) / "best_model.pt")', "device_type", R, True,
      'pretrained_dict = torch.load(Path(config.load_model) / "best_model.pt", map_location="cpu")',
      "same CUDA-tensor checkpoint; no except around this one, so the script dies here"),
    C("optimizer = torch.optim.Adam(model.parameters(), lr=config.lr", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdam(model.parameters(), lr=config.lr, eps=1e-4 if config.amp else 1e-8)",
      "performance only (knowledge §5 fused optimizers, §3.5 advice)"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=config.amp)", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler(enabled=config.amp)", AMP),
    C("with torch.cuda.amp.autocast(enabled=config.amp):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=config.amp):", AMP),
    C("with torch.cuda.amp.autocast(enabled=config.amp, dtype=torch.float16):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=config.amp, dtype=torch.float16):", AMP),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY),
  ])

E("scgpt_tokenizer", "scgpt/tokenizer/gene_tokenizer.py", "explicit_replacement",
  "scGPT scgpt/tokenizer/gene_tokenizer.py (CPU-only gene vocabulary and padding; no labels)", [])

# ---------------------------------------------------------------- Geneformer
E("geneformer_ft", "examples/cell_classification.py", "explicit_replacement",
  "Geneformer examples/cell_classification.py (HF Trainer fine-tuning)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = ', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = ",".join([str(s) for s in GPU_NUMBER])',
      "ignored by the Ascend runtime, so the device selection is lost (knowledge ascend-distributed.md §1)"),
    C('os.environ["NCCL_DEBUG"] = "INFO"', "env_var", X, False, None,
      "NCCL logging switch, no effect with HCCL (HCCL log variables are set differently; unconfirmed equivalent)"),
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", TN),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", R, False, "num_gpus = torch.npu.device_count()",
      "0 on NPU; only skews logging_steps (max(num_gpus, 1)) and the final print"),
    C(').to("cuda")', "device_type", R, True, ').to("npu")', CUDEV),
    C('"ddp_backend": "nccl",', "dist_backend", R, True, '"ddp_backend": "hccl",',
      NCCL + "; transformers accepts ddp_backend='hccl'"),
    C("peak memory: {torch.cuda.max_memory_allocated()", "torch_cuda_api", R, False,
      'print(f"peak memory: {torch.npu.max_memory_allocated() / 2**30:.1f} GiB on {num_gpus} NPU(s)")',
      "CUDA never initialised -> silently prints 0 (knowledge §2.1)"),
  ])

# ---------------------------------------------------------------- DNABERT-2
E("dnabert2_flash", "flash_attn_triton.py", "kernel_rewrite",
  "DNABERT-2 flash_attn_triton.py (Triton FlashAttention forward with ALiBi bias)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", TN),
    C("qk += tl.dot(q, k, trans_b=True)", "triton_kernel_tuning", R, True, "qk += tl.dot(q, tl.trans(k))",
      "the only Triton on Ascend is triton-ascend (Triton 3.2.0, knowledge §6); tl.dot lost its trans_b argument "
      "after the 2022 nightly this file pins, so the kernel does not compile there"),
    C("assert q.is_cuda and k.is_cuda and v.is_cuda", "device_type", R, True,
      "assert q.device.type in ('cuda', 'npu') and k.device == q.device and v.device == q.device",
      "fails for NPU tensors (Tensor.is_cuda is False; transfer_to_npu would alias it to is_npu, knowledge §2.3)"),
    C("assert bias.is_cuda", "device_type", R, True, "assert bias.device == q.device",
      "same is_cuda check on the ALiBi bias"),
    C("BLOCK = 128", "triton_kernel_tuning", R, False, "BLOCK = 64  # fits the Ascend on-chip buffer for d=128",
      "tile size tuned for NVIDIA shared memory; a smaller tile for the Ascend vector/cube buffers is a guess "
      "(unconfirmed)"),
    C("num_warps = 4 if d <= 64 else 8", "triton_kernel_tuning", R, False, "num_warps = 1",
      "warps are a GPU concept; triton-ascend maps programs onto AI cores and ignores/limits num_warps (unconfirmed)"),
    C("flash_attn_qkvpacked_func = FlashAttnQKVPackedFunc.apply", "attention_kernel", R, False,
      "flash_attn_qkvpacked_func = npu_flash_attn_qkvpacked  # torch_npu.npu_fusion_attention(q, k, v, nheads, 'BSND', pse=bias, scale=softmax_scale)",
      "performance alternative to porting the kernel: npu_fusion_attention takes the ALiBi bias as pse "
      "(knowledge §5; pse layout requirements for a (1, H, S, S) bias unconfirmed)"),
  ])

E("dnabert2_req", "requirements.txt", "explicit_replacement",
  "DNABERT-2 requirements.txt (pinned triton nightly, cu117 torch)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu117", "device_type", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu pairs with the CPU torch build on x86 (knowledge §1.1)"),
    C("torch==1.13.1+cu117", "device_type", R, True, "torch==2.1.0",
      "no torch_npu for torch 1.13 and no +cu117 build on an NPU host (knowledge §1.2-1.3)"),
    C("triton==2.0.0.dev20221202", "triton_kernel_tuning", R, True, "triton-ascend",
      "NVIDIA Triton nightly targets CUDA only; triton-ascend is the Ascend backend (knowledge §6)"),
    C("=einops==0.6.1", "import_torch_npu", A, True, "einops==0.6.1\ntorch-npu==2.1.0.post17",
      "torch_npu wheel matching torch 2.1.0 (knowledge §1.2)"),
    C("nvidia-ml-py3==7.352.0", "torch_cuda_api", X, False, None,
      "NVML bindings have no NPU equivalent (knowledge §6); only used for GPU-memory logging"),
  ])

# ---------------------------------------------------------------- Evo / StripedHyena
E("evo_engine", "stripedhyena/engine.py", "explicit_replacement",
  "Evo / StripedHyena stripedhyena/engine.py (FFT long convolution, modal IIR prefill)", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu",
      "the entry script registers torch_npu; here only needed for the torch.npu.empty_cache call"),
    C("y = fftconv_fn(x1v.to(dtype=torch.bfloat16).contiguous(), h.to(dtype=torch.float32))", "custom_cuda_extension", R, False,
      "y = fftconv_fn(x1v.to(dtype=torch.bfloat16).contiguous(), h.to(dtype=torch.float32)) if x1v.is_cuda else None",
      "flashfftconv is a CUDA-only package; only reached with use_flashfft=True, which NPU configs must switch off "
      "(the torch.fft branch below already runs in fp32, the only dtype rfftn accepts per knowledge "
      "ops/torch_api_npu_support_2.7.1.tsv)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY + "; low_mem_mode only"),
    C("state_s = poles**t", "unsupported_op_workaround", R, False,
      "state_s = torch.polar(poles.abs() ** t, poles.angle() * t)",
      "complex64 power: torch.pow's NPU dtype list has no complex types (knowledge ops/torch_api_npu_support_2.7.1.tsv); "
      "whether it falls back to CPU or fails, and whether torch.polar is better covered, is unconfirmed"),
  ])

# ---------------------------------------------------------------- Boltz / Chai
E("boltz_tri", "src/boltz/model/layers/triangular_attention/primitives.py", "device_branch_or_abstraction",
  "Boltz triangular_attention/primitives.py (cuEquivariance / DeepSpeed4Science Evoformer kernels)", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu",
      "only needed for the optional fused NPU attention"),
    C('with torch.autocast("cuda", enabled=False):', "amp", R, False,
      'with torch.autocast(t.device.type, enabled=False):',
      "disabling CUDA autocast does not disable NPU autocast, so under bf16-mixed the bf16 softmax gets upcast to fp32 "
      "(more memory, not a crash) (knowledge §2.1 autocast per device type)"),
    C("elif use_kernels and ds4s_is_installed:", "custom_cuda_extension", R, True,
      "elif use_kernels and ds4s_is_installed and q_x.is_cuda:",
      "use_kernels defaults to True and DeepSpeed is commonly installed on Ascend hosts (it has an NPU accelerator, "
      "knowledge §6), but DS4Sci_EvoformerAttention is a CUTLASS/CUDA op builder with no NPU build; the cuEquivariance "
      "branch above is already guarded by q_x.is_cuda"),
    C("o = _attention(q, k, v, biases)", "npu_fused_op", R, False,
      "o = torch_npu.npu_fusion_attention(q, k, v, self.no_heads, 'BNSD', pse=mask_bias + tri_bias, scale=1.0)[0] if q.is_npu else _attention(q, k, v, biases)",
      "performance only: fused attention with the triangle bias as pse (knowledge §5); q is pre-scaled, batch dims "
      "would need flattening to 4-D first (unconfirmed layout fit)"),
  ])

E("boltz_main", "src/boltz/main.py", "explicit_replacement",
  "Boltz src/boltz/main.py (click predict CLI on PyTorch Lightning)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", TN),
    C('@click.option("--accelerator", type=click.Choice(["gpu", "cpu", "tpu"])', "distributed_framework", R, True,
      '@click.option("--accelerator", type=click.Choice(["npu", "gpu", "cpu", "tpu"]), help="The accelerator to use for prediction. Default is npu.", default="npu")',
      "Lightning's 'gpu' accelerator means CUDA/MPS and raises on an NPU host; an 'npu' accelerator has to be "
      "registered by a third-party Lightning plugin (not in the knowledge; unconfirmed which one)"),
    C('@click.option("--use_kernels/--no_kernels", default=True', "custom_cuda_extension", R, False,
      '@click.option("--use_kernels/--no_kernels", default=torch.cuda.is_available(), help="Use the cuEquivariance / DeepSpeed triangle kernels on GPU.")',
      "the kernel branches are guarded in primitives.py after the port; defaulting off on NPU is belt and braces"),
    C("strategy = DDPStrategy()", "dist_backend", R, False, 'strategy = DDPStrategy(process_group_backend="hccl")',
      "Lightning picks nccl for CUDA and gloo otherwise; HCCL is the NPU backend (knowledge §2.4). Predict-only DDP "
      "does few collectives, so failure under gloo is unconfirmed"),
  ])

E("chai_pyproject", "pyproject.toml", "explicit_replacement",
  "Chai-1 pyproject.toml (cuEquivariance CUDA wheels)", [
    C('"torch>=2.3.1,<2.7",', "device_type", R, False, '"torch==2.6.0",',
      "pin to a version with a torch_npu release (knowledge §1.2: 2.6.0 <-> torch-npu 2.6.0.post5); a range is "
      "installable but risks a torch without a matching torch_npu"),
    C('"cuequivariance-ops-torch-cu12>=0.4.0",', "custom_cuda_extension", X, True, None,
      "CUDA 12 kernel wheel (links libcudart); no Ascend build, not installable/importable on an NPU host"),
    C('"cuequivariance-torch>=0.4.0",', "custom_cuda_extension", X, False, None,
      "the frontend without the -ops wheel only helps on CUDA; dropped with it (whether it imports cleanly without "
      "the ops wheel is unconfirmed)"),
    C('"nvidia-ml-py>=12.560.30",', "torch_cuda_api", X, False, None,
      "NVML has no NPU equivalent (knowledge §6: use torch.npu.mem_get_info / utilization)"),
    C('"antipickle==0.2.0",', "import_torch_npu", A, True, '"antipickle==0.2.0",\n    "torch-npu==2.6.0.post5",',
      "torch_npu wheel matching the torch pin (knowledge §1.2)"),
    C('"triton>=3.0.0",', "triton_kernel_tuning", R, False, '"triton-ascend",',
      "optional kernels extra; NVIDIA triton has no Ascend backend, triton-ascend does (knowledge §6)"),
    C('"deepspeed>=0.15.0",', "distributed_framework", R, False, '"deepspeed>=0.15.0",  # NPU accelerator; DS4Sci Evoformer kernel stays CUDA-only',
      "DeepSpeed itself supports NPU (knowledge §6) but the Evoformer kernel this extra is for does not"),
  ])

# ---------------------------------------------------------------- BioNeMo
E("bionemo_conf", "examples/conf/esm2_pretrain.yaml", "explicit_replacement",
  "NVIDIA BioNeMo examples/conf/esm2_pretrain.yaml (NeMo Megatron ESM-2 pretraining)", [
    C("accelerator: gpu #gpu or cpu", "distributed_framework", R, True, "accelerator: npu",
      "Lightning/NeMo 'gpu' means CUDA; an NPU accelerator comes from an Ascend plugin (unconfirmed which one)"),
    C("masked_softmax_fusion: True", "npu_fused_op", R, False, "masked_softmax_fusion: False",
      "Megatron's fused masked-softmax is an apex/CUDA kernel; on NPU the config flag must be off or mapped to "
      "npu_scaled_masked_softmax (knowledge §5; MindSpeed handles it)"),
    C("bias_gelu_fusion: True", "npu_fused_op", R, False, "bias_gelu_fusion: False",
      "torch.jit-scripted bias-GeLU fusion; torch.jit.script is disabled under transfer_to_npu (knowledge §2.6), so the "
      "flag only costs; unconfirmed for native torch_npu"),
    C("use_flash_attention: True", "attention_kernel", R, True, "use_flash_attention: False  # or MindSpeed --use-flash-attn",
      "the flash-attn package cannot be installed on NPU (knowledge §6)"),
    C("transformer_engine: True", "distributed_framework", R, True, "transformer_engine: False",
      "NVIDIA TransformerEngine has no NPU build; MindSpeed provides TE-equivalent modules (knowledge §6)"),
    C("name: fused_adam", "fused_optimizer", R, True, "name: adamw  # torch_npu NpuFusedAdamW via a custom optimizer registration",
      "NeMo's fused_adam is apex FusedAdam (CUDA kernel); Ascend apex has no FusedAdam (knowledge §6)"),
    C("dist_backend: nccl", "dist_backend", R, True, "dist_backend: hccl", NCCL),
  ])

E("bionemo_docker", "Dockerfile", "explicit_replacement",
  "NVIDIA BioNeMo Dockerfile (NGC PyTorch base, apex, TransformerEngine, flash-attn)", [
    C("ARG BASE_IMAGE=nvcr.io/nvidia/pytorch:24.02-py3", "device_type", R, True,
      "ARG BASE_IMAGE=<CANN + torch_npu base image, e.g. an ascend pytorch image for CANN 8.x>",
      "NGC CUDA image: no CANN, no torch_npu (knowledge §1; exact Ascend image tag unconfirmed)"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0 8.0 9.0+PTX"', "env_var", X, False, None,
      "only steers nvcc builds, which do not happen on NPU"),
    C("ENV CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", X, False, None,
      "CUDA-only knob; NPU analogue unconfirmed"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, False, None,
      "read by the NVIDIA container runtime only; Ascend containers mount /dev/davinci* instead "
      "(knowledge ascend-host-formats.md §3.9)"),
    C("--config-settings \"--build-option=--cpp_ext --cuda_ext", "custom_cuda_extension", R, True,
      "bash scripts/build.sh --python=3.10  # Ascend/apex: patches NVIDIA apex, no CUDA kernels",
      "--cuda_ext needs nvcc; Ascend apex is a pure-Python patch set with NpuFused* optimizers (knowledge §6)"),
    C("RUN git clone https://github.com/NVIDIA/apex.git", "custom_cuda_extension", R, False,
      "RUN git clone https://gitee.com/ascend/apex.git && cd apex && \\",
      "same apex replacement (knowledge §6: live repo on gitee/gitcode)"),
    C("TransformerEngine.git@v1.4", "distributed_framework", R, True,
      "RUN pip install --no-cache-dir mindspeed  # TE-equivalent modules (install path unconfirmed)",
      "TransformerEngine has no NPU build (knowledge §6)"),
    C("RUN pip install --no-cache-dir flash-attn==2.4.2 --no-build-isolation", "attention_kernel", X, True, None,
      "flash-attn cannot be installed on NPU (knowledge §6); NeMo then needs use_flash_attention: False"),
    C("-f https://data.pyg.org/whl/torch-2.3.0+cu121.html", "custom_cuda_extension", R, True,
      "      -f https://data.pyg.org/whl/torch-2.1.0+cpu.html", PYG),
    C("nvidia-dali-cuda120", "custom_cuda_extension", X, True, None,
      "DALI CUDA build; no Ascend build in the knowledge (Ascend has DVPP for images, not relevant here)"),
    C("import torch, apex, transformer_engine, flash_attn", "import_torch_npu", R, True,
      "RUN python -c \"import torch, torch_npu, apex; print(torch.__version__, torch_npu.__version__)\"",
      "the build-time check imports CUDA-only packages and fails the build"),
    C("ENV NCCL_IB_DISABLE=0", "env_var", X, False, None, "NCCL transport knob, no effect with HCCL"),
    C("ENV NCCL_SOCKET_IFNAME=eth0", "env_var", R, False, "ENV HCCL_SOCKET_IFNAME=eth0",
      "HCCL_SOCKET_IFNAME picks the host NIC for HCCL's root-info exchange (knowledge ascend-distributed.md §1)"),
    C("ENV NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "ENV HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu watchdog switch (knowledge ascend-distributed.md §1)"),
  ])

# ---------------------------------------------------------------- AlphaFold data pipeline (CPU-only)
E("af_jackhmmer", "alphafold/data/tools/jackhmmer.py", "explicit_replacement",
  "AlphaFold alphafold/data/tools/jackhmmer.py (CPU-only MSA search wrapper; no labels)", [])
