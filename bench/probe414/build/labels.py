"""Labels for probe414 (gait recognition: OpenGait, GaitSet, GaitGL, GaitGraph; CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit for an explicit torch_npu port.
`required` = with every other labelled line already ported, would leaving this line unchanged
fail, compute something wrong, or silently do the wrong thing on an NPU host?
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


X = "explicit_replacement"
B = "device_branch_or_abstraction"

# ---------------------------------------------------------------- OpenGait
E("og_main", "opengait/main.py", X, "ShiqiYu/OpenGait opengait/main.py (DDP entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "Entry point of every OpenGait run; registers the npu device, torch.npu and the hccl backend "
      "(mandatory before torch_npu 2.5.1 autoload; kept explicit)."),
    C("torch.distributed.init_process_group('nccl'", "dist_backend", "replace", True,
      "torch.distributed.init_process_group('hccl', init_method='env://')",
      "NCCL is not available on Ascend; collectives (all_gather of embeddings, sampler broadcast) need HCCL."),
    C("if torch.distributed.get_world_size() != torch.cuda.device_count():", "torch_cuda_api", "replace", True,
      "if torch.distributed.get_world_size() != torch.npu.device_count():",
      "torch.cuda.device_count() is 0 on an NPU host, so the sanity check always raises."),
    C("torch.cuda.device_count(), torch.distributed.get_world_size()))", "torch_cuda_api", "replace", False,
      "torch.npu.device_count(), torch.distributed.get_world_size()))",
      "Only the error message argument; would print 0 devices. Cosmetic once the check itself is ported."),
])

E("og_base_model", "opengait/modeling/base_model.py", X,
  "ShiqiYu/OpenGait opengait/modeling/base_model.py (BaseModel: AMP, device, ckpt, train/test loops)", [
    C("from torch.cuda.amp import autocast", "amp", "replace", True, "from torch.npu.amp import autocast",
      "torch.cuda.amp.autocast on an NPU host warns and disables itself: enable_float16 (true in every "
      "shipped config) would silently run fp32. The `with autocast(enabled=...)` call sites stay unchanged."),
    C("from torch.cuda.amp import GradScaler", "amp", "replace", True, "from torch.npu.amp import GradScaler",
      "A CUDA GradScaler disables itself without CUDA: with NPU autocast active the fp16 loss would be "
      "back-propagated unscaled (gradient underflow). `self.Scaler = GradScaler()` itself stays."),
    C("torch.cuda.set_device(self.device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(self.device)",
      "Binds each DDP rank to its device; raises without CUDA."),
    C('self.to(device=torch.device("cuda", self.device))', "device_type", "replace", True,
      'self.to(device=torch.device("npu", self.device))', "Model placement."),
    C('checkpoint = torch.load(save_name, map_location=torch.device("cuda", self.device))', "tensor_to_device",
      "replace", True, 'checkpoint = torch.load(save_name, map_location=torch.device("npu", self.device))',
      "map_location to a CUDA device fails on an NPU host (released OpenGait checkpoints are GPU-saved)."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "torch.cuda.empty_cache() is a no-op when CUDA was never initialised; the NPU cache is just not "
      "released after the in-training test. Memory/perf only."),
])

E("og_common", "opengait/utils/common.py", X, "ShiqiYu/OpenGait opengait/utils/common.py (np2var, seeds, DDP wrapper)", [
    C("return autograd.Variable(x, **kwargs).cuda()", "tensor_to_device", "replace", True,
      "return autograd.Variable(x, **kwargs).npu()",
      "All inputs/labels/seqL go through ts2var; .cuda() raises without CUDA."),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "torch.manual_seed(seed) on the line above already seeds registered custom devices (torch >= 2.1 "
      "_seed_custom_device), and torch.cuda.manual_seed_all is a lazy no-op without CUDA. Consistency only."),
    C("device = torch.cuda.current_device()", "torch_cuda_api", "replace", True, "device = torch.npu.current_device()",
      "DDP device_ids/output_device; torch.cuda.current_device() raises without CUDA."),
])

E("og_msg_manager", "opengait/utils/msg_manager.py", X,
  "ShiqiYu/OpenGait opengait/utils/msg_manager.py (logging/tensorboard; device-agnostic)", [])

E("og_evaluator", "opengait/evaluation/evaluator.py", X,
  "ShiqiYu/OpenGait opengait/evaluation/evaluator.py (CASIA-B/OUMVLP/GREW/Gait3D protocols)", [])

E("og_metric", "opengait/evaluation/metric.py", X, "ShiqiYu/OpenGait opengait/evaluation/metric.py (cuda_dist, mAP)", [
    C("x = torch.from_numpy(x).cuda()", "tensor_to_device", "replace", True, "x = torch.from_numpy(x).npu()",
      "Probe features moved to the accelerator for the distance matrix. Function name cuda_dist is kept."),
    C("y = torch.from_numpy(y).cuda()", "tensor_to_device", "replace", True, "y = torch.from_numpy(y).npu()",
      "Gallery features."),
    C("dist = torch.zeros(n_x, n_y).cuda()", "tensor_to_device", "replace", True,
      "dist = torch.zeros(n_x, n_y).npu()", "Accumulator must live with x/y."),
])

E("og_sampler", "opengait/data/sampler.py", X, "ShiqiYu/OpenGait opengait/data/sampler.py (TripletSampler, sync_random_sample_list)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on an NPU host, so idx would stay on the CPU and the HCCL broadcast below rejects host tensors."),
    C("idx = idx.cuda()", "tensor_to_device", "replace", True, "idx = idx.npu()",
      "The broadcast tensor must be on the NPU for HCCL."),
])

E("og_dataset", "opengait/data/dataset.py", X, "ShiqiYu/OpenGait opengait/data/dataset.py (pkl loader; device-agnostic)", [])

E("og_modules", "opengait/modeling/modules.py", X, "ShiqiYu/OpenGait opengait/modeling/modules.py (HPP, SetBlockWrapper, GaitAlign)", [
    C("from torchvision.ops import RoIAlign", "unsupported_op_workaround", "npu_only_addition", False,
      "import torchvision_npu",
      "GaitAlign (GaitEdge only) calls torchvision roi_align; an NPU kernel comes from torchvision_npu. "
      "Without it the op may hit the CPU fallback or fail - unconfirmed which, and only GaitEdge uses it."),
])

E("og_gaitset", "opengait/modeling/models/gaitset.py", X, "ShiqiYu/OpenGait opengait/modeling/models/gaitset.py", [])
E("og_gaitpart", "opengait/modeling/models/gaitpart.py", X, "ShiqiYu/OpenGait opengait/modeling/models/gaitpart.py", [])
E("og_gaitgl", "opengait/modeling/models/gaitgl.py", X, "ShiqiYu/OpenGait opengait/modeling/models/gaitgl.py (GLConv, GeMHPP, Conv3d)", [])
E("og_baseline", "opengait/modeling/models/baseline.py", X, "ShiqiYu/OpenGait opengait/modeling/models/baseline.py (GaitBase)", [])
E("og_deepgaitv2", "opengait/modeling/models/deepgaitv2.py", X, "ShiqiYu/OpenGait opengait/modeling/models/deepgaitv2.py", [])
E("og_triplet", "opengait/modeling/losses/triplet.py", X, "ShiqiYu/OpenGait opengait/modeling/losses/triplet.py", [])

E("og_train_sh", "train.sh", X, "ShiqiYu/OpenGait train.sh (torch.distributed.launch commands)", [
    C("#!/usr/bin/env bash", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; needed only if the shell/container has not sourced it already."),
    C("gaitbase_da_casiab.yaml --phase train", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3 python -m torch.distributed.launch --nproc_per_node=4 opengait/main.py --cfgs ./configs/gaitbase/gaitbase_da_casiab.yaml --phase train --log_to_file",
      "CUDA_VISIBLE_DEVICES is ignored by the NPU runtime: on an 8-NPU host all 8 stay visible and main.py's "
      "world_size == device_count check (4 != 8) aborts."),
    C("DeepGaitV2_gait3d.yaml --phase train", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 python -m torch.distributed.launch --nproc_per_node=8 --master_port 12345 opengait/main.py --cfgs ./configs/deepgaitv2/DeepGaitV2_gait3d.yaml --phase train --log_to_file",
      "Selects all 8 devices, which is what an 8-NPU host exposes anyway; rename for correctness of intent."),
])

E("og_test_sh", "test.sh", X, "ShiqiYu/OpenGait test.sh", [
    C("gaitbase_da_casiab.yaml --phase test", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3 python -m torch.distributed.launch --nproc_per_node=4 opengait/main.py --cfgs ./configs/gaitbase/gaitbase_da_casiab.yaml --phase test",
      "4 of 8 devices: ignored variable makes the device-count check fail."),
    C("DeepGaitV2_gait3d.yaml --phase test", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0 python -m torch.distributed.launch --nproc_per_node=1 opengait/main.py --cfgs ./configs/deepgaitv2/DeepGaitV2_gait3d.yaml --phase test",
      "1 of 8 devices: same abort."),
])

E("og_cfg_gaitbase", "configs/gaitbase/gaitbase_da_casiab.yaml", X,
  "ShiqiYu/OpenGait configs/gaitbase/gaitbase_da_casiab.yaml", [])

E("og_demo_track", "demo/libs/track.py", X, "ShiqiYu/OpenGait demo/libs/track.py (ByteTrack/YOLOX tracking for the All-in-One demo)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "First module the demo imports that touches the device (module-level torch.npu query)."),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "Silently falls back to CPU on an NPU host (then runs the .half() YOLOX-x on CPU)."),
])

E("og_demo_recognise", "demo/libs/recognise.py", X, "ShiqiYu/OpenGait demo/libs/recognise.py (gait embedding + matching)", [
    C('torch.distributed.init_process_group("nccl", rank=0, world_size=1)', "dist_backend", "replace", True,
      'torch.distributed.init_process_group("hccl", rank=0, world_size=1)',
      "BaseModel needs a process group; nccl backend unavailable on Ascend."),
    C("p = torch.from_numpy(probe_embs).cuda()", "tensor_to_device", "replace", True,
      "p = torch.from_numpy(probe_embs).npu()", ".cuda() raises without CUDA."),
    C("g = torch.from_numpy(g).cuda()", "tensor_to_device", "replace", True, "g = torch.from_numpy(g).npu()",
      "Gallery embeddings."),
])

E("og_pretreatment", "datasets/pretreatment.py", X, "ShiqiYu/OpenGait datasets/pretreatment.py (cv2 silhouette cropping; CPU only)", [])

# ---------------------------------------------------------------- GaitSet (original repo)
E("gs_config", "config.py", X, "AbnerHqC/GaitSet config.py", [])

E("gs_init", "model/initialization.py", X, "AbnerHqC/GaitSet model/initialization.py", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = config["CUDA_VISIBLE_DEVICES"]', "env_var", "replace", False,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = config["CUDA_VISIBLE_DEVICES"]',
      "Device selection only; after nn.DataParallel is removed the port runs on logical device 0, which is "
      "also the first id of the default '0,1,2,3'. The config key name is left alone."),
])

E("gs_model", "model/model.py", X, "AbnerHqC/GaitSet model/model.py (Model: DataParallel, collate_fn, fit/transform/load)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "First torch import on both train.py and test.py paths (initialization.py imports this module)."),
    C("self.encoder = nn.DataParallel(self.encoder)", "distributed_framework", "removal", True, None,
      "torch.nn.DataParallel is unsupported on NPU (Ascend API list); the port trains on one NPU."),
    C("self.triplet_loss = nn.DataParallel(self.triplet_loss)", "distributed_framework", "removal", True, None,
      "Same; TripletLoss is computed on one device."),
    C("self.encoder.cuda()", "tensor_to_device", "replace", True, "self.encoder.npu()", "Model placement."),
    C("self.triplet_loss.cuda()", "tensor_to_device", "replace", False, "self.triplet_loss.npu()",
      "TripletLoss has no parameters or buffers, so Module.cuda() never touches a tensor and does not fail; "
      "renamed for consistency."),
    C("gpu_num = min(torch.cuda.device_count(), batch_size)", "torch_cuda_api", "replace", True,
      "gpu_num = min(1, batch_size)",
      "Test-time collate splits the batch per DataParallel replica. torch.cuda.device_count() is 0 "
      "(ZeroDivisionError); torch.npu.device_count() would be wrong too: without DataParallel SetNet only "
      "reads batch_frame[0], so frames of the other chunks would be mis-split silently."),
    C("return autograd.Variable(x).cuda()", "tensor_to_device", "replace", True, "return autograd.Variable(x).npu()",
      "Every batch tensor goes through ts2var."),
    C("self.encoder.load_state_dict(torch.load(encoder_ckpt))", "tensor_to_device", "replace", True,
      "self.encoder.load_state_dict({k.replace('module.', '', 1): v for k, v in torch.load(encoder_ckpt, map_location='cpu').items()})",
      "Released checkpoints hold CUDA tensors (load fails without map_location) and 'module.' keys from "
      "DataParallel, which no longer wraps the encoder."),
    C("self.optimizer.load_state_dict(torch.load(optimizer_ckpt))", "tensor_to_device", "replace", True,
      "self.optimizer.load_state_dict(torch.load(optimizer_ckpt, map_location='cpu'))",
      "Adam state saved on GPU; optimizer.load_state_dict moves it to the parameters' device."),
])

E("gs_evaluator", "model/utils/evaluator.py", X, "AbnerHqC/GaitSet model/utils/evaluator.py (cuda_dist, CASIA-B protocol)", [
    C("x = torch.from_numpy(x).cuda()", "tensor_to_device", "replace", True, "x = torch.from_numpy(x).npu()",
      "Distance matrix on the accelerator."),
    C("y = torch.from_numpy(y).cuda()", "tensor_to_device", "replace", True, "y = torch.from_numpy(y).npu()",
      "Gallery side."),
])

E("gs_network", "model/network/gaitset.py", X, "AbnerHqC/GaitSet model/network/gaitset.py (SetNet)", [])

# ---------------------------------------------------------------- GaitGL (original repo)
E("gl_train", "train.py", X, "bb12346/GaitGL train.py (argparse --gpus, env before torch import)", [
    C("os.environ['CUDA_VISIBLE_DEVICES'] = opt.gpus", "env_var", "replace", False,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = opt.gpus",
      "Device selection only once DataParallel is gone (the port uses logical device 0)."),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "Entry point; stays after the environment variable is set."),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "torch.manual_seed above already seeds the NPU generator; lazy no-op without CUDA."),
])

E("gl_model", "model/model.py", X, "bb12346/GaitGL model/model.py (module-level device, DataParallel, timing)", [
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "Module-level device global; silently CPU on an NPU host. map_location=device and all .to(device) follow it."),
    C("self.encoder = nn.DataParallel(self.encoder)", "distributed_framework", "removal", True, None,
      "nn.DataParallel unsupported on NPU."),
    C("pin_memory=True)", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu')",
      "Without a pin_memory_device, DataLoader pins only when CUDA is available: copies become synchronous. "
      "Perf only; unconfirmed whether torch_npu patches this."),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize() initialises CUDA and raises on an NPU host."),
    C("torch.cuda.synchronize()  # forward done", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # forward done", "Same; also needed for correct timing of async NPU kernels."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "No-op without CUDA; memory only."),
    C("self.encoder.load_state_dict(ckpt['encoder'])", "tensor_to_device", "replace", True,
      "self.encoder.load_state_dict({k.replace('module.', '', 1): v for k, v in ckpt['encoder'].items()})",
      "Released GaitGL weights were saved from a DataParallel encoder ('module.' keys) which the port removes."),
])

E("gl_network", "model/network/gaitgl.py", X, "bb12346/GaitGL model/network/gaitgl.py (GLConv, GeMHPP, TripletLoss)", [])

# ---------------------------------------------------------------- GaitGraph
E("gg_common", "src/common.py", X, "tteepe/GaitGraph src/common.py (parse_option, setup_environment)", [
    C("opt.cuda = opt.cuda >= 0 and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "opt.cuda = opt.cuda >= 0 and torch.npu.is_available()",
      "False on an NPU host: training silently runs on the CPU. The --cuda flag name is kept."),
    C('opt.cuda_device = torch.device(f"cuda:{opt.cuda_id}" if opt.cuda else "cpu")', "device_type", "replace", True,
      'opt.cuda_device = torch.device(f"npu:{opt.cuda_id}" if opt.cuda else "cpu")',
      "Used for set_device and checkpoint map_location."),
    C("torch.cuda.set_device(opt.cuda_device)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(opt.cuda_device)", "Raises without CUDA."),
])

E("gg_train", "src/train.py", X, "tteepe/GaitGraph src/train.py (SupCon training loop, AMP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "Entry point."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "Batch would stay on the CPU while the model is on the NPU."),
    C("points = points.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "points = points.npu(non_blocking=True)", ".cuda() raises without CUDA; pairs with the guard above."),
    C("labels = labels.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "labels = labels.npu(non_blocking=True)", "Labels feed SupConLoss masks built on the features' device."),
    C("with torch.cuda.amp.autocast(enabled=opt.use_amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=opt.use_amp):",
      "With --use_amp (the documented command) CUDA autocast disables itself: silently fp32."),
    C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',",
      "Perf only (no pinning without CUDA); unconfirmed."),
    C("val_loader = DataLoader(", "pin_memory", "replace", False,
      "val_loader = DataLoader(dataset_valid, batch_size=opt.batch_size_validation, num_workers=opt.num_workers, pin_memory=True, pin_memory_device='npu')",
      "Same for the validation loader."),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Model placement."),
    C("criterion.cuda()", "tensor_to_device", "replace", False, "criterion.npu()",
      "SupConLoss has no parameters/buffers; Module.cuda() is a no-op that never initialises CUDA."),
    C("scaler = torch.cuda.amp.GradScaler(enabled=opt.use_amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=opt.use_amp)",
      "CUDA GradScaler disables itself without CUDA: unscaled fp16 gradients under NPU autocast."),
])

E("gg_evaluate", "src/evaluate.py", X, "tteepe/GaitGraph src/evaluate.py (CASIA-B evaluation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "Stand-alone entry point for evaluation of released weights."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "Inputs would stay on the CPU."),
    C("points = points.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "points = points.npu(non_blocking=True)", "Evaluation batches."),
    C("if opt.cuda and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if opt.cuda and torch.npu.is_available():",
      "Model would stay on the CPU while evaluate() moves inputs to the NPU: device mismatch."),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Model placement for evaluation."),
    C("checkpoint = torch.load(opt.weight_path)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(opt.weight_path, map_location='cpu')",
      "Released GaitGraph weights contain CUDA tensors; deserialising them fails without CUDA."),
])

E("gg_losses", "src/losses.py", X, "tteepe/GaitGraph src/losses.py (SupConLoss, HobbitLong/SupContrast)", [
    C("device = (torch.device('cuda')", "device_type", "replace", True, "device = (torch.device('npu')",
      "Masks are built on `device`; with 'cuda' the .to(device) calls raise."),
    C("if features.is_cuda", "device_type", "replace", True, "if features.is_npu",
      "is_cuda is False for NPU tensors: masks land on the CPU and `torch.exp(logits) * logits_mask` "
      "mixes devices."),
])

E("gg_hrnet", "src/pose_estimator/simple_hrnet.py", B,
  "tteepe/GaitGraph pose estimation front-end (stefanopini/simple-HRNet SimpleHRNet + YOLOv3)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "Script entry point."),
    C("elif 'cpu' == str(self.device):", "device_type", "add_branch", True,
      "elif 'cpu' == str(self.device) or str(self.device).startswith('npu'):",
      "The device whitelist raises 'Wrong device name.' for npu; the DataParallel branch above is "
      "correctly skipped for npu."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "Default device selection; silently CPU otherwise."),
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')", "Default device when --device is not given."),
])

E("gg_requirements", "requirements.txt", X, "tteepe/GaitGraph requirements.txt", [
    C("torch>=1.7.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "torch_npu must be installed (paired with torch 2.1.0 / CANN 8.0.0 per the version matrix)."),
])
