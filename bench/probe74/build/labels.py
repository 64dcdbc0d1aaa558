"""Labels for probe74 (hand-written synthetic upstream files; see ../README.md).

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
EXPL = "explicit_replacement"
T2N = "transfer_to_npu"
AGN = "device_branch_or_abstraction"   # the brief's "device_agnostic"

IMPORT_NPU = "torch.npu.*, the npu device type and the hccl backend need torch_npu loaded (explicit import recommended even with autoload)"
CUDA_AMP = "CUDA autocast is inactive for NPU tensors: the forward runs without mixed precision"
COMPILE = ("performance only: static-shape CLIP towers; jit_compile=False avoids online op compilation "
           "(msFmkTransplt always suggests set_compile_mode)")

# --------------------------------------------------------------------------------------------
# OpenCLIP
# --------------------------------------------------------------------------------------------
E("openclip_distributed", "src/training/distributed.py", EXPL,
  "mlfoundations/open_clip src/training/distributed.py (horovod / SLURM / torchrun device init)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", R, True, "if torch.npu.is_available():",
      "False on an NPU host: every rank silently falls through to device='cpu' and trains on the CPU"),
    C("device = 'cuda:%d' % args.local_rank", "device_type", R, True, "device = 'npu:%d' % args.local_rank",
      "per-rank device string"),
    C("device = 'cuda:0'", "device_type", R, True, "device = 'npu:0'", "single-process device string"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)",
      "torch.cuda.set_device needs a CUDA build"),
])

E("openclip_main", "src/training/main.py", EXPL,
  "mlfoundations/open_clip src/training/main.py (AMP GradScaler, bnb int8 linears, torch.compile)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NPU),
    C("from torch.cuda.amp import GradScaler", "amp", R, True, "from torch.npu.amp import GradScaler",
      "torch.cuda.amp.GradScaler disables itself without CUDA: --precision amp trains fp16 without loss scaling"),
    C("    args = parse_args(args)", "compile_mode", A, False, "torch_npu.npu.set_compile_mode(jit_compile=False)",
      COMPILE),
    C("linear_replacement_cls = getattr(bnb.nn.triton_based_modules", "unsupported_op_workaround", R, False,
      "raise ValueError('--use-bnb-linear (bitsandbytes SwitchBack int8) is not available on NPU')",
      "only with --use-bnb-linear; bitsandbytes' Triton SwitchBack int8 linears have no NPU path in the knowledge "
      "(NF4 only); unconfirmed"),
    C("optimizer = optim.AdamW(", "fused_optimizer", R, False, "optimizer = torch_npu.optim.NpuFusedAdamW(",
      "performance only: tensor-fused AdamW"),
])

E("openclip_train", "src/training/train.py", AGN,
  "mlfoundations/open_clip src/training/train.py + precision.get_autocast (accum-freq feature cache)", [
    C("return torch.cuda.amp.autocast", "amp", R, True,
      "return partial(torch.autocast, device_type=device_type)  # get_autocast(precision, device_type)",
      "--precision amp: " + CUDA_AMP + " (fp32 on NPU, slow and a different numeric path)"),
    C("return lambda: torch.cuda.amp.autocast(dtype=torch.bfloat16)", "amp", R, True,
      "return partial(torch.autocast, device_type=device_type, dtype=torch.bfloat16)",
      "--precision amp_bf16: " + CUDA_AMP),
])

E("openclip_slurm", "scripts/train_laion400m_vitb16.sh", EXPL,
  "open_clip README-style JUWELS Booster SLURM launch script (srun, NCCL over InfiniBand)", [
    C("#SBATCH --gres=gpu:4", "device_type", R, False, "#SBATCH --gres=npu:8",
      "the generic-resource name and count depend on how the site exposes NPUs to SLURM; unconfirmed"),
    C("module load CUDA/11.8 NCCL", "env_var", R, True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CUDA/NCCL modules do not exist on an Ascend cluster (set -e aborts); the CANN environment must be sourced "
      "for torch_npu"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", R, True, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "ignored by the NPU runtime; ASCEND_RT_VISIBLE_DEVICES selects logical NPUs"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", R, False, "export HCCL_SOCKET_IFNAME=ib0",
      "HCCL reads HCCL_SOCKET_IFNAME / HCCL_IF_IP; without it HCCL picks a host NIC by its own priority, which may "
      "or may not reach the master: unconfirmed"),
    C("export NCCL_IB_TIMEOUT=50", "env_var", X, False, None, "NCCL-only tuning, no effect under HCCL"),
    C("export NCCL_IB_HCA=mlx5", "env_var", X, False, None, "NCCL-only tuning, no effect under HCCL"),
    C("export NCCL_DEBUG=WARN", "env_var", R, False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "diagnostics only"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu watchdog variable (default 1 per MindCluster docs)"),
    C("nvidia-smi --query-gpu=name,memory.total", "env_var", R, True, "npu-smi info",
      "nvidia-smi is absent on an Ascend node and set -o pipefail makes the script exit here"),
    C("srun --cpu_bind=v --accel-bind=gn", "device_type", R, False, "srun --cpu_bind=v python -u src/training/main.py \\",
      "--accel-bind=g binds GPUs granted by gres; whether it maps onto an NPU gres is site-specific; unconfirmed"),
])

E("openclip_reqs", "requirements-training.txt", EXPL,
  "open_clip requirements-training.txt pinned to cu118 wheels (int8 bnb + triton extras)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "custom_cuda_extension", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu pairs with the CPU torch build"),
    C("torch==2.1.2+cu118", "custom_cuda_extension", R, True, "torch==2.1.0",
      "CUDA build; torch_npu exists for 2.1.0 (not 2.1.2) and the wheel version must equal torch's"),
    C("torchvision==0.16.2+cu118", "custom_cuda_extension", R, True, "torchvision==0.16.0",
      "CUDA build of torchvision, paired with the torch pin"),
    C("# core model deps", "import_torch_npu", A, True, "torch-npu==2.1.0.post10",
      "the NPU adapter wheel is not installed otherwise"),
    C("bitsandbytes>=0.41.1", "custom_cuda_extension", X, False, None,
      "only for --use-bnb-linear (SwitchBack int8); no NPU support listed for LLM.int8 paths; unconfirmed"),
    C("triton==2.1.0", "triton_kernel_tuning", R, False, "triton-ascend",
      "only needed by the bnb SwitchBack path; triton-ascend is the NPU build; unconfirmed for bnb's kernels"),
    C("nvidia-ml-py>=12.535", "custom_cuda_extension", X, False, None,
      "NVML monitor script only; use npu-smi / torch.npu.utilization"),
])

# --------------------------------------------------------------------------------------------
# openai/CLIP, CLIP_benchmark, clip-retrieval
# --------------------------------------------------------------------------------------------
E("openai_clip_load", "clip/clip.py", AGN,
  "openai/CLIP clip/clip.py (load() with device default and JIT device patching)", [
    C('def load(name: str, device: Union[str, torch.device] = "cuda" if torch.cuda.is_available() else "cpu"',
      "device_type", R, True,
      'def load(name, device=("npu" if torch.npu.is_available() else "cuda" if torch.cuda.is_available() else "cpu"), ...',
      "callers relying on the default (clip.load('ViT-B/32')) silently get a CPU fp32 model on an NPU host"),
])

E("clipbench_cli", "clip_benchmark/cli.py", T2N,
  "LAION-AI/CLIP_benchmark clip_benchmark/cli.py (model x dataset grid, per-GPU subprocess fan-out)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu",
      "transfer_to_npu then maps the --device default, torch.cuda.set_device and 'cuda:%d' strings"),
    C('env["CUDA_VISIBLE_DEVICES"] = str(gpu)', "env_var", R, True, 'env["ASCEND_RT_VISIBLE_DEVICES"] = str(gpu)',
      "not rewritten by transfer_to_npu: every subprocess would see all NPUs and run on npu:0"),
])

E("clipbench_zeroshot", "clip_benchmark/metrics/zeroshot_classification.py", AGN,
  "LAION-AI/CLIP_benchmark metrics/zeroshot_classification.py (prompt-ensemble classifier, amp flag)", [
    C("autocast = torch.cuda.amp.autocast if amp else suppress", "amp", R, True,
      "autocast = partial(torch.autocast, device_type=torch.device(device).type) if amp else suppress",
      "--amp (default on) builds the text classifier without autocast on NPU"),
    C("autocast_ctx = torch.cuda.amp.autocast if amp else suppress", "amp", R, True,
      "autocast_ctx = partial(torch.autocast, device_type=torch.device(device).type) if amp else suppress",
      "image tower runs without autocast on NPU"),
])

E("clipret_mapper", "clip_retrieval/clip_inference/mapper.py", AGN,
  "rom1504/clip-retrieval clip_inference/mapper.py + load_clip (per-worker device, fp16 towers)", [
    C("if not torch.cuda.is_available():", "torch_cuda_api", R, True,
      "if not (torch.cuda.is_available() or torch.npu.is_available()):",
      "an NPU host returns 'cpu' here and embeds the whole dataset on the CPU"),
    C('return "cuda"', "device_type", R, True, 'return "npu" if torch.npu.is_available() else "cuda"',
      "worker device string"),
    C("with torch.no_grad(), torch.cuda.amp.autocast():", "amp", R, True,
      "with torch.no_grad(), torch.autocast(device_type=torch.device(self.device).type):",
      CUDA_AMP),
    C('def load_open_clip(clip_model, use_jit=True, device="cuda", clip_cache_path=None):', "device_type", R, False,
      'def load_open_clip(clip_model, use_jit=True, device="npu", clip_cache_path=None):',
      "default only; ClipMapper passes its device explicitly"),
    C('model = model.half() if device == "cuda" else model', "device_type", R, False,
      'model = model.half() if device in ("cuda", "npu") else model',
      "performance: on 'npu' the towers stay fp32 (correct but slower)"),
    C('model.encode_image(image_tensor.half() if device == "cuda" else image_tensor)', "device_type", R, False,
      'model.encode_image(image_tensor.half() if device in ("cuda", "npu") else image_tensor)',
      "must follow the model dtype choice above"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "torch.cuda.synchronize raises without a CUDA build"),
    C("peak_mb = torch.cuda.max_memory_allocated() / 2**20", "torch_cuda_api", R, True,
      "peak_mb = torch.npu.max_memory_allocated() / 2**20",
      "returns 0 without CUDA: the benchmark reports a wrong peak"),
])

E("clipret_faiss_index", "clip_retrieval/clip_index_gpu.py", EXPL,
  "clip-retrieval / autofaiss-style IVF-PQ index training on faiss-gpu with an exact-search recall check", [
    C("if use_gpu:", "custom_cuda_extension", B, True, "if use_gpu and faiss.get_num_gpus() > 0:",
      "use_gpu defaults to True; faiss-gpu has no Ascend build (faiss-cpu has no StandardGpuResources), so the "
      "GPU training path must be skipped on an NPU host"),
    C("q = torch.from_numpy(queries).cuda().half()", "tensor_to_device", R, True,
      "q = torch.from_numpy(queries).npu().half()", ".cuda() needs a CUDA build"),
    C("block = torch.from_numpy(xb[start:start + chunk]).cuda().half()", "tensor_to_device", R, True,
      "block = torch.from_numpy(xb[start:start + chunk]).npu().half()", ".cuda() needs a CUDA build"),
])

E("clipret_dockerfile", "Dockerfile", EXPL,
  "clip-retrieval / open_clip inference image (CUDA base image, faiss-gpu, DALI, xformers)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "custom_cuda_extension", R, True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA base image; the NPU image needs CANN (driver mounted by the Ascend docker runtime)"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6;8.9;9.0+PTX"', "env_var", X, False, None,
      "only read by nvcc extension builds"),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", X, False, None, "no CUDA toolkit in the NPU image"),
    C("RUN pip install torch==2.1.2 torchvision==0.16.2 --index-url https://download.pytorch.org/whl/cu118",
      "custom_cuda_extension", R, True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu "
      "&& pip install torch-npu==2.1.0.post10",
      "CUDA wheels; torch_npu needs CPU torch of the same x.y.z"),
    C("RUN pip install faiss-gpu==1.7.2 autofaiss==2.15.8", "custom_cuda_extension", R, False,
      "RUN pip install faiss-cpu==1.7.4 autofaiss==2.15.8",
      "faiss-gpu's GPU indexes are CUDA-only and the back serves from CPU; whether the wheel even installs on an "
      "aarch64 Ascend host is unconfirmed"),
    C("nvidia-dali-cuda110==1.30.0", "custom_cuda_extension", X, False, None,
      "DALI has no Ascend backend and nothing in this image needs it once decoding is on the CPU; whether the "
      "CUDA wheel installs on the NPU host is unconfirmed"),
    C("RUN pip install xformers==0.0.23.post1", "attention_kernel", X, True, None,
      "xformers has no NPU backend and the cu118 index drags in a CUDA torch"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, True, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "device exposure for the Ascend docker runtime"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,video", "env_var", X, False, None,
      "nvidia-container-runtime only"),
    C("ENV NCCL_DEBUG=WARN", "env_var", X, False, None, "no effect under HCCL"),
    C("HEALTHCHECK --interval=60s --timeout=10s CMD nvidia-smi", "env_var", R, True,
      "HEALTHCHECK --interval=60s --timeout=10s CMD npu-smi info > /dev/null || exit 1",
      "nvidia-smi is absent: the container is always reported unhealthy"),
])

# --------------------------------------------------------------------------------------------
# ALBEF / BLIP (salesforce)
# --------------------------------------------------------------------------------------------
E("albef_pretrain", "Pretrain.py", T2N,
  "salesforce/ALBEF Pretrain.py (ITA + ITM + MLM with momentum distillation, torch.distributed.launch)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu",
      "auto-migration covers --device cuda, torch.cuda.* in utils.py and the nccl backend"),
])

E("albef_utils", "utils.py", T2N,
  "salesforce/ALBEF utils.py (DeiT-style MetricLogger / init_distributed_mode, shared by BLIP)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')",
      "unsupported_op_workaround", R, True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float32, device='cuda')",
      "device is remapped by transfer_to_npu, but Ascend's table lists no fp64 for dist.all_reduce "
      "(bf16/fp16/fp32/int32/int64/bool)"),
])

E("blip_retrieval_model", "models/blip_retrieval.py", EXPL,
  "salesforce/BLIP models/blip_retrieval.py (ITC queue with instance ids, hard-negative ITM)", [
    C("torch.distributed.all_gather(tensors_gather, tensor, async_op=False)", "unsupported_op_workaround", R, True,
      "torch.distributed.all_gather(tensors_gather, tensor.int() if tensor.dtype == torch.int64 else tensor)",
      "concat_all_gather is called on int64 instance ids (and input_ids/attention masks with negative_all_rank); "
      "Ascend's table lists all_gather dtypes bf16/fp16/fp32/int8/int32/bool only - gather as int32 and cast back"),
])

E("blip_train_retrieval", "train_retrieval.py", EXPL,
  "salesforce/BLIP train_retrieval.py (ITM re-ranking evaluation; fork with --amp GradScaler)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NPU),
    C("with torch.cuda.amp.autocast(enabled=scaler.is_enabled()):", "amp", R, True,
      "with torch.autocast(device_type='npu', enabled=scaler.is_enabled()):", CUDA_AMP),
    C("torch.cuda.empty_cache()  # noqa: before re-ranking", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()", "silent no-op without CUDA; memory headroom only"),
    C("optimizer = torch.optim.AdamW(params=model.parameters()", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(params=model.parameters(), lr=config['init_lr'], "
      "weight_decay=config['weight_decay'])", "performance only"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=config.get('amp', False))", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler(enabled=config.get('amp', False))",
      "the CUDA scaler disables itself without CUDA: amp runs without loss scaling"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
    C("parser.add_argument('--device', default='cuda')", "device_type", R, True,
      "parser.add_argument('--device', default='npu')", "torch.device('cuda') fails on the NPU host"),
])

# --------------------------------------------------------------------------------------------
# LAVIS
# --------------------------------------------------------------------------------------------
E("lavis_blip2_base", "lavis/models/blip2_models/blip2.py", AGN,
  "salesforce/LAVIS models/blip2_models/blip2.py (Blip2Base.maybe_autocast, compute_sim_matrix)", [
    C("return torch.cuda.amp.autocast(dtype=dtype)", "amp", R, True,
      "return torch.autocast(device_type=self.device.type, dtype=dtype)",
      "enable_autocast is True for an NPU model, but the CUDA context is inactive: the fp16 ViT output meets the "
      "fp32 Q-Former without autocast (dtype mismatch)"),
])

E("lavis_dist_utils", "lavis/common/dist_utils.py", EXPL,
  "salesforce/LAVIS lavis/common/dist_utils.py (init_distributed_mode with a 365-day timeout)", [
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", R, True,
      "args.gpu = args.rank % torch.npu.device_count()",
      "device_count() is 0 without CUDA: ZeroDivisionError under SLURM"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)",
      "needs a CUDA build"),
    C('args.dist_backend = "nccl"', "dist_backend", R, True, 'args.dist_backend = "hccl"', "NCCL is not available"),
    C('t = torch.tensor([seed], dtype=torch.long, device="cuda")', "device_type", R, True,
      't = torch.tensor([seed], dtype=torch.long, device="npu")', "'cuda' tensor creation fails"),
])

E("lavis_runner", "lavis/runners/runner_base.py", EXPL,
  "salesforce/LAVIS lavis/runners/runner_base.py (device/scaler/dataloader properties)", [
    C("self._optimizer = torch.optim.AdamW(", "fused_optimizer", R, False,
      "self._optimizer = torch_npu.optim.NpuFusedAdamW(", "performance only (lr_scale param groups are kept)"),
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", R, True, "self._scaler = torch.npu.amp.GradScaler()",
      "run.amp=True: the CUDA scaler disables itself, fp16 runs without loss scaling"),
    C('return self.device.type == "cuda"', "device_type", R, True, 'return self.device.type in ("cuda", "npu")',
      "cuda_enabled=False on NPU: prepare_sample leaves every batch on the CPU while the model is on the NPU"),
])

E("lavis_base_task", "lavis/tasks/base_task.py", EXPL,
  "salesforce/LAVIS lavis/tasks/base_task.py (train_inner_loop with amp, move_to_cuda)", [
    C("return tensor.cuda()", "tensor_to_device", R, True, "return tensor.npu()",
      "move_to_cuda: .cuda() needs a CUDA build (evaluation() defaults cuda_enabled=True)"),
    C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", R, True,
      "with torch.autocast(device_type='npu', enabled=use_amp):", CUDA_AMP),
])

E("lavis_dataloader_utils", "lavis/datasets/datasets/dataloader_utils.py", EXPL,
  "salesforce/LAVIS datasets/dataloader_utils.py (UNITER/apex-style PrefetchLoader on a side CUDA stream)", [
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", R, True, "self.stream = torch.npu.Stream()",
      "CUDA stream creation needs a CUDA build (every map-style loader is wrapped in PrefetchLoader)"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", R, True, "with torch.npu.stream(self.stream):",
      "CUDA stream context"),
    C("self.batch = move_to_cuda(self.batch)", "tensor_to_device", R, True,
      "self.batch = move_to_device(self.batch, torch.device('npu', torch.npu.current_device()))",
      "move_to_cuda calls .cuda() on every tensor of the batch"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", R, True,
      "torch.npu.current_stream().wait_stream(self.stream)", "current CUDA stream"),
    C("batch.record_stream(torch.cuda.current_stream())", "torch_cuda_api", R, True,
      "batch.record_stream(torch.npu.current_stream())", "a CUDA stream cannot be recorded on an NPU tensor"),
])

E("lavis_pretrain_yaml", "lavis/projects/blip2/train/pretrain_stage1.yaml", EXPL,
  "salesforce/LAVIS projects/blip2/train/pretrain_stage1.yaml (run.device, amp, distributed)", [
    C('device: "cuda"', "device_type", R, True, 'device: "npu"',
      "RunnerBase.device is torch.device(run_cfg.device)"),
])

E("lavis_run_script", "run_scripts/blip2/train/pretrain.sh", EXPL,
  "LAVIS run_scripts/blip2 launcher (torch.distributed.run, nvidia-smi batch-size probe)", [
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "ignored by the NPU runtime"),
    C('NUM_GPUS=$(echo "${CUDA_VISIBLE_DEVICES}"', "env_var", R, False,
      'NUM_GPUS=$(echo "${ASCEND_RT_VISIBLE_DEVICES}" | tr \',\' \'\\n\' | wc -l)',
      "follows the renamed visibility variable"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "env_var", R, True, "npu-smi info",
      "nvidia-smi is absent and set -e aborts the launcher"),
    C("GPU_MEM_MB=$(nvidia-smi --query-gpu=memory.total", "env_var", R, True,
      "GPU_MEM_MB=$(npu-smi info -t memory -i 0 | awk -F: '/HBM Capacity/ {print $2+0}')",
      "empty without nvidia-smi: the test errors and the 40G batch size is always chosen"),
    C("export NCCL_P2P_DISABLE=0", "env_var", X, False, None, "NCCL-only"),
    C("export NCCL_IB_DISABLE=1", "env_var", X, False, None, "NCCL-only"),
])

E("lavis_env_yml", "environment.yml", EXPL,
  "LAVIS-style conda environment.yml (pytorch + pytorch-cuda, nvidia channel, CUDA-only pip extras)", [
    C("=- nvidia", "custom_cuda_extension", X, False, None,
      "channel only supplies CUDA packages; harmless once pytorch-cuda is gone"),
    C("- pytorch=2.0.1", "custom_cuda_extension", R, False, "- pytorch=2.1.0",
      "2.0.1 only pairs with EOL torch_npu 2.0.1 (CANN 7.0); move to a maintained pair"),
    C("- pytorch-cuda=11.8", "custom_cuda_extension", R, True, "- cpuonly",
      "selects the CUDA build of pytorch; torch_npu is installed on top of the CPU build"),
    C("- cudatoolkit-dev=11.7", "custom_cuda_extension", X, False, None,
      "nvcc toolkit package, useless without CUDA; that it makes the solve fail on aarch64 hosts is unconfirmed"),
    C("- nccl=2.18", "dist_backend", X, False, None, "HCCL ships with CANN"),
    C("=- pip:", "import_torch_npu", A, True, "- torch-npu==2.1.0.post10", "the adapter wheel"),
    C("- bitsandbytes==0.39.1", "custom_cuda_extension", X, False, None,
      "CUDA-only build of this version; not imported by the BLIP-2 code paths used here; unconfirmed"),
    C("- nvidia-ml-py3", "custom_cuda_extension", X, False, None, "NVML only"),
])

# --------------------------------------------------------------------------------------------
# EVA-CLIP
# --------------------------------------------------------------------------------------------
E("evaclip_vit", "eva_clip/eva_vit_model.py", EXPL,
  "baaivision/EVA EVA-CLIP eva_vit_model.py (xformers attention, SwiGLU, RoPE, DeepSpeed checkpointing)", [
    C("x = xops.memory_efficient_attention(", "attention_kernel", R, True,
      "x = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), "
      "dropout_p=self.xattn_drop if self.training else 0.0, scale=self.scale).transpose(1, 2)",
      "EVA-CLIP model configs set xattn=true; xops is None on NPU (xformers has no NPU backend) -> AttributeError"),
    C("hidden = self.act(x1) * x2", "npu_fused_op", R, False,
      "hidden = torch_npu.npu_swiglu(torch.cat([x1, x2], dim=-1), dim=-1)",
      "performance only (needs import torch_npu); npu_swiglu computes SiLU(first half) * second half"),
])

E("evaclip_main", "training/main.py", EXPL,
  "baaivision/EVA EVA-CLIP training/main.py (DeepSpeed ZeRO path, GradScaler path, peak-memory log)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NPU),
    C("from torch.cuda.amp import GradScaler", "amp", R, True, "from torch.npu.amp import GradScaler",
      "non-DeepSpeed --precision amp would run without loss scaling"),
    C("args, ds_init = parse_args(args)", "compile_mode", A, False,
      "torch_npu.npu.set_compile_mode(jit_compile=False)", COMPILE),
    C('deepspeed.init_distributed(dist_backend="nccl", init_method=args.dist_url)', "dist_backend", R, True,
      'deepspeed.init_distributed(dist_backend="hccl", init_method=args.dist_url)', "NCCL is not available"),
    C("device = torch.device('cuda:%d' % args.local_rank)", "device_type", R, True,
      "device = torch.device('npu:%d' % args.local_rank)", "per-rank device"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)",
      "needs a CUDA build"),
    C("f'Running on {torch.cuda.get_device_name(device)}, '", "torch_cuda_api", R, True,
      "f'Running on {torch.npu.get_device_name(device)}, '", "raises without CUDA"),
    C('logging.info(f"peak memory this epoch: {torch.cuda.max_memory_allocated()', "torch_cuda_api", R, True,
      'logging.info(f"peak memory this epoch: {torch.npu.max_memory_allocated() / 2**30:.1f} GiB")',
      "returns 0 without CUDA: the logged peak is wrong"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "calls into the CUDA allocator bindings, absent in a non-CUDA build"),
])

E("evaclip_reqs", "requirements.txt", EXPL,
  "EVA-CLIP requirements.txt (cu116 torch, deepspeed 0.8, xformers, apex from git)", [
    C("torch==1.12.1+cu116", "custom_cuda_extension", R, True, "torch==2.1.0",
      "CUDA build; no torch_npu release for torch 1.12"),
    C("torchvision==0.13.1+cu116", "custom_cuda_extension", R, True, "torchvision==0.16.0", "paired CUDA build"),
    C("# distributed / memory", "import_torch_npu", A, True, "torch-npu==2.1.0.post10", "the adapter wheel"),
    C("deepspeed==0.8.3", "distributed_framework", R, False, "deepspeed>=0.14",
      "NPU support is in later upstream DeepSpeed (accelerator/npu_accelerator.py); which release first ships it "
      "is unconfirmed"),
    C("xformers==0.0.16", "attention_kernel", X, True, None,
      "no NPU backend; the xattn path is replaced by SDPA / npu_fusion_attention"),
    C("git+https://github.com/NVIDIA/apex.git@22.04-dev#egg=apex", "custom_cuda_extension", R, True,
      "apex @ git+https://gitee.com/ascend/apex (Ascend Apex patch), or drop it",
      "a Python-only NVIDIA apex imports but FusedLayerNorm/FusedLAMB then fail to load their CUDA kernels"),
    C("=pynvml", "custom_cuda_extension", X, False, None, "NVML only"),
    C("=gpustat", "custom_cuda_extension", X, False, None, "NVML only"),
])

# --------------------------------------------------------------------------------------------
# SigLIP-style training
# --------------------------------------------------------------------------------------------
E("siglip_hf_train", "train_siglip.py", EXPL,
  "SigLIP fine-tuning script on HF transformers SiglipModel (torchrun, bf16 autocast, flash_attention_2)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NPU),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "needs a CUDA build"),
    C('pin_memory_device="cuda",', "pin_memory", R, True, 'pin_memory_device="npu",',
      "the DataLoader pin thread pins for the named device: 'cuda' fails without a CUDA build"),
    C("    args = parse_args()", "compile_mode", A, False, "torch_npu.npu.set_compile_mode(jit_compile=False)",
      COMPILE),
    C('dist.init_process_group("nccl", rank=rank, world_size=world_size)', "dist_backend", R, True,
      'dist.init_process_group("hccl", rank=rank, world_size=world_size)', "NCCL is not available"),
    C('device = torch.device("cuda", local_rank)', "device_type", R, True, 'device = torch.device("npu", local_rank)',
      "per-rank device"),
    C("torch.backends.cuda.enable_flash_sdp(True)", "attention_kernel", X, False, None,
      "marked unsupported in Ascend's list; it only sets a process-wide flag, whether it raises is unconfirmed"),
    C('attn_implementation="flash_attention_2",', "attention_kernel", R, True, 'attn_implementation="sdpa",',
      "flash-attn cannot be installed on NPU; SDPA dispatches to the NPU fused attention"),
    C('model = torch.compile(model, mode="max-autotune")', "compile_mode", R, False,
      'model = torch.compile(model, backend="npugraphs")',
      "only with --compile; Triton autotuning of Inductor kernels on NPU unconfirmed"),
    C('with torch.autocast("cuda", dtype=torch.bfloat16):', "amp", R, True,
      'with torch.autocast("npu", dtype=torch.bfloat16):', CUDA_AMP),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "raises without CUDA"),
    C("mem = torch.cuda.max_memory_allocated(device) / 2**30", "torch_cuda_api", R, True,
      "mem = torch.npu.max_memory_allocated(device) / 2**30", "an npu device is rejected by the CUDA call"),
])

# --------------------------------------------------------------------------------------------
# Inf-CL (tile-wise / ring contrastive loss with Triton kernels)
# --------------------------------------------------------------------------------------------
E("infcl_flash", "inf_cl/flash.py", EXPL,
  "DAMO-NLP-SG/Inf-CLIP inf_cl/flash.py (Triton tile-wise LSE forward/backward for contrastive loss)", [
    C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", R, True,
      "return 64, 128  # fixed tile sizes on NPU (no SM generations)",
      "get_device_capability returns None on NPU unless TORCH_NPU_DEVICE_CAPABILITY is set: tuple unpacking fails"),
    C('triton.Config({"BLOCK_Q": 64, "BLOCK_K": 64}, num_warps=4, num_stages=3)', "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK_Q": 64, "BLOCK_K": 64})',
      "warp/stage counts are GPU tuning knobs; triton-ascend semantics unconfirmed"),
    C('triton.Config({"BLOCK_Q": 64, "BLOCK_K": 128}, num_warps=8, num_stages=3)', "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK_Q": 64, "BLOCK_K": 128})', "as above; unconfirmed"),
    C('triton.Config({"BLOCK_Q": 128, "BLOCK_K": 64}, num_warps=8, num_stages=4)', "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK_Q": 128, "BLOCK_K": 64})', "as above; unconfirmed"),
    C('eviction_policy="evict_last")', "triton_kernel_tuning", R, False, "other=0.0)",
      "cache eviction hint for the GPU L2; unconfirmed on triton-ascend"),
    C("with torch.cuda.device(q.device.index):", "torch_cuda_api", R, True, "with torch.npu.device(q.device.index):",
      "torch.cuda.device cannot switch to an NPU index without CUDA"),
    C("with torch.cuda.device(q.device):", "torch_cuda_api", R, True, "with torch.npu.device(q.device):",
      "rejects an npu device"),
    C("BLOCK_Q=BLOCK_Q, BLOCK_K=BLOCK_K, BLOCK_D=BLOCK_D, num_warps=8, num_stages=2)", "triton_kernel_tuning", R,
      False, "BLOCK_Q=BLOCK_Q, BLOCK_K=BLOCK_K, BLOCK_D=BLOCK_D)", "launch-time warp/stage hints; unconfirmed"),
    C("BLOCK_Q=BLOCK_Q, BLOCK_K=BLOCK_K, BLOCK_D=BLOCK_D, num_stages=2, num_warps=8)", "triton_kernel_tuning", R,
      False, "BLOCK_Q=BLOCK_Q, BLOCK_K=BLOCK_K, BLOCK_D=BLOCK_D)", "launch-time warp/stage hints; unconfirmed"),
    C("@torch.cuda.amp.custom_fwd(cast_inputs=torch.float16)", "amp", R, True,
      "@torch.amp.custom_fwd(device_type='npu', cast_inputs=torch.float16)",
      "the CUDA decorator checks the CUDA autocast state: under NPU autocast inputs reach the kernel uncast"),
    C("@torch.cuda.amp.custom_bwd", "amp", R, False, "@torch.amp.custom_bwd(device_type='npu')",
      "restores the forward's (CUDA) autocast state for backward; harmless when that state was off"),
    C('dev = "cuda"', "device_type", R, True, 'dev = "npu"', "numerical self-check under __main__"),
])

E("infcl_ring", "inf_cl/ring.py", EXPL,
  "DAMO-NLP-SG/Inf-CLIP inf_cl/ring.py (ring P2P of key blocks on a side CUDA stream)", [
    C("self.comm_stream = torch.cuda.Stream()", "torch_cuda_api", R, True, "self.comm_stream = torch.npu.Stream()",
      "CUDA stream creation needs a CUDA build"),
    C("self.comm_stream.wait_stream(torch.cuda.current_stream())", "torch_cuda_api", R, True,
      "self.comm_stream.wait_stream(torch.npu.current_stream())", "current CUDA stream"),
    C("with torch.cuda.stream(self.comm_stream):", "torch_cuda_api", R, True, "with torch.npu.stream(self.comm_stream):",
      "CUDA stream context"),
    C("torch.cuda.current_stream().wait_stream(self.comm_stream)", "torch_cuda_api", R, True,
      "torch.npu.current_stream().wait_stream(self.comm_stream)", "current CUDA stream"),
    C('dist.init_process_group(backend="nccl")', "dist_backend", R, True, 'dist.init_process_group(backend="hccl")',
      "self-test launcher (torchrun -m inf_cl.ring)"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "self-test"),
    C('q = torch.randn(1024, 256, device=f"cuda:{local_rank}", requires_grad=True)', "device_type", R, True,
      'q = torch.randn(1024, 256, device=f"npu:{local_rank}", requires_grad=True)', "self-test"),
    C('k = torch.randn(1024, 256, device=f"cuda:{local_rank}", requires_grad=True)', "device_type", R, True,
      'k = torch.randn(1024, 256, device=f"npu:{local_rank}", requires_grad=True)', "self-test"),
])

# --------------------------------------------------------------------------------------------
# fastclip (a CLIP-training toolkit with its own CUDA extension and DALI loader)
# --------------------------------------------------------------------------------------------
E("fastclip_setup", "setup.py", EXPL,
  "setup.py of a CLIP-training toolkit building fastclip._C (CUDAExtension when CUDA is found, else CPU kernels)", [
    C('if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1":',
      "custom_cuda_extension", B, False,
      'elif os.getenv("FASTCLIP_NPU", "0") == "1":  # NpuExtension with Ascend C kernels',
      "on an NPU host the CPU reference kernels build fine; an Ascend C / NpuExtension branch is a performance port"),
    C('"retrieval": ["faiss-gpu>=1.7.2", "autofaiss"],', "custom_cuda_extension", R, False,
      '"retrieval": ["faiss-cpu>=1.7.4", "autofaiss"],', "only for the optional extra; faiss-gpu is CUDA-only"),
])

E("fastclip_fused_loss", "fastclip/ops/fused_loss.py", AGN,
  "Python bindings of a fused contrastive-loss extension (_C softmax-xent / sigmoid loss / fp16 top-k)", [
    C("loss = _FusedSoftmaxXent.apply(logits, labels, smoothing)", "custom_cuda_extension", B, True,
      "loss = _FusedSoftmaxXent.apply(logits, labels, smoothing) if logits.is_cuda else "
      "F.cross_entropy(logits, labels, label_smoothing=smoothing, reduction='none')",
      "the only fused entry point without a device check: the C++ op rejects NPU tensors"),
    C('dev = "cuda"', "device_type", R, True, 'dev = "npu"', "benchmark entry point"),
    C("torch.cuda.synchronize()  # drain the previous variant", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # drain the previous variant", "raises without CUDA"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "end = torch.npu.Event(enable_timing=True)", "CUDA events"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "raises without CUDA"),
])

E("fastclip_dali_loader", "fastclip/data/dali_wds.py", EXPL,
  "NVIDIA DALI webdataset loader for CLIP pre-training (mixed-device JPEG decode, GPU resize/normalise)", [
    C("from nvidia.dali import fn, pipeline_def, types", "custom_cuda_extension", R, False,
      "from nvidia.dali import fn, pipeline_def, types  # CPU-only pipeline",
      "DALI has no Ascend backend; whether a CPU-only DALI pipeline runs on an aarch64 NPU host is unconfirmed "
      "(otherwise the backend is replaced by the open_clip webdataset loader)"),
    C("from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy", "custom_cuda_extension", R, False,
      "from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy",
      "as above; unconfirmed"),
    C('=device="mixed",', "device_type", R, True, 'device="cpu",', "nvJPEG hybrid decode needs an NVIDIA GPU"),
    C("hw_decoder_load=0.65,", "device_type", X, False, None,
      "hardware-decoder share of the mixed backend; not an argument of the CPU decoder (unconfirmed)"),
    C('images = fn.resize(images, device="gpu", resize_x=image_size', "device_type", R, True,
      'images = fn.resize(images, device="cpu", resize_x=image_size, resize_y=image_size,',
      "GPU operator"),
    C('images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)', "device_type", R, True,
      'images = fn.decoders.image(jpegs, device="cpu", output_type=types.RGB)', "mixed decode needs a GPU"),
    C('images = fn.resize(images, device="gpu", resize_shorter=image_size', "device_type", R, True,
      'images = fn.resize(images, device="cpu", resize_shorter=image_size, interp_type=types.INTERP_CUBIC)',
      "GPU operator"),
    C("device_id=local_rank,", "device_type", R, True, "device_id=None,",
      "a DALI pipeline with a device_id opens a CUDA context"),
])
