"""Labels for probe418 (3-D mesh and shape generation). One C(...) per upstream line a careful porter edits."""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point: torch_npu must be imported before torch.npu / 'npu' devices are used "
               "(the port targets torch 2.1 + torch_npu 2.1.0.postN, which has no backend autoload)")

# ----------------------------------------------------------------------------------------------
# PolyGen (PyTorch re-implementation of deepmind-research/polygen)
# ----------------------------------------------------------------------------------------------

E("pg_train", "train.py", "explicit_replacement",
  "PyTorch PolyGen re-implementations (deepmind-research/polygen port) train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu_ids", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu_ids",
      "--gpu_ids 2,3 must mask the NPUs; CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so the job would "
      "silently land on npu:0/1 (gpu_ids is re-indexed from 0 right below)"),
    C("return {k: (v.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "return {k: (v.npu(non_blocking=True) if torch.is_tensor(v) else v) for k, v in batch.items()}",
      "every batch tensor is moved with .cuda()"),
    C("num_workers=cfg['num_workers'], pin_memory=True", "pin_memory", "replace", False,
      "num_workers=cfg['num_workers'], pin_memory=True, pin_memory_device='npu', drop_last=True,",
      "performance only: without a device the DataLoader pins for CUDA, which is skipped on an NPU host (unconfirmed "
      "in knowledge)"),
    C("model = build_model(cfg, args.model).cuda()", "tensor_to_device", "replace", True,
      "model = build_model(cfg, args.model).npu()", "model placement"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "the CUDA GradScaler disables itself when CUDA is absent; with NPU autocast ported, --amp would train fp16 with "
      "no loss scaling (silent underflow)"),
    C("map_location=lambda storage, loc: storage.cuda()", "tensor_to_device", "replace", True,
      "ckpt = torch.load(args.resume, map_location='cpu')",
      "storage.cuda() fails on resume; load to CPU (load_state_dict copies to the NPU params, optimizer state follows "
      "the params)"),
    C("model = nn.DataParallel(model, device_ids=gpu_ids)", "distributed_framework", "removal", True, None,
      "torch.nn.DataParallel is unsupported on Ascend (TSV ✘); fall back to one NPU (multi-NPU = torchrun + DDP, a "
      "larger rewrite); the logger line keeps the if-body valid"),
    C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=args.amp):",
      "left unchanged the CUDA autocast just disables itself: the step runs in fp32 (slower, still correct)"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without a CUDA runtime"),
    C("mem = torch.cuda.memory_allocated() / 2 ** 20", "torch_cuda_api", "replace", False,
      "mem = torch.npu.memory_allocated() / 2 ** 20",
      "log only: the CUDA allocator is never initialised so this silently reports 0 MiB"),
])

E("pg_modules", "polygen/modules.py", "explicit_replacement",
  "PyTorch PolyGen re-implementations polygen/modules.py (VertexModel / FaceModel)", [
    C("return torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1).cuda()", "tensor_to_device", "replace", True,
      "return torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1).npu()",
      "causal mask hard-coded to CUDA, built on every decoder forward"),
    C("samples = torch.cuda.LongTensor(num_samples, 0).fill_(0)", "torch_cuda_api", "replace", True,
      "samples = torch.zeros([num_samples, 0], dtype=torch.long, device=vertex_embeddings.device)",
      "legacy typed-tensor constructor; FaceModel.sample fails without it"),
])

E("pg_data_utils", "polygen/data_utils.py", "explicit_replacement",
  "PyTorch PolyGen re-implementations polygen/data_utils.py (numpy mesh processing, Dataset)", [])

E("pg_sample", "sample.py", "explicit_replacement",
  "PyTorch PolyGen re-implementations sample.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device(cfg.get('device', 'cuda'))", "device_type", "replace", False,
      "device = torch.device(cfg.get('device', 'npu'))",
      "fallback only: the YAML config always supplies `device` (labelled there)"),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "starter = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "ender = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without a CUDA runtime; also needed for a meaningful elapsed_time"),
])

E("pg_config", "configs/polygen_shapenet.yaml", "explicit_replacement",
  "PyTorch PolyGen re-implementations configs/*.yaml", [
    C("=device: cuda", "device_type", "replace", True, "device: npu",
      "consumed by sample.py as torch.device(cfg['device'])"),
])

E("pg_requirements", "requirements.txt", "explicit_replacement",
  "PyTorch PolyGen re-implementations requirements.txt", [
    C("--extra-index-url https://download.pytorch.org/whl/cu117", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 hosts pair torch_npu with the CPU torch wheel, aarch64 uses plain PyPI; whether a CUDA wheel breaks "
      "torch_npu is unconfirmed"),
    C("torch==1.13.1+cu117", "import_torch_npu", "replace", True, "torch==2.1.0",
      "no torch_npu release exists for torch 1.13 (version matrix); move to a paired version"),
    C("numpy>=1.21", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "torch_npu wheel matching torch 2.1.0 (CANN 8.0.0 row of the matrix), inserted after the torch pin"),
])

# ----------------------------------------------------------------------------------------------
# MeshGPT (lucidrains/meshgpt-pytorch + community training scripts)
# ----------------------------------------------------------------------------------------------

E("mg_model", "meshgpt_pytorch/meshgpt_pytorch.py", "explicit_replacement",
  "lucidrains/meshgpt-pytorch meshgpt_pytorch/meshgpt_pytorch.py (MeshAutoencoder, abridged)", [
    C("from torch.cuda.amp import autocast", "amp", "replace", True, "from torch_npu.npu.amp import autocast",
      "used as `with autocast(enabled = False)` around the smoothed cross-entropy; a CUDA autocast context does not "
      "leave the NPU autocast region that Accelerate opens (mixed_precision fp16), so the blur conv1d and loss the "
      "author pinned to fp32 would silently run in fp16"),
])

E("mg_trainer", "meshgpt_pytorch/trainer.py", "explicit_replacement",
  "lucidrains/meshgpt-pytorch meshgpt_pytorch/trainer.py (Accelerate-based MeshAutoencoderTrainer)", [
    C("pkg = torch.load(str(path))", "tensor_to_device", "replace", False,
      "pkg = torch.load(str(path), map_location = 'cpu')",
      "only needed for checkpoints saved on a CUDA machine (they deserialize to cuda tensors); checkpoints written by "
      "the ported trainer load fine"),
])

E("mg_data", "meshgpt_pytorch/data.py", "explicit_replacement",
  "lucidrains/meshgpt-pytorch meshgpt_pytorch/data.py", [])

E("mg_train_ae", "examples/train_autoencoder.py", "explicit_replacement",
  "community MeshGPT training script (MarcusLoppe-style notebook turned script)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=device = 'cuda'", "device_type", "replace", True, "device = 'npu'", "module-level device global"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "redundant: torch.manual_seed on the line above already seeds the registered NPU backend (unconfirmed in "
      "knowledge); the CUDA call is a lazy no-op"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "memory hygiene only; the CUDA call is a no-op on an NPU host"),
    C("max memory allocated: {torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "print(f'max memory allocated: {torch.npu.max_memory_allocated() / 1024**3:.2f} GB')",
      "log only, silently prints 0"),
])

E("mg_inference", "examples/generate_meshes.py", "explicit_replacement",
  "community MeshGPT generation script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda:0')", "device_type", "replace", True, "device = torch.device('npu:0')",
      "hard-coded device"),
    C("f'on {torch.cuda.get_device_name(device)}')", "torch_cuda_api", "replace", True,
      "f'on {torch.npu.get_device_name(device)}')", "initialises CUDA -> raises"),
    C("torch.autocast('cuda', dtype=torch.float16, enabled=args.half)", "amp", "replace", False,
      "with torch.no_grad(), torch.autocast('npu', dtype=torch.float16, enabled=args.half):",
      "with --half the weights are already fp16; the CUDA autocast just switches itself off (unconfirmed whether any "
      "mixed-dtype op then fails)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without a CUDA runtime"),
])

E("mg_accel_cfg", "examples/accelerate_config.yaml", "explicit_replacement",
  "accelerate config shipped with MeshGPT training examples", [
    C("distributed_type: MULTI_GPU", "distributed_framework", "replace", False, "distributed_type: MULTI_NPU",
      "Accelerate detects torch_npu itself and picks HCCL; whether MULTI_GPU in the file breaks the launch is "
      "unconfirmed"),
])

E("mg_setup", "setup.py", "explicit_replacement",
  "lucidrains/meshgpt-pytorch setup.py", [])

# ----------------------------------------------------------------------------------------------
# Point-E (openai/point-e)
# ----------------------------------------------------------------------------------------------

E("pe_text2pc", "point_e/examples/text2pointcloud.py", "device_branch_or_abstraction",
  "openai/point-e point_e/examples/text2pointcloud.ipynb (as a script)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "add_branch", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cuda' if torch.cuda.is_available() else 'cpu')",
      "unchanged it silently samples on the CPU of an NPU host"),
])

E("pe_download", "point_e/models/download.py", "device_branch_or_abstraction",
  "openai/point-e point_e/models/download.py", [])

E("pe_sampler", "point_e/diffusion/sampler.py", "device_branch_or_abstraction",
  "openai/point-e point_e/diffusion/sampler.py (PointCloudSampler)", [])

E("pe_pointnet2", "point_e/evals/pointnet2_utils.py", "device_branch_or_abstraction",
  "openai/point-e point_e/evals/pointnet2_utils.py (pure-PyTorch PointNet++ helpers)", [])

E("pe_feature", "point_e/evals/feature_extractor.py", "device_branch_or_abstraction",
  "openai/point-e point_e/evals/feature_extractor.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "first module that touches torch.npu; the entry script evaluate_pfid.py never imports torch itself"),
    C("if torch.cuda.is_available():", "device_type", "add_branch", True,
      "if torch.npu.is_available(): return [torch.device(f\"npu:{i}\") for i in range(torch.npu.device_count())]",
      "add an NPU branch before the CUDA one; unchanged, P-FID silently runs on the CPU"),
])

E("pe_pfid", "point_e/evals/scripts/evaluate_pfid.py", "device_branch_or_abstraction",
  "openai/point-e point_e/evals/scripts/evaluate_pfid.py", [])

E("pe_pc2mesh", "point_e/examples/pointcloud2mesh.py", "explicit_replacement",
  "openai/point-e point_e/examples/pointcloud2mesh.ipynb (as a script, with timing added)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device(f'cuda:{args.gpu}')", "device_type", "replace", True,
      "device = torch.device(f'npu:{args.gpu}')", "hard-coded device string"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without a CUDA runtime"),
    C("peak memory {torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "f'peak memory {torch.npu.max_memory_allocated() / 2**20:.0f} MiB')", "log only, silently prints 0"),
])

# ----------------------------------------------------------------------------------------------
# Shap-E (openai/shap-e)
# ----------------------------------------------------------------------------------------------

E("se_text23d", "shap_e/examples/sample_text_to_3d.py", "device_branch_or_abstraction",
  "openai/shap-e shap_e/examples/sample_text_to_3d.ipynb (as a script)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "add_branch", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cuda' if torch.cuda.is_available() else 'cpu')",
      "unchanged it silently runs the 300M diffusion prior on the CPU"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guards a log line only"),
    C("print(f'peak GPU memory: {torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "print(f'peak GPU memory: {torch.npu.max_memory_allocated() / 2**30:.2f} GiB')", "log only"),
])

E("se_checkpoint", "shap_e/models/nn/checkpoint.py", "explicit_replacement",
  "openai/shap-e shap_e/models/nn/checkpoint.py (gradient checkpointing with autocast replay)", [
    C("from torch.cuda.amp import custom_bwd, custom_fwd", "amp", "replace", True,
      "from torch_npu.npu.amp import custom_bwd, custom_fwd",
      "the CUDA decorators record/restore the CUDA autocast state, so the backward recompute would not run under "
      "the NPU autocast the forward used (TSV maps them to torch_npu.npu.amp.*)"),
    C("\"enabled\": torch.is_autocast_enabled(),", "amp", "replace", True,
      "\"enabled\": torch.npu.is_autocast_enabled(),",
      "torch.is_autocast_enabled() reports the CUDA autocast state on torch 2.1; under NPU autocast it is False and "
      "the recompute silently runs in fp32, not the forward's precision"),
    C("\"dtype\": torch.get_autocast_gpu_dtype(),", "amp", "replace", False,
      "\"dtype\": torch.npu.get_autocast_dtype(),",
      "CUDA default dtype is fp16 like the NPU default, so it only matters if someone switches autocast to bf16"),
    C("with torch.enable_grad(), torch.cuda.amp.autocast(**ctx.autocast_kwargs):", "amp", "replace", True,
      "with torch.enable_grad(), torch.npu.amp.autocast(**ctx.autocast_kwargs):",
      "re-entering autocast for the recompute must target the NPU"),
])

E("se_mc", "shap_e/rendering/mc.py", "explicit_replacement",
  "openai/shap-e shap_e/rendering/mc.py (pure-PyTorch marching cubes)", [])

E("se_image23d", "shap_e/examples/sample_image_to_3d.py", "explicit_replacement",
  "openai/shap-e shap_e/examples/sample_image_to_3d.ipynb (as a batch script)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("p.add_argument('--device', type=str, default='cuda:0')", "device_type", "replace", True,
      "p.add_argument('--device', type=str, default='npu:0')", "default device string"),
    C("with torch.autocast(device_type='cuda', dtype=torch.float16):", "amp", "replace", False,
      "with torch.autocast(device_type='npu', dtype=torch.float16):",
      "unchanged the CUDA autocast just disables itself: sampling runs in fp32 (slower, more memory, still valid)"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "raises without a CUDA runtime"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "memory hygiene between images; the CUDA call is a no-op on an NPU host"),
])

# ----------------------------------------------------------------------------------------------
# GET3D (nv-tlabs/GET3D, StyleGAN3 code base + nvdiffrast + DMTet)
# ----------------------------------------------------------------------------------------------

E("g3_train", "train_3d.py", "explicit_replacement",
  "nv-tlabs/GET3D train_3d.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NOTE + "; spawned workers re-import this module"),
    C("backend='nccl', init_method=init_method", "dist_backend", "replace", True,
      "backend='hccl', init_method=init_method, rank=rank, world_size=c.num_gpus)", "NCCL -> HCCL"),
    C("sync_device = torch.device('cuda', rank)", "device_type", "replace", True,
      "sync_device = torch.device('npu', rank) if c.num_gpus > 1 else None",
      "training_stats all-reduces its counters on this device over HCCL"),
    C("c.data_loader_kwargs = dnnlib.EasyDict(pin_memory=True, prefetch_factor=2)", "pin_memory", "replace", False,
      "c.data_loader_kwargs = dnnlib.EasyDict(pin_memory=True, pin_memory_device='npu', prefetch_factor=2)",
      "performance only (unconfirmed)"),
])

E("g3_loop", "training/training_loop_3d.py", "explicit_replacement",
  "nv-tlabs/GET3D training/training_loop_3d.py", [
    C("=upfirdn2d._init()", "custom_cuda_extension", "removal", True, None,
      "eagerly JIT-compiles the upfirdn2d .cu plugin via cpp_extension.load (no nvcc / CUDA on Ascend); "
      "upfirdn2d() already falls back to its reference path for non-cuda tensors"),
    C("=bias_act._init()", "custom_cuda_extension", "removal", True, None,
      "same for the bias_act plugin"),
    C("=filtered_lrelu._init()", "custom_cuda_extension", "removal", True, None,
      "same for the filtered_lrelu plugin"),
    C("device = torch.device('cuda', rank)", "device_type", "replace", True, "device = torch.device('npu', rank)",
      "per-rank device"),
    C("torch.backends.cudnn.allow_tf32 = False", "torch_cuda_api", "replace", False,
      "torch.npu.conv.allow_hf32 = False",
      "authors disable TF32 for accuracy; the NPU analogue is HF32 for convolutions, which this flag does not "
      "reach (its default and effect are unconfirmed in knowledge)"),
    C("phase.start_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "phase.start_event = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("phase.end_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "phase.end_event = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C(".pin_memory().to(device)", "pin_memory", "replace", False,
      "all_gen_c = torch.from_numpy(np.stack(all_gen_c)).to(device)",
      "Tensor.pin_memory() with no device targets CUDA on torch 2.1; whether torch_npu redirects it is unconfirmed; "
      "the tensor is tiny, so dropping the pin costs nothing"),
    C("phase.start_event.record(torch.cuda.current_stream(device))", "torch_cuda_api", "replace", True,
      "phase.start_event.record(torch.npu.current_stream(device))", "CUDA stream query with an NPU device"),
    C("phase.end_event.record(torch.cuda.current_stream(device))", "torch_cuda_api", "replace", True,
      "phase.end_event.record(torch.npu.current_stream(device))", "CUDA stream query with an NPU device"),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", False,
      "fields += [f\"gpumem {training_stats.report0('Resources/peak_gpu_mem_gb', torch.npu.max_memory_allocated(device) / 2 ** 30):<6.2f}\"]",
      "stats/log only: silently reports 0 because the CUDA allocator was never initialised"),
    C("torch.cuda.max_memory_reserved(device)", "torch_cuda_api", "replace", False,
      "fields += [f\"reserved {training_stats.report0('Resources/peak_gpu_mem_reserved_gb', torch.npu.max_memory_reserved(device) / 2 ** 30):<6.2f}\"]",
      "stats/log only: silently reports 0"),
    C("=torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "calls straight into the CUDA allocator binding -> raises"),
])

E("g3_custom_ops", "torch_utils/custom_ops.py", "explicit_replacement",
  "nv-tlabs/GET3D torch_utils/custom_ops.py (StyleGAN3 plugin JIT builder)", [
    C("name = torch.cuda.get_device_name().lower()", "torch_cuda_api", "replace", False,
      "name = torch.npu.get_device_name().lower()",
      "unreachable once the eager _init() calls are removed (get_plugin is only called for cuda tensors); a "
      "consistency edit"),
])

E("g3_bias_act", "torch_utils/ops/bias_act.py", "explicit_replacement",
  "nv-tlabs/GET3D torch_utils/ops/bias_act.py (StyleGAN3 fused op with reference fallback)", [])

E("g3_neural_render", "uni_rep/render/neural_render.py", "kernel_rewrite",
  "nv-tlabs/GET3D uni_rep/render/neural_render.py (nvdiffrast rasterizer)", [
    C("import nvdiffrast.torch as dr", "custom_cuda_extension", "replace", True,
      "import npu_rasterizer as dr  # nvdiffrast-compatible rasterize/interpolate/antialias rewritten for Ascend",
      "nvdiffrast's kernels are CUDA (and CUDA-GL) only and there is no Ascend build; the module name of the "
      "replacement is illustrative"),
    C("self.ctx = dr.RasterizeCudaContext(device=device)", "custom_cuda_extension", "replace", True,
      "self.ctx = dr.RasterizeContext(device=device)",
      "the CUDA rasterizer context cannot be created on an NPU device"),
])

E("g3_dmtet", "uni_rep/rep_3d/dmtet.py", "explicit_replacement",
  "nv-tlabs/GET3D uni_rep/rep_3d/dmtet.py (differentiable marching tetrahedra)", [])

E("g3_metric_utils", "metrics/metric_utils.py", "explicit_replacement",
  "nv-tlabs/GET3D metrics/metric_utils.py (StyleGAN3 metric helpers)", [
    C("self.device = device if device is not None else torch.device('cuda', rank)", "device_type", "replace", False,
      "self.device = device if device is not None else torch.device('npu', rank)",
      "fallback only: the training loop passes its device"),
    C("c = torch.from_numpy(np.stack(c)).pin_memory().to(opts.device)", "pin_memory", "replace", False,
      "c = torch.from_numpy(np.stack(c)).to(opts.device)", "same judgement as in training_loop_3d.py"),
    C("data_loader_kwargs = dict(pin_memory=True, num_workers=3, prefetch_factor=2)", "pin_memory", "replace", False,
      "data_loader_kwargs = dict(pin_memory=True, pin_memory_device='npu', num_workers=3, prefetch_factor=2)",
      "performance only (unconfirmed)"),
])

E("g3_training_stats", "torch_utils/training_stats.py", "explicit_replacement",
  "nv-tlabs/GET3D torch_utils/training_stats.py", [])

E("g3_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "nv-tlabs/GET3D docker/Dockerfile", [
    C("ARG BASE_IMAGE=nvcr.io/nvidia/pytorch:21.08-py3", "import_torch_npu", "replace", True,
      "ARG BASE_IMAGE=ascend-pytorch:2.1.0-cann8.0.0-ubuntu22.04",
      "the NGC image has no CANN / torch_npu; the Ascend image tag is illustrative"),
    C("ENV NVIDIA_VISIBLE_DEVICES all", "env_var", "removal", False, None,
      "nvidia-container-runtime knob, inert on Ascend (devices are passed with --device /dev/davinciN)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES compute,utility,graphics", "env_var", "removal", False, None,
      "nvidia-container-runtime knob, inert on Ascend"),
    C("RUN pip install git+https://github.com/NVlabs/nvdiffrast/", "custom_cuda_extension", "removal", False, None,
      "installs fine (kernels are JIT-built at first use); dead weight once the rasterizer is replaced"),
    C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None, "nvcc arch list, inert"),
])

E("g3_train_sh", "scripts/train_shapenet_car.sh", "explicit_replacement",
  "GET3D ShapeNet-car training launcher (README command wrapped in a script)", [
    C("=set -e", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for torch_npu, unless the shell/image already sourced it"),
    C("export CUDA_VISIBLE_DEVICES=4,5,6,7", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=4,5,6,7",
      "a device subset: unchanged, the 4 ranks silently take NPUs 0-3, which the comment says are reserved"),
    C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", True, "npu-smi info",
      "under `set -e` a missing nvidia-smi aborts the launcher"),
])
