"""Labels for probe176 (promptable segmentation: SAM / SAM 2 / Grounded-SAM / HQ-SAM / MedSAM / EfficientSAM).

One C(...) per line a careful porter edits to run (and run well) on Ascend NPU with torch_npu.
`sub` names the upstream line ("=text" = whole stripped line).  See README.md for the policy.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ---------------------------------------------------------------- Segment Anything (v1)
E("sam_amg", "scripts/amg.py", "explicit_replacement",
  "segment-anything scripts/amg.py (automatic mask generation CLI, --device cuda)", [
    C("from segment_anything import SamAutomaticMaskGenerator, sam_model_registry", "import_torch_npu",
      "npu_only_addition", True, "import torch_npu",
      "entry script never imports torch itself; torch_npu must be imported for sam.to('npu') on torch_npu < 2.5.1 (autoload only from 2.5.1)"),
    C('default="cuda", help="The device to run generation on."', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu", help="The device to run generation on.")',
      "default device string; sam.to(device='cuda') fails on an NPU host"),
])

E("sam_predictor", "segment_anything/predictor.py", "device_branch_or_abstraction",
  "segment-anything SamPredictor (device-agnostic: everything follows self.model.device)", [])

E("sam_onnx_quickstart", "scripts/onnx_quickstart.py", "explicit_replacement",
  "segment-anything ONNX export + onnxruntime example (notebook as script)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; needed for the 'npu' device on torch_npu < 2.5.1"),
    C('=device = "cuda"', "device_type", "replace", True, 'device = "npu"',
      "image encoder is moved to this device; 'cuda' fails on an NPU host"),
])

# ---------------------------------------------------------------- SAM 2 library
E("sam2_build", "sam2/build_sam.py", "explicit_replacement",
  "facebookresearch/sam2 sam2/build_sam.py (build_sam2 / build_sam2_video_predictor, device='cuda' defaults)", [
    C('=device="cuda",', "device_type", "replace", True, 'device="npu",',
      "default used by build_sam2_hf/from_pretrained callers that pass no device; model.to('cuda') fails"),
    C('device="cuda",  # the video predictor', "device_type", "replace", True,
      'device="npu",  # the video predictor keeps its inference state on this device',
      "same default for build_sam2_video_predictor(_hf)"),
])

E("sam2_misc", "sam2/utils/misc.py", "device_branch_or_abstraction",
  "sam2/utils/misc.py (get_sdpa_settings, _C connected components with fallback, video frame loaders)", [
    C("if torch.cuda.is_available():", "attention_kernel", "add_branch", False,
      'if getattr(torch, "npu", None) is not None and torch.npu.is_available(): return False, True, False',
      "on NPU the else-branch returns old_gpu=True/math on; the flags only feed torch.backends.cuda.sdp_kernel, "
      "which is unsupported on Ascend, so this is cosmetic (unconfirmed whether NPU SDPA reads the global sdp flags). "
      "The .major lines inside stay CUDA-only and need no edit"),
    C("from sam2 import _C", "custom_cuda_extension", "replace", False,
      "from sam2.utils.cc_torch import get_connected_components_torch as _C_cc  # no nvcc-built _C on Ascend",
      "_C is an nvcc extension that is not built on Ascend; the ImportError is caught in fill_holes_in_mask_scores, "
      "which then skips hole filling (upstream says results are mostly unaffected). Port = torch/cv2 fallback"),
    C('=compute_device=torch.device("cuda"),', "device_type", "replace", True,
      'compute_device=torch.device("npu"),',
      "public load_video_frames default (used by tools/demo callers that omit compute_device); frames .to('cuda') fail"),
    C('compute_device=torch.device("cuda"),  # overridden by the video predictor', "device_type", "replace", False,
      'compute_device=torch.device("npu"),  # overridden by the video predictor',
      "internal helper; every in-repo caller passes compute_device explicitly"),
    C("def load_video_frames_from_video_file(", "device_type", "replace", False,
      'def load_video_frames_from_video_file(video_path, image_size, offload_video_to_cpu, img_mean=(0.485, 0.456, 0.406), img_std=(0.229, 0.224, 0.225), compute_device=torch.device("npu")):',
      "internal helper; only reached through load_video_frames which passes compute_device"),
])

E("sam2_transformer", "sam2/modeling/sam/transformer.py", "explicit_replacement",
  "sam2/modeling/sam/transformer.py (SDPA with torch.backends.cuda.sdp_kernel context, RoPEAttention)", [
    C("return torch.backends.cuda.sdp_kernel(", "attention_kernel", "replace", False,
      "return contextlib.nullcontext()  # sdp_kernel is unsupported on Ascend; NPU SDPA picks its fused kernel",
      "torch.backends.cuda.sdp_kernel is ✘ in Ascend's 2.7.1 list and in msFmkTransplt's unsupported list; any "
      "exception is already caught (ALLOW_ALL_KERNELS fallback), so not a hard failure"),
])

E("sam2_video_predictor", "sam2/sam2_video_predictor.py", "explicit_replacement",
  "sam2/sam2_video_predictor.py (SAM2VideoPredictor + SAM2VideoPredictorVOS torch.compile)", [
    C('prev_sam_mask_logits = prev_out["pred_masks"].cuda(non_blocking=True)', "tensor_to_device", "replace", True,
      'prev_sam_mask_logits = prev_out["pred_masks"].to(inference_state["device"], non_blocking=True)',
      "hard-coded .cuda() on a correction click"),
    C('image = inference_state["images"][frame_idx].cuda().float().unsqueeze(0)', "tensor_to_device", "replace", True,
      'image = inference_state["images"][frame_idx].to(inference_state["device"]).float().unsqueeze(0)',
      "hard-coded .cuda() on every frame feature miss"),
    C("self.memory_encoder.forward = torch.compile(", "compile_mode", "replace", False,
      'self.memory_encoder.forward = torch.compile(self.memory_encoder.forward, backend="npugraphs", fullgraph=True, dynamic=False)',
      "vos_optimized only; mode='max-autotune' relies on Inductor+Triton/CUDA graphs. Unconfirmed how it behaves on "
      "NPU (transfer_to_npu forces has_triton=False; Ascend lists backend='npugraphs' as the cudagraphs analogue)"),
    C("self.memory_attention.forward = torch.compile(", "compile_mode", "replace", False,
      'self.memory_attention.forward = torch.compile(self.memory_attention.forward, backend="npugraphs", fullgraph=True, dynamic=True)',
      "same as above; unconfirmed"),
    C("self.sam_mask_decoder.forward = torch.compile(", "compile_mode", "replace", False,
      'self.sam_mask_decoder.forward = torch.compile(self.sam_mask_decoder.forward, backend="npugraphs", fullgraph=True, dynamic=False)',
      "same as above; unconfirmed"),
])

E("sam2_setup", "setup.py", "explicit_replacement",
  "sam2 setup.py (SAM2_BUILD_CUDA / CUDAExtension sam2._C with BUILD_ALLOW_ERRORS)", [
    C('BUILD_CUDA = os.getenv("SAM2_BUILD_CUDA", "1") == "1"', "custom_cuda_extension", "replace", False,
      'BUILD_CUDA = os.getenv("SAM2_BUILD_CUDA", "0") == "1"  # no nvcc on Ascend hosts',
      "CUDAExtension cannot build without CUDA_HOME/nvcc, but BUILD_ALLOW_ERRORS=1 (default) swallows the error and "
      "installs without _C; disabling by default just removes the failing build step"),
])

E("sam2_image_example", "examples/image_predictor_example.py", "device_branch_or_abstraction",
  "sam2 notebooks/image_predictor_example (cuda/mps/cpu selection, autocast bf16 __enter__, TF32 on Ampere)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; torch.npu is only there after importing torch_npu on < 2.5.1"),
    C("=if torch.cuda.is_available():", "device_type", "add_branch", True,
      'elif torch.npu.is_available(): device = torch.device("npu")',
      "without an NPU branch the script silently runs SAM 2 on the CPU"),
    C('=if device.type == "cuda":', "device_type", "replace", True, 'if device.type in ("cuda", "npu"):',
      "gates the bf16 autocast; NPU would silently run in fp32"),
    C('torch.autocast("cuda", dtype=torch.bfloat16).__enter__()', "amp", "replace", True,
      "torch.autocast(device.type, dtype=torch.bfloat16).__enter__()",
      "autocast('cuda') on a host without CUDA disables itself with a warning: model silently runs fp32"),
    C("if torch.cuda.get_device_properties(0).major >= 8:", "device_capability_check", "replace", True,
      'if device.type == "cuda" and torch.cuda.get_device_properties(0).major >= 8:',
      "now reached on NPU; torch.cuda.* raises on an NPU host, and NPU device properties have no major/minor"),
])

E("sam2_benchmark", "sam2/benchmark.py", "transfer_to_npu",
  "sam2/benchmark.py (VOS-optimized video predictor FPS benchmark)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "quick port via transfer_to_npu: maps torch.cuda.*, 'cuda' strings and torch.autocast('cuda')"),
    C("if torch.cuda.get_device_properties(0).major >= 8:", "device_capability_check", "replace", True,
      'if getattr(torch.cuda.get_device_properties(0), "major", 0) >= 8:',
      "transfer_to_npu maps get_device_properties to torch_npu, whose properties only carry name/total_memory/"
      "L2_cache_size/core counts; .major is not there"),
])

E("sam2_amg", "sam2/automatic_mask_generator.py", "explicit_replacement",
  "sam2/automatic_mask_generator.py (SAM2AutomaticMaskGenerator with torchvision batched_nms)", [
    C("from torchvision.ops.boxes import batched_nms, box_area  # type: ignore", "unsupported_op_workaround",
      "npu_only_addition", False, "import torchvision_npu  # NPU kernels for torchvision::nms",
      "batched_nms runs on NPU boxes; without torchvision_npu the torchvision::nms op has no NPU kernel and "
      "(per torch_npu's boxed fallback) should run on the CPU: a performance issue, unconfirmed for torchvision ops"),
])

E("sam2_demo_predictor", "demo/backend/server/inference/predictor.py", "device_branch_or_abstraction",
  "sam2 demo backend InferenceAPI (cuda/mps/cpu pick, autocast_context, GPU memory stats)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the NPU branch below uses torch.npu; gunicorn app imports this module first"),
    C("if torch.cuda.is_available() and not force_cpu_device:", "device_type", "add_branch", True,
      'elif torch.npu.is_available() and not force_cpu_device: device = torch.device("npu")',
      "otherwise the demo silently serves from the CPU"),
    C('=if self.device.type == "cuda":', "amp", "replace", True, 'if self.device.type in ("cuda", "npu"):',
      "autocast_context would be a nullcontext on NPU: silently fp32"),
    C('return torch.autocast("cuda", dtype=torch.bfloat16)', "amp", "replace", True,
      "return torch.autocast(self.device.type, dtype=torch.bfloat16)",
      "autocast('cuda') is a disabled no-op on an NPU host"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", False,
      'elif torch.npu.is_available(): session_stats_str += f"{torch.npu.memory_allocated() // 1024**2} MiB used"',
      "log string only; on NPU the memory part is silently left empty"),
])

# ---------------------------------------------------------------- SAM 2 training
E("sam2_trainer", "training/trainer.py", "device_branch_or_abstraction",
  "sam2 training/trainer.py (Trainer: accelerator, DDP, AMP GradScaler/autocast, TF32/cudnn flags)", [
    C('accelerator: str = "cuda",', "device_type", "replace", False, 'accelerator: str = "npu",',
      "the shipped configs set trainer.accelerator explicitly (see the YAML), so the default is not used"),
    C('distributed_conf.backend = "nccl" if accelerator == "cuda" else "gloo"', "dist_backend", "replace", True,
      'distributed_conf.backend = {"cuda": "nccl", "npu": "hccl"}.get(accelerator, "gloo")',
      "with accelerator npu this would pick gloo for NPU tensors"),
    C('=if accelerator == "cuda":', "device_type", "add_branch", True,
      'elif accelerator == "npu": self.device = torch.device("npu", self.local_rank); torch.npu.set_device(self.local_rank)',
      "any other accelerator raises ValueError"),
    C('device_ids=[self.local_rank] if accelerator == "cuda" else [],', "device_type", "replace", False,
      'device_ids=[self.local_rank] if accelerator in ("cuda", "npu") else [],',
      "[] is treated like None for a single-device module, so DDP still works; explicit ids are cleaner"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on an NPU host (CUDA never initialised); NPU cache just is not released after val"),
    C("with torch.cuda.amp.autocast(enabled=self.optim_conf.amp.enabled, dtype=", "amp", "replace", True,
      "with torch.autocast(device_type=self.device.type, enabled=self.optim_conf.amp.enabled, dtype=get_amp_type(self.optim_conf.amp.amp_dtype)):",
      "torch.cuda.amp.autocast is disabled without CUDA: the bf16 training config silently trains in fp32"),
    C("=with torch.cuda.amp.autocast(", "amp", "replace", True,
      "with torch.autocast(device_type=self.device.type,", "validation autocast, same reason"),
    C("self.scaler = torch.cuda.amp.GradScaler(", "amp", "replace", True, "self.scaler = torch.npu.amp.GradScaler(",
      "torch.cuda.amp.GradScaler disables itself without CUDA: fp16 runs would lose loss scaling"),
    C("if torch.cuda.is_available():  # peak memory for the val log", "torch_cuda_api", "add_branch", False,
      "elif torch.npu.is_available():  # peak memory for the val log",
      "logging only"),
])

E("sam2_train_distributed", "training/utils/distributed.py", "explicit_replacement",
  "sam2 training/utils/distributed.py (omnivision-style all_gather / all_reduce helpers)", [
    C('if dist.get_backend() == "nccl":', "dist_backend", "replace", True, 'if dist.get_backend() in ("nccl", "hccl"):',
      "backend-string comparison is not rewritten by any tool; on hccl the 'cpu group' would be the HCCL world group"),
    C('device = "cuda" if cpu_group is None else "cpu"', "device_type", "replace", True,
      'device = "npu" if cpu_group is None else "cpu"', "all_gather buffers are created on this device"),
    C('orig_device = "cpu" if not tensor.is_cuda else "gpu"', "tensor_to_device", "replace", True,
      'orig_device = "cpu" if tensor.device.type == "cpu" else "gpu"',
      "is_cuda is False for NPU tensors, so NPU inputs would be recorded as CPU and moved back to the CPU"),
    C("and torch.distributed.get_backend() == torch.distributed.Backend.NCCL", "dist_backend", "replace", True,
      'and torch.distributed.get_backend() in (torch.distributed.Backend.NCCL, "hccl")',
      "without it CPU tensors reach HCCL all_reduce/broadcast, which needs device tensors"),
    C("and not tensor.is_cuda", "tensor_to_device", "replace", False, 'and tensor.device.type == "cpu"',
      "harmless once the backend test is fixed (.npu() on an NPU tensor is a no-op); cleaner"),
    C("tensor = tensor.cuda()", "tensor_to_device", "replace", True, "tensor = tensor.npu()", "hard-coded .cuda()"),
    C('if tensor.is_cuda and orig_device == "cpu":', "tensor_to_device", "replace", True,
      'if tensor.device.type != "cpu" and orig_device == "cpu":',
      "otherwise reduced tensors stay on the NPU although the caller passed CPU tensors"),
    C("torch.cuda.set_device(_cuda_device_index)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(_cuda_device_index)", "torch.cuda.set_device raises on an NPU host"),
])

E("sam2_train_launcher", "training/train.py", "explicit_replacement",
  "sam2 training/train.py (hydra + submitit launcher, mp spawn per GPU)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry point; spawned workers re-import this module, so torch_npu is loaded in every rank"),
    C('"gpus_per_node": cfg.launcher.gpus_per_node,', "device_type", "replace", False,
      '"slurm_gres": f"npu:{cfg.launcher.gpus_per_node}",',
      "cluster path only: submitit turns gpus_per_node into a SLURM gpu gres request; Ascend clusters name the "
      "gres differently (unconfirmed, site dependent)"),
])

E("sam2_train_yaml", "sam2/configs/sam2.1_training/sam2.1_hiera_b+_MOSE_finetune.yaml", "explicit_replacement",
  "sam2 configs/sam2.1_training/sam2.1_hiera_b+_MOSE_finetune.yaml", [
    C("accelerator: cuda", "device_type", "replace", True, "accelerator: npu",
      "trainer builds torch.device('cuda', local_rank) from this"),
    C("backend: nccl", "dist_backend", "replace", True, "backend: hccl", "NCCL is not available on Ascend"),
    C('TORCH_NCCL_ASYNC_ERROR_HANDLING: "1"', "env_var", "replace", False, 'HCCL_ASYNC_ERROR_HANDLING: "1"',
      "NCCL variable is ignored on HCCL; HCCL_ASYNC_ERROR_HANDLING already defaults to 1 (MindCluster doc)"),
])

E("sam2_backend_dockerfile", "demo/backend.Dockerfile", "explicit_replacement",
  "sam2 demo/backend.Dockerfile (pytorch/pytorch CUDA runtime image, gunicorn)", [
    C("ARG BASE_IMAGE=pytorch/pytorch:2.5.1-cuda12.1-cudnn9-runtime", "torch_cuda_api", "replace", True,
      "ARG BASE_IMAGE=ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "CUDA runtime image carries a CUDA torch build and no CANN; needs a CANN base (Ascend cann-container-image)"),
    C("RUN pip install --upgrade pip setuptools", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install torch==2.6.0 --index-url https://download.pytorch.org/whl/cpu && pip install torch-npu==2.6.0.post3",
      "torch/torch_npu pair (2.6.0 + 7.2.0 line, CANN 8.3.RC1) before installing sam2 (needs torch>=2.5.1)"),
])

# ---------------------------------------------------------------- Grounding DINO / Grounded-SAM
E("gdino_msda", "groundingdino/models/GroundingDINO/ms_deform_attn.py", "device_branch_or_abstraction",
  "GroundingDINO ms_deform_attn.py (MultiScaleDeformableAttention with groundingdino._C and PyTorch fallback)", [
    C("if torch.cuda.is_available() and value.is_cuda:", "npu_fused_op", "add_branch", False,
      'elif value.device.type == "npu" and npu_msda is not None: output = npu_msda(value, spatial_shapes, level_start_index, sampling_locations, attention_weights)',
      "on NPU the condition is False and the grid_sample PyTorch path runs (correct, slower). A fused NPU MSDA "
      "op (Ascend DrivingSDK / mx_driving) would be a performance port; unconfirmed, not read in detail"),
])

E("gdino_inference", "groundingdino/util/inference.py", "explicit_replacement",
  "GroundingDINO groundingdino/util/inference.py (load_model / predict / Model with device='cuda' defaults)", [
    C('def load_model(model_config_path: str, model_checkpoint_path: str, device: str = "cuda"):', "device_type",
      "replace", True,
      'def load_model(model_config_path: str, model_checkpoint_path: str, device: str = "npu"):',
      "default device; args.device feeds build_model"),
    C('=device: str = "cuda",', "device_type", "replace", True, 'device: str = "npu",',
      "predict() moves model and image to this device"),
    C('def __init__(self, model_config_path: str, model_checkpoint_path: str, device: str = "cuda"):', "device_type",
      "replace", True,
      'def __init__(self, model_config_path: str, model_checkpoint_path: str, device: str = "npu"):',
      "Model(...) is constructed without device by the Grounded-SAM demos"),
])

E("gdino_setup", "setup.py", "explicit_replacement",
  "GroundingDINO setup.py (CUDAExtension groundingdino._C when CUDA_HOME / TORCH_CUDA_ARCH_LIST)", [
    C('if CUDA_HOME is not None and (torch.cuda.is_available() or "TORCH_CUDA_ARCH_LIST" in os.environ):',
      "custom_cuda_extension", "replace", False,
      "if CUDA_HOME is not None and torch.cuda.is_available():  # never try nvcc on Ascend hosts",
      "on a clean NPU host the else-branch already skips _C and the PyTorch MSDA path is used; the "
      "TORCH_CUDA_ARCH_LIST escape hatch forces an nvcc build when a leftover CUDA_HOME env is present (Dockerfile)"),
])

E("grounded_sam_simple_demo", "grounded_sam_simple_demo.py", "explicit_replacement",
  "Grounded-Segment-Anything grounded_sam_simple_demo.py (GroundingDINO Model + SamPredictor)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("DEVICE = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "DEVICE = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "SAM would silently run on the CPU on an NPU host"),
])

E("grounded_sam_dockerfile", "Dockerfile", "explicit_replacement",
  "Grounded-Segment-Anything Dockerfile (pytorch devel image, CUDA_HOME / TORCH_CUDA_ARCH_LIST for GroundingDINO)", [
    C("FROM pytorch/pytorch:1.13.1-cuda11.6-cudnn8-devel", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "CUDA devel image: no CANN, CUDA torch build"),
    C('ENV TORCH_CUDA_ARCH_LIST "${TORCH_ARCH}"', "custom_cuda_extension", "removal", False, None,
      "harmless once CUDA_HOME is gone (GroundingDINO's setup needs both to choose nvcc)"),
    C("ENV CUDA_HOME /usr/local/cuda-11.6/", "custom_cuda_extension", "removal", True, None,
      "with CUDA_HOME set and TORCH_CUDA_ARCH_LIST defined (even empty), GroundingDINO's setup.py picks "
      "CUDAExtension and the pip install fails without nvcc"),
    C("=RUN python -m pip install --no-cache-dir wheel", "import_torch_npu", "npu_only_addition", True,
      "RUN python -m pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu && python -m pip install --no-cache-dir torch-npu==2.1.0.post17",
      "CPU torch + matching torch_npu must be present before GroundingDINO's setup imports torch"),
])

E("grounded_sam_requirements", "requirements.txt", "explicit_replacement",
  "Grounded-SAM(-2)-style requirements.txt with a CUDA wheel index", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu is installed on top of the CPU torch wheel (x86) / plain PyPI torch (aarch64), not the cu118 build"),
    C("=torch==2.0.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.0.1.post1",
      "torch_npu wheel version must equal the torch version"),
    C("=onnxruntime-gpu", "torch_cuda_api", "replace", False, "onnxruntime",
      "CUDA build of onnxruntime; falls back to CPU EP on NPU hosts but may have no aarch64 wheel (unconfirmed)"),
])

E("grounded_sam_run_sh", "scripts/run_grounded_sam_demo.sh", "explicit_replacement",
  "Grounded-SAM batch launcher shell script (--device cuda, CUDA_VISIBLE_DEVICES, nvidia-smi)", [
    C("=set -e", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN libraries (libascendcl/libhccl) are not found unless set_env.sh is sourced"),
    C("export CUDA_VISIBLE_DEVICES=${GPU_ID:-0}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU_ID:-0}",
      "CUDA_VISIBLE_DEVICES is ignored: every run silently lands on NPU 0 on a shared box"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info", "nvidia-smi is absent on Ascend hosts and set -e aborts the script"),
    C('--device "cuda" ${EXTRA_ARGS}', "device_type", "replace", True, '--device "npu" ${EXTRA_ARGS}',
      "device string passed to grounded_sam_demo.py"),
])

# ---------------------------------------------------------------- HQ-SAM training
E("hqsam_misc", "train/utils/misc.py", "explicit_replacement",
  "HQ-SAM train/utils/misc.py (DETR-style SmoothedValue / all_gather / MetricLogger / init_distributed_mode)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "tensor_to_device",
      "replace", True, "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "meter sync tensor for HCCL all_reduce (fp64 collectives on HCCL unconfirmed)"),
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).to("npu")', "all_gather payload"),
    C('local_size = torch.tensor([tensor.numel()], device="cuda")', "tensor_to_device", "replace", True,
      'local_size = torch.tensor([tensor.numel()], device="npu")', "all_gather sizes"),
    C('size_list = [torch.tensor([0], device="cuda") for _ in range(world_size)]', "tensor_to_device", "replace", True,
      'size_list = [torch.tensor([0], device="npu") for _ in range(world_size)]', "all_gather sizes"),
    C('tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="cuda"))', "tensor_to_device",
      "replace", True, 'tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="npu"))',
      "all_gather receive buffers"),
    C('padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="cuda")', "tensor_to_device",
      "replace", True, 'padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="npu")',
      "all_gather padding"),
    C("has_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "has_cuda = torch.cuda.is_available() or torch.npu.is_available()", "log column only"),
    C('extra["memory"] = torch.cuda.max_memory_allocated() / MB', "torch_cuda_api", "replace", False,
      'extra["memory"] = torch.npu.max_memory_allocated() / MB', "log column only"),
    C("args.gpu = args.local_rank = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.local_rank = args.rank % torch.npu.device_count()",
      "SLURM path: device_count() is 0 without CUDA -> ZeroDivisionError"),
    C("device_count: {}", "torch_cuda_api", "replace", False,
      "print('world size: {}, world rank: {}, local rank: {}, device_count: {}'.format(args.world_size, args.rank, args.local_rank, torch.npu.device_count()))",
      "log line only (would print 0)"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "raises on an NPU host"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
      "NCCL is not available on Ascend"),
])

E("hqsam_train", "train/train.py", "explicit_replacement",
  "HQ-SAM train/train.py (MaskDecoderHQ, DDP training loop with .cuda())", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("self.load_state_dict(torch.load(checkpoint_path))", "tensor_to_device", "replace", False,
      'self.load_state_dict(torch.load(checkpoint_path, map_location="cpu"))',
      "fails only if the extracted decoder checkpoint holds CUDA tensors (unconfirmed)"),
    C('parser.add_argument("--device", type=str, default="cuda",', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu",', "SAM and the HQ decoder are moved to args.device"),
    C("=if torch.cuda.is_available():", "device_type", "replace", True, "if torch.npu.is_available():",
      "otherwise the HQ decoder stays on the CPU and DDP(device_ids=[gpu]) rejects a CPU module"),
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "hard-coded .cuda()"),
    C("optimizer = optim.Adam(net_without_ddp.parameters()", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdam(net_without_ddp.parameters(), lr=args.learning_rate, betas=(0.9, 0.999), eps=1e-08, weight_decay=0)",
      "performance only (msFmkTransplt advice: Adam -> NpuFusedAdam)"),
    C("if torch.cuda.is_available():  # move the batch to the GPU", "device_type", "replace", True,
      "if torch.npu.is_available():  # move the batch to the NPU",
      "batch would stay on the CPU while SAM runs on the NPU"),
    C("inputs = inputs.cuda()", "tensor_to_device", "replace", True, "inputs = inputs.npu()", "hard-coded .cuda()"),
    C("labels = labels.cuda()", "tensor_to_device", "replace", True, "labels = labels.npu()", "hard-coded .cuda()"),
])

E("hqsam_train_sh", "train/train_hq_sam.sh", "explicit_replacement",
  "HQ-SAM train/train_hq_sam.sh (8-GPU torch.distributed.launch)", [
    C("=#!/bin/bash", "env_var", "npu_only_addition", True, SET_ENV, "CANN environment for torch_npu/HCCL"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "lists all 8 devices, i.e. the default on an 8-NPU host, so ignoring it changes nothing"),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None, "NCCL-only knob, ignored by HCCL"),
])

# ---------------------------------------------------------------- MedSAM / EfficientSAM / MobileSAM
E("medsam_multi", "train_multi_gpus.py", "explicit_replacement",
  "MedSAM train_multi_gpus.py (mp.spawn + DDP fine-tuning of SAM with AMP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; mp.spawn children re-import it"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op at import time"),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "ngpus_per_node = torch.npu.device_count()", "0 on an NPU host -> spawns no workers"),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)",
      "raises on an NPU host"),
    C('torch.distributed.init_process_group(backend="nccl"', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(backend="hccl", init_method=args.init_method, rank=rank, world_size=world_size)',
      "NCCL is not available on Ascend"),
    C("=).cuda()", "tensor_to_device", "replace", True, ").npu()", "model .cuda()"),
    C("cuda_mem_info = torch.cuda.mem_get_info(gpu)", "torch_cuda_api", "replace", True,
      "cuda_mem_info = torch.npu.mem_get_info(gpu)", "raises on an NPU host"),
    C('os.system("nvidia-smi")', "torch_cuda_api", "replace", False, 'os.system("npu-smi info")',
      "os.system only prints 'command not found'"),
    C("torch.cuda.empty_cache()  # free cached blocks", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # free cached blocks before loading the checkpoint", "silent no-op"),
    C('loc = "cuda:{}".format(gpu)', "device_type", "replace", True, 'loc = "npu:{}".format(gpu)',
      "map_location for resume"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True, "scaler = torch.npu.amp.GradScaler()",
      "disabled without CUDA: fp16 training without loss scaling"),
    C("image, gt2D = image.cuda(), gt2D.cuda()", "tensor_to_device", "replace", True,
      "image, gt2D = image.npu(), gt2D.npu()", "hard-coded .cuda()"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16):', "amp", "replace", True,
      'with torch.autocast(device_type="npu", dtype=torch.float16):',
      "autocast('cuda') is disabled on an NPU host: -use_amp silently trains fp32"),
])

E("efficientsam_app", "app.py", "transfer_to_npu",
  "EfficientSAM / MobileSAM-style gradio app (device = 'cuda' if available else 'cpu')", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "quick port: transfer_to_npu remaps torch.cuda.is_available, 'cuda' device args and autocast('cuda')"),
    C("AMP_DTYPE = torch.bfloat16 if", "device_capability_check", "replace", True,
      "AMP_DTYPE = torch.bfloat16  # Atlas A2/A3 support bf16; get_device_capability() is None under torch_npu",
      "torch.cuda.get_device_capability() returns None on NPU (unless TORCH_NPU_DEVICE_CAPABILITY is set): None[0] raises"),
])

E("mobilesam_env", "environment.yml", "explicit_replacement",
  "MobileSAM/EfficientSAM-style conda environment.yml (pytorch + nvidia channels, pytorch-cuda)", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None, "channel only needed for pytorch-cuda"),
    C("=- pytorch-cuda=11.8", "torch_cuda_api", "replace", True, "- cpuonly",
      "pulls the CUDA build of pytorch; torch_npu sits on the CPU build"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post17",
      "torch_npu for torch 2.1.0 (wheel version must equal torch version)"),
])
