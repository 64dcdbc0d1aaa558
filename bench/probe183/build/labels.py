# Labels for probe183: classic NLP toolkits (spaCy/thinc, flair, AllenNLP, Stanza, torchtext seq2seq).
#
# Policy (see README "How the labels were chosen"):
#  * A line is judged as if every *other* label in the file had been applied and only this line was
#    left as it is. required=True when that leaves a line that raises on an NPU host (torch_npu on a
#    CPU build of torch), computes something wrong, or silently keeps the job off the NPU.
#  * required=False for performance-only edits, silent no-ops (torch.cuda.empty_cache / manual_seed on a
#    host without CUDA), diagnostics that silently report 0, and anything not confirmable from
#    /work/shared/knowledge (marked "unconfirmed").
#  * Packaging kinds: CUDA-only packages, CUDA builds/indexes, nvcc build switches and the CUDA base image
#    -> custom_cuda_extension; the torch-npu pin and torch re-pins needed to pair with it -> import_torch_npu;
#    sourcing CANN's set_env.sh in shell launchers -> import_torch_npu. nvidia-smi driver-tooling
#    calls -> torch_cuda_api (NVML packages in requirement files count as CUDA-only packages).

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("torch_npu must be imported before any 'npu' device string or torch.npu call "
               "(auto-loaded only from torch_npu 2.5.1 on, still recommended)")

# --------------------------------------------------------------------------------------------- spaCy
E("spacy_trf_cfg", "configs/ner_trf.cfg", "explicit_replacement",
  "spaCy v3 config.cfg for a spacy-transformers NER pipeline ([system] gpu_allocator, TransformerModel.v3)",
  [
      C('=gpu_allocator = "pytorch"', "torch_cuda_api", "replace", False,
        "gpu_allocator = null",
        "Routes CuPy allocations through PyTorch's CUDA caching allocator; spaCy only applies it when "
        "training with --gpu-id >= 0 (a CuPy device). On an NPU host thinc stays on NumpyOps, so the "
        "setting is dead; nulling it documents that."),
      C("=mixed_precision = true", "amp", "replace", False,
        "mixed_precision = false",
        "thinc's PyTorchShim implements mixed precision with CUDA autocast/grad scaling; with thinc on "
        "NumpyOps it has no effect on NPU tensors. Unconfirmed whether it is merely ignored or warns."),
  ])

E("spacy_project_yml", "project.yml", "explicit_replacement",
  "spaCy projects project.yml (vars.gpu_id passed to spacy train/evaluate --gpu-id)",
  [
      C("gpu_id: 0", "device_type", "replace", True,
        "gpu_id: -1  # thinc has no NPU ops backend; the torch layers are put on the NPU in code",
        "--gpu-id 0 makes spaCy call require_gpu(0), which needs CuPy/CUDA; CuPy has no Ascend support "
        "(knowledge section 6), so train/evaluate/benchmark abort on an NPU host."),
  ])

E("spacy_requirements", "requirements-gpu.txt", "explicit_replacement",
  "requirements-gpu.txt of a spaCy transformer project (cu118 index, spacy[cuda11x], cupy-cuda11x)",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu118", "custom_cuda_extension", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "torch-npu is built against the CPU torch wheel (CPU index on x86, plain PyPI on aarch64); the "
        "cu118 index has no aarch64 wheels and pulls the CUDA build on x86."),
      C("=torch==2.1.0", "import_torch_npu", "npu_only_addition", True,
        "torch-npu==2.1.0.post17",
        "torch-npu wheel matching torch 2.1.0 (x.y.z must equal the torch version; knowledge section 1)."),
      C("spacy[cuda11x,transformers,lookups]>=3.7.2,<3.8.0", "custom_cuda_extension", "replace", False,
        "spacy[transformers,lookups]>=3.7.2,<3.8.0",
        "The cuda11x extra only pulls CuPy for CUDA 11; useless on Ascend. The wheel still installs, and "
        "thinc's GPU probe fails closed, so not required (unconfirmed on aarch64)."),
      C("=cupy-cuda11x>=12.0.0", "custom_cuda_extension", "removal", False, None,
        "CuPy has no Ascend backend (knowledge section 6); harmless if left (thinc falls back to NumpyOps)."),
      C("=nvidia-ml-py>=12.535.77", "custom_cuda_extension", "removal", False, None,
        "NVML bindings have no NPU equivalent (use npu-smi / torch.npu.mem_get_info); only monitoring uses it."),
  ])

E("spacy_train_driver", "scripts/train_trf.py", "explicit_replacement",
  "a project's programmatic spaCy training entry point (thinc require_gpu + set_gpu_allocator + torch.cuda memory logging)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("set_gpu_allocator(allocator)", "torch_cuda_api", "removal", False, None,
        "CuPy->PyTorch allocator hook; meaningless without CuPy. Unconfirmed whether thinc raises or "
        "no-ops when CuPy is absent."),
      C("=require_gpu(gpu_id)", "device_type", "replace", True,
        "require_cpu()  # thinc has no NPU ops; the transformer is moved to npu separately",
        "thinc.require_gpu raises when CuPy/CUDA is unavailable; CuPy has no Ascend support."),
      C("torch.cuda.set_device(gpu_id)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(gpu_id)",
        "torch.cuda.set_device raises on a torch build without CUDA."),
      C("props = torch.cuda.get_device_properties(gpu_id)", "torch_cuda_api", "replace", True,
        "props = torch.npu.get_device_properties(gpu_id)",
        "Raises without CUDA; the NPU properties object has name and total_memory (knowledge 2.8), so the "
        "next line keeps working."),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "torch.cuda.empty_cache is a silent no-op when CUDA was never initialised; NPU cache never freed."),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if not torch.npu.is_available():",
        "Only gates memory logging: on NPU the logger silently returns early."),
      C("allocated = torch.cuda.memory_allocated()", "torch_cuda_api", "replace", False,
        "allocated = torch.npu.memory_allocated() / 1024 ** 2",
        "torch.cuda.memory_stats returns {} when CUDA is uninitialised, so this logs 0 (diagnostic only)."),
      C("peak = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
        "peak = torch.npu.max_memory_allocated() / 1024 ** 2",
        "Logs 0 on NPU (diagnostic only)."),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats()",
        "Reaches the CUDA allocator binding and raises on a non-CUDA torch build."),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)",
        "Silent no-op without CUDA; fix_random_seed/torch.manual_seed already seed the default generator."),
      C("nlp = init_nlp(config, use_gpu=gpu_id)", "device_type", "replace", False,
        "nlp = init_nlp(config, use_gpu=-1)",
        "spaCy treats use_gpu >= 0 as a CuPy device (allocator set-up). Unconfirmed whether it raises "
        "once thinc is on NumpyOps."),
      C("train_nlp(nlp, output_path, use_gpu=gpu_id", "device_type", "replace", False,
        "train_nlp(nlp, output_path, use_gpu=-1, stdout=sys.stdout, stderr=sys.stderr)",
        "Same as init_nlp: use_gpu is a CuPy device id for spaCy. Unconfirmed."),
      C("peak = torch.cuda.max_memory_reserved()", "torch_cuda_api", "replace", False,
        "peak = torch.npu.max_memory_reserved() / 1024 ** 3",
        "Reports 0 on NPU (diagnostic only)."),
  ])

E("spacy_torch_layer", "bc5cdr/layers/bilstm_encoder.py", "device_branch_or_abstraction",
  "custom thinc PyTorchWrapper layer (BiLSTM + highway) registered as a spaCy architecture",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "The module is loaded by the spaCy CLI via --code, so it is the only place to import torch_npu "
        "before the NPU branch below is used."),
      C("if cupy is not None and isinstance(ops, CupyOps):", "device_type", "add_branch", True,
        'if torch.npu.is_available(): return torch.device("npu", torch.npu.current_device())',
        "With no CuPy on an Ascend host the CUDA branch is dead and the torch model silently runs on the "
        "CPU. An NPU branch is the only way to use the NPU from thinc; that thinc's torch2xp copies NPU "
        "outputs back to numpy is unconfirmed."),
      C('if device.type == "cuda":', "device_type", "add_branch", False,
        'if device.type == "npu": return f"{type(ops).__name__} on {torch.npu.get_device_name(device)} ({device})"',
        "Description string only; without the branch an NPU device is reported as CPU."),
  ])

E("spacy_serve", "service/app.py", "explicit_replacement",
  "FastAPI service around a spaCy transformer pipeline (spacy.prefer_gpu, CuPy pool freeing, torch.cuda memory info)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("using_gpu = spacy.prefer_gpu(GPU_ID)", "device_type", "replace", True,
        "using_gpu = torch.npu.is_available()  # spaCy stays on NumpyOps; transformer moved to npu",
        "prefer_gpu returns False without CuPy (no Ascend support), so the service silently serves from "
        "the CPU. How to place the spacy-transformers model on the NPU is unconfirmed."),
      C('LOGGER.info("CUDA device: %s", torch.cuda.get_device_name(GPU_ID))', "torch_cuda_api", "replace", True,
        'LOGGER.info("NPU device: %s", torch.npu.get_device_name(GPU_ID))',
        "torch.cuda.get_device_name initialises CUDA and raises on an NPU host."),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "Silent no-op without CUDA; NPU cache not released (performance/memory only)."),
      C("free, total = torch.cuda.mem_get_info(GPU_ID)", "torch_cuda_api", "replace", True,
        "free, total = torch.npu.mem_get_info(GPU_ID)",
        "Calls cudaMemGetInfo and raises without CUDA; /health would return 500."),
  ])

# --------------------------------------------------------------------------------------------- flair
E("flair_init", "flair/__init__.py", "device_branch_or_abstraction",
  "flair/__init__.py global flair.device selection",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "Package init is where flair picks the device, so torch_npu must be loaded here. " + IMPORT_NOTE),
      C("elif torch.cuda.is_available():", "device_type", "replace", True,
        "elif torch.npu.is_available():",
        "False on an NPU host, so flair.device silently becomes the CPU."),
      C('device = torch.device("cuda:0")', "device_type", "replace", True,
        'device = torch.device("npu:0")',
        "Default device string."),
  ])

E("flair_trainer", "flair/trainers/trainer.py", "device_branch_or_abstraction",
  "flair ModelTrainer.train_custom (use_amp, GradScaler, embeddings_storage_mode)",
  [
      C('if flair.device.type != "cuda":', "amp", "replace", False,
        'if flair.device.type not in ("cuda", "npu"):',
        "use_amp is switched off (with a warning) on any non-CUDA device; on NPU this only costs speed."),
      C("scaler = torch.cuda.amp.GradScaler(enabled=use_amp)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=use_amp)",
        "Once AMP is allowed on NPU, autocast (device_type=flair.device.type) runs fp16 on the NPU while a "
        "CUDA GradScaler disables itself (no CUDA), so fp16 gradients are not loss-scaled."),
      C('if flair.device.type == "cuda":', "device_type", "replace", False,
        'if flair.device.type == "npu":',
        "Per-epoch cache freeing is skipped on NPU (fragmentation/perf only)."),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()", "Silent no-op without CUDA."),
  ])

E("flair_training_utils", "flair/training_utils.py", "device_branch_or_abstraction",
  "flair/training_utils.py (store_embeddings with 'none'/'cpu'/'gpu' storage, pinned host copies)",
  [
      C('return tensor.to("cpu").pin_memory()', "pin_memory", "replace", False,
        'return tensor.to("cpu").pin_memory(device="npu")',
        "Argument-less pin_memory() targets the CUDA host allocator on older torch; whether it picks the "
        "NPU allocator depends on the torch/torch_npu version (unconfirmed). Performance only."),
      C('if flair.device.type != "cuda":', "device_type", "replace", False,
        'if flair.device.type not in ("cuda", "npu"):',
        "Debug memory report only."),
      C("allocated = torch.cuda.memory_allocated(flair.device)", "torch_cuda_api", "replace", False,
        "allocated = torch.npu.memory_allocated(flair.device) / 2**20",
        "Would report 0 for an NPU device (diagnostic only)."),
      C("reserved = torch.cuda.memory_reserved(flair.device)", "torch_cuda_api", "replace", False,
        "reserved = torch.npu.memory_reserved(flair.device) / 2**20",
        "Would report 0 for an NPU device (diagnostic only)."),
  ])

E("flair_ner_example", "examples/ner/train_ner.py", "explicit_replacement",
  "flair NER training example (flair.device override, --gpu flag, use_amp, storage mode 'gpu')",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("if gpu >= 0 and torch.cuda.is_available():", "device_type", "replace", True,
        "if gpu >= 0 and torch.npu.is_available():",
        "False on NPU: the script silently trains on the CPU."),
      C('flair.device = torch.device(f"cuda:{gpu}")', "device_type", "replace", True,
        'flair.device = torch.device(f"npu:{gpu}")', "Device string."),
      C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(gpu)", "Raises without CUDA."),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available():",
        "Only guards extra seeding; flair.set_seed (transformers.set_seed) already seeds NPU generators."),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)", "Silent no-op without CUDA; redundant with torch.manual_seed."),
      C('if flair.device.type == "cuda":', "device_type", "replace", False,
        'if flair.device.type == "npu":', "Final memory log line only."),
      C("torch.cuda.max_memory_allocated(flair.device)", "torch_cuda_api", "replace", False,
        'log.info(f"peak NPU memory: {torch.npu.max_memory_allocated(flair.device) / 2**30:.2f} GiB")',
        "Would log 0 (diagnostic only)."),
  ])

E("flair_transformer_emb", "flair/embeddings/transformer.py", "device_branch_or_abstraction",
  "flair TransformerEmbeddings internals (flair.device placement, ONNX export providers, OOM retry)",
  [
      C('=if flair.device.type == "cuda":', "device_type", "add_branch", False,
        'elif flair.device.type == "npu": providers = [("CANNExecutionProvider", {"device_id": flair.device.index or 0}), "CPUExecutionProvider"]',
        "Without a branch an NPU run exports with CPUExecutionProvider only. onnxruntime's CANN provider is "
        "not covered by the knowledge base (unconfirmed)."),
      C('if self.use_fp16_inference and flair.device.type == "cuda":', "amp", "replace", False,
        'if self.use_fp16_inference and flair.device.type in ("cuda", "npu"):',
        "fp16 inference is silently skipped on NPU; fp32 is correct, only slower."),
      C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", "replace", False,
        "except (torch.cuda.OutOfMemoryError, RuntimeError) as err:  # NPU OOM surfaces as RuntimeError",
        "Which exception class torch_npu raises on device OOM is not confirmed in the knowledge base; if it "
        "is not torch.cuda.OutOfMemoryError the retry never happens."),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()", "Silent no-op without CUDA."),
  ])

# --------------------------------------------------------------------------------------------- fast_crf
E("fastcrf_setup", "setup.py", "kernel_rewrite",
  "setup.py of a small CUDAExtension package (fused Viterbi/forward kernels for CRF taggers)",
  [
      C("if (torch.cuda.is_available() and cuda_version is not None) or force_cuda:", "custom_cuda_extension",
        "add_branch", False,
        'elif os.environ.get("FAST_CRF_NPU", "0") == "1": sources, ext_cls = sources + ["csrc/viterbi_ascendc.cpp"], NpuExtension  # torch_npu.utils.cpp_extension',
        "On an NPU host there is no nvcc/CUDA_HOME, so the build already falls back to the CPU-only "
        "CppExtension. An Ascend C kernel bound through NpuExtension would be a performance rewrite."),
  ])

E("fastcrf_viterbi", "fast_crf/viterbi.py", "kernel_rewrite",
  "Python call sites of a CUDA extension with a pure-PyTorch fallback (Viterbi decode, CRF log-partition)",
  [
      C("if HAS_EXT and emissions.is_cuda and HAS_CUDA_KERNELS:", "custom_cuda_extension", "add_branch", False,
        'elif HAS_NPU_KERNELS and emissions.device.type == "npu": scores, paths = _C.viterbi_forward_npu(emissions.contiguous(), transitions.contiguous(), lengths.to(emissions.device, torch.int32), start_transitions, end_transitions)',
        "NPU tensors are neither CUDA nor CPU, so they already take the @torch.jit.script fallback, which "
        "works on NPU. A fused NPU kernel is a performance rewrite."),
      C("if HAS_CUDA_KERNELS and emissions.is_cuda and emissions.dtype", "custom_cuda_extension", "add_branch", False,
        'if HAS_NPU_KERNELS and emissions.device.type == "npu": return _LogPartitionNpuFn.apply(emissions, transitions, lengths)',
        "Same as viterbi_decode: the logsumexp fallback runs on NPU; fused kernel is perf only."),
      C('device = torch.device("cuda")', "device_type", "replace", True,
        'device = torch.device("npu")', "The benchmark helper hard-codes CUDA tensors."),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()", "Raises without CUDA."),
      C("torch.cuda.synchronize()  # kernels are async", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # kernels are async; wait before reading the clock", "Raises without CUDA."),
  ])

# --------------------------------------------------------------------------------------------- AllenNLP
E("allennlp_checks", "allennlp/common/checks.py", "explicit_replacement",
  "allennlp/common/checks.py (parse_cuda_device, check_for_gpu)",
  [
      C("num_devices_available = cuda.device_count()", "torch_cuda_api", "replace", True,
        "num_devices_available = torch.npu.device_count()",
        "torch.cuda.device_count() is 0 on an NPU host, so every NPU device id raises "
        "'Experiment specified a GPU but none is available'."),
      C("cuda._check_driver()", "torch_cuda_api", "removal", False, None,
        "Only enriches the error message with the CUDA driver error; reached only when no NPU is found."),
      C('["nvidia-smi", "--query-gpu=index,name,memory.total,memory.used", "--format=csv,noheader"],',
        "torch_cuda_api", "replace", False,
        '["npu-smi", "info"],',
        "Diagnostics only; the function already returns 'nvidia-smi not available' when the binary is missing."),
  ])

E("allennlp_nn_util", "allennlp/nn/util.py", "device_branch_or_abstraction",
  "allennlp/nn/util.py (move_to_device, int_to_device, get_device_of, get_range_vector, dist_reduce)",
  [
      C("return torch.device(device)", "device_type", "replace", True,
        'return torch.device("npu", device)',
        "torch.device(<int>) means cuda:<int>. Porting this one helper keeps AllenNLP's integer "
        "'cuda_device' convention (configs, Predictor.from_path, trainer) working unchanged on NPU."),
      C("if not tensor.is_cuda:", "device_type", "replace", True,
        'if tensor.device.type == "cpu":',
        "NPU tensors report is_cuda=False, so get_device_of returns -1 and get_range_vector builds CPU "
        "offsets that are then added to NPU indices (device mismatch in batched_index_select)."),
      C("return torch.cuda.LongTensor(size, device=device).fill_(1).cumsum(0) - 1", "tensor_to_device", "replace", True,
        "return torch.arange(0, size, dtype=torch.long, device=int_to_device(device))",
        "torch.cuda.LongTensor cannot allocate on an NPU."),
      C('device = int_to_device(-1 if dist.get_backend() != "nccl" else torch.cuda.current_device())',
        "dist_backend", "replace", True,
        'device = int_to_device(-1 if dist.get_backend() != "hccl" else torch.npu.current_device())',
        "With backend 'hccl' the comparison sends the reduction tensor to the CPU, which HCCL cannot "
        "all_reduce; backend-string comparisons are not rewritten by transfer_to_npu (knowledge 2.4)."),
      C('device = torch.device(f"cuda:{torch.cuda.current_device()}") if dist.get_backend() == "nccl"',
        "dist_backend", "replace", True,
        'device = torch.device(f"npu:{torch.npu.current_device()}") if dist.get_backend() == "hccl" else torch.device("cpu")',
        "Same backend-string check; broadcast tensors must live on the NPU for HCCL."),
  ])

E("allennlp_trainer", "allennlp/training/gradient_descent_trainer.py", "explicit_replacement",
  "AllenNLP GradientDescentTrainer (torch.cuda.amp, cuda_device defaulting, model.cuda)",
  [
      C("from torch.cuda import amp", "amp", "replace", False,
        "from torch_npu.npu import amp",
        "torch.cuda.amp.autocast and GradScaler both disable themselves without CUDA, so use_amp silently "
        "trains in fp32 on NPU: correct, only slower. torch_npu.npu.amp provides both (knowledge 2.1)."),
      C("if cuda.device_count() > 0:", "torch_cuda_api", "replace", True,
        "if torch.npu.device_count() > 0:",
        "With cuda_device unset the trainer silently picks -1 (CPU) on an NPU host."),
      C("model = model.cuda(cuda_device)", "tensor_to_device", "replace", True,
        "model = model.npu(cuda_device)", "Module.cuda raises without CUDA."),
  ])

E("allennlp_train_cmd", "allennlp/commands/train.py", "explicit_replacement",
  "allennlp train command (_train_worker with mp.spawn, init_process_group nccl/gloo)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "Also needed inside the spawned workers, which re-import this module. " + IMPORT_NOTE),
      C("torch.cuda.set_device(gpu_id)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(gpu_id)", "Raises without CUDA."),
      C('backend="nccl",', "dist_backend", "replace", True,
        'backend="hccl",', "NCCL is unavailable on Ascend; HCCL is the collective backend."),
  ])

E("allennlp_jsonnet", "training_config/rc/bidaf_elmo.jsonnet", "explicit_replacement",
  "AllenNLP jsonnet experiment config (trainer.cuda_device, distributed.cuda_devices, extVar from env)",
  [
      C('std.extVar("CUDA_VISIBLE_DEVICES")', "env_var", "replace", True,
        'local visible_devices = std.split(std.extVar("ASCEND_RT_VISIBLE_DEVICES"), ",");',
        "AllenNLP passes environment variables as extVars; CUDA_VISIBLE_DEVICES is unset on an NPU host "
        "so jsonnet evaluation fails (undefined external variable)."),
  ])

E("allennlp_data_loader", "allennlp/data/data_loaders/multiprocess_data_loader.py", "device_branch_or_abstraction",
  "AllenNLP MultiProcessDataLoader (cuda_device target, pinned batches)",
  [
      C("self.cuda_device = torch.device(cuda_device)", "device_type", "replace", False,
        "self.cuda_device = nn_util.int_to_device(cuda_device)",
        "An int here means cuda:<int>; only reached when a config sets data_loader.cuda_device, which the "
        "docstring advises against (the Trainer passes a torch.device)."),
      C('if self.pin_memory and self.cuda_device.type == "cuda":', "pin_memory", "replace", False,
        'if self.pin_memory and self.cuda_device.type in ("cuda", "npu"):',
        "Pinning is silently skipped for NPU targets (performance only)."),
      C("return batch.pin_memory()", "pin_memory", "replace", False,
        'return batch.pin_memory(device="npu")',
        "Which host allocator an argument-less pin_memory() uses under torch_npu is unconfirmed."),
  ])

E("allennlp_predict", "scripts/batch_predict_srl.py", "explicit_replacement",
  "batch inference script around AllenNLP Predictor.from_path(..., cuda_device=N) for SRL and coref",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("default=0 if torch.cuda.is_available() else -1", "device_type", "replace", True,
        'parser.add_argument("--cuda-device", type=int, default=0 if torch.npu.is_available() else -1)',
        "Default silently becomes -1 (CPU) on an NPU host."),
      C("torch.cuda.set_device(args.cuda_device)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.cuda_device)", "Raises without CUDA."),
      C("torch.cuda.get_device_name(args.cuda_device)", "torch_cuda_api", "replace", True,
        'logger.info("using NPU %d (%s)", args.cuda_device, torch.npu.get_device_name(args.cuda_device))',
        "Raises without CUDA."),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()", "Silent no-op without CUDA (OOM retry still proceeds)."),
      C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
        'logger.info("peak NPU memory %.2f GiB", torch.npu.max_memory_allocated() / 2 ** 30)',
        "Logs 0 (diagnostic only)."),
  ])

# --------------------------------------------------------------------------------------------- Stanza
E("stanza_pipeline", "tools/annotate_corpus.py", "explicit_replacement",
  "corpus annotation script around stanza.Pipeline(lang, use_gpu=..., device=...)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('kwargs["use_gpu"] = args.gpu', "device_type", "replace", False,
        'kwargs["device"] = "npu" if args.gpu else "cpu"',
        "Stanza resolves use_gpu through torch.cuda.is_available(), so the pipeline would run on the CPU; "
        "that Stanza's processors all honour device='npu' is unconfirmed."),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available():", "Guards cache freeing between languages (memory only)."),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()", "Silent no-op without CUDA."),
      C("if args.gpu and not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if args.gpu and not torch.npu.is_available():",
        "Spurious 'CUDA is not available' warning on every NPU run (log only)."),
  ])

E("stanza_tagger_train", "stanza/models/tagger.py", "explicit_replacement",
  "Stanza POS tagger training entry point (args['cuda'] flag)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("parser.add_argument('--cuda', type=bool, default=torch.cuda.is_available())", "device_type", "replace", True,
        "parser.add_argument('--cuda', type=bool, default=torch.npu.is_available())",
        "args.cuda is False on an NPU host, so the Trainer silently stays on the CPU."),
  ])

E("stanza_pos_trainer", "stanza/models/pos/trainer.py", "explicit_replacement",
  "Stanza POS Trainer (use_cuda flag, .cuda() on model and batches)",
  [
      C("inputs = [b.cuda() if b is not None else None for b in batch[:8]]", "tensor_to_device", "replace", True,
        "inputs = [b.npu() if b is not None else None for b in batch[:8]]", "Tensor.cuda raises without CUDA."),
      C("self.model.cuda()", "tensor_to_device", "replace", True,
        "self.model.npu()", "Module.cuda raises without CUDA."),
  ])

E("stanza_common_utils", "stanza/models/common/utils.py", "device_branch_or_abstraction",
  "stanza/models/common/utils.py (set_random_seed, default_device, optimizers)",
  [
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(seed)",
        "Silent no-op without CUDA; torch.manual_seed two lines up already seeds the default generator."),
      C("=if torch.cuda.is_available():", "device_type", "replace", True,
        "if torch.npu.is_available():", "default_device() silently returns 'cpu' on an NPU host."),
      C("return 'cuda'", "device_type", "replace", True, "return 'npu'", "Device string."),
  ])

# --------------------------------------------------------------------------------------------- torchtext / seq2seq
E("seq2seq_attention", "seq2seq/train_attention.py", "explicit_replacement",
  "pytorch-seq2seq style tutorial (torchtext legacy Field/BucketIterator, packed GRU encoder, Bahdanau attention)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.manual_seed(SEED)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(SEED)", "Silent no-op without CUDA; torch.manual_seed already called."),
      C("use_cuda = torch.cuda.is_available() and not args.no_cuda", "device_type", "replace", True,
        "use_npu = torch.npu.is_available() and not args.no_cuda",
        "False on NPU: the tutorial silently trains on the CPU."),
      C('device = torch.device("cuda" if use_cuda else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if use_npu else "cpu")',
        "Device string; BucketIterator(device=device) and .to(device) then follow."),
  ])

E("seq2seq_translate", "seq2seq/translate.py", "explicit_replacement",
  "inference/beam-search script for the attention seq2seq model",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("return ids[:, order].cuda(device=device, non_blocking=True), lens, order", "tensor_to_device", "replace", True,
        "return ids[:, order].to(device, non_blocking=True), lens, order",
        "Tensor.cuda raises without CUDA (and rejects an npu device argument)."),
      C('assert torch.cuda.is_available(), "CUDA requested but not available"', "torch_cuda_api", "replace", True,
        'assert torch.npu.is_available(), "NPU requested but not available"', "Always fails on an NPU host."),
      C('device = torch.device(f"cuda:{args.gpu}")', "device_type", "replace", True,
        'device = torch.device(f"npu:{args.gpu}")', "Device string."),
      C('if device.type == "cuda":', "device_type", "replace", False,
        'if device.type == "npu":',
        "Skipping the final sync only affects timing, and the .tolist() calls already synchronise."),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize(device)", "Raises without CUDA once the guard above admits NPU devices."),
  ])

E("textclf_dataparallel", "textclf/train.py", "explicit_replacement",
  "TextCNN/BiLSTM sentence classification on torchtext legacy datasets with nn.DataParallel",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("if gpu_ids and torch.cuda.is_available():", "device_type", "replace", True,
        "if gpu_ids and torch.npu.is_available():", "Silently falls back to the CPU on an NPU host."),
      C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(args.seed)", "Silent no-op without CUDA; torch.manual_seed already called."),
      C('device = torch.device("cuda", gpu_ids[0])', "device_type", "replace", True,
        'device = torch.device("npu", gpu_ids[0])', "Device string."),
      C("model = nn.DataParallel(model, device_ids=gpu_ids)", "distributed_framework", "replace", True,
        'logger.warning("nn.DataParallel is unsupported on NPU; training on %s only (use DDP + hccl for multi-NPU)", device)',
        "torch.nn.DataParallel is unsupported on Ascend (✘ in the 2.7.1 support list, msFmkTransplt "
        "limitation); single device or DDP with HCCL instead."),
  ])

E("seq2seq_transformer_ddp", "nmt/train_transformer.py", "explicit_replacement",
  "fairseq-free Transformer NMT with torchrun DDP, torch.cuda.amp, sdp_kernel and optional apex FusedAdam",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(local_rank)", "Raises without CUDA."),
      C('dist.init_process_group(backend="nccl", init_method="env://")', "dist_backend", "replace", True,
        'dist.init_process_group(backend="hccl", init_method="env://")', "HCCL replaces NCCL on Ascend."),
      C('device = torch.device("cuda", local_rank)', "device_type", "replace", True,
        'device = torch.device("npu", local_rank)', "Device string."),
      C("if args.bf16 and torch.cuda.get_device_capability(device)[0] < 8:", "device_capability_check", "replace", True,
        "if args.bf16 and not torch.npu.is_bf16_supported():",
        "get_device_capability raises without CUDA, and on NPU it carries no real capability "
        "(TORCH_NPU_DEVICE_CAPABILITY compatibility shim, knowledge 2.8); ask for bf16 support directly."),
      C("collate_fn=collate, num_workers=args.num_workers, pin_memory=True, drop_last=True)", "pin_memory", "replace", False,
        "collate_fn=collate, num_workers=args.num_workers, pin_memory=True, pin_memory_device=\"npu\", drop_last=True)",
        "DataLoader pinning is skipped with a warning when no CUDA is present (performance only)."),
      C("valid_loader = DataLoader(valid, batch_size=batch_size, collate_fn=collate, num_workers=2, pin_memory=True)",
        "pin_memory", "replace", False,
        'valid_loader = DataLoader(valid, batch_size=batch_size, collate_fn=collate, num_workers=2, pin_memory=True, pin_memory_device="npu")',
        "Same as the train loader."),
      C("optimizer = FusedAdam(", "fused_optimizer", "replace", False,
        "optimizer = torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-9, weight_decay=1e-4)",
        "Guarded by HAS_APEX: without NVIDIA apex on the NPU host the script falls back to torch AdamW. "
        "NpuFusedAdamW is the fused NPU equivalent (performance only)."),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp and not args.bf16)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=args.amp and not args.bf16)",
        "With autocast running fp16 on the NPU, a CUDA GradScaler disables itself (no CUDA) and fp16 "
        "gradients go unscaled."),
      C("with torch.cuda.amp.autocast(enabled=args.amp, dtype=amp_dtype):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=args.amp, dtype=amp_dtype):",
        "CUDA autocast disables itself without CUDA: fp32 on NPU, correct but slower."),
      C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):",
        "attention_kernel", "replace", True,
        "with nullcontext():  # SDPA on NPU dispatches to its fused attention kernel by itself",
        "torch.backends.cuda.sdp_kernel is ✘ in Ascend's 2.7.1 support list and flagged UNSUPPORTED by "
        "msFmkTransplt; the runtime failure mode is not documented."),
      C("mem = torch.cuda.max_memory_allocated(device) / 2 ** 30", "torch_cuda_api", "replace", False,
        "mem = torch.npu.max_memory_allocated(device) / 2 ** 30", "Logs 0 (diagnostic only)."),
      C("with torch.no_grad(), torch.cuda.amp.autocast(enabled=args.amp, dtype=amp_dtype):", "amp", "replace", False,
        "with torch.no_grad(), torch.npu.amp.autocast(enabled=args.amp, dtype=amp_dtype):",
        "Validation autocast silently off (performance only)."),
      C("src, tgt_in, tgt_out = src.cuda(), tgt_in.cuda(), tgt_out.cuda()", "tensor_to_device", "replace", True,
        "src, tgt_in, tgt_out = src.to(device), tgt_in.to(device), tgt_out.to(device)",
        "Tensor.cuda raises without CUDA."),
      C("t = torch.tensor([tot, n], device=device, dtype=torch.float64)", "unsupported_op_workaround", "replace", False,
        "t = torch.tensor([tot, n], device=device, dtype=torch.float32)",
        "fp64 support on NPU/HCCL is limited (knowledge: fp64 -> fp32 caveat); whether an fp64 HCCL "
        "all_reduce works is unconfirmed."),
  ])

# --------------------------------------------------------------------------------------------- infra
E("docker_gpu", "docker/Dockerfile.gpu", "explicit_replacement",
  "GPU Dockerfile for NLP training/serving (nvidia/cuda base, cu118 torch, FORCE_CUDA extension build)",
  [
      C("FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", "custom_cuda_extension", "replace", True,
        "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
        "The image needs CANN (libascendcl/libhccl, set_env.sh exports baked into ENV) for torch_npu to "
        "import; the CUDA runtime image has none of it."),
      C("NVIDIA_VISIBLE_DEVICES=all \\", "env_var", "replace", False,
        "ASCEND_VISIBLE_DEVICES=0-7 \\",
        "Read by the NVIDIA container runtime only; on Ascend, devices are mounted with --device "
        "/dev/davinciN or Ascend Docker Runtime's ASCEND_VISIBLE_DEVICES. Ignored otherwise."),
      C("NVIDIA_DRIVER_CAPABILITIES=compute,utility \\", "env_var", "removal", False, None,
        "NVIDIA container runtime setting; ignored on Ascend."),
      C("CUDA_MODULE_LOADING=LAZY \\", "env_var", "removal", False, None, "CUDA runtime knob; no effect on NPU."),
      C("python -m pip install torch==2.1.0 --index-url https://download.pytorch.org/whl/cu118", "custom_cuda_extension",
        "replace", True,
        "&& python -m pip install torch==2.1.0 torch-npu==2.1.0.post17",
        "The cu118 index has no aarch64 wheels (most Ascend servers) and torch-npu pairs with the CPU/PyPI "
        "torch build (knowledge 1.1)."),
      C('RUN TORCH_CUDA_ARCH_LIST="7.0;8.0;8.6" FORCE_CUDA=1 python -m pip install /tmp/fast_crf', "custom_cuda_extension",
        "replace", True,
        "RUN python -m pip install /tmp/fast_crf && rm -rf /tmp/fast_crf",
        "FORCE_CUDA=1 forces the nvcc build of the .cu kernels, which fails without CUDA_HOME/nvcc; "
        "without it setup.py builds the CPU kernels and the Python fallback covers NPU tensors."),
  ])

E("conda_env", "environment.yml", "explicit_replacement",
  "conda environment.yml for AllenNLP/flair/stanza/spaCy experiments (pytorch + cudatoolkit, cupy)",
  [
      C("=- nvidia", "custom_cuda_extension", "removal", False, None,
        "NVIDIA channel only serves CUDA packages."),
      C("=- pytorch=1.12.1", "import_torch_npu", "replace", True,
        "- pytorch=1.11.0",
        "There is no torch_npu for torch 1.12 (knowledge 1.2/1.3); the nearest release that still satisfies "
        "allennlp 2.10 (torch<1.13) is torch 1.11.0 + torch-npu 1.11.0.postN."),
      C("=- cudatoolkit=11.6", "custom_cuda_extension", "removal", False, None,
        "Makes conda pick the CUDA build of pytorch; torch-npu is documented against the CPU build. "
        "Unconfirmed that the CUDA build breaks torch_npu."),
      C("=- cudnn=8.4", "custom_cuda_extension", "removal", False, None, "CUDA-only library; unused on NPU."),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True,
        "- torch-npu==1.11.0.post14",
        "torch-npu wheel for torch 1.11.0 (CANN 8.0.RC2 line; Python 3.9 is supported)."),
      C("- spacy[cuda-autodetect]==3.5.4", "custom_cuda_extension", "replace", False,
        "- spacy==3.5.4",
        "cuda-autodetect installs a CuPy wheel matching the local CUDA; there is none on an Ascend host. "
        "Unconfirmed whether the install fails or just skips."),
      C("- torchtext==0.13.1", "import_torch_npu", "replace", True,
        "- torchtext==0.12.0",
        "torchtext wheels pin an exact torch; 0.13.1 would pull torch 1.12.1 back over the 1.11.0 needed "
        "for torch-npu."),
      C("- cupy-cuda11x==12.1.0", "custom_cuda_extension", "removal", False, None,
        "No Ascend backend for CuPy (knowledge section 6); thinc falls back to NumpyOps."),
      C("- pynvml==11.5.0", "custom_cuda_extension", "removal", False, None,
        "NVML has no NPU equivalent (npu-smi instead)."),
  ])

E("sh_allennlp_ddp", "scripts/train_srl_multinode.sh", "explicit_replacement",
  "multi-node AllenNLP launch script (CUDA_VISIBLE_DEVICES, NCCL_* tuning, nvidia-smi)",
  [
      C("=set -euo pipefail", "import_torch_npu", "npu_only_addition", True,
        "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u",
        "CANN's environment must be sourced for torch_npu/HCCL to load (libhccl.so errors otherwise); "
        "set_env.sh fails under 'set -u' on CANN >= 8.5 (knowledge host-formats 4.2)."),
      C("export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((GPUS_PER_NODE - 1)))", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=$(seq -s, 0 $((GPUS_PER_NODE - 1)))",
        "CUDA_VISIBLE_DEVICES is ignored on NPU. Required here because the echo below must read the "
        "same variable under 'set -u'."),
      C("export NCCL_SOCKET_IFNAME=ens1f0", "env_var", "replace", True,
        "export HCCL_SOCKET_IFNAME=ens1f0",
        "The author pins the bootstrap NIC; NCCL_* is ignored by HCCL, whose default NIC choice may not "
        "reach the primary and then link setup fails (knowledge distributed section 1)."),
      C("export NCCL_IB_HCA=mlx5_0,mlx5_1", "env_var", "removal", False, None,
        "InfiniBand HCA selection has no HCCL counterpart (NPU-to-NPU traffic uses the NPUs' own RoCE ports)."),
      C("export NCCL_IB_GID_INDEX=3", "env_var", "removal", False, None, "Same; ignored on Ascend."),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False,
        "export ASCEND_GLOBAL_LOG_LEVEL=2",
        "Logging only; CANN log level variable (level numbering not confirmed in the knowledge base)."),
      C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False,
        "export HCCL_ASYNC_ERROR_HANDLING=1",
        "torch_npu's HCCL watchdog switch; its default is already 1 per MindCluster docs."),
      C("export NCCL_TIMEOUT=1800", "env_var", "replace", False,
        "export HCCL_EXEC_TIMEOUT=1800",
        "Long pre-all_reduce work; HCCL_EXEC_TIMEOUT defaults to 1836 s, so only needed if raised further."),
      C('echo "node ${NODE_RANK}/${NUM_NODES}: GPUs ${CUDA_VISIBLE_DEVICES}', "env_var", "replace", True,
        'echo "node ${NODE_RANK}/${NUM_NODES}: NPUs ${ASCEND_RT_VISIBLE_DEVICES}, primary ${PRIMARY_ADDR}:${PRIMARY_PORT}"',
        "Under 'set -u' an unset CUDA_VISIBLE_DEVICES aborts the script."),
      C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "torch_cuda_api", "replace", True,
        "npu-smi info",
        "nvidia-smi is absent on an Ascend host; with 'set -e' the script exits (127)."),
  ])

E("sh_sweep", "scripts/sweep_ner.sh", "explicit_replacement",
  "round-robin hyper-parameter sweep over GPUs for flair and spaCy NER (nvidia-smi, per-job CUDA_VISIBLE_DEVICES)",
  [
      C("=set -e", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment for the torch_npu jobs."),
      C("NUM_GPUS=$(nvidia-smi --list-gpus | wc -l)", "torch_cuda_api", "replace", True,
        "NUM_GPUS=$(npu-smi info -l | awk '/Total Count/{print $NF}')",
        "Without nvidia-smi the pipeline yields 0 devices, GPUS is empty and run() divides by zero."),
      C('used=$(nvidia-smi -i "${g}" --query-gpu=memory.used --format=csv,noheader,nounits)', "torch_cuda_api",
        "replace", True,
        'used=$(npu-smi info -t usages -i "${g}" | awk -F: \'/HBM Capacity/{c=$2} /HBM Usage Rate/{r=$2} END{print int(c*r/100)}\')',
        "Command not found aborts the script under 'set -e'. npu-smi -i takes the NPU ID, not the logic id "
        "(knowledge host-formats 2.6)."),
      C('CUDA_VISIBLE_DEVICES=${gpu} "$@"', "env_var", "replace", True,
        'ASCEND_RT_VISIBLE_DEVICES=${gpu} "$@" > "${OUT}/${name}.log" 2>&1 &',
        "Ignored on NPU: every job then runs on npu:0 (they all pass --gpu 0), so parallel jobs pile onto "
        "one card."),
      C("=--gpu-id 0", "device_type", "replace", True,
        "--gpu-id -1",
        "spaCy's --gpu-id 0 calls require_gpu (CuPy) and aborts on an NPU host."),
  ])
