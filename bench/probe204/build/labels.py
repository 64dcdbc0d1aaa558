# Labels for probe204 (maskrcnn-benchmark-era detection / scene-graph generation, CUDA -> Ascend NPU).
# Porting plan assumed throughout (see README "How the labels were chosen"):
#   * torch 2.1.0 (CPU wheel) + torch-npu 2.1.0.post12 + torchvision 0.16.0 + torchvision_npu + Ascend apex patch;
#   * maskrcnn_benchmark._C is still built, but CPU-only (setup.py's CUDA branch is not taken on an NPU host);
#     every call site that would hand NPU tensors to a _C kernel is rerouted to torch_npu / torchvision_npu ops;
#   * explicit replacement of torch.cuda / "cuda" / nccl everywhere, except tools/benchmark_speed.py, which is
#     ported with torch_npu.contrib.transfer_to_npu (only what that patch does not cover is labelled there).
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU_NOTE = ("torch_npu must be imported before torch.npu / torch_npu.* is used; optional only from "
                   "torch_npu 2.5.1 (autoload), and this port pins 2.1.0")

# --------------------------------------------------------------------------- packaging / environment
E("p204_setup", "setup.py", "device_branch_or_abstraction",
  "maskrcnn-benchmark / Scene-Graph-Benchmark setup.py (CUDAExtension over csrc/cuda/*.cu)", [
    C('os.environ.setdefault("TORCH_CUDA_ARCH_LIST"', "env_var", "removal", False, None,
      "nvcc target list; nothing reads it on an NPU host because the CUDA branch is never taken. Cleanup only."),
    C('if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1":',
      "custom_cuda_extension", "add_branch", False,
      'elif os.getenv("FORCE_NPU", "0") == "1":  # torch_npu.utils.cpp_extension.NpuExtension for Ascend C ports of csrc/',
      "On an NPU host this condition is False (no CUDA, FORCE_CUDA unset once the Dockerfile is fixed), so a "
      "CPU-only _C is built and the build succeeds. The NPU kernels come from torch_npu/torchvision_npu at the "
      "Python call sites, so an NpuExtension branch is only needed if csrc/ kernels get Ascend C ports."),
])

E("p204_docker", "docker/Dockerfile", "explicit_replacement",
  "maskrcnn-benchmark docker/Dockerfile (nvidia/cuda devel base, conda pytorch+cudatoolkit, apex --cuda_ext, FORCE_CUDA)", [
    C('=ARG CUDA="10.1"', "torch_cuda_api", "removal", False, None,
      "CUDA version is only used by the CUDA base image and cudatoolkit pin; dead after those change."),
    C('=ARG CUDNN="7"', "torch_cuda_api", "removal", False, None, "cuDNN tag of the CUDA base image; dead after FROM changes."),
    C("FROM nvidia/cuda:${CUDA}-cudnn${CUDNN}-devel-ubuntu18.04", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA devel image carries no CANN toolkit/runtime, so torch_npu cannot load. Tag illustrative."),
    C("=ARG CUDA", "torch_cuda_api", "removal", False, None, "Re-declared only for the cudatoolkit pin below."),
    C("RUN echo conda install pytorch==1.4.0 torchvision==0.5.0 cudatoolkit=${CUDA} -c pytorch", "torch_cuda_api",
      "replace", False, "RUN echo pip install torch==2.1.0 torchvision==0.16.0 \\",
      "Only echoes the command into the build log."),
    C("&& conda install -y pytorch==1.4.0 torchvision==0.5.0 cudatoolkit=${CUDA} -c pytorch", "torch_cuda_api",
      "replace", True,
      " && pip install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu \\",
      "CUDA build of torch 1.4 plus cudatoolkit. No torch_npu exists for torch 1.4, so move to a torch_npu-paired "
      "release, CPU wheel."),
    C("=&& conda clean -ya", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install torch-npu==2.1.0.post12 && git clone https://gitee.com/ascend/vision.git vision_npu && cd vision_npu && python setup.py bdist_wheel && pip install dist/torchvision_npu-*.whl",
      "Adds the torch-npu wheel matching torch 2.1.0, plus torchvision_npu. torchvision_npu supplies the NPU nms/roi_pool/"
      "roi_align/deform_conv2d kernels that the layers/ port relies on."),
    C("RUN git clone https://github.com/NVIDIA/apex.git", "amp", "replace", True,
      "RUN git clone https://gitee.com/ascend/apex.git \\",
      "NVIDIA apex amp refuses non-CUDA parameters, and --cuda_ext cannot build without nvcc. The Ascend apex patch "
      "keeps the amp.initialize/scale_loss API used by the trainers."),
    C("&& python setup.py install --cuda_ext --cpp_ext", "amp", "replace", True,
      " && bash scripts/build.sh --python=3.10 && pip install apex/dist/apex-*.whl",
      "--cuda_ext/--cpp_ext need nvcc. Ascend apex is built with its own build.sh."),
    C('ARG FORCE_CUDA="1"', "env_var", "replace", True, 'ARG FORCE_CUDA="0"',
      "FORCE_CUDA=1 makes setup.py pick CUDAExtension and compile csrc/cuda/*.cu with nvcc, which fails on an NPU image."),
])

E("p204_reqs", "requirements.txt", "explicit_replacement",
  "Scene-Graph-Benchmark-style requirements.txt pinning a cu113 torch wheel", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "torch_cuda_api", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index. torch_npu pairs with the CPU torch wheel on x86 (plain PyPI on aarch64)."),
    C("torch==1.10.1+cu113", "torch_cuda_api", "replace", True, "torch==2.1.0",
      "A +cu113 local version does not exist for aarch64/CPU, and torch 1.10 has no torch_npu release."),
    C("torchvision==0.11.2+cu113", "torch_cuda_api", "replace", True, "torchvision==0.16.0",
      "Must match torch 2.1.0, and torchvision_npu builds against it."),
    C("# maskrcnn_benchmark._C is compiled against exactly this torch build", "import_torch_npu", "npu_only_addition",
      True, "torch-npu==2.1.0.post12", "Adds the Ascend adapter wheel. Its version must equal the torch version."),
    C("nvidia-ml-py3==7.352.0", "torch_cuda_api", "removal", False, None,
      "NVML bindings have no NPU equivalent. The package installs fine; the fix is needed where it is used (benchmark_speed.py)."),
])

E("p204_env", "environment.yml", "explicit_replacement",
  "conda environment.yml for a maskrcnn-benchmark/SGG fork (pytorch+cudatoolkit, apex from git)", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None, "CUDA channel; nothing from it is needed any more."),
    C("- pytorch=1.10.1", "torch_cuda_api", "replace", True, "  - pytorch=2.1.0",
      "No torch_npu for torch 1.10. Pin a torch_npu-paired release."),
    C("- torchvision=0.11.2", "torch_cuda_api", "replace", True, "  - torchvision=0.16.0",
      "Must track torch 2.1.0 (torchvision_npu is built against it)."),
    C("- cudatoolkit=11.3", "torch_cuda_api", "replace", True, "  - cpuonly",
      "With cudatoolkit the pytorch channel resolves the CUDA build. cpuonly selects the CPU build that torch_npu extends."),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
      "Adds the torch-npu pin (pip-only)."),
    C("- git+https://github.com/NVIDIA/apex.git@22.04-dev#egg=apex", "amp", "replace", True,
      "    - /opt/ascend-apex/apex/dist/apex-0.1+ascend-cp38-cp38-linux_aarch64.whl",
      "NVIDIA apex amp.initialize raises on non-CUDA parameters. Use a wheel built from the Ascend apex patch "
      "(path illustrative)."),
])

E("p204_defaults", "maskrcnn_benchmark/config/defaults.py", "explicit_replacement",
  "maskrcnn-benchmark / SGB yacs defaults (_C.MODEL.DEVICE = \"cuda\")", [
    C('_C.MODEL.DEVICE = "cuda"', "device_type", "replace", True, '_C.MODEL.DEVICE = "npu"',
      "Every trainer/tester does torch.device(cfg.MODEL.DEVICE) and model.to(...), so 'cuda' fails on an NPU host."),
    C('_C.DIST_BACKEND = "nccl"', "dist_backend", "replace", True, '_C.DIST_BACKEND = "hccl"',
      "Flows into init_process_group(backend=cfg.DIST_BACKEND) in tools/train_net.py. NCCL is not available with torch_npu."),
])

E("p204_yaml", "configs/e2e_relation_X_101_32_8_FPN_1x.yaml", "explicit_replacement",
  "SGB relation config (e2e_relation_X_101_32_8_FPN_1x.yaml) with MODEL.DEVICE pinned", [
    C('DEVICE: "cuda"', "device_type", "replace", True, '  DEVICE: "npu"',
      "The YAML overrides the yacs default, so fixing defaults.py alone is not enough."),
])

# --------------------------------------------------------------------------- custom-kernel layers
E("p204_nms", "maskrcnn_benchmark/layers/nms.py", "explicit_replacement",
  "maskrcnn-benchmark layers/nms.py (amp.float_function(_C.nms)) plus FCOS ml_nms", [
    C("=from apex import amp", "import_torch_npu", "npu_only_addition", True,
      "import torchvision, torchvision_npu  # noqa: F401  (registers NPU kernels for torchvision::nms)",
      "Needed for the torchvision.ops replacements below to run on NPU tensors."),
    C("nms = amp.float_function(_C.nms)", "custom_cuda_extension", "replace", True,
      "nms = amp.float_function(torchvision.ops.nms)",
      "The _C built on an NPU host is CPU-only. Its nms dispatcher sends non-CUDA tensors to nms_cpu, which "
      "dereferences device memory from the host (crash or garbage). Same (boxes, scores, thr) -> keep semantics."),
    C("ml_nms = amp.float_function(_C.ml_nms)", "custom_cuda_extension", "replace", True,
      "ml_nms = amp.float_function(lambda boxes, scores, labels, thresh: torchvision.ops.batched_nms(boxes, scores, labels.long(), thresh))",
      "Same problem as _C.nms. batched_nms is the per-label NMS that ml_nms implements."),
])

E("p204_roialign", "maskrcnn_benchmark/layers/roi_align.py", "explicit_replacement",
  "maskrcnn-benchmark layers/roi_align.py (_ROIAlign autograd Function over _C kernels)", [
    C("=from apex import amp", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C("output = _C.roi_align_forward(", "custom_cuda_extension", "replace", True,
      "output = torch_npu.npu_roi_align(input, roi, spatial_scale, output_size[0], output_size[1], sampling_ratio, 0)",
      "CPU-only _C cannot take NPU tensors. npu_roi_align(self, rois, spatial_scale, pooled_h, pooled_w, sample_num, "
      "roi_end_mode) is in the op list. roi_end_mode=0 as the legacy (non-aligned) box convention is unconfirmed."),
    C("grad_input = _C.roi_align_backward(", "custom_cuda_extension", "replace", True,
      "grad_input = torch_npu.npu_roi_alignbk(grad_output, rois, [bs, ch, h, w], output_size[1], output_size[0], spatial_scale, sampling_ratio)",
      "Backward kernel. npu_roi_alignbk(self, rois, xdiff_shape, pooled_width, pooled_height, spatial_scale, sample_num) "
      "takes width before height."),
])

E("p204_roipool", "maskrcnn_benchmark/layers/roi_pool.py", "explicit_replacement",
  "maskrcnn-benchmark layers/roi_pool.py (_ROIPool Function over _C kernels)", [
    C("=from apex import amp", "import_torch_npu", "npu_only_addition", True,
      "import torchvision, torchvision_npu  # noqa: F401",
      "torchvision_npu registers the NPU kernel behind torch.ops.torchvision.roi_pool."),
    C("output, argmax = _C.roi_pool_forward(", "custom_cuda_extension", "replace", True,
      "output, argmax = torch.ops.torchvision.roi_pool(input, roi, spatial_scale, output_size[0], output_size[1])",
      "CPU-only _C with NPU tensors crashes. torch_npu has no roi_pool op, but torchvision_npu lists roi_pool as supported. "
      "The torchvision op also returns (output, argmax)."),
    C("grad_input = _C.roi_pool_backward(", "custom_cuda_extension", "replace", True,
      "grad_input = torch.ops.torchvision._roi_pool_backward(grad_output, rois, argmax, spatial_scale, output_size[0], output_size[1], bs, ch, h, w)",
      "Backward counterpart. That torchvision_npu registers _roi_pool_backward for NPU is unconfirmed. The alternative "
      "is to drop the Function and call torchvision.ops.roi_pool directly."),
])

E("p204_focal", "maskrcnn_benchmark/layers/sigmoid_focal_loss.py", "explicit_replacement",
  "maskrcnn-benchmark / FCOS layers/sigmoid_focal_loss.py (is_cuda dispatch between _C kernel and python fallback)", [
    C("gamma = gamma[0]", "unsupported_op_workaround", "replace", True,
      "gamma = gamma[0] if isinstance(gamma, (list, tuple)) else gamma",
      "On NPU, logits.is_cuda is False, so SigmoidFocalLoss always takes the pure-torch 'cpu' path (which is fine on NPU "
      "tensors). But that path indexes the float gamma the FCOS/RetinaNet losses pass: TypeError. It was never "
      "exercised on GPU."),
    C("alpha = alpha[0]", "unsupported_op_workaround", "replace", True,
      "alpha = alpha[0] if isinstance(alpha, (list, tuple)) else alpha",
      "Same float-indexing bug on the fallback path that NPU now always takes."),
])

E("p204_dcn", "maskrcnn_benchmark/layers/dcn/deform_conv_func.py", "explicit_replacement",
  "FCOS / maskrcnn-benchmark layers/dcn/deform_conv_func.py (DCN v1/v2 Functions over _C)", [
    C("=from maskrcnn_benchmark import _C", "import_torch_npu", "npu_only_addition", True,
      "import torchvision, torchvision_npu  # noqa: F401",
      "torchvision_npu provides the NPU deform_conv2d kernel (forward and backward) used below."),
    C("deform_conv = DeformConvFunction.apply", "custom_cuda_extension", "replace", True,
      "deform_conv = lambda input, offset, weight, stride=1, padding=0, dilation=1, groups=1, deformable_groups=1, im2col_step=64: torchvision.ops.deform_conv2d(input, offset, weight, stride=stride, padding=padding, dilation=dilation)",
      "DeformConvFunction raises NotImplementedError for non-CUDA input, and the CPU-only _C has no DCN. torchvision's "
      "op infers groups and offset groups from the weight/offset shapes and has native autograd. The Function bodies "
      "become dead code."),
    C("modulated_deform_conv = ModulatedDeformConvFunction.apply", "custom_cuda_extension", "replace", True,
      "modulated_deform_conv = lambda input, offset, mask, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, deformable_groups=1: torchvision.ops.deform_conv2d(input, offset, weight, bias, stride=stride, padding=padding, dilation=dilation, mask=mask)",
      "DCNv2: mask= gives the modulated variant. torch_npu.npu_deformable_conv2d is the fused alternative, but it has a "
      "different offset layout (unconfirmed)."),
])

# --------------------------------------------------------------------------- utils / engine / data / solver
E("p204_comm", "maskrcnn_benchmark/utils/comm.py", "explicit_replacement",
  "maskrcnn-benchmark utils/comm.py (pickle all_gather through CUDA byte tensors) + FCOS reduce_sum", [
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).to("npu")', "The 'cuda' device is unavailable, and HCCL only moves NPU tensors."),
    C('local_size = torch.LongTensor([tensor.numel()]).to("cuda")', "tensor_to_device", "replace", True,
      'local_size = torch.LongTensor([tensor.numel()]).to("npu")', "Same: collective buffers must be on the NPU."),
    C('size_list = [torch.LongTensor([0]).to("cuda") for _ in range(world_size)]', "tensor_to_device", "replace", True,
      'size_list = [torch.LongTensor([0]).to("npu") for _ in range(world_size)]', "Same."),
    C('tensor_list.append(torch.ByteTensor(size=(max_size,)).to("cuda"))', "tensor_to_device", "replace", True,
      'tensor_list.append(torch.ByteTensor(size=(max_size,)).to("npu"))', "Same."),
    C('padding = torch.ByteTensor(size=(max_size - local_size,)).to("cuda")', "tensor_to_device", "replace", True,
      'padding = torch.ByteTensor(size=(max_size - local_size,)).to("npu")', "Same."),
    C("payload = torch.ByteTensor(list(pickle.dumps(obj))).cuda()", "tensor_to_device", "replace", True,
      "payload = torch.ByteTensor(list(pickle.dumps(obj))).npu()", "Tensor.cuda() fails without CUDA."),
    C("length = torch.LongTensor([payload.numel()]).cuda()", "tensor_to_device", "replace", True,
      "length = torch.LongTensor([payload.numel()]).npu()", "Same."),
    C("length = torch.LongTensor([0]).cuda()", "tensor_to_device", "replace", True,
      "length = torch.LongTensor([0]).npu()", "Same."),
    C('payload = torch.empty((int(length.item()),), dtype=torch.uint8, device="cuda")', "device_type", "replace", True,
      'payload = torch.empty((int(length.item()),), dtype=torch.uint8, device="npu")', "'cuda' device string."),
])

E("p204_misc", "maskrcnn_benchmark/utils/miscellaneous.py", "device_branch_or_abstraction",
  "maskrcnn-benchmark utils/miscellaneous.py grown with fork helpers (seed, device choice, nvidia-smi, memory)", [
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "The guard is False on NPU, so the explicit accelerator seeding is skipped. torch.manual_seed(seed) on the "
      "line above also seeds the PrivateUse1 (NPU) generator in torch>=2.1, so the effect is at most cosmetic "
      "(unconfirmed in the knowledge base)."),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "See above. Only reached when the guard is true."),
    C('return torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'return torch.device("npu" if torch.npu.is_available() else "cpu")',
      "The helper silently falls back to CPU on an NPU host."),
    C('"nvidia-smi",', "torch_cuda_api", "replace", False, '"npu-smi", "info",',
      "nvidia-smi is missing, but the OSError is caught and {} is returned, so only monitoring is lost. npu-smi "
      "output needs a different parser; torch.npu.mem_get_info is the simpler source."),
    C("device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "device = torch.npu.current_device()", "torch.cuda lazy init raises without CUDA."),
    C('"allocated": torch.cuda.memory_allocated(device) / mb,', "torch_cuda_api", "replace", True,
      '"allocated": torch.npu.memory_allocated(device) / mb,',
      "CUDA allocator stats: the NPU allocator is not reported (0 or error)."),
    C('"reserved": torch.cuda.memory_reserved(device) / mb,', "torch_cuda_api", "replace", True,
      '"reserved": torch.npu.memory_reserved(device) / mb,', "Same."),
    C('"peak": torch.cuda.max_memory_allocated(device) / mb,', "torch_cuda_api", "replace", True,
      '"peak": torch.npu.max_memory_allocated(device) / mb,', "Same."),
    C('visible = os.environ.get("CUDA_VISIBLE_DEVICES")', "env_var", "replace", True,
      'visible = os.environ.get("ASCEND_RT_VISIBLE_DEVICES")',
      "The launch scripts now export ASCEND_RT_VISIBLE_DEVICES. Reading the CUDA variable silently miscounts."),
    C("return torch.cuda.device_count()", "torch_cuda_api", "replace", True, "return torch.npu.device_count()",
      "Returns 0 on an NPU host, so callers see no devices."),
])

E("p204_trainer", "maskrcnn_benchmark/engine/trainer.py", "explicit_replacement",
  "maskrcnn-benchmark engine/trainer.py do_train (apex scale_loss, max mem logging)", [
    C("=memory=torch.cuda.max_memory_allocated() / 1024.0 / 1024.0,", "torch_cuda_api", "replace", True,
      "memory=torch.npu.max_memory_allocated() / 1024.0 / 1024.0,",
      "Queries the CUDA allocator. Without CUDA it reports 0 or raises, never the NPU peak."),
    C("memory=torch.cuda.max_memory_allocated() / 1024.0 / 1024.0 if torch.cuda.is_available() else 0.0,",
      "torch_cuda_api", "replace", True,
      "memory=torch.npu.max_memory_allocated() / 1024.0 / 1024.0 if torch.npu.is_available() else 0.0,",
      "The guard makes it silently log 0 on NPU."),
])

E("p204_inference", "maskrcnn_benchmark/engine/inference.py", "explicit_replacement",
  "SGB engine/inference.py compute_on_dataset (timer + torch.cuda.synchronize, all_gather)", [
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "A no-op without an initialised CUDA context. Only cached NPU memory is not released (memory headroom, not correctness)."),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "Reached whenever MODEL.DEVICE != 'cpu'. torch.cuda lazy init raises without CUDA, and it would not time NPU work anyway."),
    C('device="cuda",', "device_type", "replace", False, 'device="npu",',
      "Default argument only. Every caller passes device=cfg.MODEL.DEVICE."),
])

E("p204_databuild", "maskrcnn_benchmark/data/build.py", "explicit_replacement",
  "SGB data/build.py make_data_loader (+ fork PIN_MEMORY option)", [
    C("pin_memory=cfg.DATALOADER.PIN_MEMORY,", "pin_memory", "replace", False,
      'pin_memory=cfg.DATALOADER.PIN_MEMORY, pin_memory_device="npu",',
      "Without CUDA the loader silently skips pinning (torch 2.1 checks torch.cuda.is_available()). Performance only; "
      "unconfirmed in the knowledge base."),
])

E("p204_solver", "maskrcnn_benchmark/solver/build.py", "explicit_replacement",
  "SGB solver/build.py make_optimizer (per-parameter SGD groups)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "Only needed for the optional fused optimizer below."),
    C("optimizer = torch.optim.SGD(params, lr=cfg.SOLVER.BASE_LR, momentum=cfg.SOLVER.MOMENTUM)", "fused_optimizer",
      "replace", False,
      "optimizer = torch_npu.optim.NpuFusedSGD(params, lr=cfg.SOLVER.BASE_LR, momentum=cfg.SOLVER.MOMENTUM)",
      "msFmkTransplt performance advice. torch.optim.SGD works on NPU. Per-parameter groups limit the gain."),
])

E("p204_checkpoint", "maskrcnn_benchmark/utils/checkpoint.py", "explicit_replacement",
  "maskrcnn-benchmark utils/checkpoint.py (Checkpointer, clip_grad_norm from MOTIFS)", [
    C("state[k] = v.cuda()", "tensor_to_device", "replace", True, "state[k] = v.npu()",
      "Moving optimizer state with .cuda() fails on resume. Optimizer.load_state_dict already casts to the param "
      "device, so deleting the loop also works."),
])

E("p204_fcosloss", "maskrcnn_benchmark/modeling/rpn/fcos/loss.py", "explicit_replacement",
  "FCOS modeling/rpn/fcos/loss.py (num_gpus normalisation via reduce_sum)", [])

# --------------------------------------------------------------------------- relation heads
E("p204_utils_motifs", "maskrcnn_benchmark/modeling/roi_heads/relation_head/utils_motifs.py", "explicit_replacement",
  "SGB relation_head/utils_motifs.py (neural-motifs helpers: sort_by_score, GloVe loading, nms_overlaps)", [
    C("inds = torch.LongTensor(inds).cuda(scores[0].get_device())", "tensor_to_device", "replace", True,
      "inds = torch.LongTensor(inds).to(scores[0].device)",
      "Neural-motifs idiom. .cuda(idx) fails without CUDA. Note that ls_transposed on the next lines must stay on "
      "the CPU (PackedSequence batch_sizes)."),
])

E("p204_motifs", "maskrcnn_benchmark/modeling/roi_heads/relation_head/model_motifs.py", "explicit_replacement",
  "SGB relation_head/model_motifs.py (FrequencyBias, DecoderRNN, LSTMContext with PackedSequence)", [
    C("out_commitments = torch.from_numpy(best_inds).cuda(sequence_tensor.get_device())", "tensor_to_device", "replace",
      True, "out_commitments = torch.from_numpy(best_inds).to(sequence_tensor.device)",
      "SGDet test-time NMS path. .cuda(index) fails on NPU."),
])

E("p204_treelstm", "maskrcnn_benchmark/modeling/roi_heads/relation_head/utils_treelstm.py", "explicit_replacement",
  "VCTree tree-LSTM utilities (legacy KaihuaTang/VCTree style with Variable(...).cuda())", [
    C("binary_mask = Variable(torch.FloatTensor(h_dim).cuda().fill_(0.0))", "tensor_to_device", "replace", True,
      "binary_mask = Variable(torch.FloatTensor(h_dim).npu().fill_(0.0))",
      "Dropout mask for the tree LSTM, created with .cuda()."),
    C("h_order = Variable(torch.LongTensor([0] * num_obj).cuda())", "tensor_to_device", "replace", True,
      "h_order = torch.zeros(num_obj, dtype=torch.int64, device=features.device)", ".cuda() on the order buffer."),
    C("left_c = Variable(torch.FloatTensor([0.0] * self.h_dim).cuda()).view(1, -1)", "tensor_to_device", "replace", True,
      "left_c = features.new_zeros((1, self.h_dim))", "Leaf state created with .cuda()."),
    C("left_h = Variable(torch.FloatTensor([0.0] * self.h_dim).cuda()).view(1, -1)", "tensor_to_device", "replace", True,
      "left_h = features.new_zeros((1, self.h_dim))", "Same."),
    C('root_c = torch.zeros((1, self.h_dim), device="cuda")', "device_type", "replace", True,
      "root_c = features.new_zeros((1, self.h_dim))", "'cuda' device string."),
    C('root_h = torch.zeros((1, self.h_dim), device="cuda")', "device_type", "replace", True,
      "root_h = features.new_zeros((1, self.h_dim))", "Same."),
])

E("p204_vctree", "maskrcnn_benchmark/modeling/roi_heads/relation_head/model_vctree.py", "explicit_replacement",
  "SGB relation_head/model_vctree.py (VCTree construction: generate_forest, bi-tree conversion, score net)", [])

E("p204_predictors", "maskrcnn_benchmark/modeling/roi_heads/relation_head/roi_relation_predictors.py",
  "explicit_replacement",
  "SGB roi_relation_predictors.py (MotifPredictor, VCTreePredictor) + a fork's re-weighted predictor", [
    C("self.rel_weight = torch.FloatTensor(weights).cuda()", "tensor_to_device", "replace", True,
      "self.rel_weight = torch.FloatTensor(weights).npu()",
      "Class weights created with .cuda() at model build time. A plain attribute, so model.to() does not move it."),
])

# --------------------------------------------------------------------------- entry points
E("p204_train_net", "tools/train_net.py", "explicit_replacement",
  "FCOS / maskrcnn-benchmark tools/train_net.py (local_rank, set_device, env:// init, apex amp)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C("model, optimizer = amp.initialize(model, optimizer, opt_level=amp_opt_level, verbosity=int(cfg.AMP_VERBOSE))",
      "amp", "replace", False,
      "model, optimizer = amp.initialize(model, optimizer, opt_level=amp_opt_level, verbosity=int(cfg.AMP_VERBOSE), combine_grad=True)",
      "With the Ascend apex patch, the call works unchanged. combine_grad=True is its fused-unscale performance option."),
    C("torch.cuda.empty_cache()  # TODO check if it helps", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # TODO check if it helps", "Silent no-op without CUDA. Memory headroom only."),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)",
      "Raises without CUDA. Without an NPU set_device every rank would also use npu:0."),
])

E("p204_rel_train", "tools/relation_train_net.py", "explicit_replacement",
  "SGB tools/relation_train_net.py (apex O1, run_val/run_test, nccl env:// init)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C("if use_mixed_precision and torch.cuda.get_device_capability(local_rank)[0] < 7:", "device_capability_check",
      "removal", True, None,
      "Tensor-core check (drop the two-line block). torch.cuda.get_device_capability raises without CUDA; the NPU "
      "form returns None (not subscriptable) unless TORCH_NPU_DEVICE_CAPABILITY is set."),
    C("model, optimizer = amp.initialize(model, optimizer, opt_level=amp_opt_level)", "amp", "replace", False,
      "model, optimizer = amp.initialize(model, optimizer, opt_level=amp_opt_level, combine_grad=True)",
      "Works as-is with Ascend apex. combine_grad is a performance option."),
    C("=memory=torch.cuda.max_memory_allocated() / 1024.0 / 1024.0,", "torch_cuda_api", "replace", True,
      "memory=torch.npu.max_memory_allocated() / 1024.0 / 1024.0,", "CUDA allocator stats, never the NPU peak."),
    C("torch.cuda.empty_cache()  # release training activations before validation", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # release training activations before validation", "Silent no-op. Memory headroom only."),
    C("torch.cuda.empty_cache()  # and drop the eval buffers again", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # and drop the eval buffers again", "Same."),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "Same (run_test)."),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "Raises without CUDA. Ranks must bind their own NPU."),
    C('backend="nccl", init_method="env://"', "dist_backend", "replace", True,
      'backend="hccl", init_method="env://"', "NCCL is unavailable. HCCL is the NPU collective backend."),
])

E("p204_rel_test", "tools/relation_test_net.py", "explicit_replacement",
  "SGB tools/relation_test_net.py (legacy apex amp.init handle, multi-GPU eval)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "Raises without CUDA."),
    C('backend="nccl", init_method="env://"', "dist_backend", "replace", True,
      'backend="hccl", init_method="env://"', "NCCL is unavailable on NPU."),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "A silent no-op. SGDet cached proposals are simply not released between splits (memory headroom)."),
])

E("p204_bench", "tools/benchmark_speed.py", "transfer_to_npu",
  "fork-added speed benchmark for SGG models (CUDA events, autocast, NVTX, pynvml)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "Automatic migration: torch.cuda.*, autocast, Event, and device='cuda' args of the wrapped .to/factories are "
      "redirected. Only what it misses is labelled below."),
    C("major, minor = torch.cuda.get_device_capability(device)", "device_capability_check", "replace", True,
      "major, minor = torch.cuda.get_device_capability(device) or (-1, -1)",
      "transfer_to_npu maps this to torch_npu.npu.get_device_capability, which returns None, so the tuple unpack "
      "raises TypeError (unless TORCH_NPU_DEVICE_CAPABILITY is set)."),
    C('torch.cuda.nvtx.range_push("iter{}".format(it))', "torch_cuda_api", "replace", True,
      'rng = torch_npu.npu.mstx.range_start("iter{}".format(it))',
      "torch.cuda.nvtx is not in the patched set and fails without CUDA when --nvtx is given. mstx is the NPU counterpart."),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(rng)",
      "Same."),
    C("pynvml.nvmlInit()", "torch_cuda_api", "replace", True,
      "free, total = torch.npu.mem_get_info(index); return {\"sm_util\": torch.npu.utilization(index), \"mem_used_mb\": (total - free) / 2 ** 20}",
      "nvidia-ml-py3 is in requirements.txt, so pynvml imports but nvmlInit raises NVMLError (no libnvidia-ml) at the "
      "end of every run."),
])

E("p204_demo", "demo/sgg_demo.py", "explicit_replacement",
  "SGB-style custom-image SGDet demo (COCODemo-like predictor class)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C('def __init__(self, cfg, weights, min_image_size=600, topk_rel=20, device="cuda"):', "device_type", "replace",
      True, 'def __init__(self, cfg, weights, min_image_size=600, topk_rel=20, device="npu"):',
      "main() relies on the default, and image_list.to(self.device) would target cuda."),
    C("self.model.cuda()", "tensor_to_device", "replace", True, "self.model.to(self.device)",
      "Module.cuda() fails without CUDA."),
    C('checkpoint = torch.load(weights, map_location=torch.device("cuda"))', "device_type", "replace", True,
      'checkpoint = torch.load(weights, map_location=torch.device("cpu"))',
      "Deserialising onto 'cuda' raises on a host without CUDA. load_state_dict copies onto the NPU model."),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu)', "env_var", "replace", True,
      "torch.npu.set_device(args.gpu)",
      "Ignored by the Ascend runtime, so --gpu is silently lost. Select the device explicitly."),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
      "Always true on an NPU host, so the demo exits immediately."),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "Raises without CUDA (and would not time NPU work)."),
])

# --------------------------------------------------------------------------- launchers
E("p204_sh_train", "scripts/train_motifs_sgcls.sh", "explicit_replacement",
  "SGB README-style launcher (torch.distributed.launch relation_train_net.py, CUDA_VISIBLE_DEVICES)", [
    C("=#!/usr/bin/env bash", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (LD_LIBRARY_PATH, ASCEND_OPP_PATH...). Without it, import torch_npu fails with libhccl.so not found."),
    C("export CUDA_VISIBLE_DEVICES=${GPU_IDS}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU_IDS}",
      "Ignored on NPU, so local ranks 0..N-1 land on NPUs 0..N-1 instead of the requested ones."),
    C('echo "training ${MODEL_NAME} on GPUs ${CUDA_VISIBLE_DEVICES} (${NUM_GPUS} procs)"', "env_var", "replace", False,
      'echo "training ${MODEL_NAME} on NPUs ${ASCEND_RT_VISIBLE_DEVICES} (${NUM_GPUS} procs)"',
      "Log line only. It would print an empty device list once the export is renamed."),
])

E("p204_sh_multi", "scripts/dist_train_multinode.sh", "explicit_replacement",
  "multi-node torch.distributed.launch wrapper for FCOS/detector pre-training (NCCL_* tuning, nvidia-smi)", [
    C("=#!/bin/bash", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment is needed before torch_npu/HCCL can load."),
    C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
      "Diagnostics only. HCCL does not read NCCL_DEBUG."),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=eth0",
      "Multi-node: HCCL picks the host NIC for root-info exchange by its own priority when unset. A wrong NIC makes "
      "link setup fail or time out."),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
      "No HCCL meaning. NPU-to-NPU traffic uses the NPU's own RoCE ports (hccn_tool-configured)."),
    C("export NCCL_IB_HCA=mlx5_0,mlx5_1", "env_var", "removal", False, None, "Same: Mellanox HCA selection is irrelevant to HCCL."),
    C("export CUDA_DEVICE_ORDER=PCI_BUS_ID", "env_var", "removal", False, None, "CUDA enumeration order; no NPU effect."),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "Lists every device of an 8-NPU node, so being ignored changes nothing there. Renamed for intent (differs on "
      "16-die A3 nodes)."),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "torch_cuda_api", "replace", False,
      "npu-smi info",
      "The script has set -x but not set -e, so the missing binary only prints an error. The record is lost."),
])

E("p204_sh_test", "scripts/test_vctree_sgdet.sh", "explicit_replacement",
  "SGB README-style single-GPU SGDet evaluation launcher", [
    C("=#!/usr/bin/env bash", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment for torch_npu."),
    C("export CUDA_VISIBLE_DEVICES=${GPU:-0}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU:-0}",
      "Ignored on NPU: GPU=3 silently evaluates on NPU 0 (possibly next to another job)."),
    C("MODEL.DEVICE cuda \\", "device_type", "replace", True, "MODEL.DEVICE npu \\",
      "Command-line override beats the fixed config default."),
])
