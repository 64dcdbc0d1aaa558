# Labels for probe151 (neural audio codecs / speech tokenizers). See README.md for the policy.
ENTRIES = []
def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}
def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


E("encodec_model", "encodec/model.py", "device_branch_or_abstraction",
  "facebookresearch/encodec encodec/model.py", [
    C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "device = 'npu' if torch.npu.is_available() else 'cpu'",
      "self-test silently falls back to CPU on an NPU host (torch.cuda.is_available() is False)"),
])

E("encodec_core_vq", "encodec/quantization/core_vq.py", "device_branch_or_abstraction",
  "facebookresearch/encodec encodec/quantization/core_vq.py", [])

E("encodec_distrib", "encodec/distrib.py", "device_branch_or_abstraction",
  "facebookresearch/encodec encodec/distrib.py (+ audiocraft-style init)", [
    C('_DIST_BACKEND = os.environ.get("ENCODEC_DIST_BACKEND", "nccl")', "dist_backend", "replace", True,
      '_DIST_BACKEND = os.environ.get("ENCODEC_DIST_BACKEND", "hccl")',
      "NCCL is not available with torch_npu; collectives on NPU tensors need HCCL"),
    C("    if torch.cuda.is_available():", "device_type", "replace", True,
      "    if torch.npu.is_available():",
      "on an NPU host this takes the gloo branch, and gloo cannot reduce NPU tensors"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "        torch.npu.set_device(local_rank)",
      "bind each rank to its NPU; torch.cuda.set_device fails without CUDA"),
    C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "    device = 'npu' if torch.npu.is_available() else 'cpu'",
      "would build a CPU tensor and all_reduce it over HCCL, which only handles NPU tensors"),
    C('if _DIST_BACKEND == "nccl" and torch.cuda.is_available():', "dist_backend", "replace", False,
      'if _DIST_BACKEND == "hccl" and torch.npu.is_available():',
      "backend-string comparison is not rewritten by any tool; unchanged it just falls to the plain barrier, which works"),
    C("torch.distributed.barrier(device_ids=[torch.cuda.current_device()])", "torch_cuda_api", "replace", False,
      "torch.distributed.barrier(device_ids=[torch.npu.current_device()])",
      "only reached once the guard above is ported; device_ids barrier with HCCL unconfirmed in knowledge"),
])

E("encodec_balancer", "encodec/balancer.py", "device_branch_or_abstraction",
  "facebookresearch/encodec encodec/balancer.py", [])

E("encodec_cli", "encodec/__main__.py", "device_branch_or_abstraction",
  "facebookresearch/encodec encodec/__main__.py (with a --device flag as in forks)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry point: registers the npu device (explicit import needed before torch_npu 2.5.1 autoload)"),
    C("'--device', default='cuda' if torch.cuda.is_available() else 'cpu',", "device_type", "replace", True,
      "'--device', default='npu' if torch.npu.is_available() else 'cpu',",
      "default silently becomes CPU on an NPU host"),
    C("if str(device).startswith('cuda'):", "device_type", "replace", True,
      "if str(device).startswith('npu'):",
      "without the NPU branch no sync happens and the --profile timings measure only kernel launch"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "        torch.npu.synchronize()",
      "torch.cuda.synchronize raises without CUDA once the guard is ported"),
    C("if torch.cuda.is_available() and device.type == 'cuda':", "device_type", "replace", False,
      "if torch.npu.is_available() and device.type == 'npu':",
      "only skips an optional peak-memory print"),
    C("peak = torch.cuda.max_memory_allocated(device) / 2 ** 20", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated(device) / 2 ** 20", "follows the guard above"),
])

E("audiotools_accel", "audiotools/ml/accelerator.py", "device_branch_or_abstraction",
  "descriptinc/audiotools audiotools/ml/accelerator.py (ml.Accelerator used by DAC)", [
    C("self.world_size = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "self.world_size = torch.npu.device_count()",
      "returns 0 without CUDA, so the accelerator silently trains on CPU"),
    C('self.device = "cpu" if self.world_size == 0 else "cuda"', "device_type", "replace", True,
      'self.device = "cpu" if self.world_size == 0 else "npu"', "device string used for every batch"),
    C('"nccl",', "dist_backend", "replace", True, '"hccl",', "NCCL unavailable on Ascend; use HCCL"),
    C("self.scaler = torch.cuda.amp.GradScaler() if amp else DummyScaler()", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler() if amp else DummyScaler()",
      "torch.cuda.amp.GradScaler disables itself without CUDA: fp16 training loses loss scaling silently"),
    C("torch.cuda.device(self.local_rank) if torch.cuda.is_available() else None", "torch_cuda_api", "replace", True,
      "torch.npu.device(self.local_rank) if torch.npu.is_available() else None",
      "without the device context every rank's bare 'npu' resolves to npu:0"),
    C("model = model.to(self.local_rank)", "tensor_to_device", "replace", True,
      'model = model.to(f"npu:{self.local_rank}")', "an int in .to() means a CUDA ordinal"),
    C("model = DataParallel(model, **kwargs)", "distributed_framework", "replace", True,
      'raise RuntimeError("DataParallel is not supported on NPU; launch with torchrun for DDP")',
      "torch.nn.DataParallel is unsupported on Ascend (support list)"),
    C("return torch.cuda.amp.autocast(self.amp, *args, **kwargs)", "amp", "replace", True,
      "return torch.npu.amp.autocast(self.amp, *args, **kwargs)",
      "CUDA autocast is disabled (warning only) on an NPU host, so amp=True silently runs fp32"),
])

E("dac_train", "scripts/train.py", "device_branch_or_abstraction",
  "descriptinc/descript-audio-codec scripts/train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry point; registers torch.npu (autoload only from torch_npu 2.5.1)"),
    C('batch = util.prepare_batch(batch, "cuda")', "device_type", "replace", True,
      'batch = util.prepare_batch(batch, "npu")', "hard-coded CUDA device string for the TensorBoard samples"),
    C("        pin_memory=True,", "pin_memory", "replace", False,
      '        pin_memory=True, pin_memory_device="npu",',
      "pinning targets CUDA by default; unconfirmed whether torch_npu redirects it (performance only)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "                torch.npu.empty_cache()",
      "torch.cuda.empty_cache is a silent no-op when CUDA is not initialised; port to keep the intent"),
])

E("dac_encode", "dac/utils/encode.py", "device_branch_or_abstraction",
  "descriptinc/descript-audio-codec dac/utils/encode.py", [
    C('device: str = "cuda",', "device_type", "replace", True, 'device: str = "npu",',
      "default device string; CLI users get a CUDA error on NPU hosts"),
    C('if device.startswith("cuda"):', "device_type", "replace", False, 'if device.startswith("npu"):',
      "only skips cache release between files"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "            torch.npu.empty_cache()",
      "follows the guard above"),
])

E("dac_requirements", "requirements.txt", "explicit_replacement",
  "descriptinc/descript-audio-codec requirements / setup extras", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; x86 Ascend hosts install CPU torch and add torch-npu"),
    C("=torch==2.0.1+cu118", "device_type", "replace", True, "torch==2.1.0",
      "+cu118 local version cannot pair with torch-npu; pick a torch that has a torch_npu release"),
    C("=torchaudio==2.0.2+cu118", "device_type", "replace", True, "torchaudio==2.1.0",
      "CUDA build of torchaudio; must match the CPU torch"),
    C("=argbind>=0.3.7", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "torch-npu pin matching torch 2.1.0"),
    C("=nvidia-ml-py3", "device_type", "removal", False, None,
      "NVML bindings have nothing to talk to on Ascend (npu-smi instead); import would fail at use"),
    C("=pynvml", "device_type", "removal", False, None, "same as nvidia-ml-py3"),
])

E("dac_launch", "scripts/train_multi_gpu.sh", "explicit_replacement",
  "descript-audio-codec style torchrun launcher", [
    C("=set -euo pipefail", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment must be sourced before torch_npu loads"),
    C("export CUDA_VISIBLE_DEVICES=${GPUS}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPUS}", "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime"),
    C("export NCCL_P2P_DISABLE=0", "env_var", "removal", False, None, "NCCL knob; no effect with HCCL"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL knob; no effect with HCCL"),
    C("export NCCL_DEBUG=${NCCL_DEBUG:-WARN}", "env_var", "removal", False, None, "NCCL knob; no effect with HCCL"),
    C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}", "single node: only matters multi-node"),
    C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", "replace", False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True", "CUDA allocator setting is ignored by torch_npu"),
    C("nvidia-smi --query-gpu=index,name,memory.total --format=csv", "device_type", "replace", True,
      "npu-smi info", "nvidia-smi is absent on Ascend hosts and set -e aborts the script"),
])

E("dac_docker", "Dockerfile", "explicit_replacement",
  "GPU training image for descript-audio-codec", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "device_type", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10", "CUDA base image; needs a CANN base image"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None, "NVIDIA container runtime variable"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container runtime variable"),
    C("RUN pip install --no-cache-dir torch==2.0.1 torchaudio==2.0.2 --index-url https://download.pytorch.org/whl/cu118",
      "device_type", "replace", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torchaudio==2.1.0 --index-url https://download.pytorch.org/whl/cpu && pip install torch-npu==2.1.0.post10",
      "CUDA wheels; install CPU torch + torch-npu"),
    C("assert torch.cuda.is_available()", "device_type", "replace", True,
      "CMD [\"bash\", \"-c\", \"python -c 'import torch, torch_npu; assert torch.npu.is_available()' && bash scripts/train_multi_gpu.sh\"]",
      "start-up check always fails on an NPU host"),
])

E("moshi_compile", "moshi/utils/compile.py", "explicit_replacement",
  "kyutai-labs/moshi moshi/utils/compile.py (CUDAGraphed)", [
    C("=from torch import cuda", "torch_cuda_api", "replace", True, "from torch_npu import npu as cuda",
      "CUDAGraph/graph are used through this alias; torch.cuda graphs cannot be created on an NPU host"),
    C("self._graph: cuda.CUDAGraph | None = None", "torch_cuda_api", "replace", False,
      "self._graph: cuda.NPUGraph | None = None",
      "annotation on an attribute target is evaluated; breaks only once the alias above points at torch_npu.npu"),
    C("self._graph = cuda.CUDAGraph()", "torch_cuda_api", "replace", True, "self._graph = cuda.NPUGraph()",
      "torch.cuda.CUDAGraph -> torch.npu.NPUGraph (inference-only on NPU, which is how Mimi/Moshi use it)"),
    C("with cuda.graph(self._graph):", "torch_cuda_api", "replace", True, "with cuda.graph(self._graph):",
      "torch.npu.graph capture context (same name once the alias is ported)"),
])

E("moshi_loaders", "moshi/models/loaders.py", "device_branch_or_abstraction",
  "kyutai-labs/moshi moshi/models/loaders.py", [
    C("=if torch.cuda.is_available():", "device_type", "replace", True, "if torch.npu.is_available():",
      "device picker falls through to CPU on an NPU host"),
    C('return "cuda"', "device_type", "replace", True, 'return "npu"', "device string returned to callers"),
    C('if device.type == "cuda" and torch.cuda.is_bf16_supported():', "device_type", "replace", True,
      'if device.type == "npu" and torch.npu.is_bf16_supported():',
      "an npu device would silently get float32 (Moshi 7B in fp32 does not fit)"),
    C('=if device.type == "cuda":', "device_type", "replace", False, 'if device.type == "npu":',
      "fp16 fallback for accelerators without bf16 (e.g. 310P); secondary"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
      "memory log silently skipped"),
    C("free, total = torch.cuda.mem_get_info()", "torch_cuda_api", "replace", False,
      "free, total = torch.npu.mem_get_info()", "follows the guard above"),
])

E("moshi_infer", "moshi/run_inference.py", "device_branch_or_abstraction",
  "kyutai-labs/moshi moshi/run_inference.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry point; registers torch.npu (autoload only from torch_npu 2.5.1)"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "    if torch.npu.is_available():",
      "NPU RNG not seeded: results are not reproducible, nothing fails"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "        torch.npu.manual_seed(seed)",
      "follows the guard"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "        torch.npu.manual_seed_all(seed)",
      "follows the guard"),
    C('parser.add_argument("--device", type=str, default="cuda"', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu", help="Device on which to run, defaults to \'npu\'.")',
      "default device string"),
    C('if args.device.startswith("cuda") and torch.cuda.is_available():', "device_type", "replace", False,
      'if args.device.startswith("npu") and torch.npu.is_available():', "memory log only"),
    C("torch.cuda.synchronize()  # make sure loading/warm-up is done", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # make sure loading/warm-up is done", "torch.cuda.synchronize raises without CUDA"),
    C("torch.cuda.synchronize()  # flush pending decode kernels", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # flush pending decode kernels", "torch.cuda.synchronize raises without CUDA"),
])

E("moshi_transformer", "moshi/modules/transformer.py", "device_branch_or_abstraction",
  "kyutai-labs/moshi moshi/modules/transformer.py (streaming MHA)", [
    C("from flash_attn import flash_attn_func", "attention_kernel", "replace", False,
      "from torch_npu import npu_fusion_attention",
      "guarded import: on NPU it falls back to SDPA (which has an NPU FA path); porting to npu_fusion_attention is performance only"),
    C("return torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=True,", "attention_kernel", "replace", False,
      "return contextlib.nullcontext()",
      "torch.backends.cuda.sdp_kernel is on msFmkTransplt's unsupported list; whether it errors or is a no-op on NPU is unconfirmed"),
    C("return torch.backends.cuda.sdp_kernel()", "attention_kernel", "replace", False,
      "return contextlib.nullcontext()", "same as above; unconfirmed"),
])

E("snac_model", "snac/snac.py", "device_branch_or_abstraction",
  "hubertsiuzdak/snac snac/snac.py", [])

E("snac_example", "examples/encode_decode.py", "device_branch_or_abstraction",
  "hubertsiuzdak/snac README usage as a script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry point; needed for .npu() (autoload only from torch_npu 2.5.1)"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ".cuda() fails without CUDA"),
    C("if audio.is_cuda:", "device_type", "replace", True, "if audio.is_npu:",
      "without it the reported time excludes the asynchronous NPU work"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "            torch.npu.synchronize()",
      "follows the guard; torch.cuda.synchronize raises"),
    C('model.decoder = torch.compile(model.decoder, mode="reduce-overhead")', "compile_mode", "replace", False,
      'model.decoder = torch.compile(model.decoder, backend="npugraphs")',
      "reduce-overhead relies on CUDA graphs; NPU equivalent is backend npugraphs (behaviour under inductor on NPU unconfirmed)"),
])

E("wavtok_pretrained", "decoder/pretrained.py", "device_branch_or_abstraction",
  "jishengpeng/WavTokenizer decoder/pretrained.py", [
    C("state_dict_raw = torch.load(model_path, map_location=torch.device('cuda'))['state_dict']", "device_type", "replace", True,
      "state_dict_raw = torch.load(model_path, map_location=torch.device('npu'))['state_dict']",
      "map_location to a CUDA device fails on an NPU host"),
])

E("wavtok_infer", "infer.py", "device_branch_or_abstraction",
  "jishengpeng/WavTokenizer infer.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry point (autoload only from torch_npu 2.5.1)"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = os.environ.get("CUDA_VISIBLE_DEVICES", "0")', "env_var", "replace", False,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = os.environ.get("ASCEND_RT_VISIBLE_DEVICES", "0")',
      "set after torch import and ignored by the Ascend runtime; harmless as written"),
    C("=device1 = torch.device('cuda:0')", "device_type", "replace", True, "device1 = torch.device('npu:0')",
      "hard-coded CUDA device"),
    C("bandwidth_id=bandwidth_id.cuda())", "tensor_to_device", "replace", True,
      "features, discrete_code = wavtokenizer.encode_infer(wav, bandwidth_id=bandwidth_id.npu())",
      ".cuda() fails without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
])

E("wavtok_config", "configs/wavtokenizer_smalldata_frame40_3s_nq1_code4096_dim512_kmeans200_attn.yaml", "explicit_replacement",
  "jishengpeng/WavTokenizer LightningCLI training config", [
    C("accelerator: gpu", "device_type", "replace", True, "accelerator: npu",
      "Lightning finds no GPU on an NPU host; needs an NPU accelerator (Lightning NPU support/plugin unconfirmed in knowledge)"),
    C("strategy: ddp", "dist_backend", "replace", True, "strategy: {class_path: pytorch_lightning.strategies.DDPStrategy, init_args: {process_group_backend: hccl}}",
      "Lightning DDP would pick nccl for accelerator devices"),
    C("pin_memory: true", "pin_memory", "replace", False, "pin_memory: true  # pin_memory_device npu",
      "performance only; unconfirmed whether pinning targets the NPU"),
])

E("wavtok_env", "environment.yml", "explicit_replacement",
  "WavTokenizer / vocos conda environment", [
    C("=- nvidia", "device_type", "removal", False, None, "NVIDIA conda channel only serves CUDA packages"),
    C("=- pytorch=2.0.1", "device_type", "replace", True, "- pytorch=2.1.0",
      "pick a torch version that has a torch_npu release and install the CPU build"),
    C("=- torchaudio=2.0.2", "device_type", "replace", True, "- torchaudio=2.1.0", "must match torch"),
    C("=- pytorch-cuda=11.8", "device_type", "removal", True, None, "pulls the CUDA build of pytorch"),
    C("=- cudatoolkit=11.8", "device_type", "removal", False, None, "unused on Ascend"),
    C("=- pytorch-lightning==1.8.6", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post10",
      "torch-npu pin (pip section)"),
    C("=- deepspeed==0.10.0", "distributed_framework", "replace", False, "- deepspeed>=0.10.0",
      "only needed for the deepspeed strategy; its CUDA op builders are unavailable on NPU, NPU accelerator exists upstream"),
])

E("moshi_pyproject", "pyproject.toml", "explicit_replacement",
  "kyutai-labs/moshi moshi/pyproject.toml", [
    C('"torch >= 2.2.0, < 2.5",', "import_torch_npu", "npu_only_addition", True, '"torch-npu >= 2.3.1, < 2.5",',
      "torch-npu dependency next to torch"),
    C("\"flash-attn >= 2.5.8; platform_system == 'Linux'\",", "attention_kernel", "removal", True, None,
      "flash-attn cannot be installed on NPU; the train extra would fail to install"),
    C('"triton >= 2.2",', "triton_kernel_tuning", "replace", False, '"triton-ascend",',
      "GPU triton is useless on Ascend; triton-ascend only if kernels are ported"),
])

E("encodec_data", "encodec_train/data.py", "device_branch_or_abstraction",
  "EnCodec/audiocraft-style training data pipeline", [
    C('pin_memory=cfg.device.startswith("cuda"),', "pin_memory", "replace", False,
      'pin_memory=cfg.device.startswith("npu"),',
      "with device 'npu' pinning silently turns off (performance only)"),
    C("self.stream = torch.cuda.Stream(device=self.device)", "torch_cuda_api", "replace", True,
      "self.stream = torch.npu.Stream(device=self.device)", "CUDA stream cannot be created on an NPU host"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(self.stream):",
      "CUDA stream context"),
    C("torch.cuda.current_stream(self.device).wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream(self.device).wait_stream(self.stream)", "CUDA stream API"),
    C("batch.record_stream(torch.cuda.current_stream(self.device))", "torch_cuda_api", "replace", True,
      "batch.record_stream(torch.npu.current_stream(self.device))", "CUDA stream API"),
])

E("encodec_bench", "scripts/benchmark_rtf.py", "explicit_replacement",
  "EnCodec real-time-factor benchmark script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry point (autoload only from torch_npu 2.5.1)"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
      "reports 'cpu' on an NPU host"),
    C("props = torch.cuda.get_device_properties(0)", "torch_cuda_api", "replace", True,
      "props = torch.npu.get_device_properties(0)", "CUDA call"),
    C('return f"{props.name} (sm_{props.major}{props.minor}', "device_capability_check", "replace", True,
      'return f"{props.name} ({props.total_memory / 2**30:.0f} GiB)"',
      "NPU device properties have no major/minor"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "CUDA events"),
    C("torch.cuda.synchronize()  # drain warm-up", "torch_cuda_api", "replace", True,
      "    torch.npu.synchronize()  # drain warm-up", "raises without CUDA"),
    C("torch.cuda.synchronize()  # wait for the timed runs", "torch_cuda_api", "replace", True,
      "    torch.npu.synchronize()  # wait for the timed runs", "raises without CUDA"),
    C("torch.backends.cuda.matmul.allow_tf32 = True", "torch_cuda_api", "replace", False,
      "torch.npu.matmul.allow_tf32 = True", "TF32 flag; supported with fp32-only note, no effect on correctness"),
    C("model = model.cuda().eval()", "tensor_to_device", "replace", True, "model = model.npu().eval()",
      ".cuda() fails without CUDA"),
    C('wav = torch.randn(args.batch, model.channels, n, device="cuda")', "device_type", "replace", True,
      'wav = torch.randn(args.batch, model.channels, n, device="npu")', "CUDA device string"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "    torch.npu.reset_peak_memory_stats()",
      "CUDA memory API"),
    C('torch.autocast("cuda", dtype=torch.float16, enabled=args.fp16)', "amp", "replace", True,
      'with torch.no_grad(), torch.autocast("npu", dtype=torch.float16, enabled=args.fp16):',
      "autocast device_type cuda on an NPU host does not autocast NPU ops"),
    C("peak = torch.cuda.max_memory_allocated() / 2**20", "torch_cuda_api", "replace", True,
      "    peak = torch.npu.max_memory_allocated() / 2**20", "CUDA memory API"),
    C('"cuda": torch.version.cuda,', "torch_cuda_api", "replace", False, '"cann": torch_npu.version.cann if hasattr(torch_npu, "version") else None,',
      "torch.version.cuda is None on a CPU torch build; only a report field"),
])

E("encodec_solver", "encodec_train/train.py", "device_branch_or_abstraction",
  "EnCodec/audiocraft-style compression solver (torchrun launched)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry point (autoload only from torch_npu 2.5.1)"),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", False,
      "from torch_npu.optim import NpuFusedAdam as FusedAdam",
      "guarded import; NVIDIA apex FusedAdam is unavailable so it silently falls back to torch Adam"),
    C('if cfg.device == "cuda" and torch.cuda.is_available():', "device_type", "replace", True,
      'if cfg.device == "npu" and torch.npu.is_available():', "silently trains on CPU on an NPU host"),
    C('return torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))', "device_type", "replace", True,
      'return torch.device("npu", int(os.environ.get("LOCAL_RANK", 0)))', "CUDA device"),
    C("fused=torch.cuda.is_available())", "fused_optimizer", "replace", False,
      "                            foreach=True)",
      "evaluates False on NPU so Adam runs unfused; fused=True on NPU tensors unconfirmed"),
    C('use_amp = cfg.amp and device.type == "cuda"', "amp", "replace", True, 'use_amp = cfg.amp and device.type == "npu"',
      "AMP silently off on NPU"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=use_amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=use_amp)", "CUDA GradScaler disables itself without CUDA"),
    C('batches = CUDAPrefetcher(loader, device) if device.type == "cuda" else loader', "device_type", "replace", False,
      'batches = CUDAPrefetcher(loader, device) if device.type == "npu" else loader',
      "prefetcher silently skipped; performance only"),
    C("autocast(enabled=use_amp):  # codec forward", "amp", "replace", True,
      "            with torch.npu.amp.autocast(enabled=use_amp):  # codec forward",
      "CUDA autocast does nothing for NPU ops (warning only): AMP silently off"),
    C("autocast(enabled=use_amp):  # discriminator step", "amp", "replace", True,
      "                with torch.npu.amp.autocast(enabled=use_amp):  # discriminator step", "same"),
    C("autocast(enabled=use_amp):  # generator losses", "amp", "replace", True,
      "            with torch.npu.amp.autocast(enabled=use_amp):  # generator losses", "same"),
    C('mem = torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else 0.0', "torch_cuda_api", "replace", False,
      'mem = torch.npu.max_memory_allocated(device) / 2**30 if device.type == "npu" else 0.0',
      "log field silently 0.0"),
])
