"""Labels for probe265 (sports analytics: SoccerNet spotting/calibration/game-state, TrackNet ball tracking,
FairMOT basketball tracking, hockey re-ID, basketball pose) -- CUDA -> Ascend NPU (torch_npu).

Conventions used below (see README.md, "How the labels were chosen"):
* import torch_npu is labelled in every file that is run as a script (or that names torch_npu in a ported
  line); required because every project here pins torch < 2.5, i.e. a torch_npu 2.1.0.postN without the
  2.5.1+ device-backend autoload.
* AMP (torch.cuda.amp / torch.autocast("cuda")) is required=False: on an NPU host autocast("cuda") and the
  CUDA GradScaler disable themselves with a warning and the code runs in fp32 (slower, but correct).
* torch.cuda.empty_cache / max_memory_allocated / manual_seed* are required=False: with CUDA never
  initialised they are silent no-ops (or return 0), nothing fails.
* torch.cuda.synchronize / set_device / get_device_name / get_device_capability / Stream /
  reset_peak_memory_stats are required=True: they initialise CUDA and raise on an NPU host.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: project pins torch < 2.5, so the matching torch_npu 2.1.0.postN has no "
               "device-backend autoload and .npu()/torch.npu need the explicit import")
SETENV_NOTE = ("CANN environment (libascendcl/libhccl paths) must be sourced before torch_npu imports; "
               "environment-dependent (many hosts source it in .bashrc), so not marked required")

# ---------------------------------------------------------------------------------------------------------
# SoccerNet action spotting baseline (NetVLAD++)
# ---------------------------------------------------------------------------------------------------------
E("snspot-main", "sn_spotting/src/main.py", "explicit_replacement",
  "SoccerNet-v2 action spotting baseline (NetVLAD++) main.py with --GPU / CUDA_VISIBLE_DEVICES", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("framerate=args.framerate, pool=args.pool).cuda()", "tensor_to_device", "replace", True,
        "framerate=args.framerate, pool=args.pool).npu()",
        "Module.cuda() raises 'Torch not compiled with CUDA enabled' on an NPU host"),
      C('checkpoint = torch.load(os.path.join("models", args.model_name, "model.pth.tar"))', "tensor_to_device",
        "replace", True,
        'checkpoint = torch.load(os.path.join("models", args.model_name, "model.pth.tar"), map_location="cpu")',
        "with --test_only this loads the released GPU-trained checkpoint, whose CUDA tensors cannot be "
        "deserialised without CUDA; map to CPU, load_state_dict copies onto the NPU"),
      C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
        'logging.info("Peak NPU memory (MB): %.1f" % (torch.npu.max_memory_allocated() / 1024 ** 2))',
        "CUDA never initialised -> returns 0; log value only"),
      C('os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"', "env_var", "removal", False, None,
        "CUDA-only enumeration hint, ignored on Ascend"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = str(args.GPU)', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(args.GPU)',
        "--GPU is honoured only through the visibility variable; unchanged, the run silently lands on npu:0"),
  ])

E("snspot-train", "sn_spotting/src/train.py", "explicit_replacement",
  "SoccerNet-v2 spotting baseline train.py (trainer / test / testSpotting with NMS)", [
      C("=feats = feats.cuda()", "tensor_to_device", "replace", True, "feats = feats.npu()",
        "Tensor.cuda() fails on an NPU host"),
      C("=labels = labels.cuda()", "tensor_to_device", "replace", True, "labels = labels.npu()",
        "Tensor.cuda() fails on an NPU host"),
      C("feats = feats.cuda()  # (B, T, D)", "tensor_to_device", "replace", True,
        "feats = feats.npu()  # (B, T, D)", "Tensor.cuda() fails on an NPU host"),
      C("feat = feat_half1[start_frame:end_frame].cuda()", "tensor_to_device", "replace", True,
        "feat = feat_half1[start_frame:end_frame].npu()", "Tensor.cuda() fails on an NPU host"),
      C("feat = feat_half2[start_frame:end_frame].cuda()", "tensor_to_device", "replace", True,
        "feat = feat_half2[start_frame:end_frame].npu()", "Tensor.cuda() fails on an NPU host"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op while CUDA is uninitialised; NPU cache is simply not released (memory headroom only)"),
  ])

E("snspot-model", "sn_spotting/src/model.py", "explicit_replacement",
  "SoccerNet-v2 NetVLAD / NetRVLAD pooling model (LOUPE-style NetVLAD port)", [
      C("checkpoint = torch.load(weights)", "tensor_to_device", "replace", True,
        'checkpoint = torch.load(weights, map_location="cpu")',
        "--load_weights points at GPU-trained checkpoints; CUDA storages cannot be deserialised on an NPU host"),
  ])

E("snspot-bench-sh", "sn_spotting/scripts/run_benchmark.sh", "explicit_replacement",
  "shell sweep over pooling/window ablations of the SoccerNet baseline", [
      C("=set -e", "env_var", "npu_only_addition", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SETENV_NOTE),
      C("export CUDA_DEVICE_ORDER=PCI_BUS_ID", "env_var", "removal", False, None,
        "CUDA enumeration order, meaningless on Ascend"),
      C("export CUDA_VISIBLE_DEVICES=${GPU_ID}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${GPU_ID}",
        "the script passes --GPU=-1 and relies on the visibility variable alone to pick the card"),
      C("export CUDA_LAUNCH_BLOCKING=", "env_var", "replace", False,
        "export ASCEND_LAUNCH_BLOCKING=${ASCEND_LAUNCH_BLOCKING:-0}",
        "debug-only synchronous launch switch; default 0 so nothing changes"),
  ])

# ---------------------------------------------------------------------------------------------------------
# SoccerNet camera calibration baseline
# ---------------------------------------------------------------------------------------------------------
E("sncalib-extremities", "sn_calibration/src/baseline_extremities.py", "explicit_replacement",
  "SoccerNet camera-calibration baseline: DeepLabV3 pitch-line segmentation -> line extremities (cv2.cuda fallback)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("model = nn.DataParallel(deeplabv3_resnet50(pretrained=False, num_classes=num_classes))",
        "distributed_framework", "replace", True,
        "model = deeplabv3_resnet50(pretrained=False, num_classes=num_classes)",
        "nn.DataParallel is unsupported on Ascend (2.7.1 API list; msFmkTransplt README) and its constructor "
        "probes every visible device; it only served as a 'module.' key container here"),
      C('model.load_state_dict(checkpoint["model"])', "distributed_framework", "replace", True,
        'model.load_state_dict({k.replace("module.", "", 1): v for k, v in checkpoint["model"].items()})',
        "follows from dropping DataParallel: the checkpoint keys carry the 'module.' prefix"),
      C("self.model = model.cuda(1)", "tensor_to_device", "replace", True, "self.model = model.npu(1)",
        "Module.cuda() fails on an NPU host"),
      C('img = torch.from_numpy(img).to(torch.device("cuda:1")).unsqueeze(0)', "device_type", "replace", True,
        'img = torch.from_numpy(img).to(torch.device("npu:1")).unsqueeze(0)', "hard-coded CUDA device"),
      C("torch.cuda.synchronize(1)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(1)",
        "initialises CUDA and raises (--benchmark path); also needed for correct async timing on NPU"),
      C("({torch.cuda.get_device_name(1)})", "torch_cuda_api", "replace", True,
        'f"({torch.npu.get_device_name(1)})")', "get_device_name initialises CUDA and raises (--benchmark path)"),
  ])

# ---------------------------------------------------------------------------------------------------------
# E2E-Spot (precise temporal event spotting)
# ---------------------------------------------------------------------------------------------------------
E("e2espot-train", "e2e_spot/train_e2e.py", "explicit_replacement",
  "E2E-Spot train_e2e.py (RegNetY-GSM + GRU, AMP, optional DataParallel via -mgpu)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("modality, device='cuda', multi_gpu=False):", "device_type", "replace", True,
        "modality, device='npu', multi_gpu=False):",
        "default device is what main() uses; self._model.to('cuda') fails on an NPU host"),
      C("self._model = nn.DataParallel(self._model)", "distributed_framework", "replace", True,
        "pass  # nn.DataParallel is unsupported on Ascend NPU: -mgpu trains on one NPU (port to DDP for more)",
        "nn.DataParallel is ✘ on Ascend (2.7.1 API list); only reached with -mgpu/--gpu_parallel"),
      C("with torch.cuda.amp.autocast():", "amp", "replace", False, "with torch.npu.amp.autocast():",
        "autocast('cuda') disables itself with a warning on an NPU host -> fp32 training (perf/memory only)"),
      C("with torch.cuda.amp.autocast() if use_amp else nullcontext():", "amp", "replace", False,
        "with torch.npu.amp.autocast() if use_amp else nullcontext():",
        "same: silently fp32 inference"),
  ])

E("e2espot-common", "e2e_spot/model/common.py", "explicit_replacement",
  "E2E-Spot model/common.py (BaseRGBModel.get_optimizer, step with GradScaler)", [
      C("torch.cuda.amp.GradScaler() if self.device == 'cuda' else None", "amp", "replace", True,
        "torch.npu.amp.GradScaler() if self.device in ('cuda', 'npu') else None",
        "once device='npu' the string test returns None and train_e2e.py's scaler.state_dict() / "
        "scaler.load_state_dict() crash with AttributeError at the first checkpoint"),
      C("device='cuda'):", "device_type", "replace", True, "device='npu'):",
        "default device of SingleStageGRU; .to('cuda') fails when the default is used"),
  ])

E("e2espot-modules", "e2e_spot/model/modules.py", "explicit_replacement",
  "E2E-Spot temporal heads (GRU / MS-TCN / ASFormer / transformer)", [
      C("bidirectional=True, dropout=dropout if num_layers > 1 else 0.0)", "unsupported_op_workaround", "replace",
        False, "bidirectional=True, dropout=0.0)  # inter-layer GRU dropout not supported on NPU",
        "Ascend 2.7.1 API list: nn.GRU does not support the dropout argument (only hit with deeper_gru); "
        "unconfirmed whether it errors or is ignored"),
  ])

# ---------------------------------------------------------------------------------------------------------
# TrackNetV3 (shuttlecock tracking)
# ---------------------------------------------------------------------------------------------------------
E("tracknetv3-train", "TrackNetV3/train.py", "explicit_replacement",
  "TrackNetV3 train.py (TrackNet heatmap U-Net + InpaintNet trajectory rectification)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("mask = torch.from_numpy(mask).float().cuda().reshape(mask_size[0], -1, 1)", "tensor_to_device", "replace",
        True, "mask = torch.from_numpy(mask).float().npu().reshape(mask_size[0], -1, 1)",
        "Tensor.cuda() fails on an NPU host"),
      C("x, y = x.float().cuda(), y.float().cuda()", "tensor_to_device", "replace", True,
        "x, y = x.float().npu(), y.float().npu()", "Tensor.cuda() fails on an NPU host"),
      C("coor_pred, coor, inpaint_mask = coor_pred.float().cuda(), coor.float().cuda(), inpaint_mask.float().cuda()",
        "tensor_to_device", "replace", True,
        "coor_pred, coor, inpaint_mask = coor_pred.float().npu(), coor.float().npu(), inpaint_mask.float().npu()",
        "Tensor.cuda() fails on an NPU host"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
        "False on an NPU host, so training aborts with the RuntimeError below"),
      C("model = get_model(args.model_name, args.seq_len, args.bg_mode).cuda()", "tensor_to_device", "replace", True,
        "model = get_model(args.model_name, args.seq_len, args.bg_mode).npu()", "Module.cuda() fails on an NPU host"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on an NPU host; memory headroom only"),
  ])

E("tracknetv3-predict", "TrackNetV3/predict.py", "explicit_replacement",
  "TrackNetV3 predict.py (video -> ball csv with temporal ensemble)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
        "module-level device used by every .to(device) below"),
      C("pin_memory=torch.cuda.is_available())", "pin_memory", "replace", False,
        "pin_memory=torch.npu.is_available())",
        "evaluates to False on an NPU host: unpinned host buffers, slower H2D copies only"),
      C("tracknet_ckpt = torch.load(args.tracknet_file)", "tensor_to_device", "replace", True,
        "tracknet_ckpt = torch.load(args.tracknet_file, map_location='cpu')",
        "released TrackNet checkpoints were saved from GPU; CUDA storages cannot be deserialised without CUDA"),
      C("inpaintnet_ckpt = torch.load(args.inpaintnet_file, map_location='cuda:0')", "tensor_to_device", "replace",
        True, "inpaintnet_ckpt = torch.load(args.inpaintnet_file, map_location='cpu')",
        "explicit map_location to a CUDA device fails on an NPU host"),
      C("coor_inpaint = inpaintnet(coor_pred.cuda(), inpaint_mask.cuda()).detach().cpu()", "tensor_to_device",
        "replace", True, "coor_inpaint = inpaintnet(coor_pred.to(device), inpaint_mask.to(device)).detach().cpu()",
        "Tensor.cuda() fails on an NPU host (nonoverlap eval mode)"),
  ])

E("tracknetv3-model", "TrackNetV3/model.py", "explicit_replacement",
  "TrackNetV3 model.py (TrackNet / InpaintNet) with a GPU smoke test under __main__", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "the __main__ smoke test uses the NPU when run directly; " + IMPORT_NOTE),
      C("net = TrackNet(in_dim=seq_len * 3 + 3, out_dim=seq_len).cuda().eval()", "tensor_to_device", "replace", True,
        "net = TrackNet(in_dim=seq_len * 3 + 3, out_dim=seq_len).npu().eval()", "Module.cuda() fails on NPU host"),
      C("inp = torch.randn(4, seq_len * 3 + 3, 288, 512).cuda()", "tensor_to_device", "replace", True,
        "inp = torch.randn(4, seq_len * 3 + 3, 288, 512).npu()", "Tensor.cuda() fails on an NPU host"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "initialises CUDA and raises; needed for correct timing of async NPU kernels"),
      C("torch.cuda.synchronize()  # wait for the timed iterations", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for the timed iterations", "same as above"),
      C("inpaint = InpaintNet().cuda().eval()", "tensor_to_device", "replace", True,
        "inpaint = InpaintNet().npu().eval()", "Module.cuda() fails on an NPU host"),
      C("coor = torch.rand(4, 16, 2, device='cuda')", "device_type", "replace", True,
        "coor = torch.rand(4, 16, 2, device='npu')", "factory with a CUDA device fails"),
      C("mask = torch.zeros(4, 16, 1, device='cuda')", "device_type", "replace", True,
        "mask = torch.zeros(4, 16, 1, device='npu')", "factory with a CUDA device fails"),
  ])

E("tracknetv3-general", "TrackNetV3/utils/general.py", "device_branch_or_abstraction",
  "TrackNetV3 utils/general.py (seeding, device selection helper, model factory, video/csv writers)", [
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "queued lazily and never applied on an NPU host; torch.manual_seed above already seeds the default "
        "generators (unconfirmed for the NPU generator on old torch_npu)"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = device_str", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = device_str",
        "explicit device selection is silently ignored on Ascend"),
      C("assert torch.cuda.is_available() and torch.cuda.device_count() >= len(device_str.split(','))",
        "torch_cuda_api", "replace", True,
        "assert torch.npu.is_available() and torch.npu.device_count() >= len(device_str.split(',')), \\",
        "always fails on an NPU host when a device string is given"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        "if torch.npu.is_available():  # new NPU branch: log torch.npu.get_device_name(i), return torch.device('npu:0')",
        "without an NPU branch the helper silently returns CPU; the CUDA branch body stays as is"),
  ])

E("tracknetv3-req", "TrackNetV3/requirements.txt", "explicit_replacement",
  "TrackNetV3 requirements.txt pinned to the cu113 PyTorch wheels", [
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "device_type", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "torch_npu README installs the CPU torch wheel on x86 (plain PyPI on aarch64); stale index is harmless "
        "once the pins change (unconfirmed that a CUDA x86 wheel breaks torch_npu)"),
      C("torch==1.12.1+cu113", "device_type", "replace", True, "torch==2.1.0",
        "+cu113 wheel is CUDA-only (no aarch64 build) and no torch_npu exists for torch 1.12.1; "
        "torch_npu wheel version must equal the torch version"),
      C("torchvision==0.13.1+cu113", "device_type", "replace", True, "torchvision==0.16.0",
        "must match torch 2.1.0; +cu113 build is CUDA-only"),
      C("pycocotools==2.0.6", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "the torch_npu pin matching torch 2.1.0 (CANN 8.1.RC1 line)"),
  ])

# ---------------------------------------------------------------------------------------------------------
# Tennis broadcast analysis (ball / court / players / bounces) -- ported with transfer_to_npu
# ---------------------------------------------------------------------------------------------------------
E("tennis-main", "tennis_tracking/main.py", "transfer_to_npu",
  "tennis broadcast pipeline main (TrackNet ball, court keypoints, Faster R-CNN players, bounce minimap)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu; from torch_npu.contrib import transfer_to_npu",
        "the only edit in transfer_to_npu style: 'cuda:N' strings, torch.cuda.is_available/set_device/"
        "empty_cache and .to(device)/map_location are redirected to the NPU by the patch"),
  ])

E("tennis-ball", "tennis_tracking/ball_detector.py", "transfer_to_npu",
  "tennis TrackNet(v1) ball detector wrapper (BallTrackerNet + Hough post-processing)", [
      C("self.use_half = str(device).startswith('cuda') and torch.cuda.get_device_capability()[0] >= 7",
        "device_capability_check", "replace", True,
        "self.use_half = str(device).startswith(('cuda', 'npu'))  # fp16 is native on Ascend",
        "not fixed by transfer_to_npu: get_device_capability() returns None on NPU (unless "
        "TORCH_NPU_DEVICE_CAPABILITY is set), so None[0] raises TypeError"),
  ])

# ---------------------------------------------------------------------------------------------------------
# TrackLab / sn-gamestate (SoccerNet game state reconstruction)
# ---------------------------------------------------------------------------------------------------------
E("tracklab-main", "tracklab/tracklab/main.py", "device_branch_or_abstraction",
  "TrackLab Hydra entry point (device resolution, module instantiation, tracking engine)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('return "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "add_branch", True,
        'return "cuda" if torch.cuda.is_available() else ("npu" if torch.npu.is_available() else "cpu")',
        "device: auto silently resolves to CPU on an NPU host"),
  ])

E("tracklab-config", "tracklab/tracklab/configs/config.yaml", "device_branch_or_abstraction",
  "TrackLab base Hydra config (device: auto)", [])

E("tracklab-bpbreid", "tracklab/tracklab/wrappers/reid/bpbreid_api.py", "device_branch_or_abstraction",
  "TrackLab BPBReID body-part re-ID wrapper (torchreid FeatureExtractor)", [
      C("self.cfg.use_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        'self.cfg.use_gpu = str(self.device).startswith(("cuda", "npu"))',
        "False on an NPU host, so the torchreid engine/extractor silently run on CPU; note the torchreid fork "
        "itself calls .cuda() when use_gpu is set and needs the same port"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on an NPU host"),
  ])

E("sngamestate-config", "sn_gamestate/sn_gamestate/configs/soccernet.yaml", "device_branch_or_abstraction",
  "sn-gamestate soccernet.yaml (Hydra pipeline: YOLOv8, PRTReID, StrongSORT, MMOCR, TVCalib/NBJW)", [
      C("=device: cuda:0", "device_type", "replace", True, "device: npu:0",
        "tracklab's resolve_device warns and falls back to CPU for a CUDA device without CUDA"),
      C('device: "cuda:0"', "device_type", "replace", True, 'device: "npu:0"',
        "MMOCR inferencers are built on this device; CUDA device fails (mmengine/mmocr NPU support itself "
        "unconfirmed in the knowledge base)"),
  ])

E("sngamestate-mmocr", "sn_gamestate/sn_gamestate/jersey/mmocr_api.py", "device_branch_or_abstraction",
  "sn-gamestate MMOCR jersey-number module + tracklet majority vote", [
      C('def tracklet_jersey_vote(detections: pd.DataFrame, device="cuda", min_conf=0.3):', "device_type",
        "replace", True, 'def tracklet_jersey_vote(detections: pd.DataFrame, device="npu", min_conf=0.3):',
        "default CUDA device for torch.as_tensor fails when callers rely on the default"),
      C("votes[tid] = int(track_numbers.mode().values.item())", "unsupported_op_workaround", "replace", False,
        "votes[tid] = int(track_numbers.cpu().mode().values.item())",
        "Tensor.mode is on msFmkTransplt's unsupported list and aten::mode has no NPU kernel -> per-track "
        "CPU fallback round trips (perf only)"),
  ])

E("sngamestate-tvcalib", "sn_gamestate/sn_gamestate/calibration/tvcalib_api.py", "device_branch_or_abstraction",
  "sn-gamestate TVCalib wrappers (DeepLabV3 line segmentation + per-frame camera optimisation)", [
      C('self.model.load_state_dict(torch.load(checkpoint)["model"], strict=False)', "tensor_to_device", "replace",
        True, 'self.model.load_state_dict(torch.load(checkpoint, map_location="cpu")["model"], strict=False)',
        "downloaded GPU-trained segmentation checkpoint: CUDA storages cannot be deserialised on an NPU host"),
      C("with torch.cuda.amp.autocast(dtype=torch.float16):", "amp", "replace", False,
        "with torch.autocast(device_type='npu', dtype=torch.float16):",
        "autocast('cuda') disables itself on an NPU host -> fp32 inference (perf only)"),
      C('per_sample_output["keypoints"] = per_sample_output["keypoints"].double()', "unsupported_op_workaround",
        "replace", False, 'per_sample_output["keypoints"] = per_sample_output["keypoints"].float()',
        "fp64 coverage on NPU is partial (many ops fp16/fp32 only, transfer_to_npu maps DoubleTensor to fp32); "
        "unconfirmed which TVCalib ops would fall back or fail, and fp32 may hurt convergence"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "initialises CUDA and raises on an NPU host"),
      C("{torch.cuda.max_memory_allocated() / 2 ** 20:.0f} MiB)", "torch_cuda_api", "replace", False,
        'f"{torch.npu.max_memory_allocated() / 2 ** 20:.0f} MiB)")', "returns 0 without CUDA; log only"),
  ])

E("sngamestate-yolo", "sn_gamestate/scripts/train_yolo_soccernet.py", "explicit_replacement",
  "YOLOv8 (ultralytics) fine-tuning script for SoccerNet-GSR players/ball/referees", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("assert n_gpus <= torch.cuda.device_count(), \\", "torch_cuda_api", "replace", True,
        "assert n_gpus <= torch.npu.device_count(), \\", "device_count() is 0 on an NPU host -> assertion fails"),
      C('f"asked for {n_gpus} GPUs, only {torch.cuda.device_count()} visible"', "torch_cuda_api", "replace", False,
        'f"asked for {n_gpus} NPUs, only {torch.npu.device_count()} visible"', "assertion message only"),
      C("device=gpu_ids if n_gpus > 1 else gpu_ids[0],", "device_type", "replace", True,
        'device=[f"npu:{g}" for g in gpu_ids] if n_gpus > 1 else f"npu:{gpu_ids[0]}",',
        "integer devices make ultralytics' select_device demand CUDA and raise; whether the installed "
        "ultralytics accepts 'npu' is unconfirmed"),
      C("metrics = YOLO(best).val(", "device_type", "replace", True,
        'metrics = YOLO(best).val(data=args.data, imgsz=args.imgsz, batch=args.batch, device="npu:0", half=True)',
        "device=0 requests CUDA device 0"),
      C("pred = det.predict(frame", "device_type", "replace", True,
        'pred = det.predict(frame, imgsz=args.imgsz, conf=0.25, device="npu:0", half=True, verbose=False)[0]',
        "device=0 requests CUDA device 0"),
  ])

E("tracklab-docker", "tracklab/Dockerfile", "explicit_replacement",
  "TrackLab / sn-gamestate runtime Dockerfile on nvidia/cuda 11.8 with the OpenMMLab stack", [
      C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "device_type", "replace", True,
        "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.10",
        "needs a CANN base image (driver user-space libs, set_env exports as ENV); exact registry/tag unverified"),
      C('ENV TORCH_CUDA_ARCH_LIST=', "env_var", "removal", False, None,
        "only steers nvcc builds of CUDA extensions"),
      C('ENV FORCE_CUDA="1"', "env_var", "removal", False, None,
        "forces mmcv source builds to compile CUDA ops; would break if mim falls back to a source build "
        "(unconfirmed whether a prebuilt wheel is picked)"),
      C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None, "no CUDA toolkit on the CANN image"),
      C("RUN pip install --no-cache-dir torch==2.1.2 torchvision==0.16.2 --index-url https://download.pytorch.org/whl/cu118",
        "device_type", "replace", True,
        "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu",
        "torch_npu exists for 2.1.0 (wheel version must equal torch version), not 2.1.2; CPU wheel on x86"),
      C('RUN python -c "import torch, torchvision;', "import_torch_npu", "npu_only_addition", True,
        "RUN pip install --no-cache-dir torch-npu==2.1.0.post17",
        "the torch_npu wheel for torch 2.1.0 (TorchNPU 7.2.0 / CANN 8.3.RC1)"),
      C('&& mim install "mmengine>=0.10.0"', "custom_cuda_extension", "replace", False,
        '&& mim install "mmengine>=0.10.0" && MMCV_WITH_OPS=1 FORCE_NPU=1 pip install "mmcv>=2.0.1,<2.2.0" '
        '&& mim install "mmdet>=3.1.0" "mmocr>=1.0.1" "mmpose>=1.2.0"',
        "mmcv's compiled ops are CUDA-built; NPU build flags taken from mmcv docs, not confirmed in the "
        "knowledge base"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "nvidia-container-runtime hint; Ascend devices are passed at run time (--device /dev/davinciN or "
        "ASCEND_VISIBLE_DEVICES with Ascend Docker Runtime)"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,video", "env_var", "removal", False, None,
        "nvidia-container-runtime hint, no Ascend meaning"),
  ])

# ---------------------------------------------------------------------------------------------------------
# FairMOT fine-tuned for basketball (SportsMOT)
# ---------------------------------------------------------------------------------------------------------
E("fairmot-opts", "fairmot_bball/src/lib/opts.py", "explicit_replacement",
  "FairMOT src/lib/opts.py (--gpus parsing, chunk sizes, opt.device)", [
      C("os.environ['CUDA_VISIBLE_DEVICES'] = opt.gpus_str", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = opt.gpus_str.replace(' ', '')",
        "--gpus is remapped to 0..N-1 just above, so without the visibility variable the wrong NPUs are used; "
        "spaces stripped because ASCEND_RT_VISIBLE_DEVICES parsing stops at the first invalid character "
        "(the default '0, 1' would expose only device 0)"),
      C("opt.device = torch.device('cuda')", "device_type", "replace", True, "opt.device = torch.device('npu')",
        "every batch and the model are moved to opt.device"),
  ])

E("fairmot-trainer", "fairmot_bball/src/lib/trains/base_trainer.py", "explicit_replacement",
  "FairMOT base_trainer.py (custom chunked DataParallel, epoch loop)", [
      C("self.model_with_loss = DataParallel(", "distributed_framework", "replace", True,
        "self.model_with_loss = self.model_with_loss.to(device)  # chunked DataParallel unsupported on NPU",
        "FairMOT's DataParallel subclass scatters with torch.cuda.comm (✘ on Ascend) and nn.DataParallel itself "
        "is ✘; the default --gpus '0, 1' takes this branch"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on an NPU host"),
      C("ret['mem_gb'] = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
        "ret['mem_gb'] = torch.npu.max_memory_allocated() / 1024 ** 3 if torch.npu.is_available() else 0.",
        "is_available() is False on NPU so 0 is logged"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats()",
        "resolves the current CUDA device -> lazy CUDA init raises on an NPU host (end of every epoch)"),
  ])

E("fairmot-dcn-setup", "fairmot_bball/src/lib/models/networks/DCNv2/setup.py", "kernel_rewrite",
  "DCNv2 (CharlesShang) setup.py building the CUDA deformable-conv extension used by FairMOT's DLA-34", [
      C("ext_modules=get_extensions(),", "custom_cuda_extension", "replace", True,
        "ext_modules=[],  # DCN runs through torchvision.ops.deform_conv2d (torchvision_npu) on NPU",
        "get_extensions() raises 'Cuda is not available' on an NPU host; there is no nvcc path"),
  ])

E("fairmot-dcn", "fairmot_bball/src/lib/models/networks/DCNv2/dcn_v2.py", "kernel_rewrite",
  "DCNv2 Python bindings (_DCNv2 autograd Function over the _ext CUDA kernels, DCN, DCNPooling)", [
      C("import _ext as _backend", "custom_cuda_extension", "replace", True,
        "from torchvision.ops import deform_conv2d  # NPU kernel registered by torchvision_npu",
        "the nvcc-built _ext module cannot be built or imported on an NPU host"),
      C("output = _backend.dcn_v2_forward(input, weight, bias,", "custom_cuda_extension", "removal", False, None,
        "dead once dcn_v2_conv maps to deform_conv2d (its autograd replaces the hand-written Function)"),
      C("_backend.dcn_v2_backward(input, weight,", "custom_cuda_extension", "removal", False, None,
        "dead once dcn_v2_conv maps to deform_conv2d"),
      C("dcn_v2_conv = _DCNv2.apply", "custom_cuda_extension", "replace", True,
        "dcn_v2_conv = lambda input, offset, mask, weight, bias, stride, padding, dilation, deformable_groups: "
        "deform_conv2d(input, offset, weight, bias, stride=stride, padding=padding, dilation=dilation, mask=mask)",
        "the DCN call site used by DLA-34's IDAUp; same offset/mask layout as torchvision (modulated DCNv2)"),
      C("_backend.dcn_v2_psroi_pooling_forward(input, rois, offset,", "custom_cuda_extension", "removal", False,
        None, "deformable PSROI pooling is not used by FairMOT; torch_npu's npu_ps_roi_pooling is the "
              "non-deformable variant, so the class is dropped rather than ported"),
      C("_backend.dcn_v2_psroi_pooling_backward(grad_output,", "custom_cuda_extension", "removal", False, None,
        "same: unused deformable PSROI pooling"),
  ])

E("fairmot-sh", "fairmot_bball/experiments/bball_dla34.sh", "explicit_replacement",
  "FairMOT basketball experiment script (DCNv2 rebuild, nvidia-smi, train + track)", [
      C("=set -euo pipefail", "env_var", "npu_only_addition", False,
        "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u",
        SETENV_NOTE + "; set_env.sh of CANN >= 8.5 fails under set -u (unbound CMAKE_PREFIX_PATH)"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
        "NCCL knob; the data-parallel path it tuned is removed on NPU"),
      C("export CUDA_DEVICE_ORDER=PCI_BUS_ID", "env_var", "removal", False, None, "CUDA enumeration hint"),
      C('if ! python -c "import sys; sys.path.insert(0', "custom_cuda_extension", "removal", False, None,
        "the _ext probe always fails after the port and triggers a no-op rebuild; drop the block"),
      C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", True, "npu-smi info",
        "nvidia-smi is absent on an Ascend host and set -e aborts the script"),
  ])

# ---------------------------------------------------------------------------------------------------------
# Hockey player re-identification (DDP)
# ---------------------------------------------------------------------------------------------------------
E("hockey-train-ddp", "hockey_reid/train_ddp.py", "explicit_replacement",
  "hockey player re-ID training: ViT-S/16 + BNNeck, DDP/torchrun, CUDA-stream prefetcher, AMP, NVTX", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "initialises CUDA and raises on an NPU host"),
      C('args.device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
        'args.device = torch.device("npu", args.local_rank)', "device used for every transfer"),
      C('dist.init_process_group(backend="nccl", init_method="env://",', "dist_backend", "replace", True,
        'dist.init_process_group(backend="hccl", init_method="env://",', "no NCCL on Ascend; HCCL backend"),
      C("dist.barrier(device_ids=[args.local_rank])", "dist_backend", "replace", False, "dist.barrier()",
        "some torch versions reject device_ids for non-NCCL backends; unconfirmed for the pinned torch 2.1"),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
        "lazily queued, never applied without CUDA; torch.manual_seed above seeds the default generators"),
      C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
        "CUDA stream construction fails on an NPU host"),
      C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(self.stream):", "CUDA stream context on an NPU stream object"),
      C("self.next_imgs = self.next_imgs.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "self.next_imgs = self.next_imgs.npu(non_blocking=True)", "Tensor.cuda() fails on an NPU host"),
      C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().wait_stream(self.stream)", "CUDA current_stream initialises CUDA and raises"),
      C("imgs.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "imgs.record_stream(torch.npu.current_stream())", "same"),
      C("pids.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "pids.record_stream(torch.npu.current_stream())", "same"),
      C('torch.cuda.nvtx.range_push(f"train_step_{step}")', "torch_cuda_api", "replace", True,
        'rng_id = torch_npu.npu.mstx.range_start(f"train_step_{step}")',
        "torch.cuda.nvtx is not redirected even by transfer_to_npu and fails without CUDA (--profile only); "
        "mstx is the NPU counterpart (exact call names not verified)"),
      C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(rng_id)",
        "same (--profile only)"),
      C('with torch.autocast(device_type="cuda", dtype=args.amp_dtype, enabled=args.amp):', "amp", "replace", False,
        'with torch.autocast(device_type="npu", dtype=args.amp_dtype, enabled=args.amp):',
        "autocast('cuda') disables itself on an NPU host -> fp32 (perf/memory only)"),
      C('f"mem {torch.cuda.max_memory_allocated(args.device)', "torch_cuda_api", "replace", False,
        'f"mem {torch.npu.max_memory_allocated(args.device) / 2 ** 30:.1f}G")', "returns 0 without CUDA; log only"),
      C('with torch.autocast("cuda", dtype=args.amp_dtype, enabled=args.amp):', "amp", "replace", False,
        'with torch.autocast("npu", dtype=args.amp_dtype, enabled=args.amp):', "same as training autocast"),
      C("major, _ = torch.cuda.get_device_capability(args.device)", "device_capability_check", "replace", True,
        "major = 8 if torch.npu.is_bf16_supported() else 7",
        "initialises CUDA and raises on an NPU host; SM versions do not exist on Ascend, ask for bf16 support"),
      C("model = model.cuda(args.local_rank)", "tensor_to_device", "replace", True,
        "model = model.npu(args.local_rank)", "Module.cuda() fails on an NPU host"),
      C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", False,
        "model = torch.compile(model)",
        "--compile only; max-autotune relies on Triton GPU autotuning, Inductor on NPU needs triton-ascend / "
        "torch_npu >= 2.6 graph mode (unconfirmed for this torch 2.1 pin)"),
      C("optimizer = FusedAdam(param_groups, lr=args.lr, adam_w_mode=True)", "fused_optimizer", "replace", False,
        "optimizer = torch_npu.optim.NpuFusedAdamW(param_groups, lr=args.lr)",
        "apex is absent on NPU so the guarded import falls back to AdamW(fused=True), which has an NPU "
        "_fused_adamw_ kernel; NpuFusedAdamW is an optional swap"),
      C("scaler = torch.cuda.amp.GradScaler(", "amp", "replace", False,
        "scaler = torch.npu.amp.GradScaler(enabled=args.amp and args.amp_dtype == torch.float16)",
        "CUDA GradScaler disables itself on an NPU host; consistent with the disabled autocast"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on an NPU host"),
  ])

E("hockey-launch-sh", "hockey_reid/scripts/launch_ddp.sh", "explicit_replacement",
  "torchrun multi-node launcher with NCCL / allocator environment", [
      C("=conda activate hockey-reid", "env_var", "npu_only_addition", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SETENV_NOTE),
      C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
        "device subset given by the scheduler is ignored on Ascend; ranks land on NPUs 0..3 regardless"),
      C("export NCCL_SOCKET_IFNAME=", "env_var", "replace", False,
        "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-ib0}",
        "HCCL picks the host NIC for rendezvous by its own priority; only multi-node runs can be affected "
        "(unconfirmed for this topology)"),
      C("export NCCL_IB_HCA=mlx5", "env_var", "removal", False, None,
        "HCCL uses the NPU-integrated RoCE ports, not host InfiniBand HCAs"),
      C("export NCCL_DEBUG=", "env_var", "removal", False, None, "NCCL logging knob, no effect on HCCL"),
      C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
        "torch_npu watchdog counterpart (default already 1)"),
      C("export TORCH_NCCL_BLOCKING_WAIT=0", "env_var", "removal", False, None, "NCCL-only knob"),
      C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", "replace", False,
        "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True", "allocator fragmentation tuning only"),
  ])

E("hockey-env", "hockey_reid/environment.yml", "explicit_replacement",
  "conda environment.yml with pytorch-cuda, nvcc, faiss-gpu, flash-attn and NVIDIA apex", [
      C("=- nvidia", "device_type", "removal", False, None, "channel only needed for pytorch-cuda"),
      C("=- pytorch=2.1.2", "device_type", "replace", True, "- pytorch=2.1.0",
        "torch_npu is released for 2.1.0 (wheel version must equal torch version), not 2.1.2; CPU build"),
      C("=- torchvision=0.16.2", "device_type", "replace", True, "- torchvision=0.16.0",
        "must match torch 2.1.0"),
      C("=- pytorch-cuda=12.1", "device_type", "removal", True, None,
        "selects the CUDA build of pytorch; torch_npu needs the CPU (x86) / plain (aarch64) build"),
      C("- cudatoolkit-dev=11.7", "custom_cuda_extension", "removal", False, None,
        "nvcc only for building apex/flash-attn, both dropped; availability for aarch64 unconfirmed"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post17",
        "the torch_npu pin for torch 2.1.0"),
      C("- faiss-gpu==1.7.2", "custom_cuda_extension", "replace", False, "- faiss-cpu==1.7.4",
        "CUDA-built wheel (x86_64 only); not imported by train_ddp.py, unconfirmed that install fails"),
      C("- nvidia-ml-py==", "torch_cuda_api", "removal", False, None,
        "NVML bindings, nothing to query on Ascend (npu-smi / torch.npu.mem_get_info instead); installs fine"),
      C("=- flash-attn==2.5.6", "attention_kernel", "removal", True, None,
        "flash-attn cannot be installed on an NPU host; the model's SDPA fallback dispatches to NPU FA"),
      C("- git+https://github.com/NVIDIA/apex.git", "fused_optimizer", "removal", False, None,
        "only used for FusedAdam behind --fused_adam; Ascend's apex patch or torch_npu.optim replaces it"),
  ])

# ---------------------------------------------------------------------------------------------------------
# Basketball pose (HRNet top-down on tracked players)
# ---------------------------------------------------------------------------------------------------------
E("bball-pose-hrnet", "basketball_pose/tools/inference_hrnet.py", "explicit_replacement",
  "HRNet (deep-high-resolution-net.pytorch) inference on basketball broadcast player tracks", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("model_inputs = torch.stack(model_inputs).cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "model_inputs = torch.stack(model_inputs).npu(non_blocking=True)", "Tensor.cuda() fails on an NPU host"),
      C("output_flipped = torch.from_numpy(output_flipped.copy()).cuda()", "tensor_to_device", "replace", True,
        "output_flipped = torch.from_numpy(output_flipped.copy()).npu()", "Tensor.cuda() fails (flip test)"),
      C("pose_model.load_state_dict(torch.load(cfg.TEST.MODEL_FILE), strict=False)", "tensor_to_device", "replace",
        True, "pose_model.load_state_dict(torch.load(cfg.TEST.MODEL_FILE, map_location='cpu'), strict=False)",
        "HRNet model-zoo weights were saved from GPU; CUDA storages cannot be deserialised on an NPU host"),
      C("pose_model = torch.nn.DataParallel(pose_model, device_ids=cfg.GPUS)", "distributed_framework", "removal",
        True, None, "nn.DataParallel is ✘ on Ascend; inference runs on one NPU"),
      C("=pose_model.cuda()", "tensor_to_device", "replace", True, "pose_model.npu()",
        "Module.cuda() fails on an NPU host"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "initialises CUDA and raises; needed for correct latency numbers on NPU"),
      C("torch.cuda.synchronize()  # include the queued kernels in the timing", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # include the queued kernels in the timing", "same"),
      C("torch.cuda.get_device_name()))", "torch_cuda_api", "replace", True,
        "torch.npu.get_device_name()))", "get_device_name initialises CUDA and raises"),
  ])
