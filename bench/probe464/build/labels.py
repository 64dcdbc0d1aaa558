"""Labels for probe464 (neural combinatorial optimisation: AM, POMO, DIMES, DIFUSCO, L2D, RL4CO).

One entry per upstream file; one C(...) per line a careful porter edits for an explicit torch_npu port.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point: add `import torch_npu` after `import torch`; autoloaded since torch_npu 2.5.1 so not "
               "strictly needed on current versions, but still recommended (torch_npu README)")

# ---------------------------------------------------------------------------------------------
# wouterkool/attention-learn-to-route (Attention Model, Kool et al. 2019)
# ---------------------------------------------------------------------------------------------
E("am_run", "run.py", "explicit_replacement", "wouterkool/attention-learn-to-route run.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NOTE),
    C('opts.device = torch.device("cuda:0" if opts.use_cuda else "cpu")', "device_type", "replace", True,
      'opts.device = torch.device("npu:0" if opts.use_cuda else "cpu")',
      "the single device every tensor and the model is moved to; 'cuda:0' fails on an NPU host"),
    C("if opts.use_cuda and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
      "if opts.use_cuda and torch.npu.device_count() > 1:",
      "left as is it returns 0 on an NPU host and the DataParallel branch is just skipped (single-NPU training "
      "stays correct); a porter still swaps it, together with the DataParallel line below"),
    C("model = torch.nn.DataParallel(model)", "unsupported_op_workaround", "replace", True,
      "model = model  # nn.DataParallel is unsupported on NPU: single NPU here, use DDP + hccl for multi-NPU",
      "torch.nn.DataParallel is marked unsupported on Atlas A2/A3 in Ascend's 2.7.1 API list (and msFmkTransplt "
      "docs); once the device-count check is ported a multi-NPU host would reach it"),
    C("torch.cuda.set_rng_state_all(load_data['cuda_rng_state'])", "torch_cuda_api", "replace", True,
      "torch.npu.set_rng_state_all(load_data['cuda_rng_state'])",
      "on an NPU host the CUDA call iterates over zero CUDA devices and silently restores nothing, so a resumed "
      "run does not restore the device RNG (torch.cuda.set_rng_state_all -> torch_npu.npu.set_rng_state_all)"),
])

E("am_options", "options.py", "explicit_replacement", "wouterkool/attention-learn-to-route options.py", [
    C("opts.use_cuda = torch.cuda.is_available() and not opts.no_cuda", "torch_cuda_api", "replace", True,
      "opts.use_cuda = torch.npu.is_available() and not opts.no_cuda",
      "False on an NPU host, so everything would silently train on the CPU; the --no_cuda flag name is kept"),
])

E("am_train", "train.py", "explicit_replacement", "wouterkool/attention-learn-to-route train.py", [
    C("'cuda_rng_state': torch.cuda.get_rng_state_all(),", "torch_cuda_api", "replace", True,
      "'cuda_rng_state': torch.npu.get_rng_state_all(),",
      "saves an empty list on an NPU host, so the NPU RNG state is silently missing from every checkpoint; the "
      "dict key is kept for checkpoint compatibility"),
])

E("am_attention_model", "nets/attention_model.py", "explicit_replacement",
  "wouterkool/attention-learn-to-route nets/attention_model.py", [])

E("am_graph_encoder", "nets/graph_encoder.py", "explicit_replacement",
  "wouterkool/attention-learn-to-route nets/graph_encoder.py", [])

E("am_state_cvrp", "problems/vrp/state_cvrp.py", "explicit_replacement",
  "wouterkool/attention-learn-to-route problems/vrp/state_cvrp.py", [])

E("am_functions", "utils/functions.py", "explicit_replacement",
  "wouterkool/attention-learn-to-route utils/functions.py", [])

E("am_eval", "eval.py", "explicit_replacement", "wouterkool/attention-learn-to-route eval.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      IMPORT_NOTE + "; the spawn-context pool workers re-import this module, so it covers them too"),
    C('device = torch.device("cuda:{}".format(i))', "device_type", "replace", True,
      'device = torch.device("npu:{}".format(i))',
      "one evaluation worker per device in the multiprocessing path"),
    C("use_cuda = torch.cuda.is_available() and not opts.no_cuda", "torch_cuda_api", "replace", True,
      "use_cuda = torch.npu.is_available() and not opts.no_cuda",
      "False on an NPU host: evaluation silently falls back to CPU and --multiprocessing asserts"),
    C("num_processes = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_processes = torch.npu.device_count()",
      "0 on an NPU host -> modulo by zero / empty pool"),
    C('device = torch.device("cuda:0" if use_cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if use_cuda else "cpu")', "single-process evaluation device"),
])

# ---------------------------------------------------------------------------------------------
# yd-kwon/POMO (NEW_py_ver)
# ---------------------------------------------------------------------------------------------
E("pomo_train_n100", "NEW_py_ver/TSP/POMO/train_n100.py", "explicit_replacement",
  "yd-kwon/POMO NEW_py_ver/TSP/POMO/train_n100.py", [])

POMO_DEFAULT_NOTE = ("POMO never passes device= when creating tensors (env: torch.arange/torch.zeros, trainer: "
                     "torch.zeros(size=...)); it relies on the default tensor type being a CUDA type. "
                     "set_default_tensor_type does not accept torch.npu.*Tensor types (Ascend 2.7.1 API list), "
                     "so the port uses torch.set_default_device")

E("pomo_trainer", "NEW_py_ver/TSP/POMO/TSPTrainer.py", "explicit_replacement",
  "yd-kwon/POMO NEW_py_ver/TSP/POMO/TSPTrainer.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.set_device(cuda_device_num)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(cuda_device_num)", "raises on a host without CUDA"),
    C("device = torch.device('cuda', cuda_device_num)", "device_type", "replace", True,
      "device = torch.device('npu', cuda_device_num)", "used as map_location when resuming"),
    C("torch.set_default_tensor_type('torch.cuda.FloatTensor')", "device_type", "replace", True,
      "torch.set_default_device(device)", POMO_DEFAULT_NOTE),
])

E("pomo_tester", "NEW_py_ver/TSP/POMO/TSPTester.py", "explicit_replacement",
  "yd-kwon/POMO NEW_py_ver/TSP/POMO/TSPTester.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.set_device(cuda_device_num)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(cuda_device_num)", "raises on a host without CUDA"),
    C("device = torch.device('cuda', cuda_device_num)", "device_type", "replace", True,
      "device = torch.device('npu', cuda_device_num)",
      "map_location for the GPU-trained checkpoint and for saved test problems"),
    C("torch.set_default_tensor_type('torch.cuda.FloatTensor')", "device_type", "replace", True,
      "torch.set_default_device(device)", POMO_DEFAULT_NOTE),
])

E("pomo_env", "NEW_py_ver/TSP/POMO/TSPEnv.py", "explicit_replacement",
  "yd-kwon/POMO NEW_py_ver/TSP/POMO/TSPEnv.py", [])

# ---------------------------------------------------------------------------------------------
# DIMESTeam/DIMES (TSP)
# ---------------------------------------------------------------------------------------------
E("dimes_args", "TSP/inc/tsp_args.py", "explicit_replacement", "DIMESTeam/DIMES TSP/inc/tsp_args.py", [
    C("parser.add_argument('--device', type=str, default='cuda:0' if device is None else device,",
      "device_type", "replace", True,
      "parser.add_argument('--device', type=str, default='npu:0' if device is None else device,",
      "default device string for every tensor (torch.device(args.device) in train.py)"),
])

E("dimes_nets", "TSP/inc/tsp_nets.py", "explicit_replacement", "DIMESTeam/DIMES TSP/inc/tsp_nets.py", [
    C("agg = scatter(msg, dst, dim=0, dim_size=n_nodes, reduce=self.agg)", "unsupported_op_workaround",
      "replace", False,
      "agg = msg.new_zeros(n_nodes, msg.size(-1)).index_add_(0, dst, msg)  # /in-degree for 'mean'",
      "torch_scatter is a compiled CPU/CUDA extension (pyg wheels). Unconfirmed: its sum/mean are Python over "
      "scatter_add_ and would probably run on NPU tensors, while reduce='max' (--emb_agg max) goes to a compiled "
      "op with CPU/CUDA kernels only. Native Tensor.scatter_reduce is unsupported in Ascend's 2.7.1 list, "
      "index_add is supported, hence index_add_"),
])

E("dimes_core", "TSP/inc/tsp_core.py", "explicit_replacement", "DIMESTeam/DIMES TSP/inc/tsp_core.py", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "memory hygiene between meta-batch instances; the CUDA call is a no-op when CUDA is not initialised"),
])

E("dimes_train", "TSP/train.py", "explicit_replacement", "DIMESTeam/DIMES TSP/train.py (train/test driver)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "lazy no-op without CUDA; unconfirmed whether torch.manual_seed already seeds the NPU generator, so the "
      "explicit NPU call is kept for reproducibility"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "called every outer step with no device argument: resolves the current CUDA device and raises on a host "
      "without CUDA"),
    C("mem = torch.cuda.max_memory_allocated() / 2 ** 30", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated() / 2 ** 30",
      "returns 0 without CUDA initialised: only the logged memory figure is wrong"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "unguarded; triggers CUDA lazy init and raises on an NPU host"),
    C("torch.cuda.synchronize(args.device)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(args.device)",
      "unguarded, with an npu device after the port; needed for the per-instance wall-clock times"),
])

E("dimes_sh", "TSP/train-tsp500.sh", "explicit_replacement", "DIMESTeam/DIMES TSP/train-tsp500.sh", [
    C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU}",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so npu:0 would be physical device 0 whatever GPU "
      "argument is passed"),
    C("export OMP_NUM_THREADS=8", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; needed unless the shell/container already sources it"),
    C("--device cuda:0 \\", "device_type", "replace", True, "--device npu:0 \\",
      "explicit device on the command line overrides the (ported) default"),
])

# ---------------------------------------------------------------------------------------------
# Edward-Sun/DIFUSCO
# ---------------------------------------------------------------------------------------------
LIGHTNING_NOTE = ("Lightning has no built-in NPU accelerator; the port passes a small custom Accelerator for "
                  "torch_npu (unconfirmed in the knowledge base)")

E("difusco_train", "difusco/train.py", "explicit_replacement", "Edward-Sun/DIFUSCO difusco/train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NOTE),
    C('accelerator="auto",', "distributed_framework", "replace", True,
      "accelerator=NPUAccelerator(),",
      "'auto' silently resolves to the CPU accelerator on an NPU host. " + LIGHTNING_NOTE),
    C("devices=torch.cuda.device_count() if torch.cuda.is_available() else None,", "torch_cuda_api", "replace",
      False, "devices=torch.npu.device_count() if torch.npu.is_available() else None,",
      "unchanged it yields None, i.e. Lightning's default device count; unconfirmed whether that trains on "
      "fewer NPUs than intended (throughput only)"),
    C("strategy=DDPStrategy(static_graph=True),", "dist_backend", "replace", True,
      'strategy=DDPStrategy(static_graph=True, process_group_backend="hccl"),',
      "Lightning picks 'nccl' only for cuda root devices and 'gloo' otherwise; gloo cannot reduce NPU tensors, "
      "so the backend must be hccl"),
    C("precision=16 if args.fp16 else 32,", "amp", "replace", False,
      'precision=16 if args.fp16 else 32, plugins=[MixedPrecisionPlugin("16", "npu", torch.npu.amp.GradScaler())] if args.fp16 else None,',
      "only with --fp16: unconfirmed how Lightning's native AMP plugin picks the autocast device for a custom "
      "accelerator; a plugin bound to 'npu' with the torch.npu GradScaler is passed explicitly"),
])

E("difusco_meta", "difusco/pl_meta_model.py", "explicit_replacement",
  "Edward-Sun/DIFUSCO difusco/pl_meta_model.py", [
    C("num_workers=self.args.num_workers, pin_memory=True,", "pin_memory", "replace", False,
      'num_workers=self.args.num_workers, pin_memory=True, pin_memory_device="npu",',
      "performance only: without an accelerator torch's DataLoader knows, pinning is skipped with a warning "
      "(unconfirmed for torch_npu versions)"),
])

E("difusco_tsp_model", "difusco/pl_tsp_model.py", "explicit_replacement",
  "Edward-Sun/DIFUSCO difusco/pl_tsp_model.py", [
    C('np_points.astype("float64"), np.array(tours).astype(\'int64\'),', "unsupported_op_workaround", "replace",
      False, 'np_points.astype("float32"), np.array(tours).astype(\'int64\'),',
      "the batched 2-opt then runs in float64 on the NPU (device=batch device); Ascend's 2.7.1 list gives "
      "torch.min without fp64 (sqrt/sum/triu do list fp64), so fp64 may hit slow AICPU/CPU paths. fp32 is "
      "faster but can change which 2-opt moves pass the -1e-6 threshold: performance/precision call"),
])

E("difusco_tsp_utils", "difusco/utils/tsp_utils.py", "explicit_replacement",
  "Edward-Sun/DIFUSCO difusco/utils/tsp_utils.py", [])

TORCH_SPARSE_NOTE = ("torch_sparse's reductions run compiled torch_sparse/torch_scatter ops (ind2ptr, "
                     "segment_csr) built for CPU/CUDA only; a custom CUDA extension has no NPU path (knowledge §6), "
                     "so the sparse-graph path (--sparse_factor > 0, all TSP-500+ runs) is rewritten with native "
                     "index ops. ")

E("difusco_gnn", "difusco/models/gnn_encoder.py", "explicit_replacement",
  "Edward-Sun/DIFUSCO difusco/models/gnn_encoder.py", [
    C("return sparse_mean(sparseVh, dim=1)", "unsupported_op_workaround", "replace", False,
      "return torch.zeros(graph.size(0), Vh.size(-1), dtype=Vh.dtype, device=Vh.device).index_add_(0, edge_index[0], Vh) / torch.bincount(edge_index[0], minlength=graph.size(0)).clamp(min=1).unsqueeze(-1).to(Vh.dtype)",
      TORCH_SPARSE_NOTE + "Only with --aggregation mean (default is sum)."),
    C("return sparse_max(sparseVh, dim=1)", "unsupported_op_workaround", "replace", False,
      "return torch.full((graph.size(0), Vh.size(-1)), float('-inf'), dtype=Vh.dtype, device=Vh.device).index_reduce_(0, edge_index[0], Vh, 'amax')",
      TORCH_SPARSE_NOTE + "Only with --aggregation max; index_reduce may fall back to CPU (Ascend 2.7.1 list) "
      "and scatter_reduce is unsupported."),
    C("return sparse_sum(sparseVh, dim=1)", "unsupported_op_workaround", "replace", True,
      "return torch.zeros(graph.size(0), Vh.size(-1), dtype=Vh.dtype, device=Vh.device).index_add_(0, edge_index[0], Vh)",
      TORCH_SPARSE_NOTE + "Default aggregation (sum)."),
])

E("difusco_env", "environment.yml", "explicit_replacement", "Edward-Sun/DIFUSCO environment.yml", [
    C("- pytorch=1.11.0", "import_torch_npu", "replace", False, "- pytorch=2.1.0",
      "torch 1.11 only pairs with EOL torch_npu 1.11.0.postN (CANN <= 8.0.RC2); 2.1.0 is the oldest line still "
      "maintained (2.1.0.post12 / CANN 8.1.RC1). torchvision must follow the torch pin"),
    C("- cudatoolkit=11.3", "import_torch_npu", "replace", True, "- cpuonly",
      "torch_npu is installed on top of a CPU build of torch (torch_npu README); no CUDA toolkit on Ascend hosts"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post12",
      "the NPU backend itself; wheel version must equal the torch version (+.postN)"),
    C("- --find-links https://data.pyg.org/whl/torch-1.11.0+cu113.html", "custom_cuda_extension", "replace", True,
      "      - --find-links https://data.pyg.org/whl/torch-2.1.0+cpu.html",
      "torch-scatter/torch-sparse wheels are compiled against one torch build; the cu113 ones will not load "
      "against a CPU torch"),
])

E("difusco_cython_setup", "difusco/utils/cython_merge/setup.py", "explicit_replacement",
  "Edward-Sun/DIFUSCO difusco/utils/cython_merge/setup.py", [])

E("difusco_sh", "scripts/tsp500_categorical_train.sh", "explicit_replacement",
  "Edward-Sun/DIFUSCO README training command (TSP-500 categorical)", [
    C('export PYTHONPATH="$PWD:$PYTHONPATH"', "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; needed unless the shell/container already sources it"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "train.py uses every visible device; CUDA_VISIBLE_DEVICES is ignored on Ascend, so all 8 NPUs would be "
      "used instead of the 4 intended (global batch and LR schedule change)"),
])

# ---------------------------------------------------------------------------------------------
# zcaicaros/L2D (Learning to Dispatch for JSSP)
# ---------------------------------------------------------------------------------------------
L2D_SPARSE_NOTE = ("NPU has no sparse COO kernels: Tensor.to_sparse is in msFmkTransplt's unsupported list and "
                   "sparse ops without kernels raise (knowledge §3.8). The port keeps per-state adjacency dense on "
                   "the NPU, turns the batch into an edge list in aggr_obs and aggregates with index_add_. ")

E("l2d_params", "Params.py", "explicit_replacement", "zcaicaros/L2D Params.py", [
    C("""parser.add_argument('--device', type=str, default="cuda", help='Number of jobs of instances')""",
      "device_type", "replace", True,
      """parser.add_argument('--device', type=str, default="npu", help='Number of jobs of instances')""",
      "module-level device = torch.device(configs.device) in the PPO, validation and test scripts"),
])

E("l2d_ppo", "PPO_jssp_multiInstances.py", "explicit_replacement", "zcaicaros/L2D PPO_jssp_multiInstances.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NOTE),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guards only the seeding below; False on an NPU host, so seeding is skipped (reproducibility only)"),
    C("torch.cuda.manual_seed_all(configs.torch_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(configs.torch_seed)", "reproducibility only"),
    C(".to(device).to_sparse() for adj in adj_envs]", "unsupported_op_workaround", "replace", True,
      "adj_tensor_envs = [torch.from_numpy(np.copy(adj)).to(device) for adj in adj_envs]", L2D_SPARSE_NOTE),
    C("adj=adj_tensor_envs[i],", "unsupported_op_workaround", "replace", True,
      "adj=aggr_obs(adj_tensor_envs[i].unsqueeze(0), configs.n_j * configs.n_m),",
      L2D_SPARSE_NOTE + "The rollout passes one state, so it goes through the same edge-list conversion."),
])

E("l2d_mb_agg", "mb_agg.py", "explicit_replacement", "zcaicaros/L2D mb_agg.py", [
    C("idxs = obs_mb.coalesce().indices()", "unsupported_op_workaround", "replace", True,
      "idxs = obs_mb.nonzero().t()", L2D_SPARSE_NOTE + "obs_mb is now a dense (m, n, n) stack."),
    C("vals = obs_mb.coalesce().values()", "unsupported_op_workaround", "replace", True,
      "vals = obs_mb[idxs[0], idxs[1], idxs[2]]", L2D_SPARSE_NOTE),
    C("adj_batch = torch.sparse.FloatTensor(indices=idx_mb", "unsupported_op_workaround", "replace", True,
      "adj_batch = (idx_mb, vals)  # block-diagonal batch as an edge list",
      L2D_SPARSE_NOTE + "Block-diagonal batch as (indices, values), not a sparse NPU tensor."),
    C("graph_pool = torch.sparse.FloatTensor(idx, elem", "unsupported_op_workaround", "replace", True,
      "graph_pool = torch.zeros(batch_size[0], n_nodes * batch_size[0], device=device).index_put_((idx[0], idx[1]), elem)",
      "graph-pooling matrix built dense (batch x batch*n); sparse COO matmul has no NPU kernel"),
])

E("l2d_graphcnn", "models/graphcnn_congForSJSSP.py", "explicit_replacement",
  "zcaicaros/L2D models/graphcnn_congForSJSSP.py", [
    C("=pooled = torch.mm(Adj_block, h)", "unsupported_op_workaround", "replace", True,
      "pooled = torch.zeros_like(h).index_add_(0, Adj_block[0][0], h[Adj_block[0][1]] * Adj_block[1].unsqueeze(-1))",
      L2D_SPARSE_NOTE + "Sum pooling (default neighbor_pooling_type)."),
    C("degree = torch.mm(Adj_block, torch.ones((Adj_block.shape[0], 1)).to(self.device))",
      "unsupported_op_workaround", "replace", False,
      "degree = torch.zeros(h.size(0), 1, device=self.device).index_add_(0, Adj_block[0][0], Adj_block[1].unsqueeze(-1))",
      "only for neighbor_pooling_type='average' (default 'sum')"),
    C("pooled_h = torch.sparse.mm(graph_pool, h)", "unsupported_op_workaround", "replace", True,
      "pooled_h = torch.mm(graph_pool, h)", "graph_pool is dense after the port; sparse mm has no NPU kernel"),
])

E("l2d_test", "test_learned.py", "explicit_replacement", "zcaicaros/L2D test_learned.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NOTE),
    C("=ppo.policy.load_state_dict(torch.load(path))", "tensor_to_device", "replace", True,
      "ppo.policy.load_state_dict(torch.load(path, map_location=device))",
      "the released SavedNetwork/*.pth were saved from CUDA tensors; without map_location torch.load tries to "
      "restore them on a CUDA device and fails on an NPU host"),
    C("adj_tensor = torch.from_numpy(np.copy(adj)).to(device).to_sparse()", "unsupported_op_workaround", "replace",
      True, "adj_tensor = aggr_obs(torch.from_numpy(np.copy(adj)).to(device).unsqueeze(0), env.number_of_tasks)",
      L2D_SPARSE_NOTE),
])

# ---------------------------------------------------------------------------------------------
# ai4co/rl4co
# ---------------------------------------------------------------------------------------------
E("rl4co_trainer", "rl4co/utils/trainer.py", "explicit_replacement", "ai4co/rl4co rl4co/utils/trainer.py", [
    C('accelerator: Union[str, Accelerator] = "auto",', "distributed_framework", "replace", True,
      'accelerator: Union[str, Accelerator] = "npu",',
      "default used by RL4COTrainer(...) in the Python API/quickstarts; 'auto' silently resolves to CPU on an "
      "NPU host. 'npu' = a custom Accelerator registered with Lightning's registry. " + LIGHTNING_NOTE),
    C("n_devices = num_cuda_devices()", "torch_cuda_api", "replace", True, "n_devices = torch.npu.device_count()",
      "0 on an NPU host, so the DDP auto-configuration is skipped and Lightning's own multi-device choice uses "
      "its default (gloo) backend for a non-cuda device"),
    C("strategy = DDPStrategy(find_unused_parameters=True, gradient_as_bucket_view=True)", "dist_backend",
      "replace", True,
      'strategy = DDPStrategy(find_unused_parameters=True, gradient_as_bucket_view=True, process_group_backend="hccl")',
      "Lightning chooses nccl only for cuda root devices, otherwise gloo, which cannot reduce NPU tensors"),
    C('precision: _PRECISION_INPUT = "16-mixed",', "amp", "replace", False,
      'precision: _PRECISION_INPUT = "16-mixed",  # + plugins=[MixedPrecision("16-mixed", "npu", torch.npu.amp.GradScaler())]',
      "unconfirmed: how Lightning's mixed-precision plugin chooses the autocast device type/GradScaler for a "
      "custom accelerator; worst case AMP is silently off (throughput only)"),
])

E("rl4co_trainer_cfg", "configs/trainer/default.yaml", "explicit_replacement",
  "ai4co/rl4co configs/trainer/default.yaml", [
    C('accelerator: "gpu"', "distributed_framework", "replace", True, 'accelerator: "npu"',
      "'gpu' makes Lightning raise on a host without CUDA; 'npu' is the registered custom accelerator. "
      + LIGHTNING_NOTE),
])

E("rl4co_flash", "rl4co/models/nn/flash_attention.py", "explicit_replacement",
  "ai4co/rl4co rl4co/models/nn/flash_attention.py (FlashAttention adapters)", [
    C("from flash_attn.flash_attn_interface import flash_attn_qkvpacked_func, flash_attn_varlen_qkvpacked_func",
      "attention_kernel", "replace", False,
      "import torch_npu  # flash-attn cannot be installed on Ascend; npu_fusion_attention instead",
      "inside try/except ImportError: on NPU the import fails cleanly and get_sdpa_fn falls back to SDPA, so the "
      "opt-in flash path only needs porting for its speed"),
    C("return torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8",
      "device_capability_check", "replace", False, "return torch.npu.is_available()",
      "sm80 check has no NPU meaning; a naive torch.npu.get_device_capability()[0] would fail because it returns "
      "None on NPU (msFmkTransplt README). Unchanged it is simply False, which keeps the SDPA fallback"),
    C("out = flash_attn_qkvpacked_func(qkv, dropout_p=dropout_p, softmax_scale=scale, causal=is_causal)",
      "attention_kernel", "replace", False,
      'out = torch_npu.npu_fusion_attention(q, k, v, q.shape[2], "BSND", keep_prob=1 - dropout_p, scale=scale or 1 / math.sqrt(q.shape[-1]))[0]',
      "q/k/v are already (b, s, h, d) = BSND here; causal needs atten_mask + sparse_mode (transformers' "
      "npu_flash_attention mapping). Reachable only via the opt-in flash path"),
    C("out_unpad = flash_attn_varlen_qkvpacked_func(", "attention_kernel", "replace", False,
      'out_unpad = torch_npu.npu_fusion_attention(  # input_layout="TND", actual_seq_qlen/kvlen = cu_seqlens[1:]',
      "varlen path maps to input_layout TND with cumulative lengths (knowledge §5); opt-in only"),
])

E("rl4co_eval", "rl4co/tasks/eval.py", "explicit_replacement", "ai4co/rl4co rl4co/tasks/eval.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NOTE),
    C("start_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_event = torch.npu.Event(enable_timing=True)",
      "unguarded: a CUDA event cannot be created on a host without CUDA"),
    C("end_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_event = torch.npu.Event(enable_timing=True)", "as above"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "unguarded; raises without CUDA, and the NPU events must complete before elapsed_time"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA initialised; frees the NPU cache between evaluations"),
    C('if "CUDA out of memory" in str(e) and batch_size > 1:', "device_type", "replace", False,
      'if "out of memory" in str(e) and batch_size > 1:',
      "the batch-halving retry matches the CUDA OOM text; unconfirmed exact wording of torch_npu's OOM error "
      "('NPU out of memory'), so the match is widened"),
    C("torch.cuda.empty_cache()  # release cached blocks before retrying", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # release cached blocks before retrying",
      "without it the retry may OOM again on fragmented NPU cache; not a failure by itself"),
    C('parser.add_argument("--device", type=str, default="cuda:0")', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu:0")', "CLI default device"),
    C('device = torch.device(opts.device if torch.cuda.is_available() else "cpu")', "torch_cuda_api", "replace",
      True, 'device = torch.device(opts.device if torch.npu.is_available() else "cpu")',
      "False on an NPU host: silently evaluates on CPU"),
])

E("rl4co_tsp_env", "rl4co/envs/routing/tsp/env.py", "explicit_replacement",
  "ai4co/rl4co rl4co/envs/routing/tsp/env.py", [])
