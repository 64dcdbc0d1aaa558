import torch

# GANSpace PCA edits on top of e4e inversions.
# The PCA file (editings/ganspace_pca/ffhq_pca.pt) is a dict with
# 'comp', 'mean' and 'std' tensors computed by GANSpace on StyleGAN2-FFHQ.
# edit_directions entries: (pca_idx, start_layer, end_layer, strength)
#   e.g. eye openness:  (54, 7, 8, 20)
#        smile:         (46, 4, 5, -20)
#        trimmed beard: (58, 7, 9, 20)
#        white hair:    (57, 7, 10, -24)
#        lipstick:      (34, 10, 11, 20)


def edit(latents, pca, edit_directions):
    edit_latents = []
    for latent in latents:
        for pca_idx, start, end, strength in edit_directions:
            delta = get_delta(pca, latent, pca_idx, strength)
            delta_padded = torch.zeros(latent.shape).to('cuda')
            delta_padded[start:end] += delta.repeat(end - start, 1)
            edit_latents.append(latent + delta_padded)
    return torch.stack(edit_latents)


def get_delta(pca, latent, idx, strength):
    # pca: ganspace checkpoint. latent: (16, 512) w+
    w_centered = latent - pca['mean'].to('cuda')
    lat_comp = pca['comp'].to('cuda')
    lat_std = pca['std'].to('cuda')
    w_coord = torch.sum(w_centered[0].reshape(-1) * lat_comp[idx].reshape(-1)) / lat_std[idx]
    delta = (strength - w_coord) * lat_comp[idx] * lat_std[idx]
    return delta


def load_pca(path, device=None):
    """Loads a GANSpace PCA checkpoint; tensors stay on CPU unless a device is given."""
    pca = torch.load(path, map_location='cpu')
    if device is not None:
        pca = {k: v.to(device) for k, v in pca.items()}
    return pca
