"""Labels for probe410 (visual place recognition / landmark retrieval, CUDA -> Ascend NPU).

One entry per upstream file; one C(...) per line a careful porter would edit.
`sub` must match exactly one line of the upstream file ("=text" = whole stripped line).
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script of an explicit port: import torch_npu right after torch so torch.npu / the 'npu' "
               "device exist (mandatory before torch_npu 2.5.1, still recommended with autoload)")

# ------------------------------------------------------------------------------------------------
# Nanne/pytorch-NetVlad
# ------------------------------------------------------------------------------------------------
E("netvlad_main", "main.py", "explicit_replacement",
  "Nanne/pytorch-NetVlad main.py (--nocuda flag, module-level device, h5py feature cache, faiss recall)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NOTE),
    C("print('Allocated:', torch.cuda.memory_allocated())", "torch_cuda_api", "replace", False,
      "print('Allocated:', torch.npu.memory_allocated())",
      "log only; torch.cuda.memory_allocated() returns 0 when CUDA was never initialised, so it just misreports"),
    C("print('Cached:', torch.cuda.memory_cached())", "torch_cuda_api", "replace", False,
      "print('Cached:', torch.npu.memory_cached())",
      "log only (memory_cached is in torch_npu.npu.__all__); returns 0 on an NPU host if left"),
    C('print("Allocated:", torch.cuda.memory_allocated())', "torch_cuda_api", "replace", False,
      'print("Allocated:", torch.npu.memory_allocated())', "log only, same as the cache-building print"),
    C('print("Cached:", torch.cuda.memory_cached())', "torch_cuda_api", "replace", False,
      'print("Cached:", torch.npu.memory_cached())', "log only"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "torch.cuda.empty_cache is a no-op when CUDA is uninitialised; porting it releases NPU cache between subsets (memory only)"),
    C("if cuda and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if cuda and not torch.npu.is_available():",
      "without the change the script raises 'No GPU found' on every NPU host unless --nocuda is given"),
    C('device = torch.device("cuda" if cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if cuda else "cpu")',
      "module-level device used by every .to(device) in train/test/cluster"),
    C("torch.cuda.manual_seed(opt.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(opt.seed)",
      "torch.manual_seed(opt.seed) just above already seeds the NPU generator (torch>=2.1 seeds the privateuse1 "
      "backend too); ported for symmetry only"),
    C("if opt.nGPU > 1 and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
      "if opt.nGPU > 1 and torch.npu.device_count() > 1:",
      "multi-device path only; nn.DataParallel (next lines) is ✘ on Ascend (torch_api_npu_support_2.7.1), so a real "
      "multi-NPU run needs a DDP rewrite; left unchanged the script silently trains on one NPU"),
])

E("netvlad_layer", "netvlad.py", "explicit_replacement",
  "Nanne/pytorch-NetVlad netvlad.py (NetVLAD layer, numpy/sklearn init)", [])

E("netvlad_pitts", "pittsburgh.py", "explicit_replacement",
  "Nanne/pytorch-NetVlad pittsburgh.py (Pitts30k/250k .mat structs, hard-negative mining dataset)", [])

# ------------------------------------------------------------------------------------------------
# gmberton/CosPlace
# ------------------------------------------------------------------------------------------------
E("cosplace_train", "train.py", "explicit_replacement",
  "gmberton/CosPlace train.py (per-group classifiers swapped device<->CPU, --augmentation_device, AMP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('logging.info(f"There are {torch.cuda.device_count()} GPUs', "torch_cuda_api", "replace", False,
      'logging.info(f"There are {torch.npu.device_count()} NPUs and {multiprocessing.cpu_count()} CPUs.")',
      "log only (would print 0 GPUs)"),
    C("model_state_dict = torch.load(args.resume_model)", "tensor_to_device", "replace", True,
      "model_state_dict = torch.load(args.resume_model, map_location='cpu')",
      "--resume_model is typically a GPU-trained best_model.pth; its CUDA-tagged tensors make torch.load raise on a "
      "host without CUDA unless map_location is given"),
    C('if args.augmentation_device == "cuda":  # build', "device_type", "replace", True,
      'if args.augmentation_device == "npu":  # build the batched (on-device) augmentation pipeline once',
      "parser choices become npu/cpu; a stale 'cuda' comparison would never build gpu_augmentation"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler()",
      "torch.cuda.amp.GradScaler disables itself without CUDA -> fp16 loss is no longer scaled under --use_amp16"),
    C('pin_memory=(args.device == "cuda"), drop_last=True)', "pin_memory", "replace", False,
      'pin_memory=(args.device == "npu"), drop_last=True)',
      "with device 'npu' the comparison turns pinning off; performance only (unconfirmed size of the effect)"),
    C('=if args.augmentation_device == "cuda":', "device_type", "replace", True,
      'if args.augmentation_device == "npu":',
      "otherwise the colour-jitter / random-resized-crop augmentation is silently skipped for every batch"),
    C("with torch.cuda.amp.autocast():", "amp", "replace", True,
      "with torch.npu.amp.autocast():",
      "cuda autocast does not touch NPU tensors: --use_amp16 would silently train in fp32"),
])

E("cosplace_parser", "parser.py", "explicit_replacement",
  "gmberton/CosPlace parser.py (argparse --device / --augmentation_device with cuda|cpu choices)", [
    C('parser.add_argument("--augmentation_device", type=str, default="cuda",', "device_type", "replace", True,
      'parser.add_argument("--augmentation_device", type=str, default="npu",',
      "default device string for the batched augmentation"),
    C('=choices=["cuda", "cpu"],', "device_type", "replace", True,
      'choices=["npu", "cpu"],',
      "argparse rejects --augmentation_device npu otherwise"),
    C('parser.add_argument("--device", type=str, default="cuda",', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu",',
      "args.device feeds every .to(args.device) in train/test/eval"),
    C('choices=["cuda", "cpu"], help="_")', "device_type", "replace", True,
      'choices=["npu", "cpu"], help="_")', "argparse rejects --device npu otherwise"),
    C('if args.augmentation_device == "cuda" and args.device == "cpu":', "device_type", "replace", False,
      'if args.augmentation_device == "npu" and args.device == "cpu":',
      "sanity check only; stale it never fires (lost validation, no wrong result)"),
])

E("cosplace_test", "test.py", "explicit_replacement",
  "gmberton/CosPlace test.py (descriptor extraction + faiss IndexFlatL2 recall@N)", [
    C('batch_size=args.infer_batch_size, pin_memory=(args.device == "cuda"))', "pin_memory", "replace", False,
      'batch_size=args.infer_batch_size, pin_memory=(args.device == "npu"))',
      "performance only (unconfirmed)"),
    C('batch_size=queries_infer_batch_size, pin_memory=(args.device == "cuda"))', "pin_memory", "replace", False,
      'batch_size=queries_infer_batch_size, pin_memory=(args.device == "npu"))',
      "performance only (unconfirmed)"),
])

E("cosplace_commons", "commons.py", "explicit_replacement",
  "gmberton/CosPlace commons.py (InfiniteDataLoader, make_deterministic, logging)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "torch.manual_seed(seed) on the previous line already seeds NPU generators; redundant but ported for clarity"),
])

E("cosplace_util", "util.py", "explicit_replacement",
  "gmberton/CosPlace util.py (move_to_device for optimizer state, checkpoint save/resume)", [
    C("checkpoint = torch.load(args.resume_train)", "tensor_to_device", "replace", False,
      "checkpoint = torch.load(args.resume_train, map_location='cpu')",
      "only needed when resuming a checkpoint written on a GPU machine; NPU-written checkpoints reload fine"),
])

E("cosplace_network", "cosplace_model/cosplace_network.py", "explicit_replacement",
  "gmberton/CosPlace cosplace_model/cosplace_network.py (torchvision backbone + GeM + FC)", [])

E("cosplace_eval", "eval.py", "explicit_replacement",
  "gmberton/CosPlace eval.py (load --resume_model and test on SF-XL v1)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      'logging.info(f"There are {torch.npu.device_count()} NPUs and {multiprocessing.cpu_count()} CPUs.")',
      "log only"),
    C("model_state_dict = torch.load(args.resume_model)", "tensor_to_device", "replace", True,
      "model_state_dict = torch.load(args.resume_model, map_location='cpu')",
      "evaluating GPU-trained weights is the main use of eval.py; without map_location torch.load raises without CUDA"),
])

E("cosplace_requirements", "requirements.txt", "explicit_replacement",
  "gmberton/CosPlace requirements.txt", [
    C("torch>=1.8.2", "import_torch_npu", "npu_only_addition", False,
      "torch-npu  # same x.y.z as torch, e.g. torch==2.1.0 + torch-npu==2.1.0.post12",
      "environment file; torch-npu must match the torch version exactly (version matrix); faiss_cpu is already NPU-safe"),
])

# ------------------------------------------------------------------------------------------------
# gmberton/EigenPlaces
# ------------------------------------------------------------------------------------------------
E("eigenplaces_train", "train.py", "explicit_replacement",
  "gmberton/EigenPlaces train.py (lateral + frontal CosFace groups, torch.autocast + GradScaler)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      'logging.info(f"There are {torch.npu.device_count()} NPUs and {multiprocessing.cpu_count()} CPUs.")',
      "log only"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.use_amp16)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.use_amp16)",
      "cuda GradScaler disables itself without CUDA -> fp16 gradients unscaled under --use_amp16"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.use_amp16):', "amp", "replace", True,
      'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=args.use_amp16):',
      "device_type='cuda' autocast leaves NPU ops in fp32 (AMP silently off)"),
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      'f"peak NPU mem = {torch.npu.max_memory_allocated() / 2**30:.1f} GB")',
      "log only; returns 0 without CUDA"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device (lazy init) and raises on a host without CUDA"),
])

E("eigenplaces_hubconf", "hubconf.py", "explicit_replacement",
  "gmberton/EigenPlaces hubconf.py (torch.hub entry, weights loaded with map_location cpu)", [])

E("eigenplaces_dataset", "datasets/eigenplaces_dataset.py", "explicit_replacement",
  "gmberton/EigenPlaces datasets/eigenplaces_dataset.py (UTM cells, PCA focal points, panorama crops)", [])

# ------------------------------------------------------------------------------------------------
# amaralibey/MixVPR
# ------------------------------------------------------------------------------------------------
E("mixvpr_main", "main.py", "explicit_replacement",
  "amaralibey/MixVPR main.py (PyTorch Lightning VPRModel, pl.Trainer(accelerator='gpu', precision=16))", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("accelerator='gpu', devices=[0],", "distributed_framework", "replace", True,
      "accelerator=NPUAccelerator(), devices=[0],",
      "Lightning has no built-in NPU accelerator; 'gpu' resolves to CUDA and fails. Needs a custom/third-party "
      "Accelerator registered for 'npu' (unconfirmed in the knowledge base; precision=16 then follows its autocast)"),
])

E("mixvpr_agg", "models/aggregators/mixvpr.py", "explicit_replacement",
  "amaralibey/MixVPR models/aggregators/mixvpr.py (feature-mixer aggregator)", [])

E("mixvpr_validation", "utils/validation.py", "explicit_replacement",
  "amaralibey/MixVPR utils/validation.py (faiss recall, optional GpuIndexFlatL2)", [])

E("mixvpr_dataloader", "dataloaders/GSVCitiesDataloader.py", "explicit_replacement",
  "amaralibey/MixVPR dataloaders/GSVCitiesDataloader.py (LightningDataModule, loader configs)", [])

# ------------------------------------------------------------------------------------------------
# AnyLoc/AnyLoc (+ facebookresearch/dinov2 pulled through torch.hub)
# ------------------------------------------------------------------------------------------------
E("anyloc_utilities", "utilities.py", "explicit_replacement",
  "AnyLoc/AnyLoc utilities.py (DinoV2ExtractFeatures hooks, VLAD with fast_pytorch_kmeans, faiss top-k recall)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed)",
      "torch.manual_seed(seed) just above already seeds the NPU generator"),
])

E("anyloc_configs", "configs.py", "explicit_replacement",
  "AnyLoc/AnyLoc configs.py (tyro dataclasses + global `device = torch.device(\"cuda\")`)", [
    C('device = torch.device("cuda")', "device_type", "replace", True,
      'device = torch.device("npu")',
      "global device imported by every script (DINOv2 extractor, image batches)"),
    C('if device.type == "cuda":', "device_type", "replace", False,
      'if device.type == "npu":',
      "only chooses which info to print; stale it prints 'Using the CPU' on an NPU run"),
    C("torch.cuda.get_device_name(device)", "torch_cuda_api", "replace", True,
      'print(f"Using NPU: {torch.npu.get_device_name(device)}")',
      "reachable once the guard is ported; torch.cuda.get_device_name raises without CUDA"),
    C("free, total = torch.cuda.mem_get_info(device)", "torch_cuda_api", "replace", True,
      "free, total = torch.npu.mem_get_info(device)",
      "reachable once the guard is ported; raises without CUDA (torch.npu.mem_get_info exists)"),
])

E("anyloc_global_vpr", "scripts/dino_v2_global_vpr.py", "explicit_replacement",
  "AnyLoc/AnyLoc scripts/dino_v2_global_vpr.py (tyro LocalArgs, DINOv2 facets -> VLAD, faiss GPU search)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("faiss_gpu: bool = True", "unsupported_op_workaround", "replace", True,
      "faiss_gpu: bool = False",
      "faiss has no Ascend backend and faiss-gpu cannot be installed on an NPU host: with faiss-cpu, "
      "faiss.StandardGpuResources does not exist and get_top_k_recall(use_gpu=True) raises AttributeError"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", "no-op if left; porting it releases NPU cache before VLAD generation"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "torch.cuda.synchronize initialises CUDA and raises on an NPU host; NPU sync also makes the timing honest"),
    C("torch.cuda.max_memory_reserved()", "torch_cuda_api", "replace", False,
      '"Peak-GPU-Mem-GB": f"{torch.npu.max_memory_reserved() / 2**30:.2f}",',
      "results entry only; reports 0 if left"),
])

E("anyloc_setup", "setup_conda.sh", "explicit_replacement",
  "AnyLoc/AnyLoc setup_conda.sh (conda pytorch-cuda + faiss-gpu environment)", [
    C('echo "---- Installing PyTorch ----"', "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be loaded before torch_npu can be imported/checked"),
    C("pytorch-cuda=11.7", "import_torch_npu", "replace", True,
      "pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12",
      "the pytorch-cuda build is useless on Ascend; torch + matching torch-npu wheel (version matrix)"),
    C("faiss-gpu==1.7.2", "unsupported_op_workaround", "replace", True,
      "$exec_name install -y -c pytorch faiss-cpu==1.7.2",
      "faiss-gpu needs CUDA; no Ascend faiss backend -> faiss-cpu"),
    C("torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "python -c \"import torch, torch_npu; print('NPU available:', torch.npu.is_available())\"",
      "sanity print only"),
])

E("dinov2_attention", "dinov2/layers/attention.py", "explicit_replacement",
  "facebookresearch/dinov2 dinov2/layers/attention.py (xFormers MemEffAttention fallback; loaded by AnyLoc via torch.hub)", [
    C("attn = q @ k.transpose(-2, -1)", "attention_kernel", "replace", False,
      "x = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])  # replaces the explicit softmax(QK^T)V block",
      "xFormers is not available on NPU so MemEffAttention always falls back here; SDPA dispatches to the NPU "
      "flash-attention kernel (performance; needs the hub repo vendored)"),
])

# ------------------------------------------------------------------------------------------------
# cvg/Hierarchical-Localization (retrieval part)
# ------------------------------------------------------------------------------------------------
E("hloc_extract", "hloc/extract_features.py", "device_branch_or_abstraction",
  "cvg/Hierarchical-Localization hloc/extract_features.py (global-descriptor confs netvlad/cosplace/eigenplaces)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "add_branch", True,
      "device = 'npu' if torch.npu.is_available() else ('cuda' if torch.cuda.is_available() else 'cpu')",
      "unchanged it silently runs every extractor on the CPU on an NPU host"),
])

E("hloc_pairs", "hloc/pairs_from_retrieval.py", "device_branch_or_abstraction",
  "cvg/Hierarchical-Localization hloc/pairs_from_retrieval.py (einsum similarity + topk pairs)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "add_branch", True,
      "device = 'npu' if torch.npu.is_available() else ('cuda' if torch.cuda.is_available() else 'cpu')",
      "silent CPU fallback for the (large) query x database similarity matrix otherwise"),
])

E("hloc_netvlad", "hloc/extractors/netvlad.py", "device_branch_or_abstraction",
  "cvg/Hierarchical-Localization hloc/extractors/netvlad.py (MATLAB NetVLAD weights via scipy)", [])

# ------------------------------------------------------------------------------------------------
# sungonce/CVNet (pycls-based DELG-style global + local retrieval)
# ------------------------------------------------------------------------------------------------
E("cvnet_config", "config/config.py", "explicit_replacement",
  "sungonce/CVNet config/config.py (pycls yacs config: NUM_GPUS, DIST_BACKEND, CUDNN)", [
    C('_C.DIST_BACKEND = "nccl"', "dist_backend", "replace", True,
      '_C.DIST_BACKEND = "hccl"', "NCCL is not available on Ascend; init_process_group(backend=cfg.DIST_BACKEND) fails"),
])

E("cvnet_yaml", "configs/resnet50_delg_gldv2.yaml", "explicit_replacement",
  "sungonce/CVNet configs/resnet50_delg_gldv2.yaml (GLDv2 training config)", [
    C("DIST_BACKEND: nccl", "dist_backend", "replace", True,
      "DIST_BACKEND: hccl", "the YAML overrides the config.py default, so it must be ported too"),
])

E("cvnet_dist", "core/distributed.py", "explicit_replacement",
  "sungonce/CVNet core/distributed.py (pycls multi_proc_run, tcp:// process group, scaled_all_reduce)", [
    C("torch.cuda.set_device(proc_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(proc_rank)", "binds each spawned rank to its NPU"),
    C('size = torch.tensor([tensor.shape[0]], device=torch.device("cuda"))', "device_type", "replace", True,
      'size = torch.tensor([tensor.shape[0]], device=torch.device("npu"))',
      "HCCL all_gather needs NPU tensors; a CUDA device here raises"),
])

E("cvnet_trainer", "core/trainer.py", "explicit_replacement",
  "sungonce/CVNet core/trainer.py (pycls trainer: .cuda(device=cur_device), DDP, torch.cuda.amp)", [
    C("assert cfg.NUM_GPUS <= torch.cuda.device_count(), err_str", "torch_cuda_api", "replace", True,
      "assert cfg.NUM_GPUS <= torch.npu.device_count(), err_str", "0 CUDA devices -> assertion always fails"),
    C("=cur_device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "cur_device = torch.npu.current_device()", "raises without CUDA"),
    C("model = model.cuda(device=cur_device)", "tensor_to_device", "replace", True,
      "model = model.npu(device=cur_device)", "model placement"),
    C("mem_usage_bytes = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "mem_usage_bytes = torch.npu.max_memory_allocated()", "log only; 0 if left"),
    C("inputs, labels = inputs.cuda(), labels.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "inputs, labels = inputs.npu(), labels.npu(non_blocking=True)", "training batch placement"),
    C("with torch.cuda.amp.autocast(enabled=cfg.TRAIN.MIXED_PRECISION):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=cfg.TRAIN.MIXED_PRECISION):",
      "cuda autocast ignores NPU tensors -> MIXED_PRECISION silently off"),
    C("inputs, labels = inputs.cuda(non_blocking=True), labels.cuda(non_blocking=True)", "tensor_to_device",
      "replace", True, "inputs, labels = inputs.npu(non_blocking=True), labels.npu(non_blocking=True)",
      "evaluation batch placement"),
    C("loss_fun = builders.build_loss_fun().cuda()", "tensor_to_device", "replace", True,
      "loss_fun = builders.build_loss_fun().npu()", "loss module placement (training)"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=cfg.TRAIN.MIXED_PRECISION)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=cfg.TRAIN.MIXED_PRECISION)",
      "cuda GradScaler disables itself without CUDA -> fp16 training without loss scaling"),
    C("loss_fun = loss_fun.cuda()", "tensor_to_device", "replace", True,
      "loss_fun = loss_fun.npu()", "loss module placement (timing)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "raises without CUDA"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", "no-op if left"),
])

E("cvnet_train_entry", "train.py", "explicit_replacement",
  "sungonce/CVNet train.py (entry: load cfg, multi_proc_run(trainer.train_model))", [
    C("import config.config as config", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NOTE + "; imported in the parent so forked ranks inherit the registration"),
])

E("cvnet_test", "test/test_model.py", "explicit_replacement",
  "sungonce/CVNet test/test_model.py (multi-scale global descriptors, correlation re-ranking on ROxf/RPar)", [
    C("=cur_device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "cur_device = torch.npu.current_device()", "raises without CUDA"),
    C("model = model.cuda(device=cur_device)", "tensor_to_device", "replace", True,
      "model = model.npu(device=cur_device)", "model placement"),
    C("im_list[idx] = im_list[idx].cuda()", "tensor_to_device", "replace", True,
      "im_list[idx] = im_list[idx].npu()", "per-scale image placement"),
    C("torch.cuda.synchronize()  # make sure", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # make sure the feature extraction is done before timing", "raises without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "raises without CUDA"),
    C("torch.cuda.max_memory_allocated() / 2 ** 20", "torch_cuda_api", "replace", False,
      "time.time() - t0, torch.npu.max_memory_allocated() / 2 ** 20))", "log only; 0 if left"),
])

E("cvnet_delg", "model/delg_model.py", "explicit_replacement",
  "sungonce/CVNet-style model/delg_model.py (GeM, spatial attention, autoencoder, CurricularFace)", [])

E("cvnet_launch", "scripts/train_gldv2.sh", "explicit_replacement",
  "sungonce/CVNet-style scripts/train_gldv2.sh (4-GPU launcher)", [
    C("=set -e", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN libraries must be on the path of the launching shell before torch_npu loads"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "ignored on NPU; ranks bind to npu:0..3 via set_device(proc_rank) anyway, so only device selection is lost"),
])

E("cvnet_dockerfile", "Dockerfile", "explicit_replacement",
  "sungonce/CVNet-style Dockerfile (nvidia/cuda base, cu113 wheels)", [
    C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "env_var", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "needs a CANN-toolkit base image (tag illustrative, unconfirmed); a CUDA image has no Ascend runtime"),
    C("RUN pip install torch==1.10.1+cu113 torchvision==0.11.2+cu113", "import_torch_npu", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12 \\",
      "cu113 wheels cannot drive an NPU; torch-npu must match torch exactly"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False,
      "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "read by Ascend Docker Runtime to mount NPUs; devices can also be passed with docker run --device (unconfirmed default)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "inert on Ascend"),
    C('CMD ["bash"]', "env_var", "replace", False,
      'CMD ["bash", "-c", "source /usr/local/Ascend/ascend-toolkit/set_env.sh && exec bash"]',
      "CANN env for interactive shells; some CANN base images already set it (unconfirmed)"),
])
