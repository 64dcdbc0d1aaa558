# Labels for probe179: 2-D human pose / whole-body keypoint codebases (CUDA -> Ascend NPU).
# Target stack assumed by the ported lines: torch 2.1.0 + torch-npu 2.1.0.post12 (CANN 8.1.RC1),
# i.e. no backend autoload (that exists only from torch_npu 2.5.1), so `import torch_npu` is explicit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point: torch 2.1 pin has no device-backend autoload (only since torch_npu 2.5.1), "
               "so torch_npu must be imported before any npu device/API is used")
DP_NOTE = ("torch.nn.DataParallel is marked unsupported on Atlas A2/A3 in Ascend's support list; "
           "single card here (multi-card via DDP). Follow-up `.module` unwrapping is a consequential edit, not labelled")

# ---------------------------------------------------------------------------------------------
# HRNet (deep-high-resolution-net.pytorch)
# ---------------------------------------------------------------------------------------------
E("hrnet_train", "tools/train.py", "explicit_replacement",
  "HRNet deep-high-resolution-net.pytorch tools/train.py", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("model = torch.nn.DataParallel(model, device_ids=cfg.GPUS).cuda()", "distributed_framework", "replace", True,
        "model = model.npu()", DP_NOTE + "; .cuda() also fails without CUDA"),
      C("=).cuda()", "tensor_to_device", "replace", True, ").npu()",
        "JointsMSELoss moved with .cuda(); fails on a host without CUDA"),
  ])

E("hrnet_test", "tools/test.py", "explicit_replacement",
  "HRNet deep-high-resolution-net.pytorch tools/test.py", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("model.load_state_dict(torch.load(cfg.TEST.MODEL_FILE), strict=False)", "device_type", "replace", True,
        "model.load_state_dict(torch.load(cfg.TEST.MODEL_FILE, map_location='cpu'), strict=False)",
        "released HRNet weights were saved from GPU (cuda tensors); deserialising them without map_location "
        "raises on a host where CUDA is unavailable"),
      C("model = torch.nn.DataParallel(model, device_ids=cfg.GPUS).cuda()", "distributed_framework", "replace", True,
        "model = model.npu()", DP_NOTE),
      C("=).cuda()", "tensor_to_device", "replace", True, ").npu()", "criterion .cuda() fails without CUDA"),
  ])

E("hrnet_function", "lib/core/function.py", "explicit_replacement",
  "HRNet lib/core/function.py (train/validate loops)", [
      C("data_time.update(time.time() - end)", "tensor_to_device", "npu_only_addition", True,
        "input = input.npu(non_blocking=True)",
        "the CPU batch used to be scattered by DataParallel; with DP dropped on NPU the input must be moved explicitly"),
      C("=target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "target = target.npu(non_blocking=True)", ".cuda() fails without CUDA"),
      C("=target_weight = target_weight.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "target_weight = target_weight.npu(non_blocking=True)", ".cuda() fails without CUDA"),
      C("for i, (input, target, target_weight, meta) in enumerate(val_loader):", "tensor_to_device",
        "npu_only_addition", True, "input = input.npu(non_blocking=True)",
        "validation input was also scattered by DataParallel; move it explicitly after dropping DP"),
      C("output_flipped = torch.from_numpy(output_flipped.copy()).cuda()", "tensor_to_device", "replace", True,
        "output_flipped = torch.from_numpy(output_flipped.copy()).to(output.device)",
        "flip-test heatmap moved back with .cuda(); fails without CUDA"),
      C("target, target_weight = target.cuda(non_blocking=True), target_weight.cuda(non_blocking=True)",
        "tensor_to_device", "replace", True,
        "target, target_weight = target.npu(non_blocking=True), target_weight.npu(non_blocking=True)",
        ".cuda() fails without CUDA"),
  ])

E("hrnet_nms", "lib/nms/nms.py", "explicit_replacement",
  "HRNet lib/nms/nms.py (cpu_nms/gpu_nms chosen at import)", [
      C("from .gpu_nms import gpu_nms", "custom_cuda_extension", "removal", True, None,
        "gpu_nms is the nvcc-built Cython extension; it is not built on Ascend, so the package import fails"),
      C("return gpu_nms(dets, thresh, device_id)", "custom_cuda_extension", "replace", False,
        "return cpu_nms(dets, thresh)",
        "gpu_nms_wrapper is not used by the pose pipeline (datasets call oks_nms/soft_oks_nms); "
        "reroute so the helper does not NameError if someone calls it"),
  ])

E("hrnet_nms_setup", "lib/nms/setup_linux.py", "explicit_replacement",
  "HRNet lib/nms/setup_linux.py (py-faster-rcnn nvcc build)", [
      C("=CUDA = locate_cuda()", "custom_cuda_extension", "removal", True, None,
        "locate_cuda() raises EnvironmentError at import when nvcc / CUDAHOME is absent, so even cpu_nms cannot build"),
      C("Extension('gpu_nms',", "custom_cuda_extension", "removal", True, None,
        "drop the whole gpu_nms Extension block (nms_kernel.cu, cudart, nvcc flags); no nvcc on Ascend"),
  ])

E("hrnet_utils", "lib/utils/utils.py", "explicit_replacement",
  "HRNet lib/utils/utils.py (optimizer factory, checkpoints, model summary)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "only needed for the optional torch_npu fused optimizers below"),
      C("optimizer = optim.SGD(", "fused_optimizer", "replace", False, "optimizer = torch_npu.optim.NpuFusedSGD(",
        "performance: tensor-fused SGD (msFmkTransplt performance advice); torch.optim.SGD works unchanged"),
      C("optimizer = optim.Adam(", "fused_optimizer", "replace", False, "optimizer = torch_npu.optim.NpuFusedAdam(",
        "performance: tensor-fused Adam; torch.optim.Adam works unchanged"),
  ])

# ---------------------------------------------------------------------------------------------
# HigherHRNet (HRNet/HigherHRNet-Human-Pose-Estimation), fork with native AMP
# ---------------------------------------------------------------------------------------------
E("higherhrnet_dist_train", "tools/dist_train.py", "explicit_replacement",
  "HigherHRNet tools/dist_train.py (mp.spawn + DDP, fork with native AMP)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "ngpus_per_node = torch.npu.device_count()",
        "returns 0 without CUDA: mp.spawn(nprocs=0) and world_size 0, nothing trains"),
      C("scaler = torch.cuda.amp.GradScaler(", "amp", "replace", True, "scaler = torch.npu.amp.GradScaler(",
        "the CUDA GradScaler disables itself with a warning when CUDA is unavailable: FP16.ENABLED silently "
        "trains without loss scaling"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "torch.cuda.set_device raises without CUDA"),
      C("major, _ = torch.cuda.get_device_capability(args.gpu)", "device_capability_check", "replace", True,
        "major = 7  # SM capability has no meaning on Ascend (get_device_capability() returns None there)",
        "raises without CUDA; torch.npu.get_device_capability returns None (configurable via "
        "TORCH_NPU_DEVICE_CAPABILITY) so the tuple unpack would fail too"),
      C("=model.cuda(args.gpu)", "tensor_to_device", "replace", True, "model.npu(args.gpu)",
        ".cuda() fails without CUDA"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", ".cuda() fails without CUDA"),
      C("model = model.cuda(args.gpu)", "tensor_to_device", "replace", True, "model = model.npu(args.gpu)",
        ".cuda() fails without CUDA"),
      C("model = torch.nn.DataParallel(model).cuda()", "distributed_framework", "replace", True,
        "model = model.npu()", DP_NOTE),
      C("loss_factory = MultiLossFactory(cfg).cuda()", "tensor_to_device", "replace", True,
        "loss_factory = MultiLossFactory(cfg).npu()", ".cuda() fails without CUDA"),
  ])

E("higherhrnet_trainer", "lib/core/trainer.py", "explicit_replacement",
  "HigherHRNet lib/core/trainer.py do_train (fork with torch.cuda.amp)", [
      C("heatmaps = list(map(lambda x: x.cuda(non_blocking=True), heatmaps))", "tensor_to_device", "replace", True,
        "heatmaps = list(map(lambda x: x.npu(non_blocking=True), heatmaps))",
        "targets are not moved by DDP; .cuda() fails without CUDA"),
      C("masks = list(map(lambda x: x.cuda(non_blocking=True), masks))", "tensor_to_device", "replace", True,
        "masks = list(map(lambda x: x.npu(non_blocking=True), masks))", ".cuda() fails without CUDA"),
      C("joints = list(map(lambda x: x.cuda(non_blocking=True), joints))", "tensor_to_device", "replace", True,
        "joints = list(map(lambda x: x.npu(non_blocking=True), joints))", ".cuda() fails without CUDA"),
      C("with torch.cuda.amp.autocast(enabled=scaler is not None):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=scaler is not None):",
        "CUDA autocast warns and disables itself when CUDA is unavailable: forward silently runs in fp32 "
        "although FP16 is configured"),
  ])

E("higherhrnet_config", "lib/config/default.py", "explicit_replacement",
  "HigherHRNet lib/config/default.py (yacs defaults)", [
      C("_C.DIST_BACKEND = 'nccl'", "dist_backend", "replace", True, "_C.DIST_BACKEND = 'hccl'",
        "passed straight to dist.init_process_group(backend=cfg.DIST_BACKEND); NCCL is unavailable on NPU"),
  ])

E("higherhrnet_yaml", "experiments/coco/higher_hrnet/w32_512_adam_lr1e-3.yaml", "explicit_replacement",
  "HigherHRNet experiments/coco/higher_hrnet/w32_512_adam_lr1e-3.yaml", [
      C("DIST_BACKEND: 'nccl'", "dist_backend", "replace", True, "DIST_BACKEND: 'hccl'",
        "overrides the default and reaches init_process_group; NCCL is unavailable on NPU"),
  ])

# ---------------------------------------------------------------------------------------------
# ViTPose (mmpose 0.x / mmcv 1.x)
# ---------------------------------------------------------------------------------------------
E("vitpose_tools_train", "tools/train.py", "explicit_replacement",
  "ViTPose (mmpose 0.x) tools/train.py", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
  ])

E("vitpose_apis_train", "mmpose/apis/train.py", "device_branch_or_abstraction",
  "ViTPose mmpose/apis/train.py (MMDataParallel / MMDistributedDataParallel, apex O1)", [
      C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework",
        "npu_only_addition", True, "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel",
        "NPU wrappers used by the replaced lines below (mmcv>=1.7 API, from memory; not in the knowledge base)"),
      C("def init_random_seed(seed=None, device='cuda'):", "device_type", "replace", True,
        "def init_random_seed(seed=None, device='npu'):",
        "with world_size > 1 the seed tensor is created on 'cuda' and broadcast over HCCL; fails on NPU"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "silent no-op without CUDA; torch.manual_seed above already seeds the NPU generators"),
      C("model, optimizer = apex.amp.initialize(model.cuda(), optimizer, opt_level='O1')", "tensor_to_device",
        "replace", True,
        "model, optimizer = apex.amp.initialize(model.npu(), optimizer, opt_level='O1', combine_grad=True)",
        ".cuda() fails without CUDA; Ascend's apex patch keeps amp O1 (combine_grad is an optional speed-up)"),
      C("model = DistributedDataParallelWrapper(", "torch_cuda_api", "replace", True,
        "model = DistributedDataParallelWrapper(model, device_ids=[torch.npu.current_device()], "
        "broadcast_buffers=False, find_unused_parameters=find_unused_parameters)",
        "torch.cuda.current_device() raises without CUDA (adversarial-training path)"),
      C("model = MMDistributedDataParallel(", "distributed_framework", "replace", True,
        "model = NPUDistributedDataParallel(",
        "MMDDP scatters inputs through torch's Scatter -> torch.cuda.comm.scatter, which Ascend lists as unsupported"),
      C("=model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),", ".cuda() fails without CUDA"),
      C("=device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
        "device_ids=[torch.npu.current_device()],", "torch.cuda.current_device() raises without CUDA"),
      C("model = MMDataParallel(model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "distributed_framework",
        "replace", True, "model = NPUDataParallel(model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)",
        ".cuda() fails without CUDA and MMDataParallel's scatter is CUDA-only"),
  ])

E("vitpose_apis_test", "mmpose/apis/test.py", "explicit_replacement",
  "ViTPose mmpose/apis/test.py (multi_gpu_test, collect_results_cpu/gpu)", [
      C("dir_tensor = torch.full((MAX_LEN, ), 32, dtype=torch.uint8, device='cuda')", "device_type", "replace",
        True, "dir_tensor = torch.full((MAX_LEN, ), 32, dtype=torch.uint8, device='npu')",
        "tensor for the HCCL broadcast of tmpdir; 'cuda' device fails on NPU"),
      C("tmpdir = torch.tensor(bytearray(tmpdir.encode()), dtype=torch.uint8, device='cuda')", "device_type",
        "replace", True, "tmpdir = torch.tensor(bytearray(tmpdir.encode()), dtype=torch.uint8, device='npu')",
        "'cuda' device fails on NPU"),
      C("part_tensor = torch.tensor(bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='cuda')",
        "device_type", "replace", True,
        "part_tensor = torch.tensor(bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='npu')",
        "gpu_collect path; 'cuda' device fails on NPU"),
      C("shape_tensor = torch.tensor(part_tensor.shape, device='cuda')", "device_type", "replace", True,
        "shape_tensor = torch.tensor(part_tensor.shape, device='npu')", "'cuda' device fails on NPU"),
      C("part_send = torch.zeros(shape_max, dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
        "part_send = torch.zeros(shape_max, dtype=torch.uint8, device='npu')", "'cuda' device fails on NPU"),
  ])

E("vitpose_apis_inference", "mmpose/apis/inference.py", "explicit_replacement",
  "ViTPose mmpose/apis/inference.py (init_pose_model, top-down / bottom-up inference)", [
      C("def init_pose_model(config, checkpoint=None, device='cuda:0'):", "device_type", "replace", True,
        "def init_pose_model(config, checkpoint=None, device='npu:0'):",
        "default device used by demos/callers that do not pass one; model.to('cuda:0') fails on NPU"),
      C("batch_data = scatter(batch_data, [device])[0]", "tensor_to_device", "replace", True,
        "batch_data = scatter(batch_data, [-1])[0]; batch_data['img'] = batch_data['img'].to(next(model.parameters()).device)",
        "mmcv scatter to a device target goes through torch Scatter/torch.cuda.comm.scatter (unsupported on NPU)"),
      C("data = scatter(data, [device])[0]", "tensor_to_device", "replace", True,
        "data = scatter(data, [-1])[0]; data['img'] = data['img'].to(next(model.parameters()).device)",
        "same CUDA-only scatter in the bottom-up path"),
  ])

E("vitpose_runtime_cfg", "configs/_base_/default_runtime.py", "explicit_replacement",
  "ViTPose/mmpose configs/_base_/default_runtime.py", [
      C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True, "dist_params = dict(backend='hccl')",
        "passed to init_dist(args.launcher, **cfg.dist_params) -> init_process_group; NCCL unavailable on NPU"),
  ])

E("vitpose_wholebody_cfg",
  "configs/wholebody/2d_kpt_sview_rgb_img/topdown_heatmap/coco-wholebody/ViTPose_huge_wholebody_256x192.py",
  "explicit_replacement", "ViTPose ViTPose_huge_wholebody_256x192.py config (no edits needed)", [])

E("vitpose_dist_train_sh", "tools/dist_train.sh", "explicit_replacement",
  "mmpose/ViTPose tools/dist_train.sh (torch.distributed.launch)", [
      C("=#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "without the CANN environment torch_npu fails to load (libhccl.so / libascendcl.so not found)"),
      C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
        "ignored by the Ascend runtime: a caller restricting cards (e.g. 4,5,6,7) silently gets cards 0..3"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
        "NCCL-only knob; HCCL ignores it"),
      C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-bond0}", "env_var", "replace", False,
        "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-bond0}",
        "multi-node NIC choice; HCCL's default (first non-docker/lo NIC by name) would already pick bond0 here"),
  ])

E("vitpose_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "mmpose/ViTPose docker/Dockerfile", [
      C('ARG PYTORCH="1.9.0"', "import_torch_npu", "replace", False, 'ARG PYTORCH="2.1.0"',
        "only feeds the base-image tag; torch 1.9 has no torch_npu build, so the pin moves to the pip line"),
      C('ARG CUDA="11.1"', "import_torch_npu", "replace", False, 'ARG CANN="8.1.rc1"',
        "build arg for the base-image tag only"),
      C('ARG CUDNN="8"', "import_torch_npu", "removal", False, None, "unused once the base image changes"),
      C("FROM pytorch/pytorch:${PYTORCH}-cuda${CUDA}-cudnn${CUDNN}-devel", "import_torch_npu", "replace", True,
        "FROM ascendai/cann:${CANN}-910b-ubuntu22.04-py3.10",
        "CUDA image with torch 1.9.0+cu111: no CANN toolkit and no matching torch_npu"),
      C("ENV TORCH_CUDA_ARCH_LIST=", "custom_cuda_extension", "removal", False, None,
        "nvcc arch list; nothing is compiled with nvcc on Ascend"),
      C("ENV TORCH_NVCC_FLAGS=", "custom_cuda_extension", "removal", False, None, "nvcc-only flags"),
      C("3bf863cc.pub", "import_torch_npu", "removal", False, None,
        "NVIDIA apt key workaround; pointless on the CANN image (may even fail if gnupg is absent: unconfirmed)"),
      C("7fa2af80.pub", "import_torch_npu", "removal", False, None, "NVIDIA machine-learning repo key; pointless"),
      C("RUN pip install --no-cache-dir --upgrade pip wheel setuptools", "import_torch_npu", "npu_only_addition",
        True,
        "RUN pip install --no-cache-dir torch==${PYTORCH} torchvision==0.16.0 torch-npu==2.1.0.post12 pyyaml decorator attrs psutil",
        "the CANN base image has no torch; torch_npu must match torch exactly (2.1.0 <-> 2.1.0.postN)"),
      C("RUN pip install --no-cache-dir mmcv-full==1.3.9 -f", "custom_cuda_extension", "replace", True,
        "RUN git clone -b v1.7.2 https://github.com/open-mmlab/mmcv.git /mmcv && cd /mmcv && "
        "MMCV_WITH_OPS=1 FORCE_NPU=1 pip install --no-cache-dir -e .",
        "cu111/torch1.9 wheel links libcudart and the wrong torch ABI; NPU op build flag is from memory (unconfirmed)"),
      C('ENV FORCE_CUDA="1"', "custom_cuda_extension", "removal", False, None,
        "ViTPose itself builds no extension; inert"),
      C("RUN git clone https://github.com/NVIDIA/apex /apex", "amp", "replace", True,
        "RUN git clone https://gitee.com/ascend/apex.git /apex && cd /apex && bash scripts/build.sh --python=3.10 && \\",
        "NVIDIA apex with CUDA extensions cannot build; Ascend's apex patch provides amp O1/O2 used by use_fp16 configs"),
      C('--global-option="--cuda_ext"', "custom_cuda_extension", "replace", True,
        "    pip install --no-cache-dir apex/dist/apex-*.whl",
        "--cuda_ext requires nvcc/CUDA_HOME"),
  ])

E("vitpose_requirements", "requirements.txt", "explicit_replacement",
  "ViTPose-style requirements.txt with mmcv-full CUDA wheel index", [
      C("-f https://download.openmmlab.com/mmcv/dist/cu111/torch1.9.0/index.html", "custom_cuda_extension",
        "removal", True, None,
        "CUDA-built mmcv-full wheels; pip prefers a matching prebuilt CUDA wheel from this index over a source build"),
      C("=mmcv-full==1.3.9", "custom_cuda_extension", "replace", True,
        "mmcv-full==1.7.2  # build from source: MMCV_WITH_OPS=1 FORCE_NPU=1",
        "1.3.9 predates mmcv's NPU support and only ships torch1.9/cu111 binaries"),
      C("onnxruntime-gpu==1.8.1", "custom_cuda_extension", "replace", False, "onnxruntime==1.16.3",
        "only used for the ONNX export check; CUDA EP build is useless on Ascend (no x86 CUDA there; unconfirmed for "
        "aarch64 wheel availability)"),
  ])

E("vitpose_demo", "demo/top_down_img_demo_with_mmdet.py", "explicit_replacement",
  "mmpose/ViTPose demo/top_down_img_demo_with_mmdet.py", [
      C("from argparse import ArgumentParser", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu  # noqa: F401", IMPORT_NOTE + " (the script never imports torch itself)"),
      C("'--device', default='cuda:0', help='Device used for inference')", "device_type", "replace", True,
        "'--device', default='npu:0', help='Device used for inference')",
        "default device string reaches init_detector/init_pose_model -> model.to('cuda:0')"),
  ])

# ---------------------------------------------------------------------------------------------
# AlphaPose
# ---------------------------------------------------------------------------------------------
E("alphapose_demo_inference", "scripts/demo_inference.py", "explicit_replacement",
  "AlphaPose scripts/demo_inference.py", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("args.gpus = [int(i) for i in args.gpus.split(',')] if torch.cuda.device_count() >= 1 else [-1]",
        "torch_cuda_api", "replace", True,
        "args.gpus = [int(i) for i in args.gpus.split(',')] if torch.npu.device_count() >= 1 else [-1]",
        "returns 0 without CUDA: --gpus is ignored and the whole demo silently runs on CPU"),
      C('args.device = torch.device("cuda:" + str(args.gpus[0]) if args.gpus[0] >= 0 else "cpu")', "device_type",
        "replace", True, 'args.device = torch.device("npu:" + str(args.gpus[0]) if args.gpus[0] >= 0 else "cpu")',
        "'cuda:N' device string"),
      C("pose_model = torch.nn.DataParallel(pose_model, device_ids=args.gpus).to(args.device)",
        "distributed_framework", "replace", True, "pose_model.to(args.device)",
        DP_NOTE.split(';')[0] + "; multi-card inference would need one process per card"),
  ])

E("alphapose_opt", "alphapose/opt.py", "explicit_replacement",
  "AlphaPose alphapose/opt.py (training options)", [
      C("parser.add_argument('--dist-backend', default='nccl', type=str,", "dist_backend", "replace", False,
        "parser.add_argument('--dist-backend', default='hccl', type=str,",
        "parsed but not consumed by the DataParallel trainer (scripts/train.py); fix for any DDP launcher"),
      C("opt.gpus = [i for i in range(torch.cuda.device_count())]", "torch_cuda_api", "replace", True,
        "opt.gpus = [i for i in range(torch.npu.device_count())]",
        "empty list without CUDA, so opt.gpus[0] on the next line raises IndexError"),
      C('opt.device = torch.device("cuda:" + str(opt.gpus[0]) if opt.gpus[0] >= 0 else "cpu")', "device_type",
        "replace", True, 'opt.device = torch.device("npu:" + str(opt.gpus[0]) if opt.gpus[0] >= 0 else "cpu")',
        "'cuda:N' device string"),
  ])

E("alphapose_train", "scripts/train.py", "explicit_replacement",
  "AlphaPose scripts/train.py (DataParallel trainer)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        IMPORT_NOTE + "; must precede `from alphapose.opt import ...`, which queries the device count at import"),
      C("num_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "num_gpu = torch.npu.device_count()",
        "0 without CUDA -> DataLoader(batch_size=cfg.TRAIN.BATCH_SIZE * 0) raises"),
      C("inps = [inp.cuda().requires_grad_() for inp in inps]", "tensor_to_device", "replace", True,
        "inps = [inp.npu().requires_grad_() for inp in inps]", ".cuda() fails without CUDA"),
      C("inps = inps.cuda().requires_grad_()", "tensor_to_device", "replace", True,
        "inps = inps.npu().requires_grad_()", ".cuda() fails without CUDA"),
      C("=labels = labels.cuda()", "tensor_to_device", "replace", True, "labels = labels.npu()",
        ".cuda() fails without CUDA"),
      C("=label_masks = label_masks.cuda()", "tensor_to_device", "replace", True, "label_masks = label_masks.npu()",
        ".cuda() fails without CUDA"),
      C("inps = [inp.cuda() for inp in inps]", "tensor_to_device", "replace", True,
        "inps = [inp.npu() for inp in inps]", ".cuda() fails without CUDA"),
      C("=inps = inps.cuda()", "tensor_to_device", "replace", True, "inps = inps.npu()",
        ".cuda() fails without CUDA"),
      C("inps_flip = [flip(inp).cuda() for inp in inps]", "tensor_to_device", "replace", True,
        "inps_flip = [flip(inp).npu() for inp in inps]", ".cuda() fails without CUDA"),
      C("=inps_flip = flip(inps).cuda()", "tensor_to_device", "replace", True, "inps_flip = flip(inps).npu()",
        ".cuda() fails without CUDA"),
      C("m = nn.DataParallel(m).cuda()", "distributed_framework", "replace", True, "m = m.npu()", DP_NOTE),
      C("criterion = builder.build_loss(cfg.LOSS).cuda()", "tensor_to_device", "replace", True,
        "criterion = builder.build_loss(cfg.LOSS).npu()", ".cuda() fails without CUDA"),
      C("optimizer = torch.optim.Adam(m.parameters(), lr=cfg.TRAIN.LR)", "fused_optimizer", "replace", False,
        "optimizer = torch_npu.optim.NpuFusedAdam(m.parameters(), lr=cfg.TRAIN.LR)", "performance only"),
      C("optimizer = torch.optim.RMSprop(m.parameters(), lr=cfg.TRAIN.LR)", "fused_optimizer", "replace", False,
        "optimizer = torch_npu.optim.NpuFusedRMSprop(m.parameters(), lr=cfg.TRAIN.LR)", "performance only"),
      C("model.load_state_dict(torch.load(cfg.MODEL.PRETRAINED))", "device_type", "replace", True,
        "model.load_state_dict(torch.load(cfg.MODEL.PRETRAINED, map_location='cpu'))",
        "AlphaPose checkpoints are saved from m.module on GPU; CUDA tensors cannot be deserialised without CUDA"),
      C("pretrained_state = torch.load(cfg.MODEL.TRY_LOAD)", "device_type", "replace", True,
        "pretrained_state = torch.load(cfg.MODEL.TRY_LOAD, map_location='cpu')", "same as above"),
  ])

E("alphapose_yolo_api", "detector/yolo_api.py", "explicit_replacement",
  "AlphaPose detector/yolo_api.py (YOLOv3-SPP detector wrapper)", [
      C("self.model = torch.nn.DataParallel(self.model, device_ids=args.gpus).to(args.device)",
        "distributed_framework", "replace", True, "self.model.to(args.device)", DP_NOTE.split(';')[0]),
      C("=self.model.cuda()", "tensor_to_device", "replace", True, "self.model.npu()",
        "path taken when the detector is built without opt; .cuda() fails without CUDA"),
      C("imgs = imgs.to(args.device) if args else imgs.cuda()", "tensor_to_device", "replace", True,
        "imgs = imgs.to(args.device) if args else imgs.npu()", "no-opt fallback still calls .cuda()"),
      C("img = img.to(args.device) if args else img.cuda()", "tensor_to_device", "replace", True,
        "img = img.to(args.device) if args else img.npu()", "no-opt fallback still calls .cuda()"),
  ])

E("alphapose_yolo_util", "detector/yolo/util.py", "explicit_replacement",
  "AlphaPose detector/yolo/util.py (ayooshkathuria YOLOv3 helpers)", [
      C("if matrix.is_cuda:", "device_type", "replace", True, "if matrix.device.type != 'cpu':",
        "NPU tensors report is_cuda False, so convert2cpu returns them unconverted and Darknet.save_weights' "
        ".numpy() then fails"),
      C("=x_offset = x_offset.cuda()", "tensor_to_device", "replace", True, "x_offset = x_offset.to(prediction.device)",
        "no-args branch hard-codes .cuda()"),
      C("=y_offset = y_offset.cuda()", "tensor_to_device", "replace", True, "y_offset = y_offset.to(prediction.device)",
        "no-args branch hard-codes .cuda()"),
      C("=anchors = anchors.cuda()", "tensor_to_device", "replace", True, "anchors = anchors.to(prediction.device)",
        "no-args branch hard-codes .cuda()"),
      C("x_offset = x_offset.cuda().half()", "tensor_to_device", "replace", False,
        "x_offset = x_offset.to(prediction.device).half()", "predict_transform_half is dead code (Darknet calls predict_transform)"),
      C("y_offset = y_offset.cuda().half()", "tensor_to_device", "replace", False,
        "y_offset = y_offset.to(prediction.device).half()", "dead code, see above"),
      C("anchors = anchors.cuda(non_blocking=True)", "tensor_to_device", "replace", False,
        "anchors = anchors.to(prediction.device, non_blocking=True)", "dead code, see above"),
  ])

E("alphapose_nms_wrapper", "detector/nms/nms_wrapper.py", "device_branch_or_abstraction",
  "AlphaPose detector/nms/nms_wrapper.py (mmdet v1 nms_cpu / nms_cuda dispatch)", [
      C("=import torch", "custom_cuda_extension", "npu_only_addition", True,
        "import torchvision  # with torchvision_npu installed, torchvision.ops.nms has an NPU kernel",
        "needed by the replacement NMS call below"),
      C("from . import nms_cpu, nms_cuda", "custom_cuda_extension", "replace", True, "from . import nms_cpu",
        "nms_cuda is an nvcc-built extension that no longer exists on Ascend; ImportError"),
      C("device = 'cpu' if device_id is None else 'cuda:{}'.format(device_id)", "device_type", "replace", True,
        "device = 'cpu' if device_id is None else 'npu:{}'.format(device_id)", "'cuda:N' device string"),
      C("if dets_th.is_cuda:", "device_type", "replace", True, "if dets_th.device.type == 'npu':",
        "NPU tensors report is_cuda False and would be handed to the CPU C++ kernel"),
      C("inds = nms_cuda.nms(dets_th, iou_thr)", "custom_cuda_extension", "replace", True,
        "inds = torchvision.ops.nms(dets_th[:, :4], dets_th[:, 4], iou_thr)",
        "same keep order (score-descending); torchvision_npu lists nms as supported"),
  ])

E("alphapose_setup", "setup.py", "kernel_rewrite",
  "AlphaPose setup.py (Cython + CUDAExtension ops)", [
      C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace",
        False, "from torch.utils.cpp_extension import BuildExtension, CppExtension",
        "the import itself works; CppExtension is needed by the replacement below"),
      C("return CUDAExtension(", "custom_cuda_extension", "replace", True, "return CppExtension(",
        "CUDAExtension resolves CUDA_HOME when called and raises without a CUDA toolkit; nms_cpu is pure C++"),
      C("'nvcc': [", "custom_cuda_extension", "removal", False, None, "nvcc flags are ignored by CppExtension"),
      C("name='nms_cuda',", "custom_cuda_extension", "removal", True, None,
        "drop the make_cuda_ext(...) entry: nms_kernel.cu needs nvcc; NMS moves to torchvision.ops.nms"),
      C("name='roi_align_cuda',", "custom_cuda_extension", "removal", True, None,
        "drop: .cu kernel; torchvision.ops.roi_align (torchvision_npu) instead"),
      C("name='deform_conv_cuda',", "custom_cuda_extension", "removal", True, None,
        "drop: .cu kernel; deform_conv.py is rewritten on torchvision.ops.deform_conv2d"),
      C("name='deform_pool_cuda',", "custom_cuda_extension", "removal", True, None,
        "drop: .cu kernel; no FastPose config uses deformable pooling"),
  ])

E("alphapose_dcn", "alphapose/models/layers/dcn/deform_conv.py", "kernel_rewrite",
  "AlphaPose alphapose/models/layers/dcn/deform_conv.py (mmdet v1 DCN autograd functions)", [
      C("from . import deform_conv_cuda", "custom_cuda_extension", "replace", True,
        "from torchvision.ops import deform_conv2d as tv_deform_conv2d",
        "nvcc-built extension is not available; torchvision_npu supports deform_conv2d"),
      C("=if not input.is_cuda:", "device_type", "removal", True, None,
        "raises NotImplementedError for NPU tensors"),
      C("deform_conv_cuda.deform_conv_forward_cuda(", "custom_cuda_extension", "replace", True,
        "output = tv_deform_conv2d(input, offset, weight, stride=ctx.stride, padding=ctx.padding, dilation=ctx.dilation)",
        "kernel call replaced by an autograd-capable op"),
      C("if not grad_output.is_cuda:", "device_type", "removal", True, None,
        "hand-written backward goes away (autograd of the torchvision op)"),
      C("deform_conv_cuda.deform_conv_backward_input_cuda(", "custom_cuda_extension", "removal", True, None,
        "CUDA backward kernel; replaced by autograd"),
      C("deform_conv_cuda.deform_conv_backward_parameters_cuda(", "custom_cuda_extension", "removal", True, None,
        "CUDA backward kernel; replaced by autograd"),
      C("if not (input.is_cuda and offset.is_cuda and mask.is_cuda):", "device_type", "removal", True, None,
        "raises NotImplementedError for NPU tensors"),
      C("deform_conv_cuda.modulated_deform_conv_cuda_forward(", "custom_cuda_extension", "replace", True,
        "output = tv_deform_conv2d(input, offset, weight, bias, stride=ctx.stride, padding=ctx.padding, "
        "dilation=ctx.dilation, mask=mask)",
        "DCNv2 via the mask argument (torch_npu.contrib.module.ModulatedDeformConv is the alternative)"),
      C("deform_conv_cuda.modulated_deform_conv_cuda_backward(", "custom_cuda_extension", "removal", True, None,
        "CUDA backward kernel; replaced by autograd"),
  ])

E("alphapose_env", "environment.yml", "explicit_replacement",
  "AlphaPose-style conda environment.yml (pytorch + cudatoolkit)", [
      C("=- nvidia", "import_torch_npu", "removal", False, None, "CUDA-only conda channel"),
      C("=- pytorch=1.12.1", "import_torch_npu", "removal", True, None,
        "torch 1.12.1 has no torch_npu release; torch 2.1.0 moves to the pip section next to torch-npu"),
      C("=- torchvision=0.13.1", "import_torch_npu", "removal", True, None,
        "must match torch 2.1.0 (torchvision 0.16.0 via pip)"),
      C("=- cudatoolkit=11.3", "import_torch_npu", "removal", False, None,
        "CUDA runtime unused on Ascend (may not resolve on aarch64 hosts: unconfirmed)"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True,
        "- torch-npu==2.1.0.post12  # together with torch==2.1.0 and torchvision==0.16.0",
        "torch-npu pin (CANN 8.1.RC1 pairing per the compatibility matrix)"),
  ])

# ---------------------------------------------------------------------------------------------
# OpenPose-pytorch (Hzzone/pytorch-openpose)
# ---------------------------------------------------------------------------------------------
E("openpose_body", "src/body.py", "explicit_replacement",
  "Hzzone pytorch-openpose src/body.py", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "body.py is the only module that touches the device; demo scripts import it first"),
      C("self.use_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "self.use_gpu = torch.npu.is_available()", "False on NPU: the model silently stays on CPU"),
      C("self.model = self.model.cuda()", "tensor_to_device", "replace", True, "self.model = self.model.npu()",
        ".cuda() once the guard is true"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "False on NPU: input silently stays on CPU"),
      C("data = data.cuda()", "tensor_to_device", "replace", True, "data = data.npu()", ".cuda() fails without CUDA"),
  ])

# ---------------------------------------------------------------------------------------------
# RTMPose deployment (rtmlib style, ONNX Runtime)
# ---------------------------------------------------------------------------------------------
E("rtmlib_base", "rtmlib/tools/base.py", "device_branch_or_abstraction",
  "rtmlib rtmlib/tools/base.py (ONNX Runtime / OpenCV DNN backends)", [
      C("'cuda': 'CUDAExecutionProvider',", "device_type", "add_branch", False, "'npu': 'CANNExecutionProvider',",
        "ONNX Runtime's CANN execution provider needs an onnxruntime build with CANN; no torch involved "
        "(unconfirmed in the knowledge base)"),
  ])

E("rtmlib_requirements", "requirements.txt", "explicit_replacement",
  "rtmlib-style deployment requirements.txt", [
      C("onnxruntime-gpu>=1.16", "custom_cuda_extension", "replace", False,
        "onnxruntime>=1.16  # CANN EP needs an onnxruntime build with --use_cann",
        "CUDA build of ONNX Runtime is useless on Ascend; CANN EP packaging unconfirmed"),
  ])
