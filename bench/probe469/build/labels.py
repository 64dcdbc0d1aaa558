"""Labels for probe469 (board-game engine trainers: KataGo, nnue-pytorch, alpha-zero-general,
muzero-general, an lczero-training style PyTorch port).  One C(...) per upstream line a careful
porter would edit for Ascend NPU + torch_npu (explicit port, no transfer_to_npu)."""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


TORCH_NPU_ENTRY = ("Entry script: torch.npu / 'npu' devices only exist after torch_npu is imported "
                   "(mandatory before torch_npu 2.5.1, autoloaded after; the explicit import is still recommended).")

# ---------------------------------------------------------------------------------------------
# KataGo (lightvector/KataGo, python/ PyTorch training since v1.12)
# ---------------------------------------------------------------------------------------------

E("katago_train", "python/train.py", "explicit_replacement",
  "lightvector/KataGo python/train.py (multi-GPU DDP trainer, -multi-gpus / -use-fp16)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", TORCH_NPU_ENTRY),
    C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", True,
      "from torch_npu.npu.amp import GradScaler, autocast",
      "torch.cuda.amp GradScaler/autocast disable themselves (with a warning) when CUDA is absent: -use-fp16 "
      "would silently train in fp32 without loss scaling. torch_npu.npu.amp is the ✔ NPU form in Ascend's 2.7.1 list."),
    C('torch.distributed.init_process_group("nccl"', "dist_backend", "replace", True,
      'torch.distributed.init_process_group("hccl", rank=rank, world_size=world_size)',
      "NCCL does not exist on Ascend; collectives go through HCCL."),
    C("assert torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "assert torch.npu.is_available()",
      "Multi-device branch asserts an accelerator; torch.cuda.is_available() is False on an NPU host so -multi-gpus aborts."),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "Otherwise the trainer silently falls through to the CPU branch."),
    C("torch.cuda.set_device(my_gpu_id)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(my_gpu_id)", "Per-rank device binding."),
    C('logging.info("Using GPU device: " + torch.cuda.get_device_name())', "torch_cuda_api", "replace", True,
      'logging.info("Using NPU device: " + torch.npu.get_device_name())',
      "torch.cuda.get_device_name() initialises CUDA and raises on a CPU-only torch build."),
    C('device = torch.device("cuda", my_gpu_id)', "device_type", "replace", True,
      'device = torch.device("npu", my_gpu_id)',
      "This device object feeds the model, torch.load(map_location=device), DDP device_ids and the data pipeline."),
    C("if rank == 0 and torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if rank == 0 and torch.npu.is_available():",
      "Guards a peak-memory log line only; unported it just skips the log."),
    C("torch.cuda.max_memory_allocated() / 1048576.0", "torch_cuda_api", "replace", False,
      'logging.info("Peak NPU memory %.1f MB" % (torch.npu.max_memory_allocated() / 1048576.0))',
      "Logging only: the CUDA allocator was never initialised, so the CUDA call reports 0 instead of failing."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "torch.cuda.empty_cache() is a no-op when CUDA is uninitialised; the NPU form only returns cached blocks (performance/memory)."),
])

E("katago_model", "python/katago/train/model_pytorch.py", "explicit_replacement",
  "lightvector/KataGo python/katago/train/model_pytorch.py (NormMask, KataGPool, ResBlock, heads)", [])

E("katago_data", "python/katago/train/data_processing_pytorch.py", "explicit_replacement",
  "lightvector/KataGo python/katago/train/data_processing_pytorch.py (npz batches -> device tensors)", [])

E("katago_load_model", "python/katago/train/load_model.py", "explicit_replacement",
  "lightvector/KataGo python/katago/train/load_model.py", [])

E("katago_test", "python/test.py", "explicit_replacement",
  "lightvector/KataGo python/test.py (evaluate a checkpoint on npz data, -gpu-idx)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", TORCH_NPU_ENTRY),
    C("if gpu_idx is not None and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if gpu_idx is not None and torch.npu.is_available():", "Otherwise silently evaluates on the CPU."),
    C("torch.cuda.set_device(gpu_idx)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(gpu_idx)", "Device binding."),
    C('logging.info("Using GPU device: " + torch.cuda.get_device_name())', "torch_cuda_api", "replace", True,
      'logging.info("Using NPU device: " + torch.npu.get_device_name())',
      "torch.cuda.get_device_name() raises without CUDA."),
    C('device = torch.device("cuda", gpu_idx)', "device_type", "replace", True,
      'device = torch.device("npu", gpu_idx)', "Model and batches are placed with this device."),
    C("elif torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "elif torch.npu.is_available():", "Default-device branch; otherwise falls back to CPU silently."),
    C('device = torch.device("cuda")', "device_type", "replace", True,
      'device = torch.device("npu")', "Default accelerator device."),
    C('if device.type == "cuda":', "device_type", "replace", True,
      'if device.type == "npu":',
      "Once the device is 'npu' this test is False and the benchmark reads the clock without waiting for "
      "queued NPU work: the reported positions/s is silently wrong."),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "torch.cuda.synchronize() raises on a CPU-only torch build."),
])

E("katago_train_sh", "python/selfplay/train.sh", "explicit_replacement",
  "lightvector/KataGo python/selfplay/train.sh (launcher around train.py)", [])

# ---------------------------------------------------------------------------------------------
# nnue-pytorch (official-stockfish/nnue-pytorch)
# ---------------------------------------------------------------------------------------------

E("nnue_train", "train.py", "explicit_replacement",
  "official-stockfish/nnue-pytorch train.py (Lightning trainer, --gpus, C++ sparse data loader)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", TORCH_NPU_ENTRY),
    C('accelerator="cuda",', "distributed_framework", "replace", True,
      "accelerator=NPUAccelerator(),",
      "Lightning has no built-in Ascend accelerator: accelerator='cuda' fails on an NPU host. The port needs a small "
      "custom lightning Accelerator (setup_device -> torch.npu.set_device, get_device_stats -> torch.npu.memory_stats, "
      "is_available -> torch.npu.is_available) passed as an instance. Lightning-side details unconfirmed in the knowledge base."),
    C('strategy="ddp" if len(gpus) > 1 else "auto",', "dist_backend", "replace", True,
      'strategy=DDPStrategy(accelerator=NPUAccelerator(), process_group_backend="hccl") if len(gpus) > 1 else "auto",',
      "Lightning picks the process-group backend from the device type (nccl only for 'cuda', else gloo); "
      "gloo cannot all-reduce NPU tensors, so HCCL must be named explicitly for multi-device runs."),
    C("else 'cuda:' + str(trainer.strategy.root_device.index)", "device_type", "replace", True,
      "main_device = trainer.strategy.root_device if trainer.strategy.root_device.index is None else 'npu:' + str(trainer.strategy.root_device.index)",
      "main_device is where the model and every sparse batch from the C++ loader are placed."),
])

E("nnue_model", "model.py", "explicit_replacement",
  "official-stockfish/nnue-pytorch model.py (NNUE LightningModule, LayerStacks)", [])

E("nnue_ft", "feature_transformer.py", "kernel_rewrite",
  "official-stockfish/nnue-pytorch feature_transformer.py (cupy RawKernel sparse feature transformer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "Only needed when the module's self-test is run directly (it moves tensors with .npu()); in training "
      "train.py has already imported torch_npu."),
    C("import cupy as cp", "custom_cuda_extension", "removal", True, None,
      "CuPy has no Ascend support (cupy issue #9379). With the kernels rewritten in torch ops and cupy dropped from "
      "the requirements, this import would fail at module load."),
    C("        kernel = cp.RawKernel(r'''", "custom_cuda_extension", "removal", False, None,
      "The whole make_feature_transformer_slice_forward_kernel (CUDA C source in a cupy RawKernel) is deleted; "
      "dead code once the call sites below are rewritten, so leaving it is harmless."),
    C("        bwd_kernel = cp.RawKernel(r'''", "custom_cuda_extension", "removal", False, None,
      "Same for the backward kernel (atomicAdd scatter), dead after the rewrite."),
    C("assert feature_indices.is_cuda", "device_type", "replace", True,
      "assert feature_indices.is_npu", "is_cuda is False for NPU tensors; the assert would fire on every forward."),
    C("assert feature_values.is_cuda", "device_type", "replace", True,
      "assert feature_values.is_npu", "Same."),
    C("assert weight.is_cuda", "device_type", "replace", True,
      "assert weight.is_npu", "Same."),
    C("assert bias.is_cuda", "device_type", "replace", True,
      "assert bias.is_npu", "Same."),
    C("kernel = make_feature_transformer_slice_forward_kernel(max_active_features, output_size)", "custom_cuda_extension", "replace", True,
      "output = _ft_slice_forward_torch(feature_indices, feature_values, weight, bias)",
      "Rewrite as torch ops that have NPU kernels: mask the -1 padding indices, then "
      "F.embedding_bag(idx.clamp(min=0), weight, per_sample_weights=values * mask, mode='sum') + bias."),
    C("kernel(grid=(batch_size,), args=(feature_indices.data_ptr(), feature_values.data_ptr(), weight.data_ptr(), bias.data_ptr(), output.data_ptr()))",
      "custom_cuda_extension", "removal", True, None,
      "Raw-pointer cupy launch; `kernel` no longer exists after the line above is rewritten."),
    C("kernel = make_feature_transformer_slice_backward_kernel(max_active_features, output_size)", "custom_cuda_extension", "replace", True,
      "weight_grad, bias_grad = _ft_slice_backward_torch(feature_indices, feature_values, grad_output, weight.shape[0])",
      "Backward as torch ops: weight_grad.index_add_(0, idx[mask], (values[..., None] * grad_output[:, None, :])[mask]); "
      "bias_grad = grad_output.sum(0)."),
    C("kernel(grid=(batch_size,), args=(feature_indices.data_ptr(), feature_values.data_ptr(), weight_grad.data_ptr()",
      "custom_cuda_extension", "removal", True, None, "Raw-pointer cupy launch of the backward kernel."),
    C("assert all(t.is_cuda for t in", "device_type", "replace", True,
      "assert all(t.is_npu for t in (feature_indices_0, feature_values_0, feature_indices_1, feature_values_1, weight, bias))",
      "Same device assert for the two-perspective variant."),
    C("fwd = make_feature_transformer_slice_forward_kernel(max_active_features, output_size)", "custom_cuda_extension", "replace", True,
      "output0 = _ft_slice_forward_torch(feature_indices_0, feature_values_0, weight, bias)",
      "White-perspective forward through the torch-op implementation."),
    C("fwd(grid=(batch_size,), args=(feature_indices_0.data_ptr()", "custom_cuda_extension", "replace", True,
      "output1 = _ft_slice_forward_torch(feature_indices_1, feature_values_1, weight, bias)",
      "Black-perspective forward; the cupy launch goes away."),
    C("fwd(grid=(batch_size,), args=(feature_indices_1.data_ptr()", "custom_cuda_extension", "removal", True, None,
      "Second cupy launch, replaced by the line above."),
    C("bwd = make_feature_transformer_slice_backward_kernel(max_active_features, output_size)", "custom_cuda_extension", "replace", True,
      "weight_grad, bias_grad = _ft_slice_backward_torch(feature_indices_0, feature_values_0, grad_output_0, weight.shape[0])",
      "Backward for perspective 0."),
    C("bwd(grid=(batch_size,), args=(feature_indices_0.data_ptr()", "custom_cuda_extension", "replace", True,
      "wg1, bg1 = _ft_slice_backward_torch(feature_indices_1, feature_values_1, grad_output_1, weight.shape[0])",
      "Backward for perspective 1."),
    C("bwd(grid=(batch_size,), args=(feature_indices_1.data_ptr()", "custom_cuda_extension", "replace", True,
      "weight_grad.add_(wg1); bias_grad.add_(bg1)",
      "The kernel accumulated both perspectives into the same gradient buffers with atomics."),
    C("weight1 = weight0.detach().clone().cuda().requires_grad_()", "tensor_to_device", "replace", True,
      "weight1 = weight0.detach().clone().npu().requires_grad_()", "Self-test: device copy of the weights."),
    C("bias1 = bias0.detach().clone().cuda().requires_grad_()", "tensor_to_device", "replace", True,
      "bias1 = bias0.detach().clone().npu().requires_grad_()", "Self-test."),
    C("output1 = FeatureTransformerSliceFunction.apply(indices.clone().cuda(), values.clone().cuda(), weight1, bias1)",
      "tensor_to_device", "replace", True,
      "output1 = FeatureTransformerSliceFunction.apply(indices.clone().npu(), values.clone().npu(), weight1, bias1)",
      "Self-test."),
])

E("nnue_dataset", "nnue_dataset.py", "explicit_replacement",
  "official-stockfish/nnue-pytorch nnue_dataset.py (ctypes SparseBatch -> pinned tensors)", [
    C("return torch.from_numpy(arr).pin_memory().to(device=device, non_blocking=True)", "pin_memory", "replace", False,
      "return torch.from_numpy(arr).to(device=device, non_blocking=True)",
      "Unconfirmed: on older torch a no-argument pin_memory() asks for the CUDA pinned allocator; whether torch_npu "
      "reroutes it is not documented in the knowledge base, and a field report (seed article) saw slowdowns/crashes with "
      "pin_memory on some torch_npu versions. Performance-only either way."),
])

E("nnue_serialize", "serialize.py", "explicit_replacement",
  "official-stockfish/nnue-pytorch serialize.py (.ckpt/.pt -> .nnue)", [
    C("nnue = M.NNUE.load_from_checkpoint(args.source, feature_set=feature_set)", "device_type", "replace", False,
      "nnue = M.NNUE.load_from_checkpoint(args.source, feature_set=feature_set, map_location='cpu')",
      "Checkpoints written by the ported trainer hold NPU tensors and load fine on the NPU host; only .ckpt files "
      "trained on CUDA machines would fail to deserialize. Serialization runs on the CPU anyway."),
    C("nnue = torch.load(args.source, weights_only=False)", "device_type", "replace", False,
      "nnue = torch.load(args.source, weights_only=False, map_location='cpu')",
      "Same judgement for pickled .pt models."),
])

E("nnue_easy_train", "scripts/easy_train.py", "explicit_replacement",
  "official-stockfish/nnue-pytorch scripts/easy_train.py (multi-run orchestrator, GPUtil stats)", [
    C("('cupy', 'cupy-cuda12x', None),", "custom_cuda_extension", "removal", True, None,
      "With cupy gone from the ported requirements, this dependency check would refuse to start any training."),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "The check below calls torch.npu.*, which needs torch_npu imported in this process (pre-2.5.1)."),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available():", "Otherwise exits with 'No CUDA capable GPU found' on an NPU host."),
    C("LOGGER.info(f'Found {torch.cuda.device_count()} CUDA device(s): ' +", "torch_cuda_api", "replace", False,
      "LOGGER.info(f'Found {torch.npu.device_count()} NPU device(s): ' +",
      "Log line only; torch.cuda.device_count() returns 0 instead of failing."),
    C("', '.join(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())))", "torch_cuda_api", "replace", False,
      "', '.join(torch.npu.get_device_name(i) for i in range(torch.npu.device_count())))",
      "Looks fatal but is not: range(torch.cuda.device_count()) is empty, so get_device_name is never called."),
    C("gpus = GPUtil.getGPUs()", "torch_cuda_api", "replace", False,
      "gpus = query_npu_stats(self.gpu_ids)  # parses `npu-smi info` / torch.npu.utilization()",
      "GPUtil shells out to nvidia-smi and returns an empty list when it is missing: the TUI shows 'n/a'. Display only."),
    C("if 'CUDA out of memory' in line:", "device_type", "replace", False,
      "if 'out of memory' in line:",
      "The hint is matched against the CUDA OOM text; torch_npu reports 'NPU out of memory'. Hint only."),
])

E("nnue_requirements", "requirements.txt", "explicit_replacement",
  "official-stockfish/nnue-pytorch requirements.txt", [
    C("torch>=2.2", "import_torch_npu", "npu_only_addition", True,
      "torch-npu  # must match the installed torch exactly (torch-npu x.y.z[.postN] pairs with torch x.y.z)",
      "torch_npu is the Ascend backend; its wheel version must equal the torch version."),
    C("cupy-cuda12x", "custom_cuda_extension", "removal", False, None,
      "No longer imported after the feature-transformer rewrite; leaving it only installs an unused CUDA package."),
])

# ---------------------------------------------------------------------------------------------
# alpha-zero-general (suragnair/alpha-zero-general)
# ---------------------------------------------------------------------------------------------

E("azg_nnet", "othello/pytorch/NNet.py", "explicit_replacement",
  "suragnair/alpha-zero-general othello/pytorch/NNet.py (args.cuda flag, .contiguous().cuda())", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "torch.npu.is_available() is evaluated at import time in the module-level args dict, before any entry script "
      "(main.py, pit.py) has touched torch_npu."),
    C("'cuda': torch.cuda.is_available(),", "torch_cuda_api", "replace", True,
      "'cuda': torch.npu.is_available(),",
      "The whole wrapper keys device placement on this flag; unported it silently trains on the CPU. Key name kept "
      "so Coach/pit code that reads args.cuda keeps working."),
    C("self.nnet.cuda()", "tensor_to_device", "replace", True, "self.nnet.npu()", "Model placement."),
    C("boards, target_pis, target_vs = boards.contiguous().cuda()", "tensor_to_device", "replace", True,
      "boards, target_pis, target_vs = boards.contiguous().npu(), target_pis.contiguous().npu(), target_vs.contiguous().npu()",
      "Training batch placement."),
    C("if args.cuda: board = board.contiguous().cuda()", "tensor_to_device", "replace", True,
      "if args.cuda: board = board.contiguous().npu()", "MCTS inference input placement."),
    C("map_location = None if args.cuda else 'cpu'", "device_type", "replace", True,
      "map_location = 'npu' if args.cuda else 'cpu'",
      "None restores tensors to their saved device; the pretrained models pit.py loads were saved from CUDA, "
      "which cannot be deserialized on an NPU host."),
])

E("azg_othellonnet", "othello/pytorch/OthelloNNet.py", "explicit_replacement",
  "suragnair/alpha-zero-general othello/pytorch/OthelloNNet.py", [])

E("azg_pit", "pit.py", "explicit_replacement",
  "suragnair/alpha-zero-general pit.py (plays pretrained networks against each other)", [])

E("azg_dockerfile", "docker/Dockerfile.pytorch", "explicit_replacement",
  "suragnair/alpha-zero-general docker/Dockerfile.pytorch", [
    C("FROM pytorch/pytorch:2.1.0-cuda11.8-cudnn8-runtime", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "A CUDA PyTorch image has no CANN toolkit or torch_npu. Base on a CANN image; the exact image name/tag is "
      "unconfirmed (not in the knowledge base), the CANN 8.0.0 <-> torch_npu 2.1.0.post10 pairing is from the matrix."),
    C("RUN pip install --no-cache-dir \\", "import_torch_npu", "replace", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torch-npu==2.1.0.post10 pyyaml \\",
      "The CANN base image carries no torch; install CPU torch plus the matching torch_npu wheel."),
])

E("azg_setup_env", "docker/setup_env.sh", "explicit_replacement",
  "suragnair/alpha-zero-general docker/setup_env.sh (nvidia-docker launcher)", [
    C("nvidia-docker run -it --rm \\", "device_type", "replace", True,
      "docker run -it --rm --device=/dev/davinci0 --device=/dev/davinci_manager --device=/dev/devmm_svm --device=/dev/hisi_hdc -v /usr/local/Ascend/driver:/usr/local/Ascend/driver:ro \\",
      "nvidia-docker does not exist on an Ascend host; NPUs are passed as /dev/davinci* devices plus the driver mount."),
])

# ---------------------------------------------------------------------------------------------
# muzero-general (werner-duvaud/muzero-general)
# ---------------------------------------------------------------------------------------------

E("muzero_main", "muzero.py", "explicit_replacement",
  "werner-duvaud/muzero-general muzero.py (Ray actors, GPU accounting)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", TORCH_NPU_ENTRY),
    C("else torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "else torch.npu.device_count()",
      "Only feeds Ray's GPU bookkeeping: with 0 the actors are created with num_gpus=0 and still use the NPU "
      "themselves, so nothing fails (see README near-misses for the Ray resource lines)."),
])

E("muzero_trainer", "trainer.py", "explicit_replacement",
  "werner-duvaud/muzero-general trainer.py (Ray Trainer actor)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "Runs inside a Ray worker process, which imports this module but not the driver's imports; "
      "torch.device('npu') needs torch_npu loaded there (pre-2.5.1, and the lock file pins torch 2.1)."),
    C('self.model.to(torch.device("cuda" if self.config.train_on_gpu else "cpu"))', "device_type", "replace", True,
      'self.model.to(torch.device("npu" if self.config.train_on_gpu else "cpu"))', "Trainer model placement."),
    C('if "cuda" not in str(next(self.model.parameters()).device):', "device_type", "replace", False,
      'if "npu" not in str(next(self.model.parameters()).device):',
      "Only prints a misleading 'You are not training on GPU' warning."),
])

E("muzero_self_play", "self_play.py", "explicit_replacement",
  "werner-duvaud/muzero-general self_play.py (SelfPlay actor, MCTS)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "Ray worker process, same reason as trainer.py."),
    C('self.model.to(torch.device("cuda" if self.config.selfplay_on_gpu else "cpu"))', "device_type", "replace", True,
      'self.model.to(torch.device("npu" if self.config.selfplay_on_gpu else "cpu"))',
      "Fails as soon as a game config sets selfplay_on_gpu=True (connect4's default is False)."),
])

E("muzero_models", "models.py", "explicit_replacement",
  "werner-duvaud/muzero-general models.py (fully connected MuZero network, support transforms)", [
    C("self.representation_network = torch.nn.DataParallel(", "unsupported_op_workaround", "replace", True,
      "self.representation_network = SingleDeviceWrapper(",
      "torch.nn.DataParallel is ✘ in Ascend's 2.7.1 API list. It also grabs the visible accelerator: on CUDA hosts "
      "Ray hides GPUs from num_gpus=0 actors (the 'CPUActor trick'), but NPUs stay visible, so DataParallel moves the "
      "sub-network to npu:0 and the CPU self-play actors then fail its device check. SingleDeviceWrapper is a trivial "
      "nn.Module holding `.module`, which keeps the checkpoint keys ('...network.module.0.weight') unchanged."),
    C("self.dynamics_encoded_state_network = torch.nn.DataParallel(", "unsupported_op_workaround", "replace", True,
      "self.dynamics_encoded_state_network = SingleDeviceWrapper(", "Same."),
    C("self.dynamics_reward_network = torch.nn.DataParallel(", "unsupported_op_workaround", "replace", True,
      "self.dynamics_reward_network = SingleDeviceWrapper(", "Same."),
    C("self.prediction_policy_network = torch.nn.DataParallel(", "unsupported_op_workaround", "replace", True,
      "self.prediction_policy_network = SingleDeviceWrapper(", "Same."),
    C("self.prediction_value_network = torch.nn.DataParallel(", "unsupported_op_workaround", "replace", True,
      "self.prediction_value_network = SingleDeviceWrapper(", "Same."),
])

E("muzero_connect4", "games/connect4.py", "explicit_replacement",
  "werner-duvaud/muzero-general games/connect4.py (MuZeroConfig + game)", [
    C("self.train_on_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "self.train_on_gpu = torch.npu.is_available()  # Train on NPU if available",
      "Otherwise the trainer actor silently trains on the CPU."),
])

E("muzero_requirements", "requirements.lock", "explicit_replacement",
  "werner-duvaud/muzero-general requirements.lock", [
    C("torch==2.1.2", "import_torch_npu", "replace", True,
      "torch==2.1.0",
      "torch_npu wheels exist for torch 2.1.0 (2.1.0.postN), not 2.1.2; pin torch to 2.1.0 and add "
      "torch-npu==2.1.0.post10 (CANN 8.0.0) beside it."),
])

# ---------------------------------------------------------------------------------------------
# lczero-training style PyTorch trainer (LeelaChessZero/lczero-training layout, PyTorch port)
# ---------------------------------------------------------------------------------------------

E("lc0_train", "pt/train.py", "explicit_replacement",
  "LeelaChessZero/lczero-training tf/train.py, as rewritten by PyTorch ports (chunk selection, yaml config)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", TORCH_NPU_ENTRY),
])

E("lc0_ptprocess", "pt/ptprocess.py", "explicit_replacement",
  "LeelaChessZero/lczero-training tf/tfprocess.py, PyTorch port (AMP, SWA, timing, checkpoints)", [
    C('DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'DEVICE = torch.device("npu" if torch.npu.is_available() else "cpu")', "Module-level device global."),
    C("if precision == 'bf16' and not torch.cuda.is_bf16_supported():", "torch_cuda_api", "replace", True,
      "if precision == 'bf16' and not torch.npu.is_bf16_supported():",
      "torch.cuda.is_bf16_supported() initialises CUDA and raises on the NPU host."),
    C('if DEVICE.type == "cuda":', "device_type", "replace", True,
      'if DEVICE.type == "npu":',
      "Once DEVICE is 'npu' this block is skipped and cfg['gpu'] is never applied: training silently lands on device 0."),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)", "Device binding."),
    C("        ).cuda()", "tensor_to_device", "replace", True, ").npu()", "Main model placement."),
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.precision == 'half')", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler(enabled=self.precision == 'half')",
      "The CUDA scaler disables itself without CUDA: fp16 would run without loss scaling."),
    C("map_location=lambda storage, loc: storage.cuda(self.gpu)", "device_type", "replace", True,
      "state = torch.load(path, map_location=f'npu:{self.gpu}')", "Classic map_location idiom; storage.cuda() fails."),
    C("return tuple(torch.from_numpy(a).cuda(non_blocking=True) for a in batch)", "tensor_to_device", "replace", True,
      "return tuple(torch.from_numpy(a).npu(non_blocking=True) for a in batch)", "Batch upload."),
    C('with torch.autocast(device_type="cuda", dtype=self.amp_dtype, enabled=self.use_amp):', "amp", "replace", True,
      'with torch.autocast(device_type="npu", dtype=self.amp_dtype, enabled=self.use_amp):',
      "autocast('cuda') is disabled with a warning when CUDA is absent: precision 'half'/'bf16' silently trains in fp32."),
    C("step_start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "step_start = torch.npu.Event(enable_timing=True)",
      "torch.cuda.Event cannot be instantiated on a CPU-only torch build."),
    C("step_end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "step_end = torch.npu.Event(enable_timing=True)", "Same."),
    C("            torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "Raises without CUDA."),
    C("torch.cuda.max_memory_allocated() / 2 ** 20))", "torch_cuda_api", "replace", False,
      "torch.npu.max_memory_allocated() / 2 ** 20))",
      "Log value only; the uninitialised CUDA allocator reports 0 rather than failing."),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "Unlike max_memory_allocated, this resolves the current CUDA device first and raises on a CPU-only build."),
])

E("lc0_model", "pt/model.py", "explicit_replacement",
  "lczero-training PyTorch port model (SE-ResNet tower, attention policy, encoder blocks)", [
    C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):",
      "attention_kernel", "replace", True,
      "with contextlib.nullcontext():  # CUDA SDPA backend selection; on NPU SDPA dispatches to the fused kernel itself",
      "torch.backends.cuda.sdp_kernel is ✘ in Ascend's 2.7.1 list and in msFmkTransplt's unsupported list; "
      "F.scaled_dot_product_attention itself is ✔ on NPU (bool/None mask, head dim <= 512)."),
])

E("lc0_chunkparser", "pt/chunkparser.py", "explicit_replacement",
  "LeelaChessZero/lczero-training tf/chunkparser.py (multiprocess v6 chunk reader)", [])

E("lc0_config", "configs/example.yaml", "explicit_replacement",
  "LeelaChessZero/lczero-training tf/configs/example.yaml", [])

E("lc0_train_loop", "scripts/train_loop.sh", "explicit_replacement",
  "training-loop launcher as run by lczero training operators (rsync chunks, train, upload)", [
    C("set -euo pipefail", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "torch_npu needs the CANN environment (library paths, ASCEND_* variables); inserted before `set -u` so the "
      "script's strict mode cannot trip over unset variables inside set_env.sh."),
    C("nvidia-smi --query-gpu=", "env_var", "replace", False,
      '(while true; do npu-smi info; sleep 60; done) > "$LOGDIR/npu-$GPU.log" &',
      "Monitoring only, and backgrounded, so a missing nvidia-smi does not trip set -e."),
    C('CUDA_VISIBLE_DEVICES="$GPU" python3', "env_var", "replace", True,
      'ASCEND_RT_VISIBLE_DEVICES="$GPU" python3 "$REPO_DIR/pt/train.py" \\',
      "The config selects gpu: 0 among the visible devices; unported every NPU stays visible and training silently "
      "runs on NPU 0 instead of $GPU."),
])
