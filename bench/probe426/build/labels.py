"""Labels for probe426 (person search + pedestrian attribute recognition, CUDA -> Ascend NPU).

One entry per upstream file under files/<id>/upstream/<path>. Each change names its line by a
substring that occurs on exactly one line ("=text" = the stripped line equals text).
Ports are written explicitly (torch.npu.*, 'npu', hccl); no transfer_to_npu shortcut.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


TORCH_NPU_ENTRY = ("entry script: the port targets torch 2.1.0 + torch_npu 2.1.0.postN, where the explicit import is "
                   "mandatory (device-backend autoload only from torch_npu 2.5.1, knowledge §1.1)")

# --------------------------------------------------------------------------------------------- #
#                                   SeqNet (serend1p1ty/SeqNet)                                 #
# --------------------------------------------------------------------------------------------- #
E("seqnet_train", "train.py", "explicit_replacement",
  "serend1p1ty/SeqNet train.py (yacs cfg, single-device training loop)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", TORCH_NPU_ENTRY),
  ])

E("seqnet_defaults", "defaults.py", "device_branch_or_abstraction",
  "serend1p1ty/SeqNet defaults.py (yacs defaults; cfg.DEVICE feeds torch.device)", [
      C('_C.DEVICE = "cuda"', "device_type", "replace", True, '_C.DEVICE = "npu"',
        "every tensor/model placement in train.py/engine.py goes through torch.device(cfg.DEVICE); "
        "'cuda' fails on an NPU host"),
  ])

E("seqnet_engine", "engine.py", "explicit_replacement",
  "serend1p1ty/SeqNet engine.py (train_one_epoch / evaluate_performance)", [
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "torch.cuda.empty_cache() only acts when CUDA is initialised, so on an NPU host it is a silent no-op; "
        "porting it returns the gallery activations to the NPU caching allocator (memory headroom only)"),
  ])

E("seqnet_model", "models/seqnet.py", "explicit_replacement",
  "serend1p1ty/SeqNet models/seqnet.py (torchvision Faster R-CNN + NAE embedding + OIM)", [
      C("from torchvision.ops import MultiScaleRoIAlign", "unsupported_op_workaround", "npu_only_addition", True,
        "import torchvision_npu",
        "MultiScaleRoIAlign (roi_align) and batched_nms in RPN/RoIHeads are torchvision C++ ops with CPU/CUDA "
        "kernels only; torchvision_npu registers NPU nms/roi_align (knowledge §6)"),
  ])

E("seqnet_utils", "utils/utils.py", "explicit_replacement",
  "serend1p1ty/SeqNet utils/utils.py (DETR-style MetricLogger, checkpoint helpers, seeding)", [
      C('device="cuda")', "device_type", "replace", False,
        't = torch.tensor([self.count, self.total], dtype=torch.float64, device="npu")',
        "only reached under torch.distributed; SeqNet's train.py never initialises a process group, so the "
        "early return always fires. Would need 'npu' (and probably float32, fp64 support is limited) under an "
        "hccl launch"),
      C("has_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
        "has_cuda = torch.npu.is_available()",
        "logging only: unported, the 'max mem' column is silently dropped"),
      C("memory=torch.cuda.max_memory_allocated() / MB,", "torch_cuda_api", "replace", False,
        "memory=torch.npu.max_memory_allocated() / MB,",
        "logging only: torch.cuda memory stats read 0 on an NPU host once has_cuda is ported"),
      C("ckpt = torch.load(ckpt_path)", "device_type", "replace", True,
        'ckpt = torch.load(ckpt_path, map_location="cpu")',
        "checkpoints written by the CUDA run hold CUDA tensors (model + SGD momentum); torch.load without "
        "map_location fails to deserialise them on a host without CUDA. load_state_dict copies onto the NPU model"),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
        "torch.cuda.manual_seed is lazily queued and does not fail; torch.manual_seed should already seed the "
        "privateuse1 device (unconfirmed in knowledge) - explicit NPU seeding for reproducibility"),
  ])

# --------------------------------------------------------------------------------------------- #
#                                        COAT (Kitware/COAT)                                    #
# --------------------------------------------------------------------------------------------- #
E("coat_train", "train.py", "explicit_replacement",
  "Kitware/COAT train.py (SeqNet-derived, optional AMP, softmax side losses)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", TORCH_NPU_ENTRY),
      C("scaler = torch.cuda.amp.GradScaler(enabled=cfg.SOLVER.AMP)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=cfg.SOLVER.AMP)",
        "torch.cuda.amp.GradScaler disables itself (warning) when CUDA is unavailable; with NPU autocast active "
        "the fp16 backward then runs without loss scaling (underflow). torch.cuda.amp.GradScaler -> "
        "torch_npu.npu.amp.GradScaler per Ascend's API list"),
  ])

E("coat_engine", "engine.py", "explicit_replacement",
  "Kitware/COAT engine.py (AMP training step, timed gallery inference)", [
      C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=use_amp):",
        "CUDA autocast does not cast ops on NPU tensors: with AMP: True in configs/prw.yaml training silently runs "
        "in fp32 (wrong precision regime, memory budget of the config no longer holds)"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "torch.cuda.synchronize lazily initialises CUDA and raises on an NPU host (gallery evaluation path)"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
        "raises on an NPU host; device is torch.device('npu') after the cfg port, which torch.cuda rejects anyway"),
  ])

E("coat_model", "models/coat.py", "explicit_replacement",
  "Kitware/COAT models/coat.py (cascaded occluded-attention transformer RoI heads on torchvision)", [
      C("from torchvision.ops import MultiScaleRoIAlign", "unsupported_op_workaround", "npu_only_addition", True,
        "import torchvision_npu",
        "roi_align / batched_nms need NPU kernels from torchvision_npu (knowledge §6)"),
      C("torch.zeros(0, 4).cuda()", "tensor_to_device", "replace", True,
        'boxes = gt_det_2nd["boxes"] if gt_det_2nd else torch.zeros(0, 4).npu()',
        "empty-detection path in gallery evaluation: .cuda() raises on an NPU host"),
  ])

E("coat_transformer", "models/transformer.py", "explicit_replacement",
  "Kitware/COAT models/transformer.py (multi-scale conv transformer, token-level occlusion augmentation)", [
      C('perm = torch.randperm(b, device="cuda")', "device_type", "replace", True,
        'perm = torch.randperm(b, device="npu")',
        "reached when MODEL.FEATURE_AUG_TYPE == 'token_shuffle'; a 'cuda' factory device fails on an NPU host "
        "(x.device would be the device-agnostic alternative)"),
  ])

E("coat_prw_cfg", "configs/prw.yaml", "device_branch_or_abstraction",
  "Kitware/COAT configs/prw.yaml (experiment config merged over defaults.py)", [
      C('DEVICE: "cuda"', "device_type", "replace", True, 'DEVICE: "npu"',
        "the YAML overrides _C.DEVICE from defaults.py, so porting the defaults alone is not enough"),
  ])

E("coat_requirements", "requirements.txt", "explicit_replacement",
  "Kitware/COAT-style requirements.txt", [
      C("torch>=1.9.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
        "the NPU backend package must be installed next to torch; torch itself must be pinned to the matching "
        "2.1.0 (wheel version = torch version + .postN, knowledge §1.1). torchvision_npu is built from "
        "Ascend/vision, not listed here"),
  ])

# --------------------------------------------------------------------------------------------- #
#                               AlignPS (daodaofr/AlignPS, mmdet 2.x)                           #
# --------------------------------------------------------------------------------------------- #
E("alignps_train", "tools/train.py", "explicit_replacement",
  "daodaofr/AlignPS tools/train.py (mmdetection 2.x launcher)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", TORCH_NPU_ENTRY),
  ])

E("alignps_apis_train", "mmdet/apis/train.py", "explicit_replacement",
  "daodaofr/AlignPS mmdet/apis/train.py (MMDataParallel / MMDistributedDataParallel, EpochBasedRunner)", [
      C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", "replace",
        True, "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel",
        "mmcv's MM*DataParallel scatter through CUDA streams; NPU wrappers live in mmcv >= 1.7 "
        "(mmcv API not covered by knowledge)"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "lazily queued on an NPU host, no failure; NPU seeding for reproducibility (torch.manual_seed coverage "
        "of privateuse1 unconfirmed)"),
      C("model = MMDistributedDataParallel(", "distributed_framework", "replace", True,
        "model = NPUDistributedDataParallel(",
        "distributed wrapper must be the NPU one (see import)"),
      C("=model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),",
        "Module.cuda() raises on an NPU host"),
      C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
        "device_ids=[torch.npu.current_device()],",
        "torch.cuda.current_device() raises on an NPU host"),
      C("model = MMDataParallel(", "distributed_framework", "replace", True, "model = NPUDataParallel(",
        "single-process path: MMDataParallel.scatter uses CUDA streams"),
      C("model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "tensor_to_device", "replace", True,
        "model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)",
        "Module.cuda(i) raises on an NPU host"),
      C("runner.resume(cfg.resume_from)", "device_type", "replace", True,
        "runner.resume(cfg.resume_from, map_location='cpu')",
        "mmcv's resume(map_location='default') remaps storages only when CUDA is available; otherwise it calls "
        "torch.load without map_location and the CUDA optimizer state in the checkpoint cannot be "
        "deserialised (mmcv behaviour from memory, not in knowledge)"),
  ])

E("alignps_dist_sh", "tools/dist_train.sh", "explicit_replacement",
  "daodaofr/AlignPS tools/dist_train.sh (torch.distributed.launch wrapper)", [
      C("CONFIG=$1", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment; usually already sourced by the shell profile or the container image"),
  ])

E("alignps_cfg",
  "configs/fcos/fcos_r50_caffe_fpn_gn-head_4x4_1x_cuhk_reid_1500_stage1_fpncat_dcn_epoch24_multiscale_focal_x4_bg-2_sub_triqueue_dcn0.py",
  "explicit_replacement",
  "daodaofr/AlignPS configs/fcos/*cuhk_reid*.py (mmdet config with dist_params)", [
      C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True, "dist_params = dict(backend='hccl')",
        "init_dist(args.launcher, **cfg.dist_params) -> init_process_group('nccl') fails on NPU"),
  ])

E("alignps_reid_head", "mmdet/models/dense_heads/fcos_reid_head_focal_sub_triqueue.py", "explicit_replacement",
  "daodaofr/AlignPS mmdet/models/dense_heads/fcos_reid_head_focal_sub_triqueue.py (FCOS + re-id branch)", [])

E("alignps_ulm", "mmdet/models/reid_heads/unlabeled_matching_layer.py", "explicit_replacement",
  "daodaofr/AlignPS mmdet/models/reid_heads/unlabeled_matching_layer.py (OIM circular queue)", [
      C('self.register_buffer("queue", torch.zeros(queue_size, feat_len).cuda())', "tensor_to_device", "replace",
        True, 'self.register_buffer("queue", torch.zeros(queue_size, feat_len))',
        "raises while building the detector on an NPU host; the buffer follows model.npu() anyway"),
  ])

E("alignps_apis_test", "mmdet/apis/test.py", "explicit_replacement",
  "daodaofr/AlignPS mmdet/apis/test.py (single/multi-GPU test, result collection over NCCL)", [
      C("=device='cuda')", "device_type", "replace", True, "device='npu')",
        "collect_results_cpu (default gpu_collect=False): broadcast buffer; hccl needs NPU tensors"),
      C("bytearray(tmpdir.encode()), dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
        "bytearray(tmpdir.encode()), dtype=torch.uint8, device='npu')",
        "rank-0 tmpdir name tensor copied into the broadcast buffer"),
      C("bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
        "bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='npu')",
        "--gpu-collect path: all_gather over hccl"),
      C("shape_tensor = torch.tensor(part_tensor.shape, device='cuda')", "device_type", "replace", True,
        "shape_tensor = torch.tensor(part_tensor.shape, device='npu')", "--gpu-collect path"),
      C("part_send = torch.zeros(shape_max, dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
        "part_send = torch.zeros(shape_max, dtype=torch.uint8, device='npu')", "--gpu-collect path"),
  ])

E("alignps_focal", "mmdet/models/losses/focal_loss.py", "explicit_replacement",
  "daodaofr/AlignPS mmdet/models/losses/focal_loss.py (mmcv sigmoid_focal_loss with PyTorch fallback)", [])

E("alignps_docker", "docker/Dockerfile", "explicit_replacement",
  "open-mmlab/mmdetection 2.x docker/Dockerfile as carried by AlignPS", [
      C("FROM pytorch/pytorch:", "env_var", "replace", True,
        "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
        "base image must carry CANN instead of CUDA/cuDNN; tag layout from Ascend/cann-container-image "
        "(registry name unconfirmed)"),
      C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None, "inert without nvcc"),
      C("ENV TORCH_NVCC_FLAGS=", "env_var", "removal", False, None, "inert without nvcc"),
      C("RUN pip install mmcv-full==1.1.5", "custom_cuda_extension", "replace", True,
        "RUN MMCV_WITH_OPS=1 FORCE_NPU=1 pip install mmcv-full==1.7.2",
        "cu101 wheel ships CUDA kernels linked against libcudart; mmcv.ops (focal loss, DCN, nms) must be "
        "built for NPU (FORCE_NPU build flag from mmcv docs, unconfirmed in knowledge)"),
      C("RUN conda clean --all", "import_torch_npu", "replace", True,
        "RUN pip install torch==2.1.0 torch-npu==2.1.0.post17",
        "the CUDA base image supplied torch; on the CANN image torch + torch_npu (2.1.0.post17 pairs with "
        "CANN 8.3.RC1, knowledge §1.2) have to be installed explicitly"),
      C('ENV FORCE_CUDA="1"', "env_var", "removal", False, None,
        "mmdet 2.x builds no CUDA extension itself; inert"),
  ])

# --------------------------------------------------------------------------------------------- #
#                          OIM (Cysu/open-reid, OIM loss example)                               #
# --------------------------------------------------------------------------------------------- #
E("oim_example", "examples/oim_loss.py", "explicit_replacement",
  "Cysu/open-reid examples/oim_loss.py (OIM loss training with nn.DataParallel)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", TORCH_NPU_ENTRY),
      C("model = nn.DataParallel(model).cuda()", "distributed_framework", "replace", True, "model = model.npu()",
        "torch.nn.DataParallel is unsupported on NPU (Ascend 2.7.1 API list, msFmkTransplt README); "
        "single-device training, every model.module below must follow"),
      C("criterion = OIMLoss(model.module.num_features, num_classes,", "distributed_framework", "replace", True,
        "criterion = OIMLoss(model.num_features, num_classes,",
        "no DataParallel wrapper any more: .module raises AttributeError"),
      C("momentum=args.oim_momentum).cuda()", "tensor_to_device", "replace", True,
        "momentum=args.oim_momentum).npu()",
        "OIMLoss owns the lut buffer: Module.cuda() must allocate on CUDA and raises on an NPU host"),
      C("if hasattr(model.module, 'base'):", "distributed_framework", "replace", True,
        "if hasattr(model, 'base'):", "model.module is evaluated before hasattr and raises"),
      C("base_param_ids = set(map(id, model.module.base.parameters()))", "distributed_framework", "replace", True,
        "base_param_ids = set(map(id, model.base.parameters()))", "DataParallel removed"),
      C("{'params': model.module.base.parameters(), 'lr_mult': 0.1},", "distributed_framework", "replace", True,
        "{'params': model.base.parameters(), 'lr_mult': 0.1},", "DataParallel removed"),
      C("'state_dict': model.module.state_dict(),", "distributed_framework", "replace", True,
        "'state_dict': model.state_dict(),", "DataParallel removed"),
      C("model.module.load_state_dict(checkpoint['state_dict'])", "distributed_framework", "replace", True,
        "model.load_state_dict(checkpoint['state_dict'])", "DataParallel removed"),
  ])

E("oim_trainers", "reid/trainers.py", "explicit_replacement",
  "Cysu/open-reid reid/trainers.py (Trainer._parse_data)", [
      C("inputs = [Variable(imgs)]", "tensor_to_device", "replace", True, "inputs = [Variable(imgs.npu())]",
        "DataParallel used to scatter the CPU batch onto the GPUs; with the wrapper removed the images must be "
        "moved explicitly or the NPU model gets CPU input"),
      C("targets = Variable(pids.cuda())", "tensor_to_device", "replace", True, "targets = Variable(pids.npu())",
        ".cuda() raises on an NPU host"),
  ])

E("oim_cnn", "reid/feature_extraction/cnn.py", "explicit_replacement",
  "Cysu/open-reid reid/feature_extraction/cnn.py (extract_cnn_feature)", [
      C("inputs = Variable(inputs, volatile=True)", "tensor_to_device", "replace", True,
        "inputs = Variable(inputs.npu(), volatile=True)",
        "same DataParallel-scatter reasoning as trainers.py: evaluation batches stay on the CPU otherwise"),
  ])

E("oim_serial", "reid/utils/serialization.py", "explicit_replacement",
  "Cysu/open-reid reid/utils/serialization.py (load_checkpoint)", [
      C("checkpoint = torch.load(fpath)", "device_type", "replace", True,
        "checkpoint = torch.load(fpath, map_location='cpu')",
        "checkpoints hold the CUDA state_dict saved by the GPU run; deserialising CUDA storages fails without CUDA"),
  ])

E("oim_loss", "reid/loss/oim.py", "explicit_replacement",
  "Cysu/open-reid reid/loss/oim.py (legacy autograd.Function OIM with lut buffer)", [])

# --------------------------------------------------------------------------------------------- #
#              PA-100K strong baseline (valencebond/Rethinking_of_PAR)                           #
# --------------------------------------------------------------------------------------------- #
E("par_train", "train.py", "explicit_replacement",
  "valencebond/Rethinking_of_PAR train.py (DDP/DataParallel, SyncBN, EMA)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", TORCH_NPU_ENTRY),
      C("args.device = 'cuda:%d' % args.local_rank", "device_type", "replace", False,
        "args.device = 'npu:%d' % args.local_rank",
        "only printed in the 'use GPU...' log line; no tensor uses args.device"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "raises on an NPU host; binds each rank to its NPU"),
      C("torch.distributed.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace",
        True, "torch.distributed.init_process_group(backend='hccl', init_method='env://')",
        "NCCL is unavailable on NPU"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
        "raises on an NPU host"),
      C("model = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
        "model = model  # nn.DataParallel is unsupported on NPU: single-device training",
        "torch.nn.DataParallel is ✘ in Ascend's API list; the .module accesses below must then tolerate an "
        "unwrapped model"),
      C("criterion = criterion.cuda()", "tensor_to_device", "replace", False, "criterion = criterion.npu()",
        "ScaledBCELoss registers no parameters or buffers, so Module.cuda() applies to nothing and does not "
        "touch CUDA; ported for consistency"),
      C("param_groups = [{'params': model.module.finetune_params(),", "distributed_framework", "replace", True,
        "param_groups = [{'params': getattr(model, 'module', model).finetune_params(),",
        "single-device model has no .module after the DataParallel removal (DDP still has one)"),
      C("{'params': model.module.fresh_params(),", "distributed_framework", "replace", True,
        "{'params': getattr(model, 'module', model).fresh_params(),", "as above"),
      C("=model.module.finetune_params(),", "distributed_framework", "replace", True,
        "getattr(model, 'module', model).finetune_params(),", "as above (default BN_WD=False branch)"),
      C("=model.module.fresh_params(),", "distributed_framework", "replace", True,
        "getattr(model, 'module', model).fresh_params(),", "as above"),
  ])

E("par_engine", "batch_engine.py", "explicit_replacement",
  "valencebond/Rethinking_of_PAR batch_engine.py (batch_trainer / valid_trainer)", [
      C("imgs, gt_label = imgs.cuda(), gt_label.cuda()", "tensor_to_device", "replace", True,
        "imgs, gt_label = imgs.npu(), gt_label.npu()", "raises on an NPU host"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "lazy CUDA init raises on an NPU host (every training step)"),
      C("imgs = imgs.cuda()", "tensor_to_device", "replace", True, "imgs = imgs.npu()", "raises on an NPU host"),
      C("gt_label = gt_label.cuda()", "tensor_to_device", "replace", True, "gt_label = gt_label.npu()",
        "raises on an NPU host"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on an NPU host (CUDA never initialised); calling it per validation batch is itself "
        "questionable, perf only"),
  ])

E("par_utils", "tools/utils.py", "explicit_replacement",
  "valencebond/Rethinking_of_PAR tools/utils.py (seeding, checkpoint, device helpers)", [
      C("torch.cuda.manual_seed(rand_seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(rand_seed)",
        "runs at import time of train.py/infer.py; lazily queued, no failure; NPU seeding for reproducibility"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = visible_devices", "env_var", "replace", False,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = visible_devices",
        "set_devices is dead code in this repo (inherited from the DeepMAR code base); ported for consistency"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if not torch.npu.is_available():", "debug helper, not called by train.py/infer.py"),
      C("allocated {torch.cuda.memory_allocated()", "torch_cuda_api", "replace", False,
        "print(f'[{tag}] allocated {torch.npu.memory_allocated() / 2 ** 20:.0f} MiB, '",
        "debug helper, not called"),
      C("reserved {torch.cuda.memory_reserved()", "torch_cuda_api", "replace", False,
        "f'reserved {torch.npu.memory_reserved() / 2 ** 20:.0f} MiB')", "debug helper, not called"),
  ])

E("par_loss", "losses/scaledbce_loss.py", "explicit_replacement",
  "valencebond/Rethinking_of_PAR losses/scaledbce_loss.py (sample-weighted scaled BCE)", [
      C("loss_m = (loss_m * sample_weight.cuda())", "tensor_to_device", "replace", True,
        "loss_m = (loss_m * sample_weight.npu())",
        "sample_weight is built on the CPU from targets.cpu(); .cuda() raises on an NPU host whenever "
        "LOSS.SAMPLE_WEIGHT is set (the PA-100K baseline default)"),
  ])

E("par_run", "run.sh", "explicit_replacement",
  "valencebond/Rethinking_of_PAR run.sh (torch.distributed.launch on 2 GPUs, then infer)", [
      C("CFG=${1:-", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment; usually already sourced by the profile/container"),
      C("CUDA_VISIBLE_DEVICES=0,1 python", "env_var", "replace", False,
        "ASCEND_RT_VISIBLE_DEVICES=0,1 python -m torch.distributed.launch --nproc_per_node=2 --master_port=29501 \\",
        "the mask equals what local ranks 0,1 pick anyway, so leaving it is harmless; ported so the "
        "script keeps meaning what it says"),
      C("CUDA_VISIBLE_DEVICES=0 python infer.py", "env_var", "replace", False,
        "ASCEND_RT_VISIBLE_DEVICES=0 python infer.py --cfg ${CFG}",
        "infer.py uses npu:0, the same device the mask selects"),
  ])

E("par_infer", "infer.py", "device_branch_or_abstraction",
  "valencebond/Rethinking_of_PAR infer.py (test-set evaluation with a module-level device)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", TORCH_NPU_ENTRY),
      C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
        "unported this silently falls back to the CPU on an NPU host (runs, but not on the NPU)"),
  ])

# --------------------------------------------------------------------------------------------- #
#         DeepMAR PA-100K baseline (dangweili/pedestrian-attribute-recognition-pytorch)          #
# --------------------------------------------------------------------------------------------- #
E("deepmar_train", "baseline/train_deepmar_resnet50.py", "explicit_replacement",
  "dangweili/pedestrian-attribute-recognition-pytorch baseline/train_deepmar_resnet50.py", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", TORCH_NPU_ENTRY),
      C("model_w = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
        "model_w = model  # nn.DataParallel is unsupported on NPU",
        "DataParallel ✘ on NPU; model_w is only called and passed to the feature extractor, no .module use"),
      C("=model_w.cuda()", "tensor_to_device", "replace", True, "model_w.npu()", "raises on an NPU host"),
      C("imgs_var = Variable(imgs).cuda()", "tensor_to_device", "replace", True,
        "imgs_var = Variable(imgs).npu()", "raises on an NPU host"),
      C("targets_var = Variable(targets).cuda()", "tensor_to_device", "replace", True,
        "targets_var = Variable(targets).npu()", "raises on an NPU host"),
      C("weight=Variable(weights.cuda())", "tensor_to_device", "replace", True,
        "loss = criterion(score, targets_var, weight=Variable(weights.npu())) * num_att",
        "raises on an NPU host"),
  ])

E("deepmar_utils", "baseline/utils/utils.py", "explicit_replacement",
  "dangweili/pedestrian-attribute-recognition-pytorch baseline/utils/utils.py", [
      C("torch.cuda.manual_seed(rand_seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(rand_seed)",
        "only with --set_seed; lazily queued, no failure"),
      C("visible_devices = ', '.join(str(i) for i in sys_device_ids)", "env_var", "replace", False,
        "visible_devices = ','.join(str(i) for i in sys_device_ids)",
        "ASCEND_RT_VISIBLE_DEVICES stops parsing at the first invalid character ('1, 2,3' -> only 1, knowledge "
        "ascend-distributed §1); after the DataParallel removal only the first listed device is used, which is "
        "exactly the one that survives, so not required"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = visible_devices", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = visible_devices",
        "-d/--sys_device_ids is the script's only device selector; unported, '-d (2,)' silently trains on NPU 0 "
        "(set before any NPU initialisation, so the runtime variable still applies)"),
      C("state[key] = val.cuda(device=device_id)", "tensor_to_device", "replace", True,
        "state[key] = val.npu(device_id)",
        "on --resume the optimizer state is loaded to CPU and moved here; .cuda() raises but the bare except "
        "swallows it, leaving CPU momentum buffers that break optimizer.step() against NPU params"),
  ])

E("deepmar_eval", "baseline/utils/evaluate.py", "explicit_replacement",
  "dangweili/pedestrian-attribute-recognition-pytorch baseline/utils/evaluate.py (mA / instance metrics)", [
      C("imgs_var = Variable(imgs, volatile=True).cuda()", "tensor_to_device", "replace", True,
        "imgs_var = Variable(imgs, volatile=True).npu()", "raises on an NPU host"),
  ])
