# Labels for probe413 (deepfake / face-forgery detection). One C(...) per upstream line a careful
# porter would edit for Ascend NPU + torch_npu, written as an explicit port (no transfer_to_npu).
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: torch_npu must be imported before any 'npu' device is used "
               "(needed for torch_npu < 2.5.1; autoloaded from 2.5.1, still recommended)")
PIN_NOTE = ("performance only: without pin_memory_device the DataLoader pins for CUDA, which is absent on an "
            "NPU host, so pinning is skipped; pin_memory_device='npu' behaviour is unconfirmed in the knowledge base")
SEED_NOTE = ("torch.manual_seed is also called, which seeds registered accelerator backends; the CUDA seed call "
             "is a silent no-op on an NPU host (unconfirmed that torch.manual_seed covers the NPU generator in every version)")

# ----------------------------------------------------------------------------------------------
# DeepfakeBench (SCLBD/DeepfakeBench)
# ----------------------------------------------------------------------------------------------
E("dfb_train", "training/train.py", "explicit_replacement",
  "SCLBD/DeepfakeBench training/train.py (argparse, module-level set_device, NCCL DDP init)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)",
      "runs unconditionally at import; torch.cuda.set_device raises without CUDA, and each DDP rank must bind its NPU"),
    C("torch.cuda.manual_seed_all(config['manualSeed'])", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(config['manualSeed'])", SEED_NOTE),
    C("backend='nccl',", "dist_backend", "replace", True, "backend='hccl',",
      "NCCL is not available on Ascend; the --ddp path must use HCCL"),
])

E("dfb_trainer", "training/trainer/trainer.py", "explicit_replacement",
  "SCLBD/DeepfakeBench training/trainer/trainer.py (module-level device global, .cuda() batch moves, DDP wrap)", [
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "on an NPU host torch.cuda.is_available() is False, so the whole trainer would silently train on the CPU"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "num_gpus = torch.npu.device_count()", "only printed; returns 0 on an NPU host but nothing depends on it"),
    C("data_dict[key] = data_dict[key].cuda()", "tensor_to_device", "replace", True,
      "data_dict[key] = data_dict[key].npu()",
      "Tensor.cuda() raises without CUDA; the batch must go to the NPU where the model lives"),
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", True,
      'f"peak NPU memory: {torch.npu.max_memory_allocated() / 1024 ** 3:.2f} GiB"',
      "executed every 300 iterations on rank 0; the CUDA memory query raises on a host without CUDA"),
])

E("dfb_test", "training/test.py", "explicit_replacement",
  "SCLBD/DeepfakeBench training/test.py (device global, map_location=device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "silent CPU fallback otherwise; torch.load(map_location=device) and every .to(device) follow this global"),
    C("torch.cuda.manual_seed_all(config['manualSeed'])", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(config['manualSeed'])", SEED_NOTE),
])

E("dfb_xception_det", "training/detectors/xception_detector.py", "explicit_replacement",
  "SCLBD/DeepfakeBench training/detectors/xception_detector.py (device-agnostic detector)", [])

E("dfb_clip_det", "training/detectors/clip_detector.py", "explicit_replacement",
  "SCLBD/DeepfakeBench training/detectors/clip_detector.py (HF transformers CLIP vision backbone)", [])

E("dfb_supcon", "training/loss/supcon_loss.py", "explicit_replacement",
  "SCLBD/DeepfakeBench training/loss/supcon_loss.py (SupContrast loss with is_cuda device pick)", [
    C("device = torch.device('cuda') if features.is_cuda else torch.device('cpu')", "device_type", "replace", True,
      "device = features.device",
      "NPU features have is_cuda False, so the masks would be built on the CPU and mixed with NPU logits "
      "(device mismatch error)"),
])

E("dfb_metric_utils", "training/metrics/utils.py", "explicit_replacement",
  "SCLBD/DeepfakeBench training/metrics/utils.py (sklearn metrics, no device code)", [])

E("dfb_xception_cfg", "training/config/detector/xception.yaml", "explicit_replacement",
  "SCLBD/DeepfakeBench training/config/detector/xception.yaml (cuda/cudnn flags)", [])

E("dfb_preprocess", "preprocessing/preprocess.py", "explicit_replacement",
  "SCLBD/DeepfakeBench preprocessing/preprocess.py (dlib/OpenCV CPU face cropping)", [])

E("dfb_install", "install.sh", "explicit_replacement",
  "SCLBD/DeepfakeBench install.sh (conda cudatoolkit + pip pins)", [
    C("cudatoolkit=11.3", "import_torch_npu", "replace", True,
      "pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post17",
      "CUDA builds of torch/cudatoolkit cannot drive an NPU; torch_npu wheel must match torch (2.1.0.post17 pairs "
      "with CANN 8.3.RC1 in the version matrix)"),
])

E("dfb_dockerfile", "Dockerfile", "explicit_replacement",
  "SCLBD/DeepfakeBench-style Dockerfile on a pytorch CUDA base image", [
    C("FROM pytorch/pytorch:1.12.0-cuda11.3-cudnn8-devel", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "base image must carry CANN; tag follows Ascend/cann-container-image naming (registry name unconfirmed); "
      "torch + torch_npu then come from the ported install.sh"),
])

E("dfb_train_sh", "train.sh", "explicit_replacement",
  "SCLBD/DeepfakeBench README launch commands wrapped in a shell launcher", [
    C("#!/usr/bin/env bash", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "bare-metal launcher: without the CANN environment torch_npu cannot load its libraries"),
    C("nvidia-smi --query-gpu", "device_capability_check", "replace", False, "npu-smi info",
      "diagnostic print only; the script has no set -e so a missing nvidia-smi does not stop it"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "ignored on NPU, but local ranks 0..3 land on NPUs 0..3 anyway, so the outcome is the same"),
    C("CUDA_VISIBLE_DEVICES=${GPU_ID} python training/train.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU_ID} python training/train.py \\",
      "single-device run selects the card only through this variable; ignored on NPU, every job would silently "
      "run on NPU 0"),
])

# ----------------------------------------------------------------------------------------------
# SelfBlendedImages (mapooon/SelfBlendedImages)
# ----------------------------------------------------------------------------------------------
E("sbi_train", "src/train_sbi.py", "explicit_replacement",
  "mapooon/SelfBlendedImages src/train_sbi.py (device='cuda', pin_memory loaders, SAM training)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "every batch is moved with .to(device); cuda is absent on the NPU host"),
    C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',", PIN_NOTE),
    C("num_workers=4, pin_memory=True,", "pin_memory", "replace", False,
      "num_workers=4, pin_memory=True, pin_memory_device='npu',", PIN_NOTE),
    C("model = model.to('cuda')", "tensor_to_device", "replace", True, "model = model.to('npu')",
      "hard-coded CUDA target for the detector (and the SAM optimizer state built from its parameters)"),
])

E("sbi_model", "src/model.py", "explicit_replacement",
  "mapooon/SelfBlendedImages src/model.py (EfficientNet-B4 + SAM, device-agnostic)", [])

E("sbi_sam", "src/utils/sam.py", "explicit_replacement",
  "mapooon/SelfBlendedImages src/utils/sam.py (davda54 SAM optimizer, uses p.device)", [])

E("sbi_dataset", "src/utils/sbi.py", "explicit_replacement",
  "mapooon/SelfBlendedImages src/utils/sbi.py (self-blending dataset, CPU only)", [])

E("sbi_infer_video", "src/inference/inference_video.py", "explicit_replacement",
  "mapooon/SelfBlendedImages src/inference/inference_video.py (RetinaFace + detector on one video)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('cnn_sd = torch.load(args.weight_name)["model"]', "tensor_to_device", "replace", True,
      'cnn_sd = torch.load(args.weight_name, map_location="cpu")["model"]',
      "released SBI checkpoints were saved from CUDA tensors; without map_location torch.load fails on a host "
      "without CUDA"),
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "module-level global used by the detector, RetinaFace and the input tensor"),
])

E("sbi_infer_dataset", "src/inference/inference_dataset.py", "explicit_replacement",
  "mapooon/SelfBlendedImages src/inference/inference_dataset.py (dataset-level AUC evaluation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "module-level global; torch.load(map_location=device) follows it, so no separate map_location edit"),
])

E("sbi_crop_retina", "src/preprocess/crop_retina_ff.py", "explicit_replacement",
  "mapooon/SelfBlendedImages src/preprocess/crop_retina_ff.py (RetinaFace face boxes for FF++)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "RetinaFace is built on this device; cuda is absent on the NPU host"),
])

E("sbi_exec", "exec.sh", "explicit_replacement",
  "mapooon/SelfBlendedImages exec.sh (docker run --gpus all)", [
    C("docker run -it --gpus all --shm-size 64G", "device_type", "replace", True,
      "docker run -it --device /dev/davinci0 --device /dev/davinci_manager --device /dev/devmm_svm "
      "--device /dev/hisi_hdc -v /usr/local/Ascend/driver:/usr/local/Ascend/driver -v /usr/local/dcmi:/usr/local/dcmi "
      "-v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi --shm-size 64G \\",
      "--gpus needs the NVIDIA container runtime; an Ascend container needs the davinci device nodes and the "
      "driver mounted"),
])

E("sbi_dockerfile", "Dockerfile", "explicit_replacement",
  "mapooon/SelfBlendedImages dockerfiles/Dockerfile (pytorch CUDA base image)", [
    C("FROM pytorch/pytorch:1.8.0-cuda11.1-cudnn8-devel", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "base image must carry CANN (tag follows Ascend/cann-container-image naming; registry name unconfirmed)"),
    C("RUN pip install --upgrade pip", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post17",
      "the CANN base image has no torch; torch_npu must match the torch version"),
])

# ----------------------------------------------------------------------------------------------
# FTCN (yinglinzheng/FTCN)
# ----------------------------------------------------------------------------------------------
E("ftcn_test_raw", "test_on_raw_video.py", "explicit_replacement",
  "yinglinzheng/FTCN test_on_raw_video.py (module-level .cuda() normalisation tensors, classifier.cuda())", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("mean = torch.tensor([0.485 * 255", "tensor_to_device", "replace", True,
      "mean = torch.tensor([0.485 * 255, 0.456 * 255, 0.406 * 255]).npu().view(1, 3, 1, 1, 1)",
      "created at import time; .cuda() raises without CUDA"),
    C("std = torch.tensor([0.229 * 255", "tensor_to_device", "replace", True,
      "std = torch.tensor([0.229 * 255, 0.224 * 255, 0.225 * 255]).npu().view(1, 3, 1, 1, 1)",
      "created at import time; .cuda() raises without CUDA"),
    C("=classifier.cuda()", "tensor_to_device", "replace", True, "classifier.npu()",
      "Module.cuda() raises without CUDA"),
    C("images = torch.as_tensor(images, dtype=torch.float32).cuda()", "tensor_to_device", "replace", True,
      "images = torch.as_tensor(images, dtype=torch.float32).npu().permute(3, 0, 1, 2)",
      "clip tensor must be on the NPU next to the classifier and mean/std"),
])

E("ftcn_common", "test_tools/common.py", "explicit_replacement",
  "yinglinzheng/FTCN test_tools/common.py (RetinaFace + face_alignment detectors)", [
    C('device=torch.device("cuda:0")', "device_type", "replace", True,
      'detector = get_model("resnet50_2020-07-20", max_size=max_size, device=torch.device("npu:0"))',
      "RetinaFace placed on cuda:0, absent on the NPU host"),
    C('device="cuda")', "device_type", "replace", True,
      'sfd_fa = face_alignment.FaceAlignment(face_alignment.LandmarksType._2D, flip_input=False, device="npu")',
      "face_alignment moves its SFD/FAN nets with .to(device); the string must name the NPU (library support for "
      "'npu' beyond plain .to() is unconfirmed)"),
])

E("ftcn_time_transformer", "model/time_transformer.py", "explicit_replacement",
  "yinglinzheng/FTCN model/time_transformer.py (einops temporal transformer, device-agnostic)", [])

E("ftcn_classifier", "model/classifier/i3d_temporal_var_fix_dropout_tt_cfg.py", "explicit_replacement",
  "yinglinzheng/FTCN classifier plugin (load with map_location='cpu')", [])

# ----------------------------------------------------------------------------------------------
# Face X-ray re-implementation (HRNet-based)
# ----------------------------------------------------------------------------------------------
E("fxr_train", "tools/train.py", "explicit_replacement",
  "Face X-ray re-implementation on HRNet-Seg tools/train.py (DataParallel, apex amp O1, cudnn from config)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("get_model_summary(model.cuda(), dump_input.cuda())", "tensor_to_device", "replace", True,
      "logger.info(get_model_summary(model.npu(), dump_input.npu()))",
      "also the place where the backbone is first moved to the device; .cuda() raises without CUDA"),
    C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',", PIN_NOTE),
    C("pin_memory=config.PIN_MEMORY)", "pin_memory", "replace", False,
      "pin_memory=config.PIN_MEMORY, pin_memory_device='npu')", PIN_NOTE),
    C("optimizer = torch.optim.SGD(params,", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedSGD(params,",
      "performance only (msFmkTransplt advice); same hyper-parameters"),
    C("amp.initialize(full_model, optimizer, opt_level='O1')", "amp", "replace", False,
      "full_model, optimizer = amp.initialize(full_model, optimizer, opt_level='O1', loss_scale=128.0, combine_grad=True)",
      "kept on the apex API, which Ascend's apex patch provides; combine_grad/static loss scale are NPU tuning "
      "options (performance, unconfirmed gain)"),
    C("model = nn.DataParallel(full_model, device_ids=gpus).cuda()", "distributed_framework", "replace", True,
      "model = full_model.npu()",
      "torch.nn.DataParallel is unsupported on Ascend (✘ in the 2.7.1 API list); single-NPU port, multi-card "
      "needs DDP + HCCL"),
])

E("fxr_function", "lib/core/function.py", "explicit_replacement",
  "Face X-ray re-implementation lib/core/function.py (train/validate loops, apex scale_loss)", [
    C("images = images.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "images = images.npu(non_blocking=True)", "Tensor.cuda() raises without CUDA; no DataParallel scatter after the port"),
    C("labels = labels.float().cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "labels = labels.float().npu(non_blocking=True)", "as above"),
    C("xray_gt = xray_gt.float().cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "xray_gt = xray_gt.float().npu(non_blocking=True)", "as above"),
    C("image = image.cuda()", "tensor_to_device", "replace", True, "image = image.npu()", "validation batch"),
    C("label = label.float().cuda()", "tensor_to_device", "replace", True, "label = label.float().npu()",
      "validation batch"),
    C("xray_gt = xray_gt.float().cuda()", "tensor_to_device", "replace", True, "xray_gt = xray_gt.float().npu()",
      "validation batch"),
])

E("fxr_blend", "lib/dataset/bi_online_generation.py", "explicit_replacement",
  "AlgoHunt/Face-Xray bi_online_generation.py (numpy/OpenCV blended-image generation)", [])

E("fxr_cfg", "experiments/face_xray_hrnet_w18.yaml", "explicit_replacement",
  "HRNet-style experiment YAML (GPUS tuple, CUDNN block, AMP flag)", [])

# ----------------------------------------------------------------------------------------------
# UniversalFakeDetect (Ojha et al., CLIP ViT-L/14 linear probe)
# ----------------------------------------------------------------------------------------------
E("ufd_base_options", "options/base_options.py", "explicit_replacement",
  "WisconsinAIVision/UniversalFakeDetect options/base_options.py (--gpu_ids, set_device)", [
    C("torch.cuda.set_device(opt.gpu_ids[0])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(opt.gpu_ids[0])",
      "runs for the default --gpu_ids 0; raises without CUDA, and .npu() calls in validate rely on the current device"),
])

E("ufd_base_model", "networks/base_model.py", "explicit_replacement",
  "WisconsinAIVision/UniversalFakeDetect networks/base_model.py (pix2pix-style device from gpu_ids)", [
    C("self.device = torch.device('cuda:{}'.format(opt.gpu_ids[0]))", "device_type", "replace", True,
      "self.device = torch.device('npu:{}'.format(opt.gpu_ids[0])) if opt.gpu_ids else torch.device('cpu')",
      "inputs, labels, optimizer state and map_location all follow self.device"),
])

E("ufd_trainer", "networks/trainer.py", "explicit_replacement",
  "WisconsinAIVision/UniversalFakeDetect networks/trainer.py (integer .to(gpu_id))", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "only needed for the torch_npu.optim name used by the optional fused optimizer below"),
    C("self.optimizer = torch.optim.AdamW(params", "fused_optimizer", "replace", False,
      "self.optimizer = torch_npu.optim.NpuFusedAdamW(params, lr=opt.lr, betas=(opt.beta1, 0.999), weight_decay=opt.weight_decay)",
      "performance only; with --fix_backbone only the fc layer is optimised, so the gain is small"),
    C("self.model.to(opt.gpu_ids[0])", "tensor_to_device", "replace", True, "self.model.to(self.device)",
      "a bare integer device index means a CUDA device (transfer_to_npu rewrites ints in .to() for this reason); "
      "behaviour of ints under newer accelerator-generic torch is unconfirmed"),
])

E("ufd_validate", "validate.py", "explicit_replacement",
  "WisconsinAIVision/UniversalFakeDetect validate.py (img.cuda(), model.cuda())", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NOTE + "; also the first torch import reached from train.py"),
    C("torch.cuda.manual_seed(SEED)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(SEED)", SEED_NOTE),
    C("in_tens = img.cuda()", "tensor_to_device", "replace", True, "in_tens = img.npu()",
      "Tensor.cuda() raises without CUDA; used both standalone and from train.py"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda() raises without CUDA"),
])

E("ufd_clip", "models/clip/clip.py", "explicit_replacement",
  "openai/CLIP clip/clip.py as vendored in UniversalFakeDetect models/clip/clip.py", [
    C('device: Union[str, torch.device] = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace",
      False,
      'def load(name: str, device: Union[str, torch.device] = "npu" if torch.npu.is_available() else "cpu", jit: bool = False, download_root: str = None):',
      "default only; UniversalFakeDetect always calls clip.load(name, device='cpu') and moves the model later"),
])

E("ufd_train", "train.py", "explicit_replacement",
  "WisconsinAIVision/UniversalFakeDetect train.py (no direct device code)", [])
