# Labels for probe214: normalizing flows / score-based / flow-matching research code (CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter edits. See ../README.md for the policy.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
TRANSFER = "import torch_npu; from torch_npu.contrib import transfer_to_npu  # noqa: E702"
NPU_IMPORT_NOTE = ("entry script: torch.npu / the NPU device type exist only after torch_npu is loaded "
                   "(autoloaded from torch_npu 2.5.1 on, but the torch versions these projects pin predate that)")
TRANSFER_NOTE = ("transfer_to_npu style: importing torch_npu + transfer_to_npu patches torch.cuda.*, .cuda(), "
                 "'cuda' device strings and nccl, so the script's CUDA device lines are left as they are")

# ---------------------------------------------------------------------------------------------
# Glow (y0ast/Glow-PyTorch style)
# ---------------------------------------------------------------------------------------------
E("glow_train", "train.py", "explicit_replacement",
  "Glow-PyTorch train.py (ignite Engine, --no_cuda flag, 'cpu' if not cuda else 'cuda:0')",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_IMPORT_NOTE),
      C('device = "cpu" if (not torch.cuda.is_available() or not cuda) else "cuda:0"', "device_type", "replace", True,
        'device = "cpu" if (not torch.npu.is_available() or not cuda) else "npu:0"',
        "torch.cuda.is_available() is False on an Ascend host, so the whole run silently falls back to CPU"),
      C("model.load_state_dict(torch.load(saved_model))", "tensor_to_device", "replace", True,
        "model.load_state_dict(torch.load(saved_model, map_location=device))",
        "the released Glow checkpoints were saved from CUDA tensors; without map_location torch.load tries to "
        "restore them to cuda and raises on a host without CUDA"),
      C("optimizer.load_state_dict(torch.load(saved_optimizer))", "tensor_to_device", "replace", True,
        "optimizer.load_state_dict(torch.load(saved_optimizer, map_location=device))",
        "same as the model checkpoint: optimizer state written on a GPU deserialises to cuda"),
  ])

E("glow_modules", "modules.py", "explicit_replacement",
  "Glow-PyTorch modules.py (ActNorm2d, LU-decomposed InvertibleConv1x1, Split2d)",
  [
      # deliberately empty: every tensor follows input.device / registered buffers; torch.lu/lu_unpack only run at
      # construction time on CPU; slogdet/inverse are fp32 here (NPU kernels exist for both).
  ])

# ---------------------------------------------------------------------------------------------
# Glow (rosinality/glow-pytorch style)
# ---------------------------------------------------------------------------------------------
E("glow_rosinality_train", "train.py", "explicit_replacement",
  "rosinality glow-pytorch train.py (module-level device, nn.DataParallel, model.module for ActNorm init)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_IMPORT_NOTE),
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
        "silently trains on CPU on an Ascend host otherwise"),
      C("model = nn.DataParallel(model_single)", "distributed_framework", "replace", True,
        "model = model_single  # torch.nn.DataParallel is unsupported on Ascend (use DDP for multi-NPU)",
        "torch.nn.DataParallel is marked unsupported (x) on all Ascend products in the 2.7.1 API list and in the "
        "msFmkTransplt limitations"),
      C("log_p, logdet, _ = model.module(", "distributed_framework", "replace", True,
        "log_p, logdet, _ = model_single(",
        "follow-on of dropping DataParallel: a plain module has no .module attribute"),
  ])

E("glow_rosinality_model", "model.py", "explicit_replacement",
  "rosinality glow-pytorch model.py (ActNorm, InvConv2d with float64 slogdet, InvConv2dLU)",
  [
      C("height * width * torch.slogdet(self.weight.squeeze().double())[1].float()", "unsupported_op_workaround",
        "replace", False,
        "height * width * torch.slogdet(self.weight.squeeze().double().cpu())[1].float().to(input.device)",
        "torch.slogdet on NPU takes fp32/complex only (2.7.1 API list) and NPUs cast float64 to float32 with a "
        "warning, so the double-precision log-det becomes fp32; a CPU fp64 slogdet of the CxC weight keeps the "
        "intent (only the --no_lu path)"),
  ])

# ---------------------------------------------------------------------------------------------
# FFJORD (rtqichen/ffjord style) -- ported with transfer_to_npu
# ---------------------------------------------------------------------------------------------
E("ffjord_train_cnf", "train_cnf.py", "transfer_to_npu",
  "FFJORD train_cnf.py (image CNFs, DataParallel when CUDA is present, cudnn.benchmark, max_memory_allocated log)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, TRANSFER, TRANSFER_NOTE),
      C("model = torch.nn.DataParallel(model).cuda()", "distributed_framework", "replace", True,
        "model = model.cuda()  # DataParallel is unsupported on NPU; transfer_to_npu maps .cuda() to the NPU",
        "transfer_to_npu does not make DataParallel work (msFmkTransplt README: DataParallel unsupported, use DDP)"),
      C('"state_dict": model.module.state_dict() if torch.cuda.is_available() else model.state_dict(),',
        "distributed_framework", "replace", True, '"state_dict": model.state_dict(),',
        "with transfer_to_npu torch.cuda.is_available() is True, so after removing DataParallel this would call "
        ".module on a plain model and crash at the first checkpoint"),
  ])

E("ffjord_train_toy", "train_toy.py", "transfer_to_npu",
  "FFJORD train_toy.py (2-D CNFs, --gpu flag, torch.device('cuda:' + str(args.gpu)))",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, TRANSFER, TRANSFER_NOTE),
  ])

E("ffjord_odefunc", "lib/layers/odefunc.py", "transfer_to_npu",
  "FFJORD lib/layers/odefunc.py (Hutchinson / brute-force divergence, ODEfunc)",
  [
      # deliberately empty: device-agnostic (.to(y), type_as(y), randn_like); double-backward via autograd.grad.
  ])

E("ffjord_utils", "lib/utils.py", "transfer_to_npu",
  "FFJORD lib/utils.py (loggers, meters, nvidia-smi memory map)",
  [
      C("['nvidia-smi', '--query-gpu=memory.used', '--format=csv,nounits,noheader'], encoding='utf-8'",
        "torch_cuda_api", "replace", True,
        "['npu-smi', 'info', '-t', 'usages', '-i', '0'], encoding='utf-8'  # key : value output, parse below changes too",
        "there is no nvidia-smi on an Ascend host: log_memory_usage() -> get_gpu_memory_map() raises "
        "FileNotFoundError; transfer_to_npu does not touch subprocess calls (torch.cuda.memory_* are patched)"),
  ])

E("ffjord_run_sh", "scripts/cifar10_multiscale.sh", "explicit_replacement",
  "FFJORD multiscale CIFAR-10 launcher (CUDA_VISIBLE_DEVICES + DataParallel)",
  [
      C("# per-GPU batch is BATCH_SIZE / number of GPUs listed below.", "env_var", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN's environment (LD_LIBRARY_PATH, ASCEND_OPP_PATH, ...) must be set before torch_npu is imported"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; device selection silently stops working"),
      C("CUDA_VISIBLE_DEVICES=0 python eval_cnf.py \\", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=0 python eval_cnf.py \\",
        "same: evaluation would no longer be pinned to one device"),
  ])

# ---------------------------------------------------------------------------------------------
# torchdiffeq examples
# ---------------------------------------------------------------------------------------------
E("torchdiffeq_ode_demo", "examples/ode_demo.py", "explicit_replacement",
  "torchdiffeq examples/ode_demo.py (--gpu, --adjoint, odeint vs odeint_adjoint)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_IMPORT_NOTE),
      C("device = torch.device('cuda:' + str(args.gpu) if torch.cuda.is_available() else 'cpu')", "device_type",
        "replace", True, "device = torch.device('npu:' + str(args.gpu) if torch.npu.is_available() else 'cpu')",
        "silently runs on CPU otherwise"),
  ])

E("torchdiffeq_cnf", "examples/cnf.py", "explicit_replacement",
  "torchdiffeq examples/cnf.py (hypernetwork CNF on circles, float64 time grids for visualisation)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_IMPORT_NOTE),
      C("device = torch.device('cuda:' + str(args.gpu)", "device_type", "replace", True,
        "device = torch.device('npu:' + str(args.gpu)",
        "first half of a two-line device expression"),
      C("if torch.cuda.is_available() else 'cpu')", "torch_cuda_api", "replace", True,
        "if torch.npu.is_available() else 'cpu')",
        "second half: without it the NPU branch is never taken"),
      C("checkpoint = torch.load(ckpt_path)", "tensor_to_device", "replace", False,
        "checkpoint = torch.load(ckpt_path, map_location=device)",
        "only matters when resuming a train_dir whose ckpt.pth was written on a GPU"),
      C("torch.tensor(np.linspace(t0, t1, viz_timesteps)).to(device),", "unsupported_op_workaround", "replace", False,
        "torch.tensor(np.linspace(t0, t1, viz_timesteps), dtype=torch.float32).to(device),",
        "np.linspace gives a float64 time grid; the NPU casts double to float with a warning "
        "('Device do not support double dtype now'), so make the fp32 grid explicit (--viz only)"),
      C("torch.tensor(np.linspace(t1, t0, viz_timesteps)).to(device),", "unsupported_op_workaround", "replace", False,
        "torch.tensor(np.linspace(t1, t0, viz_timesteps), dtype=torch.float32).to(device),",
        "same float64 time grid for the density evolution"),
  ])

# ---------------------------------------------------------------------------------------------
# score_sde_pytorch (yang-song style)
# ---------------------------------------------------------------------------------------------
E("score_sde_config", "configs/default_cifar10_configs.py", "explicit_replacement",
  "score_sde_pytorch configs/default_cifar10_configs.py (ml_collections, config.device)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "the config file is parsed by main.py (config_flags) before any model code runs and it is the first "
        "place that needs torch.npu, so torch_npu is imported here"),
      C("config.device = torch.device('cuda:0') if torch.cuda.is_available() else torch.device('cpu')",
        "device_type", "replace", True,
        "config.device = torch.device('npu:0') if torch.npu.is_available() else torch.device('cpu')",
        "every model/data placement in run_lib, sampling and likelihood goes through config.device"),
  ])

E("score_sde_run_lib", "run_lib.py", "explicit_replacement",
  "score_sde_pytorch run_lib.py (train/evaluate loops, TF data + tfgan FID, sampling timing)",
  [
      C("step, loss.item(), torch.cuda.max_memory_allocated() / 2 ** 30))", "torch_cuda_api", "replace", False,
        "step, loss.item(), torch.npu.max_memory_allocated() / 2 ** 30))",
        "without CUDA the allocator is never initialised and this logs 0 GiB: wrong log, not a failure"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "lazy CUDA init raises 'Torch not compiled with CUDA enabled' on the CPU torch wheel Ascend hosts use"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op when CUDA was never initialised; the NPU cache is just not released before the TF Inception pass"),
  ])

E("score_sde_models_utils", "models/utils.py", "explicit_replacement",
  "score_sde_pytorch models/utils.py (model registry, create_model with DataParallel, score_fn wrappers)",
  [
      C("score_model = torch.nn.DataParallel(score_model)", "distributed_framework", "replace", True,
        "score_model = score_model  # DataParallel is unsupported on NPU; strip 'module.' when restoring released checkpoints",
        "DataParallel is x on Ascend; note the released checkpoints carry DataParallel 'module.' keys"),
  ])

E("score_sde_upfirdn2d", "op/upfirdn2d.py", "kernel_rewrite",
  "score_sde_pytorch op/upfirdn2d.py (StyleGAN2 JIT CUDA kernel via cpp_extension.load, native fallback)",
  [
      C("upfirdn2d_op = load(", "custom_cuda_extension", "replace", True,
        "upfirdn2d_op = None  # no nvcc on Ascend: drop the JIT build (whole load(...) block); upfirdn2d_native is used",
        "load() compiles upfirdn2d_kernel.cu with nvcc at import time, so importing NCSN++/DDPM++ fails on an NPU host "
        "(cpp_extension.load is x on A2/A3 in the 2.7.1 list)"),
      C('if input.device.type == "cpu":', "custom_cuda_extension", "replace", True,
        'if input.device.type != "cuda":',
        "call-site dispatch: NPU tensors would otherwise be sent to the CUDA kernel; the pure-torch upfirdn2d_native "
        "(pad + conv2d) runs on NPU"),
  ])

E("score_sde_fused_act", "op/fused_act.py", "kernel_rewrite",
  "score_sde_pytorch op/fused_act.py (fused_bias_act JIT CUDA kernel, FusedLeakyReLU)",
  [
      C("fused = load(", "custom_cuda_extension", "replace", True,
        "fused = None  # no nvcc on Ascend: drop the JIT build (whole load(...) block); use the leaky_relu path",
        "JIT nvcc build at import time fails on an NPU host"),
      C('if input.device.type == "cpu":', "custom_cuda_extension", "replace", True,
        'if input.device.type != "cuda":',
        "call-site dispatch to the CUDA kernel; the F.leaky_relu branch is the NPU path (note it hard-codes "
        "negative_slope=0.2 upstream)"),
  ])

E("score_sde_setup", "setup.py", "kernel_rewrite",
  "score_sde_pytorch fork setup.py pre-building the upfirdn2d / fused_bias_act CUDAExtensions",
  [
      C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace",
        False, "from torch.utils.cpp_extension import BuildExtension",
        "the import itself works on a CPU torch; tidy-up once the CUDAExtensions are gone"),
      C('os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "7.0;7.5;8.0;8.6")', "env_var", "removal", False, None,
        "nvcc arch list; meaningless without CUDA"),
      C('CUDAExtension("op.upfirdn2d_cuda"', "custom_cuda_extension", "removal", True, None,
        "CUDAExtension needs CUDA_HOME/nvcc, so pip install fails on an Ascend host; the op runs via upfirdn2d_native "
        "(an Ascend C kernel via NpuExtension would be the kernel-rewrite route)"),
      C('CUDAExtension("op.fused_cuda"', "custom_cuda_extension", "removal", True, None,
        "same for fused_bias_act"),
  ])

E("score_sde_requirements", "requirements.txt", "explicit_replacement",
  "score_sde_pytorch requirements.txt pinned to CUDA 11.1 wheels (torch+cu111, tensorflow-gpu, jaxlib+cuda)",
  [
      C("torch==1.9.0+cu111", "torch_cuda_api", "replace", True, "torch==2.1.0+cpu",
        "CUDA build of a torch with no torch_npu release; torch_npu needs the matching CPU torch (x86: +cpu wheel, "
        "aarch64: plain PyPI torch==2.1.0)"),
      C("torchvision==0.10.0+cu111", "torch_cuda_api", "replace", True, "torchvision==0.16.0+cpu",
        "must follow the torch version; the cu111 build pins torch 1.9.0"),
      C("ninja==1.10.0.post2", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "the torch-npu wheel matching torch 2.1.0 (CANN 8.1.RC1 per the compatibility table)"),
      C("tensorflow-gpu==2.4.1", "custom_cuda_extension", "replace", False, "tensorflow-cpu==2.4.1",
        "TF only feeds data and runs Inception on CPU here; the GPU build looks for CUDA libraries and has no "
        "aarch64 wheel (unconfirmed for every host)"),
      C("-f https://storage.googleapis.com/jax-releases/jax_releases.html", "custom_cuda_extension", "removal", False,
        None, "find-links page for CUDA jaxlib wheels; the CPU jaxlib comes from PyPI"),
      C("jaxlib==0.1.59+cuda111", "custom_cuda_extension", "replace", False, "jaxlib==0.1.59",
        "CUDA 11.1 build of jaxlib; JAX is not on the training path, so a CPU jaxlib is enough"),
  ])

E("score_sde_slurm", "slurm/train_cifar10_ncsnpp.sbatch", "explicit_replacement",
  "Slurm batch script for score_sde_pytorch NCSN++ training (module load cuda, gres=gpu)",
  [
      C("#SBATCH --partition=gpu", "device_type", "replace", False, "#SBATCH --partition=npu",
        "partition name is site-specific (unconfirmed)"),
      C("#SBATCH --gres=gpu:4", "device_type", "replace", False, "#SBATCH --gres=npu:4",
        "GRES name depends on how the site configured Slurm; no Ascend Slurm integration is documented in the "
        "knowledge base (unconfirmed)"),
      C("set -euo pipefail", "env_var", "replace", True, "set -eo pipefail",
        "CANN's set_env.sh aborts under 'set -u' (CMAKE_PREFIX_PATH: unbound variable)"),
      C("module load cuda/11.1", "env_var", "removal", False, None,
        "no CUDA toolkit on the NPU nodes; with Lmod a missing module under set -e would abort the job (site-specific, unconfirmed)"),
      C("module load cudnn/8.0.5", "env_var", "removal", False, None, "no cuDNN on the NPU nodes"),
      C("conda activate score_sde", "env_var", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment must be sourced or import torch_npu fails (libhccl.so / ASCEND_OPP_PATH)"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
        "device visibility is controlled by ASCEND_RT_VISIBLE_DEVICES"),
      C("=nvidia-smi", "torch_cuda_api", "replace", True, "npu-smi info",
        "only a diagnostic, but the script runs under set -e, so 'command not found' (exit 127) aborts the job"),
  ])

# ---------------------------------------------------------------------------------------------
# Neural spline flows (bayesiains/nsf style)
# ---------------------------------------------------------------------------------------------
E("nsf_uci", "experiments/uci.py", "explicit_replacement",
  "nsf experiments/uci.py (tabular density estimation; assert CUDA, default tensor type torch.cuda.FloatTensor)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_IMPORT_NOTE),
      C("assert torch.cuda.is_available()", "torch_cuda_api", "replace", True, "assert torch.npu.is_available()",
        "hard assert fails on an NPU host"),
      C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
        "cuda device string"),
      C("torch.set_default_tensor_type('torch.cuda.FloatTensor')", "torch_cuda_api", "replace", True,
        "torch.set_default_tensor_type('torch.npu.FloatTensor')",
        "torch.cuda.FloatTensor is not available in a CPU torch build (raises); the script relies on the default "
        "type so that flows create parameters/buffers on the accelerator"),
  ])

# ---------------------------------------------------------------------------------------------
# zuko
# ---------------------------------------------------------------------------------------------
E("zuko_moons", "examples/train_moons.py", "explicit_replacement",
  "zuko two-moons example with CUDA-event benchmarking (NSF/MAF/NAF/CNF)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_IMPORT_NOTE),
      C('p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")', "device_type",
        "replace", True, 'p.add_argument("--device", default="npu" if torch.npu.is_available() else "cpu")',
        "default device silently becomes CPU"),
      C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA (--bench)"),
      C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end = torch.npu.Event(enable_timing=True)", "same"),
      C("torch.cuda.synchronize()  # drain warm-up work", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # drain warm-up work", "lazy CUDA init raises on a CPU torch build"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "same"),
      C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(args.seed)",
        "queued lazily and never run without CUDA (no error); torch.manual_seed on the line above already seeds the "
        "NPU generator in recent torch (unconfirmed for older pairs)"),
      C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
        "torch.use_deterministic_algorithms(True)",
        "the cuDNN flag is accepted on NPU (2.7.1 list) but whether it governs NPU kernels is unconfirmed; "
        "use_deterministic_algorithms is the documented NPU switch"),
      C('print(f"fwd+bwd: {ms:.2f} ms/iter on {torch.cuda.get_device_name(device)}")', "torch_cuda_api", "replace",
        True, 'print(f"fwd+bwd: {ms:.2f} ms/iter on {torch.npu.get_device_name(device)}")',
        "get_device_name initialises CUDA and raises on an NPU host (--bench)"),
  ])

# ---------------------------------------------------------------------------------------------
# conditional-flow-matching (torchcfm) CIFAR-10 example
# ---------------------------------------------------------------------------------------------
E("cfm_train_cifar10", "examples/images/cifar10/train_cifar10.py", "explicit_replacement",
  "torchcfm examples/images/cifar10/train_cifar10.py (absl flags, OT-CFM, optional DataParallel)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_IMPORT_NOTE),
      C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "use_cuda = torch.npu.is_available()", "False on an NPU host; the variable name is kept"),
      C('device = torch.device("cuda" if use_cuda else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if use_cuda else "cpu")', "cuda device string"),
      C("net_model = torch.nn.DataParallel(net_model)", "distributed_framework", "replace", True,
        'raise NotImplementedError("--parallel uses torch.nn.DataParallel, unsupported on Ascend; run train_cifar10_ddp.py")',
        "only with --parallel True; DataParallel is x on Ascend. Simply dropping the wrapper is not enough because "
        "generate_samples(parallel=True) then calls .module, so the flag is refused instead"),
      C("ema_model = torch.nn.DataParallel(ema_model)", "distributed_framework", "removal", False, None,
        "unreachable once the line above raises; delete"),
  ])

E("cfm_utils_cifar", "examples/images/cifar10/utils_cifar.py", "explicit_replacement",
  "torchcfm examples/images/cifar10/utils_cifar.py (setup() with nccl default, torchdyn NeuralODE sampling, EMA)",
  [
      C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "use_cuda = torch.npu.is_available()", "module-level device used by generate_samples"),
      C('device = torch.device("cuda" if use_cuda else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if use_cuda else "cpu")', "cuda device string"),
      C('backend: str = "nccl",', "dist_backend", "replace", True, 'backend: str = "hccl",',
        "NCCL is not available on Ascend; HCCL is the collective backend"),
  ])

E("cfm_train_cifar10_ddp", "examples/images/cifar10/train_cifar10_ddp.py", "explicit_replacement",
  "torchcfm examples/images/cifar10/train_cifar10_ddp.py (torchrun + DDP, .to(rank) with an int rank)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_IMPORT_NOTE),
      C("batch_size_per_gpu = FLAGS.batch_size // total_num_gpus", "torch_cuda_api", "npu_only_addition", False,
        "torch.npu.set_device(rank)",
        "the CUDA script never sets the current device; Ascend's DDP samples always call torch.npu.set_device "
        "before init_process_group (whether HCCL strictly needs it here is unconfirmed)"),
      C("=rank", "tensor_to_device", "replace", True, 'f"npu:{rank}" if isinstance(rank, int) else rank',
        "Module.to(<int>) means cuda:<int>; transfer_to_npu exists precisely to rewrite these ints"),
      C("x1 = next(datalooper).to(rank)", "tensor_to_device", "replace", True,
        'x1 = next(datalooper).to(f"npu:{rank}" if isinstance(rank, int) else rank)',
        "same int-device problem for every batch"),
      C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "use_cuda = torch.npu.is_available()", "single-device path"),
      C('device = torch.device("cuda" if use_cuda else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if use_cuda else "cpu")', "single-device path"),
  ])

E("cfm_compute_fid", "examples/images/cifar10/compute_fid.py", "explicit_replacement",
  "torchcfm examples/images/cifar10/compute_fid.py (clean-fid, torchdiffeq odeint / torchdyn NeuralODE)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_IMPORT_NOTE),
      C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "use_cuda = torch.npu.is_available()", "False on an NPU host"),
      C('device = torch.device("cuda:0" if use_cuda else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu:0" if use_cuda else "cpu")', "cuda device string"),
      C('mode="legacy_tensorflow",', "device_type", "npu_only_addition", False, "device=device,",
        "clean-fid's compute_fid defaults to device=torch.device('cuda') for its Inception feature extractor "
        "(from memory of clean-fid; unconfirmed here)"),
  ])

E("cfm_trainer_ddp_yaml", "runner/configs/trainer/ddp.yaml", "explicit_replacement",
  "torchcfm runner Hydra trainer config for Lightning DDP",
  [
      C("accelerator: gpu", "device_type", "replace", True, "accelerator: npu",
        "Lightning's 'gpu' accelerator requires CUDA/MPS; stock Lightning has no NPU accelerator, so this needs an "
        "Ascend accelerator plugin registered under that name (replacement unconfirmed)"),
  ])

# ---------------------------------------------------------------------------------------------
# SiT (Scalable Interpolant Transformers) -- flow matching / stochastic interpolants
# ---------------------------------------------------------------------------------------------
E("sit_train", "train.py", "explicit_replacement",
  "SiT train.py (DiT-style DDP trainer: nccl, rank % device_count, torch.cuda.synchronize for steps/sec)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_IMPORT_NOTE),
      C('assert torch.cuda.is_available(), "Training currently requires at least one GPU."', "torch_cuda_api",
        "replace", True, 'assert torch.npu.is_available(), "Training currently requires at least one NPU."',
        "hard assert"),
      C('dist.init_process_group("nccl")', "dist_backend", "replace", True, 'dist.init_process_group("hccl")',
        "NCCL backend does not exist on Ascend"),
      C("device = rank % torch.cuda.device_count()", "device_type", "replace", True,
        'device = torch.device("npu", rank % torch.npu.device_count())',
        "device_count() is 0 (ZeroDivisionError); and the bare int is later used in .to(device)/device=device, "
        "where an int means a CUDA ordinal, so build an explicit npu device"),
      C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
        "CUDA set_device fails without CUDA"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises on a CPU torch build; needed for honest steps/sec on an async device"),
  ])

E("sit_environment", "environment.yml", "explicit_replacement",
  "SiT environment.yml (conda pytorch + pytorch-cuda from the nvidia channel)",
  [
      C("- nvidia", "torch_cuda_api", "removal", False, None, "only needed for the CUDA runtime packages"),
      C("- pytorch >= 1.13", "torch_cuda_api", "replace", True, "- pytorch==2.1.0",
        "torch-npu must match the torch version exactly (2.1.0 <-> 2.1.0.postN); an open range lets the solver "
        "pick a torch with no matching torch-npu"),
      C("- pytorch-cuda >=11.7", "torch_cuda_api", "removal", False, None,
        "selects the CUDA build of pytorch; Ascend installs the CPU build (whether the CUDA build breaks "
        "torch_npu is unconfirmed)"),
      C("- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
        "the torch-npu wheel itself"),
  ])

# ---------------------------------------------------------------------------------------------
# facebookresearch/flow_matching image example
# ---------------------------------------------------------------------------------------------
E("fm_image_train", "examples/image/train.py", "explicit_replacement",
  "flow_matching examples/image/train.py (MAE-style trainer: --device cuda, cudnn.benchmark, DDP, AdamW)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_IMPORT_NOTE),
      C('parser.add_argument("--device", default="cuda", help="device to use for training / testing")',
        "device_type", "replace", True,
        'parser.add_argument("--device", default="npu", help="device to use for training / testing")',
        "default device string"),
      C("if args.bf16 and torch.cuda.get_device_capability(device)[0] >= 8:", "device_capability_check", "replace",
        True, "if args.bf16 and torch.npu.is_bf16_supported():",
        "get_device_capability returns None on NPU (or fails without CUDA) so [0] raises; bf16 support is "
        "queried directly instead"),
      C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", False,
        "model = torch.compile(model)",
        "--compile only; max-autotune is CUDA Triton autotuning (transfer_to_npu forces has_triton False); "
        "Inductor on NPU exists from torch_npu 2.6 (unconfirmed for this pair)"),
      C("model_without_ddp.parameters(), lr=args.lr, betas=args.optimizer_betas, fused=torch.cuda.is_available()",
        "fused_optimizer", "replace", False,
        "model_without_ddp.parameters(), lr=args.lr, betas=args.optimizer_betas, fused=torch.npu.is_available()",
        "evaluates to fused=False on NPU (plain AdamW, slower). _fused_adamw_ has an NPU kernel in the op list but "
        "whether torch accepts fused=True for 'npu' is unconfirmed; torch_npu.optim.NpuFusedAdamW is the alternative"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "peak-memory log is silently skipped"),
      C('logger.info(f"Peak memory: {torch.cuda.max_memory_allocated(device) / 2 ** 30:.1f} GiB")', "torch_cuda_api",
        "replace", False, 'logger.info(f"Peak memory: {torch.npu.max_memory_allocated(device) / 2 ** 30:.1f} GiB")',
        "only reached once the guard above is ported; then it must query the NPU allocator"),
  ])

E("fm_train_loop", "examples/image/training/train_loop.py", "explicit_replacement",
  "flow_matching examples/image/training train_loop.py (CondOT path, autocast, MAE NativeScaler)",
  [
      C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", False,
        "self._scaler = torch.npu.amp.GradScaler()",
        "disables itself with a warning when CUDA is absent; harmless while autocast is also off, but must move "
        "together with the autocast line below"),
      C("with torch.cuda.amp.autocast(dtype=args.amp_dtype):", "amp", "replace", False,
        "with torch.npu.amp.autocast(dtype=args.amp_dtype):",
        "CUDA autocast is disabled with a warning on an NPU host, so training runs in fp32: slower, not wrong"),
  ])

E("fm_distributed_mode", "examples/image/training/distributed_mode.py", "explicit_replacement",
  "flow_matching examples/image/training/distributed_mode.py (MAE/DeiT init_distributed_mode)",
  [
      C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "args.gpu = args.rank % torch.npu.device_count()", "SLURM path: device_count() is 0 -> ZeroDivisionError"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "CUDA set_device fails without CUDA"),
      C('args.dist_backend = "nccl"', "dist_backend", "replace", True, 'args.dist_backend = "hccl"',
        "HCCL is the Ascend collective backend"),
      C("x_reduce = torch.tensor(x).cuda()", "tensor_to_device", "replace", True, "x_reduce = torch.tensor(x).npu()",
        ".cuda() raises without CUDA"),
  ])

E("fm_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "Dockerfile for the flow_matching image examples on an NGC PyTorch base",
  [
      C("FROM nvcr.io/nvidia/pytorch:23.10-py3", "torch_cuda_api", "replace", True,
        "FROM ${ASCEND_BASE_IMAGE}  # CANN 8.1.RC1 + Python 3.10 base for Atlas A2",
        "the NGC image carries CUDA torch and no CANN/torch_npu"),
      C("RUN pip install --no-cache-dir --upgrade pip setuptools wheel", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install --no-cache-dir torch==2.1.0+cpu torchvision==0.16.0+cpu -f https://download.pytorch.org/whl/torch_stable.html && pip install --no-cache-dir torch-npu==2.1.0.post12",
        "torch no longer comes from the base image; install the CPU torch + matching torch-npu"),
      C("pynvml==11.5.0 \\", "torch_cuda_api", "removal", False, None, "NVML binding; nothing to query on Ascend"),
      C("ENV NCCL_DEBUG=WARN", "env_var", "replace", False, "ENV ASCEND_GLOBAL_LOG_LEVEL=2",
        "HCCL ignores NCCL_*; CANN log level as the nearest equivalent (mapping unconfirmed)"),
      C("ENV NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "ENV HCCL_ASYNC_ERROR_HANDLING=1",
        "torch_npu's watchdog reads HCCL_ASYNC_ERROR_HANDLING (default 1 per MindCluster docs)"),
      C("ENV PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", "replace", False,
        "ENV PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
        "allocator tuning only; the NPU allocator reads PYTORCH_NPU_ALLOC_CONF"),
      C('ENTRYPOINT ["torchrun", "--standalone", "--nproc_per_node=gpu", "train.py"]', "device_type", "replace", True,
        'ENTRYPOINT ["torchrun", "--standalone", "--nproc_per_node=8", "train.py"]',
        "torchrun's 'gpu' value counts CUDA devices and errors when CUDA is unavailable"),
  ])
