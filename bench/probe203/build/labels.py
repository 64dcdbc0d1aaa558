# Labels for probe203 (learned multi-view stereo / depth fusion, CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit. See README.md for the policy.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# Notes reused below
CUDNN_FLAG = ("cudnn flag: listed as supported (no-op) in Ascend's 2.7.1 API table; harmless on NPU, "
              "dropped for clarity")
EMPTY_CACHE = ("torch.cuda.empty_cache() is a silent no-op when CUDA was never initialised; NPU cache is not "
               "released (memory headroom only)")
SEED_CUDA = ("torch.cuda seeding is lazy/queued and never reaches the NPU generator: silently leaves NPU RNG "
             "unseeded (reproducibility)")
SYNC_CUDA = "torch.cuda.synchronize() initialises CUDA and raises on a host without CUDA"
IMPORT_ENTRY = ("entry script: the corpus targets torch 2.1.0 + torch-npu 2.1.0.postN, which predates "
                "backend autoload (2.5.1), so torch_npu must be imported before .npu()/torch.npu are used")
DP_NOTE = ("torch.nn.DataParallel is marked unsupported (x) in Ascend's 2.7.1 list and the msFmkTransplt docs; "
           "single NPU (or DDP). DataParallel-era checkpoints then need their 'module.' prefix stripped")
SET_ENV = "CANN environment must be sourced before python, otherwise libascendcl/libhccl are not found"
AVGPOOL3D = ("F.avg_pool3d is x in Ascend's 2.7.1 table and in the mstt unsupported list, yet op-plugin has an "
             "avg_pool3d kernel: unconfirmed; a 4-tap conv3d/sum of shifted slices avoids the question")

# ---------------------------------------------------------------------------------------------
# MVSNet_pytorch (xy-guo)
# ---------------------------------------------------------------------------------------------
E("mvsnet_train", "MVSNet_pytorch/train.py", "explicit_replacement",
  "MVSNet_pytorch train.py (DataParallel + model.cuda(), tocuda, profile mode)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        IMPORT_ENTRY + "; the ported profiler line also names torch_npu"),
      C("cudnn.benchmark = True", "torch_cuda_api", "removal", False, None, CUDNN_FLAG),
      C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", True,
        "torch.npu.manual_seed(args.seed)", SEED_CUDA),
      C("model = nn.DataParallel(model)", "unsupported_op_workaround", "replace", True,
        "model = model  # nn.DataParallel is unsupported on Ascend; use torchrun + DDP for multi-NPU", DP_NOTE),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
        "Module.cuda() fails without CUDA"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        EMPTY_CACHE),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        SYNC_CUDA + " (profile mode)"),
      C("torch.cuda.synchronize()  # wait for the kernels", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for the kernels before reading the clock", SYNC_CUDA + " (profile mode)"),
      C("torch.autograd.profiler.profile(enabled=True, use_cuda=True)", "torch_cuda_api", "replace", True,
        "with torch_npu.profiler.profile(activities=[torch_npu.profiler.ProfilerActivity.CPU, "
        "torch_npu.profiler.ProfilerActivity.NPU]) as prof:",
        "use_cuda=True profiling needs CUDA/CUPTI; NPU kernels are only visible to torch_npu.profiler "
        "(export_chrome_trace exists there)"),
  ])

E("mvsnet_module", "MVSNet_pytorch/models/module.py", "explicit_replacement",
  "MVSNet_pytorch models/module.py (homo_warping with grid_sample, depth_regression)", [
      C("prob_volume_sum4 = 4 * F.avg_pool3d(", "unsupported_op_workaround", "replace", False,
        "prob_volume_sum4 = 4 * F.conv3d(F.pad(prob_volume.unsqueeze(1), pad=(0, 0, 0, 0, 1, 2)), "
        "prob_volume.new_full((1, 1, 4, 1, 1), 0.25)).squeeze(1)", AVGPOOL3D),
      C("imgs = item[\"imgs\"][:, :, :, ::4, ::4].cuda()", "tensor_to_device", "replace", True,
        "imgs = item[\"imgs\"][:, :, :, ::4, ::4].npu()", "debug __main__ block; .cuda() fails without CUDA"),
      C("proj_matrices = item[\"proj_matrices\"].cuda()", "tensor_to_device", "replace", True,
        "proj_matrices = item[\"proj_matrices\"].npu()", "debug __main__ block"),
      C("mask = item[\"mask\"].cuda()", "tensor_to_device", "replace", True,
        "mask = item[\"mask\"].npu()", "debug __main__ block"),
      C("depth = item[\"depth\"].cuda()", "tensor_to_device", "replace", True,
        "depth = item[\"depth\"].npu()", "debug __main__ block"),
      C("depth_values = item[\"depth_values\"].cuda()", "tensor_to_device", "replace", True,
        "depth_values = item[\"depth_values\"].npu()", "debug __main__ block"),
  ])

E("mvsnet_utils", "MVSNet_pytorch/utils.py", "explicit_replacement",
  "MVSNet_pytorch utils.py (make_recursive_func / tocuda helpers, metrics)", [
      C("return vars.cuda()", "tensor_to_device", "replace", True, "return vars.npu()",
        "tocuda() moves every batch tensor; the helper name itself can stay"),
  ])

E("mvsnet_eval", "MVSNet_pytorch/eval.py", "explicit_replacement",
  "MVSNet_pytorch eval.py (depth inference + numpy photometric/geometric filtering)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
      C("cudnn.benchmark = True", "torch_cuda_api", "removal", False, None, CUDNN_FLAG),
      C("model = nn.DataParallel(model)", "unsupported_op_workaround", "replace", True,
        "model = model  # no DataParallel on Ascend", DP_NOTE + " (the released GPU checkpoint has them)"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda() fails without CUDA"),
      C("state_dict = torch.load(args.loadckpt)", "tensor_to_device", "replace", True,
        "state_dict = torch.load(args.loadckpt, map_location='cpu')",
        "checkpoints saved from CUDA tensors cannot be deserialised without map_location when CUDA is absent"),
  ])

# ---------------------------------------------------------------------------------------------
# CasMVSNet (alibaba/cascade-stereo)
# ---------------------------------------------------------------------------------------------
E("cas_train", "CasMVSNet/train.py", "explicit_replacement",
  "cascade-stereo CasMVSNet train.py (torch.distributed.launch, nccl, optional NVIDIA apex)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
      C("cudnn.benchmark = True", "torch_cuda_api", "removal", False, None, CUDNN_FLAG),
      C("parser.add_argument('--device', default='cuda'", "device_type", "replace", True,
        "parser.add_argument('--device', default='npu', help='select model')",
        "default feeds torch.device(args.device) / model.to(device)"),
      C("from apex.parallel import DistributedDataParallel as DDP", "distributed_framework", "removal", False, None,
        "only with --using_apex; NVIDIA apex CUDA build is unavailable (Ascend apex patch or native DDP instead)"),
      C("from apex.fp16_utils import *", "amp", "removal", False, None, "only with --using_apex"),
      C("from apex import amp, optimizers", "amp", "replace", False,
        "from torch.npu.amp import autocast, GradScaler",
        "only with --using_apex; prefer torch.npu.amp (or Ascend's patched apex)"),
      C("from apex.multi_tensor_apply import multi_tensor_applier", "fused_optimizer", "removal", False, None,
        "only with --using_apex; multi_tensor_applier relies on the amp_C CUDA extension"),
      C("with amp.scale_loss(loss, optimizer) as scaled_loss:", "amp", "replace", False,
        "with torch.npu.amp.autocast():  # + GradScaler.scale(loss).backward()",
        "only with --using_apex and distributed"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
      C("backend=\"nccl\", init_method=\"env://\"", "dist_backend", "replace", True,
        "backend=\"hccl\", init_method=\"env://\"", "NCCL is not available on Ascend; HCCL is"),
      C("=import apex", "distributed_framework", "removal", False, None, "only with --sync_bn"),
      C("model = apex.parallel.convert_syncbn_model(model)", "distributed_framework", "replace", False,
        "model = nn.SyncBatchNorm.convert_sync_batchnorm(model)",
        "only with --sync_bn; torch SyncBatchNorm is supported on NPU"),
      C("model, optimizer = amp.initialize(model, optimizer,", "amp", "removal", False, None,
        "only with --using_apex"),
      C("print(\"Dist Train, Let's use\", torch.cuda.device_count(), \"GPUs!\")", "torch_cuda_api", "replace", False,
        "print(\"Dist Train, Let's use\", torch.npu.device_count(), \"NPUs!\")",
        "log line only: device_count() returns 0 without CUDA"),
  ])

E("cas_utils", "CasMVSNet/utils.py", "explicit_replacement",
  "cascade-stereo utils.py (tocuda, reduce_scalar_outputs, set_random_seed)", [
      C("return vars.to(torch.device(\"cuda\"))", "device_type", "replace", True,
        "return vars.to(torch.device(\"npu\"))", "hard-coded cuda device in the batch transfer helper"),
      C("scalars.append(torch.tensor(scalar_outputs[k], device='cuda'))", "device_type", "replace", True,
        "scalars.append(torch.tensor(scalar_outputs[k], device='npu'))",
        "non-tensor scalars are materialised on cuda before dist.reduce"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", True, "torch.npu.manual_seed_all(seed)",
        SEED_CUDA),
  ])

E("cas_module", "CasMVSNet/models/module.py", "explicit_replacement",
  "cascade-stereo models/module.py (Conv/Deconv wrappers, FPN, homo_warping, depth range sampling)", [])

E("cas_model", "CasMVSNet/models/cas_mvsnet.py", "explicit_replacement",
  "cascade-stereo models/cas_mvsnet.py (DepthNet variance volume, photometric confidence)", [
      C("prob_volume_sum4 = 4 * F.avg_pool3d(", "unsupported_op_workaround", "replace", False,
        "prob_volume_sum4 = 4 * F.conv3d(F.pad(prob_volume.unsqueeze(1), pad=(0, 0, 0, 0, 1, 2)), "
        "prob_volume.new_full((1, 1, 4, 1, 1), 0.25)).squeeze(1)", AVGPOOL3D),
  ])

E("cas_test", "CasMVSNet/test.py", "explicit_replacement",
  "cascade-stereo test.py (depth inference, multiprocessing numpy filter, optional gipuma)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
      C("cudnn.benchmark = True", "torch_cuda_api", "removal", False, None, CUDNN_FLAG),
      C("model = nn.DataParallel(model)", "unsupported_op_workaround", "replace", True,
        "model = model  # no DataParallel on Ascend",
        "torch.nn.DataParallel is unsupported on Ascend (weights are loaded before wrapping, so no prefix issue)"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda() fails without CUDA"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", SYNC_CUDA),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
  ])

E("cas_gipuma", "CasMVSNet/gipuma.py", "explicit_replacement",
  "cascade-stereo gipuma.py (dmb conversion + fusibile CUDA binary via os.system)", [
      C("=os.system(cmd)", "custom_cuda_extension", "replace", True,
        "raise RuntimeError('fusibile is a CUDA-only binary; use --filter_method normal (CPU) on Ascend')",
        "fusibile needs an NVIDIA GPU; on an NPU host os.system returns non-zero silently and the scan later "
        "fails on consis_folders[-1]; no NPU build exists"),
  ])

E("cas_train_sh", "CasMVSNet/scripts/train.sh", "explicit_replacement",
  "cascade-stereo scripts/train.sh (torch.distributed.launch launcher)", [
      C("=#!/usr/bin/env bash", "env_var", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV),
      C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: device selection silently lost"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
        "NCCL variable is a no-op under HCCL; logging only"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only knob, no effect with HCCL"),
  ])

E("cas_test_sh", "CasMVSNet/scripts/test_dtu.sh", "explicit_replacement",
  "cascade-stereo scripts/test_dtu.sh (DTU eval with gipuma/fusibile fusion)", [
      C("=#!/usr/bin/env bash", "env_var", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV),
      C("export CUDA_VISIBLE_DEVICES=0", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=0",
        "ignored by the Ascend runtime"),
      C("--filter_method gipuma --fusibile_exe_path $FUSIBILE_EXE_PATH", "custom_cuda_extension", "replace", True,
        "    --filter_method normal \\",
        "gipuma path shells out to the CUDA-only fusibile binary; use the numpy filter"),
  ])

E("cas_req", "CasMVSNet/requirements.txt", "explicit_replacement",
  "CasMVSNet requirements with CUDA 11.3 wheel index", [
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "device_type", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "torch_npu pairs with the CPU torch build on x86 (aarch64 uses plain PyPI); whether a CUDA build "
        "breaks torch_npu is unconfirmed"),
      C("torch==1.10.1+cu113", "device_type", "replace", True, "torch==2.1.0",
        "no torch_npu for torch 1.10 and +cu113 is a CUDA build; torch-npu wheel must equal the torch version"),
      C("torchvision==0.11.2+cu113", "device_type", "replace", True, "torchvision==0.16.0",
        "must match torch 2.1.0"),
      C("numpy==1.21.6", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "torch-npu pin next to the torch pins (the torch lines themselves are replaced)"),
  ])

# ---------------------------------------------------------------------------------------------
# MVSFormer / MVSFormer++ (ewrfcas)
# ---------------------------------------------------------------------------------------------
E("mvsf_train", "MVSFormer/train.py", "explicit_replacement",
  "MVSFormer train.py (pytorch-template ConfigParser, mp.spawn DDP, nccl)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
      C("torch.cuda.manual_seed(SEED)", "torch_cuda_api", "replace", True, "torch.npu.manual_seed(SEED)", SEED_CUDA),
      C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
        "torch.use_deterministic_algorithms(True)",
        "cudnn flag has no effect on NPU kernels; whether NPU honours use_deterministic_algorithms for every op "
        "is unconfirmed"),
      C("torch.backends.cudnn.benchmark = False", "torch_cuda_api", "removal", False, None, CUDNN_FLAG),
      C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)",
        "raises without CUDA"),
      C("dist.init_process_group(backend='nccl'", "dist_backend", "replace", True,
        "dist.init_process_group(backend='hccl', init_method='env://', world_size=args.world_size, rank=rank)",
        "NCCL unavailable on Ascend"),
      C("major, minor = torch.cuda.get_device_capability(gpu)", "device_capability_check", "replace", True,
        "major, minor = (8, 0) if torch.npu.is_bf16_supported() else (0, 0)",
        "get_device_capability raises without CUDA (returns None even under transfer_to_npu); ask bf16 support "
        "directly"),
      C("=model.to(gpu)", "tensor_to_device", "replace", True, "model.to(f'npu:{gpu}')",
        "an int device in Module.to() means cuda:<int>"),
      C("os.environ[\"CUDA_VISIBLE_DEVICES\"] = args.device", "env_var", "replace", True,
        "os.environ[\"ASCEND_RT_VISIBLE_DEVICES\"] = args.device",
        "-d/--device selection silently ignored otherwise (effect of setting it after import unconfirmed)"),
      C("args.gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "args.gpus = torch.npu.device_count()",
        "returns 0 without CUDA: mp.spawn(nprocs=0) / rank math silently wrong"),
  ])

E("mvsf_trainer", "MVSFormer/trainer/mvsformer_trainer.py", "explicit_replacement",
  "MVSFormer trainer (torch.cuda.amp autocast/GradScaler, DDP reduce, CUDA-event timing)", [
      C("from torch.cuda.amp import autocast, GradScaler", "amp", "replace", True,
        "from torch.npu.amp import autocast, GradScaler",
        "torch.cuda.amp autocast/GradScaler silently disable themselves without CUDA: NPU runs fp32 and the "
        "scaler does nothing; fixing the import fixes every call site"),
      C("mem_gb = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
        "mem_gb = torch.npu.max_memory_allocated() / 1024 ** 3", "log value only (reports 0 without CUDA)"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
      C("start_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start_event = torch.npu.Event(enable_timing=True)", "CUDA events raise without CUDA"),
      C("end_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end_event = torch.npu.Event(enable_timing=True)", "CUDA events raise without CUDA"),
  ])

E("mvsf_base_trainer", "MVSFormer/base/base_trainer.py", "explicit_replacement",
  "pytorch-template BaseTrainer as used by MVSFormer (_prepare_device, checkpoints)", [
      C("self.model = torch.nn.DataParallel(model, device_ids=device_ids)", "unsupported_op_workaround", "replace",
        False, "self.model = model  # DataParallel unsupported on Ascend; use --DDP",
        "DataParallel is unsupported on Ascend, but train.py forces n_gpu=1 outside DDP so this branch is "
        "unreachable in this repo"),
      C("self.device = torch.device('cuda', torch.cuda.current_device())", "device_type", "replace", True,
        "self.device = torch.device('npu', torch.npu.current_device())", "DDP path; raises without CUDA"),
      C("self.logger.info(\"Training on {} (world size {})\".format(torch.cuda.get_device_name(0),",
        "torch_cuda_api", "replace", True,
        "self.logger.info(\"Training on {} (world size {})\".format(torch.npu.get_device_name(0),",
        "get_device_name raises without CUDA even though it is only logged"),
      C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpu = torch.npu.device_count()",
        "returns 0 without CUDA: silently trains on CPU"),
      C("device = torch.device('cuda:0' if n_gpu_use > 0 else 'cpu')", "device_type", "replace", True,
        "device = torch.device('npu:0' if n_gpu_use > 0 else 'cpu')", "hard-coded cuda device string"),
  ])

E("mvsf_attn", "MVSFormer/models/module/attention.py", "explicit_replacement",
  "MVSFormer++ / DINOv2 attention blocks (xformers, flash-attn 2, SDPA, linear attention)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "ported flash path calls torch_npu.npu_fusion_attention"),
      C("from xformers.ops import memory_efficient_attention, unbind, fmha", "attention_kernel", "removal", False,
        None, "guarded import; the fallback is mathematically identical, npu_fusion_attention would only be faster"),
      C("from flash_attn import flash_attn_func", "attention_kernel", "removal", False, None,
        "guarded import; flash-attn cannot be installed on NPU"),
      C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=False):",
        "disabling CUDA autocast does not disable NPU autocast: the kv-sum would run in fp16 and overflow"),
      C("out = flash_attn_func(q, k, v,", "attention_kernel", "replace", True,
        "out = torch_npu.npu_fusion_attention(q, k, v, q.shape[2], 'BSND', scale=self.softmax_scale, "
        "keep_prob=1.0 - (self.attn_drop if self.training else 0.0))[0]",
        "flash_attn_func is None on NPU; npu_fusion_attention takes the same [B,S,N,D] layout"),
      C("with torch.backends.cuda.sdp_kernel(enable_flash=True", "torch_cuda_api", "replace", False,
        "if True:  # torch.backends.cuda.sdp_kernel is x on Ascend; NPU SDPA picks its FA kernel itself",
        "sdp_kernel is x in Ascend's 2.7.1 list / mstt unsupported list; whether it errors or is a silent "
        "no-op on NPU is unconfirmed"),
      C("if attn_type == \"FLASH2\" and FLASH_AVAILABLE:", "attention_kernel", "replace", True,
        "if attn_type == \"FLASH2\":",
        "without flash-attn the FLASH2 config silently falls back to *linear* attention, a different function "
        "than the softmax attention the released weights were trained with"),
  ])

E("mvsf_config", "MVSFormer/config/mvsformer++.json", "explicit_replacement",
  "MVSFormer++ JSON config (n_gpu, fp16, FLASH2 attention type)", [])

E("mvsf_fusion", "MVSFormer/dynamic_fusion.py", "explicit_replacement",
  "MVSFormer / GBi-Net dynamic point-cloud fusion on GPU tensors", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
      C("parser.add_argument('--device', type=str, default='cuda'", "device_type", "replace", True,
        "parser.add_argument('--device', type=str, default='npu', help='device to run the fusion on')",
        "default device string"),
      C("torch.backends.cuda.matmul.allow_tf32 = False", "torch_cuda_api", "replace", False,
        "torch.npu.matmul.allow_hf32 = False",
        "precision intent: on Ascend the fp32 matmul down-conversion is HF32, controlled by torch.npu.matmul "
        "(default unconfirmed)"),
      C("torch.backends.cudnn.allow_tf32 = False", "torch_cuda_api", "replace", False,
        "torch.npu.conv.allow_hf32 = False", "same for convolutions; unconfirmed default"),
      C("torch.arange(0, height).cuda(), torch.arange(0, width).cuda()", "tensor_to_device", "replace", True,
        "y_ref, x_ref = torch.meshgrid([torch.arange(0, height, device=depth_ref.device), "
        "torch.arange(0, width, device=depth_ref.device)])", ".cuda() fails without CUDA"),
      C("ref_depth_t = torch.from_numpy(ref_depth_est).unsqueeze(0).cuda()", "tensor_to_device", "replace", True,
        "ref_depth_t = torch.from_numpy(ref_depth_est).unsqueeze(0).to(device)", ".cuda() fails without CUDA"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
      C("torch.cuda.get_device_name(device)", "torch_cuda_api", "replace", True,
        "print(\"fusing {} scans on {}\".format(len(scans), torch.npu.get_device_name(device)))",
        "raises without CUDA although only printed"),
      C("torch.cuda.max_memory_allocated() / 1e9", "torch_cuda_api", "replace", False,
        "torch.npu.max_memory_allocated() / 1e9))", "log value only"),
  ])

E("mvsf_test_sh", "MVSFormer/scripts/test_tnt.sh", "explicit_replacement",
  "MVSFormer Tanks&Temples test + dynamic fusion launcher", [
      C("=#!/usr/bin/env bash", "env_var", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV),
      C("export CUDA_VISIBLE_DEVICES=$GPU", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=$GPU",
        "ignored by the Ascend runtime"),
      C("export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512", "env_var", "replace", False,
        "export PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:512",
        "allocator tuning; the CUDA variable is ignored by the NPU caching allocator"),
      C("CUDA_LAUNCH_BLOCKING=${DEBUG:-0} python test.py", "env_var", "replace", False,
        "ASCEND_LAUNCH_BLOCKING=${DEBUG:-0} python test.py --dataset tt --batch_size 1 \\", "debugging aid only"),
      C("--device cuda --test_dataset tank", "device_type", "replace", True,
        "    --device npu --test_dataset tank --photo_threshold 0.3 \\", "explicit cuda device for dynamic_fusion.py"),
  ])

E("mvsf_docker", "MVSFormer/docker/Dockerfile", "explicit_replacement",
  "MVSFormer Dockerfile on nvidia/cuda with xformers, flash-attn and fusibile", [
      C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "device_type", "replace", True,
        "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
        "CUDA base image carries no CANN toolkit; torch_npu needs CANN (and the driver mounted from the host)"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "NVIDIA container runtime variable; Ascend devices are passed with --device /dev/davinciN (or "
        "ASCEND_VISIBLE_DEVICES under Ascend Docker Runtime)"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container runtime variable"),
      C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None, "only read by nvcc builds"),
      C("ENV FORCE_CUDA=1", "env_var", "removal", False, None,
        "forces CUDA extension builds in some setup.py files; meaningless without nvcc"),
      C("RUN pip install torch==2.1.2 torchvision==0.16.2 --index-url https://download.pytorch.org/whl/cu118",
        "device_type", "replace", True,
        "RUN pip install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu && "
        "pip install torch-npu==2.1.0.post12",
        "cu118 build; torch-npu 2.1.0.postN requires torch exactly 2.1.0"),
      C("RUN pip install xformers==0.0.23.post1", "attention_kernel", "removal", True, None,
        "no NPU build; the cu118 wheel would also drag in a CUDA torch and break the torch/torch-npu pairing"),
      C("RUN MAX_JOBS=8 pip install flash-attn==2.3.6 --no-build-isolation", "attention_kernel", "removal", True,
        None, "flash-attn cannot be built/installed on NPU"),
      C("RUN git clone https://github.com/YoYo000/fusibile.git /opt/fusibile", "custom_cuda_extension", "removal",
        True, None, "fusibile is a CUDA program"),
      C("cd /opt/fusibile && cmake . -DCMAKE_BUILD_TYPE=Release && make -j8", "custom_cuda_extension", "removal",
        True, None, "nvcc build fails in a CANN image"),
      C("ENV FUSIBILE_EXE_PATH=/opt/fusibile/fusibile", "custom_cuda_extension", "removal", False, None,
        "dangling once fusibile is gone; harmless"),
  ])

# ---------------------------------------------------------------------------------------------
# TransMVSNet (megvii-research)
# ---------------------------------------------------------------------------------------------
E("trans_fmt", "TransMVSNet/models/FMT.py", "explicit_replacement",
  "TransMVSNet Feature Matching Transformer (LoFTR-style linear attention)", [
      C("@torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)", "amp", "replace", False,
        "@torch.npu.amp.custom_fwd(cast_inputs=torch.float32)",
        "the fp32 cast only triggers under CUDA autocast; TransMVSNet trains in fp32, so it matters only if NPU "
        "AMP is switched on"),
  ])

E("trans_train_sh", "TransMVSNet/scripts/train_dtu.sh", "explicit_replacement",
  "TransMVSNet multi-node training launcher", [
      C("=#!/usr/bin/env bash", "env_var", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV),
      C("NGPUS_PER_NODE=$(nvidia-smi", "torch_cuda_api", "replace", True,
        "NGPUS_PER_NODE=$(python -c 'import torch, torch_npu; print(torch.npu.device_count())')",
        "nvidia-smi does not exist on an NPU host: nproc_per_node becomes 0 (npu-smi output is not a "
        "one-line-per-device list)"),
      C("export NCCL_SOCKET_IFNAME=${IFNAME:-eth0}", "env_var", "replace", True,
        "export HCCL_SOCKET_IFNAME=${IFNAME:-eth0}",
        "multi-node: HCCL ignores the NCCL variable and picks the host NIC by its own priority, which can fail "
        "link setup"),
      C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
        "HCCL watchdog already defaults to 1"),
  ])

E("trans_env", "TransMVSNet/environment.yml", "explicit_replacement",
  "TransMVSNet conda environment (pytorch + cudatoolkit)", [
      C("=- nvidia", "device_type", "removal", False, None, "CUDA package channel; unused after the port"),
      C("=- pytorch=1.10.1", "device_type", "replace", True, "- pytorch=2.1.0",
        "no torch_npu for 1.10; CPU build of 2.1.0 (see cpuonly) to pair with torch-npu 2.1.0.postN"),
      C("=- torchvision=0.11.2", "device_type", "replace", True, "- torchvision=0.16.0", "must match torch 2.1.0"),
      C("=- cudatoolkit=11.3", "device_type", "replace", False, "- cpuonly",
        "CUDA runtime is useless on NPU; whether it resolves on aarch64 hosts is unconfirmed"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post12",
        "torch-npu is pip-only"),
  ])

# ---------------------------------------------------------------------------------------------
# CasMVSNet_pl (kwea123) -- pytorch-lightning + inplace_abn
# ---------------------------------------------------------------------------------------------
E("caspl_modules", "CasMVSNet_pl/models/modules.py", "explicit_replacement",
  "CasMVSNet_pl models/modules.py (InPlaceABN norm_act, kornia meshgrid homo_warp)", [
      C("from inplace_abn import InPlaceABN", "custom_cuda_extension", "replace", True,
        "from inplace_abn import ABN as InPlaceABN  # ABN is pure PyTorch; InPlaceABN kernels are CUDA/CPU only",
        "InPlaceABN runs its compiled CUDA/CPU kernels and cannot take NPU tensors; ABN has the same parameters"),
  ])

E("caspl_train", "CasMVSNet_pl/train.py", "explicit_replacement",
  "CasMVSNet_pl train.py (pytorch-lightning 0.7 Trainer(gpus=..., distributed_backend='ddp'))", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
      C("from inplace_abn import InPlaceABN", "custom_cuda_extension", "replace", True,
        "from inplace_abn import ABN as InPlaceABN",
        "same as models/modules.py: InPlaceABN kernels cannot take NPU tensors"),
      C("torch.backends.cudnn.benchmark = True", "torch_cuda_api", "removal", False, None, CUDNN_FLAG),
      C("gpus=hparams.num_gpus,", "device_type", "replace", True, "accelerator='npu', devices=hparams.num_gpus,",
        "gpus= requires CUDA and fails at Trainer init; which Lightning version/plug-in offers an 'npu' "
        "accelerator is unconfirmed (Lightning itself must be upgraded for torch 2.1)"),
      C("distributed_backend='ddp' if hparams.num_gpus > 1 else None,", "dist_backend", "replace", False,
        "strategy=DDPStrategy(process_group_backend='hccl') if hparams.num_gpus > 1 else 'auto',",
        "multi-NPU needs an HCCL process group; Lightning's default backend for a non-cuda device is unconfirmed"),
      C("amp_level='O1')", "amp", "removal", False, None,
        "apex amp level; only used with --use_amp and the apex backend"),
  ])

E("caspl_eval", "CasMVSNet_pl/eval.py", "explicit_replacement",
  "CasMVSNet_pl eval.py (depth inference + torch geometric-consistency fusion)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
      C("torch.backends.cudnn.benchmark = True", "torch_cuda_api", "removal", False, None, CUDNN_FLAG),
      C("device = 'cpu' if args.cpu else 'cuda:0'", "device_type", "replace", True,
        "device = 'cpu' if args.cpu else 'npu:0'", "hard-coded cuda device string"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
      C("P_world2ref_t = torch.FloatTensor(P_world2ref).cuda()", "tensor_to_device", "replace", True,
        "P_world2ref_t = torch.FloatTensor(P_world2ref).to(device)", ".cuda() fails without CUDA"),
      C("depth_ref_t = torch.FloatTensor(depth_ref.copy()).cuda()", "tensor_to_device", "replace", True,
        "depth_ref_t = torch.FloatTensor(depth_ref.copy()).to(device)", ".cuda() fails without CUDA"),
      C("image_ref_t = torch.FloatTensor(image_ref.copy()).cuda()", "tensor_to_device", "replace", True,
        "image_ref_t = torch.FloatTensor(image_ref.copy()).to(device)", ".cuda() fails without CUDA"),
      C("depth_src_t = torch.from_numpy(depth_src.copy()).float().to('cuda')", "device_type", "replace", True,
        "depth_src_t = torch.from_numpy(depth_src.copy()).float().to(device)", "hard-coded cuda string"),
      C("image_src_t = torch.from_numpy(image_src.copy()).float().to('cuda')", "device_type", "replace", True,
        "image_src_t = torch.from_numpy(image_src.copy()).float().to(device)", "hard-coded cuda string"),
      C("P_world2src_t = torch.from_numpy(P_world2src).float().to('cuda')", "device_type", "replace", True,
        "P_world2src_t = torch.from_numpy(P_world2src).float().to(device)", "hard-coded cuda string"),
      C("torch.cuda.empty_cache()  # free the fusion buffers", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()  # free the fusion buffers before the next scan", EMPTY_CACHE),
  ])

E("caspl_req", "CasMVSNet_pl/requirements.txt", "explicit_replacement",
  "CasMVSNet_pl requirements (torch 1.4, pytorch-lightning 0.7.5, inplace-abn)", [
      C("=torch==1.4.0", "device_type", "replace", True, "torch==2.1.0",
        "no torch_npu for torch 1.4; torch-npu 2.1.0.postN pairs with torch 2.1.0"),
      C("=torchvision==0.5.0", "device_type", "replace", True, "torchvision==0.16.0", "must match torch 2.1.0"),
      C("=plyfile", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "torch-npu pin next to the torch pins (the torch lines themselves are replaced)"),
  ])

# ---------------------------------------------------------------------------------------------
# Point-MVSNet (callmeray) -- nvcc-built k-NN gather extension
# ---------------------------------------------------------------------------------------------
E("pmvs_setup", "PointMVSNet/setup.py", "kernel_rewrite",
  "Point-MVSNet setup.py building the dgcnn_ext CUDAExtension", [
      C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace",
        True, "from torch.utils.cpp_extension import BuildExtension",
        "CUDAExtension needs nvcc/CUDA_HOME; the gather is rewritten in torch (see gather_knn.py)"),
      C("=CUDAExtension(", "custom_cuda_extension", "removal", True, None, "drop the CUDA extension"),
      C("os.path.join(src_dir, \"gather_knn_kernel.cu\"),", "custom_cuda_extension", "removal", True, None,
        ".cu source cannot be compiled for Ascend"),
      C("\"nvcc\": [\"-O2\", \"-gencode=arch=compute_61,code=sm_61\",", "custom_cuda_extension", "removal", True, None,
        "nvcc flags"),
      C("\"-gencode=arch=compute_70,code=sm_70\"]},", "custom_cuda_extension", "removal", True, None, "nvcc flags"),
  ])

E("pmvs_knn", "PointMVSNet/pointmvsnet/functions/gather_knn.py", "kernel_rewrite",
  "Point-MVSNet functions/gather_knn.py (autograd Function over the CUDA extension)", [
      C("from pointmvsnet.functions import dgcnn_ext", "custom_cuda_extension", "removal", False, None,
        "guarded import (prints a hint); extension cannot be built for NPU"),
      C("feature_neighbour = dgcnn_ext.gather_knn_forward(feature, index)", "custom_cuda_extension", "replace", True,
        "feature_neighbour = feature.gather(2, index.reshape(index.size(0), 1, -1).expand(-1, feature.size(1), -1))"
        ".view(*feature.shape, index.size(2))", "CUDA kernel call; gather expressed with torch ops"),
      C("grad_features = dgcnn_ext.gather_knn_backward(grad_output, knn_inds)", "custom_cuda_extension", "replace",
        True, "grad_features = grad_output.new_zeros(grad_output.shape[:3]).scatter_add_(2, knn_inds.reshape("
        "knn_inds.size(0), 1, -1).expand(-1, grad_output.size(1), -1), grad_output.reshape(*grad_output.shape[:2], -1))",
        "CUDA kernel call; scatter_add is the adjoint of the gather"),
      C("feature_tensor = torch.rand(batch_size, channels, num_inst).cuda(0)", "tensor_to_device", "replace", True,
        "feature_tensor = torch.rand(batch_size, channels, num_inst).npu()", "self-test under __main__"),
      C("knn_inds = torch.randint(0, num_inst, [batch_size, num_inst, k]).long().cuda(0)", "tensor_to_device",
        "replace", True, "knn_inds = torch.randint(0, num_inst, [batch_size, num_inst, k]).long().npu()",
        "self-test under __main__"),
      C("feature_tensor_gather = torch.zeros([batch_size, channels, num_inst, k]).double().cuda(0)",
        "tensor_to_device", "replace", True,
        "feature_tensor_gather = torch.zeros([batch_size, channels, num_inst, k]).float().npu()",
        "self-test; also drops fp64, which Ascend maps to fp32 anyway"),
  ])

# ---------------------------------------------------------------------------------------------
# D2HC-RMVSNet / R-MVSNet style recurrent regularisation
# ---------------------------------------------------------------------------------------------
E("rmvs_gru", "D2HC-RMVSNet/models/drmvsnet.py", "explicit_replacement",
  "D2HC-RMVSNet / R-MVSNet recurrent ConvGRU regularisation with legacy torch.cuda tensor types", [
      C("return Variable(torch.zeros(batch_size, hidden, shape[0], shape[1])).cuda()", "tensor_to_device", "replace",
        True, "return torch.zeros(batch_size, hidden, shape[0], shape[1]).npu()", ".cuda() fails without CUDA"),
      C("depth_index = torch.argmax(prob_volume, dim=1, keepdim=True).type(torch.cuda.LongTensor)", "torch_cuda_api",
        "replace", True, "depth_index = torch.argmax(prob_volume, dim=1, keepdim=True).long()",
        "legacy torch.cuda.LongTensor type forces a CUDA tensor"),
      C("depth_values_t = depth_values.type(torch.cuda.FloatTensor)", "torch_cuda_api", "replace", True,
        "depth_values_t = depth_values.float()", "legacy torch.cuda.FloatTensor type"),
      C("steps = torch.linspace(0, 1, num_depth).type(torch.cuda.FloatTensor)", "torch_cuda_api", "replace", True,
        "steps = torch.linspace(0, 1, num_depth).npu()", "legacy torch.cuda.FloatTensor type"),
  ])
