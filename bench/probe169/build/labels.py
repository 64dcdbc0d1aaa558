"""Labels for probe169: graph transformers and molecular ML (CUDA -> Ascend NPU).

Each E(...) names one upstream file under files/<id>/upstream/<path>; each C(...) one line a careful
porter edits. See README.md ("How the labels were chosen") for the policy behind required/ported.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
NO_NVCC_NOTE = "CUDA-only build artefact; Ascend hosts have no nvcc / CUDA runtime"

# --------------------------------------------------------------------------------------------
# Graphormer (fairseq based)
# --------------------------------------------------------------------------------------------

E("graphormer_evaluate", "graphormer/evaluate/evaluate.py", "explicit_replacement",
  "Graphormer graphormer/evaluate/evaluate.py (fairseq checkpoint evaluation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script: torch.npu / 'npu' devices need torch_npu loaded (torch<2.5 has no backend autoload)"),
    C("model.to(torch.cuda.current_device())", "torch_cuda_api", "replace", True,
      "model.to(torch.device(\"npu\", torch.npu.current_device()))",
      "torch.cuda.current_device() raises without CUDA; an int index would also mean a CUDA device"),
    C("sample = utils.move_to_cuda(sample)", "tensor_to_device", "replace", True,
      "sample = utils.move_to_cuda(sample, device=torch.device(\"npu\", torch.npu.current_device()))",
      "fairseq's move_to_cuda defaults to torch.cuda.current_device(); fairseq is not ported here, so pass the NPU device at the call site"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on NPU (CUDA never initialised); only frees NPU cache when ported"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guards a peak-memory log line only; silently skipped on NPU"),
    C("peak = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated() / 1024 ** 3", "logging only"),
])

E("graphormer_layers", "graphormer/modules/graphormer_layers.py", "device_branch_or_abstraction",
  "Graphormer graphormer/modules/graphormer_layers.py + fairseq LayerNorm factory", [
    # deliberately empty: apex FusedLayerNorm is only chosen when torch.cuda.is_available() and apex
    # imports; on an NPU host both are false and nn.LayerNorm is used. Everything else takes
    # device/dtype from the batch.
])

E("graphormer_pcqv2_sh", "examples/property_prediction/pcqv2.sh", "explicit_replacement",
  "Graphormer examples/property_prediction/*.sh fairseq-train launcher", [
    C("=set -e", "import_torch_npu", "npu_only_addition", True, SET_ENV,
      "CANN environment must be sourced or torch_npu fails to load libhccl/libascendcl"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; device selection silently lost"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL_* is silently ignored; HCCL/CANN logging is controlled by ASCEND_GLOBAL_LOG_LEVEL"),
    C("--distributed-world-size ${n_gpu} \\", "dist_backend", "npu_only_addition", True,
      "    --distributed-backend hccl \\",
      "fairseq defaults --distributed-backend to nccl; NCCL does not exist on NPU (fairseq itself also needs NPU device handling, out of scope)"),
])

E("graphormer_install_sh", "install.sh", "explicit_replacement",
  "Graphormer install.sh (pip CUDA wheels + Cython build)", [
    C("=set -ex", "import_torch_npu", "npu_only_addition", True, SET_ENV,
      "needed for the torch_npu import check below"),
    C("pip install torch==1.9.1+cu111", "device_type", "replace", True,
      "pip install torch==2.1.0 torchaudio==2.1.0 --index-url https://download.pytorch.org/whl/cpu",
      "CUDA build of torch; torch_npu needs the matching CPU torch (x86: cpu index, aarch64: PyPI)"),
    C("=pip install lmdb", "import_torch_npu", "npu_only_addition", True,
      "pip install torch-npu==2.1.0.post10", "torch-npu pin matching torch 2.1.0 (CANN 8.0.x)"),
    C("pip install torch-scatter==2.0.9", "device_type", "replace", True,
      "pip install torch-scatter -f https://data.pyg.org/whl/torch-2.1.0+cpu.html",
      "cu111 wheel built against torch 1.9/CUDA; needs the CPU build for the new torch (aarch64 may need a source build)"),
    C("pip install torch-sparse==0.6.12", "device_type", "replace", True,
      "pip install torch-sparse -f https://data.pyg.org/whl/torch-2.1.0+cpu.html", "same as torch-scatter"),
    C("pip install dgl-cu111==0.7.2", "device_type", "replace", True,
      "pip install dgl==1.1.3 -f https://data.dgl.ai/wheels/repo.html",
      "dgl-cu111 links the CUDA 11.1 runtime; DGL has no NPU build, use the CPU package"),
    C("assert torch.cuda.is_available(), 'no CUDA device visible'", "torch_cuda_api", "replace", True,
      "python -c \"import torch, torch_npu; assert torch.npu.is_available(), 'no NPU visible'; print(torch_npu.__version__)\"",
      "assertion always fails on an NPU host"),
])

E("ogblsc_graphormer_main", "examples/lsc/pcqm4m/main_graphormer.py", "explicit_replacement",
  "OGB-LSC PCQM4M main_gnn.py-style Graphormer baseline (torch.cuda.amp, DataParallel)", [
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu",
      "--gpu would be silently ignored on NPU"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=args.amp):",
      "cuda autocast is disabled (with a warning) on a host without CUDA: --amp silently trains in fp32"),
    C("with torch.cuda.amp.autocast(enabled=args.amp, dtype=torch.float16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=args.amp, dtype=torch.float16):", "same as the training autocast"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)",
      "silent no-op on NPU; torch.manual_seed already seeds the NPU generator"),
    C("device = torch.device(\"cuda:0\") if torch.cuda.is_available()", "device_type", "replace", True,
      "device = torch.device(\"npu:0\") if torch.npu.is_available() else torch.device(\"cpu\")",
      "otherwise silently trains on CPU"),
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "n_gpus = torch.npu.device_count()", "reports 0 devices on NPU: multi-device request silently dropped"),
    C("collate_fn=collate, pin_memory=True, persistent_workers=True)", "pin_memory", "replace", False,
      "collate_fn=collate, pin_memory=True, pin_memory_device=\"npu\", persistent_workers=True)",
      "torch 2.1 DataLoader only pins when torch.cuda.is_available(); silently unpinned on NPU (perf only; unconfirmed for newer torch)"),
    C("collate_fn=collate, pin_memory=True, pin_memory_device=\"cuda\")", "pin_memory", "replace", True,
      "collate_fn=collate, pin_memory=True, pin_memory_device=\"npu\")",
      "pin_memory_device='cuda' makes the loader query torch.cuda.current_device(): raises without CUDA"),
    C("model = nn.DataParallel(model)", "distributed_framework", "replace", True,
      "model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])  # launched with torchrun, backend='hccl'",
      "torch.nn.DataParallel is unsupported on Ascend (✘ in the 2.7.1 API list); reached once device_count is ported"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "cuda GradScaler disables itself without CUDA: fp16 grads would go unscaled under NPU autocast"),
    C("torch.cuda.max_memory_allocated() / 2 ** 30, epoch)", "torch_cuda_api", "replace", False,
      "writer.add_scalar('gpu/max_mem_gb', torch.npu.max_memory_allocated() / 2 ** 30, epoch)",
      "TensorBoard scalar only; logs 0 on NPU"),
])

# --------------------------------------------------------------------------------------------
# Uni-Core / Uni-Mol
# --------------------------------------------------------------------------------------------

E("unicore_softmax_dropout", "unicore/modules/softmax_dropout.py", "kernel_rewrite",
  "Uni-Core unicore/modules/softmax_dropout.py (fused CUDA softmax+dropout with PyTorch fallback)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "only needed for the optional fused NPU branch below"),
    C("if input.is_cuda and HAS_SOFTMAX and input.shape[-1] <= _MAX_FUSED_DIM:", "npu_fused_op", "add_branch", False,
      "if input.is_npu and dropout_prob > 0.0 and is_training:  # torch_npu.npu_dropout_with_add_softmax(mask + bias, input, 1.0, dropout_prob, -1)",
      "the extension is absent on NPU so the plain softmax/dropout fallback already runs; a fused NPU path is perf only (semantics of mask/bias unconfirmed)"),
])

E("unicore_adam", "unicore/optim/adam.py", "explicit_replacement",
  "Uni-Core unicore/optim/adam.py (fairseq-style FusedAdam selection)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "needed for torch_npu.optim in the optional fused branch"),
    C("self._optimizer = Adam(params, **self.optimizer_config)", "fused_optimizer", "add_branch", False,
      "self._optimizer = torch_npu.optim.NpuFusedAdamW(params, **self.optimizer_config) if torch.npu.is_available() else Adam(params, **self.optimizer_config)",
      "FusedAdam is never chosen on NPU (no CUDA ext, is_available False) so pure-PyTorch Adam runs; NpuFusedAdamW (decoupled decay, like Uni-Core Adam) is perf only"),
])

E("unicore_setup", "setup.py", "explicit_replacement",
  "Uni-Core setup.py (CUDAExtension fused kernels)", [
    C("=disable_cuda_ext = False", "custom_cuda_extension", "replace", True,
      "disable_cuda_ext = CUDA_HOME is None  # Ascend hosts: no nvcc, use the PyTorch fallbacks",
      "without --disable-cuda-ext the build raises 'Nvcc was not found' on an NPU host"),
])

E("unicore_utils", "unicore/utils.py", "device_branch_or_abstraction",
  "Uni-Core unicore/utils.py (move_to_cuda, CudaEnvironment, rng state, JIT fuser flags)", [
    C("device = device or torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "device = device or torch.device(\"npu\", torch.npu.current_device())",
      "torch.cuda.current_device() raises without CUDA; every trainer batch goes through this helper"),
    C("return tensor.cuda(device=device, non_blocking=True)", "tensor_to_device", "replace", True,
      "return tensor.to(device=device, non_blocking=True)", ".cuda() cannot target an NPU device"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "NPU RNG state silently not saved in checkpoints (reproducibility of resumed runs only)"),
    C("state[\"cuda_rng_state\"] = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", False,
      "state[\"npu_rng_state\"] = torch.npu.get_rng_state()", "pairs with the guard above"),
    C("if torch.cuda.is_available() and \"cuda_rng_state\" in state:", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available() and \"npu_rng_state\" in state:", "restore side of the RNG state"),
    C("torch.cuda.set_rng_state(state[\"cuda_rng_state\"])", "torch_cuda_api", "replace", False,
      "torch.npu.set_rng_state(state[\"npu_rng_state\"])", "restore side of the RNG state"),
    C("if torch.cuda.is_available():  # keep the device generator in sync", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():  # keep the device generator in sync",
      "redundant on NPU: torch.manual_seed already seeds the NPU generator"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "silent no-op without CUDA"),
    C("cur_device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "cur_device = torch.npu.current_device()",
      "CudaEnvironment is built by the trainer whenever it runs on an accelerator; raises without CUDA"),
    C("prop = torch.cuda.get_device_properties(\"cuda:{}\".format(cur_device))", "torch_cuda_api", "replace", True,
      "prop = torch.npu.get_device_properties(\"npu:{}\".format(cur_device))", "raises without CUDA"),
    C("self.major = prop.major", "device_capability_check", "replace", True,
      "self.major = getattr(prop, \"major\", None) or 0",
      "NPU device properties carry only name/total_memory/L2/core counts (no major/minor); the {:2d} format in pretty_print would fail"),
    C("self.minor = prop.minor", "device_capability_check", "replace", True,
      "self.minor = getattr(prop, \"minor\", None) or 0", "same as major"),
    C("torch._C._jit_set_nvfuser_enabled(True)", "torch_cuda_api", "removal", False, None,
      "nvfuser is a CUDA-only TorchScript fuser; unconfirmed whether the call raises on torch_npu's CPU-built torch, pointless on NPU either way"),
])

E("unicore_distributed", "unicore/distributed/utils.py", "explicit_replacement",
  "Uni-Core / fairseq distributed/utils.py (init, spawn, all_gather_list)", [
    C("gpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "gpus_per_node = torch.npu.device_count()", "0 on NPU: Slurm rank/world size computed as 0"),
    C("assert args.distributed_world_size <= torch.cuda.device_count(), (", "torch_cuda_api", "replace", True,
      "assert args.distributed_world_size <= torch.npu.device_count(), (",
      "assertion fails on NPU for any world size > 0"),
    C("f\"but have {torch.cuda.device_count()} available devices\"", "torch_cuda_api", "replace", False,
      "f\"but have {torch.npu.device_count()} available devices\"", "assertion message only"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "dummy warm-up all-reduce is simply skipped on NPU; HCCL initialises on the first real collective"),
    C("dist.all_reduce(torch.zeros(1).cuda())", "tensor_to_device", "replace", False,
      "dist.all_reduce(torch.zeros(1).npu())", "only runs once the (optional) guard above is ported"),
    C("if torch.cuda.is_available() and not args.cpu:", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and not args.cpu:",
      "without set_device every rank lands on npu:0 and HCCL init collides"),
    C("torch.cuda.set_device(args.device_id)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.device_id)", "raises without CUDA"),
    C("=torch.cuda.device_count(),", "torch_cuda_api", "replace", True, "torch.npu.device_count(),",
      "spawn nprocs = min(0, world_size) = 0 on NPU: nothing is launched"),
    C("all_gather_list._buffer = torch.cuda.ByteTensor(buffer_size)", "torch_cuda_api", "replace", True,
      "all_gather_list._buffer = torch.empty(buffer_size, dtype=torch.uint8, device=\"npu\")",
      "used for every stats sync in multi-device training; raises without CUDA"),
    C("all_gather_list._cpu_buffer = torch.ByteTensor(max_size).pin_memory()", "pin_memory", "replace", False,
      "all_gather_list._cpu_buffer = torch.ByteTensor(max_size).pin_memory(device=\"npu\")",
      "unconfirmed: which device Tensor.pin_memory() pins for on a torch_npu host; perf only"),
    C("if torch.distributed.get_backend(group) == \"nccl\":", "dist_backend", "replace", True,
      "if torch.distributed.get_backend(group) == \"hccl\":",
      "backend-string comparisons are not rewritten by any tool; with hccl the object would be broadcast from a CPU tensor"),
    C("dist_device = torch.device(\"cuda\")", "device_type", "replace", True,
      "dist_device = torch.device(\"npu\")", "HCCL collectives need NPU tensors"),
])

E("unicore_options", "unicore/options.py", "explicit_replacement",
  "Uni-Core unicore/options.py (fairseq-style argparse defaults)", [
    C("=default=max(1, torch.cuda.device_count()),", "torch_cuda_api", "replace", True,
      "default=max(1, torch.npu.device_count()),",
      "defaults to 1 on NPU: multi-NPU training silently runs on one device"),
    C("group.add_argument('--distributed-backend', default='nccl', type=str,", "dist_backend", "replace", True,
      "group.add_argument('--distributed-backend', default='hccl', type=str,",
      "init_process_group('nccl') fails on NPU; launch scripts rely on this default"),
    C("group.add_argument('--nprocs-per-node', default=max(1, torch.cuda.device_count()), type=int,", "torch_cuda_api",
      "replace", False,
      "group.add_argument('--nprocs-per-node', default=max(1, torch.npu.device_count()), type=int,",
      "default only; not used by the c10d DDP path"),
])

E("unicore_trainer", "unicore/trainer.py", "explicit_replacement",
  "Uni-Core unicore/trainer.py (fairseq Trainer: device, fp16, OOM handling, memory stats)", [
    C("self.cuda = torch.cuda.is_available() and not args.cpu", "torch_cuda_api", "replace", True,
      "self.cuda = torch.npu.is_available() and not args.cpu", "otherwise the whole trainer silently runs on CPU"),
    C("self.device = torch.device(\"cuda\")", "device_type", "replace", True,
      "self.device = torch.device(\"npu\")", "model/loss placement"),
    C("self._grad_norm_buf = torch.cuda.DoubleTensor(self.data_parallel_world_size)", "torch_cuda_api", "replace", True,
      "self._grad_norm_buf = torch.zeros(self.data_parallel_world_size, dtype=torch.float32, device=self.device)",
      "torch.cuda.* tensor type raises without CUDA; fp64 is not supported on NPU anyway"),
    C("if self.cuda and torch.cuda.get_device_capability(0)[0] < 7:", "device_capability_check", "replace", True,
      "if False:  # no CUDA compute capability on Ascend; fp16/bf16 are native",
      "after self.cuda is ported this calls torch.cuda.get_device_capability and raises"),
    C("if self.cuda and torch.cuda.get_device_capability(0)[0] >= 7:", "device_capability_check", "replace", True,
      "if False:  # capability hint is CUDA-specific", "same as the fp16 branch"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on NPU"),
    C("torch.cuda.empty_cache()  # release blocks held by the failed step", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # release blocks held by the failed step", "silent no-op on NPU"),
    C("grad_norm = torch.tensor(0.0).cuda()", "tensor_to_device", "replace", True,
      "grad_norm = torch.tensor(0.0, device=self.device)", "overflow path of every --fp16 run; raises without CUDA"),
    C("gb_used = torch.cuda.max_memory_allocated() / 1024 / 1024 / 1024", "torch_cuda_api", "replace", False,
      "gb_used = torch.npu.max_memory_allocated() / 1024 / 1024 / 1024", "gb_free metric would be wrong, logging only"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "runs every update once self.cuda is ported; resolves the current CUDA device and raises"),
    C("torch.cuda.empty_cache()  # --empty-cache-freq", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # --empty-cache-freq", "silent no-op on NPU"),
    C("if torch.cuda.is_available() and hasattr(torch.cuda, \"memory_summary\"):", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available() and hasattr(torch.npu, \"memory_summary\"):", "OOM diagnostics only"),
    C("for device_idx in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", False,
      "for device_idx in range(torch.npu.device_count()):", "OOM diagnostics only"),
    C("logger.warning(torch.cuda.memory_summary(device=device_idx))", "torch_cuda_api", "replace", False,
      "logger.warning(torch.npu.memory_summary(device=device_idx))", "OOM diagnostics only"),
])

E("unimol_infer", "unimol/infer.py", "explicit_replacement",
  "Uni-Mol unimol/infer.py (Uni-Core validation-parser inference)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("use_cuda = torch.cuda.is_available() and not args.cpu", "torch_cuda_api", "replace", True,
      "use_cuda = torch.npu.is_available() and not args.cpu", "otherwise inference silently runs on CPU"),
    C("torch.cuda.set_device(args.device_id)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.device_id)", "raises without CUDA"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "raises without CUDA"),
])

E("unimol_train_sh", "unimol/scripts/finetune_mol_regression.sh", "explicit_replacement",
  "Uni-Mol fine-tuning launcher (torch.distributed.launch + unicore-train)", [
    C("export CUDA_VISIBLE_DEVICES=\"0,1,2,3\"", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=\"0,1,2,3\"", "device selection silently ignored on NPU"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "NCCL variable is ignored; the torch_npu watchdog reads HCCL_ASYNC_ERROR_HANDLING (default already 1)"),
    C("export OMP_NUM_THREADS=1", "import_torch_npu", "npu_only_addition", True, SET_ENV,
      "CANN environment must be sourced before launching"),
])

E("unimol_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "Uni-Core/Uni-Mol docker image (nvidia/cuda base, cu116 torch, fused ext build)", [
    C("FROM nvidia/cuda:11.6.2-cudnn8-devel-ubuntu20.04", "device_type", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.9",
      "base image must carry CANN (driver is mounted from the host); CUDA image has none"),
    C("RUN pip install --no-cache-dir torch==1.13.1+cu116", "device_type", "replace", True,
      "RUN pip install --no-cache-dir torch==2.1.0 --index-url https://download.pytorch.org/whl/cpu",
      "CUDA build of torch; torch_npu pairs with the CPU build of the same version"),
    C("RUN python -c \"import torch; print(torch.__version__, torch.version.cuda)\"", "import_torch_npu",
      "npu_only_addition", True, "RUN pip install --no-cache-dir torch-npu==2.1.0.post10",
      "torch-npu pin"),
    C("ENV TORCH_CUDA_ARCH_LIST=\"7.0;8.0;8.6\"", "env_var", "removal", False, None,
      "ignored without nvcc"),
    C("=ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", True, None,
      "a set CUDA_HOME makes Uni-Core's setup.py try to build the CUDA extensions and fail on a missing nvcc"),
    C("=ENV NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NCCL tuning, ignored on NPU"),
    C("python -c \"import unicore_fused_layernorm, unicore_fused_softmax_dropout, unicore_fused_adam\"",
      "custom_cuda_extension", "replace", True, "python -c \"import unicore\"",
      "the CUDA extensions are not built on NPU; this import check would fail the image build"),
])

# --------------------------------------------------------------------------------------------
# GraphGPS (PyG GraphGym)
# --------------------------------------------------------------------------------------------

E("graphgps_main", "main.py", "explicit_replacement",
  "GraphGPS main.py (GraphGym entry point, accelerator selection)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "accelerator='auto' silently resolves to CPU on NPU"),
    C("free = [torch.cuda.mem_get_info(i)[0] for i in", "torch_cuda_api", "replace", True,
      "free = [torch.npu.mem_get_info(i)[0] for i in", "raises without CUDA"),
    C("range(torch.cuda.device_count())]", "torch_cuda_api", "replace", True,
      "range(torch.npu.device_count())]", "0 devices on NPU"),
    C("cfg.accelerator = f'cuda:{best}'", "device_type", "replace", True, "cfg.accelerator = f'npu:{best}'",
      "every loader/model transfer uses torch.device(cfg.accelerator)"),
    C("if cfg.accelerator.startswith('cuda'):", "device_type", "replace", False,
      "if cfg.accelerator.startswith('npu'):", "guards a cache flush between runs only"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on NPU"),
])

E("graphgps_logger", "graphgps/logger.py", "explicit_replacement",
  "GraphGPS graphgps/logger.py (CustomLogger, memory stats, TorchMetrics on device)", [
    C("if torch.cuda.is_available() and cfg.accelerator.startswith('cuda'):", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available() and cfg.accelerator.startswith('npu'):",
      "memory column silently missing from logs"),
    C("return torch.cuda.max_memory_allocated() / 1024 ** 2", "torch_cuda_api", "replace", False,
      "return torch.npu.max_memory_allocated() / 1024 ** 2", "logging only"),
])

E("graphgps_yaml", "configs/GPS/pcqm4m-GPS+RWSE.yaml", "explicit_replacement",
  "GraphGPS configs/GPS/*.yaml", [
    C("accelerator: \"cuda:0\"", "device_type", "replace", True, "accelerator: \"npu:0\"",
      "torch.device('cuda:0') transfers fail on an NPU host"),
])

E("graphgps_layer", "graphgps/layer/gps_layer.py", "explicit_replacement",
  "GraphGPS graphgps/layer/gps_layer.py (+ SDPA / FlashAttention-2 global-attention variants)", [
    C("and self.attn_impl == 'flash' and h.is_cuda and HAS_FLASH_ATTN:", "attention_kernel", "add_branch", False,
      "and self.attn_impl == 'flash' and (h.is_npu or (h.is_cuda and HAS_FLASH_ATTN)):",
      "flash-attn cannot be installed on NPU; today the dense path runs (correct, padded); a varlen NPU path is perf only"),
    C("with torch.backends.cuda.sdp_kernel(enable_flash=False,", "attention_kernel", "replace", False,
      "if True:  # backend selection flags are CUDA-only; NPU SDPA picks its own kernel",
      "torch.backends.cuda.sdp_kernel is ✘ in Ascend's list and flagged unsupported by msFmkTransplt; whether it errors or is ignored is unconfirmed"),
    C("out = flash_attn_varlen_func(", "attention_kernel", "replace", False,
      "out = torch_npu.npu_fusion_attention(q, k, v, H, \"TND\", scale=(C // H) ** -0.5, keep_prob=1.0 - (self.attn_dropout if self.training else 0.0), actual_seq_qlen=ptr[1:].tolist(), actual_seq_kvlen=ptr[1:].tolist())[0]",
      "only reached through the optional NPU branch above; TND layout takes cumulative lengths"),
])

E("graphgps_train", "graphgps/train/custom_train.py", "explicit_replacement",
  "GraphGPS graphgps/train/custom_train.py (custom train loop, AMP variant)", [
    C("with torch.cuda.amp.autocast(enabled=scaler is not None,", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=scaler is not None,",
      "cuda autocast is disabled without CUDA: AMP silently off"),
    C("if cfg.train.amp and cfg.accelerator.startswith('cuda'):", "device_type", "replace", True,
      "if cfg.train.amp and cfg.accelerator.startswith(('cuda', 'npu')):",
      "with accelerator npu:0 the AMP set-up is silently skipped"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=cfg.train.amp_dtype == 'fp16')", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=cfg.train.amp_dtype == 'fp16')",
      "cuda GradScaler disables itself without CUDA: fp16 grads unscaled"),
])

# --------------------------------------------------------------------------------------------
# TorchMD-Net / SchNetPack
# --------------------------------------------------------------------------------------------

E("torchmdnet_train", "torchmdnet/scripts/train.py", "explicit_replacement",
  "TorchMD-Net torchmdnet/scripts/train.py (Lightning Trainer, DDPStrategy)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("ngpus = args.ngpus if args.ngpus > 0 else torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "ngpus = args.ngpus if args.ngpus > 0 else torch.npu.device_count()",
      "0 on NPU: lr warm-up scaled for the wrong world size"),
    C("strategy=DDPStrategy(find_unused_parameters=False),", "dist_backend", "replace", True,
      "strategy=DDPStrategy(find_unused_parameters=False, process_group_backend=\"hccl\"),",
      "Lightning picks nccl only for CUDA devices and gloo otherwise; NPU collectives need hccl"),
    C("=accelerator=\"gpu\",", "device_type", "replace", True,
      "accelerator=NPUAccelerator(),  # custom lightning Accelerator backed by torch.npu",
      "'gpu' accelerator raises without CUDA; Lightning has no built-in NPU accelerator (needs a custom/Ascend plugin, unconfirmed in the notes)"),
    C("accelerator=\"gpu\" if torch.cuda.is_available() else \"cpu\",", "device_type", "replace", True,
      "accelerator=NPUAccelerator() if torch.npu.is_available() else \"cpu\",",
      "test run would silently fall back to CPU"),
])

E("torchmdnet_utils", "torchmdnet/models/utils.py", "explicit_replacement",
  "TorchMD-Net torchmdnet/models/utils.py (Distance via torch_cluster.radius_graph, RBFs)", [
    C("edge_index = radius_graph(", "unsupported_op_workaround", "replace", True,
      "edge_index = radius_graph_dense(  # torch-native cdist + mask neighbour search, runs on NPU",
      "torch_cluster is a C++/CUDA extension with CPU and CUDA kernels only; NPU tensors are rejected"),
    C("return scatter(x, batch, dim=0, dim_size=dim_size, reduce=\"max\")", "unsupported_op_workaround", "replace", True,
      "return to_dense_batch(x, batch, fill_value=float(\"-inf\"), batch_size=dim_size)[0].max(dim=1).values",
      "torch_scatter's max goes through its compiled scatter_max op (CPU/CUDA only); sum/mean are plain scatter_add_ and work"),
])

E("torchmdnet_bench", "benchmarks/inference.py", "explicit_replacement",
  "TorchMD-Net benchmarks (CUDA events, NVTX, torch.compile reduce-overhead)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "raises without CUDA"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "raises without CUDA"),
    C("torch.cuda.nvtx.range_push(\"timed_region\")", "torch_cuda_api", "replace", True,
      "rng = torch_npu.npu.mstx.range_start(\"timed_region\")",
      "torch.cuda.nvtx raises on a build without CUDA; mstx is the NPU range API"),
    C("torch.cuda.synchronize(pos.device)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(pos.device)", "raises without CUDA"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True,
      "torch_npu.npu.mstx.range_end(rng)", "pairs with range_push"),
    C("parser.add_argument(\"--device\", default=\"cuda\")", "device_type", "replace", True,
      "parser.add_argument(\"--device\", default=\"npu\")", "default device string"),
    C("if device.type == \"cuda\":", "device_type", "replace", False, "if device.type == \"npu\":",
      "prints device info only"),
    C("print(f\"GPU: {torch.cuda.get_device_name(device)}\")", "torch_cuda_api", "replace", False,
      "print(f\"NPU: {torch.npu.get_device_name(device)}\")", "only runs under the guard above"),
    C("print(f\"CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}\")", "torch_cuda_api", "replace",
      False, "print(f\"torch_npu {torch_npu.__version__}\")", "prints None/None on NPU"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "unguarded; resolves the current CUDA device and raises"),
    C("mem = torch.cuda.max_memory_allocated() / 2 ** 20", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated() / 2 ** 20", "reports 0 on NPU (benchmark output only)"),
    C("compiled = torch.compile(model, mode=\"reduce-overhead\", fullgraph=False, dynamic=False)", "compile_mode",
      "replace", False,
      "compiled = torch.compile(model, backend=\"npugraphs\", fullgraph=False, dynamic=False)",
      "reduce-overhead means Inductor + CUDA graphs; Ascend lists backend='npugraphs' as the cudagraphs analogue (behaviour on this torch version unconfirmed)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on NPU"),
])

E("schnetpack_md", "src/scripts/spkmd_run.py", "explicit_replacement",
  "SchNetPack 2.x MD driver (System/Simulator/SchNetPackCalculator, ring polymer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("parser.add_argument(\"--precision\", type=int, default=64, choices=[32, 64],", "unsupported_op_workaround",
      "replace", False, "parser.add_argument(\"--precision\", type=int, default=32, choices=[32, 64],",
      "fp64 coverage on NPU is partial (ops without double kernels cast to float with a warning); unconfirmed per op, affects energy conservation"),
    C("parser.add_argument(\"--device\", default=\"cuda\" if torch.cuda.is_available() else \"cpu\")", "device_type",
      "replace", True, "parser.add_argument(\"--device\", default=\"npu\" if torch.npu.is_available() else \"cpu\")",
      "otherwise the simulation silently runs on CPU"),
    C("if args.device.startswith(\"cuda\"):", "device_type", "replace", True, "if args.device.startswith(\"npu\"):",
      "--gpu-id silently ignored on NPU (everything lands on npu:0)"),
    C("torch.cuda.set_device(args.gpu_id)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu_id)",
      "raises without CUDA"),
    C("device = torch.device(f\"cuda:{args.gpu_id}\")", "device_type", "replace", True,
      "device = torch.device(f\"npu:{args.gpu_id}\")", "device string"),
    C("if device.type == \"cuda\":", "device_type", "replace", False, "if device.type == \"npu\":", "log only"),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", False,
      "log.info(f\"peak memory: {torch.npu.max_memory_allocated(device) / 2**30:.2f} GiB\")", "log only"),
])

# --------------------------------------------------------------------------------------------
# DiffDock / EquiBind
# --------------------------------------------------------------------------------------------

E("diffdock_inference", "inference.py", "explicit_replacement",
  "DiffDock inference.py (score + confidence model, reverse diffusion)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("device = torch.device(f'cuda:{args.gpu}' if torch.cuda.is_available() else 'cpu')", "device_type", "replace",
      True, "device = torch.device(f'npu:{args.gpu}' if torch.npu.is_available() else 'cpu')",
      "otherwise docking silently runs on CPU"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on NPU"),
])

E("diffdock_esm", "utils/inference_utils.py", "explicit_replacement",
  "DiffDock utils/inference_utils.py (ESM-2 embeddings, ESMFold structures)", [
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "ESM tokens stay on CPU; must match the model placement below"),
    C("toks = toks.to(device=\"cuda\", non_blocking=True)", "tensor_to_device", "replace", True,
      "toks = toks.to(device=\"npu\", non_blocking=True)", "device string"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "OOM retry loop: no-op on NPU, halving chunk size still works"),
    C("if torch.cuda.is_available():  # ESM-2 650M", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():  # ESM-2 650M: ~2.5 GB in fp32",
      "ESM-2 650M silently runs on CPU otherwise"),
    C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "raises without CUDA"),
    C("model = model.eval().cuda()", "tensor_to_device", "replace", True, "model = model.eval().npu()",
      "unconditional .cuda(): raises on an NPU host (whether all of ESMFold's openfold modules run on NPU is unconfirmed)"),
])

E("diffdock_score_model", "models/score_model.py", "explicit_replacement",
  "DiffDock models/score_model.py (e3nn tensor-product score model, torch_cluster graphs)", [
    C("radius_edges = radius_graph(data['ligand'].pos, self.lig_max_radius, data['ligand'].batch)",
      "unsupported_op_workaround", "replace", True,
      "radius_edges = radius_graph(data['ligand'].pos.cpu(), self.lig_max_radius, data['ligand'].batch.cpu()).to(data['ligand'].pos.device)",
      "torch_cluster only has CPU/CUDA kernels; round-trip through CPU (or a cdist-based replacement)"),
    C("edge_index = radius(data['receptor'].pos / cross_distance_cutoff[data['receptor'].batch],",
      "unsupported_op_workaround", "replace", True,
      "edge_index = radius((data['receptor'].pos / cross_distance_cutoff[data['receptor'].batch]).cpu(),",
      "torch_cluster.radius on NPU tensors; remaining args .cpu() and result .to(device)"),
    C("edge_index = radius(data['receptor'].pos, data['ligand'].pos, cross_distance_cutoff,",
      "unsupported_op_workaround", "replace", True,
      "edge_index = radius(data['receptor'].pos.cpu(), data['ligand'].pos.cpu(), cross_distance_cutoff,",
      "same as above, static-cutoff branch"),
    C("pooled = scatter(scalar_lig_attr, data['ligand'].batch, dim=0, reduce='max')", "unsupported_op_workaround",
      "replace", True,
      "pooled = to_dense_batch(scalar_lig_attr, data['ligand'].batch, fill_value=float('-inf'))[0].max(dim=1).values",
      "torch_scatter reduce='max' calls its compiled scatter_max (CPU/CUDA only); the 'mean' paths are pure scatter_add_ and fine"),
])

E("diffdock_train", "train.py", "explicit_replacement",
  "DiffDock train.py (training loop, EMA, OOM skipping)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("if device.type == 'cuda':", "device_type", "replace", False, "if device.type == 'npu':",
      "guards a memory print only"),
    C("print(f\"Epoch {epoch}: peak GPU memory", "torch_cuda_api", "replace", False,
      "print(f\"Epoch {epoch}: peak NPU memory {torch.npu.max_memory_allocated() / 2**30:.2f} GiB\")",
      "log only, under the optional guard"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", False,
      "torch.npu.reset_peak_memory_stats()", "only runs under the optional guard above"),
    C("if device.type == 'cuda' and len(data) == 1 or device.type == 'cpu' and data.num_graphs == 1:", "device_type",
      "replace", True,
      "if device.type == 'cuda' and len(data) == 1 or device.type in ('cpu', 'npu') and data.num_graphs == 1:",
      "on NPU the loader yields Batch objects (no DataParallel), so neither test fires and a 1-graph batch crashes BatchNorm"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on NPU"),
    C("torch.cuda.empty_cache()  # radius() sometimes", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # radius() sometimes leaves a fragmented cache behind", "silent no-op on NPU"),
    C("model.module.load_state_dict(dict['model'], strict=True)", "distributed_framework", "replace", True,
      "(model.module if hasattr(model, 'module') else model).load_state_dict(dict['model'], strict=True)",
      "get_model only wraps in (PyG) DataParallel for device.type == 'cuda'; on NPU there is no .module, the restart silently drops optimizer state"),
    C("model.module.load_state_dict(dict, strict=True)", "distributed_framework", "replace", True,
      "(model.module if hasattr(model, 'module') else model).load_state_dict(dict, strict=True)",
      "fallback restart path would raise AttributeError on NPU"),
    C("device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type", "replace",
      True, "device = torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
      "otherwise training silently runs on CPU"),
])

E("diffdock_env", "environment.yml", "explicit_replacement",
  "DiffDock environment.yml (conda + pip CUDA 11.7 wheels, openfold)", [
    C("- nvidia/label/cuda-11.7.0", "device_type", "removal", False, None,
      "only serves cudatoolkit-dev; harmless but pointless on NPU"),
    C("- cudatoolkit-dev=11.7", "custom_cuda_extension", "removal", False, None,
      "nvcc toolchain used only to compile openfold's CUDA kernels; not usable on NPU"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post10",
      "torch-npu pin matching torch 2.1.0"),
    C("- --extra-index-url https://download.pytorch.org/whl/cu117", "device_type", "replace", True,
      "    - --extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index"),
    C("- torch==1.13.1+cu117", "device_type", "replace", True, "    - torch==2.1.0",
      "CUDA build; torch_npu needs the CPU build of a supported version"),
    C("- --find-links https://data.pyg.org/whl/torch-1.13.1+cu117.html", "device_type", "replace", True,
      "    - --find-links https://data.pyg.org/whl/torch-2.1.0+cpu.html", "PyG extension wheels for the new torch, CPU build"),
    C("- torch-cluster==1.6.0+pt113cu117", "device_type", "replace", True, "    - torch-cluster==1.6.3+pt21cpu",
      "CUDA build against torch 1.13 cannot load"),
    C("- torch-scatter==2.1.0+pt113cu117", "device_type", "replace", True, "    - torch-scatter==2.1.2+pt21cpu",
      "same"),
    C("- torch-sparse==0.6.16+pt113cu117", "device_type", "replace", True, "    - torch-sparse==0.6.18+pt21cpu", "same"),
    C("- torch-spline-conv==1.2.1+pt113cu117", "device_type", "replace", True,
      "    - torch-spline-conv==1.2.2+pt21cpu", "same"),
    C("openfold @ git+https://github.com/aqlaboratory/openfold.git", "custom_cuda_extension", "removal", False, None,
      "openfold builds a CUDA attention kernel (from memory; unconfirmed in the notes); only needed for ESMFold, structures can be precomputed"),
])

E("equibind_requirements", "requirements.txt", "explicit_replacement",
  "EquiBind-style requirements.txt (cu113 torch, dgl-cu113, PyG wheels)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "device_type", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index"),
    C("torch==1.11.0+cu113", "device_type", "replace", True, "torch==2.1.0", "CUDA build of torch"),
    C("dgl-cu113==0.8.2", "device_type", "replace", True, "dgl==1.1.3",
      "CUDA build of DGL needs the CUDA runtime; DGL has no NPU backend, CPU build only"),
    C("--find-links https://data.pyg.org/whl/torch-1.11.0+cu113.html", "device_type", "replace", True,
      "--find-links https://data.pyg.org/whl/torch-2.1.0+cpu.html", "PyG extension wheels, CPU build"),
    C("pynvml==11.4.1", "torch_cuda_api", "removal", False, None,
      "NVML has no NPU counterpart (use npu-smi / torch.npu.mem_get_info); the import itself is harmless"),
    C("=tqdm", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10", "torch-npu pin"),
])

# --------------------------------------------------------------------------------------------
# REINVENT (RNN SMILES generator)
# --------------------------------------------------------------------------------------------

E("reinvent_model", "reinvent_models/reinvent_core/models/model.py", "device_branch_or_abstraction",
  "REINVENT 3 reinvent_models/reinvent_core/models/model.py (RNN prior/agent)", [
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "every sampling / likelihood tensor goes through _cuda(); silently stays on CPU otherwise"),
    C("return tensor.cuda()", "tensor_to_device", "replace", True, "return tensor.npu()", "raises without CUDA"),
    C("if torch.cuda.is_available() and not no_cuda:", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and not no_cuda:", "network silently stays on CPU"),
    C("self.network.cuda()", "tensor_to_device", "replace", True, "self.network.npu()", "raises without CUDA"),
])

E("reinvent_toml", "configs/staged_learning.toml", "explicit_replacement",
  "REINVENT 4 staged-learning TOML config", [
    C("device = \"cuda:0\"", "device_type", "replace", True, "device = \"npu:0\"  # set to \"cpu\" if you have no NPU",
      "device string passed to torch.device"),
])
