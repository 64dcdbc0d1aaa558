# Labels for probe433 (dynamic / efficient inference: early exit and token pruning/merging).
# One C(...) per upstream line a careful porter edits for Ascend NPU (torch_npu), explicit port style.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: explicit port imports torch_npu right after torch so torch.npu / 'npu' devices "
               "exist (autoload only since torch_npu 2.5.1)")
SET_ENV_NOTE = ("launcher: source CANN's set_env.sh before python; not required when the host/container "
                "profile already sources it")

# ---------------------------------------------------------------- DeeBERT (castorini/DeeBERT)
E("deebert_run_glue", "examples/run_highway_glue.py", "explicit_replacement",
  "castorini/DeeBERT examples/run_highway_glue.py (HF run_glue 2.x with highway off-ramps, apex fp16, n_gpu/DataParallel/DDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)",
      "lazy no-op on a host without CUDA; torch.manual_seed just above is expected to seed the NPU generator too "
      "(unconfirmed in knowledge), so only reproducibility hygiene"),
    C('device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")', "device_type",
      "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")',
      "single-process path would silently run the whole GLUE fine-tune/eval on CPU"),
    C("args.n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "args.n_gpu = min(torch.npu.device_count(), 1)  # nn.DataParallel is unsupported on NPU; use --local_rank/hccl",
      "unported it reports 0 and the script still runs on one device; porting to the raw NPU count would route "
      "into torch.nn.DataParallel, which is ✘ on Atlas A2/A3, hence the clamp"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "distributed branch; torch.cuda.set_device fails without CUDA"),
    C('device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", args.local_rank)', "per-rank device for DDP"),
    C('torch.distributed.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(backend="hccl")', "NCCL does not exist on Ascend; HCCL backend"),
])

E("deebert_modeling", "transformers/modeling_highway_bert.py", "explicit_replacement",
  "castorini/DeeBERT transformers/modeling_highway_bert.py (entropy-based off-ramps, HighwayException)", [])

E("deebert_train_sh", "scripts/train_highway.sh", "explicit_replacement",
  "castorini/DeeBERT scripts/train_highway.sh", [
    C("export CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; pins device 0, which a single process uses anyway"),
    C("python -u run_highway_glue.py \\", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE),
])

E("deebert_eval_entropy_sh", "scripts/eval_entropy.sh", "explicit_replacement",
  "castorini/DeeBERT scripts/eval_entropy.sh (entropy threshold sweep)", [
    C("export CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0",
      "ignored on Ascend; device 0 is the default for a single process, so behaviour is unchanged"),
    C("for ENTROPY in $ENTROPIES; do", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE),
])

E("deebert_requirements", "requirements.txt", "explicit_replacement",
  "castorini/DeeBERT requirements (pytorch-transformers 2.x era)", [
    C("torch>=1.2.0", "import_torch_npu", "replace", False,
      "torch==2.1.0  # with torch-npu==2.1.0.post12 (wheel version must equal torch's)",
      "an open-ended torch pin cannot pair with torch_npu, whose wheel must match torch exactly (matrix §1.2); "
      "packaging only, the environment may be provisioned separately"),
])

# ---------------------------------------------------------------- PABEE (JetRunner/PABEE)
E("pabee_run_glue", "run_glue_with_pabee.py", "explicit_replacement",
  "JetRunner/PABEE run_glue_with_pabee.py (HF examples/research_projects/bert-loses-patience)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)",
      "no-op without CUDA; torch.manual_seed is expected to cover the NPU generator (unconfirmed)"),
    C('optimizer.load_state_dict(torch.load(os.path.join(args.model_name_or_path, "optimizer.pt")))',
      "tensor_to_device", "replace", False,
      'optimizer.load_state_dict(torch.load(os.path.join(args.model_name_or_path, "optimizer.pt"), map_location="cpu"))',
      "only resuming a GPU-saved optimizer state fails (CUDA deserialisation); NPU-saved checkpoints load fine"),
    C('device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")', "device_type",
      "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")',
      "otherwise training and patience sweeps silently run on CPU"),
    C("args.n_gpu = torch.cuda.device_count() if not args.no_cuda else 0", "torch_cuda_api", "replace", False,
      "args.n_gpu = min(torch.npu.device_count(), 1) if not args.no_cuda else 0",
      "clamped so nn.DataParallel (✘ on NPU) is never reached; unported value 0 still runs on one device"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", ""),
    C('device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", args.local_rank)', ""),
    C('torch.distributed.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(backend="hccl")', ""),
])

E("pabee_modeling_albert", "pabee/modeling_pabee_albert.py", "explicit_replacement",
  "JetRunner/PABEE pabee/modeling_pabee_albert.py (patience-based early exit)", [])

E("pabee_test", "test_run_glue_with_pabee.py", "explicit_replacement",
  "HF research_projects/bert-loses-patience test_run_glue_with_pabee.py", [])

E("pabee_run_sh", "run_pabee_albert.sh", "explicit_replacement",
  "JetRunner/PABEE README launch commands as a shell script", [
    C("export CUDA_VISIBLE_DEVICES=$GPU", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=$GPU",
      "user-selected device: on Ascend the CUDA mask is ignored and every run silently lands on npu:0"),
    C("OUT=./output/albert-base-v2/${TASK_NAME}", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE),
])

# ---------------------------------------------------------------- DynamicViT (raoyongming/DynamicViT)
E("dyvit_main", "main.py", "explicit_replacement",
  "raoyongming/DynamicViT main.py (ConvNeXt/DeiT-style trainer with teacher distillation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu',",
      "torch.device(args.device) feeds model/teacher/batches; 'cuda' fails on an NPU host"),
])

E("dyvit_engine", "engine.py", "explicit_replacement",
  "raoyongming/DynamicViT engine.py (train_one_epoch/evaluate with --use_amp)", [
    C("with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
      "CUDA autocast disables itself without CUDA, so --use_amp silently trains in fp32"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "per-iteration sync; raises on a torch build without CUDA"),
    C("with torch.cuda.amp.autocast(dtype=torch.float16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(dtype=torch.float16):", "evaluation autocast, same reasoning"),
])

E("dyvit_utils", "utils.py", "explicit_replacement",
  "raoyongming/DynamicViT utils.py (DeiT/BEiT/ConvNeXt helpers: MetricLogger, init_distributed_mode, NativeScalerWithGradNormCount)", [
    C("from torch._six import inf", "unsupported_op_workaround", "replace", True, "from torch import inf",
      "torch._six was removed in torch 2.0 and every current torch_npu wheel pairs with torch >= 2.1"),
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "tensor_to_device",
      "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float32, device='npu')",
      "all_reduce over HCCL needs an NPU tensor, and Ascend's list gives all_reduce dtypes without fp64"),
    C("if torch.cuda.is_available():  # report peak GPU memory in the log line", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():  # report peak NPU memory in the log line", "logging only"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "logging only"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))", "logging only"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()",
      "SLURM path: CUDA device count is 0 on an NPU host, so this is a modulo-by-zero"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)", ""),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'", ""),
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "self._scaler = torch.npu.amp.GradScaler()",
      "CUDA GradScaler disables itself without CUDA, so fp16 losses go unscaled"),
])

E("dyvit_model", "models/dyvit.py", "explicit_replacement",
  "raoyongming/DynamicViT models/dyvit.py (PredictorLG, batch_index_select, Gumbel-softmax token masks)", [
    C("hard_keep_decision = F.gumbel_softmax(pred_score, hard=True)[:, :, 0:1] * prev_decision",
      "unsupported_op_workaround", "replace", False,
      "hard_keep_decision = gumbel_hard_sample(pred_score)[:, :, 0:1] * prev_decision  # -log(-log U) + argmax, straight-through",
      "F.gumbel_softmax is ✘ in Ascend's 2.7.1 list and in msFmkTransplt's unsupported list; it decomposes to "
      "exponential_/log/softmax which do have kernels, so the failure is unconfirmed"),
])

E("dyvit_losses", "losses.py", "explicit_replacement",
  "raoyongming/DynamicViT losses.py (DistillDiffPruningLoss_dynamic)", [])

E("dyvit_infer", "infer.py", "explicit_replacement",
  "raoyongming/DynamicViT infer.py (accuracy + throughput measurement)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("images = images.to('cuda', non_blocking=True)", "tensor_to_device", "replace", True,
      "images = images.to('npu', non_blocking=True)", ""),
    C("with torch.cuda.amp.autocast(enabled=use_fp16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=use_fp16):",
      "with --fp16 the reported throughput would silently be an fp32 number"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "end of warm-up"),
    C("torch.cuda.synchronize()  # wait for the timed iterations", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the timed iterations",
      "without a device sync the timer only measures asynchronous launches"),
    C("images = images.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "images = images.npu(non_blocking=True)", ""),
    C("target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(non_blocking=True)", ""),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ""),
    C("print('running on', torch.cuda.get_device_name(0))", "torch_cuda_api", "replace", True,
      "print('running on', torch.npu.get_device_name(0))", "queries device properties, raises without CUDA"),
])

E("dyvit_sh", "scripts/train_deit_s.sh", "explicit_replacement",
  "raoyongming/DynamicViT README training command (8-GPU torch.distributed.launch)", [
    C("export OMP_NUM_THREADS=4", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE),
])

# ---------------------------------------------------------------- EViT (youweiliang/evit)
E("evit_main", "main.py", "explicit_replacement",
  "youweiliang/evit main.py (DeiT trainer + keep-rate schedule, --test_speed)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu',", ""),
    C("loss_scaler = NativeScaler()", "amp", "replace", True,
      "loss_scaler = NpuNativeScaler()  # same interface, wraps torch.npu.amp.GradScaler",
      "timm's NativeScaler builds torch.cuda.amp.GradScaler, which disables itself without CUDA, so the "
      "autocast fp16 losses in engine.py are not scaled"),
])

E("evit_engine", "engine.py", "explicit_replacement",
  "youweiliang/evit engine.py (always-on AMP, keep-rate warm-up)", [
    C("with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
      "silently fp32 otherwise"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", ""),
    C("with torch.cuda.amp.autocast(enabled=True):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=True):", ""),
])

E("evit_helpers", "helpers.py", "explicit_replacement",
  "youweiliang/evit helpers.py (speed_test, get_macs, complement_idx, masks for visualisation)", [
    C("x = torch.rand(batchsize, 3, *img_size).cuda()", "tensor_to_device", "replace", True,
      "x = torch.rand(batchsize, 3, *img_size).npu()", ""),
    C("model = model.cuda().eval()", "tensor_to_device", "replace", True, "model = model.npu().eval()", ""),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "speed_test timing"),
    C("x = torch.rand(batchsize, 3, *img_size, device='cuda')", "tensor_to_device", "replace", True,
      "x = torch.rand(batchsize, 3, *img_size, device='npu')", ""),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "starter = torch.npu.Event(enable_timing=True)", ""),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "ender = torch.npu.Event(enable_timing=True)", ""),
    C("torch.cuda.synchronize()  # events are recorded asynchronously", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # events are recorded asynchronously", ""),
    C("x = torch.rand(1, 3, *img_size).cuda()", "tensor_to_device", "replace", True,
      "x = torch.rand(1, 3, *img_size).npu()", "get_macs traces the model that speed_test moved to the device"),
])

E("evit_model", "evit.py", "explicit_replacement",
  "youweiliang/evit evit.py (top-k [CLS]-attention token keeping, inattentive-token fusion)", [])

E("evit_utils", "utils.py", "explicit_replacement",
  "youweiliang/evit utils.py (DeiT distributed helpers)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "tensor_to_device",
      "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float32, device='npu')",
      "HCCL all_reduce needs an NPU tensor and is not listed for fp64"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))",
      "unguarded, but CUDA memory stats return 0 when CUDA was never initialised (unconfirmed); logging only"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()", "modulo by zero under SLURM otherwise"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)", ""),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'", ""),
])

E("evit_sh", "run_code.sh", "explicit_replacement",
  "youweiliang/evit run_code.sh (8-GPU fine-tune of EViT-DeiT-S)", [
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "ignored on Ascend, but exposing all 8 devices is what an 8-card host does by default"),
    C('echo "output dir: $logdir"', "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE),
])

E("evit_visualize", "visualize_mask.py", "explicit_replacement",
  "youweiliang/evit visualize_mask.py (kept-patch visualisation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = 'cuda:0'", "device_type", "replace", True, "device = 'npu:0'", "module-level device global"),
])

# ---------------------------------------------------------------- ToMe (facebookresearch/ToMe)
SCATTER_NOTE = ("aten scatter_reduce has no NPU kernel in any of the three op lists and is ✘ in Ascend's 2.7.1 "
                "API list, so it runs via the CPU fallback (host round-trip on the hot path of every merge); "
                "rewritten with scatter_add (sum/mean) - a performance change, not a failure")
E("tome_merge", "tome/merge.py", "explicit_replacement",
  "facebookresearch/ToMe tome/merge.py (bipartite soft matching, merge_wavg, merge_source)", [
    C("dst = dst.scatter_reduce(-2, dst_idx.expand(n, r, c), src, reduce=mode)", "unsupported_op_workaround",
      "replace", False, "dst = scatter_reduce_npu(dst, -2, dst_idx.expand(n, r, c), src, mode)", SCATTER_NOTE),
    C("dst = dst.scatter_reduce(dim=-2, index=dst_idx.expand(n, r, c), src=src, reduce=mode)",
      "unsupported_op_workaround", "replace", False,
      "dst = scatter_reduce_npu(dst, -2, dst_idx.expand(n, r, c), src, mode)", SCATTER_NOTE),
    C("dst = dst.scatter_reduce(-2, dst_idx.expand(B, r, C), src, reduce=mode)", "unsupported_op_workaround",
      "replace", False, "dst = scatter_reduce_npu(dst, -2, dst_idx.expand(B, r, C), src, mode)", SCATTER_NOTE),
])

E("tome_utils", "tome/utils.py", "explicit_replacement",
  "facebookresearch/ToMe tome/utils.py (benchmark, parse_r)", [
    C("device: torch.device = 0,", "device_type", "replace", True, 'device: torch.device = "npu:0",',
      "torch.device(0) means cuda:0, so the default benchmark(model) call targets CUDA"),
    C('is_cuda = torch.device(device).type == "cuda"', "device_type", "replace", True,
      'is_cuda = torch.device(device).type in ("cuda", "npu")',
      "gates the device syncs; on 'npu' they would be skipped and throughput silently inflated"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "warm-up boundary"),
    C("torch.cuda.synchronize()  # make sure all queued kernels", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # make sure all queued kernels finished before stopping the clock", ""),
])

E("tome_patch_timm", "tome/patch/timm.py", "explicit_replacement",
  "facebookresearch/ToMe tome/patch/timm.py (ToMeBlock/ToMeAttention class swap)", [])

E("tome_patch_swag", "tome/patch/swag.py", "explicit_replacement",
  "facebookresearch/ToMe tome/patch/swag.py", [])

E("tome_setup", "setup.py", "explicit_replacement", "facebookresearch/ToMe setup.py", [])

E("tome_bench_example", "examples/1_benchmark_timm.py", "explicit_replacement",
  "facebookresearch/ToMe examples/1_benchmark_timm.ipynb (exported as a script)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = "cuda:0"', "device_type", "replace", True, 'device = "npu:0"', ""),
    C('print(f"Benchmarking {model_name} on {torch.cuda.get_device_name(device)}")', "torch_cuda_api", "replace",
      True, 'print(f"Benchmarking {model_name} on {torch.npu.get_device_name(device)}")',
      "raises without CUDA"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op when CUDA was never initialised; only releases cached NPU memory"),
])
