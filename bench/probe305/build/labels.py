"""Labels for probe305: KV-cache compression / long-context inference research code (CUDA -> Ascend NPU).

Policy (see README.md for the full discussion):
* required=True  -> the unchanged line raises on an NPU host, computes or records something wrong, or silently
                    does the wrong thing (wrong device, feature silently disabled).
* required=False -> performance-only, silent no-op, hygiene, or a claim not confirmed in /work/shared/knowledge.
* `import torch_npu` is labelled in entry scripts and in modules whose ported lines call torch_npu.* directly.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU_ENTRY = ("entry script: torch_npu must be imported to register the npu device "
                    "(mandatory before torch_npu 2.5.1 autoload; the project pins torch 2.1/2.2)")

# ---------------------------------------------------------------------------------------------------------------
# H2O
# ---------------------------------------------------------------------------------------------------------------
E("h2o_modify_llama", "h2o_hf/utils_real_drop/modify_llama.py", "device_branch_or_abstraction",
  "H2O (FMInference/H2O) h2o_hf real-drop LlamaAttention with heavy-hitter KV cache",
  [])  # negative control: all tensors follow x.device; `from torch.cuda.amp import autocast` is unused and imports fine

E("h2o_run_summarization", "h2o_hf/run_summarization.py", "explicit_replacement",
  "H2O h2o_hf/run_summarization.py (XSUM/CNN few-shot summarization driver)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(args.seed)",
        "torch.manual_seed above already seeds every device (unconfirmed for npu); guarded by n_gpu which is 0 on NPU"),
      C('args.device = torch.device("cuda" if torch.cuda.is_available()', "device_type", "replace", False,
        'args.device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")',
        "args.device is only logged in this script (placement is done by .cuda()), so 'cpu' is a wrong log, not a wrong run"),
      C("args.n_gpu = 0 if args.no_cuda else torch.cuda.device_count()", "torch_cuda_api", "replace", False,
        "args.n_gpu = 0 if args.no_cuda else torch.npu.device_count()",
        "returns 0 silently on an NPU host; only used for logging and the redundant seed call"),
      C("model.half().eval().cuda()", "tensor_to_device", "replace", True, "model.half().eval().npu()",
        "Module.cuda() fails without CUDA"),
  ])

E("h2o_summarization_sh", "h2o_hf/scripts/summarization/eval.sh", "explicit_replacement",
  "H2O h2o_hf/scripts/summarization/eval.sh launcher",
  [
      C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment; not needed when the login shell / container already sources it"),
      C("CUDA_VISIBLE_DEVICES=${GPU} python -u run_summarization.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${GPU} python -u run_summarization.py \\",
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: every job lands on npu:0"),
      C("CUDA_VISIBLE_DEVICES=$GPU python -u run_summarization.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=$GPU python -u run_summarization.py \\",
        "same as above for the full-cache branch"),
  ])

# ---------------------------------------------------------------------------------------------------------------
# StreamingLLM
# ---------------------------------------------------------------------------------------------------------------
E("streaming_run_llama", "streaming-llm/examples/run_streaming_llama.py", "explicit_replacement",
  "mit-han-lab/streaming-llm examples/run_streaming_llama.py (+ a local --profile flag)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script; model is placed by device_map='auto', which only sees NPUs once torch_npu is loaded"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "torch.cuda.synchronize initialises CUDA and raises on an NPU host"),
      C("torch.cuda.synchronize()  # wait for the last decode step", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for the last decode step", "as above"),
      C("torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", True,
        'f"peak mem {torch.npu.max_memory_allocated() / 1024 ** 3:.2f} GiB"',
        "returns 0 silently when CUDA is not initialised: the reported peak memory is wrong"),
  ])

E("streaming_utils", "streaming-llm/streaming_llm/utils.py", "device_branch_or_abstraction",
  "mit-han-lab/streaming-llm streaming_llm/utils.py (load / parse_args / download helpers)",
  [])  # negative control: device_map="auto" + torch.float16 are fine on NPU (accelerate >= 0.22)

E("streaming_eval_long_ppl", "streaming-llm/examples/eval_long_ppl.py", "explicit_replacement",
  "mit-han-lab/streaming-llm examples/eval_long_ppl.py",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C('device = "cuda"', "device_type", "replace", True, 'device = "npu"',
        "input_ids.to('cuda') fails on an NPU host"),
  ])

E("streaming_env_yml", "streaming-llm/environment.yml", "explicit_replacement",
  "conda environment for streaming-llm (README's conda + pip install steps as a file)",
  [
      C("=- nvidia", "import_torch_npu", "removal", False, None,
        "NVIDIA conda channel only serves pytorch-cuda / CUDA libs; unused once those are gone"),
      C("pytorch-cuda=12.1", "import_torch_npu", "removal", True, None,
        "forces the CUDA build of pytorch; no such package for the aarch64 hosts Ascend servers usually are"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
        "torch_npu wheel matching pytorch 2.1.0 (added under the pip section)"),
      C("nvidia-ml-py", "import_torch_npu", "removal", False, None,
        "NVML bindings are useless on NPU (npu-smi instead); not imported by this code, so harmless"),
  ])

# ---------------------------------------------------------------------------------------------------------------
# SnapKV
# ---------------------------------------------------------------------------------------------------------------
E("snapkv_utils", "SnapKV/snapkv/monkeypatch/snapkv_utils.py", "device_branch_or_abstraction",
  "FasterDecoding/SnapKV snapkv/monkeypatch/snapkv_utils.py (SnapKVCluster) + a PyramidKV-style subclass",
  [])  # negative control; F.max_pool1d is ✔ on A2 for fp16/fp32 in Ascend's list (msFmkTransplt lists it unsupported)

E("snapkv_llama_hijack", "SnapKV/snapkv/monkeypatch/llama_hijack_4_37.py", "kernel_rewrite",
  "FasterDecoding/SnapKV llama_hijack_4_37.py (LlamaFlashAttention2.forward with prompt KV compression)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "ported flash path calls torch_npu.npu_fusion_attention"),
      C("from flash_attn import flash_attn_func, flash_attn_varlen_func", "attention_kernel", "removal", False, None,
        "guarded by is_flash_attn_2_available(), which is False on NPU, so the line never runs; goes with the flash-attn dependency"),
      C("from flash_attn.bert_padding import index_first_axis, pad_input, unpad_input", "attention_kernel", "replace", True,
        "    from snapkv.monkeypatch.bert_padding import index_first_axis, pad_input, unpad_input  # torch-only copy",
        "skipped by the guard on NPU, but pad_input is still needed after the varlen call -> NameError"),
      C("attn_output_unpad = flash_attn_varlen_func(", "attention_kernel", "replace", True,
        'attn_output_unpad = torch_npu.npu_fusion_attention(query_states, key_states, value_states, self.num_heads, "TND", scale=softmax_scale or 1.0 / math.sqrt(self.head_dim), sparse_mode=3, atten_mask=torch.triu(torch.ones(2048, 2048, dtype=torch.bool, device=query_states.device), 1), actual_seq_qlen=cu_seqlens_q[1:].tolist(), actual_seq_kvlen=cu_seqlens_k[1:].tolist())[0]',
        "flash-attn varlen kernel cannot be installed on NPU; TND layout with cumulative lengths"),
      C("attn_output = flash_attn_func(", "attention_kernel", "replace", True,
        'attn_output = torch_npu.npu_fusion_attention(query_states, key_states, value_states, self.num_heads, "BSND", scale=softmax_scale or 1.0 / math.sqrt(self.head_dim), sparse_mode=3 if causal else 0, atten_mask=torch.triu(torch.ones(2048, 2048, dtype=torch.bool, device=query_states.device), 1) if causal else None)[0]',
        "flash_attn_func -> npu_fusion_attention (BSND, causal via sparse_mode=3)"),
  ])

E("snapkv_monkeypatch", "SnapKV/snapkv/monkeypatch/monkeypatch.py", "device_branch_or_abstraction",
  "FasterDecoding/SnapKV snapkv/monkeypatch/monkeypatch.py (replace_llama / replace_mistral / replace_mixtral)",
  [
      C("LlamaFlashAttention2.forward = llama_flash_attn2_forward_4_37", "attention_kernel", "replace", True,
        "transformers.models.llama.modeling_llama.LlamaSdpaAttention.forward = llama_flash_attn2_forward_4_37",
        "on NPU the model must load with attn_implementation='sdpa'; patching the FA2 class then silently disables SnapKV"),
      C("MistralFlashAttention2.forward = mistral_flash_attn2_forward_4_37", "attention_kernel", "replace", True,
        "transformers.models.mistral.modeling_mistral.MistralSdpaAttention.forward = mistral_flash_attn2_forward_4_37",
        "same for Mistral"),
      C("MixtralFlashAttention2.forward = mixtral_flash_attn2_forward_4_37", "attention_kernel", "replace", True,
        "transformers.models.mixtral.modeling_mixtral.MixtralSdpaAttention.forward = mixtral_flash_attn2_forward_4_37",
        "same for Mixtral"),
  ])

E("snapkv_pred", "SnapKV/experiments/LongBench/pred_snap.py", "explicit_replacement",
  "FasterDecoding/SnapKV experiments/LongBench/pred_snap.py (LongBench pred.py with compression + mp workers)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C('model_name, device="cuda", compress=compress)', "device_type", "replace", True,
        'model, tokenizer = load_model_and_tokenizer(model2path[model_name], model_name, device="npu", compress=compress)',
        "chatglm/llama2 branches do .to(device) with 'cuda'"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on an NPU host (CUDA never initialised); NPU cache just is not released"),
      C("device = torch.device(f'cuda:{rank}')", "device_type", "replace", True,
        "device = torch.device(f'npu:{rank}')", "per-worker device"),
      C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
        "raises on an NPU host"),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
        "redundant with torch.manual_seed (unconfirmed for npu); lazily queued no-op without CUDA"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "as above"),
      C("=use_flash_attention_2=True", "attention_kernel", "replace", True, 'attn_implementation="sdpa"',
        "flash-attn cannot be installed on NPU; transformers raises at load"),
      C("use_flash_attention_2=True  # SnapKV hijacks", "attention_kernel", "replace", True,
        'attn_implementation="sdpa"  # SnapKV hijacks LlamaSdpaAttention.forward on NPU',
        "as above (compress branch)"),
      C('attn_implementation="flash_attention_2",', "attention_kernel", "replace", True,
        'attn_implementation="sdpa",', "mistral / mixtral / lwm branch"),
      C("else torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "world_size = args.world_size if args.world_size is not None else torch.npu.device_count()",
        "returns 0 on an NPU host: the per-device worker pool is silently skipped"),
  ])

E("snapkv_requirements", "SnapKV/requirements.txt", "explicit_replacement",
  "FasterDecoding/SnapKV requirements",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; torch_npu is documented on CPU torch wheels (x86) / PyPI (aarch64); CUDA-build torch under torch_npu unconfirmed"),
      C("=torch==2.2.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.2.0.post2",
        "torch_npu pin matching torch 2.2.0"),
      C("flash-attn==2.4.2", "attention_kernel", "removal", True, None,
        "flash-attn needs nvcc/CUDA to build; pip install of the file fails"),
  ])

# ---------------------------------------------------------------------------------------------------------------
# KIVI
# ---------------------------------------------------------------------------------------------------------------
E("kivi_setup", "KIVI/quant/setup.py", "kernel_rewrite",
  "jy-yuan/KIVI quant/setup.py building the kivi_gemv CUDA extension",
  [
      C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME", "custom_cuda_extension",
        "replace", False,
        "from torch_npu.utils.cpp_extension import NpuExtension; from torch.utils.cpp_extension import BuildExtension",
        "import itself works on an NPU host; changes together with the extension type"),
      C("_, bare_metal_version = get_cuda_bare_metal_version(CUDA_HOME)", "custom_cuda_extension", "removal", True, None,
        "CUDA_HOME is None without a CUDA toolkit -> TypeError before setup() runs"),
      C('cc_flag.append("arch=compute_80,code=sm_80")', "custom_cuda_extension", "removal", False, None,
        "nvcc gencode flag; meaningless once the extension is not built by nvcc"),
      C('"nvcc": [', "custom_cuda_extension", "removal", False, None,
        "nvcc flag block (only its head line is labelled)"),
      C("CUDAExtension(", "custom_cuda_extension", "replace", True, "NpuExtension(",
        "no nvcc path on Ascend"),
      C('sources=["csrc/pybind.cpp", "csrc/gemv_cuda.cu"],', "custom_cuda_extension", "replace", True,
        'sources=["csrc/pybind.cpp", "csrc/gemv_ascendc.cpp"],',
        "the .cu gemv kernel must be rewritten (Ascend C) or dropped for the torch path"),
  ])

E("kivi_new_pack", "KIVI/quant/new_pack.py", "kernel_rewrite",
  "jy-yuan/KIVI quant/new_pack.py (Triton min/max + bit-packing kernels, torch reference pack/unpack)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "only needed when the __main__ self-test is run directly; library use relies on the entry script"),
      C("=with torch.cuda.device(data.device):", "torch_cuda_api", "replace", True,
        "with torch.npu.device(data.device):", "torch.cuda.device context rejects an npu device"),
      C("BLOCK_SIZE_N=BLOCK_SIZE_N, num_warps=8)", "triton_kernel_tuning", "replace", False,
        "BLOCK_SIZE_N=BLOCK_SIZE_N)",
        "num_warps is a CUDA warp count; triton-ascend launch tuning differs (unconfirmed)"),
      C("with torch.cuda.device(data.device):  # launch on the tensor's GPU", "torch_cuda_api", "replace", True,
        "with torch.npu.device(data.device):  # launch on the tensor's NPU", "as above"),
      C("=num_warps=8)", "triton_kernel_tuning", "replace", False, ")",
        "as above for the pack kernel"),
      C("v = torch.randn((B, nh, T, D), device='cuda', dtype=torch.float16)", "device_type", "replace", True,
        "v = torch.randn((B, nh, T, D), device='npu', dtype=torch.float16)", "self-test tensor"),
  ])

E("kivi_matmul", "KIVI/quant/matmul.py", "kernel_rewrite",
  "jy-yuan/KIVI quant/matmul.py (Triton qbvm kernel + kivi_gemv CUDA wrapper + speed test)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "only for running the __main__ speed test directly"),
      C("=import kivi_gemv", "custom_cuda_extension", "replace", True,
        "kivi_gemv = None  # CUDA-only extension; NPU uses the torch dequant+matmul path below",
        "the nvcc-built extension does not exist on NPU -> ImportError at module import"),
      C("c = torch.empty((flatten_B, M, N), device='cuda', dtype=torch.float16)", "device_type", "replace", True,
        "c = torch.empty((flatten_B, M, N), device=fA.device, dtype=torch.float16)", "hard-coded cuda output buffer"),
      C("num_warps=num_warps, num_stages=num_stages", "triton_kernel_tuning", "replace", False,
        "num_stages=num_stages", "CUDA warp/stage tuning; triton-ascend tuning differs (unconfirmed)"),
      C("c = kivi_gemv.gemv_forward_cuda_outer_dim(fA, qB, scales, zeros, bits, group_size, nh, mqa)",
        "custom_cuda_extension", "replace", True,
        "c = torch.matmul(fA, unpack_and_dequant_kcache(qB.transpose(1, 2), scales.transpose(1, 2), zeros.transpose(1, 2), group_size, bits))",
        "call into the CUDA gemv kernel; replaced by a torch dequant + matmul (or an Ascend C kernel)"),
      C("fA = torch.randn((bs, nh, 1, K), device='cuda', dtype=torch.float16)", "device_type", "replace", True,
        "fA = torch.randn((bs, nh, 1, K), device='npu', dtype=torch.float16)", "benchmark tensor"),
      C("B = torch.randn((bs, nh, K, N), device='cuda', dtype=torch.float16)", "device_type", "replace", True,
        "B = torch.randn((bs, nh, K, N), device='npu', dtype=torch.float16)", "benchmark tensor"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "timing"),
      C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start = torch.npu.Event(enable_timing=True)", "timing event"),
      C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end = torch.npu.Event(enable_timing=True)", "timing event"),
      C("torch.cuda.synchronize()  # make sure all 100 launches finished", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # make sure all 100 launches finished", "timing"),
  ])

E("kivi_llama", "KIVI/models/llama_kivi.py", "kernel_rewrite",
  "jy-yuan/KIVI models/llama_kivi.py (LlamaAttention_KIVI / LlamaFlashAttention_KIVI / LlamaForCausalLM_KIVI)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "ported prefill path calls torch_npu.npu_fusion_attention"),
      C("from flash_attn import flash_attn_func, flash_attn_varlen_func", "attention_kernel", "removal", True, None,
        "unguarded import of a package that cannot be installed on NPU -> ImportError when the model module loads"),
      C("from flash_attn.bert_padding import index_first_axis, pad_input, unpad_input", "attention_kernel", "replace",
        True, "from models.bert_padding import index_first_axis, pad_input, unpad_input  # torch-only copy",
        "same package; the padding helpers are plain torch and can be vendored"),
      C("attn_output_unpad = flash_attn_varlen_func(", "attention_kernel", "replace", True,
        'attn_output_unpad = torch_npu.npu_fusion_attention(query_states, key_states, value_states, self.num_heads, "TND", scale=softmax_scale or 1.0 / math.sqrt(self.head_dim), sparse_mode=3, atten_mask=torch.triu(torch.ones(2048, 2048, dtype=torch.bool, device=query_states.device), 1), actual_seq_qlen=cu_seqlens_q[1:].tolist(), actual_seq_kvlen=cu_seqlens_k[1:].tolist())[0]',
        "varlen flash kernel -> NPU fused attention, TND layout"),
      C("attn_output = flash_attn_func(", "attention_kernel", "replace", True,
        'attn_output = torch_npu.npu_fusion_attention(query_states, key_states, value_states, self.num_heads, "BSND", scale=softmax_scale or 1.0 / math.sqrt(self.head_dim), sparse_mode=3, atten_mask=torch.triu(torch.ones(2048, 2048, dtype=torch.bool, device=query_states.device), 1))[0]',
        "prefill flash kernel -> NPU fused attention (causal)"),
  ])

E("kivi_example", "KIVI/example.py", "explicit_replacement",
  "jy-yuan/KIVI example.py (passkey + GSM8K demo)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C('input_ids = tokenizer(prompt, return_tensors="pt").input_ids.cuda()', "tensor_to_device", "replace", True,
        'input_ids = tokenizer(prompt, return_tensors="pt").input_ids.npu()', "Tensor.cuda() fails on NPU"),
      C('inputs = tokenizer(prompt, return_tensors="pt").input_ids.cuda()', "tensor_to_device", "replace", True,
        'inputs = tokenizer(prompt, return_tensors="pt").input_ids.npu()', "as above"),
  ])

E("kivi_mem_spd", "KIVI/mem_spd_test.py", "explicit_replacement",
  "jy-yuan/KIVI mem_spd_test.py (memory / throughput benchmark)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("=).cuda()", "tensor_to_device", "replace", True, ").npu()", "baseline model placement"),
      C(").cuda()  # KIVI kernels expect", "tensor_to_device", "replace", True,
        ").npu()  # KIVI kernels expect every layer on the same NPU", "KIVI model placement"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
        "False on an NPU host -> the benchmark exits"),
      C("gpu_name = torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", True,
        "gpu_name = torch.npu.get_device_name(0)", "raises without CUDA"),
      C("total_mem = torch.cuda.get_device_properties(0).total_memory", "torch_cuda_api", "replace", True,
        "total_mem = torch.npu.get_device_properties(0).total_memory / 1024 ** 3",
        "total_memory is one of the properties NPU supports"),
      C('inputs = tokenizer(context, return_tensors="pt").to("cuda")', "tensor_to_device", "replace", True,
        'inputs = tokenizer(context, return_tensors="pt").to("npu")', "hard-coded device string"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats()", "resolves the current CUDA device and raises"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "timing"),
      C("torch.cuda.synchronize()  # generate() can return", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # generate() can return before the last kernels finish", "timing"),
      C("used_mem = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", True,
        "used_mem = torch.npu.max_memory_allocated()", "the benchmark's result: silently 0 without CUDA"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "end of script; silent no-op"),
  ])

E("kivi_long_test_sh", "KIVI/scripts/long_test.sh", "explicit_replacement",
  "jy-yuan/KIVI scripts/long_test.sh (LongBench launcher)",
  [
      C("=#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment; not needed when the login shell / container already sources it"),
      C("export CUDA_LAUNCH_BLOCKING=0", "env_var", "replace", False, "export ASCEND_LAUNCH_BLOCKING=0",
        "debug switch; 0 is the default on both sides"),
      C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", "replace", False,
        "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
        "ignored on NPU (fragmentation only); NPU equivalent needs HDK >= 23.0.0"),
      C("CUDA_VISIBLE_DEVICES=$gpuid python pred_long_bench.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=$gpuid python pred_long_bench.py \\",
        "ignored by the Ascend runtime: the job does not land on the requested device"),
  ])

E("kivi_pyproject", "KIVI/pyproject.toml", "explicit_replacement",
  "jy-yuan/KIVI pyproject.toml",
  [
      C('"torch==2.1.2",', "import_torch_npu", "replace", True, '"torch==2.1.0", "torch-npu==2.1.0.post12",',
        "torch_npu wheels exist only for exact torch x.y.z releases (2.1.0, not 2.1.2); pin torch 2.1.0 and add torch-npu"),
      C('"triton==2.1.0",', "triton_kernel_tuning", "replace", True, '"triton-ascend",',
        "NVIDIA Triton cannot target NPU; the quant kernels need triton-ascend (and possibly kernel porting)"),
      C('"flash-attn==2.5.8",', "attention_kernel", "removal", True, None,
        "cannot be built/installed on NPU"),
  ])

# ---------------------------------------------------------------------------------------------------------------
# Quest
# ---------------------------------------------------------------------------------------------------------------
E("quest_utils_init", "quest/quest/utils/__init__.py", "kernel_rewrite",
  "mit-han-lab/Quest quest/utils/__init__.py (wrappers around quest._kernels)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "ported wrappers call torch_npu fused ops"),
      C("import quest._kernels as _kernels", "custom_cuda_extension", "replace", True,
        "_kernels = None  # CUDA-only (nvcc/CMake); NPU wrappers below use torch / torch_npu ops",
        "extension built with nvcc does not exist on NPU -> ImportError"),
      C("_kernels.apply_rope_in_place(", "custom_cuda_extension", "replace", True,
        "q[:], k[:] = torch_npu.npu_apply_rotary_pos_emb(q, k, *_rope_cos_sin(past_kv_len, q.size(0), q.size(-1), rope_scale, rope_theta, q.device), layout='BSND')",
        "custom CUDA RoPE kernel; npu_apply_rotary_pos_emb (or npu_rotary_mul)"),
      C("f = _kernels.rms_norm_forward", "custom_cuda_extension", "replace", True,
        "o.copy_(torch_npu.npu_rms_norm(input, weight, epsilon)[0]); return o",
        "custom CUDA RMSNorm -> torch_npu.npu_rms_norm"),
      C("_kernels.append_kv_cache_prefill(", "custom_cuda_extension", "replace", True,
        "_append_kv_torch(k, v, iController, layer_idx, prefill=True)",
        "paged KV append kernel; index_copy-based torch version"),
      C("_kernels.append_kv_cache_decode(", "custom_cuda_extension", "replace", True,
        "_append_kv_torch(k, v, iController, layer_idx, prefill=False)", "as above"),
      C("f = _kernels.prefill_with_paged_kv_cache", "custom_cuda_extension", "replace", True,
        "f = _prefill_npu  # wraps torch_npu.npu_fused_infer_attention_score over the gathered pages",
        "FlashInfer-based prefill kernel inside the extension"),
      C("f = _kernels.estimate_attn_score", "custom_cuda_extension", "replace", True,
        "f = _estimate_attn_score_torch  # q * sign -> matmul with page max/min metadata",
        "page score estimation kernel"),
      C("f = _kernels.topk_filtering", "custom_cuda_extension", "replace", True,
        "f = _topk_filtering_torch  # torch.topk over page scores",
        "RAFT radix top-k kernel; torch.topk has an NPU kernel"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
        "False on an NPU host -> raises"),
      C("major, minor = torch.cuda.get_device_capability()", "device_capability_check", "removal", True, None,
        "sm_80 check is meaningless on NPU; torch.npu.get_device_capability returns None unless TORCH_NPU_DEVICE_CAPABILITY is set"),
  ])

E("quest_controller", "quest/quest/utils/controller.py", "kernel_rewrite",
  "mit-han-lab/Quest quest/utils/controller.py (InferenceController, paged KV metadata + flashinfer decode)",
  [
      C("=import flashinfer", "attention_kernel", "replace", True, "import torch_npu",
        "flashinfer is CUDA-only (no NPU wheel)"),
      C('self._workspace_buffer = torch.empty(_WORKSPACE_BYTES, dtype=torch.uint8, device="cuda:0")', "device_type",
        "replace", True,
        "self._workspace_buffer = torch.empty(_WORKSPACE_BYTES, dtype=torch.uint8, device=self.device)",
        "hard-coded cuda:0 (also wrong for multi-device runs)"),
      C("self._decode_handler = flashinfer.BatchDecodeWithPagedKVCacheWrapper(", "attention_kernel", "replace", True,
        "self._decode_handler = NpuPagedDecodeHandler(  # torch_npu.npu_fused_infer_attention_score with block_table",
        "paged decode attention must use the NPU inference FA (block_table / block_size)"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on an NPU host"),
  ])

E("quest_passkey", "quest/evaluation/passkey.py", "explicit_replacement",
  "mit-han-lab/Quest evaluation (quest_attention.py forward + passkey retrieval driver in one script)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C('input_ids = tokenizer(prompt_text, return_tensors="pt").input_ids.cuda()', "tensor_to_device", "replace",
        True, 'input_ids = tokenizer(prompt_text, return_tensors="pt").input_ids.npu()', "Tensor.cuda()"),
  ])

E("quest_bench_e2e", "quest/scripts/bench_textgen.py", "explicit_replacement",
  "mit-han-lab/Quest-style end-to-end decode latency benchmark (dense / CUDA-graph baseline vs Quest)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):",
        "attention_kernel", "replace", False, "with contextlib.nullcontext():",
        "sdp_kernel is marked unsupported for NPU; NPU SDPA picks its fused kernel itself (effect of the flags unconfirmed)"),
      C("torch.cuda.synchronize()  # prefill must be done before timing", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # prefill must be done before timing", "timing"),
      C("=start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start = torch.npu.Event(enable_timing=True)", "timing event"),
      C("=end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end = torch.npu.Event(enable_timing=True)", "timing event"),
      C('torch.cuda.nvtx.range_push("dense_decode")', "torch_cuda_api", "replace", True,
        'rng = torch_npu.npu.mstx.range_start("dense_decode")',
        "torch.cuda.nvtx is not redirected and needs the CUDA NVTX build; mstx is the NPU range API"),
      C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(rng)",
        "as above"),
      C("torch.cuda.synchronize()  # wait for the timed decode loop", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for the timed decode loop", "timing"),
      C("s = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "s = torch.npu.Stream()", "side stream for warmup"),
      C("s.wait_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "s.wait_stream(torch.npu.current_stream())", "stream sync"),
      C("with torch.cuda.stream(s):", "torch_cuda_api", "replace", True, "with torch.npu.stream(s):", "stream context"),
      C("torch.cuda.current_stream().wait_stream(s)", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().wait_stream(s)", "stream sync"),
      C("g = torch.cuda.CUDAGraph()", "torch_cuda_api", "replace", True, "g = torch.npu.NPUGraph()",
        "NPUGraph (inference-only, which this is)"),
      C("with torch.cuda.graph(g):", "torch_cuda_api", "replace", True, "with torch.npu.graph(g):", "graph capture"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "per-replay timing"),
      C("torch.cuda.synchronize()  # prefill kernels are async", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # prefill kernels are async", "timing"),
      C("ev_start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "ev_start = torch.npu.Event(enable_timing=True)", "timing event"),
      C("ev_end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "ev_end = torch.npu.Event(enable_timing=True)", "timing event"),
      C("torch.cuda.synchronize()  # drain the decode loop", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # drain the decode loop", "timing"),
      C('device_map="cuda:0",', "device_type", "replace", True, 'device_map="npu:0",', "explicit device map"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats()", "raises without CUDA"),
      C("peak = torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", True,
        "peak = torch.npu.max_memory_allocated(device) / 2 ** 30",
        "an npu device passed to torch.cuda.* is rejected"),
  ])

E("quest_dockerfile", "quest/Dockerfile", "explicit_replacement",
  "Quest development Dockerfile (CUDA base image, flashinfer wheel index, CMake/nvcc kernel build)",
  [
      C("FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04", "import_torch_npu", "replace", True,
        "FROM ascendai/cann:8.0.rc2-910b-ubuntu22.04-py3.10",
        "needs a CANN base image (toolkit + set_env exports); the CUDA image has no Ascend stack"),
      C('ENV TORCH_CUDA_ARCH_LIST="8.0;8.6;8.9;9.0"', "env_var", "removal", False, None,
        "nvcc arch list; unused on NPU"),
      C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "replace", False,
        "ENV ASCEND_TOOLKIT_HOME=/usr/local/Ascend/ascend-toolkit/latest",
        "CUDA_HOME is harmless but pointless; the toolkit home is what the NPU build needs"),
      C("RUN pip install torch==2.2.1 --index-url https://download.pytorch.org/whl/cu121", "import_torch_npu",
        "replace", True,
        "RUN pip install torch==2.2.0 --index-url https://download.pytorch.org/whl/cpu && pip install torch-npu==2.2.0.post2",
        "CUDA wheel index; there is no torch_npu for torch 2.2.1, pin 2.2.0 + torch-npu"),
      C("RUN pip install flashinfer==0.0.4", "attention_kernel", "removal", True, None,
        "no flashinfer wheel for NPU; the image build fails"),
      C("RUN pip install flash-attn==2.5.6 --no-build-isolation", "attention_kernel", "removal", True, None,
        "needs nvcc; the image build fails"),
      C('cmake .. -DCMAKE_CUDA_ARCHITECTURES="80;86;89;90" -GNinja && ninja && \\', "custom_cuda_extension",
        "replace", True, "cmake .. -DSOC_VERSION=Ascend910B -GNinja && ninja && \\",
        "quest._kernels is CMake+nvcc; an Ascend C/op-plugin build (or none, with the torch path) replaces it"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=all",
        "read by the NVIDIA container runtime only; NPUs are mounted by docker run / Ascend Docker Runtime"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container runtime setting; no effect"),
  ])

# ---------------------------------------------------------------------------------------------------------------
# InfLLM
# ---------------------------------------------------------------------------------------------------------------
E("infllm_context_manager", "InfLLM/inf_llm/attention/context_manager.py", "device_branch_or_abstraction",
  "thunlp/InfLLM inf_llm/attention/context_manager.py (block memory offloaded to host, GPU LRU cache, side stream)",
  [
      C('device = "cuda",', "device_type", "replace", True, 'device = "npu",', "GPU slot pool allocated on cuda"),
      C("if kv[0].is_cuda:", "device_type", "replace", True, "if kv[0].is_npu:",
        "is_cuda is False for npu tensors: the 'offload' keeps the block on the device, host offloading silently stops"),
      C("cpu_data = tuple(_t.pin_memory() for _t in cpu_data)", "pin_memory", "replace", False,
        'cpu_data = tuple(_t.pin_memory(device="npu") for _t in cpu_data)',
        "which accelerator a bare pin_memory() pins for under torch_npu is unconfirmed"),
      C("=event = torch.cuda.Event()", "torch_cuda_api", "replace", True, "event = torch.npu.Event()", "copy event"),
      C("=event.record(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "event.record(torch.npu.current_stream())", "as above"),
      C("target_event = torch.cuda.Event()", "torch_cuda_api", "replace", True, "target_event = torch.npu.Event()",
        "copy event"),
      C("target_event.record(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "target_event.record(torch.npu.current_stream())", "as above"),
      C("h2d_event = torch.cuda.Event()", "torch_cuda_api", "replace", True, "h2d_event = torch.npu.Event()",
        "copy event"),
      C("h2d_event.record(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "h2d_event.record(torch.npu.current_stream())", "as above"),
      C("load_event = torch.cuda.Event()", "torch_cuda_api", "replace", True, "load_event = torch.npu.Event()",
        "copy event"),
      C("load_event.record(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "load_event.record(torch.npu.current_stream())", "as above"),
      C("=device='cuda'", "device_type", "replace", True, "device='npu'", "VectorTensor buffer"),
      C("=device='cuda',", "device_type", "replace", True, "device='npu',", "VectorTensor growth"),
      C("GLOBAL_STREAM = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "GLOBAL_STREAM = torch.npu.Stream()",
        "async_global_stream is on in the shipped configs"),
      C("assert _t.is_cuda", "device_type", "replace", True, "assert _t.is_npu", "assertion fails for npu tensors"),
      C("with torch.cuda.stream(GLOBAL_STREAM):  # topk + block loading", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(GLOBAL_STREAM):  # topk + block loading",
        "torch.cuda.stream cannot make an npu stream current"),
      C("torch.cuda.current_stream().wait_stream(GLOBAL_STREAM)  # global part", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().wait_stream(GLOBAL_STREAM)  # global part needs the loaded blocks", "stream sync"),
      C("GLOBAL_STREAM.wait_stream(torch.cuda.current_stream())  # scores are ready", "torch_cuda_api", "replace",
        True, "GLOBAL_STREAM.wait_stream(torch.npu.current_stream())  # scores are ready", "stream sync"),
      C("with torch.cuda.stream(GLOBAL_STREAM):  # score update", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(GLOBAL_STREAM):  # score update", "stream context"),
      C("GLOBAL_STREAM.wait_stream(torch.cuda.current_stream())  # new k/v are ready", "torch_cuda_api", "replace",
        True, "GLOBAL_STREAM.wait_stream(torch.npu.current_stream())  # new k/v are ready", "stream sync"),
      C("with torch.cuda.stream(GLOBAL_STREAM):  # append global remainder", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(GLOBAL_STREAM):  # append global remainder", "stream context"),
      C("with torch.cuda.stream(GLOBAL_STREAM):  # rotate global q", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(GLOBAL_STREAM):  # rotate global q", "stream context"),
      C("with torch.cuda.stream(GLOBAL_STREAM):  # offload finished blocks", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(GLOBAL_STREAM):  # offload finished blocks", "stream context"),
      C("torch.cuda.current_stream().wait_stream(GLOBAL_STREAM)  # before the next chunk", "torch_cuda_api",
        "replace", True, "torch.npu.current_stream().wait_stream(GLOBAL_STREAM)  # before the next chunk",
        "stream sync"),
      C("with torch.cuda.stream(GLOBAL_STREAM):  # trim the remainder", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(GLOBAL_STREAM):  # trim the remainder", "stream context"),
  ])

E("infllm_triton_impl", "InfLLM/inf_llm/attention/dot_production_attention/triton_impl.py", "kernel_rewrite",
  "thunlp/InfLLM dot_production_attention/triton_impl.py (multi-stage Triton flash attention + score kernel)",
  [
      C("if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 9:", "device_capability_check",
        "replace", False, "if False:  # no sm_90 tiles on NPU; tile sizes for triton-ascend need separate tuning",
        "short-circuits to the 64x64 branch on an NPU host, which runs; tile choice is a tuning matter"),
      C("=with torch.cuda.device(q.device):", "torch_cuda_api", "replace", True, "with torch.npu.device(q.device):",
        "torch.cuda.device rejects an npu device"),
      C("=num_warps=4,", "triton_kernel_tuning", "replace", False, "# num_warps dropped for triton-ascend",
        "CUDA warp count (unconfirmed meaning on triton-ascend)"),
      C("=num_stages=4", "triton_kernel_tuning", "replace", False, "num_stages=1",
        "software-pipelining depth tuned for NVIDIA SMs (unconfirmed on triton-ascend)"),
      C("with torch.cuda.device(q.device):  # retry with the smaller tiles", "torch_cuda_api", "replace", True,
        "with torch.npu.device(q.device):  # retry with the smaller tiles", "as above"),
      C("num_warps=4,  # same launch config", "triton_kernel_tuning", "replace", False,
        "# num_warps dropped for triton-ascend", "as above"),
      C("num_stages=4  # same launch config", "triton_kernel_tuning", "replace", False,
        "num_stages=1  # same launch config as the first try", "as above"),
  ])

E("infllm_pred", "InfLLM/benchmark/pred.py", "explicit_replacement",
  "thunlp/InfLLM benchmark/pred.py (LongBench / InfiniteBench prediction)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("import bmtrain as bmt", "distributed_framework", "replace", True,
        'raise NotImplementedError("model_center/bmtrain path is CUDA-only; use the HF path on NPU")',
        "BMTrain ships nvcc-built kernels and NCCL bindings (no nvcc path on Ascend); only on --model_center"),
      C('device_map="cuda")', "device_type", "replace", True,
        'model = AutoModelForCausalLM.from_pretrained(config.path, torch_dtype=torch.bfloat16, trust_remote_code=True, device_map="npu")',
        "explicit cuda device map"),
      C("torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", "replace", False,
        'print(f"Peak NPU memory: {torch.npu.max_memory_allocated() / 2**30:.2f} GiB")',
        "verbose-only log line; silently prints 0 on NPU"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on an NPU host"),
  ])

E("infllm_yaml", "InfLLM/config/mistral-inf-llm.yaml", "explicit_replacement",
  "thunlp/InfLLM config/mistral-inf-llm.yaml",
  [
      C("fattn: true", "attention_kernel", "replace", False, "fattn: false",
        "selects the Triton flash-attention impl; without Triton it falls back to torch with a warning, "
        "with triton-ascend the kernels are unverified (unconfirmed)"),
  ])

E("infllm_longbench_sh", "InfLLM/scripts/longbench.sh", "explicit_replacement",
  "thunlp/InfLLM scripts/longbench.sh (one process per GPU)",
  [
      C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment; not needed when the login shell / container already sources it"),
      C("CUDA_VISIBLE_DEVICES=${rank} python benchmark/pred.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${rank} python benchmark/pred.py \\",
        "ignored on NPU: all 8 workers would load the model onto npu:0"),
  ])

# ---------------------------------------------------------------------------------------------------------------
# PyramidKV / KVCache-Factory style drivers
# ---------------------------------------------------------------------------------------------------------------
E("pyramidkv_run_longbench_ddp", "PyramidKV/run_longbench_ddp.py", "explicit_replacement",
  "Zefan-Cai/PyramidKV run_longbench.py, torchrun data-parallel variant",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C('os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
        'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
        "NCCL-only knob; the HCCL watchdog equivalent defaults to 1"),
      C('os.environ.setdefault("NCCL_DEBUG", "WARN")', "env_var", "replace", False,
        'os.environ.setdefault("ASCEND_GLOBAL_LOG_LEVEL", "2")', "no effect on HCCL; CANN log level instead"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "redundant with torch.manual_seed (unconfirmed for npu)"),
      C("=torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "raises on an NPU host"),
      C('backend="nccl",', "dist_backend", "replace", True, 'backend="hccl",', "NCCL is not available on NPU"),
      C('device_map={"": f"cuda:{local_rank}"},', "device_type", "replace", True,
        'device_map={"": f"npu:{local_rank}"},', "per-rank model placement"),
      C('device = torch.device("cuda", local_rank)', "device_type", "replace", True,
        'device = torch.device("npu", local_rank)', "input placement"),
      C('if dist.get_backend() == "nccl":', "dist_backend", "replace", False, 'if dist.get_backend() == "hccl":',
        "never true on HCCL (string compare is not rewritten by any tool); harmless here because the device is already set"),
      C("torch.cuda.set_device(local_rank)  # already set", "torch_cuda_api", "replace", False,
        "torch.npu.set_device(local_rank)  # already set in setup_distributed, but be explicit",
        "dead on NPU until the comparison above is fixed; then it must be torch.npu"),
      C('default="flash_attention_2",', "attention_kernel", "replace", True,
        'parser.add_argument("--attn_implementation", type=str, default="sdpa",',
        "flash-attn is not installable on NPU; sdpa dispatches to the NPU fused attention"),
      C("devices={torch.cuda.device_count()}", "torch_cuda_api", "replace", False,
        'logger.info(f"world_size={world_size}, devices={torch.npu.device_count()}, "', "log only (prints 0)"),
      C("gpu={torch.cuda.get_device_name(local_rank)}", "torch_cuda_api", "replace", True,
        'f"npu={torch.npu.get_device_name(local_rank)}")', "raises on an NPU host"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on an NPU host"),
  ])

E("needle_haystack", "PyramidKV/scripts/needle_in_haystack.py", "explicit_replacement",
  "needle-in-a-haystack tester (gkamradt LLMTest_NeedleInAHaystack adapted to HF models, as shipped in KV-compression repos)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C('attn_implementation="flash_attention_2",', "attention_kernel", "replace", True,
        'attn_implementation="sdpa",', "flash-attn is not installable on NPU; transformers raises at load"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats()", "raises without CUDA"),
      C('torch.autocast(device_type="cuda", dtype=torch.bfloat16)', "amp", "replace", False,
        'with torch.no_grad(), torch.autocast(device_type="npu", dtype=torch.bfloat16):',
        "autocast('cuda') is disabled with a warning on a non-CUDA host; harmless for bf16 checkpoints loaded with torch_dtype='auto'"),
      C("peak_mem_gib = torch.cuda.max_memory_allocated() / 2 ** 30", "torch_cuda_api", "replace", True,
        "peak_mem_gib = torch.npu.max_memory_allocated() / 2 ** 30", "written to the results json; silently 0"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on an NPU host"),
  ])
