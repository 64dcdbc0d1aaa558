# Labels for probe271: dense video captioning / video-to-text generation (CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit; see README.md for the policy.
# Target assumed throughout: torch 2.1.0 + torch_npu 2.1.0.postN on an aarch64 Atlas A2 host without CUDA.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
SEED_NOTE = ("silent no-op without CUDA; torch.manual_seed in the same function already seeds the NPU "
             "generator through the PrivateUse1 hook (unconfirmed in the knowledge notes)")

# ----------------------------------------------------------------------------------------------
# PDVC
# ----------------------------------------------------------------------------------------------
E("pdvc_train", "train.py", "explicit_replacement",
  "PDVC train.py (opt.gpu_id, CUDA_VISIBLE_DEVICES, checkpoint resume, per-epoch eval)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "entry script: torch 2.1 needs the explicit import before 'npu' devices/torch.npu exist"),
      C("if opt.device=='cuda':", "device_type", "replace", False, "if opt.device == 'npu':",
        "after --device defaults to 'npu' this branch is silently skipped; it only guards a timing sync"),
      C("torch.cuda.synchronize(opt.device)", "torch_cuda_api", "replace", False, "torch.npu.synchronize(opt.device)",
        "timing-only sync, unreachable once the guard above compares against 'cuda'"),
      C("=if opt.device == 'cuda':", "device_type", "replace", False, "if opt.device == 'npu':",
        "second timing guard; silently skipped on NPU, no functional effect"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
        "timing-only sync inside the guard above"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "returns silently when CUDA was never initialised; NPU cache is simply not released (memory only)"),
      C("map_location=lambda storage, loc: storage.cuda())", "tensor_to_device", "replace", True,
        "map_location=torch.device(opt.device))",
        "Storage.cuda() raises on a host without CUDA; the best-model reload at the end of training fails"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = ",".join([str(i) for i in opt.gpu_id])', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = ",".join([str(i) for i in opt.gpu_id])',
        "--gpu_id is silently ignored on NPU; the job lands on NPU 0 whatever the user asked for"),
  ])

E("pdvc_eval", "eval.py", "explicit_replacement",
  "PDVC eval.py (restores info.json options, --eval_device, densevid_eval3 scoring)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "entry script; needed before map_location/model.to('npu')"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if not torch.npu.is_available():",
        "is False on NPU so nthreads is forced to 0: data loading silently single-process (performance only)"),
      C("parser.add_argument('--eval_device', type=str, default='cuda')", "device_type", "replace", True,
        "parser.add_argument('--eval_device', type=str, default='npu')",
        "default device string feeds torch.load(map_location=...) and model.to(...); 'cuda' fails"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(opt.gpu_id)', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = ",".join(opt.gpu_id)',
        "device selection silently ignored on NPU"),
  ])

E("pdvc_opts", "opts.py", "explicit_replacement",
  "PDVC opts.py (argparse + YAML cfg merge)",
  [
      C("parser.add_argument('--device', default='cuda'", "device_type", "replace", True,
        "parser.add_argument('--device', default='npu', help='device to use for training / testing')",
        "opt.device is passed to model.to(), criterion.to() and every batch transfer"),
  ])

E("pdvc_msda_setup", "pdvc/ops/setup.py", "kernel_rewrite",
  "Deformable-DETR / PDVC ops/setup.py building MultiScaleDeformableAttention with CUDAExtension",
  [
      C("from torch.utils.cpp_extension import CUDAExtension", "custom_cuda_extension", "replace", False,
        "from torch_npu.utils.cpp_extension import NpuExtension",
        "the import itself works on CPU torch; only needed because the extension class changes below"),
      C("if torch.cuda.is_available() and CUDA_HOME is not None:", "custom_cuda_extension", "replace", True,
        "if torch_npu.npu.is_available():",
        "False on an NPU host, so the else branch raises NotImplementedError and make.sh aborts"),
      C("extension = CUDAExtension", "custom_cuda_extension", "replace", True, "extension = NpuExtension",
        "no nvcc on the host; an NPU build goes through NpuExtension (Ascend C kernels bound via torch_npu)"),
      C("sources += source_cuda", "custom_cuda_extension", "replace", True,
        "sources += glob.glob(os.path.join(extensions_dir, 'npu', '*.cpp'))",
        ".cu kernels cannot be compiled; the 1-D MSDA kernel has to be rewritten (Ascend C) or dropped"),
      C('define_macros += [("WITH_CUDA", None)]', "custom_cuda_extension", "replace", True,
        'define_macros += [("WITH_NPU", None)]',
        "WITH_CUDA makes ms_deform_attn.h dispatch to ms_deform_attn_cuda_* symbols that no longer exist"),
      C('extra_compile_args["nvcc"] = [', "custom_cuda_extension", "removal", False, None,
        "nvcc flags are ignored once no .cu sources remain; dead configuration"),
  ])

E("pdvc_msda_func", "pdvc/ops/functions/ms_deform_attn_func.py", "kernel_rewrite",
  "Deformable-DETR ms_deform_attn_func.py (autograd Function over the compiled op + grid_sample reference)",
  [
      C("=import MultiScaleDeformableAttention as MSDA", "custom_cuda_extension", "replace", True,
        "try:\n    import MultiScaleDeformableAttention as MSDA\nexcept ImportError:  # NPU without the rewritten kernel\n    MSDA = None",
        "module-level import of the nvcc-built extension; ImportError breaks the whole model import chain"),
  ])

E("pdvc_msda_module", "pdvc/ops/modules/ms_deform_attn.py", "kernel_rewrite",
  "PDVC temporal MSDeformAttn module (1-D sampling on (1, T_l) maps)",
  [
      C("from ..functions import MSDeformAttnFunction", "custom_cuda_extension", "replace", True,
        "from ..functions.ms_deform_attn_func import MSDeformAttnFunction, ms_deform_attn_core_pytorch",
        "the NPU fallback below needs the grid_sample reference implementation"),
      C("output = MSDeformAttnFunction.apply(", "custom_cuda_extension", "add_branch", True,
        "output = MSDeformAttnFunction.apply(...) if MSDA is not None else ms_deform_attn_core_pytorch(value, input_spatial_shapes, sampling_locations, attention_weights)",
        "call site of the CUDA op; on NPU route to the grid_sample path (grid_sampler_2d has an NPU kernel)"),
  ])

E("pdvc_msda_test", "pdvc/ops/test.py", "kernel_rewrite",
  "Deformable-DETR ops/test.py (forward vs. reference, gradcheck, timing)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "standalone test script"),
      C("shapes = torch.as_tensor([(1, 16), (1, 8)], dtype=torch.long).cuda()", "tensor_to_device", "replace", True,
        "shapes = torch.as_tensor([(1, 16), (1, 8)], dtype=torch.long).npu()", "module-level .cuda() raises"),
      C("value = torch.rand(N, S, M, channels).cuda() * 0.01", "tensor_to_device", "replace", True,
        "value = torch.rand(N, S, M, channels).npu() * 0.01", ".cuda() raises"),
      C("sampling_locations = torch.rand(N, Lq, M, L, P, 2).cuda()", "tensor_to_device", "replace", True,
        "sampling_locations = torch.rand(N, Lq, M, L, P, 2).npu()", ".cuda() raises"),
      C("attention_weights = torch.rand(N, Lq, M, L, P).cuda() + eps", "tensor_to_device", "replace", True,
        "attention_weights = torch.rand(N, Lq, M, L, P).npu() + eps", ".cuda() raises"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "torch.cuda.synchronize() initialises CUDA and raises on a CUDA-less build"),
      C("torch.cuda.synchronize(); elapsed = time.time() - t0", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize(); elapsed = time.time() - t0", "same; also needed for a meaningful NPU timing"),
      C("torch.cuda.max_memory_allocated() / 2 ** 20", "torch_cuda_api", "replace", False,
        "f'(peak mem {torch.npu.max_memory_allocated() / 2 ** 20:.1f} MB)')",
        "returns 0 when CUDA is uninitialised; report-only"),
  ])

E("pdvc_model", "pdvc/pdvc.py", "explicit_replacement",
  "PDVC pdvc/pdvc.py (model, PostProcess, build()) - device-agnostic, no edits expected",
  [])

E("pdvc_utils", "misc/utils.py", "explicit_replacement",
  "PDVC misc/utils.py (set_seed, logger, folder helpers)",
  [
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        SEED_NOTE),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if not torch.npu.is_available():", "memory report silently returns 0 on NPU; log-only"),
      C("return torch.cuda.max_memory_allocated() / 1024. / 1024.", "torch_cuda_api", "replace", False,
        "return torch.npu.max_memory_allocated() / 1024. / 1024.", "log-only peak memory"),
      C("return batch.cuda(non_blocking=non_blocking)", "tensor_to_device", "replace", True,
        "return batch.npu(non_blocking=non_blocking)", "Tensor.cuda() raises on a CUDA-less host"),
  ])

E("pdvc_requirements", "requirement.txt", "explicit_replacement",
  "PDVC requirement.txt (torch 1.7.1+cu110 from the torch_stable index)",
  [
      C("=-f https://download.pytorch.org/whl/torch_stable.html", "device_type", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; harmless once the +cu pins are gone, CPU index is what torch_npu expects on x86"),
      C("=torch==1.7.1+cu110", "device_type", "replace", True, "torch==2.1.0",
        "+cu110 local version has no aarch64 wheel and torch_npu has no 1.7 pairing"),
      C("=torchvision==0.8.2+cu110", "device_type", "replace", True, "torchvision==0.16.0",
        "CUDA build pinned to torch 1.7.1; must follow the torch pin"),
      C("=ipdb", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "torch-npu pin appended at the end of the file (order is irrelevant to pip)"),
  ])

E("pdvc_train_sh", "scripts/train_anet.sh", "explicit_replacement",
  "PDVC training/eval shell launcher with on-demand build of the CUDA op",
  [
      C("=set -e", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "bare-metal launcher: CANN libraries must be on the path before python imports torch_npu"),
      C("export CUDA_VISIBLE_DEVICES=${GPU_ID}", "env_var", "replace", False,
        "export ASCEND_RT_VISIBLE_DEVICES=${GPU_ID}",
        "redundant: train.py/eval.py set the visible devices themselves from --gpu_id (once ported)"),
      C("export CUDA_LAUNCH_BLOCKING=0", "env_var", "replace", False, "export ASCEND_LAUNCH_BLOCKING=0",
        "0 is the default anyway; debug knob only"),
      C("=sh make.sh", "custom_cuda_extension", "removal", True, None,
        "under set -e the nvcc build aborts the script; skip it (pure-PyTorch MSDA fallback) or build the NPU variant"),
      C("nvidia-smi --query-gpu=name,memory.total --format=csv", "device_capability_check", "replace", True,
        "npu-smi info", "nvidia-smi is absent on an Ascend host and set -e stops the launcher"),
  ])

# ----------------------------------------------------------------------------------------------
# SwinBERT
# ----------------------------------------------------------------------------------------------
E("swinbert_run", "src/tasks/run_caption_VidSwinBert.py", "explicit_replacement",
  "SwinBERT src/tasks/run_caption_VidSwinBert.py (DeepSpeed / apex / native AMP paths)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "entry script; also lets DeepSpeed detect the NPU accelerator"),
      C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", True,
        "from torch_npu.optim import NpuFusedAdamW",
        "apex FusedAdam needs the amp_C/fused_adam CUDA kernels; Ascend apex does not provide it"),
      C("optimizer = FusedAdam(optimizer_grouped_parameters, lr=args.learning_rate, eps=args.adam_epsilon,",
        "fused_optimizer", "replace", True,
        "optimizer = NpuFusedAdamW(optimizer_grouped_parameters, lr=args.learning_rate, eps=args.adam_epsilon)",
        "--use_fused_adam defaults to true, so this path is taken by default"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=True)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=True)",
        "CUDA GradScaler disables itself without CUDA (warning only); pairs with the autocast below"),
      C("with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
        "CUDA autocast is silently disabled on NPU: native_amp runs in fp32"),
      C("memory = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
        "memory = torch.npu.max_memory_allocated()", "log-only; reports 0 MB on NPU"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA; memory only"),
  ])

E("swinbert_comm", "src/utils/comm.py", "explicit_replacement",
  "SwinBERT src/utils/comm.py (maskrcnn-benchmark style dist helpers, MPI env mapping)",
  [
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
      C("deepspeed.init_distributed(dist_backend='nccl', init_method='env://')", "dist_backend", "replace", True,
        "deepspeed.init_distributed(dist_backend='hccl', init_method='env://')", "NCCL backend unavailable on NPU"),
      C("=backend='nccl', init_method='env://'", "dist_backend", "replace", True,
        "backend='hccl', init_method='env://'", "NCCL backend unavailable on NPU"),
      C('return int(os.environ.get("LOCAL_SIZE", torch.cuda.device_count()))', "torch_cuda_api", "replace", True,
        'return int(os.environ.get("LOCAL_SIZE", torch.npu.device_count()))',
        "fallback silently becomes 0 when LOCAL_SIZE is not exported (torch.distributed.launch)"),
      C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
        'tensor = torch.ByteTensor(storage).to("npu")', "HCCL all_gather needs device tensors; 'cuda' raises"),
      C('local_size = torch.LongTensor([tensor.numel()]).to("cuda")', "tensor_to_device", "replace", True,
        'local_size = torch.LongTensor([tensor.numel()]).to("npu")', "same"),
      C('size_list = [torch.LongTensor([0]).to("cuda") for _ in range(world_size)]', "tensor_to_device", "replace",
        True, 'size_list = [torch.LongTensor([0]).to("npu") for _ in range(world_size)]', "same"),
      C('tensor_list.append(torch.ByteTensor(size=(max_size,)).to("cuda"))', "tensor_to_device", "replace", True,
        'tensor_list.append(torch.ByteTensor(size=(max_size,)).to("npu"))', "same"),
      C('padding = torch.ByteTensor(size=(max_size - local_size,)).to("cuda")', "tensor_to_device", "replace", True,
        'padding = torch.ByteTensor(size=(max_size - local_size,)).to("npu")', "same"),
      C("device = device or torch.device('cuda', torch.cuda.current_device())", "device_type", "replace", True,
        "device = device or torch.device('npu', torch.npu.current_device())",
        "torch.cuda.current_device() raises; broadcast tensor must live on the NPU for HCCL"),
  ])

E("swinbert_ds", "src/utils/deepspeed.py", "explicit_replacement",
  "SwinBERT src/utils/deepspeed.py (DeepSpeed config builder, fp16 input cast)",
  [
      C("config_params['amp'] = {", "amp", "replace", False, "config_params['fp16'] = {",
        "DeepSpeed's 'amp' mode delegates to apex.amp; works only if Ascend apex is installed (unconfirmed), "
        "native fp16/bf16 blocks are the safer NPU choice"),
      C("major, minor = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
        "major, minor = (8, 0)  # NPU: no CUDA compute capability (torch.npu.get_device_capability() returns None)",
        "raises without CUDA; on NPU the capability query returns None, so the tuple unpack fails too"),
  ])

E("swinbert_misc", "src/utils/miscellaneous.py", "explicit_replacement",
  "SwinBERT src/utils/miscellaneous.py (set_seed, tsv helpers, memory reports)",
  [
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        SEED_NOTE),
      C("['nvidia-smi', '--query-gpu=memory.used', '--format=csv,nounits,noheader'],", "device_capability_check",
        "replace", True, "['npu-smi', 'info'],  # and parse the HBM-Usage column",
        "FileNotFoundError on an Ascend host (not caught here); the OOM watchdog calling it crashes"),
      C("torch.cuda.memory_allocated() / mega_bytes", "torch_cuda_api", "replace", False,
        "string += ' | allocated: {:.1f}'.format(torch.npu.memory_allocated() / mega_bytes)", "report-only, 0 on NPU"),
      C("torch.cuda.max_memory_allocated() / mega_bytes", "torch_cuda_api", "replace", False,
        "string += ' | max allocated: {:.1f}'.format(torch.npu.max_memory_allocated() / mega_bytes)",
        "report-only"),
      C("torch.cuda.memory_reserved() / mega_bytes", "torch_cuda_api", "replace", False,
        "string += ' | reserved: {:.1f}'.format(torch.npu.memory_reserved() / mega_bytes)", "report-only"),
      C("torch.cuda.max_memory_reserved() / mega_bytes", "torch_cuda_api", "replace", False,
        "string += ' | max reserved: {:.1f}'.format(torch.npu.max_memory_reserved() / mega_bytes)", "report-only"),
  ])

E("swinbert_docker", "docker/Dockerfile", "explicit_replacement",
  "SwinBERT docker image (CUDA 11.1 devel base, torch 1.8.1+cu111, NVIDIA apex --cuda_ext, DeepSpeed ops)",
  [
      C("FROM nvidia/cuda:11.1.1-cudnn8-devel-ubuntu18.04", "device_type", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.9",
        "CUDA base image; the NPU image needs CANN (driver mounted from the host)"),
      C("-f https://download.pytorch.org/whl/torch_stable.html", "device_type", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index of the torch RUN line; CPU index is what torch_npu expects on x86"),
      C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None,
        "points at a directory that no longer exists; harmless"),
      C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None, "only read by nvcc builds"),
      C("ENV NCCL_DEBUG=WARN", "env_var", "removal", False, None, "ignored by HCCL"),
      C("RUN pip install --no-cache-dir torch==1.8.1+cu111 torchvision==0.9.1+cu111", "device_type", "replace", True,
        "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12 \\",
        "+cu111 wheels do not exist for aarch64 and 1.8.1 has no current torch_npu pairing"),
      C("RUN git clone https://github.com/NVIDIA/apex /opt/apex && cd /opt/apex", "fused_optimizer", "replace", True,
        "RUN git clone https://gitee.com/ascend/apex /opt/apex && cd /opt/apex \\",
        "NVIDIA apex is replaced by the Ascend apex patch (keeps apex.amp for the 'apex' precision path)"),
      C('--global-option="--cpp_ext" --global-option="--cuda_ext" ./', "fused_optimizer", "replace", True,
        "&& bash scripts/build.sh --python=3.9 && pip install apex/dist/apex-*.whl",
        "--cuda_ext needs nvcc; the image build fails"),
      C("RUN DS_BUILD_CPU_ADAM=1 DS_BUILD_FUSED_ADAM=1 DS_BUILD_UTILS=1 pip install --no-cache-dir deepspeed==0.4.0",
        "distributed_framework", "replace", True, "RUN pip install --no-cache-dir deepspeed==0.14.0",
        "DS_BUILD_FUSED_ADAM pre-compiles a CUDA op; 0.4.0 also predates DeepSpeed's NPU accelerator "
        "(exact minimum version unconfirmed)"),
  ])

E("swinbert_launch", "scripts/msrvtt-train.sh", "explicit_replacement",
  "SwinBERT MSRVTT training launcher (torch.distributed.launch, NCCL env, DeepSpeed fp16)",
  [
      C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
        "debug logging only; NCCL_DEBUG is ignored by HCCL (log-level mapping approximate)"),
      C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None, "no HCCL meaning; no-op"),
      C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
        "only matters when HCCL's default NIC choice is wrong for multi-node rendezvous"),
      C("export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:256", "env_var", "replace", False,
        "export PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:256", "fragmentation tuning; ignored on NPU"),
      C("OUTPUT_DIR=${OUTPUT_DIR:-./output/msrvtt_vidswinbert_8frm}", "env_var", "npu_only_addition", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "runs inside the container, whose image usually exports the CANN environment already (unconfirmed)"),
      C("=nvidia-smi", "device_capability_check", "replace", False, "npu-smi info",
        "no set -e here: the missing binary only prints an error"),
  ])

# ----------------------------------------------------------------------------------------------
# Vid2Seq (PyTorch port, VidChapters style)
# ----------------------------------------------------------------------------------------------
E("vid2seq_dvc", "dvc.py", "explicit_replacement",
  "Vid2Seq PyTorch port dvc.py (train/eval loop, torch.cuda.amp, DDP)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("with torch.cuda.amp.autocast(enabled=args.fp16, dtype=torch.float16):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=args.fp16, dtype=torch.float16):",
        "with --fp16 the CUDA autocast silently disables itself on NPU"),
      C("with torch.cuda.amp.autocast(enabled=args.fp16):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=args.fp16):", "same, in generation"),
      C("pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',",
        "torch 2.1 DataLoader pins only if torch.cuda.is_available() when no pin_memory_device is given "
        "(whether torch_npu patches this is unconfirmed); performance only"),
      C("scaler = torch.cuda.amp.GradScaler() if args.fp16 else None", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler() if args.fp16 else None", "CUDA GradScaler disables itself on NPU"),
      C('checkpoint = torch.load(args.load, map_location="cuda:{}".format(args.gpu) if args.distributed else "cuda")',
        "device_type", "replace", True,
        'checkpoint = torch.load(args.load, map_location="npu:{}".format(args.gpu) if args.distributed else "npu")',
        "map_location 'cuda' raises on a CUDA-less host"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op; memory only"),
  ])

E("vid2seq_args", "args.py", "explicit_replacement",
  "Vid2Seq PyTorch port args.py",
  [
      C('parser.add_argument("--device", default="cuda"', "device_type", "replace", True,
        'parser.add_argument("--device", default="npu", help="device to use for training / testing")',
        "feeds torch.device(args.device) in dvc.py"),
      C('parser.add_argument("--dist-backend", default="nccl"', "dist_backend", "replace", False,
        'parser.add_argument("--dist-backend", default="hccl", help="torch.distributed backend (hccl for NPUs, gloo for CPU)")',
        "dead default: util/dist.py overwrites args.dist_backend before init_process_group"),
  ])

E("vid2seq_dist", "util/dist.py", "explicit_replacement",
  "DETR/MDETR util/dist.py as carried by Vid2Seq ports (SLURM + env:// init, pickled all_gather)",
  [
      C('if dist.get_backend() == "nccl":', "dist_backend", "replace", True, 'if dist.get_backend() in ("nccl", "hccl"):',
        "string comparison is not rewritten by anything; with HCCL the MDETR_CPU_REDUCE path would gather CPU "
        "tensors over the HCCL group"),
      C('device = "cuda" if cpu_group is None else "cpu"', "device_type", "replace", True,
        'device = "npu" if cpu_group is None else "cpu"', "pickled gather buffers must be NPU tensors for HCCL"),
      C('t = torch.tensor([self.count, self.total], dtype=torch.float64, device="cuda")', "device_type", "replace",
        True, 't = torch.tensor([self.count, self.total], dtype=torch.float64, device="npu")',
        "'cuda' raises; (fp64 all_reduce on HCCL not checked)"),
      C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "args.gpu = args.rank % torch.npu.device_count()", "device_count() is 0 -> ZeroDivisionError under SLURM"),
      C('os.environ["LOCAL_SIZE"] = str(torch.cuda.device_count())', "torch_cuda_api", "replace", True,
        'os.environ["LOCAL_SIZE"] = str(torch.npu.device_count())', "silently exports LOCAL_SIZE=0"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "raises without CUDA"),
      C('args.dist_backend = "nccl"', "dist_backend", "replace", True, 'args.dist_backend = "hccl"',
        "NCCL backend unavailable on NPU"),
  ])

E("vid2seq_model", "model/vid2seq.py", "explicit_replacement",
  "Vid2Seq PyTorch port model (T5 + temporal ViT encoder with optional FlashAttention-2)",
  [
      C("from flash_attn import flash_attn_func", "attention_kernel", "replace", False,
        "from torch_npu import npu_fusion_attention",
        "guarded import: on NPU it falls back to the explicit softmax path, so only speed is lost"),
      C("out = flash_attn_func(q, k, v, dropout_p=self.dropout_p if self.training else 0.,", "attention_kernel",
        "replace", False,
        "out = npu_fusion_attention(q, k, v, self.heads, 'BSND', scale=self.scale, keep_prob=1. - (self.dropout_p if self.training else 0.))[0]",
        "q/k/v are already (B, S, N, D) = BSND; performance-only rewrite"),
  ])

E("vid2seq_extract", "extract/extract.py", "transfer_to_npu",
  "VidChapters/Vid2Seq CLIP ViT-L/14 feature extraction (decord decoding, clip.load)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu; from torch_npu.contrib import transfer_to_npu",
        "standalone script ported by automatic migration: covers clip.load(device='cuda'), .cuda() and "
        "torch.cuda.FloatTensor, which are therefore left unlabelled"),
      C("ctx = decord.gpu(0)", "device_type", "replace", True, "ctx = decord.cpu(0)",
        "decord's PyPI wheel has no NVDEC; the exception is swallowed and every video silently gets zero features"),
      C('parser.add_argument("--gpu_decode", type=int, default=1', "device_type", "replace", False,
        'parser.add_argument("--gpu_decode", type=int, default=0, help="decode on CPU (no NVDEC on Ascend hosts)")',
        "default routes to the NVDEC branch and forces num_workers=0; flipping it is the clean fix"),
  ])

E("vid2seq_env", "environment.yml", "explicit_replacement",
  "Vid2Seq / VidChapters conda environment (pytorch + nvidia channels, flash-attn)",
  [
      C("=- nvidia", "device_type", "removal", False, None, "channel only serves CUDA packages"),
      C("=- pytorch=1.13.1", "device_type", "replace", True, "- pytorch=2.1.0",
        "torch_npu has no 1.13 pairing"),
      C("=- torchvision=0.14.1", "device_type", "replace", True, "- torchvision=0.16.0",
        "must follow the torch version"),
      C("=- pytorch-cuda=11.7", "device_type", "removal", True, None,
        "selects the CUDA build of pytorch; CUDA runtime packages are not usable on the NPU host"),
      C("=- cudatoolkit-dev=11.7", "device_type", "removal", False, None,
        "only needed for nvcc (flash-attn build); dead weight or unsolvable on aarch64 (unconfirmed)"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
        "torch-npu pin at the top of the pip section"),
      C("flash-attn==2.3.6 --no-build-isolation", "attention_kernel", "removal", True, None,
        "flash-attn cannot be built without CUDA; the whole env creation fails"),
  ])

# ----------------------------------------------------------------------------------------------
# BMT (Bi-modal Transformer)
# ----------------------------------------------------------------------------------------------
E("bmt_main", "main.py", "explicit_replacement",
  "BMT main.py (argparse with --device_ids, dispatch to train_cap/train_prop/evaluate)",
  [
      C("=from pprint import pprint", "import_torch_npu", "npu_only_addition", True, "import torch_npu  # registers the 'npu' device before Config/train_cap build torch.device('npu:0')",
        "entry point imports no torch itself; torch_npu must be loaded before torch.device('npu:0') is built"),
  ])

E("bmt_config", "utilities/config_constructor.py", "explicit_replacement",
  "BMT utilities/config_constructor.py (Config object; device string built from device_ids)",
  [
      C("self.device = f'cuda:{self.device_ids[0]}'", "device_type", "replace", True,
        "self.device = f'npu:{self.device_ids[0]}'", "used by every .to(cfg.device) in the captioning pipeline"),
      C("self.gpu_count = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
        "self.gpu_count = torch.npu.device_count()", "informational field stored in logs/checkpoints (0 on NPU)"),
  ])

E("bmt_train_cap", "scripts/train_captioning_module.py", "explicit_replacement",
  "BMT scripts/train_captioning_module.py (DataParallel over --device_ids)",
  [
      C("torch.cuda.set_device(cfg.device_ids[0])", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(cfg.device_ids[0])", "raises without CUDA"),
      C("model = torch.nn.DataParallel(model, cfg.device_ids)", "distributed_framework", "removal", True, None,
        "torch.nn.DataParallel is ✘ on Ascend; drop it for single-NPU (load_pretrained_cap already strips "
        "'module.') or move to DDP for several NPUs"),
      C("str(torch.cuda.get_device_name(cfg.device_ids[0]))", "torch_cuda_api", "replace", True,
        "TBoard.add_text('debug/device', str(torch.npu.get_device_name(cfg.device_ids[0])), 0)",
        "get_device_name initialises CUDA and raises"),
  ])

E("bmt_loops", "epoch_loops/captioning_epoch_loops.py", "explicit_replacement",
  "BMT epoch_loops/captioning_epoch_loops.py (greedy decoder, train/val loops, ANET evaluation)",
  [
      C("torch.cuda.max_memory_allocated(cfg.device)", "torch_cuda_api", "replace", False,
        "TBoard.add_scalar('debug/max_mem_GB', torch.npu.max_memory_allocated(cfg.device) / 2 ** 30, epoch)",
        "returns 0 before any CUDA init; TensorBoard-only"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op; memory only"),
  ])

# ----------------------------------------------------------------------------------------------
# CLIP4Caption (UniVL / CLIP4Clip code base)
# ----------------------------------------------------------------------------------------------
E("c4c_main", "main_task_caption.py", "explicit_replacement",
  "CLIP4Caption main_task_caption.py (UniVL-style DDP training, beam search eval)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C('torch.distributed.init_process_group(backend="nccl")', "dist_backend", "replace", True,
        'torch.distributed.init_process_group(backend="hccl")', "module-level; NCCL unavailable on NPU"),
      C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
        SEED_NOTE),
      C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(args.seed)", SEED_NOTE),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu", local_rank)', "device_type", "replace",
        True, 'device = torch.device("npu" if torch.npu.is_available() else "cpu", local_rank)',
        "is_available() is False on NPU: the model silently trains on CPU"),
      C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpu = torch.npu.device_count()",
        "0 -> ZeroDivisionError in the batch-size check"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op; memory only"),
      C("batch = tuple(t.cuda(non_blocking=True) for t in batch)", "tensor_to_device", "replace", True,
        "batch = tuple(t.to(device, non_blocking=True) for t in batch)", ".cuda() raises"),
      C("with torch.cuda.amp.autocast(enabled=args.fp16):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=args.fp16):", "--fp16 silently ignored otherwise"),
      C("scaler = torch.cuda.amp.GradScaler() if args.fp16 else None", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler() if args.fp16 else None", "paired with the autocast above"),
  ])

E("c4c_util", "util.py", "explicit_replacement",
  "CLIP4Clip/CLIP4Caption util.py (threaded parallel_apply over replicas, logger)",
  [
      C("modules = nn.parallel.replicate(model, device_ids)", "distributed_framework", "replace", False,
        "modules = [model]  # single-replica on NPU: DataParallel machinery is not supported",
        "replicate() is the DataParallel broadcast path (✘ for DataParallel); exact failure mode on NPU unconfirmed"),
      C("with torch.cuda.device(device):", "torch_cuda_api", "replace", True, "with torch.npu.device(device):",
        "torch.cuda.device context raises on a CUDA-less build"),
      C("return [chunk.to('cuda:{}'.format(k)) for k, chunk in enumerate(chunks)]", "device_type", "replace", True,
        "return [chunk.to('npu:{}'.format(k)) for k, chunk in enumerate(chunks)]", "'cuda:k' raises"),
  ])

E("c4c_sh", "scripts/run_msrvtt_caption.sh", "explicit_replacement",
  "CLIP4Caption MSR-VTT fine-tuning launcher (torch.distributed.launch, 4 GPUs)",
  [
      C("# 4 x V100 32G, one process per GPU.", "env_var", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "bare-metal launcher; sourced before `set -u` because set_env.sh may expand unset variables (unconfirmed)"),
      C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
        "a user-supplied device list is silently ignored on NPU"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None, "ignored by HCCL"),
      C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
        "HCCL's watchdog default is already 1 (MindCluster docs); no-op"),
  ])

# ----------------------------------------------------------------------------------------------
# Video-LLM pseudo-captioner (video-to-text generation helper)
# ----------------------------------------------------------------------------------------------
E("vlm_caption", "tools/caption_videos.py", "explicit_replacement",
  "Qwen2-VL style dense pseudo-captioning tool (one worker per GPU via CUDA_VISIBLE_DEVICES)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C('p.add_argument("--device", default="cuda")', "device_type", "replace", True,
        'p.add_argument("--device", default="npu")', "used as device_map for from_pretrained"),
      C('p.add_argument("--attn_impl", default="flash_attention_2"', "attention_kernel", "replace", True,
        'p.add_argument("--attn_impl", default="sdpa", choices=["flash_attention_2", "sdpa", "eager"])',
        "flash_attention_2 needs the flash-attn package, which cannot be installed on NPU; sdpa dispatches to NPU FA"),
      C("return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16", "device_capability_check",
        "replace", True, "return torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
        "is_bf16_supported() calls torch.cuda.current_device() and raises"),
      C("from torch.profiler import profile, ProfilerActivity, schedule, tensorboard_trace_handler", "torch_cuda_api",
        "replace", False,
        "from torch_npu.profiler import profile, ProfilerActivity, schedule, tensorboard_trace_handler",
        "--profile only"),
      C("prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],", "torch_cuda_api", "replace",
        False, "prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.NPU],",
        "CUDA activity yields a CPU-only trace on NPU; --profile only"),
      C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", "replace", False,
        "except RuntimeError as e:  # NPU OOM is raised as a RuntimeError",
        "the handler would not catch an NPU OOM (exception type on NPU unconfirmed)"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op; memory only"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
      C("torch.cuda.max_memory_allocated() / 2 ** 30", "torch_cuda_api", "replace", False,
        "args.shard, i, len(videos), rec[\"sec\"], torch.npu.max_memory_allocated() / 2 ** 30), flush=True)",
        "log-only"),
      C("num_gpus = args.num_gpus or torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "num_gpus = args.num_gpus or torch.npu.device_count()",
        "0 on NPU: no worker is started and an empty captions file is written"),
      C('env["CUDA_VISIBLE_DEVICES"] = str(gpu)', "env_var", "replace", True, 'env["ASCEND_RT_VISIBLE_DEVICES"] = str(gpu)',
        "otherwise every worker process loads the model on NPU 0"),
  ])

E("vlm_requirements", "tools/requirements-caption.txt", "explicit_replacement",
  "requirements for the pseudo-captioning tool (cu121 index, flash-attn, bitsandbytes)",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu121", "device_type", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; on x86 it pulls the CUDA build instead of the CPU build torch_npu expects"),
      C("=torch==2.3.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.3.1.post4",
        "torch 2.3.1 itself has a torch_npu pairing (v2.3.1-6.0.0 / 7.0.0), only the plug-in pin is missing"),
      C("=flash-attn==2.6.3", "attention_kernel", "removal", True, None,
        "cannot be built without CUDA; pip install -r fails"),
      C("=nvidia-ml-py>=12.535", "torch_cuda_api", "removal", False, None,
        "installs fine but has no NPU counterpart; unused by the tool"),
      C("=bitsandbytes==0.43.3", "torch_cuda_api", "removal", False, None,
        "CUDA-only release line; not imported by the tool"),
  ])
