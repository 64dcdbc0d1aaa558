# Labels for probe397 (egocentric video understanding). One C(...) per upstream line a careful
# porter would edit for Ascend NPU + torch_npu (explicit port, no transfer_to_npu).
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: import torch_npu right after torch so torch.npu / the 'npu' device and HCCL are "
               "registered before use (mandatory before torch_npu 2.5.1, still recommended after)")

# --------------------------------------------------------------------------------------------
# EgoVLP (showlab/EgoVLP): EgoClip pre-training with EgoNCE, DDP one-process-per-GPU
# --------------------------------------------------------------------------------------------
E("egovlp_train", "run/train_egoclip.py", "explicit_replacement",
  "showlab/EgoVLP run/train_egoclip.py (sacred entry, tcp:// NCCL init, per-rank device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)",
      "binds the rank to its device; torch.cuda.set_device raises on a host without CUDA"),
    C("dist.init_process_group(backend='nccl',", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl',",
      "NCCL is not available with torch_npu; HCCL is the collective backend for NPU tensors"),
    C("device = torch.device(f'cuda:{args.local_rank}')", "device_type", "replace", True,
      "device = torch.device(f'npu:{args.local_rank}')",
      "device handed to the trainer; every .to(self.device) downstream follows it"),
])

E("egovlp_trainer", "trainer/trainer_egoclip.py", "explicit_replacement",
  "showlab/EgoVLP trainer/trainer_egoclip.py (Multi_Trainer_dist_EgoClip, all_gather of embeddings)", [])

E("egovlp_base_trainer", "base/base_trainer.py", "explicit_replacement",
  "showlab/EgoVLP base/base_trainer.py (Multi_BaseTrainer_dist, _prepare_device)", [
    C("self.model = torch.nn.DataParallel(self.model, device_ids=[self.args.local_rank])",
      "distributed_framework", "replace", True,
      "self.model = ModuleWrapper(self.model)  # nn.DataParallel is unsupported on NPU; thin wrapper keeps .module",
      "single-process branch: torch.nn.DataParallel is listed as unsupported (✘) on Atlas A2/A3; the trainer only "
      "needs the .module attribute, so a trivial wrapper module replaces it"),
    C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "n_gpu = torch.npu.device_count()",
      "reached when no device is injected (test/eval entry points): returns 0 on an NPU host and the "
      "trainer silently falls back to CPU"),
    C("device = torch.device('cuda:%d' % self.args.local_rank if n_gpu_use > 0 else 'cpu')", "device_type",
      "replace", True,
      "device = torch.device('npu:%d' % self.args.local_rank if n_gpu_use > 0 else 'cpu')",
      "once device_count is ported the 'cuda:N' branch is taken and fails"),
])

E("egovlp_parse_config", "parse_config.py", "explicit_replacement",
  "showlab/EgoVLP parse_config.py (ConfigParser, -d/--device sets the visible devices)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.device', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.device',
      "the CANN runtime ignores CUDA_VISIBLE_DEVICES; without the Ascend variable the -d mask silently has no "
      "effect (set before any NPU initialisation, as here)"),
])

E("egovlp_model", "model/model.py", "explicit_replacement",
  "showlab/EgoVLP model/model.py (FrozenInTime dual encoder, sim_matrix)", [])

E("egovlp_config", "configs/pt/egoclip.json", "explicit_replacement",
  "showlab/EgoVLP configs/pt/egoclip.json", [])

E("egovlp_env", "environment.yml", "explicit_replacement",
  "showlab/EgoVLP environment.yml (conda env, cu113 wheels)", [
    C("- cudatoolkit=11.3.1", "device_type", "removal", False, None,
      "CUDA runtime libraries are unused on an Ascend host (CANN provides the runtime); dropping it is cleanup"),
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "device_type", "replace", True,
      "- --extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu pairs with the CPU build of torch (x86: download.pytorch.org/whl/cpu; aarch64: plain PyPI)"),
    C("- torch==1.10.0+cu113", "import_torch_npu", "replace", True, "- torch==2.1.0",
      "no torch_npu release exists for torch 1.10 and the +cu113 wheel cannot be paired with torch_npu; "
      "torch_npu wheel version must equal the torch version"),
    C("- torchvision==0.11.1+cu113", "import_torch_npu", "replace", True, "- torchvision==0.16.0",
      "torchvision must match the torch pin (0.16.0 for torch 2.1.0); the cu113 build pulls CUDA torch back in"),
    C("- tqdm==4.62.3", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post12",
      "add the torch_npu wheel matching torch 2.1.0 (inserted just before tqdm, after the torch pins)"),
])

# --------------------------------------------------------------------------------------------
# Ego4D episodic memory: NLQ / VSLNet baseline (EGO4D/episodic-memory NLQ/VSLNet)
# --------------------------------------------------------------------------------------------
E("vslnet_main", "NLQ/VSLNet/main.py", "explicit_replacement",
  "EGO4D/episodic-memory NLQ/VSLNet/main.py (train/test loop, submitit launcher)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('cuda_str = "cuda" if configs.gpu_idx is None else "cuda:{}".format(configs.gpu_idx)', "device_type",
      "replace", True,
      'npu_str = "npu" if configs.gpu_idx is None else "npu:{}".format(configs.gpu_idx)',
      "device string for the whole run"),
    C('device = torch.device(cuda_str if torch.cuda.is_available() else "cpu")', "torch_cuda_api", "replace", True,
      'device = torch.device(npu_str if torch.npu.is_available() else "cpu")',
      "torch.cuda.is_available() is False on an NPU host, so training would silently run on CPU"),
    C("model.load_state_dict(torch.load(filename))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(filename, map_location=device))",
      "checkpoints saved from a CUDA run hold cuda:N storages; deserialising them without map_location fails "
      "when CUDA is unavailable"),
    C("gpus_per_node=configs.slurm_gpus,", "device_type", "replace", False,
      'slurm_gres=f"npu:{configs.slurm_gpus}",',
      "submitit path only; the generic-resource name for NPUs on a Slurm cluster is site-specific (unconfirmed)"),
])

E("vslnet_runner", "NLQ/VSLNet/utils/runner_utils.py", "explicit_replacement",
  "EGO4D/episodic-memory NLQ/VSLNet/utils/runner_utils.py (seeding, eval_test)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "redundant with torch.manual_seed, which also seeds registered accelerator backends; torch.cuda.manual_seed "
      "is a lazy no-op without CUDA (unconfirmed in knowledge that manual_seed covers npu)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "same as above: reproducibility only, not a failure"),
])

E("vslnet_model", "NLQ/VSLNet/model/VSLNet.py", "explicit_replacement",
  "EGO4D/episodic-memory NLQ/VSLNet/model/VSLNet.py", [])

E("vslnet_layers", "NLQ/VSLNet/model/layers.py", "explicit_replacement",
  "EGO4D/episodic-memory NLQ/VSLNet/model/layers.py (QANet-style encoder, BERT query embedder)", [])

E("vslnet_script", "NLQ/VSLNet/scripts/train_nlq_slowfast.sh", "explicit_replacement",
  "EGO4D/episodic-memory NLQ/VSLNet shell launcher (prepare + train + test)", [
    C('echo "== host info =="', "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (library paths for ACL/HCCL) must be loaded before python imports torch_npu, unless the "
      "image already sources it"),
    C("=nvidia-smi", "device_type", "replace", True, "npu-smi info",
      "script runs under `set -e`: nvidia-smi is absent on an Ascend host, so the launcher aborts here"),
    C("torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      'python -c "import torch, torch_npu; print(torch.__version__, torch.npu.is_available())"',
      "diagnostic print only; it would merely print False"),
    C("export CUDA_VISIBLE_DEVICES=${GPU_ID}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU_ID}",
      "main.py uses device index 0 of the visible set; without the Ascend mask the job silently lands on "
      "physical NPU 0 instead of the requested one"),
])

# --------------------------------------------------------------------------------------------
# Ego4D forecasting: long-term action anticipation (EGO4D/forecasting, PyTorch Lightning 1.x + SlowFast)
# --------------------------------------------------------------------------------------------
E("ego4d_lta_tool", "tools/long_term_anticipation.py", "explicit_replacement",
  "EGO4D/forecasting tools/long_term_anticipation.py (Lightning Trainer, DDPPlugin, slurm helper)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("checkpoint = torch.load(ckp_path)", "tensor_to_device", "replace", True,
      'checkpoint = torch.load(ckp_path, map_location="cpu")',
      "released LTA checkpoints were saved from GPU runs; loading without map_location fails without CUDA"),
    C("gpus=cfg.NUM_GPUS,", "distributed_framework", "replace", True, "devices=cfg.NUM_GPUS,",
      "Lightning's gpus= means CUDA devices and raises a MisconfigurationException when CUDA is unavailable; "
      "device count moves to devices= together with an NPU accelerator (next label)"),
    C("accelerator=cfg.SOLVER.ACCELERATOR,", "distributed_framework", "replace", True,
      "accelerator=NPUAccelerator(), strategy=cfg.SOLVER.ACCELERATOR,",
      "cfg.SOLVER.ACCELERATOR holds the distributed mode ('ddp'); Lightning 1.x ships no NPU accelerator, so the "
      "porter registers/passes one (exact class is project-specific, unconfirmed in knowledge)"),
    C('log_gpu_memory="min_max",', "device_type", "removal", False, None,
      "queries nvidia-smi for GPU memory logging; only active for the CUDA accelerator, so inert after the port"),
    C("gpus_per_node=cfg.NUM_GPUS,", "device_type", "replace", False,
      "slurm_additional_parameters={'gres': f'npu:{cfg.NUM_GPUS}'},",
      "--on_cluster path only; Slurm gres naming for NPUs is site-specific (unconfirmed)"),
])

E("ego4d_defaults", "ego4d/config/defaults.py", "explicit_replacement",
  "EGO4D/forecasting ego4d/config/defaults.py (SlowFast-style fvcore CfgNode defaults)", [
    C('_C.DIST_BACKEND = "nccl"', "dist_backend", "replace", True, '_C.DIST_BACKEND = "hccl"',
      "passed to init_process_group by misc.launch_job (spawn-based tools); nccl does not exist on NPU"),
])

E("ego4d_distributed", "ego4d/utils/distributed.py", "explicit_replacement",
  "EGO4D/forecasting ego4d/utils/distributed.py (SlowFast distributed helpers)", [
    C('dist_backend="nccl",', "dist_backend", "replace", False, 'dist_backend="hccl",',
      "default argument only; every caller passes cfg.DIST_BACKEND explicitly"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises on a host without CUDA; each spawned process must own one NPU"),
    C('if dist.get_backend() == "nccl":', "dist_backend", "replace", True,
      'if dist.get_backend() in ("nccl", "hccl"):',
      "keeps object all-gathers (pickled bytes) on a side gloo group as upstream intends; with hccl the WORLD "
      "group is returned and all_gather_unaligned trips the backend assert below"),
    C('assert backend in ["gloo", "nccl"]', "dist_backend", "replace", False,
      'assert backend in ["gloo", "nccl", "hccl"]',
      "after the gloo-group fix only reached with an explicitly passed HCCL group (no caller does); "
      "changed for completeness"),
    C('device = torch.device("cpu" if backend == "gloo" else "cuda")', "device_type", "replace", False,
      'device = torch.device("cpu" if backend == "gloo" else "npu")',
      "same reachability as the assert above; would fail for an explicit HCCL group"),
])

E("ego4d_misc", "ego4d/utils/misc.py", "explicit_replacement",
  "EGO4D/forecasting ego4d/utils/misc.py (model info, flop counting, launch_job)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "memory logging only: on NPU the function reports 0 GB instead of failing"),
    C("mem_usage_bytes = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "mem_usage_bytes = torch.npu.max_memory_allocated()", "memory logging only"),
    C("model_inputs[i] = model_inputs[i].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "model_inputs[i] = model_inputs[i].npu(non_blocking=True)",
      "dummy input for fvcore flop/activation counting must live on the model's device; .cuda() raises"),
    C('os.system("nvidia-smi")', "device_type", "replace", False, 'os.system("npu-smi info")',
      "diagnostic only: os.system just returns a non-zero status when nvidia-smi is missing"),
])

E("ego4d_lta_task", "ego4d/tasks/long_term_anticipation.py", "explicit_replacement",
  "EGO4D/forecasting ego4d/tasks/long_term_anticipation.py (LightningModule tasks)", [])

E("ego4d_lta_cfg", "configs/Ego4dLTA/MULTISLOWFAST_8x8_R101.yaml", "explicit_replacement",
  "EGO4D/forecasting configs/Ego4dLTA/MULTISLOWFAST_8x8_R101.yaml", [])

E("ego4d_lta_sh", "tools/long_term_anticipation/ego4d_forecasting.sh", "explicit_replacement",
  "EGO4D/forecasting tools/long_term_anticipation/ego4d_forecasting.sh (cluster launcher)", [
    C("module load cuda/11.1", "env_var", "replace", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "the CUDA module is the environment setup step; on Ascend the CANN set_env.sh must be sourced instead so "
      "torch_npu finds its libraries"),
    C("module load cudnn/v8.0.5-cuda.11.1", "env_var", "removal", False, None,
      "cuDNN module is meaningless on Ascend; `module load` of a missing module only prints an error"),
    C("export OMP_NUM_THREADS=8", "env_var", "npu_only_addition", True, "export PL_TORCH_DISTRIBUTED_BACKEND=hccl",
      "Lightning 1.x DDP picks nccl only for its GPU accelerator and gloo otherwise; gloo cannot reduce NPU "
      "tensors, so the backend is forced to hccl (mechanism from Lightning docs, not in knowledge)"),
])

# --------------------------------------------------------------------------------------------
# Hand-object detector (ddshan/hand_object_detector) used for Ego4D/EPIC hand-object boxes
# --------------------------------------------------------------------------------------------
E("hod_setup", "lib/setup.py", "kernel_rewrite",
  "ddshan/hand_object_detector lib/setup.py (maskrcnn-benchmark style _C extension: nms / roi_align / roi_pool)", [
    C("ext_modules=get_extensions(),", "custom_cuda_extension", "removal", False, None,
      "the port routes nms/roi_align to torchvision.ops (+torchvision_npu), so model._C is no longer built; on an "
      "NPU host the CUDA branch is skipped anyway and a CPU-only _C would still compile, hence not required"),
])

E("hod_nms", "lib/model/roi_layers/nms.py", "kernel_rewrite",
  "ddshan/hand_object_detector lib/model/roi_layers/nms.py", [
    C("from model import _C", "custom_cuda_extension", "replace", True,
      "import torchvision_npu  # noqa: F401  registers NPU kernels for torchvision.ops",
      "with the ported setup.py there is no model._C; a CPU-only _C would also read NPU pointers as host memory"),
    C("nms = _C.nms", "custom_cuda_extension", "replace", True, "from torchvision.ops import nms",
      "same (boxes, scores, iou_threshold) signature; torchvision_npu provides nms on NPU"),
])

E("hod_roi_align", "lib/model/roi_layers/roi_align.py", "kernel_rewrite",
  "ddshan/hand_object_detector lib/model/roi_layers/roi_align.py", [
    C("from model import _C", "custom_cuda_extension", "replace", True,
      "import torchvision_npu  # noqa: F401  registers NPU kernels for torchvision.ops",
      "no model._C after the port"),
    C("roi_align = _ROIAlign.apply", "custom_cuda_extension", "replace", True,
      "from torchvision.ops import roi_align",
      "torchvision.ops.roi_align(input, boxes[K,5], output_size, spatial_scale, sampling_ratio, aligned=False) "
      "matches the positional call in ROIAlign.forward and has autograd; _ROIAlign becomes dead code"),
])

E("hod_faster_rcnn", "lib/model/faster_rcnn/faster_rcnn.py", "explicit_replacement",
  "ddshan/hand_object_detector lib/model/faster_rcnn/faster_rcnn.py", [])

E("hod_demo", "demo.py", "explicit_replacement",
  "ddshan/hand_object_detector demo.py (image/webcam inference, --cuda flag)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("checkpoint = torch.load(load_name)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(load_name, map_location='cpu')",
      "released faster_rcnn_1_8_89999.pth holds CUDA storages"),
    C("im_data = im_data.cuda()", "tensor_to_device", "replace", True, "im_data = im_data.npu()", ".cuda() raises"),
    C("im_info = im_info.cuda()", "tensor_to_device", "replace", True, "im_info = im_info.npu()", ".cuda() raises"),
    C("num_boxes = num_boxes.cuda()", "tensor_to_device", "replace", True, "num_boxes = num_boxes.npu()",
      ".cuda() raises"),
    C("gt_boxes = gt_boxes.cuda()", "tensor_to_device", "replace", True, "gt_boxes = gt_boxes.npu()",
      ".cuda() raises"),
    C("fasterRCNN.cuda()", "tensor_to_device", "replace", True, "fasterRCNN.npu()", "model placement"),
    C("torch.FloatTensor(cfg.TRAIN.BBOX_NORMALIZE_STDS).cuda() + torch.FloatTensor(cfg.TRAIN.BBOX_NORMALIZE_MEANS).cuda()",
      "tensor_to_device", "replace", True,
      "box_deltas = box_deltas.view(-1, 4) * torch.FloatTensor(cfg.TRAIN.BBOX_NORMALIZE_STDS).npu() + torch.FloatTensor(cfg.TRAIN.BBOX_NORMALIZE_MEANS).npu()",
      "class-agnostic branch (--cag)"),
    C("=box_deltas = box_deltas.view(-1, 4) * torch.FloatTensor(cfg.TRAIN.BBOX_NORMALIZE_STDS).cuda() \\",
      "tensor_to_device", "replace", True,
      "box_deltas = box_deltas.view(-1, 4) * torch.FloatTensor(cfg.TRAIN.BBOX_NORMALIZE_STDS).npu() \\",
      "default (class-specific) branch, first half of the continued expression"),
    C("=+ torch.FloatTensor(cfg.TRAIN.BBOX_NORMALIZE_MEANS).cuda()", "tensor_to_device", "replace", True,
      "+ torch.FloatTensor(cfg.TRAIN.BBOX_NORMALIZE_MEANS).npu()",
      "second half of the same expression"),
])

E("hod_trainval", "trainval_net.py", "explicit_replacement",
  "ddshan/hand_object_detector trainval_net.py (jwyang faster-rcnn training loop, --mGPUs DataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("im_data = im_data.cuda()", "tensor_to_device", "replace", True, "im_data = im_data.npu()", ".cuda() raises"),
    C("im_info = im_info.cuda()", "tensor_to_device", "replace", True, "im_info = im_info.npu()", ".cuda() raises"),
    C("num_boxes = num_boxes.cuda()", "tensor_to_device", "replace", True, "num_boxes = num_boxes.npu()",
      ".cuda() raises"),
    C("gt_boxes = gt_boxes.cuda()", "tensor_to_device", "replace", True, "gt_boxes = gt_boxes.npu()",
      ".cuda() raises"),
    C("box_info = box_info.cuda()", "tensor_to_device", "replace", True, "box_info = box_info.npu()",
      ".cuda() raises"),
    C("fasterRCNN.cuda()", "tensor_to_device", "replace", True, "fasterRCNN.npu()", "model placement"),
    C("checkpoint = torch.load(load_name)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(load_name, map_location='cpu')", "resume path; GPU-saved checkpoint"),
    C("fasterRCNN = nn.DataParallel(fasterRCNN)", "distributed_framework", "replace", True,
      "raise NotImplementedError('--mGPUs: nn.DataParallel is unsupported on NPU; use one process per NPU with DDP/hccl')",
      "torch.nn.DataParallel is ✘ on Atlas A2/A3; multi-device training needs a DDP rewrite of the loop"),
])

# --------------------------------------------------------------------------------------------
# hoi-forecast (stevenlsw/hoi-forecast): joint hand trajectory + interaction hotspot forecasting
# --------------------------------------------------------------------------------------------
E("hoif_traineval", "traineval.py", "explicit_replacement",
  "stevenlsw/hoi-forecast traineval.py (OCT model train/eval entry)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(args.manual_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.manual_seed)",
      "redundant with the following torch.manual_seed (unconfirmed that it seeds npu); reproducibility only"),
    C("if args.use_cuda and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if args.use_cuda and torch.npu.is_available():",
      "False on NPU hosts: the model would silently stay on CPU"),
    C('print("Using {} GPUs !".format(torch.cuda.device_count()))', "torch_cuda_api", "replace", False,
      'print("Using {} NPUs !".format(torch.npu.device_count()))', "log line only (prints 0)"),
    C("model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model placement"),
    C("model = nn.DataParallel(model)", "distributed_framework", "replace", True,
      "model = ModuleWrapper(model)  # nn.DataParallel is unsupported on NPU; keeps the 'module.' key prefix",
      "DataParallel is ✘ on NPU; modelio.load_checkpoint and saved checkpoints rely on the 'module.' prefix, so a "
      "thin wrapper replaces it rather than dropping it"),
    C("device = torch.device('cuda') if torch.cuda.is_available() and args.use_cuda else torch.device('cpu')",
      "device_type", "replace", False,
      "device = torch.device('npu') if torch.npu.is_available() and args.use_cuda else torch.device('cpu')",
      "only the map_location for resume: on NPU it degrades to CPU, and load_state_dict then copies into the "
      "NPU parameters, which works"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(str(g) for g in args.gpus)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = ",".join(str(g) for g in args.gpus)',
      "--gpus selection is silently ignored by the CANN runtime otherwise"),
])

E("hoif_epoch", "netscripts/epoch_feat.py", "explicit_replacement",
  "stevenlsw/hoi-forecast netscripts/epoch_feat.py (train/eval epoch)", [
    C("if use_cuda and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if use_cuda and torch.npu.is_available():",
      "guard is False on NPU: batches stay on CPU while the model is on NPU (device mismatch)"),
    C("input = input.cuda()", "tensor_to_device", "replace", True, "input = input.npu()", "batch to device"),
    C("bbox_feat = bbox_feat.cuda()", "tensor_to_device", "replace", True, "bbox_feat = bbox_feat.npu()",
      "batch to device"),
    C("valid_mask = valid_mask.cuda()", "tensor_to_device", "replace", True, "valid_mask = valid_mask.npu()",
      "batch to device"),
    C("future_hands = future_hands.cuda()", "tensor_to_device", "replace", True,
      "future_hands = future_hands.npu()", "batch to device"),
    C("contact_point = contact_point.cuda()", "tensor_to_device", "replace", True,
      "contact_point = contact_point.npu()", "batch to device"),
    C("future_valid = future_valid.cuda()", "tensor_to_device", "replace", True,
      "future_valid = future_valid.npu()", "batch to device"),
    C("input, bbox_feat, valid_mask = input.cuda(), bbox_feat.cuda(), valid_mask.cuda()", "tensor_to_device",
      "replace", True, "input, bbox_feat, valid_mask = input.npu(), bbox_feat.npu(), valid_mask.npu()",
      "evaluation branch (guarded only by the use_cuda flag, so it raises on NPU)"),
])

E("hoif_modelio", "netscripts/modelio.py", "explicit_replacement",
  "stevenlsw/hoi-forecast netscripts/modelio.py (checkpoint helpers)", [])

E("hoif_transformer", "networks/transformer.py", "explicit_replacement",
  "stevenlsw/hoi-forecast networks/transformer.py (encoder/decoder)", [])

# --------------------------------------------------------------------------------------------
# LaViLa (facebookresearch/LaViLa): video-language pre-training on Ego4D narrations
# --------------------------------------------------------------------------------------------
E("lavila_pretrain", "main_pretrain.py", "explicit_replacement",
  "facebookresearch/LaViLa main_pretrain.py (dual-encoder pre-training, AMP, DDP, ZeRO)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from torch.cuda import amp", "amp", "replace", True, "from torch_npu.npu import amp",
      "on an NPU host torch.cuda.amp.GradScaler disables itself and autocast('cuda') never applies to NPU "
      "tensors, so mixed precision is silently off; torch_npu.npu.amp provides autocast/GradScaler for NPU "
      "(all amp.* call sites then follow)"),
    C("parser.add_argument('--dist-backend', default='nccl', type=str)", "dist_backend", "replace", True,
      "parser.add_argument('--dist-backend', default='hccl', type=str)",
      "default backend used by init_distributed_mode"),
    C("dist_utils.init_distributed_mode(args)", "compile_mode", "npu_only_addition", False,
      "torch.npu.set_compile_mode(jit_compile=False)",
      "performance advice from msFmkTransplt (avoid online op compilation for dynamic shapes); not needed "
      "for correctness"),
    C("model.cuda(args.gpu)", "tensor_to_device", "replace", True, "model.npu(args.gpu)", "model placement"),
    C("criterion = models.get_loss(args.model, args, tokenizer=tokenizer).cuda(args.gpu)", "tensor_to_device",
      "replace", False, "criterion = models.get_loss(args.model, args, tokenizer=tokenizer).npu(args.gpu)",
      "CLIPLoss has no parameters or buffers, so Module.cuda() touches nothing and does not fail; changed for "
      "consistency"),
    C("optimizer = torch.optim.AdamW(optim_params, lr=args.lr, betas=args.betas,", "fused_optimizer", "replace",
      False, "optimizer = torch_npu.optim.NpuFusedAdamW(optim_params, lr=args.lr, betas=args.betas,",
      "performance-only suggestion (msFmkTransplt: faster, ~70% more memory); torch.optim.AdamW works on NPU"),
    C("inputs = [tensor.cuda(args.gpu, non_blocking=True) for tensor in inputs]", "tensor_to_device", "replace",
      True, "inputs = [tensor.npu(args.gpu, non_blocking=True) for tensor in inputs]", "batch to device"),
    C("mem.update(torch.cuda.max_memory_allocated() // 1e9)", "torch_cuda_api", "replace", False,
      "mem.update(torch.npu.max_memory_allocated() // 1e9)", "progress meter only (reports 0 on NPU)"),
])

E("lavila_dist", "lavila/utils/distributed.py", "explicit_replacement",
  "facebookresearch/LaViLa lavila/utils/distributed.py (DeiT/SLIP-style init_distributed_mode)", [
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()",
      "SLURM path: torch.cuda.device_count() is 0 on an NPU host -> ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "raises without CUDA"),
])

E("lavila_loss", "lavila/models/loss.py", "explicit_replacement",
  "facebookresearch/LaViLa lavila/models/loss.py (CLIP / max-margin losses)", [
    C("if x1.is_cuda:", "device_type", "replace", True, "if x1.is_npu:",
      "is_cuda is False for NPU tensors, so keep_idx silently stays on CPU and index_select below gets a "
      "CPU index for an NPU tensor"),
    C("keep_idx = keep_idx.cuda()", "tensor_to_device", "replace", True, "keep_idx = keep_idx.npu()",
      "reached once the guard is ported; .cuda() raises"),
])

E("lavila_zeroshot", "eval_zeroshot.py", "explicit_replacement",
  "facebookresearch/LaViLa eval_zeroshot.py (EK-100 MIR / EgoMCQ zero-shot evaluation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("import torch.cuda.amp as amp", "amp", "replace", False, "import torch_npu.npu.amp as amp",
      "autocast is only enabled together with --use-half, where model and frames are already cast to fp16, so "
      "the silently disabled CUDA autocast changes nothing; ported for consistency"),
    C("model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model placement"),
    C("frames = inputs[0].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "frames = inputs[0].npu(non_blocking=True)", "batch to device"),
    C("texts = inputs[2].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "texts = inputs[2].npu(non_blocking=True)", "batch to device"),
    C("masks = inputs[3].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "masks = inputs[3].npu(non_blocking=True)", "batch to device"),
    C("texts_query = inputs[0].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "texts_query = inputs[0].npu(non_blocking=True)", "batch to device"),
    C("frames_options = inputs[1].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "frames_options = inputs[1].npu(non_blocking=True)", "batch to device"),
    C("masks_query = inputs[5].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "masks_query = inputs[5].npu(non_blocking=True)", "batch to device"),
])

E("lavila_submitit", "run_with_submitit_pretrain.py", "explicit_replacement",
  "facebookresearch/LaViLa run_with_submitit_pretrain.py (submitit multinode launcher)", [
    C("gpus_per_node=num_gpus_per_node,", "device_type", "replace", False,
      "slurm_additional_parameters={'gres': f'npu:{num_gpus_per_node}'},",
      "Slurm resource request; gres naming for NPUs is site-specific (unconfirmed)"),
])
