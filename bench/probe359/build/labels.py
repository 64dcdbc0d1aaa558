# Labels for probe359 (image forgery detection / manipulation localization, CUDA -> Ascend NPU).
# One label per upstream line a careful porter would edit; see README.md for the policy.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU_NOTE = ("entry script: the project pins torch < 2.5, so the port targets torch 2.1.0 + torch_npu "
                   "2.1.0.postN where the torch_npu backend is not auto-loaded; torch.npu / 'npu' devices do not "
                   "exist until torch_npu is imported")

# ----------------------------------------------------------------------------------------------
# MVSS-Net (dong03/MVSS-Net)
# ----------------------------------------------------------------------------------------------
E("mvss_model", "models/mvssnet.py", "explicit_replacement",
  "dong03/MVSS-Net models/mvssnet.py (ESB/NSB branches, BayarConv2d, Sobel, dual attention head)", [])

E("mvss_resnet", "models/resnet.py", "explicit_replacement",
  "dong03/MVSS-Net models/resnet.py (torchvision-style ResNet-50 backbone with model_zoo weights)", [])

E("mvss_tools", "common/tools.py", "explicit_replacement",
  "dong03/MVSS-Net common/tools.py (inference_single helper)", [
    C("img = img.cuda()", "tensor_to_device", "replace", True,
      "img = img.npu()",
      "the only host-to-device copy on the inference path; the model lives on the NPU after the port"),
])

E("mvss_inference", "inference.py", "explicit_replacement",
  "dong03/MVSS-Net inference.py (argparse --gpu, CUDA_VISIBLE_DEVICES, model.cuda())", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NPU_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
      "the --gpu flag selects the card through the visibility mask (run.sh passes --gpu 2); CUDA_VISIBLE_DEVICES "
      "is ignored by the Ascend runtime, so the job would silently run on NPU 0. Set before the first NPU call, "
      "which is still the case here"),
    C("=model.cuda()", "tensor_to_device", "replace", True,
      "model.npu()", "Module.cuda() needs a CUDA runtime"),
])

E("mvss_utils", "common/utils.py", "explicit_replacement",
  "dong03/MVSS-Net common/utils.py (numpy/sklearn metrics)", [])

E("mvss_requirements", "requirements.txt", "explicit_replacement",
  "dong03/MVSS-Net requirements (torch 1.x pins)", [
    C("torch==1.7.1", "import_torch_npu", "replace", True,
      "torch==2.1.0",
      "no torch_npu release pairs with torch 1.7.1 (knowledge §1.2/1.3); torch_npu wheel must equal the torch version"),
    C("torchvision==0.8.2", "import_torch_npu", "replace", True,
      "torchvision==0.16.0",
      "torchvision 0.8.2 pins torch 1.7.1 and would conflict with torch 2.1.0"),
    C("opencv-python>=4.2.0", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post17",
      "the NPU backend package itself (CANN toolkit installed separately); inserted next to the torch pins"),
])

E("mvss_run", "run.sh", "explicit_replacement",
  "dong03/MVSS-Net evaluation shell loop", [])

# ----------------------------------------------------------------------------------------------
# CAT-Net (mjkwon2021/CAT-Net), HRNet-Semantic-Segmentation lineage
# ----------------------------------------------------------------------------------------------
E("catnet_train", "tools/train.py", "explicit_replacement",
  "mjkwon2021/CAT-Net tools/train.py (HRNet-style: local_rank, nccl, FullModel + DataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NPU_NOTE),
    C("device = torch.device('cuda:{}'.format(args.local_rank))", "device_type", "replace", True,
      "device = torch.device('npu:{}'.format(args.local_rank))", "distributed branch device"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(device)", "raises without a CUDA runtime"),
    C('backend="nccl", init_method="env://",', "dist_backend", "replace", True,
      'backend="hccl", init_method="env://",', "NCCL is not available on Ascend; HCCL is the collective backend"),
    C("=pin_memory=True,", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu',",
      "without a CUDA runtime DataLoader silently drops pinning; performance only"),
    C("pin_memory=config.PIN_MEMORY)", "pin_memory", "replace", False,
      "pin_memory=config.PIN_MEMORY, pin_memory_device='npu')",
      "config-driven pinning; same performance-only reasoning"),
    C("model = nn.DataParallel(model, device_ids=gpus).cuda()", "distributed_framework", "replace", True,
      "model = model.npu()",
      "torch.nn.DataParallel is marked unsupported on Atlas A2/A3 in Ascend's 2.7.1 API list (its scatter path is "
      "CUDA-only); single-card runs become a plain .npu() model, multi-card runs use the DDP branch via torchrun. "
      "The later model.module.model accesses then need unwrapping (not labelled, see README)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "torch.cuda.empty_cache() is a silent no-op when CUDA was never initialised; only affects NPU cache release"),
    C("torch.cuda.empty_cache()  # release validation buffers", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # release validation buffers before saving",
      "same as the per-epoch empty_cache: no-op rather than failure"),
])

E("catnet_infer", "tools/infer.py", "explicit_replacement",
  "mjkwon2021/CAT-Net tools/infer.py (single-GPU inference over input/)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NPU_NOTE),
    C("model = model.cuda()", "tensor_to_device", "replace", True,
      "model = model.npu()", "Module.cuda() needs CUDA"),
    C("image, label = image.cuda(), label.long().cuda()", "tensor_to_device", "replace", True,
      "image, label = image.npu(), label.long().npu()", "inputs must follow the model"),
    C("qtable = qtable.cuda()", "tensor_to_device", "replace", True,
      "qtable = qtable.npu()", "JPEG quantisation table multiplies the DCT features on device"),
])

E("catnet_function", "lib/core/function.py", "explicit_replacement",
  "mjkwon2021/CAT-Net lib/core/function.py (HRNet train/validate loops, reduce_tensor)", [
    C("images = images.cuda()", "tensor_to_device", "replace", True,
      "images = images.npu()", "training batch copy"),
    C("labels = labels.long().cuda()", "tensor_to_device", "replace", True,
      "labels = labels.long().npu()", "training labels copy"),
    C("qtable = qtable.cuda()", "tensor_to_device", "replace", True,
      "qtable = qtable.npu()", "training qtable copy"),
    C("image = image.cuda()", "tensor_to_device", "replace", True,
      "image = image.npu()", "validation batch copy"),
    C("label = label.long().cuda()", "tensor_to_device", "replace", True,
      "label = label.long().npu()", "validation labels copy"),
    C("qtable = qtable.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "qtable = qtable.npu(non_blocking=True)", "validation qtable copy"),
    C("confusion_matrix = torch.from_numpy(confusion_matrix).cuda()", "tensor_to_device", "replace", True,
      "confusion_matrix = torch.from_numpy(confusion_matrix).npu()",
      "the float64 confusion matrix is moved to the device for dist.reduce; .cuda() fails on an NPU host. "
      "fp64 over HCCL is listed by hccl_test's datatypes, so no dtype change is labelled"),
])

E("catnet_utils", "lib/utils/utils.py", "explicit_replacement",
  "mjkwon2021/CAT-Net lib/utils/utils.py (FullModel, AverageMeter, logger, confusion matrix)", [])

E("catnet_network", "lib/models/network_CAT.py", "explicit_replacement",
  "mjkwon2021/CAT-Net lib/models/network_CAT.py (HRNet RGB stream + DCT stream, init_weights)", [
    C("loaded_dict = torch.load(pretrained_rgb)", "tensor_to_device", "replace", False,
      "loaded_dict = torch.load(pretrained_rgb, map_location='cpu')",
      "ImageNet HRNet weights come from another project; whether their storages are CUDA-tagged is unconfirmed, "
      "so map_location='cpu' is defensive"),
    C("loaded_dict = torch.load(pretrained_dct)['state_dict']", "tensor_to_device", "replace", True,
      "loaded_dict = torch.load(pretrained_dct, map_location='cpu')['state_dict']",
      "the DCT-stream checkpoint is a training checkpoint of this code base (state_dict of a .cuda() model), so "
      "its storages are CUDA-tagged and torch.load without map_location fails on a host without CUDA"),
])

E("catnet_inplace_abn", "lib/models/sync_bn/inplace_abn/functions.py", "explicit_replacement",
  "HRNet-Semantic-Segmentation legacy lib/models/sync_bn/inplace_abn/functions.py as carried in CAT-Net-style forks", [
    C('_backend = load(name="inplace_abn",', "custom_cuda_extension", "replace", False,
      "_backend = None  # CUDA-only inplace_abn kernels: use nn.BatchNorm2d + activation on NPU",
      "JIT-builds .cu sources with nvcc at import time; impossible on Ascend. Not required because nothing in the "
      "CAT-Net model imports this package (network_CAT.py uses nn.BatchNorm2d, the InPlaceABNSync import is commented)"),
    C('"inplace_abn_cuda.cu"', "custom_cuda_extension", "removal", False, None,
      "the CUDA source in the extension source list; same dead-code reasoning"),
])

E("catnet_yaml", "experiments/CAT_full.yaml", "explicit_replacement",
  "mjkwon2021/CAT-Net experiments/CAT_full.yaml (GPUS, CUDNN block)", [])

E("catnet_config", "lib/config/default.py", "explicit_replacement",
  "mjkwon2021/CAT-Net lib/config/default.py (yacs defaults, CUDNN block)", [])

E("catnet_env", "environment.yml", "explicit_replacement",
  "CAT-Net-style conda environment (python 3.6, cudatoolkit 10.1, pytorch 1.1)", [
    C("- python=3.6", "import_torch_npu", "replace", True,
      "- python=3.9", "torch 2.1.0 / torch_npu 2.1.0 support Python 3.8-3.11 only"),
    C("- cudatoolkit=10.1", "import_torch_npu", "removal", True, None,
      "CUDA toolkit has no role on Ascend (and no aarch64 conda build of 10.1); CANN is installed on the host"),
    C("- pytorch=1.1.0", "import_torch_npu", "replace", True,
      "- pytorch=2.1.0", "torch must match a torch_npu release"),
    C("- torchvision=0.3.0", "import_torch_npu", "replace", True,
      "- torchvision=0.16.0", "torchvision must match torch 2.1.0"),
    C("- jpegio", "import_torch_npu", "npu_only_addition", True,
      "    - torch-npu==2.1.0.post17", "the NPU backend package, added to the pip section"),
])

# ----------------------------------------------------------------------------------------------
# TruFor (grip-unina/TruFor), test_docker
# ----------------------------------------------------------------------------------------------
E("trufor_test", "test_docker/src/trufor_test.py", "explicit_replacement",
  "grip-unina/TruFor test_docker/src/trufor_test.py (-gpu flag, 'cuda:%d' device string)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NPU_NOTE),
    C("device = 'cuda:%d' % gpu if gpu >= 0 else 'cpu'", "device_type", "replace", True,
      "device = 'npu:%d' % gpu if gpu >= 0 else 'cpu'",
      "single device string used for map_location, model.to and rgb.to"),
    C("np.set_printoptions(formatter=", "compile_mode", "npu_only_addition", False,
      "torch.npu.set_compile_mode(jit_compile=False)",
      "every image has its own size (batch_size=1, arbitrary inputs), i.e. dynamic shapes; msFmkTransplt advises "
      "jit_compile=False for that case. Performance only"),
])

E("trufor_model", "test_docker/src/models/cmx/builder_np_conf.py", "explicit_replacement",
  "grip-unina/TruFor models/cmx/builder_np_conf.py (Noiseprint++ DnCNN + CMX SegFormer + conf/det heads)", [])

E("trufor_dncnn", "test_docker/src/models/DnCNN.py", "explicit_replacement",
  "grip-unina/TruFor models/DnCNN.py (Noiseprint++ extractor)", [])

E("trufor_dockerfile", "test_docker/Dockerfile", "explicit_replacement",
  "grip-unina/TruFor test_docker/Dockerfile (CUDA PyTorch base image)", [
    C("FROM pytorch/pytorch:1.13.1-cuda11.6-cudnn8-runtime", "import_torch_npu", "replace", True,
      "FROM ascendai/pytorch:2.1.0-cann8.0.0-ubuntu22.04",
      "a CUDA runtime image cannot drive Ascend devices; needs an image with CANN + torch + torch_npu "
      "(exact public tag unconfirmed)"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False,
      "ENV ASCEND_VISIBLE_DEVICES=all",
      "read by the Ascend Docker Runtime to decide which davinci devices are mounted; docker_run.sh can pass it "
      "instead, so not required here"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container-toolkit knob, inert on Ascend"),
    C('ENTRYPOINT ["python", "trufor_test.py"]', "env_var", "replace", False,
      'ENTRYPOINT ["bash", "-c", "source /usr/local/Ascend/ascend-toolkit/set_env.sh && exec python trufor_test.py \\"$@\\"", "--"]',
      "CANN environment must be sourced before importing torch_npu; many Ascend base images already export it "
      "(unconfirmed for the chosen image)"),
])

E("trufor_docker_run", "test_docker/docker_run.sh", "explicit_replacement",
  "grip-unina/TruFor test_docker/docker_run.sh (--runtime=nvidia --gpus all)", [
    C("docker run --runtime=nvidia --gpus all \\", "env_var", "replace", True,
      "docker run --runtime=ascend -e ASCEND_VISIBLE_DEVICES=0 \\",
      "without the Ascend runtime (or explicit --device /dev/davinci* mounts) the container sees no NPU and "
      "trufor_test.py fails on 'npu:0'; --gpus needs the NVIDIA toolkit"),
])

E("trufor_yaml", "test_docker/src/trufor_config/trufor.yaml", "explicit_replacement",
  "grip-unina/TruFor yacs experiment file (CUDNN block, GPUS)", [])

# ----------------------------------------------------------------------------------------------
# IML-ViT (SunnyHaze/IML-ViT), MAE-derived training skeleton
# ----------------------------------------------------------------------------------------------
E("imlvit_main", "main_train.py", "explicit_replacement",
  "SunnyHaze/IML-ViT main_train.py (MAE main_pretrain.py skeleton, --device cuda, DDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NPU_NOTE),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu',",
      "the default device string feeds torch.device(args.device); the launcher never overrides it"),
    C("=pin_memory=args.pin_mem,", "pin_memory", "replace", False,
      "pin_memory=args.pin_mem, pin_memory_device='npu',",
      "--pin_mem defaults to True; without a CUDA runtime pinning is silently dropped; performance only"),
    C("pin_memory=args.pin_mem,  # pinned host buffers", "pin_memory", "replace", False,
      "pin_memory=args.pin_mem, pin_memory_device='npu',  # pinned host buffers for the test split as well",
      "same for the test loader"),
])

E("imlvit_misc", "utils/misc.py", "explicit_replacement",
  "SunnyHaze/IML-ViT utils/misc.py (MAE misc: SmoothedValue, MetricLogger, init_distributed_mode, NativeScaler)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "all_reduce over HCCL needs a device tensor; a 'cuda' tensor cannot be created on an NPU host"),
    C("if torch.cuda.is_available():  # peak memory", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():  # peak memory is only reported on NPU runs",
      "only decides whether 'max mem' is in the format string; left unported it simply omits the field "
      "(extra format kwargs are ignored)"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "with the first guard ported, the format string contains {memory}; if this second guard stays on CUDA "
      "the else branch formats without memory= and raises KeyError"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))",
      "torch.cuda.max_memory_allocated() returns 0 when CUDA was never initialised; wrong log value only"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()",
      "SLURM path: torch.cuda.device_count() is 0 on an NPU host, ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)", "per-rank device binding"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True,
      "args.dist_backend = 'hccl'", "NCCL is not available on Ascend"),
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "self._scaler = torch.npu.amp.GradScaler()",
      "a CUDA GradScaler disables itself without CUDA, so fp16 gradients from the NPU autocast region would be "
      "stepped without loss scaling (silent underflow)"),
    C("x_reduce = torch.tensor(x).cuda()", "tensor_to_device", "replace", True,
      "x_reduce = torch.tensor(x).npu()", "all_reduce_mean runs every iteration in multi-card training"),
])

E("imlvit_engine", "engine_train.py", "explicit_replacement",
  "SunnyHaze/IML-ViT engine_train.py (MAE engine: autocast, synchronize)", [
    C("with torch.cuda.amp.autocast():", "amp", "replace", True,
      "with torch.npu.amp.autocast():",
      "a CUDA autocast on an NPU host warns and disables itself, so training silently runs in fp32 "
      "(memory and speed of the documented setup are lost)"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "raises without a CUDA runtime; runs every iteration"),
])

E("imlvit_model", "iml_vit_model.py", "explicit_replacement",
  "SunnyHaze/IML-ViT iml_vit_model.py (windowed ViT + SFPN + predict head, edge loss)", [])

E("imlvit_launch", "train_iml_vit.sh", "explicit_replacement",
  "SunnyHaze/IML-ViT train_iml_vit.sh (CUDA_VISIBLE_DEVICES + torchrun)", [
    C('base_dir="./output_dir"', "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for import torch_npu; unconfirmed whether the user's shell/container already sources it"),
    C("CUDA_VISIBLE_DEVICES=2,3 \\", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=2,3 \\",
      "the mask picks cards 2 and 3; ignored on Ascend, so the two ranks would silently land on NPU 0 and 1"),
])

# ----------------------------------------------------------------------------------------------
# PSCC-Net (proteus1991/PSCC-Net)
# ----------------------------------------------------------------------------------------------
E("pscc_train", "train.py", "explicit_replacement",
  "proteus1991/PSCC-Net train.py (module-level cuda:0 device, three DataParallel nets, CUDA_VISIBLE_DEVICES)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NPU_NOTE),
    C("device = torch.device('cuda:0')", "device_type", "replace", True,
      "device = torch.device('npu:0')", "module-level device global used for every .to(device)"),
    C("FENet = nn.DataParallel(FENet, device_ids=device_ids)", "distributed_framework", "removal", True, None,
      "torch.nn.DataParallel is unsupported on Atlas A2/A3 (CUDA-only scatter); with one visible card it adds nothing"),
    C("SegNet = nn.DataParallel(SegNet, device_ids=device_ids)", "distributed_framework", "removal", True, None,
      "as for FENet"),
    C("ClsNet = nn.DataParallel(ClsNet, device_ids=device_ids)", "distributed_framework", "removal", True, None,
      "as for FENet"),
    C("FENet_checkpoint = torch.load(", "tensor_to_device", "replace", False,
      "FENet_checkpoint = torch.load('{0}/{1}_{2}.pth'.format(FENet_checkpoint_dir, FENet_name, initial_epoch), map_location='cpu')",
      "only a GPU-era resume checkpoint would be CUDA-tagged; NPU-saved checkpoints load back fine"),
    C("SegNet_checkpoint = torch.load(", "tensor_to_device", "replace", False,
      "SegNet_checkpoint = torch.load('{0}/{1}_{2}.pth'.format(SegNet_checkpoint_dir, SegNet_name, initial_epoch), map_location='cpu')",
      "as for FENet"),
    C("ClsNet_checkpoint = torch.load(", "tensor_to_device", "replace", False,
      "ClsNet_checkpoint = torch.load('{0}/{1}_{2}.pth'.format(ClsNet_checkpoint_dir, ClsNet_name, initial_epoch), map_location='cpu')",
      "as for FENet"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", "no-op without CUDA; cache release only"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = gpu_ids", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = gpu_ids",
      "--gpu_ids selects the card through the mask while the code always uses index 0; ignored on Ascend, so "
      "--gpu_ids 3 would silently train on NPU 0"),
])

E("pscc_test", "test.py", "explicit_replacement",
  "proteus1991/PSCC-Net test.py (DataParallel-wrapped nets loading released weights)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NPU_NOTE),
    C("device = torch.device('cuda:0')", "device_type", "replace", True,
      "device = torch.device('npu:0')", "module-level device global"),
    C("net_state_dict = torch.load(weight_path)", "tensor_to_device", "replace", True,
      "net_state_dict = torch.load(weight_path, map_location='cpu')",
      "the released weights are state_dicts of nets trained on .to('cuda:0'), i.e. CUDA-tagged storages; "
      "torch.load without map_location fails on a host without CUDA"),
    C("FENet = nn.DataParallel(FENet, device_ids=device_ids)", "distributed_framework", "removal", True, None,
      "DataParallel unsupported on Atlas A2/A3; the 'module.' key prefix of the released weights then has to be "
      "stripped when loading (not labelled, see README)"),
    C("SegNet = nn.DataParallel(SegNet, device_ids=device_ids)", "distributed_framework", "removal", True, None,
      "as for FENet"),
    C("ClsNet = nn.DataParallel(ClsNet, device_ids=device_ids)", "distributed_framework", "removal", True, None,
      "as for FENet"),
])

E("pscc_config", "utils/config.py", "explicit_replacement",
  "proteus1991/PSCC-Net utils/config.py (argparse, --gpu_ids)", [])

E("pscc_nlc", "models/NLCDetection.py", "explicit_replacement",
  "proteus1991/PSCC-Net models/NLCDetection.py (SCCM non-local mask heads)", [])

# ----------------------------------------------------------------------------------------------
# IMDL-BenCo (scu-zjz/IMDLBenCo)
# ----------------------------------------------------------------------------------------------
E("benco_train", "IMDLBenCo/training_scripts/train.py", "explicit_replacement",
  "scu-zjz/IMDLBenCo training_scripts/train.py (registry models, torch.amp GradScaler/autocast, DDP + SyncBN)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NPU_NOTE),
    C("device = torch.device('cuda', args.gpu) if args.distributed else torch.device('cuda')", "device_type",
      "replace", True,
      "device = torch.device('npu', args.gpu) if args.distributed else torch.device('npu')",
      "both arms name CUDA"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "lazily queued no-op without CUDA; torch.manual_seed on the line above is expected to seed the NPU "
      "generators too (unconfirmed in the knowledge base)"),
    C('print(f"Running on {torch.cuda.get_device_name(device)} "', "torch_cuda_api", "replace", True,
      'print(f"Running on {torch.npu.get_device_name(device)} "',
      "raises without a CUDA runtime (rank 0 only, but that kills the job)"),
    C('f"({torch.cuda.get_device_properties(device).total_memory', "torch_cuda_api", "replace", True,
      'f"({torch.npu.get_device_properties(device).total_memory / 2**30:.1f} GiB)")',
      "total_memory is one of the properties torch_npu reports"),
    C("pin_memory=args.pin_mem,", "pin_memory", "replace", False,
      "pin_memory=args.pin_mem, pin_memory_device='npu',",
      "pinning silently dropped without CUDA; performance only"),
    C('scaler=torch.amp.GradScaler("cuda", enabled=args.use_amp and not args.bf16))', "amp", "replace", True,
      "scaler=torch.npu.amp.GradScaler(enabled=args.use_amp and not args.bf16))",
      "a CUDA-bound scaler disables itself on an NPU host: fp16 runs (--use_amp in the launcher) would step "
      "unscaled fp16 gradients"),
    C('autocast_ctx = lambda: torch.autocast(device_type="cuda"', "amp", "replace", True,
      'autocast_ctx = lambda: torch.autocast(device_type="npu", dtype=amp_dtype, enabled=args.use_amp)',
      "autocast for device_type 'cuda' does not cover NPU ops: --use_amp would silently train in fp32"),
    C("'max_mem_GiB': torch.cuda.max_memory_allocated() / 2 ** 30}", "torch_cuda_api", "replace", False,
      "'max_mem_GiB': torch.npu.max_memory_allocated() / 2 ** 30}",
      "returns 0 without CUDA; logged value only"),
])

E("benco_objectformer", "IMDLBenCo/model_zoo/object_former/object_former.py", "explicit_replacement",
  "scu-zjz/IMDLBenCo model_zoo/object_former (ObjectFormer re-implementation with a frequency branch)", [
    C("freq = torch.fft.fftshift(freq, dim=(-2, -1))", "unsupported_op_workaround", "replace", False,
      "freq = torch.roll(freq, shifts=(H // 2, W // 2), dims=(-2, -1))",
      "torch.fft.fftshift is ✘ in Ascend's 2.7.1 API list and in msFmkTransplt's unsupported list, yet fft_fftshift "
      "appears in the torch2.7.1/7.3.0 native-op list; torch.roll is ✔. Unconfirmed whether a change is needed"),
    C("freq = torch.fft.ifftshift(freq, dim=(-2, -1))", "unsupported_op_workaround", "replace", False,
      "freq = torch.roll(freq, shifts=(-(H // 2), -(W // 2)), dims=(-2, -1))",
      "same for ifftshift (inverse shift)"),
])

E("benco_f1", "IMDLBenCo/evaluation/F1.py", "explicit_replacement",
  "scu-zjz/IMDLBenCo evaluation/F1.py (pixel/image F1 evaluators with all_gather)", [])

E("benco_launch", "runs/demo_train_object_former.sh", "explicit_replacement",
  "scu-zjz/IMDLBenCo runs/demo_train_*.sh (torchrun launcher)", [
    C("CUDA_VISIBLE_DEVICES=0,1,2,3 \\", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3 \\",
      "4 ranks on cards 0-3: local ranks already map to npu:0-3, so ignoring the mask changes nothing; "
      "port for clarity"),
])
