# Labels for probe102: self-play game AI / search-based RL (CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter edits.
# Policy notes are in ../README.md ("How the labels were chosen").

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
SILENT_CPU = "torch.cuda.is_available() is False on an NPU host, so this silently falls back to CPU"

# ---------------------------------------------------------------- alpha-zero-general
E("azg_othello_nnet", "othello/pytorch/NNet.py", "explicit_replacement",
  "alpha-zero-general othello/pytorch/NNet.py (NNetWrapper with args.cuda)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "main.py never imports torch itself; this wrapper is the first module that needs the npu backend (autoload only from torch_npu 2.5.1)"),
      C("'cuda': torch.cuda.is_available(),", "torch_cuda_api", "replace", True, "'cuda': torch.npu.is_available(),",
        SILENT_CPU + "; the key name 'cuda' can stay, it is only a flag"),
      C("self.nnet.cuda()", "tensor_to_device", "replace", True, "self.nnet.npu()",
        ".cuda() raises without a CUDA driver once args.cuda is true"),
      C("boards, target_pis, target_vs = boards.contiguous().cuda()", "tensor_to_device", "replace", True,
        "boards, target_pis, target_vs = boards.contiguous().npu(), target_pis.contiguous().npu(), target_vs.contiguous().npu()",
        "training batch moved with .cuda()"),
      C("if args.cuda: board = board.contiguous().cuda()", "tensor_to_device", "replace", True,
        "if args.cuda: board = board.contiguous().npu()", "single-position predict moved with .cuda()"),
      C("boards = boards.contiguous().cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "boards = boards.contiguous().npu(non_blocking=True)", "batched predict moved with .cuda()"),
      C("map_location = None if args.cuda else 'cpu'", "tensor_to_device", "replace", True,
        "map_location = 'npu' if args.cuda else 'cpu'",
        "map_location=None restores storages to the device they were saved on; checkpoints from the CUDA runs then fail to load"),
  ])

# ---------------------------------------------------------------- AlphaZero_Gomoku
E("gomoku_pvnet", "policy_value_net_pytorch.py", "explicit_replacement",
  "junxiaosong/AlphaZero_Gomoku policy_value_net_pytorch.py (use_gpu flag, Variable(...).cuda())",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "train.py / human_play.py do not import torch; this module is the first torch user"),
      C("self.policy_value_net = Net(board_width, board_height).cuda()", "tensor_to_device", "replace", True,
        "self.policy_value_net = Net(board_width, board_height).npu()", ".cuda() fails on an NPU host"),
      C("net_params = torch.load(model_file)", "tensor_to_device", "replace", True,
        "net_params = torch.load(model_file, map_location='npu' if self.use_gpu else 'cpu')",
        "state dicts saved by the GPU trainer carry cuda storages; loading without map_location fails"),
      C("state_batch = Variable(torch.FloatTensor(np.array(state_batch)).cuda())", "tensor_to_device", "replace", True,
        "state_batch = Variable(torch.FloatTensor(np.array(state_batch)).npu())", "batch evaluation input"),
      C("Variable(torch.from_numpy(current_state)).cuda().float())", "tensor_to_device", "replace", True,
        "Variable(torch.from_numpy(current_state)).npu().float())", "MCTS leaf evaluation input"),
      C("state_batch = Variable(torch.FloatTensor(state_batch).cuda())", "tensor_to_device", "replace", True,
        "state_batch = Variable(torch.FloatTensor(state_batch).npu())", "train_step input"),
      C("mcts_probs = Variable(torch.FloatTensor(mcts_probs).cuda())", "tensor_to_device", "replace", True,
        "mcts_probs = Variable(torch.FloatTensor(mcts_probs).npu())", "train_step target"),
      C("winner_batch = Variable(torch.FloatTensor(winner_batch).cuda())", "tensor_to_device", "replace", True,
        "winner_batch = Variable(torch.FloatTensor(winner_batch).npu())", "train_step target"),
  ])

# ---------------------------------------------------------------- muzero-general
E("mzg_muzero", "muzero.py", "explicit_replacement",
  "werner-duvaud/muzero-general muzero.py (Ray driver, GPU budgeting)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "entry point; torch.npu.device_count() below needs the npu backend registered"),
      C("else torch.cuda.device_count()", "torch_cuda_api", "replace", True, "else torch.npu.device_count()",
        "returns 0 on an NPU host: total_gpus=0, every Ray actor gets num_gpus=0 and the trainer then asks for a device it was never given"),
  ])

E("mzg_trainer", "trainer.py", "explicit_replacement",
  "muzero-general trainer.py (Ray Trainer actor)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "Ray worker processes import this module, not muzero.py, so the import has to be here (or rely on 2.5.1+ autoload)"),
      C('self.model.to(torch.device("cuda" if self.config.train_on_gpu else "cpu"))', "device_type", "replace", True,
        'self.model.to(torch.device("npu" if self.config.train_on_gpu else "cpu"))', "hard-coded cuda device string"),
      C('if "cuda" not in str(next(self.model.parameters()).device):', "device_type", "replace", False,
        'if "npu" not in str(next(self.model.parameters()).device):',
        "only decides whether to print 'You are not training on GPU'; wrong message on NPU, nothing else"),
  ])

E("mzg_self_play", "self_play.py", "explicit_replacement",
  "muzero-general self_play.py (SelfPlay actor + MCTS)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "imported by the SelfPlay Ray actor process"),
      C('self.model.to(torch.device("cuda" if self.config.selfplay_on_gpu else "cpu"))', "device_type", "replace", True,
        'self.model.to(torch.device("npu" if self.config.selfplay_on_gpu else "cpu"))',
        "fails as soon as selfplay_on_gpu is enabled"),
  ])

E("mzg_connect4_cfg", "games/connect4.py", "explicit_replacement",
  "muzero-general games/connect4.py (MuZeroConfig)",
  [
      C("self.train_on_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "self.train_on_gpu = torch.npu.is_available()  # Train on NPU if available", SILENT_CPU),
  ])

E("mzg_replay_buffer", "replay_buffer.py", "explicit_replacement",
  "muzero-general replay_buffer.py (ReplayBuffer + Reanalyse actors)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "imported by the Reanalyse Ray actor process"),
      C('self.model.to(torch.device("cuda" if self.config.reanalyse_on_gpu else "cpu"))', "device_type", "replace", True,
        'self.model.to(torch.device("npu" if self.config.reanalyse_on_gpu else "cpu"))',
        "fails as soon as reanalyse_on_gpu is enabled"),
  ])

E("mzg_models", "models.py", "explicit_replacement",
  "muzero-general models.py (ResNet MuZero network wrapped in DataParallel)",
  [
      C("=self.representation_network = torch.nn.DataParallel(", "unsupported_op_workaround", "replace", True,
        "self.representation_network = SingleDeviceWrapper(",
        "torch.nn.DataParallel is unsupported on NPU (Ascend 2.7.1 list, msFmkTransplt); Ray does not hide NPUs from actors, so DP would see every NPU. Keep a .module wrapper so checkpoint keys stay 'module.*'"),
      C("self.dynamics_network = torch.nn.DataParallel(", "unsupported_op_workaround", "replace", True,
        "self.dynamics_network = SingleDeviceWrapper(", "same DataParallel wrapper"),
      C("self.prediction_network = torch.nn.DataParallel(", "unsupported_op_workaround", "replace", True,
        "self.prediction_network = SingleDeviceWrapper(", "same DataParallel wrapper"),
  ])

E("mzg_requirements_lock", "requirements.lock", "explicit_replacement",
  "muzero-general requirements.lock (pip-compile output, torch 2.1 CUDA wheels)",
  [
      C("=torch==2.1.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
        "torch_npu wheel must match torch 2.1.0 exactly"),
      C("nvidia-cublas-cu12==12.1.3.1", "import_torch_npu", "removal", False, None, "CUDA runtime wheel pulled in by the CUDA torch build; dead weight on NPU"),
      C("nvidia-cuda-cupti-cu12==12.1.105", "import_torch_npu", "removal", False, None, "CUDA runtime wheel"),
      C("nvidia-cuda-nvrtc-cu12==12.1.105", "import_torch_npu", "removal", False, None, "CUDA runtime wheel"),
      C("nvidia-cuda-runtime-cu12==12.1.105", "import_torch_npu", "removal", False, None, "CUDA runtime wheel"),
      C("nvidia-cudnn-cu12==8.9.2.26", "import_torch_npu", "removal", False, None, "cuDNN wheel"),
      C("nvidia-cufft-cu12==11.0.2.54", "import_torch_npu", "removal", False, None, "CUDA runtime wheel"),
      C("nvidia-curand-cu12==10.3.2.106", "import_torch_npu", "removal", False, None, "CUDA runtime wheel"),
      C("nvidia-cusolver-cu12==11.4.5.107", "import_torch_npu", "removal", False, None, "CUDA runtime wheel"),
      C("nvidia-cusparse-cu12==12.1.0.106", "import_torch_npu", "removal", False, None, "CUDA runtime wheel"),
      C("nvidia-nccl-cu12==2.18.1", "import_torch_npu", "removal", False, None, "NCCL wheel; HCCL comes with CANN"),
      C("nvidia-nvjitlink-cu12==12.3.101", "import_torch_npu", "removal", False, None, "CUDA runtime wheel"),
      C("nvidia-nvtx-cu12==12.1.105", "import_torch_npu", "removal", False, None, "NVTX wheel"),
      C("triton==2.1.0", "triton_kernel_tuning", "removal", False, None,
        "CUDA Triton is unused on NPU (triton-ascend is a separate package); harmless if left"),
  ])

# ---------------------------------------------------------------- EfficientZero
E("ez_main", "main.py", "explicit_replacement",
  "YeWR/EfficientZero main.py (argparse, ray.init, device choice)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry point"),
      C("args.device = 'cuda' if (not args.no_cuda) and torch.cuda.is_available() else 'cpu'", "torch_cuda_api", "replace", True,
        "args.device = 'npu' if (not args.no_cuda) and torch.npu.is_available() else 'cpu'",
        SILENT_CPU + "; every actor reads config.device"),
  ])

E("ez_train", "core/train.py", "explicit_replacement",
  "EfficientZero core/train.py (learner loop, torch.cuda.amp)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU,
        "driver-side module; main.py already imports torch_npu and the amp import below pulls it in too"),
      C("from torch.cuda.amp import autocast as autocast", "amp", "replace", True,
        "from torch_npu.npu.amp import autocast as autocast",
        "torch.cuda.amp.autocast warns and disables itself when CUDA is unavailable: --amp_type torch_amp silently trains in fp32"),
      C("from torch.cuda.amp import GradScaler as GradScaler", "amp", "replace", True,
        "from torch_npu.npu.amp import GradScaler as GradScaler",
        "torch.cuda.amp.GradScaler disables itself without CUDA; with NPU autocast that means fp16 without loss scaling"),
      C("weights = torch.load(model_path)", "tensor_to_device", "replace", True,
        "weights = torch.load(model_path, map_location='cpu')",
        "resume checkpoints were saved from cuda tensors (torch.save(model.state_dict()))"),
  ])

E("ez_selfplay_worker", "core/selfplay_worker.py", "explicit_replacement",
  "EfficientZero core/selfplay_worker.py (DataWorker Ray actor)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "Ray actor process imports this module"),
      C("from torch.cuda.amp import autocast as autocast", "amp", "replace", True,
        "from torch_npu.npu.amp import autocast as autocast", "self-play inference autocast silently disabled otherwise"),
  ])

E("ez_reanalyze_worker", "core/reanalyze_worker.py", "explicit_replacement",
  "EfficientZero core/reanalyze_worker.py (BatchWorker_CPU / BatchWorker_GPU)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "Ray actor process imports this module"),
      C("from torch.cuda.amp import autocast as autocast", "amp", "replace", True,
        "from torch_npu.npu.amp import autocast as autocast", "reanalyze inference autocast silently disabled otherwise"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op without CUDA; the NPU caching allocator is never trimmed (memory pressure with 20 actors per device)"),
  ])

E("lz_setup", "setup.py", "explicit_replacement",
  "opendilab/LightZero setup.py (Cython ctree extensions)",
  [])

E("ez_train_sh", "train.sh", "explicit_replacement",
  "EfficientZero train.sh launcher",
  [
      C("=set -ex", "import_torch_npu", "npu_only_addition", True, SET_ENV, "CANN environment must be sourced before python starts"),
      C("export CUDA_DEVICE_ORDER='PCI_BUS_ID'", "env_var", "removal", False, None, "CUDA-only; no effect on NPU"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
        "device restriction is ignored by the NPU runtime"),
      C("CUDA_VISIBLE_DEVICES=0 python main.py", "env_var", "replace", False,
        "ASCEND_RT_VISIBLE_DEVICES=0 python main.py --env BreakoutNoFrameskip-v4 --case atari --opr test --seed 0 --num_gpus 1 --num_cpus 20 \\",
        "ignored on NPU, but the test run only uses device 0 anyway, so the outcome is the same"),
  ])

E("ez_requirements", "requirements.txt", "explicit_replacement",
  "EfficientZero requirements.txt (torch +cu113 wheels)",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "torch_npu installs on the CPU torch wheel on x86; whether it works on top of a CUDA build is unconfirmed"),
      C("torch==1.10.0+cu113", "import_torch_npu", "replace", True, "torch==1.11.0",
        "no torch_npu release for torch 1.10; nearest supported pair is 1.11.0 / torch-npu 1.11.0.postN"),
      C("torchvision==0.11.1+cu113", "import_torch_npu", "replace", True, "torchvision==0.12.0",
        "0.11.1 pins torch 1.10.0 and conflicts with the new torch pin"),
      C("=kornia==0.5.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==1.11.0.post14",
        "adapter wheel matching torch 1.11.0 (CANN 8.0.RC2 era)"),
  ])

# ---------------------------------------------------------------- KataGo python
E("kg_train", "python/train.py", "device_branch_or_abstraction",
  "lightvector/KataGo python/train.py (PyTorch trainer: DDP, SWA, fp16)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "entry point; mp.spawn children re-import this module, so the module-level import covers them"),
      C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", True,
        "from torch_npu.npu.amp import GradScaler, autocast",
        "-use-fp16 would otherwise silently run fp32 (autocast/GradScaler disable themselves without CUDA)"),
      C('torch.distributed.init_process_group("nccl", rank=rank, world_size=world_size)', "dist_backend", "replace", True,
        'torch.distributed.init_process_group("hccl", rank=rank, world_size=world_size)', "NCCL backend is not available on NPU"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        "if torch.npu.is_available():  # torch.npu.set_device(my_gpu_id); device = torch.device(\"npu\", my_gpu_id); then elif torch.cuda.is_available():",
        "without an NPU branch the device chain falls through to CPU; the CUDA branch itself stays for GPU hosts"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "unconditional; raises on a host without CUDA"),
      C('metrics["gpu_mem_gb"] = torch.cuda.max_memory_allocated() / 1e9', "torch_cuda_api", "replace", False,
        'metrics["gpu_mem_gb"] = torch.npu.max_memory_allocated() / 1e9', "returns 0 without CUDA; logging only"),
  ])

E("kg_data_processing", "python/data_processing_pytorch.py", "device_branch_or_abstraction",
  "KataGo python/data_processing_pytorch.py (npz batches, symmetries on device)",
  [
      C('use_pinned = device.type == "cuda"', "pin_memory", "replace", False,
        'use_pinned = device.type in ("cuda", "npu")',
        "pinned staging silently off on NPU: correct but synchronous H2D copies (performance only)"),
  ])

E("kg_export_ts", "python/export_torchscript.py", "explicit_replacement",
  "KataGo/Leela-style TorchScript export + latency benchmark for the C++ engine",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry point"),
      C("props = torch.cuda.get_device_properties(device)", "torch_cuda_api", "replace", True,
        "props = torch.npu.get_device_properties(device)", "raises without CUDA"),
      C("if props.major >= 7:", "device_capability_check", "replace", True,
        'if device.type == "npu" or props.major >= 7:',
        "NPU device properties have no major/minor (only name, total_memory, L2_cache_size, core counts)"),
      C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "starter = torch.npu.Event(enable_timing=True)", "CUDA events for timing"),
      C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "ender = torch.npu.Event(enable_timing=True)", "CUDA events for timing"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "warm-up sync"),
      C("torch.cuda.current_stream().synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().synchronize()", "per-iteration sync"),
      C('device = torch.device(f"cuda:{args.gpu}")', "device_type", "replace", True,
        'device = torch.device(f"npu:{args.gpu}")',
        "tracing device; if the traced file is consumed by a CUDA libtorch engine elsewhere, trace on CPU instead"),
      C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)", "raises without CUDA"),
      C('logging.info(f"Tracing on {torch.cuda.get_device_name(device)}")', "torch_cuda_api", "replace", True,
        'logging.info(f"Tracing on {torch.npu.get_device_name(device)}")', "get_device_name initialises CUDA and raises"),
      C('metadata["gpu_mem_peak_mb"] = torch.cuda.max_memory_allocated(device) / (1024 * 1024)', "torch_cuda_api", "replace", False,
        'metadata["gpu_mem_peak_mb"] = torch.npu.max_memory_allocated(device) / (1024 * 1024)',
        "metadata only; the CUDA call returns 0 when CUDA was never initialised (unconfirmed for an npu device argument)"),
  ])

E("kg_train_sh", "python/selfplay/train_multigpu.sh", "explicit_replacement",
  "KataGo python/selfplay/train.sh style launcher (multi-GPU DDP + export)",
  [
      C("=set -o pipefail", "import_torch_npu", "npu_only_addition", True, SET_ENV, "CANN environment"),
      C('export CUDA_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6}"', "env_var", "replace", True,
        'export ASCEND_RT_VISIBLE_DEVICES="${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6}"',
        "keeping device 7 free for the engine only works with the NPU runtime variable"),
      C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None, "NCCL-only logging knob"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None, "NCCL P2P workaround for consumer GPUs; meaningless for HCCL"),
      C("NUM_GPUS=$(nvidia-smi -L | wc -l)", "device_capability_check", "replace", True,
        "NUM_GPUS=$(npu-smi info -l | awk -F: '/Total Count/ {print $2+0}')",
        "nvidia-smi is missing; with set -e and pipefail the script aborts here"),
      C('if [[ -n "${CUDA_VISIBLE_DEVICES}" ]]', "env_var", "replace", True, 'if [[ -n "${ASCEND_RT_VISIBLE_DEVICES:-}" ]]',
        "follows the variable rename (set -u would abort on the unset CUDA name)"),
      C("NUM_GPUS=$(echo \"$CUDA_VISIBLE_DEVICES\" | tr ',' '\\n' | wc -l)", "env_var", "replace", True,
        "NUM_GPUS=$(echo \"$ASCEND_RT_VISIBLE_DEVICES\" | tr ',' '\\n' | wc -l)", "follows the variable rename"),
      C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "device_capability_check", "replace", True,
        "npu-smi info", "informational, but a missing nvidia-smi aborts the script under set -e"),
  ])

# ---------------------------------------------------------------- nnue-pytorch
E("nnue_feature_transformer", "feature_transformer.py", "kernel_rewrite",
  "official-stockfish/nnue-pytorch feature_transformer.py (CuPy RawKernel sparse input layer)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU,
        "only needed when the file is run standalone for its self-test; train.py imports torch_npu"),
      C("import cupy as cp", "custom_cuda_extension", "removal", True, None,
        "CuPy has no Ascend backend; the module does not import on an NPU host"),
      C("kernel = cp.RawKernel(_FORWARD_KERNEL_SRC.format(", "custom_cuda_extension", "removal", False, None,
        "kernel builder is dead after the rewrite; delete with the CuPy import"),
      C("kernel = cp.RawKernel(_BACKWARD_KERNEL_SRC.format(", "custom_cuda_extension", "removal", False, None,
        "kernel builder is dead after the rewrite"),
      C("assert feature_indices.is_cuda and feature_values.is_cuda and weight.is_cuda and bias.is_cuda", "device_type", "removal", True, None,
        "AssertionError for npu tensors; the torch-op implementation is device agnostic"),
      C("=kernel = make_feature_transformer_slice_forward_kernel(max_active_features, output_size)", "custom_cuda_extension", "replace", True,
        "output = sparse_linear_forward(feature_indices, feature_values, weight, bias)",
        "replace the CUDA launch with gather + weighted sum (weight[idx.clamp(min=0)] * (values * (idx >= 0))).sum(1) + bias; F.embedding_bag is on msFmkTransplt's unsupported list"),
      C("=kernel = make_feature_transformer_slice_backward_kernel(max_active_features, output_size)", "custom_cuda_extension", "replace", True,
        "weight_grad, bias_grad = sparse_linear_backward(feature_indices, feature_values, grad_output, weight.shape[0])",
        "atomicAdd kernel -> index_add_ of grad_output * value rows into weight_grad, bias_grad = grad_output.sum(0)"),
      C("=assert feature_indices_0.is_cuda", "device_type", "removal", True, None, "AssertionError for npu tensors"),
      C("=assert feature_values_0.is_cuda", "device_type", "removal", True, None, "AssertionError for npu tensors"),
      C("=assert feature_indices_1.is_cuda", "device_type", "removal", True, None, "AssertionError for npu tensors"),
      C("=assert feature_values_1.is_cuda", "device_type", "removal", True, None, "AssertionError for npu tensors"),
      C("=assert weight.is_cuda", "device_type", "removal", True, None, "AssertionError for npu tensors"),
      C("=assert bias.is_cuda", "device_type", "removal", True, None, "AssertionError for npu tensors"),
      C("fwd_kernel = make_feature_transformer_slice_forward_kernel(max_active_features, output_size)", "custom_cuda_extension", "replace", True,
        "output0 = sparse_linear_forward(feature_indices_0, feature_values_0, weight, bias)",
        "double (white/black) forward; the two fwd_kernel(...) launches below go away with it"),
      C("bwd_kernel = make_feature_transformer_slice_backward_kernel(max_active_features, output_size)", "custom_cuda_extension", "replace", True,
        "weight_grad, bias_grad = sparse_linear_backward_pair(feature_indices_0, feature_values_0, grad_output_0, feature_indices_1, feature_values_1, grad_output_1, weight.shape[0])",
        "double backward"),
      C("output10, output11 = DoubleFeatureTransformerSliceFunction.apply(indices0.clone().cuda()", "tensor_to_device", "replace", True,
        "output10, output11 = DoubleFeatureTransformerSliceFunction.apply(indices0.clone().npu(), values0.clone().npu(), indices1.clone().npu(), values1.clone().npu(), weight1.npu(), bias1.npu())",
        "self-test"),
      C("layer = DoubleFeatureTransformerSlice(INPUT_SIZE, STRIDE).cuda()", "tensor_to_device", "replace", True,
        "layer = DoubleFeatureTransformerSlice(INPUT_SIZE, STRIDE).npu()", "benchmark"),
      C("indices0 = torch.cat([torch.sort((torch.rand(BATCH_SIZE, MAX_ACTIVE_FEATURES * 3 // 4) * INPUT_SIZE), dim=1)", "tensor_to_device", "replace", True,
        "indices0 = torch.cat([torch.sort((torch.rand(BATCH_SIZE, MAX_ACTIVE_FEATURES * 3 // 4) * INPUT_SIZE), dim=1)[0].to(dtype=torch.int32), torch.full((BATCH_SIZE, MAX_ACTIVE_FEATURES // 4), -1, dtype=torch.int32)], dim=1).npu()",
        "benchmark input"),
      C("values0 = torch.rand(BATCH_SIZE, MAX_ACTIVE_FEATURES, dtype=torch.float32).cuda()", "tensor_to_device", "replace", True,
        "values0 = torch.rand(BATCH_SIZE, MAX_ACTIVE_FEATURES, dtype=torch.float32).npu()", "benchmark input"),
      C("indices1 = torch.cat([torch.sort((torch.rand(BATCH_SIZE, MAX_ACTIVE_FEATURES * 3 // 4)) * INPUT_SIZE, dim=1)", "tensor_to_device", "replace", True,
        "indices1 = torch.cat([torch.sort((torch.rand(BATCH_SIZE, MAX_ACTIVE_FEATURES * 3 // 4)) * INPUT_SIZE, dim=1)[0].to(dtype=torch.int32), torch.full((BATCH_SIZE, MAX_ACTIVE_FEATURES // 4), -1, dtype=torch.int32)], dim=1).npu()",
        "benchmark input"),
      C("values1 = torch.rand(BATCH_SIZE, MAX_ACTIVE_FEATURES, dtype=torch.float32).cuda()", "tensor_to_device", "replace", True,
        "values1 = torch.rand(BATCH_SIZE, MAX_ACTIVE_FEATURES, dtype=torch.float32).npu()", "benchmark input"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "benchmark timing"),
  ])

E("nnue_dataset", "nnue_dataset.py", "explicit_replacement",
  "nnue-pytorch nnue_dataset.py (ctypes C++ loader, pinned H2D copies)",
  [
      C("white_values = torch.from_numpy(", "pin_memory", "replace", False,
        "white_values = torch.from_numpy(np.ctypeslib.as_array(self.white_values, shape=(self.size, self.max_active_features))).pin_memory(device=\"npu\").to(device=device, non_blocking=True)",
        "unconfirmed whether a bare .pin_memory() picks the NPU pinned allocator (it defaults to the CUDA one in older torch); not in the knowledge base"),
      C("black_values = torch.from_numpy(", "pin_memory", "replace", False,
        "black_values = torch.from_numpy(np.ctypeslib.as_array(self.black_values, shape=(self.size, self.max_active_features))).pin_memory(device=\"npu\").to(device=device, non_blocking=True)",
        "same pinned copy, unconfirmed"),
      C("white_indices = torch.from_numpy(", "pin_memory", "replace", False,
        "white_indices = torch.from_numpy(np.ctypeslib.as_array(self.white, shape=(self.size, self.max_active_features))).pin_memory(device=\"npu\").to(device=device, non_blocking=True)",
        "same pinned copy, unconfirmed"),
      C("black_indices = torch.from_numpy(", "pin_memory", "replace", False,
        "black_indices = torch.from_numpy(np.ctypeslib.as_array(self.black, shape=(self.size, self.max_active_features))).pin_memory(device=\"npu\").to(device=device, non_blocking=True)",
        "same pinned copy, unconfirmed"),
      C("us = torch.from_numpy(", "pin_memory", "replace", False,
        "us = torch.from_numpy(np.ctypeslib.as_array(self.is_white, shape=(self.size, 1))).pin_memory(device=\"npu\").to(device=device, non_blocking=True)",
        "same pinned copy, unconfirmed"),
      C("outcome = torch.from_numpy(", "pin_memory", "replace", False,
        "outcome = torch.from_numpy(np.ctypeslib.as_array(self.outcome, shape=(self.size, 1))).pin_memory(device=\"npu\").to(device=device, non_blocking=True)",
        "same pinned copy, unconfirmed"),
      C("score = torch.from_numpy(", "pin_memory", "replace", False,
        "score = torch.from_numpy(np.ctypeslib.as_array(self.score, shape=(self.size, 1))).pin_memory(device=\"npu\").to(device=device, non_blocking=True)",
        "same pinned copy, unconfirmed"),
      C("psqt_indices = torch.from_numpy(", "pin_memory", "replace", False,
        "psqt_indices = torch.from_numpy(np.ctypeslib.as_array(self.psqt_indices, shape=(self.size,))).long().pin_memory(device=\"npu\").to(device=device, non_blocking=True)",
        "same pinned copy, unconfirmed"),
      C("layer_stack_indices = torch.from_numpy(", "pin_memory", "replace", False,
        "layer_stack_indices = torch.from_numpy(np.ctypeslib.as_array(self.layer_stack_indices, shape=(self.size,))).long().pin_memory(device=\"npu\").to(device=device, non_blocking=True)",
        "same pinned copy, unconfirmed"),
  ])

E("nnue_train", "train.py", "explicit_replacement",
  "nnue-pytorch train.py (Lightning trainer, main_device string)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry point"),
      C("nnue = torch.load(args.resume_from_model)", "tensor_to_device", "replace", True,
        "nnue = torch.load(args.resume_from_model, map_location='cpu')",
        "the .pt file pickles the whole module with cuda parameters"),
      C("accelerator='cuda',", "device_type", "replace", True, "accelerator='npu',",
        "Lightning's CUDA accelerator refuses to start without CUDA; an NPU accelerator has to be registered (no built-in one in Lightning 2.1; replacement unconfirmed)"),
      C("else 'cuda:' + str(trainer.strategy.root_device.index)", "device_type", "replace", True,
        "main_device = trainer.strategy.root_device if trainer.strategy.root_device.index is None else 'npu:' + str(trainer.strategy.root_device.index)",
        "device string handed to the C++ loader wrapper"),
      C("nnue = torch.compile(nnue, mode='max-autotune')", "compile_mode", "replace", False,
        "nnue = torch.compile(nnue)",
        "opt-in flag; max-autotune relies on Triton autotuning and CUDA graphs; NPU Inductor support depends on the torch_npu version (unconfirmed which mode works)"),
  ])

E("nnue_requirements", "requirements.txt", "explicit_replacement",
  "nnue-pytorch requirements.txt (cupy-cuda12x, cu121 index)",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CPU torch wheel is what torch_npu is documented against on x86; CUDA build underneath is unconfirmed"),
      C("=torch==2.1.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10", "adapter wheel"),
      C("cupy-cuda12x>=12.2.0", "custom_cuda_extension", "removal", False, None,
        "unused after the feature-transformer rewrite; installing it is harmless"),
  ])

# ---------------------------------------------------------------- batched inference server
E("az_inference_server", "alphazero/inference_server.py", "explicit_replacement",
  "AlphaZero re-implementation GPU inference server (torch.multiprocessing, shared CUDA tensors)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "spawned server processes unpickle this module; the npu backend must be registered there"),
      C("self.policy = torch.zeros((num_workers, num_actions), dtype=torch.float32, device=device).share_memory_()", "unsupported_op_workaround", "replace", True,
        "self.policy = torch.zeros((num_workers, num_actions), dtype=torch.float32).share_memory_()",
        "result slots rely on CUDA IPC; Tensor.share_memory_ is on msFmkTransplt's unsupported list and NPU IPC is unconfirmed -> keep results in host shared memory"),
      C("self.value = torch.zeros((num_workers,), dtype=torch.float32, device=device).share_memory_()", "unsupported_op_workaround", "replace", True,
        "self.value = torch.zeros((num_workers,), dtype=torch.float32).share_memory_()", "same"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = str(self.gpu_id)', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(self.gpu_id)',
        "per-server device pinning; ignored by the NPU runtime, so every server would use device 0 (must be set before the first NPU call in the child; alternatively torch.npu.set_device(self.gpu_id))"),
      C("torch.cuda.set_device(0)", "torch_cuda_api", "replace", True, "torch.npu.set_device(0)", "raises without CUDA"),
      C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")', "hard-coded device"),
      C("stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "stream = torch.npu.Stream()", "side stream"),
      C("dtype=torch.float32).pin_memory()", "pin_memory", "replace", False,
        "pinned = torch.empty((self.cfg.max_batch,) + tuple(self.slots.board_shape), dtype=torch.float32).pin_memory(device=\"npu\")",
        "unconfirmed whether bare pin_memory() uses the NPU host allocator"),
      C("with torch.cuda.stream(stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(stream):", "stream context"),
      C("policy_out.index_copy_(0, idx, p)", "unsupported_op_workaround", "replace", True,
        "policy_out.index_copy_(0, idx_cpu, p.cpu())", "follow-up of moving the result slots to host shared memory"),
      C("value_out.index_copy_(0, idx, v.float().view(-1))", "unsupported_op_workaround", "replace", True,
        "value_out.index_copy_(0, idx_cpu, v.float().view(-1).cpu())", "same follow-up"),
      C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "num_gpus = torch.npu.device_count()",
        "0 on an NPU host -> 'InferenceServer needs at least one GPU'"),
      C('slots = SharedSlots(num_workers, board_shape, num_actions, device=f"cuda:{cfg.gpus[0]}")', "device_type", "replace", True,
        'slots = SharedSlots(num_workers, board_shape, num_actions, device="cpu")',
        "result slots are created on the host now"),
  ])

E("az_selfplay_workers", "alphazero/selfplay.py", "explicit_replacement",
  "AlphaZero re-implementation self-play driver (CPU MCTS workers + remote evaluation)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry point (python -m alphazero.selfplay)"),
      C('self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "torch_cuda_api", "replace", True,
        'self.device = torch.device("npu" if torch.npu.is_available() else "cpu")', "--local-eval " + SILENT_CPU),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "removal", False, None,
        "worker processes never touch the accelerator; the call is a lazy no-op"),
  ])

# ---------------------------------------------------------------- LightZero
E("lz_train_muzero", "lzero/entry/train_muzero.py", "device_branch_or_abstraction",
  "opendilab/LightZero lzero/entry/train_muzero.py",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "zoo config scripts call this entry without importing torch_npu"),
      C("=if cfg.policy.cuda and torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        "elif cfg.policy.cuda and torch.npu.is_available():  # cfg.policy.device = 'npu'",
        "policy.cuda=True silently becomes device='cpu' on an NPU host; the CUDA branch stays"),
      C("if cfg.policy.cuda and torch.cuda.is_available() and learner.train_iter % 1000 == 0:", "torch_cuda_api", "replace", False,
        "if cfg.policy.device == 'npu' and learner.train_iter % 1000 == 0:", "guard is always false on NPU: periodic cache release skipped"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "cache release only"),
  ])

# ---------------------------------------------------------------- OpenSpiel
E("os_nfsp_example", "open_spiel/python/examples/leduc_nfsp_pytorch.py", "device_branch_or_abstraction",
  "deepmind/open_spiel python/examples/leduc_nfsp_pytorch.py (fork with a device flag)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry point"),
      C("if FLAGS.use_gpu and torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        "if FLAGS.use_gpu and torch.npu.is_available():  # return torch.device(\"npu\")",
        "pick_device falls through to CPU on an NPU host"),
      C("torch.cuda.manual_seed_all(FLAGS.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(FLAGS.seed)",
        "lazy no-op without CUDA; torch.manual_seed above should already seed the npu generator (unconfirmed)"),
      C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False, "torch.use_deterministic_algorithms(True)",
        "accepted but has no effect on NPU, so the reproducibility the comment asks for is not obtained (unconfirmed which switch NPU kernels honour)"),
      C('if device.type == "cuda":', "device_type", "replace", False, 'if device.type in ("cuda", "npu"):', "memory logging silently skipped"),
      C("torch.cuda.memory_allocated(device) / 2**20)", "torch_cuda_api", "replace", False,
        "torch.npu.memory_allocated(device) / 2**20)", "logging only"),
  ])

# ---------------------------------------------------------------- infra
E("lz_dockerfile", "Dockerfile", "explicit_replacement",
  "LightZero-style training Dockerfile (nvidia/cuda base, cu118 wheels)",
  [
      C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "import_torch_npu", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "needs a CANN base image (driver mounted at run time); exact image tag unconfirmed"),
      C("NVIDIA_VISIBLE_DEVICES=all \\", "env_var", "replace", False, "ASCEND_VISIBLE_DEVICES=all \\",
        "read by the NVIDIA container runtime only; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES (normally passed at docker run)"),
      C("NVIDIA_DRIVER_CAPABILITIES=compute,utility \\", "env_var", "removal", False, None, "NVIDIA container runtime only"),
      C("RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", True,
        "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu && pip install --no-cache-dir torch-npu==2.1.0.post10",
        "CUDA wheels plus no torch_npu"),
      C("RUN python -c \"import torch; assert torch.version.cuda is not None", "device_capability_check", "replace", True,
        "RUN python -c \"import torch, torch_npu; print(torch.__version__, torch_npu.__version__)\"",
        "the build fails once the CPU torch wheel is installed"),
  ])

E("kg_environment", "environment.yml", "explicit_replacement",
  "conda environment.yml for a Go engine's python training side",
  [
      C("=- nvidia", "import_torch_npu", "removal", False, None, "CUDA channel"),
      C("- pytorch-cuda=12.1", "import_torch_npu", "removal", False, None,
        "selects the CUDA build of conda pytorch; torch_npu on top of it is unconfirmed"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post10", "adapter wheel from PyPI"),
      C("- nvidia-ml-py==12.535.133", "device_capability_check", "removal", False, None,
        "NVML has no NPU equivalent (npu-smi / torch.npu.mem_get_info); only used for monitoring"),
  ])

# ---------------------------------------------------------------- vectorised GPU board env
E("gg_setup", "setup.py", "device_branch_or_abstraction",
  "setup.py of a vectorised board-game env with an optional CUDAExtension (CuLE-style)",
  [
      C('if CUDA_HOME is not None and os.environ.get("FORCE_CPU", "0") != "1":', "custom_cuda_extension", "add_branch", False,
        'elif os.environ.get("ASCEND_HOME_PATH") and os.environ.get("FORCE_CPU", "0") != "1":  # NpuExtension + Ascend C kernels',
        "without CUDA_HOME the CPU extension builds and vec_env falls back to pure torch on NPU; an Ascend C port is performance only"),
  ])

E("gg_vec_env", "gomoku_gpu/vec_env.py", "device_branch_or_abstraction",
  "Python wrapper of the vectorised gomoku env (CUDA kernels / OpenMP / torch fallback)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU,
        "needed only for the standalone benchmark; library users import torch_npu in their entry point"),
      C('def __init__(self, num_envs: int, size: int = 15, win_len: int = 5, device="cuda", seed: Optional[int] = None):', "device_type", "replace", True,
        'def __init__(self, num_envs: int, size: int = 15, win_len: int = 5, device="npu", seed: Optional[int] = None):',
        "default device; VecGomoku(n) fails on an NPU host"),
      C('def benchmark(num_envs=4096, steps=200, device="cuda"):', "device_type", "replace", True,
        'def benchmark(num_envs=4096, steps=200, device="npu"):', "benchmark default device"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "benchmark timing"),
      C("torch.cuda.synchronize(env.device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(env.device)", "benchmark timing"),
  ])
