"""Labels for probe38 (hand-written synthetic upstream files; see ../README.md).

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

IMP = "import torch_npu"
IMP_ENTRY = "entry script: torch.npu.* / the 'npu' device and hccl need torch_npu loaded (explicit import recommended even with autoload)"
IMP_MOD = "module calls torch.npu.* after the port; explicit import keeps it usable outside the entry script"
IMP_LIB = ("library module whose port only uses 'npu' device strings; the entry script already loads torch_npu, "
           "explicit import here is optional")

# ----------------------------------------------------------------------------------------------- Opacus
E("opacus_grad_sample_module", "opacus/grad_sample/grad_sample_module.py", "device_branch_or_abstraction",
  "pytorch/opacus grad_sample/grad_sample_module.py (hooks-based GradSampleModule; device-agnostic)", [])

E("opacus_functorch", "opacus/grad_sample/functorch.py", "explicit_replacement",
  "pytorch/opacus grad_sample/functorch.py (functional_call + grad + vmap per-sample grads)", [
    C("from torch.func import functional_call, grad, vmap", "unsupported_op_workaround", R, True,
      "from torch.func import functional_call, grad; from torch import vmap",
      "torch.func.vmap is ✘ on Atlas A2/A3 in Ascend's 2.7.1 API list and in msFmkTransplt's unsupported list "
      "(torch.vmap, the same transform, is ✔); this sampler is the fallback for every layer without a hand-written one"),
])

E("opacus_privacy_engine", "opacus/privacy_engine.py", "explicit_replacement",
  "pytorch/opacus privacy_engine.py (secure_mode with torchcsprng)", [
    C('self.secure_rng = csprng.create_random_device_generator("/dev/urandom")', "custom_cuda_extension", R, False,
      'self.secure_rng = torch.Generator(device="npu").manual_seed(int.from_bytes(os.urandom(8), "little"))',
      "unconfirmed: torchcsprng ships CPU/CUDA kernels only; drawing noise for NPU tensors with its generator is "
      "expected to fail (secure_mode only). The replacement is not a CSPRNG - needs a security review"),
])

E("opacus_cifar10", "examples/cifar10.py", "explicit_replacement",
  "pytorch/opacus examples/cifar10.py (DPDDP, Slurm/env:// setup, int device index)", [
    C("=import torch", "import_torch_npu", A, True, IMP, IMP_ENTRY),
    C("if not torch.cuda.is_available():", "torch_cuda_api", R, True, "if not torch.npu.is_available():",
      "is False on an NPU host: setup() raises NotImplementedError before training"),
    C("from torch.func import grad_and_value, vmap", "unsupported_op_workaround", R, False,
      "from torch.func import grad_and_value; from torch import vmap",
      "torch.func.vmap ✘ on A2/A3 in Ascend's list; only used with --grad_sample_mode no_op"),
    C("=device = local_rank", "device_type", R, True, 'device = torch.device("npu", local_rank)',
      "an int device means CUDA: every images.to(device) / target.to(device) below would target cuda:N"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)",
      "needs a CUDA build/driver"),
    C("=model = model.cuda()", "tensor_to_device", R, True, "model = model.to(device)", ".cuda() fails without CUDA"),
    C('"--device", type=str, default="cuda"', "device_type", R, False,
      'parser.add_argument("--device", type=str, default="npu", help="Device on which to run the code.")',
      "only compared with 'cpu' here, so 'cuda' still works; renamed for clarity"),
    C('"--dist_backend", type=str, default="gloo"', "dist_backend", R, True,
      'parser.add_argument("--dist_backend", type=str, default="hccl", help="Choose the backend for torch distributed from: gloo, hccl, mpi")',
      "DPDDP/DDP all-reduce NPU gradients: gloo only handles CPU (and CUDA) tensors, NPU collectives go through hccl"),
])

E("opacus_char_lstm", "examples/char-lstm-classification.py", "explicit_replacement",
  "pytorch/opacus examples/char-lstm-classification.py (DPLSTM name classifier, packed sequences)", [
    C("=import torch", "import_torch_npu", A, True, IMP, IMP_ENTRY),
    C('parser.add_argument("--device", type=str, default="cuda"', "device_type", R, True,
      'parser.add_argument("--device", type=str, default="npu", help="NPU ID for this process")',
      "default feeds torch.device(args.device)"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(args.seed)",
      "lazily queued without CUDA, harmless; torch.manual_seed already seeds the NPU generator"),
    C("packed = pack_padded_sequence(", "unsupported_op_workaround", R, True,
      "packed = x  # padded batch straight into DPLSTM; gather at lengths-1 below",
      "torch.nn.utils.rnn.pack_padded_sequence is ✘ on A2/A3 and in msFmkTransplt's unsupported list; right padding + "
      "gathering the last valid step gives the same logits for a unidirectional LSTM"),
    C("x, _ = pad_packed_sequence(packed_out, batch_first=True)", "unsupported_op_workaround", R, True,
      "x = packed_out", "pad_packed_sequence is ✘ as well; the output is already padded"),
])

E("opacus_benchmark_layer", "benchmarks/benchmark_layer.py", "explicit_replacement",
  "pytorch/opacus benchmarks/benchmark_layer.py (per-layer runtime / peak-memory benchmark)", [
    C("=import torch", "import_torch_npu", A, True, IMP, IMP_ENTRY),
    C("prev_max_memory = torch.cuda.max_memory_allocated(device)", "torch_cuda_api", R, True,
      "prev_max_memory = torch.npu.max_memory_allocated(device)", "CUDA allocator not initialised: silently 0"),
    C("prev_allocated_memory = torch.cuda.memory_allocated(device)", "torch_cuda_api", R, True,
      "prev_allocated_memory = torch.npu.memory_allocated(device)", "silently 0 on an NPU host"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", R, True,
      "torch.npu.reset_peak_memory_stats(device)", "needs CUDA (device index check / lazy init)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "no-op without CUDA; the NPU cache is not released"),
    C("torch.cuda.synchronize()  # drain the warm-up work", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # drain the warm-up work", "needs CUDA; also the NPU queue must be drained before timing"),
    C("start_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start_event = torch.npu.Event(enable_timing=True)", "CUDA events cannot record on an NPU host"),
    C("end_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "end_event = torch.npu.Event(enable_timing=True)", "as above"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "needs CUDA"),
    C("peak = torch.cuda.max_memory_allocated(self.device)", "torch_cuda_api", R, True,
      "peak = torch.npu.max_memory_allocated(self.device)", "silently 0: the reported peak memory would be wrong"),
    C('device = torch.device("cuda:0" if not args.cpu else "cpu")', "device_type", R, True,
      'device = torch.device("npu:0" if not args.cpu else "cpu")', "hard-coded CUDA device"),
    C("torch.cuda.get_device_name(0)", "torch_cuda_api", R, True,
      'logger.info(f"Benchmarking on {torch.npu.get_device_name(0)}")', "raises without CUDA"),
    C("torch.cuda.empty_cache()  # release this config's blocks", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # release this config's blocks", "no-op without CUDA"),
])

E("ghost_clip_autograd", "private_transformers/ghost_clipping.py", "device_branch_or_abstraction",
  "lxuechen/private-transformers-style ghost clipping as a custom autograd.Function over nn.Linear", [
    C("=import torch", "import_torch_npu", A, False, IMP, IMP_LIB),
    C("return A.is_cuda and T * T <= d_in * out_features", "device_type", R, False,
      'return A.device.type in ("cuda", "npu") and T * T <= d_in * out_features',
      "is_cuda is False for NPU tensors: always instantiates per-example grads (correct, but more memory and slower)"),
    C("@torch.cuda.amp.custom_fwd", "amp", R, False, '@torch.amp.custom_fwd(device_type="npu")',
      "no cast_inputs, so only the recorded autocast state differs; harmless but CUDA-specific (and deprecated)"),
    C("@torch.cuda.amp.custom_bwd", "amp", R, False, '@torch.amp.custom_bwd(device_type="npu")',
      "pairs with custom_fwd; harmless"),
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", R, True,
      'with torch.autocast(device_type="npu", enabled=False):',
      "disables CUDA autocast only: under NPU autocast the T x T Gram bmm runs in fp16 and the per-example norms "
      "overflow (wrong clipping)"),
])

E("flashdp_triton", "flashdp/ops/dp_linear_triton.py", "kernel_rewrite",
  "FlashDP-style fused per-sample-norm + clipped-accumulate Triton kernels for the DP linear backward", [
    C("=import torch", "import_torch_npu", A, True, IMP, IMP_MOD),
    C("num_warps=warps, num_stages=stages", "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK_O": bo, "BLOCK_I": bi, "BLOCK_T": bt})',
      "unconfirmed: warp/stage counts are GPU tuning knobs; triton-ascend tiles differ (needs re-tuning)"),
    C('cache_modifier=".cg"', "triton_kernel_tuning", R, False,
      "x = tl.load(x_ptrs, mask=(t[:, None] < T) & (offs_i[None, :] < I), other=0.0)",
      "unconfirmed: PTX cache modifier; triton-ascend support not documented"),
    C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", R, True,
      "major = 0  # no SM capability on NPU; keep exact fp32 dot",
      "get_device_capability returns None on NPU (knowledge §2.8) / raises without CUDA"),
    C("sm_count = torch.cuda.get_device_properties(device).multi_processor_count", "device_capability_check", R, True,
      "sm_count = torch.npu.get_device_properties(device).cube_core_num",
      "NPU device properties have no multi_processor_count (only name, total_memory, L2_cache_size, cube/vector core num)"),
    C("with torch.cuda.device(x.device):", "torch_cuda_api", R, True, "with torch.npu.device(x.device):",
      "torch.cuda.device rejects an npu device"),
    C("num_warps=8 if tile >= 128 else 4,", "triton_kernel_tuning", R, False, "num_warps=4,",
      "unconfirmed: GPU warp tuning"),
    C('x = torch.randn(B, T, I, device="cuda"', "device_type", R, True,
      'x = torch.randn(B, T, I, device="npu", dtype=torch.bfloat16)', "hard-coded CUDA device (self-test)"),
    C('dy = torch.randn(B, T, O, device="cuda"', "device_type", R, True,
      'dy = torch.randn(B, T, O, device="npu", dtype=torch.bfloat16)', "hard-coded CUDA device (self-test)"),
])

E("dp_bert_sst2", "examples/dp_bert_sst2.py", "explicit_replacement",
  "Opacus BERT/SST-2 tutorial as a script (frozen bottom layers, BatchMemoryManager)", [
    C("=import torch", "import_torch_npu", A, True, IMP, IMP_ENTRY),
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():",
      "only guards seeding; torch.manual_seed already seeds the NPU generator"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "not reached on an NPU host unchanged"),
    C('device = torch.device(f"cuda:{args.gpu}")', "device_type", R, True, 'device = torch.device(f"npu:{args.gpu}")',
      "hard-coded CUDA device"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)", "needs CUDA"),
    C("mem_gb = torch.cuda.max_memory_allocated(device) / 2**30", "torch_cuda_api", R, True,
      "mem_gb = torch.npu.max_memory_allocated(device) / 2**30", "silently 0 on an NPU host (wrong log)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "no-op without CUDA"),
])

E("dp_llama_lora", "scripts/dp_finetune_llama_lora.py", "explicit_replacement",
  "DP-LoRA Llama fine-tuning with Opacus ghost clipping, PEFT and torchrun (dp-transformers / private LLM recipes)", [
    C("=import torch", "import_torch_npu", A, True, IMP, IMP_ENTRY),
    C("x_hat = (x.to(torch.float32) * torch.rsqrt(", "npu_fused_op", R, False,
      "x_hat = torch_npu.npu_rms_norm(x, torch.ones_like(layer.weight), layer.variance_epsilon)[0].to(backprops.dtype)",
      "performance: fused RMSNorm (returns y, rstd); only used with --train_norms"),
    C('dist.init_process_group(backend="nccl")', "dist_backend", R, True, 'dist.init_process_group(backend="hccl")',
      "NCCL does not exist on Ascend"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)", "needs CUDA"),
    C("amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16", "torch_cuda_api", R, True,
      "amp_dtype = torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
      "answers for CUDA: raises or returns False on an NPU host, silently picking fp16 without a loss scaler"),
    C('attn_implementation="flash_attention_2",', "attention_kernel", R, True, 'attn_implementation="sdpa",',
      "flash-attn cannot be installed on NPU; SDPA dispatches to the NPU fused attention (transformers PR #36383)"),
    C('device_map={"": f"cuda:{local_rank}"},', "device_type", R, True, 'device_map={"": f"npu:{local_rank}"},',
      "hard-coded CUDA device map"),
    C("batch = {k: v.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "batch = {k: v.npu(non_blocking=True) for k, v in batch.items()}", ".cuda() fails without CUDA"),
    C('with torch.autocast(device_type="cuda", dtype=amp_dtype):', "amp", R, True,
      'with torch.autocast(device_type="npu", dtype=amp_dtype):',
      "CUDA autocast is inactive for NPU tensors: the fp32 LoRA adapters would run unautocast"),
    C("mem = torch.cuda.max_memory_reserved() / 2**30", "torch_cuda_api", R, True,
      "mem = torch.npu.max_memory_reserved() / 2**30", "silently 0 on an NPU host (wrong log)"),
])

# ----------------------------------------------------------------------------------------------- Flower
E("flower_quickstart_client", "examples/quickstart-pytorch/client.py", "explicit_replacement",
  "adap/flower examples/quickstart-pytorch/client.py (NumPyClient + ClientApp)", [
    C("=import torch", "import_torch_npu", A, True, IMP, IMP_ENTRY),
    C('DEVICE = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'DEVICE = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "silently trains on the CPU of an NPU host"),
])

E("flower_simulation", "examples/simulation-pytorch/sim.py", "explicit_replacement",
  "adap/flower examples/simulation-pytorch/sim.py (start_simulation with Ray client_resources)", [
    C("=import torch", "import_torch_npu", A, True, IMP, IMP_ENTRY),
    C('DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'DEVICE = torch.device("npu" if torch.npu.is_available() else "cpu")', "server-side evaluation silently on CPU"),
    C('self.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'self.device = torch.device("npu:0" if torch.npu.is_available() else "cpu")', "virtual clients silently on CPU"),
    C('model = torch.compile(model, mode="reduce-overhead")', "compile_mode", R, False,
      'model = torch.compile(model, backend="npugraphs")',
      "unconfirmed: reduce-overhead means CUDA graphs; npugraphs is the NPU counterpart (--compile_eval only)"),
    C('"num_gpus": args.num_gpus,', "distributed_framework", R, False, '"resources": {"NPU": args.num_gpus},',
      "unconfirmed: Ray's GPU resource pins CUDA_VISIBLE_DEVICES per actor; Ascend NPUs are a separate Ray resource"),
    C('ray_init_args={"include_dashboard": False, "num_gpus": torch.cuda.device_count()},', "torch_cuda_api", R, True,
      'ray_init_args={"include_dashboard": False, "resources": {"NPU": torch.npu.device_count()}},',
      "torch.cuda.device_count() is 0 on an NPU host: Ray starts without accelerators and the 0.25-GPU client actors "
      "are never scheduled (simulation hangs)"),
])

E("flower_dp_strategy", "baselines/fedprox/fedprox/strategy.py", "device_branch_or_abstraction",
  "adap/flower baselines/fedprox strategy + central-DP fixed clipping on NumPy updates (no torch device)", [])

E("flower_hf_client", "examples/quickstart-huggingface/client.py", "explicit_replacement",
  "adap/flower examples/quickstart-huggingface/client.py (DistilBERT/IMDB, with AMP added)", [
    C("=import torch", "import_torch_npu", A, True, IMP, IMP_ENTRY),
    C('DEVICE = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'DEVICE = torch.device("npu:0" if torch.npu.is_available() else "cpu")', "silently on CPU"),
    C("pin_memory=torch.cuda.is_available(),", "pin_memory", R, False, "pin_memory=torch.npu.is_available(),",
      "performance only: no pinned host buffers on an NPU host (benefit under torch_npu unconfirmed)"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=use_amp)", "amp", R, True,
      'scaler = torch.amp.GradScaler("npu", enabled=use_amp)', "CUDA GradScaler does not scale NPU losses"),
    C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", R, True,
      'with torch.autocast(device_type="npu", enabled=use_amp):', "CUDA autocast inactive for NPU tensors"),
    C('with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):', "amp", R, True,
      'with torch.no_grad(), torch.autocast("npu", dtype=torch.float16):', "CUDA autocast inactive for NPU tensors"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "no-op without CUDA"),
])

E("flower_app_pyproject", "pyproject.toml", "explicit_replacement",
  "Flower app pyproject.toml (flwr new template: deps, run config, simulation federations with GPU resources)", [
    C('"torch==2.2.1",', "import_torch_npu", R, True, '"torch==2.2.0",',
      "no torch_npu wheel exists for torch 2.2.1 (2.2.0 only; wheel version must equal the torch version)"),
    C('"torchvision==0.17.1",', "import_torch_npu", R, True, '"torchvision==0.17.0",',
      "torchvision 0.17.1 pins torch 2.2.1; follows the torch pin"),
    C('"opacus==1.4.1",', "import_torch_npu", A, True, '"torch-npu==2.2.0",', "add the torch_npu package"),
    C('"pynvml>=11.5.0",', "torch_cuda_api", X, False, None,
      "NVML has no Ascend counterpart; installs fine, only code calling nvmlInit breaks"),
    C('device = "cuda"', "device_type", R, True, 'device = "npu"', "ClientApp builds torch.device(run_config['device'])"),
    C("options.backend.client-resources.num-gpus = 0.25", "distributed_framework", R, False,
      "options.backend.client-resources.num-gpus = 0.0",
      "unconfirmed: Ray GPU resources do not map to Ascend NPUs"),
    C("options.backend.init-args.num-gpus = 4", "distributed_framework", R, False,
      "options.backend.init-args.num-gpus = 0", "unconfirmed: as above"),
])

E("flower_supernode_dockerfile", "docker/Dockerfile.supernode-gpu", "explicit_replacement",
  "Flower SuperNode/ClientApp Dockerfile on an nvidia/cuda base with cu121 torch wheels", [
    C("ARG CUDA_VERSION=12.1.1", "torch_cuda_api", R, False, "ARG CANN_VERSION=8.0.0",
      "only feeds the base image tag"),
    C("FROM nvidia/cuda:", "torch_cuda_api", R, True,
      "FROM ascendai/cann:${CANN_VERSION}-910b-ubuntu${UBUNTU_VERSION}-py3.10 AS base",
      "no CANN toolkit in a CUDA image: torch_npu cannot load (base image name is a plausible choice, not verified)"),
    C("--index-url https://download.pytorch.org/whl/cu121", "torch_cuda_api", R, True,
      "--index-url https://download.pytorch.org/whl/cpu",
      "torch_npu pairs with the CPU torch build (x86: whl/cpu; aarch64: plain PyPI)"),
    C('RUN pip install "flwr[simulation]', "import_torch_npu", A, True, "RUN pip install torch-npu==2.3.1.post4",
      "add torch_npu matching TORCH_VERSION 2.3.1"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, True, "ENV ASCEND_VISIBLE_DEVICES=0 \\",
      "Ascend Docker Runtime mounts NPUs from ASCEND_VISIBLE_DEVICES; NVIDIA_* are ignored"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, False, None, "NVIDIA container toolkit only"),
    C("CUDA_VISIBLE_DEVICES=0", "env_var", R, True, "ASCEND_RT_VISIBLE_DEVICES=0",
      "the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES (CUDA_VISIBLE_DEVICES assumed ignored)"),
    C("ENV CUBLAS_WORKSPACE_CONFIG=:4096:8", "env_var", X, False, None,
      "cuBLAS-only determinism knob; no effect on NPU (use torch.use_deterministic_algorithms / HCCL_DETERMINISTIC)"),
    C("CMD nvidia-smi --query-gpu=name", "torch_cuda_api", R, True, "    CMD npu-smi info || exit 1",
      "nvidia-smi is absent: the container is reported unhealthy"),
])

E("flower_k8s_supernode", "deploy/k8s/supernode-gpu.yaml", "explicit_replacement",
  "Kubernetes StatefulSet for Flower SuperNodes with one GPU per pod (NVIDIA device plugin)", [
    C("runtimeClassName: nvidia", "device_type", X, True, None,
      "no 'nvidia' RuntimeClass on an Ascend cluster (pod rejected); Ascend Docker Runtime is the node default"),
    C('nvidia.com/gpu.present: "true"', "device_type", R, True, "accelerator: huawei-Ascend910",
      "no Ascend node carries the NVIDIA GPU-feature-discovery label: pods stay Pending (replacement label name unverified)"),
    C("- key: nvidia.com/gpu", "device_type", R, False, "- key: huawei.com/Ascend910", "toleration only; harmless"),
    C("image: registry.example.com/flwr/dpfedavg-supernode:gpu", "device_type", R, False,
      "image: registry.example.com/flwr/dpfedavg-supernode:npu", "point at the image built from the ported Dockerfile"),
    C("- name: PYTORCH_CUDA_ALLOC_CONF", "env_var", R, False, "- name: PYTORCH_NPU_ALLOC_CONF",
      "allocator tuning; the NPU allocator reads PYTORCH_NPU_ALLOC_CONF (expandable_segments)"),
    C("nvidia.com/gpu: 1", "device_type", R, True, "huawei.com/Ascend910: 1",
      "without the huawei.com/Ascend910 resource the pod gets no /dev/davinci* nodes or driver mounts"),
])

# ----------------------------------------------------------------------------------------------- FedML
E("fedml_device", "python/fedml/device/device.py", "device_branch_or_abstraction",
  "FedML-AI/FedML python/fedml/device/device.py (gpu_mapping.yaml process placement, device_type)", [
    C("=import torch", "import_torch_npu", A, True, IMP, IMP_MOD),
    C("torch.cuda.set_device(gpu_id)", "torch_cuda_api", R, True, "torch.npu.set_device(gpu_id)", "needs CUDA"),
    C('device = torch.device("cuda:" + str(gpu_id))', "device_type", R, True,
      'device = torch.device("npu:" + str(gpu_id))', "gpu_mapping.yaml slots are NPUs on an Ascend host"),
    C("return hasattr(args, \"using_gpu\") and args.using_gpu and torch.cuda.is_available()", "torch_cuda_api", R, True,
      'return hasattr(args, "using_gpu") and args.using_gpu and (torch.cuda.is_available() or torch.npu.is_available())',
      "False on an NPU host: every training type silently falls back to CPU"),
    C('elif device_type == "mps":', "device_type", B, True,
      'elif device_type == "npu": return torch.device("npu:" + str(gpu_id))',
      "the ported config sets device_type npu; without the branch it lands on CPU (and 'gpu' would build a cuda device)"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)", "needs CUDA"),
    C('return torch.device("cuda", local_rank)', "device_type", R, True, 'return torch.device("npu", local_rank)',
      "hard-coded CUDA device"),
    C('device = torch.device("cuda:" + str(args.local_rank))', "device_type", R, True,
      'device = torch.device("npu:" + str(args.local_rank))', "hard-coded CUDA device"),
    C("return torch.cuda.device_count() if torch.cuda.is_available() else 0", "torch_cuda_api", R, True,
      "return torch.npu.device_count() if torch.npu.is_available() else 0", "reports 0 accelerators"),
])

E("fedml_silo_config", "examples/cross_silo/mpi_hierarchical_fedavg_cifar10/config/fedml_config.yaml",
  "explicit_replacement", "FedML cross-silo hierarchical fedml_config.yaml (device_args, silo DDP backend)", [
    C('device_type: "gpu"', "device_type", R, True, 'device_type: "npu"',
      "selects the npu branch added in fedml/device/device.py"),
    C('silo_dist_backend: "nccl"', "dist_backend", R, True, 'silo_dist_backend: "hccl"',
      "intra-silo DDP process group backend"),
])

E("fedml_silo_ddp", "python/fedml/cross_silo/client/fedml_trainer_dist_adapter.py", "explicit_replacement",
  "FedML cross_silo client TrainerDistAdapter + ProcessGroupManager (intra-silo DDP, AMP local trainer)", [
    C("=import torch", "import_torch_npu", A, True, IMP, IMP_MOD),
    C('backend = getattr(args, "silo_dist_backend", "nccl")', "dist_backend", R, False,
      'backend = getattr(args, "silo_dist_backend", "hccl")', "default only; the shipped config sets the backend"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(args.local_rank)",
      "needs CUDA"),
    C("self.scaler = torch.cuda.amp.GradScaler(", "amp", R, True,
      'self.scaler = torch.amp.GradScaler("npu", enabled=self.use_amp and self.amp_dtype == torch.float16)',
      "CUDA GradScaler does not scale NPU losses"),
    C("optimizer = torch.optim.SGD(filter(", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedSGD(filter(lambda p: p.requires_grad, model.parameters()), "
      "lr=args.learning_rate, momentum=0.9, weight_decay=args.weight_decay)",
      "performance only (tensor-fused SGD)"),
    C("torch.cuda.synchronize()  # start the epoch clock", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # start the epoch clock on an idle device", "needs CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "needs CUDA"),
    C("with torch.cuda.amp.autocast(enabled=self.use_amp, dtype=self.amp_dtype):", "amp", R, True,
      'with torch.autocast(device_type="npu", enabled=self.use_amp, dtype=self.amp_dtype):',
      "CUDA autocast inactive for NPU tensors"),
    C("self.id, epoch, epoch_loss[-1], elapsed, torch.cuda.current_device()", "torch_cuda_api", R, True,
      "self.id, epoch, epoch_loss[-1], elapsed, torch.npu.current_device()", "raises without CUDA"),
])

E("fedml_sys_utils", "python/fedml/computing/scheduler/comm_utils/sys_utils.py", "device_branch_or_abstraction",
  "FedML computing/scheduler sys_utils (GPUtil/NVML device inventory, CUDA_VISIBLE_DEVICES for launched jobs)", [
    C("=import torch", "import_torch_npu", A, True, IMP, IMP_MOD),
    C('return "gpu" if torch.cuda.is_available() else "cpu"', "torch_cuda_api", R, True,
      'return "npu" if torch.npu.is_available() else ("gpu" if torch.cuda.is_available() else "cpu")',
      "edge device registers as CPU-only"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, True, "if torch.npu.is_available():",
      "runner info silently reports 0 accelerators"),
    C('info["gpu_count"] = torch.cuda.device_count()', "torch_cuda_api", R, False,
      'info["gpu_count"] = torch.npu.device_count()', "only reached once the guard above is ported"),
    C('info["gpu_names"] = [torch.cuda.get_device_name(i)', "torch_cuda_api", R, False,
      'info["gpu_names"] = [torch.npu.get_device_name(i) for i in range(info["gpu_count"])]',
      "only reached once the guard above is ported"),
    C("=if _NVML_IMPORTED:", "torch_cuda_api", B, False,
      'if torch.npu.is_available(): stats["gpu_utilization"] = torch.npu.utilization()',
      "NVML fails (caught) on an NPU host: accelerator utilisation is just missing from the stats"),
    C("gpu_list = GPUtil.getGPUs()", "torch_cuda_api", R, True,
      "gpu_list = _npu_list()  # npu-smi info / torch.npu.get_device_properties",
      "GPUtil shells out to nvidia-smi and returns []: the scheduler sees no accelerators"),
    C("gpu_available_list = GPUtil.getAvailable(", "torch_cuda_api", R, True,
      "gpu_available_list = _idle_npu_ids(limit)  # torch.npu.mem_get_info per device",
      "always [] on an NPU host: launch_job waits 10 min and raises"),
    C('return len(gpus), "nvidia" if gpus else ""', "device_type", R, False,
      'return len(gpus), "ascend" if gpus else ""', "vendor string reported to MLOps"),
    C('env["CUDA_VISIBLE_DEVICES"] = ', "env_var", R, True,
      'env["ASCEND_RT_VISIBLE_DEVICES"] = ",".join(str(i) for i in gpu_ids)',
      "job isolation: the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES"),
])

E("fedml_silo_launch_sh", "examples/cross_silo/mpi_hierarchical_fedavg_cifar10/run_client.sh",
  "explicit_replacement", "FedML cross-silo hierarchical client launcher (nvidia-smi device count, NCCL env, torchrun)", [
    C("NUM_GPUS=$(nvidia-smi --list-gpus | wc -l)", "torch_cuda_api", R, True,
      'NUM_GPUS=$(npu-smi info -l | grep -c "NPU ID")',
      "nvidia-smi is absent: with set -euo pipefail the script exits here"),
    C("export CUDA_VISIBLE_DEVICES=", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-$(seq -s, 0 $((NUM_GPUS - 1)))}",
      "the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES"),
    C('echo "silo ${RANK}: using GPUs ${CUDA_VISIBLE_DEVICES}"', "env_var", R, False,
      'echo "silo ${RANK}: using NPUs ${ASCEND_RT_VISIBLE_DEVICES}"', "log line only"),
    C("export NCCL_DEBUG=", "env_var", R, False, "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}",
      "ignored by HCCL; CANN log level is the counterpart"),
    C("export NCCL_SOCKET_IFNAME=", "env_var", R, False,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}", "HCCL's NIC selection variable"),
    C("export NCCL_IB_DISABLE=", "env_var", X, False, None, "no HCCL counterpart; harmless"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu watchdog variable (default 1 per MindCluster docs)"),
    C("nvidia-smi --query-gpu=index,name", "torch_cuda_api", R, True,
      'npu-smi info > "${LOG_DIR}/npus_silo${RANK}.txt"', "nvidia-smi is absent: set -e aborts before the launch"),
])

E("fedml_trpc_comm", "python/fedml/core/distributed/communication/trpc/trpc_comm_manager.py", "explicit_replacement",
  "FedML TRPCCommManager (torch.distributed.rpc TensorPipe transport with CUDA RPC device maps)", [
    C("=import torch", "import_torch_npu", A, True, IMP, IMP_MOD),
    C("options = rpc.TensorPipeRpcBackendOptions(", "distributed_framework", R, True,
      "options = NPUTensorPipeRpcBackendOptions(  # from torch_npu.distributed.rpc.options",
      "Ascend's list recommends torch_npu.distributed.rpc.options.NPUTensorPipeRpcBackendOptions for RPC with NPU "
      "tensors (the enable_cuda_rpc path); CPU-only RPC would work unchanged"),
    C("backend=rpc.BackendType.TENSORPIPE,", "distributed_framework", R, True,
      "backend=rpc.backend_registry.BackendType.NPU_TENSORPIPE,",
      "init_rpc must bind BackendType.NPU_TENSORPIPE when RPC carries NPU tensors (Ascend 2.7.1 list)"),
    C("options.set_device_map(WORKER_NAME.format(peer_idx), {local_device: peer_device})", "device_type", R, True,
      'options.set_device_map(WORKER_NAME.format(peer_idx), {f"npu:{local_device}": f"npu:{peer_device}"})',
      "integer device-map entries mean CUDA devices"),
    C('payload = torch.randn(numel, device="cuda:0" if args.enable_cuda_rpc else "cpu")', "device_type", R, True,
      'payload = torch.randn(numel, device="npu:0" if args.enable_cuda_rpc else "cpu")', "hard-coded CUDA device"),
    C("torch.cuda.synchronize()  # payload materialised", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # payload materialised before timing", "needs CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "needs CUDA"),
])

# ----------------------------------------------------------------------------------------------- FedScale
E("fedscale_executor", "fedscale/cloud/execution/executor.py", "device_branch_or_abstraction",
  "SymbioticLab/FedScale cloud/execution/executor.py (first-free-GPU probe, gRPC executor loop)", [
    C("=import torch", "import_torch_npu", A, True, IMP, IMP_MOD),
    C("for i in range(torch.cuda.device_count()):", "torch_cuda_api", R, True,
      "for i in range(torch.npu.device_count()):",
      "0 on an NPU host: the loop is skipped and the executor silently trains on CPU"),
    C('device = torch.device("cuda:" + str(i))', "device_type", R, False, 'device = torch.device("npu:" + str(i))',
      "only reached once the loop bound is ported"),
    C("torch.cuda.set_device(i)", "torch_cuda_api", R, False, "torch.npu.set_device(i)",
      "only reached once the loop bound is ported"),
    C("assert i != torch.cuda.device_count() - 1", "torch_cuda_api", R, False,
      'assert i != torch.npu.device_count() - 1, "Can not find available NPUs"',
      "only reached once the loop bound is ported"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "lazily queued without CUDA, harmless; torch.manual_seed already seeds the NPU generator"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "no-op without CUDA"),
])

E("fedscale_torch_client", "fedscale/cloud/execution/torch_client.py", "explicit_replacement",
  "SymbioticLab/FedScale cloud/execution/torch_client.py (TorchClient train/test, detection buffers)", [
    C("=import torch", "import_torch_npu", A, True, IMP, IMP_MOD),
    C("self.im_data = Variable(torch.FloatTensor(1).cuda())", "tensor_to_device", R, True,
      "self.im_data = Variable(torch.FloatTensor(1).to(self.device))", "detection task: .cuda() fails without CUDA"),
    C("self.im_info = Variable(torch.FloatTensor(1).cuda())", "tensor_to_device", R, True,
      "self.im_info = Variable(torch.FloatTensor(1).to(self.device))", "as above"),
    C("self.num_boxes = Variable(torch.LongTensor(1).cuda())", "tensor_to_device", R, True,
      "self.num_boxes = Variable(torch.LongTensor(1).to(self.device))", "as above"),
    C("self.gt_boxes = Variable(torch.FloatTensor(1).cuda())", "tensor_to_device", R, True,
      "self.gt_boxes = Variable(torch.FloatTensor(1).to(self.device))", "as above"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "no-op without CUDA"),
    C("optimizer = torch.optim.SGD(model.parameters(), lr=conf.learning_rate", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedSGD(model.parameters(), lr=conf.learning_rate, momentum=0.9, weight_decay=5e-4)",
      "performance only"),
    C("evalStart = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "evalStart = torch.npu.Event(enable_timing=True) if self.args.use_cuda else None",
      "use_cuda stays the 'use the accelerator' flag: a CUDA event cannot be created without CUDA"),
])

# ----------------------------------------------------------------------------------------------- CrypTen / secure aggregation
E("crypten_cuda_long_tensor", "crypten/cuda/cuda_tensor.py", "explicit_replacement",
  "facebookresearch/CrypTen crypten/cuda/cuda_tensor.py (int64 ring ops via float64 block GEMM/conv)", [
    C("=import torch", "import_torch_npu", A, False, IMP, IMP_LIB),
    C('device = "cuda" if (data is None or not data.is_cuda) else data.device', "device_type", R, True,
      'device = "npu" if (data is None or data.device.type != "npu") else data.device', "hard-coded CUDA device"),
    C('assert str(device).startswith("cuda"), "cannot specify a non-cuda device"', "device_type", R, True,
      'assert str(device).startswith("npu"), "cannot specify a non-npu device"', "rejects npu devices"),
    C("if not self._tensor.is_cuda:", "device_type", R, True, 'if self._tensor.device.type != "npu":',
      "is_cuda is False for NPU tensors: .to('npu') unwraps to a raw int64 tensor whose matmul/conv have no NPU int64 kernel"),
    C("self._tensor = self._tensor.cuda(*args, **kwargs)", "tensor_to_device", R, False,
      "self._tensor = self._tensor.npu(*args, **kwargs)", "only reached when callers use .cuda()"),
    C("z_encoded = getattr(torch, op)(x_enc_span, y_enc_span", "unsupported_op_workaround", R, True,
      "z_encoded = getattr(torch, op)(x_enc_span.cpu(), y_enc_span.cpu(), *args, **kwargs, groups=nb2 * groups).to(x_enc_span.device)",
      "float64 conv1d/conv2d: NPU conv supports fp16/fp32(/bf16) only; the exact fp64 block trick must run on the host"),
    C("z_encoded = torch.matmul(x_enc_span, y_enc_span, *args, **kwargs)", "unsupported_op_workaround", R, True,
      "z_encoded = torch.matmul(x_enc_span.cpu(), y_enc_span.cpu(), *args, **kwargs).to(x_enc_span.device)",
      "float64 matmul: NPU matmul supports bf16/fp16/fp32 only (Ascend 2.7.1 list)"),
    C("z_encoded = torch.nn.functional.avg_pool2d(x_encoded, kernel_size", "unsupported_op_workaround", R, True,
      "z_encoded = torch.nn.functional.avg_pool2d(x_encoded.cpu(), kernel_size, divisor_override=1, *args, **kwargs).to(x.device)",
      "float64 avg_pool2d: NPU supports bf16/fp16/fp32 only"),
])

E("crypten_init_prng", "crypten/__init__.py", "device_branch_or_abstraction",
  "facebookresearch/CrypTen crypten/__init__.py (init, per-device PRG generators, seed sync)", [
    C("=import torch", "import_torch_npu", A, True, IMP, IMP_MOD),
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, True, "if torch.npu.is_available():",
      "no generators are created for NPU devices: the first pseudo-random sharing of an NPU tensor fails with a "
      "KeyError in generators[...][device]"),
    C('cuda_device_names = ["cuda"]', "device_type", R, False, 'cuda_device_names = ["npu"]',
      "only reached once the guard is ported"),
    C("for i in range(torch.cuda.device_count()):", "torch_cuda_api", R, False, "for i in range(torch.npu.device_count()):",
      "only reached once the guard is ported"),
    C('cuda_device_names.append(f"cuda:{i}")', "device_type", R, False, 'cuda_device_names.append(f"npu:{i}")',
      "only reached once the guard is ported"),
])

E("crypten_dist_communicator", "crypten/communicator/distributed_communicator.py", "explicit_replacement",
  "facebookresearch/CrypTen communicator/distributed_communicator.py (torch.distributed party comms)", [
    C("=import torch", "import_torch_npu", A, True, IMP, IMP_MOD),
    C('"DISTRIBUTED_BACKEND": "nccl" if torch.cuda.is_available() else "gloo",', "dist_backend", R, True,
      '"DISTRIBUTED_BACKEND": "hccl" if torch.npu.is_available() else "gloo",',
      "picks gloo on an NPU host, which cannot move NPU share tensors"),
    C("dist.gather(tensor.data, gather_list=result", "unsupported_op_workaround", R, True,
      "dist.gather(tensor.data.view(torch.int32), gather_list=[r.view(torch.int32) for r in result] if result else None, dst=dst, group=self.main_group, async_op=async_op)",
      "HCCL gather has no int64 (bf16/fp16/fp32/int8/int32/bool); shares are int64 - gather them as int32 pairs"),
    C("req = dist.all_gather(result, tensor.data", "unsupported_op_workaround", R, True,
      "req = dist.all_gather([r.view(torch.int32) for r in result], tensor.data.view(torch.int32), group=self.main_group, async_op=True)",
      "HCCL all_gather has no int64"),
    C("=dist.all_gather(result, tensor.data, group=self.main_group)", "unsupported_op_workaround", R, True,
      "dist.all_gather([r.view(torch.int32) for r in result], tensor.data.view(torch.int32), group=self.main_group)",
      "HCCL all_gather has no int64"),
])

E("crypten_mp_launcher", "examples/multiprocess_launcher.py", "explicit_replacement",
  "facebookresearch/CrypTen examples/multiprocess_launcher.py (CPU parties over gloo; no device code)", [])

E("secagg_prg_ext", "secagg/ops/prg_expand.py", "device_branch_or_abstraction",
  "secure-aggregation pairwise-mask PRG with a JIT-built ChaCha20 CUDA extension, NumPy Philox fallback and a side stream", [
    C("=import torch", "import_torch_npu", A, False, IMP, "only the optional side-stream port calls torch.npu.*"),
    C("_ext = load(", "custom_cuda_extension", R, False,
      "_ext = None  # no nvcc on Ascend: NPU clients use the Philox path",
      "cpp_extension.load is ✘ on A2/A3 and the sources are .cu; only reached for CUDA tensors"),
    C("return _expand_cpu(seed, numel)", "device_type", R, True, "return _expand_cpu(seed, numel).to(device)",
      "NPU falls to the CPU path and gets a CPU mask: total.add_(m) with total on the NPU raises a device mismatch"),
    C("if len(peer_seeds) > 1024 and not torch.cuda.is_available():", "torch_cuda_api", R, True,
      'if len(peer_seeds) > 1024 and device.type == "cpu":',
      "raises for large federations on an NPU host although the CPU PRG + copy works"),
    C("self.stream: Optional[torch.cuda.Stream] = torch.cuda.Stream(device=device)", "torch_cuda_api", R, False,
      'self.stream = torch.npu.Stream(device=device) if device.type == "npu" else None',
      "performance: NPU clients precompute masks synchronously"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", R, False, "with torch.npu.stream(self.stream):",
      "side-stream path; only reached once the stream is ported"),
    C("self._event = torch.cuda.Event()", "torch_cuda_api", R, False, "self._event = torch.npu.Event()",
      "side-stream path"),
    C("torch.cuda.current_stream(self.device).wait_event(self._event)", "torch_cuda_api", R, False,
      "torch.npu.current_stream(self.device).wait_event(self._event)", "side-stream path"),
    C("self._pending.record_stream(torch.cuda.current_stream(self.device))", "torch_cuda_api", R, False,
      "self._pending.record_stream(torch.npu.current_stream(self.device))", "side-stream path"),
])

E("secagg_distributed_dp_sum", "secagg/secure_sum.py", "explicit_replacement",
  "torchrun cross-silo secure aggregation + distributed-DP noise simulation (masked int64 all-reduce)", [
    C("=import torch", "import_torch_npu", A, True, IMP, IMP_ENTRY),
    C('dist.init_process_group(backend="nccl", init_method="env://")', "dist_backend", R, True,
      'dist.init_process_group(backend="hccl", init_method="env://")', "NCCL does not exist on Ascend"),
    C('local_rank = int(os.environ.get("LOCAL_RANK", rank % torch.cuda.device_count()))', "torch_cuda_api", R, True,
      'local_rank = int(os.environ.get("LOCAL_RANK", rank % torch.npu.device_count()))',
      "the default is evaluated eagerly: rank % 0 raises ZeroDivisionError on an NPU host"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)", "needs CUDA"),
    C('return rank, dist.get_world_size(), torch.device("cuda", local_rank)', "device_type", R, True,
      'return rank, dist.get_world_size(), torch.device("npu", local_rank)', "hard-coded CUDA device"),
    C('dtype=torch.int64, device="cuda")', "device_type", R, True,
      'base = torch.tensor([time.time_ns() & 0x7FFFFFFFFFFFFFFF if rank == 0 else 0], dtype=torch.int64, device="npu")',
      "hard-coded CUDA device for the broadcast buffer"),
    C("plain = noisy.to(torch.float64)", "unsupported_op_workaround", R, True,
      "plain = noisy.to(torch.float32)  # HCCL all_reduce has no fp64",
      "HCCL all_reduce supports bf16/fp16/fp32/int32/int64/bool only (--debug_plain_sum path)"),
    C('gen = torch.Generator(device="cuda")', "device_type", R, True, 'gen = torch.Generator(device="npu")',
      "the noise generator must live on the NPU (torch.normal(..., generator=gen, device=npu))"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "needs CUDA"),
])

E("dpfl_requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt of a DP/FL benchmark suite pinned to cu118 wheels (Opacus, Flower, FedML, CrypTen, flash-attn, triton)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu pairs with the CPU torch build (x86: whl/cpu; aarch64: plain PyPI)"),
    C("torch==2.1.2+cu118", "torch_cuda_api", R, True, "torch==2.1.0",
      "CUDA build; and torch_npu exists for 2.1.0, not 2.1.2"),
    C("torchvision==0.16.2+cu118", "torch_cuda_api", R, True, "torchvision==0.16.0", "follows the torch pin"),
    C("=opacus==1.4.0", "import_torch_npu", A, True, "torch-npu==2.1.0.post10", "add the torch_npu package"),
    C("flash-attn==2.4.2", "attention_kernel", X, True, None,
      "flash-attn cannot be installed on NPU (pip install -r fails); the fine-tuning script uses SDPA instead"),
    C("bitsandbytes==0.41.3", "custom_cuda_extension", R, False, "bitsandbytes>=0.45  # multi-backend build",
      "unconfirmed: only NF4 has an NPU path (multi-backend branch); nothing here imports it"),
    C("triton==2.1.0", "custom_cuda_extension", R, True, "triton-ascend",
      "the FlashDP Triton kernels need the triton-ascend backend (version must match the CANN/torch stack)"),
    C("nvidia-ml-py==", "torch_cuda_api", X, False, None, "NVML only; the code calling it gets an NPU branch"),
    C("GPUtil==1.4.0", "torch_cuda_api", X, False, None, "wraps nvidia-smi; replaced by npu-smi / torch.npu queries"),
])
