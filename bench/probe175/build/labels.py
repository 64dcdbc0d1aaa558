# Labels for probe175: time-series forecasting / anomaly detection (CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit. See README.md for the policy.
ENTRIES = []
def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}
def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---------------------------------------------------------------- TSLib: run.py
E("tslib_run", "run.py", "device_branch_or_abstraction",
  "thuml/Time-Series-Library run.py (argparse entry point, --use_gpu/--gpu_type/--use_multi_gpu)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry point: registers the 'npu' device and torch.npu before Exp_* build the model (mandatory before torch_npu 2.5.1 autoload)"),
    C("parser.add_argument('--gpu_type', type=str, default='cuda'", "device_type", "replace", True,
      "parser.add_argument('--gpu_type', type=str, default='npu', help='gpu type')  # cuda, npu or mps",
      "scripts do not pass --gpu_type, so the default decides which branch _acquire_device() takes; 'cuda' builds a cuda:N device"),
    C("if torch.cuda.is_available() and args.use_gpu:", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and args.use_gpu:",
      "torch.cuda.is_available() is False on an Ascend host, so the run silently falls back to CPU/mps"),
    C("args.device = torch.device('cuda:{}'.format(args.gpu))", "device_type", "replace", True,
      "args.device = torch.device('npu:{}'.format(args.gpu))",
      "args.device is read by models that allocate with configs.device; left as cpu/cuda those tensors end up off the NPU (device mismatch or crash)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "add_branch", False,
      "elif args.gpu_type == 'npu': torch.npu.empty_cache()",
      "with gpu_type='npu' the cuda branch is skipped; an npu branch only frees cached NPU memory between --itr runs"),
    C("release cached blocks before exit", "torch_cuda_api", "add_branch", False,
      "elif args.gpu_type == 'npu': torch.npu.empty_cache()",
      "same as the training branch: cache release only, performance/memory hygiene"),
])

# ---------------------------------------------------------------- TSLib: exp/exp_basic.py
E("tslib_exp_basic", "exp/exp_basic.py", "device_branch_or_abstraction",
  "thuml/Time-Series-Library exp/exp_basic.py (_acquire_device with gpu_type cuda/mps)", [
    C("if self.args.use_gpu and self.args.gpu_type == 'cuda':", "device_type", "add_branch", True,
      "elif self.args.use_gpu and self.args.gpu_type == 'npu':",
      "no npu branch: gpu_type='npu' falls through to the CPU branch and the model trains on the host"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(', "env_var", "add_branch", False,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(self.args.gpu) if not self.args.use_multi_gpu else self.args.devices',
      "visibility mask only; the device index itself is chosen by torch.device below, and the Ascend runtime ignores CUDA_VISIBLE_DEVICES"),
    C("device = torch.device('cuda:{}'.format(self.args.gpu))", "device_type", "add_branch", True,
      "device = torch.device('npu:{}'.format(self.args.gpu))",
      "the device every batch and the model are moved to"),
])

# ---------------------------------------------------------------- TSLib: exp/exp_long_term_forecasting.py
E("tslib_exp_long_term", "exp/exp_long_term_forecasting.py", "device_branch_or_abstraction",
  "thuml/Time-Series-Library exp/exp_long_term_forecasting.py (use_amp autocast/GradScaler, DataParallel)", [
    C("model = nn.DataParallel(model, device_ids=self.args.device_ids)", "distributed_framework", "replace", True,
      "model = nn.parallel.DistributedDataParallel(model.to(self.device), device_ids=[self.args.local_rank])",
      "torch.nn.DataParallel is ✘ in Ascend's 2.7.1 list (its replicate/scatter path is CUDA-only; at best it degrades to one card); multi-NPU needs torchrun + DDP over hccl"),
    C("=with torch.cuda.amp.autocast():", "amp", "replace", True,
      "with torch.npu.amp.autocast():",
      "CUDA autocast is disabled with a warning on a host without CUDA, so --use_amp silently runs fp32"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler()",
      "CUDA GradScaler disables itself without CUDA; loss scaling silently off for the NPU fp16 run"),
    C("with torch.cuda.amp.autocast(dtype=torch.float16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(dtype=torch.float16):",
      "training forward: CUDA autocast silently disabled on NPU host"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "torch.cuda.synchronize() raises on a CPU-only torch build (Ascend hosts install CPU torch + torch_npu)"),
    C("torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      "epoch + 1, time.time() - epoch_time, torch.npu.max_memory_allocated() / 1024 ** 3))",
      "log only: CUDA allocator stats are never initialised on NPU, so the peak-memory figure silently reads 0"),
    C("self.model.load_state_dict(torch.load(os.path.join('./checkpoints/'", "tensor_to_device", "replace", False,
      "self.model.load_state_dict(torch.load(os.path.join('./checkpoints/' + setting, 'checkpoint.pth'), map_location=self.device))",
      "only breaks for --is_training 0 with a checkpoint produced on a CUDA machine (CUDA storages cannot be deserialised); NPU-trained checkpoints load fine"),
    C("with torch.cuda.amp.autocast():  # same precision as training", "amp", "replace", True,
      "with torch.npu.amp.autocast():  # same precision as training",
      "test forward under --use_amp: CUDA autocast silently disabled on NPU host"),
])

# ---------------------------------------------------------------- TSLib: exp/exp_anomaly_detection.py
E("tslib_exp_anomaly", "exp/exp_anomaly_detection.py", "device_branch_or_abstraction",
  "thuml/Time-Series-Library exp/exp_anomaly_detection.py (reconstruction energy, percentile threshold)", [
    C("model = nn.DataParallel(model, device_ids=self.args.device_ids)", "distributed_framework", "replace", True,
      "model = nn.parallel.DistributedDataParallel(model.to(self.device), device_ids=[self.args.local_rank])",
      "torch.nn.DataParallel is ✘ on Atlas A2/A3 in Ascend's 2.7.1 API list; --use_multi_gpu needs DDP over hccl"),
])

# ---------------------------------------------------------------- TSLib: utils/tools.py
E("tslib_utils_tools", "utils/tools.py", "explicit_replacement",
  "thuml/Time-Series-Library + cure-lab/LTSF-Linear utils/tools.py (EarlyStopping, test_params_flop, timing helpers)", [
    C("with torch.cuda.device(0):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(0):",
      "torch.cuda.device.__enter__ initialises CUDA and raises on a CPU-only torch build"),
    C("get_model_complexity_info(model.cuda(), x_shape", "tensor_to_device", "replace", True,
      "macs, params = get_model_complexity_info(model.npu(), x_shape, as_strings=True, print_per_layer_stat=True)",
      "Module.cuda() fails without CUDA; ptflops builds its dummy input on the parameters' device so .npu() is enough"),
    C("def measure_inference_speed(model, inputs, n_warmup=10, n_repeat=100, device='cuda'):", "device_type", "replace", True,
      "def measure_inference_speed(model, inputs, n_warmup=10, n_repeat=100, device='npu'):",
      "default device string; callers in the efficiency scripts rely on it"),
    C("if device.startswith('cuda'):", "device_type", "replace", True,
      "if device.startswith('npu'):",
      "an 'npu' device would take the perf_counter branch, which times asynchronous kernel launches without a sync: silently wrong latencies"),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "starter = torch.npu.Event(enable_timing=True)",
      "CUDA events cannot be created without CUDA; torch.npu.Event supports enable_timing/elapsed_time"),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "ender = torch.npu.Event(enable_timing=True)",
      "as above"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "raises on a CPU-only torch build"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if not torch.npu.is_available():",
      "silent no-op on NPU: memory logging just stops; nothing fails"),
    C("alloc = torch.cuda.memory_allocated() / 1024 ** 2", "torch_cuda_api", "replace", False,
      "alloc = torch.npu.memory_allocated() / 1024 ** 2",
      "logging only; unreachable until the guard above is ported, then reads 0 unless switched to torch.npu"),
    C("peak = torch.cuda.max_memory_allocated() / 1024 ** 2", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated() / 1024 ** 2",
      "logging only, as above"),
])

# ---------------------------------------------------------------- TSLib: layers/SelfAttention_Family.py
E("tslib_selfattn", "layers/SelfAttention_Family.py", "explicit_replacement",
  "thuml/Time-Series-Library layers/SelfAttention_Family.py (FullAttention + SDPA fast path, ProbAttention, Reformer, TSA)", [
    C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):",
      "attention_kernel", "replace", False,
      "with contextlib.nullcontext():  # NPU SDPA selects its fused kernel itself (add `import contextlib`)",
      "torch.backends.cuda.sdp_kernel is ✘ in Ascend's 2.7.1 list and in msFmkTransplt's unsupported list; it only steers CUDA backends, "
      "F.scaled_dot_product_attention itself is ✔ on NPU. Whether the context manager raises or is a silent no-op on NPU is unconfirmed"),
])

# ---------------------------------------------------------------- TSLib: models/TimesNet.py
E("tslib_timesnet", "models/TimesNet.py", "explicit_replacement",
  "thuml/Time-Series-Library models/TimesNet.py (FFT period finding + Inception 2D conv)", [
    C("frequency_list = abs(xf).mean(0).mean(-1)", "unsupported_op_workaround", "replace", False,
      "frequency_list = torch.view_as_real(xf).pow(2).sum(-1).sqrt().mean(0).mean(-1)",
      "abs() of the complex rfft output: Ascend's 2.7.1 list gives torch.abs dtypes without complex64 (view_as_real is ✔). "
      "Unconfirmed whether the NPU raises, falls back or just works; rewrite on real tensors to be safe"),
    C("return period, abs(xf).mean(-1)[:, top_list]", "unsupported_op_workaround", "replace", False,
      "return period, torch.view_as_real(xf).pow(2).sum(-1).sqrt().mean(-1)[:, top_list]",
      "same complex abs as above (amplitudes used as period weights); unconfirmed"),
])

# ---------------------------------------------------------------- TSLib: models/Mamba.py
E("tslib_mamba", "models/Mamba.py", "kernel_rewrite",
  "thuml/Time-Series-Library models/Mamba.py + S-Mamba bidirectional variate-token block (mamba_ssm CUDA kernels)", [
    C("=from mamba_ssm import Mamba", "custom_cuda_extension", "replace", True,
      "from layers.mamba_torch import Mamba  # pure-PyTorch selective scan, same constructor arguments",
      "mamba_ssm builds nvcc selective-scan/causal-conv1d kernels and cannot be installed on an Ascend host; "
      "needs a pure-torch (or Ascend C / triton-ascend) selective scan behind the same Mamba(d_model, d_state, d_conv, expand) signature"),
])

# ---------------------------------------------------------------- TSLib: scripts
E("tslib_script_etth1", "scripts/long_term_forecast/ETT_script/Autoformer_ETTh1.sh", "explicit_replacement",
  "thuml/Time-Series-Library scripts/long_term_forecast/ETT_script/*.sh (single-GPU sweeps over pred_len)", [
    C("=#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced or `import torch_npu` fails to load libascendcl/libhccl"),
    C("export CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0",
      "ignored by the Ascend runtime; harmless here because run.py uses --gpu 0 anyway, so only the visibility mask is lost"),
])

E("tslib_script_ecl_multi", "scripts/long_term_forecast/ECL_script/iTransformer_multi_gpu.sh", "explicit_replacement",
  "thuml/Time-Series-Library ECL multi-GPU launcher (--use_multi_gpu --devices on a shared box)", [
    C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before Python imports torch_npu"),
    C("export CUDA_VISIBLE_DEVICES=4,5,6,7", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=4,5,6,7",
      "Ascend runtime ignores CUDA_VISIBLE_DEVICES, so the job would land on devices 0-3 that the comment says are reserved"),
    C("python -u run.py \\", "distributed_framework", "replace", True,
      "torchrun --nproc_per_node 4 run.py \\",
      "--use_multi_gpu relies on nn.DataParallel (✘ on NPU); the DDP port needs one process per NPU"),
    C("nvidia-smi --query-gpu=index,memory.used --format=csv", "torch_cuda_api", "replace", False,
      "npu-smi info",
      "post-run memory report; nvidia-smi does not exist on an Ascend host (command not found, script exits 127)"),
])

# ---------------------------------------------------------------- TSLib: requirements.txt
E("tslib_requirements", "requirements.txt", "explicit_replacement",
  "thuml/Time-Series-Library requirements.txt (lab fork pinned to the cu118 wheel index, Mamba baselines)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "custom_cuda_extension", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; Ascend docs install CPU torch (x86: whl/cpu, aarch64: plain PyPI). On its own it only drags CUDA libraries in"),
    C("torch==2.1.2+cu118", "custom_cuda_extension", "replace", True,
      "torch==2.1.0",
      "+cu118 build has no aarch64 wheel, and torch_npu only exists for torch 2.1.0 in the 2.1 line (wheel version = torch version)"),
    C("=numpy==1.23.5", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post12",
      "the torch_npu pin (paired with torch 2.1.0 / CANN 8.1.RC1 per the compatibility table)"),
    C("=triton==2.1.0", "custom_cuda_extension", "removal", False, None,
      "only pulled in for mamba-ssm's Triton kernels; unused once mamba-ssm goes. Unconfirmed whether 2.1.0 even has an aarch64 wheel"),
    C("causal-conv1d>=1.2.0", "custom_cuda_extension", "removal", True, None,
      "builds CUDA kernels with nvcc at install time; pip install fails on an Ascend host"),
    C("mamba-ssm==1.2.0.post1", "custom_cuda_extension", "removal", True, None,
      "nvcc-built selective-scan kernels; cannot be installed without CUDA"),
    C("pynvml==11.5.0", "custom_cuda_extension", "removal", False, None,
      "NVML bindings used only by torch.cuda.utilization; installs fine but has nothing to talk to on NPU"),
])

# ---------------------------------------------------------------- TSLib: Dockerfile
E("tslib_dockerfile", "Dockerfile", "explicit_replacement",
  "Dockerfile of TSLib-style benchmark repos (nvidia/cuda devel base, cu118 torch, Mamba kernels compiled in-image)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "env_var", "replace", True,
      "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "needs a CANN toolkit base (driver mounted from the host); the CUDA image has neither CANN nor its set_env exports"),
    C("RUN pip install torch==2.1.2 --index-url https://download.pytorch.org/whl/cu118", "custom_cuda_extension", "replace", True,
      "RUN pip install torch==2.1.0 --index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel; torch_npu 2.1.0.postN needs torch==2.1.0 exactly and Ascend servers are usually aarch64"),
    C("&& pip install -r /tmp/req.txt", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install torch-npu==2.1.0.post12",
      "the grep above strips every ^torch line (torch-npu included), so torch_npu needs its own install step"),
    C('ENV TORCH_CUDA_ARCH_LIST="8.0;8.6;9.0"', "env_var", "removal", False, None,
      "nvcc arch list for the kernels below; meaningless without CUDA"),
    C("RUN pip install triton==2.1.0 && \\", "custom_cuda_extension", "removal", False, None,
      "Triton is only needed by mamba-ssm; upstream triton has no Ascend backend (triton-ascend is a separate package)"),
    C("pip install causal-conv1d==1.2.0.post2 --no-build-isolation && \\", "custom_cuda_extension", "removal", True, None,
      "nvcc build; the image build fails on a CANN base"),
    C("pip install mamba-ssm==1.2.0.post1 --no-build-isolation", "custom_cuda_extension", "removal", True, None,
      "nvcc build; the image build fails on a CANN base"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "nvidia-container-runtime hint; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES set at `docker run` time"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "nvidia-container-runtime hint, ignored on Ascend"),
    C("ENV LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH}", "env_var", "removal", False, None,
      "points at a CUDA install that is not there; CANN base image already exports its own library paths"),
    C("torch.version.cuda, torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "RUN python -c \"import torch, torch_npu; print(torch.__version__, torch_npu.__version__)\"",
      "build-time smoke test; prints None/False rather than failing, but no longer checks anything useful"),
])

# ---------------------------------------------------------------- Informer2020
E("informer_main", "main_informer.py", "explicit_replacement",
  "zhouhaoyi/Informer2020 main_informer.py (module-level argparse, use_gpu from torch.cuda.is_available)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry point; Exp_Basic builds an npu device after the port"),
    C("args.use_gpu = True if torch.cuda.is_available() and args.use_gpu else False", "torch_cuda_api", "replace", True,
      "args.use_gpu = True if torch.npu.is_available() and args.use_gpu else False",
      "False on an Ascend host: the whole experiment silently runs on CPU"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "CUDA never initialised, so this is a silent no-op; only frees cached NPU memory between --itr repeats once ported"),
])

E("informer_exp", "exp/exp_informer.py", "explicit_replacement",
  "zhouhaoyi/Informer2020 exp/exp_informer.py (_process_one_batch, use_amp, DataParallel)", [
    C("model = nn.DataParallel(model, device_ids=self.args.device_ids)", "distributed_framework", "replace", True,
      "model = nn.parallel.DistributedDataParallel(model.to(self.device), device_ids=[self.args.local_rank])",
      "nn.DataParallel ✘ on NPU; multi-card Informer needs DDP + torchrun"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler()",
      "CUDA GradScaler disables itself without CUDA: --use_amp silently trains without loss scaling"),
    C("with torch.cuda.amp.autocast():", "amp", "replace", True,
      "with torch.npu.amp.autocast():",
      "CUDA autocast is a warning + no-op on an NPU host; --use_amp silently runs fp32"),
])

# ---------------------------------------------------------------- Autoformer (original repo)
E("autoformer_autocorr", "layers/AutoCorrelation.py", "explicit_replacement",
  "thuml/Autoformer layers/AutoCorrelation.py (rfft/irfft period discovery, time-delay aggregation with .cuda() index)", [
    C("init_index = torch.arange(length).unsqueeze(0).unsqueeze(0).unsqueeze(0).repeat(batch, head, channel, 1).cuda()",
      "tensor_to_device", "replace", True,
      "init_index = torch.arange(length, device=values.device).unsqueeze(0).unsqueeze(0).unsqueeze(0).repeat(batch, head, channel, 1)",
      "runs on every vali/test forward (eval mode); .cuda() raises on a CPU-only torch + torch_npu install"),
    C("init_index = torch.arange(length).view(1, 1, 1, -1).repeat(batch, head, channel, 1).cuda()",
      "tensor_to_device", "replace", False,
      "init_index = torch.arange(length, device=values.device).view(1, 1, 1, -1).repeat(batch, head, channel, 1)",
      "time_delay_agg_full is never called from forward(); dead path, ported for consistency only"),
    C("res = q_fft * torch.conj(k_fft)", "unsupported_op_workaround", "replace", False,
      "res = torch.complex(q_fft.real * k_fft.real + q_fft.imag * k_fft.imag, q_fft.imag * k_fft.real - q_fft.real * k_fft.imag)",
      "complex64 multiply with a conj view: Ascend's 2.7.1 list gives torch.mul/torch.conj dtypes without complex64 "
      "(torch.complex ✔). Unconfirmed whether it fails on NPU; real/imag arithmetic avoids the question"),
])

# ---------------------------------------------------------------- FEDformer (original repo)
E("fedformer_fourier", "layers/FourierCorrelation.py", "explicit_replacement",
  "MAZiqing/FEDformer layers/FourierCorrelation.py (complex-valued weights, einsum on cfloat, frequency-mode sampling)", [
    C("xqk_ft = xqk_ft.tanh()", "unsupported_op_workaround", "replace", False,
      "xqk_ft = complex_tanh(xqk_ft)  # tanh on real/imag parts: (sinh2a + i sin2b) / (cosh2a + cos2b)",
      "complex tanh (default cross_activation='tanh'): torch.tanh dtypes in Ascend's 2.7.1 list exclude complex64; unconfirmed whether it errors"),
    C("xqk_ft = torch.softmax(abs(xqk_ft), dim=-1)", "unsupported_op_workaround", "replace", False,
      "xqk_ft = torch.softmax(torch.view_as_real(xqk_ft).pow(2).sum(-1).sqrt(), dim=-1)",
      "complex abs (only with cross_activation='softmax'); torch.abs dtypes exclude complex64 in Ascend's list; unconfirmed"),
])

E("fedformer_wavelet", "layers/MultiWaveletCorrelation.py", "explicit_replacement",
  "MAZiqing/FEDformer layers/MultiWaveletCorrelation.py (Legendre multiwavelet + sparse Fourier kernels on cfloat)", [
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", False,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "module-level leftover that nothing in the file uses (all allocations use x.device); resolves to cpu on NPU, harmless"),
    C("xqk_ft = xqk_ft.tanh()", "unsupported_op_workaround", "replace", False,
      "xqk_ft = complex_tanh(xqk_ft)",
      "complex tanh in the wavelet cross attention; same unconfirmed dtype gap as FourierCorrelation"),
    C("xqk_ft = torch.softmax(abs(xqk_ft), dim=-1)", "unsupported_op_workaround", "replace", False,
      "xqk_ft = torch.softmax(torch.view_as_real(xqk_ft).pow(2).sum(-1).sqrt(), dim=-1)",
      "complex abs in the softmax variant; unconfirmed"),
])

# ---------------------------------------------------------------- Anomaly-Transformer
E("anomtrans_solver", "solver.py", "explicit_replacement",
  "thuml/Anomaly-Transformer solver.py (minimax association-discrepancy training, energy-based thresholding)", [
    C('self.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'self.device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "resolves to cpu on an Ascend host: every batch is fed from the host and training silently runs on CPU"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "guard is False on NPU, so the model silently stays on CPU"),
    C("self.model.cuda()", "tensor_to_device", "replace", True,
      "self.model.npu()",
      "Module.cuda() raises without CUDA once the guard above admits the NPU"),
])

E("anomtrans_attn", "model/attn.py", "explicit_replacement",
  "thuml/Anomaly-Transformer model/attn.py (AnomalyAttention with a Gaussian prior over index distances)", [
    C("self.distances = torch.zeros((window_size, window_size)).cuda()", "tensor_to_device", "replace", True,
      "self.register_buffer('distances', torch.zeros((window_size, window_size)), persistent=False)",
      "built at model construction, before anything is on a device: .cuda() raises on NPU. As a buffer it follows model.npu(); "
      "filling it on the host also avoids win_size**2 single-element device writes"),
    C("prior = self.distances.unsqueeze(0).unsqueeze(0).repeat(sigma.shape[0], sigma.shape[1], 1, 1).cuda()",
      "tensor_to_device", "replace", True,
      "prior = self.distances.unsqueeze(0).unsqueeze(0).repeat(sigma.shape[0], sigma.shape[1], 1, 1).to(sigma.device)",
      ".cuda() on every forward"),
])

E("anomtrans_main", "main.py", "explicit_replacement",
  "thuml/Anomaly-Transformer main.py (argparse entry, cudnn.benchmark)", [
    C("from torch.backends import cudnn", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry point never imports torch directly (it arrives via utils.utils *); torch_npu must be imported before Solver builds npu tensors"),
])

E("anomtrans_script", "scripts/SMD.sh", "explicit_replacement",
  "thuml/Anomaly-Transformer scripts/SMD.sh (train + test on one pinned GPU)", [
    C("# Anomaly-Transformer: SMD", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for torch_npu"),
    C("export CUDA_VISIBLE_DEVICES=1", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=1",
      "solver.py always uses device 0 of what is visible; with the CUDA mask ignored the run moves from card 1 to card 0"),
])

# ---------------------------------------------------------------- GluonTS (PyTorch / Lightning) DeepAR
E("gluonts_deepar", "examples/train_deepar_electricity.py", "explicit_replacement",
  "awslabs/gluonts torch DeepAREstimator example (Lightning trainer_kwargs, PyTorchPredictor device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "script entry; registers torch.npu for the checks below and the npu device for the predictor"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "lazy no-op without CUDA; torch.manual_seed / seed_everything on the lines around it already seed the NPU generator, so nothing is lost"),
    C("use_gpu = args.gpus > 0 and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_gpu = args.gpus > 0 and torch.npu.is_available()",
      "False on an Ascend host: DeepAR silently trains on CPU"),
    C('precision = "bf16-mixed" if torch.cuda.is_bf16_supported() else "16-mixed"', "amp", "replace", True,
      'precision = "bf16-mixed" if torch.npu.is_bf16_supported() else "16-mixed"',
      "torch.cuda.is_bf16_supported() calls current_device() and raises on a CPU-only torch build"),
    C('"accelerator": "gpu",', "device_type", "replace", True,
      '"accelerator": NPUAccelerator(),  # small custom lightning Accelerator over torch.npu',
      "Lightning's 'gpu' accelerator means CUDA/MPS and raises 'No supported gpu backend found' on an NPU host. "
      "Lightning has no built-in NPU accelerator (not covered by the knowledge notes): register a custom one, or run under transfer_to_npu"),
    C('device = "cuda" if torch.cuda.is_available() and args.gpus > 0 else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() and args.gpus > 0 else "cpu"',
      "prediction/evaluation silently on CPU"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "memory log only; silent no-op on NPU"),
    C('logger.info("peak GPU memory: %.1f MB", torch.cuda.max_memory_allocated() / 2 ** 20)', "torch_cuda_api", "replace", False,
      'logger.info("peak NPU memory: %.1f MB", torch.npu.max_memory_allocated() / 2 ** 20)',
      "logging only"),
])

# ---------------------------------------------------------------- darts-style benchmark runner
E("darts_benchmark", "benchmarks/run_darts_models.py", "explicit_replacement",
  "unit8co/darts torch models driven through pl_trainer_kwargs (TFT / N-BEATS / GRU benchmark script)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "script entry"),
    C("if gpus > 0 and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if gpus > 0 and torch.npu.is_available():",
      "False on NPU: every darts model silently trains on CPU"),
    C('"accelerator": "gpu",', "device_type", "replace", True,
      '"accelerator": NPUAccelerator(),  # custom lightning Accelerator over torch.npu',
      "Lightning 'gpu' = CUDA/MPS; raises on an Ascend host. No built-in NPU accelerator in Lightning (outside the knowledge notes)"),
    C('"strategy": "ddp" if gpus > 1 else "auto",', "dist_backend", "replace", True,
      '"strategy": DDPStrategy(process_group_backend="hccl") if gpus > 1 else "auto",',
      "Lightning's DDP picks nccl only for cuda devices and falls back to gloo otherwise; gradients of NPU tensors need hccl"),
    C('series = TimeSeries.from_dataframe(df, time_col=time_col, value_cols=value_cols, freq="h")',
      "unsupported_op_workaround", "replace", False,
      'series = TimeSeries.from_dataframe(df, time_col=time_col, value_cols=value_cols, freq="h").astype(np.float32)',
      "darts keeps the CSV's float64 and trains the module in double precision; Ascend lists matmul/bmm/Linear for bf16/fp16/fp32 only and "
      "torch_npu warns 'Device do not support double dtype now, dtype cast replace with float'. Unconfirmed whether it fails or silently downcasts"),
    C("dropout=args.rnn_dropout,", "unsupported_op_workaround", "replace", False,
      "dropout=0.0,  # nn.GRU dropout argument not supported on NPU; add nn.Dropout between layers instead",
      "darts forwards this to nn.GRU(n_rnn_layers=2); Ascend's 2.7.1 list marks nn.GRU ✔ but 'dropout parameter not supported'. Unconfirmed whether it errors or is ignored"),
    C('map_location="cuda:0")', "tensor_to_device", "replace", True,
      'map_location="npu:0")',
      "torch.load with a cuda map_location raises on a host without CUDA"),
    C('"gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu",', "torch_cuda_api", "replace", False,
      '"gpu": torch.npu.get_device_name(0) if torch.npu.is_available() else "cpu",',
      "results table column only; records 'cpu' on NPU"),
])

# ---------------------------------------------------------------- Time-LLM (accelerate + DeepSpeed)
E("timellm_run_main", "run_main.py", "explicit_replacement",
  "KimMeen/Time-LLM run_main.py (accelerate Accelerator + DeepSpeedPlugin ZeRO-2, optional torch.cuda.amp)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry point launched by accelerate; accelerate (>=0.22) detects the NPU only once torch_npu is importable/imported"),
    C('os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:64"', "env_var", "replace", False,
      'os.environ["PYTORCH_NPU_ALLOC_CONF"] = "max_split_size_mb:64"',
      "caching-allocator tuning for the 7B backbone; the CUDA variable is silently ignored by the NPU allocator (memory behaviour only)"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler()",
      "--use_amp path: CUDA GradScaler disables itself on an NPU host"),
    C("with torch.cuda.amp.autocast():", "amp", "replace", True,
      "with torch.npu.amp.autocast():",
      "--use_amp path: CUDA autocast silently disabled on an NPU host"),
])

E("timellm_script", "scripts/TimeLLM_ETTh1.sh", "explicit_replacement",
  "KimMeen/Time-LLM scripts/TimeLLM_ETTh1.sh (accelerate launch --multi_gpu, 8 processes, NCCL tweaks)", [
    C("# Time-LLM on ETTh1 with a frozen LLaMA-7B backbone", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (HCCL, ACL libraries) for torch_npu"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "selects all eight cards, which is also what an unset mask gives; ignored on NPU but no behavioural difference"),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
      "NCCL workaround for a PCIe GPU box; HCCL does not read it and Ascend servers use HCCS/RoCE"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
      "NCCL-only; HCCL reads HCCL_* variables (HCCL_SOCKET_IFNAME / HCCL_IF_IP for the host NIC)"),
    C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None,
      "NCCL logging only; Ascend logging is ASCEND_GLOBAL_LOG_LEVEL / ASCEND_SLOG_PRINT_TO_STDOUT"),
])

# ---------------------------------------------------------------- PatchTST (self-supervised) src/basics.py
E("patchtst_basics", "src/basics.py", "device_branch_or_abstraction",
  "yuqinie98/PatchTST PatchTST_self_supervised/src/basics.py (get_device / get_available_cuda by utilisation, to_device)", [
    C("=if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available():",
      "get_device(): on NPU use_cuda is forced to False and the learner silently runs on CPU"),
    C("torch.cuda.set_device(device_id)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(device_id)",
      "raises on a CPU-only torch build"),
    C("return torch.device(torch.cuda.current_device()) if use_cuda else torch.device('cpu')", "device_type", "replace", True,
      "return torch.device('npu', torch.npu.current_device()) if use_cuda else torch.device('cpu')",
      "torch.device(int) means a CUDA ordinal; must name the npu type explicitly"),
    C("torch.cuda.set_device(device_ids[0])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(device_ids[0])",
      "set_device() is called by the pretrain/finetune scripts before building the learner"),
    C("use_cuda = use_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = use_cuda and torch.npu.is_available()",
      "default_device() is what to_device() uses for every batch: silently CPU on NPU"),
    C("return torch.device('cuda', torch.cuda.current_device()) if use_cuda else torch.device('cpu')", "device_type", "replace", True,
      "return torch.device('npu', torch.npu.current_device()) if use_cuda else torch.device('cpu')",
      "cuda device type"),
    C("if not torch.cuda.is_available(): return", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available(): return",
      "returns None on NPU and set_device() then fails on None[0]"),
    C("for device in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", True,
      "for device in range(torch.npu.device_count()):",
      "0 devices on NPU -> empty list -> IndexError in set_device()/get_device()"),
    C("if torch.cuda.utilization(device) < usage: device_ids.append(device)", "torch_cuda_api", "replace", True,
      "if torch.npu.utilization(device) < usage: device_ids.append(device)",
      "torch.cuda.utilization goes through pynvml; torch.npu.utilization is the NPU equivalent (in torch_npu.npu.__all__)"),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "removal", False, None,
      "DataParallel block: on NPU the count is 0, the branch is skipped and the model goes to one device, which is what a port wants (DataParallel is ✘); delete the block rather than port it"),
    C("print(f\"Let's use {torch.cuda.device_count()} GPUs!\")", "torch_cuda_api", "removal", False, None,
      "part of the dead DataParallel block"),
    C("model = nn.DataParallel(model)", "distributed_framework", "removal", False, None,
      "unreachable on NPU (see above) and unsupported there anyway"),
    C("if not torch.cuda.is_available() or not torch.cuda.is_initialized():", "torch_cuda_api", "replace", False,
      "if not torch.npu.is_available() or not torch.npu.is_initialized():",
      "epoch-log memory summary; prints 'cpu' on NPU, nothing breaks"),
    C("alloc = torch.cuda.memory_allocated(device)", "torch_cuda_api", "replace", False,
      "alloc = torch.npu.memory_allocated(device)",
      "logging only"),
    C("reserved = torch.cuda.memory_reserved(device)", "torch_cuda_api", "replace", False,
      "reserved = torch.npu.memory_reserved(device)",
      "logging only"),
])

# ---------------------------------------------------------------- PatchTST DDP pretraining (fork)
E("patchtst_pretrain_ddp", "patchtst_pretrain_ddp.py", "explicit_replacement",
  "PatchTST_self_supervised patchtst_pretrain.py as forked for torchrun/DDP (nccl, apex FusedAdam, autocast, torch.compile)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry point"),
    C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
      'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
      "watchdog behaviour only; HCCL reads its own variable (default already 1 per the MindCluster docs)"),
    C('dist.init_process_group(backend="nccl", init_method="env://")', "dist_backend", "replace", True,
      'dist.init_process_group(backend="hccl", init_method="env://")',
      "NCCL is not available on Ascend; collectives on NPU tensors need hccl"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)",
      "raises on a CPU-only torch build"),
    C('device = torch.device("cuda", local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", local_rank)',
      "per-rank device"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "non-torchrun path silently runs on CPU"),
    C('if dist.get_backend() == "nccl":', "dist_backend", "replace", False,
      'if dist.get_backend() == "hccl":',
      "backend-string comparison (transfer_to_npu does not rewrite these); under hccl the plain dist.barrier() branch runs, which is fine"),
    C("dist.barrier(device_ids=[torch.cuda.current_device()])", "torch_cuda_api", "replace", False,
      "dist.barrier(device_ids=[torch.npu.current_device()])",
      "only reached if the comparison above is ported to 'hccl'"),
    C("pin_memory=True, persistent_workers=args.num_workers > 0)", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu', persistent_workers=args.num_workers > 0)",
      "the DataLoader pins only when torch.cuda.is_available() unless pin_memory_device is given: pinning silently off, "
      "so the non_blocking H2D copies become synchronous (performance)"),
    C("num_workers=args.num_workers, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu')",
      "same for the validation loader"),
    C("if args.compile and torch.cuda.get_device_capability()[0] >= 7:", "device_capability_check", "replace", True,
      "if args.compile:",
      "raises on a CPU-only torch build; torch.npu.get_device_capability() returns None by default (TORCH_NPU_DEVICE_CAPABILITY), so [0] would fail too"),
    C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", False,
      "model = model  # eager on NPU: max-autotune relies on Triton GPU autotuning + CUDA graphs",
      "mode='max-autotune' means Triton autotuning and CUDA graphs; Ascend's list gives backend='npugraphs' (inference-only graphs) and "
      "Inductor on NPU only from torch_npu 2.6. Unconfirmed whether the unchanged call errors or falls back"),
    C("optimizer = FusedAdam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay, adam_w_mode=True)",
      "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)",
      "guarded by the apex import: without apex it is never reached, but with Ascend's patched apex installed the import can succeed and "
      "FusedAdam then fails for lack of amp_C (not available on NPU); NpuFusedAdamW is the fused counterpart"),
    C("amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16", "amp", "replace", True,
      "amp_dtype = torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
      "is_bf16_supported() calls current_device() and raises on a CPU-only torch build"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp and amp_dtype == torch.float16)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp and amp_dtype == torch.float16)",
      "CUDA GradScaler disables itself without CUDA: fp16 runs would silently lose loss scaling"),
    C('with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=args.amp):', "amp", "replace", True,
      'with torch.autocast(device_type="npu", dtype=amp_dtype, enabled=args.amp):',
      "device_type='cuda' autocast is disabled with a warning on an NPU host: --amp silently trains in fp32"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device and raises on a CPU-only torch build"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "raises on a CPU-only torch build (needed for the epoch timing)"),
    C("peak = torch.cuda.max_memory_allocated() / 2 ** 30", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated() / 2 ** 30",
      "log only; reads 0 on NPU"),
])

# ---------------------------------------------------------------- streaming anomaly scorer (CUDA graphs)
E("serve_online_detector", "serve/online_detector.py", "explicit_replacement",
  "production-style streaming scorer around TSLib anomaly models (CUDA graph capture, side streams, pinned staging, NVTX)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry point; also needed for torch_npu.npu.mstx below"),
    C('DEVICE = os.environ.get("DETECTOR_DEVICE", "cuda:0")', "device_type", "replace", True,
      'DEVICE = os.environ.get("DETECTOR_DEVICE", "npu:0")',
      "default device string used for every allocation and map_location"),
    C("major, minor = torch.cuda.get_device_capability(device)", "device_capability_check", "replace", True,
      "major, minor = (8, 0) if torch.npu.is_bf16_supported() else (7, 0)",
      "raises on a CPU-only torch build; torch.npu.get_device_capability() returns None unless TORCH_NPU_DEVICE_CAPABILITY is set"),
    C("total = torch.cuda.get_device_properties(0).total_memory", "torch_cuda_api", "replace", True,
      "total = torch.npu.get_device_properties(0).total_memory",
      "total_memory is one of the properties torch.npu does report"),
    C("self.host_buf = torch.empty((batch, win, channels), dtype=torch.float32).pin_memory()", "pin_memory", "replace", True,
      "self.host_buf = torch.empty((batch, win, channels), dtype=torch.float32).pin_memory(device='npu')",
      "on torch 2.1 Tensor.pin_memory() uses the CUDA host allocator and raises on a CPU-only build "
      "(newer torch picks the current accelerator; not confirmed for torch_npu)"),
    C("self.copy_stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True,
      "self.copy_stream = torch.npu.Stream()",
      "CUDA stream construction fails without CUDA"),
    C('with torch.autocast(device_type="cuda", dtype=self.dtype):', "amp", "replace", True,
      'with torch.autocast(device_type="npu", dtype=self.dtype):',
      "cuda autocast is disabled on an NPU host: the graph would be captured in fp32"),
    C("s = torch.cuda.Stream()", "torch_cuda_api", "replace", True,
      "s = torch.npu.Stream()",
      "warm-up side stream before capture"),
    C("s.wait_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "s.wait_stream(torch.npu.current_stream())",
      "CUDA current stream"),
    C("with torch.cuda.stream(s), torch.no_grad():", "torch_cuda_api", "replace", True,
      "with torch.npu.stream(s), torch.no_grad():",
      "CUDA stream context"),
    C("torch.cuda.current_stream().wait_stream(s)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(s)",
      "CUDA current stream"),
    C("self.graph = torch.cuda.CUDAGraph()", "torch_cuda_api", "replace", True,
      "self.graph = torch.npu.NPUGraph()",
      "CUDAGraph -> NPUGraph (Ascend list: supported for inference only, which this is)"),
    C("with torch.cuda.graph(self.graph), torch.no_grad():", "torch_cuda_api", "replace", True,
      "with torch.npu.graph(self.graph), torch.no_grad():",
      "graph capture context"),
    C("with torch.cuda.stream(self.copy_stream):", "torch_cuda_api", "replace", True,
      "with torch.npu.stream(self.copy_stream):",
      "H2D copy on the side stream"),
    C("torch.cuda.current_stream().wait_stream(self.copy_stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(self.copy_stream)",
      "stream ordering before replay"),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_evt = torch.npu.Event(enable_timing=True)",
      "latency metering events"),
    C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_evt = torch.npu.Event(enable_timing=True)",
      "latency metering events"),
    C('torch.cuda.nvtx.range_push("detector.score")', "torch_cuda_api", "replace", True,
      'rid = torch_npu.npu.mstx.range_start("detector.score")',
      "torch.cuda.nvtx is not redirected by torch_npu and needs a CUDA build; mstx is the Ascend marker API"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "raises on a CPU-only torch build"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True,
      "torch_npu.npu.mstx.range_end(rid)",
      "closes the mstx range opened above"),
    C('model = torch.compile(model, mode="reduce-overhead", fullgraph=False)', "compile_mode", "replace", False,
      'model = torch.compile(model, backend="npugraphs", fullgraph=False)',
      "reduce-overhead = Inductor + CUDA graphs; Ascend's list documents backend='npugraphs' as the cudagraphs equivalent. "
      "Only behind --compile; unconfirmed whether the unchanged mode errors or degrades on NPU"),
])

# ---------------------------------------------------------------- conda environment (GluonTS / darts notebooks)
E("tsf_environment", "environment.yml", "explicit_replacement",
  "conda environment.yml of probabilistic-forecasting repos (pytorch + pytorch-cuda from the pytorch/nvidia channels)", [
    C("=- nvidia", "custom_cuda_extension", "removal", False, None,
      "channel only needed for pytorch-cuda / CUDA runtime packages"),
    C("=- pytorch=2.1.2", "custom_cuda_extension", "replace", True,
      "- torch==2.1.0  (moved under pip:, CPU wheel)",
      "the conda pytorch build is CUDA-flavoured and 2.1.2; torch_npu wheels pair with torch 2.1.0 exactly and install from pip"),
    C("=- pytorch-cuda=12.1", "custom_cuda_extension", "removal", True, None,
      "CUDA runtime meta-package; no aarch64 build, so the env does not solve on a typical Ascend server"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True,
      "- torch-npu==2.1.0.post12",
      "the torch_npu pin (pip section)"),
    C("nvidia-ml-py==12.535.133", "custom_cuda_extension", "removal", False, None,
      "NVML bindings, nothing to query on an Ascend host (npu-smi / torch.npu.utilization instead)"),
])

# ---------------------------------------------------------------- TSLib: models/DLinear.py (no change needed)
E("tslib_dlinear", "models/DLinear.py", "device_branch_or_abstraction",
  "thuml/Time-Series-Library models/DLinear.py (series decomposition + per-channel linear heads); device-agnostic, no edits", [
])

# ---------------------------------------------------------------- TSLib: exp/exp_short_term_forecasting.py
E("tslib_exp_short_term", "exp/exp_short_term_forecasting.py", "device_branch_or_abstraction",
  "thuml/Time-Series-Library exp/exp_short_term_forecasting.py (M4, chunked validation on host)", [
    C("model = nn.DataParallel(model, device_ids=self.args.device_ids)", "distributed_framework", "replace", True,
      "model = nn.parallel.DistributedDataParallel(model.to(self.device), device_ids=[self.args.local_rank])",
      "nn.DataParallel ✘ on NPU"),
    C("map_location='cuda:{}'.format(self.args.gpu)))", "tensor_to_device", "replace", True,
      "map_location=self.device))",
      "--is_training 0 path: torch.load with a cuda map_location raises on a host without CUDA"),
])

# ---------------------------------------------------------------- LightningCLI YAML config
E("lightning_config", "configs/itransformer_ecl.yaml", "explicit_replacement",
  "LightningCLI config of a Lightning port of TSLib models (DDPStrategy, 16-mixed, fused AdamW flag)", [
    C("accelerator: gpu", "device_type", "replace", True,
      "accelerator: lightning_npu.NPUAccelerator  # class_path of a custom Accelerator over torch.npu",
      "'gpu' resolves to CUDA/MPS in Lightning and fails on an Ascend host; Lightning ships no NPU accelerator (outside the knowledge notes)"),
    C("process_group_backend: nccl", "dist_backend", "replace", True,
      "process_group_backend: hccl",
      "explicit nccl process group; NCCL is unavailable on Ascend"),
])
