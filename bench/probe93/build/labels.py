"""Labels for probe93 (hand-written synthetic upstream files; see ../README.md).

C(sub, kind, change_type, required, ported, note) -> one labelled change; `sub` must match exactly one line
("=text": the stripped line equals text).
E(id, path, style, imitates, changes) -> one file entry.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required,
            "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


R, A, B, X = "replace", "npu_only_addition", "add_branch", "removal"

APEX_AMP = ("NVIDIA apex amp is CUDA-only (amp.initialize rejects non-CUDA params, the NVIDIA build's kernels "
            "need nvcc); the port drops apex for native torch.npu.amp (Ascend's apex patch build would be the "
            "alternative)")

# --------------------------------------------------------------------------------------------
# maskrcnn-benchmark / VinVL scene_graph_benchmark
# --------------------------------------------------------------------------------------------

E("vinvl_setup", "setup.py", "device_branch_or_abstraction",
  "microsoft/scene_graph_benchmark (maskrcnn-benchmark) setup.py building maskrcnn_benchmark._C", [
    C("from torch.utils.cpp_extension import CUDAExtension", "custom_cuda_extension", R, False,
      "from torch_npu.utils.cpp_extension import NpuExtension",
      "import itself works on an NPU host; needed for an NPU build of the csrc ops (NpuExtension adds the "
      "torch_npu/ACL include and lib dirs)"),
    C('if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1":',
      "custom_cuda_extension", B, True,
      'if os.getenv("BUILD_NPU", "0") == "1": extension = NpuExtension; sources += source_npu ... '
      'elif (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1":',
      "on an NPU host this silently builds the CPU-only _C, whose kernels then receive NPU tensors "
      "(dispatch falls to the CPU code path or 'Not compiled with GPU support')"),
    C("        extension = CUDAExtension", "custom_cuda_extension", R, False,
      "extension = NpuExtension",
      "only reached with FORCE_CUDA=1 or a CUDA build; belongs to the NPU branch in the port"),
    C('extra_compile_args["nvcc"] = [', "custom_cuda_extension", R, False,
      'extra_compile_args["cxx"] += ["-DWITH_NPU"]',
      "nvcc flags are meaningless for an Ascend build; only on the CUDA branch"),
  ])

E("mb_defaults", "maskrcnn_benchmark/config/defaults.py", "explicit_replacement",
  "maskrcnn-benchmark / VinVL config/defaults.py (yacs defaults, MODEL.DEVICE)", [
    C('_C.MODEL.DEVICE = "cuda"', "device_type", R, True, '_C.MODEL.DEVICE = "npu"',
      "every entry script does torch.device(cfg.MODEL.DEVICE) / model.to(cfg.MODEL.DEVICE); 'cuda' fails "
      "without a CUDA build"),
    C('_C.DISTRIBUTED_BACKEND = "nccl"', "dist_backend", R, True, '_C.DISTRIBUTED_BACKEND = "hccl"',
      "fed to init_process_group by tools/test_sg_net.py; NCCL is not available on Ascend"),
  ])

E("mb_train_net", "tools/train_net.py", "explicit_replacement",
  "facebookresearch/maskrcnn-benchmark tools/train_net.py (apex amp, torch.distributed.launch)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "entry point: torch.npu / hccl need torch_npu loaded (explicit import recommended even with autoload)"),
    C("    from apex import amp", "amp", R, True, "from torch.npu import amp  # native autocast + GradScaler",
      APEX_AMP),
    C("model, optimizer = amp.initialize(model, optimizer, opt_level=amp_opt_level)", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler(enabled=use_mixed_precision)",
      "apex O1 on NPU params: NVIDIA apex errors on non-CUDA parameters; native autocast('npu') + GradScaler "
      "instead (do_train uses it)"),
    C("torch.cuda.empty_cache()  # TODO check if it helps", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()", "silent no-op without a CUDA context; cosmetic"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", R, True,
      "torch.npu.set_device(args.local_rank)", "raises without a CUDA build"),
    C('backend="nccl", init_method="env://"', "dist_backend", R, True,
      'backend="hccl", init_method="env://"', "NCCL is not available on Ascend; HCCL"),
  ])

E("mb_trainer", "maskrcnn_benchmark/engine/trainer.py", "explicit_replacement",
  "maskrcnn-benchmark engine/trainer.py (do_train with apex amp.scale_loss, max-mem logging)", [
    C("=from apex import amp", "amp", R, True, "from torch.npu import amp", APEX_AMP),
    C("with amp.scale_loss(losses, optimizer) as scaled_losses:", "amp", R, True,
      "scaler.scale(losses).backward(); scaler.step(optimizer); scaler.update()",
      "apex loss scaling goes with apex; native GradScaler (the forward also needs autocast('npu'))"),
    C("memory=torch.cuda.max_memory_allocated() / 1024.0 / 1024.0,", "torch_cuda_api", R, True,
      "memory=torch.npu.max_memory_allocated() / 1024.0 / 1024.0,",
      "returns 0 without an initialised CUDA context: the 'max mem' column is silently wrong"),
    C("memory=torch.cuda.max_memory_reserved() / 1024.0 / 1024.0,", "torch_cuda_api", R, True,
      "memory=torch.npu.max_memory_reserved() / 1024.0 / 1024.0,",
      "same: silently 0 on an NPU host"),
  ])

E("mb_comm", "maskrcnn_benchmark/utils/comm.py", "device_branch_or_abstraction",
  "maskrcnn-benchmark / VinVL utils/comm.py (pickled all_gather through device byte tensors)", [
    C('tensor = torch.ByteTensor(storage).to("cuda")', "device_type", R, True,
      'tensor = torch.ByteTensor(storage).to(_comm_device())',
      "'cuda' fails without a CUDA build; HCCL all_gather needs NPU tensors"),
    C('local_size = torch.LongTensor([tensor.numel()]).to("cuda")', "device_type", R, True,
      'local_size = torch.LongTensor([tensor.numel()]).to(_comm_device())', "same"),
    C('size_list = [torch.LongTensor([0]).to("cuda") for _ in range(world_size)]', "device_type", R, True,
      'size_list = [torch.LongTensor([0]).to(_comm_device()) for _ in range(world_size)]', "same"),
    C('tensor_list.append(torch.ByteTensor(size=(max_size,)).to("cuda"))', "device_type", R, True,
      'tensor_list.append(torch.ByteTensor(size=(max_size,)).to(_comm_device()))', "same"),
    C('padding = torch.ByteTensor(size=(max_size - local_size,)).to("cuda")', "device_type", R, True,
      'padding = torch.ByteTensor(size=(max_size - local_size,)).to(_comm_device())', "same"),
    C('device = torch.device("cuda", torch.cuda.current_device())', "torch_cuda_api", R, True,
      'device = torch.device("npu", torch.npu.current_device())',
      "torch.cuda.current_device() raises without a CUDA build"),
  ])

E("mb_roi_align", "maskrcnn_benchmark/layers/roi_align.py", "explicit_replacement",
  "maskrcnn-benchmark layers/roi_align.py (autograd Function over the _C CUDA kernel, apex float hint)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "the ported Function calls torch_npu.npu_roi_align / npu_roi_alignbk"),
    C("=from maskrcnn_benchmark import _C", "custom_cuda_extension", X, True, None,
      "the nvcc-built extension does not exist on the NPU host"),
    C("=from apex import amp", "amp", X, True, None, APEX_AMP),
    C("output = _C.roi_align_forward(", "custom_cuda_extension", R, True,
      "output = torch_npu.npu_roi_align(input, roi, spatial_scale, output_size[0], output_size[1], "
      "sampling_ratio, 0)",
      "CUDA kernel call; NPU has npu_roi_align (roi_end_mode 0 = legacy maskrcnn-benchmark alignment, "
      "alignment semantics unconfirmed)"),
    C("grad_input = _C.roi_align_backward(", "custom_cuda_extension", R, True,
      "grad_input = torch_npu.npu_roi_alignbk(grad_output, rois, [bs, ch, h, w], output_size[1], "
      "output_size[0], spatial_scale, sampling_ratio)",
      "backward kernel; npu_roi_alignbk takes (xdiff_shape, pooled_width, pooled_height, ...)"),
    C("@amp.float_function", "amp", R, True,
      "@torch.npu.amp.custom_fwd(cast_inputs=torch.float32)",
      "apex hint goes with the apex import; fp32 cast under native autocast instead"),
  ])

E("mb_nms", "maskrcnn_benchmark/layers/nms.py", "explicit_replacement",
  "maskrcnn-benchmark / VinVL layers/nms.py (nms and ml_nms bound from _C with apex float hints)", [
    C("=import torch", "import_torch_npu", A, True, "import torchvision\nimport torchvision_npu",
      "torchvision's nms / batched_nms only get NPU kernels once torchvision_npu is imported"),
    C("=from maskrcnn_benchmark import _C", "custom_cuda_extension", X, True, None,
      "nvcc-built extension not available on the NPU host"),
    C("=from apex import amp", "amp", X, True, None, APEX_AMP),
    C("nms = amp.float_function(_C.nms)", "custom_cuda_extension", R, True,
      "nms = torchvision.ops.nms  # NPU kernel via torchvision_npu",
      "_C.nms(boxes, scores, thresh) has the same signature as torchvision.ops.nms"),
    C("ml_nms = amp.float_function(_C.ml_nms)", "custom_cuda_extension", R, True,
      "ml_nms = torchvision.ops.batched_nms",
      "class-aware NMS; batched_nms(boxes, scores, labels, thresh) is the torchvision equivalent"),
  ])

E("mb_inference", "maskrcnn_benchmark/engine/inference.py", "explicit_replacement",
  "maskrcnn-benchmark / VinVL engine/inference.py (timed compute_on_dataset, TSV feature export)", [
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "guarded only by DEVICE != 'cpu', so an 'npu' device reaches it; raises without a CUDA build"),
    C('device="cuda",', "device_type", R, False, 'device="npu",',
      "default argument; every caller passes device=cfg.MODEL.DEVICE"),
  ])

E("vinvl_test_sg_net", "tools/test_sg_net.py", "explicit_replacement",
  "microsoft/scene_graph_benchmark tools/test_sg_net.py (VinVL feature extraction / attribute eval)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry point"),
    C("    from apex import amp", "amp", R, True, "from torch.npu import amp", APEX_AMP),
    C("torch.cuda.empty_cache()  # TODO check if it helps", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()", "no-op without CUDA; cosmetic"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", R, True,
      "torch.npu.set_device(args.local_rank)", "raises without a CUDA build"),
    C("amp_handle = amp.init(enabled=use_mixed_precision, verbose=cfg.AMP_VERBOSE)", "amp", R, False,
      "autocast_ctx = torch.autocast('npu', dtype=torch.float16, enabled=use_mixed_precision)",
      "deprecated apex handle API; a no-op at the default DTYPE float32 (unconfirmed under Ascend's apex)"),
  ])

E("vinvl_yaml", "sgg_configs/vgattr/vinvl_x152c4.yaml", "explicit_replacement",
  "VinVL sgg_configs/vgattr/vinvl_x152c4.yaml (X152-C4 attribute detector config)", [
    C('DEVICE: "cuda"', "device_type", R, True, 'DEVICE: "npu"',
      "overrides the defaults; model.to(cfg.MODEL.DEVICE) fails with 'cuda'"),
    C('DISTRIBUTED_BACKEND: "nccl"', "dist_backend", R, True, 'DISTRIBUTED_BACKEND: "hccl"',
      "process-group backend read by test_sg_net.py"),
  ])

E("vinvl_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "maskrcnn-benchmark / scene_graph_benchmark docker/Dockerfile (nvidia/cuda base, apex --cuda_ext, FORCE_CUDA)", [
    C('ARG CUDA="10.1"', "torch_cuda_api", R, False, 'ARG CANN="8.3.RC1"',
      "only parameterises the CUDA base image and cudatoolkit"),
    C("FROM nvidia/cuda:", "torch_cuda_api", R, True,
      "FROM ascendai/cann:${CANN}-910b-ubuntu22.04-py3.10",
      "CUDA runtime image; the NPU image needs CANN (toolkit + kernels) and a Python supported by torch_npu "
      "(image tag unconfirmed)"),
    C('RUN echo "installing pytorch for cuda ${CUDA}"', "import_torch_npu", A, True,
      "RUN pip install torch==2.1.0 torch_npu==2.1.0.post17 torchvision==0.16.0 torchvision_npu",
      "torch_npu (and torchvision_npu for nms/roi_align) must be installed, version-matched to torch"),
    C("&& conda install -y pytorch==1.7.0 torchvision==0.8.1 cudatoolkit=${CUDA} -c pytorch", "torch_cuda_api",
      R, True, "(replaced by the pip line above: CPU/aarch64 torch wheel + torch_npu)",
      "CUDA build of torch 1.7; no torch_npu exists for 1.7"),
    C("RUN git clone https://github.com/NVIDIA/apex.git", "custom_cuda_extension", R, False,
      "RUN git clone https://gitee.com/ascend/apex.git",
      "NVIDIA apex → Ascend apex patch (or drop apex once amp is native)"),
    C("&& python setup.py install --cuda_ext --cpp_ext", "custom_cuda_extension", R, True,
      "&& bash scripts/build.sh --python=3.10 && pip install apex/dist/apex-*.whl",
      "--cuda_ext needs nvcc: the image build fails"),
    C('ARG FORCE_CUDA="1"', "custom_cuda_extension", R, True, 'ARG FORCE_CUDA="0"',
      "forces the CUDAExtension branch of setup.py: nvcc missing, maskrcnn_benchmark build fails"),
    C('ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0 7.5+PTX"', "custom_cuda_extension", X, False, None,
      "ignored without nvcc"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, True, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "the NVIDIA container runtime variable does not mount /dev/davinci*; without the Ascend Docker Runtime "
      "variable torch.npu.is_available() is False in the container"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, False, None, "NVIDIA-runtime only"),
  ])

E("vinvl_extract_sh", "scripts/extract_vinvl_features.sh", "explicit_replacement",
  "VinVL feature-extraction launcher (torch.distributed.launch over test_sg_net.py, nvidia-smi probing)", [
    C("export CUDA_VISIBLE_DEVICES=", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "ignored by the NPU runtime (unconfirmed that it is ignored rather than honoured; the documented "
      "variable is ASCEND_RT_VISIBLE_DEVICES)"),
    C("export NCCL_DEBUG=WARN", "env_var", R, False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "no effect on HCCL; logging only"),
    C("export NCCL_IB_DISABLE=1", "env_var", X, False, None, "NCCL-only knob, harmless"),
    C("nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv", "torch_cuda_api", R, True,
      "npu-smi info", "command not found under `set -e`: the script aborts here"),
    C("FREE_MB=$(nvidia-smi --query-gpu=memory.free", "torch_cuda_api", R, False,
      "FREE_MB=$(python -c 'import torch, torch_npu; print(min(torch.npu.mem_get_info(i)[0] for i in "
      "range(torch.npu.device_count())) // 2**20)')",
      "pipeline exit status is head's, so FREE_MB is empty and the batch silently falls back to 1 image/device"),
    C("MODEL.DEVICE cuda", "device_type", R, True, "MODEL.DEVICE npu", "command-line override of the config"),
    C("nvidia-smi --query-gpu=index,memory.used --format=csv,noheader", "torch_cuda_api", R, False,
      "npu-smi info", "runs after the outputs are written; only turns the exit status to 127"),
  ])

# --------------------------------------------------------------------------------------------
# bottom-up-attention.pytorch (MILVLG, detectron2-based)
# --------------------------------------------------------------------------------------------

E("bua_extract_features", "extract_features.py", "explicit_replacement",
  "MILVLG/bottom-up-attention.pytorch extract_features.py (detectron2 + ray, one task per GPU)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry point"),
    C("from torch.nn import functional as F", "import_torch_npu", A, True, "import torchvision_npu",
      "detectron2's ROIPooler and batched_nms call torchvision ops, which only get NPU kernels from "
      "torchvision_npu"),
    C("cfg.merge_from_list(['MODEL.BUA.EXTRACT_FEATS', True])", "device_type", A, True,
      "cfg.merge_from_list(['MODEL.DEVICE', 'npu'])",
      "detectron2's default MODEL.DEVICE is 'cuda' and neither the script nor the configs set it, so "
      "build_model moves the model to cuda"),
    C("@ray.remote(num_gpus=1)", "distributed_framework", R, True, '@ray.remote(resources={"NPU": 1})',
      "ray detects no CUDA GPUs on an NPU host, so num_gpus=1 tasks never get scheduled (hang); ray's own NPU "
      "resource support is not covered by the knowledge base"),
    C("        torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "no-op without CUDA"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu_id", "env_var", R, True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu_id",
      "device selection is ignored by the NPU runtime: every ray worker would use the same NPU"),
    C("ray.init(num_cpus=args.num_cpus)", "distributed_framework", R, False,
      'ray.init(num_cpus=args.num_cpus, resources={"NPU": num_gpus})',
      "unconfirmed whether the installed ray auto-detects Ascend NPUs as an 'NPU' resource; declaring it "
      "makes the decorator above schedulable"),
  ])

E("bua_fast_rcnn_outputs", "bua/caffe/modeling/fast_rcnn_outputs.py", "explicit_replacement",
  "bottom-up-attention.pytorch bua/caffe/modeling/fast_rcnn_outputs.py (Caffe-style per-class NMS on bua._C)", [
    C("=from bua import _C", "custom_cuda_extension", R, True, "from torchvision.ops import nms as _tv_nms",
      "bua._C is an unconditional CUDAExtension (see setup.py) and cannot be built on the NPU host"),
    C("return _C.nms(dets, thresh)", "custom_cuda_extension", R, True,
      "return _tv_nms(dets[:, :4], dets[:, 4], thresh)",
      "CUDA NMS kernel; torchvision nms has an NPU kernel via torchvision_npu (Caffe's +1 pixel area "
      "convention differs slightly: precision note)"),
    C("for cls_ind in range(0, scores.shape[1]):", "npu_fused_op", R, False,
      "_, _, _, keep_num = torch_npu.npu_batch_nms(boxes[None], scores[None, :, :, None], 0.0, nms_thresh, "
      "topk_per_image, topk_per_image)",
      "1600 small NMS launches plus a host round-trip per class; a batched NMS is a performance rewrite "
      "(npu_batch_nms semantics vs. the max_conf bookkeeping unconfirmed)"),
  ])

E("bua_setup", "setup.py", "explicit_replacement",
  "bottom-up-attention.pytorch setup.py (unconditional CUDAExtension bua._C with -gencode flags)", [
    C("from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension", "custom_cuda_extension",
      R, True, "from torch.utils.cpp_extension import CppExtension",
      "the extension is built unconditionally as CUDAExtension; without CUDA_HOME setup.py fails"),
    C('source_cuda = glob.glob(os.path.join(extensions_dir, "**", "*.cu"))', "custom_cuda_extension", R, True,
      "source_cuda = []  # NMS / ROI pool come from torchvision_npu on Ascend",
      ".cu sources cannot be compiled without nvcc"),
    C("    extension = CUDAExtension", "custom_cuda_extension", R, True, "extension = CppExtension",
      "CUDAExtension raises when CUDA_HOME is unset"),
    C('define_macros = [("WITH_CUDA", None)]', "custom_cuda_extension", R, False, "define_macros = []",
      "goes with dropping the .cu sources (would otherwise leave unresolved CUDA symbols)"),
    C('extra_compile_args["nvcc"] = [', "custom_cuda_extension", X, False, None,
      "nvcc / -gencode flags are unused without CUDA sources"),
  ])

# --------------------------------------------------------------------------------------------
# LXMERT
# --------------------------------------------------------------------------------------------

E("lxmert_vqa", "src/tasks/vqa.py", "explicit_replacement",
  "airsplay/lxmert src/tasks/vqa.py (VQA fine-tuning on 36-box bottom-up features)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry point"),
    C("self.model = self.model.cuda()", "tensor_to_device", R, True, "self.model = self.model.npu()",
      "raises without a CUDA build"),
    C("self.model.lxrt_encoder.multi_gpu()", "distributed_framework", R, True,
      "pass  # LXRTEncoder.multi_gpu() wraps nn.DataParallel; run one process per NPU with DDP instead",
      "nn.DataParallel is marked unsupported in Ascend's API list"),
    C("self.optim = BertAdam(list(self.model.parameters()),", "fused_optimizer", R, False,
      "self.optim = torch_npu.optim.NpuFusedBertAdam(list(self.model.parameters()),",
      "LXMERT's own BertAdam works on NPU; NpuFusedBertAdam is the tensor-fused equivalent (warmup/t_total "
      "arguments match; performance only)"),
    C("feats, boxes, target = feats.cuda(), boxes.cuda(), target.cuda()", "tensor_to_device", R, True,
      "feats, boxes, target = feats.npu(), boxes.npu(), target.npu()", "raises without a CUDA build"),
    C("feats, boxes = feats.cuda(), boxes.cuda()", "tensor_to_device", R, True,
      "feats, boxes = feats.npu(), boxes.npu()", "same"),
    C('state_dict = torch.load("%s.pth" % path)', "device_type", R, True,
      'state_dict = torch.load("%s.pth" % path, map_location="cpu")',
      "the released VQA checkpoints were saved from GPU; deserialising CUDA storages raises when "
      "torch.cuda.is_available() is False"),
  ])

E("lxmert_pretrain", "src/pretrain/lxmert_pretrain.py", "transfer_to_npu",
  "airsplay/lxmert src/pretrain/lxmert_pretrain.py (five-task pre-training, many .cuda() calls)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu",
      "a dozen .cuda() calls: the natural port is transfer_to_npu, which leaves them in place"),
    C("self.model = nn.DataParallel(self.model)", "distributed_framework", R, True,
      "self.model = nn.parallel.DistributedDataParallel(self.model, device_ids=[local_rank])",
      "not covered by transfer_to_npu; DataParallel is unsupported on Ascend (the loss.mean() branches then "
      "become no-ops)"),
    C("optim = BertAdam(self.model.parameters(), lr=args.lr, warmup=warmup_ratio, t_total=t_total)",
      "fused_optimizer", R, False,
      "optim = torch_npu.optim.NpuFusedBertAdam(self.model.parameters(), lr=args.lr, warmup=warmup_ratio, "
      "t_total=t_total)", "performance only"),
    C("# released weights were saved from GPU", "device_type", R, False,
      'state_dict = torch.load("%s_LXRT.pth" % path, map_location="cpu")',
      "unconfirmed whether transfer_to_npu's patched torch.cuda restores CUDA-saved storages without a "
      "map_location; explicit map_location is the safe edit"),
  ])

E("lxmert_run_bash", "run/lxmert_pipeline.bash", "explicit_replacement",
  "LXMERT run/*.bash launchers (pre-train, VQA fine-tune, test) combined", [
    C("NGPU=$(nvidia-smi -L | wc -l)", "torch_cuda_api", R, False,
      "NGPU=$(npu-smi info -l | grep -c 'NPU ID')", "only echoed; prints 0 on an NPU host"),
    C("CUDA_VISIBLE_DEVICES=$GPUS PYTHONPATH", "env_var", R, True,
      "ASCEND_RT_VISIBLE_DEVICES=$GPUS PYTHONPATH=$PYTHONPATH:./src \\",
      "device selection ignored by the NPU runtime"),
    C("CUDA_VISIBLE_DEVICES=${GPUS%%,*} PYTHONPATH", "env_var", R, True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPUS%%,*} PYTHONPATH=$PYTHONPATH:./src \\", "same"),
    C("CUDA_VISIBLE_DEVICES=${GPUS##*,} PYTHONPATH", "env_var", R, True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPUS##*,} PYTHONPATH=$PYTHONPATH:./src \\", "same"),
  ])

# --------------------------------------------------------------------------------------------
# ViLBERT multi-task
# --------------------------------------------------------------------------------------------

E("vilbert_train_tasks", "train_tasks.py", "explicit_replacement",
  "facebookresearch/vilbert-multi-task train_tasks.py (multi-task trainer, apex DDP / FusedAdam)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry point"),
    C('device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")',
      "device_type", R, True,
      'device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")',
      "silently trains on the CPU on an NPU host"),
    C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", R, True, "n_gpu = torch.npu.device_count()",
      "returns 0: seeding and the multi-device path are skipped"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", R, True,
      "torch.npu.set_device(args.local_rank)", "raises without a CUDA build"),
    C('device = torch.device("cuda", args.local_rank)', "device_type", R, True,
      'device = torch.device("npu", args.local_rank)', "same"),
    C('torch.distributed.init_process_group(backend="nccl")', "dist_backend", R, True,
      'torch.distributed.init_process_group(backend="hccl")', "NCCL unavailable"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", R, False,
      "torch.npu.manual_seed_all(args.seed)", "lazily queued and harmless without CUDA; NPU RNG stays unseeded"),
    C("from apex.optimizers import FP16_Optimizer", "amp", R, False,
      "scaler = torch.npu.amp.GradScaler()",
      "--fp16 path only; apex's FP16_Optimizer wrapper is pure Python (unconfirmed on NPU tensors)"),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", R, True,
      "from torch_npu.optim import NpuFusedAdam",
      "--fp16 path: apex FusedAdam needs its CUDA kernels"),
    C("optimizer = FusedAdam(optimizer_grouped_parameters", "fused_optimizer", R, True,
      "optimizer = NpuFusedAdam(optimizer_grouped_parameters, lr=base_lr)",
      "CUDA multi-tensor kernel; max_grad_norm / bias_correction are apex-only arguments"),
    C("state[k] = v.cuda()", "tensor_to_device", R, True, "state[k] = v.to(device)",
      "optimizer state moved to cuda after resuming: raises without a CUDA build"),
    C("from apex.parallel import DistributedDataParallel as DDP", "distributed_framework", R, True,
      "from torch.nn.parallel import DistributedDataParallel as DDP",
      "apex DDP allocates torch.cuda streams and flattens through apex_C; torch DDP runs over HCCL"),
    C("model = DDP(model, delay_allreduce=True)", "distributed_framework", R, True,
      "model = DDP(model, device_ids=[args.local_rank], find_unused_parameters=True)",
      "delay_allreduce is an apex-only argument"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", R, True,
      "model = model  # single NPU; multi-NPU via torchrun + DDP",
      "nn.DataParallel is unsupported on Ascend"),
    C("        torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "no-op without CUDA"),
  ])

E("vilbert_task_utils", "vilbert/task_utils.py", "explicit_replacement",
  "vilbert-multi-task vilbert/task_utils.py (ForwardModelsTrain / ForwardModelsVal / EvaluatingModel)", [
    C("=batch = tuple(t.cuda(device=device, non_blocking=True) for t in batch)", "tensor_to_device", R, True,
      "batch = tuple(t.to(device=device, non_blocking=True) for t in batch)",
      "Tensor.cuda(device=<npu device>) raises ('Invalid device, must be cuda device')"),
    C("for t in batch)  # train batch", "tensor_to_device", R, True,
      "batch = tuple(t.to(device=device, non_blocking=True) for t in batch)  # train batch", "same"),
    C("one_hots = torch.zeros(*labels.size()).cuda()", "tensor_to_device", R, True,
      "one_hots = torch.zeros(*labels.size(), device=labels.device)", "raises without a CUDA build"),
    C("batch = tuple(t.cuda(device=device, non_blocking=True) if type(t)", "tensor_to_device", R, True,
      "batch = tuple(t.to(device=device, non_blocking=True) if type(t) == torch.Tensor else t for t in batch)",
      "same"),
  ])

E("vilbert_extract_features", "script/extract_features.py", "explicit_replacement",
  "vilbert-multi-task script/extract_features.py (vqa-maskrcnn-benchmark fc6 region features)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry point"),
    C('model.to("cuda")', "device_type", R, True, 'model.to("npu")', "raises without a CUDA build"),
    C('current_img_list = current_img_list.to("cuda")', "device_type", R, True,
      'current_img_list = current_img_list.to("npu")',
      "raises, and extract_features() swallows every exception per chunk: no features are written at all"),
  ])

# --------------------------------------------------------------------------------------------
# Oscar / VinVL captioning
# --------------------------------------------------------------------------------------------

E("oscar_run_captioning", "oscar/run_captioning.py", "explicit_replacement",
  "microsoft/Oscar oscar/run_captioning.py (VinVL release: CE + SCST training, beam-search test)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry point"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "raises without a CUDA build"),
    C("backend='nccl', init_method='env://'", "dist_backend", R, True, "backend='hccl', init_method='env://'",
      "NCCL unavailable"),
    C("optimizer = AdamW(grouped_parameters, lr=args.learning_rate, eps=args.adam_epsilon)", "fused_optimizer",
      R, False, "optimizer = torch_npu.optim.NpuFusedAdamW(grouped_parameters, lr=args.learning_rate, "
      "eps=args.adam_epsilon)", "performance only (pytorch_transformers AdamW, correct_bias=True)"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "test-time timing; raises without a CUDA build"),
    C("args.device = torch.device('cuda')", "device_type", R, True, "args.device = torch.device('npu')",
      "unconditional 'cuda' device"),
  ])

E("oscar_requirements", "requirements.txt", "explicit_replacement",
  "Oscar / VinVL requirements pinned to cu101 wheels (+ NVIDIA apex from git)", [
    C("--find-links https://download.pytorch.org/whl/torch_stable.html", "torch_cuda_api", X, False, None,
      "only serves the +cuXXX wheels"),
    C("torch==1.7.0+cu101", "torch_cuda_api", R, True, "torch==2.1.0",
      "CUDA wheel; torch_npu exists only for torch >= 1.8 and must match torch exactly"),
    C("torchvision==0.8.1+cu101", "torch_cuda_api", R, True, "torchvision==0.16.0",
      "CUDA wheel, version-matched to the new torch"),
    C("# (the cu102 wheels of the same versions work as well)", "import_torch_npu", A, True,
      "torch_npu==2.1.0.post17\ntorchvision_npu", "torch_npu is not installed otherwise"),
    C("apex @ git+https://github.com/NVIDIA/apex.git@", "custom_cuda_extension", R, False,
      "# apex: Ascend/apex patch build, or drop it with native torch.npu.amp",
      "installs (Python-only without --cuda_ext) but its amp / FusedAdam are CUDA-only; call sites are the "
      "required edits"),
    C("=gpustat", "torch_cuda_api", X, False, None, "nvidia-smi wrapper; npu-smi on Ascend"),
    C("nvidia-ml-py3==7.352.0", "torch_cuda_api", X, False, None,
      "NVML has no NPU counterpart; unconfirmed whether anything imports it at runtime"),
  ])

# --------------------------------------------------------------------------------------------
# ruotianluo/self-critical.pytorch
# --------------------------------------------------------------------------------------------

E("sc_train", "tools/train.py", "transfer_to_npu",
  "ruotianluo/self-critical.pytorch tools/train.py (XE + SCST loop with DataParallel(LossWrapper))", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu",
      "research-style entry script: transfer_to_npu covers the .cuda() / torch.cuda.synchronize() lines"),
    C("dp_model = torch.nn.DataParallel(model)", "distributed_framework", R, True, "dp_model = model",
      "DataParallel is not remapped by transfer_to_npu and is unsupported on Ascend"),
    C("dp_lw_model = torch.nn.DataParallel(lw_model)", "distributed_framework", R, True,
      "dp_lw_model = lw_model", "same (the .mean() on the loss stays valid)"),
    C("model.load_state_dict(torch.load(os.path.join(opt.start_from, 'model.pth')))", "device_type", R, False,
      "model.load_state_dict(torch.load(os.path.join(opt.start_from, 'model.pth'), map_location='cpu'))",
      "checkpoints saved from GPU; unconfirmed whether transfer_to_npu remaps them without map_location"),
  ])

E("sc_attmodel", "captioning/models/AttModel.py", "explicit_replacement",
  "self-critical.pytorch captioning/models/AttModel.py (pack_wrapper over att_embed, UpDown core)", [
    C("tmp = pack_padded_sequence(input[indices], sorted_lengths.cpu(), batch_first=True)",
      "unsupported_op_workaround", R, True,
      "return module(att_feats) * att_masks.unsqueeze(-1).to(att_feats)  # in pack_wrapper",
      "pack_padded_sequence is marked unsupported in Ascend's API list (an aten _pack_padded_sequence kernel "
      "exists, so the exact failure mode is unconfirmed); pack_wrapper only packs to skip padded boxes"),
    C("tmp, _ = pad_packed_sequence(input, batch_first=True)", "unsupported_op_workaround", R, True,
      "(removed together with the packing in pack_wrapper)", "pad_packed_sequence likewise marked unsupported"),
  ])

E("sc_train_pl", "tools/train_pl.py", "explicit_replacement",
  "self-critical.pytorch tools/train_pl.py (PyTorch Lightning 1.x trainer)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry point"),
    C("        torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "no-op without CUDA"),
    C("if torch.cuda.current_device() in [0, -1]:", "torch_cuda_api", R, True,
      "if int(os.environ.get('LOCAL_RANK', 0)) == 0:",
      "raises without a CUDA build (module level, before the Trainer exists)"),
    C("accelerator='ddp',", "distributed_framework", R, False,
      "accelerator='npu', strategy=DDPStrategy(process_group_backend='hccl'),",
      "Lightning's NPU accelerator support is unconfirmed in the knowledge base; the process group must "
      "become hccl once devices are NPUs"),
    C("gpus=torch.cuda.device_count(),", "torch_cuda_api", R, True, "devices=torch.npu.device_count(),",
      "0 on an NPU host: Lightning silently trains on the CPU"),
    C("amp_backend='native',", "amp", R, False, "plugins=[NpuMixedPrecisionPlugin()],",
      "unconfirmed: Lightning 1.x's native AMP plugin hard-codes torch.cuda.amp.autocast/GradScaler, inactive "
      "for NPU tensors when FP16=1"),
    C("log_gpu_memory='min_max',", "torch_cuda_api", X, False, None,
      "Lightning gathers it through nvidia-smi; unconfirmed whether it is skipped off-GPU"),
  ])

# --------------------------------------------------------------------------------------------
# Bottom-up top-down captioning (poojahira) and VQA (hengyuan-hu)
# --------------------------------------------------------------------------------------------

E("butd_caption_train", "train.py", "explicit_replacement",
  "poojahira/image-captioning-bottom-up-top-down train.py (discriminative supervision, packed-loss trick)", [
    C("import torch.backends.cudnn as cudnn", "import_torch_npu", A, True, "import torch_npu",
      "entry point (the cudnn flag below is supported and stays)"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # sets device', "device_type",
      R, True, 'device = torch.device("npu" if torch.npu.is_available() else "cpu")  # sets device ...',
      "silently trains on the CPU"),
    C("global best_bleu4, epochs_since_improvement, checkpoint, start_epoch, data_name, word_map",
      "compile_mode", A, False, "torch_npu.npu.set_compile_mode(jit_compile=True)",
      "unconfirmed: Ascend's 2.7.1 list notes nn.LSTMCell does not support jit_compile=False without a "
      "NPU_FUZZY_COMPILE_BLACKLIST entry; the decoder is two LSTMCells"),
    C("checkpoint = torch.load(checkpoint)", "device_type", R, True,
      "checkpoint = torch.load(checkpoint, map_location='cpu')",
      "whole-module checkpoints pickled from GPU: CUDA storages cannot be restored without CUDA"),
    C("criterion_dis = nn.MultiLabelMarginLoss().to(device)", "unsupported_op_workaround", R, False,
      "criterion_dis = lambda x, y: F.multilabel_margin_loss(x, y)",
      "nn.MultiLabelMarginLoss is marked unsupported in Ascend's 2.7.1 list while "
      "F.multilabel_margin_loss is supported and has an aten kernel; failure unconfirmed"),
    C("scores, _ = pack_padded_sequence(scores, decode_lengths, batch_first=True)",
      "unsupported_op_workaround", R, True,
      "mask = torch.arange(scores.size(1), device=device)[None] < torch.tensor(decode_lengths, "
      "device=device)[:, None]; scores = scores[mask]",
      "pack_padded_sequence is marked unsupported on Ascend; it is only used to drop padded steps"),
    C("targets, _ = pack_padded_sequence(targets, decode_lengths, batch_first=True)",
      "unsupported_op_workaround", R, True, "targets = targets[mask]", "same"),
    C("scores_packed = pack_padded_sequence(", "unsupported_op_workaround", R, True,
      "scores_packed = scores[mask]", "same, validation"),
    C("targets_packed = pack_padded_sequence(", "unsupported_op_workaround", R, True,
      "targets_packed = targets[mask]", "same, validation"),
  ])

E("butd_caption_models", "models.py", "explicit_replacement",
  "poojahira/image-captioning-bottom-up-top-down models.py (top-down attention LSTM + language LSTM)", [
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "module-level device used by every .to(device) below: hidden states silently land on the CPU while "
      "the model is on the NPU"),
  ])

E("butd_vqa_main", "main.py", "explicit_replacement",
  "hengyuan-hu/bottom-up-attention-vqa main.py", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry point"),
    C("pred = model(v.cuda(), b.cuda(), q.cuda(), None)", "tensor_to_device", R, True,
      "pred = model(v.npu(), b.npu(), q.npu(), None)", "raises without a CUDA build"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", R, True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu", "device selection ignored by the NPU runtime"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(args.seed)",
      "lazily queued; NPU RNG unseeded"),
    C("model = getattr(base_model, constructor)(train_dset, args.num_hid).cuda()", "tensor_to_device", R, True,
      "model = getattr(base_model, constructor)(train_dset, args.num_hid).npu()",
      "raises without a CUDA build"),
    C("model = nn.DataParallel(model).cuda()", "distributed_framework", R, True, "model = model.npu()",
      "DataParallel unsupported on Ascend (and .cuda())"),
    C("model.load_state_dict(torch.load(args.resume))", "device_type", R, True,
      "model.load_state_dict(torch.load(args.resume, map_location='cpu'))",
      "checkpoints saved from GPU; also keyed 'module.' by DataParallel, which must be stripped once it is gone"),
  ])

E("butd_vqa_train", "train.py", "explicit_replacement",
  "hengyuan-hu/bottom-up-attention-vqa train.py (Adamax loop, Variable(...).cuda())", [
    C("one_hots = torch.zeros(*labels.size()).cuda()", "tensor_to_device", R, True,
      "one_hots = torch.zeros(*labels.size(), device=labels.device)", "raises without a CUDA build"),
    C("v = Variable(v).cuda()", "tensor_to_device", R, True, "v = v.npu()", "same"),
    C("b = Variable(b).cuda()", "tensor_to_device", R, True, "b = b.npu()", "same"),
    C("q = Variable(q).cuda()", "tensor_to_device", R, True, "q = q.npu()", "same"),
    C("a = Variable(a).cuda()", "tensor_to_device", R, True, "a = a.npu()", "same"),
    C("nn.utils.clip_grad_norm(model.parameters(), 0.25)", "unsupported_op_workaround", R, False,
      "nn.utils.clip_grad_norm_(model.parameters(), 0.25)",
      "deprecated alias marked unsupported in Ascend's list (clip_grad_norm_ is supported); failure unconfirmed"),
    C("v = Variable(v, volatile=True).cuda()", "tensor_to_device", R, True, "v = v.npu()", "same"),
    C("b = Variable(b, volatile=True).cuda()", "tensor_to_device", R, True, "b = b.npu()", "same"),
    C("q = Variable(q, volatile=True).cuda()", "tensor_to_device", R, True, "q = q.npu()", "same"),
    C("batch_score = compute_score_with_logits(pred, a.cuda()).sum()", "tensor_to_device", R, True,
      "batch_score = compute_score_with_logits(pred, a.npu()).sum()", "same"),
    C("pred = model(v.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "pred = model(v.npu(non_blocking=True), b.npu(non_blocking=True), q.npu(non_blocking=True), None)", "same"),
    C("batch_scores = compute_score_with_logits(pred, a.cuda(non_blocking=True)).sum(1)", "tensor_to_device",
      R, True, "batch_scores = compute_score_with_logits(pred, a.npu(non_blocking=True)).sum(1)", "same"),
  ])

E("butd_vqa_language_model", "language_model.py", "explicit_replacement",
  "hengyuan-hu/bottom-up-attention-vqa language_model.py (GRU question embedding)", [
    C("=dropout=dropout,", "unsupported_op_workaround", R, False,
      "dropout=dropout if rnn_type == 'LSTM' else 0.0,",
      "Ascend's list says nn.GRU does not support the dropout parameter; the default model passes 0.0 and "
      "one layer, so whether it is rejected or ignored is unconfirmed"),
    C("self.rnn.flatten_parameters()", "unsupported_op_workaround", X, False, None,
      "cuDNN weight compaction: returns early for non-CUDA weights; listed as unsupported by msFmkTransplt"),
  ])
