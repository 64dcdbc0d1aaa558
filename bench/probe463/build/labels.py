"""Labels for probe463 (multi-view 3-D human pose / motion capture, CUDA -> Ascend NPU).

One entry per file under files/<id>/upstream/<path>; one label per line a careful porter would edit
for an explicit torch_npu port (torch.npu.*, 'npu', hccl; no transfer_to_npu).
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: explicit `import torch_npu` next to `import torch`; not strictly required since "
               "torch_npu 2.5.1 autoloads the device backend, so required=False")

# ----------------------------------------------------------------------------------------------------------------
# VoxelPose (microsoft/voxelpose-pytorch)
# ----------------------------------------------------------------------------------------------------------------
E("vp_train_3d", "run/train_3d.py", "explicit_replacement",
  "microsoft/voxelpose-pytorch run/train_3d.py (DataParallel training entry)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NOTE),
    C("print('=> Loading data ..')", "torch_cuda_api", "npu_only_addition", False,
      "torch.npu.set_device(gpus[0])",
      "bind the process to the first listed NPU before HCCL init; only matters when GPUS does not start at 0 "
      "(default config starts at 0), so required=False"),
    C("print('=> Constructing models ..')", "dist_backend", "npu_only_addition", True,
      "torch.distributed.init_process_group(backend='hccl', init_method='tcp://127.0.0.1:23456', world_size=1, rank=0)",
      "DataParallel is replaced by (single-process) DDP below, which needs an HCCL process group"),
    C("model = torch.nn.DataParallel(model, device_ids=gpus).cuda()", "distributed_framework", "replace", True,
      "model = torch.nn.parallel.DistributedDataParallel(model.to(f'npu:{gpus[0]}'), device_ids=[gpus[0]])",
      "torch.nn.DataParallel is unsupported on Ascend (mstt: use DDP); DDP keeps the `.module` accessors used all "
      "over VoxelPose and, like DataParallel's scatter, moves the nested views/meta inputs to device_ids[0]"),
])

E("vp_validate_3d", "run/validate_3d.py", "explicit_replacement",
  "microsoft/voxelpose-pytorch run/validate_3d.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda')", "device_type", "replace", False, "device = torch.device('npu')",
      "dead variable (never used below); constructing a cuda torch.device does not touch the driver"),
    C("print('=> Constructing models ..')", "dist_backend", "npu_only_addition", True,
      "torch.distributed.init_process_group(backend='hccl', init_method='tcp://127.0.0.1:23456', world_size=1, rank=0)",
      "same DataParallel->DDP port as train_3d.py; validate_3d() relies on the wrapper moving meta dicts to the device"),
    C("model = torch.nn.DataParallel(model, device_ids=gpus).cuda()", "distributed_framework", "replace", True,
      "model = torch.nn.parallel.DistributedDataParallel(model.to(f'npu:{gpus[0]}'), device_ids=[gpus[0]])",
      "torch.nn.DataParallel is unsupported on Ascend; DDP keeps model.module"),
    C("model.module.load_state_dict(torch.load(test_model_file))", "tensor_to_device", "replace", False,
      "model.module.load_state_dict(torch.load(test_model_file, map_location='cpu'))",
      "released model_best.pth.tar files were written on GPUs; if they hold CUDA storages torch.load fails on a host "
      "without CUDA. Unconfirmed what the released files contain, so required=False"),
])

E("vp_function", "lib/core/function.py", "explicit_replacement",
  "microsoft/voxelpose-pytorch lib/core/function.py (train_3d / validate_3d loops)", [
    C("device=torch.device('cuda'), dtype=torch.float):", "device_type", "replace", False,
      "def train_3d(config, model, optimizer, loader, epoch, output_dir, writer_dict, device=torch.device('npu'), dtype=torch.float):",
      "unused default argument (inputs are moved by the DDP wrapper)"),
    C("=gpu_memory_usage = torch.cuda.memory_allocated(0)", "torch_cuda_api", "replace", False,
      "gpu_memory_usage = torch.npu.memory_allocated(0)",
      "log-only: without CUDA initialised torch.cuda.memory_allocated returns 0 instead of failing"),
    C("memory_allocated(0)  # bytes", "torch_cuda_api", "replace", False,
      "gpu_memory_usage = torch.npu.memory_allocated(0)  # bytes", "log-only, as above"),
])

E("vp_project_layer", "lib/models/project_layer.py", "device_branch_or_abstraction",
  "microsoft/voxelpose-pytorch lib/models/project_layer.py (heatmap -> voxel projection with grid_sample)", [])

E("vp_cameras", "lib/utils/cameras.py", "device_branch_or_abstraction",
  "microsoft/voxelpose-pytorch lib/utils/cameras.py (radial-distortion projection in torch)", [])

E("vp_posenet", "lib/models/multi_person_posenet.py", "explicit_replacement",
  "microsoft/voxelpose-pytorch lib/models/multi_person_posenet.py", [
    C("criterion = PerJointMSELoss().cuda()", "tensor_to_device", "replace", False,
      "criterion = PerJointMSELoss().npu()",
      "loss module has no parameters or buffers, so Module.cuda() moves nothing and does not fail; edited for hygiene"),
    C("criterion_cord = PerJointL1Loss().cuda()", "tensor_to_device", "replace", False,
      "criterion_cord = PerJointL1Loss().npu()", "parameter-free loss module; .cuda() is a no-op"),
])

E("vp_utils", "lib/utils/utils.py", "explicit_replacement",
  "microsoft/voxelpose-pytorch lib/utils/utils.py (logger, checkpoints, backbone loading)", [
    C("pretrained_state_dict = torch.load(pretrained_file)", "tensor_to_device", "replace", False,
      "pretrained_state_dict = torch.load(pretrained_file, map_location='cpu')",
      "the 2-D backbone weights (pose_resnet50_panoptic.pth.tar) come from a GPU run; map to CPU before copying into "
      "the NPU model. Unconfirmed that the file holds CUDA storages, so required=False"),
])

E("vp_cfg_yaml", "configs/panoptic/resnet50/prn64_cpn80x80x20_960x512_cam5.yaml", "explicit_replacement",
  "microsoft/voxelpose-pytorch configs/panoptic/resnet50/*.yaml", [])

E("vp_requirements", "requirements.txt", "explicit_replacement",
  "microsoft/voxelpose-pytorch requirements.txt", [])

# ----------------------------------------------------------------------------------------------------------------
# Learnable Triangulation of Human Pose (karfly/learnable-triangulation-pytorch)
# ----------------------------------------------------------------------------------------------------------------
E("lt_train", "train.py", "explicit_replacement",
  "karfly/learnable-triangulation-pytorch train.py (torch.distributed.launch + NCCL)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "lazy-initialises CUDA and raises on an NPU host"),
    C('torch.distributed.init_process_group(backend="nccl", init_method="env://")', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(backend="hccl", init_method="env://")', "NCCL is not available; HCCL"),
    C("torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      'print("Number of available NPUs: {}".format(torch.npu.device_count()))', "log-only (prints 0 on an NPU host)"),
    C("device = torch.device(args.local_rank)", "device_type", "replace", True,
      "device = torch.device('npu', args.local_rank)",
      "an integer torch.device is a CUDA device; the model and every batch are moved there"),
    C("device = torch.device(0)", "device_type", "replace", True, "device = torch.device('npu', 0)",
      "non-distributed path: integer device means cuda:0"),
    C("state_dict = torch.load(config.model.checkpoint)", "tensor_to_device", "replace", False,
      "state_dict = torch.load(config.model.checkpoint, map_location='cpu')",
      "released weights.pth were saved on GPU; map_location avoids CUDA deserialisation. Unconfirmed whether the files "
      "hold CUDA storages, so required=False"),
])

E("lt_multiview", "mvn/utils/multiview.py", "device_branch_or_abstraction",
  "karfly/learnable-triangulation-pytorch mvn/utils/multiview.py (DLT triangulation with torch.svd)", [])

E("lt_triangulation", "mvn/models/triangulation.py", "explicit_replacement",
  "karfly/learnable-triangulation-pytorch mvn/models/triangulation.py (algebraic / volumetric nets)", [
    C("def __init__(self, config, device='cuda:0'):", "device_type", "replace", False,
      "def __init__(self, config, device='npu:0'):",
      "default only; train.py always passes device=, which is forwarded to pose_resnet for map_location"),
    C('def __init__(self, config, device="cuda:0"):', "device_type", "replace", False,
      'def __init__(self, config, device="npu:0"):', "default only, overridden by train.py"),
    C("def __init__(self, config, device='cuda'):", "device_type", "replace", False,
      "def __init__(self, config, device='npu'):", "default only, overridden by train.py"),
])

E("lt_op", "mvn/utils/op.py", "device_branch_or_abstraction",
  "karfly/learnable-triangulation-pytorch mvn/utils/op.py (soft-argmax, heatmap unprojection)", [])

E("lt_launch", "scripts/train_h36m_vol.sh", "explicit_replacement",
  "learnable-triangulation README launch command wrapped in a launcher script", [
    C("=set -e", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; often already sourced by the image/.bashrc, so required=False"),
    C("export CUDA_VISIBLE_DEVICES=${GPU_IDS}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU_IDS}",
      "the device selection argument would be silently ignored and ranks would land on NPUs 0..N-1"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "inert on NPU; HCCL/CANN logging is controlled by ASCEND_GLOBAL_LOG_LEVEL (2 = warning)"),
])

# ----------------------------------------------------------------------------------------------------------------
# MvP - Multi-view Pose transformer (sail-sg/mvp), built on Deformable DETR
# ----------------------------------------------------------------------------------------------------------------
E("mvp_train", "run/train_3d.py", "explicit_replacement",
  "sail-sg/mvp run/train_3d.py (DDP, --device flag)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NOTE),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu',", "torch.device(args.device) places the model and batches"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA initialised; only releases cached NPU memory between train and eval"),
])

E("mvp_misc", "lib/utils/misc.py", "explicit_replacement",
  "sail-sg/mvp lib/utils/misc.py (DETR distributed helpers)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "tensor_to_device", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float32, device='npu')",
      "device string fails; also Ascend lists all_reduce dtypes as bf16/fp16/fp32/int32/int64/bool (no fp64)"),
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).view(torch.int8).to("npu")',
      "all_gather of the pickled buffer; Ascend's all_gather list has int8 but not uint8, so reinterpret the bytes"),
    C('local_size = torch.tensor([tensor.numel()], device="cuda")', "tensor_to_device", "replace", True,
      'local_size = torch.tensor([tensor.numel()], dtype=torch.int32, device="npu")',
      "device string; int64 is not in Ascend's all_gather dtype list (int32 is)"),
    C('size_list = [torch.tensor([0], device="cuda") for _ in range(world_size)]', "tensor_to_device", "replace", True,
      'size_list = [torch.tensor([0], dtype=torch.int32, device="npu") for _ in range(world_size)]',
      "must match local_size's device and dtype"),
    C('tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="cuda"))', "tensor_to_device", "replace", True,
      'tensor_list.append(torch.empty((max_size,), dtype=torch.int8, device="npu"))', "receive buffers, same dtype as the sent bytes"),
    C('padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="cuda")', "tensor_to_device", "replace", True,
      'padding = torch.empty(size=(max_size - local_size,), dtype=torch.int8, device="npu")', "padding concatenated to the int8 buffer"),
    C("also report peak device memory", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():  # also report peak device memory",
      "log format only: on an NPU host the branch silently drops the memory column"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "log-only branch, pairs with the format string above"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))", "log-only; returns 0 when CUDA is not initialised"),
    C("os.environ['LOCAL_SIZE'] = str(torch.cuda.device_count())", "torch_cuda_api", "replace", True,
      "os.environ['LOCAL_SIZE'] = str(torch.npu.device_count())",
      "silently exports LOCAL_SIZE=0 on an NPU host (read back by get_local_size())"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()", "SLURM path: 0 devices -> ZeroDivisionError in proc_id % num_gpus"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "raises without CUDA"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
      "backend string passed to init_process_group on the next lines"),
])

E("mvp_msda_func", "lib/models/ops/functions/ms_deform_attn_func.py", "explicit_replacement",
  "sail-sg/mvp lib/models/ops/functions/ms_deform_attn_func.py (Deformable-DETR MSDA autograd wrapper)", [
    C("import MultiScaleDeformableAttention as MSDA", "custom_cuda_extension", "removal", True, None,
      "the compiled CUDA extension cannot be built or imported on an NPU host; the port uses the pure-PyTorch "
      "ms_deform_attn_core_pytorch (grid_sample) already in this file"),
])

E("mvp_msda_module", "lib/models/ops/modules/ms_deform_attn.py", "explicit_replacement",
  "sail-sg/mvp lib/models/ops/modules/ms_deform_attn.py (projective / deformable attention module)", [
    C("from ..functions import MSDeformAttnFunction", "custom_cuda_extension", "replace", True,
      "from ..functions.ms_deform_attn_func import ms_deform_attn_core_pytorch",
      "needed by the replaced call below"),
    C("output = MSDeformAttnFunction.apply(", "custom_cuda_extension", "replace", True,
      "output = ms_deform_attn_core_pytorch(value, input_spatial_shapes, sampling_locations, attention_weights)",
      "CUDA kernel -> torch ops (F.grid_sample, supported on Ascend for fp16/fp32); slower than a fused kernel but "
      "no nvcc dependency"),
])

E("mvp_setup", "lib/models/ops/setup.py", "explicit_replacement",
  "sail-sg/mvp lib/models/ops/setup.py (CUDAExtension build of MultiScaleDeformableAttention)", [])

E("mvp_make", "lib/models/ops/make.sh", "explicit_replacement",
  "sail-sg/mvp lib/models/ops/make.sh", [
    C("python setup.py build install", "custom_cuda_extension", "removal", False, None,
      "the build raises 'Cuda is not availabel' on an NPU host; after the pure-PyTorch port nothing imports the "
      "extension, so the step is dropped (install-time only, required=False)"),
])

# ----------------------------------------------------------------------------------------------------------------
# EasyMocap (zju3dv/EasyMocap)
# ----------------------------------------------------------------------------------------------------------------
E("em_mv1p", "apps/demo/mv1p.py", "device_branch_or_abstraction",
  "zju3dv/EasyMocap apps/demo/mv1p.py (multi-view single-person SMPL fitting demo)", [])

E("em_body_param", "easymocap/smplmodel/body_param.py", "explicit_replacement",
  "zju3dv/EasyMocap easymocap/smplmodel/body_param.py (load_model)", [
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "load_model defaults to use_cuda=True; SMPLlayer buffers are moved to this device and fail on an NPU host"),
])

E("em_optimize", "easymocap/pyfitting/optimize_simple.py", "device_branch_or_abstraction",
  "zju3dv/EasyMocap easymocap/pyfitting/optimize_simple.py (LBFGS SMPL fitting)", [])

E("em_timer", "easymocap/mytools/utils.py", "explicit_replacement",
  "zju3dv/EasyMocap easymocap/mytools/utils.py (Timer)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "timing accuracy only: on an NPU host the sync is skipped and async NPU work is under-measured"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "with the guard above ported this line runs and torch.cuda.synchronize raises without CUDA"),
])

E("em_extract", "scripts/preprocess/extract_video.py", "explicit_replacement",
  "zju3dv/EasyMocap scripts/preprocess/extract_video.py (openpose / yolo-hrnet keypoint extraction)", [
    C("device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type", "replace", True,
      "device = torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
      "YOLOv4 + HRNet would silently run on the CPU of an NPU host"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "releases the detector's cached memory; no-op without CUDA, memory-only"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpus", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpus",
      "--gpus would be ignored silently; set before torch/torch_npu is imported (torch is imported lazily here)"),
])

# ----------------------------------------------------------------------------------------------------------------
# 4D-Humans / HMR 2.0 (shubham-goel/4D-Humans) and PHALP tracking (brjathu/PHALP)
# ----------------------------------------------------------------------------------------------------------------
E("hmr_demo", "demo.py", "explicit_replacement",
  "shubham-goel/4D-Humans demo.py (ViTDet detection + HMR2 mesh recovery)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type", "replace", True,
      "device = torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
      "the ViT-H HMR2 model would silently run on CPU"),
])

E("hmr_track", "track.py", "kernel_rewrite",
  "shubham-goel/4D-Humans track.py (PHALP tracker with HMR2 texture sampler)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NOTE),
    C("import neural_renderer as nr", "custom_cuda_extension", "replace", True,
      "from hmr2.utils.torch_depth_renderer import DepthRenderer  # torch-op z-buffer, no CUDA kernels",
      "neural_renderer ships CUDA-only rasterisation kernels (no CPU/NPU path); the depth pass used for UV visibility "
      "has to be re-expressed with torch ops. The replacement module name is hypothetical"),
    C("self.neural_renderer = nr.Renderer(dist_coeffs=None, orig_size=self.img_size,", "custom_cuda_extension", "replace", True,
      "self.neural_renderer = DepthRenderer(orig_size=self.img_size,",
      "constructor of the replacement; assumed to keep nr.Renderer's (verts, faces, mode='depth', K, R, t) call"),
])

E("hmr_det2", "hmr2/utils/utils_detectron2.py", "explicit_replacement",
  "shubham-goel/4D-Humans hmr2/utils/utils_detectron2.py (DefaultPredictor_Lazy)", [
    C("self.model.eval().cuda()", "tensor_to_device", "replace", True, "self.model.eval().npu()",
      "the LazyConfig path builds the detector on CPU and then hard-codes .cuda(). Whether detectron2's "
      "ROIAlign/NMS (torchvision ops) run on NPU needs torchvision_npu - unconfirmed here"),
])

E("hmr_train", "train.py", "explicit_replacement",
  "shubham-goel/4D-Humans train.py (hydra + PyTorch Lightning)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NOTE),
])

E("hmr_trainer_yaml", "hmr2/configs_hydra/trainer/gpu.yaml", "explicit_replacement",
  "shubham-goel/4D-Humans hmr2/configs_hydra/trainer/gpu.yaml (Lightning trainer config)", [
    C("accelerator: gpu", "device_type", "replace", True, "accelerator: npu",
      "Lightning's 'gpu' accelerator requires CUDA and aborts otherwise; Lightning has no built-in NPU accelerator, "
      "so 'npu' assumes an NPU Accelerator registered by a plugin (unconfirmed)"),
])

E("hmr_model", "hmr2/models/hmr2.py", "device_branch_or_abstraction",
  "shubham-goel/4D-Humans hmr2/models/hmr2.py (LightningModule)", [])

E("hmr_renderer", "hmr2/utils/renderer.py", "device_branch_or_abstraction",
  "shubham-goel/4D-Humans hmr2/utils/renderer.py (pyrender offscreen renderer)", [])

E("hmr_setup", "setup.py", "explicit_replacement",
  "shubham-goel/4D-Humans setup.py", [
    C("'torch',", "import_torch_npu", "npu_only_addition", False, "'torch_npu',",
      "torch_npu has to match the torch version and the CANN install (see version matrix); usually installed "
      "by hand, so listing it here is optional"),
])

E("phalp_cfg", "phalp/configs/base.py", "explicit_replacement",
  "brjathu/PHALP phalp/configs/base.py (dataclass configs used by 4D-Humans track.py)", [
    C('device: str = "cuda"', "device_type", "replace", True, 'device: str = "npu"',
      "PHALP does torch.device(cfg.device) and moves HMAR, predictor and detector there"),
])

E("phalp_tracker", "phalp/trackers/PHALP.py", "explicit_replacement",
  "brjathu/PHALP phalp/trackers/PHALP.py (tracker main loop)", [
    C("self.detectron2_cfg.MODEL.ROI_HEADS.SCORE_THRESH_TEST = 0.4", "device_type", "npu_only_addition", True,
      "self.detectron2_cfg.MODEL.DEVICE = 'npu'",
      "yacs detectron2 configs default MODEL.DEVICE to 'cuda'; DefaultPredictor_with_RPN builds the model there"),
    C("hmar_out = self.HMAR(masked_image_list.cuda(), **extra_args)", "tensor_to_device", "replace", True,
      "hmar_out = self.HMAR(masked_image_list.to(self.device), **extra_args)",
      "hard-coded .cuda() next to an otherwise cfg.device-driven tracker"),
])
