# Labels for probe261: OOD detection / open-set recognition research code (CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---- shared notes -------------------------------------------------------------------------------
IMPORT_NOTE = ("entry script: torch_npu must be imported (or autoloaded, torch_npu>=2.5.1) before any "
               "npu device/API is used")
CUDA_CALL = "Tensor/Module.cuda() has no CUDA device on an Ascend host; move to the NPU instead"
SEED_NOTE = ("torch.cuda.manual_seed* is silently ignored without CUDA, so the NPU RNG stays unseeded; "
             "reproducibility only, nothing fails")
EMPTY_CACHE = "torch.cuda.empty_cache() is a silent no-op when CUDA was never initialised; NPU cache is not freed"
SET_DEVICE = "torch.cuda.set_device needs a CUDA build/device and raises on an Ascend host"
DP_NOTE = "torch.nn.DataParallel is marked unsupported on Atlas A2/A3 (Ascend API list); use DDP or single device"
CVD_NOTE = ("CUDA_VISIBLE_DEVICES is not read by the Ascend runtime; without ASCEND_RT_VISIBLE_DEVICES the job "
            "silently sees all NPUs and lands on device 0")
SET_ENV = ("CANN environment (libascendcl/libhccl, op tiling paths) must be sourced before python starts, "
           "otherwise torch_npu fails to load")
NOOP_MODULE_CUDA = ("module has no parameters/buffers, so .cuda() touches no tensor and is a silent no-op; "
                    "changed for consistency only")


def cuda(sub, ported, note=CUDA_CALL, required=True):
    return C(sub, "tensor_to_device", "replace", required, ported, note)


def imp(anchor):
    return C(anchor, "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE)


# ================================================================================================
# OpenOOD (Jingkang50/OpenOOD) style framework
# ================================================================================================
E("openood_main", "main.py", "explicit_replacement",
  "OpenOOD main.py (config-driven entry, launch() for multi-GPU)", [
      imp("=import torch"),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(seed)", SEED_NOTE),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)", SEED_NOTE),
      C("torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", True,
        "print('device   : {}'.format(torch.npu.get_device_name(0)))",
        "get_device_name initialises CUDA and raises on an NPU host (only when num_gpus > 0, i.e. always)"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(local_rank)", SET_DEVICE),
  ])

E("openood_launch", "openood/utils/launch.py", "explicit_replacement",
  "OpenOOD utils/launch.py (detectron2 launch: mp.spawn + NCCL)", [
      C("assert torch.cuda.is_available(), \\", "torch_cuda_api", "replace", True,
        "assert torch.npu.is_available(), \\",
        "torch.cuda.is_available() is False on an Ascend host, so every spawned worker dies on the assert"),
      C("os.environ.setdefault('NCCL_ASYNC_ERROR_HANDLING', '1')", "env_var", "replace", False,
        "os.environ.setdefault('HCCL_ASYNC_ERROR_HANDLING', '1')",
        "NCCL_* variables are ignored by HCCL; the HCCL watchdog equivalent is HCCL_ASYNC_ERROR_HANDLING "
        "(defaults to 1 per MindCluster docs), so this is a no-op either way"),
      C("backend='NCCL',", "dist_backend", "replace", True, "backend='hccl',",
        "NCCL backend does not exist with torch_npu; collectives on NPU tensors need HCCL"),
      C("assert num_gpus_per_machine <= torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "assert num_gpus_per_machine <= torch.npu.device_count()",
        "torch.cuda.device_count() returns 0 on an Ascend host, so the assert always fails"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(local_rank)", SET_DEVICE),
  ])

E("openood_comm", "openood/utils/comm.py", "explicit_replacement",
  "OpenOOD utils/comm.py (detectron2 comm helpers)", [
      C("if dist.get_backend() == dist.Backend.NCCL:", "dist_backend", "replace", False,
        "if dist.get_backend() in (dist.Backend.NCCL, 'hccl'):",
        "with hccl the comparison is False and the plain dist.barrier() branch runs, which works; widening it "
        "only restores the device_ids hint"),
      C("dist.barrier(device_ids=[torch.cuda.current_device()])", "torch_cuda_api", "replace", False,
        "dist.barrier(device_ids=[torch.npu.current_device()])",
        "unreachable on NPU unless the NCCL comparison above is widened; then it must name the NPU device"),
      C("if dist.get_backend() == 'nccl':", "dist_backend", "replace", True,
        "if dist.get_backend() in ('nccl', 'hccl'):",
        "backend-string comparison is not rewritten by torch_npu (mstt README); with hccl it returns the "
        "WORLD group and _serialize_to_tensor then trips its backend assert, breaking comm.gather/all_gather"),
      C("assert backend in ['gloo', 'nccl']", "dist_backend", "replace", False,
        "assert backend in ['gloo', 'nccl', 'hccl']",
        "only reached with hccl if a caller passes an explicit hccl group (the default path gets gloo once "
        "the comparison above is fixed); defensive"),
      C("device = torch.device('cpu' if backend == 'gloo' else 'cuda')", "device_type", "replace", False,
        "device = torch.device('cpu' if backend == 'gloo' else 'npu')",
        "same path as the assert above: only used for non-gloo groups, which the default path no longer sees"),
  ])

E("openood_net_utils", "openood/networks/utils.py", "explicit_replacement",
  "OpenOOD networks/utils.py get_network() (checkpoint load, DDP wrap, net.cuda())", [
      C("subnet.load_state_dict(torch.load(checkpoint),", "device_type", "replace", True,
        "subnet.load_state_dict(torch.load(checkpoint, map_location='cpu'),",
        "OpenOOD checkpoints are state_dicts of CUDA models; without map_location torch.load tries to "
        "restore them onto CUDA and raises"),
      C("ckpt = torch.load(network_config.checkpoint)", "device_type", "replace", True,
        "ckpt = torch.load(network_config.checkpoint, map_location='cpu')",
        "same: CUDA-saved checkpoint deserialised without map_location"),
      cuda("=subnet.cuda(),", "subnet.npu(),"),
      cuda("=net.cuda(),", "net.npu(),"),
      cuda("=subnet.cuda()", "subnet.npu()"),
      cuda("=net.cuda()", "net.npu()"),
      C("torch.cuda.manual_seed(1)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(1)", SEED_NOTE),
  ])

E("openood_ood_evaluator", "openood/evaluators/ood_evaluator.py", "explicit_replacement",
  "OpenOOD evaluators/ood_evaluator.py", [
      cuda("data = batch['data'].cuda()", "data = batch['data'].npu()"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
  ])

E("openood_odin_pp", "openood/postprocessors/odin_postprocessor.py", "explicit_replacement",
  "OpenOOD postprocessors/odin_postprocessor.py", [
      cuda("data = batch['data'].cuda()", "data = batch['data'].npu()"),
      cuda("label = batch['label'].cuda()", "label = batch['label'].npu()"),
  ])

E("openood_mds_pp", "openood/postprocessors/mds_postprocessor.py", "explicit_replacement",
  "OpenOOD postprocessors/mds_postprocessor.py (Mahalanobis, sklearn covariance)", [
      cuda("data, labels = batch['data'].cuda(), batch['label']", "data, labels = batch['data'].npu(), batch['label']"),
  ])

E("openood_knn_pp", "openood/postprocessors/knn_postprocessor.py", "explicit_replacement",
  "OpenOOD postprocessors/knn_postprocessor.py (deep KNN with faiss)", [
      C("res = faiss.StandardGpuResources()", "custom_cuda_extension", "removal", True, None,
        "faiss GPU resources need a CUDA device (and faiss-gpu is not installable alongside torch_npu); "
        "the index is built on CPU with faiss-cpu instead"),
      C("res.setTempMemory(512 * 1024 * 1024)", "custom_cuda_extension", "removal", True, None,
        "belongs to the removed GPU resources object"),
      C("cfg = faiss.GpuIndexFlatConfig()", "custom_cuda_extension", "removal", True, None,
        "GpuIndexFlatConfig only exists in faiss-gpu builds"),
      C("cfg.device = self.gpu_id", "custom_cuda_extension", "removal", True, None,
        "GPU index config dropped with the GPU index"),
      C("cfg.useFloat16 = self.use_float16", "custom_cuda_extension", "removal", True, None,
        "GPU index config dropped with the GPU index"),
      C("return faiss.GpuIndexFlatL2(res, dim, cfg)", "custom_cuda_extension", "replace", True,
        "return faiss.IndexFlatL2(dim)",
        "CPU flat L2 index gives identical neighbours; slower on ImageNet-scale banks"),
      cuda("data = batch['data'].cuda()", "data = batch['data'].npu()"),
  ])

E("openood_openmax_pp", "openood/postprocessors/openmax_postprocessor.py", "explicit_replacement",
  "OpenOOD postprocessors/openmax_postprocessor.py (libmr Weibull fitting)", [
      C("self.nc, id_loader_dict['train'], device='cuda', net=net)", "device_type", "replace", True,
        "self.nc, id_loader_dict['train'], device='npu', net=net)",
        "hard-coded 'cuda' device string is passed to .to(device) for every training batch"),
  ])

E("openood_oe_trainer", "openood/trainers/oe_trainer.py", "explicit_replacement",
  "OpenOOD trainers/oe_trainer.py (Outlier Exposure)", [
      cuda("data = torch.cat((batch['data'], unlabeled_batch['data'])).cuda()",
           "data = torch.cat((batch['data'], unlabeled_batch['data'])).npu()"),
      cuda("batch['label'].cuda())", "batch['label'].npu())"),
  ])

E("openood_eval_api", "openood/evaluation_api/evaluator.py", "explicit_replacement",
  "OpenOOD v1.5 evaluation_api/evaluator.py (unified Evaluator)", [
      cuda("data = batch['data'].cuda()", "data = batch['data'].npu()"),
  ])

E("openood_sh_odin", "scripts/ood/odin/cifar10_test_ood_odin.sh", "explicit_replacement",
  "OpenOOD scripts/ood/odin/*.sh launcher", [
      C("=#!/bin/bash", "env_var", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV),
      C("export CUDA_VISIBLE_DEVICES=${GPU_ID:-0}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${GPU_ID:-0}", CVD_NOTE),
  ])

E("openood_sh_mds", "scripts/ood/mds/imagenet_test_ood_mds.sh", "explicit_replacement",
  "OpenOOD scripts/ood/mds/*.sh launcher (ImageNet)", [
      C("=set -e", "env_var", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV),
      C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "torch_cuda_api", "replace", True,
        "npu-smi info",
        "nvidia-smi does not exist on an Ascend host; under set -e the script aborts here"),
      C("CUDA_VISIBLE_DEVICES=${GPU_IDS} PYTHONPATH='.':$PYTHONPATH \\", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${GPU_IDS} PYTHONPATH='.':$PYTHONPATH \\", CVD_NOTE),
      C("CUDA_VISIBLE_DEVICES=${GPU_IDS} python scripts/eval_ood_imagenet.py \\", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${GPU_IDS} python scripts/eval_ood_imagenet.py \\", CVD_NOTE),
  ])

E("openood_sh_oe", "scripts/basics/cifar10/train_oe_multigpu.sh", "explicit_replacement",
  "OpenOOD scripts/basics/*/train_*.sh multi-GPU launcher", [
      C("=#!/bin/bash", "env_var", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3", CVD_NOTE),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
        "NCCL_DEBUG is ignored by HCCL; CANN log level is the closest knob (logging only)"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
        "workaround for a PCIe-P2P bug on the NVIDIA box; HCCL ignores it"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
        "NCCL InfiniBand switch; HCCL ignores it"),
      C("CUDA_VISIBLE_DEVICES=0 PYTHONPATH='.':$PYTHONPATH \\", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=0 PYTHONPATH='.':$PYTHONPATH \\", CVD_NOTE),
  ])

E("openood_requirements", "requirements.txt", "explicit_replacement",
  "OpenOOD requirements.txt", [
      C("--extra-index-url https://download.pytorch.org/whl/cu117", "import_torch_npu", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "torch_npu docs install CPU torch from the whl/cpu index on x86 (plain PyPI on aarch64); the cu117 "
        "index only adds CUDA wheels"),
      C("torch==1.13.1+cu117", "import_torch_npu", "replace", True, "torch==2.1.0",
        "there is no torch_npu release for torch 1.13 and the +cu117 local version cannot pair with torch_npu; "
        "torch must equal the torch_npu wheel's torch version"),
      C("torchvision>=0.14.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "torch_npu wheel pinned to the same torch version (added after the torch lines)"),
      C("faiss-gpu>=1.7.2", "custom_cuda_extension", "replace", True, "faiss-cpu>=1.7.2",
        "faiss-gpu is a CUDA build (no Ascend backend, no aarch64 wheel); KNN/NPOS/CIDER postprocessors use "
        "the CPU index after the port"),
  ])

E("openood_setup", "setup.py", "explicit_replacement",
  "OpenOOD setup.py", [
      C("'torch>=1.13.1',", "import_torch_npu", "npu_only_addition", False, "'torch-npu>=2.1.0',",
        "library install_requires; users usually install torch/torch_npu themselves, so optional"),
      C("'faiss-gpu>=1.7.2',", "custom_cuda_extension", "replace", True, "'faiss-cpu>=1.7.2',",
        "faiss-gpu is a CUDA build and is not installable/usable on Ascend hosts"),
      C("'bench': ['nvidia-ml-py>=11.525', 'thop'],", "custom_cuda_extension", "replace", False,
        "'bench': ['thop'],",
        "NVML bindings install fine but have no NPU to query; extra is dead weight"),
  ])

E("openood_dockerfile", "Dockerfile", "explicit_replacement",
  "OpenOOD-style Dockerfile on nvidia/cuda base", [
      C("FROM nvidia/cuda:11.7.1-cudnn8-devel-ubuntu20.04", "env_var", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "CUDA base image has no CANN toolkit/driver libs; torch_npu needs a CANN image (set_env exports baked in)"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "NVIDIA container runtime hint; NPUs are passed with --device /dev/davinciN or Ascend Docker Runtime"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container runtime hint; ignored on Ascend"),
      C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None,
        "only affects nvcc builds of extensions; nothing is compiled for CUDA any more"),
      C("RUN pip install --no-cache-dir torch==1.13.1+cu117 torchvision==0.14.1+cu117 \\", "import_torch_npu",
        "replace", True,
        "RUN pip install --no-cache-dir torch==2.1.0 torch-npu==2.1.0.post12 torchvision==0.16.0 \\",
        "CUDA torch build with no matching torch_npu; install CPU torch + the paired torch_npu wheel"),
      C("--extra-index-url https://download.pytorch.org/whl/cu117", "import_torch_npu", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; CPU index on x86 per torch_npu install docs"),
      C("RUN python -c \"import torch; assert torch.version.cuda is not None, torch.__version__\"",
        "import_torch_npu", "replace", True,
        "RUN python -c \"import torch, torch_npu; print(torch.__version__, torch_npu.__version__)\"",
        "torch.version.cuda is None for the CPU torch that torch_npu uses, so the build step fails"),
  ])

# ================================================================================================
# ODIN (facebookresearch/odin)
# ================================================================================================
E("odin_caldata", "code/calData.py", "explicit_replacement",
  "facebookresearch/odin code/calData.py", [
      cuda("labels = Variable(torch.LongTensor([maxIndexTemp]).cuda(CUDA_DEVICE))",
           "labels = Variable(torch.LongTensor([maxIndexTemp]).npu(CUDA_DEVICE))"),
      cuda("=inputs = Variable(images.cuda(CUDA_DEVICE), requires_grad=True)",
           "inputs = Variable(images.npu(CUDA_DEVICE), requires_grad=True)"),
      cuda("=inputs = Variable(images.cuda(CUDA_DEVICE), requires_grad = True)",
           "inputs = Variable(images.npu(CUDA_DEVICE), requires_grad = True)"),
      cuda("requires_grad=True)  # in-dist (Gaussian run)",
           "inputs = Variable(images.npu(CUDA_DEVICE), requires_grad=True)  # in-dist (Gaussian run)"),
      cuda("requires_grad=True)  # gaussian noise",
           "inputs = Variable(images.npu(CUDA_DEVICE), requires_grad=True)  # gaussian noise"),
      cuda("requires_grad=True)  # in-dist (uniform run)",
           "inputs = Variable(images.npu(CUDA_DEVICE), requires_grad=True)  # in-dist (uniform run)"),
      C("images = torch.cuda.FloatTensor(1, 3, 32, 32).uniform_(0, 1)", "torch_cuda_api", "replace", True,
        "images = torch.npu.FloatTensor(1, 3, 32, 32).uniform_(0, 1)",
        "legacy torch.cuda.FloatTensor constructor is unavailable without CUDA"),
  ])

E("odin_cal", "code/cal.py", "explicit_replacement",
  "facebookresearch/odin code/cal.py + main.py (argparse, torch.cuda.device)", [
      imp("=import torch"),
      C("net1 = torch.load(\"../models/{}.pth\".format(nnName))", "device_type", "replace", True,
        "net1 = torch.load(\"../models/{}.pth\".format(nnName), map_location='cpu')",
        "whole pickled nn.Module saved from the GPU; unpickling restores CUDA storages and raises"),
      cuda("net1.cuda(CUDA_DEVICE)", "net1.npu(CUDA_DEVICE)"),
      C("with torch.cuda.device(args.gpu):", "torch_cuda_api", "replace", True,
        "with torch.npu.device(args.gpu):",
        "torch.cuda.device context exchanges the CUDA device on enter and raises without CUDA"),
  ])

# ================================================================================================
# deep_Mahalanobis_detector (pokaxpoka)
# ================================================================================================
E("maha_lib_generation", "lib_generation.py", "explicit_replacement",
  "deep_Mahalanobis_detector lib_generation.py", [
      cuda("idx = torch.LongTensor([ch]).cuda()", "idx = torch.LongTensor([ch]).npu()"),
      cuda("=data = data.cuda()", "data = data.npu()"),
      cuda("equal_flag = pred.eq(target.cuda()).cpu()", "equal_flag = pred.eq(target.npu()).cpu()"),
      cuda("temp_list = torch.Tensor(num_classes, int(num_feature)).cuda()",
           "temp_list = torch.Tensor(num_classes, int(num_feature)).npu()"),
      cuda("temp_precision = torch.from_numpy(temp_precision).float().cuda()",
           "temp_precision = torch.from_numpy(temp_precision).float().npu()"),
      cuda("data, target = data.cuda(), target.cuda()", "data, target = data.npu(), target.npu()"),
      cuda("data = Variable(data.cuda(), requires_grad=True)", "data = Variable(data.npu(), requires_grad=True)"),
      cuda("target = test_label[total:total + batch_size].cuda()",
           "target = test_label[total:total + batch_size].npu()"),
      cuda("data = test_data[total:total + batch_size].cuda()", "data = test_data[total:total + batch_size].npu()"),
      cuda("data = test_clean_data[total:total + batch_size].cuda()",
           "data = test_clean_data[total:total + batch_size].npu()"),
      cuda("adv_data = test_adv_data[total:total + batch_size].cuda()",
           "adv_data = test_adv_data[total:total + batch_size].npu()"),
      cuda("noisy_data = test_noisy_data[total:total + batch_size].cuda()",
           "noisy_data = test_noisy_data[total:total + batch_size].npu()"),
      cuda("target = test_label[total:total+batch_size].cuda()", "target = test_label[total:total+batch_size].npu()"),
  ])

E("maha_generate", "OOD_Generate_Mahalanobis.py", "explicit_replacement",
  "deep_Mahalanobis_detector OOD_Generate_Mahalanobis.py", [
      imp("=import torch"),
      C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(args.seed)", SEED_NOTE),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.gpu)", SET_DEVICE),
      C("model.load_state_dict(torch.load(pre_trained_net, map_location=\"cuda:\"", "device_type", "replace", True,
        "model.load_state_dict(torch.load(pre_trained_net, map_location=\"npu:\" + str(args.gpu)))",
        "map_location names a CUDA device"),
      C("model = torch.load(pre_trained_net, map_location=\"cuda:\"", "device_type", "replace", True,
        "model = torch.load(pre_trained_net, map_location=\"npu:\" + str(args.gpu))",
        "map_location names a CUDA device"),
      C("map_location = \"cuda:\" + str(args.gpu)", "device_type", "replace", True,
        "model.load_state_dict(torch.load(pre_trained_net, map_location = \"npu:\" + str(args.gpu)))",
        "map_location names a CUDA device"),
      cuda("=model.cuda()", "model.npu()"),
      cuda("temp_x = torch.rand(2, 3, 32, 32).cuda()", "temp_x = torch.rand(2, 3, 32, 32).npu()"),
  ])

# ================================================================================================
# energy_ood (wetliu) / outlier-exposure (hendrycks)
# ================================================================================================
E("energy_train", "CIFAR/train.py", "explicit_replacement",
  "wetliu/energy_ood CIFAR/train.py (energy fine-tuning on top of OE code)", [
      imp("=import torch"),
      C("net.load_state_dict(torch.load(model_name))", "device_type", "replace", True,
        "net.load_state_dict(torch.load(model_name, map_location='cpu'))",
        "pretrained WRN snapshots were saved from CUDA models; loading without map_location raises"),
      C("net = torch.nn.DataParallel(net, device_ids=list(range(args.ngpu)))", "distributed_framework",
        "replace", True,
        "net = torch.nn.parallel.DistributedDataParallel(net.npu(), device_ids=[local_rank])",
        DP_NOTE + " (reached with --ngpu > 1)"),
      cuda("=net.cuda()", "net.npu()"),
      C("torch.cuda.manual_seed(1)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(1)", SEED_NOTE),
      cuda("data, target = data.cuda(), target.cuda()", "data, target = data.npu(), target.npu()"),
      cuda("data, target = data.cuda(non_blocking=True), target.cuda(non_blocking=True)",
           "data, target = data.npu(non_blocking=True), target.npu(non_blocking=True)"),
  ])

E("energy_test", "CIFAR/test.py", "explicit_replacement",
  "wetliu/energy_ood CIFAR/test.py (MSP / energy / ODIN / Mahalanobis evaluation)", [
      imp("=import torch"),
      C("net = torch.nn.DataParallel(net, device_ids=list(range(args.ngpu)))", "distributed_framework",
        "replace", True, "pass  # DataParallel unsupported on NPU; evaluate on one device",
        DP_NOTE + " (reached with --ngpu > 1)"),
      cuda("=net.cuda()", "net.npu()"),
      cuda("=data = data.cuda()", "data = data.npu()"),
      cuda("temp_x = temp_x.cuda()", "temp_x = temp_x.npu()"),
  ])

# ================================================================================================
# GradNorm (deeplearning-wisc/gradnorm_ood)
# ================================================================================================
E("gradnorm_test_ood", "test_ood.py", "explicit_replacement",
  "deeplearning-wisc/gradnorm_ood test_ood.py (BiT ImageNet, MSP/ODIN/Energy/Maha/KL/GradNorm)", [
      imp("=import torch"),
      C("num_workers=args.workers, pin_memory=torch.cuda.is_available(), drop_last=False)", "pin_memory",
        "replace", False, "num_workers=args.workers, pin_memory=True, drop_last=False)",
        "evaluates to False on an NPU host, so host memory is not pinned; performance only (unconfirmed how "
        "much torch_npu gains from pinning here)"),
      C("=num_workers=args.workers, pin_memory=torch.cuda.is_available())", "pin_memory", "replace", False,
        "num_workers=args.workers, pin_memory=True)", "same as the ID loader: pinning silently disabled"),
      C("=m = torch.nn.Softmax(dim=-1).cuda()", "tensor_to_device", "replace", False,
        "m = torch.nn.Softmax(dim=-1).npu()", NOOP_MODULE_CUDA),
      cuda("=x = x.cuda()", "x = x.npu()"),
      C("criterion = torch.nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False,
        "criterion = torch.nn.CrossEntropyLoss().npu()", NOOP_MODULE_CUDA),
      cuda("=x = Variable(x.cuda(), requires_grad=True)", "x = Variable(x.npu(), requires_grad=True)"),
      cuda("labels = Variable(torch.LongTensor(maxIndexTemp).cuda())",
           "labels = Variable(torch.LongTensor(maxIndexTemp).npu())"),
      cuda("x = x.cuda(non_blocking=True)", "x = x.npu(non_blocking=True)"),
      cuda("inputs = x.cuda()", "inputs = x.npu()"),
      C("softmax = torch.nn.Softmax(dim=-1).cuda()", "tensor_to_device", "replace", False,
        "softmax = torch.nn.Softmax(dim=-1).npu()", NOOP_MODULE_CUDA),
      cuda("images = x.cuda()", "images = x.npu()"),
      C("logsoftmax = torch.nn.LogSoftmax(dim=-1).cuda()", "tensor_to_device", "replace", False,
        "logsoftmax = torch.nn.LogSoftmax(dim=-1).npu()", NOOP_MODULE_CUDA),
      cuda("=inputs = Variable(x.cuda(), requires_grad=True)", "inputs = Variable(x.npu(), requires_grad=True)"),
      cuda("targets = torch.ones((inputs.shape[0], num_classes)).cuda()",
           "targets = torch.ones((inputs.shape[0], num_classes)).npu()"),
      cuda("sample_mean = [s.cuda() for s in sample_mean]", "sample_mean = [s.npu() for s in sample_mean]"),
      cuda("precision = [p.cuda() for p in precision]", "precision = [p.npu() for p in precision]"),
      cuda("temp_x = Variable(temp_x).cuda()", "temp_x = Variable(temp_x).npu()"),
      C("state_dict = torch.load(args.model_path)", "device_type", "replace", True,
        "state_dict = torch.load(args.model_path, map_location='cpu')",
        "BiT finetuned checkpoint was saved from GPU training; loading restores CUDA storages and raises"),
      C("model = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
        "pass  # DataParallel unsupported on NPU; single-device evaluation", DP_NOTE),
      cuda("model = model.cuda()", "model = model.npu()"),
  ])

# ================================================================================================
# ARPL (iCGY96/ARPL) open-set recognition
# ================================================================================================
E("arpl_osr", "osr.py", "explicit_replacement",
  "iCGY96/ARPL osr.py (open-set recognition driver)", [
      imp("=import torch"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = options['gpu']", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = options['gpu']", CVD_NOTE),
      C("use_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "use_gpu = torch.npu.is_available()",
        "False on an NPU host: the whole run silently falls back to CPU (model, loss, every batch)"),
      C("torch.cuda.manual_seed_all(options['seed'])", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(options['seed'])", SEED_NOTE),
      C("net = nn.DataParallel(net).cuda()", "distributed_framework", "replace", True, "net = net.npu()",
        DP_NOTE + "; also a .cuda() move"),
      cuda("criterion = criterion.cuda()", "criterion = criterion.npu()",
           note="ARPLoss holds learnable reciprocal points (parameters), so this is a real move"),
      C("netG = nn.DataParallel(netG,", "distributed_framework", "replace", True, "netG = netG.npu()",
        DP_NOTE + " (--cs only)"),
      C("netD = nn.DataParallel(netD,", "distributed_framework", "replace", True, "netD = netD.npu()",
        DP_NOTE + " (--cs only)"),
      cuda("fixed_noise.cuda()", "fixed_noise = fixed_noise.npu()",
           note="upstream discards the result (a no-op on GPU), but .cuda() itself raises without CUDA (--cs only)"),
  ])

E("arpl_core_train", "core/train.py", "explicit_replacement",
  "iCGY96/ARPL core/train.py (train / train_cs with confusing samples)", [
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
      cuda("data, labels = data.cuda(), labels.cuda()", "data, labels = data.npu(), labels.npu()"),
      C("torch.cuda.empty_cache()  # GAN", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()  # GAN + classifier share one card", EMPTY_CACHE),
      cuda("data = data.cuda(non_blocking=True)", "data = data.npu(non_blocking=True)"),
      cuda("labels = labels.cuda(non_blocking=True)", "labels = labels.npu(non_blocking=True)"),
      cuda("gan_target = gan_target.cuda()", "gan_target = gan_target.npu()"),
      cuda("=noise = torch.FloatTensor(data.size(0), options['nz'], options['ns'], options['ns']).normal_(0, 1).cuda()",
           "noise = torch.FloatTensor(data.size(0), options['nz'], options['ns'], options['ns']).normal_(0, 1).npu()"),
      cuda("noise = noise.cuda()", "noise = noise.npu()"),
      cuda("x, y = net(fake, True, 1 * torch.ones(data.shape[0], dtype=torch.long).cuda())",
           "x, y = net(fake, True, 1 * torch.ones(data.shape[0], dtype=torch.long).npu())"),
      cuda("x, y = net(data, True, 0 * torch.ones(data.shape[0], dtype=torch.long).cuda())",
           "x, y = net(data, True, 0 * torch.ones(data.shape[0], dtype=torch.long).npu())"),
      cuda("normal_(0, 1).cuda()  # fresh z",
           "noise = torch.FloatTensor(data.size(0), options['nz'], options['ns'], options['ns']).normal_(0, 1).npu()  # fresh z"),
      cuda("=x, y = net(fake, True, torch.ones(data.shape[0], dtype=torch.long).cuda())",
           "x, y = net(fake, True, torch.ones(data.shape[0], dtype=torch.long).npu())"),
  ])

# ================================================================================================
# CIDER (deeplearning-wisc/cider), SupContrast/ImageNet-example style DDP trainer
# ================================================================================================
E("cider_train", "train_cider.py", "explicit_replacement",
  "deeplearning-wisc/cider train_cider.py (mp.spawn + DDP + prototype losses)", [
      imp("=import torch"),
      C("parser.add_argument('--dist-backend', default='nccl'", "dist_backend", "replace", True,
        "parser.add_argument('--dist-backend', default='hccl', type=str, help='distributed backend')",
        "default backend is passed straight to init_process_group"),
      cuda("labels = torch.arange(0, num_cls).cuda()", "labels = torch.arange(0, num_cls).npu()"),
      cuda("mask = (1 - torch.eq(labels, labels.T).float()).cuda()",
           "mask = (1 - torch.eq(labels, labels.T).float()).npu()"),
      cuda("torch.arange(num_cls).view(-1, 1).cuda(),", "torch.arange(num_cls).view(-1, 1).npu(),"),
      cuda("prototypes = torch.zeros(self.args.n_cls, self.args.feat_dim).cuda()",
           "prototypes = torch.zeros(self.args.n_cls, self.args.feat_dim).npu()"),
      cuda("input, target = input.cuda(), target.cuda()", "input, target = input.npu(), target.npu()"),
      C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "ngpus_per_node = torch.npu.device_count()",
        "returns 0 on an NPU host: mp.spawn gets nprocs=0 and the batch-size split divides by zero"),
      C("model = apex.parallel.convert_syncbn_model(model)", "distributed_framework", "replace", False,
        "model = nn.SyncBatchNorm.convert_sync_batchnorm(model)",
        "only with --syncBN; NVIDIA apex is not installable on NPU and the guarded import hides that until "
        "here (unconfirmed whether Ascend's apex patch ships apex.parallel)"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.gpu)", SET_DEVICE),
      cuda("=model.cuda(args.gpu)", "model.npu(args.gpu)"),
      cuda("=model.cuda()", "model.npu()"),
      C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)", SET_DEVICE),
      cuda("=model = model.cuda(args.gpu)", "model = model.npu(args.gpu)"),
      C("model = torch.nn.DataParallel(model).cuda()", "distributed_framework", "replace", True,
        "model = model.npu()", DP_NOTE + " (default path when neither --gpu nor DDP is given)"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", False,
        "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
        "without CUDA the CUDA GradScaler warns and disables itself: training stays correct in fp32, only "
        "--amp speed is lost"),
      C("checkpoint = torch.load(args.resume)", "device_type", "replace", True,
        "checkpoint = torch.load(args.resume, map_location='npu')",
        "resume checkpoint was saved from CUDA; loading without map_location raises"),
      C("loc = 'cuda:{}'.format(args.gpu)", "device_type", "replace", True, "loc = 'npu:{}'.format(args.gpu)",
        "map_location string names a CUDA device"),
      C("criterion_comp = CompLoss(args, temperature=args.temp).cuda(args.gpu)", "tensor_to_device", "replace",
        False, "criterion_comp = CompLoss(args, temperature=args.temp).npu(args.gpu)", NOOP_MODULE_CUDA),
      cuda("criterion_dis = DisLoss(args, model, val_loader, temperature=args.temp).cuda(args.gpu)",
           "criterion_dis = DisLoss(args, model, val_loader, temperature=args.temp).npu(args.gpu)",
           note="DisLoss registers the prototypes buffer (and the model as a submodule), so .cuda() moves tensors "
                "and raises"),
      C("torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
        "logger.log_value('max_mem_GB', torch.npu.max_memory_allocated() / 1024 ** 3, epoch)",
        "returns 0 when CUDA is uninitialised; tensorboard logging only"),
      cuda("input = torch.cat([input[0], input[1]], dim=0).cuda(args.gpu, non_blocking=True)",
           "input = torch.cat([input[0], input[1]], dim=0).npu(args.gpu, non_blocking=True)"),
      cuda("target = target.repeat(2).cuda(args.gpu, non_blocking=True)",
           "target = target.repeat(2).npu(args.gpu, non_blocking=True)"),
      C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=args.amp):",
        "CUDA autocast is disabled (with a warning) on an NPU host; fp32 still correct, --amp speed lost"),
  ])

# ================================================================================================
# MCM (deeplearning-wisc/MCM) zero-shot CLIP OOD
# ================================================================================================
E("mcm_eval", "eval_ood_detection.py", "device_branch_or_abstraction",
  "deeplearning-wisc/MCM eval_ood_detection.py (HF CLIP, MCM score)", [
      imp("=import torch"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)", SEED_NOTE),
      C("if torch.cuda.get_device_capability()[0] >= 8:", "device_capability_check", "add_branch", True,
        "if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8:  # skip on NPU",
        "get_device_capability has no NPU meaning (returns None under transfer_to_npu, raises without CUDA); "
        "indexing it fails. allow_tf32 itself is accepted on NPU"),
      C("model.load_state_dict(torch.load(args.finetune_ckpt, map_location=torch.device(args.gpu)))",
        "device_type", "replace", True,
        "model.load_state_dict(torch.load(args.finetune_ckpt, map_location=torch.device('npu', args.gpu)))",
        "torch.device(int) means a CUDA device on torch 2.1 (the torch_npu pairing used here); CLIP-Linear only"),
      cuda("model = model.cuda()", "model = model.npu()"),
      C("device = \"cuda\" if torch.cuda.is_available() else \"cpu\"", "device_type", "add_branch", True,
        "device = \"npu\" if torch.npu.is_available() else (\"cuda\" if torch.cuda.is_available() else \"cpu\")",
        "falls back to 'cpu' on an NPU host, so text features are computed on CPU and then multiplied with "
        "NPU image features -> device mismatch"),
      cuda("labels = labels.long().cuda()", "labels = labels.long().npu()"),
      cuda("images = images.cuda()", "images = images.npu()"),
      C("with torch.cuda.amp.autocast(enabled=args.fp16):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=args.fp16):",
        "CUDA autocast silently disabled on NPU; results stay fp32, --fp16 speed-up lost"),
      C("assert torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "assert torch.npu.is_available()", "always False on an NPU host"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.gpu)", SET_DEVICE),
      C("net.vision_model = torch.compile(net.vision_model, mode=\"max-autotune\")", "compile_mode", "replace",
        False, "net.vision_model = torch.compile(net.vision_model, backend=\"npugraphs\")",
        "max-autotune relies on Triton/CUDA-graph autotuning; on NPU Inductor runs without Triton "
        "(has_triton forced False) - unconfirmed whether the mode errors or just degrades; --compile only"),
      C("torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
        "log.debug('peak NPU memory: {:.2f} GB'.format(torch.npu.max_memory_allocated() / 1024 ** 3))",
        "reports 0 without CUDA; log line only"),
  ])

E("mcm_env", "environment.yml", "explicit_replacement",
  "MCM / CIDER-style conda environment.yml", [
      C("=- nvidia", "import_torch_npu", "removal", False, None,
        "channel only serves pytorch-cuda / CUDA runtime packages"),
      C("=- pytorch=2.0.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
        "torch must equal the torch_npu wheel's torch version; the 2.0.1 pairing is EOL (CANN 7.0), so the "
        "port moves to 2.1.0"),
      C("=- torchvision=0.15.2", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
        "torchvision must follow the torch version"),
      C("=- pytorch-cuda=11.8", "import_torch_npu", "removal", True, None,
        "forces the CUDA build of pytorch; torch_npu needs the CPU (x86) / plain (aarch64) build"),
      C("=- cudatoolkit-dev=11.8", "import_torch_npu", "removal", False, None,
        "nvcc toolkit for building CUDA extensions; dead weight (and not resolvable on aarch64 hosts, "
        "unconfirmed)"),
      C("=- faiss-gpu=1.7.4", "custom_cuda_extension", "replace", True, "- faiss-cpu=1.7.4",
        "CUDA build of faiss; no Ascend backend"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post12",
        "torch_npu wheel from PyPI, pinned to the torch version"),
      C("nvidia-ml-py==11.525.112", "custom_cuda_extension", "removal", False, None,
        "NVML bindings have no NPU to talk to; pure-python wheel so install itself succeeds"),
      C("xformers==0.0.20", "attention_kernel", "removal", True, None,
        "xformers has no NPU backend and its CUDA wheel cannot be used/installed on an Ascend host; the "
        "DINOv2 layers fall back to plain attention"),
  ])

# ================================================================================================
# DINOv2 backbone vendored for OOD feature extraction
# ================================================================================================
E("dinov2_attention", "ood_backbones/dinov2/layers/attention.py", "kernel_rewrite",
  "facebookresearch/dinov2 layers/attention.py (xFormers MemEffAttention) vendored in an OOD repo", [
      C("attn = q @ k.transpose(-2, -1)", "npu_fused_op", "replace", False,
        "x = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, \"BNSD\", scale=1.0)[0]",
        "plain matmul-softmax-matmul works on NPU; fused attention is a performance rewrite (q is pre-scaled, "
        "hence scale=1.0); attn_drop must then go through keep_prob"),
      C("from xformers.ops import memory_efficient_attention, unbind", "attention_kernel", "replace", False,
        "import torch_npu",
        "xformers is not available on NPU; the ImportError is caught and MemEffAttention falls back to the "
        "plain path, so nothing breaks - swapping in the NPU fused kernel is for speed"),
      C("q, k, v = unbind(qkv, 2)", "attention_kernel", "replace", False, "q, k, v = torch.unbind(qkv, 2)",
        "xformers.ops.unbind goes with the import; torch.unbind is equivalent"),
      C("x = memory_efficient_attention(q, k, v, attn_bias=attn_bias)", "attention_kernel", "replace", False,
        "x = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, \"BSND\", scale=self.scale)[0]",
        "q/k/v are [B, N, H, D] = BSND here; only reached when xformers imports, which it cannot on NPU"),
  ])

# ================================================================================================
# Postprocessor latency benchmark + its YAML config
# ================================================================================================
E("bench_postproc", "tools/benchmark_postprocessors.py", "device_branch_or_abstraction",
  "OOD-benchmark tools/benchmark_*.py latency script (CUDA events, NVTX, NVML)", [
      imp("=import torch"),
      C("=import pynvml", "custom_cuda_extension", "replace", False,
        "pynvml = None  # no NVML on Ascend; use torch.npu.utilization()",
        "guarded: NVML import/init fails and gpu_util silently becomes None; torch.npu.utilization() is the "
        "NPU counterpart"),
      C("torch.cuda.nvtx.range_push(msg)", "torch_cuda_api", "replace", True,
        "_rid = torch_npu.npu.mstx.range_start(msg)",
        "torch.cuda.nvtx is not redirected by torch_npu and raises without CUDA; mstx is the NPU range API "
        "(--nvtx only)"),
      C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(_rid)",
        "paired with range_push above"),
      C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "starter = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
      C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "ender = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
      C("assert data.is_cuda, 'benchmark inputs must live on the GPU'", "device_type", "replace", True,
        "assert data.is_npu, 'benchmark inputs must live on the NPU'",
        "is_cuda is False for NPU tensors, so the assert always fails"),
      C("torch.cuda.synchronize(device_index)", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize(device_index)", "synchronize initialises CUDA and raises on an NPU host"),
      C("torch.cuda.reset_peak_memory_stats(device_index)", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats(device_index)", "raises without CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA; also needed for correct event timing on NPU"),
      C("peak_mb = torch.cuda.max_memory_allocated(device_index) / 2**20", "torch_cuda_api", "replace", True,
        "peak_mb = torch.npu.max_memory_allocated(device_index) / 2**20",
        "silently reports 0 when CUDA is uninitialised - wrong result for a memory benchmark"),
      C("print('device       :', torch.cuda.get_device_name(device_index))", "torch_cuda_api", "replace", True,
        "print('device       :', torch.npu.get_device_name(device_index))", "raises without CUDA"),
      C("net = net.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "replace", False,
        "net = net.contiguous()  # channels_last not supported on NPU",
        "mstt lists channels_last as unsupported on NPU (use contiguous); only when channels_last: true in the "
        "config; unconfirmed whether it errors or only slows down"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
      C("json.dump({'device': torch.cuda.get_device_name(device_index),", "torch_cuda_api", "replace", True,
        "json.dump({'device': torch.npu.get_device_name(device_index),", "raises without CUDA"),
  ])

E("bench_yaml", "configs/bench/ood_bench.yaml", "explicit_replacement",
  "benchmark YAML config (runtime.device, distributed.backend)", [
      C("device: cuda:0", "device_type", "replace", True, "device: npu:0",
        "fed to torch.device() by the benchmark script; 'cuda:0' cannot be used on an NPU host"),
      C("backend: nccl", "dist_backend", "replace", True, "backend: hccl",
        "passed to init_process_group by the DDP throughput sweep"),
  ])
