"""Labels for probe92 (hand-written synthetic upstream files; see ../README.md).

Domain: video object segmentation and single-object tracking (XMem / STCN, Cutie, OSTrack, STARK,
MixFormer, PyTracking with Precise RoI Pooling, SAM-Track / DeAOT, SAM 2).

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

IMPORT_NOTE = ("entry script: torch.npu.* and the hccl backend need torch_npu loaded "
               "(explicit import recommended even with autoload)")

# ---------------------------------------------------------------------------------------------
# XMem / STCN
# ---------------------------------------------------------------------------------------------
E("xmem_train", "train.py", "explicit_replacement",
  "hkchengrex/XMem train.py (torchrun, NCCL, per-stage loop)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('distributed.init_process_group(backend="nccl")', "dist_backend", R, True,
      'distributed.init_process_group(backend="hccl")', "NCCL does not exist on Ascend; HCCL is the backend"),
    C("print(f'CUDA Device count: {torch.cuda.device_count()}')", "torch_cuda_api", R, False,
      "print(f'NPU Device count: {torch.npu.device_count()}')",
      "log line only; prints 0 on an NPU host"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "torch.cuda.set_device raises without a CUDA build"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; NPU cached blocks are not released between stages"),
])

E("xmem_trainer", "model/trainer.py", "explicit_replacement",
  "hkchengrex/XMem model/trainer.py (DDP wrapper, GradScaler, map_location remap)", [
    C("XMem(config).cuda(),", "tensor_to_device", R, True, "XMem(config).npu(),",
      "Module.cuda() fails without CUDA"),
    C("optim.AdamW(filter(", "fused_optimizer", R, False,
      "self.optimizer = torch_npu.optim.NpuFusedAdamW(filter(",
      "performance only (msFmkTransplt advice); torch.optim.AdamW works"),
    C("self.scaler = torch.cuda.amp.GradScaler()", "amp", R, True,
      "self.scaler = torch.npu.amp.GradScaler()",
      "CUDA GradScaler disables itself without CUDA: --amp training would run with no loss scaling"),
    C("data[k] = v.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "data[k] = v.npu(non_blocking=True)", "Tensor.cuda() fails without CUDA"),
    C("with torch.cuda.amp.autocast(enabled=self.config['amp']):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=self.config['amp']):",
      "CUDA autocast is inactive for NPU tensors: --amp silently trains in fp32"),
    C("map_location = 'cuda:%d' % self.local_rank", "device_type", R, True,
      "map_location = 'npu:%d' % self.local_rank", "checkpoint tensors would be restored onto a CUDA device"),
    C("checkpoint = torch.load(path, map_location={'cuda:0': map_location})", "device_type", R, False,
      "checkpoint = torch.load(path, map_location=map_location)",
      "the {'cuda:0': ...} key still matches GPU-saved checkpoints once the value is npu; "
      "NPU-saved resumes would land on npu:0 (load_state_dict copies, so only memory skew)"),
    C("target_device = 'cuda:%d' % self.local_rank", "device_type", R, True,
      "target_device = 'npu:%d' % self.local_rank", "same as load_checkpoint"),
    C("src_dict = torch.load(path, map_location={'cuda:0': target_device})", "device_type", R, False,
      "src_dict = torch.load(path, map_location=target_device)", "see load_checkpoint"),
])

E("xmem_eval", "eval.py", "explicit_replacement",
  "hkchengrex/XMem eval.py (DAVIS/YouTube-VOS evaluation with CUDA-event timing)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("network = XMem(config, args.model).cuda().eval()", "tensor_to_device", R, True,
      "network = XMem(config, args.model).npu().eval()", "Module.cuda() fails without CUDA"),
    C("model_weights = torch.load(args.model)", "device_type", R, True,
      "model_weights = torch.load(args.model, map_location='npu')",
      "released XMem.pth holds CUDA storages; without map_location torch.load tries to restore them on "
      "a CUDA device and raises on an NPU host"),
    C("with torch.cuda.amp.autocast(enabled=not args.benchmark):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=not args.benchmark):",
      "CUDA autocast inactive for NPU tensors: evaluation silently runs in fp32"),
    C("rgb = data['rgb'].cuda()[0]", "tensor_to_device", R, True, "rgb = data['rgb'].npu()[0]",
      "Tensor.cuda() fails without CUDA"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events need a CUDA build"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "end = torch.npu.Event(enable_timing=True)", "CUDA events need a CUDA build"),
    C("msk = torch.Tensor(msk).cuda()", "tensor_to_device", R, True, "msk = torch.Tensor(msk).npu()",
      "Tensor.cuda() fails without CUDA"),
    C("torch.autograd.set_grad_enabled(False)", "compile_mode", A, False,
      "torch_npu.npu.set_compile_mode(jit_compile=False)",
      "memory banks grow frame by frame (dynamic shapes): binary kernels avoid per-shape recompiles; "
      "performance only"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "raises without a CUDA build"),
    C("torch.cuda.max_memory_allocated() / (2**20)", "torch_cuda_api", R, False,
      "print(f'Max allocated memory (MB): {torch.npu.max_memory_allocated() / (2**20)}')",
      "report only: memory_stats() returns {} without CUDA, so it prints 0"),
])

E("stcn_train_sh", "scripts/train_s03.sh", "explicit_replacement",
  "STCN / XMem-style multi-GPU training schedule shell script (torch.distributed.launch)", [
    C("NUM_GPUS=${2:-$(nvidia-smi", "torch_cuda_api", R, True,
      "NUM_GPUS=${2:-$(npu-smi info -l | grep -c 'NPU ID')}",
      "nvidia-smi is absent on an NPU host: under set -euo pipefail the script exits here"),
    C("export CUDA_VISIBLE_DEVICES=", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1}",
      "the NPU runtime selects devices with ASCEND_RT_VISIBLE_DEVICES"),
    C("export NCCL_DEBUG=WARN", "env_var", R, False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
      "NCCL variables are ignored by HCCL; cosmetic"),
    C("export NCCL_P2P_DISABLE=1", "env_var", X, False, None,
      "NCCL-only workaround for a PCIe P2P hang; meaningless for HCCL"),
    C('echo "== GPUs visible    : ${CUDA_VISIBLE_DEVICES}', "env_var", R, False,
      'echo "== NPUs visible    : ${ASCEND_RT_VISIBLE_DEVICES} (${NUM_GPUS} processes)"', "log line only"),
    C("=nvidia-smi", "torch_cuda_api", R, True, "npu-smi info",
      "command not found aborts the script under set -e"),
    C("CUDA_VISIBLE_DEVICES=0,1 python -m torch.distributed.launch", "env_var", R, True,
      "ASCEND_RT_VISIBLE_DEVICES=0,1 python -m torch.distributed.launch \\",
      "inline prefix form; ignored by the NPU runtime"),
    C("CUDA_VISIBLE_DEVICES=0 python eval.py", "env_var", R, True,
      "ASCEND_RT_VISIBLE_DEVICES=0 python eval.py \\", "inline prefix form; ignored by the NPU runtime"),
    C("nvidia-smi --query-gpu=index,memory.used --format=csv", "torch_cuda_api", R, False,
      "npu-smi info", "final report only (the work is done), but it makes the script exit non-zero"),
])

# ---------------------------------------------------------------------------------------------
# Cutie
# ---------------------------------------------------------------------------------------------
E("cutie_train", "cutie/train.py", "explicit_replacement",
  "hkchengrex/Cutie cutie/train.py (hydra entry point, NCCL, two training stages)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('distributed.init_process_group(backend="nccl")', "dist_backend", R, True,
      'distributed.init_process_group(backend="hccl")', "NCCL does not exist on Ascend"),
    C("torch.cuda.device_count()}')", "torch_cuda_api", R, False,
      "info_if_rank_zero(f'Visible NPU devices on this node: {torch.npu.device_count()}')",
      "log line only; prints 0"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "raises without a CUDA build"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
])

E("cutie_trainer", "cutie/model/trainer.py", "explicit_replacement",
  "hkchengrex/Cutie cutie/model/trainer.py (bf16/fp16 AMP choice, DDP, GradScaler)", [
    C("torch.cuda.is_bf16_supported()", "device_capability_check", R, True,
      "self.amp_dtype = torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
      "without CUDA it raises (torch 2.1 reaches get_device_properties) or returns False (newer torch), "
      "which pushes an A2 NPU that supports bf16 onto fp16 + loss scaling"),
    C("CutieTrainWrapper(cfg, stage_cfg).cuda(),", "tensor_to_device", R, True,
      "self.cutie = nn.parallel.DistributedDataParallel(CutieTrainWrapper(cfg, stage_cfg).npu(),",
      "Module.cuda() fails without CUDA"),
    C("self.optimizer = optim.AdamW(parameter_groups,", "fused_optimizer", R, False,
      "self.optimizer = torch_npu.optim.NpuFusedAdamW(parameter_groups,",
      "performance only; drop foreach=True with the fused optimizer"),
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=", "amp", R, True,
      "self.scaler = torch.npu.amp.GradScaler(enabled=(self.amp_dtype == torch.float16))",
      "CUDA GradScaler disables itself without CUDA: fp16 without loss scaling"),
    C("data[k] = v.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "data[k] = v.npu(non_blocking=True)", "Tensor.cuda() fails without CUDA"),
    C("with torch.cuda.amp.autocast(enabled=self.use_amp, dtype=self.amp_dtype):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=self.use_amp, dtype=self.amp_dtype):",
      "CUDA autocast inactive for NPU tensors"),
    C("map_location = 'cuda:%d' % self.local_rank", "device_type", R, True,
      "map_location = 'npu:%d' % self.local_rank", "restores the checkpoint onto a CUDA device"),
    C("map_location={'cuda:0': map_location}, weights_only=False)", "device_type", R, False,
      "checkpoint = torch.load(path, map_location=map_location, weights_only=False)",
      "key still matches GPU-saved checkpoints once the value is npu"),
    C("map_location=f'cuda:{self.local_rank}'", "device_type", R, True,
      "src_dict = torch.load(path, map_location=f'npu:{self.local_rank}', weights_only=True)",
      "f-string spelling of a CUDA device for map_location"),
])

E("cutie_process_video", "scripts/process_video.py", "device_branch_or_abstraction",
  "hkchengrex/Cutie scripts/process_video.py (cuda / mps / cpu device selection)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "needed for the torch.npu.is_available() branch"),
    C("parser.add_argument('--device', help='cuda / mps / cpu', default='cuda')", "device_type", R, False,
      "parser.add_argument('--device', help='npu / cuda / mps / cpu', default='npu')",
      "users can pass --device npu once select_device knows it"),
    C("if requested == 'cuda' and torch.cuda.is_available():", "device_type", B, True,
      "if requested == 'npu' and torch.npu.is_available():\n        device = 'npu'\n    elif requested == 'cuda' and torch.cuda.is_available():",
      "an NPU host silently falls back to the CPU"),
    C("torch.set_grad_enabled(False)", "compile_mode", A, False,
      "torch_npu.npu.set_compile_mode(jit_compile=False)",
      "variable video resolution and memory length: avoid per-shape operator compilation; performance only"),
    C("enabled=(args.amp and device == 'cuda')", "amp", R, False,
      "with torch.amp.autocast(device_type=device, enabled=(args.amp and device in ('cuda', 'npu'))):",
      "performance only: --amp is ignored on npu and the model runs in fp32"),
])

# ---------------------------------------------------------------------------------------------
# OSTrack / STARK / MixFormer (lib/train + lib/test layout)
# ---------------------------------------------------------------------------------------------
E("ostrack_run_training", "lib/train/run_training.py", "explicit_replacement",
  "botaoye/OSTrack lib/train/run_training.py (torch.distributed.launch entry, seeds, NCCL)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(seed)",
      "lazily queued and harmless without CUDA, but NPU generators stay unseeded"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "same"),
    C("dist.init_process_group(backend='nccl')", "dist_backend", R, True,
      "dist.init_process_group(backend='hccl')", "NCCL does not exist on Ascend"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", R, True,
      "torch.npu.set_device(args.local_rank)", "raises without a CUDA build"),
    C("torch.cuda.set_device(0)", "torch_cuda_api", R, True, "torch.npu.set_device(0)",
      "single-card path; raises without a CUDA build"),
])

E("ostrack_ltr_trainer", "lib/train/trainers/ltr_trainer.py", "explicit_replacement",
  "botaoye/OSTrack lib/train/trainers/ltr_trainer.py (bare autocast()/GradScaler imports)", [
    C("from torch.cuda.amp import autocast", "amp", R, True, "from torch_npu.npu.amp import autocast",
      "the bare `with autocast():` later is CUDA autocast, inactive for NPU tensors"),
    C("from torch.cuda.amp import GradScaler", "amp", R, True, "from torch_npu.npu.amp import GradScaler",
      "CUDA GradScaler disables itself without CUDA"),
    C("torch.cuda.max_memory_allocated() / 1024 ** 2", "torch_cuda_api", R, False,
      "print_str += 'Mem: %.0fMB' % (torch.npu.max_memory_allocated() / 1024 ** 2)",
      "log only; prints 0"),
])

E("ostrack_tracker", "lib/test/tracker/ostrack.py", "explicit_replacement",
  "botaoye/OSTrack lib/test/tracker/ostrack.py + data_utils Preprocessor (hann window, .cuda() patches)", [
    C("self.mean = torch.tensor([0.485, 0.456, 0.406]).view((1, 3, 1, 1)).cuda()", "tensor_to_device", R, True,
      "self.mean = torch.tensor([0.485, 0.456, 0.406]).view((1, 3, 1, 1)).npu()", "Tensor.cuda() fails"),
    C("self.std = torch.tensor([0.229, 0.224, 0.225]).view((1, 3, 1, 1)).cuda()", "tensor_to_device", R, True,
      "self.std = torch.tensor([0.229, 0.224, 0.225]).view((1, 3, 1, 1)).npu()", "Tensor.cuda() fails"),
    C("img_tensor = torch.tensor(img_arr).cuda().float()", "tensor_to_device", R, True,
      "img_tensor = torch.tensor(img_arr).npu().float().permute((2, 0, 1)).unsqueeze(dim=0)",
      "Tensor.cuda() fails"),
    C("amask_tensor = torch.from_numpy(amask_arr).to(torch.bool).cuda()", "tensor_to_device", R, True,
      "amask_tensor = torch.from_numpy(amask_arr).to(torch.bool).npu().unsqueeze(dim=0)  # (1,H,W)",
      "Tensor.cuda() fails"),
    C("self.network = network.cuda()", "tensor_to_device", R, True, "self.network = network.npu()",
      "Module.cuda() fails"),
    C("centered=True).cuda()", "tensor_to_device", R, True,
      "self.output_window = hann2d(torch.tensor([self.feat_sz, self.feat_sz]).long(), centered=True).npu()",
      "Tensor.cuda() fails"),
])

E("ostrack_profile_model", "tracking/profile_model.py", "explicit_replacement",
  "botaoye/OSTrack tracking/profile_model.py (thop MACs + synchronize-timed latency)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.synchronize()  # flush the thop profiling work", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # flush the thop profiling work", "raises without a CUDA build"),
    C("torch.cuda.synchronize()  # wait for the timed loop", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # wait for the timed loop", "raises without a CUDA build"),
    C("torch.cuda.synchronize()  # drain warm-up", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # drain warm-up", "raises without a CUDA build"),
    C("torch.cuda.synchronize()  # template branch done", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # template branch done", "raises without a CUDA build"),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start_evt = torch.npu.Event(enable_timing=True)", "CUDA events need a CUDA build"),
    C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "end_evt = torch.npu.Event(enable_timing=True)", "CUDA events need a CUDA build"),
    C('device = "cuda:0"', "device_type", R, True, 'device = "npu:0"', "CUDA device string"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)",
      "raises without a CUDA build"),
    C("torch.cuda.get_device_name(device)", "torch_cuda_api", R, True,
      'print("device name: %s" % torch.npu.get_device_name(device))', "raises without a CUDA build"),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", R, False,
      'print("peak memory: %.1f MB" % (torch.npu.max_memory_allocated(device) / 2 ** 20))',
      "report only; prints 0"),
])

E("ostrack_running", "lib/test/evaluation/running.py", "explicit_replacement",
  "botaoye/OSTrack lib/test/evaluation/running.py (per-worker GPU pinning in a spawn pool)", [
    C("torch.cuda.set_device(gpu_id)", "torch_cuda_api", R, True, "torch.npu.set_device(gpu_id)",
      "raises without CUDA, and the bare `except: pass` swallows it: every pool worker silently "
      "runs on NPU 0"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "num_gpus = torch.npu.device_count()",
      "returns 0 without CUDA (worker_id % 0 then fails inside the same swallowed try)"),
])

E("stark_lightning_ort", "lib/test/tracker/stark_lightning_X_trt.py", "explicit_replacement",
  "researchmm/Stark STARK-Lightning onnxruntime / TensorRT-EP tracker", [
    C("cuda_options = {", "device_type", R, False, "cann_options = {",
      "CUDA EP options (cudnn_conv_algo_search, arena) have no meaning for an Ascend EP; unconfirmed"),
    C('providers = [("CUDAExecutionProvider", cuda_options), "CPUExecutionProvider"]', "device_type", R, False,
      'providers = [("CANNExecutionProvider", cann_options), "CPUExecutionProvider"]',
      "onnxruntime skips an unavailable EP and runs on the CPU; the CANN EP is not covered by the "
      "knowledge base (unconfirmed)"),
    C('providers.insert(0, ("TensorrtExecutionProvider", trt_options))', "device_type", X, False, None,
      "no TensorRT on Ascend; unconfirmed"),
    C('if "CUDAExecutionProvider" not in self.ort_sess_x.get_providers():', "device_type", R, False,
      'if "CANNExecutionProvider" not in self.ort_sess_x.get_providers():', "warning check only"),
    C('self.device_type = "cuda"', "device_type", R, False, 'self.device_type = "cann"',
      "OrtValue.ortvalue_from_numpy(..., 'cuda', 0) needs a CUDA onnxruntime build; unconfirmed which "
      "device name the Ascend build accepts"),
])

E("mixformer_head", "lib/models/mixformer_cvt/head.py", "explicit_replacement",
  "MCG-NJU/MixFormer lib/models/mixformer_cvt/head.py (STARK corner head + PrRoIPool score decoder)", [
    C("from lib.external.PreciseRoIPooling.pytorch.prroi_pool import PrRoIPool2D", "custom_cuda_extension", R,
      True, "from lib.models.layers.roi_pool_npu import PrRoIPool2D  # wraps torch_npu.npu_roi_align",
      "PrRoIPool2D is the JIT-compiled CUDA extension (cpp_extension.load of a .cu kernel): "
      "swap it for an NPU-capable RoI pooling, or port the wrapper itself"),
    C("self.coord_x = self.indice.repeat((self.feat_sz, 1))", "tensor_to_device", R, True,
      "self.coord_x = self.indice.repeat((self.feat_sz, 1)).view((self.feat_sz * self.feat_sz,)).float().npu()",
      "buffer moved with .cuda() inside __init__: fails at model construction"),
    C("self.coord_y = self.indice.repeat((1, self.feat_sz))", "tensor_to_device", R, True,
      "self.coord_y = self.indice.repeat((1, self.feat_sz)).view((self.feat_sz * self.feat_sz,)).float().npu()",
      "same"),
])

E("mixformer_train_script", "lib/train/train_script_mixformer.py", "explicit_replacement",
  "MCG-NJU/MixFormer lib/train/train_script_mixformer.py (STARK-style run(settings))", [
    C("t = torch.FloatTensor(1, 3, res_t, res_t).cuda()", "tensor_to_device", R, True,
      "t = torch.FloatTensor(1, 3, res_t, res_t).npu()", "Tensor.cuda() fails"),
    C("s = torch.FloatTensor(1, 3, res_s, res_s).cuda()", "tensor_to_device", R, True,
      "s = torch.FloatTensor(1, 3, res_s, res_s).npu()", "Tensor.cuda() fails"),
    C("=net.cuda()", "tensor_to_device", R, True, "net.npu()", "Module.cuda() fails"),
    C('settings.device = torch.device("cuda:%d" % settings.local_rank)', "device_type", R, True,
      'settings.device = torch.device("npu:%d" % settings.local_rank)', "CUDA device for the trainer"),
    C('settings.device = torch.device("cuda:0")', "device_type", R, True,
      'settings.device = torch.device("npu:0")', "CUDA device for the trainer"),
    C("optimizer = torch.optim.AdamW(param_dicts", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(param_dicts, lr=cfg.TRAIN.LR,", "performance only"),
])

# ---------------------------------------------------------------------------------------------
# PyTracking / LTR
# ---------------------------------------------------------------------------------------------
E("pytracking_prroi_functional", "ltr/external/PreciseRoIPooling/pytorch/prroi_pool/functional.py",
  "device_branch_or_abstraction",
  "vacancy/PreciseRoIPooling (pytracking submodule) pytorch/prroi_pool/functional.py (JIT-loaded .cu kernel)", [
    C("from torch.utils.cpp_extension import load as load_extension", "custom_cuda_extension", R, True,
      "import torch_npu  # NPU path below uses torch_npu.npu_roi_align",
      "cpp_extension.load is marked unsupported on A2/A3 and there is no nvcc"),
    C("_prroi_pooling = load_extension(", "custom_cuda_extension", R, True,
      "_prroi_pooling = None  # no CUDA kernel on NPU; see the npu branch in forward",
      "JIT compile of the CUDA sources fails on an NPU host"),
    C("[pjoin(root_dir, 'prroi_pooling_gpu.c'), pjoin(root_dir, 'prroi_pooling_gpu_impl.cu')],",
      "custom_cuda_extension", R, True, "[pjoin(root_dir, 'prroi_pooling_cpu.cpp')],",
      ".cu source needs nvcc"),
    C("extra_cuda_cflags=['-O3', '--use_fast_math'],", "custom_cuda_extension", X, False, None,
      "nvcc flags; irrelevant once the .cu source is gone"),
    C("if features.is_cuda:", "device_type", B, True,
      "if features.device.type == 'npu':\n            output = torch_npu.npu_roi_align(features, rois, spatial_scale, pooled_height, pooled_width, 0, 0)\n        elif features.is_cuda:",
      "NPU tensors fall through to NotImplementedError"),
    C("output = _prroi_pooling.prroi_pooling_forward_cuda(features, rois, *params)", "custom_cuda_extension", R,
      True, "output = _prroi_pooling.prroi_pooling_forward_cuda(features, rois, *params)  # CUDA only",
      "call into the CUDA op; the NPU branch must not reach it"),
    C("grad_input = _prroi_pooling.prroi_pooling_backward_cuda(", "custom_cuda_extension", R, True,
      "grad_input = torch_npu.npu_roi_alignbk(grad_output, rois, list(features.shape), ctx.params[1], ctx.params[0], ctx.params[2], 0)",
      "backward of the CUDA op"),
    C("grad_coor = _prroi_pooling.prroi_pooling_coor_backward_cuda(", "custom_cuda_extension", R, True,
      "grad_coor = None  # no coordinate gradient from npu_roi_align; IoU-Net refinement uses autograd on a torch implementation",
      "PrRoI's continuous RoI-coordinate gradient has no NPU kernel"),
])

E("pytracking_atom_iou_net", "ltr/models/bbreg/atom_iou_net.py", "explicit_replacement",
  "visionml/pytracking ltr/models/bbreg/atom_iou_net.py (IoU-Net head on PrRoIPool2D)", [
    C("from ltr.external.PreciseRoIPooling.pytorch.prroi_pool import PrRoIPool2D", "custom_cuda_extension", R,
      True, "from ltr.models.layers.roi_pool_npu import PrRoIPool2D  # npu_roi_align based",
      "the compiled-on-first-use CUDA RoI pooling; forward fails on NPU tensors"),
])

E("pytracking_kys_cost_volume", "ltr/models/kys/cost_volume.py", "explicit_replacement",
  "visionml/pytracking ltr/models/kys/cost_volume.py (spatial-correlation-sampler)", [
    C("from spatial_correlation_sampler import SpatialCorrelationSampler", "custom_cuda_extension", R, True,
      "from ltr.models.layers.local_corr import LocalCorrelation  # F.unfold based",
      "unguarded import of a CUDA-extension package with no NPU kernel"),
    C("self.correlation_layer = SpatialCorrelationSampler(kernel_size,", "custom_cuda_extension", R, True,
      "self.correlation_layer = LocalCorrelation(kernel_size, 2*max_displacement + 1, stride,",
      "constructs the CUDA op"),
])

E("pytracking_base_trainer", "ltr/trainers/base_trainer.py", "explicit_replacement",
  "visionml/pytracking ltr/trainers/base_trainer.py (device pick, fail-safe restart)", [
    C('self.device = torch.device("cuda:0" if torch.cuda.is_available() and settings.use_gpu else "cpu")',
      "device_type", R, True,
      'self.device = torch.device("npu:0" if torch.npu.is_available() and settings.use_gpu else "cpu")',
      "an NPU host silently trains on the CPU"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
])

E("pytracking_dimp50_settings", "ltr/train_settings/dimp/dimp50.py", "explicit_replacement",
  "visionml/pytracking ltr/train_settings/dimp/dimp50.py (MultiGPU = nn.DataParallel subclass)", [
    C("settings.multi_gpu = True", "distributed_framework", R, False, "settings.multi_gpu = False",
      "the one-line alternative to replacing the wrapper below (single card)"),
    C("net = MultiGPU(net, dim=1)", "distributed_framework", R, True,
      "net = torch.nn.parallel.DistributedDataParallel(net.npu(), device_ids=[settings.local_rank])",
      "ltr.admin.multigpu.MultiGPU subclasses nn.DataParallel, which is unsupported on NPU"),
    C("optimizer = optim.Adam([", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdam([", "performance only"),
])

E("pytracking_install_sh", "install.sh", "explicit_replacement",
  "visionml/pytracking install.sh (conda env, correlation sampler, PrRoIPooling pre-build)", [
    C("conda install -y pytorch==1.10.1 torchvision==0.11.2 cudatoolkit=11.3", "import_torch_npu", R, True,
      "pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12",
      "CUDA build of a torch release that has no torch_npu pairing"),
    C("export CUDA_HOME=", "env_var", X, False, None, "no CUDA toolkit on the host; harmless leftover"),
    C('export TORCH_CUDA_ARCH_LIST="6.1;7.0;7.5;8.0;8.6"', "env_var", X, False, None,
      "CUDA arch list; harmless leftover"),
    C("FORCE_CUDA=1 pip install spatial-correlation-sampler", "custom_cuda_extension", X, True, None,
      "forced CUDA build of a CUDA-extension package; no nvcc on an NPU host (KYS then needs the "
      "unfold-based correlation)"),
    C("assert torch.cuda.is_available(), 'CUDA is required to build PrRoIPooling'", "custom_cuda_extension", X,
      True, None, "the assert fails on an NPU host and the CUDA pre-build cannot run"),
])

# ---------------------------------------------------------------------------------------------
# SAM-Track / DeAOT
# ---------------------------------------------------------------------------------------------
E("aot_attention", "networks/layers/attention.py", "explicit_replacement",
  "yoxu515/aot-benchmark networks/layers/attention.py as vendored by SAM-Track (local attention V2/V3)", [
    C("QK = multiply_by_ychunks(Q, K, self.qk_chunks)", "attention_kernel", R, False,
      "outputs = torch_npu.npu_fusion_attention(Q, K.transpose(-1, -2), V, num_head, 'BNSD', scale=1.0)[0]",
      "performance only, and only when top_k/use_dis are off; unconfirmed gain"),
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", R, False,
      "with torch.npu.amp.autocast(enabled=False):",
      "only reached when the CUDA correlation sampler imported, which it does not on NPU"),
    C("@torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)", "amp", R, True,
      "@torch_npu.npu.amp.custom_fwd(cast_inputs=torch.float32)",
      "checks only CUDA autocast: under NPU autocast the inputs are not cast, so the 15x15-window "
      "logits are computed in fp16 (the overflow the decorator exists to prevent)"),
])

E("samtrack_aot_tracker", "aot_tracker.py", "explicit_replacement",
  "z-x-yang/Segment-and-Track-Anything aot_tracker.py (DeAOT engine wrapper, int gpu_id)", [
    C("self.model = build_vos_model(cfg.MODEL_VOS, cfg).cuda(gpu_id)", "tensor_to_device", R, True,
      "self.model = build_vos_model(cfg.MODEL_VOS, cfg).npu(gpu_id)", "Module.cuda() fails"),
    C("frame = sample[0]['current_img'].unsqueeze(0).float().cuda(self.gpu_id)", "tensor_to_device", R, True,
      "frame = sample[0]['current_img'].unsqueeze(0).float().npu(self.gpu_id)", "Tensor.cuda() fails"),
    C("mask = sample[0]['current_label'].unsqueeze(0).float().cuda(self.gpu_id)", "tensor_to_device", R, True,
      "mask = sample[0]['current_label'].unsqueeze(0).float().npu(self.gpu_id)", "Tensor.cuda() fails"),
    C("image = sample[0]['current_img'].unsqueeze(0).float().cuda(self.gpu_id)", "tensor_to_device", R, True,
      "image = sample[0]['current_img'].unsqueeze(0).float().npu(self.gpu_id)", "Tensor.cuda() fails"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
    C('map_location=torch.device("cuda:" + str(gpu))', "device_type", R, True,
      'pretrained = torch.load(pretrained_dir, map_location=torch.device("npu:" + str(gpu)))',
      "device string built by concatenation"),
])

E("samtrack_segtracker", "SegTracker.py", "explicit_replacement",
  "z-x-yang/Segment-and-Track-Anything SegTracker.py + tool/segmentor.py (SAM + Grounding-DINO on an int gpu_id)", [
    C('self.device = sam_args["gpu_id"]', "device_type", R, True,
      'self.device = f"npu:{sam_args[\'gpu_id\']}"',
      "a bare int ordinal is a CUDA device for .to(device=0) (transfer_to_npu and msFmkTransplt both "
      "rewrite int devices to npu:{i}); it also feeds Grounding-DINO's device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
])

E("samtrack_seg_track_anything", "seg_track_anything.py", "explicit_replacement",
  "z-x-yang/Segment-and-Track-Anything seg_track_anything.py (batch video script, autocast loop)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.empty_cache()  # start from a clean allocator", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # start from a clean allocator", "silent no-op without CUDA"),
    C("=with torch.cuda.amp.autocast():", "amp", R, True, "with torch.npu.amp.autocast():",
      "CUDA autocast inactive for NPU tensors: SAM + DeAOT silently run in fp32"),
    C("torch.cuda.empty_cache()  # drop SAM everything-mode activations", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # drop SAM everything-mode activations", "silent no-op"),
    C("torch.cuda.empty_cache()  # same, before the tracker runs", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # same, before the tracker runs", "silent no-op"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "silent no-op"),
    C("torch.cuda.empty_cache()  # release what the tracker still holds", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # release what the tracker still holds", "silent no-op"),
])

E("samtrack_dockerfile", "Dockerfile", "explicit_replacement",
  "Segment-and-Track-Anything-style demo Dockerfile (nvidia/cuda devel base, FORCE_CUDA extension builds)", [
    C("FROM nvidia/cuda:11.7.1-cudnn8-devel-ubuntu20.04", "device_type", R, True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.9",
      "CUDA base image: no CANN toolkit / NPU driver user-space, torch_npu cannot load"),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", X, False, None, "harmless leftover"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6+PTX"', "env_var", X, False, None, "harmless leftover"),
    C("ENV FORCE_CUDA=1", "env_var", X, False, None,
      "forces CUDA builds of the ms-deform-attn / correlation extensions; exact effect per package "
      "unconfirmed"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, False, "ENV ASCEND_VISIBLE_DEVICES=0",
      "NVIDIA container runtime variable; the Ascend runtime uses ASCEND_VISIBLE_DEVICES (unconfirmed)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,video", "env_var", X, False, None,
      "NVIDIA container runtime variable"),
    C("RUN pip install torch==1.13.1+cu117 torchvision==0.14.1+cu117", "import_torch_npu", R, True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12 \\",
      "CUDA wheel of a torch release with no torch_npu pairing"),
    C("--extra-index-url https://download.pytorch.org/whl/cu117", "import_torch_npu", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 NPU hosts take the CPU torch wheel"),
    C("RUN pip install spatial-correlation-sampler==0.4.0", "custom_cuda_extension", X, False, None,
      "if it builds (CPU-only) the import succeeds and DeAOT takes the correlation path that cannot run "
      "on NPU tensors; unconfirmed"),
    C("RUN pip install onnxruntime-gpu==1.14.1 onnx", "custom_cuda_extension", R, False,
      "RUN pip install onnxruntime onnx", "CUDA build of onnxruntime; unconfirmed on Ascend hosts"),
    C("HEALTHCHECK --interval=60s --timeout=10s CMD nvidia-smi", "torch_cuda_api", R, True,
      "HEALTHCHECK --interval=60s --timeout=10s CMD npu-smi info > /dev/null || exit 1",
      "nvidia-smi does not exist: the container is reported unhealthy forever"),
    C('CMD ["python", "app.py", "--device", "cuda", "--port", "7860"]', "device_type", R, True,
      'CMD ["python", "app.py", "--device", "npu", "--port", "7860"]', "CUDA device string on the command line"),
])

# ---------------------------------------------------------------------------------------------
# SAM 2 (video object segmentation)
# ---------------------------------------------------------------------------------------------
E("sam2_misc", "sam2/utils/misc.py", "explicit_replacement",
  "facebookresearch/sam2 (first release) sam2/utils/misc.py (SDPA settings, _C connected components, frame loader)", [
    C("if torch.cuda.is_available():", "device_capability_check", R, False,
      "if torch.npu.is_available():\n        return False, False, True",
      "an NPU host takes the 'old GPU' branch; its flags only feed the sdp_kernel context that the "
      "port removes"),
    C("old_gpu = torch.cuda.get_device_properties(0).major < 7", "device_capability_check", R, False,
      "old_gpu = False",
      "not reached on NPU unless transfer_to_npu makes is_available() true, and then NPU properties "
      "have no .major (TypeError)"),
    C("use_flash_attn = torch.cuda.get_device_properties(0).major >= 8", "device_capability_check", R, False,
      "use_flash_attn = False  # SDPA dispatches to the NPU fused kernel", "same"),
    C("from sam2 import _C", "custom_cuda_extension", R, True,
      "import cv2  # connected components on the host instead of the CUDA _C op",
      "the CUDA extension is never built on an NPU host"),
    C("return _C.get_connected_componnets(mask.to(torch.uint8).contiguous())", "custom_cuda_extension", R, True,
      "return _connected_components_cv2(mask.to(torch.uint8).cpu())",
      "called unguarded by fill_holes_in_mask_scores"),
    C("img = img.cuda(non_blocking=True)", "tensor_to_device", R, True, "img = img.npu(non_blocking=True)",
      "Tensor.cuda() fails"),
    C("images = images.cuda()", "tensor_to_device", R, True, "images = images.npu()", "Tensor.cuda() fails"),
    C("img_mean = img_mean.cuda()", "tensor_to_device", R, True, "img_mean = img_mean.npu()",
      "Tensor.cuda() fails"),
    C("img_std = img_std.cuda()", "tensor_to_device", R, True, "img_std = img_std.npu()", "Tensor.cuda() fails"),
])

E("sam2_transformer", "sam2/modeling/sam/transformer.py", "explicit_replacement",
  "facebookresearch/sam2 (first release) sam2/modeling/sam/transformer.py (SDPA under sdp_kernel)", [
    C("=with torch.backends.cuda.sdp_kernel(", "attention_kernel", X, True, None,
      "torch.backends.cuda.sdp_kernel is marked unsupported on Ascend; F.scaled_dot_product_attention "
      "already dispatches to the NPU fused kernel"),
    C("with torch.backends.cuda.sdp_kernel(  # same kernel choice as Attention", "attention_kernel", X, True, None,
      "same, in RoPEAttention"),
])

E("sam2_vos_inference", "tools/vos_inference.py", "explicit_replacement",
  "facebookresearch/sam2 tools/vos_inference.py (bf16 autocast decorator, tf32 gate)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('@torch.autocast(device_type="cuda", dtype=torch.bfloat16)', "amp", R, True,
      '@torch.autocast(device_type="npu", dtype=torch.bfloat16)',
      "CUDA autocast is inactive for NPU tensors: inference silently runs in fp32"),
    C('parser.add_argument("--device", type=str, default="cuda"', "device_type", R, True,
      'parser.add_argument("--device", type=str, default="npu", help="device to run the predictor on")',
      "default CUDA device handed to build_sam2_video_predictor"),
    C("if torch.cuda.get_device_properties(0).major >= 8:", "device_capability_check", R, True,
      "if torch.cuda.is_available() and torch.cuda.get_device_properties(0).major >= 8:",
      "raises without a CUDA build (and NPU properties have no .major)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
])

E("sam2_setup", "setup.py", "explicit_replacement",
  "facebookresearch/sam2 (first release) setup.py (mandatory CUDAExtension sam2._C)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", R, True,
      "from torch.utils.cpp_extension import BuildExtension, CppExtension",
      "CUDAExtension needs CUDA_HOME / nvcc"),
    C('"benchmark": ["nvidia-ml-py>=12.535.133"', "custom_cuda_extension", R, False,
      '"benchmark": ["pandas>=2.0.0"],', "NVML has no NPU equivalent; extras only"),
    C('srcs = ["sam2/csrc/connected_components.cu"]', "custom_cuda_extension", R, True,
      'srcs = ["sam2/csrc/connected_components_cpu.cpp"]', ".cu source needs nvcc"),
    C('"nvcc": [', "custom_cuda_extension", X, False, None, "nvcc flags; unused by a C++ build"),
    C('ext_modules = [CUDAExtension("sam2._C", srcs, extra_compile_args=compile_args)]',
      "custom_cuda_extension", R, True,
      'ext_modules = [CppExtension("sam2._C", srcs, extra_compile_args={"cxx": ["-O3"]})]',
      "the build fails at install time on an NPU host"),
])

E("sam2_training_yaml", "sam2/configs/sam2.1_training/sam2.1_hiera_b+_MOSE_finetune.yaml",
  "explicit_replacement",
  "facebookresearch/sam2 training config sam2.1_hiera_b+_MOSE_finetune.yaml (hydra trainer)", [
    C("accelerator: cuda", "device_type", R, True, "accelerator: npu",
      "the trainer builds its device from this value"),
    C("_target_: torch.optim.AdamW", "fused_optimizer", R, False, "_target_: torch_npu.optim.NpuFusedAdamW",
      "performance only"),
    C("backend: nccl", "dist_backend", R, True, "backend: hccl", "NCCL does not exist on Ascend"),
])

E("ostrack_env_yml", "ostrack_cuda113_env.yaml", "explicit_replacement",
  "botaoye/OSTrack ostrack_cuda113_env.yaml (conda export, pytorch cuda11.3 build)", [
    C("=- nvidia", "custom_cuda_extension", X, False, None, "CUDA channel; harmless once no CUDA package is pinned"),
    C("- cudatoolkit=11.3.1", "custom_cuda_extension", X, False, None, "CUDA runtime libraries; dead weight"),
    C("- cudnn=8.2.1", "custom_cuda_extension", X, False, None, "cuDNN; dead weight"),
    C("- pytorch=1.10.0=py3.8_cuda11.3_cudnn8.2.0_0", "import_torch_npu", R, True, "- pytorch=2.1.0=py3.8_cpu_0",
      "CUDA build of a torch release with no torch_npu pairing"),
    C("- pytorch-mutex=1.0=cuda", "import_torch_npu", R, True, "- pytorch-mutex=1.0=cpu",
      "selects the CUDA variant; conflicts with a CPU torch"),
    C("- torchaudio=0.10.0=py38_cu113", "import_torch_npu", R, True, "- torchaudio=2.1.0=py38_cpu",
      "must match the torch that torch_npu pairs with"),
    C("- torchvision=0.11.1=py38_cu113", "import_torch_npu", R, True, "- torchvision=0.16.0=py38_cpu",
      "must match the torch that torch_npu pairs with"),
    C("=- pip:", "import_torch_npu", A, True, "    - torch-npu==2.1.0.post12",
      "torch_npu (plus its pyyaml/decorator deps) added to the pip list"),
    C("- onnxruntime-gpu==1.10.0", "custom_cuda_extension", R, False, "- onnxruntime==1.10.0",
      "CUDA build of onnxruntime; unconfirmed on Ascend hosts"),
    C("- nvidia-ml-py3==7.352.0", "custom_cuda_extension", X, False, None, "NVML bindings; no NPU equivalent"),
    C("- pynvml==11.0.0", "custom_cuda_extension", X, False, None, "NVML bindings; no NPU equivalent"),
])
