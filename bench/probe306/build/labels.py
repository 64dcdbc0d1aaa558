# Labels for probe306: efficient ViTs with token pruning / merging (ToMe, DynamicViT, EViT, A-ViT, EfficientViT).
# One C(...) per upstream line a careful porter would edit for torch_npu. See README.md for the policy.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point: import torch_npu before any device use (mandatory before torch_npu 2.5.1, recommended after; "
               "also needed for the torch.npu.* names used below)")
SET_ENV_NOTE = "CANN runtime libraries/env (LD_LIBRARY_PATH, ASCEND_*) must be loaded before torch_npu can import"
SCATTER_NOTE = ("Tensor.scatter_reduce: Ascend's 2.7.1 API list marks torch.scatter_reduce unsupported and there is no "
                "scatter_reduce aten kernel in the NPU op lists, so it falls back to the CPU (host round-trip inside every "
                "ToMe block). Rewrite with scatter_add_ (sum) / gather-based max for amax. Performance, not a crash.")
SYNC_NOTE = "torch.cuda.synchronize raises on an NPU host (no CUDA); timing needs the NPU stream sync"
AMP_NOTE = ("torch.cuda.amp autocast targets device_type 'cuda': on an NPU host it is disabled with a warning, so the "
            "model silently runs in fp32 (AMP intent lost, ~2x memory)")
PIN_NOTE = ("pinning: without a CUDA device the DataLoader's pin step targets CUDA and is skipped/warned on some torch "
            "versions; pin_memory_device='npu' keeps the async H2D copy. Performance only; unconfirmed in knowledge")
NATIVE_SCALER_NOTE = ("timm<0.9 NativeScaler builds torch.cuda.amp.GradScaler internally, which disables itself without "
                      "CUDA (no loss scaling under NPU fp16 autocast). Unconfirmed (timm internals not in knowledge); "
                      "a local torch.npu.amp.GradScaler-based scaler avoids it")

# ----------------------------------------------------------------------------------------------------------------
# ToMe (facebookresearch/ToMe)
# ----------------------------------------------------------------------------------------------------------------
E("tome_merge", "tome/merge.py", "explicit_replacement",
  "facebookresearch/ToMe tome/merge.py (bipartite soft matching, merge_wavg, merge_source)", [
    C("dst = dst.scatter_reduce(-2, dst_idx.expand(n, r, c), src, reduce=mode)", "unsupported_op_workaround",
      "replace", False,
      "dst = npu_scatter_reduce(dst, -2, dst_idx.expand(n, r, c), src, mode)  # scatter_add_-based helper",
      SCATTER_NOTE),
    C("dst = dst.scatter_reduce(dim=-2, index=dst_idx.expand(n, r, c), src=src, reduce=mode)",
      "unsupported_op_workaround", "replace", False,
      "dst = npu_scatter_reduce(dst, -2, dst_idx.expand(n, r, c), src, mode)",
      SCATTER_NOTE + " (kth_bipartite_soft_matching)"),
    C("dst = dst.scatter_reduce(-2, dst_idx.expand(B, r, C), src, reduce=mode)", "unsupported_op_workaround",
      "replace", False,
      "dst = npu_scatter_reduce(dst, -2, dst_idx.expand(B, r, C), src, mode)",
      SCATTER_NOTE + " (random_bipartite_soft_matching)"),
])

E("tome_patch_timm", "tome/patch/timm.py", "device_branch_or_abstraction",
  "facebookresearch/ToMe tome/patch/timm.py (ToMeBlock / ToMeAttention / apply_patch)", [
    # deliberately no labels: pure module surgery; SDPA path and 'GPU throughput' docstring are near-misses
])

E("tome_utils", "tome/utils.py", "device_branch_or_abstraction",
  "facebookresearch/ToMe tome/utils.py (benchmark, parse_r) plus a fork's event-based latency helper", [
    C("device: torch.device = 0,", "device_type", "replace", False,
      "device: torch.device = \"npu:0\",",
      "a bare ordinal is read as cuda:0 on older torch (newer torch maps it to the current accelerator, which would "
      "be npu); callers in this repo pass the device explicitly. Unconfirmed which behaviour the target torch has"),
    C('is_cuda = torch.device(device).type == "cuda"', "device_type", "replace", True,
      'is_accel = torch.device(device).type in ("cuda", "npu")',
      "on npu the sync branch is skipped, so the timed loop measures only async launches (silently wrong im/s)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", SYNC_NOTE + " (warm-up boundary, reached once is_cuda covers npu)"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(device)", SYNC_NOTE),
    C('device: str = "cuda",', "device_type", "replace", True,
      'device: str = "npu",', "default device string of benchmark_latency"),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "starter = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created on an NPU host; torch.npu.Event is the counterpart"),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "ender = torch.npu.Event(enable_timing=True)", "same as starter"),
])

E("tome_bench", "examples/benchmark_timm.py", "explicit_replacement",
  "ToMe README/notebook benchmark (timm + tome.patch.timm + tome.utils.benchmark) as a sweep script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('parser.add_argument("--device", type=str, default="cuda:0")', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu:0")', "default device passed to tome.utils.benchmark"),
    C("images = images.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "images = images.npu(non_blocking=True)", "Tensor.cuda() raises without CUDA"),
    C("target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(non_blocking=True)", "Tensor.cuda() raises without CUDA"),
    C("with torch.cuda.amp.autocast(enabled=use_fp16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=use_fp16):", AMP_NOTE),
    C("pin_memory=True,", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device=\"npu\",", PIN_NOTE),
    C("ProfilerActivity.CUDA", "torch_cuda_api", "replace", False,
      "with torch_npu.profiler.profile(activities=[torch_npu.profiler.ProfilerActivity.CPU, torch_npu.profiler.ProfilerActivity.NPU], record_shapes=True) as prof:",
      "CUDA activity records no device kernels on NPU; torch_npu.profiler / ProfilerActivity.NPU does. Whether the "
      "unchanged line errors or is silently empty is unconfirmed; only the --profile path"),
    C('print(f"Benchmarking on {torch.cuda.get_device_name(0)}', "torch_cuda_api", "replace", True,
      'print(f"Benchmarking on {torch.npu.get_device_name(0)} | torch {torch.__version__}")',
      "get_device_name initialises CUDA and raises on an NPU host"),
    C("model = model.cuda().half()", "tensor_to_device", "replace", True,
      "model = model.npu().half()", "Module.cuda() raises without CUDA (fp16 path)"),
    C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", False,
      "model = torch.compile(model, backend=\"npugraphs\")",
      "max-autotune relies on Triton GPU autotuning; on torch_npu use the default Inductor/npugraphs backend. "
      "Only with --compile; effect unconfirmed"),
    C("mem_gb = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      "mem_gb = torch.npu.max_memory_allocated() / 1024 ** 3",
      "returns 0 without an initialised CUDA context: wrong number in the log, not a crash"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "resolves the current CUDA device and raises on an NPU host"),
    C('"gpu": torch.cuda.get_device_name(0),', "torch_cuda_api", "replace", True,
      '"gpu": torch.npu.get_device_name(0),', "get_device_name raises without CUDA"),
])

E("tome_sweep_json", "configs/benchmark_sweep.json", "explicit_replacement",
  "JSON sweep config of a ToMe benchmarking fork (read by examples/benchmark_timm.py --config)", [
    C('"device": "cuda:0",', "device_type", "replace", True, '"device": "npu:0",',
      "becomes args.device and the benchmark device"),
    C('"CUDA_VISIBLE_DEVICES": "0",', "env_var", "replace", True, '"ASCEND_RT_VISIBLE_DEVICES": "0",',
      "the script exports this env before device init; CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime"),
    C('"CUBLAS_WORKSPACE_CONFIG": ":4096:8"', "env_var", "removal", False, None,
      "cuBLAS determinism knob; meaningless on NPU, harmless if left"),
])

# ----------------------------------------------------------------------------------------------------------------
# DynamicViT (raoyongming/DynamicViT, DeiT-based)
# ----------------------------------------------------------------------------------------------------------------
E("dyvit_main", "main.py", "explicit_replacement",
  "raoyongming/DynamicViT main.py (DeiT main with pruning-loss criterion and teacher)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu',", "torch.device(args.device) drives every .to(device)"),
    C("=pin_memory=args.pin_mem,", "pin_memory", "replace", False,
      "pin_memory=args.pin_mem, pin_memory_device='npu',", PIN_NOTE),
    C("pin_memory=args.pin_mem, drop_last=False", "pin_memory", "replace", False,
      "num_workers=args.num_workers, pin_memory=args.pin_mem, pin_memory_device='npu', drop_last=False", PIN_NOTE),
    C("loss_scaler = NativeScaler()", "amp", "replace", False,
      "loss_scaler = utils.NativeScalerWithGradNormCount()  # torch.npu.amp.GradScaler inside", NATIVE_SCALER_NOTE),
])

E("dyvit_engine", "engine.py", "explicit_replacement",
  "raoyongming/DynamicViT engine.py (train_one_epoch / evaluate)", [
    C("with torch.cuda.amp.autocast(enabled=amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=amp):", AMP_NOTE),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", SYNC_NOTE),
    C("with torch.cuda.amp.autocast(enabled=amp and device.type == 'cuda'):", "amp", "replace", False,
      "with torch.autocast(device_type=device.type, enabled=amp and device.type in ('cuda', 'npu')):",
      "the device check makes evaluation fall back to fp32 on npu: correct results, only slower"),
])

E("dyvit_utils", "utils.py", "explicit_replacement",
  "DeiT/ConvNeXt utils.py as vendored by DynamicViT (MetricLogger, init_distributed_mode, NativeScalerWithGradNormCount)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float32, device='npu')",
      "'cuda' tensor fails on NPU; HCCL all_reduce also lists no fp64 support (bf16/fp16/fp32/int32/int64/bool)"),
    C("log_gpu_mem = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "log_gpu_mem = torch.npu.is_available()", "False on NPU: memory column silently dropped from the log"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))", "logging only; unreachable until the guard above is ported"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()", "device_count() is 0 on NPU host -> ZeroDivisionError (SLURM path)"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)", "raises without CUDA; NPU needs torch.npu.set_device(local_rank)"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True,
      "args.dist_backend = 'hccl'", "NCCL is unavailable on Ascend; HCCL is the collective backend"),
    C("x_reduce = torch.tensor(x).cuda()", "tensor_to_device", "replace", True,
      "x_reduce = torch.tensor(x).npu()", "Tensor.cuda() raises without CUDA"),
    C("images = images.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "images = images.to(device, non_blocking=True)", "throughput(): Tensor.cuda() raises without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", SYNC_NOTE),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)", SYNC_NOTE),
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "self._scaler = torch.npu.amp.GradScaler()",
      "torch.cuda.amp.GradScaler disables itself without CUDA: fp16 training would run with no loss scaling"),
])

E("dyvit_model", "models/dyvit.py", "explicit_replacement",
  "raoyongming/DynamicViT models/dyvit.py (PredictorLG, softmax_with_policy, VisionTransformerDiffPruning)", [
    C("hard_keep_decision = F.gumbel_softmax(pred_score, hard=True)[:, :, 0:1] * prev_decision",
      "unsupported_op_workaround", "replace", False,
      "hard_keep_decision = gumbel_softmax_npu(pred_score, hard=True)[:, :, 0:1] * prev_decision  # -log(-log(U)) noise + one-hot",
      "Ascend's 2.7.1 list marks F.gumbel_softmax unsupported, yet its pieces (exponential_, log, softmax, scatter) "
      "have NPU kernels; a hand-written Gumbel noise is the safe form. Unconfirmed which way it behaves at runtime"),
    C(").cuda().eval()", "tensor_to_device", "replace", True, ").npu().eval()",
      "__main__ speed check: Module.cuda() raises without CUDA"),
    C("x = torch.randn(128, 3, 224, 224).cuda()", "tensor_to_device", "replace", True,
      "x = torch.randn(128, 3, 224, 224).npu()", "Tensor.cuda() raises without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", SYNC_NOTE),
    C("torch.cuda.synchronize(); dt = time.time() - t0", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(); dt = time.time() - t0", SYNC_NOTE),
])

FUSED_NOTE = ("apex fused optimizers are CUDA kernels (not built by Ascend apex); torch_npu.optim ships NpuFused* "
              "counterparts. Only reached with --opt fused*; default adamw is unaffected")
E("dyvit_optim", "optim_factory.py", "explicit_replacement",
  "BEiT/ConvNeXt optim_factory.py as vendored by DynamicViT (timm optimizers + apex fused branch)", [
    C("from apex.optimizers import FusedNovoGrad, FusedAdam, FusedLAMB, FusedSGD", "fused_optimizer", "replace", False,
      "from torch_npu.optim import NpuFusedSGD, NpuFusedAdam, NpuFusedAdamW, NpuFusedLamb",
      "guarded import (has_apex=False if missing); " + FUSED_NOTE),
    C("assert has_apex and torch.cuda.is_available(), 'APEX and CUDA required for fused optimizers'",
      "torch_cuda_api", "replace", False,
      "assert has_apex and torch.npu.is_available(), 'torch_npu required for fused optimizers'",
      "fails for every fused* choice on NPU; only reached with --opt fused*"),
    C("optimizer = FusedSGD(parameters, momentum=args.momentum, nesterov=True, **opt_args)", "fused_optimizer",
      "replace", False, "optimizer = NpuFusedSGD(parameters, momentum=args.momentum, nesterov=True, **opt_args)",
      FUSED_NOTE),
    C("optimizer = FusedSGD(parameters, momentum=args.momentum, nesterov=False, **opt_args)", "fused_optimizer",
      "replace", False, "optimizer = NpuFusedSGD(parameters, momentum=args.momentum, nesterov=False, **opt_args)",
      FUSED_NOTE),
    C("optimizer = FusedAdam(parameters, adam_w_mode=False, **opt_args)", "fused_optimizer", "replace", False,
      "optimizer = NpuFusedAdam(parameters, **opt_args)", FUSED_NOTE),
    C("optimizer = FusedAdam(parameters, adam_w_mode=True, **opt_args)", "fused_optimizer", "replace", False,
      "optimizer = NpuFusedAdamW(parameters, **opt_args)", FUSED_NOTE),
    C("optimizer = FusedLAMB(parameters, **opt_args)", "fused_optimizer", "replace", False,
      "optimizer = NpuFusedLamb(parameters, **opt_args)", FUSED_NOTE),
    C("optimizer = FusedNovoGrad(parameters, **opt_args)", "fused_optimizer", "replace", False,
      "optimizer = NovoGrad(parameters, **opt_args)",
      "no NovoGrad in torch_npu.optim: fall back to timm's pure-PyTorch NovoGrad"),
])

E("dyvit_sh", "scripts/train_dynamicvit_deit.sh", "explicit_replacement",
  "DynamicViT README training commands wrapped in a launcher script (torch.distributed.launch, 8 GPUs)", [
    C("=set -euo pipefail", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "device selection is ignored by the Ascend runtime unless ASCEND_RT_VISIBLE_DEVICES is used"),
    C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None,
      "NCCL-only logging knob; no effect with HCCL"),
    C("nvidia-smi --query-gpu=name,memory.total --format=csv", "torch_cuda_api", "replace", True,
      'npu-smi info | tee "${OUTPUT_DIR}/npus.txt"',
      "nvidia-smi does not exist on an Ascend host and `set -e` + pipefail abort the script"),
    C("--resume \"${OUTPUT_DIR}/checkpoint.pth\" --eval --device cuda", "device_type", "replace", True,
      "--resume \"${OUTPUT_DIR}/checkpoint.pth\" --eval --device npu", "explicit --device cuda overrides the default"),
])

E("dockerfile", "docker/Dockerfile", "explicit_replacement",
  "DeiT/DynamicViT-style training Dockerfile on an NGC PyTorch base with NVIDIA apex", [
    C("FROM nvcr.io/nvidia/pytorch:21.06-py3", "custom_cuda_extension", "replace", True,
      "FROM ascendai/cann:8.5.0-910b-ubuntu22.04-py3.11",
      "NGC CUDA image has no CANN toolkit/driver user-space; needs an Ascend CANN base image"),
    C('ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0 7.5 8.0 8.6+PTX"', "env_var", "removal", False, None,
      "nvcc arch list for extension builds; meaningless without CUDA"),
    C('ENV FORCE_CUDA="1"', "env_var", "removal", False, None, "forces CUDA extension builds; nothing to build on NPU"),
    C("RUN git clone https://github.com/NVIDIA/apex /opt/apex && cd /opt/apex && \\", "custom_cuda_extension",
      "replace", True, "RUN git clone https://gitee.com/ascend/apex /opt/apex && cd /opt/apex && \\",
      "Ascend apex ('Apex Patch') builds NVIDIA apex with its NPU patch; NVIDIA's CUDA build cannot work here"),
    C('--global-option="--cpp_ext" --global-option="--cuda_ext" ./', "custom_cuda_extension", "replace", True,
      "bash scripts/build.sh --python=3.11 && pip install --no-cache-dir apex/dist/apex-*.whl",
      "--cuda_ext needs nvcc: the image build fails on a CANN base"),
    C("RUN pip install --no-cache-dir -r /workspace/requirements.txt", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torch-npu==2.1.0.post12",
      "the CANN base image has no torch/torch_npu; wheel version must equal the torch version"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=all",
      "NVIDIA container-runtime hint; Ascend's runtime reads ASCEND_VISIBLE_DEVICES (or devices are passed with "
      "--device /dev/davinciN). Unconfirmed whether anything breaks if left"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container-runtime only"),
    C("ENV NCCL_DEBUG=WARN", "env_var", "removal", False, None, "NCCL-only logging knob"),
])

# ----------------------------------------------------------------------------------------------------------------
# A-ViT (NVlabs/A-ViT)
# ----------------------------------------------------------------------------------------------------------------
ACT_NOTE = "A-ViT allocates its halting state with .cuda() inside forward: raises without CUDA; use the input's device"
E("avit_model", "timm/models/act_vision_transformer.py", "explicit_replacement",
  "NVlabs/A-ViT timm/models/act_vision_transformer.py (Block_ACT, forward_features_act_token)", [
    C("self.distr_target = torch.Tensor(get_distribution_target(mean=args.distr_target_depth)).cuda()",
      "tensor_to_device", "replace", True,
      "self.distr_target = torch.Tensor(get_distribution_target(mean=args.distr_target_depth)).npu()",
      "plain attribute (not a buffer), so model.to(device) will not move it; .cuda() raises on NPU"),
    C("self.kl_loss = nn.KLDivLoss(reduction='batchmean').cuda()", "tensor_to_device", "replace", False,
      "self.kl_loss = nn.KLDivLoss(reduction='batchmean')",
      "KLDivLoss has no parameters/buffers, so Module.cuda() is a no-op even without CUDA; edit for consistency only"),
    C("self.c_token = Variable(torch.zeros(bs, self.total_token_cnt).cuda())", "tensor_to_device", "replace", True,
      "self.c_token = torch.zeros(bs, self.total_token_cnt, device=x.device)", ACT_NOTE),
    C("self.R_token = Variable(torch.ones(bs, self.total_token_cnt).cuda())", "tensor_to_device", "replace", True,
      "self.R_token = torch.ones(bs, self.total_token_cnt, device=x.device)", ACT_NOTE),
    C("self.mask_token = Variable(torch.ones(bs, self.total_token_cnt).cuda())", "tensor_to_device", "replace", True,
      "self.mask_token = torch.ones(bs, self.total_token_cnt, device=x.device)", ACT_NOTE),
    C("self.rho_token = Variable(torch.zeros(bs, self.total_token_cnt).cuda())", "tensor_to_device", "replace", True,
      "self.rho_token = torch.zeros(bs, self.total_token_cnt, device=x.device)", ACT_NOTE),
    C("self.counter_token = Variable(torch.ones(bs, self.total_token_cnt).cuda())", "tensor_to_device", "replace",
      True, "self.counter_token = torch.ones(bs, self.total_token_cnt, device=x.device)", ACT_NOTE),
    C("h_token = nn.Parameter(torch.ones(bs, self.total_token_cnt).cuda())", "tensor_to_device", "replace", True,
      "h_token = nn.Parameter(torch.ones(bs, self.total_token_cnt, device=x.device))", ACT_NOTE + " (last layer)"),
])

E("avit_engine", "engine_act.py", "explicit_replacement",
  "NVlabs/A-ViT engine_act.py (ponder loss, distributional prior, tensorboard logging)", [
    C("with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():", AMP_NOTE),
    C("distr_prior_loss = torch.zeros(1).cuda()", "tensor_to_device", "replace", True,
      "distr_prior_loss = torch.zeros(1, device=device)", "Tensor.cuda() raises without CUDA (alpha == 0 path)"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", SYNC_NOTE),
    C("tf_writer.add_scalar('train/max_mem_gb', torch.cuda.max_memory_allocated() / 2 ** 30, step)",
      "torch_cuda_api", "replace", False,
      "tf_writer.add_scalar('train/max_mem_gb', torch.npu.max_memory_allocated() / 2 ** 30, step)",
      "returns 0 without CUDA: wrong tensorboard curve, no crash"),
    C("with torch.cuda.amp.autocast(enabled=args is not None and args.amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=args is not None and args.amp):", AMP_NOTE + " (evaluation)"),
])

E("avit_main", "main_act.py", "explicit_replacement",
  "NVlabs/A-ViT main_act.py (DeiT main with ACT args, own distributed setup, YAML defaults)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("parser.add_argument('--device', default='cuda', help='device to use for training / testing')",
      "device_type", "replace", True,
      "parser.add_argument('--device', default='npu', help='device to use for training / testing')",
      "default training device"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
    C("torch.distributed.init_process_group(backend='nccl', init_method=args.dist_url)", "dist_backend", "replace",
      True, "torch.distributed.init_process_group(backend='hccl', init_method=args.dist_url)",
      "NCCL backend unavailable on Ascend"),
    C("f'{torch.cuda.device_count()} GPUs visible)', flush=True)", "torch_cuda_api", "replace", False,
      "f'{torch.npu.device_count()} NPUs visible)', flush=True)", "log line only (prints 0)"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "silent no-op without CUDA; torch.manual_seed on the line above already seeds the NPU generator"),
    C("loader_kwargs = dict(num_workers=args.num_workers, pin_memory=args.pin_mem)", "pin_memory", "replace", False,
      "loader_kwargs = dict(num_workers=args.num_workers, pin_memory=args.pin_mem, pin_memory_device='npu')",
      PIN_NOTE),
    C("loss_scaler = NativeScaler()", "amp", "replace", False,
      "loss_scaler = NativeScalerNPU()  # wraps torch.npu.amp.GradScaler", NATIVE_SCALER_NOTE),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; only affects NPU memory fragmentation after eval"),
])

E("avit_sh", "scripts/train_avit_small.sh", "explicit_replacement",
  "A-ViT README launch command as a single/multi-node launcher script", [
    C("GPUS_PER_NODE=${GPUS_PER_NODE:-8}", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "ignored by the Ascend runtime"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=eth0",
      "multi-node: HCCL picks its host NIC by its own variable; a wrong NIC fails communicator setup"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
      "NCCL transport knob with no HCCL meaning (RoCE is configured with hccn_tool)"),
])

E("avit_yaml", "configs/avit_small_patch16_224.yaml", "explicit_replacement",
  "YAML defaults file for an A-ViT fork's main_act.py --config", [
    C("device: cuda", "device_type", "replace", True, "device: npu", "overrides the argparse default --device"),
])

# ----------------------------------------------------------------------------------------------------------------
# EViT (youweiliang/evit)
# ----------------------------------------------------------------------------------------------------------------
E("evit_helpers", "helpers.py", "explicit_replacement",
  "youweiliang/evit helpers.py (adjust_keep_rate, speed_test, get_macs, complement_idx, mask)", [
    C("x = torch.rand(batchsize, 3, *img_size).cuda()", "tensor_to_device", "replace", True,
      "x = torch.rand(batchsize, 3, *img_size).npu()", "Tensor.cuda() raises without CUDA"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", SYNC_NOTE),
    C("x = torch.rand(1, 3, *img_size).cuda()", "tensor_to_device", "replace", True,
      "x = torch.rand(1, 3, *img_size).npu()", "Tensor.cuda() raises without CUDA"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
    C("x = torch.rand(batchsize, 3, *img_size, device='cuda')", "device_type", "replace", True,
      "x = torch.rand(batchsize, 3, *img_size, device='npu')", "'cuda' device string fails on NPU"),
])

E("evit_visualize", "visualize_mask.py", "explicit_replacement",
  "EViT visualisation script (kept-token masks per stage)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("num_workers=4, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=4, pin_memory=True, pin_memory_device='npu')", PIN_NOTE),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "silently falls back to CPU on an NPU host"),
    C("images = images.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "images = images.to(device, non_blocking=True)", "Tensor.cuda() raises without CUDA"),
])

# ----------------------------------------------------------------------------------------------------------------
# EfficientViT (mit-han-lab/efficientvit)
# ----------------------------------------------------------------------------------------------------------------
E("effvit_setup", "efficientvit/apps/setup.py", "explicit_replacement",
  "mit-han-lab/efficientvit efficientvit/apps/setup.py (setup_dist_env, setup_seed, ...)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = gpu', "--gpu selection is ignored by the Ascend runtime"),
    C("torch.cuda.set_device(get_dist_local_rank())", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(get_dist_local_rank())", "raises without CUDA"),
    C("torch.cuda.manual_seed_all(manual_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(manual_seed)",
      "documented as safe (silently ignored) without CUDA; torch.manual_seed above already seeds the NPU"),
])

E("effvit_dist", "efficientvit/apps/utils/dist.py", "explicit_replacement",
  "mit-han-lab/efficientvit efficientvit/apps/utils/dist.py (dist_init with torchpack fallback, sync_tensor)", [
    C('torch.distributed.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(backend="hccl")',
      "fails on NPU; the broad except then hides the error and tries torchpack instead"),
    C("dist.init()", "distributed_framework", "replace", False,
      'torch.distributed.init_process_group(backend="hccl", rank=dist.rank(), world_size=dist.size())',
      "torchpack's MPI-based init is believed to create an NCCL group; unconfirmed in knowledge. Launching with "
      "torchrun avoids this path"),
    C("tensor = torch.Tensor(1).fill_(tensor).cuda()", "tensor_to_device", "replace", True,
      "tensor = torch.Tensor(1).fill_(tensor).npu()",
      "sync_tensor on Python scalars (mixup lam / active_id) hits .cuda() every training step"),
])

E("effvit_trainer", "efficientvit/apps/trainer/base.py", "explicit_replacement",
  "mit-han-lab/efficientvit efficientvit/apps/trainer/base.py (Trainer: DDP, EMA, GradScaler, checkpoints)", [
    C("self.model = model.cuda()", "tensor_to_device", "replace", True, "self.model = model.npu()",
      "Module.cuda() raises without CUDA"),
    C("self.model.cuda(),", "tensor_to_device", "replace", True, "self.model.npu(),",
      "DDP wrapping of the model"),
    C('if amp == "bf16" and not torch.cuda.is_bf16_supported():', "device_capability_check", "replace", True,
      'if amp == "bf16" and not torch.npu.is_bf16_supported():',
      "the CUDA query cannot see the NPU: it raises or reports False, silently downgrading bf16 (which A2 supports) "
      "to fp16"),
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.enable_amp)", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler(enabled=self.enable_amp)",
      "CUDA GradScaler disables itself without CUDA: no loss scaling for fp16 runs"),
    C("feed_dict[key] = feed_dict[key].cuda()", "tensor_to_device", "replace", True,
      "feed_dict[key] = feed_dict[key].npu()", "Tensor.cuda() raises without CUDA"),
])

E("effvit_cls_trainer", "efficientvit/clscore/trainer/cls_trainer.py", "explicit_replacement",
  "mit-han-lab/efficientvit efficientvit/clscore/trainer/cls_trainer.py (ClsTrainer with mixup / mesa)", [
    C("images, labels = images.cuda(), labels.cuda()", "tensor_to_device", "replace", True,
      "images, labels = images.npu(), labels.npu()", "Tensor.cuda() raises without CUDA (validation)"),
    C('images = feed_dict["data"].cuda()', "tensor_to_device", "replace", True,
      'images = feed_dict["data"].npu()', "Tensor.cuda() raises without CUDA"),
    C('labels = feed_dict["label"].cuda()', "tensor_to_device", "replace", True,
      'labels = feed_dict["label"].npu()', "Tensor.cuda() raises without CUDA"),
    C('with torch.autocast("cuda", dtype=self.amp_dtype, enabled=self.enable_amp):', "amp", "replace", True,
      'with torch.autocast("npu", dtype=self.amp_dtype, enabled=self.enable_amp):', AMP_NOTE + " (mesa teacher)"),
    C('with torch.autocast(device_type="cuda", dtype=self.amp_dtype, enabled=self.enable_amp):', "amp", "replace",
      True, 'with torch.autocast(device_type="npu", dtype=self.amp_dtype, enabled=self.enable_amp):', AMP_NOTE),
])

E("effvit_ops", "efficientvit/models/nn/ops.py", "explicit_replacement",
  "mit-han-lab/efficientvit efficientvit/models/nn/ops.py (ConvLayer, MBConv, LiteMLA, EfficientViTBlock)", [
    C("from torch.cuda.amp import autocast", "amp", "replace", True, "from torch_npu.npu.amp import autocast",
      "@autocast(enabled=False) is meant to keep LiteMLA's ReLU linear attention in fp32; the CUDA decorator does not "
      "disable NPU autocast, so the kv/q matmuls would run in fp16/bf16 (overflow/precision loss, silently)"),
])

E("effvit_norm", "efficientvit/models/nn/norm.py", "device_branch_or_abstraction",
  "mit-han-lab/efficientvit efficientvit/models/nn/norm.py (LayerNorm2d, TritonRMSNorm2d, reset_bn)", [
    C("if not x.is_cuda:", "npu_fused_op", "add_branch", False,
      "if x.device.type == \"npu\": return torch_npu.npu_rms_norm(x.permute(0, 2, 3, 1), self.weight, self.eps)[0].permute(0, 3, 1, 2) + self.bias.view(1, -1, 1, 1)",
      "NPU tensors already take the correct eager fallback; torch_npu.npu_rms_norm is the fused replacement for the "
      "Triton kernel (performance only)"),
])

TRITON_NOTE = ("Triton launch tuning written for NVIDIA warps/CTAs; triton-ascend maps programs to AI cores and needs "
               "its own tuning. Only matters if this kernel is enabled on NPU; unconfirmed details")
E("effvit_triton", "efficientvit/models/nn/triton_rms_norm.py", "kernel_rewrite",
  "mit-han-lab/efficientvit efficientvit/models/nn/triton_rms_norm.py (fused RMSNorm2d Triton kernels)", [
    C('rrms = torch.empty((M, N), dtype=torch.float32, device="cuda")', "device_type", "replace", True,
      "rrms = torch.empty((M, N), dtype=torch.float32, device=x.device)",
      "hard-coded CUDA buffer: any NPU launch of this Function fails"),
    C("num_warps = min(max(BLOCK_SIZE // 256, 1), 8)", "triton_kernel_tuning", "replace", False,
      "num_warps = 1  # ignored by triton-ascend; parallelism comes from the grid", TRITON_NOTE),
    C("_rms_norm_2d_fwd_fused[(M * num_blocks,)](  #", "triton_kernel_tuning", "replace", False,
      "_rms_norm_2d_fwd_fused[(min(M * num_blocks, num_aicore),)](  # loop over blocks inside the kernel",
      TRITON_NOTE + " (grid sized to the core count)"),
    C("num_ctas=1,", "triton_kernel_tuning", "removal", False, None,
      "num_ctas is a Hopper cluster-launch option; " + TRITON_NOTE),
    C("_rms_norm_2d_bwd_dx_fused[(M * num_blocks,)](  #", "triton_kernel_tuning", "replace", False,
      "_rms_norm_2d_bwd_dx_fused[(min(M * num_blocks, num_aicore),)](  #", TRITON_NOTE + " (backward)"),
])

E("effvit_eval", "applications/efficientvit_cls/eval_efficientvit_cls_model.py", "explicit_replacement",
  "mit-han-lab/efficientvit applications/efficientvit_cls/eval_efficientvit_cls_model.py", [
    C("=import torch.utils.data", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device_list = range(torch.cuda.device_count())", "torch_cuda_api", "replace", True,
      "device_list = range(torch.npu.device_count())",
      "0 on an NPU host: --gpu all becomes an empty device list, which is then exported as the visible-device list "
      "(hides every device once that env var is ported) and breaks the batch sizing"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu', "ignored by the Ascend runtime"),
    C("pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device=\"npu\",", PIN_NOTE),
    C("model = torch.nn.DataParallel(model).cuda()", "distributed_framework", "replace", True,
      "model = model.npu()  # DataParallel is unsupported on NPU; single device (or DDP)",
      "torch.nn.DataParallel is marked unsupported on Ascend, and .cuda() raises"),
    C("images, labels = images.cuda(), labels.cuda()", "tensor_to_device", "replace", True,
      "images, labels = images.npu(), labels.npu()", "Tensor.cuda() raises without CUDA"),
])

E("effvit_export", "assets/onnx_export.py", "explicit_replacement",
  "EfficientViT ONNX export + TensorRT build/benchmark helper (assets/ / deployment scripts)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('cmd = ["trtexec", f"--onnx={onnx_path}"', "custom_cuda_extension", "replace", True,
      'cmd = ["atc", f"--model={onnx_path}", "--framework=5", f"--output={os.path.splitext(engine_path)[0]}", "--soc_version=Ascend910B"]',
      "trtexec/TensorRT do not exist on Ascend; ATC converts ONNX to an .om model (--build_trt path)"),
    C("import tensorrt as trt", "custom_cuda_extension", "replace", True,
      "from ais_bench.infer.interface import InferSession",
      "TensorRT runtime is NVIDIA-only; the whole benchmark_trt body becomes an .om inference loop (labelled at its imports)"),
    C("import pycuda.autoinit  # noqa: F401", "custom_cuda_extension", "removal", True, None,
      "pycuda needs a CUDA driver; creates a CUDA context on import"),
    C("import pycuda.driver as cuda", "custom_cuda_extension", "removal", True, None,
      "pycuda device buffers/streams have no NPU meaning"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", SYNC_NOTE),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)", SYNC_NOTE),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "silently benchmarks on CPU on an NPU host (export itself would still work)"),
])

E("effvit_train_py", "train_cls_model.py", "explicit_replacement",
  "mit-han-lab/efficientvit train_cls_model.py (entry point; device work lives in apps/setup.py and the trainer)", [
    C("=import os", "import_torch_npu", "npu_only_addition", True, "import torch_npu  # noqa: F401",
      IMPORT_NOTE + "; this entry point never imports torch itself"),
])

E("effvit_sh", "scripts/train_cls_imagenet.sh", "explicit_replacement",
  "EfficientViT README training/eval commands (torchpack dist-run) as a launcher script", [
    C("=set -e", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE),
    C("export CUDA_VISIBLE_DEVICES=$GPUS", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=$GPUS",
      "ignored by the Ascend runtime"),
    C("export TORCH_CUDNN_V8_API_ENABLED=1", "env_var", "removal", False, None, "cuDNN-only switch"),
    C('torchpack dist-run -np "$NGPU" \\', "distributed_framework", "replace", False,
      'torchrun --nnodes 1 --nproc_per_node="$NGPU" \\',
      "torchpack dist-run is an mpirun wrapper whose init path is believed to be NCCL-bound (unconfirmed); torchrun "
      "sets the env that dist_init's HCCL path expects"),
])

E("requirements", "requirements.txt", "explicit_replacement",
  "mit-han-lab/efficientvit requirements (CUDA wheel index, triton, onnxruntime-gpu, TensorRT)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "custom_cuda_extension", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu is installed on top of the CPU torch build (x86: download.pytorch.org/whl/cpu; aarch64: PyPI)"),
    C("torch==2.2.1", "import_torch_npu", "replace", True, "torch==2.1.0",
      "no torch_npu wheel exists for torch 2.2.1 (only 2.2.0, EOL); pin a torch that has one"),
    C("=torchvision", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "torch_npu wheel = torch version + .postN"),
    C("triton==2.2.0", "triton_kernel_tuning", "replace", False, "triton-ascend",
      "CUDA Triton cannot target NPU; triton-ascend is the Ascend backend. The Triton kernel is only reached for CUDA "
      "tensors, so not required for a working port"),
    C("onnxruntime-gpu==1.17.1", "custom_cuda_extension", "replace", False, "onnxruntime==1.17.1",
      "CUDA execution provider is useless on Ascend; only used for export checks. Availability on aarch64 unconfirmed"),
    C("tensorrt==8.6.1", "custom_cuda_extension", "removal", False, None,
      "NVIDIA-only deployment runtime (optional deployment section); ATC/.om replaces it"),
    C("=pycuda", "custom_cuda_extension", "removal", True, None,
      "pycuda builds from source against the CUDA toolkit, so `pip install -r` fails on an Ascend host"),
])

E("environment_yml", "environment.yml", "explicit_replacement",
  "conda environment.yml of a ToMe/timm-0.4 era research repo (pytorch + nvidia channels, cudatoolkit)", [
    C("=- nvidia", "custom_cuda_extension", "removal", False, None,
      "NVIDIA CUDA package channel; unused once CUDA packages are gone"),
    C("- pytorch=1.12.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "no torch_npu release exists for torch 1.12; move to a torch with a torch_npu wheel"),
    C("- torchvision=0.13.1", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "must match the new torch pin or the solve fails"),
    C("- cudatoolkit=11.3", "custom_cuda_extension", "replace", False, "- cpuonly",
      "selects the CUDA pytorch build; torch_npu expects the CPU build. Whether CUDA torch breaks torch_npu is "
      "unconfirmed"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post12",
      "torch_npu comes from pip; wheel version must equal the torch version"),
])
