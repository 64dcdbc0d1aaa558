# Labels for probe349 (visual place recognition / image-based localization, CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit; see README.md for the policy.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# Shared notes ---------------------------------------------------------------------------------
IMPORT_NOTE = ("entry script: add `import torch_npu` after `import torch` so the 'npu' device and torch.npu exist; "
               "mandatory before torch_npu 2.5.1 (this stack pins 2.1.x), recommended after (knowledge §1.1)")
PIN_NOTE = ("pin_memory without pin_memory_device only pins for CUDA; on an NPU host pinning is silently skipped "
            "(performance only; exact torch_npu DataLoader behaviour unconfirmed)")
EMPTY_CACHE_NOTE = ("torch.cuda.empty_cache() is a silent no-op when CUDA is not initialised; NPU cache is never "
                    "released (memory/perf only)")
MEMSTAT_NOTE = ("torch.cuda memory counters report 0 on an NPU host (CUDA never initialised); diagnostic output only "
                "(behaviour unconfirmed in knowledge)")
SEED_NOTE = ("torch.cuda seeding is a queued no-op without CUDA; torch.manual_seed already seeds the NPU generator "
             "via the privateuse1 hook, so this is cosmetic (torch.npu.manual_seed_all for symmetry)")
AMP_NOTE = ("torch.cuda.amp on NPU tensors silently runs without autocast / with a disabled scaler (fp32): "
            "results stay correct, speed/memory lost; NPU form torch_npu.npu.amp / torch.amp('npu') (knowledge §3.7 TSV)")
FAISS_GPU_NOTE = ("faiss GPU indexes are CUDA-only (faiss wiki: 'GPU support is via CUDA'); on an NPU host "
                  "StandardGpuResources does not exist in faiss-cpu / finds no CUDA device. Not covered by "
                  "/work/shared/knowledge - porter's judgement")

E("netvlad-main", "main.py", "device_branch_or_abstraction",
  "pytorch-NetVLAD main.py (train / test / cluster in one script, --nocuda flag, HDF5 feature cache)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("collate_fn=dataset.collate_fn, pin_memory=cuda)", "pin_memory", "replace", False,
      "collate_fn=dataset.collate_fn, pin_memory=cuda, pin_memory_device='npu' if cuda else '')", PIN_NOTE),
    C("print('Allocated:', torch.cuda.memory_allocated())", "torch_cuda_api", "replace", False,
      "print('Allocated:', torch.npu.memory_allocated())", MEMSTAT_NOTE),
    C("print('Cached:', torch.cuda.memory_cached())", "torch_cuda_api", "replace", False,
      "print('Cached:', torch.npu.memory_reserved())", MEMSTAT_NOTE),
    C("print('Allocated (iter):', torch.cuda.memory_allocated())", "torch_cuda_api", "replace", False,
      "print('Allocated (iter):', torch.npu.memory_allocated())", MEMSTAT_NOTE),
    C("print('Cached (iter):', torch.cuda.memory_cached())", "torch_cuda_api", "replace", False,
      "print('Cached (iter):', torch.npu.memory_reserved())", MEMSTAT_NOTE),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("=pin_memory=cuda)", "pin_memory", "replace", False,
      "pin_memory=cuda, pin_memory_device='npu' if cuda else '')", PIN_NOTE),
    C("=pin_memory=cuda,", "pin_memory", "replace", False,
      "pin_memory=cuda, pin_memory_device='npu' if cuda else '',", PIN_NOTE),
    C("if cuda and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if cuda and not torch.npu.is_available():",
      "torch.cuda.is_available() is False on an NPU host, so the default run (no --nocuda) raises 'No GPU found'"),
    C('device = torch.device("cuda" if cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if cuda else "cpu")',
      "every .to(device) in the script follows this; 'cuda' device fails without CUDA"),
    C("torch.cuda.manual_seed(opt.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(opt.seed)", SEED_NOTE),
    C("shuffle=False, pin_memory=cuda)", "pin_memory", "replace", False,
      "shuffle=False, pin_memory=cuda, pin_memory_device='npu' if cuda else '')", PIN_NOTE),
    C("if opt.nGPU > 1 and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
      "if opt.nGPU > 1 and torch.npu.device_count() > 1:",
      "returns 0 on an NPU host so --nGPU>1 silently trains on one device (perf only); only worth porting together "
      "with the DataParallel lines below"),
    C("model.encoder = nn.DataParallel(model.encoder)", "distributed_framework", "removal", False, None,
      "torch.nn.DataParallel is unsupported on Ascend (2.7.1 list ✘, msFmkTransplt README: use DDP); dead code on NPU "
      "while the guard uses torch.cuda.device_count(), but it breaks as soon as the guard is ported"),
    C("model.pool = nn.DataParallel(model.pool)", "distributed_framework", "removal", False, None,
      "same as the encoder wrapper: DataParallel is unsupported on Ascend; multi-NPU needs DDP"),
])

E("patchnetvlad-extract", "feature_extract.py", "device_branch_or_abstraction",
  "Patch-NetVLAD feature_extract.py (ini config, --nocuda, PCA-whitened global + patch features to .npy)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("shuffle=False, pin_memory=(not opt.nocuda))", "pin_memory", "replace", False,
      "shuffle=False, pin_memory=(not opt.nocuda), pin_memory_device='' if opt.nocuda else 'npu')", PIN_NOTE),
    C("if cuda and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if cuda and not torch.npu.is_available():",
      "torch.cuda.is_available() is False on an NPU host: the default run raises 'No GPU found'"),
    C('device = torch.device("cuda" if cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if cuda else "cpu")', "model and batches are moved with this device"),
    C("torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
      "if int(config['global_params']['nGPU']) > 1 and torch.npu.device_count() > 1:",
      "0 on an NPU host, so nGPU>1 silently runs on one device (perf only)"),
    C("model.encoder = nn.DataParallel(model.encoder)", "distributed_framework", "removal", False, None,
      "nn.DataParallel unsupported on Ascend (2.7.1 list ✘); unreachable until the guard is ported"),
    C("model.pool = nn.DataParallel(model.pool)", "distributed_framework", "removal", False, None,
      "nn.DataParallel unsupported on Ascend (2.7.1 list ✘); unreachable until the guard is ported"),
    C("torch.cuda.empty_cache()  # release cached GPU memory", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # release cached NPU memory before the next run in the same process", EMPTY_CACHE_NOTE),
])

E("patchnetvlad-match", "feature_match.py", "device_branch_or_abstraction",
  "Patch-NetVLAD feature_match.py (faiss CPU retrieval + patch-level re-ranking with tensors on `device`)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if cuda and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if cuda and not torch.npu.is_available():",
      "default run raises 'No GPU found' on an NPU host"),
    C('device = torch.device("cuda" if cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if cuda else "cpu")',
      "local features are created with torch.tensor(..., device=device); 'cuda' fails without CUDA"),
    C("torch.cuda.empty_cache()  # release cached GPU memory", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # release cached NPU memory before the next run in the same process", EMPTY_CACHE_NOTE),
])

AUGDEV_NOTE = ("'cuda' here is only a switch meaning 'augment batches on the training device' (train.py compares the "
               "string, the dataset skips CPU augmentation unless it is 'cpu'); keeping 'cuda' still works on NPU, so "
               "renaming is cosmetic - but it must be renamed in parser.py and train.py together")
E("cosplace-parser", "parser.py", "explicit_replacement",
  "CosPlace parser.py (argparse with --device / --augmentation_device choices cuda/cpu)", [
    C('"--augmentation_device", type=str, default="cuda",', "device_type", "replace", False,
      'parser.add_argument("--augmentation_device", type=str, default="npu",', AUGDEV_NOTE),
    C('=choices=["cuda", "cpu"],', "device_type", "replace", False, 'choices=["npu", "cuda", "cpu"],', AUGDEV_NOTE),
    C('"--device", type=str, default="cuda",', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu",',
      "args.device feeds every model.to / tensor.to in train.py and test.py; 'cuda' fails on an NPU host"),
    C('choices=["cuda", "cpu"], help="_")', "device_type", "replace", True,
      'choices=["npu", "cuda", "cpu"], help="_")',
      "argparse rejects `--device npu` unless it is in choices"),
])

E("cosplace-train", "train.py", "explicit_replacement",
  "CosPlace train.py (groups of classes with per-group CosFace classifiers, GPU-side augmentation, optional AMP16)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("There are {torch.cuda.device_count()} GPUs", "torch_cuda_api", "replace", False,
      'logging.info(f"There are {torch.npu.device_count()} NPUs and {multiprocessing.cpu_count()} CPUs.")',
      "log line only; torch.cuda.device_count() reports 0 on an NPU host"),
    C("model_state_dict = torch.load(args.resume_model)", "tensor_to_device", "replace", False,
      "model_state_dict = torch.load(args.resume_model, map_location=args.device)",
      "a --resume_model trained on CUDA deserialises onto 'cuda' and fails on an NPU host; fails only for "
      "CUDA-saved files, NPU-saved ones load fine (the best_model.pth reload at the end is left alone)"),
    C('if args.augmentation_device == "cuda":  # augmentations', "device_type", "replace", False,
      'if args.augmentation_device == "npu":  # augmentations are applied to whole batches on the training device',
      AUGDEV_NOTE),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler()", AMP_NOTE),
    C('pin_memory=(args.device == "cuda"), drop_last=True)', "pin_memory", "replace", False,
      'pin_memory=(args.device == "npu"), pin_memory_device="npu", drop_last=True)',
      "the comparison is False for 'npu', so batches are never pinned (perf only)"),
    C('=if args.augmentation_device == "cuda":', "device_type", "replace", False,
      'if args.augmentation_device == "npu":', AUGDEV_NOTE),
    C("with torch.cuda.amp.autocast():", "amp", "replace", False,
      "with torch.npu.amp.autocast():", AMP_NOTE),
    C("Peak GPU memory so far: {torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      'logging.debug(f"Peak NPU memory so far: {torch.npu.max_memory_allocated() / 2**30:.2f} GiB")', MEMSTAT_NOTE),
])

E("cosplace-test", "test.py", "explicit_replacement",
  "CosPlace test.py (descriptor extraction + faiss IndexFlatL2 recall@N)", [
    C('batch_size=batch_size, pin_memory=(args.device == "cuda"))', "pin_memory", "replace", False,
      'batch_size=batch_size, pin_memory=(args.device == "npu"), pin_memory_device="npu")',
      "comparison is False for 'npu', so database batches are never pinned (perf only)"),
    C('=pin_memory=(args.device == "cuda"))', "pin_memory", "replace", False,
      'pin_memory=(args.device == "npu"), pin_memory_device="npu")',
      "same for the batch-size-1 query loader (perf only)"),
])

E("cosplace-util", "commons.py", "explicit_replacement",
  "CosPlace commons/util helpers (InfiniteDataLoader, make_deterministic, setup_logging, checkpoint resume)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)", SEED_NOTE),
])

E("eigenplaces-eval", "eval.py", "device_branch_or_abstraction",
  "EigenPlaces eval.py (torch.hub trained model, recall@N with faiss, optional latency benchmark)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('if args.device == "cuda":', "device_type", "replace", True,
      'if args.device in ("cuda", "npu"):',
      "NPU kernels are asynchronous too; once the device is 'npu' this guard skips the sync and the reported "
      "latency only measures kernel launch (silently wrong numbers)"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "raises on an NPU host (no CUDA) once the guard above lets it run"),
    C('args.device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "add_branch", True,
      'args.device = "npu" if torch.npu.is_available() else ("cuda" if torch.cuda.is_available() else "cpu")',
      "silently evaluates on CPU on an NPU host"),
])

E("mixvpr-main", "main.py", "explicit_replacement",
  "MixVPR / GSV-Cities main.py (LightningModule VPRModel, pl.Trainer(accelerator='gpu', precision=16))", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("accelerator='gpu',", "device_type", "replace", True,
      "accelerator='npu',  # NPU accelerator registered with Lightning (e.g. an Ascend plugin)",
      "Lightning's 'gpu' accelerator means CUDA/MPS and raises when no GPU is found; Lightning has no built-in Ascend "
      "accelerator, so a registered NPU accelerator is needed (plugin choice unconfirmed in knowledge)"),
    C("precision=16,", "amp", "replace", False,
      "precision='16-mixed',  # check the NPU accelerator plugin drives torch.autocast('npu')",
      "Lightning's native 16-bit plugin autocasts for CUDA; with an NPU accelerator it may silently train in fp32 "
      "(perf only; unconfirmed)"),
])

E("mixvpr-validation", "utils/validation.py", "explicit_replacement",
  "MixVPR / GSV-Cities utils/validation.py (faiss recall@K with optional faiss_gpu, PrettyTable output)", [
    C("=if faiss_gpu:", "unsupported_op_workaround", "replace", False,
      "if faiss_gpu and hasattr(faiss, 'StandardGpuResources') and faiss.get_num_gpus() > 0:",
      FAISS_GPU_NOTE + "; every caller in the repo passes faiss_gpu=False, so this only guards a trap"),
    C("print_results=True, device='cuda',", "device_type", "replace", True,
      "def get_validation_recalls_torch(r_list, q_list, k_values, gt, print_results=True, device='npu',",
      "callers that rely on the default move descriptors to 'cuda', which fails on an NPU host"),
])

E("mixvpr-aggregator", "models/aggregators/mixvpr.py", "explicit_replacement",
  "MixVPR models/aggregators/mixvpr.py (FeatureMixer aggregator + a __main__ self-test that times it on the GPU)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the __main__ self-test is run directly (python -m models.aggregators.mixvpr), so it is its own entry point and "
      "needs torch.npu; normal imports get torch_npu from main.py"),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "starter = torch.npu.Event(enable_timing=True)", "CUDA events cannot be recorded on an NPU host; torch.npu.Event is the NPU form (2.7.1 list)"),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "ender = torch.npu.Event(enable_timing=True)", "same as starter"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "raises without CUDA; needed so elapsed_time covers the NPU work"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "False on an NPU host, so the self-test silently benchmarks the CPU instead of the accelerator"),
    C("agg = agg.cuda().eval()", "tensor_to_device", "replace", True, "agg = agg.npu().eval()",
      "Module.cuda() fails without CUDA"),
    C("x = x.cuda()", "tensor_to_device", "replace", True, "x = x.npu()", "Tensor.cuda() fails without CUDA"),
])

E("anyloc-utilities", "utilities.py", "device_branch_or_abstraction",
  "AnyLoc utilities.py (DinoV2ExtractFeatures forward hook, VLAD with cache, faiss recall@K)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)", SEED_NOTE),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("=if use_gpu:", "unsupported_op_workaround", "replace", False,
      "if use_gpu and hasattr(faiss, 'StandardGpuResources') and faiss.get_num_gpus() > 0:",
      FAISS_GPU_NOTE + "; the caller's default is fixed in dino_v2_global_vpr.py, this only defuses the flag"),
])

E("anyloc-global-vpr", "scripts/dino_v2_global_vpr.py", "device_branch_or_abstraction",
  "AnyLoc scripts/dino_v2_global_vpr.py (tyro dataclass CLI, DINOv2 ViT-G dense features -> VLAD -> faiss recall)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("faiss_gpu: bool = True", "unsupported_op_workaround", "replace", True,
      "faiss_gpu: bool = False  # faiss GPU indexes are CUDA-only; exact CPU search on NPU hosts",
      FAISS_GPU_NOTE + "; the default run reaches faiss.StandardGpuResources() in get_top_k_recall"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C('print(f"Using GPU: {torch.cuda.get_device_name(device)}")', "torch_cuda_api", "replace", True,
      'print(f"Using NPU: {torch.npu.get_device_name(device)}")',
      "get_device_name initialises CUDA and raises on an NPU host, aborting main() before any work"),
    C("torch.cuda.empty_cache()  # faiss-gpu scratch memory", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C('wandb.log({"peak_gpu_mem_gb": torch.cuda.max_memory_allocated() / 1e9})', "torch_cuda_api", "replace", False,
      'wandb.log({"peak_npu_mem_gb": torch.npu.max_memory_allocated() / 1e9})', MEMSTAT_NOTE),
])

E("anyloc-configs", "configs.py", "explicit_replacement",
  "AnyLoc configs.py (module-level `device`, ProgArgs / BaseDatasetArgs dataclasses imported by every script)", [
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
      "imported by every AnyLoc script (extractor, images, VLAD); 'cuda' fails on an NPU host"),
])

E("anyloc-demo", "demo/anyloc_vlad_generate.py", "explicit_replacement",
  "AnyLoc demo script (pre-computed domain vocabulary, DINOv2 ViT-G/14 layer-31 value facet -> VLAD .npy files)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: --gpu silently has no effect and the job lands on NPU 0"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")',
      "extractor and images go to this device; 'cuda:0' fails on an NPU host"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "unlike the read-only counters, reset_peak_memory_stats initialises CUDA and raises on an NPU host "
      "(torch.cuda memory API behaviour, not in knowledge)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C('print(f"Peak GPU memory: {torch.cuda.max_memory_allocated(device)', "torch_cuda_api", "replace", False,
      'print(f"Peak NPU memory: {torch.npu.max_memory_allocated(device) / 2**30:.1f} GiB")', MEMSTAT_NOTE),
])

HLOC_IMPORT_NOTE = ("hloc modules run as `python -m hloc.<module>` and are imported from pipeline notebooks; "
                    "torch_npu must be imported before the 'npu' device is used (or once in hloc/__init__.py); "
                    "mandatory before torch_npu 2.5.1, recommended after (knowledge §1.1)")
HLOC_DEVICE_NOTE = ("falls back to CPU on an NPU host: feature extraction / matching silently runs on the CPU "
                    "(orders of magnitude slower, and DISK/ALIKED/LightGlue become impractical)")
E("hloc-extract", "hloc/extract_features.py", "device_branch_or_abstraction",
  "hloc extract_features.py (named confs for local + global features, ImageDataset, HDF5 export)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", HLOC_IMPORT_NOTE),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "add_branch", True,
      'device = "npu" if torch.npu.is_available() else ("cuda" if torch.cuda.is_available() else "cpu")',
      HLOC_DEVICE_NOTE),
    C("shuffle=False, pin_memory=True)", "pin_memory", "replace", False,
      "loader = torch.utils.data.DataLoader(dataset, num_workers=1, shuffle=False, pin_memory=True, "
      "pin_memory_device=device if device != 'cpu' else '')", PIN_NOTE),
])

E("hloc-retrieval", "hloc/pairs_from_retrieval.py", "device_branch_or_abstraction",
  "hloc pairs_from_retrieval.py (global-descriptor similarity + top-k pairs, self-match masking)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", HLOC_IMPORT_NOTE),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "add_branch", True,
      'device = "npu" if torch.npu.is_available() else ("cuda" if torch.cuda.is_available() else "cpu")',
      "the (num_queries x num_db) similarity matmul and top-k silently run on the CPU on an NPU host"),
])

E("hloc-match", "hloc/match_features.py", "device_branch_or_abstraction",
  "hloc match_features.py (matcher confs, FeaturePairsDataset from HDF5, threaded HDF5 writer queue)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", HLOC_IMPORT_NOTE),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "add_branch", True,
      'device = "npu" if torch.npu.is_available() else ("cuda" if torch.cuda.is_available() else "cpu")',
      HLOC_DEVICE_NOTE),
    C("batch_size=1, shuffle=False, pin_memory=True)", "pin_memory", "replace", False,
      "loader = torch.utils.data.DataLoader(dataset, num_workers=5, batch_size=1, shuffle=False, pin_memory=True, "
      "pin_memory_device=device if device != 'cpu' else '')", PIN_NOTE),
])

E("lightglue-core", "lightglue/lightglue.py", "device_branch_or_abstraction",
  "LightGlue lightglue/lightglue.py (used by hloc matchers: flash/SDPA attention, adaptive depth/width, torch.compile)", [
    C("@torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)", "amp", "replace", False,
      "@torch_npu.npu.amp.custom_fwd(cast_inputs=torch.float32)",
      "the CUDA decorator only casts under CUDA autocast; with conf.mp on NPU the keypoint normalisation would "
      "run in fp16. Irrelevant with the default mp=False (needs `import torch_npu` in this module)"),
    C("torch.backends.cuda.enable_flash_sdp(allow_flash)", "attention_kernel", "removal", False, None,
      "torch.backends.cuda.*_sdp switches are ✘ on Ascend (2.7.1 list); a global CUDA SDPA backend flag with no "
      "effect on NPU (whether it raises there is unconfirmed)"),
    C('if self.enable_flash and q.device.type == "cuda":', "attention_kernel", "replace", False,
      'if self.enable_flash and q.device.type in ("cuda", "npu"):',
      "on NPU the code falls through to fp32 F.scaled_dot_product_attention, which is correct; taking the fp16 "
      "path lets SDPA dispatch to the NPU fused attention (perf only; SDPA ✔ with fp16/bool-mask limits)"),
    C('if self.flash is not None and qk0.device.type == "cuda":', "attention_kernel", "replace", False,
      'if self.flash is not None and qk0.device.type in ("cuda", "npu"):',
      "cross-attention falls back to explicit einsum+softmax on NPU (correct, slower); perf only"),
    C('"cuda": 1024,', "device_type", "add_branch", True, '"cuda": 1024, "npu": 1024,',
      "pruning_min_kpts() indexes this dict with device.type and is called on every forward: KeyError 'npu' "
      "with the default width_confidence"),
    C('def compile(self, mode="reduce-overhead"', "compile_mode", "replace", False,
      'def compile(self, mode="default", static_lengths=[256, 512, 768, 1024, 1280, 1536]):',
      "reduce-overhead means CUDA graphs; on NPU the equivalent is the npugraphs backend (2.7.1 list). Only used "
      "when the caller opts in to .compile(); NPU inductor behaviour unconfirmed"),
    C("torch._inductor.cudagraph_mark_step_begin()", "compile_mode", "removal", False, None,
      "CUDA-graph-tree bookkeeping for reduce-overhead; meaningless on NPU (opt-in compile path only)"),
    C('with torch.autocast(enabled=self.conf.mp, device_type="cuda"):', "amp", "replace", False,
      'with torch.autocast(enabled=self.conf.mp, device_type=data["image0"]["keypoints"].device.type):',
      "CUDA autocast does not touch NPU ops, so mp=True silently runs fp32 on NPU; mp defaults to False"),
    C('if self.conf.flash and FLASH_AVAILABLE and device.type == "cuda":', "device_type", "replace", False,
      'if self.conf.flash and FLASH_AVAILABLE and device.type in ("cuda", "npu"):',
      "alternative fix for the same KeyError as the thresholds dict; not needed once the dict has an 'npu' entry"),
])

DP_MODULE_NOTE = ("only valid while the model is wrapped in DataParallel; once the (required) DataParallel removal "
                  "is done, `model.module` raises AttributeError on the --aggregation crn path")
E("vgb-train", "train.py", "explicit_replacement",
  "deep-visual-geo-localization-benchmark train.py (triplet mining per cache loop, NetVLAD/CRN heads, DataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('logging.info(f"Using {torch.cuda.device_count()} GPUs', "torch_cuda_api", "replace", False,
      'logging.info(f"Using {torch.npu.device_count()} NPUs and {multiprocessing.cpu_count()} CPUs")',
      "log line only; reports 0 devices on an NPU host"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "removal", True, None,
      "unconditional nn.DataParallel: ✘ on Ascend (2.7.1 list, msFmkTransplt README); its scatter/replicate use "
      "CUDA comm ops. Single-NPU training needs no wrapper, multi-NPU needs DDP"),
    C("crn_params = list(model.module.aggregation.crn.parameters())", "distributed_framework", "replace", True,
      "crn_params = list(model.aggregation.crn.parameters())", DP_MODULE_NOTE),
    C("net_params = list(model.module.backbone.parameters()) + \\", "distributed_framework", "replace", True,
      "net_params = list(model.backbone.parameters()) + \\", DP_MODULE_NOTE),
    C("list([m[1] for m in model.module.aggregation.named_parameters()", "distributed_framework", "replace", True,
      "list([m[1] for m in model.aggregation.named_parameters() if not m[0].startswith('crn')])", DP_MODULE_NOTE),
    C("if torch.cuda.device_count() >= 2:", "torch_cuda_api", "replace", False,
      "if False:  # synchronized BN for DataParallel does not apply on NPU (no DataParallel)",
      "0 on an NPU host, so the block is skipped; porting it to torch.npu.device_count() would re-enable a "
      "DataParallel-only code path"),
    C("model = convert_model(model)", "distributed_framework", "removal", False, None,
      "Synchronized-BatchNorm for DataParallel relies on DataParallel replication (unsupported on Ascend); "
      "unreachable on NPU while the guard uses torch.cuda"),
    C("model = model.cuda()", "tensor_to_device", "replace", False, "model = model.to(args.device)",
      "Module.cuda() fails without CUDA; unreachable on NPU while the guard uses torch.cuda"),
    C('pin_memory=(args.device == "cuda"),', "pin_memory", "replace", False,
      'pin_memory=(args.device == "npu"), pin_memory_device="npu",',
      "comparison is False for 'npu', so triplet batches are never pinned (perf only)"),
])

E("vgb-datasets", "datasets_ws.py", "explicit_replacement",
  "deep-visual-geo-localization-benchmark datasets_ws.py (BaseDataset / TripletsDataset, cache-based partial mining)", [
    C('pin_memory=(args.device == "cuda"))', "pin_memory", "replace", False,
      'pin_memory=(args.device == "npu"), pin_memory_device="npu")',
      "comparison is False for 'npu', so cache batches are never pinned (perf only)"),
])

E("vgb-parser", "parser.py", "explicit_replacement",
  "deep-visual-geo-localization-benchmark parser.py (argparse + cross-argument validation)", [
    C('parser.add_argument("--device", type=str, default="cuda", choices=["cuda", "cpu"])', "device_type", "replace",
      True, 'parser.add_argument("--device", type=str, default="npu", choices=["npu", "cuda", "cpu"])',
      "args.device is used for every .to() in train/test/datasets_ws; 'cuda' fails on an NPU host and argparse "
      "rejects 'npu' without the choices change"),
    C("if torch.cuda.device_count() >= 2 and args.criterion in", "torch_cuda_api", "replace", False,
      "if torch.npu.device_count() >= 2 and args.criterion in ['sare_joint', \"sare_ind\"]:",
      "returns 0 on an NPU host so the check never fires; moot once DataParallel is removed (no replica split), "
      "kept for symmetry"),
])

E("vpr-ddp", "train_ddp.py", "explicit_replacement",
  "DDP trainer for a DINOv2 + SALAD-style aggregator on GSV-Cities (torchrun, NCCL, autocast bf16/fp16, faiss-gpu validation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
      'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
      "NCCL variable is ignored by HCCL; torch_npu's watchdog reads HCCL_ASYNC_ERROR_HANDLING (default 1 per "
      "MindCluster doc, knowledge ascend-distributed §1), so this is a silent no-op"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "raises without CUDA; one process per NPU needs torch.npu.set_device (knowledge ascend-distributed §6.1)"),
    C('dist.init_process_group(backend="nccl", init_method="env://",', "dist_backend", "replace", True,
      'dist.init_process_group(backend="hccl", init_method="env://",', "NCCL is not available on Ascend; HCCL is the backend"),
    C('return torch.device("cuda", args.local_rank)', "device_type", "replace", True,
      'return torch.device("npu", args.local_rank)', "the training device returned to main(); 'cuda' fails on an NPU host"),
    C('use_fused = "fused" in inspect.signature', "fused_optimizer", "replace", False,
      'use_fused = "fused" in inspect.signature(torch.optim.AdamW).parameters and device.type in ("cuda", "npu")',
      "falls back to the unfused (foreach) AdamW on NPU: correct, slower. _fused_adamw_ has an NPU kernel (ops list); "
      "torch_npu.optim.NpuFusedAdamW is the other option (perf only)"),
    C('if dist.get_backend() == "nccl":', "dist_backend", "replace", True, 'if dist.get_backend() in ("nccl", "hccl"):',
      "backend-string comparisons are not rewritten by any tool (msFmkTransplt README); with 'hccl' the host tensors "
      "are never moved to the device and the HCCL all_gather gets CPU tensors"),
    C("local_desc, local_idx = local_desc.cuda(), local_idx.cuda()", "tensor_to_device", "replace", True,
      "local_desc, local_idx = local_desc.npu(), local_idx.npu()", "Tensor.cuda() fails without CUDA once the branch above is taken"),
    C("num_workers=args.num_workers, pin_memory=True)", "pin_memory", "replace", False,
      "dl = DataLoader(ds, batch_size=64, sampler=sampler, num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu')",
      PIN_NOTE),
    C('with torch.autocast("cuda", dtype=amp_dtype, enabled=args.amp):', "amp", "replace", False,
      'with torch.autocast("npu", dtype=amp_dtype, enabled=args.amp):', AMP_NOTE),
    C("res = faiss.StandardGpuResources()", "unsupported_op_workaround", "removal", True, None, FAISS_GPU_NOTE),
    C("index = faiss.index_cpu_to_gpu(res, args.local_rank, index)", "unsupported_op_workaround", "removal", True, None,
      FAISS_GPU_NOTE + "; exact CPU IndexFlatIP is the replacement"),
    C("amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16", "device_capability_check",
      "replace", True, "amp_dtype = torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
      "torch.cuda.* keeps its CUDA implementation without transfer_to_npu (knowledge §2.1): on torch 2.1 it calls "
      "current_device() and raises, on newer torch it returns False and silently picks fp16 on bf16-capable A2"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp and amp_dtype == torch.float16)", AMP_NOTE),
    C("num_workers=args.num_workers, pin_memory=True, drop_last=True,", "pin_memory", "replace", False,
      "num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu', drop_last=True,", PIN_NOTE),
    C('with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=args.amp):', "amp", "replace", False,
      'with torch.autocast(device_type="npu", dtype=amp_dtype, enabled=args.amp):', AMP_NOTE),
    C('f"mem {torch.cuda.max_memory_allocated() / 2**30:.1f}G")', "torch_cuda_api", "replace", False,
      'f"mem {torch.npu.max_memory_allocated() / 2**30:.1f}G")', MEMSTAT_NOTE),
])

E("dinov2-attention", "models/backbones/dinov2/layers/attention.py", "kernel_rewrite",
  "DINOv2 layers/attention.py as vendored by DINOv2-based VPR repos (SALAD, BoQ, AnyLoc): xFormers MemEffAttention with fallback", [
    C("attn = q @ k.transpose(-2, -1)", "attention_kernel", "replace", False,
      "x = F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_drop.p if self.training else 0.0, scale=1.0)"
      "  # q is pre-scaled; replaces the softmax/dropout/matmul lines below",
      "xFormers has no NPU backend, so on NPU every MemEffAttention takes this plain path: correct but it "
      "materialises B x heads x N x N (ViT-G at AnyLoc resolutions). SDPA dispatches to the NPU fused attention "
      "(2.7.1 list: ✔, fp16/bf16/fp32, head dim <= 512); torch_npu.npu_fusion_attention(..., 'BNSD') is the "
      "explicit alternative. Performance/memory only"),
])

E("dinov2-swiglu", "models/backbones/dinov2/layers/swiglu_ffn.py", "kernel_rewrite",
  "DINOv2 layers/swiglu_ffn.py (ViT-g/14 SwiGLU FFN, xFormers fused SwiGLU with plain fallback)", [
    C("hidden = F.silu(x1) * x2", "npu_fused_op", "replace", False,
      "hidden = torch_npu.npu_swiglu(x12, dim=-1)",
      "the fused xFormers SwiGLU is unavailable on NPU, so the unfused fallback runs (correct). npu_swiglu splits its "
      "input in half along dim and computes SiLU(a)*b, matching chunk(2) here (knowledge §5, beta API; needs "
      "`import torch_npu`). Performance only"),
])

SETENV_NOTE = ("torch_npu needs the CANN environment (libhccl.so, ASCEND_OPP_PATH ...); without it `import torch_npu` "
               "fails with \"Please run 'source set_env.sh' in the CANN installation path\" (knowledge ascend-host-formats §3)")
VISIBLE_NOTE = ("CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; the process silently sees every NPU and "
                "device selection is lost (ASCEND_RT_VISIBLE_DEVICES, knowledge ascend-distributed §1)")
E("netvlad-sh", "scripts/train_pitts30k.sh", "explicit_replacement",
  "pytorch-NetVLAD style launcher (cluster -> train -> test on Pittsburgh 30k, CUDA_VISIBLE_DEVICES, nvidia-smi check)", [
    C("=set -e", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SETENV_NOTE),
    C("export CUDA_VISIBLE_DEVICES=$GPU", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=$GPU", VISIBLE_NOTE),
    C("nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv", "device_capability_check",
      "replace", True, "npu-smi info",
      "nvidia-smi does not exist on an Ascend host; under `set -e` the script aborts here"),
])

E("ddp-sh", "scripts/dist_train.sh", "explicit_replacement",
  "torchrun launcher for a DDP VPR trainer (NCCL env, nvidia-smi device count, multi-node variables)", [
    C("=set -euo pipefail", "env_var", "npu_only_addition", True,
      "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u",
      SETENV_NOTE + "; set_env.sh fails under `set -u` (CMAKE_PREFIX_PATH unbound, knowledge §3), hence the set +u"),
    C("GPUS_PER_NODE=${GPUS_PER_NODE:-$(nvidia-smi -L | wc -l)}", "device_capability_check", "replace", True,
      "GPUS_PER_NODE=${GPUS_PER_NODE:-$(ls /dev/davinci[0-9]* | wc -l)}",
      "nvidia-smi is missing on an NPU host: with pipefail the script aborts (or torchrun gets --nproc_per_node=0)"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", VISIBLE_NOTE),
    C("export NCCL_DEBUG=${NCCL_DEBUG:-WARN}", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}",
      "NCCL_DEBUG is ignored by HCCL; CANN logging is controlled by ASCEND_GLOBAL_LOG_LEVEL (diagnostics only)"),
    C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}", "env_var", "replace", True,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "multi-node: HCCL picks the host NIC from HCCL_SOCKET_IFNAME / HCCL_IF_IP (knowledge ascend-distributed §1, "
      "§6.1); the NCCL variable is silently ignored and the wrong NIC leads to EI0001/connect timeouts"),
    C("export NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-0}", "env_var", "removal", False, None,
      "InfiniBand switch for NCCL; HCCL uses the NPU's own RoCE ports, no equivalent needed (silent no-op)"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None,
      "NVLink P2P policy for NCCL; meaningless on Ascend (silent no-op)"),
])

E("salad-config", "config/salad_dinov2.yaml", "explicit_replacement",
  "LightningCLI YAML of a DINOv2 + SALAD / BoQ style VPR repo (accelerator gpu, DDPStrategy nccl, 16-mixed)", [
    C("accelerator: gpu", "device_type", "replace", True, "accelerator: npu",
      "Lightning's 'gpu' accelerator requires CUDA/MPS; an NPU accelerator must be registered with Lightning "
      "(plugin unconfirmed in knowledge)"),
    C("process_group_backend: nccl", "dist_backend", "replace", True, "process_group_backend: hccl",
      "explicit NCCL process group cannot be created on Ascend"),
    C("precision: 16-mixed", "amp", "replace", False, "precision: bf16-mixed",
      "Lightning's mixed-precision plugin autocasts for CUDA; with an NPU accelerator it must drive "
      "torch.autocast('npu'), otherwise training silently runs fp32 (perf only; unconfirmed)"),
])

E("anyloc-env", "environment.yml", "explicit_replacement",
  "AnyLoc environment.yml (conda pytorch + pytorch-cuda + faiss-gpu, pip extras)", [
    C("=- nvidia", "import_torch_npu", "removal", False, None,
      "NVIDIA conda channel only serves CUDA runtime packages; harmless but unused once pytorch-cuda is gone"),
    C("=- pytorch-cuda=11.8", "import_torch_npu", "replace", True, "- cpuonly",
      "selects the CUDA build of pytorch and pulls the CUDA runtime, which has no aarch64/Ascend build; "
      "torch_npu sits on top of the CPU build of the same torch version (knowledge §1.1)"),
    C("=- faiss-gpu=1.7.4", "unsupported_op_workaround", "replace", True, "- faiss-cpu=1.7.4", FAISS_GPU_NOTE),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post12",
      "torch_npu wheel matching pytorch 2.1.0 (wheel = torch version + .postN, knowledge §1.1-1.2)"),
])

E("cosplace-req", "requirements.txt", "explicit_replacement",
  "CosPlace / EigenPlaces requirements.txt (cu118 wheel index, +cu118 torch pins, faiss-gpu)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "no cu118 wheels exist for aarch64 Ascend hosts; x86 hosts use the CPU index under torch_npu (knowledge §1.1)"),
    C("=torch==2.1.0+cu118", "import_torch_npu", "replace", True, "torch==2.1.0",
      "+cu118 local version is only on the CUDA index"),
    C("=torchvision==0.16.0+cu118", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "same as torch (+cu118 builds only exist on the CUDA index)"),
    C("=kornia==0.7.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "torch_npu wheel matching torch 2.1.0 (wheel = torch version + .postN, knowledge §1.1-1.2)"),
    C("=faiss-gpu==1.7.2", "unsupported_op_workaround", "replace", True, "faiss-cpu==1.7.2", FAISS_GPU_NOTE),
])

E("hloc-docker", "Dockerfile", "explicit_replacement",
  "hloc Dockerfile (multi-stage: COLMAP built with CUDA on nvidia/cuda devel, runtime on nvidia/cuda runtime, cu121 torch)", [
    C("ARG NVIDIA_CUDA_VERSION=12.1.1", "custom_cuda_extension", "removal", False, None,
      "only parameterises the nvidia/cuda base images; dead once both FROM lines change"),
    C('ARG CUDA_ARCHITECTURES="70;75;80;86;89"', "custom_cuda_extension", "removal", False, None,
      "SM architectures for the CUDA build of COLMAP; unused once COLMAP is built with CUDA_ENABLED=OFF"),
    C("FROM nvidia/cuda:${NVIDIA_CUDA_VERSION}-devel-ubuntu${UBUNTU_VERSION} AS builder", "custom_cuda_extension",
      "replace", False, "FROM ubuntu:${UBUNTU_VERSION} AS builder",
      "the CUDA toolkit image still builds on arm64, but with COLMAP built CPU-only (next label) it is dead weight"),
    C("cmake .. -GNinja -DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES}", "custom_cuda_extension", "replace", True,
      "cmake .. -GNinja -DCUDA_ENABLED=OFF -DCMAKE_INSTALL_PREFIX=/colmap_installed && \\",
      "COLMAP's CUDA build links libcudart/cuSPARSE, which the Ascend runtime image does not have: the colmap binary "
      "would not even load. No NPU port of COLMAP's CUDA kernels (dense MVS, SiftGPU) - CPU build"),
    C("FROM nvidia/cuda:${NVIDIA_CUDA_VERSION}-runtime-ubuntu${UBUNTU_VERSION} AS runtime", "import_torch_npu",
      "replace", True, "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10 AS runtime",
      "torch_npu needs the CANN toolkit/runtime (set_env.sh, libhccl, opp) which an nvidia/cuda image lacks; "
      "exact CANN image tag is a placeholder"),
    C("torch==2.1.2 torchvision==0.16.2 --index-url https://download.pytorch.org/whl/cu121", "import_torch_npu",
      "replace", True,
      "RUN python3 -m pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 --index-url "
      "https://download.pytorch.org/whl/cpu && python3 -m pip install --no-cache-dir torch-npu==2.1.0.post12",
      "cu121 wheels are CUDA builds (none for aarch64); torch_npu 2.1.0.postN pairs with torch 2.1.0 exactly, not "
      "2.1.2 (knowledge §1.2)"),
    C("python3 -m pip install --no-cache-dir faiss-gpu", "unsupported_op_workaround", "replace", True,
      "RUN python3 -m pip install --no-cache-dir -e . && python3 -m pip install --no-cache-dir faiss-cpu",
      FAISS_GPU_NOTE),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "read by nvidia-container-runtime only; Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES (knowledge "
      "ascend-host-formats §3). Devices can also be passed with --device /dev/davinciN, so not strictly required"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics", "env_var", "removal", False, None,
      "nvidia-container-runtime setting, ignored on Ascend"),
])

E("salad-pyproject", "pyproject.toml", "explicit_replacement",
  "pyproject.toml of a DINOv2-based VPR package (faiss-gpu dependency, optional xformers extra)", [
    C('"faiss-gpu>=1.7.2",', "unsupported_op_workaround", "replace", True, '"faiss-cpu>=1.7.2",',
      FAISS_GPU_NOTE + "; as a hard dependency it also fails to resolve on aarch64 (no faiss-gpu wheels)"),
    C('xformers = ["xformers>=0.0.22"]', "attention_kernel", "removal", False, None,
      "xFormers has no NPU backend and its wheels pin CUDA torch builds; only an opt-in extra, the vendored DINOv2 "
      "layers fall back without it"),
    C('dev = ["pytest", "ruff", "pre-commit"]', "import_torch_npu", "npu_only_addition", False,
      'npu = ["torch-npu==2.1.0.post12"]',
      "library metadata: an opt-in extra rather than a hard pin (torch_npu must match the installed torch exactly)"),
])

