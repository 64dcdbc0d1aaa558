"""Labels for probe382 (LiDAR point-cloud semantic segmentation: Cylinder3D, SPVNAS, RangeNet++, PTv3).

One C(...) per upstream line a careful porter would edit for an explicit torch_npu port.
`required` = complete-port counterfactual (every other label already ported; would this line alone
fail, compute wrongly, or silently do the wrong thing on an NPU host?).
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ----------------------------------------------------------------------------------------------
# Cylinder3D (xinge008/Cylinder3D): module-level device object, spconv 2.x, torch_scatter
# ----------------------------------------------------------------------------------------------
E("cyl_train", "train_cylinder_asym.py", "explicit_replacement",
  "xinge008/Cylinder3D train_cylinder_asym.py (single-GPU trainer with pytorch_device = torch.device('cuda:0'))", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script; the Cylinder3D stack (spconv 2.x era) pins torch well below 2.5.1, so there is no backend "
      "autoload and the 'npu' device type only exists after import torch_npu."),
    C("pytorch_device = torch.device('cuda:0')", "device_type", "replace", True,
      "pytorch_device = torch.device('npu:0')",
      "Single source of the device: every .to(pytorch_device) below follows it, so those lines stay untouched."),
])

E("cyl_demo", "demo_folder.py", "explicit_replacement",
  "xinge008/Cylinder3D demo_folder.py (folder inference, with per-scan timing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script; no autoload on the pinned torch."),
    C("pytorch_device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "pytorch_device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "Unported, torch.cuda.is_available() is False on an NPU host and the whole demo silently runs on the CPU."),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "Unconditional call: raises on a host without CUDA. Also needed for the timing to measure the NPU kernels."),
    C("torch.cuda.synchronize(pytorch_device)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(pytorch_device)",
      "Same as the first synchronize; torch.cuda.synchronize on an npu device raises."),
])

E("cyl_fea", "network/cylinder_fea_generator.py", "explicit_replacement",
  "xinge008/Cylinder3D network/cylinder_fea_generator.py (point MLP + torch_scatter max-pool onto the cylinder grid)", [
    C("import torch_scatter", "custom_cuda_extension", "removal", False, None,
      "Dead import once scatter_max is rewritten with a native op; only fails if torch_scatter is not installed "
      "on the NPU host (a CPU wheel may exist), so not required."),
    C("cur_dev = pt_fea[0].get_device()", "device_type", "replace", True,
      "cur_dev = pt_fea[0].device",
      "get_device() returns a bare index; torch.randperm(device=<int>) reads an int as a CUDA ordinal "
      "(transfer_to_npu has to rewrite int device kwargs to 'npu:{i}' for exactly this reason, knowledge §2.2)."),
    C("pooled_data = torch_scatter.scatter_max(processed_cat_pt_fea, unq_inv, dim=0)[0]", "unsupported_op_workaround",
      "replace", True,
      "pooled_data = processed_cat_pt_fea.new_zeros((unq.shape[0], processed_cat_pt_fea.shape[1])).index_reduce_(0, unq_inv, processed_cat_pt_fea, 'amax', include_self=False)",
      "torch_scatter registers catch-all kernels that branch on is_cuda and otherwise call the CPU kernel, which "
      "rejects NPU tensors. torch.scatter_reduce is ✘ on Atlas A2 in Ascend's 2.7.1 list; torch.index_reduce is ✔ "
      "(may fall back to CPU). mx_driving.common.scatter_max (DrivingSDK) is a faster alternative (int32 index)."),
])

E("cyl_spconv", "network/segmentator_3d_asymm_spconv.py", "explicit_replacement",
  "xinge008/Cylinder3D network/segmentator_3d_asymm_spconv.py (asymmetric 3D sparse U-Net on spconv 2.x)", [
    C("import spconv.pytorch as spconv", "custom_cuda_extension", "replace", True,
      "import mx_driving.spconv as spconv",
      "spconv/cumm are CUDA-only. Ascend DrivingSDK ships SubMConv3d / SparseConv3d / SparseInverseConv3d / "
      "SparseConvTensor / SparseSequential under mx_driving.spconv (deprecated alias of the top-level mx_driving "
      "API; Atlas A2; kernel sizes 1..3, dilation 1). replace_feature()/dense() parity with spconv 2.x is "
      "unconfirmed; all layer constructors below keep their spconv signatures."),
])

E("cyl_loadsave", "utils/load_save_util.py", "explicit_replacement",
  "xinge008/Cylinder3D utils/load_save_util.py (partial checkpoint loading)", [
    C("pre_weight = torch.load(model_load_path)", "tensor_to_device", "replace", True,
      "pre_weight = torch.load(model_load_path, map_location='cpu')",
      "The released checkpoints were saved from CUDA tensors; without map_location torch.load tries to restore "
      "them onto a CUDA device and fails on an NPU host. load_state_dict then copies into the NPU model."),
])

E("cyl_lovasz", "utils/lovasz_losses.py", "explicit_replacement",
  "xinge008/Cylinder3D utils/lovasz_losses.py (Berman's Lovasz-Softmax, device-agnostic)", [])

E("cyl_dataset", "dataloader/dataset_semantickitti.py", "explicit_replacement",
  "xinge008/Cylinder3D dataloader/dataset_semantickitti.py (numpy/numba cylinder partition, CPU only)", [])

E("cyl_config", "config/semantickitti.yaml", "explicit_replacement",
  "xinge008/Cylinder3D config/semantickitti.yaml", [])

E("cyl_train_sh", "train.sh", "explicit_replacement",
  "xinge008/Cylinder3D train.sh (CUDA_VISIBLE_DEVICES launcher)", [
    C("CUDA_VISIBLE_DEVICES=${gpuid}  python -u train_cylinder_asym.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${gpuid}  python -u train_cylinder_asym.py \\",
      "The script's device selection; CANN ignores CUDA_VISIBLE_DEVICES, so gpuid would silently be ignored and the "
      "job would always land on NPU 0 (ASCEND_RT_VISIBLE_DEVICES re-indexes from 0 like CUDA does)."),
])

# ----------------------------------------------------------------------------------------------
# SPVNAS (mit-han-lab/spvnas): torchpack + torchsparse, torch.cuda.amp, .cuda() on SparseTensor
# ----------------------------------------------------------------------------------------------
E("spv_train", "train.py", "explicit_replacement",
  "mit-han-lab/spvnas train.py (torchpack dist + DDP + torchsparse)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script; torchsparse-era torch has no backend autoload."),
    C("dist.init()", "dist_backend", "replace", True,
      "init_torchpack_dist(backend='hccl')  # copy of torchpack.distributed.init with the backend swapped",
      "torchpack.distributed.context.init() always calls init_process_group(backend='nccl', ...) (read in "
      "zhijian-liu/torchpack); it has no backend argument, so the porter needs a local copy that sets torchpack's "
      "rank globals and uses hccl."),
    C("torch.cuda.set_device(dist.local_rank())", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(dist.local_rank())",
      "Per-rank device binding."),
    C("model = builder.make_model().cuda()", "tensor_to_device", "replace", True,
      "model = builder.make_model().npu()",
      "Module placement."),
])

E("spv_trainers", "core/trainers.py", "explicit_replacement",
  "mit-han-lab/spvnas core/trainers.py (torchpack Trainer with torch.cuda.amp)", [
    C("from torch.cuda import amp", "amp", "replace", True,
      "from torch_npu.npu import amp",
      "Single label for AMP: amp.GradScaler / amp.autocast below resolve through this import. torch.cuda.amp on an "
      "NPU host disables itself with a warning, i.e. fp16 training silently becomes fp32 (or loses loss scaling)."),
    C("_inputs[key] = value.cuda()", "tensor_to_device", "replace", True,
      "_inputs[key] = value.to('npu')",
      "value is a torchsparse SparseTensor; .to(device) is the portable form (SparseTensor has no .npu())."),
    C("targets = feed_dict['targets'].F.long().cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "targets = feed_dict['targets'].F.long().npu(non_blocking=True)",
      "Plain tensor."),
])

E("spv_utils", "core/models/utils.py", "kernel_rewrite",
  "mit-han-lab/spvnas core/models/utils.py (point<->voxel with torchsparse.nn.functional hashing kernels)", [
    C("import torchsparse.nn.functional as F", "custom_cuda_extension", "replace", False,
      "import core.models.npu_functional as F  # torch-op versions of sphash/sphashquery/spcount/spvoxelize/calc_ti_weights/spdevoxelize",
      "torchsparse's hashing/voxelize kernels are CUDA+CPU builds. From memory, torchsparse 1.4 routes non-CUDA "
      "devices through a .cpu() round-trip for these functional ops, which would make this a host-bound "
      "performance problem rather than a failure; unconfirmed, hence not required."),
])

E("spv_spvcnn", "core/models/semantic_kitti/spvcnn.py", "explicit_replacement",
  "mit-han-lab/spvnas core/models/semantic_kitti/spvcnn.py (SPVCNN on torchsparse spnn layers)", [
    C("import torchsparse.nn as spnn", "custom_cuda_extension", "replace", True,
      "import mx_driving.spconv as spnn  # plus a thin Conv3d/BatchNorm/ReLU adapter over SparseConvTensor",
      "spnn.Conv3d runs torchsparse's own gather-GEMM-scatter kernels (CUDA or CPU builds only, knowledge §6: no "
      "nvcc path). The adapter to DrivingSDK sparse conv is a rewrite, not a rename; the rest of the file is "
      "device-agnostic."),
])

E("spv_evaluate", "evaluate.py", "explicit_replacement",
  "mit-han-lab/spvnas evaluate.py (model-zoo evaluation under torchpack dist)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Second entry script."),
    C("dist.init()", "dist_backend", "replace", True,
      "init_torchpack_dist(backend='hccl')  # copy of torchpack.distributed.init with the backend swapped",
      "Same hard-coded nccl inside torchpack as in train.py."),
    C("torch.cuda.set_device(dist.local_rank())", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(dist.local_rank())",
      "Per-rank device binding."),
    C("model.cuda(),", "tensor_to_device", "replace", True,
      "model.npu(),",
      "Module placement inside the DDP wrapper call."),
    C("_inputs[key] = value.cuda()", "tensor_to_device", "replace", True,
      "_inputs[key] = value.to('npu')",
      "SparseTensor input."),
    C("targets = feed_dict['targets'].F.long().cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "targets = feed_dict['targets'].F.long().npu(non_blocking=True)",
      "Plain tensor."),
])

E("spv_model_zoo", "model_zoo.py", "explicit_replacement",
  "mit-han-lab/spvnas model_zoo.py (pretrained SPVNAS / SPVCNN / MinkUNet download + load)", [])

# ----------------------------------------------------------------------------------------------
# RangeNet++ (PRBonn/lidar-bonnetal): self.gpu flags, DataParallel branch, .cuda() chains, is_cuda
# ----------------------------------------------------------------------------------------------
E("rn_trainer", "train/tasks/semantic/modules/trainer.py", "explicit_replacement",
  "PRBonn/lidar-bonnetal train/tasks/semantic/modules/trainer.py (RangeNet++ trainer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Trainer module is the first torch user after train.py; torch 1.x era, no autoload."),
    C('self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'self.device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "Used for the NLLLoss weights and the iouEval confusion matrix; left as cpu they mismatch the NPU outputs."),
    C("if torch.cuda.is_available() and torch.cuda.device_count() > 0:", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and torch.npu.device_count() > 0:",
      "Gate for self.gpu and model placement; unported the model stays on the CPU while the loss sits on the NPU."),
    C("self.model.cuda()", "tensor_to_device", "replace", True,
      "self.model.npu()",
      "Module placement."),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "torch.cuda.empty_cache() is a no-op when CUDA was never initialised: no error, it just frees nothing on the "
      "NPU. Memory hygiene only."),
    C("in_vol = in_vol.cuda()", "tensor_to_device", "replace", True,
      "in_vol = in_vol.npu()",
      "Executed branch (single device): .cuda() raises on an NPU host."),
    C("proj_mask = proj_mask.cuda()", "tensor_to_device", "replace", True,
      "proj_mask = proj_mask.npu()",
      "Executed branch."),
    C("proj_labels = proj_labels.cuda(non_blocking=True).long()", "tensor_to_device", "replace", True,
      "proj_labels = proj_labels.npu(non_blocking=True).long()",
      "Executed branch."),
    C("torch.cuda.empty_cache()  # before validation", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # before validation",
      "No-op without CUDA; memory hygiene only."),
    C("in_vol, proj_mask = in_vol.cuda(), proj_mask.cuda()", "tensor_to_device", "replace", True,
      "in_vol, proj_mask = in_vol.npu(), proj_mask.npu()",
      "Validation inputs."),
    C("proj_labels = proj_labels.long().cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "proj_labels = proj_labels.long().npu(non_blocking=True)",
      "Validation labels."),
])

E("rn_user", "train/tasks/semantic/modules/user.py", "explicit_replacement",
  "PRBonn/lidar-bonnetal train/tasks/semantic/modules/user.py (RangeNet++ inference + kNN post-processing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "First torch user of infer.py; no autoload on the pinned torch."),
    C('self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", False,
      'self.device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "In User the attribute is only printed (placement goes through self.gpu and .cuda() calls), so an unported "
      "line only mislabels the log."),
    C("if torch.cuda.is_available() and torch.cuda.device_count() > 0:", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and torch.npu.device_count() > 0:",
      "Gate for self.gpu; unported, inference silently runs on the CPU."),
    C("self.model.cuda()", "tensor_to_device", "replace", True,
      "self.model.npu()",
      "Module placement."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "No-op without CUDA; memory hygiene only."),
    C("proj_in = proj_in.cuda()", "tensor_to_device", "replace", True,
      "proj_in = proj_in.npu()", "Executed branch."),
    C("proj_mask = proj_mask.cuda()", "tensor_to_device", "replace", True,
      "proj_mask = proj_mask.npu()", "Executed branch."),
    C("p_x = p_x.cuda()", "tensor_to_device", "replace", True,
      "p_x = p_x.npu()", "Executed branch; indices feed proj_argmax[p_y, p_x] and the kNN gather."),
    C("p_y = p_y.cuda()", "tensor_to_device", "replace", True,
      "p_y = p_y.npu()", "Executed branch."),
    C("proj_range = proj_range.cuda()", "tensor_to_device", "replace", True,
      "proj_range = proj_range.npu()", "Executed when kNN post-processing is on (default arch configs)."),
    C("unproj_range = unproj_range.cuda()", "tensor_to_device", "replace", True,
      "unproj_range = unproj_range.npu()", "Same branch."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "Guard of the timing sync: unported it is False, the sync is skipped and the printed per-scan time is "
      "wrong (asynchronous launch), nothing else."),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "With the guard ported this call runs and raises without CUDA."),
])

E("rn_knn", "train/tasks/semantic/postproc/KNN.py", "device_branch_or_abstraction",
  "PRBonn/lidar-bonnetal train/tasks/semantic/postproc/KNN.py (range-image kNN label cleaning)", [
    C("if proj_range.is_cuda:", "device_type", "replace", True,
      "if proj_range.is_npu:",
      "is_cuda is False for NPU tensors, so device becomes cpu and inv_gauss_k / the one-hot vote buffer are "
      "created on the CPU and multiplied with NPU tensors -> device-mismatch error. (device = proj_range.device "
      "would be the cleaner rewrite of the whole branch.)"),
    C('device = torch.device("cuda")', "device_type", "replace", True,
      'device = torch.device("npu")',
      "With the condition ported this branch runs; torch.device('cuda') then fails at .to(device)."),
])

E("rn_parser", "train/tasks/semantic/dataset/kitti/parser.py", "explicit_replacement",
  "PRBonn/lidar-bonnetal train/tasks/semantic/dataset/kitti/parser.py (range-image projection DataLoader)", [])

E("rn_ioueval", "train/tasks/semantic/modules/ioueval.py", "explicit_replacement",
  "PRBonn/lidar-bonnetal train/tasks/semantic/modules/ioueval.py (device-parameterised confusion matrix)", [])

E("rn_train_py", "train/tasks/semantic/train.py", "explicit_replacement",
  "PRBonn/lidar-bonnetal train/tasks/semantic/train.py (argparse entry point)", [])

E("rn_docker", "docker/Dockerfile", "explicit_replacement",
  "PRBonn/lidar-bonnetal docker/Dockerfile (nvidia/cuda base, torch 1.1 cu100)", [
    C("FROM nvidia/cuda:10.0-cudnn7-devel-ubuntu18.04", "env_var", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "Needs a CANN toolkit image (and a Python >= 3.8 for any torch_npu). The exact image tag is an example, "
      "unconfirmed; pick the CANN version paired with the torch_npu wheel (knowledge §1.2)."),
    C("torchvision==0.2.2.post3", "import_torch_npu", "replace", False,
      "torchvision==0.16.0 \\",
      "Must follow the torch bump (0.16.0 pairs with torch 2.1 per the torchvision_npu table); the 0.2.x pure-Python "
      "release may still import, so not required (unconfirmed)."),
    C("RUN pip3 install torch==1.1.0", "import_torch_npu", "replace", True,
      "RUN pip3 install torch==2.1.0 torch-npu==2.1.0.post10",
      "CUDA wheel index and a torch with no torch_npu release; torch-npu wheel version must equal the torch version "
      "(2.1.0.post10 is the CANN 8.0.0 pairing, matching the example base image)."),
    C("ENV NVIDIA_VISIBLE_DEVICES all", "env_var", "replace", False,
      "ENV ASCEND_VISIBLE_DEVICES=all",
      "Only read by the NVIDIA container runtime; Ascend devices are mapped by the Ascend docker runtime / --device "
      "flags at run time. Inert either way."),
    C("ENV NVIDIA_DRIVER_CAPABILITIES compute,utility,graphics", "env_var", "removal", False, None,
      "Inert without the NVIDIA runtime."),
    C("ENV LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH", "env_var", "replace", False,
      "RUN echo 'source /usr/local/Ascend/ascend-toolkit/set_env.sh' >> /etc/bash.bashrc",
      "torch_npu needs CANN's environment; CANN base images usually export it already (unconfirmed), the stale CUDA "
      "path itself is harmless."),
    C("torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "RUN echo 'python3 -c \"import torch, torch_npu; print(torch.npu.is_available())\"' > /usr/local/bin/check_gpu && chmod +x /usr/local/bin/check_gpu",
      "Convenience sanity-check script only."),
])

# ----------------------------------------------------------------------------------------------
# Pointcept / Point Transformer V3: mp.spawn + NCCL, torch.amp, flash_attn varlen, spconv, torch_scatter
# ----------------------------------------------------------------------------------------------
E("pc_launch", "pointcept/engines/launch.py", "explicit_replacement",
  "Pointcept/Pointcept pointcept/engines/launch.py (detectron2-style mp.spawn launcher)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu",
      "Natural home is tools/train.py (not in the probe); here it makes the spawned workers self-sufficient. With "
      "the pinned torch 2.5.1 the torch_npu backend autoloads on import torch, so not required."),
    C("=torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "torch.npu.is_available()",
      "Inside the worker's assert: False on an NPU host, every spawned worker dies."),
    C('backend="NCCL",', "dist_backend", "replace", True,
      'backend="hccl",',
      "Upper-case literal (the Backend class lower-cases it); still NCCL, which does not exist on the NPU build."),
    C("assert num_gpus_per_machine <= torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "assert num_gpus_per_machine <= torch.npu.device_count()",
      "torch.cuda.device_count() is 0 on an NPU host: the assert fails."),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)",
      "Per-rank device binding; without it all ranks share npu:0."),
])

E("pc_comm", "pointcept/utils/comm.py", "explicit_replacement",
  "Pointcept/Pointcept pointcept/utils/comm.py (detectron2 comm helpers)", [
    C('if dist.get_backend() == "nccl":', "dist_backend", "replace", False,
      'if dist.get_backend() == "hccl":',
      "Backend-string comparison (knowledge §2.4: never rewritten automatically). Unported, all_gather/gather of "
      "Python objects run over the HCCL world group instead of a gloo side group: still correct, but it serialises "
      "through NPU memory, which this helper was written to avoid."),
])

E("pc_train", "pointcept/engines/train.py", "explicit_replacement",
  "Pointcept/Pointcept pointcept/engines/train.py (DefaultTrainer with AMP, DDP, empty_cache knobs)", [
    C('auto_cast = partial(torch.amp.autocast, device_type="cuda")', "amp", "replace", True,
      'auto_cast = partial(torch.amp.autocast, device_type="npu")',
      "Live branch on the pinned torch 2.5.1: autocast for 'cuda' with no CUDA warns and disables, so the model "
      "silently runs in fp32."),
    C("auto_cast = torch.cuda.amp.autocast", "amp", "replace", False,
      "auto_cast = torch.npu.amp.autocast",
      "Fallback for torch < 2.4; dead under the pinned torch 2.5.1, live on a torch_npu 2.1/2.3 stack."),
    C("input_dict[key] = input_dict[key].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "input_dict[key] = input_dict[key].npu(non_blocking=True)",
      "Batch transfer."),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "cfg.empty_cache knob; no-op without CUDA, memory hygiene only."),
    C("torch.cuda.empty_cache()  # release cached blocks between epochs", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # release cached blocks between epochs",
      "cfg.empty_cache_per_epoch knob; no-op without CUDA."),
    C("model.cuda(),", "tensor_to_device", "replace", True,
      "model.npu(),",
      "Module placement before DDP."),
    C('grad_scaler = partial(torch.amp.GradScaler, device="cuda")', "amp", "replace", True,
      'grad_scaler = partial(torch.amp.GradScaler, device="npu")',
      "Live branch: a 'cuda' GradScaler with no CUDA disables itself, so fp16 runs without loss scaling "
      "(silent underflow). Generic torch.amp.GradScaler('npu') support depends on the torch_npu version (unconfirmed); "
      "torch.npu.amp.GradScaler is the safe spelling."),
    C("grad_scaler = torch.cuda.amp.GradScaler", "amp", "replace", False,
      "grad_scaler = torch.npu.amp.GradScaler",
      "Fallback for torch < 2.4; dead under the pinned torch."),
])

E("pc_defaults", "pointcept/engines/defaults.py", "explicit_replacement",
  "Pointcept/Pointcept pointcept/engines/defaults.py (DDP wrapper, argparse, config setup)", [])

E("pc_ptv3", "pointcept/models/point_transformer_v3/point_transformer_v3m1_base.py", "explicit_replacement",
  "Pointcept/Pointcept pointcept/models/point_transformer_v3/point_transformer_v3m1_base.py (PTv3 with flash-attn varlen)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Binds the torch_npu name used by the attention rewrite below (autoload alone does not bind it)."),
    C("import spconv.pytorch as spconv", "custom_cuda_extension", "replace", True,
      "import mx_driving.spconv as spconv",
      "CPE and the stem are spconv SubMConv3d; DrivingSDK's mx_driving.spconv is the NPU counterpart. The stem uses "
      "kernel_size=5, outside the 1..3 range documented for mx_driving SparseConv3d (unconfirmed for SubM)."),
    C("import torch_scatter", "custom_cuda_extension", "removal", False, None,
      "Dead once both segment_csr calls are rewritten; only fails where the package is missing."),
    C('assert flash_attn is not None, "Make sure flash_attn is installed."', "attention_kernel", "replace", True,
      'assert hasattr(torch_npu, "npu_fusion_attention"), "Make sure torch_npu is installed."',
      "flash-attn cannot be installed on NPU, the guarded import leaves flash_attn = None and the default config "
      "(enable_flash=True) trips this assert. The try/except import itself can stay."),
    C("feat = flash_attn.flash_attn_varlen_qkvpacked_func(", "attention_kernel", "replace", True,
      'feat = torch_npu.npu_fusion_attention(*qkv.half().reshape(-1, 3, H, C // H).unbind(dim=1), H, "TND", scale=self.scale, keep_prob=1.0 - (self.attn_drop if self.training else 0.0), actual_seq_qlen=cu_seqlens[1:].tolist(), actual_seq_kvlen=cu_seqlens[1:].tolist())[0].reshape(-1, C)',
      "Varlen packed FA -> npu_fusion_attention with TND layout and cumulative lengths without the leading 0 "
      "(knowledge §5: same mapping transformers uses). The multi-line call (cu_seqlens, max_seqlen, dropout_p, "
      "softmax_scale, .reshape) is one statement, labelled once on its first line."),
    C("feat=torch_scatter.segment_csr(", "unsupported_op_workaround", "replace", True,
      'feat=(lambda f: f.new_zeros(counts.shape[0], f.shape[1]).index_reduce_(0, cluster, f, {"max": "amax", "min": "amin"}.get(self.reduce, self.reduce), include_self=False))(self.proj(point.feat)),',
      "torch_scatter's segment_csr has CUDA/CPU kernels only; torch.segment_reduce has no NPU kernel and "
      "torch.scatter_reduce is ✘ on A2, torch.index_reduce is ✔ (may fall back to CPU). Uses the pooling cluster "
      "ids instead of the sorted CSR pointer; reduce='sum' (not used by PTv3 configs) would need index_add_."),
    C("coord=torch_scatter.segment_csr(", "unsupported_op_workaround", "replace", True,
      'coord=point.coord.new_zeros(counts.shape[0], 3).index_reduce_(0, cluster, point.coord, "mean", include_self=False),',
      "Same rewrite for the mean-pooled coordinates."),
])

E("pc_hooks", "pointcept/engines/hooks/misc.py", "explicit_replacement",
  "Pointcept/Pointcept pointcept/engines/hooks/misc.py (timer, logger, checkpoint save/load, precise eval)", [
    C("max_mem = torch.cuda.max_memory_allocated() / 1024.0 / 1024.0", "torch_cuda_api", "replace", False,
      "max_mem = torch.npu.max_memory_allocated() / 1024.0 / 1024.0",
      "Without CUDA initialised memory_stats() is empty and this logs 0 M: wrong log value only."),
    C("map_location=lambda storage, loc: storage.cuda(),", "tensor_to_device", "replace", True,
      'map_location="cpu",',
      "storage.cuda() raises on an NPU host; loading to CPU and letting load_state_dict copy into the NPU model is the "
      "safe form (the optimizer/scaler states are moved by their own load_state_dict)."),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "Before precise evaluation; no-op without CUDA."),
])

E("pc_env", "pointcept/utils/env.py", "explicit_replacement",
  "Pointcept/Pointcept pointcept/utils/env.py (seeding + cudnn flags)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed)",
      "torch.cuda seeding is queued lazily and never runs without CUDA (no error). torch.manual_seed above is "
      "expected to seed the registered accelerator too (unconfirmed), so only determinism hygiene."),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "Same as manual_seed."),
])

E("pc_pointops_setup", "libs/pointops/setup.py", "kernel_rewrite",
  "Pointcept/Pointcept libs/pointops/setup.py (CUDAExtension for kNN / ball query / grouping kernels)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", False,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "pointops is not on the PTv3 SemanticKITTI path (used by PTv1/v2 and some samplers); a full port needs Ascend C "
      "kernels behind NpuExtension. Not required for the probe's target model."),
    C("CUDAExtension(", "custom_cuda_extension", "replace", False,
      "NpuExtension(",
      "Same rewrite; the .cu sources would be replaced by Ascend C kernels."),
    C('extra_compile_args={"cxx": ["-g"], "nvcc": ["-O2"]},', "custom_cuda_extension", "replace", False,
      'extra_compile_args={"cxx": ["-g"]},',
      "No nvcc on an NPU host."),
])

E("pc_pointops_query", "libs/pointops/functions/query.py", "kernel_rewrite",
  "Pointcept/Pointcept libs/pointops/functions/query.py (autograd wrappers around pointops._C queries)", [
    C("from pointops._C import knn_query_cuda, random_ball_query_cuda, ball_query_cuda", "custom_cuda_extension",
      "replace", False,
      "from pointops._C import knn_query_npu as knn_query_cuda, random_ball_query_npu as random_ball_query_cuda, ball_query_npu as ball_query_cuda",
      "Off the PTv3 path; aliasing keeps the call sites unchanged once Ascend C kernels exist."),
    C("idx = torch.cuda.IntTensor(m, nsample).zero_()", "torch_cuda_api", "replace", False,
      "idx = torch.zeros((m, nsample), dtype=torch.int, device=xyz.device)",
      "Legacy typed-tensor constructor; the RandomBallQuery wrapper already uses the device-agnostic form."),
    C("dist2 = torch.cuda.FloatTensor(m, nsample).zero_()", "torch_cuda_api", "replace", False,
      "dist2 = torch.zeros((m, nsample), dtype=torch.float, device=xyz.device)",
      "Same."),
    C("idx, dist2 = torch.cuda.IntTensor(m, nsample).zero_(), torch.cuda.FloatTensor(m, nsample).zero_()",
      "torch_cuda_api", "replace", False,
      "idx, dist2 = torch.zeros((m, nsample), dtype=torch.int, device=xyz.device), torch.zeros((m, nsample), dtype=torch.float, device=xyz.device)",
      "Same, BallQuery."),
])

E("pc_train_sh", "scripts/train.sh", "explicit_replacement",
  "Pointcept/Pointcept scripts/train.sh (getopts launcher, GPU count via python one-liner, slurm dist URL)", [
    C("NUM_GPU=`$PYTHON -c 'import torch; print(torch.cuda.device_count())'`", "torch_cuda_api", "replace", True,
      "NUM_GPU=`$PYTHON -c 'import torch, torch_npu; print(torch.npu.device_count())'`",
      "Prints 0 on an NPU host: world_size 0 skips mp.spawn and the job silently runs as a single process."),
    C("export PYTHONPATH=./$CODE_DIR", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for the launched python; often already in the login profile or image (unconfirmed), so "
      "not required."),
])

E("pc_config", "configs/semantic_kitti/semseg-pt-v3m1-0-base.py", "explicit_replacement",
  "Pointcept/Pointcept configs/semantic_kitti/semseg-pt-v3m1-0-base.py", [])

E("pc_env_yml", "environment.yml", "explicit_replacement",
  "Pointcept/Pointcept environment.yml (conda env with pytorch-cuda, spconv-cu124, flash-attn)", [
    C("=- cuda", "env_var", "removal", False, None,
      "CUDA toolkit from the nvidia channel: useless on an NPU host, harmless where it installs (x86)."),
    C("- conda-forge::cudnn", "env_var", "removal", False, None,
      "Same: unused, harmless."),
    C("- pytorch=2.5.0", "import_torch_npu", "replace", True,
      "- pytorch=2.5.1",
      "torch_npu is released for torch 2.5.1 (wheel 2.5.1 / 2.5.1.post1), not 2.5.0; the torch_npu wheel version "
      "must equal the torch version (knowledge §1.1-1.2)."),
    C("- torchvision=0.20.0", "import_torch_npu", "replace", True,
      "- torchvision=0.20.1",
      "Follows the torch bump: torchvision 0.20.0 is built against torch 2.5.0, 0.20.1 against 2.5.1 (the "
      "torchvision_npu table pairs 0.20.1 with torch 2.5.1); otherwise the env does not resolve."),
    C("- pytorch-cuda=12.4", "import_torch_npu", "removal", True, None,
      "Forces the CUDA build of pytorch; torch_npu expects the CPU build (x86) or plain PyPI torch (aarch64)."),
    C("- pip:", "import_torch_npu", "npu_only_addition", True,
      "    - torch-npu==2.5.1",
      "The NPU backend itself."),
    C("- spconv-cu124", "custom_cuda_extension", "replace", True,
      "    - mx_driving  # built from Ascend/DrivingSDK for the installed torch/torch_npu",
      "The model code now imports mx_driving.spconv; spconv-cu124 has no NPU (or aarch64 CUDA-less) use."),
    C("- flash-attn --no-build-isolation", "attention_kernel", "removal", True, None,
      "flash-attn builds CUDA kernels at install time and fails without nvcc, aborting the env creation."),
    C("- ./libs/pointops", "custom_cuda_extension", "removal", True, None,
      "CUDAExtension build fails without nvcc and aborts the pip step; pointops is not needed by PTv3."),
    C("- ./libs/pointgroup_ops", "custom_cuda_extension", "removal", True, None,
      "Same (instance-segmentation CUDA ops)."),
])
