# Labels for probe462 (audio-visual speech separation and sound localisation).
# One C(...) per upstream line a careful porter would edit for Ascend NPU + torch_npu
# (explicit port: torch.npu.*, 'npu', hccl; no transfer_to_npu).
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# --------------------------------------------------------------------------------------------
# VisualVoice (facebookresearch/VisualVoice)
# --------------------------------------------------------------------------------------------
E("vv_train", "train.py", "explicit_replacement",
  "facebookresearch/VisualVoice train.py (DataParallel over --gpu_ids, opt.device global)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "entry script: torch_npu must be imported before any NPU use (torch versions of this era have no backend autoload)"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "synced_time() is used when --measure_time; torch.cuda.synchronize lazily initialises CUDA and raises on an NPU host"),
    C('opt.device = torch.device("cuda")', "device_type", "replace", True, 'opt.device = torch.device("npu")',
      "module-level device global used by AudioVisualModel.forward for every input tensor"),
    C("model = torch.nn.DataParallel(model, device_ids=opt.gpu_ids)", "distributed_framework", "replace", True,
      "model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[opt.gpu_ids[0]])",
      "nn.DataParallel is marked unsupported on Atlas A2/A3 (torch_api_npu_support); multi-card needs DDP over hccl "
      "(process group init lives in the launcher) or a single-card run"),
    C("torch.cuda.max_memory_allocated() / (1024 ** 3), total_batches)", "torch_cuda_api", "replace", True,
      "torch.npu.max_memory_allocated() / (1024 ** 3), total_batches)",
      "torch.cuda memory stats return 0 when CUDA was never initialised, so the logged scalar would silently be wrong"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "torch.cuda.empty_cache is a no-op when CUDA is uninitialised; not porting only loses the cache release after validation"),
])

E("vv_base_options", "options/base_options.py", "explicit_replacement",
  "facebookresearch/VisualVoice options/base_options.py (CycleGAN-style --gpu_ids parsing)", [
    C("torch.cuda.set_device(self.opt.gpu_ids[0])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(self.opt.gpu_ids[0])",
      "runs on every parse(); torch.cuda.set_device fails without CUDA"),
])

E("vv_train_options", "options/train_options.py", "explicit_replacement",
  "facebookresearch/VisualVoice options/train_options.py (argparse only)", [])

E("vv_models", "models/models.py", "explicit_replacement",
  "facebookresearch/VisualVoice models/models.py ModelBuilder (loads released GPU checkpoints)", [
    C("pretrained_state = torch.load(weights)", "device_type", "replace", True,
      "pretrained_state = torch.load(weights, map_location='cpu')",
      "released VisualVoice checkpoints hold CUDA-tagged storages; torch.load without map_location raises when CUDA is unavailable"),
    C("net.load_state_dict(torch.load(weights))", "device_type", "replace", True,
      "net.load_state_dict(torch.load(weights, map_location='cpu'))",
      "UNet weights saved from a GPU run; needs map_location on an NPU host"),
    C("vocal_state = torch.load(weights)", "device_type", "replace", True,
      "vocal_state = torch.load(weights, map_location='cpu')",
      "same as above for the vocal-attributes net"),
])

E("vv_av_model", "models/audioVisual_model.py", "explicit_replacement",
  "facebookresearch/VisualVoice models/audioVisual_model.py (device-agnostic, uses opt.device)", [])

E("vv_test_real", "testRealVideo.py", "explicit_replacement",
  "facebookresearch/VisualVoice testRealVideo.py (sliding-window separation of two real videos)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "entry script"),
    C('opt.device = torch.device("cuda")', "device_type", "replace", True, 'opt.device = torch.device("npu")',
      "device global consumed by AudioVisualModel.forward"),
    C("model = torch.nn.DataParallel(model, device_ids=[0])", "distributed_framework", "removal", True, None,
      "single-card DataParallel wrapper; nn.DataParallel is unsupported on NPU and the nets are loaded individually, "
      "so the wrapper can simply go (model.to(opt.device) follows)"),
    C("istft_window = torch.hann_window(opt.window_size).cuda()", "tensor_to_device", "replace", True,
      "istft_window = torch.hann_window(opt.window_size).npu()",
      "created unconditionally before the loop, so it fails even when --torch_istft is off"),
    C("torch.cuda.max_memory_allocated() / 1e9", "torch_cuda_api", "replace", True,
      "print('GPU memory peak: %.2f GB' % (torch.npu.max_memory_allocated() / 1e9))",
      "would silently print 0 (CUDA never initialised)"),
])

E("vv_detect_faces", "utils/detectFaces.py", "explicit_replacement",
  "facebookresearch/VisualVoice utils/detectFaces.py (facenet-pytorch MTCNN preprocessing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "stand-alone preprocessing script"),
    C("device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu:0' if torch.npu.is_available() else 'cpu')",
      "unported it silently runs MTCNN on the CPU; counted as the wrong thing for a port whose point is the accelerator. "
      "Whether facenet-pytorch's MTCNN (adaptive pooling, nms from torchvision) is fully NPU-clean is unconfirmed"),
])

E("vv_train_sh", "scripts/train_visualvoice.sh", "explicit_replacement",
  "facebookresearch/VisualVoice training launcher (8 GPUs)", [
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "lists every card of an 8-card host, so leaving it (ignored on NPU) changes nothing there"),
    C("DATA_ROOT=/mnt/data/VoxCeleb2", "env_var", "npu_only_addition", False, SET_ENV,
      "CANN environment; needed unless the login shell / container already sources set_env.sh"),
])

# --------------------------------------------------------------------------------------------
# Sound of Pixels (hangzhaomit/Sound-of-Pixels)
# --------------------------------------------------------------------------------------------
E("sop_main", "main.py", "explicit_replacement",
  "hangzhaomit/Sound-of-Pixels main.py (NetWrapper + DataParallel, log-freq grid_sample warp)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("mag_mix = batch_data['mag_mix']", "tensor_to_device", "replace", True,
      "mag_mix = batch_data['mag_mix'].to(args.device)",
      "upstream relies on DataParallel's scatter to move the batch; once DataParallel is removed the batch stays on the "
      "CPU while grid_warp and the nets are on the NPU"),
    C("mags = batch_data['mags']", "tensor_to_device", "replace", True,
      "mags = [m.to(args.device) for m in batch_data['mags']]",
      "same hidden dependency on DataParallel scatter (a list of tensors); building a new list also stops the in-place "
      "grid_sample from overwriting batch_data['mags']"),
    C("frames = batch_data['frames']", "tensor_to_device", "replace", True,
      "frames = [f.to(args.device) for f in batch_data['frames']]",
      "frames list fed to net_frame.forward_multiframe"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "timing sync before the loop; raises without CUDA"),
    C("torch.cuda.synchronize()  # data loading done", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # data loading done", "timing sync"),
    C("torch.cuda.synchronize()  # forward + backward done", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # forward + backward done", "timing sync"),
    C("netWrapper = torch.nn.DataParallel(netWrapper, device_ids=range(args.num_gpus))", "distributed_framework",
      "removal", True, None,
      "nn.DataParallel unsupported on NPU; single-card port (netWrapper.to(args.device) on the next line stays)"),
    C('args.device = torch.device("cuda")', "device_type", "replace", True, 'args.device = torch.device("npu")',
      "device global for grid_warp / grid_unwarp and the model"),
])

E("sop_arguments", "arguments.py", "explicit_replacement",
  "hangzhaomit/Sound-of-Pixels arguments.py (--num_gpus flag only)", [])

E("sop_models", "models/__init__.py", "explicit_replacement",
  "hangzhaomit/Sound-of-Pixels models/__init__.py ModelBuilder", [
    C("net_sound.load_state_dict(torch.load(weights))", "device_type", "replace", True,
      "net_sound.load_state_dict(torch.load(weights, map_location='cpu'))",
      "eval mode reloads sound_best.pth written from a GPU run; CUDA-tagged storages need map_location"),
    C("net.load_state_dict(torch.load(weights))", "device_type", "replace", True,
      "net.load_state_dict(torch.load(weights, map_location='cpu'))",
      "frame_best.pth, same reason"),
])

E("sop_utils", "utils.py", "explicit_replacement",
  "hangzhaomit/Sound-of-Pixels utils.py (numpy warpgrid, librosa istft, ffmpeg)", [])

E("sop_dataset", "dataset/base.py", "explicit_replacement",
  "hangzhaomit/Sound-of-Pixels dataset/base.py (librosa STFT on the CPU)", [])

E("sop_train_sh", "scripts/train_MUSIC.sh", "explicit_replacement",
  "hangzhaomit/Sound-of-Pixels scripts/train_MUSIC.sh", [
    C('CUDA_VISIBLE_DEVICES="0,1,2,3" python -u main.py $OPTS', "env_var", "replace", False,
      'ASCEND_RT_VISIBLE_DEVICES="0,1,2,3" python -u main.py $OPTS',
      "after the single-card port only npu:0 is used, which is visible either way"),
])

# --------------------------------------------------------------------------------------------
# EZ-VSL (stoneMo/EZ-VSL): sound-source localisation by contrastive learning
# --------------------------------------------------------------------------------------------
E("ezvsl_train", "train.py", "explicit_replacement",
  "stoneMo/EZ-VSL train.py (mp.spawn + DDP, --dist_backend nccl)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "entry script; spawned workers re-import the module, so the import also covers them"),
    C("parser.add_argument('--dist_backend', type=str, default='nccl')", "dist_backend", "replace", True,
      "parser.add_argument('--dist_backend', type=str, default='hccl')",
      "NCCL backend does not exist on an NPU build"),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "ngpus_per_node = torch.npu.device_count()",
      "returns 0 on an NPU host: mp.spawn(nprocs=0), world_size 0"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available():",
      "unported, every run takes the 'using CPU' branch and never places the model"),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)",
      "per-process device in the spawned DDP worker"),
    C("model.cuda(gpu)", "tensor_to_device", "replace", True, "model.npu(gpu)", "DDP branch"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "single-device branch"),
    C("model.cuda(args.gpu)", "tensor_to_device", "replace", True, "model.npu(args.gpu)", "single-device branch"),
    C("spec = spec.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "spec = spec.npu(args.gpu, non_blocking=True)", "training batch"),
    C("image = image.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "image = image.npu(args.gpu, non_blocking=True)", "training batch"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "validate(): unported, inputs stay on the CPU while the model is on the NPU"),
    C("=spec = spec.cuda(args.gpu)", "tensor_to_device", "replace", True, "spec = spec.npu(args.gpu)",
      "validation batch"),
    C("=image = image.cuda(args.gpu)", "tensor_to_device", "replace", True, "image = image.npu(args.gpu)",
      "validation batch"),
])

E("ezvsl_model", "model.py", "explicit_replacement",
  "stoneMo/EZ-VSL model.py (device-agnostic: labels built on img.device)", [])

E("ezvsl_test", "test.py", "explicit_replacement",
  "stoneMo/EZ-VSL test.py (AV map + object-saliency fusion)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(args.gpu)',
      "the mask makes --gpu N the only (index-0) card, which is where model.cuda() lands; without it a non-zero --gpu "
      "puts the inputs on npu:N and the model on npu:0. That the runtime still honours the variable when set from "
      "Python after import is unconfirmed"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "else branch leaves both models on the CPU while inputs are moved by .npu()"),
    C("audio_visual_model.cuda()", "tensor_to_device", "replace", True, "audio_visual_model.npu()", ""),
    C("object_saliency_model.cuda()", "tensor_to_device", "replace", True, "object_saliency_model.npu()", ""),
    C("spec = spec.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "spec = spec.npu(args.gpu, non_blocking=True)", ""),
    C("image = image.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "image = image.npu(args.gpu, non_blocking=True)", ""),
])

E("ezvsl_utils", "utils.py", "explicit_replacement",
  "stoneMo/EZ-VSL utils.py (cIoU / AUC evaluator, numpy only)", [])

E("ezvsl_datasets", "datasets.py", "explicit_replacement",
  "stoneMo/EZ-VSL datasets.py (PyAV audio, scipy spectrogram)", [])

# --------------------------------------------------------------------------------------------
# LVS (hche11/Localizing-Visual-Sounds-the-hard-way)
# --------------------------------------------------------------------------------------------
E("lvs_model", "model.py", "explicit_replacement",
  "hche11/Localizing-Visual-Sounds-the-hard-way model.py (AVENet trimap contrastive logits)", [
    C("self.mask = (1 - 100 * torch.eye(B, B)).cuda()", "tensor_to_device", "replace", True,
      "self.mask = (1 - 100 * torch.eye(B, B)).to(image.device)",
      "hard-coded .cuda() inside forward"),
    C("target = torch.zeros(logits.shape[0]).cuda().long()", "tensor_to_device", "replace", True,
      "target = torch.zeros(logits.shape[0], device=logits.device).long()",
      "loss target built with .cuda()"),
])

E("lvs_test", "test.py", "explicit_replacement",
  "hche11/Localizing-Visual-Sounds-the-hard-way test.py (DataParallel checkpoint with module. prefix)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = "0"', "env_var", "replace", False,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0"',
      "card 0 is the default device anyway; only hides the other cards"),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "unported, model.to(device) moves the model back to the CPU while inputs go to the NPU"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ""),
    C("model = nn.DataParallel(model)", "distributed_framework", "removal", True, None,
      "nn.DataParallel unsupported on NPU; single-card evaluation"),
    C("checkpoint = torch.load(args.summaries_dir)", "device_type", "replace", True,
      "checkpoint = torch.load(args.summaries_dir, map_location='cpu')",
      "released LVS checkpoint was saved from GPUs"),
    C("pretrained_dict = checkpoint['model_state_dict']", "distributed_framework", "replace", True,
      "pretrained_dict = {k.replace('module.', '', 1): v for k, v in checkpoint['model_state_dict'].items()}",
      "consequence of dropping DataParallel: the checkpoint keys carry the 'module.' prefix, so model_dict.update() "
      "would add unexpected keys and the strict load_state_dict fails"),
    C("spec = Variable(spec).cuda()", "tensor_to_device", "replace", True, "spec = Variable(spec).npu()", ""),
    C("image = Variable(image).cuda()", "tensor_to_device", "replace", True, "image = Variable(image).npu()", ""),
])

# --------------------------------------------------------------------------------------------
# AV-HuBERT (facebookresearch/av_hubert) with a speech separation / enhancement head
# --------------------------------------------------------------------------------------------
E("avh_init", "avhubert/__init__.py", "explicit_replacement",
  "facebookresearch/av_hubert avhubert/__init__.py (fairseq --user-dir package) plus an avse sub-package", [
    C("from .hubert import *  # noqa", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "fairseq-hydra-train is the entry point, so the user-dir package is the first project code that runs; "
      "torch_npu has to be imported here (fairseq itself also needs an NPU-aware build, outside this probe)"),
])

E("avh_se_model", "avhubert/avse/avhubert_se.py", "explicit_replacement",
  "AV-HuBERT fine-tuning head for AV speech separation (fairseq model on av_hubert's encoder)", [
    C("x, _ = self.blstm(x)", "unsupported_op_workaround", "replace", False,
      "with torch.npu.amp.autocast(enabled=False): x, _ = self.blstm(x.float())",
      "Ascend's support table lists torch.nn.LSTM input as fp32 only; whether NPU autocast actually casts the LSTM to "
      "fp16 under common.amp is unconfirmed"),
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=False):",
      "fp32 island for STFT + log-mel matmul; on an NPU host the CUDA context only warns and does nothing, so under "
      "NPU autocast the mel matmul silently drops to fp16 (the overflow the comment warns about)"),
])

E("avh_se_infer", "avhubert/avse/infer_se.py", "explicit_replacement",
  "facebookresearch/av_hubert avhubert/infer_s2s.py style hydra inference, adapted to separation scoring", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU,
      "belt and braces: utils.import_user_module() imports avhubert/__init__.py (labelled) before any device use"),
    C("use_cuda = torch.cuda.is_available() and not cfg.common.cpu", "torch_cuda_api", "replace", True,
      "use_cuda = torch.npu.is_available() and not cfg.common.cpu",
      "unported, inference silently runs on the CPU"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ""),
    C("sample = utils.move_to_cuda(sample) if use_cuda else sample", "tensor_to_device", "replace", True,
      'sample = utils.move_to_cuda(sample, device=torch.device("npu")) if use_cuda else sample',
      "fairseq's move_to_cuda defaults to torch.cuda.current_device(); passing the device keeps the helper"),
    C("torch.cuda.max_memory_allocated() / 2 ** 30", "torch_cuda_api", "replace", True,
      'logger.info(f"peak device memory: {torch.npu.max_memory_allocated() / 2 ** 30:.2f} GiB")',
      "would silently log 0"),
])

E("avh_dataset", "avhubert/hubert_dataset.py", "explicit_replacement",
  "facebookresearch/av_hubert avhubert/hubert_dataset.py (CPU-side loading, logfbank)", [])

E("avh_conf", "avhubert/conf/avse/base_lrs3_avse.yaml", "explicit_replacement",
  "facebookresearch/av_hubert conf/finetune/*.yaml style hydra config for the separation head", [
    C("distributed_backend: nccl", "dist_backend", "replace", True, "distributed_backend: hccl",
      "fairseq passes this straight to init_process_group"),
])

E("avh_sh", "avhubert/scripts/finetune_avse.sh", "explicit_replacement",
  "fine-tuning launcher around fairseq-hydra-train", [
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "default lists all eight cards, so it is inert on an 8-card host; users overriding it need the NPU name"),
    C("NGPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)", "device_capability_check", "replace", True,
      'NGPU=$(npu-smi info -l | grep -c "NPU ID")',
      "no nvidia-smi on an Ascend host: with set -euo pipefail the script dies here. npu-smi info -l prints one "
      "'NPU ID' line per card (on A3 a card has two dies, so count devices differently there)"),
    C("export OMP_NUM_THREADS=4", "env_var", "npu_only_addition", False, SET_ENV,
      "CANN environment, unless already sourced by the container"),
])

# --------------------------------------------------------------------------------------------
# IIANet / RTFS-Net on the Look2Hear framework (JusperLee): Lightning AV separation
# --------------------------------------------------------------------------------------------
E("l2h_train", "audio_train.py", "explicit_replacement",
  "JusperLee/IIANet (Look2Hear) audio_train.py with pytorch-lightning DDPStrategy", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C('gpus = config["training"]["gpus"] if torch.cuda.is_available() else None', "torch_cuda_api", "replace", True,
      'gpus = config["training"]["gpus"] if torch.npu.is_available() else None',
      "unported, the device list from the YAML is dropped"),
    C('distributed_backend = "cuda" if torch.cuda.is_available() else None', "device_type", "replace", True,
      'distributed_backend = "npu" if torch.npu.is_available() else None',
      "Lightning accelerator name; upstream Lightning has no built-in 'npu' accelerator, so this assumes an NPU "
      "accelerator is registered (third-party plugin) - unconfirmed in the knowledge base"),
    C("strategy=DDPStrategy(find_unused_parameters=True),", "dist_backend", "replace", True,
      'strategy=DDPStrategy(find_unused_parameters=True, process_group_backend="hccl"),',
      "DDPStrategy picks nccl only for CUDA and falls back to gloo otherwise; gloo cannot reduce NPU tensors"),
])

E("l2h_test", "audio_test.py", "explicit_replacement",
  "JusperLee/IIANet (Look2Hear) audio_test.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = \"4\"", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = \"4\"",
      "selects card 4; ignored on NPU, so the test silently runs on npu:0 (possibly next to another job)"),
    C('device = "cuda"', "device_type", "replace", True, 'device = "npu"', ""),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guards only the memory printout; unported it is silently skipped"),
    C("torch.cuda.max_memory_allocated(model_device)", "torch_cuda_api", "replace", True,
      'print("peak memory (MiB):", torch.npu.max_memory_allocated(model_device) // 2 ** 20)',
      "with the guard ported this runs and torch.cuda rejects an npu device index"),
])

E("l2h_system", "look2hear/system/av_litmodule.py", "explicit_replacement",
  "JusperLee/IIANet look2hear/system/av_litmodule.py (LightningModule, device handled by Lightning)", [])

E("l2h_videomodel", "look2hear/videomodels/resnet_videomodel.py", "explicit_replacement",
  "JusperLee/IIANet look2hear/videomodels (lip-reading ResNet front-end, CPU map_location)", [])

E("l2h_conf", "configs/LRS2-IIANet.yml", "explicit_replacement",
  "JusperLee/IIANet configs/LRS2-IIANet.yml", [])

E("l2h_requirements", "requirements.txt", "explicit_replacement",
  "Look2Hear-style requirements pinned to CUDA 11.8 wheels", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu pairs with the CPU torch wheel on x86 (plain PyPI on aarch64)"),
    C("torch==2.1.0+cu118", "import_torch_npu", "replace", True, "torch==2.1.0",
      "+cu118 local versions do not exist for aarch64 Ascend hosts"),
    C("torchvision==0.16.0+cu118", "import_torch_npu", "replace", True, "torchvision==0.16.0", "same"),
    C("torchaudio==2.1.0+cu118", "import_torch_npu", "replace", True, "torchaudio==2.1.0", "same"),
    C("pytorch-lightning==2.1.2", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "add the torch_npu wheel matching torch 2.1.0 (2.1.0.post12 pairs with CANN 8.1.RC1 per the version matrix)"),
])
