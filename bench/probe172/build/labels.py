# Labels for probe172 (Huawei Noah's Ark GPU-era research code -> Ascend NPU).
# Format: see ../../probe_build.py. One C(...) per upstream line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: import torch_npu registers the 'npu' device and torch.npu; needed on torch_npu < 2.5.1 "
               "(autoload only since 2.5.1) and for the torch_npu.* names used below")

# ---------------------------------------------------------------------------------------------------------------
E("tinybert_general_distill", "general_distill.py", "explicit_replacement",
  "TinyBERT general_distill.py (pytorch_pretrained_bert-era LM distillation, apex fp16, local_rank DDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")',
      "torch.cuda.is_available() is False on an NPU host, so training silently runs on CPU"),
    C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpu = torch.npu.device_count()",
      "returns 0 on an NPU host; n_gpu drives seeding, DataParallel and loss averaging"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.local_rank)",
      "torch.cuda.set_device fails without CUDA"),
    C('device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", args.local_rank)', "per-rank device must be npu:<local_rank>"),
    C("torch.distributed.init_process_group(backend='nccl')", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl')", "NCCL is unavailable on Ascend; HCCL is the collective backend"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(args.seed)",
      "silent no-op without CUDA; torch.manual_seed above already seeds registered backends (unconfirmed for every torch_npu version)"),
    C("from apex.parallel import DistributedDataParallel as DDP", "distributed_framework", "replace", False,
      "from torch.nn.parallel import DistributedDataParallel as DDP",
      "apex DDP uses CUDA streams/flatten kernels; whether Ascend's apex patch covers apex.parallel DDP is unconfirmed, native DDP over HCCL is the safe choice"),
    C("student_model = torch.nn.DataParallel(student_model)", "distributed_framework", "replace", True,
      "logger.warning('nn.DataParallel is not supported on NPU; use torch.distributed.launch with one process per NPU')",
      "torch.nn.DataParallel is marked unsupported (✘) on Ascend"),
    C("teacher_model = torch.nn.DataParallel(teacher_model)", "distributed_framework", "replace", True,
      "pass  # nn.DataParallel unsupported on NPU", "torch.nn.DataParallel is marked unsupported (✘) on Ascend"),
    C("from apex.optimizers import FP16_Optimizer", "amp", "replace", False,
      "from apex.fp16_utils import FP16_Optimizer  # or move the fp16 path to torch.npu.amp",
      "legacy apex FP16_Optimizer relies on amp_C multi-tensor kernels when present; behaviour with Ascend's apex patch unconfirmed"),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", True,
      "from torch_npu.optim import NpuFusedAdam as FusedAdam",
      "apex FusedAdam needs its CUDA kernel; Ascend apex has no FusedAdam (NPU fused optimizers are NpuFused*)"),
    C("bias_correction=False, max_grad_norm=1.0)", "fused_optimizer", "replace", True, "weight_decay=0.0)",
      "NpuFusedAdam(params, lr, betas, eps, weight_decay, amsgrad) has no bias_correction/max_grad_norm kwargs"),
    C("optimizer = BertAdam(optimizer_grouped_parameters,", "fused_optimizer", "replace", False,
      "optimizer = NpuFusedBertAdam(optimizer_grouped_parameters,",
      "performance only: msFmkTransplt advises NpuFusedBertAdam for BertAdam"),
  ])

E("tinybert_task_distill", "task_distill.py", "explicit_replacement",
  "TinyBERT task_distill.py (GLUE intermediate/prediction-layer distillation, n_gpu DataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")',
      "torch.cuda.is_available() is False on an NPU host, so distillation silently runs on CPU"),
    C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpu = torch.npu.device_count()",
      "returns 0 on an NPU host (drives seeding and multi-device branches)"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(args.seed)",
      "silent no-op without CUDA; torch.manual_seed already seeds the device generators (unconfirmed)"),
    C("student_model = torch.nn.DataParallel(student_model)", "distributed_framework", "replace", True,
      "logger.warning('nn.DataParallel is not supported on NPU; running on a single NPU')",
      "torch.nn.DataParallel is marked unsupported (✘) on Ascend; reached whenever more than one NPU is visible"),
    C("teacher_model = torch.nn.DataParallel(teacher_model)", "distributed_framework", "replace", True,
      "pass  # nn.DataParallel unsupported on NPU", "torch.nn.DataParallel is marked unsupported (✘) on Ascend"),
    C("optimizer = BertAdam(optimizer_grouped_parameters,", "fused_optimizer", "replace", False,
      "optimizer = NpuFusedBertAdam(optimizer_grouped_parameters,",
      "performance only: msFmkTransplt advises NpuFusedBertAdam for BertAdam (schedule kwarg maps to its schedule arg)"),
  ])

E("tinybert_modeling", "transformer/modeling.py", "explicit_replacement",
  "TinyBERT transformer/modeling.py (pytorch_pretrained_bert BERT with apex FusedLayerNorm fallback)", [
    C("from apex.normalization.fused_layer_norm import FusedLayerNorm as BertLayerNorm", "unsupported_op_workaround", "replace", False,
      "from torch.nn import LayerNorm as BertLayerNorm",
      "Ascend's apex ships no fused_layer_norm_cuda kernel; if that apex is installed the import succeeds and the ImportError "
      "fallback is skipped, so construction/forward may fail. Without apex the fallback runs fine (unconfirmed which happens)"),
  ])

E("tinybert_data_aug", "data_augmentation.py", "explicit_replacement",
  "TinyBERT data_augmentation.py (BERT-MLM + GloVe word replacement, hard-coded 'cuda')", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script that now names the 'npu' device; torch_npu must be imported (autoload only since 2.5.1)"),
    C("self.model.to('cuda')", "tensor_to_device", "replace", True, "self.model.to('npu')",
      "hard-coded CUDA device fails on an NPU host"),
    C("predictions = self.model(tokens_tensor.to('cuda'), segments_tensor.to('cuda'))", "tensor_to_device", "replace", True,
      "predictions = self.model(tokens_tensor.to('npu'), segments_tensor.to('npu'))", "hard-coded CUDA device"),
  ])

E("tinybert_run_sh", "scripts/run_general_distill.sh", "explicit_replacement",
  "TinyBERT general-distillation launcher (torch.distributed.launch, CUDA_VISIBLE_DEVICES, NCCL_DEBUG)", [
    C("=set -e", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (LD_LIBRARY_PATH, ASCEND_OPP_PATH, ...) must be sourced or torch_npu cannot load its libraries"),
    C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; device selection silently lost"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL_* variables are ignored by HCCL; logging only (level mapping unconfirmed)"),
  ])

E("tinybert_requirements", "requirements.txt", "explicit_replacement",
  "TinyBERT-era requirements.txt pinning a +cu101 torch wheel from the CUDA find-links index", [
    C("--find-links https://download.pytorch.org/whl/torch_stable.html", "device_type", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; x86 NPU hosts take the CPU torch build (aarch64 uses plain PyPI). Harmless once the pin below changes"),
    C("torch==1.4.0+cu101", "device_type", "replace", True, "torch==2.1.0",
      "CUDA build of torch 1.4, for which no torch_npu exists; torch must equal the torch_npu wheel's torch version"),
    C("=regex", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "torch_npu wheel matching torch 2.1.0 (needs CANN 8.0.0 installed on the host)"),
  ])

E("dynabert_run_glue", "run_glue.py", "explicit_replacement",
  "DynaBERT run_glue.py (HF transformers 2.x GLUE runner with width/depth-adaptive distillation, apex amp)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(args.seed)",
      "silent no-op without CUDA; torch.manual_seed already seeds the device generators (unconfirmed)"),
    C("num_workers=4, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=4, pin_memory=True, pin_memory_device='npu')",
      "performance only: without pin_memory_device the loader pins only when CUDA is available; "
      "whether torch_npu patches this is unconfirmed"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
      "raise ValueError('nn.DataParallel is not supported on NPU; launch with torch.distributed.launch')",
      "torch.nn.DataParallel is marked unsupported (✘) on Ascend; reached when several NPUs are visible without local_rank"),
    C('device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")',
      "torch.cuda.is_available() is False on an NPU host, so training silently runs on CPU"),
    C("args.n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "args.n_gpu = torch.npu.device_count()",
      "returns 0 on an NPU host; n_gpu scales the batch size and gates seeding"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.local_rank)",
      "torch.cuda.set_device fails without CUDA"),
    C('device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", args.local_rank)', "per-rank device must be npu:<local_rank>"),
    C("torch.distributed.init_process_group(backend='nccl')", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl')", "NCCL is unavailable on Ascend; use HCCL"),
  ])

E("dynabert_modeling", "transformers/modeling_bert.py", "explicit_replacement",
  "DynaBERT transformers/modeling_bert.py (DynaLinear width slicing, head/neuron reordering) - device-agnostic", [])

E("dynabert_env", "environment.yml", "explicit_replacement",
  "DynaBERT-era conda environment.yml (pytorch channel + cudatoolkit)", [
    C("- pytorch=1.1.0", "device_type", "replace", True, "- pytorch=2.1.0=*cpu*",
      "CUDA-enabled torch 1.1 from the pytorch channel; torch_npu needs the matching CPU torch (2.1.0 here)"),
    C("- cudatoolkit=10.0", "device_type", "removal", False, None,
      "CUDA runtime package is useless on an Ascend host (CANN is installed separately); harmless if kept on x86"),
    C("- tensorboardX==1.8", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post10",
      "add the torch_npu wheel matching torch 2.1.0"),
  ])

E("dynabert_eval_sh", "scripts/eval_dynabert.sh", "explicit_replacement",
  "DynaBERT sub-network evaluation loop (single GPU via CUDA_VISIBLE_DEVICES)", [
    C("MODEL_DIR=${MODEL_DIR:-./output/dynabert/${TASK}}", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before torch_npu can load"),
    C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${GPU}",
      "CUDA_VISIBLE_DEVICES is ignored on Ascend; the chosen device id would silently not apply"),
  ])

TIMM_LOSS_NOTE = ("parameter-free loss module: Module.cuda() has no tensors to move, so it is a silent no-op on an NPU "
                  "host; edited for consistency only")
E("cvb_tnt_train", "tnt_pytorch/train.py", "explicit_replacement",
  "CV-Backbones TNT/CMT ImageNet trainer forked from timm 0.3/0.4 train.py (apex/native AMP, NativeScaler, ModelEma)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("parser.add_argument('--dist-backend', default='nccl'", "dist_backend", "replace", True,
      "parser.add_argument('--dist-backend', default='hccl', type=str, help='torch.distributed backend')",
      "default backend feeds init_process_group; NCCL is unavailable on Ascend"),
    C("args.prefetcher = not args.no_prefetcher", "torch_cuda_api", "replace", True,
      "args.prefetcher = False  # timm's PrefetchLoader uses torch.cuda.Stream and .cuda()",
      "timm <= 0.4 PrefetchLoader (used when use_prefetcher=True) hard-codes torch.cuda.Stream/.cuda(non_blocking=True) "
      "(from timm's source, not in the knowledge base); the non-prefetch path below is then used"),
    C("args.device = 'cuda:0'", "device_type", "replace", False, "args.device = 'npu:0'",
      "args.device is not consumed in this script; changed for consistency"),
    C("args.device = 'cuda:%d' % args.local_rank", "device_type", "replace", False,
      "args.device = 'npu:%d' % args.local_rank", "args.device is not consumed in this script; changed for consistency"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.local_rank)",
      "torch.cuda.set_device fails without CUDA"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "moves the model to CUDA; fails on an NPU host"),
    C("model = convert_syncbn_model(model)", "distributed_framework", "replace", False,
      "model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)",
      "apex SyncBN wants its CUDA syncbn kernel (python fallback otherwise); torch SyncBatchNorm is listed as supported. Unconfirmed whether apex SyncBN works on NPU"),
    C("amp_autocast = torch.cuda.amp.autocast", "amp", "replace", True, "amp_autocast = torch.npu.amp.autocast",
      "torch.cuda.amp.autocast disables itself when CUDA is unavailable, so --amp silently trains in fp32"),
    C("loss_scaler = NativeScaler()", "amp", "replace", True,
      "loss_scaler = NativeScaler(); loss_scaler._scaler = torch.npu.amp.GradScaler()",
      "timm's NativeScaler builds torch.cuda.amp.GradScaler(), which disables itself without CUDA: fp16 autocast on NPU "
      "would run without loss scaling (NativeScaler internals from timm's source)"),
    C("model = ApexDDP(model, delay_allreduce=True)", "distributed_framework", "replace", False,
      "model = NativeDDP(model, device_ids=[args.local_rank])",
      "apex DDP relies on CUDA streams; Ascend apex patch coverage of apex.parallel is unconfirmed"),
    C("train_loss_fn = JsdCrossEntropy(num_splits=num_aug_splits, smoothing=args.smoothing).cuda()", "tensor_to_device", "replace", False,
      "train_loss_fn = JsdCrossEntropy(num_splits=num_aug_splits, smoothing=args.smoothing).npu()", TIMM_LOSS_NOTE),
    C("train_loss_fn = SoftTargetCrossEntropy().cuda()", "tensor_to_device", "replace", False,
      "train_loss_fn = SoftTargetCrossEntropy().npu()", TIMM_LOSS_NOTE),
    C("train_loss_fn = LabelSmoothingCrossEntropy(smoothing=args.smoothing).cuda()", "tensor_to_device", "replace", False,
      "train_loss_fn = LabelSmoothingCrossEntropy(smoothing=args.smoothing).npu()", TIMM_LOSS_NOTE),
    C("train_loss_fn = nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False,
      "train_loss_fn = nn.CrossEntropyLoss().npu()", TIMM_LOSS_NOTE),
    C("validate_loss_fn = nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False,
      "validate_loss_fn = nn.CrossEntropyLoss().npu()", TIMM_LOSS_NOTE),
    C("input, target = input.cuda(), target.cuda()", "tensor_to_device", "replace", True,
      "input, target = input.npu(non_blocking=True), target.npu(non_blocking=True)",
      "batch transfer to CUDA fails on an NPU host (this path is taken once the prefetcher is off)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize() raises without CUDA"),
    C("=input = input.cuda()", "tensor_to_device", "replace", True, "input = input.npu()", "batch transfer to CUDA"),
    C("=target = target.cuda()", "tensor_to_device", "replace", True, "target = target.npu()", "batch transfer to CUDA"),
    C("torch.cuda.synchronize()  # make sure the reduced metrics", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # make sure the reduced metrics are ready before timing", "torch.cuda.synchronize() raises without CUDA"),
  ])

E("cvb_tnt_model", "tnt_pytorch/tnt.py", "explicit_replacement",
  "CV-Backbones TNT model definition (timm-registered Transformer-iN-Transformer) - device-agnostic", [])

E("cvb_ghostnet_validate", "ghostnet_pytorch/validate.py", "explicit_replacement",
  "CV-Backbones GhostNet ImageNet validation (timm validate.py fork: --num-gpu DataParallel, apex/native AMP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("args.prefetcher = not args.no_prefetcher", "torch_cuda_api", "replace", True,
      "args.no_prefetcher, args.prefetcher = True, False  # timm's PrefetchLoader is CUDA-only",
      "timm <= 0.4 PrefetchLoader hard-codes torch.cuda.Stream/.cuda() (from timm's source); both flags are set because "
      "the loop below tests args.no_prefetcher"),
    C("amp_autocast = torch.cuda.amp.autocast", "amp", "replace", True, "amp_autocast = torch.npu.amp.autocast",
      "torch.cuda.amp.autocast disables itself without CUDA, so --amp silently validates in fp32"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "moves the model to CUDA"),
    C("model = torch.nn.DataParallel(model, device_ids=list(range(args.num_gpu)))", "distributed_framework", "replace", True,
      "raise ValueError('--num-gpu > 1 needs nn.DataParallel, which is not supported on NPU')",
      "torch.nn.DataParallel is marked unsupported (✘) on Ascend (only reached with --num-gpu > 1)"),
    C("criterion = nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False, "criterion = nn.CrossEntropyLoss().npu()",
      TIMM_LOSS_NOTE),
    C("input = torch.randn((args.batch_size,) + data_config['input_size']).cuda()", "tensor_to_device", "replace", True,
      "input = torch.randn((args.batch_size,) + data_config['input_size']).npu()", "warm-up batch created on CUDA"),
    C("=target = target.cuda()", "tensor_to_device", "replace", True, "target = target.npu()", "batch transfer to CUDA"),
    C("=input = input.cuda()", "tensor_to_device", "replace", True, "input = input.npu()", "batch transfer to CUDA"),
  ])

E("cvb_cmt_model", "cmt_pytorch/cmt.py", "explicit_replacement",
  "CV-Backbones CMT model with a __main__ GPU throughput benchmark (cuda.synchronize timing, autocast)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the file doubles as the benchmark entry script (python cmt.py); needed to register the npu device before torch_npu 2.5.1"),
    C("images = torch.randn(batch_size, 3, img_size, img_size).cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "images = torch.randn(batch_size, 3, img_size, img_size).npu(non_blocking=True)", "benchmark input created on CUDA"),
    C("with torch.cuda.amp.autocast(enabled=amp):  # same precision", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=amp):  # same precision as the timed loop",
      "torch.cuda.amp.autocast disables itself without CUDA; --amp numbers would silently be fp32"),
    C("torch.cuda.synchronize()  # drain the warmup", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # drain the warmup kernels before starting the clock",
      "torch.cuda.synchronize() raises without CUDA; NPU kernels are async too, so timing needs the NPU sync"),
    C("=with torch.cuda.amp.autocast(enabled=amp):", "amp", "replace", True, "with torch.npu.amp.autocast(enabled=amp):",
      "torch.cuda.amp.autocast disables itself without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize() raises without CUDA"),
    C("model = globals()[args.model](img_size=args.img_size).cuda()", "tensor_to_device", "replace", True,
      "model = globals()[args.model](img_size=args.img_size).npu()", "moves the model to CUDA"),
    C("torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", True,
      "print('device: {} ({})'.format(torch.npu.get_device_name(0), 'amp' if args.amp else 'fp32'))",
      "torch.cuda.get_device_name raises without CUDA"),
    C("imgs_per_sec, torch.cuda.max_memory_allocated() / 1024 ** 2))", "torch_cuda_api", "replace", True,
      "imgs_per_sec, torch.npu.max_memory_allocated() / 1024 ** 2))",
      "returns 0 without an initialised CUDA context instead of failing, so the benchmark silently reports 0 MB peak memory"),
  ])

E("cvb_tnt_train_sh", "tnt_pytorch/scripts/train_tnt_s.sh", "explicit_replacement",
  "CV-Backbones TNT-S multi-node launcher (torch.distributed.launch, NCCL_* tuning, CUDA_VISIBLE_DEVICES)", [
    C("=set -x", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before torch_npu/HCCL can load"),
    C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=eth0",
      "HCCL ignores NCCL_*; on multi-NIC multi-node hosts HCCL may otherwise pick a NIC that cannot reach the root node"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
      "no HCCL counterpart (HCCL uses the NPU's own RoCE ports); silently ignored"),
    C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
      "debug logging only; level mapping unconfirmed"),
  ])

E("cvb_cmt_config", "cmt_pytorch/configs/cmt_s.yaml", "explicit_replacement",
  "CV-Backbones CMT-S timm-style YAML training config (amp, channels_last, dist backend)", [
    C("channels_last: true", "unsupported_op_workaround", "replace", False, "channels_last: false",
      "msFmkTransplt docs list channels_last as unsupported on NPU (use contiguous); unconfirmed whether it errors or only slows down"),
    C("dist_backend: nccl", "dist_backend", "replace", True, "dist_backend: hccl",
      "the YAML overrides train.py's --dist-backend default, so NCCL would still be requested"),
  ])

E("cvb_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "CV-Backbones training Dockerfile (pytorch CUDA base image, NVIDIA apex --cuda_ext build)", [
    C("FROM pytorch/pytorch:1.8.1-cuda11.1-cudnn8-devel", "device_type", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA base image; an Ascend image with CANN is needed (tag illustrative, not checked)"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0"', "env_var", "removal", False, None,
      "CUDA arch list only affects nvcc builds; meaningless on Ascend"),
    C("RUN git clone https://github.com/NVIDIA/apex /opt/apex", "custom_cuda_extension", "replace", True,
      "RUN git clone https://gitee.com/ascend/apex /opt/apex && cd /opt/apex && \\",
      "NVIDIA apex CUDA extensions cannot build without nvcc; Ascend's apex patch is built from its own repo"),
    C('--global-option="--cuda_ext" ./', "custom_cuda_extension", "replace", True,
      "bash scripts/build.sh --python=3.10 && pip install apex/dist/apex-*.whl",
      "--cuda_ext requires CUDA_HOME/nvcc; Ascend apex is built with its scripts/build.sh"),
    C("RUN pip install --no-cache-dir timm==0.4.12 pyyaml tensorboardX thop", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torch-npu==2.1.0.post10",
      "CANN base image has no torch; install CPU torch plus the matching torch_npu wheel"),
    C("torch.version.cuda, torch.backends.cudnn.version()", "torch_cuda_api", "replace", False,
      "RUN python -c \"import torch, torch_npu; print(torch.__version__, torch_npu.__version__, torch.npu.is_available())\"",
      "prints None/None on an NPU image instead of failing; the check should look at torch_npu"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "NVIDIA container-runtime variable; Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES (devices are usually passed at docker run)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container-runtime variable; ignored on Ascend"),
  ])

CKPT_NOTE = ("checkpoint was saved from CUDA tensors; torch.load without map_location fails to deserialize them on a host "
             "without CUDA")
E("addernet_adder", "adder.py", "kernel_rewrite",
  "AdderNet adder.py with the L1-distance convolution bound to a compiled CUDA extension (adder_cuda)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the NPU extension links against torch_npu, which has to be loaded first; the __main__ check also runs on npu"),
    C("=import adder_cuda", "custom_cuda_extension", "replace", True,
      "import adder_npu  # Ascend C port of the adder kernels, built with NpuExtension",
      "the nvcc-built extension cannot exist on an Ascend host; ImportError at module import"),
    C("output = adder_cuda.forward(X, W, stride, padding)", "custom_cuda_extension", "replace", True,
      "output = adder_npu.forward(X, W, stride, padding)", "call site of the CUDA kernel"),
    C("grad_X = adder_cuda.backward_input(grad_output, X, W, ctx.stride, ctx.padding)", "custom_cuda_extension", "replace", True,
      "grad_X = adder_npu.backward_input(grad_output, X, W, ctx.stride, ctx.padding)", "call site of the CUDA kernel"),
    C("grad_W = adder_cuda.backward_weight(grad_output, X, W, ctx.stride, ctx.padding)", "custom_cuda_extension", "replace", True,
      "grad_W = adder_npu.backward_weight(grad_output, X, W, ctx.stride, ctx.padding)", "call site of the CUDA kernel"),
    C("x = torch.randn(4, 16, 8, 8).cuda().requires_grad_()", "tensor_to_device", "replace", True,
      "x = torch.randn(4, 16, 8, 8).npu().requires_grad_()", "kernel self-check input on CUDA"),
    C("layer = adder2d(16, 32, 3, stride=1, padding=1).cuda()", "tensor_to_device", "replace", True,
      "layer = adder2d(16, 32, 3, stride=1, padding=1).npu()", "kernel self-check layer on CUDA"),
  ])

E("addernet_setup", "adder_cuda/setup.py", "kernel_rewrite",
  "AdderNet CUDA extension build script (torch.utils.cpp_extension.CUDAExtension, nvcc gencode flags)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "CUDAExtension needs CUDA_HOME/nvcc; torch_npu.utils.cpp_extension.NpuExtension adds the torch_npu/ACL include and lib paths"),
    C("=CUDAExtension(", "custom_cuda_extension", "replace", True, "NpuExtension(", "build the NPU extension instead"),
    C("=name='adder_cuda',", "custom_cuda_extension", "replace", True, "name='adder_npu',",
      "module name imported by adder.py after the port"),
    C("'adder_cuda.cpp',", "custom_cuda_extension", "replace", True, "'adder_npu.cpp',",
      "the pybind binding checks is_cuda() and calls the CUDA launchers; it is rewritten to call the Ascend C kernels"),
    C("'adder_cuda_kernel.cu',", "custom_cuda_extension", "replace", True, "'adder_npu_kernel.cpp',",
      ".cu source cannot be compiled; the kernel must be rewritten in Ascend C (the kernel itself is not part of this probe)"),
    C("'nvcc': ['-O3', '--use_fast_math'", "custom_cuda_extension", "removal", False, None,
      "nvcc flags; only the 'cxx' entry is used for a non-CUDA extension (believed ignored, unconfirmed)"),
    C("'-gencode=arch=compute_75,code=sm_75'],", "custom_cuda_extension", "removal", False, None,
      "continuation of the nvcc flag list"),
  ])

E("addernet_main", "main.py", "explicit_replacement",
  "AdderNet CIFAR-10 ResNet-20 training script (.cuda() everywhere, CUDA_VISIBLE_DEVICES from --gpus)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpus", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpus",
      "device selection via CUDA_VISIBLE_DEVICES is ignored on Ascend"),
    C("num_workers=8, pin_memory=True)", "pin_memory", "replace", False,
      "data_train_loader = DataLoader(data_train, batch_size=args.batch_size, shuffle=True, num_workers=8, pin_memory=True, pin_memory_device='npu')",
      "performance only: pinning silently skipped without CUDA unless pin_memory_device is given (unconfirmed for torch_npu)"),
    C("net = torch.nn.DataParallel(net)", "distributed_framework", "replace", True,
      "raise ValueError('multi-device training needs DDP on NPU; nn.DataParallel is unsupported')",
      "torch.nn.DataParallel is marked unsupported (✘) on Ascend (reached with several --gpus)"),
    C("net = net.cuda()", "tensor_to_device", "replace", True, "net = net.npu()", "moves the model to CUDA"),
    C("criterion = torch.nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False,
      "criterion = torch.nn.CrossEntropyLoss().npu()", TIMM_LOSS_NOTE),
    C("ckpt = torch.load(args.resume)", "device_type", "replace", True, "ckpt = torch.load(args.resume, map_location='cpu')",
      CKPT_NOTE + " (checkpoints written by this script on GPU)"),
    C("images, labels = Variable(images).cuda(), Variable(labels).cuda()", "tensor_to_device", "replace", True,
      "images, labels = images.npu(non_blocking=True), labels.npu(non_blocking=True)", "batch transfer to CUDA"),
    C("images, labels = images.cuda(), labels.cuda()", "tensor_to_device", "replace", True,
      "images, labels = images.npu(), labels.npu()", "batch transfer to CUDA"),
  ])

E("addernet_resnet20", "resnet20.py", "explicit_replacement",
  "AdderNet ResNet-20 built from adder2d layers - device-agnostic", [])

E("addernet_test", "test.py", "explicit_replacement",
  "AdderNet checkpoint evaluation (DataParallel-wrapped model, GPU-saved .pth, pinned loader)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("model = torch.nn.DataParallel(model).cuda()", "distributed_framework", "replace", True, "model = model.npu()",
      "nn.DataParallel is marked unsupported (✘) on Ascend and .cuda() fails; evaluation runs on one NPU"),
    C("checkpoint = torch.load(args.model_dir)", "device_type", "replace", True,
      "checkpoint = torch.load(args.model_dir, map_location='cpu')", CKPT_NOTE + " (released .pth files)"),
    C("model.load_state_dict(checkpoint)", "distributed_framework", "replace", True,
      "model.load_state_dict({k.replace('module.', '', 1): v for k, v in checkpoint.items()})",
      "the released state_dict keys carry DataParallel's 'module.' prefix; once the wrapper is dropped strict loading fails"),
    C("num_workers=args.workers, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=args.workers, pin_memory=True, pin_memory_device='npu')",
      "performance only: pinning silently skipped without CUDA unless pin_memory_device is given (unconfirmed for torch_npu)"),
    C("images = images.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "images = images.npu(non_blocking=True)", "batch transfer to CUDA"),
    C("target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(non_blocking=True)", "batch transfer to CUDA"),
  ])

E("ipt_main", "main.py", "explicit_replacement",
  "Pretrained-IPT main.py (EDSR-style entry: loads the released IPT weights and runs Trainer.test)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("state_dict = torch.load(args.pretrain)", "device_type", "replace", True,
      "state_dict = torch.load(args.pretrain, map_location='cpu')",
      CKPT_NOTE + " (assuming the released IPT_*.pt weights hold CUDA tensors)"),
  ])

E("ipt_option", "option.py", "explicit_replacement",
  "Pretrained-IPT option.py (EDSR argparse: --cpu, --n_GPUs, --precision) - nothing to change", [])

DP_FUNC_NOTE = ("torch.nn.parallel.data_parallel is the functional form of nn.DataParallel (✘ on Ascend) and scatters via "
                "the CUDA comm path (torch.cuda.comm.scatter/gather ✘) even for one device; call the model directly, the "
                "tiles are already on the device")
E("ipt_model_init", "model/__init__.py", "explicit_replacement",
  "Pretrained-IPT model/__init__.py (EDSR Model wrapper: device from --cpu, P.data_parallel, forward_chop tiling)", [
    C("self.device = torch.device('cpu' if args.cpu else 'cuda')", "device_type", "replace", True,
      "self.device = torch.device('cpu' if args.cpu else 'npu')", "model is moved to this device; 'cuda' fails on an NPU host"),
    C("return P.data_parallel(self.model, x, range(self.n_GPUs))", "distributed_framework", "replace", True,
      "return self.model(x)  # DataParallel is unsupported on NPU; use DDP for multi-NPU training",
      "training with --n_GPUs > 1 goes through data_parallel, which is unsupported (✘) on Ascend"),
    C("=kwargs = {}", "device_type", "replace", True, "kwargs = {'map_location': lambda storage, loc: storage}",
      "map_location is only set for --cpu; resuming (--resume -1/N) then deserializes CUDA-saved checkpoints, which fails on an NPU host"),
    C("y_hw_cut = self.model.forward(x_hw_cut.cuda()).cpu()", "tensor_to_device", "replace", True,
      "y_hw_cut = self.model.forward(x_hw_cut.to(self.device)).cpu()", "hard-coded .cuda() in the tiling path"),
    C("=x_unfold.cuda()", "tensor_to_device", "removal", True, None,
      "result is discarded (a no-op copy on GPU), but .cuda() itself raises on an NPU host"),
    C("y_unfold.append(P.data_parallel(self.model, x_unfold[", "distributed_framework", "replace", True,
      "y_unfold.append(self.model(x_unfold[i * batchsize:(i + 1) * batchsize, ...]).cpu())", DP_FUNC_NOTE),
    C("return y.cuda()", "tensor_to_device", "replace", True, "return y.to(self.device)", "hard-coded .cuda() on the stitched output"),
    C("=x_h_cut_unfold.cuda()", "tensor_to_device", "removal", True, None,
      "result is discarded, but .cuda() raises on an NPU host"),
    C("y_h_cut_unfold.append(P.data_parallel(", "distributed_framework", "replace", True,
      "y_h_cut_unfold.append(self.model(x_h_cut_unfold[i * batchsize:(i + 1) * batchsize, ...]).cpu())", DP_FUNC_NOTE),
    C("=x_w_cut_unfold.cuda()", "tensor_to_device", "removal", True, None,
      "result is discarded, but .cuda() raises on an NPU host"),
    C("y_w_cut_unfold.append(P.data_parallel(", "distributed_framework", "replace", True,
      "y_w_cut_unfold.append(self.model(x_w_cut_unfold[i * batchsize:(i + 1) * batchsize, ...]).cpu())", DP_FUNC_NOTE),
  ])

E("ipt_trainer", "trainer.py", "explicit_replacement",
  "Pretrained-IPT trainer.py (EDSR Trainer with derain/denoise branches, cuda.synchronize runtime timing)", [
    C("noise = torch.randn(hr.size()).mul_(noisy_level).cuda()", "tensor_to_device", "replace", True,
      "noise = torch.randn(hr.size()).mul_(noisy_level).to(hr.device)", "denoising noise created on CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize() raises without CUDA"),
    C("torch.cuda.synchronize()  # forward_chop is asynchronous", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # forward_chop is asynchronous, wait before stopping the clock",
      "torch.cuda.synchronize() raises without CUDA; NPU execution is asynchronous as well"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op when CUDA was never initialised; only frees cached memory"),
    C("device = torch.device('cpu' if self.args.cpu else 'cuda')", "device_type", "replace", True,
      "device = torch.device('cpu' if self.args.cpu else 'npu')", "every test batch is moved to this device"),
  ])

E("ipt_utility", "utility.py", "explicit_replacement",
  "Pretrained-IPT utility.py (EDSR checkpoint/timer/PSNR/optimizer helpers)", [
    C("self.load_state_dict(torch.load(self.get_dir(load_dir)))", "device_type", "replace", True,
      "self.load_state_dict(torch.load(self.get_dir(load_dir), map_location='cpu'))",
      "optimizer state (Adam moments) was saved from CUDA tensors; reached when resuming with --load"),
  ])

E("ipt_data_init", "data/__init__.py", "explicit_replacement",
  "Pretrained-IPT data/__init__.py (DataLoaders with pin_memory=not args.cpu)", [
    C("=pin_memory=not args.cpu,", "pin_memory", "replace", False,
      "pin_memory=not args.cpu, pin_memory_device='npu' if not args.cpu else '',",
      "performance only: pinning silently skipped without CUDA unless pin_memory_device is given (unconfirmed for torch_npu)"),
    C("shuffle=False, pin_memory=not args.cpu, num_workers=args.n_threads,", "pin_memory", "replace", False,
      "shuffle=False, pin_memory=not args.cpu, pin_memory_device='npu' if not args.cpu else '', num_workers=args.n_threads,",
      "performance only (unconfirmed for torch_npu)"),
  ])

E("dynabert_latency", "tools/benchmark_latency.py", "explicit_replacement",
  "DynaBERT sub-network latency benchmark (cuda.Event timing, device properties, capability-gated fp16)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize() raises without CUDA"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created on an NPU host; torch.npu.Event is the counterpart"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created on an NPU host"),
    C("torch.cuda.synchronize()  # elapsed_time needs", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # elapsed_time needs both events to have completed", "torch.cuda.synchronize() raises without CUDA"),
    C("device = torch.device('cuda:0')", "device_type", "replace", True, "device = torch.device('npu:0')",
      "hard-coded CUDA device"),
    C("props = torch.cuda.get_device_properties(device)", "torch_cuda_api", "replace", True,
      "props = torch.npu.get_device_properties(device)",
      "raises without CUDA; the NPU properties carry name and total_memory (used below) but no major/minor"),
    C("use_fp16 = not args.fp32 and torch.cuda.get_device_capability(device)[0] >= 7", "device_capability_check", "replace", True,
      "use_fp16 = not args.fp32  # Ascend NPUs run fp16 natively; get_device_capability() has no sm_XX meaning there",
      "torch.cuda.get_device_capability fails without CUDA, and the NPU version returns None unless TORCH_NPU_DEVICE_CAPABILITY is set, so [0] would fail too"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(device)", "the CUDA allocator binding is missing on an NPU host (raises)"),
    C("peak_mb = torch.cuda.max_memory_allocated(device) / 1024 ** 2", "torch_cuda_api", "replace", True,
      "peak_mb = torch.npu.max_memory_allocated(device) / 1024 ** 2",
      "returns 0 without an initialised CUDA context, so latency.json silently records 0 MB peak memory"),
  ])
