# Labels for probe180 (contrastive / vision-language pre-training codebases, CUDA -> Ascend NPU).
# Format: see bench/probe_build.py. One C(...) per upstream line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


NPU_PIN = "torch-npu==2.1.0.post12"
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ---------------------------------------------------------------- OpenCLIP
E("oc_main", "src/training/main.py", "explicit_replacement",
  "OpenCLIP src/training/main.py (entry point: device init, bnb linear, DDP, GradScaler, torch.compile)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script: registers the npu device/backend before init_distributed_device runs (torch 2.1 pin, no autoload)"),
    C("from torch.cuda.amp import GradScaler", "amp", "replace", True, "from torch.npu.amp import GradScaler",
      "torch.cuda.amp.GradScaler disables itself with a warning when CUDA is absent -> --precision amp trains fp16 without loss scaling"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.cuda.is_available() or torch.npu.is_available():",
      "guard is False on NPU so allow_tf32/cudnn flags are skipped; cudnn flags are no-ops on NPU and whether allow_tf32 maps to NPU HF32 is unconfirmed -> perf only"),
    C("linear_replacement_cls = getattr(bnb.nn.triton_based_modules, args.use_bnb_linear)",
      "unsupported_op_workaround", "replace", False,
      "raise NotImplementedError('--use-bnb-linear: bitsandbytes SwitchBack layers are Triton/CUDA kernels with no NPU build')",
      "opt-in flag only; bitsandbytes Triton-based SwitchBack linears have no NPU backend (knowledge: bnb NPU support is NF4 only)"),
    C("model = torch.compile(original_model)", "compile_mode", "replace", False,
      "model = torch.compile(original_model, backend=torchair.get_npu_backend())",
      "opt-in --torchcompile; Inductor on NPU needs torch_npu >= 2.6, with the 2.1 pin a TorchAir backend is the usual route (unconfirmed)"),
])

E("oc_distributed", "src/training/distributed.py", "explicit_replacement",
  "OpenCLIP src/training/distributed.py (init_distributed_device: SLURM / torchrun / horovod)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "returns False on an NPU host, so every rank silently falls back to device='cpu'"),
    C("device = 'cuda:%d' % args.local_rank", "device_type", "replace", True, "device = 'npu:%d' % args.local_rank",
      "per-rank device string"),
    C("device = 'cuda:0'", "device_type", "replace", True, "device = 'npu:0'", "single-process device string"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
      "torch.cuda.set_device raises without CUDA"),
])

E("oc_params", "src/training/params.py", "explicit_replacement",
  "OpenCLIP src/training/params.py (argparse; --dist-backend default)", [
    C('"--dist-backend", default="nccl", type=str, help="distributed backend"', "dist_backend", "replace", True,
      '"--dist-backend", default="hccl", type=str, help="distributed backend"',
      "default flows into init_process_group(backend=args.dist_backend) in distributed.py; NCCL is not available on Ascend"),
])

E("oc_precision", "src/training/precision.py", "explicit_replacement",
  "OpenCLIP src/training/precision.py (get_autocast for amp / amp_bf16)", [
    C("=return torch.cuda.amp.autocast", "amp", "replace", True, "return torch.npu.amp.autocast",
      "cuda autocast disables itself on a non-CUDA host -> --precision amp silently runs fp32"),
    C("return lambda: torch.cuda.amp.autocast(dtype=torch.bfloat16)", "amp", "replace", True,
      "return lambda: torch.npu.amp.autocast(dtype=torch.bfloat16)", "same for amp_bf16"),
])

E("oc_train", "src/training/train.py", "explicit_replacement",
  "OpenCLIP src/training/train.py (train_one_epoch / evaluate; fork that logs peak memory)", [
    C("max_mem_gb = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      "max_mem_gb = torch.npu.max_memory_allocated() / 1024 ** 3",
      "CUDA never initialised -> returns 0 silently; log/metric only"),
])

E("oc_loss", "src/open_clip/loss.py", "explicit_replacement",
  "OpenCLIP src/open_clip/loss.py (ClipLoss gather_features, SigLipLoss neighbour exchange) - device-agnostic, no labels", [])

E("oc_transformer", "src/open_clip/transformer.py", "explicit_replacement",
  "OpenCLIP src/open_clip/transformer.py (Attention with F.scaled_dot_product_attention, grad checkpointing) - no labels", [])

E("oc_factory", "src/open_clip/factory.py", "explicit_replacement",
  "OpenCLIP src/open_clip/factory.py (create_model, precision casting, jit) - device passed in, no labels", [])

E("oc_zeroshot", "src/training/zero_shot.py", "explicit_replacement",
  "OpenCLIP src/training/zero_shot.py (ImageNet zero-shot eval) - no labels", [])

E("oc_openai", "src/open_clip/openai.py", "device_branch_or_abstraction",
  "OpenCLIP / OpenAI CLIP load_openai_model (JIT archive device patching)", [
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "public API default: callers that omit device silently get a CPU model on an NPU host"),
])

E("oc_profiler", "src/training/profiler.py", "explicit_replacement",
  "OpenCLIP src/training/profiler.py (flop profiler) plus a throughput/peak-memory benchmark mode", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "standalone entry script"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op when CUDA is not initialised; only affects cache hygiene between runs"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device -> raises without CUDA"),
    C("with torch.no_grad(), torch.cuda.amp.autocast(enabled=amp):", "amp", "replace", True,
      "with torch.no_grad(), torch.npu.amp.autocast(enabled=amp):",
      "--amp benchmark would silently measure fp32"),
    C("torch.cuda.synchronize()  # drain warmup work before timing", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # drain warmup work before timing", "raises without CUDA"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events cannot record on an NPU stream"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "as above"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "raises without CUDA (device is an npu device after the port)"),
    C("results[f'{name}_peak_mem_gb'] = round(torch.cuda.max_memory_allocated() / 1024 ** 3, 2)", "torch_cuda_api",
      "replace", True, "results[f'{name}_peak_mem_gb'] = round(torch.npu.max_memory_allocated() / 1024 ** 3, 2)",
      "the benchmark's reported metric would silently be 0"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on NPU -> model profiled/benchmarked on CPU"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "explicit .cuda()"),
])

E("oc_slurm", "scripts/train_slurm.sh", "explicit_replacement",
  "OpenCLIP README SLURM launcher (srun, 32 nodes x 4 GPUs, NCCL env)", [
    C("conda activate open_clip", "import_torch_npu", "npu_only_addition", True, SET_ENV,
      "CANN environment must be sourced or torch_npu fails to load libascendcl/libhccl"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "ignored on NPU; with 4 tasks per node local ranks 0-3 land on NPUs 0-3 anyway, so behaviour is unchanged"),
    C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
      "NCCL log level is a no-op under HCCL; closest knob is the CANN log level"),
    C("export NCCL_SOCKET_IFNAME=ens", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=ens",
      "multi-node: HCCL ignores NCCL_SOCKET_IFNAME and picks the root-info NIC by its own priority (may be the wrong one)"),
    C("export NCCL_IB_TIMEOUT=22", "env_var", "removal", False, None,
      "no effect under HCCL; HCCL_RDMA_TIMEOUT exists but its value semantics were not confirmed"),
])

E("oc_torchrun", "scripts/train_torchrun.sh", "explicit_replacement",
  "OpenCLIP single-node torchrun fine-tune + eval launcher", [
    C("export TOKENIZERS_PARALLELISM=false", "import_torch_npu", "npu_only_addition", True, SET_ENV,
      "source the CANN environment before torchrun"),
    C("export CUDA_VISIBLE_DEVICES=4,5,6,7", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=4,5,6,7",
      "ignored on NPU -> ranks 0-3 would take NPUs 0-3, which the script reserves for other jobs"),
    C("CUDA_VISIBLE_DEVICES=0 python -m training.main \\", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0 python -m training.main \\",
      "after the export above is ported the eval would inherit ASCEND_RT_VISIBLE_DEVICES=4,5,6,7 and land on NPU 4"),
])

E("oc_reqs", "requirements-training.txt", "explicit_replacement",
  "OpenCLIP requirements-training.txt pinned to CUDA 12.1 wheels", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "device_type", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu pairs with the CPU torch wheel (x86) / plain PyPI torch (aarch64); cu121 wheels are x86-only"),
    C("torch==2.1.2+cu121", "device_type", "replace", True, "torch==2.1.0",
      "torch_npu wheel version must equal the torch version (2.1.0.postN <-> 2.1.0); no 2.1.2 torch_npu"),
    C("torchvision==0.16.2+cu121", "device_type", "replace", True, "torchvision==0.16.0",
      "must match torch 2.1.0"),
    C("=fsspec", "import_torch_npu", "npu_only_addition", True, NPU_PIN,
      "torch-npu pin appended after the core deps (the torch lines themselves carry replace labels)"),
    C("bitsandbytes>=0.41.0", "unsupported_op_workaround", "removal", False, None,
      "only for --use-bnb-linear; int8 SwitchBack path has no NPU backend"),
    C("triton==2.1.0", "unsupported_op_workaround", "removal", False, None,
      "CUDA Triton only serves the bnb SwitchBack kernels; no aarch64 wheel for 2.1.0 (unconfirmed)"),
])

# ---------------------------------------------------------------- EVA-CLIP
E("eva_main", "rei/training/main.py", "explicit_replacement",
  "EVA-CLIP rei/training/main.py (DeepSpeed init, GradScaler, layer-decay optimizer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("from torch.cuda.amp import GradScaler", "amp", "replace", True, "from torch.npu.amp import GradScaler",
      "non-DeepSpeed amp path: cuda GradScaler disables itself on NPU"),
    C('deepspeed.init_distributed(dist_backend="nccl", init_method=args.dist_url)', "dist_backend", "replace", True,
      'deepspeed.init_distributed(dist_backend="hccl", init_method=args.dist_url)',
      "explicit nccl backend; DeepSpeed's NPU accelerator uses hccl"),
    C("logging.info(f'Accelerator: {torch.cuda.get_device_name(device)}')", "torch_cuda_api", "replace", True,
      "logging.info(f'Accelerator: {torch.npu.get_device_name(device)}')",
      "log line, but get_device_name initialises CUDA and raises on an NPU host"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on NPU; cached NPU blocks are simply not released"),
])

E("eva_vit", "rei/eva_clip/eva_vit_model.py", "kernel_rewrite",
  "EVA-CLIP rei/eva_clip/eva_vit_model.py (xformers memory_efficient_attention, apex FusedLayerNorm, RoPE)", [
    C("=import torch.nn.functional as F", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the ported attention call uses torch_npu.npu_fusion_attention"),
    C("import xformers.ops as xops", "attention_kernel", "removal", False, None,
      "guarded import (falls back to None); dead once the call site is rewritten"),
    C("from apex.normalization import FusedLayerNorm", "custom_cuda_extension", "replace", False,
      "FusedLayerNorm = nn.LayerNorm  # apex fused_layer_norm_cuda has no NPU build",
      "bare except already falls back to nn.LayerNorm; with Ascend apex installed the import may succeed and only fail at construction (unconfirmed)"),
    C("x = xops.memory_efficient_attention(", "attention_kernel", "replace", True,
      "x = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, \"BSND\", scale=self.scale, keep_prob=1. - self.xattn_drop)[0]",
      "EVA-CLIP configs set xattn=True; xformers has no NPU backend (xops is None -> AttributeError); q/k/v are already B,N,H,D = BSND"),
])

E("eva_rope", "rei/eva_clip/rope.py", "kernel_rewrite",
  "EVA-CLIP rei/eva_clip/rope.py (VisionRotaryEmbeddingFast, interleaved rotate_half)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "only needed if the optional fused RoPE below is adopted"),
    C("return  t * self.freqs_cos + rotate_half(t) * self.freqs_sin", "npu_fused_op", "replace", False,
      "return torch_npu.npu_rotary_mul(t, self.freqs_cos[None, None], self.freqs_sin[None, None], rotary_mode='interleave')",
      "perf only: eager RoPE works; npu_rotary_mul supports interleave mode and 11SD broadcast (shape limits unconfirmed for this layout)"),
])

E("eva_optim", "rei/training/optim.py", "explicit_replacement",
  "EVA-CLIP rei/training/optim.py (layer-decay param groups, apex FusedLAMB/FusedAdam, DeepSpeed config)", [
    C("from apex.optimizers import FusedAdam, FusedLAMB", "fused_optimizer", "replace", True,
      "from torch_npu.optim import NpuFusedAdamW, NpuFusedLamb",
      "apex fused optimizers need amp_C CUDA kernels; the ported call sites need these names"),
    C("base_optimizer = FusedAdam", "fused_optimizer", "replace", True, "base_optimizer = NpuFusedAdamW",
      "FusedAdam defaults to adam_w_mode=True -> AdamW semantics"),
    C("base_optimizer = FusedLAMB", "fused_optimizer", "replace", True, "base_optimizer = NpuFusedLamb",
      "the EVA launcher uses --optimizer lamb (non-DeepSpeed path)"),
])

E("eva_launch", "scripts/pretrain_eva02_clip_L14.sh", "explicit_replacement",
  "EVA-CLIP pre-training launcher (torch.distributed.launch, RoCE NCCL env, --enable-deepspeed)", [
    C("export OMP_NUM_THREADS=4", "import_torch_npu", "npu_only_addition", True, SET_ENV, "source CANN env"),
    C("export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3", "env_var", "removal", False, None,
      "host IB HCA selection has no meaning for HCCL (NPU-side RoCE ports)"),
    C("export NCCL_IB_GID_INDEX=3", "env_var", "removal", False, None, "no HCCL counterpart; ignored"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=eth0",
      "16-node job: HCCL needs its own root-info NIC selection"),
    C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None, "no-op under HCCL"),
])

E("eva_reqs", "requirements.txt", "explicit_replacement",
  "EVA-CLIP requirements.txt (torch 1.13.1+cu117, deepspeed 0.8.1, xformers 0.0.16)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu117", "device_type", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index"),
    C("torch==1.13.1+cu117", "device_type", "replace", True, "torch==2.1.0",
      "no torch_npu release for 1.13; 2.1.0 is the nearest supported line"),
    C("torchvision==0.14.1+cu117", "device_type", "replace", True, "torchvision==0.16.0", "match torch 2.1.0"),
    C("deepspeed==0.8.1", "distributed_framework", "replace", True, "deepspeed>=0.14.0",
      "0.8.1 has no NPU accelerator (deepspeed_npu plugin targets 0.9.2 only); exact first version with accelerator/npu_accelerator.py unconfirmed"),
    C("xformers==0.0.16", "attention_kernel", "removal", True, None,
      "CUDA-only wheel built against torch 1.13; no NPU backend"),
    C("=scipy", "import_torch_npu", "npu_only_addition", True, NPU_PIN, "torch-npu pin appended after the deps"),
])

E("eva_docker", "docker/Dockerfile", "explicit_replacement",
  "EVA-CLIP style training Dockerfile on the NGC PyTorch image (apex --cuda_ext, xformers)", [
    C("FROM nvcr.io/nvidia/pytorch:22.12-py3", "device_type", "replace", True,
      "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "CUDA base image -> CANN base image (driver mounted from host); tag not verified"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0 8.0 8.6 9.0+PTX"', "env_var", "removal", False, None, "nvcc-only setting"),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None, "no CUDA toolkit in the image"),
    C("RUN git clone https://github.com/NVIDIA/apex /tmp/apex && cd /tmp/apex && \\", "custom_cuda_extension",
      "removal", True, None, "apex is only used for FusedLAMB/FusedAdam/FusedLayerNorm, all replaced in code"),
    C("pip install -v --disable-pip-version-check --no-cache-dir --no-build-isolation \\", "custom_cuda_extension",
      "removal", True, None, "part of the apex build"),
    C('--global-option="--cpp_ext" --global-option="--cuda_ext" ./ && \\', "custom_cuda_extension", "removal", True,
      None, "--cuda_ext needs nvcc -> build fails on a CANN image"),
    C("RUN pip install --no-cache-dir xformers==0.0.16 --no-deps", "attention_kernel", "removal", True, None,
      "xformers has no NPU backend"),
    C("ENV NCCL_IB_DISABLE=0", "env_var", "removal", False, None, "ignored by HCCL"),
    C("ENV NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "ENV HCCL_ASYNC_ERROR_HANDLING=1",
      "HCCL watchdog variable; documented default is already 1"),
])

# ---------------------------------------------------------------- LAVIS / BLIP-2
E("lavis_dist", "lavis/common/dist_utils.py", "explicit_replacement",
  "Salesforce LAVIS lavis/common/dist_utils.py (init_distributed_mode)", [
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()",
      "SLURM path: device_count() is 0 without CUDA -> ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "raises without CUDA"),
    C('args.dist_backend = "nccl"', "dist_backend", "replace", True, 'args.dist_backend = "hccl"',
      "hard-coded backend"),
])

E("lavis_runner", "lavis/runners/runner_base.py", "device_branch_or_abstraction",
  "Salesforce LAVIS lavis/runners/runner_base.py (config-driven device, DDP, GradScaler, cuda_enabled)", [
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True, "self._scaler = torch.npu.amp.GradScaler()",
      "run_cfg.amp=True: cuda GradScaler disables itself on NPU"),
    C('return self.device.type == "cuda"', "device_type", "replace", True, 'return self.device.type in ("cuda", "npu")',
      "cuda_enabled=False on NPU -> prepare_sample never moves batches to the device; the model then gets CPU tensors"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on NPU"),
])

E("lavis_task", "lavis/tasks/base_task.py", "explicit_replacement",
  "Salesforce LAVIS lavis/tasks/base_task.py (_train_inner_loop with amp)", [
    C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=use_amp):", "amp silently disabled on NPU"),
])

E("lavis_datautils", "lavis/datasets/data_utils.py", "explicit_replacement",
  "Salesforce LAVIS lavis/datasets/data_utils.py (move_to_cuda / prepare_sample)", [
    C("return tensor.cuda()", "tensor_to_device", "replace", True, "return tensor.npu()",
      "reached once cuda_enabled is fixed in runner_base"),
])

E("lavis_loader", "lavis/datasets/datasets/dataloader_utils.py", "explicit_replacement",
  "Salesforce LAVIS dataloader_utils.py (PrefetchLoader side-stream copy, record_stream)", [
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
      "PrefetchLoader wraps every map-style loader in create_loaders"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(self.stream):",
      "side-stream H2D copy"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(self.stream)", "stream sync"),
    C("batch.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "batch.record_stream(torch.npu.current_stream())", "record on the NPU compute stream"),
])

E("lavis_blip2", "lavis/models/blip2_models/blip2.py", "explicit_replacement",
  "Salesforce LAVIS blip2.py (Blip2Base.maybe_autocast, compute_sim_matrix)", [
    C("return torch.cuda.amp.autocast(dtype=dtype)", "amp", "replace", True, "return torch.npu.amp.autocast(dtype=dtype)",
      "enable_autocast is True on npu but the cuda context disables itself -> fp16 ViT/OPT weights meet fp32 activations"),
])

E("lavis_blip2opt", "lavis/models/blip2_models/blip2_opt.py", "explicit_replacement",
  "Salesforce LAVIS blip2_opt.py (OPT-2.7b/6.7b frozen LLM, predict_answers under autocast)", [
    C("from torch.cuda.amp import autocast as autocast", "amp", "replace", True,
      "from torch.npu.amp import autocast as autocast", "used by predict_answers for the fp16 OPT model"),
])

E("lavis_yaml", "lavis/projects/blip2/train/pretrain_stage1.yaml", "device_branch_or_abstraction",
  "Salesforce LAVIS BLIP-2 stage-1 pre-training config", [
    C('device: "cuda"', "device_type", "replace", True, 'device: "npu"',
      "runner_base builds torch.device(run_cfg.device)"),
])

E("lavis_env", "environment.yml", "explicit_replacement",
  "LAVIS-style conda environment.yml (pytorch + pytorch-cuda from the nvidia channel)", [
    C("=- nvidia", "device_type", "removal", False, None, "channel only serves CUDA packages; harmless once they are gone"),
    C("- pytorch=1.13.1", "device_type", "replace", True, "- pytorch=2.1.0",
      "torch_npu has no 1.13 line; torch must be exactly 2.1.0 for torch-npu 2.1.0.postN"),
    C("- torchvision=0.14.1", "device_type", "replace", True, "- torchvision=0.16.0", "match torch 2.1.0"),
    C("- pytorch-cuda=11.7", "device_type", "replace", True, "- cpuonly",
      "selects the CUDA build of pytorch; cpuonly selects the CPU build torch_npu expects"),
    C("- cudatoolkit-dev=11.7", "custom_cuda_extension", "removal", False, None,
      "nvcc toolchain, unused on NPU (linux-64 only, so it would also break solving on aarch64 hosts - unconfirmed)"),
    C("=- wheel", "import_torch_npu", "npu_only_addition", True, "- " + NPU_PIN, "torch-npu pin in the pip section"),
])

# ---------------------------------------------------------------- SigLIP fine-tune / retrieval benchmark
E("siglip_ft", "siglip_finetune/train.py", "explicit_replacement",
  "HF-transformers SigLIP/CLIP contrastive fine-tuning script (torchrun, flash-attn, bnb 8-bit AdamW, torch.compile)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('p.add_argument("--attn-implementation", default="flash_attention_2",', "attention_kernel", "replace", True,
      'p.add_argument("--attn-implementation", default="sdpa",',
      "flash-attn cannot be installed on NPU; transformers raises for flash_attention_2, SDPA dispatches to NPU FA"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C('os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
      'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")', "HCCL watchdog knob; default already 1"),
    C('dist.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'dist.init_process_group(backend="hccl")', "hard-coded nccl"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "queued lazily and never run on NPU; torch.manual_seed above already seeds the npu generator"),
    C('device = torch.device(f"cuda:{local_rank}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{local_rank}")', "device string"),
    C("if args.bf16 and not torch.cuda.is_bf16_supported():", "device_capability_check", "replace", True,
      "if args.bf16 and not torch.npu.is_bf16_supported():",
      "torch.cuda.is_bf16_supported() queries the current CUDA device and raises on an NPU host"),
    C("optimizer = bnb.optim.AdamW8bit(param_groups, lr=args.lr, betas=(0.9, 0.95), eps=1e-6)", "fused_optimizer",
      "replace", False, "optimizer = torch_npu.optim.NpuFusedAdamW(param_groups, lr=args.lr, betas=(0.9, 0.95), eps=1e-6)",
      "opt-in --optim adamw_8bit; bitsandbytes 8-bit optimizers are not available for NPU (not a like-for-like replacement: full-precision states)"),
    C("fused=torch.cuda.is_available())", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(param_groups, lr=args.lr, betas=(0.9, 0.95), eps=1e-6)",
      "evaluates False on NPU -> plain for-loop AdamW; perf only"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=not args.bf16)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=not args.bf16)", "fp16 path would train without loss scaling"),
    C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", False,
      "model = torch.compile(model)",
      "opt-in --compile; max-autotune tunes CUDA Triton templates, unconfirmed on NPU Inductor"),
    C('with torch.autocast("cuda", dtype=amp_dtype):', "amp", "replace", True,
      'with torch.autocast("npu", dtype=amp_dtype):', "cuda autocast disables itself -> fp32 training"),
    C("mem = torch.cuda.max_memory_allocated() / 2 ** 30", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated() / 2 ** 30", "log only; silently 0"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises without CUDA"),
])

E("clip_retrieval", "eval/retrieval_benchmark.py", "device_branch_or_abstraction",
  "CLIP_benchmark-style zero-shot Flickr30k / MSCOCO retrieval script for open_clip checkpoints", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace",
      True, 'p.add_argument("--device", default="npu" if torch.npu.is_available() else "cpu")',
      "default silently falls back to cpu on an NPU host"),
    C('backend = "nccl" if torch.cuda.is_available() else "gloo"', "dist_backend", "replace", True,
      'backend = "hccl" if torch.npu.is_available() else "gloo"',
      "silently picks gloo on NPU; gloo cannot all_gather npu tensors"),
    C('args.device = f"cuda:{args.local_rank}"', "device_type", "replace", True, 'args.device = f"npu:{args.local_rank}"',
      "per-rank device"),
    C("autocast = torch.cuda.amp.autocast if args.amp else suppress", "amp", "replace", True,
      "autocast = torch.npu.amp.autocast if args.amp else suppress", "--amp silently ignored"),
    C("pin_memory=torch.cuda.is_available(),", "pin_memory", "replace", False, "pin_memory=True,",
      "False on NPU -> unpinned host buffers; perf only"),
    C("if torch.cuda.device_count() > 1 and not args.distributed: model = torch.nn.DataParallel(model)",
      "unsupported_op_workaround", "removal", False, None,
      "guard is 0 on NPU so it is dead code, but porting the guard would enable nn.DataParallel, which Ascend lists as unsupported"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises without CUDA"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "silent no-op"),
])
