"""Labels for probe78 (hand-written synthetic upstream files; see ../README.md).

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

IMPORT_NOTE = ("torch.npu.* / 'npu' devices need torch_npu loaded; explicit import recommended even with the "
               "2.5.1+ device-backend autoload")
EMPTY_CACHE = "silent no-op without CUDA; the NPU caching allocator keeps its blocks (memory only)"
SYNC_NOTE = "torch.cuda.synchronize() needs a CUDA build (lazy init raises on an NPU host)"

# --------------------------------------------------------------------------------------------------------------
# accelerate
# --------------------------------------------------------------------------------------------------------------
E("accel_big_modeling", "src/accelerate/big_modeling.py", "device_branch_or_abstraction",
  "huggingface/accelerate big_modeling.py before NPU support (cpu_offload_with_hook, dispatch_model)", [
    C('execution_device = 0 if torch.cuda.is_available() else "cpu"', "torch_cuda_api", R, True,
      "execution_device = PartialState().default_device",
      "is_available() is False on an NPU host, so the hooked model silently executes on the CPU"),
    C("model.to = add_warning(model.to, model)", "device_type", A, False,
      "model.npu = add_warning(model.npu, model)",
      "cosmetic: also warn when a dispatched model is moved with .npu()"),
    C("model.to(device)", "device_type", B, True,
      'if is_npu_available() and isinstance(device, int): device = f"npu:{device}"',
      'device_map={"": 0} puts an int here; Module.to(0) means cuda:0 and fails on an NPU host'),
])

E("accel_modeling_utils", "src/accelerate/utils/modeling.py", "device_branch_or_abstraction",
  "huggingface/accelerate utils/modeling.py (get_max_memory, set_module_tensor_to_device, balanced memory)", [
    C('device = f"cuda:{device}"', "device_type", R, True,
      'device = f"npu:{device}" if is_npu_available() else f"cuda:{device}"',
      "every int entry of a device_map is turned into a CUDA device string"),
    C(".to(0).to(\"cpu\")", "tensor_to_device", R, False,
      'new_value = param_cls(new_value, requires_grad=old_value.requires_grad, **kwargs).to("npu:0").to("cpu")',
      "only reached for bitsandbytes Int8Params (LLM.int8), which has no NPU backend in the knowledge base"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", B, True,
      "if not (torch.cuda.is_available() or is_npu_available()):",
      "default max_memory becomes {'cpu': ...}: infer_auto_device_map puts the whole model on the CPU"),
    C("for i in range(torch.cuda.device_count()):", "torch_cuda_api", R, True,
      "for i in range(torch.npu.device_count()):",
      "device_count() is 0 without CUDA (reached once the availability check is ported)"),
    C("_ = torch.tensor([0], device=i)", "tensor_to_device", R, True,
      '_ = torch.tensor([0], device=f"npu:{i}")', "an int device means cuda:i"),
    C("torch.cuda.mem_get_info(i)[0]", "torch_cuda_api", R, True,
      "max_memory = {i: torch.npu.mem_get_info(i)[0] for i in range(torch.npu.device_count())}",
      "mem_get_info goes through cudart; fails without CUDA"),
    C("num_devices = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "num_devices = torch.npu.device_count() if is_npu_available() else torch.cuda.device_count()",
      "0 on an NPU host: every user-given int device is reported unavailable and popped from max_memory"),
    C('torch.device(d).type == "cuda"', "device_type", R, False,
      'num_devices = len([d for d in max_memory if isinstance(d, int) and max_memory[d] > 0])',
      "unconfirmed: torch.device(int) resolves to cuda in the torch versions read, so the count happens to be "
      "right; a port compares against the accelerator type instead"),
    C("return safe_load_file(checkpoint_file, device=list(device_map.values())[0])", "tensor_to_device", R, False,
      'return safe_load_file(checkpoint_file, device=f"npu:{d}" if isinstance(d, int) else d)',
      "unconfirmed: safetensors reads an int device as a CUDA ordinal"),
    C('with safe_open(checkpoint_file, framework="pt", device=device) as f:', "tensor_to_device", R, False,
      'with safe_open(checkpoint_file, framework="pt", device=f"npu:{device}" if isinstance(device, int) else device) as f:',
      "unconfirmed: same int-ordinal question as above"),
])

E("accel_memory", "src/accelerate/utils/memory.py", "device_branch_or_abstraction",
  "huggingface/accelerate utils/memory.py (release_memory, find_executable_batch_size) + a memory report helper", [
    C("=torch.cuda.empty_cache()", "torch_cuda_api", B, False,
      "elif is_npu_available():\n        torch.npu.empty_cache()", EMPTY_CACHE),
    C('"CUDA out of memory.",  # CUDA OOM', "device_type", A, False,
      '"NPU out of memory.",  # NPU OOM',
      "unconfirmed NPU OOM message text: without it find_executable_batch_size re-raises instead of halving"),
    C("torch.cuda.empty_cache()  # start from a clean allocator", "torch_cuda_api", B, False,
      "torch.npu.empty_cache()", EMPTY_CACHE),
    C("torch.cuda.empty_cache()  # drop what the failed attempt cached", "torch_cuda_api", B, False,
      "torch.npu.empty_cache()", EMPTY_CACHE),
    C("allocated = torch.cuda.memory_allocated(device_index)", "torch_cuda_api", R, True,
      "allocated = torch.npu.memory_allocated(device_index) / 2**30",
      "returns 0 when CUDA is not initialised: the report is wrong"),
    C("reserved = torch.cuda.memory_reserved(device_index)", "torch_cuda_api", R, True,
      "reserved = torch.npu.memory_reserved(device_index) / 2**30", "returns 0 without CUDA"),
    C("peak = torch.cuda.max_memory_allocated(device_index)", "torch_cuda_api", R, True,
      "peak = torch.npu.max_memory_allocated(device_index) / 2**30", "returns 0 without CUDA"),
    C("free, total = torch.cuda.mem_get_info(device_index)", "torch_cuda_api", R, True,
      "free, total = torch.npu.mem_get_info(device_index)", "cudart call, fails without CUDA"),
])

E("accel_bench_big_model", "benchmarks/big_model_inference.py", "explicit_replacement",
  "huggingface/accelerate benchmarks/big_model_inference.py + measures_util.py (peak-memory measures)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("N_GPUS = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "N_GPUS = torch.npu.device_count()", "0 on an NPU host: no device is measured at all"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE),
    C("measures[str(i)] = torch.cuda.memory_allocated(i)", "torch_cuda_api", R, True,
      "measures[str(i)] = torch.npu.memory_allocated(i)", "returns 0 without CUDA: wrong baseline"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True,
      "torch.npu.reset_peak_memory_stats()", "CUDA binding missing in a non-CUDA build; raises"),
    C("torch.cuda.empty_cache()  # before reading", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      EMPTY_CACHE),
    C("(torch.cuda.memory_allocated(i) - start_measures", "torch_cuda_api", R, True,
      'measures[str(i)] = (torch.npu.memory_allocated(i) - start_measures[str(i)]) / 2**20',
      "returns 0 without CUDA: reported allocation is wrong"),
    C("torch.cuda.max_memory_allocated(i)", "torch_cuda_api", R, True,
      'measures[f"{i}-peak"] = (torch.npu.max_memory_allocated(i) - start_measures[str(i)]) / 2**20',
      "returns 0 without CUDA: reported peak is wrong"),
    C('padding=True).to(0)', "tensor_to_device", R, True,
      'inputs = tokenizer(PROMPTS, return_tensors="pt", padding=True).to("npu:0")',
      "BatchEncoding.to(0) moves to cuda:0"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", SYNC_NOTE),
])

E("accel_config_yaml", "configs/accelerate_bigmodel_tp.yaml", "device_branch_or_abstraction",
  "accelerate launch config (MULTI_GPU, dynamo INDUCTOR max-autotune, NUMA affinity) for TP inference", [
    C("distributed_type: MULTI_GPU", "distributed_framework", R, False, "distributed_type: MULTI_NPU",
      "unconfirmed: accelerate may re-derive the NPU distributed type at runtime; the config names the GPU one"),
    C("dynamo_backend: INDUCTOR", "compile_mode", R, False, "dynamo_backend: 'NO'",
      "inductor on NPU needs torch_npu >= 2.6 graph mode; unconfirmed whether accelerate's dynamo plugin maps it"),
    C("dynamo_mode: max-autotune", "compile_mode", R, False, "dynamo_mode: default",
      "max-autotune tunes Triton GEMM templates; transfer_to_npu forces has_triton=False (performance only)"),
    C("enable_cpu_affinity: true", "torch_cuda_api", R, False, "enable_cpu_affinity: false",
      "unconfirmed: accelerate's NUMA pinning reads GPU topology through NVML (pynvml)"),
])

# --------------------------------------------------------------------------------------------------------------
# transformers: offloaded KV cache, tensor parallel (tp_plan)
# --------------------------------------------------------------------------------------------------------------
E("hf_offloaded_cache", "src/transformers/cache_utils.py", "device_branch_or_abstraction",
  "huggingface/transformers cache_utils.py OffloadedCache / OffloadedStaticCache (prefetch stream)", [
    C("if not torch.cuda.is_available():", "torch_cuda_api", R, True,
      "if not (torch.cuda.is_available() or is_torch_npu_available()):",
      "raises 'OffloadedCache can only be used with a GPU' on an NPU host"),
    C("self.prefetch_stream = torch.cuda.Stream()", "torch_cuda_api", R, True,
      "self.prefetch_stream = torch.npu.Stream() if is_torch_npu_available() else torch.cuda.Stream()",
      "CUDA stream creation fails (reached once the guard above is ported)"),
    C("with torch.cuda.stream(self.prefetch_stream):", "torch_cuda_api", R, True,
      "with torch.npu.stream(self.prefetch_stream):", "a CUDA stream context around an NPU stream fails"),
    C("torch.cuda.current_stream().synchronize()", "torch_cuda_api", R, True,
      "torch.npu.current_stream().synchronize()", "current_stream() needs CUDA"),
    C('device: torch.device = "cuda",', "device_type", R, False, 'device: torch.device = "npu",',
      "default only; generate() passes the model's device explicitly"),
    C('self._prefetch_stream = torch.cuda.Stream() if self.device.type == "cuda" else None', "torch_cuda_api", B,
      False, 'self._prefetch_stream = torch.npu.Stream() if self.device.type == "npu" else None',
      "on NPU the else path (no prefetch stream) is correct but loses the copy/compute overlap"),
    C("torch.cuda.default_stream(self.device).wait_stream(self._prefetch_stream)", "torch_cuda_api", R, False,
      "torch.npu.default_stream(self.device).wait_stream(self._prefetch_stream)",
      "only reached when a prefetch stream exists (never on NPU unchanged)"),
    C("with torch.cuda.stream(self._prefetch_stream):", "torch_cuda_api", R, False,
      "with torch.npu.stream(self._prefetch_stream):", "only reached when a prefetch stream exists"),
])

E("hf_tp_integration", "src/transformers/integrations/tensor_parallel.py", "device_branch_or_abstraction",
  "huggingface/transformers integrations/tensor_parallel.py (initialize_tensor_parallelism, torch TP styles)", [
    C('backend_map = {"cuda": "nccl", "cpu": "gloo", "xpu": "ccl", "hpu": "hccl"}', "dist_backend", R, True,
      'backend_map = {"cuda": "nccl", "cpu": "gloo", "xpu": "ccl", "hpu": "hccl", "npu": "hccl"}',
      "torch._C._get_accelerator() is 'npu' with torch_npu: KeyError, tp_plan='auto' cannot initialise"),
    C("return RowwiseParallel()", "unsupported_op_workaround", R, False,
      'return RowwiseParallel() if device_type != "npu" else HFRowwiseParallel()',
      "unconfirmed: Ascend's 2.7.1 API list marks RowwiseParallel and parallelize_module as unsupported on A2/A3 "
      "(ColwiseParallel supported)"),
    C("parallelize_module(model, device_mesh, module_plan)", "unsupported_op_workaround", R, False,
      "shard weights at load time with shard_and_distribute_module instead of parallelize_module",
      "unconfirmed: parallelize_module is marked unsupported in Ascend's 2.7.1 list"),
])

E("hf_tp_example", "examples/tensor_parallel/run_tp_generate.py", "explicit_replacement",
  "transformers tp_plan='auto' torchrun generation benchmark (CUDA events, peak memory)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('default="flash_attention_2",', "attention_kernel", R, True, 'default="sdpa",',
      "flash-attn cannot be installed on NPU; SDPA dispatches to the NPU fused attention"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "needs CUDA"),
    C('dist.init_process_group(backend="nccl"', "dist_backend", R, True,
      'dist.init_process_group(backend="hccl", rank=rank, world_size=world_size)', "NCCL does not exist on NPU"),
    C('mode="reduce-overhead"', "compile_mode", R, False,
      'model.forward = torch.compile(model.forward, backend="npugraphs", fullgraph=True)',
      "only with --compile; reduce-overhead means CUDA graphs, the NPU analogue is the npugraphs backend"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", SYNC_NOTE),
    C("prefill_start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "prefill_start = torch.npu.Event(enable_timing=True)", "CUDA events need CUDA"),
    C("prefill_end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "prefill_end = torch.npu.Event(enable_timing=True)", "CUDA events need CUDA"),
    C("torch.cuda.synchronize()  # wait for the prefill events", "torch_cuda_api", R, True,
      "torch.npu.synchronize()", SYNC_NOTE),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "CUDA binding missing in a non-CUDA build"),
    C("torch.cuda.synchronize()  # all decode kernels done", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      SYNC_NOTE),
    C("peak_gib = torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", R, True,
      "peak_gib = torch.npu.max_memory_allocated() / 2**30", "returns 0 without CUDA: reported peak is wrong"),
    C('stats = torch.tensor([elapsed, peak_gib], device="cuda")', "device_type", R, True,
      'stats = torch.tensor([elapsed, peak_gib], device="npu")', "tensor on a CUDA device fails"),
])

# --------------------------------------------------------------------------------------------------------------
# DeepSpeed-Inference / ZeRO-Inference / BLOOM scripts
# --------------------------------------------------------------------------------------------------------------
E("ds_inference_test", "inference/huggingface/text-generation/inference-test.py", "explicit_replacement",
  "microsoft/DeepSpeedExamples text-generation inference-test.py with its DSPipeline helper", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('self.device = torch.device(f"cuda:{device}")', "device_type", R, True,
      'self.device = torch.device(f"npu:{device}")', "local rank mapped to a CUDA device"),
    C("self.model.cuda().to(self.device)", "tensor_to_device", R, True, "self.model.to(self.device)",
      "Module.cuda() needs CUDA"),
    C("replace_with_kernel_inject=args.use_kernel,", "distributed_framework", R, False,
      "replace_with_kernel_inject=False,  # DeepSpeed CUDA inference kernels are not built for NPU",
      "only with --use_kernel; the default AutoTP path works on DeepSpeed's NPU accelerator"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", SYNC_NOTE),
    C("torch.cuda.synchronize()  # end of this generate call", "torch_cuda_api", R, True,
      "torch.npu.synchronize()", SYNC_NOTE),
])

E("ds_inference_engine", "deepspeed/inference/engine.py", "device_branch_or_abstraction",
  "microsoft/DeepSpeed inference/engine.py (InferenceEngine, CUDA-graph capture, RNG broadcast for TP)", [
    C("device = torch.cuda.current_device()", "torch_cuda_api", R, True,
      "device = get_accelerator().current_device_name()", "needs CUDA; every engine construction hits it"),
    C("_rng_state = torch.cuda.get_rng_state().to(torch.cuda.current_device())", "torch_cuda_api", R, True,
      "_rng_state = get_accelerator().get_rng_state().to(get_accelerator().current_device_name())",
      "tensor-parallel (tp_size > 1) path; needs CUDA"),
    C("torch.cuda.set_rng_state(_rng_state.cpu())", "torch_cuda_api", R, True,
      "get_accelerator().set_rng_state(_rng_state.cpu())", "needs CUDA"),
    C("cuda_stream = torch.cuda.Stream()", "torch_cuda_api", R, False,
      "cuda_stream = get_accelerator().Stream()",
      "only behind get_accelerator().device_name() == 'cuda' (eager path on NPU)"),
    C("cuda_stream.wait_stream(torch.cuda.current_stream())", "torch_cuda_api", R, False,
      "cuda_stream.wait_stream(get_accelerator().current_stream())", "graph-capture path only"),
    C("with torch.cuda.stream(cuda_stream):", "torch_cuda_api", R, False,
      "with get_accelerator().stream(cuda_stream):", "graph-capture path only"),
    C("torch.cuda.current_stream().wait_stream(cuda_stream)", "torch_cuda_api", R, False,
      "get_accelerator().current_stream().wait_stream(cuda_stream)", "graph-capture path only"),
    C("self._cuda_graphs = torch.cuda.CUDAGraph()", "torch_cuda_api", R, False,
      "self._cuda_graphs = get_accelerator().create_graph()",
      "graph-capture path only; NPUGraph is inference-only on Ascend"),
    C("with torch.cuda.graph(self._cuda_graphs):", "torch_cuda_api", R, False,
      "with get_accelerator().capture_to_graph(self._cuda_graphs):", "graph-capture path only"),
])

E("ds_triton_softmax", "deepspeed/ops/transformer/inference/triton/softmax.py", "explicit_replacement",
  "microsoft/DeepSpeed inference triton/softmax.py (row softmax kernels, warp heuristic, capability gate)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", R, True,
      "_SUPPORTED = True  # triton-ascend: no SM capability to check",
      "needs CUDA; on torch_npu get_device_capability returns None unless TORCH_NPU_DEVICE_CAPABILITY is set"),
    C("=num_warps = 16", "triton_kernel_tuning", R, False, "num_warps = 8",
      "unconfirmed: warp counts have no Ascend meaning under triton-ascend; heuristic retuned"),
    C("BLOCK_SIZE = max(triton.next_power_of_2(n_cols), 2)", "triton_kernel_tuning", R, False,
      "BLOCK_SIZE = min(max(triton.next_power_of_2(n_cols), 2), 8192)  # loop over longer rows",
      "unconfirmed: one whole row per program may exceed the on-chip buffer on Ascend; ports tile the row"),
    C("x = torch.randn(batch, heads, seq, seq, device='cuda', dtype=dtype)", "device_type", R, True,
      "x = torch.randn(batch, heads, seq, seq, device='npu', dtype=dtype)", "CUDA tensor in the self-test"),
    C("mask = torch.zeros(batch, 1, 1, seq, device='cuda'", "device_type", R, True,
      "mask = torch.zeros(batch, 1, 1, seq, device='npu', dtype=dtype)", "CUDA tensor in the self-test"),
    C("device='cuda', dtype=torch.float16)", "device_type", R, True,
      "x = torch.randn(batch, heads, seq, seq, device='npu', dtype=torch.float16)", "CUDA tensor in the benchmark"),
])

E("zero_inference_run_model", "inference/huggingface/zero_inference/run_model.py", "explicit_replacement",
  "microsoft/DeepSpeedExamples zero_inference/run_model.py (ZeRO-3 CPU/NVMe weight offload, KV offload)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", SYNC_NOTE),
    C("torch.cuda.synchronize()  # prefill finished", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      SYNC_NOTE),
    C('deepspeed.init_distributed("nccl")', "dist_backend", R, True, 'deepspeed.init_distributed("hccl")',
      "explicit NCCL backend; DeepSpeed's NPU accelerator uses hccl"),
    C('device="nvme",', "distributed_framework", R, False, 'device="nvme",  # needs the async_io op on NPU',
      "unconfirmed whether DeepSpeed's NPU accelerator builds the async_io (libaio) op for NVMe offload"),
    C('"use_gds": args.use_gds,', "distributed_framework", X, False, None,
      "GPUDirect Storage is NVIDIA-only; default off"),
    C("input_tokens[t] = input_tokens[t].to(torch.cuda.current_device())", "tensor_to_device", R, True,
      "input_tokens[t] = input_tokens[t].to(get_accelerator().current_device_name())", "needs CUDA"),
    C("torch.cuda.synchronize()  # start of a measured loop", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      SYNC_NOTE),
    C("torch.cuda.synchronize()  # end of a measured loop", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      SYNC_NOTE),
    C('get_accelerator().max_memory_allocated(torch.device("cuda"))', "device_type", R, True,
      "gpu_peak_mem = get_accelerator().max_memory_allocated(get_accelerator().current_device_name())",
      "a CUDA device handed to the NPU accelerator"),
])

E("bloom_ds_inference", "bloom-inference-scripts/bloom-ds-inference.py", "explicit_replacement",
  "huggingface/transformers-bloom-inference bloom-ds-inference.py (meta-tensor init + DS-Inference TP)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('deepspeed.init_distributed("nccl")', "dist_backend", R, True, 'deepspeed.init_distributed("hccl")',
      "explicit NCCL backend"),
    C("=kernel_inject = True", "distributed_framework", R, True, "kernel_inject = False",
      "DeepSpeed's CUDA inference kernels (transformer_inference op) are not available on NPU; use the "
      "injection_policy (AutoTP-style slicing) path"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE),
    C("torch.cuda.empty_cache()  # after meta init", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      EMPTY_CACHE),
    C("torch.cuda.empty_cache()  # before init_inference", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      EMPTY_CACHE),
    C("torch.cuda.empty_cache()  # after init_inference", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      EMPTY_CACHE),
    C("input_tokens[t] = input_tokens[t].to(torch.cuda.current_device())", "tensor_to_device", R, True,
      "input_tokens[t] = input_tokens[t].to(torch.npu.current_device())", "needs CUDA"),
    C("torch.cuda.empty_cache()  # before the benchmark cycles", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()", EMPTY_CACHE),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", SYNC_NOTE),
    C("torch.cuda.synchronize()  # end of benchmark cycles", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      SYNC_NOTE),
])

E("bloom_accelerate_inference", "bloom-inference-scripts/bloom-accelerate-inference.py", "transfer_to_npu",
  "huggingface/transformers-bloom-inference bloom-accelerate-inference.py (device_map='auto', max_memory map)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu",
      "transfer_to_npu maps the torch.cuda.* calls, .cuda() and 'cuda:0' strings of this script"),
    C("from torch.cuda import nvtx", "torch_cuda_api", R, False, "from torch_npu.npu import mstx",
      "the import itself succeeds; torch.cuda.nvtx is not covered by transfer_to_npu"),
    C('nvtx.range_push(f"generate bs={len(inputs)}")', "torch_cuda_api", R, True,
      'range_id = mstx.range_start(f"generate bs={len(inputs)}")',
      "with --nvtx: NVTX bindings are absent without CUDA (use torch_npu.npu.mstx)"),
    C("nvtx.range_pop()", "torch_cuda_api", R, True, "mstx.range_end(range_id)", "with --nvtx: see above"),
    C('kwargs["load_in_8bit"] = True', "custom_cuda_extension", R, False,
      'raise ValueError("--dtype int8 (bitsandbytes LLM.int8) is not supported on NPU")',
      "only with --dtype int8; LLM.int8 has no NPU backend in the knowledge base"),
])

E("bloom_launch_sh", "scripts/run_bloom_inference.sh", "explicit_replacement",
  "BLOOM-176B inference launcher (deepspeed / accelerate modes, NCCL env, nvidia-smi bookkeeping)", [
    C("export CUDA_VISIBLE_DEVICES=", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES (knowledge documents only that variable)"),
    C("export NCCL_P2P_DISABLE=0", "env_var", X, False, None, "NCCL tuning, ignored by HCCL"),
    C("export NCCL_IB_DISABLE=1", "env_var", X, False, None, "NCCL tuning, ignored by HCCL"),
    C("export NCCL_DEBUG=WARN", "env_var", R, False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
      "NCCL logging knob; no effect on HCCL"),
    C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", R, False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True", "the NPU allocator reads PYTORCH_NPU_ALLOC_CONF"),
    C("NUM_GPUS=$(nvidia-smi --query-gpu=name", "device_type", R, True,
      "NUM_GPUS=$(npu-smi info -l | grep -c 'NPU ID')",
      "nvidia-smi is absent: with set -euo pipefail the script stops here"),
    C('nvidia-smi topo -m > "$LOG_DIR/topology.txt"', "device_type", R, True,
      'npu-smi info -t topo > "$LOG_DIR/topology.txt"', "nvidia-smi is absent (set -e)"),
    C("--name microsoft/bloom-deepspeed-inference-int8 --dtype int8", "distributed_framework", X, False, None,
      "the pre-sharded int8 checkpoint needs DeepSpeed's CUDA kernel-injection path"),
    C("nvidia-smi --query-gpu=index,memory.used,memory.total", "device_type", R, True,
      'npu-smi info | tee "$LOG_DIR/memory_after.txt"', "nvidia-smi is absent: the script exits non-zero"),
])

E("ds_inference_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "DeepSpeed-Inference benchmark image (NGC PyTorch base, DS_BUILD_* prebuilt ops, flash-attn)", [
    C("FROM nvcr.io/nvidia/pytorch:23.10-py3", "import_torch_npu", R, True,
      "FROM <registry>/ascend/pytorch:2.1.0-cann8.0  # CANN + torch + torch_npu",
      "CUDA base image; an Ascend image provides CANN, the driver userspace and torch_npu"),
    C('ENV TORCH_CUDA_ARCH_LIST="8.0;8.6;9.0+PTX"', "env_var", X, False, None, "inert without nvcc"),
    C("ENV DS_BUILD_TRANSFORMER_INFERENCE=1", "custom_cuda_extension", X, True, None,
      "pre-building DeepSpeed's CUDA inference kernels fails without nvcc"),
    C("ENV DS_BUILD_AIO=1", "custom_cuda_extension", R, False, "ENV DS_BUILD_AIO=0",
      "unconfirmed whether the async_io op builds for DeepSpeed's NPU accelerator"),
    C("pip install torch==2.1.2 --index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", R, True,
      "pip install torch==2.1.0 torch-npu==2.1.0.post12",
      "CUDA wheel; torch_npu needs the matching plain torch"),
    C("RUN pip install flash-attn==2.5.2 --no-build-isolation", "attention_kernel", X, True, None,
      "flash-attn cannot be installed on NPU"),
    C("InferenceBuilder().load()", "custom_cuda_extension", X, True, None,
      "JIT-compiles the CUDA transformer_inference op: the build step fails"),
    C("ENV NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "ENV HCCL_ASYNC_ERROR_HANDLING=1",
      "NCCL knob ignored by HCCL"),
])

E("infer_requirements", "requirements.txt", "explicit_replacement",
  "big-model inference benchmark requirements.txt (cu118 torch, DeepSpeed/MII, flash-attn, xformers, triton)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; x86 NPU hosts take the CPU torch wheel (aarch64 plain PyPI)"),
    C("torch==2.1.2+cu118", "import_torch_npu", R, True, "torch==2.1.0\ntorch-npu==2.1.0.post12",
      "CUDA build of torch; torch_npu must pair with the exact plain torch version"),
    C("deepspeed-mii>=0.2.0", "distributed_framework", X, False, None,
      "unconfirmed: MII's FastGen path depends on CUDA-only deepspeed-kernels"),
    C("bitsandbytes==0.42.0", "custom_cuda_extension", X, False, None,
      "installs, but the 8-bit paths have no NPU backend (NF4 only in the multi-backend branch)"),
    C("flash-attn==2.5.2", "attention_kernel", X, True, None, "cannot be installed on NPU"),
    C("xformers==0.0.23.post1", "attention_kernel", X, True, None,
      "no NPU backend; its wheels pin a CUDA torch"),
    C("triton==2.1.0", "triton_kernel_tuning", R, False, "triton-ascend",
      "only needed for DeepSpeed's optional Triton ops; triton-ascend on NPU"),
    C("nvidia-ml-py>=12.535.77", "torch_cuda_api", X, False, None, "NVML has no NPU equivalent (npu-smi)"),
])

# --------------------------------------------------------------------------------------------------------------
# FlexGen
# --------------------------------------------------------------------------------------------------------------
E("flexgen_pytorch_backend", "flexgen/pytorch_backend.py", "device_branch_or_abstraction",
  "FMInference/FlexGen pytorch_backend.py (TorchDevice/TorchDisk, CPU-delegated attention, copy threads)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('elif name == "cuda":', "device_type", B, True, 'elif name in ("cuda", "npu"):',
      'DeviceType.convert("npu") raises ValueError: TorchDevice("npu:0") cannot be built'),
    C("=if k.is_cuda:", "device_type", R, True, 'if k.device.type in ("cuda", "npu"):',
      "an NPU-resident cache is taken for a CPU one: attention runs on the CPU and .cuda() follows"),
    C("b, src_s, tgt_s, n_head, head_dim).cuda().half()", "tensor_to_device", R, True,
      "b, src_s, tgt_s, n_head, head_dim).to(self.dev).half()",
      "CPU-computed attention (cache offloaded to CPU) is moved back with .cuda()"),
    C("scores = torch.bmm(q, k)", "npu_fused_op", R, False,
      "scores via torch_npu.npu_incre_flash_attention / npu_fused_infer_attention_score (decode step)",
      "performance: fused decode attention instead of bmm + where + softmax"),
    C("mask_gpu = mask[:b_gpu].cuda()", "tensor_to_device", R, True, "mask_gpu = mask[:b_gpu].to(self.dev)",
      "mixed GPU/CPU cache split"),
    C("value_cpu.cuda().half()", "tensor_to_device", R, True,
      "value = torch.cat([value_gpu, value_cpu.to(self.dev).half()], dim=0)", "mixed GPU/CPU cache split"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", SYNC_NOTE),
    C("cur_mem = torch.cuda.memory_allocated(self.dev)", "torch_cuda_api", R, True,
      "cur_mem = torch.npu.memory_allocated(self.dev)", "a CUDA counter queried with an NPU device fails"),
    C("peak_mem = torch.cuda.max_memory_allocated(self.dev)", "torch_cuda_api", R, True,
      "peak_mem = torch.npu.max_memory_allocated(self.dev)", "same"),
    C("torch.cuda.synchronize()  # make the allocator counters current", "torch_cuda_api", R, True,
      "torch.npu.synchronize()", SYNC_NOTE),
    C("torch.cuda.set_device(cuda_id)", "torch_cuda_api", R, True, "torch.npu.set_device(cuda_id)",
      "disk copy threads pin their device with a CUDA call"),
    C("copy_stream = torch.cuda.Stream()", "torch_cuda_api", R, True, "copy_stream = torch.npu.Stream()",
      "needs CUDA"),
    C("with torch.cuda.stream(copy_stream):", "torch_cuda_api", R, True, "with torch.npu.stream(copy_stream):",
      "needs CUDA"),
])

E("flexgen_flex_opt", "flexgen/flex_opt.py", "explicit_replacement",
  "FMInference/FlexGen flex_opt.py (OptLM with weight/cache I/O streams, run_flexgen entry)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("self.load_weight_stream = torch.cuda.Stream()", "torch_cuda_api", R, True,
      "self.load_weight_stream = torch.npu.Stream()", "needs CUDA"),
    C("self.load_cache_stream = torch.cuda.Stream()", "torch_cuda_api", R, True,
      "self.load_cache_stream = torch.npu.Stream()", "needs CUDA"),
    C("self.store_cache_stream = torch.cuda.Stream()", "torch_cuda_api", R, True,
      "self.store_cache_stream = torch.npu.Stream()", "needs CUDA"),
    C("with torch.cuda.stream(self.load_weight_stream):", "torch_cuda_api", R, True,
      "with torch.npu.stream(self.load_weight_stream):", "needs CUDA"),
    C("with torch.cuda.stream(self.load_cache_stream):", "torch_cuda_api", R, True,
      "with torch.npu.stream(self.load_cache_stream):", "needs CUDA"),
    C("with torch.cuda.stream(self.store_cache_stream):", "torch_cuda_api", R, True,
      "with torch.npu.stream(self.store_cache_stream):", "needs CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", SYNC_NOTE),
    C('gpu = TorchDevice("cuda:0")', "device_type", R, True, 'gpu = TorchDevice("npu:0")',
      "the execution device of the offloading policy"),
])

E("flexgen_dist", "flexgen/dist_flex_opt.py", "explicit_replacement",
  "FMInference/FlexGen dist_flex_opt.py (pipeline-parallel OptLM over send/recv, MPI launch)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "needs CUDA"),
    C("backend = 'nccl'", "dist_backend", R, True, "backend = 'hccl'",
      "the default --comm-device gpu selects NCCL"),
    C("self.load_weight_stream = torch.cuda.Stream()", "torch_cuda_api", R, True,
      "self.load_weight_stream = torch.npu.Stream()", "needs CUDA"),
    C("self.load_cache_stream = torch.cuda.Stream()", "torch_cuda_api", R, True,
      "self.load_cache_stream = torch.npu.Stream()", "needs CUDA"),
    C("self.store_cache_stream = torch.cuda.Stream()", "torch_cuda_api", R, True,
      "self.store_cache_stream = torch.npu.Stream()", "needs CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", SYNC_NOTE),
    C('gpu = TorchDevice(f"cuda:{args.local_rank}")', "device_type", R, True,
      'gpu = TorchDevice(f"npu:{args.local_rank}")', "per-rank execution device"),
])

E("flexgen_dist_sh", "benchmark/flexgen/bench_dist_multi_node.sh", "explicit_replacement",
  "FlexGen bench_dist_multi_node.sh (mpirun pipeline-parallel launch, NCCL socket env)", [
    C("N_GPUS=$(nvidia-smi --list-gpus | wc -l)", "device_type", R, True,
      "N_GPUS=$(npu-smi info -l | grep -c 'NPU ID')",
      "nvidia-smi is absent: N_GPUS=0 and mpirun rejects ppr:0:node"),
    C("export NCCL_SOCKET_IFNAME=$NETWORK_INTERFACE", "env_var", R, False,
      "export HCCL_SOCKET_IFNAME=$NETWORK_INTERFACE",
      "unconfirmed whether HCCL's default NIC choice works here; multi-node Ascend jobs set HCCL_SOCKET_IFNAME"),
    C("export NCCL_IB_DISABLE=1", "env_var", X, False, None, "NCCL knob, ignored by HCCL"),
    C("-x NCCL_SOCKET_IFNAME -x GLOO_SOCKET_IFNAME -x CUDA_VISIBLE_DEVICES", "env_var", R, False,
      "--bind-to core -x OMP_NUM_THREADS -x HCCL_SOCKET_IFNAME -x GLOO_SOCKET_IFNAME -x ASCEND_RT_VISIBLE_DEVICES \\",
      "forwards the CUDA/NCCL variables; the NPU runtime reads the HCCL/ASCEND ones"),
])

# --------------------------------------------------------------------------------------------------------------
# Petals and tensor_parallel
# --------------------------------------------------------------------------------------------------------------
E("petals_server", "src/petals/server/server.py", "device_branch_or_abstraction",
  "bigscience-workshop/petals server/server.py (device choice, block count from device memory)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", B, True,
      'elif is_npu_available():\n                device = "npu"',
      "an NPU host falls through to device='cpu'"),
    C('if device.type == "cuda" and device.index is None:', "device_type", R, False,
      'if device.type in ("cuda", "npu") and device.index is None:',
      "unconfirmed whether an index-less npu device breaks the later per-device memory queries"),
    C('assert self.device.type in ("cuda", "mps"), (', "device_type", R, True,
      'assert self.device.type in ("cuda", "npu", "mps"), (',
      "without --num_blocks the server refuses to start on an NPU device"),
    C('assert self.device.type == "cuda", f"Tensor parallelism', "device_type", R, True,
      'assert self.device.type in ("cuda", "npu"), f"Tensor parallelism is not supported on {self.device.type.upper()}"',
      "with several --tensor_parallel_devices"),
    C("torch.cuda.get_device_properties(device).total_memory for device in self.tensor_parallel_devices",
      "torch_cuda_api", R, True,
      "torch.npu.get_device_properties(device).total_memory for device in self.tensor_parallel_devices",
      "needs CUDA"),
    C('elif self.device.type == "cuda":', "device_type", R, True, 'elif self.device.type in ("cuda", "npu"):',
      "an NPU device falls to psutil host RAM: far too many blocks are chosen"),
    C("total_memory = torch.cuda.get_device_properties(self.device).total_memory", "torch_cuda_api", R, True,
      "total_memory = torch.npu.get_device_properties(self.device).total_memory", "needs CUDA"),
    C('=if self.device.type == "cuda":', "device_type", B, False, 'elif self.device.type == "npu":',
      "cleanup logging only; the NPU path just skips it"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE),
    C("allocated_vram = torch.cuda.memory_allocated(self.device)", "torch_cuda_api", R, False,
      "allocated_vram = torch.npu.memory_allocated(self.device)", "behind the cuda-only cleanup branch"),
    C("reserved_vram = torch.cuda.memory_reserved(self.device)", "torch_cuda_api", R, False,
      "reserved_vram = torch.npu.memory_reserved(self.device)", "behind the cuda-only cleanup branch"),
])

E("petals_throughput", "src/petals/server/throughput.py", "device_branch_or_abstraction",
  "bigscience-workshop/petals server/throughput.py (compute RPS measurement, device-name cache key)", [
    C('=if device.type == "cuda":', "device_type", B, True,
      'elif device.type == "npu":\n        torch.npu.synchronize(device)',
      "no synchronisation on NPU: only launch time is measured, throughput is overestimated and announced to the swarm"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", R, True, "torch.npu.synchronize(device)",
      "needs CUDA"),
    C('return f"{torch.cuda.get_device_name(device)} GPU" if device.type == "cuda"', "torch_cuda_api", R, False,
      'return f"{torch.npu.get_device_name(device)} NPU" if device.type == "npu" else device.type.upper()',
      "cache key degrades to 'NPU' (all NPU models share one cached measurement)"),
])

E("petals_convert_block", "src/petals/utils/convert_block.py", "device_branch_or_abstraction",
  "bigscience-workshop/petals utils/convert_block.py (bitsandbytes quantization, tensor_parallel wrapping)", [
    C("model._modules[n] = bnb.nn.Linear8bitLt(", "custom_cuda_extension", R, False,
      'raise ValueError("quant_type=int8 (LLM.int8) is not supported on NPU")',
      "only with --quant_type int8 (the NPU default is NONE); LLM.int8 has no NPU backend"),
    C("model._modules[n] = bnb.nn.LinearNF4(", "custom_cuda_extension", R, False,
      "model._modules[n] = bnb.nn.LinearNF4(  # needs the multi-backend bitsandbytes build on NPU",
      "unconfirmed: NF4 exists for Ascend only in bitsandbytes' multi-backend branch"),
    C("tp_block = tp.TensorParallel(block, devices,", "distributed_framework", R, False,
      "tp_block = tp.TensorParallel(block, devices, ...)  # single device only on NPU",
      "single-device wrapping works; multi-device sharding relies on tensor_parallel's CUDA machinery"),
])

E("petals_pyproject", "pyproject.toml", "explicit_replacement",
  "bigscience-workshop/petals setup.cfg dependencies as a pyproject.toml (bitsandbytes, tensor_parallel)", [
    C('"torch>=1.12",', "import_torch_npu", R, True, '"torch==2.1.0",\n    "torch-npu==2.1.0.post12",',
      "torch_npu is not pulled in, and it needs an exactly matching torch"),
    C('"bitsandbytes==0.41.1",', "custom_cuda_extension", R, False,
      '"bitsandbytes==0.41.1; platform_machine == \\"x86_64\\"",',
      "installs; only the quantized paths need it and they have no NPU backend in this version"),
    C('"tensor_parallel==1.0.23",', "distributed_framework", R, False, '"tensor_parallel==1.0.23",  # 1 device',
      "single-device use only on NPU"),
    C('"nvidia-ml-py>=12.535.77",', "torch_cuda_api", X, False, None, "NVML extra; no NPU equivalent"),
    C('"flash-attn>=2.3.0; platform_system', "attention_kernel", X, False, None,
      "optional extra; cannot be installed on NPU"),
])

E("petals_ptune_train", "examples/prompt_tuning_sst2.py", "explicit_replacement",
  "bigscience-workshop/petals prompt-tuning SST-2 example as a script (AMP, pinned DataLoader)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("DEVICE = 'cuda'", "device_type", R, True, "DEVICE = 'npu'", "all local tensors and the model go here"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "lazily queued without CUDA; NPU generators stay unseeded (reproducibility only)"),
    C('pin_memory_device="cuda",', "pin_memory", R, True, 'pin_memory_device="npu",',
      "the DataLoader pin thread pins for a CUDA device, which fails without CUDA"),
    C('with torch.autocast("cuda", dtype=torch.float16):', "amp", R, True,
      'with torch.autocast("npu", dtype=torch.float16):', "CUDA autocast is inactive for NPU tensors"),
    C("optimizer = AdamW([p for p in model.parameters() if p.requires_grad], lr=args.lr,", "fused_optimizer", R,
      False, "optimizer = torch_npu.optim.NpuFusedAdamW([p for p in model.parameters() if p.requires_grad], lr=args.lr,",
      "performance only (few trainable prompt parameters)"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", R, True, "scaler = torch.npu.amp.GradScaler()",
      "torch.cuda.amp.GradScaler disables itself without CUDA: fp16 steps without loss scaling"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16):', "amp", R, True,
      'with torch.autocast(device_type="npu", dtype=torch.float16):', "CUDA autocast is inactive for NPU tensors"),
])

E("tensor_parallel_lib", "src/tensor_parallel/tensor_parallel.py", "device_branch_or_abstraction",
  "BlackSamorez/tensor_parallel TensorParallel (single-process multi-GPU sharding, NCCL all-reduce)", [
    C('if device.type == "cuda" and device.index is None:', "device_type", R, False,
      'if device.type in ("cuda", "npu") and device.index is None:',
      "unconfirmed: an index-less 'npu' output device may not match the canonical device list"),
    C('[f"cuda:{i}" for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else ["cpu"]',
      "device_type", R, True,
      '[f"npu:{i}" for i in range(torch.npu.device_count())] if torch.npu.is_available() else ["cpu"]',
      "default device list is ['cpu'] on an NPU host"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", B, False,
      "elif torch.npu.is_available():\n            torch.npu.empty_cache()", EMPTY_CACHE),
    C("return parallel_apply(self.module_shards, inputs, kwargs_tup)[self.output_device_index]",
      "unsupported_op_workaround", R, True,
      "return _threaded_apply(self.module_shards, inputs, kwargs_tup, self.devices)[self.output_device_index]",
      "torch.nn.parallel.parallel_apply (DataParallel's machinery, nn.DataParallel unsupported on Ascend) opens "
      "CUDA stream/device contexts for every shard"),
])

E("pp_pipelining_llama", "examples/llama/pippy_llama.py", "explicit_replacement",
  "pytorch/PiPPy examples/llama pippy_llama.py on torch.distributed.pipelining (GPipe, greedy decode)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device(f"cuda:{local_rank}")', "device_type", R, True,
      'device = torch.device(f"npu:{local_rank}")', "stage device"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)", "needs CUDA"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start_evt = torch.npu.Event(enable_timing=True)", "needs CUDA"),
    C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "end_evt = torch.npu.Event(enable_timing=True)", "needs CUDA"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", R, True, "torch.npu.synchronize(device)", SYNC_NOTE),
    C("peak = torch.cuda.max_memory_allocated(device)", "torch_cuda_api", R, True,
      "peak = torch.npu.max_memory_allocated(device) / 2**30", "CUDA counter queried with an NPU device"),
])

# --------------------------------------------------------------------------------------------------------------
# text-generation-inference (tensor-parallel serving)
# --------------------------------------------------------------------------------------------------------------
E("tgi_dist", "server/text_generation_server/utils/dist.py", "device_branch_or_abstraction",
  "huggingface/text-generation-inference utils/dist.py (NCCL process group with high-priority stream)", [
    C("=if torch.cuda.is_available():", "torch_cuda_api", B, True,
      "if torch.npu.is_available():  # HCCL branch mirroring the NCCL one",
      "an NPU host takes the gloo branch: shards run the TP collectives over CPU gloo with CPU-side options"),
    C("from torch.distributed import ProcessGroupNCCL", "dist_backend", R, True,
      "from torch_npu._C._distributed_c10d import ProcessGroupHCCL",
      "ProcessGroupNCCL does not exist in a non-CUDA build"),
    C("assert WORLD_SIZE <= torch.cuda.device_count()", "torch_cuda_api", R, True,
      'assert WORLD_SIZE <= torch.npu.device_count(), "Each process is one npu"', "needs CUDA"),
    C("device = RANK % torch.cuda.device_count()", "torch_cuda_api", R, True,
      "device = RANK % torch.npu.device_count()", "needs CUDA"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)", "needs CUDA"),
    C("torch.cuda.set_per_process_memory_fraction(MEMORY_FRACTION, device)", "torch_cuda_api", R, True,
      "torch.npu.set_per_process_memory_fraction(MEMORY_FRACTION, device)", "needs CUDA"),
    C('backend = "nccl"', "dist_backend", R, True, 'backend = "hccl"', "NCCL"),
    C("options = ProcessGroupNCCL.Options()", "dist_backend", R, True, "options = ProcessGroupHCCL.Options()",
      "NCCL options object"),
    C("options.is_high_priority_stream = True", "dist_backend", X, False, None,
      "unconfirmed whether ProcessGroupHCCL.Options has is_high_priority_stream"),
    C("if torch.cuda.is_available():  # one GPU per shard", "torch_cuda_api", B, True,
      'if torch.npu.is_available():\n        return torch.device(f"npu:{RANK % torch.npu.device_count()}")',
      "the shard's weights and KV cache land on the CPU"),
])

E("tgi_bloom_modeling", "server/text_generation_server/models/custom_modeling/bloom_modeling.py",
  "device_branch_or_abstraction",
  "huggingface/text-generation-inference custom_modeling/bloom_modeling.py (guarded custom kernels, alibi baddbmm)", [
    C("attention_scores = alibi.baddbmm(", "unsupported_op_workaround", R, False,
      "attention_scores = torch.bmm(query_layer, key_layer) * inv_norm_factor + alibi * beta",
      "knowledge (msFmkTransplt precision advice): baddbmm may overflow on NPU, bmm + add suggested; unconfirmed "
      "for this shape"),
    C("attention_probs = F.softmax(attention_probs, dim=-1, dtype=torch.float32).to(input_dtype)", "npu_fused_op",
      R, False, "context = torch_npu.npu_fused_infer_attention_score(q, k, v, pse_shift=alibi, atten_mask=mask, ...)[0]",
      "performance: fused inference attention with the alibi bias as pse_shift"),
])

E("tgi_custom_kernels_setup", "server/custom_kernels/setup.py", "explicit_replacement",
  "huggingface/text-generation-inference server/custom_kernels/setup.py (CUDAExtension fused attention)", [
    C("from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension", "custom_cuda_extension", R,
      True, "from torch_npu.utils.cpp_extension import NpuExtension\nfrom torch.utils.cpp_extension import BuildExtension",
      "CUDA_HOME is None on an NPU host and CUDAExtension needs nvcc"),
    C('raw_output = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"]', "custom_cuda_extension", X, True, None,
      "nvcc probe: fails (CUDA_HOME None)"),
    C("check_cuda_torch_binary_vs_bare_metal(CUDA_HOME)", "custom_cuda_extension", X, True, None,
      "torch.version.hip is None on an NPU build, so the nvcc probe runs and fails"),
    C('os.environ.setdefault("TORCH_CUDA_ARCH_LIST"', "env_var", X, False, None, "inert without nvcc"),
    C("_, bare_metal_version = get_cuda_bare_metal_version(CUDA_HOME)", "custom_cuda_extension", X, True, None,
      "second nvcc probe"),
    C('cc_flag = ["-gencode", "arch=compute_80,code=sm_80"]', "custom_cuda_extension", X, False, None,
      "nvcc-only flags (ignored once the 'nvcc' key is gone)"),
    C("=CUDAExtension(", "custom_cuda_extension", R, True, "NpuExtension(", "no CUDA toolchain"),
    C('sources=["custom_kernels/fused_bloom_attention_cuda.cu"],', "custom_cuda_extension", R, True,
      'sources=["custom_kernels/fused_bloom_attention_npu.cpp"],', ".cu kernel: rewrite in Ascend C"),
    C("CUDAExtension(  # generic (non-alibi) fused attention", "custom_cuda_extension", R, True,
      "NpuExtension(  # generic (non-alibi) fused attention", "no CUDA toolchain"),
    C('sources=["custom_kernels/fused_attention_cuda.cu"],', "custom_cuda_extension", R, True,
      'sources=["custom_kernels/fused_attention_npu.cpp"],', ".cu kernel: rewrite in Ascend C"),
])

E("tgi_k8s_yaml", "deploy/k8s/tgi-bloom-sharded.yaml", "explicit_replacement",
  "Kubernetes Deployment for sharded TGI serving (NVIDIA runtime class, GPU resources, NCCL env)", [
    C("runtimeClassName: nvidia", "device_type", R, True, "runtimeClassName: ascend",
      "the NVIDIA runtime class does not exist on Ascend nodes (Ascend Docker Runtime)"),
    C("nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB", "device_type", R, True,
      "accelerator: huawei-Ascend910", "no node carries this label: the pod stays Pending"),
    C("image: ghcr.io/huggingface/text-generation-inference:1.4.5", "distributed_framework", R, True,
      "image: <registry>/ascend/llm-serving:<tag>  # an NPU serving stack (e.g. vLLM-Ascend)",
      "the TGI image is built for CUDA only"),
    C("name: NCCL_SHM_DISABLE", "env_var", X, False, None, "NCCL knob, ignored by HCCL"),
    C("nvidia.com/gpu: 8", "device_type", R, True, "huawei.com/Ascend910: 8",
      "the Ascend device plugin exposes NPUs under a different resource name"),
])
