"""Labels for probe79 (hand-written synthetic upstream files; see ../README.md).

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

# --------------------------------------------------------------------------------------------------
# text-generation-webui
# --------------------------------------------------------------------------------------------------

E("tgw_models", "modules/models.py", "device_branch_or_abstraction",
  "oobabooga/text-generation-webui modules/models.py (loader dispatch, HF loader, max-memory dict)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu  # registers the npu device for the branches below",
      "the NPU branches added below call torch.npu.* / move to 'npu'; explicit import recommended even with autoload"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", B, True,
      "torch.npu.set_device(local_rank) if is_npu_available() else torch.cuda.set_device(local_rank)",
      "DeepSpeed ZeRO-3 inference path: CUDA set_device raises on a torch without CUDA; "
      "deepspeed.init_distributed() right below is left alone (DeepSpeed's NPU accelerator picks hccl)"),
    C("params['use_flash_attention_2'] = True", "attention_kernel", R, True,
      "params['attn_implementation'] = 'sdpa'",
      "flash_attention_2 needs the flash-attn package, which cannot be installed on Ascend; SDPA dispatches to "
      "the NPU fused attention (transformers PR #36383)"),
    C("model = model.cuda()", "tensor_to_device", B, True,
      "model = model.to('npu') if is_npu_available() else model.cuda()",
      "default (no-flags) load path ends in .cuda(): fails without CUDA"),
    C("if not any((shared.args.cpu, torch.cuda.is_available(), is_xpu_available()", "device_type", B, True,
      "if not any((shared.args.cpu, torch.cuda.is_available(), is_npu_available(), is_xpu_available(), torch.backends.mps.is_available())):",
      "with no CUDA/XPU/MPS the loader silently switches shared.args.cpu=True and loads fp32 on the CPU"),
    C("=params['quantization_config'] = BitsAndBytesConfig(load_in_8bit=True)", "custom_cuda_extension", R, False,
      "raise ValueError('--load-in-8bit (LLM.int8) is not available on Ascend NPU')",
      "bitsandbytes LLM.int8 is not listed for NPU (only NF4 in the multi-backend build); unconfirmed failure mode"),
    C("total_mem = (torch.cuda.get_device_properties(0).total_memory", "torch_cuda_api", B, True,
      "total_mem = (torch.npu.get_device_properties(0).total_memory / (1024 * 1024))",
      "--auto-devices sizing: get_device_properties needs a CUDA build (NPU form exposes total_memory)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", B, False,
      "torch.npu.empty_cache()",
      "no-op without CUDA: the NPU cache is simply not released between generations"),
])

E("tgw_text_generation", "modules/text_generation.py", "device_branch_or_abstraction",
  "oobabooga/text-generation-webui modules/text_generation.py (encode(), set_manual_seed, HF generate loop)", [
    C("return input_ids.to(device=local_rank)", "tensor_to_device", R, True,
      "return input_ids.to(device=f'npu:{local_rank}')",
      "an int device index means cuda:<n>; the DeepSpeed path fails on NPU"),
    C("return input_ids.cuda()", "tensor_to_device", B, True,
      "return input_ids.to('npu:0') if is_npu_available() else input_ids.cuda()",
      "fall-through branch of encode(): every HF-loaded model on an NPU host lands here"),
    C("if torch.cuda.is_available():", "device_type", B, False,
      "elif is_npu_available(): torch.npu.manual_seed_all(seed)",
      "CUDA-only reseed is skipped on NPU; torch.manual_seed above already seeds the PrivateUse1 generators "
      "(unconfirmed in the knowledge)"),
])

E("tgw_llamacpp_model", "modules/llamacpp_model.py", "explicit_replacement",
  "oobabooga/text-generation-webui modules/llamacpp_model.py + llama_cpp_python_hijack (CPU / cuda / tensorcores builds)", [
    # Deliberately empty: every CUDA-named import is a guarded fallback chain that ends in plain
    # `llama_cpp`, which is what a CANN build of llama-cpp-python installs as.
])

E("tgw_exllamav2_hf", "modules/exllamav2_hf.py", "explicit_replacement",
  "oobabooga/text-generation-webui modules/exllamav2_hf.py (ExLlamaV2 wrapped as a transformers PreTrainedModel)", [
    C("from exllamav2 import (", "custom_cuda_extension", R, True,
      "from transformers import AutoModelForCausalLM  # ExLlamaV2 has no Ascend backend",
      "exllamav2 imports exllamav2_ext (prebuilt cu wheel or nvcc JIT build); no NPU kernels exist, the loader "
      "has to go through transformers instead"),
    C("return torch.device(0)", "device_type", R, True,
      "return torch.device('npu', 0)",
      "torch.device(0) is cuda:0; generate() moves inputs to model.device"),
])

E("tgw_one_click", "one_click.py", "device_branch_or_abstraction",
  "oobabooga/text-generation-webui one_click.py (installer: GPU menu, torch index URLs, requirements selection)", [
    C('TORCH_VERSION = "2.2.1"', "import_torch_npu", R, True, 'TORCH_VERSION = "2.1.0"  # must have a matching torch_npu wheel',
      "torch_npu wheels exist for 2.1.0 / 2.2.0 / 2.3.1 ... but not 2.2.1 (version matrix); the wheel version must equal torch's"),
    C("'A': 'NVIDIA',", "device_type", B, True, "'E': 'Ascend NPU (torch_npu, Linux only)',",
      "no menu entry for Ascend: an NPU host can only pick CUDA, ROCm or CPU wheels"),
    C('"A": "NVIDIA",', "device_type", B, True, '"E": "ASCEND",', "choice -> name map needs the new entry"),
    C('install_pytorch += "--index-url https://download.pytorch.org/whl/cu121"', "import_torch_npu", B, True,
      'elif selected_gpu == "ASCEND": install_pytorch += "--index-url https://download.pytorch.org/whl/cpu && python -m pip install torch-npu==2.1.0.post12"',
      "CUDA wheel index; Ascend needs CPU torch (x86) or PyPI torch (aarch64) plus the paired torch_npu wheel"),
    C('run_cmd(f"conda install -y -c \\"nvidia/label/', "torch_cuda_api", B, False,
      'elif selected_gpu == "ASCEND": check ASCEND_TOOLKIT_HOME / source /usr/local/Ascend/ascend-toolkit/set_env.sh',
      "the CUDA runtime comes from the nvidia conda channel; CANN is a system install and only needs checking"),
    C("is_cuda = '+cu' in torver", "device_type", B, True,
      "is_npu = importlib.util.find_spec('torch_npu') is not None",
      "an NPU torch reads as '+cpu' (x86) or has no local tag (aarch64), so the NPU environment is taken for CPU or NVIDIA"),
    C("elif is_cpu or is_intel:", "device_type", R, True,
      'elif is_npu: base_requirements = "requirements_npu.txt"',
      "x86 NPU hosts get requirements_cpu_only.txt, aarch64 ones fall to the NVIDIA requirements.txt"),
])

E("tgw_training", "modules/training.py", "explicit_replacement",
  "oobabooga/text-generation-webui modules/training.py (LoRA training tab on top of HF Trainer)", [
    C("OPTIMIZER_CHOICES = ['adamw_hf'", "fused_optimizer", R, False,
      "OPTIMIZER_CHOICES = ['adamw_hf', 'adamw_torch', 'adafactor', 'sgd', 'adagrad']  # + NpuFusedAdamW via a custom optimizer",
      "adamw_apex_fused / adamw_bnb_8bit need CUDA apex / bitsandbytes 8-bit optimizers, neither available on Ascend"),
    C("from alpaca_lora_4bit.monkeypatch.peft_tuners_lora_monkey_patch import (", "custom_cuda_extension", X, True, None,
      "--monkey-patch (GPTQ-for-LLaMa 4-bit LoRA) pulls alpaca_lora_4bit, whose autograd_4bit imports the nvcc-built quant_cuda"),
    C("from alpaca_lora_4bit.autograd_4bit import Autograd4bitQuantLinear", "custom_cuda_extension", X, True, None,
      "second half of the same CUDA-only monkey patch"),
    C("lora_model = torch.compile(lora_model)", "compile_mode", R, False,
      'lora_model = torch.compile(lora_model, backend="npugraphs")  # or leave eager',
      "Inductor on NPU needs triton-ascend / torch_npu graph mode; unconfirmed whether the default backend works here"),
    C("vram = torch.cuda.max_memory_reserved() / 2**30", "torch_cuda_api", R, False,
      "vram = torch.npu.max_memory_reserved() / 2**30",
      "no error without CUDA (stats read as 0), so the progress line just reports 0 GiB"),
])

E("tgw_gptq_loader", "modules/GPTQ_loader.py", "explicit_replacement",
  "oobabooga/text-generation-webui modules/GPTQ_loader.py (GPTQ-for-LLaMa loader, pre_layer offload)", [
    C("from gptq_for_llama import llama_inference_offload", "custom_cuda_extension", X, True, None,
      "GPTQ-for-LLaMa's quant module imports quant_cuda (nvcc-built); no NPU build"),
    C("from gptq_for_llama.modelutils import find_layers", "custom_cuda_extension", R, False,
      "from auto_gptq.modeling._utils import find_layers",
      "pure-torch helper; only changes because the package goes"),
    C("from gptq_for_llama.quant import make_quant", "custom_cuda_extension", X, True, None,
      "make_quant builds QuantLinear layers that call quant_cuda.vecquant*matmul"),
    C("torch.cuda.device_count() > 1", "torch_cuda_api", R, True,
      "if shared.args.gpu_memory or torch.npu.device_count() > 1:",
      "0 on NPU: multi-NPU hosts silently skip the accelerate dispatch"),
    C("model = model.to(torch.device('cuda:0'))", "tensor_to_device", R, True,
      "model = model.to(torch.device('npu:0'))", "hard-coded cuda:0"),
])

E("tgw_requirements", "requirements.txt", "explicit_replacement",
  "oobabooga/text-generation-webui requirements.txt (NVIDIA, cu121 wheels pinned by URL)", [
    C("aqlm[gpu,cpu]==1.1.3", "custom_cuda_extension", R, False, 'aqlm[cpu]==1.1.3; platform_system == "Linux"',
      "the gpu extra pulls Triton/CUDA kernels; unconfirmed on triton-ascend"),
    C("bitsandbytes==0.43.*", "custom_cuda_extension", R, False,
      "# bitsandbytes: multi-backend build with Ascend NF4 support only",
      "stock 0.43 is a CUDA build; NPU support exists only for NF4 in the multi-backend branch (unconfirmed here)"),
    C("llama_cpp_python_cuda-0.2.64+cu121-cp311-cp311-manylinux_2_31_x86_64.whl", "custom_cuda_extension", X, True, None,
      "cuBLAS build linked against libcudart/libcublas; installed on x86_64 Ascend hosts by the marker (aarch64 hosts skip it). "
      "Replace with llama-cpp-python built for CANN"),
    C("llama_cpp_python_cuda-0.2.64+cu121-cp310-cp310-manylinux_2_31_x86_64.whl", "custom_cuda_extension", X, True, None,
      "same wheel for Python 3.10"),
    C("llama_cpp_python_cuda_tensorcores-0.2.64+cu121-cp311-cp311-manylinux_2_31_x86_64.whl", "custom_cuda_extension", X, True, None,
      "tensor-core (MMQ) cuBLAS build"),
    C("llama_cpp_python_cuda_tensorcores-0.2.64+cu121-cp310-cp310-manylinux_2_31_x86_64.whl", "custom_cuda_extension", X, True, None,
      "tensor-core build for Python 3.10"),
    C("auto_gptq-0.6.0+cu121-cp311-cp311-linux_x86_64.whl", "custom_cuda_extension", R, True,
      'auto-gptq==0.6.0  # source build with BUILD_CUDA_EXT=0 (torch fallback kernels)',
      "cu121 wheel: its autogptq_cuda / exllama kernels need the CUDA runtime"),
    C("auto_gptq-0.6.0+cu121-cp310-cp310-linux_x86_64.whl", "custom_cuda_extension", X, True, None, "Python 3.10 variant"),
    C("exllamav2-0.0.19+cu121-cp311-cp311-linux_x86_64.whl", "custom_cuda_extension", X, True, None,
      "prebuilt exllamav2_ext against CUDA 12.1; no NPU backend"),
    C("exllamav2-0.0.19-py3-none-any.whl", "custom_cuda_extension", X, True, None,
      "the non-x86 line is exactly what an aarch64 Ascend host installs: the pure wheel JIT-compiles the CUDA extension on import"),
    C("flash_attn-2.5.6+cu122torch2.2.0cxx11abiFALSE", "attention_kernel", X, True, None,
      "flash-attn cannot run on Ascend; transformers uses SDPA / npu_fusion_attention instead"),
    C("gptq_for_llama-0.1.1+cu121", "custom_cuda_extension", X, True, None, "quant_cuda kernels"),
    C("ctransformers-0.2.27+cu121-py3-none-any.whl", "custom_cuda_extension", R, False, "ctransformers==0.2.27",
      "no marker, installs everywhere; the bundled CPU libraries still work, only the CUDA lib is unusable"),
    C("autoawq==0.2.3", "custom_cuda_extension", R, False,
      'autoawq==0.2.3  # without autoawq-kernels: naive dequant path',
      "AutoAWQ pulls the CUDA-only autoawq-kernels; unconfirmed whether the naive path is reached cleanly"),
])

E("tgw_dockerfile", "docker/nvidia/Dockerfile", "explicit_replacement",
  "text-generation-webui docker/nvidia/Dockerfile (cuBLAS llama-cpp-python, AOT exllamav2 wheel, one-click install)", [
    C("FROM nvidia/cuda:12.1.1-devel-ubuntu22.04 AS builder", "torch_cuda_api", R, True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10 AS builder",
      "CUDA toolkit image: no CANN toolkit, no Ascend driver userspace"),
    C('ARG TORCH_CUDA_ARCH_LIST="', "env_var", X, False, None, "nvcc arch list; meaningless on Ascend"),
    C('CMAKE_ARGS="-DLLAMA_CUBLAS=on" FORCE_CMAKE=1', "env_var", R, True,
      'CMAKE_ARGS="-DGGML_CANN=on" FORCE_CMAKE=1 \\',
      "cuBLAS build of llama.cpp needs nvcc and libcublas; the CANN backend flag name is unconfirmed in the knowledge"),
    C("git clone --depth 1 --branch v0.0.19 https://github.com/turboderp/exllamav2", "custom_cuda_extension", X, True, None,
      "AOT build of exllamav2_ext (CUDAExtension) cannot be done without nvcc; drop the ExLlamaV2 stage"),
    C("pip3 install torch==2.2.1 --index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", R, True,
      "pip3 install torch==2.1.0 torch-npu==2.1.0.post12 && \\",
      "CUDA wheel of torch; Ascend needs the torch / torch_npu pair"),
    C("FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04", "torch_cuda_api", R, True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10", "runtime stage on the CUDA image"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, False, "ENV ASCEND_VISIBLE_DEVICES=0",
      "read only by the NVIDIA container runtime; NPUs come from --device /dev/davinciN or ASCEND_VISIBLE_DEVICES under Ascend Docker Runtime"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, False, None, "NVIDIA runtime only"),
    C("ENV PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", R, False,
      "ENV PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
      "the CUDA allocator knob is ignored by torch_npu's caching allocator"),
    C("RUN GPU_CHOICE=A USE_CUDA118=FALSE", "device_type", R, True,
      "RUN GPU_CHOICE=E LAUNCH_AFTER_INSTALL=FALSE INSTALL_EXTENSIONS=TRUE ./start_linux.sh --verbose",
      "choice A installs the cu121 torch wheel and the NVIDIA requirements file"),
    C("CMD nvidia-smi --query-gpu=name,memory.used --format=csv,noheader || exit 1", "device_capability_check", R, True,
      "CMD npu-smi info -t usages -i 0 || exit 1",
      "nvidia-smi is absent in an Ascend container: the health check always fails"),
])

E("tgw_compose", "docker/nvidia/docker-compose.yml", "explicit_replacement",
  "text-generation-webui docker/nvidia/docker-compose.yml (GPU reservation, second API-only service)", [
    C("TORCH_CUDA_ARCH_LIST: ${TORCH_CUDA_ARCH_LIST:-7.5}", "env_var", X, False, None, "build arg for nvcc"),
    C("- CUDA_VISIBLE_DEVICES=${GPU_IDS:-0}", "env_var", R, True, "- ASCEND_RT_VISIBLE_DEVICES=${NPU_IDS:-0}",
      "the Ascend runtime selects devices through ASCEND_RT_VISIBLE_DEVICES"),
    C("- PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512", "env_var", R, False,
      "- PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:512", "allocator tuning; CUDA variable ignored"),
    C("- ./cloudflared:/etc/cloudflared", "device_type", A, True,
      "- /usr/local/Ascend/driver:/usr/local/Ascend/driver:ro  (+ /usr/local/dcmi, /usr/local/bin/npu-smi, /etc/ascend_install.info)",
      "without Ascend Docker Runtime the driver userspace has to be bind-mounted as in the standard Ascend docker run"),
    C("- driver: nvidia", "device_type", R, True,
      "devices: [/dev/davinci0, /dev/davinci_manager, /dev/devmm_svm, /dev/hisi_hdc]",
      "compose refuses to start: no 'nvidia' device driver on an Ascend host"),
    C("capabilities: [gpu]", "device_type", X, True, None, "part of the NVIDIA device reservation"),
    C("runtime: nvidia", "device_type", R, True, "runtime: ascend",
      "unknown runtime on an Ascend host (Ascend Docker Runtime registers as 'ascend')"),
    C("- NVIDIA_VISIBLE_DEVICES=1", "env_var", R, True, "- ASCEND_VISIBLE_DEVICES=1",
      "with the ascend runtime, ASCEND_VISIBLE_DEVICES decides which NPUs are mounted"),
])

E("tgw_model_config", "models/config-user.yaml", "explicit_replacement",
  "text-generation-webui models/config-user.yaml (per-model loader settings saved from the UI)", [
    C("loader: ExLlamav2_HF", "custom_cuda_extension", R, True, "loader: Transformers",
      "ExLlamaV2 needs its CUDA extension; GPTQ checkpoints load through transformers on NPU"),
    C("=loader: ExLlamav2", "custom_cuda_extension", R, True, "loader: Transformers  # EXL2 has no NPU path; use an fp16/GPTQ export",
      "EXL2 weights can only be run by ExLlamaV2"),
    C("no_inject_fused_attention: false", "custom_cuda_extension", R, False, "no_inject_fused_attention: true",
      "fuse_layers=True swaps in AutoAWQ fused modules built on CUDA kernels; unconfirmed failure mode on NPU"),
    C("use_flash_attention_2: true", "attention_kernel", R, True, "use_flash_attention_2: false",
      "flash-attn package unavailable on Ascend (SDPA is used instead)"),
    C("=load_in_4bit: true", "custom_cuda_extension", R, False, "load_in_4bit: true  # needs bitsandbytes multi-backend (NPU NF4)",
      "NF4 on NPU only with the multi-backend bitsandbytes build"),
    C("load_in_8bit: true", "custom_cuda_extension", R, False, "load_in_8bit: false",
      "LLM.int8 is not listed for NPU; unconfirmed"),
    C("loader: GPTQ-for-LLaMa", "custom_cuda_extension", R, True, "loader: AutoGPTQ",
      "GPTQ-for-LLaMa needs quant_cuda"),
    C("n_gpu_layers: 35", "custom_cuda_extension", R, False, "n_gpu_layers: 0",
      "ctransformers offloads only through its CUDA/Metal libraries; unconfirmed"),
])

# --------------------------------------------------------------------------------------------------
# FastChat
# --------------------------------------------------------------------------------------------------

E("fastchat_model_adapter", "fastchat/model/model_adapter.py", "device_branch_or_abstraction",
  "lm-sys/FastChat fastchat/model/model_adapter.py (load_model device switch, add_model_args)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu  # or inside the new device == 'npu' branch",
      "the 'npu' device type needs torch_npu registered"),
    C('device: str = "cuda",', "device_type", R, True, 'device: str = "npu",',
      "callers that omit device= (llm_judge, huggingface_api helpers) get cuda"),
    C('elif device == "cuda":', "device_type", B, True,
      'elif device == "npu": kwargs = {"torch_dtype": torch.float16}  (+ same num_gpus / max_memory handling)',
      "any other device string ends in ValueError('Invalid device')"),
    C('if (device == "cuda" and num_gpus == 1 and not cpu_offloading) or device in (', "device_type", B, True,
      'if (device in ("cuda", "npu") and num_gpus == 1 and not cpu_offloading) or device in (',
      "the single-device model is never moved to the NPU"),
    C('choices=["cpu", "cuda", "mps", "xpu"],', "device_type", R, True, 'choices=["cpu", "cuda", "mps", "xpu", "npu"],',
      "--device npu is rejected by argparse"),
    C('default="cuda",', "device_type", R, True, 'default="npu",', "CLI default device"),
])

E("fastchat_utils", "fastchat/utils.py", "explicit_replacement",
  "lm-sys/FastChat fastchat/utils.py (get_gpu_memory and friends)", [
    C("=torch.cuda.device_count()", "torch_cuda_api", R, True, "torch.npu.device_count()",
      "0 on NPU: the list is empty and load_model indexes available_gpu_memory[i]"),
    C("else min(max_gpus, torch.cuda.device_count())", "torch_cuda_api", R, True,
      "else min(max_gpus, torch.npu.device_count())", "same, with --num-gpus"),
    C("with torch.cuda.device(gpu_id):", "torch_cuda_api", R, True, "with torch.npu.device(gpu_id):", "needs a CUDA build"),
    C("device = torch.cuda.current_device()", "torch_cuda_api", R, True, "device = torch.npu.current_device()", "needs a CUDA build"),
    C("gpu_properties = torch.cuda.get_device_properties(device)", "torch_cuda_api", R, True,
      "gpu_properties = torch.npu.get_device_properties(device)", "NPU form has total_memory"),
    C("allocated_memory = torch.cuda.memory_allocated() / (1024**3)", "torch_cuda_api", R, True,
      "allocated_memory = torch.npu.memory_allocated() / (1024**3)",
      "reads 0 without CUDA, so free memory is over-estimated and max_memory set too high"),
])

E("fastchat_inference", "fastchat/serve/inference.py", "device_branch_or_abstraction",
  "lm-sys/FastChat fastchat/serve/inference.py (generate_stream token loop, chat_loop)", [
    C("indices = torch.multinomial(probs, num_samples=2)", "unsupported_op_workaround", R, False,
      "indices = torch.multinomial(probs.float(), num_samples=2)",
      "Ascend's list gives torch.multinomial fp16/fp32 inputs only; with --dtype bfloat16 the probs are bf16 (failure mode unconfirmed)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", B, False,
      'if device == "npu": torch.npu.empty_cache()',
      "no-op without CUDA; the KV cache of each request stays in the NPU caching allocator"),
])

E("fastchat_model_worker", "fastchat/serve/model_worker.py", "device_branch_or_abstraction",
  "lm-sys/FastChat fastchat/serve/model_worker.py (FastAPI worker, embeddings, --gpus)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "entry point of the worker process (--device npu)"),
    C("def generate_stream_gate(self, params):", "torch_cuda_api", A, False,
      'if self.device == "npu": torch_npu.npu.set_device("npu:0")',
      "the streaming generator runs in a uvicorn worker thread; FastChat's own NPU port re-selects the device there "
      "(per-thread device context, unconfirmed in the knowledge)"),
    C("=except torch.cuda.OutOfMemoryError as e:", "torch_cuda_api", R, False,
      "except (torch.cuda.OutOfMemoryError, torch.OutOfMemoryError) as e:",
      "unconfirmed which exception type torch_npu raises on OOM; otherwise it is reported as INTERNAL_ERROR"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", B, False, 'if self.device == "npu": torch.npu.empty_cache()',
      "no-op without CUDA"),
    C("except torch.cuda.OutOfMemoryError as e:  # embedding batch too large", "torch_cuda_api", R, False,
      "except (torch.cuda.OutOfMemoryError, torch.OutOfMemoryError) as e:", "same as in generate_stream_gate"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpus',
      "--gpus would not restrict the NPUs the worker sees"),
])

E("fastchat_flash_patch", "fastchat/train/llama_flash_attn_monkey_patch.py", "explicit_replacement",
  "lm-sys/FastChat fastchat/train/llama_flash_attn_monkey_patch.py (flash-attn v2 LlamaAttention.forward)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "the patched forward calls torch_npu.npu_fusion_attention"),
    C("from flash_attn import __version__ as flash_attn_version", "attention_kernel", X, True, None,
      "flash-attn cannot be installed on Ascend: ImportError at module import"),
    C("from flash_attn.bert_padding import pad_input, unpad_input", "attention_kernel", R, True,
      "from fastchat.train.bert_padding import pad_input, unpad_input  # vendored pure-torch copy",
      "the padding helpers are plain torch; only their home package is unavailable"),
    C("from flash_attn.flash_attn_interface import (", "attention_kernel", R, True,
      "import torch_npu  # npu_fusion_attention replaces flash_attn_func / flash_attn_varlen_kvpacked_func",
      "flash-attn kernels"),
    C('flash_attn_version >= "2.1.0"', "attention_kernel", X, True, None,
      "version assert on the removed package"),
    C("output = flash_attn_func(q, k, v, 0.0, softmax_scale=None, causal=True).view(", "attention_kernel", R, True,
      'output = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, "BSND", atten_mask=causal_mask, scale=1.0 / math.sqrt(self.head_dim), sparse_mode=3)[0].view(',
      "BSND layout, causal via a 2048x2048 triu mask + sparse_mode=3; GQA (kv_heads < num_heads) supported"),
    C("output_unpad = flash_attn_varlen_kvpacked_func(", "attention_kernel", R, True,
      'output_unpad = torch_npu.npu_fusion_attention(q, kv[:, 0], kv[:, 1], self.num_heads, "TND", atten_mask=causal_mask, sparse_mode=3, actual_seq_qlen=cu_q_lens[1:].tolist(), actual_seq_kvlen=cu_k_lens[1:].tolist())[0]',
      "varlen -> TND layout with cumulative actual_seq lengths"),
    C("q, k = ((x * cos) + (rotate_half(x) * sin) for x in (q, k))", "npu_fused_op", R, False,
      "q, k = (torch_npu.npu_rotary_mul(x, cos, sin) for x in (q, k))", "performance only (fused RoPE)"),
    C("cuda_major, cuda_minor = torch.cuda.get_device_capability()", "device_capability_check", X, True, None,
      "CUDA SM check (A100/H100 warning); raises without CUDA, returns None under transfer_to_npu"),
    C('device = torch.device("cuda")', "device_type", R, True, 'device = torch.device("npu")', "self-test helper"),
])

E("fastchat_train_lora", "fastchat/train/train_lora.py", "transfer_to_npu",
  "lm-sys/FastChat fastchat/train/train_lora.py (LoRA / QLoRA on DeepSpeed)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu", "training entry script"),
    C("from fastchat.train.llama_flash_attn_monkey_patch import (", "attention_kernel", R, True,
      "(import moved inside `if training_args.flash_attn:` / pointed at the NPU variant of the patch)",
      "module-level import pulls flash_attn even when --flash_attn is False: ImportError at start-up"),
    C('device_map = {"": int(os.environ.get("LOCAL_RANK") or 0)} if ddp else None', "tensor_to_device", R, False,
      'device_map = {"": f"npu:{int(os.environ.get(\'LOCAL_RANK\') or 0)}"} if ddp else None',
      "int device_map entries are resolved by accelerate; whether they map to npu:<n> is unconfirmed"),
    C("load_in_4bit=True,", "custom_cuda_extension", R, False,
      "load_in_4bit=True,  # needs the bitsandbytes multi-backend build (Ascend NF4)",
      "QLoRA path: NF4 on NPU only in the multi-backend bitsandbytes"),
])

E("fastchat_pyproject", "pyproject.toml", "explicit_replacement",
  "lm-sys/FastChat pyproject.toml (model_worker / train / quantization / vllm extras)", [
    C('"torch",', "import_torch_npu", A, True, '"torch-npu",', "the model worker needs the torch_npu wheel paired with torch"),
    C('"flash-attn>=2.0",', "attention_kernel", X, True, None, "pip install fschat[train] fails building flash-attn without CUDA"),
    C('"bitsandbytes>=0.41.1",', "custom_cuda_extension", R, False, '"bitsandbytes>=0.45.0",  # multi-backend build',
      "unconfirmed which bitsandbytes release carries the Ascend NF4 backend"),
    C('"auto-gptq>=0.5.1",', "custom_cuda_extension", R, True, '"auto-gptq>=0.5.1",  # install with BUILD_CUDA_EXT=0',
      "source build defaults to BUILD_CUDA_EXT=1 and aborts without a CUDA torch"),
    C('"autoawq>=0.1.8",', "custom_cuda_extension", R, False, '"autoawq>=0.1.8",  # without autoawq-kernels',
      "kernels package is CUDA-only; unconfirmed"),
    C('"exllamav2>=0.0.11",', "custom_cuda_extension", X, True, None, "exllamav2 builds/loads a CUDA extension"),
    C('vllm = ["vllm>=0.2.6"]', "custom_cuda_extension", R, True, 'vllm = ["vllm==0.9.1", "vllm-ascend==0.9.1"]',
      "Ascend serving goes through the vllm-ascend hardware plugin pinned to a matching vllm"),
    C('lightllm = ["lightllm"]', "custom_cuda_extension", X, False, None, "Triton/CUDA kernels; unconfirmed"),
])

E("fastchat_launch_sh", "scripts/run_vicuna.sh", "explicit_replacement",
  "FastChat-style train + serve launcher (torchrun FSDP fine-tune, one worker per GPU, vLLM worker)", [
    C("NUM_GPUS=${NUM_GPUS:-$(nvidia-smi --list-gpus | wc -l)}", "device_capability_check", R, True,
      "NUM_GPUS=${NUM_GPUS:-$(npu-smi info -l | awk '/Total Count/{print $NF}')}",
      "no nvidia-smi: the substitution fails and set -e aborts the script"),
    C("nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv", "device_capability_check", R, True,
      "npu-smi info", "same"),
    C("export NCCL_P2P_DISABLE=", "env_var", X, False, None, "NCCL knob; HCCL ignores it"),
    C("export NCCL_IB_DISABLE=", "env_var", X, False, None, "NCCL knob; HCCL ignores it"),
    C("export PYTORCH_CUDA_ALLOC_CONF=", "env_var", R, False,
      "export PYTORCH_NPU_ALLOC_CONF=${PYTORCH_NPU_ALLOC_CONF:-expandable_segments:True}", "allocator knob"),
    C("torchrun --nproc_per_node=\"$NUM_GPUS\" --master_port=20001 fastchat/train/train_mem.py", "attention_kernel", R, True,
      'torchrun --nproc_per_node="$NUM_GPUS" --master_port=20001 fastchat/train/train.py \\',
      "train_mem.py applies the flash-attn monkey patch at import (flash_attn unavailable)"),
    C('--fsdp "full_shard auto_wrap"', "distributed_framework", R, False,
      '--deepspeed playground/deepspeed_config_s3.json \\',
      "Ascend's 2.7.1 list marks FullyShardedDataParallel ✘ on A2/A3 (fully_shard ✔); failure mode unconfirmed"),
    C("--tf32 True", "amp", R, True, "--tf32 False \\",
      "TrainingArguments raises when tf32 is requested and is_torch_tf32_available() is False, which it is on NPU"),
    C("CUDA_VISIBLE_DEVICES=$i python3 -m fastchat.serve.model_worker", "env_var", R, True,
      "ASCEND_RT_VISIBLE_DEVICES=$i python3 -m fastchat.serve.model_worker \\", "per-worker device pinning"),
    C("--device cuda --num-gpus 1", "device_type", R, True, "--device npu --num-gpus 1 \\", "worker device"),
    C("CUDA_VISIBLE_DEVICES=6,7 python3", "env_var", R, True,
      "ASCEND_RT_VISIBLE_DEVICES=6,7 python3 -m fastchat.serve.model_worker \\", "two-device worker"),
])

# --------------------------------------------------------------------------------------------------
# AutoGPTQ
# --------------------------------------------------------------------------------------------------

E("autogptq_qlinear_exllamav2", "auto_gptq/nn_modules/qlinear/qlinear_exllamav2.py", "explicit_replacement",
  "AutoGPTQ/AutoGPTQ nn_modules/qlinear/qlinear_exllamav2.py (exllamav2 GPTQ GEMM kernels)", [
    C("from exllamav2_kernels import gemm_half_q_half, make_q_matrix", "custom_cuda_extension", R, True,
      "import torch_npu  # npu_weight_quant_batchmatmul replaces the exllamav2 GEMM",
      "guarded, but the fallback only raises ValueError when the layer is used"),
    C('return f"cuda:{idx}"', "device_type", R, True, 'return f"npu:{idx}"', "scratch buffers are allocated on cuda:<idx>"),
    C("gemm_half_q_half(x, q_handle, output, force_cuda)", "custom_cuda_extension", R, True,
      "output = torch_npu.npu_weight_quant_batchmatmul(x, self.qweight_npu, antiquant_scale=self.scales, antiquant_offset=self.zeros_npu)",
      "CUDA GEMM entry point"),
    C('assert self.qweight.device.type == "cuda"', "device_type", R, True, 'assert self.qweight.device.type == "npu"',
      "post_init refuses anything but CUDA"),
    C("self.q_handle = ext_make_q_matrix(self.q_tensors, temp_dq)", "custom_cuda_extension", R, True,
      "self.qweight_npu, self.zeros_npu = repack_gptq_for_npu(self.qweight, self.qzeros, self.scales)",
      "builds the CUDA-side Q matrix handle"),
])

E("autogptq_triton_kernels", "auto_gptq/nn_modules/triton_utils/kernels.py", "explicit_replacement",
  "AutoGPTQ triton_utils/kernels.py (GPTQ-triton quant_matmul_248 with custom autotune)", [
    C("from torch.cuda.amp import custom_bwd, custom_fwd", "amp", R, True,
      "from torch_npu.npu.amp import custom_bwd, custom_fwd",
      "cast_inputs only acts under CUDA autocast: under NPU autocast the fp16 cast is skipped and autocast stays on in the kernel"),
    C("=@custom_autotune.autotune(", "triton_kernel_tuning", R, False,
      "@custom_autotune.autotune(configs=ASCEND_CONFIGS, ...)",
      "num_warps / num_stages / block sizes tuned for NVIDIA SMs; retune for triton-ascend (unconfirmed)"),
    C("@custom_autotune.autotune(  # transposed variant", "triton_kernel_tuning", R, False,
      "@custom_autotune.autotune(  # transposed variant, Ascend configs", "same for the backward kernel"),
    C("=with torch.cuda.device(input.device):", "torch_cuda_api", R, True, "with torch.npu.device(input.device):",
      "torch.cuda.device rejects a non-CUDA device"),
    C("with torch.cuda.device(input.device):  # launch on the input's device", "torch_cuda_api", R, True,
      "with torch.npu.device(input.device):", "same, transposed launch"),
])

E("autogptq_custom_autotune", "auto_gptq/nn_modules/triton_utils/custom_autotune.py", "explicit_replacement",
  "AutoGPTQ triton_utils/custom_autotune.py (40-rep autotuner, config pruner, warmup)", [
    C("self.configs = [triton.Config({}, num_warps=4, num_stages=2)]", "triton_kernel_tuning", R, False,
      "self.configs = [triton.Config({})]", "warp-based default config (unconfirmed for triton-ascend)"),
    C("return triton.testing.do_bench(kernel_call, quantiles=(0.5, 0.2, 0.8), rep=40)", "triton_kernel_tuning", R, False,
      "return triton.testing.do_bench(kernel_call, quantiles=(0.5, 0.2, 0.8), rep=40)  # triton-ascend timer",
      "benchmarking relies on the backend's event timer; unconfirmed under triton-ascend"),
    C("kn_values[(k, n)] = (m.qweight.cuda(), m.scales.cuda()", "tensor_to_device", R, True,
      "kn_values[(k, n)] = (m.qweight.npu(), m.scales.npu(), m.qzeros.npu(), m.g_idx.npu(), m.bits, m.maxq)",
      ".cuda() on every quantized buffer"),
    C('a = torch.randn(m, k, dtype=torch.float16, device="cuda")', "device_type", R, True,
      'a = torch.randn(m, k, dtype=torch.float16, device="npu")', "warmup input"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "needs a CUDA build"),
])

E("autogptq_setup", "setup.py", "explicit_replacement",
  "AutoGPTQ/AutoGPTQ setup.py (BUILD_CUDA_EXT, CUDAExtension kernels, marlin, exllama)", [
    C('BUILD_CUDA_EXT = int(os.environ.get("BUILD_CUDA_EXT", "1")) == 1', "env_var", R, True,
      'BUILD_CUDA_EXT = int(os.environ.get("BUILD_CUDA_EXT", "0")) == 1  # no nvcc on Ascend',
      "defaults to building the CUDA kernels; an NPU torch has no CUDA so the build aborts"),
    C("capability = torch.cuda.get_device_capability(i)", "device_capability_check", R, False,
      "(not reached once BUILD_CUDA_EXT is off)", "SM detection; only on the CUDA build path"),
    C("default_cuda_version = torch.version.cuda", "torch_cuda_api", R, True,
      'default_cuda_version = torch.version.cuda or ""',
      "None on an NPU torch: the .split(\".\") on the next line raises AttributeError"),
    C('conda_cuda_include_dir = os.path.join(get_python_lib(), "nvidia/cuda_runtime/include")', "torch_cuda_api", X, False, None,
      "nvidia-cuda-runtime pip wheel headers"),
    C('cpp_extension.CUDAExtension("autogptq_cuda_64", [', "custom_cuda_extension", X, True, None, "nvcc kernel"),
    C('cpp_extension.CUDAExtension("autogptq_cuda_256", [', "custom_cuda_extension", X, True, None, "nvcc kernel"),
    C('cpp_extension.CUDAExtension("autogptq_marlin_cuda", [', "custom_cuda_extension", X, True, None, "Marlin (SM80+) kernel"),
    C('cpp_extension.CUDAExtension("exllama_kernels", [', "custom_cuda_extension", X, True, None, "exllama v1 kernels"),
    C('cpp_extension.CUDAExtension("exllamav2_kernels", [', "custom_cuda_extension", X, True, None, "exllama v2 kernels"),
    C('"triton": ["triton==2.0.0"],', "triton_kernel_tuning", R, False, '"triton": ["triton-ascend"],',
      "triton extra; the GPTQ-triton kernels would need porting to triton-ascend (unconfirmed)"),
])

E("autogptq_gptq", "auto_gptq/quantization/gptq.py", "explicit_replacement",
  "AutoGPTQ/AutoGPTQ quantization/gptq.py (Hessian accumulation, Cholesky-based fasterquant)", [
    C("H = torch.cholesky_inverse(H)", "unsupported_op_workaround", R, False,
      "H = torch.cholesky_inverse(H.cpu()).to(H.device)",
      "cholesky_inverse has no NPU kernel in any op list: CPU fallback per layer (performance)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "needs a CUDA build: quantization of every layer stops here"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "no-op without CUDA"),
])

E("autogptq_modeling_utils", "auto_gptq/modeling/_utils.py", "explicit_replacement",
  "AutoGPTQ/AutoGPTQ modeling/_utils.py (pack_model, simple_dispatch_model, autogptq_post_init)", [
    C("QuantLinear.warmup(model.to(CUDA_0), seqlen=model.seqlen)", "tensor_to_device", R, False,
      'QuantLinear.warmup(model.to("npu:0"), seqlen=model.seqlen)',
      "triton warm-up only (use_triton and warmup_triton)"),
    C("model = model.to(torch.device(d))", "tensor_to_device", R, True,
      'model = model.to(torch.device("npu", d) if isinstance(d, int) else torch.device(d))',
      "device_map values are int indices; torch.device(int) means cuda:<int>"),
    C("=d = torch.device(d)", "tensor_to_device", R, True,
      'd = torch.device("npu", d) if isinstance(d, int) else torch.device(d)', "same for the per-module hooks"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "no-op without CUDA"),
])

# --------------------------------------------------------------------------------------------------
# AutoAWQ
# --------------------------------------------------------------------------------------------------

E("awq_utils", "awq/utils/utils.py", "device_branch_or_abstraction",
  "casper-hansen/AutoAWQ awq/utils/utils.py (dispatch, memory helpers, get_best_device)", [
    C("model = model.to(torch.device(d))", "tensor_to_device", R, True,
      'model = model.to(torch.device("npu", d) if isinstance(d, int) else torch.device(d))',
      "int device_map index means cuda:<int>"),
    C("=d = torch.device(d)", "tensor_to_device", R, True,
      'd = torch.device("npu", d) if isinstance(d, int) else torch.device(d)', "same for AlignDevicesHook"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", B, False, "torch.npu.empty_cache() if is_npu_available() else torch.cuda.empty_cache()",
      "no-op without CUDA; clear_memory runs after every quantized layer"),
    C("memory_used = torch.cuda.max_memory_allocated(device) / (1024**3)", "torch_cuda_api", B, True,
      "memory_used = torch.npu.max_memory_allocated(device) / (1024**3)",
      "reads 0 without CUDA, so every device looks empty"),
    C("/ (torch.cuda.get_device_properties(device).total_memory / (1024**3))", "torch_cuda_api", B, True,
      "/ (torch.npu.get_device_properties(device).total_memory / (1024**3))", "raises without a CUDA build"),
    C("elif torch.cuda.is_available():", "device_type", B, True,
      'elif is_npu_available(): return "npu:0"',
      "calibration and packing silently run on the CPU of an NPU host"),
    C("for device_index in range(torch.cuda.device_count()):", "torch_cuda_api", B, True,
      "for device_index in range(torch.npu.device_count()):", "returns None on NPU"),
])

E("awq_gemm", "awq/modules/linear/gemm.py", "device_branch_or_abstraction",
  "casper-hansen/AutoAWQ awq/modules/linear/gemm.py (WQLinear_GEMM with awq_ext / triton / naive paths)", [
    C("if torch.cuda.is_available():", "device_type", R, True,
      "TRITON_AVAILABLE = torch.cuda.is_available()",
      "when the triton import succeeds (triton-ascend is installed on many NPU hosts) but CUDA is absent, TRITON_AVAILABLE "
      "is never bound and forward raises NameError at `elif TRITON_AVAILABLE`"),
    C("out = dequantize_gemm(qweight, qzeros, scales, w_bit, group_size)", "npu_fused_op", R, False,
      "out = torch_npu.npu_weight_quant_batchmatmul(x, qweight_npu, antiquant_scale=scales, antiquant_offset=zeros_npu)",
      "naive dequantise-then-matmul on every call; W4A16 fused op after repacking (layout mapping unconfirmed)"),
    C("if awq_ext is None and not TRITON_AVAILABLE:", "custom_cuda_extension", B, True,
      "weights = dequantize_gemm(qweight, qzeros, scales, 4, group_size).to(grad_output.dtype)  # NPU path",
      "backward has only awq_ext / triton implementations: PEFT training over AWQ raises on NPU"),
])

# --------------------------------------------------------------------------------------------------
# ExLlamaV2
# --------------------------------------------------------------------------------------------------

E("exllamav2_ext", "exllamav2/ext.py", "explicit_replacement",
  "turboderp/exllamav2 exllamav2/ext.py (prebuilt exllamav2_ext or cpp_extension.load JIT build)", [
    C("from torch.utils.cpp_extension import load", "custom_cuda_extension", R, True,
      "from torch_npu.utils.cpp_extension import NpuExtension  # AOT build of an Ascend C port",
      "torch.utils.cpp_extension.load is ✘ on A2/A3 in Ascend's list, and the sources are .cu"),
    C('extra_cuda_cflags = ["-lineinfo", "-O3"]', "custom_cuda_extension", X, False, None, "nvcc flags"),
    C("exllamav2_ext = load", "custom_cuda_extension", R, True,
      "import exllamav2_npu_ext as exllamav2_ext  # prebuilt with NpuExtension",
      "JIT nvcc build: no prebuilt wheel can exist for NPU, so this is always reached"),
    C('return ext_c.make_q_matrix(w["q_weight"],', "custom_cuda_extension", R, True,
      'return npu_make_q_matrix(w)  # repack EXL2 weights for npu_weight_quant_batchmatmul',
      "call into the CUDA extension (EXL2 weights)"),
])

E("exllamav2_model", "exllamav2/model.py", "explicit_replacement",
  "turboderp/exllamav2 exllamav2/model.py (device map, load, load_autosplit)", [
    C('os.environ["CUDA_MODULE_LOADING"] = "LAZY"', "env_var", X, False, None, "CUDA runtime knob"),
    C('return f"cuda:{idx}"', "device_type", R, True, 'return f"npu:{idx}"', "module / cache placement"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "end of load()"),
    C("num_devices = torch.torch.cuda.device_count()", "torch_cuda_api", R, True,
      "num_devices = torch.npu.device_count()", "0 on NPU: autosplit never advances past the first device"),
    C('if ("CUDA out of memory" in str(e)) or ("HIP out of memory" in str(e)):', "torch_cuda_api", R, False,
      'if any(s in str(e) for s in ("CUDA out of memory", "HIP out of memory", "NPU out of memory")):',
      "autosplit moves to the next device only on a recognised OOM message; NPU wording unconfirmed in the knowledge"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "no-op without CUDA: the failed layer's memory is not returned before retrying"),
    C("torch.cuda.empty_cache()  # give back the reserve tensors", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # give back the reserve tensors", "same"),
])

# --------------------------------------------------------------------------------------------------
# Gradio front-ends
# --------------------------------------------------------------------------------------------------

E("chatglm_web_demo", "web_demo.py", "explicit_replacement",
  "THUDM/ChatGLM2-6B web_demo.py + utils.load_model_on_gpus (Gradio chat, --quantize)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C("model = AutoModel.from_pretrained(checkpoint_path, trust_remote_code=True, **kwargs).half().cuda()", "tensor_to_device", R, True,
      "model = AutoModel.from_pretrained(checkpoint_path, trust_remote_code=True, **kwargs).half().npu()", "single-device path"),
    C("model = model.quantize(args.quantize)", "custom_cuda_extension", R, True,
      "model = model.quantize(args.quantize) if not is_npu else model  # cpm_kernels is CUDA-only",
      "ChatGLM's quantization.py runs its int4/int8 kernels through cpm_kernels (CUDA)"),
    C("model = model.half().cuda()", "tensor_to_device", R, True, "model = model.half().npu()", "default path"),
    C("if torch.cuda.is_available():", "device_type", B, False,
      "if torch.npu.is_available(): torch.npu.empty_cache()",
      "clearing the history never frees the NPU cache"),
])

E("gguf_gradio_app", "app.py", "device_branch_or_abstraction",
  "Hugging Face Space-style Gradio ChatInterface over ctransformers / llama-cpp-python GGUF models", [
    C('os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")', "env_var", R, False,
      'os.environ.setdefault("ASCEND_RT_VISIBLE_DEVICES", "0")',
      "harmless default here; which variable llama.cpp's CANN backend honours is unconfirmed"),
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "the NPU check below uses torch.npu"),
    C('GPU_LAYERS = int(os.environ.get("GPU_LAYERS", "50" if torch.cuda.is_available() else "0"))', "device_type", R, True,
      'GPU_LAYERS = int(os.environ.get("GPU_LAYERS", "50" if (torch.cuda.is_available() or torch.npu.is_available()) else "0"))',
      "an NPU host silently runs every layer on the CPU"),
    C('lib="cuda" if GPU_LAYERS > 0 else None,', "custom_cuda_extension", R, True,
      "lib=None,  # ctransformers has no Ascend library: offload via BACKEND=llama.cpp (CANN build)",
      "the ctransformers CUDA library needs libcudart/cuBLAS"),
    C("if not torch.cuda.is_available():", "device_type", R, False,
      "if GPU_LAYERS == 0:", "UI warning shows 'running on CPU' on an NPU host (cosmetic)"),
])
