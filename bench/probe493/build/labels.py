"""Labels for probe493 (GPs, Bayesian optimisation and probabilistic programming on GPU -> Ascend NPU).

One entry per upstream file; one C(...) per line a careful porter would edit (explicit port:
torch.npu.*, 'npu', hccl; no transfer_to_npu). See README.md for the policy and the judgements.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch; import torch_npu"
IMPORT_NOTE = ("entry point: torch.npu / Tensor.npu only exist once torch_npu is imported (autoload since torch_npu 2.5.1, "
               "but still recommended and required on older wheels)")
FP64_NOTE = ("NPU matmul/mm/bmm and linalg.cholesky take fp32 only on Atlas A2 (TSV) and the runtime casts doubles to "
             "float with the warning 'Device do not support double dtype now' - making fp32 explicit on NPU changes "
             "nothing numerically but avoids mixed-dtype surprises; BoTorch's fp64 advice then no longer holds "
             "(stability of fp32 GP fits unconfirmed), hence not required")

# --------------------------------------------------------------------------------------------------
# GPyTorch (cornellius-gp/gpytorch) and linear_operator
# --------------------------------------------------------------------------------------------------

E("gpyt_multi_device_kernel", "gpytorch/kernels/multi_device_kernel.py", "explicit_replacement",
  "cornellius-gp/gpytorch gpytorch/kernels/multi_device_kernel.py (MultiDeviceKernel built on nn.DataParallel)", [
      # Deliberately empty: DataParallel (and torch.cuda.comm scatter/gather under it) is unsupported on
      # NPU; the porter stops *using* this kernel in the example (see gpyt_ex_multigpu) instead of
      # rewriting the library class. The create_cuda_context warm-up is device-agnostic.
  ])

E("gpyt_keops_kernel", "gpytorch/kernels/keops/keops_kernel.py", "explicit_replacement",
  "cornellius-gp/gpytorch gpytorch/kernels/keops/keops_kernel.py (KeOps base kernel with non-KeOps fallback)", [
      # Library left alone: the user switches to the plain kernel (gpyt_ex_keops).
  ])

E("gpyt_cholesky", "linear_operator/utils/cholesky.py", "explicit_replacement",
  "cornellius-gp/linear_operator linear_operator/utils/cholesky.py (psd_safe_cholesky with jitter)", [
      # Device-agnostic; cholesky_ex has no NPU kernel (CPU fallback, perf only) - noted in README.
  ])

E("gpyt_test_utils", "gpytorch/test/utils.py", "explicit_replacement",
  "cornellius-gp/gpytorch gpytorch/test/utils.py (least_used_cuda_device helper)", [
      C("torch.cuda.max_memory_allocated(i) for i in range(torch.cuda.device_count())", "torch_cuda_api", "replace", True,
        "return torch.tensor([torch.npu.max_memory_allocated(i) for i in range(torch.npu.device_count())])",
        "torch.cuda.device_count() is 0 on an NPU host, so argmin over an empty tensor raises in least_used_cuda_device"),
      C("with torch.cuda.device(least_used_device):", "torch_cuda_api", "replace", True,
        "with torch.npu.device(least_used_device):",
        "torch.cuda.device context needs a CUDA build; NPU form torch.npu.device (TSV)"),
  ])

E("gpyt_test_simple_gp", "test/examples/test_simple_gp_regression.py", "explicit_replacement",
  "cornellius-gp/gpytorch test/examples/test_simple_gp_regression.py (cpu tests + *_cuda variants)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "test module is the entry point under pytest; needed for torch.npu.* and Module.npu()"),
      C('device = torch.device("cuda") if cuda else torch.device("cpu")', "device_type", "replace", True,
        'device = torch.device("npu") if cuda else torch.device("cpu")',
        "the cuda=True path builds its data here; 'cuda' device fails on an NPU host"),
      C("=gp_model.cuda()", "tensor_to_device", "replace", True, "gp_model.npu()", "Module.cuda() -> Module.npu()"),
      C("=likelihood.cuda()", "tensor_to_device", "replace", True, "likelihood.npu()", "Module.cuda() -> Module.npu()"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "gate is False on an NPU host so the accelerator test silently never runs"),
      C("gp_model, likelihood = gp_model.cuda(), likelihood.cuda()", "tensor_to_device", "replace", True,
        "gp_model, likelihood = gp_model.npu(), likelihood.npu()", "Module.cuda() -> Module.npu()"),
      C('@unittest.skipIf(not torch.cuda.is_available(), "CUDA not available")', "torch_cuda_api", "replace", True,
        '@unittest.skipIf(not torch.npu.is_available(), "NPU not available")',
        "skip decorator would silently skip the accelerator test on NPU"),
      C("gp_model = gp_model.cuda()", "tensor_to_device", "replace", True, "gp_model = gp_model.npu()",
        "Module.cuda() -> Module.npu()"),
      C("likelihood = likelihood.cuda()", "tensor_to_device", "replace", True, "likelihood = likelihood.npu()",
        "Module.cuda() -> Module.npu()"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
        "early return would silently skip the accelerator test on NPU"),
      C('gp_model = gp_model.to(torch.device("cuda"))', "device_type", "replace", True,
        'gp_model = gp_model.to(torch.device("npu"))', "'cuda' device string"),
      C('likelihood = likelihood.to(torch.device("cuda"))', "device_type", "replace", True,
        'likelihood = likelihood.to(torch.device("npu"))', "'cuda' device string"),
      C("if torch.cuda.device_count() > 0:", "torch_cuda_api", "replace", True, "if torch.npu.device_count() > 0:",
        "device_count() is 0 for CUDA on an NPU host: silent skip"),
      C('@unittest.skipIf(torch.cuda.device_count() == 0, "no GPU")', "torch_cuda_api", "replace", True,
        '@unittest.skipIf(torch.npu.device_count() == 0, "no NPU")', "silent skip otherwise"),
  ])

E("gpyt_ex_multigpu", "examples/02_Scalable_Exact_GPs/Simple_MultiGPU_GP_Regression.py", "explicit_replacement",
  "cornellius-gp/gpytorch examples/02_Scalable_Exact_GPs/Simple_MultiGPU_GP_Regression.ipynb (as script)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("output_device = torch.device('cuda:0')", "device_type", "replace", True,
        "output_device = torch.device('npu:0')", "all data and the model are placed on this device"),
      C("n_devices = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "n_devices = torch.npu.device_count()", "would be 0 on an NPU host"),
      C("self.covar_module = gpytorch.kernels.MultiDeviceKernel(base_covar_module", "unsupported_op_workaround", "replace", True,
        "self.covar_module = base_covar_module  # MultiDeviceKernel is nn.DataParallel-based: unsupported on NPU",
        "MultiDeviceKernel subclasses torch.nn.DataParallel (scatter/replicate/gather via torch.cuda.comm); "
        "DataParallel and torch.cuda.comm.scatter/gather are marked unsupported on A2/A3. Single-NPU kernel + "
        "checkpoint_kernel partitioning keeps the memory benefit"),
      C("model.covar_module.module.base_kernel.lengthscale.item(),", "unsupported_op_workaround", "replace", True,
        "model.covar_module.base_kernel.lengthscale.item(),",
        "follow-on of dropping MultiDeviceKernel: the .module indirection no longer exists (AttributeError)"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "torch.cuda.empty_cache is a silent no-op when CUDA was never initialised; the NPU caching allocator still "
        "reuses blocks, so only fragmentation headroom in the OOM search is affected"),
  ])

E("gpyt_ex_svgp", "examples/04_Variational_and_Approximate_GPs/SVGP_Regression_CUDA.py", "explicit_replacement",
  "cornellius-gp/gpytorch examples/04_Variational_and_Approximate_GPs/SVGP_Regression_CUDA.ipynb (as script)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("if torch.cuda.is_available():  # move the whole dataset", "torch_cuda_api", "replace", True,
        "if torch.npu.is_available():  # move the whole dataset to the NPU once",
        "False on an NPU host: the whole example silently runs on CPU"),
      C("train_x, train_y, test_x, test_y = train_x.cuda()", "tensor_to_device", "replace", True,
        "train_x, train_y, test_x, test_y = train_x.npu(), train_y.npu(), test_x.npu(), test_y.npu()", ".cuda() -> .npu()"),
      C("if torch.cuda.is_available():  # model and likelihood", "torch_cuda_api", "replace", True,
        "if torch.npu.is_available():  # model and likelihood follow the data",
        "must match the data gate above or model and data end up on different devices"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "Module.cuda() -> .npu()"),
      C("likelihood = likelihood.cuda()", "tensor_to_device", "replace", True, "likelihood = likelihood.npu()",
        "Module.cuda() -> .npu()"),
  ])

E("gpyt_ex_keops", "examples/02_Scalable_Exact_GPs/KeOps_GP_Regression.py", "explicit_replacement",
  "cornellius-gp/gpytorch examples/02_Scalable_Exact_GPs/KeOps_GP_Regression.ipynb (as script)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("train_x, train_y = train_x.cuda(), train_y.cuda()", "tensor_to_device", "replace", True,
        "train_x, train_y = train_x.npu(), train_y.npu()", ".cuda() -> .npu()"),
      C("test_x, test_y = test_x.cuda(), test_y.cuda()", "tensor_to_device", "replace", True,
        "test_x, test_y = test_x.npu(), test_y.npu()", ".cuda() -> .npu()"),
      C("gpytorch.kernels.ScaleKernel(gpytorch.kernels.keops.MaternKernel(nu=2.5))", "unsupported_op_workaround", "replace", False,
        "self.covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.MaternKernel(nu=2.5))",
        "unconfirmed: KeOps generates CUDA/C++ kernels only and has no Ascend backend (not in knowledge); above "
        "max_cholesky_size the KeOps path would receive NPU tensors. Plain kernel + CG is the safe port"),
      C("likelihood = gpytorch.likelihoods.GaussianLikelihood().cuda()", "tensor_to_device", "replace", True,
        "likelihood = gpytorch.likelihoods.GaussianLikelihood().npu()", "Module.cuda() -> .npu()"),
      C("model = ExactGPModel(train_x, train_y, likelihood).cuda()", "tensor_to_device", "replace", True,
        "model = ExactGPModel(train_x, train_y, likelihood).npu()", "Module.cuda() -> .npu()"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "torch.cuda.synchronize() lazily initialises CUDA and raises on an NPU host (CPU-only torch build)"),
      C("KeOps launches asynchronously", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # NPU ops launch asynchronously; wait before reading the clock",
        "raises on an NPU host; NPU execution is asynchronous too so the sync is still wanted for timing"),
  ])

# --------------------------------------------------------------------------------------------------
# BoTorch (pytorch/botorch)
# --------------------------------------------------------------------------------------------------

E("bt_test_cuda", "test/test_cuda.py", "explicit_replacement",
  "pytorch/botorch test/test_cuda.py (re-runs the whole suite with device=cuda)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "test entry point; torch.npu is referenced below"),
      C('@unittest.skipIf(not torch.cuda.is_available(), "CUDA is not available")', "torch_cuda_api", "replace", True,
        '@unittest.skipIf(not torch.npu.is_available(), "NPU is not available")',
        "otherwise the accelerator re-run is silently skipped"),
      C('tests.device = torch.device("cuda")', "device_type", "replace", True, 'tests.device = torch.device("npu")',
        "every BotorchTestCase builds its tensors on self.device"),
  ])

E("bt_testing", "botorch/utils/testing.py", "explicit_replacement",
  "pytorch/botorch botorch/utils/testing.py (BotorchTestCase, MockPosterior)", [
      # Device-agnostic: device = torch.device("cpu") is the default overridden by test_cuda.py.
  ])

E("bt_tut_closed_loop", "tutorials/closed_loop_botorch_only.py", "explicit_replacement",
  "pytorch/botorch tutorials/closed_loop_botorch_only.ipynb (as script)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
        "silently falls back to CPU on an NPU host"),
      C("=dtype = torch.double", "unsupported_op_workaround", "replace", False,
        'dtype = torch.float32 if device.type == "npu" else torch.double', FP64_NOTE),
  ])

E("bt_tut_turbo", "tutorials/turbo_1.py", "explicit_replacement",
  "pytorch/botorch tutorials/turbo_1.ipynb (as script)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
        "silently falls back to CPU on an NPU host"),
      C("=dtype = torch.double", "unsupported_op_workaround", "replace", False,
        'dtype = torch.float32 if device.type == "npu" else torch.double', FP64_NOTE),
  ])

E("bt_tut_saasbo", "tutorials/saasbo.py", "explicit_replacement",
  "pytorch/botorch tutorials/saasbo.ipynb (as script; NUTS from Pyro)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C('"device": torch.device("cuda:0" if torch.cuda.is_available() else "cpu"),', "device_type", "replace", True,
        '"device": torch.device("npu:0" if torch.npu.is_available() else "cpu"),',
        "silently falls back to CPU on an NPU host"),
      C('"dtype": torch.double,', "unsupported_op_workaround", "replace", False,
        '"dtype": torch.float32 if torch.npu.is_available() else torch.double,', FP64_NOTE),
  ])

# --------------------------------------------------------------------------------------------------
# Pyro (pyro-ppl/pyro)
# --------------------------------------------------------------------------------------------------

E("pyro_vae", "examples/vae/vae.py", "explicit_replacement",
  "pyro-ppl/pyro examples/vae/vae.py", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("=self.cuda()", "tensor_to_device", "replace", True, "self.npu()",
        "--cuda now means 'use the accelerator'; Module.cuda() -> .npu()"),
      C("=x = x.cuda()", "tensor_to_device", "replace", True, "x = x.npu()", ".cuda() -> .npu()"),
      C("x = x.cuda() if args.cuda else x", "tensor_to_device", "replace", True, "x = x.npu() if args.cuda else x",
        ".cuda() -> .npu()"),
  ])

E("pyro_mnist_cached", "examples/vae/utils/mnist_cached.py", "explicit_replacement",
  "pyro-ppl/pyro examples/vae/utils/mnist_cached.py", [
      C("xp = xp.cuda()", "tensor_to_device", "replace", True, "xp = xp.npu()",
        "the cached dataset is moved to the accelerator once"),
      C("yp = yp.cuda()", "tensor_to_device", "replace", True, "yp = yp.npu()", ".cuda() -> .npu()"),
      C("=y = y.cuda()", "tensor_to_device", "replace", True, "y = y.npu()",
        "scatter_ needs index and target on the same device"),
  ])

E("pyro_dmm", "examples/dmm/dmm.py", "explicit_replacement",
  "pyro-ppl/pyro examples/dmm.py (Deep Markov Model)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("self.rnn = nn.RNN(input_size=input_dim, hidden_size=rnn_dim", "unsupported_op_workaround", "replace", False,
        'self.rnn = nn.GRU(input_size=input_dim, hidden_size=rnn_dim, batch_first=True, bidirectional=False, num_layers=num_layers)',
        "torch.nn.RNN and pack_padded_sequence are marked unsupported on A2/A3 in the 2.7.1 API list while nn.GRU is "
        "supported (no dropout arg); whether nn.RNN errors or decomposes/falls back is unconfirmed, and GRU changes "
        "the guide, so not required"),
      C("=self.cuda()", "tensor_to_device", "replace", True, "self.npu()", "Module.cuda() -> .npu()"),
  ])

E("pyro_poly_loader", "pyro/contrib/examples/polyphonic_data_loader.py", "explicit_replacement",
  "pyro-ppl/pyro pyro/contrib/examples/polyphonic_data_loader.py", [
      C("=mini_batch = mini_batch.cuda()", "tensor_to_device", "replace", True, "mini_batch = mini_batch.npu()",
        "called with cuda=args.cuda from dmm.py; .cuda() -> .npu()"),
      C("=mini_batch_mask = mini_batch_mask.cuda()", "tensor_to_device", "replace", True,
        "mini_batch_mask = mini_batch_mask.npu()", ".cuda() -> .npu()"),
      C("=mini_batch_reversed = mini_batch_reversed.cuda()", "tensor_to_device", "replace", True,
        "mini_batch_reversed = mini_batch_reversed.npu()", ".cuda() -> .npu() (lengths stay on CPU for packing)"),
  ])

E("pyro_svdkl", "examples/contrib/gp/sv-dkl.py", "explicit_replacement",
  "pyro-ppl/pyro examples/contrib/gp/sv-dkl.py (deep kernel learning with pyro.contrib.gp)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("data, target = data.cuda(), target.cuda()", "tensor_to_device", "replace", True,
        "data, target = data.npu(), target.npu()", ".cuda() -> .npu()"),
      C("=data = data.cuda()", "tensor_to_device", "replace", True, "data = data.npu()", ".cuda() -> .npu()"),
      C("=target = target.cuda()", "tensor_to_device", "replace", True, "target = target.npu()", ".cuda() -> .npu()"),
      C("=gpmodule.cuda()", "tensor_to_device", "replace", True, "gpmodule.npu()", "Module.cuda() -> .npu()"),
  ])

E("pyro_mcmc_api", "pyro/infer/mcmc/api.py", "explicit_replacement",
  "pyro-ppl/pyro pyro/infer/mcmc/api.py (MCMC / _MultiSampler, partial)", [
      C("if list(initial_params.values())[0].is_cuda:", "device_type", "replace", False,
        'if list(initial_params.values())[0].device.type in ("cuda", "npu"):',
        "multi-chain MCMC forks workers unless the initial params are on an accelerator; forking after NPU "
        "initialisation is presumably as broken as for CUDA, but this is unconfirmed in knowledge"),
  ])

E("pyro_horovod", "examples/svi_horovod.py", "explicit_replacement",
  "pyro-ppl/pyro examples/svi_horovod.py", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("import horovod.torch as hvd", "distributed_framework", "replace", False,
        "import torch.distributed as dist  # Horovod has no Ascend build: rewrite on torch.distributed (hccl)",
        "unconfirmed: knowledge has no Horovod/Ascend entry; allreduce on NPU tensors via Horovod is not expected "
        "to work, the real port is torch.distributed with backend='hccl' (multi-line rewrite)"),
      C("torch.cuda.set_device(hvd.local_rank())", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(hvd.local_rank())", "per-rank device binding; torch.cuda.set_device raises on an NPU host"),
      C('torch.set_default_tensor_type("torch.cuda.FloatTensor")', "device_type", "replace", True,
        'torch.set_default_device("npu")',
        "set_default_tensor_type does not accept torch.npu.*Tensor types (2.7.1 API list); set_default_device is supported"),
      C('config["pin_memory"] = True', "pin_memory", "replace", False,
        'config["pin_memory"], config["pin_memory_device"] = True, "npu"',
        "performance only: without an explicit pin_memory_device the loader pins for CUDA, which is unavailable"),
  ])

E("pyro_conftest", "tests/conftest.py", "explicit_replacement",
  "pyro-ppl/pyro tests/conftest.py", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "pytest entry point for the NPU test run"),
      C('torch.set_default_tensor_type(os.environ.get("PYRO_TENSOR_TYPE", "torch.DoubleTensor"))', "device_type",
        "add_branch", True,
        'if os.environ.get("PYRO_DEVICE"): torch.set_default_device(os.environ["PYRO_DEVICE"])',
        "torch.npu.*Tensor types are rejected by set_default_tensor_type, so the NPU run selects the device via "
        "set_default_device next to the (CPU) tensor type"),
  ])

E("pyro_test_common", "tests/common.py", "explicit_replacement",
  "pyro-ppl/pyro tests/common.py (requires_cuda, tensors_default_to, assert helpers)", [
      C('not torch.cuda.is_available(), reason="cuda is not available"', "torch_cuda_api", "replace", True,
        'not torch.npu.is_available(), reason="npu is not available"',
        "requires_cuda marker keeps its name but must test for the NPU, else those tests silently skip"),
      C('assert host in ("cpu", "cuda"), host', "device_type", "replace", True, 'assert host in ("cpu", "npu"), host',
        "callers pass 'npu' after the port"),
      C('old_module, name = torch.Tensor().type().rsplit(".", 1)', "device_type", "replace", True,
        "old_device = torch.empty(0).device",
        "rewrite on set_default_device: torch.npu.*Tensor type names cannot be passed to set_default_tensor_type"),
      C('new_module = "torch.cuda" if host == "cuda" else "torch"', "device_type", "removal", False, None,
        "dead after the rewrite; harmless if left"),
      C('torch.set_default_tensor_type("{}.{}".format(new_module, name))', "device_type", "replace", True,
        "torch.set_default_device(host)", "set_default_tensor_type rejects torch.npu.* types (2.7.1 API list)"),
      C('torch.set_default_tensor_type("{}.{}".format(old_module, name))', "device_type", "replace", True,
        "torch.set_default_device(old_device)", "restore counterpart of the line above"),
      C("cuda_rng_state = torch.cuda.get_rng_state() if torch.cuda.is_available() else None", "torch_cuda_api",
        "replace", True, "cuda_rng_state = torch.npu.get_rng_state() if torch.npu.is_available() else None",
        "otherwise the NPU generator is silently not frozen and seeded tests drift"),
      C("torch.cuda.set_rng_state(cuda_rng_state)", "torch_cuda_api", "replace", True,
        "torch.npu.set_rng_state(cuda_rng_state)", "restore counterpart"),
      C("b = b.cuda(device=a.get_device()) if a.is_cuda else b.cpu()", "tensor_to_device", "replace", True,
        "b = b.to(a.device)", "for NPU tensors a.is_cuda is False, b goes to CPU and a - b fails on mixed devices"),
  ])

E("pyro_makefile", "Makefile", "explicit_replacement",
  "pyro-ppl/pyro Makefile (test-cuda targets)", [
      C("=CUDA_TEST=1 PYRO_TENSOR_TYPE=torch.cuda.DoubleTensor pytest -vx --stage unit", "env_var", "replace", True,
        "CUDA_TEST=1 PYRO_TENSOR_TYPE=torch.FloatTensor PYRO_DEVICE=npu pytest -vx --stage unit",
        "torch.cuda.DoubleTensor cannot be set on an NPU host; device via PYRO_DEVICE (conftest branch), fp32 because "
        "NPU matmuls are fp32-only"),
      C("CUDA_TEST=1 PYRO_TENSOR_TYPE=torch.cuda.DoubleTensor pytest -vx --stage unit --lax", "env_var", "replace", True,
        "CUDA_TEST=1 PYRO_TENSOR_TYPE=torch.FloatTensor PYRO_DEVICE=npu pytest -vx --stage unit --lax",
        "same as test-cuda"),
  ])

# --------------------------------------------------------------------------------------------------
# TuRBO (uber-research/TuRBO)
# --------------------------------------------------------------------------------------------------

E("turbo_1", "turbo/turbo_1.py", "explicit_replacement",
  "uber-research/TuRBO turbo/turbo_1.py", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "library used directly from user scripts that are not part of the repo; it now calls torch.npu"),
      C('assert device == "cpu" or device == "cuda"', "device_type", "replace", True,
        'assert device in ("cpu", "cuda", "npu")', "device='npu' would be rejected"),
      C('if device == "cuda":', "device_type", "replace", False, 'if device == "npu":',
        "only guards the availability check below; leaving it just skips an early, clearer error"),
      C("assert torch.cuda.is_available(), \"can't use cuda if it's not available\"", "torch_cuda_api", "replace", True,
        "assert torch.npu.is_available(), \"can't use npu if it's not available\"",
        "with the guard ported this assert fires on every NPU host"),
      C('self.device = torch.device("cuda") if device == "cuda" else torch.device("cpu")', "device_type", "replace", True,
        'self.device = torch.device(device)',
        "otherwise device='npu' silently fits every GP with >= min_cuda points on the CPU"),
  ])

E("turbo_gp", "turbo/gp.py", "explicit_replacement",
  "uber-research/TuRBO turbo/gp.py (train_gp)", [
      # Device-agnostic: model and likelihood follow train_x.device / dtype.
  ])

# --------------------------------------------------------------------------------------------------
# LOL-BO (nataliemaus/lolbo): latent-space BO with a SELFIES VAE + DKL SVGP
# --------------------------------------------------------------------------------------------------

E("lolbo_main", "lolbo/lolbo.py", "explicit_replacement",
  "nataliemaus/lolbo lolbo/lolbo.py (LOLBOState)", [
      C("likelihood = gpytorch.likelihoods.GaussianLikelihood().cuda()", "tensor_to_device", "replace", True,
        "likelihood = gpytorch.likelihoods.GaussianLikelihood().npu()", ".cuda() -> .npu()"),
      C("self.model = GPModelDKL(self.train_z[:n_pts, :].cuda(), likelihood=likelihood ).cuda()", "tensor_to_device",
        "replace", True, "self.model = GPModelDKL(self.train_z[:n_pts, :].npu(), likelihood=likelihood ).npu()",
        ".cuda() -> .npu()"),
      C("self.model = self.model.cuda()", "tensor_to_device", "replace", True, "self.model = self.model.npu()",
        ".cuda() -> .npu()"),
      C("loss = -self.mll(pred, scores_arr.cuda())", "tensor_to_device", "replace", True,
        "loss = -self.mll(pred, scores_arr.npu())", ".cuda() -> .npu()"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on an NPU host; memory hygiene only"),
  ])

E("lolbo_ppgpr", "lolbo/utils/bo_utils/ppgpr.py", "explicit_replacement",
  "nataliemaus/lolbo lolbo/utils/bo_utils/ppgpr.py (GPModel / GPModelDKL)", [
      # Device-agnostic: the feature extractor follows inducing_points.device.
  ])

E("lolbo_turbo", "lolbo/utils/bo_utils/turbo.py", "explicit_replacement",
  "nataliemaus/lolbo lolbo/utils/bo_utils/turbo.py (TuRBO state + generate_batch)", [
      C("device=torch.device('cuda'),", "device_type", "replace", True, "device=torch.device('npu'),",
        "default device of the perturbation mask / random indices"),
      C("ei = qExpectedImprovement(model.cuda(), Y.max().cuda() )", "tensor_to_device", "replace", True,
        "ei = qExpectedImprovement(model.npu(), Y.max().npu() )",
        "inside a bare try/except: an unported .cuda() silently degrades acq_func='ei' to Thompson sampling"),
      C("bounds=torch.stack([tr_lb, tr_ub]).cuda()", "tensor_to_device", "replace", True,
        "X_next, _ = optimize_acqf(ei,bounds=torch.stack([tr_lb, tr_ub]).npu(),q=batch_size, num_restarts=num_restarts,raw_samples=raw_samples,)",
        "same silent fallback as above"),
      C("tr_lb = tr_lb.cuda()", "tensor_to_device", "replace", True, "tr_lb = tr_lb.npu()", ".cuda() -> .npu()"),
      C("tr_ub = tr_ub.cuda()", "tensor_to_device", "replace", True, "tr_ub = tr_ub.npu()", ".cuda() -> .npu()"),
      C("pert = sobol.draw(n_candidates).to(dtype=dtype).cuda()", "tensor_to_device", "replace", True,
        "pert = sobol.draw(n_candidates).to(dtype=dtype).npu()", "SobolEngine draws on CPU; move to NPU"),
      C("mask = mask.cuda()", "tensor_to_device", "replace", True, "mask = mask.npu()", ".cuda() -> .npu()"),
      C("X_cand = X_cand.cuda()", "tensor_to_device", "replace", True, "X_cand = X_cand.npu()", ".cuda() -> .npu()"),
      C("X_next = thompson_sampling(X_cand.cuda(), num_samples=batch_size )", "tensor_to_device", "replace", True,
        "X_next = thompson_sampling(X_cand.npu(), num_samples=batch_size )", ".cuda() -> .npu()"),
  ])

E("lolbo_mol_objective", "lolbo/molecule_objective.py", "explicit_replacement",
  "nataliemaus/lolbo lolbo/molecule_objective.py (SELFIES VAE objective)", [
      C("=z = z.cuda()", "tensor_to_device", "replace", True, "z = z.npu()", ".cuda() -> .npu()"),
      C("=self.vae = self.vae.cuda()", "tensor_to_device", "replace", True, "self.vae = self.vae.npu()",
        "decoder must sit with z"),
      C("state_dict = torch.load(self.path_to_vae_statedict)", "tensor_to_device", "replace", True,
        "state_dict = torch.load(self.path_to_vae_statedict, map_location='cpu')",
        "the released VAE checkpoint was saved from CUDA tensors; without map_location torch.load tries to restore "
        "them on a CUDA device and fails on an NPU host"),
      C("self.vae = self.vae.cuda().eval()", "tensor_to_device", "replace", True, "self.vae = self.vae.npu().eval()",
        ".cuda() -> .npu()"),
      C("dict = self.vae(X.cuda())", "tensor_to_device", "replace", True, "dict = self.vae(X.npu())",
        ".cuda() -> .npu()"),
  ])

E("lolbo_script", "scripts/optimize.py", "explicit_replacement",
  "nataliemaus/lolbo scripts/optimize.py (fire CLI, wandb)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("torch.backends.cuda.matmul.allow_tf32 = False", "torch_cuda_api", "replace", False,
        "torch.npu.matmul.allow_hf32 = False",
        "intent is full-fp32 matmuls; on NPU the knob is HF32 (torch.npu 'matmul' config) - attribute name and default "
        "unconfirmed, the CUDA flag is inert on NPU"),
      C("torch.backends.cudnn.allow_tf32 = False", "torch_cuda_api", "replace", False,
        "torch.npu.conv.allow_hf32 = False", "same as above for convolutions; unconfirmed"),
      C("torch.cuda.manual_seed(self.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(self.seed)",
        "torch.cuda.manual_seed is queued lazily and never runs on an NPU host; torch.manual_seed above already "
        "seeds the registered NPU backend, so redundant"),
      C("torch.cuda.manual_seed_all(self.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(self.seed)", "as above"),
      C('"gpu_mem_allocated_gb": torch.cuda.memory_allocated() / 1e9,', "torch_cuda_api", "replace", True,
        '"gpu_mem_allocated_gb": torch.npu.memory_allocated() / 1e9,',
        "torch.cuda.memory_allocated returns 0 when CUDA is uninitialised: the logged metric is silently wrong"),
  ])

E("lolbo_docker", "docker/Dockerfile", "explicit_replacement",
  "nataliemaus/lolbo docker/Dockerfile", [
      C("FROM pytorch/pytorch:1.12.1-cuda11.3-cudnn8-runtime", "env_var", "replace", True,
        "FROM ascendai/pytorch:2.1.0  # any CANN + torch + torch_npu base image (tag illustrative)",
        "CUDA runtime image has neither CANN nor torch_npu; exact Ascend image name is not in knowledge"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "NVIDIA container-runtime hint; inert on Ascend (devices are mounted via ASCEND_VISIBLE_DEVICES / --device)"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "inert on Ascend"),
      C("WORKDIR /workspace/lolbo", "env_var", "npu_only_addition", False,
        'RUN echo "source /usr/local/Ascend/ascend-toolkit/set_env.sh" >> /root/.bashrc',
        "CANN environment for interactive shells; unconfirmed whether the chosen base image already does this"),
  ])

# --------------------------------------------------------------------------------------------------
# Simplex-GP (permutohedral-lattice kernels for GPyTorch, custom CUDA extension)
# --------------------------------------------------------------------------------------------------

E("sgp_setup", "setup.py", "kernel_rewrite",
  "sanyamkapoor/simplex-gp setup.py (CUDAExtension for the lattice filter)", [
      C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
        "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
        "no nvcc on Ascend; NpuExtension adds torch_npu/ACL include and link paths"),
      C("CUDAExtension('gpytorch_lattice_kernel.lattice_cuda', [", "custom_cuda_extension", "replace", True,
        "NpuExtension('gpytorch_lattice_kernel.lattice_npu', [", "build the Ascend C port of the filter"),
      C("'gpytorch_lattice_kernel/csrc/lattice_kernel.cu',", "custom_cuda_extension", "replace", True,
        "'gpytorch_lattice_kernel/csrc/lattice_kernel_npu.cpp',",
        "the .cu kernel must be rewritten (Ascend C / torch ops); the file itself is outside this probe"),
      C("extra_compile_args={'cxx': ['-O3'], 'nvcc':", "custom_cuda_extension", "replace", False,
        "extra_compile_args={'cxx': ['-O3']}),", "the nvcc key is ignored for non-CUDA sources; cleanup only"),
  ])

E("sgp_lattice", "gpytorch_lattice_kernel/lattice.py", "kernel_rewrite",
  "sanyamkapoor/simplex-gp gpytorch_lattice_kernel/lattice.py (autograd Function over the CUDA op)", [
      C("from . import lattice_cuda as latticefilter", "custom_cuda_extension", "replace", True,
        "from . import lattice_npu as latticefilter", "import the NPU build of the extension"),
      C("from torch.utils.cpp_extension import load", "custom_cuda_extension", "replace", False,
        "raise ImportError('build the Ascend lattice op first: pip install -e .')",
        "JIT fallback compiles .cu sources and cpp_extension.load is marked unsupported on A2/A3; only reached "
        "when the prebuilt import fails, so not required"),
      C("latticefilter = load(name='lattice_cuda'", "custom_cuda_extension", "removal", False, None,
        "dead once the fallback raises"),
      C("assert src.is_cuda and ref.is_cuda", "device_type", "replace", True,
        "assert src.is_npu and ref.is_npu, 'the lattice filter is only implemented for NPU tensors'",
        "is_cuda is False for NPU tensors: the assert fires on every call"),
  ])

E("sgp_train", "experiments/train_simplexgp.py", "explicit_replacement",
  "sanyamkapoor/simplex-gp experiments/train_simplexgp.py (fire + wandb)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
        "device = 'npu' if torch.npu.is_available() else 'cpu'",
        "on CPU the lattice op's device assert fails; must select the NPU"),
      C("wandb.run.summary['gpu/max_mem_gb'] = torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", "replace",
        True, "wandb.run.summary['gpu/max_mem_gb'] = torch.npu.max_memory_allocated() / 2**30",
        "returns 0 when CUDA is uninitialised: the paper's memory number is silently wrong"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "gate for device selection and peak-memory reset"),
      C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
        "raises on an NPU host"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats()",
        "raises on an NPU host (CPU-only torch build) once the gate is ported"),
      C("'gpu': torch.cuda.get_device_name(device) if torch.cuda.is_available() else 'cpu',", "torch_cuda_api",
        "replace", False, "'gpu': torch.npu.get_device_name(device) if torch.npu.is_available() else 'cpu',",
        "run metadata only: would record 'cpu'"),
  ])

E("sgp_sweep", "experiments/run_uci.sh", "explicit_replacement",
  "sanyamkapoor/simplex-gp experiments/ launcher (shell sweep over UCI datasets)", [
      C("set -euo pipefail", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN libraries must be on the path before importing torch_npu or building the NPU extension"),
      C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${GPU}",
        "otherwise --device=0 silently lands on NPU 0 instead of the requested card"),
      C("nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv", "device_capability_check", "replace",
        True, "npu-smi info", "nvidia-smi is absent on an Ascend host and set -e aborts the sweep"),
  ])
