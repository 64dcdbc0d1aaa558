# Labels for probe260: knowledge tracing / educational data mining (pyKT, EduKTM, EduCDM, GKT, DKVMN, SAINT+).
# One entry per upstream file; one C(...) per line a careful porter would edit for torch_npu.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


NPU_DEV_LINE = 'device = "cpu" if not torch.npu.is_available() else "npu"'
IMPORT_NPU = "import torch_npu"
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ----------------------------------------------------------------------------------------------- pyKT
E("pykt_wandb_train", "examples/wandb_train.py", "device_branch_or_abstraction",
  "pykt-toolkit examples/wandb_train.py (training entry point driven by wandb sweeps)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "entry script: import torch_npu right after torch so torch.npu exists for the pykt modules it imports"),
    C('device = "cpu" if not torch.cuda.is_available() else "cuda"', "device_type", "replace", True, NPU_DEV_LINE,
      "unchanged, an NPU host has no CUDA, so device silently becomes 'cpu' and the whole sweep trains on the CPU"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "memory log only; unchanged it is silently skipped on NPU"),
    C("torch.cuda.max_memory_allocated() / 1024 ** 2", "torch_cuda_api", "replace", False,
      'print(f"max npu memory allocated: {torch.npu.max_memory_allocated() / 1024 ** 2:.1f} MB")',
      "logging only; torch_npu.npu.max_memory_allocated is the NPU counterpart"),
])

E("pykt_wandb_predict", "examples/wandb_predict.py", "device_branch_or_abstraction",
  "pykt-toolkit examples/wandb_predict.py (evaluation entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "entry script; the models and load_model() it imports call torch.npu after the port"),
    C('device = "cpu" if not torch.cuda.is_available() else "cuda"', "device_type", "replace", False, NPU_DEV_LINE,
      "in this script `device` is only printed; placement happens in init_model.py, so leaving it only mislabels the log"),
])

E("pykt_utils", "pykt/utils/utils.py", "device_branch_or_abstraction",
  "pykt-toolkit pykt/utils/utils.py (set_seed, debug_print)", [
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "seeding guard; torch.manual_seed already seeds registered PrivateUse1 devices, so skipping it is probably harmless (unconfirmed)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "behind the guard above; torch.cuda.manual_seed_all is a lazy no-op without CUDA"),
    C('os.environ["CUDA_LAUNCH_BLOCKING"] = "1"', "env_var", "replace", False, 'os.environ["ASCEND_LAUNCH_BLOCKING"] = "1"',
      "no-op on NPU; ASCEND_LAUNCH_BLOCKING is the synchronous-launch switch (it slows training, msprof advisor flags it)"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
      "logging helper; unchanged it silently reports 'gpu: n/a'"),
    C("idx = torch.cuda.current_device()", "torch_cuda_api", "replace", False, "idx = torch.npu.current_device()",
      "logging helper, reached only once the guard is ported"),
    C("used = torch.cuda.memory_allocated(idx)", "torch_cuda_api", "replace", False, "used = torch.npu.memory_allocated(idx) / 1024 ** 2",
      "logging helper"),
    C("reserved = torch.cuda.memory_reserved(idx)", "torch_cuda_api", "replace", False, "reserved = torch.npu.memory_reserved(idx) / 1024 ** 2",
      "logging helper"),
    C("name = torch.cuda.get_device_name(idx)", "torch_cuda_api", "replace", False, "name = torch.npu.get_device_name(idx)",
      "logging helper"),
])

E("pykt_train_model", "pykt/models/train_model.py", "device_branch_or_abstraction",
  "pykt-toolkit pykt/models/train_model.py (cal_loss, model_forward, train_model)", [
    C('device = "cpu" if not torch.cuda.is_available() else "cuda"', "device_type", "replace", True, NPU_DEV_LINE,
      "every batch is moved with .to(device); unchanged the batches stay on CPU while the model is on NPU"),
    C("loss1 = binary_cross_entropy(y.double(), t.double())", "unsupported_op_workaround", "replace", True,
      "loss1 = binary_cross_entropy(y.float(), t.float())",
      "Ascend 2.7.1 API list: F.binary_cross_entropy input only bf16/fp16/fp32; pykt computes the loss in fp64"),
    C("=loss = binary_cross_entropy(y.double(), t.double())", "unsupported_op_workaround", "replace", True,
      "loss = binary_cross_entropy(y.float(), t.float())",
      "fp64 BCE not in the NPU-supported dtypes (bf16/fp16/fp32)"),
    C("loss = binary_cross_entropy(y_next.double(), r_next.double())", "unsupported_op_workaround", "replace", True,
      "loss = binary_cross_entropy(y_next.float(), r_next.float())",
      "fp64 BCE (dkt+ branch)"),
    C("loss_r = binary_cross_entropy(y_curr.double(), r_curr.double())", "unsupported_op_workaround", "replace", True,
      "loss_r = binary_cross_entropy(y_curr.float(), r_curr.float())  # if answered wrong for C in t-1, cur answer for C should be wrong too",
      "fp64 BCE (dkt+ reconstruction term)"),
    C("loss = binary_cross_entropy(y.double(), t.double()) + preloss[0]", "unsupported_op_workaround", "replace", True,
      "loss = binary_cross_entropy(y.float(), t.float()) + preloss[0]",
      "fp64 BCE (akt family)"),
])

E("pykt_evaluate_model", "pykt/models/evaluate_model.py", "device_branch_or_abstraction",
  "pykt-toolkit pykt/models/evaluate_model.py (evaluate, question-level fusion)", [
    C('device = "cpu" if not torch.cuda.is_available() else "cuda"', "device_type", "replace", True, NPU_DEV_LINE,
      "test batches and fusion tensors are moved with .to(device); must match the model's device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; the NPU caching allocator has its own empty_cache"),
])

E("pykt_init_model", "pykt/models/init_model.py", "device_branch_or_abstraction",
  "pykt-toolkit pykt/models/init_model.py (model factory and checkpoint loading)", [
    C('device = "cpu" if not torch.cuda.is_available() else "cuda"', "device_type", "replace", True, NPU_DEV_LINE,
      "all models are built with .to(device); unchanged they are built on CPU while batches go to NPU"),
    C("model = model.double()", "unsupported_op_workaround", "replace", False, "model = model.float()",
      "HawkesKT runs in fp64; fp64 is poorly supported on Ascend (transfer_to_npu maps DoubleTensor to fp32); which of its ops fail is unconfirmed"),
    C('net = torch.load(os.path.join(ckpt_path, emb_type + "_model.ckpt"))', "tensor_to_device", "replace", False,
      'net = torch.load(os.path.join(ckpt_path, emb_type + "_model.ckpt"), map_location=device)',
      "fails only for checkpoints written on a CUDA box; NPU-trained checkpoints load fine"),
])

E("pykt_akt", "pykt/models/akt.py", "device_branch_or_abstraction",
  "pykt-toolkit pykt/models/akt.py (AKT, monotonic attention with distance decay)", [
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "masks and position tensors are built with .to(device); on CPU they clash with NPU activations in masked_fill"),
])

E("pykt_sakt", "pykt/models/sakt.py", "device_branch_or_abstraction",
  "pykt-toolkit pykt/models/sakt.py (SAKT)", [
    C('device = "cpu" if not torch.cuda.is_available() else "cuda"', "device_type", "replace", False, NPU_DEV_LINE,
      "module-level variable never used in this file (masks come from models/utils.py); changed for consistency only"),
])

E("pykt_model_utils", "pykt/models/utils.py", "device_branch_or_abstraction",
  "pykt-toolkit pykt/models/utils.py (ut_mask, pos_encode, transformer_FFN)", [
    C('device = "cpu" if not torch.cuda.is_available() else "cuda"', "device_type", "replace", True, NPU_DEV_LINE,
      "ut_mask/lt_mask/pos_encode build their tensors with .to(device); CPU indices into an NPU embedding fail"),
])

E("pykt_simplekt", "pykt/models/simplekt.py", "device_branch_or_abstraction",
  "pykt-toolkit pykt/models/simplekt.py (simpleKT)", [
    C('device = "cpu" if not torch.cuda.is_available() else "cuda"', "device_type", "replace", True, NPU_DEV_LINE,
      "src_mask is created with .to(device) in TransformerLayer.forward"),
])

E("pykt_dkt", "pykt/models/dkt.py", "device_branch_or_abstraction",
  "pykt-toolkit pykt/models/dkt.py and dkt_plus.py (LSTM DKT / DKT+)", [])

E("pykt_data_loader", "pykt/datasets/data_loader.py", "device_branch_or_abstraction",
  "pykt-toolkit pykt/datasets/data_loader.py (KTDataset)", [])

E("pykt_sweep_sh", "examples/start_sweep_agents.sh", "explicit_replacement",
  "pykt-toolkit examples/ sweep launch scripts (one wandb agent per GPU)", [
    C("=set -e", "env_var", "npu_only_addition", True, SET_ENV,
      "agents run python that imports torch_npu; without the CANN environment it fails with libhccl.so / ASCEND_OPP_PATH errors"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv,noheader", "torch_cuda_api", "replace", True,
      "npu-smi info",
      "nvidia-smi does not exist on an Ascend host and the script runs under set -e"),
    C("CUDA_VISIBLE_DEVICES=${gpu} WANDB_CONSOLE=off nohup wandb agent", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${gpu} WANDB_CONSOLE=off nohup wandb agent ${sweep} > ${LOG_DIR}/${name}_gpu${gpu}.log 2>&1 &",
      "CUDA_VISIBLE_DEVICES is ignored by the NPU runtime: every agent would silently land on NPU 0"),
    C("CUDA_VISIBLE_DEVICES=${START_GPU} python wandb_dkt_train.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${START_GPU} python wandb_dkt_train.py --dataset_name=assist2015 --use_wandb=0 --add_uuid=0 --fold=0 \\",
      "same: card pinning must use ASCEND_RT_VISIBLE_DEVICES"),
])

E("pykt_requirements", "requirements.txt", "explicit_replacement",
  "pykt-toolkit requirements.txt pinned to a CUDA 11.3 wheel", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "torch_cuda_api", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu pairs with the CPU torch wheel on x86 (plain PyPI torch on aarch64)"),
    C("torch==1.12.1+cu113", "torch_cuda_api", "replace", True, "torch==2.1.0",
      "+cu113 build; there is no torch_npu for 1.12.1 and torch must equal the torch_npu version"),
    C("wandb>=0.12.9", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "the torch-npu pin, matching torch 2.1.0 (CANN 8.1.RC1 era)"),
    C("pynvml>=11.0.0", "torch_cuda_api", "removal", False, None,
      "NVML binding; installs but has nothing to talk to on an Ascend host"),
])

E("pykt_dockerfile", "Dockerfile", "explicit_replacement",
  "training Dockerfile for pykt-toolkit on an NVIDIA CUDA base image", [
    C("FROM nvidia/cuda:11.3.1-cudnn8-runtime-ubuntu20.04", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA base image; an Ascend CANN image provides the toolkit and the set_env.sh exports as ENV lines"),
    C("RUN pip install torch==1.12.1+cu113", "torch_cuda_api", "replace", True,
      "RUN pip install torch==2.1.0 torch-npu==2.1.0.post12 --extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel; install CPU torch plus the matching torch-npu"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "nvidia-container-runtime variable; Ascend devices are passed with --device /dev/davinciN or ASCEND_VISIBLE_DEVICES at run time"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "nvidia-container-runtime variable, meaningless on Ascend"),
])

# ----------------------------------------------------------------------------------------------- GKT
E("gkt_train", "train.py", "explicit_replacement",
  "jhljx/GKT train.py (Graph-based Knowledge Tracing, --no-cuda flag, args.cuda branches)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "entry script"),
    C("args.cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "args.cuda = not args.no_cuda and torch.npu.is_available()",
      "unchanged, args.cuda is False on an NPU host and GKT silently trains on the CPU; the flag name stays for CLI compatibility"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
      "lazy no-op without CUDA; seeds the NPU generator explicitly"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(args.seed)",
      "same"),
    C("vae_loss = vae_loss.cuda()", "tensor_to_device", "replace", True, "vae_loss = vae_loss.npu()",
      "Module.cuda() on an NPU host"),
    C("graph_model = graph_model.cuda()", "tensor_to_device", "replace", True, "graph_model = graph_model.npu()",
      "MHA/VAE graph model to the device"),
    C("model.load_state_dict(torch.load(model_file))", "tensor_to_device", "replace", False,
      "model.load_state_dict(torch.load(model_file, map_location='npu'))",
      "--load-dir fine-tuning: fails only for checkpoints saved on CUDA"),
    C("optimizer.load_state_dict(torch.load(optimizer_file))", "tensor_to_device", "replace", False,
      "optimizer.load_state_dict(torch.load(optimizer_file, map_location='npu'))",
      "same, optimizer state tensors"),
    C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
      "model placement"),
    C("features, questions, answers = features.cuda(), questions.cuda(), answers.cuda()", "tensor_to_device", "replace", True,
      "features, questions, answers = features.npu(), questions.npu(), answers.npu()",
      "training batch placement"),
    C("=features = features.cuda()", "tensor_to_device", "replace", True, "features = features.npu()",
      "validation batch"),
    C("=questions = questions.cuda()", "tensor_to_device", "replace", True, "questions = questions.npu()",
      "validation batch"),
    C("=answers = answers.cuda()", "tensor_to_device", "replace", True, "answers = answers.npu()",
      "validation batch"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA"),
    C("features.to('cuda'), questions.to('cuda'), answers.to('cuda')", "device_type", "replace", True,
      "features, questions, answers = features.to('npu'), questions.to('npu'), answers.to('npu')",
      "test batch placement with a 'cuda' string"),
])

E("gkt_models", "models.py", "explicit_replacement",
  "jhljx/GKT models.py (GKT, MHA / VAE latent graphs, DKT baseline)", [
    C("self.one_hot_feat = one_hot_feat.cuda() if self.has_cuda else one_hot_feat", "tensor_to_device", "replace", True,
      "self.one_hot_feat = one_hot_feat.npu() if self.has_cuda else one_hot_feat",
      "has_cuda is True once train.py is ported; the one-hot table must live on the NPU (the other tables follow its .device)"),
    C("sp_rec, sp_send = rel_rec.to_sparse(), rel_send.to_sparse()", "unsupported_op_workaround", "replace", True,
      "sp_rec, sp_send = rel_rec, rel_send  # dense: no sparse COO kernels on NPU",
      "VAE graph path: torch_npu registers no sparse kernels (sparse ops raise instead of falling back) and msFmkTransplt lists Tensor.to_sparse as unsupported"),
    C("sp_rec_t, sp_send_t = rel_rec.T.to_sparse(), rel_send.T.to_sparse()", "unsupported_op_workaround", "replace", True,
      "sp_rec_t, sp_send_t = rel_rec.T.contiguous(), rel_send.T.contiguous()",
      "same, transposed incidence matrices"),
    C("receivers = torch.sparse.mm(sp_rec, x)", "unsupported_op_workaround", "replace", False,
      "receivers = torch.mm(sp_rec, x)",
      "after the dense rewrite a plain mm is the natural call; whether torch.sparse.mm accepts two strided tensors on NPU is unconfirmed"),
    C("senders = torch.sparse.mm(sp_send, x)", "unsupported_op_workaround", "replace", False,
      "senders = torch.mm(sp_send, x)", "same"),
    C("incoming = torch.sparse.mm(sp_rec_t, x)", "unsupported_op_workaround", "replace", False,
      "incoming = torch.mm(sp_rec_t, x)", "same"),
    C("x_index = sp_send._indices()[1].long()", "unsupported_op_workaround", "replace", True,
      "x_index = sp_send.argmax(dim=1).long()  # send node index: [edge_num, ]",
      "_indices() exists only on sparse tensors; must follow the dense rewrite above"),
    C("y_index = sp_rec._indices()[1].long()", "unsupported_op_workaround", "replace", True,
      "y_index = sp_rec.argmax(dim=1).long()  # receive node index [edge_num, ]",
      "same"),
])

E("gkt_utils", "utils.py", "explicit_replacement",
  "jhljx/GKT utils.py (NRI-derived gumbel-softmax / KL helpers)", [
    C("if logits.data.is_cuda:", "device_type", "replace", True, "if logits.data.is_npu:",
      "is_cuda is False for NPU tensors, so the noise stays on CPU and the add fails with a device mismatch"),
    C("logistic_noise = logistic_noise.cuda()", "tensor_to_device", "replace", True, "logistic_noise = logistic_noise.npu()",
      "pairs with the check above"),
    C("=if logits.is_cuda:", "device_type", "replace", True, "if logits.is_npu:",
      "gumbel noise for the VAE edge sampler: same device-mismatch failure"),
    C("gumbel_noise = gumbel_noise.cuda()", "tensor_to_device", "replace", True, "gumbel_noise = gumbel_noise.npu()",
      "pairs with the check above"),
    C("if y_soft.is_cuda:", "device_type", "replace", True, "if y_soft.is_npu:",
      "hard gumbel (--hard): y_hard would stay on CPU"),
    C("y_hard = y_hard.cuda()", "tensor_to_device", "replace", True, "y_hard = y_hard.npu()",
      "pairs with the check above"),
    C("log_prior = log_prior.cuda()", "tensor_to_device", "replace", True, "log_prior = log_prior.npu()",
      "use_cuda is True after the port of train.py; .cuda() fails on an NPU host"),
])

E("gkt_processing", "processing.py", "explicit_replacement",
  "jhljx/GKT processing.py (dataset split, padding collate, concept graphs)", [
    C("kwargs = {'num_workers': 1, 'pin_memory': True} if use_cuda else {}", "pin_memory", "replace", False,
      "kwargs = {'num_workers': 1, 'pin_memory': True, 'pin_memory_device': 'npu'} if use_cuda else {}",
      "without pin_memory_device the DataLoader checks torch.cuda and silently drops pinning; performance only"),
    C("graph = graph.cuda()", "tensor_to_device", "replace", True, "graph = graph.npu()",
      "use_cuda is True after the port; .cuda() fails"),
])

# ----------------------------------------------------------------------------------------------- DKVMN (PyTorch port)
E("dkvmn_main", "main.py", "explicit_replacement",
  "DKVMN PyTorch re-implementation main.py (--gpu int flag, torch.cuda.set_device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("torch.cuda.set_device(params.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(params.gpu)",
      "--gpu defaults to 0, so this runs by default and fails without CUDA"),
    C("torch.cuda.manual_seed(params.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(params.seed)",
      "lazy no-op without CUDA"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model placement"),
    C("torch.cuda.max_memory_allocated() / 1024 ** 2", "torch_cuda_api", "replace", False,
      "logging.info('peak npu memory: %.1f MB' % (torch.npu.max_memory_allocated() / 1024 ** 2))",
      "logging only, silently 0 without CUDA"),
])

E("dkvmn_run", "run.py", "explicit_replacement",
  "DKVMN PyTorch re-implementation run.py / utils.varible (train/test loops)", [
    C("return torch.autograd.Variable(tensor).cuda()", "tensor_to_device", "replace", True,
      "return torch.autograd.Variable(tensor).npu()", "every training batch goes through varible()"),
    C("return torch.cuda.LongTensor, torch.cuda.FloatTensor", "torch_cuda_api", "replace", True,
      "return torch.npu.LongTensor, torch.npu.FloatTensor",
      "legacy typed constructors for the test loop; torch.cuda.* types need CUDA"),
])

E("dkvmn_model", "model.py", "explicit_replacement",
  "DKVMN PyTorch re-implementation model.py (key/value memory heads)", [
    C("self.dtype = torch.cuda.FloatTensor if gpu >= 0 else torch.FloatTensor", "torch_cuda_api", "replace", True,
      "self.dtype = torch.npu.FloatTensor if gpu >= 0 else torch.FloatTensor",
      ".type(torch.cuda.FloatTensor) in forward() tries to move the write mask to CUDA"),
])

# ----------------------------------------------------------------------------------------------- EduKTM / EduCDM
E("edu_dkt", "EduKTM/DKT/DKT.py", "device_branch_or_abstraction",
  "bigdata-ustc/EduKTM EduKTM/DKT/DKT.py (RNN DKT with a device= argument)", [
    C("self.rnn = nn.RNN(num_questions * 2, hidden_size, num_layers, batch_first=True, nonlinearity='tanh')",
      "unsupported_op_workaround", "replace", False,
      "self.rnn = TanhRNN(num_questions * 2, hidden_size, num_layers)  # Linear+tanh loop; nn.RNN is not on Ascend's supported list",
      "torch.nn.RNN is marked unsupported on A2/A3 in Ascend's 2.7.1 list and by msFmkTransplt; whether it errors or decomposes/falls back is unconfirmed"),
])

E("edu_lpkt", "EduKTM/LPKT/LPKT.py", "device_branch_or_abstraction",
  "bigdata-ustc/EduKTM EduKTM/LPKT/LPKT.py (module-level device)", [
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "unchanged, LPKT silently trains on CPU on an NPU host; the class exposes no device argument"),
])

E("edu_dkt_example", "examples/DKT/run_dkt.py", "explicit_replacement",
  "EduKTM examples/DKT (driver script calling DKT.train(..., device=\"cuda\"))", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C('dkt.train(train_loader, test_loader, epoch=args.epoch, device="cuda", lr=args.lr)', "device_type", "replace", True,
      'dkt.train(train_loader, test_loader, epoch=args.epoch, device="npu", lr=args.lr)',
      "'cuda' device string passed into the library"),
    C('dkt.load(args.params, device="cuda")', "device_type", "replace", True, 'dkt.load(args.params, device="npu")',
      "becomes torch.load(map_location='cuda'), which fails without CUDA"),
    C('auc = dkt.eval(test_loader, device="cuda")', "device_type", "replace", True, 'auc = dkt.eval(test_loader, device="npu")',
      "'cuda' device string"),
])

E("educdm_ncdm_example", "examples/NCDM/run_ncdm.py", "device_branch_or_abstraction",
  "bigdata-ustc/EduCDM examples/NCDM (NCDM.train(..., device=args.device))", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C('parser.add_argument("--device", type=str, default="cuda:0", help="cuda:N or cpu")', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu:0", help="npu:N or cpu")',
      "with the default left at cuda:0 the fallback below silently switches training to CPU"),
    C('if args.device.startswith("cuda") and not torch.cuda.is_available():', "torch_cuda_api", "replace", False,
      'if args.device.startswith("npu") and not torch.npu.is_available():',
      "availability fallback; harmless once the default is npu"),
    C('if args.device.startswith("cuda"):', "device_type", "replace", False, 'if args.device.startswith("npu"):',
      "seeding/log guard; unchanged it is simply skipped"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(args.seed)",
      "behind the guard above"),
    C("torch.cuda.get_device_name(args.device)", "torch_cuda_api", "replace", False,
      'logging.info("training on %s (%s)" % (args.device, torch.npu.get_device_name(args.device)))',
      "log line behind the guard above"),
])

E("kt_environment", "environment.yml", "explicit_replacement",
  "conda environment.yml for EduKTM/EduCDM/GKT/DKVMN baselines with cudatoolkit", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None, "NVIDIA conda channel, not needed"),
    C("- cudatoolkit=11.3", "torch_cuda_api", "removal", False, None,
      "CUDA runtime package; useless on an Ascend host (whether it resolves on aarch64 is unconfirmed)"),
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "torch_cuda_api", "replace", True,
      "- --extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index"),
    C("torch==1.12.1+cu113", "torch_cuda_api", "replace", True, "- torch==2.1.0",
      "+cu113 build; torch must match the torch-npu release"),
    C("EduKTM==0.0.9", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post12",
      "the torch-npu pin"),
])

# ----------------------------------------------------------------------------------------------- SAINT+ (EdNet / Riiid)
E("saint_train_ddp", "train_ddp.py", "explicit_replacement",
  "SAINT+ EdNet-KT1 DDP trainer in the style of the Riiid competition repos (torchrun, AMP, apex FusedAdam)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", False,
      "from torch_npu.npu.amp import GradScaler, autocast",
      "torch.cuda.amp autocast/GradScaler disable themselves with a warning when CUDA is absent: training still runs, in fp32"),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", False,
      "from torch_npu.optim import NpuFusedAdamW as FusedAdam",
      "apex CUDA kernels are unavailable; the ImportError is caught and AdamW is used, so this is performance only"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "lazy no-op without CUDA"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "per-rank device binding; fails without CUDA"),
    C("pin_memory=True, drop_last=True, collate_fn=collate_fn)", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device=\"npu\", drop_last=True, collate_fn=collate_fn)",
      "pinning is silently dropped without pin_memory_device; performance only"),
    C("pin_memory=True, collate_fn=collate_fn)", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device=\"npu\", collate_fn=collate_fn)", "same, validation loader"),
    C("batch = {k: v.cuda(local_rank, non_blocking=True) for k, v in batch.items()}", "tensor_to_device", "replace", True,
      "batch = {k: v.npu(local_rank, non_blocking=True) for k, v in batch.items()}", "batch placement"),
    C('batch = {k: v.to("cuda", non_blocking=True) for k, v in batch.items()}', "device_type", "replace", True,
      'batch = {k: v.to("npu", non_blocking=True) for k, v in batch.items()}', "eval batch placement"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=use_amp):', "amp", "replace", False,
      'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=use_amp):',
      "autocast for 'cuda' is disabled with a warning on an NPU host; eval then runs in fp32"),
    C('backend = cfg.get("dist", {}).get("backend", "nccl")', "dist_backend", "replace", False,
      'backend = cfg.get("dist", {}).get("backend", "hccl")',
      "fallback only used when the YAML has no dist.backend (the shipped config sets it)"),
    C("torch.cuda.set_device(0)", "torch_cuda_api", "replace", True, "torch.npu.set_device(0)",
      "--no-ddp single-process path"),
    C("torch.cuda.get_device_name(local_rank)", "torch_cuda_api", "replace", True,
      'print(f"world_size={world_size} device={torch.npu.get_device_name(local_rank)} amp={cfg[\'train\'][\'amp\']}")',
      "get_device_name initialises CUDA and raises on an NPU host"),
    C("dropout=mcfg[\"dropout\"]).cuda(local_rank)", "tensor_to_device", "replace", True,
      "dropout=mcfg[\"dropout\"]).npu(local_rank)", "model placement"),
    C('ckpt = torch.load(args.resume, map_location=f"cuda:{local_rank}")', "device_type", "replace", True,
      'ckpt = torch.load(args.resume, map_location=f"npu:{local_rank}")', "map_location to a CUDA device fails"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "initialises CUDA and raises without it"),
    C("mem = torch.cuda.max_memory_allocated(local_rank) / 1024 ** 3", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated(local_rank) / 1024 ** 3", "logging only, silently 0"),
    C("torch.cuda.reset_peak_memory_stats(local_rank)", "torch_cuda_api", "replace", False,
      "torch.npu.reset_peak_memory_stats(local_rank)",
      "probably raises on a CPU-only torch build (no CUDA binding), unconfirmed"),
])

E("saint_model", "saint_model.py", "device_branch_or_abstraction",
  "SAINT+ model (nn.Transformer encoder-decoder) from Riiid / EdNet KT repos", [
    C('DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'DEVICE = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "positions and the future mask are created with .to(DEVICE); on CPU they clash with the NPU model"),
    C("self.transformer = nn.Transformer(d_model=d_model, nhead=n_heads, num_encoder_layers=n_layers,",
      "unsupported_op_workaround", "replace", False,
      "self.transformer = SAINTEncoderDecoder(d_model=d_model, nhead=n_heads, num_encoder_layers=n_layers,",
      "Ascend's 2.7.1 list marks torch.nn.Transformer (and Transformer.forward in msFmkTransplt) unsupported; it is built from supported layers, so the real effect is unconfirmed"),
])

E("saint_ednet_dataset", "ednet_dataset.py", "device_branch_or_abstraction",
  "EdNet-KT1 / Riiid sequence dataset with an optional RAPIDS cuDF group-by", [])

E("saint_launch_sh", "scripts/train_ednet_ddp.sh", "explicit_replacement",
  "torchrun launcher for SAINT+ DDP training with NCCL tuning variables", [
    C("=set -euo pipefail", "env_var", "npu_only_addition", True,
      "set +u; " + SET_ENV + "; set -u",
      "CANN environment for torch_npu/HCCL; set_env.sh trips over `set -u` (unbound CMAKE_PREFIX_PATH), hence the +u/-u"),
    C("export CUDA_VISIBLE_DEVICES=${GPUS}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${GPUS}",
      "device selection for the NPU runtime; unchanged every rank still sees all NPUs"),
    C("export NCCL_DEBUG=${NCCL_DEBUG:-WARN}", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}", "NCCL logging knob; no effect on HCCL"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only, ignored by HCCL"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NVLink P2P setting, NCCL-only"),
    C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "matters for the multi-node case: HCCL picks the host NIC by its own priority unless HCCL_SOCKET_IFNAME is set"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu watchdog counterpart (its default is already 1 per MindCluster docs)"),
    C("nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info", "nvidia-smi is absent on Ascend hosts and the script runs with set -e"),
])

E("saint_config", "configs/saint_ednet.yaml", "explicit_replacement",
  "YAML config of the SAINT+ DDP trainer", [
    C("backend: nccl", "dist_backend", "replace", True, "backend: hccl",
      "read by train_ddp.py and passed to init_process_group; NCCL is not available with torch_npu"),
])
