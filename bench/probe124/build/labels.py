# Labels for probe124 (YOLO-family detection codebases, CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit. See README.md "How the labels were chosen".

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


T, F = True, False

# --------------------------------------------------------------------------------------------------------------------
# YOLOv5 (ultralytics/yolov5)
# --------------------------------------------------------------------------------------------------------------------

E("y5_torch_utils", "utils/torch_utils.py", "device_branch_or_abstraction",
  "ultralytics/yolov5 utils/torch_utils.py (select_device, time_sync, profile, smart_DDP, ModelEMA)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", F, "import torch_npu  # noqa: F401",
      "library module that owns select_device; train/val/export entry scripts already import torch_npu and "
      "torch_npu>=2.5.1 autoloads, so belt-and-braces only"),
    C("dist.barrier(device_ids=[local_rank])", "dist_backend", "replace", F,
      "dist.barrier(device_ids=[local_rank]) if dist.get_backend() == 'nccl' else dist.barrier()",
      "barrier(device_ids=...) was historically NCCL-only; whether HCCL accepts device_ids is unconfirmed"),
    C("dist.barrier(device_ids=[0])", "dist_backend", "replace", F,
      "dist.barrier(device_ids=[0]) if dist.get_backend() == 'nccl' else dist.barrier()",
      "same as the rank!=0 barrier above; unconfirmed for HCCL"),
    C('cmd = "nvidia-smi -L | wc -l"', "torch_cuda_api", "replace", F,
      "return torch.npu.device_count()",
      "nvidia-smi absent on Ascend hosts -> silently returns 0; helper is not on the train/val path of this corpus"),
    C('.replace("cuda:", "").replace("none", "")', "device_type", "replace", F,
      'device = str(device).strip().lower().replace("cuda:", "").replace("npu:", "").replace("none", "")',
      "accept 'npu:0' style device strings too; bare indices already work"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = device  # set environment', "env_var", "replace", T,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = device  # set environment variable - must be before NPU init',
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: --device 3 would silently run on NPU 0"),
    C("assert torch.cuda.is_available() and torch.cuda.device_count() >= len(", "torch_cuda_api", "replace", T,
      "assert torch.npu.is_available() and torch.npu.device_count() >= len(",
      "torch.cuda.is_available() is False on an NPU host -> AssertionError for any --device N"),
    C("if not cpu and not mps and torch.cuda.is_available():", "torch_cuda_api", "replace", T,
      "if not cpu and not mps and torch.npu.is_available():  # prefer NPU if available",
      "otherwise silently falls back to CPU"),
    C("p = torch.cuda.get_device_properties(i)", "torch_cuda_api", "replace", T,
      "p = torch.npu.get_device_properties(i)",
      "CUDA query raises on NPU host; NPU properties keep name/total_memory"),
    C('arg = "cuda:0"', "device_type", "replace", T, 'arg = "npu:0"', "device string"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", T, "if torch.npu.is_available():",
      "time_sync(): guard is False on NPU host -> no sync, every profile()/val timing measures launch time only"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", T, "torch.npu.synchronize()", "NPU is async too"),
    C("mem = torch.cuda.memory_reserved() / 1e9 if torch.cuda.is_available() else 0", "torch_cuda_api", "replace", T,
      "mem = torch.npu.memory_reserved() / 1e9 if torch.npu.is_available() else 0  # (GB)",
      "profile() memory column feeds utils/autobatch.py's batch-size fit; all-zero memory breaks --batch-size -1"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", F, "torch.npu.empty_cache()", "no-op on NPU host"),
])

E("y5_general", "utils/general.py", "device_branch_or_abstraction",
  "ultralytics/yolov5 utils/general.py (Profile, init_seeds, check_amp, non_max_suppression)", [
    C("=import torchvision", "unsupported_op_workaround", "npu_only_addition", F,
      "import torchvision_npu  # noqa: F401  registers NPU kernels for torchvision.ops.nms",
      "without torchvision_npu, torchvision::nms on NPU tensors goes through torch_npu's CPU fallback "
      "(host round-trip every batch); unconfirmed that the fallback covers the torchvision namespace"),
    C('self.cuda = bool(device and str(device).startswith("cuda"))', "device_type", "replace", T,
      'self.cuda = bool(device and str(device).startswith(("cuda", "npu")))',
      "npu device -> no sync -> dt[] in val.py measures async launch time, silently wrong speed numbers"),
    C("torch.cuda.synchronize(self.device)", "torch_cuda_api", "replace", T,
      "torch.npu.synchronize(self.device)", "sync the NPU stream before reading the clock"),
    C("=torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", F, "torch.npu.manual_seed(seed)",
      "no-op without CUDA; torch.manual_seed already seeds the custom device on torch>=2.1 (unconfirmed in notes)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", F, "torch.npu.manual_seed_all(seed)",
      "same as above"),
])

E("y5_train", "train.py", "device_branch_or_abstraction",
  "ultralytics/yolov5 train.py (DDP via LOCAL_RANK/RANK, torch.cuda.amp, DP fallback)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu  # noqa: F401",
      "entry script; registers the npu device before select_device() runs (needed before torch_npu 2.5.1 autoload)"),
    C("if cuda and RANK == -1 and torch.cuda.device_count() > 1:", "torch_cuda_api", "removal", F, None,
      "DP branch: unreachable on NPU (cuda count is 0) and nn.DataParallel is unsupported on Ascend; drop the block "
      "rather than porting the count"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "removal", F, None,
      "torch.nn.DataParallel is marked unsupported for NPU; use torch.distributed.run (DDP) instead"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=amp)", "amp", "replace", T,
      "scaler = torch.npu.amp.GradScaler(enabled=amp)",
      "CUDA GradScaler disables itself without CUDA -> AMP silently off"),
    C("with torch.cuda.amp.autocast(amp):", "amp", "replace", T, "with torch.npu.amp.autocast(amp):",
      "CUDA autocast disables itself on an NPU host -> training silently runs in fp32"),
    C('mem = f"{torch.cuda.memory_reserved()', "torch_cuda_api", "replace", F,
      'mem = f"{torch.npu.memory_reserved() / 1E9 if torch.npu.is_available() else 0:.3g}G"  # (GB)',
      "progress-bar memory column only; shows 0G on NPU"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", F, "torch.npu.empty_cache()",
      "silent no-op on NPU host; NPU caching allocator not released"),
    C('assert torch.cuda.device_count() > LOCAL_RANK', "torch_cuda_api", "replace", T,
      'assert torch.npu.device_count() > LOCAL_RANK, "insufficient NPU devices for DDP command"',
      "0 CUDA devices -> every DDP rank fails the assert"),
    C("torch.cuda.set_device(LOCAL_RANK)", "torch_cuda_api", "replace", T, "torch.npu.set_device(LOCAL_RANK)",
      "bind each DDP rank to its NPU"),
    C('device = torch.device("cuda", LOCAL_RANK)', "device_type", "replace", T,
      'device = torch.device("npu", LOCAL_RANK)', "device string"),
    C('backend="nccl" if dist.is_nccl_available() else "gloo"', "dist_backend", "replace", T,
      'backend="hccl", timeout=timedelta(seconds=10800)',
      "is_nccl_available() is False -> gloo, which cannot all-reduce NPU tensors"),
])

E("y5_val", "val.py", "device_branch_or_abstraction",
  "ultralytics/yolov5 val.py (Profile timings, half on non-CPU, --task speed)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu  # noqa: F401",
      "entry script (python val.py --device 0)"),
    C('opt.half = torch.cuda.is_available() and opt.device != "cpu"', "torch_cuda_api", "replace", F,
      'opt.half = torch.npu.is_available() and opt.device != "cpu"  # FP16 for fastest results',
      "--task speed would silently benchmark FP32 on NPU; results stay correct"),
])

E("y5_export", "export.py", "device_branch_or_abstraction",
  "ultralytics/yolov5 export.py (ONNX --half on GPU, TensorRT engine export)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu  # noqa: F401",
      "entry script; `--device 0 --half` export needs the npu device registered"),
])

E("y5_common", "models/common.py", "device_branch_or_abstraction",
  "ultralytics/yolov5 models/common.py (DetectMultiBackend, AutoShape)", [
    C("from torch.cuda import amp", "amp", "replace", T, "from torch.npu import amp",
      "AutoShape/check_amp use amp.autocast; the CUDA one disables itself on NPU so AMP inference silently runs fp32"),
])

E("y5_dataloaders", "utils/dataloaders.py", "device_branch_or_abstraction",
  "ultralytics/yolov5 utils/dataloaders.py (create_dataloader, InfiniteDataLoader)", [
    C("nd = torch.cuda.device_count()", "torch_cuda_api", "replace", F,
      "nd = torch.npu.device_count()  # number of NPU devices",
      "only sizes num_workers per device (0 -> treated as 1); performance heuristic"),
    C("pin_memory=PIN_MEMORY,", "pin_memory", "replace", F,
      'pin_memory=PIN_MEMORY, pin_memory_device="npu" if PIN_MEMORY else "",',
      "older torch DataLoader only pins when torch.cuda.is_available(); unconfirmed per torch version, perf only"),
])

E("y5_requirements", "requirements.txt", "explicit_replacement",
  "ultralytics/yolov5 requirements.txt", [
    C("torch>=1.8.0  # see", "import_torch_npu", "replace", F,
      "torch==2.1.0  # must equal the torch_npu wheel version (CPU/aarch64 wheel)",
      "torch_npu requires the exact matching torch; unconfirmed whether the torch-npu wheel pins torch itself"),
    C("=torchvision>=0.9.0", "import_torch_npu", "npu_only_addition", T,
      "torch-npu==2.1.0.post10  # Ascend NPU backend, pairs with torch 2.1.0 / CANN 8.0.0",
      "nothing installs torch_npu otherwise"),
])

# --------------------------------------------------------------------------------------------------------------------
# Ultralytics YOLOv8 / YOLO11 (ultralytics/ultralytics)
# --------------------------------------------------------------------------------------------------------------------

E("u8_torch_utils", "ultralytics/utils/torch_utils.py", "device_branch_or_abstraction",
  "ultralytics/ultralytics ultralytics/utils/torch_utils.py (select_device, autocast, init_seeds, profile)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu  # noqa: F401",
      "ultralytics is used as a library (YOLO(...).train(device=0)); the module owning select_device is the one "
      "place every path goes through"),
    C('use_ids = initialized and dist.get_backend() == "nccl"', "dist_backend", "replace", F,
      'use_ids = initialized and dist.get_backend() in {"nccl", "hccl"}',
      "plain barrier() is used for hccl, which works; device_ids support under HCCL unconfirmed"),
    C('def autocast(enabled: bool, device: str = "cuda"):', "amp", "replace", T,
      'def autocast(enabled: bool, device: str = "npu"):',
      "callers pass no device -> torch.amp.autocast('cuda') disables itself on NPU, AMP silently off"),
    C("return torch.cuda.amp.autocast(enabled)", "amp", "replace", F,
      "return torch.npu.amp.autocast(enabled)",
      "torch<1.13 branch is dead on every torch that has a torch_npu build (>=2.1)"),
    C("properties = torch.cuda.get_device_properties(index)", "torch_cuda_api", "replace", T,
      "properties = torch.npu.get_device_properties(index)", "raises without CUDA"),
    C('for remove in "cuda:", "none"', "device_type", "replace", F,
      'for remove in "cuda:", "npu:", "none", "(", ")", "[", "]", "\'", " ":',
      "accept npu:N strings"),
    C('if device == "cuda":', "device_type", "replace", F, 'if device in {"cuda", "npu"}:',
      "device='npu' would otherwise be written into the visible-devices env var"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = device  # set environment', "env_var", "replace", T,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = device  # must be set before NPU init',
      "ignored by the Ascend runtime; device=3 silently runs on NPU 0"),
    C('if not (torch.cuda.is_available() and torch.cuda.device_count() >= len(device.split(","))):',
      "torch_cuda_api", "replace", T,
      'if not (torch.npu.is_available() and torch.npu.device_count() >= len(device.split(","))):',
      "raises ValueError for every device=N on an NPU host"),
    C("if not cpu and not mps and torch.cuda.is_available():", "torch_cuda_api", "replace", T,
      "if not cpu and not mps and torch.npu.is_available():  # prefer NPU if available",
      "otherwise silently CPU"),
    C('arg = "cuda:0"', "device_type", "replace", T, 'arg = "npu:0"', "device string"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", T, "if torch.npu.is_available():",
      "time_sync(): no sync on NPU -> profile()/AutoBatch timings measure launch time"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", T, "torch.npu.synchronize()", "NPU is async"),
    C("=torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", F, "torch.npu.manual_seed(seed)",
      "no-op without CUDA; torch.manual_seed covers the NPU generator (unconfirmed in notes)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", F, "torch.npu.manual_seed_all(seed)",
      "same"),
    C("if torch.cuda.is_available():  # reserved-memory stats", "torch_cuda_api", "replace", T,
      "if torch.npu.is_available():  # reserved-memory stats are collected on the NPU",
      "else memory stays 0 and AutoBatch's polyfit gets no points -> batch=-1 silently falls back to default"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", F, "torch.npu.empty_cache()", "no-op on NPU host"),
    C('cuda_info["memory"] = torch.cuda.memory_reserved(device)', "torch_cuda_api", "replace", T,
      'cuda_info["memory"] = torch.npu.memory_reserved(device)',
      "torch.cuda.memory_reserved(npu_device) raises"),
    C("torch.cuda.empty_cache()  # start profiling", "torch_cuda_api", "replace", F,
      "torch.npu.empty_cache()  # start profiling from an empty cache", "no-op on NPU host"),
    C("torch.cuda.empty_cache()  # release cached blocks", "torch_cuda_api", "replace", F,
      "torch.npu.empty_cache()  # release cached blocks between ops", "no-op on NPU host"),
])

E("u8_checks", "ultralytics/utils/checks.py", "device_branch_or_abstraction",
  "ultralytics/ultralytics ultralytics/utils/checks.py (check_amp, cuda_device_count, collect_system_info)", [
    C('["nvidia-smi", "--query-gpu=count"', "torch_cuda_api", "replace", F,
      "return torch.npu.device_count()",
      "nvidia-smi missing -> 0; cuda_is_available() only feeds tests/benchmarks, not training"),
    C("gpu = torch.cuda.get_device_name(device)", "torch_cuda_api", "replace", T,
      "gpu = torch.npu.get_device_name(device)",
      "check_amp reaches this for any non-cpu/mps device; CUDA query raises on NPU and aborts training setup"),
])

E("u8_autobatch", "ultralytics/utils/autobatch.py", "device_branch_or_abstraction",
  "ultralytics/ultralytics ultralytics/utils/autobatch.py (batch=-1 AutoBatch)", [
    C("properties = torch.cuda.get_device_properties(device)", "torch_cuda_api", "replace", T,
      "properties = torch.npu.get_device_properties(device)",
      "raises for an npu device (caught nowhere before the try block)"),
    C("r = torch.cuda.memory_reserved(device) / gb", "torch_cuda_api", "replace", T,
      "r = torch.npu.memory_reserved(device) / gb  # GiB reserved",
      "torch.cuda.memory_reserved(npu_device) raises (not a cuda device)"),
    C("a = torch.cuda.memory_allocated(device) / gb", "torch_cuda_api", "replace", T,
      "a = torch.npu.memory_allocated(device) / gb  # GiB allocated", "same"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", F, "torch.npu.empty_cache()",
      "silent no-op on NPU host"),
])

E("u8_ops", "ultralytics/utils/ops.py", "device_branch_or_abstraction",
  "ultralytics/ultralytics ultralytics/utils/ops.py (Profile, non_max_suppression)", [
    C("=import torchvision", "unsupported_op_workaround", "npu_only_addition", F,
      "import torchvision_npu  # noqa: F401  NPU kernels for torchvision.ops.nms",
      "torchvision::nms otherwise takes the CPU fallback every batch (unconfirmed the fallback covers it)"),
    C('self.cuda = bool(device and str(device).startswith("cuda"))', "device_type", "replace", T,
      'self.cuda = bool(device and str(device).startswith(("cuda", "npu")))',
      "validator speed dict silently measures async launch time on NPU"),
    C("torch.cuda.synchronize(self.device)", "torch_cuda_api", "replace", T,
      "torch.npu.synchronize(self.device)", "sync before reading the clock"),
])

E("u8_tal", "ultralytics/utils/tal.py", "device_branch_or_abstraction",
  "ultralytics/ultralytics ultralytics/utils/tal.py (TaskAlignedAssigner with OOM->CPU fallback)", [
    C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", "replace", F,
      "except torch.OutOfMemoryError:  # torch>=2.5; NPU allocator OOM",
      "unconfirmed which exception class torch_npu raises on OOM; if not OutOfMemoryError the CPU retry never runs"),
])

E("u8_trainer", "ultralytics/engine/trainer.py", "device_branch_or_abstraction",
  "ultralytics/ultralytics ultralytics/engine/trainer.py (BaseTrainer, _setup_ddp, GradScaler, memory helpers)", [
    C("elif torch.cuda.is_available():  # i.e. device=None", "torch_cuda_api", "replace", F,
      "elif torch.npu.is_available():  # i.e. device=None or device='' or device=number",
      "world_size 0 vs 1 only differs in logging here; training device comes from select_device"),
    C("torch.cuda.set_device(RANK)", "torch_cuda_api", "replace", T, "torch.npu.set_device(RANK)",
      "DDP subprocess binding"),
    C('self.device = torch.device("cuda", RANK)', "device_type", "replace", T,
      'self.device = torch.device("npu", RANK)', "device string"),
    C('os.environ["TORCH_NCCL_BLOCKING_WAIT"] = "1"', "env_var", "replace", F,
      'os.environ["HCCL_ASYNC_ERROR_HANDLING"] = "1"  # watchdog so the timeout is enforced',
      "NCCL-only knob, silently ignored with HCCL; nearest HCCL equivalent unconfirmed"),
    C('backend="nccl" if dist.is_nccl_available() else "gloo",', "dist_backend", "replace", T,
      'backend="hccl",', "gloo cannot reduce NPU tensors"),
    C('torch.amp.GradScaler("cuda", enabled=self.amp) if TORCH_2_4', "amp", "replace", T,
      "torch.npu.amp.GradScaler(enabled=self.amp)",
      "GradScaler('cuda') disables itself without CUDA; AMP scaling silently off"),
    C("memory = torch.cuda.memory_reserved()", "torch_cuda_api", "replace", F,
      "memory = torch.npu.memory_reserved()",
      "progress-bar GPU_mem and the _clear_memory threshold read 0 -> cache is never trimmed; no failure"),
    C("total = torch.cuda.get_device_properties(self.device).total_memory", "torch_cuda_api", "replace", T,
      "total = torch.npu.get_device_properties(self.device).total_memory",
      "called every epoch via _clear_memory(0.5); raises for an npu device"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", F, "torch.npu.empty_cache()",
      "silent no-op on NPU host"),
])

E("u8_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "ultralytics/ultralytics docker/Dockerfile", [
    C("FROM pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime", "import_torch_npu", "replace", T,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "CUDA runtime image has no CANN toolkit/driver libs; torch_npu cannot load (libhccl.so etc.)"),
    C("RUN python3 -m pip install --upgrade pip wheel", "import_torch_npu", "npu_only_addition", T,
      "RUN pip install torch==2.6.0 torchvision==0.21.0 --index-url https://download.pytorch.org/whl/cpu "
      "&& pip install torch-npu==2.6.0.post3",
      "CANN base image carries no torch; CPU torch wheel plus the torch_npu build paired with CANN 8.3.RC1"),
    C('"tensorrt-cu12==10.1.0"', "custom_cuda_extension", "replace", F,
      'RUN pip install -e ".[export]" "albumentations>=1.4.6" comet pycocotools',
      "TensorRT is CUDA-only and useless in an Ascend image; may not install on aarch64 (unconfirmed)"),
])

# --------------------------------------------------------------------------------------------------------------------
# YOLOv7 (WongKinYiu/yolov7)
# --------------------------------------------------------------------------------------------------------------------

E("y7_train_aux", "train_aux.py", "device_branch_or_abstraction",
  "WongKinYiu/yolov7 train_aux.py (torch.distributed.launch --local_rank, from torch.cuda import amp)", [
    C("=import torch.distributed as dist", "import_torch_npu", "npu_only_addition", T,
      "import torch_npu  # noqa: F401", "entry script; first torch import"),
    C("from torch.cuda import amp", "amp", "replace", T, "from torch.npu import amp",
      "the single edit that moves both amp.GradScaler(enabled=cuda) and amp.autocast(enabled=cuda) to NPU"),
    C("run_id = torch.load(weights).get('wandb_id')", "tensor_to_device", "replace", F,
      "run_id = torch.load(weights, map_location='cpu').get('wandb_id') if weights.endswith('.pt') and "
      "os.path.isfile(weights) else None",
      "resuming a last.pt written by a CUDA run deserialises cuda storages and fails on an NPU host; released "
      "(stripped) weights are CPU tensors"),
    C("if cuda and rank == -1 and torch.cuda.device_count() > 1:", "torch_cuda_api", "removal", F, None,
      "DP block: unreachable on NPU and nn.DataParallel unsupported; drop it"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "removal", F, None,
      "DataParallel unsupported on Ascend; DDP path is the supported one"),
    C("mem = '%.3gG' % (torch.cuda.memory_reserved()", "torch_cuda_api", "replace", F,
      "mem = '%.3gG' % (torch.npu.memory_reserved() / 1E9 if torch.npu.is_available() else 0)  # (GB)",
      "display only"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", F, "torch.npu.empty_cache()", "no-op on NPU host"),
    C("assert torch.cuda.device_count() > opt.local_rank", "torch_cuda_api", "replace", T,
      "assert torch.npu.device_count() > opt.local_rank", "fails on every rank"),
    C("torch.cuda.set_device(opt.local_rank)", "torch_cuda_api", "replace", T,
      "torch.npu.set_device(opt.local_rank)", "bind rank to NPU"),
    C("device = torch.device('cuda', opt.local_rank)", "device_type", "replace", T,
      "device = torch.device('npu', opt.local_rank)", "device string"),
    C("dist.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", T,
      "dist.init_process_group(backend='hccl', init_method='env://')  # distributed backend",
      "NCCL backend unavailable"),
])

E("y7_experimental", "models/experimental.py", "device_branch_or_abstraction",
  "WongKinYiu/yolov7 models/experimental.py (Ensemble, ORT/TRT NMS export wrappers, attempt_load)", [])

E("y7_dist_sh", "scripts/dist_train.sh", "explicit_replacement",
  "YOLOv7-style multi-GPU DDP shell launcher (torch.distributed.launch)", [
    C("=set -e", "import_torch_npu", "npu_only_addition", T,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (LD_LIBRARY_PATH, ASCEND_OPP_PATH, ...) must be sourced before torch_npu loads"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", T,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "device restriction silently ignored otherwise"),
    C("export NCCL_P2P_DISABLE", "env_var", "removal", F, None, "NCCL-only, ignored by HCCL"),
    C("export NCCL_DEBUG", "env_var", "replace", F, "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}",
      "NCCL log level has no effect; CANN log level is the nearest knob (level mapping unconfirmed)"),
    C("nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv", "torch_cuda_api", "replace", T,
      "npu-smi info", "nvidia-smi not installed on Ascend hosts; with set -e the script aborts here"),
])

E("y7_env", "environment.yml", "explicit_replacement",
  "conda environment.yml of a YOLOv7 fork (pytorch + pytorch-cuda from the nvidia channel)", [
    C("=- nvidia", "import_torch_npu", "removal", F, None, "NVIDIA channel only serves CUDA runtime packages"),
    C("- pytorch=1.13.1", "import_torch_npu", "replace", T, "- pytorch=2.1.0",
      "no torch_npu build exists for torch 1.13; torch must equal the torch_npu version"),
    C("- torchvision=0.14.1", "import_torch_npu", "replace", T, "- torchvision=0.16.0",
      "must follow the torch bump (0.16 pairs with 2.1)"),
    C("- pytorch-cuda=11.7", "import_torch_npu", "replace", T, "- cpuonly",
      "pytorch-cuda=11.7 does not exist for pytorch 2.1 and not at all for linux-aarch64 -> env solve fails"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", T, "    - torch-npu==2.1.0.post10",
      "Ascend backend for torch 2.1.0 (pip only)"),
    C("- nvidia-pyindex", "custom_cuda_extension", "removal", F, None, "only needed for nvidia-tensorrt"),
    C("- nvidia-tensorrt==8.4.1.5", "custom_cuda_extension", "removal", F, None,
      "TensorRT is CUDA-only; x86_64-only wheels would break env creation on aarch64 hosts (unconfirmed)"),
])

# --------------------------------------------------------------------------------------------------------------------
# YOLOX (Megvii-BaseDetection/YOLOX)
# --------------------------------------------------------------------------------------------------------------------

E("yx_trainer", "yolox/core/trainer.py", "device_branch_or_abstraction",
  "Megvii-BaseDetection/YOLOX yolox/core/trainer.py (Trainer, --fp16, DataPrefetcher)", [
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)", "amp", "replace", T,
      "self.scaler = torch.npu.amp.GradScaler(enabled=args.fp16)", "--fp16 silently ignored otherwise"),
    C('self.device = "cuda:{}".format(self.local_rank)', "device_type", "replace", T,
      'self.device = "npu:{}".format(self.local_rank)', "used for model.to() and torch.load map_location"),
    C("with torch.cuda.amp.autocast(enabled=self.amp_training):", "amp", "replace", T,
      "with torch.npu.amp.autocast(enabled=self.amp_training):", "same"),
    C("torch.cuda.set_device(self.local_rank)", "torch_cuda_api", "replace", T,
      "torch.npu.set_device(self.local_rank)", "raises without CUDA"),
])

E("yx_launch", "yolox/core/launch.py", "device_branch_or_abstraction",
  "Megvii-BaseDetection/YOLOX yolox/core/launch.py (mp.start_processes, init_process_group)", [
    C('backend="nccl",', "dist_backend", "replace", F, 'backend="hccl",',
      "default is overridden by both callers (tools/train.py, tools/eval.py pass --dist-backend)"),
    C("=torch.cuda.is_available()", "torch_cuda_api", "replace", T, "torch.npu.is_available()",
      "assert in every spawned worker fails on an NPU host"),
    C("assert num_gpus_per_machine <= torch.cuda.device_count()", "torch_cuda_api", "replace", T,
      "assert num_gpus_per_machine <= torch.npu.device_count()", "fails with 0 CUDA devices"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", T, "torch.npu.set_device(local_rank)",
      "bind worker to NPU"),
])

E("yx_prefetcher", "yolox/data/data_prefetcher.py", "explicit_replacement",
  "Megvii-BaseDetection/YOLOX yolox/data/data_prefetcher.py (side-stream H2D prefetch)", [
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", T, "self.stream = torch.npu.Stream()",
      "CUDA stream creation fails without CUDA"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", T, "with torch.npu.stream(self.stream):",
      "stream context"),
    C("self.next_target = self.next_target.cuda(non_blocking=True)", "tensor_to_device", "replace", T,
      "self.next_target = self.next_target.npu(non_blocking=True)", "H2D copy"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", T,
      "torch.npu.current_stream().wait_stream(self.stream)", "stream sync"),
    C("target.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", T,
      "target.record_stream(torch.npu.current_stream())", "record_stream needs the NPU stream"),
    C("self.next_input = self.next_input.cuda(non_blocking=True)", "tensor_to_device", "replace", T,
      "self.next_input = self.next_input.npu(non_blocking=True)", "H2D copy"),
    C("input.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", T,
      "input.record_stream(torch.npu.current_stream())", "same"),
])

E("yx_train_tool", "tools/train.py", "device_branch_or_abstraction",
  "Megvii-BaseDetection/YOLOX tools/train.py (argparse --dist-backend/--fp16/--devices, launch)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu  # noqa: F401",
      "entry script; spawned workers re-import this module so they also get the npu backend"),
    C('"--dist-backend", default="nccl"', "dist_backend", "replace", T,
      '"--dist-backend", default="hccl", type=str, help="distributed backend"',
      "this default is what launch() actually receives"),
])

E("yx_eval_tool", "tools/eval.py", "device_branch_or_abstraction",
  "Megvii-BaseDetection/YOLOX tools/eval.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu  # noqa: F401",
      "entry script"),
    C('"--dist-backend", default="nccl"', "dist_backend", "replace", T,
      '"--dist-backend", default="hccl", type=str, help="distributed backend"', "passed to launch()"),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", T, "torch.npu.set_device(rank)", "bind rank"),
    C("model.cuda(rank)", "tensor_to_device", "replace", T, "model.npu(rank)", "module to device"),
    C('loc = "cuda:{}".format(rank)', "device_type", "replace", T, 'loc = "npu:{}".format(rank)',
      "map_location string"),
    C("num_gpu = torch.cuda.device_count() if args.devices is None", "torch_cuda_api", "replace", T,
      "num_gpu = torch.npu.device_count() if args.devices is None else args.devices",
      "0 -> silently single-process eval regardless of visible NPUs"),
    C("assert num_gpu <= torch.cuda.device_count()", "torch_cuda_api", "replace", T,
      "assert num_gpu <= torch.npu.device_count()", "fails for any -d N"),
])

E("yx_dist", "yolox/utils/dist.py", "device_branch_or_abstraction",
  "Megvii-BaseDetection/YOLOX yolox/utils/dist.py (detectron2-style comm helpers)", [
    C("gpu_list = os.getenv('CUDA_VISIBLE_DEVICES', None)", "env_var", "replace", T,
      "gpu_list = os.getenv('ASCEND_RT_VISIBLE_DEVICES', None)",
      "device count derived from the wrong variable"),
    C('devices_list_info = os.popen("nvidia-smi -L")', "torch_cuda_api", "replace", T,
      "return torch.npu.device_count()",
      "no nvidia-smi -> ''.split('\\n') has length 1, so get_num_devices() silently reports 1 device"),
    C('if dist.get_backend() == "nccl":', "dist_backend", "replace", T,
      'if dist.get_backend() in ("nccl", "hccl"):',
      "with hccl the WORLD group is returned and _serialize_to_tensor's backend assert fires"),
    C('assert backend in ["gloo", "nccl"]', "dist_backend", "replace", F,
      'assert backend in ["gloo", "nccl", "hccl"]',
      "unreachable with hccl once the gloo side-group is used"),
    C('device = torch.device("cpu" if backend == "gloo" else "cuda")', "device_type", "replace", F,
      'device = torch.device("cpu" if backend == "gloo" else "npu")', "same; only reached for device groups"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", T, "if torch.npu.is_available():",
      "time_synchronized() drives the evaluator's forward/NMS timings; no sync on NPU -> wrong numbers"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", T, "torch.npu.synchronize()", "sync"),
])

E("yx_setup_env", "yolox/utils/setup_env.py", "explicit_replacement",
  "Megvii-BaseDetection/YOLOX yolox/utils/setup_env.py (configure_nccl / configure_omp)", [
    C('os.environ["NCCL_LAUNCH_MODE"] = "PARALLEL"', "env_var", "removal", F, None, "NCCL-only; no HCCL analogue"),
    C('os.environ["NCCL_IB_HCA"] = subprocess.getoutput(', "env_var", "removal", F, None,
      "HCCL picks NPU NICs from hccn.conf, not mlx5 HCAs"),
    C('os.environ["NCCL_IB_GID_INDEX"] = "3"', "env_var", "removal", F, None, "NCCL-only"),
    C('os.environ["NCCL_IB_TC"] = "106"', "env_var", "replace", F, 'os.environ["HCCL_RDMA_TC"] = "106"',
      "HCCL_RDMA_TC is the RoCE traffic-class knob; value semantics unconfirmed"),
])

E("yx_coco_eval", "yolox/evaluators/coco_evaluator.py", "device_branch_or_abstraction",
  "Megvii-BaseDetection/YOLOX yolox/evaluators/coco_evaluator.py", [
    C("tensor_type = torch.cuda.HalfTensor if half else torch.cuda.FloatTensor", "torch_cuda_api", "replace", T,
      "tensor_type = torch.npu.HalfTensor if half else torch.npu.FloatTensor",
      "imgs.type(torch.cuda.*Tensor) needs CUDA"),
    C("statistics = torch.cuda.FloatTensor([inference_time, nms_time, n_samples])", "torch_cuda_api", "replace", T,
      "statistics = torch.npu.FloatTensor([inference_time, nms_time, n_samples])",
      "reduced over HCCL, must live on the NPU"),
])

E("yx_exp", "yolox/exp/yolox_base.py", "device_branch_or_abstraction",
  "Megvii-BaseDetection/YOLOX yolox/exp/yolox_base.py (Exp: dataloaders, random_resize, optimizer)", [
    C('"pin_memory": True}', "pin_memory", "replace", F,
      'dataloader_kwargs = {"num_workers": self.data_num_workers, "pin_memory": True, "pin_memory_device": "npu"}',
      "perf only; older torch only pins when torch.cuda.is_available() (unconfirmed per version)"),
    C('"pin_memory": True,', "pin_memory", "replace", F, '"pin_memory": True, "pin_memory_device": "npu",',
      "same, eval loader"),
    C("tensor = torch.LongTensor(2).cuda()", "tensor_to_device", "replace", T,
      "tensor = torch.LongTensor(2).npu()", "multiscale size broadcast every 10 iters; .cuda() raises"),
])

# --------------------------------------------------------------------------------------------------------------------
# YOLOv6-style speed benchmark
# --------------------------------------------------------------------------------------------------------------------

E("y6_speed", "tools/speed_benchmark.py", "device_branch_or_abstraction",
  "YOLOv6-style tools/ speed benchmark (CUDA events, cudnn.benchmark, --half/--channels-last/--compile)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu  # noqa: F401",
      "entry script"),
    C('assert torch.cuda.is_available(), "CUDA unavailable', "torch_cuda_api", "replace", T,
      'assert torch.npu.is_available(), "NPU unavailable, invalid device {} requested".format(device)',
      "fails on NPU host"),
    C('return torch.device(f"cuda:{device}")', "device_type", "replace", T,
      'return torch.device(f"npu:{device}")', "device string"),
    C("return torch.cuda.get_device_name(device)", "torch_cuda_api", "replace", T,
      "return torch.npu.get_device_name(device)", "raises for npu device"),
    C("x = x.contiguous(memory_format=torch.channels_last)", "unsupported_op_workaround", "replace", F,
      "x = x.contiguous()",
      "msFmkTransplt lists channels_last as unsupported on NPU; effect (error vs slow path) unconfirmed"),
    C('if device.type == "cuda":  # drain warmup', "device_type", "replace", T,
      'if device.type in ("cuda", "npu"):  # drain warmup work before timing',
      "npu would otherwise skip the sync and reset"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", T, "torch.npu.synchronize(device)", "sync"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", T,
      "torch.npu.reset_peak_memory_stats(device)", "raises for npu device"),
    C('if device.type == "cuda":  # CUDA events', "device_type", "replace", T,
      'if device.type in ("cuda", "npu"):  # device events give device-side timings',
      "npu would fall into the perf_counter branch with no sync: latency silently wrong"),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", T,
      "starter = torch.npu.Event(enable_timing=True)", "device events"),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", T,
      "ender = torch.npu.Event(enable_timing=True)", "device events"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", T, "torch.npu.synchronize()",
      "needed before elapsed_time"),
    C("peak_mem = torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", T,
      "peak_mem = torch.npu.max_memory_allocated(device) / 1024 ** 2", "raises for npu device"),
    C("model = model.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "replace", F,
      "pass  # channels_last not supported on NPU; keep default contiguous format",
      "see input conversion above"),
    C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", F,
      'model = torch.compile(model, backend="npugraphs")',
      "max-autotune relies on Triton/CUDA graphs; NPU graph mode via npugraphs (unconfirmed for this model)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", F, "torch.npu.empty_cache()", "no-op on NPU host"),
])
