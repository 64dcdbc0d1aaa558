"""Labels for probe211 (large-graph GNN training with sampling: DGL, GraphBolt, DistDGL, PyG, OGB,
cuGraph-PyG, Quiver, GNNAdvisor; CUDA -> Ascend NPU).

One entry per upstream file; one C(...) per line a careful porter would edit.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---------------------------------------------------------------- shared notes
IMPORT_NOTE = ("entry script: load the Ascend backend (torch_npu) before any device use; "
               "autoload exists since 2.5.1 but the explicit import is still the documented pattern")
DGL_NOTE = ("DGL has no Ascend device backend (unconfirmed in knowledge); moving DGL graphs/blocks to 'npu' is the "
            "first-pass edit, a working port keeps DGL structures on CPU or swaps the layers for pure-torch/PyG ones")
UVA_NOTE = "DGL UVA sampling reads pinned host memory from CUDA kernels; there is no NPU UVA path, sample on CPU instead"


def imp(sub="=import torch", alias="torch_npu"):
    return C(sub, "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE)


# =====================================================================================================
# DGL
# =====================================================================================================
E("dgl_sage_nc", "examples/pytorch/graphsage/node_classification.py", "device_branch_or_abstraction",
  "DGL examples/pytorch/graphsage/node_classification.py (cpu/mixed/puregpu modes, UVA sampling)", [
      imp(),
      C("pin_memory=pin_memory,", "pin_memory", "replace", False,
        "pin_memory=False,  # host buffer; pinning for NPU copies is optional",
        "torch.empty(pin_memory=True) only matters for async H2D copies; performance-only and the NPU pinning path "
        "is unconfirmed in knowledge"),
      C("use_uva = args.mode == \"mixed\"", "pin_memory", "replace", True,
        "use_uva = False  # no UVA on Ascend; sample on CPU and copy blocks",
        UVA_NOTE + "; default mode is 'mixed' so this path is taken"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        "if not (torch.cuda.is_available() or torch.npu.is_available()):",
        "on an NPU host cuda.is_available() is False, so the script silently falls back to CPU mode"),
      C("g = g.to(\"cuda\" if args.mode == \"puregpu\" else \"cpu\")", "device_type", "replace", True,
        "g = g.to(\"npu\" if args.mode == \"puregpu\" else \"cpu\")",
        "hard-coded 'cuda' device string; " + DGL_NOTE),
      C("device = torch.device(\"cpu\" if args.mode == \"cpu\" else \"cuda\")", "device_type", "replace", True,
        "device = torch.device(\"cpu\" if args.mode == \"cpu\" else \"npu\")",
        "training device string"),
  ])

E("dgl_sage_multigpu", "examples/multigpu/node_classification_sage.py", "explicit_replacement",
  "DGL examples/multigpu/node_classification_sage.py (mp.spawn + DDP, use_ddp/use_uva DataLoader)", [
      imp(),
      C("device = devices[proc_id]", "device_type", "replace", True,
        "device = torch.device(\"npu\", devices[proc_id])",
        "a bare int device means a CUDA ordinal for .to(), DDP device_ids and set_device; make the NPU device explicit"),
      C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(device)", "torch.cuda.set_device raises without CUDA"),
      C("backend=\"nccl\",  # Use NCCL backend", "dist_backend", "replace", True,
        "backend=\"hccl\",  # Use HCCL backend for distributed NPU training",
        "NCCL is not available on Ascend; HCCL is the collective backend"),
      C("use_uva = mode == \"mixed\"", "pin_memory", "replace", True,
        "use_uva = False  # UVA sampling is CUDA-only", UVA_NOTE),
      C("torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "torch.npu.is_available()", "the assert fails on an NPU host"),
  ])

E("dgl_sage_mp_legacy", "examples/pytorch/graphsage/train_sampling_multi_gpu.py", "explicit_replacement",
  "DGL 0.7-era examples/pytorch/graphsage/train_sampling_multi_gpu.py (dgl.multiprocessing, UnifiedTensor)", [
      imp("=import torch as th"),
      C("device = th.device(devices[proc_id])", "device_type", "replace", True,
        "device = th.device(f\"npu:{devices[proc_id]}\" if n_gpus > 0 else \"cpu\")",
        "th.device(int) is a CUDA device"),
      C("th.cuda.set_device(device)", "torch_cuda_api", "replace", True,
        "th.npu.set_device(device)", "raises without CUDA"),
      C("th.distributed.init_process_group(backend=\"nccl\",", "dist_backend", "replace", True,
        "th.distributed.init_process_group(backend=\"hccl\",", "NCCL -> HCCL"),
      C("train_nfeat = dgl.contrib.UnifiedTensor(train_nfeat, device=device)", "pin_memory", "replace", True,
        "train_nfeat = train_nfeat.to(device)  # no UVA/UnifiedTensor on NPU",
        "UnifiedTensor is CUDA zero-copy over pinned host memory; only reached with --data-device uva"),
      C("train_labels = dgl.contrib.UnifiedTensor(train_labels, device=device)", "pin_memory", "replace", True,
        "train_labels = train_labels.to(device)", "same as the feature UnifiedTensor"),
      C("train_g.pin_memory_()", "pin_memory", "removal", True, None,
        "DGL pins graph structure with cudaHostRegister for UVA sampling; --graph-device uva cannot work on NPU"),
      C("th.cuda.max_memory_allocated() / 1000000", "torch_cuda_api", "replace", False,
        "th.npu.max_memory_allocated() / 1000000",
        "log-only: reports 0 MB on an NPU host"),
  ])

E("gb_sage_nc", "examples/graphbolt/pyg/node_classification_advanced.py", "device_branch_or_abstraction",
  "DGL GraphBolt examples/graphbolt/pyg/node_classification_advanced.py (gb.DataLoader, copy_to, pinned modes)", [
      imp(),
      C("pin_memory=pin_memory,", "pin_memory", "replace", False,
        "pin_memory=False,",
        "only in 'pinned' storage modes; pinning on an NPU host is unconfirmed and performance-only"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        "if not (torch.cuda.is_available() or torch.npu.is_available()):",
        "otherwise the NPU host silently runs cpu-cpu-cpu"),
      C("dataset.graph.pin_memory_()", "pin_memory", "replace", False,
        "dataset.graph  # GraphBolt pin_memory_() registers host memory with CUDA",
        "only in 'pinned' graph modes; GraphBolt pinning uses cudaHostRegister (unconfirmed for NPU), drop those modes"),
      C("dataset.feature.pin_memory_()", "pin_memory", "replace", False,
        "dataset.feature",
        "same as graph pinning; only in 'pinned' feature modes"),
      C("features._features[(\"node\", None, \"feat\")] = gb.gpu_cached_feature(", "unsupported_op_workaround",
        "removal", False, None,
        "GraphBolt GPU feature cache is a CUDA kernel; guarded by --gpu-cache-size (default 0)"),
      C("default=\"pinned-pinned-cuda\",", "device_type", "replace", True,
        "default=\"cpu-cpu-npu\",",
        "default train device 'cuda'; with GraphBolt sampling on CPU the sampled MiniBatch is copied to npu by copy_to"),
      C("\"cpu-cpu-cuda\",", "device_type", "replace", False,
        "\"cpu-cpu-npu\",",
        "argparse does not validate defaults, but the NPU mode must be selectable explicitly"),
  ])

E("distdgl_sage", "examples/distributed/graphsage/node_classification.py", "explicit_replacement",
  "DGL examples/distributed/graphsage/node_classification.py (DistDGL trainer)", [
      imp("=import torch as th"),
      C("th.cuda.max_memory_allocated() / 1000000", "torch_cuda_api", "replace", False,
        "th.npu.max_memory_allocated() / 1000000", "log-only memory figure"),
      C("if th.cuda.is_available()", "torch_cuda_api", "replace", False,
        "if th.npu.is_available()", "log-only: prints 0 MB on NPU"),
      C("device = th.device(\"cuda:\" + str(dev_id))", "device_type", "replace", True,
        "device = th.device(\"npu:\" + str(dev_id))", "trainer device string; " + DGL_NOTE),
      C("th.cuda.set_device(device)", "torch_cuda_api", "replace", True,
        "th.npu.set_device(device)", "raises without CUDA"),
  ])

E("distdgl_launch", "examples/distributed/graphsage/run_dist_gpu.sh", "explicit_replacement",
  "DGL tools/launch.py invocation for DistDGL GraphSAGE (multi-machine GPU cluster)", [
      C("conda activate dgl-cu121", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment must be sourced before launching torch_npu trainers"),
      C("export NCCL_SOCKET_IFNAME=ens5", "env_var", "replace", True,
        "export HCCL_SOCKET_IFNAME=ens5",
        "HCCL ignores NCCL_*; without it HCCL may pick a NIC that cannot reach the root"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "no HCCL counterpart; harmless no-op"),
      C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None,
        "NCCL logging knob; Ascend logging is ASCEND_GLOBAL_LOG_LEVEL"),
      C("nvidia-smi -L", "torch_cuda_api", "replace", True,
        "ssh -o StrictHostKeyChecking=no \"$host\" npu-smi info -l",
        "nvidia-smi does not exist on Ascend hosts; with pipefail the script aborts"),
      C("--extra_envs NCCL_SOCKET_IFNAME=ens5 NCCL_IB_DISABLE=1", "env_var", "replace", True,
        "--extra_envs HCCL_SOCKET_IFNAME=ens5 \\",
        "env forwarded to the trainers must be the HCCL one"),
      C("--num_gpus ${NUM_GPUS} --backend nccl", "dist_backend", "replace", True,
        "--num_gpus ${NUM_GPUS} --backend hccl\" \\",
        "trainer's init_process_group(backend=args.backend) gets nccl from here"),
  ])

E("dgl_rgat_mag240m", "examples/pytorch/ogb_lsc/MAG240M/train.py", "explicit_replacement",
  "DGL examples/pytorch/ogb_lsc/MAG240M/train.py (RGAT baseline, memmap features)", [
      imp(),
      C("=).cuda()", "tensor_to_device", "replace", True, ").npu()", "model .cuda()"),
      C("mfgs = [g.to(\"cuda\") for g in mfgs]", "tensor_to_device", "replace", True,
        "mfgs = [g.to(\"npu\") for g in mfgs]", "hard-coded 'cuda'; " + DGL_NOTE),
      C("mfgs = [mfg.to(\"cuda\") for mfg in mfgs]", "tensor_to_device", "replace", True,
        "mfgs = [mfg.to(\"npu\") for mfg in mfgs]", "validation loop, same as training"),
      C("dev = torch.device(\"cuda\")", "device_type", "replace", True,
        "dev = torch.device(\"npu\")", "test-time device"),
      C("model.load_state_dict(torch.load(args.model_path))", "device_type", "replace", False,
        "model.load_state_dict(torch.load(args.model_path, map_location=\"cpu\"))",
        "only fails for a checkpoint saved on a CUDA machine (tensors deserialise to cuda)"),
  ])

E("dgl_sparse_gcn", "examples/sparse/gcn.py", "device_branch_or_abstraction",
  "DGL examples/sparse/gcn.py (dgl.sparse SpMatrix GCN)", [
      imp(),
      C("dev = torch.device(\"cuda:0\" if torch.cuda.is_available() else \"cpu\")", "device_type", "add_branch",
        True,
        "dev = torch.device(\"cuda:0\" if torch.cuda.is_available() else \"npu:0\" if torch.npu.is_available() else \"cpu\")",
        "silently CPU on an NPU host; dgl.sparse SpMM kernels exist for CPU/CUDA only (unconfirmed), " + DGL_NOTE),
  ])

E("dgl_lightning_sage", "examples/pytorch/graphsage/lightning/node_classification.py", "explicit_replacement",
  "DGL examples/pytorch/graphsage/lightning/node_classification.py (PyTorch Lightning + UVA)", [
      imp(),
      C("=use_uva=True,", "pin_memory", "replace", True, "use_uva=False,", UVA_NOTE),
      C("use_uva=True,  # the graph is pinned", "pin_memory", "replace", True,
        "use_uva=False,", UVA_NOTE),
      C("graph.pin_memory_()", "pin_memory", "removal", True, None,
        "DGL graph pinning needs CUDA host registration; only used for UVA"),
      C("torch.device(\"cuda\"),", "device_type", "replace", True, "torch.device(\"npu\"),",
        "DataModule sampling device; " + DGL_NOTE),
      C("accelerator=\"gpu\",", "device_type", "replace", True, "accelerator=\"npu\",",
        "Lightning's gpu accelerator finds no CUDA devices; needs an NPU accelerator (plugin/registration "
        "unconfirmed in knowledge)"),
      C("strategy=\"ddp_spawn\",", "dist_backend", "replace", False,
        "strategy=DDPStrategy(process_group_backend=\"hccl\", start_method=\"spawn\"),",
        "Lightning DDP picks nccl for accelerators it does not know; unconfirmed which backend an NPU accelerator sets"),
      C(").to(\"cuda\")", "tensor_to_device", "replace", True, ").to(\"npu\")", "model moved to cuda for test"),
      C("test_acc = evaluate(model, graph, dataset.test_idx, \"cuda\")", "device_type", "replace", True,
        "test_acc = evaluate(model, graph, dataset.test_idx, \"npu\")", "evaluation device string"),
  ])

# =====================================================================================================
# PyG / OGB
# =====================================================================================================
E("pyg_products_sage", "examples/ogbn_products_sage.py", "device_branch_or_abstraction",
  "PyG examples/ogbn_products_sage.py (legacy NeighborSampler)", [
      imp(),
      C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "add_branch", True,
        "device = torch.device('cuda' if torch.cuda.is_available() else 'npu' if torch.npu.is_available() else 'cpu')",
        "silently trains on CPU on an NPU host"),
  ])

E("pyg_reddit_neighbor", "examples/reddit.py", "device_branch_or_abstraction",
  "PyG examples/reddit.py (NeighborLoader, WITH_PYG_LIB check, AMP/compile flags)", [
      imp(),
      C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "add_branch", True,
        "device = torch.device('cuda' if torch.cuda.is_available() else 'npu' if torch.npu.is_available() else 'cpu')",
        "silently CPU on an NPU host"),
      C("pin_memory=True, **kwargs)", "pin_memory", "replace", False,
        "pin_memory=True, pin_memory_device='npu', **kwargs)",
        "DataLoader pinning is gated on CUDA availability -> silent no-op on NPU; performance only (unconfirmed)"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
        "with --amp the CUDA GradScaler disables itself on a CUDA-less host"),
      C("with torch.autocast(device_type='cuda', dtype=torch.float16,", "amp", "replace", True,
        "with torch.autocast(device_type='npu', dtype=torch.float16,",
        "cuda autocast is disabled with a warning when CUDA is absent: --amp silently runs fp32"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available():", "log-only peak-memory report"),
      C("f'{torch.cuda.max_memory_allocated() / 1024**3:.2f} GB')", "torch_cuda_api", "replace", False,
        "f'{torch.npu.max_memory_allocated() / 1024**3:.2f} GB')", "log-only"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", False,
        "torch.npu.reset_peak_memory_stats()", "log-only, behind the availability gate"),
  ])

E("pyg_dist_sampling", "examples/multi_gpu/distributed_sampling.py", "explicit_replacement",
  "PyG examples/multi_gpu/distributed_sampling.py (mp.spawn, rank-as-device)", [
      imp(),
      C("os.environ['MASTER_PORT'] = '12355'", "torch_cuda_api", "npu_only_addition", False,
        "torch.npu.set_device(rank)",
        "Ascend launch guidance binds one NPU per process before HCCL init; upstream relies on explicit "
        "device indices instead (hard failure without it unconfirmed)"),
      C("dist.init_process_group('nccl', rank=rank, world_size=world_size)", "dist_backend", "replace", True,
        "dist.init_process_group('hccl', rank=rank, world_size=world_size)", "NCCL -> HCCL"),
      C("data = data.to(rank, 'x', 'y')", "tensor_to_device", "replace", True,
        "data = data.to(f'npu:{rank}', 'x', 'y')", "an int device is a CUDA ordinal"),
      C("model = SAGE(dataset.num_features, 256, dataset.num_classes).to(rank)", "tensor_to_device", "replace",
        True, "model = SAGE(dataset.num_features, 256, dataset.num_classes).to(f'npu:{rank}')",
        "int device -> CUDA"),
      C("out = model(batch.x, batch.edge_index.to(rank))[:batch.batch_size]", "tensor_to_device", "replace", True,
        "out = model(batch.x, batch.edge_index.to(f'npu:{rank}'))[:batch.batch_size]", "int device -> CUDA"),
      C("out = model.module.inference(data.x, rank, subgraph_loader)", "tensor_to_device", "replace", True,
        "out = model.module.inference(data.x, f'npu:{rank}', subgraph_loader)",
        "rank is used as the device inside inference()"),
      C("world_size = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "world_size = torch.npu.device_count()", "returns 0 on an NPU host: nothing is spawned"),
  ])

E("pyg_papers100m_multinode", "examples/multi_gpu/papers100m_gcn_multinode.py", "explicit_replacement",
  "PyG examples/multi_gpu/papers100m_gcn_multinode.py (torchrun/SLURM, bf16 autocast)", [
      imp(),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(local_rank)", "raises without CUDA"),
      C("device = torch.device(local_rank)", "device_type", "replace", True,
        "device = torch.device('npu', local_rank)", "torch.device(int) is a CUDA device"),
      C("=pin_memory=True,", "pin_memory", "replace", False,
        "pin_memory=True, pin_memory_device='npu',",
        "silent no-op without CUDA; performance only (unconfirmed)"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()", "raises without CUDA"),
      C("with torch.autocast('cuda', dtype=torch.bfloat16,", "amp", "replace", True,
        "with torch.autocast('npu', dtype=torch.bfloat16,",
        "--bf16 would silently run fp32 (cuda autocast disabled on a CUDA-less host)"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize(device)", "raises without CUDA"),
      C("{torch.cuda.max_memory_allocated(device) / 2**30:.2f} GiB", "torch_cuda_api", "replace", True,
        "f\"{torch.npu.max_memory_allocated(device) / 2**30:.2f} GiB\")",
        "passing an npu device to a torch.cuda memory API raises (expected a cuda device)"),
      C("dist.init_process_group(\"nccl\", rank=rank, world_size=world_size)", "dist_backend", "replace", True,
        "dist.init_process_group(\"hccl\", rank=rank, world_size=world_size)", "NCCL -> HCCL"),
      C("f\"({torch.cuda.device_count()} per node)\")", "torch_cuda_api", "replace", False,
        "f\"({torch.npu.device_count()} per node)\")", "log-only; prints 0"),
  ])

E("pyg_hetero_linear", "torch_geometric/nn/dense/linear.py", "device_branch_or_abstraction",
  "PyG torch_geometric/nn/dense/linear.py (Linear, HeteroLinear with pyg-lib segment_matmul, HeteroDictLinear)", [
      C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", False,
        "if torch.cuda.is_available() or torch.npu.is_available():",
        "timing sync for the segment_matmul heuristic; without it NPU async launches mis-time -> wrong kernel choice "
        "(performance only)"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", False,
        "torch.accelerator.synchronize()", "same heuristic; performance only"),
      C("return pyg_lib.ops.segment_matmul(x, type_ptr, self.weight)", "custom_cuda_extension", "replace", False,
        "return self.forward_naive(x, type_ptr)  # pyg-lib segment_matmul has no NPU kernel",
        "pyg-lib kernels are CPU/CUDA only; on NPU tensors at best a CPU fallback (unconfirmed); use the per-type "
        "loop (or torch_npu.npu_grouped_matmul)"),
  ])

E("pyg_profile_utils", "torch_geometric/profile/utils.py", "device_branch_or_abstraction",
  "PyG torch_geometric/profile/utils.py (gc-based memory, nvidia-smi query)", [
      C("if isinstance(obj, Tensor) and not obj.is_cuda:", "device_type", "replace", True,
        "if isinstance(obj, Tensor) and obj.device.type == 'cpu':",
        "NPU tensors are not is_cuda, so they would be counted as CPU memory"),
      C("CMD = 'nvidia-smi --query-gpu=memory.free --format=csv'", "torch_cuda_api", "replace", True,
        "free_b, total_b = torch.npu.mem_get_info(device)",
        "nvidia-smi is absent on Ascend hosts; mem_get_info gives free/total"),
      C("CMD = 'nvidia-smi --query-gpu=memory.used --format=csv'", "torch_cuda_api", "replace", True,
        "used_b = total_b - free_b", "second nvidia-smi query, same reason"),
  ])

E("pyg_profile_profile", "torch_geometric/profile/profile.py", "device_branch_or_abstraction",
  "PyG torch_geometric/profile/profile.py (timeit, profileit, torch_profile)", [
      C("from torch.profiler import ProfilerActivity, profile", "torch_cuda_api", "replace", True,
        "from torch_npu.profiler import ProfilerActivity, profile",
        "NPU device activity is only recorded by torch_npu.profiler"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        "if torch.cuda.is_available() or torch.npu.is_available():",
        "timeit measures async NPU work without a sync -> wrong durations"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.accelerator.synchronize()", "same timer sync"),
      C("if device not in ['cuda', 'xpu']:", "device_type", "add_branch", True,
        "if device not in ['cuda', 'xpu', 'npu']:", "profileit('npu') is rejected otherwise"),
      C("torch_gpu = torch.cuda if is_cuda else torch.xpu", "torch_cuda_api", "add_branch", True,
        "torch_gpu = torch.cuda if is_cuda else (torch.npu if device == 'npu' else torch.xpu)",
        "Event/synchronize must come from the NPU module"),
      C("profile_sort = ('self_cuda_time_total' if torch.cuda.is_available() else", "torch_cuda_api", "replace",
        False, "profile_sort = ('self_npu_time_total' if torch.npu.is_available() else",
        "sort key for the NPU profiler table is unconfirmed; falls back to CPU time silently"),
      C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "use_cuda = torch.npu.is_available()", "otherwise no device activity is profiled on NPU"),
      C("activities.append(ProfilerActivity.CUDA)", "torch_cuda_api", "replace", True,
        "activities.append(ProfilerActivity.NPU)", "ProfilerActivity.CUDA -> NPU (torch_npu.profiler)"),
  ])

E("pyg_link_movielens", "examples/hetero/movielens_link_neighbor_loader.py", "device_branch_or_abstraction",
  "PyG examples/hetero link prediction on MovieLens (LinkNeighborLoader, to_hetero, AMP, compile)", [
      imp(),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)",
        "silent no-op without CUDA; torch.manual_seed above already seeds the PrivateUse1 generator in recent torch "
        "(unconfirmed in knowledge)"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        "if torch.cuda.is_available() or torch.npu.is_available():",
        "else-branch silently selects CPU on an NPU host"),
      C("device = torch.device(f'cuda:{args.device}')", "device_type", "add_branch", True,
        "device = torch.device(f'cuda:{args.device}' if torch.cuda.is_available() else f'npu:{args.device}')",
        "device string"),
      C("pin_memory=torch.cuda.is_available(),", "pin_memory", "replace", False,
        "pin_memory=True, pin_memory_device='npu',", "evaluates False on NPU -> no pinning; performance only"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=args.amp)", "--amp: CUDA scaler disables itself"),
      C("model = torch.compile(model, mode='max-autotune', dynamic=True)", "compile_mode", "replace", False,
        "model = torch.compile(model, dynamic=True)",
        "max-autotune tunes Triton templates; NPU Inductor/triton-ascend support is version-dependent (unconfirmed)"),
      C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=args.amp):", "--amp silently runs fp32 otherwise"),
  ])

E("pyg_cluster_gcn", "examples/cluster_gcn_products.py", "device_branch_or_abstraction",
  "PyG/OGB Cluster-GCN on ogbn-products (ClusterData/ClusterLoader + layer-wise inference)", [
      imp(),
      C("device = f'cuda:{args.device}' if torch.cuda.is_available() else 'cpu'", "device_type", "add_branch", True,
        "device = f'cuda:{args.device}' if torch.cuda.is_available() else f'npu:{args.device}' if torch.npu.is_available() else 'cpu'",
        "silently CPU on an NPU host"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()", "silent no-op without CUDA; memory headroom only"),
  ])

E("ogb_arxiv_gnn", "examples/nodeproppred/arxiv/gnn.py", "device_branch_or_abstraction",
  "OGB examples/nodeproppred/arxiv/gnn.py (full-batch GCN/SAGE on SparseTensor)", [
      imp(),
      C("device = f'cuda:{args.device}' if torch.cuda.is_available() else 'cpu'", "device_type", "add_branch", True,
        "device = f'cuda:{args.device}' if torch.cuda.is_available() else f'npu:{args.device}' if torch.npu.is_available() else 'cpu'",
        "silently CPU on an NPU host"),
      C("transform=T.ToSparseTensor())", "unsupported_op_workaround", "replace", False,
        "transform=T.ToUndirected())",
        "torch_sparse SpMM kernels are CPU/CUDA only and likely assert on NPU tensors (unconfirmed); "
        "edge_index message passing uses scatter_add/index ops that NPU supports"),
  ])

E("ogb_collab_gnn", "examples/linkproppred/collab/gnn.py", "device_branch_or_abstraction",
  "OGB examples/linkproppred/collab/gnn.py (GCN/SAGE + LinkPredictor, resume flag)", [
      imp(),
      C("device = f'cuda:{args.device}' if torch.cuda.is_available() else 'cpu'", "device_type", "add_branch", True,
        "device = f'cuda:{args.device}' if torch.cuda.is_available() else f'npu:{args.device}' if torch.npu.is_available() else 'cpu'",
        "silently CPU on an NPU host"),
      C("data.adj_t = SparseTensor(row=edge_index[0], col=edge_index[1],", "unsupported_op_workaround", "replace",
        False, "data.edge_index, data.edge_weight = edge_index, edge_weight  # avoid torch_sparse SpMM on NPU",
        "torch_sparse SparseTensor matmul has CPU/CUDA kernels only (unconfirmed behaviour on NPU tensors)"),
      C("map_location=f'cuda:{args.device}')", "device_type", "replace", True,
        "map_location=f'npu:{args.device}')", "cuda map_location raises on a CUDA-less host (--resume)"),
  ])

# =====================================================================================================
# cuGraph-PyG, Quiver
# =====================================================================================================
RAPIDS = "RAPIDS (rmm/cupy/cuGraph/WholeGraph) is CUDA-only; no Ascend build"
E("cugraph_pyg_mnmg", "python/cugraph-pyg/cugraph_pyg/examples/gcn_dist_mnmg.py", "explicit_replacement",
  "rapidsai cugraph-pyg examples/gcn_dist_mnmg.py (cuGraph comms + WholeGraph feature store, torchrun)", [
      imp(),
      C("from cugraph.gnn import (", "distributed_framework", "removal", True, None,
        RAPIDS + "; the import fails on an NPU host"),
      C("from pylibwholegraph.torch.initialize import finalize as wm_finalize", "distributed_framework", "removal",
        True, None, RAPIDS),
      C("from pylibwholegraph.torch.initialize import init as wm_init", "distributed_framework", "removal", True,
        None, RAPIDS),
      C("os.environ[\"CUDF_SPILL\"] = \"1\"", "env_var", "removal", False, None, "cuDF knob; harmless"),
      C("os.environ[\"RAPIDS_NO_INITIALIZE\"] = \"1\"", "env_var", "removal", False, None, "RAPIDS knob; harmless"),
      C("=import rmm", "custom_cuda_extension", "removal", True, None, RAPIDS),
      C("rmm.reinitialize(", "custom_cuda_extension", "removal", True, None, "RMM pool on the CUDA device"),
      C("=import cupy", "custom_cuda_extension", "removal", True, None, RAPIDS),
      C("cupy.cuda.Device(local_rank).use()", "custom_cuda_extension", "removal", True, None, "CuPy CUDA context"),
      C("from rmm.allocators.cupy import rmm_cupy_allocator", "custom_cuda_extension", "removal", True, None, RAPIDS),
      C("cupy.cuda.set_allocator(rmm_cupy_allocator)", "custom_cuda_extension", "removal", True, None, RAPIDS),
      C("from cugraph.testing.mg_utils import enable_spilling", "custom_cuda_extension", "removal", True, None,
        RAPIDS),
      C("=enable_spilling()", "custom_cuda_extension", "removal", True, None, "cuDF spilling"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(local_rank)", "raises without CUDA"),
      C("=cugraph_comms_init(", "distributed_framework", "removal", True, None,
        "cuGraph NCCL comms; PyG sampling needs no extra communicator"),
      C("wm_init(global_rank, world_size, local_rank, torch.cuda.device_count())", "distributed_framework",
        "removal", True, None, "WholeGraph init (CUDA)"),
      C("from cugraph_pyg.data import GraphStore, WholeFeatureStore", "unsupported_op_workaround", "replace", True,
        "from torch_geometric.distributed import LocalFeatureStore, LocalGraphStore",
        "cugraph-pyg stores live in GPU/WholeGraph memory; PyG's local stores are plain torch"),
      C("graph_store = GraphStore(is_multi_gpu=True)", "unsupported_op_workaround", "replace", True,
        "graph_store = LocalGraphStore()", "see import"),
      C("feature_store = WholeFeatureStore(memory_type=wg_mem_type)", "unsupported_op_workaround", "replace", True,
        "feature_store = LocalFeatureStore()", "see import"),
      C("local_seeds_per_call=seeds_per_call if seeds_per_call > 0 else None,", "unsupported_op_workaround",
        "removal", True, None, "cugraph-pyg-only loader kwarg; torch DataLoader rejects it"),
      C("from cugraph_pyg.loader import NeighborLoader", "unsupported_op_workaround", "replace", True,
        "from torch_geometric.loader import NeighborLoader", "cuGraph GPU sampler -> PyG CPU sampler"),
      C("ix_train = split_idx[\"train\"].cuda()", "tensor_to_device", "replace", True,
        "ix_train = split_idx[\"train\"]", ".cuda() fails; PyG's sampler takes CPU seeds"),
      C("directory=train_path,", "unsupported_op_workaround", "removal", True, None,
        "cugraph-pyg on-disk sample buffer kwarg"),
      C("ix_test = split_idx[\"test\"].cuda()", "tensor_to_device", "replace", True,
        "ix_test = split_idx[\"test\"]", "see ix_train"),
      C("directory=test_path,", "unsupported_op_workaround", "removal", True, None, "see train"),
      C("ix_valid = split_idx[\"valid\"].cuda()", "tensor_to_device", "replace", True,
        "ix_valid = split_idx[\"valid\"]", "see ix_train"),
      C("directory=valid_path,", "unsupported_op_workaround", "removal", True, None, "see train"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
        "raises without CUDA"),
      C("=wm_finalize()", "distributed_framework", "removal", True, None, "WholeGraph teardown"),
      C("=cugraph_comms_shutdown()", "distributed_framework", "removal", True, None, "cuGraph comms teardown"),
      C("dist.init_process_group(\"nccl\")", "dist_backend", "replace", True,
        "dist.init_process_group(\"hccl\")", "NCCL -> HCCL"),
      C("device = torch.device(local_rank)", "device_type", "replace", True,
        "device = torch.device(\"npu\", local_rank)", "torch.device(int) is CUDA"),
      C("cugraph_id = [cugraph_comms_create_unique_id()]", "distributed_framework", "replace", True,
        "cugraph_id = [None]", "NCCL unique id for cuGraph comms"),
  ])

E("quiver_reddit", "examples/pyg/reddit_quiver.py", "explicit_replacement",
  "quiver-team/torch-quiver examples/pyg/reddit_quiver.py (GPU/UVA sampler + GPU feature cache)", [
      imp(),
      C("=import quiver", "custom_cuda_extension", "removal", True, None,
        "torch-quiver is a CUDA extension (UVA sampling, GPU feature cache); no Ascend build"),
      C("csr_topo = quiver.CSRTopo(data.edge_index)", "custom_cuda_extension", "removal", True, None,
        "quiver topology only feeds the quiver sampler/cache"),
      C("quiver_sampler = quiver.pyg.GraphSageSampler(csr_topo, sizes=[25, 10],", "custom_cuda_extension",
        "replace", True, "quiver_sampler = NeighborSampler(data.edge_index, sizes=[25, 10],",
        "PyG's CPU NeighborSampler has a sample(batch) method"),
      C("device=0, mode=args.mode)", "custom_cuda_extension", "replace", True, "node_idx=train_idx)",
        "device=0/mode=UVA are quiver GPU arguments"),
      C("torch.cuda.set_device(0)", "torch_cuda_api", "replace", True, "torch.npu.set_device(0)",
        "raises without CUDA"),
      C("device = torch.device('cuda:0')", "device_type", "replace", True, "device = torch.device('npu:0')",
        "device string"),
      C("quiver_feature = quiver.Feature(rank=0, device_list=[0],", "custom_cuda_extension", "replace", True,
        "quiver_feature = x  # features stay in host memory; gathered rows are copied per batch",
        "quiver.Feature is a CUDA/UVA feature cache; the whole multi-line call is replaced (labelled on its first line)"),
      C("quiver_feature.from_cpu_tensor(x)", "custom_cuda_extension", "removal", True, None,
        "fills the GPU cache"),
      C("n_id, batch_size, adjs = quiver_sampler.sample(seeds)", "custom_cuda_extension", "replace", True,
        "batch_size, n_id, adjs = quiver_sampler.sample(seeds)",
        "PyG NeighborSampler.sample returns (batch_size, n_id, adjs)"),
      C("out = model(quiver_feature[n_id], adjs)", "tensor_to_device", "replace", True,
        "out = model(quiver_feature[n_id].to(device), adjs)", "host features must now be copied to the NPU"),
  ])

# =====================================================================================================
# GNNAdvisor (custom CUDA extension)
# =====================================================================================================
E("gnna_setup", "GNNAdvisor/setup.py", "kernel_rewrite",
  "YukeWang96/GNNAdvisor_OSDI21 GNNAdvisor/setup.py (CUDAExtension with .cu kernels)", [
      C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace",
        True, "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
        "CUDAExtension needs nvcc/CUDA_HOME; NpuExtension adds torch_npu/ACL include and link paths"),
      C("'-gencode=arch=compute_80,code=sm_80',", "custom_cuda_extension", "removal", False, None,
        "nvcc arch flag; dead once no .cu sources are built"),
      C("=CUDAExtension(", "custom_cuda_extension", "replace", True, "NpuExtension(",
        "extension class"),
      C("os.path.join(here, 'GNNAdvisor_kernel.cu'),", "custom_cuda_extension", "replace", True,
        "os.path.join(here, 'GNNAdvisor_npu.cpp'),",
        "CUDA kernels must be rewritten (Ascend C via OpPlugin, or torch ops)"),
      C("'nvcc': nvcc_flags,", "custom_cuda_extension", "removal", False, None,
        "ignored without .cu sources"),
  ])

E("gnna_conv", "GNNAdvisor/gnn_conv.py", "kernel_rewrite",
  "YukeWang96/GNNAdvisor_OSDI21 GNNAdvisor/gnn_conv.py (autograd Functions over GNNA.* CUDA kernels)", [
      C("import GNNAdvisor as GNNA", "custom_cuda_extension", "replace", True,
        "import gnna_npu as GNNA  # torch/Ascend re-implementation of SAG/forward/backward",
        "the CUDA-built extension cannot be imported on an NPU host"),
      C("X_prime = GNNA.SAG(", "custom_cuda_extension", "replace", True,
        "X_prime = torch.zeros_like(X).index_add_(0, inputInfo.dst_index, X[inputInfo.column_index.long()])",
        "CSR scatter-and-gather kernel -> index_add_ (native on NPU)"),
      C("d_input = GNNA.SAG(", "custom_cuda_extension", "replace", True,
        "d_input = torch.zeros_like(d_output).index_add_(0, inputInfo.dst_index, d_output[inputInfo.column_index.long()])",
        "undirected graph: backward is the same aggregation"),
      C("X_prime, X = GNNA.forward(", "custom_cuda_extension", "replace", True,
        "X = X @ weight; X_prime = gcn_aggregate(X, inputInfo)",
        "fused GCN update+aggregate kernel"),
      C("d_input, d_weight = GNNA.backward(", "custom_cuda_extension", "replace", True,
        "d_agg = gcn_aggregate(d_output, inputInfo); d_input, d_weight = d_agg @ weight.t(), X.t() @ d_agg",
        "fused backward kernel"),
      C("X_prime, X_agg = GNNA.forward_gin(", "custom_cuda_extension", "replace", True,
        "X_agg = gin_aggregate(X, inputInfo, eplison); X_prime = X_agg @ weight",
        "fused GIN forward kernel"),
      C("d_input, d_weights = GNNA.backward_gin(", "custom_cuda_extension", "replace", True,
        "d_input, d_weights = gin_aggregate(d_output @ weights.t(), inputInfo, ctx.eplison), X.t() @ d_output",
        "fused GIN backward kernel"),
  ])

E("gnna_main", "GNNAdvisor/GNNA_main.py", "kernel_rewrite",
  "YukeWang96/GNNAdvisor_OSDI21 GNNA_main.py (driver: SM query, neighbour partitioning, .cuda() inputs)", [
      imp(),
      C("import GNNAdvisor as GNNA           # import GNNAdvisor", "custom_cuda_extension", "replace", True,
        "import gnna_npu as GNNA", "CUDA-built extension (build_part is CPU code and is kept in the NPU build)"),
      C("os.environ[\"CUDA_VISIBLE_DEVICES\"] = str(args.gpu)", "env_var", "replace", True,
        "os.environ[\"ASCEND_RT_VISIBLE_DEVICES\"] = str(args.gpu)",
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime"),
      C("gpu_props = torch.cuda.get_device_properties(0)", "device_capability_check", "replace", True,
        "gpu_props = torch.npu.get_device_properties(0)", "raises without CUDA"),
      C("num_sms = gpu_props.multi_processor_count", "device_capability_check", "replace", True,
        "num_sms = gpu_props.cube_core_num",
        "NPU properties only carry name/total_memory/L2_cache_size/cube_core_num/vector_core_num"),
      C("major, minor = torch.cuda.get_device_capability(0)", "device_capability_check", "replace", True,
        "major, minor = 8, 0  # no SM capability on NPU; keep the configured sharedMem",
        "NPU get_device_capability returns None unless TORCH_NPU_DEVICE_CAPABILITY is set -> unpack fails"),
      C("inputInfo.row_pointers = inputInfo.row_pointers.cuda()", "tensor_to_device", "replace", True,
        "inputInfo.row_pointers = inputInfo.row_pointers.npu()", ".cuda()"),
      C("inputInfo.column_index = inputInfo.column_index.cuda()", "tensor_to_device", "replace", True,
        "inputInfo.column_index = inputInfo.column_index.npu()", ".cuda()"),
      C("inputInfo.partPtr = partPtr.int().cuda()", "tensor_to_device", "replace", True,
        "inputInfo.partPtr = partPtr.int().npu()", ".cuda()"),
      C("inputInfo.part2Node = part2Node.int().cuda()", "tensor_to_device", "replace", True,
        "inputInfo.part2Node = part2Node.int().npu()", ".cuda()"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ".cuda()"),
      C("X = dataset.x.cuda()", "tensor_to_device", "replace", True, "X = dataset.x.npu()", ".cuda()"),
      C("y = dataset.y.cuda()", "tensor_to_device", "replace", True, "y = dataset.y.npu()", ".cuda()"),
      C("torch.cuda.synchronize()  # flush the warm-up iterations", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # flush the warm-up iterations", "raises without CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
  ])

# =====================================================================================================
# Requirements, environments, images, launchers, configs
# =====================================================================================================
E("pyg_requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt of an OGB/PyG research repo (cu121 torch + data.pyg.org wheels)", [
      C("--extra-index-url https://download.pytorch.org/whl/cu121", "custom_cuda_extension", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "x86 NPU hosts take the CPU torch wheel (aarch64: plain PyPI)"),
      C("-f https://data.pyg.org/whl/torch-2.1.0+cu121.html", "custom_cuda_extension", "replace", True,
        "-f https://data.pyg.org/whl/torch-2.1.0+cpu.html", "CUDA wheel index for the PyG extensions"),
      C("torch==2.1.0+cu121", "custom_cuda_extension", "replace", True, "torch==2.1.0",
        "CUDA build of torch; torch_npu pairs with the plain 2.1.0 wheel"),
      C("torchvision==0.16.0+cu121", "custom_cuda_extension", "replace", True, "torchvision==0.16.0",
        "CUDA build"),
      C("torchdata==0.7.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "the Ascend backend wheel; version must equal the torch version plus .postN"),
      C("pyg_lib==0.3.1+pt21cu121", "custom_cuda_extension", "replace", True, "pyg_lib==0.3.1+pt21cpu",
        "CUDA wheel (links libcudart); CPU build for sampling"),
      C("torch_scatter==2.1.2+pt21cu121", "custom_cuda_extension", "replace", True,
        "torch_scatter==2.1.2+pt21cpu", "CUDA wheel"),
      C("torch_sparse==0.6.18+pt21cu121", "custom_cuda_extension", "replace", True,
        "torch_sparse==0.6.18+pt21cpu", "CUDA wheel"),
      C("torch_cluster==1.6.3+pt21cu121", "custom_cuda_extension", "replace", True,
        "torch_cluster==1.6.3+pt21cpu", "CUDA wheel"),
      C("torch_spline_conv==1.2.2+pt21cu121", "custom_cuda_extension", "replace", True,
        "torch_spline_conv==1.2.2+pt21cpu", "CUDA wheel"),
      C("pytorch_memlab==0.3.0", "custom_cuda_extension", "removal", False, None,
        "CUDA-only memory profiler, imported only on the cuda profiling path"),
      C("nvidia-ml-py==12.535.108", "custom_cuda_extension", "removal", False, None,
        "pynvml installs anywhere but has no NPU counterpart; unused on NPU"),
  ])

E("dgl_env_yml", "environment.yml", "explicit_replacement",
  "conda environment.yml for DGL/GraphBolt examples (dglteam cu121 channel, pytorch-cuda)", [
      C("- dglteam/label/th21_cu121", "custom_cuda_extension", "replace", True, "- dglteam/label/th21_cpu",
        "CUDA build channel of DGL"),
      C("=- nvidia", "custom_cuda_extension", "removal", False, None, "CUDA runtime channel; harmless if unused"),
      C("- pytorch=2.1.2", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
        "torch_npu wheels exist only for exact torch versions (2.1.0.postN pairs with 2.1.0)"),
      C("- pytorch-cuda=12.1", "custom_cuda_extension", "replace", True, "- cpuonly",
        "selects the CUDA pytorch build; not installable on Ascend hosts"),
      C("- dgl=2.1.0.cu121", "custom_cuda_extension", "replace", True, "- dgl=2.1.0", "CUDA build of DGL"),
      C("- cudatoolkit-dev=11.7", "custom_cuda_extension", "removal", True, None,
        "nvcc for the CUDA extension; unavailable on aarch64 and useless on NPU"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
        "Ascend backend wheel goes into the pip section"),
      C("- nvidia-ml-py==12.535.108", "custom_cuda_extension", "removal", False, None, "NVML bindings; unused"),
      C("- --find-links https://data.dgl.ai/wheels/torch-2.1/cu121/repo.html", "custom_cuda_extension", "replace",
        False, "- --find-links https://data.dgl.ai/wheels/torch-2.1/repo.html",
        "only consulted for dglgo's dgl dependency; could pull a CUDA wheel"),
  ])

E("dgl_dockerfile", "docker/Dockerfile.gpu", "explicit_replacement",
  "GPU Dockerfile for DGL/PyG/cuGraph training (NGC base image, CUDA wheel indexes)", [
      C("FROM nvcr.io/nvidia/pytorch:23.10-py3", "import_torch_npu", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "NGC image carries CUDA torch; an Ascend base provides CANN + driver mounts"),
      C("ARG TORCH_CUDA_ARCH_LIST=", "custom_cuda_extension", "removal", False, None, "nvcc arch list; unused"),
      C("TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST} \\", "env_var", "removal", False, None, "unused on NPU"),
      C("CUDA_HOME=/usr/local/cuda \\", "env_var", "removal", False, None, "no CUDA toolkit in the image"),
      C("NVIDIA_VISIBLE_DEVICES=all \\", "env_var", "replace", False, "ASCEND_VISIBLE_DEVICES=all \\",
        "device exposure is normally passed at docker run for Ascend Docker Runtime (unconfirmed as image ENV)"),
      C("NVIDIA_DRIVER_CAPABILITIES=compute,utility \\", "env_var", "removal", False, None,
        "nvidia-container-runtime knob"),
      C("NCCL_DEBUG=WARN \\", "env_var", "removal", False, None, "NCCL logging knob"),
      C("&& rm -rf /var/lib/apt/lists/*", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install --no-cache-dir torch==2.1.0 torch-npu==2.1.0.post12",
        "the base image has CANN but not torch/torch_npu"),
      C("RUN pip install --no-cache-dir dgl==${DGL_VERSION} -f https://data.dgl.ai/wheels/torch-2.1/cu121/repo.html",
        "custom_cuda_extension", "replace", True,
        "RUN pip install --no-cache-dir dgl==${DGL_VERSION} -f https://data.dgl.ai/wheels/torch-2.1/repo.html",
        "CUDA DGL wheel"),
      C("-f https://data.pyg.org/whl/torch-2.1.0+cu121.html", "custom_cuda_extension", "replace", True,
        "-f https://data.pyg.org/whl/torch-2.1.0+cpu.html", "CUDA PyG extension wheels"),
      C("RUN pip install --no-cache-dir --extra-index-url=https://pypi.nvidia.com \\", "custom_cuda_extension",
        "removal", True, None, "RAPIDS cuGraph stack is CUDA-only"),
      C("cugraph-cu12==24.2.* cugraph-pyg-cu12==24.2.* pylibwholegraph-cu12==24.2.*", "custom_cuda_extension",
        "removal", True, None, "RAPIDS cuGraph stack is CUDA-only"),
  ])

E("pyg_run_multinode", "scripts/run_papers100m_multinode.sh", "explicit_replacement",
  "SLURM + torchrun launcher for PyG multi-node papers100M training (InfiniBand NCCL tuning)", [
      C("#SBATCH --gpus-per-node=8", "device_type", "replace", True, "#SBATCH --gres=npu:8",
        "GPU GRES does not exist on an Ascend partition (GRES name is site-specific)"),
      C("module load cuda/12.1 nccl/2.18", "import_torch_npu", "replace", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CUDA/NCCL modules absent (set -e aborts); CANN env must be sourced instead"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "CUDA_VISIBLE_DEVICES is ignored on Ascend"),
      C("export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3", "env_var", "removal", False, None,
        "no HCCL counterpart (NPU RoCE ports are configured with hccn_tool)"),
      C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=ib0",
        "HCCL's host NIC for root-info negotiation"),
      C("export NCCL_IB_GID_INDEX=3", "env_var", "removal", False, None, "no HCCL counterpart"),
      C("export NCCL_NET_GDR_LEVEL=2", "env_var", "removal", False, None, "no HCCL counterpart"),
      C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
        "torch_npu watchdog knob; its default is already on"),
      C("export NCCL_DEBUG=INFO", "env_var", "removal", False, None, "NCCL logging knob"),
      C("nvidia-smi --query-gpu=index,name,memory.total --format=csv", "torch_cuda_api", "replace", True,
        "npu-smi info", "nvidia-smi missing; set -e aborts the job"),
  ])

E("gnn_pyproject", "pyproject.toml", "explicit_replacement",
  "pyproject.toml of a GNN benchmarking package with dgl/pyg/cugraph/quiver extras", [
      C("\"torch==2.1.0\",", "import_torch_npu", "npu_only_addition", True, "\"torch-npu==2.1.0.post12\",",
        "Ascend backend as a core dependency"),
      C("\"dgl==2.1.0+cu121\",", "custom_cuda_extension", "replace", True, "\"dgl==2.1.0\",",
        "CUDA local-version pin"),
      C("\"cugraph-cu12==24.2.*\",", "custom_cuda_extension", "removal", False, None,
        "CUDA-only optional extra"),
      C("\"cugraph-pyg-cu12==24.2.*\",", "custom_cuda_extension", "removal", False, None,
        "CUDA-only optional extra"),
      C("\"pylibwholegraph-cu12==24.2.*\",", "custom_cuda_extension", "removal", False, None,
        "CUDA-only optional extra"),
      C("\"cupy-cuda12x>=12.0\",", "custom_cuda_extension", "removal", False, None, "CUDA-only optional extra"),
      C("\"rmm-cu12==24.2.*\",", "custom_cuda_extension", "removal", False, None, "CUDA-only optional extra"),
      C("quiver = [\"torch-quiver==0.1.1\"]", "custom_cuda_extension", "removal", False, None,
        "CUDA extension, optional extra"),
      C("\"pytorch_memlab==0.3.0\",", "custom_cuda_extension", "removal", False, None, "CUDA-only profiler extra"),
      C("\"nvidia-ml-py>=12.0\",", "custom_cuda_extension", "removal", False, None, "NVML bindings; unused on NPU"),
  ])

E("graphgym_device", "torch_geometric/graphgym/utils/device.py", "device_branch_or_abstraction",
  "PyG GraphGym torch_geometric/graphgym/utils/device.py (nvidia-smi based auto device selection)", [
      C("'nvidia-smi', '--query-gpu=memory.used',", "torch_cuda_api", "replace", True,
        "[torch.npu.mem_get_info(i) for i in range(torch.npu.device_count())]",
        "auto selection shells out to nvidia-smi, absent on Ascend"),
      C("if cfg.gpu_mem and cfg.device != 'cpu' and torch.cuda.is_available():", "torch_cuda_api", "add_branch",
        False, "if cfg.gpu_mem and cfg.device != 'cpu' and (torch.cuda.is_available() or torch.npu.is_available()):",
        "log-only per-process memory; returns -1 on NPU"),
      C("'nvidia-smi', '--query-compute-apps=pid,used_memory',", "torch_cuda_api", "replace", False,
        "torch.npu.memory_reserved() // 2**20", "log-only; only reached after the gate above is changed"),
      C("if cfg.device != 'cpu' and torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        "if cfg.device != 'cpu' and (torch.cuda.is_available() or torch.npu.is_available()):",
        "else-branch silently forces cfg.device = 'cpu' on an NPU host"),
      C("cfg.device = 'cuda:{}'.format(cuda)", "device_type", "add_branch", True,
        "cfg.device = '{}:{}'.format('cuda' if torch.cuda.is_available() else 'npu', cuda)",
        "auto-selected device string"),
  ])

E("graphgym_yaml", "graphgym/configs/pyg/ogbn_products_sage_neighbor.yaml", "explicit_replacement",
  "PyG GraphGym YAML experiment config (device, AMP, DDP backend)", [
      C("device: cuda:0", "device_type", "replace", True, "device: npu:0", "explicit device string in the config"),
      C("dist_backend: nccl", "dist_backend", "replace", True, "dist_backend: hccl", "NCCL -> HCCL"),
  ])
