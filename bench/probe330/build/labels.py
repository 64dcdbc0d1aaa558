"""Labels for probe330: global weather / climate foundation models (CUDA -> Ascend NPU).

One C(...) per line a careful porter would edit. `sub` must hit exactly one line of the upstream
file ("=text" = the stripped line equals text). See ../README.md for the labelling policy.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ----------------------------------------------------------------------------------------------
# FourCastNet (NVlabs/FourCastNet) style
# ----------------------------------------------------------------------------------------------

E("fcn_train", "train.py", "explicit_replacement",
  "FourCastNet train.py (AFNO Trainer, apex FusedAdam, torch.cuda.amp, NCCL env:// init)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "entry script; the port references torch_npu.optim and the project's torch (NGC 22.02 era) predates "
        "torch_npu autoload (2.5.1), so the import is mandatory"),
      C("import torch.cuda.amp as amp", "amp", "replace", True,
        "import torch_npu.npu.amp as amp",
        "amp.GradScaler()/amp.autocast() bound to CUDA disable themselves on an NPU host (CPU-only torch build): "
        "--enable_amp would silently train in fp32 without loss scaling"),
      C("from apex import optimizers", "fused_optimizer", "replace", True,
        "from torch_npu.optim import NpuFusedAdam",
        "NVIDIA apex FusedAdam needs its CUDA kernels; Ascend apex has no FusedAdam (knowledge §6), "
        "torch_npu.optim.NpuFusedAdam is the counterpart"),
      C("self.device = torch.cuda.current_device() if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
        "self.device = torch.device('npu', torch.npu.current_device()) if torch.npu.is_available() else 'cpu'",
        "torch.cuda.is_available() is False on the NPU host, so the whole trainer would silently run on CPU; "
        "use a torch.device (not a bare int) so later .to(self.device) calls do not depend on int-ordinal semantics"),
      C("self.optimizer = optimizers.FusedAdam(self.model.parameters(), lr = params.lr)", "fused_optimizer", "replace", True,
        "self.optimizer = NpuFusedAdam(self.model.parameters(), lr = params.lr)",
        "call site of the apex CUDA fused optimizer (optimizer_type: FusedAdam is the default in the AFNO configs)"),
      C("logging.info('Peak GPU memory: {:.2f} GB'.format(torch.cuda.max_memory_allocated() / 1024**3))",
        "torch_cuda_api", "replace", False,
        "logging.info('Peak NPU memory: {:.2f} GB'.format(torch.npu.max_memory_allocated() / 1024**3))",
        "diagnostics only: on a CPU-only torch build the CUDA allocator was never initialised and this reports 0"),
      C("checkpoint = torch.load(model_path, map_location='cuda:{}'.format(self.params.local_rank))", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(model_path, map_location='npu:{}'.format(self.params.local_rank))",
        "map_location 'cuda:N' cannot be honoured without CUDA (precip fine-tuning loads the wind backbone here)"),
      C("checkpoint = torch.load(checkpoint_path, map_location='cuda:{}'.format(self.params.local_rank))", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(checkpoint_path, map_location='npu:{}'.format(self.params.local_rank))",
        "resume / pretrained restore would fail deserialising onto a CUDA device"),
      C("dist.init_process_group(backend='nccl',", "dist_backend", "replace", True,
        "dist.init_process_group(backend='hccl',",
        "NCCL is not available with torch_npu; HCCL is the collective backend"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(local_rank)",
        "torch.cuda.set_device raises 'Torch not compiled with CUDA enabled' on the NPU host; runs unconditionally"),
  ])

E("fcn_afno", "networks/afnonet.py", "explicit_replacement",
  "FourCastNet networks/afnonet.py (AFNO2D spectral mixer with torch.fft.rfft2/irfft2)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "the module's __main__ smoke test moves the model to the NPU; needs torch_npu loaded (pre-2.5.1 torch)"),
      C("model = AFNONet(params, img_size=(720, 1440), patch_size=(4,4), in_chans=3, out_chans=10).cuda()",
        "tensor_to_device", "replace", True,
        "model = AFNONet(params, img_size=(720, 1440), patch_size=(4,4), in_chans=3, out_chans=10).npu()",
        ".cuda() raises on a CPU-only torch build"),
      C("sample = torch.randn(1, 3, 720, 1440).cuda()", "tensor_to_device", "replace", True,
        "sample = torch.randn(1, 3, 720, 1440).npu()",
        ".cuda() raises on a CPU-only torch build"),
  ])

E("fcn_dataloader", "utils/data_loader_multifiles.py", "explicit_replacement",
  "FourCastNet utils/data_loader_multifiles.py (h5py ERA5 dataset, DistributedSampler)",
  [
      C("pin_memory=torch.cuda.is_available())", "pin_memory", "replace", False,
        "pin_memory=torch.npu.is_available())",
        "evaluates False on the NPU host, so host->NPU copies are never pinned; performance only"),
  ])

E("fcn_inference", "inference/inference.py", "explicit_replacement",
  "FourCastNet inference/inference.py (autoregressive rollout, latitude-weighted ACC/RMSE)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "entry script that now calls torch.npu.*; torch_npu must be imported on the project's torch version"),
      C("checkpoint = torch.load(checkpoint_fname)", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(checkpoint_fname, map_location='cpu')",
        "the training script saves GPU-resident state dicts; without map_location torch.load tries to restore "
        "them onto CUDA and fails on the NPU host"),
      C("=device = torch.cuda.current_device() if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
        "device = torch.device('npu', torch.npu.current_device()) if torch.npu.is_available() else 'cpu'",
        "silently falls back to CPU on the NPU host"),
      C("else 'cpu'  # same device as setup()", "device_type", "replace", True,
        "device = torch.device('npu', torch.npu.current_device()) if torch.npu.is_available() else 'cpu'  # same device as setup()",
        "second copy of the device choice inside autoregressive_inference; must agree with setup()"),
      C("torch.cuda.set_device(0)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(0)",
        "raises on a CPU-only torch build"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "silent no-op on the NPU host (CUDA never initialised); port to release cached NPU blocks between ICs"),
  ])

E("fcn_submit", "submit_batch.sh", "explicit_replacement",
  "FourCastNet submit_batch.sh (Perlmutter SLURM + shifter launcher)",
  [
      C("#SBATCH --gpus-per-node=4", "device_type", "replace", False,
        "#SBATCH --gres=npu:4",
        "unconfirmed: NPU GRES naming is site-specific (knowledge found no Slurm/Ascend integration)"),
      C("#SBATCH --image=nersc/pytorch:ngc-22.02-v0", "import_torch_npu", "replace", True,
        "#SBATCH --image=<site>/ascend-pytorch:cann8.0.0-torch2.1.0-torchnpu2.1.0",
        "the NGC CUDA PyTorch image has no CANN / torch_npu; the job needs an Ascend PyTorch image"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
        "ignored on NPU; here it lists every device so the rank->device mapping still works"),
      C("export NCCL_NET_GDR_LEVEL=PHB", "env_var", "removal", False, None,
        "NCCL-only tuning knob, no HCCL equivalent; ignored"),
      C("export NCCL_SOCKET_IFNAME=hsn", "env_var", "replace", False,
        "export HCCL_SOCKET_IFNAME=hsn",
        "HCCL picks the host NIC for root-info exchange from HCCL_SOCKET_IFNAME (knowledge: ascend-distributed §1)"),
      C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None,
        "NCCL logging switch; no effect under HCCL"),
      C("export MASTER_PORT=29500", "env_var", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment must be sourced before torch_npu can load libhccl/ACL; exported vars are inherited by srun"),
  ])

E("fcn_metrics", "utils/weighted_acc_rmse.py", "device_branch_or_abstraction",
  "FourCastNet utils/weighted_acc_rmse.py (TorchScript latitude-weighted metrics)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "the __main__ self-check now queries torch.npu; needs torch_npu loaded on the project's torch version"),
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
        "self-check silently runs on CPU instead of exercising the scripted metrics on the accelerator"),
  ])

# ----------------------------------------------------------------------------------------------
# Pangu-Weather / FengWu PyTorch re-implementations
# ----------------------------------------------------------------------------------------------

E("pangu_model", "models/pangu_weather.py", "explicit_replacement",
  "Pangu-Weather PyTorch re-implementation (3D earth-specific transformer, torch.roll shifted windows)",
  [
      C("with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=True, enable_mem_efficient=True):",
        "attention_kernel", "replace", False,
        "with contextlib.nullcontext():  # torch.backends.cuda.sdp_kernel is not supported on NPU",
        "listed unsupported (✘) in Ascend's 2.7.1 API table and in msFmkTransplt's list; most likely just sets "
        "CUDA SDPA flags that the NPU SDPA path ignores — unconfirmed whether it errors"),
  ])

E("pangu_ort", "inference_gpu.py", "explicit_replacement",
  "Pangu-Weather official ONNX Runtime inference script (CUDAExecutionProvider)",
  [
      C('providers=[("CUDAExecutionProvider", cuda_provider_options), "CPUExecutionProvider"],', "device_type", "replace", False,
        'providers=[("CANNExecutionProvider", {"device_id": device_id, "arena_extend_strategy": "kSameAsRequested"}), "CPUExecutionProvider"],',
        "without a CUDA EP onnxruntime falls back to CPU (very slow); the CANN EP of onnxruntime is not covered by "
        "the knowledge base — unconfirmed"),
      C('if active[0] != "CUDAExecutionProvider":', "device_type", "replace", False,
        'if active[0] != "CANNExecutionProvider":',
        "warning check must follow the provider change, otherwise it always warns"),
  ])

E("pangu_train", "train_pangu_ddp.py", "explicit_replacement",
  "Pangu-Weather re-implementation DDP trainer (torchrun, bf16 autocast, fused AdamW, torch.compile)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "entry script on torch 2.0.1 (pinned in requirements.txt): torch_npu must be imported explicitly"),
      C('p.add_argument("--dist_backend", type=str, default="nccl")', "dist_backend", "replace", True,
        'p.add_argument("--dist_backend", type=str, default="hccl")',
        "default backend string flows straight into init_process_group"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(local_rank)",
        "raises on a CPU-only torch build"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)",
        "silent no-op on the NPU host; torch.manual_seed above should already seed the registered NPU generator "
        "(unconfirmed)"),
      C('device = torch.device(f"cuda:{local_rank}")', "device_type", "replace", True,
        'device = torch.device(f"npu:{local_rank}")',
        "every tensor and the model are placed on this device"),
      C("torch.cuda.get_device_name(device)", "torch_cuda_api", "replace", True,
        'logger.info("world size %d, device %s (%s)", world_size, device, torch.npu.get_device_name(device))',
        "rank-0 log line; torch.cuda.get_device_name raises without CUDA"),
      C("amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16", "device_capability_check", "replace", True,
        "amp_dtype = torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
        "returns False on the NPU host, silently switching --amp to fp16 on bf16-capable Atlas A2"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=(args.amp and amp_dtype == torch.float16))", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=(args.amp and amp_dtype == torch.float16))",
        "the CUDA GradScaler disables itself without CUDA; fp16 runs would lose loss scaling"),
      C('ckpt = torch.load(args.resume, map_location=f"cuda:{local_rank}")', "tensor_to_device", "replace", True,
        'ckpt = torch.load(args.resume, map_location=f"npu:{local_rank}")',
        "cannot map onto a CUDA device on the NPU host"),
      C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", False,
        "model = torch.compile(model)",
        "opt-in flag; max-autotune relies on Triton GEMM templates and CUDA graphs, while torch_npu disables "
        "Triton for Inductor (knowledge §2.6); NPU Inductor support depends on torch_npu>=2.6 — unconfirmed"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats()",
        "called every epoch; needs the CUDA allocator bindings and raises on a CPU-only torch build"),
      C('with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=args.amp):', "amp", "replace", True,
        'with torch.autocast(device_type="npu", dtype=amp_dtype, enabled=args.amp):',
        "CUDA autocast is disabled (with a warning) on the NPU host, so --amp silently trains in fp32"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()",
        "step timing; raises without CUDA"),
      C("torch.cuda.max_memory_allocated(device) / 2**30)", "torch_cuda_api", "replace", False,
        "torch.npu.max_memory_allocated(device) / 2**30)",
        "log value only; the uninitialised CUDA allocator reports 0"),
      C('with torch.autocast("cuda", dtype=amp_dtype, enabled=args.amp):', "amp", "replace", True,
        'with torch.autocast("npu", dtype=amp_dtype, enabled=args.amp):',
        "validation forward; same silent AMP disable as in training"),
  ])

E("fengwu_model", "models/fengwu/transformer.py", "explicit_replacement",
  "FengWu-style multi-modal transformer using xformers memory_efficient_attention",
  [
      C("import xformers.ops as xops", "attention_kernel", "replace", True,
        "import torch_npu",
        "xformers has no NPU backend and cannot be installed for Ascend (knowledge §6); its kernel is replaced by "
        "torch_npu.npu_fusion_attention"),
      C("x = xops.memory_efficient_attention(", "attention_kernel", "replace", True,
        "x = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, \"BSND\", atten_mask=attn_bias, scale=self.scale, keep_prob=1.0 - (self.attn_drop if self.training else 0.0))[0]",
        "q/k/v are already (B, N, H, D) = BSND, the layout npu_fusion_attention accepts directly"),
      C("model = FengWu(levels=37, embed_dim=256, fuser_depth=2).cuda().half()", "tensor_to_device", "replace", True,
        "model = FengWu(levels=37, embed_dim=256, fuser_depth=2).npu().half()",
        ".cuda() raises on a CPU-only torch build"),
      C('x = torch.randn(1, 5 * 37 + 4, 128, 256, device="cuda", dtype=torch.half)', "tensor_to_device", "replace", True,
        'x = torch.randn(1, 5 * 37 + 4, 128, 256, device="npu", dtype=torch.half)',
        "factory call on a CUDA device fails on the NPU host"),
      C('print(mu.shape, lv.shape, torch.cuda.max_memory_allocated() / 2**20, "MiB")', "torch_cuda_api", "replace", False,
        'print(mu.shape, lv.shape, torch.npu.max_memory_allocated() / 2**20, "MiB")',
        "prints 0 on the NPU host; diagnostics only"),
  ])

E("pangu_requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt of a Pangu/FengWu re-implementation (cu118 wheels, xformers, onnxruntime-gpu, NVML)",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "torch_npu pairs with the CPU torch wheel (whl/cpu on x86, plain PyPI on aarch64); the cu118 index serves "
        "CUDA builds"),
      C("torch==2.0.1+cu118", "import_torch_npu", "replace", True,
        "torch==2.0.1",
        "+cu118 local build does not exist on the CPU index / for aarch64"),
      C("torchvision==0.15.2+cu118", "import_torch_npu", "replace", True,
        "torchvision==0.15.2",
        "same CUDA local-version pin"),
      C("xformers==0.0.20", "attention_kernel", "removal", True, None,
        "no NPU build of xformers; the model code moves to npu_fusion_attention"),
      C("einops>=0.6.1", "import_torch_npu", "npu_only_addition", True,
        "torch-npu==2.0.1.post1",
        "torch_npu wheel matching torch 2.0.1 (v2.0.1-5.0.0, CANN 7.0.0 in the compatibility matrix)"),
      C("onnxruntime-gpu==1.15.1", "device_type", "replace", False,
        "onnxruntime-cann==1.15.1",
        "CUDA build of onnxruntime is useless on the NPU host; CANN EP package naming not covered by the knowledge "
        "base — unconfirmed"),
      C("nvidia-ml-py3==7.352.0", "torch_cuda_api", "removal", False, None,
        "NVML bindings have no NPU counterpart (use npu-smi / torch.npu.utilization); installs fine but useless"),
  ])

E("pangu_launch", "scripts/train_pangu.sh", "explicit_replacement",
  "torchrun launcher for the Pangu re-implementation (NCCL InfiniBand tuning, nvidia-smi)",
  [
      C("set -euo pipefail", "env_var", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment is needed before torch_npu can load; source it with 'set +u' around it because the "
        "script runs with nounset"),
      C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
        "a user-supplied device subset would be silently ignored on NPU"),
      C('NGPUS=$(echo "${CUDA_VISIBLE_DEVICES}" | tr', "env_var", "replace", True,
        'NGPUS=$(echo "${ASCEND_RT_VISIBLE_DEVICES}" | tr \',\' \'\\n\' | wc -l)',
        "process count is derived from the visible-device variable; must read the renamed one"),
      C("export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3", "env_var", "removal", False, None,
        "HCCL uses the NPU-side RoCE ports configured with hccn_tool; no equivalent"),
      C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False,
        "export HCCL_SOCKET_IFNAME=eth0",
        "host NIC selection for HCCL root-info exchange"),
      C("export NCCL_IB_GID_INDEX=3", "env_var", "removal", False, None,
        "NCCL-only; no effect under HCCL"),
      C("export NCCL_DEBUG=${NCCL_DEBUG:-WARN}", "env_var", "removal", False, None,
        "NCCL logging switch; no effect under HCCL"),
      C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False,
        "export HCCL_ASYNC_ERROR_HANDLING=1",
        "torch_npu watchdog switch (knowledge: default 1 per MindCluster docs)"),
      C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", "replace", False,
        "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
        "NPU caching allocator reads PYTORCH_NPU_ALLOC_CONF; the CUDA variable is ignored (memory/fragmentation only)"),
      C("nvidia-smi --query-gpu=index,name,memory.total --format=csv", "torch_cuda_api", "replace", True,
        'npu-smi info | tee "${OUT_DIR}/npus.txt"',
        "nvidia-smi is absent on an Ascend host; with 'set -e -o pipefail' the failed pipeline aborts the launcher"),
      C("--dist_backend nccl \\", "dist_backend", "replace", True,
        "--dist_backend hccl \\",
        "explicit backend flag overrides the script default"),
  ])

# ----------------------------------------------------------------------------------------------
# ClimaX (microsoft/ClimaX) style
# ----------------------------------------------------------------------------------------------

E("climax_config", "configs/global_forecast_climax.yaml", "explicit_replacement",
  "ClimaX configs/global_forecast_climax.yaml (LightningCLI trainer: accelerator gpu, precision 16, ddp)",
  [
      C("accelerator: gpu", "device_type", "replace", True,
        "accelerator: climax.utils.npu.NPUAccelerator  # custom accelerator wrapping torch.npu",
        "Lightning refuses accelerator=gpu when no CUDA device is visible; Lightning 1.9 ships no NPU accelerator, "
        "so a small custom one is needed (exact Lightning API unconfirmed)"),
      C("strategy: ddp", "dist_backend", "replace", False,
        "strategy: {class_path: pytorch_lightning.strategies.DDPStrategy, init_args: {process_group_backend: hccl}}",
        "Lightning derives the default backend from the device type (nccl for cuda, gloo otherwise); gloo cannot "
        "reduce NPU tensors — Lightning behaviour from memory, unconfirmed"),
  ])

E("climax_arch", "src/climax/arch.py", "device_branch_or_abstraction",
  "ClimaX src/climax/arch.py (variable tokenisation + aggregation ViT)",
  [])

E("climax_env", "docker/environment.yml", "explicit_replacement",
  "ClimaX docker/environment.yml (conda: pytorch + pytorch-cuda from the nvidia channel)",
  [
      C("=- nvidia", "import_torch_npu", "removal", False, None,
        "only needed for the CUDA runtime packages removed below"),
      C("=- pytorch=1.13.1", "import_torch_npu", "replace", True,
        "- pytorch=2.1.0",
        "there is no torch_npu release for torch 1.13 (compatibility matrix jumps 1.11 -> 2.0.1/2.1.0)"),
      C("=- pytorch-cuda=11.7", "import_torch_npu", "replace", True,
        "- cpuonly",
        "pytorch-cuda selects the CUDA build of pytorch; torch_npu sits on the CPU build"),
      C("=- torchvision=0.14.1", "import_torch_npu", "replace", True,
        "- torchvision=0.16.0",
        "must match the new torch version or the solve fails"),
      C("=- torchaudio=0.13.1", "import_torch_npu", "removal", True, None,
        "pinned to torch 1.13; unused by ClimaX, drop rather than re-pin"),
      C("=- cudatoolkit-dev=11.7", "import_torch_npu", "removal", False, None,
        "CUDA toolkit only serves CUDA extension builds; unconfirmed whether it even resolves on aarch64"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True,
        "- torch-npu==2.1.0.post10",
        "the NPU adapter itself (pairs with torch 2.1.0)"),
  ])

E("climax_module", "src/climax/global_forecast/module.py", "explicit_replacement",
  "ClimaX src/climax/global_forecast/module.py (LightningModule, pretrained checkpoint loading)",
  [
      C("checkpoint = torch.hub.load_state_dict_from_url(pretrained_path)", "tensor_to_device", "replace", False,
        'checkpoint = torch.hub.load_state_dict_from_url(pretrained_path, map_location="cpu")',
        "fails only if the released Lightning checkpoint stores CUDA tensors (Lightning saves tensors on the device "
        "they lived on) — unconfirmed for the published files; the local-path branch already maps to CPU"),
  ])

E("climax_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "ClimaX-style training Dockerfile on an NGC PyTorch base image",
  [
      C("FROM nvcr.io/nvidia/pytorch:22.12-py3", "import_torch_npu", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "NGC CUDA image; the Ascend image provides CANN (and sets the set_env.sh variables as ENV)"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "NVIDIA container runtime variable; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES set at run time"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container runtime variable; no effect"),
      C('ENV TORCH_CUDA_ARCH_LIST="7.0;8.0;8.6+PTX"', "env_var", "removal", False, None,
        "only steers nvcc builds of CUDA extensions"),
      C("WORKDIR /workspace/climax", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10",
        "the NGC image shipped torch; the CANN base image does not, so torch + torch_npu must be installed"),
      C('RUN python -c "import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())"',
        "torch_cuda_api", "replace", False,
        'RUN python -c "import torch, torch_npu; print(torch.__version__, torch_npu.__version__)"',
        "does not fail (prints None) but no longer checks anything useful"),
      C("ENV NCCL_DEBUG=WARN", "env_var", "removal", False, None,
        "NCCL logging switch; no effect under HCCL"),
  ])

# ----------------------------------------------------------------------------------------------
# NVIDIA Modulus / PhysicsNeMo style
# ----------------------------------------------------------------------------------------------

E("mod_manager", "modulus/distributed/manager.py", "device_branch_or_abstraction",
  "NVIDIA Modulus modulus/distributed/manager.py (DistributedManager singleton)",
  [
      C('f"cuda:0" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        'f"npu:0" if torch.npu.is_available() else "cpu"',
        "default device of an uninitialised manager silently becomes cpu on the NPU host"),
      C("obj._cuda = torch.cuda.is_available()", "device_type", "replace", False,
        "obj._cuda = torch.npu.is_available()  # 'accelerator available'",
        "exposed as manager.cuda; callers use it to switch accelerator features on, none of which fails when False"),
      C("if torch.cuda.is_available() and torch.distributed.is_nccl_available():", "dist_backend", "add_branch", True,
        'if torch.npu.is_available():\n            return "hccl"',
        "without an NPU branch the backend silently becomes gloo, which cannot run collectives on NPU tensors"),
      C("LOCAL_RANK exported but empty", "torch_cuda_api", "replace", True,
        "local_rank = rank % torch.npu.device_count()  # LOCAL_RANK exported but empty",
        "device_count() is 0 without CUDA -> ZeroDivisionError"),
      C("=local_rank = rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "local_rank = rank % torch.npu.device_count()",
        "reached when LOCAL_RANK is absent (e.g. mpirun/srun launches): ZeroDivisionError"),
      C('backend="nccl",', "dist_backend", "replace", False,
        'backend="hccl",',
        "default only; every caller passes get_available_backend()"),
      C("manager._local_rank = rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "manager._local_rank = rank % torch.npu.device_count()",
        "ZeroDivisionError when setup() is called without local_rank"),
      C('f"cuda:{manager.local_rank}" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        'f"npu:{manager.local_rank}" if torch.npu.is_available() else "cpu"',
        "manager.device is what every example moves its model and data to; silently cpu otherwise"),
      C("if torch.cuda.is_available():  # pin this process to its GPU", "device_type", "replace", True,
        "if torch.npu.is_available():  # pin this process to its NPU",
        "guard is False on NPU, so set_device is skipped and all local ranks share device 0"),
      C("torch.cuda.set_device(manager.device)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(manager.device)",
        "CUDA call inside the (ported) guard"),
      C("torch.cuda.device(manager.device)", "torch_cuda_api", "replace", False,
        "torch.npu.device(manager.device)",
        "constructs a context manager without entering it: a no-op on either device"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "memory hygiene only"),
  ])

E("mod_capture", "modulus/utils/capture.py", "device_branch_or_abstraction",
  "NVIDIA Modulus modulus/utils/capture.py (StaticCapture: AMP + CUDA graphs training decorator)",
  [
      C('if "cuda" in str(self.model.device):', "device_type", "replace", True,
        'if self.model.device.type in ("cuda", "npu"):',
        "NPU models fall into the CPU branch: autocast on 'cpu' and a disabled scaler, i.e. AMP silently off"),
      C("self.cuda_graphs_enabled = use_graphs", "unsupported_op_workaround", "replace", True,
        'self.cuda_graphs_enabled = use_graphs and self.model.device.type == "cuda"  # NPUGraph: inference only',
        "Ascend's 2.7.1 API table marks torch.npu.NPUGraph / graph / make_graphed_callables as inference-only; "
        "capturing backward + optimizer step must be disabled on NPU"),
      C('self.amp_device = "cuda"', "device_type", "replace", True,
        "self.amp_device = self.model.device.type",
        "autocast device string; 'cuda' autocast does nothing for NPU tensors"),
      C("if amp_type == torch.bfloat16 and not torch.cuda.is_bf16_supported():", "device_capability_check", "replace", True,
        "if amp_type == torch.bfloat16 and not torch.npu.is_bf16_supported():",
        "returns False on the NPU host and silently downgrades bf16 to fp16"),
      C("self.replay_stream = torch.cuda.Stream(self.model.device)", "torch_cuda_api", "replace", True,
        "self.replay_stream = torch.npu.Stream(self.model.device)",
        "torch.cuda.Stream cannot be created without CUDA (and would get an npu device)"),
      C("self.graph = torch.cuda.CUDAGraph()", "torch_cuda_api", "replace", True,
        "self.graph = torch.npu.NPUGraph()",
        "eval captures (StaticCaptureEvaluateNoGrad) may still use graphs on NPU via NPUGraph"),
      C("self.replay_stream.wait_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "self.replay_stream.wait_stream(torch.npu.current_stream())",
        "graph warm-up path; CUDA stream API"),
      C("with torch.cuda.stream(self.replay_stream):", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(self.replay_stream):",
        "graph warm-up path; CUDA stream API"),
      C("torch.cuda.current_stream().wait_stream(self.replay_stream)", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().wait_stream(self.replay_stream)",
        "graph warm-up path; CUDA stream API"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()",
        "before graph recording; raises without CUDA"),
      C("with torch.cuda.graph(self.graph):", "torch_cuda_api", "replace", True,
        "with torch.npu.graph(self.graph):",
        "graph capture context"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=scaler_enabled)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=scaler_enabled)",
        "CUDA GradScaler disables itself without CUDA; fp16 AMP would lose loss scaling"),
  ])

E("mod_afno", "modulus/models/afno/afno.py", "explicit_replacement",
  "NVIDIA Modulus modulus/models/afno/afno.py (AFNO with ModelMetaData flags)",
  [
      C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", True,
        "with torch.autocast(device_type=x.device.type, enabled=False):",
        "only switches CUDA autocast off; under the trainer's NPU autocast the spectral einsums would silently run "
        "in fp16, which this block exists to prevent"),
  ])

E("mod_mlp", "modulus/models/gnn_layers/mesh_graph_mlp.py", "explicit_replacement",
  "NVIDIA Modulus gnn_layers/mesh_graph_mlp.py (GraphCast MLPs, TE/apex LayerNorm, custom SiLU autograd)",
  [
      C("@torch.cuda.amp.custom_fwd", "amp", "replace", False,
        "@torch.npu.amp.custom_fwd",
        "still runs on NPU tensors, but records the CUDA autocast state instead of the NPU one "
        "(torch_npu.npu.amp.custom_fwd is the documented counterpart); exact effect unconfirmed"),
      C("@torch.cuda.amp.custom_bwd", "amp", "replace", False,
        "@torch.npu.amp.custom_bwd",
        "pairs with custom_fwd: backward re-enters CUDA rather than NPU autocast"),
  ])

E("mod_era5_dali", "modulus/datapipes/climate/era5_hdf5.py", "device_branch_or_abstraction",
  "NVIDIA Modulus datapipes/climate/era5_hdf5.py (NVIDIA DALI ERA5 HDF5 pipeline)",
  [
      C('device: Union[str, torch.device] = "cuda",', "device_type", "replace", False,
        'device: Union[str, torch.device] = "npu",',
        "default only; the examples pass dist.device"),
      C('if device.type == "cuda" and device.index == None:', "device_type", "replace", False,
        'if device.type in ("cuda", "npu") and device.index == None:',
        "only matters for index-less device strings"),
      C("device_id=self.device.index,", "unsupported_op_workaround", "replace", False,
        'device_id=self.device.index if self.device.type == "cuda" else None,',
        "DALI has no Ascend backend; run it as a CPU-only pipeline on NPU hosts (DALI behaviour without CUDA is "
        "unconfirmed in the knowledge base)"),
      C('return dali_pth.DALIGenericIterator([self.pipe], ["invar", "outvar"])', "tensor_to_device", "replace", True,
        'return _MoveToDevice(dali_pth.DALIGenericIterator([self.pipe], ["invar", "outvar"]), self.device)',
        "the .gpu() transfer is skipped for non-CUDA devices, so batches arrive as host tensors while the model is "
        "on the NPU; copy them to self.device (non_blocking) in a small wrapper"),
  ])

E("mod_fcn_train", "examples/weather/fcn_afno/train_era5.py", "explicit_replacement",
  "NVIDIA Modulus examples/weather/fcn_afno/train_era5.py (FourCastNet recipe, apex FusedAdam, DDP on a side stream)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "entry script; the port uses torch_npu.optim"),
      C("from apex import optimizers", "fused_optimizer", "replace", True,
        "from torch_npu.optim import NpuFusedAdam",
        "the guarded import raises ImportError by design when apex is missing; apex FusedAdam is CUDA-only"),
      C("ddps = torch.cuda.Stream()", "torch_cuda_api", "replace", True,
        "ddps = torch.npu.Stream()",
        "multi-rank runs create a side stream for DDP construction"),
      C("with torch.cuda.stream(ddps):", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(ddps):",
        "CUDA stream context"),
      C("torch.cuda.current_stream().wait_stream(ddps)", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().wait_stream(ddps)",
        "CUDA stream API"),
      C("optimizer = optimizers.FusedAdam(", "fused_optimizer", "replace", True,
        "optimizer = NpuFusedAdam(",
        "call site of the apex CUDA fused optimizer"),
  ])

E("mod_graphcast_train", "examples/weather/graphcast/train_graphcast.py", "explicit_replacement",
  "NVIDIA Modulus examples/weather/graphcast/train_graphcast.py (bf16, NVTX ranges, cudaProfiler, apex FusedAdam fallback)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "entry script; the port uses torch_npu.npu.mstx and torch_npu.optim"),
      C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", True,
        "from torch_npu.npu.amp import GradScaler, autocast",
        "CUDA autocast/GradScaler disable themselves on the NPU host; cfg.amp would silently do nothing"),
      C("assert torch.cuda.is_bf16_supported()", "device_capability_check", "replace", True,
        "assert torch.npu.is_bf16_supported()",
        "full_bf16 is on in the default config; the CUDA query returns False on the NPU host and the assert fires"),
      C("self.optimizer = apex.optimizers.FusedAdam(", "fused_optimizer", "replace", False,
        "self.optimizer = torch_npu.optim.NpuFusedAdamW(",
        "without NVIDIA apex the bare except falls back to torch.optim.AdamW, which is correct but unfused"),
      C("enabled=cfg.profile, use_cuda=True", "torch_cuda_api", "replace", False,
        'enabled=cfg.profile, use_device="npu"',
        "profiling is off by default; NPU kernel timing via the autograd profiler's use_device is unconfirmed"),
      C("torch.cuda.profiler.start()", "torch_cuda_api", "removal", False, None,
        "cudaProfilerStart for nsys; only under cfg.profile, no NPU equivalent in the knowledge base"),
      C("torch.cuda.profiler.stop()", "torch_cuda_api", "removal", False, None,
        "cudaProfilerStop for nsys; only under cfg.profile"),
      C('torch.cuda.nvtx.range_push("Training iteration")', "torch_cuda_api", "replace", True,
        'range_id = torch_npu.npu.mstx.range_start("Training iteration")',
        "torch.cuda.nvtx is not redirected by torch_npu and raises without a CUDA build; mstx is the NPU counterpart"),
      C("peak memory: {torch.cuda.max_memory_reserved(dist.device) / 2**30:.2f} GiB", "torch_cuda_api", "replace", False,
        'peak memory: {torch.npu.max_memory_reserved(dist.device) / 2**30:.2f} GiB"',
        "log value only; reports 0 for an uninitialised CUDA allocator"),
      C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True,
        "torch_npu.npu.mstx.range_end(range_id)",
        "closes the range opened above; same NVTX failure"),
  ])

E("mod_graphcast_conf", "examples/weather/graphcast/conf/config.yaml", "explicit_replacement",
  "NVIDIA Modulus examples/weather/graphcast/conf/config.yaml (Hydra config)",
  [
      C("norm_type: TELayerNorm", "custom_cuda_extension", "replace", True,
        'norm_type: LayerNorm               # "TELayerNorm" needs transformer-engine (CUDA only)',
        "TransformerEngine has no NPU build (knowledge §6); get_norm_layer raises ImportError for TELayerNorm"),
  ])

E("mod_checkpoint", "modulus/launch/utils/checkpoint.py", "explicit_replacement",
  "NVIDIA Modulus modulus/launch/utils/checkpoint.py (save/load_checkpoint utilities)",
  [
      C('device: Union[str, torch.device] = "cuda",', "tensor_to_device", "replace", True,
        'device: Union[str, torch.device] = "npu",',
        "public API default flows into torch.load(map_location=device); callers that omit device fail on the NPU host"),
  ])

E("mod_pyproject", "pyproject.toml", "explicit_replacement",
  "NVIDIA Modulus pyproject.toml (DALI, NVTX, NVML, TransformerEngine extras)",
  [
      C('"torch>=2.0.0",', "import_torch_npu", "npu_only_addition", True,
        '"torch-npu==2.1.0.post10",',
        "the NPU adapter must be installed next to torch (and torch then pinned to 2.1.0)"),
      C('"nvidia_dali_cuda120>=1.35.0",', "unsupported_op_workaround", "removal", False, None,
        "CUDA 12 build of DALI; no Ascend backend (datapipes need a torch DataLoader path) — unconfirmed whether "
        "the wheel installs on the NPU host"),
      C('"nvtx>=0.2.8",', "torch_cuda_api", "removal", False, None,
        "NVTX annotations have no effect on NPU; use torch_npu.npu.mstx"),
      C('"pynvml>=11.5.0",', "torch_cuda_api", "removal", False, None,
        "NVML has no NPU counterpart"),
      C('"transformer-engine[pytorch]>=1.2",', "custom_cuda_extension", "removal", True, None,
        "TransformerEngine has no NPU build; its CUDA extension build breaks `pip install nvidia-modulus[all]`"),
  ])

# ----------------------------------------------------------------------------------------------
# torch-harmonics (SFNO / Makani dependency)
# ----------------------------------------------------------------------------------------------

E("th_disco", "torch_harmonics/convolution.py", "kernel_rewrite",
  "NVIDIA torch-harmonics torch_harmonics/convolution.py (DISCO convolution: CUDA kernel + sparse-bmm fallback)",
  [
      C("y[pout] = torch.bmm(psi, x.reshape(kernel_size, nlat_in * nlon_in, -1))", "unsupported_op_workaround", "replace", True,
        "y[pout] = torch.zeros(kernel_size * nlat_out, x.shape[-1], device=x.device, dtype=x.dtype).index_add_(0, ker_idx * nlat_out + row_idx, vals[:, None] * x.reshape(kernel_size, nlat_in * nlon_in, -1)[ker_idx, col_idx]).view(kernel_size, nlat_out, -1)",
        "bmm with a sparse COO psi has no NPU kernel and sparse ops raise instead of falling back to CPU "
        "(knowledge §3.8); a dense psi is far too large at 0.25 deg, so express it as gather + index_add_ "
        "(psi handed over as its ker/row/col indices and values instead of a sparse tensor)"),
      C("y[:, pout, :, :] = torch.bmm(psi.transpose(1, 2), x_ext[:, :, pout, :])", "unsupported_op_workaround", "replace", True,
        "y[:, pout, :, :] = _gather_index_add_transpose(ker_idx, row_idx, col_idx, vals, x_ext[:, :, pout, :], n_out)",
        "same sparse bmm in the transpose contraction used by DiscreteContinuousConvTransposeS2"),
      C("if x.is_cuda and _cuda_extension_available:", "custom_cuda_extension", "add_branch", False,
        'elif x.device.type == "npu" and _npu_extension_available:\n            x = _disco_s2_contraction_npu(x, self.psi_ker_idx, self.psi_row_idx, self.psi_col_idx, self.psi_vals, self.kernel_size, self.nlat_out, self.nlon_out)',
        "the CUDA DISCO kernel has no NPU build; an Ascend C port is a performance item once the torch path works"),
  ])

E("th_setup", "setup.py", "kernel_rewrite",
  "NVIDIA torch-harmonics setup.py (optional CUDAExtension for the DISCO kernels)",
  [
      C('if cuda_available or os.getenv("FORCE_CUDA_EXTENSION", "0") == "1":', "custom_cuda_extension", "add_branch", False,
        'elif npu_available:  # build the Ascend C DISCO kernels\n        ext_modules.append(NpuExtension("disco_npu_extension", ["torch_harmonics/csrc/disco_npu/disco_npu.cpp"], extra_compile_args={"cxx": ["-O3"]}))',
        "without CUDA the branch is skipped and the package installs pure-Python; building an NPU extension "
        "(torch_npu.utils.cpp_extension.NpuExtension) is optional, for speed"),
  ])
