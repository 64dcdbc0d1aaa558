"""Labels for probe15 (hand-written synthetic upstream files; see ../README.md).

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



KB = "knowledge torch-npu-migration.md"
TSV = "knowledge ops/torch_api_npu_support_2.7.1.tsv"
TN = "import torch\nimport torch_npu"
TN_NOTE = "torch_npu must be imported to register the npu device / torch.npu namespace (§1.1 " + KB + ")"

# ---------------------------------------------------------------- bitsandbytes LLM.int8()
E("bnb_int8_linear", "examples/int8_inference.py", "explicit_replacement",
  "bitsandbytes LLM.int8() Linear8bitLt inference example", [
    C("=import torch", "import_torch_npu", A, True, TN, TN_NOTE),
    C("import bitsandbytes as bnb", "custom_cuda_extension", R, True,
      "import torch_npu  # int8 weight-only matmul: torch_npu.npu_weight_quant_batchmatmul",
      "LLM.int8()/Linear8bitLt is not listed for Ascend in bitsandbytes (only NF4 in the multi-backend branch), §6 " + KB),
    C("from bitsandbytes.nn import Linear8bitLt, Int8Params", "custom_cuda_extension", R, True,
      "from .npu_int8 import NpuInt8Linear",
      "Linear8bitLt's int8 matmul (CUDA igemmlt) has no Ascend kernel; §6 " + KB),
    C("new = Linear8bitLt(", "custom_cuda_extension", R, True, "new = NpuInt8Linear(",
      "int8 weight-only linear built on torch_npu.npu_weight_quant_batchmatmul (§5); the outlier threshold has no equivalent"),
    C("new.weight = Int8Params(child.weight.data.clone()", "custom_cuda_extension", R, True,
      "new.load_fp16_weight(child.weight.data.clone())",
      "Int8Params quantizes lazily on .cuda(); on NPU the weight is quantized explicitly (per-channel int8 + antiquant_scale)"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", R, True, "torch.npu.synchronize(device)",
      "torch.cuda.synchronize fails without a CUDA build; torch.npu.synchronize (§2.1)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "as above"),
    C("int8 = Linear8bitLt(1024, 1024", "custom_cuda_extension", R, True,
      "int8 = NpuInt8Linear(1024, 1024, bias=False)", "bnb module has no NPU int8 path (§6)"),
    C("int8.weight = Int8Params(fp16.weight", "custom_cuda_extension", R, True,
      "int8.load_fp16_weight(fp16.weight.data.clone())", "see Int8Params above"),
    C("fp16 = fp16.cuda()", "tensor_to_device", R, True, "fp16 = fp16.npu()", ".cuda() needs CUDA; .npu()"),
    C("int8 = int8.cuda()", "tensor_to_device", R, True, "int8 = int8.npu()",
      ".cuda() needs CUDA; on NPU quantization no longer hooks the device move"),
    C("dtype=torch.float16, device=\"cuda\")", "device_type", R, True,
      "x = torch.randn(8, 1024, dtype=torch.float16, device=\"npu\")", "\"cuda\" device string"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", R, True, "if not torch.npu.is_available():",
      "is_available() is False on an NPU host, so the script exits"),
    C("device = torch.device(\"cuda:0\")", "device_type", R, True, "device = torch.device(\"npu:0\")", "\"cuda:0\" device"),
    C("print(f\"bitsandbytes {bnb.__version__}", "torch_cuda_api", R, True,
      "print(f\"device {torch.npu.get_device_name(0)}\")", "torch.cuda.get_device_name → torch.npu (§2.1); bnb gone"),
    C("print(f\"allocated: {torch.cuda.memory_allocated()", "torch_cuda_api", R, True,
      "print(f\"allocated: {torch.npu.memory_allocated() / 2**30:.2f} GiB\")", "torch.cuda.memory_allocated → torch.npu (§2.1)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "empty_cache is a no-op without CUDA initialised; still renamed"),
])

# ---------------------------------------------------------------- bitsandbytes paged optimizers
E("bnb_paged_optim", "scripts/train_paged_optim.py", "explicit_replacement",
  "bitsandbytes paged 8-bit AdamW fine-tuning script", [
    C("=import torch", "import_torch_npu", A, True, TN, TN_NOTE),
    C("import bitsandbytes as bnb", "fused_optimizer", R, True, "from torch_npu.optim import NpuFusedAdamW",
      "bitsandbytes 8-bit/paged optimizers are not listed for Ascend (§6 " + KB + "); torch_npu.optim fused optimizers (§5)"),
    C("os.environ.setdefault(\"PYTORCH_CUDA_ALLOC_CONF\"", "env_var", R, False,
      "os.environ.setdefault(\"PYTORCH_NPU_ALLOC_CONF\", \"expandable_segments:True\")",
      "the CUDA allocator variable is ignored by torch_npu; PYTORCH_NPU_ALLOC_CONF expandable_segments (§1.6 " + KB + ")"),
    C("return bnb.optim.PagedAdamW8bit(", "fused_optimizer", R, True,
      "return NpuFusedAdamW(params, lr=lr, betas=(0.9, 0.95), weight_decay=0.0)",
      "paged 8-bit state lives in CUDA unified memory; no NPU implementation (§6)"),
    C("return bnb.optim.PagedAdamW32bit(", "fused_optimizer", R, True,
      "return NpuFusedAdamW(params, lr=lr, betas=(0.9, 0.95), weight_decay=0.0)", "as above"),
    C("return bnb.optim.AdamW8bit(", "fused_optimizer", R, True,
      "return NpuFusedAdamW(params, lr=lr, betas=(0.9, 0.95))", "8-bit optimizers not listed for NPU (§6)"),
    C("return torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.95), fused=True)", "fused_optimizer", R, False,
      "return NpuFusedAdamW(params, lr=lr, betas=(0.9, 0.95))",
      "msFmkTransplt performance advice torch.optim.AdamW → NpuFusedAdamW (§3.5); whether fused=True dispatches on npu is unconfirmed"),
    C("device = \"cuda\" if torch.cuda.is_available() else \"cpu\"", "device_type", R, True,
      "device = \"npu\" if torch.npu.is_available() else \"cpu\"", "is_available() is False on an NPU host → trains on CPU"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=not args.bf16)", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler(enabled=not args.bf16)",
      "CUDA GradScaler does not scale NPU losses; torch.npu.amp.GradScaler (§2.1)"),
    C("with torch.cuda.amp.autocast(dtype=amp_dtype):", "amp", R, True,
      "with torch.npu.amp.autocast(dtype=amp_dtype):", "CUDA autocast is inactive for NPU tensors"),
    C("peak = torch.cuda.max_memory_allocated()", "torch_cuda_api", R, True,
      "peak = torch.npu.max_memory_allocated() / 2**30", "torch.cuda memory stats → torch.npu (§2.1)"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True,
      "torch.npu.reset_peak_memory_stats()", "torch.cuda → torch.npu (§2.1)"),
])

# ---------------------------------------------------------------- QLoRA NF4
E("qlora_nf4", "qlora.py", "explicit_replacement", "QLoRA (artidoro/qlora) 4-bit NF4 + LoRA training script", [
    C("=import torch", "import_torch_npu", A, True, TN, TN_NOTE),
    C("optim: str = field(default=\"paged_adamw_32bit\")", "fused_optimizer", R, True,
      "optim: str = field(default=\"adamw_torch\")",
      "paged optimizers come from bitsandbytes' CUDA unified-memory path; only NF4 quant/dequant is listed for Ascend (§6 " + KB + ")"),
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", R, True, "n_gpus = torch.npu.device_count()",
      "torch.cuda.device_count() is 0 on an NPU host → empty max_memory map"),
    C("if torch.cuda.is_bf16_supported():", "torch_cuda_api", R, True, "if torch.npu.is_bf16_supported():",
      "torch.cuda.is_bf16_supported needs a CUDA device; torch.npu.is_bf16_supported (§2.1)"),
])

# ---------------------------------------------------------------- AutoGPTQ
E("autogptq_quant", "examples/quantization/basic_usage_wikitext2.py", "explicit_replacement",
  "AutoGPTQ basic_usage_wikitext2 quantize + perplexity example", [
    C("=import torch", "import_torch_npu", A, True, TN, TN_NOTE),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "no-op without CUDA, but the layer-by-layer eval relies on freeing NPU memory"),
    C("torch.cuda.empty_cache()  # keep only one decoder layer resident", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # keep only one decoder layer resident", "as above"),
    C("device=\"cuda:0\",", "device_type", R, True, "device=\"npu:0\",", "\"cuda:0\" device string"),
    C("use_triton=args.use_triton,", "triton_kernel_tuning", R, False, "use_triton=False,",
      "AutoGPTQ's triton QuantLinear targets CUDA Triton; only reached with --use-triton; triton-ascend compatibility unconfirmed"),
    C("disable_exllama=args.disable_exllama,", "custom_cuda_extension", R, True, "disable_exllama=True,",
      "exllama kernels are an nvcc-built extension (no nvcc path, §6 " + KB + "); default would select them"),
    C("inject_fused_attention=True,", "attention_kernel", R, False, "inject_fused_attention=False,",
      "AutoGPTQ fused attention is written against its CUDA/triton QuantLinear; unconfirmed on NPU, safer off"),
    C("opt_eval(model.model, testenc, \"cuda:0\")", "device_type", R, True,
      "opt_eval(model.model, testenc, \"npu:0\")", "\"cuda:0\" device string"),
])

# ---------------------------------------------------------------- GPTQ-for-LLaMa setup_cuda.py
E("gptq_setup", "setup_cuda.py", "kernel_rewrite", "GPTQ-for-LLaMa setup_cuda.py building the quant_cuda nvcc extension", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME", "custom_cuda_extension", R, True,
      "from torch.utils.cpp_extension import BuildExtension\nfrom torch_npu.utils.cpp_extension import NpuExtension",
      "no nvcc path on Ascend; torch_npu.utils.cpp_extension.NpuExtension (§6 " + KB + ")"),
    C("if CUDA_HOME is None:", "env_var", R, True, "if not os.environ.get(\"ASCEND_HOME_PATH\"):",
      "CUDA_HOME is None on an NPU host; check the CANN toolkit (set_env.sh) instead"),
    C("nvcc_major, nvcc_minor = get_nvcc_version()[:2]", "custom_cuda_extension", X, True, None,
      "runs nvcc at import time; no nvcc on an NPU host"),
    C("print(f\"building quant_cuda with nvcc", "custom_cuda_extension", X, True, None,
      "refers to the removed nvcc version"),
    C("\"nvcc\": [\"-O3\", \"--use_fast_math\"", "custom_cuda_extension", X, True, None,
      "nvcc flags and -gencode arch flags have no meaning for NpuExtension"),
    C("CUDAExtension(", "custom_cuda_extension", R, True, "NpuExtension(", "CUDAExtension → NpuExtension (§6)"),
    C("\"quant_cuda_kernel.cu\",", "custom_cuda_extension", R, True, "\"quant_npu_kernel.cpp\",",
      ".cu kernel must be rewritten (Ascend C via OpPlugin, or torch/torch_npu ops), §6 " + KB),
    C("\"triton\": [\"triton>=2.0.0\"],", "triton_kernel_tuning", R, False, "\"triton\": [\"triton-ascend\"],",
      "optional triton kernels would need triton-ascend (§6); kernels themselves need porting"),
])

# ---------------------------------------------------------------- GPTQ-for-LLaMa quant.py
E("gptq_quant_linear", "quant.py", "kernel_rewrite", "GPTQ-for-LLaMa quant.py QuantLinear calling the quant_cuda extension", [
    C("=import torch", "import_torch_npu", A, True, TN,
      TN_NOTE + "; the 4-bit path uses torch_npu.npu_weight_quant_batchmatmul"),
    C("=import quant_cuda", "custom_cuda_extension", R, True, "import quant_npu",
      "nvcc-built extension cannot be built on Ascend (§6 " + KB + "); rebuilt as NpuExtension or replaced by torch_npu ops"),
    C("quant_cuda.vecquant2matmul(", "custom_cuda_extension", R, True,
      "y = x.float() @ self.dequantize_weight()  # no 2-bit NPU kernel",
      "call site of the CUDA extension; no 2-bit weight-quant matmul in torch_npu custom ops list, dequantize in torch"),
    C("quant_cuda.vecquant3matmul(", "custom_cuda_extension", R, True,
      "y = x.float() @ self.dequantize_weight()  # no 3-bit NPU kernel", "as above"),
    C("quant_cuda.vecquant4matmul(", "custom_cuda_extension", R, True,
      "y = torch_npu.npu_weight_quant_batchmatmul(x.half(), self.qweight_int4, self.scales, antiquant_offset=self.zeros_f16, antiquant_group_size=self.groupsize).float()",
      "int4 weight-only matmul exists as npu_weight_quant_batchmatmul (+ npu_convert_weight_to_int4pack for the weight), ops/npu_custom_ops_torch2.7.1_v7.3.0.txt; GPTQ packing order must be converted"),
    C("quant_cuda.vecquant8matmul(", "custom_cuda_extension", R, True,
      "y = torch_npu.npu_weight_quant_batchmatmul(x.half(), self.qweight_int8, self.scales, antiquant_offset=self.zeros_f16, antiquant_group_size=self.groupsize).float()",
      "int8 weight-only via npu_weight_quant_batchmatmul (§5 " + KB + ")"),
])

# ---------------------------------------------------------------- AutoAWQ generate example
E("autoawq_generate", "examples/generate.py", "explicit_replacement", "AutoAWQ quantize + fused-layer generate example", [
    C("=import torch", "import_torch_npu", A, True, TN, TN_NOTE),
    C("fuse_layers=fuse_layers,", "custom_cuda_extension", R, True, "fuse_layers=False,",
      "fused AWQ modules call the nvcc-built awq_ext/autoawq-kernels (no nvcc path, §6 " + KB + ")"),
    C("device_map=\"cuda\",", "device_type", R, True, "device_map=\"npu\",", "\"cuda\" device_map"),
    C("ids = tokenizer(PROMPT, return_tensors=\"pt\").input_ids.cuda()", "tensor_to_device", R, True,
      "ids = tokenizer(PROMPT, return_tensors=\"pt\").input_ids.npu()", ".cuda() needs CUDA"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start = torch.npu.Event(enable_timing=True)", "torch.cuda.Event → torch.npu.Event (§2.1, TSV ✔)"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "end = torch.npu.Event(enable_timing=True)", "as above"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "torch.cuda → torch.npu"),
    C("mem = torch.cuda.max_memory_allocated()", "torch_cuda_api", R, True,
      "mem = torch.npu.max_memory_allocated() / 1024**3", "torch.cuda → torch.npu"),
    C("tokens = tokenizer(PROMPT, return_tensors=\"pt\").input_ids.cuda()", "tensor_to_device", R, True,
      "tokens = tokenizer(PROMPT, return_tensors=\"pt\").input_ids.npu()", ".cuda() needs CUDA"),
])

# ---------------------------------------------------------------- AutoAWQ setup.py
E("autoawq_setup", "setup.py", "device_branch_or_abstraction", "AutoAWQ setup.py with CUDA/ROCm/CPU kernel selection", [
    C("IS_CPU_ONLY = not torch.backends.mps.is_available() and not torch.cuda.is_available()", "torch_cuda_api", R, True,
      "IS_NPU = importlib.util.find_spec(\"torch_npu\") is not None\nIS_CPU_ONLY = not IS_NPU and not torch.backends.mps.is_available() and not torch.cuda.is_available()",
      "an NPU host counts as CPU-only and gets the x86-only IPEX dependency and a +cpu version"),
    C("=elif IS_CPU_ONLY:", "device_type", B, True,
      "elif IS_NPU:\n    requirements.append(\"torch-npu\")\nelif IS_CPU_ONLY:",
      "NPU branch: no awq_ext kernels, needs torch_npu (matching torch version, §1.1 " + KB + ")"),
    C("\"kernels\": [\"autoawq-kernels\", \"flash-attn>=2.2.0\"],", "attention_kernel", R, False,
      "\"kernels\": [\"autoawq-kernels\"],",
      "optional extra; flash-attn cannot be installed on NPU (§6) — only reached with pip install autoawq[kernels]"),
])

# ---------------------------------------------------------------- text-generation-webui loaders
E("webui_loaders", "modules/models.py", "device_branch_or_abstraction",
  "text-generation-webui modules/models.py multi-backend model loaders", [
    C("=import torch", "import_torch_npu", A, True, TN, TN_NOTE),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "--deepspeed path; torch.cuda.set_device fails without CUDA (§2.1)"),
    C("model = model.cuda()", "tensor_to_device", R, True, "model = model.to(torch.device(\"npu\"))",
      "default (non-quantized) path moves the model with .cuda()"),
    C("params[\"quantization_config\"] = BitsAndBytesConfig(load_in_8bit=True", "custom_cuda_extension", R, False,
      "raise ValueError(\"--load-in-8bit (LLM.int8) is not available on Ascend NPU\")",
      "only with --load-in-8bit; bnb LLM.int8 not listed for Ascend (§6 " + KB + ")"),
    C("total_mem = torch.cuda.get_device_properties(0).total_memory", "torch_cuda_api", R, True,
      "total_mem = torch.npu.get_device_properties(0).total_memory / (1024 * 1024)",
      "--auto-devices path; total_memory is one of the properties torch.npu supports (TSV)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; renamed so unloading frees NPU memory"),
])

# ---------------------------------------------------------------- HQQ
E("hqq_quant", "examples/hqq_llama_quant.py", "explicit_replacement", "HQQ Llama quantization + fast-backend inference example", [
    C("=import torch", "import_torch_npu", A, True, TN, TN_NOTE),
    C("device = \"cuda:0\"", "device_type", R, True, "device = \"npu:0\"", "module-level \"cuda:0\" used for quantization and eval"),
    C("p.add_argument(\"--backend\", default=\"torchao_int4\"", "unsupported_op_workaround", R, True,
      "p.add_argument(\"--backend\", default=\"pytorch\", choices=[\"pytorch\"])",
      "torchao_int4 relies on aten _weight_int4pack_mm / _convert_weight_to_int4pack, absent from ops/npu_native_ops_torch2.7.1_v7.3.0.txt; bitblas/gemlite are CUDA kernels"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "torch.cuda → torch.npu"),
    C("print(f\"{256 / dt:.1f} tok/s, peak {torch.cuda.max_memory_allocated()", "torch_cuda_api", R, True,
      "print(f\"{256 / dt:.1f} tok/s, peak {torch.npu.max_memory_allocated() / 1e9:.2f} GB\")", "torch.cuda → torch.npu"),
])

# ---------------------------------------------------------------- torchao
NATIVE = "ops/npu_native_ops_torch2.7.1_v7.3.0.txt"
E("torchao_bench", "benchmarks/quant_bench.py", "explicit_replacement", "torchao quantize_ / float8 recipe benchmark", [
    C("=import torch", "import_torch_npu", A, True, TN, TN_NOTE),
    C("inductor_config.coordinate_descent_tuning = True", "triton_kernel_tuning", X, False, None,
      "Triton-specific Inductor tuning; transfer/NPU inductor does not use CUDA triton (§2.6 " + KB + "); effect on NPU unconfirmed"),
    C("inductor_config.force_fuse_int_mm_with_mul = True", "triton_kernel_tuning", X, False, None,
      "fuses aten._int_mm, which has no NPU kernel (" + NATIVE + ")"),
    C("quantize_(model, int8_dynamic_activation_int8_weight())", "unsupported_op_workaround", R, False,
      "quantize_(model, int8_weight_only())  # _int_mm has no NPU kernel; or torch_npu.npu_quant_matmul",
      "int8 dynamic quant runs aten._int_mm, absent from " + NATIVE + " → CPU fallback at best (§3.8); exact failure mode unconfirmed"),
    C("quantize_(model, int4_weight_only(group_size=128))", "unsupported_op_workaround", R, False,
      "npu_int4_weight_only_(model, group_size=128)  # npu_convert_weight_to_int4pack + npu_weight_quant_batchmatmul",
      "tinygemm _convert_weight_to_int4pack/_weight_int4pack_mm absent from " + NATIVE + "; torch_npu has int4 custom ops; torchao NPU layout unconfirmed"),
    C("major, minor = torch.cuda.get_device_capability()", "device_capability_check", R, True,
      "raise SystemExit(\"float8 recipes need _scaled_mm / float8 dtypes, not available on Atlas A2\")",
      "torch.cuda.get_device_capability fails without CUDA; on NPU it only returns a configured value (TSV) and _scaled_mm is absent from " + NATIVE),
    C("convert_to_float8_training(model, config=Float8LinearConfig(", "unsupported_op_workaround", R, True,
      "raise SystemExit(\"float8 training is not supported on this NPU\")",
      "float8 matmul (_scaled_mm) absent from " + NATIVE + "; seed 001 says 910B mainly FP16/BF16"),
    C("model = Block().to(device=\"cuda\", dtype=torch.bfloat16).eval()", "device_type", R, True,
      "model = Block().to(device=\"npu\", dtype=torch.bfloat16).eval()", "\"cuda\" device"),
    C("x = torch.randn(batch, seq, 4096, device=\"cuda\", dtype=torch.bfloat16)", "device_type", R, True,
      "x = torch.randn(batch, seq, 4096, device=\"npu\", dtype=torch.bfloat16)", "\"cuda\" device"),
    C("model = torch.compile(model, mode=compile_mode, fullgraph=True)", "compile_mode", R, False,
      "model = torch.compile(model, backend=\"npugraphs\" if compile_mode == \"reduce-overhead\" else \"inductor\", fullgraph=True)",
      "max-autotune/reduce-overhead assume CUDA graphs + triton autotune; NPU: npugraphs backend (TSV torch.compile row); only with --compile"),
    C("ms = benchmark_model(model, n_iter, (x,), device_type=\"cuda\")", "device_type", R, True,
      "ms = benchmark_model(model, n_iter, (x,), device_type=\"npu\")",
      "the cuda branch times with torch.cuda.Event; whether torchao's helper accepts \"npu\" is unconfirmed"),
    C("=torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()", "torch.cuda → torch.npu"),
    C("mem = torch.cuda.max_memory_allocated() / 1e9", "torch_cuda_api", R, True,
      "mem = torch.npu.max_memory_allocated() / 1e9", "torch.cuda → torch.npu"),
    C("print(f\"GPU: {torch.cuda.get_device_name()}", "torch_cuda_api", R, True,
      "print(f\"NPU: {torch.npu.get_device_name()}  torch {torch.__version__}\")", "torch.cuda → torch.npu"),
])

# ---------------------------------------------------------------- TensorRT-LLM examples/run.py
TRT = "TensorRT-LLM has no Ascend build; the runtime is replaced by vllm with the vllm-ascend plugin (§6 " + KB + ")"
E("trtllm_run", "examples/run.py", "explicit_replacement", "TensorRT-LLM examples/run.py engine runner", [
    C("=import torch", "import_torch_npu", A, True, TN, TN_NOTE),
    C("=import tensorrt_llm", "distributed_framework", R, True, "from vllm import LLM, SamplingParams", TRT),
    C("=import tensorrt_llm.profiler", "distributed_framework", X, True, None, TRT),
    C("from tensorrt_llm.logger import logger", "distributed_framework", R, True,
      "from vllm.logger import init_logger; logger = init_logger(__name__)", TRT),
    C("from tensorrt_llm.runtime import PYTHON_BINDINGS, ModelRunner", "distributed_framework", X, True, None, TRT),
    C("from tensorrt_llm.runtime import ModelRunnerCpp", "distributed_framework", X, True, None, TRT),
    C("runtime_rank = tensorrt_llm.mpi_rank()", "distributed_framework", R, True,
      "runtime_rank = int(os.environ.get(\"RANK\", \"0\"))", TRT),
    C("runner = runner_cls.from_dir(**runner_kwargs)", "distributed_framework", R, True,
      "runner = LLM(model=args.engine_dir, tensor_parallel_size=args.tp_size)",
      "a serialized TensorRT engine is CUDA-specific; the HF checkpoint is served by vllm-ascend instead"),
    C("torch.cuda.synchronize()  # make sure every rank finished decoding", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # make sure every rank finished decoding", "torch.cuda → torch.npu"),
    C("torch.cuda.synchronize()  # warmup", "torch_cuda_api", R, True, "torch.npu.synchronize()  # warmup", "torch.cuda → torch.npu"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "torch.cuda → torch.npu"),
    C("tensorrt_llm.profiler.start(\"tmp\")", "distributed_framework", R, True, "t0 = time.perf_counter()", TRT),
    C("tensorrt_llm.profiler.stop(\"tmp\")", "distributed_framework", R, True, "elapsed = time.perf_counter() - t0", TRT),
])

# ---------------------------------------------------------------- Torch-TensorRT
TTRT = "Torch-TensorRT is CUDA/TensorRT-only; on Ascend graph compilation is torch.compile with npugraphs or the TorchAir backend (§6 " + KB + "); TorchAir API details unconfirmed"
E("torch_trt_compile", "scripts/compile_trt.py", "explicit_replacement", "Torch-TensorRT dynamo / torch.compile backend latency script", [
    C("=import torch", "import_torch_npu", A, True, TN, TN_NOTE),
    C("=import torch_tensorrt", "compile_mode", R, True, "import torchair", TTRT),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "torch.cuda → torch.npu"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True, "start = torch.npu.Event(enable_timing=True)", "torch.cuda.Event → torch.npu.Event"),
    C("stop = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True, "stop = torch.npu.Event(enable_timing=True)", "as above"),
    C("torch.cuda.synchronize()  # wait for the stop event", "torch_cuda_api", R, True, "torch.npu.synchronize()  # wait for the stop event", "torch.cuda → torch.npu"),
    C("hf = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=dtype).eval().cuda()", "tensor_to_device", R, True,
      "hf = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=dtype).eval().npu()", ".cuda() → .npu()"),
    C("ids = torch.randint(0, tok.vocab_size, (args.batch, args.seq), dtype=torch.int64).cuda()", "tensor_to_device", R, True,
      "ids = torch.randint(0, tok.vocab_size, (args.batch, args.seq), dtype=torch.int64).npu()", ".cuda() → .npu()"),
    C("inputs = [torch_tensorrt.Input(shape=", "compile_mode", X, True, None, TTRT),
    C("=trt_model = torch_tensorrt.compile(", "compile_mode", R, True,
      "trt_model = torch.compile(model, backend=torchair.get_npu_backend(), dynamic=False)", TTRT),
    C("backend=\"torch_tensorrt\",", "compile_mode", R, True, "backend=\"npugraphs\",",
      "torch_tensorrt backend is not registered without Torch-TensorRT; npugraphs ≈ cudagraphs (TSV torch.compile row)"),
    C("options={\"enabled_precisions\": {dtype}", "compile_mode", X, True, None,
      "TensorRT-specific options would be passed to the NPU backend as unexpected kwargs"),
    C("trt_model = torch_tensorrt.compile(scripted, ir=\"ts\"", "compile_mode", R, True,
      "trt_model = scripted", "TorchScript→TensorRT path has no NPU equivalent; only with --ir ts. " + TTRT),
    C("torch_tensorrt.save(trt_model, args.save, inputs=[ids])", "compile_mode", R, True,
      "torch.export.save(torch.export.export(model, (ids,)), args.save)", TTRT),
])

# ---------------------------------------------------------------- SGLang launch script
DIST = "knowledge ascend-distributed.md"
E("sglang_launch", "scripts/launch_sglang.sh", "explicit_replacement", "SGLang launch_server wrapper script for one 8-GPU node", [
    C("export CUDA_VISIBLE_DEVICES=", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; ASCEND_RT_VISIBLE_DEVICES (§1 " + DIST + ")"),
    C("export NCCL_IB_DISABLE=", "env_var", X, False, None, "NCCL-only setting, ignored on HCCL"),
    C("export NCCL_SOCKET_IFNAME=", "env_var", R, False, "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "HCCL's NIC selection variable is HCCL_SOCKET_IFNAME (§1 " + DIST + "); matters multi-node"),
    C("export NCCL_DEBUG=", "env_var", X, False, None, "NCCL-only logging variable"),
    C("export TORCH_CUDA_ARCH_LIST=", "env_var", X, False, None, "nvcc arch list; nothing is JIT-compiled with nvcc on NPU"),
    C("nvidia-smi --query-gpu=index,name", "device_type", R, True, "npu-smi info",
      "nvidia-smi does not exist on an NPU host and set -e aborts the script (host formats §1 knowledge ascend-host-formats.md)"),
    C("n_gpus=$(nvidia-smi -L | wc -l)", "device_type", R, True, "n_gpus=$(npu-smi info -l | grep -c \"NPU ID\")",
      "nvidia-smi missing → pipefail aborts; npu-smi info -l lists NPUs (ascend-host-formats.md §2.5)"),
    C("python3 -c \"import torch; assert torch.cuda.is_available()", "torch_cuda_api", R, True,
      "python3 -c \"import torch, torch_npu; assert torch.npu.is_available(), 'NPU not available'; print(torch.npu.device_count(), 'NPUs')\"",
      "assert fails on an NPU host"),
    C("--model-path \"${MODEL}\"", "device_type", A, False, "--model-path \"${MODEL}\"\n    --device npu",
      "SGLang's Ascend support (§6) selects the device with --device npu; auto-detection unconfirmed"),
    C("--attention-backend flashinfer", "attention_kernel", R, True, "--attention-backend ascend",
      "flashinfer is CUDA-only; SGLang's Ascend attention backend name unconfirmed"),
    C("--sampling-backend flashinfer", "attention_kernel", R, True, "--sampling-backend pytorch",
      "flashinfer sampling kernels are CUDA-only"),
    C("--enable-torch-compile", "compile_mode", X, False, None,
      "torch.compile of the decode graph targets CUDA graphs + Triton; unconfirmed on NPU"),
    C("--kv-cache-dtype fp8_e5m2", "unsupported_op_workaround", R, False, "--kv-cache-dtype auto",
      "fp8 KV cache: seed 001 says 910B is mainly FP16/BF16; unconfirmed"),
])

# ---------------------------------------------------------------- LMDeploy
E("lmdeploy_pipeline", "serve_lmdeploy.py", "device_branch_or_abstraction", "LMDeploy TurboMind pipeline / api_server script", [
    C("=import torch", "import_torch_npu", A, True, TN, TN_NOTE),
    C("device_type=\"cuda\",", "device_type", R, True, "device_type=\"ascend\",",
      "PyTorch engine device selection; the exact value lmdeploy uses for Ascend is unconfirmed"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "torch.cuda → torch.npu"),
    C("free, total = torch.cuda.mem_get_info()", "torch_cuda_api", R, True, "free, total = torch.npu.mem_get_info()",
      "torch.npu.mem_get_info (TSV ✔)"),
    C("p.add_argument(\"--backend\", choices=[\"turbomind\", \"pytorch\"], default=\"turbomind\")", "custom_cuda_extension", R, True,
      "p.add_argument(\"--backend\", choices=[\"pytorch\"], default=\"pytorch\")",
      "TurboMind is a compiled CUDA engine (no nvcc path on Ascend, §6 " + KB + "); only the PyTorch engine can target NPU"),
    C("if args.tp > torch.cuda.device_count():", "torch_cuda_api", R, True, "if args.tp > torch.npu.device_count():",
      "device_count() is 0 on an NPU host → always exits"),
    C("raise SystemExit(f\"--tp {args.tp} but only {torch.cuda.device_count()}", "torch_cuda_api", R, False,
      "raise SystemExit(f\"--tp {args.tp} but only {torch.npu.device_count()} NPUs visible\")", "error message path only"),
    C("os.environ.setdefault(\"CUDA_VISIBLE_DEVICES\"", "env_var", R, False,
      "os.environ.setdefault(\"ASCEND_RT_VISIBLE_DEVICES\", \",\".join(str(i) for i in range(args.tp)))",
      "ignored by the Ascend runtime; ASCEND_RT_VISIBLE_DEVICES (§1 " + DIST + ")"),
])

# ---------------------------------------------------------------- TGI import_utils
E("tgi_import_utils", "server/text_generation_server/utils/import_utils.py", "device_branch_or_abstraction",
  "text-generation-inference utils/import_utils.py SYSTEM detection", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch\ntry:\n    import torch_npu  # noqa: F401\nexcept ImportError:\n    torch_npu = None", TN_NOTE),
    C("=elif is_ipex_available():", "device_type", B, True,
      "elif torch_npu is not None and torch.npu.is_available():\n    SYSTEM = \"npu\"\n    empty_cache = torch.npu.empty_cache\n    synchronize = torch.npu.synchronize\n    get_free_memory = get_npu_free_memory\nelif is_ipex_available():",
      "without an npu branch an NPU host is detected as SYSTEM=\"cpu\" and serves on the CPU"),
    C("HAS_FLASH_ATTN_V2 = SYSTEM == \"rocm\"", "attention_kernel", R, False,
      "HAS_FLASH_ATTN_V2 = SYSTEM in {\"rocm\", \"npu\"}  # npu: torch_npu.npu_fusion_attention",
      "otherwise flash-attention model paths are disabled on NPU (slow eager attention); NPU FA via npu_fusion_attention (§5 " + KB + ")"),
    C("if SYSTEM == \"ipex\" and hasattr(torch, \"xpu\") and torch.xpu.is_available():", "device_type", B, True,
      "if SYSTEM == \"npu\":\n        return torch.device(f\"npu:{rank}\")\n    if SYSTEM == \"ipex\" and hasattr(torch, \"xpu\") and torch.xpu.is_available():",
      "ranks would be placed on the CPU"),
    C("if SYSTEM == \"cuda\" and torch.cuda.is_bf16_supported():", "torch_cuda_api", R, False,
      "if (SYSTEM == \"cuda\" and torch.cuda.is_bf16_supported()) or (SYSTEM == \"npu\" and torch.npu.is_bf16_supported()):",
      "NPU would default to fp16; bf16 is the usual choice on Atlas A2"),
])

# ---------------------------------------------------------------- TGI layers/layernorm.py (+ rotary)
CUS = "ops/npu_custom_ops_torch2.7.1_v7.3.0.txt"
E("tgi_layernorm", "server/text_generation_server/layers/layernorm.py", "device_branch_or_abstraction",
  "text-generation-inference fused LayerNorm / RMSNorm / rotary layers with SYSTEM branches", [
    C("=import torch", "import_torch_npu", A, False, TN,
      "needed only by the added fused npu branches; the fallback branches run without it (torch_npu already imported by import_utils)"),
    C("=elif SYSTEM == \"rocm\":", "npu_fused_op", B, False,
      "elif SYSTEM == \"npu\":\n    import torch_npu\n\n    class FastLayerNorm(nn.LayerNorm):  # torch_npu.npu_add_layer_norm\n        ...\n\nelif SYSTEM == \"rocm\":",
      "NPU falls into the plain else branch (works, unfused); npu_add_layer_norm is in " + CUS),
    C("if hidden_states.shape[-1] > 8192 or SYSTEM != \"cuda\":", "npu_fused_op", B, False,
      "if SYSTEM == \"npu\":\n            if residual is not None:\n                out, _, residual = torch_npu.npu_add_rms_norm(residual, hidden_states, self.weight, self.variance_epsilon)\n                return out, residual\n            return torch_npu.npu_rms_norm(hidden_states, self.weight, self.variance_epsilon)[0], hidden_states\n        if hidden_states.shape[-1] > 8192 or SYSTEM != \"cuda\":",
      "fused (add_)rms_norm instead of the fp32 eager fallback (§5 " + KB + ")"),
    C("rotary_emb.apply_rotary(k1, k2, cos, sin, k1, k2, False)", "npu_fused_op", B, False,
      "rotary_emb.apply_rotary(k1, k2, cos, sin, k1, k2, False)\n        elif SYSTEM == \"npu\":\n            c, s = torch.cat((cos, cos), -1).unsqueeze(0), torch.cat((sin, sin), -1).unsqueeze(0)\n            query[..., :2 * rotary_dim] = torch_npu.npu_rotary_mul(query[..., :2 * rotary_dim].unsqueeze(0), c, s).squeeze(0)\n            key[..., :2 * rotary_dim] = torch_npu.npu_rotary_mul(key[..., :2 * rotary_dim].unsqueeze(0), c, s).squeeze(0)",
      "npu_rotary_mul (half mode) replaces the flash-attn rotary kernel; the generic branch works but is unfused (§5)"),
])

# ---------------------------------------------------------------- TGI CUDA-graph warmup
E("tgi_cuda_graph_warmup", "server/text_generation_server/models/flash_causal_lm.py", "device_branch_or_abstraction",
  "text-generation-inference FlashCausalLM warmup: KV-cache sizing and decode CUDA-graph capture", [
    C("graph = torch.cuda.CUDAGraph()", "torch_cuda_api", R, True, "graph = torch.npu.NPUGraph()",
      "torch.cuda.CUDAGraph → torch.npu.NPUGraph, inference only (TSV)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "torch.cuda → torch.npu"),
    C("with torch.cuda.graph(graph, pool=MEM_POOL):", "torch_cuda_api", R, True, "with torch.npu.graph(graph, pool=MEM_POOL):",
      "torch.cuda.graph → torch.npu.graph (TSV); MEM_POOL must come from torch.npu.graph_pool_handle()"),
    C("torch.cuda.synchronize()  # capture finished", "torch_cuda_api", R, True, "torch.npu.synchronize()  # capture finished", "torch.cuda → torch.npu"),
    C("except torch.cuda.OutOfMemoryError as e:", "torch_cuda_api", R, False, "except (torch.OutOfMemoryError, RuntimeError) as e:",
      "which exception torch_npu raises on NPU OOM is unconfirmed; without it the helpful message is lost"),
    C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", R, False, "except (torch.OutOfMemoryError, RuntimeError):",
      "as above (graph warmup OOM)"),
])

# ---------------------------------------------------------------- Medusa
E("medusa_generate", "medusa/inference/generate.py", "explicit_replacement", "Medusa tree-attention speculative decoding loop", [
    C("=import torch", "import_torch_npu", A, True, TN, TN_NOTE),
    C("head_dim, device=\"cuda\", dtype=model.dtype)", "device_type", R, True,
      "head_dim, device=\"npu\", dtype=model.dtype)", "the pre-allocated KV buffer is created on \"cuda\""),
    C("load_in_8bit=args.load_in_8bit,", "custom_cuda_extension", R, False, "load_in_8bit=False,",
      "only with --load-in-8bit; bitsandbytes LLM.int8 not listed for Ascend (§6 " + KB + ")"),
    C("input_ids = torch.as_tensor(input_ids).cuda()", "tensor_to_device", R, True,
      "input_ids = torch.as_tensor(input_ids).npu()", ".cuda() → .npu()"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "torch.cuda → torch.npu"),
    C("torch.cuda.synchronize()  # stop the clock", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # stop the clock after the last token", "torch.cuda → torch.npu"),
])

# ---------------------------------------------------------------- EAGLE draft CUDA graphs
G = "CUDA graph APIs map to torch.npu.NPUGraph / torch.npu.graph / graph_pool_handle, inference only (TSV)"
E("eagle_cuda_graph", "eagle/cuda_graph_runner.py", "explicit_replacement", "EAGLE draft-head CUDA-graph runner (per batch size capture/replay)", [
    C("=import torch", "import_torch_npu", A, True, TN, TN_NOTE),
    C("_graph_pool = torch.cuda.graph_pool_handle()", "torch_cuda_api", R, True, "_graph_pool = torch.npu.graph_pool_handle()", G),
    C("self.device = device or torch.device(\"cuda\", torch.cuda.current_device())", "device_type", R, True,
      "self.device = device or torch.device(\"npu\", torch.npu.current_device())", "\"cuda\" device + torch.cuda.current_device"),
    C("self.graphs: Dict[int, torch.cuda.CUDAGraph] = {}", "torch_cuda_api", R, False,
      "self.graphs: Dict[int, torch.npu.NPUGraph] = {}", "annotation only, not evaluated in a function body"),
    C("stream = torch.cuda.Stream()", "torch_cuda_api", R, True, "stream = torch.npu.Stream()", "torch.cuda.Stream → torch.npu.Stream (TSV)"),
    C("stream.wait_stream(torch.cuda.current_stream())", "torch_cuda_api", R, True,
      "stream.wait_stream(torch.npu.current_stream())", "torch.cuda → torch.npu"),
    C("with torch.cuda.stream(stream):", "torch_cuda_api", R, True, "with torch.npu.stream(stream):", "torch.cuda → torch.npu"),
    C("torch.cuda.current_stream().wait_stream(stream)", "torch_cuda_api", R, True,
      "torch.npu.current_stream().wait_stream(stream)", "torch.cuda → torch.npu"),
    C("graph = torch.cuda.CUDAGraph()", "torch_cuda_api", R, True, "graph = torch.npu.NPUGraph()", G),
    C("with torch.cuda.graph(graph, pool=get_graph_pool(), stream=stream):", "torch_cuda_api", R, True,
      "with torch.npu.graph(graph, pool=get_graph_pool(), stream=stream):", G),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "torch.cuda → torch.npu"),
    C("mem = torch.cuda.memory_reserved() / 2**20", "torch_cuda_api", R, True,
      "mem = torch.npu.memory_reserved() / 2**20", "torch.cuda → torch.npu"),
    C("start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start, end = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)", "torch.cuda.Event → torch.npu.Event"),
])

# ---------------------------------------------------------------- KV cache with CPU offload
E("kv_offload", "engine/kv_cache.py", "explicit_replacement", "paged KV-cache manager with CPU swap (vLLM-style block manager in a small engine)", [
    C("=import torch", "import_torch_npu", A, True, TN, TN_NOTE),
    C("def __init__(self, cfg: CacheConfig, model_bytes: int, device: str = \"cuda\"):", "device_type", R, True,
      "def __init__(self, cfg: CacheConfig, model_bytes: int, device: str = \"npu\"):", "\"cuda\" default device"),
    C("free, total = torch.cuda.mem_get_info(self.device)", "torch_cuda_api", R, True,
      "free, total = torch.npu.mem_get_info(self.device)", "torch.npu.mem_get_info (TSV ✔)"),
    C("self.copy_stream = torch.cuda.Stream(device=self.device, priority=-1)", "torch_cuda_api", R, True,
      "self.copy_stream = torch.npu.Stream(device=self.device, priority=-1)", "torch.cuda.Stream → torch.npu.Stream"),
    C("self.pending: List[Tuple[int, torch.cuda.Event]] = []", "torch_cuda_api", R, False,
      "self.pending: List[Tuple[int, torch.npu.Event]] = []", "annotation only"),
    C("self.copy_stream.wait_stream(torch.cuda.current_stream(self.device))", "torch_cuda_api", R, True,
      "self.copy_stream.wait_stream(torch.npu.current_stream(self.device))", "torch.cuda → torch.npu"),
    C("=with torch.cuda.stream(self.copy_stream):", "torch_cuda_api", R, True, "with torch.npu.stream(self.copy_stream):", "torch.cuda → torch.npu"),
    C("ev = torch.cuda.Event()", "torch_cuda_api", R, True, "ev = torch.npu.Event()", "torch.cuda.Event → torch.npu.Event"),
    C("with torch.cuda.stream(self.copy_stream):  # H2D", "torch_cuda_api", R, True,
      "with torch.npu.stream(self.copy_stream):  # H2D on the copy stream", "torch.cuda → torch.npu"),
    C("torch.cuda.current_stream(self.device).wait_stream(self.copy_stream)", "torch_cuda_api", R, True,
      "torch.npu.current_stream(self.device).wait_stream(self.copy_stream)", "torch.cuda → torch.npu"),
    C("\"allocated_gib\": torch.cuda.memory_allocated(self.device) / 2**30,", "torch_cuda_api", R, True,
      "\"allocated_gib\": torch.npu.memory_allocated(self.device) / 2**30,", "torch.cuda → torch.npu"),
])

# ---------------------------------------------------------------- paged attention backends
E("paged_attention", "engine/attention.py", "kernel_rewrite", "small-engine attention: flash-attn varlen prefill + vLLM paged_attention decode", [
    C("=import torch", "import_torch_npu", A, True, TN, TN_NOTE + "; torch_npu fused attention ops replace the vLLM kernels"),
    C("from vllm import _custom_ops as vllm_ops", "custom_cuda_extension", X, True, None,
      "vLLM's _custom_ops are nvcc-built kernels (no nvcc path, §6 " + KB + "); import fails or the ops are missing on NPU"),
    C("vllm_ops.reshape_and_cache_flash(key, value", "custom_cuda_extension", R, True,
      "torch_npu.npu_scatter_pa_kv_cache(key, value, k_cache, v_cache, meta.slot_mapping)",
      "npu_scatter_pa_kv_cache(key, value, key_cache, value_cache, slot_mapping) in " + CUS + "; cache layout requirements unconfirmed"),
    C("=if HAS_FLASH:", "attention_kernel", B, False,
      "if q.device.type == \"npu\":\n            return torch_npu.npu_fusion_attention(q, k, v, self.num_heads, \"TND\", scale=self.scale, atten_mask=self.causal_mask, sparse_mode=3, actual_seq_qlen=meta.cu_seqlens_q[1:].tolist(), actual_seq_kvlen=meta.cu_seqlens_q[1:].tolist())[0]\n        if HAS_FLASH:",
      "flash-attn is not installable on NPU, so prefill falls back to a per-sequence SDPA loop (works, slow); TND varlen npu_fusion_attention (§5 " + KB + ")"),
    C("vllm_ops.paged_attention_v1(", "attention_kernel", R, True,
      "out = torch_npu.npu_fused_infer_attention_score(q.unsqueeze(1), k_cache, v_cache, num_heads=self.num_heads, num_key_value_heads=self.num_kv_heads, scale=self.scale, input_layout=\"BSND\", block_table=meta.block_tables, block_size=self.block_size, actual_seq_lengths_kv=meta.seq_lens.tolist())[0].squeeze(1)",
      "decode over the block table: npu_fused_infer_attention_score with block_table/block_size (§5); the decode path taken when flash-attn is absent"),
    C("def build_metadata(seq_lens, new_tokens, block_tables, block_size, device=\"cuda\"):", "device_type", R, True,
      "def build_metadata(seq_lens, new_tokens, block_tables, block_size, device=\"npu\"):", "\"cuda\" default device"),
])

# ---------------------------------------------------------------- Triton python backend model.py
E("triton_model_py", "model_repository/llm/1/model.py", "device_branch_or_abstraction",
  "Triton Inference Server python-backend model.py serving a HF causal LM", [
    C("=import torch", "import_torch_npu", A, True, TN, TN_NOTE),
    C("if kind == \"GPU\":", "device_type", R, True, "if kind == \"GPU\" or torch.npu.is_available():",
      "Triton has no NPU instance kind; on an NPU host the instance is KIND_CPU/KIND_MODEL and the model would land on the CPU (Triton side unconfirmed)"),
    C("torch.cuda.set_device(device_id)", "torch_cuda_api", R, True, "torch.npu.set_device(device_id)", "torch.cuda → torch.npu"),
    C("self.device = torch.device(f\"cuda:{device_id}\")", "device_type", R, True,
      "self.device = torch.device(f\"npu:{device_id}\")", "\"cuda:N\" device"),
    C("attn_implementation=\"flash_attention_2\",", "attention_kernel", R, True, "attn_implementation=\"sdpa\",",
      "flash-attn cannot be installed on NPU; transformers PR #36383: use sdpa on NPU (§5/§6 " + KB + ")"),
    C("with torch.inference_mode(), torch.autocast(\"cuda\", dtype=torch.float16):", "amp", R, True,
      "with torch.inference_mode(), torch.autocast(\"npu\", dtype=torch.float16):", "CUDA autocast is inactive for NPU tensors"),
    C("output_tensors=[pb_utils.Tensor.from_dlpack(\"embedding\", to_dlpack(", "tensor_to_device", R, False,
      "output_tensors=[pb_utils.Tensor(\"embedding\", hidden.float().cpu().numpy())])",
      "Triton's DLPack zero-copy understands CPU/CUDA memory; NPU DLPack interop unconfirmed, so copy to host"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "no-op without CUDA; renamed"),
])

# ---------------------------------------------------------------- Triton config.pbtxt
E("triton_config_pbtxt", "model_repository/llm/config.pbtxt", "explicit_replacement",
  "Triton Inference Server config.pbtxt for the python-backend LLM", [
    C("count: 1", "device_type", R, False, "count: 2",
      "with KIND_MODEL Triton no longer replicates per GPU; two instances, each picking npu:<instance index> in model.py"),
    C("kind: KIND_GPU", "device_type", R, True, "kind: KIND_MODEL",
      "Triton validates KIND_GPU against CUDA GPUs and refuses to load on a host without them (Triton behaviour from memory; not in the Ascend knowledge)"),
    C("gpus: [ 0, 1 ]", "device_type", X, True, None, "the gpus list is only valid for KIND_GPU"),
    C("value: { string_value: \"$$TRITON_MODEL_DIRECTORY/../envs/llm-cu121.tar.gz\" }", "import_torch_npu", R, True,
      "value: { string_value: \"$$TRITON_MODEL_DIRECTORY/../envs/llm-npu.tar.gz\" }",
      "the packed env holds a CUDA torch wheel; it must hold torch + the matching torch_npu (§1.1 " + KB + ")"),
])

# ---------------------------------------------------------------- llama-recipes finetuning.py (FSDP)
E("llama_recipes_finetune", "src/llama_recipes/finetuning.py", "device_branch_or_abstraction",
  "llama-recipes finetuning.py: FSDP setup, bf16 policy check, NCCL", [
    C("=import torch", "import_torch_npu", A, True, TN, TN_NOTE),
    C("from torch.cuda import nccl", "dist_backend", X, False, None,
      "only used for the NCCL version check below; import itself probably succeeds on a non-CUDA build (unconfirmed)"),
    C("dist.init_process_group(\"nccl\")", "dist_backend", R, True, "dist.init_process_group(\"hccl\")",
      "NCCL is unavailable on Ascend; HCCL (§2.4 " + KB + ")"),
    C("os.environ[\"NCCL_ASYNC_ERROR_HANDLING\"] = str(1)", "env_var", R, False,
      "os.environ[\"HCCL_ASYNC_ERROR_HANDLING\"] = str(1)", "torch_npu watchdog variable is HCCL_ASYNC_ERROR_HANDLING (§1 " + DIST + ")"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "no-op without CUDA; renamed"),
    C("=torch.version.cuda", "device_capability_check", R, True, "torch.npu.is_available()",
      "torch.version.cuda is None on the NPU build → the bf16 policy is silently dropped and training runs in fp32"),
    C("and torch.cuda.is_bf16_supported()", "torch_cuda_api", R, True, "and torch.npu.is_bf16_supported()", "torch.cuda → torch.npu"),
    C("and packaging.version.parse(torch.version.cuda).release >= (11, 0)", "device_capability_check", X, True, None,
      "CUDA toolkit version check; parse(None) fails once the first clause passes"),
    C("and dist.is_nccl_available()", "dist_backend", R, True, "and dist.is_hccl_available()",
      "transfer_to_npu aliases is_nccl_available to is_hccl_available (§2.4); without it the check is False on NPU"),
    C("and nccl.version() >= (2, 10)", "dist_backend", X, True, None, "NCCL version query has no meaning on HCCL"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)", "torch.cuda → torch.npu"),
    C("device_id=torch.cuda.current_device(),", "torch_cuda_api", R, True, "device_id=torch.npu.current_device(),",
      "FSDP would be given a CUDA device id; torch.npu.current_device"),
    C("param_init_fn=(lambda module: module.to_empty(device=torch.device(\"cuda\"), recurse=False))", "device_type", R, True,
      "param_init_fn=(lambda module: module.to_empty(device=torch.device(\"npu\"), recurse=False))",
      "low_cpu_fsdp path materializes non-rank-0 params on \"cuda\""),
    C("model.to(\"cuda\")", "device_type", R, True, "model.to(\"npu\")", "\"cuda\" device"),
])

# ---------------------------------------------------------------- llama-recipes memory_utils.py
E("llama_recipes_memory", "src/llama_recipes/utils/memory_utils.py", "explicit_replacement",
  "llama-recipes utils/memory_utils.py MemoryTrace", [
    C("=import torch", "import_torch_npu", A, True, TN, TN_NOTE),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "no-op without CUDA; renamed"),
    C("torch.cuda.reset_max_memory_allocated()", "torch_cuda_api", R, True,
      "torch.npu.reset_max_memory_allocated()  # reset the peak gauge to zero", "torch.cuda → torch.npu (§2.1)"),
    C("self.begin = byte2gb(torch.cuda.memory_allocated())", "torch_cuda_api", R, True,
      "self.begin = byte2gb(torch.npu.memory_allocated())", "torch.cuda → torch.npu"),
    C("torch.cuda.empty_cache()  # drop cached blocks", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # drop cached blocks before reading the final numbers", "no-op without CUDA; renamed"),
    C("self.end = byte2gb(torch.cuda.memory_allocated())", "torch_cuda_api", R, True,
      "self.end = byte2gb(torch.npu.memory_allocated())", "torch.cuda → torch.npu"),
    C("self.peak = byte2gb(torch.cuda.max_memory_allocated())", "torch_cuda_api", R, True,
      "self.peak = byte2gb(torch.npu.max_memory_allocated())", "torch.cuda → torch.npu"),
    C("cuda_info = torch.cuda.memory_stats()", "torch_cuda_api", R, True, "cuda_info = torch.npu.memory_stats()",
      "torch.npu.memory_stats (§2.1); whether it reports num_alloc_retries/num_ooms keys is unconfirmed (the code uses .get)"),
    C("self.max_reserved = byte2gb(torch.cuda.max_memory_reserved())", "torch_cuda_api", R, True,
      "self.max_reserved = byte2gb(torch.npu.max_memory_reserved())", "torch.cuda → torch.npu"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", R, False, "if not torch.npu.is_available():",
      "on NPU the helper silently skips the log (nothing breaks)"),
    C("alloc = torch.cuda.memory_allocated() / 2**30", "torch_cuda_api", R, False,
      "alloc = torch.npu.memory_allocated() / 2**30", "only reached once the is_available() check above is ported"),
    C("reserved = torch.cuda.memory_reserved() / 2**30", "torch_cuda_api", R, False,
      "reserved = torch.npu.memory_reserved() / 2**30", "as above"),
    C("free, total = torch.cuda.mem_get_info()", "torch_cuda_api", R, False, "free, total = torch.npu.mem_get_info()", "as above"),
])

# ---------------------------------------------------------------- llama-recipes inference.py
E("llama_recipes_inference", "recipes/inference/inference.py", "device_branch_or_abstraction",
  "llama-recipes recipes/inference/inference.py (xpu/cuda branches, safety checkers)", [
    C("=import torch", "import_torch_npu", A, True, TN, TN_NOTE),
    C("bnb_config = BitsAndBytesConfig(load_in_8bit=True)", "custom_cuda_extension", R, False,
      "raise ValueError(\"8bit (LLM.int8) quantization is not available on Ascend NPU\")",
      "only with quantization=8bit; bnb LLM.int8 not listed for Ascend (§6 " + KB + ")"),
    C("attn_implementation=\"flash_attention_2\" if use_fast_kernels else \"sdpa\",", "attention_kernel", R, False,
      "attn_implementation=\"sdpa\",",
      "only with use_fast_kernels; flash-attn cannot be installed on NPU, sdpa dispatches to NPU FA (§6, transformers PR #36383)"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", B, False,
      "elif torch.npu.is_available():\n        torch.npu.manual_seed(seed)\n    else:\n        torch.cuda.manual_seed(seed)",
      "torch.cuda.manual_seed is queued lazily (no error); torch.manual_seed on the next line also seeds the npu generator"),
    C("batch = {k: v.to(\"cuda\") for k, v in batch.items()}", "device_type", B, True,
      "elif torch.npu.is_available():\n        batch = {k: v.to(\"npu\") for k, v in batch.items()}\n    else:\n        batch = {k: v.to(\"cuda\") for k, v in batch.items()}",
      "inputs go to \"cuda\" while device_map=\"auto\" put the model on the NPU"),
])

# ---------------------------------------------------------------- GGUF conversion (CPU only, no labels)
E("gguf_convert", "convert_hf_to_gguf.py", "explicit_replacement",
  "llama.cpp convert_hf_to_gguf.py (CPU-only near-miss: map_location=\"cpu\", guarded tensor.is_cuda, CUDA in help text)", [])

# ---------------------------------------------------------------- serving Dockerfile
IMG = "NVIDIA CUDA base images carry no CANN toolkit/driver libs; an Ascend CANN base image is needed (image name unconfirmed; host formats §3.9 knowledge ascend-host-formats.md for the devices it mounts)"
E("serving_dockerfile", "docker/Dockerfile", "explicit_replacement", "multi-stage CUDA serving Dockerfile (torch cu121, flash-attn, own kernels)", [
    C("FROM nvidia/cuda:${CUDA_VERSION}-devel-ubuntu22.04 AS builder", "device_type", R, True,
      "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10 AS builder", IMG),
    C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", X, False, None, "nvcc arch list; irrelevant on NPU"),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", X, False, None, "no CUDA toolkit; CANN exports ASCEND_HOME_PATH via set_env.sh"),
    C("pip install torch==2.3.1 --index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", R, True,
      "pip install torch==2.3.1 --index-url https://download.pytorch.org/whl/cpu && pip install torch-npu==2.3.1.post6 && \\",
      "CUDA wheel → CPU torch + matching torch_npu (2.3.1.post6 ↔ CANN 8.1.RC1, §1.2 " + KB + "; CPU index on x86, §1.1)"),
    C("pip install -r requirements-cuda.txt", "custom_cuda_extension", R, True, "pip install -r requirements-npu.txt",
      "the CUDA requirements pull flash-attn/xformers/bitsandbytes CUDA builds (see serving_requirements)"),
    C("pip install flash-attn==2.5.9.post1 --no-build-isolation", "attention_kernel", X, True, None,
      "flash-attn cannot be built/installed on NPU (§6 " + KB + ")"),
    C("FROM nvidia/cuda:${CUDA_VERSION}-runtime-ubuntu22.04 AS runtime", "device_type", R, True,
      "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10 AS runtime", IMG),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", X, False, None,
      "NVIDIA container-runtime variable; Ascend containers get /dev/davinci* via --device or ASCEND_VISIBLE_DEVICES (§1 " + DIST + ")"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, False, None, "NVIDIA container-runtime variable"),
    C("ENV NCCL_P2P_DISABLE=0", "env_var", X, False, None, "NCCL-only"),
    C("ENV PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", R, False,
      "ENV PYTORCH_NPU_ALLOC_CONF=expandable_segments:True", "the NPU allocator reads PYTORCH_NPU_ALLOC_CONF (§1.6 " + KB + ")"),
])

# ---------------------------------------------------------------- docker-compose
DEV = "Ascend containers get the NPU through --device /dev/davinciN plus /dev/davinci_manager, /dev/devmm_svm, /dev/hisi_hdc and driver mounts (§3.9 knowledge ascend-host-formats.md)"
E("serving_compose", "docker-compose.yml", "explicit_replacement", "docker-compose for two TP=4 model servers + nginx + DCGM exporter", [
    C("image: llm-serve:cu121", "device_type", R, True, "image: llm-serve:npu", "the CUDA image (serving_dockerfile) must be rebuilt on a CANN base"),
    C("NCCL_DEBUG: WARN", "env_var", X, False, None, "NCCL-only"),
    C("NCCL_SHM_DISABLE: \"0\"", "env_var", X, False, None, "NCCL-only"),
    C("PYTORCH_CUDA_ALLOC_CONF: expandable_segments:True", "env_var", R, False,
      "PYTORCH_NPU_ALLOC_CONF: expandable_segments:True", "§1.6 " + KB),
    C("runtime: nvidia  # GPUs 0-3", "device_type", X, True, None,
      "nvidia runtime is not installed on an Ascend host; compose refuses to start the service. " + DEV),
    C("CUDA_VISIBLE_DEVICES: \"0,1,2,3\"", "env_var", R, True, "ASCEND_RT_VISIBLE_DEVICES: \"0,1,2,3\"",
      "ignored by the Ascend runtime (§1 " + DIST + ")"),
    C("- driver: nvidia  # llm-a", "device_type", R, True,
      "devices: [\"/dev/davinci0\", \"/dev/davinci1\", \"/dev/davinci2\", \"/dev/davinci3\", \"/dev/davinci_manager\", \"/dev/devmm_svm\", \"/dev/hisi_hdc\"]", DEV),
    C("device_ids: [\"0\", \"1\", \"2\", \"3\"]", "device_type", X, True, None, "part of the NVIDIA device reservation; " + DEV),
    C("capabilities: [gpu]  # llm-a", "device_type", X, True, None, "GPU capability reservation cannot be satisfied"),
    C("runtime: nvidia  # GPUs 4-7", "device_type", X, True, None, "as for llm-a. " + DEV),
    C("CUDA_VISIBLE_DEVICES: \"4,5,6,7\"", "env_var", R, True, "ASCEND_RT_VISIBLE_DEVICES: \"0,1,2,3\"",
      "ignored by the Ascend runtime; inside the container the mounted davinci4-7 are re-indexed from 0 (ASCEND_RT_VISIBLE_DEVICES semantics, §1 " + DIST + ")"),
    C("- driver: nvidia  # llm-b", "device_type", R, True,
      "devices: [\"/dev/davinci4\", \"/dev/davinci5\", \"/dev/davinci6\", \"/dev/davinci7\", \"/dev/davinci_manager\", \"/dev/devmm_svm\", \"/dev/hisi_hdc\"]", DEV),
    C("device_ids: [\"4\", \"5\", \"6\", \"7\"]", "device_type", X, True, None, "part of the NVIDIA device reservation"),
    C("capabilities: [gpu]  # llm-b", "device_type", X, True, None, "GPU capability reservation cannot be satisfied"),
    C("=runtime: nvidia", "device_type", X, True, None, "dcgm-exporter service: nvidia runtime missing on an Ascend host"),
    C("image: nvcr.io/nvidia/k8s/dcgm-exporter", "device_type", R, False, "image: <npu-exporter image>",
      "DCGM only sees NVIDIA GPUs; metrics would be empty (an Ascend NPU exporter exists in MindCluster — unconfirmed)"),
])

# ---------------------------------------------------------------- requirements-cuda.txt
E("serving_requirements", "requirements-cuda.txt", "explicit_replacement", "serving-engine requirements file for CUDA 12.1", [
    C("=torch==2.3.1", "import_torch_npu", A, True, "torch==2.3.1\ntorch-npu==2.3.1.post6",
      "torch_npu wheel must match torch exactly (x.y.z[.postN]); 2.3.1.post6 ↔ CANN 8.1.RC1 (§1.1/§1.2 " + KB + ")"),
    C("=xformers==0.0.27", "attention_kernel", X, True, None, "no NPU backend for xformers (§6 " + KB + ")"),
    C("=triton==2.3.1", "triton_kernel_tuning", R, False, "triton-ascend",
      "CUDA Triton is useless on NPU; triton-ascend (§6). Whether the pinned wheel even installs on aarch64 hosts is unconfirmed"),
    C("=flash-attn==2.5.9.post1", "attention_kernel", X, True, None, "flash-attn cannot be installed on NPU (§6)"),
    C("flashinfer @ https://github.com/flashinfer-ai", "attention_kernel", X, True, None, "cu121 x86_64 wheel of a CUDA-only kernel library"),
    C("=vllm-flash-attn==2.5.9.post1", "attention_kernel", X, True, None, "CUDA-only flash-attn fork"),
    C("=bitsandbytes>=0.43.1", "custom_cuda_extension", R, False, "bitsandbytes  # multi-backend build with Ascend NF4 support",
      "the CUDA build installs but only NF4 is available for Ascend and only in the multi-backend branch (§6)"),
    C("=auto-gptq==0.7.1", "custom_cuda_extension", R, False, "auto-gptq==0.7.1  # install with BUILD_CUDA_EXT=0",
      "PyPI wheels carry CUDA extensions; a no-extension build is needed — unconfirmed how it installs on aarch64"),
    C("=autoawq-kernels==0.0.6", "custom_cuda_extension", X, True, None, "prebuilt CUDA kernels only"),
    C("=exllamav2==0.1.6", "custom_cuda_extension", X, True, None, "exllamav2 kernels are CUDA (JIT nvcc or prebuilt); no NPU path"),
    C("=nvidia-cublas-cu12==12.1.3.1", "custom_cuda_extension", X, False, None, "CUDA runtime library wheel, useless on NPU"),
    C("=nvidia-cudnn-cu12==8.9.2.26", "custom_cuda_extension", X, False, None, "CUDA runtime library wheel"),
    C("=nvidia-nccl-cu12==2.20.5", "dist_backend", X, False, None, "NCCL wheel; HCCL ships with CANN"),
    C("=nvidia-ml-py==12.555.43", "torch_cuda_api", X, False, None,
      "NVML has no NPU equivalent; torch.npu.utilization / mem_get_info or npu-smi instead (§6)"),
    C("=cupy-cuda12x==13.1.0", "custom_cuda_extension", X, False, None, "no Ascend support in CuPy (§6)"),
])

# ---------------------------------------------------------------- pynvml GPU monitor
NVML = "NVML (pynvml) has no NPU equivalent; torch.npu.utilization / mem_get_info / get_device_name or npu-smi (§6 " + KB + ")"
E("gpu_monitor", "server/utils/gpu_monitor.py", "explicit_replacement", "serving-engine GPU telemetry thread built on pynvml + Prometheus", [
    C("=import torch", "import_torch_npu", A, True, TN, TN_NOTE),
    C("=import pynvml", "torch_cuda_api", X, True, None, "nvidia-ml-py is not installed in an NPU environment. " + NVML),
    C("pynvml.nvmlInit()", "torch_cuda_api", X, True, None, "raises NVMLError (library not found) on an NPU host. " + NVML),
    C("visible = os.environ.get(\"CUDA_VISIBLE_DEVICES\")", "env_var", R, False,
      "visible = os.environ.get(\"ASCEND_RT_VISIBLE_DEVICES\")", "device-visibility variable of the Ascend runtime (§1 " + DIST + ")"),
    C("list(range(pynvml.nvmlDeviceGetCount()))", "torch_cuda_api", R, True,
      "devices = [int(x) for x in visible.split(\",\")] if visible else list(range(torch.npu.device_count()))", NVML),
    C("self.handles = {i: pynvml.nvmlDeviceGetHandleByIndex(i)", "torch_cuda_api", X, True, None, NVML),
    C("pynvml.nvmlShutdown()", "torch_cuda_api", X, True, None, NVML),
    C("mem = pynvml.nvmlDeviceGetMemoryInfo(h)", "torch_cuda_api", R, True,
      "free, total = torch.npu.mem_get_info(i)", "torch.npu.mem_get_info (TSV ✔); indices are logical ids in this process"),
    C("util = pynvml.nvmlDeviceGetUtilizationRates(h)", "torch_cuda_api", R, True, "util = torch.npu.utilization(i)",
      "torch.npu.utilization is in torch_npu.npu.__all__ (§2.1)"),
    C("temp = pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU)", "torch_cuda_api", R, True,
      "temp = read_npu_temp(i)  # parse Temp(C) from `npu-smi info`",
      "no torch_npu temperature API; npu-smi info prints Temp(C) (ascend-host-formats.md §1)"),
    C("name = pynvml.nvmlDeviceGetName(h)", "torch_cuda_api", R, True, "name = torch.npu.get_device_name(i)", NVML),
    C("TORCH_RESERVED.labels(gpu=str(local)).set(torch.cuda.memory_reserved(local))", "torch_cuda_api", R, True,
      "TORCH_RESERVED.labels(gpu=str(local)).set(torch.npu.memory_reserved(local))", "torch.cuda → torch.npu"),
    C("except pynvml.NVMLError as e:", "torch_cuda_api", R, True, "except RuntimeError as e:", "pynvml is gone"),
    C("free, total = torch.cuda.mem_get_info(local_index)", "torch_cuda_api", R, True,
      "free, total = torch.npu.mem_get_info(local_index)", "torch.cuda → torch.npu"),
])
