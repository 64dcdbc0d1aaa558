# Labels for probe246 (information extraction / NER / entity linking, CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit; see README.md for the policy.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point that (after the port) calls torch.npu / torch_npu APIs; the NPU backend must be "
               "registered before the first device use (autoload only since torch_npu 2.5.1)")

# ---------------------------------------------------------------- GLiNER
E("gliner_model", "gliner/model.py", "device_branch_or_abstraction",
  "urchade/GLiNER gliner/model.py (GLiNER class: from_pretrained/_from_pretrained, ONNX loading, predict_entities)",
  [
      C('if compile_torch_model and "cuda" in map_location:', "device_type", "replace", False,
        'if compile_torch_model and ("cuda" in map_location or "npu" in map_location):',
        "with map_location='npu' torch.compile is silently skipped (warning only); perf-only, and Inductor on "
        "NPU needs torch_npu >= 2.6 graph mode"),
      C('if "cuda" in map_location:', "device_type", "add_branch", False,
        'elif "npu" in map_location: providers = ["CANNExecutionProvider", "CPUExecutionProvider"]',
        "ONNX path: a CUDA EP is never available on an Ascend host, the session falls back to the CPU EP; an "
        "onnxruntime CANN EP branch is a perf option (unconfirmed: not covered in the knowledge notes)"),
  ])

E("gliner_train", "train.py", "explicit_replacement",
  "urchade/GLiNER train.py (accelerate-based training loop with bf16 autocast)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "silent no-op without CUDA; accelerate's set_seed already seeds the NPU generator"),
      C("pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
        "perf only: without an accelerator device the DataLoader does not pin (unconfirmed how accelerate "
        "handles pinning on NPU)"),
      C("with torch.cuda.amp.autocast(dtype=amp_dtype, enabled=use_amp):", "amp", "replace", True,
        'with torch.autocast(device_type="npu", dtype=amp_dtype, enabled=use_amp):',
        "torch.cuda.amp.autocast disables itself (warning) when CUDA is absent -> the bf16 run silently trains "
        "in fp32 on the NPU"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op without CUDA; only frees cache after a skipped batch"),
      C("mem_gb = torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", "replace", False,
        "mem_gb = torch.npu.max_memory_allocated() / 2**30",
        "returns 0 when CUDA was never initialised; log value only"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats()",
        "resolves the current CUDA device (lazy init) and raises on a host without CUDA"),
      C("if args.bf16 and not torch.cuda.is_bf16_supported():", "device_capability_check", "replace", True,
        "if args.bf16 and not torch.npu.is_bf16_supported():",
        "CUDA capability probe: raises (older torch) or returns False on an NPU host, silently dropping bf16; "
        "torch.npu.is_bf16_supported exists"),
  ])

E("gliner_trainer", "gliner/training/trainer.py", "explicit_replacement",
  "urchade/GLiNER gliner/training/trainer.py (transformers.Trainer subclass + TrainingArguments)",
  [
      C("tf32: Optional[bool] = field(default=True)", "device_capability_check", "replace", False,
        "tf32: Optional[bool] = field(default=None)",
        "TrainingArguments(tf32=True) is gated on is_torch_tf32_available (CUDA/Ampere check); unconfirmed "
        "whether the installed transformers raises or ignores it on NPU - TF32 has no NPU meaning"),
      C("dataloader_pin_memory: bool = field(default=True)", "pin_memory", "replace", False,
        "dataloader_pin_memory: bool = field(default=True)  # pinned via the NPU host allocator by HF/accelerate",
        "perf only; whether pinning happens on NPU depends on transformers/accelerate versions (unconfirmed)"),
      C('ddp_backend: Optional[str] = field(default="nccl")', "dist_backend", "replace", True,
        'ddp_backend: Optional[str] = field(default="hccl")',
        "NCCL does not exist on Ascend; multi-process runs must initialise HCCL"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA; frees NPU cache after each step only once ported"),
      C("release whatever the failed batch was holding", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()  # release whatever the failed batch was holding",
        "silent no-op without CUDA (OOM-recovery path)"),
  ])

E("gliner_encoder", "gliner/modeling/encoder.py", "explicit_replacement",
  "urchade/GLiNER gliner/modeling/encoder.py (Transformer/Encoder/BiEncoder wrappers, flashdeberta/turbot5/llm2vec)",
  [
      C("from flashdeberta import FlashDebertaV2Model as DebertaV2Model", "attention_kernel", "replace", False,
        "from transformers import DebertaV2Model",
        "flashdeberta is a Triton (CUDA) kernel package; guarded by is_module_available so only bites if it is "
        "installed on the NPU host"),
      C('kwargs = {"torch_dtype": torch.bfloat16, "attn_implementation": "flash_attention_2"}', "attention_kernel",
        "replace", True, 'kwargs = {"torch_dtype": torch.bfloat16, "attn_implementation": "sdpa"}',
        "flash-attn cannot be installed on Ascend; SDPA dispatches to the NPU fused attention "
        "(transformers PR #36383)"),
      C('kwargs = {"attention_type": "flash"}', "attention_kernel", "replace", False, "kwargs = {}",
        "turbot5's flash attention is a Triton/CUDA kernel; only active when turbot5 is installed"),
  ])

E("gliner_demo", "demo.py", "explicit_replacement",
  "urchade/GLiNER demo.py / HF Space app.py (gradio demo with GLiNER.from_pretrained(...).to('cuda'))",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")', "env_var", "replace", False,
        'os.environ.setdefault("ASCEND_RT_VISIBLE_DEVICES", "0")',
        "ignored on Ascend, but it only selects device 0 which is the default anyway"),
      C("if args.cpu or not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if args.cpu or not torch.npu.is_available():",
        "False on an NPU host -> demo silently runs on CPU"),
      C('=DEVICE = "cuda"', "device_type", "replace", True, 'DEVICE = "npu"', "cuda device string"),
      C('if args.fp16 and DEVICE == "cuda":', "device_type", "replace", True,
        'if args.fp16 and DEVICE == "npu":',
        "after the device port the comparison is never true and --fp16 is silently ignored"),
      C("torch.cuda.get_device_name(0) if DEVICE == 'cuda' else 'cpu'", "torch_cuda_api", "replace", False,
        "print(f\"Loaded {args.model} on {DEVICE} ({torch.npu.get_device_name(0) if DEVICE == 'npu' else 'cpu'})\")",
        "log line only (after the port it would print 'cpu')"),
  ])

E("gliner_eval", "eval.py", "explicit_replacement",
  "urchade/GLiNER eval.py + gliner/evaluation get_for_all_path (zero-shot CrossNER/MIT benchmark)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('parser.add_argument("--device", type=str, default="cuda:0")', "device_type", "replace", True,
        'parser.add_argument("--device", type=str, default="npu:0")', "default device string"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA; needed so the NPU queue is drained before timing"),
      C("wait for the last batch before stopping the clock", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for the last batch before stopping the clock",
        "raises without CUDA"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op without CUDA"),
      C("torch.cuda.get_device_name(torch.device(args.device))", "torch_cuda_api", "replace", True,
        'print(f"evaluating {args.model} on {torch.npu.get_device_name(torch.device(args.device))}")',
        "raises without CUDA (and rejects an npu device)"),
  ])

E("gliner_onnx", "convert_to_onnx.py", "explicit_replacement",
  "urchade/GLiNER convert_to_onnx.py (torch.onnx.export + onnxruntime quantize/benchmark)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("gpu_inputs = tuple(t.cuda() for t in all_inputs)", "tensor_to_device", "replace", True,
        "gpu_inputs = tuple(t.npu() for t in all_inputs)", ".cuda() raises without CUDA"),
      C("model.cuda().eval()", "tensor_to_device", "replace", True, "model.npu().eval()",
        ".cuda() raises without CUDA"),
      C("torch.cuda.synchronize()  # warm-up done", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # warm-up done", "raises without CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
      C('("CUDAExecutionProvider", {"device_id": 0, "arena_extend_strategy": "kNextPowerOfTwo"}),', "device_type",
        "replace", False,
        '("CANNExecutionProvider", {"device_id": 0, "arena_extend_strategy": "kNextPowerOfTwo"}),',
        "ORT silently falls back to the CPU EP; CANN EP availability unconfirmed"),
      C('if "CUDAExecutionProvider" not in session.get_providers():', "device_type", "replace", False,
        'if "CANNExecutionProvider" not in session.get_providers():', "warning only"),
      C('ort_value = ort.OrtValue.ortvalue_from_numpy(arr, "cuda", 0)', "device_type", "replace", True,
        'ort_value = ort.OrtValue.ortvalue_from_numpy(arr, "cpu", 0)',
        "binding inputs to a 'cuda' OrtValue fails with a non-CUDA onnxruntime build"),
      C('binding.bind_output("logits", "cuda")', "device_type", "replace", True,
        'binding.bind_output("logits", "cpu")', "same: no CUDA allocator in the NPU-host onnxruntime"),
      C("ref = gliner_model.model(*[t.cuda() for t in all_inputs])", "tensor_to_device", "replace", True,
        "ref = gliner_model.model(*[t.npu() for t in all_inputs])[0].float().cpu().numpy()",
        ".cuda() raises without CUDA"),
  ])

E("gliner_triton", "gliner/modeling/span_kernels.py", "kernel_rewrite",
  "GLiNER-style fused span max-pool (Triton fwd/bwd kernels + autograd.Function + reference path)",
  [
      C("_CONFIGS = [triton.Config(", "triton_kernel_tuning", "replace", False,
        '_CONFIGS = [triton.Config({"BLOCK_D": bd}, num_warps=1, num_stages=1) for bd in (256, 512, 1024)]',
        "warp counts/stages are GPU tuning; triton-ascend wants larger vector tiles (perf, unconfirmed values)"),
      C('assert x.is_cuda, "span_maxpool_triton expects CUDA tensors"', "device_type", "replace", True,
        'assert x.device.type == "npu", "span_maxpool_triton expects NPU tensors"',
        "is_cuda is False for NPU tensors -> AssertionError on the kernel path"),
      C("grid = lambda meta: (B * S, triton.cdiv(D, meta[\"BLOCK_D\"]))", "triton_kernel_tuning", "replace", False,
        'grid = lambda meta: (min(B * S, NUM_CORES), triton.cdiv(D, meta["BLOCK_D"]))  # loop over spans in-kernel',
        "one program per span launches far more programs than AI cores; Ascend prefers a core-count grid "
        "(perf, unconfirmed)"),
      C("with torch.cuda.device(x.device.index):", "torch_cuda_api", "replace", True,
        "with torch.npu.device(x.device.index):", "torch.cuda.device raises without CUDA"),
      C("sm_count = torch.cuda.get_device_properties(grad_out.device).multi_processor_count",
        "device_capability_check", "replace", True,
        "sm_count = torch.npu.get_device_properties(grad_out.device).vector_core_num",
        "NPU device properties have no multi_processor_count (only name, total_memory, L2_cache_size, "
        "cube_core_num, vector_core_num)"),
      C("num_warps=4,", "triton_kernel_tuning", "removal", False, None,
        "warp count is a CUDA launch hint; no meaning for Ascend vector cores"),
      C("use_triton = HAS_TRITON and torch.cuda.is_available()", "torch_cuda_api", "replace", False,
        "use_triton = HAS_TRITON and torch.npu.is_available()",
        "False on NPU -> silently uses the (slower, memory-hungry) reference path"),
      C('assert HAS_TRITON and torch.cuda.is_available(), "span_kernels=triton needs triton and a CUDA device"',
        "torch_cuda_api", "replace", True,
        'assert HAS_TRITON and torch.npu.is_available(), "span_kernels=triton needs triton-ascend and an NPU"',
        "configs with span_kernels: triton hit this assert on an NPU host"),
  ])

E("gliner_pyproject", "pyproject.toml", "explicit_replacement",
  "urchade/GLiNER pyproject.toml (with gpu/flash/kernels/llm extras)",
  [
      C('"torch>=2.0.0",', "import_torch_npu", "npu_only_addition", True, '"torch-npu>=2.1.0",',
        "torch_npu must be installed next to a matching torch"),
      C('"onnxruntime-gpu",', "unsupported_op_workaround", "replace", False, '"onnxruntime",',
        "CUDA build of onnxruntime is useless on Ascend; optional extra (CANN EP build unconfirmed)"),
      C('"flashdeberta",', "attention_kernel", "removal", False, None,
        "Triton/CUDA attention kernels; optional extra"),
      C('"triton>=2.2.0",', "triton_kernel_tuning", "replace", True, '"triton-ascend",',
        "the CUDA Triton backend cannot target NPU; triton-ascend is the Ascend backend"),
      C('"flash-attn>=2.5.0",', "attention_kernel", "removal", True, None,
        "flash-attn cannot be installed on Ascend, so `pip install gliner[llm]` fails"),
  ])

E("gliner_accel_cfg", "configs/accelerate_multi_gpu.yaml", "explicit_replacement",
  "accelerate config file generated by `accelerate config` for GLiNER multi-GPU training",
  [
      C("distributed_type: MULTI_GPU", "distributed_framework", "replace", True, "distributed_type: MULTI_NPU",
        "accelerate has a dedicated MULTI_NPU mode (native NPU support since 0.22); MULTI_GPU expects CUDA/NCCL"),
      C("dynamo_backend: INDUCTOR", "compile_mode", "replace", False, "dynamo_backend: 'NO'",
        "Inductor on NPU only with torch_npu >= 2.6 graph mode; safer off (unconfirmed for this stack)"),
  ])

E("gliner_launch", "scripts/train_multi_gpu.sh", "explicit_replacement",
  "GLiNER multi-GPU `accelerate launch` wrapper script",
  [
      C("=set -eo pipefail", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment must be sourced before torch_npu can load"),
      C("export CUDA_VISIBLE_DEVICES=${GPUS}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${GPUS}",
        "ignored on Ascend -> the chosen device subset is silently not applied"),
      C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None, "no effect under HCCL"),
      C("export NCCL_SOCKET_IFNAME=", "env_var", "replace", True,
        "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
        "multi-node: without it HCCL may pick a NIC that cannot reach the root node and link setup fails"),
      C("export NCCL_IB_DISABLE=", "env_var", "removal", False, None, "NCCL-only knob"),
      C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
        "HCCL watchdog equivalent (default already 1 per MindCluster docs)"),
      C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", "replace", False,
        "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
        "allocator tuning only; NPU variant exists (needs recent HDK)"),
      C("nvidia-smi --query-gpu=index,name,memory.total,memory.used", "torch_cuda_api", "replace", True,
        'npu-smi info | tee "${LOG_DIR}/npus_node${NODE_RANK}.txt"',
        "nvidia-smi is absent; with pipefail + set -e the script aborts here"),
  ])

# ---------------------------------------------------------------- REBEL
E("rebel_train", "src/train.py", "explicit_replacement",
  "Babelscape/rebel src/train.py (hydra + pytorch-lightning Trainer(gpus=..., precision=...))",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("if conf.gpus and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if conf.gpus and not torch.npu.is_available():",
        "False on an NPU host -> silently falls back to CPU training"),
      C("gpus=conf.gpus,", "device_type", "replace", True,
        "accelerator=NPUAccelerator(), devices=conf.gpus,",
        "gpus=N requests CUDA devices and Lightning raises when none exist; Lightning has no built-in NPU "
        "accelerator, so a custom Accelerator is needed (unconfirmed which one)"),
      C("strategy=conf.strategy if conf.gpus > 1 else None,", "dist_backend", "replace", False,
        'strategy=DDPStrategy(process_group_backend="hccl") if conf.gpus > 1 else None,',
        "Lightning picks nccl only for CUDA root devices (gloo otherwise); multi-NPU needs hccl (unconfirmed "
        "how the custom accelerator resolves it)"),
  ])

E("rebel_plmodule", "src/pl_modules.py", "explicit_replacement",
  "Babelscape/rebel src/pl_modules.py (BasePLModule LightningModule: generate/validation/optimizers)",
  [
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA"),
  ])

E("rebel_conf", "conf/train/default_train.yaml", "explicit_replacement",
  "Babelscape/rebel conf/train/default_train.yaml (hydra trainer config)",
  [
      C("=precision: 16", "amp", "replace", False,
        "precision: 16  # needs an NPU-aware MixedPrecisionPlugin(device='npu')",
        "Lightning native AMP autocasts on the accelerator's device type; with a custom NPU accelerator this must "
        "target 'npu' (unconfirmed)"),
      C("dataloader_pin_memory: True", "pin_memory", "replace", False, "dataloader_pin_memory: False",
        "perf only; pinning without pin_memory_device='npu' is skipped (unconfirmed)"),
  ])

E("rebel_extract", "examples/extract_relations.py", "explicit_replacement",
  "Babelscape/rebel-large model-card usage (text2text-generation pipeline + manual generate)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("device=0 if not args.cpu else -1,", "device_type", "replace", False,
        'device="npu:0" if not args.cpu else -1,',
        "an int device means 'accelerator N'; recent transformers maps it to npu:N when torch_npu is present "
        "(unconfirmed), an explicit string is safer"),
      C('device = torch.device("cpu" if args.cpu else "cuda")', "device_type", "replace", True,
        'device = torch.device("cpu" if args.cpu else "npu")', "cuda device string"),
      C("if not args.cpu and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if not args.cpu and not torch.npu.is_available():", "exits with 'CUDA is not available' on NPU"),
      C("torch.cuda.max_memory_allocated() / 2**20", "torch_cuda_api", "replace", False,
        'print(f"peak NPU memory: {torch.npu.max_memory_allocated() / 2**20:.0f} MiB")',
        "reports 0 without CUDA; log only"),
  ])

# ---------------------------------------------------------------- ReFinED
E("refined_processor", "src/refined/inference/processor.py", "device_branch_or_abstraction",
  "amazon-science/ReFinED src/refined/inference/processor.py (Refined.from_pretrained, process_text)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "module has a __main__ demo and (after the port) uses torch.npu"),
      C('self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace",
        True, 'self.device = torch.device("npu" if torch.npu.is_available() else "cpu")',
        "default device silently becomes CPU on an NPU host"),
      C('if self.device.type == "cuda":', "device_type", "replace", True,
        'if self.device.type in ("cuda", "npu"):',
        ("with device.type == 'npu' the 6 GB description table silently stays fp32 (12 GB) on the host; "
        "model.to() only moves it if it is a registered buffer, otherwise look-ups hit a device mismatch")),
      C("self.precomputed_descriptions.half().cuda(self.device)", "tensor_to_device", "replace", True,
        "self.precomputed_descriptions = self.precomputed_descriptions.half().to(self.device)",
        ".cuda(device) with an npu device / no CUDA raises"),
      C("with torch.no_grad(), torch.cuda.amp.autocast(enabled=self.use_fp16):", "amp", "replace", True,
        'with torch.no_grad(), torch.autocast(device_type="npu", dtype=torch.float16, enabled=self.use_fp16):',
        "CUDA autocast disables itself without CUDA -> inference silently runs fp32"),
      C("pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
        "perf only (unconfirmed whether pinning happens without pin_memory_device)"),
      C('refined = Refined.from_pretrained(model_name="wikipedia_model", entity_set="wikipedia", device="cuda:0")',
        "device_type", "replace", True,
        'refined = Refined.from_pretrained(model_name="wikipedia_model", entity_set="wikipedia", device="npu:0")',
        "cuda device string in the demo"),
  ])

E("refined_train", "src/refined/training/train/train.py", "explicit_replacement",
  "amazon-science/ReFinED src/refined/training/train/train.py (GradScaler/autocast loop, optional torchrun DDP)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", True,
        "from torch_npu.npu.amp import GradScaler, autocast",
        "CUDA autocast/GradScaler disable themselves without CUDA -> fp32 training, no loss scaling"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "silent no-op without CUDA; torch.manual_seed already seeds registered backends"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "raises without CUDA"),
      C('dist.init_process_group(backend="nccl", init_method="env://")', "dist_backend", "replace", True,
        'dist.init_process_group(backend="hccl", init_method="env://")', "NCCL is unavailable on Ascend"),
      C('training_args.device = f"cuda:{local_rank}"', "device_type", "replace", True,
        'training_args.device = f"npu:{local_rank}"', "cuda device string"),
      C("torch.cuda.get_device_name(local_rank)", "torch_cuda_api", "replace", True,
        'LOG.info(f"rank {dist.get_rank()} / {dist.get_world_size()} on {torch.npu.get_device_name(local_rank)}")',
        "raises without CUDA"),
      C("pin_memory=True if training_args.n_gpu == 1 else False,", "pin_memory", "replace", False,
        'pin_memory=True if training_args.n_gpu == 1 else False, pin_memory_device="npu",',
        "perf only (unconfirmed)"),
      C("model = DataParallelReFinED(model, device_ids=list(range(training_args.n_gpu)), output_device=0)",
        "distributed_framework", "replace", True,
        'raise ValueError("DataParallel is not supported on NPU; launch with torchrun to use DDP")',
        "torch.nn.DataParallel (which DataParallelReFinED subclasses) is unsupported on Ascend; reached with "
        "--n_gpu > 1"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "guard is False on NPU, so the cache flush is just skipped"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op without CUDA"),
      C('f"mem {torch.cuda.memory_allocated() / 1e9:.1f}GB"', "torch_cuda_api", "replace", False,
        'f"mem {torch.npu.memory_allocated() / 1e9:.1f}GB"', "reports 0 without CUDA; log only"),
  ])

E("refined_args", "src/refined/training/train/training_args.py", "explicit_replacement",
  "amazon-science/ReFinED src/refined/training/train/training_args.py (TrainingArgs dataclass + argparse)",
  [
      C('device: str = "cuda:0"', "device_type", "replace", True, 'device: str = "npu:0"',
        "default used by programmatic callers (fine-tuning args)"),
      C("n_gpu: int = field(default_factory=torch.cuda.device_count)", "torch_cuda_api", "replace", False,
        "n_gpu: int = field(default_factory=torch.npu.device_count)",
        "0 on NPU; only drives worker counts, pinning and the DataParallel switch"),
      C('default="cuda:0" if torch.cuda.is_available() else "cpu",', "device_type", "replace", True,
        'default="npu:0" if torch.npu.is_available() else "cpu",',
        "default silently becomes CPU on an NPU host"),
      C("default=torch.cuda.device_count(),", "torch_cuda_api", "replace", False,
        "default=torch.npu.device_count(),", "0 on NPU; same as the dataclass default"),
  ])

E("refined_utils", "src/refined/utilities/general_utils.py", "device_branch_or_abstraction",
  "amazon-science/ReFinED src/refined/utilities/general_utils.py (logger, batching, device helpers)",
  [
      C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpu = torch.npu.device_count()",
        "0 on NPU -> get_device() silently returns CPU"),
      C('device = "cuda:0" if n_gpu > 0 else "cpu"', "device_type", "replace", True,
        'device = "npu:0" if n_gpu > 0 else "cpu"', "cuda device string"),
      C('["nvidia-smi", "--query-gpu=memory.used", "--format=csv,nounits,noheader"],', "torch_cuda_api", "replace",
        False, '["npu-smi", "info", "-t", "usages", "-i", "0"],',
        "FileNotFoundError is caught and {} returned; npu-smi output needs different parsing"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
        "memory logging is silently skipped on NPU"),
      C("for i in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", False,
        "for i in range(torch.npu.device_count()):", "logging only"),
      C("allocated = torch.cuda.memory_allocated(i) / 2**30", "torch_cuda_api", "replace", False,
        "allocated = torch.npu.memory_allocated(i) / 2**30", "logging only"),
      C("reserved = torch.cuda.memory_reserved(i) / 2**30", "torch_cuda_api", "replace", False,
        "reserved = torch.npu.memory_reserved(i) / 2**30", "logging only"),
  ])

# ---------------------------------------------------------------- BLINK
E("blink_params", "blink/common/params.py", "explicit_replacement",
  "facebookresearch/BLINK blink/common/params.py (BlinkParser: --no_cuda, --fp16, --data_parallel flags)",
  [])

E("blink_biencoder", "blink/biencoder/biencoder.py", "explicit_replacement",
  "facebookresearch/BLINK blink/biencoder/biencoder.py (BiEncoderRanker)",
  [
      C('self.device = torch.device("cuda" if torch.cuda.is_available() and not params["no_cuda"] else "cpu")',
        "device_type", "replace", True,
        'self.device = torch.device("npu" if torch.npu.is_available() and not params["no_cuda"] else "cpu")',
        "silently CPU on an NPU host"),
      C("self.n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
        "self.n_gpu = torch.npu.device_count()", "0 on NPU; only used for seeding and logging"),
      C("self.model = torch.nn.DataParallel(self.model)", "distributed_framework", "replace", True,
        'logger.warning("--data_parallel ignored: torch.nn.DataParallel is not supported on NPU")',
        "torch.nn.DataParallel is unsupported on Ascend; reached with --data_parallel"),
      C("state_dict = torch.load(fname)", "device_type", "replace", True,
        'state_dict = torch.load(fname, map_location="cpu")',
        "released BLINK checkpoints hold CUDA storages; deserialising them without map_location raises when "
        "CUDA is unavailable"),
  ])

E("blink_train_bi", "blink/biencoder/train_biencoder.py", "explicit_replacement",
  "facebookresearch/BLINK blink/biencoder/train_biencoder.py (+ get_bert_optimizer from common/optimizer.py)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", True,
        "from torch_npu.optim import NpuFusedBertAdam",
        "apex FusedAdam is a CUDA multi-tensor kernel; not provided by Ascend apex (--fp16 path)"),
      C("optimizer = FusedAdam(optimizer_grouped_parameters, lr=learning_rate, bias_correction=False)",
        "fused_optimizer", "replace", True,
        "optimizer = NpuFusedBertAdam(optimizer_grouped_parameters, lr=learning_rate, max_grad_norm=-1)",
        "BertAdam-style (no bias correction) NPU fused optimizer; clipping stays in the training loop"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "silent no-op without CUDA"),
      C("from apex import amp", "amp", "replace", False, "from apex import amp  # Ascend apex patch (O1/O2 on NPU)",
        "Ascend's apex patch provides apex.amp O1/O2 on NPU, so the call sites can stay; switching to "
        "torch.npu.amp is the cleaner alternative"),
  ])

E("blink_faiss", "blink/indexer/faiss_indexer.py", "explicit_replacement",
  "facebookresearch/BLINK blink/indexer/faiss_indexer.py (DPR-derived flat/HNSW indexers, plus a GPU flat indexer)",
  [
      C("res = faiss.StandardGpuResources()", "unsupported_op_workaround", "removal", False, None,
        "faiss-gpu has no Ascend backend; the GPU class is dead on an NPU host (exact search could be rewritten "
        "as torch.mm + topk on the NPU for speed)"),
      C("self.index = faiss.index_cpu_to_gpus_list(self.index, co=co, gpus=self.gpu_ids)",
        "unsupported_op_workaround", "removal", False, None, "same: multi-GPU sharding has no NPU counterpart"),
      C("=elif use_gpu:", "unsupported_op_workaround", "replace", True,
        "elif use_gpu and faiss.get_num_gpus() > 0:  # faiss-gpu has no Ascend backend",
        "--faiss_gpu on an NPU host ends in DenseFlatGpuIndexer's RuntimeError; fall back to the CPU index"),
  ])

E("blink_main_dense", "blink/main_dense.py", "explicit_replacement",
  "facebookresearch/BLINK blink/main_dense.py (bi-encoder retrieval + cross-encoder re-ranking CLI)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("candidate_encoding = candidate_encoding.half().cuda()", "tensor_to_device", "replace", True,
        "candidate_encoding = candidate_encoding.half().to(biencoder.device)", ".cuda() raises without CUDA"),
      C("with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
        "CUDA autocast disables itself; fp16 candidate matrix x fp32 context would then fail with a dtype "
        "mismatch"),
      C('def _run_crossencoder(crossencoder, dataloader, logger, context_len, device="cuda"):', "device_type",
        "replace", True,
        'def _run_crossencoder(crossencoder, dataloader, logger, context_len, device="npu"):',
        "default device string used by run()"),
  ])

E("blink_zeshel_sh", "examples/zeshel/train_zeshel.sh", "explicit_replacement",
  "facebookresearch/BLINK zero-shot EL README commands turned into a launcher script",
  [
      C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment for torch_npu"),
      C("export CUDA_VISIBLE_DEVICES=$GPUS", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=$GPUS",
        "ignored on Ascend; device selection silently lost"),
      C("nvidia-smi -L", "torch_cuda_api", "replace", False, "npu-smi info -l",
        "no set -e: the missing tool only prints an error"),
      C("--type_optimization all_encoder_layers --data_parallel", "distributed_framework", "replace", False,
        "--type_optimization all_encoder_layers \\",
        "biencoder.py's port turns --data_parallel into a warning; dropping the flag is cosmetic"),
      C("--zeshel True --data_parallel", "distributed_framework", "replace", False, "--zeshel True",
        "eval_biencoder also builds BiEncoderRanker, which ignores the flag after the port"),
      C("--add_linear --data_parallel", "distributed_framework", "replace", True, "--add_linear \\",
        "crossencoder.py (not in this probe) wraps the model in torch.nn.DataParallel when the flag is set"),
      C("CUDA_VISIBLE_DEVICES=0,1,2,3 python blink/crossencoder/train_cross.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3 python blink/crossencoder/train_cross.py \\",
        "ignored on Ascend"),
  ])

# ---------------------------------------------------------------- spaCy
E("spacy_cfg", "configs/ner_trf.cfg", "explicit_replacement",
  "spaCy v3 transformer NER + entity_linker training config (spacy-transformers TransformerModel.v3)",
  [
      C("=mixed_precision = true", "amp", "replace", False, "mixed_precision = false",
        "thinc/spaCy run on CPU on an Ascend host; thinc's PyTorchShim refuses mixed precision when CUDA AMP is "
        "unavailable (unconfirmed: not in the knowledge notes)"),
      C("=enabled = true", "amp", "replace", False, "enabled = false",
        "grad scaler of the same CUDA-AMP path (unconfirmed)"),
  ])

E("spacy_project", "project.yml", "explicit_replacement",
  "explosion/projects-style project.yml for a transformer NER + NEL pipeline",
  [
      C("=gpu_id: 0", "device_type", "replace", True, "gpu_id: -1",
        "spaCy's GPU path is cupy/CUDA (cupy has no Ascend port); --gpu-id 0 calls require_gpu and fails"),
      C("assert spacy.prefer_gpu()", "unsupported_op_workaround", "removal", True, None,
        "prefer_gpu() is False on an Ascend host, so the setup step's assert aborts the workflow"),
  ])

E("spacy_eval", "scripts/evaluate_ner.py", "device_branch_or_abstraction",
  "spaCy project evaluation script with typer CLI, thinc GPU allocator and an HF token-classification baseline",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "HF baseline moves to the NPU after the port"),
      C('set_gpu_allocator("pytorch")', "unsupported_op_workaround", "removal", False, None,
        "thinc GPU allocator only matters for cupy/CUDA; unused once spaCy runs on CPU"),
      C("=require_gpu(gpu_id)", "unsupported_op_workaround", "replace", True,
        "spacy.require_cpu()  # thinc has no Ascend backend; only the torch baseline uses the NPU",
        "require_gpu raises without cupy/CUDA"),
      C("torch.cuda.set_device(gpu_id)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu_id)",
        "raises without CUDA"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op without CUDA"),
      C('"device": f"cuda:{gpu_id}" if on_gpu else "cpu",', "device_type", "replace", False,
        '"device": f"npu:{gpu_id}" if on_gpu else "cpu",', "metrics field only"),
      C('results["gpu_name"] = torch.cuda.get_device_name(gpu_id)', "torch_cuda_api", "replace", True,
        'results["gpu_name"] = torch.npu.get_device_name(gpu_id)', "raises without CUDA"),
      C('results["peak_mem_mb"] = torch.cuda.max_memory_allocated(gpu_id) / 2**20', "torch_cuda_api", "replace",
        False, 'results["peak_mem_mb"] = torch.npu.max_memory_allocated(gpu_id) / 2**20',
        "reports 0 without CUDA"),
      C('device = f"cuda:{gpu_id}" if on_gpu else "cpu"', "device_type", "replace", True,
        'device = f"npu:{gpu_id}" if on_gpu else "cpu"', "HF baseline device string"),
  ])

E("spacy_reqs", "requirements.txt", "explicit_replacement",
  "requirements.txt of an IE pipeline repo (spaCy[cuda12x], cupy, torch cu121, faiss-gpu, GLiNER, Flair)",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "Ascend docs install CPU torch on x86 (plain PyPI on aarch64); the CUDA index only adds nvidia-* wheels"),
      C("torch==2.1.2+cu121", "import_torch_npu", "replace", True, "torch==2.1.0",
        "torch_npu wheels exist for torch 2.1.0 (not 2.1.2) and the version must match exactly; +cu121 builds "
        "are x86-only"),
      C("# torchvision / torchaudio are not needed", "import_torch_npu", "npu_only_addition", True,
        "torch-npu==2.1.0.post12", "the torch-npu pin goes right after the torch pin"),
      C("spacy[cuda12x,transformers,lookups]>=3.7.2,<3.8.0", "unsupported_op_workaround", "replace", False,
        "spacy[transformers,lookups]>=3.7.2,<3.8.0", "cuda12x extra only pulls cupy; useless on Ascend"),
      C("cupy-cuda12x>=12.0.0", "unsupported_op_workaround", "removal", False, None,
        "cupy has no Ascend support; dead dependency"),
      C("faiss-gpu==1.7.2", "unsupported_op_workaround", "replace", False, "faiss-cpu==1.7.4",
        "GPU faiss cannot use the NPU; the CPU index is what runs (wheel availability on aarch64 unconfirmed)"),
      C("nvidia-ml-py>=12.535.133", "unsupported_op_workaround", "removal", False, None,
        "NVML has no NPU equivalent (use npu-smi / torch.npu.mem_get_info)"),
      C("gpustat>=1.1.1", "unsupported_op_workaround", "removal", False, None, "NVML-based monitoring tool"),
  ])

# ---------------------------------------------------------------- Flair
E("flair_train", "train_ner_flair.py", "device_branch_or_abstraction",
  "flairNLP/flair FLERT / BiLSTM-CRF NER training recipes (flair.device, ModelTrainer.fine_tune/train)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("if gpu >= 0 and torch.cuda.is_available():", "device_type", "add_branch", True,
        'elif gpu >= 0 and torch.npu.is_available(): return torch.device(f"npu:{gpu}")',
        "without an NPU branch flair.device silently becomes CPU"),
      C('if flair.device.type == "cuda":', "device_type", "replace", False, 'if flair.device.type == "npu":',
        "memory log is just skipped"),
      C("torch.cuda.max_memory_allocated(flair.device)", "torch_cuda_api", "replace", False,
        'log.info(f"peak NPU memory: {torch.npu.max_memory_allocated(flair.device) / 2**30:.1f} GiB")',
        "log only"),
      C('flair.device = torch.device("cuda:%d" % gpu) if torch.cuda.is_available() else torch.device("cpu")',
        "device_type", "replace", True,
        'flair.device = torch.device("npu:%d" % gpu) if torch.npu.is_available() else torch.device("cpu")',
        "inference helper silently loads taggers on CPU"),
  ])

# ---------------------------------------------------------------- packaging
E("docker_gpu", "docker/Dockerfile", "explicit_replacement",
  "CUDA Dockerfile for IE services (nvidia/cuda base, cu121 torch, NVIDIA apex --cuda_ext, spacy[cuda12x])",
  [
      C("FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04", "import_torch_npu", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "needs a CANN toolkit base image; the CUDA image has no Ascend runtime"),
      C('ENV TORCH_CUDA_ARCH_LIST="7.0;8.0;8.6;9.0+PTX"', "env_var", "removal", False, None, "nvcc-only setting"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=all",
        "only read by the Ascend Docker Runtime; plain docker needs --device /dev/davinciN instead"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "nvidia-container-runtime knob"),
      C("RUN pip install torch==2.1.2 --index-url https://download.pytorch.org/whl/cu121", "import_torch_npu",
        "replace", True,
        "RUN pip install torch==2.1.0 --index-url https://download.pytorch.org/whl/cpu && pip install torch-npu==2.1.0.post12",
        "CPU torch matching a torch-npu wheel, plus torch-npu itself"),
      C("RUN git clone https://github.com/NVIDIA/apex /tmp/apex", "custom_cuda_extension", "replace", True,
        "RUN git clone https://gitee.com/ascend/apex /tmp/apex \\",
        "NVIDIA apex's --cuda_ext build needs nvcc; Ascend ships an apex patch instead"),
      C('--config-settings "--build-option=--cpp_ext" --config-settings "--build-option=--cuda_ext"',
        "custom_cuda_extension", "replace", True, "&& bash scripts/build.sh --python=3.10 && pip install apex/dist/apex-*.whl \\",
        "CUDA extension build fails without nvcc"),
      C('RUN pip install "spacy[cuda12x,transformers]==3.7.4"', "unsupported_op_workaround", "replace", False,
        'RUN pip install "spacy[transformers]==3.7.4" \\', "cupy extra is useless on Ascend"),
      C("HEALTHCHECK --interval=60s --timeout=10s CMD nvidia-smi > /dev/null || exit 1", "torch_cuda_api",
        "replace", True, "HEALTHCHECK --interval=60s --timeout=10s CMD npu-smi info > /dev/null || exit 1",
        "nvidia-smi is absent, so the container is reported unhealthy forever"),
      C('"--device", "cuda"]', "device_type", "replace", True,
        'CMD ["python", "-m", "ie_pipeline.serve", "--host", "0.0.0.0", "--port", "8080", "--device", "npu"]',
        "service started on a cuda device"),
  ])

E("conda_env", "environment.yml", "explicit_replacement",
  "conda environment.yml for BLINK/ReFinED research (pytorch-cuda, faiss-gpu, cudatoolkit-dev)",
  [
      C("=- nvidia", "import_torch_npu", "removal", False, None, "CUDA package channel no longer needed"),
      C("=- pytorch-cuda=12.1", "import_torch_npu", "replace", True, "- cpuonly",
        "pytorch-cuda selects the CUDA build; Ascend needs the CPU build of torch under torch-npu"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
        "torch-npu is pip-only and must match pytorch=2.1.0"),
      C("=- faiss-gpu=1.7.4", "unsupported_op_workaround", "replace", False, "- faiss-cpu=1.7.4",
        "GPU faiss cannot use the NPU (aarch64 package availability unconfirmed)"),
      C("=- cudatoolkit-dev=11.7", "custom_cuda_extension", "removal", False, None,
        "nvcc toolchain for building CUDA extensions; nothing to build on Ascend (availability on aarch64 "
        "unconfirmed)"),
      C("=- nvidia-ml-py3", "unsupported_op_workaround", "removal", False, None, "NVML bindings"),
      C("CUDA_DEVICE_ORDER: PCI_BUS_ID", "env_var", "removal", False, None, "CUDA-only"),
      C('NCCL_P2P_DISABLE: "1"', "env_var", "removal", False, None, "NCCL-only workaround"),
  ])
