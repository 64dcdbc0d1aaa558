"""Labels for probe470 (DP training and privacy-attack research code, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit for an explicit torch_npu port.
`required` = with every other labelled line already ported, would leaving this line as-is fail,
compute something wrong or silently do the wrong thing on an NPU host?
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: import torch_npu before any NPU use (autoloaded since torch_npu 2.5.1, but still "
               "recommended and needed on the 2.1.x line this code targets)")
SEED_REDUNDANT = ("torch.manual_seed() on the line(s) above already seeds every device generator, including the "
                  "PrivateUse1/NPU one (custom-device seeding in torch.random); the torch.cuda call is a lazy no-op "
                  "without CUDA. Changed for clarity only - unconfirmed in /work/shared/knowledge")

# ----------------------------------------------------------------------------------------------
# pytorch/opacus
# ----------------------------------------------------------------------------------------------
E("opacus_cifar10", "examples/cifar10.py", "explicit_replacement",
  "pytorch/opacus examples/cifar10.py (DP-SGD CIFAR-10, Slurm/env:// DDP, functorch no_op mode)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available():",
      "setup() raises NotImplementedError on a host without CUDA; every non-CPU run goes through setup()"),
    C("device = local_rank", "device_type", "replace", True,
      'device = torch.device("npu", local_rank)',
      "a bare int device means cuda:<n> for model.to()/tensor.to(); also the single-accelerator path (local_rank 0)"),
    C("pin_memory=True,", "pin_memory", "replace", False,
      'pin_memory=True, pin_memory_device="npu",',
      "performance only: pinning target device; unconfirmed whether DataLoader pins for NPU without it"),
    C('default="cuda",', "device_type", "replace", False, 'default="npu",',
      "--device is only compared with 'cpu' in main(); the real device comes from local_rank, so leaving it is harmless"),
    C('default="nccl",', "dist_backend", "replace", True, 'default="hccl",',
      "--dist_backend feeds init_process_group for both Slurm and env:// launches; NCCL does not exist on Ascend"),
])

E("opacus_mnist", "examples/mnist.py", "explicit_replacement",
  "pytorch/opacus examples/mnist.py (SampleConvNet, --device flag)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('default="cuda",', "device_type", "replace", True, 'default="npu",',
      "device = torch.device(args.device) is used for the model and every batch"),
    C("pin_memory=True,", "pin_memory", "replace", False,
      'pin_memory=True, pin_memory_device="npu",', "performance only; unconfirmed"),
])

E("opacus_optimizer", "opacus/optimizers/optimizer.py", "explicit_replacement",
  "pytorch/opacus opacus/optimizers/optimizer.py (DPOptimizer, _generate_noise with secure_mode)", [
    C("torch.normal(0, std, size=(1, 1), device=reference.device, generator=generator)",
      "unsupported_op_workaround", "replace", False,
      "torch.normal(0, std, size=(1, 1), generator=generator)  # csprng generator samples on the host",
      "secure_mode only: the generator comes from torchcsprng, which (as far as I know) registers CPU and CUDA "
      "kernels only, so sampling with device='npu' should fail. Sample on CPU and move. Unconfirmed in knowledge"),
    C("sum += torch.normal(0, std, size=reference.shape, device=reference.device, generator=generator)",
      "unsupported_op_workaround", "replace", False,
      "sum += torch.normal(0, std, size=reference.shape, generator=generator).to(reference.device)",
      "same secure_mode csprng issue; the non-secure branch (generator=None) is device-agnostic and stays. Unconfirmed"),
])

E("opacus_engine", "opacus/privacy_engine.py", "explicit_replacement",
  "pytorch/opacus opacus/privacy_engine.py (make_private, secure RNG set-up)", [])

E("opacus_distributed", "opacus/distributed.py", "explicit_replacement",
  "pytorch/opacus opacus/distributed.py (DPDDP: broadcast + all_reduce, backend-agnostic)", [])

E("opacus_functorch", "opacus/grad_sample/functorch.py", "explicit_replacement",
  "pytorch/opacus opacus/grad_sample/functorch.py (torch.func grad/vmap per-sample gradients)", [])

E("opacus_bench_layer", "benchmarks/benchmark_layer.py", "explicit_replacement",
  "pytorch/opacus benchmarks/benchmark_layer.py (per-layer runtime/memory benchmark, CUDA events)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('_TIMING_DEVICE = torch.device("cuda:0")', "device_type", "replace", True,
      '_TIMING_DEVICE = torch.device("npu:0")', "module-level benchmark device"),
    C("assert torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      'assert torch.npu.is_available(), "Layer benchmarks need an NPU"', "assert fails on an NPU host"),
    C("layer_memory = torch.cuda.memory_allocated(device)", "torch_cuda_api", "replace", True,
      "layer_memory = torch.npu.memory_allocated(device)",
      "torch.cuda memory query with an npu device raises (expects a cuda device); this is a measured quantity"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "torch.cuda.synchronize initialises CUDA and raises without it"),
    C("start_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_event = torch.npu.Event(enable_timing=True)", "CUDA event cannot be created/recorded on NPU streams"),
    C("end_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_event = torch.npu.Event(enable_timing=True)", "as above"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "as above; the elapsed_time read needs the NPU queue drained"),
    C("torch.cuda.manual_seed_all(args.random_seed + run)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.random_seed + run)", SEED_REDUNDANT),
])

E("opacus_bench_utils", "benchmarks/utils.py", "explicit_replacement",
  "pytorch/opacus benchmarks/utils.py (reset_peak_memory_stats, result pickles)", [
    C("prev_max_memory = torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", True,
      "prev_max_memory = torch.npu.max_memory_allocated(device)",
      "peak memory is the benchmark's output; the torch.cuda query rejects an npu device"),
    C("memory_allocated = torch.cuda.memory_allocated(device)", "torch_cuda_api", "replace", True,
      "memory_allocated = torch.npu.memory_allocated(device)", "as above"),
    C("=torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(device)", "as above; otherwise peaks accumulate across runs"),
    C("assert torch.cuda.max_memory_allocated(device) == memory_allocated", "torch_cuda_api", "replace", True,
      "assert torch.npu.max_memory_allocated(device) == memory_allocated", "as above"),
    C('if device.type == "cuda":', "device_type", "replace", False, 'if device.type == "npu":',
      "left alone, the result metadata silently says 'cpu'; metadata only"),
    C("props = torch.cuda.get_device_properties(device)", "torch_cuda_api", "replace", True,
      "props = torch.npu.get_device_properties(device)", "reached once the branch above is ported; raises for npu"),
    C('"capability": f"{props.major}.{props.minor}",', "device_capability_check", "replace", True,
      '"capability": None,  # NPU properties have no major/minor',
      "knowledge §2.8: torch.npu.get_device_properties lacks major/minor -> AttributeError"),
    C('"num_devices": torch.cuda.device_count(),', "torch_cuda_api", "replace", False,
      '"num_devices": torch.npu.device_count(),', "returns 0 without CUDA; metadata only"),
])

# ----------------------------------------------------------------------------------------------
# privacytrustlab/ml_privacy_meter
# ----------------------------------------------------------------------------------------------
E("pm_run_mia", "run_mia.py", "explicit_replacement",
  "privacytrustlab/ml_privacy_meter run_mia.py (RMIA audit entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
])

E("pm_config", "configs/cifar10.yaml", "explicit_replacement",
  "privacytrustlab/ml_privacy_meter configs/cifar10.yaml", [
    C("device: cuda:0 # String for indicating the device we want to use for inferring", "device_type", "replace", True,
      "device: npu:0 # String for indicating the device we want to use for inferring signals and auditing models",
      "audit device string is passed straight to .to()"),
    C("device: cuda:0 # String for indicating the device we want to use for training", "device_type", "replace", True,
      "device: npu:0 # String for indicating the device we want to use for training models.",
      "training device string is passed straight to .to()"),
])

E("pm_util", "util.py", "explicit_replacement",
  "privacytrustlab/ml_privacy_meter util.py (config checks, seeding, dataset loading)", [
    C('if model_name == "speedyresnet" and not configs["train"]["device"].startswith("cuda"):', "device_type",
      "replace", True,
      'if model_name == "speedyresnet" and not configs["train"]["device"].startswith(("cuda", "npu")):',
      "with the YAML ported to npu:0 this validation rejects every speedyresnet run"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      SEED_REDUNDANT),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      SEED_REDUNDANT),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_REDUNDANT),
    C('["nvidia-smi", "--query-gpu=memory.free"', "device_capability_check", "replace", False,
      '["npu-smi", "info", "-t", "usages", "-i", "0"],  # output format differs; parse HBM usage',
      "no nvidia-smi on Ascend; the helper catches FileNotFoundError and returns [], so only the warning is lost"),
])

E("pm_env", "env.yaml", "explicit_replacement",
  "privacytrustlab/ml_privacy_meter env.yaml (conda environment)", [
    C("- torch==2.1.0", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post10",
      "torch_npu wheel matching torch 2.1.0 (knowledge §1.2: 2.1.0.post10 <-> CANN 8.0.0); without it import fails"),
])

E("pm_trainer", "trainers/default_trainer.py", "explicit_replacement",
  "privacytrustlab/ml_privacy_meter trainers/default_trainer.py (target/reference model training)", [
    C("pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
      "performance only; unconfirmed"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA; NPU cached blocks are then kept between reference models (memory/performance only)"),
])

E("pm_fast_train", "trainers/fast_train.py", "explicit_replacement",
  "privacytrustlab/ml_privacy_meter speedyresnet trainer adapted from tysam-code/hlb-CIFAR10", [
    C('"device": "cuda",', "device_type", "replace", True, '"device": "npu",',
      "hyp['misc']['device'] is used for the net, the data and randperm"),
    C("net = net.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", True, None,
      "knowledge §2.8: channels_last not supported on NPU (use contiguous)"),
    C("starter, ender = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)",
      "torch_cuda_api", "replace", True,
      "starter, ender = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)",
      "CUDA events cannot time NPU work"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("inputs = inputs.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", True, None,
      "knowledge §2.8: channels_last not supported on NPU"),
])

E("pm_signals", "get_signals.py", "explicit_replacement",
  "privacytrustlab/ml_privacy_meter get_signals.py (softmax/loss signals, device from config)", [])

# ----------------------------------------------------------------------------------------------
# lxuechen/private-transformers
# ----------------------------------------------------------------------------------------------
E("ptx_run_cls", "examples/classification/run_classification.py", "explicit_replacement",
  "lxuechen/private-transformers examples/classification/run_classification.py (DP prompt fine-tuning)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NOTE + "; HF TrainingArguments only resolves device 'npu' when torch_npu is importable"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "end-of-run cache release; no-op without CUDA, performance only"),
])

E("ptx_trainer", "examples/classification/src/trainer.py", "explicit_replacement",
  "lxuechen/private-transformers examples/classification/src/trainer.py (HF Trainer subclass)", [
    C("from torch.cuda.amp import autocast", "amp", "replace", True, "from torch.npu.amp import autocast",
      "torch.cuda autocast disables itself without CUDA, so the --fp16 non-private path silently runs fp32"),
    C("self.scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler()",
      "a CUDA GradScaler disables itself on an NPU host; with NPU autocast this would be fp16 without loss scaling"),
    C('logs["peak_mem_gb"] = torch.cuda.max_memory_allocated() / 1e9', "torch_cuda_api", "replace", False,
      'logs["peak_mem_gb"] = torch.npu.max_memory_allocated() / 1e9', "logged value is 0 without CUDA; log only"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "after-evaluation cache release; performance only"),
])

E("ptx_t2t_sh", "examples/table2text/run.sh", "explicit_replacement",
  "lxuechen/private-transformers examples/table2text/run.sh (GPT-2 E2E/DART launcher)", [
    C("output_dir=${1}", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (library paths) must be set before python imports torch_npu"),
    C("nvidia-smi --query-gpu=index,name,memory.total --format=csv", "device_capability_check", "replace", False,
      "npu-smi info", "logging only and the script has no `set -e`; command-not-found is not fatal"),
    C("CUDA_VISIBLE_DEVICES=${cuda_device} python -m table2text.run_language_modeling", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${cuda_device} python -m table2text.run_language_modeling \\",
      "the device id is a user argument; without the Ascend variable the job silently runs on NPU 0"),
])

# ----------------------------------------------------------------------------------------------
# liuyugeng/ML-Doctor
# ----------------------------------------------------------------------------------------------
E("mld_demo", "demo.py", "explicit_replacement",
  "liuyugeng/ML-Doctor demo.py (membership/inversion/attribute/stealing attack driver)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
      "--gpu selects the physical card and the code then uses device 0; without the Ascend variable it runs on NPU 0"),
    C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")',
      "device object passed to every training/attack class"),
])

E("mld_meminf", "doctor/meminf.py", "explicit_replacement",
  "liuyugeng/ML-Doctor doctor/meminf.py (shadow training, black/white-box membership inference)", [
    C("labels = torch.Tensor(labels).cuda()", "tensor_to_device", "replace", True,
      "labels = torch.Tensor(labels).to(self.device)", "stray .cuda() in the white-box feature extraction"),
])

E("mld_modinv", "doctor/modinv.py", "explicit_replacement",
  "liuyugeng/ML-Doctor doctor/modinv.py (CCS'15 inversion and Secret Revealer)", [
    C("target_model = target_model.cuda()", "tensor_to_device", "replace", True,
      "target_model = target_model.npu()", ".cuda() raises on an NPU host"),
    C("evaluation_model = evaluation_model.cuda()", "tensor_to_device", "replace", True,
      "evaluation_model = evaluation_model.npu()", "as above"),
    C("discriminator = discriminator.cuda()", "tensor_to_device", "replace", True,
      "discriminator = discriminator.npu()", "as above"),
    C("generator = generator.cuda()", "tensor_to_device", "replace", True, "generator = generator.npu()",
      "as above"),
    C("torch.cuda.manual_seed(random_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(random_seed)", SEED_REDUNDANT),
])

E("mld_train", "demoloader/train.py", "explicit_replacement",
  "liuyugeng/ML-Doctor demoloader/train.py (target/distillation/DCGAN training, opacus 0.x)", [])

E("mld_dcgan", "demoloader/DCGAN.py", "explicit_replacement",
  "liuyugeng/ML-Doctor demoloader/DCGAN.py (PyTorch DCGAN tutorial nets)", [])

# ----------------------------------------------------------------------------------------------
# JonasGeiping/invertinggradients
# ----------------------------------------------------------------------------------------------
E("ig_utils", "inversefed/utils.py", "explicit_replacement",
  "JonasGeiping/invertinggradients inversefed/utils.py (system_startup, seeding)", [
    C("device = torch.device('cuda:0') if torch.cuda.is_available() else torch.device('cpu')", "device_type",
      "replace", True,
      "device = torch.device('npu:0') if torch.npu.is_available() else torch.device('cpu')",
      "otherwise the whole attack silently runs on the CPU"),
    C("GPUs: {torch.cuda.device_count()}", "torch_cuda_api", "replace", False,
      "print(f'CPUs: {torch.get_num_threads()}, NPUs: {torch.npu.device_count()} on {socket.gethostname()}.')",
      "prints 0; log only"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "left alone the device-name print is skipped; cosmetic"),
    C("torch.cuda.get_device_name(device=device)", "torch_cuda_api", "replace", True,
      "print(f'NPU : {torch.npu.get_device_name(device)}')",
      "reached once the branch above is ported; torch.cuda.get_device_name raises without CUDA"),
    C("torch.cuda.manual_seed(seed + 2)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed + 2)",
      SEED_REDUNDANT + "; the NPU stream then differs from the GPU one (seed+1 instead of seed+5) but stays reproducible"),
    C("torch.cuda.manual_seed_all(seed + 3)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed + 3)", SEED_REDUNDANT),
    C("torch.cuda.manual_seed_all(seed + 5)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed + 5)", SEED_REDUNDANT),
])

E("ig_consts", "inversefed/consts.py", "explicit_replacement",
  "JonasGeiping/invertinggradients inversefed/consts.py", [
    C("PIN_MEMORY = True", "pin_memory", "replace", False, "PIN_MEMORY = True  # DataLoader(pin_memory_device='npu')",
      "performance only; the flag feeds the dataloaders. Unconfirmed"),
])

E("ig_reconstruct", "reconstruct_image.py", "explicit_replacement",
  "JonasGeiping/invertinggradients reconstruct_image.py (gradient inversion driver)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("setup['dtype'] = torch.double", "unsupported_op_workaround", "replace", False,
      "setup['dtype'] = torch.float32  # fp64 conv/double-backward support on NPU is limited",
      "--dtype double only; knowledge §7 lists an fp64 -> fp32 caveat, but whether these ops run in fp64 is unconfirmed"),
    C("torch.cuda.max_memory_allocated() / 1024**3", "torch_cuda_api", "replace", False,
      "print(f'Peak NPU memory: {torch.npu.max_memory_allocated() / 1024**3:.2f} GB')", "prints 0; log only"),
])

# ----------------------------------------------------------------------------------------------
# AI-secure/GMI-Attack (Generative Model Inversion)
# ----------------------------------------------------------------------------------------------
STRIP = ("released checkpoints were saved from CUDA nn.DataParallel models: without map_location torch.load raises "
         "(CUDA tensors, no CUDA); and once DataParallel is dropped the 'module.' keys no longer match and "
         "load_my_state_dict silently skips every weight, so the prefix is stripped here")

E("gmi_recovery", "celeba/recovery.py", "explicit_replacement",
  "AI-secure/GMI-Attack celeba/recovery.py (GAN-prior model inversion against face classifiers)", [
    C("import torch, os, time, random, generator", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NOTE),
    C('=device = "cuda"', "device_type", "replace", True, 'device = "npu"', "module-level device for iden"),
    C("criterion = nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False,
      "criterion = nn.CrossEntropyLoss().npu()",
      "the loss module has no parameters or buffers, so .cuda() touches no tensor and does not fail; consistency only"),
    C("torch.cuda.manual_seed(random_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(random_seed)", SEED_REDUNDANT),
    C("z = torch.randn(bs, 100).cuda().float()", "tensor_to_device", "replace", True,
      "z = torch.randn(bs, 100).npu().float()", ".cuda() raises"),
    C("v = torch.zeros(bs, 100).cuda().float()", "tensor_to_device", "replace", True,
      "v = torch.zeros(bs, 100).npu().float()", ".cuda() raises"),
    C("fake = G(z_hat.cuda())", "tensor_to_device", "replace", True, "fake = G(z_hat.npu())", ".cuda() raises"),
    C("G = nn.DataParallel(G).cuda()", "unsupported_op_workaround", "replace", True, "G = G.npu()",
      "nn.DataParallel is unsupported on NPU (knowledge §2.8 / TSV); single-device port"),
    C("ckp_G = torch.load(g_path)['state_dict']", "tensor_to_device", "replace", True,
      "ckp_G = {k.replace('module.', '', 1): v for k, v in torch.load(g_path, map_location='cpu')['state_dict'].items()}",
      STRIP),
    C("D = nn.DataParallel(D).cuda()", "unsupported_op_workaround", "replace", True, "D = D.npu()",
      "nn.DataParallel unsupported on NPU"),
    C("ckp_D = torch.load(d_path)['state_dict']", "tensor_to_device", "replace", True,
      "ckp_D = {k.replace('module.', '', 1): v for k, v in torch.load(d_path, map_location='cpu')['state_dict'].items()}",
      STRIP),
    C("T = nn.DataParallel(T).cuda()", "unsupported_op_workaround", "replace", True, "T = T.npu()",
      "nn.DataParallel unsupported on NPU"),
    C("ckp_T = torch.load(target_path)['state_dict']", "tensor_to_device", "replace", True,
      "ckp_T = {k.replace('module.', '', 1): v for k, v in torch.load(target_path, map_location='cpu')['state_dict'].items()}",
      STRIP),
    C("E = nn.DataParallel(E).cuda()", "unsupported_op_workaround", "replace", True, "E = E.npu()",
      "nn.DataParallel unsupported on NPU"),
    C("ckp_E = torch.load(e_path)['state_dict']", "tensor_to_device", "replace", True,
      "ckp_E = {k.replace('module.', '', 1): v for k, v in torch.load(e_path, map_location='cpu')['state_dict'].items()}",
      STRIP),
])

E("gmi_train_gan", "celeba/train_gan.py", "explicit_replacement",
  "AI-secure/GMI-Attack celeba/train_gan.py (WGAN-GP prior on public faces)", [
    C("import os, time, utils, torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = "0,1,2,3"', "env_var", "replace", False,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0,1,2,3"',
      "after DataParallel is dropped the job uses device 0 only, which is device 0 with or without the mask"),
    C("alpha = torch.rand(shape).cuda()", "tensor_to_device", "replace", True, "alpha = torch.rand(shape).npu()",
      ".cuda() raises"),
    C("z = z.cuda()", "tensor_to_device", "replace", True, "z = z.npu()", ".cuda() on an NPU tensor raises"),
    C("grad_outputs=torch.ones(o.size()).cuda()", "tensor_to_device", "replace", True,
      "g = grad(o, z, grad_outputs=torch.ones(o.size()).npu(), create_graph=True)[0].view(z.size(0), -1)",
      ".cuda() raises"),
    C("G = torch.nn.DataParallel(G).cuda()", "unsupported_op_workaround", "replace", True, "G = G.npu()",
      "nn.DataParallel unsupported on NPU; single-device port"),
    C("DG = torch.nn.DataParallel(DG).cuda()", "unsupported_op_workaround", "replace", True, "DG = DG.npu()",
      "nn.DataParallel unsupported on NPU"),
    C("imgs = imgs.cuda()", "tensor_to_device", "replace", True, "imgs = imgs.npu()", ".cuda() raises"),
    C("z = torch.randn(bs, z_dim).cuda()", "tensor_to_device", "replace", True, "z = torch.randn(bs, z_dim).npu()",
      ".cuda() raises"),
    C("z_g = torch.randn(bs, z_dim).cuda()", "tensor_to_device", "replace", True,
      "z_g = torch.randn(bs, z_dim).npu()", ".cuda() raises"),
    C("z_vis = torch.randn(32, z_dim).cuda()", "tensor_to_device", "replace", True,
      "z_vis = torch.randn(32, z_dim).npu()", ".cuda() raises"),
])

E("gmi_utils", "celeba/utils.py", "explicit_replacement",
  "AI-secure/GMI-Attack celeba/utils.py (data loaders, state-dict loading, PSNR/KNN metrics)", [
    C('=device = "cuda"', "device_type", "replace", True, 'device = "npu"', "used by calc_feat"),
    C("pin_memory=True)", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu')",
      "performance only; unconfirmed"),
    C("img = img.cuda()", "tensor_to_device", "replace", True, "img = img.npu()",
      "low2high is called from the attack loop; .cuda() raises"),
    C("ten = torch.tensor(10).float().cuda()", "tensor_to_device", "replace", True,
      "ten = torch.tensor(10).float().npu()", ".cuda() raises"),
    C("maxI = torch.ones(bs, 1).cuda()", "tensor_to_device", "replace", True, "maxI = torch.ones(bs, 1).npu()",
      ".cuda() raises"),
    C('center = torch.from_numpy(np.load("feature/center.npy")).float().cuda()', "tensor_to_device", "replace",
      True, 'center = torch.from_numpy(np.load("feature/center.npy")).float().npu()', ".cuda() raises"),
    C("true_feat = torch.zeros(feat.size()).cuda()", "tensor_to_device", "replace", True,
      "true_feat = torch.zeros(feat.size()).npu()", ".cuda() raises"),
    C('feats = torch.from_numpy(np.load("feature/feat.npy")).float().cuda()', "tensor_to_device", "replace", True,
      'feats = torch.from_numpy(np.load("feature/feat.npy")).float().npu()', ".cuda() raises"),
    C('info = torch.from_numpy(np.load("feature/info.npy")).view(-1).long().cuda()', "tensor_to_device", "replace",
      True, 'info = torch.from_numpy(np.load("feature/info.npy")).view(-1).long().npu()', ".cuda() raises"),
])

E("gmi_config", "celeba/config/celeba.json", "explicit_replacement",
  "AI-secure/GMI-Attack celeba/config/celeba.json (hyper-parameters only, no device keys)", [])
