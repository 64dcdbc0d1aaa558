# Labels for probe332 (lane detection / road-scene perception, CUDA -> Ascend NPU).
# Format: see bench/probe_build.py.  One label per upstream line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
IMPORT_NPU = "import torch_npu"
UNCONF_LOAD = ("checkpoint written from CUDA tensors (the released models) carries 'cuda' storage tags; "
               "torch.load without map_location tries to restore them on a CUDA device and raises on an NPU host")

# ----------------------------------------------------------------------------------------------------------
# LaneATT
# ----------------------------------------------------------------------------------------------------------
E("laneatt_nms_setup", "lib/nms/setup.py", "kernel_rewrite",
  "LaneATT lib/nms/setup.py (nvcc lane-NMS extension)", [
      C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
        "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
        "CUDAExtension needs nvcc/CUDA_HOME; the NPU build goes through torch_npu's NpuExtension (adds ACL/torch_npu "
        "include and lib dirs). Import changes together with its only use below"),
      C("CUDAExtension('nms.details', ['src/nms.cpp', 'src/nms_kernel.cu'],", "custom_cuda_extension", "replace", True,
        "NpuExtension('nms.details', ['src/nms.cpp', 'src/nms_npu.cpp'],",
        "nms_kernel.cu cannot be compiled for Ascend; the kernel has to be rewritten (Ascend C op or host code) "
        "and built without nvcc"),
      C("'nvcc': ['-O2', '--expt-relaxed-constexpr'] + _gencode,", "custom_cuda_extension", "removal", False, None,
        "nvcc flags / sm_XX gencodes are meaningless without .cu sources; BuildExtension only reads 'cxx' for .cpp, "
        "so leaving them is harmless but dead"),
  ])

E("laneatt_model", "lib/models/laneatt.py", "explicit_replacement",
  "LaneATT lib/models/laneatt.py (anchor-based lane model calling the CUDA NMS)", [
      C("=from nms import nms", "custom_cuda_extension", "replace", True,
        "from lib.nms_torch import nms  # host/torch port of lib/nms (same signature)",
        "`nms` is the nvcc-built extension from lib/nms (asserts CUDA tensors); the import fails when it cannot be "
        "built and the kernel cannot take NPU tensors. Call site keeps its signature"),
      C("anchors_mask = torch.load(anchors_freq_path).cpu()", "tensor_to_device", "replace", False,
        "anchors_mask = torch.load(anchors_freq_path, map_location='cpu')",
        "unconfirmed: if the shipped *_anchors_freq.pt holds CUDA storages (the trailing .cpu() hints so) the load "
        "fails before .cpu() runs; map_location='cpu' is the safe form"),
  ])

E("laneatt_runner", "lib/runner.py", "device_branch_or_abstraction",
  "LaneATT lib/runner.py (device passed in; nothing to change)", [])

E("laneatt_experiment", "lib/experiment.py", "explicit_replacement",
  "LaneATT lib/experiment.py (checkpoint I/O, tensorboard)", [
      C("return torch.load(self.get_checkpoint_path(epoch))['model']", "tensor_to_device", "replace", True,
        "return torch.load(self.get_checkpoint_path(epoch), map_location='cpu')['model']",
        "`main.py test` evaluates the released LaneATT experiments; " + UNCONF_LOAD),
  ])

E("laneatt_main", "main.py", "device_branch_or_abstraction",
  "LaneATT main.py (device chooser)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "entry script: registers the 'npu' device type used by the device line below"),
      C("device = torch.device('cpu') if not torch.cuda.is_available() or args.cpu else torch.device('cuda')",
        "device_type", "replace", True,
        "device = torch.device('cpu') if not torch.npu.is_available() or args.cpu else torch.device('npu')",
        "torch.cuda.is_available() is False on an NPU host, so LaneATT silently runs on the CPU"),
  ])

E("laneatt_env", "environment.yml", "explicit_replacement",
  "LaneATT conda environment (pytorch channel + cudatoolkit)", [
      C("  - pytorch=1.6.0", "import_torch_npu", "replace", True, "  - pytorch=2.1.0  # CPU build; NPU support from torch-npu",
        "torch_npu only exists for torch 1.11/2.x and must match the torch version exactly (2.1.0 <-> torch-npu 2.1.0.postN)"),
      C("  - torchvision=0.7.0", "import_torch_npu", "replace", True, "  - torchvision=0.16.0",
        "torchvision 0.7 pins torch 1.6; must follow the torch bump"),
      C("  - cudatoolkit=10.1", "custom_cuda_extension", "removal", True, None,
        "CUDA runtime package: no linux-aarch64 build for the Kunpeng hosts Ascend boards usually sit in, and useless on x86"),
      C("  - pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post12",
        "the Ascend adapter itself (pip only), pinned to the torch version"),
  ])

# ----------------------------------------------------------------------------------------------------------
# CLRNet
# ----------------------------------------------------------------------------------------------------------
E("clrnet_main", "main.py", "explicit_replacement",
  "CLRNet main.py (--gpus -> CUDA_VISIBLE_DEVICES)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = ', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = \',\'.join(str(gpu) for gpu in args.gpus)',
        "device selection: the runtime ignores CUDA_VISIBLE_DEVICES, so `--gpus 2 3` would silently train on npu:0,1"),
  ])

E("clrnet_runner", "clrnet/engine/runner.py", "explicit_replacement",
  "CLRNet clrnet/engine/runner.py (MMDataParallel + to_cuda)", [
      C("from mmcv.parallel import MMDataParallel", "distributed_framework", "replace", True,
        "from mmcv.device.npu import NPUDataParallel",
        "MMDataParallel scatters batches with torch.cuda streams/.cuda(); mmcv>=1.7 ships an NPU wrapper "
        "(from memory, not in the knowledge notes)"),
      C("self.net = MMDataParallel(self.net, device_ids=range(self.cfg.gpus)).cuda()", "distributed_framework",
        "replace", True, "self.net = NPUDataParallel(self.net.npu(), device_ids=range(self.cfg.gpus))",
        "wrapper + Module.cuda() both CUDA-bound"),
      C("batch[k] = batch[k].cuda()", "tensor_to_device", "replace", True, "batch[k] = batch[k].npu()",
        "Tensor.cuda() raises without CUDA"),
  ])

E("clrnet_setup", "setup.py", "kernel_rewrite",
  "CLRNet setup.py (builds clrnet.ops.nms_impl with CUDAExtension)", [
      C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME", "custom_cuda_extension",
        "replace", True,
        "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
        "import changes together with the CUDAExtension use below"),
      C("op_files = glob.glob('./clrnet/ops/csrc/*.c*')", "custom_cuda_extension", "replace", True,
        "op_files = glob.glob('./clrnet/ops/csrc/*.cpp') + glob.glob('./clrnet/ops/csrc/npu/*.cpp')",
        "the glob picks up nms_kernel.cu, which only nvcc can compile; sources must be the Ascend port"),
      C("if torch.cuda.is_available() or os.getenv('FORCE_CUDA', '0') == '1':", "torch_cuda_api", "replace", True,
        "if os.getenv('FORCE_NPU', '1') == '1':",
        "False on an NPU build host, so the else branch raises EnvironmentError and nothing is built"),
      C("define_macros += [('WITH_CUDA', None)]", "custom_cuda_extension", "replace", True,
        "define_macros += [('WITH_NPU', None)]",
        "WITH_CUDA makes the binding reference the CUDA kernel symbols"),
      C("extra_compile_args['nvcc'] = [", "custom_cuda_extension", "removal", False, None,
        "nvcc-only half-precision defines; ignored for .cpp sources (statement spans the next 4 lines)"),
      C("ext_ops = CUDAExtension(", "custom_cuda_extension", "replace", True, "ext_ops = NpuExtension(",
        "CUDAExtension requires CUDA_HOME/nvcc"),
  ])

E("clrnet_head", "clrnet/models/heads/clr_head.py", "explicit_replacement",
  "CLRNet clrnet/models/heads/clr_head.py (prior refinement head, lane NMS)", [
      C("=from clrnet.ops import nms", "custom_cuda_extension", "replace", True,
        "from clrnet.ops.nms_torch import nms  # host/torch port of clrnet/ops/csrc (same signature)",
        "clrnet.ops.nms wraps the nvcc-built nms_impl, which only accepts CUDA tensors; call site keeps its signature"),
  ])

E("clrnet_net_utils", "clrnet/utils/net_utils.py", "explicit_replacement",
  "CLRNet clrnet/utils/net_utils.py (checkpoint load/resume)", [
      C("pretrained_net = torch.load(model_dir)['net']", "tensor_to_device", "replace", True,
        "pretrained_net = torch.load(model_dir, map_location='cpu')['net']",
        "--finetune_from points at released GPU checkpoints; " + UNCONF_LOAD),
      C("pretrained_model = torch.load(model_dir)", "tensor_to_device", "replace", True,
        "pretrained_model = torch.load(model_dir, map_location='cpu')",
        "--load_from (test/validate with the released CLRNet models); " + UNCONF_LOAD),
      C("map_location=lambda storage, loc: storage.cuda()", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(model_dir, map_location='cpu')",
        "explicit storage.cuda() raises without CUDA; optimizer.load_state_dict moves state to the params' device"),
  ])

E("clrnet_dockerfile", "Dockerfile", "explicit_replacement",
  "CLRNet-style Dockerfile (pytorch CUDA devel image, mmcv-full cu111, builds the NMS op)", [
      C("FROM pytorch/pytorch:${PYTORCH}-cuda${CUDA}-cudnn${CUDNN}-devel", "custom_cuda_extension", "replace", True,
        "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
        "CUDA base image (x86_64, CUDA torch inside); an NPU image needs CANN (+ set_env exports)"),
      C('ENV TORCH_CUDA_ARCH_LIST=', "env_var", "removal", False, None, "nvcc arch list; ignored without CUDA"),
      C('ENV TORCH_NVCC_FLAGS=', "env_var", "removal", False, None, "nvcc flags; ignored without CUDA"),
      C('ENV FORCE_CUDA="1"', "env_var", "removal", True, None,
        "forces setup.py's CUDA branch (WITH_CUDA + nvcc build of nms_impl) even without a GPU -> build fails"),
      C("RUN rm /etc/apt/sources.list.d/cuda.list /etc/apt/sources.list.d/nvidia-ml.list", "custom_cuda_extension",
        "removal", True, None, "the CANN image has no NVIDIA apt lists; rm without -f fails the build"),
      C("RUN apt-key adv --fetch-keys https://developer.download.nvidia.com", "custom_cuda_extension", "removal",
        False, None, "NVIDIA repo key, no longer needed"),
      C("RUN pip install --no-cache-dir -r requirements.txt", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install --no-cache-dir torch==2.1.0 torch-npu==2.1.0.post17",
        "the CANN image has no torch; torch-npu 2.1.0.post17 pairs with CANN 8.3.RC1"),
      C("RUN pip install --no-cache-dir mmcv-full==1.2.7 -f https://download.openmmlab.com/mmcv/dist/cu111",
        "custom_cuda_extension", "replace", True,
        "RUN MMCV_WITH_OPS=1 FORCE_NPU=1 pip install --no-cache-dir mmcv-full==1.7.2",
        "cu111 wheel links libcudart; mmcv must be built for NPU (build flags from memory, unconfirmed)"),
  ])

# ----------------------------------------------------------------------------------------------------------
# CondLaneNet (mmdet 2.x fork)
# ----------------------------------------------------------------------------------------------------------
E("condlane_train_tool", "tools/train.py", "explicit_replacement",
  "CondLaneNet tools/train.py (mmdet 2.x train entry, --gpus / --launcher)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "entry script (mmcv/mmdet with NPU support also import it, but the entry must not rely on that)"),
  ])

E("condlane_apis_train", "mmdet/apis/train.py", "explicit_replacement",
  "CondLaneNet mmdet/apis/train.py (train_detector, MMDataParallel / MMDistributedDataParallel)", [
      C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", "replace",
        True, "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel",
        "mmcv's CUDA wrappers scatter inputs with torch.cuda streams; NPU wrappers exist in mmcv>=1.7 (from memory)"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "lazy no-op without CUDA; NPU generators are probably seeded by torch.manual_seed above (unconfirmed)"),
      C("model = MMDistributedDataParallel(", "distributed_framework", "replace", True,
        "model = NPUDistributedDataParallel(", "CUDA-only mmcv DDP wrapper"),
      C("=model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),", "Module.cuda() raises without CUDA"),
      C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
        "device_ids=[torch.npu.current_device()],", "torch.cuda.current_device() raises without CUDA"),
      C("=model = MMDataParallel(", "distributed_framework", "replace", True, "model = NPUDataParallel(",
        "CUDA-only mmcv DP wrapper"),
      C("model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "tensor_to_device", "replace", True,
        "model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "Module.cuda(i) raises without CUDA"),
  ])

E("condlane_config", "configs/condlanenet/culane/culane_medium_train.py", "explicit_replacement",
  "CondLaneNet mmdet-style config (CULane, medium)", [
      C("location_configs=dict(size=(batch_size, 1, 80, 200), device='cuda:0'))", "device_type", "replace", True,
        "location_configs=dict(size=(batch_size, 1, 80, 200), device='npu:0'))",
        "the head precomputes coordinate maps on this device at build time; 'cuda:0' raises on an NPU host"),
      C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True, "dist_params = dict(backend='hccl')",
        "passed to init_dist -> init_process_group; NCCL is not available on Ascend"),
  ])

E("condlane_dist_train", "tools/dist_train.sh", "explicit_replacement",
  "mmdet/CondLaneNet tools/dist_train.sh", [
      C("=#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", True, SET_ENV,
        "without CANN's environment torch_npu cannot load libascendcl/libhccl (unless the login shell sources it)"),
  ])

E("condlane_test_culane", "tools/condlanenet/culane/test_culane.py", "explicit_replacement",
  "CondLaneNet tools/condlanenet/culane/test_culane.py (single_gpu_test + latency)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("from mmcv.parallel import MMDataParallel", "distributed_framework", "replace", True,
        "from mmcv.device.npu import NPUDataParallel", "see MMDataParallel below"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "False on NPU -> --timing measures only asynchronous launches (wrong latency/fps)"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "goes with the guard above; torch.cuda.synchronize raises without CUDA"),
      C("model = MMDataParallel(model, device_ids=[0])", "distributed_framework", "replace", True,
        "model = NPUDataParallel(model, device_ids=[0])",
        "mmcv scatter moves the batch with .cuda(0) on a CUDA stream -> fails on NPU"),
  ])

# ----------------------------------------------------------------------------------------------------------
# Ultra-Fast-Lane-Detection (v2 layout)
# ----------------------------------------------------------------------------------------------------------
E("ufld_train", "train.py", "explicit_replacement",
  "Ultra-Fast-Lane-Detection-v2 train.py (torch.distributed.launch, local_rank)", [
      C("import torch, os, datetime", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
      C("torch.distributed.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
        "torch.distributed.init_process_group(backend='hccl', init_method='env://')", "NCCL unavailable; HCCL on Ascend"),
      C("state_all = torch.load(cfg.finetune)['model']", "tensor_to_device", "replace", True,
        "state_all = torch.load(cfg.finetune, map_location='cpu')['model']",
        "--finetune takes the released UFLD models; " + UNCONF_LOAD),
  ])

E("ufld_dist_utils", "utils/dist_utils.py", "explicit_replacement",
  "Ultra-Fast-Lane-Detection utils/dist_utils.py (maskrcnn-benchmark style all_gather)", [
      C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
        'tensor = torch.ByteTensor(storage).to("npu")', "HCCL collectives need NPU tensors; 'cuda' raises"),
      C('local_size = torch.LongTensor([tensor.numel()]).to("cuda")', "tensor_to_device", "replace", True,
        'local_size = torch.LongTensor([tensor.numel()]).to("npu")', "as above"),
      C('size_list = [torch.LongTensor([0]).to("cuda") for _ in range(world_size)]', "tensor_to_device", "replace",
        True, 'size_list = [torch.LongTensor([0]).to("npu") for _ in range(world_size)]', "as above"),
      C('tensor_list.append(torch.ByteTensor(size=(max_size,)).to("cuda"))', "tensor_to_device", "replace", True,
        'tensor_list.append(torch.ByteTensor(size=(max_size,)).to("npu"))', "as above"),
      C('padding = torch.ByteTensor(size=(max_size - local_size,)).to("cuda")', "tensor_to_device", "replace", True,
        'padding = torch.ByteTensor(size=(max_size - local_size,)).to("npu")', "as above"),
  ])

E("ufld_common", "utils/common.py", "explicit_replacement",
  "Ultra-Fast-Lane-Detection-v2 utils/common.py (config merge, get_model, inference)", [
      C("cls_out_ext_label = (data_label['labels_row'] != -1).long().cuda()", "tensor_to_device", "replace", True,
        "cls_out_ext_label = (data_label['labels_row'] != -1).long().npu()", "Tensor.cuda() raises without CUDA"),
      C("cls_out_col_ext_label = (data_label['labels_col'] != -1).long().cuda()", "tensor_to_device", "replace", True,
        "cls_out_col_ext_label = (data_label['labels_col'] != -1).long().npu()", "Tensor.cuda() raises without CUDA"),
  ])

E("ufld_eval_wrapper", "evaluation/eval_wrapper.py", "explicit_replacement",
  "Ultra-Fast-Lane-Detection-v2 evaluation/eval_wrapper.py (CULane/TuSimple eval)", [
      C("=imgs = imgs.cuda()", "tensor_to_device", "replace", True, "imgs = imgs.npu()", "Tensor.cuda() raises"),
      C("imgs = imgs.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "imgs = imgs.npu(non_blocking=True)", "Tensor.cuda() raises"),
  ])

E("ufld_speed", "speed_simple.py", "explicit_replacement",
  "Ultra-Fast-Lane-Detection speed_simple.py (latency benchmark)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("cls_dim=(args.griding_num + 1, args.cls_num_per_lane, 4), use_aux=False).cuda()", "tensor_to_device",
        "replace", True, "cls_dim=(args.griding_num + 1, args.cls_num_per_lane, 4), use_aux=False).npu()",
        "Module.cuda() raises without CUDA"),
      C("x = torch.zeros((1, 3, args.height, args.width)).cuda() + 1", "tensor_to_device", "replace", True,
        "x = torch.zeros((1, 3, args.height, args.width)).npu() + 1", "Tensor.cuda() raises"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA; the NPU stream must be synced for a meaningful latency"),
      C("torch.cuda.synchronize()  # kernels run asynchronously", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # kernels run asynchronously, wait before stopping the clock", "as above"),
      C("print('device:', torch.cuda.get_device_name(0))", "torch_cuda_api", "replace", True,
        "print('device:', torch.npu.get_device_name(0))", "raises without CUDA"),
  ])

E("ufld_train_sh", "scripts/train_culane.sh", "explicit_replacement",
  "Ultra-Fast-Lane-Detection multi-GPU launch script", [
      C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True, SET_ENV,
        "CANN environment for torch_npu/HCCL (unless the login shell sources it)"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
        "ignored on Ascend; with ids 0-3 the four local ranks land on npu:0-3 anyway, so only a silent no-op here"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
        "NCCL-only workaround for consumer GPUs; HCCL ignores it and needs no equivalent"),
  ])

E("ufld_dali", "data/dali_data.py", "explicit_replacement",
  "Ultra-Fast-Lane-Detection-v2 data/dali_data.py (DALI GPU pipeline + my_interp CUDA op)", [
      C("=import my_interp", "custom_cuda_extension", "replace", True,
        "from utils.interp_torch import my_interp  # torch port of the nvcc my_interp extension",
        "my_interp is built by nvcc (my_interp/build.sh) and runs on CUDA tensors only"),
      C("pipe = Pipeline(batch_size, num_threads, device_id)", "device_type", "replace", False,
        "pipe = Pipeline(batch_size, num_threads, device_id=None)  # CPU-only DALI pipeline",
        "unconfirmed: with a device_id DALI initialises CUDA for the pipeline; device_id=None is DALI's CPU-only "
        "mode (DALI is not covered by the knowledge notes)"),
      C('images = fn.decoders.image(jpegs, device="mixed")', "device_type", "replace", True,
        'images = fn.decoders.image(jpegs, device="cpu")',
        "'mixed' = nvJPEG decode with GPU output; needs an NVIDIA device (DALI docs, not the knowledge notes)"),
      C('seg_images = fn.decoders.image(seg_images, device="mixed")', "device_type", "replace", True,
        'seg_images = fn.decoders.image(seg_images, device="cpu")', "'mixed' = nvJPEG decode on the GPU"),
      C("labels = fn.coord_transform(labels.gpu(), MT=mt)", "tensor_to_device", "replace", True,
        "labels = fn.coord_transform(labels, MT=mt)", "DataNode.gpu() needs a CUDA device"),
      C("images = data[0]['images']", "tensor_to_device", "replace", True,
        "images = data[0]['images'].npu(non_blocking=True)",
        "the CPU pipeline returns host tensors (the mixed one returned CUDA tensors); the model needs them on NPU"),
      C("seg_images = data[0]['seg_images']", "tensor_to_device", "replace", True,
        "seg_images = data[0]['seg_images'].npu(non_blocking=True)", "as above (seg loss target)"),
      C("points = data[0]['points']", "tensor_to_device", "replace", True,
        "points = data[0]['points'].npu(non_blocking=True)", "interpolated against interp_loc_* which live on NPU"),
      C("self.interp_loc_row = torch.tensor(row_anchor, dtype=torch.float32).cuda() * self.original_image_height",
        "tensor_to_device", "replace", True,
        "self.interp_loc_row = torch.tensor(row_anchor, dtype=torch.float32).npu() * self.original_image_height",
        "Tensor.cuda() raises"),
      C("self.interp_loc_col = torch.tensor(col_anchor, dtype=torch.float32).cuda() * self.original_image_width",
        "tensor_to_device", "replace", True,
        "self.interp_loc_col = torch.tensor(col_anchor, dtype=torch.float32).npu() * self.original_image_width",
        "Tensor.cuda() raises"),
  ])

E("ufld_requirements", "requirements.txt", "explicit_replacement",
  "Ultra-Fast-Lane-Detection-style requirements.txt (cu111 torch, DALI, TensorRT deploy)", [
      C("-f https://download.pytorch.org/whl/torch_stable.html", "import_torch_npu", "removal", False, None,
        "CUDA torch wheel index; harmless once the +cu111 pins are gone"),
      C("torch==1.8.1+cu111", "import_torch_npu", "replace", True, "torch==2.1.0",
        "+cu111 builds exist only on the CUDA index (x86_64); torch_npu needs the exact matching plain torch"),
      C("torchvision==0.9.1+cu111", "import_torch_npu", "replace", True, "torchvision==0.16.0",
        "must follow torch; CUDA local version"),
      C("=numpy", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "the Ascend adapter, pinned to the torch version"),
      C("onnxruntime-gpu", "custom_cuda_extension", "replace", False, "onnxruntime",
        "CUDA execution provider is useless on an NPU host (deploy path); unconfirmed whether the wheel installs on aarch64"),
      C("=pycuda", "custom_cuda_extension", "removal", True, None,
        "sdist only; its build needs the CUDA toolkit headers, so `pip install -r` fails"),
  ])

E("ufld_model", "model/model_culane.py", "explicit_replacement",
  "Ultra-Fast-Lane-Detection-v2 model/model_culane.py (get_model(...).cuda())", [
      C("fc_norm=cfg.fc_norm).cuda()", "tensor_to_device", "replace", True, "fc_norm=cfg.fc_norm).npu()",
        "Module.cuda() raises without CUDA"),
  ])

# ----------------------------------------------------------------------------------------------------------
# YOLOP (panoptic driving perception: drivable area + lane line + detection)
# ----------------------------------------------------------------------------------------------------------
E("yolop_utils", "lib/utils/utils.py", "device_branch_or_abstraction",
  "YOLOP lib/utils/utils.py (select_device, time_synchronized, prefetcher)", [
      C("os.environ['CUDA_VISIBLE_DEVICES'] = device", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = device  # set environment variable",
        "--device 2,3 would silently be ignored on Ascend"),
      C("assert torch.cuda.is_available(), 'CUDA unavailable", "torch_cuda_api", "replace", True,
        "assert torch.npu.is_available(), 'NPU unavailable, invalid device %s requested' % device",
        "asserts False on an NPU host when a device is requested"),
      C("cuda = False if cpu_request else torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "cuda = False if cpu_request else torch.npu.is_available()",
        "False on an NPU host -> select_device silently returns cpu"),
      C("ng = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "ng = torch.npu.device_count()",
        "reached once the guard is ported; 0 on NPU"),
      C("x = [torch.cuda.get_device_properties(i) for i in range(ng)]", "torch_cuda_api", "replace", True,
        "x = [torch.npu.get_device_properties(i) for i in range(ng)]",
        "raises without CUDA; NPU properties do have name/total_memory used below"),
      C("return torch.device('cuda:0' if cuda else 'cpu')", "device_type", "replace", True,
        "return torch.device('npu:0' if cuda else 'cpu')", "device string"),
      C("torch.cuda.synchronize() if torch.cuda.is_available() else None", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize() if torch.npu.is_available() else None",
        "silently skips the sync on NPU, so validate() reports launch time as inference/NMS time"),
      C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
        "CUDA stream; raises without CUDA"),
      C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(self.stream):", "CUDA stream context"),
      C("self.next_img = self.next_img.pin_memory().to(self.device, non_blocking=True)", "pin_memory", "replace",
        False, "self.next_img = self.next_img.pin_memory(device='npu').to(self.device, non_blocking=True)",
        "unconfirmed: default pin device may be CUDA on the torch versions torch_npu pairs with "
        "(transfer_to_npu rewrites Tensor.pin_memory device args)"),
      C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().wait_stream(self.stream)", "CUDA stream API"),
      C("img.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "img.record_stream(torch.npu.current_stream())", "CUDA stream API"),
  ])

E("yolop_train", "tools/train.py", "explicit_replacement",
  "YOLOP tools/train.py (DP/DDP, AMP GradScaler, nccl)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("from torch.cuda import amp", "amp", "replace", True, "from torch_npu.npu import amp",
        "torch.cuda.amp GradScaler/autocast switch themselves off without CUDA: AMP silently disabled"),
      C("assert torch.cuda.device_count() > args.local_rank", "torch_cuda_api", "replace", True,
        "assert torch.npu.device_count() > args.local_rank", "0 on NPU -> assertion fails in DDP mode"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
      C("device = torch.device('cuda', args.local_rank)", "device_type", "replace", True,
        "device = torch.device('npu', args.local_rank)", "device type string"),
      C("dist.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
        "dist.init_process_group(backend='hccl', init_method='env://')  # distributed backend", "NCCL unavailable"),
      C("checkpoint = torch.load(cfg.MODEL.PRETRAINED)", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(cfg.MODEL.PRETRAINED, map_location='cpu')",
        "MODEL.PRETRAINED points at the released YOLOP weights; " + UNCONF_LOAD),
      C("if rank == -1 and torch.cuda.device_count() > 1:", "torch_cuda_api", "removal", False, None,
        "evaluates False on NPU, which happens to skip the unsupported DataParallel path; a porter drops the branch"),
      C("=model = torch.nn.DataParallel(model, device_ids=cfg.GPUS)", "distributed_framework", "removal", False,
        None, "torch.nn.DataParallel is unsupported on Ascend; unreachable on NPU because of the guard above"),
      C("if device.type != 'cpu' and torch.cuda.get_device_capability(device)[0] < 7:", "device_capability_check",
        "replace", True, "if device.type == 'cuda' and torch.cuda.get_device_capability(device)[0] < 7:",
        "device.type is 'npu' -> calls torch.cuda.get_device_capability (raises); the NPU form returns None anyway"),
  ])

E("yolop_function", "lib/core/function.py", "explicit_replacement",
  "YOLOP lib/core/function.py (train/validate loops with autocast)", [
      C("from torch.cuda import amp", "amp", "replace", True, "from torch_npu.npu import amp",
        "amp.autocast below is the CUDA one: silently disabled on NPU (fp32 training, not what was configured)"),
      C("mem = '%.3gG' % (torch.cuda.memory_reserved() / 1E9 if torch.cuda.is_available() else 0)", "torch_cuda_api",
        "replace", False, "mem = '%.3gG' % (torch.npu.memory_reserved() / 1E9 if torch.npu.is_available() else 0)  # (GB)",
        "logging only: prints 0G on NPU"),
  ])

# ----------------------------------------------------------------------------------------------------------
# PolyLaneNet / SCNN (PyTorch port)
# ----------------------------------------------------------------------------------------------------------
E("polylanenet_train", "train.py", "device_branch_or_abstraction",
  "PolyLaneNet train.py", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
        "torch.cuda.is_available() is False on NPU -> silently trains on CPU"),
  ])

E("scnn_train", "train.py", "explicit_replacement",
  "SCNN_Pytorch train.py (device from cfg.json, nn.DataParallel)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "entry script; needed for the 'npu:0' device string read from cfg.json"),
      C("net = torch.nn.DataParallel(net)", "distributed_framework", "removal", True, None,
        "torch.nn.DataParallel is unsupported on Ascend (would replicate over every visible NPU); single device or DDP"),
  ])

E("scnn_cfg", "experiments/exp10/cfg.json", "explicit_replacement",
  "SCNN_Pytorch experiments/exp*/cfg.json", [
      C('"device": "cuda:0",', "device_type", "replace", True, '"device": "npu:0",',
        "consumed by torch.device(exp_cfg['device']) in train.py/test.py"),
  ])
