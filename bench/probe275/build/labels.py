# Labels for probe275 (clinical time-series / EHR deep learning, CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit. See README.md for the policy.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: torch_npu must be imported explicitly for torch_npu < 2.5.1 "
               "(autoload only from 2.5.1, still recommended)")
SEED_NOTE = ("torch.cuda.manual_seed* is a lazy no-op on a host without CUDA; the NPU generator needs "
             "torch.npu.manual_seed* (torch.manual_seed may already cover the privateuse1 device - unconfirmed)")
PIN_NOTE = ("pin_memory without pin_memory_device pins for CUDA; on an NPU host it is silently dropped or pins "
            "for the wrong device depending on the torch version - perf only, unconfirmed")
AMP_NOTE = ("torch.cuda.amp autocast/GradScaler silently disable themselves when CUDA is unavailable, so mixed "
            "precision is lost on NPU; torch.npu.amp (or torch.amp with device_type='npu') is the supported form")

# ---------------------------------------------------------------------------------------------
# MIMIC-III benchmarks, PyTorch port
# ---------------------------------------------------------------------------------------------
E("m3b_ihm_main", "mimic3models/in_hospital_mortality/torch/main.py", "explicit_replacement",
  "YerevaNN mimic3-benchmarks, PyTorch port of the in-hospital-mortality LSTM main.py (args.cuda idiom)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("args.cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "args.cuda = not args.no_cuda and torch.npu.is_available()",
      "False on an NPU host -> whole run silently falls back to CPU"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(args.seed)", SEED_NOTE),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)", "reached once args.cuda means 'NPU available'; torch.cuda.set_device raises without CUDA"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda() fails on an NPU host"),
    C("num_workers=args.num_workers, pin_memory=args.cuda, drop_last=False)", "pin_memory", "replace", False,
      "num_workers=args.num_workers, pin_memory=args.cuda, pin_memory_device='npu', drop_last=False)", PIN_NOTE),
    C("x = x.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "x = x.npu(non_blocking=True)",
      "Tensor.cuda() fails on an NPU host"),
    C("x, y = x.cuda(), y.cuda()", "tensor_to_device", "replace", True, "x, y = x.npu(), y.npu()",
      "Tensor.cuda() fails on an NPU host"),
])

E("m3b_lstm", "mimic3models/torch/lstm.py", "explicit_replacement",
  "mimic3-benchmarks PyTorch LSTM / channel-wise LSTM baselines (init_hidden with .cuda())", [
    C("h0, c0 = h0.cuda(), c0.cuda()", "tensor_to_device", "replace", True,
      "h0, c0 = h0.npu(), c0.npu()", "use_cuda is args.cuda, i.e. True on NPU after the port; .cuda() fails"),
    C("packed = pack_padded_sequence(out, lengths.cpu(), batch_first=True, enforce_sorted=False)",
      "unsupported_op_workaround", "replace", False,
      "out = out * (torch.arange(out.size(1), device=out.device)[None, :] < lengths.to(out.device)[:, None]).unsqueeze(-1).to(out.dtype)",
      "pack_padded_sequence is marked unsupported in Ascend's 2.7.1 API list and msFmkTransplt's list, but aten "
      "_pack_padded_sequence has an NPU kernel in op-plugin; whether it fails is unconfirmed - masking is the safe rewrite"),
    C("out, _ = pad_packed_sequence(packed_out, batch_first=True, total_length=x.size(1))",
      "unsupported_op_workaround", "replace", False,
      "out, _ = self.encoder(out, hidden)",
      "pair of the pack_padded_sequence rewrite (pad_packed_sequence also marked unsupported; unconfirmed)"),
])

E("m3b_decomp_main", "mimic3models/decompensation/torch/main.py", "explicit_replacement",
  "mimic3-benchmarks PyTorch decompensation main.py (torch.cuda.FloatTensor dtype idiom, BatchGen)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("dtype = torch.cuda.FloatTensor if args.cuda else torch.FloatTensor", "torch_cuda_api", "replace", True,
      "dtype = torch.npu.FloatTensor if args.cuda else torch.FloatTensor",
      "legacy CUDA tensor type; .type(torch.cuda.FloatTensor) fails without CUDA"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises on a host without CUDA when --cuda is given"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without an initialised CUDA context; NPU cache is not released"),
])

E("m3b_torch_utils", "mimic3models/torch/utils.py", "device_branch_or_abstraction",
  "mimic3-benchmarks PyTorch helpers: get_device(), set_seed(), batch_to_numpy(), print_gpu_memory()", [
    C("if use_cuda and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if use_cuda and torch.npu.is_available():", "helper silently returns CPU on an NPU host"),
    C("return torch.device('cuda:{}'.format(gpu_id))", "device_type", "replace", True,
      "return torch.device('npu:{}'.format(gpu_id))", "cuda device string"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)", SEED_NOTE),
    C("if t.is_cuda:", "device_type", "replace", True, "if t.device.type != 'cpu':",
      "is_cuda is False for NPU tensors, so the else branch calls .numpy() on an NPU tensor and raises"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if not torch.npu.is_available():", "memory logging silently skipped on NPU"),
    C("alloc = torch.cuda.memory_allocated() / 1024 ** 2", "torch_cuda_api", "replace", False,
      "alloc = torch.npu.memory_allocated() / 1024 ** 2", "logging only"),
    C("peak = torch.cuda.max_memory_allocated() / 1024 ** 2", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated() / 1024 ** 2", "logging only"),
])

E("m3b_run_sh", "scripts/run_torch_baselines.sh", "explicit_replacement",
  "mimic3-benchmarks shell launcher for the four tasks (CUDA_VISIBLE_DEVICES, nvidia-smi)", [
    C("set -euo pipefail", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (LD_LIBRARY_PATH, ASCEND_*) must be sourced before torch_npu can load"),
    C("export CUDA_VISIBLE_DEVICES=$GPU", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=$GPU",
      "user-selected device is silently ignored on NPU"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info | tee \"$LOGDIR/npu.txt\"", "nvidia-smi is absent; with set -e/pipefail the script aborts"),
    C("CUDA_VISIBLE_DEVICES=${DECOMP_GPU:-$GPU} python -um mimic3models.decompensation.torch.main", "env_var",
      "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${DECOMP_GPU:-$GPU} python -um mimic3models.decompensation.torch.main \\",
      "per-task device selection silently ignored on NPU"),
])

E("m3b_env", "environment.yml", "explicit_replacement",
  "mimic3-benchmarks conda environment.yml (pytorch + cudatoolkit channels)", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None, "CUDA channel; harmless but useless on NPU"),
    C("=- pytorch=1.12.1", "torch_cuda_api", "replace", True, "- pytorch=2.1.0=*cpu*",
      "no torch_npu release pairs with torch 1.12.1 (1.11.0 / 2.1.0 exist); CPU build + torch-npu"),
    C("=- cudatoolkit=11.3", "torch_cuda_api", "removal", False, None,
      "CUDA runtime not used on NPU; whether it even resolves on aarch64 is unconfirmed"),
    C("=- cudnn=8.2", "torch_cuda_api", "removal", False, None, "cuDNN not used on NPU"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post10",
      "torch_npu wheel pinned to the torch version (x.y.z must match)"),
    C("=- tensorflow-gpu==2.6.2", "torch_cuda_api", "removal", False, None,
      "Keras baselines only (outside the torch port); tensorflow-gpu has no NPU support"),
])

# ---------------------------------------------------------------------------------------------
# GRU-D
# ---------------------------------------------------------------------------------------------
E("grud_model", "models/grud.py", "explicit_replacement",
  "GRU-D PyTorch implementation (zhiyongc-style, use_gpu = torch.cuda.is_available() in __init__)", [
    C("=use_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_gpu = torch.npu.is_available()",
      "False on NPU -> the filter matrix stays on CPU while weights move to NPU -> device mismatch in forward"),
    C("self.filter_square_matrix = Variable(filter_square_matrix.cuda(), requires_grad=False)", "tensor_to_device",
      "replace", True, "self.filter_square_matrix = Variable(filter_square_matrix.npu(), requires_grad=False)",
      ".cuda() fails on NPU host"),
    C("self.use_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "self.use_gpu = torch.npu.is_available()",
      "identity/zeros/X_mean are plain attributes (not buffers): left on CPU they mismatch the NPU model"),
    C("self.identity = torch.eye(input_size).cuda()", "tensor_to_device", "replace", True,
      "self.identity = torch.eye(input_size).npu()", ".cuda() fails on NPU host"),
    C("self.zeros = Variable(torch.zeros(input_size).cuda())", "tensor_to_device", "replace", True,
      "self.zeros = Variable(torch.zeros(input_size).npu())", ".cuda() fails on NPU host"),
    C("self.X_mean = Variable(torch.Tensor(X_mean).cuda())", "tensor_to_device", "replace", True,
      "self.X_mean = Variable(torch.Tensor(X_mean).npu())", ".cuda() fails on NPU host"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "hidden state would be created on CPU for an NPU model"),
    C("Hidden_State = Variable(torch.zeros(batch_size, self.hidden_size).cuda())", "tensor_to_device", "replace",
      True, "Hidden_State = Variable(torch.zeros(batch_size, self.hidden_size).npu())", ".cuda() fails on NPU host"),
])

E("grud_train", "train_physionet.py", "explicit_replacement",
  "GRU-D Train_Model loop for PhysioNet 2012 mortality (Variable(inputs.cuda()) idiom)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("inputs, static = inputs.cuda(), static.cuda()", "tensor_to_device", "replace", True,
      "inputs, static = inputs.npu(), static.npu()", ".cuda() fails on NPU host"),
    C("use_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", True, "use_gpu = torch.npu.is_available()",
      "training silently runs on CPU (and the model's constant tensors are on NPU -> mismatch)"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", ".cuda() fails on NPU host"),
    C("pos_weight = pos_weight.cuda()", "tensor_to_device", "replace", True, "pos_weight = pos_weight.npu()",
      ".cuda() fails on NPU host"),
    C("inputs, static, labels = Variable(inputs.cuda()), Variable(static.cuda()), Variable(labels.cuda())",
      "tensor_to_device", "replace", True,
      "inputs, static, labels = Variable(inputs.npu()), Variable(static.npu()), Variable(labels.npu())",
      ".cuda() fails on NPU host"),
    C("inputs_val, static_val, labels_val = inputs_val.cuda(), static_val.cuda(), labels_val.cuda()",
      "tensor_to_device", "replace", True,
      "inputs_val, static_val, labels_val = inputs_val.npu(), static_val.npu(), labels_val.npu()",
      ".cuda() fails on NPU host"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
      SEED_NOTE),
    C("auc, ap = evaluate(model, test_loader, use_gpu=torch.cuda.is_available())", "torch_cuda_api", "replace", True,
      "auc, ap = evaluate(model, test_loader, use_gpu=torch.npu.is_available())",
      "CPU test batches would be fed to the NPU model"),
])

# ---------------------------------------------------------------------------------------------
# Raindrop
# ---------------------------------------------------------------------------------------------
E("raindrop_main", "code/Raindrop.py", "explicit_replacement",
  "mims-harvard Raindrop training script (model.cuda(), batch slices .cuda())", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ".cuda() fails on NPU host"),
    C("criterion = torch.nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False,
      "criterion = torch.nn.CrossEntropyLoss().npu()",
      "loss module has no parameters or buffers, so Module.cuda() touches no tensor and is a silent no-op"),
    C("Ptrain_time_tensor[:, idx].cuda(), \\", "tensor_to_device", "replace", True,
      "P, Ptime, Pstatic, y = Ptrain_tensor[:, idx, :].npu(), Ptrain_time_tensor[:, idx].npu(), \\",
      ".cuda() fails on NPU host"),
    C("Ptrain_static_tensor[idx].cuda(), ytrain_tensor[idx].cuda()", "tensor_to_device", "replace", True,
      "Ptrain_static_tensor[idx].npu(), ytrain_tensor[idx].npu()", ".cuda() fails on NPU host"),
    C("Ptrain_time_tensor[:, idx].cuda(), None, \\", "tensor_to_device", "replace", True,
      "P, Ptime, Pstatic, y = Ptrain_tensor[:, idx, :].npu(), Ptrain_time_tensor[:, idx].npu(), None, \\",
      ".cuda() fails on NPU host (PAM branch)"),
    C("=ytrain_tensor[idx].cuda()", "tensor_to_device", "replace", True, "ytrain_tensor[idx].npu()",
      ".cuda() fails on NPU host (PAM branch)"),
    C("val_loss = torch.nn.CrossEntropyLoss().cuda()(", "tensor_to_device", "replace", False,
      "val_loss = torch.nn.CrossEntropyLoss()(torch.from_numpy(out_val), torch.from_numpy(yval.squeeze(1)).long())",
      "parameterless module .cuda() is a no-op and the inputs are CPU tensors anyway"),
])

E("raindrop_models", "code/models_rd.py", "explicit_replacement",
  "Raindrop models_rd.py (Raindrop_v2 + Observation_progation on torch_geometric/torch_scatter)", [
    C("from torch_scatter import scatter", "custom_cuda_extension", "replace", True,
      "from torch_geometric.utils import scatter",
      "torch_scatter is a compiled CPU/CUDA extension with no NPU kernels; PyG>=2.3 scatter uses native "
      "scatter_add_ for aggr='add' (NPU kernel exists)"),
    C("from torch_sparse import SparseTensor", "custom_cuda_extension", "replace", True,
      "from torch_geometric.typing import SparseTensor",
      "torch_sparse binary (cu111 build) dropped from the NPU environment; only used for isinstance checks"),
    C("pe = pe.cuda()", "tensor_to_device", "replace", True, "pe = pe.to(P_time.device)", ".cuda() fails on NPU host"),
    C("self.adj = torch.ones([self.d_inp, self.d_inp]).cuda()", "tensor_to_device", "replace", True,
      "self.adj = torch.ones([self.d_inp, self.d_inp]).npu()", "runs in __init__; .cuda() fails on NPU host"),
    C("mask = mask.squeeze(1).cuda()", "tensor_to_device", "replace", True, "mask = mask.squeeze(1).to(src.device)",
      ".cuda() fails on NPU host"),
    C("adj = self.global_structure.cuda()", "tensor_to_device", "replace", True,
      "adj = self.global_structure.to(src.device)", ".cuda() fails on NPU host"),
    C("output = torch.zeros([n_step, batch_size, self.d_inp * self.d_ob]).cuda()", "tensor_to_device", "replace",
      True, "output = torch.zeros([n_step, batch_size, self.d_inp * self.d_ob], device=src.device)",
      ".cuda() fails on NPU host"),
    C("alpha_all = torch.zeros([int(edge_index.shape[1] / 2), batch_size]).cuda()", "tensor_to_device", "replace",
      False, "alpha_all = torch.zeros([int(edge_index.shape[1] / 2), batch_size], device=src.device)",
      "dead branch: use_beta is hard-coded False just above"),
    C("alpha_all = torch.zeros([edge_index.shape[1], batch_size]).cuda()", "tensor_to_device", "replace", True,
      "alpha_all = torch.zeros([edge_index.shape[1], batch_size], device=src.device)", ".cuda() fails on NPU host"),
    C("output = torch.zeros([batch_size, self.d_inp, self.d_ob + 16]).cuda()", "tensor_to_device", "replace", True,
      "output = torch.zeros([batch_size, self.d_inp, self.d_ob + 16], device=src.device)",
      "sensor_wise_mask branch (constructor option); .cuda() fails on NPU host"),
])

E("raindrop_reqs", "requirements.txt", "explicit_replacement",
  "Raindrop requirements.txt (torch 1.9.0+cu111, PyG wheels from data.pyg.org cu111 page)", [
    C("--find-links https://download.pytorch.org/whl/torch_stable.html", "torch_cuda_api", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel page; Ascend installs CPU torch (x86) / PyPI torch (aarch64)"),
    C("--find-links https://data.pyg.org/whl/torch-1.9.0+cu111.html", "torch_cuda_api", "removal", False, None,
      "only served the cu111 torch-scatter/torch-sparse binaries, which are dropped"),
    C("torch==1.9.0+cu111", "torch_cuda_api", "replace", True, "torch==2.1.0",
      "CUDA local-version wheel; no torch_npu for torch 1.9"),
    C("torch-scatter==2.0.8", "custom_cuda_extension", "removal", True, None,
      "compiled extension (CPU/CUDA kernels only); replaced by PyG native scatter"),
    C("torch-sparse==0.6.12", "custom_cuda_extension", "removal", True, None,
      "compiled extension built for torch 1.9/cu111; will not load with torch 2.1 + torch_npu"),
    C("torch-geometric==1.7.2", "custom_cuda_extension", "replace", True, "torch-geometric==2.4.0",
      "1.7.x hard-requires torch_scatter/torch_sparse; 2.3+ runs on native torch ops"),
    C("captum==0.4.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "torch_npu wheel matching torch 2.1.0"),
])

# ---------------------------------------------------------------------------------------------
# SeFT (PyTorch port)
# ---------------------------------------------------------------------------------------------
E("seft_models", "seft/models/seft.py", "device_branch_or_abstraction",
  "Set Functions for Time Series (BorgwardtLab SeFT) PyTorch port: segment ops and attention pooling", [
    C("seg_max = seg_max.scatter_reduce(0, segment_ids[:, None].expand_as(logits), logits, reduce='amax',",
      "unsupported_op_workaround", "replace", False,
      "seg_max = logits.detach().max().expand(num_segments, logits.shape[1]).clone()",
      "scatter_reduce is marked unsupported in Ascend's list and has no native NPU kernel -> CPU fallback "
      "(perf only); a global max is an equally stable shift for the per-segment softmax"),
])

E("seft_train", "train.py", "device_branch_or_abstraction",
  "SeFT PyTorch port: JSON-config training script with torch.cuda.amp", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "seeding gate; see the manual_seed_all note"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
    C("pin_memory=cfg['pin_memory'], collate_fn=collate_flat)", "pin_memory", "replace", False,
      "pin_memory=cfg['pin_memory'], pin_memory_device='npu', collate_fn=collate_flat)", PIN_NOTE),
    C("with torch.cuda.amp.autocast(enabled=amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=amp):", AMP_NOTE),
    C("device = torch.device(cfg['device'] if torch.cuda.is_available() else 'cpu')", "torch_cuda_api", "replace",
      True, "device = torch.device(cfg['device'] if torch.npu.is_available() else 'cpu')",
      "silently trains on CPU on an NPU host"),
    C("torch.cuda.get_device_name(device) if device.type == 'cuda' else 'cpu')", "torch_cuda_api", "replace", False,
      "torch.npu.get_device_name(device) if device.type == 'npu' else 'cpu')", "log message only"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=cfg['amp'])", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=cfg['amp'])", AMP_NOTE),
    C("with torch.cuda.amp.autocast(enabled=cfg['amp']):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=cfg['amp']):", AMP_NOTE),
])

E("seft_config", "configs/physionet2012.json", "device_branch_or_abstraction",
  "SeFT PyTorch port: PhysioNet 2012 run config", [
    C("\"device\": \"cuda:0\",", "device_type", "replace", True, "\"device\": \"npu:0\",",
      "consumed by torch.device(cfg['device']) in train.py"),
])

# ---------------------------------------------------------------------------------------------
# BEHRT
# ---------------------------------------------------------------------------------------------
E("behrt_mlm", "task/MLM.py", "explicit_replacement",
  "deepmedicine BEHRT task/MLM.py pretraining notebook-script (train_params['device'] = 'cuda:0')", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("'device': 'cuda:0'", "device_type", "replace", True, "'device': 'npu:0'",
      "every .to(train_params['device']) goes to CUDA"),
])

E("behrt_nextvisit", "task/NextXVisit.py", "explicit_replacement",
  "BEHRT task/NextXVisit.py fine-tuning (global_params['device'], load_model of a GPU-trained MLM)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("'device': 'cuda:0',", "device_type", "replace", True, "'device': 'npu:0',",
      "every .to(global_params['device']) goes to CUDA"),
    C("pretrained_dict = torch.load(path)", "device_type", "replace", True,
      "pretrained_dict = torch.load(path, map_location='cpu')",
      "the MLM checkpoint was saved from a CUDA model; deserialising CUDA storages fails without CUDA"),
])

# ---------------------------------------------------------------------------------------------
# Med-BERT
# ---------------------------------------------------------------------------------------------
E("medbert_finetune", "Finetuning/finetune_pytorch.py", "device_branch_or_abstraction",
  "Med-BERT (ZhiGroup) PyTorch fine-tuning with a bi-GRU head, YAML config and torch.cuda.amp", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
    C("with torch.no_grad(), torch.cuda.amp.autocast(enabled=fp16):", "amp", "replace", True,
      "with torch.no_grad(), torch.npu.amp.autocast(enabled=fp16):", AMP_NOTE),
    C("if device.type == \"cuda\":", "device_type", "replace", False, "if device.type == \"npu\":",
      "eval timing only: without a sync the NPU timing is just launch time"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
      "pair of the timing condition above (unreached as long as that compares with 'cuda')"),
    C("use_cuda = torch.cuda.is_available() and tcfg[\"device\"].startswith(\"cuda\")", "torch_cuda_api", "replace",
      True, "use_cuda = torch.npu.is_available() and tcfg[\"device\"].startswith(\"npu\")",
      "False on NPU -> silent CPU training"),
    C("n_gpu = torch.cuda.device_count() if use_cuda else 0", "torch_cuda_api", "replace", False,
      "n_gpu = torch.npu.device_count() if use_cuda else 0", "only gates seeding/logging"),
    C("props = torch.cuda.get_device_properties(device)", "torch_cuda_api", "replace", True,
      "props = torch.npu.get_device_properties(device)", "raises without CUDA once use_cuda is true on NPU"),
    C("num_workers=tcfg[\"num_workers\"], pin_memory=use_cuda)", "pin_memory", "replace", False,
      "num_workers=tcfg[\"num_workers\"], pin_memory=use_cuda, pin_memory_device=\"npu\")", PIN_NOTE),
    C("scaler = torch.cuda.amp.GradScaler(enabled=fp16)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=fp16)", AMP_NOTE),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "unguarded; needs a CUDA device and raises on an NPU host"),
    C("with torch.cuda.amp.autocast(enabled=fp16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=fp16):", AMP_NOTE),
    C("peak = torch.cuda.max_memory_allocated() / 2 ** 30 if use_cuda else 0.0", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated() / 2 ** 30 if use_cuda else 0.0", "logging only (reports 0)"),
])

E("medbert_config", "Finetuning/configs/dhf_finetune.yaml", "device_branch_or_abstraction",
  "Med-BERT PyTorch fine-tuning YAML config", [
    C("device: cuda:0", "device_type", "replace", True, "device: npu:0            # \"cpu\" works but is ~40x slower",
      "read by finetune_pytorch.py; also gates use_cuda via startswith()"),
])

# ---------------------------------------------------------------------------------------------
# ClinicalBERT
# ---------------------------------------------------------------------------------------------
E("clinicalbert_readmit", "run_readmission.py", "explicit_replacement",
  "kexinhuang12345 clinicalBERT run_readmission.py (pytorch-pretrained-BERT run_classifier lineage)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device(\"cuda\" if torch.cuda.is_available() and not args.no_cuda else \"cpu\")",
      "device_type", "replace", True,
      "device = torch.device(\"npu\" if torch.npu.is_available() and not args.no_cuda else \"cpu\")",
      "silent CPU fallback on NPU"),
    C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", False, "n_gpu = torch.npu.device_count()",
      "0 on NPU: only affects seeding, loss.mean() and the DataParallel branch (which must not run on NPU anyway)"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
    C("device = torch.device(\"cuda\", args.local_rank)", "device_type", "replace", True,
      "device = torch.device(\"npu\", args.local_rank)", "cuda device in the distributed branch"),
    C("torch.distributed.init_process_group(backend='nccl')", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl')", "NCCL is not available on Ascend"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)", SEED_NOTE),
    C("model = torch.nn.DataParallel(model)", "unsupported_op_workaround", "replace", True,
      "logger.warning(\"nn.DataParallel is not supported on NPU; use torch.distributed.launch for multi-NPU\")",
      "torch.nn.DataParallel is unsupported on Ascend (API list, msFmkTransplt docs)"),
])

E("clinicalbert_modeling", "modeling_readmission.py", "device_branch_or_abstraction",
  "clinicalBERT modeling_readmission.py (vendored pytorch-pretrained-BERT modeling with apex BertLayerNorm)", [
    C("from apex.normalization.fused_layer_norm import FusedLayerNorm as BertLayerNorm", "custom_cuda_extension",
      "replace", False, "from torch.nn import LayerNorm as BertLayerNorm",
      "guarded by ImportError: without NVIDIA apex the pure-Python LayerNorm fallback runs; nn.LayerNorm has a "
      "native NPU kernel (perf only)"),
])

# ---------------------------------------------------------------------------------------------
# PyHealth + SafeDrug
# ---------------------------------------------------------------------------------------------
E("pyhealth_trainer", "pyhealth/trainer.py", "device_branch_or_abstraction",
  "sunlabuiuc PyHealth pyhealth/trainer.py (Trainer default device)", [
    C("device = \"cuda\" if torch.cuda.is_available() else \"cpu\"", "device_type", "replace", True,
      "device = \"npu\" if torch.npu.is_available() else \"cpu\"",
      "default device silently becomes CPU on NPU hosts"),
])

E("pyhealth_example", "examples/drug_recommendation_mimic3_safedrug.py", "explicit_replacement",
  "PyHealth example: MIMIC-III drug recommendation with SafeDrug/GAMENet/RETAIN", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device=\"cuda\",", "device_type", "replace", True, "device=\"npu\",",
      "Trainer moves the model to 'cuda' -> fails on NPU host"),
])

E("safedrug_main", "src/SafeDrug.py", "explicit_replacement",
  "ycq091044 SafeDrug src/SafeDrug.py (--cuda GPU index, released 2080Ti weights)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda:{}'.format(args.cuda))", "device_type", "replace", True,
      "device = torch.device('npu:{}'.format(args.cuda))", "unconditional cuda device"),
    C("=model.load_state_dict(torch.load(open(args.resume_path, 'rb')))", "device_type", "replace", True,
      "model.load_state_dict(torch.load(open(args.resume_path, 'rb'), map_location=device))",
      "released checkpoint holds CUDA tensors; loading without map_location fails on NPU host"),
])

E("fiddle_run", "FIDDLE/run.py", "device_branch_or_abstraction",
  "MLD3 FIDDLE preprocessing entry point (CPU-only pandas/sparse pipeline)", [])

# ---------------------------------------------------------------------------------------------
# EHR transformer pretraining with DDP (CEHR-BERT / CORE-BEHRT style)
# ---------------------------------------------------------------------------------------------
E("ehrpt_train_ddp", "train_ddp.py", "explicit_replacement",
  "CEHR-BERT / CORE-BEHRT-style masked-code pretraining with torchrun + DDP, bf16 autocast, CUDA events", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()", "device_count() is 0 on NPU -> ZeroDivisionError (SLURM path)"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "raises without CUDA"),
    C("args.dist_backend = \"nccl\"", "dist_backend", "replace", True, "args.dist_backend = \"hccl\"",
      "NCCL unavailable on Ascend"),
    C("t = torch.tensor([value], dtype=torch.float32, device=\"cuda\")", "device_type", "replace", True,
      "t = torch.tensor([value], dtype=torch.float32, device=\"npu\")", "cuda device string"),
    C("if args.dist_backend == \"nccl\":", "dist_backend", "replace", False,
      "if args.dist_backend in (\"nccl\", \"hccl\"):",
      "backend string comparison is not rewritten by any tool; after the port it takes the else branch, which "
      "computes the same mean (sum / world_size) - harmless"),
    C("device = torch.device(\"cuda\", args.gpu)", "device_type", "replace", True,
      "device = torch.device(\"npu\", args.gpu)", "batches moved to a cuda device"),
    C("if args.precision == \"bf16\" and torch.cuda.get_device_capability()[0] < 8:", "device_capability_check",
      "replace", True, "if args.precision == \"bf16\" and not torch.npu.is_bf16_supported():",
      "get_device_capability needs CUDA here; on NPU it returns None unless TORCH_NPU_DEVICE_CAPABILITY is set"),
    C("num_workers=args.num_workers, pin_memory=True, drop_last=True,", "pin_memory", "replace", False,
      "num_workers=args.num_workers, pin_memory=True, pin_memory_device=\"npu\", drop_last=True,", PIN_NOTE),
    C("model.cuda(args.gpu)", "tensor_to_device", "replace", True, "model.npu(args.gpu)", ".cuda() fails on NPU host"),
    C("model = torch.compile(model, mode=\"max-autotune\")", "compile_mode", "replace", False,
      "model = torch.compile(model)",
      "opt-in flag; max-autotune relies on Triton autotuning, which is disabled for NPU (has_triton=False under "
      "transfer_to_npu); NPU inductor needs torch_npu >= 2.6 - unconfirmed"),
    C("fused=torch.cuda.is_available())", "fused_optimizer", "replace", False, "fused=torch.npu.is_available())",
      "silently unfused on NPU; aten _fused_adamw_ has an NPU kernel (perf only)"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=(args.precision == \"fp16\"))", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=(args.precision == \"fp16\"))", AMP_NOTE),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_evt = torch.npu.Event(enable_timing=True)", "CUDA event creation fails without CUDA"),
    C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_evt = torch.npu.Event(enable_timing=True)", "CUDA event creation fails without CUDA"),
    C("with torch.autocast(device_type=\"cuda\", dtype=amp_dtype, enabled=use_amp):", "amp", "replace", True,
      "with torch.autocast(device_type=\"npu\", dtype=amp_dtype, enabled=use_amp):",
      "autocast for device 'cuda' does not cover NPU tensors (silently fp32) and warns/disables without CUDA"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
])

E("ehrpt_attention", "models/attention.py", "device_branch_or_abstraction",
  "EHR transformer encoder with eager / SDPA / flash-attn varlen attention (flash_attn guarded import)", [
    C("from flash_attn import flash_attn_varlen_func", "attention_kernel", "replace", False,
      "import torch_npu",
      "guarded by ImportError: flash-attn cannot be installed on NPU, the flash path silently disables itself and "
      "SDPA is used; npu_fusion_attention (TND layout) is the NPU varlen kernel"),
    C("from flash_attn.bert_padding import unpad_input, pad_input", "attention_kernel", "replace", False,
      "from models.padding import unpad_input, pad_input",
      "pure-torch helpers shipped inside flash-attn; needed locally if the varlen path is ported"),
    C("if not HAS_FLASH_ATTN or device.type != \"cuda\":", "attention_kernel", "add_branch", False,
      "if device.type == \"npu\":\n        return True",
      "perf only: an NPU branch would enable the unpadded varlen path via npu_fusion_attention"),
    C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True):",
      "attention_kernel", "replace", False, "with contextlib.nullcontext():",
      "torch.backends.cuda.sdp_kernel is marked unsupported on Ascend; with every backend enabled it only sets "
      "global flags, so on NPU it is effectively a no-op (unconfirmed)"),
    C("out = flash_attn_varlen_func(q, k, v, cu_seqlens, cu_seqlens, max_seqlen, max_seqlen,", "attention_kernel",
      "replace", False,
      "out = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, \"TND\", scale=1.0 / math.sqrt(self.head_dim), "
      "keep_prob=1.0 - (self.attn_dropout if self.training else 0.0), actual_seq_qlen=cu_seqlens[1:].tolist(), "
      "actual_seq_kvlen=cu_seqlens[1:].tolist())[0]",
      "unreachable on NPU (guarded); rewrite only to regain the varlen speed-up"),
])

E("ehrpt_gpu_monitor", "utils/gpu_monitor.py", "device_branch_or_abstraction",
  "environment / GPU-memory logging helper of the same pretraining project (pynvml, nvidia-smi)", [
    C("=import pynvml", "torch_cuda_api", "removal", False, None,
      "guarded by try/except: NVML is absent on Ascend hosts, so utilisation silently reports -1; "
      "torch.npu.utilization() is the NPU source"),
    C("\"num_gpus\": torch.cuda.device_count(),", "torch_cuda_api", "replace", False,
      "\"num_npus\": torch.npu.device_count(),", "logging only (reports 0)"),
    C("if k.startswith((\"CUDA_\", \"NCCL_\",", "env_var", "replace", False,
      "if k.startswith((\"ASCEND_\", \"HCCL_\", \"OMP_\", \"MASTER_\", \"WORLD_SIZE\", \"RANK\", \"LOCAL_RANK\"))},",
      "env snapshot would miss the variables that matter on NPU"),
    C("for i in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", False,
      "for i in range(torch.npu.device_count()):", "loop silently runs zero times on NPU"),
    C("props = torch.cuda.get_device_properties(i)", "torch_cuda_api", "replace", False,
      "props = torch.npu.get_device_properties(i)", "unreached until the loop is ported"),
    C("\"capability\": \"{}.{}\".format(props.major, props.minor),", "device_capability_check", "removal", False, None,
      "NPU device properties have no major/minor (only name, total_memory, L2_cache_size, cube/vector core counts)"),
    C("\"multi_processor_count\": props.multi_processor_count,", "device_capability_check", "replace", False,
      "\"cube_core_num\": props.cube_core_num,", "no SM count on NPU properties"),
    C("info[\"nvidia_smi\"] = _nvidia_smi()", "torch_cuda_api", "replace", True,
      "info[\"npu_smi\"] = subprocess.run([\"npu-smi\", \"info\"], capture_output=True, text=True).stdout",
      "unguarded subprocess call: nvidia-smi missing -> FileNotFoundError on rank 0 at start-up"),
    C("self.enabled = enabled and torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "self.enabled = enabled and torch.npu.is_available()", "memory tracking silently disabled on NPU"),
    C("\"mem_alloc_gb\": round(torch.cuda.memory_allocated(self.device) / gib, 2),", "torch_cuda_api", "replace",
      False, "\"mem_alloc_gb\": round(torch.npu.memory_allocated(self.device) / gib, 2),", "logging only"),
    C("\"mem_reserved_gb\": round(torch.cuda.memory_reserved(self.device) / gib, 2),", "torch_cuda_api", "replace",
      False, "\"mem_reserved_gb\": round(torch.npu.memory_reserved(self.device) / gib, 2),", "logging only"),
    C("\"mem_peak_gb\": round(torch.cuda.max_memory_allocated(self.device) / gib, 2),", "torch_cuda_api", "replace",
      False, "\"mem_peak_gb\": round(torch.npu.max_memory_allocated(self.device) / gib, 2),", "logging only"),
    C("torch.cuda.reset_peak_memory_stats(self.device)", "torch_cuda_api", "replace", False,
      "torch.npu.reset_peak_memory_stats(self.device)", "unreached while self.enabled is CUDA-gated"),
    C("return torch.cuda.memory_summary(self.device, abbreviated=True)", "torch_cuda_api", "replace", False,
      "return torch.npu.memory_summary(self.device, abbreviated=True)", "unreached while self.enabled is CUDA-gated"),
])

E("ehrpt_multinode_sh", "scripts/pretrain_multinode.sh", "explicit_replacement",
  "multi-node torchrun launcher of the pretraining project (NCCL InfiniBand settings)", [
    C("=set -e", "import_torch_npu", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced on every node"),
    C("export CUDA_VISIBLE_DEVICES=${GPU_IDS:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU_IDS:-0,1,2,3,4,5,6,7}", "GPU_IDS selection silently ignored on NPU"),
    C("NPROC_PER_NODE=$(nvidia-smi -L | wc -l)", "torch_cuda_api", "replace", True,
      "NPROC_PER_NODE=$(npu-smi info -l | grep -c \"NPU ID\")",
      "nvidia-smi missing -> 0 processes per node -> torchrun fails"),
    C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None, "ignored by HCCL (ASCEND_GLOBAL_LOG_LEVEL instead)"),
    C("export NCCL_SOCKET_IFNAME=${IFNAME:-ib0}", "env_var", "replace", True,
      "export HCCL_SOCKET_IFNAME=${IFNAME:-ib0}",
      "multi-node: the pinned host NIC is ignored and HCCL picks its own by name order, which can break link setup"),
    C("export NCCL_IB_HCA=mlx5", "env_var", "removal", False, None, "no HCCL equivalent; NPU RoCE ports are used"),
    C("export NCCL_IB_GID_INDEX=3", "env_var", "removal", False, None, "no HCCL equivalent"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu watchdog variable (default already 1)"),
    C("export TORCH_NCCL_BLOCKING_WAIT=0", "env_var", "removal", False, None, "NCCL-only, value is the default"),
])

E("ehrpt_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "Dockerfile of the pretraining project (nvidia/cuda base, cu121 torch wheel, flash-attn build)", [
    C("FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA base image; CANN toolkit (with set_env exports) and NPU driver mounts are needed"),
    C("pip install torch==2.1.2 --index-url https://download.pytorch.org/whl/cu121", "torch_cuda_api", "replace", True,
      "pip install torch==2.1.0 --index-url https://download.pytorch.org/whl/cpu && pip install torch-npu==2.1.0.post10",
      "CUDA wheel; torch_npu exists for 2.1.0, not 2.1.2"),
    C("pip install flash-attn==2.5.6 --no-build-isolation", "custom_cuda_extension", "removal", True, None,
      "nvcc build of CUDA kernels fails on an NPU image; the model falls back to SDPA"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all \\", "env_var", "removal", False, None,
      "nvidia-container-runtime variable; Ascend Docker Runtime takes ASCEND_VISIBLE_DEVICES at docker run"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility \\", "env_var", "removal", False, None,
      "nvidia-container-runtime variable"),
    C("=NCCL_DEBUG=WARN", "env_var", "removal", False, None, "ignored by HCCL"),
])

# ---------------------------------------------------------------------------------------------
# Odyssey (EHR-Mamba / CEHR-BERT foundation models, Lightning)
# ---------------------------------------------------------------------------------------------
E("odyssey_pretrain", "odyssey/pretrain.py", "explicit_replacement",
  "VectorInstitute odyssey pretrain.py (PyTorch Lightning accelerator='gpu', DDPStrategy, 16-mixed)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("os.environ[\"CUDA_LAUNCH_BLOCKING\"] = \"1\"", "env_var", "removal", False, None,
      "debug leftover, ignored on NPU; translating it to ASCEND_LAUNCH_BLOCKING=1 would serialise NPU kernels"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op at start-up on any device"),
    C("accelerator=\"gpu\",", "device_type", "replace", True, "accelerator=NPUAccelerator(),",
      "Lightning's GPU accelerator raises when CUDA is unavailable; Lightning ships no NPU accelerator, so a "
      "custom/third-party Accelerator is needed (which one is unconfirmed)"),
    C("strategy=DDPStrategy(find_unused_parameters=True) if args.gpus > 1 else \"auto\",", "dist_backend", "replace",
      True,
      "strategy=DDPStrategy(find_unused_parameters=True, process_group_backend=\"hccl\") if args.gpus > 1 else \"auto\",",
      "default process-group backend is nccl for CUDA and gloo otherwise; neither works for NPU tensors"),
    C("precision=\"16-mixed\",", "amp", "replace", False, "precision=\"bf16-mixed\",",
      "Lightning's MixedPrecision plugin derives autocast device/GradScaler from CUDA; needs an NPU-aware "
      "precision plugin - behaviour unconfirmed"),
])

E("odyssey_pyproject", "pyproject.toml", "explicit_replacement",
  "odyssey pyproject.toml (mamba-ssm, causal-conv1d, triton, flash-attn extra, cu121 index)", [
    C("\"torch==2.3.1\",", "import_torch_npu", "npu_only_addition", True, "    \"torch-npu==2.3.1.post6\",",
      "torch 2.3.1 has a matching torch_npu wheel"),
    C("\"mamba-ssm==2.0.3\",", "custom_cuda_extension", "removal", True, None,
      "CUDA-kernel package built with nvcc; transformers' Mamba falls back to the pure-torch path without it"),
    C("\"causal-conv1d==1.2.2.post1\",", "custom_cuda_extension", "removal", True, None,
      "CUDA-kernel package built with nvcc"),
    C("\"triton==2.3.1\",", "triton_kernel_tuning", "removal", False, None,
      "only needed by mamba-ssm's kernels; triton-ascend is the NPU counterpart; whether the wheel resolves on "
      "aarch64 is unconfirmed"),
    C("\"nvidia-ml-py>=12.535\",", "torch_cuda_api", "removal", False, None, "pure-Python NVML binding; installs but is useless"),
    C("\"flash-attn==2.5.9.post1\",", "attention_kernel", "removal", False, None,
      "optional [flash] extra; only fails if someone installs the extra"),
    C("index-url = \"https://download.pytorch.org/whl/cu121\"", "torch_cuda_api", "replace", False,
      "index-url = \"https://download.pytorch.org/whl/cpu\"",
      "CUDA wheel index; works on x86 but pulls CUDA libraries, Ascend docs install CPU torch"),
])
