# Labels for probe277: accelerated MRI reconstruction / medical image synthesis (CUDA -> Ascend NPU).
# Format is the one bench/probe_build.py expects. One label per upstream line that a careful
# porter would edit; "required" is True only when the unchanged line fails on an Ascend host
# (torch + torch_npu, no CUDA), computes something wrong, or silently does the wrong thing.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# Reused notes
IMPORT_NOTE = ("entry script; the project pins torch < 2.5, so torch_npu is not autoloaded and must be "
               "imported before any npu device/API is used")
SEED_NOTE = ("torch.cuda seeding is a lazy no-op on an NPU host; torch.manual_seed on the line(s) above already "
             "seeds the registered accelerator generator (not confirmed in the knowledge notes) - replace for clarity")
FFTSHIFT_NOTE = ("torch.fft.fftshift/ifftshift on a complex tensor: Ascend's 2.7.1 API list and msFmkTransplt's "
                 "unsupported list mark fftshift/ifftshift as unsupported (x), while op-plugin 7.3.0 registers "
                 "fft_fftshift and torch.roll lists no complex dtypes; conflicting evidence, so unconfirmed - a porter "
                 "would swap to a roll/narrow-based shift on the real view (as fastmri.fftc does)")

# ----------------------------------------------------------------------------------------------
# fastMRI (facebookresearch/fastMRI)
# ----------------------------------------------------------------------------------------------

E("fm_varnet_demo", "fastmri_examples/varnet/train_varnet_demo.py", "explicit_replacement",
  "fastMRI train_varnet_demo.py (pytorch-lightning 2.x Trainer, accelerator/devices/strategy flags)",
  [
      C("=import pytorch_lightning as pl", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        IMPORT_NOTE + "; also needed for the NPU Lightning accelerator to find torch.npu"),
      C('parser.add_argument("--accelerator", default="gpu", type=str)', "device_type", "replace", True,
        'parser.add_argument("--accelerator", default="npu", type=str)  # NPUAccelerator registered in AcceleratorRegistry',
        "Lightning's 'gpu' accelerator is the CUDA accelerator; with no CUDA device the Trainer refuses to start. "
        "Lightning has no built-in Ascend accelerator, so a custom/registered NPU accelerator is needed"),
      C("strategy=args.strategy,", "dist_backend", "replace", False,
        'strategy=DDPStrategy(process_group_backend="hccl") if args.strategy == "ddp" else args.strategy,',
        "Lightning derives the process-group backend from the root device type (nccl for cuda, otherwise gloo); "
        "for NPU tensors it must be hccl. Unconfirmed in the knowledge notes (Lightning behaviour), hence not required"),
  ])

E("fm_unet_demo", "fastmri_examples/unet/train_unet_demo.py", "explicit_replacement",
  "fastMRI train_unet_demo.py (older pytorch-lightning 1.4 gpus=/accelerator='ddp' flags)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "num_gpus = torch.npu.device_count()",
        "returns 0 on an NPU host: backend becomes None, batch_size 0 and training silently runs on CPU"),
      C("gpus=num_gpus,  # number of gpus to use", "device_type", "replace", True,
        'devices=num_gpus, accelerator="npu",  # needs PL>=1.6 and a registered NPU accelerator',
        "gpus= selects CUDA devices in Lightning; there is no NPU meaning for it"),
      C("accelerator=backend,  # what distributed version to use", "dist_backend", "replace", False,
        'strategy=DDPStrategy(process_group_backend="hccl") if backend == "ddp" else None,',
        "old-style accelerator='ddp'; Lightning would pick nccl/gloo, NPU needs hccl. Lightning detail unconfirmed "
        "in the knowledge notes"),
  ])

E("fm_fftc", "fastmri/fftc.py", "device_branch_or_abstraction",
  "fastMRI fastmri/fftc.py (centered FFTs on real-view complex tensors, roll-based fftshift)",
  [
      # Deliberately no labels: everything is device-agnostic; the roll/narrow-based fftshift on the
      # real view is exactly what the complex fftshift calls elsewhere get ported to.
  ])

E("fm_mri_module", "fastmri/pl_modules/mri_module.py", "device_branch_or_abstraction",
  "fastMRI pl_modules/mri_module.py (MriModule base LightningModule, DistributedMetricSum)",
  [
      # Deliberately no labels: metric tensors follow self.device / mse_val.device; the docstring
      # mention of NCCL is a near-miss.
  ])

E("fm_run_pretrained", "fastmri_examples/varnet/run_pretrained_varnet_inference.py", "explicit_replacement",
  "fastMRI run_pretrained_varnet_inference.py (download state_dict, --device flag)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("model.load_state_dict(torch.load(state_dict_file))", "tensor_to_device", "replace", False,
        'model.load_state_dict(torch.load(state_dict_file, map_location="cpu"))',
        "fails only if the published leaderboard state_dict holds CUDA tensors (not known); map_location is "
        "the defensive fix"),
      C('default="cuda",', "device_type", "replace", True, 'default="npu",',
        "--device default is passed to torch.device() and .to(); cuda is not available on an NPU host"),
  ])

E("fm_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "fastMRI training image built on nvidia/cuda with CUDA 11.8 PyTorch wheels",
  [
      C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "import_torch_npu", "replace", True,
        "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
        "CUDA base image has no CANN toolkit/driver libs; torch_npu needs a CANN image (ENV from set_env.sh baked in)"),
      C("ENV CUDA_HOME=/usr/local/cuda", "custom_cuda_extension", "removal", False, None,
        "only used to build CUDA extensions; harmless but meaningless on Ascend"),
      C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6+PTX"', "custom_cuda_extension", "removal", False, None,
        "CUDA arch list for extension builds; no effect on Ascend"),
      C("RUN python -m pip install torch==2.1.2 torchvision==0.16.2 --index-url https://download.pytorch.org/whl/cu118",
        "import_torch_npu", "replace", True,
        "RUN python -m pip install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu && python -m pip install torch-npu==2.1.0.post17",
        "cu118 wheels are CUDA builds; torch_npu pairs with the CPU torch wheel of the same x.y.z (no torch_npu for 2.1.2)"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "NVIDIA container runtime variable; ignored on Ascend (Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES)"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container runtime variable; ignored on Ascend"),
      C("ENV NCCL_DEBUG=WARN", "env_var", "removal", False, None,
        "NCCL logging knob; no HCCL effect (Ascend logging is ASCEND_GLOBAL_LOG_LEVEL)"),
  ])

E("fm_slurm_sh", "fastmri_examples/varnet/submit_varnet_ddp.sh", "explicit_replacement",
  "fastMRI-style SLURM sbatch launcher for multi-node VarNet DDP training",
  [
      C("#SBATCH --gres=gpu:8", "device_type", "replace", False, "#SBATCH --gres=npu:8",
        "GRES name is site-specific; an Ascend partition usually defines an npu gres (unconfirmed)"),
      C("module load anaconda3/2022.05 cuda/11.8 cudnn/v8.6 nccl/2.15", "import_torch_npu", "replace", True,
        "module load anaconda3/2022.05 && source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CUDA/cuDNN/NCCL modules do not exist on the NPU cluster; CANN's set_env.sh must be sourced or "
        "import torch_npu fails (libhccl.so / ASCEND_OPP_PATH)"),
      C("export NCCL_DEBUG=INFO", "env_var", "removal", False, None,
        "NCCL logging only; no HCCL equivalent variable (use ASCEND_GLOBAL_LOG_LEVEL)"),
      C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
        "HCCL picks the root-info NIC by HCCL_IF_IP/HCCL_SOCKET_IFNAME, else first non-docker/lo NIC by name; "
        "needed only if that default is wrong on this cluster"),
      C("export NCCL_IB_HCA=mlx5", "env_var", "removal", False, None,
        "host InfiniBand HCA selection for NCCL; HCCL uses the NPUs' own RoCE ports"),
      C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
        "torch_npu watchdog equivalent (default 1 per MindCluster docs)"),
      C("--accelerator gpu \\", "device_type", "replace", True, "--accelerator npu \\",
        "overrides the script default; Lightning's gpu accelerator is CUDA-only"),
  ])

E("varnet_bench", "fastmri_examples/varnet/benchmark_varnet.py", "explicit_replacement",
  "E2E-VarNet inference latency/memory benchmark (CUDA events, NVTX, torch.profiler)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.nvtx.range_push(f\"cascade_{i}\")", "torch_cuda_api", "replace", True,
        'module._mstx_id = torch_npu.npu.mstx.range_start(f"cascade_{i}")',
        "torch.cuda.nvtx is not aliased by torch_npu and raises on a non-CUDA build; mstx is the NPU range API "
        "(exact mstx call shape unconfirmed)"),
      C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True,
        "torch_npu.npu.mstx.range_end(module._mstx_id)", "see range_push"),
      C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
      C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
      C('with torch.autocast("cuda", dtype=torch.float16, enabled=args.amp):', "amp", "replace", True,
        'with torch.autocast("npu", dtype=torch.float16, enabled=args.amp):',
        "cuda autocast is disabled with a warning on an NPU host, so --amp silently benchmarks fp32"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA; also needed for correct NPU event timing"),
      C("with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],", "torch_cuda_api", "replace", True,
        "with torch_npu.profiler.profile(activities=[torch_npu.profiler.ProfilerActivity.CPU, torch_npu.profiler.ProfilerActivity.NPU],",
        "torch.profiler with ProfilerActivity.CUDA records no device activity on NPU; the trace is silently CPU-only"),
      C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")',
        "hard-coded CUDA device"),
      C("if torch.cuda.get_device_capability(device)[0] < 8:", "device_capability_check", "removal", True, None,
        "SM-version check: torch.cuda.get_device_capability raises without CUDA (torch.npu's returns None); "
        "compute capability has no Ascend meaning"),
      C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", False,
        "model = torch.compile(model, backend=torchair.get_npu_backend())",
        "max-autotune relies on Triton templates/CUDA graphs; NPU graph mode is TorchAir or Inductor-on-NPU "
        "(torch_npu >= 2.6); behaviour with this project's torch 2.1 unconfirmed, opt-in flag"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op on an NPU host (CUDA never initialised); only affects the cached-memory baseline"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats()", "resolves the current CUDA device and raises without CUDA"),
      C("peak_mb = torch.cuda.max_memory_allocated() / 2 ** 20", "torch_cuda_api", "replace", True,
        "peak_mb = torch.npu.max_memory_allocated() / 2 ** 20",
        "returns 0 silently when CUDA is uninitialised - the benchmark's memory figure would be wrong"),
      C('"device": torch.cuda.get_device_name(device),', "torch_cuda_api", "replace", True,
        '"device": torch.npu.get_device_name(device),', "raises without CUDA / for an npu device"),
  ])

# ----------------------------------------------------------------------------------------------
# MoDL (PyTorch re-implementation)
# ----------------------------------------------------------------------------------------------

E("modl_train", "MoDL_PyTorch/train.py", "explicit_replacement",
  "MoDL PyTorch port train.py (YAML config, optional torchrun DDP, torch.cuda.amp)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "raises without CUDA"),
      C('dist.init_process_group(backend=dist_cfg.get("backend", "nccl"),', "dist_backend", "replace", False,
        'dist.init_process_group(backend=dist_cfg.get("backend", "hccl"),',
        "fallback default only - the shipped YAML sets distributed.backend (labelled there)"),
      C("mask = mask.float().cuda()", "tensor_to_device", "replace", True, "mask = mask.float().to(device)",
        "hard-coded .cuda() in the training loop"),
      C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=use_amp):",
        "config enables amp; CUDA autocast is disabled on an NPU host so the run is silently fp32"),
      C("mask = mask.cuda().float()", "tensor_to_device", "replace", True, "mask = mask.to(device).float()",
        "hard-coded .cuda() in validation"),
      C('device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
        'device = torch.device("npu", args.local_rank)', "torchrun path"),
      C("scaler = torch.cuda.amp.GradScaler(", "amp", "replace", True,
        'scaler = torch.npu.amp.GradScaler(enabled=config["train"].get("amp", False))',
        "a CUDA GradScaler disables itself without CUDA; with NPU autocast that means fp16 without loss scaling"),
      C("mem {torch.cuda.max_memory_allocated(device) / 2**30:.2f} GiB", "torch_cuda_api", "replace", False,
        'f"mem {torch.npu.max_memory_allocated(device) / 2**30:.2f} GiB")',
        "torch.cuda memory stats return an empty dict while CUDA is uninitialised, so the log shows 0 GiB; logging only"),
  ])

E("modl_model", "MoDL_PyTorch/models/modl.py", "explicit_replacement",
  "MoDL PyTorch port models/modl.py (CNN denoiser + CG data consistency on complex64)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "library module; only the __main__ shape test needs torch_npu when run standalone"),
      C("return torch.fft.fftshift(torch.fft.fft2(torch.fft.ifftshift(x, dim=(-2, -1)), norm=\"ortho\"), dim=(-2, -1))",
        "unsupported_op_workaround", "replace", False,
        "return torch.view_as_complex(fastmri.fft2c(torch.view_as_real(x)))", FFTSHIFT_NOTE),
      C("return torch.fft.fftshift(torch.fft.ifft2(torch.fft.ifftshift(x, dim=(-2, -1)), norm=\"ortho\"), dim=(-2, -1))",
        "unsupported_op_workaround", "replace", False,
        "return torch.view_as_complex(fastmri.ifft2c(torch.view_as_real(x)))", FFTSHIFT_NOTE),
      C("self.lam = nn.Parameter(torch.tensor(lam_init).cuda(), requires_grad=learn_lam)", "tensor_to_device",
        "replace", True, "self.lam = nn.Parameter(torch.tensor(lam_init), requires_grad=learn_lam)",
        "model construction calls .cuda(); the parameter follows model.to(device) anyway"),
      C("net = MoDL(n_layers=5, k_iters=2).cuda()", "tensor_to_device", "replace", True,
        "net = MoDL(n_layers=5, k_iters=2).npu()", "__main__ shape test"),
      C("csm = torch.randn(B, C, H, W, dtype=torch.complex64, device=\"cuda\")", "device_type", "replace", True,
        "csm = torch.randn(B, C, H, W, dtype=torch.complex64, device=\"npu\")", "__main__ shape test"),
      C("mask = (torch.rand(B, H, W, device=\"cuda\") > 0.75).float()", "device_type", "replace", True,
        "mask = (torch.rand(B, H, W, device=\"npu\") > 0.75).float()", "__main__ shape test"),
      C("k = torch.randn(B, C, H, W, dtype=torch.complex64, device=\"cuda\")", "device_type", "replace", True,
        "k = torch.randn(B, C, H, W, dtype=torch.complex64, device=\"npu\")", "__main__ shape test"),
  ])

E("modl_utils", "MoDL_PyTorch/utils.py", "device_branch_or_abstraction",
  "MoDL PyTorch port utils.py (seeding, device helper, metrics, checkpoints)",
  [
      # Ported by adding NPU branches next to the CUDA ones, so the lines inside the CUDA branches
      # (torch.device(f"cuda:{gpu_id}"), get_device_name, memory_allocated/reserved) stay as they are.
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "add_branch", False,
        'if hasattr(torch, "npu") and torch.npu.is_available(): torch.npu.manual_seed_all(seed)',
        SEED_NOTE),
      C("if gpu_id is not None and gpu_id >= 0 and torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        'elif gpu_id is not None and gpu_id >= 0 and torch.npu.is_available():  # device = torch.device(f"npu:{gpu_id}")',
        "without an NPU branch get_device() silently returns CPU on an NPU host"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "add_branch", False,
        'if hasattr(torch, "npu") and torch.npu.is_available(): return f"{torch.npu.memory_allocated(device) / 2 ** 20:.0f}/{torch.npu.memory_reserved(device) / 2 ** 20:.0f} MiB"',
        "log helper silently prints n/a on NPU; logging only"),
  ])

E("modl_config", "MoDL_PyTorch/configs/modl_brain.yaml", "explicit_replacement",
  "MoDL YAML training config (device, amp, torchrun backend)",
  [
      C("device: cuda:0", "device_type", "replace", True, "device: npu:0",
        "read by train.py as torch.device(config['device']) for single-device runs"),
      C("backend: nccl", "dist_backend", "replace", True, "backend: hccl",
        "passed to dist.init_process_group; NCCL does not exist on Ascend"),
  ])

# ----------------------------------------------------------------------------------------------
# ReconFormer
# ----------------------------------------------------------------------------------------------

E("reconformer_main", "ReconFormer/main_recon.py", "explicit_replacement",
  "ReconFormer main_recon.py (CUDA_VISIBLE_DEVICES from --gpu, nn.DataParallel, .cuda() everywhere)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
      C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", True,
        "if torch.npu.device_count() > 1:",
        "0 on an NPU host: --gpu 0,1,2,3 silently trains on one device"),
      C("print(f\"Let's use {torch.cuda.device_count()} GPUs!\")", "torch_cuda_api", "replace", False,
        "print(f\"Let's use {torch.npu.device_count()} NPUs!\")", "log message only"),
      C("net = nn.DataParallel(net)", "distributed_framework", "replace", True,
        "net = torch.nn.parallel.DistributedDataParallel(net.npu(), device_ids=[local_rank])  # launch with torchrun",
        "torch.nn.DataParallel is unsupported on Ascend (x in the 2.7.1 API list); multi-device needs DDP+HCCL"),
      C("net = net.cuda()", "tensor_to_device", "replace", True, "net = net.npu()", "hard-coded .cuda()"),
      C("und_img = und_img.cuda().float()", "tensor_to_device", "replace", True, "und_img = und_img.npu().float()",
        "training batch"),
      C("target = target.cuda().float()", "tensor_to_device", "replace", True, "target = target.npu().float()",
        "training batch"),
      C("und_kspace = und_kspace.cuda()", "tensor_to_device", "replace", True, "und_kspace = und_kspace.npu()",
        "training batch"),
      C("=mask = mask.cuda()", "tensor_to_device", "replace", True, "mask = mask.npu()", "training batch"),
      C("und_img, und_kspace, mask = und_img.cuda().float(), und_kspace.cuda(), mask.cuda()", "tensor_to_device",
        "replace", True, "und_img, und_kspace, mask = und_img.npu().float(), und_kspace.npu(), mask.npu()",
        "validation batch"),
      C("target = target.float().cuda()", "tensor_to_device", "replace", True, "target = target.float().npu()",
        "validation batch"),
      C("mean = mean.unsqueeze(1).unsqueeze(2).cuda()", "tensor_to_device", "replace", True,
        "mean = mean.unsqueeze(1).unsqueeze(2).npu()", "de-normalisation stats"),
      C("std = std.unsqueeze(1).unsqueeze(2).cuda()", "tensor_to_device", "replace", True,
        "std = std.unsqueeze(1).unsqueeze(2).npu()", "de-normalisation stats"),
      C("checkpoint = torch.load(checkpoint_file)", "tensor_to_device", "replace", True,
        'checkpoint = torch.load(checkpoint_file, map_location="cpu")',
        "checkpoints written by this script hold CUDA tensors; deserialising them without CUDA fails"),
      C("output = model(und_img.cuda().float(), und_kspace.cuda(), mask.cuda())", "tensor_to_device", "replace", True,
        "output = model(und_img.npu().float(), und_kspace.npu(), mask.npu())", "test path"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
        "ignored by the Ascend runtime, so --gpu no longer selects devices"),
  ])

E("reconformer_model", "ReconFormer/models/Recurrent_Transformer.py", "explicit_replacement",
  "ReconFormer models/Recurrent_Transformer.py (Swin window attention, k-space DC layer)",
  [
      C("mask = mask.type(torch.cuda.FloatTensor)", "torch_cuda_api", "replace", True,
        "mask = mask.to(device=k.device, dtype=k.dtype)",
        "torch.cuda.FloatTensor type cast raises without CUDA"),
  ])

# ----------------------------------------------------------------------------------------------
# score-MRI (Chung & Ye) on score_sde_pytorch
# ----------------------------------------------------------------------------------------------

E("scoremri_inference", "score-MRI/inference_real.py", "explicit_replacement",
  "score-MRI inference_real.py (PC sampler with k-space projection; device from ml_collections config)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
  ])

E("scoremri_mutils", "score-MRI/models/utils.py", "explicit_replacement",
  "score_sde_pytorch models/utils.py as vendored by score-MRI (create_model wraps in DataParallel)",
  [
      C("score_model = torch.nn.DataParallel(score_model)", "distributed_framework", "replace", True,
        "score_model = _PrefixWrapper(score_model)  # keeps the 'module.' key prefix; nn.DataParallel is unsupported on NPU",
        "DataParallel is unsupported on Ascend; dropping it outright changes state_dict keys and restore_checkpoint "
        "loads with strict=False, which would silently leave the score model at random init"),
  ])

E("scoremri_config", "score-MRI/configs/default_fastmri_configs.py", "explicit_replacement",
  "score-MRI / score_sde default ml_collections config (config.device)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "torch.npu is already registered by the entry script; only needed if the config is imported standalone"),
      C("config.device = torch.device('cuda:0') if torch.cuda.is_available() else torch.device('cpu')",
        "device_type", "replace", True,
        "config.device = torch.device('npu:0') if torch.npu.is_available() else torch.device('cpu')",
        "silently falls back to CPU on an NPU host (2000-step sampler on CPU)"),
  ])

E("scoremri_upfirdn", "score-MRI/op/upfirdn2d.py", "kernel_rewrite",
  "StyleGAN2 upfirdn2d op (cpp_extension JIT of a .cu kernel) as vendored in score_sde / score-MRI",
  [
      C("upfirdn2d_op = load(", "custom_cuda_extension", "replace", True,
        "upfirdn2d_op = None  # no nvcc on Ascend; upfirdn2d() always uses upfirdn2d_native",
        "JIT nvcc build at import time fails on an NPU host (no CUDA toolkit; cpp_extension.load is x on A2/A3)"),
      C("grad_input = upfirdn2d_op.upfirdn2d(", "custom_cuda_extension", "removal", False, None,
        "CUDA-op call site; unreachable once the dispatch below is flipped (some porters delete the Functions)"),
      C("gradgrad_out = upfirdn2d_op.upfirdn2d(", "custom_cuda_extension", "removal", False, None,
        "CUDA-op call site; unreachable once the dispatch below is flipped"),
      C("=out = upfirdn2d_op.upfirdn2d(", "custom_cuda_extension", "removal", False, None,
        "CUDA-op call site; unreachable once the dispatch below is flipped"),
      C('if input.device.type == "cpu":', "device_type", "replace", True, 'if input.device.type != "cuda":',
        "NPU tensors would take the CUDA-extension branch; route everything non-CUDA to the native path"),
      C("out = UpFirDn2d.apply(", "custom_cuda_extension", "removal", False, None,
        "extension autograd entry; dead code after the dispatch change"),
  ])

E("scoremri_fusedact", "score-MRI/op/fused_act.py", "kernel_rewrite",
  "StyleGAN2 fused_bias_act op (cpp_extension JIT of a .cu kernel) as vendored in score_sde / score-MRI",
  [
      C("fused = load(", "custom_cuda_extension", "replace", True,
        "fused = None  # no nvcc on Ascend; fused_leaky_relu() uses the F.leaky_relu path",
        "JIT nvcc build at import time fails on an NPU host"),
      C("grad_input = fused.fused_bias_act(", "custom_cuda_extension", "removal", False, None,
        "CUDA-op call site; unreachable once the dispatch is flipped"),
      C("gradgrad_out = fused.fused_bias_act(", "custom_cuda_extension", "removal", False, None,
        "CUDA-op call site; unreachable once the dispatch is flipped"),
      C("out = fused.fused_bias_act(input, bias, empty, 3, 0, negative_slope, scale)", "custom_cuda_extension",
        "removal", False, None, "CUDA-op call site; unreachable once the dispatch is flipped"),
      C('if input.device.type == "cpu":', "device_type", "replace", True, 'if input.device.type != "cuda":',
        "NPU tensors would take the CUDA-extension branch"),
      C("return FusedLeakyReLUFunction.apply(input, bias, negative_slope, scale)", "custom_cuda_extension",
        "removal", False, None, "extension autograd entry; dead code after the dispatch change"),
  ])

E("scoremri_utils", "score-MRI/utils.py", "explicit_replacement",
  "score-MRI utils.py (centered FFT helpers on complex tensors, get_mask, checkpoint restore)",
  [
      C("return torch.fft.fftshift(torch.fft.fft2(x), dim=[-1, -2])", "unsupported_op_workaround", "replace", False,
        "return torch.view_as_complex(fftshift_real(torch.view_as_real(torch.fft.fft2(x)), dim=[-3, -2]))",
        FFTSHIFT_NOTE),
      C("return torch.fft.ifft2(torch.fft.ifftshift(x, dim=[-1, -2]))", "unsupported_op_workaround", "replace", False,
        "return torch.fft.ifft2(torch.view_as_complex(ifftshift_real(torch.view_as_real(x), dim=[-3, -2])))",
        FFTSHIFT_NOTE),
      C("return torch.fft.fftshift(torch.fft.fft2(torch.view_as_complex(x)), dim=[-1, -2])",
        "unsupported_op_workaround", "replace", False,
        "return torch.view_as_complex(fftshift_real(torch.view_as_real(torch.fft.fft2(torch.view_as_complex(x))), dim=[-3, -2]))",
        FFTSHIFT_NOTE),
      C("return torch.fft.ifft2(torch.fft.ifftshift(torch.view_as_complex(x), dim=[-1, -2]))",
        "unsupported_op_workaround", "replace", False,
        "return torch.fft.ifft2(torch.view_as_complex(ifftshift_real(x, dim=[-3, -2])))", FFTSHIFT_NOTE),
      C("mask = torch.from_numpy(mat['mask'].astype(np.float32)).view(1, 1, size, size).cuda()", "tensor_to_device",
        "replace", True, "mask = torch.from_numpy(mat['mask'].astype(np.float32)).view(1, 1, size, size).to(img.device)",
        "from_file masks are moved with .cuda()"),
  ])

E("scoremri_run_sh", "score-MRI/run_inference.sh", "explicit_replacement",
  "score-MRI inference shell launcher",
  [
      C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment must be sourced before python imports torch_npu"),
      C("export CUDA_VISIBLE_DEVICES=$GPU", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=$GPU",
        "ignored on Ascend, so GPU= no longer pins the job to a card"),
  ])

E("scoremri_env", "score-MRI/environment.yml", "explicit_replacement",
  "score-MRI conda environment.yml (pytorch-cuda, cudatoolkit-dev for the JIT ops)",
  [
      C("=- nvidia", "import_torch_npu", "removal", False, None, "NVIDIA conda channel no longer needed"),
      C("=- pytorch=1.12.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0  # CPU build",
        "torch_npu has no 1.12 build; torch must match a torch_npu release (e.g. 2.1.0)"),
      C("=- torchvision=0.13.1", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
        "must follow the torch bump (0.13.1 pins torch 1.12.1)"),
      C("=- pytorch-cuda=11.6", "import_torch_npu", "removal", True, None,
        "CUDA runtime metapackage; pulls the CUDA build of pytorch"),
      C("- cudatoolkit-dev=11.6", "custom_cuda_extension", "removal", False, None,
        "nvcc only served the JIT op/ kernels, which the port replaces with native paths"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post17",
        "torch_npu pin matching torch 2.1.0"),
  ])

# ----------------------------------------------------------------------------------------------
# SynDiff (icon-lab/SynDiff)
# ----------------------------------------------------------------------------------------------

E("syndiff_train", "SynDiff/train.py", "explicit_replacement",
  "SynDiff train.py (hand-rolled multi-process DDP with Process/init_processes, nccl)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.manual_seed(args.seed + rank)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(args.seed + rank)", SEED_NOTE),
      C("torch.cuda.manual_seed_all(args.seed + rank)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(args.seed + rank)", SEED_NOTE),
      C("device = torch.device('cuda:{}'.format(gpu))", "device_type", "replace", True,
        "device = torch.device('npu:{}'.format(gpu))", "per-rank device"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op on an NPU host; end-of-epoch cache release only"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
      C("dist.init_process_group(backend='nccl', init_method='env://', rank=rank, world_size=size)", "dist_backend",
        "replace", True, "dist.init_process_group(backend='hccl', init_method='env://', rank=rank, world_size=size)",
        "NCCL backend does not exist on Ascend"),
  ])

E("syndiff_genresnet", "SynDiff/backbones/generator_resnet.py", "explicit_replacement",
  "SynDiff backbones/generator_resnet.py (pix2pix/CycleGAN networks.py init_net with gpu_ids)",
  [
      C("assert(torch.cuda.is_available())", "torch_cuda_api", "replace", True, "assert(torch.npu.is_available())",
        "train.py passes gpu_ids=[gpu], so this assertion fires on an NPU host"),
      C("net.to(gpu_ids[0])", "tensor_to_device", "replace", True, "net.to(f'npu:{gpu_ids[0]}')",
        "a bare int device index means a CUDA device"),
      C("net = torch.nn.DataParallel(net, gpu_ids)  # multi-GPUs", "distributed_framework", "removal", True, None,
        "nn.DataParallel is unsupported on Ascend; train.py wraps these nets in DDP anyway"),
  ])

E("syndiff_test", "SynDiff/test.py", "transfer_to_npu",
  "SynDiff test.py (single-GPU sampling + PSNR/SSIM), ported with torch_npu.contrib.transfer_to_npu",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu; from torch_npu.contrib import transfer_to_npu",
        "the shim redirects torch.cuda.*, .cuda(), 'cuda:N' device strings and map_location in this script; "
        "no other line needs editing"),
  ])

E("syndiff_reqs", "SynDiff/requirements.txt", "explicit_replacement",
  "SynDiff requirements.txt (+cu113 wheels from torch_stable.html)",
  [
      C("=torch==1.10.1+cu113", "import_torch_npu", "replace", True, "torch==2.1.0",
        "CUDA 11.3 local-version wheel; torch_npu needs the matching CPU/aarch64 torch"),
      C("=torchvision==0.11.2+cu113", "import_torch_npu", "replace", True, "torchvision==0.16.0",
        "CUDA wheel; must follow the torch bump"),
      C("=numpy>=1.21", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
        "torch_npu pin matching torch 2.1.0"),
  ])

# ----------------------------------------------------------------------------------------------
# SynthSeg-style synthesis in PyTorch
# ----------------------------------------------------------------------------------------------

E("synthseg_gen", "synthseg_torch/generation/brain_generator.py", "explicit_replacement",
  "SynthSeg-style on-GPU label-to-image brain generator (GMM, SVF deformation, bias field, resolution)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "library module; only the __main__ timing block needs torch_npu when run standalone"),
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
        "silent CPU fallback when no device is passed"),
      C("lab = torch.from_numpy(lab).cuda()", "tensor_to_device", "replace", True,
        "lab = torch.from_numpy(lab).to(self.device)", "label cache placed with .cuda()"),
      C("means = torch.cuda.FloatTensor(B, n).uniform_(*self.prior_means)", "torch_cuda_api", "replace", True,
        "means = torch.empty(B, n, device=labels.device).uniform_(*self.prior_means)",
        "legacy torch.cuda.FloatTensor constructor raises without CUDA"),
      C("stds = torch.cuda.FloatTensor(B, n).uniform_(*self.prior_stds)", "torch_cuda_api", "replace", True,
        "stds = torch.empty(B, n, device=labels.device).uniform_(*self.prior_stds)",
        "legacy torch.cuda.FloatTensor constructor raises without CUDA"),
      C("torch.cuda.synchronize(gen.device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(gen.device)",
        "__main__ timing"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "__main__ timing"),
  ])

E("synthseg_train", "synthseg_torch/train_segmenter.py", "explicit_replacement",
  "SynthSeg-style 3D U-Net training on synthetic brains (autocast fp16, optional apex FusedAdam)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", False,
        "from torch_npu.optim import NpuFusedAdam as FusedAdam",
        "guarded import: NVIDIA apex is absent on NPU so --fused_adam silently falls back to torch.optim.Adam; "
        "NpuFusedAdam is the performance replacement"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "raises without CUDA"),
      C('device = torch.device("cuda", args.gpu)', "device_type", "replace", True,
        'device = torch.device("npu", args.gpu)', "hard-coded CUDA device"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
        "CUDA scaler disables itself on an NPU host: fp16 autocast without loss scaling"),
      C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats(device)",
        "no is_initialized guard: the cuda device-index check rejects an npu device (ValueError)"),
      C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.amp):', "amp", "replace", True,
        'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=args.amp):',
        "cuda autocast is disabled on an NPU host; --amp silently trains fp32"),
      C("peak = torch.cuda.max_memory_allocated(device) / 2 ** 30", "torch_cuda_api", "replace", False,
        "peak = torch.npu.max_memory_allocated(device) / 2 ** 30",
        "returns 0 while CUDA is uninitialised (the stats lookup short-circuits before the device check); log only"),
  ])

# ----------------------------------------------------------------------------------------------
# Other pipelines
# ----------------------------------------------------------------------------------------------

E("espirit_maps", "mri_recon_tools/scripts/estimate_sens_maps.py", "device_branch_or_abstraction",
  "ESPIRiT sensitivity-map precompute with SigPy/CuPy for fastMRI multi-coil data",
  [
      C("if gpu >= 0 and cp is not None:", "unsupported_op_workaround", "replace", False,
        "if gpu >= 0 and cp is not None and cp.cuda.runtime.getDeviceCount() > 0:",
        "CuPy has no Ascend backend: normally absent, so SigPy falls back to CPU by itself; if a CUDA CuPy wheel is "
        "left in the env, sp.Device(gpu) fails - guard it (unconfirmed which case a given host hits)"),
      C('dev = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "add_branch", False,
        'dev = "cuda" if torch.cuda.is_available() else ("npu" if torch.npu.is_available() else "cpu")',
        "sanity image only; silently on CPU, performance only"),
  ])

E("medddpm_trainer", "med-ddpm/diffusion_model/trainer.py", "explicit_replacement",
  "Med-DDPM diffusion_model/trainer.py (3D conditional DDPM, apex amp O1, .cuda() batches)",
  [
      C("input_tensors = data['input'].cuda()", "tensor_to_device", "replace", True,
        "input_tensors = data['input'].npu()", "conditioning mask batch"),
      C("target_tensors = data['target'].cuda()", "tensor_to_device", "replace", True,
        "target_tensors = data['target'].npu()", "target volume batch"),
      C("data = next(self.dl).cuda()", "tensor_to_device", "replace", True, "data = next(self.dl).npu()",
        "unconditional batch"),
      C("data = torch.load(milestone)", "tensor_to_device", "replace", True,
        "data = torch.load(milestone, map_location='cpu')",
        "default path of load(); checkpoints saved by save() hold CUDA tensors"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op on an NPU host after sampling"),
  ])

E("monai_ldm_train", "brain_ldm/train_ldm.py", "transfer_to_npu",
  "MONAI GenerativeModels 3D latent diffusion brain-MRI training (torchrun DDP, torch.cuda.amp, xformers flag)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu; from torch_npu.contrib import transfer_to_npu",
        "must precede 'from torch.cuda.amp import ...' so the patched NPU amp is imported; the shim covers the "
        "cuda device strings, set_device, nccl backend string and memory stats in this file"),
      C('t = torch.tensor([value], device=device if dist.get_backend() == "nccl" else "cpu")', "dist_backend",
        "replace", True,
        't = torch.tensor([value], device=device if dist.get_backend() in ("nccl", "hccl") else "cpu")',
        "backend-string comparisons are not rewritten by transfer_to_npu; get_backend() is 'hccl', so the tensor "
        "goes to CPU and the HCCL all_reduce rejects it"),
      C("use_flash_attention=not args.no_flash,", "attention_kernel", "replace", True,
        "use_flash_attention=False,  # xformers has no NPU backend",
        "generative's DiffusionModelUNet needs xformers for use_flash_attention=True and raises without it; "
        "xformers cannot be installed for NPU"),
  ])
