# Labels for probe236: crystal / materials property prediction and universal interatomic
# potentials (CGCNN, ALIGNN, CHGNet, MatGL/M3GNet, MACE, CrabNet) moving from CUDA to Ascend NPU.
# One entry per upstream file; one C(...) per line a careful porter would edit.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = "torch_npu must be imported to register the npu device and torch.npu (autoload only from torch_npu 2.5.1)"
FP64_NOTE = ("unconfirmed: Ascend's 2.7.1 support list gives torch.matmul/bmm on Atlas A2 as bf16/fp16/fp32 only, "
             "so fp64 e3nn/MACE tensor products may error or fall back to CPU; float32 is the safe choice on NPU")
DGL_CUDA_NOTE = ("unconfirmed: CUDA builds of DGL target CUDA x86_64 hosts; an NPU host (often aarch64, CPU torch) "
                 "needs the CPU build")

# ----------------------------------------------------------------------------------------------
# CGCNN
# ----------------------------------------------------------------------------------------------
E("cgcnn_main", "main.py", "explicit_replacement",
  "CGCNN main.py (txie-93/cgcnn): --disable-cuda, args.cuda, Variable(x.cuda(non_blocking=True))",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("args.cuda = not args.disable_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "args.cuda = not args.disable_cuda and torch.npu.is_available()",
        "torch.cuda.is_available() is False on an NPU host, so the whole run silently falls back to CPU"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
        "Module.cuda() needs CUDA; move the model to the NPU"),
      C("checkpoint = torch.load(args.resume)", "tensor_to_device", "replace", False,
        "checkpoint = torch.load(args.resume, map_location='cpu')",
        "only breaks when resuming a checkpoint written on a CUDA machine (tensors deserialize to cuda)"),
      C("=input_var = (Variable(input[0].cuda(non_blocking=True)),", "tensor_to_device", "replace", True,
        "input_var = (Variable(input[0].npu(non_blocking=True)),", "batch tensors must go to the NPU"),
      C("=Variable(input[1].cuda(non_blocking=True)),", "tensor_to_device", "replace", True,
        "Variable(input[1].npu(non_blocking=True)),", "batch tensors must go to the NPU"),
      C("=input[2].cuda(non_blocking=True),", "tensor_to_device", "replace", True,
        "input[2].npu(non_blocking=True),", "neighbour index tensor must go to the NPU"),
      C("=[crys_idx.cuda(non_blocking=True) for crys_idx in input[3]])", "tensor_to_device", "replace", True,
        "[crys_idx.npu(non_blocking=True) for crys_idx in input[3]])", "crystal-atom index lists must go to the NPU"),
      C("=target_var = Variable(target_normed.cuda(non_blocking=True))", "tensor_to_device", "replace", True,
        "target_var = Variable(target_normed.npu(non_blocking=True))", "targets must be on the same device as the output"),
      C("=input_var = (atom_fea.cuda(non_blocking=True),", "tensor_to_device", "replace", True,
        "input_var = (atom_fea.npu(non_blocking=True),", "validation batch to NPU"),
      C("=nbr_fea.cuda(non_blocking=True),", "tensor_to_device", "replace", True,
        "nbr_fea.npu(non_blocking=True),", "validation batch to NPU"),
      C("=nbr_fea_idx.cuda(non_blocking=True),", "tensor_to_device", "replace", True,
        "nbr_fea_idx.npu(non_blocking=True),", "validation batch to NPU"),
      C("=[crys_idx.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "[crys_idx.npu(non_blocking=True)", "validation batch to NPU"),
      C("=target_var = target_normed.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "target_var = target_normed.npu(non_blocking=True)", "validation targets to NPU"),
  ])

E("cgcnn_predict", "predict.py", "explicit_replacement",
  "CGCNN predict.py with a --gpu selector added by a fork",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("args.cuda = not args.disable_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "args.cuda = not args.disable_cuda and torch.npu.is_available()",
        "otherwise prediction silently runs on CPU"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "torch.cuda.set_device raises without CUDA once args.cuda is true"),
      C("=pin_memory=args.cuda)", "pin_memory", "replace", False,
        "pin_memory=args.cuda, pin_memory_device='npu' if args.cuda else '')",
        "unconfirmed: without CUDA the DataLoader silently skips pinning; performance only"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model to NPU"),
      C("=input_var = (Variable(input[0].cuda(non_blocking=True)),", "tensor_to_device", "replace", True,
        "input_var = (Variable(input[0].npu(non_blocking=True)),", "batch to NPU"),
      C("=Variable(input[1].cuda(non_blocking=True)),", "tensor_to_device", "replace", True,
        "Variable(input[1].npu(non_blocking=True)),", "batch to NPU"),
      C("=input[2].cuda(non_blocking=True),", "tensor_to_device", "replace", True,
        "input[2].npu(non_blocking=True),", "batch to NPU"),
      C("=[crys_idx.cuda(non_blocking=True) for crys_idx in input[3]])", "tensor_to_device", "replace", True,
        "[crys_idx.npu(non_blocking=True) for crys_idx in input[3]])", "batch to NPU"),
      C("=target_var = Variable(target_normed.cuda(non_blocking=True))", "tensor_to_device", "replace", True,
        "target_var = Variable(target_normed.npu(non_blocking=True))", "targets to NPU for the loss"),
  ])

E("cgcnn_data", "cgcnn/data.py", "device_branch_or_abstraction",
  "CGCNN cgcnn/data.py (CIFData, collate_pool, get_train_val_test_loader); host-side only",
  [])

# ----------------------------------------------------------------------------------------------
# ALIGNN
# ----------------------------------------------------------------------------------------------
E("alignn_train", "alignn/train.py", "device_branch_or_abstraction",
  "ALIGNN alignn/train.py (ignite trainer, module-level device, DGL g.to(device))",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "module-level device probe; False on NPU host so training silently runs on CPU"),
      C('=device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
        "device used by prepare_batch, ignite trainer and net.to(device)"),
  ])

E("alignn_train_cli", "alignn/train_alignn.py", "device_branch_or_abstraction",
  "ALIGNN train_alignn.py with mp.spawn DDP (nccl, torch.cuda.set_device(rank), world_size from device_count)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "alignn.train (imported above) already imports torch_npu after porting; explicit import is good practice"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "device probe; otherwise CPU"),
      C('=device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
        "device for restart checkpoint map_location and model.to"),
      C('dist.init_process_group("nccl", rank=rank, world_size=world_size)', "dist_backend", "replace", True,
        'dist.init_process_group("hccl", rank=rank, world_size=world_size)', "NCCL backend does not exist on NPU; use HCCL"),
      C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(rank)",
        "bind each spawned rank to its NPU"),
      C("world_size = int(torch.cuda.device_count())", "torch_cuda_api", "replace", True,
        "world_size = int(torch.npu.device_count())",
        "returns 0 on an NPU host, so multi-device training silently degrades to one CPU process"),
  ])

E("alignn_pretrained", "alignn/pretrained.py", "device_branch_or_abstraction",
  "ALIGNN alignn/pretrained.py (figshare models, get_prediction, get_multiple_predictions)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "device probe; otherwise inference silently on CPU"),
      C('=device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
        "device used for map_location and graph/model placement"),
  ])

E("alignn_ff", "alignn/ff/ff.py", "device_branch_or_abstraction",
  "ALIGNN-FF alignn/ff/ff.py (AlignnAtomwiseCalculator ASE calculator, ForceField MD driver, phonons)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('="cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        '"npu" if torch.npu.is_available() else "cpu"', "calculator default device"),
      C('=device="cuda" if torch.cuda.is_available() else "cpu",', "device_type", "replace", True,
        'device="npu" if torch.npu.is_available() else "cpu",', "ForceField passes an explicit device to the calculator"),
      C('=device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        'device = "npu" if torch.npu.is_available() else "cpu"', "phonon workflow device"),
  ])

E("alignn_env", "environment.yml", "explicit_replacement",
  "ALIGNN conda environment.yml for CUDA 11.8 (pytorch-cuda, dglteam cu118 channel)",
  [
      C("=- nvidia", "import_torch_npu", "removal", False, None,
        "NVIDIA conda channel only serves CUDA runtime packages; harmless but dead on an NPU host"),
      C("=- dglteam/label/th21_cu118", "custom_cuda_extension", "replace", False, "- dglteam/label/th21_cpu",
        DGL_CUDA_NOTE),
      C("=- pytorch-cuda=11.8", "import_torch_npu", "replace", True, "- cpuonly",
        "torch_npu pairs with the CPU build of the same torch version, not the CUDA build"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post10",
        "torch-npu matching pytorch=2.1.0 (CANN 8.0.0) is only on PyPI, so it goes in the pip section"),
  ])

E("alignn_slurm", "scripts/train_alignnff_mptrj.sbatch", "explicit_replacement",
  "SLURM job training ALIGNN-FF on one 4-GPU node",
  [
      C("#SBATCH --gres=gpu:4", "device_type", "replace", False, "#SBATCH --gres=npu:4",
        "site-specific GRES name; unconfirmed what an Ascend cluster calls it"),
      C("module load cuda/11.8", "import_torch_npu", "replace", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment must be sourced or torch_npu cannot find libascendcl/libhccl"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
        "CUDA_VISIBLE_DEVICES is ignored by the NPU runtime; it also decides world_size here"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
        "NCCL variable is a no-op under HCCL; logging level only"),
      C("=nvidia-smi", "torch_cuda_api", "replace", False, "npu-smi info",
        "diagnostic only; nvidia-smi is missing on the NPU host but the script has no set -e"),
  ])

# ----------------------------------------------------------------------------------------------
# CHGNet
# ----------------------------------------------------------------------------------------------
E("chgnet_common_utils", "chgnet/utils/common_utils.py", "device_branch_or_abstraction",
  "CHGNet chgnet/utils/common_utils.py (determine_device, nvidia_smi free-memory sort)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        IMPORT_NOTE + "; this is the module every CHGNet entry point uses to pick the device"),
      C('device = use_device or ("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = use_device or ("npu" if torch.npu.is_available() else "cpu")',
        "default device for CHGNet.load, the calculator and the trainer; otherwise silently CPU"),
      C('if device == "cuda" and check_cuda_mem:', "device_type", "replace", False,
        'if device == "npu" and check_cuda_mem:', "optional least-loaded-device selection (check_cuda_mem defaults to False)"),
      C('device = f"cuda:{cuda_devices_sorted_by_free_mem()[-1]}"', "device_type", "replace", False,
        'device = f"npu:{cuda_devices_sorted_by_free_mem()[-1]}"', "same optional path"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
        "only reached through check_cuda_mem"),
      C("=import nvidia_smi", "torch_cuda_api", "removal", False, None,
        "NVML has no NPU equivalent; use torch.npu.mem_get_info instead (only reached through check_cuda_mem)"),
      C("=nvidia_smi.nvmlInit()", "torch_cuda_api", "removal", False, None, "NVML init fails without an NVIDIA driver"),
      C("device_count = nvidia_smi.nvmlDeviceGetCount()", "torch_cuda_api", "replace", False,
        "device_count = torch.npu.device_count()", "count NPUs through torch_npu"),
      C("handle = nvidia_smi.nvmlDeviceGetHandleByIndex(idx)", "torch_cuda_api", "removal", False, None,
        "no NVML handles on NPU"),
      C("info = nvidia_smi.nvmlDeviceGetMemoryInfo(handle)", "torch_cuda_api", "replace", False,
        "free_mem, _total = torch.npu.mem_get_info(idx)",
        "torch.npu.mem_get_info gives (free, total); the append below then uses free_mem"),
      C("=nvidia_smi.nvmlShutdown()", "torch_cuda_api", "removal", False, None, "no NVML session to close"),
      C('if device.startswith("cuda"):', "device_type", "replace", False, 'if device.startswith("npu"):',
        "cosmetic device summary; on NPU it just prints the short form"),
      C("name = torch.cuda.get_device_name(idx)", "torch_cuda_api", "replace", False,
        "name = torch.npu.get_device_name(idx)", "inside the cosmetic branch above"),
      C("total = torch.cuda.get_device_properties(idx).total_memory / 1024**3", "torch_cuda_api", "replace", False,
        "total = torch.npu.get_device_properties(idx).total_memory / 1024**3",
        "inside the cosmetic branch; total_memory exists on NPU properties"),
  ])

E("chgnet_dynamics", "chgnet/model/dynamics.py", "device_branch_or_abstraction",
  "CHGNet chgnet/model/dynamics.py (CHGNetCalculator, StructOptimizer, MolecularDynamics); device handled by determine_device",
  [])

E("chgnet_trainer", "chgnet/trainer/trainer.py", "device_branch_or_abstraction",
  "CHGNet chgnet/trainer/trainer.py (Trainer, CombinedLoss) with a per-epoch cache flush",
  [
      C('if "cuda" in str(self.device):', "device_type", "replace", False, 'if "npu" in str(self.device):',
        "cache flush is skipped on NPU; performance/fragmentation only"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op without CUDA; release the NPU caching allocator instead"),
  ])

E("chgnet_pyproject", "pyproject.toml", "explicit_replacement",
  "CHGNet pyproject.toml (depends on nvidia-ml-py3)",
  [
      C('"nvidia-ml-py3>=7.352.0",', "torch_cuda_api", "removal", False, None,
        "pure-Python NVML binding; installs fine but is useless on NPU once check_cuda_mem uses torch.npu.mem_get_info"),
      C('"torch>=1.11.0",', "import_torch_npu", "npu_only_addition", True, '"torch-npu==2.1.0.post10",',
        "common_utils now imports torch_npu, so the package must depend on it"),
  ])

E("chgnet_relax_md", "examples/relax_and_md.py", "explicit_replacement",
  "CHGNet README-style example: StructOptimizer(use_device='cuda') + MolecularDynamics with GPU timing",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "the ported chgnet.utils already imports torch_npu; explicit import is still good practice here"),
      C('chgnet = CHGNet.load(use_device="cuda", check_cuda_mem=args.check_cuda_mem)', "device_type", "replace", True,
        'chgnet = CHGNet.load(use_device="npu", check_cuda_mem=args.check_cuda_mem)', "model.to('cuda') fails on NPU host"),
      C('relaxer = StructOptimizer(model=chgnet, use_device="cuda")', "device_type", "replace", True,
        'relaxer = StructOptimizer(model=chgnet, use_device="npu")', "calculator moves the model to use_device"),
      C("torch.cuda.synchronize()  # make sure", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # make sure all kernels finished", "raises without CUDA"),
      C('calc = CHGNetCalculator(model=chgnet, use_device="cuda")', "device_type", "replace", True,
        'calc = CHGNetCalculator(model=chgnet, use_device="npu")', "MD calculator device"),
      C("=torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats()", "raises without CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA; timing needs the NPU queue drained"),
      C("peak_gb = torch.cuda.max_memory_allocated() / 1024**3", "torch_cuda_api", "replace", True,
        "peak_gb = torch.npu.max_memory_allocated() / 1024**3",
        "torch.cuda.max_memory_allocated silently returns 0 when CUDA was never initialised"),
  ])

# ----------------------------------------------------------------------------------------------
# MatGL / M3GNet
# ----------------------------------------------------------------------------------------------
E("matgl_train_pes", "examples/train_m3gnet_pes.py", "explicit_replacement",
  "MatGL 'Training a M3GNet Potential with PyTorch Lightning' tutorial (set_default_device, Generator, accelerator='gpu')",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('torch.set_default_device("cuda")', "device_type", "replace", True, 'torch.set_default_device("npu")',
        "MatGL builds graphs on the default device; cuda is unavailable"),
      C('generator=torch.Generator(device="cuda"),', "device_type", "replace", True,
        'generator=torch.Generator(device="npu"),', "sampler generator must match the default device"),
      C('=accelerator="gpu",', "device_type", "replace", True, 'accelerator="npu",',
        "Lightning's gpu accelerator needs CUDA/MPS; 'npu' requires an NPU Accelerator registered with Lightning (unconfirmed which plugin)"),
      C('accelerator="gpu", devices=1,', "device_type", "replace", True, 'accelerator="npu", devices=1,',
        "same as above for the fine-tuning trainer"),
  ])

E("matgl_screen_relax", "scripts/screen_relax.py", "explicit_replacement",
  "High-throughput MatGL/M3GNet relaxation, one spawn worker per GPU pinned with CUDA_VISIBLE_DEVICES",
  [
      C('os.environ["CUDA_VISIBLE_DEVICES"] = str(rank)', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(rank)',
        "without it every worker lands on npu:0"),
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "worker uses the npu device"),
      C('torch.set_default_device("cuda")', "device_type", "replace", True, 'torch.set_default_device("npu")',
        "MatGL allocates graphs and model on the default device"),
      C("torch.backends.cuda.matmul.allow_tf32 = False", "torch_cuda_api", "replace", False,
        "torch.npu.matmul.allow_hf32 = False",
        "no-op on NPU; the NPU analogue is HF32 (default value unconfirmed)"),
      C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", "replace", False, "except RuntimeError:",
        "unconfirmed which exception NPU OOM raises; torch.cuda.OutOfMemoryError would not catch it"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op without CUDA"),
      C("import torch  # only needed for the device count", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu", "parent process queries torch.npu.device_count()"),
      C("n_gpus = args.ngpus or torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "n_gpus = args.ngpus or torch.npu.device_count()", "returns 0 on NPU host and the script exits"),
  ])

E("matgl_finetune_ddp", "scripts/finetune_property_ddp.py", "explicit_replacement",
  "MatGL MEGNet/M3GNet property fine-tuning with Lightning DDP (nccl), capability-based precision",
  [
      C('os.environ.setdefault("NCCL_DEBUG", "WARN")', "env_var", "replace", False,
        'os.environ.setdefault("ASCEND_GLOBAL_LOG_LEVEL", "3")', "NCCL variable is ignored by HCCL; logging only"),
      C('os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
        'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")', "torch_npu watchdog variable; its default is already 1"),
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
        "major = 8 if torch.npu.is_bf16_supported() else 7",
        "raises without CUDA; torch.npu.get_device_capability returns None so the unpack fails too"),
      C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device=\"npu\",",
        "unconfirmed: pinning silently skipped without CUDA; performance only (if MGLDataLoader forwards the kwarg)"),
      C('=accelerator="gpu",', "device_type", "replace", True, 'accelerator="npu",',
        "Lightning gpu accelerator needs CUDA; needs a registered NPU accelerator (unconfirmed which)"),
      C('strategy=DDPStrategy(process_group_backend="nccl", find_unused_parameters=False),', "dist_backend", "replace", True,
        'strategy=DDPStrategy(process_group_backend="hccl", find_unused_parameters=False),', "NCCL unavailable on NPU"),
      C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", True,
        'print("peak memory per NPU: %.2f GB" % (torch.npu.max_memory_allocated() / 1024**3))',
        "silently reports 0 without CUDA"),
  ])

E("matgl_dockerfile", "Dockerfile", "explicit_replacement",
  "Dockerfile for a MatGL/CHGNet/MACE screening image on nvidia/cuda base",
  [
      C("FROM nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04", "import_torch_npu", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "needs a CANN base image (driver libs mounted at run time); image tag is plausible, not tested"),
      C("NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ASCEND_VISIBLE_DEVICES=0-7 \\",
        "NVIDIA container runtime variable; Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES (or use --device)"),
      C("NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container runtime only"),
      C("torch==2.1.2 --index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", "replace", True,
        "RUN pip install --no-cache-dir torch==2.1.0 --index-url https://download.pytorch.org/whl/cpu && pip install --no-cache-dir torch-npu==2.1.0.post10",
        "CUDA wheel index; torch_npu needs the matching CPU torch"),
      C("dgl==2.1.0 -f https://data.dgl.ai/wheels/cu121/repo.html", "custom_cuda_extension", "replace", False,
        "RUN pip install --no-cache-dir dgl==2.1.0 -f https://data.dgl.ai/wheels/torch-2.1/repo.html", DGL_CUDA_NOTE),
  ])

E("matgl_requirements", "requirements-gpu.txt", "explicit_replacement",
  "Pinned CUDA 12.1 requirements for the screening stack (torch+cu121, dgl+cu121, cuequivariance-ops-cu12)",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index"),
      C("-f https://data.dgl.ai/wheels/cu121/repo.html", "custom_cuda_extension", "replace", False,
        "-f https://data.dgl.ai/wheels/torch-2.1/repo.html", DGL_CUDA_NOTE),
      C("=torch==2.1.2+cu121", "import_torch_npu", "replace", True, "torch==2.1.0",
        "+cu121 local version only exists on the CUDA index; torch_npu 2.1.0.postN pairs with torch 2.1.0"),
      C("=torchdata==0.7.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
        "the torch-npu pin (CANN 8.0.0) goes next to torch"),
      C("=dgl==2.1.0+cu121", "custom_cuda_extension", "replace", False, "dgl==2.1.0", DGL_CUDA_NOTE),
      C("=nvidia-ml-py3>=7.352.0", "torch_cuda_api", "removal", False, None, "NVML binding, no use on NPU"),
      C('=cuequivariance-torch>=0.1.0 ; platform_machine == "x86_64"', "custom_cuda_extension", "removal", False, None,
        "front end of NVIDIA's cuEquivariance; only useful with the CUDA ops package below"),
      C('=cuequivariance-ops-torch-cu12>=0.1.0 ; platform_machine == "x86_64"', "custom_cuda_extension", "removal", False, None,
        "CUDA-only kernels (cu12); MACE runs without them (enable_cueq=False)"),
  ])

# ----------------------------------------------------------------------------------------------
# MACE
# ----------------------------------------------------------------------------------------------
E("mace_torch_tools", "mace/tools/torch_tools.py", "device_branch_or_abstraction",
  "MACE mace/tools/torch_tools.py (init_device with cuda/mps/xpu branches)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        IMPORT_NOTE + "; init_device is where every MACE entry point resolves the device"),
      C('=if "cuda" in device_str:', "device_type", "add_branch", True,
        'if "npu" in device_str: torch.npu.set_device(device_str); return torch.device(device_str)',
        "without an npu branch init_device('npu') falls through to 'Using CPU' and silently returns cpu"),
  ])

E("mace_calculator", "mace/calculators/mace.py", "device_branch_or_abstraction",
  "MACE mace/calculators/mace.py (MACECalculator with compile_mode and enable_cueq)",
  [
      C("run_e3nn_to_cueq(model, device=device).to(device) for model in self.models", "custom_cuda_extension", "replace", False,
        'raise RuntimeError("cuEquivariance kernels are CUDA-only; use enable_cueq=False on NPU")',
        "only when enable_cueq=True (default False); cuequivariance-ops ships CUDA kernels only"),
  ])

E("mace_foundations", "mace/calculators/foundations_models.py", "device_branch_or_abstraction",
  "MACE foundations_models.py (mace_mp / mace_off defaults)",
  [
      C('device = device or ("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = device or ("npu" if torch.npu.is_available() else "cpu")', "mace_mp default device; otherwise CPU"),
      C('=device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        'device = "npu" if torch.npu.is_available() else "cpu"', "mace_off default device"),
      C('default_dtype: str = "float64",', "unsupported_op_workaround", "replace", False,
        'default_dtype: str = "float32",', FP64_NOTE),
  ])

E("mace_arg_parser", "mace/tools/arg_parser.py", "device_branch_or_abstraction",
  "MACE mace/tools/arg_parser.py excerpt (--device choices, --default_dtype, --distributed, --enable_cueq)",
  [
      C('choices=["cpu", "cuda", "mps", "xpu"],', "device_type", "replace", True,
        'choices=["cpu", "cuda", "mps", "xpu", "npu"],', "argparse rejects --device npu otherwise"),
      C('=default="float64",', "unsupported_op_workaround", "replace", False, 'default="float32",', FP64_NOTE),
  ])

E("mace_run_train", "mace/cli/run_train.py", "device_branch_or_abstraction",
  "MACE mace/cli/run_train.py (SLURM DistributedEnvironment, nccl, set_device(local_rank), cuEq conversion)",
  [
      C('torch.distributed.init_process_group(backend="nccl")', "dist_backend", "replace", True,
        'torch.distributed.init_process_group(backend="hccl")', "NCCL unavailable on NPU"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "raises without CUDA in --distributed runs"),
      C("model = run_e3nn_to_cueq(deepcopy(model), device=device)", "custom_cuda_extension", "replace", False,
        'raise RuntimeError("--enable_cueq needs NVIDIA cuEquivariance kernels")',
        "only with --enable_cueq (default False)"),
      C("model_to_save = run_cueq_to_e3nn(deepcopy(model), device=device)", "custom_cuda_extension", "removal", False, None,
        "back-conversion is dead once cuEq cannot be enabled"),
  ])

E("mace_mp_phonons", "scripts/mace_mp_phonons.py", "explicit_replacement",
  "User script: MACE-MP-0 relaxation in float64 + phonopy finite displacements on GPU",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "mace.tools imports torch_npu after porting; explicit import is good practice"),
      C('p.add_argument("--device", default="cuda")', "device_type", "replace", True,
        'p.add_argument("--device", default="npu")', "default device string"),
      C('if args.device.startswith("cuda") and not torch.cuda.is_available():', "torch_cuda_api", "replace", False,
        'if args.device.startswith("npu") and not torch.npu.is_available():', "sanity check is skipped for npu; nothing breaks"),
      C('=if args.device.startswith("cuda"):', "device_type", "replace", False, 'if args.device.startswith("npu"):',
        "cosmetic print"),
      C('print(f"running on {torch.cuda.get_device_name()}")', "torch_cuda_api", "replace", False,
        'print(f"running on {torch.npu.get_device_name()}")', "inside the cosmetic branch"),
      C('=default_dtype="float64",', "unsupported_op_workaround", "replace", False, 'default_dtype="float32",', FP64_NOTE),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "unguarded; raises without CUDA"),
  ])

E("mace_multinode", "scripts/train_mace_multinode.slurm", "explicit_replacement",
  "SLURM multi-node MACE fine-tuning with srun + NCCL/InfiniBand settings",
  [
      C("#SBATCH --gpus-per-node=4", "device_type", "replace", False, "#SBATCH --gres=npu:4",
        "site-specific scheduler resource name (unconfirmed)"),
      C("module load gcc/12.2 cuda/12.1 nccl/2.18", "import_torch_npu", "replace", True,
        "module load gcc/12.2 && source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment instead of CUDA/NCCL modules"),
      C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=ib0",
        "HCCL picks the host NIC for rendezvous by its own rules; set explicitly on multi-NIC nodes"),
      C("export NCCL_IB_HCA=mlx5_0,mlx5_1", "env_var", "removal", False, None,
        "HCCL uses the NPU-side RoCE ports configured with hccn_tool; no HCA selection variable"),
      C("export NCCL_IB_TIMEOUT=22", "env_var", "replace", False, "export HCCL_CONNECT_TIMEOUT=600",
        "unconfirmed mapping; HCCL_CONNECT_TIMEOUT (120-7200 s) is the usual knob for slow multi-node setup"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
        "logging only"),
      C("--device=cuda \\", "device_type", "replace", True, "--device=npu \\",
        "run_train resolves the device from this flag"),
  ])

# ----------------------------------------------------------------------------------------------
# CrabNet
# ----------------------------------------------------------------------------------------------
E("crabnet_compute_device", "crabnet/utils/get_compute_device.py", "device_branch_or_abstraction",
  "CrabNet crabnet/utils/get_compute_device.py (prefer the last GPU)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("ngpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "ngpus = torch.npu.device_count()",
        "0 on an NPU host, so CrabNet silently trains on CPU"),
      C('compute_device = torch.device(f"cuda:{ngpus - 1}")', "device_type", "replace", True,
        'compute_device = torch.device(f"npu:{ngpus - 1}")', "device string"),
      C('compute_device = torch.device("cuda:0")', "device_type", "replace", True,
        'compute_device = torch.device("npu:0")', "device string"),
  ])

E("crabnet_model", "crabnet/model.py", "device_branch_or_abstraction",
  "CrabNet crabnet/model.py (Model.fit/predict with Lamb+Lookahead+SWA) plus a fork's AMP",
  [
      C('self.use_amp = use_amp and self.compute_device.type == "cuda"', "device_type", "replace", False,
        'self.use_amp = use_amp and self.compute_device.type == "npu"', "AMP silently off on NPU; performance only"),
      C("self.scaler_amp = torch.cuda.amp.GradScaler(enabled=self.use_amp)", "amp", "replace", False,
        "self.scaler_amp = torch.npu.amp.GradScaler(enabled=self.use_amp)",
        "CUDA GradScaler disables itself without CUDA; needed once AMP is enabled on NPU"),
      C("with torch.cuda.amp.autocast(enabled=self.use_amp):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=self.use_amp):", "CUDA autocast disables itself without CUDA"),
      C('if self.compute_device.type == "cuda":', "device_type", "replace", False,
        'if self.compute_device.type == "npu":', "cache flush skipped on NPU"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "no-op without CUDA"),
  ])

# ----------------------------------------------------------------------------------------------
# Benchmark
# ----------------------------------------------------------------------------------------------
E("uip_benchmark", "benchmarks/md_throughput.py", "explicit_replacement",
  "MD-throughput benchmark of CHGNet / MACE-MP / M3GNet with CUDA events, NVTX, TF32 and nvidia-smi",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "gpu_info() queries the device before any model package is imported"),
      C("props = torch.cuda.get_device_properties(0)", "torch_cuda_api", "replace", True,
        "props = torch.npu.get_device_properties(0)", "raises without CUDA"),
      C('["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],', "torch_cuda_api", "replace", False,
        '["npu-smi", "info"],', "guarded by except OSError; driver column just becomes 'unknown'"),
      C('"sm": f"{props.major}.{props.minor}",', "device_capability_check", "replace", True,
        '"soc": props.name,', "NPU device properties have no major/minor (name, total_memory, L2_cache_size, core counts only)"),
      C('"cuda": torch.version.cuda,', "torch_cuda_api", "replace", False, '"torch_npu": torch_npu.__version__,',
        "just None on a CPU torch build; report torch_npu/CANN instead"),
      C('compile_mode="reduce-overhead" if compile_model else None,', "compile_mode", "replace", False,
        'compile_mode="default" if compile_model else None,',
        "reduce-overhead means CUDA graphs; unconfirmed how Inductor treats it on NPU (npugraphs is the NPU analogue)"),
      C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start = torch.npu.Event(enable_timing=True)", "CUDA events need CUDA"),
      C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end = torch.npu.Event(enable_timing=True)", "CUDA events need CUDA"),
      C("=torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats()", "raises without CUDA"),
      C('torch.cuda.nvtx.range_push("md_step")', "torch_cuda_api", "replace", True,
        'rid = torch_npu.npu.mstx.range_start("md_step")',
        "torch.cuda.nvtx is not aliased by torch_npu and raises on a non-CUDA build; mstx is the NPU range API"),
      C("=torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(rid)",
        "pair of the range above"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises without CUDA"),
      C("peak = torch.cuda.max_memory_allocated() / 1024**3", "torch_cuda_api", "replace", True,
        "peak = torch.npu.max_memory_allocated() / 1024**3", "silently 0 without CUDA"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
        "benchmark exits on the NPU host otherwise"),
      C('=device = "cuda"', "device_type", "replace", True, 'device = "npu"', "device passed to all calculators"),
      C("torch.backends.cudnn.benchmark = True", "torch_cuda_api", "removal", False, None, "cuDNN flag is a no-op on NPU"),
      C("if torch.cuda.get_device_capability(0)[0] >= 8:", "device_capability_check", "replace", True,
        "if True:  # NPU has no SM version; torch.npu.get_device_capability() returns None",
        "raises without CUDA; the NPU variant returns None so indexing fails"),
      C("torch.backends.cuda.matmul.allow_tf32 = args.tf32", "torch_cuda_api", "replace", False,
        "torch.npu.matmul.allow_hf32 = args.tf32", "no-op on NPU; HF32 is the NPU analogue"),
      C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", "replace", False, "except RuntimeError:",
        "unconfirmed which exception NPU OOM raises"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "no-op without CUDA"),
      C("torch.cuda.empty_cache()  # free the previous model", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()  # free the previous model before loading the next", "no-op without CUDA"),
  ])
