# %% [markdown]
# # Training a Sparse Autoencoder
#
# This tutorial walks through training a small SAE on the MLP output of TinyStories-1L-21M, then
# loading a pretrained GPT-2 Small residual-stream SAE and looking at a few of its features.
#
# A free Colab T4 is enough for the TinyStories run (~15 min). For the GPT-2 section an A100 is
# recommended.

# %%
try:
    import google.colab  # type: ignore

    COLAB = True
    # %pip install sae-lens transformer-lens circuitsvis
except ImportError:
    COLAB = False

# %%
import os

import plotly.express as px
import torch
from datasets import load_dataset
from tqdm import tqdm
from transformer_lens import HookedTransformer, utils

from sae_lens import SAE, LanguageModelSAERunnerConfig, SAETrainingRunner

# %%
if torch.cuda.is_available():
    device = "cuda"
elif torch.backends.mps.is_available():
    device = "mps"
else:
    device = "cpu"

print("Using device:", device)
os.environ["TOKENIZERS_PARALLELISM"] = "false"

# %% [markdown]
# ## Sanity-check the model

# %%
model = HookedTransformer.from_pretrained("tiny-stories-1L-21M", device=device)

example_prompt = "Once upon a time, there was a little girl named Lily. She lived in a big, happy"
example_answer = " house"
utils.test_prompt(example_prompt, example_answer, model, prepend_bos=True)

# free the model, the runner loads its own copy
del model

# %% [markdown]
# ## Training config
#
# `training_tokens` is deliberately small so the notebook finishes quickly; bump it to ~100M for
# features worth interpreting.

# %%
total_training_steps = 30_000
batch_size = 4096
total_training_tokens = total_training_steps * batch_size

lr_warm_up_steps = 0
lr_decay_steps = total_training_steps // 5  # 20% of training
l1_warm_up_steps = total_training_steps // 20  # 5% of training

cfg = LanguageModelSAERunnerConfig(
    # Data Generating Function (Model + Training Distibuion)
    model_name="tiny-stories-1L-21M",
    hook_name="blocks.0.hook_mlp_out",
    hook_layer=0,
    d_in=1024,
    dataset_path="apollo-research/roneneldan-TinyStories-tokenizer-gpt2",
    is_dataset_tokenized=True,
    streaming=True,
    # SAE Parameters
    mse_loss_normalization=None,
    expansion_factor=16,
    b_dec_init_method="zeros",
    apply_b_dec_to_input=False,
    normalize_sae_decoder=False,
    scale_sparsity_penalty_by_decoder_norm=True,
    decoder_heuristic_init=True,
    init_encoder_as_decoder_transpose=True,
    normalize_activations="expected_average_only_in",
    # Training Parameters
    lr=5e-5,
    adam_beta1=0.9,
    adam_beta2=0.999,
    lr_scheduler_name="constant",
    lr_warm_up_steps=lr_warm_up_steps,
    lr_decay_steps=lr_decay_steps,
    l1_coefficient=5,
    l1_warm_up_steps=l1_warm_up_steps,
    lp_norm=1.0,
    train_batch_size_tokens=batch_size,
    context_size=256,
    # Activation Store Parameters
    n_batches_in_buffer=64,
    training_tokens=total_training_tokens,
    store_batch_size_prompts=16,
    # Resampling protocol
    use_ghost_grads=False,
    feature_sampling_window=1000,
    dead_feature_window=1000,
    dead_feature_threshold=1e-4,
    # WANDB
    log_to_wandb=True,
    wandb_project="sae_lens_tutorial",
    wandb_log_frequency=30,
    eval_every_n_wandb_logs=20,
    # Misc
    device=device,
    seed=42,
    n_checkpoints=0,
    checkpoint_path="checkpoints",
    dtype="float32",
)

# %%
# look at the next cell to see some instruction for what to do while this is running.
sparse_autoencoder = SAETrainingRunner(cfg).run()

# %% [markdown]
# ## Loading a pretrained GPT-2 Small SAE
#
# The remaining cells only run inference, so we turn gradients off globally. We keep the
# activation store on the GPU as well: for GPT-2 Small the buffer fits comfortably in 40GB.

# %%
torch.set_grad_enabled(False)

big_model = HookedTransformer.from_pretrained("gpt2-small", device="cuda")

sae, cfg_dict, sparsity = SAE.from_pretrained(
    release="gpt2-small-res-jb",  # see other options in sae_lens/pretrained_saes.yaml
    sae_id="blocks.7.hook_resid_pre",  # won't always be a hook point
    device="cuda",
)

dataset = load_dataset(
    path="NeelNanda/pile-10k",
    split="train",
    streaming=False,
)

token_dataset = utils.tokenize_and_concatenate(
    dataset=dataset,  # type: ignore
    tokenizer=big_model.tokenizer,  # type: ignore
    streaming=True,
    max_length=sae.cfg.context_size,
    add_bos_token=sae.cfg.prepend_bos,
)

# %%
sae.eval()  # prevents error if we're expecting a dead neuron mask for who grads

batch_tokens = token_dataset[:32]["tokens"]
_, cache = big_model.run_with_cache(batch_tokens, prepend_bos=True)

# Use the SAE
feature_acts = sae.encode(cache[sae.cfg.hook_name])
sae_out = sae.decode(feature_acts)

# save some room
del cache

# ignore the bos token, get the number of features that activated in each token, averaged accross batch and position
l0 = (feature_acts[:, 1:] > 0).float().sum(-1).detach()
print("average l0", l0.mean().item())
px.histogram(l0.flatten().cpu().numpy()).show()

# %%
# Feature density histogram over ~100 batches
feature_counts = torch.zeros(sae.cfg.d_sae, device=sae.device)
n_tokens = 0
for i in tqdm(range(0, 3200, 32)):
    tokens = token_dataset[i : i + 32]["tokens"].to(sae.device)
    _, cache = big_model.run_with_cache(
        tokens, names_filter=[sae.cfg.hook_name], stop_at_layer=sae.cfg.hook_layer + 1
    )
    acts = sae.encode(cache[sae.cfg.hook_name])
    feature_counts += (acts > 0).float().sum(dim=(0, 1))
    n_tokens += acts.shape[0] * acts.shape[1]
    del cache

log_density = torch.log10(feature_counts / n_tokens + 1e-10)
px.histogram(log_density.cpu().numpy(), nbins=100, title="log10 feature density").show()

# %%
# Top activating tokens for a single feature
feature_idx = 2318
top_vals, top_pos = torch.topk(feature_acts[..., feature_idx].flatten(), k=20)
str_tokens = [big_model.to_str_tokens(t) for t in batch_tokens]
seq_len = batch_tokens.shape[1]
for v, p in zip(top_vals.tolist(), top_pos.tolist()):
    b, s = divmod(p, seq_len)
    context = "".join(str_tokens[b][max(0, s - 8) : s + 1])
    print(f"{v:6.2f} | {context!r}")
