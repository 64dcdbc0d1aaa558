"""Labels for probe406 (neural implicit shape representations, CUDA -> Ascend NPU).

One entry per upstream file; one C(...) per line a careful porter edits for an explicit
torch_npu port. See README.md for the policy and the judgement calls.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: load torch_npu before any torch.npu / .npu() use (autoload only exists "
               "from torch_npu 2.5.1; the import is still recommended)")

# --------------------------------------------------------------------------------------------
# DeepSDF (facebookresearch/DeepSDF)
# --------------------------------------------------------------------------------------------
E("deepsdf_train", "train_deep_sdf.py", "explicit_replacement",
  "facebookresearch/DeepSDF train_deep_sdf.py (auto-decoder training, latent Embedding on CPU, DataParallel decoder)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NOTE),
    C('decoder = arch.Decoder(latent_size, **specs["NetworkSpecs"]).cuda()', "tensor_to_device", "replace", True,
      'decoder = arch.Decoder(latent_size, **specs["NetworkSpecs"]).npu()',
      "Module.cuda() raises on a host without CUDA; move the decoder to the NPU"),
    C('logging.info("training with {} GPU(s)".format(torch.cuda.device_count()))', "torch_cuda_api", "replace", False,
      'logging.info("training with {} NPU(s)".format(torch.npu.device_count()))',
      "log line only: torch.cuda.device_count() returns 0 on an NPU host without raising"),
    C("=decoder = torch.nn.DataParallel(decoder)", "distributed_framework", "removal", True, None,
      "torch.nn.DataParallel is marked unsupported (✘) in Ascend's 2.7.1 API list; train on one NPU "
      "(or move to DDP/hccl). Checkpoints then lose the 'module.' key prefix"),
    C("input = torch.cat([batch_vecs, xyz[i]], dim=1)", "tensor_to_device", "replace", True,
      "input = torch.cat([batch_vecs, xyz[i]], dim=1).npu()",
      "the latent Embedding and the loader tensors live on CPU; DataParallel used to scatter this CPU input "
      "onto the device. Without DataParallel the input must be moved explicitly or the NPU decoder gets a CPU tensor"),
    C("chunk_loss = loss_l1(pred_sdf, sdf_gt[i].cuda()) / num_sdf_samples", "tensor_to_device", "replace", True,
      "chunk_loss = loss_l1(pred_sdf, sdf_gt[i].npu()) / num_sdf_samples",
      "Tensor.cuda() raises without CUDA"),
    C("chunk_loss = chunk_loss + reg_loss.cuda()", "tensor_to_device", "replace", True,
      "chunk_loss = chunk_loss + reg_loss.npu()",
      "code-regularisation loss is computed on the CPU latent codes and added to the device loss"),
])

E("deepsdf_reconstruct", "reconstruct.py", "explicit_replacement",
  "facebookresearch/DeepSDF reconstruct.py (latent-code optimisation against a frozen decoder)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("latent = torch.ones(1, latent_size).normal_(mean=0, std=stat).cuda()", "tensor_to_device", "replace", True,
      "latent = torch.ones(1, latent_size).normal_(mean=0, std=stat).npu()",
      "the branch the script always takes (stat=0.01)"),
    C("latent = torch.normal(stat[0].detach(), stat[1].detach()).cuda()", "tensor_to_device", "replace", False,
      "latent = torch.normal(stat[0].detach(), stat[1].detach()).npu()",
      "only reached when stat is an (mean, var) pair; __main__ always passes the float 0.01, so this is dead "
      "in the shipped script. Ported for consistency"),
    C("=).cuda()", "tensor_to_device", "replace", True, ").npu()",
      "closing line of unpack_sdf_samples_from_ram(...).cuda(): SDF samples to the device"),
    C("inputs = torch.cat([latent_inputs, xyz], 1).cuda()", "tensor_to_device", "replace", True,
      "inputs = torch.cat([latent_inputs, xyz], 1).npu()",
      "both operands are already on the device after the port, but Tensor.cuda() itself raises without CUDA"),
    C("lat_mat = torch.zeros(0).cuda()", "tensor_to_device", "replace", False,
      "lat_mat = torch.zeros(0).npu()",
      "empirical_stat() is defined but never called (its use is commented out at the reconstruct() call)"),
    C("=decoder = torch.nn.DataParallel(decoder)", "distributed_framework", "removal", True, None,
      "DataParallel is only used here to match 'module.'-prefixed checkpoint keys; the ported trainer no longer "
      "wraps the decoder, so its checkpoints have no prefix and loading into a DataParallel wrapper fails. "
      "DataParallel is also ✘ in Ascend's API list"),
    C('decoder.load_state_dict(saved_model_state["model_state_dict"])', "distributed_framework", "replace", False,
      'decoder.load_state_dict({k[7:] if k.startswith("module.") else k: v for k, v in saved_model_state["model_state_dict"].items()})',
      "strip the 'module.' prefix so checkpoints written by the original CUDA trainer still load; "
      "checkpoints from the ported trainer load without it"),
    C("decoder = decoder.module.cuda()", "tensor_to_device", "replace", True,
      "decoder = decoder.npu()",
      "no wrapper any more (no .module) and Module.cuda() raises without CUDA"),
])

E("deepsdf_mesh", "deep_sdf/mesh.py", "explicit_replacement",
  "facebookresearch/DeepSDF deep_sdf/mesh.py (dense SDF grid query + skimage marching cubes)", [
    C("sample_subset = samples[head : min(head + max_batch, num_samples), 0:3].cuda()", "tensor_to_device", "replace", True,
      "sample_subset = samples[head : min(head + max_batch, num_samples), 0:3].npu()",
      "query batches go to the decoder's device"),
])

E("deepsdf_utils", "deep_sdf/utils.py", "explicit_replacement",
  "facebookresearch/DeepSDF deep_sdf/utils.py (logging, CLI args, decode_sdf) - device-agnostic, no change", [])

E("deepsdf_workspace", "deep_sdf/workspace.py", "explicit_replacement",
  "facebookresearch/DeepSDF deep_sdf/workspace.py (experiment directory layout, checkpoint/latent loading)", [
    C('lat_vecs.append(data["latent_codes"][i].cuda())', "tensor_to_device", "replace", False,
      'lat_vecs.append(data["latent_codes"][i].npu())',
      "legacy branch for latent files stored as a bare tensor; the trainer writes an Embedding state_dict, so "
      "the else branch (CPU tensor) runs and callers move it themselves"),
])

E("deepsdf_decoder", "networks/deep_sdf_decoder.py", "explicit_replacement",
  "facebookresearch/DeepSDF networks/deep_sdf_decoder.py (8-layer MLP with weight norm) - no change", [])

E("deepsdf_gen_meshes", "generate_training_meshes.py", "explicit_replacement",
  "facebookresearch/DeepSDF generate_training_meshes.py (meshes for the learned training codes)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=decoder = torch.nn.DataParallel(decoder)", "distributed_framework", "removal", True, None,
      "same as reconstruct.py: the wrapper only matched 'module.' keys, which the ported trainer no longer writes"),
    C('decoder.load_state_dict(saved_model_state["model_state_dict"])', "distributed_framework", "replace", False,
      'decoder.load_state_dict({k[7:] if k.startswith("module.") else k: v for k, v in saved_model_state["model_state_dict"].items()})',
      "keeps CUDA-era (DataParallel) checkpoints loadable"),
    C("decoder = decoder.module.cuda()", "tensor_to_device", "replace", True, "decoder = decoder.npu()",
      "no .module without the wrapper; Module.cuda() raises without CUDA"),
    C("latent_vector = latent_vector.cuda()", "tensor_to_device", "replace", True,
      "latent_vector = latent_vector.npu()",
      "latent codes come back on CPU from ws.load_latent_vectors (state_dict branch)"),
])

E("deepsdf_specs", "examples/chairs/specs.json", "explicit_replacement",
  "facebookresearch/DeepSDF examples/*/specs.json (experiment spec) - nothing device-specific", [])

# --------------------------------------------------------------------------------------------
# Occupancy Networks (autonomousvision/occupancy_networks)
# --------------------------------------------------------------------------------------------
E("onet_train", "train.py", "explicit_replacement",
  "autonomousvision/occupancy_networks train.py (--no-cuda flag, is_cuda/device globals)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("is_cuda = (torch.cuda.is_available() and not args.no_cuda)", "torch_cuda_api", "replace", True,
      "is_cuda = (torch.npu.is_available() and not args.no_cuda)",
      "unchanged, this is False on an NPU host and training silently falls back to CPU"),
    C('device = torch.device("cuda" if is_cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if is_cuda else "cpu")', "device string"),
])

E("onet_generate", "generate.py", "explicit_replacement",
  "autonomousvision/occupancy_networks generate.py (mesh extraction with MISE, timing tables)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("is_cuda = (torch.cuda.is_available() and not args.no_cuda)", "torch_cuda_api", "replace", True,
      "is_cuda = (torch.npu.is_available() and not args.no_cuda)",
      "otherwise generation silently runs on CPU"),
    C('device = torch.device("cuda" if is_cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if is_cuda else "cpu")', "device string"),
])

E("onet_checkpoints", "im2mesh/checkpoints.py", "explicit_replacement",
  "autonomousvision/occupancy_networks im2mesh/checkpoints.py (CheckpointIO: local file or model-zoo URL)", [
    C("state_dict = torch.load(filename)", "tensor_to_device", "replace", False,
      "state_dict = torch.load(filename, map_location='cpu')",
      "resume files written by the ported trainer hold NPU tensors and load as is; only CUDA-written .pt files "
      "fail to deserialize without map_location"),
    C("state_dict = model_zoo.load_url(url, progress=True)", "tensor_to_device", "replace", True,
      "state_dict = model_zoo.load_url(url, progress=True, map_location='cpu')",
      "the pretrained configs point test.model_file at published weights saved from CUDA models; without "
      "map_location torch refuses to restore CUDA storages when CUDA is unavailable"),
])

E("onet_training", "im2mesh/onet/training.py", "explicit_replacement",
  "autonomousvision/occupancy_networks im2mesh/onet/training.py (Trainer; everything goes through self.device)", [])

E("onet_config", "im2mesh/config.py", "explicit_replacement",
  "autonomousvision/occupancy_networks im2mesh/config.py (method registry incl. the DMC baseline)", [
    C("from im2mesh import onet, r2n2, psgn, pix2mesh, dmc", "custom_cuda_extension", "replace", True,
      "from im2mesh import onet, r2n2, psgn, pix2mesh",
      "importing im2mesh.dmc imports the nvcc-built im2mesh.dmc.ops._cuda_ext, which is not built on the "
      "Ascend host (see setup.py); the import would break every method, not only DMC"),
    C("'dmc': dmc,", "custom_cuda_extension", "removal", True, None,
      "DMC baseline dropped together with its CUDA kernels"),
])

E("onet_method_config", "im2mesh/onet/config.py", "explicit_replacement",
  "autonomousvision/occupancy_networks im2mesh/onet/config.py (get_model/get_trainer/get_generator)", [
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "replace", False,
      "raise ValueError('model.multi_gpu (torch.nn.DataParallel) is not supported on Ascend NPU; use DDP')",
      "only reached when model.multi_gpu is true (default.yaml: false); DataParallel is ✘ on Ascend"),
])

E("onet_setup", "setup.py", "explicit_replacement",
  "autonomousvision/occupancy_networks setup.py (Cython extensions + DMC CUDAExtension)", [
    C("from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension", "custom_cuda_extension",
      "replace", False, "from torch.utils.cpp_extension import BuildExtension, CppExtension",
      "importing the name is harmless; tidy-up once the CUDAExtension is gone"),
    C("dmc_cuda_module = CUDAExtension(", "custom_cuda_extension", "removal", True, None,
      "constructing a CUDAExtension needs CUDA_HOME/nvcc and the .cu kernels have no Ascend build; the whole "
      "statement (through its closing parenthesis) is removed - labelled on its first line. The DMC baseline "
      "would need an Ascend C rewrite, which this port does not attempt"),
    C("=dmc_cuda_module,", "custom_cuda_extension", "removal", True, None,
      "drop it from ext_modules"),
])

E("onet_default_cfg", "configs/default.yaml", "explicit_replacement",
  "autonomousvision/occupancy_networks configs/default.yaml - no device keys (multi_gpu: false)", [])

# --------------------------------------------------------------------------------------------
# Convolutional Occupancy Networks (autonomousvision/convolutional_occupancy_networks)
# --------------------------------------------------------------------------------------------
E("convonet_train", "train.py", "explicit_replacement",
  "autonomousvision/convolutional_occupancy_networks train.py (same is_cuda/device idiom, vis meshes)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("is_cuda = (torch.cuda.is_available() and not args.no_cuda)", "torch_cuda_api", "replace", True,
      "is_cuda = (torch.npu.is_available() and not args.no_cuda)",
      "otherwise training silently falls back to CPU"),
    C('device = torch.device("cuda" if is_cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if is_cuda else "cpu")', "device string"),
])

E("convonet_pointnet", "src/encoder/pointnet.py", "kernel_rewrite",
  "autonomousvision/convolutional_occupancy_networks src/encoder/pointnet.py (LocalPoolPointnet, torch_scatter pooling)", [
    C("from torch_scatter import scatter_mean, scatter_max", "unsupported_op_workaround", "replace", False,
      "from src.common import scatter_mean, scatter_max  # torch.Tensor.scatter_add_/scatter_reduce('amax') versions",
      "torch_scatter's scatter_max is a compiled op with CPU/CUDA kernels only; scatter_mean is pure Python "
      "over scatter_add_, which has a native NPU kernel. Whether scatter_max on NPU tensors errors or falls "
      "back to CPU is unconfirmed, so not required; the native aten scatter ops avoid the question"),
])

E("convonet_decoder", "src/conv_onet/models/decoder.py", "explicit_replacement",
  "autonomousvision/convolutional_occupancy_networks src/conv_onet/models/decoder.py (grid_sample on planes/volume) - no change", [])

E("convonet_common", "src/common.py", "explicit_replacement",
  "autonomousvision/convolutional_occupancy_networks src/common.py (coordinate normalisation, chamfer, positional encoding) - no change", [])

E("convonet_generation", "src/conv_onet/generation.py", "explicit_replacement",
  "autonomousvision/convolutional_occupancy_networks src/conv_onet/generation.py (Generator3D, MISE, refinement) - no change", [])

E("convonet_env", "environment.yaml", "explicit_replacement",
  "autonomousvision/convolutional_occupancy_networks environment.yaml (conda env with cudatoolkit and torch_scatter)", [
    C("- pytorch=1.4.0", "import_torch_npu", "replace", True,
      "- pytorch=2.1.0",
      "torch_npu only exists for torch >= 1.5/1.8 and current wheels pair with 2.1+; the 1.4 pin cannot host torch_npu"),
    C("- cudatoolkit=10.1", "custom_cuda_extension", "removal", False, None,
      "unused on an Ascend host; whether the conda package even resolves on aarch64 is unconfirmed"),
    C("- pip:", "import_torch_npu", "npu_only_addition", True,
      "    - torch-npu==2.1.0.post12",
      "add the torch_npu wheel matching torch 2.1.0 (CANN 8.1.RC1 row of the compatibility matrix)"),
    C("- torch_scatter==2.0.4", "unsupported_op_workaround", "removal", False, None,
      "no longer imported once pointnet.py uses the aten scatter ops; 2.0.4 also predates torch 2.1"),
])

E("convonet_cfg", "configs/pointcloud/shapenet_3plane.yaml", "explicit_replacement",
  "autonomousvision/convolutional_occupancy_networks configs/pointcloud/*.yaml - nothing device-specific", [])

# --------------------------------------------------------------------------------------------
# IF-Net (jchibane/if-net)
# --------------------------------------------------------------------------------------------
E("ifnet_local_model", "models/local_model.py", "explicit_replacement",
  "jchibane/if-net models/local_model.py (multi-scale 3D conv encoder + grid_sample point features)", [
    C("self.displacments = torch.Tensor(displacments).cuda()  # (7, 3)", "tensor_to_device", "replace", True,
      "self.displacments = torch.Tensor(displacments).npu()  # (7, 3) neighbourhood offsets",
      "built in __init__ (ShapeNet32Vox), not a buffer, so model.to(device) does not move it"),
    C("=self.displacments = torch.Tensor(displacments).cuda()", "tensor_to_device", "replace", True,
      "self.displacments = torch.Tensor(displacments).npu()", "same, ShapeNet128Vox"),
    C('self.displacments = torch.Tensor(displacments).to(torch.device("cuda"))', "device_type", "replace", True,
      'self.displacments = torch.Tensor(displacments).to(torch.device("npu"))', "same, ShapeNetPoints"),
    C('self.displacments = torch.Tensor(displacments).to("cuda")', "device_type", "replace", True,
      'self.displacments = torch.Tensor(displacments).to("npu")', "same, SVR"),
])

E("ifnet_training", "models/training.py", "explicit_replacement",
  "jchibane/if-net models/training.py (Trainer driven by a device argument) - no change", [])

E("ifnet_train", "train.py", "explicit_replacement",
  "jchibane/if-net train.py (model selection by flag, hard-coded torch.device('cuda'))", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('trainer = training.Trainer(net,torch.device("cuda"),train_dataset, val_dataset,exp_name, optimizer=args.optimizer)',
      "device_type", "replace", True,
      'trainer = training.Trainer(net,torch.device("npu"),train_dataset, val_dataset,exp_name, optimizer=args.optimizer)',
      "hard-coded device"),
])

E("ifnet_generation", "models/generation.py", "explicit_replacement",
  "jchibane/if-net models/generation.py (grid query + PyMCubes)", [
    C('device = torch.device("cuda"), resolution = 16', "device_type", "replace", True,
      'def __init__(self, model, threshold, exp_name, checkpoint = None, device = torch.device("npu"), resolution = 16, batch_points = 1000000):',
      "generate.py relies on this default"),
    C("checkpoint = torch.load(path)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(path, map_location='cpu')",
      "the released IF-Net checkpoints were written from CUDA; they cannot be deserialized on a host without CUDA "
      "unless mapped (load_state_dict then copies onto the NPU model)"),
])

E("ifnet_generate", "generate.py", "explicit_replacement",
  "jchibane/if-net generate.py (generation loop, CPU Pool for marching cubes)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
])

# --------------------------------------------------------------------------------------------
# NDF - Neural Unsigned Distance Fields (jchibane/ndf)
# --------------------------------------------------------------------------------------------
E("ndf_local_model", "models/local_model.py", "explicit_replacement",
  "jchibane/ndf models/local_model.py (NDF encoder/decoder split of the IF-Net architecture)", [
    C("self.displacments = torch.Tensor(displacments).cuda()", "tensor_to_device", "replace", True,
      "self.displacments = torch.Tensor(displacments).npu()",
      "plain attribute created in __init__; model.to(device) does not move it"),
])

E("ndf_training", "models/training.py", "explicit_replacement",
  "jchibane/ndf models/training.py (clamped L1 distance loss, hourly checkpoints) - no change", [])

E("ndf_generation", "models/generation.py", "explicit_replacement",
  "jchibane/ndf models/generation.py (dense point cloud by gradient-based projection)", [
    C('def __init__(self, model, exp_name, threshold = 0.1, checkpoint = None, device = torch.device("cuda")):',
      "device_type", "replace", True,
      'def __init__(self, model, exp_name, threshold = 0.1, checkpoint = None, device = torch.device("npu")):',
      "default device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "torch.cuda.empty_cache() is a no-op when CUDA was never initialised, so nothing fails; the NPU call is "
      "what actually releases cached blocks between objects (memory only)"),
    C("checkpoint = torch.load(path)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(path, map_location='cpu')",
      "the released NDF checkpoints were written from CUDA"),
])

E("ndf_train", "train.py", "explicit_replacement",
  "jchibane/ndf train.py (configargparse config, hard-coded torch.device('cuda'))", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('torch.device("cuda"),', "device_type", "replace", True, 'torch.device("npu"),', "hard-coded device"),
])

E("ndf_generate", "generate.py", "explicit_replacement",
  "jchibane/ndf generate.py (dense point cloud generation loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
      "module-level device"),
])

E("ndf_config_loader", "configs/config_loader.py", "explicit_replacement",
  "jchibane/ndf configs/config_loader.py (configargparse options; help strings mention GPU memory) - no change", [])

E("ndf_run", "scripts/run_shapenet_cars.sh", "explicit_replacement",
  "shell launcher in the style of the NDF README pipeline (preprocess, split, train, generate)", [
    C("source activate NDF", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (library paths, ASCEND_OPP_PATH) must be sourced before torch_npu is imported"),
    C("CUDA_VISIBLE_DEVICES=${GPU} python train.py --config ${CONFIG}", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU} python train.py --config ${CONFIG}",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; with GPU=1 by default the job would silently land "
      "on logical device 0"),
    C("CUDA_VISIBLE_DEVICES=${GPU} python generate.py --config ${CONFIG}", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU} python generate.py --config ${CONFIG}", "same as above"),
    C("nvidia-smi --query-gpu=memory.used,memory.total --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info",
      "not a torch call, but under set -e a missing nvidia-smi makes the whole pipeline exit 127 at the end"),
])
