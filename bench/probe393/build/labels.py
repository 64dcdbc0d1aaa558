"""Labels for probe393 (sports analytics: action spotting, player/ball tracking).

One C(...) per upstream line a careful porter would edit for Ascend NPU + torch_npu (explicit port,
no transfer_to_npu). `required` follows the complete-port counterfactual described in README.md.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point: torch_npu must be imported before any torch.npu / 'npu' use "
               "(autoloaded only from torch_npu 2.5.1 on; pinned stacks here are older)")
RELEASED_CKPT = ("released checkpoints were pickled from CUDA tensors; torch.load without map_location "
                 "raises on a host without CUDA")

# ---------------------------------------------------------------------------------------------
# SoccerNet-v2 DevKit, Task1 action spotting, CALF baseline
# ---------------------------------------------------------------------------------------------
E("calf_main", "Task1-ActionSpotting/CALF/src/main.py", "explicit_replacement",
  "SoccerNet/sn-spotting (SoccerNetv2-DevKit) Task1-ActionSpotting/CALF/src/main.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NOTE),
    C("num_detections=dataset_Test.num_detections, framerate=args.framerate).cuda()", "tensor_to_device", "replace", True,
      "num_detections=dataset_Test.num_detections, framerate=args.framerate).npu()",
      "model must live on the NPU; .cuda() raises without CUDA"),
    C("criterion_segmentation = ContextAwareLoss(K=dataset_Train.K_parameters.cuda())", "tensor_to_device", "replace", True,
      "criterion_segmentation = ContextAwareLoss(K=dataset_Train.K_parameters.npu())",
      "the K context parameters are combined with NPU predictions inside the loss"),
    C('checkpoint = torch.load(os.path.join("models", args.model_name, "model.pth.tar"))', "device_type", "replace", True,
      'checkpoint = torch.load(os.path.join("models", args.model_name, "model.pth.tar"), map_location="npu")',
      "--test_only is documented with the released CALF_v2 model.pth.tar; " + RELEASED_CKPT),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(args.GPU)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(args.GPU)',
      "--GPU would be silently ignored on Ascend (everything lands on NPU 0); set before the lazy NPU init"),
])

E("calf_model", "Task1-ActionSpotting/CALF/src/model.py", "explicit_replacement",
  "SoccerNet/sn-spotting Task1-ActionSpotting/CALF/src/model.py (ContextAwareModel)", [
    C("checkpoint = torch.load(weights)", "device_type", "replace", True,
      "checkpoint = torch.load(weights, map_location='cpu')",
      "--load_weights points at released CUDA-trained weights; the model is still on CPU at this point, so map to cpu"),
])

E("calf_train", "Task1-ActionSpotting/CALF/src/train.py", "explicit_replacement",
  "SoccerNet/sn-spotting Task1-ActionSpotting/CALF/src/train.py (trainer/train/test/testSpotting)", [
    C("feats = feats.cuda()", "tensor_to_device", "replace", True, "feats = feats.npu()", "input chunk to the model device"),
    C("labels = labels.cuda().float()", "tensor_to_device", "replace", True, "labels = labels.npu().float()",
      "segmentation targets meet NPU outputs in ContextAwareLoss"),
    C("targets = targets.cuda().float()", "tensor_to_device", "replace", True, "targets = targets.npu().float()",
      "spotting targets meet NPU outputs in SpottingLoss"),
    C("model(feat_half1.cuda().unsqueeze(1))", "tensor_to_device", "replace", True,
      "output_segmentation_half_1, output_spotting_half_1 = model(feat_half1.npu().unsqueeze(1))", "validation inference, half 1"),
    C("model(feat_half2.cuda().unsqueeze(1))", "tensor_to_device", "replace", True,
      "output_segmentation_half_2, output_spotting_half_2 = model(feat_half2.npu().unsqueeze(1))", "validation inference, half 2"),
    C("feat = feat_half1[start_frame:end_frame].cuda()", "tensor_to_device", "replace", True,
      "feat = feat_half1[start_frame:end_frame].npu()", "test-time batched inference, half 1"),
    C("feat = feat_half2[start_frame:end_frame].cuda()", "tensor_to_device", "replace", True,
      "feat = feat_half2[start_frame:end_frame].npu()", "test-time batched inference, half 2"),
])

E("calf_loss", "Task1-ActionSpotting/CALF/src/loss.py", "explicit_replacement",
  "SoccerNet/sn-spotting Task1-ActionSpotting/CALF/src/loss.py (ContextAwareLoss, SpottingLoss)", [])

E("calf_classes", "Task1-ActionSpotting/CALF/src/config/classes.py", "explicit_replacement",
  "SoccerNet/sn-spotting Task1-ActionSpotting/CALF/src/config/classes.py (event dicts, K parameters)", [])

E("calf_launcher", "Task1-ActionSpotting/CALF/train_calf.sh", "explicit_replacement",
  "launcher in the style of the SoccerNet CALF README commands", [
    C("# conda activate CALF-pytorch", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN runtime libraries must be on the path before python imports torch_npu"),
    C("nvidia-smi --query-gpu=name", "torch_cuda_api", "replace", False,
      'echo "Using NPU ${GPU} ($(npu-smi info -t board -i ${GPU} | head -n 3))"',
      "cosmetic: a missing nvidia-smi inside $(...) only prints an error, set -e does not fire"),
])

# ---------------------------------------------------------------------------------------------
# E2E-Spot (jhong93/spot): end-to-end precise temporal event spotting (tennis, FineGym, SoccerNet-ball)
# ---------------------------------------------------------------------------------------------
E("spot_train", "train_e2e.py", "explicit_replacement", "jhong93/spot train_e2e.py (E2EModel, epoch/predict, main)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("modality, device='cuda', multi_gpu=False):", "device_type", "replace", True,
      "modality, device='npu', multi_gpu=False):",
      "default device of E2EModel; every caller relies on the default"),
    C("self._model = nn.DataParallel(self._model)", "distributed_framework", "replace", True,
      "warnings.warn('nn.DataParallel is unsupported on Ascend NPU; -mgpu ignored (use DDP + hccl for multi-NPU)')",
      "torch.nn.DataParallel is marked unsupported (✘) on Atlas A2/A3 in Ascend's 2.7.1 API list; reached with -mgpu"),
    C("with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
      "cuda autocast disables itself with a warning on a host without CUDA: training silently runs fp32 while the "
      "GradScaler still scales"),
    C("with torch.cuda.amp.autocast() if use_amp else nullcontext():", "amp", "replace", True,
      "with torch.npu.amp.autocast() if use_amp else nullcontext():",
      "same for inference: use_amp would be silently ignored"),
])

E("spot_common", "model/common.py", "explicit_replacement", "jhong93/spot model/common.py (BaseRGBModel, step)", [
    C("torch.cuda.amp.GradScaler() if self.device == 'cuda' else None", "amp", "replace", True,
      "torch.npu.amp.GradScaler() if self.device == 'npu' else None",
      "string comparison on the device name: unported it silently drops loss scaling (scaler None) under fp16 autocast"),
])

E("spot_test", "test_e2e.py", "explicit_replacement", "jhong93/spot test_e2e.py", [
    C("model_dir, 'checkpoint_{:03d}.pt'.format(best_epoch))))", "device_type", "replace", True,
      "model_dir, 'checkpoint_{:03d}.pt'.format(best_epoch)), map_location='cpu'))",
      "test_e2e.py is how the released E2E-Spot models are evaluated; " + RELEASED_CKPT),
])

E("spot_frame", "dataset/frame.py", "explicit_replacement",
  "jhong93/spot dataset/frame.py (FrameReader, deferred 'GPU' augmentation, ActionSpotDataset)", [])

E("spot_reqs", "requirements.txt", "explicit_replacement", "jhong93/spot-style pinned requirements", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "env_var", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 Ascend hosts use CPU torch wheels; once the +cu113 pins are gone the extra index is harmless"),
    C("torch==1.11.0+cu113", "env_var", "replace", True, "torch==2.1.0",
      "a +cu113 wheel cannot pair with torch_npu (and has no aarch64 build)"),
    C("torchvision==0.12.0+cu113", "env_var", "replace", True, "torchvision==0.16.0",
      "torchvision must match torch 2.1.0"),
    C("timm==0.5.4", "import_torch_npu", "npu_only_addition", True, "torch_npu==2.1.0.post10",
      "torch_npu pinned to the torch version (wheel = torch version + .postN); inserted after the torch pins"),
])

# ---------------------------------------------------------------------------------------------
# MixSort (SportsMOT baseline): ByteTrack/YOLOX detector + MixFormer appearance association
# ---------------------------------------------------------------------------------------------
E("mixsort_train", "tools/train.py", "explicit_replacement", "MCG-NJU/MixSort tools/train.py (YOLOX/ByteTrack train entry)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('"--dist-backend", default="nccl", type=str, help="distributed backend"', "dist_backend", "replace", True,
      '"--dist-backend", default="hccl", type=str, help="distributed backend"',
      "NCCL does not exist on Ascend; this default is what launch() actually receives"),
    C("num_gpu = torch.cuda.device_count() if args.devices is None else args.devices", "torch_cuda_api", "replace", True,
      "num_gpu = torch.npu.device_count() if args.devices is None else args.devices",
      "torch.cuda.device_count() is 0 on an NPU host"),
    C("assert num_gpu <= torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "assert num_gpu <= torch.npu.device_count()", "assertion fails for any -d >= 1"),
])

E("mixsort_launch", "yolox/core/launch.py", "explicit_replacement", "MCG-NJU/MixSort yolox/core/launch.py", [
    C('backend="nccl",', "dist_backend", "replace", False, 'backend="hccl",',
      "default only: tools/train.py always passes backend=args.dist_backend"),
    C('assert num_gpus_per_machine <= torch.cuda.device_count(), "not enough GPUs on this node"', "torch_cuda_api", "replace", True,
      'assert num_gpus_per_machine <= torch.npu.device_count(), "not enough NPUs on this node"',
      "subprocess launcher aborts with 0 CUDA devices"),
    C("torch.cuda.is_available()", "torch_cuda_api", "replace", True, "torch.npu.is_available()",
      "worker asserts CUDA availability before init_process_group"),
    C("=assert num_gpus_per_machine <= torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "assert num_gpus_per_machine <= torch.npu.device_count()", "per-worker check"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "binds each rank to its NPU; torch.cuda.set_device raises on a non-CUDA build"),
])

E("mixsort_trainer", "yolox/core/trainer.py", "explicit_replacement", "MCG-NJU/MixSort yolox/core/trainer.py (YOLOX Trainer)", [
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler(enabled=args.fp16)",
      "a CUDA GradScaler disables itself without CUDA: fp16 training would run without loss scaling"),
    C('self.device = "cuda:{}".format(self.local_rank)', "device_type", "replace", True,
      'self.device = "npu:{}".format(self.local_rank)', "model.to(self.device) and checkpoint map_location use it"),
    C("with torch.cuda.amp.autocast(enabled=self.amp_training):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=self.amp_training):", "--fp16 (default True) would be silently ignored"),
    C("torch.cuda.set_device(self.local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(self.local_rank)",
      "raises on a non-CUDA build"),
])

E("mixsort_prefetch", "yolox/data/data_prefetcher.py", "explicit_replacement",
  "MCG-NJU/MixSort yolox/data/data_prefetcher.py (side-stream H2D prefetcher)", [
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
      "torch.cuda.Stream cannot be constructed without CUDA"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(self.stream):",
      "copy on the side stream"),
    C("self.next_target = self.next_target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "self.next_target = self.next_target.npu(non_blocking=True)", "async H2D copy of targets"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(self.stream)", "compute stream waits for the copy stream"),
    C("target.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "target.record_stream(torch.npu.current_stream())", "keeps the caching allocator from reusing the block early"),
    C("self.next_input = self.next_input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "self.next_input = self.next_input.npu(non_blocking=True)", "async H2D copy of images"),
    C("input.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "input.record_stream(torch.npu.current_stream())", "same, for the image batch"),
    C("tensor = torch.LongTensor(1).cuda()", "tensor_to_device", "replace", True, "tensor = torch.LongTensor(1).npu()",
      "multi-scale size is broadcast over HCCL, which needs an NPU tensor"),
])

E("mixsort_dist", "yolox/utils/dist.py", "explicit_replacement", "MCG-NJU/MixSort yolox/utils/dist.py (detectron2-style comm)", [
    C('if dist.get_backend() == "nccl":', "dist_backend", "replace", True, 'if dist.get_backend() == "hccl":',
      "backend-string comparison (not rewritten by any automatic tool): unported, the pickled-object all_gather "
      "runs on the HCCL WORLD group and trips the assert below"),
    C('assert backend in ["gloo", "nccl"]', "dist_backend", "replace", False, 'assert backend in ["gloo", "hccl"]',
      "only reached with an explicit non-gloo group; the default path uses the gloo group once the line above is ported"),
    C('device = torch.device("cpu" if backend == "gloo" else "cuda")', "device_type", "replace", False,
      'device = torch.device("cpu" if backend == "gloo" else "npu")',
      "same: only reached for an explicit HCCL group"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "unported it just skips the sync, so reported forward/track times are async (timing only)"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "with the guard above ported this line runs and torch.cuda.synchronize raises"),
])

E("mixsort_metric", "yolox/utils/metric.py", "explicit_replacement", "MCG-NJU/MixSort yolox/utils/metric.py", [
    C('"nvidia-smi --query-gpu=memory.total,memory.used --format=csv,nounits,noheader"', "torch_cuda_api", "replace", True,
      "free, total = torch.npu.mem_get_info(int(cuda_device))  # replaces the nvidia-smi query",
      "only with -o/--occupy: nvidia-smi is absent, the parse below raises"),
    C("x = torch.cuda.FloatTensor(256, 1024, block_mem)", "tensor_to_device", "replace", True,
      "x = torch.empty((256, 1024, block_mem), dtype=torch.float32, device='npu')", "only with -o/--occupy"),
    C("mem_usage_bytes = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "mem_usage_bytes = torch.npu.max_memory_allocated()",
      "log line only: the CUDA call returns 0 when CUDA was never initialised"),
])

E("mixsort_evaluator", "yolox/evaluators/mot_evaluator.py", "explicit_replacement",
  "MCG-NJU/MixSort yolox/evaluators/mot_evaluator.py (evaluate_mixsort)", [
    C("tensor_type = torch.cuda.HalfTensor if half else torch.cuda.FloatTensor", "tensor_to_device", "replace", True,
      "tensor_type = torch.npu.HalfTensor if half else torch.npu.FloatTensor",
      "imgs.type(tensor_type) is how frames reach the detector"),
    C("statistics = torch.cuda.FloatTensor([inference_time, track_time, n_samples])", "tensor_to_device", "replace", True,
      "statistics = torch.tensor([inference_time, track_time, n_samples], dtype=torch.float32, device='npu')",
      "constructed unconditionally and reduced over HCCL in distributed eval"),
])

E("mixsort_tracker", "yolox/mixsort_tracker/mixsort_tracker.py", "explicit_replacement",
  "MCG-NJU/MixSort yolox/mixsort_tracker/mixsort_tracker.py (MIXTracker)", [
    C("self.network = network.cuda()", "tensor_to_device", "replace", True, "self.network = network.npu()",
      "MixFormer association network"),
    C("template = torch.stack(template_list, dim=0).cuda()", "tensor_to_device", "replace", True,
      "template = torch.stack(template_list, dim=0).npu()", "templates are kept on CPU per track and batched here"),
])

E("mixsort_trkutils", "MixViT/lib/test/tracker/tracker_utils.py", "explicit_replacement",
  "MCG-NJU/MixSort MixViT/lib/test/tracker/tracker_utils.py (MixFormer preprocessors)", [
    C("self.mean = torch.tensor([0.485, 0.456, 0.406]).view((1, 3, 1, 1)).cuda()", "tensor_to_device", "replace", True,
      "self.mean = torch.tensor([0.485, 0.456, 0.406]).view((1, 3, 1, 1)).npu()", "Preprocessor (masked MixFormer trackers)"),
    C("self.std = torch.tensor([0.229, 0.224, 0.225]).view((1, 3, 1, 1)).cuda()", "tensor_to_device", "replace", True,
      "self.std = torch.tensor([0.229, 0.224, 0.225]).view((1, 3, 1, 1)).npu()", "Preprocessor"),
    C("torch.tensor(img_arr).cuda().float().permute((2,0,1))", "tensor_to_device", "replace", True,
      "img_tensor = torch.tensor(img_arr).npu().float().permute((2,0,1)).unsqueeze(dim=0)", "Preprocessor"),
    C("amask_tensor = torch.from_numpy(amask_arr).to(torch.bool).cuda()", "tensor_to_device", "replace", True,
      "amask_tensor = torch.from_numpy(amask_arr).to(torch.bool).npu().unsqueeze(dim=0)  # (1,H,W)", "Preprocessor"),
    C("[0.485, 0.456, 0.406]).reshape(1, 3, 1, 1).cuda()", "tensor_to_device", "replace", True,
      "self.mean = torch.tensor([0.485, 0.456, 0.406]).reshape(1, 3, 1, 1).npu()", "Preprocessor_wo_mask (used by MixSort)"),
    C("[0.229, 0.224, 0.225]).reshape(1, 3, 1, 1).cuda()", "tensor_to_device", "replace", True,
      "self.std = torch.tensor([0.229, 0.224, 0.225]).reshape(1, 3, 1, 1).npu()", "Preprocessor_wo_mask"),
    C("torch.tensor(img_arr).cuda().float().permute((2, 0, 1))", "tensor_to_device", "replace", True,
      "img_tensor = torch.tensor(img_arr).npu().float().permute((2, 0, 1)).unsqueeze(dim=0)", "Preprocessor_wo_mask"),
])

E("mixsort_prroi", "MixViT/external/PreciseRoIPooling/pytorch/prroi_pool/functional.py", "kernel_rewrite",
  "PreciseRoIPooling (vacancy/PreciseRoIPooling) pytorch/prroi_pool/functional.py as vendored by MixFormer/MixSort", [
    C("import torch.autograd as ag", "custom_cuda_extension", "npu_only_addition", True,
      "import torchvision  # roi_align stands in for the CUDA PrRoIPool kernel on NPU",
      "needed by the rewritten prroi_pool2d below"),
    C("_prroi_pooling = load_extension(", "custom_cuda_extension", "replace", False,
      "_prroi_pooling = None  # nvcc JIT build of prroi_pooling_gpu_impl.cu dropped: no CUDA toolchain on Ascend",
      "dead code once prroi_pool2d no longer goes through PrRoIPool2DFunction; a porter removes it for clarity"),
    C("prroi_pool2d = PrRoIPool2DFunction.apply", "custom_cuda_extension", "replace", True,
      "prroi_pool2d = lambda features, rois, ph, pw, scale: torchvision.ops.roi_align(features, rois, (int(ph), int(pw)), float(scale), sampling_ratio=2, aligned=True)",
      "the CUDA-only JIT extension (torch.utils.cpp_extension.load with a .cu source) cannot build on Ascend; "
      "roi_align (NPU kernel via torchvision_npu) approximates the integral PrRoI average, so the score head's "
      "numerics change slightly (unconfirmed how much)"),
])

E("mixsort_boxes", "yolox/utils/boxes.py", "explicit_replacement", "MCG-NJU/MixSort yolox/utils/boxes.py (postprocess with batched_nms)", [
    C("=import torchvision", "unsupported_op_workaround", "npu_only_addition", False,
      "import torchvision_npu",
      "torchvision.ops.batched_nms on NPU tensors: torchvision_npu registers an NPU nms; without it the op should "
      "take torch_npu's CPU fallback (performance only; unconfirmed for torchvision's custom ops)"),
])

E("mixsort_setup", "setup.py", "explicit_replacement", "MCG-NJU/MixSort setup.py (YOLOX CppExtension for COCOeval_opt)", [])

E("mixsort_docker", "Dockerfile", "explicit_replacement", "MCG-NJU/MixSort / ByteTrack Dockerfile", [
    C("FROM nvcr.io/nvidia/tensorrt:21.09-py3", "env_var", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "needs a CANN base image with the Ascend toolkit (exact tag unconfirmed); the driver is mounted from the host"),
    C("sed -i 's/torch>=1.7/torch==1.9.1+cu111/g' requirements.txt", "env_var", "replace", True,
      "&& sed -i 's/torch>=1.7/torch==2.1.0/g' requirements.txt \\",
      "CUDA 11.1 wheel cannot pair with torch_npu"),
    C("sed -i 's/torchvision==0.10.0/torchvision==0.10.1+cu111/g' requirements.txt", "env_var", "replace", True,
      "&& sed -i 's/torchvision==0.10.0/torchvision==0.16.0/g' requirements.txt \\",
      "torchvision matched to torch 2.1.0"),
    C("pip3 install -r requirements.txt -f https://download.pytorch.org/whl/torch_stable.html", "import_torch_npu", "replace", True,
      "&& pip3 install -r requirements.txt --extra-index-url https://download.pytorch.org/whl/cpu && pip3 install torch_npu==2.1.0.post10 \\",
      "CPU torch wheel plus the matching torch_npu"),
    C("RUN git clone https://github.com/NVIDIA-AI-IOT/torch2trt", "unsupported_op_workaround", "removal", False, None,
      "TensorRT conversion has no Ascend equivalent here (ATC/OM is a separate flow); the stage may even build, "
      "it is just useless"),
])

# ---------------------------------------------------------------------------------------------
# TrackNetV3 (shuttlecock / ball tracking, TrackNet + InpaintNet)
# ---------------------------------------------------------------------------------------------
E("tnv3_train", "train.py", "explicit_replacement", "qaz812345/TrackNetV3 train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("mask = torch.from_numpy(mask).float().cuda()", "tensor_to_device", "replace", True,
      "mask = torch.from_numpy(mask).float().npu().reshape(mask.shape[0], mask.shape[1], 1)", "InpaintNet random mask"),
    C("x, y = x.float().cuda(), y.float().cuda()", "tensor_to_device", "replace", True,
      "x, y = x.float().npu(), y.float().npu()", "TrackNet batch"),
    C("coor_pred, coor = coor_pred.cuda(), coor.cuda()", "tensor_to_device", "replace", True,
      "coor_pred, coor = coor_pred.npu(), coor.npu()", "InpaintNet batch"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
      "torch.cuda.manual_seed is queued lazily and never runs; torch.manual_seed above already seeds the NPU generator "
      "(custom-device seeding, unconfirmed for old torch_npu)"),
    C("model = get_model(args.model_name, args.seq_len, args.bg_mode).cuda()", "tensor_to_device", "replace", True,
      "model = get_model(args.model_name, args.seq_len, args.bg_mode).npu()", "model placement"),
])

E("tnv3_predict", "predict.py", "explicit_replacement", "qaz812345/TrackNetV3 predict.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("tracknet_ckpt = torch.load(args.tracknet_file)", "device_type", "replace", True,
      "tracknet_ckpt = torch.load(args.tracknet_file, map_location='cpu')",
      "README points users at the released TrackNet_best.pt; " + RELEASED_CKPT),
    C("tracknet = get_model('TrackNet', tracknet_seq_len, bg_mode).cuda()", "tensor_to_device", "replace", True,
      "tracknet = get_model('TrackNet', tracknet_seq_len, bg_mode).npu()", "model placement"),
    C("inpaintnet_ckpt = torch.load(args.inpaintnet_file)", "device_type", "replace", True,
      "inpaintnet_ckpt = torch.load(args.inpaintnet_file, map_location='cpu')", "released InpaintNet_best.pt; " + RELEASED_CKPT),
    C("inpaintnet = get_model('InpaintNet').cuda()", "tensor_to_device", "replace", True,
      "inpaintnet = get_model('InpaintNet').npu()", "model placement"),
    C("x = x.float().cuda()", "tensor_to_device", "replace", True, "x = x.float().npu()", "non-overlap inference"),
    C("x = x.cuda().float()", "tensor_to_device", "replace", True, "x = x.npu().float()", "temporal-ensemble inference"),
    C("inpaintnet(coor_pred.cuda(), inpaint_mask.cuda())", "tensor_to_device", "replace", True,
      "coor_inpaint = inpaintnet(coor_pred.npu(), inpaint_mask.npu()).detach().cpu()", "InpaintNet inference"),
])

E("tnv3_test", "test.py", "explicit_replacement", "qaz812345/TrackNetV3 test.py (evaluation helpers, also imported by train/predict)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "module-level device global: unported it silently picks cpu, so eval during NPU training mixes devices and errors"),
])

E("tnv3_model", "model.py", "explicit_replacement", "qaz812345/TrackNetV3 model.py (TrackNet U-Net, InpaintNet)", [])

E("tnv3_reqs", "requirements.txt", "explicit_replacement", "qaz812345/TrackNetV3 requirements.txt", [
    C("torch==2.0.1", "import_torch_npu", "npu_only_addition", True, "torch_npu==2.0.1.post1",
      "torch_npu wheel matching torch 2.0.1 (branch v2.0.1-5.0.0, CANN 7.0.0; EOL, a porter may bump both)"),
])

# ---------------------------------------------------------------------------------------------
# roboflow/sports (Soccer AI example: YOLO detection, ByteTrack, SigLIP+UMAP+KMeans team classifier)
# ---------------------------------------------------------------------------------------------
E("sports_main", "examples/soccer/main.py", "explicit_replacement", "roboflow/sports examples/soccer/main.py", [
    C("from ultralytics import YOLO", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "--device npu only parses once torch_npu registered the backend (no autoload before 2.5.1); "
      "the file itself is device-agnostic"),
])

E("sports_team", "sports/common/team.py", "explicit_replacement", "roboflow/sports sports/common/team.py (TeamClassifier)", [])

E("sports_run", "examples/soccer/run_all_modes.sh", "explicit_replacement", "launcher for roboflow/sports examples/soccer (README commands)", [
    C("set -euo pipefail", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; insert it BEFORE set -u, since set_env.sh expands possibly-unset variables"),
    C("DEVICE=${DEVICE:-cuda}", "device_type", "replace", True, "DEVICE=${DEVICE:-npu}",
      "'cuda' makes YOLO(...).to(device='cuda') raise; whether ultralytics' predictor then keeps the model on the NPU "
      "is unconfirmed (SigLIP in TeamClassifier does run there)"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0}",
      "device selection would be silently ignored on Ascend"),
])
