"""Labels for probe216: HOI detection (QPIC / CDN / GEN-VLKT) and spatio-temporal action detection
(PySlowFast AVA, VideoMAE, ACAR-Net) moved from CUDA GPUs to Ascend NPUs (torch_npu).

Policy (details in ../README.md):
* explicit port: no transfer_to_npu; every CUDA-bound line is edited by hand.
* required=True when the unchanged line fails on an NPU host, computes something wrong, or silently
  does the wrong thing (device fallback to CPU, disabled AMP/loss scaling, wrong devices used);
  required=False for performance-only rewrites, silent no-ops, logging-only lines and anything not
  confirmable in /work/shared/knowledge (notes say "unconfirmed").
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# --------------------------------------------------------------------------------------------
# HOI detection: GEN-VLKT / CDN / QPIC (DETR-derived)
# --------------------------------------------------------------------------------------------

E("genvlkt_main", "main.py", "explicit_replacement",
  "GEN-VLKT / CDN / QPIC DETR-style main.py (argparse --device cuda, DDP, AdamW, optional AMP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script of the torch.distributed.launch job; registers the 'npu' device and torch.npu for every rank"),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu',",
      "default device string feeds torch.device(args.device); 'cuda' fails on an Ascend host"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "torch.cuda.amp.GradScaler disables itself without CUDA; with autocast ported to NPU, fp16 grads would go unscaled"),
])

E("genvlkt_engine", "engine.py", "explicit_replacement",
  "GEN-VLKT / CDN engine.py (train_one_epoch with optional autocast, evaluate_hoi with all_gather)", [
    C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=use_amp):",
      "CUDA autocast silently disables itself on an NPU host: --amp runs would train in fp32 (memory/behaviour differ from the configured run)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "no-op without CUDA (returns when not initialised); NPU cache release only matters for memory headroom"),
])

E("genvlkt_util_misc", "util/misc.py", "explicit_replacement",
  "DETR util/misc.py as carried by QPIC / CDN / GEN-VLKT (SmoothedValue, pickled all_gather, init_distributed_mode)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "tensor_to_device", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float32, device='npu')",
      "'cuda' device fails; also HCCL all_reduce dtype list (bf16/fp16/fp32/int32/int64/bool) has no fp64"),
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).to(device="npu", dtype=torch.int8)',
      "device string; HCCL all_gather dtype list (bf16/fp16/fp32/int8/int32/bool) has no uint8, so the pickle bytes travel as int8"),
    C('local_size = torch.tensor([tensor.numel()], device="cuda")', "tensor_to_device", "replace", True,
      'local_size = torch.tensor([tensor.numel()], dtype=torch.int32, device="npu")',
      "device string; int64 size tensor is not in the HCCL all_gather dtype list"),
    C('size_list = [torch.tensor([0], device="cuda") for _ in range(world_size)]', "tensor_to_device", "replace", True,
      'size_list = [torch.tensor([0], dtype=torch.int32, device="npu") for _ in range(world_size)]',
      "device string; receive buffers must match the int32 local_size"),
    C('tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="cuda"))', "tensor_to_device", "replace", True,
      'tensor_list.append(torch.empty((max_size,), dtype=torch.int8, device="npu"))',
      "device string; uint8 all_gather not in HCCL list"),
    C('padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="cuda")', "tensor_to_device", "replace", True,
      'padding = torch.empty(size=(max_size - local_size,), dtype=torch.int8, device="npu")',
      "device string; padding must match the int8 payload"),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "use_cuda = torch.npu.is_available()",
      "logging only: without the change the 'max mem' column silently disappears"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))",
      "logging only (CUDA version would report 0 once the guard above is ported)"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()",
      "SLURM path: torch.cuda.device_count() is 0 on an NPU host -> ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)",
      "raises without CUDA; each rank must bind its NPU before HCCL init"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True,
      "args.dist_backend = 'hccl'",
      "NCCL is not available on Ascend; HCCL is the collective backend"),
])

E("genvlkt_model", "models/gen_vlkt.py", "device_branch_or_abstraction",
  "GEN-VLKT models/gen_vlkt.py (CLIP-initialised HOI classifier, CLIP image teacher for mimic loss)", [
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "add_branch", False,
      'device = "cuda" if torch.cuda.is_available() else ("npu" if torch.npu.is_available() else "cpu")',
      "falls back to CPU on an NPU host: CLIP text encoding runs on the host and clip.load() casts the teacher to fp32; "
      "the teacher is still moved to the NPU with model.to(device), so this is speed/precision drift, not a failure"),
])

E("qpic_hoi_matcher", "models/matcher.py", "explicit_replacement",
  "QPIC / CDN HungarianMatcherHOI (cost matrix on device, scipy assignment on host)", [])

E("hoi_data_prefetcher", "datasets/data_prefetcher.py", "explicit_replacement",
  "Deformable-DETR data_prefetcher used by deformable HOI variants (side CUDA stream + record_stream)", [
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True,
      "self.stream = torch.npu.Stream()",
      "CUDA stream constructor fails without CUDA; NPU streams exist in torch_npu"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
      "with torch.npu.stream(self.stream):",
      "stream context must be the NPU one"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(self.stream)",
      "fails without CUDA; main stream must wait for the copy stream"),
    C("samples.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "samples.record_stream(torch.npu.current_stream())",
      "record_stream needs the NPU current stream"),
    C("v.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "v.record_stream(torch.npu.current_stream())",
      "same for every target tensor"),
])

E("cdn_clip_text_embed", "tools/generate_clip_text_embeddings.py", "explicit_replacement",
  "CDN / GEN-VLKT style offline CLIP text-embedding export tool", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "stand-alone entry script; needs torch_npu for the 'npu' device"),
    C('device = "cuda"', "device_type", "replace", True, 'device = "npu"',
      "hard-coded CUDA device for clip.load and the token tensors"),
    C("print('Running {} on {}'.format(args.clip_model, torch.cuda.get_device_name(0)))", "torch_cuda_api", "replace", True,
      "print('Running {} on {}'.format(args.clip_model, torch.npu.get_device_name(0)))",
      "torch.cuda.get_device_name initialises CUDA and raises on an NPU host"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA; needed for the timing print"),
])

E("qahoi_msda_setup", "models/ops/setup.py", "kernel_rewrite",
  "Deformable-DETR MultiScaleDeformableAttention setup.py carried by deformable HOI detectors (QAHOI-style)", [
    C("from torch.utils.cpp_extension import CUDAExtension", "custom_cuda_extension", "npu_only_addition", False,
      "from torch_npu.utils.cpp_extension import NpuExtension",
      "only if the sampling kernel is rewritten in Ascend C; with the pure-PyTorch path in ms_deform_attn.py nothing needs building"),
    C("if torch.cuda.is_available() and CUDA_HOME is not None:", "custom_cuda_extension", "add_branch", False,
      "if torch.cuda.is_available() and CUDA_HOME is not None:  # ... elif torch_npu present: extension = NpuExtension; sources += ascendc_sources",
      "nvcc path cannot build on an Ascend host (raises NotImplementedError); an NpuExtension branch is needed only for an Ascend C kernel"),
])

E("qahoi_msda_module", "models/ops/modules/ms_deform_attn.py", "kernel_rewrite",
  "Deformable-DETR MSDeformAttn module (calls the nvcc-built MultiScaleDeformableAttention op)", [
    C("from ..functions import MSDeformAttnFunction", "custom_cuda_extension", "replace", True,
      "from ..functions.ms_deform_attn_func import ms_deform_attn_core_pytorch",
      "the functions package imports the nvcc-built MultiScaleDeformableAttention extension, which cannot be built on Ascend "
      "(its own top-level import has to be guarded as well)"),
    C("output = MSDeformAttnFunction.apply(value, input_spatial_shapes, input_level_start_index, sampling_locations, attention_weights, self.im2col_step)",
      "custom_cuda_extension", "replace", True,
      "output = ms_deform_attn_core_pytorch(value, input_spatial_shapes, sampling_locations, attention_weights)",
      "call site of the CUDA kernel; the grid_sample-based reference path runs on NPU (grid_sampler_2d has an NPU kernel)"),
])

E("genvlkt_train_sh", "configs/hico_gen_vlkt_s_r50_dec_3layers.sh", "explicit_replacement",
  "GEN-VLKT configs/*.sh launcher (torch.distributed.launch --use_env, pinned GPUs, NCCL env)", [
    C("=set -x", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (ASCEND_OPP_PATH, libhccl on LD_LIBRARY_PATH) must be sourced or `import torch_npu` fails"),
    C("export CUDA_VISIBLE_DEVICES=4,5,6,7", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=4,5,6,7",
      "ignored on Ascend: LOCAL_RANK 0-3 would land on NPUs 0-3, which the comment says belong to another job"),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
      "NCCL-only workaround; no effect under HCCL"),
])

E("genvlkt_requirements", "requirements.txt", "explicit_replacement",
  "GEN-VLKT / CDN requirements.txt with CUDA 11.3 torch wheels and CLIP from git", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "device_type", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "the cu113 index only serves CUDA builds; torch_npu pairs with the CPU torch wheel on x86 (plain PyPI on aarch64)"),
    C("torch==1.10.1+cu113", "device_type", "replace", True, "torch==2.1.0",
      "+cu113 build has no Ascend counterpart; torch must match the torch_npu release exactly"),
    C("torchvision==0.11.2+cu113", "device_type", "replace", True, "torchvision==0.16.0",
      "CUDA build; torchvision has to follow the torch version paired with torch_npu"),
    C("=cython", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "the Ascend adapter itself (pairs with torch 2.1.0 / CANN 8.0.0)"),
])

E("cdn_environment", "environment.yml", "explicit_replacement",
  "QPIC / CDN conda environment.yml (pytorch + cudatoolkit from the pytorch/nvidia channels)", [
    C("=- nvidia", "device_type", "removal", False, None,
      "NVIDIA channel only provides CUDA runtime packages"),
    C("=- pytorch=1.7.1", "device_type", "replace", True, "- pytorch=2.1.0",
      "torch_npu has no release for torch 1.7.1; torch must equal the torch_npu version"),
    C("=- torchvision=0.8.2", "device_type", "replace", True, "- torchvision=0.16.0",
      "must follow the torch version"),
    C("=- cudatoolkit=11.0", "device_type", "replace", False, "- cpuonly",
      "CUDA runtime is useless on Ascend; asking for the CPU variant avoids the CUDA build (unconfirmed whether the "
      "old cudatoolkit pin breaks resolution with torch 2.1)"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post10",
      "torch_npu is only distributed on PyPI"),
])

E("hoi_benchmark_fps", "tools/benchmark_fps.py", "explicit_replacement",
  "HOI detector FPS benchmark script (CUDA events, TF32 switch, NVTX ranges, DataParallel option)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "stand-alone entry script"),
    C('device = torch.device("cuda", args.gpu_id)', "device_type", "replace", True,
      'device = torch.device("npu", args.gpu_id)', "CUDA device object"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
      "raises without CUDA"),
    C("if args.tf32 and torch.cuda.get_device_capability(device)[0] >= 8:", "device_capability_check", "replace", True,
      "if args.tf32:  # Ascend has no SM capability; torch.npu.get_device_capability() returns None",
      "CUDA call raises on an NPU host, and a plain rename would index None (capability is only an env-configured "
      "compatibility value on NPU); allow_tf32 flags themselves are accepted by torch_npu"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
      "model = model  # nn.DataParallel is unsupported on Ascend; benchmark one NPU per process",
      "torch.nn.DataParallel is marked unsupported on Atlas A2/A3"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "raises without CUDA"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(device)",
      "calls into the CUDA allocator binding, which a non-CUDA build lacks"),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "starter = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created on an NPU host"),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "ender = torch.npu.Event(enable_timing=True)", "same"),
    C("torch.cuda.nvtx.range_push('iter_{}'.format(i))", "torch_cuda_api", "replace", True,
      "rng = torch_npu.npu.mstx.range_start('iter_{}'.format(i))",
      "torch.cuda.nvtx is not redirected by torch_npu and raises without CUDA (only with --nvtx); mstx is the NPU "
      "counterpart (exact range API unconfirmed)"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True,
      "torch_npu.npu.mstx.range_end(rng)", "pairs with the range start above"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "per-iteration sync before reading the events"),
    C("'device': torch.cuda.get_device_name(device),", "torch_cuda_api", "replace", True,
      "'device': torch.npu.get_device_name(device),", "raises without CUDA"),
    C("'peak_mem_mb': torch.cuda.max_memory_allocated(device) / 2 ** 20,", "torch_cuda_api", "replace", False,
      "'peak_mem_mb': torch.npu.max_memory_allocated(device) / 2 ** 20,",
      "reporting only; the CUDA allocator stats just read 0 when CUDA was never initialised"),
])


# --------------------------------------------------------------------------------------------
# PySlowFast (AVA spatio-temporal action detection)
# --------------------------------------------------------------------------------------------

E("slowfast_utils_misc", "slowfast/utils/misc.py", "explicit_replacement",
  "PySlowFast slowfast/utils/misc.py (gpu_mem_usage, model-analysis inputs, launch_job via torch.multiprocessing.spawn)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "gpu_mem_usage() only feeds log lines; on NPU it silently reports 0 GB"),
    C("mem_usage_bytes = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "mem_usage_bytes = torch.npu.max_memory_allocated()", "logging only"),
    C("model_inputs[i] = model_inputs[i].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "model_inputs[i] = model_inputs[i].npu(non_blocking=True)",
      "flop/activation counting runs at start-up (LOG_MODEL_INFO defaults to True) and the model is on the NPU"),
    C("bbox = bbox.cuda()", "tensor_to_device", "replace", True, "bbox = bbox.npu()",
      "dummy proposal for the AVA detection head must be on the model's device"),
    C('os.system("nvidia-smi")', "device_type", "replace", False, 'os.system("npu-smi info")',
      "nvidia-smi does not exist on an Ascend host; the shell just prints 'command not found'"),
])

E("slowfast_mp", "slowfast/utils/multiprocessing.py", "explicit_replacement",
  "PySlowFast slowfast/utils/multiprocessing.py run() executed in every spawned rank", [
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises without CUDA; every spawned rank must select its own NPU"),
])

E("slowfast_distributed", "slowfast/utils/distributed.py", "explicit_replacement",
  "PySlowFast slowfast/utils/distributed.py (all_gather, gloo side-group for pickled gathers, local process groups)", [
    C('dist_backend="nccl",', "dist_backend", "replace", True, 'dist_backend="hccl",',
      "default backend of the public init_process_group helper; NCCL does not exist on Ascend"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises without CUDA whenever the helper is used"),
    C('if dist.get_backend() == "nccl":', "dist_backend", "replace", True,
      'if dist.get_backend() in ("nccl", "hccl"):',
      "backend-string comparison is not rewritten by anything: on HCCL the gloo side group is never created, so "
      "all_gather_unaligned (AVA test gathering) serialises into a 'cuda' tensor on the HCCL WORLD group and fails"),
    C('assert backend in ["gloo", "nccl"]', "dist_backend", "replace", False, 'assert backend in ["gloo", "nccl", "hccl"]',
      "only reached with an explicitly passed device group once the comparison above is fixed"),
    C('device = torch.device("cpu" if backend == "gloo" else "cuda")', "device_type", "replace", False,
      'device = torch.device("cpu" if backend == "gloo" else "npu")',
      "same path as above; default callers get the gloo group and stay on CPU"),
])

E("slowfast_defaults", "slowfast/config/defaults.py", "explicit_replacement",
  "PySlowFast slowfast/config/defaults.py (yacs/fvcore CfgNode defaults)", [
    C('_C.DIST_BACKEND = "nccl"', "dist_backend", "replace", True, '_C.DIST_BACKEND = "hccl"',
      "passed by launch_job -> mpu.run -> init_process_group; NCCL is unavailable on Ascend"),
])

E("slowfast_head_helper", "slowfast/models/head_helper.py", "explicit_replacement",
  "PySlowFast slowfast/models/head_helper.py (ResNetRoIHead with detectron2 ROIAlign for AVA)", [
    C("from detectron2.layers import ROIAlign", "npu_fused_op", "replace", False,
      "from torch_npu.contrib.module import ROIAlign",
      "detectron2's ROIAlign wraps torchvision roi_align, which has no NPU kernel without torchvision_npu; it can only "
      "run through torch_npu's CPU fallback (assumed, unconfirmed for torchvision:: ops). torch_npu.contrib ships an "
      "NPU ROIAlign (argument parity with detectron2's aligned=True unconfirmed)"),
])

E("slowfast_build", "slowfast/models/build.py", "explicit_replacement",
  "PySlowFast slowfast/models/build.py build_model (cur_device = torch.cuda.current_device(), model.cuda, DDP)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on an NPU host, so the else-branch asserts NUM_GPUS == 0 and every NPU config aborts"),
    C("cfg.NUM_GPUS <= torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "cfg.NUM_GPUS <= torch.npu.device_count()",
      "CUDA device count is 0 on an NPU host"),
    C("model = apex.parallel.convert_syncbn_model(", "unsupported_op_workaround", "replace", False,
      "model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(",
      "apex SyncBN is CUDA-only; dead once the YAML selects sync_batchnorm instead (see configs/AVA yaml label)"),
    C("cur_device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "cur_device = torch.npu.current_device()", "raises without CUDA"),
    C("model = model.cuda(device=cur_device)", "tensor_to_device", "replace", True,
      "model = model.npu(device=cur_device)", "Module.cuda raises without CUDA"),
])

E("slowfast_batchnorm_helper", "slowfast/models/batchnorm_helper.py", "explicit_replacement",
  "PySlowFast slowfast/models/batchnorm_helper.py (SubBatchNorm3d, NaiveSyncBatchNorm3d over process groups)", [])

E("slowfast_train_net", "tools/train_net.py", "explicit_replacement",
  "PySlowFast tools/train_net.py (per-batch .cuda(non_blocking=True), torch.cuda.amp GradScaler/autocast, precise BN)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "tools/run_net.py imports train_net before launch_job spawns the ranks, so this is where the SlowFast "
      "process tree first loads torch (children re-import the main module)"),
    C("inputs[i][j] = inputs[i][j].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "inputs[i][j] = inputs[i][j].npu(non_blocking=True)", "batch transfer; Tensor.cuda raises without CUDA"),
    C("inputs[i] = inputs[i].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "inputs[i] = inputs[i].npu(non_blocking=True)", "SlowFast pathway tensors"),
    C("=inputs = inputs.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "inputs = inputs.npu(non_blocking=True)", "single-pathway models"),
    C("labels = labels.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "labels = labels.npu(non_blocking=True)", "labels"),
    C("index = index.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "index = index.npu(non_blocking=True)", "sample index"),
    C("time = time.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "time = time.npu(non_blocking=True)", "clip time stamps"),
    C("val[i] = val[i].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "val[i] = val[i].npu(non_blocking=True)", "list-valued meta entries"),
    C("meta[key] = val.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "meta[key] = val.npu(non_blocking=True)", "AVA boxes / ori_boxes / metadata"),
    C("with torch.cuda.amp.autocast(enabled=cfg.TRAIN.MIXED_PRECISION):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=cfg.TRAIN.MIXED_PRECISION):",
      "CUDA autocast silently disables itself on an NPU host; the AVA config turns MIXED_PRECISION on"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA; called every iteration"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA; only memory headroom"),
    C("inputs = [x.cuda(non_blocking=True) for x in inputs] if isinstance(inputs, (list,)) else inputs.cuda(non_blocking=True)",
      "tensor_to_device", "replace", True,
      "inputs = [x.npu(non_blocking=True) for x in inputs] if isinstance(inputs, (list,)) else inputs.npu(non_blocking=True)",
      "validation batch transfer"),
    C("=labels = labels.cuda()", "tensor_to_device", "replace", True, "labels = labels.npu()", "validation labels"),
    C("meta = {k: ([t.cuda(non_blocking=True) for t in v]", "tensor_to_device", "replace", True,
      "meta = {k: ([t.npu(non_blocking=True) for t in v] if isinstance(v, (list,)) else v.npu(non_blocking=True)) for k, v in meta.items()}",
      "validation meta (AVA boxes)"),
    C("=inputs = [x.cuda(non_blocking=True) for x in inputs]", "tensor_to_device", "replace", True,
      "inputs = [x.npu(non_blocking=True) for x in inputs]", "precise-BN loader (BN.USE_PRECISE_STATS)"),
    C("=inputs = inputs.cuda()", "tensor_to_device", "replace", True, "inputs = inputs.npu()",
      "precise-BN loader, single pathway"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=cfg.TRAIN.MIXED_PRECISION)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=cfg.TRAIN.MIXED_PRECISION)",
      "CUDA GradScaler disables itself without CUDA; fp16 gradients would go unscaled once autocast runs on NPU"),
])

E("slowfast_test_net", "tools/test_net.py", "explicit_replacement",
  "PySlowFast tools/test_net.py perform_test (AVA detection path gathers with all_gather_unaligned)", [
    C("inputs[i] = inputs[i].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "inputs[i] = inputs[i].npu(non_blocking=True)", "test batch transfer"),
    C("=inputs = inputs.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "inputs = inputs.npu(non_blocking=True)", "single pathway"),
    C("labels = labels.cuda()", "tensor_to_device", "replace", True, "labels = labels.npu()", "labels"),
    C("video_idx = video_idx.cuda()", "tensor_to_device", "replace", True, "video_idx = video_idx.npu()", "video index"),
    C("val[i] = val[i].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "val[i] = val[i].npu(non_blocking=True)", "list-valued meta"),
    C("meta[key] = val.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "meta[key] = val.npu(non_blocking=True)", "AVA boxes"),
])

E("slowfast_demo_predictor", "slowfast/visualization/predictor.py", "explicit_replacement",
  "PySlowFast demo Predictor / Detectron2Predictor (gpu_id from torch.cuda.current_device, detectron2 MODEL.DEVICE)", [
    C("torch.cuda.current_device() if gpu_id is None else gpu_id", "torch_cuda_api", "replace", True,
      "torch.npu.current_device() if gpu_id is None else gpu_id", "raises without CUDA"),
    C("inputs[i] = inputs[i].cuda(", "tensor_to_device", "replace", True, "inputs[i] = inputs[i].npu(",
      "Tensor.cuda raises without CUDA"),
    C("=device=torch.device(self.gpu_id), non_blocking=True", "device_type", "replace", True,
      'device=torch.device("npu", self.gpu_id), non_blocking=True',
      "torch.device(<int>) means a CUDA ordinal"),
    C("inputs = inputs.cuda(device=torch.device(self.gpu_id), non_blocking=True)", "tensor_to_device", "replace", True,
      'inputs = inputs.npu(device=torch.device("npu", self.gpu_id), non_blocking=True)',
      "same for single-pathway inputs (both the call and the int ordinal)"),
    C("=gpu_id = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "gpu_id = torch.npu.current_device()", "raises without CUDA"),
    C('"cuda:{}".format(gpu_id) if cfg.NUM_GPUS > 0 else "cpu"', "device_type", "replace", True,
      '"npu:{}".format(gpu_id) if cfg.NUM_GPUS > 0 else "cpu"',
      "detectron2 person detector device string (whether all detectron2 ops run on NPU is unconfirmed; 'cpu' is the fallback)"),
])

E("slowfast_ava_yaml", "configs/AVA/SLOWFAST_32x2_R101_50_50.yaml", "explicit_replacement",
  "PySlowFast AVA SlowFast-R101 config (8 GPUs, AMP, apex SyncBN)", [
    C("NORM_TYPE: sync_batchnorm_apex", "unsupported_op_workaround", "replace", True,
      "NORM_TYPE: sync_batchnorm",
      "selects apex SyncBatchNorm (CUDA kernels, apex not installable for NPU); SlowFast's NaiveSyncBatchNorm3d uses "
      "plain collectives and runs on HCCL"),
])

E("slowfast_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "PySlowFast-style Dockerfile (nvidia/cuda base, FORCE_CUDA detectron2 build, cu113 wheels)", [
    C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "device_type", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "CUDA base image has no CANN toolkit; an Ascend CANN image provides the runtime/HCCL libraries"),
    C('ENV FORCE_CUDA="1"', "env_var", "removal", True, None,
      "forces detectron2 to build its CUDA kernels; with no nvcc in a CANN image the build fails"),
    C('ARG TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6+PTX"', "env_var", "removal", False, None,
      "CUDA arch list, ignored without nvcc"),
    C('ENV TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST}"', "env_var", "removal", False, None, "same"),
    C("RUN pip3 install --no-cache-dir torch==1.10.1+cu113 torchvision==0.11.2+cu113 \\", "device_type", "replace", True,
      "RUN pip3 install --no-cache-dir torch==2.1.0 torchvision==0.16.0 \\",
      "CUDA wheels; torch must equal the torch_npu release"),
    C("-f https://download.pytorch.org/whl/cu113/torch_stable.html", "device_type", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "cu113 wheel index; CPU torch wheels are the base for torch_npu on x86"),
    C("simplejson psutil tensorboard moviepy pandas scikit-learn av opencv-python pytorchvideo", "import_torch_npu",
      "npu_only_addition", True, "RUN pip3 install --no-cache-dir torch-npu==2.1.0.post17",
      "the Ascend adapter (v2.1.0-7.2.0 pairs with CANN 8.3.RC1)"),
    C("ENV NCCL_DEBUG=WARN", "env_var", "replace", False, "ENV ASCEND_GLOBAL_LOG_LEVEL=3",
      "NCCL logging knob has no effect under HCCL; CANN log level is the nearest equivalent"),
])


# --------------------------------------------------------------------------------------------
# VideoMAE (AVA / Kinetics fine-tuning)
# --------------------------------------------------------------------------------------------

E("videomae_engine_ft", "engine_for_finetuning.py", "explicit_replacement",
  "VideoMAE engine_for_finetuning.py (native-AMP branch with torch.cuda.amp.autocast, per-step synchronize)", [
    C("=with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
      "non-DeepSpeed path: CUDA autocast silently disables itself on an NPU host and the ViT trains in fp32"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA, every iteration"),
    C("with torch.cuda.amp.autocast(enabled=True):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=True):",
      "validation / final test forward: silently fp32 instead of the fp16 setting used in training"),
])

E("videomae_utils", "utils.py", "explicit_replacement",
  "VideoMAE utils.py (BEiT/DeiT-derived SmoothedValue, MetricLogger, init_distributed_mode, NativeScaler)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "tensor_to_device", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float32, device='npu')",
      "'cuda' device fails; fp64 is not in the HCCL all_reduce dtype list"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "logging only: the 'max mem' column silently disappears"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))", "logging only"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "raises without CUDA; binds each rank to its NPU before HCCL init"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
      "NCCL unavailable on Ascend"),
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "self._scaler = torch.npu.amp.GradScaler()",
      "CUDA GradScaler disables itself without CUDA; fp16 grads would go unscaled once autocast is ported"),
])

E("videomae_optim_factory", "optim_factory.py", "explicit_replacement",
  "VideoMAE optim_factory.py (timm-derived, optional apex Fused* optimizers)", [
    C("from apex.optimizers import FusedNovoGrad, FusedAdam, FusedLAMB, FusedSGD", "fused_optimizer", "replace", False,
      "from torch_npu.optim import NpuFusedSGD, NpuFusedAdam, NpuFusedAdamW, NpuFusedLamb",
      "guarded import, so it does not fail by itself; the NPU fused optimizers replace apex's CUDA ones"),
    C("assert has_apex and torch.cuda.is_available(), 'APEX and CUDA required for fused optimizers'", "torch_cuda_api",
      "replace", True,
      "assert has_apex and torch.npu.is_available(), 'torch_npu required for fused optimizers'",
      "any --opt fused* fails here on an NPU host"),
    C("optimizer = FusedSGD(parameters, momentum=args.momentum, nesterov=True, **opt_args)", "fused_optimizer", "replace", True,
      "optimizer = NpuFusedSGD(parameters, momentum=args.momentum, nesterov=True, **opt_args)",
      "apex FusedSGD is a CUDA kernel (apex not available for NPU)"),
    C("optimizer = FusedSGD(parameters, momentum=args.momentum, nesterov=False, **opt_args)", "fused_optimizer", "replace", True,
      "optimizer = NpuFusedSGD(parameters, momentum=args.momentum, nesterov=False, **opt_args)", "same"),
    C("optimizer = FusedAdam(parameters, adam_w_mode=False, **opt_args)", "fused_optimizer", "replace", True,
      "optimizer = NpuFusedAdam(parameters, **opt_args)", "apex FusedAdam is CUDA-only"),
    C("optimizer = FusedAdam(parameters, adam_w_mode=True, **opt_args)", "fused_optimizer", "replace", True,
      "optimizer = NpuFusedAdamW(parameters, **opt_args)", "AdamW mode maps to NpuFusedAdamW"),
    C("optimizer = FusedLAMB(parameters, **opt_args)", "fused_optimizer", "replace", True,
      "optimizer = NpuFusedLamb(parameters, **opt_args)", "apex FusedLAMB is CUDA-only"),
    C("optimizer = FusedNovoGrad(parameters, **opt_args)", "fused_optimizer", "replace", True,
      "optimizer = NovoGrad(parameters, **opt_args)",
      "no fused NovoGrad for NPU; fall back to timm's pure-PyTorch NovoGrad"),
])

E("videomae_modeling_ft", "modeling_finetune.py", "explicit_replacement",
  "VideoMAE modeling_finetune.py ViT with an optional xformers memory-efficient attention path", [
    C("import xformers.ops as xops", "attention_kernel", "replace", False,
      "import torch_npu  # npu_fusion_attention stands in for xformers",
      "xformers has no NPU backend; the guarded import just disables the fast path"),
    C("x = xops.memory_efficient_attention(q, k, v, p=self.attn_drop.p if self.training else 0., scale=self.scale)",
      "attention_kernel", "replace", False,
      'x = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, "BSND", scale=self.scale, keep_prob=1. - (self.attn_drop.p if self.training else 0.))[0]',
      "unreachable on NPU (flag ANDed with the import check), so the vanilla softmax path runs; memory/speed only "
      "(whether the 16x224 AVA batch still fits on a 910B without it is unconfirmed)"),
])

E("videomae_ava_sh", "scripts/ava/vit_b_ava_ft.sh", "explicit_replacement",
  "VideoMAE scripts/ava/*.sh multi-node launcher (torch.distributed.launch, NCCL env, DeepSpeed)", [
    C("=set -x", "import_torch_npu", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced on every node before torch_npu is imported"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "lists every device of an 8-device node, so ignoring it changes nothing (kept for parity)"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
      "NCCL transport switch; HCCL uses the NPU RoCE NICs and ignores it"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
      "host NIC for rendezvous; HCCL picks its own default order, which may or may not reach the root node on a "
      "multi-NIC host (host-dependent, unconfirmed)"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
      "log verbosity only"),
    C("--enable_deepspeed", "distributed_framework", "removal", False, None,
      "VideoMAE pins a pre-NPU DeepSpeed whose 'Adam' config builds a CUDA FusedAdam; dropping the flag uses the native "
      "AMP path (whether a newer DeepSpeed with its NPU accelerator works with this code is unconfirmed)"),
])


# --------------------------------------------------------------------------------------------
# ACAR-Net (AVA actor-context-actor relation head)
# --------------------------------------------------------------------------------------------

E("acar_main", "main.py", "explicit_replacement",
  "ACAR-Net main.py (mp.spawn launcher, --backend nccl, tcp:// init, net.cuda(), storage.cuda() map_location)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; mp.spawn children re-import it"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C("net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "Module.cuda raises without CUDA"),
    C("checkpoint = torch.load(opt.resume_path, map_location=lambda storage, loc: storage.cuda())", "tensor_to_device",
      "replace", True,
      "checkpoint = torch.load(opt.resume_path, map_location='npu:{}'.format(torch.npu.current_device()))",
      "map_location lambda moves every storage to CUDA"),
    C("tot_rois = torch.Tensor([num_rois]).cuda()", "tensor_to_device", "replace", True,
      "tot_rois = torch.Tensor([num_rois]).npu()", "HCCL all_reduce needs an NPU tensor"),
    C("loss = torch.tensor(0).float().cuda()", "tensor_to_device", "replace", True,
      "loss = torch.tensor(0).float().npu()", "zero-RoI batches"),
    C("parser.add_argument('--backend', type=str, default='nccl')", "dist_backend", "replace", True,
      "parser.add_argument('--backend', type=str, default='hccl')",
      "default process-group backend; NCCL is unavailable on Ascend"),
    C("os.environ.setdefault('NCCL_ASYNC_ERROR_HANDLING', '1')", "env_var", "replace", False,
      "os.environ.setdefault('HCCL_ASYNC_ERROR_HANDLING', '1')",
      "NCCL watchdog knob; torch_npu's HCCL_ASYNC_ERROR_HANDLING reportedly defaults to 1 already"),
])

E("acar_head", "models/heads/acar.py", "explicit_replacement",
  "ACAR-Net models/heads/acar.py (HR2O_NL relation head on torchvision roi_align)", [
    C("from torchvision.ops import roi_align", "unsupported_op_workaround", "npu_only_addition", False,
      "import torchvision_npu  # registers NPU kernels for torchvision.ops.roi_align",
      "torchvision roi_align has no NPU kernel unless torchvision_npu is imported; without it the op can only run via "
      "torch_npu's CPU fallback (assumed, unconfirmed for torchvision:: ops) -- a host round-trip per batch"),
])
