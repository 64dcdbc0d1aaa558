"""Labels for probe223 (structure-based drug design / docking / molecular diffusion code, CUDA -> Ascend NPU).

One entry per upstream file; one C(...) per line a careful porter would edit.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---------------------------------------------------------------- DiffDock
E("dd_inference", "inference.py", "device_branch_or_abstraction",
  "DiffDock inference.py (score + confidence model, reverse diffusion over ligand poses)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script: registers the 'npu' device (mandatory before torch_npu 2.5.1 autoload, harmless after)"),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "torch.cuda.is_available() is False on an Ascend host, so the whole docking run silently falls back to CPU"),
])

E("dd_inference_utils", "utils/inference_utils.py", "device_branch_or_abstraction",
  "DiffDock utils/inference_utils.py (ESM-2 embeddings, ESMFold structure generation, InferenceDataset)", [
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "guard for moving ESM tokens; False on NPU host while the model was moved (see below) -> must follow the NPU check"),
    C('toks = toks.to(device="cuda", non_blocking=True)', "tensor_to_device", "replace", True,
      'toks = toks.to(device="npu", non_blocking=True)',
      "hard-coded 'cuda' device string for the ESM token batch"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "OOM-retry path for ESMFold: torch.cuda.empty_cache is a silent no-op without CUDA; NPU cache is not released"),
    C("if torch.cuda.is_available():  # ESM2-650M", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():  # ESM2-650M is painfully slow on CPU",
      "False on NPU host: ESM-2 650M silently stays on CPU"),
    C("model = model.cuda()", "tensor_to_device", "replace", True,
      "model = model.npu()",
      "Module.cuda() fails without CUDA"),
    C("model = model.eval().cuda()", "tensor_to_device", "replace", True,
      "model = model.eval().npu()",
      "ESMFold moved unconditionally to CUDA; raises on an NPU host"),
])

E("dd_esm_extract", "datasets/esm_embeddings_extract.py", "device_branch_or_abstraction",
  "fair-esm scripts/extract.py as vendored by DiffDock for ESM-2 per-residue embeddings", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "stand-alone entry script; needs the npu backend registered"),
    C("use_gpu = torch.cuda.is_available() and not args.nogpu", "torch_cuda_api", "replace", True,
      "use_gpu = torch.npu.is_available() and not args.nogpu",
      "False on an Ascend host: the 650M ESM-2 model silently runs on CPU"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
      "Module.cuda() has no CUDA device to go to"),
    C('toks = toks.to(device="cuda", non_blocking=True)', "tensor_to_device", "replace", True,
      'toks = toks.to(device="npu", non_blocking=True)',
      "hard-coded 'cuda' device string"),
])

E("dd_score_model", "models/score_model.py", "explicit_replacement",
  "DiffDock models/score_model.py (e3nn tensor-product score model with torch_cluster radius graphs)", [
    C("from torch_cluster import radius, radius_graph", "unsupported_op_workaround", "replace", False,
      "from utils.npu_graph import radius, radius_graph  # cdist-based, keeps tensors on the NPU",
      "unconfirmed: torch_cluster ships only CPU/CUDA kernels (its CPU path asserts CPU tensors), nothing in the "
      "knowledge base says it runs on NPU tensors; call sites stay as they are once the import points at a "
      "torch-only implementation"),
])

E("dd_train", "train.py", "device_branch_or_abstraction",
  "DiffDock train.py (score-model training loop with EMA, inference-based early stopping)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script"),
    C("device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type", "replace", True,
      "device = torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
      "module-level device used by train(); CUDA check is False on NPU host -> silent CPU training"),
])

E("dd_utils", "utils/utils.py", "device_branch_or_abstraction",
  "DiffDock utils/utils.py (get_model with PyG DataParallel, optimizer/scheduler, EMA, RMSD helpers)", [
])

E("dd_env", "environment.yml", "explicit_replacement",
  "DiffDock environment.yml (conda + pip, PyG wheels for pt113cu117)", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None,
      "channel only serves CUDA runtime packages; harmless once pytorch-cuda is gone"),
    C("- pytorch=1.13.1", "torch_cuda_api", "replace", True,
      "- pytorch=2.1.0=*cpu*",
      "no torch_npu release pairs with torch 1.13; torch_npu needs the CPU build of a supported torch (2.1.0 here)"),
    C("- pytorch-cuda=11.7", "torch_cuda_api", "removal", True, None,
      "forces the CUDA build of pytorch, which torch_npu is not built against (and has no aarch64 build)"),
    C("- torchvision=0.14.1", "torch_cuda_api", "replace", True,
      "- torchvision=0.16.0=*cpu*",
      "CUDA build pinned to torch 1.13; must follow the torch pin"),
    C("- cudatoolkit=11.7", "torch_cuda_api", "removal", False, None,
      "dead weight on an Ascend host; whether it even resolves on aarch64 is unconfirmed"),
    C("--extra-index-url https://download.pytorch.org/whl/cu117", "torch_cuda_api", "replace", True,
      "- --extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; x86 Ascend hosts take CPU torch from whl/cpu"),
    C("--find-links https://pytorch-geometric.com/whl/torch-1.13.1+cu117.html", "custom_cuda_extension", "replace", True,
      "- --find-links https://data.pyg.org/whl/torch-2.1.0+cpu.html",
      "PyG extension wheels compiled against CUDA torch 1.13"),
    C("- torch-cluster==1.6.0+pt113cu117", "custom_cuda_extension", "replace", True,
      "- torch-cluster==1.6.3+pt21cpu",
      "CUDA-compiled extension; will not load against CPU torch"),
    C("- torch-geometric==2.2.0", "import_torch_npu", "npu_only_addition", True,
      "- torch-npu==2.1.0.post10",
      "add the torch_npu wheel matching torch 2.1.0 (CANN 8.0.0 per the compatibility table)"),
    C("- torch-scatter==2.1.0+pt113cu117", "custom_cuda_extension", "replace", True,
      "- torch-scatter==2.1.2+pt21cpu", "CUDA-compiled extension"),
    C("- torch-sparse==0.6.16+pt113cu117", "custom_cuda_extension", "replace", True,
      "- torch-sparse==0.6.18+pt21cpu", "CUDA-compiled extension"),
    C("- torch-spline-conv==1.2.1+pt113cu117", "custom_cuda_extension", "replace", True,
      "- torch-spline-conv==1.2.2+pt21cpu", "CUDA-compiled extension"),
    C("- openfold @ git+", "custom_cuda_extension", "removal", False, None,
      "unconfirmed: openfold's setup builds its CUDA attention kernel with nvcc; only needed for ESMFold when no "
      "protein structure is given, so drop it (or build without the kernel) on Ascend"),
])

E("dd_docker", "Dockerfile", "explicit_replacement",
  "DiffDock Dockerfile (two-stage nvidia/cuda image with micromamba env)", [
    C("FROM nvidia/cuda:11.7.1-devel-ubuntu22.04 as builder", "torch_cuda_api", "replace", False,
      "FROM quay.io/ascend/cann:8.3.rc1-910b-ubuntu22.04-py3.11 as builder",
      "build stage only needs an OS to solve the env; CUDA devel image is unnecessary but not fatal"),
    C("FROM nvidia/cuda:11.7.1-runtime-ubuntu22.04", "torch_cuda_api", "replace", True,
      "FROM quay.io/ascend/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "runtime stage has no CANN libraries, so import torch_npu fails (libhccl.so / libascendcl.so not found)"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False,
      "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "only read by the NVIDIA container runtime; NPUs are mounted by Ascend Docker Runtime (value form unconfirmed)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container runtime setting, meaningless on Ascend"),
])

# ---------------------------------------------------------------- TargetDiff
E("td_train", "scripts/train_diffusion.py", "device_branch_or_abstraction",
  "TargetDiff scripts/train_diffusion.py (ScorePosNet3D training on CrossDocked)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("parser.add_argument('--device', type=str, default='cuda')", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, default='npu')",
      "default device string; everything else follows args.device"),
])

E("td_sample", "scripts/sample_diffusion.py", "device_branch_or_abstraction",
  "TargetDiff scripts/sample_diffusion.py (per-pocket ligand sampling)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("def sample_diffusion_ligand(model, data, num_samples, batch_size=16, device='cuda:0',", "device_type", "replace", False,
      "def sample_diffusion_ligand(model, data, num_samples, batch_size=16, device='npu:0',",
      "default only; every caller in the repo passes device=args.device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; the NPU caching allocator keeps its blocks (memory pressure only)"),
    C("parser.add_argument('--device', type=str, default='cuda:0')", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, default='npu:0')",
      "default device string, also used as torch.load map_location"),
])

E("td_model", "models/molopt_score_model.py", "device_branch_or_abstraction",
  "TargetDiff models/molopt_score_model.py (joint position / atom-type diffusion)", [
])

E("td_unitrans", "models/uni_transformer.py", "explicit_replacement",
  "TargetDiff models/uni_transformer.py (UniTransformerO2 with kNN graphs and scatter_softmax attention)", [
    C("from torch_geometric.nn import radius_graph, knn_graph", "unsupported_op_workaround", "replace", False,
      "from models.npu_graph_ops import radius_graph, knn_graph  # topk/cdist versions",
      "unconfirmed: PyG's radius_graph/knn_graph dispatch to torch_cluster CPU/CUDA kernels; no NPU kernel known"),
    C("from torch_scatter import scatter_softmax, scatter_sum", "unsupported_op_workaround", "replace", False,
      "from models.npu_graph_ops import scatter_softmax, scatter_sum  # scatter_add/index-based",
      "unconfirmed: scatter_softmax goes through torch_scatter's compiled scatter_max; the native "
      "alternative scatter_reduce has no NPU kernel in the 2.1/2.7/2.9 op lists (CPU fallback)"),
])

E("td_batch_sh", "scripts/batch_sample_diffusion.sh", "explicit_replacement",
  "TargetDiff scripts/batch_sample_diffusion.sh (one sampling worker per GPU)", [
    C("#!/bin/bash", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before python imports torch_npu"),
    C("export CUDA_VISIBLE_DEVICES=${NODE_THIS}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${NODE_THIS}",
      "ignored on Ascend: every worker would see all NPUs and pile onto npu:0"),
    C("--device cuda:0", "device_type", "replace", True,
      "python -m scripts.sample_diffusion ${CONFIG_FILE} -i ${i} --batch_size ${BATCH_SIZE} --result_path ${RESULT_PATH} --device npu:0",
      "device string passed on the command line"),
    C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", False,
      "npu-smi info > ${RESULT_PATH}/npu_mem_worker${NODE_THIS}.txt || true",
      "nvidia-smi does not exist on an Ascend host; '|| true' hides the failure, only the memory log is lost"),
])

# ---------------------------------------------------------------- Pocket2Mol
E("p2m_train", "train.py", "device_branch_or_abstraction",
  "Pocket2Mol train.py (MaskFillModelVN training; device taken from config.train.device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("if config.train.device.startswith('cuda') and not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if config.train.device.startswith('npu') and not torch.npu.is_available():",
      "availability guard; once the config says npu it is simply skipped, so only the fallback is lost"),
    C("if config.train.device.startswith('cuda'):", "device_type", "replace", False,
      "if config.train.device.startswith('npu'):",
      "peak-memory logging silently disappears on npu"),
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "writer.add_scalar('val/max_mem_gb', torch.npu.max_memory_allocated() / 1024 ** 3, it)",
      "goes with the guard above; CUDA stats would read 0 on an NPU host"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "OOM-skip path; silent no-op without CUDA"),
])

E("p2m_config", "configs/train.yml", "device_branch_or_abstraction",
  "Pocket2Mol configs/train.yml", [
    C("device: cuda", "device_type", "replace", True, "device: npu",
      "config.train.device feeds model.to() and batch.to(); with 'cuda' the run falls back to CPU"),
])

E("p2m_sample", "sample.py", "device_branch_or_abstraction",
  "Pocket2Mol sample.py (beam-search atom-by-atom generation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("parser.add_argument('--device', type=str, default='cuda')", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, default='npu')",
      "default device; also the torch.load map_location"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
])

E("p2m_env", "env_cuda113.yml", "explicit_replacement",
  "Pocket2Mol env_cuda113.yml (fully pinned conda export, torch 1.11 + cu113)", [
    C("- cudatoolkit=11.3.1=h2bc3f7f_2", "torch_cuda_api", "removal", False, None,
      "CUDA runtime package, not used on Ascend"),
    C("- pyg=2.0.4=py38_torch_1.11.0_cu113", "custom_cuda_extension", "replace", True,
      "- pyg=2.0.4=py38_torch_1.11.0_cpu",
      "cu113 build pulls the CUDA pytorch variant"),
    C("- pytorch=1.11.0=py3.8_cuda11.3_cudnn8.2.0_0", "torch_cuda_api", "replace", True,
      "- pytorch=1.11.0=py3.8_cpu_0",
      "torch_npu 1.11.0 is built against the CPU build of torch 1.11.0"),
    C("- pytorch-cluster=1.6.0=py38_torch_1.11.0_cu113", "custom_cuda_extension", "replace", True,
      "- pytorch-cluster=1.6.0=py38_torch_1.11.0_cpu", "CUDA-compiled extension"),
    C("- pytorch-mutex=1.0=cuda", "torch_cuda_api", "replace", True, "- pytorch-mutex=1.0=cpu",
      "mutex package that forces the CUDA variant of every pytorch-channel package"),
    C("- pytorch-scatter=2.0.9=py38_torch_1.11.0_cu113", "custom_cuda_extension", "replace", True,
      "- pytorch-scatter=2.0.9=py38_torch_1.11.0_cpu", "CUDA-compiled extension"),
    C("- pytorch-sparse=0.6.13=py38_torch_1.11.0_cu113", "custom_cuda_extension", "replace", True,
      "- pytorch-sparse=0.6.13=py38_torch_1.11.0_cpu", "CUDA-compiled extension"),
    C("- pytorch-spline-conv=1.2.1=py38_torch_1.11.0_cu113", "custom_cuda_extension", "replace", True,
      "- pytorch-spline-conv=1.2.1=py38_torch_1.11.0_cpu", "CUDA-compiled extension"),
    C("- tensorboardx==2.5", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==1.11.0.post14",
      "torch_npu wheel for torch 1.11.0 (Python 3.8 is supported for 1.11)"),
])

# ---------------------------------------------------------------- EDM / GeoLDM
E("edm_main", "main_qm9.py", "device_branch_or_abstraction",
  "EDM (e3_diffusion_for_molecules) main_qm9.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("args.cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "args.cuda = not args.no_cuda and torch.npu.is_available()",
      "False on an Ascend host -> training silently on CPU"),
    C('device = torch.device("cuda" if args.cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if args.cuda else "cpu")', "device string"),
    C("flow_state_dict = torch.load(join(args.resume, 'flow.npy'))", "tensor_to_device", "replace", True,
      "flow_state_dict = torch.load(join(args.resume, 'flow.npy'), map_location=device)",
      "GPU-trained checkpoints hold CUDA tensors; without map_location torch.load tries to restore them on CUDA and raises"),
    C("optim_state_dict = torch.load(join(args.resume, 'optim.npy'))", "tensor_to_device", "replace", True,
      "optim_state_dict = torch.load(join(args.resume, 'optim.npy'), map_location=device)",
      "same: optimizer state saved from CUDA"),
    C("=if args.dp and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
      "if args.dp and torch.npu.device_count() > 1:",
      "reads 0 on an NPU host, so the DP block is skipped and training runs on one NPU; only worth changing together "
      "with replacing nn.DataParallel (not supported on NPU) by DDP"),
    C("print(f'Training using {torch.cuda.device_count()} GPUs')", "torch_cuda_api", "replace", False,
      "print(f'Training using {torch.npu.device_count()} NPUs')", "log line inside the DP block"),
    C("model_dp = torch.nn.DataParallel(model.cpu())", "distributed_framework", "replace", False,
      "model_dp = model  # nn.DataParallel is unsupported on Ascend; multi-NPU needs DDP over hccl",
      "torch.nn.DataParallel is ✘ in Ascend's API list; unreachable on NPU as long as the guard reads CUDA"),
    C("model_dp = model_dp.cuda()", "tensor_to_device", "replace", False, "model_dp = model_dp.npu()",
      "inside the (unreachable on NPU) DP block"),
    C("keep the EMA copy on the same devices", "torch_cuda_api", "replace", False,
      "if args.dp and torch.npu.device_count() > 1:  # keep the EMA copy on the same devices",
      "same guard for the EMA copy"),
    C("model_ema_dp = torch.nn.DataParallel(model_ema)", "distributed_framework", "replace", False,
      "model_ema_dp = model_ema  # no nn.DataParallel on Ascend",
      "DataParallel unsupported on NPU"),
])

E("edm_diffusion", "equivariant_diffusion/en_diffusion.py", "device_branch_or_abstraction",
  "EDM equivariant_diffusion/en_diffusion.py (EnVariationalDiffusion, noise schedules)", [
])

E("edm_egnn", "egnn/models.py", "device_branch_or_abstraction",
  "EDM egnn/models.py (EGNN_dynamics_QM9 with cached fully-connected edge lists)", [
])

E("geoldm_train_test", "train_test.py", "device_branch_or_abstraction",
  "GeoLDM / EDM train_test.py (train_epoch, test, sampling and stability analysis)", [
    C('torch.cuda.max_memory_allocated(device)', "torch_cuda_api", "replace", True,
      'wandb.log({"GPU peak memory (GB)": torch.npu.max_memory_allocated(device) / 2 ** 30}, commit=False)',
      "args.cuda is True on NPU once main_qm9 is ported; the CUDA allocator has no stats there (reads 0) or rejects the npu device"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(device)",
      "torch.cuda resolves the device index first and raises for an npu device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; NPU cache stays reserved between sampling batches"),
])

E("edm_eval", "eval_analyze.py", "device_branch_or_abstraction",
  "EDM eval_analyze.py (sample, stability/validity metrics, test NLL)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("args.cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "args.cuda = not args.no_cuda and torch.npu.is_available()",
      "False on an Ascend host -> evaluation silently on CPU"),
    C('device = torch.device("cuda" if args.cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if args.cuda else "cpu")', "device string"),
])

# ---------------------------------------------------------------- EquiBind
E("eb_train", "train.py", "device_branch_or_abstraction",
  "EquiBind train.py (config-driven trainer for IEGMN)", [
    C("=import re", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "torch only arrives through star imports further down; add the npu backend at the top of the entry script"),
    C("p.add_argument('--device', type=str, default='cuda', help='What device to train on: cuda or cpu')", "device_type", "replace", True,
      "p.add_argument('--device', type=str, default='npu', help='What device to train on: npu or cpu')",
      "the device check below compares against this string"),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() and args.device == \'cuda\' else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if torch.npu.is_available() and args.device == \'npu\' else "cpu")',
      "CUDA availability + 'cuda' string compare: silently CPU on an Ascend host"),
    C("=pin_memory=torch.cuda.is_available())", "pin_memory", "replace", False,
      "pin_memory=torch.npu.is_available())",
      "False on NPU host, so pinning is silently off (performance only)"),
    C("pin_memory=torch.cuda.is_available(), num_workers=0)", "pin_memory", "replace", False,
      "pin_memory=torch.npu.is_available(), num_workers=0)",
      "same, second loader"),
])

E("eb_utils", "commons/utils.py", "device_branch_or_abstraction",
  "EquiBind commons/utils.py (seeding, graph/tensor moves, logging helpers)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "queued no-op without CUDA; torch.manual_seed above should already seed the npu generator (unconfirmed)"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if not torch.npu.is_available():",
      "debug helper silently returns without reporting on an NPU host"),
    C("allocated = torch.cuda.memory_allocated() / 2 ** 20", "torch_cuda_api", "replace", False,
      "allocated = torch.npu.memory_allocated() / 2 ** 20", "memory report helper"),
    C("reserved = torch.cuda.memory_reserved() / 2 ** 20", "torch_cuda_api", "replace", False,
      "reserved = torch.npu.memory_reserved() / 2 ** 20", "memory report helper"),
])

# ---------------------------------------------------------------- Uni-Core / Uni-Mol
E("uc_setup", "setup.py", "kernel_rewrite",
  "Uni-Core setup.py (apex-style CUDAExtension build of fused Adam/LayerNorm/softmax-dropout kernels)", [
    C("=if not torch.cuda.is_available():", "custom_cuda_extension", "replace", True,
      "if not torch.cuda.is_available() and CUDA_HOME is not None:",
      "on an NPU host this enters the cross-compile branch and calls nvcc via CUDA_HOME=None -> TypeError, so "
      "pip install fails before any package is built"),
    C('if os.environ.get("UNICORE_NO_CUDA_EXT", "0") != "1":', "custom_cuda_extension", "replace", False,
      'if os.environ.get("UNICORE_NO_CUDA_EXT", "0") != "1" and CUDA_HOME is not None:',
      "otherwise raises 'Nvcc was not found'; can also be side-stepped by installing with UNICORE_NO_CUDA_EXT=1. "
      "The kernels themselves are left unported: Python fallbacks exist (HAS_* flags)"),
])

E("uc_layernorm", "unicore/modules/layer_norm.py", "device_branch_or_abstraction",
  "Uni-Core unicore/modules/layer_norm.py (fused LayerNorm with F.layer_norm fallback)", [
])

E("uc_dist", "unicore/distributed/utils.py", "explicit_replacement",
  "Uni-Core unicore/distributed/utils.py (fairseq-style init, spawn, all_gather_list)", [
    C("torch.cuda.device_count(), args.distributed_world_size", "torch_cuda_api", "replace", True,
      "torch.npu.device_count(), args.distributed_world_size",
      "reads 0 on an NPU host -> zero processes to spawn"),
    C("gpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "gpus_per_node = torch.npu.device_count()", "Slurm rank/world-size arithmetic would be 0"),
    C("args.distributed_world_size <= torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.distributed_world_size <= torch.npu.device_count()", "assert fails on every multi-NPU single-node run"),
    C("available devices", "torch_cuda_api", "replace", False,
      '), f"world size is {args.distributed_world_size} but have {torch.npu.device_count()} available devices"',
      "assert message only"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "warm-up all-reduce is skipped on NPU; HCCL initialises lazily anyway"),
    C("dist.all_reduce(torch.zeros(1).cuda())", "tensor_to_device", "replace", False,
      "dist.all_reduce(torch.zeros(1).npu())",
      "goes with the guard above; only reached once that is ported"),
    C("if torch.cuda.is_available() and not args.cpu:", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and not args.cpu:",
      "without it set_device is skipped and every rank lands on npu:0"),
    C("torch.cuda.set_device(args.device_id)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.device_id)", "per-rank device binding"),
    C("=torch.cuda.device_count(),", "torch_cuda_api", "replace", True,
      "torch.npu.device_count(),", "spawn nprocs would be 0"),
    C("all_gather_list._buffer = torch.cuda.ByteTensor(buffer_size)", "torch_cuda_api", "replace", True,
      'all_gather_list._buffer = torch.empty(buffer_size, dtype=torch.uint8, device="npu")',
      "legacy CUDA tensor type; raises without CUDA and the buffer must sit on the HCCL device"),
    C("all_gather_list._cpu_buffer = torch.ByteTensor(max_size).pin_memory()", "pin_memory", "replace", False,
      'all_gather_list._cpu_buffer = torch.ByteTensor(max_size).pin_memory(device="npu")',
      "unconfirmed: whether a bare pin_memory() picks the NPU host allocator without transfer_to_npu"),
])

E("uc_options", "unicore/options.py", "explicit_replacement",
  "Uni-Core unicore/options.py (argparse groups for training/distributed/fp16)", [
    C("if args.bf16 and not torch.cuda.is_bf16_supported():", "device_capability_check", "replace", True,
      "if args.bf16 and not torch.npu.is_bf16_supported():",
      "--bf16 on an Ascend host hits the CUDA lazy-init and fails"),
    C("=default=max(1, torch.cuda.device_count()),", "torch_cuda_api", "replace", True,
      "default=max(1, torch.npu.device_count()),",
      "default world size silently 1 on NPU when not launched through torch.distributed.launch"),
    C("group.add_argument('--distributed-backend', default='nccl', type=str,", "dist_backend", "replace", True,
      "group.add_argument('--distributed-backend', default='hccl', type=str,",
      "NCCL backend does not exist on Ascend"),
    C("'--nprocs-per-node', default=max(1, torch.cuda.device_count())", "torch_cuda_api", "replace", False,
      "group.add_argument('--nprocs-per-node', default=max(1, torch.npu.device_count()), type=int,",
      "default only; consumer is the no_c10d path (unconfirmed how much it matters)"),
])

E("uc_trainer", "unicore/trainer.py", "explicit_replacement",
  "Uni-Core unicore/trainer.py (fairseq-derived Trainer: fp16/bf16, OOM recovery, memory stats)", [
    C("self.cuda = torch.cuda.is_available() and not args.cpu", "torch_cuda_api", "replace", True,
      "self.cuda = torch.npu.is_available() and not args.cpu",
      "False on NPU host -> the whole trainer runs on CPU"),
    C('self.device = torch.device("cuda")', "device_type", "replace", True,
      'self.device = torch.device("npu")', "device string"),
    C("self._grad_norm_buf = torch.cuda.DoubleTensor(self.data_parallel_world_size)", "torch_cuda_api", "replace", True,
      "self._grad_norm_buf = torch.zeros(self.data_parallel_world_size, dtype=torch.float32, device=self.device)",
      "legacy CUDA tensor type raises without CUDA; fp64 is not supported on NPU anyway"),
    C("if self.cuda and torch.cuda.get_device_capability(0)[0] < 7:", "device_capability_check", "replace", True,
      'if self.cuda and self.device.type == "cuda" and torch.cuda.get_device_capability(0)[0] < 7:',
      "self.cuda is True on NPU after the port, so this queries CUDA and raises"),
    C("if self.cuda and torch.cuda.get_device_capability(0)[0] >= 7:", "device_capability_check", "replace", True,
      'if self.cuda and self.device.type == "cuda" and torch.cuda.get_device_capability(0)[0] >= 7:',
      "same for the fp32 branch"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "after-first-step cache flush: silent no-op"),
    C("torch.cuda.empty_cache()  # give back", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # give back what the failed step held",
      "OOM recovery: silent no-op, so recovery is less likely to succeed"),
    C("grad_norm = torch.tensor(0.0).cuda()", "tensor_to_device", "replace", True,
      "grad_norm = torch.tensor(0.0).to(self.device)",
      "fp16 overflow path (frequent with --fp16) would raise"),
    C("torch.cuda.empty_cache()  # --empty-cache-freq", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # --empty-cache-freq", "silent no-op"),
    C("gb_used = torch.cuda.max_memory_allocated() / 1024 / 1024 / 1024", "torch_cuda_api", "replace", True,
      "gb_used = torch.npu.max_memory_allocated() / 1024 / 1024 / 1024",
      "reached on NPU (self.cuda True); CUDA stats are empty so gb_free is wrong"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "resolves the current CUDA device -> raises without CUDA"),
    C('metrics.log_scalar("gb_free", torch.cuda.get_device_properties(0)', "torch_cuda_api", "replace", True,
      'metrics.log_scalar("gb_free", torch.npu.get_device_properties(0).total_memory / 1024 ** 3 - gb_used, priority=1500, round=1, weight=0)',
      "get_device_properties on CUDA raises; NPU properties do carry total_memory"),
    C("sample = utils.move_to_cuda(sample)", "tensor_to_device", "replace", True,
      "sample = utils.move_to_cuda(sample, device=self.device)",
      "move_to_cuda defaults to torch.cuda.current_device()"),
    C('if torch.cuda.is_available() and hasattr(torch.cuda, "memory_summary"):', "torch_cuda_api", "replace", False,
      'if torch.npu.is_available() and hasattr(torch.npu, "memory_summary"):',
      "OOM diagnostics silently skipped"),
    C("for device_idx in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", False,
      "for device_idx in range(torch.npu.device_count()):", "OOM diagnostics"),
    C("logger.warning(torch.cuda.memory_summary(device=device_idx))", "torch_cuda_api", "replace", False,
      "logger.warning(torch.npu.memory_summary(device=device_idx))", "OOM diagnostics"),
])

E("uc_utils", "unicore/utils.py", "explicit_replacement",
  "Uni-Core unicore/utils.py (move_to_cuda, multi-tensor grad norm, seeding, CudaEnvironment)", [
    C("device = device or torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "device = device or torch.npu.current_device()",
      "raises without CUDA when callers (e.g. infer scripts) omit the device"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed)",
      "queued no-op without CUDA; torch.manual_seed should cover the npu generator (unconfirmed)"),
    C("cuda_state = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True,
      "cuda_state = torch.npu.get_rng_state()", "CUDA RNG query initialises CUDA and raises"),
    C("torch.cuda.set_rng_state(cuda_state)", "torch_cuda_api", "replace", True,
      "torch.npu.set_rng_state(cuda_state)", "restore must target the same generator"),
    C("cur_device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "cur_device = torch.npu.current_device()",
      "CudaEnvironment is built by the trainer whenever self.cuda is set, which is True on NPU after the port"),
    C('prop = torch.cuda.get_device_properties("cuda:{}".format(cur_device))', "torch_cuda_api", "replace", True,
      'prop = torch.npu.get_device_properties("npu:{}".format(cur_device))', "CUDA device string + API"),
    C("self.major = prop.major", "device_capability_check", "replace", True,
      'self.major = getattr(prop, "major", 0)',
      "NPU device properties carry name/total_memory/L2/core counts but no major/minor"),
    C("self.minor = prop.minor", "device_capability_check", "replace", True,
      'self.minor = getattr(prop, "minor", 0)', "same"),
    C("m, e = torch.frexp(t)", "unsupported_op_workaround", "replace", False,
      "m, e = torch.frexp(t.cpu()); e = e.to(t.device)",
      "--bf16-sr fallback path: frexp has no NPU kernel in the op lists, so it already falls back to CPU per "
      "parameter per step (performance only; the explicit form just makes the round trip visible) - a better "
      "port derives the exponent with torch ops"),
])

E("um_docking_sh", "scripts/docking_pose.sh", "explicit_replacement",
  "Uni-Mol docking_pose finetune/infer launcher (torch.distributed.launch + unicore-train)", [
    C("=set -e", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for torch_npu/HCCL"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False,
      "export HCCL_ASYNC_ERROR_HANDLING=1",
      "ignored on Ascend; the HCCL watchdog equivalent already defaults to 1"),
    C('export CUDA_VISIBLE_DEVICES="0,1,2,3"', "env_var", "replace", False,
      'export ASCEND_RT_VISIBLE_DEVICES="0,1,2,3"',
      "ignored on Ascend, but torch.distributed.launch ranks 0-3 land on NPUs 0-3 anyway, so the run is unchanged"),
    C('export CUDA_VISIBLE_DEVICES="0"', "env_var", "replace", True,
      'export ASCEND_RT_VISIBLE_DEVICES="0"',
      "ignored on Ascend: infer.py then sees all NPUs, the default --distributed-world-size becomes the NPU "
      "count and Uni-Core spawns one inference process per card"),
])

E("uc_adam", "unicore/optim/adam.py", "explicit_replacement",
  "Uni-Core unicore/optim/adam.py (FusedAdam when the CUDA kernel is built, Python Adam otherwise)", [
    C("=import torch.optim", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "only needed for the optional torch_npu.optim replacement below"),
    C("self._optimizer = Adam(params, **self.optimizer_config)", "fused_optimizer", "replace", False,
      "self._optimizer = torch_npu.optim.NpuFusedAdamW(params, **self.optimizer_config)",
      "on NPU the CUDA FusedAdam is unavailable and the per-parameter Python Adam is used (correct but slow); "
      "Uni-Core's Adam uses decoupled decay, so the NPU fused counterpart is NpuFusedAdamW (interplay with the "
      "flat fp16 params unconfirmed)"),
])
