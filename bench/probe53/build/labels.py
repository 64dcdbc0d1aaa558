"""Labels for probe53 (hand-written synthetic upstream files; see ../README.md).

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
EXPL, TTN, AGN, KRW = "explicit_replacement", "transfer_to_npu", "device_branch_or_abstraction", "kernel_rewrite"

RO_NOTE = ("mode='reduce-overhead' makes Inductor capture CUDA graphs (cudagraph trees); on NPU the graph-capture "
           "counterpart is torch_npu's graph mode / backend='npugraphs' (2.7.1 list: npugraphs ~ cudagraphs); "
           "how reduce-overhead behaves on NPU is unconfirmed")
MA_NOTE = ("max-autotune benchmarks Triton GEMM/conv templates and enables CUDA graphs; on NPU Inductor's Triton "
           "path needs triton-ascend (transfer_to_npu forces has_triton=False); effect unconfirmed, performance only")

E("gptfast_generate", "generate.py", EXPL,
  "pytorch-labs/gpt-fast generate.py (reduce-overhead decode, cudagraph trees, speculative decoding)", [
    C("=import torch._inductor.config", "import_torch_npu", A, True, "import torch_npu",
      "torch.npu.* and the npu device type need torch_npu loaded (explicit import recommended even with autoload)"),
    C('if "cuda" in device:', "device_type", R, True, 'if "npu" in device:',
      "an npu device string falls into the 'not yet supported' branch and never synchronises, so every timing is wrong"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", R, True, "torch.npu.synchronize(device)",
      "torch.cuda.synchronize needs a CUDA build"),
    C("default_device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", R, True,
      "default_device = 'npu' if torch.npu.is_available() else 'cpu'",
      "an NPU host has no CUDA, so the whole benchmark silently runs on the CPU"),
    C("with torch.backends.cuda.sdp_kernel(enable_flash=False", "attention_kernel", R, True,
      "with contextlib.nullcontext():",
      "torch.backends.cuda.sdp_kernel is ✘ in Ascend's 2.7.1 list"),
    C("use_cuda = 'cuda' in device", "device_type", R, False, "use_cuda = device.split(':')[0] in ('cuda', 'npu')",
      "picks the int4 tinygemm packing layout; which layout an NPU run needs is unconfirmed (the int4 kernels have no NPU kernel anyway)"),
    C("torch._inductor.config.triton.cudagraph_trees = False", "compile_mode", R, False,
      "pass  # no cudagraph trees on NPU",
      "CUDA-graph tree workaround; meaningless on NPU, unconfirmed"),
    C('model_forward = torch.compile(model_forward, mode="reduce-overhead"', "compile_mode", R, False,
      'model_forward = torch.compile(model_forward, backend="npugraphs", fullgraph=True)', RO_NOTE),
    C('decode_one_token = torch.compile(decode_one_token, mode="reduce-overhead"', "compile_mode", R, False,
      'decode_one_token = torch.compile(decode_one_token, backend="npugraphs", fullgraph=True)', RO_NOTE),
    C("torch.profiler._utils._init_for_cuda_graphs()", "torch_cuda_api", X, False, None,
      "kineto CUDA-graph warm-up hook; no meaning on NPU (harmless, unconfirmed)"),
    C("prof = torch.profiler.profile()", "torch_cuda_api", R, False, "prof = torch_npu.profiler.profile()",
      "without torch_npu.profiler the trace has no NPU activity; unconfirmed whether torch.profiler picks up PrivateUse1"),
    C("torch.cuda.max_memory_reserved()", "torch_cuda_api", R, True, "torch.npu.max_memory_reserved()",
      "without CUDA initialised torch.cuda memory stats are empty, so the report prints 0 GB"),
  ])

E("gptfast_tp", "tp.py", EXPL,
  "pytorch-labs/gpt-fast tp.py (torchrun tensor parallel, functional-collective hooks)", [
    C("=import torch.distributed as dist", "import_torch_npu", A, True, "import torch_npu",
      "hccl backend and torch.npu need torch_npu loaded"),
    C("if not dist.is_nccl_available():", "dist_backend", R, True, "if not dist.is_hccl_available():",
      "NCCL is never available on an NPU host, so TP generation aborts"),
    C('os.environ.setdefault("TORCH_NCCL_AVOID_RECORD_STREAMS", "1")', "env_var", X, False, None,
      "NCCL-only knob, ignored by HCCL; no HCCL equivalent found in the knowledge (unconfirmed)"),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", R, True, "torch.npu.set_device(rank)",
      "needs a CUDA build"),
    C('dist.init_process_group(backend="nccl"', "dist_backend", R, True,
      'dist.init_process_group(backend="hccl", rank=rank, world_size=world_size)', "NCCL is not available on Ascend"),
    C("peak = torch.cuda.max_memory_allocated(torch.cuda.current_device())", "torch_cuda_api", R, True,
      "peak = torch.npu.max_memory_allocated(torch.npu.current_device()) / 2**30",
      "torch.cuda.current_device() initialises CUDA and fails on an NPU host"),
  ])

INT4_NOTE = ("aten int4 tinygemm op has no NPU kernel in the 2.7.1/2.9.0 op lists, so it falls back to the CPU "
             "(performance); torch_npu's counterpart pair is npu_convert_weight_to_int4pack + "
             "npu_weight_quant_batchmatmul (layout compatibility with the tinygemm packing unconfirmed)")

E("gptfast_quantize", "quantize.py", EXPL,
  "pytorch-labs/gpt-fast quantize.py (int8 / int4 tinygemm weight-only quantization)", [
    C("=import torch.nn as nn", "import_torch_npu", A, True, "import torch_npu",
      "npu device and torch_npu.npu_* ops need torch_npu loaded"),
    C('default_device = "cuda"', "device_type", R, True, 'default_device = "npu"',
      "hard-coded CUDA default for the quantization pass"),
    C("weight_int4pack = torch.ops.aten._convert_weight_to_int4pack(", "unsupported_op_workaround", R, False,
      "weight_int4pack = torch_npu.npu_convert_weight_to_int4pack(weight_int32, inner_k_tiles)", INT4_NOTE),
    C("c = torch.ops.aten._weight_int4pack_mm(", "unsupported_op_workaround", R, False,
      "c = torch_npu.npu_weight_quant_batchmatmul(x, weight_int4pack, scales, antiquant_offset=zeros, antiquant_group_size=groupsize)",
      INT4_NOTE),
    C('=device = "cuda"', "device_type", R, True, 'device = "npu"',
      "create_quantized_state_dict() defaults to use_cuda=True, so quantization moves weights to a CUDA device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
  ])

FI_NOTE = "flashinfer is a CUDA-only kernel package (no NPU build); decode attention moves to torch_npu.npu_fused_infer_attention_score"

E("sglang_cuda_graph_runner", "python/sglang/srt/model_executor/cuda_graph_runner.py", EXPL,
  "sgl-project/sglang model_executor/cuda_graph_runner.py (flashinfer decode wrappers, per-batch-size CUDA graphs, torch.compile)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "torch.npu graph APIs need torch_npu"),
    C("from flashinfer import BatchDecodeWithPagedKVCacheWrapper", "attention_kernel", R, True,
      "from sglang.srt.layers.attention.ascend_backend import AscendDecodeMetadata", FI_NOTE),
    C("sub._forward_method = sub.forward_cuda", "custom_cuda_extension", R, True,
      "sub._forward_method = sub.forward_npu",
      "CustomOp.forward_cuda dispatches to vLLM/sgl-kernel CUDA kernels (rms_norm, silu_and_mul, rotary)"),
    C('mode="max-autotune-no-cudagraphs"', "compile_mode", R, False, 'backend="inductor", dynamic=False',
      "max-autotune benchmarks Triton templates; on NPU Triton needs triton-ascend (unconfirmed, performance only)"),
    C('with torch.device("cuda"):', "device_type", R, True, 'with torch.device("npu"):',
      "every static graph input / attention metadata buffer below is allocated on CUDA"),
    C("graph = torch.cuda.CUDAGraph()", "torch_cuda_api", R, True, "graph = torch.npu.NPUGraph()",
      "torch.npu.NPUGraph is the NPU form (inference only, which this is)"),
    C("flashinfer_decode_wrapper = BatchDecodeWithPagedKVCacheWrapper(", "attention_kernel", R, True,
      "attn_metadata = AscendDecodeMetadata(", FI_NOTE + "; use_cuda_graph=True buffers go with it"),
    C("torch.cuda.synchronize()  # warmup", "torch_cuda_api", R, True, "torch.npu.synchronize()  # warmup",
      "needs a CUDA build"),
    C("torch.cuda.synchronize()  # before capture", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # before capture", "needs a CUDA build"),
    C("with torch.cuda.graph(graph, pool=self.graph_memory_pool, stream=stream):", "torch_cuda_api", R, True,
      "with torch.npu.graph(graph, pool=self.graph_memory_pool, stream=stream):",
      "torch.npu.graph is the NPU form (inference only)"),
    C("torch.cuda.synchronize()  # after capture", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # after capture", "needs a CUDA build"),
  ])

E("vllm_graph_model_runner", "vllm/worker/graph_model_runner.py", EXPL,
  "vllm-project/vllm v0 worker/model_runner.py capture_model + CUDAGraphRunner + CudaMemoryProfiler", [
    C("=import torch.nn as nn", "import_torch_npu", A, True, "import torch_npu", "torch.npu graph APIs need torch_npu"),
    C("torch.cuda.reset_peak_memory_stats(self.device)", "torch_cuda_api", R, True,
      "torch.npu.reset_peak_memory_stats(self.device)", "calls a CUDA-only binding; fails without a CUDA build"),
    C("mem = torch.cuda.max_memory_allocated(self.device)", "torch_cuda_api", R, True,
      "mem = torch.npu.max_memory_allocated(self.device)", "reports 0 without CUDA, so the weight-memory profile is wrong"),
    C("context = GraphCaptureContext(torch.cuda.Stream(device=device))", "torch_cuda_api", R, True,
      "context = GraphCaptureContext(torch.npu.Stream(device=device))", "needs a CUDA build"),
    C('self.model = torch.compile(self.model, backend="cudagraphs", dynamic=False)', "compile_mode", R, False,
      'self.model = torch.compile(self.model, backend="npugraphs", dynamic=False)',
      "Ascend's 2.7.1 list: backend npugraphs is the NPU counterpart of cudagraphs; what cudagraphs does with NPU inputs is unconfirmed"),
    C("start_free_gpu_memory = torch.cuda.mem_get_info()[0]", "torch_cuda_api", R, True,
      "start_free_gpu_memory = torch.npu.mem_get_info()[0]", "needs a CUDA build"),
    C("end_free_gpu_memory = torch.cuda.mem_get_info()[0]", "torch_cuda_api", R, True,
      "end_free_gpu_memory = torch.npu.mem_get_info()[0]", "needs a CUDA build"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "needs a CUDA build"),
    C("self._graph = torch.cuda.CUDAGraph()", "torch_cuda_api", R, True, "self._graph = torch.npu.NPUGraph()",
      "NPUGraph is the NPU form (inference only, which decode capture is)"),
    C("with torch.cuda.graph(self._graph, pool=memory_pool, stream=stream):", "torch_cuda_api", R, True,
      "with torch.npu.graph(self._graph, pool=memory_pool, stream=stream):", "torch.npu.graph is the NPU form"),
    C("torch.cuda.synchronize()  # capture done", "torch_cuda_api", R, True, "torch.npu.synchronize()  # capture done",
      "needs a CUDA build"),
  ])

TRT_NOTE = ("Torch-TensorRT/TensorRT run only on NVIDIA GPUs; the Ascend graph-compile counterparts are torch.compile "
            "with TorchAir's NPU backend or backend='npugraphs' (knowledge §6: torch.compile row)")

E("torch_tensorrt_resnet", "examples/dynamo/compile_resnet_trt.py", EXPL,
  "pytorch/TensorRT examples/dynamo ResNet-50 compile + benchmark (dynamo and torch.compile frontends, .ep save/reload)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "npu device and events need torch_npu"),
    C("=import torch_tensorrt", "compile_mode", R, True, "import torchair", TRT_NOTE),
    C("torch.cuda.synchronize()  # drain warmup", "torch_cuda_api", R, True, "torch.npu.synchronize()  # drain warmup",
      "needs a CUDA build"),
    C("start_events = [torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start_events = [torch.npu.Event(enable_timing=True) for _ in range(nruns)]", "torch.cuda.Event needs a CUDA build"),
    C("end_events = [torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "end_events = [torch.npu.Event(enable_timing=True) for _ in range(nruns)]", "torch.cuda.Event needs a CUDA build"),
    C("torch.cuda.synchronize()  # wait for the last end event", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # wait for the last end event", "needs a CUDA build"),
    C("return torch_tensorrt.compile(", "compile_mode", R, True,
      "return torch.compile(model, backend=torchair.get_npu_backend(), dynamic=True)", TRT_NOTE),
    C('backend="tensorrt",', "compile_mode", R, True, 'backend="npugraphs",',
      "the 'tensorrt' dynamo backend is registered by torch_tensorrt and does not exist on an NPU host"),
    C("torch.cuda.get_device_name(0)", "torch_cuda_api", R, True, "torch.npu.get_device_name(0)", "needs a CUDA build"),
    C('.eval().to("cuda")', "tensor_to_device", R, True,
      'model = models.resnet50(weights=models.ResNet50_Weights.DEFAULT).eval().to("npu")', "hard-coded CUDA device"),
    C("inputs = [torch.randn((args.batch_size, 3, 224, 224)).cuda()]", "tensor_to_device", R, True,
      "inputs = [torch.randn((args.batch_size, 3, 224, 224)).npu()]", "hard-coded CUDA device"),
    C("torch_tensorrt.runtime.set_cudagraphs_mode(True)", "compile_mode", X, True, None,
      TRT_NOTE + "; the --cudagraphs switch has no meaning without TensorRT"),
    C("torch_tensorrt.save(trt_model, args.save", "compile_mode", R, True,
      "torch.save(model.state_dict(), args.save)", TRT_NOTE),
    C("reloaded = torch.export.load(args.save).module()", "unsupported_op_workaround", R, True,
      "reloaded = model", "torch.export.load is ✘ in Ascend's 2.7.1 list and in msFmkTransplt's unsupported list"),
  ])

EXPORT_NOTE = "torch.export.{export,save,load} are ✘ in Ascend's 2.7.1 list and in msFmkTransplt's unsupported list"
AOTI_NOTE = ("AOTInductor emits device code for the ExportedProgram's device; whether torch_npu's Inductor backend "
             "supports AOT packaging for npu is unconfirmed in the knowledge")

E("aoti_export_package", "scripts/export_aoti.py", EXPL,
  "PyTorch AOTInductor tutorial-style export + aoti_compile_and_package script (with the torch<=2.4 .so path)", [
    C("=import torch._inductor", "import_torch_npu", A, True, "import torch_npu", "npu device needs torch_npu"),
    C("ep = torch.export.export(model, example_inputs", "unsupported_op_workaround", R, True,
      "ep = torch.jit.trace(model, example_inputs)", EXPORT_NOTE),
    C("return torch._inductor.aoti_compile_and_package(", "compile_mode", R, False,
      "return torch.compile(model, backend=torchair.get_npu_backend())", AOTI_NOTE),
    C("so_path = torch._export.aot_compile(", "compile_mode", R, False,
      "so_path = None  # no AOTInductor .so for NPU", AOTI_NOTE),
    C("runner = torch._C._aoti.AOTIModelContainerRunnerCuda(so_path, 1)", "torch_cuda_api", R, True,
      "runner = torch._C._aoti.AOTIModelContainerRunnerCpu(so_path, 1)",
      "the CUDA container runner binding exists only in CUDA builds of torch"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "needs a CUDA build"),
    C("torch.cuda.synchronize()  # end of timed loop", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # end of timed loop", "needs a CUDA build"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "an NPU host exports and packages a CPU model instead"),
    C("torch.export.save(ep, ", "unsupported_op_workaround", R, True,
      "torch.save(model.state_dict(), os.path.splitext(args.out)[0] + '.pt')", EXPORT_NOTE),
  ])

CL_NOTE = ("channels_last is listed as not supported by the msFmkTransplt/transfer_to_npu limitations "
           "('channel_last not supported, use contiguous'); exact failure mode unconfirmed")

E("diffusion_fast_bench", "run_benchmark.py", EXPL,
  "huggingface/diffusion-fast run_benchmark.py (SDXL + torch.compile max-autotune, torchao dynamic int8, fused QKV)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "npu device needs torch_npu"),
    C('pipe = pipe.to("cuda")', "tensor_to_device", R, True, 'pipe = pipe.to("npu")', "hard-coded CUDA device"),
    C("pipe.unet.to(memory_format=torch.channels_last)", "unsupported_op_workaround", X, True, None, CL_NOTE),
    C("apply_dynamic_quant(pipe.unet, dynamic_quant_filter_fn)", "unsupported_op_workaround", R, False,
      "pass  # torchao dynamic int8 relies on torch._int_mm",
      "torchao dynamic int8 lowers to torch._int_mm, which has no NPU kernel in the op lists (CPU fallback, performance)"),
    C("pipe.vae.to(memory_format=torch.channels_last)", "unsupported_op_workaround", X, True, None, CL_NOTE),
    C("if not args.no_bf16 and torch.cuda.get_device_capability()[0] < 8:", "device_capability_check", R, True,
      "if not args.no_bf16 and not torch.npu.is_bf16_supported():",
      "get_device_capability needs a CUDA build (and returns None / a configured value on NPU)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "silent no-op without CUDA"),
    C("memory = bytes_to_giga_bytes(torch.cuda.max_memory_allocated())", "torch_cuda_api", R, True,
      "memory = bytes_to_giga_bytes(torch.npu.max_memory_allocated())  # in GBs.",
      "reports 0 GB without CUDA, so the benchmark CSV is wrong"),
    C('parser.add_argument("--compile_mode", type=str, default="max-autotune"', "compile_mode", R, False,
      'parser.add_argument("--compile_mode", type=str, default="default", choices=["default", "reduce-overhead", "max-autotune"])',
      MA_NOTE),
  ])

E("timm_benchmark", "benchmark.py", EXPL,
  "huggingface/pytorch-image-models benchmark.py (torchscript / torch.compile / aot-autograd inference benchmark)", [
    C("=import torch.nn.parallel", "import_torch_npu", A, True, "import torch_npu", "npu device needs torch_npu"),
    C("parser.add_argument('--device', default='cuda', type=str,", "device_type", R, True,
      "parser.add_argument('--device', default='npu', type=str,", "CUDA default device for every run"),
    C("torch.cuda.synchronize(device=device)", "torch_cuda_api", R, True, "torch.npu.synchronize(device=device)",
      "needs a CUDA build"),
    C("=device='cuda',", "device_type", R, False, "device='npu',",
      "constructor default; benchmark() always passes args.device, so cosmetic"),
    C("self.model = memory_efficient_fusion(self.model)", "compile_mode", R, False,
      "self.model = torch.compile(self.model)",
      "functorch's memory_efficient_fusion is an nvFuser/TorchScript-era AOT path; NPU behaviour unconfirmed"),
    C("if 'cuda' in self.device:", "device_type", R, True, "if self.device.split(':')[0] in ('cuda', 'npu'):",
      "an npu device takes the un-synchronised timer, so every step time measures launch overhead only"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "calls a CUDA-only binding; fails without a CUDA build"),
    C("peak_mem_gb=round(torch.cuda.max_memory_allocated() / 2**30, 2),", "torch_cuda_api", R, True,
      "peak_mem_gb=round(torch.npu.max_memory_allocated() / 2**30, 2),", "reports 0 without CUDA"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "silent no-op without CUDA"),
  ])

TRAIN_GRAPH_NOTE = ("Ascend's 2.7.1 list: torch.npu.graph / NPUGraph / make_graphed_callables support inference only, "
                    "not training, so a captured training step has to run eagerly on NPU")

E("graphed_train_step", "train_graphed.py", EXPL,
  "PyTorch CUDA-graphs blog / NVIDIA DeepLearningExamples-style whole-step graph capture training (apex FusedLAMB)", [
    C("=import torch.distributed as dist", "import_torch_npu", A, True, "import torch_npu",
      "torch.npu, hccl and torch_npu.optim need torch_npu"),
    C("from apex.optimizers import FusedLAMB", "fused_optimizer", R, True, "from torch_npu.optim import NpuFusedLamb",
      "apex FusedLAMB needs apex's CUDA extension; Ascend offers NpuFusedLamb"),
    C("from apex.contrib.clip_grad import clip_grad_norm_", "custom_cuda_extension", R, True,
      "from torch.nn.utils import clip_grad_norm_", "apex.contrib multi-tensor CUDA kernel; not in Ascend apex"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "needs a CUDA build"),
    C('dist.init_process_group(backend="nccl"', "dist_backend", R, True,
      'dist.init_process_group(backend="hccl", init_method="env://")', "NCCL is not available on Ascend"),
    C("return FusedLAMB(groups,", "fused_optimizer", R, True,
      "return NpuFusedLamb(groups, lr=args.lr, betas=(0.9, 0.999), eps=1e-6)", "apex FusedLAMB needs CUDA"),
    C("capturable=True, foreach=True", "fused_optimizer", R, False,
      "return torch.optim.AdamW(groups, lr=args.lr, foreach=True)",
      "capturable/tensor-lr only serve graph capture, which NPU training does not use (unconfirmed)"),
    C('device = torch.device("cuda", local_rank)', "device_type", R, True, 'device = torch.device("npu", local_rank)',
      "hard-coded CUDA device"),
    C("inner.encoder = torch.cuda.make_graphed_callables(", "unsupported_op_workaround", X, True, None,
      TRAIN_GRAPH_NOTE),
    C('with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=args.amp):', "amp", R, True,
      'with torch.autocast(device_type="npu", dtype=torch.bfloat16, enabled=args.amp):',
      "CUDA autocast does not cover NPU tensors: bf16 autocast silently off"),
    C("side = torch.cuda.Stream()", "torch_cuda_api", R, True, "side = torch.npu.Stream()", "needs a CUDA build"),
    C("side.wait_stream(torch.cuda.current_stream())", "torch_cuda_api", R, True,
      "side.wait_stream(torch.npu.current_stream())", "needs a CUDA build"),
    C("with torch.cuda.stream(side):", "torch_cuda_api", R, True, "with torch.npu.stream(side):", "needs a CUDA build"),
    C("torch.cuda.current_stream().wait_stream(side)", "torch_cuda_api", R, True,
      "torch.npu.current_stream().wait_stream(side)", "needs a CUDA build"),
    C("graph = torch.cuda.CUDAGraph()", "unsupported_op_workaround", R, True,
      "graph = None  # NPU graphs are inference-only; train eagerly", TRAIN_GRAPH_NOTE),
    C("with torch.cuda.graph(graph):", "unsupported_op_workaround", X, True, None, TRAIN_GRAPH_NOTE),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "needs a CUDA build"),
  ])

E("dynamo_bench_runner", "benchmarks/dynamo/runner_common.py", TTN,
  "pytorch/pytorch benchmarks/dynamo/common.py-style speedup/accuracy driver (ported with transfer_to_npu: "
  "only what transfer_to_npu does not redirect is labelled)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "transfer_to_npu redirects torch.cuda.*, cuda strings/devices, torch.cuda.amp and the profiler"),
    C('"arch_list": " ".join(torch.cuda.get_arch_list()),', "torch_cuda_api", R, True,
      '"arch_list": "npu",',
      "get_arch_list is not redirected; with torch.cuda.is_available patched to True it reaches a CUDA-only binding"),
    C('["nvidia-smi", "--query-gpu=name,memory.total,driver_version"', "torch_cuda_api", R, False,
      '["npu-smi", "info"], text=True',
      "no nvidia-smi on an NPU host; the except clause falls back to 'unknown', so only the report is poorer"),
    C("torch._C._cuda_clearCublasWorkspaces()", "torch_cuda_api", X, True, None,
      "private CUDA binding, absent from torch builds without CUDA and not covered by transfer_to_npu"),
    C('torch.cuda.nvtx.range_push(f"{current_name} iter {i}")', "torch_cuda_api", R, True,
      'rid = torch_npu.npu.mstx.range_start(f"{current_name} iter {i}")',
      "torch.cuda.nvtx is not redirected by transfer_to_npu; torch_npu.npu.mstx is the NPU counterpart"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", R, True, "torch_npu.npu.mstx.range_end(rid)",
      "torch.cuda.nvtx is not redirected by transfer_to_npu"),
    C("torch._inductor.config.triton.cudagraphs = args.cudagraphs and not args.disable_cudagraphs", "compile_mode", R,
      False, "torch._inductor.config.triton.cudagraphs = False  # use --backend npugraphs on NPU",
      "Inductor's CUDA-graph wrapping; NPU equivalent is graph mode / npugraphs (unconfirmed)"),
    C('os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"', "env_var", X, False, None,
      "cuBLAS-only determinism knob; ignored on NPU"),
    C("scripted = torch.jit.script(model)", "unsupported_op_workaround", R, True,
      "scripted = torch.jit.trace(model, example_inputs)",
      "transfer_to_npu turns torch.jit.script into identity, so torch.jit.freeze below gets a plain nn.Module and fails"),
    C('return torch.compile(model, backend="cudagraphs")', "compile_mode", R, False,
      'return torch.compile(model, backend="npugraphs")',
      "Ascend's 2.7.1 list: npugraphs ~ cudagraphs; cudagraphs with NPU inputs unconfirmed"),
    C('if args.amp and example_inputs[0].device.type == "cuda":', "device_type", R, True,
      'if args.amp and example_inputs[0].device.type in ("cuda", "npu"):',
      "transfer_to_npu puts the inputs on npu, so this comparison is False and --amp is silently ignored"),
  ])

CUTLASS_NOTE = "Inductor's CUTLASS GEMM backend is CUDA-only; on NPU these knobs are dead configuration (performance/cosmetic)"

E("torchao_compile_utils", "torchao/utils_compile.py", AGN,
  "pytorch/ao torchao/utils.py compile & benchmark helpers (inductor presets, CUTLASS autotune, benchmark_model)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "npu device/events need torch_npu"),
    C('inductor_config.max_autotune_gemm_backends = "ATEN,TRITON,CUTLASS"', "compile_mode", R, False,
      'inductor_config.max_autotune_gemm_backends = "ATEN"', CUTLASS_NOTE),
    C("inductor_config.cuda.cutlass_dir =", "compile_mode", X, False, None, CUTLASS_NOTE),
    C('inductor_config.cuda.arch = arch or "90"', "compile_mode", X, False, None, CUTLASS_NOTE),
    C("inductor_config.triton.cudagraph_trees = True", "compile_mode", X, False, None,
      "CUDA-graph trees; NPU graph capture goes through npugraphs (unconfirmed)"),
    C('return torch.compile(fn, mode="reduce-overhead", fullgraph=True, dynamic=dynamic)', "compile_mode", R, False,
      'return torch.compile(fn, backend="npugraphs", fullgraph=True, dynamic=dynamic)', RO_NOTE),
    C('device_type = _device_type_of(model) if isinstance(model, torch.nn.Module) else "cuda"', "device_type", R, True,
      'device_type = _device_type_of(model) if isinstance(model, torch.nn.Module) else "npu"',
      "plain callables are assumed to be CUDA and hit torch.cuda.synchronize"),
    C('if device_type == "cuda":', "device_type", B, True, 'elif device_type == "npu":  # torch.npu events, same as cuda',
      "an npu model falls through every branch and benchmark_model returns None"),
    C("activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],", "torch_cuda_api", R,
      False, "activities=[torch_npu.profiler.ProfilerActivity.CPU, torch_npu.profiler.ProfilerActivity.NPU],",
      "CUDA activity records nothing on NPU; torch_npu.profiler is the NPU profiler (trace only)"),
  ])

SYMM_NOTE = ("async TP relies on torch's CUDA symmetric memory (CUDA IPC / multicast) and Inductor's micro-pipeline "
             "TP pass; nothing in the knowledge covers symmetric memory on NPU (unconfirmed)")

E("torchtitan_parallelize", "torchtitan/parallelisms/parallelize_llama.py", EXPL,
  "pytorch/torchtitan parallelisms/parallelize_llama.py (TP/async-TP, selective AC save list, per-block compile, FSDP2)", [
    C("=import torch.nn as nn", "import_torch_npu", A, True, "import torch_npu",
      "npu device mesh and hccl need torch_npu"),
    C('def build_world_mesh(parallel_dims: ParallelDims, device_type: str = "cuda") -> DeviceMesh:', "device_type", R,
      True, 'def build_world_mesh(parallel_dims: ParallelDims, device_type: str = "npu") -> DeviceMesh:',
      "init_device_mesh('cuda', ...) needs CUDA devices and the nccl backend"),
    C("from torch.distributed._symmetric_memory import enable_symm_mem_for_group", "distributed_framework", X, False,
      None, SYMM_NOTE),
    C("torch._inductor.config._micro_pipeline_tp = True", "compile_mode", X, False, None, SYMM_NOTE),
    C("enable_symm_mem_for_group(tp_mesh.get_group().group_name)", "distributed_framework", X, False, None, SYMM_NOTE),
    C("torch.ops.aten._scaled_dot_product_flash_attention.default,", "attention_kernel", R, False,
      "torch.ops.npu.npu_fusion_attention.default,",
      "on NPU SDPA runs the NPU fused-attention op, so this save-list entry never matches and selective AC "
      "recomputes attention (performance only; the exact NPU op name is unconfirmed)"),
  ])

E("yolov5_export", "export.py", AGN,
  "ultralytics/yolov5 export.py (TorchScript / ONNX / TensorRT engine export; NPU port adds an ATC .om branch and "
  "leaves the GPU-only TensorRT path alone)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "an npu device from select_device() needs torch_npu loaded before the dummy input is created"),
    C("['TensorRT', 'engine', '.engine', False, True],", "compile_mode", A, False,
      "['Ascend OM', 'om', '.om', False, False],",
      "Ascend deployment format (ATC: atc --framework=5 --model x.onnx --soc_version ...); TensorRT stays for GPU users"),
    C("if engine:  # TensorRT required before ONNX", "compile_mode", B, False,
      "if om:  # ATC converts the exported ONNX to an Ascend .om",
      "new export branch next to TensorRT; the engine path itself is never taken on an NPU host"),
  ])

E("detectron2_export_model", "tools/deploy/export_model.py", EXPL,
  "facebookresearch/detectron2 tools/deploy/export_model.py (TorchScript tracing/scripting, ONNX, reload benchmark)", [
    C("=from torch import Tensor, nn", "import_torch_npu", A, True, "import torch_npu", "npu device needs torch_npu"),
    C("from detectron2.modeling import GeneralizedRCNN, RetinaNet, build_model", "unsupported_op_workaround", A, False,
      "import torchvision_npu  # NPU kernels for torchvision.ops.roi_align / nms",
      "R-CNN heads call torchvision roi_align/nms; torchvision_npu registers NPU kernels for them (knowledge §6); "
      "behaviour without it on NPU tensors unconfirmed"),
    C('cfg.MODEL.DEVICE = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'cfg.MODEL.DEVICE = "npu" if torch.npu.is_available() else "cpu"',
      "an NPU host traces and evaluates the model on the CPU"),
    C('ts = torch.jit.load(ts_path, map_location="cuda")', "tensor_to_device", R, True,
      'ts = torch.jit.load(ts_path, map_location="npu")', "hard-coded CUDA map_location"),
    C('img = sample_inputs[0]["image"].to("cuda")', "tensor_to_device", R, True,
      'img = sample_inputs[0]["image"].to("npu")', "hard-coded CUDA device"),
    C("torch.cuda.synchronize()  # warmup done", "torch_cuda_api", R, True, "torch.npu.synchronize()  # warmup done",
      "needs a CUDA build"),
    C("torch.cuda.synchronize()  # timed loop done", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # timed loop done", "needs a CUDA build"),
  ])

E("megatron_jit_fusion", "megatron/training/jit_setup.py", EXPL,
  "NVIDIA/Megatron-LM training/initialize.py _compile_dependencies / _set_jit_fusion_options / _warmup_jit_function", [
    C("=import torch", "import_torch_npu", A, True,
      "import mindspeed.megatron_adaptor  # loads torch_npu and patches Megatron for NPU",
      "knowledge §6: MindSpeed's adaptor import after `import torch` is how Megatron runs on NPU"),
    C("from megatron.legacy import fused_kernels", "custom_cuda_extension", X, True, None,
      "fused_kernels JIT-builds Megatron's CUDA softmax kernels with nvcc; no nvcc on NPU (MindSpeed supplies fused ops)"),
    C("if args.use_flash_attn and torch.cuda.get_device_capability()[0] < 8:", "device_capability_check", R, True,
      "if args.use_flash_attn and not hasattr(torch_npu, 'npu_fusion_attention'):",
      "get_device_capability needs CUDA (NPU returns None / a configured value); flash attention on NPU is npu_fusion_attention"),
    C("fused_kernels.load(args)  # rank 0 builds the extension", "custom_cuda_extension", X, True, None,
      "nvcc build of the fused softmax kernels"),
    C("fused_kernels.load(args)  # other ranks load the cached build", "custom_cuda_extension", X, True, None,
      "loads the nvcc-built extension"),
    C("torch._C._jit_set_nvfuser_enabled(True)", "compile_mode", X, False, None,
      "nvFuser is a CUDA-only TorchScript fuser; what the call does on a torch_npu build is unconfirmed"),
    C('return torch.rand(shape, dtype=dtype, device="cuda")', "tensor_to_device", R, True,
      'return torch.rand(shape, dtype=dtype, device="npu")', "every warmup tensor is created on a CUDA device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "silent no-op without CUDA"),
  ])

E("fishspeech_llama_generate", "tools/llama/generate.py", EXPL,
  "fishaudio/fish-speech tools/llama/generate.py (dual-AR semantic decoder, compile gated on torch.cuda.is_available)", [
    C("=import torch._inductor.config", "import_torch_npu", A, True, "import torch_npu", "npu device needs torch_npu"),
    C("with sdpa_kernel(SDPBackend.MATH):", "attention_kernel", R, False, "with nullcontext():",
      "pins the CUDA SDPA dispatcher to the math kernel; torch.nn.attention.sdpa_kernel is not in Ascend's list (unconfirmed)"),
    C('backend="inductor" if torch.cuda.is_available() else "aot_eager",', "compile_mode", R, False,
      'backend="inductor" if (torch.cuda.is_available() or torch.npu.is_available()) else "aot_eager",',
      "an NPU host silently compiles with aot_eager (no Inductor codegen); correct but slow"),
    C('mode="reduce-overhead" if torch.cuda.is_available() else None,', "compile_mode", R, False,
      'mode=None,  # or backend="npugraphs" on NPU', RO_NOTE),
    C("if torch.cuda.is_available():  # sync before timing", "device_type", R, True,
      "if torch.npu.is_available():  # sync before timing",
      "the sync is skipped on NPU, so tokens/sec and bandwidth measure asynchronous launches"),
    C("torch.cuda.synchronize()  # before timing", "torch_cuda_api", R, True, "torch.npu.synchronize()  # before timing",
      "needs a CUDA build"),
    C("if torch.cuda.is_available():  # sync after generation", "device_type", R, True,
      "if torch.npu.is_available():  # sync after generation",
      "the sync is skipped on NPU, so tokens/sec is computed before the device finishes"),
    C("torch.cuda.synchronize()  # after generation", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # after generation", "needs a CUDA build"),
    C('@click.option("--device", type=str, default="cuda")', "device_type", R, True,
      '@click.option("--device", type=str, default="npu")', "CUDA default device"),
  ])

E("triton_rmsnorm_custom_op", "src/fastkernels/ops/rms_norm.py", EXPL,
  "linkedin/Liger-Kernel / unsloth-style Triton RMSNorm registered as a torch.library custom op for torch.compile", [
    C("=import torch.nn as nn", "import_torch_npu", A, True, "import torch_npu",
      "npu tensors and torch.npu need torch_npu; Triton kernels need triton-ascend"),
    C("from triton.language.extra.libdevice import rsqrt", "triton_kernel_tuning", R, False,
      "rsqrt = tl.rsqrt",
      "libdevice is the NVIDIA math-library path; what triton-ascend exposes there is unconfirmed"),
    C("num_warps = 32 if not is_hip() else 16", "triton_kernel_tuning", R, False, "num_warps = 1",
      "warp counts are an NVIDIA occupancy heuristic; triton-ascend maps programs to AI cores (unconfirmed)"),
    C('@torch.library.custom_op("fastkernels::rms_norm_fwd", mutates_args=(), device_types="cuda")', "device_type", R,
      True, '@torch.library.custom_op("fastkernels::rms_norm_fwd", mutates_args=(), device_types=("cuda", "npu"))',
      "the op only gets a CUDA kernel; calling it with NPU tensors finds no kernel for the NPU dispatch key"),
    C("with torch.cuda.device(X.device):", "torch_cuda_api", R, True, "with torch.npu.device(X.device):",
      "torch.cuda.device rejects a non-CUDA device and needs a CUDA build"),
    C('@torch.library.custom_op("fastkernels::rms_norm_bwd"', "device_type", R, True,
      '@torch.library.custom_op("fastkernels::rms_norm_bwd", mutates_args=(), device_types=("cuda", "npu"))',
      "backward op registered for CUDA only"),
    C("sm_count = torch.cuda.get_device_properties(X.device).multi_processor_count", "device_capability_check", R, True,
      "sm_count = torch.npu.get_device_properties(X.device).vector_core_num",
      "NPU device properties have no multi_processor_count (only name, total_memory, L2_cache_size, cube/vector core counts)"),
    C("with torch.cuda.device(dY.device):", "torch_cuda_api", R, True, "with torch.npu.device(dY.device):",
      "torch.cuda.device rejects a non-CUDA device"),
    C("y, _ = rms_norm_fwd(", "npu_fused_op", R, False,
      "y = torch_npu.npu_rms_norm(hidden_states, self.weight + self.offset, epsilon=self.variance_epsilon)[0]",
      "torch_npu.npu_rms_norm is the fused NPU kernel (casting-mode semantics must be checked); performance alternative"),
  ])

E("sam_fast_build", "segment_anything_fast/build_sam.py", EXPL,
  "pytorch-labs/segment-anything-fast build_sam.py + flash_4 dispatch (custom Triton rel-pos flash kernel registered for CUDA, SDPA fallback)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "npu device needs torch_npu"),
    C('def build_sam_fast(variant="vit_h", checkpoint=None, compile_mode="max-autotune", dtype=torch.bfloat16, device="cuda"):',
      "device_type", R, True,
      'def build_sam_fast(variant="vit_h", checkpoint=None, compile_mode=None, dtype=torch.bfloat16, device="npu"):',
      "CUDA default device (the max-autotune default is a performance question, " + MA_NOTE + ")"),
    C("return torch.nn.functional.scaled_dot_product_attention(q_, k_, v_, attn_mask=attn_bias)", "attention_kernel", R,
      False,
      "return torch_npu.npu_fusion_attention(q_, k_, v_, q_.size(1), 'BNSD', pse=attn_bias, scale=sm_scale)[0]",
      "on NPU every call takes this fallback (the Triton kernel path needs q.is_cuda); Ascend lists SDPA masks as bool, "
      "so a float rel-pos bias may miss the fused kernel (unconfirmed)"),
    C('mode="max-autotune-no-cudagraphs", dynamic=True', "compile_mode", R, False,
      'mask_generator.predictor.model.mask_decoder, dynamic=True', MA_NOTE),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "silent no-op without CUDA"),
  ])

ORT_NOTE = ("the CUDA execution provider cannot load on an NPU host; ONNX Runtime's Ascend provider is the CANN EP "
            "(onnxruntime-cann) - not covered by the knowledge, so the replacement is unconfirmed")

E("ort_iobinding_runner", "inference/ort_runner.py", EXPL,
  "ONNX Runtime GPU serving wrapper (optimum/onnxruntime-style IO binding of torch tensors, CUDA/TensorRT EPs, EP CUDA graphs)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "npu tensors need torch_npu"),
    C('"CUDAExecutionProvider",', "device_type", R, True, '"CANNExecutionProvider",', ORT_NOTE),
    C('"enable_cuda_graph": "1" if enable_cuda_graph else "0",', "compile_mode", R, False,
      '"enable_cann_graph": "1" if enable_cuda_graph else "0",',
      "CUDA EP graph replay option; the CANN EP's graph option is unconfirmed"),
    C('if "CUDAExecutionProvider" not in sess.get_providers():', "device_type", R, True,
      'if "CANNExecutionProvider" not in sess.get_providers():',
      "ORT falls back to the CPU EP on an NPU host, so this check always raises"),
    C('def __init__(self, model_path: str, device: str = "cuda:0", enable_cuda_graph: bool = False, **kw):',
      "device_type", R, True,
      'def __init__(self, model_path: str, device: str = "npu:0", enable_cuda_graph: bool = False, **kw):',
      "CUDA default device"),
    C('self.binding.bind_input(name=name, device_type="cuda"', "device_type", R, True,
      'self.binding.bind_input(name=name, device_type="cann", device_id=self.device_id,',
      "binds an NPU address as a CUDA buffer; " + ORT_NOTE),
    C('self.binding.bind_output(name=name, device_type="cuda"', "device_type", R, True,
      'self.binding.bind_output(name=name, device_type="cann", device_id=self.device_id,',
      "binds an NPU address as a CUDA buffer; " + ORT_NOTE),
    C("torch.cuda.current_stream().synchronize()", "torch_cuda_api", R, True,
      "torch.npu.current_stream().synchronize()", "needs a CUDA build"),
    C('p.add_argument("--device", default="cuda:0")', "device_type", R, True, 'p.add_argument("--device", default="npu:0")',
      "CUDA default device"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "needs a CUDA build"),
  ])

E("ds_inference_graph", "inference/ds_generate.py", EXPL,
  "microsoft/DeepSpeedExamples inference/huggingface text-generation (init_inference with kernel injection + enable_cuda_graph)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "DeepSpeed's NPU accelerator is selected when torch_npu is importable; npu device needs it"),
    C('deepspeed.init_distributed("nccl")', "dist_backend", R, True, 'deepspeed.init_distributed("hccl")',
      "NCCL is not available on Ascend (DeepSpeed's NPU accelerator uses hccl)"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "needs a CUDA build"),
    C("replace_with_kernel_inject=args.kernel_inject,", "custom_cuda_extension", R, True,
      "replace_with_kernel_inject=False,  # AutoTP on NPU",
      "kernel injection swaps in DeepSpeed's CUDA inference kernels (op builders not available on NPU, knowledge §6)"),
    C("enable_cuda_graph=args.cuda_graph,", "compile_mode", R, False, "enable_cuda_graph=False,",
      "DeepSpeed graph capture goes through the accelerator's graph API; support in the NPU accelerator is unconfirmed"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "get_accelerator().synchronize()", "needs a CUDA build"),
    C("torch.cuda.synchronize()  # generation done", "torch_cuda_api", R, True,
      "get_accelerator().synchronize()  # generation done", "needs a CUDA build"),
    C("torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", R, True,
      'print_rank0(f"peak memory {get_accelerator().max_memory_allocated() / 2**30:.2f} GiB on rank 0")',
      "reports 0 without CUDA"),
  ])

EXT_NOTE = ("no nvcc/CUDA toolkit on an NPU host; kernels must be rewritten (Ascend C via torch_npu.utils.cpp_extension."
            "NpuExtension / OpPlugin, or triton-ascend), knowledge §6 custom CUDA extensions")

E("qkernels_setup", "setup.py", KRW,
  "torchao / marlin-style setup.py building a CUDAExtension of TORCH_LIBRARY GEMM ops (CUTLASS, sm90a kernels, triton dep)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDA_HOME, CUDAExtension", "custom_cuda_extension", R, True,
      "from torch_npu.utils.cpp_extension import NpuExtension", EXT_NOTE),
    C('os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "8.0;8.6;8.9;9.0a")', "env_var", X, False, None,
      "harmless on its own; only configures the nvcc build"),
    C("if CUDA_HOME is None:", "custom_cuda_extension", R, True, 'if not os.environ.get("ASCEND_TOOLKIT_HOME"):',
      "CUDA_HOME is None on an NPU host, so the build aborts"),
    C("nvcc_flags = [", "custom_cuda_extension", X, True, None, "nvcc-only flags; " + EXT_NOTE),
    C('cuda_sources = sorted(glob.glob(os.path.join("csrc", "**", "*.cu"), recursive=True))', "custom_cuda_extension",
      R, True, 'npu_sources = sorted(glob.glob(os.path.join("csrc", "npu", "*.cpp")))', EXT_NOTE),
    C("=CUDAExtension(", "custom_cuda_extension", R, True, "NpuExtension(", EXT_NOTE),
    C('include_dirs=[os.path.join(ROOT, "csrc"), os.path.join(ROOT, "third_party", "cutlass", "include")],',
      "custom_cuda_extension", R, False, 'include_dirs=[os.path.join(ROOT, "csrc")],',
      "CUTLASS headers are CUDA-only; harmless once the .cu sources are gone"),
    C('"triton>=3.0",', "triton_kernel_tuning", R, True, '"triton-ascend",',
      "Triton's CUDA backend cannot run on NPU; triton-ascend is the Ascend build (knowledge §6)"),
  ])

E("ci_inductor_perf", ".github/workflows/inductor-perf.yml", EXPL,
  "GitHub Actions nightly torch.compile perf workflow on NVIDIA runners (pytorch/ao / pytorch benchmark style)", [
    C("runs-on: linux.g5.4xlarge.nvidia.gpu", "device_type", R, True, "runs-on: [self-hosted, ascend-910b]",
      "an NVIDIA runner label; the NPU job needs an Ascend runner"),
    C("image: pytorch/manylinux2_28-builder:cuda12.4", "device_type", R, True,
      "image: ascendai/cann:8.5.0-910b-ubuntu22.04-py3.11", "CUDA builder image"),
    C("options: --gpus all --ipc=host --shm-size=16g", "device_type", R, True,
      "options: --device /dev/davinci0 --device /dev/davinci_manager --device /dev/devmm_svm --device /dev/hisi_hdc "
      "-v /usr/local/Ascend/driver:/usr/local/Ascend/driver --ipc=host --shm-size=16g",
      "--gpus needs the NVIDIA container toolkit; NPUs are passed as /dev/davinci* devices plus the driver mount"),
    C("run: nvidia-smi", "device_type", R, True, "run: npu-smi info", "no nvidia-smi on an NPU host; the step fails"),
    C("pip install --pre torch --index-url https://download.pytorch.org/whl/nightly/cu124", "device_type", R, True,
      "pip install torch==2.7.1 --index-url https://download.pytorch.org/whl/cpu && pip install torch-npu==2.7.1.post2",
      "CUDA wheels; an NPU host uses the CPU torch wheel (x86) plus the matching torch_npu (knowledge §1.1)"),
    C("runs-on: linux.aws.a100", "device_type", R, True, "runs-on: [self-hosted, ascend-910b]", "NVIDIA runner label"),
    C('CUDA_VISIBLE_DEVICES: "0"', "env_var", R, True, 'ASCEND_RT_VISIBLE_DEVICES: "0"',
      "the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES"),
    C("pip install --pre torch torchvision --index-url https://download.pytorch.org/whl/nightly/cu124", "device_type", R,
      True, "pip install torch==2.7.1 torchvision --index-url https://download.pytorch.org/whl/cpu && pip install torch-npu==2.7.1.post2",
      "CUDA wheels"),
    C("run: sudo nvidia-smi -lgc 1410,1410 || true", "device_type", X, False, None,
      "clock locking only; `|| true` keeps the step green without nvidia-smi"),
  ])

E("serve_dockerfile", "docker/Dockerfile", EXPL,
  "NGC-based serving Dockerfile (nvcr.io/nvidia/pytorch base, Torch-TensorRT, CUDA env, inductor/triton caches)", [
    C("ARG BASE=nvcr.io/nvidia/pytorch:24.05-py3", "device_type", R, True,
      "ARG BASE=ascendai/pytorch:2.7.1-cann8.5.0-910b-ubuntu22.04-py3.10",
      "NGC CUDA image; an Ascend image needs CANN, torch (CPU wheel) and torch_npu"),
    C('ARG TORCH_CUDA_ARCH_LIST="8.0 8.6 8.9 9.0+PTX"', "env_var", X, False, None, "nvcc arch list; harmless"),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", R, True,
      "ENV ASCEND_TOOLKIT_HOME=/usr/local/Ascend/ascend-toolkit/latest",
      "the CANN toolkit environment (set_env.sh) must be in place for torch_npu to load its libraries"),
    C("ENV LD_LIBRARY_PATH=${CUDA_HOME}/lib64:${LD_LIBRARY_PATH}", "env_var", R, True,
      "ENV LD_LIBRARY_PATH=${ASCEND_TOOLKIT_HOME}/lib64:/usr/local/Ascend/driver/lib64/driver:${LD_LIBRARY_PATH}",
      "libascendcl / driver libraries must be on the loader path (knowledge: libascendcl/libhccl not found errors)"),
    C("RUN pip install --no-cache-dir -r requirements-cuda.txt -r requirements-serve.txt", "device_type", R, True,
      "RUN pip install --no-cache-dir -r requirements-npu.txt -r requirements-serve.txt",
      "installs the CUDA-only requirement set"),
    C("RUN pip install --no-cache-dir torch-tensorrt==2.4.0", "compile_mode", X, True, None, TRT_NOTE),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "read by the NVIDIA container runtime only; the Ascend docker runtime reads ASCEND_VISIBLE_DEVICES (or pass /dev/davinci*)"),
    C("ENV PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", R, False,
      "ENV PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
      "the NPU caching allocator reads PYTORCH_NPU_ALLOC_CONF; ignored otherwise (memory fragmentation only)"),
    C("HEALTHCHECK --interval=30s --timeout=5s CMD nvidia-smi > /dev/null || exit 1", "device_type", R, True,
      "HEALTHCHECK --interval=30s --timeout=5s CMD npu-smi info > /dev/null || exit 1",
      "no nvidia-smi in an Ascend container, so the container is always unhealthy"),
    C('CMD ["--device", "cuda", "--compile-mode", "max-autotune"', "device_type", R, True,
      'CMD ["--device", "npu", "--compile-mode", "default", "--config", "configs/llama3-8b-int4.yaml"]',
      "CUDA device default for the server (max-autotune is a separate performance question)"),
  ])

E("serve_requirements_cuda", "requirements-cuda.txt", EXPL,
  "serving/benchmark requirements pinned to cu124 wheels (torch-tensorrt, onnxruntime-gpu, flash-attn, flashinfer, cupy)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu124", "device_type", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu pairs with the CPU torch wheel on x86 (knowledge §1.1)"),
    C("torch==2.4.1+cu124", "device_type", R, True, "torch==2.4.0",
      "CUDA build of torch; torch_npu exists for 2.4.0 (2.4.0.post4), not 2.4.1"),
    C("torchvision==0.19.1+cu124", "device_type", R, True, "torchvision==0.19.0", "CUDA build of torchvision"),
    C("triton==3.0.0", "triton_kernel_tuning", R, True, "triton-ascend",
      "Triton's CUDA backend cannot target NPU; triton-ascend is the Ascend build"),
    C("torch-tensorrt==2.4.0", "compile_mode", X, True, None, TRT_NOTE),
    C("tensorrt==10.1.0", "compile_mode", X, True, None, "TensorRT is NVIDIA-only"),
    C("onnxruntime-gpu==1.19.2", "device_type", R, False, "onnxruntime-cann",
      "CUDA build of ONNX Runtime; the CANN EP build is the Ascend one (not covered by the knowledge, unconfirmed)"),
    C("flash-attn==2.6.3", "attention_kernel", X, True, None,
      "flash-attn cannot be installed on NPU (knowledge §6); SDPA / npu_fusion_attention instead"),
    C("xformers==0.0.28.post1", "attention_kernel", X, True, None, "xformers has no NPU backend (knowledge §6)"),
    C("flashinfer==0.1.6+cu124torch2.4", "attention_kernel", X, True, None, "CUDA-only attention kernels"),
    C("nvidia-ml-py==12.560.30", "torch_cuda_api", X, False, None,
      "installs, but NVML has no NPU equivalent (npu-smi / torch.npu.utilization); only its callers fail"),
    C("cupy-cuda12x==13.3.0", "custom_cuda_extension", X, True, None, "cupy has no Ascend support (knowledge §6)"),
  ])

E("compile_dev_environment", "environment.yml", EXPL,
  "conda environment.yml for a compile/export toolchain (pytorch-cuda, nvidia channel, cuda-nvcc, torch-tensorrt)", [
    C("=- nvidia", "device_type", X, False, None, "NVIDIA conda channel; harmless once the CUDA packages are gone"),
    C("- pytorch-cuda=12.4", "device_type", R, True, "- cpuonly",
      "pulls the CUDA build of pytorch (and has no linux-aarch64 build); torch_npu pairs with the CPU build"),
    C("- triton=3.1.0", "triton_kernel_tuning", R, True, "# triton-ascend is installed with pip",
      "CUDA Triton; Ascend uses triton-ascend"),
    C("- cuda-nvcc=12.4", "custom_cuda_extension", X, False, None, "nvcc is useless on an NPU host (builds use CANN's toolchain)"),
    C("=- pip:", "import_torch_npu", A, True, "  - torch-npu==2.5.1",
      "torch_npu must be added (pip) in the version matching pytorch=2.5.1 (2.5.1 / 2.5.1.post1)"),
    C("- torch-tensorrt==2.5.0", "compile_mode", X, True, None, TRT_NOTE),
    C("- onnxruntime-gpu==1.20.0", "device_type", R, False, "- onnxruntime-cann",
      "CUDA build of ONNX Runtime (CANN EP build unconfirmed in the knowledge)"),
    C("CUDA_HOME: $CONDA_PREFIX", "env_var", R, False, "ASCEND_TOOLKIT_HOME: /usr/local/Ascend/ascend-toolkit/latest",
      "only used by extension / AOTInductor builds"),
    C('TORCH_CUDA_ARCH_LIST: "8.0;8.9;9.0"', "env_var", X, False, None, "nvcc arch list; harmless"),
  ])

E("compile_bench_sweep_sh", "scripts/run_compile_bench.sh", EXPL,
  "gpt-fast-style benchmark sweep script (CUDA env, nvidia-smi clock locking, nsys, torchrun)", [
    C("set -euo pipefail", "env_var", R, True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -euo pipefail",
      "the CANN environment must be sourced (and before `set -u`: set_env.sh fails under set -u, per the knowledge)"),
    C("export CUDA_VISIBLE_DEVICES=$GPU_IDS", "env_var", R, True, "export ASCEND_RT_VISIBLE_DEVICES=$GPU_IDS",
      "the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES"),
    C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", R, False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True", "ignored by the NPU allocator; fragmentation only"),
    C("export TORCH_NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "HCCL's watchdog switch is HCCL_ASYNC_ERROR_HANDLING (knowledge, ascend-distributed §1)"),
    C("nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv", "device_type", R, True,
      "npu-smi info", "command not found under `set -e` aborts the whole sweep"),
    C("nvcc --version | tail -n1", "custom_cuda_extension", X, True, None,
      "no nvcc on an NPU host; with pipefail + set -e the script aborts"),
    C("sudo nvidia-smi -pm 1 >/dev/null 2>&1 && sudo nvidia-smi -lgc 1980", "device_type", X, False, None,
      "clock locking guarded by || true; cosmetic"),
    C("sudo nvidia-smi -rgc >/dev/null 2>&1 || true", "device_type", X, False, None, "guarded by || true; cosmetic"),
  ])

FP8_NOTE = ("float8 training needs SM89+ tensor cores (torch._scaled_mm has no NPU kernel in the op lists); "
            "NPU fp8 support is only documented for MindSpeed TE on specific products (unconfirmed here)")

E("torchtitan_llama3_toml", "train_configs/llama3_8b.toml", EXPL,
  "pytorch/torchtitan train_configs/llama3_8b.toml (fused_rmsnorm, float8 converters, async TP, compile)", [
    C('norm_type = "fused_rmsnorm"', "unsupported_op_workaround", R, True, 'norm_type = "rmsnorm"',
      "fused_rmsnorm is a CUDA Triton kernel; plain rmsnorm (or torch_npu.npu_rms_norm) on NPU"),
    C('converters = "float8"', "unsupported_op_workaround", R, False, 'converters = ""', FP8_NOTE),
    C("enable_async_tensor_parallel = true", "distributed_framework", R, False, "enable_async_tensor_parallel = false",
      SYMM_NOTE),
    C("enable_fsdp_float8_all_gather = true", "unsupported_op_workaround", R, False,
      "enable_fsdp_float8_all_gather = false", FP8_NOTE),
    C("trace_buf_size = 20000", "env_var", R, False, "trace_buf_size = 0",
      "feeds TORCH_NCCL_TRACE_BUFFER_SIZE (NCCL flight recorder); no effect with HCCL"),
  ])

E("qserve_pyproject", "pyproject.toml", EXPL,
  "pyproject.toml of a compile-centric serving package (torch build pin, cuda/trt/onnx extras, pytest env, cibuildwheel CUDA image)", [
    C('"torch==2.4.1",', "device_type", R, True, '"torch==2.4.0", "torch-npu==2.4.0.post4",',
      "the build resolves PyPI's CUDA torch wheel; torch_npu exists for 2.4.0, not 2.4.1 (knowledge §1.2)"),
    C('cuda = ["triton>=3.0", "flashinfer>=0.1.6", "nvidia-ml-py>=12"]', "import_torch_npu", A, False,
      'npu = ["torch-npu==2.4.0.post4", "triton-ascend"]', "an install extra for Ascend hosts next to the CUDA one"),
    C('onnx = ["onnx>=1.16", "onnxruntime-gpu>=1.19"]', "device_type", R, False,
      'onnx = ["onnx>=1.16", "onnxruntime-cann"]', "CUDA build of ONNX Runtime (CANN EP unconfirmed in the knowledge)"),
    C('"CUDA_LAUNCH_BLOCKING=0",', "env_var", R, False, '"ASCEND_LAUNCH_BLOCKING=0",',
      "CUDA-only debugging knob; the NPU counterpart is ASCEND_LAUNCH_BLOCKING"),
    C('manylinux-x86_64-image = "pytorch/manylinux-builder:cuda12.4"', "device_type", R, True,
      'manylinux-x86_64-image = "ascendai/cann:8.5.0-910b-manylinux_2_28"',
      "the wheel build needs the CANN toolkit, not a CUDA builder image"),
    C('environment = { TORCH_CUDA_ARCH_LIST = "8.0;8.6;8.9;9.0a", CUDA_HOME = "/usr/local/cuda", MAX_JOBS = "8" }',
      "env_var", R, True,
      'environment = { ASCEND_TOOLKIT_HOME = "/usr/local/Ascend/ascend-toolkit/latest", MAX_JOBS = "8" }',
      "CUDA toolkit paths for the extension build"),
    C('before-all = "nvcc --version"', "custom_cuda_extension", R, True, 'before-all = "npu-smi info || true"',
      "no nvcc in an Ascend build image; the wheel build aborts"),
    C('before-build = "pip install torch==2.4.1 --index-url https://download.pytorch.org/whl/cu124"', "device_type", R,
      True,
      'before-build = "pip install torch==2.4.0 --index-url https://download.pytorch.org/whl/cpu && pip install torch-npu==2.4.0.post4"',
      "CUDA torch wheel in the build environment"),
  ])
