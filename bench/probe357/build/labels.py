# Labels for probe357 (gait recognition). One label per upstream line a careful porter edits.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ----------------------------------------------------------------------------------------------
# OpenGait (ShiqiYu/OpenGait)
# ----------------------------------------------------------------------------------------------
E("og_main", "opengait/main.py", "explicit_replacement",
  "ShiqiYu/OpenGait opengait/main.py (entry point, torch.distributed.launch)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script: the explicit port calls torch.npu.* in base_model/common/sampler; torch_npu must be "
      "imported (autoload only from torch_npu 2.5.1; OpenGait-era torch pairs with torch_npu 2.1)."),
    C("torch.distributed.init_process_group('nccl'", "dist_backend", "replace", True,
      "torch.distributed.init_process_group('hccl', init_method='env://')",
      "NCCL does not exist on Ascend; HCCL is the collective backend."),
    C("if torch.distributed.get_world_size() != torch.cuda.device_count():", "torch_cuda_api", "replace", True,
      "if torch.distributed.get_world_size() != torch.npu.device_count():",
      "torch.cuda.device_count() is 0 on an NPU host, so the sanity check always raises ValueError."),
    C("torch.cuda.device_count(), torch.distributed.get_world_size()))", "torch_cuda_api", "replace", False,
      "torch.npu.device_count(), torch.distributed.get_world_size()))",
      "Only the text of the error message; evaluated on the error path only."),
])

E("og_base_model", "opengait/modeling/base_model.py", "explicit_replacement",
  "ShiqiYu/OpenGait opengait/modeling/base_model.py (BaseModel: AMP, device placement, ckpt loading)", [
    C("from torch.cuda.amp import autocast", "amp", "replace", True,
      "from torch.npu.amp import autocast",
      "CUDA autocast disables itself (warning) when CUDA is unavailable, so enable_float16 would silently run "
      "in fp32; torch_npu.npu.amp.autocast is the NPU form (2.7.1 support list)."),
    C("from torch.cuda.amp import GradScaler", "amp", "replace", True,
      "from torch.npu.amp import GradScaler",
      "The CUDA GradScaler disables itself without CUDA: with NPU autocast active, fp16 gradients would be "
      "unscaled (underflow) — wrong training."),
    C("torch.cuda.set_device(self.device)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(self.device)",
      "Binds each rank to its NPU; the CUDA call fails on an NPU host."),
    C('self.to(device=torch.device("cuda", self.device))', "tensor_to_device", "replace", True,
      'self.to(device=torch.device("npu", self.device))',
      "Model placement."),
    C('checkpoint = torch.load(save_name, map_location=torch.device("cuda", self.device))', "tensor_to_device",
      "replace", True,
      'checkpoint = torch.load(save_name, map_location=torch.device("npu", self.device))',
      "Restoring (also GPU-trained released) checkpoints must map onto the NPU."),
])

E("og_common", "opengait/utils/common.py", "explicit_replacement",
  "ShiqiYu/OpenGait opengait/utils/common.py (np2var/ts2var, init_seeds, DDP wrapper)", [
    C("return autograd.Variable(x, **kwargs).cuda()", "tensor_to_device", "replace", True,
      "return autograd.Variable(x, **kwargs).npu()",
      "Every input batch goes through ts2var; the .cuda() call fails on an NPU host."),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "On an NPU host the CUDA call is a lazily queued no-op; torch.manual_seed above also seeds the registered "
      "PrivateUse1 device on recent torch (unconfirmed in /work/shared/knowledge), so only reproducibility is at stake."),
    C("device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "device = torch.npu.current_device()",
      "torch.cuda.current_device() initialises CUDA and raises on an NPU host; DDP needs the NPU index."),
])

E("og_msg_manager", "opengait/utils/msg_manager.py", "explicit_replacement",
  "ShiqiYu/OpenGait opengait/utils/msg_manager.py (logging/tensorboard; device-agnostic)", [])

E("og_metric", "opengait/evaluation/metric.py", "explicit_replacement",
  "ShiqiYu/OpenGait opengait/evaluation/metric.py (cuda_dist and ranking metrics)", [
    C("x = torch.from_numpy(x).cuda()", "tensor_to_device", "replace", True,
      "x = torch.from_numpy(x).npu()",
      "Distance matrix for evaluation; the function name cuda_dist itself is left as is."),
    C("y = torch.from_numpy(y).cuda()", "tensor_to_device", "replace", True,
      "y = torch.from_numpy(y).npu()",
      "Same as x."),
    C("dist = torch.zeros(n_x, n_y).cuda()", "tensor_to_device", "replace", True,
      "dist = torch.zeros(n_x, n_y).npu()",
      "Accumulator must live on the same device as x and y."),
])

E("og_evaluator", "opengait/evaluation/evaluator.py", "explicit_replacement",
  "ShiqiYu/OpenGait opengait/evaluation/evaluator.py (numpy evaluation protocols; calls cuda_dist)", [])

E("og_sampler", "opengait/data/sampler.py", "explicit_replacement",
  "ShiqiYu/OpenGait opengait/data/sampler.py (TripletSampler with broadcast-synchronised sampling)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "False on an NPU host, so idx stays a CPU tensor and the HCCL broadcast below fails (HCCL needs device tensors)."),
    C("idx = idx.cuda()", "tensor_to_device", "replace", True,
      "idx = idx.npu()",
      "The broadcast tensor must be on the NPU for HCCL."),
])

E("og_dataset", "opengait/data/dataset.py", "explicit_replacement",
  "ShiqiYu/OpenGait opengait/data/dataset.py (pkl dataset; CPU only)", [])

E("og_modules", "opengait/modeling/modules.py", "explicit_replacement",
  "ShiqiYu/OpenGait opengait/modeling/modules.py (HPP, SeparateFCs, GaitAlign with torchvision RoIAlign)", [
    C("from torchvision.ops import RoIAlign", "unsupported_op_workaround", "npu_only_addition", False,
      "import torchvision_npu  # NPU kernels for torchvision::roi_align (GaitAlign)",
      "GaitAlign (GaitEdge only) calls torchvision RoIAlign on NPU tensors; torchvision_npu provides roi_align. "
      "Whether torch_npu's CPU fallback already covers the torchvision op is unconfirmed, so not marked required."),
])

E("og_gaitgl", "opengait/modeling/models/gaitgl.py", "explicit_replacement",
  "ShiqiYu/OpenGait opengait/modeling/models/gaitgl.py (GaitGL network; device-agnostic)", [])

E("og_config", "configs/gaitgl/gaitgl.yaml", "explicit_replacement",
  "ShiqiYu/OpenGait configs/gaitgl/gaitgl.yaml (enable_float16, sync_BN)", [])

E("og_train_sh", "train.sh", "explicit_replacement",
  "ShiqiYu/OpenGait train.sh (CUDA_VISIBLE_DEVICES + torch.distributed.launch)", [
    C("# # **************** For CASIA-B ****************", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; often already sourced in the shell profile or container, so not marked required."),
    C("CUDA_VISIBLE_DEVICES=0,1,2,3 python -m torch.distributed.launch --nproc_per_node=4 opengait/main.py --cfgs ./configs/baseline/baseline.yaml",
      "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3 python -m torch.distributed.launch --nproc_per_node=4 opengait/main.py --cfgs ./configs/baseline/baseline.yaml --phase train",
      "CUDA_VISIBLE_DEVICES is ignored by CANN: on an 8-NPU host torch.npu.device_count() stays 8 and main.py's "
      "world_size == device_count check raises."),
])

E("og_demo_main", "demo/libs/main.py", "explicit_replacement",
  "ShiqiYu/OpenGait demo/libs/main.py (All-in-One-Gait demo entry: track, segment, recognise)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script of the demo."),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = "0"', "env_var", "replace", False,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0"',
      "Device 0 is used either way and nothing reads device_count in the demo."),
    C('torch.distributed.init_process_group("nccl"', "dist_backend", "replace", True,
      'torch.distributed.init_process_group("hccl", init_method="env://", rank=0, world_size=1)',
      "Single-process group needed by BaseModel; NCCL is unavailable on Ascend."),
])

E("og_demo_track", "demo/libs/track.py", "explicit_replacement",
  "ShiqiYu/OpenGait demo/libs/track.py (ByteTrack/YOLOX person tracker)", [
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "Falls back to CPU silently on an NPU host; with fp16=True by default the half-precision YOLOX then runs "
      "on CPU (slow or unsupported half kernels)."),
])

E("og_demo_recognise", "demo/libs/recognise.py", "explicit_replacement",
  "ShiqiYu/OpenGait demo/libs/recognise.py (gait feature extraction and gallery matching)", [
    C('x = x.to(torch.device("cuda", 0)).float()', "tensor_to_device", "replace", True,
      'x = x.to(torch.device("npu", 0)).float()',
      "Feature distance on the accelerator."),
    C('y = y.to(torch.device("cuda", 0)).float()', "tensor_to_device", "replace", True,
      'y = y.to(torch.device("npu", 0)).float()',
      "Same as x."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "Memory hygiene only; the CUDA call is a no-op when CUDA was never initialised."),
])

# ----------------------------------------------------------------------------------------------
# GaitSet (AbnerHqC/GaitSet)
# ----------------------------------------------------------------------------------------------
E("gs_config", "config.py", "explicit_replacement",
  "AbnerHqC/GaitSet config.py (the CUDA_VISIBLE_DEVICES key is only a config name)", [])

E("gs_initialization", "model/initialization.py", "explicit_replacement",
  "AbnerHqC/GaitSet model/initialization.py", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = config["CUDA_VISIBLE_DEVICES"]', "env_var", "replace", False,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = config["CUDA_VISIBLE_DEVICES"]',
      "After DataParallel is removed only the first visible device is used, which is logical device 0 with the "
      "shipped config either way; whether torch_npu honours the variable when set after import is unconfirmed."),
])

E("gs_model", "model/model.py", "explicit_replacement",
  "AbnerHqC/GaitSet model/model.py (DataParallel SetNet, multi-GPU collate, np2var)", [
    C("self.encoder = nn.DataParallel(self.encoder)", "distributed_framework", "removal", True, None,
      "torch.nn.DataParallel is unsupported (✘) on Ascend; run SetNet on one NPU (or move to DDP)."),
    C("self.triplet_loss = nn.DataParallel(self.triplet_loss)", "distributed_framework", "removal", True, None,
      "Same as the encoder wrapper."),
    C("self.encoder.cuda()", "tensor_to_device", "replace", True,
      "self.encoder.npu()",
      "Model placement."),
    C("self.triplet_loss.cuda()", "tensor_to_device", "replace", False,
      "self.triplet_loss.npu()",
      "TripletLoss has no parameters or buffers, so Module.cuda() touches no tensor and cannot fail; edited for consistency."),
    C("gpu_num = min(torch.cuda.device_count(), batch_size)", "torch_cuda_api", "replace", True,
      "gpu_num = 1  # one NPU per process (no DataParallel scatter)",
      "device_count() is 0 on an NPU host -> ZeroDivisionError; and torch.npu.device_count() would be wrong too, "
      "because without DataParallel SetNet only reads batch_frame[0]."),
    C("return autograd.Variable(x).cuda()", "tensor_to_device", "replace", True,
      "return autograd.Variable(x).npu()",
      "All inputs go through np2var/ts2var."),
    C("self.encoder.load_state_dict(torch.load(encoder_ckpt))", "tensor_to_device", "replace", True,
      "self.encoder.load_state_dict({k[7:] if k.startswith('module.') else k: v for k, v in torch.load(encoder_ckpt, map_location='npu').items()})",
      "GPU checkpoints hold CUDA tensors (torch.load raises without map_location) and, saved from the "
      "DataParallel wrapper, carry a 'module.' prefix that no longer matches."),
    C("self.optimizer.load_state_dict(torch.load(optimizer_ckpt))", "tensor_to_device", "replace", True,
      "self.optimizer.load_state_dict(torch.load(optimizer_ckpt, map_location='npu'))",
      "Adam state saved on GPU cannot be deserialised on a host without CUDA."),
])

E("gs_gaitset", "model/network/gaitset.py", "explicit_replacement",
  "AbnerHqC/GaitSet model/network/gaitset.py (SetNet; device-agnostic)", [])

E("gs_evaluator", "model/utils/evaluator.py", "explicit_replacement",
  "AbnerHqC/GaitSet model/utils/evaluator.py (cuda_dist + CASIA-B protocol)", [
    C("x = torch.from_numpy(x).cuda()", "tensor_to_device", "replace", True,
      "x = torch.from_numpy(x).npu()",
      "Evaluation distance matrix."),
    C("y = torch.from_numpy(y).cuda()", "tensor_to_device", "replace", True,
      "y = torch.from_numpy(y).npu()",
      "Same as x."),
])

E("gs_test", "test.py", "explicit_replacement",
  "AbnerHqC/GaitSet test.py (entry point without any torch import)", [
    C("from datetime import datetime", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script; model.py uses Tensor.npu() which needs torch_npu loaded (before autoload versions)."),
])

E("gs_train", "train.py", "explicit_replacement",
  "AbnerHqC/GaitSet train.py (entry point without any torch import)", [
    C("from model.initialization import initialization", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script; same reason as test.py."),
])

E("gs_pretreatment", "pretreatment.py", "explicit_replacement",
  "AbnerHqC/GaitSet pretreatment.py (CPU multiprocessing silhouette cropping)", [])

# ----------------------------------------------------------------------------------------------
# GaitGraph (tteepe/GaitGraph) incl. vendored simple-HRNet
# ----------------------------------------------------------------------------------------------
E("gg_common", "src/common.py", "explicit_replacement",
  "tteepe/GaitGraph src/common.py (argparse, environment setup, checkpoint helpers)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = opt.gpus', "env_var", "replace", False,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = opt.gpus',
      "Device selection only (default '0'); set after torch import, effect on torch_npu unconfirmed."),
    C("if opt.cuda and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if opt.cuda and not torch.npu.is_available():",
      "Raises RuntimeError on an NPU host with the default --gpus 0."),
    C("torch.cuda.manual_seed(opt.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(opt.seed)",
      "Reproducibility only; the CUDA call is a lazy no-op without CUDA."),
    C("checkpoint = torch.load(opt.checkpoint_path)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(opt.checkpoint_path, map_location='npu')",
      "Resuming a GPU-written checkpoint raises on a host without CUDA."),
])

E("gg_losses", "src/losses.py", "explicit_replacement",
  "tteepe/GaitGraph src/losses.py (SupConLoss from HobbitLong/SupContrast)", [
    C("device = torch.device('cuda') if features.is_cuda else torch.device('cpu')", "device_type", "replace", True,
      "device = features.device",
      "features.is_cuda is False for NPU tensors, so masks are built on CPU and multiplied with NPU logits."),
])

E("gg_train", "src/train.py", "explicit_replacement",
  "tteepe/GaitGraph src/train.py (SupCon training loop, AMP, OneCycleLR, ray tune)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Training entry script."),
    C("points = points.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "points = points.npu(non_blocking=True)",
      "Input batch."),
    C("labels = labels.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "labels = labels.npu(non_blocking=True)",
      "Labels feed the SupCon mask on the features' device."),
    C("with torch.cuda.amp.autocast(enabled=opt.use_amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=opt.use_amp):",
      "With --use_amp the CUDA autocast disables itself on an NPU host: mixed precision silently off."),
    C("pin_memory=True,", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu',",
      "Without a pin device DataLoader pins only when CUDA is available, so pinning is silently skipped; "
      "performance only (unconfirmed in /work/shared/knowledge)."),
    C("num_workers=opt.num_workers, pin_memory=True", "pin_memory", "replace", False,
      "dataset_valid, batch_size=opt.batch_size_validation, num_workers=opt.num_workers, pin_memory=True, pin_memory_device='npu'",
      "Same as the training loader."),
    C("model.cuda()", "tensor_to_device", "replace", True,
      "model.npu()",
      "Model placement."),
    C("criterion.cuda()", "tensor_to_device", "replace", False,
      "criterion.npu()",
      "SupConLoss has no parameters or buffers; Module.cuda() is a no-op here."),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "removal", False, None,
      "DataParallel is unsupported on Ascend; the guard uses torch.cuda.device_count() (0 on an NPU host), so the "
      "block is dead after the port and removing it is clean-up. Porting only the guard would activate it."),
    C("scaler = torch.cuda.amp.GradScaler(enabled=opt.use_amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=opt.use_amp)",
      "With NPU autocast and a self-disabled CUDA scaler, fp16 gradients go unscaled."),
    C("sample_input = sample_input.cuda()", "tensor_to_device", "replace", True,
      "sample_input = sample_input.npu()",
      "writer.add_graph traces the NPU model; a CPU input would fail."),
    C('resources_per_trial={"gpu": 1},', "device_type", "replace", False,
      'resources_per_trial={"NPU": 1},',
      "Only with --tune: Ray sees 0 GPUs on an NPU host and would never schedule the trial. Ray's NPU resource "
      "name is unconfirmed in /work/shared/knowledge."),
])

E("gg_evaluate", "src/evaluate.py", "explicit_replacement",
  "tteepe/GaitGraph src/evaluate.py (embedding extraction and CASIA-B evaluation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Also run as a script (__main__)."),
    C("            if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "            if torch.npu.is_available():",
      "False on an NPU host: inputs stay on CPU while the model is on the NPU."),
    C("points = points.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "points = points.npu(non_blocking=True)",
      "Input batch."),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = torch.npu.is_available()",
      "Otherwise the model stays on CPU while evaluate() moves inputs to the NPU."),
    C("model.cuda()", "tensor_to_device", "replace", True,
      "model.npu()",
      "Model placement."),
    C("checkpoint = torch.load(opt.weights_path)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(opt.weights_path, map_location='npu')",
      "Released GaitGraph weights were saved from CUDA tensors."),
])

E("gg_resgcn", "src/models/ResGCNv1/modules.py", "explicit_replacement",
  "tteepe/GaitGraph src/models/ResGCNv1/modules.py (ResGCN blocks; device-agnostic)", [])

E("gg_simple_hrnet", "src/pose_estimator/simple_HRNet/SimpleHRNet.py", "explicit_replacement",
  "stefanopini/simple-HRNet SimpleHRNet.py as vendored by tteepe/GaitGraph", [
    C("elif 'cpu' == str(self.device):", "device_type", "add_branch", True,
      "elif 'npu' in str(self.device):  # Ascend: single device, no DataParallel",
      "The constructor raises ValueError('Wrong device name.') for any device that is neither cuda nor cpu."),
])

E("gg_pose_extract", "src/preparation/pose_estimation.py", "explicit_replacement",
  "tteepe/GaitGraph keypoint extraction script (SimpleHRNet + YOLOv3 over CASIA-B videos)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script."),
    C('parser.add_argument("--device", default="cuda",', "device_type", "replace", True,
      'parser.add_argument("--device", default="npu",',
      "Default device; torch.device('cuda') sends SimpleHRNet down the DataParallel/CUDA path and fails."),
    C('if device.type == "cuda":  # report peak memory', "device_type", "replace", False,
      'if device.type == "npu":  # report peak memory',
      "Logging only; unported the branch is simply skipped."),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", True,
      'print(f"Peak NPU memory: {torch.npu.max_memory_allocated(device) / 2 ** 20:.0f} MiB")',
      "Once the guard is ported this runs with an NPU device; the CUDA call would raise."),
])

E("gg_docker", "Dockerfile", "explicit_replacement",
  "tteepe/GaitGraph Dockerfile (pytorch/pytorch CUDA runtime base; existence upstream uncertain)", [
    C("FROM pytorch/pytorch:1.8.1-cuda11.1-cudnn8-runtime", "env_var", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "The CUDA runtime image has no CANN toolkit; a CANN base image is needed (exact image name/tag unconfirmed)."),
    C("ENV NVIDIA_VISIBLE_DEVICES all", "env_var", "removal", False, None,
      "nvidia-container-runtime setting, inert on Ascend (devices are passed as /dev/davinciN or by "
      "Ascend-Docker-Runtime)."),
    C("ENV NVIDIA_DRIVER_CAPABILITIES compute,utility", "env_var", "removal", False, None,
      "Inert on Ascend."),
])

E("gg_requirements", "requirements.txt", "explicit_replacement",
  "tteepe/GaitGraph requirements.txt", [
    C("torch>=1.8.1", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post10",
      "torch_npu must be installed and match the torch version exactly (torch 2.1.0 for this pin)."),
])

# ----------------------------------------------------------------------------------------------
# Gait3D-Benchmark (Gait3D/Gait3D-Benchmark, OpenGait-derived, SMPLGait)
# ----------------------------------------------------------------------------------------------
E("g3d_smplgait", "lib/modeling/models/smplgait_64pixel.py", "explicit_replacement",
  "Gait3D/Gait3D-Benchmark lib/modeling/models/smplgait_64pixel.py (SMPL branch with is_cuda guards)", [
    C("if sps.is_cuda:", "device_type", "replace", True,
      "if sps.is_npu:",
      "is_cuda is False for NPU tensors: the identity stays on CPU and `sps + iden` fails."),
    C("iden = iden.cuda()", "tensor_to_device", "replace", True,
      "iden = iden.npu()",
      "Reached once the guard is ported."),
    C("if outs.is_cuda:", "device_type", "replace", True,
      "if outs.is_npu:",
      "Same pattern for the zero padding tensor concatenated with NPU features."),
    C("zero_tensor = zero_tensor.cuda()", "tensor_to_device", "replace", True,
      "zero_tensor = zero_tensor.npu()",
      "Reached once the guard is ported."),
])

E("g3d_train_sh", "train.sh", "explicit_replacement",
  "Gait3D/Gait3D-Benchmark launcher (env exports, nvidia-smi, torch.distributed.launch)", [
    C("export OMP_NUM_THREADS=4", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; often already sourced, not marked required."),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "Ignored by CANN; the OpenGait-style main.py compares world size with device_count and raises on a larger host."),
    C('echo "Running ${MODEL} (${PHASE}) on ${NGPUS} GPU(s): ${CUDA_VISIBLE_DEVICES}"', "env_var", "replace", False,
      'echo "Running ${MODEL} (${PHASE}) on ${NGPUS} NPU(s): ${ASCEND_RT_VISIBLE_DEVICES}"',
      "Log text only."),
    C("nvidia-smi --query-gpu=", "device_capability_check", "replace", False,
      "npu-smi info",
      "No nvidia-smi on an Ascend host; the script has no `set -e`, so it only prints an error."),
])

E("g3d_config", "config/smplgait_64pixel.yaml", "explicit_replacement",
  "Gait3D/Gait3D-Benchmark config/smplgait_64pixel.yaml", [])
