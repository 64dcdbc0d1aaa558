ENTRIES = []
def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}
def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# Shorthands used in notes
NO_CUDA = "CUDA is absent on an Ascend host (CPU torch build + torch_npu): raises 'Torch not compiled with CUDA enabled'"
INT_DEV = ("hparams.device is an int (YAML `device: 0`); an int passed to Tensor.to()/.to(device=) means a CUDA ordinal "
           "(transfer_to_npu and msFmkTransplt both rewrite ints to 'npu:{i}', knowledge 2.2/3.4)")
CANN_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"


# --------------------------------------------------------------------------- ROME
E("rome_evaluate", "experiments/evaluate.py", "explicit_replacement",
  "ROME experiments/evaluate.py (CounterFact/zsRE evaluation driver)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry point: register the NPU backend before any device use"),
    C("model = AutoModelForCausalLM.from_pretrained(model_name).cuda()", "tensor_to_device", "replace", True,
      "model = AutoModelForCausalLM.from_pretrained(model_name).npu()", NO_CUDA),
    C('dict(return_orig_weights_device=("cpu" if conserve_memory else "cuda"))', "device_type", "replace", False,
      'dict(return_orig_weights_device=("cpu" if conserve_memory else "npu"))',
      "dead branch: the outer conditional returns dict() when conserve_memory is False, so the 'cuda' arm is never used; edit for hygiene only"),
    C('nethook.get_parameter(model, k)[...] = v.to("cuda")', "tensor_to_device", "replace", True,
      'nethook.get_parameter(model, k)[...] = v.to("npu")', "weight restore after every case; " + NO_CUDA),
])

E("rome_causal_trace", "experiments/causal_trace.py", "explicit_replacement",
  "ROME experiments/causal_trace.py (causal tracing CLI + ModelAndTokenizer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "script entry point (main())"),
    C("model.eval().cuda()", "tensor_to_device", "replace", True, "model.eval().npu()",
      "ModelAndTokenizer moves the model; " + NO_CUDA),
    C('def make_inputs(tokenizer, prompts, device="cuda"):', "device_type", "replace", True,
      'def make_inputs(tokenizer, prompts, device="npu"):',
      "default device used by every caller in this file (predict_token, calculate_hidden_flow, collect_embedding_std)"),
    C("pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
      "DataLoader pins only for CUDA unless pin_memory_device is given; on NPU pinning is silently skipped (perf only)"),
    C('batch = dict_to_(batch, "cuda")', "tensor_to_device", "replace", True, 'batch = dict_to_(batch, "npu")',
      "multivariate-noise path (--noise_level m / t*); " + NO_CUDA),
])

E("rome_main", "rome/rome_main.py", "explicit_replacement",
  "ROME rome/rome_main.py (apply_rome_to_model / execute_rome)", [
    C('return_orig_weights_device="cuda",', "device_type", "replace", True, 'return_orig_weights_device="npu",',
      "default used by evaluate.py whenever --conserve_memory is off: weights_copy .to('cuda') fails on NPU"),
])

E("rome_compute_u", "rome/compute_u.py", "explicit_replacement",
  "ROME rome/compute_u.py (inverse key covariance, left vector)", [
    C('stat.mom2.moment().to("cuda")', "tensor_to_device", "replace", True, 'stat.mom2.moment().to("npu")',
      "covariance is moved to the accelerator before torch.inverse; " + NO_CUDA),
])

E("rome_compute_v", "rome/compute_v.py", "explicit_replacement",
  "ROME rome/compute_v.py (optimise v* / right vector)", [
    C('target_ids = tok(request["target_new"]["str"], return_tensors="pt").to("cuda")[', "tensor_to_device", "replace", True,
      'target_ids = tok(request["target_new"]["str"], return_tensors="pt").to("npu")[', NO_CUDA),
    C('=).to("cuda")', "tensor_to_device", "replace", True, ').to("npu")',
      "input_tok BatchEncoding .to('cuda'); " + NO_CUDA),
    C('rewriting_targets = torch.tensor(-100, device="cuda").repeat(', "tensor_to_device", "replace", True,
      'rewriting_targets = torch.tensor(-100, device="npu").repeat(', NO_CUDA),
    C('delta = torch.zeros((model.config.n_embd,), requires_grad=True, device="cuda")', "tensor_to_device", "replace", True,
      'delta = torch.zeros((model.config.n_embd,), requires_grad=True, device="npu")', NO_CUDA),
])

E("rome_layer_stats", "rome/layer_stats.py", "explicit_replacement",
  "ROME rome/layer_stats.py (second-moment statistics collector, cached .npz)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "module doubles as a CLI (python -m rome.layer_stats)"),
    C("model = AutoModelForCausalLM.from_pretrained(args.model_name).eval().cuda()", "tensor_to_device", "replace", True,
      "model = AutoModelForCausalLM.from_pretrained(args.model_name).eval().npu()", NO_CUDA),
    C("pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
      "passed through tally() to DataLoader; pinning silently disabled without CUDA (perf only)"),
    C('batch = dict_to_(batch, "cuda")', "tensor_to_device", "replace", True, 'batch = dict_to_(batch, "npu")',
      "every statistics batch; " + NO_CUDA),
])

E("rome_runningstats", "util/runningstats.py", "explicit_replacement",
  "ROME/dissect util/runningstats.py (Mean/SecondMoment/Covariance, tally cache)", [
])

E("rome_nethook", "util/nethook.py", "explicit_replacement",
  "ROME util/nethook.py (Trace / TraceDict forward hooks)", [
])

E("rome_ft_baseline", "baselines/ft/ft_main.py", "explicit_replacement",
  "ROME baselines/ft/ft_main.py (constrained fine-tuning baseline)", [
    C('inputs = tok(txt, return_tensors="pt", padding=True).to("cuda")', "tensor_to_device", "replace", True,
      'inputs = tok(txt, return_tensors="pt", padding=True).to("npu")', NO_CUDA),
    C('="cuda"', "tensor_to_device", "replace", True, '"npu"',
      "argument of the multi-line target_ids .to( call; " + NO_CUDA),
])

E("rome_mend_baseline", "baselines/mend/mend_main.py", "explicit_replacement",
  "ROME baselines/mend/mend_main.py (MendRewriteExecutor wrapping a pre-trained MEND)", [
    C('d = torch.load(f"{model_dir}/{model_filename}")', "tensor_to_device", "replace", True,
      'd = torch.load(f"{model_dir}/{model_filename}", map_location="cpu")',
      "released MEND checkpoints hold CUDA-placed tensors; without map_location torch.load tries to restore them on CUDA and fails on an NPU host"),
    C("self.alg.cuda()", "tensor_to_device", "replace", True, "self.alg.npu()", NO_CUDA),
    C('sent_tok = self.tokenizer(sentences, padding=True, return_tensors="pt").to("cuda")', "tensor_to_device", "replace", True,
      'sent_tok = self.tokenizer(sentences, padding=True, return_tensors="pt").to("npu")', NO_CUDA),
    C('target_tok = self.tokenizer(targets, padding=True, return_tensors="pt").to("cuda")', "tensor_to_device", "replace", True,
      'target_tok = self.tokenizer(targets, padding=True, return_tensors="pt").to("npu")', NO_CUDA),
])

E("rome_env_yml", "scripts/rome.yml", "explicit_replacement",
  "ROME scripts/rome.yml (conda environment)", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None,
      "NVIDIA conda channel only serves CUDA runtime packages; unconfirmed that it breaks the solve on an Ascend (often aarch64) host"),
    C("=- pytorch-cuda=11.8", "torch_cuda_api", "removal", False, None,
      "selects the CUDA build of pytorch; torch_npu wants the CPU build (knowledge 1.1). Unconfirmed whether a CUDA build + torch_npu fails"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
      "torch-npu wheel matching pytorch=2.1.0 (knowledge 1.2: 2.1.0.post12 <-> CANN 8.1.RC1)"),
])

E("rome_setup_sh", "scripts/setup_conda.sh", "explicit_replacement",
  "ROME scripts/setup_conda.sh (conda env bootstrap)", [
    C("if ! command -v nvidia-smi > /dev/null 2>&1", "device_capability_check", "replace", True,
      "if ! command -v npu-smi > /dev/null 2>&1", "no nvidia-smi on an Ascend host: the script exits 1 before creating the env"),
    C("DRIVER_VERSION=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)", "device_capability_check", "replace", False,
      "DRIVER_VERSION=$(cat /usr/local/Ascend/driver/version.info | grep Version)", "informational only (no set -e)"),
    C("export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda-11.8}", "env_var", "removal", False, None,
      "CUDA toolkit path is unused on NPU; harmless but misleading"),
    C('echo "export CUDA_HOME=${CUDA_HOME}" > \\', "env_var", "removal", False, None,
      "persists CUDA_HOME into the env's activate.d; no effect on NPU"),
    C("source ${CONDA_HOME}/bin/activate ${ENV_NAME}", "import_torch_npu", "npu_only_addition", True, CANN_ENV,
      "CANN env must be sourced before torch_npu is imported (libascendcl/libhccl not found otherwise)"),
    C("python -c \"import torch; print('torch', torch.__version__, 'cuda available:', torch.cuda.is_available())\"",
      "torch_cuda_api", "replace", False,
      "python -c \"import torch, torch_npu; print('torch', torch.__version__, 'npu available:', torch.npu.is_available())\"",
      "smoke check only; prints False on NPU"),
])

# --------------------------------------------------------------------------- MEMIT / AlphaEdit
E("memit_main", "memit/memit_main.py", "explicit_replacement",
  "MEMIT memit/memit_main.py (batch edit, covariance cache, fp64 least squares)", [
    C('key_mat, val_mat = key_mat.to("cuda"), val_mat.to("cuda")', "tensor_to_device", "replace", True,
      'key_mat, val_mat = key_mat.to("npu"), val_mat.to("npu")', NO_CUDA),
    C('z_list.append(torch.from_numpy(data["v_star"]).to("cuda"))', "tensor_to_device", "replace", True,
      'z_list.append(torch.from_numpy(data["v_star"]).to("npu"))', "cached v* path (--use_cache); " + NO_CUDA),
    C("adj_k = torch.linalg.solve(", "unsupported_op_workaround", "replace", False,
      "adj_k = torch.linalg.solve((hparams.mom2_update_weight * cov.double() + layer_ks @ layer_ks.T).cpu(), layer_ks.cpu()).to(layer_ks.device)",
      "fp64 least squares: linalg_solve has no NPU kernel in the 2.7.1/7.3.0 op list (CPU fallback) and torch.mm lists only bf16/fp16/fp32 on NPU; "
      "unconfirmed whether the fp64 matmul errors or falls back, so keep MEMIT's fp64 precision by solving explicitly on the host"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; NPU cache not released between layers (memory only)"),
    C('torch.inverse(COV_CACHE[key].to("cuda")) if inv else COV_CACHE[key].to("cuda")', "tensor_to_device", "replace", True,
      'torch.inverse(COV_CACHE[key].to("npu")) if inv else COV_CACHE[key].to("npu")', NO_CUDA),
])

E("memit_compute_z", "memit/compute_z.py", "explicit_replacement",
  "MEMIT memit/compute_z.py (optimise target hidden state z)", [
    C('target_ids = tok(request["target_new"]["str"], return_tensors="pt").to("cuda")[', "tensor_to_device", "replace", True,
      'target_ids = tok(request["target_new"]["str"], return_tensors="pt").to("npu")[', NO_CUDA),
    C('=).to("cuda")', "tensor_to_device", "replace", True, ').to("npu")', "input_tok .to('cuda'); " + NO_CUDA),
    C('rewriting_targets = torch.tensor(-100, device="cuda").repeat(', "tensor_to_device", "replace", True,
      'rewriting_targets = torch.tensor(-100, device="npu").repeat(', NO_CUDA),
    C('delta = torch.zeros((model.config.n_embd,), requires_grad=True, device="cuda")', "tensor_to_device", "replace", True,
      'delta = torch.zeros((model.config.n_embd,), requires_grad=True, device="npu")', "GPT-2/GPT-J configs; " + NO_CUDA),
    C('delta = torch.zeros((model.config.hidden_size,), requires_grad=True, device="cuda")', "tensor_to_device", "replace", True,
      'delta = torch.zeros((model.config.hidden_size,), requires_grad=True, device="npu")', "LLaMA-style configs; " + NO_CUDA),
])

E("memit_run_sh", "scripts/run_memit_sweep.sh", "explicit_replacement",
  "MEMIT-style sweep launcher (layer_stats + experiments.evaluate)", [
    C("=set -e", "import_torch_npu", "npu_only_addition", True, CANN_ENV,
      "CANN runtime env needed by torch_npu in every python call below"),
    C("export CUDA_VISIBLE_DEVICES=${GPU_ID}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${GPU_ID}",
      "ignored on Ascend: every sweep would silently land on NPU 0"),
    C('echo "Running on GPU ${CUDA_VISIBLE_DEVICES}: $(nvidia-smi', "device_capability_check", "replace", False,
      'echo "Running on NPU ${ASCEND_RT_VISIBLE_DEVICES}: $(npu-smi info -t board -i ${GPU_ID} | grep -i "chip name")"',
      "log line only; command substitution failure does not trip set -e"),
])

E("alphaedit_main", "AlphaEdit/AlphaEdit_main.py", "explicit_replacement",
  "AlphaEdit AlphaEdit_main.py (null-space projected MEMIT, cached projection P)", [
    C('z_list.append(torch.from_numpy(data["v_star"]).to("cuda"))', "tensor_to_device", "replace", True,
      'z_list.append(torch.from_numpy(data["v_star"]).to("npu"))', NO_CUDA),
    C('P[i,:,:].cuda() @ (layer_ks @ layer_ks.T + cache_c[i,:,:].cuda()) + hparams.L2*torch.eye(', "tensor_to_device", "replace", True,
      'P[i,:,:].npu() @ (layer_ks @ layer_ks.T + cache_c[i,:,:].npu()) + hparams.L2*torch.eye(layer_ks.shape[0], dtype=torch.float,device="npu"), P[i,:,:].npu() @ layer_ks @ resid.T',
      "three .cuda() plus device='cuda' on one line; " + NO_CUDA),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA (memory only)"),
    C('torch.inverse(COV_CACHE[key].to("cuda")) if inv else COV_CACHE[key].to("cuda")', "tensor_to_device", "replace", True,
      'torch.inverse(COV_CACHE[key].to("npu")) if inv else COV_CACHE[key].to("npu")', NO_CUDA),
])

# --------------------------------------------------------------------------- EasyEdit
E("easyedit_editor", "easyeditor/editors/editor.py", "explicit_replacement",
  "EasyEdit easyeditor/editors/editor.py (BaseEditor)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "queued lazily and never run without CUDA (silent no-op); torch.manual_seed above already seeds the NPU generator"),
    C("torch.cuda.set_device(hparams.device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(hparams.device)",
      NO_CUDA),
    C("self.model.to(f'cuda:{hparams.device}')", "tensor_to_device", "replace", True, "self.model.to(f'npu:{hparams.device}')",
      NO_CUDA),
    C('nethook.get_parameter(self.model, k)[...] = v.to(f"cuda:{self.hparams.device}")', "tensor_to_device", "replace", True,
      'nethook.get_parameter(self.model, k)[...] = v.to(f"npu:{self.hparams.device}")', "weight restore after each edit; " + NO_CUDA),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; sequential edits keep NPU cache (memory only)"),
])

E("easyedit_evaluate_utils", "easyeditor/evaluate/evaluate_utils.py", "explicit_replacement",
  "EasyEdit easyeditor/evaluate/evaluate_utils.py (rewrite/locality/portability metrics)", [
    C('prompt_tok = tok(prompts, padding=True, truncation=True, max_length=hparams.max_length, return_tensors="pt").to(f"cuda:{device}")',
      "tensor_to_device", "replace", True,
      'prompt_tok = tok(prompts, padding=True, truncation=True, max_length=hparams.max_length, return_tensors="pt").to(f"npu:{device}")', NO_CUDA),
    C("=).to(f'cuda:{device}')", "tensor_to_device", "replace", True, ").to(f'npu:{device}')", "seq2seq prompt tokens; " + NO_CUDA),
    C('trg_tok = tok(targets, padding=True, truncation=True, max_length=hparams.max_length, return_tensors="pt").to(f"cuda:{device}")',
      "tensor_to_device", "replace", True,
      'trg_tok = tok(targets, padding=True, truncation=True, max_length=hparams.max_length, return_tensors="pt").to(f"npu:{device}")', NO_CUDA),
    C('prompt_tok = tok(prompt, return_tensors="pt").to(device)', "tensor_to_device", "replace", True,
      'prompt_tok = tok(prompt, return_tensors="pt").to(f"npu:{device}")', "vanilla_generation path; " + INT_DEV),
    C('=).to(f"cuda:{device}")', "tensor_to_device", "replace", True, ').to(f"npu:{device}")',
      "test_prediction_acc main path; " + NO_CUDA),
    C("outputs = model(input_ids=input_ids.to(device), labels=target_ids.to(device))", "tensor_to_device", "replace", True,
      'outputs = model(input_ids=input_ids.to(f"npu:{device}"), labels=target_ids.to(f"npu:{device}"))', "PPL; " + INT_DEV),
    C("inputs = tok.encode(prompt, return_tensors='pt').to(device)", "tensor_to_device", "replace", True,
      "inputs = tok.encode(prompt, return_tensors='pt').to(f'npu:{device}')", "answer_match; " + INT_DEV),
    C('prompt_tok = tok(prompts, return_tensors="pt").to(device)', "tensor_to_device", "replace", True,
      'prompt_tok = tok(prompts, return_tensors="pt").to(f"npu:{device}")', "F1 vanilla_generation path; " + INT_DEV),
    C('=).to(f"cuda:{device}" if isinstance(device, int) else device)', "tensor_to_device", "replace", True,
      ').to(f"npu:{device}" if isinstance(device, int) else device)', "F1 main path; int device ids are the normal case"),
])

E("easyedit_qlora", "easyeditor/models/qlora/qlora_main.py", "explicit_replacement",
  "EasyEdit easyeditor/models/qlora/qlora_main.py (QLoRA editing)", [
    C("compute_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16", "device_capability_check", "replace", True,
      "compute_dtype = torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
      "without CUDA this either raises (older torch: current_device() lazy-inits CUDA) or returns False and silently picks fp16"),
    C("quantization_config = BitsAndBytesConfig(", "unsupported_op_workaround", "replace", False,
      "quantization_config = BitsAndBytesConfig(  # needs a bitsandbytes multi-backend build with Ascend NF4 support",
      "bitsandbytes 4-bit: NPU NF4 quant/dequant only in the multi-backend branch (knowledge 6); unconfirmed for the pinned 0.43.1"),
    C('device_map={"": f"cuda:{hparams.device}"},', "device_type", "replace", True, 'device_map={"": f"npu:{hparams.device}"},',
      "accelerate would place every module on a CUDA device; " + NO_CUDA),
    C('attn_implementation="flash_attention_2" if hparams.use_flash_attn else "eager",', "attention_kernel", "replace", True,
      'attn_implementation="sdpa" if hparams.use_flash_attn else "eager",',
      "flash-attn cannot be installed on NPU; transformers raises when use_flash_attn is set. SDPA dispatches to NPU FA (knowledge 5/6)"),
    C("device = torch.device(f'cuda:{hparams.device}')", "device_type", "replace", True,
      "device = torch.device(f'npu:{hparams.device}')", NO_CUDA),
])

E("easyedit_grace", "easyeditor/models/grace/GRACE.py", "explicit_replacement",
  "EasyEdit easyeditor/models/grace/GRACE.py (GRACE codebook adaptor)", [
])

E("easyedit_wise", "easyeditor/models/wise/WISE.py", "explicit_replacement",
  "EasyEdit easyeditor/models/wise/WISE.py (WISE side memory + merging)", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA (memory only)"),
    C('memo_input = {f"{k1}" : v1.to(self.config.device) for k1, v1 in memo_input.items()}', "tensor_to_device", "replace", True,
      'memo_input = {f"{k1}" : v1.to(f"npu:{self.config.device}") for k1, v1 in memo_input.items()}',
      "replay path (retrieve + replay); config.device comes from the YAML as an int. " + INT_DEV),
])

E("easyedit_trainer", "easyeditor/trainer/BaseTrainer.py", "explicit_replacement",
  "EasyEdit easyeditor/trainer/BaseTrainer.py (MEND/SERAC hypernetwork training loop)", [
    C("pin_memory=True)", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu")',
      "pinning silently skipped without CUDA (perf only)"),
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler(enabled=self.use_amp)",
      "with fp16 on, the CUDA scaler disables itself with a warning on an NPU host: loss scaling silently off"),
    C("if self.config.device == 'cuda' or str(self.config.device).startswith('cuda:'):", "device_type", "add_branch", False,
      "if str(self.config.device).split(':')[0] in ('cuda', 'npu'):", "log-only branch; silently skipped once device is 'npu'"),
    C('LOG.info(f"Training on {torch.cuda.get_device_name(self.config.device)}")', "torch_cuda_api", "replace", False,
      'LOG.info(f"Training on {torch.npu.get_device_name(self.config.device)}")',
      "log only; unreachable once the config device is 'npu' (see the guard above)"),
    C("with torch.cuda.amp.autocast(enabled=self.use_amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=self.use_amp):",
      "autocast('cuda') is disabled with a warning without CUDA: fp16 training silently runs in fp32"),
    C('avg_info["memory/max_alloc_GB"] = torch.cuda.max_memory_allocated() / 2 ** 30', "torch_cuda_api", "replace", False,
      'avg_info["memory/max_alloc_GB"] = torch.npu.max_memory_allocated() / 2 ** 30', "metric silently reports 0 without CUDA"),
])

E("easyedit_hparams_yaml", "hparams/MEMIT/llama-7b.yaml", "explicit_replacement",
  "EasyEdit hparams/MEMIT/llama-7b.yaml (editing hyper-parameters)", [
])

E("easyedit_requirements", "requirements.txt", "explicit_replacement",
  "EasyEdit requirements.txt", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "pulls the CUDA torch build and nvidia-* wheels; Ascend installs CPU torch (knowledge 1.1). Unconfirmed that CUDA torch + torch_npu fails"),
    C("=torch==2.1.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "torch_npu wheel matching torch 2.1.0"),
    C("=gpustat==1.1.1", "torch_cuda_api", "removal", False, None, "NVML-based GPU monitor; useless on NPU (npu-smi instead)"),
    C("=bitsandbytes==0.43.1", "unsupported_op_workaround", "replace", False,
      "# bitsandbytes: Ascend NF4 only in the multi-backend build (QLoRA path only)",
      "CUDA kernels; only the optional QLoRA path imports it (guarded). NPU support unconfirmed for this version"),
    C('flash-attn==2.5.8 ; platform_system == "Linux"', "attention_kernel", "removal", True, None,
      "flash-attn cannot be built/installed on NPU (knowledge 6): pip install -r fails"),
])

E("easyedit_example", "examples/run_knowedit_llama2.py", "explicit_replacement",
  "EasyEdit examples/run_knowedit_llama2.py (KnowEdit benchmark driver)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = sys.argv[sys.argv.index("--gpu") + 1]', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = sys.argv[sys.argv.index("--gpu") + 1]',
      "ignored on Ascend: --gpu N silently runs on NPU 0"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
      "returns False on an NPU host: the script exits immediately"),
    C('print(f"Visible GPUs: {torch.cuda.device_count()} (CUDA {torch.version.cuda})")', "torch_cuda_api", "replace", False,
      'print(f"Visible NPUs: {torch.npu.device_count()}")', "log only (prints 0 / None)"),
    C("sentence_model = SentenceTransformer(hparams.sentence_model_name).to(f'cuda:{hparams.device}')", "tensor_to_device", "replace", True,
      "sentence_model = SentenceTransformer(hparams.sentence_model_name).to(f'npu:{hparams.device}')", "IKE path; " + NO_CUDA),
    C('print(f"Peak GPU memory: {torch.cuda.max_memory_allocated() / 2 ** 30:.2f} GiB")', "torch_cuda_api", "replace", False,
      'print(f"Peak NPU memory: {torch.npu.max_memory_allocated() / 2 ** 30:.2f} GiB")', "log only (silently 0)"),
])

E("easyedit_run_sh", "examples/run_wise_editing.sh", "explicit_replacement",
  "EasyEdit-style lifelong-editing launcher (WISE/GRACE/MEMIT, one GPU per job)", [
    C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True, CANN_ENV, "CANN runtime env for torch_npu"),
    C("export CUDA_LAUNCH_BLOCKING=1", "env_var", "replace", False, "export ASCEND_LAUNCH_BLOCKING=1",
      "debug setting; silently ignored on NPU"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "device_capability_check", "replace", False,
      "npu-smi info", "informational; no set -e, so only an error message on NPU"),
    C("CUDA_VISIBLE_DEVICES=${GPU} python run_wise_editing.py \\", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU} python run_wise_editing.py \\",
      "ignored on Ascend: all five background jobs would pile onto NPU 0"),
])

# --------------------------------------------------------------------------- MEND / SERAC
E("mend_run", "run.py", "device_branch_or_abstraction",
  "MEND run.py (hydra training entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
    C("torch.cuda.manual_seed(config.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(config.seed)",
      "silent no-op without CUDA; torch.manual_seed already seeds the NPU"),
    C('if config.device == "cuda" and not torch.cuda.is_available():', "device_type", "add_branch", False,
      'if config.device in ("cuda", "npu") and not getattr(torch, config.device).is_available():',
      "fallback guard only fires for 'cuda'; once config says npu it is dead code (would silently go CPU if the YAML were left at cuda)"),
    C('if config.device == "cuda" and torch.cuda.device_count() > 1:', "torch_cuda_api", "replace", False,
      'if config.device == "npu" and torch.npu.device_count() > 1:', "log only"),
])

E("mend_config", "config/config.yaml", "explicit_replacement",
  "MEND config/config.yaml (hydra defaults)", [
    C("=device: cuda", "device_type", "replace", True, "device: npu",
      "every .to(config.device) in trainer/algs follows this value; 'cuda' fails on an NPU host"),
])

E("serac_alg", "algs/serac.py", "explicit_replacement",
  "SERAC algs/serac.py (scope classifier + counterfactual model)", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA (memory only)"),
    C('with torch.cuda.amp.autocast(enabled=self.config.get("fp16", False)):', "amp", "replace", True,
      'with torch.npu.amp.autocast(enabled=self.config.get("fp16", False)):',
      "with fp16 on, autocast('cuda') is silently disabled on an NPU host (classifier runs fp32)"),
])

# --------------------------------------------------------------------------- GRACE (original repo)
E("grace_main", "grace/main.py", "device_branch_or_abstraction",
  "GRACE grace/main.py (hydra lifelong-editing driver, original repo)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
    C('if str(config.get("device", "")).startswith("cuda:"):', "device_type", "add_branch", True,
      'if str(config.get("device", "")).startswith(("cuda:", "npu:")):',
      "an explicit device=npu:N override would be silently ignored (falls through to the default device)"),
    C('return torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "add_branch", True,
      'return torch.device("npu" if torch.npu.is_available() else ("cuda" if torch.cuda.is_available() else "cpu"))',
      "is_available() is False on an NPU host: the whole run silently goes to CPU"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "seeding guard; NPU already seeded by torch.manual_seed"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "unreachable on NPU (guard False); redundant with torch.manual_seed"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", NO_CUDA),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)", NO_CUDA),
    C('log_dict["gpu_mem_gb"] = torch.cuda.max_memory_allocated(device) / 1e9', "torch_cuda_api", "replace", True,
      'log_dict["gpu_mem_gb"] = torch.npu.max_memory_allocated(device) / 1e9',
      "device is now an npu torch.device: torch.cuda.max_memory_allocated raises 'Expected a cuda device'"),
])

# --------------------------------------------------------------------------- infra
E("ke_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "Knowledge-editing benchmark Dockerfile (CUDA devel base)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.9",
      "image has no CANN runtime/driver libs; torch_npu cannot load"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all \\", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7 \\",
      "NVIDIA container-runtime knob; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES (devices can also be passed with --device)"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility \\", "env_var", "removal", False, None, "NVIDIA runtime only; ignored on Ascend"),
    C("CUDA_HOME=/usr/local/cuda \\", "env_var", "removal", False, None, "unused on NPU"),
    C('TORCH_CUDA_ARCH_LIST="7.0;8.0;8.6;9.0"', "env_var", "removal", False, None,
      "only consumed by the CUDA extension (flash-attn) build, which goes away"),
    C("RUN pip install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu && pip install torch-npu==2.1.0.post12",
      "install the CPU torch build plus the matching torch_npu wheel"),
    C("RUN MAX_JOBS=8 pip install flash-attn==2.5.8 --no-build-isolation", "attention_kernel", "removal", True, None,
      "needs nvcc/CUDA to build; cannot be installed on NPU (knowledge 6) - the build fails"),
])

E("stats_ddp", "scripts/collect_layer_stats_ddp.py", "explicit_replacement",
  "Multi-GPU torchrun collector for ROME/MEMIT covariance statistics (fork-style script)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
    C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
      'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
      "NCCL knob is ignored by HCCL; torch_npu's own watchdog var is HCCL_ASYNC_ERROR_HANDLING (default 1 per MindCluster doc)"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)", NO_CUDA),
    C('backend="nccl",', "dist_backend", "replace", True, 'backend="hccl",', "NCCL does not exist on Ascend; HCCL is the collective backend"),
    C('device = torch.device(f"cuda:{local_rank}")', "device_type", "replace", True, 'device = torch.device(f"npu:{local_rank}")', NO_CUDA),
    C("pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
      "pinning silently skipped without CUDA (perf only)"),
    C('batch = dict_to_(batch, f"cuda:{local_rank}")', "tensor_to_device", "replace", True, 'batch = dict_to_(batch, f"npu:{local_rank}")',
      NO_CUDA),
    C("counts[layer_name] = torch.zeros((), dtype=torch.float64, device=device)", "unsupported_op_workaround", "replace", False,
      "counts[layer_name] = torch.zeros((), dtype=torch.int64, device=device)",
      "fp64 counter all-reduced over HCCL; fp64 reduction support unconfirmed in the knowledge base - an int64 count is exact and safe"),
    C('print(f"[rank0] peak memory {torch.cuda.max_memory_allocated(device) / 2**30:.1f} GiB")', "torch_cuda_api", "replace", True,
      'print(f"[rank0] peak memory {torch.npu.max_memory_allocated(device) / 2**30:.1f} GiB")',
      "device is an npu torch.device after the port: torch.cuda.max_memory_allocated raises 'Expected a cuda device'"),
])
