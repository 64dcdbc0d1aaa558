# Labels for probe317: sign language recognition / translation and skeleton gesture recognition,
# CUDA -> Ascend NPU (torch_npu).  One C(...) per line a careful porter would edit.
# `sub` must match exactly one line of the upstream file ("=text" = whole stripped line).

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ----------------------------------------------------------------------------------------------
# VAC / CorrNet (CSLR on PHOENIX-2014, CTC + BiLSTM, GpuDataParallel helper)
# ----------------------------------------------------------------------------------------------
E("vac_main", "main.py", "explicit_replacement",
  "VAC_CSLR / CorrNet main.py (Processor, GpuDataParallel, ctc seq training)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "entry script; torch_npu must be imported before the NPU device is used"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "torch.cuda.empty_cache() is a silent no-op when CUDA was never initialised; only frees NPU cache after the port"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
        "Module.cuda() on an NPU host raises (no CUDA driver)"),
      C("state_dict = torch.load(weight_path)", "device_type", "replace", True,
        "state_dict = torch.load(weight_path, map_location='cpu')",
        "released VAC/CorrNet checkpoints are saved from CUDA tensors (model.state_dict() of a .cuda() model); "
        "without map_location torch.load tries to restore them on cuda:0 and fails"),
      C("if len(torch.cuda.get_rng_state_all()) == len(state_dict['rng_state']['cuda']):", "torch_cuda_api", "replace", False,
        "if len(torch.npu.get_rng_state_all()) == len(state_dict['rng_state']['cuda']):",
        "returns [] on an NPU host, so RNG restore is silently skipped on resume (reproducibility only); "
        "utils.RandomState must also save/restore the npu generator"),
  ])

E("vac_device", "utils/device.py", "device_branch_or_abstraction",
  "VAC_CSLR utils/device.py GpuDataParallel", [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU,
        "helper module; the entry script already imports torch_npu, added here so the module is self-contained"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = device', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = device',
        "CUDA_VISIBLE_DEVICES is ignored by CANN: --device 2,3 would silently run on npu:0/npu:1"),
      C("output_device = self.gpu_list[0]", "device_type", "replace", True,
        'output_device = "npu:{}".format(self.gpu_list[0])',
        "a bare int index passed to .to() means a CUDA device; every data_to_device/model_to_device call goes through it"),
      C("model = nn.DataParallel(", "distributed_framework", "replace", True,
        "model = nn.parallel.DistributedDataParallel(  # DataParallel is not supported on NPU; one process per card",
        "torch.nn.DataParallel is marked unsupported in Ascend's API list (multi-card branch only)"),
      C("=torch.zeros(1).cuda()", "tensor_to_device", "replace", True, "torch.zeros(1).npu()",
        "occupy_gpu() runs at start-up; .cuda() raises on an NPU host"),
      C("=torch.zeros(1).cuda(g)", "tensor_to_device", "replace", True, "torch.zeros(1).npu(g)",
        "same, per selected card"),
  ])

E("vac_seq", "seq_scripts.py", "explicit_replacement",
  "VAC_CSLR / CorrNet seq_scripts.py (seq_train / seq_eval with native AMP)", [
      C("from torch.cuda.amp import autocast as autocast", "amp", "replace", True,
        "from torch_npu.npu.amp import autocast as autocast",
        "torch.cuda.amp.autocast warns and disables itself without CUDA: training silently runs in fp32"),
      C("from torch.cuda.amp import GradScaler", "amp", "replace", True,
        "from torch_npu.npu.amp import GradScaler",
        "CUDA GradScaler disables itself on an NPU host; with NPU autocast active, fp16 grads go unscaled"),
  ])

E("vac_decode", "utils/decode.py", "device_branch_or_abstraction",
  "VAC_CSLR utils/decode.py (ctcdecode beam search)", [
      C("return isinstance(x, torch.Tensor) and x.is_cuda", "device_type", "replace", True,
        'return isinstance(x, torch.Tensor) and x.device.type != "cpu"',
        "is_cuda is False for NPU tensors, so to_numpy() calls .numpy() on an NPU tensor and raises"),
      C("sync = torch.cuda.synchronize if logits.is_cuda else (lambda: None)", "torch_cuda_api", "add_branch", False,
        'sync = torch.npu.synchronize if logits.device.type == "npu" else (torch.cuda.synchronize if logits.is_cuda else (lambda: None))',
        "benchmark helper: on NPU the sync is skipped, only the timing is skewed (groupby forces a host sync anyway)"),
  ])

E("corrnet_bilstm", "modules/BiLSTM.py", "explicit_replacement",
  "CorrNet / VAC modules/BiLSTM.py (packed bidirectional LSTM)", [
      C("packed_emb = nn.utils.rnn.pack_padded_sequence(src_feats, src_lens.cpu())", "unsupported_op_workaround", "replace", False,
        "packed_emb = src_feats  # NPU: pack_padded_sequence listed unsupported; run padded and mask by src_lens",
        "unconfirmed: pack_padded_sequence is marked unsupported in Ascend's 2.7.1 API list and msFmkTransplt's list, "
        "but aten _pack_padded_sequence has an NPU kernel; test before rewriting (padding changes the backward direction)"),
      C("rnn_outputs, _ = nn.utils.rnn.pad_packed_sequence(packed_outputs)", "unsupported_op_workaround", "replace", False,
        "rnn_outputs = packed_outputs",
        "pairs with the pack_padded_sequence change above; same uncertainty"),
  ])

E("corrnet_resnet", "modules/resnet.py", "explicit_replacement",
  "CorrNet modules/resnet.py (Get_Correlation fp32 region)", [
      C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=False):",
        "a CUDA autocast context does not switch off NPU autocast, so the einsum affinities silently run in fp16 "
        "again (the region exists because fp16 overflows there)"),
      C("y = net(torch.randn(1, 3, 224, 224).cuda())", "tensor_to_device", "replace", False,
        "y = net(torch.randn(1, 3, 224, 224).npu())",
        "ad-hoc test() helper, not on the training path"),
  ])

E("vac_env", "environment.yml", "explicit_replacement",
  "CorrNet / VAC conda environment.yml (cudatoolkit 11.3, pytorch cuda build)", [
      C("=- nvidia", "import_torch_npu", "removal", False, None,
        "channel only serves CUDA packages"),
      C("- cudatoolkit=11.3.1", "import_torch_npu", "removal", False, None,
        "CUDA runtime libraries are useless on an Ascend host (may not even resolve on aarch64; unconfirmed)"),
      C("- pytorch=1.11.0=py3.8_cuda11.3_cudnn8.2.0_0", "import_torch_npu", "replace", True,
        "- pytorch=1.11.0=py3.8_cpu_0",
        "CUDA build string; torch_npu pairs with the CPU build of the same torch version (no CUDA build on aarch64)"),
      C("- torchvision=0.12.0=py38_cu113", "import_torch_npu", "replace", True,
        "- torchvision=0.12.0=py38_cpu",
        "cu113 build pulls the CUDA pytorch back in"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True,
        "      - torch-npu==1.11.0.post14",
        "torch_npu wheel matching torch 1.11.0 (last 1.11 line, CANN 8.0.RC2)"),
  ])

E("vac_run", "scripts/train_phoenix2014.sh", "explicit_replacement",
  "VAC / CorrNet run script for PHOENIX-2014", [
      C("=set -e", "env_var", "npu_only_addition", True, SET_ENV,
        "CANN environment (LD_LIBRARY_PATH, ASCEND_OPP_PATH, ...) must be sourced or importing torch_npu fails"),
      C("export CUDA_VISIBLE_DEVICES=${GPUS}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${GPUS}",
        "card selection is ignored on NPU; the job would land on npu:0"),
      C("export CUBLAS_WORKSPACE_CONFIG=:4096:8", "env_var", "removal", False, None,
        "cuBLAS-only determinism knob, no effect on NPU"),
      C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "device_capability_check", "replace", True,
        "npu-smi info",
        "nvidia-smi does not exist on an Ascend host and the script runs under set -e"),
  ])

# ----------------------------------------------------------------------------------------------
# TwoStream-SLR / SLRT
# ----------------------------------------------------------------------------------------------
E("ts_misc", "utils/misc.py", "explicit_replacement",
  "SLRT TwoStream-SLR utils/misc.py (init_DDP, set_seed, all_gather)", [
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
        "silent no-op on NPU; torch.manual_seed above already seeds the NPU generator (unconfirmed)"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "same"),
      C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
        "torch.use_deterministic_algorithms(True)",
        "cudnn flag is a no-op on NPU; determinism there comes from use_deterministic_algorithms (+HCCL_DETERMINISTIC)"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "raises without CUDA"),
      C("torch.distributed.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
        "torch.distributed.init_process_group(backend='hccl', init_method='env://')",
        "NCCL is not available on Ascend"),
      C("device = torch.device('cuda:{}'.format(local_rank))", "device_type", "replace", True,
        "device = torch.device('npu:{}'.format(local_rank))",
        "cfg['device'] drives move_to_device for every batch"),
      C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
        'tensor = torch.ByteTensor(storage).to("npu")',
        "HCCL all_gather needs NPU tensors; .to('cuda') raises"),
      C('local_size = torch.tensor([tensor.numel()], device="cuda")', "device_type", "replace", True,
        'local_size = torch.tensor([tensor.numel()], device="npu")', "same"),
      C('size_list = [torch.tensor([0], device="cuda") for _ in range(world_size)]', "device_type", "replace", True,
        'size_list = [torch.tensor([0], device="npu") for _ in range(world_size)]', "same"),
      C('tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="cuda"))', "device_type", "replace", True,
        'tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="npu"))', "same"),
      C('padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="cuda")', "device_type", "replace", True,
        'padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="npu")', "same"),
  ])

E("ts_training", "training.py", "explicit_replacement",
  "SLRT TwoStream-SLR training.py (DDP, GradScaler, checkpoint resume)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "entry script launched by torch.distributed.launch"),
      C("pretrained = torch.load(cfg['training']['load_ckpt'], map_location='cuda')['model_state']", "device_type", "replace", True,
        "pretrained = torch.load(cfg['training']['load_ckpt'], map_location='cpu')['model_state']",
        "map_location='cuda' raises on an NPU host"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=use_amp)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=use_amp)",
        "with training.amp on, the CUDA scaler disables itself and fp16 grads go unscaled"),
      C("state_dict = torch.load(latest_ckpt, 'cuda:{:d}'.format(cfg['local_rank']))", "device_type", "replace", True,
        "state_dict = torch.load(latest_ckpt, 'npu:{:d}'.format(cfg['local_rank']))",
        "resume path; cuda map_location raises"),
      C("torch.cuda.get_device_name(cfg['local_rank'])", "torch_cuda_api", "replace", True,
        "logger.info('Training on {} NPU(s), {}'.format(cfg['world_size'], torch.npu.get_device_name(cfg['local_rank'])))",
        "get_device_name initialises CUDA and raises"),
      C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=use_amp):",
        "CUDA autocast silently disabled on NPU when amp is on"),
      C("mem = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
        "mem = torch.npu.max_memory_allocated() / 1024 ** 3",
        "returns 0 without CUDA (log value only)"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats()",
        "resolves the current CUDA device and raises, unlike max_memory_allocated"),
      C("state_dict = torch.load(load_model_path, map_location='cuda')", "device_type", "replace", True,
        "state_dict = torch.load(load_model_path, map_location='npu')",
        "final test after training"),
  ])

E("ts_prediction", "prediction.py", "explicit_replacement",
  "SLRT TwoStream-SLR prediction.py (evaluation with timing)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "standalone entry script (python prediction.py --config ...)"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA; also needed for correct NPU timing"),
      C("torch.cuda.synchronize()  # wait for the forward kernels before timing", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for the forward kernels before timing", "same"),
      C("cfg['device'] = torch.device('cuda')", "device_type", "replace", True,
        "cfg['device'] = torch.device('npu')", "batches are moved to cfg['device']"),
      C("state_dict = torch.load(load_model_path, map_location='cuda')", "device_type", "replace", True,
        "state_dict = torch.load(load_model_path, map_location='cpu')", "cuda map_location raises"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "raises without CUDA"),
  ])

E("ts_shell", "scripts/run_s2g.sh", "explicit_replacement",
  "SLRT TwoStream-SLR multi-GPU launcher (torch.distributed.launch)", [
      C("MASTER_PORT=${MASTER_PORT:-29999}", "env_var", "npu_only_addition", True, SET_ENV,
        "CANN environment must be sourced before python imports torch_npu"),
      C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
        "a user-chosen subset of cards is silently ignored on NPU"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
        "NCCL logging knob, ignored by HCCL; CANN log level is the nearest equivalent"),
      C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
        "no HCCL counterpart (RoCE is the default), harmless"),
      C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=eth0",
        "multi-node runs: HCCL ignores NCCL_SOCKET_IFNAME and auto-picks a host NIC; a wrong pick breaks link setup"),
      C("CUDA_VISIBLE_DEVICES=0 python -m torch.distributed.launch --nproc_per_node=1 --use_env \\", "env_var", "replace", False,
        "ASCEND_RT_VISIBLE_DEVICES=0 python -m torch.distributed.launch --nproc_per_node=1 --use_env \\",
        "single-process evaluation would use card 0 anyway"),
  ])

E("ts_docker", "docker/Dockerfile", "explicit_replacement",
  "SLRT development Dockerfile (nvidia/cuda base, cu113 wheels, mmcv-full)", [
      C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "env_var", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "base image must carry CANN (driver mounted from the host) instead of CUDA/cuDNN"),
      C("RUN pip install torch==1.11.0+cu113 torchvision==0.12.0+cu113 torchaudio==0.11.0 \\", "import_torch_npu", "replace", True,
        "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10 \\",
        "+cu113 wheels are CUDA builds; torch_npu needs the matching CPU torch (and 1.11 is EOL for torch_npu)"),
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index"),
      C("RUN pip install mmcv-full==1.5.0 -f https://download.openmmlab.com/mmcv/dist/cu113/torch1.11.0/index.html && \\",
        "custom_cuda_extension", "replace", True,
        "RUN MMCV_WITH_OPS=1 FORCE_NPU=1 pip install mmcv==2.1.0 && \\",
        "prebuilt mmcv-full wheel contains CUDA ops built for torch 1.11+cu113; its _ext cannot load with torch_npu"),
      C('ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0 7.5 8.0 8.6+PTX"', "env_var", "removal", False, None,
        "only used by nvcc extension builds"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
        "NVIDIA container runtime variable; NPUs are mounted by the Ascend Docker Runtime / --device /dev/davinciN"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container runtime only"),
  ])

# ----------------------------------------------------------------------------------------------
# Sign Language Transformers (joeynmt-based signjoey)
# ----------------------------------------------------------------------------------------------
E("slt_batch", "signjoey/batch.py", "explicit_replacement",
  "neccam/slt signjoey/batch.py (_make_cuda)", [
      C("self.sgn = self.sgn.cuda()", "tensor_to_device", "replace", True, "self.sgn = self.sgn.npu()",
        "use_cuda is true in the shipped configs; .cuda() raises on an NPU host"),
      C("self.sgn_mask = self.sgn_mask.cuda()", "tensor_to_device", "replace", True, "self.sgn_mask = self.sgn_mask.npu()", "same"),
      C("self.txt = self.txt.cuda()", "tensor_to_device", "replace", True, "self.txt = self.txt.npu()", "same"),
      C("self.txt_mask = self.txt_mask.cuda()", "tensor_to_device", "replace", True, "self.txt_mask = self.txt_mask.npu()", "same"),
      C("self.txt_input = self.txt_input.cuda()", "tensor_to_device", "replace", True, "self.txt_input = self.txt_input.npu()", "same"),
  ])

E("slt_helpers", "signjoey/helpers.py", "explicit_replacement",
  "neccam/slt signjoey/helpers.py (set_seed, load_checkpoint)", [
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "False on NPU, so the block below is skipped; torch.manual_seed already seeds the NPU (unconfirmed)"),
      C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
        "torch.use_deterministic_algorithms(True)", "cudnn flag is a no-op on NPU"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "silent no-op on NPU"),
      C('checkpoint = torch.load(path, map_location="cuda" if use_cuda else "cpu")', "device_type", "replace", True,
        'checkpoint = torch.load(path, map_location="npu" if use_cuda else "cpu")',
        "use_cuda comes from the yaml (true); map_location='cuda' raises"),
  ])

E("slt_training", "signjoey/training.py", "explicit_replacement",
  "neccam/slt signjoey/training.py (TrainManager, use_cuda, DataParallel)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "training entry (python -m signjoey train / __main__ here)"),
      C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
        "torch.use_deterministic_algorithms(True)", "cudnn flag is a no-op on NPU"),
      C('self.use_cuda = train_config["use_cuda"] and torch.cuda.is_available()', "torch_cuda_api", "replace", True,
        'self.use_cuda = train_config["use_cuda"] and torch.npu.is_available()',
        "False on an NPU host: training silently falls back to the CPU"),
      C("self.n_gpu = torch.cuda.device_count() if self.use_cuda else 0", "torch_cuda_api", "replace", False,
        "self.n_gpu = torch.npu.device_count() if self.use_cuda else 0",
        "returns 0 on NPU, which only means single-card training (DataParallel is unsupported anyway)"),
      C("=self.model.cuda()", "tensor_to_device", "replace", True, "self.model.npu()", "raises without CUDA"),
      C("self.translation_loss_function.cuda()", "tensor_to_device", "replace", False,
        "self.translation_loss_function.npu()",
        "XentLoss holds no parameters or buffers, so Module.cuda() touches nothing and does not fail"),
      C("self.recognition_loss_function.cuda()", "tensor_to_device", "replace", False,
        "self.recognition_loss_function.npu()", "CTCLoss has no tensors; silent no-op"),
      C("self.model = torch.nn.DataParallel(self.model)", "distributed_framework", "replace", True,
        "self.model = self.model  # DataParallel unsupported on NPU; use DDP (one process per card) for multi-card",
        "torch.nn.DataParallel is unsupported on NPU (reached once device_count is ported)"),
      C("self.model = self.model.cuda()", "tensor_to_device", "replace", True, "self.model = self.model.npu()",
        "after loading a checkpoint"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu_id',
        "--gpu_id would be ignored; set before torch_npu initialises the device"),
  ])

E("slt_prediction", "signjoey/prediction.py", "explicit_replacement",
  "neccam/slt signjoey/prediction.py (validate_on_data, test)", [
      C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
        "torch.use_deterministic_algorithms(True)", "cudnn flag is a no-op on NPU"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "raises without CUDA"),
      C("=recognition_loss_function.cuda()", "tensor_to_device", "replace", False, "recognition_loss_function.npu()",
        "CTCLoss has no tensors; silent no-op"),
      C("=translation_loss_function.cuda()", "tensor_to_device", "replace", False, "translation_loss_function.npu()",
        "XentLoss has no tensors; silent no-op"),
  ])

# ----------------------------------------------------------------------------------------------
# ST-GCN / MS-G3D / CTR-GCN / Shift-GCN skeleton trainers
# ----------------------------------------------------------------------------------------------
E("stgcn_io", "torchlight/io.py", "explicit_replacement",
  "ST-GCN torchlight/io.py (IO, visible_gpu, occupy_gpu)", [
      C("os.environ['CUDA_VISIBLE_DEVICES'] = ','.join(list(map(str, gpus)))", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = ','.join(list(map(str, gpus)))",
        "--device 2 3 would be ignored on NPU"),
      C("=torch.zeros(1).cuda()", "tensor_to_device", "replace", True, "torch.zeros(1).npu()", "raises without CUDA"),
      C("=torch.zeros(1).cuda(g)", "tensor_to_device", "replace", True, "torch.zeros(1).npu(g)", "same"),
      C("return torch.cuda.max_memory_allocated(device) / 1024.0 / 1024.0", "torch_cuda_api", "replace", False,
        "return torch.npu.max_memory_allocated(device) / 1024.0 / 1024.0",
        "returns 0 without CUDA (log value only)"),
  ])

E("stgcn_processor", "processor/processor.py", "explicit_replacement",
  "ST-GCN processor/processor.py (self.dev, DataParallel)", [
      C('self.dev = "cuda:0"', "device_type", "replace", True, 'self.dev = "npu:0"',
        "all model/data moves go through self.dev"),
      C("self.model = nn.DataParallel(self.model, device_ids=self.gpus)", "distributed_framework", "replace", True,
        "self.model = nn.parallel.DistributedDataParallel(self.model, device_ids=[self.gpus[0]])  # one process per NPU",
        "DataParallel unsupported on NPU (multi-card runs)"),
  ])

E("msg3d_main", "main.py", "explicit_replacement",
  "MS-G3D main.py (apex amp, DataParallel, .cuda(output_device))", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "silent no-op on NPU"),
      C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
        "torch.use_deterministic_algorithms(True)", "cudnn flag is a no-op on NPU"),
      C("opt_level=f'O{self.arg.amp_opt_level}'", "amp", "replace", False,
        "opt_level=f'O{self.arg.amp_opt_level}', loss_scale=128.0, combine_grad=True",
        "apex.amp is kept: Ascend's apex patch implements amp.initialize/scale_loss on NPU (install it instead of "
        "NVIDIA apex); combine_grad is an NPU-only speed-up"),
      C("self.model = nn.DataParallel(", "distributed_framework", "replace", True,
        "self.model = nn.parallel.DistributedDataParallel(  # DataParallel unsupported on NPU",
        "multi-card branch"),
      C("self.model = Model(**self.arg.model_args).cuda(output_device)", "tensor_to_device", "replace", True,
        "self.model = Model(**self.arg.model_args).npu(output_device)", "raises without CUDA"),
      C("self.loss = nn.CrossEntropyLoss().cuda(output_device)", "tensor_to_device", "replace", False,
        "self.loss = nn.CrossEntropyLoss().npu(output_device)",
        "CrossEntropyLoss without class weights has no tensors; Module.cuda() is a silent no-op"),
      C("v.cuda(output_device)] for k, v in weights.items()])", "tensor_to_device", "replace", True,
        "v.npu(output_device)] for k, v in weights.items()])", "raises without CUDA"),
      C("self.optimizer.load_state_dict(torch.load(self.arg.checkpoint)['optimizer_states'])", "device_type", "replace", True,
        "self.optimizer.load_state_dict(torch.load(self.arg.checkpoint, map_location='cpu')['optimizer_states'])",
        "checkpoint holds SGD momentum buffers saved from CUDA; loading without map_location fails"),
      C("scheduler_states = torch.load(self.arg.checkpoint)['lr_scheduler_states']", "device_type", "replace", True,
        "scheduler_states = torch.load(self.arg.checkpoint, map_location='cpu')['lr_scheduler_states']",
        "same file is deserialised in full, including the CUDA optimizer tensors"),
      C("data = data.float().cuda(self.output_device)", "tensor_to_device", "replace", True,
        "data = data.float().npu(self.output_device)", "raises without CUDA"),
      C("label = label.long().cuda(self.output_device)", "tensor_to_device", "replace", True,
        "label = label.long().npu(self.output_device)", "same"),
      C("self.model = self.model.cuda(self.output_device)", "tensor_to_device", "replace", True,
        "self.model = self.model.npu(self.output_device)", "eval path"),
      C("data, label = data.float().cuda(self.output_device), label.long().cuda(self.output_device)", "tensor_to_device", "replace", True,
        "data, label = data.float().npu(self.output_device), label.long().npu(self.output_device)", "eval path"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA"),
  ])

E("ctrgcn_model", "model/ctrgcn.py", "device_branch_or_abstraction",
  "CTR-GCN model/ctrgcn.py (unit_gcn with non-adaptive A)", [
      C("A = self.A.cuda(x.get_device())", "tensor_to_device", "replace", True, "A = self.A.to(x.device)",
        "adaptive=False branch; x.get_device() is an NPU index and .cuda() raises"),
  ])

E("shift_setup", "model/Temporal_shift/setup.py", "kernel_rewrite",
  "Shift-GCN model/Temporal_shift/setup.py (CUDAExtension shift_cuda)", [
      C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", False,
        "from torch_npu.utils.cpp_extension import NpuExtension; from torch.utils.cpp_extension import BuildExtension",
        "the import itself works; the rewritten build needs NpuExtension"),
      C("CUDAExtension('shift_cuda', [", "custom_cuda_extension", "replace", True, "NpuExtension('shift_npu', [",
        "CUDAExtension needs CUDA_HOME/nvcc and fails on an Ascend host"),
      C("'cuda/shift_cuda_kernel.cu',", "custom_cuda_extension", "replace", True, "'npu/shift_npu_kernel.cpp',",
        "the .cu kernel must be rewritten (Ascend C / torch ops)"),
      C("'nvcc': ['-O3', '--use_fast_math']}),", "custom_cuda_extension", "replace", False, "}),",
        "nvcc flags have no meaning for the NPU build"),
  ])

E("shift_op", "model/Temporal_shift/cuda/shift.py", "kernel_rewrite",
  "Shift-GCN Temporal_shift/cuda/shift.py (autograd Function over shift_cuda)", [
      C("=import shift_cuda", "custom_cuda_extension", "replace", True, "import shift_npu",
        "the nvcc-built module cannot exist on an NPU host"),
      C("output = shift_cuda.forward(input, xpos, ypos, stride)", "custom_cuda_extension", "replace", True,
        "output = shift_npu.forward(input, xpos, ypos, stride)", "call site of the CUDA kernel"),
      C("grad_input, grad_xpos, grad_ypos = shift_cuda.backward(", "custom_cuda_extension", "replace", True,
        "grad_input, grad_xpos, grad_ypos = shift_npu.backward(grad_output, input, output, xpos, ypos, ctx.stride)",
        "call site of the CUDA kernel"),
      C("self.xpos = nn.Parameter(torch.zeros(channel, requires_grad=True, device='cuda') * 1.5)", "device_type", "replace", True,
        "self.xpos = nn.Parameter(torch.zeros(channel, requires_grad=True, device='npu') * 1.5)",
        "parameter created directly on CUDA at model build time"),
      C("self.ypos = nn.Parameter(torch.zeros(channel, requires_grad=True, device='cuda') * 1.5)", "device_type", "replace", True,
        "self.ypos = nn.Parameter(torch.zeros(channel, requires_grad=True, device='npu') * 1.5)", "same"),
      C("x = torch.randn(2, 8, 16, 25, device='cuda', requires_grad=True)", "device_type", "replace", False,
        "x = torch.randn(2, 8, 16, 25, device='npu', requires_grad=True)", "self-test under __main__ only"),
  ])

E("shift_gcn", "model/shift_gcn.py", "explicit_replacement",
  "Shift-GCN model/shift_gcn.py (parameters created with device='cuda')", [
      C("self.Linear_weight = nn.Parameter(torch.zeros(in_channels, out_channels, requires_grad=True, device='cuda'), requires_grad=True)",
        "device_type", "replace", True,
        "self.Linear_weight = nn.Parameter(torch.zeros(in_channels, out_channels, requires_grad=True, device='npu'), requires_grad=True)",
        "model construction allocates on CUDA and fails"),
      C("self.Linear_bias = nn.Parameter(torch.zeros(1, 1, out_channels, requires_grad=True, device='cuda'), requires_grad=True)",
        "device_type", "replace", True,
        "self.Linear_bias = nn.Parameter(torch.zeros(1, 1, out_channels, requires_grad=True, device='npu'), requires_grad=True)",
        "same"),
      C("self.Feature_Mask = nn.Parameter(torch.ones(1, num_point, in_channels, requires_grad=True, device='cuda'), requires_grad=True)",
        "device_type", "replace", True,
        "self.Feature_Mask = nn.Parameter(torch.ones(1, num_point, in_channels, requires_grad=True, device='npu'), requires_grad=True)",
        "same"),
  ])

E("skel_sh", "scripts/train_ntu120.sh", "explicit_replacement",
  "MS-G3D / CTR-GCN 4-stream training + ensemble script", [
      C("=set -euo pipefail", "env_var", "npu_only_addition", True,
        "set +u; " + SET_ENV + "; set -u",
        "CANN env must be sourced; newer set_env.sh trips over set -u (unbound CMAKE_PREFIX_PATH)"),
      C("nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits \\", "device_capability_check", "replace", True,
        "npu-smi info -l | awk '/NPU ID/{print $NF\",0\"}' \\",
        "nvidia-smi is missing on an Ascend host; with set -e/pipefail the device pick aborts the script"),
      C("export CUDA_LAUNCH_BLOCKING=${DEBUG:-0}", "env_var", "replace", False,
        "export ASCEND_LAUNCH_BLOCKING=${DEBUG:-0}", "debug-only synchronous launch knob"),
  ])

# ----------------------------------------------------------------------------------------------
# Pose ISLR, MMPose keypoints, SignBERT, warp-ctc CSLR, LLM-based SLT, gesture demo
# ----------------------------------------------------------------------------------------------
E("islr_train", "train_islr.py", "explicit_replacement",
  "pose-based ISLR trainer (torchrun DDP, torch.autocast, TF32, torch.compile)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("torch.backends.cuda.matmul.allow_tf32 = True", "torch_cuda_api", "replace", False,
        "torch.npu.matmul.allow_hf32 = True",
        "TF32 switch does nothing on NPU; HF32 is the NPU analogue (precision trade-off; unconfirmed)"),
      C("torch.backends.cudnn.allow_tf32 = True", "torch_cuda_api", "replace", False,
        "torch.npu.conv.allow_hf32 = True", "same, for convolutions (unconfirmed)"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
      C('dist.init_process_group(backend="nccl", init_method=args.dist_url,', "dist_backend", "replace", True,
        'dist.init_process_group(backend="hccl", init_method=args.dist_url,', "NCCL unavailable"),
      C('with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=args.amp):', "amp", "replace", True,
        'with torch.autocast(device_type="npu", dtype=amp_dtype, enabled=args.amp):',
        "cuda autocast is disabled (with a warning) on an NPU host: silently fp32"),
      C("mem = torch.cuda.max_memory_reserved() / 2 ** 30", "torch_cuda_api", "replace", False,
        "mem = torch.npu.max_memory_reserved() / 2 ** 30", "log value only, 0 without CUDA"),
      C('device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
        'device = torch.device("npu", args.local_rank)', "model and batches are moved to it"),
      C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", False,
        'model = torch.compile(model, backend="npugraphs")',
        "optional --compile path; max-autotune tunes Triton GPU kernels, NPU Inductor support depends on the "
        "torch_npu version (unconfirmed which mode works)"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp and not args.bf16)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=args.amp and not args.bf16)",
        "CUDA scaler disables itself on NPU; fp16 grads unscaled"),
  ])

E("mmpose_extract", "tools/extract_keypoints.py", "explicit_replacement",
  "HRNet whole-body keypoint extraction with MMDet + MMPose 0.x (TwoStream-SLR / SignBERT preprocessing)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "entry script; needed before init_detector/init_pose_model receive an npu device"),
      C("parser.add_argument('--device', default='cuda:0', help='Device used for inference')", "device_type", "replace", True,
        "parser.add_argument('--device', default='npu:0', help='Device used for inference')",
        "default device string feeds init_detector / init_pose_model"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA"),
      C("f'gpu mem {torch.cuda.memory_allocated() / 2 ** 30:.1f}G')", "torch_cuda_api", "replace", False,
        "f'npu mem {torch.npu.memory_allocated() / 2 ** 30:.1f}G')", "log value only"),
  ])

E("signbert_pretrain", "pretrain.py", "transfer_to_npu",
  "SignBERT hand-pose pre-training (MANO, DDP, apex FusedAdam, NVTX)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu; from torch_npu.contrib import transfer_to_npu",
        "automatic migration covers .cuda(), torch.cuda.amp, set_device and backend='nccl' in this file"),
      C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", False,
        "from torch_npu.optim import NpuFusedAdamW as FusedAdam",
        "guarded import: without apex the code falls back to torch AdamW, so only performance is at stake"),
      C("optimizer = FusedAdam(params, lr=cfg['train']['lr'], betas=(0.9, 0.98),", "fused_optimizer", "replace", False,
        "optimizer = FusedAdam(params, lr=cfg['train']['lr'], betas=(0.9, 0.98),  # NpuFusedAdamW",
        "NVIDIA FusedAdam needs its CUDA extension; NpuFusedAdamW is the tensor-fused NPU optimizer"),
      C("weight_decay=cfg['train']['wd'], adam_w_mode=True)", "fused_optimizer", "replace", False,
        "weight_decay=cfg['train']['wd'])", "NpuFusedAdamW has no adam_w_mode argument"),
      C("if dist.get_backend() == 'nccl':", "dist_backend", "replace", False,
        "if dist.get_backend() in ('nccl', 'hccl'):",
        "transfer_to_npu does not rewrite backend comparisons; returns 'hccl' so the fp16 comm hook is silently "
        "skipped (performance only; fp16_compress_hook on HCCL unconfirmed)"),
      C("torch.cuda.nvtx.range_push('step{}'.format(step))", "torch_cuda_api", "replace", True,
        "rid = torch_npu.npu.mstx.range_start('step{}'.format(step))",
        "torch.cuda.nvtx is not aliased by transfer_to_npu and needs a CUDA build (--profile only)"),
      C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True,
        "torch_npu.npu.mstx.range_end(rid)", "same"),
  ])

E("warpctc_user", "cslr/criterion.py", "explicit_replacement",
  "CNN-BLSTM CSLR criterion using SeanNaren warp-ctc", [
      C("from warpctc_pytorch import CTCLoss as WarpCTCLoss", "custom_cuda_extension", "replace", True,
        "WarpCTCLoss = None  # warp-ctc has only CPU/CUDA kernels; use torch.nn.CTCLoss on NPU",
        "a CPU build of warpctc_pytorch would receive NPU tensors (is_cuda is False) and run cpu_ctc on device "
        "pointers; forcing the builtin CTC (NPU kernel) is the port"),
  ])

E("sign_llm", "models/sign_llm.py", "explicit_replacement",
  "gloss-free SLT with a LoRA LLM (Sign2GPT / SignLLM style: flash-attn, SDPA backend pinning, bf16)", [
      C("if torch.cuda.is_available() and torch.cuda.is_bf16_supported():", "device_capability_check", "replace", True,
        "if torch.npu.is_available() and torch.npu.is_bf16_supported():",
        "False on NPU: the 7B LLM silently trains in fp16 instead of bf16"),
      C("out = flash_attn_varlen_func(q_u, k_u, v_u, cu_q, cu_q, max_q, max_q, dropout_p=drop)", "attention_kernel", "replace", False,
        'out = torch_npu.npu_fusion_attention(q_u, k_u, v_u, self.heads, "TND", keep_prob=1 - drop, '
        'scale=self.head_dim ** -0.5, actual_seq_qlen=cu_q[1:].tolist(), actual_seq_kvlen=cu_q[1:].tolist())[0]',
        "flash_attn import is guarded and the SDPA path runs instead; NPU varlen FA is a performance port"),
      C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):",
        "attention_kernel", "replace", False,
        "with nullcontext():  # SDPA dispatches to the NPU fused attention by itself",
        "torch.backends.cuda.sdp_kernel is unsupported in Ascend's list; whether it errors or is ignored is unconfirmed"),
      C('attn_implementation="flash_attention_2",', "attention_kernel", "replace", True,
        'attn_implementation="sdpa",',
        "transformers refuses flash_attention_2 without the flash-attn package, which cannot be installed on NPU"),
      C('device_map={"": torch.cuda.current_device()},', "torch_cuda_api", "replace", True,
        'device_map={"": "npu:{}".format(torch.npu.current_device())},',
        "torch.cuda.current_device() raises without CUDA"),
      C('with torch.autocast("cuda", dtype=self.dtype):', "amp", "replace", True,
        'with torch.autocast("npu", dtype=self.dtype):', "cuda autocast silently disabled on NPU"),
      C('with torch.autocast(device_type="cuda", dtype=self.dtype):', "amp", "replace", True,
        'with torch.autocast(device_type="npu", dtype=self.dtype):', "same, generation path"),
  ])

E("gesture_demo", "demo/realtime_gesture.py", "device_branch_or_abstraction",
  "real-time MediaPipe + skeleton-GCN gesture demo with ONNX export and latency benchmark", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu  # noqa: F401",
        "needed for the npu device (the demo's --device auto then finds it)"),
      C('return torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "add_branch", True,
        'return torch.device("npu" if hasattr(torch, "npu") and torch.npu.is_available() else ("cuda" if torch.cuda.is_available() else "cpu"))',
        "--device auto silently picks the CPU on an Ascend host"),
      C('if fp16 and device.type == "cuda":', "device_type", "add_branch", False,
        'if fp16 and device.type in ("cuda", "npu"):', "fp16 silently skipped on NPU (performance only)"),
      C("starter, ender = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "starter, ender = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)",
        "--bench path; CUDA events cannot be created without CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "--bench path"),
      C('providers = ["CUDAExecutionProvider", "CPUExecutionProvider"]', "device_type", "replace", False,
        'providers = ["CANNExecutionProvider", "CPUExecutionProvider"]',
        "onnxruntime falls back to CPU with a warning; the CANN provider needs an onnxruntime-cann build (unconfirmed)"),
  ])

E("llm_req", "requirements.txt", "explicit_replacement",
  "requirements of a 2024 LLM-based SLT / pose ISLR repo (cu121 index, flash-attn, xformers)", [
      C("--extra-index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "Ascend installs CPU torch on x86; whether torch_npu rejects a CUDA torch build is unconfirmed"),
      C("=torch==2.1.2", "import_torch_npu", "replace", True, "torch==2.1.0",
        "torch_npu wheels exist for 2.1.0 (.postN), not 2.1.2; versions must match exactly"),
      C("=torchvision==0.16.2", "import_torch_npu", "replace", True, "torchvision==0.16.0",
        "torchvision 0.16.2 pins torch==2.1.2"),
      C("=numpy==1.26.4", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
        "the Ascend adapter itself"),
      C("=flash-attn==2.5.6", "attention_kernel", "removal", True, None,
        "cannot be built/installed without CUDA, breaks pip install -r"),
      C("=xformers==0.0.23.post1", "attention_kernel", "removal", True, None,
        "CUDA-only wheels pinned to torch 2.1.2; no NPU backend"),
      C("=onnxruntime-gpu==1.17.1", "custom_cuda_extension", "replace", False, "onnxruntime==1.17.1",
        "CUDA build of onnxruntime; demo falls back to CPU (no aarch64 wheel for -gpu, unconfirmed)"),
  ])
