"""Labels for probe474 (3D-aware GANs / generative radiance fields, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit. `sub` must occur on exactly one line
("=text" matches a line whose stripped text equals text). See ../README.md for the policy.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
CANN_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
HF32_OFF = "torch.npu.conv.allow_hf32 = False"

# --------------------------------------------------------------------------------------------
# EG3D (NVlabs/eg3d): StyleGAN3-style launcher, training loop, torch_utils, tri-plane renderer
# --------------------------------------------------------------------------------------------

E("eg3d_train", "eg3d/train.py", "explicit_replacement",
  "NVlabs/eg3d eg3d/train.py (click CLI, file:// init, torch.multiprocessing.spawn)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "Entry script (also re-imported by spawned children): registers the NPU backend and the torch.npu namespace "
      "used by the ported training loop. Autoloaded from torch_npu 2.5.1, but the project pins torch 1.11-era code."),
    C("torch.distributed.init_process_group(backend='nccl'", "dist_backend", "replace", True,
      "            torch.distributed.init_process_group(backend='hccl', init_method=init_method, rank=rank, world_size=c.num_gpus)",
      "NCCL does not exist on Ascend; HCCL is the collective backend. The Windows/gloo branch is left alone."),
    C("sync_device = torch.device('cuda', rank)", "device_type", "replace", True,
      "    sync_device = torch.device('npu', rank) if c.num_gpus > 1 else None",
      "training_stats all-reduces its counters on this device; a cuda device fails on an NPU host."),
])

E("eg3d_training_loop", "eg3d/training/training_loop.py", "explicit_replacement",
  "NVlabs/eg3d eg3d/training/training_loop.py (StyleGAN3 loop: CUDA events, peak-memory stats)", [
    C("device = torch.device('cuda', rank)", "device_type", "replace", True,
      "    device = torch.device('npu', rank)",
      "Per-rank device for G, D, loss and data."),
    C("torch.backends.cudnn.allow_tf32 = False", "torch_cuda_api", "npu_only_addition", False, HF32_OFF,
      "Upstream disables TF32 'for numerical accuracy'; the cudnn/cuda flags are inert on NPU. The NPU analogue "
      "(HF32 for convolutions) is not documented in the knowledge base -> unconfirmed, not required."),
    C("phase.start_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "            phase.start_event = torch.npu.Event(enable_timing=True)",
      "Phase timing events are recorded on the NPU stream; CUDA events cannot be."),
    C("phase.end_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "            phase.end_event = torch.npu.Event(enable_timing=True)",
      "Same as start_event."),
    C(".pin_memory().to(device)", "pin_memory", "replace", False,
      "            all_gen_c = torch.from_numpy(np.stack(all_gen_c)).to(device)",
      "Tensor.pin_memory() with no device picked CUDA in older torch; whether it pins for the NPU depends on the "
      "torch/torch_npu version (unconfirmed). Dropping the explicit pin is the safe edit; tiny tensor, no perf loss."),
    C("phase.start_event.record(torch.cuda.current_stream(device))", "torch_cuda_api", "replace", True,
      "                phase.start_event.record(torch.npu.current_stream(device))",
      "torch.cuda.current_stream(npu device) raises."),
    C("phase.end_event.record(torch.cuda.current_stream(device))", "torch_cuda_api", "replace", True,
      "                phase.end_event.record(torch.npu.current_stream(device))",
      "Same."),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", True,
      "        fields += [f\"gpumem {training_stats.report0('Resources/peak_gpu_mem_gb', torch.npu.max_memory_allocated(device) / 2**30):<6.2f}\"]",
      "Memory stats queried with an npu device through torch.cuda fail (CUDA not initialised/available)."),
    C("torch.cuda.max_memory_reserved(device)", "torch_cuda_api", "replace", True,
      "        fields += [f\"reserved {training_stats.report0('Resources/peak_gpu_mem_reserved_gb', torch.npu.max_memory_reserved(device) / 2**30):<6.2f}\"]",
      "Same."),
    C("=torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "        torch.npu.reset_peak_memory_stats()",
      "Without a device it resolves the current CUDA device -> lazy CUDA init fails on an NPU host."),
])

E("eg3d_training_stats", "eg3d/torch_utils/training_stats.py", "explicit_replacement",
  "NVlabs/eg3d eg3d/torch_utils/training_stats.py (cross-rank float64 counters)", [
    C("_counter_dtype  = torch.float64", "unsupported_op_workaround", "replace", True,
      "_counter_dtype  = torch.float32 # Data type to use for the internal counters (HCCL all_reduce has no fp64).",
      "_sync() stacks the counters and calls torch.distributed.all_reduce on the sync device. Ascend's 2.7.1 API "
      "list: all_reduce supports bf16/fp16/fp32/int32/int64/bool only, so fp64 counters fail under HCCL. "
      "Only multi-NPU runs hit it; fp32 loses some precision on very long runs."),
])

E("eg3d_custom_ops", "eg3d/torch_utils/custom_ops.py", "device_branch_or_abstraction",
  "NVlabs/eg3d eg3d/torch_utils/custom_ops.py (ninja JIT plugin builder)", [])

E("eg3d_bias_act", "eg3d/torch_utils/ops/bias_act.py", "device_branch_or_abstraction",
  "NVlabs/eg3d eg3d/torch_utils/ops/bias_act.py (CUDA plugin guarded by x.device.type == 'cuda')", [])

E("eg3d_renderer", "eg3d/training/volumetric_rendering/renderer.py", "device_branch_or_abstraction",
  "NVlabs/eg3d eg3d/training/volumetric_rendering/renderer.py (tri-plane grid_sample, importance sampling)", [])

E("eg3d_gen_samples", "eg3d/gen_samples.py", "explicit_replacement",
  "NVlabs/eg3d eg3d/gen_samples.py (images + density cube for marching cubes)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "Stand-alone entry script."),
    C("device = torch.device('cuda')", "device_type", "replace", True,
      "    device = torch.device('npu')",
      "Everything else follows `device` or z.device."),
])

E("eg3d_env", "environment.yml", "explicit_replacement",
  "NVlabs/eg3d environment.yml (conda, pytorch + cudatoolkit)", [
    C("- pytorch=1.11.0", "import_torch_npu", "replace", True, "  - pytorch=2.1.0",
      "torch_npu wheels must match the torch version exactly; 1.11 only pairs with EOL torch_npu 1.11.0.postN. "
      "With torch-npu 2.1.0 added below, leaving 1.11.0 is a version mismatch."),
    C("- cudatoolkit=11.1", "custom_cuda_extension", "replace", True, "  - cpuonly",
      "cudatoolkit pulls the CUDA build of pytorch (and does not exist for the aarch64 Ascend hosts); "
      "cpuonly selects the CPU build that torch_npu extends."),
    C("- tensorboard", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post17",
      "Adds the Ascend extension matching torch 2.1.0 (CANN 8.3.RC1 per the version matrix)."),
])

# --------------------------------------------------------------------------------------------
# pi-GAN (marcoamonteiro/pi-GAN): mp.spawn + DDP + torch.cuda.amp, SIREN generator
# --------------------------------------------------------------------------------------------

E("pigan_train", "train.py", "explicit_replacement",
  "marcoamonteiro/pi-GAN train.py (mp.spawn, nccl, torch.device(rank), cuda AMP, CUDA_VISIBLE_DEVICES)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "Entry script; spawned workers re-import it."),
    C("dist.init_process_group('nccl'", "dist_backend", "replace", True,
      "    dist.init_process_group('hccl', rank=rank, world_size=world_size)",
      "NCCL -> HCCL."),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True,
      "    torch.npu.set_device(rank)", "Bind each worker to its NPU."),
    C("device = torch.device(rank)", "device_type", "replace", True,
      "    device = torch.device(f'npu:{rank}')",
      "A bare int makes a CUDA device (torch.device(0) == cuda:0), so this is a hidden 'cuda'."),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "    scaler = torch.npu.amp.GradScaler()",
      "A CUDA GradScaler disables itself without CUDA; with autocast ported to NPU fp16 the losses would then "
      "be unscaled and gradients underflow."),
    C("optimizer_G.load_state_dict(torch.load(", "tensor_to_device", "replace", False,
      "        optimizer_G.load_state_dict(torch.load(os.path.join(opt.load_dir, 'optimizer_G.pth'), map_location=device))",
      "Resuming a GPU-saved optimizer state on an NPU host fails to deserialise CUDA tensors; resuming an "
      "NPU run works unchanged, so not required."),
    C("optimizer_D.load_state_dict(torch.load(", "tensor_to_device", "replace", False,
      "        optimizer_D.load_state_dict(torch.load(os.path.join(opt.load_dir, 'optimizer_D.pth'), map_location=device))",
      "Same as optimizer_G."),
    C("scaler = torch.cuda.amp.GradScaler(enabled=False)", "amp", "replace", False,
      "        scaler = torch.npu.amp.GradScaler(enabled=False)",
      "A disabled scaler behaves the same on any device; edited for consistency only."),
    C("with torch.cuda.amp.autocast():", "amp", "replace", True,
      "            with torch.npu.amp.autocast():",
      "autocast('cuda') is turned off with a warning when CUDA is unavailable, so AMP would silently stop; "
      "pi-GAN's batch_split/memory settings assume fp16."),
    C("autocast(enabled=not metadata.get('disc_fp32'", "amp", "replace", True,
      "            with torch.npu.amp.autocast(enabled=not metadata.get('disc_fp32', False)):",
      "Same silent AMP loss."),
    C("autocast(enabled=not metadata.get('gen_fp32'", "amp", "replace", True,
      "                with torch.npu.amp.autocast(enabled=not metadata.get('gen_fp32', False)):",
      "Same silent AMP loss."),
    C("[GPU: {os.environ['CUDA_VISIBLE_DEVICES']}]", "env_var", "replace", True,
      "                    tqdm.write(f\"[Experiment: {opt.output_dir}] [NPU: {os.environ.get('ASCEND_RT_VISIBLE_DEVICES', '')}] [Epoch: {discriminator.epoch}/{opt.n_epochs}] [D loss: {d_loss.item()}] [G loss: {g_loss.item()}] [Step: {discriminator.step}] [Alpha: {alpha:.2f}] [Img Size: {metadata['img_size']}] [Batch Size: {metadata['batch_size']}] [TopK: {topk_num}] [Scale: {scaler.get_scale()}]\")",
      "Looks like a log string but indexes os.environ: KeyError on rank 0 once CUDA_VISIBLE_DEVICES is no longer set."),
    C("torch.autocast(device_type='cuda', dtype=torch.float16)", "amp", "replace", True,
      "                        with torch.autocast(device_type='npu', dtype=torch.float16):",
      "Sampling under autocast; 'cuda' device_type disables itself on an NPU host."),
    C("torch.cuda.amp.autocast(enabled=True)", "amp", "replace", True,
      "                        with torch.npu.amp.autocast(enabled=True):",
      "Same, EMA sample."),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "                torch.npu.empty_cache()",
      "torch.cuda.empty_cache() is a no-op when CUDA was never initialised, so nothing fails; only the NPU "
      "cache is not released after FID (memory/perf)."),
    C("num_gpus = len(os.environ['CUDA_VISIBLE_DEVICES']", "env_var", "replace", True,
      "    num_gpus = len(os.environ['ASCEND_RT_VISIBLE_DEVICES'].split(','))",
      "World size is derived from the CUDA mask; unset on an NPU host -> KeyError. ASCEND_RT_VISIBLE_DEVICES has the "
      "same comma syntax and also re-indexes devices from 0."),
])

E("pigan_volrender", "generators/volumetric_rendering.py", "device_branch_or_abstraction",
  "marcoamonteiro/pi-GAN generators/volumetric_rendering.py (rays, camera sampling, sample_pdf)", [])

E("pigan_siren", "siren/siren.py", "device_branch_or_abstraction",
  "marcoamonteiro/pi-GAN siren/siren.py (FiLM SIREN, mapping network)", [])

E("pigan_curriculums", "curriculums.py", "device_branch_or_abstraction",
  "marcoamonteiro/pi-GAN curriculums.py (training schedules as dicts)", [])

E("pigan_fid", "fid_evaluation.py", "explicit_replacement",
  "marcoamonteiro/pi-GAN fid_evaluation.py (pytorch_fid with a hard-coded 'cuda')", [
    C("calculate_fid_given_paths([real_dir, generated_dir], 128, 'cuda', 2048)", "device_type", "replace", True,
      "    fid = fid_score.calculate_fid_given_paths([real_dir, generated_dir], 128, 'npu', 2048)",
      "pytorch_fid moves InceptionV3 to this device string."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "    torch.npu.empty_cache()",
      "No-op without CUDA; memory only."),
])

E("pigan_render", "render_multiview_images.py", "explicit_replacement",
  "marcoamonteiro/pi-GAN render_multiview_images.py (is_available fallback, torch.load of released checkpoints)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "Stand-alone script; torch.npu is used below."),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "Runs silently on the CPU on an NPU host."),
    C("ema = torch.load(ema_file)", "tensor_to_device", "replace", True,
      "ema = torch.load(ema_file, map_location=device)",
      "The released pi-GAN checkpoints were saved on GPUs; without map_location torch.load tries to restore "
      "CUDA tensors and fails. (The generator load above already passes map_location.)"),
])

# --------------------------------------------------------------------------------------------
# GIRAFFE (autonomousvision/giraffe): single device, --no-cuda flag, checkpoints from URLs
# --------------------------------------------------------------------------------------------

E("giraffe_train", "train.py", "explicit_replacement",
  "autonomousvision/giraffe train.py (is_cuda / --no-cuda idiom)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "Entry script."),
    C("is_cuda = (torch.cuda.is_available() and not args.no_cuda)", "torch_cuda_api", "replace", True,
      "is_cuda = (torch.npu.is_available() and not args.no_cuda)",
      "False on an NPU host -> silently trains on the CPU. Flag name kept for CLI compatibility."),
    C("device = torch.device(\"cuda\" if is_cuda else \"cpu\")", "device_type", "replace", True,
      "device = torch.device(\"npu\" if is_cuda else \"cpu\")", "Device passed to model and trainer."),
])

E("giraffe_render", "render.py", "explicit_replacement",
  "autonomousvision/giraffe render.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "Entry script."),
    C("is_cuda = (torch.cuda.is_available() and not args.no_cuda)", "torch_cuda_api", "replace", True,
      "is_cuda = (torch.npu.is_available() and not args.no_cuda)", "Silent CPU fallback otherwise."),
    C("device = torch.device(\"cuda\" if is_cuda else \"cpu\")", "device_type", "replace", True,
      "device = torch.device(\"npu\" if is_cuda else \"cpu\")", "Device for model and renderer."),
])

E("giraffe_training", "im2scene/giraffe/training.py", "device_branch_or_abstraction",
  "autonomousvision/giraffe im2scene/giraffe/training.py (Trainer, R1 via autograd.grad)", [])

E("giraffe_checkpoints", "im2scene/checkpoints.py", "explicit_replacement",
  "autonomousvision/giraffe im2scene/checkpoints.py (torch.load / model_zoo.load_url)", [
    C("state_dict = torch.load(filename)", "tensor_to_device", "replace", False,
      "            state_dict = torch.load(filename, map_location='cpu')",
      "Local files are usually this run's own checkpoints (fine on NPU); a GPU-saved file would fail to "
      "deserialise. load_state_dict copies to the module's device, so 'cpu' is safe."),
    C("state_dict = model_zoo.load_url(url, progress=True)", "tensor_to_device", "replace", True,
      "        state_dict = model_zoo.load_url(url, progress=True, map_location='cpu')",
      "The pretrained GIRAFFE models in the configs are URLs to GPU-saved state dicts -> CUDA deserialisation "
      "error on an NPU host."),
])

E("giraffe_env", "environment.yml", "explicit_replacement",
  "autonomousvision/giraffe environment.yml (pytorch 1.7.1 + cudatoolkit 10.1)", [
    C("- pytorch=1.7.1", "import_torch_npu", "replace", True, "  - pytorch=2.1.0",
      "No torch_npu release exists for torch 1.7.1."),
    C("- torchvision=0.8.2", "import_torch_npu", "replace", True, "  - torchvision=0.16.0",
      "torchvision is pinned to the torch version (0.16 pairs with torch 2.1)."),
    C("- cudatoolkit=10.1", "custom_cuda_extension", "replace", True, "  - cpuonly",
      "Select the CPU build of pytorch that torch_npu extends."),
    C("- scikit-image==0.18.1", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post17",
      "Adds the Ascend extension."),
])

# --------------------------------------------------------------------------------------------
# StyleNeRF (facebookresearch/StyleNeRF): hydra launcher, env:// / tcp init, generate script
# --------------------------------------------------------------------------------------------

E("stylenerf_run_train", "run_train.py", "explicit_replacement",
  "facebookresearch/StyleNeRF run_train.py (hydra, spawn/slurm launcher, nccl)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "Entry script."),
    C("args.num_gpus = torch.cuda.device_count() if cfg.gpus is None else cfg.gpus", "torch_cuda_api", "replace", True,
      "    args.num_gpus = torch.npu.device_count() if cfg.gpus is None else cfg.gpus",
      "conf default gpus: ~ -> auto-detect; torch.cuda.device_count() is 0 on an NPU host and batch_gpu/world-size "
      "arithmetic breaks."),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "        torch.npu.set_device(args.gpu)", "Bind worker to its NPU."),
    C("torch.distributed.init_process_group(backend=\"nccl\"", "dist_backend", "replace", True,
      "        torch.distributed.init_process_group(backend=\"hccl\", init_method=args.dist_url,",
      "NCCL -> HCCL (continuation line unchanged)."),
    C("sync_device = torch.device('cuda', rank)", "device_type", "replace", True,
      "    sync_device = torch.device('npu', rank) if args.num_gpus > 1 else None",
      "training_stats sync device."),
])

E("stylenerf_generate", "generate.py", "explicit_replacement",
  "facebookresearch/StyleNeRF generate.py (renders videos from a pickle)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "Entry script."),
    C("device = torch.device('cuda')", "device_type", "replace", True,
      "    device = torch.device('npu')", "Single device for G, D and labels."),
])

E("stylenerf_conf", "conf/config.yaml", "device_branch_or_abstraction",
  "facebookresearch/StyleNeRF conf/config.yaml (hydra defaults)", [])

E("stylenerf_camera", "dnnlib/camera.py", "device_branch_or_abstraction",
  "facebookresearch/StyleNeRF dnnlib/camera.py (pose sampling, 6D rotations, NeRF++ outside points)", [])

E("stylenerf_requirements", "requirements.txt", "explicit_replacement",
  "facebookresearch/StyleNeRF requirements.txt (+cu110 wheels)", [
    C("--find-links https://download.pytorch.org/whl/torch_stable.html", "import_torch_npu", "replace", True,
      "torch-npu==2.1.0.post17",
      "The CUDA wheel index is no longer needed; its line becomes the torch-npu requirement."),
    C("torch==1.7.1+cu110", "import_torch_npu", "replace", True, "torch==2.1.0",
      "+cu110 wheels do not exist for aarch64 and no torch_npu pairs with 1.7.1."),
    C("torchvision==0.8.2+cu110", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "Matches torch 2.1.0."),
])

# --------------------------------------------------------------------------------------------
# GET3D (nv-tlabs/GET3D): DMTet + nvdiffrast, eager plugin init, Docker
# --------------------------------------------------------------------------------------------

E("get3d_train", "train_3d.py", "explicit_replacement",
  "nv-tlabs/GET3D train_3d.py (StyleGAN3-style launcher)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "Entry script."),
    C("backend='nccl', init_method=init_method", "dist_backend", "replace", True,
      "                backend='hccl', init_method=init_method, rank=rank, world_size=c.num_gpus)",
      "NCCL -> HCCL."),
    C("sync_device = torch.device('cuda', rank)", "device_type", "replace", True,
      "    sync_device = torch.device('npu', rank) if c.num_gpus > 1 else None", "training_stats sync device."),
    C("if c.inference_vis:", "compile_mode", "npu_only_addition", False,
      "    torch.npu.set_compile_mode(jit_compile=False)",
      "Marching tets yields a different vertex/face count every sample (dynamic shapes); msFmkTransplt advises "
      "jit_compile=False for dynamic shapes. Performance only."),
])

E("get3d_training_loop", "training/training_loop_3d.py", "explicit_replacement",
  "nv-tlabs/GET3D training/training_loop_3d.py (eager plugin _init(), peak-memory stats)", [
    C("=upfirdn2d._init()", "custom_cuda_extension", "removal", True, None,
      "Unconditionally JIT-builds the upfirdn2d CUDA plugin with nvcc -> fails on an NPU host. The op itself "
      "falls back to its PyTorch reference path for non-CUDA tensors."),
    C("=bias_act._init()", "custom_cuda_extension", "removal", True, None, "Same for bias_act."),
    C("=filtered_lrelu._init()", "custom_cuda_extension", "removal", True, None, "Same for filtered_lrelu."),
    C("device = torch.device('cuda', rank)", "device_type", "replace", True,
      "    device = torch.device('npu', rank)", "Per-rank device; also handed to G/D (DMTet, renderer)."),
    C("torch.backends.cudnn.allow_tf32 = False", "torch_cuda_api", "npu_only_addition", False, HF32_OFF,
      "As in EG3D: TF32 flags are inert on NPU; HF32 analogue unconfirmed in the knowledge base."),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", True,
      "        fields += [f\"gpumem {training_stats.report0('Resources/peak_gpu_mem_gb', torch.npu.max_memory_allocated(device) / 2 ** 30):<6.2f}\"]",
      "torch.cuda memory query with an npu device fails."),
    C("=torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "        torch.npu.reset_peak_memory_stats()", "Lazy CUDA init fails."),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "            torch.npu.empty_cache()", "No-op without CUDA; memory only."),
])

E("get3d_neural_render", "uni_rep/render/neural_render.py", "kernel_rewrite",
  "nv-tlabs/GET3D uni_rep/render/neural_render.py (nvdiffrast rasterize/interpolate/antialias)", [
    C("=import nvdiffrast.torch as dr", "custom_cuda_extension", "replace", True,
      "import npu_rasterizer as dr  # NPU re-implementation of rasterize/interpolate/antialias/DepthPeeler",
      "nvdiffrast's Cuda and GL contexts both need CUDA; there is no Ascend backend in the knowledge base. The "
      "porter must supply a rasterizer with the same API (module name here is a placeholder)."),
    C("self.ctx = dr.RasterizeCudaContext(device=device)", "custom_cuda_extension", "replace", True,
      "            self.ctx = dr.RasterizeContext(device=device)",
      "CUDA-specific context class of the replaced library."),
])

E("get3d_dmtet", "uni_rep/rep_3d/dmtet.py", "device_branch_or_abstraction",
  "nv-tlabs/GET3D uni_rep/rep_3d/dmtet.py (marching tetrahedra tables, DMTetGeometry)", [])

E("get3d_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "nv-tlabs/GET3D docker/Dockerfile (NGC PyTorch base, nvdiffrast, kaolin cu113)", [
    C("ARG BASE_IMAGE=nvcr.io/nvidia/pytorch:21.08-py3", "import_torch_npu", "replace", True,
      "ARG BASE_IMAGE=ascend-pytorch:2.1.0-cann8.3.rc1",
      "NGC image = CUDA torch; needs an image with CANN + torch 2.1.0 + torch_npu (tag is a placeholder)."),
    C("ENV NVIDIA_VISIBLE_DEVICES all", "env_var", "replace", False,
      "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "nvidia-container-runtime hint; Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES. Devices can also be "
      "passed at docker run, so not required."),
    C("RUN pip install git+https://github.com/NVlabs/nvdiffrast/", "custom_cuda_extension", "removal", False, None,
      "Installs (plugins are JIT-built at first use) but is unusable on NPU and no longer imported after the port."),
    C("RUN pip install kaolin==0.12.0", "custom_cuda_extension", "removal", True, None,
      "Only x86_64 CUDA 11.3 / torch 1.10 wheels on that index; the build fails on the Ascend image."),
    C("=WORKDIR /workspace", "env_var", "npu_only_addition", False,
      "RUN echo 'source /usr/local/Ascend/ascend-toolkit/set_env.sh' >> /root/.bashrc",
      "Ascend base images normally already set the CANN environment; added for shells started in the container."),
])

E("get3d_install", "install_get3d.sh", "explicit_replacement",
  "nv-tlabs/GET3D install notes as a bare-metal conda script (nvidia-smi sanity checks)", [
    C("conda activate ${ENV_NAME}", "env_var", "npu_only_addition", True, CANN_ENV,
      "torch_npu cannot load without the CANN environment; the ported sanity check below imports it under set -e."),
    C("pip install torch==1.9.0+cu111", "import_torch_npu", "replace", True,
      "pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post17",
      "CUDA wheels -> CPU torch + torch-npu (matching versions)."),
    C("=pip install git+https://github.com/NVlabs/nvdiffrast/", "custom_cuda_extension", "removal", False, None,
      "Unused after the port (see neural_render)."),
    C("=nvidia-smi", "device_capability_check", "replace", True, "npu-smi info",
      "nvidia-smi is absent on an Ascend host and the script runs with set -e."),
    C("torch.cuda.is_available(), torch.version.cuda", "torch_cuda_api", "replace", False,
      "python -c \"import torch, torch_npu; print(torch.__version__, torch.npu.is_available(), torch_npu.__version__)\"",
      "Prints False/None rather than failing; informational."),
    C("u._init(); print('plugins OK')", "custom_cuda_extension", "removal", True, None,
      "Forces the nvcc plugin build -> fails under set -e."),
    C("CUDA_VISIBLE_DEVICES=4,5,6,7 python train_3d.py", "env_var", "replace", False,
      "echo \"  ASCEND_RT_VISIBLE_DEVICES=4,5,6,7 python train_3d.py --outdir=runs --data=./data/car --camera_path=./data/camera --gpus=4 --batch=32 --gamma=40 --data_camera_mode shapenet_car --dmtet_scale 1.0 --use_shapenet_split 1 --one_3d_generator 1 --fp32 0\"",
      "Only a printed hint, but followed literally it would put the 4 ranks on NPUs 0-3 instead of 4-7."),
])

# --------------------------------------------------------------------------------------------
# StyleSDF (royorel/StyleSDF): rosinality-style ops loaded at import, torch.distributed.launch
# --------------------------------------------------------------------------------------------

E("stylesdf_fused_act", "op/fused_act.py", "device_branch_or_abstraction",
  "royorel/StyleSDF op/fused_act.py (rosinality fused_bias_act, cpp_extension.load at import)", [
    C("fused = load(\"fused\", sources=_fused_sources)", "custom_cuda_extension", "replace", True,
      "fused = None  # the CUDA kernel cannot be built on Ascend; fused_leaky_relu uses the PyTorch path",
      "JIT nvcc build at import time: the whole model package fails to import on an NPU host."),
    C("if input.device.type == \"cpu\":", "device_type", "replace", True,
      "    if input.device.type in (\"cpu\", \"npu\"):",
      "Every non-CPU tensor is sent to the CUDA kernel; NPU tensors must take the PyTorch reference branch."),
])

E("stylesdf_distributed", "distributed.py", "explicit_replacement",
  "royorel/StyleSDF distributed.py (rosinality all_gather with .to('cuda'))", [
    C("tensor = torch.ByteTensor(storage).to('cuda')", "tensor_to_device", "replace", True,
      "    tensor = torch.ByteTensor(storage).to('npu')", "Fails whenever all_gather() is used with >1 rank."),
    C("local_size = torch.IntTensor([tensor.numel()]).to('cuda')", "tensor_to_device", "replace", True,
      "    local_size = torch.IntTensor([tensor.numel()]).to('npu')", "Same."),
    C("size_list = [torch.IntTensor([0]).to('cuda')", "tensor_to_device", "replace", True,
      "    size_list = [torch.IntTensor([0]).to('npu') for _ in range(world_size)]", "Same."),
    C("tensor_list.append(torch.ByteTensor(size=(max_size,)).to('cuda'))", "tensor_to_device", "replace", True,
      "        tensor_list.append(torch.ByteTensor(size=(max_size,)).to('npu'))", "Same."),
    C("padding = torch.ByteTensor(size=(max_size - local_size,)).to('cuda')", "tensor_to_device", "replace", True,
      "        padding = torch.ByteTensor(size=(max_size - local_size,)).to('npu')", "Same."),
])

E("stylesdf_train", "train_volume_renderer.py", "explicit_replacement",
  "royorel/StyleSDF train_volume_renderer.py (device = 'cuda', torch.distributed.launch env://)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "Entry script."),
    C("device = \"cuda\"", "device_type", "replace", True, "    device = \"npu\"",
      "Module-level device string used for every model and tensor."),
    C("torch.cuda.set_device(opt.training.local_rank)", "torch_cuda_api", "replace", True,
      "        torch.npu.set_device(opt.training.local_rank)", "Bind rank to its NPU."),
    C("init_process_group(backend=\"nccl\", init_method=\"env://\")", "dist_backend", "replace", True,
      "        torch.distributed.init_process_group(backend=\"hccl\", init_method=\"env://\")", "NCCL -> HCCL."),
])
