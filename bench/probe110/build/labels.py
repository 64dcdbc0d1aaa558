# Labels for probe110 (3D human pose / mesh recovery, CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
# See ../README.md "How the labels were chosen" for the policy behind required=True/False.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: import torch_npu right after torch so the 'npu' device and torch.npu exist "
               "(autoload only from torch_npu 2.5.1; these projects pin older torch)")
MAP_LOC_NOTE = ("released checkpoint was saved from CUDA tensors; torch.load without map_location tries to restore "
                "them on CUDA and raises when CUDA is unavailable (standard torch behaviour, not NPU-specific)")

# ----------------------------------------------------------------------------------------------------------------
# VIBE
# ----------------------------------------------------------------------------------------------------------------
E("vibe_demo", "demo.py", "device_branch_or_abstraction", "VIBE demo.py (video -> tracked SMPL, mkocabas/VIBE)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type", "replace", True,
      "device = torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
      "torch.cuda.is_available() is False on an NPU host: the demo would silently run the tracker and VIBE on CPU"),
    C("ckpt = torch.load(pretrained_file)", "device_type", "replace", True,
      "ckpt = torch.load(pretrained_file, map_location='cpu')", MAP_LOC_NOTE),
])

E("vibe_config", "lib/core/config.py", "explicit_replacement", "VIBE lib/core/config.py (yacs defaults)", [
    C("cfg.DEVICE = 'cuda'", "device_type", "replace", True, "cfg.DEVICE = 'npu'",
      "train.py does generator.to(cfg.DEVICE) and passes it to the Trainer; 'cuda' fails on an NPU host"),
])

E("vibe_trainer", "lib/core/trainer.py", "device_branch_or_abstraction", "VIBE lib/core/trainer.py", [
    C("self.device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", False,
      "self.device = 'npu' if torch.npu.is_available() else 'cpu'",
      "fallback only taken when no device is passed; VIBE's train.py always passes cfg.DEVICE, so not on the main path"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "cache release between epochs; on an NPU host the CUDA call is a silent no-op (memory headroom only)"),
    C("checkpoint = torch.load(model_path)", "device_type", "replace", False,
      "checkpoint = torch.load(model_path, map_location='cpu')",
      "resume path: checkpoints written by the ported run hold NPU tensors and load fine; only resuming a GPU-trained "
      "run fails, so not required"),
])

# ----------------------------------------------------------------------------------------------------------------
# SPIN
# ----------------------------------------------------------------------------------------------------------------
E("spin_smplify", "smplify/smplify.py", "explicit_replacement", "SPIN smplify/smplify.py (in-the-loop SMPLify)", [
    C("device=torch.device('cuda')):", "device_type", "replace", True, "device=torch.device('npu')):",
      "SPIN's Trainer builds SMPLify(...) without a device argument, so this default is the device actually used "
      "(prior and SMPL layer are moved to it)"),
])

E("spin_prior", "smplify/prior.py", "explicit_replacement", "SPIN / SMPLify-X smplify/prior.py (GMM pose prior)", [
    C("cov_term = torch.log(torch.det(cov) + self.epsilon)", "unsupported_op_workaround", "replace", False,
      "cov_term = self.cov_dets[idx]",
      "det/linalg_det/_linalg_det have no NPU kernel in the op lists, so this runs through the CPU fallback every "
      "iteration; cov_dets already holds log(det(cov)+eps). Only on the use_merged=False path (performance)"),
])

E("spin_base_trainer", "utils/base_trainer.py", "device_branch_or_abstraction", "SPIN utils/base_trainer.py", [
    C("self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "self.device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "silently trains on CPU on an NPU host"),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "removal", False, None,
      "returns 0 on an NPU host so the block is dead code; switching it to torch.npu.device_count() would enable "
      "nn.DataParallel, which Ascend lists as unsupported, so the porter drops the block"),
    C("print('Using {} GPUs for training'.format(torch.cuda.device_count()))", "torch_cuda_api", "removal", False, None,
      "part of the dropped DataParallel block"),
    C("self.model = torch.nn.DataParallel(self.model)", "distributed_framework", "removal", False, None,
      "torch.nn.DataParallel is ✘ on Atlas A2/A3 (use DDP); unreachable on NPU while the guard stays on torch.cuda"),
    C("checkpoint = torch.load(checkpoint_file)", "device_type", "replace", True,
      "checkpoint = torch.load(checkpoint_file, map_location='cpu')",
      "load_pretrained() reads the released HMR/SPIN weights, saved from CUDA tensors; " + MAP_LOC_NOTE),
    C("pin_memory=self.options.pin_memory,", "pin_memory", "replace", False,
      "pin_memory=self.options.pin_memory, pin_memory_device='npu',",
      "unconfirmed: DataLoader pinning keys off the CUDA/accelerator runtime; name the NPU so host memory is still "
      "pinned (performance only)"),
])

E("spin_trainer", "train/trainer.py", "device_branch_or_abstraction", "SPIN train/trainer.py (near-miss only)", [])

# ----------------------------------------------------------------------------------------------------------------
# PARE
# ----------------------------------------------------------------------------------------------------------------
E("pare_tester", "pare/core/tester.py", "device_branch_or_abstraction", "PARE pare/core/tester.py (demo inference)", [
    C("self.device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type",
      "replace", True, "self.device = torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
      "silently falls back to CPU on an NPU host"),
    C("ckpt = torch.load(self.args.ckpt)['state_dict']", "device_type", "replace", True,
      "ckpt = torch.load(self.args.ckpt, map_location='cpu')['state_dict']",
      "released PARE Lightning checkpoint holds CUDA tensors; " + MAP_LOC_NOTE),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "unguarded CUDA call; raises on a host without CUDA"),
])

E("pare_requirements", "requirements.txt", "explicit_replacement", "PARE requirements.txt (cu101 wheels)", [
    C("--find-links https://download.pytorch.org/whl/torch_stable.html", "torch_cuda_api", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; x86 NPU hosts take CPU torch from whl/cpu, aarch64 uses plain PyPI. Harmless once the pins "
      "below drop +cu101, so not required"),
    C("torch==1.6.0+cu101", "torch_cuda_api", "replace", True, "torch==2.1.0",
      "CUDA build, and torch 1.6 has no torch_npu release; torch_npu 2.1.0.postN pairs with torch 2.1.0"),
    C("torchvision==0.7.0+cu101", "torch_cuda_api", "replace", True, "torchvision==0.16.0",
      "CUDA build; must match the new torch pin"),
    C("torchgeometry==0.1.2", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
      "add the torch-npu pin next to torch (2.1.0.post17 pairs with torch 2.1.0 / CANN 8.3.RC1)"),
    C("neural_renderer_pytorch==1.1.3", "custom_cuda_extension", "removal", True, None,
      "nvcc-built CUDA-only rasteriser; cannot be built or run on an Ascend host"),
])

# ----------------------------------------------------------------------------------------------------------------
# 4D-Humans / HMR 2.0 / PHALP
# ----------------------------------------------------------------------------------------------------------------
DET2_NOTE = ("detectron2 LazyConfig's train.device defaults to 'cuda' and DefaultPredictor_Lazy moves the model there; "
             "detectron2 has no established NPU path, so run the person detector on CPU")

E("hmr2_demo", "demo.py", "device_branch_or_abstraction", "4D-Humans demo.py (HMR 2.0 + ViTDet detector)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type", "replace",
      True, "device = torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
      "silently runs HMR 2.0 (ViT-H) on CPU"),
    C("detectron2_cfg.train.init_checkpoint = ", "device_type", "npu_only_addition", True,
      'detectron2_cfg.train.device = "cpu"', DET2_NOTE),
    C("detectron2_cfg.model.roi_heads.box_predictor.test_nms_thresh   = 0.4", "device_type", "npu_only_addition", True,
      'detectron2_cfg.train.device = "cpu"', DET2_NOTE + " (regnety branch)"),
])

E("hmr2_vit", "hmr2/models/backbones/vit.py", "explicit_replacement", "4D-Humans hmr2/models/backbones/vit.py (ViTPose ViT-H)", [
    C("USE_BF16 = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8",
      "device_capability_check", "replace", False,
      "USE_BF16 = torch.npu.is_available() and torch.npu.is_bf16_supported()",
      "SM>=8 test means nothing on NPU (False here -> fp16 path); A2 supports bf16. Only matters when AMP is on"),
    C("attn = (q @ k.transpose(-2, -1))", "npu_fused_op", "replace", False,
      "x = F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_drop.p if self.training else 0.0, scale=1.0)",
      "vanilla attention is what runs on NPU (xformers path is gated off); SDPA dispatches to the NPU flash-attention "
      "kernel. q is pre-scaled, hence scale=1.0; the softmax/dropout/@v lines collapse into this one (performance)"),
    C("with torch.cuda.amp.autocast(enabled=self.amp, dtype=self.amp_dtype):", "amp", "replace", False,
      "with torch.autocast(device_type='npu', enabled=self.amp, dtype=self.amp_dtype):",
      "CUDA autocast is disabled with a warning on an NPU host, so the backbone silently runs fp32 "
      "(slower, more memory); AMP is off by default in the config"),
])

E("hmr2_train", "train.py", "explicit_replacement", "4D-Humans train.py (hydra + PyTorch Lightning)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
])

E("hmr2_trainer_cfg", "hmr2/configs_hydra/trainer/default.yaml", "explicit_replacement",
  "4D-Humans hmr2/configs_hydra/trainer/*.yaml (Lightning Trainer)", [
    C("accelerator: gpu", "device_type", "replace", True, "accelerator: npu",
      "Lightning's 'gpu' accelerator means CUDA/MPS and refuses to start without it; the 'npu' accelerator needs an "
      "Ascend Lightning plugin (which plugin is unconfirmed)"),
    C("strategy: ddp", "dist_backend", "replace", False,
      "strategy: {_target_: pytorch_lightning.strategies.DDPStrategy, process_group_backend: hccl}",
      "unconfirmed: Lightning picks nccl only for CUDA root devices and gloo otherwise; pin hccl explicitly"),
])

E("hmr2_vitpose", "hmr2/vitpose_model.py", "explicit_replacement", "4D-Humans hmr2/vitpose_model.py (mmpose ViTPose+)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "module has a __main__ smoke test that builds the model on the accelerator; " + IMPORT_NOTE),
    C("def __init__(self, device: str | torch.device = 'cuda:0'):", "device_type", "replace", True,
      "def __init__(self, device: str | torch.device = 'npu:0'):",
      "default device of init_pose_model; 'cuda:0' fails on an NPU host (mmpose/mmcv NPU support unconfirmed)"),
    C("cpm = ViTPoseModel('cuda')", "device_type", "replace", True, "cpm = ViTPoseModel('npu')",
      "hard-coded CUDA device in the smoke test"),
])

E("phalp_tracker", "phalp/trackers/PHALP.py", "explicit_replacement", "PHALP phalp/trackers/PHALP.py (4D-Humans tracker)", [
    C("self.detectron2_cfg.model.roi_heads.box_predictor.test_nms_thresh   = 0.4", "device_type", "npu_only_addition",
      True, 'self.detectron2_cfg.train.device = "cpu"', DET2_NOTE + " (maskrcnn branch)"),
    C("self.detectron2_cfg.train.init_checkpoint = ", "device_type", "npu_only_addition", True,
      'self.detectron2_cfg.train.device = "cpu"', DET2_NOTE + " (vitdet branch)"),
    C("self.detectron2_cfg.MODEL.WEIGHTS = ", "device_type", "npu_only_addition", True,
      'self.detectron2_cfg.MODEL.DEVICE = "cpu"',
      "yacs detectron2 config: MODEL.DEVICE defaults to 'cuda' and DefaultPredictor_with_RPN builds the model there"),
    C("hmar_out        = self.HMAR(masked_image_list.cuda(), **extra_args)", "tensor_to_device", "replace", True,
      "hmar_out        = self.HMAR(masked_image_list.to(self.device), **extra_args)",
      "hard .cuda() on the crop batch; the HMAR module itself already follows cfg.device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "memory housekeeping between videos; silent no-op on an NPU host"),
])

E("dockerfile_4dhumans", "Dockerfile", "explicit_replacement", "4D-Humans-style Dockerfile (CUDA 11.7 devel image)", [
    C("FROM nvidia/cuda:11.7.1-cudnn8-devel-ubuntu22.04", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "CUDA base image has no CANN toolkit/runtime; torch_npu needs CANN in the image"),
    C('ENV FORCE_CUDA="1"', "env_var", "removal", True, None,
      "forces detectron2/mmcv setup.py to compile CUDA ops; with no nvcc in the image the build fails"),
    C('ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0 7.5 8.0 8.6+PTX"', "env_var", "removal", False, None,
      "only read by CUDA extension builds; ignored once FORCE_CUDA is gone"),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None,
      "points at a toolkit that no longer exists; builds only use it together with a CUDA-enabled torch"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=all",
      "read by the NVIDIA container runtime only; the Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics", "env_var", "removal", False, None,
      "NVIDIA container runtime setting; ignored elsewhere"),
    C("RUN pip install torch==2.0.1 torchvision==0.15.2 --index-url https://download.pytorch.org/whl/cu117",
      "torch_cuda_api", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu",
      "cu117 index has no aarch64 wheels and torch 2.0.1 has no matching torch_npu; use CPU torch 2.1.0 "
      "(plain PyPI on aarch64)"),
    C('RUN python -c "import torch; print(torch.__version__, torch.version.cuda)"', "import_torch_npu",
      "npu_only_addition", True, "RUN pip install torch-npu==2.1.0.post17",
      "torch-npu pin (pairs with torch 2.1.0 and the CANN 8.3.RC1 base)"),
    C("RUN pip install xformers==0.0.20", "attention_kernel", "removal", True, None,
      "xformers has no NPU backend and pins torch==2.0.1, which would replace the torch that torch_npu needs; "
      "the ViT falls back to vanilla attention without it"),
])

# ----------------------------------------------------------------------------------------------------------------
# SMPLify-X / VPoser / mesh intersection
# ----------------------------------------------------------------------------------------------------------------
E("smplifyx_main", "smplifyx/main.py", "device_branch_or_abstraction", "SMPLify-X smplifyx/main.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if use_cuda and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if use_cuda and not torch.npu.is_available():",
      "with use_cuda: True (the shipped configs) the script exits with 'CUDA is not available'"),
    C("if use_cuda and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if use_cuda and torch.npu.is_available():",
      "models and priors would silently stay on CPU"),
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "target device for body models, camera and priors"),
])

E("smplifyx_fit", "smplifyx/fit_single_frame.py", "device_branch_or_abstraction", "SMPLify-X smplifyx/fit_single_frame.py", [
    C("if use_cuda and torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if use_cuda and torch.npu.is_available():",
      "guard of the timing sync: False on NPU, so stage timings are just unsynchronised (logging only)"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
      "unreachable while the guard stays on torch.cuda; must move together with it"),
    C("device = torch.device('cuda') if use_cuda else torch.device('cpu')", "device_type", "replace", True,
      "device = torch.device('npu') if use_cuda else torch.device('cpu')",
      "device for pose embedding, VPoser, keypoints and loss weights"),
    C("from mesh_intersection.bvh_search_tree import BVH", "custom_cuda_extension", "replace", True,
      "from mesh_intersection_npu.bvh_search_tree import BVH",
      "torch-mesh-isect BVH is an nvcc-built extension (bvh_cuda); interpenetration defaults to True. Either port "
      "the kernels (Ascend C, see setup.py) or turn the term off in the config"),
    C("assert torch.cuda.is_available(), \\", "torch_cuda_api", "replace", True, "assert torch.npu.is_available(), \\",
      "fails whenever the interpenetration term is enabled (the default)"),
])

E("smplifyx_yaml", "cfg_files/fit_smplx.yaml", "explicit_replacement", "SMPLify-X cfg_files/fit_smplx.yaml", [
    C("interpenetration: True", "custom_cuda_extension", "replace", True, "interpenetration: False",
      "the self-penetration term needs the CUDA-only BVH extension; without an NPU port of it the fit cannot start"),
])

E("mesh_isect_setup", "setup.py", "kernel_rewrite", "torch-mesh-isect setup.py (BVH CUDAExtension)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "no nvcc on Ascend; NpuExtension adds the torch_npu/ACL include and lib dirs"),
    C("bvh_src_files = ['src/bvh.cpp', 'src/bvh_cuda_op.cu']", "custom_cuda_extension", "replace", True,
      "bvh_src_files = ['src/bvh.cpp', 'src/bvh_npu_op.cpp']",
      "the .cu BVH build/traversal kernels must be rewritten (Ascend C) or replaced"),
    C("osp.expandvars('$CUDA_SAMPLES_INC')]", "custom_cuda_extension", "replace", False,
      "osp.expandvars('$ASCEND_TOOLKIT_HOME/include')]",
      "helper_math.h from the CUDA samples is only used by the .cu kernels; a dangling include dir is harmless"),
    C("bvh_extra_compile_args = {'nvcc': ['-DPRINT_TIMINGS=0',", "custom_cuda_extension", "replace", False,
      "bvh_extra_compile_args = {'cxx': ['-DPRINT_TIMINGS=0',",
      "defines under the 'nvcc' key never reach a C++-only build (and drop the empty 'cxx' entry below)"),
    C("bvh_extension = CUDAExtension('bvh_cuda', bvh_src_files,", "custom_cuda_extension", "replace", True,
      "bvh_extension = NpuExtension('bvh_npu', bvh_src_files,",
      "CUDAExtension requires the CUDA toolkit"),
])

E("vposer_loader", "human_body_prior/tools/model_loader.py", "device_branch_or_abstraction",
  "VPoser human_body_prior/tools/model_loader.py", [
    C("comp_device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "comp_device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "comp_device='gpu' (the default) silently resolves to CPU; callers that do not .to() the model afterwards hit "
      "a device mismatch"),
])

# ----------------------------------------------------------------------------------------------------------------
# pytorch3d / neural_renderer / environment
# ----------------------------------------------------------------------------------------------------------------
P3D_NOTE = "pytorch3d's C++ ops (knn, rasteriser, packed Laplacian) have CPU and CUDA kernels only"

E("p3d_render", "lib/common/render_utils.py", "explicit_replacement",
  "ICON/ECON-style lib/common/render.py (pytorch3d renderer + mesh refinement losses)", [
    C('device=torch.device("cuda:0")):', "device_type", "replace", True,
      'def __init__(self, size=512, device=torch.device("cpu")):',
      "renderer default device; " + P3D_NOTE + ", so the rasteriser stays on CPU"),
    C("=losses = {}", "unsupported_op_workaround", "npu_only_addition", True,
      "device = src_verts.device; src_verts, src_faces, tgt_points = src_verts.cpu(), src_faces.cpu(), tgt_points.cpu()",
      P3D_NOTE + "; chamfer_distance uses knn_points and mesh_laplacian_smoothing a sparse matmul (sparse ops raise "
      "on NPU), so run the refinement losses on CPU"),
    C("=return losses", "unsupported_op_workaround", "replace", True,
      "return {k: v.to(device) for k, v in losses.items()}",
      "losses must come back to the NPU before they are summed with the other terms"),
    C("knn = knn_points(query_points, body_verts, K=k, return_nn=False)", "unsupported_op_workaround", "replace", True,
      "knn = knn_points(query_points.cpu(), body_verts.cpu(), K=k, return_nn=False)", P3D_NOTE),
])

E("nr_part_renderer", "utils/part_utils.py", "kernel_rewrite", "SPIN utils/part_utils.py (neural_renderer part masks)", [
    C("import neural_renderer as nr", "custom_cuda_extension", "replace", True,
      "from utils.soft_renderer import SoftPartRenderer",
      "neural_renderer is CUDA-only (no CPU path at all); needs a replacement rasteriser with the same call signature"),
    C("self.neural_renderer = nr.Renderer(dist_coeffs=None, orig_size=self.render_res,", "custom_cuda_extension",
      "replace", True, "self.neural_renderer = SoftPartRenderer(dist_coeffs=None, orig_size=self.render_res,",
      "construct the replacement renderer"),
    C("self.faces = torch.from_numpy(SMPL(config.SMPL_MODEL_DIR).faces.astype(np.int32)).cuda()", "tensor_to_device",
      "replace", True, "self.faces = torch.from_numpy(SMPL(config.SMPL_MODEL_DIR).faces.astype(np.int32)).npu()",
      "hard .cuda()"),
    C("self.textures = torch.from_numpy(textures).cuda().float()", "tensor_to_device", "replace", True,
      "self.textures = torch.from_numpy(textures).npu().float()", "hard .cuda()"),
    C("self.cube_parts = torch.cuda.FloatTensor(np.load(config.CUBE_PARTS_FILE))", "torch_cuda_api", "replace", True,
      "self.cube_parts = torch.tensor(np.load(config.CUBE_PARTS_FILE), dtype=torch.float32, device='npu')",
      "legacy torch.cuda.FloatTensor constructor"),
])

E("environment_yml", "environment.yml", "explicit_replacement", "SMPL-X fitting conda environment.yml (pytorch3d/kaolin)", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None, "channel only needed for pytorch-cuda"),
    C("=- pytorch3d", "custom_cuda_extension", "removal", False, None,
      "channel for the prebuilt (CUDA, linux-64) pytorch3d packages"),
    C("- pytorch=1.13.1", "torch_cuda_api", "replace", True, "- pytorch=2.1.0",
      "torch 1.13 has no torch_npu release; torch_npu 2.1.0.postN pairs with torch 2.1.0"),
    C("- torchvision=0.14.1", "torch_cuda_api", "replace", True, "- torchvision=0.16.0", "must match the torch pin"),
    C("- pytorch-cuda=11.7", "torch_cuda_api", "replace", True, "- cpuonly",
      "selects the CUDA build of pytorch and the CUDA runtime; select the CPU build instead"),
    C("- nvidiacub", "custom_cuda_extension", "removal", False, None, "CUB headers for pytorch3d's CUDA build only"),
    C("- pytorch3d=0.7.2", "custom_cuda_extension", "removal", True, None,
      "conda pytorch3d builds are CUDA builds for linux-64; build it from source CPU-only (its ops then run on CPU)"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post17", "torch-npu pin"),
    C("- --find-links https://nvidia-kaolin.s3.us-east-2.amazonaws.com/torch-1.13.1_cu117.html", "custom_cuda_extension",
      "removal", False, None, "CUDA wheel index for kaolin; harmless once kaolin is gone"),
    C("- kaolin==0.13.0", "custom_cuda_extension", "removal", True, None,
      "kaolin's mesh ops are CUDA kernels and its wheels are cu117-only"),
    C("- git+https://github.com/vchoutas/torch-mesh-isect.git", "custom_cuda_extension", "removal", True, None,
      "CUDAExtension build needs nvcc; install the NPU port instead (or drop interpenetration)"),
])

# ----------------------------------------------------------------------------------------------------------------
# EasyMocap
# ----------------------------------------------------------------------------------------------------------------
E("easymocap_body", "easymocap/smplmodel/body_model.py", "device_branch_or_abstraction",
  "EasyMocap easymocap/smplmodel/body_model.py (SMPLlayer + load_model)", [
    C("if use_cuda and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if use_cuda and torch.npu.is_available():", "multi-view fitting silently runs on CPU"),
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "default device for all body models"),
])

# ----------------------------------------------------------------------------------------------------------------
# ROMP / HybrIK
# ----------------------------------------------------------------------------------------------------------------
E("romp_main", "simple_romp/romp/main.py", "device_branch_or_abstraction", "simple-romp romp/main.py (--GPU flag, ONNX)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "module is the `romp` console entry point; " + IMPORT_NOTE),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
      "forces GPU=-1 (CPU) and disables temporal optimisation on an NPU host"),
    C("device = torch.device('cuda:{}'.format(gpu_id))", "device_type", "replace", True,
      "device = torch.device('npu:{}'.format(gpu_id))", "--GPU index is mapped to a CUDA device"),
    C("self.model = nn.DataParallel(model)", "distributed_framework", "replace", True, "self.model = model",
      "unconditional DataParallel wrap; torch.nn.DataParallel is ✘ on Atlas A2/A3"),
    C("providers=['CUDAExecutionProvider'", "device_type", "replace", False,
      "self.ort_session = onnxruntime.InferenceSession(self.settings.model_onnx_path, providers=['CANNExecutionProvider' "
      "if self.settings.GPU > -1 else 'CPUExecutionProvider'])",
      "unconfirmed: a CPU onnxruntime build warns and falls back to CPU for an unavailable provider; the CANN "
      "provider needs an onnxruntime built with it (--onnx path only)"),
])

E("hybrik_demo", "scripts/demo_video.py", "explicit_replacement", "HybrIK scripts/demo_video.py (--gpu flag)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from torchvision.models.detection import fasterrcnn_resnet50_fpn", "unsupported_op_workaround",
      "npu_only_addition", False, "import torchvision_npu",
      "Faster R-CNN uses torchvision nms/roi_align; torchvision_npu provides NPU kernels. Unconfirmed whether, "
      "without it, they fall back to CPU or raise"),
    C("=det_model.cuda(opt.gpu)", "tensor_to_device", "replace", True, "det_model.to(f'npu:{opt.gpu}')", "hard .cuda()"),
    C("=hybrik_model.cuda(opt.gpu)", "tensor_to_device", "replace", True, "hybrik_model.to(f'npu:{opt.gpu}')",
      "hard .cuda()"),
    C("det_input = det_transform(input_image).to(opt.gpu)", "tensor_to_device", "replace", True,
      "det_input = det_transform(input_image).to(f'npu:{opt.gpu}')", "an int passed to .to() means a CUDA ordinal"),
    C("pose_input = pose_input.to(opt.gpu)[None, :, :, :]", "tensor_to_device", "replace", True,
      "pose_input = pose_input.to(f'npu:{opt.gpu}')[None, :, :, :]", "an int passed to .to() means a CUDA ordinal"),
    C("vertices=verts_batch, faces=smpl_faces,", "unsupported_op_workaround", "replace", True,
      "vertices=verts_batch.cpu(), faces=smpl_faces,",
      "render_mesh is the pytorch3d rasteriser (CPU/CUDA kernels only)"),
    C("translation=transl_batch,", "unsupported_op_workaround", "replace", True, "translation=transl_batch.cpu(),",
      "same render_mesh call"),
])

E("hybrik_train", "scripts/train_smpl.py", "explicit_replacement", "HybrIK scripts/train_smpl.py (mp.spawn + DDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("num_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "num_gpu = torch.npu.device_count()",
      "0 on an NPU host -> opt.nThreads / num_gpu raises ZeroDivisionError in every worker"),
    C("    torch.cuda.set_device(opt.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(opt.gpu)",
      "raises without CUDA; each spawned rank must bind its NPU"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "num_gpus = torch.npu.device_count()",
      "slurm launcher: proc_id % 0"),
    C("torch.cuda.set_device(proc_id % num_gpus)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(proc_id % num_gpus)", "slurm launcher device binding"),
    C("dist.init_process_group(backend='nccl')", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl')", "NCCL is unavailable on Ascend; HCCL is the collective backend"),
    C("inps = [inp.cuda(opt.gpu).requires_grad_() for inp in inps]", "tensor_to_device", "replace", True,
      "inps = [inp.npu(opt.gpu).requires_grad_() for inp in inps]", "hard .cuda()"),
    C("inps = inps.cuda(opt.gpu).requires_grad_()", "tensor_to_device", "replace", True,
      "inps = inps.npu(opt.gpu).requires_grad_()", "hard .cuda()"),
    C("labels[k] = labels[k].cuda(opt.gpu)", "tensor_to_device", "replace", True, "labels[k] = labels[k].npu(opt.gpu)",
      "hard .cuda()"),
    C("with torch.cuda.amp.autocast(enabled=opt.amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=opt.amp):",
      "--amp is opt-in; CUDA autocast is silently disabled on NPU (fp32 training, slower)"),
    C("=inps = [inp.cuda(opt.gpu) for inp in inps]", "tensor_to_device", "replace", True,
      "inps = [inp.npu(opt.gpu) for inp in inps]", "hard .cuda() in validation"),
    C("=inps = inps.cuda(opt.gpu)", "tensor_to_device", "replace", True, "inps = inps.npu(opt.gpu)",
      "hard .cuda() in validation"),
    C("labels[k] = labels[k].cuda(opt.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "labels[k] = labels[k].npu(opt.gpu, non_blocking=True)", "hard .cuda() in validation"),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "ngpus_per_node = torch.npu.device_count()", "mp.spawn(nprocs=0) would start no workers at all"),
    C("input = torch.randn(1, 3, 256, 256).cuda(opt.gpu)", "tensor_to_device", "replace", True,
      "input = torch.randn(1, 3, 256, 256).npu(opt.gpu)", "only with --params (FLOPs count), but fails there"),
    C("flops, params = profile(m.cuda(opt.gpu), inputs=(input, ))", "tensor_to_device", "replace", True,
      "flops, params = profile(m.npu(opt.gpu), inputs=(input, ))", "only with --params"),
    C("=m.cuda(opt.gpu)", "tensor_to_device", "replace", True, "m.npu(opt.gpu)",
      "model placement before DDP (device_ids=[opt.gpu] then refers to the NPU ordinal)"),
    C("criterion = builder.build_loss(cfg.LOSS).cuda(opt.gpu)", "tensor_to_device", "replace", True,
      "criterion = builder.build_loss(cfg.LOSS).npu(opt.gpu)", "hard .cuda()"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=opt.amp)", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler(enabled=opt.amp)",
      "disabled with a warning on NPU; must move together with the autocast line or fp16 runs unscaled"),
    C("pin_memory=True)", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu')",
      "unconfirmed: pinning keys off the CUDA/accelerator runtime (performance only)"),
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "logger.info('max mem: {:.0f} MB'.format(torch.npu.max_memory_allocated() / 1024 / 1024))",
      "logs 0 MB on an NPU host (logging only)"),
    C("model.load_state_dict(torch.load(cfg.MODEL.PRETRAINED))", "device_type", "replace", True,
      "model.load_state_dict(torch.load(cfg.MODEL.PRETRAINED, map_location='cpu'))", MAP_LOC_NOTE),
    C("pretrained_state = torch.load(cfg.MODEL.TRY_LOAD)", "device_type", "replace", True,
      "pretrained_state = torch.load(cfg.MODEL.TRY_LOAD, map_location='cpu')",
      "TRY_LOAD warm-starts from released HybrIK weights; " + MAP_LOC_NOTE),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "redundant after torch.manual_seed, which also seeds the NPU generator"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "redundant after torch.manual_seed"),
])

E("hybrik_sh", "scripts/train_smpl.sh", "explicit_replacement", "HybrIK scripts/train_smpl.sh launcher", [
    C("=set -x", "import_torch_npu", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (LD_LIBRARY_PATH, ASCEND_OPP_PATH...) must be sourced before torch_npu can load"),
    C("export CUDA_VISIBLE_DEVICES=${GPUS:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPUS:-0,1,2,3,4,5,6,7}",
      "the device selection via $GPUS would be silently ignored; the Ascend runtime reads ASCEND_RT_VISIBLE_DEVICES"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL logging knob; ignored by HCCL"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL transport knob; ignored by HCCL"),
    C("--dist-backend nccl", "dist_backend", "replace", True, "--dist-backend hccl \\",
      "passed to init_process_group(backend=opt.dist_backend); nccl does not exist on Ascend"),
])

# ----------------------------------------------------------------------------------------------------------------
# MDM (human motion diffusion)
# ----------------------------------------------------------------------------------------------------------------
E("mdm_dist_util", "utils/dist_util.py", "device_branch_or_abstraction", "MDM utils/dist_util.py (guided-diffusion helpers)", [
    C("if th.cuda.is_available() and used_device>=0:", "torch_cuda_api", "replace", True,
      "if th.npu.is_available() and used_device>=0:",
      "dev() is the single device source for sampling and training; silently CPU otherwise"),
    C('return th.device(f"cuda:{used_device}")', "device_type", "replace", True,
      'return th.device(f"npu:{used_device}")', "the --device index becomes a CUDA device"),
])

E("mdm_generate", "sample/generate.py", "device_branch_or_abstraction", "MDM sample/generate.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NOTE + "; everything else in this script goes through dist_util.dev()"),
])

E("mdm_training_loop", "train/training_loop.py", "device_branch_or_abstraction", "MDM train/training_loop.py", [
    C("self.sync_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "self.sync_cuda = torch.npu.is_available()", "leftover guided-diffusion flag, never read"),
    C("if torch.cuda.is_available() and dist_util.dev() != 'cpu':", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and dist_util.dev() != 'cpu':",
      "second device gate: even with dist_util ported, batches stay on CPU while the model is on the NPU "
      "-> device mismatch in the first step"),
])
