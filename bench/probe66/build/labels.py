"""Labels for probe66 (hand-written synthetic upstream files; see ../README.md).

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

E("gdino_ms_deform_attn", "groundingdino/models/GroundingDINO/ms_deform_attn.py", "kernel_rewrite",
  "IDEA-Research/GroundingDINO ms_deform_attn.py (guarded _C import, is_cuda gate, grid_sample fallback)", [
    C("if torch.cuda.is_available() and value.is_cuda:", "custom_cuda_extension", B, False,
      "if value.device.type == 'npu' and HAS_MX_DRIVING: output = mx_driving.multi_scale_deformable_attn(value, spatial_shapes, level_start_index, sampling_locations, attention_weights)",
      "the gate already sends NPU tensors to the grid_sample fallback (correct but slow, big intermediate); an NPU branch to a fused MSDA kernel (mx_driving / DrivingSDK) is performance only; op name unconfirmed"),
  ])

E("gdino_setup", "setup.py", "kernel_rewrite",
  "IDEA-Research/GroundingDINO setup.py (CUDAExtension groundingdino._C, CUDA_HOME gate, returns None without CUDA)", [
    C("from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension", "custom_cuda_extension", R, False,
      "from torch_npu.utils.cpp_extension import NpuExtension",
      "the ms_deform_attn kernel has no nvcc path on an Ascend host; with CUDA_HOME unset the build skips _C and the model uses the grid_sample fallback, so a port to an NPU op is performance only"),
    C("if CUDA_HOME is not None and (torch.cuda.is_available()", "custom_cuda_extension", R, False,
      "if os.environ.get('BUILD_NPU_OPS', '0') == '1':",
      "on NPU CUDA_HOME is None, so the build returns no extension and installs cleanly; only an NPU-op port edits this"),
    C("extension = CUDAExtension", "custom_cuda_extension", R, False, "extension = NpuExtension",
      "CUDAExtension needs nvcc; NpuExtension links torch_npu/ACL"),
    C("sources += source_cuda", "custom_cuda_extension", R, False,
      "sources += glob.glob(os.path.join(extensions_dir, 'npu', '*.cpp'))",
      ".cu sources cannot be compiled for Ascend; needs Ascend C kernels"),
    C('define_macros += [("WITH_CUDA", None)]', "custom_cuda_extension", R, False,
      'define_macros += [("WITH_NPU", None)]', "vision.cpp dispatches on WITH_CUDA"),
    C('=extra_compile_args["nvcc"] = [', "custom_cuda_extension", X, False, None,
      "nvcc flag block (-D__CUDA_NO_HALF_OPERATORS__ ...) has no meaning for the NPU toolchain"),
  ])

E("gdino_demo", "demo/inference_on_a_image.py", "explicit_replacement",
  "IDEA-Research/GroundingDINO demo/inference_on_a_image.py (cpu_only flag, hard-coded 'cuda')", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "'npu' device strings need the torch_npu backend registered"),
    C('args.device = "cuda" if not cpu_only else "cpu"', "device_type", R, True,
      'args.device = "npu" if not cpu_only else "cpu"',
      "build_model places the text encoder / position-embedding tensors on args.device; 'cuda' fails on an NPU host"),
    C('=device = "cuda" if not cpu_only else "cpu"', "device_type", R, True,
      'device = "npu" if not cpu_only else "cpu"', "model.to('cuda') raises without CUDA"),
  ])

E("ogd_misc", "util/misc.py", "explicit_replacement",
  "longzw1997/Open-GroundingDino util/misc.py (DETR-style dist helpers, 'cuda' all_gather buffers, NCCL)", [
    C("=import torch.distributed as dist", "import_torch_npu", A, True, "import torch_npu",
      "torch.npu.* and the hccl backend need torch_npu loaded"),
    C('dtype=torch.float64, device="cuda")', "device_type", R, True,
      't = torch.tensor([self.count, self.total], dtype=torch.float64, device="npu")',
      "meter sync buffer hard-coded to cuda; fails on NPU (fp64 all_reduce on HCCL also worth checking, unconfirmed)"),
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", R, True,
      'tensor = torch.ByteTensor(storage).to("npu")', "all_gather pickled buffer"),
    C('local_size = torch.tensor([tensor.numel()], device="cuda")', "device_type", R, True,
      'local_size = torch.tensor([tensor.numel()], device="npu")', ""),
    C('size_list = [torch.tensor([0], device="cuda")', "device_type", R, True,
      'size_list = [torch.tensor([0], device="npu") for _ in range(world_size)]', ""),
    C('tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="cuda"))', "device_type", R, True,
      'tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="npu"))', ""),
    C('padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="cuda")', "device_type", R, True,
      'padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="npu")', ""),
    C("memory=torch.cuda.max_memory_allocated() / MB,", "torch_cuda_api", R, False,
      "memory=torch.npu.max_memory_allocated() / MB,",
      "only reached when torch.cuda.is_available() (False on NPU, so the log just drops the max-mem column); cosmetic"),
    C("args.world_size, args.rank, args.local_rank, torch.cuda.device_count()", "torch_cuda_api", R, False,
      "args.world_size, args.rank, args.local_rank, torch.npu.device_count()",
      "print only; returns 0 without CUDA"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", R, True,
      "torch.npu.set_device(args.local_rank)", "raises without a CUDA build"),
    C('args.dist_backend = "nccl"', "dist_backend", R, True, 'args.dist_backend = "hccl"', "NCCL is unavailable on Ascend"),
  ])

E("ogd_engine", "engine.py", "explicit_replacement",
  "longzw1997/Open-GroundingDino engine.py (torch.cuda.amp GradScaler/autocast around the grounding loss)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "needed for torch.npu.amp / 'npu' autocast"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "CUDA GradScaler is inactive for NPU tensors: --amp would run without loss scaling"),
    C("=with torch.cuda.amp.autocast(enabled=args.amp):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=args.amp):", "CUDA autocast does not cover NPU tensors; --amp silently runs fp32"),
    C("autocast(enabled=args.amp):  # eval under amp as well", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=args.amp):", "eval-side autocast, same issue"),
  ])

E("ogd_main", "main.py", "explicit_replacement",
  "longzw1997/Open-GroundingDino main.py (--device default 'cuda', DDP, AdamW, pin_memory loader)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "'npu' device needs torch_npu registered"),
    C("parser.add_argument('--device', default='cuda',", "device_type", R, True,
      "parser.add_argument('--device', default='npu',", "torch.device('cuda') then model.to(device) fails on NPU"),
    C("optimizer = torch.optim.AdamW(param_dicts, lr=args.lr,", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(param_dicts, lr=args.lr,",
      "performance only (fused AdamW on NPU); param_dicts with per-group lr are accepted"),
  ])

E("ogd_train_dist", "scripts/train_dist.sh", "explicit_replacement",
  "Open-GroundingDino scripts/train_dist.sh (torch.distributed.launch, NCCL env tuning, nvidia-smi)", [
    C("export CUDA_VISIBLE_DEVICES=", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "device selection on Ascend goes through ASCEND_RT_VISIBLE_DEVICES"),
    C("export NCCL_DEBUG=WARN", "env_var", X, False, None, "NCCL-only tuning; harmless but dead on HCCL"),
    C("export NCCL_IB_DISABLE=0", "env_var", X, False, None, "NCCL-only"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", R, False, "export HCCL_SOCKET_IFNAME=eth0",
      "HCCL has its own interface selector for multi-node (optional unless the default NIC is wrong)"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", X, False, None, "NVLink-specific"),
    C("nvidia-smi --query-gpu", "torch_cuda_api", R, True, "npu-smi info",
      "nvidia-smi does not exist on an Ascend host; with set -x and no set -e the script continues, but the porter replaces it"),
  ])

E("sam2_build_sam", "sam2/build_sam.py", "explicit_replacement",
  "facebookresearch/sam2 sam2/build_sam.py (device='cuda' defaults of the image and video builders)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "'npu' default device needs torch_npu"),
    C('=device="cuda",', "device_type", R, True, 'device="npu",',
      "build_sam2(...) called without device= (as every notebook does) moves the model to cuda and fails"),
    C('device="cuda",  # video predictor', "device_type", R, True, 'device="npu",  # video predictor',
      "same default for build_sam2_video_predictor"),
  ])

E("sam2_misc", "sam2/utils/misc.py", "explicit_replacement",
  "facebookresearch/sam2 sam2/utils/misc.py (SDPA settings from compute capability, _C connected components, video loader)", [
    C("if torch.cuda.is_available():", "device_capability_check", R, False,
      "if torch.cuda.is_available() or (hasattr(torch, 'npu') and torch.npu.is_available()):",
      "on NPU the else branch picks the math SDPA path (old_gpu=True, math_kernel_on=True): correct but slower; the flags only steer sdp_kernel, which Ascend does not support anyway"),
    C("old_gpu = torch.cuda.get_device_properties(0).major < 7", "device_capability_check", R, False,
      "old_gpu = False",
      "unreached on NPU as written; if the gate is widened, get_device_properties on NPU has no major/minor and must be replaced"),
    C("use_flash_attn = torch.cuda.get_device_properties(0).major >= 8", "device_capability_check", R, False,
      "use_flash_attn = True", "same: capability probe has no NPU meaning"),
    C("from sam2 import _C", "custom_cuda_extension", R, False,
      "from sam2.utils.cc_torch import get_connected_components_torch as _cc  # pure-torch / cv2 fallback",
      "nvcc-built connected-components kernel; the only caller (fill_holes_in_mask_scores) catches the ImportError and skips hole filling, so results differ slightly but nothing fails"),
    C('compute_device=torch.device("cuda"),', "device_type", R, True, 'compute_device=torch.device("npu"),',
      "default argument evaluated at import: torch.device('cuda') itself is fine, but callers relying on the default put frames on cuda"),
  ])

E("sam2_setup", "setup.py", "kernel_rewrite",
  "facebookresearch/sam2 setup.py (optional CUDAExtension sam2._C, SAM2_BUILD_CUDA / SAM2_BUILD_ALLOW_ERRORS)", [
    C('BUILD_CUDA = os.getenv("SAM2_BUILD_CUDA", "1") == "1"', "custom_cuda_extension", R, False,
      'BUILD_CUDA = os.getenv("SAM2_BUILD_CUDA", "0") == "1"',
      "with the default allow-errors mode an NPU install just prints the CUDA error and skips _C; turning the build off by default is cosmetic"),
    C("from torch.utils.cpp_extension import CUDAExtension", "custom_cuda_extension", R, False,
      "from torch_npu.utils.cpp_extension import NpuExtension",
      "only if the porter ships an NPU connected-components op (Ascend C); otherwise drop the extension"),
    C('srcs = ["sam2/csrc/connected_components.cu"]', "custom_cuda_extension", R, False,
      'srcs = ["sam2/csrc/npu/connected_components.cpp"]', ".cu kernel cannot be built for Ascend"),
    C('ext_modules = [CUDAExtension("sam2._C", srcs, extra_compile_args=compile_args)]', "custom_cuda_extension", R, False,
      'ext_modules = [NpuExtension("sam2._C", srcs, extra_compile_args={"cxx": []})]',
      "optional: without it SAM 2 skips hole filling (see sam2/utils/misc.py)"),
  ])

E("sam2_pyproject", "pyproject.toml", "explicit_replacement",
  "facebookresearch/sam2 pyproject.toml with a cibuildwheel section pinned to a CUDA toolkit", [
    C('environment = { SAM2_BUILD_CUDA = "1", SAM2_BUILD_ALLOW_ERRORS = "0"', "env_var", R, True,
      'environment = { SAM2_BUILD_CUDA = "0", SAM2_BUILD_ALLOW_ERRORS = "1" }',
      "ALLOW_ERRORS=0 plus CUDA_HOME/TORCH_CUDA_ARCH_LIST makes the wheel build hard-fail on an Ascend builder"),
    C('before-all = "bash .github/scripts/install_cuda.sh 12.1"', "custom_cuda_extension", X, True, None,
      "installs the CUDA toolkit; meaningless (and failing) on an aarch64 Ascend build host"),
    C("--exclude libc10_cuda.so --exclude libtorch_cuda.so", "custom_cuda_extension", R, False,
      'repair-wheel-command = "auditwheel repair --exclude libc10.so --exclude libtorch.so --exclude libtorch_cpu.so --exclude libtorch_python.so --exclude libtorch_npu.so -w {dest_dir} {wheel}"',
      "exclude list names CUDA torch libs; an NPU op would link libtorch_npu.so instead"),
  ])

E("sam2_video_predictor", "sam2/sam2_video_predictor.py", "explicit_replacement",
  "facebookresearch/sam2 sam2_video_predictor.py, early release (inference_state device hard-coded to cuda, .cuda() frame fetch)", [
    C('inference_state["device"] = torch.device("cuda")', "device_type", R, True,
      'inference_state["device"] = self.device',
      "output masks are moved to this device; cuda fails on NPU (later upstream uses self.device)"),
    C('inference_state["storage_device"] = torch.device("cuda")', "device_type", R, True,
      'inference_state["storage_device"] = self.device', "memory features stored on cuda"),
    C('image = inference_state["images"][frame_idx].cuda().float().unsqueeze(0)', "tensor_to_device", R, True,
      'image = inference_state["images"][frame_idx].to(self.device).float().unsqueeze(0)', ".cuda() raises without CUDA"),
  ])

E("sam2_trainer", "training/trainer.py", "explicit_replacement",
  "facebookresearch/sam2 training/trainer.py (accelerator='cuda' switch, nccl inference, CUDA autocast, GradScaler on self.device)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "hccl backend and torch.npu need torch_npu"),
    C('accelerator: str = "cuda",', "device_type", R, True, 'accelerator: str = "npu",',
      "default accelerator drives device, backend and DDP device_ids below"),
    C('distributed_conf.backend = "nccl" if accelerator == "cuda" else "gloo"', "dist_backend", R, True,
      'distributed_conf.backend = "hccl" if accelerator == "npu" else "gloo"',
      "backend inferred from the accelerator string; with 'npu' unchanged code would fall to gloo, with 'cuda' it asks for NCCL"),
    C('if accelerator == "cuda":', "device_type", R, True, 'if accelerator == "npu":',
      "any other accelerator raises ValueError"),
    C('self.device = torch.device("cuda", self.local_rank)', "device_type", R, True,
      'self.device = torch.device("npu", self.local_rank)', ""),
    C("torch.cuda.set_device(self.local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(self.local_rank)",
      "raises without a CUDA build"),
    C('device_ids=[self.local_rank] if accelerator == "cuda" else [],', "device_type", R, False,
      'device_ids=[self.local_rank] if accelerator == "npu" else [],',
      "with [] DDP still works for a single-device module; edited for consistency"),
    C("with torch.cuda.amp.autocast(", "amp", R, True, "with torch.autocast(device_type=\"npu\",",
      "CUDA autocast leaves NPU tensors in fp32: amp config silently ignored"),
    C('logging.info(f"Peak GPU memory: {torch.cuda.max_memory_allocated() // 1e9} GB")', "torch_cuda_api", R, False,
      'logging.info(f"Peak NPU memory: {torch.npu.max_memory_allocated() // 1e9} GB")',
      "returns 0 without CUDA initialised; log only"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; NPU cache is not released"),
  ])

E("sam2_train_launcher", "training/train.py", "transfer_to_npu",
  "facebookresearch/sam2 training/train.py (submitit / local multi-process launcher)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "entry point of the trainer processes (spawned children re-import this module); loading torch_npu here makes the hydra-instantiated Trainer see the NPU backend"),
    C('"gpus_per_node": cfg.launcher.gpus_per_node,', "distributed_framework", R, False,
      '"slurm_additional_parameters": {"gres": f"npu:{cfg.launcher.gpus_per_node}"},',
      "submitit's gpus_per_node becomes --gpus-per-node for SLURM; an Ascend cluster schedules NPUs through its own gres name (site-specific, unconfirmed)"),
  ])

E("sam2_train_yaml", "sam2/configs/sam2.1_training/sam2.1_hiera_b+_MOSE_finetune.yaml", "explicit_replacement",
  "facebookresearch/sam2 configs/sam2.1_training MOSE fine-tune yaml (accelerator / backend / amp)", [
    C("accelerator: cuda", "device_type", R, True, "accelerator: npu",
      "Trainer builds torch.device(accelerator) and picks the backend from it"),
    C("backend: nccl", "dist_backend", R, True, "backend: hccl", "explicit backend overrides the trainer's inference"),
    C("_target_: torch.optim.AdamW", "fused_optimizer", R, False, "_target_: torch_npu.optim.NpuFusedAdamW",
      "performance only; the SAM 2 param-group modifiers must still work with the fused optimizer (unconfirmed)"),
  ])

E("gsam2_tracking_demo", "grounded_sam2_tracking_demo.py", "explicit_replacement",
  "IDEA-Research/Grounded-SAM-2 grounded_sam2_tracking_demo.py (global bf16 autocast, Ampere TF32 probe, HF Grounding DINO)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "needed for 'npu' autocast and device strings"),
    C('torch.autocast(device_type="cuda", dtype=torch.bfloat16).__enter__()', "amp", R, True,
      'torch.autocast(device_type="npu", dtype=torch.bfloat16).__enter__()',
      "CUDA autocast is a no-op for NPU tensors: SAM 2 would run in fp32 (and the predictor code assumes bf16 memory features)"),
    C("if torch.cuda.get_device_properties(0).major >= 8:", "device_capability_check", R, True,
      "if torch.npu.is_available():",
      "raises without CUDA (and NPU device properties carry no major/minor)"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "silently runs Grounding DINO on the CPU of an NPU host while SAM 2 defaults to cuda"),
  ])

E("sam_amg", "scripts/amg.py", "explicit_replacement",
  "facebookresearch/segment-anything scripts/amg.py (automatic mask generation CLI, --device default cuda)", [
    C("from segment_anything import SamAutomaticMaskGenerator, sam_model_registry", "import_torch_npu", A, True,
      "import torch_npu",
      "the script never imports torch itself; torch_npu must be loaded before sam.to('npu') (and for torchvision batched_nms inside the generator)"),
    C('parser.add_argument("--device", type=str, default="cuda",', "device_type", R, True,
      'parser.add_argument("--device", type=str, default="npu", help="The device to run generation on.")',
      "sam.to(device='cuda') fails on an NPU host"),
  ])

E("gsam_demo", "grounded_sam_demo.py", "explicit_replacement",
  "IDEA-Research/Grounded-Segment-Anything grounded_sam_demo.py (GroundingDINO + SAM/SAM-HQ, --device default cuda)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "'npu' device strings need torch_npu"),
    C('parser.add_argument("--device", type=str, default="cuda",', "device_type", R, True,
      'parser.add_argument("--device", type=str, default="npu", help="running on npu by default")',
      "everything downstream is device-agnostic and follows args.device"),
  ])

E("gsam_requirements", "requirements.txt", "explicit_replacement",
  "Grounded-Segment-Anything / Grounded-SAM-2 style requirements.txt pinned to cu118 wheels", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "custom_cuda_extension", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "cu118 wheels are x86/CUDA-only; Ascend uses CPU torch + torch_npu"),
    C("torch==2.1.0+cu118", "custom_cuda_extension", R, True, "torch==2.1.0", "local version +cu118 has no aarch64/NPU wheel"),
    C("=torchvision==0.16.0+cu118", "custom_cuda_extension", R, True, "torchvision==0.16.0", ""),
    C("torchaudio==2.1.0+cu118", "custom_cuda_extension", R, True, "torchaudio==2.1.0", ""),
    C("onnxruntime-gpu==1.16.3", "custom_cuda_extension", R, False, "onnxruntime==1.16.3",
      "onnxruntime-gpu pulls CUDA EPs; CPU package (or the CANN EP build) instead; only the ONNX export path uses it"),
    C("xformers==0.0.22.post7", "attention_kernel", X, True, None,
      "xformers has no Ascend build; SAM-HQ / GroundingDINO fall back to plain attention when it is absent (unconfirmed for every consumer)"),
    C("flash-attn==2.3.6", "attention_kernel", X, True, None, "CUDA-only wheel; install fails without nvcc"),
    C("triton==2.1.0", "triton_kernel_tuning", R, False, "triton-ascend",
      "upstream triton has no Ascend backend; only needed if torch.compile/inductor kernels are used (unconfirmed)"),
    C("detectron2 @ https://dl.fbaipublicfiles.com/detectron2/wheels/cu118", "custom_cuda_extension", R, True,
      "detectron2 @ git+https://github.com/facebookresearch/detectron2.git  # built CPU-only (FORCE_CUDA=0)",
      "prebuilt cu118 x86 wheel; an Ascend host must build detectron2 from source without CUDA ops"),
    C("mmcv-full==1.7.1 -f https://download.openmmlab.com/mmcv/dist/cu118", "custom_cuda_extension", R, True,
      "mmcv==2.1.0  # built with MMCV_WITH_OPS=1 MAX_JOBS=8 FORCE_NPU=1",
      "mmcv CUDA ops; mmcv has an NPU build path"),
    C("cupy-cuda11x==12.3.0", "custom_cuda_extension", X, True, None, "CuPy needs CUDA; no Ascend counterpart"),
    C("pynvml==11.5.0", "torch_cuda_api", X, True, None, "NVML is NVIDIA-only; use torch.npu.mem_get_info / npu-smi"),
    C("nvidia-ml-py3", "torch_cuda_api", X, True, None, "NVML bindings"),
    C("-e ./GroundingDINO", "custom_cuda_extension", R, False,
      "-e ./GroundingDINO  # builds without _C on NPU; MSDA falls back to grid_sample",
      "installs but skips the CUDA op when CUDA_HOME is unset (see its setup.py)"),
    C("bitsandbytes==0.41.3", "custom_cuda_extension", R, False, "# bitsandbytes (no Ascend build assumed)",
      "only the tagging pipeline uses 8-bit loading; Ascend support of bitsandbytes builds unconfirmed"),
    C("=-e ./segment_anything", "import_torch_npu", A, True, "torch-npu==2.1.0.post17",
      "torch_npu pinned to the torch version (2.1.0 ↔ 2.1.0.postN); added next to the local packages"),
  ])

E("gsam_dockerfile", "Dockerfile", "explicit_replacement",
  "Grounded-Segment-Anything Dockerfile (pytorch cuda-devel base, TORCH_CUDA_ARCH_LIST, nvcc-built GroundingDINO/SAM 2)", [
    C("FROM pytorch/pytorch:2.1.0-cuda11.8-cudnn8-devel", "custom_cuda_extension", R, True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA base image; needs a CANN base image plus torch + torch_npu (image tag illustrative)"),
    C("ARG USE_CUDA=1", "env_var", R, True, "ARG USE_CUDA=0", "drives BUILD_WITH_CUDA for the GroundingDINO build"),
    C('ENV TORCH_CUDA_ARCH_LIST="${TORCH_ARCH}"', "env_var", X, True, None,
      "with TORCH_CUDA_ARCH_LIST set, GroundingDINO's setup.py tries the CUDAExtension path even without a GPU"),
    C("ENV CUDA_HOME=/usr/local/cuda-11.8/", "env_var", R, True, "ENV ASCEND_TOOLKIT_HOME=/usr/local/Ascend/ascend-toolkit/latest",
      "CUDA_HOME set makes extension builds pick nvcc"),
    C("ENV PATH=/usr/local/cuda-11.8/bin:${PATH}", "env_var", X, False, None, "dead path on an Ascend image"),
    C("ENV LD_LIBRARY_PATH=/usr/local/cuda-11.8/lib64", "env_var", R, False,
      "ENV LD_LIBRARY_PATH=/usr/local/Ascend/driver/lib64:${LD_LIBRARY_PATH}",
      "Ascend images usually source set_env.sh instead"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "nvidia-container-runtime variable; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES (or --device /dev/davinciN)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics", "env_var", X, False, None, "NVIDIA runtime only"),
    C("ENV SAM2_BUILD_CUDA=1", "env_var", R, True, "ENV SAM2_BUILD_CUDA=0",
      "combined with SAM2_BUILD_ALLOW_ERRORS=0 below the image build fails"),
    C("RUN nvcc --version", "custom_cuda_extension", X, True, None, "nvcc does not exist on a CANN image: docker build stops"),
    C("RUN SAM2_BUILD_ALLOW_ERRORS=0 python -m pip install", "custom_cuda_extension", R, True,
      "RUN SAM2_BUILD_CUDA=0 python -m pip install --no-cache-dir --no-build-isolation -e sam2",
      "forces a hard failure when the CUDA extension cannot be built"),
    C("xformers==0.0.22.post7 --index-url https://download.pytorch.org/whl/cu118", "attention_kernel", X, True, None,
      "CUDA-only wheel"),
    C('RUN python -c "import groundingdino._C;', "custom_cuda_extension", R, True,
      'RUN python -c "import torch, torch_npu; assert torch.npu.is_available()"',
      "asserts the CUDA op was compiled; fails on an NPU image"),
  ])

E("gsam_environment", "environment.yml", "explicit_replacement",
  "conda environment.yml for a Grounded-SAM / SAM 2 stack (pytorch-cuda, cuda-toolkit, nccl from the nvidia channel)", [
    C("- nvidia", "custom_cuda_extension", X, False, None, "channel only serves CUDA packages"),
    C("- pytorch=2.1.0", "import_torch_npu", A, True, "- pip: [torch==2.1.0, torch-npu==2.1.0.post17]",
      "conda pytorch from the pytorch channel is the CUDA build; Ascend uses pip torch + matching torch_npu"),
    C("- pytorch-cuda=11.8", "custom_cuda_extension", X, True, None, "CUDA runtime metapackage"),
    C("- cuda-toolkit=11.8", "custom_cuda_extension", X, True, None, "nvcc toolchain for the _C extensions"),
    C("- cudnn=8.9", "custom_cuda_extension", X, True, None, ""),
    C("- nccl=2.18", "dist_backend", X, True, None, "HCCL ships with CANN"),
    C("- xformers==0.0.22.post7", "attention_kernel", X, True, None, "CUDA-only wheel"),
    C("- onnxruntime-gpu==1.16.3", "custom_cuda_extension", R, False, "- onnxruntime==1.16.3", "export path only"),
    C("- pynvml==11.5.0", "torch_cuda_api", X, True, None, "NVML is NVIDIA-only"),
    C("CUDA_HOME: /usr/local/cuda-11.8", "env_var", R, True, "ASCEND_TOOLKIT_HOME: /usr/local/Ascend/ascend-toolkit/latest",
      "makes extension builds choose nvcc"),
    C('TORCH_CUDA_ARCH_LIST: "7.0;7.5;8.0;8.6+PTX"', "env_var", X, True, None,
      "forces GroundingDINO's CUDAExtension path"),
    C('CUDA_VISIBLE_DEVICES: "0"', "env_var", R, True, 'ASCEND_RT_VISIBLE_DEVICES: "0"', "device visibility on Ascend"),
  ])

E("d2_launch", "detectron2/engine/launch.py", "explicit_replacement",
  "facebookresearch/detectron2 engine/launch.py (mp spawn launcher; has_gpu from torch.cuda, NCCL/GLOO choice)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "spawned workers need torch_npu registered before torch.npu / hccl are touched"),
    C("has_gpu = torch.cuda.is_available()", "device_type", R, True,
      "has_gpu = torch.npu.is_available()",
      "False on an NPU host: every worker silently falls back to GLOO and never sets its device"),
    C("assert num_gpus_per_machine <= torch.cuda.device_count()", "torch_cuda_api", R, True,
      "assert num_gpus_per_machine <= torch.npu.device_count()", "0 without CUDA"),
    C('backend="NCCL" if has_gpu else "GLOO",', "dist_backend", R, True,
      'backend="hccl" if has_gpu else "gloo",', "NCCL is unavailable on Ascend; upper-case 'NCCL' spelling"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)", ""),
  ])

E("d2_deform_conv", "detectron2/layers/deform_conv.py", "kernel_rewrite",
  "facebookresearch/detectron2 layers/deform_conv.py (detectron2._C deform conv, is_cuda dispatch with torchvision CPU path)", [
    C("if not input.is_cuda:", "custom_cuda_extension", R, True,
      "if input.device.type == 'npu': return torch_npu.npu_deformable_conv2d(input, weight, offset, None, weight.shape[2:], [1, 1, *ctx.stride], [ctx.padding[0]] * 2 + [ctx.padding[1]] * 2, [1, 1, *ctx.dilation], ctx.groups, ctx.deformable_groups, modulated=False)[0]",
      "NPU tensors take the 'CPU' branch: torchvision deform_conv2d has no NPU kernel without torchvision_npu and deformable_groups != 1 raises; torch_npu has npu_deformable_conv2d (argument layout of the snippet unconfirmed)"),
    C("if not grad_output.is_cuda:", "custom_cuda_extension", R, True,
      "if grad_output.device.type == 'npu': ...  # autograd of npu_deformable_conv2d",
      "backward raises NotImplementedError('not supported on CPUs') for every NPU tensor"),
    C("from detectron2 import _C", "custom_cuda_extension", R, True,
      "from detectron2 import _C  # built without CUDA ops on Ascend",
      "without a CUDA build _C lacks deform_conv_*; the dummy-class fallback makes DeformConv unusable"),
  ])

E("detic_train_net", "train_net.py", "explicit_replacement",
  "facebookresearch/Detic train_net.py (detectron2 plain-loop trainer with torch.cuda.amp.GradScaler for FP16)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "detectron2 MODEL.DEVICE='npu' and the hccl backend need torch_npu loaded in every launched worker"),
    C("from torch.cuda.amp import GradScaler", "amp", R, True, "from torch_npu.npu.amp import GradScaler",
      "CUDA GradScaler is inactive for NPU tensors"),
    C("=scaler = GradScaler()", "amp", R, True, "scaler = GradScaler()  # torch_npu.npu.amp",
      "cfg.FP16 path: the scaler itself must be the NPU one; note the loop also never enters autocast (upstream quirk)"),
    C("=loss_dict = model(data)", "amp", R, False,
      "with torch.autocast(device_type='npu', enabled=cfg.FP16): loss_dict = model(data)",
      "upstream runs the forward without autocast even with FP16=True; adding it is a behaviour change, not required for the port"),
    C("launch(", "dist_backend", R, True,
      "launch(  # detectron2 launch patched to hccl / torch.npu.set_device (see engine/launch.py)",
      "detectron2's launch picks NCCL/GLOO from torch.cuda.is_available(); on NPU it silently uses GLOO unless launch.py is ported too"),
  ])

E("detic_config", "configs/Base-C2_L_R5021k_640b64_4x.yaml", "explicit_replacement",
  "facebookresearch/Detic configs/Base-C2_L_R5021k_640b64_4x.yaml (detectron2 yacs config with MODEL.DEVICE and FP16)", [
    C('DEVICE: "cuda"', "device_type", R, True, 'DEVICE: "npu"',
      "detectron2 builds the model with torch.device(cfg.MODEL.DEVICE)"),
    C('POOLER_TYPE: "ROIAlignV2"', "unsupported_op_workaround", R, False, 'POOLER_TYPE: "ROIAlignV2"  # torchvision_npu roi_align',
      "ROIAlignV2 goes through torchvision.ops.roi_align; NPU kernel only with torchvision_npu installed (else CPU fallback, unconfirmed for custom ops)"),
    C('OPTIMIZER: "ADAMW"', "fused_optimizer", R, False, 'OPTIMIZER: "NPU_FUSED_ADAMW"',
      "performance only; needs a matching branch in detic/custom_solver.py"),
  ])

E("detic_dump_clip", "tools/dump_clip_features.py", "explicit_replacement",
  "facebookresearch/Detic tools/dump_clip_features.py (CLIP / BERT class-name embeddings for the zero-shot classifier)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", ""),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, False,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "silently falls to CPU on an NPU host: same numbers, just slow (one-off preprocessing)"),
    C("model = model.cuda()", "tensor_to_device", R, True, "model = model.npu()",
      "BERT/RoBERTa path hard-codes .cuda(); raises without CUDA"),
    C("inputs = {k: v.cuda() for k, v in inputs.items()}", "tensor_to_device", R, True,
      "inputs = {k: v.npu() for k, v in inputs.items()}", ""),
  ])

E("owlvit_demo", "owlvit_image_query_demo.py", "explicit_replacement",
  "HF-transformers OWL-ViT / OWLv2 text- and image-query detection demo in the style of the scenic/HF notebooks", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", ""),
    C("=if torch.cuda.is_available():", "device_type", R, True, "if torch.npu.is_available():",
      "False on NPU: the demo runs on CPU and ignores --fp16"),
    C('device = torch.device(f"cuda:{args.gpu}")', "device_type", R, True, 'device = torch.device(f"npu:{args.gpu}")', ""),
    C("torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)", ""),
    C('dtype = torch.float16 if (args.fp16 and device.type == "cuda") else torch.float32', "device_type", R, True,
      'dtype = torch.float16 if (args.fp16 and device.type == "npu") else torch.float32',
      "device.type check: --fp16 silently ignored on NPU"),
    C("with torch.no_grad(), torch.cuda.amp.autocast(enabled=args.fp16):", "amp", R, True,
      "with torch.no_grad(), torch.autocast(device_type='npu', dtype=torch.float16, enabled=args.fp16):",
      "CUDA autocast does nothing for NPU tensors"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "unguarded: raises 'Torch not compiled with CUDA enabled'"),
    C('print(f"peak memory: {torch.cuda.max_memory_allocated(device)', "torch_cuda_api", R, False,
      'print(f"peak memory: {torch.npu.max_memory_allocated(device) / 2**20:.0f} MiB")',
      "guarded by torch.cuda.is_available() (False on NPU, so never printed); log only"),
  ])

E("gsam_auto_label", "tools/auto_label_multi_gpu.py", "explicit_replacement",
  "Grounded-SAM-style multi-GPU pseudo-labelling tool (mp.spawn per GPU, CUDA_VISIBLE_DEVICES pinning, NVTX ranges)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "spawned workers re-import the module; also needed for torchvision batched_nms on NPU tensors (here run on CPU boxes)"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu_ids[rank])', "env_var", R, True,
      'torch.npu.set_device(gpu_ids[rank])',
      "per-process device pinning through CUDA_VISIBLE_DEVICES does nothing for the NPU runtime; setting ASCEND_RT_VISIBLE_DEVICES after torch_npu init is too late, so pin by index instead"),
    C("torch.cuda.set_device(0)", "torch_cuda_api", R, True, "# (device set above)",
      "raises without CUDA; with the ASCEND_RT_VISIBLE_DEVICES trick gone, index 0 would put every worker on NPU 0"),
    C('device = torch.device("cuda:0")', "device_type", R, True, 'device = torch.device(f"npu:{gpu_ids[rank]}")', ""),
    C('gdino = load_model(args.gdino_config, args.gdino_ckpt, device="cuda")', "device_type", R, True,
      'gdino = load_model(args.gdino_config, args.gdino_ckpt, device=str(device))', ""),
    C('torch.cuda.nvtx.range_push(f"gdino:{img_id}")', "torch_cuda_api", R, False,
      'torch_npu.npu.mstx.range_start(f"gdino:{img_id}")',
      "only under --profile; torch.cuda.nvtx is not redirected by transfer_to_npu (mstx method names unconfirmed)"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", R, False, "torch_npu.npu.mstx.range_end(rid)", "only under --profile"),
    C('box_threshold=args.box_thr, text_threshold=args.text_thr, device="cuda",', "device_type", R, True,
      'box_threshold=args.box_thr, text_threshold=args.text_thr, device=str(device),',
      "GroundingDINO predict() moves model and image to this device"),
    C('with torch.autocast("cuda", dtype=torch.float16, enabled=args.half):', "amp", R, True,
      'with torch.autocast("npu", dtype=torch.float16, enabled=args.half):',
      "--half: SAM weights are fp16 but the prompt encoder inputs stay fp32 without NPU autocast -> dtype mismatch"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "silent no-op without CUDA"),
    C('f"mem={torch.cuda.memory_reserved() / 2**30:.1f}G", flush=True)', "torch_cuda_api", R, False,
      'f"mem={torch.npu.memory_reserved() / 2**30:.1f}G", flush=True)', "log only; 0 without CUDA"),
    C('assert len(gpu_ids) <= torch.cuda.device_count(), "not enough GPUs"', "torch_cuda_api", R, True,
      'assert len(gpu_ids) <= torch.npu.device_count(), "not enough NPUs"', "device_count() is 0 without CUDA: assertion fails"),
  ])
