"""Labels for probe409 (sign language recognition / translation, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit; see README.md for the policy.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point: torch_npu must be imported before any torch.npu / 'npu' use; the port pins torch 2.1 "
               "(torch_npu 2.1.0.postN), where there is no device-backend autoload (autoload only from 2.5.1)")
NOOP_MODULE_CUDA = ("loss module owns no parameters or buffers, so Module.cuda() never touches a tensor and does not "
                    "initialise CUDA: a silent no-op on an NPU host; ported only for consistency")
SEED_NOTE = ("torch.cuda seeding is lazily queued and never raises on a host without CUDA, it just leaves the NPU "
             "generator alone; reproducibility only (whether torch.manual_seed already seeds the NPU generator in the "
             "pinned torch is unconfirmed)")
PIN_NOTE = ("performance only: pinning targets the default accelerator; naming the NPU lets the worker pin for H2D "
            "copies. Whether torch_npu already pins for NPU without pin_memory_device is unconfirmed")

# --------------------------------------------------------------------------------------------------------------
# neccam/slt  (Sign Language Transformers, joeynmt-based, CVPR 2020)
# --------------------------------------------------------------------------------------------------------------
E("slt_training", "signjoey/training.py", "explicit_replacement",
  "neccam/slt signjoey/training.py (joeynmt TrainManager with use_cuda flag)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=self.model.cuda()", "tensor_to_device", "replace", True, "self.model.npu()",
        "use_cuda keeps its meaning 'use the accelerator'; .cuda() raises on an NPU host"),
      C("self.translation_loss_function.cuda()", "tensor_to_device", "replace", False,
        "self.translation_loss_function.npu()", "XentLoss (KLDiv/NLL, no weight): " + NOOP_MODULE_CUDA),
      C("self.recognition_loss_function.cuda()", "tensor_to_device", "replace", False,
        "self.recognition_loss_function.npu()", "nn.CTCLoss: " + NOOP_MODULE_CUDA),
      C("self.model = self.model.cuda()", "tensor_to_device", "replace", True, "self.model = self.model.npu()",
        "after init_from_checkpoint; .cuda() raises on an NPU host"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu_id',
        "--gpu_id selects the card; CUDA_VISIBLE_DEVICES is ignored by CANN so --gpu_id 3 would silently run on NPU 0"),
  ])

E("slt_helpers", "signjoey/helpers.py", "explicit_replacement",
  "neccam/slt signjoey/helpers.py (set_seed, load_checkpoint)", [
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
      C('map_location="cuda" if use_cuda else "cpu"', "tensor_to_device", "replace", True,
        'checkpoint = torch.load(path, map_location="npu" if use_cuda else "cpu")',
        "map_location='cuda' deserialises onto a CUDA device and raises when CUDA is unavailable"),
  ])

E("slt_batch", "signjoey/batch.py", "explicit_replacement",
  "neccam/slt signjoey/batch.py (Batch._make_cuda)", [
      C("self.sgn = self.sgn.cuda()", "tensor_to_device", "replace", True, "self.sgn = self.sgn.npu()",
        "sign features to the accelerator"),
      C("self.sgn_mask = self.sgn_mask.cuda()", "tensor_to_device", "replace", True,
        "self.sgn_mask = self.sgn_mask.npu()", "mask must live with the features"),
      C("self.txt = self.txt.cuda()", "tensor_to_device", "replace", True, "self.txt = self.txt.npu()",
        "translation targets"),
      C("self.txt_mask = self.txt_mask.cuda()", "tensor_to_device", "replace", True,
        "self.txt_mask = self.txt_mask.npu()", "decoder mask"),
      C("self.txt_input = self.txt_input.cuda()", "tensor_to_device", "replace", True,
        "self.txt_input = self.txt_input.npu()", "teacher-forcing input"),
  ])

E("slt_prediction", "signjoey/prediction.py", "explicit_replacement",
  "neccam/slt signjoey/prediction.py (validate_on_data, test)", [
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "test(): model to the accelerator"),
      C("recognition_loss_function.cuda()", "tensor_to_device", "replace", False,
        "recognition_loss_function.npu()", "nn.CTCLoss: " + NOOP_MODULE_CUDA),
      C("translation_loss_function.cuda()", "tensor_to_device", "replace", False,
        "translation_loss_function.npu()", "XentLoss: " + NOOP_MODULE_CUDA),
  ])

E("slt_model", "signjoey/model.py", "explicit_replacement",
  "neccam/slt signjoey/model.py (SignModel, TF ctc_beam_search_decoder on CPU)", [])

E("slt_config", "configs/sign.yaml", "explicit_replacement",
  "neccam/slt configs/sign.yaml (use_cuda: true)", [])

E("slt_requirements", "requirements.txt", "explicit_replacement",
  "neccam/slt requirements.txt", [
      C("torch==1.4.0", "import_torch_npu", "replace", True, "torch==2.1.0",
        "dependency: torch must equal the torch_npu wheel's torch version; no torch_npu exists for 1.4"),
      C("torchtext==0.5.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
        "dependency: torch-npu line inserted after the torch pin (next to torchtext); torch_npu 2.1.0.post10 pairs "
        "with CANN 8.0.0"),
  ])

# --------------------------------------------------------------------------------------------------------------
# FangyunWei/SLRT  TwoStream-SLR (NeurIPS 2022)
# --------------------------------------------------------------------------------------------------------------
E("ts_misc", "TwoStream-SLR/utils/misc.py", "explicit_replacement",
  "FangyunWei/SLRT TwoStream-SLR/utils/misc.py (init_DDP, set_seed)", [
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        SEED_NOTE),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "raises without CUDA; each rank must bind its NPU before HCCL init"),
      C("backend='nccl'", "dist_backend", "replace", True,
        "torch.distributed.init_process_group(backend='hccl', init_method='env://')",
        "NCCL is not available on Ascend; HCCL is the collective backend"),
      C("torch.device('cuda', local_rank)", "device_type", "replace", True,
        "return local_rank, int(os.environ['WORLD_SIZE']), torch.device('npu', local_rank)",
        "cfg['device'] drives move_to_device / model.to everywhere"),
      C("allocated = torch.cuda.memory_allocated(device)", "torch_cuda_api", "replace", False,
        "allocated = torch.npu.memory_allocated(device)",
        "diagnostic: with CUDA never initialised the CUDA allocator stats read back as 0 instead of raising"),
      C("reserved = torch.cuda.memory_reserved(device)", "torch_cuda_api", "replace", False,
        "reserved = torch.npu.memory_reserved(device)", "diagnostic, as above"),
  ])

E("ts_training", "TwoStream-SLR/training.py", "explicit_replacement",
  "FangyunWei/SLRT TwoStream-SLR/training.py (torch.distributed.launch + DDP loop)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("'cuda:{:d}'.format(cfg['local_rank'])", "tensor_to_device", "replace", True,
        "state_dict = torch.load(latest_ckpt, 'npu:{:d}'.format(cfg['local_rank']))",
        "positional map_location to a CUDA device raises on an NPU host"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op when CUDA was never initialised; NPU cache release after resume is memory hygiene only"),
      C("torch.cuda.max_memory_allocated() / 1024 ** 2", "torch_cuda_api", "replace", False,
        "torch.npu.max_memory_allocated() / 1024 ** 2))", "log line only: reports 0 MB instead of raising"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "forces CUDA lazy init and raises on a host without CUDA; also needed for a true epoch timing on NPU"),
      C("state_dict = torch.load(load_model_path, map_location='cuda')", "tensor_to_device", "replace", True,
        "state_dict = torch.load(load_model_path, map_location='npu')", "map_location='cuda' raises without CUDA"),
  ])

E("ts_prediction", "TwoStream-SLR/prediction.py", "explicit_replacement",
  "FangyunWei/SLRT TwoStream-SLR/prediction.py (evaluation, gather of results)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("map_location='cuda'", "tensor_to_device", "replace", True,
        "state_dict = torch.load(load_model_path, map_location='npu')", "map_location='cuda' raises without CUDA"),
  ])

E("ts_dataloader", "TwoStream-SLR/dataset/Dataloader.py", "explicit_replacement",
  "FangyunWei/SLRT TwoStream-SLR/dataset/Dataloader.py", [
      C("pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',", PIN_NOTE),
  ])

E("ts_recognition", "TwoStream-SLR/modelling/recognition.py", "explicit_replacement",
  "FangyunWei/SLRT TwoStream-SLR/modelling/recognition.py (S3D two-stream, heatmaps on device, CTC)", [])

E("ts_gaussian", "TwoStream-SLR/utils/gen_gaussian.py", "explicit_replacement",
  "FangyunWei/SLRT TwoStream-SLR/utils/gen_gaussian.py (device-agnostic heatmap generation)", [])

E("ts_translation", "TwoStream-SLR/modelling/translation.py", "explicit_replacement",
  "FangyunWei/SLRT TwoStream-SLR/modelling/translation.py (mBART translation network)", [])

E("ts_run", "TwoStream-SLR/scripts/run_s2g.sh", "explicit_replacement",
  "FangyunWei/SLRT TwoStream-SLR launcher (python -m torch.distributed.launch, 8 GPUs)", [
      C("=set -e", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment (LD_LIBRARY_PATH, ASCEND_* paths) must be sourced before python imports torch_npu"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
        "lists all eight cards, which is what an 8-NPU host exposes by default; inert but misleading if left"),
      C("nvidia-smi --query-gpu", "device_capability_check", "replace", True, "npu-smi info",
        "nvidia-smi is absent on an Ascend host; under `set -e` the 127 exit aborts the script before training"),
  ])

E("ts_env", "TwoStream-SLR/environment.yml", "explicit_replacement",
  "FangyunWei/SLRT TwoStream-SLR environment.yml (conda, cudatoolkit 11.1)", [
      C("pytorch=1.8.0", "import_torch_npu", "removal", True, None,
        "dependency: conda pytorch 1.8 has no matching torch_npu; torch comes from pip next to torch-npu"),
      C("torchvision=0.9.0", "import_torch_npu", "removal", True, None,
        "dependency: conda torchvision 0.9 pins pytorch 1.8; reinstalled as torchvision==0.16.0 via pip"),
      C("torchaudio=0.8.0", "import_torch_npu", "removal", True, None,
        "dependency: pins pytorch 1.8 and is unused by the project"),
      C("cudatoolkit=11.1.74", "import_torch_npu", "removal", False, None,
        "CUDA runtime is dead weight once conda pytorch is gone; that it cannot be solved on aarch64 Ascend hosts "
        "is unconfirmed"),
      C("- pip:", "import_torch_npu", "npu_only_addition", True,
        "    - torch-npu==2.1.0.post10  # with torch==2.1.0, torchvision==0.16.0",
        "dependency: torch / torch-npu / torchvision pins added under the pip section"),
  ])

# --------------------------------------------------------------------------------------------------------------
# hulianyuyy/CorrNet (VAC / SMKD lineage, CSLR on PHOENIX-2014)
# --------------------------------------------------------------------------------------------------------------
E("cn_main", "main.py", "explicit_replacement",
  "hulianyuyy/CorrNet main.py (Processor; inherited from ycmin95/VAC_CSLR)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=faulthandler.enable()", "compile_mode", "npu_only_addition", False,
        "torch.npu.set_compile_mode(jit_compile=False)",
        "variable-length videos and packed BiLSTM give a new shape almost every batch; binary (non-JIT) kernels "
        "avoid recompilation. Performance only (msFmkTransplt advice)"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op when CUDA was never initialised; memory hygiene only"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
        "model_to_device already moved it with .to(output_device); the trailing .cuda() raises on an NPU host"),
      C("state_dict = torch.load(weight_path)", "tensor_to_device", "replace", True,
        "state_dict = torch.load(weight_path, map_location='cpu')",
        "released CorrNet/VAC weights were saved from CUDA models; without map_location the --load-weights test "
        "path raises on a host without CUDA"),
      C("state_dict = torch.load(self.arg.load_checkpoints)", "tensor_to_device", "replace", False,
        "state_dict = torch.load(self.arg.load_checkpoints, map_location='cpu')",
        "resume checkpoints written by the ported run already restore onto the NPU; only CUDA-era checkpoints fail"),
      C("torch.cuda.get_rng_state_all()", "torch_cuda_api", "replace", False,
        "if len(torch.npu.get_rng_state_all()) == len(state_dict['rng_state']['cuda']):",
        "returns [] without CUDA, so the NPU RNG state is silently not restored; reproducibility only"),
      C("pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',", PIN_NOTE),
  ])

E("cn_device", "utils/device.py", "explicit_replacement",
  "hulianyuyy/CorrNet utils/device.py (GpuDataParallel, from VAC_CSLR)", [
      C('os.environ["CUDA_VISIBLE_DEVICES"] = device', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = device',
        "--device 2 relies on re-indexing to logical 0; CANN ignores CUDA_VISIBLE_DEVICES, so NPU 0 would be used"),
      C('self.output_device = output_device if len(self.gpu_list) > 0 else "cpu"', "device_type", "replace", True,
        'self.output_device = f"npu:{output_device}" if len(self.gpu_list) > 0 else "cpu"',
        "an int passed to Tensor.to / Module.to means a CUDA ordinal; every data_to_device / model.to call uses it"),
      C("model = nn.DataParallel(", "unsupported_op_workaround", "replace", False,
        "raise RuntimeError('nn.DataParallel is unsupported on Ascend NPU; launch one process per NPU with DDP')",
        "nn.DataParallel is unsupported on NPU; only reached with several --device ids, and main.py uses its own "
        "model_to_device that already refuses multiple devices"),
      C("torch.zeros(1).cuda()", "tensor_to_device", "replace", True, "torch.zeros(1).npu()",
        "occupy_gpu runs from set_device; .cuda() raises on an NPU host"),
      C("torch.zeros(1).cuda(g)", "tensor_to_device", "replace", True, "torch.zeros(1).npu(g)",
        "same, per selected device"),
  ])

E("cn_seq", "seq_scripts.py", "explicit_replacement",
  "hulianyuyy/CorrNet seq_scripts.py (AMP train loop, sclite eval)", [
      C("from torch.cuda.amp import autocast as autocast", "amp", "replace", False,
        "from torch.npu.amp import autocast as autocast",
        "CUDA autocast on an NPU host warns and disables itself: the model runs in fp32. Correct but slow; "
        "performance only"),
      C("from torch.cuda.amp import GradScaler", "amp", "replace", True, "from torch.npu.amp import GradScaler",
        "the CUDA GradScaler disables itself without CUDA; once autocast is ported to NPU fp16 the loss is no longer "
        "scaled and small fp16 gradients underflow silently"),
  ])

E("cn_network", "slr_network.py", "explicit_replacement",
  "hulianyuyy/CorrNet slr_network.py (SLRModel, CTC with CPU int targets)", [])

E("cn_bilstm", "modules/BiLSTM.py", "explicit_replacement",
  "hulianyuyy/CorrNet modules/BiLSTM.py (packed BiLSTM)", [])

E("cn_optimizer", "utils/optimizer.py", "explicit_replacement",
  "hulianyuyy/CorrNet utils/optimizer.py", [
      C("self.optimizer = optim.Adam(", "fused_optimizer", "replace", False,
        "self.optimizer = torch_npu.optim.NpuFusedAdam(",
        "baseline.yaml selects Adam; the tensor-fused NPU Adam is a performance change only (needs import torch_npu)"),
  ])

E("cn_random", "utils/random_state.py", "explicit_replacement",
  "hulianyuyy/CorrNet utils/random_state.py (RandomState save/restore)", [
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        SEED_NOTE),
      C('rng_dict["cuda"] = torch.cuda.get_rng_state_all()', "torch_cuda_api", "replace", False,
        'rng_dict["cuda"] = torch.npu.get_rng_state_all()',
        "stores [] without CUDA: checkpoints silently miss the NPU RNG state; reproducibility only"),
      C('torch.cuda.set_rng_state_all(rng_dict["cuda"])', "torch_cuda_api", "replace", False,
        'torch.npu.set_rng_state_all(rng_dict["cuda"])', "counterpart of the save; reproducibility only"),
  ])

E("cn_config", "configs/baseline.yaml", "explicit_replacement",
  "hulianyuyy/CorrNet configs/baseline.yaml", [])

# --------------------------------------------------------------------------------------------------------------
# jackyjsy/CVPR21Chal-SLR  (SAM-SLR: SL-GCN skeleton stream, Conv3D RGB stream, whole-body pose extraction)
# --------------------------------------------------------------------------------------------------------------
E("sam_gcn_main", "SL-GCN/main.py", "explicit_replacement",
  "jackyjsy/CVPR21Chal-SLR SL-GCN/main.py (2s-AGCN/DecoupleGCN-style Processor)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        SEED_NOTE),
      C("self.model = Model(**self.arg.model_args).cuda(output_device)", "tensor_to_device", "replace", True,
        "self.model = Model(**self.arg.model_args).npu(output_device)", ".cuda(idx) raises on an NPU host"),
      C("self.loss = LabelSmoothingCrossEntropy().cuda(output_device)", "tensor_to_device", "replace", False,
        "self.loss = LabelSmoothingCrossEntropy().npu(output_device)", NOOP_MODULE_CUDA),
      C("v.cuda(output_device)] for k, v in weights.items()])", "tensor_to_device", "replace", True,
        "v.npu(output_device)] for k, v in weights.items()])", "--weights test path; raises without CUDA"),
      C("self.model = nn.DataParallel(", "unsupported_op_workaround", "replace", False,
        "raise RuntimeError('nn.DataParallel is unsupported on Ascend NPU; use one device or DDP')",
        "nn.DataParallel is unsupported on NPU; unreachable once the training config lists a single device"),
      C("data = Variable(data.float().cuda(", "tensor_to_device", "replace", True,
        "data = Variable(data.float().npu(", "training batch to the accelerator"),
      C("label = Variable(label.long().cuda(", "tensor_to_device", "replace", True,
        "label = Variable(label.long().npu(", "training labels"),
      C("data = data.float().cuda(self.output_device)", "tensor_to_device", "replace", True,
        "data = data.float().npu(self.output_device)", "eval batch"),
      C("label = label.long().cuda(self.output_device)", "tensor_to_device", "replace", True,
        "label = label.long().npu(self.output_device)", "eval labels"),
  ])

E("sam_decouple", "SL-GCN/model/decouple_gcn_attn.py", "explicit_replacement",
  "jackyjsy/CVPR21Chal-SLR SL-GCN/model/decouple_gcn_attn.py (DecoupleGCN unit_gcn)", [
      C("in_channels, out_channels * num_subset, requires_grad=True, device='cuda'", "device_type", "replace", True,
        "in_channels, out_channels * num_subset, requires_grad=True, device='npu'), requires_grad=True)",
        "parameter allocated on CUDA at construction time; raises on an NPU host before .npu() is ever reached"),
      C("1, out_channels * num_subset, 1, 1, requires_grad=True, device='cuda'", "device_type", "replace", True,
        "1, out_channels * num_subset, 1, 1, requires_grad=True, device='npu'), requires_grad=True)",
        "same for Linear_bias"),
      C("eye_array), requires_grad=False, device='cuda'), requires_grad=False)", "device_type", "replace", True,
        "eye_array), requires_grad=False, device='npu'), requires_grad=False)  # [c,25,25]",
        "same for the identity stack used by norm()"),
  ])

E("sam_gcn_config", "SL-GCN/config/sign/train/train_joint.yaml", "explicit_replacement",
  "jackyjsy/CVPR21Chal-SLR SL-GCN/config/sign/train/train_joint.yaml", [
      C("device: [0,1,2,3]", "unsupported_op_workaround", "replace", True, "device: [0]",
        "four ids send main.py into nn.DataParallel, which is unsupported on NPU; single NPU (or a DDP rewrite)"),
  ])

E("sam_conv3d", "Conv3D/Sign_Isolated_Conv3D_clip.py", "explicit_replacement",
  "jackyjsy/CVPR21Chal-SLR Conv3D/Sign_Isolated_Conv3D_clip.py (R(2+1)D RGB stream)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = "0,1,2,3"', "env_var", "replace", False,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0,1,2,3"',
        "with DataParallel gone only npu:0 is used, which is physical 0 either way"),
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
        "unchanged it silently trains the 3D CNN on the CPU"),
      C("train_loader = DataLoader(", "pin_memory", "replace", False,
        "train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True, num_workers=48, pin_memory=True, "
        "pin_memory_device='npu')", PIN_NOTE),
      C("val_loader = DataLoader(", "pin_memory", "replace", False,
        "val_loader = DataLoader(val_set, batch_size=batch_size, shuffle=False, num_workers=48, pin_memory=True, "
        "pin_memory_device='npu')", PIN_NOTE),
      C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
        "if torch.npu.device_count() > 1:",
        "unported it returns 0 and skips the block, which is harmless once DataParallel is removed; ported for the log"),
      C('logger.info("Using {} GPUs"', "torch_cuda_api", "replace", False,
        'logger.info("Using {} NPUs".format(torch.npu.device_count()))', "log line only"),
      C("model = nn.DataParallel(model)", "unsupported_op_workaround", "removal", True, None,
        "nn.DataParallel is unsupported on NPU and the ported device_count() makes the branch live on a multi-NPU host"),
  ])

E("sam_wholepose", "data-prepare/code/wholepose/demo.py", "explicit_replacement",
  "jackyjsy/CVPR21Chal-SLR data-prepare/code/wholepose/demo.py (HRNet-w48 whole-body keypoints)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("checkpoint = torch.load('hrnet_w48", "tensor_to_device", "replace", False,
        "checkpoint = torch.load('hrnet_w48_coco_wholebody_384x288-6e061c6a_20200922.pth', map_location='cpu')",
        "mmpose checkpoints are normally saved with CPU tensors; only needed if this one holds CUDA tensors "
        "(unconfirmed)"),
      C("newmodel.cuda().eval()", "tensor_to_device", "replace", True, "newmodel.npu().eval()",
        ".cuda() raises on an NPU host"),
      C("img_temp = norm_numpy_totensor(img_temp).cuda()", "tensor_to_device", "replace", True,
        "img_temp = norm_numpy_totensor(img_temp).npu()", "input frames to the model's device"),
  ])

# --------------------------------------------------------------------------------------------------------------
# matyasbohacek/spoter  (pose-based isolated SLR, WACV-W 2022) - ported with an NPU branch, CUDA kept
# --------------------------------------------------------------------------------------------------------------
E("sp_train", "train.py", "device_branch_or_abstraction",
  "matyasbohacek/spoter train.py (device fallback cuda -> cpu)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        IMPORT_NOTE + " (in the branch-style port guarded by try/except ImportError)"),
      C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "npu_only_addition", False,
        "torch.npu.manual_seed_all(args.seed)", "CUDA seeding kept for GPU hosts; NPU seed added. " + SEED_NOTE),
      C('device = torch.device("cuda")', "device_type", "add_branch", True,
        'elif torch.npu.is_available(): device = torch.device("npu")',
        "without the branch torch.cuda.is_available() is False on an NPU host and SPOTER silently trains on the CPU"),
  ])

E("sp_utils", "spoter/utils.py", "device_branch_or_abstraction",
  "matyasbohacek/spoter spoter/utils.py (train_epoch/evaluate take a device)", [])

E("sp_model", "spoter/spoter_model.py", "device_branch_or_abstraction",
  "matyasbohacek/spoter spoter/spoter_model.py (nn.Transformer with custom decoder layer)", [])

E("sp_requirements", "requirements.txt", "device_branch_or_abstraction",
  "matyasbohacek/spoter requirements.txt", [
      C("torch==1.8.1", "import_torch_npu", "replace", True, "torch==2.1.0",
        "dependency: torch must equal the torch_npu wheel's torch version"),
      C("torchvision==0.9.1", "import_torch_npu", "replace", True, "torchvision==0.16.0",
        "dependency: torchvision 0.9.1 pins torch 1.8.1"),
      C("tqdm==4.62.3", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
        "dependency: torch-npu line added at the end of the torch block (next to tqdm)"),
  ])
