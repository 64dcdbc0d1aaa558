"""Labels for probe387 (monocular 3-D object detection: SMOKE, MonoFlex, MonoDLE, MonoDETR, FCOS3D/mmdet3d).

One C(...) per upstream line a careful porter edits for an explicit torch_npu port.
`required` = complete-port counterfactual (see README.md, "Label policy").
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ----------------------------------------------------------------------------------------------
# SMOKE (lzccccc/SMOKE) - maskrcnn-benchmark / detectron2-lite layout, DLA-34 + DCNv2 extension
# ----------------------------------------------------------------------------------------------
E("smoke_train", "tools/plain_train_net.py", "explicit_replacement",
  "lzccccc/SMOKE tools/plain_train_net.py (entry point, launch + DDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script: the port uses torch.npu.* (launch.py) and the 'npu' device string from the config; "
      "SMOKE pins an old torch, so the target is torch_npu < 2.5.1 where autoload does not exist."),
])

E("smoke_launch", "smoke/engine/launch.py", "explicit_replacement",
  "lzccccc/SMOKE smoke/engine/launch.py (detectron2-style mp.spawn launcher)", [
    C('assert torch.cuda.is_available(), "cuda is not available', "torch_cuda_api", "replace", True,
      'assert torch.npu.is_available(), "npu is not available. Please check your installation."',
      "torch.cuda.is_available() is False on an Ascend host, so every spawned worker dies on this assert."),
    C('backend="NCCL"', "dist_backend", "replace", True,
      'backend="hccl", init_method=dist_url, world_size=world_size, rank=global_rank',
      "NCCL is not available with torch_npu; HCCL is the collective backend (upper-case spelling as upstream)."),
    C("assert num_gpus_per_machine <= torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "assert num_gpus_per_machine <= torch.npu.device_count()",
      "torch.cuda.device_count() returns 0 on an NPU host, so the assert fails for any multi-card run."),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)",
      "Binds each worker to its NPU; torch.cuda.set_device raises without a CUDA build."),
])

E("smoke_comm", "smoke/utils/comm.py", "explicit_replacement",
  "lzccccc/SMOKE smoke/utils/comm.py (maskrcnn-benchmark pickle all_gather)", [
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).to("npu")',
      "all_gather runs over the HCCL world group, which only takes NPU tensors; reached from "
      "inference._accumulate_predictions_from_multiple_gpus in multi-card evaluation."),
    C('local_size = torch.LongTensor([tensor.numel()]).to("cuda")', "tensor_to_device", "replace", True,
      'local_size = torch.LongTensor([tensor.numel()]).to("npu")',
      "Same all_gather: size exchange tensor must live on the NPU."),
    C('size_list = [torch.LongTensor([0]).to("cuda") for _ in range(world_size)]', "tensor_to_device", "replace", True,
      'size_list = [torch.LongTensor([0]).to("npu") for _ in range(world_size)]',
      "Receive buffers for the size all_gather."),
    C('tensor_list.append(torch.ByteTensor(size=(max_size,)).to("cuda"))', "tensor_to_device", "replace", True,
      'tensor_list.append(torch.ByteTensor(size=(max_size,)).to("npu"))',
      "Receive buffers for the payload all_gather."),
    C('padding = torch.ByteTensor(size=(max_size - local_size,)).to("cuda")', "tensor_to_device", "replace", True,
      'padding = torch.ByteTensor(size=(max_size - local_size,)).to("npu")',
      "Padding is concatenated with the NPU payload tensor; a CUDA tensor here raises."),
])

E("smoke_trainer", "smoke/engine/trainer.py", "explicit_replacement",
  "lzccccc/SMOKE smoke/engine/trainer.py (do_train loop)", [
    C("memory=torch.cuda.max_memory_allocated() / 1024.0 / 1024.0,", "torch_cuda_api", "replace", True,
      "memory=torch.npu.max_memory_allocated() / 1024.0 / 1024.0,",
      "On a CPU-only torch build torch.cuda.max_memory_allocated() does not raise: CUDA is never initialised, "
      "memory_stats() is empty and the log silently reports 'max mem: 0' every 10 iterations."),
])

E("smoke_inference", "smoke/engine/inference.py", "explicit_replacement",
  "lzccccc/SMOKE smoke/engine/inference.py (compute_on_dataset + timer)", [
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "inference() always passes a Timer, so this runs on every test batch; torch.cuda.synchronize() asserts "
      "'Torch not compiled with CUDA enabled' on an Ascend host."),
    C('device="cuda",', "device_type", "replace", False,
      'device="npu",',
      "Default argument only: the callers (test_net.run_test) pass device=cfg.MODEL.DEVICE, which is ported in "
      "smoke/config/defaults.py. Changed for consistency; not reached."),
])

E("smoke_defaults", "smoke/config/defaults.py", "explicit_replacement",
  "lzccccc/SMOKE smoke/config/defaults.py (yacs defaults)", [
    C('_C.MODEL.DEVICE = "cuda"', "device_type", "replace", True,
      '_C.MODEL.DEVICE = "npu"',
      "Single source of the device for model.to(device), data .to(device) and inference(); torch.device('cuda') "
      "fails at the first .to() on an NPU host. The shipped YAML configs do not override it."),
])

E("smoke_dcn", "smoke/layers/dcn_v2.py", "kernel_rewrite",
  "lzccccc/SMOKE smoke/layers/dcn_v2.py (CharlesShang DCNv2 binding over smoke._ext)", [
    C("from smoke import _ext as _backend", "custom_cuda_extension", "replace", False,
      "import torch_npu",
      "setup.py falls back to a CppExtension when CUDA is absent, so smoke._ext still imports (CPU build). "
      "The porter swaps the binding for torch_npu, but leaving the import does not break anything."),
    C("output = _backend.dcn_v2_forward(input, weight, bias,", "custom_cuda_extension", "replace", True,
      "output, offset_out = torch_npu.npu_deformable_conv2d(input, weight, torch.cat([offset, mask], dim=1), bias, kernel_size=list(ctx.kernel_size), stride=[1, 1, ctx.stride[0], ctx.stride[1]], padding=[ctx.padding[0], ctx.padding[0], ctx.padding[1], ctx.padding[1]], dilation=[1, 1, ctx.dilation[0], ctx.dilation[1]], deformable_groups=ctx.deformable_groups, modulated=True)",
      "The CPU-only _ext raises 'Not implemented on the CPU'/'Not compiled with GPU support' for NPU tensors; "
      "npu_deformable_conv2d (op list, 2.7.1) is the NPU kernel. Multi-line call labelled on its first line. "
      "The exact offset channel layout it expects (vs. DCNv2's o1|o2 chunks) is unconfirmed in the knowledge "
      "base and must be checked against the DLA-DCN pretrained weights."),
    C("ctx.save_for_backward(input, offset, mask, weight, bias)", "custom_cuda_extension", "replace", True,
      "ctx.save_for_backward(input, weight, torch.cat([offset, mask], dim=1), bias, offset_out)",
      "npu_deformable_conv2dbk needs the forward's offset_out, so the saved tensors change."),
    C("input, offset, mask, weight, bias = ctx.saved_tensors", "custom_cuda_extension", "replace", True,
      "input, weight, offset_all, bias, offset_out = ctx.saved_tensors",
      "Unpack has to follow the new save_for_backward."),
    C("_backend.dcn_v2_backward(input, weight,", "custom_cuda_extension", "replace", True,
      "torch_npu.npu_deformable_conv2dbk(input, grad_output, offset_out, weight, offset_all, kernel_size=list(ctx.kernel_size), stride=[1, 1, ctx.stride[0], ctx.stride[1]], padding=[ctx.padding[0], ctx.padding[0], ctx.padding[1], ctx.padding[1]], dilation=[1, 1, ctx.dilation[0], ctx.dilation[1]], deformable_groups=ctx.deformable_groups, modulated=True)",
      "Backward kernel (op list: npu_deformable_conv2dbk returns grad_input, grad_weight, grad_offset(+mask), grad_bias; "
      "the return tuple is re-split accordingly). Without it training the DLA-DCN backbone fails."),
])

E("smoke_setup", "setup.py", "explicit_replacement",
  "lzccccc/SMOKE setup.py (smoke._ext CppExtension/CUDAExtension switch)", [])

E("smoke_yaml", "configs/smoke_gn_vector.yaml", "explicit_replacement",
  "lzccccc/SMOKE configs/smoke_gn_vector.yaml", [])

# ----------------------------------------------------------------------------------------------
# MonoFlex (zhangyp15/MonoFlex) - derived from SMOKE, detectron2-style comm
# ----------------------------------------------------------------------------------------------
E("monoflex_train", "tools/plain_train_net.py", "explicit_replacement",
  "zhangyp15/MonoFlex tools/plain_train_net.py (entry point, SyncBN + DDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script; MonoFlex targets torch 1.x, so the port lands on a torch_npu without backend autoload."),
])

E("monoflex_defaults", "engine/defaults.py", "explicit_replacement",
  "zhangyp15/MonoFlex engine/defaults.py (argparse --num_gpus, default_setup)", [])

E("monoflex_trainer", "engine/trainer.py", "explicit_replacement",
  "zhangyp15/MonoFlex engine/trainer.py (do_train with periodic eval + TensorBoard)", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "Memory hygiene after evaluation only; torch.cuda.empty_cache() is a silent no-op when CUDA is not "
      "initialised, so nothing fails - the NPU caching allocator just keeps its blocks."),
])

E("monoflex_inference", "engine/inference.py", "explicit_replacement",
  "zhangyp15/MonoFlex engine/inference.py (per-image KITTI txt dump + timer)", [
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "inference() passes a Timer, so this line runs for every validation image and asserts without CUDA."),
    C('device="cuda",', "device_type", "replace", False,
      'device="npu",',
      "Default argument; do_eval/run_test pass device=cfg.MODEL.DEVICE. Not reached."),
])

E("monoflex_comm", "utils/comm.py", "explicit_replacement",
  "zhangyp15/MonoFlex utils/comm.py (detectron2 comm with gloo side-group)", [
    C('if dist.get_backend() == "nccl":', "dist_backend", "replace", True,
      'if dist.get_backend() == "hccl":',
      "Backend-string comparison (transfer_to_npu does not rewrite these). Unported, the 'gloo' side group is "
      "never created and all_gather of predictions falls onto the HCCL world group with an unported device; "
      "this is the one edit that restores the upstream design (pickled payloads gathered on CPU over gloo)."),
    C('assert backend in ["gloo", "nccl"]', "dist_backend", "replace", False,
      'assert backend in ["gloo", "hccl"]',
      "Only reached with an HCCL group when a caller passes group= explicitly; MonoFlex never does once the "
      "gloo side-group check above is ported. Ported for completeness."),
    C('device = torch.device("cpu" if backend == "gloo" else "cuda")', "device_type", "replace", False,
      'device = torch.device("cpu" if backend == "gloo" else "npu")',
      "Same reasoning as the assert: the non-gloo branch is dead in MonoFlex after the backend check is ported."),
])

E("monoflex_script", "scripts/train.sh", "explicit_replacement",
  "zhangyp15/MonoFlex README training / evaluation commands as a script", [
    C("CUDA_VISIBLE_DEVICES=0,1 python tools/plain_train_net.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0,1 python tools/plain_train_net.py \\",
      "Device selection for the run; CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so the job silently "
      "sees every NPU on the host (ASCEND_RT_VISIBLE_DEVICES is the process-level equivalent)."),
    C("CUDA_VISIBLE_DEVICES=0 python tools/plain_train_net.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0 python tools/plain_train_net.py \\",
      "Same for the evaluation command; the value 0 happens to match the default device, but the restriction "
      "itself is silently dropped."),
])

# ----------------------------------------------------------------------------------------------
# MonoDLE (xinzhuma/monodle) - yaml-driven helpers, DataParallel, python KITTI eval with numba.cuda
# ----------------------------------------------------------------------------------------------
E("monodle_train", "tools/train_val.py", "explicit_replacement",
  "xinzhuma/monodle tools/train_val.py (entry point)", [
    C("=import yaml", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "The entry script never imports torch itself; torch_npu has to be imported before the helpers call "
      "torch.npu.is_available() (torch 1.x era project, no autoload)."),
])

E("monodle_trainer", "lib/helpers/trainer_helper.py", "explicit_replacement",
  "xinzhuma/monodle lib/helpers/trainer_helper.py", [
    C('self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'self.device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "Silent fallback: on an NPU host torch.cuda.is_available() is False and training quietly runs on the CPU."),
    C("self.model = torch.nn.DataParallel(model, device_ids=self.gpu_ids).to(self.device)", "distributed_framework",
      "replace", True,
      "self.model = model.to(self.device)",
      "torch.nn.DataParallel is marked unsupported on Atlas A2/A3 in Ascend's API list; single-device here, "
      "multi-NPU needs a DDP rewrite (not a one-line change)."),
])

E("monodle_tester", "lib/helpers/tester_helper.py", "explicit_replacement",
  "xinzhuma/monodle lib/helpers/tester_helper.py", [
    C('self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'self.device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "Evaluation would silently run on the CPU (and map_location=self.device loads GPU-trained checkpoints to CPU)."),
])

E("monodle_save", "lib/helpers/save_helper.py", "explicit_replacement",
  "xinzhuma/monodle lib/helpers/save_helper.py", [])

E("monodle_kitti_eval", "lib/datasets/kitti/kitti_eval_python/eval.py", "kernel_rewrite",
  "xinzhuma/monodle lib/datasets/kitti/kitti_eval_python/eval.py (second.pytorch KITTI eval)", [
    C("from .rotate_iou import rotate_iou_gpu_eval", "custom_cuda_extension", "replace", True,
      "from .rotate_iou_cpu import rotate_iou_cpu_eval",
      "rotate_iou.py is numba.cuda (eagerly compiled @cuda.jit kernels, cuda.select_device, cuda.to_device); "
      "it needs the CUDA driver/NVVM and fails on an Ascend host. The porter supplies a numba.njit (CPU) "
      "rotated-IoU module; BEV/3D AP cannot be computed otherwise."),
    C("riou = rotate_iou_gpu_eval(boxes, qboxes, criterion)", "custom_cuda_extension", "replace", True,
      "riou = rotate_iou_cpu_eval(boxes, qboxes, criterion)",
      "BEV overlap call site."),
    C("rinc = rotate_iou_gpu_eval(boxes[:, [0, 2, 3, 5, 6]],", "custom_cuda_extension", "replace", True,
      "rinc = rotate_iou_cpu_eval(boxes[:, [0, 2, 3, 5, 6]],",
      "3-D overlap call site (the other numba.jit functions in this file are CPU jit and stay)."),
])

# ----------------------------------------------------------------------------------------------
# MonoDETR (ZrrSkywalker/MonoDETR) - monodle helpers + Deformable-DETR MSDeformAttn CUDA op
# ----------------------------------------------------------------------------------------------
E("monodetr_train", "tools/train_val.py", "explicit_replacement",
  "ZrrSkywalker/MonoDETR tools/train_val.py (entry point, gpu_ids -> DataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script; needed for torch.npu.* on the torch 1.x/2.1 line MonoDETR is ported to."),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "Silent CPU fallback otherwise."),
    C("model = torch.nn.DataParallel(model, device_ids=gpu_ids).to(device)", "distributed_framework", "replace", True,
      "model = model.to(device)  # DataParallel is unsupported on Ascend; use DDP for multi-NPU",
      "Reached whenever the YAML lists more than one id in trainer.gpu_ids; DataParallel is unsupported on A2/A3."),
])

E("monodetr_trainer", "lib/helpers/trainer_helper.py", "explicit_replacement",
  "ZrrSkywalker/MonoDETR lib/helpers/trainer_helper.py", [
    C('self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'self.device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "The trainer moves every batch to self.device; with the model on the NPU (train_val.py ported) "
      "CPU inputs would raise a device-mismatch error."),
])

E("monodetr_utils", "lib/helpers/utils_helper.py", "explicit_replacement",
  "ZrrSkywalker/MonoDETR lib/helpers/utils_helper.py (create_logger, set_random_seed)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed)",
      "torch.manual_seed(seed) two lines above already seeds the privateuse1 (NPU) generator in torch >= 2.1 "
      "(unconfirmed in the knowledge base); the CUDA call is a lazy no-op without CUDA."),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "Redundant with torch.manual_seed for the NPU generator (unconfirmed); harmless if left."),
])

E("monodetr_misc", "utils/misc.py", "explicit_replacement",
  "ZrrSkywalker/MonoDETR utils/misc.py (Deformable-DETR util/misc.py)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "tensor_to_device", "replace",
      False,
      "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "Dead in MonoDETR: MetricLogger/SmoothedValue are never used by its single-process trainer. Ported for "
      "reuse; fp64 all_reduce on HCCL not checked."),
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", False,
      'tensor = torch.ByteTensor(storage).to("npu")',
      "misc.all_gather is never called in MonoDETR (dead code inherited from DETR)."),
    C('local_size = torch.tensor([tensor.numel()], device="cuda")', "tensor_to_device", "replace", False,
      'local_size = torch.tensor([tensor.numel()], device="npu")',
      "Dead all_gather."),
    C('size_list = [torch.tensor([0], device="cuda") for _ in range(world_size)]', "tensor_to_device", "replace", False,
      'size_list = [torch.tensor([0], device="npu") for _ in range(world_size)]',
      "Dead all_gather."),
    C('tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="cuda"))', "tensor_to_device", "replace",
      False,
      'tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="npu"))',
      "Dead all_gather."),
    C('padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="cuda")', "tensor_to_device",
      "replace", False,
      'padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="npu")',
      "Dead all_gather."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "MetricLogger.log_every: unused by MonoDETR; on NPU it would merely drop the 'max mem' column."),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))",
      "Unused log_every."),
    C("os.environ['LOCAL_SIZE'] = str(torch.cuda.device_count())", "torch_cuda_api", "replace", False,
      "os.environ['LOCAL_SIZE'] = str(torch.npu.device_count())",
      "init_distributed_mode is never called by tools/train_val.py (MonoDETR trains single-process)."),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "num_gpus = torch.npu.device_count()",
      "SLURM branch of the unused init_distributed_mode."),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", False,
      "torch.npu.set_device(args.gpu)",
      "Unused init_distributed_mode."),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", False,
      "args.dist_backend = 'hccl'",
      "Unused init_distributed_mode; would be required if a DDP launcher were added."),
])

E("monodetr_ops_setup", "lib/models/monodetr/ops/setup.py", "kernel_rewrite",
  "ZrrSkywalker/MonoDETR lib/models/monodetr/ops/setup.py (Deformable-DETR MSDA build)", [
    C("raise NotImplementedError('Cuda is not availabel')", "custom_cuda_extension", "replace", False,
      "return []  # Ascend: no CUDA build; MSDeformAttn uses the PyTorch grid_sample path",
      "After the module/function edits nothing imports MultiScaleDeformableAttention, so make.sh can simply be "
      "skipped; the porter turns the hard error into an empty build so the documented install step does not abort."),
])

E("monodetr_msda_func", "lib/models/monodetr/ops/functions/ms_deform_attn_func.py", "kernel_rewrite",
  "ZrrSkywalker/MonoDETR ops/functions/ms_deform_attn_func.py (Deformable-DETR)", [
    C("import MultiScaleDeformableAttention as MSDA", "custom_cuda_extension", "removal", True, None,
      "The CUDA extension cannot be built for Ascend; the module-level import makes ops.functions (and with it "
      "the whole depth-aware transformer) fail to import."),
])

E("monodetr_msda_module", "lib/models/monodetr/ops/modules/ms_deform_attn.py", "kernel_rewrite",
  "ZrrSkywalker/MonoDETR ops/modules/ms_deform_attn.py (Deformable-DETR MSDeformAttn)", [
    C("from ..functions import MSDeformAttnFunction", "custom_cuda_extension", "replace", True,
      "from ..functions.ms_deform_attn_func import ms_deform_attn_core_pytorch",
      "ops/functions/__init__.py only exports the CUDA autograd Function."),
    C("output = MSDeformAttnFunction.apply(", "custom_cuda_extension", "replace", True,
      "output = ms_deform_attn_core_pytorch(value, input_spatial_shapes, sampling_locations, attention_weights)",
      "Replaces the CUDA im2col kernel with the reference PyTorch path (F.grid_sample has an NPU kernel, "
      "fp16/fp32). Slower; DrivingSDK's multi_scale_deformable_attn is the fused alternative (unconfirmed API)."),
])

# ----------------------------------------------------------------------------------------------
# FCOS3D in open-mmlab/mmdetection3d v1.0 (mmcv 1.x runner, MMDataParallel / MMDDP)
# ----------------------------------------------------------------------------------------------
E("mmdet3d_train", "tools/train.py", "explicit_replacement",
  "open-mmlab/mmdetection3d v1.0 tools/train.py (FCOS3D training entry)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu",
      "Recommended, but mmcv >= 1.7 (required anyway for mmcv.device.npu) imports torch_npu in "
      "mmcv.utils.device_type before any torch.npu call here (unconfirmed in the knowledge base)."),
])

E("mmdet3d_apis", "mmdet3d/apis/train.py", "explicit_replacement",
  "open-mmlab/mmdetection3d v1.0 mmdet3d/apis/train.py (train_detector/train_segmentor)", [
    C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", "replace", True,
      "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel",
      "mmcv's MMDataParallel/MMDDP scatter with CUDA streams; mmcv >= 1.7 ships NPU wrappers."),
    C("def init_random_seed(seed=None, device='cuda'):", "device_type", "replace", False,
      "def init_random_seed(seed=None, device='npu'):",
      "Only reached when seed is None and world_size > 1; tools/train.py always passes args.seed (default 0, "
      "dist_train.sh passes --seed 0), so the 'cuda' tensor is never created."),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "torch.manual_seed(seed) on the previous line already seeds the NPU generator (unconfirmed); lazy no-op otherwise."),
    C("model = MMDistributedDataParallel(model.cuda(), device_ids=[torch.cuda.current_device()],",
      "distributed_framework", "replace", True,
      "model = NPUDistributedDataParallel(model.npu(), device_ids=[torch.npu.current_device()],",
      "train_segmentor (reached for EncoderDecoder3D configs): wrapper, .cuda() and current_device on one line."),
    C("model = MMDataParallel(model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "distributed_framework",
      "replace", True,
      "model = NPUDataParallel(model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)",
      "train_segmentor non-distributed path."),
    C("=model = MMDistributedDataParallel(", "distributed_framework", "replace", True,
      "model = NPUDistributedDataParallel(",
      "train_detector (FCOS3D) distributed path."),
    C("=model.cuda(),", "tensor_to_device", "replace", True,
      "model.npu(),",
      "Module .cuda() raises without a CUDA build."),
    C("=device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],",
      "torch.cuda.current_device() raises without CUDA."),
    C("=model = MMDataParallel(", "distributed_framework", "replace", True,
      "model = NPUDataParallel(",
      "train_detector single-card path (mmdet3d's default non-distributed training)."),
    C("=model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "tensor_to_device", "replace", True,
      "model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)",
      "Single-card path: move the model to NPU gpu_ids[0]."),
])

E("mmdet3d_test", "tools/test.py", "explicit_replacement",
  "open-mmlab/mmdetection3d v1.0 tools/test.py", [
    C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", "replace", True,
      "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel",
      "Same wrappers as in training."),
    C("model = MMDataParallel(model, device_ids=cfg.gpu_ids)", "distributed_framework", "replace", True,
      "model = NPUDataParallel(model, device_ids=cfg.gpu_ids)",
      "MMDataParallel moves the model to cuda:gpu_ids[0] and scatters inputs with CUDA streams."),
    C("=model = MMDistributedDataParallel(", "distributed_framework", "replace", True,
      "model = NPUDistributedDataParallel(",
      "Distributed test path."),
    C("=model.cuda(),", "tensor_to_device", "replace", True,
      "model.npu(),",
      "Module .cuda()."),
    C("=device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],",
      "torch.cuda.current_device()."),
])

E("mmdet3d_dist_train", "tools/dist_train.sh", "explicit_replacement",
  "open-mmlab/mmdetection3d tools/dist_train.sh", [
    C('PYTHONPATH="$(dirname $0)/..":$PYTHONPATH', "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; needed only when the shell/container has not already sourced it (Ascend images do)."),
])

E("mmdet3d_runtime", "configs/_base_/default_runtime.py", "explicit_replacement",
  "open-mmlab/mmdetection3d configs/_base_/default_runtime.py", [
    C("dist_params = dict(backend='nccl')", "dist_backend", "replace", False,
      "dist_params = dict(backend='hccl')",
      "Passed to mmcv.runner.init_dist; mmcv >= 1.7's pytorch launcher takes an NPU branch that hard-codes "
      "backend='hccl' and ignores this value (unconfirmed in the knowledge base). Changed for clarity."),
])

E("fcos3d_config", "configs/fcos3d/fcos3d_r101_caffe_fpn_gn-head_dcn_2x8_1x_nus-mono3d.py", "explicit_replacement",
  "open-mmlab/mmdetection3d configs/fcos3d/fcos3d_r101_caffe_fpn_gn-head_dcn_2x8_1x_nus-mono3d.py", [])

E("fcos3d_head", "mmdet3d/models/dense_heads/fcos_mono3d_head.py", "explicit_replacement",
  "open-mmlab/mmdetection3d mmdet3d/models/dense_heads/fcos_mono3d_head.py (abridged)", [])

E("mmdet3d_docker", "docker/Dockerfile", "explicit_replacement",
  "open-mmlab/mmdetection3d docker/Dockerfile (v1.0)", [
    C("FROM pytorch/pytorch:${PYTORCH}-cuda${CUDA}-cudnn${CUDNN}-devel", "import_torch_npu", "replace", True,
      "FROM ${ASCEND_BASE_IMAGE}  # CANN toolkit + torch + torch_npu (e.g. an Ascend PyTorch image)",
      "The CUDA image has neither CANN nor torch_npu; the base image is what brings torch_npu into the environment "
      "(kind chosen as the closest fit)."),
    C('ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0+PTX"', "env_var", "removal", False, None,
      "nvcc arch list; inert without CUDA."),
    C('ENV TORCH_NVCC_FLAGS="-Xfatbin -compress-all"', "env_var", "removal", False, None,
      "nvcc flags; inert without CUDA."),
    C("RUN pip install mmcv-full==1.6.0 -f https://download.openmmlab.com/mmcv/dist/cu111/torch1.9.0/index.html",
      "custom_cuda_extension", "replace", True,
      "RUN git clone -b v1.7.2 https://github.com/open-mmlab/mmcv.git /mmcv && cd /mmcv && MMCV_WITH_OPS=1 FORCE_NPU=1 pip install -e .",
      "The cu111 wheel index has no CANN build; mmcv 1.6 also lacks mmcv.device.npu (NPUDataParallel) used by "
      "the ported apis/train.py. mmcv must be built from source with its NPU ops."),
    C('ENV FORCE_CUDA="1"', "env_var", "removal", False, None,
      "Forces CUDAExtension builds in setup.py; whether mmdet3d v1.0 still has CUDA ext_modules (most ops moved "
      "to mmcv) is unconfirmed, so not marked required."),
])
