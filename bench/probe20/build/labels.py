"""Labels for probe20 (hand-written synthetic upstream files; see ../README.md).

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

KM = "torch-npu-migration.md"
KD = "ascend-distributed.md"
TSV = "ops/torch_api_npu_support_2.7.1.tsv"

# ---------------------------------------------------------------- OpenCLIP
E("openclip_params", "src/open_clip_train/params.py", "explicit_replacement",
  "OpenCLIP training argument parser (--precision amp, --dist-backend, --horovod)", [
    C('parser.add_argument("--device", default="cuda"', "device_type", R, False,
      'parser.add_argument("--device", default="npu", type=str, help="Accelerator to use.")',
      "default device string; init_distributed_device overwrites args.device, so this is consistency only"),
    C('default="nccl",', "dist_backend", R, True, 'default="hccl",',
      f"NCCL is not available on Ascend; HCCL is the collective backend ({KD} §6.1)"),
])

E("openclip_distributed", "src/open_clip_train/distributed.py", "device_branch_or_abstraction",
  "OpenCLIP init_distributed_device (SLURM / torchrun / horovod, cuda:%d device selection)", [
    C("if device_type == 'cuda':", "device_type", B, False,
      "if device_type == 'npu': is_avail = torch.npu.is_available(); is_known = True  (new branch before the cuda one)",
      "helper only consulted for user-given device strings; without the branch 'npu' is reported as unknown"),
    C("torch.cuda.set_device(int(device.split(':')[1]))", "torch_cuda_api", R, False,
      "torch.npu.set_device(int(device.split(':')[1]))  (with an 'npu:' prefix test)",
      "helper not called by init_distributed_device; changed alongside for consistency"),
    C("if torch.cuda.is_available():", "torch_cuda_api", R, True, "if torch.npu.is_available():",
      "False on an NPU host, so every rank would silently train on CPU"),
    C("device = 'cuda:%d' % args.local_rank", "device_type", R, True, "device = 'npu:%d' % args.local_rank",
      "device string must name the npu device"),
    C("device = 'cuda:0'", "device_type", R, True, "device = 'npu:0'", "device string must name the npu device"),
    C("=torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)",
      f"torch.cuda.set_device needs a CUDA build; NPU form is torch.npu.set_device ({KM} §2.1)"),
])

E("openclip_main", "src/open_clip_train/main.py", "explicit_replacement",
  "OpenCLIP main(): model creation, DDP wrap, AdamW + GradScaler for --precision amp", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu",
      f"entry point: registers the npu device (mandatory before torch 2.5.1 autoload, {KM} §1.1)"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", R, True,
      'scaler = torch.npu.amp.GradScaler() if args.precision == "amp" else None',
      f"CUDA GradScaler disables itself without CUDA: fp16 would run without loss scaling ({TSV}: torch_npu.npu.amp.GradScaler)"),
    C("optimizer = optim.AdamW(", "fused_optimizer", R, False, "optimizer = torch_npu.optim.NpuFusedAdamW(",
      f"performance only: tensor-fused AdamW ({KM} §5; msFmkTransplt advice §3.5)"),
])

E("openclip_train", "src/open_clip_train/train.py", "explicit_replacement",
  "OpenCLIP train_one_epoch / evaluate with get_autocast and GradScaler", [
    C("return torch.cuda.amp.autocast", "amp", R, True, "return torch.npu.amp.autocast",
      f"CUDA autocast does not cast NPU ops: 'amp' would run in fp32 ({TSV})"),
    C("return lambda: torch.cuda.amp.autocast(dtype=torch.bfloat16)", "amp", R, True,
      "return lambda: torch.npu.amp.autocast(dtype=torch.bfloat16)", "same as above for bf16 autocast"),
    C("max_mem_gb = torch.cuda.max_memory_allocated()", "torch_cuda_api", R, False,
      "max_mem_gb = torch.npu.max_memory_allocated() / 1024 ** 3",
      "logging only; the CUDA call reports 0 when CUDA was never initialised"),
])

E("openclip_loss", "src/open_clip/loss.py", "explicit_replacement",
  "OpenCLIP ClipLoss / SigLipLoss with gather_features (local loss, horovod allgather) - device-agnostic, no labels", [])

E("openclip_slurm", "scripts/train_vit_b32_laion2b_slurm.sh", "explicit_replacement",
  "OpenCLIP SLURM launch script (JUWELS-style booster, srun, --precision amp --dist-backend nccl)", [
    C("#SBATCH --gres=gpu:4", "env_var", R, False, "#SBATCH --gres=npu:4",
      "gres name depends on the cluster's Slurm config; no Ascend Slurm integration in the knowledge (unconfirmed)"),
    C("module load CUDA/12", "env_var", R, True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN runtime environment must be sourced (ascend-host-formats.md §3); CUDA module absent on an NPU cluster (set -e aborts)"),
    C("module load NCCL/default-CUDA-12", "env_var", X, False, None, "NCCL module not used with HCCL"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", R, True, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      f"the Ascend runtime ignores CUDA_VISIBLE_DEVICES; process-level mask is ASCEND_RT_VISIBLE_DEVICES ({KD} §1)"),
    C("export NCCL_IB_TIMEOUT=50", "env_var", R, False, "export HCCL_CONNECT_TIMEOUT=1200",
      f"NCCL tuning is ignored by HCCL; nearest HCCL knob is HCCL_CONNECT_TIMEOUT ({KD} §1)"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", R, False, "export HCCL_SOCKET_IFNAME=ib0",
      f"HCCL picks the host NIC via HCCL_SOCKET_IFNAME ({KD} §1)"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      f"torch_npu watchdog variable ({KD} §1)"),
    C("export NCCL_DEBUG=WARN", "env_var", X, False, None, "NCCL-only variable, no effect with HCCL"),
    C("nvidia-smi --query-gpu", "torch_cuda_api", R, True, "npu-smi info",
      "nvidia-smi does not exist on an Ascend host; with set -e the job aborts here"),
    C("torch.version.cuda, torch.cuda.device_count()", "torch_cuda_api", R, False,
      'python -c "import torch, torch_npu; print(torch.__version__, torch_npu.__version__, torch.npu.device_count())"',
      "sanity print only: reports None / 0 on an NPU host instead of failing"),
    C("--dist-backend nccl", "dist_backend", R, True, "    --dist-backend hccl \\",
      "NCCL backend unavailable on Ascend; hccl"),
])

# ---------------------------------------------------------------- LAVIS (BLIP-2 / InstructBLIP)
E("lavis_blip2", "lavis/models/blip2_models/blip2.py", "explicit_replacement",
  "LAVIS Blip2Base (maybe_autocast, Q-Former init, retrieval sim-matrix evaluation)", [
    C("return torch.cuda.amp.autocast(dtype=dtype)", "amp", R, True,
      "return torch.autocast(device_type=self.device.type, dtype=dtype)",
      f"the guard is device != cpu, so on NPU this enters CUDA autocast, which does not cast NPU ops: the fp16 ViT/LLM path runs uncast ({TSV})"),
])

E("lavis_dist_utils", "lavis/common/dist_utils.py", "explicit_replacement",
  "LAVIS init_distributed_mode (torchrun / SLURM, nccl)", [
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", R, True,
      "args.gpu = args.rank % torch.npu.device_count()",
      "torch.cuda.device_count() is 0 on an NPU host: ZeroDivisionError under SLURM"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)",
      f"needs a CUDA build; NPU form torch.npu.set_device ({KM} §2.1)"),
    C('args.dist_backend = "nccl"', "dist_backend", R, True, 'args.dist_backend = "hccl"',
      f"NCCL unavailable; HCCL ({KD} §6.1)"),
])

E("lavis_runner", "lavis/runners/runner_base.py", "explicit_replacement",
  "LAVIS RunnerBase (device property, DDP wrap, GradScaler for run_cfg.amp, loaders)", [
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", R, True, "self._scaler = torch.npu.amp.GradScaler()",
      f"CUDA GradScaler disables itself without CUDA: amp=True would train fp16 unscaled ({TSV})"),
    C("self._optimizer = torch.optim.AdamW(", "fused_optimizer", R, False,
      "self._optimizer = torch_npu.optim.NpuFusedAdamW(", f"performance only ({KM} §5)"),
    C('return self.device.type == "cuda"', "device_type", R, True,
      'return self.device.type in ("cuda", "npu")',
      "task.train_epoch only moves batches to the device when cuda_enabled is true (prepare_sample); on NPU the batch would stay on CPU while the model is on npu. The move helper in lavis/common/utils needs the same port"),
])

E("lavis_instructblip_yaml", "lavis/projects/instructblip/caption_coco_vicuna7b_ft.yaml", "explicit_replacement",
  "LAVIS InstructBLIP Vicuna-7B caption fine-tuning config (run.device, amp, distributed)", [
    C('device: "cuda"', "device_type", R, True, 'device: "npu"',
      "RunnerBase builds torch.device(run_cfg.device); 'cuda' fails on an NPU host"),
])

E("lavis_processors", "lavis/processors/blip_processors.py", "explicit_replacement",
  "LAVIS BLIP image/text processors - CPU-only data transforms, no labels", [])

# ---------------------------------------------------------------- OpenMMLab configs
E("mmpretrain_vit_cfg", "configs/vit/vit-base-p16_32xb128-coslr-ft_in1k.py", "explicit_replacement",
  "mmpretrain 1.x ViT-B/16 config (AmpOptimWrapper, env_cfg with dist_cfg nccl)", [
    C("type='AdamW',", "fused_optimizer", R, False, "type='NpuFusedAdamW',",
      f"performance only: torch_npu.optim.NpuFusedAdamW ({KM} §5); whether mmengine registers the NpuFused* names is unconfirmed"),
    C("dist_cfg=dict(backend='nccl'),", "dist_backend", R, False, "dist_cfg=dict(backend='hccl'),",
      "mmengine's init_dist switches to hccl by itself when an NPU is present (from memory of mmengine dist/utils.py, unconfirmed); edited for clarity"),
])

E("mmdet_dino_cfg", "configs/dino/dino-4scale_r50_8xb2-12e_coco.py", "explicit_replacement",
  "mmdetection 3.x DINO-4scale R50 config (deformable attention from mmcv.ops, env_cfg override)", [
    C("dist_cfg=dict(backend='nccl', timeout=7200),", "dist_backend", R, False,
      "dist_cfg=dict(backend='hccl', timeout=7200),",
      "mmengine replaces the backend with hccl on NPU hosts (from memory, unconfirmed); edited for clarity"),
])

# ---------------------------------------------------------------- Mask DINO / Deformable-DETR ops
E("maskdino_msda", "maskdino/modeling/pixel_decoder/ops/modules/ms_deform_attn.py", "device_branch_or_abstraction",
  "Mask DINO / Deformable-DETR MSDeformAttn module with the compiled MultiScaleDeformableAttention op", [
    C("raise ModuleNotFoundError(info_string)", "custom_cuda_extension", R, True,
      "MSDA = None  # no nvcc-built op on Ascend: use the PyTorch path or an Ascend kernel",
      f"the op is built with nvcc only; on an NPU host the import fails and the whole model module cannot be imported ({KM} §6)"),
    C("output = MSDeformAttnFunction.apply(", "custom_cuda_extension", B, False,
      "if value.device.type == 'npu' and npu_msda is not None: output = npu_msda(value, input_spatial_shapes, input_level_start_index, sampling_locations, attention_weights)",
      "performance: route NPU tensors to an Ascend MSDA kernel (DrivingSDK / mx_driving, unconfirmed) instead of the grid_sample fallback"),
])

E("maskdino_ops_setup", "maskdino/modeling/pixel_decoder/ops/setup.py", "device_branch_or_abstraction",
  "Deformable-DETR style setup.py building MultiScaleDeformableAttention with CUDAExtension", [
    C("from torch.utils.cpp_extension import CUDAExtension", "custom_cuda_extension", R, False,
      "from torch_npu.utils.cpp_extension import NpuExtension",
      f"only needed if the kernel is rewritten in Ascend C ({KM} §6)"),
    C("if (os.environ.get('FORCE_CUDA') or torch.cuda.is_available()) and CUDA_HOME is not None:", "custom_cuda_extension", B, False,
      "elif is_npu_build: extension = NpuExtension; sources += source_npu  (new branch)",
      "NPU kernel branch; without it the CPU build below is used"),
    C("raise NotImplementedError('CUDA_HOME is None.", "custom_cuda_extension", R, True,
      "pass  # build the CPU-only extension (extension = CppExtension) on hosts without nvcc",
      "an NPU host has no CUDA_HOME: setup.py aborts and the package cannot be installed"),
])

# ---------------------------------------------------------------- ViTDet on detectron2
E("vitdet_launch", "detectron2/engine/launch.py", "explicit_replacement",
  "detectron2 launch()/_distributed_worker (num_gpus_per_machine, NCCL vs GLOO)", [
    C("has_gpu = torch.cuda.is_available()", "torch_cuda_api", R, True, "has_gpu = torch.npu.is_available()",
      "False on an NPU host: GLOO backend and no set_device, training silently on CPU"),
    C("assert num_gpus_per_machine <= torch.cuda.device_count()", "torch_cuda_api", R, True,
      "assert num_gpus_per_machine <= torch.npu.device_count()", "device_count() is 0 without CUDA"),
    C('backend="NCCL" if has_gpu else "GLOO",', "dist_backend", R, True,
      'backend="HCCL" if has_gpu else "GLOO",', f"NCCL unavailable on Ascend ({KD} §6.1)"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      f"needs a CUDA build ({KM} §2.1)"),
])

E("vitdet_train_net", "tools/lazyconfig_train_net.py", "explicit_replacement",
  "detectron2 tools/lazyconfig_train_net.py used for ViTDet (AMPTrainer, create_ddp_model, benchmark hook)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu",
      f"entry point: registers the npu device (mandatory before torch 2.5.1, {KM} §1.1)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "reached with --benchmark; torch.cuda.synchronize raises without CUDA"),
    C("default_setup(cfg, args)", "compile_mode", A, False,
      "default_setup(cfg, args)\n    torch_npu.npu.set_compile_mode(jit_compile=False)",
      f"performance: detection batches change shape every iteration (LSJ crops, proposals); binary kernels avoid recompiles ({KM} §3.5)"),
    C("torch.cuda.synchronize()  # wait for the step", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # wait for the step's kernels before reading the clock", "as above"),
    C("mem = torch.cuda.max_memory_allocated()", "torch_cuda_api", R, False,
      "mem = torch.npu.max_memory_allocated() / 1024.0 / 1024.0", "logging only; reports 0 without CUDA"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device and raises without CUDA"),
    C("trainer = (AMPTrainer if cfg.train.amp.enabled else SimpleTrainer)", "amp", R, True,
      "trainer = (NPUAMPTrainer if cfg.train.amp.enabled else SimpleTrainer)(model, train_loader, optim)  # AMPTrainer subclass using torch.autocast('npu') + torch.npu.amp.GradScaler",
      "detectron2's AMPTrainer asserts CUDA and uses CUDA autocast/GradScaler (from memory of detectron2/engine/train_loop.py); ViTDet configs enable amp"),
])

E("vitdet_cfg", "projects/ViTDet/configs/COCO/mask_rcnn_vitdet_b_100ep.py", "explicit_replacement",
  "ViTDet ViT-B Mask R-CNN LazyConfig (train dict with amp, ddp fp16_compression, device)", [
    C('device="cuda",', "device_type", R, True, 'device="npu",',
      "train_net does model.to(cfg.train.device); 'cuda' fails on an NPU host"),
])

# ---------------------------------------------------------------- Ultralytics YOLOv8-v11 / RT-DETR
E("ultralytics_trainer", "ultralytics/engine/trainer.py", "explicit_replacement",
  "Ultralytics BaseTrainer (_setup_ddp, GradScaler/autocast, memory helpers)", [
    C("elif torch.cuda.is_available():  # i.e. device=None", "torch_cuda_api", R, False,
      "elif torch.cuda.is_available() or torch.npu.is_available():  # i.e. device=None or device='' or device=number",
      "only decides world_size 1 vs 0 for the no-device case; training still runs on self.device"),
    C("torch.cuda.set_device(RANK)", "torch_cuda_api", R, True, "torch.npu.set_device(RANK)",
      f"DDP path; needs a CUDA build ({KM} §2.1)"),
    C('self.device = torch.device("cuda", RANK)', "device_type", R, True, 'self.device = torch.device("npu", RANK)',
      "DDP rank device must be the npu device"),
    C('os.environ["TORCH_NCCL_BLOCKING_WAIT"] = "1"', "env_var", X, False, None,
      "NCCL-only knob; HCCL timeouts are HCCL_EXEC_TIMEOUT / HCCL_CONNECT_TIMEOUT (ascend-distributed.md §1)"),
    C('backend="nccl" if dist.is_nccl_available() else "gloo",', "dist_backend", R, True, 'backend="hccl",',
      "is_nccl_available() is False on an NPU build, so DDP would fall to gloo, which cannot reduce NPU tensors"),
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.amp)", "amp", R, True,
      "self.scaler = torch.npu.amp.GradScaler(enabled=self.amp)",
      f"CUDA GradScaler disables itself without CUDA: amp=True trains fp16 unscaled ({TSV})"),
    C("with torch.cuda.amp.autocast(self.amp):", "amp", R, True, "with torch.npu.amp.autocast(self.amp):",
      f"CUDA autocast does not cast NPU ops; amp silently off ({TSV})"),
    C("memory = torch.cuda.memory_reserved()", "torch_cuda_api", R, False, "memory = torch.npu.memory_reserved()",
      "progress-bar display only; reports 0 without CUDA"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; NPU cache is not released between epochs"),
    C("optimizer = optim.SGD(g[2], lr=lr, momentum=momentum, nesterov=True)", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedSGD(g[2], lr=lr, momentum=momentum, nesterov=True)",
      f"performance only ({KM} §5)"),
])

E("ultralytics_torch_utils", "ultralytics/utils/torch_utils.py", "device_branch_or_abstraction",
  "Ultralytics select_device / time_sync / init_seeds", [
    C("properties = torch.cuda.get_device_properties(index)", "torch_cuda_api", R, True,
      "properties = torch.npu.get_device_properties(index)",
      f"reached by the ported accelerator branch; NPU properties keep name and total_memory ({TSV})"),
    C('for remove in "cuda:", "none"', "device_type", R, False,
      'for remove in "cuda:", "npu:", "none", "(", ")", "[", "]", "\'", " ":',
      "lets users pass device='npu:0'; numeric device strings already work"),
    C('if device == "cuda":', "device_type", R, False, 'if device in {"cuda", "npu"}:',
      "accepts device='npu' as an alias for 0"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = device  # set environment', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = device  # set environment variable - must be before assert is_available()',
      f"device='2,3' must mask NPUs, otherwise ranks land on NPU 0,1 ({KD} §1 ASCEND_RT_VISIBLE_DEVICES)"),
    C("if not (torch.cuda.is_available() and torch.cuda.device_count() >= len(device.split(\",\"))):", "torch_cuda_api", R, True,
      'if not (torch.npu.is_available() and torch.npu.device_count() >= len(device.split(","))):',
      "raises 'Invalid CUDA device' for any device=0 request on an NPU host"),
    C("if not cpu and not mps and torch.cuda.is_available():", "torch_cuda_api", R, True,
      "if not cpu and not mps and torch.npu.is_available():  # prefer NPU if available",
      "False on an NPU host: falls through to CPU"),
    C('arg = "cuda:0"', "device_type", R, True, 'arg = "npu:0"', "selected device string"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():",
      "time_sync skips synchronisation on NPU: profiling numbers only"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, False, "torch.npu.synchronize()", "as above"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(seed)",
      "torch.manual_seed already seeds registered accelerators in recent torch (unconfirmed for torch_npu)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "as above"),
    C('os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"', "env_var", X, False, None,
      "cuBLAS-only determinism knob; no effect on NPU (HCCL_DETERMINISTIC covers collectives, ascend-distributed.md §1)"),
    C("dist.barrier(device_ids=[local_rank])", "dist_backend", R, False, "dist.barrier()",
      "device_ids on barrier was NCCL-specific in older torch; HCCL support unconfirmed"),
    C("dist.barrier(device_ids=[0])", "dist_backend", R, False, "dist.barrier()", "as above (unconfirmed)"),
])

E("ultralytics_exporter", "ultralytics/engine/exporter.py", "explicit_replacement",
  "Ultralytics Exporter (TorchScript, ONNX opset/dynamic axes, TensorRT engine) - no labels", [])

E("rtdetr_export", "tools/export_onnx.py", "explicit_replacement",
  "RT-DETR (lyuwenyu) tools/export_onnx.py with dynamic_axes, opset 16, onnxruntime check and GPU benchmark", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu",
      "only the --benchmark path uses the accelerator; export itself runs on CPU"),
    C("data = torch.rand(1, 3, size, size).cuda()", "tensor_to_device", R, True,
      "data = torch.rand(1, 3, size, size).npu()", "--benchmark path: .cuda() raises without CUDA"),
    C("sizes = torch.tensor([[size, size]]).cuda()", "tensor_to_device", R, True,
      "sizes = torch.tensor([[size, size]]).npu()", "as above"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "raises without CUDA"),
    C("torch.cuda.synchronize()  # drain", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # drain the queue before stopping the clock", "as above"),
    C("model_gpu = model.cuda()", "tensor_to_device", R, True, "model_gpu = model.npu()", "raises without CUDA"),
])

# ---------------------------------------------------------------- DINOv2
E("dinov2_attention", "dinov2/layers/attention.py", "explicit_replacement",
  "DINOv2 Attention / MemEffAttention with xformers memory_efficient_attention and nested-tensor helpers", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu",
      "needed for torch_npu.npu_fusion_attention in the replacement"),
    C("from xformers.ops import memory_efficient_attention", "attention_kernel", R, True,
      "pass  # xformers has no NPU backend; replaced by torch_npu.npu_fusion_attention and torch index ops",
      f"xformers has no NPU backend ({KM} §6); the guarded fallback cannot serve the multi-crop nested path below"),
    C("q, k, v = unbind(qkv, 2)", "attention_kernel", R, True, "q, k, v = torch.unbind(qkv, 2)",
      "xformers op"),
    C("x = memory_efficient_attention(q, k, v, attn_bias=attn_bias)", "attention_kernel", R, True,
      'x = torch_npu.npu_fusion_attention(q.flatten(0, 1), k.flatten(0, 1), v.flatten(0, 1), self.num_heads, "TND", scale=self.scale, actual_seq_qlen=cu_seqlens, actual_seq_kvlen=cu_seqlens)[0]',
      f"block-diagonal (varlen) attention maps to TND layout with cumulative seq lengths ({KM} §5)"),
    C("attn = q @ k.transpose(-2, -1)", "attention_kernel", R, False,
      "x = F.scaled_dot_product_attention(q, k, v)  (replaces the explicit softmax path)",
      f"performance: SDPA dispatches to the NPU fused kernel ({KM} §5)"),
    C("attn_bias = fmha.BlockDiagonalMask.from_seqlens(seqlens)", "attention_kernel", R, True,
      "attn_bias = torch.tensor(seqlens).cumsum(0).tolist()  # cumulative lengths for TND",
      "xformers mask class; NPU varlen attention takes cumulative lengths"),
    C("cat_tensors = index_select_cat(", "attention_kernel", R, True,
      "cat_tensors = torch.cat([x.flatten(1)[b] for x, b in zip(x_list, branges)], dim=0).view(1, -1, x_list[0].shape[-1])",
      "xformers fused op"),
    C("residual_list = attn_bias.split(", "attention_kernel", R, True,
      "residual_list = residual_func(x_cat, attn_bias=attn_bias).split([b * x.shape[1] for b, x in zip(batch_sizes, x_list)], dim=1)",
      "BlockDiagonalMask.split is an xformers method"),
    C("x_plus_residual = scaled_index_add(", "attention_kernel", R, True,
      "x_plus_residual = torch.index_add(x.flatten(1), 0, brange, (residual * scaling_vector).flatten(1).to(dtype=x.dtype), alpha=residual_scale_factor)",
      "xformers fused op"),
])

E("dinov2_train", "dinov2/train/train.py", "explicit_replacement",
  "DINOv2 train.py (FSDP wrapper, ShardedGradScaler, SSLMetaArch on cuda)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu",
      f"entry point (mandatory before torch 2.5.1, {KM} §1.1)"),
    C("=FSDP,", "distributed_framework", R, False, "FSDP,  # or torch.distributed.fsdp.fully_shard",
      f"Ascend's 2.7.1 list marks FullyShardedDataParallel ✘ on A2/A3 but fully_shard ✔ ({TSV}); FSDP1 is widely used on NPU in practice - unconfirmed"),
    C("device_id=local_rank,", "device_type", R, True, 'device_id=torch.device("npu", local_rank),',
      "an int device_id is read as a CUDA index by FSDP (torch.device(int) == cuda in torch 2.0, from memory)"),
    C("fp16_scaler = ShardedGradScaler()", "amp", R, True,
      'fp16_scaler = ShardedGradScaler(device="npu") if cfg.compute_precision.grad_scaler else None',
      "ShardedGradScaler defaults to device 'cuda' and disables itself without CUDA: fp16 params train unscaled"),
    C('model = SSLMetaArch(cfg).to(torch.device("cuda"))', "device_type", R, True,
      'model = SSLMetaArch(cfg).to(torch.device("npu"))', "hard-coded cuda device"),
])

E("dinov2_distributed", "dinov2/distributed/__init__.py", "explicit_replacement",
  "DINOv2 distributed.enable() (SLURM / torchrun / local env, NCCL)", [
    C("if torch.cuda.device_count() > 0:", "torch_cuda_api", R, True, "if torch.npu.device_count() > 0:",
      "0 on an NPU host: single-process runs raise 'Can't initialize PyTorch distributed environment'"),
    C("torch.cuda.set_device(torch_env.local_rank)", "torch_cuda_api", R, True,
      "torch.npu.set_device(torch_env.local_rank)", f"needs a CUDA build ({KM} §2.1)"),
    C('key, value = "NCCL_ASYNC_ERROR_HANDLING", "1"', "env_var", R, False,
      'key, value = "HCCL_ASYNC_ERROR_HANDLING", "1"', f"torch_npu watchdog variable ({KD} §1)"),
    C('dist.init_process_group(backend="nccl")', "dist_backend", R, True,
      'dist.init_process_group(backend="hccl")', f"NCCL unavailable ({KD} §6.1)"),
])

E("dinov2_requirements", "requirements.txt", "explicit_replacement",
  "DINOv2 requirements.txt (cu117 index, torch 2.0.0, xformers, cuml)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu117", "import_torch_npu", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      f"CUDA wheels are wrong for an NPU host; x86 uses the CPU torch build, aarch64 plain PyPI ({KM} §1.1)"),
    C("torch==2.0.0", "import_torch_npu", A, True, "torch==2.1.0\ntorch-npu==2.1.0.post17",
      f"no torch_npu wheel for torch 2.0.0 (matrix lists 2.0.1 EOL, 2.1.0 active, {KM} §1.2-1.3)"),
    C("torchvision==0.15.0", "import_torch_npu", R, True, "torchvision==0.16.0",
      f"must follow the torch bump (torchvision_npu pairs torchvision 0.16.0 with torch 2.1, {KM} §6)"),
    C("xformers==0.0.18", "attention_kernel", X, True, None,
      f"no NPU build; pins CUDA torch ({KM} §6)"),
    C("--extra-index-url https://pypi.nvidia.com", "import_torch_npu", X, False, None,
      "NVIDIA index only served cuml"),
    C("cuml-cu11", "import_torch_npu", X, True, None, "RAPIDS cuML is CUDA-only and cannot be installed on an NPU host"),
])

# ---------------------------------------------------------------- EVA-CLIP
E("eva_clip_vit", "eva_clip/eva_vit_model.py", "explicit_replacement",
  "EVA-CLIP EVA ViT blocks with apex FusedLayerNorm, xformers xattn and RoPE", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu",
      "for torch_npu.npu_fusion_attention in the xattn replacement"),
    C("from apex.normalization import FusedLayerNorm", "npu_fused_op", R, True,
      "FusedLayerNorm = nn.LayerNorm",
      f"Ascend's apex patch has no fused_layer_norm_cuda ({KM} §6): the import can succeed and --fusedLN then fails at construction"),
    C("x = xops.memory_efficient_attention(", "attention_kernel", R, True,
      'x = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, "BSND", scale=self.scale, keep_prob=1.0 - self.xattn_drop)[0]',
      f"xformers has no NPU backend ({KM} §6); with xattn=True (EVA-CLIP default) xops is None and this raises"),
])

# ---------------------------------------------------------------- SAM-HQ / Grounded-SAM
E("sam_hq_demo", "demo/demo_hqsam.py", "explicit_replacement",
  "HQ-SAM / EfficientSAM inference demo (bf16 autocast, TF32 on sm_80+, latency timing)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu",
      f"entry point (mandatory before torch 2.5.1, {KM} §1.1)"),
    C('device = "cuda"', "device_type", R, True, 'device = "npu"', "hard-coded device"),
    C("torch.cuda.get_device_properties(0).major >= 8", "device_capability_check", R, True,
      "if args.bf16:  # Atlas A2 supports bf16",
      f"NPU device properties have no major/minor ({TSV}; {KM} §2.8)"),
    C('amp_ctx = torch.autocast("cuda", dtype=torch.bfloat16)', "amp", R, True,
      'amp_ctx = torch.autocast("npu", dtype=torch.bfloat16)', "CUDA autocast does not cast NPU ops"),
    C('amp_ctx = torch.autocast("cuda", enabled=False)', "amp", R, False,
      'amp_ctx = torch.autocast("npu", enabled=False)', "disabled context; harmless either way"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "raises without CUDA"),
    C("torch.cuda.synchronize()  # include", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # include mask decoding in the timing", "raises without CUDA"),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", R, False,
      'print(f"peak memory: {torch.npu.max_memory_allocated(device) / 2**20:.0f} MiB")',
      "report only; 0 without CUDA"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "silent no-op without CUDA"),
])

E("grounded_sam_demo", "grounded_sam_demo.py", "explicit_replacement",
  "Grounded-SAM demo (GroundingDINO boxes -> SAM / SAM-HQ masks), --device defaulting to cpu", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu",
      f"needed for --device npu to resolve (torch < 2.5.1, {KM} §1.1)"),
    C('parser.add_argument("--device", type=str, default="cpu"', "device_type", R, False,
      'parser.add_argument("--device", type=str, default="npu", help="running device")',
      "unchanged code runs correctly on CPU; NPU default is a speed change"),
])

E("grounded_sam_docker", "Dockerfile", "explicit_replacement",
  "Grounded-Segment-Anything Dockerfile (pytorch cuda11.6 devel image, CUDA op build of GroundingDINO)", [
    C("FROM pytorch/pytorch:1.13.1-cuda11.6-cudnn8-devel", "import_torch_npu", R, True,
      "FROM <CANN base image, e.g. ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10>  + pip install torch==2.1.0 torch-npu==2.1.0.post17",
      f"CUDA image has no CANN/torch_npu; torch 1.13.1 has no torch_npu wheel in the active matrix ({KM} §1.2); image name unconfirmed"),
    C('ENV BUILD_WITH_CUDA "${USE_CUDA}"', "env_var", X, False, None, "CUDA build switch"),
    C('ENV TORCH_CUDA_ARCH_LIST "${TORCH_ARCH}"', "env_var", X, False, None,
      "CUDA arch list; together with CUDA_HOME it selects the nvcc build"),
    C("ENV CUDA_HOME /usr/local/cuda-11.6/", "custom_cuda_extension", X, True, None,
      "GroundingDINO's setup picks CUDAExtension when CUDA_HOME is set: the nvcc build fails on an NPU image"),
    C("onnxruntime-gpu==1.14.1", "import_torch_npu", R, False, "    onnxruntime==1.14.1 onnx==1.13.1 ipykernel==6.16.2 scipy gradio openai",
      "CUDA build of onnxruntime; no aarch64 wheel for Kunpeng hosts (unconfirmed)"),
    C("from groundingdino import _C; print('cuda ops ok'", "torch_cuda_api", R, False,
      "RUN python -c \"import torch, torch_npu; from groundingdino import _C; print('ops ok', torch.npu.is_available())\"",
      "sanity check only; passes with the CPU build too"),
    C("ENV NVIDIA_VISIBLE_DEVICES all", "env_var", R, False, "ENV ASCEND_VISIBLE_DEVICES 0-7",
      f"Ascend Docker Runtime mounts NPUs from ASCEND_VISIBLE_DEVICES ({KD} §1); usually passed at docker run"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES compute,utility", "env_var", X, False, None, "NVIDIA container runtime only"),
])

# ---------------------------------------------------------------- FAISS retrieval
E("faiss_retrieval", "retrieval/build_index.py", "explicit_replacement",
  "Image retrieval: open_clip embeddings + FAISS index_factory (optional GPU index)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu",
      f"entry point (mandatory before torch 2.5.1, {KM} §1.1)"),
    C("images = images.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "images = images.to(device, non_blocking=True)", ".cuda() raises without CUDA"),
    C("with torch.cuda.amp.autocast(enabled=fp16):", "amp", R, True,
      "with torch.autocast(device_type=device.type, enabled=fp16):", "CUDA autocast inactive for NPU tensors (--fp16 silently off)"),
    C('device = torch.device("cuda")', "device_type", R, True, 'device = torch.device("npu")',
      "target device used by the ported encode()"),
    C("model = model.cuda().eval()", "tensor_to_device", R, True, "model = model.to(device).eval()",
      ".cuda() raises without CUDA"),
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", R, False,
      'f"(peak {torch.npu.max_memory_allocated() / 2**30:.1f} GiB)")', "log only; 0 without CUDA"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "silent no-op"),
])

# ---------------------------------------------------------------- timm + DALI
E("timm_dali", "train_dali.py", "explicit_replacement",
  "timm ImageNet fine-tuning script with NVIDIA DALI GPU decoding pipelines", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu",
      f"entry point (mandatory before torch 2.5.1, {KM} §1.1)"),
    C('parser.add_argument("--device", default="cuda"', "device_type", R, True,
      'parser.add_argument("--device", default="npu", type=str, help="Device (accelerator) to use.")',
      "timm's init_distributed_device builds the device (and picks the backend) from args.device"),
    C('jpegs, device="mixed", output_type=types.RGB,', "device_type", R, True,
      'jpegs, device="cpu", output_type=types.RGB,',
      "DALI 'mixed' decoding uses nvJPEG on an NVIDIA GPU (DALI not covered by the knowledge; minimal port keeps DALI on CPU, alternative is timm create_loader)"),
    C('images = fn.resize(images, device="gpu", resize_x=crop', "device_type", R, True,
      'images = fn.resize(images, device="cpu", resize_x=crop, resize_y=crop, interp_type=types.INTERP_TRIANGULAR)',
      "DALI GPU operator"),
    C('images = fn.decoders.image(jpegs, device="mixed"', "device_type", R, True,
      'images = fn.decoders.image(jpegs, device="cpu", output_type=types.RGB)', "as above"),
    C('images = fn.resize(images, device="gpu", resize_shorter', "device_type", R, True,
      'images = fn.resize(images, device="cpu", resize_shorter=int(crop / 0.875), interp_type=types.INTERP_TRIANGULAR)',
      "DALI GPU operator"),
    C("=images.gpu(),", "tensor_to_device", R, True, "images,", "DataNode.gpu() needs a CUDA device"),
    C("labels = labels.gpu()", "tensor_to_device", X, True, None, "DataNode.gpu() needs a CUDA device"),
    C("device_id=args.local_rank,", "device_type", R, True, "device_id=None,",
      "a DALI pipeline with a device_id initialises CUDA; CPU-only pipelines take None"),
    C('input = data[0]["data"]', "tensor_to_device", R, True,
      'input = data[0]["data"].to(args.device, non_blocking=True)',
      "CPU pipeline output must be moved to the NPU"),
    C('target = data[0]["label"].squeeze(-1).long()', "tensor_to_device", R, True,
      'target = data[0]["label"].squeeze(-1).long().to(args.device, non_blocking=True)', "as above"),
    C("input = input.contiguous(memory_format=torch.channels_last)", "unsupported_op_workaround", X, False, None,
      f"channels_last is listed as unsupported by msFmkTransplt ({KM} §2.8); flag is off by default"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "raises without CUDA"),
    C("model.to(memory_format=torch.channels_last)", "unsupported_op_workaround", X, False, None,
      f"as above ({KM} §2.8)"),
    C('partial(torch.autocast, device_type="cuda"', "amp", R, True,
      'amp_autocast = partial(torch.autocast, device_type=device.type, dtype=getattr(torch, args.amp_dtype)) if args.amp else utils.suppress',
      "CUDA autocast does not cast NPU ops"),
    C("loss_scaler = NativeScaler()", "amp", R, True,
      'loss_scaler = NativeScaler(device=device.type) if args.amp and args.amp_dtype == "float16" else None',
      "timm's NativeScaler builds a GradScaler for 'cuda' by default (from memory of timm/utils/cuda.py), which disables itself on NPU"),
])
