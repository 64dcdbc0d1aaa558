# Labels for probe241: precipitation nowcasting / weather-radar spatio-temporal forecasting (CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter edits.
# Conventions (see README "How the labels were chosen"):
#   * required=True  -> the unchanged line raises, computes something wrong, or silently does the wrong thing on an
#                       NPU host, judged with the rest of the port already done.
#   * required=False -> performance-only, silent no-op, optional path that already degrades cleanly, or unconfirmed.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# --------------------------------------------------------------------------------------------------------------------
# Earthformer (amazon-science/earthformer style)
# --------------------------------------------------------------------------------------------------------------------
E("ef_train_sevir", "scripts/cuboid_transformer/sevir/train_cuboid_sevir.py", "explicit_replacement",
  "Earthformer train_cuboid_sevir.py (PyTorch Lightning Trainer, DDPStrategy, --gpus)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401  registers the 'npu' device",
      "Entry script; the project pins torch < 2.5 era where torch_npu is not auto-loaded."),
    C("return max(torch.cuda.device_count(), 1)", "torch_cuda_api", "replace", True,
      "return max(torch.npu.device_count(), 1)",
      "torch.cuda.device_count() is 0 on an NPU host: --gpus silently defaults to 1 device and the "
      "gradient-accumulation factor is computed for the wrong world size."),
    C("strategy = ApexDDPStrategy(find_unused_parameters=False, delay_allreduce=True)", "distributed_framework",
      "replace", False,
      "strategy = DDPStrategy(find_unused_parameters=False, process_group_backend=\"hccl\")",
      "apex DDP has no NPU build; only reached with trainer.use_apex_ddp=True (default False), "
      "so it is an opt-in path that fails loudly with ImportError."),
    C("strategy = DDPStrategy(find_unused_parameters=False)", "dist_backend", "replace", True,
      "strategy = DDPStrategy(find_unused_parameters=False, process_group_backend=\"hccl\")",
      "Lightning picks the process-group backend from the root device: 'nccl' for cuda, otherwise 'gloo'; "
      "on an npu root device it would fall back to gloo, which cannot all-reduce NPU tensors."),
    C("accelerator=\"gpu\",", "device_type", "replace", True,
      "accelerator=NPUAccelerator(),  # custom lightning Accelerator wrapping torch.npu",
      "Lightning has no built-in Ascend accelerator (Lightning-AI PR #19308 was closed); accelerator='gpu' "
      "raises MisconfigurationException when no CUDA device is present."),
    C("precision=self.oc.trainer.precision,", "amp", "replace", False,
      "precision=self.oc.trainer.precision, plugins=[NativeMixedPrecisionPlugin(16, \"npu\", "
      "scaler=torch.npu.amp.GradScaler())] if self.oc.trainer.precision == 16 else [],",
      "Unconfirmed: Lightning 1.6 builds its native AMP plugin for device 'cuda' unless the accelerator is "
      "CPU, so precision=16 with a custom NPU accelerator would run CUDA autocast (disabled). Default cfg is 32."),
])

E("ef_cuboid_transformer", "src/earthformer/cuboid_transformer/cuboid_transformer.py", "explicit_replacement",
  "Earthformer cuboid_transformer.py (cuboid self-attention, apex FusedLayerNorm fallback)", [
    C("from apex.normalization import FusedLayerNorm as _FusedLayerNorm", "custom_cuda_extension", "removal", False,
      None,
      "NVIDIA apex's fused_layer_norm_cuda has no NPU build (Ascend apex is a pure-Python patch); the "
      "try/except already falls back to nn.LayerNorm, so dropping the import only removes a dead path."),
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", True,
      "with torch.autocast(device_type=\"npu\", enabled=False):",
      "fp32 island: a CUDA autocast(enabled=False) does not switch off NPU autocast, so under mixed precision "
      "the q@k^T score, relative bias and -1e18 masked softmax would run in fp16 and overflow."),
])

E("ef_sevir_datamodule", "src/earthformer/datasets/sevir/sevir_torch_wrap.py", "explicit_replacement",
  "Earthformer sevir_torch_wrap.py (SEVIR LightningDataModule)", [
    C("self.pin_memory = torch.cuda.is_available()", "pin_memory", "replace", False,
      "self.pin_memory = torch.npu.is_available()",
      "Evaluates False on an NPU host, so batches are simply not pinned: slower H2D copies, results unchanged."),
])

E("ef_apex_ddp", "src/earthformer/utils/apex_ddp.py", "explicit_replacement",
  "Earthformer utils/apex_ddp.py (Lightning strategy around apex.parallel.DistributedDataParallel)", [
    C("from apex.parallel import DistributedDataParallel as ApexDistributedDataParallel", "distributed_framework",
      "replace", False,
      "from torch.nn.parallel import DistributedDataParallel as ApexDistributedDataParallel",
      "Guarded import; strategy is opt-in (use_apex_ddp). On NPU use torch DDP over HCCL instead."),
    C("return ApexDistributedDataParallel(module=model, delay_allreduce=self.delay_allreduce)",
      "distributed_framework", "replace", False,
      "return ApexDistributedDataParallel(module=model, device_ids=[self.root_device.index])",
      "torch DDP has no delay_allreduce; only reached on the opt-in apex path."),
])

E("ef_slurm", "scripts/cuboid_transformer/sevir/train_sevir_slurm.sbatch", "explicit_replacement",
  "Earthformer-style SLURM sbatch launcher (2 nodes x 4 GPUs, NCCL over InfiniBand)", [
    C("#SBATCH --gres=gpu:4", "device_type", "replace", False,
      "#SBATCH --gres=npu:4",
      "Unconfirmed: the GRES name depends on the Ascend cluster's gres.conf; a cluster without a 'gpu' GRES "
      "rejects the job."),
    C("module load cuda/11.7 cudnn/8.5.0-cuda11", "env_var", "replace", True,
      SET_ENV,
      "CANN's set_env.sh must be sourced (LD_LIBRARY_PATH/ASCEND_* for libascendcl/libhccl); the CUDA modules "
      "do not exist on the NPU cluster."),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=3",
      "NCCL_* variables are ignored by HCCL (silent no-op)."),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=ib0",
      "HCCL reads HCCL_SOCKET_IFNAME for the root-info host NIC; unchanged, HCCL picks a NIC by its own "
      "priority (usually still reachable)."),
    C("export NCCL_IB_HCA=mlx5_0,mlx5_1", "env_var", "removal", False, None,
      "No HCCL equivalent: NPU-to-NPU traffic uses the NPUs' own RoCE ports, not the host mlx5 HCAs."),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False,
      "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu watchdog variable (default already 1)."),
    C("nvidia-smi --query-gpu=index,name,memory.total --format=csv", "device_type", "replace", True,
      "npu-smi info",
      "nvidia-smi is absent on Ascend hosts and the script runs under set -euo pipefail, so the job exits."),
])

E("ef_env_yml", "environment.yml", "explicit_replacement",
  "Earthformer-style conda environment.yml (pytorch + pytorch-cuda, apex from git)", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None,
      "NVIDIA conda channel only serves CUDA packages; harmless once pytorch-cuda is gone."),
    C("- pytorch=1.12.1", "torch_cuda_api", "replace", True,
      "- pytorch=2.1.0",
      "No torch_npu release pairs with torch 1.12; torch_npu 2.1.0.postN needs exactly torch 2.1.0 (CPU build)."),
    C("- torchvision=0.13.1", "torch_cuda_api", "replace", True,
      "- torchvision=0.16.0",
      "Must move with torch 2.1.0; the 0.13.1 build pins torch 1.12."),
    C("- pytorch-cuda=11.6", "torch_cuda_api", "removal", True, None,
      "Selects the CUDA variant of pytorch; torch_npu runs on the CPU build of torch."),
    C("- cudatoolkit-dev=11.6", "torch_cuda_api", "removal", False, None,
      "nvcc toolchain for the apex build; dead weight on an NPU host (unconfirmed whether it even solves on aarch64)."),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True,
      "      - torch-npu==2.1.0.post10",
      "torch_npu pin matching torch 2.1.0 (CANN 8.0.0 line in the compatibility table)."),
    C("- nvidia-ml-py3", "torch_cuda_api", "removal", False, None,
      "NVML bindings are useless on Ascend (no NPU backend); installs fine, so not required."),
    C("- git+https://github.com/NVIDIA/apex.git@22.04-dev#egg=apex", "custom_cuda_extension", "removal", False,
      None,
      "Only feeds the optional FusedLayerNorm / apex DDP paths, which fall back cleanly; a Python-only pip build "
      "of apex still installs."),
])

# --------------------------------------------------------------------------------------------------------------------
# DGMR PyTorch port (skillful_nowcasting style, plain training loop)
# --------------------------------------------------------------------------------------------------------------------
E("dgmr_train", "train_dgmr.py", "explicit_replacement",
  "DGMR PyTorch port training loop (two GradScalers, torchrun/NCCL, .cuda())", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401",
      "Entry script (torch 2.0/2.1 era, no torch_npu autoload)."),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)",
      "Raises without CUDA; every rank would otherwise sit on NPU 0."),
    C("dist.init_process_group(backend=dist_cfg.get(\"backend\", \"nccl\"), init_method=\"env://\",", "dist_backend",
      "replace", False,
      "dist.init_process_group(backend=dist_cfg.get(\"backend\", \"hccl\"), init_method=\"env://\",",
      "Fallback default only; the shipped YAML sets dist.backend (labelled there)."),
    C("args.device = torch.device(\"cuda\", args.local_rank)", "device_type", "replace", True,
      "args.device = torch.device(\"npu\", args.local_rank)",
      "Models are moved to args.device; a cuda device raises on an NPU host."),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "CUDA seeding is a lazy no-op without CUDA; torch.manual_seed on the previous line already seeds the "
      "registered privateuse1 (npu) generator in torch >= 2.1 (from torch source, not in the knowledge notes)."),
    C("gen_scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
      "gen_scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "A CUDA GradScaler disables itself without CUDA; with NPU autocast active the fp16 generator grads "
      "would be unscaled and underflow."),
    C("disc_scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
      "disc_scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "Same as the generator scaler."),
    C("ckpt = torch.load(args.resume, map_location=f\"cuda:{args.local_rank}\")", "tensor_to_device", "replace",
      True,
      "ckpt = torch.load(args.resume, map_location=f\"npu:{args.local_rank}\")",
      "map_location to a cuda device fails on an NPU host."),
    C("images = images.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "images = images.to(args.device, non_blocking=True)",
      "Tensor.cuda() raises without CUDA."),
    C("future_images = future_images.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "future_images = future_images.to(args.device, non_blocking=True)",
      "Tensor.cuda() raises without CUDA."),
    C("=with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=args.amp):",
      "Unchanged, CUDA autocast disables itself: the discriminator step silently runs in fp32 (slower, "
      "more memory, numerically fine)."),
    C("with torch.cuda.amp.autocast(enabled=args.amp):  # 6 samples", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=args.amp):  # 6 samples -> biggest activation footprint",
      "Same: generator step silently in fp32."),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "Raises without CUDA (per-step timing)."),
    C("mem_gb = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      "mem_gb = torch.npu.max_memory_allocated() / 1024 ** 3",
      "Returns 0 when CUDA is not initialised; only the log line is wrong."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "Silent no-op without CUDA; the NPU caching allocator is simply not trimmed."),
])

E("dgmr_cfg", "configs/dgmr_radar_uk.yaml", "explicit_replacement",
  "DGMR training YAML config (model/data/train/dist sections)", [
    C("backend: nccl", "dist_backend", "replace", True,
      "backend: hccl",
      "Read by train_dgmr.py setup_distributed; NCCL is not available on Ascend."),
])

E("dgmr_discriminators", "dgmr/discriminators.py", "explicit_replacement",
  "DGMR spatial / temporal discriminators (spectral norm, PixelUnshuffle, 3D DBlocks)", [
    C("self.pooling = nn.AvgPool3d(kernel_size=2, stride=2)", "unsupported_op_workaround", "replace", False,
      "self.pooling = AvgPool3dAsMean(kernel_size=2)  # reshape + mean instead of nn.AvgPool3d",
      "Unconfirmed: Ascend's 2.7.1 API table marks nn.AvgPool3d as unsupported on A2/A3, but op-plugin lists an "
      "avg_pool3d kernel; at worst it falls back to CPU (performance)."),
    C("idxs = torch.randint(low=0, high=x.size(1), size=(self.num_timesteps,)).cuda()", "tensor_to_device",
      "replace", True,
      "idxs = torch.randint(low=0, high=x.size(1), size=(self.num_timesteps,), device=x.device)",
      "Hard-coded .cuda() raises on an NPU host."),
    C("self.downsample = nn.AvgPool3d(kernel_size=(1, 2, 2))", "unsupported_op_workaround", "replace", False,
      "self.downsample = nn.AvgPool2d(kernel_size=2)  # applied per frame with time folded into batch",
      "Same nn.AvgPool3d concern; with a temporal kernel of 1 it is a per-frame 2D pooling (forward must fold T)."),
])

E("dgmr_generators", "dgmr/generators.py", "explicit_replacement",
  "DGMR generator (context/latent conditioning stacks, ConvGRU sampler)", [
    C("z = torch.cuda.FloatTensor(batch_size, *self.shape).normal_()", "torch_cuda_api", "replace", True,
      "z = torch.randn(batch_size, *self.shape, device=x.device)",
      "The legacy torch.cuda.FloatTensor constructor raises without CUDA."),
])

E("dgmr_losses", "dgmr/losses.py", "explicit_replacement",
  "DGMR losses (hinge, grid-cell regulariser with custom_fwd, SSIM, balanced MSE/MAE)", [
    C("from torch.cuda.amp import custom_fwd", "amp", "replace", True,
      "from torch_npu.npu.amp import custom_fwd",
      "torch.cuda.amp.custom_fwd only checks the CUDA autocast state, so under NPU autocast cast_inputs=float32 "
      "is skipped and the regulariser runs in fp16."),
])

E("dgmr_evaluate", "evaluate_dgmr.py", "explicit_replacement",
  "DGMR evaluation script (ensemble CSI/CRPS, CUDA-event timing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401", "Entry script."),
    C("DEFAULT_DEVICE = \"cuda\" if torch.cuda.is_available() else \"cpu\"", "device_type", "replace", True,
      "DEFAULT_DEVICE = \"npu\" if torch.npu.is_available() else \"cpu\"",
      "Silently evaluates on CPU on an NPU host."),
    C("with torch.cuda.amp.autocast(enabled=fp16, dtype=torch.float16):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=fp16, dtype=torch.float16):",
      "Inference autocast: unchanged it disables itself and --fp16 silently runs fp32 (performance only)."),
    C("print(f\"running on {device} ({torch.cuda.get_device_name(device)}), fp16={args.fp16}\")", "torch_cuda_api",
      "replace", True,
      "print(f\"running on {device} ({torch.npu.get_device_name(device)}), fp16={args.fp16}\")",
      "Raises without CUDA (or for an npu device)."),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_evt = torch.npu.Event(enable_timing=True)", "CUDA events cannot record on an NPU host."),
    C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_evt = torch.npu.Event(enable_timing=True)", "CUDA events cannot record on an NPU host."),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(device)", "Raises without CUDA."),
])

E("dgmr_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "DGMR training image (nvidia/cuda devel base, cu118 wheels, apex with --cuda_ext)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "env_var", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "Base image must carry CANN (driver libs are mounted from the host); a CUDA image has no Ascend runtime."),
    C("ARG TORCH_VERSION=2.0.1", "torch_cuda_api", "replace", False,
      "ARG TORCH_VERSION=2.1.0",
      "torch_npu 2.0.1 exists only as an EOL release (CANN 7.0.0); 2.1.0 is the oldest maintained pairing."),
    C("NVIDIA_VISIBLE_DEVICES=all \\", "env_var", "removal", False, None,
      "Read only by the NVIDIA container runtime; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES / --device."),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility \\", "env_var", "removal", False, None,
      "NVIDIA container runtime only."),
    C("TORCH_CUDA_ARCH_LIST=\"7.0;8.0;8.6+PTX\"", "env_var", "removal", False, None,
      "Only consumed by nvcc extension builds."),
    C("RUN pip install torch==${TORCH_VERSION} torchvision==0.15.2 --index-url https://download.pytorch.org/whl/cu118",
      "torch_cuda_api", "replace", True,
      "RUN pip install torch==${TORCH_VERSION} torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu "
      "&& pip install torch-npu==${TORCH_VERSION}.post10",
      "cu118 wheels are CUDA builds (x86 only); torch_npu needs the CPU build of the same torch version."),
    C("RUN git clone https://github.com/NVIDIA/apex /opt/apex && cd /opt/apex && git checkout 23.05 \\",
      "custom_cuda_extension", "removal", True, None,
      "NVIDIA apex with --cuda_ext needs nvcc and fails to build in a CANN image; nothing in DGMR needs apex."),
    C("--config-settings \"--build-option=--cuda_ext\" .", "custom_cuda_extension", "removal", True, None,
      "Second half of the apex RUN (the CUDA extension build)."),
    C("CMD [\"python\", \"-c\", \"import torch; print(torch.__version__, torch.cuda.is_available(), "
      "torch.cuda.device_count())\"]", "torch_cuda_api", "replace", False,
      "CMD [\"python\", \"-c\", \"import torch, torch_npu; print(torch.__version__, torch.npu.is_available(), "
      "torch.npu.device_count())\"]",
      "Sanity print only; prints False/0 on NPU."),
])

E("dgmr_requirements", "requirements.txt", "explicit_replacement",
  "DGMR requirements.txt (cu118 extra index, +cu118 local versions, nvidia-ml-py)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "With the cu118 index a bare torch==2.1.0 pin can still resolve to the +cu118 build."),
    C("torch==2.0.1+cu118", "torch_cuda_api", "replace", True,
      "torch==2.1.0",
      "CUDA local version; torch_npu needs the CPU build of a supported torch."),
    C("torchvision==0.15.2+cu118", "torch_cuda_api", "replace", True,
      "torchvision==0.16.0", "CUDA build, and must match torch 2.1.0."),
    C("numpy>=1.23,<1.27", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post10",
      "torch_npu pin (inserted right after the torch block)."),
    C("nvidia-ml-py>=11.525", "torch_cuda_api", "removal", False, None,
      "NVML has no Ascend backend; the package installs fine, its callers are ported separately."),
])

# --------------------------------------------------------------------------------------------------------------------
# NowcastNet (thuml/NowcastNet style)
# --------------------------------------------------------------------------------------------------------------------
E("ncn_run", "run.py", "explicit_replacement",
  "NowcastNet run.py (argparse --gpu/--device, CUDA_VISIBLE_DEVICES)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401", "Entry script."),
    C("parser.add_argument('--device', type=str, default='cuda:0')", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, default='npu:0')",
      "Default device string is used for .to(configs.device) in the model factory."),
    C("os.environ[\"CUDA_VISIBLE_DEVICES\"] = args.gpu", "env_var", "replace", True,
      "os.environ[\"ASCEND_RT_VISIBLE_DEVICES\"] = args.gpu",
      "Ignored by the Ascend runtime: --gpu would silently not select the card."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "Guard for seeding only; torch.manual_seed already seeds the npu generator."),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed)", "Redundant with torch.manual_seed (see guard)."),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available():",
      "Unchanged, always true on an NPU host: the run silently falls back to CPU."),
    C("print('>>> device: {} | visible GPUs: {}'.format(args.device, torch.cuda.device_count()))", "torch_cuda_api",
      "replace", False,
      "print('>>> device: {} | visible NPUs: {}'.format(args.device, torch.npu.device_count()))",
      "Log line only (prints 0)."),
])

E("ncn_test_sh", "mrms_case_test.sh", "explicit_replacement",
  "NowcastNet mrms_case_test.sh launcher", [
    C("GPU_ID=${1:-0}", "env_var", "npu_only_addition", True,
      SET_ENV, "CANN environment must be sourced before python starts."),
    C("export CUDA_VISIBLE_DEVICES=${GPU_ID}", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU_ID}",
      "Redundant once run.py is ported: run.py sets ASCEND_RT_VISIBLE_DEVICES from --gpu itself."),
    C("--device cuda:0 \\", "device_type", "replace", True,
      "--device npu:0 \\", "Explicit cuda device overrides the ported default."),
])

E("ncn_model_factory", "nowcasting/models/model_factory.py", "explicit_replacement",
  "NowcastNet model_factory.py (Model wrapper, checkpoint load)", [
    C("stats = torch.load(checkpoint_path)", "tensor_to_device", "replace", True,
      "stats = torch.load(checkpoint_path, map_location=self.configs.device)",
      "The released checkpoints hold CUDA tensors; without map_location torch.load fails on a host without CUDA."),
])

E("ncn_nowcastnet", "nowcasting/models/nowcastnet.py", "explicit_replacement",
  "NowcastNet nowcastnet.py (evolution + generative network, .cuda() in forward)", [
    C("last_frames = warp(last_frames, motion_[:, i], grid.cuda(), mode=\"nearest\", padding_mode=\"border\")",
      "tensor_to_device", "replace", True,
      "last_frames = warp(last_frames, motion_[:, i], grid.to(frames.device), mode=\"nearest\", padding_mode=\"border\")",
      "Tensor.cuda() raises without CUDA."),
    C("noise = torch.randn(batch, self.configs.ngf, height // 32, width // 32).cuda()", "tensor_to_device",
      "replace", True,
      "noise = torch.randn(batch, self.configs.ngf, height // 32, width // 32, device=frames.device)",
      "Tensor.cuda() raises without CUDA."),
])

E("ncn_layers_utils", "nowcasting/layers/utils.py", "explicit_replacement",
  "NowcastNet layers/utils.py (make_grid, grid_sample warp, spectral-norm SPADE blocks)", [])

E("ncn_sl_setup", "nowcasting/ops/semi_lagrangian/setup.py", "kernel_rewrite",
  "nvcc-built semi-Lagrangian advection extension (CUDAExtension setup.py)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace",
      True,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "CUDAExtension needs CUDA_HOME/nvcc; the NPU build goes through torch_npu's NpuExtension."),
    C("CUDAExtension(", "custom_cuda_extension", "replace", True,
      "NpuExtension(",
      "Build fails without nvcc on an NPU host."),
    C("os.path.join(this_dir, \"src\", \"sl_advect_kernel.cu\"),", "custom_cuda_extension", "replace", True,
      "os.path.join(this_dir, \"src\", \"sl_advect_kernel_ascendc.cpp\"),",
      "The .cu kernel must be rewritten (Ascend C / OpPlugin), it cannot be compiled for NPU."),
    C("extra_compile_args={\"cxx\": [\"-O3\", \"-std=c++17\"], \"nvcc\": nvcc_flags},", "custom_cuda_extension",
      "replace", False,
      "extra_compile_args={\"cxx\": [\"-O3\", \"-std=c++17\"]},",
      "nvcc flags are meaningless for NpuExtension (unconfirmed whether they are ignored or rejected)."),
])

E("ncn_sl_advect", "nowcasting/ops/semi_lagrangian/sl_advect.py", "kernel_rewrite",
  "Python wrapper of the semi-Lagrangian extension with a grid_sample fallback", [
    C("if use_ext and _HAS_EXT and field.is_cuda:", "custom_cuda_extension", "replace", False,
      "if use_ext and _HAS_EXT and field.is_npu:",
      "Without the change the rewritten NPU kernel is never dispatched; the grid_sample fallback is "
      "numerically equivalent, so this is performance only."),
])

# --------------------------------------------------------------------------------------------------------------------
# OpenSTL / SimVP (chengtan9907/OpenSTL style)
# --------------------------------------------------------------------------------------------------------------------
E("ostl_train", "tools/train.py", "explicit_replacement",
  "OpenSTL tools/train.py entry point", [
    C("warnings.filterwarnings('ignore')", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401",
      "Entry script imports no torch itself; torch_npu must be loaded before BaseExperiment touches the device."),
])

E("ostl_dist_sh", "tools/dist_train.sh", "explicit_replacement",
  "OpenSTL tools/dist_train.sh (torch.distributed.launch)", [
    C("GPU_IDS=${GPU_IDS:-\"0,1,2,3,4,5,6,7\"}", "env_var", "npu_only_addition", True,
      SET_ENV, "CANN environment must be sourced before launching."),
    C("CUDA_VISIBLE_DEVICES=$GPU_IDS \\", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$GPU_IDS \\",
      "Ignored by the Ascend runtime: GPU_IDS subsets would silently not be honoured."),
])

E("ostl_main_utils", "openstl/utils/main_utils.py", "explicit_replacement",
  "OpenSTL utils/main_utils.py (collect_env, init_dist, init_random_seed, measure_throughput)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "torch.manual_seed above already seeds the npu generator; the CUDA call is a lazy no-op."),
    C("cuda_available = torch.cuda.is_available()", "torch_cuda_api", "add_branch", False,
      "npu_available = torch.npu.is_available(); env_info['NPU available'] = npu_available",
      "Environment report only: unchanged it prints 'CUDA available: False' and lists no devices."),
    C("starter, ender = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)",
      "torch_cuda_api", "replace", True,
      "starter, ender = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)",
      "--fps throughput measurement raises without CUDA."),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "Raises without CUDA."),
    C("def init_dist(launcher: str, backend: str = 'nccl', **kwargs) -> None:", "dist_backend", "replace", False,
      "def init_dist(launcher: str, backend: str = 'hccl', **kwargs) -> None:",
      "Default only; the caller in api/exp.py passes backend explicitly (labelled there)."),
    C("=num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()",
      "0 on an NPU host -> ZeroDivisionError in rank % num_gpus."),
    C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(rank % num_gpus)", "Raises without CUDA."),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)", "MPI launcher path; raises without CUDA."),
    C("num_gpus = torch.cuda.device_count()  # GPUs per node", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()  # NPUs per node", "SLURM launcher path; 0 -> ZeroDivisionError."),
    C("torch.cuda.set_device(proc_id % num_gpus)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(proc_id % num_gpus)", "SLURM launcher path; raises without CUDA."),
    C("def init_random_seed(seed=None, device='cuda'):", "device_type", "replace", True,
      "def init_random_seed(seed=None, device='npu'):",
      "Called with the default device in distributed runs; torch.tensor(..., device='cuda') raises and an HCCL "
      "broadcast needs an NPU tensor."),
])

E("ostl_exp", "openstl/api/exp.py", "explicit_replacement",
  "OpenSTL api/exp.py BaseExperiment (_acquire_device, DDP setup, checkpoint load)", [
    C("device = f'cuda:{self._rank}'", "device_type", "replace", True,
      "device = f'npu:{self._rank}'", "Device string used for the model and batches."),
    C("torch.cuda.set_device(self._rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(self._rank)", "Raises without CUDA."),
    C("device = torch.device('cuda:0')", "device_type", "replace", True,
      "device = torch.device('npu:0')", "Non-distributed default device."),
    C("dist_params = dict(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
      "dist_params = dict(backend='hccl', init_method='env://')", "NCCL is unavailable on Ascend."),
    C("self.method.model.cuda()", "tensor_to_device", "replace", True,
      "self.method.model.npu()", "Module.cuda() raises without CUDA."),
    C("checkpoint = torch.load(filename)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(filename, map_location='cpu')",
      "Resumed checkpoints keep optimizer state on the saving device; a GPU-made checkpoint cannot be "
      "deserialised without CUDA."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", "Silent no-op without CUDA (--empty_cache option)."),
    C("state_dict = torch.load(best_model_path)", "tensor_to_device", "replace", True,
      "state_dict = torch.load(best_model_path, map_location=self.device)",
      "--test typically evaluates a checkpoint trained on GPUs, whose tensors are CUDA tensors."),
])

E("ostl_base_method", "openstl/methods/base_method.py", "explicit_replacement",
  "OpenSTL methods/base_method.py (AMP via timm NativeScaler, DDP wrap, forward collect)", [
    C("self.amp_autocast = torch.cuda.amp.autocast", "amp", "replace", False,
      "self.amp_autocast = torch.npu.amp.autocast",
      "Unchanged, CUDA autocast disables itself: --fp16 silently trains in fp32."),
    C("self.loss_scaler = NativeScaler()", "amp", "replace", True,
      "self.loss_scaler = NativeScaler(device='npu')",
      "timm < 1.0 NativeScaler hard-codes torch.cuda.amp.GradScaler (timm >= 1.0 takes device=); a disabled CUDA "
      "scaler under NPU autocast leaves fp16 gradients unscaled."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", "Silent no-op without CUDA."),
])

E("ostl_simvp", "openstl/methods/simvp.py", "explicit_replacement",
  "OpenSTL methods/simvp.py (SimVP train_one_epoch)", [
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "Called every iteration; raises without CUDA."),
])

E("ostl_optim", "openstl/core/optim_scheduler.py", "explicit_replacement",
  "OpenSTL core/optim_scheduler.py (timm-style optimizer factory with apex fused options)", [
    C("from apex.optimizers import FusedNovoGrad, FusedAdam, FusedLAMB, FusedSGD", "fused_optimizer", "replace",
      False,
      "from torch_npu.optim import NpuFusedAdam as FusedAdam, NpuFusedAdamW as FusedAdamW, "
      "NpuFusedLamb as FusedLAMB, NpuFusedSGD as FusedSGD",
      "Guarded import of an opt-in performance path; default configs use adam/adamw."),
    C("assert has_apex and torch.cuda.is_available(), 'APEX and CUDA required for fused optimizers'",
      "fused_optimizer", "replace", False,
      "assert has_apex and torch.npu.is_available(), 'torch_npu fused optimizers require an NPU'",
      "Opt-in 'fused*' optimizers refuse loudly on NPU; porting makes them usable (performance)."),
    C("optimizer = FusedAdam(parameters, adam_w_mode=False, **opt_args)", "fused_optimizer", "replace", False,
      "optimizer = FusedAdam(parameters, **opt_args)",
      "NpuFusedAdam has no adam_w_mode argument."),
    C("optimizer = FusedAdam(parameters, adam_w_mode=True, **opt_args)", "fused_optimizer", "replace", False,
      "optimizer = FusedAdamW(parameters, **opt_args)",
      "Decoupled weight decay is a separate class on NPU (NpuFusedAdamW)."),
    C("optimizer = FusedNovoGrad(parameters, **opt_args)", "fused_optimizer", "replace", False,
      "optimizer = NvNovoGrad(parameters, **opt_args)",
      "No NPU fused NovoGrad; timm's pure-PyTorch NvNovoGrad is the fallback."),
])

E("ostl_data_utils", "openstl/datasets/utils.py", "explicit_replacement",
  "OpenSTL datasets/utils.py (create_loader, timm-style CUDA-stream PrefetchLoader)", [
    C("self.mean = torch.tensor(mean).cuda().view(normalization_shape)", "tensor_to_device", "replace", True,
      "self.mean = torch.tensor(mean).npu().view(normalization_shape)", "--use_prefetcher path; raises without CUDA."),
    C("self.std = torch.tensor(std).cuda().view(normalization_shape)", "tensor_to_device", "replace", True,
      "self.std = torch.tensor(std).npu().view(normalization_shape)", "--use_prefetcher path; raises without CUDA."),
    C("stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True,
      "stream = torch.npu.Stream()", "Side stream for the async copy; raises without CUDA."),
    C("with torch.cuda.stream(stream):", "torch_cuda_api", "replace", True,
      "with torch.npu.stream(stream):", "Raises without CUDA."),
    C("next_input = next_input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "next_input = next_input.npu(non_blocking=True)", "Raises without CUDA."),
    C("next_target = next_target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "next_target = next_target.npu(non_blocking=True)", "Raises without CUDA."),
    C("torch.cuda.current_stream().wait_stream(stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(stream)",
      "Must wait on the NPU stream, otherwise the next batch may be read before its copy finished."),
])

E("ostl_metrics", "openstl/core/metrics.py", "explicit_replacement",
  "OpenSTL core/metrics.py (MSE/MAE/SSIM/CSI, LPIPS wrapper)", [
    C("self.use_gpu = use_gpu and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "self.use_gpu = use_gpu and torch.npu.is_available()",
      "Once the network is moved with the raw use_gpu flag (next lines, ported to .npu()), a False here keeps "
      "the inputs on CPU -> device-mismatch error."),
    C("self.loss_fn.cuda()", "tensor_to_device", "replace", True,
      "self.loss_fn.npu()", "metric(..., 'lpips') builds LPIPS(use_gpu=True); Module.cuda() raises without CUDA."),
    C("img1, img2 = img1.cuda(), img2.cuda()", "tensor_to_device", "replace", True,
      "img1, img2 = img1.npu(), img2.npu()", "Raises without CUDA."),
])

E("ostl_benchmark", "tools/benchmark_infer.py", "explicit_replacement",
  "OpenSTL-style inference benchmark (NVML power, capability-based AMP dtype, torch.compile, profiler)", [
    C("import pynvml", "torch_cuda_api", "removal", True, None,
      "NVML has no Ascend backend (use npu-smi / torch.npu.utilization)."),
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401", "Entry script."),
    C("from torch.profiler import profile, schedule, tensorboard_trace_handler, ProfilerActivity", "torch_cuda_api",
      "replace", True,
      "from torch_npu.profiler import profile, schedule, tensorboard_trace_handler, ProfilerActivity",
      "torch.profiler does not collect NPU kernels; Ascend's API table marks torch.profiler.ProfilerActivity as "
      "unsupported and maps it to torch_npu.profiler."),
    C("pynvml.nvmlInit()", "torch_cuda_api", "replace", True,
      "self.index = index",
      "nvmlInit raises NVMLError_LibraryNotFound on an Ascend host."),
    C("self.handle = pynvml.nvmlDeviceGetHandleByIndex(index)", "torch_cuda_api", "removal", True, None,
      "NVML device handle has no NPU counterpart."),
    C("self.samples.append(pynvml.nvmlDeviceGetPowerUsage(self.handle) / 1000.0)", "torch_cuda_api", "replace",
      True,
      "self.samples.append(read_npu_power_watts(self.index))  # parses `npu-smi info -t power -i N`",
      "Board power must come from npu-smi."),
    C("pynvml.nvmlShutdown()", "torch_cuda_api", "removal", True, None, "NVML teardown."),
    C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
      "major = 8 if torch.npu.is_bf16_supported() else 7",
      "get_device_capability raises without CUDA; the NPU form returns None unless TORCH_NPU_DEVICE_CAPABILITY is "
      "set, so use is_bf16_supported to pick bf16."),
    C("with torch.autocast(\"cuda\", dtype=amp_dtype, enabled=args.amp):  # warm-up", "amp", "replace", False,
      "with torch.autocast(\"npu\", dtype=amp_dtype, enabled=args.amp):  # warm-up / autotune",
      "CUDA autocast disables itself on an NPU host (fp32 warm-up)."),
    C("torch.cuda.synchronize()  # drain warm-up work", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # drain warm-up work", "Raises without CUDA."),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "Resolves the current CUDA device and raises without CUDA."),
    C("=with torch.autocast(\"cuda\", dtype=amp_dtype, enabled=args.amp):", "amp", "replace", False,
      "with torch.autocast(\"npu\", dtype=amp_dtype, enabled=args.amp):",
      "Timed loop silently measures fp32 instead of AMP (performance numbers only)."),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "Raises without CUDA; also needed for correct wall-clock timing."),
    C("\"peak_mem_mb\": torch.cuda.max_memory_allocated() / 2 ** 20,", "torch_cuda_api", "replace", True,
      "\"peak_mem_mb\": torch.npu.max_memory_allocated() / 2 ** 20,",
      "Returns 0 without CUDA: the benchmark's own output would be wrong."),
    C("activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA]", "torch_cuda_api", "replace", True,
      "activities = [ProfilerActivity.CPU, ProfilerActivity.NPU]",
      "CUDA activity records no device kernels on an NPU host."),
    C("with torch.no_grad(), torch.autocast(\"cuda\", dtype=amp_dtype, enabled=args.amp):", "amp", "replace", False,
      "with torch.no_grad(), torch.autocast(\"npu\", dtype=amp_dtype, enabled=args.amp):",
      "Profiled region silently fp32."),
    C("print(prof.key_averages().table(sort_by=\"cuda_time_total\", row_limit=25))", "torch_cuda_api", "replace",
      True,
      "print(f\"Ascend profiling data written to {args.profile_dir} (open with MindStudio Insight)\")",
      "_KinetoProfile.key_averages is on msFmkTransplt's unsupported list and cuda_time_total is not an NPU column."),
    C("device = torch.device(f\"cuda:{args.gpu}\")", "device_type", "replace", True,
      "device = torch.device(f\"npu:{args.gpu}\")", "Benchmark device."),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(device)", "Raises without CUDA."),
    C("model = torch.compile(model, mode=\"max-autotune\")", "compile_mode", "replace", False,
      "model = torch.compile(model, backend=\"npugraphs\")",
      "Unconfirmed: max-autotune relies on Triton autotuning that is not available on NPU without triton-ascend; "
      "Ascend documents backend='npugraphs' as the cudagraphs counterpart. Opt-in via --compile."),
    C("props = torch.cuda.get_device_properties(device)", "torch_cuda_api", "replace", True,
      "props = torch.npu.get_device_properties(device)",
      "Raises without CUDA; the NPU form provides name and total_memory, which is all that is used."),
])

E("diffcast_attention", "diffcast/models/modules/attention.py", "explicit_replacement",
  "Latent residual-diffusion nowcasting attention (LDM/SD2-style xformers, SDPA, fp32 attention, checkpoint)", [
    C("ctx.gpu_autocast_kwargs = {\"enabled\": torch.is_autocast_enabled(),", "amp", "replace", True,
      "ctx.gpu_autocast_kwargs = {\"enabled\": torch.npu.is_autocast_enabled(),",
      "torch.is_autocast_enabled() reports the CUDA autocast state in torch 2.1, so the recomputation in "
      "backward would run without autocast while the forward ran in fp16 on NPU."),
    C("\"dtype\": torch.get_autocast_gpu_dtype(),", "amp", "replace", False,
      "\"dtype\": torch.npu.get_autocast_dtype(),",
      "Both defaults are fp16; only matters when bf16 autocast is used."),
    C("with torch.enable_grad(), torch.cuda.amp.autocast(**ctx.gpu_autocast_kwargs):", "amp", "replace", True,
      "with torch.enable_grad(), torch.npu.amp.autocast(**ctx.gpu_autocast_kwargs):",
      "Re-entering CUDA autocast in backward does not re-enable NPU autocast: recomputed activations differ "
      "in dtype from the forward pass."),
    C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):",
      "attention_kernel", "replace", False,
      "with contextlib.nullcontext():  # SDPA dispatches to the NPU flash-attention kernel by itself",
      "torch.backends.cuda.sdp_kernel is marked unsupported on Ascend (API table and msFmkTransplt list); "
      "unconfirmed whether it errors or is ignored. Opt-in path (DIFFCAST_SDPA=1)."),
    C("with torch.autocast(enabled=False, device_type='cuda'):", "amp", "replace", True,
      "with torch.autocast(enabled=False, device_type='npu'):",
      "fp32 island for q@k^T (ATTN_PRECISION=fp32 default): a CUDA autocast context does not switch off NPU "
      "autocast, so the einsum would run in fp16 and can overflow."),
    C("attn_mode = \"softmax-xformers\" if XFORMERS_IS_AVAILBLE else \"softmax\"", "attention_kernel", "replace",
      False,
      "attn_mode = \"softmax-xformers\" if XFORMERS_IS_AVAILBLE else (\"softmax-sdpa\" if is_npu else \"softmax\")",
      "xformers cannot be installed on NPU, so the vanilla einsum attention is used (correct, slower, more "
      "memory); routing to SDPA / npu_fusion_attention is a performance port."),
])
