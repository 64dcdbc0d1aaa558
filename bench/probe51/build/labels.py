"""Labels for probe51 (hand-written synthetic upstream files; see ../README.md).

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
# "device_agnostic" in the brief = the builder's "device_branch_or_abstraction"
AGN, EXP, T2N, KRW = ("device_branch_or_abstraction", "explicit_replacement", "transfer_to_npu",
                      "kernel_rewrite")

IMPORT_NOTE = ("torch.npu.* / torch_npu.* used by the port need torch_npu loaded (explicit import "
               "recommended even with autoload since 2.5.1)")
EXT_NOTE = ("compiled CPU/CUDA extension op (TORCH_LIBRARY); no NPU kernel, so NPU tensors cannot be "
            "dispatched to it (knowledge §6 custom CUDA extensions; msFmkTransplt lists such calls in "
            "cuda_op_list.csv)")

# ---------------------------------------------------------------------------------------------------
E("pyg_gcn_example", "examples/gcn.py", AGN,
  "pyg-team/pytorch_geometric examples/gcn.py (cuda / xpu / cpu device ladder)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("=if torch.cuda.is_available():", "device_type", B, True,
      "if torch.npu.is_available():\n    device = torch.device('npu')\nelif torch.cuda.is_available():",
      "the ladder knows cuda/xpu/cpu only: an NPU host silently trains on the CPU"),
])

E("pyg_reddit_sage", "examples/reddit.py", AGN,
  "pyg-team/pytorch_geometric examples/reddit.py (NeighborLoader GraphSAGE, torch_geometric.device('auto'))", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("device = torch_geometric.device('auto')", "device_type", R, True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "torch_geometric.device('auto') probes cuda, mps and xpu only -> 'cpu' on an NPU host"),
    C("if device.type == 'cuda':", "torch_cuda_api", B, False,
      "if device.type == 'npu':\n        torch.npu.synchronize()\n    elif device.type == 'cuda':",
      "timing only: without the branch the epoch times are measured without a device sync"),
])

E("pyg_papers100m_multigpu", "examples/multi_gpu/papers100m_gcn.py", EXP,
  "pyg-team/pytorch_geometric examples/multi_gpu/papers100m_gcn.py (mp.spawn, int rank as device)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("dist.init_process_group('nccl'", "dist_backend", R, True,
      "dist.init_process_group('hccl', rank=rank, world_size=world_size)", "NCCL does not exist on Ascend; HCCL"),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", R, True, "torch.npu.set_device(rank)",
      "torch.cuda.* needs a CUDA build"),
    C("model = DistributedDataParallel(model.to(rank), device_ids=[rank])", "tensor_to_device", R, True,
      "model = DistributedDataParallel(model.to(f'npu:{rank}'), device_ids=[rank])",
      "an int passed to .to() means cuda:<int>"),
    C("num_classes=num_classes).to(rank)", "tensor_to_device", R, True,
      "acc = Accuracy(task=\"multiclass\", num_classes=num_classes).to(f'npu:{rank}')",
      "int device index = cuda:<rank>"),
    C("=batch = batch.to(rank)", "tensor_to_device", R, True, "batch = batch.to(f'npu:{rank}')",
      "int device index = cuda:<rank>"),
    C("batch = batch.to(rank, non_blocking=True)", "tensor_to_device", R, True,
      "batch = batch.to(f'npu:{rank}', non_blocking=True)", "int device index = cuda:<rank> (validation loop)"),
    C("batch = batch.to(device=rank, non_blocking=True)", "tensor_to_device", R, True,
      "batch = batch.to(device=f'npu:{rank}', non_blocking=True)", "int device index = cuda:<rank> (test loop)"),
    C("torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", R, True,
      "f\"{torch.npu.max_memory_allocated() / 2**30:.2f} GiB\")", "torch.cuda.* needs a CUDA build"),
    C("world_size = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "world_size = torch.npu.device_count()", "torch.cuda.device_count() is 0 without CUDA -> spawns no worker"),
])

E("pyg_scatter_util", "torch_geometric/utils/_scatter.py", AGN,
  "pyg-team/pytorch_geometric torch_geometric/utils/_scatter.py (scatter_reduce_ / torch_scatter / _segment_reduce paths)", [
    C("return src.new_zeros(size).scatter_reduce_(", "unsupported_op_workaround", R, True,
      "return src.new_zeros(size).index_reduce_(dim, index_1d, src, reduce=reduce, include_self=False)",
      "min/max aggregation (PNA, max-pool, GIN variants): NPU tensors fail the `src.is_cuda` test and land "
      "here; torch.scatter_reduce is ✘ in Ascend's 2.7.1 list and in msFmkTransplt's unsupported list "
      "(index_reduce is ✔, 'may fall back to CPU')"),
    C("return src.new_ones(size).scatter_reduce_(", "unsupported_op_workaround", R, True,
      "return src.new_ones(size).index_reduce_(dim, index_1d, src, reduce='prod', include_self=True)",
      "mul aggregation: scatter_reduce ✘ on Ascend"),
    C("res.scatter_reduce_(0, index, src.detach(), reduce='amax',", "unsupported_op_workaround", R, True,
      "res.index_reduce_(0, index, src.detach(), reduce='amax', include_self=False)",
      "scatter_argmax (used by pooling/top-k layers): scatter_reduce ✘ on Ascend"),
    C("out = torch._segment_reduce(src, reduce, offsets=ptr, initial=initial)", "unsupported_op_workaround", R,
      False, "out = scatter(src, ptr2index(ptr), dim=0, dim_size=ptr.numel() - 1, reduce=reduce)",
      "aten segment_reduce has no NPU kernel in the op lists -> CPU fallback (performance)"),
    C("out = torch_scatter.scatter_max(src, index, dim=dim, dim_size=dim_size)", "custom_cuda_extension", B,
      False, "if src.device.type != 'npu' and torch_geometric.typing.WITH_TORCH_SCATTER ...:",
      "taken only when a torch-scatter build is installed; " + EXT_NOTE),
    C("return torch_scatter.segment_csr(src, ptr, reduce=reduce)", "custom_cuda_extension", B, False,
      "if src.device.type == 'npu':\n        return _torch_segment(src, ptr, reduce)\n    return torch_scatter.segment_csr(src, ptr, reduce=reduce)",
      "taken only when a torch-scatter build is installed; " + EXT_NOTE),
])

E("torch_cluster_knn", "torch_cluster/knn.py", KRW,
  "rusty1s/pytorch_cluster __init__ library loader + knn.py / radius.py (torch.ops.torch_cluster.*)", [
    C("cuda_spec = importlib.machinery.PathFinder().find_spec(", "custom_cuda_extension", B, False,
      "npu_spec = importlib.machinery.PathFinder().find_spec(f'{library}_npu', [osp.dirname(__file__)])",
      "only needed once NPU builds of the operators exist (_<name>_npu.so via NpuExtension)"),
    C("return torch.ops.torch_cluster.knn(x, y, ptr_x, ptr_y, k, cosine,", "custom_cuda_extension", B, True,
      "if x.device.type == 'npu':\n        return _knn_dense(x, y, batch_x, batch_y, k, cosine)  # cdist + topk\n    return torch.ops.torch_cluster.knn(...)",
      EXT_NOTE + "; torch.cdist/topk are ✔ on Ascend (fp16/fp32)"),
    C("return torch.ops.torch_cluster.radius(x, y, ptr_x, ptr_y, r,", "custom_cuda_extension", B, True,
      "if x.device.type == 'npu':\n        return _radius_dense(x, y, r, batch_x, batch_y, max_num_neighbors)\n    return torch.ops.torch_cluster.radius(...)",
      EXT_NOTE),
])

E("ogb_arxiv_gnn", "examples/nodeproppred/arxiv/gnn.py", EXP,
  "snap-stanford/ogb examples/nodeproppred/arxiv/gnn.py (full-batch GCN/SAGE on torch_sparse.SparseTensor)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("device = f'cuda:{args.device}' if torch.cuda.is_available() else 'cpu'", "device_type", R, True,
      "device = f'npu:{args.device}' if torch.npu.is_available() else 'cpu'",
      "silently trains on the CPU on an NPU host"),
    C("transform=T.ToSparseTensor())", "custom_cuda_extension", R, True, "transform=T.ToUndirected())",
      "adj_t becomes a torch_sparse.SparseTensor; GCNConv/SAGEConv then run torch_sparse spmm / fill_diag / "
      "sum on NPU tensors. " + EXT_NOTE),
    C("data.adj_t = data.adj_t.to_symmetric()", "custom_cuda_extension", R, False,
      "data.adj_t = data.edge_index  # edge_index path, already undirected",
      "follow-on of the transform change (to_symmetric itself runs on the CPU)"),
])

E("ogb_products_sage_amp", "examples/nodeproppred/products/sage_neighsampler_amp.py", EXP,
  "OGB-leaderboard-style ogbn-products GraphSAGE (old NeighborSampler, pinned host features, CUDA AMP)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "lazily queued without CUDA, harmless; NPU RNG stays unseeded"),
    C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=use_amp):",
      "CUDA autocast does not touch NPU tensors: the step runs in fp32 while the scaler scales"),
    C("device = torch.device(f'cuda:{args.device}')", "device_type", R, True,
      "device = torch.device(f'npu:{args.device}')", "cuda device string"),
    C("use_amp = not args.no_amp", "compile_mode", A, False,
      "use_amp = not args.no_amp\n    torch_npu.npu.set_compile_mode(jit_compile=False)",
      "every sampled subgraph has a new shape; jit_compile=False avoids per-shape operator compilation "
      "(msFmkTransplt advice for dynamic shapes)"),
    C("x = data.x.pin_memory()", "pin_memory", R, False, "x = data.x.pin_memory(device='npu')",
      "unconfirmed whether a bare Tensor.pin_memory() pins for the NPU under torch_npu"),
    C("optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdam(model.parameters(), lr=args.lr)", "performance only"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=use_amp)", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler(enabled=use_amp)", "CUDA GradScaler needs a CUDA build"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", R, True,
      "torch.npu.reset_peak_memory_stats(device)", "torch.cuda.* needs a CUDA build"),
    C("mem = torch.cuda.max_memory_allocated(device) / 1024**3", "torch_cuda_api", R, True,
      "mem = torch.npu.max_memory_allocated(device) / 1024**3", "torch.cuda.* needs a CUDA build"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
])

E("uva_feature_store", "gnnlab/storage/uva_feature.py", EXP,
  "quiver / WholeGraph / DGL UnifiedTensor-style zero-copy (UVA) feature store with a JIT-built gather kernel", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("from torch.utils.cpp_extension import load", "custom_cuda_extension", X, False, None,
      "import of the JIT builder; dead once the kernel is gone"),
    C("_uva = load(", "custom_cuda_extension", R, True,
      "_uva = None  # no UVA gather on NPU: device cache + host index_select + non_blocking copy",
      "nvcc-built .cu kernel; cpp_extension.load is ✘ on A2/A3"),
    C('self.device = torch.device(f"cuda:{rank}")', "device_type", R, True,
      'self.device = torch.device(f"npu:{rank}")', "cuda device string"),
    C("self.copy_stream = torch.cuda.Stream(device=self.device)", "torch_cuda_api", R, True,
      "self.copy_stream = torch.npu.Stream(device=self.device)", "torch.cuda.* needs a CUDA build"),
    C("free, total = torch.cuda.mem_get_info(self.device)", "torch_cuda_api", R, True,
      "free, total = torch.npu.mem_get_info(self.device)", "torch.cuda.* needs a CUDA build"),
    C("cudart = torch.cuda.cudart()", "torch_cuda_api", R, True,
      "return host.pin_memory()  # no cudaHostRegister equivalent exposed by torch_npu",
      "torch.cuda.cudart is not in torch_npu.npu.__all__; no mapped host memory on NPU"),
    C("err = cudart.cudaHostRegister(host.data_ptr(), nbytes, 2)", "pin_memory", X, True, None,
      "CUDA runtime host registration (UVA mapping); removed with the cudart call"),
    C("torch.cuda.cudart().cudaHostUnregister(self.host_feat.data_ptr())", "pin_memory", X, False, None,
      "unreachable once registration is removed"),
    C("return _uva.gather(self.dev_feat, self.host_feat, n_id,", "custom_cuda_extension", R, True,
      "return _npu_gather(self.dev_feat, self.host_feat, n_id, self.cache_rows, self.copy_stream)",
      "call into the nvcc-built kernel"),
    C("with torch.cuda.stream(self.copy_stream):", "torch_cuda_api", R, True,
      "with torch.npu.stream(self.copy_stream):", "torch.cuda.* needs a CUDA build"),
    C("torch.cuda.current_stream(self.device).wait_stream(self.copy_stream)", "torch_cuda_api", R, True,
      "torch.npu.current_stream(self.device).wait_stream(self.copy_stream)", "torch.cuda.* needs a CUDA build"),
    C("out.record_stream(torch.cuda.current_stream(self.device))", "torch_cuda_api", R, True,
      "out.record_stream(torch.npu.current_stream(self.device))", "torch.cuda.* needs a CUDA build"),
    C("self.dev_feat.untyped_storage()._share_cuda_(),", "torch_cuda_api", R, True,
      "None,  # no CUDA-IPC handle on NPU: each worker builds its own device cache",
      "_share_cuda_ is CUDA-IPC only; no NPU equivalent documented in the knowledge"),
    C("self.labels = labels.pin_memory()", "pin_memory", R, False,
      "self.labels = labels.pin_memory(device='npu')",
      "unconfirmed whether a bare Tensor.pin_memory() pins for the NPU under torch_npu"),
    C("if not torch.cuda.is_available():", "device_type", R, True, "if not torch.npu.is_available():",
      "raises on every NPU host"),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", R, True, "torch.npu.set_device(rank)",
      "torch.cuda.* needs a CUDA build"),
])

E("cugraph_papers100m", "examples/multi_gpu/papers100m_gcn_cugraph.py", EXP,
  "pyg-team/pytorch_geometric examples/multi_gpu/papers100m_gcn_cugraph.py (cuGraph-PyG, RMM, cupy, WholeGraph, torchrun)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("=from cugraph.gnn import (", "distributed_framework", X, True, None,
      "RAPIDS cuGraph is CUDA-only; the port samples with torch_geometric.loader.NeighborLoader"),
    C("from pylibwholegraph.torch.initialize import finalize as wm_finalize", "distributed_framework", X, True,
      None, "WholeGraph is CUDA-only (NVSHMEM/NCCL)"),
    C("from pylibwholegraph.torch.initialize import init as wm_init", "distributed_framework", X, True, None,
      "WholeGraph is CUDA-only"),
    C("=import cupy", "custom_cuda_extension", X, True, None, "cupy has no Ascend support (knowledge §6)"),
    C("=import rmm", "custom_cuda_extension", X, True, None, "RAPIDS memory manager is CUDA-only"),
    C("from rmm.allocators.cupy import rmm_cupy_allocator", "custom_cuda_extension", X, True, None,
      "RAPIDS memory manager is CUDA-only"),
    C("from rmm.allocators.torch import rmm_torch_allocator", "custom_cuda_extension", X, True, None,
      "RAPIDS memory manager is CUDA-only"),
    C('os.environ["CUDF_SPILL"] = "1"', "env_var", X, False, None, "cuDF setting; harmless without cuDF"),
    C("=rmm.reinitialize(", "custom_cuda_extension", X, True, None, "RAPIDS memory pool on the CUDA device"),
    C("cupy.cuda.Device(local_rank).use()", "custom_cuda_extension", X, True, None, "cupy CUDA device"),
    C("cupy.cuda.set_allocator(rmm_cupy_allocator)", "custom_cuda_extension", X, True, None, "cupy allocator"),
    C("torch.cuda.change_current_allocator(rmm_torch_allocator)", "torch_cuda_api", X, True, None,
      "plugs RMM into the CUDA caching allocator; torch.cuda.* needs a CUDA build"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "torch.cuda.* needs a CUDA build"),
    C("cugraph_comms_init(rank=global_rank, world_size=world_size,", "distributed_framework", X, True, None,
      "cuGraph NCCL/UCX communicator"),
    C("wm_init(global_rank, world_size, local_rank,", "distributed_framework", X, True, None,
      "WholeGraph communicator"),
    C("from cugraph_pyg.data import GraphStore, WholeFeatureStore", "distributed_framework", R, True,
      "from torch_geometric.data import Data",
      "cuGraph-PyG stores; the port loads its partition into a plain Data object"),
    C("from cugraph_pyg.loader import NeighborLoader", "distributed_framework", R, True,
      "from torch_geometric.loader import NeighborLoader", "CPU neighbour sampling with PyG's own loader"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "torch.cuda.* needs a CUDA build"),
    C("=wm_finalize()", "distributed_framework", X, True, None, "WholeGraph teardown"),
    C("=cugraph_comms_shutdown()", "distributed_framework", X, True, None, "cuGraph teardown"),
    C('torch.distributed.init_process_group("nccl")', "dist_backend", R, True,
      'torch.distributed.init_process_group("hccl")', "NCCL does not exist on Ascend; HCCL"),
    C("device = torch.device(local_rank)", "tensor_to_device", R, True,
      'device = torch.device(f"npu:{local_rank}")', "torch.device(<int>) means cuda:<int>"),
    C("cugraph_id = [cugraph_comms_create_unique_id()]", "distributed_framework", X, True, None,
      "cuGraph communicator id"),
])

E("dgl_graphsage_uva", "examples/pytorch/graphsage/node_classification.py", EXP,
  "dmlc/dgl examples/pytorch/graphsage/node_classification.py (cpu / mixed (UVA) / puregpu modes)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("use_uva = args.mode == \"mixed\"", "pin_memory", R, False, "use_uva = False  # UVA sampling is CUDA-only",
      "DGL's UVA sampling pins the graph for CUDA zero-copy access; unconfirmed what DGL does with a "
      "non-CUDA device"),
    C("=if not torch.cuda.is_available():", "device_type", R, True, "if not torch.npu.is_available():",
      "forces 'cpu' mode on every NPU host"),
    C('g = g.to("cuda" if args.mode == "puregpu" else "cpu")', "device_type", R, True,
      'g = g.to("npu" if args.mode == "puregpu" else "cpu")',
      "cuda device string (reached once the availability check is ported); unconfirmed that DGL graphs "
      "accept an NPU device"),
    C('device = torch.device("cpu" if args.mode == "cpu" else "cuda")', "device_type", R, True,
      'device = torch.device("cpu" if args.mode == "cpu" else "npu")', "cuda device string"),
])

E("dgl_gat_arxiv", "examples/pytorch/ogb/ogbn-arxiv/gat.py", EXP,
  "dmlc/dgl examples/pytorch/ogb/ogbn-arxiv/gat.py (leaderboard GAT, --gpu index)", [
    C("=import torch as th", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("th.cuda.manual_seed(seed)", "torch_cuda_api", R, False, "th.npu.manual_seed(seed)",
      "lazily queued without CUDA, harmless; NPU RNG stays unseeded"),
    C("optimizer = optim.RMSprop(model.parameters(), lr=args.lr,", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedRMSprop(model.parameters(), lr=args.lr,", "performance only"),
    C('device = th.device(f"cuda:{args.gpu}")', "device_type", R, True, 'device = th.device(f"npu:{args.gpu}")',
      "cuda device string"),
    C("th.cuda.empty_cache()", "torch_cuda_api", R, False, "th.npu.empty_cache()", "silent no-op without CUDA"),
    C("th.cuda.max_memory_allocated(device)", "torch_cuda_api", R, True,
      'print(f"Peak memory: {th.npu.max_memory_allocated(device) / 2**20:.0f} MiB")',
      "torch.cuda.* needs a CUDA build (runs whenever --cpu is not given)"),
])

E("dgl_train_dist", "examples/distributed/graphsage/node_classification.py", EXP,
  "dmlc/dgl examples/distributed/graphsage/node_classification.py (DistDGL trainer, --backend / --num_gpus)", [
    C("=import torch as th", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("th.cuda.max_memory_allocated() / 1000000", "torch_cuda_api", R, False,
      "th.npu.max_memory_allocated() / 1000000", "logging only (guarded by the availability check below)"),
    C("if th.cuda.is_available()", "device_type", R, False, "if th.npu.is_available()",
      "logging only: reports 0 MB on an NPU host"),
    C('device = th.device("cuda:" + str(dev_id))', "device_type", R, True,
      'device = th.device("npu:" + str(dev_id))', "cuda device string"),
    C("th.cuda.set_device(device)", "torch_cuda_api", R, True, "th.npu.set_device(device)",
      "torch.cuda.* needs a CUDA build"),
    C('default="nccl",', "dist_backend", R, True, 'default="hccl",',
      "the process-group backend default; NCCL does not exist on Ascend"),
])

E("mace_torch_tools", "mace/tools/torch_tools.py", AGN,
  "ACEsuit/mace mace/tools/torch_tools.py (init_device cuda / mps / xpu / cpu)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('if "cuda" in device_str:', "device_type", B, True,
      'if device_str.startswith("npu"):\n        assert torch.npu.is_available(), "No NPU device available!"\n        if ":" in device_str:\n            torch.npu.set_device(device_str)\n        return torch.device(device_str)\n    if "cuda" in device_str:',
      "--device npu falls through every branch to 'Using CPU'"),
    C('if device.type == "cuda":', "torch_cuda_api", B, False,
      'if device.type == "npu":\n        torch.npu.empty_cache()\n    elif device.type == "cuda":',
      "cache release only"),
    C('if device.type != "cuda":', "torch_cuda_api", B, False,
      'if device.type not in ("cuda", "npu"):',
      "memory report only (the body then needs torch.npu.* on NPU)"),
])

E("mace_run_train", "mace/cli/run_train.py", EXP,
  "ACEsuit/mace mace/cli/run_train.py (SLURM DistributedEnvironment, NCCL, cuEquivariance conversion)", [
    C("=import torch.distributed", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('torch.distributed.init_process_group(backend="nccl")', "dist_backend", R, True,
      'torch.distributed.init_process_group(backend="hccl")', "NCCL does not exist on Ascend; HCCL"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "torch.cuda.* needs a CUDA build"),
    C("device = tools.init_device(args.device)", "compile_mode", A, False,
      "device = tools.init_device(args.device)\n    torch_npu.npu.set_compile_mode(jit_compile=False)",
      "atom graphs change size every batch: avoid per-shape operator compilation"),
    C("model = run_e3nn_to_cueq(deepcopy(model), device=device)", "custom_cuda_extension", B, False,
      'model = run_e3nn_to_cueq(deepcopy(model), device=device) if device.type == "cuda" else model',
      "only with --enable_cueq: cuEquivariance kernels are CUDA-only (see the config's enable_cueq)"),
    C("model_to_save = run_cueq_to_e3nn(deepcopy(model), device=device)", "custom_cuda_extension", B, False,
      'model_to_save = run_cueq_to_e3nn(deepcopy(model), device=device) if device.type == "cuda" else model_to_save',
      "follow-on of the cueq guard"),
])

E("equiformer_so3", "nets/equiformer_v2/so3.py", AGN,
  "FAIR-Chem/fairchem EquiformerV2 so3.py (Wigner-D rotations forced to fp32 inside AMP)", [
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", R, True,
      "with torch.autocast(device_type=self.embedding.device.type, enabled=False):",
      "disables CUDA autocast only: under the trainer's NPU autocast the Wigner-D bmm silently runs in fp16"),
    C('with torch.autocast(device_type="cuda", enabled=False):', "amp", R, True,
      "with torch.autocast(device_type=self.embedding.device.type, enabled=False):",
      "same: the fp32 island is lost on NPU"),
])

E("ocp_trainer_amp", "ocpmodels/trainers/base_trainer.py", EXP,
  "Open-Catalyst-Project/ocp (fairchem v1) trainers/base_trainer.py (OCPDataParallel, CUDA AMP)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("if torch.cuda.is_available() and not self.cpu:", "device_type", R, True,
      "if torch.npu.is_available() and not self.cpu:", "silently falls back to cpu=True on an NPU host"),
    C('self.device = torch.device(f"cuda:{local_rank}")', "device_type", R, True,
      'self.device = torch.device(f"npu:{local_rank}")', "cuda device string"),
    C("self.scaler = torch.cuda.amp.GradScaler() if amp else None", "amp", R, True,
      "self.scaler = torch.npu.amp.GradScaler() if amp else None", "CUDA GradScaler needs a CUDA build"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "lazily queued without CUDA, harmless; NPU RNG stays unseeded"),
    C("self.model = OCPDataParallel(", "distributed_framework", X, True, None,
      "OCPDataParallel subclasses torch.nn.DataParallel (✘ on Ascend) and moves batches to 'cuda:N'; "
      "the port keeps DDP only and moves the batch in _forward"),
    C("optimizer = getattr(optim, optimizer)", "fused_optimizer", R, False,
      'optimizer = getattr(torch_npu.optim, "NpuFused" + optimizer, None) or getattr(optim, optimizer)',
      "performance only (NpuFusedAdamW for the default AdamW)"),
    C("with torch.cuda.amp.autocast(enabled=self.scaler is not None):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=self.scaler is not None):",
      "CUDA autocast does not touch NPU tensors: --amp trains in fp32 with a loss scaler"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
])

E("ocp_distutils", "ocpmodels/common/distutils.py", EXP,
  "Open-Catalyst-Project/ocp common/distutils.py (SLURM / Summit / env:// process-group setup)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('torch.cuda.set_device(config["local_rank"])', "torch_cuda_api", R, True,
      'torch.npu.set_device(config["local_rank"])', "torch.cuda.* needs a CUDA build (SLURM path)"),
    C('backend="nccl",', "dist_backend", R, False, 'backend="hccl",',
      "only on the Summit (LSF/OMPI) path, which an Ascend cluster does not take"),
    C("tensor = tensor.cuda(device)", "tensor_to_device", R, True, "tensor = tensor.to(device)",
      "Tensor.cuda() needs a CUDA build; callers pass the NPU device"),
    C('default="nccl",', "dist_backend", R, True, 'default="hccl",',
      "--distributed-backend default feeds init_process_group"),
])

E("triton_csr_spmm", "gnnkernels/csr_spmm.py", AGN,
  "Triton CSR SpMM aggregation kernel for GCN/SAGE layers (autotuned, atomics backward, SM-count helper)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("num_warps=num_warps, num_stages=3))", "triton_kernel_tuning", R, False,
      "num_warps=1, num_stages=1))  # triton-ascend: warps/stages do not map to AI cores",
      "only for a triton-ascend port of the kernel; unconfirmed tuning semantics"),
    C('cache_modifier=".ca")', "triton_kernel_tuning", R, False, ")",
      "unconfirmed: triton-ascend handling of cache modifiers"),
    C('eviction_policy="evict_last")', "triton_kernel_tuning", R, False, ")",
      "unconfirmed: triton-ascend handling of eviction hints"),
    C("tl.atomic_add(gx_ptr + c * stride_xn + offs_f * stride_xf, g_e,", "triton_kernel_tuning", R, False,
      "tl.atomic_add(gx_ptr + c * stride_xn + offs_f * stride_xf, g_e,  # fp32 buffer on NPU",
      "unconfirmed: atomic support/dtypes in triton-ascend"),
    C("assert x.is_cuda and rowptr.is_cuda and col.is_cuda, \\", "device_type", R, False,
      "assert x.device.type in ('cuda', 'npu') and rowptr.device == x.device and col.device == x.device, \\",
      "only reached once NPU tensors are routed to the Triton path"),
    C("major, _ = torch.cuda.get_device_capability(device)", "device_capability_check", R, False,
      "if device.type == 'npu':\n        return False\n    major, _ = torch.cuda.get_device_capability(device)",
      "only in the Triton backward; get_device_capability returns None on NPU"),
    C("with torch.cuda.device(x.device):", "torch_cuda_api", R, False, "with torch.npu.device(x.device):",
      "only on the Triton path"),
    C("BLOCK_F=BLOCK_F, num_warps=4,", "triton_kernel_tuning", R, False, "BLOCK_F=BLOCK_F,",
      "only for a triton-ascend port; unconfirmed"),
    C("if not x.is_cuda:", "device_type", B, False,
      "if x.device.type not in ('cuda', 'npu'):",
      "the gather + index_add_ reference path already runs on NPU; routing NPU to a triton-ascend kernel "
      "is a performance choice"),
    C('device = device or torch.device("cuda")', "device_type", R, True,
      'device = device or torch.device("npu")', "cuda device string"),
    C("return torch.cuda.get_device_properties(device).multi_processor_count", "device_capability_check", R,
      True, "return torch.npu.get_device_properties(device).vector_core_num",
      "NPU device properties have no multi_processor_count (only name, total_memory, L2_cache_size, "
      "cube_core_num, vector_core_num)"),
])

E("graphgym_device_utils", "torch_geometric/graphgym/utils/device.py", AGN,
  "pyg-team/pytorch_geometric graphgym/utils/device.py (nvidia-smi memory map, auto_select_device)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("'nvidia-smi', '--query-gpu=memory.used',", "torch_cuda_api", R, True,
      "free, total = zip(*[torch.npu.mem_get_info(i) for i in range(torch.npu.device_count())])",
      "no nvidia-smi on an NPU host (npu-smi has a different output format)"),
    C("if cfg.gpu_mem and cfg.device != 'cpu' and torch.cuda.is_available():", "device_type", R, False,
      "if cfg.gpu_mem and cfg.device != 'cpu' and torch.npu.is_available():",
      "memory logging only: returns -1 on an NPU host"),
    C("'nvidia-smi', '--query-compute-apps=pid,used_memory',", "torch_cuda_api", R, False,
      "return torch.npu.memory_reserved() // 2**20",
      "memory logging only; no nvidia-smi on an NPU host"),
    C("=if torch.cuda.is_available():", "device_type", R, True, "if torch.npu.is_available():",
      "accelerator 'auto' resolves to 'cpu' on an NPU host"),
    C("cfg.accelerator = 'cuda'", "device_type", R, True, "cfg.accelerator = 'npu'", "cuda device string"),
    C("if cfg.device != 'cpu' and torch.cuda.is_available():", "device_type", R, True,
      "if cfg.device != 'cpu' and torch.npu.is_available():", "legacy selector: forces 'cpu' on an NPU host"),
    C("cfg.device = 'cuda:{}'.format(cuda)", "device_type", R, True, "cfg.device = 'npu:{}'.format(cuda)",
      "cuda device string"),
])

E("graphgps_gps_layer", "graphgps/layer/gps_layer.py", EXP,
  "rampasek/GraphGPS graphgps/layer/gps_layer.py plus a varlen flash-attn global attention over batch.ptr", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("from torch_scatter import scatter", "custom_cuda_extension", R, True,
      "from torch_geometric.utils import scatter",
      "torch-scatter: CUDA wheel fails to import on an NPU host, CPU build cannot take NPU tensors"),
    C("from flash_attn import flash_attn_varlen_qkvpacked_func", "attention_kernel", R, True,
      "import torch_npu  # npu_fusion_attention replaces flash-attn",
      "unguarded import; flash-attn cannot be installed on NPU"),
    C("out = flash_attn_varlen_qkvpacked_func(", "attention_kernel", R, True,
      "q, k, v = qkv.unbind(1)\n        out = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, \"TND\", "
      "scale=self.head_dim ** -0.5, keep_prob=1.0 - (self.dropout if self.training else 0.0), "
      "actual_seq_qlen=ptr[1:].tolist(), actual_seq_kvlen=ptr[1:].tolist())[0]",
      "varlen flash attention -> npu_fusion_attention TND layout with cumulative lengths (batch.ptr[1:])"),
])

E("pyg_profile_utils", "torch_geometric/profile/utils.py", AGN,
  "pyg-team/pytorch_geometric torch_geometric/profile/utils.py (gc / nvidia-smi / ipex memory helpers)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("if isinstance(obj, Tensor) and not obj.is_cuda:", "device_type", R, True,
      "if isinstance(obj, Tensor) and obj.device.type == 'cpu':",
      "NPU tensors are counted as CPU memory: silently wrong figures"),
    C("CMD = 'nvidia-smi --query-gpu=memory.free --format=csv'", "torch_cuda_api", R, True,
      "free, total = torch.npu.mem_get_info(device)", "no nvidia-smi on an NPU host"),
    C("CMD = 'nvidia-smi --query-gpu=memory.used --format=csv'", "torch_cuda_api", R, True,
      "used = total - free", "no nvidia-smi on an NPU host"),
    C("max_allocated = torch.cuda.max_memory_allocated(device)", "torch_cuda_api", R, True,
      "max_allocated = torch.npu.max_memory_allocated(device)", "torch.cuda.* needs a CUDA build"),
    C("max_reserved = torch.cuda.max_memory_reserved(device)", "torch_cuda_api", R, True,
      "max_reserved = torch.npu.max_memory_reserved(device)", "torch.cuda.* needs a CUDA build"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", R, True,
      "torch.npu.reset_peak_memory_stats(device)", "torch.cuda.* needs a CUDA build"),
])

E("pyg_compile_benchmark", "benchmark/training/training_benchmark.py", AGN,
  "pyg-team/pytorch_geometric benchmark/training/training_benchmark.py (device table, compile, bf16 autocast, profiler)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("'cuda': (lambda: torch.cuda.is_available()),", "device_type", B, True,
      "'npu': (lambda: torch.npu.is_available()),\n    'cuda': (lambda: torch.cuda.is_available()),",
      "--device npu is a KeyError without an entry"),
    C("torch_geometric.backend.use_segment_matmul = True", "custom_cuda_extension", R, False,
      "torch_geometric.backend.use_segment_matmul = device.type != 'npu'",
      "forces pyg-lib segment_matmul (CPU/CUDA kernels) for hetero models; fails only if a pyg-lib build is "
      "installed - unconfirmed"),
    C("model = compile(model, mode='max-autotune',", "compile_mode", R, False,
      "model = compile(model, dynamic=False)  # or backend='npugraphs'",
      "max-autotune relies on Triton autotuning; unconfirmed behaviour on NPU"),
    C("amp = torch.autocast(device_type='cuda',", "amp", R, True,
      "amp = torch.autocast(device_type=device.type,",
      "CUDA autocast ignores NPU tensors: --bf16 silently benchmarks fp32"),
    C("=with profile(", "torch_cuda_api", R, True, "with torch_npu.profiler.profile(",
      "the torch profiler records no NPU activity (transfer_to_npu maps it to torch_npu.profiler)"),
    C("ProfilerActivity.CUDA],", "torch_cuda_api", R, True, "torch_npu.profiler.ProfilerActivity.NPU],",
      "no CUDA activity on an NPU host: the device timeline is silently empty"),
    C('sort_by="cuda_time_total", row_limit=20))', "torch_cuda_api", R, False,
      'sort_by="self_cpu_time_total", row_limit=20))',
      "cosmetic; unconfirmed NPU sort key name"),
    C("if args.device == 'cuda':", "torch_cuda_api", B, False,
      "if args.device == 'npu':\n                            max_mem = torch.npu.max_memory_allocated(device)\n                        elif args.device == 'cuda':",
      "peak-memory report only"),
    C("add('--device', choices=['cpu', 'cuda', 'xpu'], default='cuda',", "device_type", R, True,
      "add('--device', choices=['cpu', 'cuda', 'xpu', 'npu'], default='npu',",
      "default 'cuda' raises 'CUDA is not available' on an NPU host and 'npu' is not an allowed choice"),
])

E("torch_scatter_setup", "setup.py", KRW,
  "rusty1s/pytorch_scatter setup.py (cpu/cuda suffix builds, FORCE_CUDA, nvcc flags)", [
    C("from torch.utils.cpp_extension import (", "custom_cuda_extension", B, False,
      "from torch_npu.utils.cpp_extension import NpuExtension\nfrom torch.utils.cpp_extension import (",
      "import for the NPU build"),
    C("=if torch.cuda.is_available():", "custom_cuda_extension", B, True,
      "WITH_NPU = importlib.util.find_spec('torch_npu') is not None\nif torch.cuda.is_available():",
      "an NPU host silently gets a CPU-only build whose ops reject NPU tensors"),
    C("if os.getenv('FORCE_CUDA', '0') == '1':", "env_var", B, False,
      "if os.getenv('FORCE_NPU', '0') == '1':\n    suffices = ['npu', 'cpu']\nif os.getenv('FORCE_CUDA', '0') == '1':",
      "build switch for CI images without a visible device"),
    C("=if suffix == 'cuda':", "custom_cuda_extension", B, False,
      "if suffix == 'npu':\n            define_macros += [('WITH_NPU', None)]\n        if suffix == 'cuda':",
      "macro name depends on how the NPU kernels register (TORCH_LIBRARY_IMPL(..., PrivateUse1))"),
    C("path = osp.join(extensions_dir, 'cuda', f'{name}_cuda.cu')", "custom_cuda_extension", B, True,
      "path = osp.join(extensions_dir, 'npu', f'{name}_npu.cpp')  # Ascend C kernels / op-plugin calls",
      "the kernels themselves must be rewritten for NPU"),
    C("Extension = CppExtension if suffix == 'cpu' else CUDAExtension", "custom_cuda_extension", B, True,
      "Extension = {'cpu': CppExtension, 'cuda': CUDAExtension, 'npu': NpuExtension}[suffix]",
      "NpuExtension adds the torch_npu/ACL include and link flags"),
])

E("pyg_install_sh", "scripts/install.sh", EXP,
  "GNN-suite install script: torch + PyG wheels per CUDA tag (data.pyg.org), DGL wheel index, optional CUDA extras", [
    C("CUDA=${CUDA:-cu118}", "env_var", R, True, "CUDA=${CUDA:-cpu}  # NPU host: CPU torch + torch_npu",
      "drives every wheel index below"),
    C("nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv", "torch_cuda_api", R, True,
      "npu-smi info", "set -e: nvidia-smi missing aborts the script"),
    C("export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}", "env_var", R, False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CUDA_HOME is harmless; the CANN environment has to be sourced instead"),
    C('${PYTHON} -m pip install "torch==${TORCH}" torchvision torchaudio \\', "import_torch_npu", A, True,
      '${PYTHON} -m pip install "torch==${TORCH}" torchvision torchaudio && ${PYTHON} -m pip install "torch-npu==${TORCH}.post12"',
      "torch_npu wheel matching the torch version (2.1.0 -> 2.1.0.postN)"),
    C('--index-url "https://download.pytorch.org/whl/${CUDA}"', "device_type", R, True,
      '--index-url "https://download.pytorch.org/whl/cpu"', "torch_npu pairs with the CPU torch build"),
    C('-f "https://data.pyg.org/whl/torch-${TORCH}+${CUDA}.html"', "custom_cuda_extension", R, True,
      '-f "https://data.pyg.org/whl/torch-${TORCH}+cpu.html"',
      "+cu118 extension wheels link libcudart and fail to import on an NPU host"),
    C('-f "https://data.dgl.ai/wheels/${CUDA}/repo.html"', "custom_cuda_extension", R, True,
      '${PYTHON} -m pip install "dgl==${DGL_VERSION}" -f "https://data.dgl.ai/wheels/repo.html"',
      "CUDA build of DGL"),
    C("${PYTHON} -m pip install cuequivariance-torch cuequivariance-ops-torch-cu12", "custom_cuda_extension", X,
      False, None, "only with WITH_EXTRAS=1; CUDA-only kernels"),
    C("MAX_JOBS=8 ${PYTHON} -m pip install flash-attn --no-build-isolation", "attention_kernel", X, False, None,
      "only with WITH_EXTRAS=1; flash-attn cannot be built on NPU"),
    C('assert torch.cuda.is_available(), "CUDA not visible from PyTorch"', "device_type", R, True,
      'import torch_npu; assert torch.npu.is_available(), "NPU not visible from PyTorch"',
      "the verification step fails on every NPU host"),
])

E("ogb_requirements", "requirements.txt", EXP,
  "OGB-leaderboard requirements.txt pinned to cu118 wheels (PyG extensions, DGL, cupy, quiver)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "torch_npu pairs with the CPU torch build"),
    C("-f https://data.pyg.org/whl/torch-2.1.0+cu118.html", "custom_cuda_extension", R, True,
      "-f https://data.pyg.org/whl/torch-2.1.0+cpu.html", "CUDA extension wheel index"),
    C("-f https://data.dgl.ai/wheels/cu118/repo.html", "custom_cuda_extension", R, True,
      "-f https://data.dgl.ai/wheels/repo.html", "CUDA DGL wheel index"),
    C("torch==2.1.0+cu118", "import_torch_npu", R, True, "torch==2.1.0\ntorch-npu==2.1.0.post12",
      "CUDA torch build; add the matching torch_npu wheel"),
    C("torchvision==0.16.0+cu118", "device_type", R, True, "torchvision==0.16.0", "CUDA torchvision build"),
    C("pyg_lib==0.3.1+pt21cu118", "custom_cuda_extension", R, True, "pyg_lib==0.3.1+pt21cpu",
      "+cu118 wheel links libcudart"),
    C("torch_scatter==2.1.2+pt21cu118", "custom_cuda_extension", R, True, "torch_scatter==2.1.2+pt21cpu",
      "+cu118 wheel links libcudart"),
    C("torch_sparse==0.6.18+pt21cu118", "custom_cuda_extension", R, True, "torch_sparse==0.6.18+pt21cpu",
      "+cu118 wheel links libcudart"),
    C("torch_cluster==1.6.3+pt21cu118", "custom_cuda_extension", R, True, "torch_cluster==1.6.3+pt21cpu",
      "+cu118 wheel links libcudart"),
    C("torch_spline_conv==1.2.2+pt21cu118", "custom_cuda_extension", R, True, "torch_spline_conv==1.2.2+pt21cpu",
      "+cu118 wheel links libcudart"),
    C("dgl==1.1.3+cu118", "custom_cuda_extension", R, True, "dgl==1.1.3", "CUDA build of DGL"),
    C("cupy-cuda11x==12.2.0", "custom_cuda_extension", X, True, None, "cupy has no Ascend support"),
    C("nvidia-ml-py==12.535.108", "torch_cuda_api", X, False, None,
      "installs, but NVML calls fail at run time; torch.npu.mem_get_info / npu-smi instead"),
    C("quiver-feature==0.0.1", "custom_cuda_extension", X, False, None,
      "CUDA UVA feature store; unconfirmed how its install fails without nvcc"),
])

E("dgl_environment_yml", "environment.yml", EXP,
  "DGL-project conda environment.yml (dglteam cu118 label, pytorch-cuda, nvidia channel, pip CUDA wheels)", [
    C("- dglteam/label/th21_cu118", "custom_cuda_extension", R, True, "- dglteam/label/th21_cpu",
      "CUDA build of DGL"),
    C("=- nvidia", "device_type", X, False, None, "channel only feeds the CUDA packages removed below"),
    C("- pytorch-cuda=11.8", "device_type", R, True, "- cpuonly",
      "selects the CUDA torch build; torch_npu pairs with the CPU build"),
    C("- cudatoolkit-dev=11.8", "device_type", X, False, None,
      "dead weight on NPU; unconfirmed whether it resolves on the host architecture"),
    C("- nccl>=2.18", "dist_backend", X, False, None, "unused on Ascend (HCCL ships with CANN)"),
    C("=- pip:", "import_torch_npu", A, True, "- pip:\n      - torch-npu==2.1.0.post12",
      "torch_npu wheel for torch 2.1.0"),
    C("- pynvml==11.5.0", "torch_cuda_api", X, False, None, "NVML calls fail at run time on NPU"),
    C("- --find-links https://data.pyg.org/whl/torch-2.1.0+cu118.html", "custom_cuda_extension", R, True,
      "- --find-links https://data.pyg.org/whl/torch-2.1.0+cpu.html", "CUDA extension wheel index"),
    C('CUDA_VISIBLE_DEVICES: "0,1,2,3"', "env_var", R, True, 'ASCEND_RT_VISIBLE_DEVICES: "0,1,2,3"',
      "the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES"),
    C('NCCL_P2P_DISABLE: "0"', "env_var", X, False, None, "NCCL tuning; no effect on HCCL"),
])

E("gnn_dockerfile", "docker/Dockerfile", EXP,
  "GNN training Dockerfile on nvidia/cuda devel, PyG extensions built from source with FORCE_CUDA", [
    C("FROM nvidia/cuda:${CUDA_VERSION}-cudnn8-devel-ubuntu${UBUNTU_VERSION}", "device_type", R, True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10", "CUDA base image; needs the CANN toolkit instead"),
    C("ARG TORCH_VERSION=2.2.1", "import_torch_npu", R, True, "ARG TORCH_VERSION=2.1.0",
      "no torch_npu wheel for torch 2.2.1 (the matrix has 2.2.0 / 2.3.1)"),
    C("ARG TORCH_CUDA=cu121", "device_type", R, True, "ARG TORCH_CUDA=cpu", "selects the CUDA torch and PyG wheels"),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", R, False,
      "ENV ASCEND_TOOLKIT_HOME=/usr/local/Ascend/ascend-toolkit/latest", "harmless by itself"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0 7.5 8.0 8.6 9.0+PTX"', "env_var", X, False, None, "no nvcc build on NPU"),
    C("=ENV FORCE_CUDA=1", "env_var", X, True, None,
      "forces the torch-scatter/sparse/cluster source builds onto nvcc, which the image no longer has"),
    C("python -m pip install torch==${TORCH_VERSION} torchvision \\", "import_torch_npu", A, True,
      "python -m pip install torch==${TORCH_VERSION} torchvision torch-npu==${TORCH_VERSION}.post12 \\",
      "torch_npu wheel"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "container-runtime device selection; unconfirmed what the Ascend docker runtime needs here"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, False, None, "NVIDIA runtime only"),
    C("ENV NCCL_DEBUG=WARN", "env_var", X, False, None, "NCCL logging; no effect on HCCL"),
    C("ENV PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", R, False,
      "ENV PYTORCH_NPU_ALLOC_CONF=expandable_segments:True", "allocator tuning is read under the NPU name"),
    C("HEALTHCHECK CMD nvidia-smi || exit 1", "torch_cuda_api", R, True, "HEALTHCHECK CMD npu-smi info || exit 1",
      "no nvidia-smi: the container is reported unhealthy forever"),
])

E("gnn_pyproject", "pyproject.toml", EXP,
  "GNN recipe repo pyproject.toml (uv CUDA index for torch, PyG find-links, CUDA-only extras)", [
    C('"torch==2.3.1",', "import_torch_npu", A, True, '"torch==2.3.1",\n    "torch-npu==2.3.1.post4",',
      "torch_npu wheel for torch 2.3.1"),
    C("=gpu = [", "custom_cuda_extension", X, False, None,
      "CUDA-only extra (cupy, NVML, cuGraph-PyG, WholeGraph); only if installed"),
    C('"flash-attn>=2.5.8",', "attention_kernel", X, False, None, "extra only; flash-attn cannot be built on NPU"),
    C('"cuequivariance-ops-torch-cu12>=0.1",', "custom_cuda_extension", X, False, None,
      "extra only; CUDA kernels"),
    C('find-links = ["https://data.pyg.org/whl/torch-2.3.0+cu121.html"]', "custom_cuda_extension", R, False,
      'find-links = ["https://data.pyg.org/whl/torch-2.3.0+cpu.html"]', "used by the optional ext extra only"),
    C('torch = [{ index = "pytorch-cu121" }]', "device_type", R, True, 'torch = [{ index = "pytorch-cpu" }]',
      "resolves the CUDA torch build; torch_npu pairs with the CPU build"),
    C('url = "https://download.pytorch.org/whl/cu121"', "device_type", R, True,
      'url = "https://download.pytorch.org/whl/cpu"', "CUDA wheel index"),
])

E("graphgps_yaml", "configs/GPS/ogbg-molpcba-GPS+RWSE.yaml", EXP,
  "rampasek/GraphGPS config yaml (GraphGym cfg: accelerator, gt.layer_type)", [
    C("layer_type: CustomGatedGCN+FlashTransformer", "attention_kernel", R, False,
      "layer_type: CustomGatedGCN+Transformer",
      "selects the flash-attn global attention; alternatively port that layer to npu_fusion_attention"),
    C('accelerator: "cuda:0"', "device_type", R, True, 'accelerator: "npu:0"', "cuda device string"),
])

E("mace_config_yaml", "configs/mace_mp_finetune.yaml", EXP,
  "ACEsuit/mace fine-tuning config yaml (device, float64, enable_cueq)", [
    C("=device: cuda", "device_type", R, True, "device: npu", "cuda device string"),
    C("=default_dtype: float64", "unsupported_op_workaround", R, True, "default_dtype: float32",
      "nn.Linear / matmul / bmm accept only fp16/fp32(/bf16) on NPU (Ascend 2.7.1 list); e3nn products "
      "and the fp64 default would fail or fall back"),
    C("=enable_cueq: True", "custom_cuda_extension", R, True, "enable_cueq: False",
      "cuEquivariance kernels are CUDA-only"),
])

E("dgl_dist_launch_sh", "examples/distributed/graphsage/run_products_4x8.sh", EXP,
  "DistDGL partition + tools/launch.py multi-machine launch script (NCCL NIC settings, GPU checks)", [
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", R, False, "export HCCL_SOCKET_IFNAME=ib0",
      "unconfirmed whether HCCL's default NIC choice is wrong on this cluster"),
    C("export NCCL_IB_HCA=mlx5_0,mlx5_1", "env_var", X, False, None, "NCCL-only; HCCL uses the NPU RoCE ports"),
    C("export NCCL_IB_GID_INDEX=3", "env_var", X, False, None, "NCCL-only"),
    C("export NCCL_DEBUG=INFO", "env_var", R, False, "export ASCEND_GLOBAL_LOG_LEVEL=1", "logging only"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES"),
    C('ssh "${ip}" "nvidia-smi --query-gpu=index,name,memory.used --format=csv,noheader"', "torch_cuda_api",
      R, True, 'ssh "${ip}" "npu-smi info" \\', "no nvidia-smi: the pre-flight check exits 1"),
    C("--extra_envs NCCL_SOCKET_IFNAME=ib0 CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 \\", "env_var", R, True,
      "--extra_envs HCCL_SOCKET_IFNAME=ib0 ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 \\",
      "device list forwarded to every trainer"),
    C("--backend nccl \\", "dist_backend", R, True, "--backend hccl \\", "NCCL does not exist on Ascend"),
])
