"""Labels for probe422 (audio-driven 3-D facial animation: FaceFormer, CodeTalker, EmoTalk, SelfTalk, VOCA port).

One entry per upstream file; one C(...) per line a careful porter would edit for Ascend NPU + torch_npu,
written as an explicit port (torch.npu.*, 'npu', hccl; no transfer_to_npu).
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: load the torch_npu backend before any device use (mandatory before torch_npu 2.5.1, "
               "still recommended afterwards)")

# --------------------------------------------------------------------------------------------------------------
# FaceFormer (EvelynFan/FaceFormer)
# --------------------------------------------------------------------------------------------------------------
E("ff_main", "main.py", "explicit_replacement", "EvelynFan/FaceFormer main.py (train + test loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('audio, vertice, template, one_hot = audio.to(device="cuda")', "tensor_to_device", "replace", True,
      'audio, vertice, template, one_hot = audio.to(device="npu"), vertice.to(device="npu"), template.to(device="npu"), one_hot.to(device="npu")',
      "hard-coded 'cuda' batch transfer in the training loop; model lives on args.device"),
    C('audio, vertice, template, one_hot_all = audio.to(device="cuda")', "tensor_to_device", "replace", True,
      'audio, vertice, template, one_hot_all = audio.to(device="npu"), vertice.to(device="npu"), template.to(device="npu"), one_hot_all.to(device="npu")',
      "validation batch transfer hard-codes 'cuda'"),
    C('model = model.to(torch.device("cuda"))', "device_type", "replace", True,
      'model = model.to(torch.device("npu"))', "test() re-moves the model to a hard-coded cuda device"),
    C('audio, template, one_hot_all = audio.to(device="cuda")', "tensor_to_device", "replace", True,
      'audio, template, one_hot_all = audio.to(device="npu"), template.to(device="npu"), one_hot_all.to(device="npu")',
      "test batch transfer hard-codes 'cuda'"),
    C('parser.add_argument("--device", type=str, default="cuda")', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu")',
      "args.device feeds model.to() and Faceformer.self.device (mask placement); default must name the NPU"),
    C("=args = parser.parse_args()", "compile_mode", "npu_only_addition", False,
      "torch.npu.set_compile_mode(jit_compile=False)",
      "autoregressive decoding grows the sequence every step and clip lengths vary: dynamic shapes favour "
      "jit_compile=False (msFmkTransplt performance advice); performance only"),
    C("assert (torch.cuda.is_available())", "torch_cuda_api", "replace", True,
      "assert (torch.npu.is_available())", "assertion fails on an NPU-only host"),
])

E("ff_model", "faceformer.py", "explicit_replacement", "EvelynFan/FaceFormer faceformer.py (model, biased mask, PPE)", [])

E("ff_wav2vec", "wav2vec.py", "explicit_replacement", "EvelynFan/FaceFormer wav2vec.py (Wav2Vec2Model subclass with interpolation)", [])

E("ff_data", "data_loader.py", "explicit_replacement", "EvelynFan/FaceFormer data_loader.py", [])

E("ff_demo", "demo.py", "explicit_replacement", "EvelynFan/FaceFormer demo.py (predict + pyrender/ffmpeg render)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("model.load_state_dict(torch.load(os.path.join(args.dataset, '{}.pth'.format(args.model_name))))",
      "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(os.path.join(args.dataset, '{}.pth'.format(args.model_name)), map_location='cpu'))",
      "released biwi.pth/vocaset.pth were saved from CUDA tensors; torch.load without map_location tries to "
      "restore them on CUDA and raises on a host without CUDA"),
    C('parser.add_argument("--device", type=str, default="cuda")', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu")', "default device of the demo"),
])

# --------------------------------------------------------------------------------------------------------------
# CodeTalker (Doubiiu/CodeTalker) - semseg-style trainer with mp.spawn + DDP
# --------------------------------------------------------------------------------------------------------------
E("ct_train_vq", "main/train_vq.py", "explicit_replacement", "Doubiiu/CodeTalker main/train_vq.py (stage-1 VQ-VAE training)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"]', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = \',\'.join(str(x) for x in cfg.train_gpu)',
      "the worker indexes devices 0..n-1 relying on this mask; the Ascend runtime ignores CUDA_VISIBLE_DEVICES, "
      "so train_gpu: [2, 3] would silently run on npu:0/1"),
    C("torch.cuda.manual_seed(cfg.manual_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(cfg.manual_seed)",
      "torch.manual_seed above already seeds the registered privateuse1 device in recent torch; "
      "torch.cuda.manual_seed is a lazy no-op without CUDA (unconfirmed in knowledge)"),
    C("torch.cuda.manual_seed_all(cfg.manual_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(cfg.manual_seed)", "same as above (unconfirmed)"),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(gpu)", "per-process device in the DDP branch"),
    C("DistributedDataParallel(model.cuda(gpu), device_ids=[gpu])", "tensor_to_device", "replace", True,
      "model = torch.nn.parallel.DistributedDataParallel(model.npu(gpu), device_ids=[gpu])",
      "module moved to CUDA before DDP wrapping"),
    C("torch.cuda.set_device(cfg.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(cfg.gpu)", "single-device branch"),
    C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "single-device branch"),
    C("data = data.cuda(cfg.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "data = data.npu(cfg.gpu, non_blocking=True)", "training batch"),
    C("=template = template.cuda(cfg.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "template = template.npu(cfg.gpu, non_blocking=True)", "training batch"),
    C("data, template = data.cuda(cfg.gpu, non_blocking=True), template.cuda(", "tensor_to_device", "replace", True,
      "data, template = data.npu(cfg.gpu, non_blocking=True), template.npu(cfg.gpu, non_blocking=True)",
      "validation batch"),
])

E("ct_train_pred", "main/train_pred.py", "explicit_replacement", "Doubiiu/CodeTalker main/train_pred.py (stage-2 speech-to-code predictor)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"]', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = \',\'.join(str(x) for x in cfg.train_gpu)',
      "device mask is ignored by the Ascend runtime"),
    C("torch.cuda.manual_seed_all(cfg.manual_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(cfg.manual_seed)", "redundant after torch.manual_seed (unconfirmed)"),
    C("=cfg = get_parser()", "compile_mode", "npu_only_addition", False,
      "torch.npu.set_compile_mode(jit_compile=False)",
      "every clip has a different length (dynamic shapes); performance only"),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)", "DDP branch"),
    C("model = model.cuda(gpu)", "tensor_to_device", "replace", True, "model = model.npu(gpu)", "DDP branch"),
    C("torch.cuda.set_device(cfg.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(cfg.gpu)",
      "single-device branch"),
    C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "single-device branch"),
    C("map_location=lambda storage, loc: storage.cuda())", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(cfg.vqvae_pretrained_path, map_location=lambda storage, loc: storage.npu())",
      "map_location callback materialises every storage on CUDA"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without an initialised CUDA context; porting only restores the intended cache release (memory/perf)"),
    C("audio = audio.cuda(cfg.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "audio = audio.npu(cfg.gpu, non_blocking=True)", "training batch"),
    C("vertice = vertice.cuda(cfg.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "vertice = vertice.npu(cfg.gpu, non_blocking=True)", "training batch"),
    C("template = template.cuda(cfg.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "template = template.npu(cfg.gpu, non_blocking=True)", "training batch"),
    C("one_hot = one_hot.cuda(cfg.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "one_hot = one_hot.npu(cfg.gpu, non_blocking=True)", "training batch"),
    C("[x.cuda(cfg.gpu, non_blocking=True) for x in (audio, vertice, template)]", "tensor_to_device", "replace", True,
      "audio, vertice, template = [x.npu(cfg.gpu, non_blocking=True) for x in (audio, vertice, template)]",
      "validation batch"),
    C("one_hot_all = one_hot_all.cuda(cfg.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "one_hot_all = one_hot_all.npu(cfg.gpu, non_blocking=True)", "validation batch"),
])

E("ct_demo", "main/demo.py", "explicit_replacement", "Doubiiu/CodeTalker main/demo.py (inference + render)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"]', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = \',\'.join(str(x) for x in cfg.test_gpu)',
      "test_gpu selection is ignored by the Ascend runtime (silently npu:0)"),
    C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ""),
    C("one_hot = torch.FloatTensor(one_hot).to(device='cuda')", "tensor_to_device", "replace", True,
      "one_hot = torch.FloatTensor(one_hot).to(device='npu')", ""),
    C("template = torch.FloatTensor(template).to(device='cuda')", "tensor_to_device", "replace", True,
      "template = torch.FloatTensor(template).to(device='npu')", ""),
    C("audio_feature = torch.FloatTensor(audio_feature).to(device='cuda')", "tensor_to_device", "replace", True,
      "audio_feature = torch.FloatTensor(audio_feature).to(device='npu')", ""),
])

E("ct_utilities", "base/utilities.py", "explicit_replacement", "Doubiiu/CodeTalker base/utilities.py (parser, logger, meters)", [])

E("ct_basetrainer", "base/baseTrainer.py", "explicit_replacement", "Doubiiu/CodeTalker base/baseTrainer.py (lr policy, checkpoint, reduce)", [
    C("t = torch.tensor([value], dtype=torch.float32).cuda(args.gpu)", "tensor_to_device", "replace", True,
      "t = torch.tensor([value], dtype=torch.float32).npu(args.gpu)",
      "collective buffer must live on the NPU for HCCL"),
])

E("ct_cfg_voca1", "config/vocaset/stage1.yaml", "explicit_replacement", "Doubiiu/CodeTalker config/vocaset/stage1.yaml", [
    C("dist_backend: 'nccl'", "dist_backend", "replace", True, "dist_backend: 'hccl'",
      "read by dist.init_process_group(backend=cfg.dist_backend) whenever train_gpu lists more than one device"),
])

E("ct_cfg_biwi2", "config/BIWI/stage2.yaml", "explicit_replacement", "Doubiiu/CodeTalker config/BIWI/stage2.yaml", [
    C("device: cuda", "device_type", "replace", True, "device: npu",
      "CodeTalkerModel.self.device places the biased/alignment masks; the model itself is on the NPU"),
    C("dist_backend: 'nccl'", "dist_backend", "replace", True, "dist_backend: 'hccl'", "NCCL is not available on Ascend"),
])

E("ct_scripts", "scripts/train.sh", "explicit_replacement", "Doubiiu/CodeTalker scripts/train.sh", [
    C("export PYTHONPATH=./", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for torch_npu; host-dependent (often already sourced in the shell profile or image)"),
])

E("ct_quantizer", "models/lib/quantizer.py", "explicit_replacement", "Doubiiu/CodeTalker models/lib/quantizer.py (VQ codebook)", [])

E("ct_stage2", "models/stage2.py", "explicit_replacement", "Doubiiu/CodeTalker models/stage2.py (CodeTalkerModel)", [
    C("self.autoencoder.load_state_dict(torch.load(args.vqvae_pretrained_path)['state_dict'])", "tensor_to_device",
      "replace", True,
      "self.autoencoder.load_state_dict(torch.load(args.vqvae_pretrained_path, map_location='cpu')['state_dict'])",
      "the released stage-1 checkpoint was saved from CUDA; loading it without map_location fails on an NPU host"),
])

E("ct_dataloader", "dataset/data_loader.py", "explicit_replacement", "Doubiiu/CodeTalker dataset/data_loader.py", [
    C("num_workers=args.workers, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=args.workers, pin_memory=True, pin_memory_device='npu')",
      "without a CUDA device the loader skips pinning (warning only); pinning for the NPU is a transfer-speed "
      "matter (unconfirmed)"),
])

# --------------------------------------------------------------------------------------------------------------
# EmoTalk (psyai-net/EmoTalk_release)
# --------------------------------------------------------------------------------------------------------------
E("et_demo", "demo.py", "explicit_replacement", "psyai-net/EmoTalk_release demo.py (blendshape prediction + Blender render)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('parser.add_argument("--device", type=str, default="cuda", help=\'device\')', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu", help=\'device\')',
      "args.device drives map_location, model.to() and every input tensor"),
])

E("et_model", "model.py", "explicit_replacement", "psyai-net/EmoTalk_release model.py (EmoTalk)", [
    C("onehot_person = torch.from_numpy(onehot_person).cuda().float()", "tensor_to_device", "replace", True,
      "onehot_person = torch.from_numpy(onehot_person).to(self.device).float()",
      "the one hard-coded .cuda() in predict(); the rest of the model follows self.device"),
])

E("et_utils", "utils.py", "explicit_replacement", "psyai-net/EmoTalk_release utils.py (biased mask helpers)", [])

E("et_wav2vec", "wav2vec.py", "explicit_replacement", "psyai-net/EmoTalk_release wav2vec.py (content + emotion encoders)", [])

E("et_render", "render.py", "explicit_replacement", "psyai-net/EmoTalk_release render.py (Blender Cycles script)", [])

# --------------------------------------------------------------------------------------------------------------
# SelfTalk (psyai-net/SelfTalk_release)
# --------------------------------------------------------------------------------------------------------------
E("st_main", "main.py", "explicit_replacement", "psyai-net/SelfTalk_release main.py (training with lip-reading consistency)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "torch.manual_seed on the previous line already seeds the NPU generator (unconfirmed in knowledge)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "opt-in --empty_cache; no-op without CUDA, memory housekeeping only"),
    C('parser.add_argument("--device", type=str, default="cuda")', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu")', ""),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
      "--gpu 1 would silently run on npu:0"),
    C("assert (torch.cuda.is_available())", "torch_cuda_api", "replace", True,
      "assert (torch.npu.is_available())", ""),
])

E("st_model", "SelfTalk.py", "explicit_replacement", "psyai-net/SelfTalk_release SelfTalk.py (model + lip reader)", [
    C("self.lip_idx.cuda()", "tensor_to_device", "replace", True,
      "lip_vertices = (vertice_out - template).reshape(bs, T, -1, 3)[:, :, self.lip_idx, :]",
      "lip_idx is a registered buffer that already follows the module; the stray .cuda() fails on NPU"),
])

E("st_demo", "demo_voca.py", "explicit_replacement", "psyai-net/SelfTalk_release demo_voca.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('DEVICE = torch.device("cuda:0")', "device_type", "replace", True, 'DEVICE = torch.device("npu:0")',
      "module-level device global"),
    C("map_location=torch.device('cuda')))", "tensor_to_device", "replace", True,
      "map_location=torch.device('npu')))", ""),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events cannot record on an NPU host"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", ""),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", ""),
    C('parser.add_argument("--device", type=str, default="cuda")', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu")',
      "SelfTalk.self.device (mask placement) comes from args.device even though the demo moves the model with DEVICE"),
])

E("st_requirements", "requirements.txt", "explicit_replacement", "psyai-net/SelfTalk_release requirements.txt", [])

E("st_scripts", "train_vocaset.sh", "explicit_replacement", "SelfTalk-style single-GPU launcher (train + metrics)", [
    C("=set -e", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; host-dependent"),
    C("nvidia-smi --query-gpu", "device_capability_check", "replace", True, "npu-smi info",
      "under set -e a missing nvidia-smi (exit 127) aborts the script before training"),
    C("CUDA_VISIBLE_DEVICES=${GPU} python main.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU} python main.py \\", "GPU=1 would silently train on npu:0"),
])

# --------------------------------------------------------------------------------------------------------------
# VOCA - PyTorch port of TimoBolkart/voca (the original is TensorFlow 1.x)
# --------------------------------------------------------------------------------------------------------------
E("vo_dockerfile", "Dockerfile", "explicit_replacement", "Dockerfile of a PyTorch port of TimoBolkart/voca", [
    C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "env_var", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "needs a CANN base image (tag layout of Ascend/cann-container-image; registry path unconfirmed); the "
      "python3.8 apt line would follow the image's Python"),
    C("RUN pip install torch==1.12.1+cu113", "import_torch_npu", "replace", True,
      "RUN pip install torch==2.1.0 torchaudio==2.1.0 torch-npu==2.1.0.post17 --extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel has no torch_npu pairing; torch_npu wheel must equal the torch version (CPU torch on x86); 2.1.0.post17 is the v2.1.0-7.2.0 wheel paired with CANN 8.3.RC1 in the matrix"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "read only by the NVIDIA container runtime; Ascend-Docker-Runtime uses ASCEND_VISIBLE_DEVICES "
      "(value syntax unconfirmed; devices can also be passed with --device)"),
])

E("vo_config", "config_parser.py", "explicit_replacement", "TimoBolkart/voca config_parser.py (extended for the PyTorch port)", [
    C("config.set('Learning Parameters', 'device', 'cuda')", "device_type", "replace", True,
      "config.set('Learning Parameters', 'device', 'npu')", "default device written into training_config.cfg"),
])

E("vo_run_training", "run_training.py", "explicit_replacement", "TimoBolkart/voca run_training.py (PyTorch port)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if config['device'] == 'cuda':", "device_type", "replace", True, "if config['device'] == 'npu':",
      "with the config ported to 'npu' the unported comparison silently trains on the CPU"),
    C("torch.cuda.set_device(config['gpu_id'])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(config['gpu_id'])", ""),
    C("device = torch.device('cuda', config['gpu_id'])", "device_type", "replace", True,
      "device = torch.device('npu', config['gpu_id'])", ""),
    C("torch.cuda.get_device_name(config['gpu_id'])", "torch_cuda_api", "replace", True,
      "logger.info('Training on GPU %d (%s)' % (config['gpu_id'], torch.npu.get_device_name(config['gpu_id'])))",
      "CUDA query in a log call raises on an NPU host"),
])

E("vo_model", "utils/voca_model.py", "explicit_replacement", "VOCA model (speech encoder + PCA-initialised decoder), PyTorch port", [
    C("face_templates = face_templates.type(torch.cuda.FloatTensor)", "torch_cuda_api", "replace", True,
      "face_templates = face_templates.float()",
      "legacy CUDA tensor type moves the templates to CUDA; a device-neutral cast keeps them on the NPU"),
])

E("vo_trainer", "utils/voca_trainer.py", "explicit_replacement", "VOCA trainer (AMP, timing, checkpoints), PyTorch port", [
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler(enabled=self.use_amp)",
      "the CUDA scaler disables itself without CUDA; with NPU autocast in fp16 that leaves fp16 gradients "
      "unscaled (underflow), i.e. silently different training"),
    C("pin_memory=True, persistent_workers=", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu', persistent_workers=config['num_workers'] > 0)",
      "pinning for the NPU; transfer speed only (unconfirmed)"),
    C("shuffle=False, num_workers=config['num_workers'], pin_memory=True)", "pin_memory", "replace", False,
      "shuffle=False, num_workers=config['num_workers'], pin_memory=True, pin_memory_device='npu')",
      "validation loader; transfer speed only (unconfirmed)"),
    C("with torch.cuda.amp.autocast(enabled=self.use_amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=self.use_amp):",
      "a CUDA autocast region does not cast NPU ops: the step runs in fp32, numerically fine but without the "
      "intended mixed-precision speed-up"),
    C("autocast(enabled=self.use_amp, dtype=torch.float16)", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=self.use_amp, dtype=torch.float16):", "validation; fp32 fallback only"),
    C("with torch.cuda.amp.autocast(self.use_amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(self.use_amp):", "rendering pass; fp32 fallback only"),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_evt = torch.npu.Event(enable_timing=True)", ""),
    C("stop_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "stop_evt = torch.npu.Event(enable_timing=True)", ""),
    C("torch.cuda.reset_peak_memory_stats(self.device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(self.device)", "CUDA memory API given an NPU device"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", ""),
    C("peak_mb = torch.cuda.max_memory_allocated(self.device)", "torch_cuda_api", "replace", True,
      "peak_mb = torch.npu.max_memory_allocated(self.device) / 2 ** 20", ""),
    C("'cuda_rng_state': torch.cuda.get_rng_state()}", "torch_cuda_api", "replace", True,
      "'cuda_rng_state': torch.npu.get_rng_state()}, fname)",
      "checkpointing the device RNG; the dict key can stay"),
    C("torch.cuda.set_rng_state(ckpt['cuda_rng_state'])", "torch_cuda_api", "replace", True,
      "torch.npu.set_rng_state(ckpt['cuda_rng_state'])", "resume path"),
])

E("vo_audio", "utils/audio_handler.py", "explicit_replacement", "TimoBolkart/voca utils/audio_handler.py (DeepSpeech features), PyTorch port", [
    C("torch.device('cuda:%d' % config['gpu_id'])", "device_type", "replace", True,
      "self.device = device if device is not None else torch.device('npu:%d' % config['gpu_id'])",
      "fallback device when the caller passes none"),
    C("torch.jit.load(self.config['deepspeech_graph_fname'], map_location='cuda')", "tensor_to_device", "replace", True,
      "self._ds_model = torch.jit.load(self.config['deepspeech_graph_fname'], map_location='cpu').to(self.device)",
      "TorchScript DeepSpeech graph restored onto CUDA; load on CPU and move to the NPU"),
])

E("vo_inference", "utils/inference.py", "explicit_replacement", "TimoBolkart/voca utils/inference.py (PyTorch port)", [
    C("device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu:0' if torch.npu.is_available() else 'cpu')",
      "unported, the probe is False on an NPU host and inference silently runs on the CPU"),
    C("ckpt = torch.load(ckpt_fname, map_location='cuda:0')", "tensor_to_device", "replace", True,
      "ckpt = torch.load(ckpt_fname, map_location=device)", ""),
])

E("vo_rendering", "utils/rendering.py", "explicit_replacement", "TimoBolkart/voca utils/rendering.py (pyrender)", [])

E("vo_meshops", "utils/mesh_ops.py", "explicit_replacement", "optional CUDA Laplacian kernel with PyTorch fallback (VOCA port)", [])
