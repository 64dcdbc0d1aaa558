"""Labels for probe68 (hand-written synthetic upstream files; see ../README.md).

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

# the brief's "device_agnostic" style is spelled device_branch_or_abstraction by the shared builder
AGNOSTIC = "device_branch_or_abstraction"

IMPORT_NOTE = ("torch.npu.* / the hccl backend need torch_npu loaded (explicit import recommended even with "
               "the 2.5.1+ autoload)")
FP64_NOTE = ("Ascend's 2.7.1 API list supports torch.mm/bmm/matmul only in bf16/fp16/fp32 and torch.linalg.cholesky "
             "only in fp32 on A2/A3 (transfer_to_npu even aliases torch.cuda.DoubleTensor to npu.FloatTensor); "
             "a double-precision GP on the NPU hits both. Failure mode (error vs CPU fallback) not confirmed")

# ---------------------------------------------------------------------------------------------- GPyTorch
E("gpytorch_multigpu_exact", "examples/01_Exact_GPs/Simple_MultiGPU_GP_Regression.py", "explicit_replacement",
  "GPyTorch Simple_MultiGPU_GP_Regression example (MultiDeviceKernel + checkpoint_kernel partition search)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("n_devices = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "n_devices = torch.npu.device_count()",
      "returns 0 without CUDA, so the kernel is built with device_ids=range(0)"),
    C('output_device = torch.device("cuda:0")', "device_type", R, True, 'output_device = torch.device("npu:0")',
      "hard-coded CUDA device for data, model and likelihood"),
    C("self.covar_module = gpytorch.kernels.MultiDeviceKernel(", "unsupported_op_workaround", R, True,
      "self.covar_module = base_covar_module  # one NPU; checkpoint_kernel still partitions the kernel",
      "MultiDeviceKernel subclasses torch.nn.DataParallel, which Ascend marks unsupported (use one card, or "
      "shard the kernel rows by hand over DDP ranks)"),
    C("model.covar_module.module.base_kernel.lengthscale.item()", "unsupported_op_workaround", R, True,
      "model.covar_module.base_kernel.lengthscale.item(),",
      "the .module attribute belongs to the DataParallel wrapper that the port removes"),
    C("except torch.cuda.OutOfMemoryError as e:", "torch_cuda_api", R, False,
      "except (torch.cuda.OutOfMemoryError, RuntimeError) as e:  # NPU OOM surfaces as RuntimeError",
      "unconfirmed: which exception class torch_npu raises on device OOM; if it is not caught the partition "
      "search stops at the first size that does not fit"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; NPU cache is not released between partition sizes"),
])

E("gpytorch_svgp_regression", "examples/04_Variational_and_Approximate_GPs/SVGP_Regression_CUDA.py",
  "explicit_replacement", "GPyTorch SVGP regression tutorial (elevators, minibatch ELBO, optional NGD)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", R, True,
      "use_npu = torch.npu.is_available()", "False on an NPU host: the whole run silently stays on the CPU"),
    C("train_x, train_y, test_x, test_y = train_x.cuda()", "tensor_to_device", R, True,
      "train_x, train_y, test_x, test_y = train_x.npu(), train_y.npu(), test_x.npu(), test_y.npu()",
      ".cuda() needs a CUDA build"),
    C("model = model.cuda()", "tensor_to_device", R, True, "model = model.npu()", ".cuda() needs a CUDA build"),
    C("likelihood = likelihood.cuda()", "tensor_to_device", R, True, "likelihood = likelihood.npu()",
      ".cuda() needs a CUDA build"),
])

E("gpytorch_keops_kernel", "gpytorch/kernels/keops/keops_kernel.py", AGNOSTIC,
  "GPyTorch kernels/keops (KeOpsKernel base with dense fallback, RBF/Matern/Periodic KeOps kernels)", [
    C('return "GPU" if x.is_cuda else "CPU"', "custom_cuda_extension", R, False,
      'return "GPU" if x.is_cuda else "CPU"  # NPU tensors never reach KeOps (see _use_keops)',
      "unconfirmed: KeOps has CPU and CUDA backends only; an NPU tensor would be handed to the CPU backend"),
    C("=return True", "custom_cuda_extension", B, False,
      'return x1.device.type in ("cpu", "cuda")  # no KeOps backend for NPU tensors: use the dense path',
      "unconfirmed (KeOps device handling is not in the knowledge base): large problems on NPU must take "
      "_nonkeops_forward instead of a KeOps reduction"),
])

E("gpytorch_dkl_cifar", "examples/06_PyTorch_NN_Integration_DKL/dkl_densenet_cifar10.py", "transfer_to_npu",
  "GPyTorch SV-DKL DenseNet CIFAR-10 example (grid-interpolation variational GP on NN features)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "the quick port: transfer_to_npu redirects the .cuda()/torch.cuda calls of this script"),
    C("feature_extractor = nn.DataParallel(feature_extractor)", "unsupported_op_workaround", X, True, None,
      "nn.DataParallel is unsupported on Ascend; with transfer_to_npu device_count() reports the NPUs, so "
      "a multi-card host would wrap the extractor"),
])

# ----------------------------------------------------------------------------------------------- BoTorch
E("botorch_turbo1", "tutorials/turbo_1.py", "explicit_replacement",
  "BoTorch TuRBO-1 tutorial as a script (tkwargs device/dtype, SobolEngine, max_cholesky_size)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "is_available() is False on an NPU host: silent CPU run"),
    C("=dtype = torch.double", "unsupported_op_workaround", R, True,
      'dtype = torch.float32 if device.type == "npu" else torch.double', FP64_NOTE),
])

E("botorch_acqf_benchmark", "scripts/benchmark_acqf_optimization.py", "explicit_replacement",
  "BoTorch-style acquisition-optimisation benchmark runner (synchronised timers, peak memory, OOM handling)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)",
      "needs a CUDA build"),
    C('device = torch.device(f"cuda:{args.gpu}")', "device_type", R, True,
      'device = torch.device(f"npu:{args.gpu}")', "CUDA device string"),
    C("torch.cuda.get_device_name(args.gpu)", "torch_cuda_api", R, True,
      'print(f"Benchmarking on {torch.npu.get_device_name(args.gpu)}")', "raises without CUDA"),
    C('on_gpu = device.type == "cuda"', "device_type", R, True, 'on_gpu = device.type == "npu"',
      "on NPU the timers run without synchronising the asynchronous queue and no memory is recorded: "
      "the benchmark's output is silently wrong"),
    C("=torch.cuda.synchronize(device)", "torch_cuda_api", R, True, "torch.npu.synchronize(device)",
      "reached once the guard is ported; torch.cuda rejects an npu device"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", R, True,
      "torch.npu.reset_peak_memory_stats(device)", "same"),
    C("torch.cuda.synchronize(device)  # wait for the timed work", "torch_cuda_api", R, True,
      "torch.npu.synchronize(device)  # wait for the timed work", "same"),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", R, True,
      'result[key + "_peak_mem_mb"] = torch.npu.max_memory_allocated(device) / 2 ** 20', "same"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "lazily queued and harmless without CUDA; torch.manual_seed already seeds the default generator"),
    C('if device.type == "cuda":  # release cached blocks', "device_type", R, False,
      'if device.type == "npu":  # release cached blocks between configurations', "only guards empty_cache"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "cache release only"),
    C('=if device.type == "cuda":', "device_type", R, False, 'if device.type == "npu":',
      "environment metadata only"),
    C("props = torch.cuda.get_device_properties(device)", "torch_cuda_api", R, False,
      "props = torch.npu.get_device_properties(device)", "metadata, reached once the guard above is ported"),
    C('info["sm_count"] = props.multi_processor_count', "device_capability_check", R, False,
      'info["cube_cores"] = props.cube_core_num',
      "NPU device properties only carry name, total_memory, L2_cache_size, cube_core_num, vector_core_num "
      "(knowledge §2.8); reached only after the guard is ported"),
    C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", R, False,
      "except (torch.cuda.OutOfMemoryError, RuntimeError):", "unconfirmed: exception class of an NPU OOM"),
    C("torch.cuda.empty_cache()  # start the next config", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # start the next config from a clean allocator", "cache release only"),
    C("dtype = torch.float32 if args.float32 else torch.float64", "unsupported_op_workaround", R, True,
      "dtype = torch.float64 if (args.float64 or device.type == \"cpu\") else torch.float32", FP64_NOTE),
])

E("botorch_test_cuda", "test/test_cuda.py", "explicit_replacement",
  "BoTorch test/test_cuda.py (re-run the suite with BotorchTestCase.device flipped) plus GPU placement tests", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('@unittest.skipIf(not torch.cuda.is_available(), "CUDA is not available")', "torch_cuda_api", R, True,
      '@unittest.skipIf(not torch.npu.is_available(), "NPU is not available")',
      "the accelerator re-run is silently skipped on an NPU host"),
    C('tests.device = torch.device("cuda")', "device_type", R, True, 'tests.device = torch.device("npu")',
      "target device of the re-run"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", R, True, "if not torch.npu.is_available():",
      "placement tests silently skipped"),
    C('self.device = torch.device("cuda", torch.cuda.current_device())', "device_type", R, True,
      'self.device = torch.device("npu", torch.npu.current_device())', "CUDA device"),
    C('self.assertEqual(train_X.device.type, "cuda")', "device_type", R, True,
      'self.assertEqual(train_X.device.type, "npu")', "assertion fails on NPU tensors"),
    C(".pin_memory()", "pin_memory", R, False,
      'X_cand = torch.rand(32, 1, 3, dtype=torch.double).pin_memory(device="npu")',
      "unconfirmed: which device a bare Tensor.pin_memory() pins for under torch_npu"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "needs a CUDA build"),
    C("self.assertTrue(vals.is_cuda)", "device_type", R, True, "self.assertTrue(vals.is_npu)",
      "is_cuda is False for NPU tensors"),
])

# -------------------------------------------------------------------------------------------------- Ax
E("ax_service_gpu", "experiments/run_ax_hpo.py", "explicit_replacement",
  "Ax Service API (AxClient) HPO loop with a BOTORCH_MODULAR GenerationStep on the GPU and AMP trials", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = sys.argv[i + 1]', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = sys.argv[i + 1]',
      "CUDA_VISIBLE_DEVICES does not restrict the NPU runtime (ASCEND_RT_VISIBLE_DEVICES does)"),
    C("=import torch  # noqa: E402", "import_torch_npu", A, True, "import torch_npu  # noqa: E402", IMPORT_NOTE),
    C('DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'DEVICE = torch.device("npu" if torch.npu.is_available() else "cpu")', "silent CPU run on an NPU host"),
    C("pin_memory=torch.cuda.is_available())", "pin_memory", R, False, "pin_memory=torch.npu.is_available())",
      "False on an NPU host: no pinned buffers, performance only"),
    C("scaler = torch.cuda.amp.GradScaler(", "amp", R, True,
      'scaler = torch.npu.amp.GradScaler(enabled=params.get("amp", True))',
      "CUDA GradScaler is inactive for NPU tensors"),
    C("with torch.cuda.amp.autocast(", "amp", R, True,
      'with torch.npu.amp.autocast(enabled=params.get("amp", True)):',
      "CUDA autocast does not cover NPU tensors"),
    C('"torch_device": torch.device("cuda"),', "device_type", R, True, '"torch_device": torch.device("npu"),',
      "Ax builds the surrogate and acquisition tensors on this device"),
    C('"torch_dtype": torch.double,', "unsupported_op_workaround", R, True, '"torch_dtype": torch.float32,',
      FP64_NOTE),
    C('os.environ.get("CUDA_VISIBLE_DEVICES")', "env_var", R, False,
      'logger.info("running trials on %s (visible: %s)", DEVICE, os.environ.get("ASCEND_RT_VISIBLE_DEVICES"))',
      "log line only"),
])

# ------------------------------------------------------------------------------------------------- Pyro
E("pyro_dmm", "examples/dmm.py", "explicit_replacement",
  "Pyro examples/dmm.py (Deep Markov Model, RNN guide over packed sequences, --cuda flag)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("self.rnn = nn.RNN(input_size=input_dim", "unsupported_op_workaround", R, True,
      "self.rnn = nn.GRU(input_size=input_dim, hidden_size=rnn_dim, batch_first=True,",
      "torch.nn.RNN is marked unsupported on Atlas A2/A3 in Ascend's 2.7.1 list (GRU is supported without "
      "dropout; num_layers=1 here so dropout is 0)"),
    C("=self.cuda()", "tensor_to_device", R, True, "self.npu()", ".cuda() needs a CUDA build"),
    C('map_location="cuda" if args.cuda else "cpu"', "device_type", R, True,
      'dmm.load_state_dict(torch.load(args.load_model, map_location="npu" if args.cuda else "cpu"))',
      "CUDA map_location"),
    C('parser.add_argument("--cuda", action="store_true")', "device_type", R, False,
      'parser.add_argument("--npu", action="store_true", dest="cuda")', "flag name only"),
])

E("pyro_polyphonic_loader", "pyro/contrib/examples/polyphonic_data_loader.py", "explicit_replacement",
  "Pyro contrib/examples/polyphonic_data_loader.py (mini-batch packing for the DMM)", [
    C("mini_batch = mini_batch.cuda()", "tensor_to_device", R, True, "mini_batch = mini_batch.npu()",
      ".cuda() needs a CUDA build"),
    C("mini_batch_mask = mini_batch_mask.cuda()", "tensor_to_device", R, True,
      "mini_batch_mask = mini_batch_mask.npu()", ".cuda() needs a CUDA build"),
    C("mini_batch_reversed = mini_batch_reversed.cuda()", "tensor_to_device", R, True,
      "mini_batch_reversed = mini_batch_reversed.npu()", ".cuda() needs a CUDA build"),
    C("mini_batch_reversed = nn.utils.rnn.pack_padded_sequence(", "unsupported_op_workaround", R, True,
      "# no packing on NPU: run the RNN on the padded, reversed batch and mask the outputs",
      "pack_padded_sequence is marked unsupported on Ascend (2.7.1 list, msFmkTransplt)"),
    C("rnn_output, _ = nn.utils.rnn.pad_packed_sequence(", "unsupported_op_workaround", R, True,
      "# rnn_output is already padded (batch_first) when the input is not packed",
      "pad_packed_sequence is marked unsupported on Ascend"),
])

E("pyro_air_main", "examples/air/main.py", "explicit_replacement",
  "Pyro examples/air/main.py (Attend-Infer-Repeat; default tensor type switched to CUDA)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("if X.is_cuda:", "device_type", R, False, 'if X.device.type != "cpu":',
      "skipped for NPU tensors; indexing an NPU tensor with CPU indices still works"),
    C("error_indices = error_indices.cuda()", "tensor_to_device", R, False,
      "error_indices = error_indices.to(X.device)", "only reached once the guard is generalised"),
    C("X = X.cuda()", "tensor_to_device", R, True, "X = X.npu()", ".cuda() needs a CUDA build"),
    C('torch.set_default_tensor_type("torch.cuda.FloatTensor")', "device_type", R, True,
      'torch.set_default_device("npu")',
      "set_default_tensor_type does not accept torch.npu.*Tensor types (Ascend 2.7.1 list); "
      "use set_default_device"),
])

E("pyro_svi_horovod", "examples/svi_horovod.py", "explicit_replacement",
  "Pyro examples/svi_horovod.py (HorovodOptimizer, DistributedSampler, --cuda)", [
    C("=import horovod.torch as hvd", "distributed_framework", R, False,
      "import torch.distributed as dist  # DDP over hccl instead of Horovod",
      "unconfirmed: the knowledge base has no Horovod build with an NPU/HCCL backend"),
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.set_device(hvd.local_rank())", "torch_cuda_api", R, True,
      "torch.npu.set_device(hvd.local_rank())", "needs a CUDA build"),
    C("torch.set_default_tensor_type(torch.cuda.FloatTensor)", "device_type", R, True,
      'torch.set_default_device("npu")',
      "set_default_tensor_type does not accept NPU tensor types (Ascend 2.7.1 list)"),
    C("optim = pyro.optim.HorovodOptimizer(optim)", "distributed_framework", R, False,
      "# gradients averaged by an all_reduce over the hccl group after svi.step",
      "unconfirmed, follows the Horovod replacement"),
])

E("pyro_svi_lightning", "examples/svi_lightning.py", "explicit_replacement",
  "Pyro examples/svi_lightning.py (Lightning Trainer with gpu accelerator and DDP strategy)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('parser.add_argument("--accelerator", default="gpu"', "distributed_framework", R, True,
      'parser.add_argument("--accelerator", default="npu", choices=["cpu", "npu", "auto"])',
      "Lightning's gpu accelerator needs CUDA (or MPS) and refuses to start on an NPU host; an NPU "
      "accelerator for Lightning is not in the knowledge base (unconfirmed which plugin)"),
    C('parser.add_argument("--devices", default=torch.cuda.device_count() or 1', "torch_cuda_api", R, True,
      'parser.add_argument("--devices", default=torch.npu.device_count() or 1, type=int)',
      "0 on an NPU host, so the run silently uses one device"),
    C('parser.add_argument("--strategy", default="ddp_find_unused_parameters_true")', "dist_backend", R, False,
      'parser.add_argument("--strategy", default="ddp_npu_hccl")  # DDPStrategy(process_group_backend="hccl")',
      "unconfirmed: Lightning picks nccl for CUDA and gloo otherwise; the NPU strategy must use hccl"),
])

E("pyro_mcmc_baseball", "examples/baseball.py", "explicit_replacement",
  "Pyro examples/baseball.py (NUTS, multi-chain MCMC with spawn, default device switched to CUDA)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('torch.set_default_device("cuda")', "device_type", R, True, 'torch.set_default_device("npu")',
      "CUDA default device"),
    C("torch.set_default_dtype(torch.float64)", "unsupported_op_workaround", R, False,
      "torch.set_default_dtype(torch.float32)",
      "unconfirmed: these models are elementwise (no matmul/cholesky), so fp64 may only cost CPU fallbacks"),
])

# -------------------------------------------------------------------------------------------------- sbi
E("sbi_npe_gpu", "examples/npe_two_moons_gpu.py", "explicit_replacement",
  "sbi 'training on the GPU' tutorial as a multi-round SNPE script (BoxUniform prior on device, C2ST)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('p.add_argument("--device", default="cuda")', "device_type", R, True,
      'p.add_argument("--device", default="npu")', "prior, density estimator and x_o are built on it"),
    C('if args.device.startswith("cuda"):', "device_type", R, False, 'if args.device.startswith("npu"):',
      "seeding / cudnn flag only"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(args.seed)",
      "reached once the guard is ported; seeding only"),
    C('x_o = torch.tensor([[0.0, 0.0]], device="cuda")', "device_type", R, True,
      'x_o = torch.tensor([[0.0, 0.0]], device=args.device)', "hard-coded CUDA tensor"),
])

E("sbi_torchutils", "sbi/utils/torchutils.py", AGNOSTIC,
  "sbi utils/torchutils.py (process_device 'gpu' alias, check_device, BoxUniform, seeding)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("=if torch.cuda.is_available():", "torch_cuda_api", B, True,
      'if torch.npu.is_available(): device = f"npu:{torch.npu.current_device()}"\n            elif torch.cuda.is_available():',
      "device='gpu' raises 'Neither CUDA nor MPS is available' on an NPU host"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", B, True,
      'torch.npu.set_device(device) if device.startswith("npu") else torch.cuda.set_device(device)',
      "every non-MPS device goes through torch.cuda.set_device, which rejects 'npu:0'"),
    C("return torch.cuda.is_available() or torch.backends.mps.is_available()", "torch_cuda_api", R, True,
      "return torch.cuda.is_available() or torch.npu.is_available() or torch.backends.mps.is_available()",
      "accelerator tests and fixtures are silently skipped on an NPU host"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "seeding only"),
    C('os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"', "env_var", R, False,
      'os.environ.setdefault("HCCL_DETERMINISTIC", "true")',
      "cuBLAS-only setting, ignored on NPU; the Ascend determinism knobs differ (unconfirmed which apply)"),
    C('if device.startswith("cuda"):', "pin_memory", R, False, 'if device.startswith(("cuda", "npu")):',
      "no pinned host buffers for NPU training: performance only"),
])

E("sbi_transformer_embedding", "sbi/neural_nets/embedding_nets/transformer.py", AGNOSTIC,
  "sbi-style transformer embedding net (SDPA with forced flash kernel, optional xformers, bf16 autocast)", [
    C("return (x * cos.to(x.dtype)) + (rotated * sin.to(x.dtype))", "npu_fused_op", R, False,
      "return torch_npu.npu_rotary_mul(x, cos.to(x.dtype), sin.to(x.dtype))",
      "fused RoPE (BNSD, half rotation); performance only"),
    C("with torch.backends.cuda.sdp_kernel(enable_flash=True", "attention_kernel", X, False, None,
      "sdp_kernel is unsupported on Ascend, but this branch is only taken for CUDA tensors; on NPU the plain "
      "SDPA call below already dispatches to the NPU fused attention"),
    C('with torch.autocast(device_type="cuda", dtype=torch.bfloat16,', "amp", R, False,
      "with torch.autocast(device_type=h.device.type, dtype=torch.bfloat16,",
      "bf16 autocast is skipped for NPU tensors: the blocks run in fp32 (correct, slower)"),
    C("enabled=self.use_amp and h.is_cuda):", "amp", R, False,
      'enabled=self.use_amp and h.device.type in ("cuda", "npu")):', "same construct"),
])

# ------------------------------------------------------------------------------------ normalizing flows
E("nsf_images_experiment", "experiments/images.py", "explicit_replacement",
  "bayesiains/nsf experiments/images.py (Glow-style RQ-NSF on images, sacred config, AMP)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("optimizer = optim.Adam(flow.parameters(), lr=learning_rate)", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdam(flow.parameters(), lr=learning_rate)", "performance only"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=use_amp)", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler(enabled=use_amp)", "CUDA GradScaler is inactive for NPU tensors"),
    C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=use_amp):", "CUDA autocast does not cover NPU tensors"),
    C('torch.cuda.memory_allocated() / 2 ** 20', "torch_cuda_api", R, False,
      'summary_writer.add_scalar("npu_mem_mb", torch.npu.memory_allocated() / 2 ** 20, step)',
      "logs 0 without CUDA; metric only"),
    C("return torch.nn.parallel.data_parallel(LogProbWrapper(flow)", "unsupported_op_workaround", R, False,
      "return flow.log_prob(batch.to(device))",
      "DataParallel is unsupported on Ascend; only with multi_gpu=True (default False)"),
    C("if use_gpu and not torch.cuda.is_available():", "torch_cuda_api", R, True,
      "if use_gpu and not torch.npu.is_available():", "use_gpu defaults to True: raises on an NPU host"),
    C('device = torch.device("cuda")', "device_type", R, True, 'device = torch.device("npu")', "CUDA device"),
    C("if multi_gpu and torch.cuda.device_count() > 1:", "torch_cuda_api", R, False,
      "if multi_gpu and torch.npu.device_count() > 1:", "logging only"),
])

E("zuko_flow_matching", "benchmarks/train_flow_matching.py", "explicit_replacement",
  "zuko-based flow-matching / NSF tabular benchmark (torch.func exact divergence, bf16 autocast, compile)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("jac = vmap(jacrev(f))(x)", "unsupported_op_workaround", R, True,
      "return torch.stack([torch.autograd.grad(v(t, x)[:, i].sum(), x, retain_graph=True)[0][:, i] "
      "for i in range(x.shape[-1])], -1).sum(-1)",
      "torch.func.vmap and torch.func.jacrev are marked unsupported on Atlas A2/A3 (Ascend 2.7.1 list)"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'device = "npu" if torch.npu.is_available() else "cpu"', "silent CPU run on an NPU host"),
    C("use_bf16 = args.bf16 and torch.cuda.is_bf16_supported()", "device_capability_check", R, True,
      "use_bf16 = args.bf16 and torch.npu.is_bf16_supported()",
      "CUDA capability query on an NPU host: raises or reports False"),
    C('loss_fn = torch.compile(loss_fn, mode="max-autotune", fullgraph=False)', "compile_mode", R, False,
      'loss_fn = torch.compile(loss_fn, backend="npugraphs")',
      "max-autotune relies on Triton autotuning (transfer_to_npu forces has_triton=False); performance only"),
    C('with torch.autocast("cuda", dtype=torch.bfloat16, enabled=use_bf16):', "amp", R, False,
      'with torch.autocast("npu", dtype=torch.bfloat16, enabled=use_bf16):',
      "bf16 without a scaler: inactive CUDA autocast only costs speed"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "needs a CUDA build"),
])

# -------------------------------------------------------------------------------------------------- PFNs
E("pfns_train", "pfns/train.py", "explicit_replacement",
  "automl/PFNs pfns/train.py (prior-fitted network training loop: AMP, DDP, no_sync gradient aggregation)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('gpu_device: str = "cuda:0",', "device_type", R, True, 'gpu_device: str = "npu:0",', "CUDA default device"),
    C('device: str = gpu_device if torch.cuda.is_available() else "cpu:0"', "torch_cuda_api", R, True,
      'device: str = gpu_device if torch.npu.is_available() else "cpu:0"', "silent CPU run on an NPU host"),
    C("scaler = torch.cuda.amp.GradScaler() if train_mixed_precision else None", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler() if train_mixed_precision else None",
      "CUDA GradScaler is inactive for NPU tensors"),
    C("with torch.cuda.amp.autocast(enabled=scaler is not None):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=scaler is not None):", "CUDA autocast does not cover NPU tensors"),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", R, True,
      '+ f" max mem {torch.npu.max_memory_allocated(device) / 2**30:.2f} GiB"',
      "unguarded: torch.cuda rejects the npu (or cpu) device string"),
    C('print(f"Using {device} device")', "compile_mode", A, False,
      'torch_npu.npu.set_compile_mode(jit_compile=False)',
      "single_eval_pos changes the sequence split every batch (dynamic shapes); msFmkTransplt advises "
      "jit_compile=False for dynamic shapes. Performance only"),
    C("optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)", "fused_optimizer",
      R, False, "optimizer = torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=lr, weight_decay=weight_decay)",
      "performance only (msFmkTransplt advice; more memory)"),
    C('parser.add_argument("--device", default="cuda:0")', "device_type", R, False,
      'parser.add_argument("--device", default="npu:0")', "CLI default, not passed to train()"),
])

E("pfns_utils", "pfns/utils.py", "explicit_replacement",
  "automl/PFNs pfns/utils.py (default_device, init_dist for torchrun and submitit, nvidia-smi polling)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('default_device = "cuda:0" if torch.cuda.is_available() else "cpu:0"', "torch_cuda_api", R, True,
      'default_device = "npu:0" if torch.npu.is_available() else "cpu:0"',
      "module-level default of every prior's get_batch: CPU on an NPU host"),
    C("=torch.cuda.set_device(rank)", "torch_cuda_api", R, True, "torch.npu.set_device(rank)",
      "needs a CUDA build"),
    C('=os.environ["CUDA_VISIBLE_DEVICES"] = str(rank)', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(rank)', "not honoured by the NPU runtime"),
    C('=torch.distributed.init_process_group(backend="nccl", init_method="env://", '
      'timeout=torch.distributed.default_pg_timeout,', "dist_backend", R, True,
      'torch.distributed.init_process_group(backend="hccl", init_method="env://", '
      'timeout=torch.distributed.default_pg_timeout,', "NCCL is not available on Ascend"),
    C("=world_size=torch.cuda.device_count(), rank=rank)", "torch_cuda_api", R, True,
      "world_size=torch.npu.device_count(), rank=rank)", "0 on an NPU host"),
    C('return True, rank, f"cuda:{rank}"', "device_type", R, True, 'return True, rank, f"npu:{rank}"',
      "CUDA device string"),
    C('elif "SLURM_PROCID" in os.environ and torch.cuda.device_count() > 1:', "torch_cuda_api", R, True,
      'elif "SLURM_PROCID" in os.environ and torch.npu.device_count() > 1:',
      "submitit multi-card launch silently falls through to single-process training"),
    C("torch.cuda.set_device(rank)  # one submitit task per card", "torch_cuda_api", R, True,
      "torch.npu.set_device(rank)  # one submitit task per card", "needs a CUDA build"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(rank)  # hide the other cards', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(rank)  # hide the other cards from this task',
      "not honoured by the NPU runtime"),
    C('torch.distributed.init_process_group("nccl", init_method="env://"', "dist_backend", R, True,
      'torch.distributed.init_process_group("hccl", init_method="env://", '
      'timeout=torch.distributed.default_pg_timeout,', "NCCL is not available on Ascend (positional spelling)"),
    C("world_size=torch.cuda.device_count(), rank=rank)  # one task per card", "torch_cuda_api", R, True,
      "world_size=torch.npu.device_count(), rank=rank)  # one task per card", "0 on an NPU host"),
    C('return True, rank, "cuda:{}".format(rank)', "device_type", R, True,
      'return True, rank, "npu:{}".format(rank)', "CUDA device string (format spelling)"),
    C("idx = gpu if gpu is not None else torch.cuda.current_device()", "torch_cuda_api", R, True,
      "idx = gpu if gpu is not None else torch.npu.current_device()", "needs a CUDA build"),
    C('["nvidia-smi", "--query-gpu=memory.free"', "torch_cuda_api", R, True,
      'free_mb = torch.npu.mem_get_info(idx)[0] / 2**20  # npu-smi has no --query-gpu CSV',
      "nvidia-smi does not exist on an NPU host (FileNotFoundError)"),
])

E("pfns_layer", "pfns/layer.py", "explicit_replacement",
  "PFNs pfns/layer.py TransformerEncoderLayer (train/test attention split) routed through flash-attn 2", [
    C("from flash_attn import flash_attn_func, flash_attn_qkvpacked_func", "attention_kernel", R, True,
      "import torch_npu", "flash-attn cannot be installed on NPU; the import is unguarded"),
    C("out = flash_attn_qkvpacked_func(", "attention_kernel", R, True,
      'out = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, "BSND", scale=self.head_dim ** -0.5, '
      "keep_prob=1 - (self.dropout if self.training else 0.0))[0]",
      "flash-attn packed self-attention -> npu_fusion_attention (BSND)"),
    C("out = flash_attn_func(q.to(dt), k.to(dt), v.to(dt),", "attention_kernel", R, True,
      'out = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, "BSND", scale=self.head_dim ** -0.5, '
      "keep_prob=1 - (self.dropout if self.training else 0.0))[0]",
      "cross attention of test rows onto train rows"),
    C('torch.cuda.nvtx.range_push("pfn_attention")', "torch_cuda_api", R, True,
      'torch_npu.npu.mstx.range_start("pfn_attention")',
      "torch.cuda.nvtx is not redirected by torch_npu (knowledge §2.1, use mstx); fails when profiling is on"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", R, True, "torch_npu.npu.mstx.range_end(range_id)",
      "same"),
])

# ---------------------------------------------------------------------------------------- Falkon / KeOps
E("falkon_setup", "setup.py", "explicit_replacement",
  "FalkonML/falkon setup.py (c_ext CppExtension/CUDAExtension linking cuSOLVER/cuBLAS, optional KeOps)", [
    C("WITH_CUDA = (torch.cuda.is_available() and CUDA_HOME is not None)", "custom_cuda_extension", B, False,
      'WITH_NPU = os.getenv("WITH_NPU", "0") == "1"  # NpuExtension build of ported kernels',
      "an NPU host gets the CPU-only c_ext (clean fallback); an NPU branch is only needed if the kernels are "
      "rewritten in Ascend C"),
    C('libraries += ["cusolver", "cublas", "cusparse"]', "custom_cuda_extension", R, False,
      'libraries += ["torch_npu", "ascendcl"]', "CUDA libraries, only on the WITH_CUDA path"),
    C('os.environ["TORCH_CUDA_ARCH_LIST"] = "6.0;7.0;7.5;8.0;8.6;9.0+PTX"', "env_var", R, False,
      "# (no arch list for NPU builds)", "CUDA arch list, only used by nvcc"),
    C('install_requires += ["cupy-cuda12x"]', "custom_cuda_extension", R, False,
      "# cupy has no Ascend backend", "only added on the WITH_CUDA path"),
])

E("falkon_ooc_potrf", "falkon/ooc_ops/ooc_potrf.py", "kernel_rewrite",
  "FalkonML/falkon ooc_ops/ooc_potrf.py (out-of-core multi-GPU blocked Cholesky with cuSOLVER/cuBLAS and streams)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("from falkon.c_ext import cublas_gemm, cublas_syrk, cublas_trsm, cusolver_potrf", "custom_cuda_extension",
      R, True, "# tile kernels expressed with torch.linalg / torch.addmm on the NPU",
      "the CPU-only c_ext an NPU host builds has no cuSOLVER/cuBLAS bindings: ImportError"),
    C("free, _ = torch.cuda.mem_get_info(device_id)", "torch_cuda_api", R, True,
      "free, _ = torch.npu.mem_get_info(device_id)", "needs a CUDA build"),
    C("ws = cusolver_potrf_buffer_size(n, dtype == torch.float64)", "custom_cuda_extension", R, True,
      "ws = 0  # torch.linalg.cholesky manages its own workspace", "cuSOLVER binding"),
    C('tc_device = torch.device("cuda:%d" % device_id)', "device_type", R, True,
      'tc_device = torch.device("npu:%d" % device_id)', "CUDA device string"),
    C("s_compute = torch.cuda.Stream(device=tc_device)", "torch_cuda_api", R, True,
      "s_compute = torch.npu.Stream(device=tc_device)", "needs a CUDA build"),
    C("s_copy = torch.cuda.Stream(device=tc_device)", "torch_cuda_api", R, True,
      "s_copy = torch.npu.Stream(device=tc_device)", "needs a CUDA build"),
    C("with torch.cuda.device(tc_device), torch.cuda.stream(s_compute):", "torch_cuda_api", R, True,
      "with torch.npu.device(tc_device), torch.npu.stream(s_compute):", "needs a CUDA build"),
    C("ws_size = cusolver_potrf_buffer_size(max_len", "custom_cuda_extension", X, True, None,
      "cuSOLVER workspace query; no workspace with torch.linalg.cholesky"),
    C("copy_done = torch.cuda.Event()", "torch_cuda_api", R, True, "copy_done = torch.npu.Event()",
      "needs a CUDA build"),
    C("cusolver_potrf(diag, workspace, info, upper=False)", "custom_cuda_extension", R, True,
      "diag.copy_(torch.linalg.cholesky(diag))  # fp32 only on A2/A3",
      "cuSOLVER potrf binding; Ascend's linalg.cholesky takes fp32 only"),
    C("with torch.cuda.stream(s_copy):", "torch_cuda_api", R, True, "with torch.npu.stream(s_copy):",
      "needs a CUDA build"),
    C("cublas_trsm(diag, panel", "custom_cuda_extension", R, True,
      "panel.copy_(torch.linalg.solve_triangular(diag, panel.T, upper=False).T)", "cuBLAS trsm binding"),
    C("cublas_syrk(panel, trailing", "custom_cuda_extension", R, True,
      "trailing.sub_(panel @ panel.T)", "cuBLAS syrk binding"),
    C("cublas_gemm(panel, other, off", "custom_cuda_extension", R, True,
      "off.sub_(panel @ other.T)", "cuBLAS gemm binding"),
    C("if not opt.use_cpu and not torch.cuda.is_available():", "torch_cuda_api", R, True,
      "if not opt.use_cpu and not torch.npu.is_available():", "raises on an NPU host"),
    C("if A.is_cuda:", "device_type", R, False, 'if A.device.type != "cpu":',
      "input check only: an NPU-resident matrix is not rejected and fails later"),
    C("A = A.pin_memory()", "pin_memory", R, False, 'A = A.pin_memory(device="npu")',
      "unconfirmed: which device a bare Tensor.pin_memory() pins for under torch_npu"),
    C("torch.cuda.synchronize(g.Id)", "torch_cuda_api", R, True, "torch.npu.synchronize(g.Id)",
      "needs a CUDA build"),
    C("if opt.use_cpu or not torch.cuda.is_available():", "torch_cuda_api", R, True,
      "if opt.use_cpu or not torch.npu.is_available():",
      "out-of-core path never chosen on an NPU host: in-core factorisation of a too-large K_MM"),
    C("free = min(torch.cuda.mem_get_info(i)[0] for i in range(torch.cuda.device_count()))", "torch_cuda_api",
      R, True, "free = min(torch.npu.mem_get_info(i)[0] for i in range(torch.npu.device_count()))",
      "needs a CUDA build"),
])

E("keops_kernel_interpolation", "benchmarks/plot_gpu_kernel_interpolation.py", "explicit_replacement",
  "pykeops kernel-interpolation benchmark (LazyTensor and Genred CG solves vs. dense torch)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", R, True, "use_npu = torch.npu.is_available()",
      "silent CPU run on an NPU host"),
    C("tensor = torch.cuda.FloatTensor if use_cuda else torch.FloatTensor", "device_type", R, True,
      "tensor = torch.npu.FloatTensor if use_npu else torch.FloatTensor", "legacy CUDA tensor type"),
    C("device_id = 0 if use_cuda else -1", "custom_cuda_extension", R, False, "device_id = -1  # KeOps CPU",
      "KeOps device id only means something for its CUDA backend"),
    C('p.add_argument("--backend", default="GPU"', "custom_cuda_extension", R, True,
      'p.add_argument("--backend", default="CPU", choices=["auto", "CPU"])',
      "KeOps' GPU backend JIT-compiles CUDA (nvcc/nvrtc): no such path on an NPU host"),
    C("K = lazy_kernel(x, args.sigma, args.kernel)", "custom_cuda_extension", R, False,
      "K = lazy_kernel(x.cpu(), args.sigma, args.kernel)",
      "unconfirmed: KeOps LazyTensors on NPU tensors (CPU/CUDA backends only)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "needs a CUDA build"),
    C("lambda v: routine(x, x, v, g, backend=args.backend, device_id=device_id)", "custom_cuda_extension", R,
      True, "lambda v: routine(x.cpu(), x.cpu(), v.cpu(), g.cpu(), backend=\"CPU\").to(v.device)",
      "Genred with the GPU backend is a CUDA JIT kernel"),
    C("torch.cuda.synchronize()  # Genred launches", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # Genred launches are asynchronous too", "needs a CUDA build"),
    C("torch.cuda.synchronize(device=x.device)", "torch_cuda_api", R, True,
      "torch.npu.synchronize(device=x.device)", "reached once use_cuda is ported; rejects an npu device"),
])

E("triton_rbf_matvec", "gpkernels/ops/rbf_matvec.py", "kernel_rewrite",
  "Triton fused RBF kernel-matvec LinearOperator (KeOps-free exact-GP kernel, autotuned tiles)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("_TF32 = torch.cuda.get_device_capability()[0] >= 8", "device_capability_check", R, True,
      "_TF32 = False  # no TF32 on Ascend; tl.dot runs in fp32",
      "module-level CUDA capability query: raises at import without CUDA"),
    C('triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_D": 16}, num_warps=4, num_stages=3)',
      "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_D": 16}, multibuffer=True)',
      "unconfirmed: warp/stage tuning has no meaning on triton-ascend; tiles should be re-tuned"),
    C('triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_D": 32}, num_warps=8, num_stages=2)',
      "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_D": 32}, multibuffer=True)', "unconfirmed, same"),
    C('other=0.0, eviction_policy="evict_last")', "triton_kernel_tuning", R, False,
      "mask=mask_n[:, None] & mask_d[None, :], other=0.0)", "unconfirmed: cache eviction hints on triton-ascend"),
    C('assert x1.is_cuda and x2.is_cuda and v.is_cuda, "rbf_matvec requires CUDA tensors"', "device_type", R,
      True, 'assert x1.device.type in ("cuda", "npu"), "rbf_matvec requires accelerator tensors"',
      "AssertionError for NPU tensors"),
    C("with torch.cuda.device(x1.device):", "torch_cuda_api", R, True, "with torch.npu.device(x1.device):",
      "torch.cuda.device rejects an npu device"),
    C('device = device or "cuda"', "device_type", R, True, 'device = device or "npu"', "CUDA default"),
    C("start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)",
      "torch_cuda_api", R, True,
      "start, end = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)",
      "needs a CUDA build"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "needs a CUDA build"),
])

# -------------------------------------------------------------------------------- files around the code
E("bo_conda_env", "environment.yml", "explicit_replacement",
  "conda environment.yml of a BO benchmark suite (pytorch + nvidia channels, KeOps toolchain, pip section)", [
    C("=- nvidia", "device_type", X, False, None, "channel only serves CUDA packages"),
    C("=- pytorch=2.1.2", "device_type", R, True, "- pytorch=2.1.0  # CPU build; torch-npu pins torch 2.1.0",
      "torch_npu wheels pair with an exact torch version (2.1.0.postN for torch 2.1.0); no 2.1.2"),
    C("=- pytorch-cuda=12.1", "device_type", X, True, None, "pulls the CUDA build of pytorch"),
    C("- cuda-nvcc=12.1", "custom_cuda_extension", X, False, None,
      "only needed for KeOps' CUDA JIT backend"),
    C("=- cuda-nvrtc-dev=12.1", "custom_cuda_extension", X, False, None, "same"),
    C("- cudatoolkit-dev", "custom_cuda_extension", X, False, None, "headers for the CUDA c_ext build"),
    C("=- pip:", "import_torch_npu", A, True, "- pip:\n      - torch-npu==2.1.0.post17",
      "torch_npu itself is a pip package"),
    C("- nvidia-ml-py>=12.535", "torch_cuda_api", X, False, None, "NVML has no NPU equivalent"),
    C("- cupy-cuda12x>=12.2", "custom_cuda_extension", X, True, None, "cupy has no Ascend backend"),
])

E("gp_requirements_gpu", "requirements-gpu.txt", "explicit_replacement",
  "requirements-gpu.txt of a large-scale GP project (cu118 wheels, PyG and JAX CUDA find-links, KeOps, "
  "flash-attn, triton)", [
    C("=--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index (x86 NPU hosts take CPU torch from /whl/cpu, aarch64 from PyPI)"),
    C("=-f https://data.pyg.org/whl/torch-2.1.0+cu118.html", "device_type", R, True,
      "-f https://data.pyg.org/whl/torch-2.1.0+cpu.html", "CUDA build of torch-scatter"),
    C("-f https://storage.googleapis.com/jax-releases/jax_cuda_releases.html", "device_type", X, False, None,
      "JAX CUDA wheels for the NumPyro baseline (not PyTorch; unconfirmed on NPU hosts)"),
    C("=torch==2.1.2+cu118", "device_type", R, True, "torch==2.1.0\ntorch-npu==2.1.0.post17",
      "CUDA wheel; torch_npu pins torch 2.1.0"),
    C("=torchvision==0.16.2+cu118", "device_type", R, True, "torchvision==0.16.0", "CUDA wheel"),
    C("=torchaudio==2.1.2+cu118", "device_type", R, True, "torchaudio==2.1.0", "CUDA wheel"),
    C("=torch-scatter==2.1.2+pt21cu118", "custom_cuda_extension", R, True, "torch-scatter==2.1.2",
      "CUDA-compiled extension wheel"),
    C("=triton==2.1.0", "custom_cuda_extension", R, True, "triton-ascend",
      "gpkernels.ops imports triton unguarded; on Ascend that is the triton-ascend package"),
    C("=flash-attn==2.5.6 --no-build-isolation", "attention_kernel", X, True, None,
      "flash-attn cannot be installed on NPU"),
    C("=jax[cuda11_pip]==0.4.23", "device_type", R, False, "jax[cpu]==0.4.23",
      "JAX CUDA extra for the NumPyro baseline (not PyTorch; unconfirmed)"),
    C("=cupy-cuda11x==12.3.0", "custom_cuda_extension", X, True, None, "cupy has no Ascend backend"),
    C("=nvidia-ml-py==12.535.133", "torch_cuda_api", X, False, None, "NVML has no NPU equivalent"),
    C("=gpustat==1.1.1", "torch_cuda_api", X, False, None, "nvidia-smi wrapper"),
])

E("keops_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "Dockerfile for GP/KeOps benchmarks on nvidia/cuda devel with a falkon CUDA build", [
    C("FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04", "device_type", R, True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10", "CUDA base image: no CANN toolkit for torch_npu"),
    C("=ARG TORCH_CUDA=cu121", "device_type", R, True, "ARG TORCH_CUDA=cpu  # CPU torch wheels + torch-npu",
      "CUDA wheel index tag (also used by the requirements install below)"),
    C("ENV CUDA_HOME=/usr/local/cuda \\", "env_var", R, False,
      "ENV ASCEND_TOOLKIT_HOME=/usr/local/Ascend/ascend-toolkit/latest \\",
      "CUDA toolkit paths; the CANN env comes from set_env.sh"),
    C("python -m pip install torch==${TORCH_VERSION} torchvision --index-url", "import_torch_npu", R, True,
      "&& python -m pip install torch==${TORCH_VERSION} torchvision torch-npu==${TORCH_NPU_VERSION} "
      "--index-url https://download.pytorch.org/whl/${TORCH_CUDA}", "CUDA wheels; torch-npu missing"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6;9.0" \\', "env_var", X, False, None, "nvcc arch list"),
    C("=FORCE_CUDA=1", "env_var", R, True, "WITH_KEOPS=1",
      "forces falkon's CUDAExtension build, which fails without nvcc"),
    C("assert torch.cuda.is_available()", "torch_cuda_api", R, False,
      'HEALTHCHECK --interval=5m --timeout=30s CMD python -c "import torch, torch_npu; '
      'assert torch.npu.is_available()" || exit 1',
      "container reported unhealthy on an NPU host"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all \\", "env_var", R, False, "ENV ASCEND_VISIBLE_DEVICES=0 \\",
      "NVIDIA container-runtime variable; Ascend docker runtime uses ASCEND_VISIBLE_DEVICES"),
])

E("sbi_slurm_sweep", "scripts/run_sbi_sweep.sh", "explicit_replacement",
  "SLURM array launch script for an sbi/sbibm NPE sweep (module load cuda, nvidia-smi, hydra overrides)", [
    C("#SBATCH --gres=gpu:1", "device_type", R, False, "#SBATCH --gres=npu:1",
      "unconfirmed: GRES name is cluster configuration"),
    C("module load cuda/12.1 cudnn/8.9", "env_var", R, True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "no CUDA modules on an NPU cluster (set -e stops the job); CANN env must be sourced for torch_npu"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0}", "not honoured by the NPU runtime"),
    C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", R, False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True", "allocator tuning, ignored on NPU"),
    C("export CUBLAS_WORKSPACE_CONFIG=:4096:8", "env_var", X, False, None, "cuBLAS-only determinism setting"),
    C("nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv", "torch_cuda_api", R, True,
      "npu-smi info", "nvidia-smi is absent; with set -e the job stops here"),
    C("algorithm.device=cuda \\", "device_type", R, True, "algorithm.device=npu \\", "CUDA device override"),
    C("nvidia-smi --query-accounted-apps", "torch_cuda_api", X, False, None, "guarded by || true; logging only"),
])

E("pfns_config", "configs/pfn_bo_gp_prior.yaml", "explicit_replacement",
  "PFNs4BO-style yaml training config (GP prior sampled on device in fp64, flash_attn, AMP, nccl)", [
    C("sample_on_device: cuda", "device_type", R, True, "sample_on_device: npu", "CUDA device"),
    C("sample_dtype: float64", "unsupported_op_workaround", R, True, "sample_dtype: float32  # + larger jitter",
      FP64_NOTE),
    C("implementation: flash_attn", "attention_kernel", R, True,
      "implementation: npu_fusion_attention   # one of: torch, npu_fusion_attention",
      "selects the flash-attn layer, which cannot be installed on NPU"),
    C("amp_dtype: float16", "amp", R, False, "amp_dtype: bfloat16",
      "fp16 works with the NPU GradScaler; bf16 is the usual Ascend choice (performance/stability)"),
    C("gpu_device: cuda:0", "device_type", R, True, "gpu_device: npu:0", "CUDA device"),
    C("backend: nccl", "dist_backend", R, True, "backend: hccl", "NCCL is not available on Ascend"),
])

E("flows_pyproject", "pyproject.toml", "explicit_replacement",
  "pyproject.toml of a flows-for-SBI package (gpu extra with KeOps, flash-attn, NVML, triton)", [
    C("=gpu = [", "import_torch_npu", A, False, 'npu = ["torch-npu>=2.1.0", "triton-ascend"]',
      "an NPU extra next to the CUDA one"),
    C("\"flash-attn>=2.5; platform_system == 'Linux'\",", "attention_kernel", X, False, None,
      "optional extra; flash-attn cannot be installed on NPU"),
    C('"nvidia-ml-py>=12.535",', "torch_cuda_api", X, False, None, "optional extra; NVML"),
    C("\"triton>=2.1; platform_machine == 'x86_64'\",", "custom_cuda_extension", R, False,
      '"triton-ascend",', "optional extra"),
])
