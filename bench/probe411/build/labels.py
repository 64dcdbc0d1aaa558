# Labels for probe411 (deformable medical image registration: VoxelMorph, TransMorph, LapIRN,
# ICON/uniGradICON, SynthMorph). One entry per upstream file; one C(...) per line a careful
# porter would edit for Ascend NPU + torch_npu (explicit port: torch.npu.*, 'npu', hccl).
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("explicit port imports torch_npu in the entry script so torch.npu / 'npu' exist; "
               "autoload makes it optional only from torch_npu 2.5.1 on")

# ----------------------------------------------------------------------------------------- VoxelMorph
E("vxm_layers", "voxelmorph/torch/layers.py", "explicit_replacement",
  "voxelmorph/voxelmorph voxelmorph/torch/layers.py (SpatialTransformer, VecInt, ResizeTransform)", [])

E("vxm_losses", "voxelmorph/torch/losses.py", "device_branch_or_abstraction",
  "voxelmorph/voxelmorph voxelmorph/torch/losses.py (NCC, MSE, Dice, Grad, KL)", [
    C('sum_filt = torch.ones([1, 1, *win]).to("cuda")', "tensor_to_device", "replace", True,
      'sum_filt = torch.ones([1, 1, *win]).to(Ii.device)',
      "hard-coded 'cuda' for the NCC box filter; on an NPU host .to('cuda') raises (no CUDA). "
      "Following the input's device is the cleanest fix (an explicit 'npu' works too)"),
])

E("vxm_networks", "voxelmorph/torch/networks.py", "explicit_replacement",
  "voxelmorph/voxelmorph voxelmorph/torch/networks.py (Unet, VxmDense, ConvBlock)", [])

E("vxm_modelio", "voxelmorph/torch/modelio.py", "explicit_replacement",
  "voxelmorph/voxelmorph voxelmorph/torch/modelio.py (LoadableModel, store_config_args)", [])

E("vxm_generators", "voxelmorph/generators.py", "explicit_replacement",
  "voxelmorph/voxelmorph voxelmorph/generators.py (volgen, scan_to_scan, scan_to_atlas)", [])

E("vxm_train", "scripts/torch/train.py", "explicit_replacement",
  "voxelmorph/voxelmorph scripts/torch/train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = 'cuda'", "device_type", "replace", True, "device = 'npu'",
      "module-level device string used for model.to(device), tensors and VxmDense.load map_location"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu",
      "--gpu selects the card through the visibility mask; the NPU runtime ignores CUDA_VISIBLE_DEVICES, "
      "so without this the job silently lands on npu:0 instead of the requested card"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
      "raise RuntimeError('torch.nn.DataParallel is not supported on Ascend NPU; pass a single --gpu id "
      "or port to DDP with hccl')",
      "torch.nn.DataParallel is marked unsupported in Ascend's 2.7.1 API list and by msFmkTransplt; "
      "multi-id --gpu must fail loudly (or be rewritten to DDP)"),
])

E("vxm_register", "scripts/torch/register.py", "explicit_replacement",
  "voxelmorph/voxelmorph scripts/torch/register.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = 'cuda'", "device_type", "replace", True, "device = 'npu'",
      "GPU branch of the -g flag"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu",
      "card selection via visibility mask; CUDA variable is ignored by the NPU runtime"),
])

# ----------------------------------------------------------------------------------------- TransMorph
GPU_COUNT_NOTE = ("only feeds the 'Number of GPU' print and the loop bound; unported it returns 0 on an NPU "
                  "host and the loop is skipped, nothing fails")

E("tm_train", "TransMorph/train_TransMorph.py", "explicit_replacement",
  "junyuchen245/TransMorph_Transformer_for_Medical_Image_Registration IXI/TransMorph/train_TransMorph.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "move TransMorph to the NPU"),
    C("=reg_model.cuda()", "tensor_to_device", "replace", True, "reg_model.npu()",
      "nearest-neighbour warper for label maps"),
    C("=reg_model_bilin.cuda()", "tensor_to_device", "replace", True, "reg_model_bilin.npu()",
      "bilinear warper for the grid figure"),
    C("data = [t.cuda() for t in data]", "tensor_to_device", "replace", True,
      "data = [t.npu() for t in data]", "training batch to device"),
    C("x, y, x_seg, y_seg = [t.cuda() for t in data]", "tensor_to_device", "replace", True,
      "x, y, x_seg, y_seg = [t.npu() for t in data]", "validation batch to device"),
    C("def_out = reg_model([x_seg.cuda().float(), output[1].cuda()])", "tensor_to_device", "replace", True,
      "def_out = reg_model([x_seg.npu().float(), output[1].npu()])",
      "redundant moves of already-on-device tensors, but .cuda() raises on an NPU host"),
    C("def_grid = reg_model_bilin([grid_img.float(), output[1].cuda()])", "tensor_to_device", "replace", True,
      "def_grid = reg_model_bilin([grid_img.float(), output[1].npu()])", "same as above"),
    C("grid_img = torch.from_numpy(grid_img).cuda()", "tensor_to_device", "replace", True,
      "grid_img = torch.from_numpy(grid_img).npu()", "checkerboard image for the deformation figure"),
    C("GPU_num = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "GPU_num = torch.npu.device_count()", GPU_COUNT_NOTE),
    C("GPU_name = torch.cuda.get_device_name(GPU_idx)", "torch_cuda_api", "replace", True,
      "GPU_name = torch.npu.get_device_name(GPU_idx)",
      "with device_count ported the loop runs and torch.cuda.get_device_name raises without CUDA"),
    C("torch.cuda.set_device(GPU_iden)", "torch_cuda_api", "replace", True, "torch.npu.set_device(GPU_iden)",
      "selects the current device; torch.cuda.set_device raises on a CUDA-less build"),
    C("GPU_avai = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "GPU_avai = torch.npu.is_available()", "printed only; a wrong False in the log, no behavioural effect"),
    C("print('Currently using: ' + torch.cuda.get_device_name(GPU_iden))", "torch_cuda_api", "replace", True,
      "print('Currently using: ' + torch.npu.get_device_name(GPU_iden))", "raises without CUDA"),
])

E("tm_model", "TransMorph/models/TransMorph.py", "explicit_replacement",
  "junyuchen245/TransMorph_Transformer_for_Medical_Image_Registration TransMorph/models/TransMorph.py", [])

E("tm_utils", "TransMorph/utils.py", "explicit_replacement",
  "junyuchen245/TransMorph_Transformer_for_Medical_Image_Registration TransMorph/utils.py", [
    C("grid = grid.type(torch.FloatTensor).cuda()", "tensor_to_device", "replace", True,
      "grid = grid.type(torch.FloatTensor).npu()",
      "grid is moved before register_buffer, so the .cuda() call itself fails at construction"),
    C("img = x[0].cuda()", "tensor_to_device", "replace", True, "img = x[0].npu()",
      "register_model.forward forces inputs onto the accelerator"),
    C("flow = x[1].cuda()", "tensor_to_device", "replace", True, "flow = x[1].npu()", "same as above"),
])

E("tm_losses", "TransMorph/losses.py", "explicit_replacement",
  "junyuchen245/TransMorph_Transformer_for_Medical_Image_Registration TransMorph/losses.py", [
    C("if img1.is_cuda:", "device_type", "replace", False, "if img1.is_npu:",
      "unported, the branch is skipped on NPU but the next line window.type_as(img1) still casts the window "
      "to the NPU tensor type (current device), so SSIM works on a single card; unconfirmed for torch_npu's "
      "type_as with npu type strings, and wrong-card risk with several devices"),
    C("window = window.cuda(img1.get_device())", "tensor_to_device", "replace", True,
      "window = window.npu(img1.get_device())",
      "once is_cuda is ported to is_npu this branch runs and .cuda() raises"),
    C('sum_filt = torch.ones([1, 1, *win]).to("cuda")', "tensor_to_device", "replace", True,
      'sum_filt = torch.ones([1, 1, *win]).to("npu")', "NCC_vxm box filter hard-coded to cuda"),
    C("vol_bin_centers = Variable(torch.linspace(minval, maxval, num_bin), requires_grad=False).cuda()",
      "tensor_to_device", "replace", True,
      "vol_bin_centers = Variable(torch.linspace(minval, maxval, num_bin), requires_grad=False).npu()",
      "MutualInformation bin centres: plain attribute (not a buffer), created on the accelerator in __init__"),
])

E("tm_infer", "TransMorph/infer_TransMorph.py", "explicit_replacement",
  "junyuchen245/TransMorph_Transformer_for_Medical_Image_Registration IXI/TransMorph/infer_TransMorph.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("best_model = torch.load(model_dir + natsorted(os.listdir(model_dir))[model_idx])['state_dict']",
      "tensor_to_device", "replace", True,
      "best_model = torch.load(model_dir + natsorted(os.listdir(model_dir))[model_idx], "
      "map_location='cpu')['state_dict']",
      "inference is normally run on the authors' released checkpoints, saved from CUDA tensors; without "
      "map_location torch.load tries to restore them on cuda and fails on an NPU host"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model to NPU"),
    C("=reg_model.cuda()", "tensor_to_device", "replace", True, "reg_model.npu()", "label warper to NPU"),
    C("data = [t.cuda() for t in data]", "tensor_to_device", "replace", True,
      "data = [t.npu() for t in data]", "test batch to NPU"),
    C("def_out = reg_model([x_seg.cuda().float(), flow.cuda()])", "tensor_to_device", "replace", True,
      "def_out = reg_model([x_seg.npu().float(), flow.npu()])", "raises without CUDA"),
    C("GPU_num = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "GPU_num = torch.npu.device_count()", GPU_COUNT_NOTE),
    C("GPU_name = torch.cuda.get_device_name(GPU_idx)", "torch_cuda_api", "replace", True,
      "GPU_name = torch.npu.get_device_name(GPU_idx)", "raises once the loop runs"),
    C("torch.cuda.set_device(GPU_iden)", "torch_cuda_api", "replace", True, "torch.npu.set_device(GPU_iden)",
      "current-device selection"),
    C("GPU_avai = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "GPU_avai = torch.npu.is_available()", "printed only"),
    C("print('Currently using: ' + torch.cuda.get_device_name(GPU_iden))", "torch_cuda_api", "replace", True,
      "print('Currently using: ' + torch.npu.get_device_name(GPU_iden))", "raises without CUDA"),
])

E("tm_configs", "TransMorph/models/configs_TransMorph.py", "explicit_replacement",
  "junyuchen245/TransMorph_Transformer_for_Medical_Image_Registration TransMorph/models/configs_TransMorph.py",
  [])

# ----------------------------------------------------------------------------------------- LapIRN
NOOP_MODULE_NOTE = ("SpatialTransform_unit has no parameters or buffers, so Module.cuda() never touches a tensor "
                    "and does not initialise CUDA: a no-op that does not fail on an NPU host; port for clarity only")

E("lapirn_functions", "Code/Functions.py", "explicit_replacement",
  "cwmok/LapIRN Code/Functions.py (grids, datasets, nifti IO)", [])

E("lapirn_model", "Code/miccai2020_model_stage.py", "explicit_replacement",
  "cwmok/LapIRN Code/miccai2020_model_stage.py (three-level Laplacian pyramid network, NCC, Jacobian loss)", [
    C("self.grid_1 = torch.from_numpy(np.reshape(self.grid_1, (1,) + self.grid_1.shape)).cuda().float()",
      "tensor_to_device", "replace", True,
      "self.grid_1 = torch.from_numpy(np.reshape(self.grid_1, (1,) + self.grid_1.shape)).npu().float()",
      "sampling grid stored as a plain attribute, not a buffer: model.npu() would not move it, and .cuda() "
      "raises in __init__"),
    C("self.transform = SpatialTransform_unit().cuda()", "tensor_to_device", "replace", False,
      "self.transform = SpatialTransform_unit().npu()", NOOP_MODULE_NOTE),
    C("self.grid_lvl2 = torch.from_numpy(np.reshape(self.grid_lvl2, (1,) + self.grid_lvl2.shape)).cuda().float()",
      "tensor_to_device", "replace", True,
      "self.grid_lvl2 = torch.from_numpy(np.reshape(self.grid_lvl2, (1,) + self.grid_lvl2.shape)).npu().float()",
      "level-2 grid, same reason"),
    C("self.grid_lvl3 = torch.from_numpy(np.reshape(self.grid_lvl3, (1,) + self.grid_lvl3.shape)).cuda().float()",
      "tensor_to_device", "replace", True,
      "self.grid_lvl3 = torch.from_numpy(np.reshape(self.grid_lvl3, (1,) + self.grid_lvl3.shape)).npu().float()",
      "level-3 grid, same reason"),
])

E("lapirn_train", "Code/Train_LapIRN_disp.py", "explicit_replacement",
  "cwmok/LapIRN Code/Train_LapIRN_disp.py (train_lvl1/2/3)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "used by train_lvl3; unported it falls back to cpu while the model's grids are on the NPU, so the "
      "level-3 stage breaks with a device mismatch"),
    C("=range_flow=range_flow).cuda()", "tensor_to_device", "replace", True, "range_flow=range_flow).npu()",
      "train_lvl1 model construction"),
    C("transform = SpatialTransform_unit().cuda()", "tensor_to_device", "replace", False,
      "transform = SpatialTransform_unit().npu()", NOOP_MODULE_NOTE),
    C("grid_4 = torch.from_numpy(np.reshape(grid_4, (1,) + grid_4.shape)).cuda().float()",
      "tensor_to_device", "replace", True,
      "grid_4 = torch.from_numpy(np.reshape(grid_4, (1,) + grid_4.shape)).npu().float()",
      "grid for the Jacobian loss"),
    C("X = X.cuda().float()", "tensor_to_device", "replace", True, "X = X.npu().float()", "lvl1 batch"),
    C("Y = Y.cuda().float()", "tensor_to_device", "replace", True, "Y = Y.npu().float()", "lvl1 batch"),
    C("imgshape=imgshape_4, range_flow=range_flow).cuda()", "tensor_to_device", "replace", True,
      "imgshape=imgshape_4, range_flow=range_flow).npu()", "train_lvl2: frozen level-1 model"),
    C("range_flow=range_flow, model_lvl1=model_lvl1).cuda()", "tensor_to_device", "replace", True,
      "range_flow=range_flow, model_lvl1=model_lvl1).npu()", "train_lvl2: level-2 model"),
    C("grid_2 = torch.from_numpy(np.reshape(grid_2, (1,) + grid_2.shape)).cuda().float()",
      "tensor_to_device", "replace", True,
      "grid_2 = torch.from_numpy(np.reshape(grid_2, (1,) + grid_2.shape)).npu().float()", "lvl2 grid"),
    C("X, Y = X.cuda().float(), Y.cuda().float()", "tensor_to_device", "replace", True,
      "X, Y = X.npu().float(), Y.npu().float()", "lvl2 batch"),
])

E("lapirn_test", "Code/Test_LapIRN_disp.py", "explicit_replacement",
  "cwmok/LapIRN Code/Test_LapIRN_disp.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=range_flow=range_flow).cuda()", "tensor_to_device", "replace", True, "range_flow=range_flow).npu()",
      "level-1 model"),
    C("range_flow=range_flow, model_lvl1=model_lvl1).cuda()", "tensor_to_device", "replace", True,
      "range_flow=range_flow, model_lvl1=model_lvl1).npu()", "level-2 model"),
    C("range_flow=range_flow, model_lvl2=model_lvl2).cuda()", "tensor_to_device", "replace", True,
      "range_flow=range_flow, model_lvl2=model_lvl2).npu()", "level-3 model"),
    C("transform = SpatialTransform_unit().cuda()", "tensor_to_device", "replace", False,
      "transform = SpatialTransform_unit().npu()", NOOP_MODULE_NOTE),
    C("model.load_state_dict(torch.load(opt.modelpath))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(opt.modelpath, map_location='cpu'))",
      "the default --modelpath is the released pretrained LapIRN weight file, saved from CUDA tensors; "
      "restoring it without map_location fails on a CUDA-less host"),
    C("grid = torch.from_numpy(np.reshape(grid, (1,) + grid.shape)).cuda().float()", "tensor_to_device",
      "replace", True, "grid = torch.from_numpy(np.reshape(grid, (1,) + grid.shape)).npu().float()",
      "sampling grid for the final warp"),
    C('device = torch.device("cuda" if use_cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if use_cuda else "cpu")', "input images to device"),
])

# ----------------------------------------------------------------------------------------- ICON / uniGradICON
E("icon_config", "src/icon_registration/config.py", "explicit_replacement",
  "uncbiag/ICON src/icon_registration/config.py (package-wide device global)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "config is imported by every icon_registration module, so importing torch_npu here covers the "
      "library and the uniGradICON CLI/training scripts that go through it"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "single point of truth for the whole package (losses, itk_wrapper, unigradicon); unported "
      "everything silently runs on the CPU"),
])

E("icon_wrappers", "src/icon_registration/network_wrappers.py", "explicit_replacement",
  "uncbiag/ICON src/icon_registration/network_wrappers.py", [])

E("icon_losses", "src/icon_registration/losses.py", "explicit_replacement",
  "uncbiag/ICON src/icon_registration/losses.py (LNCC, GradientICON, flips)", [])

E("icon_train", "src/icon_registration/train.py", "explicit_replacement",
  "uncbiag/ICON src/icon_registration/train.py (train_batchfunction, train_datasets)", [
    C('"train/gpu_memory_GB", torch.cuda.max_memory_allocated() / 1024 ** 3, iteration', "torch_cuda_api",
      "replace", False, '"train/npu_memory_GB", torch.npu.max_memory_allocated() / 1024 ** 3, iteration',
      "tensorboard metric only: torch.cuda.max_memory_allocated returns 0 when CUDA was never initialised, "
      "so the log is wrong but training is unaffected"),
])

E("icon_itk", "src/icon_registration/itk_wrapper.py", "explicit_replacement",
  "uncbiag/ICON src/icon_registration/itk_wrapper.py (register_pair, create_itk_transform)", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op when CUDA is not initialised; NPU cache is just not released after instance optimisation "
      "(memory, not correctness)"),
])

E("ugi_init", "src/unigradicon/__init__.py", "explicit_replacement",
  "uncbiag/uniGradICON src/unigradicon/__init__.py (model zoo, preprocess, unigradicon-register CLI)", [
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if not torch.npu.is_available():",
      "only decides whether to print a 'running on CPU' warning; the real device comes from icon config"),
])

E("ugi_train", "training/train.py", "explicit_replacement",
  "uncbiag/uniGradICON training/train.py (two-stage multi-dataset training)", [
    C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")',
      "used for the second-stage model placement"),
    C("image_A = torch.stack([p[0] for p in pairs]).cuda()", "tensor_to_device", "replace", True,
      "image_A = torch.stack([p[0] for p in pairs]).npu()", "batch to device"),
    C("image_B = torch.stack([p[1] for p in pairs]).cuda()", "tensor_to_device", "replace", True,
      "image_B = torch.stack([p[1] for p in pairs]).npu()", "batch to device"),
    C("net_par = net.cuda()", "tensor_to_device", "replace", True, "net_par = net.npu()", "single-card path"),
    C("net_par = torch.nn.DataParallel(net).cuda()", "distributed_framework", "replace", True,
      "net_par = net.npu()",
      "DataParallel is unsupported on NPU and is the default path (GPUS = 4); the line-level port falls back "
      "to one card (batch of BATCH_SIZE*GPUS on one NPU); a full port would use DDP with hccl"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "memory hygiene between the two stages; a no-op rather than an error when unported"),
    C("net_2_par = net_2.cuda()", "tensor_to_device", "replace", True, "net_2_par = net_2.npu()",
      "single-card path, stage 2"),
    C("net_2_par = torch.nn.DataParallel(net_2).to(device)", "distributed_framework", "replace", True,
      "net_2_par = net_2.to(device)", "DataParallel unsupported on NPU, stage 2"),
])

E("ugi_pyproject", "pyproject.toml", "explicit_replacement",
  "uncbiag/uniGradICON pyproject.toml", [])

# ----------------------------------------------------------------------------------------- SynthMorph
E("sm_cli", "synthmorph/cli.py", "explicit_replacement",
  "freesurfer/freesurfer mri_synthmorph (register/apply CLI), rewritten for a PyTorch backend", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("os.environ.setdefault('CUDA_VISIBLE_DEVICES', '0')", "env_var", "replace", False,
      "os.environ.setdefault('ASCEND_RT_VISIBLE_DEVICES', '0')",
      "only defaults the mask to device 0, which is also what 'npu' resolves to; inert on NPU"),
    C("if not os.environ['CUDA_VISIBLE_DEVICES']:", "env_var", "replace", False,
      "if not os.environ['ASCEND_RT_VISIBLE_DEVICES']:", "same block, inert on NPU"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = '0'", "env_var", "replace", False,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = '0'", "same block, inert on NPU"),
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "device chosen by -g"),
    C("if arg.gpu and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if arg.gpu and not torch.npu.is_available():",
      "unported, -g always exits with 'no CUDA device' on an NPU host"),
])

E("sm_registration", "synthmorph/registration.py", "explicit_replacement",
  "freesurfer/freesurfer mri_synthmorph registration driver (conform, predict, write LTA/warp)", [
    C("if device.type == 'cuda':", "device_type", "replace", False, "if device.type == 'npu':",
      "verbose-only device report; unported it is silently skipped"),
    C("props = torch.cuda.get_device_properties(device)", "torch_cuda_api", "replace", True,
      "props = torch.npu.get_device_properties(device)",
      "runs once the branch above is ported; NPU properties keep name and total_memory"),
    C("with torch.no_grad(), torch.autocast('cuda', dtype=torch.float16, enabled=arg.half):", "amp", "replace",
      False, "with torch.no_grad(), torch.autocast('npu', dtype=torch.float16, enabled=arg.half):",
      "with --half, autocast('cuda') only warns and disables itself on a CUDA-less host, so the net runs in "
      "fp32: slower and larger, results not wrong"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "timing sync under -g; torch.cuda.synchronize raises without CUDA"),
    C("peak = torch.cuda.max_memory_allocated() / 2 ** 30", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated() / 2 ** 30", "verbose log only; returns 0 unported"),
])

E("sm_networks", "synthmorph/networks.py", "explicit_replacement",
  "freesurfer/freesurfer SynthMorph networks (HyperVxmDense, affine feature detector, joint model)", [])

E("sm_synth", "synthmorph/synth.py", "explicit_replacement",
  "voxelmorph/neurite SynthMorph label-to-image synthesis, PyTorch rewrite", [
    C("self.gen = torch.Generator(device='cuda')", "device_type", "replace", True,
      "self.gen = torch.Generator(device='npu')",
      "every draw passes generator=self.gen with device=self.device (npu); a cuda generator cannot be "
      "created on an NPU host and would not match the npu draws"),
])

E("sm_train", "scripts/train_synthmorph.py", "explicit_replacement",
  "SynthMorph deformable training (torchrun/DDP, AMP), PyTorch rewrite of voxelmorph/synthmorph training", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("util = pynvml.nvmlDeviceGetUtilizationRates(nvml).gpu if nvml is not None else -1", "torch_cuda_api",
      "replace", False, "util = torch.npu.utilization(device)",
      "NVML init fails on an NPU host and is caught, so the metric is just -1; torch.npu.utilization is "
      "in torch_npu.npu.__all__"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "per-rank device selection before init_process_group"),
    C("dist.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl', init_method='env://')", "NCCL is not available on Ascend"),
    C("device = torch.device(f'cuda:{local_rank}')", "device_type", "replace", True,
      "device = torch.device(f'npu:{local_rank}')", "per-rank device"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "the launcher passes --amp: a cuda GradScaler disables itself without CUDA while the ported npu "
      "autocast runs fp16, so fp16 gradients go unscaled and can underflow silently"),
    C("ckpt = torch.load(args.resume, map_location=f'cuda:{local_rank}')", "tensor_to_device", "replace", True,
      "ckpt = torch.load(args.resume, map_location=f'npu:{local_rank}')", "explicit cuda map_location fails"),
    C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=args.amp):",
      "unported, cuda autocast disables itself and training runs in fp32: correct but slower and more "
      "memory (256^3 volumes); performance-only"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "step timing; raises without CUDA"),
    C("mem = torch.cuda.max_memory_allocated(device) / 2 ** 30", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated(device) / 2 ** 30",
      "returns 0 when CUDA is uninitialised, before the device index is checked: wrong log, no failure"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(device)",
      "unlike max_memory_allocated this goes straight to the device-index check and the CUDA binding, so "
      "it raises on an NPU device"),
])

E("sm_launch", "scripts/train_synthmorph.sh", "explicit_replacement",
  "SynthMorph single-node torchrun launcher", [
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "default mask equals the default torchrun local ranks 0-3, so inert unless the user overrides it"),
    C("export NCCL_DEBUG=${NCCL_DEBUG:-WARN}", "env_var", "removal", False, None,
      "NCCL tuning variable, inert with hccl"),
    C("export NCCL_P2P_DISABLE=0", "env_var", "removal", False, None, "NCCL tuning variable, inert with hccl"),
    C("export PYTHONUNBUFFERED=1", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; needed unless the login shell already sources it (host-dependent, unconfirmed)"),
    C("nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv", "torch_cuda_api", "replace",
      True, 'npu-smi info > "${OUT}/npus.txt"',
      "set -euo pipefail: a missing nvidia-smi aborts the launcher before torchrun starts"),
])

E("sm_docker", "Dockerfile", "explicit_replacement",
  "freesurfer/synthmorph container image, PyTorch variant", [
    C("FROM nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04", "env_var", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "the image must carry the CANN toolkit (its set_env exports are baked in as ENV); the NPU driver is "
      "mounted from the host. Tag taken from Ascend/cann-container-image's directory name; registry path "
      "unconfirmed"),
    C("python3 -m pip install torch==2.1.2 --index-url https://download.pytorch.org/whl/cu121",
      "import_torch_npu", "replace", True,
      "python3 -m pip install torch==2.1.0 --index-url https://download.pytorch.org/whl/cpu && "
      "python3 -m pip install torch_npu==2.1.0.post17",
      "CPU torch plus the matching torch_npu wheel (2.1.0.post17 = branch v2.1.0-7.2.0, CANN 8.3.RC1)"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "read by the NVIDIA container runtime only; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES at run time"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container runtime only"),
])

E("sm_requirements", "requirements.txt", "explicit_replacement",
  "SynthMorph PyTorch requirements", [])
