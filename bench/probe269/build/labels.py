# Labels for probe269: retrosynthesis / reaction-outcome prediction (CUDA -> Ascend NPU).
# One entry per upstream file; one C() per line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
NPU_PIN = "torch-npu==2.1.0.post10"

# --------------------------------------------------------------------------------------------
# Molecular Transformer (OpenNMT-py 0.x fork, with a few 1.x back-ports)
# --------------------------------------------------------------------------------------------

E("mt_train", "train.py", "explicit_replacement",
  "Molecular Transformer / OpenNMT-py 0.x train.py (spawn one process per -gpu_ranks entry)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script; torch_npu must be imported (in every spawned child, which re-imports this module) "
        "before 'npu' devices / torch.npu exist -- mandatory on torch_npu < 2.5.1 (autoload after that)"),
  ])

E("onmt_opts", "onmt/opts.py", "explicit_replacement",
  "OpenNMT-py 0.x onmt/opts.py (train/translate argparse groups)",
  [
      C("group.add_argument('-gpu_backend', default='nccl'", "dist_backend", "replace", True,
        "group.add_argument('-gpu_backend', default='hccl', nargs='+', type=str,",
        "default backend fed to init_process_group in onmt/utils/distributed.py; NCCL does not exist on Ascend, HCCL does"),
  ])

E("onmt_train_single", "onmt/train_single.py", "explicit_replacement",
  "OpenNMT-py 0.x onmt/train_single.py (per-process training entry)",
  [
      C("if torch.cuda.is_available() and not opt.gpu_ranks:", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available() and not opt.gpu_ranks:",
        "only gates a log hint; on an NPU host torch.cuda.is_available() is False so the hint is silently skipped"),
      C("torch.cuda.set_device(device_id)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(device_id)",
        "binds each spawned rank to its device; torch.cuda.set_device raises without CUDA"),
      C("torch.cuda.manual_seed(opt.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(opt.seed)",
        "torch.manual_seed a few lines up already seeds every registered device generator; torch.cuda.manual_seed is a "
        "lazily queued no-op without CUDA (that torch.manual_seed covers the NPU generator is unconfirmed in the notes)"),
  ])

E("onmt_trainer", "onmt/trainer.py", "explicit_replacement",
  "OpenNMT-py 0.x onmt/trainer.py (Trainer with gradient accumulation and multi-GPU all-reduce)",
  [
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "memory housekeeping after validation; torch.cuda.empty_cache is a silent no-op when CUDA was never initialised"),
      C("if self.gpu_verbose_level > 1 and torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if self.gpu_verbose_level > 1 and torch.npu.is_available():",
        "verbose memory logging only; silently skipped on NPU"),
      C("peak = torch.cuda.max_memory_allocated() / 1024 ** 2", "torch_cuda_api", "replace", False,
        "peak = torch.npu.max_memory_allocated() / 1024 ** 2",
        "log-only; torch.npu.max_memory_allocated exists (torch_npu.npu list)"),
  ])

E("onmt_distributed", "onmt/utils/distributed.py", "explicit_replacement",
  "OpenNMT-py 0.x onmt/utils/distributed.py (fairseq-style all_reduce / all_gather_list)",
  [
      C("all_gather_list._in_buffer = torch.cuda.ByteTensor(max_size)", "torch_cuda_api", "replace", True,
        "all_gather_list._in_buffer = torch.npu.ByteTensor(max_size)",
        "legacy CUDA tensor type: fails without CUDA; the HCCL all_gather needs device (NPU) buffers"),
      C("=torch.cuda.ByteTensor(max_size)", "torch_cuda_api", "replace", True,
        "torch.npu.ByteTensor(max_size)",
        "output buffers of the same all_gather; torch_npu.npu exports ByteTensor"),
      C("torch.distributed.all_gather(out_buffers, in_buffer.cuda())", "tensor_to_device", "replace", True,
        "torch.distributed.all_gather(out_buffers, in_buffer.npu())",
        ".cuda() raises on an NPU host; HCCL collectives take NPU tensors"),
  ])

E("onmt_optimizers", "onmt/utils/optimizers.py", "explicit_replacement",
  "OpenNMT-py 1.x onmt/utils/optimizers.py (fusedadam + apex amp O1/O2 back-ported into the chemistry fork)",
  [
      C("optimizer = apex.optimizers.FusedAdam(", "fused_optimizer", "replace", True,
        "optimizer = apex.optimizers.NpuFusedAdam(",
        "NVIDIA apex FusedAdam needs the fused_adam_cuda extension, which cannot be built for Ascend; Ascend apex "
        "ships apex.optimizers.NpuFusedAdam (same as torch_npu.optim.NpuFusedAdam)"),
  ])

E("onmt_model_builder", "onmt/model_builder.py", "explicit_replacement",
  "OpenNMT-py 0.x onmt/model_builder.py (build_base_model / load_test_model)",
  [
      C('device = torch.device("cuda" if gpu else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if gpu else "cpu")',
        "model.to(device) with a CUDA device fails on an NPU host; 'gpu' here is the use_gpu(opt) flag"),
  ])

E("onmt_translator", "onmt/translate/translator.py", "explicit_replacement",
  "OpenNMT-py 0.x onmt/translate/translator.py (beam / fast beam search used by translate.py -gpu 0)",
  [
      C("torch.cuda.set_device(opt.gpu)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(opt.gpu)",
        "translate.py -gpu N selects the device here; raises without CUDA"),
      C('cur_device = "cuda"', "device_type", "replace", True,
        'cur_device = "npu"',
        "torchtext OrderedIterator builds every batch on this device"),
  ])

E("onmt_inputter", "onmt/inputters/inputter.py", "explicit_replacement",
  "OpenNMT-py 0.x onmt/inputters/inputter.py (torchtext fields, DatasetLazyIter, build_dataset_iter)",
  [
      C('device = "cuda" if opt.gpu_ranks else "cpu"', "device_type", "replace", True,
        'device = "npu" if opt.gpu_ranks else "cpu"',
        "training batches are materialised by torchtext on this device; 'cuda' fails on an NPU host"),
  ])

E("mt_train_sh", "scripts/train_uspto.sh", "explicit_replacement",
  "Molecular Transformer training launcher (preprocess + 4-GPU train.py + checkpoint averaging)",
  [
      C("=set -e", "import_torch_npu", "npu_only_addition", True, SET_ENV,
        "CANN runtime / HCCL / op libraries must be on the environment before python imports torch_npu"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
        "ignored by the Ascend runtime: the device mask is silently lost"),
      C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None,
        "NCCL-only knob; HCCL ignores it (logging only)"),
      C("export NCCL_P2P_DISABLE=0", "env_var", "removal", False, None,
        "NCCL-only knob with no HCCL meaning"),
      C("-gpu_backend nccl", "dist_backend", "replace", True,
        "-world_size ${n_gpus} -gpu_backend hccl -master_port 10001 \\",
        "explicit CLI value overrides the opts.py default; nccl backend is unavailable on Ascend"),
  ])

E("mt_translate_sh", "scripts/translate_uspto.sh", "explicit_replacement",
  "Molecular Transformer top-5 translation + score_predictions.py script",
  [
      C("dataset=${1:-STEREO_mixed}", "import_torch_npu", "npu_only_addition", True, SET_ENV,
        "CANN environment for the translate.py process"),
      C("export CUDA_VISIBLE_DEVICES=${GPU:-0}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${GPU:-0}",
        "without the Ascend variable GPU=1 silently still runs on device 0 (translate.py -gpu 0 is relative to the mask)"),
      C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "torch_cuda_api", "replace", False,
        "npu-smi info",
        "diagnostic print only; the script has no 'set -e', so a missing nvidia-smi just prints an error"),
  ])

E("mt_dockerfile", "Dockerfile", "explicit_replacement",
  "Molecular Transformer inference image on nvidia/cuda",
  [
      C("FROM nvidia/cuda:10.2-cudnn7-runtime-ubuntu18.04", "torch_cuda_api", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "CUDA base image carries no CANN runtime, so torch_npu cannot load (image tag illustrative)"),
      C("conda install -y pytorch=1.2.0 cudatoolkit=10.0 -c pytorch", "torch_cuda_api", "replace", True,
        "pip install torch==2.1.0 torch-npu==2.1.0.post10 && \\",
        "CUDA build of torch 1.2 + cudatoolkit; there is no torch_npu for it -- CPU torch plus the matching torch-npu wheel"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "nvidia-container-runtime knob; Ascend devices come in via --device /dev/davinciN or the Ascend Docker Runtime "
        "(ASCEND_VISIBLE_DEVICES)"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "nvidia-container-runtime knob, meaningless on Ascend"),
      C("ENV CUDA_VISIBLE_DEVICES=0", "env_var", "replace", True,
        "ENV ASCEND_RT_VISIBLE_DEVICES=0",
        "device mask silently ignored on Ascend"),
  ])

E("rsmiles_config", "pretrain_finetune/finetune/PtoR/PtoR-50K-aug20-config.yml", "explicit_replacement",
  "Root-aligned SMILES (R-SMILES) OpenNMT-py 2.x fine-tuning YAML",
  [
      C("optim: fusedadam", "fused_optimizer", "replace", True, "optim: adam",
        "OpenNMT's fusedadam is apex's CUDA multi-tensor Adam kernel, unavailable on NPU"),
      C('gpu_backend: "nccl"', "dist_backend", "replace", True, 'gpu_backend: "hccl"',
        "passed straight to torch.distributed.init_process_group"),
  ])

# --------------------------------------------------------------------------------------------
# Chemformer (v1 on pytorch-lightning 1.2, v2 hydra/poetry)
# --------------------------------------------------------------------------------------------

E("chemformer_util", "molbart/util.py", "explicit_replacement",
  "Chemformer v1 molbart/util.py (datamodules, build_trainer with gpus/ddp/deepspeed/precision=16)",
  [
      C("n_visible = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "n_visible = torch.npu.device_count()",
        "returns 0 on an NPU host, so check_gpus raises for any --gpus >= 1"),
      C("plugins = [DDPPlugin(find_unused_parameters=False)]", "dist_backend", "replace", True,
        'plugins = [DDPStrategy(find_unused_parameters=False, process_group_backend="hccl")]',
        "Lightning's DDP picks nccl for CUDA and gloo otherwise; neither drives NPU collectives -- HCCL must be requested "
        "(needs Lightning >= 1.6 for process_group_backend; Lightning-on-NPU itself is unconfirmed in the notes)"),
      C("plugins = [DeepSpeedPlugin(config=args.deepspeed_config_path)]", "distributed_framework", "replace", False,
        "plugins = [DeepSpeedStrategy(config=args.deepspeed_config_path, process_group_backend=\"hccl\")]",
        "pre-training path only; needs a DeepSpeed with the NPU accelerator and no CUDA-only fused ops in ds_config "
        "(unconfirmed for this Lightning/DeepSpeed combination)"),
      C("gpus=args.gpus,", "device_type", "replace", True,
        "accelerator=NPUAccelerator(), devices=args.gpus,",
        "Trainer(gpus=N) raises MisconfigurationException on a host without CUDA; Lightning has no built-in NPU "
        "accelerator, so a custom/3rd-party one is needed (replacement unconfirmed)"),
      C("precision=16,", "amp", "replace", False,
        "precision=16, plugins=[NPUMixedPrecisionPlugin()],",
        "Lightning native AMP uses torch.cuda.amp autocast/GradScaler, which disable themselves off-CUDA -> fp32; "
        "perf only (NPU precision plugin unconfirmed)"),
      C('map_location="cuda:0" if use_gpu else "cpu",', "tensor_to_device", "replace", True,
        'map_location="npu:0" if use_gpu else "cpu",',
        "loading to cuda:0 raises on an NPU host; use_gpu defaults to True"),
  ])

E("chemformer_model", "molbart/models/pre_train.py", "explicit_replacement",
  "Chemformer molbart/models/pre_train.py (BARTModel LightningModule with sampling)",
  [
      C("with torch.cuda.amp.autocast(enabled=self.use_amp_sampling):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=self.use_amp_sampling):",
        "on an NPU host torch.cuda.amp.autocast warns and disables itself, so beam search runs in fp32 -- slower, not wrong"),
  ])

E("chemformer_decoder", "molbart/decoder.py", "device_branch_or_abstraction",
  "Chemformer molbart/decoder.py (DecodeSampler greedy/beam search, RDKit metrics) -- device passed in, no edits",
  [])

E("chemformer_env", "environment.yml", "explicit_replacement",
  "Chemformer v1 conda environment.yml (pytorch + cudatoolkit 11.1 + lightning 1.2 + deepspeed)",
  [
      C("=- nvidia", "torch_cuda_api", "removal", False, None,
        "NVIDIA conda channel only serves CUDA packages"),
      C("=- pytorch=1.8.0", "torch_cuda_api", "replace", True,
        "- pytorch=2.1.0",
        "with cudatoolkit present the pytorch channel resolves the CUDA build; torch_npu pairs with a CPU torch of the "
        "same version (install with cpuonly or via pip)"),
      C("=- cudatoolkit=11.1", "torch_cuda_api", "removal", True, None,
        "CUDA runtime package; its presence is what selects the CUDA pytorch variant"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- " + NPU_PIN,
        "torch-npu pin matching the torch pin (CANN installed on the host)"),
      C("- pytorch-lightning==1.2.3", "distributed_framework", "replace", False,
        "- pytorch-lightning==2.1.0",
        "the port uses the strategy/custom-accelerator API (DDPStrategy(process_group_backend=...)); unconfirmed"),
      C("- deepspeed==0.3.16", "distributed_framework", "replace", False,
        "- deepspeed==0.9.2  # with deepspeed_npu",
        "0.3.16 is CUDA-only; deepspeed_npu targets 0.9.2 and newer upstream has an npu accelerator; only the "
        "DeepSpeed pre-training path needs it"),
  ])

E("chemformer2_config", "molbart/config/fine_tune.yaml", "explicit_replacement",
  "Chemformer 2 hydra config molbart/config/fine_tune.yaml",
  [
      C("accelerator: gpu", "device_type", "replace", True, "accelerator: npu",
        "'gpu' needs CUDA in Lightning; an NPU accelerator must be registered (unconfirmed)"),
      C("device: cuda", "device_type", "replace", True, "device: npu",
        "device used by the inference/scoring scripts (model.to(config.device))"),
  ])

E("chemformer2_pyproject", "pyproject.toml", "explicit_replacement",
  "Chemformer 2 poetry pyproject.toml with an explicit cu117 torch source",
  [
      C('torch = { version = "1.13.1+cu117", source = "torch-cu117" }', "torch_cuda_api", "replace", True,
        'torch = { version = "2.1.0", source = "torch-cpu" }',
        "CUDA wheel; torch_npu needs the CPU torch of the same version"),
      C('pytorch-lightning = "^2.0.8"', "import_torch_npu", "npu_only_addition", True,
        'torch-npu = "2.1.0.post10"',
        "torch-npu pin next to the torch pin"),
      C('name = "torch-cu117"', "torch_cuda_api", "replace", True, 'name = "torch-cpu"',
        "must match the source name the torch pin now references"),
      C('url = "https://download.pytorch.org/whl/cu117"', "torch_cuda_api", "replace", True,
        'url = "https://download.pytorch.org/whl/cpu"',
        "CUDA wheel index"),
  ])

# --------------------------------------------------------------------------------------------
# LocalRetro (DGL / dgllife)
# --------------------------------------------------------------------------------------------

E("localretro_train", "scripts/Train.py", "device_branch_or_abstraction",
  "LocalRetro scripts/Train.py (args dict with args['device'])",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script"),
      C("parser.add_argument('-g', '--gpu', default='cuda:0'", "device_type", "replace", True,
        "parser.add_argument('-g', '--gpu', default='npu:0', help='NPU device to use')",
        "default device string"),
      C("args['device'] = torch.device(args['gpu']) if torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "args['device'] = torch.device(args['gpu']) if torch.npu.is_available() else torch.device('cpu')",
        "silently falls back to CPU on an NPU host"),
  ])

E("localretro_utils", "scripts/utils.py", "device_branch_or_abstraction",
  "LocalRetro scripts/utils.py (featurizers, dataloaders, load_model, predict)",
  [
      C("pin_memory=args['device'].type == 'cuda')", "pin_memory", "replace", False,
        "pin_memory=args['device'].type in ('cuda', 'npu'))",
        "pinning silently switched off on NPU; host->device copy speed only (NPU pinning effect unconfirmed)"),
      C("map_location=torch.device('cuda'))", "tensor_to_device", "replace", True,
        "model.load_state_dict(torch.load(args['model_path'], map_location=args['device'])['model_state_dict'])",
        "test mode loads straight onto CUDA; raises on an NPU host"),
      C("bg = bg.to(args['device'])", "unsupported_op_workaround", "replace", False,
        "bg = bg.to('cpu')  # DGL has no NPU backend; keep the graph (and message passing) on CPU",
        "DGL graphs only live on CPU/CUDA, so moving the batched graph to an NPU device is expected to fail; "
        "not covered by the knowledge notes -> unconfirmed"),
  ])

# --------------------------------------------------------------------------------------------
# GLN (Graph Logic Network)
# --------------------------------------------------------------------------------------------

E("gln_cmd_args", "gln/common/cmd_args.py", "device_branch_or_abstraction",
  "GLN gln/common/cmd_args.py (global argparse + DEVICE chosen from -gpu)",
  [
      C("DEVICE = torch.device('cuda:' + str(cmd_args.gpu))", "device_type", "replace", True,
        "DEVICE = torch.device('npu:' + str(cmd_args.gpu))",
        "module-level device every GLN module moves tensors to"),
  ])

E("gln_torchext_setup", "gln/mods/torchext/setup.py", "kernel_rewrite",
  "GLN gln/mods/torchext/setup.py (CppExtension + guarded CUDAExtension for jagged ops)",
  [])

E("gln_jagged", "gln/mods/torchext/jagged.py", "device_branch_or_abstraction",
  "GLN gln/mods/torchext/jagged.py (autograd Functions dispatching to extlib / extlib_cuda)",
  [
      C("if not logits.is_cuda:", "device_type", "replace", True,
        "if logits.device.type == 'cpu':",
        "NPU tensors have is_cuda == False and would be handed to the CPU extlib kernel, which reads them as host memory"),
      C("output = extlib_cuda.jagged_log_softmax_forward_cuda(logits, prefix_sum)", "custom_cuda_extension", "add_branch",
        True,
        "elif logits.device.type == 'npu': output = _jagged_log_softmax_torch(logits, prefix_sum)",
        "nvcc-built extension has no NPU build: NPU branch computing the segment log-softmax with torch ops "
        "(repeat_interleave segment ids + scatter max / index_add logsumexp)"),
      C("if not grad_output.is_cuda:", "device_type", "replace", True,
        "if grad_output.device.type == 'cpu':",
        "same dispatch problem in backward"),
      C("grad_input = extlib_cuda.jagged_log_softmax_backward_cuda(", "custom_cuda_extension", "add_branch", True,
        "elif grad_output.device.type == 'npu': grad_input = _jagged_log_softmax_backward_torch(output.data, grad_output, prefix_sum.data)",
        "backward of the same kernel in torch ops"),
      C("if not values.is_cuda:", "device_type", "replace", True,
        "if values.device.type == 'cpu':",
        "jagged argmax dispatch"),
      C("return extlib_cuda.jagged_argmax_forward_cuda(values, prefix_sum)", "custom_cuda_extension", "add_branch", True,
        "elif values.device.type == 'npu': return _jagged_argmax_torch(values, prefix_sum)",
        "argmax per segment in torch ops"),
  ])

E("gln_torch_util", "gln/mods/mol_gnn/torch_util.py", "kernel_rewrite",
  "GLN gln/mods/mol_gnn/torch_util.py (sparse-matrix message passing MySpMM, pooling operators)",
  [
      C("return torch.mm(sp_mat, dense_mat)", "unsupported_op_workaround", "replace", True,
        "return torch.zeros(sp_mat.shape[0], dense_mat.shape[1], dtype=dense_mat.dtype, device=dense_mat.device)"
        ".index_add_(0, sp_mat._indices()[0], dense_mat[sp_mat._indices()[1]] * sp_mat._values().unsqueeze(1))",
        "sparse COO x dense mm: no sparse kernels on NPU and sparse ops raise instead of falling back to CPU"),
      C("grad_matrix2 = Variable(torch.mm(sp_mat.data.t(), grad_output.data))", "unsupported_op_workaround", "replace",
        True,
        "grad_matrix2 = torch.zeros(sp_mat.shape[1], grad_output.shape[1], dtype=grad_output.dtype, device=grad_output.device)"
        ".index_add_(0, sp_mat._indices()[1], grad_output[sp_mat._indices()[0]] * sp_mat._values().unsqueeze(1))",
        "transposed sparse mm in the backward, same limitation"),
      C("pool = pool.cuda()", "tensor_to_device", "replace", True,
        "pool = pool.to(DEVICE)",
        ".cuda() raises on an NPU host"),
  ])

E("gln_model_inference", "gln/test/model_inference.py", "explicit_replacement",
  "GLN gln/test/model_inference.py (RetroGLN single-step predictor + eval loop)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "has a __main__ entry and is also imported as the RetroGLN API"),
      C("self.gln.load_state_dict(torch.load(model_file))", "tensor_to_device", "replace", True,
        "self.gln.load_state_dict(torch.load(model_file, map_location='cpu'))",
        "checkpoint tensors were saved from CUDA; without map_location torch.load tries to restore them on CUDA and raises"),
      C("self.gln.cuda()", "tensor_to_device", "replace", True,
        "self.gln.to(DEVICE)",
        ".cuda() raises on an NPU host"),
  ])

# --------------------------------------------------------------------------------------------
# RetroBridge (pytorch-lightning 2 + PyG)
# --------------------------------------------------------------------------------------------

E("retrobridge_train", "train.py", "device_branch_or_abstraction",
  "RetroBridge train.py (Lightning Trainer, accelerator gpu/cpu switch, ddp)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script"),
      C("use_gpu = args.device.startswith('cuda') and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "use_gpu = args.device.startswith('npu') and torch.npu.is_available()",
        "silently trains on CPU on an NPU host"),
      C("strategy = 'ddp' if n_devices > 1 else 'auto'", "dist_backend", "replace", True,
        "strategy = DDPStrategy(process_group_backend='hccl') if n_devices > 1 else 'auto'",
        "plain 'ddp' picks nccl (CUDA) or gloo (otherwise); gloo cannot reduce NPU tensors"),
      C("accelerator='gpu' if use_gpu else 'cpu',", "device_type", "replace", True,
        "accelerator='npu' if use_gpu else 'cpu',",
        "'gpu' requires CUDA; needs a registered Lightning NPU accelerator (unconfirmed)"),
      C("p.add_argument('--device', action='store', type=str, default='cuda:0')", "device_type", "replace", True,
        "p.add_argument('--device', action='store', type=str, default='npu:0')",
        "default device string checked by the use_gpu test"),
  ])

E("retrobridge_sample", "sample.py", "device_branch_or_abstraction",
  "RetroBridge sample.py (load checkpoint, sample reactants, dump CSV)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script"),
      C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "torch_cuda_api", "replace", True,
        "device = 'npu' if torch.npu.is_available() else 'cpu'",
        "silently samples on CPU on an NPU host"),
      C("with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=use_amp):", "amp", "replace", False,
        "with torch.autocast(device_type='npu', dtype=torch.float16, enabled=use_amp):",
        "--amp is opt-in; autocast('cuda') disables itself without CUDA (fp32) -- perf only"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available():",
        "timing/memory report only; silently skipped on NPU"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", False,
        "torch.npu.synchronize()",
        "inside the report branch above (must change together with it)"),
      C("print(f'peak GPU memory: {torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
        "print(f'peak NPU memory: {torch.npu.max_memory_allocated() / 2 ** 30:.2f} GiB')",
        "log-only"),
  ])

E("retrobridge_requirements", "requirements.txt", "explicit_replacement",
  "RetroBridge requirements.txt (cu117 torch, PyG wheels, wandb)",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu117", "torch_cuda_api", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index"),
      C("torch==1.13.1+cu117", "torch_cuda_api", "replace", True, "torch==2.1.0",
        "CUDA build of torch; torch_npu needs the CPU torch of the same version"),
      C("pytorch-lightning==2.0.4", "import_torch_npu", "npu_only_addition", True, NPU_PIN,
        "torch-npu pin"),
      C("-f https://data.pyg.org/whl/torch-1.13.0+cu117.html", "custom_cuda_extension", "replace", True,
        "-f https://data.pyg.org/whl/torch-2.1.0+cpu.html",
        "cu117 builds of torch-scatter / torch-sparse link the CUDA runtime and the old torch ABI; they will not import"),
      C("nvidia-ml-py==11.525.112", "torch_cuda_api", "removal", False, None,
        "NVML bindings (GPU telemetry); nothing to talk to on Ascend (npu-smi / torch.npu.utilization instead)"),
  ])

# --------------------------------------------------------------------------------------------
# G2Retro (JT-VAE / hgraph2graph lineage)
# --------------------------------------------------------------------------------------------

E("g2retro_nnutils", "model/nnutils.py", "explicit_replacement",
  "G2Retro model/nnutils.py (create_var / make_cuda helpers from JT-VAE and hgraph2graph)",
  [
      C("return Variable(tensor).cuda()", "tensor_to_device", "replace", True,
        "return Variable(tensor).npu()",
        ".cuda() raises on an NPU host"),
      C("return Variable(tensor, requires_grad=requires_grad).cuda()", "tensor_to_device", "replace", True,
        "return Variable(tensor, requires_grad=requires_grad).npu()",
        ".cuda() raises on an NPU host"),
      C("tree_tensors = [make_tensor(x).cuda().long()", "tensor_to_device", "replace", True,
        "tree_tensors = [make_tensor(x).npu().long() for x in tree_tensors[:-1]] + [tree_tensors[-1]]",
        "every batch goes through make_cuda"),
      C("graph_tensors = [make_tensor(x).cuda().long()", "tensor_to_device", "replace", True,
        "graph_tensors = [make_tensor(x).npu().long() for x in graph_tensors[:-1]] + [graph_tensors[-1]]",
        "every batch goes through make_cuda"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)",
        "torch.manual_seed just above already seeds device generators; cuda call is a queued no-op (unconfirmed for NPU)"),
  ])

E("g2retro_train", "model/train_center.py", "device_branch_or_abstraction",
  "G2Retro model/train_center.py (reaction-center identification training script)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script"),
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "torch_cuda_api", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
        "silently trains on CPU on an NPU host"),
      C("if torch.cuda.device_count() > 1:", "unsupported_op_workaround", "removal", False, None,
        "dead on an NPU host (count is 0); must not be 'fixed' to torch.npu.device_count() because the body is "
        "DataParallel -- drop it (or move to DDP + HCCL)"),
      C("model = nn.DataParallel(model)", "unsupported_op_workaround", "removal", False, None,
        "torch.nn.DataParallel is unsupported on Ascend (✘ in the 2.7.1 list)"),
      C("optimizer = optim.Adam(model.parameters(), lr=args.lr, fused=True)", "fused_optimizer", "replace", False,
        "optimizer = torch_npu.optim.NpuFusedAdam(model.parameters(), lr=args.lr)",
        "NPU op lists carry _fused_adamw_ but no _fused_adam_, so fused Adam would fall back to CPU (or error on older "
        "torch) -- unconfirmed; NpuFusedAdam or fused=False"),
      C('model.load_state_dict(torch.load(args.save_dir + "/model_center_"', "tensor_to_device", "replace", True,
        'model.load_state_dict(torch.load(args.save_dir + "/model_center_" + str(args.load_epoch) + ".pkl", map_location=device))',
        "resuming from a GPU-trained checkpoint: torch.load restores CUDA tensors and raises without CUDA"),
  ])

# --------------------------------------------------------------------------------------------
# Retro* (planning with a value MLP) -- ported with transfer_to_npu
# --------------------------------------------------------------------------------------------

E("retrostar_plan", "retro_star/retro_plan.py", "transfer_to_npu",
  "Retro* retro_star/retro_plan.py (A*-like multi-step planner, one-step MLP + value net)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu; from torch_npu.contrib import transfer_to_npu",
        "transfer_to_npu style: torch.device('cuda') passed to .to()/map_location, torch.cuda.set_device / "
        "get_device_name / max_memory_allocated are all redirected, so nothing else in this file is edited"),
  ])
