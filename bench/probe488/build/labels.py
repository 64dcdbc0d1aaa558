"""Labels for probe488 (dental and maxillofacial imaging). See README.md for the policy."""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


TORCH_NPU = "import torch_npu"
NPU_IMPORT_NOTE = ("entry point: torch.npu.* and the 'npu' device need torch_npu loaded (autoload only from "
                   "torch_npu 2.5.1; the explicit import is still recommended)")

# ---------------------------------------------------------------------------------------------
# MeshSegNet (intra-oral scan mesh segmentation, 15 classes, graph-constrained PointNet-like net)
# ---------------------------------------------------------------------------------------------
E("msn_train", "step3_training.py", "explicit_replacement",
  "Tai-Hsien/MeshSegNet step3_training.py (visdom, module-level device, adjacency matrices)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, NPU_IMPORT_NOTE),
    C("torch.cuda.set_device(utils.get_avail_gpu())", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(utils.get_avail_gpu())  # assign which npu will be used",
      "torch.cuda.set_device fails on a host without CUDA; get_avail_gpu itself is ported in utils.py"),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "unchanged it silently trains on the CPU (torch.cuda.is_available() is False on an NPU host)"),
])

E("msn_model", "meshsegnet.py", "explicit_replacement",
  "Tai-Hsien/MeshSegNet meshsegnet.py (STN3d/STNkd identity add, GLM modules, torchsummary demo)", [
    C("=if x.is_cuda:", "device_type", "replace", True, "if x.is_npu:",
      "on NPU x.is_cuda is False, iden stays on the CPU and `x + iden` mixes devices (B x 9 tensor, not a scalar)"),
    C("=iden = iden.cuda()", "tensor_to_device", "replace", True, "iden = iden.npu()",
      "reached once the guard is ported; .cuda() fails without CUDA"),
    C("if x.is_cuda: iden = iden.cuda()", "tensor_to_device", "replace", True, "if x.is_npu: iden = iden.npu()",
      "same identity-matrix idiom in STNkd (k=64 feature transform)"),
    C("device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu:0' if torch.npu.is_available() else 'cpu')",
      "__main__ smoke test; unchanged it runs on the CPU"),
    C("summary(model, [(15, 6000), (6000, 6000), (6000, 6000)])", "device_type", "replace", True,
      "summary(model.cpu(), [(15, 6000), (6000, 6000), (6000, 6000)], device='cpu')",
      "torchsummary.summary defaults to device='cuda' and only accepts 'cuda'/'cpu' (builds torch.cuda.FloatTensor "
      "inputs); run the summary on the CPU"),
])

E("msn_dataset", "Mesh_dataset.py", "explicit_replacement",
  "Tai-Hsien/MeshSegNet Mesh_dataset.py (vedo mesh features, A_S/A_L adjacency on the host)", [])

E("msn_utils", "utils.py", "explicit_replacement",
  "Tai-Hsien/MeshSegNet utils.py (get_avail_gpu via nvidia-smi, visdom plotter)", [
    C("=import subprocess", "import_torch_npu", "npu_only_addition", True, "import torch",
      "the ported get_avail_gpu queries torch.npu; this module imported no torch before (torch_npu itself is "
      "imported by the entry scripts)"),
    C("result = subprocess.run(['nvidia-smi', '--query-gpu=memory.used'", "torch_cuda_api", "replace", True,
      "free_total = [torch.npu.mem_get_info(i) for i in range(torch.npu.device_count())]",
      "nvidia-smi does not exist on an Ascend host (check=True raises); npu-smi has no --query-gpu CSV mode, so "
      "use torch.npu.mem_get_info"),
    C("gpu_memory = [int(x) for x in result.stdout.decode('utf-8')", "torch_cuda_api", "replace", True,
      "gpu_memory = [(total - free) // 2**20 for free, total in free_total]",
      "parses the nvidia-smi CSV output that no longer exists"),
    C("result = subprocess.run(['nvidia-smi', '-L']", "torch_cuda_api", "replace", False,
      "return torch.npu.device_count()",
      "get_num_gpus is never called by the training/prediction scripts; changed for consistency only"),
])

E("msn_predict", "step6_predict_with_post_processing.py", "explicit_replacement",
  "Tai-Hsien/MeshSegNet step6_predict_with_post_processing.py (pygco graph-cut refinement, thundersvm upsampling)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, NPU_IMPORT_NOTE),
    C("from thundersvm import SVC", "unsupported_op_workaround", "replace", False,
      "from sklearn.svm import SVC  # thundersvm is CUDA-only",
      "thundersvm is a GPU SVM; its CUDA wheel failing to import on an NPU host is unconfirmed in the knowledge "
      "base, but it gives no NPU speed-up either way; sklearn is the repo's own fallback"),
    C("torch.cuda.set_device(gpu_id)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu_id)",
      "torch.cuda.set_device fails without CUDA"),
    C("device = torch.device('cuda:{0}'.format(gpu_id))", "device_type", "replace", True,
      "device = torch.device('npu:{0}'.format(gpu_id))", "hard-coded CUDA device string"),
    C("clf = SVC(kernel='rbf', gamma='auto', probability=False, gpu_id=gpu_id)", "unsupported_op_workaround",
      "replace", True, "clf = SVC(kernel='rbf', gamma='auto', probability=False)",
      "with the sklearn import in place, gpu_id is an unknown keyword (TypeError)"),
])

# ---------------------------------------------------------------------------------------------
# ToothGroupNetwork (3DTeethSeg22: TSegNet / TGNet on intra-oral scans, Point Transformer pointops)
# ---------------------------------------------------------------------------------------------
E("tgn_train", "start_train.py", "explicit_replacement",
  "limhoyeon/ToothGroupNetwork start_train.py (argparse, --gpu -> CUDA_VISIBLE_DEVICES)", [
    C("=import importlib", "import_torch_npu", "npu_only_addition", True, TORCH_NPU,
      "entry script has no torch import of its own; torch_npu goes here so torch.npu exists for the trainer"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so --gpu would silently land every run on device 0"),
])

E("tgn_config", "train_configs/tsegnet.py", "explicit_replacement",
  "limhoyeon/ToothGroupNetwork train_configs/tsegnet.py (plain dict config)", [])

E("tgn_trainer", "trainer.py", "explicit_replacement",
  "limhoyeon/ToothGroupNetwork trainer.py (wandb, step scheduler, optional AMP)", [
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)", "amp", "replace", False,
      "self.scaler = torch.npu.amp.GradScaler(enabled=self.use_amp)",
      "use_amp is off in every shipped config and the scaler is never used in step(); inert"),
    C('batch_item[key] = batch_item[key].cuda(non_blocking=True)', "tensor_to_device", "replace", True,
      'batch_item[key] = batch_item[key].npu(non_blocking=True)', ".cuda() fails without CUDA"),
    C("with torch.cuda.amp.autocast(enabled=self.use_amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=self.use_amp):",
      "disabled by default; even when enabled the CUDA autocast only warns and runs fp32 (performance)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "torch.cuda.empty_cache is a no-op while CUDA is uninitialised; the NPU cache just is not trimmed"),
    C("torch.cuda.max_memory_allocated() / 1024**3", "torch_cuda_api", "replace", False,
      'f"peak npu mem {torch.npu.max_memory_allocated() / 1024**3:.2f} GB")',
      "log line only; the CUDA call reports 0 instead of failing (unconfirmed in the knowledge base)"),
])

E("tgn_model", "models/tsegnet.py", "explicit_replacement",
  "limhoyeon/ToothGroupNetwork models/tsegnet.py (model wrapper: step/get_loss, centroid pretraining)", [
    C('state = torch.load(path + ".h5")', "tensor_to_device", "replace", True,
      'state = torch.load(path + ".h5", map_location="npu")',
      "the pretrained centroid checkpoint was saved from CUDA tensors; without map_location torch.load tries to "
      "restore them on a CUDA device and fails"),
    C('points = batch_item["feat"].cuda()', "tensor_to_device", "replace", True,
      'points = batch_item["feat"].npu()', ".cuda() fails without CUDA"),
    C('l0_xyz = batch_item["feat"][:, :3, :].cuda()', "tensor_to_device", "replace", True,
      'l0_xyz = batch_item["feat"][:, :3, :].npu()', ".cuda() fails without CUDA"),
    C('seg_label = batch_item["gt_seg_label"].cuda()', "tensor_to_device", "replace", True,
      'seg_label = batch_item["gt_seg_label"].npu()', ".cuda() fails without CUDA"),
])

E("tgn_module", "models/modules/tsegnet.py", "explicit_replacement",
  "limhoyeon/ToothGroupNetwork models/modules/tsegnet.py (DGCNN graph features, pointops knn/fps cropping)", [
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "DGCNN idx_base built on a hard-coded CUDA device"),
    C("offset = torch.cuda.IntTensor([N])", "torch_cuda_api", "replace", True,
      "offset = torch.tensor([N], dtype=torch.int32, device=xyz.device)",
      "legacy torch.cuda typed-tensor constructor; fails without CUDA"),
    C("new_offset = torch.cuda.IntTensor([K])", "torch_cuda_api", "replace", True,
      "new_offset = torch.tensor([K], dtype=torch.int32, device=xyz.device)", "same"),
    C("fps_idx = pointops.furthestsampling(centers.contiguous(), torch.cuda.IntTensor([centers.shape[0]]),",
      "torch_cuda_api", "replace", True,
      "fps_idx = pointops.furthestsampling(centers.contiguous(), torch.tensor([centers.shape[0]], dtype=torch.int32, device=centers.device),",
      "same"),
    C("torch.cuda.IntTensor([min(self.centroid_seed_num * 2, centers.shape[0])]))", "torch_cuda_api", "replace",
      True,
      "torch.tensor([min(self.centroid_seed_num * 2, centers.shape[0])], dtype=torch.int32, device=centers.device))",
      "same"),
    C("cluster_gt = torch.mode(cropped_label, dim=1)[0]", "unsupported_op_workaround", "replace", False,
      "cluster_gt = torch.stack([torch.bincount(r).argmax() for r in cropped_label])",
      "aten::mode has no NPU kernel in the op lists, so it falls back to the CPU (performance only)"),
])

E("tgn_pointops_setup", "external_libs/pointops/setup.py", "kernel_rewrite",
  "limhoyeon/ToothGroupNetwork external_libs/pointops/setup.py (Point Transformer CUDAExtension)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace",
      True, "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "no nvcc on an Ascend host; the kernels are rewritten in Ascend C and built with NpuExtension"),
    C("if file.endswith('.cpp') or file.endswith('.cu')]", "custom_cuda_extension", "replace", True,
      "if file.endswith('.cpp')]  # src/ now holds the Ascend C ports, no .cu files",
      ".cu sources cannot be compiled"),
    C("CUDAExtension(", "custom_cuda_extension", "replace", True, "NpuExtension(",
      "CUDAExtension needs the CUDA toolkit"),
    C("name='pointops_cuda',", "custom_cuda_extension", "replace", True, "name='pointops_npu',",
      "renamed so a stale CUDA build is never picked up; functions/pointops.py imports it under the old alias"),
    C("extra_compile_args={'cxx': ['-g'], 'nvcc': ['-O2']})", "custom_cuda_extension", "replace", True,
      "extra_compile_args={'cxx': ['-g', '-O2']})", "no nvcc flags for an NpuExtension"),
])

_PO = "device=xyz.device"
E("tgn_pointops", "external_libs/pointops/functions/pointops.py", "kernel_rewrite",
  "limhoyeon/ToothGroupNetwork external_libs/pointops/functions/pointops.py (POSTECH/Point Transformer pointops)", [
    C("=import pointops_cuda", "custom_cuda_extension", "replace", True,
      "import pointops_npu as pointops_cuda  # Ascend C port, same entry points",
      "the CUDA extension cannot be built; the Ascend C port keeps the function names, so the call sites stay"),
    C("idx = torch.cuda.IntTensor(new_offset[b-1].item()).zero_()", "torch_cuda_api", "replace", True,
      "idx = torch.zeros(new_offset[b-1].item(), dtype=torch.int32, device=xyz.device)",
      "torch.cuda typed-tensor constructors fail without CUDA"),
    C("tmp = torch.cuda.FloatTensor(n).fill_(1e10)", "torch_cuda_api", "replace", True,
      "tmp = torch.full((n,), 1e10, dtype=torch.float32, device=xyz.device)", "same"),
    C("idx = torch.cuda.IntTensor(m, nsample).zero_()", "torch_cuda_api", "replace", True,
      "idx = torch.zeros((m, nsample), dtype=torch.int32, device=xyz.device)", "same"),
    C("dist2 = torch.cuda.FloatTensor(m, nsample).zero_()", "torch_cuda_api", "replace", True,
      "dist2 = torch.zeros((m, nsample), dtype=torch.float32, device=xyz.device)", "same"),
    C("output = torch.cuda.FloatTensor(m, nsample, c)", "torch_cuda_api", "replace", True,
      "output = torch.empty((m, nsample, c), dtype=torch.float32, device=input.device)", "same"),
    C("grad_input = torch.cuda.FloatTensor(n, c).zero_()", "torch_cuda_api", "replace", True,
      "grad_input = torch.zeros((n, c), dtype=torch.float32, device=grad_output.device)", "same"),
    C("output = torch.cuda.FloatTensor(n, nsample, c).zero_()", "torch_cuda_api", "replace", True,
      "output = torch.zeros((n, nsample, c), dtype=torch.float32, device=input1.device)", "same"),
    C("grad_input1 = torch.cuda.FloatTensor(n, c).zero_()", "torch_cuda_api", "replace", True,
      "grad_input1 = torch.zeros((n, c), dtype=torch.float32, device=grad_output.device)", "same"),
    C("grad_input2 = torch.cuda.FloatTensor(n, c).zero_()", "torch_cuda_api", "replace", True,
      "grad_input2 = torch.zeros((n, c), dtype=torch.float32, device=grad_output.device)", "same"),
    C("output = torch.cuda.FloatTensor(n, c).zero_()", "torch_cuda_api", "replace", True,
      "output = torch.zeros((n, c), dtype=torch.float32, device=input.device)", "same"),
    C("grad_input = torch.cuda.FloatTensor(m, c).zero_()", "torch_cuda_api", "replace", True,
      "grad_input = torch.zeros((m, c), dtype=torch.float32, device=grad_output.device)", "same"),
    C("new_feat = torch.cuda.FloatTensor(new_xyz.shape[0], feat.shape[1]).zero_()", "torch_cuda_api", "replace",
      True, "new_feat = torch.zeros((new_xyz.shape[0], feat.shape[1]), dtype=torch.float32, device=feat.device)",
      "same (pure-torch interpolation path)"),
])

E("tgn_infer", "inference_pipelines/inference_pipeline_tsegnet.py", "explicit_replacement",
  "limhoyeon/ToothGroupNetwork inference_pipelines/inference_pipeline_tsegnet.py (FPS, crop, KD-tree upsampling)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU,
      "runnable as a script (__main__); " + NPU_IMPORT_NOTE),
    C("input_cuda_feats = torch.from_numpy(np.array([org_feats.astype('float32')])).cuda().permute(0, 2, 1)",
      "tensor_to_device", "replace", True,
      "input_cuda_feats = torch.from_numpy(np.array([org_feats.astype('float32')])).npu().permute(0, 2, 1)",
      ".cuda() fails without CUDA (the variable name is left alone)"),
    C('state = torch.load(ckpt_path + ".h5")', "tensor_to_device", "replace", True,
      'state = torch.load(ckpt_path + ".h5", map_location="npu")',
      "released TSegNet weights were saved from CUDA tensors; torch.load without map_location fails"),
    C("module.cuda()", "tensor_to_device", "replace", True, "module.npu()", "Module.cuda fails without CUDA"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
      "unchanged the script always exits on an NPU host"),
])

E("tgn_requirements", "requirements.txt", "explicit_replacement",
  "limhoyeon/ToothGroupNetwork requirements (cu116 wheels)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu116", "device_type", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu pairs with the CPU torch wheel (x86) or plain PyPI torch (aarch64)"),
    C("torch==1.13.1+cu116", "device_type", "replace", True, "torch==2.1.0",
      "no torch_npu release pairs with torch 1.13; +cu116 local versions do not exist for aarch64"),
    C("torchvision==0.14.1+cu116", "device_type", "replace", True, "torchvision==0.16.0",
      "must match torch 2.1.0; the +cu116 build pulls CUDA libraries"),
    C("numpy==1.23.5", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "torch_npu wheel matching torch 2.1.0 (version matrix §1.2)"),
])

# ---------------------------------------------------------------------------------------------
# ToothFairy / alveolar-canal CBCT segmentation (AImageLab-style: munch yaml, torchio queue, 3D UNet)
# ---------------------------------------------------------------------------------------------
E("tf_main", "main.py", "explicit_replacement",
  "AImageLab ToothFairy / alveolar_canal main.py (yaml+munch config, wandb, torchrun DDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, NPU_IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "torch.cuda.manual_seed_all is queued lazily and never runs without CUDA; torch.manual_seed already seeds "
      "the NPU generator (unconfirmed in the knowledge base) - reproducibility only"),
    C('return torch.device("cuda:0")', "device_type", "replace", True, 'return torch.device("npu:0")',
      "single-process path hard-codes a CUDA device"),
    C("torch.cuda.set_device(config.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(config.local_rank)", "fails without CUDA"),
    C('dist.init_process_group(backend=config.trainer.get("dist_backend", "nccl")', "dist_backend", "replace", False,
      'dist.init_process_group(backend=config.trainer.get("dist_backend", "hccl"), init_method="env://",',
      "fallback default only; every shipped config sets trainer.dist_backend, which is the label that matters"),
    C('return torch.device(f"cuda:{config.local_rank}")', "device_type", "replace", True,
      'return torch.device(f"npu:{config.local_rank}")', "per-rank CUDA device string"),
    C("torch.cuda.device_count()} GPU(s): {torch.cuda.get_device_name(device)}", "torch_cuda_api", "replace", True,
      'print(f"running on {torch.npu.device_count()} NPU(s): {torch.npu.get_device_name(device)}")',
      "torch.cuda.get_device_name(npu device) raises (expects a CUDA device)"),
    C("(max mem {torch.cuda.max_memory_allocated(device) / 2**30:.1f} GiB)", "torch_cuda_api", "replace", False,
      'f"(max mem {torch.npu.max_memory_allocated(device) / 2**30:.1f} GiB)")',
      "log only; CUDA memory stats return empty while CUDA is uninitialised (unconfirmed)"),
])

E("tf_config", "configs/gen-training-unet-trainval.yaml", "explicit_replacement",
  "AImageLab ToothFairy configs/gen-training-unet-trainval.yaml", [
    C("dist_backend: nccl", "dist_backend", "replace", True, "dist_backend: hccl",
      "NCCL is not available with torch_npu; torchrun launches (scripts/train_ddp.sh) read this key"),
])

E("tf_experiment", "experiments/segmentation.py", "explicit_replacement",
  "AImageLab ToothFairy experiments/segmentation.py (torchio Queue/GridSampler, DDP, AMP)", [
    C("self.model = nn.DataParallel(self.model)", "distributed_framework", "replace", True,
      "self.model = self.model  # nn.DataParallel is not supported on NPU; single device",
      "torch.nn.DataParallel is marked unsupported on Atlas A2/A3 in Ascend's API list"),
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler(enabled=self.use_amp)",
      "amp: true in the config; once autocast runs fp16 on the NPU a CUDA scaler (disabled without CUDA) leaves "
      "the fp16 loss unscaled, so small gradients underflow silently"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=self.use_amp):', "amp", "replace", False,
      'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=self.use_amp):',
      "unchanged the CUDA autocast is disabled on NPU tensors and training runs fp32 (correct, slower)"),
    C('with torch.autocast("cuda", dtype=torch.float16, enabled=self.use_amp):', "amp", "replace", False,
      'with torch.autocast("npu", dtype=torch.float16, enabled=self.use_amp):',
      "validation forward; fp32 fallback is correct, performance only"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA; cache trimming only"),
])

E("tf_model", "models/PosPadUNet3D.py", "explicit_replacement",
  "AImageLab ToothFairy models/PosPadUNet3D.py (3D UNet with patch-position embedding)", [])

E("tf_docker", "Dockerfile", "explicit_replacement",
  "ToothFairy2 grand-challenge algorithm container Dockerfile", [
    C("FROM pytorch/pytorch:2.1.2-cuda12.1-cudnn8-runtime", "device_type", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA runtime base image; needs a CANN base image (tag illustrative) - torch/torch_npu installed below"),
    C("ENV NVIDIA_VISIBLE_DEVICES all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES 0",
      "read only by the NVIDIA container runtime; the Ascend Docker runtime uses ASCEND_VISIBLE_DEVICES "
      "(usually passed at docker run) - inert either way"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES compute,utility", "env_var", "removal", False, None,
      "NVIDIA container runtime setting, inert on an Ascend host"),
    C("RUN python -m pip install --user -r requirements.txt", "import_torch_npu", "npu_only_addition", True,
      "RUN python -m pip install --user torch==2.1.0 torch-npu==2.1.0.post12",
      "the pytorch/pytorch base image provided torch; the CANN image does not, and torch_npu is needed"),
])

E("tf_process", "process.py", "explicit_replacement",
  "ToothFairy2 grand-challenge process.py (SimpleITK I/O, gaussian sliding window, fp16 autocast)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, NPU_IMPORT_NOTE),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "unchanged the container silently falls back to the CPU"),
    C('print(f"Using GPU: {torch.cuda.get_device_name(0)}")', "torch_cuda_api", "replace", True,
      'print(f"Using NPU: {torch.npu.get_device_name(0)}")', "reached once the guard is ported; fails without CUDA"),
    C('return torch.device("cuda")', "device_type", "replace", True, 'return torch.device("npu")',
      "hard-coded CUDA device"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16):', "amp", "replace", False,
      'with torch.autocast(device_type="npu", dtype=torch.float16):',
      "inference only; CUDA autocast is disabled on NPU tensors and the window runs fp32 (performance)"),
    C('state = torch.load(CKPT_PATH, map_location=torch.device("cuda"))', "tensor_to_device", "replace", True,
      'state = torch.load(CKPT_PATH, map_location=torch.device("npu"))',
      "map_location to a CUDA device fails without CUDA"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA"),
    C('"peak_gpu_mem_gb": torch.cuda.max_memory_allocated() / 1e9 if device.type == "cuda" else 0.0}, f)',
      "torch_cuda_api", "replace", False,
      '"peak_gpu_mem_gb": torch.npu.max_memory_allocated() / 1e9 if device.type == "npu" else 0.0}, f)',
      "metadata written next to the result; reports 0.0 after the port but the segmentation is unaffected"),
])

E("tf_preproc", "preprocessing/resample_dataset.py", "kernel_rewrite",
  "ToothFairy dataset resampling script using CuPy / cupyx.scipy.ndimage", [
    C("=import cupy as cp", "unsupported_op_workaround", "removal", True, None,
      "CuPy has no Ascend backend (cupy#9379); resampling moves to scipy.ndimage on the host"),
    C("from cupyx.scipy import ndimage as cndi", "unsupported_op_workaround", "replace", True,
      "from scipy import ndimage as cndi",
      "same zoom signature (order, mode, grid_mode); torch trilinear would change the order=3 spline result"),
    C("vol_gpu = cp.asarray(volume)", "unsupported_op_workaround", "replace", True,
      "vol_gpu = np.asarray(volume)", "host array instead of a CuPy device array"),
    C("return cp.asnumpy(out)", "unsupported_op_workaround", "replace", True, "return out",
      "scipy already returns numpy"),
    C("cp.get_default_memory_pool().free_all_blocks()", "unsupported_op_workaround", "removal", True, None,
      "cp no longer exists (NameError)"),
    C("cp.get_default_pinned_memory_pool().free_all_blocks()", "unsupported_op_workaround", "removal", True, None,
      "cp no longer exists (NameError)"),
    C("cp.cuda.Device(args.gpu).use()", "unsupported_op_workaround", "removal", True, None,
      "CuPy device selection; cp no longer exists"),
])

E("tf_launch", "scripts/train_ddp.sh", "explicit_replacement",
  "ToothFairy torchrun launcher (conda env, CUDA_VISIBLE_DEVICES, nvidia-smi)", [
    C("conda activate maxillo", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (library paths) must be loaded before torch_npu can be imported"),
    C("export CUDA_VISIBLE_DEVICES=$GPUS", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=$GPUS",
      "device selection; ignored by the Ascend runtime otherwise, and NGPU is derived from the same list"),
    C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None, "NCCL setting, inert with HCCL"),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None, "NCCL setting, inert with HCCL"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "env_var", "replace", False,
      "npu-smi info",
      "informational print; the script has no `set -e`, so a missing nvidia-smi only prints an error"),
])

# ---------------------------------------------------------------------------------------------
# HierarchialDet (DENTEX panoramic X-ray detection, DiffusionDet on detectron2)
# ---------------------------------------------------------------------------------------------
E("hd_train_net", "train_net.py", "explicit_replacement",
  "ibrahimethemhamamci/DENTEX HierarchialDet train_net.py (DiffusionDet/detectron2 trainer, EMA)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, NPU_IMPORT_NOTE),
    C("from fvcore.nn.precise_bn import get_bn_modules", "unsupported_op_workaround", "npu_only_addition", False,
      "import torchvision_npu  # NPU kernels for nms / roi_align used by detectron2's ROIPooler",
      "without it torchvision's ops have no NPU kernel and would run through the CPU fallback (performance; "
      "unconfirmed for torchvision's own library ops)"),
])

E("hd_config", "configs/diffdet.dentex.swinbase.yaml", "explicit_replacement",
  "ibrahimethemhamamci/DENTEX HierarchialDet configs/diffdet.dentex.swinbase.yaml", [
    C("=MODEL:", "device_type", "npu_only_addition", True, '  DEVICE: "npu"',
      "detectron2's MODEL.DEVICE defaults to 'cuda'; DiffusionDet builds torch.device(cfg.MODEL.DEVICE)"),
    C("ENABLED: True  # fp16 training", "amp", "replace", False, "ENABLED: False  # no NPU AMPTrainer",
      "detectron2's AMPTrainer is written against torch.cuda.amp; on NPU it would at best run fp32 - unconfirmed"),
])

E("hd_detector", "diffusiondet/detector.py", "explicit_replacement",
  "ibrahimethemhamamci/DENTEX HierarchialDet diffusiondet/detector.py (DDIM box sampling, hierarchical heads)", [])

_DEAD = "dead code in this repo: detectron2 drives training/logging, only nested_tensor_from_tensor_list is used"
E("hd_misc", "diffusiondet/util/misc.py", "explicit_replacement",
  "ibrahimethemhamamci/DENTEX HierarchialDet diffusiondet/util/misc.py (DETR misc helpers)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace",
      False, "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')", _DEAD),
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", False,
      'tensor = torch.ByteTensor(storage).to("npu")', _DEAD),
    C('local_size = torch.tensor([tensor.numel()], device="cuda")', "device_type", "replace", False,
      'local_size = torch.tensor([tensor.numel()], device="npu")', _DEAD),
    C('size_list = [torch.tensor([0], device="cuda") for _ in range(world_size)]', "device_type", "replace", False,
      'size_list = [torch.tensor([0], device="npu") for _ in range(world_size)]', _DEAD),
    C('tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="cuda"))', "device_type", "replace",
      False, 'tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="npu"))', _DEAD),
    C('padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="cuda")', "device_type",
      "replace", False, 'padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="npu")',
      _DEAD),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      _DEAD + "; log format only"),
    C("if torch.cuda.is_available():  # also report max mem (MB)", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():  # also report max mem (MB)", _DEAD + "; log only"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))", _DEAD + "; log only"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "args.gpu = args.rank % torch.npu.device_count()", _DEAD),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", False, "torch.npu.set_device(args.gpu)",
      _DEAD),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", False, "args.dist_backend = 'hccl'", _DEAD),
])

# ---------------------------------------------------------------------------------------------
# Panoramic tooth instance segmentation + FDI numbering (torchvision detection references, Mask R-CNN)
# ---------------------------------------------------------------------------------------------
E("pano_train", "train.py", "explicit_replacement",
  "panoramic-radiograph tooth Mask R-CNN repo train.py (torchvision references/detection style)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, NPU_IMPORT_NOTE),
    C("=import torchvision", "unsupported_op_workaround", "npu_only_addition", False, "import torchvision_npu",
      "NPU kernels for roi_align/nms used by Mask R-CNN; otherwise CPU fallback (performance, unconfirmed)"),
    C('parser.add_argument("--device", default="cuda"', "device_type", "replace", True,
      'parser.add_argument("--device", default="npu", type=str, help="device (Use npu or cpu Default: npu)")',
      "the default device string is used by every launch command in the docstring"),
    C("scaler = torch.cuda.amp.GradScaler() if args.amp else None", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler() if args.amp else None",
      "with --amp and autocast running fp16 on the NPU, a disabled CUDA scaler leaves the loss unscaled "
      "(silent gradient underflow)"),
])

E("pano_engine", "engine.py", "explicit_replacement",
  "panoramic-radiograph tooth Mask R-CNN repo engine.py (torchvision references/detection)", [
    C("with torch.cuda.amp.autocast(enabled=scaler is not None):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=scaler is not None):",
      "unchanged training runs fp32 with a (harmless) NPU scaler - performance only"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guards a timing sync; skipping it only skews model_time"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "reached once the guard is ported; torch.cuda.synchronize fails without CUDA"),
])

E("pano_utils", "utils.py", "explicit_replacement",
  "panoramic-radiograph tooth Mask R-CNN repo utils.py (torchvision references/detection utils)", [
    C('t = torch.tensor([self.count, self.total], dtype=torch.float64, device="cuda")', "device_type", "replace",
      True, 't = torch.tensor([self.count, self.total], dtype=torch.float64, device="npu")',
      "called by evaluate() in distributed runs; HCCL needs NPU tensors"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "only adds 'max mem' to the log format"),
    C("memory=torch.cuda.max_memory_allocated() / MB,", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB,", "log only (reports 0 unported, unconfirmed)"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()",
      "SLURM launch path: torch.cuda.device_count() is 0 on an NPU host (ZeroDivisionError)"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "fails without CUDA"),
    C('args.dist_backend = "nccl"', "dist_backend", "replace", True, 'args.dist_backend = "hccl"',
      "NCCL backend is not available with torch_npu"),
])

E("pano_dataset", "datasets/panoramic.py", "explicit_replacement",
  "panoramic-radiograph tooth Mask R-CNN repo datasets/panoramic.py (COCO polygons, FDI labels)", [])

E("pano_env", "environment.yml", "explicit_replacement",
  "panoramic-radiograph tooth Mask R-CNN repo environment.yml (conda pytorch-cuda)", [
    C("=- nvidia", "device_type", "removal", False, None, "channel only needed for pytorch-cuda; inert"),
    C("=- pytorch=1.13.1", "device_type", "removal", True, None,
      "torch_npu needs the PyPI torch wheel of a paired version (moved to the pip section)"),
    C("=- torchvision=0.14.1", "device_type", "removal", True, None,
      "conda torchvision pins the conda pytorch 1.13.1 build; moved to pip"),
    C("=- pytorch-cuda=11.7", "device_type", "removal", True, None, "pulls the CUDA runtime; no NPU meaning"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch==2.1.0",
      "torch from PyPI, paired with torch_npu 2.1.0.postN"),
    C("=- tensorboard", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post12",
      "the Ascend adapter itself"),
    C("albumentations==1.3.0", "import_torch_npu", "npu_only_addition", True, "      - torchvision==0.16.0",
      "torchvision matching torch 2.1.0 (Mask R-CNN)"),
])

E("pano_predict", "predict.py", "explicit_replacement",
  "panoramic-radiograph tooth Mask R-CNN repo predict.py (CUDA-event timing, optional fp16)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, NPU_IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "unchanged inference silently runs on the CPU"),
    C('if args.half and device.type == "cuda":', "device_type", "replace", False,
      'if args.half and device.type == "npu":', "--half is silently ignored otherwise (fp32, correct)"),
    C("starter, ender = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)",
      "torch_cuda_api", "replace", True,
      "starter, ender = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)",
      "CUDA events cannot be recorded on an NPU stream"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "fails without CUDA"),
])

# ---------------------------------------------------------------------------------------------
# DentalSegmentator (nnU-Net v2 CBCT model used by the 3D Slicer extension)
# ---------------------------------------------------------------------------------------------
E("dseg_trainer", "nnunetv2/training/nnUNetTrainer/variants/dental/nnUNetTrainer_DentalSegmentator.py",
  "device_branch_or_abstraction",
  "DentalSegmentator nnU-Net v2 custom trainer (nnUNetTrainer subclass)", [
    C("device: torch.device = torch.device('cuda')):", "device_type", "replace", False,
      "device: torch.device = torch.device('npu')):",
      "default argument; nnUNetv2_train always passes the device explicitly"),
    C('self.grad_scaler = GradScaler("cuda", init_scale=2.0 ** 12)', "amp", "add_branch", True,
      "self.grad_scaler = GradScaler(self.device.type, init_scale=2.0 ** 12) if self.device.type in ('cuda', 'npu') else None",
      "once autocast is enabled for 'npu' the scaler must exist too, otherwise fp16 losses are not scaled"),
    C("=if self.device.type == 'cuda':", "device_type", "add_branch", False,
      "if self.device.type in ('cuda', 'npu'):",
      "batch-size guard for small cards; Ascend cards have >= 32 GB, skipping it is harmless"),
    C("total_gb = torch.cuda.get_device_properties(self.device).total_memory / 1024 ** 3", "torch_cuda_api",
      "replace", True, "total_gb = torch.npu.get_device_properties(self.device).total_memory / 1024 ** 3",
      "reached once the guard includes npu; torch.cuda.get_device_properties rejects an npu device "
      "(total_memory is one of the properties torch_npu provides)"),
    C("with autocast(self.device.type, enabled=True) if self.device.type == 'cuda' else dummy_context():",
      "amp", "add_branch", False,
      "with autocast(self.device.type, enabled=True) if self.device.type in ('cuda', 'npu') else dummy_context():",
      "unchanged the NPU trains in fp32 (correct, slower)"),
    C("with (autocast(self.device.type, enabled=True) if self.device.type == 'cuda' else dummy_context()):",
      "amp", "add_branch", False,
      "with (autocast(self.device.type, enabled=True) if self.device.type in ('cuda', 'npu') else dummy_context()):",
      "validation forward, performance only"),
    C('device: torch.device = torch.device("cuda")):', "device_type", "replace", False,
      'device: torch.device = torch.device("npu")):', "default argument of the 250-epoch variant; never used"),
])

E("dseg_predict", "scripts/run_dentalsegmentator.py", "device_branch_or_abstraction",
  "DentalSegmentator inference script around nnunetv2 nnUNetPredictor", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, NPU_IMPORT_NOTE),
    C('parser.add_argument("--device", default="cuda", choices=["cuda", "cpu", "mps"],', "device_type", "replace",
      True, 'parser.add_argument("--device", default="npu", choices=["npu", "cpu", "mps"],',
      "argparse rejects 'npu' otherwise"),
    C('elif args.device == "cuda":', "device_type", "add_branch", True, 'elif args.device in ("cuda", "npu"):',
      "without the branch an 'npu' request falls through to the else and builds an mps device"),
    C('device = torch.device("cuda")', "device_type", "replace", True, "device = torch.device(args.device)",
      "hard-coded CUDA device inside the accelerator branch"),
])
