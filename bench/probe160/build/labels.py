# Labels for probe160: classic 2018-2021 computer-vision research repos (CUDA -> Ascend NPU).
# One C(...) per line a careful porter would edit; see README.md "How the labels were chosen".
ENTRIES = []
def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}
def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})

PIN_NOTE = ("perf only, unconfirmed: without pin_memory_device the DataLoader pins only when torch.cuda.is_available(), "
            "so on an NPU host the flag silently does nothing; msFmkTransplt lists pin_memory as performance advice")
FUSED_NOTE = ("perf only: msFmkTransplt's performance advice maps torch.optim.SGD/Adam to the tensor-fused "
              "torch_npu.optim.NpuFused* versions")
IMPORT_NOTE = "entry script: import torch_npu after torch (mandatory before torch_npu 2.5.1, still recommended after)"

E("centernet_main", "src/main.py", "explicit_replacement",
  "xingyizhou/CenterNet src/main.py (opts --gpus, gpus_str, chunk_sizes)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = opt.gpus_str", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = opt.gpus_str",
      "NPU runtime ignores CUDA_VISIBLE_DEVICES; --gpus 2,3 would silently run on NPU 0,1"),
    C("opt.device = torch.device('cuda' if", "device_type", "replace", True,
      "opt.device = torch.device('npu' if opt.gpus[0] >= 0 else 'cpu')",
      "'cuda' device fails on a CPU-torch + torch_npu host"),
    C("optimizer = torch.optim.Adam(model.parameters(), opt.lr)", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdam(model.parameters(), opt.lr)", FUSED_NOTE),
    C("=pin_memory=True", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu'", PIN_NOTE),
    C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',", PIN_NOTE),
  ])

E("centernet_base_trainer", "src/lib/trains/base_trainer.py", "explicit_replacement",
  "xingyizhou/CenterNet src/lib/trains/base_trainer.py (set_device with chunk_sizes)", [
    C("self.model_with_loss = DataParallel(", "distributed_framework", "replace", True,
      "raise NotImplementedError('DataParallel/chunk_sizes is unsupported on Ascend NPU: use one NPU or DDP with hccl')",
      "CenterNet's DataParallel scatters with CUDA comm (torch.cuda.comm.scatter and torch.nn.DataParallel are unsupported "
      "on NPU); the statement spans three lines; single-device path below already uses .to(device)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op when CUDA is not initialised; NPU cache is simply not released before val (memory only)"),
  ])

DEAD_DP = "only reachable through the multi-device DataParallel path that the port stops using (base_trainer); "
E("centernet_data_parallel", "src/lib/models/data_parallel.py", "explicit_replacement",
  "xingyizhou/CenterNet src/lib/models/data_parallel.py (copy of torch DataParallel with chunk_sizes)", [
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
      DEAD_DP + "on NPU it returns False and the wrapper silently becomes a one-device pass-through"),
    C("device_ids = [i for i in range(torch.cuda.device_count())]", "torch_cuda_api", "replace", False,
      "device_ids = [i for i in range(torch.npu.device_count())]", DEAD_DP + "device_count() is 0 on an NPU host"),
    C("self.module.cuda(device_ids[0])", "tensor_to_device", "replace", False, "self.module.npu(device_ids[0])",
      DEAD_DP + ".cuda() raises without CUDA"),
    C("device_ids = list(range(torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
      "device_ids = list(range(torch.npu.device_count()))", DEAD_DP + "empty list then IndexError on device_ids[0]"),
    C("return torch.nn.DataParallel(module, device_ids, output_device, dim)", "distributed_framework", "replace", False,
      "return module  # torch.nn.DataParallel is unsupported on Ascend; use DDP + hccl for multi-NPU",
      DEAD_DP + "torch.nn.DataParallel is marked unsupported in Ascend's API list"),
    C("return torch.nn.DataParallel(module, device_ids=device_ids", "distributed_framework", "replace", False,
      "return module  # torch.nn.DataParallel is unsupported on Ascend; use DDP + hccl for multi-NPU",
      DEAD_DP + "torch.nn.DataParallel is marked unsupported in Ascend's API list"),
  ])

E("centernet_dcn_v2", "src/lib/models/networks/DCNv2/dcn_v2.py", "kernel_rewrite",
  "CharlesShang/DCNv2 dcn_v2.py as vendored in CenterNet (DLA-34 DCN backbone)", [
    C("import _ext as _backend", "custom_cuda_extension", "replace", True, "import torch_npu",
      "_ext is the nvcc-built DCNv2 extension (make.sh); it cannot be built on Ascend"),
    C("output = _backend.dcn_v2_forward(input, weight, bias,", "custom_cuda_extension", "replace", True,
      "output, offset_out = torch_npu.npu_deformable_conv2d(input, weight, torch.cat((offset, mask), dim=1), bias, "
      "kernel_size=ctx.kernel_size, stride=[1, 1, ctx.stride[0], ctx.stride[1]], "
      "padding=[ctx.padding[0], ctx.padding[0], ctx.padding[1], ctx.padding[1]], "
      "dilation=[1, 1, ctx.dilation[0], ctx.dilation[1]], deformable_groups=ctx.deformable_groups, modulated=True)",
      "modulated deformable conv forward -> torch_npu.npu_deformable_conv2d (offset channel order may need "
      "re-arranging; unconfirmed)"),
    C("_backend.dcn_v2_backward(input, weight,", "custom_cuda_extension", "replace", True,
      "torch_npu.npu_deformable_conv2dbk(input, grad_output, offset_out, weight, torch.cat((offset, mask), dim=1),",
      "backward kernel from the CUDA extension -> npu_deformable_conv2dbk (or drop the Function and rely on autograd)"),
    C("_backend.dcn_v2_psroi_pooling_forward(input, rois, offset,", "unsupported_op_workaround", "replace", False,
      "raise NotImplementedError('deformable PSROI pooling has no Ascend kernel')",
      "DCNPooling is never instantiated by CenterNet; torch_npu only has the non-deformable npu_ps_roi_pooling"),
    C("_backend.dcn_v2_psroi_pooling_backward(grad_output,", "unsupported_op_workaround", "replace", False,
      "raise NotImplementedError('deformable PSROI pooling has no Ascend kernel')",
      "dead in CenterNet, see forward"),
  ])

E("centernet_dcnv2_setup", "src/lib/models/networks/DCNv2/setup.py", "kernel_rewrite",
  "CharlesShang/DCNv2 setup.py (CUDAExtension, WITH_CUDA, nvcc half flags) built by CenterNet's make.sh", [
    C("raise NotImplementedError('Cuda is not availabel')", "custom_cuda_extension", "replace", True,
      "return []  # Ascend: DCN runs through torch_npu.npu_deformable_conv2d, nothing to compile",
      "on an NPU host torch.cuda.is_available() is False and CUDA_HOME is unset, so the build aborts here; "
      "the nvcc sources have no Ascend path"),
  ])

E("centernet_base_detector", "src/lib/detectors/base_detector.py", "explicit_replacement",
  "xingyizhou/CenterNet src/lib/detectors/base_detector.py (multi-scale test with timing)", [
    C("opt.device = torch.device('cuda')", "device_type", "replace", True, "opt.device = torch.device('npu')",
      "'cuda' device fails on an NPU host; the cpu branch below stays"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises 'Torch not compiled with CUDA enabled' on the CPU torch build used with torch_npu; NPU sync keeps timings honest"),
    C("torch.cuda.synchronize()  # post_process", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # post_process copies dets back to host", "same as above"),
  ])

E("centernet_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "community Dockerfile for CenterNet (nvidia/cuda base, +cu111 wheels, DCNv2 make.sh)", [
    C("FROM nvidia/cuda:11.1.1-cudnn8-devel-ubuntu20.04", "custom_cuda_extension", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "CUDA base image; an Ascend image needs CANN (its ENV lines replace sourcing set_env.sh)"),
    C("RUN pip install torch==1.8.1+cu111", "custom_cuda_extension", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu",
      "+cu111 wheels from the CUDA wheel index; torch_npu needs the matching CPU torch (2.1.0 <-> torch-npu 2.1.0.postN)"),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None,
      "points at a CUDA toolkit that is no longer in the image; harmless once nothing is built with nvcc"),
    C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None, "nvcc arch list, meaningless on Ascend"),
    C("ENV FORCE_CUDA=\"1\"", "env_var", "removal", False, None,
      "forces CUDA builds in setup.py files that read it (DCNv2's does not); harmless"),
    C("=RUN pip install -r requirements.txt", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install torch-npu==2.1.0.post17 pyyaml decorator attrs psutil",
      "torch_npu wheel pinned to the CPU torch version and the image's CANN"),
    C("RUN cd src/lib/models/networks/DCNv2 && ./make.sh", "custom_cuda_extension", "removal", True, None,
      "nvcc build of DCNv2 fails without CUDA; DCN runs through torch_npu.npu_deformable_conv2d after the port"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "read only by nvidia-container-runtime; Ascend Docker Runtime mounts /dev/davinciN from ASCEND_VISIBLE_DEVICES "
      "(or pass --device at run time)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "nvidia-container-runtime only"),
  ])

E("db_train", "train.py", "explicit_replacement",
  "MhLiao/DB train.py (argparse + yaml experiment, torch.distributed.launch)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.set_device(args['local_rank'])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args['local_rank'])", "raises without CUDA; each rank must bind its NPU before hccl init"),
    C("torch.distributed.init_process_group(backend='nccl'", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl', init_method='env://')", "NCCL is not available on Ascend; use HCCL"),
  ])

E("db_trainer", "trainer.py", "device_branch_or_abstraction",
  "MhLiao/DB trainer.py (init_device, verbose timing, dict losses)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "returns False on an NPU host, so training silently falls back to the CPU branch"),
    C("self.device = torch.device('cuda')", "device_type", "replace", True, "self.device = torch.device('npu')",
      "device handed to the model builder and checkpoint restore"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA whenever --verbose is on"),
    C("torch.cuda.synchronize()  # flush async", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # flush async kernels before the timer", "same, second verbose timer"),
    C("loss = torch.tensor(0.).cuda()", "tensor_to_device", "replace", True, "loss = torch.tensor(0.).npu()",
      "dict-loss path (DB's L1BalanceCELoss returns a dict) accumulates on the device; .cuda() raises"),
  ])

E("db_model", "structure/model.py", "explicit_replacement",
  "MhLiao/DB structure/model.py (parallelize: DDP or DataParallel, SegDetectorModel)", [
    C("return nn.DataParallel(model)", "distributed_framework", "replace", True,
      "return model  # nn.DataParallel is unsupported on NPU; remap 'module.' keys when loading GPU checkpoints",
      "non-distributed path wraps in DataParallel, unsupported in Ascend's API list; DB restores with strict=False, "
      "so the port must also remap 'module.' keys or released weights load silently as nothing"),
  ])

E("db_deform_conv", "assets/ops/dcn/functions/deform_conv.py", "kernel_rewrite",
  "MhLiao/DB assets/ops/dcn (mmdetection v1 deform_conv functions over deform_conv_cuda)", [
    C("from .. import deform_conv_cuda", "custom_cuda_extension", "replace", True, "import torch_npu",
      "deform_conv_cuda is built from .cu sources by assets/ops/dcn/setup.py; no Ascend build"),
    C("if not input.is_cuda:", "device_type", "replace", True, "if input.device.type != 'npu':",
      "NPU tensors have is_cuda False, so every forward would raise NotImplementedError"),
    C("deform_conv_cuda.deform_conv_forward_cuda(", "custom_cuda_extension", "replace", True,
      "output, ctx.offset_out = torch_npu.npu_deformable_conv2d(input, weight, offset, None, kernel_size=[weight.size(2), weight.size(3)], "
      "stride=[1, 1, ctx.stride[0], ctx.stride[1]], padding=[ctx.padding[0], ctx.padding[0], ctx.padding[1], ctx.padding[1]], "
      "dilation=[1, 1, ctx.dilation[0], ctx.dilation[1]], groups=ctx.groups, deformable_groups=ctx.deformable_groups, modulated=False)",
      "CUDA kernel call -> torch_npu.npu_deformable_conv2d (modulated=False for DCNv1)"),
    C("if not grad_output.is_cuda:", "device_type", "replace", True, "if grad_output.device.type != 'npu':",
      "same is_cuda guard in backward"),
    C("deform_conv_cuda.deform_conv_backward_input_cuda(", "custom_cuda_extension", "replace", True,
      "grad_input, grad_weight, grad_offset, _ = torch_npu.npu_deformable_conv2dbk(",
      "backward kernels -> npu_deformable_conv2dbk (returns input/weight/offset/bias grads in one call)"),
    C("deform_conv_cuda.deform_conv_backward_parameters_cuda(", "custom_cuda_extension", "replace", True,
      "pass  # grad_weight already produced by npu_deformable_conv2dbk above",
      "second CUDA backward kernel; folded into the single NPU backward op"),
    C("assert input.is_cuda, 'ModulatedDeformConv", "device_type", "replace", True,
      "assert input.device.type == 'npu', 'ModulatedDeformConv is only implemented for NPU tensors'",
      "assert fails for NPU tensors (DB's deformable ResNet uses the modulated variant)"),
    C("deform_conv_cuda.modulated_deform_conv_cuda_forward(", "custom_cuda_extension", "replace", True,
      "output, ctx.offset_out = torch_npu.npu_deformable_conv2d(input, weight, torch.cat((offset, mask), dim=1), bias,",
      "modulated (DCNv2) forward -> npu_deformable_conv2d(modulated=True)"),
    C("deform_conv_cuda.modulated_deform_conv_cuda_backward(", "custom_cuda_extension", "replace", True,
      "grad_input, grad_weight, grad_offset_mask, grad_bias = torch_npu.npu_deformable_conv2dbk(",
      "modulated backward -> npu_deformable_conv2dbk; offset/mask grads split afterwards"),
  ])

DP_NOTE = "torch.nn.DataParallel is unsupported on Ascend (API list); single-NPU port drops the wrapper"
RESUME_NOTE = ("resume of the run's own checkpoint: one written on NPU reloads onto NPU unchanged; only a checkpoint "
               "carried over from a GPU run fails, so map_location is robustness, not a requirement")
LOAD_NOTE = ("checkpoint written on GPU holds CUDA storages; torch.load without map_location fails on a host "
             "without CUDA")
E("psenet_train", "train_ic15.py", "explicit_replacement",
  "whai362/PSENet train_ic15.py (2019, Variable(x.cuda()), OHEM on host, DataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("imgs = Variable(imgs.cuda())", "tensor_to_device", "replace", True, "imgs = Variable(imgs.npu())",
      ".cuda() raises on the CPU torch build"),
    C("gt_texts = Variable(gt_texts.cuda())", "tensor_to_device", "replace", True, "gt_texts = Variable(gt_texts.npu())",
      ".cuda() raises"),
    C("gt_kernels = Variable(gt_kernels.cuda())", "tensor_to_device", "replace", True,
      "gt_kernels = Variable(gt_kernels.npu())", ".cuda() raises"),
    C("training_masks = Variable(training_masks.cuda())", "tensor_to_device", "replace", True,
      "training_masks = Variable(training_masks.npu())", ".cuda() raises"),
    C("selected_masks = Variable(selected_masks.cuda())", "tensor_to_device", "replace", True,
      "selected_masks = Variable(selected_masks.npu())", "OHEM mask is built on the host and moved back"),
    C("kernel_masks = Variable(torch.from_numpy(selected_masks).float().cuda())", "tensor_to_device", "replace", True,
      "kernel_masks = Variable(torch.from_numpy(selected_masks).float().npu())", ".cuda() raises"),
    C("=pin_memory=True)", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu')", PIN_NOTE),
    C("model = torch.nn.DataParallel(model).cuda()", "distributed_framework", "replace", True, "model = model.npu()",
      DP_NOTE + "; .cuda() also raises"),
    C("if hasattr(model.module, 'optimizer'):", "distributed_framework", "replace", True,
      "if hasattr(model, 'optimizer'):", "follows from dropping DataParallel: plain module has no .module"),
    C("optimizer = model.module.optimizer", "distributed_framework", "replace", True, "optimizer = model.optimizer",
      "follows from dropping DataParallel"),
    C("optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.99, weight_decay=5e-4)", "fused_optimizer",
      "replace", False,
      "optimizer = torch_npu.optim.NpuFusedSGD(model.parameters(), lr=args.lr, momentum=0.99, weight_decay=5e-4)",
      FUSED_NOTE),
    C("checkpoint = torch.load(args.pretrain)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(args.pretrain, map_location='cpu')", LOAD_NOTE),
    C("model.load_state_dict(state_dict)", "distributed_framework", "replace", True,
      "model.load_state_dict({k[7:] if k.startswith('module.') else k: v for k, v in state_dict.items()})",
      "released pretrain weights were saved from DataParallel ('module.' keys); strict load fails on the unwrapped model"),
    C("checkpoint = torch.load(args.resume)", "tensor_to_device", "replace", False,
      "checkpoint = torch.load(args.resume, map_location='cpu')", RESUME_NOTE),
  ])

E("pan_pa_head", "models/head/pa_head.py", "explicit_replacement",
  "whai362/pan_pp.pytorch models/head/pa_head.py (PAN head, report_speed timing, Cython pa on host)", [
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "only with cfg.report_speed, but then it raises without CUDA"),
  ])

E("pan_pa_setup", "models/post_processing/pa/setup.py", "explicit_replacement",
  "whai362/pan_pp.pytorch models/post_processing/pa/setup.py (Cython build_ext, host-only)", [
    # deliberately empty: Cython/C++ host code, builds and runs unchanged on an Ascend host
  ])

E("east_detect", "detect.py", "explicit_replacement",
  "SakuraRiven/EAST detect.py (VGG16 EAST, lanms locality-aware NMS, tab-indented)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device(\"cuda:0\" if torch.cuda.is_available() else \"cpu\")", "device_type", "replace", True,
      "device = torch.device(\"npu:0\" if torch.npu.is_available() else \"cpu\")",
      "is_available() is False on an NPU host, so the demo silently runs on the CPU"),
    C("model.load_state_dict(torch.load(model_path))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(model_path, map_location=device))",
      "released east_vgg16.pth was saved from GPU; " + LOAD_NOTE),
    C("=model.eval()", "compile_mode", "npu_only_addition", False,
      "torch.npu.set_compile_mode(jit_compile=False)",
      "perf only: every test image is resized to its own multiple of 32, i.e. dynamic shapes; msFmkTransplt advises "
      "jit_compile=False for dynamic-shape models"),
  ])

E("retinaface_train", "train.py", "explicit_replacement",
  "biubug6/Pytorch_Retinaface train.py (cfg['gpu_train'], cfg['ngpu'], module-level setup)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("state_dict = torch.load(args.resume_net)", "tensor_to_device", "replace", False,
      "state_dict = torch.load(args.resume_net, map_location='cpu')", RESUME_NOTE),
    C("net = torch.nn.DataParallel(net).cuda()", "distributed_framework", "replace", True, "net = net.npu()",
      DP_NOTE + " (cfg_re50 sets ngpu=4); keys are already stripped of 'module.' on load, so no cascade"),
    C("net = net.cuda()", "tensor_to_device", "replace", True, "net = net.npu()", ".cuda() raises"),
    C("optimizer = optim.SGD(net.parameters(), lr=initial_lr", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedSGD(net.parameters(), lr=initial_lr, momentum=momentum, weight_decay=weight_decay)",
      FUSED_NOTE),
    C("priors = priors.cuda()", "tensor_to_device", "replace", True, "priors = priors.npu()", ".cuda() raises"),
    C("images = images.cuda()", "tensor_to_device", "replace", True, "images = images.npu()", ".cuda() raises"),
    C("targets = [anno.cuda() for anno in targets]", "tensor_to_device", "replace", True,
      "targets = [anno.npu() for anno in targets]", ".cuda() raises"),
  ])

E("retinaface_detect", "detect.py", "explicit_replacement",
  "biubug6/Pytorch_Retinaface detect.py (load_model with storage.cuda(device), --cpu flag, py_cpu_nms)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "device = torch.npu.current_device()", "raises 'Torch not compiled with CUDA enabled' on the NPU host"),
    C("map_location=lambda storage, loc: storage.cuda(device))", "tensor_to_device", "replace", True,
      "pretrained_dict = torch.load(pretrained_path, map_location='npu:{}'.format(device))",
      "storage.cuda() in map_location raises; map straight onto the current NPU"),
    C("device = torch.device(\"cpu\" if args.cpu else \"cuda\")", "device_type", "replace", True,
      "device = torch.device(\"cpu\" if args.cpu else \"npu\")", "'cuda' device fails on the NPU host"),
    C("net = net.to(device)", "compile_mode", "npu_only_addition", False,
      "torch.npu.set_compile_mode(jit_compile=False)",
      "perf only: images are fed at native resolution (dynamic shapes); msFmkTransplt advises jit_compile=False"),
  ])

E("retinaface_multibox_loss", "layers/modules/multibox_loss.py", "explicit_replacement",
  "biubug6/Pytorch_Retinaface layers/modules/multibox_loss.py (GPU = cfg['gpu_train'], host-side matching)", [
    C("loc_t = loc_t.cuda()", "tensor_to_device", "replace", True, "loc_t = loc_t.npu()",
      "match() fills host tensors; moving them with .cuda() raises"),
    C("conf_t = conf_t.cuda()", "tensor_to_device", "replace", True, "conf_t = conf_t.npu()", ".cuda() raises"),
    C("landm_t = landm_t.cuda()", "tensor_to_device", "replace", True, "landm_t = landm_t.npu()", ".cuda() raises"),
    C("zeros = torch.tensor(0).cuda()", "tensor_to_device", "replace", True, "zeros = torch.tensor(0).npu()",
      ".cuda() raises (unconditional, not behind the GPU flag)"),
  ])

INT_DEV_NOTE = ("a bare int device means cuda:<n> to torch (transfer_to_npu/msFmkTransplt both rewrite positional ints "
                "in .to() to 'npu:<n>')")
E("arcface_train", "train.py", "explicit_replacement",
  "deepinsight/insightface recognition/arcface_torch train.py (2021: PartialFC, MaxClipGradScaler, DataLoaderX)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("dist.init_process_group('nccl')", "dist_backend", "replace", True, "dist.init_process_group('hccl')",
      "NCCL is unavailable on Ascend"),
    C("dist.init_process_group(backend='nccl', init_method=", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl', init_method=\"tcp://127.0.0.1:12584\", rank=rank, world_size=world_size)",
      "single-process fallback still creates a process group for PartialFC's all_gather"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises without CUDA; binds the rank's NPU"),
    C("sampler=train_sampler, num_workers=2, pin_memory=True, drop_last=True)", "pin_memory", "replace", False,
      "sampler=train_sampler, num_workers=2, pin_memory=True, pin_memory_device='npu', drop_last=True)", PIN_NOTE),
    C("num_features=cfg.embedding_size).to(local_rank)", "tensor_to_device", "replace", True,
      "backbone = get_model(cfg.network, dropout=0.0, fp16=cfg.fp16, num_features=cfg.embedding_size).to(f'npu:{local_rank}')",
      INT_DEV_NOTE),
    C("map_location=torch.device(local_rank)", "tensor_to_device", "replace", True,
      "backbone.load_state_dict(torch.load(backbone_pth, map_location=torch.device('npu', local_rank)))",
      "torch.device(int) is a CUDA device; the RuntimeError it raises is swallowed by the except, so resume silently "
      "restarts from scratch"),
  ])

E("arcface_partial_fc", "partial_fc.py", "explicit_replacement",
  "deepinsight/insightface arcface_torch partial_fc.py (2021 PartialFC: side stream, NCCL all_gather/reduce_scatter)", [
    C("self.device: torch.device = torch.device(\"cuda:{}\".format(self.local_rank))", "device_type", "replace", True,
      "self.device: torch.device = torch.device(\"npu:{}\".format(self.local_rank))",
      "every class-centre buffer is created on self.device"),
    C("self.weight: torch.Tensor = torch.load(self.weight_name)", "tensor_to_device", "replace", False,
      "self.weight: torch.Tensor = torch.load(self.weight_name, map_location=self.device)",
      RESUME_NOTE + "; a GPU-written rank_N_softmax_weight.pt raises RuntimeError, which the except tuple does not catch"),
    C("self.weight_mom: torch.Tensor = torch.load(self.weight_mom_name)", "tensor_to_device", "replace", False,
      "self.weight_mom: torch.Tensor = torch.load(self.weight_mom_name, map_location=self.device)", RESUME_NOTE),
    C("self.stream: torch.cuda.Stream = torch.cuda.Stream(local_rank)", "torch_cuda_api", "replace", True,
      "self.stream: torch.npu.Stream = torch.npu.Stream(local_rank)", "CUDA stream creation raises without CUDA"),
    C("self.sub_weight = Parameter(torch.empty((0, 0)).cuda(local_rank))", "tensor_to_device", "replace", True,
      "self.sub_weight = Parameter(torch.empty((0, 0)).npu(local_rank))", "sample_rate < 1 path; .cuda() raises"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(self.stream)", "stream sync before the logits matmul"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(self.stream):",
      "label all_gather and sampling overlap on the side stream"),
  ])

E("arcface_utils_amp", "utils/utils_amp.py", "explicit_replacement",
  "deepinsight/insightface arcface_torch utils/utils_amp.py (MaxClipGradScaler over torch.cuda.amp.GradScaler)", [
    C("from torch.cuda.amp import GradScaler", "amp", "replace", True, "from torch_npu.npu.amp import GradScaler",
      "the CUDA GradScaler disables itself (warning) when CUDA is unavailable, so fp16 training silently runs "
      "without loss scaling; torch_npu.npu.amp.GradScaler is the listed NPU form"),
    C("assert master_tensor.is_cuda", "device_type", "replace", True, "assert master_tensor.is_npu",
      "NPU tensors report is_cuda False"),
    C("assert outputs.is_cuda", "device_type", "replace", True, "assert outputs.is_npu",
      "single-tensor scale() path used by train.py (features.backward(grad_amp.scale(x_grad)))"),
    C("assert val.is_cuda", "device_type", "replace", True, "assert val.is_npu", "iterable path, same check"),
  ])

E("arcface_iresnet", "backbones/iresnet.py", "explicit_replacement",
  "deepinsight/insightface arcface_torch backbones/iresnet.py (fp16 autocast inside forward)", [
    C("with torch.cuda.amp.autocast(self.fp16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(self.fp16):",
      "CUDA autocast is disabled with a warning when CUDA is unavailable: config.fp16=True would silently train the "
      "backbone in fp32"),
  ])

DEAD_DALI = "only reached through the DALI branch, which the port disables (config.dali defaults to False); "
E("arcface_dataset", "dataset.py", "explicit_replacement",
  "deepinsight/insightface arcface_torch dataset.py (BackgroundGenerator, DataLoaderX CUDA-stream prefetch, DALI reader)", [
    C("if dali:", "unsupported_op_workaround", "replace", False,
      "if dali and torch.cuda.is_available():  # nvidia-dali has no Ascend backend: fall back to DataLoaderX",
      "DALI's mixed (GPU) decoder cannot run on Ascend; only matters when a config sets dali=True"),
    C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',", PIN_NOTE),
    C("torch.cuda.set_device(self.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(self.local_rank)", "prefetch thread binds its device; raises without CUDA"),
    C("self.stream = torch.cuda.Stream(local_rank)", "torch_cuda_api", "replace", True,
      "self.stream = torch.npu.Stream(local_rank)", "side stream for H2D prefetch"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(self.stream):",
      "H2D copies issued on the side stream"),
    C("self.batch[k] = self.batch[k].to(device=self.local_rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "self.batch[k] = self.batch[k].to(device='npu:{}'.format(self.local_rank), non_blocking=True)", INT_DEV_NOTE),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(self.stream)", "compute stream waits for the prefetch"),
    C("tensor_data = data_dict['data'].cuda()", "tensor_to_device", "replace", False,
      "tensor_data = data_dict['data'].npu()", DEAD_DALI + "DALI already returns GPU tensors"),
    C("tensor_label: torch.Tensor = data_dict['label'].cuda().long()", "tensor_to_device", "replace", False,
      "tensor_label: torch.Tensor = data_dict['label'].npu().long()", DEAD_DALI.rstrip("; ")),
  ])

SETENV_NOTE = ("CANN environment (LD_LIBRARY_PATH, ASCEND_OPP_PATH ...) must be sourced before torch_npu can load "
               "libhccl/libascendcl, unless the host or image already exports it")
E("arcface_run_sh", "run.sh", "explicit_replacement",
  "deepinsight/insightface arcface_torch run.sh (torch.distributed.launch, 8 GPUs, kill-all tail)", [
    C("=set -x", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SETENV_NOTE),
    C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
      "debug logging only; NCCL_* variables are ignored by HCCL"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
      "HCCL reads HCCL_SOCKET_IFNAME (or HCCL_IF_IP) to pick the host NIC; only matters for the two-node launch; "
      "whether the default pick would fail is unconfirmed"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
      "InfiniBand switch for NCCL; HCCL goes over the NPUs' own RoCE ports, no equivalent needed"),
    C("CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 python -m torch.distributed.launch", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 python -m torch.distributed.launch \\",
      "ignored on Ascend, but the list names every device of an 8-NPU node, so behaviour is unchanged"),
  ])

E("arcface_requirements", "requirement.txt", "explicit_replacement",
  "deepinsight/insightface arcface_torch requirement.txt (CUDA wheels, mxnet-cu110, DALI)", [
    C("--extra-index-url https://developer.download.nvidia.com/compute/redist", "custom_cuda_extension", "removal", False,
      None, "NVIDIA index only serves the DALI wheels dropped below; harmless but pointless"),
    C("--find-links https://download.pytorch.org/whl/torch_stable.html", "custom_cuda_extension", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 hosts should take the CPU torch build for torch_npu; aarch64 uses plain PyPI torch"),
    C("torch==1.9.0+cu111", "custom_cuda_extension", "replace", True, "torch==2.1.0",
      "+cu111 build; torch_npu needs a supported torch version (2.1.0 here) without the CUDA local tag"),
    C("torchvision==0.10.0+cu111", "custom_cuda_extension", "replace", True, "torchvision==0.16.0",
      "CUDA build, and must match the new torch"),
    C("=numpy<1.24", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post17  # plus its deps: pyyaml decorator attrs psutil",
      "pin torch_npu to the torch version and the host's CANN"),
    C("mxnet-cu110==1.8.0.post0", "custom_cuda_extension", "replace", True,
      "mxnet==1.9.1    # only mx.recordio is used for the .rec/.idx training sets",
      "the CUDA build needs libcuda at import time; only the CPU recordio reader is used"),
    C("nvidia-dali-cuda110", "custom_cuda_extension", "removal", False, None,
      "DALI is CUDA-only and the port disables the DALI branch; install may still succeed on x86"),
    C("=onnxruntime-gpu", "custom_cuda_extension", "replace", False, "onnxruntime",
      "CUDA execution provider is useless on Ascend; missing aarch64 wheels would break install on Kunpeng hosts "
      "(unconfirmed)"),
  ])

E("fairmot_multitracker", "src/lib/tracker/multitracker.py", "explicit_replacement",
  "ifzhang/FairMOT src/lib/tracker/multitracker.py (JDETracker, Kalman/matching on host)", [
    C("opt.device = torch.device('cuda')", "device_type", "replace", True, "opt.device = torch.device('npu')",
      "model is moved to opt.device; 'cuda' fails on the NPU host"),
  ])

E("fairmot_track", "src/track.py", "explicit_replacement",
  "ifzhang/FairMOT src/track.py (eval_seq with use_cuda, MOT15/16/17/20 sequence lists)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("blob = torch.from_numpy(img).cuda().unsqueeze(0)", "tensor_to_device", "replace", True,
      "blob = torch.from_numpy(img).npu().unsqueeze(0)",
      "use_cuda defaults to True and no caller overrides it; .cuda() raises"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = '0'", "env_var", "replace", False,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = '0'",
      "ignored on Ascend, but the tracker uses device index 0 anyway, so the run is unchanged"),
  ])

E("fairmot_environment", "environment.yml", "explicit_replacement",
  "conda environment for ifzhang/FairMOT (pytorch channel, cudatoolkit=10.2, DCNv2 pytorch_1.7 branch)", [
    C("=- pytorch", "custom_cuda_extension", "removal", False, None,
      "the pytorch channel only serves the CUDA builds dropped below"),
    C("- pytorch=1.7.0", "custom_cuda_extension", "replace", True, "- pytorch=2.1.0=cpu_*",
      "CUDA build of a torch version torch_npu never supported; take the CPU 2.1.0 build"),
    C("- torchvision=0.8.0", "custom_cuda_extension", "replace", True, "- torchvision=0.16.0",
      "must match the new torch"),
    C("- cudatoolkit=10.2", "custom_cuda_extension", "removal", False, None,
      "CUDA runtime, unused on Ascend; may not even resolve on aarch64 hosts (unconfirmed)"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post17",
      "torch_npu comes from PyPI, pinned to the torch version and the host's CANN"),
  ])

E("hrnet_train", "tools/train.py", "explicit_replacement",
  "leoxiaobin/deep-high-resolution-net.pytorch tools/train.py (DataParallel over cfg.GPUS, cudnn cfg block)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("model = torch.nn.DataParallel(model, device_ids=cfg.GPUS).cuda()", "distributed_framework", "replace", True,
      "model = model.npu()", DP_NOTE + " (multi-NPU would need DDP + hccl); .cuda() also raises"),
    C("=).cuda()", "tensor_to_device", "replace", True, ").npu()", "JointsMSELoss(...).cuda() raises"),
    C("=pin_memory=cfg.PIN_MEMORY", "pin_memory", "replace", False,
      "pin_memory=cfg.PIN_MEMORY, pin_memory_device='npu'", PIN_NOTE + " (PIN_MEMORY: true in the experiment yaml)"),
    C("=pin_memory=cfg.PIN_MEMORY,", "pin_memory", "replace", False,
      "pin_memory=cfg.PIN_MEMORY, pin_memory_device='npu',", PIN_NOTE),
    C("checkpoint = torch.load(checkpoint_file)", "tensor_to_device", "replace", False,
      "checkpoint = torch.load(checkpoint_file, map_location='cpu')", RESUME_NOTE),
    C("'best_state_dict': model.module.state_dict(),", "distributed_framework", "replace", True,
      "'best_state_dict': model.state_dict(),", "follows from dropping DataParallel: no .module on the bare model"),
    C("torch.save(model.module.state_dict(), final_model_state_file)", "distributed_framework", "replace", True,
      "torch.save(model.state_dict(), final_model_state_file)", "follows from dropping DataParallel"),
  ])

SCATTER_NOTE = ("follows from dropping DataParallel in tools/train.py: DataParallel used to scatter the CPU batch "
                "to the GPUs implicitly, so the input must now be moved explicitly")
E("hrnet_function", "lib/core/function.py", "explicit_replacement",
  "leoxiaobin/deep-high-resolution-net.pytorch lib/core/function.py (train/validate with flip test)", [
    C("data_time.update(time.time() - end)", "tensor_to_device", "npu_only_addition", True,
      "input = input.npu(non_blocking=True)", SCATTER_NOTE),
    C("target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(non_blocking=True)", ".cuda() raises"),
    C("target_weight = target_weight.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target_weight = target_weight.npu(non_blocking=True)", ".cuda() raises"),
    C("for i, (input, target, target_weight, meta) in enumerate(val_loader):", "tensor_to_device",
      "npu_only_addition", True, "input = input.npu()", SCATTER_NOTE + " (validation loop)"),
    C("input_flipped = torch.from_numpy(input_flipped).cuda()", "tensor_to_device", "replace", True,
      "input_flipped = torch.from_numpy(input_flipped).npu()", "flip test (TEST.FLIP_TEST true in the COCO yaml)"),
    C("output_flipped = torch.from_numpy(output_flipped.copy()).cuda()", "tensor_to_device", "replace", True,
      "output_flipped = torch.from_numpy(output_flipped.copy()).npu()", "flipped heatmaps come back from the host"),
    C("target = target.cuda()", "tensor_to_device", "replace", True, "target = target.npu()", ".cuda() raises"),
    C("target_weight = target_weight.cuda()", "tensor_to_device", "replace", True,
      "target_weight = target_weight.npu()", ".cuda() raises"),
  ])

E("pysot_train", "tools/train.py", "explicit_replacement",
  "STVIR/pysot tools/train.py (SiamRPN++ training, seed_torch, DistModule)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "silent no-op without CUDA; torch.manual_seed on the line above already seeds registered backend devices "
      "(unconfirmed for every torch_npu version), so this is redundant rather than wrong"),
    C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',", PIN_NOTE),
    C("model = ModelBuilder().cuda().train()", "tensor_to_device", "replace", True,
      "model = ModelBuilder().npu().train()", ".cuda() raises"),
    C("optimizer = torch.optim.SGD(trainable_params,", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedSGD(trainable_params,",
      FUSED_NOTE + "; build_opt_lr builds a fresh optimizer when the backbone unfreezes, so the fused buffers are "
      "rebuilt too (unconfirmed that this is free of cost)"),
  ])

E("pysot_distributed", "pysot/utils/distributed.py", "explicit_replacement",
  "STVIR/pysot pysot/utils/distributed.py (dist_init, DistModule, average_reduce)", [
    C("tensor = torch.cuda.FloatTensor(1)", "torch_cuda_api", "replace", True, "tensor = torch.npu.FloatTensor(1)",
      "CUDA tensor type raises without CUDA; hit on every logged step once world_size > 1"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "num_gpus = torch.npu.device_count()",
      "returns 0 on an NPU host, so rank % num_gpus raises ZeroDivisionError"),
    C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(rank % num_gpus)", "binds the rank's NPU before hccl init"),
    C("dist.init_process_group(backend='nccl')", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl')", "NCCL is unavailable on Ascend"),
  ])
