# Labels for probe283: video instance segmentation / multi-object video segmentation
# (MinVIS / VITA / GenVIS / IDOL / SeqFormer / DVIS / CTVIS style), CUDA -> Ascend NPU.
#
# Target stack assumed by the ported lines: torch==2.1.0 + torch-npu==2.1.0.post17 + CANN 8.3.RC1
# (a pairing listed in knowledge/torch-npu-migration.md §1.2). With torch 2.1 there is no
# device-backend autoload, so `import torch_npu` is required in every entry script.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ---------------------------------------------------------------------------------------------
# MinVIS (detectron2 + Mask2Former), frame-level training script
# ---------------------------------------------------------------------------------------------
E("minvis_train", "train_net_video.py", "device_branch_or_abstraction",
  "MinVIS train_net_video.py (detectron2 DefaultTrainer, Mask2Former optimizer builder)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry script; torch 2.1 has no backend autoload, and the DEVICE override below needs the npu backend registered"),
    C("cfg.merge_from_list(args.opts)", "device_type", "npu_only_addition", True,
      'cfg.MODEL.DEVICE = "npu" if cfg.MODEL.DEVICE.startswith("cuda") else cfg.MODEL.DEVICE',
      "detectron2 defaults MODEL.DEVICE to 'cuda'; build_model() moves the model to torch.device(cfg.MODEL.DEVICE), "
      "which fails on an NPU host (must be set before cfg.freeze())"),
    C("maybe_add_full_model_gradient_clipping(torch.optim.AdamW)(", "fused_optimizer", "replace", False,
      "optimizer = maybe_add_full_model_gradient_clipping(torch_npu.optim.NpuFusedAdamW)(",
      "performance only: msFmkTransplt advises NpuFusedAdamW for torch.optim.AdamW; the full-model clipping "
      "subclass still works on top of it"),
    C("from torch.cuda.amp import autocast", "amp", "replace", True,
      "from torch_npu.npu.amp import autocast",
      "half-precision test path: CUDA autocast is silently disabled on an NPU host, so TEST.HALF_PRECISION "
      "would quietly run in fp32"),
])

E("minvis_model", "minvis/video_maskformer_model.py", "device_branch_or_abstraction",
  "MinVIS VideoMaskFormer_frame meta-architecture (window inference, embedding matching)", [
    # Deliberately no labels: every tensor follows self.device (pixel_mean buffer) or is moved
    # to CPU explicitly; retry_if_cuda_oom is detectron2's helper (see README).
])

# ---------------------------------------------------------------------------------------------
# MultiScaleDeformableAttention op (Deformable-DETR op vendored by Mask2Former-video projects)
# ---------------------------------------------------------------------------------------------
E("m2f_msda_func", "mask2former_video/modeling/pixel_decoder/ops/functions/ms_deform_attn_func.py",
  "kernel_rewrite", "Mask2Former ops/functions/ms_deform_attn_func.py (MSDA autograd Function)", [
    C("from torch.cuda.amp import custom_bwd, custom_fwd", "amp", "replace", False,
      "from torch_npu.npu.amp import custom_bwd, custom_fwd",
      "the CUDA custom_fwd only checks the CUDA autocast state, so cast_inputs=float32 is skipped under NPU "
      "autocast; harmless with the PyTorch fallback (grid_sample accepts fp16), matters once an NPU kernel is "
      "bound (unconfirmed)"),
    C("import MultiScaleDeformableAttention as MSDA", "custom_cuda_extension", "replace", True,
      "MSDA = None  # nvcc-built extension does not exist on Ascend; use ms_deform_attn_core_pytorch",
      "the extension cannot be built without nvcc; the except branch re-raises ModuleNotFoundError so every "
      "import of the pixel decoder fails"),
    C("output = MSDA.ms_deform_attn_forward(", "custom_cuda_extension", "replace", True,
      "output = ms_deform_attn_core_pytorch(value, value_spatial_shapes, sampling_locations, attention_weights)",
      "CUDA kernel call site; ops/test.py calls the Function directly"),
    C("MSDA.ms_deform_attn_backward(", "custom_cuda_extension", "replace", True,
      "raise NotImplementedError('use autograd through ms_deform_attn_core_pytorch on NPU')",
      "CUDA backward kernel call site"),
])

E("m2f_msda_module", "mask2former_video/modeling/pixel_decoder/ops/modules/ms_deform_attn.py",
  "kernel_rewrite", "Mask2Former ops/modules/ms_deform_attn.py (MSDeformAttn module with bare-except CPU fallback)", [
    C("output = MSDeformAttnFunction.apply(", "custom_cuda_extension", "replace", False,
      "output = ms_deform_attn_core_pytorch(value, input_spatial_shapes, sampling_locations, attention_weights)",
      "once the MSDA import is guarded, the bare except already falls back to the grid_sample path; routing "
      "explicitly avoids an exception per call and hidden errors (perf/robustness only)"),
])

E("m2f_msda_setup", "mask2former_video/modeling/pixel_decoder/ops/setup.py", "kernel_rewrite",
  "Deformable-DETR / Mask2Former ops/setup.py (CUDAExtension build of MultiScaleDeformableAttention)", [
    C("from torch.utils.cpp_extension import CUDAExtension", "custom_cuda_extension", "replace", False,
      "from torch_npu.utils.cpp_extension import NpuExtension",
      "the import itself works on any torch build; the extension class used below is what must change"),
    C("if (os.environ.get('FORCE_CUDA') or torch.cuda.is_available()) and CUDA_HOME is not None:",
      "custom_cuda_extension", "replace", True,
      "if os.environ.get('FORCE_NPU') or torch.npu.is_available():",
      "on an NPU host this is False and the else-branch raises NotImplementedError, so `sh make.sh` aborts"),
    C("extension = CUDAExtension", "custom_cuda_extension", "replace", True,
      "extension = NpuExtension",
      "no nvcc on Ascend; an Ascend C kernel has to be built with torch_npu's NpuExtension"),
    C('source_cuda = glob.glob(os.path.join(extensions_dir, "cuda", "*.cu"))', "custom_cuda_extension", "replace", True,
      'source_npu = glob.glob(os.path.join(extensions_dir, "npu", "*.cpp"))',
      ".cu kernels cannot be compiled for Ascend; collect the Ascend C / op-plugin port instead"),
    C("sources += source_cuda", "custom_cuda_extension", "replace", True,
      "sources += source_npu",
      "add the NPU sources to the extension"),
    C('define_macros += [("WITH_CUDA", None)]', "custom_cuda_extension", "replace", True,
      'define_macros += [("WITH_NPU", None)]',
      "WITH_CUDA makes ms_deform_attn.h reference the CUDA entry points, which would not link"),
    C('extra_compile_args["nvcc"] = [', "custom_cuda_extension", "removal", False, None,
      "nvcc flags are dead weight for an NpuExtension"),
])

E("m2f_msda_header", "mask2former_video/modeling/pixel_decoder/ops/src/ms_deform_attn.h", "kernel_rewrite",
  "Deformable-DETR src/ms_deform_attn.h (device dispatch of the MSDA op)", [
    C('#include "cuda/ms_deform_attn_cuda.h"', "custom_cuda_extension", "npu_only_addition", True,
      '#include "npu/ms_deform_attn_npu.h"',
      "declare the Ascend implementation (guarded by WITH_NPU)"),
    C("if (value.type().is_cuda())", "custom_cuda_extension", "add_branch", True,
      "else if (value.device().type() == c10::DeviceType::PrivateUse1) { return ms_deform_attn_npu_forward(...); }",
      "NPU tensors are PrivateUse1, not CUDA: forward falls through to AT_ERROR"),
    C("if (value.is_cuda())", "custom_cuda_extension", "add_branch", True,
      "else if (value.device().type() == c10::DeviceType::PrivateUse1) { return ms_deform_attn_npu_backward(...); }",
      "same dispatch gap in backward"),
])

E("m2f_msda_test", "mask2former_video/modeling/pixel_decoder/ops/test.py", "explicit_replacement",
  "Deformable-DETR ops/test.py (CUDA kernel vs. PyTorch reference checks, gradcheck, timing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "standalone script that creates NPU tensors"),
    C("shapes = torch.as_tensor([(6, 4), (3, 2)], dtype=torch.long).cuda()", "tensor_to_device", "replace", True,
      "shapes = torch.as_tensor([(6, 4), (3, 2)], dtype=torch.long).npu()", ".cuda() fails on an NPU host"),
    C("value = torch.rand(N, S, M, channels).cuda() * 0.01", "tensor_to_device", "replace", True,
      "value = torch.rand(N, S, M, channels).npu() * 0.01", ".cuda() fails on an NPU host"),
    C("sampling_locations = torch.rand(N, Lq, M, L, P, 2).cuda()", "tensor_to_device", "replace", True,
      "sampling_locations = torch.rand(N, Lq, M, L, P, 2).npu()", ".cuda() fails on an NPU host"),
    C("attention_weights = torch.rand(N, Lq, M, L, P).cuda() + 1e-5", "tensor_to_device", "replace", True,
      "attention_weights = torch.rand(N, Lq, M, L, P).npu() + 1e-5", ".cuda() fails on an NPU host"),
    C("output_cuda = MSDeformAttnFunction.apply(value.double()", "custom_cuda_extension", "replace", True,
      "output_cuda = ms_deform_attn_core_pytorch(value.double(), shapes, sampling_locations.double(), attention_weights.double()).detach().cpu()",
      "the nvcc-built kernel is gone; compare the on-device PyTorch path against the reference instead "
      "(variable keeps its name; it holds a CPU tensor either way)"),
    C("output_cuda = MSDeformAttnFunction.apply(value, shapes", "custom_cuda_extension", "replace", True,
      "output_cuda = ms_deform_attn_core_pytorch(value, shapes, sampling_locations, attention_weights).detach().cpu()",
      "same, fp32 check"),
    C("func = MSDeformAttnFunction.apply", "custom_cuda_extension", "replace", True,
      "func = lambda v, s, lsi, loc, w, step: ms_deform_attn_core_pytorch(v, s, loc, w)",
      "gradcheck target is the CUDA Function"),
    C('value = torch.rand(N, S, M, channels, device="cuda") * 0.01', "device_type", "replace", True,
      'value = torch.rand(N, S, M, channels, device="npu") * 0.01', '"cuda" device string fails on an NPU host'),
    C('locs = torch.rand(N, Lq, M, L, P, 2, device="cuda")', "device_type", "replace", True,
      'locs = torch.rand(N, Lq, M, L, P, 2, device="npu")', '"cuda" device string'),
    C('weights = torch.rand(N, Lq, M, L, P, device="cuda") + 1e-5', "device_type", "replace", True,
      'weights = torch.rand(N, Lq, M, L, P, device="npu") + 1e-5', '"cuda" device string'),
    C('("cuda", lambda: MSDeformAttnFunction.apply(', "custom_cuda_extension", "replace", True,
      '("npu", lambda: ms_deform_attn_core_pytorch(value, shapes, locs, weights)),',
      "benchmark entry calls the CUDA kernel"),
    C("torch.cuda.synchronize()  # finish warm-up", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # finish warm-up", "torch.cuda.synchronize() lazily initialises CUDA and raises"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "same; timing needs the NPU queue drained"),
])

E("m2f_video_matcher", "mask2former_video/modeling/matcher.py", "device_branch_or_abstraction",
  "Mask2Former-video VideoHungarianMatcher (point-sampled mask costs under autocast(enabled=False))", [
    C("from torch.cuda.amp import autocast", "amp", "replace", True,
      "from torch_npu.npu.amp import autocast",
      "autocast(enabled=False) from torch.cuda.amp does not switch off NPU autocast, so under AMP the "
      "sigmoid-CE/dice cost matrices are computed in fp16 (einsum is autocast to half) instead of fp32"),
])

E("m2f_video_criterion", "mask2former_video/modeling/criterion.py", "device_branch_or_abstraction",
  "Mask2Former-video VideoSetCriterion (point-sampled mask losses, all_reduce of num_masks)", [
    # Deliberately no labels: tensors are created on the device of the outputs, and
    # torch.distributed.all_reduce is backend-agnostic (HCCL once the process group is hccl).
])

# ---------------------------------------------------------------------------------------------
# VITA
# ---------------------------------------------------------------------------------------------
E("vita_demo_predictor", "demo_vita/predictor.py", "device_branch_or_abstraction",
  "VITA / MinVIS demo predictor.py (detectron2 demo: VideoPredictor + multi-GPU AsyncPredictor)", [
    C("num_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpu = torch.npu.device_count()",
      "returns 0 on an NPU host, so --parallel silently runs every worker on CPU"),
    C('cfg.MODEL.DEVICE = "cuda:{}".format(gpuid) if num_gpus > 0 else "cpu"', "device_type", "replace", True,
      'cfg.MODEL.DEVICE = "npu:{}".format(gpuid) if num_gpus > 0 else "cpu"',
      "per-worker device string"),
])

E("vita_model", "vita/vita_model.py", "device_branch_or_abstraction",
  "VITA meta-architecture (frame detector run in chunks, clip-level object tokens)", [
    C("images = [(x.cuda().float() - self.pixel_mean) / self.pixel_std for x in images]", "tensor_to_device",
      "replace", True,
      "images = [(x.to(self.device).float() - self.pixel_mean) / self.pixel_std for x in images]",
      ".cuda() in the chunked inference path fails on an NPU host (training path already uses self.device)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "torch.cuda.empty_cache() is a silent no-op when CUDA was never initialised; NPU cached blocks are not "
      "released between chunks (memory headroom only)"),
])

E("genvis_train_sh", "scripts/train_ytvis21_genvis.sh", "explicit_replacement",
  "GenVIS two-stage training launcher (train_net_genvis.py --num-gpus 8)", [
    C("=set -e", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN libraries/ops paths must be in the environment before torch_npu is imported"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: a user-restricted device list silently does nothing"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL_* is ignored on NPU; logging level only"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
      "no effect on HCCL; no direct HCCL counterpart"),
    C('echo "Using GPUs: ${CUDA_VISIBLE_DEVICES}', "env_var", "replace", False,
      'echo "Using NPUs: ${ASCEND_RT_VISIBLE_DEVICES} (num-gpus=${NUM_GPUS}), dist port ${PORT}"',
      "log line follows the renamed variable"),
    C("nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv", "device_capability_check",
      "replace", True, "npu-smi info",
      "nvidia-smi does not exist on an Ascend host and the script runs under set -e, so it aborts here"),
    C("CUDA_VISIBLE_DEVICES=0 python train_net_genvis.py \\", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0 python train_net_genvis.py \\",
      "ignored on NPU, but with --num-gpus 1 device 0 is used anyway"),
])

# ---------------------------------------------------------------------------------------------
# IDOL (VNext, detectron2-based Deformable-DETR)
# ---------------------------------------------------------------------------------------------
E("idol_model", "projects/IDOL/idol/idol.py", "device_branch_or_abstraction",
  "IDOL meta-architecture (VNext): clip-split long-video inference, memory-bank tracker", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "silent no-op on an NPU host; only memory headroom between clips"),
    C("gt_masks = convert_coco_poly_to_mask(targets_per_image.gt_masks.polygons, h, w).cuda()", "tensor_to_device",
      "replace", True,
      "gt_masks = convert_coco_poly_to_mask(targets_per_image.gt_masks.polygons, h, w).to(self.device)",
      ".cuda() on COCO pseudo-video targets fails on an NPU host"),
    C("indices = torch.tensor(indices).cuda()", "tensor_to_device", "replace", True,
      "indices = torch.tensor(indices).to(logits.device)",
      ".cuda() in the per-frame inference loop (hit whenever no query passes the threshold)"),
])

E("idol_deformable_transformer", "projects/IDOL/idol/models/deformable_transformer.py",
  "device_branch_or_abstraction", "IDOL / Deformable-DETR deformable_transformer.py", [
    # Deliberately no labels: reference points use device=src.device, MSDeformAttn is imported
    # from the ops package (its port is labelled in the ops files).
])

E("idol_train", "projects/IDOL/train_net.py", "device_branch_or_abstraction",
  "IDOL train_net.py (VNext): detectron2 Trainer, AdamW with full-model clipping", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; required for torch 2.1"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "queued no-op without CUDA; torch.manual_seed on the line above already seeds the NPU generators"),
    C("maybe_add_full_model_gradient_clipping(torch.optim.AdamW)(", "fused_optimizer", "replace", False,
      "optimizer = maybe_add_full_model_gradient_clipping(torch_npu.optim.NpuFusedAdamW)(",
      "performance only"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on an NPU host"),
    C("cfg.merge_from_list(args.opts)", "device_type", "npu_only_addition", True,
      'cfg.MODEL.DEVICE = "npu" if cfg.MODEL.DEVICE.startswith("cuda") else cfg.MODEL.DEVICE',
      "IDOL does torch.device(cfg.MODEL.DEVICE) and .to() with it; detectron2's default is 'cuda'"),
])

# ---------------------------------------------------------------------------------------------
# SeqFormer (standalone Deformable-DETR code base, torch.distributed.launch)
# ---------------------------------------------------------------------------------------------
E("seqformer_main", "main.py", "explicit_replacement",
  "SeqFormer / Deformable-DETR main.py (argparse --device, DDP, DistributedSampler)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; required for torch 2.1"),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu',",
      "default device string feeds torch.device(args.device) and model.to(device)"),
    C("optimizer = torch.optim.AdamW(param_dicts, lr=args.lr,", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(param_dicts, lr=args.lr,",
      "performance only"),
])

E("seqformer_misc", "util/misc.py", "explicit_replacement",
  "SeqFormer / Deformable-DETR util/misc.py (SmoothedValue, all_gather, MetricLogger, init_distributed_mode)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace",
      True, "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "'cuda' tensor for the metric all_reduce (fp64 over HCCL not confirmed in knowledge; many ports switch to float32)"),
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).to("npu")', "all_gather staging buffer"),
    C('local_size = torch.tensor([tensor.numel()], device="cuda")', "device_type", "replace", True,
      'local_size = torch.tensor([tensor.numel()], device="npu")', '"cuda" device string'),
    C('size_list = [torch.tensor([0], device="cuda") for _ in range(world_size)]', "device_type", "replace", True,
      'size_list = [torch.tensor([0], device="npu") for _ in range(world_size)]', '"cuda" device string'),
    C('tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="cuda"))', "device_type", "replace",
      True, 'tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="npu"))', '"cuda" device string'),
    C('padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="cuda")', "device_type",
      "replace", True, 'padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="npu")',
      '"cuda" device string'),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "False on NPU: the logger just drops the max-mem column (must change together with the twin check below)"),
    C("if torch.cuda.is_available():  # max mem is only tracked on GPU", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():  # max mem is only tracked on the accelerator",
      "twin of the check above; changing only one breaks log_msg.format (missing 'memory')"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))", "logging only"),
    C("os.environ['LOCAL_SIZE'] = str(torch.cuda.device_count())", "torch_cuda_api", "replace", True,
      "os.environ['LOCAL_SIZE'] = str(torch.npu.device_count())",
      "0 on an NPU host; LOCAL_SIZE feeds NodeDistributedSampler (--cache_mode) as a divisor"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()",
      "0 on an NPU host -> proc_id % num_gpus raises ZeroDivisionError under SLURM/submitit"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)", "raises without CUDA; every rank must bind its NPU before HCCL init"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True,
      "args.dist_backend = 'hccl'", "NCCL is not available on Ascend; HCCL is the collective backend"),
])

E("seqformer_engine", "engine.py", "device_branch_or_abstraction",
  "SeqFormer / Deformable-DETR engine.py (train_one_epoch with data_prefetcher, evaluate)", [
    # Deliberately no labels: everything moves with the `device` argument.
])

E("seqformer_prefetcher", "datasets/data_prefetcher.py", "explicit_replacement",
  "Deformable-DETR datasets/data_prefetcher.py (side-stream H2D prefetch with record_stream)", [
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True,
      "self.stream = torch.npu.Stream()", "CUDA stream constructor fails on an NPU host"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
      "with torch.npu.stream(self.stream):", "stream context"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(self.stream)", "stream sync"),
    C("samples.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "samples.record_stream(torch.npu.current_stream())", "record_stream needs the NPU stream"),
    C("v.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "v.record_stream(torch.npu.current_stream())", "same for each target tensor"),
])

E("seqformer_inference", "inference.py", "explicit_replacement",
  "SeqFormer / VisTR-style inference.py (per-video YTVIS results.json)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; required for torch 2.1"),
    C("torch.cuda.set_device(args.gpu_id)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu_id)", "raises without CUDA"),
    C("state_dict = torch.load(args.model_path)['model']", "tensor_to_device", "replace", True,
      "state_dict = torch.load(args.model_path, map_location='cpu')['model']",
      "checkpoints saved from CUDA training hold cuda-located storages; torch.load without map_location "
      "fails to deserialise them on a host without CUDA"),
    C("img_set.append(transform(im).unsqueeze(0).cuda())", "tensor_to_device", "replace", True,
      "img_set.append(transform(im).unsqueeze(0).to(device))", ".cuda() fails on an NPU host"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on an NPU host"),
    C("torch.cuda.max_memory_allocated() / 1024 / 1024))", "torch_cuda_api", "replace", False,
      "vis_num, toc - tic, torch.npu.max_memory_allocated() / 1024 / 1024))",
      "reports 0 without CUDA; log only"),
])

E("seqformer_dist_launch_sh", "tools/run_dist_launch.sh", "explicit_replacement",
  "Deformable-DETR tools/run_dist_launch.sh (multi-node launcher around tools/launch.py)", [
    C("=set -x", "env_var", "npu_only_addition", True, SET_ENV, "CANN environment for every launched rank"),
    C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-ib0}", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "NCCL_SOCKET_IFNAME is ignored by HCCL; HCCL_SOCKET_IFNAME selects the host NIC for root-info exchange "
      "(default selection usually works on one node)"),
    C("export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3", "env_var", "removal", False, None,
      "Mellanox HCA pinning has no HCCL equivalent; ignored on NPU"),
])

E("seqformer_cfg_sh", "configs/r50_seqformer_ytvis.sh", "explicit_replacement",
  "SeqFormer configs/*.sh single-node launcher (python -m torch.distributed.launch --use_env main.py)", [
    C("=set -x", "env_var", "npu_only_addition", True, SET_ENV, "CANN environment"),
    C("CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7} \\", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7} \\",
      "device masking is silently ignored on NPU"),
])

E("seqformer_submitit", "run_with_submitit.py", "explicit_replacement",
  "Deformable-DETR / SeqFormer run_with_submitit.py (SLURM multi-node submission)", [
    C("kwargs['slurm_constraint'] = 'volta32gb'", "device_type", "removal", False, None,
      "GPU-model constraint; an Ascend partition has no such feature (only with --use_volta32)"),
    C("gpus_per_node=num_gpus_per_node,", "device_type", "replace", False,
      'slurm_additional_parameters={"gres": f"npu:{num_gpus_per_node}"},',
      "requests GPUs from SLURM; how NPUs are exposed (gres name) is site-specific - unconfirmed"),
])

# ---------------------------------------------------------------------------------------------
# DVIS / CTVIS
# ---------------------------------------------------------------------------------------------
E("dvis_model", "dvis/meta_architecture.py", "device_branch_or_abstraction",
  "DVIS MinVIS/DVIS_online meta-architecture (frozen segmenter + referring tracker, window inference)", [
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on an NPU host (training path, after dropping segmenter mask features)"),
    C("torch.cuda.empty_cache()  # long videos", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # long videos: release this window's activations before the next",
      "silent no-op on an NPU host; memory headroom on long videos only"),
])

E("dvis_train", "train_net_video.py", "device_branch_or_abstraction",
  "DVIS train_net_video.py (custom AMP trainer, DDP via create_ddp_model, peak-memory logging)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; required for torch 2.1"),
    C("from torch.cuda.amp import GradScaler", "amp", "replace", True,
      "from torch_npu.npu.amp import GradScaler",
      "CUDA GradScaler disables itself without CUDA; with NPU autocast in fp16 that means no loss scaling "
      "(gradient underflow)"),
    C('assert torch.cuda.is_available(), "[VideoAMPTrainer] CUDA is required for AMP training!"',
      "torch_cuda_api", "replace", True,
      'assert torch.npu.is_available(), "[VideoAMPTrainer] NPU is required for AMP training!"',
      "assert fails on every step with SOLVER.AMP.ENABLED"),
    C("from torch.cuda.amp import autocast", "amp", "replace", True,
      "from torch_npu.npu.amp import autocast",
      "CUDA autocast is silently disabled on an NPU host: AMP configs train in fp32"),
    C("optimizer = torch.optim.AdamW(params, cfg.SOLVER.BASE_LR)", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(params, cfg.SOLVER.BASE_LR)", "performance only"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device and raises without CUDA (eval aborts)"),
    C("dataset_name, torch.cuda.max_memory_allocated() / 1024 ** 2", "torch_cuda_api", "replace", False,
      "dataset_name, torch.npu.max_memory_allocated() / 1024 ** 2", "reports 0 without CUDA; log only"),
    C("cfg.merge_from_list(args.opts)", "device_type", "npu_only_addition", True,
      'cfg.MODEL.DEVICE = "npu" if cfg.MODEL.DEVICE.startswith("cuda") else cfg.MODEL.DEVICE',
      "detectron2 default device is 'cuda'"),
])

E("ctvis_test_long", "tools/test_long_video.py", "device_branch_or_abstraction",
  "CTVIS long-video evaluation script (copy of detectron2 inference_on_dataset with memory/timing logging)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; required for torch 2.1"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "False on NPU: no sync, so per-video compute times measure only the async launch (timing only)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
      "paired with the check above"),
    C("=torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "raises without CUDA before the first video"),
    C("peak_mb = torch.cuda.max_memory_allocated() / (1024 ** 2)", "torch_cuda_api", "replace", False,
      "peak_mb = torch.npu.max_memory_allocated() / (1024 ** 2)", "reports 0; log only"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on NPU; the docstring's fragmentation OOM on long OVIS videos is a CUDA observation, "
      "NPU behaviour unconfirmed"),
    C("cfg.merge_from_list(args.opts)", "device_type", "npu_only_addition", True,
      'cfg.MODEL.DEVICE = "npu" if cfg.MODEL.DEVICE.startswith("cuda") else cfg.MODEL.DEVICE',
      "detectron2 default device is 'cuda'"),
    C('torch.cuda.get_device_name() if cfg.MODEL.DEVICE.startswith("cuda") else "cpu"))', "torch_cuda_api",
      "replace", False,
      'torch.npu.get_device_name() if cfg.MODEL.DEVICE.startswith("npu") else "cpu"))',
      "log only: once DEVICE is npu the condition is False and the line prints 'cpu'"),
])

E("ctvis_memory", "ctvis/utils/memory.py", "device_branch_or_abstraction",
  "CTVIS utils/memory.py (project copy of detectron2 retry_if_cuda_oom that also moves nested outputs)", [
    C('if "CUDA out of memory. " in str(e):', "device_type", "replace", False,
      'if "CUDA out of memory. " in str(e) or "NPU out of memory" in str(e):',
      "an NPU OOM does not carry the CUDA text, so the CPU retry never triggers and long videos crash "
      "instead of falling back (exact torch_npu OOM message unconfirmed)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on an NPU host"),
])

E("dvis_fps", "tools/benchmark_fps.py", "explicit_replacement",
  "DVIS/CTVIS-style FPS benchmark (CUDA events, peak memory, nvidia-smi env dump)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; required for torch 2.1"),
    C('"cuda": torch.version.cuda,', "torch_cuda_api", "replace", False,
      '"torch_npu": torch_npu.__version__,', "None on an NPU host; report only"),
    C('"cudnn": torch.backends.cudnn.version(),', "torch_cuda_api", "replace", False,
      '"cann": os.environ.get("ASCEND_TOOLKIT_HOME", "unknown"),', "None on an NPU host; report only"),
    C('"device": torch.cuda.get_device_name(0),', "torch_cuda_api", "replace", True,
      '"device": torch.npu.get_device_name(0),', "initialises CUDA and raises"),
    C('"capability": "sm_%d%d" % torch.cuda.get_device_capability(0),', "device_capability_check", "removal",
      True, None,
      "raises without CUDA; the NPU equivalent returns None (or an env-configured value), so the sm_ format "
      "has no meaning there"),
    C('["nvidia-smi", "--query-gpu=driver_version,clocks.max.sm", "--format=csv,noheader"]',
      "device_capability_check", "replace", False, '["npu-smi", "-v"]',
      "nvidia-smi missing is caught by the except (driver='unknown')"),
    C("cfg.merge_from_list(args.opts)", "device_type", "npu_only_addition", True,
      'cfg.MODEL.DEVICE = "npu" if cfg.MODEL.DEVICE.startswith("cuda") else cfg.MODEL.DEVICE',
      "detectron2 default device is 'cuda'"),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_evt = torch.npu.Event(enable_timing=True)", "CUDA event constructor fails without CUDA"),
    C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_evt = torch.npu.Event(enable_timing=True)", "same"),
    C("=torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "raises without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA; needed before elapsed_time"),
    C("peak = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated() / 1024 ** 3", "reports 0; report only"),
])

# ---------------------------------------------------------------------------------------------
# Environment / packaging
# ---------------------------------------------------------------------------------------------
E("dvis_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "detectron2/Mask2Former-style Dockerfile as shipped by DVIS (CUDA devel base, FORCE_CUDA, make.sh)", [
    C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "device_type", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "CUDA base image; a CANN image provides the toolkit and its ENV (what set_env.sh exports)"),
    C("RUN pip install --user torch==1.10.1+cu113 torchvision==0.11.2+cu113", "device_type", "replace", True,
      "RUN pip install --user torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post17 --extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheels; torch_npu needs the matching CPU/aarch64 torch plus the torch-npu wheel"),
    C('ENV FORCE_CUDA="1"', "env_var", "removal", True, None,
      "detectron2's setup.py builds a CUDAExtension when FORCE_CUDA=1; without nvcc the install fails"),
    C('ARG TORCH_CUDA_ARCH_LIST="Pascal;Volta;Turing;Ampere"', "env_var", "removal", False, None,
      "unused without CUDA"),
    C('ENV TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST}"', "env_var", "removal", False, None,
      "unused without CUDA"),
    C("RUN cd /home/appuser/DVIS/mask2former/modeling/pixel_decoder/ops && sh make.sh", "custom_cuda_extension",
      "removal", True, None,
      "make.sh runs the CUDAExtension setup.py, which raises NotImplementedError without CUDA and breaks the build"),
])

E("ctvis_env", "environment.yml", "explicit_replacement",
  "CTVIS-style conda environment.yml (pytorch + nvidia channels, cudatoolkit)", [
    C("=- nvidia", "device_type", "removal", False, None, "CUDA channel; unused"),
    C("=- cudatoolkit=11.3", "device_type", "removal", False, None,
      "CUDA runtime package; dead weight next to CANN (availability on aarch64 unconfirmed)"),
    C("=- pytorch=1.12.1", "device_type", "replace", True, "- pytorch=2.1.0=*cpu*",
      "with cudatoolkit this resolves to a CUDA build, and there is no torch_npu for torch 1.12"),
    C("=- torchvision=0.13.1", "device_type", "replace", True, "- torchvision=0.16.0=*cpu*",
      "must match torch 2.1.0"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post17",
      "the NPU backend itself (pairs with torch 2.1.0 / CANN 8.3.RC1)"),
    C("=- nvidia-ml-py3", "device_type", "removal", False, None,
      "pynvml has no NPU backend; harmless to install, useless on Ascend"),
])

E("vnext_requirements", "requirements.txt", "explicit_replacement",
  "VNext (IDOL/SeqFormer) requirements.txt with CUDA 11.3 torch and detectron2 wheel indexes", [
    C("# PyTorch: CUDA 11.3 wheels", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
      "add the torch-npu pin to the PyTorch block"),
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "device_type", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 Ascend hosts take the CPU torch wheel (knowledge §1.1); aarch64 uses plain PyPI"),
    C("torch==1.11.0+cu113", "device_type", "replace", True, "torch==2.1.0",
      "CUDA build; no torch_npu for 1.11 on current CANN"),
    C("torchvision==0.12.0+cu113", "device_type", "replace", True, "torchvision==0.16.0",
      "must match torch 2.1.0"),
    C("-f https://dl.fbaipublicfiles.com/detectron2/wheels/cu113/torch1.11/index.html", "custom_cuda_extension",
      "removal", True, None, "prebuilt detectron2 wheels link the CUDA runtime"),
    C("=detectron2==0.6", "custom_cuda_extension", "replace", True,
      "detectron2 @ git+https://github.com/facebookresearch/detectron2.git@v0.6",
      "build from source so detectron2._C is a CPU extension"),
])
