"""Labels for probe430: neural causal inference / uplift modelling (CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit; see README.md for the policy.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("torch_npu registers the 'npu' device and the torch.npu namespace; autoloaded since torch_npu 2.5.1 "
               "but still recommended, and needed on the older torch/torch_npu pairs these projects pin")
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ----------------------------------------------------------------------------------------------
# pyro-ppl/pyro: pyro.contrib.cevae, its example, tests and docker tooling
# ----------------------------------------------------------------------------------------------
E("pyro_cevae", "pyro/contrib/cevae/__init__.py", "explicit_replacement",
  "pyro-ppl/pyro pyro/contrib/cevae/__init__.py (CEVAE model/guide/ELBO, fully device-agnostic)", [])

E("pyro_cevae_example", "examples/contrib/cevae/synthetic.py", "explicit_replacement",
  "pyro-ppl/pyro examples/contrib/cevae/synthetic.py (--cuda flag switches the default tensor type)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('torch.set_default_tensor_type("torch.cuda.FloatTensor")', "device_type", "replace", True,
      'torch.set_default_device("npu")',
      "Ascend's 2.7.1 API list: torch.set_default_tensor_type does not accept torch.npu.*Tensor types, so the "
      "CUDA tensor-type switch must become set_default_device('npu') (supported)"),
])

E("pyro_tests_common", "tests/common.py", "explicit_replacement",
  "pyro-ppl/pyro tests/common.py (requires_cuda, tensors_default_to, freeze_rng_state, assert helpers)", [
    C('not torch.cuda.is_available(), reason="cuda is not available"', "torch_cuda_api", "replace", True,
      'not torch.npu.is_available(), reason="npu is not available"',
      "otherwise every accelerator test is silently skipped on an NPU host"),
    C("return getattr(torch.cuda, t.__name__)", "torch_cuda_api", "replace", False,
      "return getattr(torch.npu, t.__name__)",
      "helper not used by the CEVAE tests; torch.npu exposes the legacy *Tensor types"),
    C('assert host in ("cpu", "cuda"), host', "device_type", "replace", True,
      'assert host in ("cpu", "npu"), host', "the ported tests call tensors_default_to('npu')"),
    C('new_module = "torch.cuda" if host == "cuda" else "torch"', "device_type", "removal", False, None,
      "dead once the context manager switches devices with set_default_device"),
    C('torch.set_default_tensor_type("{}.{}".format(new_module, name))', "device_type", "replace", True,
      'torch.set_default_device(None if host == "cpu" else host)',
      "set_default_tensor_type rejects torch.npu.*Tensor types (Ascend 2.7.1 API list); use set_default_device"),
    C('torch.set_default_tensor_type("{}.{}".format(old_module, name))', "device_type", "replace", True,
      "torch.set_default_device(None)",
      "restoring a CPU tensor type does not undo set_default_device; later tests would silently run on the NPU"),
    C("cuda_rng_state = torch.cuda.get_rng_state() if torch.cuda.is_available() else None", "torch_cuda_api",
      "replace", True, "cuda_rng_state = torch.npu.get_rng_state() if torch.npu.is_available() else None",
      "without it the NPU generator state is never saved/restored (silent RNG drift)"),
    C("torch.cuda.set_rng_state(cuda_rng_state)", "torch_cuda_api", "replace", True,
      "torch.npu.set_rng_state(cuda_rng_state)", "restore the NPU generator, not the (absent) CUDA one"),
    C("b = b.cuda(device=a.get_device()) if a.is_cuda else b.cpu()", "tensor_to_device", "replace", True,
      "b = b.to(a.device)",
      "a.is_cuda is False for NPU tensors, so b would be moved to the CPU and the comparison mixes devices"),
])

E("pyro_test_cevae", "tests/contrib/cevae/test_cevae.py", "explicit_replacement",
  "pyro-ppl/pyro tests/contrib/cevae/test_cevae.py (smoke, serialization and a CUDA smoke test)", [
    C('with tensors_default_to("cuda"):', "device_type", "replace", True, 'with tensors_default_to("npu"):',
      "run the accelerator smoke test on the NPU"),
    C("assert ite.is_cuda", "device_type", "replace", True, "assert ite.is_npu",
      "is_cuda is False for NPU tensors; the assertion would fail"),
])

E("pyro_conftest", "tests/conftest.py", "explicit_replacement",
  "pyro-ppl/pyro tests/conftest.py (PYRO_TENSOR_TYPE default tensor type, stage markers)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('torch.set_default_tensor_type(os.environ.get("PYRO_TENSOR_TYPE", "torch.DoubleTensor"))', "device_type",
      "add_branch", True,
      'torch.set_default_tensor_type(os.environ.get("PYRO_TENSOR_TYPE", "torch.DoubleTensor")); '
      'torch.set_default_device(os.environ.get("PYRO_DEVICE", "cpu"))',
      "the CUDA run selects the device through a torch.cuda.*Tensor type, which has no NPU equivalent accepted "
      "by set_default_tensor_type; add a device switch that the NPU make target sets"),
])

E("pyro_makefile", "Makefile", "explicit_replacement",
  "pyro-ppl/pyro Makefile (test-cuda targets exporting PYRO_TENSOR_TYPE=torch.cuda.DoubleTensor)", [
    C("=CUDA_TEST=1 PYRO_TENSOR_TYPE=torch.cuda.DoubleTensor pytest -vx --stage unit", "env_var", "replace", True,
      "CUDA_TEST=1 PYRO_DEVICE=npu PYRO_TENSOR_TYPE=torch.DoubleTensor pytest -vx --stage unit",
      "torch.cuda.DoubleTensor cannot be set as default type on an NPU host; select the device via PYRO_DEVICE"),
    C("CUDA_TEST=1 PYRO_TENSOR_TYPE=torch.cuda.DoubleTensor pytest -vx --stage unit --lax", "env_var", "replace",
      True, "CUDA_TEST=1 PYRO_DEVICE=npu PYRO_TENSOR_TYPE=torch.DoubleTensor pytest -vx --stage unit --lax",
      "same as the strict target"),
])

E("pyro_docker", "docker/Dockerfile", "explicit_replacement",
  "pyro-ppl/pyro docker/Dockerfile (cuda build-arg chooses the PyTorch wheel)", [
    C("if [ ${cuda} = 1 ]; then pip install torch torchvision; \\", "import_torch_npu", "replace", True,
      "if [ ${cuda} = 1 ]; then pip install torch==2.1.0 torchvision==0.16.0 --index-url "
      "https://download.pytorch.org/whl/cpu && pip install torch-npu==2.1.0.post12; \\",
      "accelerator image needs CPU torch + the matching torch_npu wheel (wheel version = torch version + .postN)"),
])

E("pyro_docker_make", "docker/Makefile", "explicit_replacement",
  "pyro-ppl/pyro docker/Makefile (build-gpu / run-gpu / notebook-gpu via nvidia-docker)", [
    C("nvidia-docker build -t ${IMG_NAME} \\", "device_type", "replace", True, "docker build -t ${IMG_NAME} \\",
      "nvidia-docker is not present on Ascend hosts"),
    C("--build-arg base_img=nvidia/cuda:11.8.0-cudnn8-devel-ubuntu20.04 \\", "device_type", "replace", True,
      "--build-arg base_img=ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10 \\",
      "the image needs CANN instead of CUDA (exact CANN image tag unconfirmed)"),
    C("nvidia-docker run --init -it --user ${USER} \\", "device_type", "replace", True,
      "docker run --init -it --device /dev/davinci0 --device /dev/davinci_manager --device /dev/devmm_svm "
      "--device /dev/hisi_hdc -v /usr/local/dcmi:/usr/local/dcmi -v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi "
      "-v /usr/local/Ascend/driver/lib64/:/usr/local/Ascend/driver/lib64/ "
      "-v /usr/local/Ascend/driver/version.info:/usr/local/Ascend/driver/version.info --user ${USER} \\",
      "NPU containers get the davinci device nodes and driver mounts instead of the NVIDIA runtime"),
    C("nvidia-docker run --init -it -p 8888:8888 --user ${USER} \\", "device_type", "replace", True,
      "docker run --init -it -p 8888:8888 --device /dev/davinci0 --device /dev/davinci_manager "
      "--device /dev/devmm_svm --device /dev/hisi_hdc -v /usr/local/dcmi:/usr/local/dcmi "
      "-v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi "
      "-v /usr/local/Ascend/driver/lib64/:/usr/local/Ascend/driver/lib64/ "
      "-v /usr/local/Ascend/driver/version.info:/usr/local/Ascend/driver/version.info --user ${USER} \\",
      "same as run-gpu"),
])

# ----------------------------------------------------------------------------------------------
# uber/causalml: CEVAE wrapper (torch), DragonNet (TF/Keras), packaging - no labels
# ----------------------------------------------------------------------------------------------
E("causalml_cevae", "causalml/inference/torch/cevae.py", "explicit_replacement",
  "uber/causalml causalml/inference/torch/cevae.py (sklearn-style wrapper over pyro's CEVAE)", [])

E("causalml_dragonnet", "causalml/inference/tf/dragonnet.py", "explicit_replacement",
  "uber/causalml causalml/inference/tf/dragonnet.py (Keras DragonNet; TensorFlow, not torch)", [])

E("causalml_pyproject", "pyproject.toml", "explicit_replacement",
  "uber/causalml pyproject.toml (torch / tf extras)", [])

# ----------------------------------------------------------------------------------------------
# AliciaCurth/CATENets: PyTorch backend (module-level DEVICE globals)
# ----------------------------------------------------------------------------------------------
E("catenets_base", "catenets/models/torch/base.py", "device_branch_or_abstraction",
  "AliciaCurth/CATENets catenets/models/torch/base.py (DEVICE global, BasicNet / RepresentationNet / PropensityNet)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'DEVICE = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "single device switch every CATENets torch model imports; unported, everything silently trains on the CPU"),
])

E("catenets_repr", "catenets/models/torch/representation_nets.py", "device_branch_or_abstraction",
  "AliciaCurth/CATENets catenets/models/torch/representation_nets.py (TARNet / CFRNet MMD / DragonNet)", [])

E("catenets_model_utils", "catenets/models/torch/utils/model_utils.py", "device_branch_or_abstraction",
  "AliciaCurth/CATENets catenets/models/torch/utils/model_utils.py (second DEVICE global, make_val_split)", [
    C('DEVICE = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'DEVICE = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "make_val_split returns tensors on this DEVICE; if it stays CPU they mismatch the NPU-resident models"),
])

E("catenets_ihdp_exp", "experiments/experiments_benchmarks_NeurIPS21/ihdp_experiments_catenets.py",
  "device_branch_or_abstraction",
  "AliciaCurth/CATENets experiments/experiments_benchmarks_NeurIPS21/ihdp_experiments_catenets.py", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "torch.manual_seed on the line above already seeds every device in recent torch (unconfirmed for the "
      "privateuse1 backend); the CUDA call is a lazy no-op without CUDA"),
])

# ----------------------------------------------------------------------------------------------
# claudiashi57/dragonnet, as a PyTorch port with the original repo layout
# ----------------------------------------------------------------------------------------------
E("dragonnet_models", "src/experiment/models.py", "explicit_replacement",
  "PyTorch port of claudiashi57/dragonnet src/experiment/models.py (DragonNet, TARNet, NEDnet, tarreg loss)", [])

E("dragonnet_ihdp_main", "src/experiment/ihdp_main.py", "explicit_replacement",
  "PyTorch port of claudiashi57/dragonnet src/experiment/ihdp_main.py (USE_CUDA flag, .cuda() chains, DataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("USE_CUDA = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "USE_CUDA = torch.npu.is_available()", "flag drives every device move; unported the port runs on the CPU"),
    C("tensor = tensor.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "tensor = tensor.npu(non_blocking=True)", "CUDA move fails on an NPU host"),
    C("xb, yb = xb.cuda(non_blocking=True), yb.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "xb, yb = xb.npu(non_blocking=True), yb.npu(non_blocking=True)", "CUDA move fails on an NPU host"),
    C("dragonnet = dragonnet.cuda()", "tensor_to_device", "replace", True, "dragonnet = dragonnet.npu()",
      "CUDA move fails on an NPU host"),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "removal", False, None,
      "guard of the DataParallel branch; returns 0 on an NPU host so the branch is dead; dropped with it"),
    C('print("Let\'s use", torch.cuda.device_count(), "GPUs!")', "torch_cuda_api", "removal", False, None,
      "body of the dropped DataParallel branch"),
    C("dragonnet = nn.DataParallel(dragonnet)", "distributed_framework", "removal", False, None,
      "torch.nn.DataParallel is unsupported on Ascend (use DDP); dead here because the CUDA guard is 0"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize raises without CUDA once USE_CUDA is true on the NPU host"),
    C("torch.cuda.synchronize()  # wait for queued kernels before reading the clock", "torch_cuda_api", "replace",
      True, "torch.npu.synchronize()  # wait for queued kernels before reading the clock",
      "same; also the timing would not wait for the NPU stream"),
    C("torch.cuda.max_memory_allocated() / 2 ** 20", "torch_cuda_api", "replace", False,
      'print("peak NPU memory: {:.1f} MiB".format(torch.npu.max_memory_allocated() / 2 ** 20))',
      "log only: the CUDA call reports 0 when CUDA was never initialised"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "cache release only; the CUDA call is a no-op without CUDA"),
    C('state = torch.load(weights_path, map_location="cuda:0" if USE_CUDA else "cpu")', "device_type", "replace",
      True, 'state = torch.load(weights_path, map_location="npu:0" if USE_CUDA else "cpu")',
      "map_location 'cuda:0' fails to deserialize on a host without CUDA"),
    C("return model.cuda() if USE_CUDA else model", "tensor_to_device", "replace", True,
      "return model.npu() if USE_CUDA else model", "CUDA move fails on an NPU host"),
])

E("dragonnet_run_sh", "src/experiment/run_ihdp.sh", "explicit_replacement",
  "claudiashi57/dragonnet src/experiment/run_ihdp.sh (one knob per GPU, nvidia-smi summary)", [
    C("export OMP_NUM_THREADS=4", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN environment must be sourced before torch_npu can load"),
    C("CUDA_VISIBLE_DEVICES=${gpu} python -m experiment.ihdp_main", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${gpu} python -m experiment.ihdp_main --data_base_dir ${DATA_DIR} \\",
      "CUDA_VISIBLE_DEVICES is ignored by the NPU runtime: both parallel runs would land on NPU 0"),
    C("nvidia-smi --query-gpu=index,memory.used --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info",
      "nvidia-smi is absent on an Ascend host and set -e would abort before the ATE step"),
])

E("dragonnet_ate", "src/semi_parameteric_estimation/ate.py", "explicit_replacement",
  "claudiashi57/dragonnet src/semi_parameteric_estimation/ate.py (numpy TMLE / AIPTW estimators)", [])

E("dragonnet_requirements", "requirements.txt", "explicit_replacement",
  "PyTorch port of claudiashi57/dragonnet requirements.txt (cu117 wheel index)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu117", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 hosts take CPU torch from the PyTorch index; aarch64 Ascend hosts use plain PyPI"),
    C("torch==1.13.1+cu117", "import_torch_npu", "replace", True, "torch==2.1.0",
      "no +cu117 build for Ascend and no torch_npu release for torch 1.13"),
    C("numpy>=1.21,<1.25", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "torch_npu wheel matching torch 2.1.0"),
])

# ----------------------------------------------------------------------------------------------
# kailiang-zhong/DESCN (KDD'22 uplift model)
# ----------------------------------------------------------------------------------------------
E("descn_model", "models/descn.py", "device_branch_or_abstraction",
  "kailiang-zhong/DESCN models/descn.py (ShareNetwork / ESX with an injected device)", [])

E("descn_util", "util/util.py", "explicit_replacement",
  "kailiang-zhong/DESCN util (seeding, tensor wrapper, Qini/AUUC metrics, GPU timer)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "torch.manual_seed above already seeds the accelerator in recent torch (unconfirmed for NPU); "
      "the CUDA call is lazy and harmless"),
    C("return t.cuda() if use_gpu else t", "tensor_to_device", "replace", True,
      "return t.npu() if use_gpu else t", "CUDA move fails on an NPU host"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA once use_gpu is true on the NPU host"),
    C("torch.cuda.synchronize()  # flush the stream so the wall clock is honest", "torch_cuda_api", "replace",
      True, "torch.npu.synchronize()  # flush the stream so the wall clock is honest", "same"),
])

E("descn_main", "main.py", "device_branch_or_abstraction",
  "kailiang-zhong/DESCN main.py (--gpu flag, torch.device(f'cuda:{gpu}'), pin_memory, memory logging)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("use_gpu = args.gpu >= 0 and torch.cuda.is_available() and cfg.use_gpu", "torch_cuda_api", "replace", True,
      "use_gpu = args.gpu >= 0 and torch.npu.is_available() and cfg.use_gpu",
      "unported, training silently falls back to the CPU"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "selects the NPU; the CUDA call fails without CUDA"),
    C('device = torch.device("cuda:{}".format(args.gpu) if use_gpu else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:{}".format(args.gpu) if use_gpu else "cpu")', "model and batches follow this device"),
    C('torch.cuda.get_device_name(args.gpu) if use_gpu else "cpu")', "torch_cuda_api", "replace", True,
      'torch.npu.get_device_name(args.gpu) if use_gpu else "cpu")', "raises without CUDA"),
    C("torch.cuda.memory_allocated(device) / 2 ** 20,", "torch_cuda_api", "replace", False,
      "torch.npu.memory_allocated(device) / 2 ** 20,",
      "log only: the CUDA stats call returns 0 when CUDA was never initialised"),
    C("torch.cuda.memory_reserved(device) / 2 ** 20)", "torch_cuda_api", "replace", False,
      "torch.npu.memory_reserved(device) / 2 ** 20)", "log only, as above"),
])

E("descn_config", "configs/descn_lzd.json", "device_branch_or_abstraction",
  "kailiang-zhong/DESCN experiment config (use_gpu flag)", [])

E("descn_run_sh", "run.sh", "explicit_replacement",
  "kailiang-zhong/DESCN run script (CUDA_VISIBLE_DEVICES, CUBLAS_WORKSPACE_CONFIG)", [
    C("mkdir -p ${OUT}", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN environment must be sourced before torch_npu can load"),
    C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${GPU}",
      "CUDA_VISIBLE_DEVICES is ignored by the NPU runtime; --gpu 0 would always mean physical NPU 0"),
    C("export CUBLAS_WORKSPACE_CONFIG=:4096:8", "env_var", "removal", False, None,
      "cuBLAS-only determinism knob, inert on Ascend"),
])

E("descn_search", "search/grid_search.py", "explicit_replacement",
  "DESCN-style loss-weight grid search scheduling trials by nvidia-smi free memory", [
    C('["nvidia-smi", "--query-gpu=memory.free", "--format=csv,nounits,noheader"]', "torch_cuda_api", "replace",
      True,
      '[sys.executable, "-c", "import torch, torch_npu; print(\'\\\\n\'.join(str(torch.npu.mem_get_info(i)[0] >> 20) '
      'for i in range(torch.npu.device_count())))"]',
      "nvidia-smi does not exist on an Ascend host (FileNotFoundError); torch.npu.mem_get_info gives free memory"),
    C('env["CUDA_VISIBLE_DEVICES"] = str(gpu)', "env_var", "replace", True,
      'env["ASCEND_RT_VISIBLE_DEVICES"] = str(gpu)',
      "otherwise every trial runs on NPU 0 regardless of the scheduler's choice"),
])

# ----------------------------------------------------------------------------------------------
# Valentyn1997/CausalTransformer (PyTorch Lightning + Hydra + Ray Tune)
# ----------------------------------------------------------------------------------------------
E("ct_train_multi", "runnables/train_multi.py", "explicit_replacement",
  "Valentyn1997/CausalTransformer runnables/train_multi.py (Lightning Trainer(gpus=...))", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("gpus=eval(str(args.exp.gpus)),", "device_type", "replace", True,
      'accelerator="npu", devices=eval(str(args.exp.gpus)),',
      "Trainer(gpus=[0]) refuses to start without CUDA GPUs; Lightning 1.4 has no built-in NPU accelerator, "
      "so an NPU accelerator/plugin has to be registered (exact API unconfirmed)"),
])

E("ct_config", "config/config.yaml", "explicit_replacement",
  "Valentyn1997/CausalTransformer config/config.yaml (exp.gpus)", [])

E("ct_backbone_cfg", "config/backbone/ct.yaml", "explicit_replacement",
  "Valentyn1997/CausalTransformer config/backbone/ct.yaml (Ray resources_per_trial)", [])

E("ct_time_varying", "src/models/time_varying_model.py", "explicit_replacement",
  "Valentyn1997/CausalTransformer src/models/time_varying_model.py (Ray Tune trial Trainer, EMA, BR losses)", [
    C("trainer = Trainer(gpus=eval(str(new_params.exp.gpus))[:1],", "device_type", "replace", True,
      'trainer = Trainer(accelerator="npu", devices=eval(str(new_params.exp.gpus))[:1],',
      "tuning-trial Trainer: same failure as the main Trainer when hyper-parameter tuning is enabled"),
])

E("ct_model", "src/models/ct.py", "explicit_replacement",
  "Valentyn1997/CausalTransformer src/models/ct.py (Causal Transformer LightningModule)", [])

E("ct_utils", "src/models/utils_transformer.py", "explicit_replacement",
  "Valentyn1997/CausalTransformer src/models/utils_transformer.py (hand-written attention, relative PE)", [])

E("ct_requirements", "requirements.txt", "explicit_replacement",
  "Valentyn1997/CausalTransformer requirements.txt (torch 1.9 / Lightning 1.4 pins)", [
    C("torch==1.9.0", "import_torch_npu", "replace", True, "torch==2.1.0",
      "torch_npu has no release for torch 1.9 (1.8.1 / 1.11.0 / 2.x only)"),
    C("torch-ema==0.2", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "torch_npu wheel matching torch 2.1.0"),
])
