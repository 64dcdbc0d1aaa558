# Labels for probe257: multimodal sentiment analysis / emotion recognition in conversation (CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
NO_SEED = ("silent no-op on an NPU host (torch.cuda seeding is queued lazily and never runs); torch.manual_seed "
           "called just before already seeds the NPU generator, so only a clarity edit")

# ----------------------------------------------------------------------------------------------- MMSA
E("mmsa_run", "src/MMSA/run.py", "device_branch_or_abstraction",
  "thuiar/MMSA run.py (MMSA_run/_run/MMSA_test/SENA_run, gpu_ids=[0], torch.cuda.set_device)", [
    C('os.environ["CUBLAS_WORKSPACE_CONFIG"]', "env_var", "removal", False, None,
      "cuBLAS determinism knob; ignored on NPU (determinism there comes from torch.use_deterministic_algorithms / HCCL_DETERMINISTIC)"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "run.py is where MMSA picks the device; torch.npu must exist before assign_gpu/set_device run"),
    C("allocated = torch.cuda.memory_allocated(device)", "torch_cuda_api", "replace", False,
      "allocated = torch.npu.memory_allocated(device) / 1024 ** 2",
      "CUDA never initialised on an NPU host, memory_stats returns {} so this silently logs 0; debug log only"),
    C("peak = torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated(device) / 1024 ** 2",
      "same as above: silently 0, debug log only"),
    C("torch.cuda.set_device(initial_args['device'])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(initial_args['device'])",
      "torch.cuda.set_device rejects an npu device / has no CUDA runtime -> raises in tune mode"),
    C("torch.cuda.set_device(args['device'])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args['device'])",
      "raises on an NPU host; the call exists so RNN kernels land on the chosen card, keep it as torch.npu.set_device"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op when CUDA is not initialised; cached NPU memory between seeds is simply not released (memory only)"),
    C("device = torch.device(f'cuda:{gpu_id}')", "device_type", "replace", True,
      "device = torch.device(f'npu:{gpu_id}')",
      "MMSA_test builds its own device; model.to('cuda:N') fails on an NPU host"),
    C("torch.cuda.empty_cache()  # release cached blocks", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # release cached blocks held by this worker",
      "no-op on an NPU host; memory only"),
])

E("mmsa_functions", "src/MMSA/utils/functions.py", "device_branch_or_abstraction",
  "thuiar/MMSA utils/functions.py (assign_gpu with pynvml free-memory selection, setup_seed)", [
    C("=import pynvml", "torch_cuda_api", "removal", False, None,
      "NVML import itself succeeds (pure-Python wheel) but is dead once the selection below uses torch.npu"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)", NO_SEED),
    C("if len(gpu_ids) == 0 and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if len(gpu_ids) == 0 and torch.npu.is_available():",
      "False on an NPU host -> automatic card selection silently skipped"),
    C("pynvml.nvmlInit()", "torch_cuda_api", "removal", True, None,
      "NVML library is absent on an Ascend host -> NVMLError_LibraryNotFound"),
    C("n_gpus = pynvml.nvmlDeviceGetCount()", "torch_cuda_api", "replace", True,
      "n_gpus = torch.npu.device_count()", "NVML call fails; count NPUs through torch_npu"),
    C("handle = pynvml.nvmlDeviceGetHandleByIndex(g_id)", "torch_cuda_api", "removal", True, None,
      "NVML handle has no Ascend equivalent in torch_npu"),
    C("meminfo = pynvml.nvmlDeviceGetMemoryInfo(handle)", "torch_cuda_api", "replace", True,
      "free_mem, total_mem = torch.npu.mem_get_info(g_id)",
      "per-card free memory through torch.npu.mem_get_info instead of NVML"),
    C("mem_used = meminfo.used", "torch_cuda_api", "replace", True, "mem_used = total_mem - free_mem",
      "follows from the NVML replacement on the previous line"),
    C("using_cuda = len(gpu_ids) > 0 and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "using_npu = len(gpu_ids) > 0 and torch.npu.is_available()",
      "False on an NPU host -> every run silently falls back to CPU"),
    C("device = torch.device('cuda:%d' % int(gpu_ids[0]) if using_cuda else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu:%d' % int(gpu_ids[0]) if using_npu else 'cpu')", "cuda device string"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
      "M-SENA device list would always report 'No GPU found' on an NPU host"),
    C("for i in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", True,
      "for i in range(torch.npu.device_count()):", "returns 0 on an NPU host -> empty device list"),
    C("props = torch.cuda.get_device_properties(i)", "torch_cuda_api", "replace", True,
      "props = torch.npu.get_device_properties(i)", "CUDA lazy init raises on an NPU host"),
    C('lines.append(f"GPU {i}: {props.name} ({total_mb} MB, sm_{props.major}{props.minor})")', "device_capability_check",
      "replace", False, 'lines.append(f"NPU {i}: {props.name} ({total_mb} MB)")',
      "NPU device properties carry only name/total_memory/L2/core counts; major/minor come back empty (Ascend 2.7.1 list)"),
])

E("mmsa_selfmm_trainer", "src/MMSA/trains/multiTask/SELF_MM.py", "device_branch_or_abstraction",
  "thuiar/MMSA trains/multiTask/SELF_MM.py (Self-MM label generation, all tensors .to(args.device))", [])

E("mmsa_setup", "setup.py", "explicit_replacement",
  "thuiar/MMSA setup.py (install_requires with pynvml, torch)", [
    C('"pynvml>=11.0",', "torch_cuda_api", "removal", False, None,
      "NVML binding; installs fine on an Ascend host but is unused once assign_gpu uses torch.npu"),
    C('"torch>=1.11",', "import_torch_npu", "npu_only_addition", True, '"torch-npu==2.1.0.post17",',
      "torch_npu is a separate wheel and must match the torch version (torch pin tightened to 2.1.0 alongside)"),
])

E("mmsa_tune_sh", "scripts/run_tune.sh", "explicit_replacement",
  "MMSA-style tuning launcher: one model per GPU, nvidia-smi polling, CUDA_VISIBLE_DEVICES", [
    C("=set -e", "import_torch_npu", "npu_only_addition", True, SET_ENV,
      "CANN environment must be sourced before python imports torch_npu (libascendcl/libhccl not found otherwise)"),
    C("used=$(nvidia-smi --query-gpu=memory.used", "torch_cuda_api", "replace", True,
      "used=$(npu-smi info -t usages -i ${gpu} | awk -F: '/HBM Capacity/ {c=$2} /HBM Usage Rate/ {u=$2} END {print int(c*u/100)}')",
      "nvidia-smi does not exist on an Ascend host; npu-smi reports HBM capacity and usage rate"),
    C("CUDA_VISIBLE_DEVICES=${gpu} nohup python -m MMSA", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${gpu} nohup python -m MMSA -m ${model} -d ${DATASET} -t --tune-times ${TUNE_TIMES} \\",
      "CUDA_VISIBLE_DEVICES is ignored by the NPU runtime: every job would land on npu:0"),
])

# ----------------------------------------------------------------------------------------------- MulT
E("mult_main", "main.py", "device_branch_or_abstraction",
  "yaohungt/Multimodal-Transformer main.py (--no_cuda, set_default_tensor_type, hyp_params.use_cuda)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on an NPU host -> use_cuda stays False and MulT silently trains on CPU"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)", NO_SEED),
    C("torch.set_default_tensor_type('torch.cuda.FloatTensor')", "device_type", "replace", True,
      "torch.set_default_device('npu')",
      "CUDA tensor type unavailable; Ascend's list says set_default_tensor_type does not accept torch.npu.*Tensor, so use set_default_device"),
])

E("mult_train", "src/train.py", "explicit_replacement",
  "yaohungt/Multimodal-Transformer src/train.py (model.cuda(), torch.cuda.device(0), nn.DataParallel, warpctc CTC)", [
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ".cuda() fails on an NPU host"),
    C("from warpctc_pytorch import CTCLoss", "custom_cuda_extension", "replace", True, "from torch.nn import CTCLoss",
      "warp-ctc is an nvcc/THC-built extension that cannot be built against torch_npu; torch.nn.CTCLoss (ctc_loss has an NPU kernel) replaces it"),
    C("ctc_criterion = CTCLoss()", "custom_cuda_extension", "replace", True,
      "ctc_criterion = CTCLoss(blank=0, reduction='sum', zero_infinity=True)",
      "warp-ctc sums the loss over the batch; nn.CTCLoss defaults to 'mean', which would silently rescale the CTC gradient"),
    C("ctc_a2l_module, ctc_v2l_module = ctc_a2l_module.cuda(), ctc_v2l_module.cuda()", "tensor_to_device", "replace", True,
      "ctc_a2l_module, ctc_v2l_module = ctc_a2l_module.npu(), ctc_v2l_module.npu()", ".cuda() fails"),
    C("=with torch.cuda.device(0):", "torch_cuda_api", "replace", True, "with torch.npu.device(0):",
      "entering torch.cuda.device initialises CUDA -> raises on an NPU host"),
    C("text, audio, vision, eval_attr = text.cuda(), audio.cuda(), vision.cuda(), eval_attr.cuda()", "tensor_to_device",
      "replace", True, "text, audio, vision, eval_attr = text.npu(), audio.npu(), vision.npu(), eval_attr.npu()", ".cuda() fails"),
    C("ctc_a2l_net = nn.DataParallel(ctc_a2l_module) if batch_size > 10 else ctc_a2l_module", "unsupported_op_workaround",
      "replace", True, "ctc_a2l_net = ctc_a2l_module",
      "torch.nn.DataParallel is marked unsupported on Ascend (2.7.1 list, msFmkTransplt); single-card run needs no wrapper"),
    C("ctc_v2l_net = nn.DataParallel(ctc_v2l_module) if batch_size > 10 else ctc_v2l_module", "unsupported_op_workaround",
      "replace", True, "ctc_v2l_net = ctc_v2l_module", "nn.DataParallel unsupported on Ascend"),
    C("ctc_a2l_loss = ctc_criterion(a2l_position.transpose(0,1).cpu(), l_position, a_length, l_length)",
      "custom_cuda_extension", "replace", True,
      "ctc_a2l_loss = ctc_criterion(a2l_position.transpose(0,1).log_softmax(-1).cpu(), l_position, a_length, l_length)",
      "warp-ctc call site: warp-ctc applies softmax internally, nn.CTCLoss expects log-probabilities (T,N,C)"),
    C("ctc_v2l_loss = ctc_criterion(v2l_position.transpose(0,1).cpu(), l_position, v_length, l_length)",
      "custom_cuda_extension", "replace", True,
      "ctc_v2l_loss = ctc_criterion(v2l_position.transpose(0,1).log_softmax(-1).cpu(), l_position, v_length, l_length)",
      "warp-ctc call site, same conversion"),
    C("ctc_loss = ctc_loss.cuda() if hyp_params.use_cuda else ctc_loss", "tensor_to_device", "replace", True,
      "ctc_loss = ctc_loss.npu() if hyp_params.use_cuda else ctc_loss", ".cuda() fails"),
    C("=net = nn.DataParallel(model) if batch_size > 10 else model", "unsupported_op_workaround", "replace", True,
      "net = model", "nn.DataParallel unsupported on Ascend"),
    C("with torch.cuda.device(0):  # same card as training", "torch_cuda_api", "replace", True,
      "with torch.npu.device(0):  # same card as training", "raises on an NPU host"),
    C("text, audio, vision = text.cuda(), audio.cuda(), vision.cuda()", "tensor_to_device", "replace", True,
      "text, audio, vision = text.npu(), audio.npu(), vision.npu()", ".cuda() fails"),
    C("eval_attr = eval_attr.cuda()", "tensor_to_device", "replace", True, "eval_attr = eval_attr.npu()", ".cuda() fails"),
    C("=a2l_net = nn.DataParallel(ctc_a2l_module) if batch_size > 10 else ctc_a2l_module", "unsupported_op_workaround",
      "replace", True, "a2l_net = ctc_a2l_module", "nn.DataParallel unsupported on Ascend"),
    C("=v2l_net = nn.DataParallel(ctc_v2l_module) if batch_size > 10 else ctc_v2l_module", "unsupported_op_workaround",
      "replace", True, "v2l_net = ctc_v2l_module", "nn.DataParallel unsupported on Ascend"),
    C("eval_net = nn.DataParallel(model) if batch_size > 10 else model", "unsupported_op_workaround", "replace", True,
      "eval_net = model", "nn.DataParallel unsupported on Ascend"),
])

E("mult_transformer", "modules/transformer.py", "explicit_replacement",
  "yaohungt/Multimodal-Transformer modules/transformer.py (buffered_future_mask with tensor.is_cuda)", [
    C("if tensor.is_cuda:", "device_type", "replace", True, "if tensor.is_npu:",
      "is_cuda is False for NPU tensors, so the causal mask stays on the host and the attention add mixes devices "
      "(only masked if a global default NPU device is set)"),
    C("future_mask = future_mask.cuda()", "tensor_to_device", "replace", True, "future_mask = future_mask.to(tensor.device)",
      ".cuda() fails once the branch above is taken on NPU"),
])

# ----------------------------------------------------------------------------------------------- MISA
E("misa_solver", "src/solver.py", "device_branch_or_abstraction",
  "declare-lab/MISA src/solver.py (model.cuda() under is_available, to_gpu everywhere)", [
    C("torch.cuda.manual_seed_all(123)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(123)", NO_SEED),
    C("if torch.cuda.is_available() and cuda:", "torch_cuda_api", "replace", True, "if torch.npu.is_available() and cuda:",
      "False on an NPU host -> model silently stays on CPU while to_gpu() moves the batches"),
    C("self.model.cuda()", "tensor_to_device", "replace", True, "self.model.npu()", ".cuda() fails"),
])

E("misa_functions", "src/utils/functions.py", "device_branch_or_abstraction",
  "declare-lab/MISA src/utils/functions.py (to_gpu/to_cpu helpers, DiffLoss, CMD)", [
    C("if torch.cuda.is_available() and not on_cpu:", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and not on_cpu:", "helper used by every call site; False on NPU -> batches stay on CPU"),
    C("x = x.cuda(gpu_id)", "tensor_to_device", "replace", True, "x = x.npu(gpu_id)", ".cuda() fails"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "to_cpu: False on NPU -> NPU tensor returned to callers that call .numpy()"),
])

E("misa_models", "src/models.py", "explicit_replacement",
  "declare-lab/MISA src/models.py (BERT + bi-LSTM packed sequences, shared/private encoders)", [
    C("packed_sequence = pack_padded_sequence(sequence, lengths.cpu())", "unsupported_op_workaround", "replace", False,
      "packed_sequence = pack_padded_sequence(sequence.cpu(), lengths.cpu()).to(sequence.device)",
      "unconfirmed: Ascend's 2.7.1 list marks pack_padded_sequence unsupported and msFmkTransplt flags it, yet "
      "_pack_padded_sequence has an NPU kernel; needs a test. Fallback shown: pack on the host, run the LSTM on NPU"),
    C("packed_normed_h1 = pack_padded_sequence(normed_h1, lengths.cpu())", "unsupported_op_workaround", "replace", False,
      "packed_normed_h1 = pack_padded_sequence(normed_h1.cpu(), lengths.cpu()).to(normed_h1.device)",
      "unconfirmed, same as above"),
])

E("misa_train", "src/train.py", "device_branch_or_abstraction",
  "declare-lab/MISA src/train.py (seeding and solver entry)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("torch.cuda.manual_seed_all(random_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(random_seed)", NO_SEED),
])

# ----------------------------------------------------------------------------------------------- MMIM
E("mmim_main", "src/main.py", "device_branch_or_abstraction",
  "declare-lab/Multimodal-Infomax src/main.py (set_seed switching default tensor type to CUDA)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on NPU -> default tensor type silently stays CPU"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)", NO_SEED),
    C("torch.set_default_tensor_type('torch.cuda.FloatTensor')", "device_type", "replace", True,
      "torch.set_default_device('npu')",
      "CUDA tensor type; set_default_tensor_type does not accept torch.npu.*Tensor per Ascend's list"),
])

E("mmim_solver", "src/solver.py", "explicit_replacement",
  "declare-lab/Multimodal-Infomax src/solver.py (torch.device('cuda'), torch.cuda.device(0) + .cuda() batches)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on NPU -> model kept on CPU while batches are .cuda()'d"),
    C('self.device = torch.device("cuda")', "device_type", "replace", True, 'self.device = torch.device("npu")',
      "cuda device object"),
    C("=with torch.cuda.device(0):", "torch_cuda_api", "replace", True, "with torch.npu.device(0):", "raises on an NPU host"),
    C("text.cuda(), visual.cuda(), audio.cuda(), y.cuda(), l.cuda(), bert_sent.cuda(), \\", "tensor_to_device", "replace",
      True, "text.npu(), visual.npu(), audio.npu(), y.npu(), l.npu(), bert_sent.npu(), \\",
      "first continuation line of the batch transfer"),
    C("=bert_sent_type.cuda(), bert_sent_mask.cuda()", "tensor_to_device", "replace", True,
      "bert_sent_type.npu(), bert_sent_mask.npu()", "second continuation line of the same statement"),
    C("with torch.cuda.device(0):  # evaluation", "torch_cuda_api", "replace", True,
      "with torch.npu.device(0):  # evaluation also runs on the first card", "raises on an NPU host"),
    C("text, audio, vision, y = text.cuda(), audio.cuda(), vision.cuda(), y.cuda()", "tensor_to_device", "replace", True,
      "text, audio, vision, y = text.npu(), audio.npu(), vision.npu(), y.npu()", ".cuda() fails"),
    C("lengths = lengths.cuda()", "tensor_to_device", "replace", True, "lengths = lengths.npu()", ".cuda() fails"),
    C("bert_sent, bert_sent_type, bert_sent_mask = bert_sent.cuda(), bert_sent_type.cuda(), bert_sent_mask.cuda()",
      "tensor_to_device", "replace", True,
      "bert_sent, bert_sent_type, bert_sent_mask = bert_sent.npu(), bert_sent_type.npu(), bert_sent_mask.npu()",
      ".cuda() fails"),
])

# ----------------------------------------------------------------------------------------------- MAG-BERT
E("magbert_driver", "multimodal_driver.py", "device_branch_or_abstraction",
  "WasifurRahman/BERT_multimodal_transformer multimodal_driver.py (DEVICE from global_configs, seeding)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; must precede the global_configs import that builds the device"),
    C("use_pin = torch.cuda.is_available()", "pin_memory", "replace", False, "use_pin = torch.npu.is_available()",
      "False on NPU -> pinned host memory silently disabled; performance only"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", NO_SEED),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)", NO_SEED),
])

E("magbert_global_configs", "global_configs.py", "device_branch_or_abstraction",
  "WasifurRahman/BERT_multimodal_transformer global_configs.py (CUDA_VISIBLE_DEVICES + DEVICE)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = "0"', "env_var", "replace", False,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0"',
      "ignored by the NPU runtime, but the process uses npu:0 anyway, so nothing changes unless the value is edited"),
    C('DEVICE = torch.device("cuda:0")', "device_type", "replace", True, 'DEVICE = torch.device("npu:0")',
      "every .to(DEVICE) in the driver and MAG module goes through this constant"),
])

# ----------------------------------------------------------------------------------------------- LMF / TFN
E("lmf_model", "model.py", "explicit_replacement",
  "Justin1904/Low-rank-Multimodal-Fusion model.py (is_cuda -> torch.cuda.FloatTensor DTYPE switch)", [
    C("if audio_h.is_cuda:", "device_type", "replace", True, "if audio_h.is_npu:",
      "False for NPU tensors -> the appended ones are CPU tensors and torch.cat with NPU activations fails"),
    C("DTYPE = torch.cuda.FloatTensor", "device_type", "replace", True, "DTYPE = torch.npu.FloatTensor",
      "CUDA legacy tensor type; .type(DTYPE) would fail once the branch is taken"),
])

E("lmf_train", "train_mosi.py", "explicit_replacement",
  "Justin1904/Low-rank-Multimodal-Fusion train_mosi.py (options['cuda'], DTYPE, Variable)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ".cuda() fails"),
    C("DTYPE = torch.cuda.FloatTensor", "device_type", "replace", True, "DTYPE = torch.npu.FloatTensor",
      "all batches are moved with .type(DTYPE); CUDA type unavailable"),
])

# ----------------------------------------------------------------------------------------------- DialogueRNN
E("dialoguernn_train", "DialogueRNN/train_IEMOCAP.py", "explicit_replacement",
  "declare-lab/conv-emotion DialogueRNN/train_IEMOCAP.py (args.cuda, [d.cuda() for d in data])", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("[d.cuda() for d in data[:-1]] if cuda else data[:-1]", "tensor_to_device", "replace", True,
      "[d.npu() for d in data[:-1]] if cuda else data[:-1]", ".cuda() fails"),
    C("args.cuda = torch.cuda.is_available() and not args.no_cuda", "torch_cuda_api", "replace", True,
      "args.cuda = torch.npu.is_available() and not args.no_cuda", "False on NPU -> silently trains on CPU"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", ".cuda() fails"),
    C("loss_function  = MaskedNLLLoss(loss_weights.cuda() if cuda else loss_weights)", "tensor_to_device", "replace", True,
      "loss_function  = MaskedNLLLoss(loss_weights.npu() if cuda else loss_weights)", ".cuda() fails"),
])

E("dialoguernn_model", "DialogueRNN/model.py", "explicit_replacement",
  "declare-lab/conv-emotion DialogueRNN/model.py (module-level FloatTensor/LongTensor aliases, .type(U.type()))", [
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on NPU -> CPU aliases; x.type(LongTensor) then moves NPU batches back to the host before the embedding"),
    C("FloatTensor = torch.cuda.FloatTensor", "device_type", "replace", True, "FloatTensor = torch.npu.FloatTensor",
      "used by CNNFeatureExtractor mask"),
    C("LongTensor = torch.cuda.LongTensor", "device_type", "replace", True, "LongTensor = torch.npu.LongTensor",
      "used by CNNFeatureExtractor token ids"),
    C("ByteTensor = torch.cuda.ByteTensor", "device_type", "replace", False, "ByteTensor = torch.npu.ByteTensor",
      "alias is never used in this file; edited for consistency only"),
])

# ----------------------------------------------------------------------------------------------- DialogueGCN
E("dialoguegcn_model", "DialogueGCN/model.py", "explicit_replacement",
  "declare-lab/conv-emotion DialogueGCN/model.py (batch_graphify/pad/MaskedEdgeAttention with no_cuda flags)", [
    C("mask = Variable(torch.ones(alpha.size()) * 1e-10).detach().cuda()", "tensor_to_device", "replace", True,
      "mask = Variable(torch.ones(alpha.size()) * 1e-10).detach().npu()", ".cuda() fails (no_cuda is False by default)"),
    C("mask_copy = Variable(torch.zeros(alpha.size())).detach().cuda()", "tensor_to_device", "replace", True,
      "mask_copy = Variable(torch.zeros(alpha.size())).detach().npu()", ".cuda() fails"),
    C("scores = scores.cuda()", "tensor_to_device", "replace", False, "scores = scores.npu()",
      "unreachable: attn_type is hard-coded to 'attn1'; edited for consistency"),
    C("return torch.cat([var, torch.zeros(length - var.size(0), *var.size()[1:]).cuda()])", "tensor_to_device", "replace",
      True, "return torch.cat([var, torch.zeros(length - var.size(0), *var.size()[1:]).npu()])",
      "this branch is the live one (every tensor is an instance of Variable)"),
    C("return torch.cat([tensor, torch.zeros(length - tensor.size(0), *tensor.size()[1:]).cuda()])", "tensor_to_device",
      "replace", False, "return torch.cat([tensor, torch.zeros(length - tensor.size(0), *tensor.size()[1:]).npu()])",
      "dead branch: isinstance(t, Variable) is always True since torch 0.4"),
    C("node_features = node_features.cuda()", "tensor_to_device", "replace", True, "node_features = node_features.npu()",
      ".cuda() fails"),
    C("edge_index = edge_index.cuda()", "tensor_to_device", "replace", True, "edge_index = edge_index.npu()", ".cuda() fails"),
    C("edge_norm = edge_norm.cuda()", "tensor_to_device", "replace", True, "edge_norm = edge_norm.npu()", ".cuda() fails"),
    C("edge_type = edge_type.cuda()", "tensor_to_device", "replace", True, "edge_type = edge_type.npu()", ".cuda() fails"),
    C("input_conversation_length = input_conversation_length.cuda()", "tensor_to_device", "replace", True,
      "input_conversation_length = input_conversation_length.npu()", ".cuda() fails"),
    C("start_zero = start_zero.cuda()", "tensor_to_device", "replace", True, "start_zero = start_zero.npu()", ".cuda() fails"),
    C("self.gru = nn.GRU(input_size=D_m, hidden_size=D_e, num_layers=2, bidirectional=True, dropout=dropout)",
      "unsupported_op_workaround", "replace", False,
      "self.gru = nn.GRU(input_size=D_m, hidden_size=D_e, num_layers=2, bidirectional=True)  # inter-layer dropout applied outside",
      "unconfirmed: Ascend's 2.7.1 list says nn.GRU does not support the dropout argument; whether it errors or is ignored is not stated"),
])

E("dialoguegcn_train", "DialogueGCN/train_IEMOCAP.py", "explicit_replacement",
  "declare-lab/conv-emotion DialogueGCN/train_IEMOCAP.py (seed_everything, args.cuda, .cuda() batches)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", NO_SEED),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)", NO_SEED),
    C("ei, et, en = ei.cuda(), et.cuda(), en.cuda()", "tensor_to_device", "replace", True,
      "ei, et, en = ei.npu(), et.npu(), en.npu()", ".cuda() fails"),
    C("[d.cuda() for d in data[:-1]] if cuda else data[:-1]", "tensor_to_device", "replace", True,
      "textf, visuf, acouf, qmask, umask, label = [d.npu() for d in data[:-1]] if cuda else data[:-1]", ".cuda() fails"),
    C("args.cuda = torch.cuda.is_available() and not args.no_cuda", "torch_cuda_api", "replace", True,
      "args.cuda = torch.npu.is_available() and not args.no_cuda",
      "False on NPU -> batches stay on CPU while the model's own no_cuda flag still calls .cuda()"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", ".cuda() fails"),
    C("loss_function  = nn.NLLLoss(loss_weights.cuda() if cuda else loss_weights)", "tensor_to_device", "replace", True,
      "loss_function  = nn.NLLLoss(loss_weights.npu() if cuda else loss_weights)", ".cuda() fails"),
])

# ----------------------------------------------------------------------------------------------- MMGCN
E("mmgcn_model", "model_GCN.py", "explicit_replacement",
  "hujingwen/MMGCN GCNII graph part (create_big_adj on .cuda(), modal embeddings)", [
    C("node_features = node_features.cuda()", "tensor_to_device", "replace", True, "node_features = node_features.npu()",
      ".cuda() fails"),
    C("emb_idx = torch.LongTensor([0, 1, 2]).cuda()", "tensor_to_device", "replace", True,
      "emb_idx = torch.LongTensor([0, 1, 2]).npu()", ".cuda() fails (with --use_modal)"),
    C("adj = torch.zeros((modal_num*all_length, modal_num*all_length)).cuda()", "tensor_to_device", "replace", True,
      "adj = torch.zeros((modal_num*all_length, modal_num*all_length)).npu()", ".cuda() fails"),
])

E("mmgcn_train", "train.py", "explicit_replacement",
  "hujingwen/MMGCN train.py (--gpu -> CUDA_VISIBLE_DEVICES, args.cuda, released checkpoint loading)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", NO_SEED),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)", NO_SEED),
    C("ei, et, en = ei.cuda(), et.cuda(), en.cuda()", "tensor_to_device", "replace", True,
      "ei, et, en = ei.npu(), et.npu(), en.npu()", ".cuda() fails"),
    C("[d.cuda() for d in data[:-1]] if cuda else data[:-1]", "tensor_to_device", "replace", True,
      "textf, visuf, acouf, qmask, umask, label = [d.npu() for d in data[:-1]] if cuda else data[:-1]", ".cuda() fails"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
      "--gpu is the only card selector; ignored by the NPU runtime (must also be set before torch_npu touches the device)"),
    C("args.cuda = torch.cuda.is_available() and not args.no_cuda", "torch_cuda_api", "replace", True,
      "args.cuda = torch.npu.is_available() and not args.no_cuda", "False on NPU -> silent CPU"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", ".cuda() fails"),
    C("loss_function  = MaskedNLLLoss(loss_weights.cuda() if cuda else loss_weights)", "tensor_to_device", "replace", True,
      "loss_function  = MaskedNLLLoss(loss_weights.npu() if cuda else loss_weights)", ".cuda() fails"),
    C("state = torch.load('best_model_{}/model.pth'.format(args.Dataset))", "device_type", "replace", True,
      "state = torch.load('best_model_{}/model.pth'.format(args.Dataset), map_location='cpu')",
      "released checkpoint was saved from CUDA tensors; deserialising to cuda fails without map_location"),
])

E("mmgcn_env", "environment.yml", "explicit_replacement",
  "conda environment.yml of MMGCN/DialogueGCN (pytorch + cudatoolkit + PyG CUDA wheels)", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None, "CUDA runtime channel; harmless but unneeded"),
    C("=- pytorch=1.8.1", "torch_cuda_api", "replace", True, "- pytorch=2.1.0=*cpu*",
      "conda CUDA build of torch 1.8.1; torch_npu needs the matching CPU torch (2.1.0 here)"),
    C("=- cudatoolkit=11.1", "torch_cuda_api", "removal", False, None, "installs without a GPU; dead weight on Ascend"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post17",
      "torch_npu is a pip-only wheel; goes at the top of the pip section"),
    C("--find-links https://data.pyg.org/whl/torch-1.8.0+cu111.html", "custom_cuda_extension", "replace", True,
      "- --find-links https://data.pyg.org/whl/torch-2.1.0+cpu.html",
      "CUDA 11.1 builds of the PyG extensions for torch 1.8: wrong torch ABI and link libcudart"),
    C("=- torch-scatter==2.0.7", "custom_cuda_extension", "replace", False, "- torch-scatter==2.1.2",
      "unconfirmed: compiled CPU/CUDA extension with no NPU kernels; the pure-Python scatter paths run on NPU tensors"),
    C("=- torch-sparse==0.6.10", "custom_cuda_extension", "replace", False, "- torch-sparse==0.6.18",
      "unconfirmed, same as torch-scatter"),
])

# ----------------------------------------------------------------------------------------------- COGMEN
E("cogmen_train", "train.py", "device_branch_or_abstraction",
  "Exploration-Lab/COGMEN train.py (--device default 'cuda', resume from model_checkpoints)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("ckpt = torch.load(model_file)", "device_type", "replace", False, "ckpt = torch.load(model_file, map_location=args.device)",
      "only fails when resuming from a checkpoint written on a CUDA host (e.g. the authors' shared ones)"),
    C('parser.add_argument("--device", type=str, default="cuda", help="Computing device.")', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu", help="Computing device.")',
      "every tensor in the coach goes .to(args.device)"),
])

E("cogmen_eval", "eval.py", "explicit_replacement",
  "Exploration-Lab/COGMEN eval.py (pickled model + stored args from the released checkpoint)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('+ ".pt"', "device_type", "replace", True, '+ ".pt", map_location="npu:0"',
      "whole pickled model saved on CUDA; torch.load needs map_location on an NPU host"),
    C("data[k] = v.to(stored_args.device)", "device_type", "replace", True, 'data[k] = v.to("npu:0")',
      "device comes from the args pickled with the checkpoint, i.e. 'cuda'"),
])

E("cogmen_requirements", "requirements.txt", "explicit_replacement",
  "Exploration-Lab/COGMEN requirements.txt (torch +cu113, PyG wheel index)", [
    C("--find-links https://download.pytorch.org/whl/torch_stable.html", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post17", "torch_npu pin added with the torch pin (the torch line itself is replaced below)"),
    C("=torch==1.10.0+cu113", "torch_cuda_api", "replace", True, "torch==2.1.0",
      "CUDA 11.3 build; torch_npu requires the plain torch of the same version"),
    C("--find-links https://data.pyg.org/whl/torch-1.10.0+cu113.html", "custom_cuda_extension", "replace", True,
      "--find-links https://data.pyg.org/whl/torch-2.1.0+cpu.html",
      "CUDA wheel index for the compiled PyG extensions"),
    C("=torch-scatter==2.0.9", "custom_cuda_extension", "replace", False, "torch-scatter==2.1.2",
      "unconfirmed: compiled extension without NPU kernels (scatter_max used by PyG softmax)"),
    C("=torch-sparse==0.6.12", "custom_cuda_extension", "replace", False, "torch-sparse==0.6.18",
      "unconfirmed, same as torch-scatter"),
])

# ----------------------------------------------------------------------------------------------- MMML-style DDP + AMP
E("mmml_train", "train_ddp.py", "device_branch_or_abstraction",
  "MMML-style (RoBERTa + data2vec) torchrun trainer with DDP, torch.cuda.amp and apex FusedAdam", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", False,
      "from torch_npu.npu.amp import GradScaler, autocast",
      "torch.cuda.amp autocast/GradScaler disable themselves with a warning on an NPU host -> plain fp32; perf/memory only"),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", False,
      "from torch_npu.optim import NpuFusedAdamW",
      "import is guarded; NVIDIA apex is absent so the code silently falls back to AdamW"),
    C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
      'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
      "NCCL variable ignored by HCCL; HCCL_ASYNC_ERROR_HANDLING already defaults to 1"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.local_rank)",
      "raises on an NPU host"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)", NO_SEED),
    C('return FusedAdam(groups, lr=cfg["optim"]["lr"], adam_w_mode=True)', "fused_optimizer", "replace", False,
      'return NpuFusedAdamW(groups, lr=cfg["optim"]["lr"])', "performance only; branch not taken without apex"),
    C('return torch.optim.AdamW(groups, lr=cfg["optim"]["lr"], fused=torch.cuda.is_available())', "fused_optimizer",
      "replace", False, 'return NpuFusedAdamW(groups, lr=cfg["optim"]["lr"])',
      "is_available() is False on NPU so the unfused AdamW runs; NpuFusedAdamW is the fused NPU optimizer"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device -> lazy CUDA init raises on an NPU host"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises on an NPU host"),
    C("mem_gb = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      "mem_gb = torch.npu.max_memory_allocated() / 1024 ** 3", "silently logs 0 (CUDA never initialised); log only"),
    C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", False,
      'model = torch.compile(model, backend="npugraphs")',
      "unconfirmed: compile is off in the shipped config; max-autotune relies on Triton/CUDA graphs, NPU needs torch_npu's backends"),
    C('ckpt = torch.load(args.resume, map_location=f"cuda:{args.local_rank}")', "device_type", "replace", True,
      'ckpt = torch.load(args.resume, map_location=f"npu:{args.local_rank}")', "cuda map_location fails on an NPU host"),
])

E("mmml_config", "configs/mosei.yaml", "explicit_replacement",
  "YAML config read by train_ddp.py (dist backend and device string live here)", [
    C("backend: nccl", "dist_backend", "replace", True, "  backend: hccl", "fed to init_process_group; NCCL unavailable on Ascend"),
    C("=device: cuda", "device_type", "replace", True, "device: npu", "fed to torch.device(cfg['device'], local_rank)"),
])

E("mmml_launch", "scripts/train_mosei_4gpu.sh", "explicit_replacement",
  "torchrun launcher with CUDA_VISIBLE_DEVICES / NCCL_* exports and nvidia-smi", [
    C("=set -euo pipefail", "import_torch_npu", "npu_only_addition", True, SET_ENV, "CANN environment for torch_npu/HCCL"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "card selection silently ignored on NPU (the header even documents overriding it)"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "no HCCL reader; logging only"),
    C("export NCCL_P2P_DISABLE=0", "env_var", "removal", False, None, "NCCL-only, no effect"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only, no effect"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
      "single node: HCCL picks a host NIC itself; matters only for multi-node"),
    C("NGPUS=$(echo ${CUDA_VISIBLE_DEVICES}", "env_var", "replace", True,
      "NGPUS=$(echo ${ASCEND_RT_VISIBLE_DEVICES} | tr ',' '\\n' | wc -l)",
      "after the rename CUDA_VISIBLE_DEVICES is unset (set -u aborts the script)"),
    C("=nvidia-smi", "torch_cuda_api", "replace", True, "npu-smi info",
      "command not found on an Ascend host; with set -e the launcher exits"),
])

E("dockerfile", "docker/Dockerfile", "explicit_replacement",
  "MMSA reproduction Dockerfile (nvidia/cuda base, cu113 torch wheels, warp-ctc build)", [
    C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "torch_cuda_api", "replace", True,
      "FROM quay.io/ascend/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "CUDA base image has no CANN toolkit; torch_npu needs CANN inside the container"),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None, "CUDA toolkit path, unused on Ascend"),
    C("ENV TORCH_CUDA_ARCH_LIST", "env_var", "removal", False, None, "nvcc arch list, only read by CUDA extension builds"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "NVIDIA container runtime variable; Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES (or pass /dev/davinci* explicitly)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "NVIDIA runtime only"),
    C("RUN pip install torch==1.10.1+cu113 torchvision==0.11.2+cu113 torchaudio==0.10.1 \\", "torch_cuda_api", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post17 \\",
      "CUDA builds of torch; torch_npu needs the plain torch of the same version"),
    C("-f https://download.pytorch.org/whl/cu113/torch_stable.html", "torch_cuda_api", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "CUDA 11.3 wheel index"),
    C("RUN git clone https://github.com/SeanNaren/warp-ctc.git", "custom_cuda_extension", "removal", True, None,
      "warp-ctc binding includes THC headers and cannot build against torch 2.x / torch_npu; replaced by nn.CTCLoss in src/train.py"),
])
