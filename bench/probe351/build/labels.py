# Labels for probe351: knowledge tracing / educational data mining (CUDA -> Ascend NPU).
# One entry per upstream file; one change per line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# Recurring notes
IMPORT_NPU = ("entry script: register the NPU backend before any torch.npu / 'npu' device use "
              "(mandatory before torch_npu 2.5.1, still recommended after; these repos pin torch < 2.5)")
PYKT_DEVICE = ("module-level device picks 'cuda' only if torch.cuda.is_available(); on an NPU host it silently "
               "falls back to CPU for every tensor moved with .to(device)")
CUDNN_DET = ("cudnn flag has no effect on NPU (silent no-op); determinism on NPU needs "
             "torch.use_deterministic_algorithms / torch_npu deterministic settings")
CUBLAS_WS = "cuBLAS workspace setting for deterministic GEMMs; meaningless on NPU (silent no-op)"
REDUNDANT_SEED = ("torch.cuda.manual_seed* is a lazy no-op without CUDA; torch.manual_seed on the line above already "
                  "seeds the registered privateuse1 (npu) generator -- unconfirmed in the knowledge notes")
AMP_OFF = ("torch.cuda.amp on a host without CUDA warns and disables itself: training silently runs in fp32 "
           "(no speed-up, 2x activation memory); torch.npu.amp / torch.autocast('npu') is the NPU form")


# --------------------------------------------------------------------------------------------------
# pyKT (pykt-toolkit)
# --------------------------------------------------------------------------------------------------
E("pykt_wandb_train", "examples/wandb_train.py", "device_branch_or_abstraction",
  "pyKT examples/wandb_train.py (wandb sweep entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C("os.environ['CUBLAS_WORKSPACE_CONFIG'] = ':4096:2'", "env_var", "removal", False, None, CUBLAS_WS),
    C('device = "cpu" if not torch.cuda.is_available() else "cuda"', "device_type", "replace", False,
      'device = "cpu" if not torch.npu.is_available() else "npu"',
      "pyKT idiom, but `device` is never used in this script (init_model picks its own device) -- edited for "
      "consistency only"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu_id',
      "device pinning per sweep agent; CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime so every agent "
      "would land on NPU 0"),
])

E("pykt_utils", "pykt/utils/utils.py", "device_branch_or_abstraction",
  "pyKT pykt/utils/utils.py (set_seed, debug helpers)", [
    C("        if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "        if torch.npu.is_available():",
      "guard around extra accelerator seeding; on NPU the branch is skipped silently, which only matters for "
      "reproducibility (torch.manual_seed above already seeds npu -- unconfirmed)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)", REDUNDANT_SEED),
    C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
      "torch.use_deterministic_algorithms(True)", CUDNN_DET),
    C('os.environ["CUDA_LAUNCH_BLOCKING"] = "1"', "env_var", "replace", False,
      'os.environ["ASCEND_LAUNCH_BLOCKING"] = "1"',
      "debug/sync setting; silently ignored on NPU. ASCEND_LAUNCH_BLOCKING=1 is the equivalent but slows NPU "
      "training (msprof advisor flags it), so many ports simply drop it"),
    C('os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":16:8"', "env_var", "removal", False, None, CUBLAS_WS),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "use_npu = torch.npu.is_available()",
      "only feeds a human-readable device string for the wandb summary (reports 'cpu' on NPU)"),
    C("idx = torch.cuda.current_device()", "torch_cuda_api", "replace", False,
      "idx = torch.npu.current_device()", "same logging helper; unreachable until the guard is ported"),
    C('return f"cuda:{idx} ({torch.cuda.get_device_name(idx)})"', "torch_cuda_api", "replace", False,
      'return f"npu:{idx} ({torch.npu.get_device_name(idx)})"', "logging only"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if not torch.npu.is_available():", "memory logging silently skipped on NPU; logging only"),
    C("alloc = torch.cuda.memory_allocated()", "torch_cuda_api", "replace", False,
      "alloc = torch.npu.memory_allocated()", "logging only"),
    C("reserved = torch.cuda.memory_reserved()", "torch_cuda_api", "replace", False,
      "reserved = torch.npu.memory_reserved()", "logging only"),
    C("peak = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated()", "logging only"),
])

E("pykt_train_model", "pykt/models/train_model.py", "device_branch_or_abstraction",
  "pyKT pykt/models/train_model.py (cal_loss / model_forward / train_model)", [
    C('device = "cpu" if not torch.cuda.is_available() else "cuda"', "device_type", "replace", True,
      'device = "cpu" if not torch.npu.is_available() else "npu"', PYKT_DEVICE + " -- this one drives every batch"),
    C("loss1 = binary_cross_entropy(y.double(), t.double())", "unsupported_op_workaround", "replace", True,
      "loss1 = binary_cross_entropy(y.float(), t.float())",
      "pyKT computes BCE in fp64; Ascend's 2.7.1 list restricts binary_cross_entropy input to bf16/fp16/fp32 "
      "(fp64 generally unsupported on NPU)"),
    C("=loss = binary_cross_entropy(y.double(), t.double())", "unsupported_op_workaround", "replace", True,
      "loss = binary_cross_entropy(y.float(), t.float())", "fp64 BCE, see above"),
    C("loss = binary_cross_entropy(y_next.double(), r_next.double())", "unsupported_op_workaround", "replace", True,
      "loss = binary_cross_entropy(y_next.float(), r_next.float())", "fp64 BCE (dkt+)"),
    C("loss_r = binary_cross_entropy(y_curr.double(), r_curr.double())", "unsupported_op_workaround", "replace", True,
      "loss_r = binary_cross_entropy(y_curr.float(), r_curr.float())", "fp64 BCE (dkt+ reconstruction loss)"),
    C("loss = binary_cross_entropy(y.double(), t.double()) + preloss[0]", "unsupported_op_workaround", "replace", True,
      "loss = binary_cross_entropy(y.float(), t.float()) + preloss[0]", "fp64 BCE (AKT family)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA; cache is simply not released between GKT epochs (memory headroom only)"),
])

E("pykt_akt", "pykt/models/akt.py", "device_branch_or_abstraction",
  "pyKT pykt/models/akt.py (AKT with monotonic attention)", [
    C('device = "cpu" if not torch.cuda.is_available() else "cuda"', "device_type", "replace", True,
      'device = "cpu" if not torch.npu.is_available() else "npu"',
      PYKT_DEVICE + " -- masks and position tensors built here would end up on CPU while the model is on NPU"),
])

E("pykt_evaluate", "pykt/models/evaluate_model.py", "device_branch_or_abstraction",
  "pyKT pykt/models/evaluate_model.py (evaluate / evaluate_question / fusion)", [
    C('device = "cpu" if not torch.cuda.is_available() else "cuda"', "device_type", "replace", True,
      'device = "cpu" if not torch.npu.is_available() else "npu"', PYKT_DEVICE),
])

E("pykt_init_model", "pykt/models/init_model.py", "device_branch_or_abstraction",
  "pyKT pykt/models/init_model.py (model factory + checkpoint loading)", [
    C('device = "cpu" if not torch.cuda.is_available() else "cuda"', "device_type", "replace", True,
      'device = "cpu" if not torch.npu.is_available() else "npu"', PYKT_DEVICE + " -- every model is built here"),
    C("model = model.double()", "unsupported_op_workaround", "replace", False, "model = model.float()",
      "HawkesKT is trained in fp64; fp64 coverage on NPU is partial (CPU fallback or dtype errors possible) -- "
      "unconfirmed for the ops HawkesKT uses"),
    C('state = torch.load(ckpt_file, map_location="cuda:0")', "device_type", "replace", True,
      'state = torch.load(ckpt_file, map_location="npu:0")',
      "explicit cuda:0 map_location fails without CUDA (released checkpoints hold CUDA tensors, so a map_location "
      "is needed; point it at npu or cpu)"),
])

E("pykt_data_loader", "pykt/datasets/data_loader.py", "device_branch_or_abstraction",
  "pyKT pykt/datasets/data_loader.py (KTDataset)", [])

E("pykt_wandb_predict", "examples/wandb_predict.py", "device_branch_or_abstraction",
  "pyKT examples/wandb_predict.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C('device = "cpu" if not torch.cuda.is_available() else "cuda"', "device_type", "replace", False,
      'device = "cpu" if not torch.npu.is_available() else "npu"',
      "unused in this script (load_model/evaluate use their own module-level device); consistency edit"),
    C("os.environ['CUBLAS_WORKSPACE_CONFIG'] = ':4096:2'", "env_var", "removal", False, None, CUBLAS_WS),
    C('if torch.cuda.device_count() > 1 and params["multi_gpu"]:', "torch_cuda_api", "replace", False,
      'if False and params["multi_gpu"]:  # DataParallel is not supported on NPU',
      "returns 0 on an NPU host, so the opt-in DataParallel branch is dead there (which is the safe outcome)"),
    C('print(f"predicting with {torch.cuda.device_count()} GPUs")', "torch_cuda_api", "replace", False,
      'print(f"predicting with {torch.npu.device_count()} NPUs")', "log line inside the dead branch"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "removal", False, None,
      "torch.nn.DataParallel is unsupported on Ascend (x in the 2.7.1 list); drop it or use DDP. Only reachable "
      "via --multi_gpu"),
])

E("pykt_generate_wandb", "examples/generate_wandb.py", "explicit_replacement",
  "pyKT examples/generate_wandb.py + run_wandb.py (sweep and agent script generation)", [
    C('out = subprocess.check_output(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],',
      "device_capability_check", "replace", True,
      'out = subprocess.check_output(["npu-smi", "info", "-l"],',
      "nvidia-smi does not exist on an Ascend host; the except branch then silently returns ['0'] and "
      "--gpu_ids=all puts every agent on one device (parsing of npu-smi output must change too)"),
    C('fout.write(f"CUDA_VISIBLE_DEVICES={gpu} WANDB_API_KEY', "env_var", "replace", True,
      'fout.write(f"ASCEND_RT_VISIBLE_DEVICES={gpu} WANDB_API_KEY={WANDB_API_KEY} nohup wandb agent {agent} > logs/agent_{k}.log 2>&1 &\\n")',
      "generated launcher pins agents with CUDA_VISIBLE_DEVICES, which the Ascend runtime ignores"),
])

E("pykt_sweep_sh", "examples/start_sweep_gpus.sh", "explicit_replacement",
  "pyKT sweep launcher shell script (wandb agents per GPU)", [
    C("conda activate pykt", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before torch_npu can load"),
    C('GPU_LIST=$(nvidia-smi --query-gpu=index', "device_capability_check", "replace", True,
      "GPU_LIST=$(npu-smi info -l | awk '/NPU ID/{print $NF}' | paste -sd, -)",
      "nvidia-smi missing on Ascend hosts; with set -euo pipefail the script aborts"),
    C('used=$(nvidia-smi -i "$g" --query-gpu=memory.used', "device_capability_check", "replace", True,
      "used=$(npu-smi info -t usages -i \"$g\" | awk -F: '/HBM Usage Rate/{print $2}' | tr -d ' ')",
      "busy-device check; nvidia-smi missing (and npu-smi reports usage as a rate, so the threshold changes too)"),
    C('CUDA_VISIBLE_DEVICES=$gpu nohup wandb agent', "env_var", "replace", True,
      'ASCEND_RT_VISIBLE_DEVICES=$gpu nohup wandb agent "$agent" > "logs/agent_${k}.log" 2>&1 &',
      "device pinning ignored by the Ascend runtime"),
])

# --------------------------------------------------------------------------------------------------
# AKT reference implementation (arghosh/AKT)
# --------------------------------------------------------------------------------------------------
E("akt_main", "akt/main.py", "explicit_replacement", "arghosh/AKT main.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", False,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "in main.py only used by the optional memory log; the model device is chosen in utils.load_model / run.py"),
    C("if params.log_gpu_mem and torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if params.log_gpu_mem and torch.npu.is_available():", "optional memory log silently skipped on NPU"),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", False,
      'print("max NPU memory allocated (MB):\\t", torch.npu.max_memory_allocated(device) / 1024 ** 2)',
      "logging only"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = params.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = params.gpu', "--gpu selection ignored by the Ascend runtime"),
    C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
      "torch.use_deterministic_algorithms(True)", CUDNN_DET),
    C("torch.cuda.manual_seed(seedNum)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seedNum)",
      REDUNDANT_SEED),
])

E("akt_run", "akt/run.py", "explicit_replacement", "arghosh/AKT run.py (train/test loops)", [
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "all batches are moved with .to(device); on an NPU host they silently stay on CPU"),
])

# --------------------------------------------------------------------------------------------------
# DKVMN PyTorch port
# --------------------------------------------------------------------------------------------------
E("dkvmn_main", "dkvmn/main.py", "explicit_replacement", "DKVMN PyTorch port main.py (--gpu flag)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C("torch.cuda.manual_seed(params.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(params.seed)", REDUNDANT_SEED),
    C("torch.cuda.set_device(params.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(params.gpu)",
      "raises without CUDA (default --gpu 0 takes this path)"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "raises without CUDA"),
])

E("dkvmn_run", "dkvmn/run.py", "explicit_replacement", "DKVMN PyTorch port run.py (train/test)", [
    C("nn.utils.clip_grad_norm(model.parameters(), params.maxgradnorm)", "unsupported_op_workaround", "replace", False,
      "nn.utils.clip_grad_norm_(model.parameters(), params.maxgradnorm)",
      "deprecated alias marked x in Ascend's list and in msFmkTransplt's unsupported list; it only forwards to "
      "clip_grad_norm_ (which is supported), so failure is unconfirmed"),
    C("target = target.cuda()", "tensor_to_device", "replace", True, "target = target.npu()",
      "raises without CUDA"),
])

E("dkvmn_model", "dkvmn/model.py", "device_branch_or_abstraction", "DKVMN PyTorch port model.py (memory + model)", [
    C("eye = torch.eye(self.memory_size).cuda()", "tensor_to_device", "replace", True,
      "eye = torch.eye(self.memory_size, device=q_data.device)", "raises without CUDA"),
])

E("dkvmn_utils", "dkvmn/utils.py", "explicit_replacement", "DKVMN PyTorch port utils.py (varible helper)", [
    C("return Variable(tensor).cuda()", "tensor_to_device", "replace", True, "return Variable(tensor).npu()",
      "every batch goes through this helper; raises without CUDA"),
    C("map_location=lambda storage, loc: storage.cuda(gpu)", "tensor_to_device", "replace", True,
      "state = torch.load(filename, map_location=lambda storage, loc: storage.npu(gpu))",
      "resume path maps storages onto CUDA"),
    C("seq_range_expand = seq_range_expand.cuda(gpu)", "tensor_to_device", "replace", True,
      "seq_range_expand = seq_range_expand.npu(gpu)", "raises without CUDA"),
])

# --------------------------------------------------------------------------------------------------
# DKT (DeepKnowledgeTracing-DKT-Pytorch style)
# --------------------------------------------------------------------------------------------------
E("dkt_model", "KnowledgeTracing/model/RNNModel.py", "device_branch_or_abstraction",
  "DeepKnowledgeTracing-DKT-Pytorch model/RNNModel.py", [
    C("self.rnn = nn.RNN(input_dim, hidden_dim, layer_dim, batch_first=True, nonlinearity='tanh')",
      "unsupported_op_workaround", "replace", False,
      "self.rnn = nn.GRU(input_dim, hidden_dim, layer_dim, batch_first=True)",
      "torch.nn.RNN is x in Ascend's 2.7.1 list (LSTM/GRU are supported); vanilla RNN likely still runs via "
      "decomposition or CPU fallback -- unconfirmed, and swapping the cell changes the model, so test first"),
    C("if x.is_cuda:", "device_type", "replace", True, "if x.device.type != 'cpu':",
      "is_cuda is False for NPU tensors, so h0 stays on CPU and the RNN call fails with a device mismatch"),
    C("h0 = h0.cuda()", "tensor_to_device", "replace", True, "h0 = h0.to(x.device)", "see guard above"),
])

E("dkt_eval", "KnowledgeTracing/evaluation/eval.py", "explicit_replacement",
  "DeepKnowledgeTracing-DKT-Pytorch evaluation/eval.py (GPU fork)", [
    C("loss = torch.Tensor([0.0]).cuda()", "tensor_to_device", "replace", True,
      "loss = torch.Tensor([0.0]).npu()", "raises without CUDA"),
    C("index = torch.LongTensor([[i for i in range(C.MAX_STEP - 1)]]).cuda()", "tensor_to_device", "replace", True,
      "index = torch.LongTensor([[i for i in range(C.MAX_STEP - 1)]]).npu()", "raises without CUDA"),
    C("batch = batch.cuda()", "tensor_to_device", "replace", True, "batch = batch.npu()", "raises without CUDA"),
    C("gold_epoch = torch.Tensor([]).cuda()", "tensor_to_device", "replace", True,
      "gold_epoch = torch.Tensor([]).npu()", "raises without CUDA"),
    C("pred_epoch = torch.Tensor([]).cuda()", "tensor_to_device", "replace", True,
      "pred_epoch = torch.Tensor([]).npu()", "raises without CUDA"),
    C("batch = batch.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "batch = batch.npu(non_blocking=True)", "raises without CUDA"),
    C("ground_truth = torch.Tensor([]).cuda()", "tensor_to_device", "replace", True,
      "ground_truth = torch.Tensor([]).npu()", "raises without CUDA"),
    C("prediction = torch.Tensor([]).cuda()", "tensor_to_device", "replace", True,
      "prediction = torch.Tensor([]).npu()", "raises without CUDA"),
])

E("dkt_run", "KnowledgeTracing/evaluation/run.py", "explicit_replacement",
  "DeepKnowledgeTracing-DKT-Pytorch evaluation/run.py (GPU fork with argparse)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
      "script exits on an NPU host"),
    C("sys.exit('DKT training script requires a CUDA GPU')", "torch_cuda_api", "replace", False,
      "sys.exit('DKT training script requires an Ascend NPU')", "message only"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "raises without CUDA"),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
      "if False:  # nn.DataParallel is not supported on NPU; use DDP for multi-device",
      "returns 0 on an NPU host so the DataParallel branch is skipped, which happens to be the safe outcome"),
    C("print(\"Let's use\", torch.cuda.device_count(), \"GPUs!\")", "torch_cuda_api", "replace", False,
      "print(\"Let's use\", torch.npu.device_count(), \"NPUs!\")", "log line in the dead branch"),
    C("model = nn.DataParallel(model)", "distributed_framework", "removal", False, None,
      "torch.nn.DataParallel is x on Ascend; dead on NPU host unless the guard is ported to torch.npu"),
    C("lossFunc = eval.VectorLossFunc().cuda()", "tensor_to_device", "replace", True,
      "lossFunc = eval.VectorLossFunc().npu()", "raises without CUDA when --vector_loss is given"),
])

# --------------------------------------------------------------------------------------------------
# EduKTM / EduCDM (bigdata-ustc)
# --------------------------------------------------------------------------------------------------
E("edukt_lpkt", "EduKTM/LPKT/LPKT.py", "device_branch_or_abstraction", "EduKTM LPKT/LPKT.py", [
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "library-level device; LPKT silently trains on CPU on an NPU host (callers must import torch_npu first)"),
])

E("educdm_ncdm", "EduCDM/NCDM/NCDM.py", "device_branch_or_abstraction", "EduCDM NCDM/NCDM.py", [])

E("educdm_example", "examples/NCDM/NCDM_run.py", "device_branch_or_abstraction",
  "EduCDM examples/NCDM notebook as a script (NCDM / KaNCD / IRT)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C('if args.device.startswith("cuda") and not torch.cuda.is_available():', "torch_cuda_api", "replace", False,
      'if args.device.startswith("npu") and not torch.npu.is_available():',
      "fallback check; with the unchanged cuda default it silently moves everything to CPU, after porting the "
      "default it is merely inert"),
    C('parser.add_argument("--device", type=str, default="cuda:0",', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu:0",',
      "default device string passed to EduCDM train/eval/diagnose"),
])

# --------------------------------------------------------------------------------------------------
# Riiid! competition SAKT, SAINT+ with Lightning
# --------------------------------------------------------------------------------------------------
E("riiid_sakt", "riiid_sakt/train.py", "explicit_replacement",
  "Riiid! Answer Correctness Prediction SAKT kernel (AMP training + time-series API inference)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      REDUNDANT_SEED),
    C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
      "torch.use_deterministic_algorithms(True)", CUDNN_DET),
    C("with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():", AMP_OFF),
    C("with torch.cuda.amp.autocast(enabled=True):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=True):", AMP_OFF),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")', "silently trains on CPU"),
    C("torch.cuda.get_device_name(0) if torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      'print(f"device: {device} ({torch.npu.get_device_name(0) if torch.npu.is_available() else \'cpu\'})")',
      "log line; prints cpu on NPU"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True, "scaler = torch.npu.amp.GradScaler()",
      "CUDA GradScaler disables itself without CUDA; once autocast is ported to NPU fp16 the loss would run "
      "unscaled (gradient underflow)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA; housekeeping only"),
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
      "inference loop; raises without CUDA"),
    C('model.load_state_dict(torch.load(args.out, map_location="cuda"))', "device_type", "replace", True,
      'model.load_state_dict(torch.load(args.out, map_location="npu"))', "raises without CUDA"),
])

E("saint_pl", "saint_plus/train.py", "explicit_replacement",
  "SAINT+ (Riiid/EdNet) PyTorch Lightning implementation", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C("self.transformer = nn.Transformer(", "unsupported_op_workaround", "replace", False,
      "self.transformer = SaintTransformer(d_model=n_dims, nhead=enc_heads, num_encoder_layers=n_encoder,",
      "torch.nn.Transformer / TransformerEncoderLayer / TransformerDecoderLayer are x in Ascend's 2.7.1 list; "
      "the training path is built from supported ops (MHA, Linear, LayerNorm), so failure is unconfirmed -- a "
      "hand-written encoder/decoder is the conservative port"),
    C("trainer = pl.Trainer(gpus=args.gpus,", "device_type", "replace", True,
      'trainer = pl.Trainer(accelerator="npu", devices=args.gpus,',
      "Lightning raises when gpus>0 and CUDA is unavailable; Lightning has no built-in Ascend accelerator, so "
      "this needs an NPU accelerator plugin (not covered by the knowledge notes)"),
    C('map_location="cuda:0")', "device_type", "replace", True,
      'best = SaintPlusModule.load_from_checkpoint(checkpoint.best_model_path, map_location="npu:0")',
      "raises without CUDA"),
])

# --------------------------------------------------------------------------------------------------
# DDP trainer for large KT datasets
# --------------------------------------------------------------------------------------------------
E("ktddp_train", "scripts/train_ddp.py", "device_branch_or_abstraction",
  "multi-GPU DDP trainer for attention KT on EdNet (simpleKT-style model, torchrun)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C("with torch.backends.cuda.sdp_kernel(", "attention_kernel", "replace", False,
      "with contextlib.nullcontext():  # SDPA dispatches to the NPU flash-attention kernel itself",
      "torch.backends.cuda.sdp_kernel is x on Ascend; it only toggles CUDA SDPA backend flags, so on NPU it is "
      "most likely a silent no-op -- unconfirmed"),
    C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
      'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
      "ignored by HCCL; HCCL_ASYNC_ERROR_HANDLING is the counterpart (MindCluster docs: default 1)"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C("dist.barrier(device_ids=[local_rank])", "dist_backend", "replace", False, "dist.barrier()",
      "device_ids was NCCL-only in older torch releases (RuntimeError on other backends); newer releases accept it "
      "-- unconfirmed for HCCL"),
    C("t = torch.tensor([value], dtype=torch.float64)", "unsupported_op_workaround", "replace", True,
      "t = torch.tensor([value], dtype=torch.float32)",
      "HCCL all_reduce supports bf16/fp16/fp32/int32/int64/bool only (Ascend 2.7.1 list): fp64 fails"),
    C('if dist.get_backend() == "nccl":', "dist_backend", "replace", True, 'if dist.get_backend() == "hccl":',
      "backend-string comparison (not rewritten even by transfer_to_npu); with hccl the tensor stays on CPU and "
      "the HCCL all_reduce fails"),
    C("t = t.cuda()", "tensor_to_device", "replace", True, "t = t.npu()", "raises without CUDA"),
    C("n = torch.tensor([preds.numel()], device=preds.device)", "unsupported_op_workaround", "replace", False,
      "n = torch.tensor([preds.numel()], device=preds.device, dtype=torch.int32)",
      "int64 size tensor in all_gather; Ascend's 2.7.1 list gives all_gather dtypes bf16/fp16/fp32/int8/int32/bool "
      "only -- unconfirmed whether HCCL really rejects int64 here"),
    C('q = batch["q"].cuda(non_blocking=True)', "tensor_to_device", "replace", True,
      'q = batch["q"].npu(non_blocking=True)', "raises without CUDA"),
    C('c = batch["c"].cuda(non_blocking=True)', "tensor_to_device", "replace", True,
      'c = batch["c"].npu(non_blocking=True)', "raises without CUDA"),
    C('r = batch["r"].cuda(non_blocking=True)', "tensor_to_device", "replace", True,
      'r = batch["r"].npu(non_blocking=True)', "raises without CUDA"),
    C('mask = batch["mask"].cuda(non_blocking=True)[:, 1:]', "tensor_to_device", "replace", True,
      'mask = batch["mask"].npu(non_blocking=True)[:, 1:]', "raises without CUDA"),
    C('y = batch["r"][:, 1:].float().cuda(non_blocking=True)', "tensor_to_device", "replace", True,
      'y = batch["r"][:, 1:].float().npu(non_blocking=True)', "raises without CUDA"),
    C('torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=args.amp)', "amp", "replace", True,
      'with torch.set_grad_enabled(train), torch.autocast(device_type="npu", dtype=amp_dtype, enabled=args.amp):',
      AMP_OFF),
    C('f"mem {torch.cuda.max_memory_allocated() / 2**30:.1f}G")', "torch_cuda_api", "replace", False,
      'f"mem {torch.npu.max_memory_allocated() / 2**30:.1f}G")', "log line; reports 0 on NPU"),
    C('parser.add_argument("--backend", type=str, default=None, choices=["nccl", "gloo"],', "dist_backend",
      "replace", True, 'parser.add_argument("--backend", type=str, default=None, choices=["hccl", "gloo"],',
      "argparse would reject --backend hccl"),
    C('backend = args.backend or runtime.get("dist_backend", "nccl")', "dist_backend", "replace", True,
      'backend = args.backend or runtime.get("dist_backend", "hccl")', "NCCL is not available on Ascend"),
    C("amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16",
      "device_capability_check", "replace", True,
      "amp_dtype = torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
      "returns False without CUDA, silently switching to fp16 (+ loss scaling) on bf16-capable Atlas A2"),
    C(".cuda(local_rank)", "tensor_to_device", "replace", True,
      'model = SimpleKTLarge(num_q=train_set.num_q, num_c=train_set.num_c, **cfg["model"]).npu(local_rank)',
      "raises without CUDA"),
    C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", False,
      "model = torch.compile(model)",
      "max-autotune relies on Triton GEMM autotuning; the NPU Inductor path differs -- performance/compile-time "
      "only, unconfirmed"),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", True,
      "from torch_npu.optim import NpuFusedAdamW",
      "NVIDIA apex CUDA kernels are not available on NPU (Ascend apex provides NpuFused* instead)"),
    C("optimizer = FusedAdam(model.parameters()", "fused_optimizer", "replace", True,
      'optimizer = NpuFusedAdamW(model.parameters(), lr=cfg["lr"], weight_decay=cfg["weight_decay"])',
      "only with --fused_adam"),
    C("fused=torch.cuda.is_available())", "fused_optimizer", "replace", False,
      "fused=torch.npu.is_available())",
      "evaluates False on NPU, so AdamW silently runs unfused (performance only; _fused_adamw_ has an NPU kernel)"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp and amp_dtype == torch.float16)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp and amp_dtype == torch.float16)",
      "CUDA GradScaler disables itself on NPU; fp16 autocast would then run without loss scaling"),
    C('ckpt = torch.load(args.resume, map_location=f"cuda:{local_rank}")', "device_type", "replace", True,
      'ckpt = torch.load(args.resume, map_location=f"npu:{local_rank}")', "raises without CUDA"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("logger.info(torch.cuda.memory_summary(abbreviated=True))", "torch_cuda_api", "replace", False,
      "logger.info(torch.npu.memory_summary(abbreviated=True))", "debug log only (--debug_mem)"),
])

E("ktddp_launch", "scripts/launch_ddp.sh", "explicit_replacement", "torchrun launcher for the DDP trainer", [
    C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "visible-device list is ignored by the Ascend runtime"),
    C('NPROC_PER_NODE=$(echo "$CUDA_VISIBLE_DEVICES"', "env_var", "replace", True,
      "NPROC_PER_NODE=$(echo \"$ASCEND_RT_VISIBLE_DEVICES\" | awk -F, '{print NF}')",
      "process count is derived from the CUDA variable; must follow the renamed variable"),
    C("conda activate kt", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment for torch_npu / HCCL"),
    C("export NCCL_DEBUG=", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}",
      "NCCL logging knob; ignored on NPU (CANN logging is controlled by ASCEND_GLOBAL_LOG_LEVEL)"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=ib0",
      "host NIC selection; HCCL picks a NIC by its own priority when unset, so only needed if that choice is wrong"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
      "NCCL InfiniBand knob; HCCL moves data over the NPU RoCE ports, no equivalent"),
    C("export NCCL_IB_HCA=mlx5_0,mlx5_1", "env_var", "removal", False, None, "NCCL-only HCA selection"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NVLink P2P level; no NPU meaning"),
    C("nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv", "device_capability_check",
      "replace", True, "npu-smi info", "nvidia-smi missing on Ascend hosts; with set -e the launcher aborts"),
    C("--backend nccl", "dist_backend", "replace", True, "    --backend hccl \\", "NCCL is not available on Ascend"),
])

E("ktddp_config", "configs/ednet_ddp.yaml", "explicit_replacement", "YAML run config for the DDP trainer", [
    C("dist_backend: nccl", "dist_backend", "replace", True, "  dist_backend: hccl         # overridden by --backend",
      "read by train_ddp.py when --backend is not given"),
])

# --------------------------------------------------------------------------------------------------
# Benchmarks, LLM-based KT
# --------------------------------------------------------------------------------------------------
E("kt_bench", "tools/benchmark_inference.py", "explicit_replacement",
  "inference latency benchmark for a KT serving path (CUDA events, CUDA graphs, NVTX)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events need CUDA"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "CUDA events need CUDA"),
    C("s = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "s = torch.npu.Stream()", "--cuda_graph path"),
    C("s.wait_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "s.wait_stream(torch.npu.current_stream())", "--cuda_graph path"),
    C("with torch.cuda.stream(s):", "torch_cuda_api", "replace", True, "with torch.npu.stream(s):",
      "--cuda_graph path"),
    C("torch.cuda.current_stream().wait_stream(s)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(s)", "--cuda_graph path"),
    C("g = torch.cuda.CUDAGraph()", "torch_cuda_api", "replace", True, "g = torch.npu.NPUGraph()",
      "CUDA graphs -> NPUGraph (inference-only on NPU, which is what this is)"),
    C("with torch.cuda.graph(g):", "torch_cuda_api", "replace", True, "with torch.npu.graph(g):",
      "--cuda_graph path"),
    C('assert torch.cuda.is_available(), "benchmark must run on a GPU"', "torch_cuda_api", "replace", True,
      'assert torch.npu.is_available(), "benchmark must run on an NPU"', "assertion fails on an NPU host"),
    C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")',
      "raises at first use without CUDA"),
    C("props = torch.cuda.get_device_properties(device)", "torch_cuda_api", "replace", True,
      "props = torch.npu.get_device_properties(device)", "raises without CUDA"),
    C("SMs={props.multi_processor_count}", "device_capability_check", "replace", False,
      'print(f"NPU: {props.name}, {props.total_memory / 2**30:.1f} GiB, cube cores={props.cube_core_num}, "',
      "NPU device properties only carry name/total_memory/L2_cache_size/cube_core_num/vector_core_num; SM count "
      "and major/minor come back empty -- cosmetic"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(device)", "CUDA memory API with an npu device raises"),
    C("with torch.no_grad(), torch.cuda.amp.autocast(enabled=args.fp16):", "amp", "replace", True,
      "with torch.no_grad(), torch.npu.amp.autocast(enabled=args.fp16):",
      "--fp16 numbers would silently be fp32 numbers"),
    C('torch.cuda.nvtx.range_push(f"bs{bs}")', "torch_cuda_api", "replace", True,
      'rid = torch_npu.npu.mstx.range_start(f"bs{bs}")',
      "torch.cuda.nvtx is not redirected to NPU (NVTX stub raises without a CUDA build); mstx is the NPU form"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(rid)",
      "see range_push"),
    C("peak = torch.cuda.max_memory_allocated(device) / 2**20", "torch_cuda_api", "replace", True,
      "peak = torch.npu.max_memory_allocated(device) / 2**20",
      "reported benchmark metric; CUDA API with an npu device raises"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "housekeeping between batch sizes"),
])

E("llmkt_finetune", "llm_kt/finetune_llm_kt.py", "explicit_replacement",
  "LLM-based knowledge tracing (LoRA fine-tune with HF transformers / peft)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      REDUNDANT_SEED),
    C("quant_config = BitsAndBytesConfig(load_in_4bit=True", "unsupported_op_workaround", "replace", False,
      "quant_config = None  # NF4 on Ascend needs the bitsandbytes multi-backend build",
      "--load_in_4bit only: stock bitsandbytes kernels are CUDA; Ascend NF4 exists only in the multi-backend "
      "branch (partial support) -- unconfirmed end to end"),
    C('attn_implementation="flash_attention_2",', "attention_kernel", "replace", True,
      'attn_implementation="sdpa",',
      "flash-attn cannot be installed on NPU; transformers raises when flash_attention_2 is requested. SDPA "
      "dispatches to the NPU fused attention"),
    C('device_map={"": torch.cuda.current_device()},', "torch_cuda_api", "replace", True,
      'device_map={"": torch.npu.current_device()},', "raises without CUDA"),
    C('max_length=max_len).to("cuda")', "device_type", "replace", True, 'max_length=max_len).to("npu")',
      "raises without CUDA"),
    C("total_gb = torch.cuda.get_device_properties(0).total_memory / 2**30", "torch_cuda_api", "replace", True,
      "total_gb = torch.npu.get_device_properties(0).total_memory / 2**30",
      "--eval_only path; raises without CUDA (total_memory is available on NPU)"),
    C('device_map="cuda:0",', "device_type", "replace", True,
      'base = AutoModelForCausalLM.from_pretrained(base_model, torch_dtype=torch.bfloat16, device_map="npu:0",',
      "--eval_only path"),
    C("tf32=True,", "device_capability_check", "replace", False, "tf32=False,",
      "transformers validates tf32 against CUDA/Ampere and may raise ValueError on NPU; newer releases map it to "
      "NPU HF32 instead -- version dependent, unconfirmed"),
    C('optim="paged_adamw_8bit" if args.load_in_4bit else "adamw_torch_fused",', "fused_optimizer", "replace", True,
      'optim="adamw_torch" if args.load_in_4bit else "adamw_torch_fused",',
      "bitsandbytes paged 8-bit optimizers are CUDA-only (8-bit optimizers not listed for NPU); "
      "adamw_torch_fused is fine (_fused_adamw_ has an NPU kernel)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "housekeeping"),
])

# --------------------------------------------------------------------------------------------------
# Environment files
# --------------------------------------------------------------------------------------------------
E("kt_docker", "docker/Dockerfile", "explicit_replacement", "pyKT sweep-agent Dockerfile (CUDA 11.8 base)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "base image must provide the CANN toolkit/driver user-space instead of CUDA (tag illustrative)"),
    C("RUN pip install --no-cache-dir torch==2.1.2 --index-url https://download.pytorch.org/whl/cu118",
      "import_torch_npu", "replace", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torch-npu==2.1.0.post10 --extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu needs the exact matching torch (2.1.0 <-> 2.1.0.postN, CANN 8.0.0)"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "NVIDIA container runtime knob; NPUs are exposed with --device /dev/davinciN or Ascend Docker Runtime "
      "(ASCEND_VISIBLE_DEVICES) at run time"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container runtime knob"),
    C("CUBLAS_WORKSPACE_CONFIG=:4096:8", "env_var", "removal", False, None, CUBLAS_WS),
])

E("kt_requirements", "requirements.txt", "explicit_replacement", "requirements.txt for pyKT + LLM-KT experiments", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index (no aarch64 CUDA wheels; x86 NPU hosts use the CPU torch wheel)"),
    C("torch==2.1.2+cu118", "import_torch_npu", "replace", True, "torch==2.1.0",
      "CUDA local-version wheel; torch_npu requires the same x.y.z as torch"),
    C("numpy>=1.17.2,<2.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "torch-npu pin (added after the torch/numpy block)"),
    C("nvidia-ml-py>=11.525", "torch_cuda_api", "removal", False, None,
      "NVML bindings; nothing to monitor on NPU (wandb only uses it opportunistically)"),
    C("=gpustat", "torch_cuda_api", "removal", False, None, "nvidia-smi front-end, not imported by the code"),
    C("bitsandbytes>=0.43", "unsupported_op_workaround", "replace", False,
      "bitsandbytes  # multi-backend build with Ascend NF4 support, or drop with --load_in_4bit",
      "only needed for --load_in_4bit; stock wheel has CUDA kernels only"),
    C("flash-attn>=2.5.6", "attention_kernel", "removal", True, None,
      "needs nvcc/CUDA to build; pip install -r fails on an Ascend host"),
])

E("kt_env", "environment.yml", "explicit_replacement", "conda environment.yml with the CUDA PyTorch stack", [
    C("=- nvidia", "import_torch_npu", "removal", False, None, "NVIDIA channel no longer needed"),
    C("- pytorch=2.1.2", "import_torch_npu", "replace", True, "  - pytorch=2.1.0",
      "torch_npu wheels pair with torch 2.1.0 exactly; 2.1.2 cannot load torch_npu 2.1.0.postN"),
    C("- pytorch-cuda=11.8", "import_torch_npu", "removal", False, None,
      "CUDA metapackage; dead weight on NPU (or unsolvable on aarch64)"),
    C("- cudatoolkit=11.8", "import_torch_npu", "removal", False, None, "CUDA runtime; CANN replaces it"),
    C("- cudnn=8.9", "import_torch_npu", "removal", False, None, "cuDNN; not used on NPU"),
    C("=- nccl", "dist_backend", "removal", False, None, "NCCL library; HCCL ships with CANN"),
    C("- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post10",
      "torch-npu comes from PyPI"),
    C("- nvidia-ml-py", "torch_cuda_api", "removal", False, None, "NVML bindings; no NPU use"),
])
