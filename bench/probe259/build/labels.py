# Labels for probe259: image / video quality assessment (pyiqa, MANIQA, LIQE/CLIP-IQA, DOVER/FAST-VQA, Q-Align).
# One C(...) per upstream line a careful porter would edit for Ascend NPU (torch_npu).
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---- shared notes -------------------------------------------------------------------------------
IMPORT_ENTRY = ("entry point: import torch_npu registers the NPU backend and the torch.npu namespace "
                "(only autoloaded since torch_npu 2.5.1)")
IMPORT_LIB = ("library module: the ported lines use torch.npu.*, which exists once the entry script has "
              "imported torch_npu (or autoload >= 2.5.1); adding it here is belt-and-braces")
IS_AVAIL = ("torch.cuda.is_available() is False on an Ascend host, so this silently picks the CPU")
LAZY = ("torch.cuda.* call needs CUDA lazy-init and raises on a CPU+torch_npu build; torch.npu has the same API")
EMPTY = ("torch.cuda.empty_cache() returns silently when CUDA was never initialised; the NPU caching allocator "
         "is not trimmed (memory only)")
AMP = ("torch.cuda.amp.* warns 'CUDA is not available. Disabling' on an NPU host and runs fp32: results stay "
       "correct but the AMP speed/memory benefit is lost")
SEED_REDUNDANT = ("no-op without CUDA; torch.manual_seed() just above also seeds the NPU generator through "
                  "torch's custom-device seeding (unconfirmed for every torch version), so porting this is hygiene")


# =================================================================================================
# pyiqa / IQA-PyTorch
# =================================================================================================
E("p259_pyiqa_inference", "inference_iqa.py", "device_branch_or_abstraction",
  "pyiqa inference_iqa.py (CLI: --device, default_device cuda-or-cpu)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type",
      "replace", True, "device = torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
      IS_AVAIL + " when --device is omitted (the documented default path)"),
])

E("p259_pyiqa_inference_model", "pyiqa/models/inference_model.py", "device_branch_or_abstraction",
  "pyiqa InferenceModel / create_metric", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_LIB),
    C("self.device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type",
      "replace", True, "self.device = torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
      IS_AVAIL + " for every create_metric() call without device="),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY),
])

E("p259_pyiqa_dist_util", "pyiqa/utils/dist_util.py", "explicit_replacement",
  "BasicSR/pyiqa dist_util.py (init_dist, slurm launcher)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_LIB),
    C("def init_dist(launcher, backend='nccl', **kwargs):", "dist_backend", "replace", True,
      "def init_dist(launcher, backend='hccl', **kwargs):",
      "default backend used by the pytorch launcher; NCCL is not available with torch_npu, HCCL is"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()",
      "returns 0 on an NPU host, so rank % num_gpus raises ZeroDivisionError"),
    C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(rank % num_gpus)", LAZY),
    C("ngpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "ngpus = torch.npu.device_count()", "returns 0 on an NPU host (slurm path): ZeroDivisionError below"),
    C("torch.cuda.set_device(proc_id % ngpus)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(proc_id % ngpus)", LAZY),
])

E("p259_pyiqa_prefetch", "pyiqa/data/prefetch_dataloader.py", "explicit_replacement",
  "BasicSR/pyiqa CUDAPrefetcher (side stream H2D copies)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_LIB),
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
      "creating a CUDA stream raises without CUDA"),
    C("self.device = torch.device('cuda' if opt['num_gpu'] != 0 else 'cpu')", "device_type", "replace", True,
      "self.device = torch.device('npu' if opt['num_gpu'] != 0 else 'cpu')",
      "prefetched batches would target a CUDA device"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
      "with torch.npu.stream(self.stream):", "CUDA stream context; must wrap the NPU side stream"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(self.stream)",
      "without the NPU wait the compute stream may read a batch before its copy finished"),
])

E("p259_pyiqa_base_model", "pyiqa/models/base_model.py", "explicit_replacement",
  "BasicSR/pyiqa BaseModel (model_to_device, DDP/DataParallel, checkpoints)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_LIB),
    C("self.device = torch.device('cuda' if opt['num_gpu'] != 0 else 'cpu')", "device_type", "replace", True,
      "self.device = torch.device('npu' if opt['num_gpu'] != 0 else 'cpu')",
      "model and every feed_data() tensor go to this device"),
    C("net, device_ids=[torch.cuda.current_device()], find_unused_parameters=find_unused_parameters)",
      "torch_cuda_api", "replace", True,
      "net, device_ids=[torch.npu.current_device()], find_unused_parameters=find_unused_parameters)", LAZY),
    C("net = DataParallel(net)", "unsupported_op_workaround", "replace", True,
      "get_root_logger().warning('nn.DataParallel is not supported on Ascend NPU: running on one NPU, use --launcher pytorch (DDP) for more')",
      "torch.nn.DataParallel is marked unsupported on every Ascend product (Ascend API list, msFmkTransplt); "
      "depending on the torch version it either degenerates to a pass-through (num_gpu>1 silently trains on one "
      "device) or tries to replicate onto the NPUs"),
])

E("p259_pyiqa_general_model", "pyiqa/models/general_iqa_model.py", "explicit_replacement",
  "pyiqa GeneralIQAModel (training step with optional AMP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_LIB),
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)", "amp", "replace", False,
      "self.scaler = torch.npu.amp.GradScaler(enabled=self.use_amp)", AMP + " (only when train.use_amp is on)"),
    C("with torch.cuda.amp.autocast(enabled=self.use_amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=self.use_amp):", AMP),
])

E("p259_pyiqa_train", "pyiqa/train.py", "explicit_replacement",
  "BasicSR/pyiqa train.py (train_pipeline, resume, prefetch mode)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("device_id = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "device_id = torch.npu.current_device()", LAZY + " (resume path)"),
    C("resume_state = torch.load(resume_state_path, map_location=lambda storage, loc: storage.cuda(device_id))",
      "tensor_to_device", "replace", True,
      "resume_state = torch.load(resume_state_path, map_location=f'npu:{device_id}')",
      "map_location moves every storage to CUDA; fails on an NPU host"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY),
])

E("p259_pyiqa_options", "pyiqa/utils/options.py", "explicit_replacement",
  "BasicSR/pyiqa parse_options (num_gpu: auto, launcher)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_LIB),
    C("opt['num_gpu'] = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "opt['num_gpu'] = torch.npu.device_count()",
      "returns 0 on an NPU host; num_gpu: auto then silently selects the CPU in BaseModel"),
])

E("p259_pyiqa_misc", "pyiqa/utils/misc.py", "explicit_replacement",
  "BasicSR/pyiqa utils/misc.py (set_random_seed, get_env_info)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_LIB),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      SEED_REDUNDANT),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_REDUNDANT),
    C("GPU count: {torch.cuda.device_count()}", "torch_cuda_api", "replace", False,
      "f'\\n\\tNPU count: {torch.npu.device_count()}')", "log line only: would report 0 devices"),
])

E("p259_pyiqa_musiq", "pyiqa/archs/musiq_arch.py", "explicit_replacement",
  "pyiqa MUSIQ architecture (pure model code, device-agnostic)", [])

E("p259_pyiqa_niqe", "pyiqa/archs/niqe_arch.py", "explicit_replacement",
  "pyiqa NIQE (MATLAB-consistent natural scene statistics)", [
    C("r_gam = (2 * torch.lgamma(2. / gam) - (torch.lgamma(1. / gam) + torch.lgamma(3. / gam))).exp()",
      "unsupported_op_workaround", "replace", False,
      "r_gam = _aggd_r_gam_table().to(block)  # lgamma table built once on CPU and cached",
      "aten lgamma has no NPU kernel in the torch 2.1/2.7/2.9 op lists, so this 9,801-entry table is rebuilt "
      "through the CPU fallback for every block and every shift; it only depends on constants (performance)"),
    C("img = img.to(torch.float64)", "unsupported_op_workaround", "replace", False,
      "img = img.to(torch.float64 if img.device.type == 'cpu' else torch.float32)",
      "fp64 coverage of NPU kernels is partial (Ascend's list gives fp32-only for e.g. torch.cov); unconfirmed "
      "whether this path errors, falls back to CPU or runs; porter keeps fp32 on NPU and accepts the documented drift"),
])

E("p259_pyiqa_fid", "pyiqa/archs/fid_arch.py", "device_branch_or_abstraction",
  "pyiqa FID / clean-fid feature extraction", [
    C("def get_file_features(files, model=None, num_workers=12, batch_size=32, device=torch.device('cuda'),",
      "device_type", "replace", True,
      "def get_file_features(files, model=None, num_workers=12, batch_size=32, device=torch.device('npu'),",
      "default device of a public helper; direct calls fail on an NPU host"),
    C("device=torch.device('cuda'), mode='clean', description='', verbose=True):", "device_type", "replace", True,
      "device=torch.device('npu'), mode='clean', description='', verbose=True):",
      "default device of get_folder_features"),
    C("=device=torch.device('cuda'),", "device_type", "replace", True, "device=torch.device('npu'),",
      "FID.forward default; InferenceModel passes its own device, but FID()(dir1, dir2) uses this one"),
])

E("p259_pyiqa_qalign", "pyiqa/archs/qalign_arch.py", "device_branch_or_abstraction",
  "pyiqa Q-Align wrapper (LMM scorer loaded with transformers)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_LIB),
    C("return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16", "device_capability_check",
      "replace", False, "return torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
      "dtype='auto' only: depending on the torch version this raises (CUDA lazy init) or returns False and "
      "picks fp16 on Atlas A2, which does support bf16; unconfirmed which"),
    C("attn_impl = 'flash_attention_2' if is_flash_attn_2_available() else 'eager'", "attention_kernel",
      "replace", False, "attn_impl = 'sdpa'  # NPU: SDPA dispatches to the NPU fused attention",
      "flash-attn cannot be installed on NPU, so this silently falls back to eager attention; transformers "
      "recommends attn_implementation='sdpa' on NPU (performance)"),
    C("device_map=device_map or {'': 'cuda:0'},", "device_type", "replace", True,
      "device_map=device_map or {'': 'npu:0'},", "the 7B model would be dispatched to a CUDA device"),
    C("load_kwargs['load_in_8bit'] = True", "unsupported_op_workaround", "replace", False,
      "raise NotImplementedError('bitsandbytes LLM.int8 is not available on Ascend NPU; use fp16/bf16')",
      "bitsandbytes NPU support covers NF4 (multi-backend branch) only; 8-bit not listed; unconfirmed failure mode"),
])

E("p259_pyiqa_tests", "tests/test_metric_general.py", "device_branch_or_abstraction",
  "pyiqa tests (CPU/GPU consistency, GPU-only skips)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "pytest entry module (no conftest imports torch_npu)"),
    C("return torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type",
      "replace", True, "return torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
      IS_AVAIL + ": the whole suite runs on CPU and never tests the NPU"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
      "the CPU-vs-accelerator consistency test is silently skipped"),
    C("metric_gpu = pyiqa.create_metric(metric_name, device='cuda')", "device_type", "replace", True,
      "metric_gpu = pyiqa.create_metric(metric_name, device='npu')", "CUDA device string"),
    C("score_gpu = metric_gpu(dist.cuda(), ref.cuda())", "tensor_to_device", "replace", True,
      "score_gpu = metric_gpu(dist.npu(), ref.npu())", ".cuda() raises without CUDA"),
    C("score_gpu = metric_gpu(dist.cuda())", "tensor_to_device", "replace", True,
      "score_gpu = metric_gpu(dist.npu())", ".cuda() raises without CUDA"),
    C("@pytest.mark.skipif(not torch.cuda.is_available(), reason='GPU-only metrics need CUDA')",
      "torch_cuda_api", "replace", True,
      "@pytest.mark.skipif(not torch.npu.is_available(), reason='accelerator-only metrics need an NPU')",
      "test silently skipped on an NPU host"),
    C("metric = pyiqa.create_metric(metric_name, device=torch.device('cuda'))", "device_type", "replace", True,
      "metric = pyiqa.create_metric(metric_name, device=torch.device('npu'))", "CUDA device"),
    C("@pytest.mark.skipif(not torch.cuda.is_available(), reason='AMP check needs a GPU')", "torch_cuda_api",
      "replace", True, "@pytest.mark.skipif(not torch.npu.is_available(), reason='AMP check needs an NPU')",
      "test silently skipped on an NPU host"),
    C("metric = pyiqa.create_metric('topiq_nr', device='cuda')", "device_type", "replace", True,
      "metric = pyiqa.create_metric('topiq_nr', device='npu')", "CUDA device string"),
    C("ref_score = metric(dist.cuda())", "tensor_to_device", "replace", True, "ref_score = metric(dist.npu())",
      ".cuda() raises without CUDA"),
    C("with torch.autocast(device_type='cuda', dtype=torch.float16):", "amp", "replace", True,
      "with torch.autocast(device_type='npu', dtype=torch.float16):",
      "autocast('cuda') disables itself on an NPU host, so the AMP test compares fp32 with fp32 and passes vacuously"),
    C("amp_score = metric(dist.cuda())", "tensor_to_device", "replace", True, "amp_score = metric(dist.npu())",
      ".cuda() raises without CUDA"),
])

E("p259_pyiqa_bench", "scripts/benchmark_metric_speed.py", "explicit_replacement",
  "pyiqa-style metric speed/memory benchmark (CUDA events, peak memory, profiler)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("name = torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", True,
      "name = torch.npu.get_device_name(0)", LAZY),
    C("major, minor = torch.cuda.get_device_capability(0)", "device_capability_check", "replace", True,
      "major, minor = torch.npu.get_device_capability(0) or (0, 0)",
      "raises without CUDA; the NPU version returns None unless TORCH_NPU_DEVICE_CAPABILITY is set, so the "
      "tuple unpacking needs a fallback"),
    C("total = torch.cuda.get_device_properties(0).total_memory / 1024**3", "torch_cuda_api", "replace", True,
      "total = torch.npu.get_device_properties(0).total_memory / 1024**3",
      LAZY + "; NPU properties do expose total_memory"),
    C("metric.net = torch.compile(metric.net, mode='reduce-overhead')", "compile_mode", "replace", False,
      "metric.net = torch.compile(metric.net, backend='npugraphs')",
      "reduce-overhead means CUDA graphs; Ascend documents backend='npugraphs' as the cudagraphs equivalent; "
      "unconfirmed what Inductor does with this mode on NPU (--compile only)"),
    C("with torch.cuda.amp.autocast(args.fp16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(args.fp16):",
      "--fp16 would silently warm up in fp32 (autocast disables itself without CUDA)"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)", LAZY),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", LAZY),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_evt = torch.npu.Event(enable_timing=True)", "CUDA events cannot time NPU work"),
    C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_evt = torch.npu.Event(enable_timing=True)", "CUDA events cannot time NPU work"),
    C("with torch.cuda.amp.autocast(enabled=args.fp16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=args.fp16):",
      "the timed loop would silently measure fp32 while the table says --fp16"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      LAZY + "; without an NPU sync the event timings are meaningless"),
    C("peak_mem = torch.cuda.max_memory_allocated() / 1024**2", "torch_cuda_api", "replace", True,
      "peak_mem = torch.npu.max_memory_allocated() / 1024**2",
      "returns 0 without CUDA: the reported peak-memory column would be silently wrong"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY),
    C("from torch.profiler import profile, ProfilerActivity, schedule, tensorboard_trace_handler",
      "torch_cuda_api", "replace", False,
      "from torch_npu.profiler import profile, ProfilerActivity, schedule, tensorboard_trace_handler",
      "--profile only: the Ascend PyTorch Profiler lives in torch_npu.profiler"),
    C("activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],", "torch_cuda_api", "replace", False,
      "activities=[ProfilerActivity.CPU, ProfilerActivity.NPU],",
      "ProfilerActivity.CUDA records no device activity on NPU (--profile only)"),
    C("print(prof.key_averages().table(sort_by='cuda_time_total', row_limit=15))", "torch_cuda_api", "removal",
      False, None,
      "sorts by CUDA time (all zero on NPU) and _KinetoProfile.key_averages is on msFmkTransplt's unsupported "
      "list for 2.7; the NPU trace is read from the exported directory instead (unconfirmed)"),
    C("assert torch.cuda.is_available(), 'This benchmark needs a CUDA device.'", "torch_cuda_api", "replace", True,
      "assert torch.npu.is_available(), 'This benchmark needs an NPU device.'", "fails on every NPU host"),
    C("=device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "CUDA device"),
    C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", "replace", False,
      "except (torch.cuda.OutOfMemoryError, RuntimeError):",
      "an NPU out-of-memory is not a torch.cuda.OutOfMemoryError (torch.npu exports no such name), so one OOM "
      "aborts the sweep instead of skipping the metric; exact NPU exception class unconfirmed"),
    C("torch.cuda.empty_cache()  # free what we can before the next metric", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # free what we can before the next metric", EMPTY),
])

E("p259_pyiqa_dist_sh", "scripts/dist_train.sh", "explicit_replacement",
  "BasicSR/pyiqa scripts/dist_train.sh (torch.distributed.launch)", [
    C("export OMP_NUM_THREADS=4", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN's set_env.sh must be sourced (LD_LIBRARY_PATH to libascendcl/libhccl, ASCEND_OPP_PATH) before "
      "torch_npu can load"),
    C("export CUDA_VISIBLE_DEVICES=$GPU_IDS", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=$GPU_IDS",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: GPU_IDS=4,5,6,7 would silently run on NPUs 0-3"),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
      "NCCL-only workaround; HCCL ignores it and has no direct equivalent"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL logging knob has no effect under HCCL; CANN logging is set with ASCEND_GLOBAL_LOG_LEVEL "
      "(level mapping unconfirmed)"),
    C("processes on GPUs ${CUDA_VISIBLE_DEVICES}", "env_var", "replace", False,
      "echo \"Launching ${GPUS} processes on NPUs ${ASCEND_RT_VISIBLE_DEVICES}, master port ${PORT}\"",
      "log only: the variable is no longer set"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "torch_cuda_api", "replace",
      False, "npu-smi info",
      "NVIDIA CLI does not exist on an Ascend host; the script has no set -e so it only prints an error"),
])

E("p259_pyiqa_yml", "options/train/DBCNN/train_DBCNN_koniq.yml", "explicit_replacement",
  "pyiqa/BasicSR training option YAML", [
    C("backend: nccl", "dist_backend", "replace", True, "backend: hccl",
      "dist_params are passed to init_dist() by the slurm launcher path in options.py; NCCL is unavailable"),
])

E("p259_pyiqa_requirements", "requirements.txt", "explicit_replacement",
  "pyiqa requirements.txt (CUDA wheel index)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu is installed on top of the CPU torch wheel on x86 (plain PyPI on aarch64); the cu118 index "
      "pulls the CUDA build; unconfirmed that it breaks torch_npu rather than only bloating the install"),
    C("torch>=1.13.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
      "the torch-npu wheel must match torch x.y.z exactly, so torch must also be pinned (torch==2.1.0, "
      "torchvision==0.16.0; CANN 8.3.RC1 per the compatibility table)"),
    C("=bitsandbytes", "custom_cuda_extension", "removal", False, None,
      "optional Q-Align quantisation; released bitsandbytes wheels are CUDA builds, NPU NF4 exists only in the "
      "multi-backend branch (unconfirmed install behaviour)"),
])

E("p259_pyiqa_docker", "docker/Dockerfile", "explicit_replacement",
  "pyiqa-style CUDA Dockerfile", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "device_type", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "CUDA base image has no CANN toolkit; Ascend publishes CANN base images (cann-container-image)"),
    C("RUN pip install --no-cache-dir torch==2.1.2 torchvision==0.16.2 --index-url https://download.pytorch.org/whl/cu118",
      "import_torch_npu", "replace", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu && pip install --no-cache-dir torch-npu==2.1.0.post17",
      "no torch_npu exists for torch 2.1.2; torch must equal the torch-npu base version and torch-npu must be installed"),
    C("ENV CUDA_VISIBLE_DEVICES=0", "env_var", "replace", True, "ENV ASCEND_RT_VISIBLE_DEVICES=0",
      "ignored by the Ascend runtime"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0",
      "NVIDIA container runtime knob; with Ascend Docker Runtime the mounted NPUs come from ASCEND_VISIBLE_DEVICES "
      "(often passed at docker run time instead)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container runtime knob, meaningless on Ascend"),
])

# =================================================================================================
# MANIQA
# =================================================================================================
E("p259_maniqa_train", "MANIQA/train_maniqa.py", "explicit_replacement",
  "MANIQA train_maniqa.py (CUDA_VISIBLE_DEVICES, DataParallel, .cuda())", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = '0, 1'", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = '0,1'",
      "ignored by the Ascend runtime; also drop the blank: ASCEND_RT_VISIBLE_DEVICES parsing stops at the first "
      "invalid character, so '0, 1' would expose only device 0"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", True, "torch.npu.manual_seed(seed)",
      "setup_seed never calls torch.manual_seed, so on NPU nothing seeds the device generator: runs silently "
      "stop being reproducible"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", True, "torch.npu.manual_seed_all(seed)",
      "same as above, for all visible NPUs"),
    C("x_d = data['d_img_org'].cuda()", "tensor_to_device", "replace", True, "x_d = data['d_img_org'].npu()",
      ".cuda() raises without CUDA"),
    C("labels = torch.squeeze(labels.type(torch.FloatTensor)).cuda()", "tensor_to_device", "replace", True,
      "labels = torch.squeeze(labels.type(torch.FloatTensor)).npu()", ".cuda() raises without CUDA"),
    C("x_d = data['d_img_org'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "x_d = data['d_img_org'].npu(non_blocking=True)", ".cuda() raises without CUDA"),
    C("labels = torch.squeeze(labels.type(torch.FloatTensor)).cuda(non_blocking=True)", "tensor_to_device",
      "replace", True, "labels = torch.squeeze(labels.type(torch.FloatTensor)).npu(non_blocking=True)",
      ".cuda() raises without CUDA"),
    C("net = nn.DataParallel(net)", "unsupported_op_workaround", "removal", True, None,
      "torch.nn.DataParallel is unsupported on Ascend NPU; train on one NPU (or move to DDP)"),
    C("net = net.cuda()", "tensor_to_device", "replace", True, "net = net.npu()", ".cuda() raises without CUDA"),
    C("torch.save(net.module.state_dict(), model_save_path)", "unsupported_op_workaround", "replace", True,
      "torch.save(net.state_dict(), model_save_path)",
      "follows from dropping DataParallel: .module no longer exists (AttributeError at the first best epoch)"),
])

E("p259_maniqa_inference", "MANIQA/inference.py", "explicit_replacement",
  "MANIQA inference.py (random-crop TTA, pickled model checkpoint)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      SEED_REDUNDANT + " (crops are drawn with numpy anyway)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_REDUNDANT),
    C("patch = patch_sample['d_img_org'].cuda()", "tensor_to_device", "replace", True,
      "patch = patch_sample['d_img_org'].npu()", ".cuda() raises without CUDA"),
    C("\"device\": \"cuda:0\",", "device_type", "replace", True, "\"device\": \"npu:0\",",
      "folder mode moves batches to config.device"),
    C("net = torch.load(config.ckpt_path, map_location='cuda:0')", "device_type", "replace", True,
      "net = torch.load(config.ckpt_path, map_location='npu:0')",
      "deserialising to a CUDA device fails on an NPU host"),
    C("net = net.cuda()", "tensor_to_device", "replace", True, "net = net.npu()", ".cuda() raises without CUDA"),
])

E("p259_maniqa_env", "MANIQA/environment.yml", "explicit_replacement",
  "MANIQA-style conda environment.yml (pytorch-cuda, cudatoolkit)", [
    C("=- nvidia", "device_type", "removal", False, None, "NVIDIA conda channel is only needed for CUDA packages"),
    C("=- pytorch=1.13.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "torch_npu has no release for torch 1.13 (1.11, 2.0.1, 2.1.0, ... only); torch must match the torch-npu pin"),
    C("=- pytorch-cuda=11.7", "device_type", "replace", True, "- cpuonly",
      "selects the CUDA build of pytorch; torch_npu sits on the CPU build"),
    C("=- cudatoolkit-dev=11.7", "device_type", "removal", False, None, "CUDA toolkit (nvcc) is dead weight on Ascend"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post17",
      "torch-npu is pip-only; it goes into the pip section"),
    C("=- pynvml==11.4.1", "custom_cuda_extension", "removal", False, None,
      "NVML bindings; nvmlInit fails without an NVIDIA driver (only used for monitoring)"),
    C("=- nvidia-ml-py3", "custom_cuda_extension", "removal", False, None, "NVML bindings, as above"),
])

# =================================================================================================
# LIQE / CLIP-IQA
# =================================================================================================
E("p259_liqe_train", "LIQE/train_unique_clip_weight.py", "explicit_replacement",
  "LIQE multi-task CLIP training (clip.load, fp16 CLIP weights, AMP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_REDUNDANT),
    C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=use_amp):", AMP + " (--amp only)"),
    C("device = 'cuda:' + args.gpu if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "device = 'npu:' + args.gpu if torch.npu.is_available() else 'cpu'",
      IS_AVAIL + ": CLIP fine-tuning on CPU"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)", AMP),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "memory log silently skipped"),
    C("max memory {torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "print(f'max memory {torch.npu.max_memory_allocated() / 1024 ** 3:.1f} GB')", "log only"),
])

E("p259_liqe_clip", "LIQE/clip/clip.py", "device_branch_or_abstraction",
  "OpenAI CLIP clip.py vendored in LIQE / CLIP-IQA", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_LIB),
    C("device: Union[str, torch.device] = \"cuda\" if torch.cuda.is_available() else \"cpu\"", "device_type",
      "replace", True,
      "def load(name: str, device: Union[str, torch.device] = \"npu\" if torch.npu.is_available() else \"cpu\", jit: bool = False, download_root: str = None):",
      "default argument: callers that omit device silently load CLIP on CPU (and in fp32) on an NPU host"),
])

E("p259_clipiqa_demo", "CLIP-IQA/demo/clipiqa_single_image_demo.py", "explicit_replacement",
  "CLIP-IQA demo on mmedit (init_model with torch.device('cuda', id))", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("args.config, args.checkpoint, device=torch.device('cuda', args.device))", "device_type", "replace", True,
      "args.config, args.checkpoint, device=torch.device('npu', args.device))", "CUDA device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY),
])

# =================================================================================================
# DOVER / FAST-VQA
# =================================================================================================
E("p259_dover_eval", "DOVER/evaluate_one_video.py", "device_branch_or_abstraction",
  "DOVER evaluate_one_video.py (--device default cuda)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("\"-d\", \"--device\", type=str, default=\"cuda\", help=\"the running device\"", "device_type", "replace",
      True, "\"-d\", \"--device\", type=str, default=\"npu\", help=\"the running device\"",
      "default device string: model .to('cuda') fails on an NPU host"),
    C("if args.half and \"cuda\" in args.device:", "device_type", "replace", False,
      "if args.half and args.device.startswith((\"cuda\", \"npu\")):",
      "--half silently ignored on NPU (fp32 run, correct but slower)"),
    C("if args.half and args.device.startswith(\"cuda\"):", "device_type", "replace", False,
      "if args.half and args.device.startswith((\"cuda\", \"npu\")):", "same guard for the input views"),
    C("=if args.device.startswith(\"cuda\"):", "device_type", "replace", False,
      "if args.device.startswith((\"cuda\", \"npu\")):",
      "guard skips the sync on NPU; harmless today because .item() already synchronises"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
      "dead on NPU while the guard above only admits cuda; must become torch.npu once the guard is widened"),
])

E("p259_dover_datasets", "DOVER/dover/datasets/dover_datasets.py", "device_branch_or_abstraction",
  "DOVER view-decomposition dataset (decord readers, optional NVDEC decoding)", [
    C("return VideoReader(video_path, ctx=gpu(gpu_id))", "device_type", "replace", False,
      "return VideoReader(video_path, ctx=cpu(0))  # no NVDEC on Ascend hosts",
      "decord's GPU context needs a CUDA/NVDEC build; opt-in (DOVER_GPU_DECODE=1) and the except branch already "
      "falls back to CPU, so on NPU it only costs a failed attempt per video (exception type unconfirmed)"),
])

E("p259_fastvqa_finetune", "FAST-VQA/new_finetune.py", "device_branch_or_abstraction",
  "FAST-VQA / DOVER new_finetune.py (fragments, EMA, wandb)", [
    C("os.environ.setdefault(\"PYTORCH_CUDA_ALLOC_CONF\", \"max_split_size_mb:512\")", "env_var", "replace",
      False, "os.environ.setdefault(\"PYTORCH_NPU_ALLOC_CONF\", \"max_split_size_mb:512\")",
      "CUDA allocator knob is ignored on NPU; PYTORCH_NPU_ALLOC_CONF is the NPU allocator's (memory only; "
      "option name support unconfirmed)"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("sigma_hat, m_hat = torch.std_mean(y_pred, unbiased=False)", "unsupported_op_workaround", "replace", False,
      "sigma_hat, m_hat = torch.std(y_pred, unbiased=False), torch.mean(y_pred)",
      "torch.std_mean is on msFmkTransplt's unsupported list for 2.7; std and mean are supported (unconfirmed "
      "whether std_mean errors or decomposes)"),
    C("sigma, m = torch.std_mean(y, unbiased=False)", "unsupported_op_workaround", "replace", False,
      "sigma, m = torch.std(y, unbiased=False), torch.mean(y)", "as above"),
    C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=use_amp):", AMP + " (--amp only)"),
    C("\"train/gpu_mem_gb\": torch.cuda.memory_allocated() / 1024 ** 3,", "torch_cuda_api", "replace", False,
      "\"train/gpu_mem_gb\": torch.npu.memory_allocated() / 1024 ** 3,", "wandb would log 0 GB"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY),
    C("device = \"cuda\" if torch.cuda.is_available() else \"cpu\"", "device_type", "replace", True,
      "device = \"npu\" if torch.npu.is_available() else \"cpu\"", IS_AVAIL),
    C("if device == \"cuda\":", "device_type", "replace", True, "if device == \"npu\":",
      "once device is 'npu' this block is skipped, so --gpu is silently ignored and everything lands on NPU 0"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)", LAZY),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)", AMP),
])

# =================================================================================================
# Q-Align (LMM-based IQA/VQA training, built on mPLUG-Owl2 / LLaVA tooling)
# =================================================================================================
E("p259_qalign_train_sh", "Q-Align/scripts/l1_koniq_spaq.sh", "explicit_replacement",
  "Q-Align DeepSpeed ZeRO-3 fine-tuning launcher", [
    C("NUM_GPUS=${NUM_GPUS:-8}", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment must be sourced before torch_npu loads"),
    C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", "removal", False, None,
      "CUDA hardware-queue knob; no effect on NPU"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=eth0",
      "the NIC pinning is silently ignored under HCCL, which then picks a host NIC by its own priority"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None, "NCCL-only knob; HCCL ignores it"),
    C("--tf32 True", "device_capability_check", "replace", True, "    --tf32 False \\",
      "TrainingArguments raises ValueError('--tf32 requires Ampere or a newer GPU arch ...') when "
      "is_torch_tf32_available() is False, i.e. on every NPU host (transfer_to_npu patches that very check)"),
])

E("p259_qalign_train_mem", "Q-Align/q_align/train/train_mem.py", "explicit_replacement",
  "Q-Align/LLaVA train_mem.py (flash-attn monkey patch entry)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
])

E("p259_qalign_flash_patch", "Q-Align/q_align/train/llama_flash_attn_monkey_patch.py", "kernel_rewrite",
  "FastChat/LLaVA llama_flash_attn_monkey_patch.py used by Q-Align", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the rewritten forward calls torch_npu.npu_fusion_attention by name, so this module must import torch_npu"),
    C("from flash_attn.flash_attn_interface import flash_attn_unpadded_qkvpacked_func", "attention_kernel",
      "removal", True, None, "flash-attn cannot be built/installed on Ascend (CUDA kernels)"),
    C("flash_attn_varlen_qkvpacked_func as flash_attn_unpadded_qkvpacked_func", "attention_kernel", "removal",
      True, None, "fallback import of the same CUDA package"),
    C("from flash_attn.bert_padding import unpad_input, pad_input", "attention_kernel", "replace", True,
      "from q_align.train.bert_padding import unpad_input, pad_input  # vendored pure-PyTorch copy",
      "the helpers are plain PyTorch, but the flash_attn package that ships them cannot be installed"),
    C("output = flash_attn_unpadded_qkvpacked_func(", "attention_kernel", "replace", True,
      "output = torch_npu.npu_fusion_attention(qkv[:, 0], qkv[:, 1], qkv[:, 2], self.num_heads, \"TND\", atten_mask=causal_mask, scale=self.head_dim ** -0.5, sparse_mode=3, actual_seq_qlen=cu_q_lens[1:].tolist(), actual_seq_kvlen=cu_q_lens[1:].tolist())[0]",
      "varlen causal FlashAttention -> npu_fusion_attention with TND layout, cumulative lengths and "
      "triu(2048) mask + sparse_mode=3 (transformers' NPU mapping)"),
    C("output_unpad = flash_attn_unpadded_qkvpacked_func(", "attention_kernel", "replace", True,
      "output_unpad = torch_npu.npu_fusion_attention(qkv[:, 0], qkv[:, 1], qkv[:, 2], self.num_heads, \"TND\", atten_mask=causal_mask, scale=self.head_dim ** -0.5, sparse_mode=3, actual_seq_qlen=cu_q_lens[1:].tolist(), actual_seq_kvlen=cu_q_lens[1:].tolist())[0]",
      "same for the padded (unpad_input) path"),
    C("cuda_major, cuda_minor = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
      "cuda_major, cuda_minor = (8, 0)  # NPU: npu_fusion_attention has no sm80 head-dim limit",
      "raises without CUDA; torch.npu.get_device_capability() returns None, which cannot be unpacked"),
])

# =================================================================================================
# Video-quality baselines (VMAF with ffmpeg)
# =================================================================================================
E("p259_vqa_vmaf_sh", "scripts/compute_vmaf.sh", "explicit_replacement",
  "VQA benchmark helper: ffmpeg NVDEC + libvmaf_cuda full-reference baselines", [
    C("export CUDA_VISIBLE_DEVICES=${GPU_ID}", "env_var", "removal", False, None,
      "only steered NVDEC/libvmaf_cuda; the CPU path below uses no accelerator"),
    C("ffmpeg -hide_banner -filters | grep -q libvmaf_cuda || {", "custom_cuda_extension", "replace", True,
      "ffmpeg -hide_banner -filters | grep -q libvmaf || {",
      "an Ascend host's ffmpeg has no libvmaf_cuda, and set -e makes the script exit here"),
    C("-hwaccel cuda -hwaccel_output_format cuda -i \"${dist}\" \\", "device_type", "replace", True,
      "-i \"${dist}\" \\", "CUDA hwaccel (NVDEC) unavailable: ffmpeg errors out"),
    C("-hwaccel cuda -hwaccel_output_format cuda -i \"${ref}\" \\", "device_type", "replace", True,
      "-i \"${ref}\" \\", "CUDA hwaccel (NVDEC) unavailable: ffmpeg errors out"),
    C("-filter_complex \"[0:v]scale_cuda", "custom_cuda_extension", "replace", True,
      "-filter_complex \"[0:v]scale=1920:1080:flags=bicubic,format=yuv420p[dis];[1:v]format=yuv420p[ref];[dis][ref]libvmaf=model=${MODEL}:n_threads=${THREADS}:log_fmt=json:log_path=${OUT_DIR}/${name}_vmaf.json\" \\",
      "scale_cuda and libvmaf_cuda are CUDA-only ffmpeg filters; CPU libvmaf gives the same scores"),
])
