# Labels for probe289 (quantum ML / GPU circuit simulation, CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit; see README.md for the policy.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("torch_npu must be imported to register the 'npu' device and torch.npu "
               "(autoload only from torch_npu 2.5.1; this stack pins torch 2.1)")
SEED_NOTE = ("silent no-op without CUDA; torch.manual_seed already seeds the NPU generator, "
             "kept in sync for clarity only")
PIN_NOTE = ("performance only: pinned host memory is used for the H2D copy; whether pinning takes "
            "effect for NPU without pin_memory_device is unconfirmed")
EMPTY_CACHE_NOTE = "torch.cuda.empty_cache() is a silent no-op when CUDA is not initialised; memory hygiene only"

# --------------------------------------------------------------------------- #
# TorchQuantum-style code
# --------------------------------------------------------------------------- #
E("tq_mnist_example", "examples/simple_mnist/mnist_example.py", "device_branch_or_abstraction",
  "TorchQuantum examples/simple_mnist (QFCModel, tq.QuantumDevice, --no-cuda flag)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("pin_memory=True,", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu',", PIN_NOTE),
    C("use_cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_npu = not args.no_cuda and torch.npu.is_available()",
      "torch.cuda.is_available() is False on an NPU host, so training silently runs on the CPU"),
    C('device = torch.device("cuda" if use_cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if use_npu else "cpu")', "device string must name the NPU"),
])

E("tq_quantum_device", "torchquantum/device/devices.py", "device_branch_or_abstraction",
  "TorchQuantum torchquantum/device/devices.py (QuantumDevice nn.Module with state buffers)", [])

E("tq_gate_wrapper", "torchquantum/functional/gate_wrapper.py", "device_branch_or_abstraction",
  "TorchQuantum torchquantum/functional/gate_wrapper.py (einsum/bmm state-vector update)", [])

E("tq_quantumnas_train", "examples/quantumnas/train.py", "explicit_replacement",
  "TorchQuantum QuantumNAS examples/quantumnas/train.py (torchpack configs + dist)", [
    C("=import torch.cuda", "import_torch_npu", "replace", True, "import torch_npu", IMPORT_NOTE),
    C("=dist.init()", "distributed_framework", "replace", False,
      "dist.init()  # patched torchpack context: init_process_group(backend='hccl')",
      "unconfirmed: torchpack.distributed.init() initialises torch.distributed itself and (from memory) "
      "hard-codes the nccl backend; needs a patched init or an explicit init_process_group('hccl')"),
    C("torch.cuda.set_device(dist.local_rank())", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(dist.local_rank())", "torch.cuda.set_device raises without CUDA"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; --gpu would silently select nothing"),
    C('device = torch.device("cuda")', "device_type", "replace", True,
      'device = torch.device("npu")', "config value 'gpu' is mapped to a CUDA device"),
    C("torch.cuda.manual_seed_all(configs.run.manual_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(configs.run.manual_seed)", SEED_NOTE),
    C("            pin_memory=True,", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu',", PIN_NOTE),
    C('map_location="cuda:0"', "device_type", "replace", True,
      'state_dict = torch.load(configs.ckpt.name, map_location="npu:0")',
      "map_location to a CUDA device fails to deserialize without CUDA"),
    C("        model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),",
      "Module.cuda() raises without CUDA"),
])

E("tq_quantumnas_config", "examples/quantumnas/configs/mnist/four0123/default.yml", "explicit_replacement",
  "TorchQuantum QuantumNAS torchpack YAML config", [
    C("simulator_device: GPU", "device_type", "replace", False, "simulator_device: CPU",
      "Aer has no NPU path and AerSimulator(device='GPU') errors without CUDA, but the key is only "
      "read when qiskit.use_qiskit is True (False here)"),
])

E("tq_vqe_example", "examples/vqe/vqe.py", "explicit_replacement",
  "TorchQuantum examples/vqe (U3+CU3 ansatz, expval_joint_analytical, Pauli-string Hamiltonian)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(args.seed)", SEED_NOTE),
    C('device = torch.device(f"cuda:{args.gpu}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{args.gpu}")', "hard-coded CUDA device"),
    C("evals = torch.linalg.eigvalsh(H)", "unsupported_op_workaround", "replace", False,
      "evals = torch.linalg.eigvalsh(H.cpu())",
      "linalg_eigh has no entry in the NPU native op lists, so it runs through the CPU fallback; "
      "doing the one-off diagonalisation on the host explicitly is the cleaner port (performance/clarity)"),
])

E("tq_statevec_bench", "benchmarks/statevector_scaling.py", "device_branch_or_abstraction",
  "TorchQuantum-style state-vector scaling benchmark (CUDA events, peak memory, JSON records)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('    if device.type == "cuda":', "device_type", "add_branch", False,
      'if device.type == "npu": torch.npu.synchronize(device)',
      "trailing sync after printing a record; timings are not affected"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", False,
      "torch.npu.synchronize(device)", "goes with the branch above"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "raises without CUDA; the NPU timing path needs a device sync"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created on an NPU host"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created on an NPU host"),
    C('if device.type == "cuda" and torch.cuda.is_available():', "device_type", "add_branch", True,
      'if device.type == "npu": ... (same block with torch.npu and an NPU event timer)',
      "without an NPU branch the NPU run is timed by the CPU path: asynchronous launches, no sync, "
      "no peak memory -> the benchmark's results are wrong"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(device)", "raises without CUDA (lazy init)"),
    C("peak_mem = torch.cuda.max_memory_allocated(device) / 2**20", "torch_cuda_api", "replace", True,
      "peak_mem = torch.npu.max_memory_allocated(device) / 2**20",
      "peak memory is part of the benchmark output; CUDA stats read 0 on NPU"),
    C("    if torch.cuda.is_available():", "torch_cuda_api", "add_branch", False,
      'elif torch.npu.is_available(): info["npu"] = torch.npu.get_device_name(0); info["npu_count"] = torch.npu.device_count()',
      "environment metadata only; the CUDA branch is simply skipped on NPU"),
    C('parser.add_argument("--devices", nargs="+", default=["cpu", "cuda"])', "device_type", "replace", True,
      'parser.add_argument("--devices", nargs="+", default=["cpu", "npu"])',
      "default run silently skips the accelerator on an NPU host"),
    C("torch.cuda.empty_cache()  # drop cached blocks", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # drop cached blocks before the next size", EMPTY_CACHE_NOTE),
])

E("tq_cuda_ext_setup", "setup.py", "kernel_rewrite",
  "TorchQuantum-style setup.py with an optional CUDAExtension (fused state-vector kernels)", [
    C("from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension", "custom_cuda_extension",
      "replace", False,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "import itself works; edited together with the extension definition"),
    C("has_toolkit = CUDA_HOME is not None and nvcc_version() is not None", "custom_cuda_extension", "replace",
      False, 'has_toolkit = os.environ.get("ASCEND_HOME_PATH") is not None',
      "on an NPU host no CUDA toolkit is found and the build silently falls back to pure Python; "
      "detecting CANN is only needed if the kernels are re-implemented"),
    C("        CUDAExtension(", "custom_cuda_extension", "replace", False, "NpuExtension(",
      "nvcc/.cu kernels cannot target Ascend; an NPU build needs Ascend C kernels via NpuExtension "
      "(performance port, the einsum fallback already works)"),
    C('"nvcc": nvcc_flags,', "custom_cuda_extension", "removal", False, None,
      "nvcc flags have no meaning for an Ascend C build"),
    C('"gpu-sim": ["qiskit-aer-gpu", "cuquantum-python-cu12"],', "custom_cuda_extension", "removal", False, None,
      "CUDA-only simulator packages; optional extra"),
])

E("tq_fused_ops", "torchquantum/functional/fused_ops.py", "kernel_rewrite",
  "TorchQuantum-style wrapper around compiled CUDA state-vector kernels with einsum fallback", [
    C("from torchquantum import _C  # compiled CUDA kernels", "custom_cuda_extension", "replace", False,
      "from torchquantum import _C  # Ascend C kernels built with NpuExtension",
      "guarded import; without a rebuilt extension the torch fallback is used"),
    C("return _HAS_C and state.is_cuda and state.dtype == torch.complex64", "custom_cuda_extension", "replace",
      False, "return _HAS_C and state.device.type == 'npu' and state.dtype == torch.complex64",
      "on NPU is_cuda is False, so the (correct) torch fallback runs; only changes if the kernels are ported"),
    C('ctrl = torch.tensor(controls, dtype=torch.int32, device="cuda")', "device_type", "replace", False,
      "ctrl = torch.tensor(controls, dtype=torch.int32, device=state.device)",
      "dead on NPU unless the kernels are ported; then it must follow the state's device"),
    C("dtype=torch.int8).cuda()", "tensor_to_device", "replace", False,
      "codes = torch.tensor([...], dtype=torch.int8, device=state.device)",
      "dead on NPU unless the kernels are ported"),
])

E("tq_triton_gate", "torchquantum/kernels/triton_apply.py", "kernel_rewrite",
  "Triton single-qubit gate kernel on split real/imag planes (torchquantum-style kernels/)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('triton.Config({"BLOCK": 256}, num_warps=2, num_stages=1),', "triton_kernel_tuning", "replace", False,
      'triton.Config({"BLOCK": 256}),',
      "num_warps/num_stages were tuned for A100/H100 warps; triton-ascend tiles differently (unconfirmed values)"),
    C('triton.Config({"BLOCK": 512}, num_warps=4, num_stages=1),', "triton_kernel_tuning", "replace", False,
      'triton.Config({"BLOCK": 512}),', "GPU warp tuning; retune for triton-ascend (unconfirmed)"),
    C('triton.Config({"BLOCK": 1024}, num_warps=4, num_stages=2),', "triton_kernel_tuning", "replace", False,
      'triton.Config({"BLOCK": 1024}),', "GPU warp tuning; retune for triton-ascend (unconfirmed)"),
    C('triton.Config({"BLOCK": 2048}, num_warps=8, num_stages=2),', "triton_kernel_tuning", "replace", False,
      'triton.Config({"BLOCK": 2048}),', "GPU warp tuning; retune for triton-ascend (unconfirmed)"),
    C('triton.Config({"BLOCK": 4096}, num_warps=16, num_stages=3),', "triton_kernel_tuning", "replace", False,
      'triton.Config({"BLOCK": 8192}),', "GPU warp tuning; retune for triton-ascend (unconfirmed)"),
    C('def __init__(self, n_wires: int, bsz: int = 1, device="cuda"):', "device_type", "replace", True,
      'def __init__(self, n_wires: int, bsz: int = 1, device="npu"):', "default device is CUDA"),
    C('assert self.re.is_cuda, "SplitState kernels need CUDA tensors"', "device_type", "replace", True,
      'assert self.re.device.type == "npu", "SplitState kernels need NPU tensors"',
      "is_cuda is False for NPU tensors, the assert fires"),
    C('BLOCK=BLOCK, num_warps=4)', "triton_kernel_tuning", "replace", False,
      "_probs_kernel[(triton.cdiv(n, BLOCK),)](self.re, self.im, out, n, BLOCK=BLOCK)",
      "num_warps is a GPU launch hint; grid/BLOCK should be retuned for the NPU core count (unconfirmed)"),
    C('def self_test(n_wires=10, bsz=4, device="cuda"):', "device_type", "replace", True,
      'def self_test(n_wires=10, bsz=4, device="npu"):', "default device is CUDA"),
])

# --------------------------------------------------------------------------- #
# PennyLane
# --------------------------------------------------------------------------- #
E("pl_torchlayer_moons", "demos/tutorial_qnn_module_torch.py", "explicit_replacement",
  "PennyLane demo tutorial_qnn_module_torch (qml.qnn.TorchLayer, default.qubit.torch on GPU)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("use_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_gpu = torch.npu.is_available()", "False on an NPU host: the second model silently runs on CPU"),
    C('dev_str = "cuda" if use_gpu else "cpu"', "device_type", "replace", True,
      'dev_str = "npu" if use_gpu else "cpu"', "device string"),
    C('dev = qml.device("default.qubit.torch", wires=n_qubits, torch_device="cuda")', "device_type", "replace",
      True, 'dev = qml.device("default.qubit.torch", wires=n_qubits, torch_device="npu")',
      "PennyLane builds the state on torch_device; 'cuda' fails without CUDA. Whether PennyLane's torch "
      "backend handles npu tensors end to end is unconfirmed"),
    C("model = torch.nn.Sequential(*layers).cuda()", "tensor_to_device", "replace", True,
      "model = torch.nn.Sequential(*layers).npu()", ".cuda() raises without CUDA"),
    C("X = torch.tensor(X, requires_grad=True).float().cuda()", "tensor_to_device", "replace", True,
      "X = torch.tensor(X, requires_grad=True).float().npu()", ".cuda() raises without CUDA"),
    C("y_hot = y_hot.float().cuda()", "tensor_to_device", "replace", True,
      "y_hot = y_hot.float().npu()", ".cuda() raises without CUDA"),
])

E("pl_transfer_learning", "demos/tutorial_quantum_transfer_learning.py", "explicit_replacement",
  "PennyLane demo tutorial_quantum_transfer_learning (ResNet18 + dressed quantum circuit), lab fork with AMP", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from torch.cuda.amp import autocast, GradScaler", "amp", "replace", False,
      "from torch_npu.npu.amp import autocast, GradScaler",
      "CUDA autocast and GradScaler both disable themselves (with a warning) without CUDA, so the run is "
      "plain fp32: correct but slower; changing the import re-targets every use"),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "silently trains on the CPU on an NPU host"),
    C("num_workers=4, pin_memory=True", "pin_memory", "replace", False,
      "image_datasets[x], batch_size=batch_size, shuffle=True, num_workers=4, pin_memory=True, pin_memory_device='npu'",
      PIN_NOTE),
])

E("pl_lightning_gpu_bench", "benchmarks/lightning_gpu_adjoint.py", "device_branch_or_abstraction",
  "PennyLane-Lightning GPU adjoint-Jacobian benchmark (lightning.gpu, MPI, batch_obs)", [
    C('p.add_argument("--devices", nargs="+", default=["lightning.gpu", "lightning.qubit", "default.qubit"])',
      "device_type", "replace", False,
      'p.add_argument("--devices", nargs="+", default=["lightning.qubit", "default.qubit"])',
      "lightning.gpu cannot run without CUDA/cuStateVec; the failure is caught and the row skipped"),
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "n_gpus = torch.npu.device_count()",
      "only feeds the lightning.gpu MPI binding, which has no NPU counterpart"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(local_rank % max(n_gpus, 1))', "env_var", "replace", False,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(local_rank % max(n_gpus, 1))',
      "only meaningful for lightning.gpu MPI mode, which has no NPU counterpart"),
    C('return qml.device("lightning.gpu", **kwargs)', "device_type", "replace", False,
      'return qml.device("lightning.qubit", wires=n_wires, batch_obs=args.batch_obs)',
      "cuStateVec-backed simulator; on NPU the error is caught and the configuration skipped"),
])

E("pl_quantum_gan", "demos/tutorial_quantum_gans.py", "transfer_to_npu",
  "PennyLane demo tutorial_quantum_gans (patch quantum GAN, lightning.qubit + CUDA discriminator)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "with transfer_to_npu the torch.cuda.* calls and 'cuda' device strings in this demo are "
      "redirected to the NPU; nothing else in the file needs editing"),
])

E("qlstm_pos_tagger", "examples/qlstm/train_qlstm_pos.py", "transfer_to_npu",
  "QLSTM (quantum LSTM) POS-tagger example with PennyLane TorchLayer gates", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "transfer_to_npu redirects torch.cuda.is_available / 'cuda' devices to the NPU"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
      "not rewritten by transfer_to_npu; the Ascend runtime ignores CUDA_VISIBLE_DEVICES so --gpu "
      "silently has no effect"),
])

# --------------------------------------------------------------------------- #
# Qiskit (Machine Learning, Aer GPU)
# --------------------------------------------------------------------------- #
E("qml_torch_connector", "docs/tutorials/05_torch_connector_gpu.py", "explicit_replacement",
  "Qiskit Machine Learning tutorial 05_torch_connector (EstimatorQNN + TorchConnector), GPU fork", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('parser.add_argument("--device", default="cuda", help="torch device for the classical part")',
      "device_type", "replace", True,
      'parser.add_argument("--device", default="npu", help="torch device for the classical part")',
      "default CUDA device"),
    C('parser.add_argument("--aer-device", default="GPU", choices=["CPU", "GPU"],', "device_type", "replace",
      True, 'parser.add_argument("--aer-device", default="CPU", choices=["CPU", "GPU"],',
      "Aer has no NPU backend; the GPU device needs qiskit-aer-gpu + CUDA and errors otherwise"),
    C('    if device.type == "cuda":', "device_type", "add_branch", False,
      'elif device.type == "npu": print(f"classical part on {torch.npu.get_device_name(device)}")',
      "log line only; skipped on NPU"),
    C("data = data.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "data = data.to(device, non_blocking=True)", ".cuda() raises without CUDA"),
    C("target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.to(device, non_blocking=True)", ".cuda() raises without CUDA"),
])

E("aer_gpu_qv_bench", "test/benchmark/aer_gpu_qv_bench.py", "explicit_replacement",
  "qiskit-aer GPU quantum-volume benchmark (cuStateVec, blocking, batched shots) with a torch cross-check", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('        device="GPU",', "device_type", "replace", True, 'device="CPU",',
      "AerSimulator(device='GPU') raises AerError without a CUDA build/device; Aer has no NPU path"),
    C('opts["cuStateVec_enable"] = True', "custom_cuda_extension", "removal", False, None,
      "cuStateVec option of the GPU simulator; only behind --custatevec"),
    C('opts["batched_shots_gpu"] = True', "custom_cuda_extension", "removal", False, None,
      "GPU-only option; only behind --batched-shots"),
    C('opts["batched_shots_gpu_max_qubits"] = 16', "custom_cuda_extension", "removal", False, None,
      "GPU-only option; only behind --batched-shots"),
    C('if "GPU" not in backend.available_devices():', "device_type", "replace", True,
      'if "CPU" not in backend.available_devices():',
      "the check exits the script on any host without the CUDA build of Aer"),
    C('torch_device = torch.device("cuda:0")', "device_type", "replace", True,
      'torch_device = torch.device("npu:0")', "hard-coded CUDA device for the torch cross-check"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
])

# --------------------------------------------------------------------------- #
# cuQuantum / CuPy / CUDA-Q
# --------------------------------------------------------------------------- #
E("custatevec_backend", "qsim/backends/custatevec_backend.py", "kernel_rewrite",
  "cuquantum-python custatevec sample code driving cuStateVec on a torch CUDA tensor", [
    C("from cuquantum import custatevec as cusv", "custom_cuda_extension", "removal", False, None,
      "guarded import (falls back to HAVE_CUQUANTUM=False); no NPU build of cuQuantum exists"),
    C("    if not HAVE_CUQUANTUM:", "custom_cuda_extension", "removal", True, None,
      "the NPU port implements the gates with torch ops, so cuquantum must not be a hard requirement"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available():", "raises on every NPU host"),
    C("self.device_index = torch.cuda.current_device() if device is None else device", "torch_cuda_api",
      "replace", True, "self.device_index = torch.npu.current_device() if device is None else device",
      "torch.cuda.current_device raises without CUDA"),
    C("torch.cuda.set_device(self.device_index)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(self.device_index)", "raises without CUDA"),
    C('self.device = torch.device("cuda", self.device_index)', "device_type", "replace", True,
      'self.device = torch.device("npu", self.device_index)', "CUDA device for the state vector"),
    C("self.handle = cusv.create()", "custom_cuda_extension", "removal", True, None,
      "cuStateVec handle; no NPU equivalent"),
    C("self.stream = torch.cuda.current_stream(self.device)", "torch_cuda_api", "replace", True,
      "self.stream = torch.npu.current_stream(self.device)", "CUDA stream API"),
    C("cusv.set_stream(self.handle, self.stream.cuda_stream)", "custom_cuda_extension", "removal", True, None,
      "binds a CUDA stream to cuStateVec"),
    C("cusv.destroy(self.handle)", "custom_cuda_extension", "removal", True, None, "cuStateVec handle"),
    C("ws_needed = cusv.apply_matrix_get_workspace_size(", "custom_cuda_extension", "removal", True, None,
      "cuStateVec workspace query; torch implementation needs none"),
    C("        cusv.apply_matrix(", "custom_cuda_extension", "replace", True,
      "self.sv = _apply_matrix_torch(self.sv, mat, targets, controls, self.n_qubits, adjoint)",
      "cuStateVec kernel on a raw CUDA pointer; rewrite with einsum/index ops on the NPU tensor"),
    C('code = {"I": cusv.Pauli.I,', "custom_cuda_extension", "replace", True,
      'code = {"I": 0, "X": 1, "Y": 2, "Z": 3}', "cuStateVec enum"),
    C("cusv.apply_pauli_rotation(", "custom_cuda_extension", "replace", True,
      "self.sv = _apply_pauli_rotation_torch(self.sv, theta, paulis, targets, self.n_qubits)",
      "cuStateVec kernel; rewrite with torch ops"),
    C("cusv.abs2sum_array(", "custom_cuda_extension", "replace", True,
      "out = _marginal_probs_torch(self.sv, bits, self.n_qubits)", "cuStateVec kernel; rewrite with torch ops"),
    C("pauli = np.asarray([[cusv.Pauli.Z]], dtype=np.int32)", "custom_cuda_extension", "removal", True, None,
      "cuStateVec enum; the torch version computes <Z> from probabilities"),
    C("cusv.compute_expectations_on_pauli_basis(", "custom_cuda_extension", "replace", True,
      "out = _expval_z_torch(self.sv, qubit, self.n_qubits)", "cuStateVec kernel; rewrite with torch ops"),
    C("sampler, ws_size = cusv.sampler_create(", "custom_cuda_extension", "replace", True,
      "probs = (self.sv.abs() ** 2).float()", "cuStateVec sampler; use torch.multinomial on the NPU"),
    C("cusv.sampler_preprocess(self.handle, sampler, ws.data_ptr(), ws_size)", "custom_cuda_extension",
      "removal", True, None, "cuStateVec sampler"),
    C("        cusv.sampler_sample(", "custom_cuda_extension", "replace", True,
      "out = torch.multinomial(probs, shots, replacement=True).cpu().numpy()", "cuStateVec sampler"),
    C("cusv.sampler_destroy(sampler)", "custom_cuda_extension", "removal", True, None, "cuStateVec sampler"),
])

E("cutensornet_expval", "qsim/backends/cutensornet_expectation.py", "kernel_rewrite",
  "cuquantum-python cuTensorNet CircuitToEinsum + contract with torch operands (VQE-style loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from cuquantum import CircuitToEinsum, contract, contract_path", "custom_cuda_extension", "replace", True,
      "import opt_einsum as oe  # + a torch circuit->einsum converter",
      "unguarded cuQuantum import; cuTensorNet needs CUDA"),
    C('self._opts = NetworkOptions(device_id=device_id, blocking="auto")', "custom_cuda_extension", "removal",
      True, None, "cuTensorNet network options"),
    C("converter = CircuitToEinsum(bound, dtype=self.dtype, backend=torch)", "custom_cuda_extension",
      "replace", True, "expr, operands = circuit_to_einsum_torch(bound, pauli, dtype=torch.complex64, device='npu')",
      "cuquantum's converter places torch operands on the current CUDA device"),
    C("path, info = contract_path(", "custom_cuda_extension", "replace", True,
      "path, info = oe.contract_path(expr, *operands, optimize='greedy')", "cuTensorNet path finder"),
    C("optimize=OptimizerOptions(samples=8),", "custom_cuda_extension", "removal", True, None,
      "cuTensorNet optimizer options"),
    C("result = contract(expr, *operands,", "custom_cuda_extension", "replace", True,
      "result = oe.contract(expr, *operands, optimize=self._path, backend='torch')",
      "cuTensorNet contraction; opt_einsum with the torch backend runs on the NPU tensors"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "raises without CUDA"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", "replace", False,
      'f"mem {torch.npu.max_memory_allocated() / 2**30:.2f} GiB)")', "log only; reads 0 on NPU"),
])

E("cupy_dlpack_interop", "qsim/utils/dlpack_interop.py", "kernel_rewrite",
  "torch <-> CuPy DLPack helpers with a CuPy RawKernel for marginal probabilities", [
    C("    import cupy as cp", "custom_cuda_extension", "removal", False, None,
      "guarded import; CuPy has no Ascend backend"),
    C("return cp.from_dlpack(t.contiguous())", "custom_cuda_extension", "removal", True, None,
      "CuPy cannot import NPU memory; callers must use the torch path"),
    C('def numpy_to_device(arr: np.ndarray, device="cuda") -> torch.Tensor:', "device_type", "replace", True,
      'def numpy_to_device(arr: np.ndarray, device="npu") -> torch.Tensor:', "default CUDA device"),
    C('_marginal_kernel = cp.RawKernel(_MARGINAL_SRC, "marginal_probs")', "custom_cuda_extension", "removal",
      True, None, "NVRTC-compiled CUDA kernel; no NPU path"),
    C("with CupyDevice(sv.device.index):", "custom_cuda_extension", "replace", True,
      "return marginal_probabilities_torch(sv, keep, n_qubits)",
      "the CuPy kernel path cannot run on NPU tensors; use the plain torch implementation"),
    C("_get_marginal_kernel()((blocks,), (threads,),", "custom_cuda_extension", "removal", True, None,
      "CuPy RawKernel launch"),
    C("free, total = torch.cuda.mem_get_info(device_index)", "torch_cuda_api", "replace", True,
      "free, total = torch.npu.mem_get_info(device_index)", "raises without CUDA"),
    C("    torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      EMPTY_CACHE_NOTE),
])

E("cudaq_hybrid_qnn", "examples/python/tutorials/hybrid_qnn_cudaq.py", "explicit_replacement",
  "CUDA-Q hybrid QNN tutorial (cudaq.observe parameter shift inside torch.autograd.Function)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('ap.add_argument("--target", default="nvidia"', "device_type", "replace", True,
      'ap.add_argument("--target", default="qpp-cpu", choices=["nvidia", "nvidia-mqpu", "qpp-cpu"])',
      "cudaq.set_target('nvidia') needs an NVIDIA GPU; CUDA-Q has no Ascend target, the circuits fall "
      "back to the CPU simulator"),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "classical layers silently run on the CPU on an NPU host"),
])

# --------------------------------------------------------------------------- #
# Other hybrid training / tooling
# --------------------------------------------------------------------------- #
E("tq_qsvm_kernel", "examples/qsvm/quantum_kernel_gpu.py", "device_branch_or_abstraction",
  "TorchQuantum-style quantum-kernel SVM (batched feature states, chunked Gram matrix)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('if device.type != "cuda":', "device_type", "add_branch", False,
      'if device.type not in ("cuda", "npu"):',
      "on NPU the fixed 512-row chunk is used; works, only the memory-based sizing is lost"),
    C("free, _ = torch.cuda.mem_get_info(device)", "torch_cuda_api", "replace", False,
      "free, _ = (torch.npu if device.type == 'npu' else torch.cuda).mem_get_info(device)",
      "goes with the branch above"),
    C('device = torch.device("cpu" if args.cpu or not torch.cuda.is_available() else "cuda")', "device_type",
      "replace", True, 'device = torch.device("cpu" if args.cpu or not torch.npu.is_available() else "npu")',
      "silently computes the kernel matrix on the CPU on an NPU host"),
    C('    if device.type == "cuda":', "device_type", "add_branch", False,
      'elif device.type == "npu": torch.npu.synchronize()',
      "only affects the printed state-simulation time"),
    C("        torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
      "goes with the branch above"),
    C("    torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      EMPTY_CACHE_NOTE),
    C("if torch.cuda.is_available() and not args.cpu:", "torch_cuda_api", "add_branch", False,
      'if device.type == "npu": print(f"peak NPU memory: {torch.npu.max_memory_allocated() / 2**20:.0f} MiB")',
      "log line only"),
])

E("ddp_hybrid_qnn", "scripts/train_qnn_ddp.py", "explicit_replacement",
  "torchrun/DDP training of a CNN + torchquantum head with AMP, fused AdamW and SyncBN", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('with torch.autocast(device_type="cuda", enabled=False):', "amp", "replace", True,
      'with torch.autocast(device_type="npu", enabled=False):',
      "once the outer autocast targets the NPU, disabling CUDA autocast no longer keeps the complex64 "
      "simulation out of fp16"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)", "raises without CUDA"),
    C('dist.init_process_group(backend="nccl", init_method="env://")', "dist_backend", "replace", True,
      'dist.init_process_group(backend="hccl", init_method="env://")', "NCCL is not available on Ascend"),
    C("dist.barrier(device_ids=[local_rank])", "dist_backend", "replace", False, "dist.barrier()",
      "unconfirmed: older torch releases reject device_ids for non-NCCL backends"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)", SEED_NOTE),
    C("pin_memory=True, drop_last=True", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu', drop_last=True, persistent_workers=args.workers > 0)",
      PIN_NOTE),
    C("num_workers=args.workers, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=args.workers, pin_memory=True, pin_memory_device='npu')", PIN_NOTE),
    C('ctx = torch.autocast(device_type="cuda", dtype=torch.float16) if args.amp else nullcontext()', "amp",
      "replace", False,
      'ctx = torch.autocast(device_type="npu", dtype=torch.float16) if args.amp else nullcontext()',
      "CUDA autocast disables itself without CUDA: --amp silently trains in fp32 (performance only)"),
    C("stats = torch.tensor([loss_sum.item(), correct.item(), total], device=device, dtype=torch.float64)",
      "unsupported_op_workaround", "replace", True,
      "stats = torch.tensor([loss_sum.item(), correct.item(), total], device=device, dtype=torch.float32)",
      "Ascend's support list gives torch.distributed.all_reduce dtypes bf16/fp16/fp32/int32/int64/bool on "
      "A2 -- no fp64, so the epoch-stat all_reduce fails"),
    C("x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)", ".cuda() raises without CUDA"),
    C('device = torch.device(f"cuda:{local_rank}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{local_rank}")', "hard-coded CUDA device"),
    C("lr=args.lr, weight_decay=args.wd, fused=True)", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=args.lr, weight_decay=args.wd)",
      "unconfirmed: _fused_adamw_ has no NPU kernel in the op lists (CPU fallback or error); "
      "NpuFusedAdamW is the NPU fused optimizer"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "a CUDA GradScaler disables itself without CUDA; with NPU fp16 autocast that means unscaled fp16 "
      "gradients (underflow)"),
    C('map_location={"cuda:0": f"cuda:{local_rank}"}', "device_type", "replace", True,
      'ckpt = torch.load(args.resume, map_location={"npu:0": f"npu:{local_rank}"})',
      "remaps onto a CUDA device; fails without CUDA"),
    C('"max_mem_gb": torch.cuda.max_memory_allocated() / 2**30}', "torch_cuda_api", "replace", False,
      '"max_mem_gb": torch.npu.max_memory_allocated() / 2**30}', "logged metric only; reads 0 on NPU"),
])

E("tq_device_utils", "torchquantum/util/device_utils.py", "device_branch_or_abstraction",
  "device-selection / seeding / GPU-info helper module of a torchquantum-based lab repo", [
    C('return torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu")', "device_type",
      "add_branch", True,
      'return torch.device("cuda:0") if torch.cuda.is_available() else (torch.device("npu:0") if torch.npu.is_available() else torch.device("cpu"))',
      "'auto' silently resolves to the CPU on an NPU host"),
    C('spec = "cuda"', "device_type", "replace", True,
      'spec = "npu" if torch.npu.is_available() else "cuda"', "'gpu' is mapped to CUDA and then raises"),
    C("    if torch.cuda.is_available():", "torch_cuda_api", "add_branch", False,
      "if torch.npu.is_available(): torch.npu.manual_seed_all(seed)", SEED_NOTE),
    C('os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"', "env_var", "removal", False, None,
      "cuBLAS-only setting; ignored on Ascend"),
    C("return torch.cuda.is_available() and torch.cuda.is_bf16_supported()", "torch_cuda_api", "add_branch",
      False, "return (torch.cuda.is_available() and torch.cuda.is_bf16_supported()) or (torch.npu.is_available() and torch.npu.is_bf16_supported())",
      "returns False on NPU, so bf16 paths are never chosen (performance only)"),
    C('if device.type != "cuda":', "unsupported_op_workaround", "add_branch", False,
      'if device.type == "npu": return torch.complex64',
      "non-CUDA devices get complex128; fp64/complex128 support on NPU is limited (knowledge notes the "
      "fp64->fp32 caveat, matmul lists fp32 max) -- unconfirmed which ops fail or fall back"),
    C('    if device.type == "cuda":', "device_type", "add_branch", False,
      'elif device.type == "npu": info.update({"npu_name": torch.npu.get_device_name(device), ...})',
      "summary metadata only"),
    C("if not (torch.cuda.is_available() and torch.cuda.is_initialized()):", "torch_cuda_api", "add_branch", False,
      'if torch.npu.is_available(): return f"{prefix}alloc {torch.npu.memory_allocated(device) / 2**20:.0f} MiB ..."',
      "report says 'no GPU' on NPU; logging only"),
    C('["nvidia-smi", "--query-gpu=index,name,memory.used,memory.total,utilization.gpu",', "torch_cuda_api",
      "replace", False, '["npu-smi", "info"],',
      "nvidia-smi is absent on Ascend hosts; the OSError is caught and reported"),
])

E("tq_profile_circuit", "tools/profile_circuit.py", "explicit_replacement",
  "torch.profiler + NVTX profiling script for a torchquantum QNN step (Nsight-friendly)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from torch.profiler import ProfilerActivity, profile, record_function, schedule, tensorboard_trace_handler",
      "torch_cuda_api", "replace", True,
      "from torch_npu.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler; from torch.autograd.profiler import record_function",
      "torch.profiler has no NPU activity; the Ascend profiler lives in torch_npu.profiler"),
    C("torch.cuda.nvtx.range_push(name)", "torch_cuda_api", "replace", True,
      "_ranges.append(torch_npu.npu.mstx.range_start(name))",
      "torch.cuda.nvtx is not redirected even by transfer_to_npu; mstx is the NPU equivalent"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True,
      "torch_npu.npu.mstx.range_end(_ranges.pop())", "NVTX -> mstx"),
    C('assert torch.cuda.is_available(), "this profiler script expects a GPU"', "torch_cuda_api", "replace", True,
      'assert torch.npu.is_available(), "this profiler script expects an NPU"', "assert fails on NPU hosts"),
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
      "hard-coded CUDA device"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("torch.cuda.cudart().cudaProfilerStart()", "torch_cuda_api", "removal", True, None,
      "CUDA runtime profiler control for nsys; no NPU counterpart (use msprof / torch_npu.profiler)"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "raises without CUDA"),
    C("torch.cuda.cudart().cudaProfilerStop()", "torch_cuda_api", "removal", True, None,
      "CUDA runtime profiler control for nsys"),
    C("activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],", "torch_cuda_api", "replace", True,
      "activities=[ProfilerActivity.CPU, ProfilerActivity.NPU],",
      "with CUDA activity the trace silently contains no device kernels on NPU"),
    C('sort_by="cuda_time_total"', "torch_cuda_api", "replace", False,
      'print(prof.key_averages().table(sort_by="npu_time_total", row_limit=25))',
      "unconfirmed: column name / key_averages support in torch_npu.profiler"),
])

E("qml_gpu_tests", "tests/test_torch_gpu.py", "device_branch_or_abstraction",
  "pytest CPU-vs-GPU consistency tests for torchquantum and PennyLane default.qubit.torch", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "needed once the tests target 'npu'; the unchanged suite only skips"),
    C("CUDA = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "ACCEL = torch.npu.is_available()", "all accelerator tests silently skip on an NPU host"),
    C('DEVICES = ["cpu", pytest.param("cuda"', "device_type", "replace", False,
      'DEVICES = ["cpu", pytest.param("npu", marks=[pytest.mark.gpu, requires_gpu])]',
      "parametrised accelerator device"),
    C("        torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      EMPTY_CACHE_NOTE),
    C('q_gpu = tq.QuantumDevice(n_wires=n_wires, bsz=bsz, device="cuda")', "device_type", "replace", False,
      'q_gpu = tq.QuantumDevice(n_wires=n_wires, bsz=bsz, device="npu")', "skipped test on NPU"),
    C("random_circuit(q_gpu, n_wires, depth, params.cuda())", "tensor_to_device", "replace", False,
      "random_circuit(q_gpu, n_wires, depth, params.npu())", "skipped test on NPU"),
    C('for dev in ("cpu", "cuda"):', "device_type", "replace", False, 'for dev in ("cpu", "npu"):',
      "skipped test on NPU"),
    C('torch.testing.assert_close(grads["cuda"], grads["cpu"]', "device_type", "replace", False,
      'torch.testing.assert_close(grads["npu"], grads["cpu"], atol=1e-5, rtol=1e-4)', "follows the loop above"),
    C('dev = qml.device("default.qubit.torch", wires=n, torch_device="cuda")', "device_type", "replace", False,
      'dev = qml.device("default.qubit.torch", wires=n, torch_device="npu")',
      "skipped test on NPU; PennyLane support for npu tensors unconfirmed"),
    C('x = torch.tensor([0.1, 0.2, 0.3], device="cuda", requires_grad=True)', "device_type", "replace", False,
      'x = torch.tensor([0.1, 0.2, 0.3], device="npu", requires_grad=True)', "skipped test on NPU"),
    C('assert out.device.type == "cuda"', "device_type", "replace", False, 'assert out.device.type == "npu"',
      "skipped test on NPU"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", False,
      "torch.npu.reset_peak_memory_stats()", "skipped test on NPU"),
    C("before = torch.cuda.memory_allocated()", "torch_cuda_api", "replace", False,
      "before = torch.npu.memory_allocated()", "skipped test on NPU"),
    C('qdev = tq.QuantumDevice(n_wires=n_wires, bsz=bsz, device="cuda")', "device_type", "replace", False,
      'qdev = tq.QuantumDevice(n_wires=n_wires, bsz=bsz, device="npu")', "skipped test on NPU"),
    C("peak = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated()", "skipped test on NPU"),
    C("torch.cuda.empty_cache()  # give the blocks back", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # give the blocks back to the driver", "skipped test on NPU"),
    C("after = torch.cuda.memory_allocated()", "torch_cuda_api", "replace", False,
      "after = torch.npu.memory_allocated()", "skipped test on NPU"),
])

# --------------------------------------------------------------------------- #
# shell, container and packaging files
# --------------------------------------------------------------------------- #
E("tq_dist_launcher", "scripts/run_quantumnas.sh", "explicit_replacement",
  "QuantumNAS launcher shell script (torchpack dist-run, torchrun, NCCL env)", [
    C("=set -euo pipefail", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (LD_LIBRARY_PATH, ASCEND_* paths) must be loaded before torch_npu is imported"),
    C("export CUDA_VISIBLE_DEVICES=${GPUS}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPUS}",
      "ignored by the Ascend runtime: GPUS would silently not restrict the devices"),
    C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None, "NCCL-only; silently ignored"),
    C("export NCCL_P2P_DISABLE=${NCCL_P2P_DISABLE:-0}", "env_var", "removal", False, None,
      "NCCL-only; no HCCL equivalent needed"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only; silently ignored"),
    C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "single node here; HCCL_SOCKET_IFNAME is the HCCL counterpart for NIC selection"),
    C("nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader", "torch_cuda_api",
      "replace", True, "npu-smi info", "nvidia-smi is absent on Ascend hosts and set -e aborts the script"),
    C("torch.cuda.device_count())\"", "torch_cuda_api", "replace", False,
      "python -c \"import torch, torch_npu; print('torch', torch.__version__, 'npus', torch.npu.device_count())\"",
      "prints None/0 on NPU; informational"),
    C("CUDA_VISIBLE_DEVICES=${GPUS%%,*} python examples/quantumnas/search.py \\", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPUS%%,*} python examples/quantumnas/search.py \\",
      "ignored by the Ascend runtime"),
    C("--dist.backend nccl", "dist_backend", "replace", True,
      '--dist.backend hccl 2>&1 | tee "${LOG_DIR}/prune.log"', "NCCL is not available on Ascend"),
])

E("aer_gpu_bench_sh", "test/benchmark/run_qv_sweep.sh", "explicit_replacement",
  "Slurm sweep script for qiskit-aer-gpu quantum-volume runs (cuStateVec, MPI chunking)", [
    C("#SBATCH --gres=gpu:a100:4", "device_type", "replace", True, "#SBATCH --gres=npu:4",
      "the GPU gres does not exist on an Ascend partition, sbatch rejects the job (NPU gres name is site-specific)"),
    C("module load cuda/12.2 openmpi/4.1.5-cuda", "custom_cuda_extension", "replace", False,
      "module load openmpi/4.1.5", "CUDA modules are absent; no set -e, so the failure is only printed"),
    C("=conda activate qml-gpu", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment for torch_npu"),
    C("=nvidia-smi -L", "torch_cuda_api", "replace", False, "npu-smi info",
      "command not found is only printed (no set -e)"),
    C("=export CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0",
      "single process on device 0; the torch cross-check uses device 0 anyway"),
    C("=export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "Aer MPI chunking has no NPU path; only the torch cross-check touches the NPU"),
    C("export UCX_TLS=cuda_copy,cuda_ipc,rc,sm,self", "env_var", "replace", False, "export UCX_TLS=rc,sm,self",
      "unconfirmed whether UCX errors or just warns on the missing CUDA transports"),
])

E("qml_gpu_dockerfile", "docker/Dockerfile.gpu", "explicit_replacement",
  "CUDA 12.1 Dockerfile for a PyTorch + PennyLane/lightning.gpu + qiskit-aer-gpu + cuQuantum lab image", [
    C("ARG CUDA_VERSION=12.1.1", "custom_cuda_extension", "replace", False, "ARG CANN_VERSION=8.3.rc1",
      "only parameterises the base image"),
    C("FROM nvidia/cuda:", "custom_cuda_extension", "replace", True,
      "FROM ascendai/cann:${CANN_VERSION}-910b-ubuntu22.04-py3.10",
      "the image must provide CANN (driver libs are mounted by the Ascend docker runtime); a CUDA base "
      "has no CANN, so torch_npu cannot load"),
    C("ARG TORCH_VERSION=2.1.2", "import_torch_npu", "replace", True, "ARG TORCH_VERSION=2.1.0",
      "torch_npu wheels pair with torch 2.1.0 (2.1.0.postN), not 2.1.2"),
    C("ARG TORCH_CUDA=cu121", "device_type", "replace", False, "ARG TORCH_INDEX=cpu",
      "only feeds the index URL below"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "NVIDIA container runtime hint; the Ascend docker runtime uses ASCEND_VISIBLE_DEVICES"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container runtime hint"),
    C("ARG TORCHVISION_VERSION=0.16.2", "import_torch_npu", "replace", True, "ARG TORCHVISION_VERSION=0.16.0",
      "torchvision must follow the torch 2.1.0 pin that torch_npu requires"),
    C("RUN pip install torch==${TORCH_VERSION} torchvision==${TORCHVISION_VERSION}", "import_torch_npu", "replace",
      True, "RUN pip install torch==${TORCH_VERSION} torchvision==${TORCHVISION_VERSION} torch-npu==2.1.0.post10 \\",
      "torch-npu is not installed anywhere in the image; added to the same pip install"),
    C("--index-url https://download.pytorch.org/whl/${TORCH_CUDA}", "device_type", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu is used with the CPU torch wheel (whl/cpu on x86, PyPI on aarch64); the cu121 index has "
      "no aarch64 build of this version (extra-index so torch-npu still resolves from PyPI)"),
    C('"pennylane-lightning-gpu==0.35.1" \\', "custom_cuda_extension", "removal", False, None,
      "cuStateVec-backed plugin; unusable on NPU"),
    C('"custatevec-cu12==1.6.0" \\', "custom_cuda_extension", "removal", False, None, "CUDA-only library"),
    C('"qiskit-aer-gpu==0.13.3" \\', "custom_cuda_extension", "replace", False, '"qiskit-aer==0.13.3" \\',
      "CUDA build of Aer; the CPU build is what runs on NPU hosts (wheel availability on aarch64 unconfirmed)"),
    C('"cuquantum-python-cu12==24.3.0" \\', "custom_cuda_extension", "removal", False, None, "CUDA-only library"),
    C('"cupy-cuda12x==13.0.0" \\', "custom_cuda_extension", "removal", False, None, "CUDA-only library"),
    C('ENV TORCH_CUDA_ARCH_LIST="8.0;8.6;9.0"', "env_var", "removal", False, None, "nvcc arch list"),
    C("TQ_BUILD_CUDA_EXT=1 pip install -e .", "custom_cuda_extension", "replace", True,
      "RUN cd /opt/qml-lab/third_party/torchquantum && TQ_BUILD_CUDA_EXT=0 pip install -e . \\",
      "TQ_BUILD_CUDA_EXT=1 makes setup.py exit when no CUDA toolkit is found, failing the image build"),
])

E("qml_conda_env", "environment.yml", "explicit_replacement",
  "conda environment.yml (pytorch + pytorch-cuda from the nvidia channel, GPU quantum simulators via pip)", [
    C("=- nvidia", "device_type", "removal", False, None, "CUDA package channel; harmless once nothing uses it"),
    C("=- pytorch=2.1.2", "import_torch_npu", "replace", True, "- pytorch=2.1.0  # CPU build",
      "torch_npu requires exactly torch 2.1.0 for the 2.1 line"),
    C("=- torchvision=0.16.2", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "must follow the torch 2.1.0 pin"),
    C("=- pytorch-cuda=12.1", "device_type", "removal", False, None,
      "selects the CUDA build of pytorch; unconfirmed whether torch_npu tolerates it on x86, "
      "not available on linux-aarch64"),
    C("- cuda-nvcc=12.1", "custom_cuda_extension", "removal", False, None,
      "only for building the CUDA kernels"),
    C("=- cuda-cudart-dev=12.1", "custom_cuda_extension", "removal", False, None, "CUDA runtime headers"),
    C("=- cupy=13.0", "custom_cuda_extension", "removal", False, None, "CuPy has no Ascend backend"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post10",
      "torch-npu pin"),
    C("=- qiskit-aer-gpu==0.13.3", "custom_cuda_extension", "replace", False, "- qiskit-aer==0.13.3",
      "CUDA build of Aer"),
    C("=- pennylane-lightning[gpu]==0.35.1", "custom_cuda_extension", "replace", False,
      "- pennylane-lightning==0.35.1", "lightning.gpu extra pulls cuStateVec"),
    C("=- cuquantum-python-cu12==24.3.0", "custom_cuda_extension", "removal", False, None, "CUDA-only library"),
])

E("qml_requirements_gpu", "requirements-gpu.txt", "explicit_replacement",
  "requirements-gpu.txt with the PyTorch cu121 index and CUDA simulator wheels", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "device_type", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; the pins below decide what is installed"),
    C("=-r requirements.txt", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "torch-npu pin"),
    C("=torch==2.1.2+cu121", "device_type", "replace", True, "torch==2.1.0",
      "CUDA build and a version torch_npu does not pair with (needs exactly 2.1.0)"),
    C("=torchvision==0.16.2+cu121", "device_type", "replace", True, "torchvision==0.16.0",
      "CUDA build; must follow torch 2.1.0"),
    C("=pennylane-lightning-gpu>=0.35,<0.36", "custom_cuda_extension", "removal", False, None,
      "cuStateVec-backed plugin"),
    C("=custatevec-cu12>=1.5", "custom_cuda_extension", "removal", False, None, "CUDA-only library"),
    C("=qiskit-aer-gpu==0.13.3", "custom_cuda_extension", "replace", False, "qiskit-aer==0.13.3",
      "CUDA build of Aer"),
    C("=cuquantum-python-cu12>=23.10", "custom_cuda_extension", "removal", False, None, "CUDA-only library"),
    C("=cupy-cuda12x>=12.2", "custom_cuda_extension", "removal", False, None, "CuPy has no Ascend backend"),
    C("=nvidia-ml-py>=12.535", "torch_cuda_api", "removal", False, None,
      "NVML bindings; no NPU equivalent (npu-smi / torch.npu.utilization)"),
    C("=triton==2.1.0", "triton_kernel_tuning", "replace", False, "triton-ascend==3.2.0",
      "stock Triton has no Ascend backend; only matters where the Triton kernels are used"),
])

E("qml_pyproject", "pyproject.toml", "explicit_replacement",
  "pyproject.toml of a QML lab package with cpu/gpu simulator extras", [
    C('"torch>=2.1,<2.2",', "import_torch_npu", "npu_only_addition", True, '"torch-npu==2.1.0.post10",',
      "torch-npu dependency (the torch range itself already admits 2.1.0)"),
    C('"qiskit-aer-gpu>=0.13",', "custom_cuda_extension", "replace", False, '"qiskit-aer>=0.13",',
      "CUDA build of Aer in the gpu extra"),
    C('"pennylane-lightning-gpu>=0.33",', "custom_cuda_extension", "removal", False, None,
      "cuStateVec-backed plugin"),
    C('"cuquantum-python-cu12>=23.10",', "custom_cuda_extension", "removal", False, None, "CUDA-only library"),
    C('"cupy-cuda12x>=12.2",', "custom_cuda_extension", "removal", False, None, "CuPy has no Ascend backend"),
    C('"triton>=2.1",', "triton_kernel_tuning", "replace", False, '"triton-ascend>=3.2",',
      "stock Triton has no Ascend backend"),
])
