"""Labels for probe441: 3-D face reconstruction and morphable-model fitting (CUDA -> Ascend NPU).

One label per upstream line a careful porter would edit (explicit port: torch.npu / 'npu' / hccl,
no transfer_to_npu). `required` = with every other label already ported, would leaving this line
unchanged fail, compute something wrong, or silently do the wrong thing on an NPU host?
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


NPU_IMPORT = "import torch_npu"
ONNX_NOTE = ("onnxruntime is not torch: without a CUDA provider it warns and falls back to the CPU provider, so nothing "
             "breaks; moving to the CANN execution provider is a performance choice and is unconfirmed in "
             "/work/shared/knowledge")
PIN_NOTE = ("DataLoader pin_memory without pin_memory_device falls back to CUDA's notion of pinning; on an NPU host it is "
            "at worst silently disabled (performance only). Naming the NPU device is unconfirmed in "
            "/work/shared/knowledge")

# --------------------------------------------------------------------------------------------------------------
# DECA (yfeng95/DECA)
# --------------------------------------------------------------------------------------------------------------
E("deca_core", "decalib/deca.py", "explicit_replacement", "yfeng95/DECA decalib/deca.py (DECA model wrapper)", [
    C("def __init__(self, config=None, device='cuda'):", "device_type", "replace", True,
      "def __init__(self, config=None, device='npu'):",
      "main_train.py builds DECA(cfg) without a device, so this default is the training device; 'cuda' fails on an NPU host"),
    C("checkpoint = torch.load(model_path)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(model_path, map_location='cpu')",
      "released deca_model.tar holds CUDA storages; a bare torch.load tries to restore them on CUDA and raises on an "
      "NPU host. copy_state_dict copies into the already-placed NPU parameters, so CPU is enough"),
])

E("deca_renderer", "decalib/utils/renderer.py", "kernel_rewrite",
  "yfeng95/DECA decalib/utils/renderer.py (standard CUDA rasterizer via JIT cpp_extension + pytorch3d rasterizer)", [
    C("from torch.utils.cpp_extension import load, CUDA_HOME", "custom_cuda_extension", "removal", False, None,
      "import itself works on an NPU host (CUDA_HOME is just None); dead after the JIT build is dropped"),
    C("srcs = [f'{curr_dir}/rasterizer/standard_rasterize_cuda.cpp'", "custom_cuda_extension", "removal", False, None,
      "source list for the nvcc JIT build; harmless leftover once the load() call is gone"),
    C("standard_rasterize_cuda = load(name='standard_rasterize_cuda'", "custom_cuda_extension", "removal", True, None,
      "JIT-compiles a .cu file with nvcc: fails without a CUDA toolkit, and cpp_extension.load is marked unsupported "
      "on A2/A3 in Ascend's 2.7.1 API list. Replaced by the prebuilt NPU extension from rasterizer/setup.py"),
    C("from standard_rasterize_cuda import standard_rasterize", "custom_cuda_extension", "replace", True,
      "from standard_rasterize_npu import standard_rasterize",
      "bind the rasterizer rewritten for Ascend (built with NpuExtension in setup.py) with the same signature"),
    C("meshes_screen = Meshes(verts=fixed_vertices.float(), faces=faces.long())", "unsupported_op_workaround", "replace",
      True, "meshes_screen = Meshes(verts=fixed_vertices.float().cpu(), faces=faces.long().cpu())",
      "pytorch3d's rasterize_meshes dispatches to CUDA kernels only for is_cuda tensors and otherwise runs its C++ CPU "
      "code on the raw pointers; NPU tensors must be moved to host (training path: main_train forces pytorch3d)"),
    C("vismask = (pix_to_face > -1).float() # [N, H, W, K]", "unsupported_op_workaround", "npu_only_addition", True,
      "pix_to_face, bary_coords = pix_to_face.to(vertices.device), bary_coords.to(vertices.device)",
      "inserted before this line: bring the CPU rasterizer outputs back to the NPU before gathering NPU attributes"),
])

E("deca_raster_setup", "decalib/utils/rasterizer/setup.py", "kernel_rewrite",
  "yfeng95/DECA decalib/utils/rasterizer/setup.py (manual CUDAExtension build of the standard rasterizer)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "NpuExtension adds the torch_npu/ACL include and lib dirs; CUDAExtension needs nvcc"),
    C("CUDAExtension('standard_rasterize_cuda', [", "custom_cuda_extension", "replace", True,
      "NpuExtension('standard_rasterize_npu', [",
      "CUDAExtension cannot build on an NPU host"),
    C("'standard_rasterize_cuda.cpp',", "custom_cuda_extension", "replace", True,
      "'standard_rasterize_npu.cpp',",
      "the binding checks is_cuda() and launches the CUDA kernel; needs an NPU binding"),
    C("'standard_rasterize_cuda_kernel.cu',", "custom_cuda_extension", "replace", True,
      "'standard_rasterize_kernel_npu.cpp',",
      "the z-buffer rasterization kernel must be rewritten (Ascend C or torch ops); exact build route for an Ascend C "
      "kernel is unconfirmed in /work/shared/knowledge"),
])

E("deca_config", "decalib/utils/config.py", "explicit_replacement", "yfeng95/DECA decalib/utils/config.py (yacs defaults)", [
    C("cfg.device = 'cuda'", "device_type", "replace", False, "cfg.device = 'npu'",
      "not read by the code paths in this probe (DECA/Trainer take their own defaults); changed for consistency"),
])

E("deca_detectors", "decalib/datasets/detectors.py", "explicit_replacement",
  "yfeng95/DECA decalib/datasets/detectors.py (FAN / MTCNN face detectors)", [
    C("self.model = face_alignment.FaceAlignment(face_alignment.LandmarksType._2D, flip_input=False)", "device_type",
      "replace", True,
      "self.model = face_alignment.FaceAlignment(face_alignment.LandmarksType._2D, flip_input=False, device='npu')",
      "no device argument means face_alignment's default device='cuda', which fails on an NPU host; no CUDA "
      "construct on the line itself"),
])

E("deca_demo", "demos/demo_reconstruct.py", "explicit_replacement", "yfeng95/DECA demos/demo_reconstruct.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, NPU_IMPORT,
      "entry script: registers the NPU backend before 'npu' devices are used"),
    C("parser.add_argument('--device', default='cuda', type=str,", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu', type=str,",
      "the argparse default is the device every tensor and the DECA model go to"),
])

E("deca_main_train", "main_train.py", "explicit_replacement", "yfeng95/DECA main_train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, NPU_IMPORT, "training entry script"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = cfg.device_id", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = cfg.device_id",
      "device selection from the config would be silently ignored (training lands on NPU 0 whatever device_id says)"),
])

E("deca_trainer", "decalib/trainer.py", "explicit_replacement", "yfeng95/DECA decalib/trainer.py (coarse/detail training loop)", [
    C("def __init__(self, model, config=None, device='cuda:0'):", "device_type", "replace", True,
      "def __init__(self, model, config=None, device='npu:0'):",
      "main_train.py constructs Trainer without a device; every batch goes to this default"),
    C("checkpoint = torch.load(self.cfg.pretrained_modelpath)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(self.cfg.pretrained_modelpath, map_location='cpu')",
      "released CUDA checkpoint: bare torch.load restores storages on CUDA and raises on an NPU host"),
    C("checkpoint = torch.load(os.path.join(self.cfg.output_dir, 'model.tar'))", "tensor_to_device", "replace", False,
      "checkpoint = torch.load(os.path.join(self.cfg.output_dir, 'model.tar'), map_location='cpu')",
      "resume checkpoint written by the ported run itself carries npu storages and loads fine; only a CUDA-era "
      "model.tar would break, so not required"),
    C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',", PIN_NOTE),
    C("num_workers=8, pin_memory=True, drop_last=False)", "pin_memory", "replace", False,
      "self.val_dataloader = DataLoader(self.val_dataset, batch_size=8, shuffle=True, num_workers=8, pin_memory=True, pin_memory_device='npu', drop_last=False)",
      PIN_NOTE),
])

E("deca_lossfunc", "decalib/utils/lossfunc.py", "explicit_replacement", "yfeng95/DECA decalib/utils/lossfunc.py", [
    C("=real_2d = torch.cat(landmarks_gt).cuda()", "tensor_to_device", "replace", False,
      "real_2d = torch.cat(landmarks_gt).npu()",
      "list-of-landmarks branch; the trainer always passes a tensor, so this is unreachable here"),
    C("real_2d = torch.cat([landmarks_gt, torch.ones((landmarks_gt.shape[0], 68, 1)).cuda()], dim=-1)", "tensor_to_device",
      "replace", True,
      "real_2d = torch.cat([landmarks_gt, torch.ones((landmarks_gt.shape[0], 68, 1)).to(landmarks_gt.device)], dim=-1)",
      "used whenever cfg.loss.useWlmk is False; .cuda() fails on an NPU host"),
    C("real_2d = torch.cat(landmarks_gt, dim=0).cuda()", "tensor_to_device", "replace", False,
      "real_2d = torch.cat(landmarks_gt, dim=0).npu()", "unreachable list branch (see above)"),
    C("real_2d = torch.cat(landmarks_gt, 0).cuda()", "tensor_to_device", "replace", False,
      "real_2d = torch.cat(landmarks_gt, 0).npu()", "unreachable list branch (see above)"),
    C("weights = torch.ones((68,)).cuda()", "tensor_to_device", "replace", True,
      "weights = torch.ones((68,)).to(predicted_landmarks.device)", "default landmark loss (useWlmk=True)"),
    C("self.reg_model = resnet50(num_classes=8631, include_top=False).eval().cuda()", "tensor_to_device", "replace", True,
      "self.reg_model = resnet50(num_classes=8631, include_top=False).eval().npu()",
      "VGGFace2 identity loss is on by default in coarse training"),
    C("self.mean_bgr = torch.tensor([91.4953, 103.8827, 131.0912]).cuda()", "tensor_to_device", "replace", True,
      "self.mean_bgr = torch.tensor([91.4953, 103.8827, 131.0912]).npu()", "plain tensor attribute, not a buffer: not moved by .to()"),
])

E("deca_requirements", "requirements.txt", "explicit_replacement", "yfeng95/DECA requirements.txt", [
    C("torch==1.6.0 # for compatible with pytorch3d", "import_torch_npu", "replace", True, "torch==2.1.0",
      "torch_npu wheels pair with an exact torch version (2.1.0.postN <-> torch 2.1.0); 1.6.0 has no torch_npu"),
    C("=face-alignment", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "inserted after the torch/torchvision pins"),
])

# --------------------------------------------------------------------------------------------------------------
# EMOCA (radekd91/emoca)
# --------------------------------------------------------------------------------------------------------------
E("emoca_renderer", "gdl/models/Renderer.py", "explicit_replacement",
  "radekd91/emoca gdl/models/Renderer.py (pytorch3d-based SRenderY)", [
    C("meshes_screen = Meshes(verts=fixed_vertices.float(), faces=faces.long())", "unsupported_op_workaround", "replace",
      True, "meshes_screen = Meshes(verts=fixed_vertices.float().cpu(), faces=faces.long().cpu())",
      "pytorch3d rasterization has CUDA and CPU kernels only; NPU tensors must go through the host"),
    C("vismask = (pix_to_face > -1).float()", "unsupported_op_workaround", "npu_only_addition", True,
      "pix_to_face, bary_coords = pix_to_face.to(vertices.device), bary_coords.to(vertices.device)",
      "inserted before this line: return the rasterizer outputs to the NPU"),
])

E("emoca_facedetector", "gdl/datasets/FaceDetector.py", "explicit_replacement",
  "radekd91/emoca gdl/datasets/FaceDetector.py (FAN / MTCNN wrappers)", [
    C("def __init__(self, device = 'cuda', threshold=0.5, mode='2D'):", "device_type", "replace", True,
      "def __init__(self, device = 'npu', threshold=0.5, mode='2D'):",
      "TestData builds FAN() with the default device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "without CUDA initialised this is a no-op; on NPU it only matters for memory headroom"),
    C("def __init__(self, device = 'cuda'):", "device_type", "replace", True, "def __init__(self, device = 'npu'):",
      "MTCNN is selectable as face_detector; facenet_pytorch moves its nets to this device"),
])

E("emoca_io", "gdl_apps/EMOCA/utils/io.py", "explicit_replacement", "radekd91/emoca gdl_apps/EMOCA/utils/io.py", [
    C('img["image"] = img["image"].cuda()', "tensor_to_device", "replace", True, 'img["image"] = img["image"].npu()',
      "test() is the inference helper of every EMOCA demo"),
])

E("emoca_demo_images", "gdl_apps/EMOCA/demos/test_emoca_on_images.py", "explicit_replacement",
  "radekd91/emoca gdl_apps/EMOCA/demos/test_emoca_on_images.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, NPU_IMPORT, "demo entry script"),
    C("emoca.cuda()", "tensor_to_device", "replace", True, "emoca.npu()", "moves the LightningModule"),
])

E("emoca_train_modular", "gdl_apps/EMOCA/training/train_deca_modular.py", "explicit_replacement",
  "radekd91/emoca training driver (pytorch-lightning Trainer setup)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, NPU_IMPORT,
      "the training entry points import this module before building the Trainer"),
    C("accelerator = None if cfg.learning.num_gpus == 1 else 'ddp'", "dist_backend", "replace", True,
      "accelerator = None if cfg.learning.num_gpus == 1 else DDPStrategy(process_group_backend='hccl')",
      "Lightning's DDP picks nccl for CUDA and gloo otherwise; neither works with NPU tensors"),
    C("trainer = Trainer(gpus=cfg.learning.num_gpus,", "distributed_framework", "replace", True,
      "trainer = Trainer(accelerator=NPUAccelerator(), devices=cfg.learning.num_gpus,",
      "gpus=N raises a MisconfigurationException without CUDA. Lightning has no built-in NPU accelerator in the "
      "knowledge base: NPUAccelerator stands for a custom/plugin accelerator (unconfirmed API)"),
    C("accelerator=accelerator,", "distributed_framework", "replace", True, "strategy=accelerator,",
      "the DDP choice becomes a strategy; accelerator= is now taken by the NPU accelerator"),
])

E("emoca_emonet_loss", "gdl/layers/losses/EmoNetLoss.py", "explicit_replacement",
  "radekd91/emoca gdl/layers/losses/EmoNetLoss.py", [
    C('device = device or torch.device("cuda")', "device_type", "replace", False,
      'device = device or torch.device("npu")',
      "fallback only; every caller passes a device (a torch.device is truthy), so never taken"),
])

E("emoca_install", "install_38.sh", "explicit_replacement", "radekd91/emoca install_38.sh", [])

E("emoca_conda_env", "conda-environment_py38_cu11_ubuntu.yml", "explicit_replacement",
  "radekd91/emoca conda-environment_py38_cu11_ubuntu.yml", [
    C("- pytorch=1.12.1", "import_torch_npu", "replace", True, "  - pytorch=2.1.0",
      "torch must equal the torch_npu wheel's torch version"),
    C("- pytorch-lightning==1.4.9", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
      "inserted at the top of the pip section"),
    C("- onnxruntime-gpu==1.12.1", "device_type", "replace", False, "    - onnxruntime==1.16.3", ONNX_NOTE),
])

# --------------------------------------------------------------------------------------------------------------
# 3DDFA_V2 (cleardusk/3DDFA_V2)
# --------------------------------------------------------------------------------------------------------------
E("tddfa_core", "TDDFA.py", "explicit_replacement", "cleardusk/3DDFA_V2 TDDFA.py (gpu_mode switch)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, NPU_IMPORT,
      "demo.py does not import torch itself; TDDFA is where the device is used"),
    C("model = model.cuda(device=self.gpu_id)", "tensor_to_device", "replace", True,
      "model = model.to(f'npu:{self.gpu_id}')", "gpu_mode path (demo -m gpu)"),
    C("inp = inp.cuda(device=self.gpu_id)", "tensor_to_device", "replace", True,
      "inp = inp.to(f'npu:{self.gpu_id}')", "input must follow the model"),
])

E("tddfa_demo", "demo.py", "explicit_replacement", "cleardusk/3DDFA_V2 demo.py", [])

E("tddfa_faceboxes", "FaceBoxes/FaceBoxes.py", "explicit_replacement", "cleardusk/3DDFA_V2 FaceBoxes/FaceBoxes.py", [])

E("tddfa_fb_functions", "FaceBoxes/utils/functions.py", "explicit_replacement",
  "cleardusk/3DDFA_V2 FaceBoxes/utils/functions.py (load_model)", [
    C("device = torch.cuda.current_device()", "torch_cuda_api", "replace", False, "device = torch.npu.current_device()",
      "load_to_cpu=False branch; FaceBoxes always passes load_to_cpu=True, so dead in this code base"),
    C("map_location=lambda storage, loc: storage.cuda(device))", "tensor_to_device", "replace", False,
      "pretrained_dict = torch.load(pretrained_path, map_location=lambda storage, loc: storage.npu(device))",
      "same dead branch"),
])

# --------------------------------------------------------------------------------------------------------------
# Deep3DFaceRecon_pytorch (sicxu/Deep3DFaceRecon_pytorch)
# --------------------------------------------------------------------------------------------------------------
E("d3dfr_train", "train.py", "explicit_replacement", "sicxu/Deep3DFaceRecon_pytorch train.py (mp.spawn + DDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, NPU_IMPORT, "training entry script"),
    C('dist.init_process_group("gloo", rank=rank, world_size=world_size)', "dist_backend", "replace", True,
      'dist.init_process_group("hccl", rank=rank, world_size=world_size)',
      "gloo cannot all-reduce NPU tensors for DDP; no 'nccl' string to spot here"),
    C("device = torch.device(rank)", "device_type", "replace", True, "device = torch.device(f'npu:{rank}')",
      "torch.device(int) means a CUDA device index"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)", ""),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize initialises CUDA and raises on an NPU host"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)", ""),
])

E("d3dfr_test", "test.py", "explicit_replacement", "sicxu/Deep3DFaceRecon_pytorch test.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, NPU_IMPORT, "inference entry script"),
    C("device = torch.device(rank)", "device_type", "replace", True, "device = torch.device(f'npu:{rank}')",
      "torch.device(0) is cuda:0"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)", ""),
])

E("d3dfr_options", "options/base_options.py", "explicit_replacement",
  "sicxu/Deep3DFaceRecon_pytorch options/base_options.py", [
    C("os.environ['CUDA_VISIBLE_DEVICES'] = opt.gpu_ids", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = opt.gpu_ids",
      "ranks index the visible devices; with --gpu_ids 2,3 the unported line silently trains on NPUs 0,1"),
])

E("d3dfr_base_model", "models/base_model.py", "explicit_replacement",
  "sicxu/Deep3DFaceRecon_pytorch models/base_model.py (DDP wrapping, checkpoint I/O)", [])

E("d3dfr_nvdiffrast", "util/nvdiffrast.py", "kernel_rewrite",
  "sicxu/Deep3DFaceRecon_pytorch util/nvdiffrast.py (nvdiffrast MeshRenderer)", [
    C("import nvdiffrast.torch as dr", "custom_cuda_extension", "replace", True,
      "from util import torch_rasterizer as dr  # pure-PyTorch rasterize/interpolate usable on NPU",
      "nvdiffrast ships CUDA/OpenGL kernels only; the renderer needs an NPU-capable drop-in with the same "
      "rasterize()/interpolate() interface"),
    C("self.ctx = dr.RasterizeGLContext(device=device)", "custom_cuda_extension", "replace", True,
      "self.ctx = dr.RasterizeTorchContext(device=device)",
      "default path (--use_opengl True): an OpenGL/CUDA interop context cannot exist on an NPU"),
    C("self.ctx = dr.RasterizeCudaContext(device=device)", "custom_cuda_extension", "replace", True,
      "self.ctx = dr.RasterizeTorchContext(device=device)", "--use_opengl False path"),
])

E("d3dfr_losses", "models/losses.py", "explicit_replacement", "sicxu/Deep3DFaceRecon_pytorch models/losses.py", [])

E("d3dfr_env", "environment.yml", "explicit_replacement", "sicxu/Deep3DFaceRecon_pytorch environment.yml", [
    C("- pytorch=1.6.0", "import_torch_npu", "replace", True, "  - pytorch=2.1.0",
      "torch must match the torch_npu wheel (python must follow; see README)"),
    C("- matplotlib==2.2.5", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
      "inserted at the top of the pip section"),
])

# --------------------------------------------------------------------------------------------------------------
# MICA (Zielon/MICA)
# --------------------------------------------------------------------------------------------------------------
E("mica_demo", "demo.py", "explicit_replacement", "Zielon/MICA demo.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, NPU_IMPORT, "demo entry script"),
    C("torch.cuda.manual_seed(rank)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(rank)",
      "lazily queued (no error without CUDA); inference in eval mode draws no device-side random numbers"),
    C("image = torch.tensor(image).cuda()[None]", "tensor_to_device", "replace", True,
      "image = torch.tensor(image).npu()[None]", ""),
    C("arcface = torch.tensor(arcface).cuda()[None]", "tensor_to_device", "replace", True,
      "arcface = torch.tensor(arcface).npu()[None]", ""),
    C("checkpoint = torch.load(args.m)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(args.m, map_location='cpu')",
      "released mica.tar holds CUDA storages; bare torch.load raises on an NPU host"),
    C("device = 'cuda:0'", "device_type", "replace", True, "device = 'npu:0'", "model device"),
])

E("mica_util", "utils/landmark_detector.py", "explicit_replacement", "Zielon/MICA utils/landmark_detector.py", [
    C("def __init__(self, model=detectors.RETINAFACE, device='cuda:0'):", "device_type", "replace", False,
      "def __init__(self, model=detectors.RETINAFACE, device='npu:0'):", "parameter is never read in the body"),
    C("providers=['CUDAExecutionProvider']", "device_type", "replace", False,
      "self._face_detector = FaceAnalysis(name='antelopev2', providers=['CANNExecutionProvider', 'CPUExecutionProvider'])",
      ONNX_NOTE),
])

E("mica_trainer", "micalib/trainer.py", "explicit_replacement", "Zielon/MICA micalib/trainer.py", [
    C("props = torch.cuda.get_device_properties(rank)", "torch_cuda_api", "replace", True,
      "props = torch.npu.get_device_properties(rank)",
      "initialises CUDA and raises on an NPU host; NPU properties keep total_memory"),
    C("{torch.cuda.get_device_name(rank)}", "torch_cuda_api", "replace", True,
      "logger.info(f'[INFO]            {torch.npu.get_device_name(rank)}')", "goes through get_device_properties: raises"),
    C("torch.cuda.memory_allocated(rank)", "torch_cuda_api", "replace", False,
      "logger.info(f'[INFO] Allocated: {round(torch.npu.memory_allocated(rank) / 1024 ** 3, 1)} GB')",
      "returns 0 when CUDA is not initialised: wrong log value, no failure"),
    C("torch.cuda.memory_reserved(rank)", "torch_cuda_api", "replace", False,
      "logger.info(f'[INFO] Cached:    {round(torch.npu.memory_reserved(rank) / 1024 ** 3, 1)} GB')",
      "log only (see above)"),
    C("self.nfc = nfc_model.to(self.device)", "tensor_to_device", "replace", True,
      "self.nfc = nfc_model.to(f'npu:{self.device}')",
      "self.device is the integer rank; .to(int) means a CUDA index. Kept as int because rank-0 checks use it"),
    C("images = batch['image'].to(self.device)", "tensor_to_device", "replace", True,
      "images = batch['image'].to(f'npu:{self.device}')", "integer rank as device (see above)"),
    C("arcface.shape[-2], arcface.shape[-1]).to(self.device)", "tensor_to_device", "replace", True,
      "arcface = arcface.view(-1, arcface.shape[-3], arcface.shape[-2], arcface.shape[-1]).to(f'npu:{self.device}')",
      "integer rank as device (see above)"),
    C("map_location = {'cuda:%d' % 0: 'cuda:%d' % self.device}", "tensor_to_device", "replace", True,
      "map_location = {'cuda:%d' % 0: 'npu:%d' % self.device}",
      "only the target changes: the key must stay 'cuda:0' because it names where the released checkpoint's "
      "storages were saved"),
    C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',", PIN_NOTE),
    C("pred_canonical_shape_vertices = torch.empty(0, 3, 512, 512).cuda()", "tensor_to_device", "replace", True,
      "pred_canonical_shape_vertices = torch.empty(0, 3, 512, 512).npu()",
      "rank-0 visualisation every vis_steps: torch.cat with NPU renderings"),
    C("flame_verts_shape = torch.empty(0, 3, 512, 512).cuda()", "tensor_to_device", "replace", True,
      "flame_verts_shape = torch.empty(0, 3, 512, 512).npu()", ""),
    C("deca_images = torch.empty(0, 3, 512, 512).cuda()", "tensor_to_device", "replace", True,
      "deca_images = torch.empty(0, 3, 512, 512).npu()", ""),
    C("input_images = torch.empty(0, 3, 224, 224).cuda()", "tensor_to_device", "replace", True,
      "input_images = torch.empty(0, 3, 224, 224).npu()", ""),
])

E("mica_train_job", "jobs/train.py", "explicit_replacement", "Zielon/MICA jobs/train.py (mp.spawn launcher)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, NPU_IMPORT, "training entry script"),
    C('dist.init_process_group("nccl", rank=rank, world_size=world_size, init_method="env://")', "dist_backend",
      "replace", True, 'dist.init_process_group("hccl", rank=rank, world_size=world_size, init_method="env://")', ""),
    C("torch.cuda.manual_seed(rank)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(rank)",
      "queued lazily, no error; only reproducibility of device-side RNG is affected (unconfirmed that training "
      "draws any)"),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(rank)", ""),
    C("=deterministic(rank)", "compile_mode", "npu_only_addition", False,
      "torch.npu.set_compile_mode(jit_compile=False)",
      "inserted before seeding/model construction; performance only (msFmkTransplt's standard advice)"),
    C("nfc = util.find_model_using_name(", "device_type", "replace", True,
      "nfc = util.find_model_using_name(model_dir='micalib.models', model_name=cfg.model.name)(cfg, f'npu:{rank}')",
      "the model stores this device and moves FLAME/ArcFace with .to(device); the integer rank means a CUDA index"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op before any device use"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "num_gpus = torch.npu.device_count()",
      "returns 0 on an NPU host, so mp.spawn starts no workers and training silently does nothing"),
])

E("mica_config", "configs/config.py", "explicit_replacement", "Zielon/MICA configs/config.py (yacs defaults)", [
    C("cfg.device = 'cuda'", "device_type", "replace", False, "cfg.device = 'npu'",
      "not read by the training/demo paths (they use the rank or a literal); consistency only"),
])

E("mica_install", "install.sh", "explicit_replacement", "Zielon/MICA install.sh", [
    C("pip install torch==1.10.0+cu113 torchvision==0.11.1+cu113", "import_torch_npu", "replace", True,
      "pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12",
      "CUDA wheels from the cu113 index; NPU needs torch paired with a torch_npu wheel"),
    C("onnxruntime-gpu==1.13.1", "device_type", "replace", False,
      "pip install insightface==0.7.3 onnxruntime==1.16.3 face-alignment==1.3.5 loguru yacs trimesh tqdm", ONNX_NOTE),
    C('echo -e "\\nSanity check of the GPU setup..."', "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "inserted before the check: the ported python check imports torch_npu, which needs the CANN environment "
      "(unless the shell already sources it)"),
    C("=nvidia-smi", "device_capability_check", "replace", True, "npu-smi info",
      "under set -e a missing nvidia-smi aborts the script"),
    C("print('cuda available:', torch.cuda.is_available())", "torch_cuda_api", "replace", False,
      "python -c \"import torch, torch_npu; print('npu available:', torch.npu.is_available())\"",
      "prints False instead of failing"),
])
