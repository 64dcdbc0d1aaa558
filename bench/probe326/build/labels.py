# Labels for probe326 (industrial anomaly detection / visual inspection, CUDA -> Ascend NPU).
# Format: see bench/probe_build.py. One label per upstream line; "=text" matches a whole stripped line.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# Shared note fragments -------------------------------------------------------------------------
IMPORT_OLD = ("entry script of a project pinned to torch < 2.5; without torch_npu loaded nothing registers the "
              "'npu' device (autoload only exists from torch_npu 2.5.1, knowledge §1.1)")
SEED_NOTE = ("torch.cuda seeding is queued lazily and never runs without CUDA (silent no-op); torch.manual_seed "
             "already seeds the NPU generator through the custom-device hook on torch>=2.1 - unconfirmed in knowledge")
EMPTY_CACHE = ("torch.cuda.empty_cache() returns early when CUDA was never initialised, so it is a silent no-op; "
               "porting only restores the memory release on the NPU caching allocator (memory headroom, not correctness)")
CUDNN_DET = ("torch.backends.cudnn.deterministic is accepted on NPU (TSV ✔) but does not make NPU kernels deterministic; "
             "torch.use_deterministic_algorithms is the NPU-effective switch - reproducibility only")
PIN = ("DataLoader only pins when CUDA is available (or pin_memory_device is set), so pinning silently turns off on an "
       "NPU host; perf only. pin_memory_device='npu' support unconfirmed in knowledge")
AMP_OFF = ("torch.cuda.amp / autocast('cuda') on a host without CUDA warns and disables itself, so training silently "
           "runs in fp32: slower and heavier, numerically fine -> not required; torch.npu.amp is the NPU form (TSV ✔)")
SET_ENV = ("CANN's set_env.sh must be sourced or torch_npu fails to import (libhccl.so / libascendcl.so not found, "
           "knowledge §4.1)")


# ------------------------------------------------------------------ PatchCore (amazon-science/patchcore-inspection style)
E("pc-common", "src/patchcore/common.py", "explicit_replacement",
  "patchcore-inspection src/patchcore/common.py (FaissNN with GPU cloning, feature aggregator, NN scorer)", [
    C("return faiss.GpuClonerOptions()", "unsupported_op_workaround", "replace", True,
      "return None  # no faiss GPU build on Ascend hosts",
      "faiss GPU classes exist only in CUDA builds of faiss (faiss-cpu has no GpuClonerOptions); not in knowledge but "
      "faiss-gpu is CUDA-only like cupy (§6)"),
    C("faiss.index_cpu_to_gpu(faiss.StandardGpuResources()", "unsupported_op_workaround", "replace", True,
      "return index  # keep the flat index on CPU (or replace with torch.cdist/topk on NPU)",
      "StandardGpuResources needs a CUDA device; on an NPU host the call raises (AttributeError with faiss-cpu)"),
    C("return faiss.index_gpu_to_cpu(index)", "unsupported_op_workaround", "replace", True,
      "return index",
      "GPU->CPU index transfer is CUDA-faiss only; the index never leaves the CPU after the port"),
    C("faiss.GpuIndexFlatL2(faiss.StandardGpuResources()", "unsupported_op_workaround", "replace", True,
      "return faiss.IndexFlatL2(dimension)",
      "GpuIndexFlatL2 requires CUDA faiss; CPU flat L2 index (or an NPU torch.cdist+topk search) instead"),
    C("cloner = faiss.GpuClonerOptions()", "unsupported_op_workaround", "replace", True,
      "return None  # IVFPQ stays on CPU on Ascend hosts",
      "ApproximateFaissNN override of the GPU cloner; same CUDA-only faiss API"),
]),

E("pc-sampler", "src/patchcore/sampler.py", "device_branch_or_abstraction",
  "patchcore-inspection src/patchcore/sampler.py (greedy / approximate greedy coreset on the selected device)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "guard is False on NPU so the cache release below is skipped; nothing fails (memory headroom only)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", EMPTY_CACHE),
]),

E("pc-utils", "src/patchcore/utils.py", "device_branch_or_abstraction",
  "patchcore-inspection src/patchcore/utils.py (set_torch_device, fix_seeds, result CSV)", [
    C('return torch.device("cuda:{}".format(gpu_ids[0]))', "device_type", "replace", True,
      'return torch.device("npu:{}".format(gpu_ids[0]))',
      "every model/tensor placement downstream uses this device; cuda:N cannot be used on an NPU host"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)", SEED_NOTE),
    C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
      "torch.use_deterministic_algorithms(True)", CUDNN_DET),
    C('if device.type == "cuda":', "device_type", "replace", False,
      'if device.type == "npu":',
      "logging helper; on NPU the else branch logs the device string, nothing breaks"),
    C("props = torch.cuda.get_device_properties(device.index or 0)", "torch_cuda_api", "replace", False,
      "props = torch.npu.get_device_properties(device.index or 0)",
      "dead on NPU until the branch above is ported (TSV: NPU form torch_npu.npu.get_device_properties)"),
    C('LOGGER.info("Running on GPU %s (%.1f GiB, sm_%d%d).", props.name', "device_capability_check", "replace", False,
      'LOGGER.info("Running on NPU %s (%.1f GiB).", props.name, props.total_memory / 1024 ** 3)',
      "NPU device properties carry no major/minor (knowledge §2.8), so once the branch is ported the sm_ string must go"),
]),

E("pc-run", "bin/run_patchcore.py", "device_branch_or_abstraction",
  "patchcore-inspection bin/run_patchcore.py (click CLI, device context, ensemble training loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_OLD),
    C('torch.cuda.device("cuda:{}".format(device.index))', "torch_cuda_api", "replace", False,
      'torch.npu.device("npu:{}".format(device.index))',
      "only evaluated when the device type is cuda; after set_torch_device is ported the branch is skipped, "
      "so the port just restores the per-device context"),
    C('if "cuda" in device.type.lower()', "device_type", "replace", False,
      'if "npu" in device.type.lower()',
      "False on NPU -> contextlib.suppress(); runs, but without the current-device context for --gpu N > 0"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
    C("torch.cuda.empty_cache()  # drop the previous member's memory bank", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # drop the previous member's memory bank", EMPTY_CACHE),
    C("torch.cuda.empty_cache()  # before inference on the test split", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # before inference on the test split", EMPTY_CACHE),
    C("train_dataloader = torch.utils.data.DataLoader(train_dataset, batch_size=batch_size, shuffle=False",
      "pin_memory", "replace", False,
      "train_dataloader = torch.utils.data.DataLoader(train_dataset, batch_size=batch_size, shuffle=False, "
      "num_workers=num_workers, pin_memory=True, pin_memory_device='npu')", PIN),
    C("test_dataloader = torch.utils.data.DataLoader(test_dataset, batch_size=batch_size, shuffle=False",
      "pin_memory", "replace", False,
      "test_dataloader = torch.utils.data.DataLoader(test_dataset, batch_size=batch_size, shuffle=False, "
      "num_workers=num_workers, pin_memory=True, pin_memory_device='npu')", PIN),
]),

E("pc-eval", "bin/load_and_evaluate_patchcore.py", "device_branch_or_abstraction",
  "patchcore-inspection bin/load_and_evaluate_patchcore.py (reload stored PatchCores + FAISS index)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_OLD),
    C('torch.cuda.device("cuda:{}".format(device.index))', "torch_cuda_api", "replace", False,
      'torch.npu.device("npu:{}".format(device.index))',
      "skipped once the device is npu (see condition below); port restores the device context"),
    C('if "cuda" in device.type.lower()', "device_type", "replace", False,
      'if "npu" in device.type.lower()',
      "False on NPU -> contextlib.suppress(); nothing fails"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
    C("torch.cuda.empty_cache()  # per ensemble member", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # per ensemble member", EMPTY_CACHE),
    C("test_dataloader = torch.utils.data.DataLoader(test_dataset", "pin_memory", "replace", False,
      "test_dataloader = torch.utils.data.DataLoader(test_dataset, batch_size=batch_size, shuffle=False, "
      "num_workers=num_workers, pin_memory=True, pin_memory_device='npu')", PIN),
]),

E("pc-sh", "sample_training.sh", "explicit_replacement",
  "patchcore-inspection sample_training.sh (paper reproduction runs with --faiss_on_gpu)", [
    C("=set -e", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV),
    C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU}",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so GPU=2 would silently run on NPU 0 (--gpu 0 is "
      "relative to the visible set)"),
    C("--target_embed_dimension 1024 --anomaly_scorer_num_nn 1 --patchsize 3 \\", "unsupported_op_workaround",
      "replace", True,
      "patch_core -b wideresnet50 -le layer2 -le layer3 --pretrain_embed_dimension 1024 --target_embed_dimension 1024 "
      "--anomaly_scorer_num_nn 1 --patchsize 3 \\",
      "--faiss_on_gpu makes FaissNN call StandardGpuResources, which does not exist without CUDA faiss"),
    C("-le 2.features.denseblock3 --faiss_on_gpu", "unsupported_op_workaround", "replace", True,
      "patch_core -b wideresnet101 -b resnext101 -b densenet201 -le 0.layer2 -le 0.layer3 -le 1.layer2 -le 1.layer3 "
      "-le 2.features.denseblock2 -le 2.features.denseblock3 --pretrain_embed_dimension 1024 "
      "--target_embed_dimension 384 --anomaly_scorer_num_nn 1 --patchsize 3 \\",
      "ensemble run: same CUDA-only faiss path"),
    C("--patchscore max \\", "unsupported_op_workaround", "replace", True,
      "patch_core -b wideresnet50 -le layer2 -le layer3 --pretrain_embed_dimension 1024 --target_embed_dimension 1024 "
      "--anomaly_scorer_num_nn 1 --patchsize 3 --patchscore max \\",
      "IM320 run: same CUDA-only faiss path"),
    C('patch_core_loader "${model_flags[@]}" --faiss_on_gpu \\', "unsupported_op_workaround", "replace", True,
      'patch_core_loader "${model_flags[@]}" \\',
      "reloading the stored index with --faiss_on_gpu goes through index_cpu_to_gpu"),
]),

# ------------------------------------------------------------------ PaDiM (xiahaifeng1995/PaDiM-Anomaly-Detection-Localization style)
E("padim-main", "main.py", "device_branch_or_abstraction",
  "PaDiM-Anomaly-Detection-Localization-master main.py (+ a fork's batched GPU Mahalanobis)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_OLD),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = torch.npu.is_available()  # name kept, now means 'accelerator available'",
      "False on an NPU host, so the whole feature extraction silently runs on the CPU"),
    C("device = torch.device('cuda' if use_cuda else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if use_cuda else 'cpu')", "device string selects CUDA"),
    C("torch.cuda.manual_seed_all(1024)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(1024)", SEED_NOTE),
    C("train_dataloader = DataLoader(train_dataset, batch_size=32, pin_memory=True)", "pin_memory", "replace", False,
      "train_dataloader = DataLoader(train_dataset, batch_size=32, pin_memory=True, pin_memory_device='npu')", PIN),
    C("test_dataloader = DataLoader(test_dataset, batch_size=32, pin_memory=True)", "pin_memory", "replace", False,
      "test_dataloader = DataLoader(test_dataset, batch_size=32, pin_memory=True, pin_memory_device='npu')", PIN),
    C("mean_t = torch.from_numpy(mean).float().cuda()", "tensor_to_device", "replace", True,
      "mean_t = torch.from_numpy(mean).float().npu()", ".cuda() raises without CUDA"),
    C("cov_t = torch.from_numpy(cov).float().permute(2, 0, 1).contiguous().cuda()", "tensor_to_device", "replace", True,
      "cov_t = torch.from_numpy(cov).float().permute(2, 0, 1).contiguous().npu()", ".cuda() raises without CUDA"),
    C("cov_inv = torch.linalg.inv(cov_t)", "unsupported_op_workaround", "replace", False,
      "cov_inv = torch.inverse(cov_t)",
      "linalg_inv_ex has no NPU kernel in the op lists (2.1/2.7/2.9) -> CPU fallback with host round trip of a "
      "HWxCxC tensor; aten inverse has a native NPU kernel. Perf only"),
    C("emb = embedding_vectors.float().cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "emb = embedding_vectors.float().npu(non_blocking=True)", ".cuda() raises without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "torch.cuda.synchronize initialises CUDA and raises on an NPU host"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
]),

E("padim-env", "environment.yml", "explicit_replacement",
  "conda environment.yml shipped with PaDiM/PatchCore reimplementations (pytorch + cudatoolkit + faiss-gpu)", [
    C("=- nvidia", "device_type", "removal", False, None,
      "channel only serves CUDA packages; harmless on an NPU host"),
    C("=- pytorch=1.12.1", "device_type", "replace", True,
      "- pytorch=2.1.0  # CPU build; torch-npu 2.1.0.postN pairs with torch 2.1.0",
      "there is no torch_npu release for torch 1.12 (knowledge §1.2/1.3: 1.11.0, 2.0.1, 2.1.0 ...); the "
      "torch pin must move to a version torch-npu supports"),
    C("=- torchvision=0.13.1", "device_type", "replace", True,
      "- torchvision=0.16.0",
      "must follow the torch bump (0.16.0 pairs with torch 2.1, knowledge §6 torchvision_npu table)"),
    C("=- cudatoolkit=11.3", "device_type", "removal", False, None,
      "CUDA runtime libraries are dead weight on an NPU host; nothing breaks if left"),
    C("=- faiss-gpu=1.7.2", "unsupported_op_workaround", "replace", True,
      "- faiss-cpu=1.7.2",
      "faiss-gpu is a CUDA-only build (no aarch64/Ascend package); the PatchCore search has to use faiss-cpu"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True,
      "- torch-npu==2.1.0.post12",
      "the Ascend adapter is a pip wheel; version must equal the torch version (knowledge §1.1)"),
]),

# ------------------------------------------------------------------ anomalib (openvinotoolkit/anomalib style)
E("ab-cfg-patchcore", "src/anomalib/models/patchcore/config.yaml", "explicit_replacement",
  "anomalib 0.x src/anomalib/models/patchcore/config.yaml (PL Trainer args)", [
    C('accelerator: gpu # <"cpu", "gpu", "tpu", "ipu", "hpu", "auto">', "device_type", "replace", True,
      'accelerator: npu # needs an NPU Accelerator registered with Lightning',
      "Lightning's 'gpu' accelerator means CUDA/MPS and refuses to start on an NPU host; Lightning has no built-in "
      "Ascend accelerator (not covered by knowledge)"),
]),

E("ab-benchmark", "tools/benchmarking/benchmark.py", "device_branch_or_abstraction",
  "anomalib 0.x tools/benchmarking/benchmark.py (sweep distributed over all GPUs via ProcessPoolExecutor)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_OLD),
    C("max_workers=torch.cuda.device_count(), mp_context=", "torch_cuda_api", "replace", True,
      'max_workers=torch.npu.device_count(), mp_context=multiprocessing.get_context("spawn")',
      "device_count() is 0 without CUDA -> ProcessPoolExecutor(max_workers=0) raises ValueError"),
    C("range(0, len(run_configs), math.ceil(len(run_configs) / torch.cuda.device_count()))", "torch_cuda_api",
      "replace", True,
      "range(0, len(run_configs), math.ceil(len(run_configs) / torch.npu.device_count()))",
      "division by a zero device count"),
    C("run_configs[run_split : run_split + math.ceil(len(run_configs) / torch.cuda.device_count())],",
      "torch_cuda_api", "replace", True,
      "run_configs[run_split : run_split + math.ceil(len(run_configs) / torch.npu.device_count())],",
      "division by a zero device count"),
    C('if not torch.cuda.is_available() and "gpu" in devices:', "torch_cuda_api", "replace", True,
      'if not torch.npu.is_available() and "gpu" in devices:',
      "on NPU this branch fires, logs a warning and silently skips every accelerator benchmark"),
    C('model_config.trainer.accelerator = "gpu"', "device_type", "replace", True,
      'model_config.trainer.accelerator = "npu"',
      "Lightning 'gpu' accelerator cannot start without CUDA (needs a registered NPU accelerator)"),
]),

E("ab-torch-inferencer", "src/anomalib/deploy/inferencers/torch_inferencer.py", "device_branch_or_abstraction",
  "anomalib deploy/inferencers/torch_inferencer.py (_get_device auto/cpu/cuda/gpu) + a latency helper", [
    C('if device not in ("auto", "cpu", "cuda", "gpu"):', "device_type", "replace", True,
      'if device not in ("auto", "cpu", "cuda", "gpu", "npu"):',
      "an explicit device='npu' is rejected with ValueError"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "'auto' silently falls back to CPU on an NPU host"),
    C('=device = "cuda"', "device_type", "replace", True,
      'device = "npu"', "'gpu' (what the benchmark passes) maps to a CUDA device"),
    C('if inferencer.device.type == "cuda":', "device_type", "replace", True,
      'if inferencer.device.type == "npu":',
      "NPU execution is asynchronous too; the unsynchronised perf_counter fallback measures only launch time, so "
      "the reported latency is wrong"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "raises once the branch is taken on NPU"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA (TSV: torch_npu.npu.Event)"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "same as start event"),
    C("torch.cuda.synchronize()  # wait for the timed kernels", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the timed kernels before reading the events", "same as above"),
]),

E("ab-export", "src/anomalib/deploy/export.py", "device_branch_or_abstraction",
  "anomalib deploy/export.py (torch / ONNX / OpenVINO export) with a fork's fp16 ONNX option", [
    C("model.model.half().cuda()", "tensor_to_device", "replace", True,
      "model.model.half().npu()", "fp16 tracing moves the model to CUDA; raises on an NPU host"),
    C("dummy_input = dummy_input.half().cuda()", "tensor_to_device", "replace", True,
      "dummy_input = dummy_input.half().npu()", ".cuda() raises without CUDA"),
]),

E("ab-engine-train", "tools/train_engine.py", "device_branch_or_abstraction",
  "anomalib 1.x Engine-based training/export script (Lightning accelerator/devices/DDPStrategy)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "anomalib 1.x does not pin torch; with torch_npu >= 2.5.1 the backend autoloads (knowledge §1.1), so only "
      "needed on older pairs"),
    C('strategy = DDPStrategy(find_unused_parameters=True, process_group_backend="nccl")', "dist_backend", "replace",
      True,
      'strategy = DDPStrategy(find_unused_parameters=True, process_group_backend="hccl")',
      "NCCL is unavailable on Ascend; HCCL is the collective backend"),
    C('accelerator="gpu",', "device_type", "replace", True,
      'accelerator="npu",  # custom Lightning NPU accelerator',
      "Lightning 'gpu' accelerator requires CUDA/MPS; not covered by knowledge"),
    C('"peak_mem_gb": round(torch.cuda.max_memory_reserved() / 2**30, 2),', "torch_cuda_api", "replace", False,
      '"peak_mem_gb": round(torch.npu.max_memory_reserved() / 2**30, 2),',
      "memory stats return an empty dict when CUDA is uninitialised, so this logs 0; summary only"),
]),

# ------------------------------------------------------------------ TensorRT deployment path
E("trt-infer", "tools/inference/trt_inference.py", "explicit_replacement",
  "TensorRT + PyCUDA inferencer for exported anomaly models (common community deploy script)", [
    C("import pycuda.autoinit", "unsupported_op_workaround", "removal", True, None,
      "PyCUDA creates a CUDA context at import and fails without an NVIDIA driver"),
    C("import pycuda.driver as cuda", "unsupported_op_workaround", "removal", True, None,
      "PyCUDA is CUDA-only; buffers are handled by the Ascend runtime after the port"),
    C("=import tensorrt as trt", "unsupported_op_workaround", "replace", True,
      "from ais_bench.infer.interface import InferSession",
      "TensorRT has no Ascend build; the ONNX graph is compiled to .om with atc and run through an ACL-based "
      "session (ais_bench API from memory, unconfirmed in knowledge)"),
    C("TRT_LOGGER = trt.Logger(trt.Logger.WARNING)", "unsupported_op_workaround", "removal", True, None,
      "TensorRT object"),
    C("runtime = trt.Runtime(TRT_LOGGER)", "unsupported_op_workaround", "removal", True, None,
      "TensorRT runtime"),
    C("self.engine = runtime.deserialize_cuda_engine(f.read())", "unsupported_op_workaround", "replace", True,
      "self.session = InferSession(device_id=0, model_path=str(engine_path))",
      "serialized CUDA engine -> .om model session"),
    C("self.context = self.engine.create_execution_context()", "unsupported_op_workaround", "removal", True, None,
      "TensorRT execution context; `trt`/engine objects no longer exist after the port"),
    C("self.input_shape = tuple(self.engine.get_binding_shape(0))", "unsupported_op_workaround", "replace", True,
      "self.input_shape = tuple(self.session.get_inputs()[0].shape)", "TensorRT binding query -> OM session input desc"),
    C("stream = cuda.Stream()", "unsupported_op_workaround", "removal", True, None, "CUDA stream via PyCUDA"),
    C("=for binding in self.engine:", "unsupported_op_workaround", "removal", True, None,
      "iterates TensorRT bindings; the whole buffer-allocation helper goes away"),
    C("size = trt.volume(self.engine.get_binding_shape(binding))", "unsupported_op_workaround", "removal", True, None,
      "TensorRT API (trt no longer imported)"),
    C("dtype = trt.nptype(self.engine.get_binding_dtype(binding))", "unsupported_op_workaround", "removal", True, None,
      "TensorRT API (trt no longer imported)"),
    C("host_mem = cuda.pagelocked_empty(size, dtype)", "unsupported_op_workaround", "removal", True, None,
      "CUDA page-locked host buffer"),
    C("device_mem = cuda.mem_alloc(host_mem.nbytes)", "unsupported_op_workaround", "removal", True, None,
      "CUDA device allocation"),
    C("if self.engine.binding_is_input(binding):", "unsupported_op_workaround", "removal", True, None,
      "TensorRT binding query"),
    C("cuda.memcpy_htod_async(inp.device, inp.host, self.stream)", "unsupported_op_workaround", "removal", True, None,
      "CUDA H2D copy; the ACL session copies inputs itself"),
    C("self.context.execute_async_v2(bindings=self.bindings, stream_handle=self.stream.handle)",
      "unsupported_op_workaround", "replace", True,
      "outputs = self.session.infer([image])", "TensorRT execution -> OM inference"),
    C("cuda.memcpy_dtoh_async(out.host, out.device, self.stream)", "unsupported_op_workaround", "removal", True, None,
      "CUDA D2H copy"),
    C("self.stream.synchronize()", "unsupported_op_workaround", "removal", True, None, "PyCUDA stream sync"),
]),

E("trt-export-sh", "tools/export_trt.sh", "explicit_replacement",
  "shell script exporting anomalib ONNX and building TensorRT engines with trtexec", [
    C("=set -euo pipefail", "env_var", "replace", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh && set -euo pipefail",
      SET_ENV + "; it has to come before set -u because set_env.sh trips over unbound variables (knowledge §4.2)"),
    C("export CUDA_VISIBLE_DEVICES=${GPU_ID}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU_ID}",
      "ignored by the Ascend runtime; the export would silently run on NPU 0"),
    C("trtexec --onnx=${ONNX} --saveEngine=${ENGINE} ${TRT_FLAGS}", "unsupported_op_workaround", "replace", True,
      'atc --model=${ONNX} --framework=5 --output=${ENGINE%.engine} --soc_version=Ascend910B3 '
      '--input_shape="input:1,3,${IMAGE_SIZE},${IMAGE_SIZE}" | tee ${WEIGHTS}/onnx/atc_${PRECISION}.log',
      "TensorRT's trtexec does not exist on Ascend; atc converts ONNX (framework=5) to an .om model "
      "(knowledge product-anchors R40)"),
    C("nvidia-smi --query-gpu=name,driver_version,memory.total", "device_capability_check", "replace", True,
      "npu-smi info | tee ${WEIGHTS}/onnx/npu_${PRECISION}.txt",
      "nvidia-smi is absent on an NPU host; under set -euo pipefail the missing command aborts the script"),
]),

# ------------------------------------------------------------------ EfficientAD (nelson1425/EfficientAD style)
E("ead-train", "efficientad.py", "device_branch_or_abstraction",
  "EfficientAD unofficial reimplementation efficientad.py (on_gpu flag, per-line .cuda())", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_OLD),
    C("on_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "on_gpu = torch.npu.is_available()  # name kept",
      "False on an NPU host: the 70k-step training silently runs on the CPU"),
    C("=num_workers=4, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=4, pin_memory=True, pin_memory_device='npu')", PIN),
    C("penalty_loader = DataLoader(penalty_set, batch_size=1, shuffle=True, num_workers=4, pin_memory=True)",
      "pin_memory", "replace", False,
      "penalty_loader = DataLoader(penalty_set, batch_size=1, shuffle=True, num_workers=4, pin_memory=True, "
      "pin_memory_device='npu')", PIN),
    C("=teacher.cuda()", "tensor_to_device", "replace", True, "teacher.npu()", ".cuda() raises without CUDA"),
    C("=student.cuda()", "tensor_to_device", "replace", True, "student.npu()", ".cuda() raises without CUDA"),
    C("=autoencoder.cuda()", "tensor_to_device", "replace", True, "autoencoder.npu()", ".cuda() raises without CUDA"),
    C("image_st = image_st.cuda()", "tensor_to_device", "replace", True, "image_st = image_st.npu()",
      ".cuda() raises without CUDA"),
    C("image_ae = image_ae.cuda()", "tensor_to_device", "replace", True, "image_ae = image_ae.npu()",
      ".cuda() raises without CUDA"),
    C("image_penalty = image_penalty.cuda()", "tensor_to_device", "replace", True,
      "image_penalty = image_penalty.npu()", ".cuda() raises without CUDA"),
    C("=image = image.cuda()", "tensor_to_device", "replace", True, "image = image.npu()",
      ".cuda() raises without CUDA (test loop)"),
    C("=image = image.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "image = image.npu(non_blocking=True)", ".cuda() raises without CUDA (map normalisation)"),
    C("=train_image = train_image.cuda()", "tensor_to_device", "replace", True,
      "train_image = train_image.npu()", ".cuda() raises without CUDA (teacher mean pass)"),
    C("=train_image = train_image.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "train_image = train_image.npu(non_blocking=True)", ".cuda() raises without CUDA (teacher std pass)"),
]),

E("ead-common", "common.py", "device_branch_or_abstraction",
  "EfficientAD reimplementation common.py (PDN / autoencoder definitions, dataset helpers) - no device code", []),

# ------------------------------------------------------------------ DRAEM (VitjanZ/DRAEM style)
E("draem-train", "train_DRAEM.py", "device_branch_or_abstraction",
  "DRAEM train_DRAEM.py (per-object training, torch.cuda.device context) with a fork's --amp option", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_OLD),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", ".cuda() raises without CUDA"),
    C("=model_seg.cuda()", "tensor_to_device", "replace", True, "model_seg.npu()", ".cuda() raises without CUDA"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)", AMP_OFF),
    C('gray_batch = sample_batched["image"].cuda()', "tensor_to_device", "replace", True,
      'gray_batch = sample_batched["image"].npu()', ".cuda() raises without CUDA"),
    C('aug_gray_batch = sample_batched["augmented_image"].cuda()', "tensor_to_device", "replace", True,
      'aug_gray_batch = sample_batched["augmented_image"].npu()', ".cuda() raises without CUDA"),
    C('anomaly_mask = sample_batched["anomaly_mask"].cuda()', "tensor_to_device", "replace", True,
      'anomaly_mask = sample_batched["anomaly_mask"].npu()', ".cuda() raises without CUDA"),
    C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=args.amp):", AMP_OFF),
    C("torch.cuda.max_memory_allocated() / 1024 ** 3))", "torch_cuda_api", "replace", False,
      "time.time() - epoch_start, get_lr(optimizer), torch.npu.max_memory_allocated() / 1024 ** 3))",
      "memory stats are empty without CUDA, so the log prints 0 GB; logging only"),
    C("with torch.cuda.device(args.gpu_id):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(args.gpu_id):",
      "entering torch.cuda.device initialises CUDA and raises on an NPU host"),
]),

E("draem-test", "test_DRAEM.py", "device_branch_or_abstraction",
  "DRAEM test_DRAEM.py (checkpoint reload with map_location='cuda:0', display buffers on GPU)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_OLD),
    C('run_name + ".pckl"), map_location=\'cuda:0\'))', "device_type", "replace", True,
      "model.load_state_dict(torch.load(os.path.join(checkpoint_path, run_name + \".pckl\"), map_location='npu:0'))",
      "map_location='cuda:0' cannot be honoured without CUDA"),
    C('run_name + "_seg.pckl"), map_location=\'cuda:0\'))', "device_type", "replace", True,
      "model_seg.load_state_dict(torch.load(os.path.join(checkpoint_path, run_name + \"_seg.pckl\"), "
      "map_location='npu:0'))",
      "map_location='cuda:0' cannot be honoured without CUDA"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", ".cuda() raises without CUDA"),
    C("=model_seg.cuda()", "tensor_to_device", "replace", True, "model_seg.npu()", ".cuda() raises without CUDA"),
    C("display_images = torch.zeros((16, 3, 256, 256)).cuda()", "tensor_to_device", "replace", True,
      "display_images = torch.zeros((16, 3, 256, 256)).npu()", ".cuda() raises without CUDA"),
    C("display_gt_images = torch.zeros((16, 3, 256, 256)).cuda()", "tensor_to_device", "replace", True,
      "display_gt_images = torch.zeros((16, 3, 256, 256)).npu()", ".cuda() raises without CUDA"),
    C("display_out_masks = torch.zeros((16, 1, 256, 256)).cuda()", "tensor_to_device", "replace", True,
      "display_out_masks = torch.zeros((16, 1, 256, 256)).npu()", ".cuda() raises without CUDA"),
    C("display_in_masks = torch.zeros((16, 1, 256, 256)).cuda()", "tensor_to_device", "replace", True,
      "display_in_masks = torch.zeros((16, 1, 256, 256)).npu()", ".cuda() raises without CUDA"),
    C('gray_batch = sample_batched["image"].cuda()', "tensor_to_device", "replace", True,
      'gray_batch = sample_batched["image"].npu()', ".cuda() raises without CUDA"),
    C("with torch.cuda.device(args.gpu_id):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(args.gpu_id):", "entering torch.cuda.device raises on an NPU host"),
]),

E("draem-loss", "loss.py", "device_branch_or_abstraction",
  "DRAEM loss.py (FocalLoss + pytorch-ssim style SSIM with is_cuda window relocation)", [
    C("self.window = create_window(window_size).cuda()", "tensor_to_device", "replace", True,
      "self.window = create_window(window_size).npu()",
      "runs in SSIM() construction, i.e. at trainer start-up; .cuda() raises without CUDA"),
    C("if img1.is_cuda:", "device_type", "replace", False,
      "if img1.is_npu:",
      "False on NPU, but the following window.type_as(img1) (= self.to(other.options())) already moves the window "
      "to the NPU, so nothing breaks; ported for clarity"),
    C("window = window.cuda(img1.get_device())", "tensor_to_device", "replace", False,
      "window = window.npu(img1.get_device())", "dead branch on NPU (see is_cuda)"),
]),

# ------------------------------------------------------------------ SimpleNet (DonaldRR/SimpleNet style)
E("sn-main", "main.py", "device_branch_or_abstraction",
  "SimpleNet main.py (PatchCore-derived click CLI)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_OLD),
    C("train_dataloader = torch.utils.data.DataLoader(train_dataset, batch_size=batch_size, shuffle=True",
      "pin_memory", "replace", False,
      "train_dataloader = torch.utils.data.DataLoader(train_dataset, batch_size=batch_size, shuffle=True, "
      "num_workers=num_workers, prefetch_factor=2, pin_memory=True, pin_memory_device='npu')", PIN),
    C("test_dataloader = torch.utils.data.DataLoader(test_dataset, batch_size=batch_size, shuffle=False",
      "pin_memory", "replace", False,
      "test_dataloader = torch.utils.data.DataLoader(test_dataset, batch_size=batch_size, shuffle=False, "
      "num_workers=num_workers, prefetch_factor=2, pin_memory=True, pin_memory_device='npu')", PIN),
    C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',", PIN),
]),

E("sn-model", "simplenet.py", "device_branch_or_abstraction",
  "SimpleNet simplenet.py (discriminator training, device passed in from utils.set_torch_device)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "False on NPU so the sync is skipped; only the logged ms/img under-reports because NPU work is async"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", False,
      "torch.npu.synchronize()", "dead on NPU until the guard is ported; logged timing only"),
]),

E("sn-run-sh", "run.sh", "explicit_replacement",
  "SimpleNet run.sh (single-GPU MVTec run)", [
    C("=export OMP_NUM_THREADS=4", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV),
    C("=export CUDA_LAUNCH_BLOCKING=0", "env_var", "replace", False,
      "export ASCEND_LAUNCH_BLOCKING=0",
      "0 is the default anyway; on NPU the CUDA variable is simply ignored"),
]),

# ------------------------------------------------------------------ UniAD (zhiyuxie/UniAD style)
E("uniad-dist", "utils/dist_helper.py", "device_branch_or_abstraction",
  "UniAD utils/dist_helper.py (SLURM/torch.distributed setup, NCCL default)", [
    C('def setup_distributed(backend="nccl", port=None):', "dist_backend", "replace", True,
      'def setup_distributed(backend="hccl", port=None):',
      "NCCL is not available on Ascend; collectives go through HCCL"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()",
      "0 without CUDA -> rank % num_gpus raises ZeroDivisionError"),
    C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(rank % num_gpus)", "raises without CUDA; every rank must bind its own NPU"),
    C('t = torch.tensor([value], dtype=torch.float32, device="cuda")', "device_type", "replace", True,
      't = torch.tensor([value], dtype=torch.float32, device="npu")', "device string selects CUDA"),
]),

E("uniad-trainval", "tools/train_val.py", "device_branch_or_abstraction",
  "UniAD tools/train_val.py (DDP training/eval loop) with an optional AMP switch", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_OLD),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
      "raises without CUDA (ModelHelper also needs an npu() that sets self.device - out of this file)"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=use_amp)", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler(enabled=use_amp)", AMP_OFF),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=use_amp):', "amp", "replace", False,
      'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=use_amp):', AMP_OFF),
    C("total_num = torch.Tensor([losses.count]).cuda()", "tensor_to_device", "replace", True,
      "total_num = torch.Tensor([losses.count]).npu()", "HCCL all_reduce needs device tensors; .cuda() raises"),
    C("loss_sum = torch.Tensor([losses.avg * losses.count]).cuda()", "tensor_to_device", "replace", True,
      "loss_sum = torch.Tensor([losses.avg * losses.count]).npu()", "same as total_num"),
]),

E("uniad-misc", "utils/misc_helper.py", "device_branch_or_abstraction",
  "UniAD utils/misc_helper.py (load_state with storage.cuda() map function, seeding, to_device)", [
    C("return storage.cuda()", "tensor_to_device", "replace", True,
      "return storage  # stay on CPU; load_state_dict copies into the NPU parameters",
      "map_location callback moves every storage to CUDA; raises without CUDA"),
    C("torch.cuda.manual_seed(seed ** 3)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed ** 3)", SEED_NOTE),
    C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
      "torch.use_deterministic_algorithms(True)", CUDNN_DET),
    C('def to_device(input, device="cuda", dtype=None):', "device_type", "replace", False,
      'def to_device(input, device="npu", dtype=None):',
      "default only; ModelHelper always passes device=self.device"),
]),

E("uniad-sh", "experiments/MVTec-AD/train_torch.sh", "explicit_replacement",
  "UniAD experiments/MVTec-AD/train_torch.sh (torch.distributed.launch with NCCL env tuning)", [
    C("export PYTHONPATH=../../:$PYTHONPATH", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL variable is ignored by HCCL; CANN logging level is the closest knob (value mapping unconfirmed)"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
      "no HCCL counterpart; ignored on NPU"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=eth0",
      "HCCL_SOCKET_IFNAME selects the host NIC for root-info init (knowledge distributed §1); this launcher is "
      "single-node, so HCCL's default NIC choice works - required only for multi-node"),
    C("CUDA_VISIBLE_DEVICES=$2 python -m torch.distributed.launch", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$2 python -m torch.distributed.launch --nproc_per_node=$1 --master_port=11111 "
      "../../tools/train_val.py",
      "device selection is ignored on NPU: ranks would bind NPUs 0..N-1 instead of the requested ids"),
]),

# ------------------------------------------------------------------ M3DM (nomewang/M3DM style, Point-MAE backbone)
E("m3dm-models", "models/models.py", "kernel_rewrite",
  "M3DM models/models.py (Point-MAE grouping with pointnet2_ops FPS + KNN_CUDA, timm DINO RGB branch)", [
    C("from knn_cuda import KNN", "custom_cuda_extension", "replace", True,
      "from models.knn_utils import knn_points  # torch.cdist + topk, runs on NPU",
      "KNN_CUDA JIT-compiles a CUDA kernel at import; no nvcc / CUDA on Ascend (knowledge §6 custom extensions)"),
    C("from pointnet2_ops import pointnet2_utils", "custom_cuda_extension", "replace", True,
      "from models.pointnet2_utils import farthest_point_sample, index_points  # pure-torch FPS",
      "pointnet2_ops is an nvcc-built extension; needs a torch rewrite (or Ascend C kernel)"),
    C("fps_idx = pointnet2_utils.furthest_point_sample(data, number)", "custom_cuda_extension", "replace", True,
      "fps_idx = farthest_point_sample(data, number)", "call site of the CUDA FPS kernel"),
    C("fps_data = pointnet2_utils.gather_operation(", "custom_cuda_extension", "replace", True,
      "fps_data = index_points(data, fps_idx.long())", "call site of the CUDA gather kernel"),
    C("self.knn = KNN(k=self.group_size, transpose_mode=True)", "custom_cuda_extension", "replace", True,
      "self.k = self.group_size", "KNN_CUDA module instance"),
    C("_, idx = self.knn(xyz, center)  # B G M", "custom_cuda_extension", "replace", True,
      "idx = torch.cdist(center, xyz).topk(self.group_size, dim=-1, largest=False).indices  # B G M",
      "call site of the CUDA KNN; cdist (bf16/fp16/fp32 ✔) and topk have NPU kernels"),
    C("=ckpt = torch.load(bert_ckpt_path)", "device_type", "replace", False,
      "ckpt = torch.load(bert_ckpt_path, map_location='cpu')",
      "fails only if the published Point-MAE checkpoint holds CUDA storages (likely, since it was saved from GPU "
      "training) - unconfirmed"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "silently falls back to CPU on an NPU host"),
]),

E("m3dm-req", "requirements.txt", "explicit_replacement",
  "M3DM requirements.txt (cu113 torch wheels, faiss-gpu, KNN_CUDA wheel, Pointnet2_PyTorch from git)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "device_type", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; harmless once the pins below stop naming +cu113 builds. x86 Ascend hosts use the CPU index, "
      "aarch64 plain PyPI (knowledge §1.1)"),
    C("=torch==1.10.0+cu113", "device_type", "replace", True,
      "torch==2.1.0",
      "+cu113 build, and no torch_npu exists for torch 1.10 (knowledge §1.2/1.3)"),
    C("=torchvision==0.11.1+cu113", "device_type", "replace", True,
      "torchvision==0.16.0", "CUDA build pinned to the old torch; must follow the torch bump"),
    C("=timm==0.6.11", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post12", "Ascend adapter wheel, version equal to torch (knowledge §1.1)"),
    C("=faiss-gpu==1.7.2", "unsupported_op_workaround", "replace", True,
      "faiss-cpu==1.7.2", "faiss-gpu wheels are x86_64 + CUDA only"),
    C("KNN_CUDA-0.2-py3-none-any.whl", "custom_cuda_extension", "removal", False, None,
      "wheel installs (it only compiles at import); dead once the code uses torch.cdist/topk"),
    C("git+https://github.com/erikwijmans/Pointnet2_PyTorch.git", "custom_cuda_extension", "removal", True, None,
      "builds a CUDA extension at install time and fails without nvcc"),
]),

# ------------------------------------------------------------------ Dinomaly / DINOv2 backbone
E("dino-attn", "dinov2/layers/attention.py", "device_branch_or_abstraction",
  "DINOv2 dinov2/layers/attention.py as vendored by Dinomaly (xFormers MemEffAttention, guarded import)", [
    C("from xformers.ops import memory_efficient_attention, unbind", "attention_kernel", "replace", False,
      "raise ImportError  # xFormers has no NPU backend",
      "import is guarded: without xFormers the module falls back to the plain attention; if xFormers happens to be "
      "installed its kernels refuse NPU tensors (knowledge §6)"),
    C("x = memory_efficient_attention(q, k, v, attn_bias=attn_bias)", "attention_kernel", "replace", False,
      "x = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)).transpose(1, 2)",
      "only reached when xFormers imported; SDPA dispatches to the NPU flash-attention kernel (TSV ✔, limits apply)"),
]),

E("dinomaly-train", "dinomaly_mvtec_uni.py", "device_branch_or_abstraction",
  "Dinomaly dinomaly_mvtec_uni.py (multi-class ViTill training on MVTec)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; Dinomaly's environment is torch 2.0/2.1-era (from memory), before torch_npu autoload (2.5.1, "
      "knowledge §1.1)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)", SEED_NOTE),
    C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
      "torch.use_deterministic_algorithms(True)", CUDNN_DET),
    C("nn.utils.clip_grad_norm(trainable.parameters(), max_norm=0.1)", "unsupported_op_workaround", "replace", False,
      "nn.utils.clip_grad_norm_(trainable.parameters(), max_norm=0.1)",
      "msFmkTransplt lists torch.nn.utils.clip_grad_norm as unsupported (mstt list 2.7); it is a deprecated alias "
      "of clip_grad_norm_, so an actual failure is unconfirmed"),
    C("torch.cuda.max_memory_allocated() / 2 ** 30", "torch_cuda_api", "replace", False,
      "print_fn('peak NPU memory: {:.2f} GB'.format(torch.npu.max_memory_allocated() / 2 ** 30))",
      "memory stats are empty without CUDA -> logs 0 GB; logging only"),
    C("os.environ['CUDA_LAUNCH_BLOCKING'] = \"1\"", "env_var", "replace", False,
      "os.environ['ASCEND_LAUNCH_BLOCKING'] = \"1\"",
      "debug leftover; ignored on NPU (so the port actually runs faster); kept only to preserve intent"),
    C("device = 'cuda:0' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "device = 'npu:0' if torch.npu.is_available() else 'cpu'", "silently trains on the CPU on an NPU host"),
]),

# ------------------------------------------------------------------ container
E("docker", "Dockerfile", "explicit_replacement",
  "inspection-service Dockerfile on nvidia/cuda base (cu118 torch wheels, faiss-gpu)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04 AS base", "device_type", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11 AS base",
      "CUDA runtime image has no CANN toolkit/driver libraries; Ascend's CANN images also bake the set_env.sh "
      "exports into ENV (knowledge host-formats §3.8); image name from memory"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False,
      "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "read only by the NVIDIA container runtime; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES (or --device "
      "/dev/davinciN at run time)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA-runtime only; ignored on Ascend"),
    C("torch==2.0.1 torchvision==0.15.2 --index-url https://download.pytorch.org/whl/cu118", "device_type", "replace",
      True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu",
      "cu118 build of a torch version without a torch_npu wheel (2.0.1 -> 2.1.0); x86 uses the CPU index, aarch64 "
      "has no cu118 wheels at all (knowledge §1.1)"),
    C('RUN python -c "import torch, torchvision; print(torch.__version__', "import_torch_npu", "npu_only_addition",
      True, "RUN pip install torch-npu==2.1.0.post12",
      "Ascend adapter wheel matching torch 2.1.0"),
    C("=RUN pip install faiss-gpu==1.7.2", "unsupported_op_workaround", "replace", True,
      "RUN pip install faiss-cpu==1.7.2", "faiss-gpu is CUDA-only (x86_64 wheels)"),
    C("=ENV CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False,
      "ENV ASCEND_RT_VISIBLE_DEVICES=0",
      "ignored on NPU; the service uses device 0 by default anyway"),
    C("=ENV INSPECTION_DEVICE=cuda", "device_type", "replace", False,
      "ENV INSPECTION_DEVICE=npu",
      "only matters if serve.py reads it (CMD passes --device auto) - unconfirmed"),
]),
