"""Labels for probe243 (sign-language recognition / translation, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit. See README.md "How the labels were chosen".
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: torch_npu < 2.5.1 must be imported explicitly to register the npu device "
               "(autoloaded from 2.5.1); the projects pin old torch, so the port lands on an explicit-import version")
SEED_NOTE = ("torch.cuda seeding is lazy and silently does nothing on a host without CUDA; NPU RNG stays unseeded "
             "(reproducibility only, nothing fails)")
EMPTY_CACHE_NOTE = "torch.cuda.empty_cache() is a silent no-op when CUDA was never initialised; NPU cache not released (memory only)"
MAXMEM_NOTE = "torch.cuda memory stats return 0 when CUDA is uninitialised; logging shows 0 instead of NPU memory (cosmetic)"
SYNC_NOTE = "torch.cuda.synchronize() initialises CUDA and raises on an NPU host (torch not compiled with CUDA / no device)"
CUDA_CALL_NOTE = "Tensor/Module .cuda() raises on an NPU host; move to the NPU instead"
PIN_NOTE = ("pin_memory=True without pin_memory_device: whether pinning is applied for NPU depends on the torch/torch_npu "
            "version (older DataLoader only pins when torch.cuda.is_available()); performance only, unconfirmed")
LOSS_CUDA_NOTE = ("loss module has no parameters or buffers, so Module.cuda() touches no tensor and does not fail; "
                  "changed only for consistency")
SETENV_NOTE = ("source CANN's set_env.sh so torch_npu finds libascendcl/libhccl; needed only if the calling shell has "
               "not sourced it already")

# ---------------------------------------------------------------------------------------------
# SLRT / TwoStream-SLR
# ---------------------------------------------------------------------------------------------
E("slrt_misc", "TwoStream-SLR/utils/misc.py", "explicit_replacement",
  "FangyunWei/SLRT TwoStream-SLR utils/misc.py (init_DDP, all_gather, set_seed)", [
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(seed)", SEED_NOTE),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)", SEED_NOTE),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(local_rank)", "initialises CUDA and raises on an NPU host"),
      C("torch.distributed.init_process_group(backend='nccl'", "dist_backend", "replace", True,
        "torch.distributed.init_process_group(backend='hccl', init_method='env://', world_size=world_size, rank=local_rank)",
        "NCCL backend is unavailable on Ascend; HCCL is the collective backend"),
      C("device = torch.device('cuda:{}'.format(local_rank))", "device_type", "replace", True,
        "device = torch.device('npu:{}'.format(local_rank))",
        "cfg['device'] is used for every .to(); a cuda device fails on NPU"),
      C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
        'tensor = torch.ByteTensor(storage).to("npu")', "all_gather buffers must live on the HCCL device"),
      C('local_size = torch.LongTensor([tensor.numel()]).to("cuda")', "tensor_to_device", "replace", True,
        'local_size = torch.LongTensor([tensor.numel()]).to("npu")', "HCCL all_gather needs NPU tensors"),
      C('size_list = [torch.LongTensor([0]).to("cuda") for _ in range(world_size)]', "tensor_to_device", "replace", True,
        'size_list = [torch.LongTensor([0]).to("npu") for _ in range(world_size)]', "HCCL all_gather needs NPU tensors"),
      C('tensor_list.append(torch.ByteTensor(size=(max_size,)).to("cuda"))', "tensor_to_device", "replace", True,
        'tensor_list.append(torch.ByteTensor(size=(max_size,)).to("npu"))', "HCCL all_gather needs NPU tensors"),
      C('padding = torch.ByteTensor(size=(max_size - local_size,)).to("cuda")', "tensor_to_device", "replace", True,
        'padding = torch.ByteTensor(size=(max_size - local_size,)).to("npu")', "cat with an NPU tensor"),
  ])

E("slrt_training", "TwoStream-SLR/training.py", "explicit_replacement",
  "FangyunWei/SLRT TwoStream-SLR training.py (DDP launcher entry point)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("state_dict = torch.load(latest_ckpt, 'cuda:{:d}'.format(cfg['local_rank']))", "device_type", "replace", True,
        "state_dict = torch.load(latest_ckpt, 'npu:{:d}'.format(cfg['local_rank']))",
        "map_location to a cuda device raises on an NPU host"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
      C("mem_gb = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
        "mem_gb = torch.npu.max_memory_allocated() / 1024 ** 3", MAXMEM_NOTE),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", SYNC_NOTE),
  ])

E("slrt_prediction", "TwoStream-SLR/prediction.py", "explicit_replacement",
  "FangyunWei/SLRT TwoStream-SLR prediction.py (evaluation + TF CTC beam search)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("cfg['device'] = torch.device('cuda')", "device_type", "replace", True,
        "cfg['device'] = torch.device('npu')", "device used for model and batches"),
      C("state_dict = torch.load(load_model_path, map_location='cuda')", "device_type", "replace", True,
        "state_dict = torch.load(load_model_path, map_location='cpu')",
        "map_location='cuda' raises on an NPU host; load on CPU, the model is moved afterwards"),
  ])

E("slrt_recognition", "TwoStream-SLR/modelling/recognition.py", "explicit_replacement",
  "FangyunWei/SLRT TwoStream-SLR modelling/recognition.py + gen_gaussian heatmap op", [
      C("grid = torch.stack([y, x], dim=0).cuda()  # [2,H,W]", "tensor_to_device", "replace", True,
        "grid = torch.stack([y, x], dim=0).to(coords.device)  # [2,H,W]",
        "heatmap grid is built on CPU then forced to CUDA; follow the keypoint tensor's device"),
  ])

E("slrt_launch", "TwoStream-SLR/scripts/run_phoenix2014t.sh", "explicit_replacement",
  "SLRT-style shell launcher (torch.distributed.launch --nproc_per_node 8 --use_env)", [
      C("=set -e", "env_var", "npu_only_addition", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SETENV_NOTE),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
        "ignored on NPU; here it lists devices 0-7 in order, which is what the NPU runtime uses anyway"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
        "GPU PCIe-switch workaround; HCCL ignores NCCL_* and has no direct counterpart needed here"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
        "NCCL logging knob has no effect on HCCL; CANN log level via ASCEND_GLOBAL_LOG_LEVEL (level mapping unconfirmed)"),
      C("nvidia-smi --query-gpu=index,name,memory.total --format=csv", "device_capability_check", "replace", True,
        "npu-smi info", "nvidia-smi does not exist on an Ascend host and the script runs under set -e, so it aborts here"),
      C("CUDA_VISIBLE_DEVICES=0 python -m torch.distributed.launch --nproc_per_node 1", "env_var", "replace", False,
        "ASCEND_RT_VISIBLE_DEVICES=0 python -m torch.distributed.launch --nproc_per_node 1 --master_port ${MASTER_PORT} --use_env \\",
        "ignored on NPU; rank 0 lands on device 0 anyway"),
  ])

E("slrt_requirements", "TwoStream-SLR/requirements.txt", "explicit_replacement",
  "SLRT requirements.txt (torch +cu111 pins from torch_stable.html)", [
      C("--find-links https://download.pytorch.org/whl/torch_stable.html", "import_torch_npu", "npu_only_addition", True,
        "torch-npu==2.1.0.post10",
        "add the torch_npu wheel (pairs with torch 2.1.0, CANN 8.0.0); the find-links page itself also lists CPU wheels and becomes inert"),
      C("torch==1.8.0+cu111", "torch_cuda_api", "replace", True, "torch==2.1.0",
        "CUDA 11.1 build; torch_npu needs the matching plain/CPU torch wheel of a supported version (1.8.0 has none)"),
      C("torchvision==0.9.0+cu111", "torch_cuda_api", "replace", True, "torchvision==0.16.0",
        "CUDA build pinned to torch 1.8.0; must follow the torch pin"),
      C("=pynvml", "torch_cuda_api", "removal", False, None,
        "NVML bindings install fine but have no device to talk to on an Ascend host"),
  ])

# ---------------------------------------------------------------------------------------------
# OpenHands
# ---------------------------------------------------------------------------------------------
E("openhands_config", "examples/configs/wlasl/decoupled_gcn.yaml", "explicit_replacement",
  "AI4Bharat/OpenHands examples/configs/*/decoupled_gcn.yaml (pl.Trainer kwargs)", [
      C("pin_memory: true", "pin_memory", "replace", False, "pin_memory: true  # + pin_memory_device: npu", PIN_NOTE),
      C("pin_memory: True", "pin_memory", "replace", False, "pin_memory: True  # + pin_memory_device: npu", PIN_NOTE),
      C("gpus: 1", "device_type", "replace", True, "accelerator: npu  # with devices: 1",
        "Lightning raises on gpus=1 without CUDA; stock Lightning has no NPU accelerator (PR #19308 closed unmerged), "
        "so this needs a registered third-party NPU accelerator - exact fix unconfirmed"),
  ])

E("openhands_exp_utils", "openhands/core/exp_utils.py", "explicit_replacement",
  "AI4Bharat/OpenHands openhands/core/exp_utils.py (get_trainer / experiment_manager)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("return torch.cuda.device_count()", "torch_cuda_api", "replace", True, "return torch.npu.device_count()",
        "gpus=-1 resolves to 0 devices on an NPU host, silently training on CPU"),
      C('trainer_cfg["plugins"] = [DDPPlugin(find_unused_parameters=False)]', "dist_backend", "replace", False,
        'trainer_cfg["strategy"] = DDPStrategy(process_group_backend="hccl", find_unused_parameters=False)',
        "Lightning picks nccl (GPU) or gloo (CPU); NPU needs hccl. Depends on the NPU accelerator plugin - unconfirmed"),
      C("if n_gpus == 0 and torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if n_gpus == 0 and torch.npu.is_available():", "warning only; silently never fires on NPU"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
        "info printout only; on NPU it reports 'No GPU found' and returns"),
      C("for i in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", False,
        "for i in range(torch.npu.device_count()):", "info printout only"),
      C("props = torch.cuda.get_device_properties(i)", "torch_cuda_api", "replace", False,
        "props = torch.npu.get_device_properties(i)", "info printout only; NPU props carry name and total_memory"),
  ])

E("openhands_inference", "openhands/apis/inference.py", "explicit_replacement",
  "AI4Bharat/OpenHands openhands/apis/inference.py (InferenceModel)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('self._device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'self._device = torch.device("npu" if torch.npu.is_available() else "cpu")',
        "silently falls back to CPU on an NPU host"),
      C('frames = batch["frames"].cuda(non_blocking=True)', "tensor_to_device", "replace", True,
        'frames = batch["frames"].to(self._device, non_blocking=True)', CUDA_CALL_NOTE),
      C('labels = batch["labels"].cuda(non_blocking=True)', "tensor_to_device", "replace", True,
        'labels = batch["labels"].to(self._device, non_blocking=True)', CUDA_CALL_NOTE),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", SYNC_NOTE),
  ])

E("openhands_decoupled_gcn", "openhands/models/encoder/graph/decoupled_gcn.py", "explicit_replacement",
  "AI4Bharat/OpenHands decoupled_gcn.py (DC-GCN / SL-GCN encoder)", [
      C('torch.tensor(torch.stack(eye_array), requires_grad=False, device="cuda"),', "tensor_to_device", "replace", True,
        "torch.stack(eye_array).clone().detach(),",
        "creates a CUDA tensor at model construction; the Parameter moves with model.to(device)"),
      C('=device="cuda",', "tensor_to_device", "removal", True, None,
        "same: adjacency Parameter must not be pinned to CUDA at construction"),
  ])

E("openhands_mediapipe", "scripts/mediapipe_extract.py", "explicit_replacement",
  "AI4Bharat/OpenHands scripts/mediapipe_extract.py (CPU-only MediaPipe Holistic)", [])

E("openhands_classification", "openhands/apis/classification_model.py", "explicit_replacement",
  "AI4Bharat/OpenHands openhands/apis/classification_model.py (LightningModule)", [
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "guards a memory-stat reset; silently skipped on NPU"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", False,
        "torch.npu.reset_peak_memory_stats()", "memory logging only"),
      C("if self.trainer.is_global_zero and torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if self.trainer.is_global_zero and torch.npu.is_available():", "memory logging only; silently skipped on NPU"),
      C("peak_mb = torch.cuda.max_memory_allocated() / (1024 * 1024)", "torch_cuda_api", "replace", False,
        "peak_mb = torch.npu.max_memory_allocated() / (1024 * 1024)", MAXMEM_NOTE),
  ])

# ---------------------------------------------------------------------------------------------
# Sign Language Transformers (signjoey)
# ---------------------------------------------------------------------------------------------
E("signjoey_training", "signjoey/training.py", "explicit_replacement",
  "neccam/slt signjoey/training.py (TrainManager, use_cuda)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=self.model.cuda()", "tensor_to_device", "replace", True, "self.model.npu()", CUDA_CALL_NOTE),
      C("self.translation_loss_function.cuda()", "tensor_to_device", "replace", False,
        "self.translation_loss_function.npu()", LOSS_CUDA_NOTE),
      C("self.recognition_loss_function.cuda()", "tensor_to_device", "replace", False,
        "self.recognition_loss_function.npu()", LOSS_CUDA_NOTE),
      C("self.model = self.model.cuda()", "tensor_to_device", "replace", True, "self.model = self.model.npu()",
        CUDA_CALL_NOTE),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu_id',
        "--gpu_id is silently ignored on NPU, so every job lands on device 0"),
  ])

E("signjoey_batch", "signjoey/batch.py", "explicit_replacement",
  "neccam/slt signjoey/batch.py (Batch._make_cuda)", [
      C("self.sgn = self.sgn.cuda()", "tensor_to_device", "replace", True, "self.sgn = self.sgn.npu()", CUDA_CALL_NOTE),
      C("self.sgn_mask = self.sgn_mask.cuda()", "tensor_to_device", "replace", True,
        "self.sgn_mask = self.sgn_mask.npu()", CUDA_CALL_NOTE),
      C("self.txt = self.txt.cuda()", "tensor_to_device", "replace", True, "self.txt = self.txt.npu()", CUDA_CALL_NOTE),
      C("self.txt_mask = self.txt_mask.cuda()", "tensor_to_device", "replace", True,
        "self.txt_mask = self.txt_mask.npu()", CUDA_CALL_NOTE),
      C("self.txt_input = self.txt_input.cuda()", "tensor_to_device", "replace", True,
        "self.txt_input = self.txt_input.npu()", CUDA_CALL_NOTE),
  ])

E("signjoey_helpers", "signjoey/helpers.py", "explicit_replacement",
  "neccam/slt signjoey/helpers.py (joeynmt helpers)", [
      C("if torch.cuda.is_available() and torch.cuda.device_count() > 0:", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available() and torch.npu.device_count() > 0:",
        "guard is False on NPU so device seeding is skipped; reproducibility only"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        SEED_NOTE),
      C('checkpoint = torch.load(path, map_location="cuda" if use_cuda else "cpu")', "device_type", "replace", True,
        'checkpoint = torch.load(path, map_location="npu" if use_cuda else "cpu")',
        "map_location='cuda' raises on an NPU host"),
  ])

E("signjoey_prediction", "signjoey/prediction.py", "explicit_replacement",
  "neccam/slt signjoey/prediction.py (validate_on_data / test)", [
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", CUDA_CALL_NOTE),
      C("=recognition_loss_function.cuda()", "tensor_to_device", "replace", False,
        "recognition_loss_function.npu()", LOSS_CUDA_NOTE),
      C("=translation_loss_function.cuda()", "tensor_to_device", "replace", False,
        "translation_loss_function.npu()", LOSS_CUDA_NOTE),
  ])

E("signjoey_config", "configs/sign.yaml", "explicit_replacement",
  "neccam/slt configs/sign.yaml (use_cuda: true)", [])

E("slt_environment", "environment.yml", "explicit_replacement",
  "conda environment.yml for signjoey (pytorch + cudatoolkit + tensorflow-gpu)", [
      C("=- pytorch", "torch_cuda_api", "removal", False, None,
        "pytorch channel only served the CUDA build; torch now comes from pip"),
      C("=- nvidia", "torch_cuda_api", "removal", False, None, "NVIDIA channel has nothing usable on an Ascend host"),
      C("=- pytorch=1.10.2", "torch_cuda_api", "removal", True, None,
        "conda pytorch from the pytorch channel is the CUDA build and no torch_npu exists for 1.10; pip torch==2.1.0 instead"),
      C("=- torchvision=0.11.3", "torch_cuda_api", "removal", True, None,
        "pinned to torch 1.10 CUDA; moves to pip torchvision==0.16.0"),
      C("=- cudatoolkit=11.3", "torch_cuda_api", "removal", False, None, "CUDA runtime is dead weight on an NPU host"),
      C("=- cudnn", "torch_cuda_api", "removal", False, None, "cuDNN is dead weight on an NPU host"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post10",
        "add torch-npu (with torch==2.1.0 / torchvision==0.16.0 pip pins replacing the conda ones); CANN 8.0.0"),
      C("=- tensorflow-gpu==2.6.0", "torch_cuda_api", "replace", True, "      - tensorflow==2.13.1",
        "CUDA build of TF with no aarch64 wheel (Atlas training servers are Kunpeng aarch64); only the CPU CTC decoder is used"),
      C("=- pynvml", "torch_cuda_api", "removal", False, None, "NVML has no device on an Ascend host"),
      C("=- gpustat", "torch_cuda_api", "removal", False, None, "NVML-based tool; npu-smi replaces it"),
  ])

# ---------------------------------------------------------------------------------------------
# CorrNet / VAC
# ---------------------------------------------------------------------------------------------
E("corrnet_device", "utils/device.py", "device_branch_or_abstraction",
  "hulianyuyy/CorrNet utils/device.py (GpuDataParallel)", [
      C('os.environ["CUDA_VISIBLE_DEVICES"] = device', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = device',
        "--device 2 is silently ignored on NPU and the job runs on device 0"),
      C("output_device = self.gpu_list[0]", "device_type", "replace", True,
        'output_device = torch.device("npu", self.gpu_list[0])',
        "a bare int device means cuda:<n> for .to(); must be an npu device"),
      C("model = nn.DataParallel(", "distributed_framework", "replace", True,
        "model = model  # nn.DataParallel is unsupported on NPU: use one process per device with DDP/hccl",
        "torch.nn.DataParallel is marked unsupported in Ascend's API list"),
      C("=torch.zeros(1).cuda()", "tensor_to_device", "replace", True, "torch.zeros(1).npu()", CUDA_CALL_NOTE),
      C("=torch.zeros(1).cuda(g)", "tensor_to_device", "replace", True, "torch.zeros(1).npu(g)", CUDA_CALL_NOTE),
  ])

E("corrnet_main", "main.py", "explicit_replacement",
  "hulianyuyy/CorrNet main.py (Processor)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", CUDA_CALL_NOTE),
      C("state_dict = torch.load(weight_path)", "device_type", "replace", True,
        "state_dict = torch.load(weight_path, map_location='cpu')",
        "checkpoints are saved from GPU without .cpu(); unpickling CUDA storages raises on an NPU host"),
      C("state_dict = torch.load(self.arg.load_checkpoints)", "device_type", "replace", True,
        "state_dict = torch.load(self.arg.load_checkpoints, map_location='cpu')", "same: GPU-saved checkpoint"),
      C("if len(torch.cuda.get_rng_state_all()) == len(state_dict['rng_state']['cuda']):", "torch_cuda_api", "replace",
        False, "if len(torch.npu.get_rng_state_all()) == len(state_dict['rng_state']['cuda']):",
        "returns [] on NPU so RNG restore is silently skipped on resume (reproducibility only; RandomState keys unchanged)"),
      C("pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',", PIN_NOTE),
  ])

E("corrnet_seq_scripts", "seq_scripts.py", "explicit_replacement",
  "hulianyuyy/CorrNet seq_scripts.py (AMP train loop)", [
      C("from torch.cuda.amp import autocast as autocast", "amp", "replace", True,
        "from torch_npu.npu.amp import autocast as autocast",
        "torch.cuda.amp.autocast disables itself without CUDA (warning only), so training silently runs in fp32"),
      C("from torch.cuda.amp import GradScaler", "amp", "replace", True, "from torch_npu.npu.amp import GradScaler",
        "CUDA GradScaler disables itself on an NPU host; with NPU fp16 autocast the loss would go unscaled"),
      C("vid = data[0].cuda()", "tensor_to_device", "replace", True, "vid = data[0].npu()", CUDA_CALL_NOTE),
      C("vid_lgt = data[1].cuda()", "tensor_to_device", "replace", True, "vid_lgt = data[1].npu()", CUDA_CALL_NOTE),
  ])

E("corrnet_decode", "utils/decode.py", "explicit_replacement",
  "hulianyuyy/CorrNet utils/decode.py (ctcdecode CTCBeamDecoder)", [])

E("corrnet_bilstm", "modules/BiLSTM.py", "explicit_replacement",
  "hulianyuyy/CorrNet / VAC modules/BiLSTM.py (packed BiLSTM)", [
      C("packed_emb = nn.utils.rnn.pack_padded_sequence(src_feats, src_lens)", "unsupported_op_workaround", "replace",
        False, "packed_emb = src_feats  # run the padded batch (or torch_npu.contrib.module.BiLSTM) and mask by src_lens",
        "Ascend's 2.7.1 API list and msFmkTransplt mark pack_padded_sequence unsupported, yet op-plugin registers "
        "_pack_padded_sequence; runtime behaviour unconfirmed"),
      C("rnn_outputs, _ = nn.utils.rnn.pad_packed_sequence(packed_outputs)", "unsupported_op_workaround", "replace", False,
        "rnn_outputs = packed_outputs", "pairs with the pack_padded_sequence change; same unconfirmed status"),
  ])

# ---------------------------------------------------------------------------------------------
# SAM-SLR / SL-GCN
# ---------------------------------------------------------------------------------------------
E("samslr_main", "SL-GCN/main.py", "explicit_replacement",
  "jackyjsy/CVPR21Chal-SLR SL-GCN/main.py (2s-AGCN / MS-G3D style Processor)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.manual_seed_all(1)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(1)", SEED_NOTE),
      C("self.model, self.optimizer = amp.initialize(", "amp", "replace", False,
        "self.model, self.optimizer = amp.initialize(  # Ascend apex; ModelZoo ports add combine_grad=True",
        "NVIDIA apex amp rejects non-CUDA params; with Ascend's apex patch installed the call works unchanged "
        "(O1/O2), combine_grad is a performance option"),
      C("self.model = nn.DataParallel(", "distributed_framework", "replace", True,
        "self.model = self.model  # nn.DataParallel unsupported on NPU: one process per device with DDP/hccl",
        "torch.nn.DataParallel is marked unsupported in Ascend's API list (reached with --device 0 1 ...)"),
      C("self.model = Model(**self.arg.model_args).cuda(output_device)", "tensor_to_device", "replace", True,
        "self.model = Model(**self.arg.model_args).npu(output_device)", CUDA_CALL_NOTE),
      C("self.loss = nn.CrossEntropyLoss().cuda(output_device)", "tensor_to_device", "replace", False,
        "self.loss = nn.CrossEntropyLoss().npu(output_device)", LOSS_CUDA_NOTE),
      C("v.cuda(output_device)] for k, v in weights.items()])", "tensor_to_device", "replace", True,
        "v.npu(output_device)] for k, v in weights.items()])", CUDA_CALL_NOTE),
      C("data = Variable(data.float().cuda(self.output_device), requires_grad=False)", "tensor_to_device", "replace",
        True, "data = Variable(data.float().npu(self.output_device), requires_grad=False)", CUDA_CALL_NOTE),
      C("label = Variable(label.long().cuda(self.output_device), requires_grad=False)", "tensor_to_device", "replace",
        True, "label = Variable(label.long().npu(self.output_device), requires_grad=False)", CUDA_CALL_NOTE),
      C("=data.float().cuda(self.output_device),", "tensor_to_device", "replace", True,
        "data.float().npu(self.output_device),", CUDA_CALL_NOTE),
      C("=label.long().cuda(self.output_device),", "tensor_to_device", "replace", True,
        "label.long().npu(self.output_device),", CUDA_CALL_NOTE),
  ])

E("samslr_wholepose", "data-prepare/wholepose/demo.py", "explicit_replacement",
  "jackyjsy/CVPR21Chal-SLR data-prepare/wholepose/demo.py (HRNet whole-body keypoints)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = str(args.gpu)", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(args.gpu)",
        "--gpu N is silently ignored on NPU, parallel extraction jobs all pile onto device 0"),
      C("newmodel.cuda().eval()", "tensor_to_device", "replace", True, "newmodel.npu().eval()", CUDA_CALL_NOTE),
      C("img_temp = norm_numpy_totensor(img_temp).cuda()", "tensor_to_device", "replace", True,
        "img_temp = norm_numpy_totensor(img_temp).npu()", CUDA_CALL_NOTE),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
  ])

# ---------------------------------------------------------------------------------------------
# GFSLT-VLP
# ---------------------------------------------------------------------------------------------
E("gfslt_utils", "utils.py", "explicit_replacement",
  "zhoubenjia/GFSLT-VLP utils.py (DeiT-style distributed helpers, NativeScalerWithGradNormCount)", [
      C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "tensor_to_device", "replace",
        True, "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
        "HCCL all_reduce needs an NPU tensor (fp64 is cast to fp32 on NPU with a warning; fine for these counters)"),
      C("use_cuda_mem = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
        "use_cuda_mem = torch.npu.is_available()", "memory column silently dropped from the log on NPU"),
      C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
        "memory=torch.npu.max_memory_allocated() / MB))", MAXMEM_NOTE),
      C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "args.gpu = args.rank % torch.npu.device_count()",
        "device_count() is 0 on an NPU host -> ZeroDivisionError in the SLURM branch"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "initialises CUDA and raises on an NPU host"),
      C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
        "NCCL backend unavailable on Ascend"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        SEED_NOTE),
      C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
        "self._scaler = torch.npu.amp.GradScaler()",
        "CUDA GradScaler disables itself without CUDA; fp16 training on NPU would run unscaled"),
  ])

E("gfslt_train_slt", "train_slt.py", "explicit_replacement",
  "zhoubenjia/GFSLT-VLP train_slt.py (mBART gloss-free SLT, DeiT-style args)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
        "parser.add_argument('--device', default='npu',", "torch.device(args.device) is used for model and batches"),
      C("parser.set_defaults(pin_mem=True)", "pin_memory", "replace", False,
        "parser.set_defaults(pin_mem=True)  # DataLoader(..., pin_memory_device='npu')", PIN_NOTE),
      C("loss_scaler = NativeScaler()", "amp", "replace", True,
        "loss_scaler = utils.NativeScalerWithGradNormCount()  # NPU GradScaler",
        "timm's NativeScaler (0.4-0.9) hard-codes torch.cuda.amp.GradScaler, which disables itself on NPU"),
      C("with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
        "torch.cuda.amp.autocast silently disables itself without CUDA; training would run in fp32"),
  ])

E("gfslt_launch", "script/train_slt.sh", "explicit_replacement",
  "GFSLT-VLP script/*.sh (CUDA_VISIBLE_DEVICES + torch.distributed.launch --use_env)", [
      C("#!/bin/bash", "env_var", "npu_only_addition", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SETENV_NOTE),
      C("--nproc_per_node=${NGPU} --master_port=${PORT} --use_env \\", "env_var", "replace", False,
        "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 python -m torch.distributed.launch --nproc_per_node=${NGPU} --master_port=${PORT} --use_env \\",
        "ignored on NPU; lists all 8 devices in order, so the outcome is the same"),
      C("--master_port=$((PORT+1)) --use_env \\", "env_var", "replace", False,
        "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 python -m torch.distributed.launch --nproc_per_node=${NGPU} --master_port=$((PORT+1)) --use_env \\",
        "ignored on NPU; same device set"),
      C("CUDA_VISIBLE_DEVICES=3 python", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=3 python -m torch.distributed.launch --nproc_per_node=1 --master_port=${PORT} --use_env \\",
        "evaluation is meant for card 3; ignored on NPU, so it runs on device 0 next to other jobs"),
      C("--eval --device cuda", "device_type", "replace", True,
        "--resume out/Gloss-Free/best_checkpoint.pth --eval --device npu", "torch.device('cuda') fails on NPU"),
  ])

# ---------------------------------------------------------------------------------------------
# Keypoint / feature extraction
# ---------------------------------------------------------------------------------------------
E("mmpose_extract", "tools/extract_keypoints_mmpose.py", "explicit_replacement",
  "MMPose 0.x top-down whole-body demo adapted for sign videos (init_detector / init_pose_model)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("parser.add_argument('--device', default='cuda:0', help='Device used for inference')", "device_type",
        "replace", True, "parser.add_argument('--device', default='npu:0', help='Device used for inference')",
        "init_detector/init_pose_model move the models to this device; cuda:0 fails (needs an NPU-enabled mmcv)"),
      C("if args.device.startswith('cuda'):", "device_type", "add_branch", False,
        "if args.device.startswith('npu'):",
        "with npu:N the CUDA branch is simply skipped and models still land on the requested device"),
      C("torch.cuda.set_device(int(args.device.split(':')[-1]))", "torch_cuda_api", "replace", False,
        "torch.npu.set_device(int(args.device.split(':')[-1]))", "current-device hygiene only"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
        "--fp16 is silently ignored on NPU (performance only)"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "peak-memory printout only"),
      C("print('peak GPU memory: {:.1f} MB'.format(torch.cuda.max_memory_allocated() / 2 ** 20))", "torch_cuda_api",
        "replace", False, "print('peak NPU memory: {:.1f} MB'.format(torch.npu.max_memory_allocated() / 2 ** 20))",
        MAXMEM_NOTE),
  ])

E("i3d_extract", "feature_extraction/extract_i3d_features.py", "explicit_replacement",
  "I3D (BSL-1K pytorch_i3d) clip-feature extractor used by How2Sign/BOBSL SLT baselines", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpus", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpus", "--gpus selection silently ignored on NPU"),
      C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", False, "n_gpus = torch.npu.device_count()",
        "returns 0 on an NPU host: only misreports the count and skips the DataParallel branch"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", CUDA_CALL_NOTE),
      C("model = nn.DataParallel(model)", "distributed_framework", "replace", True,
        "pass  # nn.DataParallel unsupported on NPU: shard the video list over one process per device",
        "torch.nn.DataParallel is marked unsupported in Ascend's API list (reached once device_count is ported)"),
      C("num_workers=args.num_workers, pin_memory=True)", "pin_memory", "replace", False,
        "num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu')", PIN_NOTE),
      C("clips = clips.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "clips = clips.npu(non_blocking=True)", CUDA_CALL_NOTE),
      C("mem = torch.cuda.memory_allocated() / 2 ** 30", "torch_cuda_api", "replace", False,
        "mem = torch.npu.memory_allocated() / 2 ** 30", MAXMEM_NOTE),
  ])

# ---------------------------------------------------------------------------------------------
# LLM-based SLT
# ---------------------------------------------------------------------------------------------
E("llm_slt_train", "slt_llm/train.py", "explicit_replacement",
  "LLM-based gloss-free SLT (Sign2GPT / SpaMo style: LoRA LLM + visual projector, torchrun)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=import bitsandbytes as bnb", "custom_cuda_extension", "removal", False, None,
        "CUDA-kernel package; unused once the 8-bit optimizer goes; whether the non-CUDA build imports cleanly is unconfirmed"),
      C('p.add_argument("--attn_impl", default="flash_attention_2",', "attention_kernel", "replace", True,
        'p.add_argument("--attn_impl", default="sdpa",',
        "flash-attn cannot be installed on NPU, transformers raises for flash_attention_2; SDPA dispatches to the NPU fused attention"),
      C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
        'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
        "NCCL var is ignored by HCCL; torch_npu's watchdog reads HCCL_ASYNC_ERROR_HANDLING (default 1 per MindCluster docs)"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "initialises CUDA and raises on an NPU host"),
      C('dist.init_process_group("nccl")', "dist_backend", "replace", True, 'dist.init_process_group("hccl")',
        "NCCL backend unavailable on Ascend"),
      C('device = torch.device("cuda", local_rank)', "device_type", "replace", True,
        'device = torch.device("npu", local_rank)', "model and batches go to this device"),
      C("torch.backends.cuda.enable_flash_sdp(True)", "attention_kernel", "removal", False, None,
        "marked unsupported in Ascend's API list; a silent flag flip here, SDPA picks the NPU kernel by itself"),
      C("dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16", "device_capability_check",
        "replace", True, "dtype = torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
        "queries the CUDA device: raises or returns False on an NPU host (A2 supports bf16)"),
      C("total_mem = torch.cuda.get_device_properties(local_rank).total_memory / 2 ** 30", "device_capability_check",
        "replace", True, "total_mem = torch.npu.get_device_properties(local_rank).total_memory / 2 ** 30",
        "raises on an NPU host; NPU properties expose total_memory"),
      C('model.visual = torch.compile(model.visual, mode="max-autotune")', "compile_mode", "replace", False,
        'model.visual = torch.compile(model.visual, backend="npugraphs")',
        "opt-in; max-autotune relies on Triton/CUDA-graph tuning, NPU graph-mode support depends on the torch_npu version - unconfirmed"),
      C("pin_memory=True, drop_last=True)", "pin_memory", "replace", False,
        "pin_memory=True, pin_memory_device='npu', drop_last=True)", PIN_NOTE),
      C("optimizer = bnb.optim.AdamW8bit(", "fused_optimizer", "replace", True,
        "optimizer = torch_npu.optim.NpuFusedAdamW(params, lr=args.lr, betas=(0.9, 0.95), weight_decay=0.01)",
        "bitsandbytes 8-bit optimizers have no NPU backend (only NF4 quant in the multi-backend branch)"),
      C('with torch.autocast("cuda", dtype=dtype):', "amp", "replace", True,
        'with torch.autocast("npu", dtype=dtype):',
        "autocast('cuda') is disabled with a warning on an NPU host; the fp32 projector then meets bf16 LLM weights"),
      C("mem = torch.cuda.max_memory_allocated() / 2 ** 30", "torch_cuda_api", "replace", False,
        "mem = torch.npu.max_memory_allocated() / 2 ** 30", MAXMEM_NOTE),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", SYNC_NOTE),
  ])

# ---------------------------------------------------------------------------------------------
# Container
# ---------------------------------------------------------------------------------------------
E("dockerfile", "docker/Dockerfile", "explicit_replacement",
  "CSLR/SLT dev image (nvidia/cuda base, +cu113 torch, mmcv-full CUDA wheels, ctcdecode, sclite)", [
      C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "env_var", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "base image must carry CANN (driver is mounted from the host); CUDA base is useless on Ascend"),
      C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None, "no CUDA toolkit in the image"),
      C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6+PTX"', "env_var", "removal", False, None,
        "only steers nvcc builds"),
      C("ENV FORCE_CUDA=1", "env_var", "replace", False, "ENV FORCE_NPU=1",
        "mmcv source builds select the NPU ops with FORCE_NPU (mmcv docs, not in the knowledge base - unconfirmed)"),
      C("RUN pip install --no-cache-dir torch==1.11.0+cu113 torchvision==0.12.0+cu113 \\", "torch_cuda_api", "replace",
        True, "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10 \\",
        "+cu113 wheels are CUDA builds; torch_npu needs the matching plain torch wheel"),
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "torch_cuda_api", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "x86: CPU torch from whl/cpu per torch_npu README; aarch64 uses PyPI. With the new pin the cu113 index just has no match"),
      C("RUN pip install --no-cache-dir mmcv-full==1.5.0 \\", "custom_cuda_extension", "replace", True,
        "RUN MMCV_WITH_OPS=1 FORCE_NPU=1 pip install --no-cache-dir mmcv-full==1.7.2 \\",
        "prebuilt mmcv-full carries CUDA-compiled ops; the MMPose extraction needs an NPU build of mmcv"),
      C("-f https://download.openmmlab.com/mmcv/dist/cu113/torch1.11.0/index.html \\", "custom_cuda_extension",
        "removal", True, None, "CUDA 11.3 wheel index for mmcv ops"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=all",
        "read by the Ascend Docker Runtime instead of nvidia-container-runtime (or mount /dev/davinci* by hand)"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "nvidia-container-runtime setting, no Ascend meaning"),
  ])
