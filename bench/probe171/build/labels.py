# Labels for probe171 (speaker verification / diarization toolkits, CUDA -> Ascend NPU).
#
# Target stack assumed throughout: torch 2.1.0 + torch_npu 2.1.0.postN on CANN 8.x (the most widely
# deployed Ascend pairing), i.e. a torch_npu release that still needs an explicit `import torch_npu`.
# One label per line a careful porter would edit. `required` follows the brief: True only when the
# unchanged line fails, computes something wrong, or silently does the wrong thing on an NPU host.
# A line inside an optional guard shares the guard's verdict ("group rule", see README).

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("torch 2.1 + torch_npu 2.1.0: the npu device/torch.npu namespace only exist after `import torch_npu` "
               "(autoload starts with torch_npu 2.5.1)")
IMPORT = "import torch_npu  # noqa: F401"
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
SET_ENV_NOTE = ("CANN libraries (libhccl.so, libascendcl.so) are not on the library path in a fresh shell; "
                "`import torch_npu` fails until set_env.sh is sourced")
AMP_NOTE = ("torch.cuda.amp.autocast on a host without CUDA warns and disables itself, so the block silently runs "
            "in fp32 on NPU: slower, not wrong")
SCALER_NOTE = ("torch.cuda.amp.GradScaler disables itself without CUDA; once autocast runs on NPU, fp16 gradients "
               "are no longer loss-scaled and can underflow silently")

# --------------------------------------------------------------------------------------------------
# WeSpeaker-style
# --------------------------------------------------------------------------------------------------

E("ws_train", "wespeaker/bin/train.py", "explicit_replacement",
  "WeSpeaker wespeaker/bin/train.py (fire entry, gpus list indexed by rank, DDP + GradScaler)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT, IMPORT_NOTE),
      C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)",
        "raises without CUDA; HCCL needs one NPU bound per process"),
      C("dist.init_process_group(backend='nccl')", "dist_backend", "replace", True,
        "dist.init_process_group(backend='hccl')", "NCCL backend does not exist on an Ascend host"),
      C("dist.barrier(device_ids=[gpu])  # let the rank 0 mkdir first", "dist_backend", "replace", False,
        "dist.barrier()  # let the rank 0 mkdir first",
        "unconfirmed: torch 2.1 barrier() rejects device_ids for non-NCCL backends; dropping it is the safe port"),
      C("dist.barrier(device_ids=[gpu])  # synchronize here", "dist_backend", "replace", False,
        "dist.barrier()  # synchronize here", "unconfirmed, same as the first barrier"),
      C("dist.barrier(device_ids=[gpu])  # wait until the header is printed", "dist_backend", "replace", False,
        "dist.barrier()  # wait until the header is printed", "unconfirmed, same as the first barrier"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
        "Module.cuda() raises 'Torch not compiled with CUDA enabled'"),
      C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
        "passed to run_epoch; every batch .to(device) would target CUDA"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=configs['enable_amp'])", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=configs['enable_amp'])", SCALER_NOTE),
  ])

E("ws_executor", "wespeaker/utils/executor.py", "explicit_replacement",
  "WeSpeaker wespeaker/utils/executor.py run_epoch (amp autocast, scaler, join context)",
  [
      C("log_batch_interval=100, device=torch.device('cuda')):", "device_type", "replace", False,
        "log_batch_interval=100, device=torch.device('npu')):",
        "default only; train.py always passes device explicitly"),
      C("with torch.cuda.amp.autocast(enabled=enable_amp):  # ssl frontend", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=enable_amp):  # ssl frontend", AMP_NOTE),
      C("=with torch.cuda.amp.autocast(enabled=enable_amp):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=enable_amp):", AMP_NOTE),
      C("torch.cuda.max_memory_allocated() / 1024 / 1024))", "torch_cuda_api", "replace", False,
        "torch.npu.max_memory_allocated() / 1024 / 1024))",
        "returns 0 without an initialised CUDA context; debug log value only"),
  ])

E("ws_extract", "wespeaker/bin/extract.py", "explicit_replacement",
  "WeSpeaker wespeaker/bin/extract.py (embedding extraction to kaldi ark/scp)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT, IMPORT_NOTE),
      C("if use_gpu and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if use_gpu and torch.npu.is_available():",
        "False on an NPU host, so extraction silently runs on the CPU"),
      C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
        "model and features would be moved to a CUDA device"),
  ])

E("ws_cli", "wespeaker/cli/speaker.py", "explicit_replacement",
  "WeSpeaker wespeaker/cli/speaker.py (Speaker class: set_gpu/set_device, embedding, diarization)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT, IMPORT_NOTE),
      C("device = f'cuda:{device_id}'", "device_type", "replace", True, "device = f'npu:{device_id}'",
        "set_gpu() would move the model to CUDA"),
      C("if args.gpu >= 0 and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if args.gpu >= 0 and torch.npu.is_available():",
        "False on NPU, so `--gpu 0` silently keeps the model on CPU"),
  ])

E("ws_run_sh", "examples/voxceleb/v2/run.sh", "explicit_replacement",
  "WeSpeaker examples/voxceleb/v2/run.sh (stages, torchrun --nproc_per_node=$num_gpus)",
  [
      C(". ./path.sh || exit 1", "import_torch_npu", "npu_only_addition", True, SET_ENV, SET_ENV_NOTE),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
        "NCCL_* variables are ignored by HCCL; log verbosity only"),
  ])

E("ws_extract_sh", "tools/extract_embedding.sh", "explicit_replacement",
  "WeSpeaker tools/extract_embedding.sh (split list, one job per GPU)",
  [
      C("if ! nvidia-smi -L > /dev/null 2>&1; then", "device_type", "replace", True,
        "if ! npu-smi info > /dev/null 2>&1; then",
        "nvidia-smi is absent on an Ascend host, so every job silently falls back to CPU extraction"),
      C("CUDA_VISIBLE_DEVICES=${gpu_list[$idx]} python wespeaker/bin/extract.py \\", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${gpu_list[$idx]} python wespeaker/bin/extract.py \\",
        "CUDA_VISIBLE_DEVICES is ignored on NPU: all jobs land on npu:0 instead of being spread over cards"),
  ])

E("ws_score_norm", "wespeaker/bin/score_norm.py", "device_branch_or_abstraction",
  "WeSpeaker wespeaker/bin/score_norm.py (AS-Norm) with cohort scoring moved to the GPU",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT, IMPORT_NOTE),
      C("device='cuda:0'):", "device_type", "replace", True, "device='npu:0'):",
        "default used by local/score_norm.sh, which passes no device"),
      C("if device.startswith('cuda') and not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if device.startswith('npu') and not torch.npu.is_available():",
        "fallback guard; with the npu default it simply never fires"),
      C("=if device.type == 'cuda':", "device_type", "add_branch", False,
        "if device.type in ('cuda', 'npu'):",
        "optional: only sets the current device and TF32; tensors are placed explicitly"),
      C("torch.cuda.set_device(device)", "torch_cuda_api", "add_branch", False,
        "torch.npu.set_device(device) if device.type == 'npu' else torch.cuda.set_device(device)",
        "group rule: inside the optional guard above"),
      C("if device.type == 'cuda':  # pinned host buffers for async H2D copies", "pin_memory", "add_branch", False,
        "if device.type in ('cuda', 'npu'):  # pinned host buffers for async H2D copies",
        "performance only; unconfirmed whether Tensor.pin_memory() without a device argument pins for NPU on torch 2.1"),
      C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start = torch.npu.Event(enable_timing=True)",
        "torch.cuda.Event cannot be instantiated without CUDA (dummy base class raises)"),
      C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end = torch.npu.Event(enable_timing=True)", "same as start event"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silently a no-op without CUDA; only affects memory left for the next job"),
  ])

E("ws_requirements", "requirements.txt", "explicit_replacement",
  "WeSpeaker requirements.txt pinned to CUDA 11.8 wheels",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "torch_npu pairs with the CPU torch wheel (x86) or plain PyPI torch (aarch64); the cu118 index has no aarch64 builds"),
      C("torch==2.1.2+cu118", "import_torch_npu", "replace", True, "torch==2.1.0",
        "torch_npu wheel version must equal the torch version (2.1.0.postN pairs with 2.1.0); +cu118 is a CUDA build"),
      C("torchaudio==2.1.2+cu118", "import_torch_npu", "replace", True, "torchaudio==2.1.0",
        "must match the torch pin; CUDA-tagged wheel"),
      C("=numpy<2.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "the torch_npu wheel itself (CANN 8.1.RC1 pairing)"),
      C("onnxruntime-gpu==1.16.3", "custom_cuda_extension", "replace", False, "onnxruntime==1.16.3",
        "CUDA build of onnxruntime; unconfirmed: no aarch64 wheel, on x86 it installs and falls back to the CPU provider"),
  ])

E("ws_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "training Dockerfile on nvidia/cuda base image (WeSpeaker/3D-Speaker style)",
  [
      C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "import_torch_npu", "replace", True,
        "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
        "needs a CANN base image (driver libs are mounted from the host); the CUDA image has no Ascend toolkit"),
      C("RUN pip install torch==2.1.2 torchaudio==2.1.2 \\", "import_torch_npu", "replace", True,
        "RUN pip install torch==2.1.0 torchaudio==2.1.0 torch-npu==2.1.0.post12 \\",
        "torch must equal the torch_npu base version; torch_npu wheel added"),
      C("--index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", True,
        "--index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index"),
      C("ENV NCCL_DEBUG=WARN \\", "env_var", "replace", False, "ENV ASCEND_GLOBAL_LOG_LEVEL=2 \\",
        "ignored by HCCL; logging only"),
      C("NCCL_IB_DISABLE=1 \\", "env_var", "removal", False, None,
        "NCCL-only knob, ignored on Ascend (HCCL uses the NPU RoCE ports)"),
      C("NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NVLink hint, ignored on Ascend"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=all",
        "read only by the NVIDIA container runtime; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container runtime only"),
  ])

E("ws_mfa_conformer", "wespeaker/models/mfa_conformer.py", "kernel_rewrite",
  "WeSpeaker-style MFA-Conformer model with optional flash-attn attention",
  [
      C("=FLASH_ATTN_AVAILABLE = False", "import_torch_npu", "npu_only_addition", False,
        "HAS_TORCH_NPU = importlib.util.find_spec('torch_npu') is not None",
        "only needed by the optional NPU attention branch below (group rule)"),
      C("return x * torch.sigmoid(x)", "npu_fused_op", "replace", False,
        "return torch_npu.npu_silu(x) if x.is_npu else x * torch.sigmoid(x)",
        "performance only: fused SiLU instead of sigmoid + mul"),
      C("if self.use_flash_attn and FLASH_ATTN_AVAILABLE and x.is_cuda", "attention_kernel", "add_branch", False,
        "elif self.use_flash_attn and HAS_TORCH_NPU and x.is_npu and x.dtype in (torch.float16, torch.bfloat16): "
        "out = torch_npu.npu_fusion_attention(q, k, v, self.h, 'BSND', atten_mask=~mask[:, None, None, :].expand(B, 1, T, T), "
        "scale=1.0 / math.sqrt(self.d_k), keep_prob=1.0 - (self.dropout_rate if self.training else 0.0))[0]",
        "flash-attn cannot be installed on NPU; x.is_cuda is False so the SDPA fallback already works; fused NPU FA is a speed-up"),
      C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True):",
        "attention_kernel", "removal", False, None,
        "sdp_kernel is marked unsupported in Ascend's API list; unconfirmed whether it errors or is a no-op (drop it and dedent)"),
      C("model = MFA_Conformer(feat_dim=80, embed_dim=192, num_blocks=6).cuda().half().eval()", "tensor_to_device",
        "replace", True, "model = MFA_Conformer(feat_dim=80, embed_dim=192, num_blocks=6).npu().half().eval()",
        "self-test block only, but it raises without CUDA"),
      C("x = torch.randn(32, 200, 80, device='cuda', dtype=torch.float16)", "device_type", "replace", True,
        "x = torch.randn(32, 200, 80, device='npu', dtype=torch.float16)", "self-test block"),
      C("torch.cuda.synchronize()  # finish warm-up", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # finish warm-up", "self-test block; raises without CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "self-test block; raises without CUDA"),
  ])

# --------------------------------------------------------------------------------------------------
# 3D-Speaker-style
# --------------------------------------------------------------------------------------------------

E("ds_train", "speakerlab/bin/train.py", "explicit_replacement",
  "3D-Speaker speakerlab/bin/train.py (CAM++/ERes2Net trainer, --gpu list, .cuda(non_blocking=True))",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT, IMPORT_NOTE),
      C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)",
        "raises without CUDA; binds the rank to its NPU"),
      C("dist.init_process_group(backend='nccl')", "dist_backend", "replace", True,
        "dist.init_process_group(backend='hccl')", "no NCCL on Ascend"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "raises without CUDA"),
      C("checkpointer.recover_if_possible(device='cuda')", "device_type", "replace", True,
        "checkpointer.recover_if_possible(device='npu')",
        "used as map_location when resuming; 'cuda' fails to deserialize on NPU"),
      C("x = x.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "x = x.npu(non_blocking=True)",
        "raises without CUDA"),
      C("y = y.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "y = y.npu(non_blocking=True)",
        "raises without CUDA"),
  ])

E("ds_utils", "speakerlab/utils/utils.py", "device_branch_or_abstraction",
  "3D-Speaker speakerlab/utils/utils.py (set_seed, meters, device helper)",
  [
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
        "silently ignored without CUDA; only run-to-run reproducibility of NPU RNG is affected"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "same as manual_seed"),
      C("if use_gpu and torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        "if use_gpu and (torch.cuda.is_available() or torch.npu.is_available()):",
        "False on NPU, so every caller silently gets the CPU"),
      C("device = torch.device('cuda:%d' % int(gpu_id))", "device_type", "add_branch", True,
        "device = torch.device(('npu:%d' if torch.npu.is_available() else 'cuda:%d') % int(gpu_id))",
        "would hand out a CUDA device"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "add_branch", False,
        "if not (torch.cuda.is_available() or torch.npu.is_available()):",
        "log string helper only: returns 'cpu' on NPU"),
      C("alloc = torch.cuda.memory_allocated(device) / 1024 ** 3", "torch_cuda_api", "add_branch", False,
        "alloc = torch.npu.memory_allocated(device) / 1024 ** 3", "log only (group rule)"),
      C("reserved = torch.cuda.memory_reserved(device) / 1024 ** 3", "torch_cuda_api", "add_branch", False,
        "reserved = torch.npu.memory_reserved(device) / 1024 ** 3", "log only (group rule)"),
      C("peak = torch.cuda.max_memory_allocated(device) / 1024 ** 3", "torch_cuda_api", "add_branch", False,
        "peak = torch.npu.max_memory_allocated(device) / 1024 ** 3", "log only (group rule)"),
  ])

E("ds_infer_sv", "speakerlab/bin/infer_sv.py", "explicit_replacement",
  "3D-Speaker speakerlab/bin/infer_sv.py (modelscope download + embedding/similarity)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT, IMPORT_NOTE),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "False on NPU: --use_gpu silently falls back to CPU"),
      C("device = torch.device('cuda:%d' % args.gpu)", "device_type", "replace", True,
        "device = torch.device('npu:%d' % args.gpu)", "CUDA device string"),
  ])

E("ds_infer_diar", "speakerlab/bin/infer_diarization.py", "explicit_replacement",
  "3D-Speaker speakerlab/bin/infer_diarization.py (FSMN-VAD + CAM++ + clustering, one process per GPU)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT,
        IMPORT_NOTE + "; also re-executed in every mp.spawn child"),
      C("device = 'cpu' if device is None else '%s:%s'%(device.type, device.index) if device.index else device.type,",
        "device_type", "replace", False, "device = 'cpu',",
        "unconfirmed: modelscope's pipeline device parser may only accept cpu/cuda/gpu, so 'npu:N' could be rejected; "
        "FSMN-VAD is tiny, keeping it on CPU is the safe port"),
      C("device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type",
        "replace", True, "device = torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
        "API users calling Diarization3Dspeaker() without a device silently get the CPU"),
      C("=ngpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "ngpus = torch.npu.device_count()",
        "0 on NPU: every worker silently runs on CPU"),
      C("device = torch.device('cuda:%d'%(rank%ngpus))", "device_type", "replace", True,
        "device = torch.device('npu:%d'%(rank%ngpus))", "CUDA device string"),
      C("ngpus = torch.cuda.device_count()  # one worker per visible gpu", "torch_cuda_api", "replace", False,
        "ngpus = torch.npu.device_count()  # one worker per visible gpu",
        "only sizes the worker pool: 1 process instead of one per NPU (slower, still correct)"),
  ])

E("ds_run_sh", "egs/3dspeaker/sv-cam++/run.sh", "explicit_replacement",
  "3D-Speaker egs/3dspeaker/sv-cam++/run.sh (torchrun --nproc_per_node=$num_gpu, --gpu $gpus)",
  [
      C(". ./path.sh || exit 1", "import_torch_npu", "npu_only_addition", True, SET_ENV, SET_ENV_NOTE),
      C("gpus=$(nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits \\", "device_type",
        "replace", True,
        "gpus=$(npu-smi info -l | awk '/NPU ID/{print $4}' \\",
        "gpus=auto path: nvidia-smi does not exist on an Ascend host"),
      C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
        "multi-node only; ignored by HCCL, which then picks the NIC by its own priority order"),
      C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None, "NCCL-only knob"),
      C("export NCCL_IB_HCA=mlx5", "env_var", "removal", False, None,
        "HCCL uses the NPU's own RoCE ports, not host InfiniBand HCAs"),
      C("CUDA_VISIBLE_DEVICES=$first_gpu python speakerlab/bin/export_model.py \\", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=$first_gpu python speakerlab/bin/export_model.py \\",
        "ignored on NPU: the export job lands on npu:0 instead of the chosen card"),
  ])

E("ds_extract_diar", "egs/3dspeaker/speaker-diarization/local/extract_diar_embeddings.py", "explicit_replacement",
  "3D-Speaker egs/3dspeaker/speaker-diarization/local/extract_diar_embeddings.py (torchrun ranks, gloo barrier)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT, IMPORT_NOTE),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "False on NPU: --use_gpu silently extracts on CPU"),
      C("device = torch.device('cuda', gpu)", "device_type", "replace", True, "device = torch.device('npu', gpu)",
        "CUDA device"),
      C("=if args.fp16 and device.type == 'cuda':", "device_type", "replace", False,
        "if args.fp16 and device.type == 'npu':", "unported the --fp16 option is silently ignored (fp32, slower)"),
      C("if args.fp16 and device.type == 'cuda':  # match the model dtype", "device_type", "replace", False,
        "if args.fp16 and device.type == 'npu':  # match the model dtype",
        "group rule: must change together with the model.half() guard or conv1d sees mixed dtypes"),
  ])

# --------------------------------------------------------------------------------------------------
# SpeechBrain-style
# --------------------------------------------------------------------------------------------------

E("sb_train", "recipes/VoxCeleb/SpeakerRec/train_speaker_embeddings.py", "explicit_replacement",
  "SpeechBrain recipes/VoxCeleb/SpeakerRec/train_speaker_embeddings.py (Brain subclass, device from run_opts)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT, IMPORT_NOTE),
  ])

E("sb_core", "speechbrain/core.py", "device_branch_or_abstraction",
  "SpeechBrain speechbrain/core.py (parse_arguments, Brain.__init__ device/precision/DP/DDP handling)",
  [
      C('"distributed_backend": "nccl",', "dist_backend", "replace", True, '"distributed_backend": "hccl",',
        "default for Brain objects built without CLI run_opts; NCCL does not exist on Ascend"),
      C('"compile_mode": "reduce-overhead",', "compile_mode", "replace", False, '"compile_mode": "default",',
        "unconfirmed: reduce-overhead relies on CUDA graphs; --compile is off by default"),
      C('default="cuda:0",', "device_type", "replace", True, 'default="npu:0",',
        "CLI default device of every SpeechBrain recipe"),
      C('default="nccl",', "dist_backend", "replace", True, 'default="hccl",', "CLI default DDP backend"),
      C("if torch.cuda.device_count() == 0:", "torch_cuda_api", "replace", False,
        "if torch.npu.device_count() == 0:",
        "guards --data_parallel_backend, which cannot work on NPU anyway (see DP below)"),
      C('if local_rank is not None and "cuda" in run_opts["device"]:', "device_type", "add_branch", True,
        'if local_rank is not None and ("cuda" in run_opts["device"] or "npu" in run_opts["device"]):',
        "without it every torchrun rank keeps npu:0"),
      C('gradscaler_enabled = self.precision == "fp16" and "cuda" in self.device', "amp", "add_branch", True,
        'gradscaler_enabled = self.precision == "fp16" and ("cuda" in self.device or "npu" in self.device)',
        "fp16 on npu would run without loss scaling"),
      C("self.scaler = torch.cuda.amp.GradScaler(enabled=gradscaler_enabled)", "amp", "add_branch", True,
        "self.scaler = (torch.npu.amp.GradScaler if \"npu\" in self.device else torch.cuda.amp.GradScaler)(enabled=gradscaler_enabled)",
        SCALER_NOTE),
      C('elif "cuda" in self.device and self.precision in ["fp16", "bf16"]:', "amp", "add_branch", False,
        'elif ("cuda" in self.device or "npu" in self.device) and self.precision in ["fp16", "bf16"]:',
        "unported, --precision fp16/bf16 is silently ignored on npu (fp32, slower)"),
      C("torch.cuda.set_device(int(self.device[-1]))", "torch_cuda_api", "add_branch", True,
        'elif "npu" in self.device: torch.npu.set_device(int(self.device.split(":")[-1]))',
        "each DDP rank must bind its own NPU before HCCL init / first kernel"),
      C("module = DP(module)", "distributed_framework", "replace", True,
        'raise ValueError("DataParallel is not supported on Ascend NPU; launch with torchrun (DDP) instead")',
        "torch.nn.DataParallel is unsupported on Ascend (API list / msFmkTransplt)"),
  ])

E("sb_distributed", "speechbrain/utils/distributed.py", "device_branch_or_abstraction",
  "SpeechBrain speechbrain/utils/distributed.py (ddp_init_group, run_on_main, ddp_barrier)",
  [
      C("if local_rank + 1 > torch.cuda.device_count():", "torch_cuda_api", "add_branch", True,
        "if local_rank + 1 > max(torch.cuda.device_count(), torch.npu.device_count()):",
        "0 on NPU: every rank dies with 'Not enough GPUs available!'"),
      C('if run_opts["distributed_backend"] == "nccl":', "dist_backend", "add_branch", True,
        'if run_opts["distributed_backend"] == "hccl": pass  # registered by torch_npu',
        "backend strings are compared by hand, so 'hccl' falls through to the final ValueError "
        "(transfer_to_npu does not rewrite such comparisons)"),
  ])

E("sb_hparams", "recipes/VoxCeleb/SpeakerRec/hparams/verification_ecapa.yaml", "explicit_replacement",
  "SpeechBrain recipes/VoxCeleb/SpeakerRec/hparams/verification_ecapa.yaml",
  [
      C("device: 'cuda:0'", "device_type", "replace", True, "device: 'npu:0'",
        "the scoring script moves the model and batches to this device"),
  ])

E("sb_verify", "recipes/VoxCeleb/SpeakerRec/speaker_verification_cosine.py", "explicit_replacement",
  "SpeechBrain recipes/VoxCeleb/SpeakerRec/speaker_verification_cosine.py (cosine + s-norm scoring)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT, IMPORT_NOTE),
      C('device_type="cuda",', "amp", "replace", False, 'device_type="npu",',
        "autocast for 'cuda' is disabled without CUDA: eval_precision fp16 silently runs fp32"),
      C('run_opts={"device": "cuda:0"},', "device_type", "replace", True, 'run_opts={"device": "npu:0"},',
        "optional sanity check, but it fails when enabled"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA"),
  ])

# --------------------------------------------------------------------------------------------------
# NeMo-style
# --------------------------------------------------------------------------------------------------

E("nemo_reco", "examples/speaker_tasks/recognition/speaker_reco.py", "explicit_replacement",
  "NeMo examples/speaker_tasks/recognition/speaker_reco.py (hydra + Lightning Trainer(**cfg.trainer))",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT, IMPORT_NOTE),
  ])

E("nemo_titanet_yaml", "examples/speaker_tasks/recognition/conf/titanet-large.yaml", "explicit_replacement",
  "NeMo examples/speaker_tasks/recognition/conf/titanet-large.yaml",
  [
      C("accelerator: gpu", "device_type", "replace", True, "accelerator: npu",
        "Lightning raises when no CUDA device is found; 'npu' needs an NPU accelerator registered with Lightning "
        "(not covered by the knowledge base)"),
      C("strategy: ddp", "dist_backend", "replace", False, "strategy: ddp_hccl  # DDPStrategy(process_group_backend='hccl') registered in the script",
        "unconfirmed: Lightning derives the process-group backend from the device and only picks nccl for cuda"),
      C("precision: 16-mixed", "amp", "replace", False,
        "precision: 16-mixed  # with a MixedPrecision(device='npu') plugin",
        "unconfirmed: Lightning's mixed-precision plugin autocasts for 'cuda' unless told the device"),
  ])

E("nemo_features", "nemo/collections/asr/parts/preprocessing/features.py", "device_branch_or_abstraction",
  "NeMo nemo/collections/asr/parts/preprocessing/features.py (FilterbankFeatures, normalize_batch)",
  [
      C("=torch.cuda.is_available()", "torch_cuda_api", "add_branch", False,
        "(torch.cuda.is_available() or x.is_npu)",
        "only an input sanity check (length-1 sequences) that is skipped on NPU"),
      C("and not torch.cuda.is_current_stream_capturing()", "torch_cuda_api", "add_branch", False,
        "and not (torch.npu.is_current_stream_capturing() if x.is_npu else torch.cuda.is_current_stream_capturing())",
        "group rule: tied to the optional guard above"),
      C("with torch.cuda.amp.autocast(enabled=False):  # stft in fp32", "amp", "replace", False,
        "with torch.autocast(x.device.type, enabled=False):  # stft in fp32",
        "unconfirmed: stft is not on the usual autocast cast lists and its input is fp32, so NPU autocast "
        "probably leaves it alone"),
      C("with torch.cuda.amp.autocast(enabled=False):  # filterbank matmul in fp32", "amp", "replace", True,
        "with torch.autocast(x.device.type, enabled=False):  # filterbank matmul in fp32",
        "disabling 'cuda' autocast does not disable NPU autocast: under 16-mixed the mel matmul runs in fp16 "
        "and power spectra above 65504 overflow (the NaN case the comment describes)"),
  ])

E("nemo_label_models", "nemo/collections/asr/models/label_models.py", "device_branch_or_abstraction",
  "NeMo nemo/collections/asr/models/label_models.py (EncDecSpeakerLabelModel inference helpers)",
  [
      C("def batch_inference(self, manifest_filepath, batch_size=32, sample_rate=16000, device='cuda'):",
        "device_type", "replace", True,
        "def batch_inference(self, manifest_filepath, batch_size=32, sample_rate=16000, device='npu'):",
        "default device used by callers that do not pass one; self.to('cuda') fails"),
      C("if device == 'cuda':", "device_type", "add_branch", True, "if device in ('cuda', 'npu'):",
        "with device='npu' the batch stays on CPU while the model is on the NPU -> device mismatch"),
  ])

E("nemo_extract_emb", "examples/speaker_tasks/recognition/extract_speaker_embeddings.py", "explicit_replacement",
  "NeMo examples/speaker_tasks/recognition/extract_speaker_embeddings.py",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT, IMPORT_NOTE),
      C("def get_embeddings(speaker_model, manifest_file, batch_size=1, embedding_dir='./', device='cuda'):",
        "device_type", "replace", False,
        "def get_embeddings(speaker_model, manifest_file, batch_size=1, embedding_dir='./', device='npu'):",
        "default only; main() always passes device"),
      C("device = 'cuda'", "device_type", "replace", True, "device = 'npu'", "CUDA device string"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
        "True on NPU, so extraction silently drops to CPU"),
  ])

E("nemo_vad_infer", "examples/asr/speech_classification/vad_infer.py", "explicit_replacement",
  "NeMo examples/asr/speech_classification/vad_infer.py (MarbleNet streaming VAD inference)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT, IMPORT_NOTE),
      C("from torch.cuda.amp import autocast", "amp", "replace", False, "from torch_npu.npu.amp import autocast",
        AMP_NOTE),
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
        "module-level device silently resolves to CPU on NPU"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA"),
  ])

# --------------------------------------------------------------------------------------------------
# pyannote.audio-style
# --------------------------------------------------------------------------------------------------

E("pa_spk_verif", "pyannote/audio/pipelines/speaker_verification.py", "device_branch_or_abstraction",
  "pyannote.audio pyannote/audio/pipelines/speaker_verification.py (NeMo / SpeechBrain / ONNX WeSpeaker wrappers)",
  [
      C('elif device.type == "cuda":', "device_type", "add_branch", False,
        'elif device.type == "npu": providers = [("CANNExecutionProvider", {"device_id": device.index or 0})]',
        "unconfirmed (onnxruntime CANN provider not in the knowledge base); unported, the ONNX embedding falls "
        "back to CPU with a warning"),
      C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")',
        "CLI evaluation entry point"),
      C("=import typer", "import_torch_npu", "npu_only_addition", True, IMPORT,
        "library module: only the __main__ entry needs the import; " + IMPORT_NOTE),
  ])

E("pa_diarize", "scripts/diarize.py", "explicit_replacement",
  "user batch script around pyannote/speaker-diarization-3.1 (pipeline.to(cuda), one worker per GPU)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT,
        IMPORT_NOTE + "; spawn workers re-import this module"),
      C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", "replace", False,
        "except RuntimeError as err:  # NPU OOM is not a torch.cuda.OutOfMemoryError; re-raise unless 'out of memory' in str(err)",
        "unconfirmed which exception class torch_npu raises on OOM; if it is not this one the retry path never runs"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA"),
      C('=if device.type == "cuda":', "device_type", "replace", False, 'if device.type == "npu":',
        "timing only; the pipeline returns host-side annotations, so results are already synchronised"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", False, "torch.npu.synchronize(device)",
        "group rule: inside the timing guard"),
      C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)",
        "raises without CUDA"),
      C('device = torch.device(f"cuda:{gpu}")', "device_type", "replace", True, 'device = torch.device(f"npu:{gpu}")',
        "pipeline.to() target"),
      C('if device.type == "cuda":  # memory stats are only tracked on gpu', "device_type", "replace", False,
        'if device.type == "npu":  # memory stats are only tracked on gpu', "log only"),
      C("peak = torch.cuda.max_memory_allocated(device) / 2 ** 30", "torch_cuda_api", "replace", False,
        "peak = torch.npu.max_memory_allocated(device) / 2 ** 30", "log only (group rule)"),
      C("if gpu_ids != [-1] and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if gpu_ids != [-1] and not torch.npu.is_available():",
        "True on NPU: silently collapses to one CPU worker"),
      C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpu = torch.npu.device_count()",
        "0 on NPU"),
  ])

E("pa_train", "recipes/finetune_segmentation.py", "explicit_replacement",
  "pyannote.audio segmentation fine-tuning recipe (Lightning Trainer, bf16 on Ampere, fused AdamW)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT, IMPORT_NOTE),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
        "unported, precision='auto' silently becomes fp32 (slower, not wrong)"),
      C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", "replace", False,
        "return \"bf16-mixed\" if torch.npu.is_bf16_supported() else \"16-mixed\"",
        "group rule with the guard above; NPU has no CUDA compute capability (get_device_capability returns None "
        "or an env-configured value)"),
      C("return torch.optim.AdamW(", "fused_optimizer", "replace", False, "return torch_npu.optim.NpuFusedAdamW(",
        "performance only: fused=True is CUDA-only; torch_npu's fused AdamW is the NPU counterpart"),
      C("fused=torch.cuda.is_available(),", "fused_optimizer", "removal", False, None,
        "False on NPU (plain AdamW); NpuFusedAdamW takes no `fused` kwarg (group rule with the line above)"),
      C('os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
        'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
        "NCCL watchdog knob; torch_npu's HCCL counterpart defaults to 1"),
      C('os.environ.setdefault("NCCL_DEBUG", "WARN")', "env_var", "replace", False,
        'os.environ.setdefault("ASCEND_GLOBAL_LOG_LEVEL", "2")', "logging only"),
      C('accelerator="gpu",', "device_type", "replace", True, 'accelerator="npu",',
        "Lightning raises without CUDA; needs an NPU accelerator registered with Lightning (not covered by the "
        "knowledge base)"),
      C('strategy = "ddp" if args.devices * args.num_nodes > 1 else "auto"', "dist_backend", "replace", False,
        'strategy = DDPStrategy(process_group_backend="hccl") if args.devices * args.num_nodes > 1 else "auto"',
        "unconfirmed: Lightning only chooses nccl for cuda devices, otherwise gloo, which cannot reduce NPU tensors"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "log only"),
      C('print(f"peak memory: {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB")', "torch_cuda_api", "replace",
        False, 'print(f"peak memory: {torch.npu.max_memory_allocated() / 2**30:.1f} GiB")', "log only (group rule)"),
  ])

E("pa_env", "environment.yml", "explicit_replacement",
  "conda environment.yml for a pyannote/SpeechBrain/NeMo diarization project (pytorch-cuda from the nvidia channel)",
  [
      C("=- nvidia", "import_torch_npu", "removal", False, None, "channel only matters for CUDA packages"),
      C("- pytorch=2.1.2", "import_torch_npu", "replace", True, "- pytorch=2.1.0  # CPU build; torch-npu via pip",
        "torch_npu wheels pin the exact torch version (2.1.0)"),
      C("- torchaudio=2.1.2", "import_torch_npu", "replace", True, "- torchaudio=2.1.0",
        "must match the torch pin"),
      C("- pytorch-cuda=12.1", "import_torch_npu", "removal", True, None,
        "selects the CUDA build of pytorch; torch_npu runs on the CPU build"),
      C("=- cudnn", "import_torch_npu", "removal", False, None, "CUDA library, unused on Ascend"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post12",
        "the torch_npu wheel itself"),
      C("- onnxruntime-gpu==1.17.1", "custom_cuda_extension", "replace", False, "- onnxruntime==1.17.1",
        "CUDA build of onnxruntime; unconfirmed whether it installs on aarch64"),
      C("=- nvidia-ml-py", "custom_cuda_extension", "removal", False, None,
        "NVML bindings have no NPU equivalent; nothing in these files imports pynvml"),
  ])
