# Labels for probe212: traffic / spatio-temporal graph forecasting code (CUDA -> Ascend NPU).
# One entry per upstream file; one change per line a careful porter would edit.
# Policy notes are in ../README.md ("How the labels were chosen").

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("torch_npu must be imported in the entry script before any NPU device is used; "
               "mandatory for the torch 2.1-era stack these repos pin (autoload only from torch_npu 2.5.1)")
SET_ENV_NOTE = ("CANN environment must be sourced before python starts, otherwise import torch_npu fails "
                "(libascendcl.so / libhccl.so not found)")

# --------------------------------------------------------------------------- Graph WaveNet
E("gwn_train", "Graph-WaveNet/train.py", "explicit_replacement",
  "nnzhan/Graph-WaveNet train.py (argparse --device cuda:3, supports moved with .to(device))", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("parser.add_argument('--device', type=str, default='cuda:3', help='')", "device_type", "replace", True,
        "parser.add_argument('--device', type=str, default='npu:0', help='')",
        "default device string flows into torch.device(args.device) and every .to(device); 'cuda:3' fails on an NPU host"),
      C("peak = torch.cuda.max_memory_allocated() / 1024 ** 2", "torch_cuda_api", "replace", False,
        "peak = torch.npu.max_memory_allocated() / 1024 ** 2",
        "CUDA allocator never initialised on an NPU host, so this silently reports 0 MiB; logging only"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats()",
        "resolves the current CUDA device -> lazy CUDA init raises on a host without CUDA (only with --gpu_stats)"),
  ])

E("gwn_test", "Graph-WaveNet/test.py", "transfer_to_npu",
  "nnzhan/Graph-WaveNet test.py (evaluates the released checkpoint, cuda.Event latency timing)", [
      C("=from model import *", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu; from torch_npu.contrib import transfer_to_npu",
        "porter chooses automatic migration for this eval script: transfer_to_npu maps torch.cuda.* (Event, "
        "synchronize) to torch.npu and rewrites 'cuda:3' in .to()/torch.device arguments, so the other CUDA lines stay"),
      C("model.load_state_dict(torch.load(args.checkpoint))", "tensor_to_device", "replace", False,
        "model.load_state_dict(torch.load(args.checkpoint, map_location=device))",
        "released checkpoint holds CUDA storages; transfer_to_npu should remap them (torch.cuda is patched) but "
        "unconfirmed for map_location=None, so an explicit map_location is the safe edit"),
  ])

E("gwn_model", "Graph-WaveNet/model.py", "explicit_replacement",
  "nnzhan/Graph-WaveNet model.py (gwnet, adaptive adjacency, device passed in)", [
      # deliberately empty: every placement goes through the `device` argument; torch.svd has an NPU kernel (_linalg_svd)
  ])

E("gwn_run_sh", "Graph-WaveNet/scripts/run_experiments.sh", "explicit_replacement",
  "Graph WaveNet experiment launcher (per-GPU CUDA_VISIBLE_DEVICES, --device cuda:0)", [
      C("=set -e", "env_var", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE),
      C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${GPU}",
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; every run would land on NPU 0 of the box"),
      C("python train.py --device cuda:0 --data data/METR-LA --adjdata", "device_type", "replace", True,
        "python train.py --device npu:0 --data data/METR-LA --adjdata data/sensor_graph/adj_mx.pkl \\",
        "train.py is ported by explicit replacement; torch.device('cuda:0') fails on the NPU host"),
      C("python train.py --device cuda:0 --data data/METR-LA --gcn_bool --aptonly", "device_type", "replace", True,
        "python train.py --device npu:0 --data data/METR-LA --gcn_bool --aptonly --addaptadj --randomadj \\",
        "same as above"),
      C("CUDA_VISIBLE_DEVICES=1 python train.py --device cuda:0 --data data/PEMS-BAY", "device_type", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=1 python train.py --device npu:0 --data data/PEMS-BAY \\",
        "both the visibility variable and the device string are CUDA-only on this line"),
      C("python test.py --device cuda:0 --gcn_bool --addaptadj --randomadj", "device_type", "replace", False,
        "python test.py --device npu:0 --gcn_bool --addaptadj --randomadj \\",
        "test.py is ported with transfer_to_npu, which rewrites 'cuda:0' to 'npu:0'; edit only for clarity"),
  ])

# --------------------------------------------------------------------------- DCRNN (PyTorch port)
E("dcrnn_cell", "DCRNN_PyTorch/model/pytorch/dcrnn_cell.py", "explicit_replacement",
  "chnsh/DCRNN_PyTorch + xlwang233/pytorch-DCRNN dcrnn_cell.py (sparse diffusion supports moved with .cuda())", [
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
        "module-level device: on an NPU host torch.cuda.is_available() is False, so every DCGRU parameter is "
        "silently created on the CPU"),
      C("self._supports.append(self._build_sparse_matrix(support).cuda())", "tensor_to_device", "replace", True,
        "self._supports.append(self._build_sparse_matrix(support).to_dense().to(device))",
        ".cuda() raises without CUDA; densifying is the porter's choice because sparse mm on NPU is unconfirmed "
        "(207/325-node graphs are small)"),
      C("x1 = torch.sparse.mm(support, x0)", "unsupported_op_workaround", "replace", False,
        "x1 = torch.mm(support, x0)",
        "no sparse mm kernel appears in the NPU op lists and sparse ops without kernels raise instead of falling "
        "back; unconfirmed for COO @ dense, so dense mm is used"),
      C("x2 = 2 * torch.sparse.mm(support, x1) - x0", "unsupported_op_workaround", "replace", False,
        "x2 = 2 * torch.mm(support, x1) - x0", "same as the first-order term (unconfirmed)"),
  ])

E("dcrnn_supervisor", "DCRNN_PyTorch/model/pytorch/dcrnn_supervisor.py", "explicit_replacement",
  "chnsh/DCRNN_PyTorch dcrnn_supervisor.py (training loop, checkpoints, TensorBoard)", [
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
        "batches are sent to this device in _prepare_data; stays CPU on an NPU host while the cell params are on NPU"),
      C("self.dcrnn_model = dcrnn_model.cuda() if torch.cuda.is_available() else dcrnn_model", "tensor_to_device",
        "replace", True, "self.dcrnn_model = dcrnn_model.to(device)",
        "cuda check is False on NPU, so the projection layers stay on CPU while DCGRU weights are on NPU -> "
        "device mismatch"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "guards a memory log line only; silently skipped on NPU"),
      C("torch.cuda.max_memory_allocated(device) / 1e6))", "torch_cuda_api", "replace", False,
        "torch.npu.max_memory_allocated(device) / 1e6))", "logging only (reached once the guard above is ported)"),
  ])

E("dcrnn_train", "DCRNN_PyTorch/dcrnn_train_pytorch.py", "explicit_replacement",
  "chnsh/DCRNN_PyTorch dcrnn_train_pytorch.py (yaml config, --gpu_id, seeding)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", True, "torch.npu.manual_seed_all(seed)",
        "the only torch seeding call here (no torch.manual_seed), so the NPU generator used by xavier init on "
        "the NPU-resident DCGRU weights is silently left unseeded"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = str(args.gpu_id)", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(args.gpu_id)",
        "CUDA_VISIBLE_DEVICES is ignored on Ascend; must also be set before the first NPU call (the supervisor "
        "module queries the device at import time - ordering is unconfirmed)"),
  ])

# --------------------------------------------------------------------------- ASTGCN
E("astgcn_train", "ASTGCN-r-pytorch/train_ASTGCN_r.py", "explicit_replacement",
  "guoshnBJTU/ASTGCN-r-pytorch train_ASTGCN_r.py (configparser ctx -> CUDA_VISIBLE_DEVICES, DEVICE = cuda:0)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = ctx', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = ctx',
        "the .conf 'ctx' selects the card through CUDA_VISIBLE_DEVICES, which Ascend ignores"),
      C("USE_CUDA = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
        "USE_CUDA = torch.npu.is_available()", "only printed; reports False on NPU"),
      C("DEVICE = torch.device('cuda:0')", "device_type", "replace", True, "DEVICE = torch.device('npu:0')",
        "hard-coded CUDA device used for data, model and loss"),
  ])

E("astgcn_model", "ASTGCN-r-pytorch/model/ASTGCN_r.py", "explicit_replacement",
  "guoshnBJTU/ASTGCN-r-pytorch model/ASTGCN_r.py (DEVICE threaded through every layer)", [
      # deliberately empty: all placement uses the DEVICE argument or cheb_polynomials[0].device
  ])

# --------------------------------------------------------------------------- STGCN
E("stgcn_main", "STGCN/main.py", "explicit_replacement",
  "hazdzz/STGCN main.py (--enable_cuda flag, set_env seeding, GPU memory print)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("os.environ['CUBLAS_WORKSPACE_CONFIG'] = ':4096:8'", "env_var", "removal", False, None,
        "cuBLAS-only determinism knob, ignored on Ascend (and use_deterministic_algorithms is commented out)"),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
        "torch.manual_seed above already seeds the NPU generator; redundant no-op on NPU"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "redundant with torch.manual_seed"),
      C("if args.enable_cuda and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if args.enable_cuda and torch.npu.is_available():",
        "False on an NPU host -> silently trains on CPU"),
      C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
        "CUDA device object"),
      C("torch.cuda.empty_cache() # Clean cache", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache() # Clean cache", "no-op when CUDA was never initialised"),
      C("gpu_mem_alloc = torch.cuda.max_memory_allocated() / 1000000 if torch.cuda.is_available() else 0",
        "torch_cuda_api", "replace", False,
        "gpu_mem_alloc = torch.npu.max_memory_allocated() / 1000000 if torch.npu.is_available() else 0",
        "log value only; prints 0 on NPU"),
  ])

# --------------------------------------------------------------------------- BasicTS
E("basicts_launcher", "BasicTS/basicts/launcher.py", "explicit_replacement",
  "zezhishao/BasicTS launcher (launch_training(cfg, gpus='0'), CFG.GPU_NUM, mp.spawn + NCCL)", [
      C("cfg.setdefault('DIST_BACKEND', 'nccl')", "dist_backend", "replace", True,
        "cfg.setdefault('DIST_BACKEND', 'hccl')", "NCCL backend does not exist on Ascend; HCCL is the NPU backend"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = str(gpus).replace(' ', '')", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(gpus).replace(' ', '')",
        "gpus='0,1' would otherwise not restrict which NPUs the job uses"),
      C("return torch.cuda.device_count()", "torch_cuda_api", "replace", True, "return torch.npu.device_count()",
        "returns 0 on an NPU host, so launch_training raises 'GPU_NUM = 1 but only 0 GPU(s) are visible'"),
      C("=torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "per-rank device binding before init_process_group; raises without CUDA"),
      C("elif torch.cuda.is_available():", "torch_cuda_api", "replace", False, "elif torch.npu.is_available():",
        "single-process path: skipping set_device(0) is harmless because device 0 is the default"),
      C("torch.cuda.set_device(local_rank)  # single process", "torch_cuda_api", "replace", False,
        "torch.npu.set_device(local_rank)  # single process: local_rank == 0",
        "only reached once the guard is ported; device 0 is the default anyway"),
      C("torch.cuda.set_device(0)", "torch_cuda_api", "replace", True, "torch.npu.set_device(0)",
        "launch_evaluation(device_type='gpu') path; raises without CUDA"),
  ])

E("basicts_runner", "BasicTS/basicts/runners/base_tsf_runner.py", "device_branch_or_abstraction",
  "zezhishao/BasicTS BaseTimeSeriesForecastingRunner (to_running_device, DDP, AMP, checkpoint map_location)", [
      C("self.device = torch.device('cuda', torch.cuda.current_device())", "device_type", "replace", True,
        "self.device = torch.device('npu', torch.npu.current_device())",
        "torch.cuda.current_device() triggers CUDA init and raises on an NPU host"),
      C("self.grad_scaler = torch.cuda.amp.GradScaler(", "amp", "replace", False,
        "self.grad_scaler = torch.npu.amp.GradScaler(enabled=self.use_amp and self.amp_dtype == torch.float16)",
        "AMP is off by default; with CUDA absent the CUDA scaler disables itself with a warning (silent fp32)"),
      C("return src.cuda(non_blocking=True) if isinstance(src, torch.Tensor) else src.cuda()", "tensor_to_device",
        "replace", True,
        "return src.to(self.device, non_blocking=True) if isinstance(src, torch.Tensor) else src.to(self.device)",
        "the runner's single placement helper; .cuda() raises without CUDA"),
      C("model = DDP(model, device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
        "model = DDP(model, device_ids=[torch.npu.current_device()],", "multi-device path; raises without CUDA"),
      C("pin_memory=section.DATA.get('PIN_MEMORY', False),", "pin_memory", "replace", False,
        "pin_memory=section.DATA.get('PIN_MEMORY', False), pin_memory_device='npu',",
        "PIN_MEMORY=True in the STID config; whether pinning targets the NPU without pin_memory_device is "
        "unconfirmed (performance only)"),
      C("with torch.cuda.amp.autocast(enabled=self.use_amp, dtype=self.amp_dtype):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=self.use_amp, dtype=self.amp_dtype):",
        "CUDA autocast is a disabled no-op on NPU; fp32 still correct"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op when CUDA was never initialised"),
      C("mem = torch.cuda.max_memory_allocated() / (1024 ** 3)", "torch_cuda_api", "replace", False,
        "mem = torch.npu.max_memory_allocated() / (1024 ** 3)", "logging only; reports 0 on NPU"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "use_gpu is True for GPU_NUM=1, so this runs and raises without CUDA"),
      C("torch.cuda.synchronize(self.device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(self.device)",
        "same"),
      C("checkpoint = torch.load(ckpt_path, map_location='cuda:{}'.format(get_local_rank()))", "device_type",
        "replace", True, "checkpoint = torch.load(ckpt_path, map_location='npu:{}'.format(get_local_rank()))",
        "map_location to a CUDA device fails on an NPU host"),
  ])

E("basicts_cfg", "BasicTS/baselines/STID/METR-LA.py", "explicit_replacement",
  "zezhishao/BasicTS baselines/STID/METR-LA.py (CFG.GPU_NUM, CFG.ENV.CUDNN, PIN_MEMORY)", [
      # deliberately empty: GPU_NUM is a device count, cudnn/TF32 flags are accepted no-ops on NPU,
      # PIN_MEMORY is acted on in the runner (labelled there)
  ])

E("basicts_train", "BasicTS/experiments/train.py", "explicit_replacement",
  "zezhishao/BasicTS experiments/train.py (-g/--gpus, basicts.launch_training)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        IMPORT_NOTE + "; spawned workers re-import this main module, so they get torch_npu too"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
        "only prints a misleading 'will run on CPU' warning on an NPU host"),
  ])

E("basicts_dist_sh", "BasicTS/scripts/train_large.sh", "explicit_replacement",
  "BasicTS-style multi-GPU launcher script (NCCL_* tuning, nvidia-smi, -g 0,1,2,3)", [
      C("=set -euo pipefail", "env_var", "npu_only_addition", True,
        "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u",
        SET_ENV_NOTE + "; set_env.sh expands possibly-unset variables, hence the set +u/-u around it"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
        "NCCL-only knob, ignored by HCCL; no direct HCCL equivalent"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only knob, ignored by HCCL"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
        "NCCL logging level has no effect; CANN log level is the closest counterpart (2 = warning)"),
      C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "torch_cuda_api", "replace", True,
        "npu-smi info",
        "nvidia-smi does not exist on an Ascend host; with set -e the script aborts here"),
  ])

E("basicts_req", "BasicTS/requirements.txt", "explicit_replacement",
  "zezhishao/BasicTS requirements.txt (CUDA wheel index, torch +cu117 pin)", [
      C("--extra-index-url https://download.pytorch.org/whl/cu117", "torch_cuda_api", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "Ascend's x86 instructions use the CPU torch wheel; on aarch64 plain PyPI torch is used"),
      C("=torch==1.13.1+cu117", "torch_cuda_api", "replace", True, "torch==2.1.0",
        "CUDA local-version wheel; also there is no torch_npu release for torch 1.13, so the pin moves to 2.1.0"),
      C("=easy-torch==1.3.2", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
        "torch-npu pin matching torch 2.1.0 (2.1.0.post10 pairs with CANN 8.0.0); placed after the easy-torch "
        "line because the torch line itself is rewritten"),
      C("nvidia-ml-py==11.525.84", "torch_cuda_api", "removal", False, None,
        "NVML bindings are useless on Ascend (pure-Python, installs fine, nothing in the port calls it)"),
  ])

# --------------------------------------------------------------------------- LargeST
E("largest_args", "LargeST/src/utils/args.py", "explicit_replacement",
  "liuxu77/LargeST src/utils/args.py (--device cuda:0 default shared by all baselines)", [
      C("parser.add_argument('--device', type=str, default='cuda:0')", "device_type", "replace", True,
        "parser.add_argument('--device', type=str, default='npu:0')",
        "default consumed by torch.device(args.device) in every experiment"),
      C("if args.device.startswith('cuda'):", "device_type", "replace", False, "if args.device.startswith('npu'):",
        "validation helper: an 'npu:N' device simply skips it when left unchanged; port the four lines together"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
        "part of the optional validation block"),
      C("if idx >= torch.cuda.device_count():", "torch_cuda_api", "replace", False,
        "if idx >= torch.npu.device_count():", "part of the optional validation block"),
      C("raise RuntimeError('--device {} but only {} GPU(s) found'.format(args.device, torch.cuda.device_count()))",
        "torch_cuda_api", "replace", False,
        "raise RuntimeError('--device {} but only {} NPU(s) found'.format(args.device, torch.npu.device_count()))",
        "part of the optional validation block"),
  ])

E("largest_helper", "LargeST/src/utils/helper.py", "explicit_replacement",
  "liuxu77/LargeST src/utils/helper.py (set_seed, dataloaders, check_device) + NVML free-GPU picker", [
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
        "torch.manual_seed above already seeds the NPU generator"),
      C("=import pynvml", "torch_cuda_api", "removal", False, None,
        "NVML import becomes unused once the picker uses torch.npu.mem_get_info"),
      C("pynvml.nvmlInit()", "torch_cuda_api", "removal", True, None,
        "NVML has no driver library on an Ascend host: nvmlInit raises (reached with --auto_gpu)"),
      C("for idx in range(pynvml.nvmlDeviceGetCount()):", "torch_cuda_api", "replace", True,
        "for idx in range(torch.npu.device_count()):", "NVML device enumeration"),
      C("handle = pynvml.nvmlDeviceGetHandleByIndex(idx)", "torch_cuda_api", "removal", True, None,
        "NVML handle, not needed with torch.npu.mem_get_info"),
      C("free_mb = pynvml.nvmlDeviceGetMemoryInfo(handle).free / 1024 ** 2", "torch_cuda_api", "replace", True,
        "free_mb = torch.npu.mem_get_info(idx)[0] / 1024 ** 2", "free-memory query through torch_npu"),
      C("pynvml.nvmlShutdown()", "torch_cuda_api", "removal", True, None, "NVML teardown"),
      C("return 'cuda:{}'.format(best_idx)", "device_type", "replace", True, "return 'npu:{}'.format(best_idx)",
        "returned string becomes args.device"),
      C("batch_size=batch_size, shuffle=True, num_workers=num_workers, pin_memory=pin_memory, drop_last=False)",
        "pin_memory", "replace", False,
        "batch_size=batch_size, shuffle=True, num_workers=num_workers, pin_memory=pin_memory, "
        "pin_memory_device='npu' if pin_memory else '', drop_last=False)",
        "--pin_memory is used for CA; NPU-targeted pinning without pin_memory_device unconfirmed (performance only)"),
      C("batch_size=batch_size, shuffle=False, num_workers=num_workers, pin_memory=pin_memory)", "pin_memory",
        "replace", False,
        "batch_size=batch_size, shuffle=False, num_workers=num_workers, pin_memory=pin_memory, "
        "pin_memory_device='npu' if pin_memory else '')",
        "same as the train loader"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "check_device(None) silently falls back to CPU on an NPU host"),
      C('return torch.device("cuda")', "device_type", "replace", True, 'return torch.device("npu")',
        "CUDA device returned as the default"),
  ])

E("largest_engine", "LargeST/src/base/engine.py", "explicit_replacement",
  "liuxu77/LargeST src/base/engine.py (BaseEngine: _to_device, save/load, evaluate)", [
      C("if str(self._device).startswith('cuda'):", "device_type", "replace", False,
        "if str(self._device).startswith('npu'):", "guards a peak-memory log line; silently skipped on NPU"),
      C("torch.cuda.max_memory_reserved(self._device)", "torch_cuda_api", "replace", False,
        "self._logger.info('Peak NPU memory: {:.2f} GB'.format(torch.npu.max_memory_reserved(self._device) / 1024 ** 3))",
        "logging only"),
      C("=torch.cuda.synchronize(self._device)", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize(self._device)", "test_speed: raises without CUDA"),
      C("torch.cuda.synchronize(self._device)  # wait for the forward pass", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize(self._device)  # wait for the forward pass", "same"),
  ])

E("largest_main", "LargeST/experiments/gwnet/main.py", "explicit_replacement",
  "liuxu77/LargeST experiments/gwnet/main.py (device = torch.device(args.device), supports on device)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("if device.type == 'cuda':", "device_type", "replace", False, "if device.type == 'npu':",
        "skipping set_device leaves npu:0 current while tensors go to args.device; works for single-device "
        "training as far as known (unconfirmed), so not required"),
      C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", False, "torch.npu.set_device(device)",
        "inside the optional guard above"),
  ])

E("largest_run_sh", "LargeST/experiments/gwnet/run.sh", "explicit_replacement",
  "liuxu77/LargeST experiments/<model>/run.sh (one line per subset, --device cuda:N)", [
      C("=#!/bin/bash", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        SET_ENV_NOTE),
      C("--device cuda:0 --dataset SD --years 2019 --model_name gwnet --seed 2018 --bs 64", "device_type",
        "replace", True,
        "python experiments/gwnet/main.py --device npu:0 --dataset SD --years 2019 --model_name gwnet --seed 2018 --bs 64",
        "CUDA device string passed to torch.device"),
      C("--device cuda:0 --dataset GBA", "device_type", "replace", True,
        "python experiments/gwnet/main.py --device npu:0 --dataset GBA --years 2019 --model_name gwnet --seed 2018 --bs 64",
        "same"),
      C("--device cuda:0 --dataset GLA", "device_type", "replace", True,
        "python experiments/gwnet/main.py --device npu:0 --dataset GLA --years 2019 --model_name gwnet --seed 2018 --bs 32",
        "same"),
      C("--device cuda:1 --dataset CA", "device_type", "replace", True,
        "python experiments/gwnet/main.py --device npu:1 --dataset CA --years 2019 --model_name gwnet --seed 2018 "
        "--bs 16 --num_workers 8 --pin_memory",
        "same"),
  ])

E("largest_docker", "LargeST/docker/Dockerfile", "explicit_replacement",
  "CUDA reproduction Dockerfile for a LargeST-style repo (pytorch/pytorch CUDA base, PyG cu118 wheels)", [
      C("FROM pytorch/pytorch:2.1.0-cuda11.8-cudnn8-devel", "torch_cuda_api", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "CUDA base image; the NPU image needs CANN (driver mounted by the Ascend docker runtime)"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "NVIDIA container-runtime variable; Ascend docker runtime uses ASCEND_VISIBLE_DEVICES at docker run time"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container-runtime variable, ignored on Ascend"),
      C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6+PTX"', "env_var", "removal", False, None,
        "only affects nvcc extension builds; nothing is built from source here"),
      C("RUN pip install --no-cache-dir -r requirements.txt", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install --no-cache-dir torch==2.1.0 torch-npu==2.1.0.post10",
        "the CANN base image has no torch; torch and the matching torch-npu must be installed"),
      C("-f https://data.pyg.org/whl/torch-2.1.0+cu118.html", "torch_cuda_api", "replace", True,
        "RUN pip install --no-cache-dir torch_scatter==2.1.2 torch_sparse==0.6.18 -f https://data.pyg.org/whl/torch-2.1.0+cpu.html",
        "cu118 PyG wheels link against CUDA torch/libcudart and fail to import with the CPU torch used by torch_npu"),
      C("RUN pip install --no-cache-dir torch_geometric==2.4.0 nvidia-ml-py", "torch_cuda_api", "replace", False,
        "RUN pip install --no-cache-dir torch_geometric==2.4.0",
        "NVML bindings are useless on Ascend; dropping them also makes helper.select_free_gpu degrade gracefully"),
  ])

# --------------------------------------------------------------------------- D2STGNN
E("d2stgnn_yaml", "D2STGNN/configs/METR-LA.yaml", "explicit_replacement",
  "zezhishao/D2STGNN configs/METR-LA.yaml (start_up.device read by main.py)", [
      C("device:       cuda:0", "device_type", "replace", True, "device:       npu:0",
        "read by main.py into torch.device(config['start_up']['device'])"),
  ])

E("d2stgnn_main", "D2STGNN/main.py", "explicit_replacement",
  "zezhishao/D2STGNN main.py (yaml start_up, CUDA_VISIBLE_DEVICES, nn.DataParallel when >1 GPU)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
        "torch.manual_seed above already seeds the NPU generator"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "redundant with torch.manual_seed"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = gpu_ids", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = gpu_ids", "card selection is ignored on Ascend otherwise"),
      C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
        "if torch.npu.device_count() > 1:",
        "returns 0 on NPU, so multi-card is silently skipped (performance only)"),
      C("""print("Let's use", torch.cuda.device_count(), "GPUs!")""", "torch_cuda_api", "replace", False,
        """print("Let's use", torch.npu.device_count(), "NPUs!")""", "log line"),
      C("model = nn.DataParallel(model)", "distributed_framework", "replace", True,
        "print('nn.DataParallel is unsupported on Ascend NPU; training on one NPU (use DDP + torchrun for more)')",
        "torch.nn.DataParallel is unsupported on Ascend (✘ in the 2.7.1 API list, msFmkTransplt: use DDP); "
        "reached as soon as the device_count check is ported"),
  ])

E("d2stgnn_train_utils", "D2STGNN/utils/train.py", "explicit_replacement",
  "zezhishao/D2STGNN utils/train.py (data_reshaper, save/load, timers, masked metrics)", [
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "cuda_timer decorator: raises without CUDA"),
      C("torch.cuda.synchronize()  # wait for the step's kernels", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for the step's kernels", "same"),
      C("torch.cuda.memory_allocated() / 2 ** 20", "torch_cuda_api", "replace", False,
        "print('NPU memory allocated before empty_cache: {:.1f} MB'.format(torch.npu.memory_allocated() / 2 ** 20))",
        "verbose log only; prints 0 on NPU"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op when CUDA was never initialised"),
      C("if device.type == 'cuda':", "device_type", "replace", False, "if device.type == 'npu':",
        "cosmetic log header; an NPU device falls through to str(device)"),
      C("props = torch.cuda.get_device_properties(device)", "torch_cuda_api", "replace", False,
        "props = torch.npu.get_device_properties(device)", "inside the cosmetic guard"),
      C("props.major, props.minor)", "device_capability_check", "replace", False,
        "return '{} ({:.0f} GB)'.format(props.name, props.total_memory / 2 ** 30)",
        "NPU device properties carry name/total_memory but no major/minor; must change together with the guard"),
  ])

# --------------------------------------------------------------------------- AGCRN
E("agcrn_run", "AGCRN/model/Run.py", "explicit_replacement",
  "LeiBAI/AGCRN model/Run.py (DEVICE = 'cuda:0', set_device(int(args.device[5])))", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("DEVICE = 'cuda:0'", "device_type", "replace", True, "DEVICE = 'npu:0'",
        "default for --device; model.to(args.device) fails with a CUDA string"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "False on NPU -> the else branch silently rewrites args.device to 'cpu'"),
      C("torch.cuda.set_device(int(args.device[5]))", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(int(args.device.split(':')[-1]))",
        "torch.cuda.set_device raises without CUDA, and args.device[5] indexes past the end of 'npu:0'"),
      C("model.load_state_dict(torch.load('../pre-trained/{}.pth'.format(args.dataset)))", "tensor_to_device",
        "replace", True,
        "model.load_state_dict(torch.load('../pre-trained/{}.pth'.format(args.dataset), map_location=args.device))",
        "released pre-trained weights were saved from CUDA tensors; deserialising them needs CUDA without map_location"),
  ])

E("agcrn_dataloader", "AGCRN/lib/dataloader.py", "explicit_replacement",
  "LeiBAI/AGCRN lib/dataloader.py (TensorFloat = torch.cuda.FloatTensor if cuda else torch.FloatTensor)", [
      C("cuda = True if torch.cuda.is_available() else False", "torch_cuda_api", "replace", True,
        "npu = True if torch.npu.is_available() else False",
        "False on NPU -> whole dataset stays on CPU while the model is on the NPU -> device mismatch in the trainer"),
      C("TensorFloat = torch.cuda.FloatTensor if cuda else torch.FloatTensor", "device_type", "replace", True,
        "TensorFloat = torch.npu.FloatTensor if npu else torch.FloatTensor",
        "legacy CUDA tensor type; torch_npu exposes torch.npu.FloatTensor"),
      C("num_workers=num_workers, pin_memory=True,", "pin_memory", "replace", False,
        "num_workers=num_workers, pin_memory=True, pin_memory_device='npu',",
        "host-side loader variant; NPU-targeted pinning without pin_memory_device unconfirmed (performance only)"),
  ])

E("agcrn_traininits", "AGCRN/lib/TrainInits.py", "explicit_replacement",
  "LeiBAI/AGCRN lib/TrainInits.py (init_seed, init_device, get_memory_usage)", [
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
        "torch.manual_seed above already seeds the NPU generator"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "init_device silently falls back to CPU on NPU"),
      C("torch.cuda.set_device(int(opt.device[5]))", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(int(opt.device.split(':')[-1]))",
        "raises without CUDA; [5] is out of range for 'npu:0'"),
      C("allocated_memory = torch.cuda.memory_allocated(device) / (1024*1024.)", "torch_cuda_api", "replace", False,
        "allocated_memory = torch.npu.memory_allocated(device) / (1024*1024.)", "statistics only; 0 on NPU"),
      C("cached_memory = torch.cuda.memory_cached(device) / (1024*1024.)", "torch_cuda_api", "replace", False,
        "cached_memory = torch.npu.memory_reserved(device) / (1024*1024.)", "statistics only; 0 on NPU"),
  ])

# --------------------------------------------------------------------------- LibCity
E("libcity_config", "Bigscity-LibCity/libcity/config/config_parser.py", "device_branch_or_abstraction",
  "LibCity/Bigscity-LibCity libcity/config/config_parser.py (_init_device: gpu/gpu_id, optional DDP)", [
      C('torch.distributed.init_process_group(backend="nccl", init_method="env://")', "dist_backend", "replace",
        True, 'torch.distributed.init_process_group(backend="hccl", init_method="env://")',
        "NCCL backend unavailable on Ascend"),
      C("=torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "per-rank device binding"),
      C('self.config[\'device\'] = torch.device("cuda", local_rank)', "device_type", "replace", True,
        'self.config[\'device\'] = torch.device("npu", local_rank)', "distributed device"),
      C("torch.cuda.set_device(gpu_id)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu_id)",
        "gpu defaults to True, so this runs on every single-device launch and raises without CUDA"),
      C('"cuda:%d" % gpu_id if torch.cuda.is_available() and use_gpu else "cpu")', "device_type", "replace", True,
        '"npu:%d" % gpu_id if torch.npu.is_available() and use_gpu else "cpu")',
        "silently resolves to CPU on NPU"),
  ])

E("libcity_executor", "Bigscity-LibCity/libcity/executor/traffic_state_executor.py", "explicit_replacement",
  "LibCity/Bigscity-LibCity TrafficStateExecutor (device from config, grad accumulation, optional AMP)", [
      C("self.amp_scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)", "amp", "replace", False,
        "self.amp_scaler = torch.npu.amp.GradScaler(enabled=self.use_amp)",
        "use_amp defaults to False; a CUDA scaler just disables itself on NPU (silent fp32)"),
      C("torch.cuda.max_memory_allocated(self.device) / 1024 ** 2)", "torch_cuda_api", "replace", False,
        "torch.npu.max_memory_allocated(self.device) / 1024 ** 2)", "epoch log value; 0 on NPU"),
      C("with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=self.use_amp):", "amp", "replace",
        False, "with torch.autocast(device_type='npu', dtype=torch.float16, enabled=self.use_amp):",
        "CUDA autocast disabled on NPU; fp32 still correct"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op when CUDA was never initialised"),
  ])

# --------------------------------------------------------------------------- STAEformer
E("staeformer_model", "STAEformer/model/STAEformer.py", "device_branch_or_abstraction",
  "XDZhelheim/STAEformer model/STAEformer.py with a fork's SDPA/flash fast path", [
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
        "on NPU the fast path is just skipped and the manual attention runs (performance only)"),
      C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", "replace", False,
        "return True  # NPU SDPA dispatches to its fused kernel; npu.get_device_capability() returns None",
        "compute-capability gate is meaningless on Ascend and would unpack None once the guard is ported"),
      C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):",
        "attention_kernel", "replace", False, "with contextlib.nullcontext():",
        "torch.backends.cuda.sdp_kernel is ✘ on Ascend; reached only when the fast path is enabled"),
  ])

E("staeformer_train", "STAEformer/model/train.py", "explicit_replacement",
  "XDZhelheim/STAEformer model/train.py (-g gpu_num -> CUDA_VISIBLE_DEVICES) with bf16/compile options", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('enabled=USE_AMP):  # val', "amp", "replace", False,
        'with torch.autocast("npu", dtype=AMP_DTYPE, enabled=USE_AMP):  # val',
        "CUDA autocast is a disabled no-op on NPU; fp32 still correct"),
      C('enabled=USE_AMP):  # test / predict', "amp", "replace", False,
        'with torch.autocast("npu", dtype=AMP_DTYPE, enabled=USE_AMP):  # test / predict', "same"),
      C('enabled=USE_AMP):  # loss stays fp32 below', "amp", "replace", False,
        'with torch.autocast("npu", dtype=AMP_DTYPE, enabled=USE_AMP):  # loss stays fp32 below', "same"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "test_model always runs it; raises without CUDA"),
      C("torch.cuda.synchronize()  # make sure all kernels finished", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # make sure all kernels finished before stopping the clock", "same"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = f"{GPU_ID}"', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = f"{GPU_ID}"', "-g selects the card via an env var Ascend ignores"),
      C('DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'DEVICE = torch.device("npu" if torch.npu.is_available() else "cpu")', "silently CPU on NPU"),
      C("USE_AMP = bool(args.amp) and torch.cuda.is_bf16_supported()", "device_capability_check", "replace", True,
        "USE_AMP = bool(args.amp) and torch.npu.is_bf16_supported()",
        "with --amp, torch.cuda.is_bf16_supported() queries the current CUDA device and raises without CUDA"),
      C("fused=torch.cuda.is_available())", "fused_optimizer", "replace", False,
        'optimizer = torch_npu.optim.NpuFusedAdam(model.parameters(), lr=cfg["lr"], '
        'weight_decay=cfg.get("weight_decay", 0), eps=cfg.get("eps", 1e-8))',
        "fused is simply False on NPU (still correct); note the NPU op lists have _fused_adamw_ but no _fused_adam_, "
        "so fused=torch.npu.is_available() would not be a safe port (unconfirmed)"),
      C('model = torch.compile(model.to(DEVICE), mode="max-autotune")', "compile_mode", "replace", False,
        "model = torch.compile(model.to(DEVICE))",
        "max-autotune relies on Triton GEMM autotuning; Inductor support on NPU depends on the torch_npu version "
        "(unconfirmed for the 2.1 stack); only with --compile"),
  ])
