"""Labels for probe484 (table detection / table-structure recognition, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit for an explicit torch_npu port.
`required` = with every other label already ported, would leaving this line unchanged fail,
compute something wrong or silently do the wrong thing on an NPU host?
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SETENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ------------------------------------------------------------------------------------------------
# TableNet (PyTorch re-implementation, module-level DEVICE global in config.py, torch.cuda.amp)
# ------------------------------------------------------------------------------------------------
E("tablenet_model", "Training/tablenet/model.py", "explicit_replacement",
  "asagar60/TableNet-pytorch Training/tablenet/model.py (VGG19/DenseNet encoders, table/column decoders)", [])

E("tablenet_config", "Training/config.py", "device_branch_or_abstraction",
  "asagar60/TableNet-pytorch Training/config.py (module-level DEVICE/PIN_MEMORY globals)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "config is imported first by train.py/predict.py; the pinned torch 1.8 stack predates "
      "torch_npu autoload, so torch.npu only exists after this import"),
    C('DEVICE = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'DEVICE = "npu" if torch.npu.is_available() else "cpu"',
      "the single device global every other module reads; unchanged it silently trains on CPU"),
])

E("tablenet_train", "Training/train.py", "explicit_replacement",
  "asagar60/TableNet-pytorch Training/train.py (seed_all, torch.cuda.amp autocast + GradScaler loop)", [
    C("torch.cuda.manual_seed(SEED_VALUE)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(SEED_VALUE)",
      "no error on an NPU host (lazy CUDA seeding is a no-op); whether torch.manual_seed already "
      "seeds the NPU generator on torch_npu 1.8 is unconfirmed, so reproducibility only"),
    C("torch.cuda.manual_seed_all(SEED_VALUE)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(SEED_VALUE)",
      "same as above: reproducibility only, unconfirmed"),
    C("with torch.cuda.amp.autocast(enabled=config.USE_AMP):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=config.USE_AMP):",
      "torch.cuda.amp.autocast disables itself with a warning when CUDA is absent, so USE_AMP "
      "would be silently ignored"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=config.USE_AMP)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=config.USE_AMP)",
      "the CUDA GradScaler disables itself without CUDA; with NPU autocast on, fp16 gradients "
      "would then go unscaled"),
    C("load_checkpoint(torch.load(checkpoint_path), model)", "tensor_to_device", "replace", False,
      "last_epoch, tr_metrics, te_metrics = load_checkpoint(torch.load(checkpoint_path, map_location='cpu'), model)",
      "only fails when resuming a checkpoint that was written on a CUDA host (tensors restore to "
      "cuda); checkpoints written on the NPU host load fine"),
    C("peak GPU memory {torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", True,
      'f"peak NPU memory {torch.npu.max_memory_allocated() / 2**20:.0f} MiB{nl}")',
      "log-only, but torch.cuda.max_memory_allocated silently reports 0 when CUDA was never "
      "initialised"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "a no-op on a host without CUDA; porting it only restores the cache release (memory only)"),
])

E("tablenet_predict", "Training/predict.py", "device_branch_or_abstraction",
  "asagar60/TableNet-pytorch Training/predict.py (checkpoint restored with map_location=cpu, moved to config.DEVICE)", [])

E("tablenet_requirements", "requirements.txt", "explicit_replacement",
  "asagar60/TableNet-pytorch requirements.txt", [
    C("=torch==1.8.1", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==1.8.1.post2",
      "torch_npu must be installed next to torch; 1.8.1.post2 is the (EOL) torch_npu build for "
      "torch 1.8.1 (branch v1.8.1-5.0.rc2, CANN 6.3.RC2); a newer torch would be the better long-term choice"),
])

# ------------------------------------------------------------------------------------------------
# microsoft/table-transformer (TATR): DETR code base, "device" in the JSON configs
# ------------------------------------------------------------------------------------------------
E("tatr_main", "src/main.py", "explicit_replacement",
  "microsoft/table-transformer src/main.py (args merged from structure_config.json, torch.device(args.device))", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "torch.device('npu') from the config needs the backend registered; environment pins torch "
      "< 2.5 (no autoload)"),
])

E("tatr_engine", "detr/engine.py", "explicit_replacement",
  "microsoft/table-transformer detr/engine.py (train_one_epoch / evaluate, device passed in)", [])

E("tatr_matcher", "detr/models/matcher.py", "explicit_replacement",
  "microsoft/table-transformer detr/models/matcher.py (Hungarian matcher, cost matrix moved to CPU for scipy)", [])

E("tatr_misc", "detr/util/misc.py", "explicit_replacement",
  "microsoft/table-transformer detr/util/misc.py (DETR distributed helpers, MetricLogger)", [
    C("dtype=torch.float64, device='cuda')", "device_type", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "all_reduce buffer must live on the HCCL device; whether HCCL reduces float64 is unconfirmed "
      "(float32 would be the cautious choice)"),
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).to("npu")',
      "all_gather of pickled objects (used by the COCO evaluator) on the HCCL device"),
    C('local_size = torch.tensor([tensor.numel()], device="cuda")', "device_type", "replace", True,
      'local_size = torch.tensor([tensor.numel()], device="npu")', "HCCL all_gather buffer"),
    C('size_list = [torch.tensor([0], device="cuda")', "device_type", "replace", True,
      'size_list = [torch.tensor([0], device="npu") for _ in range(world_size)]', "HCCL all_gather buffers"),
    C('tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="cuda"))', "device_type", "replace", True,
      'tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="npu"))', "HCCL all_gather buffers"),
    C('padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="cuda")', "device_type", "replace", True,
      'padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="npu")',
      "torch.cat with the NPU tensor would fail on a cuda tensor"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "only chooses whether the log format has a 'max mem' column; leaving it drops the column "
      "without error (the second check below must still be ported)"),
    C("if torch.cuda.is_available():  # peak memory", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():  # peak memory is only tracked on the device",
      "coupled with the check above: once the format string has {memory}, leaving this one makes "
      "the else-branch format() raise KeyError('memory')"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", True,
      "memory=torch.npu.max_memory_allocated() / MB))",
      "log value: torch.cuda.max_memory_allocated silently returns 0 without CUDA"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()",
      "SLURM path: torch.cuda.device_count() is 0 on an NPU host -> ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)",
      "DETR's init_distributed_mode; reached whenever the shared detr package is launched with torchrun/SLURM"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True,
      "args.dist_backend = 'hccl'", "NCCL is not available on Ascend; HCCL is the collective backend"),
])

E("tatr_inference", "src/inference.py", "explicit_replacement",
  "microsoft/table-transformer src/inference.py (TableExtractionPipeline, --detection_device/--structure_device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "registers the npu device used by the two device flags"),
    C("parser.add_argument('--detection_device', default=\"cuda\")", "device_type", "replace", True,
      "parser.add_argument('--detection_device', default=\"npu\")",
      "default device string; map_location=torch.device('cuda') fails on an NPU host"),
    C("parser.add_argument('--structure_device', default=\"cuda\")", "device_type", "replace", True,
      "parser.add_argument('--structure_device', default=\"npu\")", "same as the detection device"),
])

E("tatr_structure_config", "src/structure_config.json", "explicit_replacement",
  "microsoft/table-transformer src/structure_config.json (training hyper-parameters incl. \"device\")", [
    C('"device":"cuda",', "device_type", "replace", True,
      '"device":"npu",',
      "main.py takes args.device from this file unless --device is given; it feeds torch.device()"),
])

E("tatr_env", "environment.yml", "explicit_replacement",
  "microsoft/table-transformer environment.yml (conda env with pytorch-cuda)", [
    C("=- nvidia", "import_torch_npu", "removal", False, None,
      "channel only needed for pytorch-cuda; inert once that package is gone"),
    C("=- pytorch=1.13.1", "import_torch_npu", "replace", True,
      "- pytorch=2.1.0",
      "torch_npu has no build for torch 1.13; 2.1.0 pairs with torch-npu 2.1.0.postN"),
    C("=- torchvision=0.14.1", "import_torch_npu", "replace", True,
      "- torchvision=0.16.0", "must match torch 2.1.0"),
    C("=- pytorch-cuda=11.7", "import_torch_npu", "replace", True,
      "- cpuonly",
      "pulls the CUDA build of pytorch (and does not exist for aarch64); the NPU stack wants the CPU "
      "torch build plus torch_npu"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True,
      "    - torch-npu==2.1.0.post10",
      "torch_npu itself (pip only); pairs with torch 2.1.0 and CANN 8.0.0"),
])

E("tatr_train_sh", "scripts/train_pubtables1m.sh", "explicit_replacement",
  "microsoft/table-transformer README training command wrapped in a launcher script", [
    C("=set -euo pipefail", "env_var", "npu_only_addition", False,
      SETENV,
      "CANN environment; may already be set by the user's profile or container"),
    C("nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv", "device_capability_check", "replace", True,
      "npu-smi info",
      "nvidia-smi is absent on an Ascend host and set -e aborts the script"),
    C("export CUDA_VISIBLE_DEVICES=${GPU_ID}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU_ID}",
      "the runtime ignores CUDA_VISIBLE_DEVICES, so GPU_ID=3 would silently train on NPU 0"),
])

# ------------------------------------------------------------------------------------------------
# Hugging Face Table Transformer scripts (AutoModelForObjectDetection, torch.autocast, EasyOCR)
# ------------------------------------------------------------------------------------------------
E("hftatr_infer", "table_transformer/run_table_extraction.py", "device_branch_or_abstraction",
  "NielsRogge/Transformers-Tutorials Table Transformer inference notebook turned into a script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "torch pinned to 2.1 in requirements (no autoload)"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "module-level device; unchanged both models silently run on the CPU"),
    C('if args.fp16 and device == "cuda":', "device_type", "replace", True,
      'if args.fp16 and device == "npu":',
      "--fp16 would be silently ignored"),
    C('dtype = torch.float16 if args.fp16 and device == "cuda" else torch.float32', "device_type", "replace", True,
      'dtype = torch.float16 if args.fp16 and device == "npu" else torch.float32',
      "coupled with the .half() check: half model + float32 inputs raises a dtype mismatch"),
    C('=if device == "cuda":', "device_type", "replace", False,
      'if device == "npu":', "only skips the peak-memory log line"),
    C("torch.cuda.max_memory_allocated() / 2**20:.1f", "torch_cuda_api", "replace", True,
      'print(f"peak NPU memory: {torch.npu.max_memory_allocated() / 2**20:.1f} MiB")',
      "log value: silently 0 without CUDA"),
])

E("hftatr_finetune", "table_transformer/finetune_structure.py", "explicit_replacement",
  "Hugging Face TableTransformerForObjectDetection fine-tuning script (plain loop, torch.autocast + GradScaler)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "torch pinned to 2.1 (no autoload)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "torch.manual_seed already seeds registered accelerator backends on torch 2.1 (unconfirmed "
      "in the knowledge base); the CUDA call is a lazy no-op"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=use_amp):', "amp", "replace", True,
      'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=use_amp):',
      "device_type='cuda' without CUDA disables autocast with a warning: --amp silently ignored in validation"),
    C('device = torch.device("cuda:0")', "device_type", "replace", True,
      'device = torch.device("npu:0")', "hard-coded training device"),
    C("num_workers=args.num_workers, collate_fn=collate_fn, pin_memory=True", "pin_memory", "replace", False,
      "num_workers=args.num_workers, collate_fn=collate_fn, pin_memory=True, pin_memory_device=\"npu\")",
      "torch 2.1 DataLoader pins only when torch.cuda.is_available(); naming the device restores "
      "pinning (performance only)"),
    C("num_workers=2, collate_fn=collate_fn, pin_memory=True", "pin_memory", "replace", False,
      "num_workers=2, collate_fn=collate_fn, pin_memory=True, pin_memory_device=\"npu\")",
      "same as the train loader (performance only)"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "the CUDA scaler disables itself without CUDA, leaving fp16 gradients unscaled under NPU autocast"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "raises without a CUDA device"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.amp):', "amp", "replace", True,
      'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=args.amp):',
      "training autocast; --amp silently ignored otherwise"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "torch.cuda lazy init raises on a host without CUDA"),
    C("mem = torch.cuda.max_memory_allocated(device) / 2**30", "torch_cuda_api", "replace", True,
      "mem = torch.npu.max_memory_allocated(device) / 2**30",
      "passing an npu device to the CUDA API raises ('Expected a cuda device')"),
])

E("hftatr_requirements", "table_transformer/requirements.txt", "explicit_replacement",
  "requirements for the Hugging Face TATR scripts (cu118 wheels)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu expects the CPU torch build on x86 (aarch64 uses plain PyPI torch); the cu118 index "
      "would still satisfy torch==2.1.0 with a CUDA build"),
    C("=torch==2.1.2+cu118", "import_torch_npu", "replace", True,
      "torch==2.1.0", "torch_npu 2.1.0.postN pairs with torch 2.1.0 exactly"),
    C("=torchvision==0.16.2+cu118", "import_torch_npu", "replace", True,
      "torchvision==0.16.0", "matches torch 2.1.0"),
    C("=numpy<2", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post10", "the torch_npu wheel itself"),
])

# ------------------------------------------------------------------------------------------------
# CascadeTabNet (mmdetection v1.2 + mmcv 0.4.3, in-tree CUDA ops)
# ------------------------------------------------------------------------------------------------
E("ctn_main", "Table Structure Recognition/main.py", "explicit_replacement",
  "DevashishPrasad/CascadeTabNet Table Structure Recognition/main.py", [
    C("show_result_pyplot", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "entry script; torch 1.x stack, the npu device needs the explicit import"),
    C("model = init_detector(config_fname, checkpoint_path + epoch)", "device_type", "replace", True,
      "model = init_detector(config_fname, checkpoint_path + epoch, device='npu:0')",
      "init_detector defaults to 'cuda:0'"),
])

E("ctn_config", "Config/cascade_mask_rcnn_hrnetv2p_w32_20e.py", "explicit_replacement",
  "DevashishPrasad/CascadeTabNet Config/cascade_mask_rcnn_hrnetv2p_w32_20e.py (mmdet v1 config)", [
    C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True,
      "dist_params = dict(backend='hccl')", "passed to init_dist for distributed training"),
])

E("ctn_apis_inference", "mmdet/apis/inference.py", "explicit_replacement",
  "open-mmlab/mmdetection v1.2 mmdet/apis/inference.py (as vendored by CascadeTabNet)", [
    C("def init_detector(config, checkpoint=None, device='cuda:0'):", "device_type", "replace", False,
      "def init_detector(config, checkpoint=None, device='npu:0'):",
      "default only; the ported main.py passes the device explicitly"),
    C("data = scatter(collate([data], samples_per_gpu=1), [device])[0]", "tensor_to_device", "replace", True,
      "data = scatter(collate([data], samples_per_gpu=1), [-1])[0]; data['img'] = [i.to(device) for i in data['img']]",
      "mmcv 0.x scatter to a device uses torch.cuda streams/.cuda(); unwrap on the host (-1) and move"),
    C("data = scatter(collate([data], samples_per_gpu=1), [device.index])[0]", "tensor_to_device", "replace", False,
      "data = scatter(collate([data], samples_per_gpu=1), [-1])[0]; data['img'] = [i.to(device) for i in data['img']]",
      "async API, not used by CascadeTabNet's scripts"),
])

E("ctn_nms_wrapper", "mmdet/ops/nms/nms_wrapper.py", "kernel_rewrite",
  "open-mmlab/mmdetection v1.2 mmdet/ops/nms/nms_wrapper.py", [
    C("=import torch", "unsupported_op_workaround", "npu_only_addition", True,
      "import torchvision",
      "needed for the torchvision NMS that replaces nms_cuda (NPU kernel via torchvision_npu, "
      "otherwise CPU fallback)"),
    C("from . import nms_cpu, nms_cuda", "custom_cuda_extension", "replace", True,
      "from . import nms_cpu",
      "nms_cuda is a CUDAExtension that cannot be built on Ascend; the import would fail"),
    C("device = 'cpu' if device_id is None else 'cuda:{}'.format(device_id)", "device_type", "replace", False,
      "device = 'cpu' if device_id is None else 'npu:{}'.format(device_id)",
      "only for numpy input with an explicit device_id, which CascadeTabNet never passes"),
    C("if dets_th.is_cuda:", "tensor_to_device", "replace", True,
      "if dets_th.is_npu:",
      "otherwise NPU tensors fall through to the CPU C++ kernel, which reads device memory as host memory"),
    C("inds = nms_cuda.nms(dets_th, iou_thr)", "custom_cuda_extension", "replace", True,
      "inds = torchvision.ops.nms(dets_th[:, :4], dets_th[:, 4], iou_thr)",
      "same keep order (score-descending) as the CUDA kernel"),
])

E("ctn_roi_align", "mmdet/ops/roi_align/roi_align.py", "kernel_rewrite",
  "open-mmlab/mmdetection v1.2 mmdet/ops/roi_align/roi_align.py", [
    C("from . import roi_align_cuda", "custom_cuda_extension", "replace", True,
      "roi_align_cuda = None  # CUDA kernel not built on Ascend; the torchvision path is used",
      "the extension is not built, the import would fail"),
    C("use_torchvision=False):", "custom_cuda_extension", "replace", True,
      "use_torchvision=True):",
      "configs do not set use_torchvision, so the default decides; the CUDA Function raises "
      "NotImplementedError for non-CUDA tensors"),
    C("from torchvision.ops import roi_align as tv_roi_align", "unsupported_op_workaround", "npu_only_addition", False,
      "import torchvision_npu  # noqa: F401",
      "registers NPU kernels for torchvision.ops; without it roi_align runs through the CPU "
      "fallback (performance, unconfirmed for custom torchvision ops)"),
])

E("ctn_setup", "setup.py", "explicit_replacement",
  "open-mmlab/mmdetection v1.2 setup.py (make_cuda_ext / CUDAExtension for every op)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
      "from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension  # noqa: E402",
      "CppExtension is needed for the host-only ops"),
    C("raise EnvironmentError('CUDA is required to compile MMDetection!')", "custom_cuda_extension", "replace", True,
      "pass  # Ascend: build the CPU ops only",
      "setup aborts on a host without CUDA"),
    C("return CUDAExtension(", "custom_cuda_extension", "replace", True,
      "return CppExtension(",
      "CUDAExtension needs CUDA_HOME/nvcc"),
    C("name='nms_cuda',", "custom_cuda_extension", "removal", True, None,
      "drop the whole make_cuda_ext(...) entry: .cu sources cannot be compiled"),
    C("name='roi_align_cuda',", "custom_cuda_extension", "removal", True, None,
      "replaced by torchvision roi_align (see roi_align.py)"),
    C("name='roi_pool_cuda',", "custom_cuda_extension", "removal", True, None,
      "CUDA-only op; mmdet/ops/__init__.py imports must be guarded as well"),
    C("name='deform_conv_cuda',", "custom_cuda_extension", "removal", True, None, "CUDA-only op, unused by the HRNet config"),
    C("name='deform_pool_cuda',", "custom_cuda_extension", "removal", True, None, "CUDA-only op, unused"),
    C("name='sigmoid_focal_loss_cuda',", "custom_cuda_extension", "removal", True, None, "CUDA-only op, unused"),
    C("name='masked_conv2d_cuda',", "custom_cuda_extension", "removal", True, None, "CUDA-only op, unused"),
])

E("ctn_apis_train", "mmdet/apis/train.py", "explicit_replacement",
  "open-mmlab/mmdetection v1.2 mmdet/apis/train.py (_dist_train / _non_dist_train)", [
    C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", "replace", True,
      "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel",
      "mmcv's wrappers scatter with CUDA streams; the NPU variants need mmcv>=1.7 (not in the "
      "knowledge base, unconfirmed)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)", "reproducibility only; lazy no-op without CUDA"),
    C("model = MMDistributedDataParallel(", "distributed_framework", "replace", True,
      "model = NPUDistributedDataParallel(", "see import"),
    C("=model.cuda(),", "tensor_to_device", "replace", True,
      "model.npu(),", "model placement before wrapping"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],", "torch.cuda.current_device() raises without CUDA"),
    C("model = MMDataParallel(model, device_ids=range(cfg.gpus)).cuda()", "distributed_framework", "replace", True,
      "model = NPUDataParallel(model.npu(), device_ids=range(cfg.gpus))",
      "torch.nn.DataParallel is unsupported on NPU and .cuda() fails"),
])

E("ctn_apis_env", "mmdet/apis/env.py", "explicit_replacement",
  "open-mmlab/mmdetection v1.0 mmdet/apis/env.py (init_dist for pytorch/slurm launchers)", [
    C("def init_dist(launcher, backend='nccl', **kwargs):", "dist_backend", "replace", False,
      "def init_dist(launcher, backend='hccl', **kwargs):",
      "default only; tools/train.py passes backend from cfg.dist_params (ported in the config)"),
    C("=num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()", "0 on an NPU host -> ZeroDivisionError in rank % num_gpus"),
    C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(rank % num_gpus)", "binds each rank to its device"),
    C("num_gpus = torch.cuda.device_count()  # gpus per node", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()  # devices per node", "SLURM launcher path"),
    C("torch.cuda.set_device(proc_id % num_gpus)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(proc_id % num_gpus)", "SLURM launcher path"),
])

E("ctn_tools_train", "tools/train.py", "explicit_replacement",
  "open-mmlab/mmdetection v1.2 tools/train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "training entry point on a torch 1.x stack"),
])

E("ctn_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "open-mmlab/mmdetection v1.x docker/Dockerfile adapted for CascadeTabNet", [
    C("FROM pytorch/pytorch:${PYTORCH}-cuda${CUDA}-cudnn${CUDNN}-devel", "import_torch_npu", "replace", True,
      "FROM ${CANN_BASE_IMAGE}",
      "needs an image with the Ascend driver mounts + CANN toolkit instead of the CUDA devel image "
      "(exact image name left open)"),
    C('ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0+PTX"', "env_var", "removal", False, None,
      "inert without nvcc"),
    C('ENV TORCH_NVCC_FLAGS="-Xfatbin -compress-all"', "env_var", "removal", False, None,
      "inert without nvcc"),
    C("=RUN conda clean --all", "import_torch_npu", "replace", True,
      "RUN pip install torch==1.11.0 torchvision==0.12.0 torch-npu==1.11.0.post8",
      "CANN images ship neither conda nor torch; torch_npu 1.11.0.post8 pairs with CANN 7.0.0"),
    C("RUN pip install mmcv==0.4.3", "custom_cuda_extension", "replace", True,
      "RUN MMCV_WITH_OPS=1 FORCE_NPU=1 pip install mmcv-full==1.7.2",
      "the NPU DataParallel wrappers need mmcv>=1.7 (unconfirmed in the knowledge base; mmdet v1 "
      "compatibility with it not checked)"),
    C('ENV FORCE_CUDA="1"', "env_var", "removal", True, None,
      "forces the WITH_CUDA branch of setup.py, so the CPU-only build would still include CUDA headers"),
])

# ------------------------------------------------------------------------------------------------
# LGPMA (hikopensource/DAVAR-Lab-OCR, mmdet 2.x + mmcv-full 1.3)
# ------------------------------------------------------------------------------------------------
E("lgpma_config", "demo/table_recognition/lgpma/configs/lgpma_pub.py", "explicit_replacement",
  "hikopensource/DAVAR-Lab-OCR demo/table_recognition/lgpma/configs/lgpma_pub.py", [
    C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True,
      "dist_params = dict(backend='hccl')", "init_dist(args.launcher, **cfg.dist_params)"),
])

E("lgpma_dist_train", "demo/table_recognition/lgpma/dist_train.sh", "explicit_replacement",
  "hikopensource/DAVAR-Lab-OCR demo/table_recognition/lgpma/dist_train.sh", [
    C("export PATH=/usr/local/miniconda3/bin/:$PATH", "env_var", "npu_only_addition", False,
      SETENV, "CANN environment; may already be set"),
    C("CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 python -m torch.distributed.launch", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 python -m torch.distributed.launch --nproc_per_node 8 --master_port=29501 $DAVAROCR_PATH/tools/train.py $DAVAROCR_PATH/demo/table_recognition/lgpma/configs/lgpma_pub.py --no-validate --launcher pytorch",
      "all eight devices, numbered from 0, so ignoring the variable selects the same cards"),
])

E("lgpma_test_pub", "demo/table_recognition/lgpma/tools/test_pub.py", "explicit_replacement",
  "hikopensource/DAVAR-Lab-OCR demo/table_recognition/lgpma/tools/test_pub.py (TEDS evaluation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "entry script (torch 1.x stack)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "raises without CUDA; also needed for honest per-image timing"),
])

E("lgpma_apis_inference", "davarocr/davar_common/apis/inference.py", "explicit_replacement",
  "hikopensource/DAVAR-Lab-OCR davarocr/davar_common/apis/inference.py (init_model / inference_model)", [
    C("def init_model(config, checkpoint=None, device='cuda:0', cfg_options=None):", "device_type", "replace", True,
      "def init_model(config, checkpoint=None, device='npu:0', cfg_options=None):",
      "test_pub.py relies on the default"),
    C("map_loc = 'cpu' if device == 'cpu' else None", "tensor_to_device", "replace", True,
      "map_loc = 'cpu'",
      "released LGPMA checkpoints were saved from CUDA; map_location=None restores them to cuda and fails"),
    C("if next(model.parameters()).is_cuda:", "tensor_to_device", "replace", True,
      "if next(model.parameters()).is_npu:",
      "otherwise the CPU branch runs: inputs stay on the host while the model is on the NPU"),
    C("data = scatter(data, [device])[0]", "tensor_to_device", "replace", True,
      "data['img'] = [img.to(device) for img in data['img']]",
      "DataContainers are already unwrapped above; mmcv scatter to a device goes through CUDA streams"),
])

E("lgpma_apis_train", "davarocr/davar_common/apis/train.py", "explicit_replacement",
  "hikopensource/DAVAR-Lab-OCR davarocr/davar_common/apis/train.py (train_model, mmdet 2.x style)", [
    C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", "replace", True,
      "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel",
      "mmcv>=1.7 NPU wrappers (unconfirmed in the knowledge base)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)", "reproducibility only"),
    C("model = MMDistributedDataParallel(", "distributed_framework", "replace", True,
      "model = NPUDistributedDataParallel(", "see import"),
    C("=model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),", "model placement"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],", "raises without CUDA"),
    C("model = MMDataParallel(", "distributed_framework", "replace", True,
      "model = NPUDataParallel(", "DataParallel-based wrapper is unsupported on NPU"),
    C("model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "tensor_to_device", "replace", True,
      "model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "model placement"),
])

E("lgpma_tools_train", "tools/train.py", "explicit_replacement",
  "hikopensource/DAVAR-Lab-OCR tools/train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "training entry point (torch 1.x stack)"),
])

E("lgpma_post", "davarocr/davar_table/core/post_processing/post_lgpma.py", "explicit_replacement",
  "hikopensource/DAVAR-Lab-OCR davarocr/davar_table/core/post_processing/post_lgpma.py (numpy/cv2 only)", [])

E("lgpma_setup", "setup.py", "explicit_replacement",
  "hikopensource/DAVAR-Lab-OCR setup.py (make_cuda_ext with CppExtension fallback)", [])

E("lgpma_requirements", "requirements.txt", "explicit_replacement",
  "hikopensource/DAVAR-Lab-OCR requirements.txt", [
    C("=mmcv-full==1.3.4", "custom_cuda_extension", "replace", True,
      "mmcv-full==1.7.2",
      "mmcv-full 1.3 ops are CUDA-only; 1.7 adds NPU ops/wrappers (build with MMCV_WITH_OPS=1 "
      "FORCE_NPU=1; unconfirmed in the knowledge base)"),
    C("=mmdet==2.11.0", "custom_cuda_extension", "replace", True,
      "mmdet==2.28.2", "mmdet 2.11 asserts mmcv-full < 1.4 at import time"),
    C("=torch==1.6.0", "import_torch_npu", "replace", True,
      "torch==1.11.0", "no torch_npu build exists for torch 1.6"),
    C("=torchvision==0.7.0", "import_torch_npu", "replace", True,
      "torchvision==0.12.0", "matches torch 1.11"),
    C("=numpy", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==1.11.0.post8", "the torch_npu wheel (pairs with CANN 7.0.0)"),
])
