# Labels for probe198 (image tokenizers / VQ-GAN / GAN training, CUDA -> Ascend NPU).
# Format: see ../../probe_build.py. One C(...) per upstream line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


AMP_OFF = ("on a host without CUDA, torch.cuda.amp / device_type='cuda' autocast warns and disables itself, "
           "so the run silently falls back to fp32 (GradScaler likewise becomes a no-op)")

# ---------------------------------------------------------------------------------------------
# taming-transformers / latent-diffusion
# ---------------------------------------------------------------------------------------------

E("taming_main", "main.py", "transfer_to_npu",
  "taming-transformers main.py (Lightning 1.x launcher) with latent-diffusion's CUDACallback", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry point: load the NPU backend before Lightning builds the Trainer"),
    C("=import torchvision", "import_torch_npu", "npu_only_addition", True,
      "from torch_npu.contrib import transfer_to_npu",
      "Lightning 1.4 has no NPU accelerator; transfer_to_npu remaps torch.cuda.* (device_count, is_available, "
      "CUDACallback's memory/synchronize calls) and rewrites the ddp backend nccl->hccl, so --gpus 0, keeps "
      "working unchanged"),
])

E("taming_quantize", "taming/modules/vqvae/quantize.py", "explicit_replacement",
  "taming-transformers VectorQuantizer / GumbelQuantize / VectorQuantizer2 / EMAVectorQuantizer", [
    C("soft_one_hot = F.gumbel_softmax(logits, tau=temp, dim=1, hard=hard)", "unsupported_op_workaround",
      "replace", False,
      "soft_one_hot = gumbel_softmax_npu(logits, tau=temp, dim=1, hard=hard)  # explicit -log(-log(U)) noise + softmax/one_hot",
      "F.gumbel_softmax is marked unsupported in Ascend's 2.7.1 API list and in msFmkTransplt's list, but it is "
      "built from exponential_/log/softmax which all have NPU kernels; an actual failure is unconfirmed, so a "
      "hand-written Gumbel sampler is a precaution"),
])

E("taming_make_samples", "scripts/make_samples.py", "explicit_replacement",
  "taming-transformers scripts/make_samples.py (conditional transformer sampling)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "entry script uses torch.npu below"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "        torch.npu.synchronize()",
      "torch.cuda.synchronize raises without a CUDA device (verbose_time path)"),
    C("torch.cuda.synchronize(device=model.device)", "torch_cuda_api", "replace", True,
      "        torch.npu.synchronize(device=model.device)",
      "same; the model now lives on an npu device"),
    C("        model.cuda()", "tensor_to_device", "replace", True,
      "        model.npu()", "Module.cuda() fails on an NPU host"),
    C("gpu = not opt.cpu and torch.cuda.is_available()", "device_type", "replace", True,
      "gpu = not opt.cpu and torch.npu.is_available()",
      "torch.cuda.is_available() is False on the NPU host, so sampling would silently run on the CPU"),
])

E("taming_train_sh", "scripts/train_vqgan.sh", "explicit_replacement",
  "taming-transformers style VQGAN training launcher (main.py --base ... -t True --gpus 0,1)", [
    C("=set -e", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (library paths, ASCEND_* vars) must be sourced before python starts"),
    C("export CUDA_VISIBLE_DEVICES=${GPUS}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPUS}",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; with e.g. GPUS=2,3 the re-indexed --gpus 0,1 "
      "would silently land on NPU 0 and 1"),
])

E("ldm_autoencoder", "ldm/models/autoencoder.py", "device_branch_or_abstraction",
  "latent-diffusion ldm/models/autoencoder.py (VQModel / AutoencoderKL Lightning modules)", [
    # deliberately unlabelled: everything goes through self.device / .to(x) / map_location="cpu"
])

E("ldm_env", "environment.yaml", "explicit_replacement",
  "latent-diffusion environment.yaml (conda, cudatoolkit=11.3, pytorch-lightning==1.4.2)", [
    C("- cudatoolkit=11.3", "custom_cuda_extension", "replace", True,
      "  - cpuonly",
      "no CUDA toolkit on an Ascend host (none at all for aarch64); with cudatoolkit conda also resolves the "
      "CUDA build of pytorch. torch_npu wants the CPU build of the same torch version"),
    C("- pip:", "import_torch_npu", "npu_only_addition", True,
      "    - torch-npu==1.11.0.post14",
      "torch_npu wheel matching the pinned pytorch=1.11.0 (COMPATIBILITY table: 1.11.0.post14 <-> CANN 8.0.RC2); "
      "keeping torch 1.11 lets pytorch-lightning==1.4.2 stay"),
])

E("ldm_model", "ldm/modules/diffusionmodules/model.py", "explicit_replacement",
  "latent-diffusion / SD2 first-stage Encoder/Decoder with the optional xformers MemoryEfficientAttnBlock", [
    C("out = xformers.ops.memory_efficient_attention(q, k, v, attn_bias=None, op=self.attention_op)",
      "attention_kernel", "replace", False,
      "        out = F.scaled_dot_product_attention(q.unsqueeze(1), k.unsqueeze(1), v.unsqueeze(1)).squeeze(1)",
      "xformers has no NPU backend; its import fails so this branch is dead and the vanilla bmm AttnBlock runs "
      "(correct, but O((hw)^2) memory). SDPA dispatches to the NPU flash-attention kernel (head dim <= 512)"),
    C('if XFORMERS_IS_AVAILBLE and attn_type == "vanilla":', "attention_kernel", "replace", False,
      '    if (XFORMERS_IS_AVAILBLE or hasattr(torch.nn.functional, "scaled_dot_product_attention")) and attn_type == "vanilla":',
      "performance only: select the memory-efficient block on NPU as well once it uses SDPA"),
])

# ---------------------------------------------------------------------------------------------
# BigGAN-PyTorch
# ---------------------------------------------------------------------------------------------

E("biggan_train", "train.py", "explicit_replacement",
  "BigGAN-PyTorch train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "entry script"),
    C("device = 'cuda'", "device_type", "replace", True,
      "  device = 'npu'", "every model/tensor placement below goes through this variable"),
    C("GD = nn.DataParallel(GD)", "distributed_framework", "replace", True,
      "    pass  # nn.DataParallel is unsupported on Ascend: train on one NPU or move to DDP+hccl",
      "torch.nn.DataParallel is marked unsupported (msFmkTransplt README: use DDP)"),
    C("patch_replication_callback(GD)", "distributed_framework", "removal", True, None,
      "only meaningful for (Synchronized) DataParallel; asserts that GD is a DataParallel once the line above changes"),
])

E("biggan_utils", "utils.py", "explicit_replacement",
  "BigGAN-PyTorch utils.py (parser, seed_rng, load_weights, sample_sheet, interp, prepare_z_y)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
      "  torch.npu.manual_seed(seed)",
      "silent no-op without CUDA; torch.manual_seed on the line above already seeds the NPU generator in recent "
      "torch_npu (unconfirmed in knowledge), so only reproducibility hygiene"),
    C("join_strings('_', ['G', name_suffix]))),", "tensor_to_device", "replace", True,
      "      torch.load('%s/%s.pth' % (root, join_strings('_', ['G', name_suffix])), map_location='cpu'),",
      "released BigGAN weights were saved from CUDA tensors; torch.load without map_location fails when CUDA is "
      "unavailable"),
    C("join_strings('_', ['G_optim', name_suffix]))))", "tensor_to_device", "replace", True,
      "        torch.load('%s/%s.pth' % (root, join_strings('_', ['G_optim', name_suffix])), map_location='cpu'))",
      "optimizer state saved on GPU; same failure"),
    C("join_strings('_', ['D', name_suffix]))),", "tensor_to_device", "replace", True,
      "      torch.load('%s/%s.pth' % (root, join_strings('_', ['D', name_suffix])), map_location='cpu'),",
      "same"),
    C("join_strings('_', ['D_optim', name_suffix]))))", "tensor_to_device", "replace", True,
      "        torch.load('%s/%s.pth' % (root, join_strings('_', ['D_optim', name_suffix])), map_location='cpu'))",
      "same"),
    C("join_strings('_', ['state_dict', name_suffix])))[item]", "tensor_to_device", "replace", True,
      "    state_dict[item] = torch.load('%s/%s.pth' % (root, join_strings('_', ['state_dict', name_suffix])), map_location='cpu')[item]",
      "state_dict pickle may hold CUDA tensors (best_FID etc.); load to CPU"),
    C("join_strings('_', ['G_ema', name_suffix]))),", "tensor_to_device", "replace", True,
      "      torch.load('%s/%s.pth' % (root, join_strings('_', ['G_ema', name_suffix])), map_location='cpu'),",
      "same"),
    C("G_z =  nn.parallel.data_parallel(G, (z_, G.shared(y_)))", "distributed_framework", "replace", True,
      "      G_z = G(z_, G.shared(y_))",
      "torch.nn.parallel.data_parallel is unsupported on Ascend (reached with --parallel)"),
    C("(i + 1) * classes_per_sheet, device='cuda')", "device_type", "replace", True,
      "    y = torch.arange(i * classes_per_sheet, (i + 1) * classes_per_sheet, device='npu')",
      "hard-coded CUDA device string"),
    C("z_ = torch.randn(classes_per_sheet, G.dim_z, device='cuda')", "device_type", "replace", True,
      "        z_ = torch.randn(classes_per_sheet, G.dim_z, device='npu')",
      "hard-coded CUDA device string"),
    C("o = nn.parallel.data_parallel(G, (z_[:classes_per_sheet], G.shared(y)))", "distributed_framework",
      "replace", True,
      "          o = G(z_[:classes_per_sheet], G.shared(y))",
      "data_parallel unsupported on Ascend"),
    C("lerp = torch.linspace(0, 1.0, num_midpoints + 2, device='cuda').to(x0.dtype)", "device_type", "replace",
      True,
      "  lerp = torch.linspace(0, 1.0, num_midpoints + 2, device=x0.device).to(x0.dtype)",
      "hard-coded CUDA device string in interp()"),
    C("def prepare_z_y(G_batch_size, dim_z, nclasses, device='cuda',", "device_type", "replace", False,
      "def prepare_z_y(G_batch_size, dim_z, nclasses, device='npu',",
      "default argument only; every in-tree caller passes device explicitly"),
])

E("biggan_train_fns", "train_fns.py", "explicit_replacement",
  "BigGAN-PyTorch train_fns.py (GAN_training_function, save_and_sample, test)", [
    C("fixed_Gz =  nn.parallel.data_parallel(which_G, (fixed_z, which_G.shared(fixed_y)))",
      "distributed_framework", "replace", True,
      "      fixed_Gz = which_G(fixed_z, which_G.shared(fixed_y))",
      "data_parallel unsupported on Ascend (reached with --parallel)"),
    C("fix_z=fix_z, fix_y=fix_y, device='cuda')", "device_type", "replace", True,
      "                       fix_z=fix_z, fix_y=fix_y, device='npu')",
      "interp_sheet places its noise on this device"),
])

E("biggan_layers", "layers.py", "explicit_replacement",
  "BigGAN-PyTorch layers.py (SN layers, attention, ccbn/bn with cross-replica BN)", [
    C("self.bn = SyncBN2d(output_size, eps=self.eps, momentum=self.momentum, affine=False)",
      "distributed_framework", "replace", False,
      "      self.bn = nn.SyncBatchNorm(output_size, eps=self.eps, momentum=self.momentum, affine=False)",
      "vendored SynchronizedBatchNorm2d only synchronises through DataParallelWithCallback; once DataParallel "
      "is gone it silently degrades to per-device BN. nn.SyncBatchNorm (supported, fp16/fp32) syncs over hccl "
      "under DDP. Note: ccbn passes gain/bias to self.bn, so the call site needs a small wrapper too"),
    C("self.bn = SyncBN2d(output_size, eps=eps, momentum=momentum, affine=False)", "distributed_framework",
      "replace", False,
      "      self.bn = nn.SyncBatchNorm(output_size, eps=eps, momentum=momentum, affine=False)",
      "same as ccbn"),
])

E("biggan_inception", "inception_utils.py", "explicit_replacement",
  "BigGAN-PyTorch inception_utils.py (torch FID/IS with Newton-Schulz sqrtm)", [
    C("inception_model = WrapInception(inception_model.eval()).cuda()", "tensor_to_device", "replace", True,
      "  inception_model = WrapInception(inception_model.eval()).npu()", "Module.cuda() fails on NPU host"),
    C("inception_model = nn.DataParallel(inception_model)", "distributed_framework", "replace", True,
      "    pass  # nn.DataParallel unsupported on Ascend; keep the single-NPU Inception",
      "reached when training with --parallel"),
    C("torch.tensor(data_mu).float().cuda(), torch.tensor(data_sigma).float().cuda())", "tensor_to_device",
      "replace", True,
      "        FID = torch_calculate_frechet_distance(mu, sigma, torch.tensor(data_mu).float().to(mu.device), torch.tensor(data_sigma).float().to(mu.device))",
      "reference moments are moved with .cuda()"),
])

E("biggan_launch", "scripts/launch_BigGAN_bs256x8.sh", "explicit_replacement",
  "BigGAN-PyTorch scripts/launch_BigGAN_bs256x8.sh", [
    C("# Prepare the HDF5 first:", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "ignored on Ascend, but it lists every card of an 8-device box, so nothing changes in practice"),
    C("--dataset I128_hdf5 --parallel --shuffle", "distributed_framework", "replace", True,
      "--dataset I128_hdf5 --shuffle  --num_workers 8 --batch_size 256 --load_in_mem  \\",
      "--parallel switches on nn.DataParallel, which Ascend does not support"),
])

E("biggan_moments", "calculate_inception_moments.py", "explicit_replacement",
  "BigGAN-PyTorch calculate_inception_moments.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("device = 'cuda'", "device_type", "replace", True, "  device = 'npu'", "hard-coded CUDA device"),
])

# ---------------------------------------------------------------------------------------------
# Open-MAGVIT2 (Lightning 2.x CLI) / lucidrains MaskGIT-MAGVIT2 / dome272 MaskGIT & VQGAN
# ---------------------------------------------------------------------------------------------

E("omagvit2_cfg", "configs/gpu/imagenet_lfqgan_256_B.yaml", "explicit_replacement",
  "Open-MAGVIT2 LightningCLI config (configs/gpu/*.yaml)", [
    C("accelerator: gpu", "device_type", "replace", True,
      "  accelerator: npu",
      "Lightning's gpu (CUDA) accelerator refuses to start without CUDA; an NPU accelerator has to be "
      "registered (Lightning ships none; which plugin provides it is not covered by the knowledge base)"),
    C("strategy: ddp_find_unused_parameters_true", "dist_backend", "replace", False,
      "  strategy: {class_path: lightning.pytorch.strategies.DDPStrategy, init_args: {process_group_backend: hccl, find_unused_parameters: true}}",
      "Lightning picks nccl only for CUDA root devices and gloo otherwise; unless the NPU accelerator plugin "
      "maps npu->hccl itself, DDP would run on gloo (unconfirmed)"),
])

E("omagvit2_lfqgan", "src/Open_MAGVIT2/models/lfqgan.py", "explicit_replacement",
  "Open-MAGVIT2 src/Open_MAGVIT2/models/lfqgan.py (manual-optimisation VQModel)", [
    C("peak_mem = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      "            peak_mem = torch.npu.max_memory_allocated() / 1024 ** 3",
      "returns 0 without an initialised CUDA context; logging only"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "        torch.npu.empty_cache()",
      "silent no-op on NPU host; only frees cached NPU memory"),
])

E("omagvit2_lfq", "src/Open_MAGVIT2/modules/vqvae/lookup_free_quantize.py", "explicit_replacement",
  "Open-MAGVIT2 / vector-quantize-pytorch lookup-free quantizer (LFQ) with entropy loss", [
    C("from torch.cuda.amp import autocast", "amp", "replace", True,
      "from torch.npu.amp import autocast",
      "the entropy loss is wrapped in autocast(enabled=False) to force fp32; the CUDA context manager does not "
      "touch NPU autocast, so under precision 16-mixed the einsum logits are silently computed in fp16 "
      "(temperature 0.01 makes this numerically fragile)"),
])

E("muse_trainers", "muse_maskgit_pytorch/trainers.py", "device_branch_or_abstraction",
  "lucidrains muse-maskgit-pytorch VQGanVAETrainer (accelerate)", [
    C("pkg = torch.load(path)", "tensor_to_device", "replace", False,
      "        pkg = torch.load(path, map_location='cpu')",
      "only fails for checkpoints written on a CUDA machine; checkpoints saved by the ported run load fine"),
])

E("muse_accel_cfg", "accelerate_configs/multi_gpu.yaml", "explicit_replacement",
  "accelerate config used with lucidrains trainers (accelerate launch --config_file ...)", [
    C("distributed_type: MULTI_GPU", "distributed_framework", "replace", False,
      "distributed_type: MULTI_NPU",
      "accelerate >= 0.22 knows MULTI_NPU and picks hccl from the runtime environment; whether a MULTI_GPU "
      "config still launches correctly on an NPU host is unconfirmed"),
])

E("maskgit_train_transformer", "training_transformer.py", "explicit_replacement",
  "dome272 MaskGIT-pytorch training_transformer.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "        scaler = torch.npu.amp.GradScaler()", AMP_OFF),
    C("with torch.cuda.amp.autocast():", "amp", "replace", True,
      "                    with torch.npu.amp.autocast():", AMP_OFF),
    C("parser.add_argument('--device', type=str, default=\"cuda\"", "device_type", "replace", True,
      "    parser.add_argument('--device', type=str, default=\"npu\", help='Which device the training is on')",
      "default device string feeds every .to(device=args.device)"),
])

E("vqgan_pytorch_train", "training_vqgan.py", "device_branch_or_abstraction",
  "dome272 VQGAN-pytorch training_vqgan.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("default=\"cuda\" if torch.cuda.is_available() else \"cpu\"", "device_type", "replace", True,
      "    parser.add_argument('--device', type=str, default=\"npu\" if torch.npu.is_available() else \"cpu\", help='Which device the training is on')",
      "torch.cuda.is_available() is False on the NPU host, so training would silently run on the CPU"),
])

E("magvit2_attend", "magvit2_pytorch/attend.py", "device_branch_or_abstraction",
  "lucidrains magvit2-pytorch / muse attend.py (Attend with SDPA flash config)", [
    C("self.flash = flash and torch.cuda.is_available()", "attention_kernel", "add_branch", False,
      "        self.flash = flash and (torch.cuda.is_available() or torch.npu.is_available())",
      "on NPU the gate silently disables SDPA and the O(n^2) einsum path runs; correct but slow"),
    C("with torch.backends.cuda.sdp_kernel(**config._asdict()):", "attention_kernel", "replace", False,
      "        with contextlib.nullcontext():",
      "torch.backends.cuda.sdp_kernel is marked unsupported on Ascend; on NPU tensors the cpu_config "
      "(all backends enabled) is passed, so it is most likely harmless (unconfirmed)"),
])

# ---------------------------------------------------------------------------------------------
# LlamaGen tokenizer training
# ---------------------------------------------------------------------------------------------

E("llamagen_vq_train", "tokenizer/tokenizer_image/vq_train.py", "explicit_replacement",
  "LlamaGen tokenizer/tokenizer_image/vq_train.py (DDP, torch.cuda.amp, LPIPS/PatchGAN loss)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('assert torch.cuda.is_available(), "Training currently requires at least one GPU."', "device_type",
      "replace", True,
      '    assert torch.npu.is_available(), "Training currently requires at least one NPU."',
      "assert fails on the NPU host"),
    C("device = rank % torch.cuda.device_count()", "device_type", "replace", True,
      "    device = torch.device('npu', rank % torch.npu.device_count())",
      "device_count() is 0 -> ZeroDivisionError; also an int device means cuda:<int> for .to()/torch.tensor(), "
      "so wrapping it in torch.device('npu', ...) fixes every later .to(device)"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True,
      "    torch.npu.set_device(device)", "raises without CUDA"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=(args.mixed_precision =='fp16'))", "amp", "replace", True,
      "    scaler = torch.npu.amp.GradScaler(enabled=(args.mixed_precision =='fp16'))", AMP_OFF),
    C("scaler_disc = torch.cuda.amp.GradScaler(enabled=(args.mixed_precision =='fp16'))", "amp", "replace",
      True,
      "    scaler_disc = torch.npu.amp.GradScaler(enabled=(args.mixed_precision =='fp16'))", AMP_OFF),
    C("vq_model = torch.compile(vq_model) # requires PyTorch 2.0", "compile_mode", "replace", False,
      "        vq_model = torch.compile(vq_model, backend='npugraphs')  # or skip; Inductor on NPU needs torch_npu>=2.6",
      "only with --compile; Inductor support on NPU depends on the torch_npu version (unconfirmed for the "
      "version a port would pin)"),
    C("=with torch.cuda.amp.autocast(dtype=ptdtype):", "amp", "replace", True,
      "            with torch.npu.amp.autocast(dtype=ptdtype):", AMP_OFF + " (default --mixed-precision bf16)"),
    C("with torch.cuda.amp.autocast(dtype=ptdtype):  # same precision", "amp", "replace", True,
      "            with torch.npu.amp.autocast(dtype=ptdtype):  # same precision for the discriminator pass",
      AMP_OFF),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "                torch.npu.synchronize()", "raises without CUDA"),
])

E("llamagen_distributed", "utils/distributed.py", "explicit_replacement",
  "LlamaGen / DeiT-style utils/distributed.py init_distributed_mode", [
    C("os.environ['LOCAL_SIZE'] = str(torch.cuda.device_count())", "torch_cuda_api", "replace", False,
      "        os.environ['LOCAL_SIZE'] = str(torch.npu.device_count())",
      "silently exports 0; LOCAL_SIZE is informational in this code base"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "        num_gpus = torch.npu.device_count()",
      "0 on the NPU host -> proc_id % num_gpus raises ZeroDivisionError under SLURM"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "    torch.npu.set_device(args.gpu)", "raises without CUDA"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True,
      "    args.dist_backend = 'hccl'", "NCCL is not available on Ascend; HCCL is the collective backend"),
])

E("llamagen_extract_codes", "autoregressive/train/extract_codes_c2i.py", "explicit_replacement",
  "LlamaGen autoregressive/train/extract_codes_c2i.py (tokenise ImageNet with the VQ model)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('assert torch.cuda.is_available(), "Training currently requires at least one GPU."', "device_type",
      "replace", True,
      '    assert torch.npu.is_available(), "Training currently requires at least one NPU."',
      "assert fails on the NPU host"),
    C("device = rank % torch.cuda.device_count()", "device_type", "replace", True,
      "        device = torch.device('npu', rank % torch.npu.device_count())",
      "0 devices -> ZeroDivisionError; int device would mean cuda:<int> in vq_model.to(device)"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True,
      "        torch.npu.set_device(device)", "raises without CUDA"),
    C("device = 'cuda'", "device_type", "replace", True,
      "        device = 'npu'", "--debug path: hard-coded CUDA device"),
])

# ---------------------------------------------------------------------------------------------
# StyleGAN-T / StyleGAN ops
# ---------------------------------------------------------------------------------------------

E("stylegant_disc", "networks/discriminator.py", "explicit_replacement",
  "StyleGAN-T networks/discriminator.py (projected DINO discriminator)", [
    C("with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=self.use_fp16):", "amp", "replace",
      True,
      "        with torch.autocast(device_type=x.device.type, dtype=torch.float16, enabled=self.use_fp16):",
      AMP_OFF + "; the frozen ViT would silently run in fp32"),
])

E("stylegan_bias_act", "torch_utils/ops/bias_act.py", "device_branch_or_abstraction",
  "StyleGAN2-ADA/3/T torch_utils/ops/bias_act.py (JIT-built CUDA plugin with reference fallback)", [
    # deliberately unlabelled: the plugin is only built/used when x.device.type == 'cuda';
    # on NPU tensors the pure-PyTorch _bias_act_ref path is taken automatically.
])

# ---------------------------------------------------------------------------------------------
# FID evaluation, packaging, container
# ---------------------------------------------------------------------------------------------

E("fid_score", "evaluation/fid/fid_score.py", "device_branch_or_abstraction",
  "pytorch-fid fid_score.py vendored into a tokenizer repo", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "entry point (python -m evaluation.fid.fid_score); needed for torch.npu below"),
    C("device = torch.device('cuda' if (torch.cuda.is_available()) else 'cpu')", "device_type", "replace", True,
      "        device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "without --device the FID would silently be computed on the CPU"),
])

E("eval_fid_sh", "scripts/eval_fid.sh", "explicit_replacement",
  "tokenizer rFID evaluation script (pytorch-fid --device cuda:0, torch-fidelity --gpu 0)", [
    C("=set -euo pipefail", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment"),
    C("CUDA_VISIBLE_DEVICES=${GPU} python tokenizer/tokenizer_image/reconstruction.py", "env_var", "replace",
      True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU} python tokenizer/tokenizer_image/reconstruction.py \\",
      "device selection is ignored on Ascend; GPU=3 would silently run on NPU 0"),
    C("--device cuda:0 --batch-size 100", "device_type", "replace", True,
      "python -m pytorch_fid ${OUT} data/imagenet_val_256.npz --device npu:0 --batch-size 100 --dims 2048",
      "torch.device('cuda:0') fails; 'npu:0' resolves through torch_npu's autoload (torch_npu >= 2.5.1) since "
      "pytorch_fid itself never imports torch_npu"),
    C("fidelity --gpu 0 --isc --kid", "device_type", "replace", False,
      "fidelity --isc --kid --input1 ${OUT} --input2 data/imagenet_val_256 --kid-subset-size 1000",
      "torch-fidelity only knows CUDA/CPU; dropping --gpu computes IS/KID on the CPU. Its exact behaviour "
      "on an NPU host with --gpu is unconfirmed"),
])

E("requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt of a LlamaGen / Open-MAGVIT2 style tokenizer repo (cu118 wheels, xformers)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "custom_cuda_extension", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu needs the CPU torch build on x86 (plain PyPI on aarch64)"),
    C("torch==2.1.2+cu118", "custom_cuda_extension", "replace", True,
      "torch==2.1.0",
      "+cu118 wheel; torch_npu 2.1.0.postN requires exactly torch 2.1.0"),
    C("torchvision==0.16.2+cu118", "custom_cuda_extension", "replace", True,
      "torchvision==0.16.0",
      "+cu118 wheel; 0.16.0 is the release paired with torch 2.1.0"),
    C("numpy==1.26.4", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post12",
      "the Ascend adapter itself (2.1.0.post12 <-> CANN 8.1.RC1)"),
    C("xformers==0.0.23.post1", "attention_kernel", "removal", True, None,
      "no NPU build; the wheel pins a CUDA torch and would replace the CPU torch. SDPA covers the attention"),
])

E("dockerfile", "docker/Dockerfile", "explicit_replacement",
  "training Dockerfile (pytorch/pytorch CUDA base, DeepSpeed op prebuild, NCCL env)", [
    C("FROM pytorch/pytorch:2.1.2-cuda11.8-cudnn8-devel", "custom_cuda_extension", "replace", True,
      "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "CUDA base image; an Ascend CANN base image provides the toolkit and driver user-space libraries"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0 7.5 8.0 8.6+PTX"', "env_var", "removal", False, None,
      "nvcc arch list; meaningless without CUDA, harmless if kept"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False,
      "ENV ASCEND_VISIBLE_DEVICES=all",
      "read by the NVIDIA container runtime only; Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES (devices "
      "can also be mounted with --device /dev/davinciN at run time)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA runtime setting, ignored on Ascend"),
    C("RUN DS_BUILD_FUSED_ADAM=1 DS_BUILD_CPU_ADAM=1 pip install", "custom_cuda_extension", "replace", True,
      "RUN pip install --no-cache-dir deepspeed==0.12.6",
      "DS_BUILD_FUSED_ADAM pre-compiles the CUDA fused Adam with nvcc and fails the build on a CANN image; "
      "DeepSpeed's NPU accelerator supplies its own op builders"),
    C("ENV NCCL_DEBUG=WARN", "env_var", "replace", False,
      "ENV ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL_* ignored by HCCL; closest knob is the CANN log level (not an exact equivalent)"),
    C("ENV NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
      "no HCCL counterpart; HCCL uses RoCE on the NPU NICs"),
    C("ENV NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False,
      "ENV HCCL_SOCKET_IFNAME=eth0",
      "HCCL's host-NIC selection for root-info exchange; only matters multi-node"),
])
