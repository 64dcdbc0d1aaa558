"""Labels for probe383 (Layout and floorplan generation, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit for an explicit torch_npu port
(torch.npu.*, 'npu', hccl; no transfer_to_npu). `required` follows the complete-port
counterfactual described in README.md.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU_NOTE = ("entry script: import torch_npu right after torch so the 'npu' device and torch.npu exist "
                   "(the project pins a pre-2.5.1 torch, where there is no backend autoload)")

# ---------------------------------------------------------------------------------------------
# House-GAN++ (ennauata/houseganpp)
# ---------------------------------------------------------------------------------------------
E("hgpp_train", "train.py", "explicit_replacement",
  "ennauata/houseganpp train.py (Conv-MPN GAN training loop, Tensor alias, .cuda() on modules)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C("cuda = True if torch.cuda.is_available() else False", "torch_cuda_api", "replace", True,
      "cuda = True if torch.npu.is_available() else False",
      "drives every placement below; left alone it is False on an NPU host and training silently runs on the CPU"),
    C("=generator.cuda()", "tensor_to_device", "replace", True, "generator.npu()",
      "Module.cuda() on a host without CUDA raises on the first parameter"),
    C("=discriminator.cuda()", "tensor_to_device", "replace", True, "discriminator.npu()",
      "same as the generator"),
    C("=adversarial_loss.cuda()", "tensor_to_device", "replace", False, "adversarial_loss.npu()",
      "BCEWithLogitsLoss has no parameters or buffers, so Module.cuda() never touches a tensor and does not fail; "
      "changed only for consistency"),
    C("Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor", "torch_cuda_api", "replace", True,
      "Tensor = torch.npu.FloatTensor if cuda else torch.FloatTensor",
      "legacy typed-tensor alias used for every input (mks.type(Tensor), Tensor(np...)); torch.npu.FloatTensor exists"),
    C("    if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "    if torch.npu.is_available():",
      "guards the move of the evaluation generator; unchanged, generatorTest stays on CPU while inputs are NPU tensors"),
    C("generatorTest.cuda()", "tensor_to_device", "replace", True, "        generatorTest.npu()",
      "evaluation copy of the generator"),
])

E("hgpp_test", "test.py", "explicit_replacement",
  "ennauata/houseganpp test.py (iterative room-type-conditioned inference)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = opt.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = opt.gpu',
      "--gpu picks the card; CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so the job would silently run on "
      "NPU 0. Set before torch_npu initialises the device, as here"),
    C("model.load_state_dict(torch.load(opt.checkpoint), strict=True)", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(opt.checkpoint, map_location='cpu'), strict=True)",
      "the released checkpoint was saved from CUDA tensors; torch.load without map_location fails when CUDA is absent"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "otherwise the model stays on CPU while _infer sends inputs to the NPU"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "    model.npu()", ""),
    C("Tensor = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor", "torch_cuda_api",
      "replace", False, "Tensor = torch.npu.FloatTensor if torch.npu.is_available() else torch.FloatTensor",
      "dead variable in this script (never used); changed for consistency only"),
    C("masks = model(z.to('cuda'), given_masks_in.to('cuda'), given_nds.to('cuda'), given_eds.to('cuda'))",
      "device_type", "replace", True,
      "masks = model(z.to('npu'), given_masks_in.to('npu'), given_nds.to('npu'), given_eds.to('npu'))",
      "four hard-coded 'cuda' strings on one line"),
    C("'GPU' if torch.cuda.is_available() else 'CPU'", "torch_cuda_api", "replace", False,
      "        globalIndex * opt.num_variations, t_total, 'NPU' if torch.npu.is_available() else 'CPU'))",
      "log text only: would print CPU on an NPU host"),
])

E("hgpp_models", "models/models.py", "explicit_replacement",
  "ennauata/houseganpp models/models.py (CMP message passing, Generator/Discriminator, WGAN-GP penalty)", [
    C("grad_outputs = torch.ones(batch_size, 1).cuda()", "tensor_to_device", "replace", True,
      "    grad_outputs = torch.ones(batch_size, 1).to(device)",
      "the gradient-penalty seed tensor; the lines around it already use .to(device)"),
])

E("hgpp_utils", "misc/utils.py", "explicit_replacement",
  "ennauata/houseganpp misc/utils.py (input init, mask/graph drawing) - device-agnostic", [])

E("hgpp_dataset", "dataset/floorplan_dataset_maps_functional_high_res.py", "explicit_replacement",
  "ennauata/houseganpp dataset/floorplan_dataset_maps_functional_high_res.py (RPLAN graph dataset, collate) - "
  "CPU only", [])

# ---------------------------------------------------------------------------------------------
# HouseDiffusion (aminshabani/house_diffusion), improved-diffusion code base
# ---------------------------------------------------------------------------------------------
E("hd_dist_util", "house_diffusion/dist_util.py", "explicit_replacement",
  "aminshabani/house_diffusion house_diffusion/dist_util.py (openai improved-diffusion MPI helpers)", [
    C("=import torch as th", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "every script goes through dist_util before touching devices, so the torch_npu import lives here"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = f"{MPI.COMM_WORLD.Get_rank() % GPUS_PER_NODE}"', "env_var", "replace",
      True, 'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = f"{MPI.COMM_WORLD.Get_rank() % GPUS_PER_NODE}"',
      "one device per MPI rank; dev() returns the bare device so every rank would otherwise land on NPU 0"),
    C('backend = "gloo" if not th.cuda.is_available() else "nccl"', "dist_backend", "replace", True,
      'backend = "gloo" if not th.npu.is_available() else "hccl"',
      "unchanged this selects gloo on an NPU host and gloo cannot reduce NPU tensors (sync_params broadcasts them)"),
    C("    if th.cuda.is_available():", "torch_cuda_api", "replace", True, "    if th.npu.is_available():",
      "dev(): unchanged, everything runs on the CPU"),
    C('return th.device(f"cuda")', "device_type", "replace", True, '        return th.device(f"npu")', ""),
])

E("hd_train_util", "house_diffusion/train_util.py", "explicit_replacement",
  "aminshabani/house_diffusion house_diffusion/train_util.py (TrainLoop, DDP wrap, fp16 master params)", [
    C("self.sync_cuda = th.cuda.is_available()", "torch_cuda_api", "replace", False,
      "        self.sync_cuda = th.npu.is_available()",
      "attribute is never read in this code base; consistency only"),
    C("        if th.cuda.is_available():", "torch_cuda_api", "replace", True,
      "        if th.npu.is_available():",
      "decides whether the model is wrapped in DDP; unchanged, multi-rank runs train without gradient sync "
      "(only a warning is logged)"),
])

E("hd_transformer", "house_diffusion/transformer.py", "explicit_replacement",
  "aminshabani/house_diffusion house_diffusion/transformer.py (masked multi-head attention over corners) - "
  "device-agnostic", [])

E("hd_image_train", "scripts/image_train.py", "explicit_replacement",
  "aminshabani/house_diffusion scripts/image_train.py (entry point; all device logic via dist_util)", [])

E("hd_image_sample", "scripts/image_sample.py", "explicit_replacement",
  "aminshabani/house_diffusion scripts/image_sample.py (sampling, SVG rendering, FID)", [
    C("model_kwargs[key] = model_kwargs[key].cuda()", "tensor_to_device", "replace", True,
      "                model_kwargs[key] = model_kwargs[key].to(dist_util.dev())",
      "conditioning tensors for the sampler"),
    C("sample_gt = data_sample.cuda().unsqueeze(0)", "tensor_to_device", "replace", True,
      "            sample_gt = data_sample.to(dist_util.dev()).unsqueeze(0)",
      "only used for drawing, but Tensor.cuda() itself raises without CUDA"),
    C("calculate_fid_given_paths(['outputs/gt', 'outputs/pred'], 64, 'cuda', 2048)", "device_type", "replace", True,
      "        fid_score = calculate_fid_given_paths(['outputs/gt', 'outputs/pred'], 64, 'npu', 2048)",
      "pytorch-fid moves InceptionV3 to this device string"),
])

E("hd_train_sh", "scripts/train.sh", "explicit_replacement",
  "aminshabani/house_diffusion README launch commands (CUDA_VISIBLE_DEVICES=... python image_train.py)", [
    C("=set -e", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; unnecessary where the image/login shell already sources it (unconfirmed for the target host)"),
    C("CUDA_VISIBLE_DEVICES=${GPU} python image_train.py", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU} python image_train.py \\",
      "setup_dist() unconditionally overwrites the visible-devices variable with rank % 8 = 0 before any device is "
      "initialised, upstream as well as in the port, so this shell value never takes effect; edited for intent only"),
    C("CUDA_VISIBLE_DEVICES=${GPU} python image_sample.py", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU} python image_sample.py \\",
      "same as above: overwritten by setup_dist()"),
])

# ---------------------------------------------------------------------------------------------
# LayoutGAN++ / CLG-LO (ktrk115/const_layout)
# ---------------------------------------------------------------------------------------------
E("cl_train_gan", "train_gan.py", "explicit_replacement",
  "ktrk115/const_layout train_gan.py (LayoutGAN++ training with Layout FID / Max IoU validation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "    device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "single device global for models, batches and the LayoutFID net; unchanged it silently trains on CPU"),
])

E("cl_metric", "metric.py", "explicit_replacement",
  "ktrk115/const_layout metric.py (LayoutFID with map_location=device, IoU/overlap/alignment) - device-agnostic", [])

E("cl_util", "util.py", "explicit_replacement",
  "ktrk115/const_layout util.py (set_seed, experiment dirs, layout rendering)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "    torch.npu.manual_seed_all(seed)",
      "torch.manual_seed on the line above already seeds registered accelerator backends in torch >= 2.1 "
      "(unconfirmed in the knowledge base); the CUDA call is a silent no-op without CUDA"),
])

E("cl_generate_clg", "generate_clg_lo.py", "explicit_replacement",
  "ktrk115/const_layout generate_clg_lo.py (constrained layout generation by latent optimisation, timing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "    device = 'npu' if torch.npu.is_available() else 'cpu'",
      "also feeds map_location and the inner optimiser"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "        torch.npu.synchronize()",
      "timing fence; torch.cuda.synchronize() raises without CUDA"),
    C("torch.cuda.synchronize()  # wait for the inner optimizer", "torch_cuda_api", "replace", True,
      "        torch.npu.synchronize()  # wait for the inner optimizer before stopping the clock", ""),
])

E("cl_env", "environment.yml", "explicit_replacement",
  "ktrk115/const_layout environment.yml (conda env with pip-installed CUDA torch and PyG wheels)", [
    C("download.pytorch.org/whl/torch_stable.html", "import_torch_npu", "npu_only_addition", True,
      "    - torch-npu==2.1.0.post10",
      "torch_npu itself must be installed (wheel version = torch version + .postN)"),
    C("torch==1.8.1+cu102", "import_torch_npu", "replace", True, "    - torch==2.1.0+cpu",
      "torch_npu pairs with the CPU build of torch (x86: whl/cpu; aarch64: plain PyPI); cu102 wheels do not exist "
      "for aarch64 Ascend hosts. 2.1.0 chosen as a maintained torch_npu line"),
    C("torchvision==0.9.1+cu102", "import_torch_npu", "replace", True, "    - torchvision==0.16.0",
      "must match the new torch"),
    C("-f https://pytorch-geometric.com/whl/torch-1.8.0+cu102.html", "custom_cuda_extension", "replace", True,
      "    - -f https://data.pyg.org/whl/torch-2.1.0+cpu.html",
      "torch-scatter/sparse/cluster/spline-conv are compiled extensions; the cu102 builds need libcudart and a "
      "matching CUDA torch"),
])

# ---------------------------------------------------------------------------------------------
# LayoutDM (CyberAgentAILab/layout-dm)
# ---------------------------------------------------------------------------------------------
E("ldm_main", "src/trainer/trainer/main.py", "explicit_replacement",
  "CyberAgentAILab/layout-dm src/trainer/trainer/main.py (hydra training entry point, AMP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C("scaler = torch.cuda.amp.GradScaler(enabled=cfg.training.use_amp)", "amp", "replace", True,
      "    scaler = torch.npu.amp.GradScaler(enabled=cfg.training.use_amp)",
      "use_amp is true in config/main.yaml; the CUDA scaler disables itself without CUDA, so fp16 gradients on the "
      "NPU would be unscaled and underflow"),
    C("with torch.cuda.amp.autocast(enabled=cfg.training.use_amp):", "amp", "replace", False,
      "            with torch.npu.amp.autocast(enabled=cfg.training.use_amp):",
      "CUDA autocast just disables itself on an NPU host: training stays fp32, numerically fine but slower and "
      "heavier (performance only)"),
    C("with torch.cuda.amp.autocast(cfg.training.use_amp):", "amp", "replace", False,
      "                with torch.npu.amp.autocast(cfg.training.use_amp):",
      "validation forward; same reasoning"),
    C("peak_mem={torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      '            f"peak_mem={torch.npu.max_memory_allocated() / 1024 ** 3:.2f}GB"',
      "logging only: the CUDA allocator is never initialised, so it reports 0"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "            torch.npu.empty_cache()",
      "a no-op without CUDA; releasing the NPU cache is housekeeping, not correctness"),
])

E("ldm_fid_model", "src/trainer/trainer/fid/model.py", "explicit_replacement",
  "CyberAgentAILab/layout-dm src/trainer/trainer/fid/model.py (FIDNetV3 loader, map_location=device) - "
  "device-agnostic", [])

E("ldm_test", "src/trainer/trainer/test.py", "explicit_replacement",
  "CyberAgentAILab/layout-dm src/trainer/trainer/test.py (conditional sampling + timing with CUDA events)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C("torch.cuda.get_device_name()", "torch_cuda_api", "replace", True,
      '    logger.info(f"Running on {torch.npu.get_device_name()} (job={args.job_dir})")',
      "a log line, but get_device_name() initialises CUDA and raises on an NPU host"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "    start = torch.npu.Event(enable_timing=True)",
      "CUDA events cannot be created without CUDA"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "    end = torch.npu.Event(enable_timing=True)", ""),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "            torch.npu.synchronize()",
      "needed before elapsed_time"),
    C("torch.cuda.max_memory_reserved()", "torch_cuda_api", "replace", False,
      '    logger.info(f"peak memory: {torch.npu.max_memory_reserved() / 1024 ** 2:.0f} MiB")',
      "logging only; reports 0 when unchanged"),
])

E("ldm_config", "config/main.yaml", "explicit_replacement",
  "CyberAgentAILab/layout-dm config/main.yaml (hydra defaults; device key read by main.py and test.py)", [
    C("device: cuda", "device_type", "replace", True, "device: npu  # e.g. npu, npu:1 or cpu",
      "main.py and test.py build torch.device(cfg.device), so the port lives in the config"),
])

E("ldm_train_sh", "bin/train.sh", "explicit_replacement",
  "CyberAgentAILab/layout-dm bin/train.sh (poetry launcher for train + test)", [
    C("=set -eu", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; unnecessary where the image already sources it (unconfirmed for the target host)"),
    C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", True, "npu-smi info",
      "informational, but the script runs under set -e and nvidia-smi is absent on an Ascend host, so the launcher "
      "aborts here"),
    C("CUDA_VISIBLE_DEVICES=${GPU_ID} poetry run python3 -m src.trainer.trainer.main", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU_ID} poetry run python3 -m src.trainer.trainer.main \\",
      "GPU_ID selects the card; ignored by the Ascend runtime otherwise"),
    C("CUDA_VISIBLE_DEVICES=${GPU_ID} poetry run python3 -m src.trainer.trainer.test", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU_ID} poetry run python3 -m src.trainer.trainer.test \\", ""),
])

E("ldm_pyproject", "pyproject.toml", "explicit_replacement",
  "CyberAgentAILab/layout-dm pyproject.toml (poetry deps pinned to cu113 wheel URLs)", [
    C('torch = { url = "https://download.pytorch.org/whl/cu113/', "import_torch_npu", "replace", True,
      'torch = "2.1.0"',
      "cu113 x86 wheel; torch_npu needs the CPU build, and 1.12 has no torch_npu release"),
    C('torchvision = { url = "https://download.pytorch.org/whl/cu113/', "import_torch_npu", "replace", True,
      'torchvision = "0.16.0"', "must match torch"),
    C('torch-geometric = "^2.1.0"', "import_torch_npu", "npu_only_addition", True, 'torch-npu = "2.1.0.post10"',
      "torch_npu itself"),
    C("torch_scatter-2.0.9", "custom_cuda_extension", "replace", True,
      'torch-scatter = { url = "https://data.pyg.org/whl/torch-2.1.0%2Bcpu/torch_scatter-2.1.2%2Bpt21cpu-cp39-cp39-linux_x86_64.whl" }',
      "compiled against CUDA 11.3 torch 1.12"),
    C("torch_sparse-0.6.15", "custom_cuda_extension", "replace", True,
      'torch-sparse = { url = "https://data.pyg.org/whl/torch-2.1.0%2Bcpu/torch_sparse-0.6.18%2Bpt21cpu-cp39-cp39-linux_x86_64.whl" }',
      "same"),
])

# ---------------------------------------------------------------------------------------------
# LayoutTransformer (kampta/DeepLayout), minGPT-based
# ---------------------------------------------------------------------------------------------
E("dl_main", "layout_transformer/main.py", "explicit_replacement",
  "kampta/DeepLayout layout_transformer/main.py (argparse entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C('parser.add_argument("--device", type=str, default="cuda",', "device_type", "replace", False,
      '    parser.add_argument("--device", type=str, default="npu",',
      "the flag is never read (the trainer picks the device itself); consistency only"),
])

E("dl_trainer", "layout_transformer/trainer.py", "explicit_replacement",
  "kampta/DeepLayout layout_transformer/trainer.py (minGPT Trainer: current_device + DataParallel)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "        if torch.npu.is_available():",
      "unchanged, training silently stays on the CPU"),
    C("self.device = torch.cuda.current_device()", "device_type", "replace", True,
      '            self.device = f"npu:{torch.npu.current_device()}"',
      "current_device() returns a bare int and .to(int) means a CUDA ordinal, so the index must be wrapped as an "
      "'npu:N' string"),
    C("self.model = torch.nn.DataParallel(self.model).to(self.device)", "unsupported_op_workaround", "replace", True,
      "            self.model = self.model.to(self.device)",
      "torch.nn.DataParallel is unsupported on Ascend (ops/torch_api_npu_support_2.7.1.tsv); single-device or DDP. "
      "hasattr(model, 'module') checks elsewhere keep working"),
])

E("dl_model", "layout_transformer/model.py", "explicit_replacement",
  "kampta/DeepLayout layout_transformer/model.py (minGPT with explicit causal attention) - device-agnostic", [])

E("dl_utils", "layout_transformer/utils.py", "explicit_replacement",
  "kampta/DeepLayout layout_transformer/utils.py (set_seed, top-k sampling)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", True, "    torch.npu.manual_seed_all(seed)",
      "the only torch seeding call in the project (no torch.manual_seed); unchanged, dropout and multinomial "
      "sampling on the NPU are silently unseeded"),
])

# ---------------------------------------------------------------------------------------------
# RoomFormer (ywyue/RoomFormer): Deformable-DETR ops, DETR misc, diff_ras
# ---------------------------------------------------------------------------------------------
E("rf_setup", "models/ops/setup.py", "kernel_rewrite",
  "ywyue/RoomFormer models/ops/setup.py (Deformable-DETR MultiScaleDeformableAttention CUDAExtension build)", [
    C("extension = CUDAExtension", "custom_cuda_extension", "replace", False, "        extension = NpuExtension",
      "only if the kernel is rewritten in Ascend C (torch_npu.utils.cpp_extension.NpuExtension); this port routes "
      "MSDeformAttn to the PyTorch reference path instead and simply does not build the extension"),
])

E("rf_msda_func", "models/ops/functions/ms_deform_attn_func.py", "kernel_rewrite",
  "ywyue/RoomFormer models/ops/functions/ms_deform_attn_func.py (autograd wrapper + pure-PyTorch reference)", [
    C("import MultiScaleDeformableAttention as MSDA", "custom_cuda_extension", "removal", True, None,
      "the compiled CUDA module cannot be built for NPU; importing it fails at package import time"),
])

E("rf_msda_module", "models/ops/modules/ms_deform_attn.py", "kernel_rewrite",
  "ywyue/RoomFormer models/ops/modules/ms_deform_attn.py (MSDeformAttn module)", [
    C("from ..functions import MSDeformAttnFunction", "custom_cuda_extension", "replace", True,
      "from ..functions.ms_deform_attn_func import ms_deform_attn_core_pytorch",
      "bring in the grid_sample-based reference implementation (grid_sampler_2d has an NPU kernel)"),
    C("output = MSDeformAttnFunction.apply(", "custom_cuda_extension", "replace", True,
      "        output = ms_deform_attn_core_pytorch(",
      "replace the CUDA autograd Function by the PyTorch core (autograd supplies the backward)"),
    C("value, input_spatial_shapes, input_level_start_index, sampling_locations, attention_weights, self.im2col_step)",
      "custom_cuda_extension", "replace", True,
      "            value, input_spatial_shapes, sampling_locations, attention_weights)",
      "the reference core takes no level_start_index / im2col_step"),
])

E("rf_misc", "util/misc.py", "explicit_replacement",
  "ywyue/RoomFormer util/misc.py (DETR distributed helpers, MetricLogger)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace",
      True, "        t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "HCCL reduces device tensors; whether HCCL all_reduce accepts float64 is unconfirmed (float32 would be the "
      "safe variant)"),
    C('tensor = torch.ByteTensor(storage).to("cuda")', "device_type", "replace", True,
      '    tensor = torch.ByteTensor(storage).to("npu")', "all_gather of pickled objects over HCCL"),
    C('local_size = torch.tensor([tensor.numel()], device="cuda")', "device_type", "replace", True,
      '    local_size = torch.tensor([tensor.numel()], device="npu")', ""),
    C('size_list = [torch.tensor([0], device="cuda") for _ in range(world_size)]', "device_type", "replace", True,
      '    size_list = [torch.tensor([0], device="npu") for _ in range(world_size)]', ""),
    C('tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="cuda"))', "device_type", "replace",
      True, '        tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="npu"))', ""),
    C('padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="cuda")', "device_type",
      "replace", True,
      '        padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="npu")', ""),
    C("log_with_mem = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "        log_with_mem = torch.npu.is_available()",
      "only adds the 'max mem' column; if left alone while the print-side check is ported, the extra memory= kwarg "
      "is simply ignored"),
    C("                if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "                if torch.npu.is_available():",
      "must agree with log_with_mem: once that is ported the format string contains {memory}, and this "
      "unchanged check takes the branch without memory= -> KeyError"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "                        memory=torch.npu.max_memory_allocated() / MB))",
      "logging only: reports 0 when unchanged"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "        args.gpu = args.rank % torch.npu.device_count()",
      "SLURM path: device_count() is 0 without CUDA -> ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "    torch.npu.set_device(args.gpu)", ""),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "    args.dist_backend = 'hccl'", ""),
])

E("rf_main", "main.py", "explicit_replacement",
  "ywyue/RoomFormer main.py (Deformable-DETR style argparse/DDP training entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
      "    parser.add_argument('--device', default='npu',",
      "torch.device(args.device) everywhere downstream"),
])

E("rf_polygon", "diff_ras/polygon.py", "kernel_rewrite",
  "ywyue/RoomFormer diff_ras/polygon.py (SoftPolygon differentiable rasterizer over a CUDA extension)", [
    C("=import native_rasterizer", "custom_cuda_extension", "removal", True, None,
      "CUDA-only extension (diff_ras/csrc); no NPU build"),
    C("return SoftPolygonFunction.apply(vertices, width, height, self.inv_smoothness, self.mode)",
      "custom_cuda_extension", "replace", True,
      "        return soft_polygon_torch(vertices, width, height, self.inv_smoothness, self.mode)",
      "porter-written pure-PyTorch soft rasterizer (signed distance to edges + sigmoid, winding test for the "
      "inside); autograd replaces the hand-written backward"),
])

E("rf_train_sh", "tools/train_stru3d.sh", "explicit_replacement",
  "ywyue/RoomFormer tools/train_stru3d.sh (torch.distributed.launch on 8 GPUs)", [
    C("=NUM_GPUS=8", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; unnecessary where the image already sources it (unconfirmed for the target host)"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "lists all eight cards, which is what an 8-NPU host exposes anyway; LOCAL_RANK 0-7 map to npu:0-7 "
      "either way"),
])
