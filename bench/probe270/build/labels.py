# Labels for probe270: few-shot / incremental object detection (TFA, DeFRCN, Meta R-CNN,
# maskrcnn-benchmark derivatives, mmfewshot, ORE) moving from CUDA GPUs to Ascend NPUs.
# Format: see bench/probe_build.py.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point: torch_npu must be imported before any NPU device string/API is used "
               "(mandatory before torch_npu 2.5.1, the versions these old torch pins map to; autoloaded afterwards)")
SET_ENV_NOTE = ("CANN environment must be sourced before torch_npu can load libascendcl/libhccl; marked not required "
                "because it is often done once in the shell profile / container ENV instead")

# --------------------------------------------------------------------------------------------
# TFA (few-shot-object-detection, detectron2-based)
# --------------------------------------------------------------------------------------------
E("tfa_launch", "fsdet/engine/launch.py", "explicit_replacement",
  "TFA / detectron2 v0.2 vendored multi-process launcher (mp.spawn + init_process_group)",
  [
      C('assert torch.cuda.is_available(), "cuda is not available', "torch_cuda_api", "replace", True,
        'assert torch.npu.is_available(), "npu is not available. Please check your installation."',
        "torch.cuda.is_available() is False on an NPU host, so every spawned worker dies on this assert"),
      C('backend="NCCL",', "dist_backend", "replace", True, 'backend="hccl",',
        "NCCL is not built into the CPU torch wheel used with torch_npu; collectives on NPU go through HCCL"),
      C("assert num_gpus_per_machine <= torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "assert num_gpus_per_machine <= torch.npu.device_count()",
        "torch.cuda.device_count() returns 0 without CUDA, so the assert fails for any --num-gpus >= 1"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(local_rank)",
        "binds each worker to its own card; torch.cuda.set_device raises on a CUDA-less build"),
  ])

E("tfa_defaults", "fsdet/config/defaults.py", "explicit_replacement",
  "TFA fsdet/config/defaults.py (detectron2-style yacs defaults with few-shot keys)",
  [
      C('_C.MODEL.DEVICE = "cuda"', "device_type", "replace", True, '_C.MODEL.DEVICE = "npu"',
        "default device for model, pixel mean/std and inputs; torch.device('cuda') tensors cannot be created on NPU"),
  ])

E("tfa_ckpt_surgery", "tools/ckpt_surgery.py", "explicit_replacement",
  "TFA tools/ckpt_surgery.py (randinit / remove / combine of the last-layer weights)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE + "; needed for the --gpu path"),
      C("new_weight = new_weight.cuda()", "tensor_to_device", "replace", True, "new_weight = new_weight.npu()",
        "--gpu path moves the new last-layer weights to the accelerator"),
      C("ckpt = torch.load(args.src1)", "tensor_to_device", "replace", True,
        'ckpt = torch.load(args.src1, map_location="cpu")',
        "base-training checkpoints saved by DetectionCheckpointer hold CUDA tensors (released TFA base models too); "
        "deserialising them without map_location fails when CUDA is unavailable"),
      C("ckpt2 = torch.load(args.src2)", "tensor_to_device", "replace", True,
        'ckpt2 = torch.load(args.src2, map_location="cpu")', "same as src1: novel-class checkpoint saved from GPU"),
  ])

E("tfa_train_net", "tools/train_net.py", "explicit_replacement",
  "TFA tools/train_net.py entry point (DefaultTrainer subclass + launch(--num-gpus))",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        IMPORT_NOTE + "; mp.spawn workers re-import this module so the import also reaches them"),
  ])

E("tfa_evaluator", "fsdet/evaluation/evaluator.py", "explicit_replacement",
  "TFA fsdet/evaluation/evaluator.py (inference_on_dataset timing) plus a throughput benchmark helper",
  [
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "guard is silently False on NPU: the sync is skipped and per-image compute time is under-reported (timing only)"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
        "inside the guard above; only affects the timing log"),
      C('def benchmark_inference_speed(model, data_loader, num_iters=200, device="cuda"):', "device_type", "replace", True,
        'def benchmark_inference_speed(model, data_loader, num_iters=200, device="npu"):',
        "default device is handed to the memory/sync calls below"),
      C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats(device)", "raises without CUDA"),
      C("=torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
        "unguarded sync raises without CUDA"),
      C("wait for the forward kernels", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize(device)  # wait for the forward kernels", "unguarded sync raises without CUDA"),
      C("peak_mb = torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", False,
        "peak_mb = torch.npu.max_memory_allocated(device) / 1024.0 / 1024.0",
        "returns 0 when CUDA was never initialised, so the report is silently wrong (logging only)"),
  ])

E("tfa_fast_rcnn", "fsdet/modeling/roi_heads/fast_rcnn.py", "explicit_replacement",
  "TFA fsdet/modeling/roi_heads/fast_rcnn.py (FastRCNNOutputs, CosineSimOutputLayers) - device-agnostic control file",
  [])

E("tfa_predictor", "demo/predictor.py", "explicit_replacement",
  "TFA / detectron2 demo/predictor.py (VisualizationDemo + AsyncPredictor)",
  [
      C("num_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "num_gpu = torch.npu.device_count()",
        "returns 0 on NPU, so --parallel silently runs a single CPU worker"),
      C('cfg.MODEL.DEVICE = "cuda:{}".format(gpuid)', "device_type", "replace", True,
        'cfg.MODEL.DEVICE = "npu:{}".format(gpuid) if num_gpus > 0 else "cpu"',
        "per-worker device string"),
  ])

E("tfa_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "TFA / detectron2 docker/Dockerfile (nvidia/cuda base, cu101 wheels, FORCE_CUDA build)",
  [
      C("FROM nvidia/cuda:10.1-cudnn7-devel-ubuntu18.04", "device_type", "replace", True,
        "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
        "base image must carry CANN (driver is mounted from the host); the CUDA image has none"),
      C("pip install --user torch==1.6.0+cu101", "import_torch_npu", "replace", True,
        "RUN pip install --user torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post17 --extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheels -> CPU torch + matching torch-npu (2.1.0.post17 pairs with CANN 8.3.RC1)"),
      C('ENV FORCE_CUDA="1"', "custom_cuda_extension", "replace", True, 'ENV FORCE_CUDA="0"',
        "forces detectron2's CUDAExtension build, which needs nvcc/CUDA_HOME that the CANN image lacks"),
      C('ARG TORCH_CUDA_ARCH_LIST="Kepler', "custom_cuda_extension", "removal", False, None,
        "CUDA arch list is meaningless without nvcc"),
      C('ENV TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST}"', "custom_cuda_extension", "removal", False, None,
        "goes with the ARG above"),
  ])

E("tfa_compose", "docker/docker-compose.yml", "explicit_replacement",
  "detectron2/TFA docker/docker-compose.yml with an NVIDIA device reservation",
  [
      C("- driver: nvidia", "device_type", "removal", True, None,
        "no nvidia container runtime on an Ascend host; replace the reservation with /dev/davinci*, /dev/davinci_manager, "
        "/dev/devmm_svm, /dev/hisi_hdc device mappings plus driver/npu-smi mounts (or Ascend Docker Runtime)"),
      C("=- gpu", "device_type", "removal", True, None, "part of the same NVIDIA GPU reservation block"),
      C("- NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "- ASCEND_VISIBLE_DEVICES=0-7",
        "ignored without the nvidia runtime (silent no-op); Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES"),
      C("- NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA runtime only; silent no-op on NPU"),
  ])

# --------------------------------------------------------------------------------------------
# DeFRCN
# --------------------------------------------------------------------------------------------
E("defrcn_pcb", "defrcn/evaluation/calibration_layer.py", "explicit_replacement",
  "DeFRCN defrcn/evaluation/calibration_layer.py (Prototypical Calibration Block)",
  [
      C("from torchvision.ops import roi_align", "unsupported_op_workaround", "npu_only_addition", False,
        "import torchvision_npu  # registers NPU kernels for torchvision roi_align / nms",
        "without torchvision_npu the torchvision ops (also used by ROIPooler) hit torch_npu's CPU fallback: correct but slow"),
      C("img = torch.from_numpy(img.transpose((2, 0, 1))).float().cuda()", "tensor_to_device", "replace", True,
        "img = torch.from_numpy(img.transpose((2, 0, 1))).float().to(self.device)",
        "hard-coded .cuda() next to the cfg-driven self.device"),
      C('mean = torch.tensor([0.406, 0.456, 0.485], device="cuda")', "device_type", "replace", True,
        'mean = torch.tensor([0.406, 0.456, 0.485], device=self.device).reshape((3, 1, 1))', "hard-coded cuda device"),
      C('std = torch.tensor([0.225, 0.224, 0.229], device="cuda")', "device_type", "replace", True,
        'std = torch.tensor([0.225, 0.224, 0.229], device=self.device).reshape((3, 1, 1))', "hard-coded cuda device"),
      C("payload = {int(k): v.cuda() for k, v in self.prototypes.items()}", "tensor_to_device", "replace", True,
        "payload = {int(k): v.npu() for k, v in self.prototypes.items()}",
        ".cuda() raises on NPU (keeping them on CPU would be the cleaner fix)"),
  ])

E("defrcn_rcnn", "defrcn/modeling/meta_arch/rcnn.py", "device_branch_or_abstraction",
  "DeFRCN defrcn/modeling/meta_arch/rcnn.py (GeneralizedRCNN with Gradient Decoupled Layers)",
  [
      C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "add_branch", True,
        'device = "npu" if torch.npu.is_available() else ("cuda" if torch.cuda.is_available() else "cpu")',
        "the GDL sanity check silently runs on CPU on an NPU host, so it checks the wrong device"),
  ])

E("defrcn_train_loop", "defrcn/engine/train_loop.py", "explicit_replacement",
  "DeFRCN / detectron2 engine/train_loop.py (SimpleTrainer + AMPTrainer)",
  [
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "silently False on NPU: max_mem_mb is just not logged"),
      C('"max_mem_mb", torch.cuda.max_memory_allocated()', "torch_cuda_api", "replace", False,
        '"max_mem_mb", torch.npu.max_memory_allocated() / 1024.0 / 1024.0, smoothing_hint=False',
        "logging only"),
      C("from torch.cuda.amp import GradScaler", "amp", "replace", False, "from torch.npu.amp import GradScaler",
        "torch.cuda.amp.GradScaler disables itself with a warning when CUDA is absent: fp32 training, no loss scaling"),
      C('assert torch.cuda.is_available(), "[AMPTrainer] CUDA is required for AMP training!"', "torch_cuda_api", "replace", True,
        'assert torch.npu.is_available(), "[AMPTrainer] NPU is required for AMP training!"',
        "fails every AMP step on NPU (SOLVER.AMP.ENABLED=True)"),
      C("from torch.cuda.amp import autocast", "amp", "replace", False, "from torch.npu.amp import autocast",
        "cuda autocast disables itself with a warning without CUDA; training silently runs in fp32 (perf/memory only)"),
  ])

E("defrcn_run_voc", "run_voc.sh", "explicit_replacement",
  "DeFRCN run_voc.sh (base training, surgery, 10x repeated fine-tuning sweeps)",
  [
      C("export CUDA_VISIBLE_DEVICES=${GPUS}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${GPUS}",
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so GPUS=4,5,6,7 would silently run on cards 0-3"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
        "NCCL variable is a silent no-op with HCCL; CANN log level is the closest knob"),
      C("export OMP_NUM_THREADS=4", "env_var", "npu_only_addition", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE),
      C("nvidia-smi --query-gpu=index,name,memory.used,utilization.gpu --format=csv", "device_type", "replace", False,
        "npu-smi info", "nvidia-smi does not exist on the NPU host; end-of-run report only"),
  ])

E("defrcn_requirements", "requirements.txt", "explicit_replacement",
  "DeFRCN-style requirements.txt pinning CUDA 11.3 torch and the detectron2 cu113 wheel",
  [
      C("# Install torch first", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post13",
        "the torch-npu pin that pairs with torch 2.1.0 (CANN 8.2.RC1)"),
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "device_type", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "x86 NPU hosts install CPU torch from the cpu index; the cu113 index has no torch 2.1 wheels anyway"),
      C("torch==1.10.1+cu113", "device_type", "replace", True, "torch==2.1.0",
        "CUDA build of torch; torch_npu needs the matching plain/CPU torch"),
      C("torchvision==0.11.2+cu113", "device_type", "replace", True, "torchvision==0.16.0",
        "CUDA build; must match torch 2.1.0"),
      C("-f https://dl.fbaipublicfiles.com/detectron2/wheels/cu113/torch1.10/index.html", "custom_cuda_extension", "removal", False, None,
        "prebuilt detectron2 wheels are compiled against CUDA 11.3 / torch 1.10"),
      C("=detectron2==0.6", "custom_cuda_extension", "replace", True,
        "detectron2 @ git+https://github.com/facebookresearch/detectron2.git@v0.6",
        "must be built from source against torch 2.1 (CPU ops only; FORCE_CUDA unset)"),
      C("pynvml>=11.0.0", "device_capability_check", "removal", False, None,
        "NVML has no NPU equivalent (use npu-smi / torch.npu.mem_get_info); installs fine, fails only if called"),
  ])

E("defrcn_main", "main.py", "explicit_replacement",
  "DeFRCN main.py (setup/launch entry point) with an early GPU-count check",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("from detectron2.engine import launch", "dist_backend", "replace", True,
        "from defrcn.engine.launch import launch  # copy of detectron2's launcher using hccl + torch.npu.set_device",
        "detectron2's launch() asserts torch.cuda.is_available() and hard-codes backend='NCCL' in its workers"),
      C("available = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "available = torch.npu.device_count()", "returns 0 on NPU, so the check raises for any --num-gpus >= 1"),
      C("torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", True,
        'print("Using {} x {}".format(args.num_gpus, torch.npu.get_device_name(0)))', "raises without CUDA"),
  ])

# --------------------------------------------------------------------------------------------
# Meta R-CNN (faster-rcnn.pytorch based)
# --------------------------------------------------------------------------------------------
E("metarcnn_trainval", "trainval_net.py", "explicit_replacement",
  "Meta R-CNN trainval_net.py (faster-rcnn.pytorch style, --cuda / --mGPUs, PRN meta training)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.manual_seed_all(cfg.RNG_SEED)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(cfg.RNG_SEED)",
        "lazily queued and never applied without CUDA (silent no-op); NPU seeding via torch.manual_seed above is "
        "unconfirmed in the knowledge base"),
      C("if torch.cuda.is_available() and not args.cuda:", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available() and not args.cuda:", "only drives a warning print"),
      C("cfg.USE_GPU_NMS = args.cuda", "custom_cuda_extension", "replace", True,
        "cfg.USE_GPU_NMS = False  # nms_gpu is an nvcc-built kernel; or route nms_wrapper to torchvision_npu nms",
        "with --cuda the nms wrapper calls the CUDA-compiled nms kernel, which does not exist on NPU"),
      C("pin_memory=True)", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu")',
        "pinning is skipped with a warning when CUDA is absent; perf only"),
      C("im_data = im_data.cuda()", "tensor_to_device", "replace", True, "im_data = im_data.npu()", "tensor holder on device"),
      C("im_info = im_info.cuda()", "tensor_to_device", "replace", True, "im_info = im_info.npu()", "tensor holder on device"),
      C("num_boxes = num_boxes.cuda()", "tensor_to_device", "replace", True, "num_boxes = num_boxes.npu()", "tensor holder on device"),
      C("gt_boxes = gt_boxes.cuda()", "tensor_to_device", "replace", True, "gt_boxes = gt_boxes.npu()", "tensor holder on device"),
      C("checkpoint = torch.load(load_name)", "tensor_to_device", "replace", True,
        'checkpoint = torch.load(load_name, map_location="cpu")',
        "phase-2 fine-tuning loads the phase-1 model saved from CUDA (incl. released base models)"),
      C("fasterRCNN = nn.DataParallel(fasterRCNN)", "distributed_framework", "replace", True,
        "fasterRCNN = nn.parallel.DistributedDataParallel(fasterRCNN, device_ids=[local_rank])",
        "torch.nn.DataParallel is not supported on NPU (Ascend API list); --mGPUs needs DDP with one process per card"),
      C("=fasterRCNN.cuda()", "tensor_to_device", "replace", True, "fasterRCNN.npu()", "model to device"),
      C("prndata = prndata.squeeze(0).cuda()", "tensor_to_device", "replace", True,
        "prndata = prndata.squeeze(0).npu()", "PRN support images to device"),
      C("prncls = prncls.squeeze(0).cuda()", "tensor_to_device", "replace", True,
        "prncls = prncls.squeeze(0).npu()", "PRN support labels to device"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA; only affects memory headroom"),
      C("prndata = Variable(prndata.squeeze(0)).cuda()", "tensor_to_device", "replace", True,
        "prndata = Variable(prndata.squeeze(0)).npu()", "support images for the mean class attentions"),
      C("prncls = Variable(prncls.squeeze(0)).cuda()", "tensor_to_device", "replace", True,
        "prncls = Variable(prncls.squeeze(0)).npu()", "support labels for the mean class attentions"),
  ])

E("metarcnn_test", "test_metarcnn.py", "explicit_replacement",
  "Meta R-CNN test script (faster-rcnn.pytorch test_net.py with mean class attentions)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("if torch.cuda.is_available() and not args.cuda:", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available() and not args.cuda:", "only drives a warning print"),
      C("checkpoint = torch.load(load_name)", "tensor_to_device", "replace", True,
        'checkpoint = torch.load(load_name, map_location="cpu")',
        "evaluating released / GPU-trained Meta R-CNN checkpoints fails to deserialise CUDA tensors"),
      C("im_data = im_data.cuda()", "tensor_to_device", "replace", True, "im_data = im_data.npu()", "tensor holder on device"),
      C("im_info = im_info.cuda()", "tensor_to_device", "replace", True, "im_info = im_info.npu()", "tensor holder on device"),
      C("num_boxes = num_boxes.cuda()", "tensor_to_device", "replace", True, "num_boxes = num_boxes.npu()", "tensor holder on device"),
      C("gt_boxes = gt_boxes.cuda()", "tensor_to_device", "replace", True, "gt_boxes = gt_boxes.npu()", "tensor holder on device"),
      C("=fasterRCNN.cuda()", "tensor_to_device", "replace", True, "fasterRCNN.npu()", "model to device"),
      C("pin_memory=True)", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu")',
        "pinning silently skipped without CUDA; perf only"),
      C("mean_class_attentions = pickle.load(f)", "tensor_to_device", "replace", False,
        "mean_class_attentions = torch.load(f, map_location='cpu')  # pickles hold tensors",
        "only fails for attention pickles produced on a CUDA machine; ones written by the ported trainval load fine"),
      C("mean_class_attentions = {k: v.cuda() for k, v in mean_class_attentions.items()}", "tensor_to_device", "replace", True,
        "mean_class_attentions = {k: v.npu() for k, v in mean_class_attentions.items()}", "attention vectors to device"),
      C("stds = torch.FloatTensor(cfg.TRAIN.BBOX_NORMALIZE_STDS).cuda()", "tensor_to_device", "replace", True,
        "stds = torch.FloatTensor(cfg.TRAIN.BBOX_NORMALIZE_STDS).npu()", "normalisation constants to device"),
      C("means = torch.FloatTensor(cfg.TRAIN.BBOX_NORMALIZE_MEANS).cuda()", "tensor_to_device", "replace", True,
        "means = torch.FloatTensor(cfg.TRAIN.BBOX_NORMALIZE_MEANS).npu()", "normalisation constants to device"),
      C("box_deltas = box_deltas.view(-1, 4) * torch.FloatTensor(cfg.TRAIN.BBOX_NORMALIZE_STDS).cuda() \\", "tensor_to_device", "replace", True,
        "box_deltas = box_deltas.view(-1, 4) * torch.FloatTensor(cfg.TRAIN.BBOX_NORMALIZE_STDS).npu() \\",
        "normalisation constants to device"),
      C("+ torch.FloatTensor(cfg.TRAIN.BBOX_NORMALIZE_MEANS).cuda()", "tensor_to_device", "replace", True,
        "+ torch.FloatTensor(cfg.TRAIN.BBOX_NORMALIZE_MEANS).npu()", "normalisation constants to device"),
      C("keep = nms(cls_dets, cfg.TEST.NMS, force_cpu=not cfg.USE_GPU_NMS)", "custom_cuda_extension", "replace", True,
        "keep = torchvision.ops.nms(cls_dets[:, :4], cls_dets[:, 4], cfg.TEST.NMS)  # NPU kernel via torchvision_npu",
        "cfg.USE_GPU_NMS defaults to True, so this calls the nvcc-built nms kernel that cannot exist on NPU"),
  ])

E("metarcnn_make_sh", "lib/make.sh", "kernel_rewrite",
  "faster-rcnn.pytorch / Meta R-CNN lib/make.sh building nms, roi_pooling, roi_align, roi_crop CUDA kernels with nvcc",
  [
      C("CUDA_PATH=${CUDA_PATH:-/usr/local/cuda/}", "env_var", "replace", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE + "; CUDA_PATH itself is unused once the nvcc steps go"),
      C("export PATH=${CUDA_PATH}/bin:$PATH", "env_var", "removal", False, None, "CUDA toolkit path; harmless but dead on NPU"),
      C("export LD_LIBRARY_PATH=${CUDA_PATH}/lib64:$LD_LIBRARY_PATH", "env_var", "removal", False, None,
        "CUDA libraries; harmless but dead on NPU"),
      C('CUDA_ARCH="-gencode arch=compute_30,code=sm_30', "custom_cuda_extension", "removal", False, None,
        "SM arch flags only feed nvcc"),
      C("nvcc -c -o nms_cuda_kernel.cu.o nms_cuda_kernel.cu", "custom_cuda_extension", "removal", True, None,
        "no nvcc on NPU; NMS comes from torchvision_npu nms or torch_npu.npu_nms_v4 instead"),
      C("nvcc -c -o roi_pooling.cu.o roi_pooling_kernel.cu", "custom_cuda_extension", "removal", True, None,
        "no nvcc; RoI pooling from torchvision_npu roi_pool"),
      C("nvcc -c -o roi_align_kernel.cu.o roi_align_kernel.cu", "custom_cuda_extension", "removal", True, None,
        "no nvcc; RoI align from torch_npu.npu_roi_align / torchvision_npu roi_align"),
      C("nvcc -c -o roi_crop_cuda_kernel.cu.o roi_crop_cuda_kernel.cu", "custom_cuda_extension", "removal", True, None,
        "no nvcc; roi_crop is bilinear grid sampling, expressible with F.grid_sample (grid_sampler_2d has an NPU kernel)"),
  ])

E("metarcnn_env", "environment.yml", "explicit_replacement",
  "Meta R-CNN era conda environment.yml (cudatoolkit 9.0, pytorch 0.3.1 CUDA build)",
  [
      C("- cudatoolkit=9.0", "device_type", "removal", False, None,
        "dead weight on x86 and unresolvable on aarch64 NPU hosts; CUDA runtime is not used by torch_npu"),
      C("- cudnn=7.1.2", "device_type", "removal", False, None, "same as cudatoolkit"),
      C("- pytorch=0.3.1=py36_cuda9.0.176_cudnn7.0.5_2", "device_type", "replace", True, "- pytorch=2.1.0",
        "CUDA build string; torch_npu exists only for torch >= 1.5 and needs a non-CUDA build"),
      C("- tensorboardX==1.2", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post13",
        "torch-npu pin in the pip section"),
      C("- gpustat", "device_capability_check", "removal", False, None, "NVML/nvidia-smi based monitor; nothing to query on NPU"),
  ])

E("metarcnn_model", "lib/model/faster_rcnn/faster_rcnn.py", "kernel_rewrite",
  "Meta R-CNN lib/model/faster_rcnn/faster_rcnn.py (_fasterRCNN with PRN, CFFI CUDA RoI ops)",
  [
      C("import torchvision.models as models", "unsupported_op_workaround", "npu_only_addition", False,
        "import torchvision_npu  # NPU kernels for torchvision roi_align / roi_pool",
        "once the RoI ops come from torchvision.ops, torchvision_npu supplies NPU kernels; without it they run "
        "through torch_npu's CPU fallback (correct, slow)"),
      C("from model.roi_pooling.modules.roi_pool import _RoIPooling", "custom_cuda_extension", "replace", True,
        "from torchvision.ops import RoIPool  # NPU kernel via torchvision_npu",
        "CFFI wrapper around the nvcc-built roi_pooling kernel; import fails without it"),
      C("from model.roi_crop.modules.roi_crop import _RoICrop", "custom_cuda_extension", "replace", True,
        "from model.roi_crop.grid_sample import GridSampleCrop as _RoICrop  # F.grid_sample based",
        "CFFI wrapper around the nvcc-built roi_crop kernel"),
      C("from model.roi_align.modules.roi_align import RoIAlignAvg", "custom_cuda_extension", "replace", True,
        "from torchvision.ops import RoIAlign  # NPU kernel via torchvision_npu (or torch_npu.npu_roi_align)",
        "CFFI wrapper around the nvcc-built roi_align kernel"),
      C("self.RCNN_roi_pool = _RoIPooling(cfg.POOLING_SIZE, cfg.POOLING_SIZE, 1.0 / 16.0)", "custom_cuda_extension", "replace", True,
        "self.RCNN_roi_pool = RoIPool((cfg.POOLING_SIZE, cfg.POOLING_SIZE), 1.0 / 16.0)", "call site of the replaced op"),
      C("self.RCNN_roi_align = RoIAlignAvg(cfg.POOLING_SIZE, cfg.POOLING_SIZE, 1.0 / 16.0)", "custom_cuda_extension", "replace", True,
        "self.RCNN_roi_align = RoIAlign((cfg.POOLING_SIZE, cfg.POOLING_SIZE), 1.0 / 16.0, sampling_ratio=2)",
        "call site of the replaced op (RoIAlignAvg = align at size+1 then 2x2 avg-pool; check accuracy after swapping)"),
      C("zero = Variable(torch.FloatTensor([0]).cuda())", "tensor_to_device", "replace", True,
        "zero = Variable(torch.FloatTensor([0]).npu())", ".cuda() raises on NPU even though the value is unused"),
  ])

# --------------------------------------------------------------------------------------------
# maskrcnn-benchmark derivatives (FsDet / Meta R-CNN ports, Faster ILOD)
# --------------------------------------------------------------------------------------------
E("mrcnn_roi_align", "maskrcnn_benchmark/layers/roi_align.py", "kernel_rewrite",
  "maskrcnn-benchmark layers/roi_align.py (autograd Function over the compiled _C extension, apex amp decorator)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "the rewritten forward/backward call torch_npu.npu_roi_align / npu_roi_alignbk"),
      C("from maskrcnn_benchmark import _C", "custom_cuda_extension", "removal", True, None,
        "on NPU _C is CPU-only: its roi_align dispatcher sends non-CUDA tensors to the CPU kernel, which would read device memory"),
      C("from apex import amp", "amp", "replace", False, "from torch.npu.amp import custom_fwd",
        "unchanged if Ascend's patched apex is installed; replace when moving to native NPU AMP"),
      C("output = _C.roi_align_forward(", "custom_cuda_extension", "replace", True,
        "output = torch_npu.npu_roi_align(input, roi, spatial_scale, output_size[0], output_size[1], sampling_ratio, 0)",
        "npu_roi_align(self, rois, spatial_scale, pooled_height, pooled_width, sample_num, roi_end_mode)"),
      C("grad_input = _C.roi_align_backward(", "custom_cuda_extension", "replace", True,
        "grad_input = torch_npu.npu_roi_alignbk(grad_output, rois, [bs, ch, h, w], output_size[1], output_size[0], spatial_scale, sampling_ratio)",
        "npu_roi_alignbk(self, rois, xdiff_shape, pooled_width, pooled_height, spatial_scale, sample_num)"),
      C("@amp.float_function", "amp", "replace", False, "@custom_fwd(cast_inputs=torch.float32)",
        "keeps RoIAlign in fp32 under autocast; only matters once AMP is on"),
  ])

E("mrcnn_setup", "setup.py", "kernel_rewrite",
  "maskrcnn-benchmark setup.py (CppExtension / CUDAExtension with FORCE_CUDA)",
  [
      C('if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1":',
        "custom_cuda_extension", "add_branch", False,
        'if os.getenv("FORCE_NPU", "0") == "1":  # NpuExtension from torch_npu.utils.cpp_extension, sources += source_npu',
        "on NPU the condition is False and a CPU-only _C builds fine; an NpuExtension branch is needed only if "
        "AscendC kernels are written instead of calling torch_npu ops"),
  ])

E("mrcnn_comm", "maskrcnn_benchmark/utils/comm.py", "explicit_replacement",
  "maskrcnn-benchmark utils/comm.py (pickle-over-NCCL all_gather) plus a support-set broadcast helper",
  [
      C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
        'tensor = torch.ByteTensor(storage).to("npu")', "HCCL all_gather needs NPU tensors"),
      C('local_size = torch.LongTensor([tensor.numel()]).to("cuda")', "tensor_to_device", "replace", True,
        'local_size = torch.LongTensor([tensor.numel()]).to("npu")', "HCCL all_gather needs NPU tensors"),
      C('size_list = [torch.LongTensor([0]).to("cuda") for _ in range(world_size)]', "tensor_to_device", "replace", True,
        'size_list = [torch.LongTensor([0]).to("npu") for _ in range(world_size)]', "HCCL all_gather needs NPU tensors"),
      C('tensor_list.append(torch.ByteTensor(size=(max_size,)).to("cuda"))', "tensor_to_device", "replace", True,
        'tensor_list.append(torch.ByteTensor(size=(max_size,)).to("npu"))', "receive buffers on NPU"),
      C('padding = torch.ByteTensor(size=(max_size - local_size,)).to("cuda")', "tensor_to_device", "replace", True,
        'padding = torch.ByteTensor(size=(max_size - local_size,)).to("npu")', "padding on NPU"),
      C('device = torch.device("cuda", torch.cuda.current_device())', "device_type", "replace", True,
        'device = torch.device("npu", torch.npu.current_device())',
        "device for the broadcast payload; current_device raises without CUDA"),
  ])

E("mrcnn_trainer", "maskrcnn_benchmark/engine/trainer.py", "explicit_replacement",
  "maskrcnn-benchmark engine/trainer.py (do_train with apex amp.scale_loss and periodic validation)",
  [
      C("from apex import amp", "amp", "replace", False, "from torch.npu.amp import GradScaler",
        "unchanged if Ascend's patched apex (amp O1/O2) is installed; replace when switching to native NPU AMP"),
      C("with amp.scale_loss(losses, optimizer) as scaled_losses:", "amp", "replace", False,
        "scaler.scale(losses).backward()",
        "same apex-vs-native choice as the import; apex scale_loss is a pass-through when amp was not initialised"),
      C("memory=torch.cuda.max_memory_allocated() / 1024.0 / 1024.0,", "torch_cuda_api", "replace", False,
        "memory=torch.npu.max_memory_allocated() / 1024.0 / 1024.0,", "silently logs 0 MB on NPU"),
      C("memory=torch.cuda.max_memory_allocated(device) / 1024.0 / 1024.0,", "torch_cuda_api", "replace", False,
        "memory=torch.npu.max_memory_allocated(device) / 1024.0 / 1024.0,", "silently logs 0 MB on NPU"),
  ])

E("filod_train_incremental", "tools/train_incremental.py", "explicit_replacement",
  "Faster ILOD tools/train_incremental.py (source/target distillation on maskrcnn-benchmark)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("filter = torch.zeros(current_source_rpn_objectness.size()).to('cuda')", "tensor_to_device", "replace", True,
        "filter = torch.zeros(current_source_rpn_objectness.size()).to(current_source_rpn_objectness.device)",
        "hard-coded cuda in the RPN distillation loss"),
      C("torch.cuda.empty_cache()  # Release unoccupied memory", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()  # Release unoccupied memory", "silent no-op without CUDA (and slow when ported)"),
      C("final_rpn_loss.to('cuda')", "tensor_to_device", "removal", True, None,
        "result is discarded (a no-op on GPU) but .to('cuda') raises on NPU; just delete it"),
      C("filter = torch.zeros(modified_target_scores.size()).to('cuda')", "tensor_to_device", "replace", True,
        "filter = torch.zeros(modified_target_scores.size()).to(modified_target_scores.device)",
        "hard-coded cuda in the RCNN distillation loss"),
      C("torch.cuda.empty_cache()  # release the memory held by the filter", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()  # release the memory held by the filter", "silent no-op without CUDA"),
      C("memory=torch.cuda.max_memory_allocated() / 1024.0 / 1024.0))", "torch_cuda_api", "replace", False,
        "memory=torch.npu.max_memory_allocated() / 1024.0 / 1024.0))", "silently logs 0 MB on NPU"),
      C("torch.cuda.empty_cache()  # TODO check if it helps", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()  # TODO check if it helps", "silent no-op without CUDA"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
      C('torch.distributed.init_process_group(backend="nccl", init_method="env://")', "dist_backend", "replace", True,
        'torch.distributed.init_process_group(backend="hccl", init_method="env://")', "no NCCL on NPU"),
  ])

# --------------------------------------------------------------------------------------------
# mmfewshot
# --------------------------------------------------------------------------------------------
E("mmfs_apis_train", "mmfewshot/detection/apis/train.py", "explicit_replacement",
  "mmfewshot detection/apis/train.py (init_random_seed, MMDataParallel / MMDistributedDataParallel, query-support eval hooks)",
  [
      C("def init_random_seed(seed=None, device='cuda'):", "device_type", "replace", True,
        "def init_random_seed(seed=None, device='npu'):",
        "the seed tensor is broadcast over HCCL in multi-card runs and must live on the NPU"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "silent no-op without CUDA; whether torch.manual_seed above already seeds the NPU is unconfirmed"),
      C("model = MMDistributedDataParallel(", "distributed_framework", "replace", True,
        "model = NPUDistributedDataParallel(  # mmcv.device.npu (class name unconfirmed in knowledge)",
        "mmcv 1.x MMDistributedDataParallel scatters inputs with CUDA streams (from mmcv source, not in the knowledge base)"),
      C("model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),", "model to the local NPU before DDP wrapping"),
      C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
        "device_ids=[torch.npu.current_device()],", "raises without CUDA"),
      C("model = MMDataParallel(model, device_ids=cfg.gpu_ids)", "distributed_framework", "replace", True,
        "model = NPUDataParallel(model.npu(), device_ids=cfg.gpu_ids)  # mmcv.device.npu (unconfirmed)",
        "MMDataParallel subclasses torch DataParallel (unsupported on NPU); without CUDA it falls back to CPU silently"),
  ])

E("mmfs_apis_test", "mmfewshot/detection/apis/test.py", "explicit_replacement",
  "mmfewshot detection/apis/test.py (single/multi-gpu test, collect_results_cpu/gpu, model_init)",
  [
      C("=device='cuda')", "device_type", "replace", True, "device='npu')",
        "tmpdir name is broadcast over HCCL, so the buffer must be on NPU"),
      C("bytearray(tmpdir.encode()), dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
        "bytearray(tmpdir.encode()), dtype=torch.uint8, device='npu')", "same broadcast buffer"),
      C("bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
        "bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='npu')", "gpu_collect path all_gathers these bytes"),
      C("shape_tensor = torch.tensor(part_tensor.shape, device='cuda')", "device_type", "replace", True,
        "shape_tensor = torch.tensor(part_tensor.shape, device='npu')", "all_gather of shapes over HCCL"),
      C("part_send = torch.zeros(shape_max, dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
        "part_send = torch.zeros(shape_max, dtype=torch.uint8, device='npu')", "padded send buffer"),
  ])

E("mmfs_inference", "mmfewshot/detection/apis/inference.py", "device_branch_or_abstraction",
  "mmfewshot detection/apis/inference.py (init_detector, inference_detector, process_support_images)",
  [
      C("device: str = 'cuda:0',", "device_type", "replace", True, "device: str = 'npu:0',",
        "default used by the demo scripts"),
      C("if next(model.parameters()).is_cuda:", "device_type", "add_branch", True,
        "if next(model.parameters()).is_cuda or next(model.parameters()).is_npu:",
        "is_cuda is False for an NPU model, so the inputs stay on CPU and the forward hits a device mismatch"),
      C("if device.type == 'cuda':", "device_type", "add_branch", True, "if device.type in ('cuda', 'npu'):",
        "same for the support images in process_support_images"),
  ])

E("mmfs_runtime_cfg", "configs/detection/_base_/default_runtime.py", "explicit_replacement",
  "mmfewshot configs/detection/_base_/default_runtime.py",
  [
      C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True, "dist_params = dict(backend='hccl')",
        "passed straight to init_dist / init_process_group"),
  ])

E("mmfs_dist_train", "tools/detection/dist_train.sh", "explicit_replacement",
  "mmfewshot tools/detection/dist_train.sh (torch.distributed.launch wrapper) with NCCL/NIC exports",
  [
      C('MASTER_ADDR=${MASTER_ADDR:-"127.0.0.1"}', "env_var", "npu_only_addition", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE),
      C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
        'export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-"0,1,2,3,4,5,6,7"}',
        "card pinning is silently ignored by the Ascend runtime"),
      C("export NCCL_SOCKET_IFNAME=", "env_var", "replace", False,
        "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
        "NCCL variable is a silent no-op; HCCL picks the host NIC itself unless told (matters for multi-node only)"),
      C("export NCCL_IB_DISABLE=", "env_var", "removal", False, None,
        "no HCCL counterpart (HCCL uses the NPU's own RoCE ports); silent no-op"),
  ])

E("mmfs_train_tool", "tools/detection/train.py", "explicit_replacement",
  "mmfewshot tools/detection/train.py (--gpus/--gpu-ids, init_dist, seed broadcast)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("init_dist(args.launcher, **cfg.dist_params)", "distributed_framework", "replace", True,
        "torch.npu.set_device(int(os.environ['LOCAL_RANK'])); dist.init_process_group(**cfg.dist_params)",
        "mmcv 1.x _init_dist_pytorch does torch.cuda.set_device(rank % torch.cuda.device_count()) - division by zero on NPU "
        "(from mmcv source, not in the knowledge base)"),
      C("seed_tensor = torch.tensor(seed, dtype=torch.int32).cuda()", "tensor_to_device", "replace", True,
        "seed_tensor = torch.tensor(seed, dtype=torch.int32).npu()", "broadcast over HCCL needs an NPU tensor"),
  ])

# --------------------------------------------------------------------------------------------
# ORE (open-world / class-incremental detection on detectron2)
# --------------------------------------------------------------------------------------------
E("ore_roi_heads", "detectron2/modeling/roi_heads/ore_heads.py", "explicit_replacement",
  "ORE (Towards Open World Object Detection) ROI heads: feature store, contrastive clustering, energy-based unknowns",
  [
      C("return torch.cuda.is_available() and torch.cuda.device_count() > 0", "torch_cuda_api", "replace", False,
        "return torch.npu.is_available() and torch.npu.device_count() > 0",
        "only feeds the log line below"),
      C("self.feature_store = torch.load(self.feature_store_save_loc)", "tensor_to_device", "replace", False,
        "self.feature_store = torch.load(self.feature_store_save_loc, map_location='cpu')",
        "fails only for a feature store written by a CUDA run of the previous task; NPU-written stores load fine"),
      C("distances = torch.cdist(fg_features, torch.stack(all_means).cuda(), p=self.margin)", "tensor_to_device", "replace", True,
        "distances = torch.cdist(fg_features, torch.stack(all_means).to(fg_features.device), p=self.margin)",
        "class means moved with a hard-coded .cuda()"),
      C("loss = self.hingeloss(distances, torch.tensor(labels).reshape((-1, self.num_classes + 1)).cuda())", "tensor_to_device", "replace", True,
        "loss = self.hingeloss(distances, torch.tensor(labels).reshape((-1, self.num_classes + 1)).to(distances.device))",
        "hinge labels moved with a hard-coded .cuda()"),
      C('device = "cuda" if _cuda_available() else "cpu"', "device_type", "replace", False,
        'device = "npu" if _cuda_available() else "cpu"', "only logged; the Weibull scoring runs on CPU anyway"),
  ])
