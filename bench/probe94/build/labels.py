"""Labels for probe94 (hand-written synthetic upstream files; see ../README.md).

C(sub, kind, change_type, required, ported, note) -> one labelled change; `sub` must match exactly one line
("=text": the stripped line equals text).
E(id, path, style, imitates, changes) -> one file entry.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required,
            "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


R, A, B, X = "replace", "npu_only_addition", "add_branch", "removal"

EXPL, T2N, DEV = "explicit_replacement", "transfer_to_npu", "device_branch_or_abstraction"

ME_NOTE = ("MinkowskiEngine has only CPU and CUDA backends (pybind11 ops dispatching on is_cuda); an NPU "
           "SparseTensor cannot be built. Keep the sparse backbone on CPU (CPU_ONLY build) and move features "
           "to the NPU afterwards, or replace the backbone")
CKPT_NOTE = ("released checkpoint was saved from CUDA tensors; torch.load without map_location tries to restore "
             "them on a CUDA device and raises on a host without CUDA")

# ---------------------------------------------------------------------------------------------------------
# FCGF / DGR (chrischoy, MinkowskiEngine)
# ---------------------------------------------------------------------------------------------------------

E("fcgf_trainer", "lib/trainer.py", DEV,
  "chrischoy/FCGF lib/trainer.py (HardestContrastiveLossTrainer on MinkowskiEngine)", [
    C("checkpoint = torch.load(config.weights)", "tensor_to_device", R, True,
      "checkpoint = torch.load(config.weights, map_location='cpu')", CKPT_NOTE),
    C("if config.use_gpu and not torch.cuda.is_available():", "torch_cuda_api", R, True,
      "if config.use_gpu and not torch.npu.is_available():",
      "on an NPU host torch.cuda.is_available() is False, so use_gpu=True raises ValueError"),
    C("self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", R, True,
      "self.device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "selects CPU on an NPU host"),
    C("state = torch.load(config.resume)", "tensor_to_device", R, False,
      "state = torch.load(config.resume, map_location='cpu')",
      "only fails for resume files written on a CUDA host; NPU-written snapshots load fine"),
    C("=coordinates=input_dict['sinput0_C'].to(self.device))", "custom_cuda_extension", R, True,
      "coordinates=input_dict['sinput0_C'])  # ME stays on CPU", ME_NOTE),
    C("=coordinates=input_dict['sinput1_C'].to(self.device))", "custom_cuda_extension", R, True,
      "coordinates=input_dict['sinput1_C'])  # ME stays on CPU", ME_NOTE),
    C("coordinates=input_dict['sinput0_C'].to(self.device))  # anchor", "custom_cuda_extension", R, True,
      "coordinates=input_dict['sinput0_C'])  # anchor, ME on CPU", ME_NOTE),
    C("coordinates=input_dict['sinput1_C'].to(self.device))  # positive", "custom_cuda_extension", R, True,
      "coordinates=input_dict['sinput1_C'])  # positive, ME on CPU", ME_NOTE),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; NPU cache never released"),
    C("torch.cuda.empty_cache()  # free ME coordinate maps", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # free cached blocks between iterations",
      "silent no-op without CUDA"),
])

E("fcgf_benchmark", "scripts/benchmark_3dmatch.py", EXPL,
  "chrischoy/FCGF scripts/benchmark_3dmatch.py (feature extraction + 3DMatch feature-match recall)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "entry script: torch.npu.* needs torch_npu loaded (explicit import recommended even with autoload)"),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", R, True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')", "selects CPU on an NPU host"),
    C("checkpoint = torch.load(args.model)", "tensor_to_device", R, True,
      "checkpoint = torch.load(args.model, map_location='cpu')", CKPT_NOTE),
    C("device=device,", "custom_cuda_extension", R, True, "device=torch.device('cpu'),  # ME backbone on CPU",
      "util.misc.extract_features builds an ME.SparseTensor on `device`; " + ME_NOTE),
])

E("dgr_core", "core/deep_global_registration.py", DEV,
  "chrischoy/DeepGlobalRegistration core/deep_global_registration.py (FCGF + 6D inlier ConvNet inference)", [
    C("def __init__(self, config, device=torch.device('cuda')):", "device_type", R, True,
      "def __init__(self, config, device=torch.device('npu')):",
      "default device is CUDA; every .to(device) fails on an NPU host"),
    C("state = torch.load(config.weights)", "tensor_to_device", R, True,
      "state = torch.load(config.weights, map_location='cpu')", CKPT_NOTE),
    C("sinput = ME.SparseTensor(feats, coordinates", "custom_cuda_extension", R, True,
      "sinput = ME.SparseTensor(feats.cpu(), coordinates=coords.cpu(), device='cpu')", ME_NOTE),
    C("if not F0.is_cuda:", "device_type", R, True, "if F0.device.type == 'cpu':",
      "NPU features are not is_cuda, so they take the host kd-tree branch, whose .numpy() calls raise on "
      "NPU tensors"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
    C("sinput = ME.SparseTensor(inlier_feats", "custom_cuda_extension", R, True,
      "sinput = ME.SparseTensor(inlier_feats.cpu(), coordinates=coords.cpu(), device='cpu')  # 6D sparse input",
      ME_NOTE),
])

E("dgr_trainer", "core/trainer.py", DEV,
  "chrischoy/DeepGlobalRegistration core/trainer.py (WeightedProcrustesTrainer)", [
    C("if config.use_gpu and not torch.cuda.is_available():", "torch_cuda_api", R, True,
      "if config.use_gpu and not torch.npu.is_available():", "raises ValueError on an NPU host with --use_gpu True"),
    C("self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", R, True,
      "self.device = torch.device('npu' if torch.npu.is_available() else 'cpu')", "selects CPU on an NPU host"),
    C("=device=self.device)", "custom_cuda_extension", R, True, "device='cpu')  # ME on CPU", ME_NOTE),
    C("reg_sinput = ME.SparseTensor(reg_feats.contiguous(), coordinates=reg_coords.int(), device=self.device)",
      "custom_cuda_extension", R, True,
      "reg_sinput = ME.SparseTensor(reg_feats.cpu().contiguous(), coordinates=reg_coords.int().cpu(), device='cpu')",
      ME_NOTE),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "silent no-op without CUDA"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "raises without a CUDA build (lazy CUDA init) in every validation iteration"),
    C("checkpoint = torch.load(config.weights)", "tensor_to_device", R, True,
      "checkpoint = torch.load(config.weights, map_location='cpu')", CKPT_NOTE + " (pretrained FCGF weights)"),
    C("state = torch.load(config.resume)", "tensor_to_device", R, False,
      "state = torch.load(config.resume, map_location='cpu')", "only for resume files written on a CUDA host"),
    C("sinput0 = ME.SparseTensor(iF0, coordinates=iC0, device=self.device)", "custom_cuda_extension", R, True,
      "sinput0 = ME.SparseTensor(iF0, coordinates=iC0, device='cpu')", ME_NOTE),
    C("sinput1 = ME.SparseTensor(iF1, coordinates=iC1, device=self.device)", "custom_cuda_extension", R, True,
      "sinput1 = ME.SparseTensor(iF1, coordinates=iC1, device='cpu')", ME_NOTE),
])

E("dgr_env", "environment.yml", EXPL,
  "DGR / FCGF conda environment.yml (pytorch cuda11.1 build, MinkowskiEngine built with --force_cuda)", [
    C("=- nvidia", "import_torch_npu", X, False, None, "CUDA package channel; dead weight on an NPU host"),
    C("pytorch=1.9.0=py3.8_cuda11.1_cudnn8.0.5_0", "import_torch_npu", R, True,
      "- pip: [torch==2.1.0, torch-npu==2.1.0.post12]",
      "CUDA build of PyTorch; torch_npu needs the matching CPU/aarch64 torch wheel from pip"),
    C("=- torchvision=0.10.0", "import_torch_npu", R, True, "torchvision==0.16.0 (pip)",
      "pinned to the torch 1.9 CUDA build; must follow the torch version torch_npu pairs with"),
    C("=- cudatoolkit=11.1", "import_torch_npu", X, False, None,
      "CUDA runtime is unused on an NPU host (unconfirmed whether it even resolves on aarch64)"),
    C("cudatoolkit-dev=11.1", "import_torch_npu", X, False, None, "nvcc only needed for the CUDA ME build"),
    C('--install-option="--force_cuda"', "custom_cuda_extension", R, True,
      '- git+https://github.com/NVIDIA/MinkowskiEngine.git@v0.5.4 --install-option="--blas=openblas" --install-option="--cpu_only"',
      "--force_cuda compiles the CUDA kernels against torch's CUDA libs, which a CPU+torch_npu torch does not have"),
    C("pykeops==1.5", "custom_cuda_extension", X, False, None,
      "optional GPU kNN; KeOps has no NPU backend (unconfirmed whether its CPU mode is used by the scripts)"),
    C("nvidia-ml-py3==7.352.0", "torch_cuda_api", X, False, None,
      "pynvml has no NPU equivalent (use torch.npu.mem_get_info / npu-smi); logging only"),
    C('TORCH_CUDA_ARCH_LIST: "6.1;7.0;7.5;8.0;8.6"', "env_var", X, False, None, "only read by CUDA builds"),
])

E("dgr_train_sh", "scripts/train_3dmatch.sh", EXPL,
  "DGR scripts/train_3dmatch.sh launch script (env-var hyper-parameters, nvidia-smi log)", [
    C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", R, True, "export ASCEND_RT_VISIBLE_DEVICES=${GPU}",
      "the NPU runtime selects devices through ASCEND_RT_VISIBLE_DEVICES"),
    C("nvidia-smi | tee -a $LOG", "torch_cuda_api", R, False, "npu-smi info | tee -a $LOG",
      "command not found on an NPU host; non-fatal (no set -e), logging only"),
    C("torch.version.cuda, torch.cuda.get_device_name(0)", "torch_cuda_api", R, False,
      "python -c \"import torch, torch_npu; print('torch', torch.__version__, torch.npu.get_device_name(0))\" | tee -a $LOG",
      "raises without CUDA but the script continues; logging only"),
])

# ---------------------------------------------------------------------------------------------------------
# GeoTransformer (qinzheng93)
# ---------------------------------------------------------------------------------------------------------

E("geotr_setup", "setup.py", EXPL,
  "qinzheng93/GeoTransformer setup.py (CUDAExtension wrapping CPU-only KPConv grid-subsampling / radius-neighbour ops)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", R, True,
      "from torch.utils.cpp_extension import BuildExtension, CppExtension",
      "all sources are .cpp, but CUDAExtension still needs CUDA_HOME at build time"),
    C("CUDAExtension(", "custom_cuda_extension", R, True, "CppExtension(",
      "CUDAExtension looks up CUDA_HOME / cudart and fails on an NPU host; the ops run on the host anyway"),
    C("'nvcc': ['-O3', '--expt-relaxed-constexpr'],", "custom_cuda_extension", X, False, None,
      "ignored for .cpp sources; cosmetic"),
    C("os.environ.setdefault('TORCH_CUDA_ARCH_LIST'", "env_var", X, False, None, "only read by CUDA builds"),
])

E("geotr_base_trainer", "geotransformer/engine/base_trainer.py", EXPL,
  "GeoTransformer geotransformer/engine/base_trainer.py (torch.distributed.launch + NCCL, peak-memory logging)", [
    C("=import torch.distributed as dist", "import_torch_npu", A, True, "import torch_npu",
      "torch.npu.* and the hccl backend need torch_npu loaded"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", R, True, "if not torch.npu.is_available():",
      "raises RuntimeError('No CUDA devices available.') on an NPU host"),
    C("torch.cuda.set_device(self.args.local_rank)", "torch_cuda_api", R, True,
      "torch.npu.set_device(self.args.local_rank)", "needs a CUDA build"),
    C("dist.init_process_group(backend='nccl')", "dist_backend", R, True, "dist.init_process_group(backend='hccl')",
      "NCCL is not available on NPU"),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", R, False, "if torch.npu.device_count() > 1:",
      "returns 0 without CUDA; only gates a warning"),
    C("self.autograd_anomaly_detection = autograd_anomaly_detection", "compile_mode", A, False,
      "torch_npu.npu.set_compile_mode(jit_compile=False)",
      "point counts differ per batch (dynamic shapes); msFmkTransplt advises jit_compile=False"),
    C("peak_mem = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", R, False,
      "peak_mem = torch.npu.max_memory_allocated() / 1024 ** 3", "silently reports 0 without CUDA"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device and raises without a CUDA build"),
])

E("geotr_torch_utils", "geotransformer/utils/torch.py", EXPL,
  "GeoTransformer geotransformer/utils/torch.py (to_cuda / release_cuda helpers, seeding)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(seed)",
      "lazily queued and harmless without CUDA; NPU generator seeded by torch.manual_seed anyway"),
    C("x = x.cuda()", "tensor_to_device", R, True, "x = x.npu()", "Tensor.cuda() needs a CUDA build"),
    C("state_dict = torch.load(snapshot)", "tensor_to_device", R, True,
      "state_dict = torch.load(snapshot, map_location='cpu')", CKPT_NOTE),
])

E("geotr_procrustes", "geotransformer/modules/registration/procrustes.py", DEV,
  "GeoTransformer modules/registration/procrustes.py (weighted SVD on the host, results moved back with .cuda())", [
    C("Ut, V = U.transpose(1, 2).cuda(), V.cuda()", "tensor_to_device", R, True,
      "Ut, V = U.transpose(1, 2).to(src_points.device), V.to(src_points.device)",
      ".cuda() after the deliberate host SVD fails on an NPU host"),
    C("eye = torch.eye(3).unsqueeze(0).repeat(batch_size, 1, 1).cuda()", "tensor_to_device", R, True,
      "eye = torch.eye(3, device=src_points.device).unsqueeze(0).repeat(batch_size, 1, 1)", "needs a CUDA build"),
    C("eye[:, -1, -1] = torch.sign(torch.det(V @ Ut))", "unsupported_op_workaround", R, False,
      "eye[:, -1, -1] = torch.linalg.slogdet(V @ Ut)[0]",
      "det (linalg_det / lu) has no NPU kernel in the op lists -> CPU fallback; slogdet has one (fp32). Perf only"),
    C("transform = torch.eye(4).unsqueeze(0).repeat(batch_size, 1, 1).cuda()", "tensor_to_device", R, True,
      "transform = torch.eye(4, device=src_points.device).unsqueeze(0).repeat(batch_size, 1, 1)",
      "needs a CUDA build"),
])

E("geotr_demo", "experiments/geotransformer.3dmatch.stage4.gse.k3.max.oacl.stage2.sinkhorn/demo.py", EXPL,
  "GeoTransformer experiments/*/demo.py (single-pair registration demo)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C("torch.cuda.synchronize()  # wait for the warm-up pass", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # wait for the warm-up pass", "raises without CUDA when --benchmark_runs > 0"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "raises without CUDA when --benchmark_runs > 0"),
    C("model = create_model(cfg).cuda()", "tensor_to_device", R, True, "model = create_model(cfg).npu()",
      "Module.cuda() needs a CUDA build"),
    C("state_dict = torch.load(args.weights)", "tensor_to_device", R, True,
      "state_dict = torch.load(args.weights, map_location='cpu')", CKPT_NOTE),
])

E("geotr_run_sh", "scripts/run_3dmatch.sh", EXPL,
  "GeoTransformer-style train/test/eval launcher (torch.distributed.launch, CUDA_VISIBLE_DEVICES per command)", [
    C("export NCCL_DEBUG=WARN", "env_var", R, False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL variable is ignored by HCCL; cosmetic"),
    C("export NCCL_IB_DISABLE=1", "env_var", X, False, None, "ignored by HCCL"),
    C("CUDA_VISIBLE_DEVICES=${GPUS} python -m torch.distributed.launch", "env_var", R, True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPUS} python -m torch.distributed.launch \\",
      "device selection for the DDP processes"),
    C("CUDA_VISIBLE_DEVICES=${GPU} python test.py", "env_var", R, True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU} python test.py --test_epoch=${EPOCH} --benchmark=${BENCHMARK}",
      "device selection"),
    C("CUDA_VISIBLE_DEVICES=${GPU} python eval.py", "env_var", R, False,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU} python eval.py ... --method=ransac --num_corr=${NUM_CORR}",
      "eval.py only reads saved results on the host; edited for consistency"),
    C("CUDA_VISIBLE_DEVICES=${GPU} python demo.py", "env_var", R, True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU} python demo.py \\", "device selection"),
])

# ---------------------------------------------------------------------------------------------------------
# PREDATOR (prs-eth/OverlapPredator)
# ---------------------------------------------------------------------------------------------------------

E("predator_main", "main.py", EXPL,
  "prs-eth/OverlapPredator main.py (KPConv KPFCNN, gpu_mode config switch)", [
    C("import os, torch, time, shutil", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "lazily queued and harmless without CUDA"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = str(args.gpu)", "env_var", R, True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(args.gpu)", "device selection"),
    C("config.device = torch.device('cuda')", "device_type", R, True, "config.device = torch.device('npu')",
      "gpu_mode: True in every shipped config, so the model and batches go to a CUDA device"),
    C("config.architecture = architectures[config.dataset]", "compile_mode", A, False,
      "torch_npu.npu.set_compile_mode(jit_compile=False)",
      "KPConv stacks have a different point count every batch (dynamic shapes)"),
])

E("predator_trainer", "lib/trainer.py", EXPL,
  "PREDATOR lib/trainer.py (overlap/saliency/circle-loss trainer)", [
    C("state = torch.load(resume)", "tensor_to_device", R, True, "state = torch.load(resume, map_location='cpu')",
      CKPT_NOTE + " (weights/indoor.pth etc. via config.pretrain)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "silent no-op without CUDA"),
    C("torch.cuda.memory_allocated(self.device)", "torch_cuda_api", R, False,
      "message += f'mem: {torch.npu.memory_allocated(self.device) / 1024 ** 2:.0f}MB'",
      "returns 0 without CUDA initialised; logging only"),
])

# ---------------------------------------------------------------------------------------------------------
# Open3D-ML torch pipelines + Open3D tensor reconstruction
# ---------------------------------------------------------------------------------------------------------

E("o3dml_base_pipeline", "ml3d/torch/pipelines/base_pipeline.py", DEV,
  "isl-org/Open3D-ML ml3d/torch/pipelines/base_pipeline.py (convert_device_name + device selection)", [
    C('gpu_names = ["gpu", "cuda"]', "device_type", R, False, 'gpu_names = ["gpu", "cuda", "npu"]',
      "lets users pass --device npu; the default 'cuda' alias keeps working once it maps to npu"),
    C('return "cuda", device_ids_new', "device_type", R, True, 'return "npu", device_ids_new',
      "accelerator name handed to the pipelines"),
    C("device='cuda',", "device_type", R, True, "device='npu',",
      "pipelines built directly in Python use this default; with the unchanged is_available check it "
      "silently runs on CPU"),
    C("if device == 'cpu' or not torch.cuda.is_available():", "torch_cuda_api", R, True,
      "if device == 'cpu' or not torch.npu.is_available():", "NPU host silently falls back to CPU"),
    C("torch.cuda.set_device(self.device)", "torch_cuda_api", R, True, "torch.npu.set_device(self.device)",
      "needs a CUDA build"),
    C("self.device = torch.device('cuda')", "device_type", R, True, "self.device = torch.device('npu')",
      "single-device path"),
])

E("o3dml_semseg", "ml3d/torch/pipelines/semantic_segmentation.py", DEV,
  "Open3D-ML ml3d/torch/pipelines/semantic_segmentation.py (train loop, DDP wrap, checkpoints)", [
    C("device='cuda',", "device_type", R, True, "device='npu',",
      "default used when the pipeline is constructed in Python (docs / notebooks)"),
    C("model.cuda(self.device)", "tensor_to_device", R, True, "model.to(self.device)",
      "Module.cuda() with an npu device raises"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "silent no-op without CUDA"),
])

E("o3dml_run_pipeline", "scripts/run_pipeline.py", DEV,
  "Open3D-ML scripts/run_pipeline.py (mp.spawn multi-GPU launcher)", [
    C("=import torch.multiprocessing as mp", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C("=default='cuda')", "device_type", R, False, "default='npu')",
      "'cuda' keeps working as an alias once convert_device_name maps it to npu"),
    C("=default='nccl')", "dist_backend", R, True, "default='hccl')", "NCCL is not available on NPU"),
    C("if args.device == 'cuda' and len(args.device_ids) > 1:", "device_type", R, True,
      "if args.device == 'npu' and len(args.device_ids) > 1:",
      "after convert_device_name returns 'npu' the multi-device branch would never be taken"),
    C('device = f"cuda:{args.device_ids[local_rank]}"', "device_type", R, True,
      'device = f"npu:{args.device_ids[local_rank]}"', "per-rank device string"),
])

E("o3dml_config", "ml3d/configs/sparseconvunet_scannet.yml", EXPL,
  "Open3D-ML ml3d/configs/sparseconvunet_scannet.yml", [
    C("device: cuda  # device of the voxelization", "device_type", R, False,
      "device: cpu  # open3d.ml ops have no NPU kernels",
      "model-side device for the open3d.ml.torch ops; unconfirmed how they behave on NPU tensors"),
    C("=device: cuda", "device_type", R, False, "device: npu",
      "overridden by run_pipeline's --device; edited for consistency"),
])

E("o3dml_sparseconvunet", "ml3d/torch/models/sparseconvunet.py", EXPL,
  "Open3D-ML ml3d/torch/models/sparseconvunet.py (open3d.ml.torch SparseConv / voxelize ops)", [
    C("from open3d.ml.torch.layers import SparseConv, SparseConvTranspose", "custom_cuda_extension", R, False,
      "from .npu_sparse_conv import SparseConv, SparseConvTranspose",
      "open3d.ml.torch ops ship CPU and CUDA kernels only; unconfirmed whether NPU tensors error out or take "
      "torch_npu's CPU fallback"),
    C("from open3d.ml.torch.ops import voxelize, reduce_subarrays_sum", "custom_cuda_extension", R, False,
      "from .npu_ops import voxelize, reduce_subarrays_sum  # torch.unique / index_add based",
      "as above (unconfirmed)"),
    C('device="cuda",', "device_type", R, False, 'device="npu",', "default only; the pipeline passes its device"),
    C("v = voxelize(", "custom_cuda_extension", R, False, "v = voxelize(  # NPU/torch implementation",
      "open3d.ml op call site (unconfirmed)"),
    C("features_avg[:, 0] = reduce_subarrays_sum(", "custom_cuda_extension", R, False,
      "features_avg[:, 0] = segment_sum(features[:, 0], v.voxel_point_row_splits)",
      "open3d.ml op call site (unconfirmed)"),
    C("features_avg[:, 1] = reduce_subarrays_sum(", "custom_cuda_extension", R, False,
      "features_avg[:, 1] = segment_sum(features[:, 1], v.voxel_point_row_splits)",
      "open3d.ml op call site (unconfirmed)"),
    C("features_avg[:, 2] = reduce_subarrays_sum(", "custom_cuda_extension", R, False,
      "features_avg[:, 2] = segment_sum(features[:, 2], v.voxel_point_row_splits)",
      "open3d.ml op call site (unconfirmed)"),
])

E("o3d_integrate_torch", "examples/python/t_reconstruction_system/integrate_torch.py", EXPL,
  "Open3D examples/python/t_reconstruction_system TSDF integration with a PyTorch fusion-weight net via DLPack", [
    C("=import torch.utils.dlpack", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C("return torch.utils.dlpack.from_dlpack(tensor.to_dlpack())", "tensor_to_device", R, True,
      "return torch.utils.dlpack.from_dlpack(tensor.to_dlpack()).to('npu')",
      "Open3D has no NPU device: the voxel grid lives on CPU:0, so the zero-copy view is a CPU tensor and "
      "must be copied to the NPU for the net"),
    C("return o3c.Tensor.from_dlpack(torch.utils.dlpack.to_dlpack(tensor))", "tensor_to_device", R, True,
      "return o3c.Tensor.from_dlpack(torch.utils.dlpack.to_dlpack(tensor.cpu()))",
      "Open3D cannot import an NPU DLPack capsule"),
    C("o3d.core.cuda.synchronize()  # hashmap lookup", "torch_cuda_api", X, False, None,
      "Open3D CUDA sync; unconfirmed whether it is a no-op in a CPU-only Open3D build"),
    C("o3d.core.cuda.synchronize()  # voxel coordinates", "torch_cuda_api", X, False, None, "as above"),
    C("=o3d.core.cuda.synchronize()", "torch_cuda_api", X, False, None, "as above"),
    C("default='CUDA:0', help='Open3D device'", "device_type", R, True,
      "parser.add_argument('--device', type=str, default='CPU:0', help='Open3D device')",
      "Open3D has no NPU backend; a CUDA:0 VoxelBlockGrid fails on an NPU host"),
    C("weight_net = weight_net.cuda().eval()", "tensor_to_device", R, True, "weight_net = weight_net.npu().eval()",
      "Module.cuda() needs a CUDA build"),
])

# ---------------------------------------------------------------------------------------------------------
# NKSR (nv-tlabs)
# ---------------------------------------------------------------------------------------------------------

E("nksr_ext", "nksr/ext.py", EXPL,
  "nv-tlabs/NKSR-style extension loader (prebuilt nksr._C or JIT cpp_extension.load of .cu sources)", [
    C("major, minor = torch.cuda.get_device_capability()", "device_capability_check", R, True,
      "major, minor = 0, 0  # no SM arch on Ascend", "raises without CUDA; returns None on NPU"),
    C('os.environ["TORCH_CUDA_ARCH_LIST"] = f"{major}.{minor}"', "env_var", X, False, None, "CUDA build only"),
    C("return load(", "custom_cuda_extension", R, True,
      "return NpuExtension-built module (Ascend C kernels) / torch fallback",
      "cpp_extension.load is unsupported on A2/A3 and the sources are .cu kernels needing nvcc"),
    C('assert xyz.is_cuda, "SVH construction only supports CUDA tensors"', "device_type", R, True,
      'assert xyz.device.type == "npu", "SVH construction needs an accelerator tensor"',
      "assertion fails for NPU tensors"),
    C("_CpExt.sparse_grid_build_from_points(", "custom_cuda_extension", R, True,
      "return npu_ops.sparse_grid_build_from_points(xyz.contiguous(), voxel_size, depth)", "CUDA-only binding"),
    C("_CpExt.kernel_evaluate(", "custom_cuda_extension", R, True,
      "return npu_ops.kernel_evaluate(grid, query_xyz, feat, alpha)", "CUDA-only binding"),
    C("_CpExt.build_kernel_gram(", "custom_cuda_extension", R, True,
      "indptr, indices, values = npu_ops.build_kernel_gram(grid, feat.contiguous(), reg)", "CUDA-only binding"),
    C("_CpExt.marching_cubes_sparse(", "custom_cuda_extension", R, True,
      "verts, tris = npu_ops.marching_cubes_sparse(grid, sdf.contiguous(), iso)", "CUDA-only binding"),
    C("_CpExt.pcproc_estimate_normals(", "custom_cuda_extension", R, True,
      "return npu_ops.estimate_normals(xyz.contiguous(), knn, radius)", "CUDA-only binding"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", R, False, "if not torch.npu.is_available():",
      "only affects a descriptive string"),
    C("idx = torch.cuda.current_device()", "torch_cuda_api", R, False, "idx = torch.npu.current_device()",
      "never reached on an NPU host until the check above is ported; descriptive only"),
    C("props = torch.cuda.get_device_properties(idx)", "torch_cuda_api", R, False,
      "props = torch.npu.get_device_properties(idx)", "descriptive only"),
    C('return f"{props.name} (sm_{props.major}{props.minor}', "device_capability_check", R, False,
      'return f"{props.name} ({props.total_memory / 2 ** 30:.1f} GiB)"',
      "NPU device properties carry no major/minor (only name, total_memory, L2_cache_size, cube/vector core num)"),
])

E("nksr_solver", "nksr/solver.py", EXPL,
  "NKSR-style sparse PCG solver (torch CSR matvec, optional cuSPARSE via CuPy)", [
    C("return torch.sparse_csr_tensor(indptr.long(), indices.long(), values, size=(n, n))",
      "unsupported_op_workaround", R, True, "return (indptr.long(), indices.long(), values, n)  # raw CSR buffers",
      "torch.sparse_csr_tensor is marked unsupported (all Ascend products) and no sparse kernels exist on NPU"),
    C("return mat.to_sparse_csr()", "unsupported_op_workaround", R, True,
      "return csr_buffers_from_coo(mat)  # indptr via bincount/cumsum",
      "Tensor.to_sparse_csr is in msFmkTransplt's unsupported list"),
    C("return torch.sparse.mm(A, x.unsqueeze(-1)).squeeze(-1)", "unsupported_op_workaround", R, True,
      "return torch.zeros_like(x).index_add_(0, row_ids, values * x[indices])",
      "no sparse matmul kernel on NPU; sparse ops without kernels raise instead of falling back"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "raises without CUDA when verbose=True"),
])

E("nksr_recons", "examples/recons_waymo.py", T2N,
  "nv-tlabs/NKSR examples/recons_waymo.py (chunked large-scene reconstruction)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "transfer_to_npu covers torch.cuda.mem_get_info / max_memory_allocated and the 'cuda:0' device the "
      "example passes into .to(); the NKSR kernels themselves still need nksr/ext.py ported"),
    C('os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")', "env_var", R, False,
      'os.environ.setdefault("PYTORCH_NPU_ALLOC_CONF", "expandable_segments:True")',
      "allocator setting is ignored on NPU (NPU spelling needs HDK >= 23.0.0); only fragmentation/OOM risk"),
])

E("nksr_requirements", "requirements.txt", EXPL,
  "NKSR requirements.txt (cu118 index, prebuilt nksr / torch-scatter wheels, cupy)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "only CUDA wheels on that index"),
    C("-f https://nksr.huangjh.tech/whl/torch-2.0.0+cu118.html", "custom_cuda_extension", X, False, None,
      "find-links for CUDA-only nksr wheels; harmless once the pin below is changed"),
    C("-f https://data.pyg.org/whl/torch-2.0.0+cu118.html", "custom_cuda_extension", R, False,
      "-f https://data.pyg.org/whl/torch-2.1.0+cpu.html", "only CUDA builds at that link"),
    C("torch==2.0.0+cu118", "import_torch_npu", R, True, "torch==2.1.0\ntorch-npu==2.1.0.post12",
      "CUDA local version; torch_npu needs the matching plain torch wheel"),
    C("torchvision==0.15.1+cu118", "import_torch_npu", R, True, "torchvision==0.16.0", "CUDA build pin"),
    C("nksr==1.0.3+pt20cu118", "custom_cuda_extension", R, True, "# nksr built from source with NPU kernels",
      "prebuilt CUDA-only extension wheel"),
    C("torch-scatter==2.1.1+pt20cu118", "custom_cuda_extension", R, True, "torch-scatter==2.1.2",
      "CUDA wheel tag cannot be installed; a CPU build's C++ ops on NPU tensors are unconfirmed"),
    C("cupy-cuda11x>=12.0", "custom_cuda_extension", X, False, None,
      "CuPy has no Ascend support; solver falls back to the torch backend"),
    C("pykeops==2.1.2", "custom_cuda_extension", X, False, None, "optional GPU kNN (unconfirmed use)"),
    C("nvidia-ml-py>=11.525", "torch_cuda_api", X, False, None, "pynvml has no NPU equivalent; reporting only"),
])

# ---------------------------------------------------------------------------------------------------------
# Neural surface reconstruction (NeuS, instant-nsr-pl, Neuralangelo) and NeuralRecon
# ---------------------------------------------------------------------------------------------------------

E("neus_runner", "exp_runner.py", EXPL,
  "Totoro97/NeuS exp_runner.py (set_default_tensor_type cuda, per-process GPU)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C("self.device = torch.device('cuda')", "device_type", R, True, "self.device = torch.device('npu')",
      "all networks are moved to this device"),
    C("torch.set_default_tensor_type('torch.cuda.FloatTensor')", "device_type", R, True,
      "torch.set_default_device('npu')",
      "needs CUDA; Ascend's API list says set_default_tensor_type does not accept torch.npu.*Tensor, so "
      "use set_default_device"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)",
      "needs a CUDA build"),
])

E("neus_dataset", "models/dataset.py", EXPL,
  "NeuS models/dataset.py (ray sampling; host images, device poses)", [
    C("self.device = torch.device('cuda')", "device_type", R, True, "self.device = torch.device('npu')",
      "camera tensors are moved to this device"),
    C("color, mask[:, :1]], dim=-1).cuda()", "tensor_to_device", R, True,
      "return torch.cat([rays_o.cpu(), rays_v.cpu(), color, mask[:, :1]], dim=-1).npu()",
      "needs a CUDA build"),
    C("rot = torch.from_numpy(pose[:3, :3]).cuda()", "tensor_to_device", R, True,
      "rot = torch.from_numpy(pose[:3, :3]).to(self.device)", "needs a CUDA build"),
    C("trans = torch.from_numpy(pose[:3, 3]).cuda()", "tensor_to_device", R, True,
      "trans = torch.from_numpy(pose[:3, 3]).to(self.device)", "needs a CUDA build"),
])

E("instant_nsr_network_utils", "models/network_utils.py", EXPL,
  "bennyguo/instant-nsr-pl models/network_utils.py (tinycudann HashGrid / FullyFusedMLP, custom_fwd trunc_exp)", [
    C("from torch.cuda.amp import custom_bwd, custom_fwd", "amp", R, True,
      "from torch_npu.npu.amp import custom_bwd, custom_fwd",
      "CUDA custom_fwd(cast_inputs=float32) checks the CUDA autocast state only: under NPU autocast trunc_exp "
      "would run in fp16 (overflow)"),
    C("import tinycudann as tcnn", "custom_cuda_extension", X, True, None,
      "tiny-cuda-nn is CUDA-only (build needs nvcc); use the VanillaMLP / a torch hash grid instead"),
    C("=with torch.cuda.device(get_rank()):", "torch_cuda_api", R, True, "with torch.npu.device(get_rank()):",
      "torch.cuda.device context initialises CUDA and raises"),
    C("self.encoding = tcnn.Encoding(in_channels, encoding_config)", "custom_cuda_extension", R, True,
      "self.encoding = TorchHashGrid(in_channels, encoding_config)", "tcnn op"),
    C("device=get_rank())", "device_type", R, False,
      "self.mask = torch.zeros(self.n_level * self.n_features_per_level, dtype=torch.float32, device=f'npu:{get_rank()}')",
      "an int device ordinal means cuda:N on the torch versions paired with torch_npu 2.1 (unconfirmed for newer)"),
    C("with torch.cuda.device(get_rank()):  # tcnn allocates", "torch_cuda_api", R, True,
      "with torch.npu.device(get_rank()):", "raises without CUDA"),
    C("encoding = tcnn.Encoding(n_input_dims, config_to_primitive(config))", "custom_cuda_extension", R, True,
      "encoding = TorchHashGrid(n_input_dims, config_to_primitive(config))", "tcnn op"),
    C("@torch.cuda.amp.autocast(False)", "amp", R, True, "@torch.autocast('npu', enabled=False)",
      "disables CUDA autocast only; under NPU autocast the MLP that must stay fp32 runs in fp16"),
    C("with torch.cuda.device(get_rank()):  # FullyFusedMLP", "torch_cuda_api", R, True,
      "with torch.npu.device(get_rank()):", "raises without CUDA"),
    C("network = tcnn.Network(n_input_dims, n_output_dims, config_to_primitive(config))", "custom_cuda_extension",
      R, True, "network = VanillaMLP(n_input_dims, n_output_dims, config_to_primitive(config))", "tcnn op"),
    C("with torch.cuda.device(get_rank()):  # fused encoding", "torch_cuda_api", R, True,
      "with torch.npu.device(get_rank()):", "raises without CUDA"),
    C("encoding_with_network = tcnn.NetworkWithInputEncoding(", "custom_cuda_extension", R, True,
      "encoding_with_network = EncodingWithNetwork(get_encoding(...), get_mlp(...))", "tcnn op"),
])

E("instant_nsr_launch", "launch.py", EXPL,
  "instant-nsr-pl launch.py (CUDA_VISIBLE_DEVICES + Lightning Trainer(accelerator='gpu'))", [
    C("os.environ['CUDA_DEVICE_ORDER'] = 'PCI_BUS_ID'", "env_var", X, False, None, "CUDA-only; harmless"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", R, True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu", "device selection"),
    C("=import pytorch_lightning as pl", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C("strategy = 'ddp_find_unused_parameters_false'", "distributed_framework", R, True,
      "strategy = DDPStrategy(find_unused_parameters=False, process_group_backend='hccl')",
      "Lightning picks nccl only for a cuda root device and gloo otherwise; gloo cannot reduce NPU tensors"),
    C("accelerator='gpu',", "device_type", R, True, "accelerator=NPUAccelerator(),",
      "Lightning's 'gpu' accelerator is CUDA (or MPS); needs an NPU accelerator plugin"),
])

E("neuralangelo_dockerfile", "docker/Dockerfile-neuralangelo", EXPL,
  "NVlabs/neuralangelo docker/Dockerfile-neuralangelo (NGC PyTorch base, tiny-cuda-nn from source)", [
    C("FROM nvcr.io/nvidia/pytorch:23.04-py3", "import_torch_npu", R, True,
      "FROM <Ascend CANN + torch + torch_npu base image>", "NGC CUDA image; no CANN / torch_npu"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "nvidia-container-runtime variable; Ascend Docker Runtime mounts devices from ASCEND_VISIBLE_DEVICES "
      "(or --device /dev/davinciN)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics", "env_var", X, False, None, "NVIDIA runtime only"),
    C("ENV TCNN_CUDA_ARCHITECTURES=70;75;80;86", "env_var", X, False, None, "tiny-cuda-nn build only"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0 7.5 8.0 8.6+PTX"', "env_var", X, False, None, "CUDA builds only"),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", R, False,
      "RUN echo 'source /usr/local/Ascend/ascend-toolkit/set_env.sh' >> ~/.bashrc",
      "no CUDA toolkit in the image; the CANN environment script plays that role"),
    C("pip install --no-cache-dir git+https://github.com/NVlabs/tiny-cuda-nn/", "custom_cuda_extension", X, True,
      None, "builds CUDA kernels with nvcc; fails in a CANN image"),
    C("ENV NCCL_P2P_LEVEL=NVL", "env_var", X, False, None, "ignored by HCCL"),
    C("ENV NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "ENV HCCL_ASYNC_ERROR_HANDLING=1",
      "HCCL spelling of the watchdog switch"),
])

E("neuralangelo_trainer", "imaginaire/trainers/base.py", EXPL,
  "NVlabs/neuralangelo imaginaire/trainers/base.py (GradScaler + torch.autocast('cuda'), speed-benchmark timer)", [
    C("=import torch.distributed as dist", "import_torch_npu", A, True, "import torch_npu",
      "library module whose torch.npu.* calls need torch_npu loaded"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "raises without CUDA when cfg.speed_benchmark is on"),
    C("torch.cuda.synchronize()  # include the backward pass", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # include the backward pass", "as above"),
    C("torch.cuda.synchronize()  # include the optimizer step", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # include the optimizer step", "as above"),
    C("torch.cuda.synchronize()  # include model averaging", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # include model averaging", "as above"),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", R, False,
      "from torch_npu.optim import NpuFusedAdam as FusedAdam",
      "only for optim.type == 'fused_adam' (Neuralangelo configs use AdamW); apex FusedAdam has no NPU kernel"),
    C("model = model.to('cuda')", "tensor_to_device", R, True, "model = model.to('npu')", "needs a CUDA build"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", R, True,
      "device_ids=[torch.npu.current_device()],", "raises without CUDA in multi-process runs"),
    C("output_device=torch.cuda.current_device(),", "torch_cuda_api", R, True,
      "output_device=torch.npu.current_device(),", "as above"),
    C("self.scaler = torch.cuda.amp.GradScaler(", "amp", R, True,
      "self.scaler = torch.npu.amp.GradScaler(enabled=self.cfg.trainer.amp_config.enabled)",
      "CUDA GradScaler does not scale NPU losses: fp16 runs without loss scaling"),
    C("torch.cuda.max_memory_allocated() / 2 ** 30", "torch_cuda_api", R, False,
      "print(\"Max memory allocated: {:.2f} GB\".format(torch.npu.max_memory_allocated() / 2 ** 30))",
      "reports 0 without CUDA; logging only"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "silent no-op without CUDA"),
    C("with torch.autocast(device_type='cuda', **amp_kwargs):", "amp", R, True,
      "with torch.autocast(device_type='npu', **amp_kwargs):",
      "CUDA autocast is inactive for NPU tensors: AMP silently off"),
])

E("neuralrecon_main", "main.py", EXPL,
  "zju3dv/NeuralRecon main.py (module-level DDP/DataParallel setup, cuda map_location dicts)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C("torch.cuda.set_device(cfg.LOCAL_RANK)", "torch_cuda_api", R, True, "torch.npu.set_device(cfg.LOCAL_RANK)",
      "needs a CUDA build"),
    C('backend="nccl", init_method="env://"', "dist_backend", R, True, 'backend="hccl", init_method="env://"',
      "NCCL is not available on NPU"),
    C("torch.cuda.manual_seed(cfg.SEED)", "torch_cuda_api", R, False, "torch.npu.manual_seed(cfg.SEED)",
      "lazily queued and harmless without CUDA"),
    C("=model.cuda()", "tensor_to_device", R, True, "model.npu()", "Module.cuda() needs a CUDA build"),
    C("model = torch.nn.DataParallel(model, device_ids=[0])", "distributed_framework", X, True, None,
      "DataParallel is unsupported on Ascend; the single-device path just moves the model"),
    C("model.cuda()  # single-GPU", "tensor_to_device", R, True, "model.npu()  # single device",
      "Module.cuda() needs a CUDA build"),
    C("=map_location = {'cuda:%d' % 0: 'cuda:%d' % cfg.LOCAL_RANK}", "tensor_to_device", R, True,
      "map_location = {'cuda:0': 'npu:%d' % cfg.LOCAL_RANK}",
      "maps CUDA-saved storages to another CUDA device, which does not exist on an NPU host"),
    C("# pretrained weights were saved on cuda:0", "tensor_to_device", R, True,
      "map_location = {'cuda:0': 'npu:%d' % cfg.LOCAL_RANK}", "as above (released NeuralRecon weights)"),
])

# ---------------------------------------------------------------------------------------------------------
# Point Transformer pointops (CUDA-only offset-batched point operators)
# ---------------------------------------------------------------------------------------------------------

_ALLOC = "torch.cuda.*Tensor constructor allocates on the current CUDA device; fails without CUDA"
_OPS = "pointops_cuda kernel has no CPU or NPU implementation"

E("pointops", "lib/pointops/functions/pointops.py", EXPL,
  "Point Transformer lib/pointops/functions/pointops.py as vendored by point-cloud registration repos", [
    C("=import pointops_cuda", "custom_cuda_extension", R, True, "import pointops_npu as pointops_cuda",
      "nvcc-built extension; must be rewritten (Ascend C / torch ops such as cdist+topk)"),
    C("idx = torch.cuda.IntTensor(new_offset[b - 1].item()).zero_()", "torch_cuda_api", R, True,
      "idx = torch.zeros(new_offset[b - 1].item(), dtype=torch.int32, device=xyz.device)", _ALLOC),
    C("tmp = torch.cuda.FloatTensor(n).fill_(1e10)", "torch_cuda_api", R, True,
      "tmp = torch.full((n,), 1e10, device=xyz.device)", _ALLOC),
    C("pointops_cuda.furthestsampling_cuda(", "custom_cuda_extension", R, True,
      "pointops_npu.furthestsampling(b, n_max, xyz, offset, new_offset, tmp, idx)", _OPS),
    C("idx = torch.cuda.IntTensor(m, nsample).zero_()", "torch_cuda_api", R, True,
      "idx = torch.zeros(m, nsample, dtype=torch.int32, device=xyz.device)", _ALLOC),
    C("dist2 = torch.cuda.FloatTensor(m, nsample).zero_()", "torch_cuda_api", R, True,
      "dist2 = torch.zeros(m, nsample, device=xyz.device)", _ALLOC),
    C("pointops_cuda.knnquery_cuda(", "custom_cuda_extension", R, True,
      "idx, dist2 = knn_query_torch(nsample, xyz, new_xyz, offset, new_offset)  # cdist + topk", _OPS),
    C("output = torch.cuda.FloatTensor(m, nsample, c)", "torch_cuda_api", R, True,
      "output = torch.empty(m, nsample, c, device=input.device)", _ALLOC),
    C("pointops_cuda.grouping_forward_cuda(", "custom_cuda_extension", R, True,
      "output = input[idx.view(-1).long()].view(m, nsample, c)", _OPS),
    C("=grad_input = torch.cuda.FloatTensor(n, c).zero_()", "torch_cuda_api", R, True,
      "grad_input = torch.zeros(n, c, device=grad_output.device)", _ALLOC),
    C("pointops_cuda.grouping_backward_cuda(", "custom_cuda_extension", R, True,
      "grad_input.index_add_(0, idx.view(-1).long(), grad_output.reshape(-1, c))", _OPS),
    C("output = torch.cuda.FloatTensor(n, nsample, c).zero_()", "torch_cuda_api", R, True,
      "output = torch.zeros(n, nsample, c, device=input1.device)", _ALLOC),
    C("pointops_cuda.subtraction_forward_cuda(", "custom_cuda_extension", R, True,
      "output = input1.unsqueeze(1) - input2[idx.long()]", _OPS),
    C("grad_input1 = torch.cuda.FloatTensor(n, c).zero_()", "torch_cuda_api", R, True,
      "grad_input1 = torch.zeros(n, c, device=grad_output.device)", _ALLOC),
    C("grad_input2 = torch.cuda.FloatTensor(n, c).zero_()", "torch_cuda_api", R, True,
      "grad_input2 = torch.zeros(n, c, device=grad_output.device)", _ALLOC),
    C("pointops_cuda.subtraction_backward_cuda(", "custom_cuda_extension", R, True,
      "grad_input1 = grad_output.sum(1); grad_input2.index_add_(0, idx.view(-1).long(), -grad_output.reshape(-1, c))",
      _OPS),
    C("new_feat = torch.cuda.FloatTensor(new_xyz.shape[0], feat.shape[1]).zero_()", "torch_cuda_api", R, True,
      "new_feat = torch.zeros(new_xyz.shape[0], feat.shape[1], device=feat.device)", _ALLOC),
])
