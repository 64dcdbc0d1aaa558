"""Labels for probe466 (licence-plate recognition, traffic-sign recognition, ALPR pipelines).

One entry per upstream file; one C(...) per line a careful porter would edit for Ascend NPU
(explicit torch_npu port: torch.npu.*, 'npu', hccl; no transfer_to_npu).
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("explicit port: torch.npu / 'npu' devices need torch_npu loaded; the stacks these repos pin "
               "land on torch_npu 2.1.x, which has no device-backend autoload (autoload only since 2.5.1)")

# ---------------------------------------------------------------------------------------------
# 1. LPRNet (sirius-ai/LPRNet_Pytorch style): --cuda bool flag, Variable(...).cuda(), CTC loss
# ---------------------------------------------------------------------------------------------
E("lprnet_train", "train_LPRNet.py", "explicit_replacement",
  "sirius-ai/LPRNet_Pytorch train_LPRNet.py (LPRNet + CTC training loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda:0" if args.cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if args.cuda else "cpu")',
      "model is placed with this device; 'cuda:0' has no device on an Ascend host"),
    C("lprnet.load_state_dict(torch.load(args.pretrained_model))", "tensor_to_device", "replace", True,
      "lprnet.load_state_dict(torch.load(args.pretrained_model, map_location=device))",
      "weights in this repo are saved from a cuda:0 state_dict; deserialising CUDA storages without "
      "map_location fails on a host with no CUDA"),
    C("images = Variable(images, requires_grad=False).cuda()", "tensor_to_device", "replace", True,
      "images = Variable(images, requires_grad=False).npu()", "input batch must live with the model on the NPU"),
    C("labels = Variable(labels, requires_grad=False).cuda()", "tensor_to_device", "replace", True,
      "labels = Variable(labels, requires_grad=False).npu()",
      "CTC targets follow log_probs to the device; .cuda() raises without CUDA"),
    C("images = Variable(images.cuda())", "tensor_to_device", "replace", True,
      "images = Variable(images.npu())", "greedy-decode evaluation batch"),
])

E("lprnet_test", "test_LPRNet.py", "explicit_replacement",
  "sirius-ai/LPRNet_Pytorch test_LPRNet.py (greedy CTC decode + cv2 display)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda:0" if args.cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if args.cuda else "cpu")', "model placement device"),
    C("images = Variable(images.cuda())", "tensor_to_device", "replace", True,
      "images = Variable(images.npu())", "test batch must be on the model's device"),
])

E("lprnet_model", "model/LPRNet.py", "explicit_replacement",
  "sirius-ai/LPRNet_Pytorch model/LPRNet.py (device-agnostic network)", [])

E("lprnet_data", "data/load_data.py", "explicit_replacement",
  "sirius-ai/LPRNet_Pytorch data/load_data.py (CCPD-style plate crops, cv2 preprocessing)", [])

# ---------------------------------------------------------------------------------------------
# 2. CRNN plate recogniser (we0091234/crnn_plate_recognition, from Sierkinhane/CRNN_Chinese_Characters_Rec)
# ---------------------------------------------------------------------------------------------
E("crnnplate_train", "train.py", "explicit_replacement",
  "we0091234/crnn_plate_recognition train.py (YAML config, GPUID, cudnn flags from config)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "unchanged it is False on an NPU host and training silently runs on cpu:0"),
    C('device = torch.device("cuda:{}".format(config.GPUID))', "device_type", "replace", True,
      'device = torch.device("npu:{}".format(config.GPUID))', "GPUID from the YAML is reused as the NPU index"),
])

E("crnnplate_function", "lib/core/function.py", "explicit_replacement",
  "we0091234/crnn_plate_recognition lib/core/function.py (train/validate loops, CTC on CPU)", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "torch.cuda.empty_cache() is a no-op when CUDA was never initialised; only the cache-release intent is lost"),
])

E("crnnplate_config", "lib/config/360CC_config.yaml", "explicit_replacement",
  "we0091234/crnn_plate_recognition lib/config/360CC_config.yaml (GPUID / CUDNN / PIN_MEMORY keys)", [])

E("crnnplate_model", "lib/models/crnn.py", "explicit_replacement",
  "we0091234/crnn_plate_recognition plateNet / CRNN model definitions", [])

E("crnnplate_utils", "lib/utils/utils.py", "explicit_replacement",
  "Sierkinhane/CRNN_Chinese_Characters_Rec lib/utils/utils.py (strLabelConverter, optimizers)", [])

E("crnnplate_demo", "demo.py", "explicit_replacement",
  "we0091234/crnn_plate_recognition demo.py (single-image recognition + timing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "unguarded; torch.cuda.synchronize() raises on a host without CUDA when --benchmark is given"),
    C("torch.cuda.synchronize()  # wait for the queued kernels", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the queued kernels before reading the clock",
      "second barrier of the timing window; same failure"),
    C("device = torch.device('cuda:0') if torch.cuda.is_available() else torch.device('cpu')", "device_type",
      "replace", True, "device = torch.device('npu:0') if torch.npu.is_available() else torch.device('cpu')",
      "unchanged: silent CPU inference on an NPU host"),
    C("checkpoint = torch.load(args.checkpoint)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(args.checkpoint, map_location=device)",
      "train.py saves model.state_dict() from the accelerator; loading device storages without map_location fails"),
])

# ---------------------------------------------------------------------------------------------
# 3. Plate detection + recognition (we0091234/Chinese_license_plate_detection_recognition, yolov5-face lineage)
# ---------------------------------------------------------------------------------------------
E("platedet_detect", "detect_plate.py", "explicit_replacement",
  "we0091234/Chinese_license_plate_detection_recognition detect_plate.py (4-point plate detector + CRNN)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "single device global passed to attempt_load and init_model; unchanged = silent CPU"),
])

E("platedet_torch_utils", "utils/torch_utils.py", "explicit_replacement",
  "yolov5 v5 / yolov5-face utils/torch_utils.py (select_device, time_synchronized, ModelEMA)", [
    C("os.environ['CUDA_VISIBLE_DEVICES'] = device  # set environment variable", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = device  # set environment variable",
      "--device 1 must restrict the process to NPU 1; CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime"),
    C("assert torch.cuda.is_available(), f'CUDA unavailable, invalid device {device} requested'", "torch_cuda_api",
      "replace", True, "assert torch.npu.is_available(), f'NPU unavailable, invalid device {device} requested'",
      "assert fails for any --device on an NPU host"),
    C("cuda = not cpu and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "cuda = not cpu and torch.npu.is_available()", "decides the returned device; unchanged = CPU"),
    C("n = torch.cuda.device_count()", "torch_cuda_api", "replace", False, "n = torch.npu.device_count()",
      "returns 0 unchanged: only skips the batch-size divisibility check and the device log lines"),
    C("p = torch.cuda.get_device_properties(i)", "torch_cuda_api", "replace", True,
      "p = torch.npu.get_device_properties(i)",
      "raises without CUDA; NPU properties keep name and total_memory, the only fields used"),
    C("return torch.device('cuda:0' if cuda else 'cpu')", "device_type", "replace", True,
      "return torch.device('npu:0' if cuda else 'cpu')", "the device every caller uses"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "time_synchronized exists only to sync before reading the clock; unchanged it never syncs and the "
      "FPS printed by detect_plate.py measures launch time"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "with the guard ported, torch.cuda.synchronize() raises"),
    C("device = device or torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')", "device_type", "replace",
      True, "device = device or torch.device('npu:0' if torch.npu.is_available() else 'cpu')",
      "profile() default device; unchanged it profiles on CPU"),
    C("print(torch.__version__, device.type, torch.cuda.get_device_properties(0) if device.type == 'cuda' else '')",
      "torch_cuda_api", "replace", False,
      "print(torch.__version__, device.type, torch.npu.get_device_properties(0) if device.type == 'npu' else '')",
      "log only: with device.type == 'npu' the CUDA branch is never taken"),
])

E("platedet_train", "train.py", "explicit_replacement",
  "yolov5-face train.py as used by Chinese_license_plate_detection_recognition (AMP, DP/DDP, NCCL)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from torch.cuda import amp", "amp", "replace", True, "from torch_npu.npu import amp",
      "amp.GradScaler/amp.autocast resolve through this module; torch.cuda.amp does not autocast NPU tensors and "
      "its GradScaler disables itself without CUDA, so --amp would silently train in fp32"),
    C("if cuda and rank == -1 and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
      "if cuda and rank == -1 and torch.npu.device_count() > 1:",
      "unchanged it returns 0 and keeps the DP branch off, which is the safe outcome on NPU"),
    C("model = torch.nn.DataParallel(model)", "unsupported_op_workaround", "replace", True,
      "logger.warning('DataParallel is not supported on Ascend NPU; use torch.distributed.run for multi-NPU')",
      "torch.nn.DataParallel is listed unsupported (✘) on Atlas A2/A3; with the count ported a multi-NPU "
      "single-process run would enter it"),
    C("mem = '%.3gG' % (torch.cuda.memory_reserved() / 1E9 if torch.cuda.is_available() else 0)", "torch_cuda_api",
      "replace", False, "mem = '%.3gG' % (torch.npu.memory_reserved() / 1E9 if torch.npu.is_available() else 0)  # (GB)",
      "progress-bar memory column only"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "end-of-training cache release; no-op otherwise"),
    C("assert torch.cuda.device_count() > opt.local_rank", "torch_cuda_api", "replace", True,
      "assert torch.npu.device_count() > opt.local_rank", "0 > local_rank fails in every DDP worker"),
    C("torch.cuda.set_device(opt.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(opt.local_rank)", "bind each DDP rank to its NPU"),
    C("device = torch.device('cuda', opt.local_rank)", "device_type", "replace", True,
      "device = torch.device('npu', opt.local_rank)", "per-rank device"),
    C("dist.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl', init_method='env://')  # distributed backend",
      "NCCL does not exist on Ascend; HCCL is the collective backend"),
])

E("platedet_general", "utils/general.py", "explicit_replacement",
  "yolov5-face utils/general.py (non_max_suppression_face with torchvision.ops.nms)", [
    C("=import torchvision", "unsupported_op_workaround", "npu_only_addition", False, "import torchvision_npu",
      "torchvision.ops.nms has no kernel in torch_npu's native op list; torchvision_npu (Ascend/vision) provides it. "
      "Without it the op should take torch_npu's CPU fallback (slow, not wrong) - unconfirmed for torchvision's "
      "custom ops"),
])

E("platedet_export", "export.py", "explicit_replacement",
  "yolov5-face export.py in the plate repo (CPU ONNX export, optional TensorRT)", [])

E("platedet_plate_rec", "plate_recognition/plate_rec.py", "explicit_replacement",
  "Chinese_license_plate_detection_recognition plate_recognition/plate_rec.py (module-level device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the module is also run standalone (__main__ test loop) and then nothing else has loaded torch_npu"),
    C("device = torch.device('cuda') if torch.cuda.is_available() else torch.device(\"cpu\")", "device_type",
      "replace", True, "device = torch.device('npu') if torch.npu.is_available() else torch.device(\"cpu\")",
      "module default used by the __main__ path; unchanged = silent CPU"),
])

E("platedet_requirements", "requirements.txt", "explicit_replacement",
  "yolov5-face / plate repo requirements.txt", [
    C("=torch>=1.7.0", "import_torch_npu", "replace", False, "torch==2.1.0",
      "pin torch to a release with a torch_npu wheel (wheel version must equal torch's); unpinned pip may pick a "
      "newer torch - whether torch-npu's metadata prevents that is unconfirmed"),
    C("=torchvision>=0.8.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "the NPU backend package itself; nothing else installs it"),
])

# ---------------------------------------------------------------------------------------------
# 4. GTSRB traffic-sign classifier with a spatial transformer (poojahira/gtsrb-pytorch style)
# ---------------------------------------------------------------------------------------------
E("gtsrb_main", "main.py", "explicit_replacement",
  "poojahira/gtsrb-pytorch main.py (STN classifier, --no-cuda flag, .cuda() calls)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("use_gpu = torch.cuda.is_available() and not args.no_cuda", "torch_cuda_api", "replace", True,
      "use_gpu = torch.npu.is_available() and not args.no_cuda", "gates every device move; unchanged = CPU"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
      "torch.cuda.manual_seed is queued lazily and never raises; torch.manual_seed above should already seed the "
      "PrivateUse1 device (unconfirmed)"),
    C('device = torch.device("cuda" if use_gpu else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if use_gpu else "cpu")',
      "the confusion matrix is allocated on it and indexed with NPU tensors"),
    C("num_workers=args.workers, pin_memory=use_gpu)", "pin_memory", "replace", False,
      "num_workers=args.workers, pin_memory=use_gpu, pin_memory_device='npu')",
      "older torch DataLoaders pin only when CUDA is available, so pinning silently turns off; performance only, "
      "unconfirmed per torch version"),
    C("num_workers=args.workers, pin_memory=use_gpu, drop_last=False)", "pin_memory", "replace", False,
      "num_workers=args.workers, pin_memory=use_gpu, pin_memory_device='npu', drop_last=False)",
      "same as the train loader; performance only, unconfirmed"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model placement"),
    C("data, target = data.cuda(), target.cuda()", "tensor_to_device", "replace", True,
      "data, target = data.npu(), target.npu()", "training batch"),
    C("data = data.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "data = data.npu(non_blocking=True)", "validation batch"),
    C("target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(non_blocking=True)", "validation targets"),
])

E("gtsrb_model", "model.py", "explicit_replacement",
  "poojahira/gtsrb-pytorch model.py (STN with affine_grid / grid_sample)", [])

E("gtsrb_data", "data.py", "explicit_replacement",
  "poojahira/gtsrb-pytorch data.py (torchvision augmentation presets, zip extraction)", [])

E("gtsrb_evaluate", "evaluate.py", "explicit_replacement",
  "poojahira/gtsrb-pytorch evaluate.py (CPU test-time augmentation, Kaggle CSV)", [
    C("state_dict = torch.load(args.model)", "tensor_to_device", "replace", True,
      "state_dict = torch.load(args.model, map_location='cpu')",
      "evaluation stays on CPU, but model_X.pth is saved from the accelerator by main.py; without map_location "
      "the device storages cannot be restored"),
])

E("gtsrb_requirements", "requirements.txt", "explicit_replacement",
  "gtsrb-pytorch style requirements.txt", [
    C("=torch>=1.4.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "the NPU backend package itself"),
])

# ---------------------------------------------------------------------------------------------
# 5. Traffic-sign detection on TT100K with torchvision references/detection
# ---------------------------------------------------------------------------------------------
E("tsdet_train", "train.py", "explicit_replacement",
  "torchvision references/detection train.py adapted to TT100K / GTSDB traffic-sign detection", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=import torchvision", "unsupported_op_workaround", "npu_only_addition", False, "import torchvision_npu",
      "Faster R-CNN calls torchvision nms / roi_align every step; torchvision_npu supplies NPU kernels. Without it "
      "they should fall back to CPU (slow) - unconfirmed for torchvision's custom ops"),
    C('parser.add_argument("--device", default="cuda"', "device_type", "replace", True,
      'parser.add_argument("--device", default="npu", type=str, help="device (Use npu or cpu Default: npu)")',
      "default device string; torch.device('cuda') + model.to() fails on an NPU host"),
    C("scaler = torch.cuda.amp.GradScaler() if args.amp else None", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler() if args.amp else None",
      "the CUDA GradScaler disables itself without CUDA, so fp16 NPU autocast would run without loss scaling"),
])

E("tsdet_engine", "engine.py", "explicit_replacement",
  "torchvision references/detection engine.py (train_one_epoch / evaluate)", [
    C("with torch.cuda.amp.autocast(enabled=scaler is not None):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=scaler is not None):",
      "CUDA autocast does not cover NPU tensors: --amp would silently train in fp32"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "only makes the logged model_time include device execution"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "with the guard ported, torch.cuda.synchronize() raises"),
])

E("tsdet_utils", "utils.py", "explicit_replacement",
  "torchvision references/detection utils.py (SmoothedValue, MetricLogger, init_distributed_mode)", [
    C('t = torch.tensor([self.count, self.total], dtype=torch.float64, device="cuda")', "device_type", "replace",
      True, 't = torch.tensor([self.count, self.total], dtype=torch.float64, device="npu")',
      "tensor handed to an HCCL all_reduce must be on the NPU; whether HCCL reduces float64 is unconfirmed "
      "(float32 is the fallback)"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "picks the log format with a 'max mem' field; unchanged, the extra memory= kwarg below is simply ignored"),
    C("if torch.cuda.is_available():  # same test as above", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():  # same test as above: log_msg has a memory field",
      "must match the test above: if only that one is ported, the else-branch formats a message containing "
      "{memory} without the kwarg and raises KeyError"),
    C("memory=torch.cuda.max_memory_allocated() / MB,", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB,",
      "returns 0 when CUDA was never initialised: wrong log value, no error"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()", "ZeroDivisionError under SLURM on an NPU host"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "bind each rank to its NPU before HCCL init"),
    C('args.dist_backend = "nccl"', "dist_backend", "replace", True, 'args.dist_backend = "hccl"',
      "NCCL does not exist on Ascend"),
])

E("tsdet_run", "scripts/train_tt100k.sh", "explicit_replacement",
  "launcher script of a TT100K detection repo (torchrun, CUDA_VISIBLE_DEVICES, nvidia-smi)", [
    C("=set -e", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN libraries must be on the library path before torch_npu is imported (unless the host profile already "
      "sources it)"),
    C("export CUDA_VISIBLE_DEVICES=${GPUS:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPUS:-0,1,2,3}",
      "card selection; CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime"),
    C('NGPU=$(echo "$CUDA_VISIBLE_DEVICES"', "env_var", "replace", True,
      "NGPU=$(echo \"$ASCEND_RT_VISIBLE_DEVICES\" | tr ',' '\\n' | wc -l)",
      "process count is derived from the variable; reading the old name after the rename gives 1 process"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total", "device_capability_check", "replace", False,
      "npu-smi info | tee \"$OUT/npus.txt\"",
      "nvidia-smi is absent on Ascend hosts, but without pipefail the pipeline status is tee's, so set -e does not "
      "stop the script; only the record is lost"),
])

E("tsdet_docker", "docker/Dockerfile", "explicit_replacement",
  "Dockerfile of a traffic-sign detection repo (pytorch/pytorch CUDA runtime base)", [
    C("FROM pytorch/pytorch:1.13.1-cuda11.6-cudnn8-runtime", "env_var", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "the CUDA runtime image has no CANN toolkit; base on a CANN image (exact image name/tag unconfirmed)"),
    C("RUN pip install --no-cache-dir -r requirements.txt pycocotools", "import_torch_npu", "npu_only_addition",
      True, "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10",
      "torch + matching torch_npu wheel (CANN 8.0.0 pairs with torch_npu 2.1.0.post10)"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "Ascend Docker Runtime mounts NPUs from ASCEND_VISIBLE_DEVICES; not needed when the container is started "
      "with explicit --device /dev/davinciN mounts (unconfirmed which launch is used)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "inert outside the NVIDIA container runtime"),
])

# ---------------------------------------------------------------------------------------------
# 6. ALPR video pipeline: YOLOv5 (torch.hub) + SORT + EasyOCR
# ---------------------------------------------------------------------------------------------
E("alpr_main", "main.py", "explicit_replacement",
  "automatic-number-plate-recognition tutorial pipeline main.py (YOLO + SORT + EasyOCR), yolov5 hub variant", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("DEVICE = 'cuda:0' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "DEVICE = 'npu:0' if torch.npu.is_available() else 'cpu'",
      "module-level device global used for both detectors; unchanged = silent CPU"),
    C("if args.log_mem and frame_nmr % 100 == 0 and torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if args.log_mem and frame_nmr % 100 == 0 and torch.npu.is_available():", "optional memory log"),
    C("torch.cuda.memory_allocated() / 2 ** 20", "torch_cuda_api", "replace", False,
      "print(f'frame {frame_nmr}: {torch.npu.memory_allocated() / 2 ** 20:.0f} MiB allocated, '",
      "returns 0 without CUDA initialised; log value only"),
])

E("alpr_util", "util.py", "explicit_replacement",
  "automatic-number-plate-recognition tutorial util.py (EasyOCR reader, plate-format rules, CSV)", [])

E("alpr_visualize", "visualize.py", "explicit_replacement",
  "automatic-number-plate-recognition tutorial visualize.py + add_missing_data interpolation", [])

E("alpr_requirements", "requirements.txt", "explicit_replacement",
  "ALPR pipeline requirements.txt (pinned CUDA-era torch 2.0.1)", [
    C("=easyocr==1.7.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "the NPU backend package itself"),
    C("=torch==2.0.1", "import_torch_npu", "replace", True, "torch==2.1.0",
      "torch_npu wheels must equal the torch version; 2.0.1 only has an EOL torch_npu on CANN 7.0"),
    C("=torchvision==0.15.2", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "torchvision 0.15.2 pins torch 2.0.1 and would conflict with torch 2.1.0"),
])
